/*
 * rtm.c - the write set of an RTM transaction (Intel TSX, SDM Vol. 1
 * chapter 16): what an abort must undo in memory.
 *
 * While a transaction is active a UC_HOOK_MEM_WRITE hook over all memory
 * sees every store before it happens; the first store to a 64-byte line
 * saves the line.  An abort writes the saved lines back; a commit forgets
 * them.  The hook exists only between the outermost XBEGIN and its end,
 * so runs without transactions pay nothing.  The write set is bounded
 * like the hardware's (the L1 data cache, 16.3.8.2 "runtime
 * considerations"): the line past the capacity requests an abort with
 * the CAPACITY status, at the instruction that stored (RIP is exact at
 * a store with precise_faults, docs/sim.md).  Lines stored after it in
 * the same translation block are still saved, so the rollback is whole.
 */
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

static inline uint32_t line_hash(uint64_t a)
{
	return (uint32_t)(((a >> 6) * 0x9e3779b97f4a7c15ull) >> 40);
}

static int slots_grow(struct sim_rtm *t)
{
	uint32_t n = t->nslots ? t->nslots * 2 : 1024;
	uint32_t *s = calloc(n, sizeof(*s));
	if (!s)
		return -RTIT_ERR_NOMEM;
	for (uint32_t i = 0; i < t->nlines; i++) {
		uint32_t h = line_hash(t->lines[i].addr) & (n - 1);
		while (s[h])
			h = (h + 1) & (n - 1);
		s[h] = i + 1;
	}
	free(t->slots);
	t->slots = s;
	t->nslots = n;
	return 0;
}

/* Saves the line at @addr (64-byte aligned) unless it is saved already. */
static void save_line(struct rtit_sim *sim, uint64_t addr)
{
	struct sim_rtm *t = &sim->rtm;
	uint32_t h = line_hash(addr) & (t->nslots - 1), s;

	while ((s = t->slots[h]) != 0) {
		if (t->lines[s - 1].addr == addr)
			return;
		h = (h + 1) & (t->nslots - 1);
	}
	if (t->nlines == t->lines_cap) {
		uint32_t n = t->lines_cap * 2;
		struct sim_rtm_line *l = realloc(t->lines, n * sizeof(*l));
		if (!l)
			goto full;
		t->lines = l;
		t->lines_cap = n;
	}
	struct sim_rtm_line *l = &t->lines[t->nlines];
	/* an unmapped line: the store faults, and the fault aborts */
	if (uc_mem_read(sim->uc, addr, l->old, sizeof(l->old)) != UC_ERR_OK)
		return;
	l->addr = addr;
	t->slots[h] = ++t->nlines;
	if (t->nlines * 2 > t->nslots && slots_grow(t) < 0)
		goto full;
	if (t->nlines <= t->capacity)
		return;
full:
	if (!t->overflow) {
		uint64_t ip = 0;
		t->overflow = true;
		uc_reg_read(sim->uc, sim->m.mode == 64 ? UC_X86_REG_RIP : UC_X86_REG_EIP, &ip);
		t->overflow_ip = sim->m.mode == 64 ? ip : ip & 0xffffffffull;
		if (sim->req == SIM_REQ_NONE)
			sim->req = SIM_REQ_TX_ABORT;
		uc_emu_stop(sim->uc);
	}
}

static void on_tx_write(uc_engine *uc, uc_mem_type type, uint64_t addr, int size,
			int64_t value, void *opaque)
{
	struct rtit_sim *sim = opaque;
	(void)uc;
	(void)type;
	(void)value;
	if (!sim->rtm.depth || size <= 0)
		return;
	uint64_t first = addr & ~63ull, last = (addr + (uint64_t)size - 1) & ~63ull;
	for (uint64_t a = first;; a += 64) {
		save_line(sim, a);
		if (a == last)
			break;
	}
}

int sim_rtm_log_start(struct rtit_sim *sim)
{
	struct sim_rtm *t = &sim->rtm;

	t->nlines = 0;
	t->overflow = false;
	t->capacity = sim->cfg.rtm_lines ? sim->cfg.rtm_lines : RTIT_SIM_RTM_LINES;
	if (!t->lines) {
		t->lines_cap = 64;
		t->lines = malloc(t->lines_cap * sizeof(*t->lines));
		if (!t->lines)
			return -RTIT_ERR_NOMEM;
	}
	if (!t->slots && slots_grow(t) < 0)
		return -RTIT_ERR_NOMEM;
	memset(t->slots, 0, t->nslots * sizeof(*t->slots));
	if (!t->hooked) {
		if (uc_hook_add(sim->uc, &t->h_write, UC_HOOK_MEM_WRITE, (void *)on_tx_write,
				sim, 1, 0) != UC_ERR_OK)
			return -RTIT_ERR_INTERNAL;
		t->hooked = true;
	}
	return 0;
}

void sim_rtm_log_stop(struct rtit_sim *sim)
{
	struct sim_rtm *t = &sim->rtm;

	if (t->hooked) {
		uc_hook_del(sim->uc, t->h_write);
		t->hooked = false;
	}
	t->nlines = 0;
	t->overflow = false;
}

void sim_rtm_log_rollback(struct rtit_sim *sim)
{
	struct sim_rtm *t = &sim->rtm;

	/* each line was saved once, before its first store: any order */
	for (uint32_t i = 0; i < t->nlines; i++)
		uc_mem_write(sim->uc, t->lines[i].addr, t->lines[i].old, sizeof(t->lines[i].old));
	sim_rtm_log_stop(sim);
}

void sim_rtm_fini(struct rtit_sim *sim)
{
	struct sim_rtm *t = &sim->rtm;

	if (t->regs)
		uc_context_free(t->regs);
	free(t->lines);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

/*
 * RTM_ABORT_PROCESSING (SDM Vol. 2 XBEGIN): the registers and memory go
 * back to the outermost XBEGIN, EAX = @status (NESTED added when the
 * abort comes from inside a nested transaction), RTM_NEST_COUNT = 0, and
 * execution goes on at the fallback.  Records the TSX_ABORT event (ip =
 * @at, the aborting point; next_ip = the fallback).  Returns the fallback.
 */
uint64_t sim_tx_abort(struct rtit_sim *sim, uint64_t at, uint32_t status)
{
	struct sim_rtm *t = &sim->rtm;
	int depth = t->depth;

	if (depth > 1)
		status |= RTIT_RTM_ABORT_NESTED;
	t->depth = 0;
	uc_context_restore(sim->uc, t->regs);
	sim_rtm_log_rollback(sim);
	/* EAX is written as a 32-bit register: RAX bits 63:32 clear */
	sim_reg_set(sim, R_AX, status);
	struct rtit_sim_rec *r = sim_rec_new(sim);
	r->kind = RTIT_SIM_EVENT;
	r->cls = RTIT_EV_TSX_ABORT;
	r->ip = at;
	r->next_ip = t->fallback;
	r->value = status;
	r->vector = (uint8_t)depth;
	r->cycles = sim->cycles;
	r->tsc = sim->tsc;
	sim->events++;
	sim_rec_done(sim);
	sim_reg_set(sim, R_IP, t->fallback);
	return t->fallback;
}

/* Whether the hooked instruction analysed as @si aborts an
 * active transaction, and with which status in *status: SDM Vol. 1
 * 16.3.8.1 lists CPUID and PAUSE (always), and as "may abort" the
 * privileged and ring-changing instructions, far transfers, INT n, IRET,
 * I/O, MOV to CRs and DRs, descriptor-table loads, HLT, MONITOR, MWAIT,
 * RDMSR, WRMSR, XSETBV, RSM: rtitsim aborts on all of them (D42).  RDTSC,
 * RDTSCP, RDRAND, RDSEED, PTWRITE, RDPMC and the RTM instructions
 * themselves do not abort. */
bool sim_tx_aborts(const struct isa_insn *si, uint32_t *status)
{
	*status = 0;
	if (!(si->flags & (ISA_I_SPECIAL | ISA_I_PRIV | ISA_I_TXABORT)))
		return false;	/* hooked for an event or the end address */
	if (si->flags & ISA_I_TXABORT)
		return true;
	if (si->cls == RTIT_IC_XBEGIN || si->cls == RTIT_IC_XEND || si->cls == RTIT_IC_PTWRITE ||
	    (si->flags & ISA_I_TXKEEP))
		return false;
	if (si->flags & ISA_I_TXDEBUG)
		*status = RTIT_RTM_ABORT_DEBUG;	/* Table 16-1 bit 4 */
	return true;
}

/* XBEGIN, XEND, XABORT, XTEST (SDM Vol. 2; Vol. 1 16.3) at @ip, class
 * @cls, fallback (XBEGIN) @target.  Without RTM each is #UD.  Sets RIP,
 * or stops the run. */
void sim_emulate_rtm(struct rtit_sim *sim, const ZydisDecodedInstruction *in,
			uint64_t ip, int cls, uint64_t target)
{
	struct sim_rtm *t = &sim->rtm;
	uint64_t next = ip + in->length;
	struct rtit_sim_rec *r;

	if (!sim->cfg.rtm) {
		/* CPUID.(EAX=7,ECX=0):EBX.RTM[bit 11] = 0 (and HLE = 0 for
		 * XTEST): Silvermont */
		sim_exception(sim, 6, ip, 0, 0, "RTM instruction on a CPU without TSX");
		return;
	}
	switch (in->mnemonic) {
	case ZYDIS_MNEMONIC_XBEGIN:
		if (sim->m.mode != 64) {
			target &= 0xffffffffull;
			if (in->operand_width == 16)
				target &= 0xffff;
		} else if ((uint64_t)((int64_t)(target << 16) >> 16) != target) {
			sim_gp_fault(sim, ip, "XBEGIN: the fallback address is not canonical");
			return;
		}
		if (t->depth >= RTIT_SIM_RTM_MAX_NEST) {
			sim_tx_abort(sim, ip, 0);	/* nesting too deep: abort */
			return;
		}
		if (!t->depth) {
			if ((!t->regs && uc_context_alloc(sim->uc, &t->regs) != UC_ERR_OK) ||
			    uc_context_save(sim->uc, t->regs) != UC_ERR_OK ||
			    sim_rtm_log_start(sim) < 0) {
				sim_stop_with(sim, RTIT_SIM_STOP_ERROR, ip,
					  "XBEGIN at 0x%" PRIx64 ": cannot save the state", ip);
				return;
			}
			t->fallback = target;
		}
		t->depth++;
		r = sim_special_rec(sim, ip, in->length, cls, next, false);
		if (t->depth == 1)
			r->flags |= RTIT_SIM_F_TX;
		r->vector = (uint8_t)t->depth;
		break;
	case ZYDIS_MNEMONIC_XEND:
		if (!t->depth) {
			sim_gp_fault(sim, ip, "XEND outside a transaction");
			return;
		}
		if (!--t->depth)
			sim_rtm_log_stop(sim);	/* committed */
		r = sim_special_rec(sim, ip, in->length, cls, next, false);
		if (!t->depth)
			r->flags |= RTIT_SIM_F_TX;
		r->vector = (uint8_t)t->depth;
		break;
	case ZYDIS_MNEMONIC_XABORT:
		if (t->depth) {
			sim_tx_abort(sim, ip, RTIT_RTM_ABORT_XABORT |
					  (uint32_t)(in->raw.imm[0].value.u & 0xff) << 24);
			return;
		}
		sim_special_rec(sim, ip, in->length, cls, next, false);	/* a NOP */
		break;
	default: {	/* XTEST: ZF = not transactional; CF OF SF PF AF = 0 */
		uint64_t f = sim_reg_get(sim, R_FLAGS) & ~0x8d5ull;
		sim_reg_set(sim, R_FLAGS, t->depth ? f : f | 0x40);
		sim_special_rec(sim, ip, in->length, cls, next, false);
		break;
	}
	}
	sim_rec_done(sim);
	sim_reg_set(sim, R_IP, next);
}
