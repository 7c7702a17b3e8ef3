#!/usr/bin/env bash
# test_programs.sh RTITSIM PTFLOW_CHECK PERF_CHECK PERF SRCDIR - real Linux
# programs under `rtitsim run PROGRAM ARGS` (docs/linux.md), in both
# dialects: a C program built here with plain `gcc -O2` (dynamic PIE) and
# `gcc -static`, busybox applets (Debian's busybox-static) and dynamic
# binaries of the base system.  Each must print what it prints natively
# (stdout and stderr) and exit with the same status; `--verify` must give the flow back; for
# Intel PT, libipt (ptflow_check) and Linux perf (perf_check on `perf
# script`) must decode the trace to the same instructions, and perf must
# name the program's own functions (MMAP2 records of the real files).
set -u
R=$(realpath "$1"); L=$(realpath "$2"); C=$(realpath "$3"); P=$4; S=$(realpath "$5")
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export PERF_CONFIG=/dev/null
have_perf=1
if [ "$P" = "-" ] || ! "$P" version >/dev/null 2>&1; then have_perf=0; fi

# fixed inputs, dated long before the simulated clock (2024-01-01), as
# native: `ls -l` prints a year for both
mkdir "$T/in"
printf 'pear\napple\nfig\nbanana\ncherry\nkiwi\ndate\n' > "$T/in/words.txt"
for i in $(seq 1 300); do echo "$i line of text $((i * 7919 % 1000))"; done > "$T/in/lines.txt"
touch -d '2020-03-04 05:06:07 UTC' "$T/in/words.txt" "$T/in/lines.txt" "$T/in"
gcc -O2 -o "$T/prog_dyn" "$S/prog.c" || exit 1
gcc -O2 -static -o "$T/prog_static" "$S/prog.c" || exit 1
BB=$(command -v busybox || echo /bin/busybox)

pass=0 fail=0
check() {	# NAME DIALECT PROGRAM ARGS...
	local name=$1 d=$2; shift 2
	local o="$T/$name-$d" nrc src out
	(cd "$T/in" && "$@") > "$o.native" 2> "$o.native-err"; nrc=$?
	(cd "$T/in" && "$R" run -q --dialect "$d" --verify --out "$o" "$@") > "$o.out" 2> "$o.err"; src=$?
	local why=""
	if [ $src -ne 0 ]; then why="rtitsim exited $src: $(grep -v '^rtitsim: trace' "$o.err" | head -3)"
	elif ! cmp -s "$o.native" "$o.out"; then why="stdout differs from the native run: $(diff "$o.native" "$o.out" | head -4)"
	elif ! diff -q "$o.native-err" <(grep -v '^rtitsim: ' "$o.err") >/dev/null; then why="stderr differs from the native run: $(diff "$o.native-err" <(grep -v '^rtitsim: ' "$o.err") | head -4)"
	elif ! grep -qx "exit_status $nrc" "$o.sideband"; then why="exit status: native $nrc, sideband '$(grep exit_status "$o.sideband")'"
	elif [ "$d" = pt ] && ! out=$("$L" "$o" "$o.sideband" 2>&1); then why="libipt: $out"
	elif [ "$d" = pt ] && [ $have_perf = 1 ] && ! out=$(mkdir -p "$o.perf" &&
		"$R" perf-data "$o" "$o.perf" 2>&1 && (cd "$o.perf" &&
		"$P" script -i perf.data --itrace=bi1ieo -F event,ip,addr,flags > script.txt 2> script.err) &&
		"$C" "$o" "$o.perf/script.txt" 2>&1); then why="perf: $out"
	elif [ "$d" = pt ] && [ $have_perf = 1 ] && [ "${name#prog-}" != "$name" ] &&
		! (cd "$o.perf" && "$P" script -i perf.data --itrace=i0ns -F ip,sym 2>/dev/null |
		   awk '{print $2}' | sort -u | grep -qx cmp_int); then
		why="perf script -F sym does not name the program's function cmp_int (qsort's callback)"
	fi
	if [ -n "$why" ]; then
		fail=$((fail + 1)); echo "FAIL: $name ($d): $why"
	else
		pass=$((pass + 1))
		echo "ok: $name ($d): $(grep -m1 '^instructions' "$o.sideband"), $(grep -m1 '^syscalls' "$o.sideband"), exit $nrc${out:+; ${out##*: }}"
	fi
	rm -rf "$o.perf"
}
for d in rtit pt; do
	check prog-dynamic $d "$T/prog_dyn" 300 x
	check prog-static $d "$T/prog_static" 1000 "two words" y
	check busybox-sort $d "$BB" sort "$T/in/words.txt"
	check busybox-sha256sum $d "$BB" sha256sum "$T/in/lines.txt"
	check busybox-gzip $d "$BB" gzip -c "$T/in/lines.txt"
	check busybox-awk $d "$BB" awk '{ s += $1 } END { print s, NR }' "$T/in/lines.txt"
	check ls-l $d /bin/ls -l "$T/in"
	check sort $d /usr/bin/sort "$T/in/words.txt"
	check sha256sum $d /usr/bin/sha256sum "$T/in/lines.txt"
	check gzip $d /bin/gzip -c -n "$T/in/words.txt"
done

# Deterministic: the same run twice gives the same bytes.
for k in 1 2; do
	(cd "$T/in" && "$R" run -q --dialect pt --out "$T/det$k" /bin/ls -l "$T/in") >/dev/null 2>&1
done
if cmp -s "$T/det1.trace" "$T/det2.trace" && cmp -s "$T/det1.flow" "$T/det2.flow"; then
	pass=$((pass + 1)); echo "ok: two runs of ls -l give identical trace and flow"
else
	fail=$((fail + 1)); echo "FAIL: two runs of ls -l differ"
fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
