#!/usr/bin/env bash
# run_perf.sh RTITSIM PERF_CHECK PERF DIR - every Intel PT scenario
# (pt_*.scn) in DIR through `rtitsim run`, the run turned into a
# perf.data (`rtitsim perf-data`), decoded by Linux perf's Intel PT decoder
# (`perf script`), whose instructions must be the simulator's flow
# (perf_check).  Without PERF (perf not installed) every vector is
# skipped (exit 77).
set -u
. "$(dirname "$0")/perf_lib.sh"
perf_setup "$@"
pass=0 fail=0
for f in "$D"/pt_*.scn; do
	n=$(basename "$f" .scn)
	# what perf 6.1 cannot decode (the reason is on the line)
	if why=$(grep -m1 '^# not-perf:' "$f"); then
		echo "skip: $n:${why#\# not-perf:}"; continue
	fi
	if ! out=$(perf_decode "$f" "$T/$n"); then
		fail=$((fail + 1)); echo "FAIL: $n: $out"
	elif out=$("$C" "$T/$n/run" "$T/$n/script.txt" --events "$T/$n/events.txt" 2>&1); then
		pass=$((pass + 1)); echo "${out//$T\//}"
	else
		fail=$((fail + 1)); echo "FAIL: $n: ${out//$T\//}"
	fi
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
