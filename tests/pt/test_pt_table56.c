/*
 * test_pt_table56.c - SDM Table 33-56 ("operations that alter PacketEn",
 * 33.7) row by row, the IP-filtering example of Table 33-2 (33.2.5.3), TraceStop, CR3 and CPL filtering, and SMM.
 *
 * PIP(CR3=0) in PSB+ is 02 43 00 00 00 00 00 00.
 */
#include "pt_harness.h"

#define PIP0 0x02, 0x43, 0, 0, 0, 0, 0, 0

static struct px h;

/* Enables with @ctl (plus whatever ADDRn were set by @setup) and runs one
 * instruction at @ip; returns the byte count. */
static size_t start(uint64_t ctl, uint64_t ip, void (*setup)(void))
{
	px_init(&h);
	px_start(&h);
	px_single_range(&h);
	if (setup)
		setup();
	px_msr(&h, RTIT_PT_MSR_CTL, ctl);
	px_op(&h, ip, 2);
	return h.n;
}

/* RangeBase 0x1000, RangeLimit 0x1fff (Table 33-2). */
static void filter_range(void)
{
	px_msr(&h, RTIT_PT_MSR_ADDR0_A, 0x1000);
	px_msr(&h, RTIT_PT_MSR_ADDR0_B, 0x1fff);
}

#define CFG(n, v) ((uint64_t)(v) << RTIT_PT_CTL_ADDR_CFG_SHIFT(n))

Test(table56, table_33_2_ip_filtering_example)
{
	start(PT_CTL_ON | CFG(0, RTIT_PT_ADDR_FILTER), 0x3000, filter_range);
	/* Enabled outside the range: PSB+, MODE.Exec, no TIP.PGE. */
	px_expect(&h, 0, PT_PSB, PT_CBR(16), PIP0, PT_PSBEND, PT_MODE64);
	size_t n = h.n;
	px_insn(&h, RTIT_IC_DIRECT_JMP, 0x3002, 2, 0x1000, true);	/* Bar: jmp RangeBase */
	px_insn(&h, RTIT_IC_COND, 0x1000, 2, 0x1010, false);		/* jcc Foo, not taken */
	px_op(&h, 0x1002, 3);						/* add eax, 1 */
	px_insn(&h, RTIT_IC_DIRECT_JMP, 0x1005, 2, 0x2000, true);	/* jmp RangeLimit+1 */
	px_insn(&h, RTIT_IC_COND, 0x2000, 2, 0x3002, true);		/* jcc Bar: outside */
	/* Table 33-2 worked out by hand: 31 00 10 | 04 | 21 00 20. */
	px_expect(&h, n, 0x31, 0x00, 0x10, 0x04, 0x21, 0x00, 0x20);
}

Test(table56, case1_enable_without_context)
{
	px_init(&h);
	h.cpl = 3;
	px_start(&h);
	px_single_range(&h);
	px_msr(&h, RTIT_PT_MSR_CTL, RTIT_PT_CTL_TRACE_EN | RTIT_PT_CTL_OS | RTIT_PT_CTL_BRANCH_EN);
	px_op(&h, 0x1000, 2);
	/* ContextEn=0: no PIP in PSB+, MODE.Exec, no TIP.PGE (Table 33-56 case 1, D19). */
	px_expect(&h, 0, PT_PSB, PT_CBR(16), PT_PSBEND, PT_MODE64);
}

Test(table56, case2_reenable_sends_timing_not_psb)
{
	size_t n = start(PT_CTL_ON | RTIT_PT_CTL_TSC_EN, 0x1000, NULL);
	cr_assert_eq(px_wrmsr(&h, 0x1002, RTIT_PT_MSR_CTL, PT_CTL_ON & ~RTIT_PT_CTL_TRACE_EN), 0);
	n = h.n;
	h.tsc = 0x100;
	/* PacketByteCnt != 0: TSC, CBR, MODE.Exec, TIP.PGE(NLIP) (33.2.8.3). */
	cr_assert_eq(px_wrmsr(&h, 0x1004, RTIT_PT_MSR_CTL, PT_CTL_ON | RTIT_PT_CTL_TSC_EN), 0);
	px_expect(&h, n, 0x19, 0x01, 0x01, 0, 0, 0, 0, 0, PT_CBR(16), PT_MODE64, 0x31, 0x06, 0x10);
}

Test(table56, case3_wrmsr_clears_traceen)
{
	size_t n = start(PT_CTL_ON, 0x1000, NULL);
	px_insn(&h, RTIT_IC_DIRECT_JMP, 0x1002, 2, 0x401000, true);
	cr_assert_eq(px_wrmsr(&h, 0x401000, RTIT_PT_MSR_CTL, PT_CTL_ON & ~RTIT_PT_CTL_TRACE_EN), 0);
	/* Table 33-56 case 3: FUP(0x401000) with IPBytes 010b, TIP.PGD(). */
	px_expect(&h, n, 0x5d, 0x00, 0x10, 0x40, 0x00, 0x01);
	n = h.n;
	px_insn(&h, RTIT_IC_INDIRECT_JMP, 0x401002, 2, 0x1000, true);
	px_expect(&h, n);
}

Test(table56, case4_5_filter_leave_enter)
{
	size_t n = start(PT_CTL_ON | CFG(0, RTIT_PT_ADDR_FILTER), 0x1000, filter_range);
	px_insn(&h, RTIT_IC_INDIRECT_CALL, 0x1002, 2, 0x4000, true);	/* case 4 */
	px_insn(&h, RTIT_IC_RET, 0x4000, 1, 0x1004, true);		/* case 5 */
	px_expect(&h, n, 0x21, 0x00, 0x40, 0x31, 0x04, 0x10);
}

Test(table56, conditional_branch_leaving_is_suppressed)
{
	size_t n = start(PT_CTL_ON | CFG(0, RTIT_PT_ADDR_FILTER), 0x1000, filter_range);
	px_insn(&h, RTIT_IC_COND, 0x1002, 2, 0x1010, true);
	px_insn(&h, RTIT_IC_COND, 0x1010, 2, 0x4000, true);	/* leaves */
	/* 33.4.2.5, D21: TNT(T) for the first, TIP.PGD() and no bit for the second. */
	px_expect(&h, n, 0x06, 0x01);
}

Test(table56, sequential_exit_does_not_toggle)
{
	size_t n = start(PT_CTL_ON | CFG(0, RTIT_PT_ADDR_FILTER), 0x1ffc, filter_range);
	px_op(&h, 0x1ffe, 2);		/* steps to 0x2000 */
	px_insn(&h, RTIT_IC_INDIRECT_JMP, 0x2000, 2, 0x2100, true);
	/* D21: FilterEn changes at the taken JMP, which leaves: PGD(BLIP). */
	px_expect(&h, n, 0x21, 0x00, 0x21);
}

Test(table56, filter_sequential_switch)
{
	px_init(&h);
	h.p.filter_sequential = true;
	px_start(&h);
	px_single_range(&h);
	filter_range();
	px_msr(&h, RTIT_PT_MSR_CTL, PT_CTL_ON | CFG(0, RTIT_PT_ADDR_FILTER));
	px_op(&h, 0x1ffc, 2);
	size_t n = h.n;
	px_op(&h, 0x1ffe, 2);
	px_expect(&h, n, 0x21, 0x00, 0x20);
}

Test(table56, case6_far_branch_clears_context)
{
	size_t n;
	px_init(&h);
	h.cpl = 3;
	px_start(&h);
	px_single_range(&h);
	px_msr(&h, RTIT_PT_MSR_CTL, RTIT_PT_CTL_TRACE_EN | RTIT_PT_CTL_USER | RTIT_PT_CTL_BRANCH_EN);
	px_op(&h, 0x1000, 2);
	n = h.n;
	h.cpl = 0;
	px_insn(&h, RTIT_IC_SYSCALL, 0x1002, 2, 0x8000, true);
	px_insn(&h, RTIT_IC_INDIRECT_JMP, 0x8000, 2, 0x8100, true);
	/* Case 6: TIP.PGD(); nothing while CPL=0. */
	px_expect(&h, n, 0x01);
	n = h.n;
	h.cpl = 3;
	px_insn(&h, RTIT_IC_SYSRET, 0x8100, 3, 0x1004, true);
	/* ContextEn set by a far branch: TIP.PGE(target) (case 5). */
	px_expect(&h, n, 0x31, 0x04, 0x10);
}

Test(table56, case7_8_events_clear_context)
{
	size_t n;
	px_init(&h);
	h.cpl = 3;
	px_start(&h);
	px_single_range(&h);
	px_msr(&h, RTIT_PT_MSR_CTL, RTIT_PT_CTL_TRACE_EN | RTIT_PT_CTL_USER | RTIT_PT_CTL_BRANCH_EN);
	px_op(&h, 0x1000, 2);
	n = h.n;
	h.cpl = 0;
	px_event(&h, RTIT_EV_EXT_INTERRUPT, 0x1002, 0x8000, 0x20);	/* case 7 */
	px_expect(&h, n, 0x3d, 0x02, 0x10, 0x01);
	h.cpl = 3;
	px_insn(&h, RTIT_IC_IRET, 0x8000, 2, 0x1002, true);
	n = h.n;
	h.cpl = 0;
	px_insn(&h, RTIT_IC_INT, 0x1002, 2, 0x8000, true);		/* case 8 */
	px_expect(&h, n, 0x3d, 0x02, 0x10, 0x01);
}

Test(table56, cr3_filter)
{
	size_t n;
	px_init(&h);
	h.cr3 = 0x5000;
	px_start(&h);
	px_single_range(&h);
	px_msr(&h, RTIT_PT_MSR_CR3_MATCH, 0x5000);
	px_msr(&h, RTIT_PT_MSR_CTL, PT_CTL_ON | RTIT_PT_CTL_CR3_FILTER);
	px_op(&h, 0x1000, 2);
	n = h.n;
	h.cr3 = 0x6000;
	px_insn(&h, RTIT_IC_MOV_CR3, 0x1002, 3, 0x1005, false);
	/* ContextEn cleared by MOV CR3: TIP.PGD(), no PIP. */
	px_expect(&h, n, 0x01);
	n = h.n;
	px_insn(&h, RTIT_IC_INDIRECT_JMP, 0x1005, 2, 0x1100, true);
	h.cr3 = 0x5000;
	px_insn(&h, RTIT_IC_MOV_CR3, 0x1100, 3, 0x1103, false);
	/* Set again: PIP, TIP.PGE(NLIP) (33.4.2.4 "ContextEn set"). */
	px_expect(&h, n, 0x02, 0x43, 0x00, 0x05, 0, 0, 0, 0, 0x31, 0x03, 0x11);
}

/* ADDR1 = [0x5000, 0x5fff] as a TraceStop range. */
static void stop_range(void)
{
	px_msr(&h, RTIT_PT_MSR_ADDR0_A + 2, 0x5000);
	px_msr(&h, RTIT_PT_MSR_ADDR0_B + 2, 0x5fff);
}

Test(table56, tracestop_pgd_target_then_stop)
{
	size_t n = start(PT_CTL_ON | CFG(1, RTIT_PT_ADDR_STOP), 0x1000, stop_range);
	uint64_t st;
	px_insn(&h, RTIT_IC_COND, 0x1002, 2, 0x1010, true);
	px_insn(&h, RTIT_IC_INDIRECT_JMP, 0x1010, 2, 0x5000, true);
	px_insn(&h, RTIT_IC_INDIRECT_JMP, 0x5000, 2, 0x1000, true);
	/* 33.2.5.3, D21: TNT, TIP.PGD(target), TraceStop; then nothing. */
	px_expect(&h, n, 0x06, 0x21, 0x00, 0x50, PT_STOP);
	cr_assert_eq(rtit_pt_model_msr_read(&h.m, RTIT_PT_MSR_STATUS, &st, NULL), 0);
	cr_assert(st & RTIT_PT_STATUS_STOPPED);
	cr_assert(!(st & RTIT_PT_STATUS_TRIGGER_EN));
	/* To resume: clear TraceEn, then Stopped (33.2.5.3). */
	cr_assert_eq(px_wr(&h, RTIT_PT_MSR_STATUS, 0), -1);	/* TraceEn=1: #GP */
	px_msr(&h, RTIT_PT_MSR_CTL, PT_CTL_ON & ~RTIT_PT_CTL_TRACE_EN);
	px_msr(&h, RTIT_PT_MSR_STATUS, 0);
}

Test(table56, tracestop_suppressed_switch_and_filter_off)
{
	px_init(&h);
	h.p.pgd_stop_suppressed = true;
	px_start(&h);
	px_single_range(&h);
	stop_range();
	px_msr(&h, RTIT_PT_MSR_CTL, PT_CTL_ON | CFG(1, RTIT_PT_ADDR_STOP));
	px_op(&h, 0x1000, 2);
	size_t n = h.n;
	px_insn(&h, RTIT_IC_DIRECT_JMP, 0x1002, 2, 0x5800, true);
	px_expect(&h, n, 0x01, PT_STOP);
}

Test(table56, tracestop_with_packeten_off)
{
	/* PacketEn=0 (outside the filter range): only the TraceStop
	 * (TriggerEn && ContextEn, 33.4.2.9). */
	size_t n;
	px_init(&h);
	px_start(&h);
	px_single_range(&h);
	filter_range();
	stop_range();
	px_msr(&h, RTIT_PT_MSR_CTL, PT_CTL_ON | CFG(0, RTIT_PT_ADDR_FILTER) | CFG(1, RTIT_PT_ADDR_STOP));
	px_op(&h, 0x3000, 2);
	n = h.n;
	px_insn(&h, RTIT_IC_DIRECT_JMP, 0x3002, 2, 0x5000, true);
	px_expect(&h, n, PT_STOP);
}

Test(table56, case9_10_smi_rsm)
{
	size_t n = start(PT_CTL_ON, 0x1000, NULL);
	px_event(&h, RTIT_EV_SMI, 0x1002, 0x38000, 0);
	/* Case 9: FUP(NLIP), TIP.PGD(); no PIP (33.2.9.3). */
	px_expect(&h, n, 0x3d, 0x02, 0x10, 0x01);
	n = h.n;
	px_op(&h, 0x38000, 2);
	px_expect(&h, n);
	px_event(&h, RTIT_EV_RSM, 0x38002, 0x1002, 0);
	/* Case 10: the enable packets (not the first enable: CBR), MODE.Exec,
	 * TIP.PGE(BLIP). */
	px_expect(&h, n, PT_CBR(16), PT_MODE64, 0x31, 0x02, 0x10);
}

Test(table56, os_only_user_only)
{
	size_t n;
	px_init(&h);
	px_start(&h);
	px_single_range(&h);
	px_msr(&h, RTIT_PT_MSR_CTL, RTIT_PT_CTL_TRACE_EN | RTIT_PT_CTL_OS | RTIT_PT_CTL_BRANCH_EN);
	px_op(&h, 0x8000, 2);
	n = h.n;
	h.cpl = 3;
	px_insn(&h, RTIT_IC_SYSRET, 0x8002, 3, 0x1000, true);
	px_insn(&h, RTIT_IC_INDIRECT_JMP, 0x1000, 2, 0x1100, true);
	h.cpl = 0;
	px_insn(&h, RTIT_IC_SYSCALL, 0x1100, 2, 0x8010, true);
	/* OS only: PGD() leaving CPL 0, PGE(target) back. */
	px_expect(&h, n, 0x01, 0x31, 0x10, 0x80);
}
