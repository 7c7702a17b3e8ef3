#!/usr/bin/env bash
# bench_programs.sh RTITSIM SRCDIR - real programs as processes
# (docs/linux.md): for each, instructions per second with tracing off
# (TraceEn 0: simulator, system-call layer and an idle encoder), traced
# (Intel PT and RTIT), both with no ground-truth files (--flow none, the
# flow digest is still computed), and the system-call layer's share of
# the traced run.  Times are wall-clock medians of 3 runs on this
# machine; the ratios are of runs made here, one after the other.
set -u
R=$(realpath "$1"); S=$(realpath "$2")
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
gcc -O2 -o "$T/prog" "$S/prog.c" || exit 1
head -c 1000000 /usr/bin/gcc-12 > "$T/blob" 2>/dev/null || head -c 1000000 "$R" > "$T/blob"
BB=$(command -v busybox || echo /bin/busybox)

# one run: prints "SECONDS INSTRUCTIONS SYSCALL_MS"
one() {
	local s e out
	s=$(date +%s.%N)
	out=$("$R" run --flow none --out "$T/run" "$@" 2>&1 >/dev/null)
	e=$(date +%s.%N)
	local ins ms
	ins=$(sed -n 's/^instructions //p' "$T/run.sideband")
	ms=$(sed -n 's/.* \([0-9.]*\) ms in the system-call layer.*/\1/p' <<<"$out")
	echo "$(awk -v a="$s" -v b="$e" 'BEGIN { printf "%.6f", b - a }') $ins ${ms:-0}"
}
median3() {	# ARGS... -> the median run's line (by time)
	{ one "$@"; one "$@"; one "$@"; } | sort -n | sed -n 2p
}
row() {	# NAME PROGRAM ARGS...
	local name=$1; shift
	local off pt rtit
	off=$(median3 --dialect pt --msr IA32_RTIT_CTL=0 "$@")
	pt=$(median3 --dialect pt "$@")
	rtit=$(median3 --dialect rtit "$@")
	awk -v n="$name" -v off="$off" -v pt="$pt" -v rt="$rtit" 'BEGIN {
		split(off, o); split(pt, p); split(rt, r)
		printf "%-22s %11d insns  untraced %6.2f M/s  pt %6.2f M/s (%.2fx)  rtit %6.2f M/s (%.2fx)  syscall layer %4.1f%% of the pt run\n",
			n, p[2], o[2] / o[1] / 1e6, p[2] / p[1] / 1e6, o[1] / p[1], r[2] / r[1] / 1e6, o[1] / r[1],
			100 * p[3] / 1000 / p[1]
	}'
}
echo "machine: $(nproc) cores, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)"
echo "ratios: untraced time / traced time (1.00x: tracing costs nothing)"
row "prog 30000 (-O2 PIE)" "$T/prog" 30000
row "busybox gzip 1 MB" "$BB" gzip -c "$T/blob"
row "busybox sha256sum 1 MB" "$BB" sha256sum "$T/blob"
row "sort (coreutils)" /usr/bin/sort "$S/prog.c"
row "ls -l /usr/bin" /bin/ls -l /usr/bin
