#!/usr/bin/env bash
# run_check.sh RTITSIM PTXED_LINES SRCDIR - `rtitsim check` (issue 19):
#  * libipt: every Intel PT bundle libipt 2.0.5 can read (no `# not-libipt`
#    line in its scenario) decoded by ptxed_lines, run from the bundle's
#    directory with the manifest's `ptxed` line as written (ptxed_lines in
#    ptxed's place), agrees (exit 0);
#  * perf (when installed): `rtitsim perf-data` of each bundle perf reads,
#    `perf script --itrace=i0ns -F ip` and `--itrace=b -F ip,addr` agree;
#  * rtitsim's own JSON and a plain IP list agree;
#  * events are compared fully (D136): one event of the JSON or of
#    ptxed's output changed (its vector, next IP, kind), the count the
#    same, is a difference named at that event;
#  * mutations must fail: an IP changed, an instruction left out, one
#    added in the middle, the output empty (exit 5); a line that is no
#    output of the format (exit 4); a trace byte changed in a copy of the
#    bundle (the reference no longer gives the truth back: exit 4, or 5).
set -u
R=$(realpath "$1")
X=$(realpath "$2")
S=$(realpath "$3")
G=$S/golden/expected
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
expect() {	# STATUS WHAT BUNDLE OUTPUT [OPTIONS]
	local want=$1 what=$2; shift 2
	"$R" check "$@" >"$T/out" 2>"$T/err"
	local rc=$?
	if [ $rc -eq "$want" ]; then ok
	else bad "$what: exit $rc, expected $want: $(head -3 "$T/err") $(tail -1 "$T/out")"; fi
}
ptxed_line() {	# the manifest's libipt.ptxed string
	sed -n 's/.*"ptxed": "\(.*\)"}.*/\1/p' "$1"
}

n=0
for m in "$G"/pt_*.manifest.json; do
	v=$(basename "$m" .manifest.json)
	grep -q '^# not-libipt' "$S/golden/$v.scn" && continue
	line=$(ptxed_line "$m")
	[ -n "$line" ] || { bad "$v: no ptxed line in the manifest"; continue; }
	# --event:ip: ptxed's events with their IPs, compared too (D136)
	(cd "$G" && $X ${line#ptxed } --event:ip) >"$T/$v.ptxed" 2>"$T/err" || bad "$v: ptxed_lines: $(cat "$T/err")"
	expect 0 "$v (libipt)" "$G/$v" "$T/$v.ptxed"
	n=$((n + 1))
done
[ $n -ge 25 ] && ok || bad "only $n bundles checked with libipt"

# mutations of libipt's output for pt_long_tnt (120+ instructions)
v=pt_long_tnt
P=$T/$v.ptxed
ins=$(grep -n '^[0-9a-f]\{16\} ' "$P" | sed -n '40p' | cut -d: -f1)
sed "${ins}s/^\(.\{13\}\)\(.\)/\1f/" "$P" >"$T/m1"
expect 5 "an IP changed" "$G/$v" "$T/m1"
sed "${ins}d" "$P" >"$T/m2"
expect 5 "an instruction left out" "$G/$v" "$T/m2"
sed "${ins}p" "$P" >"$T/m3"
expect 5 "an instruction repeated" "$G/$v" "$T/m3"
: >"$T/m4"
expect 5 "empty output" "$G/$v" "$T/m4" --format ptxed
printf '0000000000401000  90\nnot an instruction\n' >"$T/m5"
expect 4 "a line not of the format" "$G/$v" "$T/m5"
grep -q 'the decoder differs at instruction' "$T/err" || true

# rtitsim's JSON and an IP list, with their mutations
"$R" decode "$G/pt_tsx" --json >"$T/j" 2>/dev/null
expect 0 "JSON" "$G/pt_tsx" "$T/j"
sed -n 's/.*"kind":"insn","ip":"\(0x[0-9a-f]*\)".*/\1/p' "$T/j" >"$T/ips"
expect 0 "IP list" "$G/pt_tsx" "$T/ips"
sed '3d' "$T/ips" >"$T/ips2"
expect 5 "IP list, one left out" "$G/pt_tsx" "$T/ips2"
grep -v '"kind":"event"' "$T/j" | head -n -1 >"$T/j2"
grep -q '"kind":"event"' "$T/j" && expect 5 "JSON without its events" "$G/pt_tsx" "$T/j2"
"$R" decode "$G/rtit_table19_branches" --json >"$T/jr" 2>/dev/null
expect 0 "RTIT JSON" "$G/rtit_table19_branches" "$T/jr"

# events compared fully (D136): one event changed, the count the same,
# must be a difference named at that event with its trace offset
evdiff() {	# WHAT BUNDLE FILE SED-SCRIPT
	local what=$1 b=$2 f=$3
	sed "$4" "$f" >"$T/ev"
	if cmp -s "$f" "$T/ev"; then bad "$what: the mutation changed nothing"; return; fi
	expect 5 "$what" "$b" "$T/ev"
	grep -q 'differs at event .*expected .* got ' "$T/err" && grep -q 'trace offset 0x' "$T/err" &&
		ok || bad "$what: not named at the event: $(head -2 "$T/err")"
}
evdiff "JSON, an event's vector changed" "$G/pt_tsx" "$T/j" \
	'0,/"event":"interrupt"/s/"vector":32/"vector":33/'
evdiff "JSON, an event's IP changed" "$G/pt_tsx" "$T/j" \
	'0,/"event":"exception"/s/\("event":"exception".*\)"next":"0x401090"/\1"next":"0x401091"/'
evdiff "JSON, an event's kind changed" "$G/pt_tsx" "$T/j" '0,/"event":"interrupt"/s//"event":"nmi"/'
# RTIT: the decode establishes no event in the vectors (their events are
# in the ground truth only); an event added is one the trace does not give
sed '5a {"kind":"event","ip":"0x401005","event":"interrupt","next":"0x401100","vector":32}' \
	"$T/jr" >"$T/jr2"
expect 5 "RTIT JSON, an event added" "$G/rtit_table19_branches" "$T/jr2"
grep -q 'an event the trace does not establish (its line 6)' "$T/err" && ok ||
	bad "RTIT JSON, an event added: not named: $(head -2 "$T/err")"
evdiff "ptxed, an interrupt's target changed" "$G/pt_tsx" "$T/pt_tsx.ptxed" \
	's/to: 0000000000401080/to: 0000000000401081/'
evdiff "ptxed, an abort turned into an interrupt" "$G/pt_tsx" "$T/pt_tsx.ptxed" \
	'0,/^\[aborted/s/^\[aborted, ip: \(.*\)\]/[interrupt, from: \1]/'

# a trace byte changed in a copy of the bundle
mkdir "$T/b"
cp "$G"/pt_long_tnt.* "$T/b/"
printf '\x00' | dd of="$T/b/pt_long_tnt.trace" bs=1 seek=40 conv=notrunc 2>/dev/null
"$R" check "$T/b/pt_long_tnt" "$P" >/dev/null 2>&1
rc=$?
[ $rc -eq 4 ] || [ $rc -eq 5 ] && ok || bad "a changed trace byte: exit $rc"

# perf: its instructions and its branches
if command -v perf >/dev/null 2>&1 && perf version >/dev/null 2>&1; then
	np=0
	for m in "$G"/pt_*.manifest.json; do
		v=$(basename "$m" .manifest.json)
		grep -q '^# not-perf' "$S/golden/$v.scn" && continue
		# perf stops listing instructions at pt_table55_far's MOV CR3
		# (its PIP): a difference check reports, not a failure of check
		[ "$v" = pt_table55_far ] && continue
		rm -rf "$T/pd"
		mkdir "$T/pd"
		# ADDRn filters the bundle's ELF alone cannot place (perf-data's
		# limit): those vectors are left out
		"$R" perf-data "$G/$v" "$T/pd" --image "$G/$v.elf" >/dev/null 2>&1 || continue
		(cd "$T/pd" && perf script -i perf.data --itrace=i0ns -F ip) >"$T/pi" 2>/dev/null
		expect 0 "$v (perf --itrace=i0ns -F ip)" "$G/$v" "$T/pi"
		(cd "$T/pd" && perf script -i perf.data --itrace=b -F ip,addr) >"$T/pb" 2>/dev/null
		expect 0 "$v (perf --itrace=b)" "$G/$v" "$T/pb"
		np=$((np + 1))
	done
	[ $np -ge 20 ] && ok || bad "only $np bundles checked with perf"
	# a branch target changed (pt_branches: its second real branch)
	rm -rf "$T/pd"
	mkdir "$T/pd"
	"$R" perf-data "$G/pt_branches" "$T/pd" --image "$G/pt_branches.elf" >/dev/null 2>&1
	(cd "$T/pd" && perf script -i perf.data --itrace=b -F ip,addr) >"$T/pb" 2>/dev/null
	k=$(grep -n '^ *[1-9a-f][0-9a-f]* => *[1-9a-f]' "$T/pb" | sed -n '2p' | cut -d: -f1)
	sed "${k}s/=> *\([0-9a-f]*\)/=> 1\1/" "$T/pb" >"$T/pb2"
	expect 5 "perf branches, a target changed" "$G/pt_branches" "$T/pb2"
else
	echo "perf not installed: its part skipped"
fi

echo "check: $pass passed, $fail failed"
[ $fail -eq 0 ]
