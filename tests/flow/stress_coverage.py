#!/usr/bin/env python3
"""stress_coverage.py DIALECT < DUMPS - the packet forms the property test's
random streams reached, from `rtitsim dump` lines: packet types, the IP
compression used (RTIT Table 18: CNT/Zext, 4.2.3.1; Intel PT Table 33-18:
IPBytes), TNT lengths (RTIT Figure 4; Intel PT TNT-8 and Long TNT,
33.4.2.1) and cycle-packet sizes (RTIT CCP, 4.2.14;
Intel PT CYC, 33.4.2.14).  Prints a few lines; a form no run reached shows
as 0, so the gaps are visible in the test's output."""
import collections
import re
import sys

dialect = sys.argv[1] if len(sys.argv) > 1 else "rtit"
types = collections.Counter()
ipc = collections.Counter()
tnt = collections.Counter()
cyc = collections.Counter()
line_re = re.compile(r"^[0-9a-f]{8}  ((?:[0-9a-f]{2} )+)\s*(\S+)(.*)$")
for line in sys.stdin:
    m = line_re.match(line)
    if not m:
        continue
    raw = m.group(1).split()
    name, rest = m.group(2), m.group(3)
    types[name] += 1
    c = re.search(r"\[(CNT=\d Zext=\d|IPBytes=\d{3}b)", rest)
    if c:
        ipc[c.group(1)] += 1
    if name == "TNT":
        b = re.search(r"(\d+) bits?", rest)
        tnt[int(b.group(1)) if b else "?"] += 1
    elif name == "LongTNT":
        tnt["long"] += 1
    elif name in ("CCP", "CYC"):
        cyc[len(raw)] += 1

# Table 18 rows by their encoding: rows 1/2 share CNT=0 Zext=0, rows 5/6
# CNT=1 Zext=1 (the rows differ in the LAST_LIP they match against).
if dialect == "rtit":
    forms = [("CNT=0 Zext=0", "rows 1/2"), ("CNT=0 Zext=1", "row 3"),
             ("CNT=1 Zext=0", "row 4"), ("CNT=1 Zext=1", "rows 5/6"),
             ("CNT=2 Zext=0", "row 7")]
    tnts, cycs, cname = range(1, 7), (1, 2, 3), "CCP"
else:
    forms = [("IPBytes=%03db" % int(format(v, "b")), "") for v in (0, 1, 2, 3, 4, 6)]
    tnts, cycs, cname = range(1, 7), range(1, 11), "CYC"
print("coverage: IP compression: " + ", ".join(
    "%s%s %d" % (f, " (" + r + ")" if r else "", ipc[f]) for f, r in forms))
print("coverage: TNT lengths: " + ", ".join("%s:%d" % (n, tnt[n]) for n in list(tnts) +
                                            (["long"] if dialect == "pt" else [])))
print("coverage: %s sizes in bytes: " % cname + ", ".join("%d:%d" % (n, cyc[n]) for n in cycs))
print("coverage: packets: " + ", ".join("%s %d" % kv for kv in sorted(types.items())))
