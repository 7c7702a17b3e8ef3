/*
 * test_pt_events.c - PTWRITE (Table 33-58, titles swapped: D27), power
 * events (Table 33-57 cases 2-5/7, HLT and MWAIT), Event Trace (Table 33-59), VMCS
 * (33.4.2.15), each on and off.
 *
 * PTW 02 {IP<<7 | PB<<5 | 12} payload; PWRE 02 22 {HW} {C<<4|sub};
 * EXSTOP 02 {IP<<7 | 62}; PWRX 02 A2 {last<<4|deepest} {wake} 00 00 00;
 * CFE 02 13 {IP<<7 | type} vector; EVD 02 53 type payload[8];
 * VMCS 02 C8 ptr[51:12].  C-states in MWAIT encoding (C1 = 0, C6 = 5).
 */
#include <inttypes.h>

#include "pt_harness.h"
#include "rtit/pktdec.h"

#define PIP0 0x02, 0x43, 0, 0, 0, 0, 0, 0

static struct px h;

static size_t start(uint64_t ctl)
{
	px_init(&h);
	px_start(&h);
	px_single_range(&h);
	px_msr(&h, RTIT_PT_MSR_ADDR0_A, 0x1000);
	px_msr(&h, RTIT_PT_MSR_ADDR0_B, 0x1fff);
	px_msr(&h, RTIT_PT_MSR_CTL, ctl);
	px_op(&h, 0x1000, 2);
	return h.n;
}

static void ptwrite(uint64_t ip, uint64_t v, uint8_t size)
{
	struct rtit_sim_rec r = px_rec(&h, RTIT_SIM_INSN, RTIT_IC_PTWRITE, ip, 4, ip + 4, false);
	r.value = v;
	r.vector = size;
	px_feed(&h, &r);
}

Test(events, ptwrite_cases)
{
	size_t n = start(PT_CTL_ON | RTIT_PT_CTL_PTW_EN);
	ptwrite(0x1002, 0xdeadbeef, 4);			/* case 2, FUPonPTW=0 */
	ptwrite(0x1006, 1, 8);				/* case 3 */
	px_expect(&h, n, 0x02, 0x12, 0xef, 0xbe, 0xad, 0xde,
		  0x02, 0x32, 0x01, 0, 0, 0, 0, 0, 0, 0);
}

Test(events, ptwrite_fup_on_ptw)
{
	size_t n = start(PT_CTL_ON | RTIT_PT_CTL_PTW_EN | RTIT_PT_CTL_FUP_ON_PTW);
	ptwrite(0x1002, 0xdeadbeef, 4);
	/* Table 33-58 case 2: PTW(IP=1, 4B) = 02 92 ..., then FUP(CLIP). */
	px_expect(&h, n, 0x02, 0x92, 0xef, 0xbe, 0xad, 0xde, 0x3d, 0x02, 0x10);
}

Test(events, ptwrite_off_or_filtered)
{
	size_t n = start(PT_CTL_ON);
	ptwrite(0x1002, 5, 4);				/* PTWEn=0 */
	px_expect(&h, n);
	n = start(PT_CTL_ON | RTIT_PT_CTL_PTW_EN | (1ull << RTIT_PT_CTL_ADDR_CFG_SHIFT(0)));
	px_insn(&h, RTIT_IC_INDIRECT_JMP, 0x1002, 2, 0x3000, true);
	n = h.n;
	ptwrite(0x3000, 5, 4);				/* case 1: FilterEn=0 */
	px_expect(&h, n);
}

Test(events, hlt_power_events)
{
	size_t n = start(PT_CTL_ON | RTIT_PT_CTL_PWR_EVT_EN);
	px_insn(&h, RTIT_IC_HLT, 0x1002, 1, 0x1003, false);
	/* Table 33-57 case 5: PWRE(C1), EXSTOP(IP), FUP(CLIP). */
	px_expect(&h, n, 0x02, 0x22, 0x00, 0x00, 0x02, 0xe2, 0x3d, 0x02, 0x10);
	n = h.n;
	px_event(&h, RTIT_EV_SLEEP, 0x1003, 0x1003, 1);	/* the same C1: nothing */
	px_expect(&h, n);
	px_event(&h, RTIT_EV_SLEEP, 0x1003, 0x1003, 6);	/* deeper: PWRE(C6) */
	px_expect(&h, n, 0x02, 0x22, 0x00, 0x50);
	n = h.n;
	px_event(&h, RTIT_EV_WAKE, 0x1003, 0x1003, 0);
	/* Case 7: CBR, PWRX(C6, C6, interrupt). */
	px_expect(&h, n, PT_CBR(16), 0x02, 0xa2, 0x55, 0x01, 0x00, 0x00, 0x00);
}

Test(events, hlt_woken_by_interrupt)
{
	size_t n = start(PT_CTL_ON | RTIT_PT_CTL_PWR_EVT_EN);
	px_insn(&h, RTIT_IC_HLT, 0x1002, 1, 0x1003, false);
	/* Table 33-57 case 5: PWRE(C1), EXSTOP(IP), FUP(CLIP). */
	px_expect(&h, n, 0x02, 0x22, 0x00, 0x00, 0x02, 0xe2, 0x3d, 0x02, 0x10);
	n = h.n;
	px_event(&h, RTIT_EV_EXT_INTERRUPT, 0x1003, 0x1900, 0x20);
	/* Case 7 (the interrupt is the wake event): CBR, PWRX(C1, C1,
	 * interrupt) = 02 A2 00 01 00 00 00 (MWAIT encoding, D27); then
	 * Table 33-55 case 11: FUP(NLIP of the HLT), TIP(handler). */
	px_expect(&h, n, PT_CBR(16), 0x02, 0xa2, 0x00, 0x01, 0x00, 0x00, 0x00,
		  0x3d, 0x03, 0x10, 0x2d, 0x00, 0x19);
	n = h.n;
	px_op(&h, 0x1900, 1);		/* awake: nothing more */
	px_expect(&h, n);
}

Test(events, hlt_woken_without_power_events)
{
	size_t n = start(PT_CTL_ON);
	px_insn(&h, RTIT_IC_HLT, 0x1002, 1, 0x1003, false);
	px_expect(&h, n);
	px_event(&h, RTIT_EV_NMI, 0x1003, 0x1900, 2);
	/* Table 33-55 case 25: CBR on the wake; no PWRE, so no PWRX. */
	px_expect(&h, n, PT_CBR(16), 0x3d, 0x03, 0x10, 0x2d, 0x00, 0x19);
}

Test(events, power_events_off)
{
	size_t n = start(PT_CTL_ON);
	px_insn(&h, RTIT_IC_HLT, 0x1002, 1, 0x1003, false);
	px_event(&h, RTIT_EV_SLEEP, 0x1003, 0x1003, 1);
	px_event(&h, RTIT_EV_WAKE, 0x1003, 0x1003, 0);
	px_expect(&h, n, PT_CBR(16));
}

Test(events, power_events_without_context)
{
	size_t n;
	px_init(&h);
	h.cpl = 3;
	px_start(&h);
	px_single_range(&h);
	px_msr(&h, RTIT_PT_MSR_CTL, RTIT_PT_CTL_TRACE_EN | RTIT_PT_CTL_OS | RTIT_PT_CTL_BRANCH_EN |
	       RTIT_PT_CTL_PWR_EVT_EN);
	px_op(&h, 0x1000, 2);
	n = h.n;
	px_event(&h, RTIT_EV_SLEEP, 0x1002, 0x1002, 6);
	/* Table 33-57 case 3: PWRE(Cx), EXSTOP (IP=0), no FUP. */
	px_expect(&h, n, 0x02, 0x22, 0x00, 0x50, 0x02, 0x62);
}

/* An MWAIT record (sim.h): EAX in value, ECX in msr, the C-state entered
 * (Cn) in vector, 0 when none was. */
static void mwait(uint64_t ip, uint32_t eax, uint32_t ecx, uint8_t cstate)
{
	struct rtit_sim_rec r = px_rec(&h, RTIT_SIM_INSN, RTIT_IC_MWAIT, ip, 3, ip + 3, false);
	r.value = eax;
	r.msr = ecx;
	r.vector = cstate;
	px_feed(&h, &r);
}

Test(events, mwait_case4_and_wake)
{
	size_t n = start(PT_CTL_ON | RTIT_PT_CTL_PWR_EVT_EN);
	mwait(0x1002, 0x21, 1, 3);
	/* Table 33-57 case 4: MWAIT(Cy), PWRE(Cx), EXSTOP(IP), FUP(CLIP).
	 * MWAIT (Table 33-42): 02 C2, hints[7:0] = 21, three reserved, EXT
	 * = 1 in byte 6, three reserved; PWRE (Table 33-43): C3 in the MWAIT
	 * encoding is 2, sub-state 1: 02 22 00 21; EXSTOP(IP=1) 02 E2;
	 * FUP(0x1002) against 0x1000, IPBytes 001: 3D 02 10. */
	px_expect(&h, n, 0x02, 0xc2, 0x21, 0, 0, 0, 0x01, 0, 0, 0,
		  0x02, 0x22, 0x00, 0x21, 0x02, 0xe2, 0x3d, 0x02, 0x10);
	n = h.n;
	px_event(&h, RTIT_EV_EXT_INTERRUPT, 0x1005, 0x1900, 0x20);
	/* Case 7: CBR, PWRX(last C3, deepest C3, interrupt) = 02 A2 22 01
	 * 00 00 00; then Table 33-55 case 11: FUP(NLIP), TIP(handler). */
	px_expect(&h, n, PT_CBR(16), 0x02, 0xa2, 0x22, 0x01, 0x00, 0x00, 0x00,
		  0x3d, 0x05, 0x10, 0x2d, 0x00, 0x19);
}

Test(events, mwait_payload_reserved_bits_zero)
{
	size_t n = start(PT_CTL_ON | RTIT_PT_CTL_PWR_EVT_EN);
	/* Table 33-42 carries hints[7:0] and EXT[1:0] only; the rest is
	 * reserved, written 0 (D40).  EAX = 0xABCD0050: C6 (MWAIT encoding
	 * 5), sub-state 0. */
	mwait(0x1002, 0xabcd0050, 1, 6);
	px_expect(&h, n, 0x02, 0xc2, 0x50, 0, 0, 0, 0x01, 0, 0, 0,
		  0x02, 0x22, 0x00, 0x50, 0x02, 0xe2, 0x3d, 0x02, 0x10);
	n = h.n;
	/* Woken by a masked interrupt (ECX[0] = 1): the next instruction is
	 * the wake, CBR and PWRX(C6, C6, interrupt) before it. */
	px_op(&h, 0x1005, 1);
	px_expect(&h, n, PT_CBR(16), 0x02, 0xa2, 0x55, 0x01, 0x00, 0x00, 0x00);
}

Test(events, mwait_case2_no_c_state)
{
	size_t n = start(PT_CTL_ON | RTIT_PT_CTL_PWR_EVT_EN);
	/* Table 33-57 case 2: C0 requested, or the monitor not armed: none. */
	mwait(0x1002, 0xf0, 0, 0);
	px_op(&h, 0x1005, 1);
	mwait(0x1006, 0x10, 0, 0);
	px_op(&h, 0x1009, 1);
	px_expect(&h, n);
}

Test(events, mwait_case3_without_context)
{
	size_t n;
	px_init(&h);
	px_start(&h);
	px_single_range(&h);
	/* CPL 0 traced only with OS = 1: ContextEn = 0 here (33.2.5). */
	px_msr(&h, RTIT_PT_MSR_CTL, RTIT_PT_CTL_TRACE_EN | RTIT_PT_CTL_USER | RTIT_PT_CTL_BRANCH_EN |
	       RTIT_PT_CTL_PWR_EVT_EN);
	px_op(&h, 0x1000, 2);
	n = h.n;
	mwait(0x1002, 0x10, 0, 2);
	/* Table 33-57 case 3: PWRE(C2) 02 22 00 10, EXSTOP(IP=0) 02 62; no
	 * MWAIT packet (33.4.2.23: needs ContextEn), no FUP. */
	px_expect(&h, n, 0x02, 0x22, 0x00, 0x10, 0x02, 0x62);
}

Test(events, mwait_power_events_off)
{
	size_t n = start(PT_CTL_ON);
	mwait(0x1002, 0x21, 0, 3);
	px_expect(&h, n);
	px_event(&h, RTIT_EV_NMI, 0x1005, 0x1900, 2);
	/* Table 33-55 case 25: CBR on the wake; no PWRE, so no PWRX. */
	px_expect(&h, n, PT_CBR(16), 0x3d, 0x05, 0x10, 0x2d, 0x00, 0x19);
}

Test(events, event_trace_interrupt_shared_fup)
{
	size_t n = start(PT_CTL_ON | RTIT_PT_CTL_EVENT_EN);
	px_event(&h, RTIT_EV_EXT_INTERRUPT, 0x1002, 0x1900, 0x20);
	/* Table 33-59 case 4: CFE.INTR(IP=0, 0x20), FUP(NLIP), TIP. */
	px_expect(&h, n, 0x02, 0x13, 0x01, 0x20, 0x3d, 0x02, 0x10, 0x2d, 0x00, 0x19);
}

Test(events, event_trace_without_branch_en)
{
	size_t n = start(RTIT_PT_CTL_TRACE_EN | RTIT_PT_CTL_OS | RTIT_PT_CTL_USER | RTIT_PT_CTL_EVENT_EN);
	px_event(&h, RTIT_EV_EXT_INTERRUPT, 0x1002, 0x1900, 0x20);
	/* Case 3: CFE.INTR(IP=1, 0x20), FUP(NLIP). */
	px_expect(&h, n, 0x02, 0x13, 0x81, 0x20, 0x3d, 0x02, 0x10);
	n = h.n;
	struct rtit_sim_rec r = px_rec(&h, RTIT_SIM_EVENT, RTIT_EV_EXCEPTION, 0x1900, 0, 0x1a00, true);
	r.vector = 14;
	r.flags |= RTIT_SIM_F_FAULT;
	r.value = 0x7fff0000;	/* CR2 */
	px_feed(&h, &r);
	/* Case 6: EVD.PFA, CFE.INTR(IP=1, 14), FUP(CLIP) (Table 33-59). */
	px_expect(&h, n, 0x02, 0x53, 0x00, 0x00, 0x00, 0xff, 0x7f, 0, 0, 0, 0,
		  0x02, 0x13, 0x81, 0x0e, 0x3d, 0x00, 0x19);
	n = h.n;
	px_insn(&h, RTIT_IC_IRET, 0x1a00, 2, 0x1900, true);
	/* Case 1: CFE.IRET(IP=1), FUP(CLIP). */
	px_expect(&h, n, 0x02, 0x13, 0x82, 0x00, 0x3d, 0x00, 0x1a);
}

Test(events, event_trace_off)
{
	size_t n = start(RTIT_PT_CTL_TRACE_EN | RTIT_PT_CTL_OS | RTIT_PT_CTL_USER);
	px_event(&h, RTIT_EV_EXT_INTERRUPT, 0x1002, 0x1900, 0x20);
	px_insn(&h, RTIT_IC_IRET, 0x1900, 2, 0x1004, true);
	px_expect(&h, n);
}

Test(events, vmcs_in_psb)
{
	px_init(&h);
	h.p.vmcs = 0x12345000;
	px_start(&h);
	px_single_range(&h);
	px_msr(&h, RTIT_PT_MSR_CTL, PT_CTL_ON);
	px_op(&h, 0x1000, 2);
	px_expect(&h, 0, PT_PSB, PT_CBR(16), PIP0, 0x02, 0xc8, 0x45, 0x23, 0x01, 0x00, 0x00,
		  PT_PSBEND, PT_MODE64, 0x31, 0x00, 0x10);
}

Test(events, event_trace_iret_sets_context)
{
	size_t n;
	px_init(&h);
	h.cpl = 0;
	px_start(&h);
	px_single_range(&h);
	px_msr(&h, RTIT_PT_MSR_CTL, RTIT_PT_CTL_TRACE_EN | RTIT_PT_CTL_USER | RTIT_PT_CTL_BRANCH_EN |
	       RTIT_PT_CTL_EVENT_EN);
	px_op(&h, 0x8000, 2);
	n = h.n;
	h.cpl = 3;
	px_insn(&h, RTIT_IC_IRET, 0x8002, 2, 0x1000, true);
	/* Table 33-59 case 2: CFE(IRET) with IP=0 (ContextEn was 0), then
	 * the TIP.PGE of the return (Table 33-56 case 5). */
	px_expect(&h, n, 0x02, 0x13, 0x02, 0x00, 0x31, 0x00, 0x10);
}

Test(events, event_trace_smi_rsm)
{
	size_t n = start(PT_CTL_ON | RTIT_PT_CTL_EVENT_EN);
	px_event(&h, RTIT_EV_SMI, 0x1002, 0x38000, 0);
	/* Case 10 with BranchEn: the FUP(NLIP) is shared, CFE.SMI(IP=0);
	 * then TIP.PGD() (Table 33-56 case 9). */
	px_expect(&h, n, 0x02, 0x13, 0x03, 0x00, 0x3d, 0x02, 0x10, 0x01);
	n = h.n;
	px_event(&h, RTIT_EV_RSM, 0x38002, 0x1002, 0);
	/* Case 11: the enable packets, then CFE.RSM(IP=0). */
	px_expect(&h, n, PT_CBR(16), PT_MODE64, 0x31, 0x02, 0x10, 0x02, 0x13, 0x04, 0x00);
}

Test(events, event_trace_vm_entry)
{
	size_t n = start(PT_CTL_ON | RTIT_PT_CTL_EVENT_EN);
	h.cr3 = 0x7000;
	px_event(&h, RTIT_EV_VMENTRY, 0x1002, 0x1d00, 0);
	/* Table 33-53 / 33-59 case 16: CFE.VMENTRY(IP=1), FUP(CLIP of the
	 * VMRESUME, D48), PIP(guest CR3, NR=1), TIP(guest IP). */
	px_expect(&h, n, 0x02, 0x13, 0x87, 0x00, 0x3d, 0x02, 0x10,
		  0x02, 0x43, 0x01, 0x07, 0, 0, 0, 0, 0x2d, 0x00, 0x1d);
}

/* MODE.Exec = 99 {IF<<2 | CS.D<<1 | CS.L} (Table 33-26): 64-bit with IF=1
 * is 99 05, with IF=0 99 01. */

Test(events, event_trace_if_cli_sti)
{
	size_t n = start(PT_CTL_ON | RTIT_PT_CTL_EVENT_EN);
	h.ifl = true;
	px_op(&h, 0x1002, 1);				/* STI */
	/* Table 33-59 case 22: MODE.Exec, FUP(CLIP). */
	px_expect(&h, n, 0x99, 0x05, 0x3d, 0x02, 0x10);
	n = h.n;
	px_op(&h, 0x1003, 1);				/* IF unchanged: nothing */
	h.ifl = false;
	px_op(&h, 0x1004, 1);				/* CLI */
	px_expect(&h, n, 0x99, 0x01, 0x3d, 0x04, 0x10);
}

Test(events, event_trace_if_off_without_event_en)
{
	size_t n = start(PT_CTL_ON);
	h.ifl = true;
	px_op(&h, 0x1002, 1);				/* STI: no Event Trace */
	px_event(&h, RTIT_EV_EXT_INTERRUPT, 0x1003, 0x1900, 0x20);
	/* 33.4.2.8: IF changes make MODE.Exec only with EventEn; the
	 * interrupt's IF clear neither (Table 33-55 case 11: FUP, TIP). */
	px_expect(&h, n, 0x3d, 0x03, 0x10, 0x2d, 0x00, 0x19);
}

Test(events, event_trace_if_with_interrupt_and_iret)
{
	size_t n = start(PT_CTL_ON | RTIT_PT_CTL_EVENT_EN);
	h.ifl = true;
	px_op(&h, 0x1002, 1);				/* STI */
	n = h.n;
	h.ifl = false;
	px_event(&h, RTIT_EV_EXT_INTERRUPT, 0x1003, 0x1900, 0x20);
	/* Table 33-59 case 4, then the far transfer's MODE.Exec (IF cleared
	 * by the gate) before its TIP (33.4.2.8, Table 33-55 case 11). */
	px_expect(&h, n, 0x02, 0x13, 0x01, 0x20, 0x3d, 0x03, 0x10, 0x99, 0x01, 0x2d, 0x00, 0x19);
	n = h.n;
	h.ifl = true;
	px_insn(&h, RTIT_IC_IRET, 0x1900, 2, 0x1003, true);
	/* Case 1: CFE.IRET(IP=1), FUP(CLIP); MODE.Exec IF=1, TIP. */
	px_expect(&h, n, 0x02, 0x13, 0x82, 0x00, 0x3d, 0x00, 0x19, 0x99, 0x05, 0x2d, 0x03, 0x10);
}

Test(events, event_trace_if_change_outside_the_filter)
{
	size_t n = start(PT_CTL_ON | RTIT_PT_CTL_EVENT_EN | (1ull << RTIT_PT_CTL_ADDR_CFG_SHIFT(0)));
	px_insn(&h, RTIT_IC_INDIRECT_JMP, 0x1002, 2, 0x3000, true);
	h.ifl = true;
	px_op(&h, 0x3000, 1);				/* STI, FilterEn = 0 */
	px_insn(&h, RTIT_IC_INDIRECT_JMP, 0x3001, 2, 0x1000, true);
	/* TIP.PGD(0x3000) (Table 33-56 case 4); nothing for the STI (D45:
	 * FilterEn); MODE.Exec with the new IF before TIP.PGE (33.4.2.8:
	 * "any TIP.PGE scenario" where the bits changed). */
	px_expect(&h, n, 0x21, 0x00, 0x30, 0x99, 0x05, 0x31, 0x00, 0x10);
}

/* PAD (33.4.2.20, pad_align, D46): the same records with and without
 * PADs give the same stream once the PADs are taken out; every PSB
 * starts at a multiple of pad_align, and PADs come only right before a
 * PSB, fewer than pad_align of them. */
static struct px h2;

static void psb_periods(struct px *x, uint32_t pad_align)
{
	px_init(x);
	x->p.pad_align = pad_align;
	px_start(x);
	px_single_range(x);
	px_msr(x, RTIT_PT_MSR_CTL, PT_CTL_ON);	/* PSBFreq 0: every 2 KiB */
	for (unsigned i = 0; i < 3000; i++)	/* TIPs to 7 pages: 3-5 bytes each */
		px_insn(x, RTIT_IC_INDIRECT_JMP, 0x1000 + (i % 7) * 0x10000, 2,
			0x1000 + ((i + 1) % 7) * 0x10000, true);
	cr_assert_eq(rtit_pt_model_finish(&x->m), 0);
}

Test(events, pad_align_psb)
{
	struct rtit_pktdec d;
	struct rtit_pktdec_item it;
	struct rtit_pktdec_cfg c = { .dialect = RTIT_DIALECT_PT, .no_ip = true };
	static uint8_t stripped[sizeof(h.out)];
	size_t ns = 0, psbs = 0, run = 0;
	int r;

	psb_periods(&h, 0);
	psb_periods(&h2, 16);
	c.mem = h2.out;
	c.mem_len = h2.n;
	cr_assert_eq(rtit_pktdec_init(&d, &c), 0);
	while ((r = rtit_pktdec_next(&d, &it)) == 1) {
		if (it.pkt.type == RTIT_PT_PAD) {
			run++;
			continue;
		}
		if (it.pkt.type == RTIT_PT_PSB) {
			cr_expect_eq(it.offset % 16, 0, "PSB at 0x%" PRIx64, it.offset);
			cr_expect_lt(run, 16);
			psbs++;
		} else {
			cr_expect_eq(run, 0, "PADs before a %s at 0x%" PRIx64,
				     rtit_pkt_name(it.pkt.type), it.offset);
		}
		run = 0;
		memcpy(stripped + ns, h2.out + it.offset, it.pkt.size);
		ns += it.pkt.size;
	}
	cr_assert_eq(r, 0);
	cr_expect_geq(psbs, 4, "%zu PSBs", psbs);
	cr_expect_gt(h2.n, ns, "no PAD at all");
	cr_expect_eq(ns, h.n);
	cr_expect(ns == h.n && !memcmp(stripped, h.out, ns), "the stream without PADs differs");
}

/* MNT (33.4.2.19, mnt, D46): 02 C3 88 and the payload, low byte first,
 * after PSBEND. */
Test(events, mnt_after_psbend)
{
	px_init(&h);
	h.p.mnt_on = true;
	h.p.mnt = 0x1122334455667788ull;
	px_start(&h);
	px_single_range(&h);
	px_msr(&h, RTIT_PT_MSR_CTL, PT_CTL_ON);
	px_op(&h, 0x1000, 2);
	px_expect(&h, 0, PT_PSB, PT_CBR(16), PIP0, PT_PSBEND,
		  0x02, 0xc3, 0x88, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,
		  PT_MODE64, 0x31, 0x00, 0x10);
}
