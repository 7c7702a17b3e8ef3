/*
 * test_uintr.c - user interrupts in the simulator, against SDM Vol. 3
 * "User Interrupts" (recognition: UIRR != 0, UIF = 1, CPL 3, 64-bit mode;
 * delivery: the highest UIRR bit, UIF := 0, RSP adjusted by UISTACKADJUST
 * and aligned to 16, pushes of the old RSP, RFLAGS, the NLIP and the
 * vector, RIP := UIHANDLER) and Vol. 2B UIRET (pops RIP, RFLAGS, RSP;
 * UIF := 1), STUI, CLUI, TESTUI (CF := UIF).  Expected values come from
 * the manual's pseudocode, not from a run.
 */
#include <criterion/criterion.h>
#include <unicorn/unicorn.h>

#include "sim_test.h"

#define TOP 0x80000000ull	/* the simulator's default stack top */

struct uintr_run {
	struct st_run r;
	uint64_t rax, rbx, rcx, rsp;
	uint64_t frame[8];	/* the quadwords at 0x7fffff60..98 */
};

static void uintr_run(struct uintr_run *t, const char *src, bool on, uint64_t adjust,
		      const struct rtit_sim_inject *ev, int n)
{
	struct rtit_sim_config cfg;
	struct rtit_sim *sim;
	uint64_t end, h;

	memset(t, 0, sizeof(*t));
	rtit_sim_config_default(&cfg);
	cfg.budget = 1000;
	cfg.cpl = 3;
	cfg.uintr = on;
	cfg.consumer.on_batch = st_on_batch;
	cfg.consumer.opaque = &t->r;
	cr_assert_eq(rtit_sim_new(&sim, &cfg), 0);
	cr_assert_eq(rtit_sim_load_asm(sim, src, ST_BASE, "uintr.s", 0), 0, "%s", rtit_sim_errmsg(sim));
	cr_assert_eq(rtit_sim_symbol(sim, "end", &end), 0);
	rtit_sim_set_end(sim, end);
	if (on) {
		cr_assert_eq(rtit_sim_symbol(sim, "uih", &h), 0);
		cr_assert_eq(rtit_sim_msr_preset(sim, RTIT_SIM_MSR_UINTR_HANDLER, h), 0);
		cr_assert_eq(rtit_sim_msr_preset(sim, RTIT_SIM_MSR_UINTR_STACKADJUST, adjust), 0);
	} else {
		cr_assert_lt(rtit_sim_msr_preset(sim, RTIT_SIM_MSR_UINTR_HANDLER, 0x401000), 0);
	}
	rtit_sim_set_handler(sim, 6, end);	/* #UD: to the end */
	for (int i = 0; i < n; i++)
		cr_assert_eq(rtit_sim_inject(sim, &ev[i]), 0);
	t->r.rc = rtit_sim_run(sim, &t->r.st);
	rtit_sim_get_reg(sim, UC_X86_REG_RAX, &t->rax);
	rtit_sim_get_reg(sim, UC_X86_REG_RBX, &t->rbx);
	rtit_sim_get_reg(sim, UC_X86_REG_RCX, &t->rcx);
	rtit_sim_get_reg(sim, UC_X86_REG_RSP, &t->rsp);
	uc_mem_read(rtit_sim_uc(sim), TOP - 0xa0, t->frame, sizeof(t->frame));
	rtit_sim_free(sim);
}

#define UINTR_EV(count, v) { .trigger = RTIT_SIM_AT_INSN, .kind = RTIT_EV_UINTR, \
			     .vector = (v), .at = (count) }

static const char src[] =
	".intel_syntax noprefix\n.globl _start\n_start:\n"
	"  stui\n"			/* 401000, F3 0F 01 EF */
	"  testui\n"			/* 401004: after the UIRET: CF = 1 */
	"  setc cl\n"			/* 401008 */
	"  clui\n"			/* 40100b */
	"  testui\n"			/* 40100f: CF = 0 */
	"  setc bl\n"			/* 401013 */
	"end:\n"			/* 401016 */
	"  nop\n"
	"  .org 0x40\n"
	"uih:\n"
	"  pop rax\n"			/* 401040: the vector */
	"  uiret\n";			/* 401041 */

Test(uintr, held_until_stui_then_delivered_and_uiret)
{
	struct uintr_run t;
	/* requested before anything retired, while UIF = 0; UISTACKADJUST
	 * 0x80 (bit 0 clear: RSP - 0x80, the red zone) */
	const struct rtit_sim_inject ev[] = { UINTR_EV(0, 5), UINTR_EV(0, 2) };
	uintr_run(&t, src, true, 0x80, ev, 2);
	cr_assert_eq(t.r.st.stop, RTIT_SIM_STOP_END, "%s", t.r.st.msg);
	/* stui; UINTR (vector 5, the highest); pop; uiret; UINTR (vector
	 * 2: UIRET set UIF); pop; uiret; testui; setc; clui; testui; setc */
	cr_assert_eq(t.r.n, 12);
	const struct rtit_sim_rec *r = &t.r.recs[1];
	cr_assert_eq(r->kind, RTIT_SIM_EVENT);
	cr_assert_eq(r->cls, RTIT_EV_UINTR);
	cr_assert_eq(r->ip, 0x401004);			/* NLIP */
	cr_assert_eq(r->next_ip, 0x401040);		/* UIHANDLER */
	cr_assert_eq(r->vector, 5);
	cr_assert_eq(r->cpl, 3);
	r = &t.r.recs[3];
	cr_assert_eq(r->cls, RTIT_IC_UIRET);
	cr_assert_eq(r->ip, 0x401041);
	cr_assert_eq(r->len, 4);
	cr_assert_eq(r->next_ip, 0x401004);
	cr_assert(r->flags & RTIT_SIM_F_TAKEN);
	r = &t.r.recs[4];
	cr_assert_eq(r->cls, RTIT_EV_UINTR);
	cr_assert_eq(r->ip, 0x401004);
	cr_assert_eq(r->vector, 2);
	cr_assert_eq(t.r.recs[7].ip, 0x401004);		/* testui */
	/* the frame: RSP 0x80000000 - 0x80, aligned: pushes at 0x7fffff78
	 * (old RSP), 70 (RFLAGS), 68 (NLIP), 60 (vector) */
	cr_assert_eq(t.frame[0], 2);			/* the last vector */
	cr_assert_eq(t.frame[1], 0x401004);
	cr_assert_eq(t.frame[3], TOP);
	cr_assert_eq(t.rax, 2);
	cr_assert_eq(t.rsp, TOP);			/* UIRET: RSP := tempRSP */
	cr_assert_eq(t.rcx & 0xff, 1);			/* TESTUI: CF = UIF = 1 */
	cr_assert_eq(t.rbx & 0xff, 0);			/* after CLUI: 0 */
}

Test(uintr, stackadjust_bit0_loads_rsp)
{
	struct uintr_run t;
	const struct rtit_sim_inject ev[] = { UINTR_EV(1, 7) };
	/* bit 0 set: RSP := UISTACKADJUST (0x7fffffa1), aligned 0x7fffffa0:
	 * the pushes land at 98, 90, 88, 80 */
	uintr_run(&t, src, true, TOP - 0x5f, ev, 1);
	cr_assert_eq(t.r.st.stop, RTIT_SIM_STOP_END, "%s", t.r.st.msg);
	cr_assert_eq(t.r.recs[1].cls, RTIT_EV_UINTR);
	cr_assert_eq(t.r.recs[1].ip, 0x401004);
	cr_assert_eq(t.rax, 7);
	cr_assert_eq(t.rsp, TOP);
	cr_assert_eq(t.frame[4], 7);			/* 0x7fffff80: the vector */
	cr_assert_eq(t.frame[5], 0x401004);		/* 88: the NLIP */
	cr_assert_eq(t.frame[7], TOP);			/* 98: the old RSP */
}

Test(uintr, without_user_interrupts_stui_is_ud)
{
	struct uintr_run t;
	uintr_run(&t, src, false, 0, NULL, 0);
	cr_assert_eq(t.r.n, 1);
	cr_assert_eq(t.r.recs[0].kind, RTIT_SIM_EVENT);
	cr_assert_eq(t.r.recs[0].cls, RTIT_EV_EXCEPTION);
	cr_assert_eq(t.r.recs[0].vector, 6);
	cr_assert_eq(t.r.recs[0].ip, 0x401000);
}
