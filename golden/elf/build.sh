#!/bin/sh
# Rebuilds the ELF programs some golden scenarios load with `code elf`
# (committed, so the vectors do not depend on the local binutils; see
# docs/scenario.md "Determinism").  Run from anywhere; check the result
# with `rtitsim golden verify golden` before committing a new build.
set -eu
cd "$(dirname "$0")"
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
# lip.elf: code at 0x8000, 0x401000, 0x7f1234560000 and 0x7f1234a70000, so
# every row of RTIT Table 18 (and PT Table 33-18 IPBytes 001-011) occurs.
as --64 -o "$t/lip.o" lip.s
ld -static -T lip.ld -z noexecstack -z max-page-size=0x1000 -o lip.elf "$t/lip.o"
