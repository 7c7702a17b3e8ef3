/*
 * test_pt_buffer.c - the internal buffer and its overflow (33.3.8: OVF,
 * then FUP or a later TIP.PGE; LastIP kept, D25; the CYC of the OVF,
 * D24), and PSB+ insertion by PSBFreq (33.3.7, 33.4.2.17, D20).
 */
#include "pt_harness.h"

#define PIP0 0x02, 0x43, 0, 0, 0, 0, 0, 0
#define ENABLE_1000 PT_PSB, PT_CBR(16), PIP0, PT_PSBEND, PT_MODE64, 0x31, 0x00, 0x10

static struct px h;

static void start(uint64_t ctl, uint64_t buffer)
{
	px_init(&h);
	h.p.buffer_bytes = buffer;
	px_start(&h);
	px_single_range(&h);
	px_msr(&h, RTIT_PT_MSR_CTL, ctl);
	px_op(&h, 0x1000, 2);	/* 35 bytes of enable packets */
}

Test(buffer, overflow_then_ovf_fup)
{
	start(PT_CTL_ON, 40);
	/* The buffer drains 1 byte per cycle: 35 -> 34 + 3 -> 36 + 3 = 39 ->
	 * 38 + 3 overflows: the third TIP and everything after are lost. */
	px_insn(&h, RTIT_IC_INDIRECT_JMP, 0x1002, 2, 0x1100, true);
	px_insn(&h, RTIT_IC_INDIRECT_JMP, 0x1100, 2, 0x1200, true);
	px_insn(&h, RTIT_IC_INDIRECT_JMP, 0x1200, 2, 0x1300, true);
	px_insn(&h, RTIT_IC_COND, 0x1300, 2, 0x1300, true);
	px_insn(&h, RTIT_IC_INDIRECT_JMP, 0x1302, 2, 0x1400, true);
	cr_expect_eq(h.m.stats.overflows, 1);
	h.cycles += 100;
	/* Empty again: OVF, FUP(current IP) with IPBytes 011b, which needs no
	 * LastIP (D25: right for decoders that keep it and for those that
	 * reset it), then the TIP compressed against it. */
	px_insn(&h, RTIT_IC_INDIRECT_JMP, 0x1400, 2, 0x1500, true);
	cr_assert_eq(rtit_pt_model_finish(&h.m), 0);
	px_expect(&h, 0, ENABLE_1000, 0x2d, 0x00, 0x11, 0x2d, 0x00, 0x12,
		  PT_OVF, 0x7d, 0x00, 0x14, 0, 0, 0, 0, 0x2d, 0x00, 0x15);
}

Test(buffer, overflow_with_cyc_and_no_packeten)
{
	px_init(&h);
	h.p.buffer_bytes = 40;
	px_start(&h);
	px_single_range(&h);
	px_msr(&h, RTIT_PT_MSR_ADDR0_A, 0x1000);
	px_msr(&h, RTIT_PT_MSR_ADDR0_B, 0x1fff);
	px_msr(&h, RTIT_PT_MSR_CTL, PT_CTL_ON | RTIT_PT_CTL_CYC_EN |
	       (1ull << RTIT_PT_CTL_ADDR_CFG_SHIFT(0)));
	px_op(&h, 0x1000, 2);
	px_insn(&h, RTIT_IC_INDIRECT_JMP, 0x1002, 2, 0x1100, true);	/* CYC(1), TIP */
	px_insn(&h, RTIT_IC_INDIRECT_JMP, 0x1100, 2, 0x1200, true);	/* overflows */
	px_insn(&h, RTIT_IC_INDIRECT_JMP, 0x1200, 2, 0x3000, true);	/* leaves: lost */
	h.cycles += 100;
	px_op(&h, 0x3000, 2);
	/* Resolves with PacketEn=0: OVF with its CYC (D24), no FUP; the
	 * return into the range sends MODE.Exec, TIP.PGE (33.3.8; 33.4.2.8:
	 * "any TIP.PGE scenario, such that any of the mode bits tracked may
	 * have changed since the last MODE.Exec", which packets lost in an
	 * overflow may have: D25). */
	px_insn(&h, RTIT_IC_INDIRECT_JMP, 0x3002, 2, 0x1300, true);
	cr_assert_eq(rtit_pt_model_finish(&h.m), 0);
	/* The CYC(1) of the lost TIP went in before it (cycle 3); the OVF's
	 * CYC counts from there to cycle 105: 102 = 37 06. */
	px_expect(&h, 0, ENABLE_1000, 0x0b, 0x2d, 0x00, 0x11, 0x0b, 0x37, 0x06, PT_OVF,
		  0x0b, PT_MODE64, 0x71, 0x00, 0x13, 0, 0, 0, 0);
}

Test(buffer, psb_every_psbfreq_bytes)
{
	size_t psb_at = 0;
	start(PT_CTL_ON, 0);	/* PSBFreq 0: 2 KiB */
	for (unsigned i = 0; h.n < 2048 + 100; i++)
		px_insn(&h, RTIT_IC_INDIRECT_JMP, i & 1 ? 0x1200 : 0x1100, 2, i & 1 ? 0x1100 : 0x1200, true);
	cr_expect_eq(h.m.stats.psbs, 2);
	/* The second PSB+ follows the record that crossed 2048 bytes since
	 * the first PSB's first byte (D20): PSB, CBR, PIP, MODE.Exec,
	 * FUP(next IP), PSBEND. */
	for (size_t i = 16; i + 16 <= h.n; i++)
		if (h.out[i] == 0x02 && h.out[i + 1] == 0x82 && h.out[i + 2] == 0x02) {
			psb_at = i;
			break;
		}
	cr_assert_geq(psb_at, 2048);
	cr_expect_leq(psb_at, 2048 + 3);
	const uint8_t want[] = { PT_PSB, PT_CBR(16), PIP0, PT_MODE64, 0x3d };
	cr_expect_arr_eq(h.out + psb_at, want, sizeof(want));	/* FUP: 001b */
	cr_expect_eq(h.out[psb_at + sizeof(want) + 2], 0x02);	/* PSBEND */
	cr_expect_eq(h.out[psb_at + sizeof(want) + 3], 0x23);
}

Test(buffer, psb_resets_ret_compression)
{
	start(PT_CTL_ON | (0ull << RTIT_PT_CTL_PSB_FREQ_SHIFT), 0);
	px_insn(&h, RTIT_IC_DIRECT_CALL, 0x1002, 5, 0x1100, true);
	for (unsigned i = 0; h.n < 2100; i++)
		px_insn(&h, RTIT_IC_INDIRECT_JMP, i & 1 ? 0x1200 : 0x1100, 2, i & 1 ? 0x1100 : 0x1200, true);
	size_t n = h.n;
	px_insn(&h, RTIT_IC_RET, 0x1100, 1, 0x1007, true);
	/* The CALL came before the PSB: not compressed (33.4.2.2). */
	px_expect(&h, n, 0x2d, 0x07, 0x10);
}

Test(buffer, disable_during_overflow)
{
	start(PT_CTL_ON, 40);
	px_insn(&h, RTIT_IC_INDIRECT_JMP, 0x1002, 2, 0x1100, true);
	px_insn(&h, RTIT_IC_INDIRECT_JMP, 0x1100, 2, 0x1200, true);
	px_insn(&h, RTIT_IC_INDIRECT_JMP, 0x1200, 2, 0x1300, true);	/* overflows */
	cr_assert_eq(px_wrmsr(&h, 0x1300, RTIT_PT_MSR_CTL, PT_CTL_ON & ~RTIT_PT_CTL_TRACE_EN), 0);
	cr_assert_eq(rtit_pt_model_finish(&h.m), 0);
	/* Flush; the overflow resolves at the WRMSR with PacketEn=1: OVF and
	 * its FUP with the WRMSR's IP (33.3.8), uncompressed (IPBytes 011b,
	 * D25); then Table 33-56 case 3: FUP(CLIP) (IPBytes 001b against
	 * it), TIP.PGD() (D61). */
	px_expect(&h, 0, ENABLE_1000, 0x2d, 0x00, 0x11, 0x2d, 0x00, 0x12,
		  PT_OVF, 0x7d, 0x00, 0x13, 0x00, 0x00, 0x00, 0x00,
		  0x3d, 0x00, 0x13, 0x01);
}

Test(buffer, mtc_per_edge)
{
	start(PT_CTL_ON | RTIT_PT_CTL_MTC_EN, 0);
	size_t n = h.n;
	h.tsc += 2;	/* three ART edges in one step (MTCFreq 0) */
	px_op(&h, 0x1002, 2);
	px_expect(&h, n, 0x59, 0x02, 0x59, 0x03, 0x59, 0x04);
	n = h.n;
	h.tsc += 1000;	/* more than 256: only the last */
	px_op(&h, 0x1004, 2);
	px_expect(&h, n, 0x59, (uint8_t)(4 + 1001));
}
