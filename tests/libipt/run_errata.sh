#!/usr/bin/env bash
# run_errata.sh RTITSIM PTFLOW_CHECK DIR - the Intel PT errata vectors
# (DIR/pt_erratum_*.scn, docs/decisions.md D100-D108) through both
# decoders, each with and without its workarounds:
#   - libipt 2.0.5 (ptflow_check) told the vector's CPU (the sideband's cpu:
#     pt_cpu_errata sets the errata bits) must decode it to the ground truth;
#     rtitsim's flow decoder likewise (`rtitsim decode --check`, its
#     workarounds from the sideband's cpu);
#   - a vector with the erratum on (no _off suffix): libipt with its errata
#     bits cleared (--no-errata) must fail, as the erratum says a decoder
#     would; rtitsim's decoder with `--pt-errata none` must fail (an error or
#     a flow that differs from the truth) where NOWORK_OWN_FAILS lists it
#     (APL12: its decoder is right without the workaround, D106);
#   - a vector with the erratum off (_off): both decode it without the
#     workarounds too;
#   - an erratum of time only (TIME_ONLY: SKL168, D128): libipt's flow is
#     the same with and without its workaround, so instead its time
#     decoder (ptflow_check --time: libipt's TSC at each instruction
#     against the flow's) must report for the vector with the erratum,
#     told the CPU, what it reports for the _off vector, and without its
#     workaround something else;
#   - an erratum whose misdecode libipt does not report (LIBIPT_FEWER:
#     SKD022, D150): without its workaround libipt ends the traced stretch
#     one instruction early (the VMLAUNCH/VMRESUME, whose disable it takes
#     for an asynchronous one before it), which the check's rule (a
#     stretch may end anywhere) lets pass: instead it must decode fewer of
#     the flow's instructions than with the workaround;
#   - an erratum of the packet layer (PACKET_LEVEL: SKZ84, D145): libipt's
#     packet decoder (ptflow_check --packets, as ptdump) told the CPU must
#     read the trace to its end, with an invalid 8-byte packet exactly at
#     each TMA rtitsim's dump (the sideband's errata) marks as the
#     erratum's, and without its workaround stop with an error at the
#     first of them.
set -u
mapfile -t A < <(realpath "$1" "$2" "$3")
R=${A[0]} C=${A[1]} D=${A[2]} T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
NOWORK_OWN_FAILS="pt_erratum_skl014 pt_erratum_apl11 pt_erratum_skd010 pt_erratum_skd007 pt_erratum_bdm64 pt_erratum_skl168"
NOWORK_OWN_FAILS="$NOWORK_OWN_FAILS pt_erratum_skd022"
LIBIPT_FEWER="pt_erratum_skd022"
NOWORK_OWN_FAILS+=" pt_erratum_skz84"
TIME_ONLY="pt_erratum_skl168"
PACKET_LEVEL="pt_erratum_skz84"
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok: $1"; }
bad() { fail=$((fail + 1)); echo "FAIL: $1"; }
for f in "$D"/pt_erratum_*.scn; do
	n=$(basename "$f" .scn)
	if ! out=$("$R" run "$f" --out "$T/$n" -q 2>&1); then
		bad "$n: rtitsim run: $out"; continue
	fi
	if out=$("$C" "$T/$n" "$f" 2>&1); then ok "$n: libipt with the CPU's errata: $out"
	else bad "$n: libipt with the CPU's errata: $out"; fi
	n_on=$(sed -n 's/.*libipt decoded \([0-9]*\) of.*/\1/p' <<<"$out")
	if out=$("$R" decode "$T/$n.trace" --check "$T/$n.flow" -q 2>&1); then
		ok "$n: rtitsim decode with its workarounds"
	else bad "$n: rtitsim decode with its workarounds: $out"; fi
	if [[ " $PACKET_LEVEL " == *" $n "* ]]; then
		want=$("$R" dump --json "$T/$n.trace" 2>/dev/null |
			sed -n 's/^{"offset":\([0-9]*\),.*"skz84":true.*/\1/p' |
			while read -r o; do printf ' invalid(8 bytes) at 0x%x;' "$o"; done)
		first=$(printf '%s' "$want" | sed -n 's/^ invalid(8 bytes) at \(0x[0-9a-f]*\);.*/\1/p')
		p_on=$("$C" "$T/$n" "$f" --packets 2>&1); prc=$?
		[ $prc -eq 0 ] && [ -n "$want" ] && [[ "$p_on" == *":$want "* ]] &&
			ok "$n: libipt's packet decoder with the CPU's errata: $p_on" ||
			bad "$n: libipt's packet decoder with the CPU's errata (exit $prc): $p_on; want$want"
		p_no=$("$C" "$T/$n" "$f" --packets --no-errata 2>&1); prc=$?
		[ $prc -eq 1 ] && [ -n "$first" ] && [[ "$p_no" == *" at $first after "* ]] &&
			ok "$n: libipt's packet decoder without errata fails at $first: $p_no" ||
			bad "$n: libipt's packet decoder without errata must fail at '$first' (exit $prc): $p_no"
	fi
	out=$("$C" "$T/$n" "$f" --no-errata 2>&1); rc=$?
	out2=$("$R" decode "$T/$n.trace" --check "$T/$n.flow" -q --pt-errata none 2>&1); rc2=$?
	case $n in
	*_off)
		[ $rc -eq 0 ] && ok "$n: libipt without errata" || bad "$n: libipt without errata: $out"
		[ $rc2 -eq 0 ] && ok "$n: rtitsim decode without workarounds" ||
			bad "$n: rtitsim decode without workarounds: $out2";;
	*)
		if [[ " $TIME_ONLY " == *" $n "* ]]; then
			"$R" run "$D/${n}_off.scn" --out "$T/${n}_off" -q >/dev/null 2>&1
			t_on=$("$C" "$T/$n" "$f" --time 2>&1); t_on=${t_on##*time: }
			t_no=$("$C" "$T/$n" "$f" --time --no-errata 2>&1); t_no=${t_no##*time: }
			t_off=$("$C" "$T/${n}_off" "$D/${n}_off.scn" --time 2>&1); t_off=${t_off##*time: }
			[ $rc -eq 0 ] && [ "$t_on" = "$t_off" ] && [ "$t_no" != "$t_on" ] &&
				ok "$n: libipt's time with the CPU's errata as without the erratum ($t_on), without them: $t_no" ||
				bad "$n: libipt's time: with errata '$t_on', without '$t_no', the _off vector '$t_off' (flow without errata: exit $rc)"
		elif [[ " $LIBIPT_FEWER " == *" $n "* ]]; then
			n_no=$(sed -n 's/.*libipt decoded \([0-9]*\) of.*/\1/p' <<<"$out")
			[ $rc -eq 0 ] && [ -n "$n_on" ] && [ -n "$n_no" ] && [ "$n_no" -lt "$n_on" ] &&
				ok "$n: libipt without errata misses instructions ($n_no of the flow's, $n_on with them)" ||
				bad "$n: libipt without errata must decode fewer instructions (exit $rc, '$n_no' against '$n_on'): $out"
		else
		[ $rc -eq 1 ] && ok "$n: libipt without errata fails: ${out##*$'\n'}" ||
			bad "$n: libipt without errata must fail (exit 1), exit $rc: $out"
		fi
		if [[ " $NOWORK_OWN_FAILS " == *" $n "* ]]; then
			[ $rc2 -ne 0 ] && ok "$n: rtitsim decode without its workaround fails (exit $rc2)" ||
				bad "$n: rtitsim decode without its workaround must fail"
		else
			[ $rc2 -eq 0 ] && ok "$n: rtitsim decode without its workaround (not needed, D106)" ||
				bad "$n: rtitsim decode without its workaround: $out2"
		fi;;
	esac
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ] && [ $pass -gt 0 ]
