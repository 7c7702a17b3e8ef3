#!/usr/bin/env bash
# test_events_only.sh RTITSIM GOLDEN - Intel PT event trace without branches
# (issue 17 point 6, D84): golden/pt_event_trace.scn with IA32_RTIT_CTL
# EventEn=1 and BranchEn=0 (SDM Table 33-6: bit 13 clear, 0x80000005).
# `rtitsim run --verify` must pass (the decoded CFE records are found in
# the truth, each in a segment of its own), and `rtitsim decode` must say
# that the flow between events is unknown and print no instruction but
# the IRETs its CFE.IRET FUPs name (Table 33-50: CLIP).
set -u
R=$(realpath "$1")
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
sed -e 's/^msr IA32_RTIT_CTL = 0x80002005.*/msr IA32_RTIT_CTL = 0x80000005/' -e '/^expect/,$d' \
	"$2/pt_event_trace.scn" > "$T/s.scn"
grep -q '0x80000005' "$T/s.scn" || { echo "FAIL: the scenario's RTIT_CTL line changed"; exit 1; }
cp "$2"/*.inc "$T/" 2>/dev/null
if out=$(cd "$T" && "$R" run s.scn --out "$T/s" --verify 2>&1); then
	echo "ok   run --verify"
else
	echo "FAIL run --verify: $out"; fails=$((fails + 1))
fi
out=$("$R" decode "$T/s.trace" --image "$T/s.scn" 2>&1)
if grep -q 'flow up to here unknown' <<<"$out" && ! grep '^I ' <<<"$out" | grep -qv ' iret '; then
	echo "ok   decode: events only, the flow between them unknown"
else
	echo "FAIL decode: $out"; fails=$((fails + 1))
fi
n=$(grep -c '^E ' <<<"$out")
[ "$n" -eq 3 ] && echo "ok   3 events (an interrupt, #UD, #PF)" || { echo "FAIL: $n events: $out"; fails=$((fails + 1)); }

# A software interrupt (golden/pt_branches.scn's INT 0x20, events only):
# its CFE.INTR's FUP is the INT's CLIP (SDM Table 33-50), and the decoder
# gives the INT n itself, as the simulator records it (D137); before, an
# event stood where the truth has the instruction and --verify failed.
sed -e 's/^msr IA32_RTIT_CTL = 0x200d.*/msr IA32_RTIT_CTL = 0x80000005/' -e '/^expect/,$d' \
	"$2/pt_branches.scn" > "$T/b.scn"
grep -q '0x80000005' "$T/b.scn" || { echo "FAIL: pt_branches.scn's RTIT_CTL line changed"; exit 1; }
if out=$(cd "$T" && "$R" run b.scn --out "$T/b" --verify 2>&1); then
	echo "ok   INT n, events only: run --verify"
else
	echo "FAIL INT n, events only: run --verify: $out"; fails=$((fails + 1))
fi
out=$("$R" decode "$T/b.trace" --image "$T/b.scn" 2>&1)
if grep -q '^I 0000000000401045 int ' <<<"$out"; then
	echo "ok   INT n, events only: the INT 0x20 at 0x401045"
else
	echo "FAIL INT n, events only: $out"; fails=$((fails + 1))
fi
[ $fails -eq 0 ]
