/*
 * test_pt_init.c - INIT and SIPI in the Intel PT model: SDM Table 33-55
 * cases 22-24 (33.7) and Event Trace Table 33-59 cases 20/21, on
 * hand-written records (the simulator's, docs/sim.md "INIT and SIPI":
 * INIT has ip = NLIP, next_ip = the reset LIP FFFFFFF0H on the BSP or 0
 * on an AP (vector 1); SIPI has ip = next_ip = VV000H, vector VV; both
 * leave real mode: mode 16, CR3 0, CPL 0).
 *
 * Bytes, from the packet definitions: FUP 0x3d / TIP 0x2d / TIP.PGE 0x31
 * with IPBytes 001b and IP[15:0] (Table 33-18) while IP[63:16] match the
 * last IP; with IPBytes 010b (IP[31:0]) the headers are 0x5d, 0x4d, 0x51.
 * PIP (Table 33-24) 02 43 and CR3[51:5] << 1 | NR in 6 bytes: CR3 = 0
 * (INIT, SIPI) is 02 43 00 00 00 00 00 00 (D58: PIP on INIT and SIPI).
 * MODE.Exec (Table 33-26) 0x99 then IF << 2 | CS.D << 1 | CS.L: 16-bit
 * code (CS.D = CS.L = 0) with IF = 0 is 99 00.  CFE (Table 33-49) 02 13,
 * IP << 7 | Type, Vector: INIT is type 6, SIPI type 5 with the SIPI vector
 * (Table 33-50).
 */
#include "pt_harness.h"

static struct px h;

#define PIP0 0x02, 0x43, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00
#define MODE16 0x99, 0x00
#define CFE(ip, type, vec) 0x02, 0x13, (uint8_t)((ip) << 7 | (type)), (vec)

static size_t start(uint64_t ctl)
{
	px_init(&h);
	h.cr3 = 0x5000;
	px_start(&h);
	px_single_range(&h);
	px_msr(&h, RTIT_PT_MSR_CTL, ctl);
	px_op(&h, 0x1000, 2);
	return h.n;
}

/* An event record @ev leaving the processor in real mode (INIT state:
 * mode 16, CR3 0, CPL 0, CR0.PG 0, IF 0). */
static void real_mode_event(uint8_t ev, uint64_t ip, uint64_t next, uint8_t vector)
{
	struct rtit_sim_rec r = px_rec(&h, RTIT_SIM_EVENT, ev, ip, 0, next, true);
	r.vector = vector;
	r.mode = RTIT_SIM_MODE_16;
	r.cr3 = 0;
	r.cpl = 0;
	r.flags &= (uint8_t)~(RTIT_SIM_F_CR0_PG | RTIT_SIM_F_IF);
	px_feed(&h, &r);
}

/* The simulator's INIT record at NLIP @ip: BSP to the reset vector, or
 * an AP (waits for SIPI). */
static void init(uint64_t ip, bool ap)
{
	real_mode_event(RTIT_EV_INIT, ip, ap ? 0 : 0xFFFFFFF0ull, ap);
}

static void sipi(uint8_t vv)
{
	real_mode_event(RTIT_EV_SIPI, (uint64_t)vv << 12, (uint64_t)vv << 12, vv);
}

Test(init, case22_init_on_the_bsp)
{
	size_t n = start(PT_CTL_ON);
	init(0x1002, false);
	/* FUP(NLIP), PIP(0), MODE.Exec(16-bit), TIP(ResetLIP): IP[63:16] of
	 * FFFFFFF0 differ from 0x1002's, so IPBytes 010b: 4d f0 ff ff ff */
	px_expect(&h, n, 0x3d, 0x02, 0x10, PIP0, MODE16, 0x4d, 0xf0, 0xff, 0xff, 0xff);
	/* then 16-bit code at the reset vector: a near JMP rel16 (direct: no
	 * packet), an indirect one (TIP, IPBytes 001b after FFFFFFF0) */
	n = h.n;
	struct rtit_sim_rec r = px_rec(&h, RTIT_SIM_INSN, RTIT_IC_DIRECT_JMP, 0xFFFFFFF0, 3,
				       0xFFFFFF00, true);
	r.mode = RTIT_SIM_MODE_16;
	r.cr3 = 0;
	r.flags &= (uint8_t)~RTIT_SIM_F_CR0_PG;
	px_feed(&h, &r);
	r = px_rec(&h, RTIT_SIM_INSN, RTIT_IC_INDIRECT_JMP, 0xFFFFFF00, 2, 0xFFFFFF40, true);
	r.mode = RTIT_SIM_MODE_16;
	r.cr3 = 0;
	r.flags &= (uint8_t)~RTIT_SIM_F_CR0_PG;
	px_feed(&h, &r);
	px_expect(&h, n, 0x2d, 0x40, 0xff);
}

Test(init, case22_with_os0_sends_no_pip)
{
	/* PIP needs IA32_RTIT_CTL.OS (Table 33-24); the CPL 0 after INIT
	 * then clears ContextEn: FUP(NLIP), TIP.PGD() (Table 33-56 case 7) */
	px_init(&h);
	h.cpl = 3;
	px_start(&h);
	px_single_range(&h);
	px_msr(&h, RTIT_PT_MSR_CTL, RTIT_PT_CTL_TRACE_EN | RTIT_PT_CTL_USER | RTIT_PT_CTL_BRANCH_EN);
	px_op(&h, 0x1000, 2);
	size_t n = h.n;
	init(0x1002, false);
	px_expect(&h, n, 0x3d, 0x02, 0x10, 0x01);
}

Test(init, case23_init_on_an_ap_then_case24_sipi)
{
	size_t n = start(PT_CTL_ON);
	init(0x1002, true);
	/* case 23: FUP(NLIP) and INIT's PIP, no TIP: the AP waits */
	px_expect(&h, n, 0x3d, 0x02, 0x10, PIP0);
	n = h.n;
	sipi(0x11);
	/* case 24: SIPI's PIP, MODE.Exec (the mode changed), TIP.PGE(11000H):
	 * IP[63:16] = 1 differs from the last IP's (0x1002): IPBytes 010b */
	px_expect(&h, n, PIP0, MODE16, 0x51, 0x00, 0x10, 0x01, 0x00);
}

Test(init, case24_sipi_outside_the_filter_sends_no_tip_pge)
{
	px_init(&h);
	px_start(&h);
	px_single_range(&h);
	px_msr(&h, RTIT_PT_MSR_ADDR0_A, 0x1000);
	px_msr(&h, RTIT_PT_MSR_ADDR0_B, 0x1fff);
	px_msr(&h, RTIT_PT_MSR_CTL,
	       PT_CTL_ON | (uint64_t)RTIT_PT_ADDR_FILTER << RTIT_PT_CTL_ADDR_CFG_SHIFT(0));
	px_op(&h, 0x1000, 2);
	size_t n = h.n;
	init(0x1002, true);
	sipi(0x11);		/* 11000H: outside 0x1000-0x1fff */
	px_expect(&h, n, 0x3d, 0x02, 0x10, PIP0, PIP0);
}

Test(init, event_trace_case20_shared_fup_with_branch_en)
{
	size_t n = start(PT_CTL_ON | RTIT_PT_CTL_EVENT_EN);
	init(0x1002, false);
	/* CFE.INIT(IP=0): BranchEn's FUP(NLIP) is the event's (as Table
	 * 33-59 case 4 for an interrupt) */
	px_expect(&h, n, CFE(0, 6, 0), 0x3d, 0x02, 0x10, PIP0, MODE16,
		  0x4d, 0xf0, 0xff, 0xff, 0xff);
}

Test(init, event_trace_cases20_21_without_branch_en)
{
	size_t n = start(RTIT_PT_CTL_TRACE_EN | RTIT_PT_CTL_OS | RTIT_PT_CTL_USER |
			 RTIT_PT_CTL_EVENT_EN);
	init(0x1002, true);
	/* case 20: CFE.INIT(IP=1), FUP(NLIP); PIP */
	px_expect(&h, n, CFE(1, 6, 0), 0x3d, 0x02, 0x10, PIP0);
	n = h.n;
	sipi(0x9a);
	/* case 21: CFE.SIPI(IP=0, vector 9AH); PIP */
	px_expect(&h, n, CFE(0, 5, 0x9a), PIP0);
}

Test(init, event_trace_ap_with_branch_en)
{
	size_t n = start(PT_CTL_ON | RTIT_PT_CTL_EVENT_EN);
	init(0x1002, true);
	sipi(0x11);
	/* CFE.INIT(IP=0), FUP, PIP; CFE.SIPI(IP=0) stand-alone (PacketEn = 0
	 * while the AP waits, Table 33-49 "Application"), PIP, MODE.Exec,
	 * TIP.PGE */
	px_expect(&h, n, CFE(0, 6, 0), 0x3d, 0x02, 0x10, PIP0, CFE(0, 5, 0x11), PIP0, MODE16,
		  0x51, 0x00, 0x10, 0x01, 0x00);
}
