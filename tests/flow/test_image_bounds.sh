#!/usr/bin/env bash
# test_image_bounds.sh RTITSIM - only the bytes an image file provides are
# code (D74, issue 17 point 1).  A hand-made Intel PT stream (SDM 33.4.2:
# PSB 02 82 x 8, PSBEND 02 23, TIP.PGE with IPBytes 011b = 71 and IP
# 0x1000, a TNT-8 with one bit, 04) over a flat image at 0x1000: the walk
# from 0x1000 goes past the image's last byte before it reaches a branch
# for the TNT bit.  The decoder must report "no memory mapped" at the
# first byte the image does not have, exit 3, and print no instruction
# (the walk ended in an error: what it walked is dropped, D28).
set -u
R=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
printf '\002\202\002\202\002\202\002\202\002\202\002\202\002\202\002\202\002\043\161\000\020\000\000\000\000\004' > "$T/t.pt"
check() {	# NAME IMAGE-BYTES WANT-MESSAGE
	printf "$2" > "$T/img.bin"
	out=$("$R" decode "$T/t.pt" --dialect pt --image "$T/img.bin@0x1000" 2>"$T/err")
	rc=$?
	if [ $rc -ne 3 ]; then echo "FAIL $1: exit $rc, want 3"; fails=$((fails + 1)); return; fi
	if ! grep -q "$3" <<<"$out"; then echo "FAIL $1: no '$3' in: $out"; fails=$((fails + 1)); return; fi
	if grep -q '^I ' <<<"$out"; then echo "FAIL $1: printed instructions: $out"; fails=$((fails + 1)); return; fi
	echo "ok   $1"
}
# seven NOPs: the flow leaves the image at 0x1007
check "a 7-byte image" '\220\220\220\220\220\220\220' 'no memory mapped at 0x1007'
# six NOPs and the first two bytes of MOV RAX,[RAX] (48 8B 00): the
# instruction at 0x1006 is cut by the image's end
check "an image that ends mid-instruction" '\220\220\220\220\220\220\110\213' 'no memory mapped at 0x1008: the instruction at 0x1006'
# and the same stream over an image with the branch: decodes cleanly
printf '\220\220\220\220\220\220\220\164\000\364' > "$T/img.bin"	# 7 NOPs, JZ +0, HLT
if out=$("$R" decode "$T/t.pt" --dialect pt --image "$T/img.bin@0x1000" 2>&1) &&
   grep -q '^I 0000000000001007 cond' <<<"$out"; then echo "ok   the image with its branch decodes"
else echo "FAIL the image with its branch: $out"; fails=$((fails + 1)); fi
[ $fails -eq 0 ]
