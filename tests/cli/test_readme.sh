#!/usr/bin/env bash
# test_readme.sh RTITSIM SRCDIR - the README's quick examples ("Using
# it") run as written (issue 19): each line of the block, in a scratch
# directory holding the source tree's golden/ and docs/ and the built
# rtitsim at build/cli/rtitsim, must exit 0.  Lines running `perf` are
# left out when perf is not installed.
set -u
R=$(realpath "$1")
S=$(realpath "$2")
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
ln -s "$S/golden" golden
ln -s "$S/docs" docs
ln -s "$S/tests" tests
mkdir -p build/cli
ln -s "$R" build/cli/rtitsim
pass=0 fail=0
block=$(sed -n '/^## Using it/,/^## /p' "$S/README.md" | sed -n '/^```sh$/,/^```$/p' | sed '1d;$d')
[ "$(printf '%s\n' "$block" | grep -c .)" -ge 15 ] || { echo "FAIL: the README block not found"; exit 1; }
while IFS= read -r line; do
	[ -n "$line" ] || continue
	cmd=$(printf '%s' "$line" | sed 's/[[:space:]]\+#.*$//')
	case "$cmd" in
	perf\ *) command -v perf >/dev/null 2>&1 || { echo "skipped (no perf): $cmd"; continue; } ;;
	esac
	if bash -c "$cmd" >"$T/out" 2>"$T/err"; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL: '$cmd' exited $?: $(head -3 "$T/err")"
	fi
done <<<"$block"
echo "readme: $pass passed, $fail failed"
[ $fail -eq 0 ]
