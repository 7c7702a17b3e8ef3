/*
 * test_events.c - injected events at an instruction count and at an
 * address: external interrupt, NMI, SMI/RSM, VM exit/entry, frequency
 * change, sleep/wake, external MSR write; HLT woken by an interrupt; the
 * clock (cycles per class, TSC ratio, frequency change, sleep).
 */
#include <criterion/criterion.h>

#include "sim_test.h"

#define P ".intel_syntax noprefix\n.globl _start\n_start:\n"

static const char *prog =
	P "a: sti\n"
	"b: nop\n"
	"c: nop\n"
	"d: nop\n"
	"e: nop\n"
	"f: cli\n"
	"g: hlt\n"
	"h_32: iretq\n"
	"h_2: iretq\n";

Test(sim_events, every_kind)
{
	struct st_opts o = {
		.ev = {
			{ RTIT_SIM_AT_INSN, RTIT_EV_EXT_INTERRUPT, 32, 2, NULL, 0, 0, 0 },
			{ RTIT_SIM_AT_IP, RTIT_EV_NMI, 0, 0, "d", 0, 0, 0 },
			{ RTIT_SIM_AT_INSN, RTIT_EV_SMI, 0, 6, NULL, 0, 0, 100 },
			/* a #PF exit: vector 14, qualification the address */
			{ RTIT_SIM_AT_INSN, RTIT_EV_VMEXIT, 14, 7, NULL, 0x7fff0000, 0, 50 },
			{ RTIT_SIM_AT_INSN, RTIT_EV_FREQ_CHANGE, 0, 8, NULL, 4, 0, 0 },
			{ RTIT_SIM_AT_INSN, RTIT_EV_SLEEP, 6, 8, NULL, 1000, 0, 0 },
			{ RTIT_SIM_AT_INSN, RTIT_EV_MSR_WRITE_EXTERNAL, 0, 8, NULL, 0x2001, 0x570, 0 },
		},
		.nev = 7,
	};
	struct st_run r;
	cr_assert_eq(st_run_asm(&r, prog, &o), 0, "%s", r.err);
	const char *expect =
		"a other\n"
		"b other\n"
		"! interrupt 32 c -> h_32\n"
		"h_32 iret T -> c\n"
		"c other\n"
		"! nmi d -> h_2\n"
		"h_2 iret T -> d\n"
		"d other\n"
		"! smi e -> e\n"
		"! rsm e -> e\n"
		"e other\n"
		"! vmexit f -> f\n"
		"! vmentry f -> f\n"
		"f other\n"
		"! freq g -> g\n"
		"! sleep g -> g\n"
		"! wake g -> g\n"
		"! msr-write g -> g\n"
		"g hlt\n";
	cr_expect_str_eq(r.text, expect, "\n--- expected\n%s--- got\n%s(%s)",
			 expect, r.text, r.st.msg);
	cr_expect_eq(r.st.stop, RTIT_SIM_STOP_HALTED);
	cr_expect_eq(r.st.events, 10);
	/* clock: 1 cycle per insn; SMI 100 and VM exit 50 cycles; after the
	 * frequency change to 4 the TSC (ratio 16, the default, D79) runs 4
	 * ticks per cycle; sleep adds 1000 TSC ticks */
	const struct rtit_sim_rec *last = &r.recs[r.n - 1];
	cr_expect_eq(last->cycles, 9 + 150, "cycles %" PRIu64, last->cycles);
	cr_expect_eq(r.recs[r.n - 2].value, 0x2001);
	cr_expect_eq(r.recs[r.n - 2].msr, 0x570);
	cr_expect_eq(r.recs[r.n - 5].value, 4);
	/* the VM exit's record carries its exit information */
	const struct rtit_sim_rec *x = &r.recs[r.n - 8];
	cr_expect_eq(x->cls, RTIT_EV_VMEXIT);
	cr_expect_eq(x->msr, 0);
	cr_expect_eq(x->value, 0x7fff0000);
	cr_expect_eq(x->vector, 14);
	/* tsc before the change: 158; HLT adds 1 cycle = 4 ticks */
	cr_expect_eq(last->tsc, 158 + 4 + 1000, "tsc %" PRIu64, last->tsc);
	st_free(&r);
}

Test(sim_events, hlt_woken_by_interrupt)
{
	struct st_opts o = {
		.ev = { { RTIT_SIM_AT_INSN, RTIT_EV_EXT_INTERRUPT, 32, 1000, NULL, 0, 0, 0 } },
		.nev = 1,
	};
	struct st_run r;
	cr_assert_eq(st_run_asm(&r, P "a: sti\nb: hlt\nc: cli\nd: hlt\nh_32: iretq\n", &o), 0);
	const char *expect =
		"a other\n"
		"b hlt\n"
		"! interrupt 32 c -> h_32\n"
		"h_32 iret T -> c\n"
		"c other\n"
		"d hlt\n";
	cr_expect_str_eq(r.text, expect, "\n--- expected\n%s--- got\n%s(%s)",
			 expect, r.text, r.st.msg);
	st_free(&r);
}

Test(sim_events, interrupt_at_insn_zero_and_mid_block)
{
	struct st_opts o = {
		.ev = { { RTIT_SIM_AT_INSN, RTIT_EV_NMI, 0, 0, NULL, 0, 0, 0 },
			{ RTIT_SIM_AT_INSN, RTIT_EV_NMI, 0, 3, NULL, 0, 0, 0 } },
		.nev = 2,
	};
	struct st_run r;
	cr_assert_eq(st_run_asm(&r, P "a: nop\nb: nop\nc: nop\nd: nop\ne: hlt\nh_2: iretq\n", &o), 0);
	const char *expect =
		"! nmi a -> h_2\n"
		"h_2 iret T -> a\n"
		"a other\n"
		"b other\n"
		"! nmi c -> h_2\n"
		"h_2 iret T -> c\n"
		"c other\n"
		"d other\n"
		"e hlt\n";
	cr_expect_str_eq(r.text, expect, "\n--- expected\n%s--- got\n%s(%s)",
			 expect, r.text, r.st.msg);
	st_free(&r);
}

Test(sim_events, interrupt_without_handler_ends_run)
{
	struct st_opts o = {
		.ev = { { RTIT_SIM_AT_INSN, RTIT_EV_EXT_INTERRUPT, 0x40, 1, NULL, 0, 0, 0 } },
		.nev = 1,
	};
	struct st_run r;
	cr_assert_eq(st_run_asm(&r, P "a: sti\nb: nop\nc: hlt\n", &o), 0);
	cr_expect_eq(r.st.stop, RTIT_SIM_STOP_FAULT);
	cr_expect(strstr(r.st.msg, "vector 64") != NULL, "%s", r.st.msg);
	st_free(&r);
}

Test(sim_events, cpi_per_class)
{
	struct rtit_sim_clock clk;
	memset(&clk, 0, sizeof(clk));
	for (int i = 0; i < RTIT_SIM_NUM_CLASSES; i++)
		clk.cpi[i] = 1;
	clk.cpi[RTIT_IC_COND] = 5;
	clk.cpi[RTIT_IC_HLT] = 7;
	clk.tsc_ratio = 3;
	clk.core_ratio = 2;
	struct st_opts o = { .clock = &clk };
	struct st_run r;
	cr_assert_eq(st_run_asm(&r, P "mov ecx, 3\n1: loop 1b\nhlt\n", &o), 0);
	cr_assert_eq(r.n, 5);
	/* 1 + 3*5 + 7 = 23 cycles; TSC = floor(23 * 3 / 2) = 34 */
	cr_expect_eq(r.recs[4].cycles, 23);
	cr_expect_eq(r.recs[4].tsc, 34);
	st_free(&r);
}

/* An interrupt held while IF = 0 is taken when STI; HLT waits for it. */
Test(sim_events, deferred_interrupt_wakes_hlt)
{
	struct st_opts o = {
		.ev = { { RTIT_SIM_AT_INSN, RTIT_EV_EXT_INTERRUPT, 32, 1, NULL, 0, 0, 0 } },
		.nev = 1,
	};
	struct st_run r;
	cr_assert_eq(st_run_asm(&r, P "a: nop\nb: sti\nc: hlt\nd: cli\ne: hlt\nh_32: iretq\n", &o), 0);
	const char *expect =
		"a other\n"
		"b other\n"
		"c hlt\n"
		"! interrupt 32 d -> h_32\n"
		"h_32 iret T -> d\n"
		"d other\n"
		"e hlt\n";
	cr_expect_str_eq(r.text, expect, "\n--- expected\n%s--- got\n%s(%s)",
			 expect, r.text, r.st.msg);
	st_free(&r);
}

/* SDM 6.8.3: after STI the held interrupt waits one more instruction. */
Test(sim_events, sti_shadow)
{
	struct st_opts o = {
		.ev = { { RTIT_SIM_AT_INSN, RTIT_EV_EXT_INTERRUPT, 32, 0, NULL, 0, 0, 0 } },
		.nev = 1,
	};
	struct st_run r;
	cr_assert_eq(st_run_asm(&r, P "a: sti\nb: nop\nc: nop\nd: hlt\nh_32: iretq\n", &o), 0);
	const char *expect =
		"a other\n"
		"b other\n"
		"! interrupt 32 c -> h_32\n"
		"h_32 iret T -> c\n"
		"c other\n"
		"d hlt\n";
	cr_expect_str_eq(r.text, expect, "\n--- expected\n%s--- got\n%s(%s)",
			 expect, r.text, r.st.msg);
	st_free(&r);
}

/* MONITOR arms, MWAIT waits like HLT for the interrupt (SDM Vol. 2B
 * MWAIT); the record has EAX (hints), ECX (extensions) and the C-state
 * entered: EAX[7:4] = 2 is C3. */
Test(sim_events, mwait_woken_by_interrupt)
{
	struct st_opts o = {
		.ev = { { RTIT_SIM_AT_INSN, RTIT_EV_EXT_INTERRUPT, 32, 5, NULL, 0, 0, 0 } },
		.nev = 1,
	};
	struct st_run r;
	cr_assert_eq(st_run_asm(&r, P "a: sti\nb: xor ecx, ecx\nc: monitor\nd: mov eax, 0x21\n"
				"e: mwait\nf: hlt\nh_32: iretq\n", &o), 0);
	const char *expect =
		"a other\n"
		"b other\n"
		"c other\n"
		"d other\n"
		"e mwait\n"
		"! interrupt 32 f -> h_32\n"
		"h_32 iret T -> f\n"
		"f hlt\n";
	cr_expect_str_eq(r.text, expect, "\n--- expected\n%s--- got\n%s(%s)",
			 expect, r.text, r.st.msg);
	cr_assert_eq(r.recs[4].cls, RTIT_IC_MWAIT);
	cr_expect_eq(r.recs[4].value, 0x21);
	cr_expect_eq(r.recs[4].msr, 0);
	cr_expect_eq(r.recs[4].vector, 3);
	st_free(&r);
}

/* Without a MONITOR the monitor is not armed: execution goes on at once
 * (SDM Vol. 2B MWAIT; Table 33-57 case 2); C-state 0 in the record.  An
 * MWAIT to C0 (EAX[7:4] = 0xF) waits but enters no C-state. */
Test(sim_events, mwait_not_armed_or_c0)
{
	struct st_opts o = {
		.ev = { { RTIT_SIM_AT_INSN, RTIT_EV_NMI, 0, 7, NULL, 0, 0, 0 } },
		.nev = 1,
	};
	struct st_run r;
	cr_assert_eq(st_run_asm(&r, P "a: xor ecx, ecx\nb: mov eax, 0x10\nc: mwait\n"
				"d: monitor\ne: mov eax, 0xf0\nf: nop\ng: mwait\nh: hlt\n"
				"h_2: hlt\n", &o), 0);
	const char *expect =
		"a other\n"
		"b other\n"
		"c mwait\n"
		"d other\n"
		"e other\n"
		"f other\n"
		"g mwait\n"
		"! nmi h -> h_2\n"
		"h_2 hlt\n";
	cr_expect_str_eq(r.text, expect, "\n--- expected\n%s--- got\n%s(%s)",
			 expect, r.text, r.st.msg);
	cr_expect_eq(r.recs[2].vector, 0);
	cr_expect_eq(r.recs[6].vector, 0);
	cr_expect_eq(r.recs[6].value, 0xf0);
	st_free(&r);
}

/* ECX[0] = 1: an interrupt wakes the MWAIT even with IF = 0, and stays
 * pending (SDM Vol. 2B MWAIT, "interrupts as break events"); it is taken
 * one instruction after STI.  Without ECX[0] the MWAIT sleeps for ever. */
Test(sim_events, mwait_masked_interrupt_break_event)
{
	struct st_opts o = {
		.ev = { { RTIT_SIM_AT_INSN, RTIT_EV_EXT_INTERRUPT, 32, 4, NULL, 0, 0, 0 } },
		.nev = 1,
	};
	struct st_run r;
	cr_assert_eq(st_run_asm(&r, P "a: xor ecx, ecx\nb: monitor\nc: mov ecx, 1\nd: mwait\n"
				"e: sti\nf: nop\ng: hlt\nh_32: iretq\n", &o), 0);
	const char *expect =
		"a other\n"
		"b other\n"
		"c other\n"
		"d mwait\n"
		"e other\n"
		"f other\n"
		"! interrupt 32 g -> h_32\n"
		"h_32 iret T -> g\n"
		"g hlt\n";
	cr_expect_str_eq(r.text, expect, "\n--- expected\n%s--- got\n%s(%s)",
			 expect, r.text, r.st.msg);
	cr_expect_eq(r.recs[3].msr, 1);
	cr_expect_eq(r.recs[3].vector, 1);	/* EAX = 0: C1 */
	st_free(&r);

	cr_assert_eq(st_run_asm(&r, P "a: xor ecx, ecx\nb: monitor\nc: mwait\n"
				"e: sti\nh_32: iretq\n", &o), 0);
	cr_expect_eq(r.st.stop, RTIT_SIM_STOP_HALTED);
	cr_expect(strstr(r.st.msg, "MWAIT, interrupts off") != NULL, "%s", r.st.msg);
	st_free(&r);
}

/* RFLAGS.IF after every record (RTIT_SIM_F_IF), the bit Intel PT's
 * MODE.Exec reports with EventEn (SDM 33.4.2.8).  Expected values from the
 * instruction reference (SDM Vol. 2A CLI, Vol. 2B STI and POPF): STI sets
 * IF, CLI clears it; POPF at CPL 0 loads IF (and AC) from the stack; with a
 * 16-bit operand (POPFW) only bits 15:0, so AC (bit 18) stays. */
static void if_trace(const struct st_run *r, char *buf, size_t size)
{
	size_t o = 0;
	buf[0] = 0;
	for (size_t i = 0; i < r->n && o < size; i++) {
		char ip[64];
		st_addr(r, r->recs[i].ip, ip, sizeof(ip));
		o += (size_t)snprintf(buf + o, size - o, "%s%s=%d\n",
				      r->recs[i].kind == RTIT_SIM_EVENT ? "! " : "", ip,
				      !!(r->recs[i].flags & RTIT_SIM_F_IF));
	}
}

Test(sim_events, rflags_if_cli_sti_popf)
{
	struct st_run r;
	char got[1024];
	cr_assert_eq(st_run_asm(&r, P "a: sti\nb: cli\nc: push 0x202\nd: popfq\n"
				"e: push 3\nf: popfq\ng: push 0x40002\nh: popfq\n"
				"i: pushw 0x203\nj: popfw\nk: pushfq\nl: pop rax\n"
				"m: bt eax, 18\nn: jc q\n  ud2\nq: nop\np: hlt\n", NULL), 0,
		     "%s", r.err);
	if_trace(&r, got, sizeof(got));
	const char *expect =
		"a=1\nb=0\nc=0\nd=1\ne=1\nf=0\ng=0\nh=0\ni=0\nj=1\nk=1\nl=1\nm=1\nn=1\nq=1\np=1\n";
	cr_expect_str_eq(got, expect, "\n--- expected\n%s--- got\n%s(%s)", expect, got, r.st.msg);
	/* the JC was taken: CF from POPFW, AC kept */
	cr_expect_eq(r.recs[13].flags & RTIT_SIM_F_TAKEN, RTIT_SIM_F_TAKEN);
	st_free(&r);
}

/* An interrupt gate clears IF (SDM 6.12.1.3), IRET restores it from the
 * frame; the event record has the state after delivery. */
Test(sim_events, rflags_if_interrupt_and_iret)
{
	struct st_opts o = {
		.ev = { { RTIT_SIM_AT_INSN, RTIT_EV_EXT_INTERRUPT, 32, 2, NULL, 0, 0, 0 } },
		.nev = 1,
	};
	struct st_run r;
	char got[512];
	cr_assert_eq(st_run_asm(&r, P "a: sti\nb: nop\nc: nop\nd: hlt\nh_32: nop\nh2: iretq\n", &o), 0);
	if_trace(&r, got, sizeof(got));
	const char *expect = "a=1\nb=1\n! c=0\nh_32=0\nh2=1\nc=1\nd=1\n";
	cr_expect_str_eq(got, expect, "\n--- expected\n%s--- got\n%s(%s)", expect, got, r.st.msg);
	st_free(&r);
}

/* POPF at CPL 3 with IOPL 0 (SDM Vol. 2B POPF, protected mode): IF and
 * IOPL are not changed, the other flags are; CLI is then #GP (IOPL-
 * sensitive, SDM Vol. 2A CLI), and with no handler the run stops there. */
Test(sim_events, popf_cpl3_keeps_if_and_iopl)
{
	struct st_opts o = { .cpl = 3 };
	struct st_run r;
	cr_assert_eq(st_run_asm(&r, P "a: push 0x3203\nb: popfq\nc: jc e\nd: nop\ne: cli\nf: nop\n", &o),
		     0, "%s", r.err);
	cr_assert_geq(r.n, 3);
	cr_expect_eq(r.recs[1].flags & RTIT_SIM_F_IF, 0, "POPF at CPL 3 changed IF");
	cr_expect_eq(r.recs[2].flags & RTIT_SIM_F_TAKEN, RTIT_SIM_F_TAKEN, "CF not loaded");
	cr_expect_eq(r.st.stop, RTIT_SIM_STOP_FAULT, "%s", r.st.msg);
	cr_expect(strstr(r.st.msg, "vector 13") != NULL, "%s", r.st.msg);
	st_free(&r);
}
