#!/usr/bin/env bash
# test_dump.sh RTITSIM - the dump command's output, errors and exit codes.
set -u
R=$(realpath "$1")
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
check() {  # check NAME CONDITION...
	local name=$1; shift
	if "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $name"; fi
}

# RTIT 2.5.1 Table 3 stream (bytes worked out by hand from chapter 4).
printf '\xc0\x00\x00\x00\x00\x00\x00\x00\x00\x84\x02\x01\x8c\x05\x01\xb4\x83\x09' > "$T/t3.bin"
out=$("$R" dump "$T/t3.bin"); rc=$?
check "clean dump exits 0" test $rc -eq 0
check "PSB line" grep -q '^00000000  c0 00 00 00 00 00 00 00 00 .* PSB' <<<"$out"
check "FUP.PGE with full IP and explanation" grep -q '^00000009  84 02 01 .*FUP.PGE .*ip=0x0000000000000102 \[CNT=0 Zext=1' <<<"$out"
check "TIP line" grep -q '^0000000f  b4 83 09 .*TIP .*ip=0x0000000000000983' <<<"$out"
check "one line per packet" test "$(wc -l <<<"$out")" -eq 4

# Same from standard input, and as JSON.
out2=$("$R" dump - < "$T/t3.bin")
check "stdin gives the same" test "$out" = "$out2"
js=$("$R" dump --json "$T/t3.bin")
check "json line" grep -q '^{"offset":9,"bytes":"840201","type":"FUP.PGE","ipc":0,"zext":true,"payload":"0x102","ip":"0x0000000000000102"' <<<"$js"

# Bad bytes: error with offset, resync at the PSB, exit 3, summary on stderr.
printf '\xb4\x83\x09\xe0\x11\xc0\x00\x00\x00\x00\x00\x00\x00\x00\xb4\x45\x03\xb5\x45' > "$T/bad.bin"
out=$("$R" dump "$T/bad.bin" 2>"$T/err"); rc=$?
check "bad bytes exit 3" test $rc -eq 3
check "error names offset and rule" grep -q '^00000003  error at byte 0xe0: reserved or unknown opcode: .*RTIT Figure 2.*skipped 2 bytes' <<<"$out"
check "decoding resumes at the PSB" grep -q '^00000005  c0 00' <<<"$out"
check "truncated last packet reported" grep -q '^00000011  error at byte 0xb5: truncated packet' <<<"$out"
check "stderr summary" grep -q 'bad.bin: 2 decode error(s), 4 byte(s) skipped' "$T/err"

# Resync after an error starts at the byte after the first byte of the
# packet before (SDM 33.4.2.17, D86): PSB, PSBEND, a TIP (IPBytes=011b,
# Table 33-18) whose six IP bytes are the first six of the next PSB, the
# PSB's other ten bytes, PSBEND, TNT: the bytes at 0x19 (02 82 x5, 02 23)
# are a broken PSB; the PSB at 0x13 is found and decoded.
P='\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82'
printf "$P"'\x02\x23\x6d\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82\x02\x23\x1a' > "$T/swallow.bin"
out=$("$R" dump --dialect pt "$T/swallow.bin" 2>/dev/null); rc=$?
check "swallowed PSB: exit 3" test $rc -eq 3
check "swallowed PSB: the TIP" grep -q '^00000012  6d 02 82 02 82 02 82 .*TIP' <<<"$out"
check "swallowed PSB: the error" grep -q '^00000019  error at byte 0x02: .*the next PSB begins at 00000013, inside the packet before' <<<"$out"
check "swallowed PSB: found" grep -q '^00000013  02 82 02 82 02 82 02 82 02 82 02 82 02 82 02 82 .*PSB' <<<"$out"
check "swallowed PSB: PSBEND" grep -q '^00000023  02 23 .*PSBEND' <<<"$out"
check "swallowed PSB: the TNT after it" grep -q '^00000025  1a .*TNT' <<<"$out"
# The same through a pipe in 1-byte reads.
out2=$(cat "$T/swallow.bin" | "$R" dump --dialect pt - 2>/dev/null)
check "swallowed PSB: the same from a pipe" test "$out" = "$out2"

# Intel PT dialect.
printf '\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82\x02\x23\x6d\x00\x00\x00\x81\xff\xff\x2d\x10\x00' > "$T/pt.bin"
out=$("$R" dump --dialect pt "$T/pt.bin"); rc=$?
check "pt exit 0" test $rc -eq 0
check "pt TIP from last IP" grep -q 'TIP .*ip=0xffffffff81000010 \[IPBytes=001b: sent IP\[15:0\], IP\[63:16\] from last IP 0xffffffff81000000' <<<"$out"

# --sync skips leading junk without an error.
printf '\x55\x66' | cat - "$T/pt.bin" > "$T/pt2.bin"
out=$("$R" dump --dialect pt --sync "$T/pt2.bin"); rc=$?
check "--sync exit 0" test $rc -eq 0
check "--sync starts at the PSB" grep -q '^00000002  02 82' <<<"$out"

# Cycle-accurate RTIT.
printf '\xb4\x83\x09\x15' > "$T/ca.bin"
out=$("$R" dump --cycle-accurate "$T/ca.bin"); rc=$?
check "cycle-accurate CCP" grep -q '^00000003  15 .*CCP .*cycles=5' <<<"$out"

# The sideband next to PREFIX.trace (issue 16): RTIT 4.2.3.1 and D4, a
# FUP.BuffOvf loads LAST_LIP when the run said so: PSB, FUP.PGE 0x401000,
# FUP.BuffOvf 0x401012 (CNT=01b Zext=1), TIP CNT=00b Zext=0 LIP[15:0]=0x1040:
# LIP[47:16] from 0x401012, so 0x401040.
printf '\xc0\x00\x00\x00\x00\x00\x00\x00\x00\x85\x00\x10\x40\x00\x95\x12\x10\x40\x00\xb0\x40\x10' > "$T/ovf.trace"
printf '# rtitsim sideband: what a decoder needs besides the trace\ndialect rtit\nparam buffovf_loads_lip = 1\n' > "$T/ovf.sideband"
out=$("$R" dump "$T/ovf.trace" 2>"$T/err"); rc=$?
check "sideband: exit 0" test $rc -eq 0
check "sideband: TIP from the FUP.BuffOvf's IP" grep -q '^00000013  b0 40 10 .*TIP .*ip=0x0000000000401040 .*from last IP 0x0000000000401012' <<<"$out"
check "sideband: no ip=?" test "$(grep -c 'ip=?' <<<"$out")" -eq 0
check "sideband: named on stderr" grep -q "sideband $T/ovf.sideband: dialect rtit, cycle_accurate 0, buffovf_loads_lip 1" "$T/err"
out=$("$R" dump --no-sideband "$T/ovf.trace" 2>/dev/null)
check "--no-sideband: the TIP's upper bits unknown" grep -q '^00000013  b0 40 10 .*TIP .*ip=?' <<<"$out"
# dialect and Cycle_Acc from the sideband; the options override it.
printf '\xb4\x83\x09\x15' > "$T/ca2.trace"
printf '# rtitsim sideband: what a decoder needs besides the trace\ndialect rtit\ncycle_accurate 1\n' > "$T/ca2.sideband"
out=$("$R" dump "$T/ca2.trace" 2>/dev/null); rc=$?
check "sideband: cycle-accurate without the option" grep -q '^00000003  15 .*CCP .*cycles=5' <<<"$out"
check "sideband: cycle-accurate exit 0" test $rc -eq 0
printf '# rtitsim sideband: what a decoder needs besides the trace\ndialect pt\n' > "$T/pt3.sideband"
cp "$T/pt.bin" "$T/pt3.trace"
out=$("$R" dump "$T/pt3.trace" 2>/dev/null); rc=$?
check "sideband: dialect pt" test $rc -eq 0
"$R" dump --dialect rtit "$T/pt3.trace" >/dev/null 2>"$T/err"; rc=$?
check "--dialect overrides the sideband" test $rc -eq 3
check "the override said" grep -q "(options override it)" "$T/err"
printf 'not a sideband\n' > "$T/bad.sideband"
cp "$T/t3.bin" "$T/bad.trace"
"$R" dump "$T/bad.trace" >/dev/null 2>"$T/err"; rc=$?
check "bad sideband exit 4" test $rc -eq 4
check "bad sideband named" grep -q "bad.sideband" "$T/err"
# A cycle-accurate run dumps without --cycle-accurate (issue 16).
if "$R" run "$(dirname "$0")/../../golden/rtit_cycle_accurate.scn" --out "$T/car" >/dev/null 2>&1; then
	"$R" dump "$T/car.trace" >/dev/null 2>&1
	check "cycle-accurate run dumps clean" test $? -eq 0
fi

# Usage and I/O errors.
"$R" dump "$T/missing.bin" 2>"$T/err"; rc=$?
check "missing file exit 2" test $rc -eq 2
check "missing file named" grep -q "missing.bin: cannot open" "$T/err"
"$R" dump --dialect arm "$T/t3.bin" 2>/dev/null; check "bad dialect exit 1" test $? -eq 1
"$R" dump --bogus "$T/t3.bin" 2>/dev/null; check "bad option exit 1" test $? -eq 1
"$R" nosuchcmd 2>/dev/null; check "bad command exit 1" test $? -eq 1

# Constant memory: a 16 MiB stream of TNTs through a pipe peaks where a
# 16 KiB one does (within 2 MiB), and, without AddressSanitizer (whose
# shadow and quarantine put the baseline near 28 MiB whatever the input),
# under 16 MiB.
peak_of() {
	{ head -c "$1" /dev/zero | tr '\0' '\015' | /usr/bin/time -f '%M' "$R" dump - >/dev/null; } 2>&1 | tail -1
}
peak=$(peak_of 16777216)
small=$(peak_of 16384)
check "16 MiB dump peaks within 2 MiB of a 16 KiB one (${peak} vs ${small} KiB)" \
	test "${peak:-999999}" -lt "$(( ${small:-0} + 2048 ))"
if ! ldd "$R" 2>/dev/null | grep -q libasan; then
	check "16 MiB dump in under 16 MiB RSS (got ${peak} KiB)" test "${peak:-999999}" -lt 16384
fi

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
