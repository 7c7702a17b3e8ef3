#!/usr/bin/env python3
"""test_dump_json.py RTITSIM - `rtitsim dump --json` over streams holding
every packet type of both dialects (issue 17 point 10).

Each line must parse with Python's json module with duplicate keys
rejected (object_pairs_hook), and carry exactly the keys and values below.
The bytes and the values were worked out by hand from the manuals (RTIT
Programming Reference chapter 4 and Table 18; SDM 33.4.2, Tables 33-16 to
33-51 and Table 33-18), the cited row by row; the schema is
docs/formats.md "rtitsim dump --json" (D85).
"""
import json
import os
import subprocess
import sys
import tempfile

R = sys.argv[1]
fails = 0


def no_dups(pairs):
    keys = [k for k, _ in pairs]
    dup = sorted({k for k in keys if keys.count(k) > 1})
    if dup:
        raise ValueError("duplicate key(s) %s" % dup)
    return dict(pairs)


def check(name, ok, detail=""):
    global fails
    if not ok:
        fails += 1
        print("FAIL: %s %s" % (name, detail))


def dump(hexbytes, *opts):
    with tempfile.NamedTemporaryFile(suffix=".bin", delete=False) as f:
        f.write(bytes.fromhex(hexbytes.replace(" ", "")))
        path = f.name
    try:
        p = subprocess.run([R, "dump", "--json", *opts, path], capture_output=True, text=True)
    finally:
        os.unlink(path)
    return p.returncode, p.stdout


def run(name, rows, *opts):
    """rows: (hex bytes, {expected members but offset and bytes}) in
    stream order; the offset is the sum of the sizes before."""
    rc, out = dump(" ".join(b for b, _ in rows), *opts)
    check(name + ": exit 0", rc == 0, "(got %d)" % rc)
    lines = out.splitlines()
    check(name + ": one line per packet", len(lines) == len(rows),
          "(%d lines for %d packets)" % (len(lines), len(rows)))
    off = 0
    for (hx, exp), line in zip(rows, lines):
        raw = hx.replace(" ", "")
        want = {"offset": off, "bytes": raw}
        want.update(exp)
        try:
            got = json.loads(line, object_pairs_hook=no_dups)
        except ValueError as e:
            check("%s: offset %d parses" % (name, off), False, "%s: %s" % (e, line))
        else:
            check("%s: %s at offset %d" % (name, exp.get("type"), off), got == want,
                  "\n  got  %s\n  want %s" % (got, want))
        off += len(raw) // 2


# RTIT (chapter 4; IPs by Table 18, LAST_LIP per 3.3.7 and 4.2.3.1).
rtit = [
    # 4.2.1 Figure 3; clears LAST_LIP's valid bits (3.3.7, D4)
    ("c0 00 00 00 00 00 00 00 00", {"type": "PSB"}),
    # 4.2.2: stop bit at bit 3, bits 101 = T,N,T oldest first (3.3.13)
    ("0d", {"type": "TNT", "tnt": "TNT"}),
    # 4.2.4 Figure 8 Event 000b, Zext=1 CNT=00: LIP[15:0]=0x0102, [47:16]=0
    ("84 02 01", {"type": "FUP.PGE", "ipc": 0, "zext": True, "payload": "0x102",
                  "ip": "0x0000000000000102"}),
    # 4.2.3 Table 18: Zext=0 CNT=00: LIP[47:16] from LAST_LIP 0x102
    ("b0 bc 9a", {"type": "TIP", "ipc": 0, "zext": False, "payload": "0x9abc",
                  "ip": "0x0000000000009abc", "last_ip": "0x0000000000000102"}),
    # Zext=1 CNT=01: LIP[31:0], [47:32]=0
    ("b5 45 23 01 00", {"type": "TIP", "ipc": 1, "zext": True, "payload": "0x12345",
                        "ip": "0x0000000000012345", "last_ip": "0x0000000000009abc"}),
    # 4.2.4 Event 011b, Zext=0 CNT=01: LIP[47:32] from LAST_LIP (0)
    ("99 10 20 30 40", {"type": "FUP.PCC", "ipc": 1, "zext": False, "payload": "0x40302010",
                        "ip": "0x0000000040302010", "last_ip": "0x0000000000012345"}),
    # 4.2.4 Event 111b, CNT=10: LIP[47:0] low byte first (D1)
    ("ba 00 10 00 00 ff 7f", {"type": "FUP.FAR", "ipc": 2, "zext": False,
                              "payload": "0x7fff00001000", "ip": "0x00007fff00001000",
                              "last_ip": "0x0000000040302010"}),
    # CNT=10 with LIP bit 47 set: the IP is bit 47 sign-extended
    ("b2 00 10 00 81 ff ff", {"type": "TIP", "ipc": 2, "zext": False,
                              "payload": "0xffff81001000", "ip": "0xffffffff81001000",
                              "last_ip": "0x00007fff00001000"}),
    # Zext=0 CNT=00 against the 48-bit LAST_LIP 0xffff81001000
    ("b0 20 04", {"type": "TIP", "ipc": 0, "zext": False, "payload": "0x420",
                  "ip": "0xffffffff81000420", "last_ip": "0x0000ffff81001000"}),
    # Event 001b, Zext=1
    ("8c 05 01", {"type": "FUP.PGD", "ipc": 0, "zext": True, "payload": "0x105",
                  "ip": "0x0000000000000105", "last_ip": "0x0000ffff81000420"}),
    # 4.2.10 Figure 9: PG=1 (bit 0), CR3[39:0] low byte first
    ("c3 00 50 34 12 00", {"type": "PIP", "cr3": "0x12345000", "pg": 1}),
    # 4.2.12 Figure 11: RNG=00, TSC[14:7]=0x81
    ("c4 81", {"type": "MTC", "ctc": 0x81, "range": 0}),
    # 4.2.13 Figure 12: ACBR = byte0[2:0]:byte1[7:6] = 110:11 = 0x1b,
    # ECBR = byte1[5:0] = 0x10, TSC[39:0] low byte first
    ("d6 d0 05 04 03 02 01", {"type": "STS", "acbr": 0x1b, "ecbr": 0x10, "tsc": "0x102030405"}),
    # 4.2.11 Figure 10
    ("c1", {"type": "TraceSTOP"}),
    # 4.2.4 Event 010b, CNT=10; 4.2.5: LAST_LIP's valid bits are cleared
    # before it is built, so no last IP
    ("92 01 02 03 04 05 06", {"type": "FUP.BuffOvf", "ipc": 2, "zext": False,
                              "payload": "0x60504030201", "ip": "0x0000060504030201"}),
    # the FUP.BuffOvf did not load LAST_LIP (4.2.3.1, D4): unknown upper bits
    ("b0 34 12", {"type": "TIP", "ipc": 0, "zext": False, "payload": "0x1234", "ip": None}),
]
run("rtit", rtit, "--dialect", "rtit")

# RTIT cycle-accurate (4.2.15: a cycle count packet follows a TIP; 4.2.14
# Figure 13: CCNT=01b, CNTP[5:0] = 0x15 >> 2 = 5).
run("rtit cycle-accurate", [
    ("b4 83 09", {"type": "TIP", "ipc": 0, "zext": True, "payload": "0x983",
                  "ip": "0x0000000000000983"}),
    ("15", {"type": "CCP", "cycles": 5}),
], "--cycle-accurate")

# Intel PT (33.4.2; IPs by Table 33-18, LastIP reset to 0 by the PSB, 33.4.2.2).
pt = [
    ("02 82 02 82 02 82 02 82 02 82 02 82 02 82 02 82", {"type": "PSB"}),   # Table 33-36
    ("02 23", {"type": "PSBEND"}),                                          # Table 33-37
    ("00", {"type": "PAD"}),                                                # Table 33-39
    # Table 33-16 short TNT: bits 1 below the stop bit: 0x1a >> 1 = 1101b
    ("1a", {"type": "TNT", "tnt": "TNT"}),
    # Table 33-16 Long TNT: payload 0x03: stop bit 1, one bit T
    ("02 a3 03 00 00 00 00 00", {"type": "LongTNT", "tnt": "T"}),
    # Table 33-20 TIP.PGE, IPBytes=011b: IP[47:0], bit 47 sign-extended
    ("71 00 10 40 00 00 00", {"type": "TIP.PGE", "ipc": 3, "payload": "0x401000",
                              "ip": "0x0000000000401000", "last_ip": "0x0000000000000000"}),
    # Table 33-17, IPBytes=001b: IP[15:0], IP[63:16] from the last IP
    ("2d ab 89", {"type": "TIP", "ipc": 1, "payload": "0x89ab",
                  "ip": "0x00000000004089ab", "last_ip": "0x0000000000401000"}),
    # IPBytes=000b: suppressed (the last IP stays)
    ("0d", {"type": "TIP", "ipc": 0, "payload": "0x0", "ip": "suppressed",
            "last_ip": "0x00000000004089ab"}),
    # Table 33-21 TIP.PGD, IPBytes=001b
    ("21 34 12", {"type": "TIP.PGD", "ipc": 1, "payload": "0x1234",
                  "ip": "0x0000000000401234", "last_ip": "0x00000000004089ab"}),
    # Table 33-22 FUP, IPBytes=110b: IP[63:0]
    ("dd 01 02 03 04 05 06 07 88", {"type": "FUP", "ipc": 6, "payload": "0x8807060504030201",
                                    "ip": "0x8807060504030201",
                                    "last_ip": "0x0000000000401234"}),
    # Table 33-24: NR = byte 2 bit 0; CR3[51:5] = bytes 2-7 >> 1, << 5
    ("02 43 01 45 23 01 00 00", {"type": "PIP", "cr3": "0x12345000", "nr": 1}),
    # Table 33-26: leaf 000b, bits CS.L=1 CS.D=0 IF=1
    ("99 05", {"type": "MODE.Exec", "csl": 1, "csd": 0, "if": 1}),
    # Table 33-27: leaf 001b, InTX=1
    ("99 21", {"type": "MODE.TSX", "intx": 1, "abrt": 0}),
    ("02 83", {"type": "TraceStop"}),                                       # Table 33-28
    ("02 03 20 00", {"type": "CBR", "ratio": 0x20}),                        # Table 33-29
    # Table 33-30: TSC[55:0] low byte first
    ("19 cd ab 89 67 45 23 01", {"type": "TSC", "tsc": "0x123456789abcd"}),
    ("59 5a", {"type": "MTC", "ctc": 0x5a}),                                # Table 33-31
    # Table 33-32: CTC[15:0] bytes 2-3, FC[7:0] byte 5, FC[8] byte 6 bit 0
    ("02 73 34 12 00 ff 01", {"type": "TMA", "ctc": 0x1234, "fc": 0x1ff}),
    # Table 33-33: 0x07: Exp=1, Cyc[4:0]=0; 0x02: Cyc[11:5]=1, Exp=0 -> 32
    ("07 02", {"type": "CYC", "cycles": 32}),
    # Table 33-34: VMCS pointer[51:12] in bytes 2-6
    ("02 c8 78 56 34 12 00", {"type": "VMCS", "vmcs": "0x12345678000"}),
    ("02 f3", {"type": "OVF"}),                                             # Table 33-35
    # Table 33-38: 02 C3 88 + Payload[63:0]
    ("02 c3 88 01 02 03 04 05 06 07 08", {"type": "MNT", "payload": "0x807060504030201"}),
    # Table 33-40: byte 1 = IP(7) PayloadBytes(6:5) 10010b: 0x92 IP=1 4 bytes
    ("02 92 78 56 34 12", {"type": "PTW", "payload": "0x12345678", "payload_bytes": 4,
                           "ip_bit": 1}),
    # 0x32: IP=0 PayloadBytes=01b, 8 bytes
    ("02 32 01 02 03 04 05 06 07 08", {"type": "PTW", "payload": "0x807060504030201",
                                       "payload_bytes": 8, "ip_bit": 0}),
    ("02 e2", {"type": "EXSTOP", "ip_bit": 1}),                             # Table 33-41
    # Table 33-42: hints byte 2, EXT byte 6
    ("02 c2 21 00 00 00 03 00 00 00", {"type": "MWAIT", "hints": 0x21, "ext": 3}),
    # Table 33-43: byte 2 bit 7 HW; byte 3 = C-state[3:0]:sub[3:0] = 2:1
    ("02 22 80 21", {"type": "PWRE", "cstate": 2, "substate": 1, "hw": 1}),
    # Table 33-44: byte 2 = last[3:0]:deepest[3:0] = 6:3; wake reason byte 3
    ("02 a2 63 01 00 00 00", {"type": "PWRX", "last": 6, "deepest": 3, "wake": 1}),
    # Tables 33-49/33-50: byte 2 = IP(7) Type(4:0): 0x81 IP=1 INTR; vector 0x20
    ("02 13 81 20", {"type": "CFE", "event_type": 1, "vector": 0x20, "ip_bit": 1}),
    # Table 33-51: Type 0 (CR2), Payload[63:0] bytes 3-10
    ("02 53 00 00 10 40 00 00 00 00 00", {"type": "EVD", "event_type": 0,
                                          "payload": "0x401000"}),
    # Table 33-45: byte 2 = SZ(7) Type(4:0): 0x81 4-byte items, GPRs
    ("02 63 81", {"type": "BBP", "block_type": 1, "item_bytes": 4}),
    # Table 33-46: ID[4:0] in bits 7:3 = 2, 4-byte item; Table 33-47: the
    # GPR block's item 2 is RAX
    ("14 78 56 34 12", {"type": "BIP", "id": 2, "item": "RAX", "value": "0x12345678"}),
    ("02 33", {"type": "BEP", "ip_bit": 0}),                                # Table 33-48
]
run("pt", pt, "--dialect", "pt")

# An error line has its own members and no duplicates either.
rc, out = dump("b4 83 09 e0 11 c0 00 00 00 00 00 00 00 00", "--dialect", "rtit")
err = [json.loads(l, object_pairs_hook=no_dups) for l in out.splitlines()]
check("error exit 3", rc == 3, "(got %d)" % rc)
check("error line", len(err) == 3 and set(err[1]) == {"offset", "error", "why", "skipped"}
      and err[1]["offset"] == 3 and err[1]["skipped"] == 2, str(err))

print("%s" % ("ok" if not fails else "%d failure(s)" % fails))
sys.exit(1 if fails else 0)
