#!/usr/bin/env python3
"""test_explain_model.py RTITSIM GOLDEN_DIR: the model `rtitsim explain`
embeds in its page, decoded here independently of the page's script
(docs/explain.md lists its format), against what other tools say.

For every golden vector of both dialects (but Intel PT erratum SKD007's,
whose cut CYC and OVF `rtitsim dump` reads in byte order as two CYCs:
D109):
  * one record per line of golden/expected/NAME.flow.txt, with its address,
    and for instructions as many bytes as its length;
  * the packets in the trace are, in order, those `rtitsim dump --json`
    decodes from golden/expected/NAME.trace: the same offsets and types,
    and an IP packet's short form names the IP dump gives (erratum E8's
    packets, listed in the encoder's order, are in the trace's once
    sorted by offset), each found in the trace, with its bit layout.
And the hidden state the encoder reports (rtit_encoder_observe) where
the manual fixes it, on hand-derived steps:
  * rtit_table19_filter (RTIT Table 19, 4.2.2, 4.2.3.1): after #0 (jmp
    into the range) PacketEn 1 and LAST_LIP the FUP.PGE's 0x401100; after
    #3 (the jne, not taken) one TNT bit, N; after #4 (jmp out) PacketEn 0,
    no TNT bit (flushed before the FUP.PGD), LAST_LIP 0x40110e;
  * rtit_ret_compression (4.2.3.2, Figure 7): after #1 (call inner at
    0x401040, 5 bytes) LAST_CALL_NLIP 0x401045, valid; after #3 (the inner
    RET) one TNT bit, T;
  * pt_ret_compression (SDM 33.4.2.2): after #1 the RET stack is 2 deep
    with 0x401045 on top; after #3 (the inner RET, compressed) it is 1 deep
    and the TNT buffer holds one bit, T;
  * rtit_psb_pkt_cnt (3.3.9, the scenario's comment): Pkt_Cnt reaches
    0x7fe of the 2^11 that Pkt_Mask 0 selects.
A bundle (D122): golden/expected's rtit_table19_filter and
pt_ip_compression copied to a temporary directory outside the source
tree and explained from there: a bundle's page (no state), its records
those `rtitsim decode DIR --json` gives (kind, address), its packets
`rtitsim dump --json`'s, and the verdict that the decoded flow is the
bundle's ground truth.
A program (tests/linux/prog.c, gcc -O2, dynamic) in both dialects, as
`rtitsim run PROGRAM ARGS` runs it: the page counts the instructions the
run's summary line counts, the program's output is the run's, and
symbols of its dynamic libraries (libc's __libc_start_main) and its own
main name instructions.
Bad input: one line and the documented exit status (1 usage, 2 I/O, 4 bad
scenario).
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import page_model
from page_model import model, varints

R, GOLDEN = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
fails = []


def check(ok, what):
    if not ok:
        fails.append(what)
        print("FAIL " + what)


def states(m):
    """The state entries: (records completed, {field: value})."""
    v, i, rec, cur, out = varints(m["X"]), 0, -1, [0] * 14, []
    wide, timing = {0, 4, 5, 7}, {12, 13}
    for k in range(m["nX"]):
        rec += v[i]
        mask = v[i + 1]
        i += 2
        for f in range(14):
            if not mask & (1 << f):
                continue
            x = v[i]
            i += 1
            if f in timing and k:
                x = cur[f] + (-(x + 1) // 2 if x & 1 else x // 2)
            if f in wide:
                x |= v[i] << 32
                i += 1
            cur[f] = x
        out.append((rec, list(cur)))
    return out


def after(st, rec):
    """The state after record #rec (rec + 1 records completed)."""
    best = None
    for r, f in st:
        if r <= rec + 1:
            best = f
    f = best
    return {"last_ip": f[0], "packet_en": (f[1] >> 1) & 1, "tnt_n": f[2], "tnt_bits": f[4],
            "call_nlip": f[5], "call_nlip_valid": (f[1] >> 4) & 1, "depth": f[6],
            "top": f[7], "psb_count": f[8], "psb_period": f[9]}


def vector(name, tmp):
    page = os.path.join(tmp, name + ".html")
    r = subprocess.run([R, "explain", os.path.join(GOLDEN, name + ".scn"), "-o", page],
                       capture_output=True, text=True)
    check(r.returncode == 0, "%s: explain exits %d %s" % (name, r.returncode, r.stderr))
    if r.returncode:
        return None
    m = model(page)
    flow = [l.split() for l in open(os.path.join(GOLDEN, "expected", name + ".flow.txt"))
            if l[:2] in ("I ", "E ")]
    recs = [u // 2 for u in varints(m["I"])]
    check(len(recs) == len(flow) == m["nI"], "%s: %d records, the flow %d" %
          (name, len(recs), len(flow)))
    for i, (u, fl) in enumerate(zip(recs, flow)):
        kind, ip, hexb = m["U"][u][0], int(m["U"][u][1], 16), m["U"][u][2]
        ln = next((int(x[4:]) for x in fl if x.startswith("len=")), None)
        ok = kind == fl[0].lower() and ip == int(fl[1], 16) and \
            (kind == "e" or len(hexb.split()) == ln)
        if not ok:
            check(False, "%s: record #%d is %s, the flow's %s" % (name, i, m["U"][u][:3], fl[:4]))
            break
    d = subprocess.run([R, "dump", "--json", os.path.join(GOLDEN, "expected", name + ".trace")],
                       capture_output=True, text=True)
    dump = [json.loads(l) for l in d.stdout.splitlines()]
    S, pk = m["S"], []
    for off, _, t, c in page_model.packets(m):
        if not c[1] & 2:    # not dropped
            pk.append((off, t, S[c[3]], S[c[4]], S[c[5]]))
    check(len(pk) == len(dump) == m["listed"], "%s: %d packets, dump --json %d" %
          (name, len(pk), len(dump)))
    # the encoder's order is the trace's but under erratum E8 (RTIT
    # Appendix E: a packet after a PSB overtakes an older one)
    if pk != sorted(pk, key=lambda x: x[0]):
        check(name.startswith("rtit_e8") or m["source"] == "bundle",
              "%s: packets out of trace order" % name)
        pk.sort(key=lambda x: x[0])
    check(m["unmatched"] == 0 and all(f != "not found in the trace" and lay
                                      for _, _, _, f, lay in pk),
          "%s: every packet is found in the trace with its bit layout (%d unmatched)"
          % (name, m["unmatched"]))
    for (o, t, short, _, _), j in zip(pk, dump):
        ip = j.get("ip")
        ip = ip if ip and ip.startswith("0x") else None
        if o != j["offset"] or t != j["type"] or (ip and "0x%x" % int(ip, 16) not in short):
            check(False, "%s: packet at %d %s '%s', dump --json %s" % (name, o, t, short, j))
            break
    return states(m)


def dump_packets(trace):
    d = subprocess.run([R, "dump", "--json", trace], capture_output=True, text=True)
    return [(j["offset"], j["type"]) for j in map(json.loads, d.stdout.splitlines())]


def bundle_copied(tmp):
    """A golden bundle copied outside the source tree, explained there."""
    for name in ("rtit_table19_filter", "pt_ip_compression"):
        d = os.path.join(tmp, "copy-" + name)
        os.makedirs(d)
        for f in os.listdir(os.path.join(GOLDEN, "expected")):
            if f.startswith(name + "."):
                shutil.copy(os.path.join(GOLDEN, "expected", f), d)
        page = os.path.join(tmp, "bundle-" + name + ".html")
        r = subprocess.run([R, "explain", d, "-o", page], capture_output=True, text=True,
                           cwd=tmp)
        check(r.returncode == 0, "bundle %s: explain DIR exits %d %s" %
              (name, r.returncode, r.stderr))
        if r.returncode:
            continue
        m = model(page)
        check(m["source"] == "bundle" and m["nX"] == 0 and m["name"] == name,
              "bundle %s: a bundle's page, no state: %s %s" % (name, m["source"], m["nX"]))
        check("the decoded flow is the bundle's ground truth" in m["stop"],
              "bundle %s: verdict %r" % (name, m["stop"]))
        dec = subprocess.run([R, "decode", d, "--json"], capture_output=True, text=True)
        recs = [(j["kind"][0], int(j["ip"], 16)) for j in map(json.loads, dec.stdout.splitlines())
                if "kind" in j]
        got = [(m["U"][u // 2][0], int(m["U"][u // 2][1], 16)) for u in varints(m["I"])]
        check(got == recs and len(recs) > 0, "bundle %s: %d records, decode --json %d" %
              (name, len(got), len(recs)))
        pk = [(o, t) for o, n, t, c in page_model.packets(m)]
        check(pk == dump_packets(os.path.join(d, name + ".trace")),
              "bundle %s: its packets are dump --json's" % name)


def program(tmp):
    """tests/linux/prog.c as a process, both dialects."""
    gcc = shutil.which("gcc")
    if not gcc:
        print("SKIP program: no gcc")
        return
    exe = os.path.join(tmp, "prog")
    subprocess.run([gcc, "-O2", "-o", exe, os.path.join(GOLDEN, "..", "tests", "linux",
                                                        "prog.c")], check=True)
    for dl in ("rtit", "pt"):
        run = subprocess.run([R, "run", "--dialect", dl, "--out", os.path.join(tmp, "p" + dl),
                              exe, "50", "x"], capture_output=True, text=True)
        mm = re.search(r"; (\d+) instructions, (\d+) events", run.stderr)
        page = os.path.join(tmp, "prog-" + dl + ".html")
        r = subprocess.run([R, "explain", "--dialect", dl, "-o", page, exe, "50", "x"],
                           capture_output=True, text=True)
        check(run.returncode == 0 and r.returncode == 0 and mm,
              "program %s: run exits %d, explain %d %s" % (dl, run.returncode, r.returncode,
                                                          r.stderr[-300:]))
        if not mm or r.returncode:
            continue
        m = model(page)
        n, e = int(mm.group(1)), int(mm.group(2))
        check(m["insns"] == n and m["events"] == e and m["nI"] == n + e and m["dialect"] == dl,
              "program %s: the page has %d instructions (%d records), the run %d" %
              (dl, m["insns"], m["nI"], n))
        check(r.stdout == run.stdout and "args=3 last=x" in r.stdout,
              "program %s: its output %r, run's %r" % (dl, r.stdout, run.stdout))
        syms = {u[4].split("+")[0] for u in m["U"]}
        check({"__libc_start_main", "main"} <= syms,
              "program %s: libc's and the program's symbols (%d distinct)" % (dl, len(syms)))


def bad_input(tmp):
    """Bad input: one line on stderr, the documented exit status, no page."""
    bad = os.path.join(tmp, "bad.scn")
    with open(bad, "w") as f:
        f.write("name bad\nfoo\n")
    for args, rc in ((["explain"], 1), (["explain", "-x"], 1),
                     (["explain", os.path.join(tmp, "none.scn")], 2),
                     (["explain", bad, "-o", os.path.join(tmp, "bad.html")], 4),
                     (["explain", os.path.join(GOLDEN, "rtit_mtc.scn"), "-o",
                       os.path.join(tmp, "no", "dir.html")], 2),
                     (["explain", tmp], 1),     # a directory with no bundle manifest
                     (["explain", "--param", "e8=always",
                       os.path.join(GOLDEN, "expected", "rtit_mtc")], 1),
                     (["explain", "--dialect", "pt", os.path.join(GOLDEN, "rtit_mtc.scn")], 1),
                     (["explain", "--dialect", "x86", "prog"], 1),
                     (["explain", os.path.join(GOLDEN, "README.md")], 4)):
        r = subprocess.run([R] + args, capture_output=True, text=True)
        check(r.returncode == rc and len(r.stderr.splitlines()) == 1,
              "%s: exit %d (want %d), stderr %r" % (args, r.returncode, rc, r.stderr))
    check(not os.path.exists(os.path.join(tmp, "bad.html")), "a bad scenario leaves no page")


def main():
    tmp = tempfile.mkdtemp()
    bad_input(tmp)
    bundle_copied(tmp)
    program(tmp)
    names = sorted(f[:-4] for f in os.listdir(GOLDEN)
                   if f.endswith(".scn") and f != "pt_erratum_skd007.scn")
    st = {n: vector(n, tmp) for n in names}
    s = st["rtit_table19_filter"]
    a0, a3, a4 = after(s, 0), after(s, 3), after(s, 4)
    check(a0["packet_en"] == 1 and a0["last_ip"] == 0x401100,
          "rtit_table19_filter: after #0 %s" % a0)
    check(a3["tnt_n"] == 1 and a3["tnt_bits"] == 0, "rtit_table19_filter: after #3 %s" % a3)
    check(a4["packet_en"] == 0 and a4["tnt_n"] == 0 and a4["last_ip"] == 0x40110e,
          "rtit_table19_filter: after #4 %s" % a4)
    s = st["rtit_ret_compression"]
    a1, a3 = after(s, 1), after(s, 3)
    check(a1["call_nlip_valid"] == 1 and a1["call_nlip"] == 0x401045,
          "rtit_ret_compression: after #1 %s" % a1)
    check(a3["tnt_n"] == 1 and a3["tnt_bits"] == 1, "rtit_ret_compression: after #3 %s" % a3)
    s = st["pt_ret_compression"]
    a1, a3 = after(s, 1), after(s, 3)
    check(a1["depth"] == 2 and a1["top"] == 0x401045, "pt_ret_compression: after #1 %s" % a1)
    check(a3["depth"] == 1 and a3["tnt_n"] == 1 and a3["tnt_bits"] == 1,
          "pt_ret_compression: after #3 %s" % a3)
    s = st["rtit_psb_pkt_cnt"]
    check(any(f[8] == 0x7fe and f[9] == 2048 for _, f in s),
          "rtit_psb_pkt_cnt: Pkt_Cnt never 0x7fe of 2048")
    print("explain model: %d vectors, %d failures" % (len(names), len(fails)))
    return 1 if fails else 0


sys.exit(main())
