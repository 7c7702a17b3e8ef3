#!/usr/bin/env bash
# run_stress.sh RTITSIM GEN FIRST LAST [rtit|pt] - random scenarios
# (gen_stress.py, seeds FIRST..LAST, in the dialect given, default RTIT) through `rtitsim run` and `rtitsim decode --check`:
# the decoded flow must match the simulator's outside reported gaps, with
# no decode error.  Ends with the packet forms the streams reached
# (stress_coverage.py), and fails when one it requires was not.
set -u
. "$(dirname "$0")/../common/python.sh"
R=$(realpath "$1")
G=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0 total=0
for ((s = $3; s <= $4; s++)); do
	"$PY" "$G" $s "${5:-rtit}" > "$T/s.scn"
	if ! "$R" run "$T/s.scn" --out "$T/s" -q >/dev/null 2>"$T/run.err"; then
		fail=$((fail + 1)); echo "FAIL: seed $s: rtitsim run: $(head -3 "$T/run.err")"; continue
	fi
	if "$R" decode "$T/s.trace" --check "$T/s.flow" --stats -q 2>"$T/dec.err"; then
		pass=$((pass + 1))
		# the forms reached, for the coverage lines at the end
		ca=$(grep -q '^cycle_accurate 1' "$T/s.sideband" && echo --cycle-accurate)
		"$R" dump --dialect "${5:-rtit}" $ca "$T/s.trace" >>"$T/cov.txt" 2>/dev/null
		n=$(grep -oE 'matches .*: [0-9]+ records' "$T/dec.err" | grep -oE '[0-9]+ records' | cut -d' ' -f1)
		total=$((total + ${n:-0}))
	else
		fail=$((fail + 1)); echo "FAIL: seed $s: $(head -20 "$T/dec.err")"
		# a minimal reproduction of the first two failures
		if [ $fail -le 2 ]; then
			echo "seed $s, reproduce: python3 $G $s ${5:-rtit} > s.scn; rtitsim run s.scn --out s;" \
			     "rtitsim decode s.trace --check s.flow"
			"$PY" "$(dirname "$0")/shrink_stress.py" "$R" "$T/s.scn" 300
		fi
	fi
done
# the seeds trace thousands of instructions between them: an empty decode
# would match trivially
if [ $total -lt $((($4 - $3 + 1) * 100)) ]; then
	fail=$((fail + 1)); echo "FAIL: only $total records decoded over all seeds"
fi
echo "$total records decoded and matched"
# the forms every sized run must reach (stress_coverage.py REQUIRED)
if ! "$PY" "$(dirname "$0")/stress_coverage.py" "${5:-rtit}" $(($4 - $3 + 1)) <"$T/cov.txt"; then
	fail=$((fail + 1))
fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
