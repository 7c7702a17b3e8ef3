#!/usr/bin/env bash
# test_vmentry.sh RTITSIM GOLDEN - VMLAUNCH/VMRESUME as a VM entry
# (docs/decisions.md D147-D150), end to end:
#   - the simulator: a VMLAUNCH with a `vmentry` line is a taken transfer
#     to the guest RIP with the guest's CR3 (the record); without the line
#     it is #UD (SDM Vol. 2B VMLAUNCH: not in VMX operation), at CPL 3
#     #GP(0); the rtit dialect refuses the line;
#   - rtitsim's flow decoder gives back every instruction of
#     golden/pt_vmentry (a PIP(NR=1) in view before the VMLAUNCH is its
#     entry's, not an entry at the instructions before it), and of the
#     SKD022 vectors the VMLAUNCH whose entry cleared TraceEn (with the
#     workaround for the erratum's FUP; without it, exit 3).
set -u
R=$(realpath "$1") G=$(realpath "$2") T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
cd "$T" || exit 1

scn() {	# scn NAME DIALECT CPL VMENTRY-LINE
	cat > "$1.scn" <<EOS
name $1
dialect $2
mode 64
code asm load=0x401000 entry=start
    .intel_syntax noprefix
    .globl start
start:
    nop
    vmlaunch
    .org 0x40
guest:
    nop
    jmp done
    .org 0x80
ud:
    jmp done
    .org 0xc0
done:
    nop
end
handler 6 = ud
handler 13 = ud
cpl $3
cr3 0x3000
$4
end-at done
msr 0x570 = 0x2005
EOS
}
flow() { grep -o '^[IE] [0-9a-f]* [a-z-]* .*cr3=0x[0-9a-f]*' "$1.flow.txt" | sed 's/ pg=.*//'; }

scn vm pt 0 "vmentry guest=guest cr3=0x5000"
"$R" run vm.scn --out vm -q >/dev/null 2>&1 || bad "vm: run"
grep -q '^I 0000000000401001 other    len=3 T -> 0000000000401040 cpl=0 cr3=0x5000' vm.flow.txt ||
	bad "VMLAUNCH with a vmentry line: $(flow vm)"
scn noline pt 0 ""
"$R" run noline.scn --out noline -q >/dev/null 2>&1
grep -q '^E 0000000000401001 exception .*vec=6' noline.flow.txt ||
	bad "VMLAUNCH without a vmentry line must be #UD: $(flow noline)"
scn user pt 3 "vmentry guest=guest"
"$R" run user.scn --out user -q >/dev/null 2>&1
grep -q '^E 0000000000401001 exception .*vec=13' user.flow.txt ||
	bad "VMLAUNCH at CPL 3 must be #GP: $(flow user)"
scn rt rtit 0 "vmentry guest=guest"
out=$("$R" run rt.scn --out rt -q 2>&1) && bad "rtit dialect with vmentry must be refused"
grep -q 'vmentry' <<<"$out" || bad "rtit dialect refusal names the line: $out"

# the decoder: every instruction of the truth, in order
"$R" run "$G/pt_vmentry.scn" --out pv -q >/dev/null 2>&1 || bad "pt_vmentry: run"
want=$(grep '^I' pv.flow.txt | cut -c1-44)
got=$("$R" decode pv.trace 2>/dev/null | grep '^[IE]' | cut -c1-44)
[ "$want" = "$got" ] || bad "pt_vmentry decoded: $got; truth: $want"
for n in pt_erratum_skd022 pt_erratum_skd022_off; do
	"$R" run "$G/$n.scn" --out "$n" -q >/dev/null 2>&1 || bad "$n: run"
	"$R" decode "$n.trace" 2>/dev/null | grep -q '^I 0000000000401009 other    len=3 T -> ?' ||
		bad "$n: the VMLAUNCH whose entry cleared TraceEn is not decoded"
done
"$R" decode pt_erratum_skd022.trace --pt-errata none >/dev/null 2>&1; rc=$?
[ $rc -eq 3 ] || bad "pt_erratum_skd022 without the workaround: exit $rc, not 3"
[ $fail -eq 0 ] && echo "ok"
exit $fail
