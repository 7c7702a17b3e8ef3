#!/usr/bin/env python3
"""check_formats.py DIR - an independent reader of rtitsim's bundles,
written only from docs/formats.md (no rtitsim code, no rtitsim header):
it checks every bundle in DIR (STEM.manifest.json and the files it names)
against the document.  For each bundle:

  * the manifest: one JSON object, no key twice, the keys and types of
    the "STEM.manifest.json" table, every file's size and XXH3-64;
  * the sideband: the header line, KEY VALUE lines, each known key's
    type, trace_bytes/trace_xxh3 against the trace, its map, handler
    and msr lines against the manifest;
  * the binary flow: header, 64-byte records (version 2: its blocks
    decoded), trailer (count, digest over the records), against the sideband's flow_records/flow_xxh3 and
    instructions/events;
  * the text flow: each line rebuilt from the binary record by the
    field table and the EXTRA rules, compared byte for byte;
  * the events: the E lines of the text flow;
  * the dump: JSON lines (no key twice; offset/bytes/type; the bytes are
    the trace's at the offset, the packets tile the trace), and the text
    dump's offset and byte columns;
  * the image: an ELF with PT_LOAD segments (or a raw file), and every
    traced-record instruction's bytes inside it;
  * a process bundle: the sideband's mmap lines against the manifest's
    mmaps, every file relative to the bundle (STEM.files/NAME), each
    mapped file's size and XXH3-64, its GNU build-id the line's, and the
    image is the executable mappings' file bytes.

With SEEDS (check_formats.py DIR SEEDS): also each SEEDS/NAME.v2.flow,
a version 2 (compact) binary flow, decoded by the document's coding, has
the records and trailer of DIR/NAME.flow (version 1).

Exit 0 when every bundle agrees, 1 otherwise (each problem one line).
"""
import glob
import json
import os
import re
import struct
import sys

import xxhash

problems = []


def bad(stem, what):
    problems.append(f"{stem}: {what}")


def xxh3(data):
    return xxhash.xxh3_64(data).hexdigest()   # canonical big-endian hex


def no_dup(pairs):
    d = {}
    for k, v in pairs:
        if k in d:
            raise ValueError(f"key {k!r} twice")
        d[k] = v
    return d


HEX = re.compile(r"^0x[0-9a-f]+$")
HEX16 = re.compile(r"^[0-9a-f]{16}$")

# docs/formats.md "PREFIX.flow (binary)": the names in order from 0
CLASSES = ["other", "cond", "jmp", "call", "jmp-ind", "call-ind", "ret", "far-jmp",
           "far-call", "far-ret", "iret", "int", "syscall", "sysret", "sysenter",
           "sysexit", "mov-cr3", "mov-cr0", "wrmsr", "rdmsr", "hlt", "ptwrite", "mwait",
           "xbegin", "xend", "enclu", "uiret"]
KINDS = ["none", "exception", "interrupt", "nmi", "smi", "rsm", "vmexit", "vmentry",
         "freq", "sleep", "wake", "msr-write", "tsx-abort", "aex", "init", "sipi",
         "uintr", "pebs"]
F_TAKEN, F_ZLC, F_FAULT, F_PG, F_ERR, F_IF, F_TX, F_ENCL = (1 << i for i in range(8))


# ------------------------------------------------------------ manifest

MANIFEST_KEYS = {
    "format": str, "format_version": int, "name": str, "describe": str, "dialect": str,
    "cpu": dict, "mode": int, "external_ctl": bool, "trace_config": dict, "msrs": list,
    "params": dict, "errata": dict, "handlers": list, "images": list,
    "libipt": (dict, type(None)), "stop": str, "counts": dict, "digests": dict,
    "files": dict,
}


def check_file_entry(stem, d, e, role):
    if not isinstance(e, dict) or not isinstance(e.get("file"), str):
        return bad(stem, f"files.{role}: not an object with a file")
    p = os.path.join(d, e["file"])
    # in the bundle's directory; a process's mapped files in STEM.files/
    inside = (e["file"].startswith(stem + ".files/") and e["file"].count("/") == 1
              if role == "mapped" else "/" not in e["file"])
    if not inside or not os.path.isfile(p):
        return bad(stem, f"{role}: {e['file']} is not a file in the bundle")
    if role == "sideband":
        return None
    data = open(p, "rb").read()
    if e.get("bytes") != len(data) or e.get("xxh3") != xxh3(data):
        bad(stem, f"{role}: size or xxh3 of {e['file']} differ from the manifest")
    return data


def check_manifest(d, stem):
    m = json.load(open(os.path.join(d, stem + ".manifest.json")), object_pairs_hook=no_dup)
    for k, t in MANIFEST_KEYS.items():
        if k not in m or not isinstance(m[k], t) or (t is int and isinstance(m[k], bool)):
            bad(stem, f"manifest: {k} missing or not {t}")
    if m.get("format") != "rtitsim-bundle" or m.get("name") != stem:
        bad(stem, "manifest: format or name")
    if m.get("dialect") not in ("rtit", "pt") or m.get("mode") not in (16, 32, 64):
        bad(stem, "manifest: dialect or mode")
    pt = m.get("dialect") == "pt"
    tc = m.get("trace_config", {})
    want = (["ia32_rtit_ctl", "ret_compression", "mtc_freq", "cyc_thresh", "art_num",
             "art_den", "cbr"] if pt else ["rtit_ctl", "cycle_accurate", "cmprs_ret",
                                           "mtc_range"])
    if sorted(tc) != sorted(want) or not HEX.match(tc.get(want[0], "")):
        bad(stem, f"manifest: trace_config keys {sorted(tc)}")
    for x in m.get("msrs", []):
        if not (HEX.match(x.get("msr", "")) and HEX.match(x.get("value", "")) and
                (x.get("name") is None or isinstance(x["name"], str))):
            bad(stem, f"manifest: msr entry {x}")
    for h in m.get("handlers", []):
        if not (isinstance(h.get("vector"), int) and HEX.match(h.get("ip", ""))):
            bad(stem, f"manifest: handler {h}")
    if pt != isinstance(m.get("libipt"), dict):
        bad(stem, "manifest: libipt is an object for Intel PT only")
    data = {}
    files = m.get("files", {})
    for role in ("trace", "sideband", "dump_txt", "dump_jsonl", "flow_bin", "flow_txt",
                 "events_txt"):
        if role not in files:
            bad(stem, f"manifest: no files.{role}")
        else:
            data[role] = check_file_entry(stem, d, files[role], role)
    images = []
    for im in m.get("images", []):
        if im.get("kind") not in ("elf", "raw"):
            bad(stem, f"image kind {im.get('kind')}")
            continue
        at = im.get("bias" if im["kind"] == "elf" else "address", "")
        if not HEX.match(at):
            bad(stem, f"image {im.get('file')}: no bias/address")
            continue
        b = check_file_entry(stem, d, im, "image")
        if b is not None:
            images.append((im["kind"], int(at, 16), b, im["file"]))
    images += check_mmaps(stem, d, m)
    if not images:
        bad(stem, "no image")
    return m, data, images


def build_id(b):
    """The GNU build-id of an ELF64 (its PT_NOTE segments), hex, or None."""
    if b[:4] != b"\x7fELF" or b[4] != 2:
        return None
    phoff, = struct.unpack_from("<Q", b, 32)
    phentsize, phnum = struct.unpack_from("<HH", b, 54)
    for i in range(phnum):
        typ, _, off, _, _, fsz = struct.unpack_from("<IIQQQQ", b, phoff + i * phentsize)
        k = off
        while typ == 4 and k + 12 <= off + fsz:
            nsz, dsz, nt = struct.unpack_from("<III", b, k)
            name = b[k + 12:k + 12 + nsz]
            desc = k + 12 + ((nsz + 3) & ~3)
            if nt == 3 and name == b"GNU\0":
                return b[desc:desc + dsz].hex()
            k = desc + ((dsz + 3) & ~3)
    return None


def check_mmaps(stem, d, m):
    """A process bundle: "mmaps" and "mapped_files"; the executable
    mappings' bytes as raw image regions."""
    if "mmaps" not in m:
        return []
    files = {}
    for e in m.get("mapped_files", []):
        b = check_file_entry(stem, d, e, "mapped")
        if b is not None:
            files[e["file"]] = b
    out = []
    for x in m["mmaps"]:
        if not all(HEX.match(x.get(k, "")) for k in ("address", "size", "offset")) or \
           not re.fullmatch(r"[r-][w-][x-]", x.get("prot", "")) or x.get("file") not in files:
            bad(stem, f"manifest: mmap entry {x}")
            continue
        b = files[x["file"]]
        if x.get("build_id") is not None and build_id(b) != x["build_id"]:
            bad(stem, f"{x['file']}: build-id {build_id(b)}, the mapping says {x['build_id']}")
        if x["prot"][2] == "x":
            off, size = int(x["offset"], 16), int(x["size"], 16)
            if off < len(b):
                out.append(("raw", int(x["address"], 16), b[off:off + size], x["file"]))
    return out


# ------------------------------------------------------------ sideband

SB_HEADER = "# rtitsim sideband: what a decoder needs besides the trace"
SB_TYPES = {
    "dialect": r"rtit|pt", "mode": r"16|32|64", "ia32_rtit_ctl": r"0x[0-9a-f]+",
    "rtit_ctl": r"0x[0-9a-f]+", "ret_compression": r"[01]", "cycle_accurate": r"[01]",
    "cmprs_ret": r"[01]", "mtc_range": r"[0-3]", "trace_xxh3": r"[0-9a-f]{16}",
    "flow_xxh3": r"[0-9a-f]{16}", "param": r"\S+ = .+", "external_ctl": r"[01]",
    "msr": r"0x[0-9a-f]+ 0x[0-9a-f]+", "handler": r"[0-9]+ 0x[0-9a-f]+",
    "map": r"(elf|raw) 0x[0-9a-f]+ .+",
    "mmap": r"0x[0-9a-f]+ 0x[0-9a-f]+ 0x[0-9a-f]+ [r-][w-][x-] [0-9]+ ([0-9a-f]+|-) .+",
}
for k in ("mtc_freq", "cyc_thresh", "art_num", "art_den", "cbr", "trace_bytes",
          "flow_records", "instructions", "events", "packets", "psbs", "overflows"):
    SB_TYPES[k] = r"[0-9]+"


def check_sideband(stem, text, m, trace):
    lines = text.split("\n")
    if lines[0] != SB_HEADER or lines[-1] != "":
        return bad(stem, "sideband: header line or final newline"), {}
    sb, rep = {}, {"msr": [], "handler": [], "map": [], "param": [], "mmap": []}
    for ln in lines[1:-1]:
        if not ln or ln.startswith("#"):
            continue
        k, _, v = ln.partition(" ")
        if k in SB_TYPES and not re.fullmatch(SB_TYPES[k], v):
            bad(stem, f"sideband: {k}: {v!r} is not of its type")
        if k in rep:
            rep[k].append(v)
        else:
            sb[k] = v
    if sb.get("dialect") != m["dialect"] or int(sb.get("trace_bytes", -1)) != len(trace):
        bad(stem, "sideband: dialect or trace_bytes")
    if sb.get("trace_xxh3") != xxh3(trace) or m["digests"]["trace_xxh3"] != xxh3(trace):
        bad(stem, "sideband/manifest: trace_xxh3 is not the trace's")
    mm = [v.split(" ", 6) for v in rep["mmap"]]
    want = [[x["address"], x["size"], x["offset"], x["prot"], str(x["at"]),
             x["build_id"] or "-", x["file"]] for x in m.get("mmaps", [])]
    if mm != want:
        bad(stem, f"sideband mmap lines != manifest mmaps ({len(mm)}, {len(want)})")
    maps = [v.split(" ", 2) for v in rep["map"]]
    want = [[im["kind"], im.get("bias", im.get("address")), im["file"]] for im in m["images"]]
    if maps != want:
        bad(stem, f"sideband map {maps} != manifest images {want}")
    hs = [{"vector": int(a), "ip": b} for a, b in (v.split() for v in rep["handler"])]
    if hs != m["handlers"]:
        bad(stem, "sideband handlers != manifest")
    ms = [v.split() for v in rep["msr"]]
    if ms != [[x["msr"], x["value"]] for x in m["msrs"]]:
        bad(stem, "sideband msr lines != manifest msrs")
    if [int(a, 16) for a, _ in ms] != sorted(int(a, 16) for a, _ in ms):
        bad(stem, "sideband msr lines not in ascending order")
    return sb


# ---------------------------------------------------------------- flow

M64 = (1 << 64) - 1


def varint(b, p):
    """An unsigned LEB128 at b[p]: (value, next position)."""
    v = sh = 0
    while True:
        x = b[p]
        p += 1
        if sh == 63 and x > 1:
            raise ValueError("varint longer than 64 bits")
        v |= (x & 0x7f) << sh
        if not x & 0x80:
            return v, p
        sh += 7


def zigzag(z):
    return (z >> 1) ^ (-(z & 1) & M64)


def flow_v2_records(stem, b):
    """Version 2's blocks (b: after the header, up to the trailer) back
    to the canonical 64-byte records, as docs/formats.md codes them."""
    st = dict(next_ip=0, cycles=0, dcyc=0, tsc=0, flags=0, cr3=0, cpl=0, mode=0)
    table = [(0, 0, 0)] * 4096
    out = bytearray()
    p = 0
    while p < len(b):
        nrec, nbytes = struct.unpack_from("<II", b, p)
        if not (1 <= nrec <= 16384 and nrec <= nbytes <= 73 * nrec):
            raise ValueError("flow v2: block header")
        p += 8
        end = p + nbytes
        for _ in range(nrec):
            tag = b[p]
            p += 1
            ip = st["next_ip"]
            if tag & 1:
                z, p = varint(b, p)
                ip = (ip + zigzag(z)) & M64
            nd = 0
            if tag & 2:
                nd, p = varint(b, p)
                nd = zigzag(nd)
            slot = ((ip * 0x9e3779b97f4a7c15) & M64) >> 52
            kind, cls, ln = table[slot]
            if tag & 4:
                kind, cls, ln = b[p], b[p + 1], b[p + 2]
                p += 3
            table[slot] = (kind, cls, ln)
            nxt = (ip + ln + nd) & M64
            d = st["dcyc"]
            if tag & 8:
                z, p = varint(b, p)
                d = (d + zigzag(z)) & M64
            cycles = (st["cycles"] + d) & M64
            tsc = (st["tsc"] + d) & M64
            if tag & 16:
                z, p = varint(b, p)
                tsc = (tsc + zigzag(z)) & M64
            flags = st["flags"]
            if tag & 32:
                flags = b[p]
                p += 1
            cr3, cpl, mode = st["cr3"], st["cpl"], st["mode"]
            if tag & 64:
                cr3, p = varint(b, p)
                cpl, mode = b[p], b[p + 1]
                p += 2
            vector = msr = value = 0
            if tag & 128:
                vector = b[p]
                msr, p = varint(b, p + 1)
                value, p = varint(b, p)
            if p > end:
                raise ValueError("flow v2: a record runs past its block")
            out += struct.pack("<QQQQQQIBBBBBBBBI", ip, nxt, cr3, cycles, tsc, value, msr,
                               kind, cls, ln, flags, cpl, mode, vector, 0, 0)
            st.update(next_ip=nxt, cycles=cycles, dcyc=d, tsc=tsc, flags=flags, cr3=cr3,
                      cpl=cpl, mode=mode)
        if p != end:
            raise ValueError("flow v2: a block's bytes go on after its records")
    return bytes(out)


def flow_body(stem, b):
    """The canonical records of a binary flow of either version, or None."""
    if len(b) < 40 or b[:8] != b"RTITFLOW" or struct.unpack_from("<II", b, 8) not in ((1, 64), (2, 64)):
        bad(stem, "flow: header")
        return None
    if struct.unpack_from("<I", b, 8)[0] == 2:
        return flow_v2_records(stem, b[16:-24])
    return b[16:-24]


def check_v2_copies(d, seeds):
    """Each SEEDS/NAME.v2.flow (rtitsim run --flow-version 2) against the
    bundle's NAME.flow (version 1): the same records, the same trailer."""
    n = 0
    for path in sorted(glob.glob(os.path.join(seeds, "*.v2.flow"))):
        name = os.path.basename(path)[:-len(".v2.flow")]
        ref = os.path.join(d, name + ".flow")
        if not os.path.exists(ref):
            continue
        b2, b1 = open(path, "rb").read(), open(ref, "rb").read()
        try:
            body = flow_body(name, b2)
        except (ValueError, IndexError, struct.error) as e:
            bad(name, f"flow v2: unreadable: {e}")
            continue
        if body != b1[16:-24]:
            bad(name, "flow v2: its records differ from version 1's")
        if b2[-24:] != b1[-24:] or xxh3(body) != b2[-8:].hex():
            bad(name, "flow v2: trailer")
        n += 1
    return n


def read_flow(stem, b, sb):
    body = flow_body(stem, b)
    if body is None:
        return []
    tr = b[-24:]
    if len(body) % 64 or tr[:8] != b"RTITEND\0":
        bad(stem, "flow: records or trailer")
        return []
    n = struct.unpack_from("<Q", tr, 8)[0]
    if n != len(body) // 64 or tr[16:].hex() != xxh3(body):
        bad(stem, "flow: trailer count or digest")
    if int(sb.get("flow_records", -1)) != n or sb.get("flow_xxh3") != xxh3(body):
        bad(stem, "flow: sideband flow_records/flow_xxh3")
    recs = []
    for i in range(n):
        f = struct.unpack_from("<QQQQQQIBBBBBBB", body, 64 * i)
        r = dict(zip(["ip", "next", "cr3", "cycles", "tsc", "value", "msr", "kind", "cls",
                      "len", "flags", "cpl", "mode", "vector"], f))
        if body[64 * i + 59:64 * i + 64] != b"\0" * 5 or r["kind"] not in (1, 2):
            bad(stem, f"flow record {i}: kind or the zero bytes")
        recs.append(r)
    ni = sum(r["kind"] == 1 for r in recs)
    if int(sb.get("instructions", -1)) != ni or int(sb.get("events", -1)) != n - ni:
        bad(stem, "flow: instructions/events against the sideband")
    return recs


def extra(r):
    """EXTRA of docs/formats.md, by class or kind."""
    c, v, msr, vec, fl = r["cls"], r["value"], r["msr"], r["vector"], r["flags"]
    if r["kind"] == 1:
        name = CLASSES[c]
        if name == "int":
            return f" vec={vec}"
        if name in ("wrmsr", "rdmsr"):
            return f" msr=0x{msr:x} val=0x{v:x}"
        if name in ("ptwrite", "mov-cr3", "mov-cr0"):
            return f" val=0x{v:x}"
        if name == "mwait":
            return f" eax=0x{v:x} ecx=0x{msr:x} c={vec}"
        if name in ("xbegin", "xend"):
            return f" depth={vec}" + (" TX" if fl & F_TX else "")
        if name == "enclu":
            return f" leaf={v} " + ("debug" if vec else "opt-out")
        return ""
    name = KINDS[c]
    ft = "fault" if fl & F_FAULT else "trap"
    if name == "exception":
        return f" vec={vec} {ft} err=0x{msr:x} cr2=0x{v:x}"
    if name in ("interrupt", "nmi", "sipi", "uintr"):
        return f" vec={vec}"
    if name == "init":
        return " ap" if vec else ""
    if name == "freq":
        return f" ratio={v}"
    if name in ("sleep", "wake"):
        return f" c{vec} ticks={v}"
    if name == "msr-write":
        return f" msr=0x{msr:x} val=0x{v:x}"
    if name == "tsx-abort":
        return f" status=0x{v:x} depth={vec}"
    if name == "pebs":
        return f" eip=0x{v:x} groups=0x{vec:x} items=0x{msr:08x}"
    if name == "vmexit":
        # the vector for basic exit reasons 0 and 1 (D48)
        return f" reason={msr} qual=0x{v:x}" + (f" vec={vec}" if msr in (0, 1) else "")
    if name == "aex":
        return f" vec={vec} {ft} err=0x{msr:x} aep=0x{v:x}"
    return ""


def flow_line(r):
    tail = (f" cpl={r['cpl']} cr3=0x{r['cr3']:x} pg={int(bool(r['flags'] & F_PG))}"
            f" if={int(bool(r['flags'] & F_IF))} m={r['mode']} cyc={r['cycles']}"
            f" tsc={r['tsc']}" + (" enclave" if r["flags"] & F_ENCL else ""))
    if r["kind"] == 1:
        t = ("T " if r["flags"] & F_TAKEN else "") + ("ZLC " if r["flags"] & F_ZLC else "")
        return (f"I {r['ip']:016x} {CLASSES[r['cls']]:<8} len={r['len']} {t}-> "
                f"{r['next']:016x}{extra(r)}{tail}")
    return f"E {r['ip']:016x} {KINDS[r['cls']]:<8}{extra(r)} -> {r['next']:016x}{tail}"


def check_flow_text(stem, txt, events, recs):
    lines = txt.decode().split("\n")
    if lines[-1] != "" or len(lines) - 1 != len(recs):
        return bad(stem, f"flow.txt: {len(lines) - 1} lines for {len(recs)} records")
    for i, r in enumerate(recs):
        if lines[i] != flow_line(r):
            return bad(stem, f"flow.txt line {i + 1}: {lines[i]!r}, the document gives "
                             f"{flow_line(r)!r}")
    ev = "".join(ln + "\n" for ln in lines[:-1] if ln.startswith("E "))
    if events.decode() != ev:
        bad(stem, "events.txt is not the E lines of flow.txt")


# ---------------------------------------------------------------- dump

def check_dump(stem, jl, txt, trace):
    pos = 0
    tlines = txt.decode().split("\n")[:-1]
    jlines = jl.decode().split("\n")[:-1]
    if len(tlines) != len(jlines):
        bad(stem, f"dump: {len(tlines)} text lines, {len(jlines)} JSON lines")
    for i, ln in enumerate(jlines):
        o = json.loads(ln, object_pairs_hook=no_dup)
        if "error" in o:
            if not all(isinstance(o.get(k), t) for k, t in
                       (("offset", int), ("error", str), ("why", str), ("skipped", int))):
                bad(stem, f"dump.jsonl line {i + 1}: error line keys")
            pos = o["offset"] + o["skipped"]
            continue
        if not (isinstance(o.get("offset"), int) and isinstance(o.get("type"), str) and
                re.fullmatch(r"([0-9a-f]{2})+", o.get("bytes", ""))):
            return bad(stem, f"dump.jsonl line {i + 1}: offset/bytes/type")
        raw = bytes.fromhex(o["bytes"])
        if o["offset"] != pos or trace[pos:pos + len(raw)] != raw:
            return bad(stem, f"dump.jsonl line {i + 1}: not the trace's bytes at {pos}")
        if "ip" in o and not (o["ip"] in ("suppressed", None) or
                              re.fullmatch(r"0x[0-9a-f]{16}", o["ip"])):
            bad(stem, f"dump.jsonl line {i + 1}: ip {o['ip']!r}")
        for k in ("payload", "cr3", "tsc", "vmcs", "value", "last_ip"):
            if k in o and not HEX.match(o[k]):
                bad(stem, f"dump.jsonl line {i + 1}: {k} is not a hex string")
        want = f"{pos:08x}  " + "".join(f"{b:02x} " for b in raw)
        if i < len(tlines) and not (tlines[i].startswith(want) and
                                    tlines[i][58:].split()[0] == o["type"]):
            bad(stem, f"dump.txt line {i + 1}: {tlines[i]!r} (offset, bytes, name)")
        pos += len(raw)
    if pos != len(trace):
        bad(stem, f"dump: the packets cover {pos} of {len(trace)} bytes")


# --------------------------------------------------------------- image

def elf_segments(b):
    """(vaddr, filesz, offset) of each PT_LOAD: ELF64 or ELF32."""
    if b[:4] != b"\x7fELF":
        return None
    c64 = b[4] == 2
    if c64:
        phoff, = struct.unpack_from("<Q", b, 32)
        phentsize, phnum = struct.unpack_from("<HH", b, 54)
    else:
        phoff, = struct.unpack_from("<I", b, 28)
        phentsize, phnum = struct.unpack_from("<HH", b, 42)
    segs = []
    for i in range(phnum):
        o = phoff + i * phentsize
        if c64:
            t, _, off, va, _, fs = struct.unpack_from("<IIQQQQ", b, o)
        else:
            t, off, va, _, fs = struct.unpack_from("<IIIII", b, o)
        if t == 1:
            segs.append((va, fs, off))
    return segs


def check_image(stem, images, recs):
    regions = []
    for kind, at, b, name in images:
        if kind == "raw":
            regions.append((at, b))
            continue
        segs = elf_segments(b)
        if not segs:
            return bad(stem, f"{name}: not an ELF with PT_LOAD segments")
        regions += [(va + at, b[off:off + fs]) for va, fs, off in segs]
    missing = 0
    for r in recs:
        if r["kind"] != 1:
            continue
        if not any(a <= r["ip"] and r["ip"] + r["len"] <= a + len(by) for a, by in regions):
            missing += 1
    return missing


def main():
    d = sys.argv[1]
    v2 = check_v2_copies(d, sys.argv[2]) if len(sys.argv) > 2 else 0
    stems = sorted(os.path.basename(p)[:-len(".manifest.json")]
                   for p in glob.glob(os.path.join(d, "*.manifest.json")))
    outside = 0
    for stem in stems:
        try:
            m, data, images = check_manifest(d, stem)
            sbtext = open(os.path.join(d, m["files"]["sideband"]["file"])).read()
            sb = check_sideband(stem, sbtext, m, data["trace"])
            recs = read_flow(stem, data["flow_bin"], sb)
            check_flow_text(stem, data["flow_txt"], data["events_txt"], recs)
            check_dump(stem, data["dump_jsonl"], data["dump_txt"], data["trace"])
            outside += check_image(stem, images, recs) or 0
        except (ValueError, KeyError, TypeError, OSError, struct.error) as e:
            bad(stem, f"unreadable: {type(e).__name__}: {e}")
    for p in problems:
        print(p)
    print(f"check_formats: {len(stems)} bundles, {len(problems)} problems; "
          f"{outside} ground-truth instructions outside the images"
          + (f"; {v2} version 2 flows against version 1" if len(sys.argv) > 2 else ""))
    return 1 if problems or len(stems) == 0 or (len(sys.argv) > 2 and v2 == 0) else 0


if __name__ == "__main__":
    sys.exit(main())
