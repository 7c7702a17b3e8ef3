#!/usr/bin/env bash
# test_outputs.sh RTITSIM SRCDIR - outputs that never lie (issue 19):
#  * SIGINT or SIGTERM during a run leaves no output file (each is written
#    as NAME.part and renamed when whole) and says so;
#  * --progress shows progress on stderr, -q silences it;
#  * decode --image of an ELF whose PT_LOAD asks for 0x7fffffffffff bytes
#    of memory: one line, exit 4, at once;
#  * --sideband given a file that is no sideband: exit 4, named;
#  * --out '' refused; option errors name the option; every subcommand's
#    --help lists its exit statuses.
set -u
R=$(realpath "$1")
S=$(realpath "$2")
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
pass=0 fail=0
check() {	# WHAT COMMAND...
	local what=$1; shift
	if "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $what"; fi
}

# a run of about 10^7 instructions (a few seconds)
printf 'name long\ncode asm load=0x401000\n mov $5000000, %%ecx\n1: dec %%ecx\n jnz 1b\n hlt\nend\nbudget 1000000000\nmsr RTIT_CTL = 0x200d\nmsr RTIT_EVENTS = 0x37\n' > long.scn
# the signal's run: 8 * 10^8 instructions, far longer than the 1.2 s before
# the signal on any machine (10^8 could end before it on a fast idle one
# once D176 and D180 made runs faster), and cut short by it
sed 's/5000000/400000000/' long.scn > long.sig.scn
for sig in INT TERM; do
	rm -f long.*.part long.trace long.sideband long.flow long.flow.txt
	"$R" run long.sig.scn --out long --progress 2>err.txt >/dev/null &
	pid=$!
	sleep 1.2
	kill -$sig $pid
	wait $pid
	rc=$?
	check "SIG$sig: the run ends by the signal (exit $rc)" test $rc -gt 128
	check "SIG$sig: no output file left" test -z "$(ls long.trace long.sideband long.flow long.flow.txt long.*.part 2>/dev/null)"
	check "SIG$sig: said" grep -q "interrupted (SIG$sig).*no output file was written" err.txt
done
# the progress: at the first report (2^20 records), then twice a second;
# a run of 4 * 10^7 has it however fast the machine
sed 's/5000000/20000000/' long.scn > longer.scn
"$R" run longer.scn --progress --flow none 2>err.txt >/dev/null
check "--progress: progress on stderr" grep -q 'M instructions and events' err.txt
"$R" run longer.scn --progress --flow none -q 2>err.txt >/dev/null
check "-q silences the progress" test ! -s err.txt
"$R" run long.scn -q 2>err.txt >/dev/null
check "the finished run's files are there" test -s long.trace -a -s long.flow -a ! -e long.trace.part

# a PT_LOAD with a huge p_memsz
cp "$S/golden/expected/pt_branches.elf" huge.elf
python3 - <<'PY'
import struct
b = bytearray(open('huge.elf', 'rb').read())
phoff, = struct.unpack_from('<Q', b, 32)
n, = struct.unpack_from('<H', b, 56)
for i in range(n):
    o = phoff + i * 56
    if struct.unpack_from('<I', b, o)[0] == 1:   # PT_LOAD: p_memsz at +40
        struct.pack_into('<Q', b, o + 40, 0x7fffffffffff)
        break
open('huge.elf', 'wb').write(b)
PY
timeout 20 "$R" decode "$S/golden/expected/pt_branches.trace" --image huge.elf >/dev/null 2>err.txt
rc=$?
check "huge p_memsz: exit 4 (got $rc)" test $rc -eq 4
check "huge p_memsz: one line naming it" test "$(wc -l <err.txt)" -eq 1 -a -n "$(grep 'p_memsz 0x7fffffffffff' err.txt)"

# --sideband given something else
"$R" decode "$S/golden/expected/pt_branches.trace" --sideband "$S/golden/expected/pt_branches.trace" >/dev/null 2>err.txt
rc=$?
check "--sideband of a trace: exit 4 (got $rc)" test $rc -eq 4
check "... named" grep -q 'not an rtitsim sideband' err.txt
"$R" dump --sideband "$S/golden/expected/pt_branches.flow.txt" "$S/golden/expected/pt_branches.trace" >/dev/null 2>err.txt
check "dump --sideband of a flow: exit 4" test $? -eq 4

# option errors
"$R" run long.scn --out '' >/dev/null 2>err.txt
check "--out '': exit 1" test $? -eq 1
check "... naming --out" grep -q -- '--out' err.txt
"$R" run long.scn --param no_such=1 -q >/dev/null 2>err.txt
check "--param no_such=1: exit 4" test $? -eq 4
check "... naming the option, not a line" grep -q '^rtitsim run: --param no_such=1: unknown RTIT parameter' err.txt
"$R" run long.scn --msr NOPE=1 -q >/dev/null 2>err.txt
check "--msr NOPE=1 named" grep -q '^rtitsim run: --msr NOPE=1:' err.txt

for c in run decode dump flow perf-data check golden demo; do
	"$R" $c --help >help.txt 2>&1
	check "$c --help exits 0" test $? -eq 0
	check "$c --help lists its exit statuses" grep -q 'Exit status:' help.txt
done
echo "outputs: $pass passed, $fail failed"
[ $fail -eq 0 ]
