#!/usr/bin/env bash
# run_ptflow.sh RTITSIM PTFLOW_CHECK DIR - every Intel PT scenario (pt_*.scn)
# in DIR through `rtitsim run`, then its trace through libipt's
# instruction-flow decoder (ptflow_check), which must give back the
# simulator's flow instruction by instruction.
set -u
R=$(realpath "$1")
C=$(realpath "$2")
D=$(realpath "$3")
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
for f in "$D"/pt_*.scn; do
	n=$(basename "$f" .scn)
	# packets newer than libipt 2.0.5 (Event Trace): the own flow decoder
	# checks those (tests/flow/run_flow.sh)
	if why=$(grep -m1 '^# not-libipt:' "$f"); then
		echo "skip: $n:${why#\# not-libipt:}"; continue
	fi
	if ! out=$("$R" run "$f" --out "$T/$n" -q 2>&1); then
		fail=$((fail + 1)); echo "FAIL: $n: rtitsim run: $out"; continue
	fi
	if out=$("$C" "$T/$n" "$f" 2>&1); then
		pass=$((pass + 1)); echo "$out"
	else
		fail=$((fail + 1)); echo "FAIL: $n: $out"
	fi
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
