#!/usr/bin/env bash
# compare.sh REV [compare.py options] - the benchmarks of revision REV
# against the working tree's build/, run alternately (bench/compare.py).
# REV is built once in a worktree under /tmp (kept for the next call).
set -euo pipefail
cd "$(dirname "$0")/.."
rev=$(git rev-parse --short "$1"); shift
wt=/tmp/rtitsim-bench-$rev
[ -d "$wt" ] || git worktree add -q --detach "$wt" "$rev"
[ -f "$wt/build/build.ninja" ] || meson setup "$wt/build" "$wt" >/dev/null
ninja -C "$wt/build" >/dev/null
./dev setup >/dev/null 2>&1 || true
ninja -C build >/dev/null
exec python3 bench/compare.py "$@" "$wt/build" build
