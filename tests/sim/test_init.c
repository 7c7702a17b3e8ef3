/*
 * test_init.c - INIT and SIPI in the simulator, against SDM Vol. 3 Table
 * 10-1 (the INIT column: EFLAGS 2, CS F000H with base FFFF0000H, IP FFF0H,
 * CR0 with PE and PG clear, CR3 0, EDX the processor signature, the other
 * GPRs 0) and 9.4 (an AP waits for a SIPI, which starts it at CS = VV00H,
 * IP 0: LIP VV000H, in real mode).  Expected values come from the manual,
 * not from a run.
 */
#include <criterion/criterion.h>
#include <unicorn/unicorn.h>

#include "sim_test.h"

struct init_run {
	struct st_run r;
	uint64_t rax, rbx, rcx, rdx, rsp, rflags, cs, cr0;
};

static void init_read(struct rtit_sim *sim, struct init_run *t)
{
	rtit_sim_get_reg(sim, UC_X86_REG_RAX, &t->rax);
	rtit_sim_get_reg(sim, UC_X86_REG_RBX, &t->rbx);
	rtit_sim_get_reg(sim, UC_X86_REG_RCX, &t->rcx);
	rtit_sim_get_reg(sim, UC_X86_REG_RDX, &t->rdx);
	rtit_sim_get_reg(sim, UC_X86_REG_RSP, &t->rsp);
	rtit_sim_get_reg(sim, UC_X86_REG_RFLAGS, &t->rflags);
	rtit_sim_get_reg(sim, UC_X86_REG_CS, &t->cs);
	rtit_sim_get_reg(sim, UC_X86_REG_CR0, &t->cr0);
}

/* Runs @src linked at @load with the events @ev (n of them). */
static void init_run(struct init_run *t, const char *src, uint64_t load,
		     const struct rtit_sim_inject *ev, int n)
{
	struct rtit_sim_config cfg;
	struct rtit_sim *sim;

	memset(t, 0, sizeof(*t));
	rtit_sim_config_default(&cfg);
	cfg.budget = 1000;
	cfg.consumer.on_batch = st_on_batch;
	cfg.consumer.opaque = &t->r;
	cr_assert_eq(rtit_sim_new(&sim, &cfg), 0);
	cr_assert_eq(rtit_sim_load_asm(sim, src, load, "init.s", 0), 0, "%s", rtit_sim_errmsg(sim));
	for (int i = 0; i < n; i++)
		cr_assert_eq(rtit_sim_inject(sim, &ev[i]), 0);
	t->r.rc = rtit_sim_run(sim, &t->r.st);
	init_read(sim, t);
	rtit_sim_free(sim);
}

static const struct rtit_sim_rec *rec(const struct init_run *t, size_t i)
{
	cr_assert_lt(i, t->r.n, "record %zu of %zu", i, t->r.n);
	return &t->r.recs[i];
}

#define INIT_EV(count, ap) { .trigger = RTIT_SIM_AT_INSN, .kind = RTIT_EV_INIT, \
			     .vector = (ap), .at = (count) }
#define SIPI_EV(count, vv) { .trigger = RTIT_SIM_AT_INSN, .kind = RTIT_EV_SIPI, \
			     .vector = (vv), .at = (count) }

/* 64-bit code at FFFFF000H, the reset vector FFFFFFF0H (16-bit) jumps
 * back to FFFFFF00H (IP FF00H with CS base FFFF0000H). */
static const char bsp_src[] =
	".intel_syntax noprefix\n.globl _start\n_start:\n"
	"  nop\n"			/* fffff000 */
	"  mov eax, 1\n"		/* fffff001 */
	"  nop\n"			/* fffff006: never runs */
	"  .org 0xf00\n"
	"  .code16\n"
	"back:\n"
	"  mov bx, 0x1234\n"		/* ffffff00, 3 bytes */
	"  mov ax, 5\n"			/* ffffff03, 3 bytes */
	"  add ax, ax\n"		/* ffffff06, 2 bytes: 10, PF = 1 */
	"  hlt\n"			/* ffffff08 */
	"  .org 0xff0\n"
	"  jmp back\n";			/* fffffff0: E9 rel16, 3 bytes */

Test(init, bsp_goes_to_the_reset_vector_in_real_mode)
{
	struct init_run t;
	const struct rtit_sim_inject ev[] = { INIT_EV(2, 0) };
	init_run(&t, bsp_src, 0xfffff000, ev, 1);
	cr_assert_eq(t.r.rc, 0, "%s", t.r.st.msg);
	cr_assert_eq(t.r.st.stop, RTIT_SIM_STOP_HALTED);
	cr_assert_eq(t.r.n, 8);
	const struct rtit_sim_rec *r = rec(&t, 2);
	cr_assert_eq(r->kind, RTIT_SIM_EVENT);
	cr_assert_eq(r->cls, RTIT_EV_INIT);
	cr_assert_eq(r->ip, 0xfffff006);		/* NLIP (Table 33-23) */
	cr_assert_eq(r->next_ip, 0xfffffff0);		/* FFFF0000H + FFF0H */
	cr_assert_eq(r->vector, 0);
	cr_assert_eq(r->mode, RTIT_SIM_MODE_16);
	cr_assert_eq(r->cr3, 0);
	cr_assert_eq(r->cpl, 0);
	cr_assert_eq(r->flags & (RTIT_SIM_F_CR0_PG | RTIT_SIM_F_IF), 0);
	r = rec(&t, 3);
	cr_assert_eq(r->cls, RTIT_IC_DIRECT_JMP);
	cr_assert_eq(r->ip, 0xfffffff0);
	cr_assert_eq(r->len, 3);
	cr_assert_eq(r->next_ip, 0xffffff00);
	cr_assert_eq(r->mode, RTIT_SIM_MODE_16);
	cr_assert_eq(rec(&t, 4)->len, 3);		/* 16-bit operand: B8+r iw */
	cr_assert_eq(rec(&t, 7)->cls, RTIT_IC_HLT);
	cr_assert_eq(rec(&t, 7)->ip, 0xffffff08);
	/* Table 10-1: EDX = signature, ESP = 0, EFLAGS = 2 before the ADD */
	cr_assert_eq(t.rax, 10);
	cr_assert_eq(t.rbx, 0x1234);
	cr_assert_eq(t.rcx, 0);
	cr_assert_eq(t.rdx, 0x000506E3);
	cr_assert_eq(t.rsp, 0);
	cr_assert_eq(t.rflags & 0x8d5, 0x4, "flags 0x%llx", (unsigned long long)t.rflags);
	cr_assert_eq(t.cs, 0xf000);
	cr_assert_eq(t.cr0 & 0x80000001ull, 0);
}

/* 64-bit code at 10000H; the SIPI vector 11H starts the AP at 11000H
 * (CS 1100H), which far-jumps to 1200:0010 (LIP 12010H). */
static const char ap_src[] =
	".intel_syntax noprefix\n.globl _start\n_start:\n"
	"  nop\n"			/* 10000 */
	"  mov eax, 1\n"		/* 10001 */
	"  .org 0x1000\n"
	"  .code16\n"
	"  mov ax, cs\n"		/* 11000, 8C C8 */
	"  .byte 0xea\n"		/* 11002: JMP ptr16:16 */
	"  .word 0x10, 0x1200\n"
	"  .org 0x2010\n"
	"  mov cx, cs\n"		/* 12010 */
	"  hlt\n";			/* 12012 */

Test(init, ap_waits_for_sipi_then_starts_at_vv000)
{
	struct init_run t;
	const struct rtit_sim_inject ev[] = { INIT_EV(2, 1), SIPI_EV(2, 0x11) };
	init_run(&t, ap_src, 0x10000, ev, 2);
	cr_assert_eq(t.r.rc, 0, "%s", t.r.st.msg);
	cr_assert_eq(t.r.n, 8);
	const struct rtit_sim_rec *r = rec(&t, 2);
	cr_assert_eq(r->cls, RTIT_EV_INIT);
	cr_assert_eq(r->ip, 0x10006);
	cr_assert_eq(r->next_ip, 0);		/* waits: nothing runs */
	cr_assert_eq(r->vector, 1);
	r = rec(&t, 3);
	cr_assert_eq(r->kind, RTIT_SIM_EVENT);
	cr_assert_eq(r->cls, RTIT_EV_SIPI);
	cr_assert_eq(r->ip, 0x11000);
	cr_assert_eq(r->next_ip, 0x11000);	/* VV000H */
	cr_assert_eq(r->vector, 0x11);
	cr_assert_eq(r->mode, RTIT_SIM_MODE_16);
	cr_assert_eq(r->cycles, rec(&t, 1)->cycles);	/* no time while waiting */
	r = rec(&t, 5);
	cr_assert_eq(r->cls, RTIT_IC_FAR_JMP);
	cr_assert_eq(r->ip, 0x11002);
	cr_assert_eq(r->next_ip, 0x12010);	/* 1200H << 4 + 10H */
	cr_assert_eq(rec(&t, 7)->ip, 0x12012);
	cr_assert_eq(t.rax, 0x1100);
	cr_assert_eq(t.rcx, 0x1200);
	cr_assert_eq(t.rdx, 0x000506E3);
	cr_assert_eq(t.cs, 0x1200);
}

Test(init, ap_without_sipi_stops_waiting)
{
	struct init_run t;
	const struct rtit_sim_inject ev[] = { INIT_EV(2, 1) };
	init_run(&t, ap_src, 0x10000, ev, 1);
	cr_assert_eq(t.r.st.stop, RTIT_SIM_STOP_HALTED);
	cr_assert(strstr(t.r.st.msg, "waiting for SIPI"), "%s", t.r.st.msg);
	cr_assert_eq(t.r.n, 3);
}

Test(init, sipi_without_init_is_ignored)
{
	/* SDM Vol. 3 9.4: a SIPI reaches only a processor waiting for one */
	struct init_run t;
	const struct rtit_sim_inject ev[] = { SIPI_EV(1, 0x11) };
	init_run(&t, bsp_src, 0xfffff000, ev, 1);
	/* it runs on (into the zero bytes after the NOP: a #PF without a
	 * handler ends it) with no SIPI record */
	cr_assert_geq(t.r.n, 3);
	for (size_t i = 0; i < t.r.n; i++)
		cr_assert_neq(t.r.recs[i].kind, RTIT_SIM_EVENT);
}

Test(init, interrupt_in_real_mode_stops_the_run)
{
	struct init_run t;
	const struct rtit_sim_inject ev[] = {
		INIT_EV(2, 0),
		{ .trigger = RTIT_SIM_AT_INSN, .kind = RTIT_EV_NMI, .at = 4 },
	};
	init_run(&t, bsp_src, 0xfffff000, ev, 2);
	cr_assert_eq(t.r.st.stop, RTIT_SIM_STOP_FAULT);
	cr_assert(strstr(t.r.st.msg, "16-bit mode"), "%s", t.r.st.msg);
}
