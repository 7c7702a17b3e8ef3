#!/usr/bin/env bash
# run_ptflow_stress.sh RTITSIM PTFLOW_CHECK GEN FIRST LAST - the property
# test's Intel PT scenarios through libipt.  For seeds FIRST..LAST,
# `gen_stress.py SEED pt libipt` (the seed's program and trace
# configuration without what libipt 2.0.5 predates: Event Trace, PEBS
# blocks, enclaves, VM exits; docs/decisions.md D61) runs through `rtitsim
# run`; rtitsim's own decoder must give back the flow (`rtitsim decode
# --check`), and libipt's instruction-flow decoder (ptflow_check) must list
# only instructions of the flow, in its order, with no error but the
# libipt limits ptflow_check names.  Over all seeds libipt must match at
# least 85% as many instructions as rtitsim's decoder recovers, so that a
# libipt that stops early or loses stretches the stream describes fails
# (on seeds 1-200 it matches 94%, D61).
set -u
. "$(dirname "$0")/../common/python.sh"
R=$(realpath "$1")
C=$(realpath "$2")
G=$3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0 total=0 own_total=0 no_mode=0
for ((s = $4; s <= $5; s++)); do
	"$PY" "$G" $s pt libipt > "$T/s.scn"
	if ! "$R" run "$T/s.scn" --out "$T/s" -q >/dev/null 2>"$T/run.err"; then
		fail=$((fail + 1)); echo "FAIL: seed $s: rtitsim run: $(head -3 "$T/run.err")"; continue
	fi
	if ! "$R" decode "$T/s.trace" --check "$T/s.flow" --stats -q 2>"$T/dec.err"; then
		fail=$((fail + 1)); echo "FAIL: seed $s: rtitsim decode: $(head -5 "$T/dec.err")"; continue
	fi
	own=$(grep -oE 'decoded [0-9]+ instructions' "$T/dec.err" | grep -oE '[0-9]+')
	own=${own:-0}
	# The instructions of rtitsim's flow that libipt lists: not an INT n
	# or ENCLU, which libipt takes as the event its FUP names, nor the
	# instruction right before an overflow or the trace's end, whose
	# event libipt takes first (D61).  With none, libipt may decode
	# nothing (D212).
	listable=$("$R" decode "$T/s.trace" 2>/dev/null | awk '
		/^I / { if (p) n++; p = $3 != "int" && $3 != "enclu"; next }
		/^# (overflow|end)/ { p = 0; next }
		{ if (p) n++; p = 0 }
		END { if (p) n++; print n + 0 }')
	empty=""
	[ "${listable:-0}" -eq 0 ] && empty=--may-be-empty
	if out=$("$C" "$T/s" "$T/s.scn" $empty 2>&1); then
		pass=$((pass + 1))
		n=$(echo "$out" | grep -oE 'decoded [0-9]+ of' | grep -oE '[0-9]+')
		total=$((total + ${n:-0}))
		own_total=$((own_total + own))
		case "$out" in
		*"no execution mode"*) no_mode=$((no_mode + 1));;
		esac
		case "$out" in
		*"not checked"*|*"not listed"*) echo "seed $s (rtitsim: $own): ${out#*: }";;
		esac
	else
		fail=$((fail + 1)); echo "FAIL: seed $s (rtitsim's decoder: $own instructions): $out"
		echo "  reproduce: python3 $G $s pt libipt > s.scn; rtitsim run s.scn --out s; ptflow_check s s.scn"
	fi
done
echo "libipt matched $total instructions, rtitsim's decoder $own_total; $no_mode seeds where libipt had no execution mode"
if [ $((total * 100)) -lt $((own_total * 85)) ] || [ "$total" -eq 0 ]; then
	fail=$((fail + 1)); echo "FAIL: libipt matched under 85% of what rtitsim's decoder recovered"
fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
