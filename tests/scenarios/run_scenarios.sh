#!/usr/bin/env bash
# run_scenarios.sh RTITSIM DIR [decode] - every scenario in DIR through `rtitsim run`:
# its expect block must match (exit 0), and the trace must be the same
# bytes whether records reach the encoder per instruction, per block or in
# batches, and on a second run (determinism).  With `decode`, the trace must
# also decode back to the flow through the run's sideband (`rtitsim decode
# --check`, no decode error).  RTITSIM_TEST_THIN=N (the sanitizer build):
# the reruns for every Nth scenario only.
set -u
thin=${RTITSIM_TEST_THIN:-1} i=0
R=$1
D=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
for f in "$D"/*.scn; do
	n=$(basename "$f" .scn)
	if out=$("$R" run "$f" --out "$T/$n" -q 2>&1); then
		pass=$((pass + 1))
	else
		fail=$((fail + 1)); echo "FAIL: $n: $out"; continue
	fi
	if [ "${3:-}" = decode ]; then
		if "$R" decode "$T/$n.trace" --check "$T/$n.flow" -q >"$T/dec.out" 2>&1; then
			pass=$((pass + 1))
		else
			fail=$((fail + 1)); echo "FAIL: $n: decode --check: $(tail -3 "$T/dec.out")"
		fi
	fi
	i=$((i + 1))
	[ $(((i - 1) % thin)) -eq 0 ] || continue
	ref=$(cat "$T/$n.trace" | sha256sum)
	for d in insn block batch; do
		"$R" run "$f" --out "$T/$n.$d" -q --deliver "$d" >/dev/null 2>&1
		if [ "$(sha256sum < "$T/$n.$d.trace")" = "$ref" ] &&
		   cmp -s "$T/$n.flow" "$T/$n.$d.flow"; then
			pass=$((pass + 1))
		else
			fail=$((fail + 1)); echo "FAIL: $n: --deliver $d gives other bytes"
		fi
	done
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
