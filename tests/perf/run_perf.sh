#!/usr/bin/env bash
# run_perf.sh RTITSIM PERFDATA_WRITE PERF_CHECK PERF DIR - every Intel PT
# scenario (pt_*.scn) in DIR through `rtitsim run`, the run turned into a
# perf.data (perfdata_write), decoded by Linux perf's Intel PT decoder
# (`perf script`), whose instructions must be the simulator's flow
# (perf_check).  Without PERF (perf not installed) every vector is
# skipped (exit 77).
set -u
R=$(realpath "$1")
W=$(realpath "$2")
C=$(realpath "$3")
P=$4
D=$(realpath "$5")
if [ "$P" = "-" ] || ! "$P" version >/dev/null 2>&1; then
	echo "skip: perf is not installed (Debian package linux-perf)"; exit 77
fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# no user or system perfconfig (e.g. intel-pt.mispred-all) changes the
# decoding
export PERF_CONFIG=/dev/null
pass=0 fail=0
for f in "$D"/pt_*.scn; do
	n=$(basename "$f" .scn)
	# what perf 6.1 cannot decode (the reason is on the line)
	if why=$(grep -m1 '^# not-perf:' "$f"); then
		echo "skip: $n:${why#\# not-perf:}"; continue
	fi
	mkdir "$T/$n"
	if ! out=$("$R" run "$f" --out "$T/$n/run" -q 2>&1); then
		fail=$((fail + 1)); echo "FAIL: $n: rtitsim run: $out"; continue
	fi
	if ! out=$("$W" "$T/$n/run" "$f" "$T/$n" 2>&1); then
		fail=$((fail + 1)); echo "FAIL: $n: perfdata_write: $out"; continue
	fi
	# every instruction (i1i), every branch (b), the errors (e)
	if ! (cd "$T/$n" && "$P" script -i perf.data --itrace=bi1ie -F event,ip,addr,flags \
		>script.txt 2>script.err); then
		fail=$((fail + 1)); echo "FAIL: $n: perf script: $(head -3 "$T/$n/script.err")"; continue
	fi
	if out=$("$C" "$T/$n/run" "$T/$n/script.txt" 2>&1); then
		pass=$((pass + 1)); echo "${out//$T\//}"
	else
		fail=$((fail + 1)); echo "FAIL: $n: ${out//$T\//}"
	fi
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
