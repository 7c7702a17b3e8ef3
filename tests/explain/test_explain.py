#!/usr/bin/env python3
"""test_explain.py RTITSIM GOLDEN_DIR OUT_DIR [--no-big]: `rtitsim explain` in a real
browser (Debian's chromium, headless).

For one golden vector of each dialect: the page is written, opened with
the fragment #selftest (the page then checks itself and writes a line
SELFTEST {json} into the DOM, which --dump-dom prints), and
  * no script error was raised;
  * there is one instruction row per record of the golden flow
    (golden/expected/NAME.flow.txt: its I and E lines), and one packet
    row per packet of the scenario's own expect block, each with the
    short form the expect line gives (a line that is a name alone
    matches any fields, docs/scenario.md) and at the trace offset that
    golden/expected/NAME.dump.txt (rtitsim dump) gives;
  * clicking the first instruction that has packets highlights exactly
    its packets, and clicking its first packet highlights it back;
  * a screenshot is kept in OUT_DIR as an artifact.
Then a run of 10^6 instructions (tests/explain/loop_scn.py): the page must
be under 20 MB and ready (parsed, decoded, first rows drawn) within
LOAD_BOUND_MS; scrolling to its last row must show record 999999.
Skips (exit 77) when chromium is not installed.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from expect_block import expect_lines, short_matches  # noqa: E402

RTITSIM, GOLDEN, OUT = sys.argv[1], sys.argv[2], sys.argv[3]
BIG = "--no-big" not in sys.argv[4:]
HERE = os.path.dirname(os.path.abspath(__file__))
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
LOAD_BOUND_MS = 20000       # 10^6 instructions, on this shared 2-core machine
SIZE_BOUND = 20 * 1024 * 1024
VECTORS = ["rtit_table19_filter", "pt_ip_compression"]

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def chromium(args, url):
    prof = tempfile.mkdtemp(prefix="rtitsim-chromium-")
    try:
        r = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                            "--user-data-dir=" + prof] + args + [url],
                           capture_output=True, text=True, timeout=120)
        return r.stdout
    finally:
        shutil.rmtree(prof, ignore_errors=True)


def selftest(page, shot=None):
    url = "file://" + os.path.abspath(page) + "#selftest"
    out = chromium(["--window-size=1280,2400", "--dump-dom"], url)
    m = re.search(r"SELFTEST (\{.*?\})</pre>", out)
    if shot:
        chromium(["--window-size=1400,1000", "--screenshot=" + shot], url)
    return json.loads(m.group(1)) if m else None




def golden_vector(name):
    scn = os.path.join(GOLDEN, name + ".scn")
    page = os.path.join(OUT, name + ".html")
    r = subprocess.run([RTITSIM, "explain", scn, "-o", page], capture_output=True, text=True)
    check(r.returncode == 0, "%s: rtitsim explain exits 0 (%s)" % (name, r.stderr.strip()))
    flow = [l for l in open(os.path.join(GOLDEN, "expected", name + ".flow.txt"))
            if l[:2] in ("I ", "E ")]
    dump_offsets = [int(l.split()[0], 16)
                    for l in open(os.path.join(GOLDEN, "expected", name + ".dump.txt"))
                    if re.match(r"^[0-9a-f]{8} ", l)]
    exp = expect_lines(scn)
    t = selftest(page, os.path.join(OUT, name + ".png"))
    check(t is not None, "%s: the page ran its self-test" % name)
    if t is None:
        return
    check(t["errors"] == [], "%s: no script errors %s" % (name, t["errors"]))
    check(t["iRows"] == len(flow), "%s: %d instruction rows, the flow has %d records"
          % (name, t["iRows"], len(flow)))
    check(t["pRows"] == len(exp), "%s: %d packet rows, the expect block has %d packets"
          % (name, t["pRows"], len(exp)))
    bad = [(w, g) for w, g in zip(exp, t["shorts"]) if not short_matches(w, g)]
    check(not bad, "%s: each packet row is its expect line %s" % (name, bad[:3]))
    check(t["offsets"] == dump_offsets, "%s: the packet rows' offsets are rtitsim dump's"
          % name)
    check(t.get("clickWant", 0) > 0 and t["clickHl"] == t["clickWant"],
          "%s: clicking instruction #%s highlights its %s packets (%s highlighted)"
          % (name, t.get("clickI"), t.get("clickWant"), t.get("clickHl")))
    check(t.get("backSel") == 1, "%s: clicking its packet highlights the instruction" % name)
    check(t.get("detail") is True, "%s: the packet's bits are drawn" % name)
    check(os.path.getsize(os.path.join(OUT, name + ".png")) > 0,
          "%s: screenshot %s.png kept" % (name, name))


def big_run():
    scn = os.path.join(OUT, "loop_1e6.scn")
    with open(scn, "w") as f:
        subprocess.run([sys.executable, os.path.join(HERE, "loop_scn.py"), "rtit", "142857"],
                       stdout=f, check=True)
    page = os.path.join(OUT, "loop_1e6.html")
    t0 = time.time()
    r = subprocess.run([RTITSIM, "explain", scn, "-o", page], capture_output=True, text=True)
    t1 = time.time()
    check(r.returncode == 0, "10^6: rtitsim explain exits 0 in %.1f s" % (t1 - t0))
    size = os.path.getsize(page)
    check(size < SIZE_BOUND, "10^6: the page is %d bytes (bound %d)" % (size, SIZE_BOUND))
    t = selftest(page)
    check(t is not None and t["errors"] == [], "10^6: the page loads with no script error")
    if t is None:
        return
    check(t["nI"] == 1000000, "10^6: %d records" % t["nI"])
    check(t["ready_ms"] < LOAD_BOUND_MS, "10^6: ready in %d ms (bound %d ms); a scroll"
          " and redraw of both lists %.2f ms" % (t["ready_ms"], LOAD_BOUND_MS, t["scroll_ms"]))
    check(t["lastRow"] == 999999, "10^6: scrolled to the end, the last row is #%d"
          % t["lastRow"])


def main():
    if not CHROMIUM:
        print("SKIP: chromium is not installed (./dev setup installs it)")
        return 77
    os.makedirs(OUT, exist_ok=True)
    for v in VECTORS:
        golden_vector(v)
    if BIG:
        big_run()
    print("explain: %d failures" % len(failures))
    return 1 if failures else 0


sys.exit(main())
