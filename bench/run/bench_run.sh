#!/usr/bin/env bash
# bench_run.sh RTITSIM WORKLOAD.C [ROUNDS] [dir|null] - `rtitsim run --bare`
# end to end on the compiled C workload built with ROUNDS rounds (default
# 7, ~5 * 10^6 instructions; 143 is ~10^8): --flow none (simulator +
# encoder; the flow digest is still computed), bin, txt and both.  Each
# figure is the best of 3 wall-clock runs (BENCH_RUN_REPEAT=N for N); CPU
# is user + system seconds of that run (both threads with the writer
# thread, D138).  dir (default)
# writes the files into a temporary directory, on tmpfs (/dev/shm) when
# there is one, deleted after each run; null sends the ground-truth files
# to /dev/null (the cost of making them, not of a file system: for runs
# whose files would not fit).  The ratios are of runs made here, one after
# the other: bin/none and txt/none (goal: >= 0.8 and >= 0.3), by wall
# clock and by CPU time.
set -u
R=$(realpath "$1"); SRC=$(realpath "$2"); ROUNDS=${3:-7}; SINK=${4:-dir}
base=${TMPDIR:-/tmp}
[ -d /dev/shm ] && [ -w /dev/shm ] && base=/dev/shm
T=$(mktemp -d "$base/bench-run.XXXXXX")
trap 'rm -rf "$T"' EXIT
gcc -O2 -static -nostdlib -ffreestanding -fno-pie -no-pie -fno-stack-protector -masm=intel \
	-DROUNDS="$ROUNDS" -o "$T/workload" "$SRC" || exit 1

# one run: prints "WALL CPU INSTRUCTIONS BYTES"
one() {
	local flow=$1 ext
	rm -f "$T"/o.*
	if [ "$SINK" = null ]; then
		for ext in flow flow.txt; do ln -s /dev/null "$T/o.$ext.part"; done
	fi
	local t
	/usr/bin/time -o "$T/time" -f "%e %U %S" "$R" run --bare -q --flow "$flow" --out "$T/o" \
		"$T/workload" >/dev/null 2>&1 || { echo "rtitsim run --flow $flow failed" >&2; exit 1; }
	t=$(tail -1 "$T/time")
	local ins recs bytes=0 f
	ins=$(sed -n 's/^instructions //p' "$T/o.sideband")
	recs=$(sed -n 's/^flow_records //p' "$T/o.sideband")
	for f in "$T"/o.trace "$T"/o.flow "$T"/o.flow.txt; do
		[ -f "$f" ] && [ ! -L "$f" ] && bytes=$((bytes + $(stat -c %s "$f")))
	done
	# /dev/null: the binary file's size is known (16 + 64 per record + 24)
	[ -L "$T/o.flow" ] && bytes=$((bytes + 40 + 64 * recs))
	rm -f "$T"/o.flow "$T"/o.flow.txt
	awk -v t="$t" -v i="$ins" -v b="$bytes" 'BEGIN { split(t, a); printf "%s %.2f %s %s\n", a[1], a[2] + a[3], i, b }'
}
REPEAT=${BENCH_RUN_REPEAT:-3}
best() { for _ in $(seq "$REPEAT"); do one "$1"; done | sort -n | head -1; }

echo "machine: $(nproc) cores, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1); load:$(uptime | sed 's/.*load average://')"
echo "workload: $ROUNDS rounds; files: $([ "$SINK" = null ] && echo '/dev/null (the text not counted)' || echo "$T")"
declare -A W C
for f in none bin txt both; do
	line=$(best $f)
	read -r wall cpu ins bytes <<<"$line"
	W[$f]=$wall
	C[$f]=$cpu
	awk -v f="$f" -v w="$wall" -v c="$cpu" -v i="$ins" -v b="$bytes" 'BEGIN {
		printf "--flow %-4s %11d insns  %7.2f M insn/s  %6.2f s wall  %6.2f s cpu  %8.1f MB written (%.1f B/insn)\n",
			f, i, i / w / 1e6, w, c, b / 1e6, b / i }'
done
awk -v n="${W[none]}" -v b="${W[bin]}" -v t="${W[txt]}" -v h="${W[both]}" \
    -v cn="${C[none]}" -v cb="${C[bin]}" -v ct="${C[txt]}" -v ch="${C[both]}" 'BEGIN {
	printf "ratio bin/none  %.2fx (target >= 0.8)%s\n", n / b, (n / b >= 0.8) ? "" : "  NOT MET"
	printf "ratio txt/none  %.2fx (target >= 0.3)%s\n", n / t, (n / t >= 0.3) ? "" : "  NOT MET"
	printf "ratio both/none %.2fx\n", n / h
	# on a loaded machine the wall clock is mostly waiting: CPU time too
	# (both threads; on an idle machine the writer thread overlaps)
	if (cb > 0 && ct > 0 && ch > 0)
		printf "cpu ratios (none cpu / cpu): bin %.2fx  txt %.2fx  both %.2fx\n", cn / cb, cn / ct, cn / ch
}'
