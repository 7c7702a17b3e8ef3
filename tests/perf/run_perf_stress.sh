#!/usr/bin/env bash
# run_perf_stress.sh RTITSIM PERF_CHECK PERF GEN FIRST LAST -
# the property test's Intel PT scenarios through Linux perf.  For seeds
# FIRST..LAST, `gen_stress.py SEED pt perf` (the seed's program and trace
# configuration without what perf 6.1 cannot follow: VM exits, opt-out
# enclaves, Event Trace with an enclave; docs/decisions.md D62) runs
# through `rtitsim run`, rtitsim's own decoder must give back the flow,
# and perf's instructions, Event Trace items and PEBS records must be the
# flow's (perf_check).  Over all seeds perf must match at least 80% as
# many instructions as rtitsim's decoder recovers, so that a perf that
# stops early or loses stretches fails.  Skipped (77) without perf.
set -u
. "$(dirname "$0")/../common/python.sh"
G=$(realpath "$4")
FIRST=$5
LAST=$6
. "$(dirname "$0")/perf_lib.sh"
perf_setup "$1" "$2" "$3" "$(dirname "$G")"
pass=0 fail=0 total=0 own_total=0
for ((s = FIRST; s <= LAST; s++)); do
	o="$T/$s"
	mkdir -p "$o"
	"$PY" "$G" $s pt perf > "$o/s.scn"
	if ! out=$(perf_decode "$o/s.scn" "$o"); then
		fail=$((fail + 1)); echo "FAIL: seed $s: $out"; continue
	fi
	if ! "$R" decode "$o/run.trace" --check "$o/run.flow" --stats -q 2>"$o/dec.err"; then
		fail=$((fail + 1)); echo "FAIL: seed $s: rtitsim decode: $(head -5 "$o/dec.err")"; continue
	fi
	own=$(grep -oE 'decoded [0-9]+ instructions' "$o/dec.err" | grep -oE '[0-9]+')
	own=${own:-0}
	empty=()
	[ "$own" -eq 0 ] && empty=(--may-be-empty)
	if out=$("$C" "$o/run" "$o/script.txt" --events "$o/events.txt" "${empty[@]}" 2>&1); then
		pass=$((pass + 1))
		n=$(echo "$out" | grep -oE 'decoded [0-9]+ of' | grep -oE '[0-9]+')
		total=$((total + ${n:-0}))
		own_total=$((own_total + own))
		rm -rf "$o"
	else
		fail=$((fail + 1)); echo "FAIL: seed $s (rtitsim's decoder: $own instructions): ${out//$T\//}"
		echo "  reproduce: python3 $G $s pt perf > s.scn (then tests/perf/perf_lib.sh's perf_decode and perf_check)"
	fi
done
echo "perf matched $total instructions, rtitsim's decoder $own_total"
if [ $((total * 100)) -lt $((own_total * 80)) ] || [ "$total" -eq 0 ]; then
	fail=$((fail + 1)); echo "FAIL: perf matched under 80% of what rtitsim's decoder recovered"
fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
