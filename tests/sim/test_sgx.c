/*
 * test_sgx.c - SGX in the simulator, against SDM Vol. 3D: ENCLU's EENTER,
 * ERESUME and EEXIT (their register outputs: RCX = the IP after the
 * ENCLU, RAX = TCS.CSSA after EENTER; the entry at BASEADDR + OENTRY; the
 * state ERESUME restores), the AEX of an NMI, an exception, an SMI inside
 * an enclave (chapter 40: the SSA frame, the synthetic state of Table
 * 40-1, the event delivered as from the AEP), the #UD and #GP(0) cases of
 * ENCLU's exception lists, and the scenario's enclave line.  Expected
 * values are derived from the manual, not from a run.
 */
#include <criterion/criterion.h>
#include <unicorn/unicorn.h>

#include "rtit/scenario.h"
#include "sim_test.h"

#define P ".intel_syntax noprefix\n.globl _start\n_start:\n"
/* The enclave's pages (ELRANGE = the code page at "encl" and the TCS
 * page), then a kernel stack page; mapped by the program itself. */
#define ENCLAVE_TAIL ".p2align 12\ntcs: .quad 0\n.p2align 12\nx: .quad 0, 0, 0, 0, 0, 0, 0, 0\n" \
		     ".p2align 12\n"
#define RSP0 0x7fff8000ull

enum { T_RAX, T_RBX, T_RCX, T_RDX, T_RSI, T_RDI, T_RBP, T_RSP, T_R8, T_R12, T_R13, T_R15,
       T_FLAGS, R_NUM_T };

struct sgx_run {
	struct st_run r;
	uint64_t reg[R_NUM_T];
	uint64_t frame[5];	/* the interrupt frame at RSP */
	uint64_t x[8];
	uint64_t sym_tcs, sym_aep, sym_c, sym_e4;
};

static void read_state(struct rtit_sim *sim, void *ctx)
{
	struct sgx_run *t = ctx;
	static const int id[R_NUM_T] = {
		UC_X86_REG_RAX, UC_X86_REG_RBX, UC_X86_REG_RCX, UC_X86_REG_RDX, UC_X86_REG_RSI,
		UC_X86_REG_RDI, UC_X86_REG_RBP, UC_X86_REG_RSP, UC_X86_REG_R8, UC_X86_REG_R12,
		UC_X86_REG_R13, UC_X86_REG_R15, UC_X86_REG_EFLAGS
	};
	uint64_t a;
	for (int i = 0; i < R_NUM_T; i++)
		rtit_sim_get_reg(sim, id[i], &t->reg[i]);
	uc_mem_read(rtit_sim_uc(sim), t->reg[T_RSP], t->frame, sizeof(t->frame));
	if (rtit_sim_symbol(sim, "x", &a) == 0)
		uc_mem_read(rtit_sim_uc(sim), a, t->x, sizeof(t->x));
	rtit_sim_symbol(sim, "tcs", &t->sym_tcs);
	rtit_sim_symbol(sim, "aep", &t->sym_aep);
	rtit_sim_symbol(sim, "c", &t->sym_c);
	rtit_sim_symbol(sim, "e4", &t->sym_e4);
}

struct sgx_opts {
	bool off;		/* SGX off: a CPU without it */
	int cpl;		/* 3 unless cpl0 */
	bool cpl0;
	bool debug;
	uint32_t nssa;
	struct st_event ev[2];
	int nev;
};

static void sgx_run(struct sgx_run *t, const char *src, const struct sgx_opts *o)
{
	static const struct sgx_opts none = { .debug = true };
	struct st_opts so = { .budget = 10000, .after = read_state, .after_ctx = t,
			      .end_sym = "end", .rsp0 = RSP0 };

	if (!o)
		o = &none;
	memset(t, 0, sizeof(*t));
	so.cpl = o->cpl0 ? 0 : 3;
	so.sgx = !o->off;
	if (!o->off) {
		so.encl[0] = (struct st_encl){ .base = "encl", .tcs = "tcs", .size = 0x2000,
					       .oentry = 0, .nssa = o->nssa ? o->nssa : 1,
					       .debug = o->debug };
		so.nencl = 1;
	}
	memcpy(so.ev, o->ev, sizeof(o->ev));
	so.nev = o->nev;
	cr_assert_eq(st_run_asm(&t->r, src, &so), 0, "%s", t->r.err);
}

#define find st_find
#define EXPECT_TEXT ST_EXPECT_TEXT

/* EENTER (EAX = 2, RBX = TCS, RCX = AEP): RIP = BASEADDR + OENTRY, RCX =
 * the IP after the ENCLU, RAX = TCS.CSSA (0); EEXIT (EAX = 4, RBX =
 * target): RIP = RBX, RCX = the IP after the EEXIT.  Records: ENCLU is a
 * taken far transfer with the leaf in value and 1 (debug) in vector; the
 * records inside carry the ENCLAVE flag. */
Test(sim_sgx, eenter_eexit)
{
	struct sgx_run t;
	sgx_run(&t, P
		"a: mov eax, 2\n"
		"a2: lea rbx, [rip + tcs]\n"
		"b: lea rcx, [rip + aep]\n"
		"b2: enclu\n"
		"c: nop\n"
		"end: nop\n"
		"aep: nop\n"
		".p2align 12\n"
		"encl: mov r12, rcx\n"
		"d: mov r13, rax\n"
		"d2: lea rbx, [rip + c]\n"
		"d3: mov eax, 4\n"
		"e4: enclu\n"
		ENCLAVE_TAIL, NULL);
	EXPECT_TEXT(&t,
		"a other cpl3\n"
		"a2 other cpl3\n"
		"b other cpl3\n"
		"b2 enclu T -> encl cpl3 encl\n"
		"encl other cpl3 encl\n"
		"d other cpl3 encl\n"
		"d2 other cpl3 encl\n"
		"d3 other cpl3 encl\n"
		"e4 enclu T -> c cpl3\n"
		"c other cpl3\n");
	cr_expect_eq(t.reg[T_R12], t.sym_c, "EENTER: RCX = the IP after it");
	cr_expect_eq(t.reg[T_R13], 0, "EENTER: RAX = TCS.CSSA");
	cr_expect_eq(t.reg[T_RCX], t.sym_e4 + 3, "EEXIT: RCX = the IP after it");
	cr_expect_eq(t.reg[T_RAX], 4, "EEXIT leaves RAX");
	const struct rtit_sim_rec *en = find(&t.r, RTIT_SIM_INSN, RTIT_IC_ENCLU, 0);
	const struct rtit_sim_rec *ex = find(&t.r, RTIT_SIM_INSN, RTIT_IC_ENCLU, 1);
	cr_assert(en && ex);
	cr_expect_eq(en->value, RTIT_SGX_EENTER);
	cr_expect_eq(en->vector, 1, "a debug enclave");
	cr_expect_eq(ex->value, RTIT_SGX_EEXIT);
	cr_expect_eq(en->len, 3, "ENCLU is 0F 01 D7");
	st_free(&t.r);
}

/* An opt-out (production) enclave: the same flow, vector 0. */
Test(sim_sgx, optout_enclave_says_so)
{
	struct sgx_run t;
	struct sgx_opts o = { .debug = false };
	sgx_run(&t, P
		"a: mov eax, 2\n"
		"a2: lea rbx, [rip + tcs]\n"
		"b: lea rcx, [rip + aep]\n"
		"b2: enclu\n"
		"c: nop\n"
		"end: nop\n"
		"aep: nop\n"
		".p2align 12\n"
		"encl: lea rbx, [rip + c]\n"
		"d: mov eax, 4\n"
		"e4: enclu\n"
		ENCLAVE_TAIL, &o);
	EXPECT_TEXT(&t,
		"a other cpl3\n"
		"a2 other cpl3\n"
		"b other cpl3\n"
		"b2 enclu T -> encl cpl3 encl\n"
		"encl other cpl3 encl\n"
		"d other cpl3 encl\n"
		"e4 enclu T -> c cpl3\n"
		"c other cpl3\n");
	const struct rtit_sim_rec *en = find(&t.r, RTIT_SIM_INSN, RTIT_IC_ENCLU, 0);
	cr_assert(en);
	cr_expect_eq(en->vector, 0, "an opt-out enclave");
	st_free(&t.r);
}

/* The enclave program of the AEX tests: RDX, RSI, R8, RBP, RSP and CF set
 * inside; the event comes before the instruction at e (insn 11). */
#define AEX_PROG(handler, at_e)                                                     \
	P "a: mov qword ptr [rip + x], rsp\n"                                        \
	  "a2: mov rbp, 0x5555\n"                                                    \
	  "b: mov eax, 2\n"                                                          \
	  "b2: lea rbx, [rip + tcs]\n"                                               \
	  "d: lea rcx, [rip + aep]\n"                                                \
	  "d2: enclu\n"                                                              \
	  "c: nop\n"                                                                 \
	  "end: nop\n"                                                               \
	  "aep: mov eax, 3\n"                                                        \
	  "f: enclu\n"                                                               \
	  handler                                                                    \
	  ".p2align 12\n"                                                            \
	  "encl: mov rdx, 0x1111\n"                                                  \
	  "g: mov rsi, 0x2222\n"                                                     \
	  "h: mov r8, 0x3333\n"                                                      \
	  "h2: mov rbp, 0x6666\n"                                                    \
	  "h3: stc\n"                                                                \
	  "e: " at_e "\n"                                                            \
	  "e2: lea rbx, [rip + c]\n"                                                 \
	  "e3: mov eax, 4\n"                                                         \
	  "e4: enclu\n"                                                              \
	  ENCLAVE_TAIL

/* AEX_PROG's flow up to the event: EENTER, then the enclave to e. */
#define AEX_BEFORE                                                                  \
	"a other cpl3\n" "a2 other cpl3\n" "b other cpl3\n" "b2 other cpl3\n"       \
	"d other cpl3\n" "d2 enclu T -> encl cpl3 encl\n" "encl other cpl3 encl\n"    \
	"g other cpl3 encl\n" "h other cpl3 encl\n" "h2 other cpl3 encl\n"           \
	"h3 other cpl3 encl\n"

/* ... and after it, from the AEP: ERESUME, the enclave from e, EEXIT. */
#define AEX_AFTER                                                                   \
	"aep other cpl3\n" "f enclu T -> e cpl3 encl\n" "e other cpl3 encl\n"        \
	"e2 other cpl3 encl\n" "e3 other cpl3 encl\n" "e4 enclu T -> c cpl3\n"        \
	"c other cpl3\n"

/* An NMI inside the enclave (Vol. 3D 40.4): the AEX record from the NLIP e
 * to the NMI handler, value = the AEP; at the handler the synthetic state
 * of Table 40-1: RAX = 3, RBX = the TCS, RCX = the AEP, RDX = RSI = R8 =
 * 0, RBP = SSA.uRBP (its value at EENTER); the frame (6.14.2) pushed as
 * from the AEP: RIP = AEP, CS = 0x33, RFLAGS with CF cleared, RSP =
 * SSA.uRSP. */
Test(sim_sgx, aex_nmi_synthetic_state)
{
	struct sgx_run t;
	struct sgx_opts o = { .debug = true, .nev = 1,
			      .ev = { { RTIT_SIM_AT_INSN, RTIT_EV_NMI, 0, 11, NULL, 0, 0, 0 } } };
	sgx_run(&t, AEX_PROG("h_2: hlt\n", "nop"), &o);
	EXPECT_TEXT(&t,
		AEX_BEFORE
		"! aex 2 e -> h_2\n"
		"h_2 hlt\n");
	cr_expect_eq(t.reg[T_RAX], 3, "Table 40-1: RAX = 3 (ERESUME)");
	cr_expect_eq(t.reg[T_RBX], t.sym_tcs, "RBX = the TCS");
	cr_expect_eq(t.reg[T_RCX], t.sym_aep, "RCX = the AEP");
	cr_expect_eq(t.reg[T_RDX], 0);
	cr_expect_eq(t.reg[T_RSI], 0);
	cr_expect_eq(t.reg[T_R8], 0);
	cr_expect_eq(t.reg[T_RBP], 0x5555, "RBP = SSA.uRBP");
	cr_expect_eq(t.reg[T_RSP], RSP0 - 40, "the frame on RSP0 (CPL 3 -> 0)");
	cr_expect_eq(t.frame[0], t.sym_aep, "the RIP pushed is the AEP");
	cr_expect_eq(t.frame[1], 0x33, "CS of CPL 3");
	cr_expect_eq(t.frame[2] & 1, 0, "CF cleared by the AEX (40.1)");
	cr_expect_eq(t.frame[3], t.x[0], "RSP = SSA.uRSP (its value at EENTER)");
	const struct rtit_sim_rec *ax = find(&t.r, RTIT_SIM_EVENT, RTIT_EV_AEX, 0);
	cr_assert(ax);
	cr_expect_eq(ax->value, t.sym_aep);
	cr_expect_eq(ax->vector, 2);
	cr_expect(!(ax->flags & (RTIT_SIM_F_FAULT | RTIT_SIM_F_ENCLAVE)));
	cr_expect_eq(ax->cpl, 0, "the state after: the handler's");
	st_free(&t.r);
}

/* IRET to the AEP, ERESUME there (EAX = 3, RBX, RCX as the AEX left them):
 * the SSA frame's registers and RFLAGS come back (CF = 1 again) and the
 * enclave goes on at e; EEXIT to c. */
Test(sim_sgx, eresume_restores_the_ssa_frame)
{
	struct sgx_run t;
	struct sgx_opts o = { .debug = true, .nev = 1,
			      .ev = { { RTIT_SIM_AT_INSN, RTIT_EV_NMI, 0, 11, NULL, 0, 0, 0 } } };
	sgx_run(&t, AEX_PROG("h_2: iretq\n", "nop"), &o);
	EXPECT_TEXT(&t,
		AEX_BEFORE
		"! aex 2 e -> h_2\n"
		"h_2 iret T -> aep cpl3\n"
		AEX_AFTER);
	cr_expect_eq(t.reg[T_RDX], 0x1111, "restored from the SSA");
	cr_expect_eq(t.reg[T_RSI], 0x2222);
	cr_expect_eq(t.reg[T_R8], 0x3333);
	cr_expect_eq(t.reg[T_RBP], 0x6666);
	cr_expect_eq(t.reg[T_FLAGS] & 1, 1, "CF restored");
	const struct rtit_sim_rec *er = find(&t.r, RTIT_SIM_INSN, RTIT_IC_ENCLU, 1);
	cr_assert(er);
	cr_expect_eq(er->value, RTIT_SGX_ERESUME);
	st_free(&t.r);
}

/* A fault inside the enclave: the AEX names the faulting instruction
 * (FAULT), the #UD handler runs as from the AEP. */
Test(sim_sgx, aex_on_a_fault)
{
	struct sgx_run t;
	sgx_run(&t, AEX_PROG("h_6: hlt\n", "ud2"), NULL);
	EXPECT_TEXT(&t,
		AEX_BEFORE
		"! aex 6 fault e -> h_6\n"
		"h_6 hlt\n");
	cr_expect_eq(t.frame[0], t.sym_aep);
	st_free(&t.r);
}

/* SDM Vol. 3D 38.6.1: SYSCALL is illegal inside an enclave: #UD, an AEX. */
Test(sim_sgx, syscall_inside_is_ud)
{
	struct sgx_run t;
	sgx_run(&t, AEX_PROG("h_6: hlt\n", "syscall"), NULL);
	const struct rtit_sim_rec *ax = find(&t.r, RTIT_SIM_EVENT, RTIT_EV_AEX, 0);
	cr_assert(ax, "%s", t.r.text);
	cr_expect_eq(ax->vector, 6);
	cr_expect(ax->flags & RTIT_SIM_F_FAULT);
	st_free(&t.r);
}

/* An SMI inside the enclave: the AEX goes to the AEP (next_ip = value),
 * the SMI and RSM happen there, then the AEP's ERESUME. */
Test(sim_sgx, aex_then_smi_at_the_aep)
{
	struct sgx_run t;
	struct sgx_opts o = { .debug = true, .nev = 1,
			      .ev = { { RTIT_SIM_AT_INSN, RTIT_EV_SMI, 0, 11, NULL, 0, 0, 5 } } };
	sgx_run(&t, AEX_PROG("", "nop"), &o);
	EXPECT_TEXT(&t,
		AEX_BEFORE
		"! aex 0 e -> aep cpl3\n"
		"! smi aep -> aep cpl3\n"
		"! rsm aep -> aep cpl3\n"
		AEX_AFTER);
	st_free(&t.r);
}

/* ENCLU's exception lists: #UD without SGX and outside ring 3; #GP(0) for
 * EEXIT outside an enclave, EENTER with an RBX that is no TCS, ERESUME
 * with CSSA = 0, and an unsupported leaf.  The ENCLU has no record (a
 * fault replaces it). */
static void expect_fault(const char *body, const struct sgx_opts *o, int vec, const char *why)
{
	struct sgx_run t;
	char src[2048], want[128];
	snprintf(src, sizeof(src), P "%s\nb2: enclu\nc: nop\nend: nop\naep: nop\n"
		 "h_6: hlt\nh_13: hlt\n.p2align 12\nencl: nop\n" ENCLAVE_TAIL, body);
	sgx_run(&t, src, o);
	const struct rtit_sim_rec *ex = find(&t.r, RTIT_SIM_EVENT, RTIT_EV_EXCEPTION, 0);
	cr_assert(ex, "%s: no exception\n%s", why, t.r.text);
	snprintf(want, sizeof(want), "! exception %d fault b2 -> h_%d", vec, vec);
	cr_expect(strstr(t.r.text, want), "%s: want '%s' in\n%s", why, want, t.r.text);
	cr_expect(!find(&t.r, RTIT_SIM_INSN, RTIT_IC_ENCLU, 0), "%s", why);
	st_free(&t.r);
}

Test(sim_sgx, enclu_exceptions)
{
	struct sgx_opts off = { .off = true }, cpl0 = { .cpl0 = true, .debug = true };
	expect_fault("mov eax, 2\nlea rbx, [rip + tcs]\nlea rcx, [rip + aep]", &off, 6,
		     "no SGX (the rtit dialect): #UD");
	expect_fault("mov eax, 2\nlea rbx, [rip + tcs]\nlea rcx, [rip + aep]", &cpl0, 6,
		     "CPL 0: #UD");
	expect_fault("mov eax, 4\nlea rbx, [rip + c]", NULL, 13, "EEXIT outside: #GP(0)");
	expect_fault("mov eax, 2\nlea rbx, [rip + encl]\nlea rcx, [rip + aep]", NULL, 13,
		     "RBX not a TCS: #GP(0)");
	expect_fault("mov eax, 3\nlea rbx, [rip + tcs]\nlea rcx, [rip + aep]", NULL, 13,
		     "ERESUME with CSSA = 0: #GP(0)");
	expect_fault("mov eax, 0\nlea rbx, [rip + tcs]", NULL, 13, "EREPORT (not modelled): #GP(0)");
	expect_fault("mov eax, 2\nlea rbx, [rip + tcs]\nmov rcx, 0x0000800000000000", NULL, 13,
		     "a non-canonical AEP: #GP(0)");
}

/* EENTER with TCS.CSSA = TCS.NSSA (an AEX used the only SSA frame and the
 * AEP enters again instead of resuming): #GP(0). */
Test(sim_sgx, eenter_without_a_free_ssa_frame)
{
	struct sgx_run t;
	struct sgx_opts o = { .debug = true, .nssa = 1, .nev = 1,
			      .ev = { { RTIT_SIM_AT_INSN, RTIT_EV_NMI, 0, 5, NULL, 0, 0, 0 } } };
	sgx_run(&t, P
		"a: mov eax, 2\n"
		"a2: lea rbx, [rip + tcs]\n"
		"b: lea rcx, [rip + aep]\n"
		"b2: enclu\n"
		"c: nop\n"
		"end: nop\n"
		"aep: mov eax, 2\n"
		"f: enclu\n"
		"h_2: iretq\n"
		"h_13: hlt\n"
		".p2align 12\n"
		"encl: nop\n"
		"d: nop\n"
		ENCLAVE_TAIL, &o);
	EXPECT_TEXT(&t,
		"a other cpl3\n"
		"a2 other cpl3\n"
		"b other cpl3\n"
		"b2 enclu T -> encl cpl3 encl\n"
		"encl other cpl3 encl\n"
		"! aex 2 d -> h_2\n"
		"h_2 iret T -> aep cpl3\n"
		"aep other cpl3\n"
		"! exception 13 fault f -> h_13\n"
		"h_13 hlt\n");
	st_free(&t.r);
}

/* EENTER inside an enclave is #GP(0), itself an enclave-exiting event:
 * an AEX with vector 13 naming the ENCLU. */
Test(sim_sgx, eenter_inside_is_gp_and_aex)
{
	struct sgx_run t;
	sgx_run(&t, P
		"a: mov eax, 2\n"
		"a2: lea rbx, [rip + tcs]\n"
		"b: lea rcx, [rip + aep]\n"
		"b2: enclu\n"
		"c: nop\n"
		"end: nop\n"
		"aep: nop\n"
		"h_13: hlt\n"
		".p2align 12\n"
		"encl: enclu\n"
		ENCLAVE_TAIL, NULL);
	EXPECT_TEXT(&t,
		"a other cpl3\n"
		"a2 other cpl3\n"
		"b other cpl3\n"
		"b2 enclu T -> encl cpl3 encl\n"
		"! aex 13 fault encl -> h_13\n"
		"h_13 hlt\n");
	st_free(&t.r);
}

/* The scenario line: one-line errors naming the line and the field. */
static void expect_scn_error(const char *text, const char *want)
{
	struct rtit_scenario sc;
	struct rtit_scn_error err = { 0 };
	int r = rtit_scenario_parse_string(text, "t.scn", &sc, &err);
	cr_expect_lt(r, 0, "accepted: %s", text);
	cr_expect(strstr(err.text, want), "want '%s' in '%s'", want, err.text);
	cr_expect(!strchr(err.text, '\n'), "one line: %s", err.text);
	rtit_scenario_fini(&sc);
}

#define SCN_HEAD "dialect pt\ncode flat path=x.bin load=0x1000\n"

Test(sim_sgx, scenario_enclave_line_errors)
{
	expect_scn_error(SCN_HEAD "enclave base=0x2000 size=0x2000 tcs=0x3000\n",
			 "t.scn:3: enclave: missing oentry=N");
	expect_scn_error(SCN_HEAD "enclave base=0x2000 size=0x1800 tcs=0x2000 oentry=0\n",
			 "t.scn:3: enclave size: 0x1800 is not a positive multiple of 4 KiB");
	expect_scn_error(SCN_HEAD "enclave base=0x2000 size=0x1000 tcs=0x2000 oentry=0x1000\n",
			 "t.scn:3: enclave oentry");
	expect_scn_error(SCN_HEAD "enclave base=0x2000 size=0x1000 tcs=0x2000 oentry=0 debug=2\n",
			 "t.scn:3: enclave debug: must be 0 (opt-out) or 1 (debug)");
	expect_scn_error(SCN_HEAD "enclave base=0x2000 size=0x1000 tcs=0x2000 oentry=0 color=1\n",
			 "t.scn:3: enclave: unknown field 'color'");
	expect_scn_error(SCN_HEAD "enclave base=0x2000 size=0x1000 tcs=0x2000 oentry=0 nssa=9\n",
			 "t.scn:3: enclave nssa: must be 1..4");
	expect_scn_error(SCN_HEAD "enclave base=0x2000 size=zz tcs=0x2000 oentry=0\n",
			 "t.scn:3: enclave size: bad number 'zz'");
	expect_scn_error("dialect rtit\ncode flat path=x.bin load=0x1000\n"
			 "enclave base=0x2000 size=0x1000 tcs=0x2000 oentry=0\n",
			 "t.scn:3: enclave: the rtit dialect models Silvermont, which has no SGX");
}

/* What only the loaded program can tell (setup): the TCS inside ELRANGE
 * and page-aligned, no two enclaves overlapping. */
static void expect_setup_error(const char *lines, const char *want)
{
	char text[1024];
	struct rtit_scenario sc;
	struct rtit_scn_error err = { 0 };
	struct rtit_sim_config cfg;
	struct rtit_sim *sim;
	snprintf(text, sizeof(text), "dialect pt\ncode asm load=0x401000\n"
		 ".intel_syntax noprefix\nnop\n.p2align 12\nencl: nop\n.p2align 12\ntcs: nop\n"
		 ".p2align 12\nend\n%s", lines);
	cr_assert_eq(rtit_scenario_parse_string(text, "t.scn", &sc, &err), 0, "%s", err.text);
	rtit_sim_config_default(&cfg);
	rtit_scenario_config(&sc, &cfg);
	cr_assert_eq(rtit_sim_new(&sim, &cfg), 0);
	cr_expect_lt(rtit_scenario_setup(&sc, sim, &err), 0, "accepted: %s", lines);
	cr_expect(strstr(err.text, want), "want '%s' in '%s'", want, err.text);
	rtit_sim_free(sim);
	rtit_scenario_fini(&sc);
}

Test(sim_sgx, scenario_enclave_setup_errors)
{
	expect_setup_error("enclave base=encl size=0x1000 tcs=0x403000 oentry=0\n",
			   "t.scn:11: enclave: tcs 0x403000 is not a 4 KiB page inside");
	expect_setup_error("enclave base=encl size=0x2000 tcs=tcs oentry=0\n"
			   "enclave base=tcs size=0x1000 tcs=tcs oentry=0\n",
			   "t.scn:12: enclave: [0x403000, 0x404000) overlaps the enclave at 0x402000");
	expect_setup_error("enclave base=nowhere size=0x2000 tcs=tcs oentry=0\n",
			   "t.scn:11: unknown label 'nowhere'");
}
