/*
 * test_rtm.c - RTM (Intel TSX) in the simulator, against SDM Vol. 2
 * XBEGIN/XEND/XABORT/XTEST and Vol. 1 chapter 16: the records (XBEGIN and
 * XEND with the TX flag on the outermost, the TSX_ABORT event from the
 * aborting point to the fallback), the rollback of registers and memory,
 * the nesting depth and its limit, the abort status in EAX (Table 16-1),
 * #GP for XEND outside a transaction, exceptions and interrupts inside
 * one, the capacity abort, and #UD without RTM.  Expected values are
 * derived from the manual's pseudocode, not from a run.
 */
#include <criterion/criterion.h>
#include <unicorn/unicorn.h>

#include "sim_test.h"

#define P ".intel_syntax noprefix\n.globl _start\n_start:\n"

struct rtm_run {
	struct st_run r;
	uint64_t rax, rbx, rcx, rdx, rsi;
	uint64_t buf[4];	/* the quadwords at label "x" */
};

struct rtm_opts {
	bool off;		/* RTM off (a CPU without TSX) */
	uint32_t lines;		/* write-set capacity, 0 = default */
	int mode;
	struct st_event ev[4];
	int nev;
};

static void read_state(struct rtit_sim *sim, void *ctx)
{
	struct rtm_run *t = ctx;
	static const int r64[] = { UC_X86_REG_RAX, UC_X86_REG_RBX, UC_X86_REG_RCX,
				   UC_X86_REG_RDX, UC_X86_REG_RSI };
	static const int r32[] = { UC_X86_REG_EAX, UC_X86_REG_EBX, UC_X86_REG_ECX,
				   UC_X86_REG_EDX, UC_X86_REG_ESI };
	uint64_t *out[] = { &t->rax, &t->rbx, &t->rcx, &t->rdx, &t->rsi };
	uint64_t mode = 0, x;
	uc_query(rtit_sim_uc(sim), UC_QUERY_MODE, &mode);
	for (int i = 0; i < 5; i++)
		rtit_sim_get_reg(sim, (mode & UC_MODE_64) ? r64[i] : r32[i], out[i]);
	if (rtit_sim_symbol(sim, "x", &x) == 0)
		uc_mem_read(rtit_sim_uc(sim), x, t->buf, sizeof(t->buf));
}

/* Runs src (labels as in sim_test.h; data at "x") with RTM on; reads
 * the registers and x[0..3] after. */
static void rtm_run(struct rtm_run *t, const char *src, const struct rtm_opts *o)
{
	static const struct rtm_opts none;
	struct st_opts so = { .budget = 10000, .after = read_state, .after_ctx = t };

	if (!o)
		o = &none;
	memset(t, 0, sizeof(*t));
	so.mode = o->mode;
	so.rtm = !o->off;
	so.rtm_lines = o->lines;
	memcpy(so.ev, o->ev, sizeof(o->ev));
	so.nev = o->nev;
	cr_assert_eq(st_run_asm(&t->r, src, &so), 0, "%s", t->r.err);
}

#define find st_find
#define EXPECT_TEXT ST_EXPECT_TEXT

/* A committed transaction: its stores stay, XTEST says ZF=0 inside and
 * ZF=1 outside; XBEGIN and the outermost XEND carry the TX flag. */
Test(sim_rtm, commit_keeps_stores)
{
	struct rtm_run t;
	rtm_run(&t, P
		"a: mov qword ptr [rip + x], 1\n"
		"b: xbegin fb\n"
		"c: mov qword ptr [rip + x], 2\n"
		"c2: xtest\n"
		"d: setz bl\n"
		"d2: xend\n"
		"e: xtest\n"
		"f: setz cl\n"
		"g: hlt\n"
		"fb: hlt\n"
		".p2align 6\nx: .quad 0, 0, 0, 0\n", NULL);
	EXPECT_TEXT(&t,
		"a other\n"
		"b xbegin -> c\n"
		"c other\n"
		"c2 other\n"
		"d other\n"
		"d2 xend -> e\n"
		"e other\n"
		"f other\n"
		"g hlt\n");
	cr_expect_eq(t.buf[0], 2);
	cr_expect_eq(t.rbx & 0xff, 0, "XTEST inside: ZF=0");
	cr_expect_eq(t.rcx & 0xff, 1, "XTEST outside: ZF=1");
	const struct rtit_sim_rec *xb = find(&t.r, RTIT_SIM_INSN, RTIT_IC_XBEGIN, 0);
	const struct rtit_sim_rec *xe = find(&t.r, RTIT_SIM_INSN, RTIT_IC_XEND, 0);
	cr_assert(xb && xe);
	cr_expect(xb->flags & RTIT_SIM_F_TX);
	cr_expect(xe->flags & RTIT_SIM_F_TX);
	cr_expect_eq(xb->vector, 1);
	cr_expect_eq(xe->vector, 0);
	cr_expect(!(xb->flags & RTIT_SIM_F_TAKEN), "XBEGIN is not a branch");
	st_free(&t.r);
}

/* XABORT imm8: registers and memory (two lines, one store crossing a line
 * boundary) as at XBEGIN, EAX = imm8 << 24 | bit 0 (XABORT pseudocode,
 * Table 16-1), RAX bits 63:32 clear, execution at the fallback. */
Test(sim_rtm, xabort_rolls_back_registers_and_memory)
{
	struct rtm_run t;
	rtm_run(&t, P
		"a: mov rbx, 0x1111\n"
		"a2: mov rax, -1\n"
		"b: xbegin fb\n"
		"c: mov rbx, 0x2222\n"
		"c2: mov qword ptr [rip + x], 5\n"
		"d: mov dword ptr [rip + x + 60], 0x7777\n"	/* lines 0 and 1 */
		"d2: push rbx\n"
		"e: xabort 0x42\n"
		"f: hlt\n"
		"fb: mov rsi, rsp\n"
		"g: hlt\n"
		".p2align 6\nx: .quad 9, 0, 0, 0, 0, 0, 0, 0x123456789abcdef0\n", NULL);
	EXPECT_TEXT(&t,
		"a other\n"
		"a2 other\n"
		"b xbegin -> c\n"
		"c other\n"
		"c2 other\n"
		"d other\n"
		"d2 other\n"
		"! tsx-abort e -> fb\n"
		"fb other\n"
		"g hlt\n");
	cr_expect_eq(t.rbx, 0x1111);
	cr_expect_eq(t.rax, 0x42000001ull, "rax 0x%" PRIx64, t.rax);
	cr_expect_eq(t.rsi, 0x80000000ull, "RSP restored: 0x%" PRIx64, t.rsi);
	cr_expect_eq(t.buf[0], 9);
	const struct rtit_sim_rec *ab = find(&t.r, RTIT_SIM_EVENT, RTIT_EV_TSX_ABORT, 0);
	cr_assert(ab);
	cr_expect_eq(ab->value, 0x42000001ull);
	cr_expect_eq(ab->vector, 1);
	st_free(&t.r);
}

/* Nesting: inner XBEGIN/XEND change nothing (no TX flag), the outermost
 * XEND commits; XABORT inside a nested one adds NESTED (bit 5); the
 * XBEGIN at MAX_RTM_NEST_COUNT (7) aborts (to the outermost fallback). */
Test(sim_rtm, nesting)
{
	struct rtm_run t;
	rtm_run(&t, P
		"a: xbegin fb\n"
		"b: xbegin fb2\n"
		"c: xend\n"
		"d: xend\n"
		"e: xbegin fb\n"
		"f: xbegin fb2\n"
		"g: xabort 0xff\n"
		"fb2: hlt\n"
		"fb: hlt\n", NULL);
	EXPECT_TEXT(&t,
		"a xbegin -> b\n"
		"b xbegin -> c\n"
		"c xend -> d\n"
		"d xend -> e\n"
		"e xbegin -> f\n"
		"f xbegin -> g\n"
		"! tsx-abort g -> fb\n"
		"fb hlt\n");
	uint8_t fl[6], dep[6];
	for (int i = 0; i < 6; i++) {
		fl[i] = t.r.recs[i].flags & RTIT_SIM_F_TX;
		dep[i] = t.r.recs[i].vector;
	}
	cr_expect(fl[0] && !fl[1] && !fl[2] && fl[3] && fl[4] && !fl[5]);
	cr_expect(dep[0] == 1 && dep[1] == 2 && dep[2] == 1 && dep[3] == 0 && dep[4] == 1 &&
		  dep[5] == 2);
	cr_expect_eq(t.rax, 0xff000021ull, "rax 0x%" PRIx64, t.rax);
	st_free(&t.r);

	/* depth 7 is the limit: the eighth XBEGIN aborts, NESTED set */
	rtm_run(&t, P
		"a: xbegin fb\n xbegin fb\n xbegin fb\n xbegin fb\n xbegin fb\n xbegin fb\n"
		"b: xbegin fb\n"
		"c: xbegin fb\n"
		"d: hlt\n"
		"fb: hlt\n", NULL);
	const struct rtit_sim_rec *ab = find(&t.r, RTIT_SIM_EVENT, RTIT_EV_TSX_ABORT, 0);
	cr_assert(ab, "%s", t.r.text);
	cr_expect_eq(t.r.n, 9, "%s", t.r.text);
	cr_expect_eq(t.r.recs[6].vector, 7);
	cr_expect_eq(ab->ip, t.r.recs[6].next_ip, "aborts at the eighth XBEGIN");
	cr_expect_eq(ab->vector, 7);
	cr_expect_eq(t.rax, RTIT_RTM_ABORT_NESTED, "rax 0x%" PRIx64, t.rax);
	st_free(&t.r);
}

/* XEND outside a transaction: #GP(0) (XEND "Protected Mode Exceptions");
 * XABORT outside: a NOP; XTEST outside: ZF=1. */
Test(sim_rtm, outside_a_transaction)
{
	struct rtm_run t;
	rtm_run(&t, P
		"a: mov eax, 3\n"
		"b: xabort 1\n"
		"c: xend\n"
		"d: hlt\n"
		"h_13: hlt\n", NULL);
	EXPECT_TEXT(&t,
		"a other\n"
		"b other\n"
		"! exception 13 fault c -> h_13\n"
		"h_13 hlt\n");
	cr_expect_eq(t.rax, 3, "XABORT outside changes nothing");
	st_free(&t.r);
}

/* An exception inside a transaction aborts it and is not delivered
 * (SDM Vol. 1 16.3.8.2): #UD, #DE give status 0, INT3 (#BP) DEBUG (bit
 * 4); the stores are undone. */
Test(sim_rtm, exception_inside_aborts)
{
	static const char *const body[] = { "ud2", "div ecx", "int3" };
	static const uint32_t status[] = { 0, 0, RTIT_RTM_ABORT_DEBUG };
	for (int k = 0; k < 3; k++) {
		char src[1024];
		snprintf(src, sizeof(src), P
			 "a: xor ecx, ecx\n"
			 "b: xbegin fb\n"
			 "c: mov qword ptr [rip + x], 8\n"
			 "d: %s\n"
			 "e: hlt\n"
			 "fb: hlt\n"
			 "h_0: hlt\nh_3: hlt\nh_6: hlt\n"
			 ".p2align 6\nx: .quad 1, 0, 0, 0\n", body[k]);
		struct rtm_run t;
		rtm_run(&t, src, NULL);
		EXPECT_TEXT(&t,
			"a other\n"
			"b xbegin -> c\n"
			"c other\n"
			"! tsx-abort d -> fb\n"
			"fb hlt\n");
		cr_expect_eq(t.rax, status[k], "%s: rax 0x%" PRIx64, body[k], t.rax);
		cr_expect_eq(t.buf[0], 1, "%s: store undone", body[k]);
		st_free(&t.r);
	}
}

/* An interrupt (IF=1), NMI, SMI or VM exit inside a transaction aborts it
 * at the next instruction; the event is then taken at the fallback.  The
 * status says a retry may succeed (D42).  An interrupt held by IF=0
 * aborts nothing. */
Test(sim_rtm, interrupt_inside_aborts_then_is_taken_at_the_fallback)
{
	static const char *prog =
		P "a: sti\n"
		"b: xbegin fb\n"
		"c: nop\n"
		"d: nop\n"
		"e: xend\n"
		"f: hlt\n"
		"fb: nop\n"
		"g: hlt\n"
		"h_32: iretq\n"
		"h_2: iretq\n";
	/* Each event at the 4th instruction (d): the abort first, then the
	 * event at the fallback.  An external MSR write stands for a WRMSR
	 * on this core, which aborts (16.3.8.1, D61).  The status is RETRY
	 * for an interrupt (and the MSR write, as for the interrupt that
	 * would reach its handler). */
	static const struct {
		struct st_event ev;
		const char *taken;	/* the event's lines at the fallback */
		bool retry;
	} rows[] = {
		{ { RTIT_SIM_AT_INSN, RTIT_EV_EXT_INTERRUPT, 32, 3, NULL, 0, 0, 0 },
		  "! interrupt 32 fb -> h_32\nh_32 iret T -> fb\n", true },
		{ { RTIT_SIM_AT_INSN, RTIT_EV_SMI, 0, 3, NULL, 0, 0, 10 },
		  "! smi fb -> fb\n! rsm fb -> fb\n", false },
		{ { RTIT_SIM_AT_INSN, RTIT_EV_MSR_WRITE_EXTERNAL, 0, 3, NULL, 0x2001, 0x570, 0 },
		  "! msr-write fb -> fb\n", true },
	};
	struct rtm_opts o = { .nev = 1 };
	struct rtm_run t;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char expect[256];
		o.ev[0] = rows[i].ev;
		rtm_run(&t, prog, &o);
		snprintf(expect, sizeof(expect),
			 "a other\nb xbegin -> c\nc other\n! tsx-abort d -> fb\n%sfb other\ng hlt\n",
			 rows[i].taken);
		EXPECT_TEXT(&t, expect);
		if (rows[i].retry)
			cr_expect_eq(t.rax, RTIT_RTM_ABORT_RETRY, "row %zu: rax 0x%" PRIx64, i, t.rax);
		st_free(&t.r);
	}

	o.ev[0] = (struct st_event){ RTIT_SIM_AT_INSN, RTIT_EV_NMI, 0, 3, NULL, 0, 0, 0 };
	rtm_run(&t, prog, &o);
	cr_expect(strstr(t.r.text, "! tsx-abort d -> fb\n! nmi fb -> h_2\n"), "%s", t.r.text);
	st_free(&t.r);

	/* An external MSR write stands for a WRMSR on this core, which
	 * aborts (16.3.8.1, D61): the abort first, the write at the
	 * fallback; the abort status as for an interrupt */
	o.ev[0] = (struct st_event){ RTIT_SIM_AT_INSN, RTIT_EV_MSR_WRITE_EXTERNAL, 0, 3, NULL,
				     0x2001, 0x570, 0 };
	rtm_run(&t, prog, &o);
	EXPECT_TEXT(&t,
		"a other\n"
		"b xbegin -> c\n"
		"c other\n"
		"! tsx-abort d -> fb\n"
		"! msr-write fb -> fb\n"
		"fb other\n"
		"g hlt\n");
	cr_expect_eq(t.rax, RTIT_RTM_ABORT_RETRY, "rax 0x%" PRIx64, t.rax);
	st_free(&t.r);

	/* IF = 0: the interrupt waits; the transaction commits */
	o.ev[0] = (struct st_event){ RTIT_SIM_AT_INSN, RTIT_EV_EXT_INTERRUPT, 32, 3, NULL, 0, 0, 0 };
	rtm_run(&t, P "a: cli\nb: xbegin fb\nc: nop\nd: nop\ne: xend\nf: hlt\nfb: hlt\nh_32: iretq\n",
		&o);
	EXPECT_TEXT(&t,
		"a other\n"
		"b xbegin -> c\n"
		"c other\n"
		"d other\n"
		"e xend -> f\n"
		"f hlt\n");
	st_free(&t.r);
}

/* The scenario's asynchronous abort: at the instruction count, with the
 * status given; outside a transaction nothing happens. */
Test(sim_rtm, injected_abort)
{
	struct rtm_opts o = {
		.ev = { { RTIT_SIM_AT_INSN, RTIT_EV_TSX_ABORT, 0, 1, NULL, 0x6, 0, 0 },
			{ RTIT_SIM_AT_INSN, RTIT_EV_TSX_ABORT, 0, 3, NULL, 0x6, 0, 0 } },
		.nev = 2,
	};
	struct rtm_run t;
	rtm_run(&t, P "a: nop\nb: xbegin fb\nc: nop\nd: nop\ne: xend\nf: hlt\nfb: hlt\n", &o);
	EXPECT_TEXT(&t,
		"a other\n"
		"b xbegin -> c\n"
		"c other\n"
		"! tsx-abort d -> fb\n"
		"fb hlt\n");
	cr_expect_eq(t.rax, 0x6);
	st_free(&t.r);
}

/* A write set beyond the capacity aborts with CAPACITY (bit 3) at the
 * store that needed one line too many; every store is undone. */
Test(sim_rtm, capacity_abort)
{
	struct rtm_opts o = { .lines = 4 };
	struct rtm_run t;
	rtm_run(&t, P
		"a: lea rdi, [rip + x]\n"
		"b: xbegin fb\n"
		"c: mov qword ptr [rdi], 1\n"
		"c2: mov qword ptr [rdi + 8], 1\n"	/* the same line */
		"d: mov qword ptr [rdi + 64], 2\n"
		"d2: mov qword ptr [rdi + 128], 3\n"
		"e: mov qword ptr [rdi + 192], 4\n"
		"f: mov qword ptr [rdi + 256], 5\n"	/* the fifth line */
		"g: mov qword ptr [rdi + 320], 6\n"
		"h: xend\n"
		"i: hlt\n"
		"fb: hlt\n"
		".p2align 6\nx: .fill 48, 8, 0\n", &o);
	EXPECT_TEXT(&t,
		"a other\n"
		"b xbegin -> c\n"
		"c other\n"
		"c2 other\n"
		"d other\n"
		"d2 other\n"
		"e other\n"
		"! tsx-abort f -> fb\n"
		"fb hlt\n");
	cr_expect_eq(t.rax, RTIT_RTM_ABORT_CAPACITY, "rax 0x%" PRIx64, t.rax);
	cr_expect_eq(t.buf[0], 0);
	st_free(&t.r);
}

/* CPUID and HLT abort (16.3.8.1); RDTSC does not. */
Test(sim_rtm, instructions_that_abort)
{
	struct rtm_run t;
	rtm_run(&t, P "a: xbegin fb\nb: rdtsc\nc: cpuid\nd: hlt\nfb: hlt\n", NULL);
	EXPECT_TEXT(&t,
		"a xbegin -> b\n"
		"b other\n"
		"! tsx-abort c -> fb\n"
		"fb hlt\n");
	st_free(&t.r);
	rtm_run(&t, P "a: xbegin fb\nb: hlt\nfb: cpuid\nc: hlt\n", NULL);
	EXPECT_TEXT(&t,
		"a xbegin -> b\n"
		"! tsx-abort b -> fb\n"
		"fb other\n"
		"c hlt\n");
	st_free(&t.r);
}

/* Without RTM (Silvermont, the RTIT dialect) every RTM instruction is #UD
 * (CPUID.07H:EBX.RTM = 0); Unicorn alone would run XBEGIN as MOV EAX. */
Test(sim_rtm, off_is_ud)
{
	static const char *const insn[] = { "xbegin fb", "xend", "xabort 1", "xtest" };
	for (int k = 0; k < 4; k++) {
		char src[512];
		snprintf(src, sizeof(src), P "a: mov eax, 9\nb: %s\nc: hlt\nfb: hlt\nh_6: hlt\n",
			 insn[k]);
		struct rtm_opts o = { .off = true };
		struct rtm_run t;
		rtm_run(&t, src, &o);
		EXPECT_TEXT(&t,
			"a other\n"
			"! exception 6 fault b -> h_6\n"
			"h_6 hlt\n");
		cr_expect_eq(t.rax, 9, "%s", insn[k]);
		st_free(&t.r);
	}
}

/* 32-bit mode: the same, with the fallback an EIP. */
Test(sim_rtm, mode32)
{
	struct rtm_opts o = { .mode = 32 };
	struct rtm_run t;
	rtm_run(&t, ".intel_syntax noprefix\n.globl _start\n_start:\n"
		"a: mov ebx, 1\n"
		"b: xbegin fb\n"
		"c: mov ebx, 2\n"
		"d: xabort 7\n"
		"fb: hlt\n", &o);
	EXPECT_TEXT(&t,
		"a other\n"
		"b xbegin -> c\n"
		"c other\n"
		"! tsx-abort d -> fb\n"
		"fb hlt\n");
	cr_expect_eq(t.rbx & 0xffffffff, 1);
	cr_expect_eq(t.rax & 0xffffffff, 0x07000001u);
	st_free(&t.r);
}
