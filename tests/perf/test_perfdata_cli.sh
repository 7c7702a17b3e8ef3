#!/usr/bin/env bash
# test_perfdata_cli.sh RTITSIM GOLDEN KERNEL_DIR - `rtitsim perf-data`
# without perf: what it writes (the ELF and perf.data magic numbers, one
# PT_LOAD per image region) and how it fails (exit statuses of
# rtitsim(1), one line, no file left behind).
set -u
R=$(realpath "$1"); G=$(realpath "$2"); K=$(realpath "$3")
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fail=0
check() {	# check WHAT WANT_EXIT GOT_EXIT
	if [ "$2" != "$3" ]; then echo "FAIL: $1: exit $3, want $2"; fail=1; else echo "ok: $1"; fi
}
cd "$T"
"$R" run "$G/pt_branches.scn" --out pt -q || { echo "FAIL: run"; exit 1; }
mkdir out
"$R" perf-data pt out; check "Intel PT run" 0 $?
# perf_file_header.magic "PERFILE2" (tools/perf/util/header.h); ELF magic
[ "$(head -c 8 out/perf.data)" = "PERFILE2" ] || { echo "FAIL: perf.data magic"; fail=1; }
[ "$(head -c 4 out/image.elf | tail -c 3)" = "ELF" ] || { echo "FAIL: image.elf magic"; fail=1; }
ls out/*.tmp >/dev/null 2>&1 && { echo "FAIL: a temporary file is left"; fail=1; }

"$R" run "$G/rtit_psb_pkt_cnt.scn" --out rtit -q || { echo "FAIL: run rtit"; exit 1; }
mkdir out2
err=$("$R" perf-data rtit out2 2>&1); check "RTIT run" 4 $?
echo "  $err"
[ -z "$(ls out2)" ] || { echo "FAIL: files written for an RTIT run"; fail=1; }
"$R" perf-data nosuch out2 2>/dev/null; check "no sideband" 2 $?
"$R" perf-data pt nosuchdir 2>/dev/null; check "no output directory" 2 $?
"$R" perf-data pt 2>/dev/null; check "one argument" 1 $?

kpt=$(ls "$K"/pt*.scn | head -1)
"$R" run "$kpt" --out k -q || { echo "FAIL: run $kpt"; exit 1; }
err=$("$R" perf-data k out2 2>&1); check "kernel-half code" 4 $?
echo "  $err"
case $err in *"code at 0xffffffff81"*"kernel address"*) ;; *) echo "FAIL: the message names no kernel address"; fail=1;; esac
[ -z "$(ls out2)" ] || { echo "FAIL: files written for a kernel image"; fail=1; }
exit $fail
