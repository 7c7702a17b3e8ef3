#!/usr/bin/env bash
# run_perf_mutations.sh RTITSIM PERF_CHECK PERF GOLDEN -
# the perf check must be able to fail: one trace byte changed, or one
# instruction of the flow moved, must make perf_check exit 1 (and the
# unchanged vector pass).  Skipped (77) without perf.
set -u
. "$(dirname "$0")/perf_lib.sh"
perf_setup "$@"
fail=0
# expect NAME WANT_EXIT WHAT [OFFSET BYTE | --mutate-flow N]
expect() {
	local n=$1 want=$2 what=$3 o="$T/$1.$RANDOM" out rc
	shift 3
	local mut=() args=()
	if [ "${1:-}" = "--mutate-flow" ]; then args=("$@"); else mut=("$@"); fi
	if ! out=$(perf_decode "$D/$n.scn" "$o" "${mut[@]}"); then
		echo "FAIL: $n ($what): $out"; fail=1; return
	fi
	out=$("$C" "$o/run" "$o/script.txt" --events "$o/events.txt" "${args[@]}" 2>&1)
	rc=$?
	if [ $rc -ne "$want" ]; then
		echo "FAIL: $n ($what): perf_check exits $rc, not $want: ${out//$T\//}"; fail=1
	else
		echo "ok: $n ($what): exit $rc: $(echo "${out//$T\//}" | head -1)"
	fi
}
# pt_branches: TNT at 0x25 is 1c (taken, taken, not taken); 16 says
# taken, not taken, taken
expect pt_branches 0 "unchanged"
expect pt_branches 1 "trace byte 0x25 TNT 1c -> 16" 0x25 0x16
# its TIP at 0x26 (2d 40 10) to 0x401041: one byte into the CALL
expect pt_branches 1 "trace byte 0x27 TIP IP 40 -> 41" 0x27 0x41
expect pt_branches 1 "flow instruction 5's IP + 1" --mutate-flow 5
# not-libipt vectors: Event Trace (MODE.Exec at 0x1e: 99 01, its TIP.PGE
# 51 00 10 40 00: the IP byte 0x22 10 -> 11 sends 0x401100), PEBS (the
# BEP at 0x6a, 02 b3, made 02 b2: not a packet)
expect pt_event_trace 0 "unchanged"
expect pt_event_trace 1 "trace byte 0x22 TIP.PGE IP 10 -> 11" 0x22 0x11
expect pt_event_trace 1 "flow instruction 9's IP + 1" --mutate-flow 9
# the flow of instructions unchanged, Event Trace not: CFE.INTR at 0x34
# (02 13 01 20) with vector 0x21; the CLI's MODE.Exec at 0x2a (99 01)
# saying IF=1 (99 05)
expect pt_event_trace 1 "trace byte 0x37 CFE.INTR vector 20 -> 21" 0x37 0x21
expect pt_event_trace 1 "trace byte 0x2b MODE.Exec IF 01 -> 05" 0x2b 0x05
expect pt_pebs 0 "unchanged"
expect pt_pebs 1 "trace byte 0x6b BEP b3 -> b2" 0x6b 0xb2
expect pt_pebs 1 "flow instruction 12's IP + 1" --mutate-flow 12
# the first record's Instruction Pointer BIP at 0x28 (04 0c 10 40 ...)
# saying 0x40100d
expect pt_pebs 1 "trace byte 0x29 BIP eventing IP 0c -> 0d" 0x29 0x0d
[ $fail -eq 0 ]
