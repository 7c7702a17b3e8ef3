# perf_lib.sh - sourced by run_perf.sh and run_perf_mutations.sh.
#
# perf_setup RTITSIM PERF_CHECK PERF DIR: sets R, C, P, D from the
# arguments and T to a temporary directory removed on exit;
# exits 77 (skipped) when PERF is "-" or does not run.
perf_setup() {
	R=$(realpath "$1")
	C=$(realpath "$2")
	P=$3
	D=$(realpath "$4")
	if [ "$P" = "-" ] || ! "$P" version >/dev/null 2>&1; then
		echo "skip: perf is not installed (Debian package linux-perf)"; exit 77
	fi
	T=$(mktemp -d)
	trap 'rm -rf "$T"' EXIT
}

# perf_decode SCENARIO OUT [MUTATE_OFFSET MUTATE_BYTE]: `rtitsim run`
# SCENARIO into OUT/run.*, (optionally one trace byte replaced), the
# perf.data and image.elf made of it in OUT, and perf's decoding of it in
# OUT/script.txt: every instruction (i1i), every branch (b), the errors
# (e), the PEBS records (o); in OUT/events.txt the Event Trace items (I:
# CFE/EVD and IF changes; a second run, since perf prints no addr field
# for them).  Prints what failed and returns 1 on a failure.
export PERF_CONFIG=/dev/null	# no perfconfig changes the decoding
perf_decode() {
	local f=$1 o=$2 out
	mkdir -p "$o"
	if ! out=$("$R" run "$f" --out "$o/run" -q 2>&1); then
		echo "rtitsim run: $out"; return 1
	fi
	if [ $# -ge 4 ]; then
		printf "$(printf '\\x%02x' "$4")" |
			dd of="$o/run.trace" bs=1 seek=$(($3)) conv=notrunc status=none
	fi
	if ! out=$("$R" perf-data "$o/run" "$o" --image "$f" 2>&1); then
		echo "rtitsim perf-data: $out"; return 1
	fi
	if ! (cd "$o" && "$P" script -i perf.data --itrace=bi1ieo -F event,ip,addr,flags \
		>script.txt 2>script.err &&
		"$P" script -i perf.data --itrace=Ie -F event,ip,flags,synth \
		>events.txt 2>>script.err); then
		echo "perf script: $(head -3 "$o/script.err")"; return 1
	fi
}
