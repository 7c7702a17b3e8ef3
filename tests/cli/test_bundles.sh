#!/usr/bin/env bash
# test_bundles.sh RTITSIM SRCDIR - self-contained vectors (issue 19,
# docs/formats.md "Bundles"):
#  * golden/ copied alone to another directory: every vector decodes from
#    its bundle (the image, handlers and configuration from the sideband's
#    map, handler and msr lines), from any working directory, with no
#    assembler on PATH, and gives the committed ground truth back
#    (decode --check STEM.flow); E4/E8 are left out as in tests/flow;
#  * the bundle named by its directory, its manifest or its stem;
#  * `rtitsim run --bundle DIR` writes the same set of files for any run,
#    and that bundle decodes after being moved;
#  * each scenario's name is its file's name (pt_filter writes pt_filter.*);
#  * `decode` of a missing trace names the trace (exit 2).
set -u
R=$(realpath "$1")
S=$(realpath "$2")
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

mkdir -p "$T/copy" "$T/elsewhere"
cp -r "$S/golden" "$T/copy/"
G=$T/copy/golden/expected
cd "$T/elsewhere"
n=0
for m in "$G"/*.manifest.json; do
	s=${m%.manifest.json}
	v=$(basename "$s")
	grep -qE '^param e[48] = ' "$s.sideband" && continue
	for f in trace sideband flow flow.txt dump.txt dump.jsonl events.txt; do
		[ -f "$s.$f" ] || bad "$v: no $v.$f in the bundle"
	done
	[ -f "$s.elf" ] || [ -f "$s.bin" ] || bad "$v: no image file in the bundle"
	env PATH=/nonexistent "$R" decode "$s.trace" --check "$s.flow" >"$T/out" 2>"$T/err"
	rc=$?
	if [ $rc -eq 0 ] && grep -qE 'matches .*: [1-9][0-9]* records' "$T/err"; then ok
	else bad "$v: decode of the copied bundle: exit $rc: $(head -3 "$T/err")"; fi
	n=$((n + 1))
done
[ $n -ge 60 ] && ok || bad "only $n bundles decoded"

# the bundle by its stem, its manifest, its directory
"$R" decode "$G/pt_filter" >"$T/a" 2>/dev/null && ok || bad "decode STEM"
"$R" decode "$G/pt_filter.manifest.json" >"$T/b" 2>/dev/null && cmp -s "$T/a" "$T/b" && ok ||
	bad "decode STEM.manifest.json"
"$R" decode "$G" >/dev/null 2>"$T/err"
[ $? -eq 1 ] && grep -q 'more than one' "$T/err" && ok || bad "decode of a directory of bundles"

# run --bundle: a scenario and a program, moved, decoded elsewhere
"$R" run "$S/golden/rtit_table19_filter.scn" --bundle "$T/b1" -q >/dev/null 2>"$T/err" && ok ||
	bad "run --bundle: $(cat "$T/err")"
for f in trace sideband flow flow.txt dump.txt dump.jsonl events.txt manifest.json elf; do
	[ -f "$T/b1/rtit_table19_filter.$f" ] && ok || bad "run --bundle wrote no .$f"
done
mv "$T/b1" "$T/moved"
(cd / && env PATH=/nonexistent "$R" decode "$T/moved" --check "$T/moved/rtit_table19_filter.flow" \
	>/dev/null 2>"$T/err") && ok || bad "the moved bundle: $(head -3 "$T/err")"
cat > "$T/p.s" <<'ASM'
	.globl _start
_start:
	mov $30, %ecx
1:	dec %ecx
	jnz 1b
	hlt
ASM
if as --64 -o "$T/p.o" "$T/p.s" && ld -static -o "$T/prog" "$T/p.o"; then
	"$R" run --bare --bundle "$T/b2" -q "$T/prog" >/dev/null 2>"$T/err" && ok ||
		bad "run PROGRAM --bundle: $(cat "$T/err")"
	rm "$T/prog"
	"$R" decode "$T/b2" --check "$T/b2/prog.flow" >/dev/null 2>"$T/err" && ok ||
		bad "the program's bundle without the program: $(head -3 "$T/err")"
fi

# the six scenarios once named differently from their files
cd "$T" || exit 1
for v in pt_branches pt_context pt_filter pt_overflow pt_psb pt_timing; do
	"$R" run "$S/golden/$v.scn" -q >/dev/null 2>&1
	[ -f "$T/$v.trace" ] && ok || bad "$v.scn does not write $v.trace"
done
"$R" decode pt_filter.trace --json >/dev/null 2>"$T/err" && ok ||
	bad "README: decode pt_filter.trace --json: $(head -2 "$T/err")"

# a missing trace is named as such
"$R" decode "$T/none.trace" >/dev/null 2>"$T/err"
[ $? -eq 2 ] && grep -q 'none.trace: cannot read the trace' "$T/err" && ok ||
	bad "decode of a missing trace: $(cat "$T/err")"

echo "bundles: $pass passed, $fail failed"
[ $fail -eq 0 ]
