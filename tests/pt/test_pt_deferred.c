/*
 * test_pt_deferred.c - deferred TIPs (SDM 33.4.2.3, Table 33-19; the
 * encoder parameter deferred_tips, docs/decisions.md D47): a near
 * indirect branch's TIP waits while a partial TNT accumulates and follows
 * that TNT when it goes out (full, or forced out by another packet); an
 * uncompressed RET is never deferred and forces them out (33.4.2.2).
 *
 * TNT-8 (Table 33-15): the stop bit above the bits, the oldest bit highest:
 * N = 04, NT = 0A, NNT = 12.  TIP against LastIP 0x1000 (IPBytes 001):
 * 2D lo hi; FUP 3D lo hi.
 */
#include "pt_harness.h"

#define PIP0 0x02, 0x43, 0, 0, 0, 0, 0, 0
#define ENABLE_1000 PT_PSB, PT_CBR(16), PIP0, PT_PSBEND, PT_MODE64, 0x31, 0x00, 0x10

static struct px h;

static void start(unsigned deferred, uint64_t ctl)
{
	px_init(&h);
	h.p.deferred_tips = (uint8_t)deferred;
	px_start(&h);
	px_single_range(&h);
	px_msr(&h, RTIT_PT_MSR_CTL, ctl);
	px_op(&h, 0x1000, 2);
}

/* Table 33-19's third row, at these addresses: Jcc N, JMP to 0x1300, Jcc
 * N, Jcc T, JMP to 0x1100, then an interrupt. */
static void table_33_19(void)
{
	px_insn(&h, RTIT_IC_COND, 0x1002, 2, 0x1004, false);
	px_insn(&h, RTIT_IC_INDIRECT_JMP, 0x1004, 2, 0x1300, true);
	px_insn(&h, RTIT_IC_COND, 0x1300, 2, 0x1302, false);
	px_insn(&h, RTIT_IC_COND, 0x1302, 2, 0x1500, true);
	px_insn(&h, RTIT_IC_INDIRECT_JMP, 0x1500, 2, 0x1100, true);
	px_event(&h, RTIT_EV_EXT_INTERRUPT, 0x1102, 0x1900, 0x20);
}

Test(deferred, table_33_19_deferred)
{
	start(8, PT_CTL_ON);
	table_33_19();
	/* "TNT(0b00100), TIP(0x1308), TIP(0x1100), FUP(0x110c), TIP(0xcc00)" */
	px_expect(&h, 0, ENABLE_1000, 0x12, 0x2d, 0x00, 0x13, 0x2d, 0x00, 0x11,
		  0x3d, 0x02, 0x11, 0x2d, 0x00, 0x19);
}

Test(deferred, table_33_19_not_deferred)
{
	start(0, PT_CTL_ON);
	table_33_19();
	/* the left column: TNT(0b0), TIP, TNT(0b010), TIP, FUP, TIP */
	px_expect(&h, 0, ENABLE_1000, 0x04, 0x2d, 0x00, 0x13, 0x0a, 0x2d, 0x00, 0x11,
		  0x3d, 0x02, 0x11, 0x2d, 0x00, 0x19);
}

Test(deferred, at_most_deferred_tips)
{
	start(1, PT_CTL_ON);
	px_insn(&h, RTIT_IC_COND, 0x1002, 2, 0x1004, false);
	px_insn(&h, RTIT_IC_INDIRECT_JMP, 0x1004, 2, 0x1300, true);	/* held */
	px_insn(&h, RTIT_IC_COND, 0x1300, 2, 0x1400, true);
	px_insn(&h, RTIT_IC_INDIRECT_JMP, 0x1400, 2, 0x1500, true);	/* one too many */
	px_insn(&h, RTIT_IC_COND, 0x1500, 2, 0x1502, false);
	cr_assert_eq(rtit_pt_model_finish(&h.m), 0);
	/* TNT(N T), the held TIP, then the second at once (the TNT is
	 * empty), and the last bit at the end. */
	px_expect(&h, 0, ENABLE_1000, 0x0a, 0x2d, 0x00, 0x13, 0x2d, 0x00, 0x15, 0x04);
}

Test(deferred, uncompressed_ret_forces_out)
{
	start(8, PT_CTL_ON);
	px_insn(&h, RTIT_IC_COND, 0x1002, 2, 0x1004, false);
	px_insn(&h, RTIT_IC_INDIRECT_CALL, 0x1004, 2, 0x1300, true);	/* held */
	px_insn(&h, RTIT_IC_RET, 0x1300, 1, 0x1234, true);		/* not to 0x1006 */
	px_expect(&h, 0, ENABLE_1000, 0x04, 0x2d, 0x00, 0x13, 0x2d, 0x34, 0x12);
}

Test(deferred, full_tnt_takes_them_out)
{
	start(8, PT_CTL_ON);
	px_insn(&h, RTIT_IC_COND, 0x1002, 2, 0x1004, true);
	px_insn(&h, RTIT_IC_INDIRECT_JMP, 0x1004, 2, 0x1300, true);	/* held */
	for (unsigned i = 0; i < 5; i++)
		px_insn(&h, RTIT_IC_COND, 0x1300, 2, 0x1302, false);
	/* the sixth bit fills TNT-8: TNT(T N N N N N) = 1 100000 0 = C0,
	 * then the TIP; nothing held at the end */
	px_expect(&h, 0, ENABLE_1000, 0xc0, 0x2d, 0x00, 0x13);
	size_t n = h.n;
	cr_assert_eq(rtit_pt_model_finish(&h.m), 0);
	px_expect(&h, n);
}

Test(deferred, not_with_cyc)
{
	enum rtit_pkt_type want[] = { RTIT_PT_TNT8, RTIT_PT_TIP, RTIT_PT_TNT8, RTIT_PT_TIP,
				      RTIT_PT_FUP, RTIT_PT_TIP };
	size_t k = 0, first;

	start(8, PT_CTL_ON | RTIT_PT_CTL_CYC_EN);
	first = h.ntypes;
	table_33_19();
	/* D47: with CYCEn the TIPs go out in place (a CYC belongs right
	 * before its packet, 33.3.6) */
	for (size_t i = first; i < h.ntypes; i++) {
		if (h.types[i] == RTIT_PT_CYC)
			continue;
		cr_assert_lt(k, sizeof(want) / sizeof(want[0]));
		cr_expect_eq(h.types[i], want[k], "packet %zu is %s", k, rtit_pkt_name(h.types[i]));
		k++;
	}
	cr_expect_eq(k, sizeof(want) / sizeof(want[0]));
}
