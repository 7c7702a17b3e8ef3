/*
 * pmu.c - the performance-monitoring model: one general-purpose counter
 * (IA32_PMC0) counting retired instructions, and PEBS with its output to
 * Intel PT (SDM Vol. 3 20.2 architectural performance monitoring, 20.5.5.2
 * PEBS output to Intel PT, 20.9.2 adaptive PEBS records; docs/sim.md
 * "PEBS", docs/decisions.md D53).
 *
 * What the model reports (CPUID.0AH): one general-purpose counter of 48
 * bits, no fixed counters; IA32_PERF_CAPABILITIES: full-width writes,
 * adaptive PEBS (PEBS_BASELINE), PEBS output to Intel PT; architectural
 * LBRs up to 32 deep, without the call-stack mode (D63).  The
 * only event it counts is INST_RETIRED.ANY_P (event 0xC0, umask 0, no
 * edge, invert or counter mask); any other selection counts nothing.
 *
 * The counter is kept lazily (struct sim_pmu): nothing happens per
 * instruction.  When PEBS is armed the retired count at which the counter
 * overflows is known in advance (the CPL, which USR/OS filter on, changes
 * only at instructions and events the model sees), and the simulator
 * stops there as it does for an injected event (sim->pmu_due).
 */
#include <string.h>

#include "sim_internal.h"
#include "rtit/pebs.h"

#define CTR_MASK ((1ull << RTIT_PMU_CTR_BITS) - 1)

/* IA32_PERF_CAPABILITIES (Vol. 4 Table 2-2): PEBS trap (6), PEBS record
 * format 4 (11:8), full-width writes (13), PEBS baseline (14), PEBS
 * output to Intel PT available (16). */
#define PERF_CAPS ((1ull << 6) | (4ull << 8) | (1ull << 13) | (1ull << 14) | (1ull << 16))

static bool counts_at(const struct sim_pmu *p, int cpl)
{
	uint64_t e = p->evtsel;

	if (!(e & RTIT_EVTSEL_EN) || !(p->global_ctrl & 1))
		return false;
	if ((e & RTIT_EVTSEL_EVENT_MASK) != RTIT_EVT_INST_RETIRED ||
	    ((e >> RTIT_EVTSEL_UMASK_SHIFT) & 0xff) || (e >> RTIT_EVTSEL_CMASK_SHIFT) ||
	    (e & (RTIT_EVTSEL_EDGE | RTIT_EVTSEL_INV)))
		return false;
	return cpl ? (e & RTIT_EVTSEL_USR) != 0 : (e & RTIT_EVTSEL_OS) != 0;
}

/* The counter now. */
static void fold(struct rtit_sim *sim)
{
	struct sim_pmu *p = &sim->pmu;

	if (p->counting && sim->retired > p->base)
		p->ctr = (p->ctr + (sim->retired - p->base)) & CTR_MASK;
	if (sim->retired > p->base)
		p->base = sim->retired;
}

/* Counting at the current CPL, and where the PEBS assist is due: the
 * count at which the counter goes from all ones to 0 (it overflows on the
 * instruction that makes it wrap, 20.5.5.2: the record follows that
 * instruction). */
static void arm(struct rtit_sim *sim)
{
	struct sim_pmu *p = &sim->pmu;

	p->counting = counts_at(p, sim->m.cpl);
	sim->pmu_due = UINT64_MAX;
	if (p->counting && (p->pebs_enable & RTIT_PEBS_EN_PMC0) &&
	    (p->pebs_enable & RTIT_PEBS_OUTPUT_MASK) == RTIT_PEBS_OUTPUT_PT)
		sim->pmu_due = p->base + ((1ull << RTIT_PMU_CTR_BITS) - p->ctr);
}

/* ---- Architectural LBRs (D63) ---- */

/* IA32_LBR_CTL bits rtitsim accepts: CALL_STACK (the call-stack mode)
 * is not modelled, so setting it is #GP as on a CPU without it
 * (CPUID.1CH:EBX[1] = 0). */
#define LBR_CTL_OK (RTIT_LBR_CTL_EN | RTIT_LBR_CTL_OS | RTIT_LBR_CTL_USR | RTIT_LBR_CTL_FILTERS)

/* LBR_x (x = 0 the youngest) in the ring. */
static unsigned lbr_slot(const struct sim_lbr *l, unsigned x)
{
	return (l->head + x) % RTIT_LBR_MAX_DEPTH;
}

static void lbr_clear(struct sim_lbr *l)
{
	memset(l->from, 0, sizeof(l->from));
	memset(l->to, 0, sizeof(l->to));
	memset(l->info, 0, sizeof(l->info));
	l->head = 0;
}

/* IA32_LBR_CTL, IA32_LBR_DEPTH and the entries' MSRs: 1 done, 0 not an
 * LBR MSR, -1 #GP. */
static int lbr_msr(struct rtit_sim *sim, bool write, uint32_t msr, uint64_t *v)
{
	struct sim_lbr *l = &sim->pmu.lbr;
	uint64_t *e = NULL;
	unsigned x = msr & 0xff;

	if (msr == RTIT_MSR_IA32_LBR_CTL) {
		if (!write) {
			*v = l->ctl;
		} else {
			if (*v & ~(uint64_t)LBR_CTL_OK)
				return -1;
			if ((*v & RTIT_LBR_CTL_EN) && !(l->ctl & RTIT_LBR_CTL_EN))
				l->last_cycles = sim->cycles;	/* CYC_CNT counts from here */
			l->ctl = *v;
		}
		return 1;
	}
	if (msr == RTIT_MSR_IA32_LBR_DEPTH) {
		if (!write) {
			*v = l->depth;
			return 1;
		}
		/* a supported depth (8, 16, 24, 32); a write clears the
		 * entries */
		if (!*v || *v % 8 || *v > RTIT_LBR_MAX_DEPTH)
			return -1;
		l->depth = *v;
		lbr_clear(l);
		return 1;
	}
	if (x >= RTIT_LBR_MAX_DEPTH)
		return 0;
	switch (msr - x) {
	case RTIT_MSR_IA32_LBR_0_FROM_IP: e = l->from; break;
	case RTIT_MSR_IA32_LBR_0_TO_IP: e = l->to; break;
	case RTIT_MSR_IA32_LBR_0_INFO: e = l->info; break;
	default: return 0;
	}
	/* entries beyond the depth read 0 and ignore writes */
	if (!write)
		*v = x < l->depth ? e[lbr_slot(l, x)] : 0;
	else if (x < l->depth)
		e[lbr_slot(l, x)] = *v;
	return 1;
}

/* The LBR branch type of a record, -1 if it records no branch: a taken
 * near branch by its kind, and every other transfer (far branches, INT n,
 * SYSCALL..., interrupts, exceptions, TSX aborts) OTHER_BRANCH.  An event
 * that does not move the IP (SMI, VM exit and entry, PEBS, ...) or starts
 * anew (INIT, SIPI), and anything inside an enclave, records nothing. */
static int lbr_type(const struct rtit_sim_rec *r)
{
	static const int8_t insn[RTIT_IC_COUNT] = {
		[RTIT_IC_OTHER] = -1, [RTIT_IC_COND] = RTIT_LBR_BR_JCC,
		[RTIT_IC_DIRECT_JMP] = RTIT_LBR_BR_NEAR_REL_JMP,
		[RTIT_IC_DIRECT_CALL] = RTIT_LBR_BR_NEAR_REL_CALL,
		[RTIT_IC_INDIRECT_JMP] = RTIT_LBR_BR_NEAR_IND_JMP,
		[RTIT_IC_INDIRECT_CALL] = RTIT_LBR_BR_NEAR_IND_CALL,
		[RTIT_IC_RET] = RTIT_LBR_BR_NEAR_RET,
		[RTIT_IC_FAR_JMP] = RTIT_LBR_BR_OTHER, [RTIT_IC_FAR_CALL] = RTIT_LBR_BR_OTHER,
		[RTIT_IC_FAR_RET] = RTIT_LBR_BR_OTHER, [RTIT_IC_IRET] = RTIT_LBR_BR_OTHER,
		[RTIT_IC_INT] = RTIT_LBR_BR_OTHER, [RTIT_IC_SYSCALL] = RTIT_LBR_BR_OTHER,
		[RTIT_IC_SYSRET] = RTIT_LBR_BR_OTHER, [RTIT_IC_SYSENTER] = RTIT_LBR_BR_OTHER,
		[RTIT_IC_SYSEXIT] = RTIT_LBR_BR_OTHER, [RTIT_IC_MOV_CR3] = -1,
		[RTIT_IC_MOV_CR0] = -1, [RTIT_IC_WRMSR] = -1, [RTIT_IC_RDMSR] = -1,
		[RTIT_IC_HLT] = -1, [RTIT_IC_PTWRITE] = -1, [RTIT_IC_MWAIT] = -1,
		[RTIT_IC_XBEGIN] = -1, [RTIT_IC_XEND] = -1, [RTIT_IC_ENCLU] = -1,
		[RTIT_IC_UIRET] = RTIT_LBR_BR_OTHER,
	};

	if (r->flags & RTIT_SIM_F_ENCLAVE)
		return -1;
	if (r->kind == RTIT_SIM_INSN)
		return r->cls < RTIT_IC_COUNT && (r->flags & RTIT_SIM_F_TAKEN) ? insn[r->cls] : -1;
	switch (r->cls) {
	case RTIT_EV_EXCEPTION: case RTIT_EV_EXT_INTERRUPT: case RTIT_EV_NMI:
	case RTIT_EV_UINTR: case RTIT_EV_TSX_ABORT:
		return r->next_ip != r->ip ? RTIT_LBR_BR_OTHER : -1;
	default:
		return -1;
	}
}

/* IA32_LBR_CTL's filter bit for a branch type. */
static uint64_t lbr_filter_bit(int type)
{
	switch (type) {
	case RTIT_LBR_BR_JCC: return RTIT_LBR_CTL_JCC;
	case RTIT_LBR_BR_NEAR_REL_JMP: return RTIT_LBR_CTL_REL_JMP;
	case RTIT_LBR_BR_NEAR_IND_JMP: return RTIT_LBR_CTL_IND_JMP;
	case RTIT_LBR_BR_NEAR_REL_CALL: return RTIT_LBR_CTL_REL_CALL;
	case RTIT_LBR_BR_NEAR_IND_CALL: return RTIT_LBR_CTL_IND_CALL;
	case RTIT_LBR_BR_NEAR_RET: return RTIT_LBR_CTL_RETURN;
	default: return RTIT_LBR_CTL_OTHER_BRANCH;
	}
}

void sim_lbr_scan(struct rtit_sim *sim, const struct rtit_sim_rec *recs, size_t n)
{
	struct sim_lbr *l = &sim->pmu.lbr;

	for (size_t i = 0; i < n; i++) {
		const struct rtit_sim_rec *r = &recs[i];
		int type = lbr_type(r);
		bool abort = r->kind == RTIT_SIM_EVENT && r->cls == RTIT_EV_TSX_ABORT;
		/* the OS/USR filter on the CPL the branch ends in (D63) */
		uint64_t plm = r->cpl ? RTIT_LBR_CTL_USR : RTIT_LBR_CTL_OS;

		if (type >= 0 && (l->ctl & plm) && (l->ctl & lbr_filter_bit(type))) {
			uint64_t cyc = r->cycles - l->last_cycles;
			unsigned s;

			l->head = (l->head + RTIT_LBR_MAX_DEPTH - 1) % RTIT_LBR_MAX_DEPTH;
			s = l->head;
			l->from[s] = r->ip;
			l->to[s] = r->next_ip;
			l->info[s] = (cyc > RTIT_LBR_INFO_CYC_CNT ? RTIT_LBR_INFO_CYC_CNT : cyc) |
				     (uint64_t)type << RTIT_LBR_INFO_BR_TYPE_SHIFT |
				     RTIT_LBR_INFO_CYC_CNT_VALID |
				     (abort ? RTIT_LBR_INFO_TSX_ABORT : 0) |
				     (l->in_tx || abort ? RTIT_LBR_INFO_IN_TSX : 0);
			l->last_cycles = r->cycles;
		}
		/* InTX for the next ones: the outermost XBEGIN and XEND
		 * carry TX; an abort ends the transaction */
		if (r->kind == RTIT_SIM_INSN && (r->flags & RTIT_SIM_F_TX))
			l->in_tx = r->cls == RTIT_IC_XBEGIN;
		else if (abort)
			l->in_tx = false;
	}
}

void sim_pmu_on_state(struct rtit_sim *sim)
{
	if (!sim->cfg.pmu || !(sim->pmu.evtsel & RTIT_EVTSEL_EN))
		return;
	fold(sim);
	arm(sim);
}

int sim_pmu_msr(struct rtit_sim *sim, bool write, uint32_t msr, uint64_t *v, bool guest)
{
	struct sim_pmu *p = &sim->pmu;
	uint64_t x = *v;

	if (!sim->cfg.pmu)
		return 0;
	switch (msr) {
	case RTIT_MSR_IA32_PMC0: case RTIT_MSR_IA32_A_PMC0: case RTIT_MSR_RELOAD_PMC0:
	case RTIT_MSR_IA32_PERFEVTSEL0: case RTIT_MSR_IA32_PERF_CAPABILITIES:
	case RTIT_MSR_IA32_PERF_GLOBAL_STATUS: case RTIT_MSR_IA32_PERF_GLOBAL_CTRL:
	case RTIT_MSR_IA32_PEBS_ENABLE: case RTIT_MSR_IA32_PEBS_DATA_CFG:
		break;
	default:
		return lbr_msr(sim, write, msr, v);
	}
	fold(sim);
	if (!write) {
		switch (msr) {
		case RTIT_MSR_IA32_PMC0: case RTIT_MSR_IA32_A_PMC0: *v = p->ctr; break;
		case RTIT_MSR_RELOAD_PMC0: *v = p->reload; break;
		case RTIT_MSR_IA32_PERFEVTSEL0: *v = p->evtsel; break;
		case RTIT_MSR_IA32_PERF_CAPABILITIES: *v = PERF_CAPS; break;
		case RTIT_MSR_IA32_PERF_GLOBAL_STATUS: *v = p->global_status; break;
		case RTIT_MSR_IA32_PERF_GLOBAL_CTRL: *v = p->global_ctrl; break;
		case RTIT_MSR_IA32_PEBS_ENABLE: *v = p->pebs_enable; break;
		default: *v = p->data_cfg; break;
		}
		return 1;
	}
	switch (msr) {
	case RTIT_MSR_IA32_PMC0:
		/* 20.2.6: a write to IA32_PMCx sets bits 31:0 and copies bit
		 * 31 into the bits above (the counter's width) */
		p->ctr = (uint64_t)(int64_t)(int32_t)(uint32_t)x & CTR_MASK;
		break;
	case RTIT_MSR_IA32_A_PMC0:
		if (x & ~CTR_MASK)
			return -1;	/* beyond the counter width */
		p->ctr = x;
		break;
	case RTIT_MSR_RELOAD_PMC0:
		if (x & ~CTR_MASK)
			return -1;
		p->reload = x;
		break;
	case RTIT_MSR_IA32_PERFEVTSEL0:
		if (x >> 32)
			return -1;	/* bits 63:32 reserved (Figure 20-1) */
		p->evtsel = x;
		break;
	case RTIT_MSR_IA32_PERF_GLOBAL_CTRL:
		if (x & ~1ull)
			return -1;	/* one counter, no fixed counters */
		p->global_ctrl = x;
		break;
	case RTIT_MSR_IA32_PEBS_ENABLE:
		/* PMC0 (0), PMI after each record (60), output 00b or 01b
		 * (62:61, 20.5.5.2); the rest reserved */
		if ((x & ~(RTIT_PEBS_EN_PMC0 | RTIT_PEBS_PMI_EACH | RTIT_PEBS_OUTPUT_MASK)) ||
		    (x & RTIT_PEBS_OUTPUT_MASK) > RTIT_PEBS_OUTPUT_PT)
			return -1;
		p->pebs_enable = x;
		break;
	case RTIT_MSR_IA32_PEBS_DATA_CFG:
		/* 20.9.2.1: Memory Info, GPRs, XMMs, LBRs (bit 3) and the
		 * number of LBR entries - 1 (31:24), at most the deepest
		 * stack (D63); the rest reserved */
		if ((x & ~(RTIT_PEBS_CFG_GROUPS | RTIT_PEBS_CFG_LBR_MASK)) ||
		    ((x & RTIT_PEBS_CFG_LBR_MASK) >> RTIT_PEBS_CFG_LBR_SHIFT) >= RTIT_LBR_MAX_DEPTH)
			return -1;
		p->data_cfg = x;
		break;
	default:
		return -1;	/* read-only: capabilities, global status */
	}
	/* D16: the write takes effect when the WRMSR retires; the WRMSR
	 * itself is not counted */
	if (guest)
		p->base = sim->retired + 1;
	arm(sim);
	return 1;
}

static const int gpr_reg64[16] = {
	UC_X86_REG_RAX, UC_X86_REG_RCX, UC_X86_REG_RDX, UC_X86_REG_RBX,
	UC_X86_REG_RSP, UC_X86_REG_RBP, UC_X86_REG_RSI, UC_X86_REG_RDI,
	UC_X86_REG_R8, UC_X86_REG_R9, UC_X86_REG_R10, UC_X86_REG_R11,
	UC_X86_REG_R12, UC_X86_REG_R13, UC_X86_REG_R14, UC_X86_REG_R15,
};
static const int gpr_reg32[8] = {
	UC_X86_REG_EAX, UC_X86_REG_ECX, UC_X86_REG_EDX, UC_X86_REG_EBX,
	UC_X86_REG_ESP, UC_X86_REG_EBP, UC_X86_REG_ESI, UC_X86_REG_EDI,
};

/* Memory Info (20.9.2.2.2): the linear address of the eventing
 * instruction's memory operand, from the registers after it (the state
 * the record holds); 0 when it has none, or when it wrote a register the
 * address is made of (the address before is gone). */
static uint64_t mem_address(struct rtit_sim *sim, const struct rtit_sim_pebs *r)
{
	ZydisDecodedInstruction in;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	uint8_t buf[15];
	ZydisMachineMode mm = sim->m.mode == 64 ? ZYDIS_MACHINE_MODE_LONG_64 :
			      ZYDIS_MACHINE_MODE_LONG_COMPAT_32;
	size_t n = sizeof(buf);

	while (n && uc_mem_read(sim->uc, r->ip, buf, n) != UC_ERR_OK)
		n--;
	if (!n || !ZYAN_SUCCESS(ZydisDecoderDecodeFull(&sim->dec, buf, n, &in, ops)))
		return 0;
	for (unsigned i = 0; i < in.operand_count; i++) {
		const ZydisDecodedOperand *op = &ops[i];
		uint64_t ea;

		if (op->type != ZYDIS_OPERAND_TYPE_MEMORY || op->mem.type != ZYDIS_MEMOP_TYPE_MEM)
			continue;
		for (unsigned j = 0; j < in.operand_count; j++) {
			ZydisRegister w;
			if (ops[j].type != ZYDIS_OPERAND_TYPE_REGISTER ||
			    !(ops[j].actions & ZYDIS_OPERAND_ACTION_MASK_WRITE))
				continue;
			w = ZydisRegisterGetLargestEnclosing(mm, ops[j].reg.value);
			if ((op->mem.base != ZYDIS_REGISTER_NONE &&
			     w == ZydisRegisterGetLargestEnclosing(mm, op->mem.base)) ||
			    (op->mem.index != ZYDIS_REGISTER_NONE &&
			     w == ZydisRegisterGetLargestEnclosing(mm, op->mem.index)))
				return 0;
		}
		ea = (uint64_t)op->mem.disp.value;
		if (op->mem.base == ZYDIS_REGISTER_RIP || op->mem.base == ZYDIS_REGISTER_EIP)
			ea += r->ip + in.length;
		else if (op->mem.base != ZYDIS_REGISTER_NONE)
			ea += r->gpr[2 + ZydisRegisterGetId(op->mem.base)];
		if (op->mem.index != ZYDIS_REGISTER_NONE)
			ea += r->gpr[2 + ZydisRegisterGetId(op->mem.index)] * op->mem.scale;
		return sim->m.mode == 64 ? ea : ea & 0xffffffffull;
	}
	return 0;
}

void sim_pmu_assist(struct rtit_sim *sim, uint64_t ip)
{
	struct sim_pmu *p = &sim->pmu;
	struct rtit_sim_pebs *r = &p->rec;
	bool m64 = sim->m.mode == 64;

	memset(r, 0, sizeof(*r));
	r->mode = (uint8_t)sim->m.mode;
	r->groups = (uint8_t)(p->data_cfg & RTIT_PEBS_CFG_GROUPS);
	uc_reg_read(sim->uc, UC_X86_REG_EFLAGS, &r->gpr[0]);
	r->gpr[0] &= 0xffffffffull;
	r->gpr[1] = ip;	/* Unicorn's RIP may lag at a stop */
	for (unsigned i = 0; i < (m64 ? 16u : 8u); i++)
		uc_reg_read(sim->uc, m64 ? gpr_reg64[i] : gpr_reg32[i], &r->gpr[2 + i]);
	if (!m64)
		for (unsigned i = 0; i < 18; i++)
			r->gpr[i] &= 0xffffffffull;
	r->ip = sim->last_ip;
	r->counters = 1;	/* PMC0 overflowed */
	r->tsc = sim->tsc;
	r->mem[0] = mem_address(sim, r);
	/* MemAuxInfo, MemAccessLatency, TSXAuxInfo: no caches, no latency
	 * and no transaction cycles in the model: 0 (D53) */
	for (unsigned i = 0; i < 16; i++) {
		uint64_t q[2] = { 0, 0 };
		uc_reg_read(sim->uc, UC_X86_REG_XMM0 + (int)i, q);
		r->xmm[2 * i] = q[0];
		r->xmm[2 * i + 1] = q[1];
	}
	if (r->groups & RTIT_PEBS_G_LBR) {
		const struct sim_lbr *l = &p->lbr;

		r->nlbr = (uint8_t)(((p->data_cfg & RTIT_PEBS_CFG_LBR_MASK) >>
				     RTIT_PEBS_CFG_LBR_SHIFT) + 1);
		for (unsigned x = 0; x < r->nlbr && x < l->depth; x++) {
			unsigned s = lbr_slot(l, x);
			r->lbr[3 * x] = l->from[s];
			r->lbr[3 * x + 1] = l->to[s];
			r->lbr[3 * x + 2] = l->info[s];
		}
	}
	p->have_rec = true;
	/* the counter wrapped to 0 at due; PEBS via Intel PT reloads it
	 * from MSR_RELOAD_PMC0 (20.5.5.2), GLOBAL_STATUS says PMC0 */
	p->global_status |= 1;
	p->ctr = p->reload;
	p->base = sim->retired;
	arm(sim);
}

const struct rtit_sim_pebs *rtit_sim_pebs_record(const struct rtit_sim *sim)
{
	return sim && sim->pmu.have_rec ? &sim->pmu.rec : NULL;
}

/* The PEBS assist (pmu.c) with the flow about to execute at ip: the
 * record, announced by an RTIT_EV_PEBS record alone in its batch. */
void sim_pebs_now(struct rtit_sim *sim, uint64_t ip)
{
	const struct rtit_sim_consumer *c = &sim->cfg.consumer;
	struct rtit_pebs_item it[RTIT_PEBS_MAX_ITEMS];
	const struct rtit_sim_pebs *p = &sim->pmu.rec;

	sim_flush(sim);
	sim_pmu_assist(sim, ip);
	struct rtit_sim_rec *r = sim_event_rec(sim, RTIT_EV_PEBS, ip, ip);
	r->value = p->ip;
	r->msr = rtit_pebs_digest(it, rtit_pebs_items(p, it));
	r->vector = p->groups;
	if (c->on_pebs)
		c->on_pebs(c->opaque, p, r);
	sim_flush(sim);
}
