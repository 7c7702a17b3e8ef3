#!/usr/bin/env python3
"""gen_stress.py SEED [rtit|pt [libipt|perf]] > OUT.scn - a random scenario for the flow
decoder's round trip, in either dialect (the same program for a seed): a kernel that enters user mode, user code with loops on
RDRAND-driven conditions, nested direct and indirect calls (RET compression
kept and broken), indirect jumps, INT n, SYSCALL, faults (#UD, #DE) whose
handlers skip the instruction, and a random trace configuration: CPL
filtering, a filter range, Cycle_Acc, Cmprs_Ret, MTC, PSB frequency, a small
internal buffer (overflows), injected interrupts, NMI, SMI, VM exits, sleep,
frequency changes, external RTIT_CTL writes, and the errata the decoder
tolerates.  In the pt dialect, some seeds add RTM transactions (XBEGIN ..
XEND, nested ones, XABORT, stores, calls and faults inside, a small write
set for capacity aborts, injected tsx-aborts), and PEBS records output
to Intel PT (a counter period, USR/OS and the groups at random): they are
drawn from generators of their own, so the rest of the program is the
seed's in both dialects.  Some pt seeds call an SGX enclave (debug or
opt-out) with EENTER/EEXIT, where interrupts, NMI, SMI and VM exits are
AEXs resumed by the AEP's ERESUME: a generator of their own too.
`pt libipt` leaves out what libipt 2.0.5 cannot decode (Event Trace, PEBS
blocks, enclaves, VM exits: docs/decisions.md D61), the rest of the seed's
scenario unchanged, for the libipt cross-check of the property test
(tests/libipt/run_ptflow_stress.sh); `pt perf` what Linux perf 6.1 cannot
(VM exits, opt-out enclaves, Event Trace with an enclave, SMIs with Event
Trace: D62), for the perf cross-check (tests/perf/run_perf_stress.sh).
64-bit programs live at one of several bases and put more code and a
table of code pointers in 2-4 further regions (across 64 KiB and 4 GiB,
the top of the user half, the kernel half, the last MiB), with calls,
jumps and returns between them (issue 16, D94); some seeds force the
settings that reach the rare packet forms (3-byte CCPs, MTC_Range 3, PIPs
with CR0.PG = 0: D95).  Deterministic for a seed."""
import random
import sys

seed = int(sys.argv[1])
pt = len(sys.argv) > 2 and sys.argv[2] == "pt"
libipt = pt and len(sys.argv) > 3 and sys.argv[3] == "libipt"
perf = pt and len(sys.argv) > 3 and sys.argv[3] == "perf"
rnd = random.Random(seed)
# the trace configuration draws from its own generator: the program of a
# seed is the same in both dialects
crnd = random.Random(seed * 7919 + 1)
# RFLAGS.IF changes (CLI, STI, POPF; Intel PT reports them with EventEn)
# draw from a third one, so the rest of a seed's program is as it was
irnd = random.Random(seed * 15485863 + 7)
# RTM transactions (pt only): their own generator too
trnd = random.Random(seed * 104729 + 3)
tsx = pt and seed % 7 != 3 and trnd.random() < 0.6
# VMX (pt only): exit reasons and the VMX controls for Intel PT (D48)
vrnd = random.Random(seed * 2654435761 + 11)
# PEBS output to Intel PT (pt only, D53-D55): its own generator as well
prnd = random.Random(seed * 1299709 + 11)
pebs = pt and prnd.random() < 0.5 and not libipt
# SGX enclave calls (pt only, SDM Vol. 3D): their own generator as well
ernd = random.Random(seed * 1299721 + 13)
sgx = pt and seed % 7 != 3 and ernd.random() < 0.4 and not libipt
sgx_debug = ernd.random() < 0.5
# perf 6.1 cannot bind an opt-out enclave entry's TIP.PGD() (D62)
sgx = sgx and not (perf and not sgx_debug)
sgx_calls = 0
# Where the 64-bit program lives (issue 16): low (0x401000, or across
# 0x10000 where IP[47:16] = 0), the top of the user half (just below
# 2^47), across 4 GiB, or the kernel half (bit 47 set, sign-extended: at
# its start and at the usual kernel text), most of them across a 64 KiB
# boundary, so that every RTIT Table 18 row and Intel PT IPBytes form
# occurs; a generator of its own, so the rest of a seed is unchanged.  The
# libipt form too (ptflow_check gives libipt the whole image through its
# read callback); the perf form stays at 0x401000 (perf decodes kernel
# addresses as a guest's, D62).  Far pointers are m16:32, so above 4 GiB
# the far CALL and JMP become NOPs.
# The CPU a pt seed claims to be (issue 21, D111): family 6 models from
# libipt 2.0.5's pt_cpu_errata table (docs/decisions.md D100), or the
# default (none); each modelled erratum that CPU has is switched off at
# random, so the encoder reproduces the rest and both decoders, told the
# CPU, apply every workaround it has.  SKD010 is always off: an OVF whose
# FUP is dropped and that a TNT or TIP.PGD follows cannot be decoded by
# any workaround (the decoders report an error there, D108), and the
# round trip wants the truth.  SKZ84's condition is drawn too (D146).
# Not in the perf form (perf 6.1 has no
# workaround for APL11, SKD010, SKD007, BDM64, D107).  A generator of its
# own.
xrnd = random.Random(seed * 1000033 + 29)
CPU_MODELS = [0x3d, 0x47, 0x4f, 0x56, 0x4e, 0x5e, 0x8e, 0x9e, 0xa5, 0xa6, 0x55, 0x6a,
              0x6c, 0x8f, 0x66, 0x7d, 0x7e, 0x8c, 0x8d, 0xa7, 0xa8, 0x97, 0x9a, 0xbf,
              0x5c, 0x5f, 0x7a, 0x86, 0x96, 0x9c]
MODELLED = ["bdm70", "bdm64", "skd007", "skd010", "skl014", "apl12", "apl11", "skl168", "skz84"]
cpu_line = "default"
errata_off = []
if pt and not perf and xrnd.random() < 0.5:
    cpu_line = "6/0x%x/%d" % (xrnd.choice(CPU_MODELS), xrnd.randint(0, 15))
    errata_off = [e for e in MODELLED if xrnd.random() < 0.3 or e == "skd010"]
grnd = random.Random(seed * 1000003 + 17)
BASES = [0x401000, 0x401000, 0xf800, 0x7ffffffef800, 0xfffff800, 0xffff80000000f800,
         0xffffffff8100f800]
base = 0x401000 if perf else grnd.choice(BASES)
far_ok = base + 0x100000 < 1 << 32   # the whole program below 4 GiB
# Several regions per program (issue 16): 64-bit seeds put 2-4 more
# sections of code, and one of data (a table of code pointers), at
# addresses of their own (`code asm ... .xN=ADDR`, ld --section-start), at
# the edges IP compression cares about: across 64 KiB (RTIT Table 18's
# IP[47:16]), across 4 GiB (IP[47:32]; Intel PT IPBytes 010b/100b, SDM
# Table 33-18), just above 4 GiB, the top of the user half (2^47 - 6 KiB),
# the first kernel-half address (2^64 - 2^47), the usual kernel text and
# the last page (a near call from there reaches low addresses across
# 2^64).  The main code and the regions call, jump and return between each
# other, directly when the rel32 reaches (+-2 GiB), else through a
# register or the pointer table; a transfer from the user half to the
# kernel half crosses the 2^47 hole.  A generator of its own; the perf
# form has none (perf 6.1 decodes kernel addresses as a guest's, D62).
xrnd = random.Random(seed * 7368787 + 19)
# The trace settings that reach the rare packet forms (issue 16), from a
# generator of their own, and forced in some seeds so that any 100
# consecutive seeds reach each (stress_coverage.py REQUIRED): 80 NOPs of
# 255 cycles each (over 2^14 cycles between two packets) at the user
# entry and the SYSCALL entry under Cycle_Acc without MTCs, for 3-byte
# CCPs (RTIT 4.2.14: CCNT 11b when CNTP[21:14] is not 0; Intel PT CYC of
# 3+ bytes); MTC_Range 3 (RTIT 4.2.12: TSC[20:13],
# an MTC every 2^13 ticks) and the other ranges in turn; 32-bit seeds that start with paging off
# (`cr0 0x11`) and toggle CR0.PG with MOV CR0, for PIPs with PG = 0 and 1
# (RTIT 4.2.10).
mrnd = random.Random(seed * 8675309 + 23)
rare_mtc = seed % 5 == 1 or mrnd.random() < 0.1
# (not with MTCs: an MTC's CCP would restart the count every 2^13 ticks)
rare = not rare_mtc and (seed % 5 == 2 or mrnd.random() < 0.1)
pg_off = seed % 7 == 3 and ((seed // 7) % 2 == 0 or mrnd.random() < 0.3)
REGION_AT = [0xff40, 0xffffff00, 0x100000400, 0x7fffffffe800, 0xffff800000000000,
             0xffffffff81000000, 0xfffffffffff00000]
DATA_AT = [0xfffffff8, 0x7ffffff00000, 0xffff800000200000, 0xffffffff81200000, 0x1fff0]
regions = []           # [(section, address, [function labels])]
if seed % 7 != 3 and not perf:
    cand = [a for a in REGION_AT if abs(a - base) > 0x100000 and
            abs(a + (1 << 64) - base) > 0x100000 and abs(a - (1 << 64) - base) > 0x100000]
    xrnd.shuffle(cand)
    for j, a in enumerate(sorted(cand[:xrnd.randint(2, 4)])):
        regions.append((".x%d" % j, a, ["g%d_%d" % (j, k) for k in range(xrnd.randint(1, 3))]))
used = [base] + [r[1] for r in regions]
data_at = [a for a in DATA_AT if all(abs(a - u) > 0x100000 for u in used)]
data_at = xrnd.choice(data_at) if regions else None
xtab = [f for r in regions for f in r[2]]
xpads = []             # [(pad label, back label, source address, pad's region index or -1)]


def near(a, b):
    """Whether a rel32 from around address a reaches around b (2^64 wraps)."""
    d = (b - a) % (1 << 64)
    return d < (1 << 31) - (1 << 20) or d > (1 << 64) - (1 << 31) + (1 << 20)


def xtransfer(op, src, dst_label, dst):
    """CALL or JMP from src to a label at dst: direct, through RAX, or (a
    call) through the pointer table."""
    k = xrnd.choice(["direct", "reg", "tab"] if near(src, dst) else ["reg", "reg", "tab"])
    if k == "tab" and op == "call" and dst_label in xtab:
        i = xtab.index(dst_label)
        if near(src, data_at):
            w("    call qword ptr [rip + xtab + %d]" % (8 * i))
        else:
            w("    movabs rax, offset xtab")
            w("    call qword ptr [rax + %d]" % (8 * i))
    elif k == "direct":
        w("    %s %s" % (op, dst_label))
    else:
        w("    movabs rax, offset %s" % dst_label)
        w("    %s rax" % op)


def xcross(src, j_min):
    """A call into a region (index >= j_min) or a jump there and back."""
    if not regions or j_min >= len(regions):
        return
    j = xrnd.randint(j_min, len(regions) - 1)
    if xrnd.random() < 0.7:
        f = xrnd.choice(regions[j][2])
        xtransfer("call", src, f, regions[j][1])
    else:
        pad, back = "XP%d" % len(xpads), "XB%d" % len(xpads)
        xpads.append((pad, back, src, j))
        xtransfer("jmp", src, pad, regions[j][1])
        w("%s:" % back)


def cond_block(r, tests, jccs):
    """A condition on RDRAND: a Jcc over one instruction."""
    l1 = newlab()
    w("    rdrand eax")
    w("    test eax, %d" % r.choice(tests))
    w("    %s %s" % (r.choice(jccs), l1))
    w("    add edx, 1")
    w("%s:" % l1)


def loop_block(r, n, forms):
    """A counted loop of 1..n iterations, closed by one of forms (None:
    DEC + JNZ)."""
    l1 = newlab()
    w("    mov ecx, %d" % r.randint(1, n))
    w("%s:" % l1)
    w("    add edx, ecx")
    w("    " + (r.choice(forms) if forms else "dec ecx\n    jnz %s") % l1)


def region_code(j):
    """Region j's functions: loops, conditions, calls and jumps into later
    regions, returns across; then the landing pads of jumps into it."""
    sec, at, funcs = regions[j]
    w("    .section %s, \"ax\"" % sec)
    for k, f in enumerate(funcs):
        w("%s:" % f)
        for _ in range(xrnd.randint(1, 3)):
            kind = xrnd.choice(["alu", "cond", "loop", "cross", "cross", "local"])
            if kind == "alu":
                w("    " + xrnd.choice(["add edx, 3", "xor esi, edx", "nop", "imul edx, edx, 5"]))
            elif kind == "cond":
                cond_block(xrnd, [1, 2, 3], ["jz", "jnz"])
            elif kind == "loop":
                loop_block(xrnd, 7, None)
            elif kind == "local" and k + 1 < len(funcs):
                w("    call %s" % funcs[xrnd.randint(k + 1, len(funcs) - 1)])
            elif kind == "cross":
                xcross(at, j + 1)
        w("    ret")


def region_pads(j):
    """The landing pads in region j (-1: the main code): back to where the
    jump came from."""
    for pad, back, src, pj in xpads:
        if pj != j:
            continue
        w("%s:" % pad)
        w("    add edx, 1")
        xtransfer("jmp", regions[j][1] if j >= 0 else base, back, src)


def pt_ctl(user_os):
    """IA32_RTIT_CTL (SDM Table 33-6) at random: TraceEn, BranchEn, OS/User."""
    c = 0x2001 | user_os
    if crnd.random() < 0.3:
        c |= 0x2 | (crnd.randint(0, 6) << 19)       # CYCEn, CYCThresh
    if crnd.random() < 0.3:
        c |= 0x200 | (crnd.choice([0, 3, 6, 9]) << 14)  # MTCEn, MTCFreq
    if crnd.random() < 0.4:
        c |= 0x400                                 # TSCEn
    if crnd.random() < 0.3:
        c |= 0x800                                 # DisRETC
    if crnd.random() < 0.3:
        c |= 0x10                                  # PwrEvtEn
    if crnd.random() < 0.2:
        c |= 1 << 31                               # EventEn
    if crnd.random() < 0.4:
        c |= crnd.randint(0, 3) << 24              # PSBFreq: 2K..16K
    return c


def pt_tail(c, cfg):
    """The buffer and the events, as for RTIT."""
    if crnd.random() < 0.3:
        cfg.append("param buffer_bytes = %d" % crnd.choice([24, 32, 48, 64]))
        cfg.append("param drain = 1/%d" % crnd.choice([2, 4, 8]))
    if crnd.random() < 0.2:
        cfg.append("param long_tnt = true")
    # implementation-specific packets a decoder skips (D46)
    if irnd.random() < 0.2:
        cfg.append("param pad_align = %d" % irnd.choice([4, 16, 64]))
    if irnd.random() < 0.1:
        cfg.append("param mnt = 0x%x" % irnd.getrandbits(64))
    if irnd.random() < 0.3:
        cfg.append("param deferred_tips = %d" % irnd.choice([1, 4, 16]))   # D47
    for key, p in (("vmx_conceal_nonroot", 0.2),
                   ("vmx_conceal_exit", 0.2), ("vmx_conceal_entry", 0.2),
                   ("vmx_guest_only", 0.2)):
        if vrnd.random() < p:
            cfg.append("param %s = 1" % key)                # D48
    if vrnd.random() < 0.25:
        cfg.append("param cyc_standalone = %d" % vrnd.choice([16, 64, 300, 4095]))  # D49
    if vrnd.random() < 0.25:
        cfg.append("param ip_compression = %s" % vrnd.choice(["update48", "full"]))  # D59


def vmexit_args():
    """A VM exit's reason, qualification and vector (D48)."""
    reason = vrnd.choice([0, 1, 6, 10, 12, 48, 52])
    a = " reason=%d qual=0x%x" % (reason, vrnd.getrandbits(vrnd.choice([1, 12, 64])))
    if reason <= 1:
        a += " vector=%d" % (vrnd.choice([2, 6, 14]) if reason == 0 else 0x20)
    return a
out = []
w = out.append

nfunc = rnd.randint(2, 6)
lab = 0


def newlab():
    global lab
    lab += 1
    return "L%d" % lab


def tsx_block(fidx):
    """An RTM transaction (SDM Vol. 1 ch. 16): it commits, or aborts on
    XABORT, a fault, an aborting instruction, a nested XABORT, the write
    set, or an injected event; the fallback goes on after it."""
    fb, out = newlab(), newlab()
    w("    xbegin %s" % fb)
    for _ in range(trnd.randint(1, 4)):
        k = trnd.choice(["store", "store", "alu", "cond", "call", "nested", "push",
                         "xabort", "ud", "cpuid", "lines", "xtest"])
        if k == "store":
            w("    mov qword ptr [rsp - %d], rdx" % (8 * trnd.randint(2, 40)))
        elif k == "alu":
            w("    add edx, %d" % trnd.randint(1, 9))
        elif k == "cond":
            l1 = newlab()
            w("    rdrand eax")
            w("    test eax, 1")
            w("    jz %s" % l1)
            w("    add edx, 1")
            w("%s:" % l1)
        elif k == "call" and fidx:
            w("    call f%d" % trnd.choice(fidx))   # INT, SYSCALL, faults abort
        elif k == "nested":
            w("    xbegin %s" % fb)
            w("    add edx, 2")
            if trnd.random() < 0.3:
                w("    xabort 0x%x" % trnd.randint(0, 255))
            w("    xend")
        elif k == "push":
            w("    push rdx")
            w("    pop rdx")
        elif k == "xabort" and trnd.random() < 0.5:
            w("    xabort 0x%x" % trnd.randint(0, 255))
        elif k == "ud" and trnd.random() < 0.3:
            w("    ud2")                 # aborts; the #UD is not delivered
        elif k == "cpuid" and trnd.random() < 0.3:
            w("    push rbx")
            w("    cpuid")               # always aborts (16.3.8.1)
            w("    pop rbx")
        elif k == "lines":
            l1 = newlab()                # stores to many lines: capacity
            w("    mov ecx, %d" % trnd.randint(2, 12))
            w("    lea rdi, [rsp - 64]")
            w("%s:" % l1)
            w("    mov [rdi], ecx")
            w("    sub rdi, 64")
            w("    dec ecx")
            w("    jnz %s" % l1)
        elif k == "xtest":
            w("    xtest")
    w("    xend")
    w("    jmp %s" % out)
    w("%s:" % fb)
    w("    add edx, 7")                  # EAX has the abort status
    w("%s:" % out)


def enclave_call():
    """EENTER (EAX = 2, RBX = TCS, RCX = AEP) into the enclave, which
    EEXITs to R14 = the next line."""
    global sgx_calls
    sgx_calls += 1
    w("    lea r14, [rip + S%d]" % sgx_calls)
    w("    mov eax, 2")
    w("    lea rbx, [rip + tcs0]")
    w("    lea rcx, [rip + aep0]")
    w("    enclu")
    w("S%d:" % sgx_calls)


def enclave_body():
    """The enclave's code (an ELRANGE page, then its TCS page): loops and
    conditions only (no faults: ERESUME would run them again), then
    EEXIT."""
    w("    .p2align 12")
    w("encl0:")
    for i in range(ernd.randint(1, 4)):
        k = ernd.choice(["alu", "cond", "loop"])
        if k == "alu":
            w("    add edx, %d" % ernd.randint(1, 9))
        elif k == "cond":
            w("    rdrand eax")
            w("    test eax, 1")
            w("    jz E%d" % i)
            w("    add edx, 1")
            w("E%d:" % i)
        else:
            w("    mov ecx, %d" % ernd.randint(1, 6))
            w("E%d:" % i)
            w("    add edx, ecx")
            w("    dec ecx")
            w("    jnz E%d" % i)
    w("    mov rbx, r14")
    w("    mov eax, 4")
    w("    enclu")
    w("    .p2align 12")
    w("tcs0:")
    w("    .quad 0")
    w("    .p2align 12")


def block(depth, fidx):
    """Random straight/branchy code; fidx: functions callable from here."""
    if tsx and trnd.random() < 0.12:
        tsx_block(fidx)
    if sgx and ernd.random() < 0.15:
        enclave_call()
    if regions and xrnd.random() < 0.2:
        xcross(base, 0)
    kind = rnd.choice(["alu", "cond", "cond", "loop", "call", "icall", "ijmp",
                       "int", "syscall", "ud", "de", "nested", "alu", "far", "farjmp"])
    if kind == "alu":
        for _ in range(rnd.randint(1, 4)):
            w("    " + rnd.choice(["add edx, 3", "xor esi, edx", "lea rdi, [rdi + 8]",
                                   "imul edx, edx, 5", "nop", "mov r8d, edx"]))
    elif kind == "cond":
        cond_block(rnd, [1, 2, 4, 3], ["jz", "jnz", "js", "jp"])
    elif kind == "loop":
        loop_block(rnd, 9, ["dec ecx\n    jnz %s", "loop %s"])
    elif kind == "call" and fidx:
        w("    call f%d" % rnd.choice(fidx))
    elif kind == "icall" and fidx:
        w("    lea rax, [rip + f%d]" % rnd.choice(fidx))
        w("    call rax")
    elif kind == "ijmp":
        l1 = newlab()
        w("    lea rax, [rip + %s]" % l1)
        w("    jmp rax")
        w("    ud2")
        w("%s:" % l1)
    elif kind == "int":
        w("    int 0x%x" % rnd.choice([0x21, 0x22]))
    elif kind == "syscall":
        w("    push rcx")
        w("    push r11")
        w("    syscall")
        w("    pop r11")
        w("    pop rcx")
    elif kind == "ud":
        w("    ud2")                     # #UD: the handler skips 2 bytes
    elif kind == "de":
        w("    push rdx")
        w("    push rcx")
        w("    xor ecx, ecx")
        w("    xor edx, edx")
        w("    mov eax, 7")
        w("    div ecx")                 # #DE: F7 F1, the handler skips 2
        w("    pop rcx")
        w("    pop rdx")
    elif kind == "far" and not far_ok:
        w("    nop")
    elif kind == "far":
        w("    call fword ptr [rip + fp_call]")   # far CALL, far RET back
    elif kind == "farjmp" and not far_ok:
        w("    nop")
    elif kind == "farjmp":
        l1 = newlab()
        w("    lea rax, [rip + %s]" % l1)
        w("    mov [rip + fp_jmp], eax")
        w("    jmp fword ptr [rip + fp_jmp]")     # far JMP to the next line
        w("%s:" % l1)
    elif kind == "nested" and depth < 2:
        l1 = newlab()
        w("    rdrand eax")
        w("    test eax, 1")
        w("    jz %s" % l1)
        for _ in range(rnd.randint(1, 3)):
            block(depth + 1, fidx)
        w("%s:" % l1)


if seed % 7 == 3:
    # 32-bit code at CPL 0: loops, calls, indirect branches, INT n, faults
    def block32(depth, fidx):
        kind = rnd.choice(["alu", "cond", "loop", "call", "icall", "ijmp", "int", "ud",
                           "nested"])
        if kind == "alu":
            w("    " + rnd.choice(["add edx, 3", "xor esi, edx", "lea edi, [edi + 8]", "nop"]))
        elif kind == "cond":
            l1 = newlab()
            w("    rdrand eax")
            w("    test eax, %d" % rnd.choice([1, 2, 3]))
            w("    %s %s" % (rnd.choice(["jz", "jnz", "js"]), l1))
            w("    add edx, 1")
            w("%s:" % l1)
        elif kind == "loop":
            l1 = newlab()
            w("    mov ecx, %d" % rnd.randint(1, 7))
            w("%s:" % l1)
            w("    add edx, ecx")
            w("    " + rnd.choice(["dec ecx\n    jnz " + l1, "loop " + l1]))
        elif kind == "call" and fidx:
            w("    call f%d" % rnd.choice(fidx))
        elif kind == "icall" and fidx:
            w("    lea eax, [f%d]" % rnd.choice(fidx))
            w("    call eax")
        elif kind == "ijmp":
            l1 = newlab()
            w("    lea eax, [%s]" % l1)
            w("    jmp eax")
            w("    ud2")
            w("%s:" % l1)
        elif kind == "int":
            w("    int 0x21")
        elif kind == "ud":
            w("    ud2")
        elif kind == "nested" and depth < 2:
            l1 = newlab()
            w("    rdrand eax")
            w("    test eax, 1")
            w("    jz %s" % l1)
            for _ in range(rnd.randint(1, 3)):
                block32(depth + 1, fidx)
            w("%s:" % l1)
        if pg_off and mrnd.random() < 0.15:
            w("    mov eax, cr0")            # MOV CR0 toggling PG: a PIP (4.2.10)
            w("    xor eax, 0x80000000")
            w("    mov cr0, eax")
    w("    .intel_syntax noprefix")
    w("    .globl start")
    w("start:")
    w("    mov ebx, %d" % rnd.randint(3, 30))
    w("main_loop:")
    for _ in range(rnd.randint(3, 10)):
        block32(0, list(range(nfunc)))
    w("    dec ebx")
    w("    jnz main_loop")
    w("    jmp done")
    for i in range(nfunc):
        w("f%d:" % i)
        for _ in range(rnd.randint(1, 4)):
            block32(1, list(range(i + 1, nfunc)))
        w("    ret")
    w("soft_int:")
    w("    add edx, 2")
    w("    iretd")
    w("irq:")
    w("    iretd")
    w("ud_handler:")
    w("    add dword ptr [esp], 2")
    w("    iretd")
    w("done:")
    w("    nop")
    ctl = 0x2005 | rnd.choice([0, 0x800]) | rnd.choice([0, 0x2])
    print("name     stress_%d" % seed)
    print('describe "random 32-bit program, seed %d"' % seed)
    if pt:
        print("dialect  pt\ncpu      default\nmode     32")
    else:
        print("dialect  rtit\ncpu      silvermont\nmode     32")
    print("code asm load=0x401000 entry=start")
    print("\n".join(out))
    print("end")
    print("handler 0x21 = soft_int\nhandler 0x20 = irq\nhandler 2 = irq\nhandler 6 = ud_handler")
    print("cpl 0\nreg eflags = 0x202")
    if pg_off:
        print("cr0 0x11")                        # PE, ET: paging off (D93)
    # no overflows with MOV CR0: a PIP lost in one leaves the decoder's
    # CR0.PG stale, and the next MOV CR0's PIP is then left unread (an
    # error, not a guess: D80)
    if rnd.random() < 0.3 and not pg_off:
        print("param buffer_bytes = 32\nparam drain = 1/4")
    if pt:
        print("msr IA32_RTIT_CTL = 0x%x" % (pt_ctl(0x4) & ~((libipt or (perf and sgx)) << 31)))
    else:
        print("msr RTIT_EVENTS = 0x37\nmsr RTIT_CTL = 0x%x" % ctl)
    for _ in range(rnd.randint(0, 4)):
        print("event at insn %d: %s" % (rnd.randint(10, 2000),
                                         rnd.choice(["interrupt vector=0x20", "nmi", "smi cycles=30"])))
    print("end-at done\nbudget 200000")
    sys.exit(0)

w("    .intel_syntax noprefix")
w("    .globl start")
w("start:")
w("    lea rax, [rip + syscall_entry]")
w("    mov rdx, rax")
w("    shr rdx, 32")
w("    mov ecx, 0xc0000082")
w("    wrmsr")
w("    lea rcx, [rip + user]")
w("    mov r11, 0x202")
if irnd.random() < 0.5:
    w("    push 0x202")                 # POPF at CPL 0: IF 0 -> 1
    w("    popfq")
    w("    pushfq")                     # and back: IF unchanged
    w("    popfq")
w("    sysretq")
w("user:")
LONG = "    .rept 80\n    nop\n    .endr"        # 2^14 cycles and more with cpi.other=255
if rare:
    w(LONG)
if irnd.random() < 0.5:
    w("    pushfq")                     # POPF at CPL 3, IOPL 0: IF kept
    w("    and qword ptr [rsp], -0x201")
    w("    popfq")
w("    mov r12d, %d" % rnd.randint(3, 40))
w("main_loop:")
for _ in range(rnd.randint(3, 12)):
    block(0, list(range(nfunc)))
w("    dec r12d")
w("    jnz main_loop")
w("    jmp done")
for i in range(nfunc):
    if i == 1:
        w("    .org 0x800")             # f1.. sit in the filter range
    if i == 3:
        w("    .org 0xc00")
    w("f%d:" % i)
    for _ in range(rnd.randint(1, 5)):
        block(1, list(range(i + 1, nfunc)))
    if rnd.random() < 0.2:
        w("    add qword ptr [rsp], 0")   # same target: stays compressible
    w("    ret")
w("    .org 0x1000")
w("syscall_entry:")
if rare:
    w(LONG)
if irnd.random() < 0.5:
    w("    cli")                        # SYSRET sets IF again from R11
w("    add rax, 1")
if rnd.random() < 0.4:
    w("    mov r9, cr3")                # MOV CR3: a PIP (4.2.10)
    w("    xor r9, 0x1000")
    w("    mov cr3, r9")
w("    sysretq")
w("irq:")
w("    iretq")
w("soft_int:")
if irnd.random() < 0.5:
    w("    sti")                        # IF 0 -> 1 inside the handler
    w("    add edx, 2")
    w("    cli")
else:
    w("    add edx, 2")
w("    iretq")
w("ud_handler:")
w("    add qword ptr [rsp], 2")
w("    iretq")
w("de_handler:")
w("    add qword ptr [rsp], 2")
w("    iretq")
w("far_fn:")
w("    add edx, 5")
w("    retf")
w("    .p2align 3")
w("fp_call:")
w("    .long far_fn" if far_ok else "    .long 0")
w("    .word 0x33")                  # the user code segment: CPL stays 3
w("    .p2align 3")
w("fp_jmp:")
w("    .long 0")
w("    .word 0x33")
w("done:")
w("    nop")
if sgx:
    w("aep0:")
    w("    enclu")                      # ERESUME after an AEX
    enclave_body()
# the regions (their jumps land in later regions only, and come back)
for j in range(len(regions)):
    region_code(j)
for j in range(len(regions)):
    w("    .section %s, \"ax\"" % regions[j][0])
    region_pads(j)
if regions:
    w("    .section .xd, \"aw\"")
    w("    .p2align 3")
    w("xtab:")
    for f in xtab:
        w("    .quad %s" % f)

ctl = 0x2001                                   # Trace_En, TraceActive
ctl |= rnd.choice([0xc, 0xc, 0xc, 0x8, 0x4])   # OS/User
if rnd.random() < 0.3:
    ctl |= 0x2                                 # Cycle_Acc
if rnd.random() < 0.6:
    ctl |= 0x800                               # Cmprs_Ret
if rnd.random() < 0.3:
    ctl |= 0x200 | (rnd.randint(0, 3) << 14)   # MTC_En, MTC_Range
if rnd.random() < 0.2:
    ctl |= 0x400                               # STS_En
if rnd.random() < 0.1:
    ctl |= 0x10                                # STS_on_CR3
if rnd.random() < 0.15:
    ctl |= 0x1000                              # LESS_PKTS
if rare_mtc:
    # MTC_En, and each MTC_Range in turn over the forced seeds (3 otherwise)
    ctl = (ctl & ~(3 << 14)) | 0x200 | ((seed // 5) % 4 if seed % 5 == 1 else 3) << 14
if rare:
    ctl = (ctl | 0x2) & ~0x200                 # Cycle_Acc, no MTC_En
cr3en = rnd.random() < 0.1 and not rare         # (the LONG blocks traced)
if cr3en:
    ctl |= 0x80                                # CR3 filtering
filt = rnd.random() < 0.25 and not rare
events = 0x30 if filt else 0x37                # RANGE0, or always on
if rnd.random() < 0.1:
    events = (events & 7) | (1 << 3)           # TraceStop on RANGE1

cfg = []
cfg.append("handler 0x20 = irq")
cfg.append("handler 2 = irq")
cfg.append("handler 0x21 = soft_int")
cfg.append("handler 0x22 = soft_int")
cfg.append("handler 6 = ud_handler")
cfg.append("handler 0 = de_handler")
cfg.append("cpl 0")
cfg.append("cr3 0x1000")
cfg.append("rsp0 0x7fff8000")
cfg.append("clock cpi.default=%d cpi.cond=%d" % (rnd.randint(1, 3), rnd.randint(1, 4)))
if rare or (rare_mtc and not pt):
    # the LONG blocks: 80 * 255 cycles; and with MTC_Range 3 (RTIT), enough
    # cycles that TSC[13] toggles often (a run is some 10^4 instructions)
    cfg.append("clock cpi.other=255")
if filt:
    cfg.append("msr RTIT_LIP0 = 0x%x" % (base + 0x800))
    cfg.append("msr RTIT_LIP2 = 0x%x" % (base + 0xc00))
if events >> 3 == 1:
    cfg.append("msr RTIT_LIP1 = 0x%x" % (base + 0xc00))
    cfg.append("msr RTIT_LIP3 = 0x%x" % (base + 0xd00))
if cr3en:
    cfg.append("msr RTIT_CR3_MATCH = 0x1000")
if rnd.random() < 0.1:
    cfg.append("param pgd_on_trigger_clear = 1")
if rnd.random() < 0.1:
    cfg.append("param buffovf_loads_lip = 1")
if rnd.random() < 0.4:
    # a PSB every 2 KiB of trace, the first one soon
    cfg.append("msr RTIT_PKT_CNT = 0x%x" % rnd.choice([0, 0x7c0, 0x7f8]))
if rnd.random() < 0.3:
    cfg.append("param buffer_bytes = %d" % rnd.choice([24, 32, 48, 64]))
    cfg.append("param drain = 1/%d" % rnd.choice([2, 4, 8]))
for e in ("e1", "e2", "e3", "e4", "e5", "e6", "e7"):
    if rnd.random() < 0.15 and not pt:
        cfg.append("param %s = %s" % (e, rnd.choice(["always", "every:3", "seed:2:%d" % seed])))
if pt:
    # the same program under Intel PT: IA32_RTIT_CTL and ADDRn (Table 33-6)
    cfg = [c for c in cfg if not c.startswith(("msr RTIT_", "param"))]
    ctl = pt_ctl(crnd.choice([0xc, 0xc, 0xc, 0x8, 0x4]))
    if rare:
        # CYCEn: the LONG blocks' CYCs; no MTCEn, whose MTCs would flood a
        # run this long (one per ART edge, 33.3.6) and cost time
        ctl = (ctl | 0x2) & ~0x200
    # no EventEn: libipt predates it; perf 6.1 reads an AEX's CFE
    # differently (D62)
    if libipt or (perf and sgx):
        ctl &= ~(1 << 31)
    if cr3en:
        ctl |= 0x80                                # CR3Filter
        cfg.append("msr IA32_RTIT_CR3_MATCH = 0x1000")
    if filt:
        ctl |= 1 << 32                             # ADDR0_CFG = 1: filter
        cfg.append("msr IA32_RTIT_ADDR0_A = 0x%x" % (base + 0x800))
        cfg.append("msr IA32_RTIT_ADDR0_B = 0x%x" % (base + 0xbff))
    if events >> 3 == 1:
        ctl |= 2 << 36                             # ADDR1_CFG = 2: TraceStop
        cfg.append("msr IA32_RTIT_ADDR1_A = 0x%x" % (base + 0xc00))
        cfg.append("msr IA32_RTIT_ADDR1_B = 0x%x" % (base + 0xcff))
    pt_tail(ctl, cfg)
    # SKZ84 (D146): on a CPU that has it, half the seeds trace a VMX guest
    # (from the start) whose VMCS uses TSC offsetting or scaling, with
    # TSCEn and MTCEn, so the PSB+ TMAs are the erratum's; a generator of
    # its own (the other seeds are unchanged)
    zrnd = random.Random(seed * 15485863 + 31)
    if (cpu_line != "default" and int(cpu_line.split("/")[1], 16) in (0x55, 0x6a, 0x6c, 0x8f)
            and not rare and zrnd.random() < 0.5):
        cfg.append("param vmx_nonroot = 1")
        cfg.append("param vmx_tsc_%s = 1" % zrnd.choice(["offsetting", "scaling"]))
        ctl |= 0x600                               # MTCEn, TSCEn
    cfg.append("msr IA32_RTIT_CTL = 0x%x" % ctl)
else:
    cfg.append("msr RTIT_EVENTS = 0x%x" % events)
    cfg.append("msr RTIT_CTL = 0x%x" % ctl)
ctl_name = "IA32_RTIT_CTL" if pt else "RTIT_CTL"
for _ in range(rnd.randint(0, 6)):
    n = rnd.randint(10, 3000)
    k = rnd.choice(["interrupt vector=0x20", "interrupt vector=0x20", "nmi", "smi cycles=50",
                    "vmexit cycles=40", "freq ratio=%d" % rnd.randint(8, 30),
                    "sleep ticks=%d cstate=%d" % (rnd.randint(10, 500), rnd.choice([1, 4])),
                    "msr %s = 0x%x" % (ctl_name, ctl & ~1), "msr %s = 0x%x" % (ctl_name, ctl)])
    # with an enclave, no SMI or VM exit: the AEX of one that hits an
    # EEXIT reads as the EEXIT (decisions D52)
    if sgx and k.startswith(("smi", "vmexit")):
        continue
    # libipt 2.0.5 follows a VM exit only with the VMM's image; perf 6.1
    # decodes non-root code only as a guest kernel's (D62)
    if (libipt or perf) and k.startswith("vmexit"):
        continue
    # perf 6.1 binds the CFE.RSM(IP=0) after an RSM's TIP.PGE to the next
    # FUP, another event's (D62)
    if perf and pt and (ctl >> 31) & 1 and k.startswith("smi"):
        continue
    if pt and k.startswith("vmexit"):
        k += vmexit_args()
    cfg.append("event at insn %d: %s" % (n, k))
if tsx:
    if trnd.random() < 0.4:
        cfg.append("rtm on lines=%d" % trnd.choice([2, 4, 8, 16]))
    for _ in range(trnd.randint(0, 4)):
        cfg.append("event at insn %d: tsx-abort%s" % (
            trnd.randint(10, 3000), trnd.choice(["", " status=0x2", " status=0x4"])))
if pebs and pt and not (ctl >> 31) & 1 and any(": vmexit" in c for c in cfg):
    # without EventEn, an overflow that ends at a VM entry whose VM exit
    # it lost cannot be decoded (README "What does not work yet", D48);
    # PEBS blocks fill a small buffer often enough to make that likely
    pebs = False
if pebs:
    # PMC0 counts retired instructions (USR, OS or both); a PEBS record
    # every `period` of them, with random groups (docs/sim.md "PEBS")
    period = prnd.choice([7, 31, 97, 500, 2000])
    cfg.append("msr IA32_PEBS_DATA_CFG = 0x%x" % prnd.choice([0, 1, 2, 3, 4, 7]))
    cfg.append("msr MSR_RELOAD_PMC0 = 0x%x" % ((1 << 48) - period))
    cfg.append("msr IA32_A_PMC0 = 0x%x" % ((1 << 48) - prnd.randint(1, period)))
    cfg.append("msr IA32_PEBS_ENABLE = 0x2000000000000001")
    cfg.append("msr IA32_PERFEVTSEL0 = 0x%x" % (0x4000c0 | prnd.choice([0x10000, 0x20000, 0x30000])))
    cfg.append("msr IA32_PERF_GLOBAL_CTRL = 0x1")
    # architectural LBRs in half of them (D63): random filters, depth and
    # number of entries a record takes; a generator of their own
    lrnd = random.Random(seed * 1299743 + 17)
    if lrnd.random() < 0.5:
        cfg.append("msr IA32_LBR_CTL = 0x%x" % (1 | lrnd.choice([2, 4, 6]) << 0 |
                                                 lrnd.randint(1, 0x7f) << 16))
        cfg.append("msr IA32_LBR_DEPTH = %d" % lrnd.choice([8, 16, 24, 32]))
        cfg.append("msr IA32_PEBS_DATA_CFG = 0x%x" % (lrnd.choice([0, 1, 2, 4, 7]) | 8 |
                                                       lrnd.randint(0, 31) << 24))
if sgx:
    cfg.append("enclave base=encl0 size=0x2000 tcs=tcs0 oentry=0 debug=%d" % sgx_debug)
cfg.append("end-at done")
cfg.append("budget 200000")
cfg += ["param %s = off" % e for e in errata_off]

print("name     stress_%d" % seed)
print('describe "random program and trace configuration, seed %d"' % seed)
print("dialect  %s" % ("pt" if pt else "rtit"))
print("cpu      %s" % (cpu_line if pt else "silvermont"))
print("mode     64")
print("code asm load=0x%x entry=start%s" % (base, "".join(
    " %s=0x%x" % (sec, at) for sec, at, _ in regions) + (" .xd=0x%x" % data_at if regions else "")))
print("\n".join(out))
print("end")
print("\n".join(cfg))
