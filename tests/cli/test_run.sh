#!/usr/bin/env bash
# test_run.sh RTITSIM SRCDIR - `rtitsim run`: the demo, a program, the
# outputs, docs/scenario.md's complete example as written, the warning of a
# run that never traced, and every kind of bad input with its exit status
# and one-line message.
set -u
R=$(realpath "$1")
SRC=$(realpath "${2:-.}")
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T"
pass=0 fail=0
check() {
	local name=$1; shift
	if "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $name"; fi
}

# The demo: an account of each packet with its cause, no files.
out=$("$R" run 2>&1); rc=$?
check "demo exits 0" test $rc -eq 0
check "demo explains the PSB" grep -q 'PSB .*TriggerEn 0->1' <<<"$out"
check "demo has a FUP.FAR for the page fault's CLIP" grep -q 'FUP.FAR .*exception at 0x' <<<"$out"
check "demo prints digests" grep -qE '^trace [0-9a-f]{16}  flow [0-9a-f]{16}$' <<<"$out"
check "demo writes no files" test -z "$(ls)"
out2=$("$R" run 2>&1)
check "demo is deterministic" test "$out" = "$out2"

# --verify: the flow decoder gives the simulator's flow back.
out=$("$R" run --verify -q 2>&1); rc=$?
check "demo --verify exits 0" test $rc -eq 0
check "demo --verify says so" grep -q 'verified: decoding the trace gives the flow back' <<<"$out"
check "--verify leaves no files" test -z "$(ls)"

# A freestanding program in the bare-metal mode (--bare): a static ELF
# traced from its entry at CPL 0 until HLT.
cat > p.s <<'ASM'
	.globl _start
_start:
	mov $3, %ecx
1:	dec %ecx
	jnz 1b
	hlt
ASM
as --64 -o p.o p.s && ld -static -Ttext=0x401000 -o prog p.o
"$R" run --bare -q prog > o.txt 2>&1; rc=$?
check "program exits 0" test $rc -eq 0
check "program writes trace, sideband, flow" test -s prog.trace -a -s prog.sideband -a -s prog.flow -a -s prog.flow.txt
check "sideband names the dialect and digests" grep -q '^trace_xxh3 [0-9a-f]\{16\}$' prog.sideband
"$R" dump prog.trace > d.txt; rc=$?
check "the trace dumps cleanly" test $rc -eq 0
check "PSB, FUP.PGE at the entry, then TNT" test "$(awk '{print $NF}' d.txt | head -0; grep -c 'PSB\|FUP.PGE' d.txt)" -ge 2
"$R" run --bare -o other -q prog >/dev/null 2>&1
check "--out names the files" test -s other.trace
"$R" run --bare --verify -q prog >/dev/null 2>&1
check "program --verify exits 0" test $? -eq 0
check "the sideband names the program" grep -q "^image $T/prog\$" prog.sideband
mkdir sub && mv prog.* sub/
(cd / && "$R" decode "$T/sub/prog.trace" --check "$T/sub/prog.flow" -q >/dev/null 2>&1)
check "decode finds the program from the sideband" test $? -eq 0
mv sub/prog.* . && rmdir sub

# --flow: which ground-truth files; `rtitsim flow` prints a binary one as
# the text the run writes (docs/formats.md), and refuses a cut one.
for f in bin txt none; do
	rm -f fl.*
	"$R" run --bare -o fl --flow $f -q prog >/dev/null 2>&1
	check "--flow $f exits 0" test $? -eq 0
done
check "--flow none writes neither" test ! -e fl.flow -a ! -e fl.flow.txt -a -s fl.trace
"$R" run --bare -o fl --flow bin -q prog >/dev/null 2>&1
check "--flow bin writes no text" test -s fl.flow -a ! -e fl.flow.txt
"$R" flow fl.flow > fl.txt; rc=$?
check "flow exits 0" test $rc -eq 0
check "flow prints what --flow both writes" cmp -s fl.txt prog.flow.txt
# --flow-version (D180): 2 (the default) and 1 hold the same records with
# the same trailer (count, digest); version 1 is 64 bytes a record.
"$R" run --bare -o fv1 --flow bin --flow-version 1 -q prog >/dev/null 2>&1
check "--flow-version 1 exits 0" test $? -eq 0
check "... the version in the header" test "$(od -An -tu4 -j8 -N4 fv1.flow | tr -d ' ')" = 1
check "... and by default 2" test "$(od -An -tu4 -j8 -N4 fl.flow | tr -d ' ')" = 2
check "... 64 bytes a record" test "$(stat -c %s fv1.flow)" -eq \
	$((40 + 64 * $(sed -n 's/^flow_records //p' fl.sideband)))
check "... version 2 is smaller" test "$(stat -c %s fl.flow)" -lt "$(stat -c %s fv1.flow)"
check "... the same trailer" cmp -s <(tail -c 24 fv1.flow) <(tail -c 24 fl.flow)
"$R" flow fv1.flow > fv1.txt
check "... the same text" cmp -s fv1.txt prog.flow.txt
# flow --convert: each version into the other, byte for byte what run writes
"$R" flow --convert 2 fv1.flow cv2.flow; rc=$?
check "flow --convert 2 exits 0" test $rc -eq 0
check "... gives run's version 2 file" cmp -s cv2.flow fl.flow
"$R" flow --convert 1 fl.flow cv1.flow
check "flow --convert 1 gives run's version 1 file" cmp -s cv1.flow fv1.flow
head -c 100 fv1.flow | "$R" flow --convert 2 - cut3.flow 2> e.txt; rc=$?
check "flow --convert of a cut file exits 4" test $rc -eq 4
check "... leaving no file" test ! -e cut3.flow -a ! -e cut3.flow.part
if /usr/bin/python3 -c 'import xxhash' 2>/dev/null; then
	# a version 1 file whose record has a nonzero zero byte (60) and a
	# digest over it: valid as version 1, no version 2 form
	/usr/bin/python3 - fv1.flow pad.flow <<'PY'
import sys, xxhash
b = bytearray(open(sys.argv[1], "rb").read())
b[16 + 60] = 1
b[-8:] = xxhash.xxh3_64(bytes(b[16:-24])).digest()
open(sys.argv[2], "wb").write(b)
PY
	"$R" flow pad.flow > /dev/null
	check "a version 1 file with a nonzero zero byte reads" test $? -eq 0
	"$R" flow --convert 2 pad.flow pad2.flow 2> e.txt; rc=$?
	check "... but does not convert (exit 4)" test $rc -eq 4 -a ! -e pad2.flow
	check "... saying why" grep -q "zero bytes are not all zero" e.txt
fi
"$R" run --bare --flow-version 3 -q prog > /dev/null 2> e.txt; rc=$?
check "--flow-version 3 is a usage error" test $rc -eq 1
head -c 200 fv1.flow > cut.flow
"$R" flow cut.flow > cut.txt 2> e.txt; rc=$?
check "flow of a cut file exits 4" test $rc -eq 4
check "... after the records it read" test "$(wc -l < cut.txt)" -eq 2
check "... naming where it stopped" grep -q 'cut short or altered after record 2' e.txt
# a version 2 file cut before its block's last byte: no record of the cut
# block, and why
head -c $(($(stat -c %s fl.flow) - 25)) fl.flow > cut2.flow
"$R" flow cut2.flow > cut.txt 2> e.txt; rc=$?
check "flow of a cut version 2 file exits 4" test $rc -eq 4
check "... with no record of the cut block" test "$(wc -l < cut.txt)" -eq 0
check "... saying so" grep -q 'after record 0: the file ends inside a block' e.txt
"$R" decode prog.trace --check cut2.flow -q > /dev/null 2> e.txt; rc=$?
check "decode --check of a cut version 2 file exits 4" test $rc -eq 4
check "... saying why" grep -q 'cannot read the flow: the file ends inside a block' e.txt
"$R" flow prog.flow.txt > /dev/null 2> e.txt; rc=$?
check "flow of a text file exits 4" test $rc -eq 4
"$R" run --bare --flow none --verify -q prog > /dev/null 2> e.txt; rc=$?
check "--verify without the binary flow is a usage error" test $rc -eq 1
"$R" run --bare --flow nope -q prog > /dev/null 2> e.txt; rc=$?
check "--flow nope is a usage error" test $rc -eq 1

# A failed write to the standard output is an I/O error, named.
if [ -w /dev/full ]; then
	"$R" run --bare -o full --dump prog > /dev/full 2> e.txt; rc=$?
	check "run --dump > /dev/full exits 2" test $rc -eq 2
	check "... naming the standard output" grep -q 'standard output failed' e.txt
fi

# Bad input: one line naming file and line, and the exit status.
printf 'name bad\ndialect rtit\ncode asm load=0x401000\n nop\nend\nmsr RTIT_CTL = 0x200d\nparam no_such_thing = 1\n' > bad.scn
"$R" run bad.scn 2> e.txt >/dev/null; rc=$?
check "unknown param: exit 4" test $rc -eq 4
check "unknown param: file:line" grep -q '^bad.scn:7: unknown RTIT parameter' e.txt
check "one line" test "$(wc -l < e.txt)" -eq 1
printf 'name bad2\nfrobnicate 3\n' > bad2.scn
"$R" run bad2.scn 2> e.txt >/dev/null; rc=$?
check "bad directive: exit 4" test $rc -eq 4
check "bad directive: file:line" grep -q '^bad2.scn:2:' e.txt
printf 'name spin\ncode asm load=0x401000\n1: jmp 1b\nend\nbudget 1000\nmsr RTIT_CTL = 0x200d\n' > spin.scn
"$R" run spin.scn -q 2> e.txt >/dev/null; rc=$?
check "a guest that never halts: exit 6" test $rc -eq 6
check "budget message" grep -q 'budget of 1000' e.txt
printf 'name fault\ncode asm load=0x401000\n mov dword ptr [0x9000], 1\nend\n' | sed 's/^ mov/ .intel_syntax noprefix\n mov/' > fault.scn
"$R" run fault.scn -q 2> e.txt >/dev/null; rc=$?
check "a fault with no handler: exit 6" test $rc -eq 6
check "fault message names the IP" grep -q '0x401000' e.txt
# FF /3 with a register operand: Unicorn 2.0.1 aborts translating it
printf 'name ff\ncode asm load=0x401000\n nop\n .byte 0xff, 0xd8\nend\n' > ff.scn
"$R" run ff.scn -q 2> e.txt >/dev/null; rc=$?
check "an encoding Unicorn cannot translate: exit 6" test $rc -eq 6
check "... named with its address and bytes" grep -q 'aborted translating the instruction at 0x401001 (ff d8' e.txt
"$R" run missing.scn 2> e.txt >/dev/null; rc=$?
check "missing scenario: exit 2" test $rc -eq 2
printf 'not an elf' > junk
cp prog.trace keep.trace
"$R" run --out prog junk 2> e.txt >/dev/null; rc=$?
check "malformed ELF: exit 4" test $rc -eq 4
check "malformed ELF: named" grep -q 'junk' e.txt
check "malformed ELF: no output files left" test -z "$(ls junk.* *.part 2>/dev/null)"
# outputs are written under temporary names (issue 19): a failed run
# leaves the complete files of an earlier run with the same prefix intact
check "... and the earlier run's files intact" cmp -s prog.trace keep.trace
"$R" run --bogus 2>/dev/null; check "bad option: exit 1" test $? -eq 1

# The expect block: names, IPs and, after 'bytes', the packet's exact bytes
# (RTIT 4.2.1: PSB is C0 and eight 00; 4.2.3.1 Table 18: the FUP.PGE after
# a PSB has CNT=01 Zext=1, the TIP to 0x401012 matches LIP[47:16] of the
# last LIP 0x401000, CNT=00 Zext=0; 4.2.2 Figure 4: the loop's T T N after
# the stop bit is 0b1110; the TIP flushes the TNT first, Table 19 row 22).
mk_expect() {	# BODY -> e.scn
	printf 'name e\ndialect rtit\ncode asm load=0x401000\n mov $3, %%ecx\n1: dec %%ecx\n jnz 1b\n lea 2f(%%rip), %%rax\n jmp *%%rax\n2: hlt\nend\n' > e.scn
	printf 'msr RTIT_EVENTS = 0x37\nmsr RTIT_CTL = 0x200d\nexpect\n%b\nend\n' "$1" >> e.scn
}
mk_expect ' PSB bytes c0 00 00 00 00 00 00 00 00\n FUP.PGE 0x401000 bytes 85 00 10 40 00\n TNT TTN bytes 0e\n TIP 0x401012 bytes b0 12 10'
"$R" run e.scn --out e -q >/dev/null 2>e.txt; rc=$?
check "expect with bytes: exit 0 ($(head -1 e.txt))" test $rc -eq 0
mk_expect ' PSB\n FUP.PGE 0x401000 bytes 85 00 10 40 01\n TNT\n TIP'
"$R" run e.scn --out e -q >/dev/null 2>e.txt; rc=$?
check "a wrong byte: exit 5" test $rc -eq 5
check "a wrong byte: named" grep -q '^e.scn:15: byte 4 of the packet at trace offset 9 is 00, expected 01$' e.txt
mk_expect ' PSB bytes c0 00\n FUP.PGE\n TNT\n TIP'
"$R" run e.scn --out e -q >/dev/null 2>e.txt; rc=$?
check "too few bytes: exit 5" test $rc -eq 5
check "too few bytes: named" grep -q 'has 9 bytes, the expect line 2' e.txt
mk_expect ' PSB bytes c0 zz'
"$R" run e.scn --out e -q >/dev/null 2>e.txt; rc=$?
check "bad hex: exit 5" test $rc -eq 5

# The complete example of docs/scenario.md runs as written, its expect
# block included (tests/sim/test_scenario.c checks the doc shows this file).
"$R" run "$SRC/tests/sim/scenarios/example.scn" --out ex -q >/dev/null 2>ex.txt; rc=$?
check "docs/scenario.md's example runs: exit 0 ($(head -1 ex.txt))" test $rc -eq 0
check "docs/scenario.md's example: no warning" test ! -s ex.txt

# An RTIT scenario that never enables packets exits 0 with one warning
# naming what was missing (issue 16).
mk_quiet() {	# MSR lines -> q.scn
	printf 'name q\ndialect rtit\ncode asm load=0x401000\n nop\n hlt\nend\n%b' "$1" > q.scn
}
mk_quiet 'msr RTIT_CTL = 0x200d\n'
"$R" run q.scn --out q -q >/dev/null 2>q.txt; rc=$?
check "never traced (filter): exit 0" test $rc -eq 0
check "never traced (filter): named" grep -q '^q.scn: warning: no packet was ever enabled: FilterEn was never 1 .*Filter_Event_ID' q.txt
for c in 'msr RTIT_EVENTS = 0x37\nmsr RTIT_CTL = 0x0d\n|TraceActive (bit 13) was never set' \
	 'msr RTIT_EVENTS = 0x37\nmsr RTIT_CTL = 0x2009\n|ContextEn was never 1' \
	 'msr RTIT_EVENTS = 0x37\n|Trace_En (bit 0) was never set'; do
	mk_quiet "${c%%|*}"
	"$R" run q.scn --out q -q >/dev/null 2>q.txt
	check "never traced: ${c#*|}" grep -q "${c#*|}" q.txt
done
mk_quiet 'msr RTIT_EVENTS = 0x37\nmsr RTIT_CTL = 0x200d\n'
"$R" run q.scn --out q -q >/dev/null 2>q.txt
check "traced: no warning" test ! -s q.txt

# A full disk under the flow writer's thread (D138): one line naming the
# file and why, exit 2, and no file left, whichever ground truth fails;
# the ground truth is the same with and without a failed run before.
printf '.intel_syntax noprefix\n.globl _start\n_start:\n mov ecx, 200000\n1: dec ecx\n jnz 1b\n cli\n hlt\n' > long.s
as --64 -o long.o long.s && ld -static -Ttext=0x401000 -o long long.o
if [ -w /dev/full ]; then
	for ext in flow flow.txt; do
		rm -f full.*
		ln -s /dev/full "full.$ext.part"
		"$R" run --bare -q -o full long > /dev/null 2> e.txt; rc=$?
		check "full disk ($ext): exit 2" test $rc -eq 2
		check "full disk ($ext): the file named, and why" \
			grep -q "^rtitsim run: full.$ext: writing failed: No space left on device\$" e.txt
		check "full disk ($ext): no output file" test -z "$(ls full.* 2>/dev/null)"
	done
fi
"$R" run --bare -q -o long long > /dev/null 2>&1; rc=$?
check "400002 instructions through the writer thread: exit 0" test $rc -eq 0
check "... the binary flow decodes back (rtitsim flow) to the text, byte for byte" \
	cmp -s long.flow.txt <("$R" flow long.flow)
check "... 400003 lines" test "$(wc -l < long.flow.txt)" -eq 400003

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
