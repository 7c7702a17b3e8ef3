/*
 * test_pt_tsx.c - Intel TSX in the Intel PT model: SDM Table 33-55 cases
 * 18-21 (33.7) and Table 33-10 (33.2.9.1) row by row, on hand-written
 * records, then MODE.TSX with FilterEn=0 (33.2.9.2), its BranchEn and
 * ContextEn dependencies (Table 33-6, Table 33-27, 33.3.7) and PSB+.
 *
 * The bytes are derived from the packet definitions: MODE.TSX (Table
 * 33-27) is 0x99 then 001b in bits 7:5 with TXAbort in bit 1 and InTX in
 * bit 0: begin 0x99 0x21, commit 0x99 0x20, abort 0x99 0x22.  As in
 * test_pt_table55.c, code lives in 0x1000-0x1fff after a TIP.PGE(0x1000),
 * so every IP packet is IPBytes 001b (Table 33-18) with IP[15:0]: FUP
 * 0x3d (11101b | 001b << 5), TIP 0x2d, TIP.PGE 0x31, TIP.PGD 0x21.
 */
#include "pt_harness.h"

static struct px h;

static size_t start(uint64_t ctl, uint64_t ip, void (*setup)(void))
{
	px_init(&h);
	if (setup)
		setup();
	px_start(&h);
	px_single_range(&h);
	px_msr(&h, RTIT_PT_MSR_CTL, ctl);
	px_op(&h, ip, 2);
	return h.n;
}

/* An XBEGIN or XEND; @tx: it changed InTX (the simulator's TX flag). */
static void tsx(uint8_t cls, uint64_t ip, uint8_t len, bool tx)
{
	struct rtit_sim_rec r = px_rec(&h, RTIT_SIM_INSN, cls, ip, len, ip + len, false);
	if (tx)
		r.flags |= RTIT_SIM_F_TX;
	px_feed(&h, &r);
}

#define XBEGIN(ip, tx) tsx(RTIT_IC_XBEGIN, (ip), 6, (tx))
#define XEND(ip, tx) tsx(RTIT_IC_XEND, (ip), 3, (tx))
#define ABORT(ip, fallback) px_event(&h, RTIT_EV_TSX_ABORT, (ip), (fallback), 0)

Test(tsx, case19_begin)
{
	size_t n = start(PT_CTL_ON, 0x1000, NULL);
	/* A partial TNT goes out first (33.4.2.1, D21): TNT(T) = (1 << 1 | 1) << 1. */
	px_insn(&h, RTIT_IC_COND, 0x1002, 2, 0x1010, true);
	XBEGIN(0x1010, true);
	px_expect(&h, n, 0x06, 0x99, 0x21, 0x3d, 0x10, 0x10);
}

Test(tsx, case18_nested_begin_and_inner_end_send_nothing)
{
	size_t n = start(PT_CTL_ON, 0x1000, NULL);
	XBEGIN(0x1002, true);
	n = h.n;
	XBEGIN(0x1008, false);		/* nested: no change of InTX */
	px_op(&h, 0x100e, 2);
	XEND(0x1010, false);		/* not the outermost */
	px_expect(&h, n);
}

Test(tsx, case20_commit)
{
	size_t n = start(PT_CTL_ON, 0x1000, NULL);
	XBEGIN(0x1002, true);
	px_op(&h, 0x1008, 3);
	XEND(0x100b, true);
	px_expect(&h, n, 0x99, 0x21, 0x3d, 0x02, 0x10, 0x99, 0x20, 0x3d, 0x0b, 0x10);
}

Test(tsx, case21_abort)
{
	size_t n = start(PT_CTL_ON, 0x1000, NULL);
	XBEGIN(0x1002, true);
	n = h.n;
	px_op(&h, 0x1008, 3);
	ABORT(0x100b, 0x1040);		/* an XABORT at 0x100b, fallback 0x1040 */
	/* MODE.TSX(TXAbort=1, InTX=0), FUP(CLIP), TIP(BLIP = the fallback) */
	px_expect(&h, n, 0x99, 0x22, 0x3d, 0x0b, 0x10, 0x2d, 0x40, 0x10);
}

Test(tsx, case21_abort_then_the_interrupt_at_the_fallback)
{
	size_t n = start(PT_CTL_ON, 0x1000, NULL);
	XBEGIN(0x1002, true);
	n = h.n;
	/* the interrupt aborts at the NLIP 0x1008; it is taken at the
	 * fallback (Table 33-55 cases 21 then 11) */
	ABORT(0x1008, 0x1040);
	px_event(&h, RTIT_EV_EXT_INTERRUPT, 0x1040, 0x1900, 0x20);
	px_expect(&h, n, 0x99, 0x22, 0x3d, 0x08, 0x10, 0x2d, 0x40, 0x10,
		  0x3d, 0x40, 0x10, 0x2d, 0x00, 0x19);
}

/* Tracing in the filter range 0x1000-0x1fff (ADDR0_CFG = 1, Table 33-2),
 * enabled at 0x1000. */
static size_t start_filtered(void)
{
	px_init(&h);
	px_start(&h);
	px_single_range(&h);
	px_msr(&h, RTIT_PT_MSR_ADDR0_A, 0x1000);
	px_msr(&h, RTIT_PT_MSR_ADDR0_B, 0x1fff);
	px_msr(&h, RTIT_PT_MSR_CTL,
	       PT_CTL_ON | (uint64_t)RTIT_PT_ADDR_FILTER << RTIT_PT_CTL_ADDR_CFG_SHIFT(0));
	px_op(&h, 0x1000, 2);
	return h.n;
}

Test(tsx, commit_outside_the_filter_sends_mode_tsx_alone)
{
	size_t n = start_filtered();
	XBEGIN(0x1002, true);
	px_insn(&h, RTIT_IC_INDIRECT_JMP, 0x1008, 2, 0x4000, true);	/* leaves */
	XEND(0x4000, true);
	px_insn(&h, RTIT_IC_INDIRECT_JMP, 0x4003, 2, 0x1010, true);	/* enters */
	/* begin; TIP.PGD(0x4000) (Table 33-56 case 4); MODE.TSX(InTX=0)
	 * with no FUP (33.2.9.2); TIP.PGE(0x1010) (case 5) */
	px_expect(&h, n, 0x99, 0x21, 0x3d, 0x02, 0x10, 0x21, 0x00, 0x40, 0x99, 0x20,
		  0x31, 0x10, 0x10);
}

Test(tsx, abort_to_a_fallback_outside_the_filter)
{
	size_t n = start_filtered();
	XBEGIN(0x1002, true);
	ABORT(0x1008, 0x4000);
	/* Table 33-14, TSX update: MODE.TSX, FUP, then TIP.PGD */
	px_expect(&h, n, 0x99, 0x21, 0x3d, 0x02, 0x10, 0x99, 0x22, 0x3d, 0x08, 0x10,
		  0x21, 0x00, 0x40);
}

Test(tsx, abort_from_outside_the_filter_into_it)
{
	size_t n = start_filtered();
	px_insn(&h, RTIT_IC_INDIRECT_JMP, 0x1002, 2, 0x4000, true);	/* leaves */
	XBEGIN(0x4000, true);
	ABORT(0x4006, 0x1040);
	/* TIP.PGD(0x4000); MODE.TSX(InTX=1) alone; MODE.TSX(TXAbort=1)
	 * alone, then TIP.PGE(the fallback) */
	px_expect(&h, n, 0x21, 0x00, 0x40, 0x99, 0x21, 0x99, 0x22, 0x31, 0x40, 0x10);
}

Test(tsx, no_mode_tsx_without_branch_en_or_context_en)
{
	/* BranchEn=0: no COFI packets, MODE.TSX among them (Table 33-6) */
	size_t n = start(PT_CTL_ON & ~RTIT_PT_CTL_BRANCH_EN, 0x1000, NULL);
	XBEGIN(0x1002, true);
	ABORT(0x1008, 0x1040);
	px_expect(&h, n);
	/* ContextEn=0 (OS=0 at CPL 0): Table 33-27 needs ContextEn */
	n = start(PT_CTL_ON & ~RTIT_PT_CTL_OS, 0x1000, NULL);
	XBEGIN(0x1002, true);
	XEND(0x1008, true);
	px_expect(&h, n);
}

static void psb_every_64(void)
{
	h.p.caps.psb_cyc = false;	/* no PSBFreq: the fixed period */
	h.p.psb_period_nocfg = 64;
}

Test(tsx, psb_plus_inside_a_transaction_says_intx)
{
	start(PT_CTL_ON, 0x1000, psb_every_64);
	/* enable: PSB(16) CBR(4) PIP(8) PSBEND(2) MODE.Exec(2) TIP.PGE(3) */
	cr_assert_eq(h.n, 35);
	XBEGIN(0x1002, true);		/* 5 bytes: 40 */
	size_t n = h.n;
	for (int i = 0; i < 8; i++)	/* 8 TIPs of 3 bytes: 64, PSB+ due */
		px_insn(&h, RTIT_IC_INDIRECT_JMP, 0x1100 + 0x10 * (unsigned)i, 2,
			0x1110 + 0x10 * (unsigned)i, true);
	/* after the last TIP(0x1180): PSB+ with MODE.TSX(InTX=1) (33.3.7,
	 * D43), MODE.Exec and FUP(0x1180), LastIP 0 after the PSB */
	px_expect(&h, n, 0x2d, 0x10, 0x11, 0x2d, 0x20, 0x11, 0x2d, 0x30, 0x11, 0x2d, 0x40, 0x11,
		  0x2d, 0x50, 0x11, 0x2d, 0x60, 0x11, 0x2d, 0x70, 0x11, 0x2d, 0x80, 0x11,
		  PT_PSB, PT_CBR(16), 0x02, 0x43, 0, 0, 0, 0, 0, 0, 0x99, 0x21, PT_MODE64,
		  0x3d, 0x80, 0x11, PT_PSBEND);
}

Test(tsx, psb_plus_outside_a_transaction_only_with_psb_mode_tsx)
{
	start(PT_CTL_ON, 0x1000, NULL);
	/* the enabling PSB+ above had no MODE.TSX; with psb_mode_tsx it
	 * carries MODE.TSX(InTX=0) */
	px_init(&h);
	h.p.psb_mode_tsx = true;
	px_start(&h);
	px_single_range(&h);
	px_msr(&h, RTIT_PT_MSR_CTL, PT_CTL_ON);
	px_op(&h, 0x1000, 2);
	px_expect(&h, 0, PT_PSB, PT_CBR(16), 0x02, 0x43, 0, 0, 0, 0, 0, 0, 0x99, 0x20, PT_PSBEND,
		  PT_MODE64, 0x31, 0x00, 0x10);
}

Test(tsx, overflow_resolving_at_an_xbegin)
{
	px_init(&h);
	h.p.buffer_bytes = 40;
	px_start(&h);
	px_single_range(&h);
	px_msr(&h, RTIT_PT_MSR_CTL, PT_CTL_ON);
	px_op(&h, 0x1000, 2);		/* 35 bytes of enable packets */
	/* as test_pt_buffer.c: the third TIP overflows the 40-byte buffer */
	px_insn(&h, RTIT_IC_INDIRECT_JMP, 0x1002, 2, 0x1100, true);
	px_insn(&h, RTIT_IC_INDIRECT_JMP, 0x1100, 2, 0x1200, true);
	px_insn(&h, RTIT_IC_INDIRECT_JMP, 0x1200, 2, 0x1300, true);
	cr_expect_eq(h.m.stats.overflows, 1);
	h.cycles += 100;
	XBEGIN(0x1300, true);
	cr_assert_eq(rtit_pt_model_finish(&h.m), 0);
	/* it resolves at the XBEGIN: OVF, FUP(0x1300) with IPBytes 011b
	 * (D25), and only then the XBEGIN's own MODE.TSX and FUP (33.3.8:
	 * nothing but timing packets between the OVF and its FUP) */
	px_expect(&h, 0, PT_PSB, PT_CBR(16), 0x02, 0x43, 0, 0, 0, 0, 0, 0, PT_PSBEND, PT_MODE64,
		  0x31, 0x00, 0x10, 0x2d, 0x00, 0x11, 0x2d, 0x00, 0x12,
		  PT_OVF, 0x7d, 0x00, 0x13, 0, 0, 0, 0, 0x99, 0x21, 0x3d, 0x00, 0x13);
}
