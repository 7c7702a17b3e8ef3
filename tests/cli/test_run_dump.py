#!/usr/bin/env python3
"""test_run_dump.py RTITSIM SRCDIR: `rtitsim run --dump` (issue 22, D120).

For every golden vector with an expect block, of both dialects:
  * each account line keeps its columns (offset or 'dropped', bytes,
    packet, why: the packet column starts at the same place on every
    line, whatever the packet's length);
  * the packets not dropped are, in order, those of the expect block (its
    short forms, full IPs: a line with a name alone matches any fields,
    docs/scenario.md), at the trace offsets that golden/expected/NAME.dump.txt
    (`rtitsim dump` of the trace) gives;
  * the summary line counts as many packets as the expect block has.
For the overflow vectors, packets are listed as dropped before the packet
that ends the overflow (RTIT FUP.BuffOvf, 4.2.5; Intel PT OVF, 33.3.8).
Erratum E8's vector is left out (its packets leave in another order than
the encoder made them: D120, docs/explain.md), and so is Intel PT erratum
SKD007's (its cut CYC and the OVF read in byte order as two CYCs, which
its expect block lists, while the encoder made a CYC and an OVF: D109).
"""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from expect_block import expect_lines, short_matches  # noqa: E402

R, SRC = sys.argv[1], sys.argv[2]
GOLDEN = os.path.join(SRC, "golden")
LINE = re.compile(r"^  ([0-9a-f]{8}|dropped ) {2}(.{23}) {2}(\S.{29}) (.*)$")
fails = []




def check(ok, what):
    if not ok:
        fails.append(what)
        print("FAIL " + what)


tmp = tempfile.mkdtemp()
n = 0
for f in sorted(os.listdir(GOLDEN)):
    if not f.endswith(".scn") or f.startswith("rtit_e8") or f == "pt_erratum_skd007.scn":
        continue
    name = f[:-4]
    exp = expect_lines(os.path.join(GOLDEN, f))
    if not exp:
        continue
    n += 1
    r = subprocess.run([R, "run", os.path.join(GOLDEN, f), "-o", os.path.join(tmp, name),
                        "--dump"], capture_output=True, text=True)
    check(r.returncode == 0, "%s: exit %d %s" % (name, r.returncode, r.stderr.strip()))
    acct = [l for l in r.stdout.splitlines() if l.startswith("  ") and not l.startswith("  offset")]
    parsed = [LINE.match(l) for l in acct]
    bad = [l for l, m in zip(acct, parsed) if not m]
    check(not bad, "%s: lines out of their columns: %s" % (name, bad[:2]))
    sent = [m for m in parsed if m and m.group(1) != "dropped "]
    got = [m.group(3).rstrip() for m in sent]
    check(len(got) == len(exp) and all(short_matches(w, g) for w, g in zip(exp, got)),
          "%s: the packets are not the expect block's: %s" %
          (name, [(w, g) for w, g in zip(exp, got) if not short_matches(w, g)][:2] or (len(got), len(exp))))
    offs = [int(l.split()[0], 16) for l in open(os.path.join(GOLDEN, "expected", name + ".dump.txt"))
            if re.match(r"^[0-9a-f]{8} ", l)]
    check([int(m.group(1), 16) for m in sent] == offs, "%s: offsets differ from rtitsim dump's" % name)
    summ = re.search(r"-> (\d+) packets", r.stdout)
    check(summ and int(summ.group(1)) == len(exp),
          "%s: the summary counts %s packets, the expect block %d" %
          (name, summ.group(1) if summ else "?", len(exp)))
    if "overflow" in name and "tracestop" not in name:
        kinds = [m.group(1) == "dropped " or m.group(3).split()[0] for m in parsed if m]
        end = next((i for i, k in enumerate(kinds) if k in ("FUP.BuffOvf", "OVF")), None)
        check(end is not None and True in kinds[:end],
              "%s: no packet listed as dropped before the overflow's end" % name)
print("run --dump: %d vectors, %d failures" % (n, len(fails)))
sys.exit(1 if fails else 0)
