#!/usr/bin/env bash
# run_flow.sh RTITSIM SCENARIO_DIR (golden/) - the flow decoder against the simulator:
#  * every scenario and the demo: `rtitsim run --out`, then `rtitsim decode
#    --check` must give back exactly the flow (outside reported gaps), with
#    no decode error;
#  * the same decode from 1-byte and 7-byte reads prints the same flow;
#  * corrupted traces: an error naming a trace offset, never a crash.
# RTITSIM_TEST_THIN=N (the sanitizer build): the chunked decodes for every
# Nth scenario only.
set -u
thin=${RTITSIM_TEST_THIN:-1} nrt=0
. "$(dirname "$0")/../common/python.sh"
R=$(realpath "$1")
D=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

roundtrip() {	# NAME [SCENARIO]
	local n=$1; shift
	if ! "$R" run "$@" --out "$T/$n" -q >/dev/null 2>"$T/$n.run.err"; then
		bad "$n: rtitsim run failed: $(head -3 "$T/$n.run.err")"; return
	fi
	"$R" decode "$T/$n.trace" --check "$T/$n.flow" >"$T/$n.dec" 2>"$T/$n.err"
	local rc=$?
	if [ $rc -eq 0 ] && ! grep -q 'error' "$T/$n.err"; then ok
	else bad "$n: decode --check exit $rc: $(head -12 "$T/$n.err")"; fi
	# every scenario traces something: an empty decode would match trivially
	if grep -qE 'matches .*: [1-9][0-9]* records' "$T/$n.err"; then ok
	else bad "$n: nothing decoded: $(head -3 "$T/$n.err")"; fi
	"$R" decode "$T/$n.trace" --json >"$T/$n.json" 2>/dev/null
	if [ "$(grep -c '' "$T/$n.json")" = "$(grep -c '' "$T/$n.dec")" ] &&
	   grep -q '^{"kind":"insn","ip":"0x' "$T/$n.json"; then ok
	else bad "$n: --json output"; fi
	nrt=$((nrt + 1))
	[ $(((nrt - 1) % thin)) -eq 0 ] || return 0
	for c in 1 7; do
		"$R" decode "$T/$n.trace" --chunk $c >"$T/$n.dec$c" 2>/dev/null
		if cmp -s "$T/$n.dec" "$T/$n.dec$c"; then ok
		else bad "$n: --chunk $c decodes differently"; fi
	done
}

roundtrip demo
nscn=0
for f in "$D"/*.scn; do
	# E8 reorders packets after their IPs were compressed: not decodable
	# in stream order (the decoder tolerates E1, E2, E4, E5, E6, E7)
	grep -qE '^param[[:space:]]+e8[[:space:]]*=' "$f" && continue
	roundtrip "$(basename "$f" .scn)" "$f"
	nscn=$((nscn + 1))
done
[ $nscn -ge 5 ] && ok || bad "only $nscn scenarios in $D"

# A static ELF program (`rtitsim run PROGRAM`), decoded with --image; it
# ends on HLT.
cat > "$T/p.s" <<'ASM'
	.globl _start
_start:
	mov $300, %ecx
1:	rdrand %eax
	test $1, %eax
	jz 2f
	call f
2:	dec %ecx
	jnz 1b
	hlt
f:	lea g(%rip), %rax
	call *%rax
	ret
g:	ret
ASM
if as "$T/p.s" -o "$T/p.o" && ld -static -Ttext=0x401000 "$T/p.o" -o "$T/p" &&
   "$R" run --bare --out "$T/prog" -q "$T/p" >/dev/null 2>&1; then
	if "$R" decode "$T/prog.trace" --image "$T/p" --check "$T/prog.flow" -q 2>"$T/prog.err"; then ok
	else bad "ELF program: $(head -8 "$T/prog.err")"; fi
	# the sideband's image line names the program
	"$R" decode "$T/prog.trace" --check "$T/prog.flow" -q 2>"$T/prog.err2"; rc=$?
	if [ $rc -eq 0 ]; then ok
	else bad "ELF program, image from the sideband: exit $rc: $(head -3 "$T/prog.err2")"; fi
	# the same code as a flat binary (FILE@ADDR)
	objcopy -O binary -j .text "$T/p" "$T/p.bin"
	"$R" decode "$T/prog.trace" --image "$T/p.bin@0x401000" --check "$T/prog.flow" -q 2>"$T/prog.err3"
	rc=$?
	if [ $rc -eq 0 ]; then ok
	else bad "ELF program as a flat binary: exit $rc: $(head -3 "$T/prog.err3")"; fi
	"$R" decode "$T/prog.trace" --image "$T/p.bin@zz" -q 2>"$T/prog.err4"; rc=$?
	if [ $rc -eq 1 ] && grep -q "load address after '@'" "$T/prog.err4"; then ok
	else bad "a flat binary with a bad address: exit $rc"; fi
	# and without it, a usage error that says what is missing
	grep -v '^image ' "$T/prog.sideband" > "$T/prog.sb2"
	"$R" decode "$T/prog.trace" --sideband "$T/prog.sb2" -q 2>"$T/prog.err2"; rc=$?
	if [ $rc -eq 1 ] && grep -q 'no image' "$T/prog.err2"; then ok
	else bad "ELF program without an image: exit $rc"; fi
else
	bad "ELF program: cannot build or run it"
fi

# The decoder is told where the run stopped (sideband): the demo's flow
# comes back to its last instruction, nothing left after the last packet.
if grep -q ' 0 after the last packet' "$T/demo.err"; then ok
else bad "demo: records left after the last packet: $(cat "$T/demo.err")"; fi

# --json: every line parses, records and notes alike.
if "$PY" -c "
import json, sys
n = 0
for line in open(sys.argv[1]):
    o = json.loads(line); n += 1
    assert 'kind' in o or 'note' in o
assert n > 10
" "$T/rtit_overflow_burst.json"; then ok
else bad "--json lines do not parse"; fi

# An overflow gap is reported, and the decode still matches around it.
if grep -q '^# overflow gap: resumes at 0x' "$T/rtit_overflow_burst.dec" 2>/dev/null; then ok
else bad "overflow burst: no overflow gap reported"; fi

# Time (docs/decisions.md D31): the comparator checks exact cycle counts.
# A cycle-accurate random scenario, then one of its CCPs one higher (RTIT
# 4.2.14: a 1-byte CCP is value << 2 | 01b): the flow still matches
# record by record, and --check names the cycles as the difference.
for s in $(seq 1 60); do
	"$PY" "$(dirname "$0")/gen_stress.py" $s > "$T/ca.scn"
	grep -qE '^msr RTIT_CTL = 0x[0-9a-f]*[2367abef]$' "$T/ca.scn" && break
done
"$R" run "$T/ca.scn" --out "$T/ca" -q >/dev/null 2>&1
"$R" decode "$T/ca.trace" --check "$T/ca.flow" -q 2>"$T/ca.err"; rc=$?
nexact=$("$R" decode "$T/ca.trace" 2>/dev/null | grep -c 'cyc=[0-9]*\*')
if [ $rc -eq 0 ] && [ "$nexact" -ge 10 ]; then ok
else bad "cycle-accurate seed $s: exit $rc, $nexact exact records: $(head -3 "$T/ca.err")"; fi
# tamper IN OUT OFFSET PYEXPR: OUT is IN with byte b[o] at OFFSET o
# replaced by PYEXPR (which may assert what it expects there).
tamper() {
	"$PY" -c "
import sys
b = bytearray(open(sys.argv[1], 'rb').read())
o = int(sys.argv[3], 16)
$4
open(sys.argv[2], 'wb').write(b)" "$1" "$2" "$3"
}
off=$("$R" dump "$T/ca.trace" --cycle-accurate | awk '$NF ~ /^cycles=([1-9]|[1-5][0-9])$/ && NF == 4 {print $1}' | sed -n '5p')
tamper "$T/ca.trace" "$T/cb.trace" "$off" 'b[o] = (((b[o] >> 2) + 1) << 2) | 1'
cp "$T/ca.sideband" "$T/cb.sideband"
"$R" decode "$T/cb.trace" --check "$T/ca.flow" -q 2>"$T/cb.err"; rc=$?
if [ -n "$off" ] && [ $rc -eq 5 ] && grep -q 'cycles differ' "$T/cb.err"; then ok
else bad "a CCP one higher at offset 0x$off: exit $rc, $(head -3 "$T/cb.err")"; fi

# The decoded TSC is a lower bound of the truth's (flow.h): a TSC packet
# (SDM 33.4.2.11: 19, then TSC[55:0] little-endian) made 2^16 later in
# pt_timing's trace is caught.
off=$("$R" dump "$T/pt_timing.trace" --dialect pt | awk '$0 ~ / TSC / {print $1; exit}')
tamper "$T/pt_timing.trace" "$T/tl.trace" "$off" 'assert b[o] == 0x19; b[o + 3] += 1'
cp "$T/pt_timing.sideband" "$T/tl.sideband"
"$R" decode "$T/tl.trace" --check "$T/pt_timing.flow" -q 2>"$T/tl.err"; rc=$?
if [ -n "$off" ] && [ $rc -eq 5 ] && grep -q 'TSC (the decoded one is later' "$T/tl.err"; then ok
else bad "a TSC 2^16 later at offset 0x$off: exit $rc, $(head -3 "$T/tl.err")"; fi

# The property test's reducer (shrink_stress.py) on a scenario that does
# fail the round trip (E8 is not decodable in stream order): fewer lines,
# still failing.
"$PY" "$(dirname "$0")/shrink_stress.py" "$R" "$D/rtit_e8_reorder.scn" 200 >"$T/min.scn" 2>/dev/null
if grep -q '^# minimal reproduction' "$T/min.scn" &&
   [ "$(grep -vc '^#' "$T/min.scn")" -lt "$(grep -c '' "$D/rtit_e8_reorder.scn")" ] &&
   "$R" run "$T/min.scn" --out "$T/min" -q >/dev/null 2>&1 &&
   ! "$R" decode "$T/min.trace" --check "$T/min.flow" -q >/dev/null 2>&1; then ok
else bad "shrink_stress.py did not reduce the E8 scenario to a failing one"; fi

# Corruption: a reserved opcode (0xe0, RTIT Figure 2) in the demo trace.
"$PY" - "$T/demo.trace" "$T/c1.trace" <<'PY'
import sys
b = bytearray(open(sys.argv[1], 'rb').read())
b[20] = 0xe0
open(sys.argv[2], 'wb').write(b)
PY
cp "$T/demo.sideband" "$T/c1.sideband"
"$R" decode "$T/c1.trace" >/dev/null 2>"$T/c1.err"; rc=$?
if [ $rc -eq 3 ] && grep -q 'error at trace offset 0x' "$T/c1.err"; then ok
else bad "reserved opcode: exit $rc, $(cat "$T/c1.err")"; fi

# Every byte of the demo trace flipped in turn (three ways): an exit
# status of 0, 3 or 5, never a crash; errors name an offset.
crash=0 noff=0
len=$(stat -c %s "$T/demo.trace")
for ((i = 0; i < len; i++)); do
	for x in 1 0x40 0xff; do
		"$PY" -c "
import sys
b = bytearray(open('$T/demo.trace', 'rb').read()); b[$i] ^= $x
open('$T/cx.trace', 'wb').write(b)"
		cp "$T/demo.sideband" "$T/cx.sideband"
		"$R" decode "$T/cx.trace" --check "$T/demo.flow" -q >/dev/null 2>"$T/cx.err"
		rc=$?
		case $rc in
		0|5) ;;
		3) grep -q 'offset 0x' "$T/cx.err" || noff=$((noff + 1)) ;;
		*) crash=$((crash + 1)); echo "byte $i ^ $x: exit $rc" ;;
		esac
	done
done
[ $crash -eq 0 ] && ok || bad "$crash corrupted traces crashed the decoder"
[ $noff -eq 0 ] && ok || bad "$noff decode errors without an offset"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
