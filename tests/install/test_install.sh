#!/usr/bin/env bash
# test_install.sh SRCDIR BUILDDIR - what `meson install` puts in place is
# usable as a decoder author uses it: installs into a temporary directory
# (--destdir), builds docs/examples/decode_vector.c against that tree with
# `pkg-config --cflags --libs rtitsim-decode` alone, runs it on golden
# vectors of both dialects and compares its output with the vectors'
# expected files (the packets with NAME.dump.txt, the instruction IPs with
# NAME.flow.txt); checks that the decoding library does not link Unicorn
# (its dynamic section), that the pkg-config version is `rtitsim
# --version`'s, and that the man page and headers are there.
set -u
SRC=$1 BUILD=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
ok()  { echo "ok   $1"; }
bad() { echo "FAIL $1"; fails=$((fails + 1)); }

D=$T/root
if ! meson install -C "$BUILD" --destdir "$D" --no-rebuild --quiet >"$T/install.log" 2>&1; then
	cat "$T/install.log"
	echo "FAIL meson install --destdir"
	exit 1
fi
ok "meson install --destdir"

pc=$(find "$D" -name rtitsim-decode.pc | head -1)
[ -n "$pc" ] && ok "rtitsim-decode.pc installed" || { bad "no rtitsim-decode.pc"; exit 1; }
export PKG_CONFIG_SYSROOT_DIR=$D PKG_CONFIG_PATH=$(dirname "$pc")
flags=$(pkg-config --cflags --libs rtitsim-decode) || { bad "pkg-config rtitsim-decode"; exit 1; }
libdir=$(pkg-config --variable=libdir rtitsim-decode)
libdir=$D${libdir#"$D"}

# The decoding library links no Unicorn (its NEEDED entries).
so=$(ls "$libdir"/librtitsim-decode.so.* 2>/dev/null | head -1)
if [ -z "$so" ]; then bad "no librtitsim-decode.so"
elif readelf -d "$so" | grep NEEDED | grep -qi unicorn; then bad "librtitsim-decode links Unicorn: $(readelf -d "$so" | grep NEEDED | tr -s ' ')"
else ok "librtitsim-decode.so needs no Unicorn ($(readelf -d "$so" | grep -c NEEDED) NEEDED: $(readelf -d "$so" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | tr '\n' ' '))"; fi
[ -f "$libdir/librtitsim-decode.a" ] && ok "static library installed" || bad "no librtitsim-decode.a"
! grep -qi unicorn "$pc" && ok "rtitsim-decode.pc names no Unicorn" || bad "rtitsim-decode.pc names Unicorn"

# One version: pkg-config, version.h and rtitsim --version.
exe=$(find "$D" -path '*/bin/rtitsim' | head -1)
v=$(pkg-config --modversion rtitsim-decode)
if [ -n "$exe" ] && [ "$("$exe" --version)" = "rtitsim $v" ] &&
   grep -q "RTITSIM_VERSION_STRING \"$v\"" "$(find "$D" -name version.h | head -1)"; then
	ok "one version: $v"
else bad "versions differ: pc $v, exe '$("$exe" --version 2>&1)'"; fi
[ -n "$(find "$D" -name rtitsim.1)" ] && ok "man page rtitsim(1)" || bad "no man page"

# The example, built with the installed tree alone.
if cc -std=c11 -Wall -Wextra -Werror -o "$T/decode_vector" "$SRC/docs/examples/decode_vector.c" $flags 2>"$T/cc.log"; then
	ok "docs/examples/decode_vector.c builds with pkg-config"
else
	cat "$T/cc.log"; bad "the example does not build"; exit 1
fi
for v in rtit_lip_compression pt_ip_full; do
	stem=$SRC/golden/expected/$v
	if ! LD_LIBRARY_PATH=$libdir "$T/decode_vector" "$stem" "$SRC/golden/elf/lip.elf" >"$T/$v.out" 2>"$T/$v.err"; then
		bad "$v: the example failed: $(head -3 "$T/$v.err" "$T/$v.out" | tr '\n' ' ')"
		continue
	fi
	grep -v '^[IE#] ' "$T/$v.out" > "$T/$v.pkts"
	if cmp -s "$T/$v.pkts" "$stem.dump.txt"; then ok "$v: the packets are $v.dump.txt"
	else bad "$v: the packets differ from $v.dump.txt"; diff "$T/$v.pkts" "$stem.dump.txt" | head -5; fi
	grep '^[IE] ' "$T/$v.out" > "$T/$v.ips"
	awk '$1 == "I" || $1 == "E" { print $1, $2 }' "$stem.flow.txt" > "$T/$v.want"
	if [ -s "$T/$v.want" ] && cmp -s "$T/$v.ips" "$T/$v.want"; then
		ok "$v: the flow is $v.flow.txt's $(wc -l < "$T/$v.want") records"
	else bad "$v: the flow differs from $v.flow.txt"; diff "$T/$v.ips" "$T/$v.want" | head -5; fi
done
[ "$fails" -eq 0 ] && echo "install: all checks passed" || echo "install: $fails check(s) failed"
[ "$fails" -eq 0 ]
