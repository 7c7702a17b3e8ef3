/*
 * test_tasks.c - task switches in legacy 32-bit protected mode (SDM Vol. 3
 * 7.3 "Task Switching", Figure 7-2 "32-Bit Task-State Segment"): what a
 * far CALL through a TSS selector saves, loads and links, the busy rule,
 * a task gate, and the refusals.
 *
 * TSS fields (Figure 7-2): link 00h, CR3 1Ch, EIP 20h, EFLAGS 24h, EAX
 * 28h, ECX 2Ch, EDX 30h, EBX 34h, ESP 38h, EBP 3Ch, ESI 40h, EDI 44h, ES
 * 48h, CS 4Ch, SS 50h, DS 54h, FS 58h, GS 5Ch.
 */
#include <string.h>
#include <criterion/criterion.h>
#include <unicorn/unicorn.h>

#include "sim_test.h"

static const char prog[] =
	".intel_syntax noprefix\n"
	"a: mov eax, 0x11111111\n"
	"   mov ebx, 0x22222222\n"
	"   mov esi, 0x33333333\n"
	"   .byte 0x9a\n"			/* call far 0x30:0 */
	"   .long 0\n"
	"   .word 0x30\n"
	"a2: nop\n"
	"   .org 0x40\n"
	"b: nop\n"
	"   .byte 0xea\n"			/* jmp far 0x28:0: A is busy */
	"   .long 0\n"
	"   .word 0x28\n"
	"   .org 0x60\n"
	"h_13: nop\n"
	"   .org 0x100\n"
	"   .fill 26, 4, 0\n"			/* TSS A at 0x401100 */
	"   .org 0x200\n"			/* TSS B at 0x401200 */
	"   .long 0, 0, 0, 0, 0, 0, 0\n"
	"   .long 0x5000, b, 0x2\n"		/* CR3, EIP, EFLAGS */
	"   .long 0x44, 0, 0, 0, 0x7fff8000, 0, 0, 0x55\n"	/* EAX..EDI */
	"   .long 0x10, 0x8, 0x10, 0x10, 0x10, 0x10, 0, 0\n";

struct seen {
	uint32_t a[26], b[26];
	uint64_t eflags, eax, edi;
};

static void setup(struct rtit_sim *sim, void *ctx)
{
	(void)ctx;
	cr_assert_eq(rtit_sim_add_task(sim, 0x28, 0x401100, 32), 0, "%s", rtit_sim_errmsg(sim));
	cr_assert_eq(rtit_sim_add_task(sim, 0x30, 0x401200, 32), 0, "%s", rtit_sim_errmsg(sim));
	cr_assert_eq(rtit_sim_set_tr(sim, 0x28), 0);
}

static void grab(struct rtit_sim *sim, void *ctx)
{
	struct seen *s = ctx;
	uc_mem_read(rtit_sim_uc(sim), 0x401100, s->a, sizeof(s->a));
	uc_mem_read(rtit_sim_uc(sim), 0x401200, s->b, sizeof(s->b));
}

Test(sim_tasks, far_call_saves_loads_and_links)
{
	struct seen s;
	memset(&s, 0, sizeof(s));
	struct st_opts o = { .mode = 32, .end_sym = "h_13", .before = setup, .after = grab,
			     .after_ctx = &s };
	struct st_run r;
	cr_assert_eq(st_run_asm(&r, prog, &o), 0, "%s", r.err);
	/* the CALL switches to B; B's JMP back to A, which the CALL left
	 * busy, is #GP with the selector as error code (SDM 7.3 step 3) */
	const char *expect =
		"a other\n"
		"a+5 other\n"
		"a+10 other\n"
		"a+15 far-call T -> b cr3=0x5000\n"
		"b other cr3=0x5000\n"
		"! exception 13 fault b+1 -> h_13 cr3=0x5000\n";
	cr_expect_str_eq(r.text, expect, "\n--- got\n%s(%s)", r.text, r.st.msg);
	/* the far CALL's record: B's CR3 (loaded from TSS B, SDM 7.3 step
	 * 11) */
	cr_expect_eq(r.recs[3].cr3, 0x5000);
	cr_expect_eq(r.recs[4].cr3, 0x5000);
	/* TSS A: EIP = the instruction after the CALL, the general
	 * registers (step 7); CR3 is not saved (the field stays 0) */
	cr_expect_eq(s.a[0x20 / 4], 0x401016, "EIP 0x%x", s.a[0x20 / 4]);
	cr_expect_eq(s.a[0x28 / 4], 0x11111111);
	cr_expect_eq(s.a[0x34 / 4], 0x22222222);
	cr_expect_eq(s.a[0x40 / 4], 0x33333333);
	cr_expect_eq(s.a[0x1c / 4], 0);
	cr_expect_eq(s.a[0x4c / 4], 0x8, "CS 0x%x", s.a[0x4c / 4]);
	/* TSS B: the back link is A's selector (CALL nests, 7.4) */
	cr_expect_eq(s.b[0], 0x28);
	/* the exception record carries the error code (the selector) */
	cr_expect_eq(r.recs[5].msr, 0x28);
	st_free(&r);
}

static const char gate[] =
	".intel_syntax noprefix\n"
	"a: nop\n"
	"   nop\n"
	"   nop\n"
	"   .org 0x40\n"
	"b: nop\n"
	"   .org 0x100\n"
	"   .fill 26, 4, 0\n"
	"   .org 0x200\n"
	"   .long 0, 0, 0, 0, 0, 0, 0\n"
	"   .long 0x6000, b, 0x2\n"
	"   .long 0, 0, 0, 0, 0x7fff8000, 0, 0, 0\n"
	"   .long 0x10, 0x8, 0x10, 0x10, 0x10, 0x10, 0, 0\n";

static void setup_gate(struct rtit_sim *sim, void *ctx)
{
	setup(sim, ctx);
	cr_assert_eq(rtit_sim_set_task_gate(sim, 0x20, 0x30), 0);
	uint64_t fl = 0x202;	/* IF = 1 */
	rtit_sim_set_reg(sim, UC_X86_REG_EFLAGS, fl);
}

Test(sim_tasks, interrupt_through_a_task_gate)
{
	struct seen s;
	memset(&s, 0, sizeof(s));
	struct st_opts o = { .mode = 32, .end_sym = "b", .before = setup_gate, .after = grab,
			     .after_ctx = &s, .nev = 1,
			     .ev = { { RTIT_SIM_AT_INSN, RTIT_EV_EXT_INTERRUPT, 0x20, 2, NULL, 0, 0, 0 } } };
	struct st_run r;
	cr_assert_eq(st_run_asm(&r, gate, &o), 0, "%s", r.err);
	const char *expect =
		"a other\n"
		"a+1 other\n"
		"! interrupt 32 a+2 -> b cr3=0x6000\n";
	cr_expect_str_eq(r.text, expect, "\n--- got\n%s(%s)", r.text, r.st.msg);
	cr_expect_eq(r.recs[2].cr3, 0x6000);
	/* the saved EIP is the next instruction (a trap-like event, SDM
	 * 6.12.2); EFLAGS with IF as it was; the back link to A */
	cr_expect_eq(s.a[0x20 / 4], 0x401002);
	cr_expect(s.a[0x24 / 4] & 0x200);
	cr_expect_eq(s.b[0], 0x28);
	st_free(&r);
}

Test(sim_tasks, refused_outside_mode_32)
{
	struct rtit_sim_config cfg;
	struct rtit_sim *sim;
	rtit_sim_config_default(&cfg);
	cr_assert_eq(rtit_sim_new(&sim, &cfg), 0);
	cr_assert_eq(rtit_sim_load_asm(sim, "nop\n", ST_BASE, "t.s", 0), 0);
	cr_expect_lt(rtit_sim_add_task(sim, 0x28, 0x401000, 32), 0);
	cr_expect_str_eq(rtit_sim_errmsg(sim), "tasks need mode 32: IA-32e mode has no task"
			 " switching (SDM Vol. 3 7.7)");
	rtit_sim_free(sim);
}
