/*
 * test_pmu.c - the performance-monitoring model (sim/pmu.c): PMC0 counting
 * retired instructions, PEBS records with output to Intel PT (SDM Vol. 3
 * 20.5.5.2, 20.9.2; docs/sim.md "PEBS", D53).  Expected values come from
 * the programs: the counter starts at 2^48 - N and overflows on the N-th
 * instruction it counts; the record holds the state after that
 * instruction; MSR_RELOAD_PMC0 sets the next period.
 */
#include <criterion/criterion.h>
#include <unicorn/unicorn.h>

#include "rtit/pebs.h"
#include "rtit/sim.h"

#define P ".intel_syntax noprefix\n.globl _start\n_start:\n"
#define CTR(n) ((1ull << RTIT_PMU_CTR_BITS) - (n))
#define MAXP 8

struct pmu_run {
	struct rtit_sim_rec recs[512];
	size_t n;
	struct rtit_sim_pebs pebs[MAXP];	/* copies from on_pebs */
	size_t npebs;
	size_t pebs_at[MAXP];	/* records delivered before each on_pebs */
	bool alone[MAXP];	/* the PEBS record came alone in its batch */
	struct rtit_sim_status st;
	int rc;
	uint64_t sym_done;
};

static void on_batch(const struct rtit_sim_rec *recs, size_t n, void *opaque)
{
	struct pmu_run *t = opaque;
	for (size_t i = 0; i < n && t->n < 512; i++) {
		if (recs[i].kind == RTIT_SIM_EVENT && recs[i].cls == RTIT_EV_PEBS && t->npebs &&
		    t->npebs <= MAXP)
			t->alone[t->npebs - 1] = n == 1;
		t->recs[t->n++] = recs[i];
	}
}

static void on_pebs(void *opaque, const struct rtit_sim_pebs *p, const struct rtit_sim_rec *ctx)
{
	struct pmu_run *t = opaque;
	cr_assert_eq(ctx->cls, RTIT_EV_PEBS);
	if (t->npebs < MAXP) {
		t->pebs[t->npebs] = *p;
		t->pebs_at[t->npebs] = t->n;
	}
	t->npebs++;
}

struct msr_set {
	uint32_t msr;
	uint64_t v;
};

struct pmu_opts {
	int mode, cpl, deliver;
	bool pmu_off;
	bool handlers;		/* vector 0x21's handler at the label h_21 */
	const struct msr_set *msrs;	/* presets, ended by msr 0 */
};

static void pmu_run(struct pmu_run *t, const char *src, const struct pmu_opts *o)
{
	struct rtit_sim_config cfg;
	struct rtit_sim *sim;

	memset(t, 0, sizeof(*t));
	rtit_sim_config_default(&cfg);
	cfg.mode = o->mode ? o->mode : 64;
	cfg.cpl = o->cpl;
	cfg.deliver = o->deliver;
	cfg.budget = 10000;
	cfg.pmu = !o->pmu_off;
	cfg.consumer.on_batch = on_batch;
	cfg.consumer.on_pebs = on_pebs;
	cfg.consumer.opaque = t;
	cr_assert_eq(rtit_sim_new(&sim, &cfg), 0);
	cr_assert_eq(rtit_sim_load_asm(sim, src, 0x401000, "test.s", 0), 0, "%s", rtit_sim_errmsg(sim));
	if (rtit_sim_symbol(sim, "done", &t->sym_done) == 0)
		rtit_sim_set_end(sim, t->sym_done);
	uint64_t h;
	if (o->handlers && rtit_sim_symbol(sim, "h_21", &h) == 0)
		cr_assert_eq(rtit_sim_set_handler(sim, 0x21, h), 0);
	for (const struct msr_set *m = o->msrs; m && m->msr; m++)
		cr_assert_eq(rtit_sim_msr_preset(sim, m->msr, m->v), 0, "preset 0x%x = 0x%llx",
			     m->msr, (unsigned long long)m->v);
	t->rc = rtit_sim_run(sim, &t->st);
	cr_assert_eq(t->rc, 0, "%s", t->st.msg);
	if (t->npebs)
		cr_assert_eq(rtit_sim_pebs_record(sim) != NULL, true);
	rtit_sim_free(sim);
}

/* Index in t->recs of the nth PEBS record, -1 if none. */
static long nth_pebs(const struct pmu_run *t, int nth)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->recs[i].kind == RTIT_SIM_EVENT && t->recs[i].cls == RTIT_EV_PEBS && !nth--)
			return (long)i;
	return -1;
}

/* Ten NOPs (1 byte each, at 0x401000..0x401009), then done. */
static const char *nops = P "nop\nnop\nnop\nnop\nnop\nnop\nnop\nnop\nnop\nnop\ndone:\nnop\n";

#define ARM(start, reload, cfg)                                                            \
	{ RTIT_MSR_IA32_PEBS_DATA_CFG, (cfg) }, { RTIT_MSR_RELOAD_PMC0, (reload) },         \
	{ RTIT_MSR_IA32_A_PMC0, (start) },                                                  \
	{ RTIT_MSR_IA32_PEBS_ENABLE, RTIT_PEBS_OUTPUT_PT | RTIT_PEBS_EN_PMC0 },              \
	{ RTIT_MSR_IA32_PERFEVTSEL0, RTIT_EVTSEL_EN | RTIT_EVTSEL_USR | RTIT_EVTSEL_OS |     \
					     RTIT_EVT_INST_RETIRED },                          \
	{ RTIT_MSR_IA32_PERF_GLOBAL_CTRL, 1 }

/* The counter starts at 2^48 - 4: it overflows on the 4th instruction
 * (0x401003); the record follows it (before 0x401004).  Reload 2^48 - 3:
 * then on the 7th (0x401006) and the 10th (0x401009). */
Test(sim_pmu, overflow_after_exactly_n_then_reload)
{
	static const struct msr_set m[] = { ARM(CTR(4), CTR(3), 0), { 0, 0 } };
	struct pmu_run t;
	static const uint64_t eip[3] = { 0x401003, 0x401006, 0x401009 };
	static const long at[3] = { 4, 8, 12 };	/* record indexes */

	pmu_run(&t, nops, &(struct pmu_opts){ .msrs = m });
	cr_assert_eq(t.npebs, 3);
	for (int k = 0; k < 3; k++) {
		long i = nth_pebs(&t, k);
		const struct rtit_sim_rec *r = &t.recs[i];
		cr_expect_eq(i, at[k], "PEBS %d at record %ld", k, i);
		cr_expect_eq(t.recs[i - 1].ip, eip[k]);
		cr_expect_eq(r->value, eip[k], "eventing IP");
		cr_expect_eq(r->ip, eip[k] + 1, "binds to the next instruction");
		cr_expect_eq(r->next_ip, eip[k] + 1);
		cr_expect_eq(r->vector, 0, "groups: Basic only");
		cr_expect_eq(t.pebs[k].ip, eip[k]);
		cr_expect_eq(t.pebs[k].gpr[1], eip[k] + 1, "RIP: the next instruction");
		cr_expect_eq(t.pebs[k].counters, 1);
		/* CPI 1, TSC = cycles from 0: the TSC after the k-th overflow */
		cr_expect_eq(t.pebs[k].tsc, eip[k] - 0x401000 + 1);
		cr_expect_eq(r->tsc, t.pebs[k].tsc);
		cr_expect_eq(t.pebs_at[k], (size_t)at[k], "every record before it delivered");
		cr_expect(t.alone[k], "the PEBS record is alone in its batch");
		struct rtit_pebs_item it[RTIT_PEBS_MAX_ITEMS];
		size_t n = rtit_pebs_items(&t.pebs[k], it);
		cr_expect_eq(n, 3, "Basic: IP, applicable counters, timestamp");
		cr_expect_eq(r->msr, rtit_pebs_digest(it, n));
	}
}

/* The same records whatever the delivery mode (docs/sim.md). */
Test(sim_pmu, same_records_in_every_delivery_mode)
{
	static const struct msr_set m[] = { ARM(CTR(2), CTR(3), RTIT_PEBS_G_GPR | RTIT_PEBS_G_MEM),
					    { 0, 0 } };
	static struct pmu_run a, b, c;

	pmu_run(&a, nops, &(struct pmu_opts){ .msrs = m, .deliver = RTIT_SIM_PER_BATCH });
	pmu_run(&b, nops, &(struct pmu_opts){ .msrs = m, .deliver = RTIT_SIM_PER_INSN });
	pmu_run(&c, nops, &(struct pmu_opts){ .msrs = m, .deliver = RTIT_SIM_PER_BLOCK });
	cr_assert_eq(a.n, b.n);
	cr_assert_eq(a.n, c.n);
	cr_expect_eq(memcmp(a.recs, b.recs, a.n * sizeof(a.recs[0])), 0);
	cr_expect_eq(memcmp(a.recs, c.recs, a.n * sizeof(a.recs[0])), 0);
	cr_expect_eq(a.npebs, 3);
}

/* The record's registers are the state after the eventing instruction:
 * the load at "e" overflows the counter (its 5th instruction); RAX holds
 * the loaded value, the memory group its address, XMM1 what MOVQ put. */
Test(sim_pmu, record_holds_the_state_after_the_instruction)
{
	static const char *src = P
		"mov rbx, 0x1122334455667788\n"		/* 1 */
		"movq xmm1, rbx\n"			/* 2 */
		"lea rsi, [rip + x]\n"			/* 3 */
		"mov ecx, 7\n"				/* 4 */
		"e: mov rax, qword ptr [rsi + 8]\n"	/* 5: overflows */
		"done: nop\n"
		".align 16\nx: .quad 1, 0xabcdef\n";
	static const struct msr_set m[] = {
		ARM(CTR(5), CTR(100), RTIT_PEBS_G_GPR | RTIT_PEBS_G_MEM | RTIT_PEBS_G_XMM), { 0, 0 } };
	struct pmu_run t;

	pmu_run(&t, src, &(struct pmu_opts){ .msrs = m });
	cr_assert_eq(t.npebs, 1);
	const struct rtit_sim_pebs *p = &t.pebs[0];
	uint64_t x = (t.sym_done + 15) & ~15ull;	/* .align 16 after done: nop */
	cr_expect_eq(p->groups, RTIT_PEBS_G_GPR | RTIT_PEBS_G_MEM | RTIT_PEBS_G_XMM);
	cr_expect_eq(p->mode, 64);
	cr_expect_eq(p->ip, t.sym_done - 4, "eventing IP: the 4-byte load");
	cr_expect_eq(p->gpr[1], t.sym_done, "RIP");
	cr_expect_eq(p->gpr[0] & 2, 2, "RFLAGS bit 1 reads as 1");
	cr_expect_eq(p->gpr[2], 0xabcdef, "RAX: the value loaded");
	cr_expect_eq(p->gpr[3], 7, "RCX");
	cr_expect_eq(p->gpr[5], 0x1122334455667788ull, "RBX");
	cr_expect_eq(p->gpr[8], x, "RSI");
	cr_expect_eq(p->mem[0], x + 8, "MemAccessAddress");
	cr_expect_eq(p->mem[1] | p->mem[2] | p->mem[3], 0, "fixed 0 (D53)");
	cr_expect_eq(p->xmm[2], 0x1122334455667788ull, "XMM1_Q0");
	cr_expect_eq(p->xmm[3], 0, "XMM1_Q1 (MOVQ zeroes it)");
	struct rtit_pebs_item it[RTIT_PEBS_MAX_ITEMS];
	size_t n = rtit_pebs_items(p, it);
	cr_expect_eq(n, 18 + 3 + 4 + 32);
	cr_expect_eq(it[0].type, rtit_pt_bbp_gpr);
	cr_expect_eq(it[18].type, rtit_pt_bbp_pebs_basic);
	cr_expect_eq(it[21].type, rtit_pt_bbp_pebs_mem);
	cr_expect_eq(it[25].type, rtit_pt_bbp_xmm);
	cr_expect_eq(it[25 + 2].value, 0x1122334455667788ull);
}

/* An instruction that overwrites its own base register: the address
 * before it is gone, MemAccessAddress is 0 (D53). */
Test(sim_pmu, memory_address_unknown_when_the_base_was_overwritten)
{
	static const char *src = P
		"lea rax, [rip + x]\n"
		"mov rax, qword ptr [rax]\n"		/* 2: overflows */
		"done: nop\n"
		".align 8\nx: .quad 5\n";
	static const struct msr_set m[] = { ARM(CTR(2), CTR(100), RTIT_PEBS_G_MEM), { 0, 0 } };
	struct pmu_run t;

	pmu_run(&t, src, &(struct pmu_opts){ .msrs = m });
	cr_assert_eq(t.npebs, 1);
	cr_expect_eq(t.pebs[0].mem[0], 0);
}

/* Configured by the guest's own WRMSRs: each takes effect after it
 * retires and is not counted (D16, D53).  The last WRMSR (global ctrl)
 * at "e" starts the count; with 2^48 - 3 the 3rd NOP after it overflows. */
Test(sim_pmu, guest_wrmsr_starts_the_count_after_it)
{
	static const char *src = P
		"mov ecx, 0x3f1\nxor edx, edx\nmov eax, 1\nor edx, 0x20000000\nwrmsr\n"
		"mov ecx, 0x4c1\nmov edx, 0xffff\nmov eax, 0xfffffffd\nwrmsr\n"
		"mov ecx, 0x186\nxor edx, edx\nmov eax, 0x4300c0\nwrmsr\n"
		"mov ecx, 0x38f\nxor edx, edx\nmov eax, 1\n"
		"e: wrmsr\n"
		"a: nop\nb: nop\nc: nop\nd: nop\ndone: nop\n";
	struct pmu_run t;

	pmu_run(&t, src, &(struct pmu_opts){ 0 });
	cr_assert_eq(t.npebs, 1);
	long i = nth_pebs(&t, 0);
	cr_expect_eq(t.recs[i].value, t.sym_done - 2, "the 3rd NOP after the WRMSR");
	cr_expect_eq(t.recs[i].ip, t.sym_done - 1);
}

/* IA32_PMC0 takes 32 bits and sign-extends them (20.2.6): 0xfffffffe is
 * 2^48 - 2. */
Test(sim_pmu, legacy_pmc_write_sign_extends)
{
	static const struct msr_set m[] = { ARM(0, CTR(100), 0), { RTIT_MSR_IA32_PMC0, 0xfffffffeull },
					    { 0, 0 } };
	struct pmu_run t;

	pmu_run(&t, nops, &(struct pmu_opts){ .msrs = m });
	cr_assert_eq(t.npebs, 1);
	cr_expect_eq(t.recs[nth_pebs(&t, 0)].value, 0x401001);
}

/* USR/OS (Figure 20-1): at CPL 3 only USR counts. */
Test(sim_pmu, usr_os_filter_on_cpl)
{
	static const struct msr_set os_only[] = {
		ARM(CTR(2), CTR(2), 0),
		{ RTIT_MSR_IA32_PERFEVTSEL0, RTIT_EVTSEL_EN | RTIT_EVTSEL_OS | RTIT_EVT_INST_RETIRED },
		{ 0, 0 } };
	static const struct msr_set usr_only[] = {
		ARM(CTR(2), CTR(2), 0),
		{ RTIT_MSR_IA32_PERFEVTSEL0, RTIT_EVTSEL_EN | RTIT_EVTSEL_USR | RTIT_EVT_INST_RETIRED },
		{ 0, 0 } };
	struct pmu_run t;

	pmu_run(&t, nops, &(struct pmu_opts){ .msrs = os_only, .cpl = 3 });
	cr_expect_eq(t.npebs, 0);
	pmu_run(&t, nops, &(struct pmu_opts){ .msrs = usr_only, .cpl = 3 });
	cr_expect_eq(t.npebs, 5);
	pmu_run(&t, nops, &(struct pmu_opts){ .msrs = usr_only });
	cr_expect_eq(t.npebs, 0);
}

/* No record without PEBS on PMC0, without output to Intel PT (the DS
 * area is not modelled), or with another event selected. */
Test(sim_pmu, no_record_unless_armed)
{
	static const struct msr_set ds[] = {
		ARM(CTR(2), CTR(2), 0), { RTIT_MSR_IA32_PEBS_ENABLE, RTIT_PEBS_EN_PMC0 }, { 0, 0 } };
	static const struct msr_set off[] = {
		ARM(CTR(2), CTR(2), 0), { RTIT_MSR_IA32_PEBS_ENABLE, RTIT_PEBS_OUTPUT_PT }, { 0, 0 } };
	static const struct msr_set other[] = {
		ARM(CTR(2), CTR(2), 0),
		{ RTIT_MSR_IA32_PERFEVTSEL0, RTIT_EVTSEL_EN | RTIT_EVTSEL_USR | RTIT_EVTSEL_OS | 0xC4 },
		{ 0, 0 } };
	static const struct msr_set global_off[] = {
		ARM(CTR(2), CTR(2), 0), { RTIT_MSR_IA32_PERF_GLOBAL_CTRL, 0 }, { 0, 0 } };
	struct pmu_run t;

	pmu_run(&t, nops, &(struct pmu_opts){ .msrs = ds });
	cr_expect_eq(t.npebs, 0);
	pmu_run(&t, nops, &(struct pmu_opts){ .msrs = off });
	cr_expect_eq(t.npebs, 0);
	pmu_run(&t, nops, &(struct pmu_opts){ .msrs = other });
	cr_expect_eq(t.npebs, 0);
	pmu_run(&t, nops, &(struct pmu_opts){ .msrs = global_off });
	cr_expect_eq(t.npebs, 0);
}

/* 32-bit mode: the GPR block has the 32-bit registers, 4-byte items, no
 * R8-R15 (D54). */
Test(sim_pmu, mode32_record)
{
	static const char *src = P "mov eax, 0x89abcdef\nmov edi, 5\ndone: nop\n";
	static const struct msr_set m[] = { ARM(CTR(2), CTR(100), RTIT_PEBS_G_GPR), { 0, 0 } };
	struct pmu_run t;

	pmu_run(&t, src, &(struct pmu_opts){ .msrs = m, .mode = 32 });
	cr_assert_eq(t.npebs, 1);
	cr_expect_eq(t.pebs[0].mode, 32);
	cr_expect_eq(t.pebs[0].gpr[2], 0x89abcdef);
	cr_expect_eq(t.pebs[0].gpr[9], 5, "EDI");
	struct rtit_pebs_item it[RTIT_PEBS_MAX_ITEMS];
	size_t n = rtit_pebs_items(&t.pebs[0], it);
	cr_expect_eq(n, 10 + 3);
	cr_expect_eq(it[0].sz4, 1);
	cr_expect_eq(it[10].sz4, 0, "Basic: 8-byte items");
}

/* #GP on what the MSRs do not allow (20.2.1.1, 20.5.5.2, 20.9.2.1), and on
 * every PMU MSR with the model off (the RTIT dialect). */
Test(sim_pmu, gp_on_invalid_values)
{
	static const struct { uint32_t msr; uint64_t v; } bad[] = {
		{ RTIT_MSR_IA32_PEBS_ENABLE, 2ull << RTIT_PEBS_OUTPUT_SHIFT },	/* output 10b */
		{ RTIT_MSR_IA32_PEBS_ENABLE, 3ull << RTIT_PEBS_OUTPUT_SHIFT },	/* 11b */
		{ RTIT_MSR_IA32_PEBS_ENABLE, 2 },	/* PMC1: no such counter */
		{ RTIT_MSR_IA32_PEBS_ENABLE, 1ull << 32 },
		/* 32 LBR entries at most (31:24 = entries - 1, D63) */
		{ RTIT_MSR_IA32_PEBS_DATA_CFG, RTIT_PEBS_G_LBR | 32ull << RTIT_PEBS_CFG_LBR_SHIFT },
		{ RTIT_MSR_IA32_PEBS_DATA_CFG, 1ull << 4 },
		{ RTIT_MSR_IA32_PEBS_DATA_CFG, 1ull << 32 },
		/* IA32_LBR_CTL: the call-stack mode is not offered; bits 15:4,
		 * 63:23 reserved */
		{ RTIT_MSR_IA32_LBR_CTL, RTIT_LBR_CTL_EN | RTIT_LBR_CTL_CALL_STACK },
		{ RTIT_MSR_IA32_LBR_CTL, 1ull << 4 },
		{ RTIT_MSR_IA32_LBR_CTL, 1ull << 23 },
		/* IA32_LBR_DEPTH: 8, 16, 24 or 32 */
		{ RTIT_MSR_IA32_LBR_DEPTH, 0 },
		{ RTIT_MSR_IA32_LBR_DEPTH, 12 },
		{ RTIT_MSR_IA32_LBR_DEPTH, 40 },
		{ RTIT_MSR_IA32_A_PMC0, 1ull << 48 },
		{ RTIT_MSR_RELOAD_PMC0, 1ull << 63 },
		{ RTIT_MSR_IA32_PERFEVTSEL0, 1ull << 32 },
		{ RTIT_MSR_IA32_PERF_GLOBAL_CTRL, 2 },
		{ RTIT_MSR_IA32_PERF_GLOBAL_CTRL, 1ull << 32 },
		{ RTIT_MSR_IA32_PERF_CAPABILITIES, 0 },	/* read-only */
		{ RTIT_MSR_IA32_PERF_GLOBAL_STATUS, 0 },
	};
	struct rtit_sim_config cfg;
	struct rtit_sim *sim;

	rtit_sim_config_default(&cfg);
	cfg.pmu = true;
	cr_assert_eq(rtit_sim_new(&sim, &cfg), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect_lt(rtit_sim_msr_preset(sim, bad[i].msr, bad[i].v), 0, "MSR 0x%x = 0x%llx",
			     bad[i].msr, (unsigned long long)bad[i].v);
	cr_expect_eq(rtit_sim_msr_preset(sim, RTIT_MSR_IA32_PEBS_ENABLE,
					 RTIT_PEBS_OUTPUT_PT | RTIT_PEBS_PMI_EACH | RTIT_PEBS_EN_PMC0), 0);
	cr_expect_eq(rtit_sim_msr_preset(sim, RTIT_MSR_IA32_PEBS_DATA_CFG, 7), 0);
	cr_expect_eq(rtit_sim_msr_preset(sim, RTIT_MSR_IA32_PEBS_DATA_CFG,
					 0xf | 31ull << RTIT_PEBS_CFG_LBR_SHIFT), 0);
	cr_expect_eq(rtit_sim_msr_preset(sim, RTIT_MSR_IA32_LBR_CTL,
					 RTIT_LBR_CTL_EN | RTIT_LBR_CTL_OS | RTIT_LBR_CTL_USR |
					 RTIT_LBR_CTL_FILTERS), 0);
	for (uint64_t d = 8; d <= 32; d += 8)
		cr_expect_eq(rtit_sim_msr_preset(sim, RTIT_MSR_IA32_LBR_DEPTH, d), 0, "depth %llu",
			     (unsigned long long)d);
	rtit_sim_free(sim);
	cfg.pmu = false;
	cr_assert_eq(rtit_sim_new(&sim, &cfg), 0);
	cr_expect_lt(rtit_sim_msr_preset(sim, RTIT_MSR_IA32_PEBS_ENABLE, 0), 0);
	cr_expect_lt(rtit_sim_msr_preset(sim, RTIT_MSR_IA32_A_PMC0, 0), 0);
	cr_expect_lt(rtit_sim_msr_preset(sim, RTIT_MSR_IA32_LBR_CTL, 0), 0);
	rtit_sim_free(sim);
}

/* ---- Architectural LBRs (D63) ----
 * The program, its addresses from the encodings (Vol. 2: MOV r32, imm32
 * 5 bytes, DEC r32 2, JNZ rel8 2, CALL rel32 5, JMP rel8 2, RET 1, LEA
 * r64, [RIP + d32] 7, JMP r64 2, NOP 1) and, with CPI 1, the cycle count
 * after each instruction = its number:
 *   401000 mov ecx, 2 (1); 401005 dec ecx (2, 4); 401007 jnz 401005 (3:
 *   taken, 5: not); 401009 call 401010 (6); 40100e jmp 401011 (8); 401010
 *   ret (7); 401011 lea rax (9); 401018 jmp rax (10); 40101a nop (11: the
 *   counter, at 2^48 - 11, overflows: the PEBS record). */
static const char *lbr_prog =
	P "mov ecx, 2\nl: dec ecx\njnz l\ncall f\njmp g\nf: ret\n"
	"g: lea rax, [rip + h]\njmp rax\nh: nop\ndone: nop\n";

#define LBR_INFO(cyc, type) ((uint64_t)(cyc) | (uint64_t)(type) << RTIT_LBR_INFO_BR_TYPE_SHIFT | \
			     RTIT_LBR_INFO_CYC_CNT_VALID)
#define LBR_ALL (RTIT_LBR_CTL_EN | RTIT_LBR_CTL_OS | RTIT_LBR_CTL_USR | RTIT_LBR_CTL_FILTERS)

/* Every taken branch, youngest first (LBR[TOS-0]), with its type and the
 * cycles since the entry before (since LBREn for the first); the untaken
 * JNZ records nothing; the 6th entry asked for was never written: 0. */
Test(sim_pmu, lbr_entries_youngest_first)
{
	static const struct msr_set m[] = {
		{ RTIT_MSR_IA32_LBR_CTL, LBR_ALL },
		ARM(CTR(11), CTR(100), RTIT_PEBS_G_LBR | 5ull << RTIT_PEBS_CFG_LBR_SHIFT), { 0, 0 } };
	static const uint64_t want[18] = {
		0x401018, 0x40101a, LBR_INFO(2, RTIT_LBR_BR_NEAR_IND_JMP),
		0x40100e, 0x401011, LBR_INFO(1, RTIT_LBR_BR_NEAR_REL_JMP),
		0x401010, 0x40100e, LBR_INFO(1, RTIT_LBR_BR_NEAR_RET),
		0x401009, 0x401010, LBR_INFO(3, RTIT_LBR_BR_NEAR_REL_CALL),
		0x401007, 0x401005, LBR_INFO(3, RTIT_LBR_BR_JCC),
		0, 0, 0,
	};
	struct pmu_run t;

	pmu_run(&t, lbr_prog, &(struct pmu_opts){ .msrs = m });
	cr_assert_eq(t.npebs, 1);
	cr_assert_eq(t.pebs[0].ip, 0x40101a, "eventing IP");
	cr_assert_eq(t.pebs[0].nlbr, 6);
	for (int i = 0; i < 18; i++)
		cr_expect_eq(t.pebs[0].lbr[i], want[i], "item %d: 0x%llx, expected 0x%llx", i,
			     (unsigned long long)t.pebs[0].lbr[i], (unsigned long long)want[i]);
	/* the items: LBR Block 0, IDs 0..17 after the 3 Basic ones */
	struct rtit_pebs_item it[RTIT_PEBS_MAX_ITEMS];
	size_t n = rtit_pebs_items(&t.pebs[0], it);
	cr_expect_eq(n, 3 + 18);
	cr_expect_eq(it[3].type, rtit_pt_bbp_lbr0);
	cr_expect_eq(it[20].id, 17);
	long i = nth_pebs(&t, 0);
	cr_expect_eq(t.recs[i].vector, RTIT_PEBS_G_LBR);
	cr_expect_eq(t.recs[i].msr, rtit_pebs_digest(it, n));
}

/* The filters: JCC and RETURN only, and OS/USR on the CPL the branch ends
 * in (CPL 0 here): the RET's cycle count runs from the JNZ's entry. */
Test(sim_pmu, lbr_filters)
{
	static const struct msr_set jcc_ret[] = {
		{ RTIT_MSR_IA32_LBR_CTL, RTIT_LBR_CTL_EN | RTIT_LBR_CTL_OS | RTIT_LBR_CTL_JCC |
					 RTIT_LBR_CTL_RETURN },
		ARM(CTR(11), CTR(100), RTIT_PEBS_G_LBR | 2ull << RTIT_PEBS_CFG_LBR_SHIFT), { 0, 0 } };
	static const struct msr_set usr_only[] = {
		{ RTIT_MSR_IA32_LBR_CTL, LBR_ALL & ~(uint64_t)RTIT_LBR_CTL_OS },
		ARM(CTR(11), CTR(100), RTIT_PEBS_G_LBR | 2ull << RTIT_PEBS_CFG_LBR_SHIFT), { 0, 0 } };
	static const struct msr_set depth8[] = {
		{ RTIT_MSR_IA32_LBR_CTL, LBR_ALL }, { RTIT_MSR_IA32_LBR_DEPTH, 8 },
		ARM(CTR(11), CTR(100), RTIT_PEBS_G_LBR | 9ull << RTIT_PEBS_CFG_LBR_SHIFT), { 0, 0 } };
	struct pmu_run t;

	pmu_run(&t, lbr_prog, &(struct pmu_opts){ .msrs = jcc_ret });
	cr_assert_eq(t.npebs, 1);
	cr_expect_eq(t.pebs[0].lbr[0], 0x401010);
	cr_expect_eq(t.pebs[0].lbr[2], LBR_INFO(4, RTIT_LBR_BR_NEAR_RET));
	cr_expect_eq(t.pebs[0].lbr[3], 0x401007);
	cr_expect_eq(t.pebs[0].lbr[5], LBR_INFO(3, RTIT_LBR_BR_JCC));
	cr_expect_eq(t.pebs[0].lbr[6], 0, "a third entry was never written");

	pmu_run(&t, lbr_prog, &(struct pmu_opts){ .msrs = usr_only });
	cr_assert_eq(t.npebs, 1);
	for (int i = 0; i < 9; i++)
		cr_expect_eq(t.pebs[0].lbr[i], 0, "USR only at CPL 0: nothing, item %d", i);

	/* 10 entries asked of a stack 8 deep: the last two read 0 */
	pmu_run(&t, lbr_prog, &(struct pmu_opts){ .msrs = depth8 });
	cr_assert_eq(t.pebs[0].nlbr, 10);
	cr_expect_eq(t.pebs[0].lbr[12], 0x401007, "the 5th entry");
	for (int i = 15; i < 30; i++)
		cr_expect_eq(t.pebs[0].lbr[i], 0, "item %d", i);
}

/* Far transfers and events are OTHER_BRANCH: INT 0x21 (from the INT to
 * its handler) and its IRETQ (back past it). */
Test(sim_pmu, lbr_other_branches)
{
	static const char *src = P "nop\nint 0x21\nnop\nnop\ndone: nop\n"
				   ".org 0x40\nh_21: iretq\n";
	static const struct msr_set m[] = {
		{ RTIT_MSR_IA32_LBR_CTL, LBR_ALL },
		ARM(CTR(4), CTR(100), RTIT_PEBS_G_LBR | 1ull << RTIT_PEBS_CFG_LBR_SHIFT), { 0, 0 } };
	struct pmu_run t;

	/* 401000 nop (1), 401001 int 0x21 (2) -> 401040, iretq (3) ->
	 * 401003, 401003 nop (4): the record */
	pmu_run(&t, src, &(struct pmu_opts){ .msrs = m, .handlers = true });
	cr_assert_eq(t.npebs, 1);
	cr_expect_eq(t.pebs[0].lbr[0], 0x401040);
	cr_expect_eq(t.pebs[0].lbr[1], 0x401003);
	cr_expect_eq(t.pebs[0].lbr[2] >> RTIT_LBR_INFO_BR_TYPE_SHIFT & 0xf, RTIT_LBR_BR_OTHER);
	cr_expect_eq(t.pebs[0].lbr[3], 0x401001);
	cr_expect_eq(t.pebs[0].lbr[4], 0x401040);
	cr_expect_eq(t.pebs[0].lbr[5] >> RTIT_LBR_INFO_BR_TYPE_SHIFT & 0xf, RTIT_LBR_BR_OTHER);
}

/* A guest RDMSR of the counter reads it as counted so far: five NOPs
 * after the start value 100 (RDMSR's own retirement not yet). */
Test(sim_pmu, rdmsr_reads_the_count)
{
	static const char *src = P "nop\nnop\nnop\nnop\nmov ecx, 0x4c1\nrdmsr\ndone: nop\n";
	static const struct msr_set m[] = { ARM(100, CTR(100), 0), { 0, 0 } };
	struct rtit_sim_config cfg;
	struct rtit_sim *sim;
	struct rtit_sim_status st;
	uint64_t rax = 0, done;

	rtit_sim_config_default(&cfg);
	cfg.pmu = true;
	cfg.budget = 1000;
	cr_assert_eq(rtit_sim_new(&sim, &cfg), 0);
	cr_assert_eq(rtit_sim_load_asm(sim, src, 0x401000, "t.s", 0), 0);
	cr_assert_eq(rtit_sim_symbol(sim, "done", &done), 0);
	rtit_sim_set_end(sim, done);
	for (const struct msr_set *x = m; x->msr; x++)
		cr_assert_eq(rtit_sim_msr_preset(sim, x->msr, x->v), 0);
	cr_assert_eq(rtit_sim_run(sim, &st), 0, "%s", st.msg);
	rtit_sim_get_reg(sim, UC_X86_REG_RAX, &rax);
	cr_expect_eq(rax, 105);
	rtit_sim_free(sim);
}
