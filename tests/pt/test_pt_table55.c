/*
 * test_pt_table55.c - SDM Table 33-55 ("Packets for example operations
 * with PacketEn=1 before and after", 33.7) row by row, and the packets of
 * enabling, on hand-written records.
 *
 * Setup: single-range output, OS+User+BranchEn, no timing packets.  Code
 * lives in 0x1000-0x1fff, so after the PSB (LastIP = 0) every IP packet is
 * IPBytes 001b: a header and IP[15:0] (Table 33-18).  The first enable
 * sends PSB+ (PacketByteCnt = 0, 33.2.8.3: PSB, CBR, PSBEND), MODE.Exec
 * and TIP.PGE(NLIP) (Table 33-56 case 2).
 */
#include "pt_harness.h"

static struct px h;

static size_t start(uint64_t ctl, uint64_t ip)
{
	px_init(&h);
	px_start(&h);
	px_single_range(&h);
	px_msr(&h, RTIT_PT_MSR_CTL, ctl);
	px_op(&h, ip, 2);
	return h.n;
}

Test(table55, enable_psb_plus_mode_pge)
{
	start(PT_CTL_ON, 0x1000);
	/* PIP(CR3=0) in PSB+: ContextEn && OS (33.3.7). */
	px_expect(&h, 0, PT_PSB, PT_CBR(16), 0x02, 0x43, 0, 0, 0, 0, 0, 0, PT_PSBEND,
		  PT_MODE64, 0x31, 0x00, 0x10);
}

Test(table55, case1_normal_op)
{
	size_t n = start(PT_CTL_ON, 0x1000);
	px_op(&h, 0x1002, 3);
	px_insn(&h, RTIT_IC_DIRECT_JMP, 0x1005, 2, 0x1100, true);	/* case 5 */
	px_insn(&h, RTIT_IC_DIRECT_CALL, 0x1100, 5, 0x1200, true);
	px_expect(&h, n);
}

Test(table55, case2_3_tnt)
{
	size_t n = start(PT_CTL_ON, 0x1000);
	bool b[6] = { true, false, true, true, false, false };
	for (int i = 0; i < 5; i++)		/* case 3: 1st..5th: none */
		px_insn(&h, RTIT_IC_COND, 0x1010 + 2u * i, 2, 0x1100, b[i]);
	px_expect(&h, n);
	px_insn(&h, RTIT_IC_COND, 0x1020, 2, 0x1100, b[5]);	/* case 2 */
	/* ((1 << 6) | 101100b) << 1 */
	px_expect(&h, n, 0xd8);
}

Test(table55, case3_partial_tnt_flushed_by_tip)
{
	size_t n = start(PT_CTL_ON, 0x1000);
	px_insn(&h, RTIT_IC_COND, 0x1010, 2, 0x1100, false);
	px_insn(&h, RTIT_IC_COND, 0x1012, 2, 0x1100, true);
	px_insn(&h, RTIT_IC_INDIRECT_JMP, 0x1100, 2, 0x1234, true);
	/* 33.4.2.1, D21: TNT(NT,T) = 101b << 1, then TIP(0x1234). */
	px_expect(&h, n, 0x0a, 0x2d, 0x34, 0x12);
}

Test(table55, case4_indirect_jmp_call)
{
	size_t n = start(PT_CTL_ON, 0x1000);
	px_insn(&h, RTIT_IC_INDIRECT_JMP, 0x1002, 2, 0x1300, true);
	px_insn(&h, RTIT_IC_INDIRECT_CALL, 0x1300, 3, 0x1400, true);
	px_expect(&h, n, 0x2d, 0x00, 0x13, 0x2d, 0x00, 0x14);
}

Test(table55, case6_7_ret_compression)
{
	size_t n = start(PT_CTL_ON, 0x1000);
	/* CALL 0x1100 from 0x1002 (NLIP 0x1007); RET to 0x1007 compresses
	 * to a taken bit; a RET with nothing on the stack sends a TIP. */
	px_insn(&h, RTIT_IC_DIRECT_CALL, 0x1002, 5, 0x1100, true);
	px_insn(&h, RTIT_IC_RET, 0x1100, 1, 0x1007, true);
	px_insn(&h, RTIT_IC_RET, 0x1007, 1, 0x1500, true);	/* case 6 */
	px_expect(&h, n, 0x06, 0x2d, 0x00, 0x15);
	/* Case 7: six compressed RETs fill the TNT. */
	n = h.n;
	for (int i = 0; i < 6; i++) {
		px_insn(&h, RTIT_IC_DIRECT_CALL, 0x1500, 5, 0x1600, true);
		px_insn(&h, RTIT_IC_RET, 0x1600, 1, 0x1505, true);
	}
	px_expect(&h, n, 0xfe);
}

Test(table55, ret_not_compressed_when_target_differs)
{
	size_t n = start(PT_CTL_ON, 0x1000);
	px_insn(&h, RTIT_IC_DIRECT_CALL, 0x1002, 5, 0x1100, true);
	px_insn(&h, RTIT_IC_RET, 0x1100, 1, 0x1800, true);	/* PUSH+RET */
	px_expect(&h, n, 0x2d, 0x00, 0x18);
}

Test(table55, zero_length_call_not_pushed)
{
	size_t n = start(PT_CTL_ON, 0x1000);
	struct rtit_sim_rec r;
	px_insn(&h, RTIT_IC_DIRECT_CALL, 0x1002, 5, 0x1100, true);
	r = px_rec(&h, RTIT_SIM_INSN, RTIT_IC_DIRECT_CALL, 0x1100, 5, 0x1105, true);
	r.flags |= RTIT_SIM_F_ZERO_LEN_CALL;
	px_feed(&h, &r);
	/* The RET matches the first CALL: compressed (2.8). */
	px_insn(&h, RTIT_IC_RET, 0x1105, 1, 0x1007, true);
	px_insn(&h, RTIT_IC_INDIRECT_JMP, 0x1007, 2, 0x1010, true);
	px_expect(&h, n, 0x06, 0x2d, 0x10, 0x10);
}

Test(table55, disretc_sends_tip)
{
	size_t n = start(PT_CTL_ON | RTIT_PT_CTL_DIS_RETC, 0x1000);
	px_insn(&h, RTIT_IC_DIRECT_CALL, 0x1002, 5, 0x1100, true);
	px_insn(&h, RTIT_IC_RET, 0x1100, 1, 0x1007, true);
	px_expect(&h, n, 0x2d, 0x07, 0x10);
}

Test(table55, call_stack_is_64_deep)
{
	size_t n = start(PT_CTL_ON, 0x1000);
	/* 65 nested CALLs: the oldest drops off; 64 RETs compress, the 65th
	 * pops an empty stack and sends a TIP. */
	for (unsigned i = 0; i < 65; i++)
		px_insn(&h, RTIT_IC_DIRECT_CALL, 0x1000 + 8 * i, 5, 0x1000 + 8 * (i + 1), true);
	for (unsigned i = 65; i-- > 0;)
		px_insn(&h, RTIT_IC_RET, 0x1f00, 1, 0x1005 + 8 * i, true);
	/* 64 taken bits = 10 full TNTs and 4 bits; the TIP flushes 1111b. */
	px_expect(&h, n, 0xfe, 0xfe, 0xfe, 0xfe, 0xfe, 0xfe, 0xfe, 0xfe, 0xfe, 0xfe,
		  0x3e, 0x2d, 0x05, 0x10);
}

Test(table55, case8_far_branch)
{
	size_t n = start(PT_CTL_ON, 0x1000);
	px_insn(&h, RTIT_IC_FAR_JMP, 0x1002, 7, 0x1700, true);
	px_insn(&h, RTIT_IC_SYSCALL, 0x1700, 2, 0x1800, true);
	px_expect(&h, n, 0x2d, 0x00, 0x17, 0x2d, 0x00, 0x18);
}

Test(table55, case9_10_far_branch_cr3_mode)
{
	size_t n = start(PT_CTL_ON, 0x1000);
	h.cr3 = 0x5000;
	px_insn(&h, RTIT_IC_FAR_CALL, 0x1002, 7, 0x1700, true);
	/* PIP: payload48 = CR3[51:5] << 1 = 0x500 (Table 33-24). */
	px_expect(&h, n, 0x02, 0x43, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00, 0x2d, 0x00, 0x17);
	n = h.n;
	h.cr3 = 0x6000;
	h.mode = 32;
	px_insn(&h, RTIT_IC_FAR_JMP, 0x1700, 7, 0x1800, true);
	px_expect(&h, n, 0x02, 0x43, 0x00, 0x06, 0x00, 0x00, 0x00, 0x00, PT_MODE32, 0x2d, 0x00, 0x18);
}

Test(table55, case11_12_interrupt)
{
	size_t n = start(PT_CTL_ON, 0x1000);
	px_event(&h, RTIT_EV_EXT_INTERRUPT, 0x1002, 0x1900, 0x20);
	px_expect(&h, n, 0x3d, 0x02, 0x10, 0x2d, 0x00, 0x19);
	n = h.n;
	h.cr3 = 0x6000;
	h.mode = 32;
	px_event(&h, RTIT_EV_NMI, 0x1904, 0x1a00, 2);
	px_expect(&h, n, 0x3d, 0x04, 0x19, 0x02, 0x43, 0x00, 0x06, 0x00, 0x00, 0x00, 0x00,
		  PT_MODE32, 0x2d, 0x00, 0x1a);
}

Test(table55, case13_exception_and_int_n)
{
	size_t n = start(PT_CTL_ON, 0x1000);
	/* A fault: the record's ip is the CLIP (sim.h). */
	px_event(&h, RTIT_EV_EXCEPTION, 0x1002, 0x1b00, 13);
	/* INT n: FUP = CLIP of the INT (Table 33-23), not its NLIP. */
	px_insn(&h, RTIT_IC_INT, 0x1b00, 2, 0x1c00, true);
	px_expect(&h, n, 0x3d, 0x02, 0x10, 0x2d, 0x00, 0x1b, 0x3d, 0x00, 0x1b, 0x2d, 0x00, 0x1c);
}

Test(table55, case14_mov_cr3)
{
	size_t n = start(PT_CTL_ON, 0x1000);
	px_insn(&h, RTIT_IC_COND, 0x1002, 2, 0x1100, true);
	h.cr3 = 0x12345000;
	px_insn(&h, RTIT_IC_MOV_CR3, 0x1100, 3, 0x1103, false);
	/* The TNT goes first; payload48 = 0x12345000 >> 5 << 1 = 0x1234500. */
	px_expect(&h, n, 0x06, 0x02, 0x43, 0x00, 0x45, 0x23, 0x01, 0x00, 0x00);
}

Test(table55, case14_no_pip_without_os)
{
	size_t n;
	px_init(&h);
	h.cpl = 3;
	px_start(&h);
	px_single_range(&h);
	px_msr(&h, RTIT_PT_MSR_CTL, RTIT_PT_CTL_TRACE_EN | RTIT_PT_CTL_USER | RTIT_PT_CTL_BRANCH_EN);
	px_op(&h, 0x1000, 2);
	/* PSB+ without PIP (33.3.7: ContextEn && OS). */
	px_expect(&h, 0, PT_PSB, PT_CBR(16), PT_PSBEND, PT_MODE64, 0x31, 0x00, 0x10);
	n = h.n;
	h.cr3 = 0x5000;
	px_insn(&h, RTIT_IC_MOV_CR3, 0x1002, 3, 0x1005, false);
	px_expect(&h, n);
}

Test(table55, case16_vm_entry_exit)
{
	size_t n = start(PT_CTL_ON, 0x1000);
	/* Table 33-53, system-wide tracing: VM entry PIP(NR=1), TIP(guest);
	 * VM exit FUP(guest NLIP), PIP(NR=0), TIP(host). */
	h.cr3 = 0x7000;
	px_event(&h, RTIT_EV_VMENTRY, 0x1002, 0x1d00, 0);
	px_expect(&h, n, 0x02, 0x43, 0x01, 0x07, 0x00, 0x00, 0x00, 0x00, 0x2d, 0x00, 0x1d);
	n = h.n;
	h.cr3 = 0x5000;
	px_event(&h, RTIT_EV_VMEXIT, 0x1d04, 0x1e00, 0);
	px_expect(&h, n, 0x3d, 0x04, 0x1d, 0x02, 0x43, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00,
		  0x2d, 0x00, 0x1e);
}

Test(table55, case25_wake_tsc_tma_cbr)
{
	size_t n = start(PT_CTL_ON | RTIT_PT_CTL_TSC_EN | RTIT_PT_CTL_MTC_EN, 0x1000);
	h.tsc = 0x1000;
	h.cycles = 0x1000;
	px_event(&h, RTIT_EV_SLEEP, 0x1002, 0x1002, 6);
	n = h.n;
	h.tsc = 0x123456;
	px_event(&h, RTIT_EV_WAKE, 0x1002, 0x1002, 0);
	/* TSC 0x123457 (the record adds one tick); TMA CTC = ART[15:0] with
	 * ART = TSC, FastCounter 0; CBR.  No PWRX: PwrEvtEn=0. */
	px_expect(&h, n, 0x19, 0x57, 0x34, 0x12, 0, 0, 0, 0,
		  0x02, 0x73, 0x57, 0x34, 0x00, 0x00, 0x00, PT_CBR(16));
}

Test(table55, branch_en_off_no_cofi_packets)
{
	size_t n = start(RTIT_PT_CTL_TRACE_EN | RTIT_PT_CTL_OS | RTIT_PT_CTL_USER, 0x1000);
	/* BranchEn=0: PSB+ (with PIP), no MODE.Exec/TIP.PGE; no TNT/TIP;
	 * PIP continues (33.2.6.4). */
	px_expect(&h, 0, PT_PSB, PT_CBR(16), 0x02, 0x43, 0, 0, 0, 0, 0, 0, PT_PSBEND);
	px_insn(&h, RTIT_IC_COND, 0x1002, 2, 0x1100, true);
	px_insn(&h, RTIT_IC_INDIRECT_JMP, 0x1100, 2, 0x1300, true);
	h.cr3 = 0x5000;
	px_insn(&h, RTIT_IC_MOV_CR3, 0x1300, 3, 0x1303, false);
	px_expect(&h, n, 0x02, 0x43, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00);
}

Test(table55, long_tnt_option)
{
	size_t n;
	px_init(&h);
	h.p.long_tnt = true;
	px_start(&h);
	px_single_range(&h);
	px_msr(&h, RTIT_PT_MSR_CTL, PT_CTL_ON);
	px_op(&h, 0x1000, 2);
	n = h.n;
	for (int i = 0; i < 8; i++)
		px_insn(&h, RTIT_IC_COND, 0x1002, 2, 0x1002, i & 1);
	px_insn(&h, RTIT_IC_INDIRECT_JMP, 0x1002, 2, 0x1300, true);
	/* Long TNT (Table 33-16): 48-bit payload (1 << 8) | 01010101b. */
	px_expect(&h, n, 0x02, 0xa3, 0x55, 0x01, 0x00, 0x00, 0x00, 0x00, 0x2d, 0x00, 0x13);
}

Test(table55, dis_tnt_omits_tnt)
{
	size_t n = start(PT_CTL_ON | RTIT_PT_CTL_DIS_TNT, 0x1000);
	for (int i = 0; i < 7; i++)
		px_insn(&h, RTIT_IC_COND, 0x1002, 2, 0x1002, true);
	px_insn(&h, RTIT_IC_INDIRECT_JMP, 0x1002, 2, 0x1300, true);
	px_expect(&h, n, 0x2d, 0x00, 0x13);
}
