#!/usr/bin/env bash
# test_bad.sh RTITSIM SRCDIR - a process run given bad input or a program
# doing what the model refuses (docs/linux.md "Errors"): each gives one
# clear line and the documented exit status, never a crash or a host
# change; what was written before a stop stays decodable.
set -u
R=$(realpath "$1"); S=$(realpath "$2")
T=$(mktemp -d)
trap 'chmod -R u+w "$T"; rm -rf "$T"' EXIT
gcc -O2 -o "$T/bad" "$S/bad.c" || exit 1
gcc -O2 -static -o "$T/bad_static" "$S/bad.c" || exit 1
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok: $1"; }
bad() { fail=$((fail + 1)); echo "FAIL: $1"; }
# expect NAME STATUS PATTERN(stdout+stderr) -- COMMAND...
expect() {
	local name=$1 want=$2 pat=$3; shift 4
	local out rc
	out=$("$@" 2>&1); rc=$?
	if [ $rc -ne "$want" ]; then bad "$name: exit $rc, expected $want: $(echo "$out" | head -3)"
	elif ! grep -qE -- "$pat" <<<"$out"; then bad "$name: no line matching '$pat' in: $(echo "$out" | head -5)"
	else ok "$name"; fi
}
cd "$T"

# Not an x86-64 program; not an ELF; a missing interpreter.
cp bad_static arm; printf '\x28\x00' | dd of=arm bs=1 seek=18 conv=notrunc status=none
expect "ELF for another machine" 4 "not an x86-64 ELF \(class 2, machine 40\)" -- "$R" run -q --out a ./arm
echo "#!/bin/sh" > script.sh
expect "not an ELF" 4 "script.sh: not an ELF file" -- "$R" run -q --out a ./script.sh
sed 's|/lib64/ld-linux-x86-64.so.2|/lib64/ld-linux-x86-64.so.9|' bad > nointerp; chmod +x nointerp
expect "missing interpreter" 4 "the interpreter /lib64/ld-linux-x86-64.so.9: No such file" -- "$R" run -q --out a ./nointerp
expect "missing program" 4 "no-such-program: No such file" -- "$R" run -q --out a ./no-such-program
[ ! -e a.trace ] && [ ! -e a.sideband ] && ok "nothing written when nothing ran" || bad "files left after a refused program"

# A bad pointer is -EFAULT to the guest (14), not a crash.
expect "EFAULT" 0 "write\(1, 0x8, 16\) = -1 errno 14" -- "$R" run -q --out a ./bad efault

# Writes: only under --writable, never through '..' or a symlink out (the
# guest's own exit status is in the sideband; rtitsim exits 0).
expect "write refused" 0 "open $T/outside.txt for writing: errno 13" -- "$R" run -q --out a ./bad open-write "$T/outside.txt"
[ ! -e outside.txt ] && ok "no file made outside" || bad "a file was made outside --writable"
mkdir w
expect "write allowed" 0 "wrote 21 bytes" -- "$R" run -q --writable w --out a ./bad open-write "$T/w/out.txt"
[ "$(cat w/out.txt 2>/dev/null)" = "written by the guest" ] && ok "the file holds what the guest wrote" || bad "w/out.txt is not what the guest wrote"
expect "escape through .." 0 "errno 13" -- "$R" run -q --writable w --out a ./bad open-write "$T/w/../escaped.txt"
mkdir outdir; ln -s "$T/outdir" w/link
expect "escape through a symlinked directory" 0 "errno 13" -- "$R" run -q --writable w --out a ./bad open-write "$T/w/link/f.txt"
ln -s "$T/target.txt" w/flink
expect "escape through a symlink" 0 "errno 40" -- "$R" run -q --writable w --out a ./bad open-write "$T/w/flink"
[ ! -e escaped.txt ] && [ ! -e outdir/f.txt ] && [ ! -e target.txt ] && ok "no file made through an escape" || bad "a file was made through an escape"
expect "devices refused" 0 "open /dev/zero: refused errno 13" -- "$R" run -q --out a ./bad open-dev

# fork, a fault, a loop: stop with one line, exit 6, outputs decodable.
expect "fork" 6 "bad: the guest did not end normally: the program called clone at 0x[0-9a-f]+: new processes, threads and exec are not modelled" -- "$R" run -q --out f ./bad fork
expect "fork: the trace so far decodes" 0 "" -- "$R" decode f.trace --check f.flow -q
expect "SIGSEGV" 6 "killed by SIGSEGV: #PF \(vector 14\)" -- "$R" run -q --dialect pt --out s ./bad_static segv
expect "SIGSEGV: the trace so far decodes" 0 "" -- "$R" decode s.trace --check s.flow -q
expect "a loop" 6 "instruction budget of 300000 exhausted at 0x[0-9a-f]+; the last system call was write after [0-9]+ instructions" -- "$R" run -q --budget 300000 --out l ./bad loop
expect "a loop: the trace so far decodes" 0 "" -- "$R" decode l.trace --check l.flow -q

# Determinism: random bytes from --seed, time from the simulated clock.
r1=$("$R" run -q --seed 7 --flow none --out r ./bad random 2>/dev/null)
r2=$("$R" run -q --seed 7 --flow none --out r ./bad random 2>/dev/null)
r3=$("$R" run -q --seed 8 --flow none --out r ./bad random 2>/dev/null)
[ "$r1" = "$r2" ] && [ "$r1" != "$r3" ] && ok "getrandom follows --seed ($r1 / $r3)" || bad "getrandom: '$r1' '$r2' '$r3'"
grep -q "time 170406720[0-9]" <<<"$r1" && ok "the realtime clock starts at 2024-01-01" || bad "time: $r1"

# The ENOSYS summary names what the program missed.
expect "ENOSYS summary" 0 "answered ENOSYS \(not modelled\): .*rseq x1" -- "$R" run --flow none --out a ./bad random
# Options.
expect "bad dialect" 1 "--dialect takes rtit or pt" -- "$R" run --dialect arm ./bad
expect "scenario with arguments" 1 "a scenario takes no arguments" -- "$R" run "$S/../../golden/rtit_branches.scn" x
expect "program options on a scenario" 1 "are for a PROGRAM" -- "$R" run --seed 3 "$S/../../golden/rtit_branches.scn"
expect "--bundle of a process" 0 "write\\(1, 0x8, 16\\)" -- "$R" run -q --bundle bdir ./bad efault
[ -s bdir/bad.manifest.json ] && [ -s bdir/bad.files/bad ] && ok "--bundle of a process: its files copied in" ||
	bad "--bundle of a process: no bdir/bad.manifest.json or bdir/bad.files/bad"
expect "--bundle of a failing run: no bundle" 6 "no bundle was written \\(the run failed: exit 6\\)" -- "$R" run -q --bundle fdir ./bad fork
[ -z "$(ls -A fdir 2>/dev/null)" ] && ok "--bundle of a failing run left nothing" || bad "--bundle of a failing run left: $(ls -A fdir)"
expect "--perf-data with RTIT: refused" 4 "perf.data holds Intel PT only" -- "$R" run -q --perf-data pd --out a ./bad efault
expect "--perf-data with Intel PT" 0 "write\\(1, 0x8" -- "$R" run -q --dialect pt --perf-data pd --out a ./bad efault
[ -s pd/perf.data ] && [ -s pd/image.elf ] && ok "--perf-data wrote pd/perf.data" || bad "--perf-data wrote no pd/perf.data"
expect "-- before the program" 0 "write\(1, 0x8, 16\)" -- "$R" run -q --out a -- ./bad efault
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
