/*
 * test_rtit_table19.c - RTIT Table 19 (4.3.1, "Packet Generation under
 * Different Enable Conditions"), row by row, on hand-written records.
 *
 * Setup for every row: RANGE0 = [0x100, 0x200) is the filter region
 * (RTIT_LIP0 = 0x100, RTIT_LIP2 = 0x200, Filter_Event_ID = 000b,
 * TraceStop_Event_ID = 110b "always off", 3.3.5), OS and User traced.
 * Addresses stay below 0x10000, so every IP packet is 3 bytes with Zext=1,
 * CNT=00 (Table 18 row 3): FUP.PGE 84, FUP.PGD 8C, TIP B4, FUP.FAR BC
 * followed by LIP[7:0], LIP[15:8].  A TNT is 0000001b, 000001bb, ...
 * (4.2.2).  The expected bytes are worked out by hand from the table.
 */
#include "rtit_harness.h"

#define CTL_ON (RTIT_R_CTL_TRACE_EN | RTIT_R_CTL_TRACE_ACTIVE | RTIT_R_CTL_OS | RTIT_R_CTL_USER)
#define EVENTS_R0 (RTIT_R_EVID_RANGE0 | (RTIT_R_EVID_ALWAYS_OFF << RTIT_R_EVENTS_STOP_SHIFT))

static struct hx h;

/* Enables tracing; FilterEn starts as @inside (RTIT_STATUS is writable,
 * 3.3.3, D71).  The first instruction, at @ip, is where the PSB (and FUP.PGE
 * when inside) land; returns the byte count after them. */
static size_t start(uint64_t ctl, bool inside, uint64_t ip)
{
	hx_init(&h);
	hx_start(&h);
	hx_msr(&h, RTIT_R_MSR_LIP0, 0x100);
	hx_msr(&h, RTIT_R_MSR_LIP2, 0x200);
	hx_msr(&h, RTIT_R_MSR_EVENTS, EVENTS_R0);
	hx_msr(&h, RTIT_R_MSR_STATUS, inside ? RTIT_R_STATUS_FILTER_EN : 0);
	hx_msr(&h, RTIT_R_MSR_CTL, ctl);
	hx_op(&h, ip, 2);
	return h.n;
}

Test(table19, enable_sends_psb_then_fup_pge)
{
	/* 3.3.2: TriggerEn 0->1 sends a PSB; PacketEn 0->1 a FUP.PGE with
	 * the NLIP of the enabling write (D69: PSB first). */
	start(CTL_ON, true, 0x140);
	hx_expect(&h, 0, PSB_BYTES, 0x84, 0x40, 0x01);
}

Test(table19, rows_1_2_normal_op_no_change)
{
	size_t n = start(CTL_ON, true, 0x140);
	hx_op(&h, 0x142, 3);			/* row 1: yes/yes */
	hx_expect(&h, n);
	n = start(CTL_ON, false, 0x300);
	hx_op(&h, 0x302, 3);			/* row 2: no/no */
	hx_expect(&h, n);
}

Test(table19, row_3_normal_op_leaves)
{
	size_t n = start(CTL_ON, true, 0x140);
	hx_op(&h, 0x1fe, 2);			/* NLIP 0x200 = limit */
	hx_expect(&h, n, 0x8c, 0x00, 0x02);
}

Test(table19, row_4_normal_op_leaves_with_tnt)
{
	size_t n = start(CTL_ON, true, 0x140);
	hx_insn(&h, RTIT_IC_COND, 0x150, 2, 0x1fe, true);	/* T */
	hx_op(&h, 0x1fe, 2);
	hx_expect(&h, n, 0x03, 0x8c, 0x00, 0x02);
}

Test(table19, row_5_normal_op_enters)
{
	size_t n = start(CTL_ON, false, 0x300);
	hx_op(&h, 0xfe, 2);			/* NLIP 0x100 = base */
	hx_expect(&h, n, 0x84, 0x00, 0x01);
}

Test(table19, rows_6_7_direct_jump_no_change)
{
	size_t n = start(CTL_ON, true, 0x140);
	hx_insn(&h, RTIT_IC_DIRECT_JMP, 0x150, 2, 0x180, true);	/* row 6 */
	hx_insn(&h, RTIT_IC_DIRECT_CALL, 0x180, 5, 0x1a0, true);
	hx_expect(&h, n);
	n = start(CTL_ON, false, 0x300);
	hx_insn(&h, RTIT_IC_DIRECT_JMP, 0x302, 2, 0x380, true);	/* row 7 */
	hx_expect(&h, n);
}

Test(table19, row_8_direct_jump_leaves)
{
	/* FUP.PGD with the jump's sequential NLIP (Table 1, D68). */
	size_t n = start(CTL_ON, true, 0x140);
	hx_insn(&h, RTIT_IC_DIRECT_JMP, 0x150, 2, 0x300, true);
	hx_expect(&h, n, 0x8c, 0x52, 0x01);
}

Test(table19, row_9_direct_jump_leaves_with_tnt)
{
	size_t n = start(CTL_ON, true, 0x140);
	hx_insn(&h, RTIT_IC_COND, 0x142, 2, 0x150, false);	/* N */
	hx_insn(&h, RTIT_IC_COND, 0x144, 2, 0x150, true);	/* T */
	hx_insn(&h, RTIT_IC_DIRECT_JMP, 0x150, 2, 0x300, true);
	hx_expect(&h, n, 0x05, 0x8c, 0x52, 0x01);
}

Test(table19, row_10_direct_jump_enters)
{
	size_t n = start(CTL_ON, false, 0x300);
	hx_insn(&h, RTIT_IC_DIRECT_JMP, 0x302, 2, 0x120, true);
	hx_expect(&h, n, 0x84, 0x20, 0x01);
}

Test(table19, rows_11_12_conditional_not_filling)
{
	/* Row 11: taken, like a direct jump (enters: FUP.PGE with BLIP).
	 * Row 12: not taken, like a non-jump (enters: FUP.PGE with NLIP).
	 * Neither adds a bit: PacketEn was 0 at the start (4.3.2). */
	size_t n = start(CTL_ON, false, 0x300);
	hx_insn(&h, RTIT_IC_COND, 0x302, 2, 0x120, true);
	hx_expect(&h, n, 0x84, 0x20, 0x01);
	n = start(CTL_ON, false, 0x300);
	hx_insn(&h, RTIT_IC_COND, 0xfe, 2, 0x400, false);
	hx_expect(&h, n, 0x84, 0x00, 0x01);
	/* Inside, a taken and a not-taken bit stay buffered: no packet. */
	n = start(CTL_ON, true, 0x140);
	hx_insn(&h, RTIT_IC_COND, 0x150, 2, 0x160, true);
	hx_insn(&h, RTIT_IC_COND, 0x160, 2, 0x170, false);
	hx_expect(&h, n);
}

Test(table19, rows_13_17_sixth_branch_full_tnt)
{
	size_t n = start(CTL_ON, true, 0x140);
	for (int i = 0; i < 5; i++)
		hx_insn(&h, RTIT_IC_COND, 0x150, 2, 0x150, true);
	hx_insn(&h, RTIT_IC_COND, 0x150, 2, 0x150, true);	/* row 13 */
	hx_expect(&h, n, 0x7f);
	n = h.n;
	for (int i = 0; i < 5; i++)
		hx_insn(&h, RTIT_IC_COND, 0x150, 2, 0x150, i & 1);
	hx_insn(&h, RTIT_IC_COND, 0x150, 2, 0x150, false);	/* row 17 */
	hx_expect(&h, n, 0x54);		/* 1, then N T N T N N oldest first */
}

Test(table19, row_15_sixth_taken_leaves)
{
	/* TNT including the jump's own bit, then FUP.PGD with NLIP. */
	size_t n = start(CTL_ON, true, 0x140);
	for (int i = 0; i < 5; i++)
		hx_insn(&h, RTIT_IC_COND, 0x150, 2, 0x150, false);
	hx_insn(&h, RTIT_IC_COND, 0x150, 2, 0x300, true);
	hx_expect(&h, n, 0x41, 0x8c, 0x52, 0x01);
}

Test(table19, row_19_sixth_not_taken_leaves)
{
	size_t n = start(CTL_ON, true, 0x140);
	for (int i = 0; i < 5; i++)
		hx_insn(&h, RTIT_IC_COND, 0x1f0, 2, 0x1f0, true);
	hx_insn(&h, RTIT_IC_COND, 0x1fe, 2, 0x100, false);	/* NLIP = limit */
	hx_expect(&h, n, 0x7e, 0x8c, 0x00, 0x02);
}

Test(table19, rows_21_22_near_indirect)
{
	size_t n = start(CTL_ON, true, 0x140);
	hx_insn(&h, RTIT_IC_INDIRECT_JMP, 0x150, 2, 0x180, true);	/* row 21 */
	hx_expect(&h, n, 0xb4, 0x80, 0x01);
	n = h.n;
	hx_insn(&h, RTIT_IC_COND, 0x180, 2, 0x190, true);
	hx_insn(&h, RTIT_IC_RET, 0x190, 1, 0x1a0, true);		/* row 22 */
	hx_expect(&h, n, 0x03, 0xb4, 0xa0, 0x01);
}

Test(table19, row_23_near_indirect_outside)
{
	size_t n = start(CTL_ON, false, 0x300);
	hx_insn(&h, RTIT_IC_INDIRECT_CALL, 0x302, 2, 0x380, true);
	hx_expect(&h, n);
}

Test(table19, rows_24_25_near_indirect_leaves)
{
	/* TIP with BLIP, then FUP.PGD with NLIP (the reversed order). */
	size_t n = start(CTL_ON, true, 0x140);
	hx_insn(&h, RTIT_IC_INDIRECT_JMP, 0x150, 2, 0x300, true);
	hx_expect(&h, n, 0xb4, 0x00, 0x03, 0x8c, 0x52, 0x01);
	n = start(CTL_ON, true, 0x140);
	hx_insn(&h, RTIT_IC_COND, 0x142, 2, 0x150, false);
	hx_insn(&h, RTIT_IC_INDIRECT_CALL, 0x150, 3, 0x300, true);
	hx_expect(&h, n, 0x02, 0xb4, 0x00, 0x03, 0x8c, 0x53, 0x01);
}

Test(table19, row_26_near_indirect_enters)
{
	size_t n = start(CTL_ON, false, 0x300);
	hx_insn(&h, RTIT_IC_RET, 0x302, 1, 0x120, true);
	hx_expect(&h, n, 0x84, 0x20, 0x01);
}

Test(table19, rows_27_28_far_transfer)
{
	size_t n = start(CTL_ON, true, 0x140);
	hx_insn(&h, RTIT_IC_FAR_JMP, 0x150, 5, 0x180, true);		/* row 27 */
	hx_expect(&h, n, 0xbc, 0x55, 0x01, 0xb4, 0x80, 0x01);
	n = h.n;
	hx_insn(&h, RTIT_IC_COND, 0x180, 2, 0x190, true);
	hx_insn(&h, RTIT_IC_INT, 0x190, 2, 0x1c0, true);		/* row 28 */
	hx_expect(&h, n, 0x03, 0xbc, 0x92, 0x01, 0xb4, 0xc0, 0x01);
}

Test(table19, row_29_far_transfer_outside)
{
	size_t n = start(CTL_ON, false, 0x300);
	hx_insn(&h, RTIT_IC_FAR_CALL, 0x302, 7, 0x380, true);
	hx_expect(&h, n);
}

Test(table19, rows_30_31_far_transfer_leaves_filter)
{
	/* ContextEn stays 1: FUP.PGD replaces FUP.FAR, then the TIP. */
	size_t n = start(CTL_ON, true, 0x140);
	hx_insn(&h, RTIT_IC_FAR_JMP, 0x150, 5, 0x380, true);
	hx_expect(&h, n, 0x8c, 0x55, 0x01, 0xb4, 0x80, 0x03);
	n = start(CTL_ON, true, 0x140);
	hx_insn(&h, RTIT_IC_COND, 0x142, 2, 0x150, true);
	hx_insn(&h, RTIT_IC_FAR_JMP, 0x150, 5, 0x380, true);
	hx_expect(&h, n, 0x03, 0x8c, 0x55, 0x01, 0xb4, 0x80, 0x03);
}

Test(table19, rows_32_33_far_transfer_clears_context)
{
	/* User only; SYSCALL from CPL 3 to CPL 0: FUP.PGD, no TIP. */
	uint64_t ctl = CTL_ON & ~RTIT_R_CTL_OS;
	hx_init(&h);
	size_t n;
	h.cpl = 3;
	hx_start(&h);
	hx_msr(&h, RTIT_R_MSR_EVENTS, RTIT_R_EVID_ALWAYS_ON | (RTIT_R_EVID_ALWAYS_OFF << RTIT_R_EVENTS_STOP_SHIFT));
	hx_msr(&h, RTIT_R_MSR_STATUS, RTIT_R_STATUS_FILTER_EN);
	hx_msr(&h, RTIT_R_MSR_CTL, ctl);
	hx_op(&h, 0x400, 2);
	n = h.n;
	hx_insn(&h, RTIT_IC_COND, 0x402, 2, 0x410, true);
	h.cpl = 0;
	hx_insn(&h, RTIT_IC_SYSCALL, 0x410, 2, 0x800, true);		/* row 33 */
	hx_expect(&h, n, 0x03, 0x8c, 0x12, 0x04);
	/* Row 34: back to CPL 3 (SYSRET): FUP.PGE with BLIP only. */
	n = h.n;
	hx_op(&h, 0x800, 3);
	h.cpl = 3;
	hx_insn(&h, RTIT_IC_SYSRET, 0x803, 3, 0x412, true);
	hx_expect(&h, n, 0x84, 0x12, 0x04);
}

Test(table19, row_35_far_transfer_enters_filter)
{
	size_t n = start(CTL_ON, false, 0x300);
	hx_insn(&h, RTIT_IC_IRET, 0x302, 2, 0x120, true);
	hx_expect(&h, n, 0x84, 0x20, 0x01);
}

Test(table19, rows_36_37_38_smi_rsm)
{
	/* SMI: FUP.PGD with the IP saved into SMRAM, no TIP (rows 36/37);
	 * RSM: FUP.PGE with the resumed IP (row 38). */
	size_t n = start(CTL_ON, true, 0x140);
	hx_insn(&h, RTIT_IC_COND, 0x142, 2, 0x150, true);
	hx_event(&h, RTIT_EV_SMI, 0x150, 0x8000, 0);
	hx_expect(&h, n, 0x03, 0x8c, 0x50, 0x01);
	n = h.n;
	hx_event(&h, RTIT_EV_RSM, 0x150, 0x150, 0);
	hx_expect(&h, n, 0x84, 0x50, 0x01);
	/* Row 36 through a VM exit and entry. */
	n = h.n;
	hx_event(&h, RTIT_EV_VMEXIT, 0x150, 0x9000, 0);
	hx_event(&h, RTIT_EV_VMENTRY, 0x150, 0x160, 0);
	hx_expect(&h, n, 0x8c, 0x50, 0x01, 0x84, 0x60, 0x01);
}

Test(table19, rows_39_40_mov_cr3)
{
	/* PIP (CR3[39:0], PG=1: C3), then STS when STS_on_CR3 and STS_En
	 * (4.2.10); a TNT first when bits are buffered. */
	size_t n = start(CTL_ON, true, 0x140);
	h.cr3 = 0x12345000;
	hx_insn(&h, RTIT_IC_MOV_CR3, 0x150, 3, 0, false);			/* row 39 */
	hx_expect(&h, n, 0xc3, 0x00, 0x50, 0x34, 0x12, 0x00);
	n = h.n;
	hx_insn(&h, RTIT_IC_COND, 0x153, 2, 0x160, false);
	h.cr3 = 0xabc000;
	hx_insn(&h, RTIT_IC_MOV_CR3, 0x160, 3, 0, false);			/* row 40 */
	hx_expect(&h, n, 0x02, 0xc3, 0x00, 0xc0, 0xab, 0x00, 0x00);
	/* With STS_on_CR3 and STS_En: the STS follows the PIP. */
	n = start(CTL_ON | RTIT_R_CTL_STS_ON_CR3 | RTIT_R_CTL_STS_EN, true, 0x140);
	h.cr3 = 0x1000;
	hx_insn(&h, RTIT_IC_MOV_CR3, 0x150, 3, 0, false);
	/* STS: ratios 16/16 (ACBR[5:2]=4 -> D4, byte 1 = 00 010000), TSC. */
	hx_expect(&h, n, 0xc3, 0x00, 0x10, 0x00, 0x00, 0x00,
		  0xd4, 0x10, 0x02, 0, 0, 0, 0);	/* TSC = 2: one per record */
}

Test(table19, rows_41_42_43_44_mov_cr3_filter)
{
	/* Row 41: outside the filter, ContextEn=1: PIP only. */
	size_t n = start(CTL_ON, false, 0x300);
	h.cr3 = 0x2000;
	hx_insn(&h, RTIT_IC_MOV_CR3, 0x302, 3, 0, false);
	hx_expect(&h, n, 0xc3, 0x00, 0x20, 0x00, 0x00, 0x00);
	/* Row 42: walking in at its NLIP: PIP, FUP.PGE with NLIP. */
	n = h.n;
	hx_insn(&h, RTIT_IC_MOV_CR3, 0xfd, 3, 0, false);
	hx_expect(&h, n, 0xc3, 0x00, 0x20, 0x00, 0x00, 0x00, 0x84, 0x00, 0x01);
	/* Row 44 (and 43): TNT, PIP, FUP.PGD with NLIP. */
	n = h.n;
	hx_insn(&h, RTIT_IC_COND, 0x100, 2, 0x1fd, true);
	hx_insn(&h, RTIT_IC_MOV_CR3, 0x1fd, 3, 0, false);
	hx_expect(&h, n, 0x03, 0xc3, 0x00, 0x20, 0x00, 0x00, 0x00, 0x8c, 0x00, 0x02);
}

Test(table19, mov_cr3_with_cr3en_sends_no_pip)
{
	/* 4.2.10: no PIP when CR3En=1 (CR3 filtering, Table 10). */
	hx_init(&h);
	h.cr3 = 0x5000;
	hx_start(&h);
	hx_msr(&h, RTIT_R_MSR_EVENTS, RTIT_R_EVID_ALWAYS_ON | (RTIT_R_EVID_ALWAYS_OFF << RTIT_R_EVENTS_STOP_SHIFT));
	hx_msr(&h, RTIT_R_MSR_CR3_MATCH, 0x5000);
	hx_msr(&h, RTIT_R_MSR_CTL, CTL_ON | RTIT_R_CTL_CR3EN);
	hx_op(&h, 0x400, 2);
	hx_expect(&h, 0, PSB_BYTES, 0x84, 0x00, 0x04);
	size_t n = h.n;
	h.cr3 = 0x6000;		/* ContextEn 1 -> 0: FUP.PGD (row 43 without PIP) */
	hx_insn(&h, RTIT_IC_MOV_CR3, 0x402, 3, 0, false);
	hx_expect(&h, n, 0x8c, 0x05, 0x04);
	n = h.n;
	h.cr3 = 0x5000;		/* back: FUP.PGE with NLIP (row 42) */
	hx_insn(&h, RTIT_IC_MOV_CR3, 0x500, 3, 0, false);
	hx_expect(&h, n, 0x84, 0x03, 0x05);
}
