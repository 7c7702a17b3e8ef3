#!/usr/bin/env python3
"""test_explain.py RTITSIM GOLDEN_DIR OUT_DIR [--no-big]: `rtitsim explain` in a real
browser (Debian's chromium, headless).

Every page is opened with the fragment #selftest (the page then checks
itself and writes a line SELFTEST {json} into its DOM), all of them in
one chromium launch: an index page holds them in iframes and, once they
have loaded, copies their lines into its own DOM, which --dump-dom
prints; the same launch keeps a screenshot (OUT_DIR/explain.png, the two
golden vectors' pages) as an artifact.

For one golden vector of each dialect:
  * no script error was raised;
  * there is one instruction row per record of the golden flow
    (golden/expected/NAME.flow.txt: its I and E lines), and one packet
    row per packet of the scenario's own expect block, each with the
    short form the expect line gives (a line that is a name alone
    matches any fields, docs/scenario.md) and at the trace offset that
    golden/expected/NAME.dump.txt (rtitsim dump) gives;
  * clicking the first instruction that has packets highlights exactly
    its packets, and clicking its first packet highlights it back;
For the same two vectors' bundles (golden/expected/NAME, D122): no script
error, one instruction row per record `rtitsim decode --json` gives, one
packet row per packet `rtitsim dump --json` gives at its offset, and the
click both ways.
Then a run of 10^6 instructions (tests/explain/loop_scn.py): the page must
be under 20 MB and ready (parsed, decoded, first rows drawn) within
LOAD_BOUND_MS; scrolling to its last row must show record 999999.
Skips (exit 77) when chromium is not installed.
"""
import html
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


def chromium_all(pages, shot):
    """Each (label, page) opened with #selftest in one chromium launch:
    {label: the page's SELFTEST object, or None}."""
    index = os.path.join(OUT, "selftest-index.html")
    with open(index, "w") as f:
        f.write('<!doctype html><html><body style="margin:0"><div id="out"></div>\n')
        for label, page in pages:
            f.write('<iframe data-k="%s" src="%s#selftest" width="1280" height="1000" '
                    'style="display:block;border:0"></iframe>\n'
                    % (label, "file://" + os.path.abspath(page)))
        f.write('<script>window.addEventListener("load",function(){'
                'var o=document.getElementById("out");'
                '[].forEach.call(document.querySelectorAll("iframe"),function(f){var t;'
                'try{t=f.contentDocument.getElementById("selftest").textContent;}'
                'catch(e){t="ERR "+e;}var p=document.createElement("pre");'
                'p.textContent=f.dataset.k+" "+t;o.appendChild(p);});'
                'o.style.display="none";});</script></body></html>\n')
    prof = tempfile.mkdtemp(prefix="rtitsim-chromium-")
    try:
        r = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                            "--allow-file-access-from-files", "--user-data-dir=" + prof,
                            "--window-size=1280,2000", "--dump-dom", "--screenshot=" + shot,
                            "file://" + index], capture_output=True, text=True, timeout=300)
    finally:
        shutil.rmtree(prof, ignore_errors=True)
    res = {}
    for m in re.finditer(r"<pre>(\S+) SELFTEST (\{.*?\})</pre>", r.stdout):
        res[m.group(1)] = json.loads(html.unescape(m.group(2)))
    return res


def clicks(name, t):
    check(t.get("clickWant", 0) > 0 and t["clickHl"] == t["clickWant"],
          "%s: clicking instruction #%s highlights its %s packets (%s highlighted)"
          % (name, t.get("clickI"), t.get("clickWant"), t.get("clickHl")))
    check(t.get("backSel") == 1, "%s: clicking its packet highlights the instruction" % name)
    check(t.get("detail") is True, "%s: the packet's bits are drawn" % name)


def golden_vector(name):
    """The page of the scenario; returns the check of its self-test."""
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

    def verify(t):
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
        clicks(name, t)
    return page, verify


def bundle_vector(name):
    """The page of the vector's bundle (D122)."""
    stem = os.path.join(GOLDEN, "expected", name)
    page = os.path.join(OUT, name + "-bundle.html")
    r = subprocess.run([RTITSIM, "explain", stem, "-o", page], capture_output=True, text=True)
    check(r.returncode == 0, "%s bundle: rtitsim explain exits 0 (%s)" % (name, r.stderr.strip()))
    dec = subprocess.run([RTITSIM, "decode", stem, "--json"], capture_output=True, text=True)
    nrec = sum(1 for l in dec.stdout.splitlines() if '"kind"' in l)
    d = subprocess.run([RTITSIM, "dump", "--json", stem + ".trace"], capture_output=True,
                       text=True)
    offs = [json.loads(l)["offset"] for l in d.stdout.splitlines()]

    def verify(t):
        label = name + " bundle"
        check(t is not None and t["errors"] == [], "%s: the page ran its self-test, no script"
              " error %s" % (label, t and t["errors"]))
        if t is None:
            return
        check(t["iRows"] == nrec > 0, "%s: %d instruction rows, decode --json %d records"
              % (label, t["iRows"], nrec))
        check(t["offsets"] == offs, "%s: the packet rows are dump --json's %s" %
              (label, t["offsets"][:6]))
        clicks(label, t)
    return page, verify


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

    def verify(t):
        check(t is not None and t["errors"] == [], "10^6: the page loads with no script error")
        if t is None:
            return
        check(t["nI"] == 1000000, "10^6: %d records" % t["nI"])
        check(t["ready_ms"] < LOAD_BOUND_MS, "10^6: ready in %d ms (bound %d ms); a scroll"
              " and redraw of both lists %.2f ms" % (t["ready_ms"], LOAD_BOUND_MS,
                                                     t["scroll_ms"]))
        check(t["lastRow"] == 999999, "10^6: scrolled to the end, the last row is #%d"
              % t["lastRow"])
    return page, verify


def main():
    if not CHROMIUM:
        print("SKIP: chromium is not installed (./dev setup installs it)")
        return 77
    os.makedirs(OUT, exist_ok=True)
    t0 = time.time()
    pages = [(v, golden_vector(v)) for v in VECTORS]
    pages += [(v + "-bundle", bundle_vector(v)) for v in VECTORS]
    if BIG:
        pages.append(("big", big_run()))
    t1 = time.time()
    shot = os.path.join(OUT, "explain.png")
    res = chromium_all([(k, p) for k, (p, _) in pages], shot)
    t2 = time.time()
    for k, (_, verify) in pages:
        verify(res.get(k))
    check(os.path.exists(shot) and os.path.getsize(shot) > 0,
          "screenshot explain.png kept (the golden vectors' pages)")
    print("explain: pages written in %.1f s, one chromium launch for %d pages in %.1f s"
          % (t1 - t0, len(pages), t2 - t1))
    print("explain: %d failures" % len(failures))
    return 1 if failures else 0


sys.exit(main())
