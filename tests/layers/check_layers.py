#!/usr/bin/env python3
"""check_layers.py SRCDIR - the library's layers hold (README "Layout").

Each source folder and each public header belongs to one layer, bottom up:
packet < isa < encoder < flow (decoder/) < sim < session < cli.  A file may
include headers of its own layer or a lower one, never a higher one.  Also
checks that the decoding half (packet, isa, flow) never includes Unicorn.
Prints every violation as FILE:LINE: what, and exits 1 if there is one.
"""
import os
import re
import sys

LAYERS = ["packet", "isa", "encoder", "flow", "sim", "session", "cli"]
RANK = {name: i for i, name in enumerate(LAYERS)}

# Source folders.
DIRS = {
    "packet": "packet", "isa": "isa", "encoder": "encoder",
    "decoder": "flow", "sim": "sim", "session": "session", "cli": "cli",
}

# Public headers (include/rtit/NAME.h); every one must be listed.
HEADERS = {
    "bits.h": "packet", "error.h": "packet", "ip.h": "packet",
    "msr_pt.h": "packet", "msr_rtit.h": "packet", "opcodes_pt.h": "packet",
    "opcodes_rtit.h": "packet", "packet.h": "packet", "pebs.h": "packet",
    "pktdec.h": "packet", "print.h": "packet", "version.h": "packet",
    "record.h": "isa", "asm.h": "isa",
    "rtit_state.h": "encoder", "pt_state.h": "encoder",
    "rtit_encoder.h": "encoder", "pt_encoder.h": "encoder",
    "encoder.h": "encoder", "state.h": "encoder",
    "flow.h": "flow", "image.h": "flow", "sideband.h": "isa", "pt_errata.h": "isa",
    "rtitsim.h": "flow",
    "sim.h": "sim", "scenario.h": "sim",
    "session.h": "session", "perfdata.h": "session", "bundle.h": "session",
}

INC = re.compile(r'^\s*#\s*include\s*[<"]([^">]+)[">]')


def layer_of_include(path, including_file):
    """The layer of an included header, or None for system headers."""
    if path.startswith("rtit/"):
        name = path[len("rtit/"):]
        return HEADERS.get(name, "?" + name)
    if path.startswith("unicorn/"):
        return "sim"
    # a relative include: resolve against the including file
    full = os.path.normpath(os.path.join(os.path.dirname(including_file), path))
    if os.path.exists(full):
        return layer_of_file(full)
    return None


def layer_of_file(path):
    rel = os.path.relpath(path, SRC)
    parts = rel.split(os.sep)
    if parts[0] == "include" and len(parts) == 3:
        return HEADERS.get(parts[2], "?" + parts[2])
    return DIRS.get(parts[0])


def main():
    bad = 0
    for hdr in sorted(os.listdir(os.path.join(SRC, "include", "rtit"))):
        if hdr.endswith(".h") and hdr not in HEADERS:
            print(f"include/rtit/{hdr}: not assigned to a layer in {sys.argv[0]}")
            bad += 1
    files = []
    for top in list(DIRS) + ["include"]:
        for root, _, names in os.walk(os.path.join(SRC, top)):
            files += [os.path.join(root, n) for n in names if n.endswith((".c", ".h"))]
    for f in sorted(files):
        own = layer_of_file(f)
        if own is None or own.startswith("?"):
            continue
        with open(f, encoding="utf-8") as fh:
            for ln, line in enumerate(fh, 1):
                m = INC.match(line)
                if not m:
                    continue
                inc = layer_of_include(m.group(1), f)
                if inc is None:
                    continue
                rel = os.path.relpath(f, SRC)
                if inc.startswith("?"):
                    print(f"{rel}:{ln}: includes {m.group(1)}, a header of no layer")
                    bad += 1
                elif RANK[inc] > RANK[own]:
                    print(f"{rel}:{ln}: layer {own} includes {m.group(1)} of layer {inc}")
                    bad += 1
    if bad:
        print(f"check_layers: {bad} violation(s)")
        return 1
    print(f"check_layers: {len(files)} files, the layers hold "
          f"({' < '.join(LAYERS)})")
    return 0


if __name__ == "__main__":
    SRC = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
    sys.exit(main())
