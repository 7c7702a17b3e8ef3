/*
 * test_classes.c - each instruction class and exception kind on a tiny
 * program whose expected flow is written by hand (short form: see
 * sim_test.h).  Classes after RTIT Table 2 / Intel PT Table 33-1.
 */
#include <criterion/criterion.h>

#include "sim_test.h"

#define P ".intel_syntax noprefix\n.globl _start\n_start:\n"

struct ccase {
	const char *name;
	const char *src;
	const char *expect;
	int stop;
	int mode;
	int cpl;
};

static const struct ccase cases[] = {
	{ "cond: Jcc, LOOP, JRCXZ taken and not taken",
	  P "a: mov ecx, 2\n"
	  "b: loop b\n"
	  "c: jrcxz d\n"
	  "c2: nop\n"
	  "d: inc ecx\n"
	  "e: jrcxz f\n"
	  "e2: cmp ecx, 1\n"
	  "e3: je f\n"
	  "e4: nop\n"
	  "f: hlt\n",
	  "a other\n"
	  "b cond T -> b\n"
	  "b cond -> c\n"
	  "c cond T -> d\n"
	  "d other\n"
	  "e cond -> e2\n"
	  "e2 other\n"
	  "e3 cond T -> f\n"
	  "f hlt\n", RTIT_SIM_STOP_HALTED, 64, 0 },

	{ "cond with the target at the fall-through: taken from the flags",
	  P "a: xor eax, eax\n"
	  "b: je c\n"
	  "c: jne d\n"
	  "d: mov ecx, 2\n"
	  "e: loop f\n"
	  "f: loop g\n"
	  "g: hlt\n",
	  "a other\n"
	  "b cond T -> c\n"
	  "c cond -> d\n"
	  "d other\n"
	  "e cond T -> f\n"
	  "f cond -> g\n"
	  "g hlt\n", RTIT_SIM_STOP_HALTED, 64, 0 },

	{ "REP string instructions retire once, whatever the count",
	  P "a: lea rdi, [rip + q]\n"
	  "b: mov ecx, 4\n"
	  "c: rep stosb\n"
	  "d: xor ecx, ecx\n"
	  "e: rep stosq\n"
	  "f: mov ecx, 2\n"
	  "g: repe scasb\n"
	  "i: hlt\n"
	  "q: .fill 16, 1, 0\n",
	  "a other\n"
	  "b other\n"
	  "c other\n"
	  "d other\n"
	  "e other\n"
	  "f other\n"
	  "g other\n"
	  "i hlt\n", RTIT_SIM_STOP_HALTED, 64, 0 },

	{ "direct: JMP, CALL, zero-length CALL, RET, RET imm16",
	  P "a: jmp b\n"
	  "a2: nop\n"
	  "b: call f\n"
	  "c: call c2\n"
	  "c2: pop rax\n"
	  "d: push 0\n"
	  "d2: call g\n"
	  "d3: hlt\n"
	  "f: ret\n"
	  "g: ret 8\n",
	  "a jmp T -> b\n"
	  "b call T -> f\n"
	  "f ret T -> c\n"
	  "c call T Z -> c2\n"
	  "c2 other\n"
	  "d other\n"
	  "d2 call T -> g\n"
	  "g ret T -> d3\n"
	  "d3 hlt\n", RTIT_SIM_STOP_HALTED, 64, 0 },

	{ "indirect: CALL reg, JMP reg, CALL mem",
	  P "a: lea rax, [rip + f]\n"
	  "b: call rax\n"
	  "c: lea rbx, [rip + e]\n"
	  "d: jmp rbx\n"
	  "d2: nop\n"
	  "e: call qword ptr [rip + q]\n"
	  "e2: hlt\n"
	  "f: ret\n"
	  "q: .quad f\n",
	  "a other\n"
	  "b call-ind T -> f\n"
	  "f ret T -> c\n"
	  "c other\n"
	  "d jmp-ind T -> e\n"
	  "e call-ind T -> f\n"
	  "f ret T -> e2\n"
	  "e2 hlt\n", RTIT_SIM_STOP_HALTED, 64, 0 },

	{ "software interrupts: INT n, INT3, INT1, IRETQ",
	  P "a: int 0x80\n"
	  "b: int3\n"
	  "c: int1\n"
	  "d: hlt\n"
	  "h_128: iretq\n"
	  "h_3: iretq\n"
	  "h_1: iretq\n",
	  "a int T v128 -> h_128\n"
	  "h_128 iret T -> b\n"
	  "b int T v3 -> h_3\n"
	  "h_3 iret T -> c\n"
	  "c int T v1 -> h_1\n"
	  "h_1 iret T -> d\n"
	  "d hlt\n", RTIT_SIM_STOP_HALTED, 64, 0 },

	{ "SYSCALL/SYSRET via the guest's own WRMSR, CPL 0 -> 3 -> 0",
	  P "a: mov ecx, 0xC0000082\n"
	  "b: lea rax, [rip + k]\n"
	  "c: xor edx, edx\n"
	  "d: wrmsr\n"
	  "e: mov ecx, 0xC0000081\n"
	  "f: mov edx, 0x00230008\n"
	  "g: xor eax, eax\n"
	  "i: wrmsr\n"
	  "j: syscall\n"
	  "j2: int 0x80\n"
	  "k: sysretq\n"
	  "h_128: hlt\n",
	  "a other\n"
	  "b other\n"
	  "c other\n"
	  "d wrmsr\n"
	  "e other\n"
	  "f other\n"
	  "g other\n"
	  "i wrmsr\n"
	  "j syscall T -> k\n"
	  "k sysret T -> j2 cpl3\n"
	  "j2 int T v128 -> h_128\n"
	  "h_128 hlt\n", RTIT_SIM_STOP_HALTED, 64, 0 },

	{ "SYSENTER/SYSEXIT",
	  P "a: mov ecx, 0x174\n"
	  "b: mov eax, 0x10\n"
	  "c: xor edx, edx\n"
	  "d: wrmsr\n"
	  "e: mov ecx, 0x176\n"
	  "f: lea rax, [rip + k]\n"
	  "g: wrmsr\n"
	  "h: mov ecx, 0x175\n"
	  "i: mov eax, 0x7fff8000\n"
	  "j: wrmsr\n"
	  "l: lea rdx, [rip + m]\n"
	  "l2: mov rcx, rsp\n"
	  "n: sysenter\n"
	  "k: sysexitq\n"
	  "m: int 0x80\n"
	  "h_128: hlt\n",
	  "a other\n"
	  "b other\n"
	  "c other\n"
	  "d wrmsr\n"
	  "e other\n"
	  "f other\n"
	  "g wrmsr\n"
	  "h other\n"
	  "i other\n"
	  "j wrmsr\n"
	  "l other\n"
	  "l2 other\n"
	  "n sysenter T -> k\n"
	  "k sysexit T -> m cpl3\n"
	  "m int T v128 -> h_128\n"
	  "h_128 hlt\n", RTIT_SIM_STOP_HALTED, 64, 0 },

	{ "MOV to CR3 and CR0, MOV from CR3 and CR0",
	  P "a: mov rax, 0x5000\n"
	  "b: mov cr3, rax\n"
	  "c: mov rbx, cr3\n"
	  "d: mov rax, cr0\n"
	  "e: mov cr0, rax\n"
	  "f: hlt\n",
	  "a other\n"
	  "b mov-cr3 cr3=0x5000\n"
	  "c other cr3=0x5000\n"
	  "d other cr3=0x5000\n"
	  "e mov-cr0 cr3=0x5000\n"
	  "f hlt cr3=0x5000\n", RTIT_SIM_STOP_HALTED, 64, 0 },

	{ "WRMSR to an unmodelled MSR: #GP to the guest's handler",
	  P "a: mov ecx, 0x123\n"
	  "b: wrmsr\n"
	  "c: hlt\n"
	  "h_13: add rsp, 8\n"
	  "h2: add qword ptr [rsp], 2\n"
	  "h3: iretq\n",
	  "a other\n"
	  "! exception 13 fault b -> h_13\n"
	  "h_13 other\n"
	  "h2 other\n"
	  "h3 iret T -> c\n"
	  "c hlt\n", RTIT_SIM_STOP_HALTED, 64, 0 },

	{ "RDMSR of the modelled LSTAR",
	  P "a: mov ecx, 0xC0000082\n"
	  "b: mov eax, 0x1234\n"
	  "c: xor edx, edx\n"
	  "d: wrmsr\n"
	  "e: xor eax, eax\n"
	  "f: rdmsr\n"
	  "g: cmp eax, 0x1234\n"
	  "i: jne i\n"
	  "j: hlt\n",
	  "a other\n"
	  "b other\n"
	  "c other\n"
	  "d wrmsr\n"
	  "e other\n"
	  "f rdmsr\n"
	  "g other\n"
	  "i cond -> j\n"
	  "j hlt\n", RTIT_SIM_STOP_HALTED, 64, 0 },

	{ "faults from real execution: #DE, #PF, #UD with handlers",
	  P "a: xor edx, edx\n"
	  "b: div edx\n"
	  "c: mov dword ptr [0x5000], 1\n"
	  "d: ud2\n"
	  "e: hlt\n"
	  "h_0: add qword ptr [rsp], 2\n"
	  "x: iretq\n"
	  "h_14: add rsp, 8\n"
	  "y: add qword ptr [rsp], 11\n"
	  "z: iretq\n"
	  "h_6: add qword ptr [rsp], 2\n"
	  "q: iretq\n",
	  "a other\n"
	  "! exception 0 fault b -> h_0\n"
	  "h_0 other\n"
	  "x iret T -> c\n"
	  "! exception 14 fault c -> h_14\n"
	  "h_14 other\n"
	  "y other\n"
	  "z iret T -> d\n"
	  "! exception 6 fault d -> h_6\n"
	  "h_6 other\n"
	  "q iret T -> e\n"
	  "e hlt\n", RTIT_SIM_STOP_HALTED, 64, 0 },

	{ "#GP from real execution: non-canonical store, bad segment load",
	  P "a: mov rax, 0x8000000000000000\n"
	  "b: lea rbx, [rip + d]\n"
	  "c: mov qword ptr [rax], 1\n"
	  "d: mov cx, 0x1234\n"
	  "e: lea rbx, [rip + g]\n"
	  "f: mov ds, cx\n"
	  "g: hlt\n"
	  "h_13: add rsp, 8\n"
	  "x: mov [rsp], rbx\n"
	  "y: iretq\n"
	  "h_14: hlt\n",
	  "a other\n"
	  "b other\n"
	  "! exception 13 fault c -> h_13\n"
	  "h_13 other\n"
	  "x other\n"
	  "y iret T -> d\n"
	  "d other\n"
	  "e other\n"
	  "! exception 13 fault f -> h_13\n"
	  "h_13 other\n"
	  "x other\n"
	  "y iret T -> g\n"
	  "g hlt\n", RTIT_SIM_STOP_HALTED, 64, 0 },

	{ "repeated #DE and #GP from real execution stay #DE and #GP (no #DF)",
	  P "a: xor edx, edx\n"
	  "b: xor ecx, ecx\n"
	  "c: div ecx\n"
	  "d: div ecx\n"
	  "e: mov ax, 0x1234\n"
	  "f: mov ds, ax\n"
	  "g: mov ds, ax\n"
	  "i: hlt\n"
	  "h_0: add qword ptr [rsp], 2\n"
	  "x: iretq\n"
	  "h_13: add rsp, 8\n"
	  "y: add qword ptr [rsp], 2\n"
	  "z: iretq\n"
	  "h_8: hlt\n",
	  "a other\n"
	  "b other\n"
	  "! exception 0 fault c -> h_0\n"
	  "h_0 other\n"
	  "x iret T -> d\n"
	  "! exception 0 fault d -> h_0\n"
	  "h_0 other\n"
	  "x iret T -> e\n"
	  "e other\n"
	  "! exception 13 fault f -> h_13\n"
	  "h_13 other\n"
	  "y other\n"
	  "z iret T -> g\n"
	  "! exception 13 fault g -> h_13\n"
	  "h_13 other\n"
	  "y other\n"
	  "z iret T -> i\n"
	  "i hlt\n", RTIT_SIM_STOP_HALTED, 64, 0 },

	{ "#PF in the middle of a block: only the prefix retires",
	  P "a: mov eax, 1\n"
	  "b: add eax, 2\n"
	  "c: mov qword ptr [0x6000], rax\n"
	  "d: nop\n"
	  "e: hlt\n"
	  "h_14: hlt\n",
	  "a other\n"
	  "b other\n"
	  "! exception 14 fault c -> h_14\n"
	  "h_14 hlt\n", RTIT_SIM_STOP_HALTED, 64, 0 },

	{ "fetch from unmapped memory, no handler: run ends",
	  P "a: mov rax, 0x9000\n"
	  "b: jmp rax\n",
	  "a other\n"
	  "b jmp-ind T -> 0x9000\n", RTIT_SIM_STOP_FAULT, 64, 0 },

	{ "PTWRITE register and memory operands; RDTSC is not a branch",
	  P "a: mov rbx, 0x1234\n"
	  "b: ptwrite rbx\n"
	  "c: ptwrite dword ptr [rip + q]\n"
	  "d: rdtsc\n"
	  "e: hlt\n"
	  "q: .long 0x55\n",
	  "a other\n"
	  "b ptwrite val=0x1234\n"
	  "c ptwrite val=0x55\n"
	  "d other\n"
	  "e hlt\n", RTIT_SIM_STOP_HALTED, 64, 0 },

	{ "far JMP, far CALL, far RET",
	  P "a: jmp fword ptr [rip + p]\n"
	  "a2: nop\n"
	  "b: call fword ptr [rip + q]\n"
	  "c: hlt\n"
	  "f: retf\n"
	  "p: .long b\n .word 8\n"
	  "q: .long f\n .word 8\n",
	  "a far-jmp T -> b\n"
	  "b far-call T -> f\n"
	  "f far-ret T -> c\n"
	  "c hlt\n", RTIT_SIM_STOP_HALTED, 64, 0 },

	{ "HLT at CPL 3 is #GP; INT from CPL 3 enters CPL 0",
	  P "a: hlt\n"
	  "b: hlt\n"
	  "h_13: int 0x80\n"
	  "h_128: hlt\n",
	  "! exception 13 fault a -> h_13\n"
	  "h_13 int T v128 -> h_128\n"
	  "h_128 hlt\n", RTIT_SIM_STOP_HALTED, 64, 3 },

	/* SDM Vol. 2B MONITOR, MWAIT: #UD at CPL > 0; #GP(0) for MWAIT
	 * extensions other than ECX[0], MONITOR extensions (ECX != 0). */
	{ "MONITOR at CPL 3 is #UD; MWAIT with ECX = 2 is #GP",
	  P "a: monitor\n"
	  "b: nop\n"
	  "h_6: mov ecx, 2\n"
	  "c: mwait\n"
	  "h_13: hlt\n",
	  "! exception 6 fault a -> h_6\n"
	  "h_6 other\n"
	  "! exception 13 fault c -> h_13\n"
	  "h_13 hlt\n", RTIT_SIM_STOP_HALTED, 64, 3 },

	{ "MWAIT at CPL 3 is #UD; MONITOR with ECX = 1 is #GP",
	  P "a: mwait\n"
	  "b: nop\n"
	  "h_6: mov ecx, 1\n"
	  "c: monitor\n"
	  "h_13: hlt\n",
	  "! exception 6 fault a -> h_6\n"
	  "h_6 other\n"
	  "! exception 13 fault c -> h_13\n"
	  "h_13 hlt\n", RTIT_SIM_STOP_HALTED, 64, 3 },

	{ "32-bit: INTO taken, CALL/RET, IRETD",
	  ".intel_syntax noprefix\n.globl _start\n_start:\n"
	  "a: mov eax, 0x7fffffff\n"
	  "b: add eax, 1\n"
	  "c: into\n"
	  "d: call f\n"
	  "e: hlt\n"
	  "f: ret\n"
	  "h_4: iretd\n",
	  "a other\n"
	  "b other\n"
	  "c int T v4 -> h_4\n"
	  "h_4 iret T -> d\n"
	  "d call T -> f\n"
	  "f ret T -> e\n"
	  "e hlt\n", RTIT_SIM_STOP_HALTED, 32, 0 },
};

static const char *case_src(const char *name_prefix)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (!strncmp(cases[i].name, name_prefix, strlen(name_prefix)))
			return cases[i].src;
	cr_assert_fail("no case %s", name_prefix);
	return NULL;
}

Test(sim_classes, table)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct ccase *c = &cases[i];
		struct st_run r;
		struct st_opts o = { .mode = c->mode, .cpl = c->cpl };
		int rc = st_run_asm(&r, c->src, &o);
		cr_assert_eq(rc, 0, "%s: load failed: %s", c->name, r.err);
		cr_expect_str_eq(r.text, c->expect, "%s:\n--- expected\n%s--- got\n%s(stop %d: %s)",
				 c->name, c->expect, r.text, r.st.stop, r.st.msg);
		cr_expect_eq(r.st.stop, c->stop, "%s: stop %d, expected %d (%s)",
			     c->name, r.st.stop, c->stop, r.st.msg);
		st_free(&r);
	}
}

/* Every retired instruction counts once; the status agrees with the
 * records. */
Test(sim_classes, counts_agree)
{
	struct st_run r;
	cr_assert_eq(st_run_asm(&r, case_src("faults from real execution"), NULL), 0);
	size_t insns = 0, evs = 0;
	for (size_t i = 0; i < r.n; i++) {
		if (r.recs[i].kind == RTIT_SIM_INSN)
			insns++;
		else
			evs++;
	}
	cr_expect_eq(insns, r.st.insns);
	cr_expect_eq(evs, r.st.events);
	cr_expect_eq(evs, 3);
	st_free(&r);
}

Test(sim_classes, fault_messages)
{
	struct st_run r;
	cr_assert_eq(st_run_asm(&r, case_src("fetch from unmapped"), NULL), 0);
	cr_expect_eq(r.st.ip, 0x9000);
	cr_expect(strstr(r.st.msg, "unhandled #PF") != NULL, "%s", r.st.msg);
	cr_expect(strstr(r.st.msg, "fetch from unmapped address 0x9000") != NULL,
		  "%s", r.st.msg);
	cr_expect_lt(r.rc, 0);
	st_free(&r);

	cr_assert_eq(st_run_asm(&r, P "a: nop\nb: ud2\n", NULL), 0);
	cr_expect_eq(r.st.stop, RTIT_SIM_STOP_FAULT);
	cr_expect_eq(r.st.ip, ST_BASE + 1);
	cr_expect(strstr(r.st.msg, "unhandled #UD (vector 6) at 0x401001") != NULL,
		  "%s", r.st.msg);
	st_free(&r);

	/* a canonical address at the very top is not special */
	cr_assert_eq(st_run_asm(&r, P "a: mov rax, -1\nb: jmp rax\n", NULL), 0);
	cr_expect_eq(r.st.stop, RTIT_SIM_STOP_FAULT);
	cr_expect(strstr(r.st.msg, "fetch from unmapped address 0xffffffffffffffff") != NULL,
		  "%s", r.st.msg);
	st_free(&r);

	cr_assert_eq(st_run_asm(&r, P "a: mov ecx, 0x123\nb: wrmsr\n", NULL), 0);
	cr_expect_eq(r.st.stop, RTIT_SIM_STOP_FAULT);
	cr_expect(strstr(r.st.msg, "#GP") && strstr(r.st.msg, "MSR 0x123 refused"),
		  "%s", r.st.msg);
	st_free(&r);
}

Test(sim_classes, rdtsc_is_model_tsc)
{
	struct st_run r;
	struct rtit_sim_clock clk;
	memset(&clk, 0, sizeof(clk));
	for (int i = 0; i < RTIT_SIM_NUM_CLASSES; i++)
		clk.cpi[i] = 3;
	clk.tsc_ratio = 2;
	clk.core_ratio = 1;
	struct st_opts o = { .clock = &clk };
	cr_assert_eq(st_run_asm(&r, P "a: nop\nb: nop\nc: rdtsc\nd: ptwrite eax\ne: hlt\n",
				&o), 0);
	cr_assert_eq(r.n, 5);
	/* 3 cycles each, TSC at 2 ticks per core cycle */
	cr_expect_eq(r.recs[2].cycles, 9);
	cr_expect_eq(r.recs[2].tsc, 18);
	cr_expect_eq(r.recs[3].value, 18, "RDTSC saw %" PRIu64, r.recs[3].value);
	st_free(&r);
}

/* Nothing hangs: a handler that faults on its first instruction, a
 * handler address that is not mapped. */
Test(sim_classes, fault_loops_end)
{
	struct st_run r;
	cr_assert_eq(st_run_asm(&r, P "a: ud2\nh_6: ud2\n", NULL), 0);
	cr_expect_eq(r.st.stop, RTIT_SIM_STOP_FAULT);
	cr_expect(strstr(r.st.msg, "fault loop") != NULL, "%s", r.st.msg);
	st_free(&r);
	cr_assert_eq(st_run_asm(&r, P "a: ud2\n.set h_6, 0x9000\n.globl h_6\n"
				"h_14: jmp h_6\n", NULL), 0);
	cr_expect_eq(r.st.stop, RTIT_SIM_STOP_FAULT);
	st_free(&r);
}

/* RDRAND is deterministic: the same values on every run, CF = 1. */
Test(sim_classes, rdrand_deterministic)
{
	const char *src = P "a: rdrand rax\nb: ptwrite rax\nc: rdrand ebx\nd: setc cl\ne: hlt\n";
	struct st_run r1, r2;
	cr_assert_eq(st_run_asm(&r1, src, NULL), 0);
	cr_assert_eq(st_run_asm(&r2, src, NULL), 0);
	cr_assert_eq(r1.n, 5, "%s", r1.text);
	cr_expect_eq(r1.recs[1].value, r2.recs[1].value);
	cr_expect_neq(r1.recs[1].value, 0);
	cr_expect_eq(r1.recs[0].value, r1.recs[1].value);
	cr_expect_leq(r1.recs[2].value, 0xffffffffull);
	st_free(&r1);
	st_free(&r2);
}

struct pcase {
	const char *name;
	const char *src;
	const char *expect;
	int stop;
	int mode, cpl;
	uint64_t rsp0;
};

/* Privilege changes and their stack frames (SDM 6.12.1, 6.14.2). */
static const struct pcase pcases[] = {
	{ "far RET to CPL 3 pops SS:RSP too; INT back to CPL 0 on rsp0",
	  P "a: mov rax, rsp\n"
	  "b: push 0x2b\n"
	  "c: push rax\n"
	  "d: push 0x33\n"
	  "e: lea rbx, [rip + f]\n"
	  "e2: push rbx\n"
	  "e3: retfq\n"
	  "f: int 0x80\n"
	  "g: hlt\n"
	  "h_128: cmp rsp, 0x7fffc000 - 40\n"
	  "h2: jne h2\n"
	  "h3: hlt\n",
	  "a other\n"
	  "b other\n"
	  "c other\n"
	  "d other\n"
	  "e other\n"
	  "e2 other\n"
	  "e3 far-ret T -> f cpl3\n"
	  "f int T v128 -> h_128\n"
	  "h_128 other\n"
	  "h2 cond -> h3\n"
	  "h3 hlt\n", RTIT_SIM_STOP_HALTED, 64, 0, 0x7fffc000 },

	{ "32-bit: INT from CPL 3 pushes SS:ESP, IRETD returns to CPL 3",
	  ".intel_syntax noprefix\n.globl _start\n_start:\n"
	  "a: int 0x80\n"
	  "b: int 0x81\n"
	  "h_128: iretd\n"
	  "h_129: hlt\n",
	  "a int T v128 -> h_128\n"
	  "h_128 iret T -> b cpl3\n"
	  "b int T v129 -> h_129\n"
	  "h_129 hlt\n", RTIT_SIM_STOP_HALTED, 32, 3, 0x7fffc000 },

	{ "32-bit: direct far JMP ptr16:32, SYSENTER/SYSEXIT",
	  ".intel_syntax noprefix\n.globl _start\n_start:\n"
	  "a: jmp 0x08:b\n"
	  "b: mov ecx, 0x174\n"
	  "c: mov eax, 0x10\n"
	  "d: xor edx, edx\n"
	  "e: wrmsr\n"
	  "f: mov ecx, 0x176\n"
	  "g: lea eax, k\n"
	  "i: wrmsr\n"
	  "j: lea edx, m\n"
	  "l: mov ecx, esp\n"
	  "n: sysenter\n"
	  "k: sysexit\n"
	  "m: int 0x80\n"
	  "h_128: hlt\n",
	  "a far-jmp T -> b\n"
	  "b other\n"
	  "c other\n"
	  "d other\n"
	  "e wrmsr\n"
	  "f other\n"
	  "g other\n"
	  "i wrmsr\n"
	  "j other\n"
	  "l other\n"
	  "n sysenter T -> k\n"
	  "k sysexit T -> m cpl3\n"
	  "m int T v128 -> h_128\n"
	  "h_128 hlt\n", RTIT_SIM_STOP_HALTED, 32, 0, 0 },

	{ "IRET from an unmapped stack: #PF on the IRET; at CPL 0 the frame cannot be pushed: double fault",
	  P "a: mov rsp, 0x9000\n"
	  "b: iretq\n"
	  "h_14: cmp qword ptr [rsp + 8], 0x401007\n"
	  "c: jne c\n"
	  "d: mov rsp, 0x9000\n"
	  "e: retfq\n",
	  "a other cpl3\n"
	  "! exception 14 fault b -> h_14\n"
	  "h_14 other\n"
	  "c cond -> d\n"
	  "d other\n", RTIT_SIM_STOP_FAULT, 64, 3, 0x7fffc000 },

	{ "clearing CR0.PG in 64-bit mode is #GP; SYSCALL without LSTAR is #UD",
	  P "a: xor eax, eax\n"
	  "b: mov cr0, rax\n"
	  "c: syscall\n"
	  "d: hlt\n"
	  "h_13: add rsp, 8\n"
	  "x: add qword ptr [rsp], 3\n"
	  "y: iretq\n"
	  "h_6: add qword ptr [rsp], 2\n"
	  "z: iretq\n",
	  "a other\n"
	  "! exception 13 fault b -> h_13\n"
	  "h_13 other\n"
	  "x other\n"
	  "y iret T -> c\n"
	  "! exception 6 fault c -> h_6\n"
	  "h_6 other\n"
	  "z iret T -> d\n"
	  "d hlt\n", RTIT_SIM_STOP_HALTED, 64, 0, 0 },
};

Test(sim_classes, privilege)
{
	for (size_t i = 0; i < sizeof(pcases) / sizeof(pcases[0]); i++) {
		const struct pcase *c = &pcases[i];
		struct st_run r;
		struct st_opts o = { .mode = c->mode, .cpl = c->cpl, .rsp0 = c->rsp0 };
		int rc = st_run_asm(&r, c->src, &o);
		cr_assert_eq(rc, 0, "%s: load failed: %s", c->name, r.err);
		cr_expect_str_eq(r.text, c->expect, "%s:\n--- expected\n%s--- got\n%s(stop %d: %s)",
				 c->name, c->expect, r.text, r.st.stop, r.st.msg);
		cr_expect_eq(r.st.stop, c->stop, "%s: stop %d (%s)", c->name,
			     r.st.stop, r.st.msg);
		st_free(&r);
	}
}

/* A #PF names the faulting instruction exactly, whichever way Unicorn
 * performs the access (inline, helper, atomic), and the instructions
 * before it in the block retire. */
Test(sim_classes, precise_fault_ip_every_access_kind)
{
	static const char *const accesses[] = {
		"mov dword ptr [rdx], 1", "add [rdx], al", "bt dword ptr [rdx], eax",
		"push qword ptr [rdx]", "pop qword ptr [rdx]", "call qword ptr [rdx]",
		"jmp qword ptr [rdx]", "movsb", "lodsb", "stosq", "rep movsb", "cmpsb",
		"cmpxchg [rdx], ecx", "xchg [rdx], eax", "lock add [rdx], eax",
		"cmpxchg8b [rdx]", "cmpxchg16b [rdx]", "fnstcw [rdx]",
		"fld dword ptr [rdx]", "fstp dword ptr [rdx]", "fild dword ptr [rdx]",
		"fbstp [rdx]", "fxsave [rdx]", "movdqu [rdx], xmm0",
		"movdqu xmm0, [rdx]", "movss xmm0, [rdx]", "movq [rdx], mm0",
		"ldmxcsr [rdx]", "lgdt [rdx]",
	};
	const char *expect =
		"a other\nb other\nc other\nd other\ne other\n"
		"! exception 14 fault x -> h_14\nh_14 hlt\n";
	for (size_t i = 0; i < sizeof(accesses) / sizeof(accesses[0]); i++) {
		char src[512];
		snprintf(src, sizeof(src), P
			 "a: mov rdx, 0x5000\nb: mov rsi, 0x5000\nc: mov rdi, 0x5000\n"
			 "d: mov rcx, 3\ne: add rax, 1\nx: %s\nhlt\nh_14: hlt\n",
			 accesses[i]);
		struct st_run r;
		cr_assert_eq(st_run_asm(&r, src, NULL), 0, "%s: %s", accesses[i], r.err);
		cr_expect_str_eq(r.text, expect, "%s:\n%s", accesses[i], r.text);
		st_free(&r);
	}
}

/* Privileged and IOPL-sensitive instructions: #GP at CPL 3 (SDM 2.8,
 * 19.5); at CPL 0 they run (the model keeps CR0/DR, ignores descriptor
 * tables) without changing Unicorn's own state. */
Test(sim_classes, privileged_at_cpl3)
{
	static const char *const insns[] = {
		"cli", "sti", "in al, dx", "out dx, al", "insb", "outsb",
		"lgdt [rip + q]", "lidt [rip + q]", "lldt ax", "ltr ax", "lmsw ax",
		"clts", "mov dr7, rax", "mov rax, dr6", "wbinvd", "invd",
		"invlpg [rax]", "swapgs", "xsetbv", "mov cr3, rax", "wrmsr", "rdmsr",
		"hlt", "sysretq",
	};
	const char *expect =
		"a other cpl3\n"
		"! exception 13 fault x -> h_13\n"
		"h_13 other\n"
		"h2 other\n"
		"h3 iret T -> c cpl3\n"
		"c int T v128 -> h_128\n"
		"h_128 hlt\n";
	for (size_t i = 0; i < sizeof(insns) / sizeof(insns[0]); i++) {
		char src[512];
		snprintf(src, sizeof(src), P
			 "a: lea rbx, [rip + c]\nx: %s\nc: int 0x80\n"
			 "h_13: add rsp, 8\nh2: mov [rsp], rbx\nh3: iretq\n"
			 "h_128: hlt\nq: .fill 16, 1, 0\n", insns[i]);
		struct st_run r;
		struct st_opts o = { .cpl = 3 };
		cr_assert_eq(st_run_asm(&r, src, &o), 0, "%s: %s", insns[i], r.err);
		cr_expect_str_eq(r.text, expect, "%s:\n%s(%s)", insns[i], r.text, r.st.msg);
		st_free(&r);
	}
	/* at CPL 0 */
	struct st_run r;
	cr_assert_eq(st_run_asm(&r, P
		"a: lgdt [rip + q]\nb: lidt [rip + q]\nc: clts\nd: mov rax, 0x400\n"
		"e: mov dr7, rax\nf: mov rbx, dr7\ng: cmp rbx, rax\ni: jne i\nj: hlt\n"
		"q: .fill 16, 1, 0\n", NULL), 0);
	cr_expect_str_eq(r.text, "a other\nb other\nc other\nd other\ne other\nf other\n"
			 "g other\ni cond -> j\nj hlt\n", "%s", r.text);
	st_free(&r);
}
