#!/usr/bin/env bash
# test_bundle.sh RTITSIM PTXED_LINES SRCDIR - process bundles (issue 19,
# D132-D135): `rtitsim run --bundle DIR PROGRAM ARGS` copies every file the
# process mapped into DIR/STEM.files/ and names them relative to DIR, so a
# bundle decodes anywhere with the originals gone.  In both dialects, for
# a dynamic `gcc -O2` program, a busybox applet and a program that maps
# its own file 100 times (more than the 64 mmap lines the sideband once
# kept, D133):
#  * the guest's stdout is the native one;
#  * the bundles are moved, the programs built here deleted, and from
#    another working directory `decode BUNDLE --check`, `check BUNDLE`
#    on decode's JSON, and (Intel PT) the manifest's ptxed line run with
#    a libipt decoder (ptxed_lines) in the bundle's directory all agree;
#  * no path in the sideband or the manifest points outside the bundle,
#    and tests/formats/check_formats.py (written from docs/formats.md
#    alone) reads each bundle: mmap lines, mapped files, build-ids;
#  * perf (when installed) reads `rtitsim perf-data` of the moved bundle
#    and names the program's function from the copy;
#  * the decoder reads the bundle's copies: libc's copy replaced by
#    another ELF fails the build-id check, naming the copy;
#  * SIGINT during a longer run leaves the complete bundle that was there
#    before (or nothing in an empty directory), never a mix (D135).
set -u
R=$(realpath "$1"); X=$(realpath "$2"); S=$(realpath "$3")
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok: $*"; }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

mkdir "$T/src" "$T/in" "$T/moved"
printf 'pear\napple\nfig\n' > "$T/in/words.txt"
gcc -O2 -o "$T/src/prog" "$S/prog.c" || exit 1
gcc -O2 -o "$T/src/maps" "$S/maps.c" || exit 1
BB=$(command -v busybox || echo /bin/busybox)

# run NAME DIALECT PROGRAM ARGS: the bundle $T/NAME-DIALECT, stdout as native
run() {
	local name=$1 d=$2; shift 2
	local b="$T/$name-$d"
	(cd "$T/in" && "$@") > "$b.native" 2>/dev/null
	if ! (cd "$T/in" && "$R" run -q --dialect "$d" --bundle "$b" "$@") > "$b.out" 2> "$b.err"; then
		bad "$name ($d): run --bundle: $(grep -v '^rtitsim: trace' "$b.err" | head -3)"
	elif ! cmp -s "$b.native" "$b.out"; then
		bad "$name ($d): stdout differs from the native run"
	else
		ok "$name ($d): bundle written, $(ls "$b"/*.files | wc -l) mapped files copied"
	fi
}
for d in rtit pt; do
	run prog $d "$T/src/prog" 100 x
	run bb $d "$BB" sha256sum "$T/in/words.txt"
	run maps $d "$T/src/maps" 100
done

# moved, and the programs built here gone
for b in "$T"/*-rtit "$T"/*-pt; do mv "$b" "$T/moved/"; done
rm -rf "$T/src"
for b in "$T"/moved/*; do
	n=$(basename "$b"); stem=$(basename "$b"/*.manifest.json .manifest.json)
	if ! (cd / && "$R" decode "$b" --check "$b/$stem.flow" -q) 2> "$T/err"; then
		bad "$n: decode --check from / after the move: $(head -2 "$T/err")"; continue
	fi
	(cd / && "$R" decode "$b" --json) > "$T/$n.jsonl" 2>/dev/null
	if (cd /usr && "$R" check "$b" "$T/$n.jsonl" -q) > "$T/out" 2>&1; then ok "$n: decode and check from elsewhere"
	else bad "$n: check of decode's JSON: $(tail -2 "$T/out")"; fi
	if grep -q '^mmap .* /' "$b/$stem.sideband" || grep -q '^image /' "$b/$stem.sideband" ||
	   grep -q '"/' "$b/$stem.manifest.json"; then
		bad "$n: an absolute path in the sideband or the manifest"
	else ok "$n: every path relative to the bundle"; fi
	# the independent reader of docs/formats.md (tests/formats)
	if /usr/bin/python3 "$S/../formats/check_formats.py" "$b" > "$T/out" 2>&1; then
		ok "$n: the independent reader agrees ($(tail -1 "$T/out" | sed 's/^check_formats: //'))"
	else bad "$n: check_formats.py: $(head -3 "$T/out")"; fi
	case $n in *-pt)
		line=$(sed -n 's/.*"ptxed": "\(.*\)"}.*/\1/p' "$b/$stem.manifest.json")
		if ! (cd "$b" && "$X" ${line#ptxed }) > "$T/$n.ptxed" 2> "$T/err"; then
			bad "$n: the manifest's ptxed line: $(cat "$T/err")"
		elif (cd / && "$R" check "$b" "$T/$n.ptxed" -q) > "$T/out" 2>&1; then
			ok "$n: libipt with the manifest's ptxed line agrees"
		else bad "$n: libipt: $(tail -2 "$T/out")"; fi
	esac
done
m=$(grep -c '^mmap ' "$T/moved/maps-pt/maps.sideband")
[ "$m" -gt 100 ] && ok "maps: $m mmap lines decoded" || bad "maps: only $m mmap lines"
[ "$(ls "$T/moved/maps-pt/maps.files" | wc -l)" -le 5 ] && ok "maps: each file copied once" ||
	bad "maps: $(ls "$T/moved/maps-pt/maps.files" | wc -l) copies"

# perf (when installed): perf-data of the moved bundle names the copies,
# and perf finds the program's own function in them
if command -v perf >/dev/null 2>&1 && perf version >/dev/null 2>&1; then
	mkdir "$T/pd"
	if (cd / && "$R" perf-data "$T/moved/prog-pt/prog" "$T/pd") >/dev/null 2>"$T/err" &&
	   (cd "$T/pd" && PERF_CONFIG=/dev/null perf script -i perf.data --itrace=i0ns -F ip,sym 2>/dev/null) |
	   awk '{print $2}' | grep -qx cmp_int; then
		ok "perf-data of the moved bundle: perf names cmp_int from the copy"
	else bad "perf-data of the moved bundle: $(head -2 "$T/err")"; fi
fi

# the bundle's copies are what the decoder reads: libc's copy replaced
cp -r "$T/moved/prog-pt" "$T/corrupt"
cp "$T/corrupt/prog.files/ld-linux-x86-64.so.2" "$T/corrupt/prog.files/libc.so.6"
if (cd / && "$R" decode "$T/corrupt" -q) 2> "$T/err"; then
	bad "a bundle whose libc copy is another ELF decodes"
elif grep -q 'prog.files/libc.so.6: build-id' "$T/err"; then ok "a wrong copy fails the build-id check, named"
else bad "a wrong copy: $(head -2 "$T/err")"; fi

# SIGINT (D135): the previous complete bundle stays, or nothing
sum() { (cd "$1" && find . -type f | sort | xargs sha256sum); }
complete() {	# DIR: decodes, and the manifest's trace digest is the sideband's
	(cd / && "$R" decode "$1" --check "$1/prog.flow" -q) 2>/dev/null &&
	grep -q "\"trace_xxh3\": \"$(sed -n 's/^trace_xxh3 //p' "$1/prog.sideband")\"" "$1/prog.manifest.json"
}
mkdir "$T/src"
gcc -O2 -o "$T/src/prog" "$S/prog.c" || exit 1
"$R" run -q --flow bin --bundle "$T/sig" "$T/src/prog" 30 x > /dev/null 2>&1
sum "$T/sig" > "$T/sum.before"
# the signal comes in a phase the staging directory shows: the run
# (its trace being written) and the dumps (the run's files complete)
wait_for() {	# FILE PID: 0 once FILE exists, 1 if PID ended first
	for _ in $(seq 1 3000); do
		[ -e "$1" ] && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.01
	done
	return 1
}
for phase in prog.trace.part prog.dump.txt.part; do
	for dir in sig empty-$phase; do
		# a phase lasts tens of milliseconds: on a loaded machine the
		# signal may come after it; then again, with a longer run
		for size in 3000 10000 30000; do
			[ $dir = sig ] || rm -rf "$T/$dir"
			"$R" run -q --bundle "$T/$dir" "$T/src/prog" $size x > /dev/null 2> "$T/err" &
			pid=$!
			wait_for "$T/$dir/.prog.part/$phase" $pid && kill -INT $pid
			wait $pid; rc=$?
			[ $rc -ne 0 ] && break
			# finished first: the sig bundle was replaced; make it
			# the reference again
			[ $dir = sig ] && sum "$T/sig" > "$T/sum.before"
		done
		left=$(ls -A "$T/$dir" 2>/dev/null | tr '\n' ' ')
		if [ $rc -eq 0 ]; then
			bad "SIGINT at $phase ($dir): the run had finished first"
		elif [ $dir = sig ] && ! cmp -s "$T/sum.before" <(sum "$T/sig"); then
			bad "SIGINT at $phase: the bundle there before changed: $left"
		elif [ $dir = sig ] && ! complete "$T/sig"; then
			bad "SIGINT at $phase: the bundle left is not complete"
		elif [ $dir != sig ] && [ -n "$left" ]; then
			bad "SIGINT at $phase into an empty directory left: $left"
		elif ! grep -q 'interrupted (SIGINT).*bundle' "$T/err"; then
			bad "SIGINT at $phase: no line saying so: $(cat "$T/err")"
		else ok "SIGINT at $phase ($dir): exit $rc, $( [ $dir = sig ] && echo 'the previous bundle intact' || echo 'nothing left')"; fi
	done
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
