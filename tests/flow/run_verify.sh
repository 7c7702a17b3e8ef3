#!/usr/bin/env bash
# run_verify.sh RTITSIM DIR - every scenario in DIR through `rtitsim run
# --verify`: the flow decoder must give back the simulator's flow exactly
# (exit 0), and the trace must have decoded without an error.
set -u
R=$1 D=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
for f in "$D"/*.scn; do
	n=$(basename "$f" .scn)
	if out=$("$R" run "$f" --out "$T/$n" --verify 2>&1) &&
	   echo "$out" | grep -q 'verified: decoding the trace gives the flow back'; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1)); echo "FAIL: $n: $(echo "$out" | tail -2 | tr '\n' ' ')"
	fi
done
echo "$pass passed, $fail failed"
[ "$pass" -gt 0 ] && [ "$fail" -eq 0 ]
