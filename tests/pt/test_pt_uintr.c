/*
 * test_pt_uintr.c - user interrupts in the Intel PT model: SDM Table
 * 33-55 cases 26 (UINTR) and 27 (UIRET), Table 33-50 types UINTR (0xc,
 * the user-interrupt vector, FUP NLIP) and UIRET (0xd, FUP CLIP), on
 * hand-written records (docs/sim.md "User interrupts": the UINTR event
 * has ip = NLIP, next_ip = UIHANDLER, vector = UIRRV; UIRET is an
 * instruction, next_ip = the popped RIP).  D58: a UINTR sends FUP(NLIP)
 * and, as an interrupt (case 11), TIP(UIHANDLER); UIRET is traced as IRET
 * (SDM Vol. 2B UIRET): TIP(BLIP), and with EventEn CFE.UIRET(IP=1),
 * FUP(CLIP) as Table 33-50 says (case 27's "FUP(NLIP)" is not followed).
 *
 * Bytes: FUP 0x3d, TIP 0x2d with IPBytes 001b and IP[15:0] (Table 33-18);
 * CFE (Table 33-49) 02 13, IP << 7 | Type, Vector.
 */
#include "pt_harness.h"

static struct px h;

#define CFE(ip, type, vec) 0x02, 0x13, (uint8_t)((ip) << 7 | (type)), (vec)

static size_t start(uint64_t ctl)
{
	px_init(&h);
	h.cpl = 3;
	px_start(&h);
	px_single_range(&h);
	px_msr(&h, RTIT_PT_MSR_CTL, ctl);
	px_op(&h, 0x1000, 2);
	return h.n;
}

Test(uintr, case26_delivery_and_case27_uiret)
{
	size_t n = start(PT_CTL_ON);
	px_event(&h, RTIT_EV_UINTR, 0x1002, 0x1900, 5);
	/* FUP(NLIP), TIP(UIHANDLER) */
	px_expect(&h, n, 0x3d, 0x02, 0x10, 0x2d, 0x00, 0x19);
	n = h.n;
	px_insn(&h, RTIT_IC_UIRET, 0x1900, 4, 0x1002, true);
	/* as IRET, Table 33-55 case 8: TIP(BLIP) */
	px_expect(&h, n, 0x2d, 0x02, 0x10);
}

Test(uintr, event_trace_with_branch_en)
{
	size_t n = start(PT_CTL_ON | RTIT_PT_CTL_EVENT_EN);
	px_event(&h, RTIT_EV_UINTR, 0x1002, 0x1900, 5);
	/* CFE.UINTR(IP=0, vector 5): the FUP(NLIP) is BranchEn's, shared */
	px_expect(&h, n, CFE(0, 0xc, 5), 0x3d, 0x02, 0x10, 0x2d, 0x00, 0x19);
	n = h.n;
	px_insn(&h, RTIT_IC_UIRET, 0x1900, 4, 0x1002, true);
	/* CFE.UIRET(IP=1) with FUP(CLIP): BranchEn sends no FUP for it */
	px_expect(&h, n, CFE(1, 0xd, 0), 0x3d, 0x00, 0x19, 0x2d, 0x02, 0x10);
}

Test(uintr, event_trace_without_branch_en)
{
	size_t n = start(RTIT_PT_CTL_TRACE_EN | RTIT_PT_CTL_OS | RTIT_PT_CTL_USER |
			 RTIT_PT_CTL_EVENT_EN);
	px_event(&h, RTIT_EV_UINTR, 0x1002, 0x1900, 0x3f);
	/* Table 33-50: CFE.UINTR(IP=1, 3FH), FUP(NLIP) */
	px_expect(&h, n, CFE(1, 0xc, 0x3f), 0x3d, 0x02, 0x10);
	n = h.n;
	px_insn(&h, RTIT_IC_UIRET, 0x1900, 4, 0x1002, true);
	/* CFE.UIRET(IP=1), FUP(CLIP) */
	px_expect(&h, n, CFE(1, 0xd, 0), 0x3d, 0x00, 0x19);
}
