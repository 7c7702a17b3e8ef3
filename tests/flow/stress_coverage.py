#!/usr/bin/env python3
"""stress_coverage.py DIALECT [SEEDS] < DUMPS - the packet forms the property
test's random streams reached, from `rtitsim dump` lines: packet types, the
IP compression used (RTIT Table 18: CNT/Zext, 4.2.3.1; Intel PT Table
33-18: IPBytes), TNT lengths (RTIT Figure 4; Intel PT TNT-8 and Long TNT,
33.4.2.1), cycle-packet sizes (RTIT CCP, 4.2.14; Intel PT CYC, 33.4.2.14),
RTIT MTC ranges (4.2.12) and PIP CR0.PG values (4.2.10), and where the
packets' IPs lie (below 4 GiB, above, the kernel half; transfers across 4
GiB and across the 2^47 hole).  Prints a few lines; a form no run reached
shows as 0.  With SEEDS (the seeds the dumps came from) of 100 or more,
every form of REQUIRED must have been reached: exit 1 naming those that
were not (the generator forces the rare ones in some seeds, gen_stress.py)."""
import collections
import re
import sys

dialect = sys.argv[1] if len(sys.argv) > 1 else "rtit"
seeds = int(sys.argv[2]) if len(sys.argv) > 2 else 0
types = collections.Counter()
ipc = collections.Counter()
rows = collections.Counter()
tnt = collections.Counter()
cyc = collections.Counter()
mtc = collections.Counter()
pip = collections.Counter()
where = collections.Counter()
line_re = re.compile(r"^[0-9a-f]{8}  ((?:[0-9a-f]{2} )+)\s*(\S+)(.*)$")
last = None            # the last IP a packet carried since the PSB (RTIT LAST_LIP)


def table18_row(cnt, zext, ip, last_ip):
    """The Table 18 row (RTIT 4.2.3.1) an encoding came from: rows 1/2 and
    5/6 share an encoding; they differ in LIP[47:32] and in the LAST_LIP
    they were matched against (the previous IP in the stream)."""
    hi = (ip >> 32) & 0xffff
    if cnt == 0:
        return 3 if zext else (1 if hi else 2)
    if cnt == 1:
        if not zext:
            return 4
        # row 5: LIP[31:16] differs (LAST_LIP[47:32] may match); row 6:
        # LIP[47:32] differs from LAST_LIP's (which was not 0)
        return 6 if last_ip is not None and (last_ip >> 32) & 0xffff else 5
    return 7


def region(ip):
    if ip >> 47 & 1:
        return "kernel half"
    return "below 4 GiB" if ip < 1 << 32 else "4 GiB-2^47"


for line in sys.stdin:
    m = line_re.match(line)
    if not m:
        continue
    raw = m.group(1).split()
    name, rest = m.group(2), m.group(3)
    types[name] += 1
    if name == "PSB":
        last = None
    c = re.search(r"\[(CNT=(\d) Zext=(\d)|IPBytes=\d{3}b)", rest)
    i = re.search(r"\bip=0x([0-9a-f]+)", rest)
    if c:
        ipc[c.group(1)] += 1
    if i:
        ip = int(i.group(1), 16)
        if c and c.group(2) is not None:
            rows[table18_row(int(c.group(2)), int(c.group(3)), ip, last)] += 1
        where[region(ip)] += 1
        if last is not None:
            if (ip >> 47 & 1) != (last >> 47 & 1):
                where["across 2^47"] += 1
            elif (ip >> 32 == 0) != (last >> 32 == 0):
                where["across 4 GiB"] += 1
        last = ip
    if name == "TNT":
        b = re.search(r"(\d+) bits?", rest)
        tnt[int(b.group(1)) if b else "?"] += 1
    elif name == "LongTNT":
        tnt["long"] += 1
    elif name in ("CCP", "CYC"):
        cyc[len(raw)] += 1
    elif name == "MTC":
        r = re.search(r"range=(\d)", rest)
        if r:
            mtc[int(r.group(1))] += 1
    elif name == "PIP":
        g = re.search(r"cr0\.pg=(\d)", rest)
        if g:
            pip[int(g.group(1))] += 1

places = ["below 4 GiB", "4 GiB-2^47", "kernel half", "across 4 GiB", "across 2^47"]
# The forms a sized run must reach (issue 16), with the section that defines each.
if dialect == "rtit":
    forms = [("CNT=0 Zext=0", "rows 1/2"), ("CNT=0 Zext=1", "row 3"),
             ("CNT=1 Zext=0", "row 4"), ("CNT=1 Zext=1", "rows 5/6"),
             ("CNT=2 Zext=0", "row 7")]
    tnts, cycs, cname = range(1, 7), (1, 2, 3), "CCP"
    REQUIRED = ([("RTIT Table 18 row %d" % n, rows[n]) for n in range(1, 8)] +
                [("RTIT Figure 4 TNT of %d bits" % n, tnt[n]) for n in range(1, 7)] +
                [("RTIT 4.2.14 CCP of %d bytes" % n, cyc[n]) for n in (1, 2, 3)] +
                [("RTIT 4.2.12 MTC range %d" % n, mtc[n]) for n in range(4)] +
                [("RTIT 4.2.10 PIP with CR0.PG=%d" % n, pip[n]) for n in (0, 1)])
else:
    forms = [("IPBytes=%03db" % int(format(v, "b")), "") for v in (0, 1, 2, 3, 4, 6)]
    tnts, cycs, cname = range(1, 7), range(1, 11), "CYC"
    REQUIRED = ([("SDM Table 33-18 %s" % f, ipc[f]) for f, _ in forms
                 if f != "IPBytes=100b"] +
                [("SDM 33.4.2.1 TNT of %d bits" % n, tnt[n]) for n in range(1, 7)] +
                [("SDM 33.4.2.1 Long TNT", tnt["long"])] +
                [("SDM 33.4.2.14 CYC of %d bytes" % n, cyc[n]) for n in (1, 2, 3)])
REQUIRED += [("IPs %s" % p, where[p]) for p in places]
print("coverage: IP compression: " + ", ".join(
    "%s%s %d" % (f, " (" + r + ")" if r else "", ipc[f]) for f, r in forms))
if dialect == "rtit":
    print("coverage: Table 18 rows: " + ", ".join("%d:%d" % (n, rows[n]) for n in range(1, 8)))
    print("coverage: MTC ranges: " + ", ".join("%d:%d" % (n, mtc[n]) for n in range(4)) +
          "; PIP CR0.PG: " + ", ".join("%d:%d" % (n, pip[n]) for n in (0, 1)))
print("coverage: TNT lengths: " + ", ".join("%s:%d" % (n, tnt[n]) for n in list(tnts) +
                                            (["long"] if dialect == "pt" else [])))
print("coverage: %s sizes in bytes: " % cname + ", ".join("%d:%d" % (n, cyc[n]) for n in cycs))
print("coverage: IPs: " + ", ".join("%s %d" % (p, where[p]) for p in places))
print("coverage: packets: " + ", ".join("%s %d" % kv for kv in sorted(types.items())))
# Required of a run of 100 seeds or more (a flow-stress chunk of ./dev
# test); a shorter one (the sanitizers' chunks of 25) prints its forms only.
MIN_SEEDS = 100
missing = [f for f, n in REQUIRED if not n]
if 0 < seeds < MIN_SEEDS:
    print("coverage: required forms not checked: %d seeds, under %d" % (seeds, MIN_SEEDS))
    seeds = 0
if seeds and missing:
    print("FAIL: required forms not reached in %d seeds: %s" % (seeds, "; ".join(missing)))
    sys.exit(1)
if seeds:
    print("coverage: all %d required forms reached" % len(REQUIRED))
