/*
 * test_pt_timing.c - CYC (33.3.6: Example 33-1, Example 33-2's ordering,
 * Table 33-13's thresholds), MTC (33.4.2.12), TSC and TMA (33.4.2.11,
 * 33.4.2.13, 33.8.3), CBR (33.4.2.10).
 *
 * CYC encodings (Table 33-33, worked out by hand): CYC(2) 13, CYC(6) 33,
 * CYC(8) 43, CYC(10) 53, CYC(4095) FF FE, CYC(8194) 17 01 04,
 * CYC(4027) DF FA.
 */
#include "pt_harness.h"

#define PIP0 0x02, 0x43, 0, 0, 0, 0, 0, 0

static struct px h;

static size_t start(uint64_t ctl, uint64_t at)
{
	px_init(&h);
	px_start(&h);
	px_single_range(&h);
	px_msr(&h, RTIT_PT_MSR_CTL, ctl);
	px_at(&h, at);
	px_op(&h, 0x1000, 2);
	return h.n;
}

Test(timing, example_33_1)
{
	const uint64_t x = 100;
	size_t n = start(PT_CTL_ON | RTIT_PT_CTL_CYC_EN, 90);

	/* No CYC in the enable packets: the counter starts at the enable. */
	px_expect(&h, 0, PT_PSB, PT_CBR(16), PIP0, PT_PSBEND, PT_MODE64, 0x31, 0x00, 0x10);
	px_at(&h, x);
	px_insn(&h, RTIT_IC_INDIRECT_CALL, 0x1002, 2, 0x1100, true);	/* call %eax */
	px_at(&h, x + 2);
	px_insn(&h, RTIT_IC_INDIRECT_CALL, 0x1100, 2, 0x1200, true);	/* call %ebx */
	px_expect(&h, n, 0x53, 0x2d, 0x00, 0x11, 0x13, 0x2d, 0x00, 0x12);
	n = h.n;
	px_at(&h, x + 8);
	px_insn(&h, RTIT_IC_COND, 0x1200, 2, 0x1300, false);		/* jnz Foo */
	px_expect(&h, n, 0x33);
	px_at(&h, x + 9);
	px_insn(&h, RTIT_IC_RET, 0x1202, 1, 0x1102, true);		/* ret, compressed */
	px_at(&h, x + 12);
	px_insn(&h, RTIT_IC_COND, 0x1102, 2, 0x1104, true);		/* jnz Bar */
	px_at(&h, x + 16);
	px_insn(&h, RTIT_IC_RET, 0x1104, 1, 0x1500, true);		/* ret, uncompressed */
	/* TNT(NT, T, T) = 1011b << 1, CYC(8), TIP. */
	px_expect(&h, n, 0x33, 0x16, 0x43, 0x2d, 0x00, 0x15);
	/* The stand-alone CYCs of the example are modelled as the CYCs of
	 * MOV CR3s at those times (rtitsim sends CYCs only before eligible
	 * packets): 2- and 3-byte CYCs. */
	n = h.n;
	px_at(&h, x + 4111);
	px_insn(&h, RTIT_IC_MOV_CR3, 0x1500, 3, 0x1503, false);
	px_at(&h, x + 12305);
	px_insn(&h, RTIT_IC_MOV_CR3, 0x1503, 3, 0x1506, false);
	px_at(&h, x + 16332);
	px_insn(&h, RTIT_IC_MOV_CR3, 0x1506, 3, 0x1509, false);
	px_expect(&h, n, 0xff, 0xfe, PIP0, 0x17, 0x01, 0x04, PIP0, 0xdf, 0xfa, PIP0);
}

Test(timing, example_33_1_standalone)
{
	const uint64_t x = 100;

	px_init(&h);
	h.p.cyc_standalone = 4095;
	px_start(&h);
	px_single_range(&h);
	px_msr(&h, RTIT_PT_MSR_CTL, PT_CTL_ON | RTIT_PT_CTL_CYC_EN);
	px_at(&h, x + 14);
	px_op(&h, 0x1000, 2);
	px_at(&h, x + 16);
	px_insn(&h, RTIT_IC_INDIRECT_JMP, 0x1002, 2, 0x1500, true);	/* CYC(2), TIP */
	size_t n = h.n;
	/* Example 33-1 row x + 4111: CYC(4095) with no packet, 4095 cycles
	 * after the last CYC (D49: cyc_standalone = 4095, CYCThresh 0). */
	px_at(&h, x + 4111);
	px_op(&h, 0x1500, 2);
	px_expect(&h, n, 0xff, 0xfe);
	/* The example's next one is CYC(8194), 8194 cycles later: its
	 * intervals are illustrative ("no guarantee at what intervals");
	 * with N = 4095 the model sends two CYC(4095) by x + 12305 ... */
	n = h.n;
	px_at(&h, x + 12305);
	px_op(&h, 0x1502, 2);
	px_expect(&h, n, 0xff, 0xfe, 0xff, 0xfe);
	/* ... and the MOV CR3 at x + 16332 gets CYC(16332 - 12301 = 4031):
	 * 4031 & 31 = 31 -> FF, 4031 >> 5 = 125 -> FA (Table 33-33). */
	n = h.n;
	px_at(&h, x + 16332);
	px_insn(&h, RTIT_IC_MOV_CR3, 0x1504, 3, 0x1507, false);
	px_expect(&h, n, 0xff, 0xfa, PIP0);
}

Test(timing, standalone_cyc_leaves_the_threshold)
{
	px_init(&h);
	h.p.cyc_standalone = 100;
	px_start(&h);
	px_single_range(&h);
	/* CycThresh 5: N = 16 (Table 33-13) */
	px_msr(&h, RTIT_PT_MSR_CTL, PT_CTL_ON | RTIT_PT_CTL_CYC_EN |
	       (5ull << RTIT_PT_CTL_CYC_THRESH_SHIFT));
	px_at(&h, 1000);
	px_op(&h, 0x1000, 2);
	size_t n = h.n;
	/* 115 cycles: below 100 + 16, nothing */
	px_at(&h, 1115);
	px_op(&h, 0x1002, 2);
	px_expect(&h, n);
	/* 130: CYC(100) (100 & 31 = 4 -> 27, 100 >> 5 = 3 -> 06); 30 left,
	 * at or above the threshold, so the TIP at 131 has CYC(31) FB */
	px_at(&h, 1130);
	px_op(&h, 0x1004, 2);
	px_at(&h, 1131);
	px_insn(&h, RTIT_IC_INDIRECT_JMP, 0x1006, 2, 0x1500, true);
	px_expect(&h, n, 0x27, 0x06, 0xfb, 0x2d, 0x00, 0x15);
}

Test(timing, standalone_cyc_waits_for_an_open_tnt)
{
	px_init(&h);
	h.p.cyc_standalone = 100;
	px_start(&h);
	px_single_range(&h);
	px_msr(&h, RTIT_PT_MSR_CTL, PT_CTL_ON | RTIT_PT_CTL_CYC_EN);
	px_at(&h, 1000);
	px_op(&h, 0x1000, 2);
	size_t n = h.n;
	/* a branch at 1010: its CYC(10) 53 goes out with the first bit */
	px_at(&h, 1010);
	px_insn(&h, RTIT_IC_COND, 0x1002, 2, 0x1004, false);
	px_expect(&h, n, 0x53);
	/* 300 cycles on with the TNT open: no stand-alone CYC (its CYC must
	 * stay the last before it, 33.3.6.2) */
	n = h.n;
	px_at(&h, 1310);
	px_op(&h, 0x1004, 2);
	px_expect(&h, n);
	/* the TIP forces out TNT(N) 04, then CYC(1311 - 1010 = 301) and the
	 * TIP; 301 & 31 = 13 -> 6F, 301 >> 5 = 9 -> 12 */
	px_at(&h, 1311);
	px_insn(&h, RTIT_IC_INDIRECT_JMP, 0x1006, 2, 0x1500, true);
	px_expect(&h, n, 0x04, 0x6f, 0x12, 0x2d, 0x00, 0x15);
}

Test(timing, example_33_2_ordering)
{
	size_t n = start(PT_CTL_ON | RTIT_PT_CTL_CYC_EN, 90);
	const uint64_t x = 100;

	px_at(&h, x);
	px_insn(&h, RTIT_IC_DIRECT_CALL, 0x1002, 5, 0x1100, true);
	px_insn(&h, RTIT_IC_COND, 0x1100, 2, 0x1200, false);		/* x+1: CYC */
	px_at(&h, x + 2);
	px_insn(&h, RTIT_IC_RET, 0x1102, 1, 0x1007, true);		/* compressed */
	px_at(&h, x + 8);
	px_insn(&h, RTIT_IC_COND, 0x1007, 2, 0x1009, true);
	px_at(&h, x + 9);
	px_insn(&h, RTIT_IC_INDIRECT_JMP, 0x1009, 2, 0x1300, true);	/* TNT, CYC(8), TIP */
	px_at(&h, x + 12);
	px_insn(&h, RTIT_IC_COND, 0x1300, 2, 0x1400, false);		/* CYC(3) */
	px_at(&h, x + 32);
	h.cr3 = 0x5000;
	h.mode = 32;
	px_insn(&h, RTIT_IC_INT, 0x1302, 1, 0x1600, true);		/* int3, task gate */
	/* Example 33-2 (33.3.6.2): its CYC values do not add up; its order is
	 * TNT, FUP (not CYC-eligible), CYC, PIP, MODE.Exec, TIP.  One clock
	 * for the whole operation gives one CYC. */
	px_expect(&h, n, 0x5b, 0x16, 0x43, 0x2d, 0x00, 0x13, 0x1b,
		  0x04, 0x3d, 0x02, 0x13, 0xa3, 0x02, 0x43, 0x00, 0x05, 0, 0, 0, 0,
		  PT_MODE32, 0x2d, 0x00, 0x16);
}

/* Table 33-13: which rows get a CYC, per CycThresh (0, 5, 6, 7 = N 0, 16,
 * 32, 64). */
static void table_33_13(unsigned enc, const bool want[8])
{
	const uint64_t x = 200;
	struct { uint64_t t; uint8_t cls; } rows[8] = {
		{ 0, RTIT_IC_INDIRECT_JMP }, { 9, RTIT_IC_INDIRECT_CALL },
		{ 15, RTIT_IC_INDIRECT_CALL }, { 30, RTIT_IC_INDIRECT_JMP },
		{ 38, RTIT_IC_MOV_CR3 }, { 46, RTIT_IC_INDIRECT_JMP },
		{ 64, RTIT_IC_INDIRECT_CALL }, { 71, RTIT_IC_INDIRECT_JMP },
	};
	start(PT_CTL_ON | RTIT_PT_CTL_CYC_EN | ((uint64_t)enc << RTIT_PT_CTL_CYC_THRESH_SHIFT), 100);
	for (int i = 0; i < 8; i++) {
		size_t k = h.ntypes;
		px_at(&h, x + rows[i].t);
		px_insn(&h, rows[i].cls, 0x1100, 2, 0x1100, rows[i].cls != RTIT_IC_MOV_CR3);
		cr_assert_eq(h.ntypes - k, want[i] ? 2u : 1u, "CycThresh %u row %d", enc, i);
		cr_expect_eq(h.types[k] == RTIT_PT_CYC, want[i], "CycThresh %u row %d", enc, i);
		cr_expect_eq(h.types[h.ntypes - 1],
			     rows[i].cls == RTIT_IC_MOV_CR3 ? RTIT_PT_PIP : RTIT_PT_TIP);
	}
}

Test(timing, table_33_13_thresholds)
{
	const bool t0[8] = { 1, 1, 1, 1, 1, 1, 1, 1 };
	const bool t16[8] = { 1, 0, 0, 1, 0, 1, 1, 0 };
	const bool t32[8] = { 1, 0, 0, 0, 1, 0, 0, 1 };
	const bool t64[8] = { 1, 0, 0, 0, 0, 0, 1, 0 };
	table_33_13(0, t0);
	table_33_13(5, t16);
	table_33_13(6, t32);
	table_33_13(7, t64);
}

Test(timing, cyc_off_sends_none)
{
	size_t n = start(PT_CTL_ON, 90);
	px_at(&h, 150);
	px_insn(&h, RTIT_IC_INDIRECT_JMP, 0x1002, 2, 0x1100, true);
	px_expect(&h, n, 0x2d, 0x00, 0x11);
}

Test(timing, tsc_tma_in_psb)
{
	px_init(&h);
	h.p.art_num = 2;	/* TSC = 2 * ART */
	h.p.art_den = 1;
	px_start(&h);
	px_single_range(&h);
	px_msr(&h, RTIT_PT_MSR_CTL, PT_CTL_ON | RTIT_PT_CTL_TSC_EN | RTIT_PT_CTL_MTC_EN);
	px_at(&h, 0x12345);
	px_op(&h, 0x1000, 2);
	/* TSC 0x12345; ART = 0x91a2, FastCounter = 1 (33.8.3.2). */
	px_expect(&h, 0, PT_PSB, 0x19, 0x45, 0x23, 0x01, 0, 0, 0, 0,
		  0x02, 0x73, 0xa2, 0x91, 0x00, 0x01, 0x00,
		  PT_CBR(16), PIP0, PT_PSBEND, PT_MODE64, 0x31, 0x00, 0x10);
}

Test(timing, tsc_without_mtc_no_tma)
{
	px_init(&h);
	px_start(&h);
	px_single_range(&h);
	px_msr(&h, RTIT_PT_MSR_CTL, PT_CTL_ON | RTIT_PT_CTL_TSC_EN);
	px_at(&h, 0x100);
	px_op(&h, 0x1000, 2);
	px_expect(&h, 0, PT_PSB, 0x19, 0x00, 0x01, 0, 0, 0, 0, 0, PT_CBR(16), PIP0, PT_PSBEND,
		  PT_MODE64, 0x31, 0x00, 0x10);
}

Test(timing, mtc_on_art_bit)
{
	/* MTCFreq 3: an MTC each time ART[10:3] changes, CTC = ART >> 3. */
	size_t n = start(PT_CTL_ON | RTIT_PT_CTL_MTC_EN | (3ull << RTIT_PT_CTL_MTC_FREQ_SHIFT), 0x100);
	px_at(&h, 0x104);
	px_op(&h, 0x1002, 2);
	px_expect(&h, n);
	px_at(&h, 0x108);
	px_op(&h, 0x1004, 2);
	px_at(&h, 0x10f);
	px_op(&h, 0x1006, 2);
	px_at(&h, 0x110);
	px_op(&h, 0x1008, 2);
	px_expect(&h, n, 0x59, 0x21, 0x59, 0x22);
}

Test(timing, mtc_does_not_flush_tnt_and_shares_cyc)
{
	size_t n = start(PT_CTL_ON | RTIT_PT_CTL_MTC_EN | RTIT_PT_CTL_CYC_EN, 0x100);
	px_at(&h, 0x102);
	px_insn(&h, RTIT_IC_COND, 0x1002, 2, 0x1100, true);	/* MTC, then the bit */
	px_at(&h, 0x102);
	px_insn(&h, RTIT_IC_COND, 0x1100, 2, 0x1200, false);
	px_insn(&h, RTIT_IC_INDIRECT_JMP, 0x1102, 2, 0x1300, true);
	/* 0x102: CYC(2), MTC(0x01), MTC(0x02) (MTCFreq 0: one per ART tick,
	 * the CYC shared); the TNT's
	 * first bit at the same clock gets no second CYC.  0x103: CYC(1) and
	 * MTC(0x03) go before the TNT(T, NT) (timing packets do not flush
	 * it, D21), the TIP at the same clock shares the CYC. */
	px_expect(&h, n, 0x13, 0x59, 0x01, 0x59, 0x02, 0x0b, 0x59, 0x03, 0x0c, 0x2d, 0x00, 0x13);
}

Test(timing, cbr_on_frequency_change)
{
	size_t n = start(PT_CTL_ON, 0x100);
	struct rtit_sim_rec r = px_rec(&h, RTIT_SIM_EVENT, RTIT_EV_FREQ_CHANGE, 0x1002, 0, 0x1002, false);
	r.value = 0x22;
	px_feed(&h, &r);
	px_expect(&h, n, PT_CBR(0x22));
}
