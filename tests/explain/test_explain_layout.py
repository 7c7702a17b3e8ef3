#!/usr/bin/env python3
"""test_explain_layout.py RTITSIM GOLDEN_DIR: every packet of the golden
corpus through the page's field layout (cli/explain_layout.c), by way of
`rtitsim explain BUNDLE` on each vector's bundle (golden/expected/NAME).

For every packet of every vector (both dialects, erratum E8's included):
  * its layout names every bit of its bytes exactly once, and no field is
    the generic "opcode" or "payload" of a kind the layout does not know;
  * fields of kind "zero" (reserved, unused) are 0 in the trace, and a
    fixed opcode field ("op") has one value for all packets of its kind
    (a field drawn at the wrong bits would show the payload there);
and every packet kind (`types` in the model) the corpus has is listed
with its count; the kinds of the enum the corpus never has are named.
Each page is a bundle's: the flow decoder's flow must be the bundle's
ground truth (the page's header says it) but for the vectors the flow
decoder does not decode (erratum E8, and E4's TraceSTOP in an overflow:
decoder/flow.h), whose page must still be written (exit 3 or 5).
"""
import base64
import os
import subprocess
import sys
import tempfile

import page_model
from page_model import model

R, GOLDEN = sys.argv[1], sys.argv[2]
GENERIC = {"opcode", "payload"}
NOT_DECODED = ("rtit_e8",)
fails = []


def check(ok, what):
    if not ok:
        fails.append(what)
        print("FAIL " + what)


def packets(m):
    """(offset, length, type name, layout) of each packet in the trace."""
    return [(o, n, t, m["S"][c[5]]) for o, n, t, c in page_model.packets(m) if not c[1] & 2]


def field_value(b, first, bits):
    return sum(((b[(first + i) >> 3] >> ((first + i) & 7)) & 1) << i for i in range(bits))


def main():
    tmp = tempfile.mkdtemp()
    d = os.path.join(GOLDEN, "expected")
    names = sorted(f[:-len(".manifest.json")] for f in os.listdir(d)
                   if f.endswith(".manifest.json"))
    seen = {"rtit": {}, "pt": {}}
    opval = {}
    types = None
    for name in names:
        page = os.path.join(tmp, name + ".html")
        r = subprocess.run([R, "explain", os.path.join(d, name), "-o", page],
                           capture_output=True, text=True)
        undecoded = name.startswith(NOT_DECODED)
        check(r.returncode == 0 or (undecoded and r.returncode in (3, 5)),
              "%s: explain BUNDLE exits %d: %s" % (name, r.returncode, r.stderr[-300:]))
        if not os.path.exists(page):
            check(False, "%s: no page" % name)
            continue
        m = model(page)
        types = m["types"]
        check(m["source"] == "bundle" and m["nX"] == 0, "%s: a bundle's page, no state" % name)
        check(undecoded or "the decoded flow is the bundle's ground truth" in m["stop"],
              "%s: the page's verdict: %s" % (name, m["stop"]))
        trace = base64.b64decode(m["T"])
        for off, ln, t, lay in packets(m):
            b = trace[off:off + ln]
            seen[m["dialect"]][t] = seen[m["dialect"]].get(t, 0) + 1
            cover = [0] * (8 * ln)
            bad = []
            for fld in (lay.split(";") if lay else []):
                a = fld.split(":")
                bits, first, kind, fname = int(a[-1]), int(a[-2]), a[0], ":".join(a[1:-2])
                if fname in GENERIC:
                    bad.append("generic field '%s'" % fname)
                for i in range(first, first + bits):
                    if i < len(cover):
                        cover[i] += 1
                    else:
                        bad.append("'%s' past the packet's %d bytes" % (fname, ln))
                        break
                if first + bits > 8 * ln:
                    continue
                v = field_value(b, first, bits)
                if kind == "zero" and v:
                    bad.append("'%s' is 0x%x, not 0" % (fname, v))
                if kind == "op" and fname != "PSB pattern":
                    if opval.setdefault((m["dialect"], t, fname), v) != v:
                        bad.append("'%s' is 0x%x here, 0x%x elsewhere" %
                                   (fname, v, opval[(m["dialect"], t, fname)]))
            unnamed = [i for i, c in enumerate(cover) if c != 1]
            if unnamed:
                bad.append("bits %s named %s times" % (unnamed[:8], [cover[i] for i in unnamed[:8]]))
            if bad:
                check(False, "%s: %s at 0x%x (%s) '%s': %s" % (name, t, off, b.hex(" "), lay,
                                                              "; ".join(bad[:3])))
    for dl in ("rtit", "pt"):
        print("%s kinds in the corpus: %s" % (dl, ", ".join("%s %d" % kv for kv in
                                                          sorted(seen[dl].items()))))
    allk = set(seen["rtit"]) | set(seen["pt"])
    print("kinds of the enum the corpus does not have: %s" %
          ", ".join(t for t in (types or []) if t not in allk))
    print("explain layout: %d vectors, %d packet kinds, %d failures" %
          (len(names), len(allk), len(fails)))
    return 1 if fails else 0


sys.exit(main())
