/*
 * test_rtit_init.c - INIT and SIPI in the RTIT model (docs/decisions.md
 * D56): RTIT Table 1 gives INIT/SIPI a FUP with the NLIP, Table 19 has
 * no row for them.  On an AP, INIT clears ContextEn until the SIPI, as
 * an SMI does until RSM (rows 36-38): FUP.PGD(NLIP), then FUP.PGE(SIPI
 * LIP).  On the BSP, INIT is a far event (rows 27-33): FUP.FAR(NLIP),
 * then the TIP of the reset vector.
 *
 * Setup: Filter_Event_ID = 111b "always on", TraceStop_Event_ID = 110b
 * "always off" (3.3.5), OS and User traced.  Addresses below 0x10000 give
 * 3-byte IP packets (Zext=1, CNT=00, Table 18 row 3): FUP.PGE 84, FUP.PGD
 * 8C, FUP.FAR BC, then LIP[7:0], LIP[15:8].  Worked out by hand.
 */
#include "rtit_harness.h"

#define CTL_ON (RTIT_R_CTL_TRACE_EN | RTIT_R_CTL_TRACE_ACTIVE | RTIT_R_CTL_OS | RTIT_R_CTL_USER)

static struct hx h;

/* An INIT or SIPI record (vector: AP flag, SIPI vector). */
static void event(uint8_t ev, uint64_t ip, uint64_t next, uint8_t vector)
{
	struct rtit_sim_rec r = hx_rec(&h, RTIT_SIM_EVENT, ev, ip, 0, next, true);
	r.vector = vector;
	rtit_r_model_on_rec(&h.m, &r);
}

static size_t start(void)
{
	hx_init(&h);
	hx_start(&h);
	hx_msr(&h, RTIT_R_MSR_EVENTS, RTIT_R_EVID_ALWAYS_ON |
	       (RTIT_R_EVID_ALWAYS_OFF << RTIT_R_EVENTS_STOP_SHIFT));
	hx_msr(&h, RTIT_R_MSR_STATUS, RTIT_R_STATUS_FILTER_EN);
	hx_msr(&h, RTIT_R_MSR_CTL, CTL_ON);
	hx_op(&h, 0x140, 2);
	return h.n;
}

Test(rtit_init, ap_init_then_sipi)
{
	size_t n = start();
	hx_op(&h, 0x142, 2);
	event(RTIT_EV_INIT, 0x144, 0, 1);
	hx_expect(&h, n, 0x8c, 0x44, 0x01);
	n = h.n;
	event(RTIT_EV_SIPI, 0x1000, 0x1000, 0x01);
	hx_expect(&h, n, 0x84, 0x00, 0x10);
}

Test(rtit_init, bsp_init_is_a_far_event)
{
	size_t n = start();
	event(RTIT_EV_INIT, 0x142, 0xFFFFFFF0, 0);
	cr_assert_gt(h.n, n + 3);
	cr_assert_eq(h.out[n], 0xbc);		/* FUP.FAR(NLIP) */
	cr_assert_eq(h.out[n + 1], 0x42);
	cr_assert_eq(h.out[n + 2], 0x01);
}
