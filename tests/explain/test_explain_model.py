#!/usr/bin/env python3
"""test_explain_model.py RTITSIM GOLDEN_DIR: the model `rtitsim explain`
embeds in its page, decoded here independently of the page's script
(docs/explain.md lists its format), against what other tools say.

For every golden vector of both dialects (but erratum E8's, whose packets
leave in another order than the encoder made them, and Intel PT erratum
SKD007's, whose cut CYC and OVF `rtitsim dump` reads in byte order as two
CYCs: D109):
  * one record per line of golden/expected/NAME.flow.txt, with its address,
    and for instructions as many bytes as its length;
  * the packets in the trace are, in order, those `rtitsim dump --json`
    decodes from golden/expected/NAME.trace: the same offsets and types,
    and an IP packet's short form names the IP dump gives.
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
Bad input: one line and the documented exit status (1 usage, 2 I/O, 4 bad
scenario).
"""
import base64
import json
import os
import re
import subprocess
import sys
import tempfile

R, GOLDEN = sys.argv[1], sys.argv[2]
fails = []


def check(ok, what):
    if not ok:
        fails.append(what)
        print("FAIL " + what)


def varints(b64):
    a, i, out = base64.b64decode(b64), 0, []
    while i < len(a):
        v, s = 0, 0
        while True:
            c = a[i]
            i += 1
            v |= (c & 127) << s
            s += 7
            if not c & 128:
                break
        out.append(v)
    return out


def model(page):
    s = open(page).read()
    start = s.index('<script id="model" type="application/json">') + 43
    return json.loads(s[start:s.index("</script>", start)])


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
    pv, C, S = varints(m["P"]), m["C"], m["S"]
    pk, off = [], 0
    for k in range(m["nP"]):
        off += pv[3 * k + 1]
        c = C[6 * pv[3 * k + 2]:6 * pv[3 * k + 2] + 6]
        if not c[1] & 2:    # not dropped
            pk.append((off, m["types"][c[0]], S[c[3]]))
    check(len(pk) == len(dump) == m["listed"], "%s: %d packets, dump --json %d" %
          (name, len(pk), len(dump)))
    for (o, t, short), j in zip(pk, dump):
        ip = j.get("ip")
        ip = ip if ip and ip.startswith("0x") else None
        if o != j["offset"] or t != j["type"] or (ip and "0x%x" % int(ip, 16) not in short):
            check(False, "%s: packet at %d %s '%s', dump --json %s" % (name, o, t, short, j))
            break
    return states(m)


def bad_input(tmp):
    """Bad input: one line on stderr, the documented exit status, no page."""
    bad = os.path.join(tmp, "bad.scn")
    with open(bad, "w") as f:
        f.write("name bad\nfoo\n")
    for args, rc in ((["explain"], 1), (["explain", "-x"], 1),
                     (["explain", os.path.join(tmp, "none.scn")], 2),
                     (["explain", bad, "-o", os.path.join(tmp, "bad.html")], 4),
                     (["explain", os.path.join(GOLDEN, "rtit_mtc.scn"), "-o",
                       os.path.join(tmp, "no", "dir.html")], 2)):
        r = subprocess.run([R] + args, capture_output=True, text=True)
        check(r.returncode == rc and len(r.stderr.splitlines()) == 1,
              "%s: exit %d (want %d), stderr %r" % (args, r.returncode, rc, r.stderr))
    check(not os.path.exists(os.path.join(tmp, "bad.html")), "a bad scenario leaves no page")


def main():
    tmp = tempfile.mkdtemp()
    bad_input(tmp)
    names = sorted(f[:-4] for f in os.listdir(GOLDEN)
                   if f.endswith(".scn") and not f.startswith("rtit_e8") and
                   f != "pt_erratum_skd007.scn")
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
