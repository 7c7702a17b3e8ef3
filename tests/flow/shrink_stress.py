#!/usr/bin/env python3
"""shrink_stress.py RTITSIM SCENARIO [MAX_TRIES] - a minimal reproduction of
a failing round trip.

SCENARIO fails: `rtitsim run` succeeds but `rtitsim decode --check` does
not give the flow back.  Lines of the scenario (code, events, MSRs,
parameters) are removed, in chunks halving in size (delta debugging), as
long as the result still runs and still fails the same way (the same exit
status of decode).  The smallest scenario found is printed on stdout,
with the commands that show the failure; statistics on stderr.
Deterministic: the same scenario gives the same reduction."""
import os
import subprocess
import sys
import tempfile

rtitsim = sys.argv[1]
lines = open(sys.argv[2]).read().split("\n")
max_tries = int(sys.argv[3]) if len(sys.argv) > 3 else 400
tmp = tempfile.mkdtemp(prefix="rtitsim-shrink-")

# Lines that hold the scenario's frame: never removed.
KEEP = ("name", "describe", "dialect", "cpu", "mode", "code", "end", "end-at",
        "budget", "    .intel_syntax", "    .globl")


def removable(i):
    s = lines[i]
    return s.strip() and not s.startswith(KEEP) and not s.rstrip().endswith(":")


def outcome(keep):
    """The decode exit status of the scenario made of lines[keep], or None
    when it does not run (no trace to decode)."""
    path = os.path.join(tmp, "s.scn")
    with open(path, "w") as f:
        f.write("\n".join(lines[i] for i in keep) + "\n")
    pfx = os.path.join(tmp, "s")
    r = subprocess.run([rtitsim, "run", path, "--out", pfx, "-q"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if r.returncode != 0:
        return None
    r = subprocess.run([rtitsim, "decode", pfx + ".trace", "--check", pfx + ".flow", "-q"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return r.returncode


keep = list(range(len(lines)))
want = outcome(keep)
if not want:
    print("shrink_stress: the scenario does not fail (decode exit %s)" % want, file=sys.stderr)
    sys.exit(2)
tries = 0
chunk = max(1, len([i for i in keep if removable(i)]) // 2)
while chunk >= 1 and tries < max_tries:
    progress = False
    cand = [i for i in keep if removable(i)]
    start = 0
    while start < len(cand) and tries < max_tries:
        drop = set(cand[start:start + chunk])
        trial = [i for i in keep if i not in drop]
        tries += 1
        if outcome(trial) == want:
            keep = trial
            cand = [i for i in keep if removable(i)]
            progress = True
        else:
            start += chunk
    if not progress:
        chunk //= 2

print("# minimal reproduction (%d of %d lines, %d tries): decode --check exits %d"
      % (len(keep), len(lines), tries, want))
print("# reproduce: rtitsim run min.scn --out m && rtitsim decode m.trace --check m.flow")
print("\n".join(lines[i] for i in keep))
