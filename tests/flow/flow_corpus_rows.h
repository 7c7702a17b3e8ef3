/* flow_corpus_rows.h - the rows of tests/flow/test_flow_corpus.c (see
 * there for the packet bytes).  Offsets in "@N" are decimal. */

/* ---- the image (D74, issue 17 point 1) ---- */
{
	.name = "image: a flow that leaves a 7-byte image",
	.cite = "SDM 33.4.2.1, 33.4.2.7; D74",
	.dialect = RTIT_DIALECT_PT,
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), 0x04),
	.img = { REG(0x1000, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90) },
	.want = "# enable 1000\n"
		"# error @18 no memory mapped at the address\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "image: an image that ends mid-instruction",
	.cite = "SDM 33.4.2.1; D74",
	.dialect = RTIT_DIALECT_PT,
	/* six NOPs, then 48 8B of MOV RAX,[RAX] (48 8B 00) */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), 0x04),
	.img = { REG(0x1000, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x48, 0x8b) },
	.want = "# enable 1000\n"
		"# error @18 no memory mapped at the address\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "image: a gap between two regions",
	.cite = "SDM 33.4.2.1; D74",
	.dialect = RTIT_DIALECT_PT,
	/* 0x1000: JZ +0x10 (74 10) not taken, NOP: into the gap at 0x1003;
	 * taken it would reach 0x1012, in the second region */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), 0x04, 0x04),
	.img = { REG(0x1000, 0x74, 0x10, 0x90), REG(0x1012, 0x74, 0x00, 0x90) },
	.want = "# enable 1000\n"
		"I 0000000000001000 cond     len=2 -> 0000000000001002\n"
		"# error @25 no memory mapped at the address\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "image: the same gap, the branch taken into the second region",
	.cite = "SDM 33.4.2.1",
	.dialect = RTIT_DIALECT_PT,
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), 0x06, 0x04),
	.img = { REG(0x1000, 0x74, 0x10, 0x90), REG(0x1012, 0x74, 0x00, 0x90) },
	.want = "# enable 1000\n"
		"I 0000000000001000 cond     len=2 T -> 0000000000001012\n"
		"I 0000000000001012 cond     len=2 -> 0000000000001014\n"
		"# end\n",
},
{
	.name = "image: code at a kernel-half address",
	.cite = "SDM 33.4.2.7, Table 33-18 (IPBytes 011b sign-extends bit 47)",
	.dialect = RTIT_DIALECT_PT,
	/* JMP RAX (FF E0) at K, TIP to K + 0x10: JMP RAX again */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(K), PT_TIP6(K + 0x10)),
	.img = { REG(K, 0xff, 0xe0), REG(K + 0x10, 0xff, 0xe0) },
	.want = "# enable ffffffff81000000\n"
		"I ffffffff81000000 jmp-ind  len=2 T -> ffffffff81000010\n"
		"# end\n",
},

/* ---- resynchronisation (issue 17 point 2) ---- */
{
	.name = "resync: a PSB whose first bytes a truncated TIP swallowed",
	.cite = "SDM 33.4.2.17 (the PSB is the pattern to search for)",
	.dialect = RTIT_DIALECT_PT,
	/* JMP RAX at 0x1000 takes the TIP at @25, cut after 2 bytes of its
	 * IP: its last 4 are the PSB's first (02 82 02 82 at @28), so its
	 * target would be 0xffff820282022000.  The packet after it, @32 (the
	 * PSB's rest, 02 82 ...), is no packet (packets read ahead, D137):
	 * nothing is handed out from then on, and the walk meets the
	 * earlier fault, that target outside the image, at the TIP @25
	 * (D163), so no JMP to it is printed.  The search from @26 finds
	 * the PSB at @28; after PSBEND @44 the TIP.PGE @46 and the TIP @53. */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), 0x6d, 0x00, 0x20,
	       PT_PSB, PT_PSBEND, PT_PGE6(0x1000), PT_TIP6(0x3000)),
	.img = { REG(0x1000, 0xff, 0xe0), REG(0x3000, 0xff, 0xe0) },
	.want = "# error @25 no memory mapped at the address\n"
		"# resync 1000 @46\n"
		"I 0000000000001000 jmp-ind  len=2 T -> 0000000000003000\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "resync: an RTIT PSB right after a bad packet",
	.cite = "RTIT 4.2.1 (PSB: eight 00 after C0), SDM 33.4.2.17",
	.dialect = RTIT_DIALECT_RTIT,
	/* a TIP @16 cut after 2 of its 6 IP bytes: the rest are the PSB's
	 * C0 00 00 00 (@19), so JMP RAX at 0x1000 goes to 0xc02000 and the
	 * PSB's last five 00 bytes (@23) are a reserved opcode (RTIT 4.2,
	 * Figure 2): that error comes before the TIP is used (one packet
	 * read ahead, D137: the FUP.PGE is not used either), so no JMP to
	 * 0xc02000 is printed.  The search
	 * from the byte after the TIP's first (@17) finds the PSB at @19 */
	STREAM(R_PSB, R_PGE(0x1000), 0xb2, 0x00, 0x20, R_PSB, R_PGE(0x1000), R_TIP(0x3000)),
	.img = { REG(0x1000, 0xff, 0xe0), REG(0x3000, 0xff, 0xe0) },
	.want = "# error @23 reserved or unknown opcode\n"
		"# resync 1000 @28\n"
		"I 0000000000001000 jmp-ind  len=2 T -> 0000000000003000\n"
		"# end\n",
	.want_errors = 1,
},

/* ---- RTIT CR0.PG (issue 16 point 9) ---- */
{
	.name = "rtit: MOV CR0 clearing PG in 32-bit mode takes its PIP",
	.cite = "RTIT 4.2.10 (PIP on MOV CR0 changing PG), D80",
	.dialect = RTIT_DIALECT_RTIT,
	.mode = 32,
	/* MOV CR0,EAX (0F 22 C0), JMP EAX (FF E0): PIP(PG=0) C2 + CR3,
	 * then the JMP's TIP */
	STREAM(R_PSB, R_PGE(0x1000), 0xc2, 0, 0x10, 0, 0, 0, R_TIP(0x2000)),
	.img = { REG(0x1000, 0x0f, 0x22, 0xc0, 0xff, 0xe0), REG(0x2000, 0xff, 0xe0) },
	.want = "# enable 1000\n"
		"I 0000000000001000 mov-cr0  len=3 -> 0000000000001003\n"
		"I 0000000000001003 jmp-ind  len=2 T -> 0000000000002000\n"
		"# end\n",
},
{
	.name = "rtit: MOV CR0 meets a PIP with CR0.PG not known",
	.cite = "RTIT 4.2.10, D80",
	.dialect = RTIT_DIALECT_RTIT,
	.mode = 32,
	.pg_set = true,
	.pg = -1,
	STREAM(R_PSB, R_PGE(0x1000), 0xc2, 0, 0x10, 0, 0, 0, R_TIP(0x2000)),
	.img = { REG(0x1000, 0x0f, 0x22, 0xc0, 0xff, 0xe0), REG(0x2000, 0xff, 0xe0) },
	.want = "# enable 1000\n"
		"# error @16 packet not allowed here\n"
		"# end\n",
	.want_errors = 1,
},

/* ---- PSB+ status against the decoded state (issue 17 point 7, D82) ---- */
{
	.name = "psb+: a FUP the walk cannot reach is a bad status update",
	.cite = "SDM 33.3.7 (PSB+ FUP: the current IP), D82",
	.dialect = RTIT_DIALECT_PT,
	/* JMP RAX at 0x1000 and 0x2000: the TIP @25 goes to 0x2000, where
	 * the PSB+ @32 says 0x5000 (FUP @48): the JMP RAX at 0x2000 would
	 * need the TIP first.  The search for the next PSB starts after the
	 * PSB @32: none.  The JMP RAX at 0x1000 went where the TIP @25 says,
	 * which the packet after it contradicts: its record goes with the
	 * error (D221). */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), PT_TIP6(0x2000),
	       PT_PSB, PT_FUP6(0x5000), PT_PSBEND, PT_TIP6(0x3000)),
	.img = { REG(0x1000, 0xff, 0xe0), REG(0x2000, 0xff, 0xe0), REG(0x3000, 0xff, 0xe0),
		 REG(0x5000, 0xff, 0xe0) },
	.want = "# enable 1000\n"
		"# error @48 packet not allowed here\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "psb+: a FUP at the walk's IP agrees",
	.cite = "SDM 33.3.7",
	.dialect = RTIT_DIALECT_PT,
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), PT_TIP6(0x2000),
	       PT_PSB, PT_FUP6(0x2000), PT_PSBEND, PT_TIP6(0x3000)),
	.img = { REG(0x1000, 0xff, 0xe0), REG(0x2000, 0xff, 0xe0), REG(0x3000, 0xff, 0xe0) },
	.want = "# enable 1000\n"
		"I 0000000000001000 jmp-ind  len=2 T -> 0000000000002000\n"
		"I 0000000000002000 jmp-ind  len=2 T -> 0000000000003000\n"
		"# end\n",
},
{
	.name = "psb+: a FUP a few straight instructions ahead agrees",
	.cite = "SDM 33.3.7",
	.dialect = RTIT_DIALECT_PT,
	/* 0x2000: NOP, JMP +1 (EB 01), INT3 (skipped), JMP RAX at 0x2004 */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), PT_TIP6(0x2000),
	       PT_PSB, PT_FUP6(0x2004), PT_PSBEND, PT_TIP6(0x3000)),
	.img = { REG(0x1000, 0xff, 0xe0), REG(0x2000, 0x90, 0xeb, 0x01, 0xcc, 0xff, 0xe0),
		 REG(0x3000, 0xff, 0xe0) },
	.want = "# enable 1000\n"
		"I 0000000000001000 jmp-ind  len=2 T -> 0000000000002000\n"
		"I 0000000000002000 other    len=1 -> 0000000000002001\n"
		"I 0000000000002001 jmp      len=2 T -> 0000000000002004\n"
		"I 0000000000002004 jmp-ind  len=2 T -> 0000000000003000\n"
		"# end\n",
},
{
	.name = "psb+: a MODE.Exec that contradicts the mode is a bad status update",
	.cite = "SDM 33.3.7, 33.4.2.8 (MODE.Exec CS.D=1: 32-bit), D82",
	.dialect = RTIT_DIALECT_PT,
	/* the PSB+ after the TIP @25 contradicts the decoded state: the
	 * record the TIP made goes with the error (D221) */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), PT_TIP6(0x2000),
	       PT_PSB, PT_MODE32, PT_FUP6(0x2000), PT_PSBEND, PT_TIP6(0x3000)),
	.img = { REG(0x1000, 0xff, 0xe0), REG(0x2000, 0xff, 0xe0), REG(0x3000, 0xff, 0xe0) },
	.want = "# enable 1000\n"
		"# error @48 packet not allowed here\n"
		"# end\n",
	.want_errors = 1,
},

/* ---- the end of the trace (issue 17 point 8, D83) ---- */
{
	.name = "end: a last PSB+ whose FUP is outside the image",
	.cite = "SDM 33.3.7 (the FUP names the next IP), D83",
	.dialect = RTIT_DIALECT_PT,
	STREAM(PT_PSB, PT_FUP6(0x9000), PT_PSBEND),
	.img = { REG(0x1000, 0xff, 0xe0) },
	.want = "# enable 9000\n"
		"# end\n",
},
{
	.name = "end: the same FUP outside the image with a packet after it",
	.cite = "SDM 33.3.7; D74",
	.dialect = RTIT_DIALECT_PT,
	STREAM(PT_PSB, PT_FUP6(0x9000), PT_PSBEND, 0x04),
	.img = { REG(0x1000, 0xff, 0xe0) },
	.want = "# enable 9000\n"
		"# error @16 no memory mapped at the address\n"
		"# end\n",
	.want_errors = 1,
},

/* ---- TIP.PGD with an IP at a conditional branch (issue 17 point 3, D84) ---- */
{
	.name = "pgd: TIP.PGD(target) binds to the conditional branch: taken",
	.cite = "SDM 33.4.2.5 Application; libipt pt_insn_at_disabled_event (ptic_cond_jump)",
	.dialect = RTIT_DIALECT_PT,
	/* JZ +0x0e (74 0E) at 0x1000: target 0x1010, NLIP 0x1002 */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), PT_PGD6(0x1010)),
	.img = { REG(0x1000, 0x74, 0x0e) },
	.want = "# enable 1000\n"
		"I 0000000000001000 cond     len=2 T -> 0000000000001010\n"
		"# disable 1010\n"
		"# end\n",
},
{
	.name = "pgd: TIP.PGD(NLIP) binds to the conditional branch: not taken",
	.cite = "SDM 33.4.2.5 Application",
	.dialect = RTIT_DIALECT_PT,
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), PT_PGD6(0x1002)),
	.img = { REG(0x1000, 0x74, 0x0e) },
	.want = "# enable 1000\n"
		"I 0000000000001000 cond     len=2 -> 0000000000001002\n"
		"# disable 1002\n"
		"# end\n",
},
{
	.name = "pgd: TIP.PGD with an IP that is neither way of the branch",
	.cite = "SDM 33.4.2.5",
	.dialect = RTIT_DIALECT_PT,
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), PT_PGD6(0x5000)),
	.img = { REG(0x1000, 0x74, 0x0e) },
	.want = "# enable 1000\n"
		"# error @25 packet not allowed here\n"
		"# end\n",
	.want_errors = 1,
},

/* ---- HLE (issue 17 point 4) ---- */
{
	.name = "hle: MODE.TSX + FUP at XACQUIRE LOCK, then at XRELEASE LOCK",
	.cite = "SDM 33.2.9.1, Table 33-10 (begin: XACQUIRE lock, commit: XRELEASE lock), Table 33-55 cases 19/20",
	.dialect = RTIT_DIALECT_PT,
	/* 0x1000 XACQUIRE LOCK ADD [RAX],EAX (F2 F0 01 00), 0x1004 XRELEASE
	 * LOCK ADD [RAX],EAX (F3 F0 01 00), 0x1008 JMP RAX; MODE.TSX 99 21
	 * (InTX=1) + FUP(0x1000), MODE.TSX 99 20 + FUP(0x1004) */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), 0x99, 0x21, PT_FUP6(0x1000),
	       0x99, 0x20, PT_FUP6(0x1004)),
	.img = { REG(0x1000, 0xf2, 0xf0, 0x01, 0x00, 0xf3, 0xf0, 0x01, 0x00, 0xff, 0xe0) },
	.want = "# enable 1000\n"
		"I 0000000000001000 other    len=4 TX -> 0000000000001004\n"
		"I 0000000000001004 other    len=4 TX -> 0000000000001008\n"
		"# end\n",
},
{
	.name = "hle: MODE.TSX(InTX=1) + FUP at a plain LOCK ADD is an error",
	.cite = "SDM Table 33-10",
	.dialect = RTIT_DIALECT_PT,
	/* LOCK ADD [RAX],EAX (F0 01 00): no XACQUIRE */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), 0x99, 0x21, PT_FUP6(0x1000)),
	.img = { REG(0x1000, 0xf0, 0x01, 0x00, 0xff, 0xe0) },
	.want = "# enable 1000\n"
		"# error @27 packet not allowed here\n"
		"# end\n",
	.want_errors = 1,
},

/* ---- VM entry under BranchEn (issue 17 point 5, D84) ---- */
{
	.name = "vmx: VMLAUNCH with PIP(NR=1) + TIP(guest) is a far transfer",
	.cite = "SDM Table 33-53 (VM entry: PIP(NR=1), TIP(guest IP)), 33.4.2.6",
	.dialect = RTIT_DIALECT_PT,
	/* VMLAUNCH (0F 01 C2) at 0x1000, JMP RAX at 0x1003; the guest at
	 * 0x5000 (JMP RAX).  PIP 02 43, payload 01 (NR=1) 10 00 00 00 00 */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), 0x02, 0x43, 0x01, 0x10, 0, 0, 0, 0,
	       PT_TIP6(0x5000)),
	.img = { REG(0x1000, 0x0f, 0x01, 0xc2, 0xff, 0xe0), REG(0x5000, 0xff, 0xe0) },
	.want = "# enable 1000\n"
		"I 0000000000001000 other    len=3 T -> 0000000000005000\n"
		"# end\n",
},
{
	.name = "vmx: VMRESUME that fails (no PIP, no TIP) goes on at its NLIP",
	.cite = "SDM Table 33-53; VMfail transfers nothing",
	.dialect = RTIT_DIALECT_PT,
	/* VMRESUME (0F 01 C3) at 0x1000, JZ +0 at 0x1003 takes the TNT */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), 0x06),
	.img = { REG(0x1000, 0x0f, 0x01, 0xc3, 0x74, 0x00, 0xff, 0xe0) },
	.want = "# enable 1000\n"
		"I 0000000000001000 other    len=3 -> 0000000000001003\n"
		"I 0000000000001003 cond     len=2 T -> 0000000000001005\n"
		"# end\n",
},

/* ---- EVD and the CFE it binds to (issue 17 point 9, D84) ---- */
#define PT_EVD(t, v) 0x02, 0x53, (t), IP8(v)
{
	.name = "evd: an EVD.VMXQ before a CFE.IRET is an error",
	.cite = "SDM 33.4.2.30 (EVD binds to the following CFE), Tables 33-50, 33-51",
	.dialect = RTIT_DIALECT_PT,
	.event_trace = true,
	/* EVD type 1 (VMX exit qualification) @25, CFE.IRET with IP (02 13
	 * 82 00), FUP(CLIP); IRETQ (48 CF) at 0x1000 */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), PT_EVD(1, 0x1234), 0x02, 0x13, 0x82, 0x00,
	       PT_FUP6(0x1000), PT_TIP6(0x5000)),
	.img = { REG(0x1000, 0x48, 0xcf), REG(0x5000, 0xff, 0xe0) },
	.want = "# enable 1000\n"
		"# error @25 packet not allowed here\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "evd: an EVD.PFA before a CFE.INTR of vector 14 (#PF) belongs",
	.cite = "SDM Table 33-59 case 6 (EVD.PFA, CFE.INTR(14)), 33.4.2.29 (IP=0 under BranchEn), Table 33-55",
	.dialect = RTIT_DIALECT_PT,
	.event_trace = true,
	/* MOV RAX,[RAX] (48 8B 00) at 0x1000 faults: EVD.PFA, CFE.INTR
	 * with IP=0 (BranchEn=1: the exception sends its own FUP, 33.4.2.29)
	 * 02 13 01 0E, FUP(0x1000), TIP(0x5000) */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), PT_EVD(0, 0x7fff0000), 0x02, 0x13, 0x01, 0x0e,
	       PT_FUP6(0x1000), PT_TIP6(0x5000)),
	.img = { REG(0x1000, 0x48, 0x8b, 0x00), REG(0x5000, 0xff, 0xe0) },
	.want = "# enable 1000\n"
		"E 0000000000001000 event    -> 0000000000005000\n"
		"# end\n",
},
{
	.name = "evd: an EVD.PFA before a CFE.INTR of another vector is an error",
	.cite = "SDM Tables 33-50, 33-51, 33-59",
	.dialect = RTIT_DIALECT_PT,
	.event_trace = true,
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), PT_EVD(0, 0x7fff0000), 0x02, 0x13, 0x01, 0x0d,
	       PT_FUP6(0x1000), PT_TIP6(0x5000)),
	.img = { REG(0x1000, 0x48, 0x8b, 0x00), REG(0x5000, 0xff, 0xe0) },
	.want = "# enable 1000\n"
		"# error @25 packet not allowed here\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "evd: an EVD of a reserved type",
	.cite = "SDM Table 33-51 (types 0-2 defined)",
	.dialect = RTIT_DIALECT_PT,
	.event_trace = true,
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), PT_EVD(5, 0), 0x02, 0x13, 0x01, 0x0e,
	       PT_FUP6(0x1000), PT_TIP6(0x5000)),
	.img = { REG(0x1000, 0x48, 0x8b, 0x00), REG(0x5000, 0xff, 0xe0) },
	.want = "# enable 1000\n"
		"# error @25 reserved encoding inside packet\n"
		"# end\n",
	.want_errors = 1,
},

/* ---- a deferred TIP with no TNT bits pending (issue 17 point 11, D84) ---- */
{
	.name = "deferred: TNT, then the TIP of the indirect CALL before it",
	.cite = "SDM 33.4.2.3 (deferred TIPs); libipt pt_qry_indirect_branch (one TNT before the TIP)",
	.dialect = RTIT_DIALECT_PT,
	/* CALL RAX (FF D0) at 0x1000 with no bits pending; its TIP comes
	 * after the TNT (06: one taken bit) of JZ +0 (74 00) at the target
	 * 0x5000; JMP RAX at 0x5002 */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), 0x06, PT_TIP6(0x5000)),
	.img = { REG(0x1000, 0xff, 0xd0), REG(0x5000, 0x74, 0x00, 0xff, 0xe0) },
	.want = "# enable 1000\n"
		"I 0000000000001000 call-ind len=2 T -> 0000000000005000\n"
		"I 0000000000005000 cond     len=2 T -> 0000000000005002\n"
		"# end\n",
},
{
	.name = "deferred: two TNTs before the TIP are an error",
	.cite = "SDM 33.4.2.3",
	.dialect = RTIT_DIALECT_PT,
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), 0x06, 0x06, PT_TIP6(0x5000)),
	.img = { REG(0x1000, 0xff, 0xd0), REG(0x5000, 0x74, 0x00, 0xff, 0xe0) },
	.want = "# enable 1000\n"
		"# error @26 packet not allowed here\n"
		"# end\n",
	.want_errors = 1,
},

/* ---- event trace without branches (issue 17 point 6, D84) ---- */
{
	.name = "events-only: CFE.INTR and CFE.IRET with their FUPs, nothing between",
	.cite = "SDM 33.4.2.29, Table 33-50 (INTR: FUP varies; IRET: CLIP), Table 33-6 (BranchEn=0)",
	.dialect = RTIT_DIALECT_PT,
	.events_only = true,
	/* CFE.INTR(IP=1, 0x20) 02 13 81 20 @18, FUP(0x1000); CFE.IRET(IP=1)
	 * 02 13 82 00 @29, FUP(0x2000) at IRETQ (48 CF) */
	STREAM(PT_PSB, PT_PSBEND, 0x02, 0x13, 0x81, 0x20, PT_FUP6(0x1000),
	       0x02, 0x13, 0x82, 0x00, PT_FUP6(0x2000)),
	.img = { REG(0x1000, 0x90), REG(0x2000, 0x48, 0xcf) },
	.want = "# events-only 1000 @18\n"
		"E 0000000000001000 event    -> ?\n"
		"# events-only 2000 @29\n"
		"I 0000000000002000 iret     len=2 T -> ?\n"
		"# end\n",
},
{
	.name = "events-only: a CFE.IRET whose FUP is not at an IRET",
	.cite = "SDM Table 33-50 (IRET: CLIP)",
	.dialect = RTIT_DIALECT_PT,
	.events_only = true,
	STREAM(PT_PSB, PT_PSBEND, 0x02, 0x13, 0x82, 0x00, PT_FUP6(0x1000)),
	.img = { REG(0x1000, 0x90) },
	.want = "# events-only 1000 @18\n"
		"# error @18 packet not allowed here\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "events-only: a TIP cannot be in a trace without branches",
	.cite = "SDM Table 33-6 (BranchEn=0: no COFI packets)",
	.dialect = RTIT_DIALECT_PT,
	.events_only = true,
	STREAM(PT_PSB, PT_PSBEND, PT_TIP6(0x1000)),
	.img = { REG(0x1000, 0x90) },
	.want = "# error @18 packet not allowed here\n"
		"# end\n",
	.want_errors = 1,
},

/* ---- one row per error class a stream or an image can cause ----
 * (include/rtit/error.h; INTERNAL, INVALID as an argument, NOMEM, IO,
 * BAD_CONFIG and NOSPACE come from the caller or the machine, NOSYNC from
 * the packet layer's own search: a stream with no PSB decodes to nothing) */
{
	.name = "class EOS: the stream ends inside a TIP.PGE",
	.cite = "SDM 33.4.2.7 (IPBytes 011b: 6 bytes)",
	.dialect = RTIT_DIALECT_PT,
	STREAM(PT_PSB, PT_PSBEND, 0x71, 0x00, 0x10),
	.img = { REG(0x1000, 0x90) },
	.want = "# error @18 truncated packet (stream ends inside it)\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "class BAD_OPC: a reserved extended opcode (02 FF)",
	.cite = "SDM Table 33-17 (opcode map)",
	.dialect = RTIT_DIALECT_PT,
	/* the error comes before the TIP.PGE before it is used (packets
	 * read ahead, D137) */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), 0x02, 0xff, PT_PSB, PT_PSBEND, PT_PGE6(0x2000)),
	.img = { REG(0x1000, 0xff, 0xe0), REG(0x2000, 0xff, 0xe0) },
	.want = "# error @25 reserved or unknown opcode\n"
		"# resync 2000 @45\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "class BAD_PACKET: a TIP.PGE with the reserved IPBytes 101b",
	.cite = "SDM Table 33-18 (IPBytes 101b reserved)",
	.dialect = RTIT_DIALECT_PT,
	STREAM(PT_PSB, PT_PSBEND, 0xb1, IP6(0x1000)),
	.img = { REG(0x1000, 0x90) },
	.want = "# error @18 reserved encoding inside packet\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "class BAD_CONTEXT: a conditional branch meets a TIP",
	.cite = "SDM 33.4.2.1 (a conditional branch takes a TNT bit)",
	.dialect = RTIT_DIALECT_PT,
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), PT_TIP6(0x2000)),
	.img = { REG(0x1000, 0x74, 0x00) },
	.want = "# enable 1000\n"
		"# error @25 packet not allowed here\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "class NOIP: an RTIT FUP.PGE with 16 IP bits right after the PSB",
	.cite = "RTIT 4.2.3.1 (CNT 00b: LIP[15:0], the rest from LAST_LIP), 3.3.7 (PSB clears it)",
	.dialect = RTIT_DIALECT_RTIT,
	STREAM(R_PSB, 0x80, 0x00, 0x10),
	.img = { REG(0x1000, 0x90) },
	.want = "# error @9 IP compressed against an unknown last IP\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "class NOMAP: an RTIT TIP into a gap of the image",
	.cite = "RTIT 4.2.3; D74",
	.dialect = RTIT_DIALECT_RTIT,
	STREAM(R_PSB, R_PGE(0x1000), R_TIP(0x1800), R_TIP(0x2000)),
	.img = { REG(0x1000, 0xff, 0xe0), REG(0x2000, 0xff, 0xe0) },
	/* the error names the TIP: the JMP it sent there goes with it (D221) */
	.want = "# enable 1000\n"
		"# error @16 no memory mapped at the address\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "class INVALID: bytes that are no 64-bit instruction (06: PUSH ES)",
	.cite = "SDM Vol. 2 (06 is invalid in 64-bit mode); D74",
	.dialect = RTIT_DIALECT_PT,
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), 0x04),
	/* 06 and 14 NOPs: all 15 bytes an instruction may have are there */
	.img = { REG(0x1000, 0x06, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
		     0x90, 0x90, 0x90, 0x90, 0x90) },
	.want = "# enable 1000\n"
		"# error @18 invalid argument\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "kernel half: RTIT FUP.PGE and TIP at 0xffffffff81000000",
	.cite = "RTIT 4.2.3.1 (CNT 10b: LIP[47:0], bit 47 sign-extended)",
	.dialect = RTIT_DIALECT_RTIT,
	STREAM(R_PSB, R_PGE(K), R_TIP(K + 0x10)),
	.img = { REG(K, 0xff, 0xe0), REG(K + 0x10, 0xff, 0xe0) },
	.want = "# enable ffffffff81000000\n"
		"I ffffffff81000000 jmp-ind  len=2 T -> ffffffff81000010\n"
		"# end\n",
},

/* ---- what the stream itself rules out (D142) ---- */
{
	.name = "D142: a TNT inside PSB+",
	.cite = "SDM 33.3.7 (PSB+ holds status packets only)",
	.dialect = RTIT_DIALECT_PT,
	/* PSB @0, MODE.Exec @16, FUP @18 (tracing on at 0x1000, where a JZ
	 * waits for a bit), a TNT-8 of one bit (04) @25 before the PSBEND:
	 * it is not the JZ's */
	STREAM(PT_PSB, PT_MODE64, PT_FUP6(0x1000), 0x04, PT_PSBEND, 0x04),
	.img = { REG(0x1000, 0x74, 0x00) },
	.want = "# enable 1000\n"
		"# error @25 packet not allowed here\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "D142: a TIP.PGE while tracing, after a TNT (read ahead)",
	.cite = "SDM 33.4.2.4 (TIP.PGE: PacketEn 0 to 1); libipt rejects it too",
	.dialect = RTIT_DIALECT_PT,
	/* JZ at 0x1000 takes the TNT @25; the TIP.PGE @26 is among the
	 * packets read ahead, so the error comes before the bit is used */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), 0x04, PT_PGE6(0x2000)),
	.img = { REG(0x1000, 0x74, 0x00, 0x74, 0x00), REG(0x2000, 0x90) },
	.want = "# enable 1000\n"
		"# error @26 packet not allowed here\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "D142: FUP, TIP.PGE not at 000VV000H is no INIT and SIPI",
	.cite = "SDM Table 33-55 cases 23-24; SDM Vol. 3A 9.4.4 (SIPI start 000VV000H)",
	.dialect = RTIT_DIALECT_PT,
	/* NOP at 0x1000; the FUP @25 at 0x1001, where the walk stands, and
	 * a TIP.PGE @32 to 0x2040 */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), PT_FUP6(0x1001), PT_PGE6(0x2040)),
	.img = { REG(0x1000, 0x90, 0x90), REG(0x2040, 0x90) },
	.want = "# enable 1000\n"
		"I 0000000000001000 other    len=1 -> 0000000000001001\n"
		"# error @32 packet not allowed here\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "D142: EventEn fixed, an event's FUP + TIP with no CFE",
	.cite = "SDM 33.4.2.29, Table 33-59 (an interrupt sends CFE.INTR first)",
	.dialect = RTIT_DIALECT_PT,
	.event_trace = true,
	.ctl_fixed = true,
	.ctl = 0x80002001,	/* TraceEn, BranchEn, EventEn */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), PT_FUP6(0x1001), PT_TIP6(0x2000)),
	.img = { REG(0x1000, 0x90, 0x90), REG(0x2000, 0x90) },
	/* the walk to the FUP is established only with a TIP the
	 * checks accept (D197, D201): the NOP's record goes with the
	 * error */
	.want = "# enable 1000\n"
		"# error @25 packet not allowed here\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "D142: a PEBS Memory block without its fourth item",
	.cite = "SDM Tables 33-45, 33-47 (Memory: IDs 0-3), Vol. 3B 20.9.2.2.2",
	.dialect = RTIT_DIALECT_PT,
	/* BBP type 05h, 8-byte items (02 63 05) @25; BIPs (ID << 3 | 4,
	 * 8 bytes) IDs 0, 1, 2 @28, @37, @46; BEP (02 33) @55 */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), 0x02, 0x63, 0x05,
	       0x04, 1, 0, 0, 0, 0, 0, 0, 0, 0x0c, 2, 0, 0, 0, 0, 0, 0, 0,
	       0x14, 3, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x33, 0x04),
	.img = { REG(0x1000, 0x74, 0x00, 0x74, 0x00) },
	.want = "# enable 1000\n"
		"# error @55 packet not allowed here\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "D142: RTIT STS without STS_En",
	.cite = "RTIT 4.2.13 (STS only when RTIT_CTL[STS_EN] is set)",
	.dialect = RTIT_DIALECT_RTIT,
	.ctl_fixed = true,
	.ctl = 0x2009,		/* Trace_En, User, TraceActive (Table 4) */
	/* STS (1101b, ACBR, ECBR, TSC[39:0]: 7 bytes) @16 */
	STREAM(R_PSB, R_PGE(0x1000), 0xd0, 0, 0, 0, 0, 0, 0, 0x02),
	.img = { REG(0x1000, 0x74, 0x00) },
	/* the STS is read ahead of the FUP.PGE's use: nothing before it is
	 * established, the enable neither (D163, D196) */
	.want = "# error @16 packet not allowed here\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "D142: RTIT FUP.PGE with all 48 LIP bits where Table 18 sends 16",
	.cite = "RTIT 4.2.3.1, Table 18 row 3 (LIP[47:16] zero: CNT 0, Zext 1)",
	.dialect = RTIT_DIALECT_RTIT,
	.lip_exact = true,
	STREAM(R_PSB, R_PGE(0x1000)),
	.img = { REG(0x1000, 0xff, 0xe0) },
	.want = "# error @9 reserved encoding inside packet\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "D142: RTIT FUP.PGE and TIP compressed as Table 18 says",
	.cite = "RTIT 4.2.3.1, Table 18 row 3 (84 00 10: FUP.PGE CNT 0 Zext 1)",
	.dialect = RTIT_DIALECT_RTIT,
	.lip_exact = true,
	/* FUP.PGE 0x1000 @9 (10 000 1 00b = 84), TIP 0x2000 @12 (b4) */
	STREAM(R_PSB, 0x84, 0x00, 0x10, 0xb4, 0x00, 0x20),
	.img = { REG(0x1000, 0xff, 0xe0), REG(0x2000, 0xff, 0xe0) },
	.want = "# enable 1000\n"
		"I 0000000000001000 jmp-ind  len=2 T -> 0000000000002000\n"
		"# end\n",
},
{
	.name = "D142: RTIT FUP.PGD and TIP with FilterEn always on",
	.cite = "RTIT Table 19 rows 30-33, 3.3.5 Table 7 (Filter_Event_ID 111b: always on)",
	.dialect = RTIT_DIALECT_RTIT,
	.ctl_fixed = true,
	.ctl = 0x2009,
	.r_events = 0x37,
	/* SYSCALL (0F 05) at 0x1000: FUP.PGD(NLIP) @16; the TIP @23 is no
	 * part of it (rows 32-33): tracing is off there */
	STREAM(R_PSB, R_PGE(0x1000), R_PGD(0x1002), R_TIP(0x2000)),
	.img = { REG(0x1000, 0x0f, 0x05), REG(0x2000, 0x90) },
	.want = "# enable 1000\n"
		"I 0000000000001000 syscall  len=2 T -> ?\n"
		"# disable 1002\n"
		"# error @23 packet not allowed here\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "D142: code the image lacks, reached by a TIP before a PSB",
	.cite = "RTIT 4.2.3; D74 (the error names the TIP that sent the walk there)",
	.dialect = RTIT_DIALECT_RTIT,
	/* JMP RAX at 0x1000 takes the TIP @16 to 0x1800, outside the image;
	 * the PSB @23 comes before the walk reads there; then a TIP @32 */
	STREAM(R_PSB, R_PGE(0x1000), R_TIP(0x1800), R_PSB, R_TIP(0x2000)),
	.img = { REG(0x1000, 0xff, 0xe0), REG(0x2000, 0x90) },
	/* the error names the TIP: the JMP it sent there goes with it (D221) */
	.want = "# enable 1000\n"
		"# error @16 no memory mapped at the address\n"
		"# resync 2000 @32\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "D142: a TIP.PGD at an indirect JMP with TNT bits left over",
	.cite = "SDM 33.4.2.3 (a TIP deferred only behind later branches' bits), 33.4.2.5",
	.dialect = RTIT_DIALECT_PT,
	/* JMP RAX at 0x1000; a TNT of two bits @25 (0C), then TIP.PGD @26:
	 * no branch after the disable could own the bits */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), 0x0c, PT_PGD6(0x2000)),
	.img = { REG(0x1000, 0xff, 0xe0) },
	.want = "# enable 1000\n"
		"# error @26 packet not allowed here\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "D142: an RTIT TNT right after a partial one",
	.cite = "RTIT 4.2.2 (a TNT with fewer than 6 bits only when another packet must go out), D66",
	.dialect = RTIT_DIALECT_RTIT,
	/* JZ, JZ at 0x1000; TNT of one bit (04: stop bit 2, bit 1 = N) @16,
	 * another @17: the first was not forced out by a FUP, TIP or PIP */
	STREAM(R_PSB, R_PGE(0x1000), 0x04, 0x04),
	.img = { REG(0x1000, 0x74, 0x00, 0x74, 0x00) },
	/* found as the ring reads it, before the FUP.PGE is used: the
	 * enable is not established either (D163, D198) */
	.want = "# error @17 packet not allowed here\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "D139: RTIT a far transfer's FUP.PGD, then a TIP into the filter range",
	.cite = "RTIT Table 19 rows 27 and 30, 3.3.5 (a taken event landing in RANGE0 sets FilterEn)",
	.dialect = RTIT_DIALECT_RTIT,
	.ctl_fixed = true,
	.ctl = 0x2009,
	.r_events = 0x30,	/* Filter RANGE0, TraceStop always off (Table 6, 7) */
	.r_lip = { 0x1000, 0, 0x1100, 0 },	/* RANGE0 = [0x1000, 0x1100) */
	/* SYSCALL at 0x1000: FUP.PGD(NLIP 0x1002) @16; a TIP @23 to 0x1010,
	 * inside RANGE0: FilterEn would be 1 there, so PacketEn too (row 27,
	 * FUP.FAR and TIP, not row 30): the TIP is not this transfer's */
	STREAM(R_PSB, R_PGE(0x1000), R_PGD(0x1002), R_TIP(0x1010)),
	.img = { REG(0x1000, 0x0f, 0x05) },
	.want = "# enable 1000\n"
		"I 0000000000001000 syscall  len=2 T -> ?\n"
		"# disable 1002\n"
		"# error @23 packet not allowed here\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "D139: RTIT a far transfer's FUP.PGD and TIP out of the filter range (control)",
	.cite = "RTIT Table 19 row 30 (FUP.PGD with NLIP and TIP with BLIP), 3.3.5",
	.dialect = RTIT_DIALECT_RTIT,
	.ctl_fixed = true,
	.ctl = 0x2009,
	.r_events = 0x30,
	.r_lip = { 0x1000, 0, 0x1100, 0 },
	/* the same SYSCALL, its TIP @23 to 0x2000, outside RANGE0: row 30 */
	STREAM(R_PSB, R_PGE(0x1000), R_PGD(0x1002), R_TIP(0x2000)),
	.img = { REG(0x1000, 0x0f, 0x05) },
	.want = "# enable 1000\n"
		"I 0000000000001000 syscall  len=2 T -> 0000000000002000\n"
		"# disable 1002\n"
		"# end\n",
},
{
	.name = "D139: RTIT an event's FUP.PGD here, then a TIP into the filter range",
	.cite = "RTIT Table 19 rows 27 and 30 (an interrupt is a far transfer), 3.3.5",
	.dialect = RTIT_DIALECT_RTIT,
	.ctl_fixed = true,
	.ctl = 0x2009,
	.r_events = 0x30,
	.r_lip = { 0x1000, 0, 0x1100, 0 },
	/* NOP at 0x1000 then FUP.PGD(0x1001) @16 at the walk's IP, TIP @23 to
	 * 0x1010 in RANGE0: not the interrupt's TIP of row 30 */
	STREAM(R_PSB, R_PGE(0x1000), R_PGD(0x1001), R_TIP(0x1010)),
	.img = { REG(0x1000, 0x90, 0x90) },
	.want = "# enable 1000\n"
		"I 0000000000001000 other    len=1 -> 0000000000001001\n"
		"# disable 1001\n"
		"# error @23 packet not allowed here\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "D139: RTIT TraceSTOP where the flow cannot reach the stop range",
	.cite = "RTIT 3.3.5 (TraceStop at the range base or a branch landing in it), 4.2.11",
	.dialect = RTIT_DIALECT_RTIT,
	.ctl_fixed = true,
	.ctl = 0x2009,
	.r_events = 0x0f,	/* Filter always on, TraceStop RANGE1 */
	.r_lip = { 0, 0x2000, 0, 0x2100 },	/* RANGE1 = [0x2000, 0x2100) */
	/* JMP RAX at 0x1000, TIP @16 to 0x1800: two NOPs, then no code; the
	 * TraceSTOP @23 (C1) cannot come before the flow leaves the image */
	STREAM(R_PSB, R_PGE(0x1000), R_TIP(0x1800), 0xc1),
	.img = { REG(0x1000, 0xff, 0xe0), REG(0x1800, 0x90, 0x90) },
	/* the error names the TIP: the JMP it sent there goes with it (D221) */
	.want = "# enable 1000\n"
		"# error @16 no memory mapped at the address\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "D139: RTIT TraceSTOP reached along a NOP and a JMP (control)",
	.cite = "RTIT 3.3.5, 4.2.11, Table 19 rows 1 and 6 (no packet for them)",
	.dialect = RTIT_DIALECT_RTIT,
	.ctl_fixed = true,
	.ctl = 0x2009,
	.r_events = 0x0f,
	.r_lip = { 0, 0x2000, 0, 0x2100 },
	/* at 0x1800: NOP, JMP rel32 to 0x2000 (E9 FA 07 00 00: 0x1806 + 0x7fa) */
	STREAM(R_PSB, R_PGE(0x1000), R_TIP(0x1800), 0xc1),
	.img = { REG(0x1000, 0xff, 0xe0), REG(0x1800, 0x90, 0xe9, 0xfa, 0x07, 0x00, 0x00) },
	.want = "# enable 1000\n"
		"I 0000000000001000 jmp-ind  len=2 T -> 0000000000001800\n"
		"# stop\n"
		"# end\n",
},
{
	.name = "D139: RTIT a TIP to code the image lacks, then a TIP Table 18 rejects",
	.cite = "RTIT 4.2.3.1 Table 18 rows 3 and 1, D74",
	.dialect = RTIT_DIALECT_RTIT,
	.lip_exact = true,
	/* FUP.PGE 0x1000 @9 (84 00 10), JMP RAX; TIP 0x1800 @12 (b4 00 18,
	 * row 3), outside the image; TIP @15 b0 00 20 (CNT 0 Zext 0: row 1)
	 * where Table 18 gives row 3 for 0x2000: the walk needs 0x1800 first */
	STREAM(R_PSB, 0x84, 0x00, 0x10, 0xb4, 0x00, 0x18, 0xb0, 0x00, 0x20),
	.img = { REG(0x1000, 0xff, 0xe0) },
	/* the TIP @15 is read ahead: the packets before it establish
	 * nothing; the walk's error there names the TIP @12 (D196) */
	.want = "# error @12 no memory mapped at the address\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "D139: RTIT FUP.PGD at the filter range's limit, then a TIP",
	.cite = "RTIT Table 19 rows 3 and 30, 3.3.5 (an instruction at the limit IP leaves the range)",
	.dialect = RTIT_DIALECT_RTIT,
	.ctl_fixed = true,
	.ctl = 0x2009,
	.r_events = 0x30,
	.r_lip = { 0x1000, 0, 0x1001, 0 },	/* RANGE0 = [0x1000, 0x1001) */
	/* NOP at 0x1000: its NLIP 0x1001 is the limit, FilterEn goes to 0
	 * (row 3: FUP.PGD with NLIP @16); no event at 0x1001 could have had
	 * PacketEn 1, so the TIP @23 is no far transfer's (row 30) */
	STREAM(R_PSB, R_PGE(0x1000), R_PGD(0x1001), R_TIP(0x2000)),
	.img = { REG(0x1000, 0x90, 0x90) },
	.want = "# enable 1000\n"
		"I 0000000000001000 other    len=1 -> 0000000000001001\n"
		"# disable 1001\n"
		"# error @23 packet not allowed here\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "D139: PT a PSB+ FUP after a TIP.PGD, no TIP.PGE after it",
	.cite = "SDM 33.3.7 (a FUP in PSB+ only with PacketEn 1), 33.4.2.4 (PacketEn rises with a TIP.PGE)",
	.dialect = RTIT_DIALECT_PT,
	/* JMP RAX at 0x1000: TIP.PGD(0x2000) @25 stops tracing; PSB @32 with
	 * MODE.Exec @48 and FUP(0x2000) @50, PSBEND @57, then a TIP @59 */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), PT_PGD6(0x2000),
	       PT_PSB, PT_MODE64, PT_FUP6(0x2000), PT_PSBEND, PT_TIP6(0x2000)),
	.img = { REG(0x1000, 0xff, 0xe0), REG(0x2000, 0xff, 0xe0) },
	.want = "# enable 1000\n"
		"I 0000000000001000 jmp-ind  len=2 T -> 0000000000002000\n"
		"# disable 2000\n"
		"# error @50 packet not allowed here\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "D139: PT a PSB+ FUP after a TIP.PGD, a TIP.PGE next (control: erratum BDM70's stream)",
	.cite = "SDM 33.3.7, 33.4.2.4; BDM70 (D104, D106: without the workaround, no instruction claimed)",
	.dialect = RTIT_DIALECT_PT,
	/* as above, the TIP.PGE(0x2000) @59 after the PSB+ */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), PT_PGD6(0x2000),
	       PT_PSB, PT_MODE64, PT_FUP6(0x2000), PT_PSBEND, PT_PGE6(0x2000)),
	.img = { REG(0x1000, 0xff, 0xe0), REG(0x2000, 0x90) },
	/* the FUP's enable note, then the TIP.PGE's (D106) */
	.want = "# enable 1000\n"
		"I 0000000000001000 jmp-ind  len=2 T -> 0000000000002000\n"
		"# disable 2000\n"
		"# enable 2000\n"
		"# enable 2000\n"
		"# end\n",
},
/* ---- D153: a FUP with no IP; a PSB while TNT bits wait (session 14) ---- */
{
	.name = "D153: PT a FUP with its IP suppressed",
	.cite = "SDM 33.4.2.6 (Tables 33-22, 33-23: a FUP gives the IP it binds to), Table 33-18 (IPBytes 000b)",
	.dialect = RTIT_DIALECT_PT,
	/* TIP.PGE(0x1000) @18; FUP with IPBytes=000b (000 11101 = 1D) @25,
	 * then a TIP(0x2000) @26: no IP for an event to bind to (the Last IP
	 * 0x1000 is not this FUP's IP, 33.4.2.2) */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), 0x1d, PT_TIP6(0x2000)),
	.img = { REG(0x1000, 0x90, 0x90), REG(0x2000, 0x90) },
	.want = "# enable 1000\n"
		"# error @25 packet not allowed here\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "D153: PT a PSB while TNT bits wait, its TIP after the PSB+",
	.cite = "SDM 33.4.2.3 (the TNT and the deferred TIPs go out before the packet that forces them), 33.3.7",
	.dialect = RTIT_DIALECT_PT,
	/* JMP RAX at 0x1000 with the bits T N (TNT 0000 1100 = 0C @25)
	 * pending: its TIP is deferred behind the TNT; a PSB @26 comes
	 * first, and the TIP(0x1010) @44 after the PSB+ cannot be one the
	 * TNT before it deferred */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), 0x0c, PT_PSB, PT_PSBEND, PT_TIP6(0x1010)),
	.img = { REG(0x1000, 0xff, 0xe0), REG(0x1010, 0x74, 0x00, 0x74, 0x00, 0x90, 0xf4) },
	/* resynchronised at the next PSB, this one: its TIP (no FUP in
	 * the PSB+) restarts the walk at 0x1010, where the JZ finds no
	 * bit before the end */
	.want = "# enable 1000\n"
		"# error @26 packet not allowed here\n"
		"# resync 1010 @44\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "D153: PT a deferred TIP before the PSB (control)",
	.cite = "SDM 33.4.2.3 (Table 33-19), 33.3.7 (the PSB+ FUP: the current IP)",
	.dialect = RTIT_DIALECT_PT,
	/* TNT T N @25, the deferred TIP(0x1010) @26, then PSB @33 whose
	 * FUP(0x1014) @51 is where the two JZs (bits T, N) end */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), 0x0c, PT_TIP6(0x1010),
	       PT_PSB, PT_MODE64, PT_FUP6(0x1014), PT_PSBEND),
	.img = { REG(0x1000, 0xff, 0xe0), REG(0x1010, 0x74, 0x00, 0x74, 0x00, 0x90, 0xf4) },
	.want = "# enable 1000\n"
		"I 0000000000001000 jmp-ind  len=2 T -> 0000000000001010\n"
		"I 0000000000001010 cond     len=2 T -> 0000000000001012\n"
		"I 0000000000001012 cond     len=2 -> 0000000000001014\n"
		"# end\n",
},
/* ---- D154: MODE.Exec precedes an IP packet (session 14) ---- */
{
	.name = "D154: PT a MODE.Exec followed by a TNT",
	.cite = "SDM Table 33-26 (Application: MODE.Exec always precedes an IP packet), 33.4.2.8",
	.dialect = RTIT_DIALECT_PT,
	/* JMP RAX at 0x1000; MODE.Exec 32-bit (99 02) @25, then a TNT @27
	 * and a TIP(0x1010) @28: the MODE.Exec's IP packet is missing */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), PT_MODE32, 0x06, PT_TIP6(0x1010)),
	.img = { REG(0x1000, 0xff, 0xe0), REG(0x1010, 0x74, 0x00, 0xf4) },
	.want = "# enable 1000\n"
		"# error @25 packet not allowed here\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "D154: PT a MODE.Exec, timing packets, then its TIP (control)",
	.cite = "SDM Table 33-26, 33.4.2.8; Table 33-55 (a far transfer: MODE.Exec, TIP)",
	.dialect = RTIT_DIALECT_PT,
	/* JMP RAX at 0x1000; MODE.Exec 64-bit @25, an MTC (59 01) @27, the
	 * TIP(0x1010) @29; the JZ at 0x1010 takes the TNT bit N @36 */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), PT_MODE64, 0x59, 0x01, PT_TIP6(0x1010), 0x04),
	.img = { REG(0x1000, 0xff, 0xe0), REG(0x1010, 0x74, 0x00, 0xf4) },
	.want = "# enable 1000\n"
		"I 0000000000001000 jmp-ind  len=2 T -> 0000000000001010\n"
		"I 0000000000001010 cond     len=2 -> 0000000000001012\n"
		"# end\n",
},
{
	.name = "D154: PT a MODE.TSX with TXAbort and InTX both 1",
	.cite = "SDM Table 33-27 (TXAbort 1, InTX 1: N/A)",
	.dialect = RTIT_DIALECT_PT,
	/* MODE.TSX (99, leaf 001b: 001 00011 = 23) @18 before the TIP.PGE */
	STREAM(PT_PSB, PT_PSBEND, 0x99, 0x23, PT_PGE6(0x1000), 0x04),
	.img = { REG(0x1000, 0x74, 0x00, 0xf4) },
	.want = "# error @18 reserved encoding inside packet\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "D154: PT a MODE.Exec with a reserved bit set",
	.cite = "SDM Table 33-26 (byte 1 bits 4:3 reserved)",
	.dialect = RTIT_DIALECT_PT,
	/* MODE.Exec 64-bit with bit 3 set (000 01001 = 09) @18 */
	STREAM(PT_PSB, PT_PSBEND, 0x99, 0x09, PT_PGE6(0x1000), 0x04),
	.img = { REG(0x1000, 0x74, 0x00, 0xf4) },
	.want = "# error @18 reserved encoding inside packet\n"
		"# end\n",
	.want_errors = 1,
},
/* ---- D163: a fault read ahead waits for the faults in front of it (session 15) ---- */
{
	.name = "D163: PT two TNTs before a deferred TIP, bad bytes after them",
	.cite = "SDM 33.4.2.3 (the TNT is sent, followed by all the deferred TIPs), 33.4.1 (no packet begins 09h)",
	.dialect = RTIT_DIALECT_PT,
	/* JMP RAX at 0x1000, no bit pending: TNT(T) @25 may come before its
	 * deferred TIP, but the next packet, TNT(T) @26, is not that TIP;
	 * 09 @27 is no packet.  The first fault in the stream is @26.
	 * Nothing is handed out once the bad bytes are read ahead, with
	 * the TIP.PGE (D137), not even the enable */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), 0x06, 0x06, 0x09, 0x00, 0x00),
	.img = { REG(0x1000, 0xff, 0xe0), REG(0x1010, 0x74, 0x00, 0xf4) },
	.want = "# error @26 packet not allowed here\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "D163: PT two TNTs before a deferred TIP, a TIP.PGE after them",
	.cite = "SDM 33.4.2.3, 33.4.2.4 (TIP.PGE: PacketEn goes from 0 to 1)",
	.dialect = RTIT_DIALECT_PT,
	/* as above with TIP.PGE(0x1010) @27 instead of the bad byte: no
	 * TIP.PGD before it, but the TNT @26 is the first fault */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), 0x06, 0x06, PT_PGE6(0x1010)),
	.img = { REG(0x1000, 0xff, 0xe0), REG(0x1010, 0x74, 0x00, 0xf4) },
	.want = "# enable 1000\n"
		"# error @26 packet not allowed here\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "D163: PT bad bytes after a TNT: its branches are not handed out (control)",
	.cite = "SDM 33.4.2.2 (TNT), 33.4.1 (no packet begins 09h)",
	.dialect = RTIT_DIALECT_PT,
	/* two JZs take the bits T N of TNT 0C @25; 09 @26 is no packet:
	 * nothing in front of it is wrong, the error is its own, and the
	 * JZs' records, which only that TNT gives, are not handed out */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), 0x0c, 0x09, 0x00, 0x00),
	.img = { REG(0x1000, 0x74, 0x00, 0x74, 0x00, 0x90, 0xf4) },
	.want = "# error @26 reserved or unknown opcode\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "D163: PT bad bytes after a TIP.PGD: no disable before the error (control)",
	.cite = "SDM 33.4.2.5 (TIP.PGD), 33.4.1 (no packet begins 09h)",
	.dialect = RTIT_DIALECT_PT,
	/* JMP RAX at 0x1000 leaves tracing with TIP.PGD(0x1010) @25; 09
	 * @32 is no packet: the JMP's record and the disable would come
	 * from the packet just before the bad bytes; neither is handed
	 * out, nor the enable, read with the bad bytes 4 packets ahead */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), 0x61, IP6(0x1010), 0x09, 0x00, 0x00),
	.img = { REG(0x1000, 0xff, 0xe0), REG(0x1010, 0xf4) },
	.want = "# error @32 reserved or unknown opcode\n"
		"# end\n",
	.want_errors = 1,
},
/* ---- D163: nothing commits under a kept fault, events neither (session 15) ---- */
{
	.name = "D163: PT an interrupt after 63 instructions under a kept fault (batch 64)",
	.cite = "SDM 33.4.2.6 (FUP), Table 33-55 (an interrupt: FUP, TIP), 33.4.1 (no packet begins 09h)",
	.dialect = RTIT_DIALECT_PT,
	/* TIP.PGE(0x1000) @18 reads 09 @40 four packets ahead: nothing is
	 * handed out from there.  The walk makes 63 NOPs' records, the
	 * interrupt's FUP(0x103f) @25 an event record (64: a batch of 64
	 * is full, none committed), then from the TIP(0x2000) @32 the two
	 * JZs take the bits T N of TNT 0C @39: their records must not go
	 * past the batch (under the sanitizers they did) */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), PT_FUP6(0x103f), PT_TIP6(0x2000), 0x0c, 0x09, 0x00, 0x00),
	.img = { REG(0x1000, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0xf4), REG(0x2000, 0x74, 0x00, 0x74, 0x00, 0xf4) },
	.want = "# error @40 reserved or unknown opcode\n"
		"# end\n",
	.want_errors = 1,
},
/* ---- D164: PADs do not fill the packets read ahead (session 15) ---- */
{
	.name = "D164: PT a TIP.PGE behind four PADs after a TNT",
	.cite = "SDM 33.4.2.20 (PAD: no meaning), 33.4.2.4 (TIP.PGE: PacketEn goes from 0 to 1)",
	.dialect = RTIT_DIALECT_PT,
	/* JZ at 0x1000 takes TNT(T) @25; PADs @26-29; TIP.PGE(0x1010) @30
	 * with no TIP.PGD before it: the TNT's branch is not handed out
	 * (D142), though four PADs stand between */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), 0x06, 0x00, 0x00, 0x00, 0x00, PT_PGE6(0x1010)),
	.img = { REG(0x1000, 0x74, 0x00, 0x74, 0x00, 0xf4), REG(0x1010, 0xf4) },
	.want = "# enable 1000\n"
		"# error @30 packet not allowed here\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "D164: PT PADs between two TNTs (control)",
	.cite = "SDM 33.4.2.20 (PAD), 33.4.2.2 (TNT)",
	.dialect = RTIT_DIALECT_PT,
	/* JZ 0x1000 takes T of TNT @25, JZ 0x1002 takes N of TNT @30 */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), 0x06, 0x00, 0x00, 0x00, 0x00, 0x04),
	.img = { REG(0x1000, 0x74, 0x00, 0x74, 0x00, 0xf4) },
	.want = "# enable 1000\n"
		"I 0000000000001000 cond     len=2 T -> 0000000000001002\n"
		"I 0000000000001002 cond     len=2 -> 0000000000001004\n"
		"# end\n",
},
/* ---- D167: a TIP.PGD with no IP at a Jcc needs a range that can end tracing there (session 15) ---- */
{
	.name = "D167: PT TIP.PGD() at a Jcc, no filter range configured",
	.cite = "SDM 33.2.6.5 (no ADDRn range: FilterEn is 1 at all times), 33.4.2.5, 33.2.6.1",
	.dialect = RTIT_DIALECT_PT,
	.ctl_fixed = true,
	.ctl = 0x2001,	/* TraceEn, BranchEn: no ADDRn_CFG, no ToPA */
	/* JZ at 0x1000 meets TIP.PGD() @25: a Jcc changes neither CPL nor
	 * CR3 nor IA32_RTIT_CTL, and FilterEn cannot fall */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), 0x01),
	.img = { REG(0x1000, 0x74, 0x00, 0xf4) },
	.want = "# enable 1000\n"
		"# error @25 packet not allowed here\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "D167: PT TIP.PGD() at a Jcc, IA32_RTIT_CTL not known (control)",
	.cite = "SDM 33.4.2.5 (TIP.PGD binds to the next branch), D21 (a Jcc leaving the filter: no IP, no bit)",
	.dialect = RTIT_DIALECT_PT,
	/* the same stream with no sideband: the JZ may have left a filter
	 * range; its way is not known */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), 0x01),
	.img = { REG(0x1000, 0x74, 0x00, 0xf4) },
	.want = "# enable 1000\n"
		"I 0000000000001000 cond     len=2 -> ?\n"
		"# disable ffffffffffffffff\n"
		"# end\n",
},
/* ---- H1 s15: the TNT fast path's per-block time (D157) ---- */
{
	.name = "D157: PT a CYC right before a TNT times its first branch only",
	.cite = "SDM 33.3.6 (the CYC before a TNT: the first branch's time), 33.4.2.14, "
		"Table 33-33; D156 (the fast path marks the template untimed a block)",
	.dialect = RTIT_DIALECT_PT,
	/* JZ rel8 -2 (74 FE) at 0x1000 jumps to itself when taken, HLT
	 * after it; TIP.PGE(0x1000) @18, CYC of 5 cycles @25 (00101 0 11 =
	 * 2B), TNT-8 T T N @26 (stop bit 4, bits 110: 1C).  The JZ decoded at
	 * the first bit is cached, so the second and third blocks are taken
	 * from the cache a block a step; only the first branch has the CYC's
	 * exact time, the others its cycles (not exact) */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), 0x2b, 0x1c),
	.img = { REG(0x1000, 0x74, 0xfe, 0xf4) },
	.want = "# enable 1000\n"
		"I 0000000000001000 cond     len=2 T -> 0000000000001000 cyc=5*\n"
		"I 0000000000001000 cond     len=2 T -> 0000000000001000 cyc=5\n"
		"I 0000000000001000 cond     len=2 -> 0000000000001002 cyc=5\n"
		"# end\n",
},
/* ---- session 16: restarts, stops, VM entries and transactions (D168-D171) ---- */
{
	.name = "D168: RTIT FUP.PGE while tracing with no PSB before it",
	.cite = "RTIT 4.2.1 (TriggerEn rises only on an MSR write, which sends a PSB), 4.2.8",
	.dialect = RTIT_DIALECT_RTIT,
	/* a second FUP.PGE @16 while tracing from 0x1000: no FUP.PGD or
	 * TraceSTOP ended tracing, so only TriggerEn's fall did, and its
	 * rise sends a PSB first: none is here */
	STREAM(R_PSB, R_PGE(0x1000), R_PGE(0x2000)),
	.img = { REG(0x1000, 0x90, 0xff, 0xe0), REG(0x2000, 0xff, 0xe0) },
	/* found as the second FUP.PGE is read ahead: the first's enable is
	 * not established (D196) */
	.want = "# error @16 packet not allowed here\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "D168: RTIT PSB, the partial TNT, FUP.PGE: a restart (control)",
	.cite = "RTIT 4.2.1, 4.2.8 (the partial TNT on the next FUP.PGE), 4.2.2",
	.dialect = RTIT_DIALECT_RTIT,
	/* JZ at 0x1000; Trace_En cleared by an MSR write the walk does not
	 * see (no FUP.PGD), set again: PSB @16, the JZ's bit in a partial
	 * TNT (1 bit N: 02) @25, FUP.PGE(0x2000) @26 */
	STREAM(R_PSB, R_PGE(0x1000), R_PSB, 0x02, R_PGE(0x2000), R_TIP(0x3000)),
	.img = { REG(0x1000, 0x74, 0x00, 0x90), REG(0x2000, 0xff, 0xe0), REG(0x3000, 0xf4) },
	.want = "# enable 1000\n"
		"I 0000000000001000 cond     len=2 -> 0000000000001002\n"
		"# enable 2000\n"
		"I 0000000000002000 jmp-ind  len=2 T -> 0000000000003000\n"
		"# end\n",
},
{
	.name = "D169: RTIT two TNTs after a TraceSTOP",
	.cite = "RTIT 4.2.11, 4.2.2 (the TNT buffer is not drained on a TraceStop), 4.2.8",
	.dialect = RTIT_DIALECT_RTIT,
	/* JZ at 0x1000 (TNT 1 bit T @16: 03), TraceSTOP @17; what the TNT
	 * buffer held comes out once, at the next FUP.PGE: of the two full
	 * TNTs (7F) after it, the one @19 is a second one */
	STREAM(R_PSB, R_PGE(0x1000), 0x03, 0xc1, 0x7f, 0x7f),
	.img = { REG(0x1000, 0x74, 0x00, 0x90, 0x90) },
	.want = "# enable 1000\n"
		"I 0000000000001000 cond     len=2 T -> 0000000000001002\n"
		"# stop\n"
		"# error @19 packet not allowed here\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "D170: PT PIP(NR=1) in VMX root operation at a NOP",
	.cite = "SDM Table 33-53 (VM entry: PIP(NR=1), TIP), Vol. 2B VMLAUNCH/VMRESUME",
	.dialect = RTIT_DIALECT_PT,
	/* the PSB+'s PIP says root (NR=0); the JZ at 0x1000 takes the TNT
	 * @33, and at the NOP at 0x1002 a PIP(NR=1) @34: no VM exit was
	 * walked and a NOP enters no VM */
	STREAM(PT_PSB, 0x02, 0x43, 0, 0, 0, 0, 0, 0, PT_PSBEND, PT_PGE6(0x1000), 0x06,
	       0x02, 0x43, 0x01, 0, 0, 0, 0, 0, PT_TIP6(0x3000)),
	.img = { REG(0x1000, 0x74, 0x00, 0x90, 0xf4), REG(0x3000, 0xf4) },
	.want = "# enable 1000\n"
		"I 0000000000001000 cond     len=2 T -> 0000000000001002\n"
		"# error @34 packet not allowed here\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "D171: PT XBEGIN with no MODE.TSX after a PSB+ that says InTX = 0",
	.cite = "SDM 33.3.7 (PSB+: MODE.TSX if ContextEn and BranchEn; PIP if ContextEn), "
		"Table 33-55 cases 18-19, D43",
	.dialect = RTIT_DIALECT_PT,
	/* the PSB+ has a PIP (ContextEn = 1) and no MODE.TSX: InTX = 0;
	 * XBEGIN (C7 F8 rel32 0) at 0x1000 with a TIP @33 in view: the
	 * outermost XBEGIN sends MODE.TSX and FUP */
	STREAM(PT_PSB, 0x02, 0x43, 0, 0, 0, 0, 0, 0, PT_PSBEND, PT_PGE6(0x1000), PT_TIP6(0x2000)),
	.img = { REG(0x1000, 0xc7, 0xf8, 0, 0, 0, 0, 0xff, 0xe0), REG(0x2000, 0xf4) },
	.want = "# enable 1000\n"
		"# error @33 packet not allowed here\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "D171: PT XBEGIN with no MODE.TSX inside a transaction (control)",
	.cite = "SDM 33.3.7, Table 33-55 case 18 (nested XBEGIN: no packet)",
	.dialect = RTIT_DIALECT_PT,
	/* the PSB+'s MODE.TSX(InTX=1) (99 21): the XBEGIN is nested */
	STREAM(PT_PSB, 0x02, 0x43, 0, 0, 0, 0, 0, 0, 0x99, 0x21, PT_PSBEND, PT_PGE6(0x1000),
	       PT_TIP6(0x2000)),
	.img = { REG(0x1000, 0xc7, 0xf8, 0, 0, 0, 0, 0xff, 0xe0), REG(0x2000, 0xf4) },
	.want = "# enable 1000\n"
		"I 0000000000001000 xbegin   len=6 -> 0000000000001006\n"
		"I 0000000000001006 jmp-ind  len=2 T -> 0000000000002000\n"
		"# end\n",
},
{
	.name = "D172: RTIT a full TNT, a partial TNT, a TNT: no bit is established",
	.cite = "RTIT 4.2.2 (a partial TNT goes out only before a FUP, TIP or PIP), D163",
	.dialect = RTIT_DIALECT_RTIT,
	/* JZ rel8 -2 (74 FE) at 0x1000 loops on itself; a full TNT (7F)
	 * @16, a partial one (03) @17 and a TNT @18 after it: the fault is
	 * among the packets read ahead when the full TNT is taken, so its
	 * six bits are not handed out either */
	STREAM(R_PSB, R_PGE(0x1000), 0x7f, 0x03, 0x03),
	.img = { REG(0x1000, 0x74, 0xfe, 0xf4) },
	/* the enable neither (D198) */
	.want = "# error @18 packet not allowed here\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "D173: PT a direct JMP out of the filter range with no TIP.PGD",
	.cite = "SDM 33.2.4 (leaving the range is detected at a taken branch whose target is outside), "
		"33.4.2.5 (TIP.PGD: the target of a direct branch), Table 33-56 case 4",
	.dialect = RTIT_DIALECT_PT,
	.ctl_fixed = true,
	.ctl = 0x100002001,	/* TraceEn, BranchEn, ADDR0_CFG = 1 (filter) */
	.pt_addr = { { 0x1000, 0x1fff } },
	/* JMP 0x2000 (E9 rel32) at 0x1000 leaves ADDR0: TIP.PGD(0x2000)
	 * must come; here a TNT @25 (one taken bit, 06) and a TIP */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), 0x06, PT_TIP6(0x3000)),
	.img = { REG(0x1000, 0xe9, 0xfb, 0x0f, 0, 0), REG(0x2000, 0x74, 0x00, 0xff, 0xe0),
		 REG(0x3000, 0xf4) },
	.want = "# enable 1000\n"
		"# error @25 packet not allowed here\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "D173: PT a direct JMP out of the filter range with its TIP.PGD (control)",
	.cite = "SDM 33.4.2.5, Table 33-56 case 4",
	.dialect = RTIT_DIALECT_PT,
	.ctl_fixed = true,
	.ctl = 0x100002001,
	.pt_addr = { { 0x1000, 0x1fff } },
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), PT_PGD6(0x2000)),
	.img = { REG(0x1000, 0xe9, 0xfb, 0x0f, 0, 0), REG(0x2000, 0x74, 0x00, 0xff, 0xe0) },
	.want = "# enable 1000\n"
		"I 0000000000001000 jmp      len=5 T -> 0000000000002000\n"
		"# disable 2000\n"
		"# end\n",
},
{
	.name = "D173: PT a taken TNT bit for a Jcc out of the filter range",
	.cite = "SDM 33.4.2.5 (a conditional branch clearing FilterEn: TIP.PGD replaces its TNT bit), 33.2.4",
	.dialect = RTIT_DIALECT_PT,
	.ctl_fixed = true,
	.ctl = 0x100002001,
	.pt_addr = { { 0x1000, 0x1fff } },
	/* JZ rel32 to 0x2000 (0F 84) at 0x1000: a taken bit @25 */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), 0x06, PT_PGD6(0x2000)),
	.img = { REG(0x1000, 0x0f, 0x84, 0xfa, 0x0f, 0, 0, 0xf4), REG(0x2000, 0xf4) },
	.want = "# enable 1000\n"
		"# error @25 packet not allowed here\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "D174: PT an interrupt at an ENCLU into code not traced (FUP, TIP.PGD(handler))",
	.cite = "SDM Table 33-55 cases 11 and 17 (an interrupt and an ENCLU both send FUP(CLIP) and a TIP), "
		"Table 33-56 case 4 (TIP.PGD with the target), D52",
	.dialect = RTIT_DIALECT_PT,
	/* ENCLU (0F 01 D7) at 0x1000; FUP(0x1000) @25, TIP.PGD(0x5000)
	 * @32: 0x5000 is the handler of vector 0x20, so the event came
	 * before the ENCLU ran */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), PT_FUP6(0x1000), PT_PGD6(0x5000)),
	.img = { REG(0x1000, 0x0f, 0x01, 0xd7, 0xf4) },
	.idt = { { 0x20, 0x5000 } },
	.want = "# enable 1000\n"
		"E 0000000000001000 interrupt vec=32 -> 0000000000005000\n"
		"# disable 5000\n"
		"# end\n",
},
{
	.name = "D174: PT FUP, TIP.PGD at an ENCLU with no IDT (control)",
	.cite = "SDM Table 33-55 case 17, D52",
	.dialect = RTIT_DIALECT_PT,
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), PT_FUP6(0x1000), PT_PGD6(0x5000)),
	.img = { REG(0x1000, 0x0f, 0x01, 0xd7, 0xf4) },
	.want = "# enable 1000\n"
		"I 0000000000001000 enclu    len=3 T -> 0000000000005000\n"
		"# disable 5000\n"
		"# end\n",
},
{
	.name = "D175: PT OVF, FUP, MODE.Exec, TIP back to the FUP's IP: a VM entry",
	.cite = "SDM 33.3.8 (OVF, then FUP where tracing resumes), Table 33-53 (VM entry: [PIP], "
		"MODE.Exec, TIP(guest IP); PIP concealed), Table 33-26 (a near branch sends no MODE.Exec)",
	.dialect = RTIT_DIALECT_PT,
	/* NOP, RET at 0x1000; OVF @25, FUP(0x1000) @27, MODE.Exec @34,
	 * TIP(0x1000) @36: the RET sends no MODE.Exec, so the TIP is the
	 * VM entry of a VM exit lost in the overflow (the simulator's two
	 * at the same IP, docs/sim.md) */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), 0x02, 0xf3, PT_FUP6(0x1000), PT_MODE64,
	       PT_TIP6(0x1000)),
	.img = { REG(0x1000, 0x90, 0xc3) },
	.want = "# enable 1000\n"
		"# overflow 1000\n"
		"E 0000000000001000 vmentry  -> 0000000000001000\n"
		"# end\n",
},
{
	.name = "D178: PT APL12's look-ahead leaves an STI's MODE.Exec after an OVF's FUP to tracing",
	.cite = "Intel errata APL12 (OVF may be followed by an unexpected FUP); SDM 33.3.8; "
		"Table 33-59 (CLI/STI/POPF: MODE.Exec, FUP(CLIP) with EventEn)",
	.dialect = RTIT_DIALECT_PT,
	.event_trace = true,
	.pt_errata = RTIT_PT_ERRATUM(RTIT_PT_APL12),
	/* NOP, STI, RET at 0x1000; OVF @25, FUP(0x1000) @27, MODE.Exec
	 * IF=1 @34, FUP(0x1001) @36, TIP(0x1000) @43 (the RET).  The packet
	 * after the OVF's FUP that settles APL12's question is a FUP, not a
	 * TIP.PGE: tracing is on, and the MODE.Exec is the STI's */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), 0x02, 0xf3, PT_FUP6(0x1000), 0x99, 0x05,
	       PT_FUP6(0x1001), PT_TIP6(0x1000)),
	.img = { REG(0x1000, 0x90, 0xfb, 0xc3) },
	.want = "# enable 1000\n"
		"# overflow 1000\n"
		"I 0000000000001000 other    len=1 -> 0000000000001001\n"
		"I 0000000000001001 other    len=1 -> 0000000000001002\n"
		"I 0000000000001002 ret      len=1 T -> 0000000000001000\n"
		"# end\n",
},
{
	.name = "D179: PT EventEn, a VM exit with the exit concealed: FUP, TIP and no CFE",
	.cite = "SDM Table 33-52 (Conceal VMX in PT: VM exits send no PIP, CFE or EVD), "
		"Table 33-59 cases 13-15 (CFE.VMEXIT), 33.4.2.29",
	.dialect = RTIT_DIALECT_PT,
	.event_trace = true,
	.ctl_fixed = true,
	.ctl = 0x80002001,	/* TraceEn, BranchEn, EventEn */
	.vmx_conceal_exit = true,
	/* NOP, NOP at 0x1000; FUP(0x1001) @25, TIP(0x1001) @32: a VM exit
	 * at 0x1001 whose VMM resumes the guest there, with no PIP */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), PT_FUP6(0x1001), PT_TIP6(0x1001)),
	.img = { REG(0x1000, 0x90, 0x90) },
	.want = "# enable 1000\n"
		"I 0000000000001000 other    len=1 -> 0000000000001001\n"
		"E 0000000000001001 vmexit   -> 0000000000001001\n"
		"# end\n",
},
{
	.name = "D179: PT EventEn, a VM exit with the exit not concealed: FUP, TIP and no CFE.VMEXIT: an error",
	.cite = "SDM Table 33-52 (Conceal VMX in PT: VM exits send no PIP, CFE or EVD), "
		"Table 33-59 cases 13-15 (CFE.VMEXIT), 33.4.2.29",
	.dialect = RTIT_DIALECT_PT,
	.event_trace = true,
	.ctl_fixed = true,
	.ctl = 0x80002001,	/* TraceEn, BranchEn, EventEn */
	.vmx_conceal_exit = false,
	/* NOP, NOP at 0x1000; FUP(0x1001) @25, TIP(0x1001) @32: a VM exit
	 * at 0x1001 whose VMM resumes the guest there, with no PIP: it needs its CFE.VMEXIT */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), PT_FUP6(0x1001), PT_TIP6(0x1001)),
	.img = { REG(0x1000, 0x90, 0x90) },
	/* the walk to the FUP is established only with a TIP the
	 * checks accept (D197, D201): the NOP's record goes with the
	 * error */
	.want = "# enable 1000\n"
		"# error @25 packet not allowed here\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "D178: PT APL12 passes over what ContextEn alone sends (CFE, its FUP) to the TIP.PGE",
	.cite = "Intel errata APL12; SDM 33.3.8; 33.4.2.29 (CFE: TriggerEn && ContextEn, not FilterEn), "
		"Table 33-59 cases 1, 5",
	.dialect = RTIT_DIALECT_PT,
	.event_trace = true,
	.pt_errata = RTIT_PT_ERRATUM(RTIT_PT_APL12),
	/* NOP, NOP, JMP RAX at 0x1000; OVF @25, FUP(0x1000) @27 with
	 * FilterEn=0, CFE.INTR(IP=1) @34 + FUP @38, CFE.IRET(IP=1) @45 +
	 * FUP @49, TIP.PGE(0x1001) @56, TIP(0x1000) @63 (the JMP RAX) */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), 0x02, 0xf3, PT_FUP6(0x1000),
	       0x02, 0x13, 0x81, 0x20, PT_FUP6(0x1001), 0x02, 0x13, 0x82, 0x00, PT_FUP6(0x1001),
	       PT_PGE6(0x1001), PT_TIP6(0x1000)),
	.img = { REG(0x1000, 0x90, 0x90, 0xff, 0xe0) },
	.want = "# enable 1000\n"
		"# overflow ffffffffffffffff\n"
		"# enable 1001\n"
		"I 0000000000001001 other    len=1 -> 0000000000001002\n"
		"I 0000000000001002 jmp-ind  len=2 T -> 0000000000001000\n"
		"# end\n",
},
{
	.name = "D178: PT APL12, the trace ends before anything settles it: nothing claimed",
	.cite = "Intel errata APL12; SDM 33.3.8",
	.dialect = RTIT_DIALECT_PT,
	.event_trace = true,
	.pt_errata = RTIT_PT_ERRATUM(RTIT_PT_APL12),
	/* as above, the trace ending after the CFE.IRET's FUP */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), 0x02, 0xf3, PT_FUP6(0x1000),
	       0x02, 0x13, 0x81, 0x20, PT_FUP6(0x1001), 0x02, 0x13, 0x82, 0x00, PT_FUP6(0x1001)),
	.img = { REG(0x1000, 0x90, 0x90, 0xff, 0xe0) },
	.want = "# enable 1000\n"
		"# overflow ffffffffffffffff\n"
		"# end\n",
},
{
	.name = "D190: PT a CFE.INTR while tracing, then a TIP with no FUP of the event's",
	.cite = "SDM Table 33-59 case 4 (CFE.INTR(IP=0), FUP(NLIP), TIP), Table 33-55 cases 11-13",
	.dialect = RTIT_DIALECT_PT,
	.event_trace = true,
	/* JMP RAX at 0x1000; CFE.INTR(IP=0, 0x20) @25, TIP(0x2000) @29:
	 * the TIP cannot be the JMP's, the interrupt's FUP must come first */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), 0x02, 0x13, 0x01, 0x20, PT_TIP6(0x2000)),
	.img = { REG(0x1000, 0xff, 0xe0), REG(0x2000, 0x90) },
	.want = "# enable 1000\n"
		"# error @29 packet not allowed here\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "D191: PT a CFE.INTR's event whose TIP is not its vector's handler",
	.cite = "SDM 33.4.2.29, Table 33-50 (the vector of the event delivered), Table 33-59 case 4",
	.dialect = RTIT_DIALECT_PT,
	.event_trace = true,
	.idt = { { 0x20, 0x3000 } },
	/* NOP, NOP at 0x1000; CFE.INTR(IP=0, 0x20) @25, FUP(0x1001) @29,
	 * TIP(0x2000) @36: vector 0x20's handler is at 0x3000 */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), 0x02, 0x13, 0x01, 0x20, PT_FUP6(0x1001),
	       PT_TIP6(0x2000)),
	.img = { REG(0x1000, 0x90, 0x90), REG(0x2000, 0x90), REG(0x3000, 0x90) },
	/* the walk to the FUP is established only with a TIP the
	 * checks accept (D197, D201): the NOP's record goes with the
	 * error */
	.want = "# enable 1000\n"
		"# error @36 packet not allowed here\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "D191: PT the same event to its vector's handler",
	.cite = "SDM 33.4.2.29, Table 33-59 case 4",
	.dialect = RTIT_DIALECT_PT,
	.event_trace = true,
	.idt = { { 0x20, 0x3000 } },
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), 0x02, 0x13, 0x01, 0x20, PT_FUP6(0x1001),
	       PT_TIP6(0x3000)),
	.img = { REG(0x1000, 0x90, 0x90), REG(0x2000, 0x90), REG(0x3000, 0x90) },
	.want = "# enable 1000\n"
		"I 0000000000001000 other    len=1 -> 0000000000001001\n"
		"E 0000000000001001 interrupt vec=32 -> 0000000000003000\n"
		"# end\n",
},
{
	.name = "D192: PT the walk is to execute the run's end address with a TIP left",
	.cite = "the sideband's stop (reached end address: the run stopped before executing it); "
		"SDM 33.4.2.2 (the TIP is an indirect branch's)",
	.dialect = RTIT_DIALECT_PT,
	.end_ip = 0x1001,
	/* NOP, JMP RAX at 0x1000; TIP(0x2000) @25: only the JMP at 0x1001
	 * could use it, and the run ended there */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), PT_TIP6(0x2000)),
	.img = { REG(0x1000, 0x90, 0xff, 0xe0), REG(0x2000, 0x90) },
	.want = "# enable 1000\n"
		"# error @18 packet not allowed here\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "D192: PT the trace ends and the walk reaches the run's end address (control)",
	.cite = "the sideband's stop (reached end address); SDM 33.4.2.1 (a partial TNT is not "
		"written out when the run ends)",
	.dialect = RTIT_DIALECT_PT,
	.end_ip = 0x1001,
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000)),
	.img = { REG(0x1000, 0x90, 0xff, 0xe0), REG(0x2000, 0x90) },
	.want = "# enable 1000\n"
		"I 0000000000001000 other    len=1 -> 0000000000001001\n"
		"# end\n",
},
{
	.name = "D193: RTIT the trace ends between a FUP.FAR and its TIP, the run's end known",
	.cite = "RTIT Table 19 (an interrupt or far transfer: FUP.FAR and TIP); the sideband's stop: the run went on",
	.dialect = RTIT_DIALECT_RTIT,
	.end_ip = 0x1002,
	/* NOP, NOP at 0x1000; FUP.FAR(0x1001) @16, then the end */
	STREAM(R_PSB, R_PGE(0x1000), R_FAR(0x1001)),
	.img = { REG(0x1000, 0x90, 0x90, 0x90) },
	/* the walk to 0x1001 the FUP.FAR sent it on is not established
	 * without its TIP (D197) */
	.want = "# enable 1000\n"
		"# error @16 packet not allowed here\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "D193: RTIT the trace ends between a FUP.FAR and its TIP, no end known (control)",
	.cite = "RTIT Table 19 (an interrupt or far transfer: FUP.FAR and TIP)",
	.dialect = RTIT_DIALECT_RTIT,
	/* NOP, NOP at 0x1000; FUP.FAR(0x1001) @16, then the end */
	STREAM(R_PSB, R_PGE(0x1000), R_FAR(0x1001)),
	.img = { REG(0x1000, 0x90, 0x90, 0x90) },
	.want = "# enable 1000\n"
		"I 0000000000001000 other    len=1 -> 0000000000001001\n"
		"E 0000000000001001 event    -> ?\n"
		"# end\n",
},
{
	.name = "D184: PT a PEBS block cut by an overflow, its CYC cut by SKD007, the workaround on",
	.cite = "SDM 33.4.1.1 (the OVF ends the block), 33.4.2.26-28, Table 33-15; erratum SKD007 (D109)",
	.dialect = RTIT_DIALECT_PT,
	.pt_errata = RTIT_PT_ERRATUM(RTIT_PT_SKD007),
	/* BBP(basic) @25, one BIP @28, the OVF's CYC cut after its first
	 * byte (07: Exp set) @37, OVF 02 F3 @38, FUP(0x1001) @40, TIP @47
	 * (the JMP RAX at 0x1001): the
	 * bytes 07 02 read as a CYC and F3 as another: with the workaround they are the OVF, which ends the block */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), 0x02, 0x63, 0x01, 0x04, IP8(0x1000),
	       0x07, 0x02, 0xf3, PT_FUP6(0x1001), PT_TIP6(0x1000)),
	.img = { REG(0x1000, 0x90, 0xff, 0xe0) },
	.want = "# enable 1000\n"
		"# overflow 1001\n"
		"I 0000000000001001 jmp-ind  len=2 T -> 0000000000001000\n"
		"# end\n",
},
{
	.name = "D184: PT a PEBS block cut by an overflow, its CYC cut by SKD007, no workaround (control)",
	.cite = "SDM 33.4.1.1 (the OVF ends the block), 33.4.2.26-28, Table 33-15; erratum SKD007 (D109)",
	.dialect = RTIT_DIALECT_PT,
	/* BBP(basic) @25, one BIP @28, the OVF's CYC cut after its first
	 * byte (07: Exp set) @37, OVF 02 F3 @38, FUP(0x1001) @40, TIP @47
	 * (the JMP RAX at 0x1001): the
	 * bytes 07 02 read as a CYC and F3 as another: without the workaround the TIP is inside the block */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), 0x02, 0x63, 0x01, 0x04, IP8(0x1000),
	       0x07, 0x02, 0xf3, PT_FUP6(0x1001), PT_TIP6(0x1000)),
	.img = { REG(0x1000, 0x90, 0xff, 0xe0) },
	.want = "# enable 1000\n"
		"# error @47 packet not allowed here\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "D194: RTIT a PIP with CR0.PG=0 at a MOV CR0 in 64-bit code",
	.cite = "RTIT 4.2.10 (PIP: PG and CR3); SDM Vol. 2B MOV to CR0 (#GP in 64-bit mode on clearing PG)",
	.dialect = RTIT_DIALECT_RTIT,
	/* MOV CR0, EAX (0F 22 C0) at 0x1000; PIP(PG=0, CR3 0x1000) @16 */
	STREAM(R_PSB, R_PGE(0x1000), 0xc2, 0x00, 0x10, 0x00, 0x00, 0x00),
	.img = { REG(0x1000, 0x0f, 0x22, 0xc0, 0x90) },
	.want = "# enable 1000\n"
		"# error @16 packet not allowed here\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "D194: RTIT a PIP with CR0.PG=0 at a MOV CR0 in 32-bit code (control)",
	.cite = "RTIT 4.2.10 (PIP: PG and CR3); SDM Vol. 2B MOV to CR0 (#GP in 64-bit mode on clearing PG)",
	.dialect = RTIT_DIALECT_RTIT,
	.mode = 32,
	/* MOV CR0, EAX (0F 22 C0) at 0x1000; PIP(PG=0, CR3 0x1000) @16 */
	STREAM(R_PSB, R_PGE(0x1000), 0xc2, 0x00, 0x10, 0x00, 0x00, 0x00),
	.img = { REG(0x1000, 0x0f, 0x22, 0xc0, 0x90) },
	.want = "# enable 1000\n"
		"I 0000000000001000 mov-cr0  len=3 -> 0000000000001003\n"
		"# end\n",
},
{
	.name = "D195: PT a TraceStop with no TraceStop range configured",
	.cite = "SDM 33.2.5.3 (ADDRn_CFG = 2: TraceStop), 33.4.2.9",
	.dialect = RTIT_DIALECT_PT,
	.ctl_fixed = true,
	.ctl = 0x2001,
	/* JMP to 0x1002 (EB 00) at 0x1000, NOP at 0x1002; TraceStop @25 */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), 0x02, 0x83),
	.img = { REG(0x1000, 0xeb, 0x00, 0x90) },
	.want = "# enable 1000\n"
		"# error @25 packet not allowed here\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "D195: PT a TraceStop with a TraceStop range at its IP (control)",
	.cite = "SDM 33.2.5.3 (ADDRn_CFG = 2: TraceStop), 33.4.2.9",
	.dialect = RTIT_DIALECT_PT,
	.ctl_fixed = true,
	.ctl = 0x2001 | (2ull << 32),
	.pt_addr = { { 0x1002, 0x1002 } },
	/* JMP to 0x1002 (EB 00) at 0x1000, NOP at 0x1002; TraceStop @25 */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), 0x02, 0x83),
	.img = { REG(0x1000, 0xeb, 0x00, 0x90) },
	.want = "# enable 1000\n"
		"# stop\n"
		"# end\n",
},
/* ---- session 18: PacketEn along the packets read ahead (D196) ---- */
{
	.name = "D196: RTIT a TNT after a far transfer's FUP.PGD and TIP",
	.cite = "RTIT Table 19 row 30 (FUP.PGD with NLIP, TIP with BLIP), 4.2.2 (no TNT with PacketEn 0)",
	.dialect = RTIT_DIALECT_RTIT,
	/* SYSCALL at 0x1000 leaving: FUP.PGD(0x1002) @16, TIP(0x2000) @23;
	 * a TNT @30 with tracing disabled: the TIP's target is not
	 * established, nor anything read with the TNT ahead */
	STREAM(R_PSB, R_PGE(0x1000), R_PGD(0x1002), R_TIP(0x2000), 0x02),
	.img = { REG(0x1000, 0x0f, 0x05) },
	.want = "# error @30 packet not allowed here\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "D196: RTIT a second TIP after a far transfer's FUP.PGD",
	.cite = "RTIT Table 19 rows 30-31 (one TIP, the transfer's), 4.2.3",
	.dialect = RTIT_DIALECT_RTIT,
	STREAM(R_PSB, R_PGE(0x1000), R_PGD(0x1002), R_TIP(0x2000), R_TIP(0x3000)),
	.img = { REG(0x1000, 0x0f, 0x05) },
	.want = "# error @30 packet not allowed here\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "D196: RTIT a FUP.PGD after a far transfer's FUP.PGD and TIP",
	.cite = "RTIT Table 19 (a FUP.PGD only where PacketEn falls), 4.2.8",
	.dialect = RTIT_DIALECT_RTIT,
	STREAM(R_PSB, R_PGE(0x1000), R_PGD(0x1002), R_TIP(0x2000), R_PGD(0x2000)),
	.img = { REG(0x1000, 0x0f, 0x05) },
	.want = "# error @30 packet not allowed here\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "D196: RTIT FUP.PGD, its TIP, FUP.PGE, then a TNT (control)",
	.cite = "RTIT Table 19 row 30, 4.2.7 (FUP.PGE: PacketEn rises), 4.2.2",
	.dialect = RTIT_DIALECT_RTIT,
	/* tracing enabled again @30 at 0x3000, a JZ there: its bit @37 */
	STREAM(R_PSB, R_PGE(0x1000), R_PGD(0x1002), R_TIP(0x2000), R_PGE(0x3000), 0x02),
	.img = { REG(0x1000, 0x0f, 0x05), REG(0x3000, 0x74, 0x00) },
	.want = "# enable 1000\n"
		"I 0000000000001000 syscall  len=2 T -> 0000000000002000\n"
		"# disable 1002\n"
		"# enable 3000\n"
		"I 0000000000003000 cond     len=2 -> 0000000000003002\n"
		"# end\n",
},
{
	.name = "D196: PT a TNT after a TIP.PGD",
	.cite = "SDM 33.4.2.5 (TIP.PGD: PacketEn falls), 33.4.2.2, 33.2.6.1 (no TNT with PacketEn 0)",
	.dialect = RTIT_DIALECT_PT,
	/* JZ at 0x1000 (its bit @25), JMP RAX at 0x1002 out of tracing
	 * (TIP.PGD, IP suppressed, @26), a TNT @27 with tracing off: what
	 * the TNT is read ahead of is not established */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), 0x04, 0x01, 0x04),
	.img = { REG(0x1000, 0x74, 0x00, 0xff, 0xe0) },
	.want = "# error @27 packet not allowed here\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "D196: PT a TNT after a TIP.PGD and a TIP.PGE (control)",
	.cite = "SDM 33.4.2.5, 33.4.2.4 (TIP.PGE: PacketEn rises), 33.4.2.2",
	.dialect = RTIT_DIALECT_PT,
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), 0x04, 0x01, PT_PGE6(0x1000), 0x04),
	.img = { REG(0x1000, 0x74, 0x00, 0xff, 0xe0) },
	.want = "# enable 1000\n"
		"I 0000000000001000 cond     len=2 -> 0000000000001002\n"
		"I 0000000000001002 jmp-ind  len=2 T -> ?\n"
		"# disable ffffffffffffffff\n"
		"# enable 1000\n"
		"I 0000000000001000 cond     len=2 -> 0000000000001002\n"
		"# end\n",
},
{
	.name = "D197: PT an event's FUP with no TIP after it",
	.cite = "SDM Table 33-55 cases 11-13 (an asynchronous event: FUP(CLIP/NLIP), TIP(target))",
	.dialect = RTIT_DIALECT_PT,
	/* four NOPs from 0x1000, an event's FUP(0x1004) @25 binds after
	 * them; a FUP @32 where its TIP must be: the walk to 0x1004 that
	 * the first FUP sent it on is not established either */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), PT_FUP6(0x1004), PT_FUP6(0x2000)),
	.img = { REG(0x1000, 0x90, 0x90, 0x90, 0x90, 0x90) },
	.want = "# enable 1000\n"
		"# error @32 packet not allowed here\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "D197: PT an event's FUP and its TIP (control)",
	.cite = "SDM Table 33-55 cases 11-13",
	.dialect = RTIT_DIALECT_PT,
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), PT_FUP6(0x1004), PT_TIP6(0x1000)),
	.img = { REG(0x1000, 0x90, 0x90, 0x90, 0x90, 0x90) },
	.want = "# enable 1000\n"
		"I 0000000000001000 other    len=1 -> 0000000000001001\n"
		"I 0000000000001001 other    len=1 -> 0000000000001002\n"
		"I 0000000000001002 other    len=1 -> 0000000000001003\n"
		"I 0000000000001003 other    len=1 -> 0000000000001004\n"
		"E 0000000000001004 event    -> 0000000000001000\n"
		"# end\n",
},
{
	.name = "D197: RTIT an event's FUP.FAR with no TIP after it",
	.cite = "RTIT Table 19 (an interrupt or far transfer: FUP.FAR, then TIP)",
	.dialect = RTIT_DIALECT_RTIT,
	/* NOPs from 0x1000, FUP.FAR(0x1002) @16, a TNT @23 where its TIP
	 * must be: the walk to 0x1002 is not established */
	STREAM(R_PSB, R_PGE(0x1000), R_FAR(0x1002), 0x02),
	.img = { REG(0x1000, 0x90, 0x90, 0x90) },
	.want = "# enable 1000\n"
		"# error @23 packet not allowed here\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "D202: PT an EXSTOP's FUP where the walk cannot get before its JMP's TIP",
	.cite = "SDM 33.4.2.22 (EXSTOP: the FUP is the IP of the oldest instruction that has not yet "
		"completed), 33.4.2.2",
	.dialect = RTIT_DIALECT_PT,
	/* NOP, NOP, JMP RAX at 0x1002, NOP, NOP; EXSTOP(IP=1) 02 E2 @25,
	 * FUP(0x1005) @27, TIP(0x1000) @34: execution stopped at 0x1005,
	 * but the walk from 0x1000 meets the JMP, whose TIP is not next */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), 0x02, 0xe2, PT_FUP6(0x1005), PT_TIP6(0x1000)),
	.img = { REG(0x1000, 0x90, 0x90, 0xff, 0xe0, 0x90, 0x90) },
	.want = "# enable 1000\n"
		"# error @27 packet not allowed here\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "D202: PT an EXSTOP's FUP the walk reaches (control)",
	.cite = "SDM 33.4.2.22",
	.dialect = RTIT_DIALECT_PT,
	/* the same, FUP(0x1002): execution stopped before the JMP, whose
	 * TIP then goes back to 0x1000 */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), 0x02, 0xe2, PT_FUP6(0x1002), PT_TIP6(0x1000)),
	.img = { REG(0x1000, 0x90, 0x90, 0xff, 0xe0, 0x90, 0x90) },
	.want = "# enable 1000\n"
		"I 0000000000001000 other    len=1 -> 0000000000001001\n"
		"I 0000000000001001 other    len=1 -> 0000000000001002\n"
		"I 0000000000001002 jmp-ind  len=2 T -> 0000000000001000\n"
		"# end\n",
},
{
	.name = "D204: PT BDM64 keeps a TIP whose target reaches the abort through a direct JMP",
	.cite = "Intel erratum BDM64; SDM Table 33-1 (a direct JMP sends no packet), Table 33-55 case 21",
	.dialect = RTIT_DIALECT_PT,
	.pt_errata = RTIT_PT_ERRATUM(RTIT_PT_BDM64),
	/* PSB+ with MODE.TSX(InTX=1) (99 21): in a transaction.  JMP RAX
	 * at 0x1000, TIP(0x2000) @27; NOP, JMP +0xd (EB 0D) at 0x2001 to
	 * 0x2010; MODE.TSX(TXAbort) (99 22) @34, FUP(0x2010) @36,
	 * TIP(0x3000) @43: 0x2010 is reached from 0x2000 with no packet,
	 * so the TIP's target stands */
	STREAM(PT_PSB, 0x99, 0x21, PT_PSBEND, PT_PGE6(0x1000), PT_TIP6(0x2000), 0x99, 0x22,
	       PT_FUP6(0x2010), PT_TIP6(0x3000)),
	.img = { REG(0x1000, 0xff, 0xe0), REG(0x2000, 0x90, 0xeb, 0x0d), REG(0x2010, 0x90),
		 REG(0x3000, 0xf4) },
		.want = "# enable 1000\n"
		"I 0000000000001000 jmp-ind  len=2 T -> 0000000000002000\n"
		"I 0000000000002000 other    len=1 -> 0000000000002001\n"
		"I 0000000000002001 jmp      len=2 T -> 0000000000002010\n"
		"E 0000000000002010 tsx-abort -> 0000000000003000\n"
		"# end\n",
},
{
	.name = "D205: PT a VM entry back to where an overflow's FUP resumed",
	.cite = "SDM Table 33-53 (VM entry: PIP(NR=1), [VMCS], [MODE.Exec], TIP(guest IP)), 33.3.8",
	.dialect = RTIT_DIALECT_PT,
	/* the PSB+'s PIP(NR=1): a guest.  NOPs at 0x1000-0x1002, JMP RAX
	 * at 0x1003.  OVF @27, FUP(0x1002) @29, PIP(NR=1) @36, MODE.Exec
	 * @44, TIP(0x1002) @46: the overflow lost a VM exit at 0x1002 and
	 * this is its VM entry; TIP(0x1000) @53 is the JMP's */
	STREAM(PT_PSB, 0x02, 0x43, 0x01, 0x01, 0, 0, 0, 0, PT_PSBEND, PT_PGE6(0x1000), 0x02, 0xf3,
	       PT_FUP6(0x1002), 0x02, 0x43, 0x01, 0x01, 0, 0, 0, 0, 0x99, 0x01, PT_TIP6(0x1002),
	       PT_TIP6(0x1000)),
	.img = { REG(0x1000, 0x90, 0x90, 0x90, 0xff, 0xe0) },
		.want = "# enable 1000\n"
		"# overflow 1002\n"
		"E 0000000000001002 vmentry  -> 0000000000001002\n"
		"I 0000000000001002 other    len=1 -> 0000000000001003\n"
		"I 0000000000001003 jmp-ind  len=2 T -> 0000000000001000\n"
		"# end\n",
},
{
	.name = "D223: PT a VM entry back to where an overflow's FUP resumed, its TIP lost in another",
	.cite = "SDM Table 33-53 (VM entry: PIP(NR=1), [VMCS], [MODE.Exec], TIP(guest IP)), 33.3.8, "
		"33.4.2.1 (a PIP waits for the TIP of the branch before it)",
	.dialect = RTIT_DIALECT_PT,
	/* as D205's, with OVF @46, FUP(0x1003) @48 where the TIP was: the
	 * walk from 0x1002 meets the JMP RAX, which needs a TIP, before any
	 * instruction that sends a PIP, so the PIP @36 is the VM entry's */
	STREAM(PT_PSB, 0x02, 0x43, 0x01, 0x01, 0, 0, 0, 0, PT_PSBEND, PT_PGE6(0x1000), 0x02, 0xf3,
	       PT_FUP6(0x1002), 0x02, 0x43, 0x01, 0x01, 0, 0, 0, 0, 0x99, 0x01, 0x02, 0xf3,
	       PT_FUP6(0x1003), PT_TIP6(0x1000)),
	.img = { REG(0x1000, 0x90, 0x90, 0x90, 0xff, 0xe0) },
	.want = "# enable 1000\n"
		"# overflow 1002\n"
		"# overflow 1003\n"
		"I 0000000000001003 jmp-ind  len=2 T -> 0000000000001000\n"
		"# end\n",
},
{
	.name = "D223: PT the same PIP(NR=1) with a MOV CR3 ahead of the walk is the MOV CR3's (control)",
	.cite = "SDM 33.4.2.5 (PIP: MOV CR3), 33.3.8",
	.dialect = RTIT_DIALECT_PT,
	/* NOP, NOP, then MOV CR3,RAX at 0x1002 and JMP RAX at 0x1005: the
	 * walk reaches the MOV CR3 with no packet, so the PIP @36 may be
	 * its: taken there, then OVF @44, FUP(0x1005) @46, TIP @53 */
	STREAM(PT_PSB, 0x02, 0x43, 0x01, 0x01, 0, 0, 0, 0, PT_PSBEND, PT_PGE6(0x1000), 0x02, 0xf3,
	       PT_FUP6(0x1002), 0x02, 0x43, 0x01, 0x01, 0, 0, 0, 0, 0x02, 0xf3,
	       PT_FUP6(0x1005), PT_TIP6(0x1000)),
	.img = { REG(0x1000, 0x90, 0x90, 0x0f, 0x22, 0xd8, 0xff, 0xe0) },
	.want = "# enable 1000\n"
		"# overflow 1002\n"
		"I 0000000000001002 mov-cr3  len=3 -> 0000000000001005\n"
		"# overflow 1005\n"
		"I 0000000000001005 jmp-ind  len=2 T -> 0000000000001000\n"
		"# end\n",
},
{
	.name = "D224: RTIT a JMP's TIP out of the filter range, then FUP.PGD with its NLIP",
	.cite = "RTIT 3.3.5 (FilterEn falls on landing outside the range), Table 19 rows 24/25 "
		"(TIP, then FUP.PGD(NLIP): the branch left the range)",
	.dialect = RTIT_DIALECT_RTIT,
	.ctl_fixed = true,
	.ctl = 0x2009,
	.r_events = 0x30,	/* Filter RANGE0, TraceStop always off (Table 7) */
	.r_lip = { 0x1000, 0, 0x1100, 0 },	/* RANGE0 = [0x1000, 0x1100) */
	/* JMP RAX at 0x1000; JMP 0x1002 (E9 rel32) at 0x2000.  TIP(0x2000)
	 * @16, FUP.PGD(0x1002) @23: 0x2000 is outside the range, so nothing
	 * there is traced and the FUP.PGD is the JMP RAX's, though the walk
	 * from 0x2000 would reach 0x1002 with no packet */
	STREAM(R_PSB, R_PGE(0x1000), R_TIP(0x2000), R_PGD(0x1002)),
	.img = { REG(0x1000, 0xff, 0xe0), REG(0x2000, 0xe9, 0xfd, 0xef, 0xff, 0xff) },
	.want = "# enable 1000\n"
		"I 0000000000001000 jmp-ind  len=2 T -> 0000000000002000\n"
		"# disable 1002\n"
		"# end\n",
},
{
	.name = "D224: RTIT the same stream with the filter not known (control)",
	.cite = "RTIT 3.3.5, Table 19",
	.dialect = RTIT_DIALECT_RTIT,
	/* with no RTIT_CTL in the sideband, 0x2000 may be in a range: the
	 * walk goes there and the FUP.PGD stops it at 0x1002 */
	STREAM(R_PSB, R_PGE(0x1000), R_TIP(0x2000), R_PGD(0x1002)),
	.img = { REG(0x1000, 0xff, 0xe0), REG(0x2000, 0xe9, 0xfd, 0xef, 0xff, 0xff) },
	.want = "# enable 1000\n"
		"I 0000000000001000 jmp-ind  len=2 T -> 0000000000002000\n"
		"I 0000000000002000 jmp      len=5 T -> 0000000000001002\n"
		"# disable 1002\n"
		"# end\n",
},
{
	.name = "D225: PT a walk through a UD2 with no event at it is an error",
	.cite = "SDM Vol. 2B UD (UD2 raises #UD, always), Table 33-55 case 12 (an exception: FUP(CLIP), TIP)",
	.dialect = RTIT_DIALECT_PT,
	/* NOP, UD2 (0F 0B), JMP RAX at 0x1000.  TIP(0x1000) @25: the walk
	 * would take it at the JMP RAX past the UD2 */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), PT_TIP6(0x1000)),
	.img = { REG(0x1000, 0x90, 0x0f, 0x0b, 0xff, 0xe0) },
	.want = "# enable 1000\n"
		"# error @25 packet not allowed here\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "D225: RTIT a walk through a UD2 with no event at it is an error",
	.cite = "SDM Vol. 2B UD (UD2 raises #UD, always), RTIT Table 1 (an exception: FUP.FAR(CLIP), TIP)",
	.dialect = RTIT_DIALECT_RTIT,
	/* as the Intel PT row: TIP(0x1000) @16 past the UD2 at 0x1001 */
	STREAM(R_PSB, R_PGE(0x1000), R_TIP(0x1000)),
	.img = { REG(0x1000, 0x90, 0x0f, 0x0b, 0xff, 0xe0) },
	.want = "# enable 1000\n"
		"# error @16 packet not allowed here\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "D225: PT a UD2's #UD: FUP(CLIP), TIP to the handler (control)",
	.cite = "SDM Vol. 2B UD, Table 33-55 case 12",
	.dialect = RTIT_DIALECT_PT,
	/* as above, FUP(0x1001) @25, TIP(0x2000) @32; NOP at 0x2000 */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), PT_FUP6(0x1001), PT_TIP6(0x2000)),
	.img = { REG(0x1000, 0x90, 0x0f, 0x0b, 0xff, 0xe0), REG(0x2000, 0x90) },
	.want = "# enable 1000\n"
		"I 0000000000001000 other    len=1 -> 0000000000001001\n"
		"E 0000000000001001 event    -> 0000000000002000\n"
		"# end\n",
},
{
	.name = "D226: PT BDM64's look-ahead after a TIP in a transaction meets a PSB+",
	.cite = "SDM 33.3.7 (PSB+ FUP: the current IP); BDM64 (D110)",
	.dialect = RTIT_DIALECT_PT,
	.pt_errata = RTIT_PT_ERRATUM(RTIT_PT_BDM64),
	/* XBEGIN (C7 F8, rel32 0) at 0x1000, JMP RAX at 0x1006; NOP, NOP at
	 * 0x2000.  MODE.TSX(InTX=1) @25, FUP(0x1000) @27, TIP(0x2000) @34,
	 * then a PSB+ @41 with MODE.TSX and FUP(0x2000) @59: the walk is at
	 * 0x2000 when the PSB+ comes, where BDM64's workaround reads it */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), 0x99, 0x21, PT_FUP6(0x1000), PT_TIP6(0x2000),
	       PT_PSB, 0x99, 0x21, PT_FUP6(0x2000), PT_PSBEND),
	.img = { REG(0x1000, 0xc7, 0xf8, 0, 0, 0, 0, 0xff, 0xe0), REG(0x2000, 0x90, 0x90) },
	.want = "# enable 1000\n"
		"I 0000000000001000 xbegin   len=6 TX -> 0000000000001006\n"
		"I 0000000000001006 jmp-ind  len=2 T -> 0000000000002000\n"
		"# end\n",
},
{
	.name = "D208: PT after a VM exit, PIP(NR=1) at a MOV CR3 is the VM entry, not the MOV CR3's",
	.cite = "SDM 33.4.2.5 (PIP.NR: set only in VMX non-root operation), Table 33-53 (VM entry: "
		"PIP(NR=1), TIP(guest IP)), Table 33-52 (Conceal VMX in PT)",
	.dialect = RTIT_DIALECT_PT,
	.vmx_conceal_exit = true,
	/* NOP at 0x1000, MOV CR3,RAX at 0x1001, JMP RAX at 0x1004.
	 * FUP(0x1001) @25, TIP(0x1001) @32: a VM exit at the MOV CR3 (its
	 * PIP concealed), back in the guest there.  PIP(NR=1) @39,
	 * TIP(0x1001) @47: the VM entry.  PIP(NR=0) @54 is the MOV CR3's
	 * (non-root concealed), TIP(0x1000) @62 the JMP's.  A MOV CR3 in
	 * VMX root operation sends NR=0, so the first PIP is not its */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), PT_FUP6(0x1001), PT_TIP6(0x1001),
	       0x02, 0x43, 0x01, 0x01, 0, 0, 0, 0, PT_TIP6(0x1001),
	       0x02, 0x43, 0x00, 0x00, 0, 0, 0, 0, PT_TIP6(0x1000)),
	.img = { REG(0x1000, 0x90, 0x0f, 0x22, 0xd8, 0xff, 0xe0) },
	.want = "# enable 1000\n"
		"I 0000000000001000 other    len=1 -> 0000000000001001\n"
		"E 0000000000001001 vmexit   -> 0000000000001001\n"
		"E 0000000000001001 vmentry  -> 0000000000001001\n"
		"I 0000000000001001 mov-cr3  len=3 -> 0000000000001004\n"
		"I 0000000000001004 jmp-ind  len=2 T -> 0000000000001000\n"
		"# end\n",
},
{
	.name = "D209: PT EventEn, a CFE before an OVF is not the next event's",
	.cite = "SDM 33.3.8 (OVF: packets lost; a FUP where tracing resumes), 33.4.2.29, "
		"Table 33-59 (CFE.IRET), Table 33-52 (Conceal VMX in PT: a VM exit sends no CFE)",
	.dialect = RTIT_DIALECT_PT,
	.event_trace = true,
	.ctl_fixed = true,
	.ctl = 0x80002001,	/* TraceEn, BranchEn, EventEn */
	.vmx_conceal_exit = true,
	/* NOP, NOP at 0x1000.  CFE.IRET(IP=1) @25, then OVF @29: the
	 * IRET's FUP and TIP are lost.  FUP(0x1000) @31 resumes;
	 * FUP(0x1001) @38, TIP(0x1001) @45: a concealed VM exit, which
	 * sends no CFE; the CFE.IRET is not its */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), 0x02, 0x13, 0x82, 0x00, 0x02, 0xf3,
	       PT_FUP6(0x1000), PT_FUP6(0x1001), PT_TIP6(0x1001)),
	.img = { REG(0x1000, 0x90, 0x90) },
	.want = "# enable 1000\n"
		"# overflow 1000\n"
		"I 0000000000001000 other    len=1 -> 0000000000001001\n"
		"E 0000000000001001 vmexit   -> 0000000000001001\n"
		"# end\n",
},
{
	.name = "D210: PT APL12, a MODE.TSX with no FUP after the OVF's FUP: tracing was off",
	.cite = "Intel errata APL12; SDM 33.3.8, Table 33-55 cases 19-20 (MODE.TSX, FUP(CLIP) with "
		"PacketEn), 33.2.9.2 (FilterEn=0: MODE.TSX alone)",
	.dialect = RTIT_DIALECT_PT,
	.pt_errata = RTIT_PT_ERRATUM(RTIT_PT_APL12),
	/* NOP, NOP, JMP RAX at 0x1000; OVF @25, FUP(0x1000) @27, then nine
	 * pairs MODE.TSX(InTX=1), MODE.TSX(InTX=0) @34-@69 (transactions
	 * outside the filter range: no FUP), TIP.PGE(0x1001) @70, TIP(0x1000)
	 * @77.  The TIP.PGE is past the 16 packets read ahead; the first
	 * MODE.TSX with no FUP after it already says the FUP was APL12's */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), 0x02, 0xf3, PT_FUP6(0x1000),
	       0x99, 0x21, 0x99, 0x20, 0x99, 0x21, 0x99, 0x20, 0x99, 0x21, 0x99, 0x20,
	       0x99, 0x21, 0x99, 0x20, 0x99, 0x21, 0x99, 0x20, 0x99, 0x21, 0x99, 0x20,
	       0x99, 0x21, 0x99, 0x20, 0x99, 0x21, 0x99, 0x20, 0x99, 0x21, 0x99, 0x20,
	       PT_PGE6(0x1001), PT_TIP6(0x1000)),
	.img = { REG(0x1000, 0x90, 0x90, 0xff, 0xe0) },
	.want = "# enable 1000\n"
		"# overflow ffffffffffffffff\n"
		"# enable 1001\n"
		"I 0000000000001001 other    len=1 -> 0000000000001002\n"
		"I 0000000000001002 jmp-ind  len=2 T -> 0000000000001000\n"
		"# end\n",
},
{
	.name = "D210: PT APL12, a MODE.TSX and its FUP after the OVF's FUP: tracing was on (control)",
	.cite = "Intel errata APL12; SDM 33.3.8, Table 33-55 case 19 (XBEGIN: MODE.TSX, FUP(CLIP))",
	.dialect = RTIT_DIALECT_PT,
	.pt_errata = RTIT_PT_ERRATUM(RTIT_PT_APL12),
	/* NOP at 0x1000, XBEGIN at 0x1001, JMP RAX at 0x1007; OVF @25,
	 * FUP(0x1000) @27, MODE.TSX(InTX=1) @34, FUP(0x1001) @36 (the
	 * XBEGIN's), TIP(0x1000) @43 (the JMP's) */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), 0x02, 0xf3, PT_FUP6(0x1000), 0x99, 0x21,
	       PT_FUP6(0x1001), PT_TIP6(0x1000)),
	.img = { REG(0x1000, 0x90, 0xc7, 0xf8, 0x10, 0x00, 0x00, 0x00, 0xff, 0xe0) },
	.want = "# enable 1000\n"
		"# overflow 1000\n"
		"I 0000000000001000 other    len=1 -> 0000000000001001\n"
		"I 0000000000001001 xbegin   len=6 TX -> 0000000000001007\n"
		"I 0000000000001007 jmp-ind  len=2 T -> 0000000000001000\n"
		"# end\n",
},
{
	.name = "D211: PT EventEn, a CFE while tracing is off is the transfer's its TIP.PGE ends",
	.cite = "SDM 33.4.2.29, Table 33-59 (CFE.INTR(IP=0) and CFE.IRET(IP=0) with TIP.PGD and "
		"TIP.PGE), Table 33-52 (Conceal VMX in PT: a VM exit sends no CFE)",
	.dialect = RTIT_DIALECT_PT,
	.event_trace = true,
	.ctl_fixed = true,
	.ctl = 0x80002001,	/* TraceEn, BranchEn, EventEn */
	.vmx_conceal_exit = true,
	/* NOPs at 0x1000-0x1002.  CFE.INTR(IP=0) @25, FUP(0x1001) @29,
	 * TIP.PGD() @36: an interrupt into code not traced; CFE.IRET(IP=0)
	 * @37, TIP.PGE(0x1001) @41: its IRET back; FUP(0x1002) @48,
	 * TIP(0x1002) @55: a concealed VM exit, which sends no CFE: the
	 * CFE.IRET is not its */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), 0x02, 0x13, 0x01, 0x20, PT_FUP6(0x1001), 0x01,
	       0x02, 0x13, 0x02, 0x00, PT_PGE6(0x1001), PT_FUP6(0x1002), PT_TIP6(0x1002)),
	.img = { REG(0x1000, 0x90, 0x90, 0x90) },
	.want = "# enable 1000\n"
		"I 0000000000001000 other    len=1 -> 0000000000001001\n"
		"# disable 1001\n"
		"# enable 1001\n"
		"I 0000000000001001 other    len=1 -> 0000000000001002\n"
		"E 0000000000001002 vmexit   -> 0000000000001002\n"
		"# end\n",
},
{
	.name = "D213: RTIT erratum E4, TraceSTOPs sent during an overflow, before its FUP.BuffOvf",
	.cite = "RTIT Appendix E erratum E4 (a TraceStop during an overflow: the packet goes out, "
		"TraceActive stays set; evident from the FUP.BuffOvf after it), 4.2.5, Table 19",
	.dialect = RTIT_DIALECT_RTIT,
	.r_errata = RTIT_FLOW_E4,
	/* SYSCALL at 0x1000, NOP at 0x2000.  FUP.PGE(0x1000) @9,
	 * FUP.FAR(0x1002) @16 (the SYSCALL's NLIP), TraceSTOP @23 and @24
	 * (E4's, while the buffer is overflowed: the SYSCALL's TIP is lost),
	 * FUP.BuffOvf(0x1000) @25, FUP.FAR(0x1002) @32, TIP(0x2000) @39 */
	STREAM(R_PSB, R_PGE(0x1000), R_FAR(0x1002), R_STOP, R_STOP, R_BUFFOVF(0x1000),
	       R_FAR(0x1002), R_TIP(0x2000)),
	.img = { REG(0x1000, 0x0f, 0x05), REG(0x2000, 0x90) },
	.want = "# enable 1000\n"
		"I 0000000000001000 syscall  len=2 T -> ?\n"
		"# overflow 1000\n"
		"I 0000000000001000 syscall  len=2 T -> 0000000000002000\n"
		"# end\n",
},
{
	.name = "D213: RTIT the same stream without erratum E4: the SYSCALL's TIP is missing (control)",
	.cite = "RTIT Table 19 (a far transfer: FUP.FAR(NLIP), TIP(BLIP)), 4.2.11",
	.dialect = RTIT_DIALECT_RTIT,
	STREAM(R_PSB, R_PGE(0x1000), R_FAR(0x1002), R_STOP, R_STOP, R_BUFFOVF(0x1000),
	       R_FAR(0x1002), R_TIP(0x2000)),
	.img = { REG(0x1000, 0x0f, 0x05), REG(0x2000, 0x90) },
	.want = "# enable 1000\n"
		"# error @23 packet not allowed here\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "D214: RTIT a FUP.BuffOvf, PIPs, then a FUP.PGE: the overflow cleared with tracing off",
	.cite = "RTIT 4.2.5 (the overflow may clear with PacketEn 0), 4.2.8 (FUP.PGE: PacketEn rises), "
		"4.2.10 (PIP goes out with PacketEn 0)",
	.dialect = RTIT_DIALECT_RTIT,
	/* NOP, JMP RAX at 0x1000; MOV CR3,RAX and JMP RAX at 0x1800.
	 * FUP.PGE(0x1000) @9, FUP.BuffOvf(0x1800) @16, PIP @23,
	 * FUP.PGE(0x1000) @29, TIP(0x1000) @36.  Tracing on at 0x1800, the
	 * MOV CR3 would take the PIP and the JMP RAX need a TIP where the
	 * FUP.PGE is: the PIP went out while tracing was off */
	STREAM(R_PSB, R_PGE(0x1000), R_BUFFOVF(0x1800), R_PIP0, R_PGE(0x1000), R_TIP(0x1000)),
	.img = { REG(0x1000, 0x90, 0xff, 0xe0), REG(0x1800, 0x0f, 0x22, 0xd8, 0xff, 0xe0) },
	.want = "# enable 1000\n"
		"# overflow ffffffffffffffff\n"
		"# enable 1000\n"
		"I 0000000000001000 other    len=1 -> 0000000000001001\n"
		"I 0000000000001001 jmp-ind  len=2 T -> 0000000000001000\n"
		"# end\n",
},
{
	.name = "D214: RTIT a FUP.BuffOvf outside the filter range: the overflow cleared with tracing off",
	.cite = "RTIT 3.3.5 (FilterEn rises at the range base or on landing in it, falls at the "
		"limit or on landing outside), 4.2.5",
	.dialect = RTIT_DIALECT_RTIT,
	.ctl_fixed = true,
	.ctl = 0x2009,
	.r_events = 0x30,	/* Filter RANGE0, TraceStop always off (Table 7) */
	.r_lip = { 0x1000, 0, 0x1100, 0 },	/* RANGE0 = [0x1000, 0x1100) */
	/* NOP, JMP RAX at 0x1000; NOPs at 0x1800.  FUP.PGE(0x1000) @9,
	 * FUP.BuffOvf(0x1800) @16, then the trace ends: FilterEn is 0 at
	 * 0x1800, outside the range and at no limit */
	STREAM(R_PSB, R_PGE(0x1000), R_BUFFOVF(0x1800)),
	.img = { REG(0x1000, 0x90, 0xff, 0xe0), REG(0x1800, 0x90, 0x90, 0x90) },
	.want = "# enable 1000\n"
		"# overflow ffffffffffffffff\n"
		"# end\n",
},
{
	.name = "D215: PT in VMX root, an event that resumes at its own IP is no VM exit",
	.cite = "SDM 33.4.2.5 (PIP.NR: VMX non-root), Table 33-53 (a VM exit comes from non-root "
		"operation), Table 33-55 cases 11-13 (FUP, TIP of an event)",
	.dialect = RTIT_DIALECT_PT,
	/* NOP, NOP at 0x1000.  PSB+ PIP(CR3 0x1000, NR=0) @16: VMX root;
	 * FUP(0x1001) @33, TIP(0x1001) @40: an interrupt at 0x1001 whose
	 * handler starts there (a nested NMI at its handler's entry) */
	STREAM(PT_PSB, 0x02, 0x43, 0x00, 0x01, 0, 0, 0, 0, PT_PSBEND, PT_PGE6(0x1000),
	       PT_FUP6(0x1001), PT_TIP6(0x1001)),
	.img = { REG(0x1000, 0x90, 0x90) },
	.want = "# enable 1000\n"
		"I 0000000000001000 other    len=1 -> 0000000000001001\n"
		"E 0000000000001001 event    -> 0000000000001001\n"
		"# end\n",
},
{
	.name = "D220: RTIT an INT n whose TIP is not IDT entry n's handler",
	.cite = "SDM Vol. 2A INT n (the vector selects IDT entry n), RTIT Table 19 (a far "
		"transfer: FUP.FAR(NLIP), TIP(BLIP))",
	.dialect = RTIT_DIALECT_RTIT,
	.idt = { { 0x20, 0x2000 } },
	/* INT 0x20 at 0x1000 (CD 20); FUP.FAR(0x1002) @16, TIP(0x3000) @23:
	 * the IDT sends vector 0x20 to 0x2000 */
	STREAM(R_PSB, R_PGE(0x1000), R_FAR(0x1002), R_TIP(0x3000)),
	.img = { REG(0x1000, 0xcd, 0x20), REG(0x2000, 0x90), REG(0x3000, 0x90) },
	.want = "# enable 1000\n"
		"# error @23 packet not allowed here\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "D220: RTIT an INT n to IDT entry n's handler (control)",
	.cite = "SDM Vol. 2A INT n, RTIT Table 19",
	.dialect = RTIT_DIALECT_RTIT,
	.idt = { { 0x20, 0x2000 } },
	STREAM(R_PSB, R_PGE(0x1000), R_FAR(0x1002), R_TIP(0x2000)),
	.img = { REG(0x1000, 0xcd, 0x20), REG(0x2000, 0x90), REG(0x3000, 0x90) },
	.want = "# enable 1000\n"
		"I 0000000000001000 int      len=2 T -> 0000000000002000\n"
		"# end\n",
},
{
	.name = "D221: PT the records a TIP's target leads to wait for the packet after it",
	.cite = "SDM 33.4.2.1 (TNT bits in order), 33.4.2.2 (TIP), Table 33-55 case 11 (SYSCALL: TIP)",
	.dialect = RTIT_DIALECT_PT,
	/* JMP RAX at 0x1000; JZ +0, SYSCALL at 0x2000.  TIP(0x2000) @25,
	 * TNT of two bits (0C: T, N) @32.  The JZ takes the T; the SYSCALL
	 * needs a TIP with a bit left: the TNT does not fit where the TIP
	 * sent the walk, and which of the two is wrong the stream does not
	 * say, so neither the JMP's record nor the JZ's goes out */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), PT_TIP6(0x2000), 0x0c),
	.img = { REG(0x1000, 0xff, 0xe0), REG(0x2000, 0x74, 0x00, 0x0f, 0x05) },
	.want = "# enable 1000\n"
		"# error @32 packet not allowed here\n"
		"# end\n",
	.want_errors = 1,
},
{
	.name = "D221: PT the TNT after a TIP used up establishes the records (control)",
	.cite = "SDM 33.4.2.1, 33.4.2.2, Table 33-55 case 11",
	.dialect = RTIT_DIALECT_PT,
	/* as above with a TNT of one taken bit (06) @32 and TIP(0x3000) @33
	 * for the SYSCALL; NOP at 0x3000 */
	STREAM(PT_PSB, PT_PSBEND, PT_PGE6(0x1000), PT_TIP6(0x2000), 0x06, PT_TIP6(0x3000)),
	.img = { REG(0x1000, 0xff, 0xe0), REG(0x2000, 0x74, 0x00, 0x0f, 0x05), REG(0x3000, 0x90) },
	.want = "# enable 1000\n"
		"I 0000000000001000 jmp-ind  len=2 T -> 0000000000002000\n"
		"I 0000000000002000 cond     len=2 T -> 0000000000002002\n"
		"I 0000000000002002 syscall  len=2 T -> 0000000000003000\n"
		"# end\n",
},
{
	.name = "D222: RTIT a MOV CR3's PIP after a FUP.BuffOvf does not show tracing on",
	.cite = "RTIT 4.2.5 (the overflow may clear with PacketEn 0), 4.2.10 (PIP goes out with "
		"PacketEn 0), Table 19 (JMP RAX: TIP)",
	.dialect = RTIT_DIALECT_RTIT,
	/* NOP, JMP RAX at 0x1000; MOV CR3,RAX and JMP RAX at 0x1800.
	 * FUP.PGE(0x1000) @9, FUP.BuffOvf(0x1800) @16, PIP @23, PIP @29.
	 * Tracing on at 0x1800, the MOV CR3 takes the PIP @23 and the JMP
	 * RAX needs a TIP, where the second PIP is: tracing was off, both
	 * PIPs went out with PacketEn 0, and the MOV CR3 walked is dropped */
	STREAM(R_PSB, R_PGE(0x1000), R_BUFFOVF(0x1800), R_PIP0, R_PIP0),
	.img = { REG(0x1000, 0x90, 0xff, 0xe0), REG(0x1800, 0x0f, 0x22, 0xd8, 0xff, 0xe0) },
	.want = "# enable 1000\n"
		"# overflow 1800\n"
		"# uncertain 1\n"
		"# disable ffffffffffffffff\n"
		"# end\n",
},
{
	.name = "D222: RTIT a MOV CR3's PIP after a FUP.BuffOvf, then the JMP's TIP (control)",
	.cite = "RTIT 4.2.5, 4.2.10, Table 19",
	.dialect = RTIT_DIALECT_RTIT,
	/* as above, with TIP(0x1000) @29 for the JMP RAX: tracing was on */
	STREAM(R_PSB, R_PGE(0x1000), R_BUFFOVF(0x1800), R_PIP0, R_TIP(0x1000)),
	.img = { REG(0x1000, 0x90, 0xff, 0xe0), REG(0x1800, 0x0f, 0x22, 0xd8, 0xff, 0xe0) },
	.want = "# enable 1000\n"
		"# overflow 1800\n"
		"I 0000000000001800 mov-cr3  len=3 -> 0000000000001803\n"
		"I 0000000000001803 jmp-ind  len=2 T -> 0000000000001000\n"
		"# end\n",
},
{
	.name = "D214: RTIT erratum E5's TIP after a FUP.BuffOvf that cleared with tracing off",
	.cite = "RTIT Appendix E erratum E5 (a TIP repeating the FUP.BuffOvf's IP: ignore it), "
		"3.3.5, 4.2.5",
	.dialect = RTIT_DIALECT_RTIT,
	.ctl_fixed = true,
	.ctl = 0x2009,
	.r_events = 0x30,	/* Filter RANGE0, TraceStop always off (Table 7) */
	.r_lip = { 0x1000, 0, 0x1100, 0 },	/* RANGE0 = [0x1000, 0x1100) */
	.r_errata = RTIT_FLOW_E5,
	/* NOP, JMP RAX at 0x1000; NOPs at 0x1800.  FUP.PGE(0x1000) @9,
	 * FUP.BuffOvf(0x1800) @16 outside the range, TIP(0x1800) @23: E5's
	 * repeat, not a TIP while tracing is off */
	STREAM(R_PSB, R_PGE(0x1000), R_BUFFOVF(0x1800), R_TIP(0x1800)),
	.img = { REG(0x1000, 0x90, 0xff, 0xe0), REG(0x1800, 0x90, 0x90, 0x90) },
	.want = "# enable 1000\n"
		"# overflow ffffffffffffffff\n"
		"# end\n",
},
