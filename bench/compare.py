#!/usr/bin/env python3
"""compare.py - the benchmarks of two builds, run alternately, with ratios.

    bench/compare.py [--rounds N] [--only NAME,...] BASE_BUILD NEW_BUILD

BASE_BUILD and NEW_BUILD are meson build directories of two revisions
(bench/compare.sh REV makes the one of REV).  Each benchmark runs N times
(default 5) in each build, base and new alternating, so that a change in
the machine's load hits both alike.  For every output line the two builds
print with the same words, each number is the median of its N runs; the
line is printed with the new medians, then the ratio new/base of each
number ("1.00x" is unchanged; for rates, more is faster).  Lines whose
words differ between the builds are listed once, unpaired.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

BENCHES = {  # name: path in a build directory
    "encoder": "bench/encoder/bench-encoder",
    "pktdec": "bench/packet/bench_pktdec",
    "flow": "bench/flow/bench-flow",
    "sim": "bench/sim/bench_sim",
}
NUM = re.compile(r"-?\d+(?:\.\d+)?")


def run(path):
    p = subprocess.run([path], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=900)
    if p.returncode != 0:
        sys.exit(f"compare.py: {path} exited {p.returncode}:\n{p.stdout[-2000:]}")
    return p.stdout.splitlines()


def key(line):
    return NUM.sub("#", line)


def medians(outputs):
    """{line key: (line of the first run, [median of each number])}"""
    table = {}
    for out in outputs:
        seen = {}
        for line in out:
            nums = [float(x) for x in NUM.findall(line)]
            if not nums:
                continue
            k = key(line)
            # the n-th line of the same words is its own entry
            seen[k] = seen.get(k, 0) + 1
            k = (k, seen[k])
            table.setdefault(k, (line, []))[1].append(nums)
    res = {}
    for k, (line, runs) in table.items():
        n = min(len(r) for r in runs)
        res[k] = (line, [statistics.median(r[i] for r in runs) for i in range(n)])
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--only", default="encoder,pktdec,flow")
    ap.add_argument("base")
    ap.add_argument("new")
    a = ap.parse_args()
    for name in a.only.split(","):
        rel = BENCHES[name]
        paths = [os.path.join(a.base, rel), os.path.join(a.new, rel)]
        if not all(os.access(p, os.X_OK) for p in paths):
            print(f"== {name}: not built in both builds, skipped")
            continue
        outs = ([], [])
        for _ in range(a.rounds):
            for i in (0, 1):
                outs[i].append(run(paths[i]))
        base, new = medians(outs[0]), medians(outs[1])
        print(f"== {name}: medians of {a.rounds} alternating runs; new, then new/base")
        for k, (line, nums) in new.items():
            if k not in base:
                print(f"   (new only) {line.strip()}")
                continue
            b = base[k][1]
            ratios = " ".join(f"{x / y:.2f}x" if y else "-" for x, y in zip(nums, b))
            it = iter(nums)
            shown = NUM.sub(lambda m: f"{next(it):g}", line.rstrip())
            print(f"   {shown}    [{ratios}]")
        for k, (line, _) in base.items():
            if k not in new:
                print(f"   (base only) {line.strip()}")


if __name__ == "__main__":
    main()
