/*
 * sim.c - the run loop: Unicorn with a block hook, the block cache, records
 * in batches, and the platform model (CPL, CR0/CR3, interrupt table,
 * SYSCALL/SYSENTER MSRs, exceptions with real stack frames, IRET, injected
 * events, the clock).
 *
 * Design (docs/sim.md): the block hook finalises the previous block (every
 * instruction of it retired; the last one's outcome is the new block's
 * address) and registers the new one.  Instructions Unicorn cannot model
 * ("special": far transfers, INT, IRET, SYSCALL..., MOV CR, MSRs, HLT,
 * PTWRITE, RDTSC) get a code hook on their own address, installed when the
 * block is first analysed (the block is then retranslated), and are
 * emulated by the model.  Faults stop the emulator, retire the prefix of the
 * block before the faulting IP, and are delivered between uc_emu_start
 * calls, as are injected events.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>
#include <signal.h>
#include <unistd.h>

#include "sim_internal.h"
#include "rtit/pebs.h"

#define KCS 0x08
#define KSS 0x10
#define UCS64 0x33
#define USS64 0x2b
#define UCS32 0x1b
#define USS32 0x23

#define EFL_TF (1u << 8)
#define EFL_IF RTIT_SIM_RFLAGS_IF
#define EFL_OF (1u << 11)
#define EFL_IOPL (3u << 12)
#define EFL_RF (1u << 16)
#define EFL_FIXED1 (1u << 1)		/* reads as 1 */
/* What POPF may load (SDM Vol. 2B POPF, protected mode): CF PF AF ZF SF
 * TF IF DF OF IOPL NT AC ID; not RF (cleared), VM, VIF, VIP (kept). */
#define EFL_POPF_MASK 0x247fd5u

#define EFL_NT (1u << 14)
#define CR0_TS (1ull << 3)
#define CR0_PE 1ull
#define CR0_PG (1ull << 31)

static const int reg64[R_NUM] = {
	UC_X86_REG_RAX, UC_X86_REG_RCX, UC_X86_REG_RDX, UC_X86_REG_RBX,
	UC_X86_REG_RSP, UC_X86_REG_RBP, UC_X86_REG_RSI, UC_X86_REG_RDI,
	UC_X86_REG_R8, UC_X86_REG_R9, UC_X86_REG_R10, UC_X86_REG_R11,
	UC_X86_REG_R12, UC_X86_REG_R13, UC_X86_REG_R14, UC_X86_REG_R15,
	UC_X86_REG_RIP, UC_X86_REG_EFLAGS
};
static const int reg32[R_NUM] = {
	UC_X86_REG_EAX, UC_X86_REG_ECX, UC_X86_REG_EDX, UC_X86_REG_EBX,
	UC_X86_REG_ESP, UC_X86_REG_EBP, UC_X86_REG_ESI, UC_X86_REG_EDI,
	-1, -1, -1, -1, -1, -1, -1, -1,
	UC_X86_REG_EIP, UC_X86_REG_EFLAGS
};

static uint64_t rget(struct rtit_sim *sim, int r)
{
	uint64_t v = 0;
	int id = sim->m.mode == 64 ? reg64[r] : reg32[r];
	if (id >= 0)
		uc_reg_read(sim->uc, id, &v);
	if (sim->m.mode != 64 || r == R_FLAGS)
		v &= 0xffffffffull;
	if (r == R_IP)
		v += sim->m.cs_base;	/* a LIP (16-bit mode, init.c) */
	return v;
}

static void rset(struct rtit_sim *sim, int r, uint64_t v)
{
	int id = sim->m.mode == 64 ? reg64[r] : reg32[r];
	if (r == R_IP)
		v -= sim->m.cs_base;
	if (sim->m.mode != 64)
		v &= 0xffffffffull;
	if (id >= 0)
		uc_reg_write(sim->uc, id, &v);
}

uint64_t sim_reg_get(struct rtit_sim *sim, int r)
{
	return rget(sim, r);
}

void sim_reg_set(struct rtit_sim *sim, int r, uint64_t v)
{
	rset(sim, r, v);
}

int sim_seterr(struct rtit_sim *sim, int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(sim->errmsg, sizeof(sim->errmsg), fmt, ap);
	va_end(ap);
	return err;
}

const char *rtit_sim_errmsg(const struct rtit_sim *sim)
{
	return sim ? sim->errmsg : "no simulator";
}

void *rtit_sim_uc(struct rtit_sim *sim)
{
	return sim->uc;
}

static const char *const vecname[32] = {
	"#DE", "#DB", "NMI", "#BP", "#OF", "#BR", "#UD", "#NM", "#DF", "#09",
	"#TS", "#NP", "#SS", "#GP", "#PF", "#15", "#MF", "#AC", "#MC", "#XM",
	"#VE", "#CP", "#22", "#23", "#24", "#25", "#26", "#27", "#28", "#29",
	"#SX", "#31"
};

/* ---------------------------------------------------------------- config */

void rtit_sim_config_default(struct rtit_sim_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->mode = 64;
	cfg->budget = 100000000ull;
	cfg->deliver = RTIT_SIM_PER_BATCH;
	cfg->batch_cap = 1024;
	cfg->cr0 = CR0_PE | CR0_PG;
	cfg->stack_top = 0x80000000ull;
	cfg->stack_size = 0x10000;
	cfg->precise_faults = true;
	for (int i = 0; i < RTIT_SIM_NUM_CLASSES; i++)
		cfg->clock.cpi[i] = 1;
	cfg->clock.tsc_ratio = 1;
	cfg->clock.core_ratio = 1;
	cfg->clock.art_num = 1;
	cfg->clock.art_den = 1;
}

/* --------------------------------------------------------------- records */

static void flush(struct rtit_sim *sim)
{
	if (sim->pmu.lbr.ctl & RTIT_LBR_CTL_EN)
		sim_lbr_scan(sim, sim->batch, sim->nbatch);
	if (sim->nbatch && sim->cfg.consumer.on_batch)
		sim->cfg.consumer.on_batch(sim->batch, sim->nbatch,
					   sim->cfg.consumer.opaque);
	sim->nbatch = 0;
}

static inline struct rtit_sim_rec *rec_new(struct rtit_sim *sim)
{
	if (sim->nbatch == sim->cfg.batch_cap)
		flush(sim);
	struct rtit_sim_rec *r = &sim->batch[sim->nbatch++];
	*r = sim->tmpl;
	return r;
}

static inline void rec_done(struct rtit_sim *sim)
{
	if (sim->cfg.deliver == RTIT_SIM_PER_INSN)
		flush(sim);
}

/* Advances the clock by n core cycles; the TSC runs tsc_ratio/core_ratio
 * ticks per core cycle. */
static inline void clock_on_cycles(struct rtit_sim *sim, uint64_t n)
{
	sim->cycles += n;
	if (sim->cfg.clock.tsc_ratio == sim->core_ratio) {
		sim->tsc += n;
		return;
	}
	sim->tsc_frac += n * sim->cfg.clock.tsc_ratio;
	if (sim->tsc_frac >= sim->core_ratio) {
		sim->tsc += sim->tsc_frac / sim->core_ratio;
		sim->tsc_frac %= sim->core_ratio;
	}
}

/* Refreshes the record template after a model state change. */
static void tmpl_on_state(struct rtit_sim *sim)
{
	struct rtit_sim_rec *t = &sim->tmpl;
	memset(t, 0, sizeof(*t));
	t->cr3 = sim->m.cr3;
	t->cpl = (uint8_t)sim->m.cpl;
	t->mode = (uint8_t)sim->m.mode;
	t->flags = (sim->m.cr0 & CR0_PG) ? RTIT_SIM_F_CR0_PG : 0;
	if (rget(sim, R_FLAGS) & EFL_IF)
		t->flags |= RTIT_SIM_F_IF;
	sim_pmu_on_state(sim);	/* the CPL USR/OS filter on */
	if (sim->sgx.cur >= 0)
		t->flags |= RTIT_SIM_F_ENCLAVE;
}

/* Whether a COND instruction was taken, from the state right after it
 * (flags are unchanged by Jcc; LOOP has decremented the count). */
static bool cond_taken(struct rtit_sim *sim, uint8_t cc)
{
	uint64_t f = rget(sim, R_FLAGS), cnt = rget(sim, R_CX);
	bool cf = f & 1, pf = f & 4, zf = f & 0x40, sf = f & 0x80, of = f & 0x800;
	if (cc & ISA_CC_A16)
		cnt &= 0xffff;
	else if (cc & ISA_CC_A32)
		cnt &= 0xffffffffull;
	bool t;
	switch (cc & ISA_CC_MASK) {
	case ISA_CC_LOOP: return cnt != 0;
	case ISA_CC_LOOPE: return cnt != 0 && zf;
	case ISA_CC_LOOPNE: return cnt != 0 && !zf;
	case ISA_CC_JCXZ: return cnt == 0;
	default: break;
	}
	switch ((cc & 0xf) >> 1) {
	case 0: t = of; break;
	case 1: t = cf; break;
	case 2: t = zf; break;
	case 3: t = cf || zf; break;
	case 4: t = sf; break;
	case 5: t = pf; break;
	case 6: t = sf != of; break;
	default: t = zf || sf != of; break;
	}
	return (cc & 1) ? !t : t;
}

static inline const struct sim_block *blk(struct rtit_sim *sim, uint32_t idx1)
{
	return &sim->cache.blocks[idx1 - 1];
}

/* Emits instructions [from, to) of block b; the last instruction of the
 * block (when to == n) continues at next_ip. */
static void emit_insns(struct rtit_sim *sim, const struct sim_block *b,
		       uint32_t from, uint32_t to, uint64_t next_ip)
{
	const struct isa_insn *in = &sim->cache.insns[b->first];
	const bool one = sim->cfg.deliver == RTIT_SIM_PER_INSN;
	/* a REP string instruction still iterating has not retired */
	if (to == b->n && to > from && (in[to - 1].flags & ISA_I_REP) &&
	    next_ip == in[to - 1].ip)
		to--;
	const bool same_clock = sim->cfg.clock.tsc_ratio == sim->core_ratio;
	uint32_t i = from;
	while (i < to) {
		if (sim->nbatch == sim->cfg.batch_cap)
			flush(sim);
		size_t room = one ? 1 : sim->cfg.batch_cap - sim->nbatch;
		uint32_t end = to - i > room ? i + (uint32_t)room : to;
		struct rtit_sim_rec *r = &sim->batch[sim->nbatch];
		sim->nbatch += end - i;
		for (; i < end; i++, r++) {
			const struct isa_insn *si = &in[i];
			uint64_t fall = si->ip + si->len;
			r->ip = si->ip;
			r->next_ip = (i + 1 == b->n) ? next_ip : fall;
			r->cr3 = sim->tmpl.cr3;
			r->value = 0;
			r->msr = 0;
			r->kind = RTIT_SIM_INSN;
			r->cls = si->cls;
			r->len = si->len;
			r->flags = sim->tmpl.flags | si->rflags;
			r->cpl = sim->tmpl.cpl;
			r->mode = sim->tmpl.mode;
			r->vector = 0;
			r->pad0 = 0;
			r->pad1 = 0;
			if (si->cls == RTIT_IC_COND &&
			    (r->next_ip != fall ||
			     (si->target == fall && i + 1 == b->n &&
			      sim->live_regs && cond_taken(sim, si->cc))))
				r->flags |= RTIT_SIM_F_TAKEN;
			if (same_clock) {
				sim->cycles += si->cpi;
				sim->tsc += si->cpi;
			} else {
				clock_on_cycles(sim, si->cpi);
			}
			r->cycles = sim->cycles;
			r->tsc = sim->tsc;
		}
		if (one)
			flush(sim);
	}
	sim->retired += to - from;
	if (to > from) {
		sim->last_shadow = in[to - 1].flags & ISA_I_SHADOW;
		sim->last_ip = in[to - 1].ip;
	}
	if (sim->cfg.deliver == RTIT_SIM_PER_BLOCK)
		flush(sim);
}

static int insn_index(const struct rtit_sim *sim, const struct sim_block *b,
		      uint64_t ip)
{
	const struct isa_insn *in = &sim->cache.insns[b->first];
	for (uint32_t i = 0; i < b->n; i++)
		if (in[i].ip == ip)
			return (int)i;
	return -1;
}

/* The pending block stopped before ip: its instructions before ip retired
 * (all of them if ip is outside it: the last one went to ip). */
static void pending_retire_before(struct rtit_sim *sim, uint64_t ip)
{
	if (!sim->pending)
		return;
	const struct sim_block *b = blk(sim, sim->pending);
	int k = insn_index(sim, b, ip);
	sim->pending = 0;
	if (k >= 0)
		emit_insns(sim, b, 0, (uint32_t)k, ip);
	else
		emit_insns(sim, b, 0, b->n, ip);
}

/* ------------------------------------------------------------- stopping */

static void stop_with(struct rtit_sim *sim, int why, uint64_t ip,
		      const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void stop_with(struct rtit_sim *sim, int why, uint64_t ip,
		      const char *fmt, ...)
{
	va_list ap;
	sim->st.stop = why;
	sim->st.ip = ip;
	va_start(ap, fmt);
	vsnprintf(sim->st.msg, sizeof(sim->st.msg), fmt, ap);
	va_end(ap);
	sim->req = SIM_REQ_STOP;
	uc_emu_stop(sim->uc);
}

static void request(struct rtit_sim *sim, int req, uint64_t ip)
{
	sim->req = req;
	sim->resume_ip = ip;
	uc_emu_stop(sim->uc);
}

/* ---------------------------------------------------------------- hooks */

static void on_code(uc_engine *uc, uint64_t addr, uint32_t size, void *opaque);

static int hooked_find(const struct rtit_sim *sim, uint64_t addr, size_t *pos)
{
	size_t lo = 0, hi = sim->nhooked;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (sim->hooked[mid] < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	*pos = lo;
	return lo < sim->nhooked && sim->hooked[lo] == addr;
}

/* Installs a code hook on exactly addr; returns 1 if new, 0 if there
 * already was one, < 0 on error. */
static int hook_at(struct rtit_sim *sim, uint64_t addr)
{
	size_t pos;
	if (hooked_find(sim, addr, &pos))
		return 0;
	if (sim->nhooked == sim->hooked_cap) {
		size_t ncap = sim->hooked_cap ? sim->hooked_cap * 2 : 64;
		uint64_t *nh = realloc(sim->hooked, ncap * sizeof(*nh));
		if (!nh)
			return -RTIT_ERR_NOMEM;
		sim->hooked = nh;
		sim->hooked_cap = ncap;
	}
	uc_hook h;
	if (uc_hook_add(sim->uc, &h, UC_HOOK_CODE, (void *)on_code, sim,
			addr, addr) != UC_ERR_OK)
		return -RTIT_ERR_INTERNAL;
	memmove(&sim->hooked[pos + 1], &sim->hooked[pos],
		(sim->nhooked - pos) * sizeof(*sim->hooked));
	sim->hooked[pos] = addr;
	sim->nhooked++;
	return 1;
}

/* The next instruction count at which the run must stop inside a block:
 * the budget or an injected event. */
static uint64_t next_count_stop(const struct rtit_sim *sim)
{
	uint64_t n = sim->cfg.budget;
	if (sim->irq_deferred >= 0 && sim->irq_after > sim->retired &&
	    sim->irq_after < n)
		n = sim->irq_after;
	for (int i = 0; i < sim->ninj; i++)
		if (!sim->inj_done[i] && sim->inj[i].trigger == RTIT_SIM_AT_INSN &&
		    sim->inj[i].at < n && sim->inj[i].at >= sim->retired)
			n = sim->inj[i].at;
	if (sim->pmu_due < n && sim->pmu_due >= sim->retired)
		n = sim->pmu_due;	/* a PEBS assist (pmu.c) */
	return n;
}

static int inj_due_count(const struct rtit_sim *sim, uint64_t count)
{
	for (int i = 0; i < sim->ninj; i++)
		if (!sim->inj_done[i] && sim->inj[i].trigger == RTIT_SIM_AT_INSN &&
		    sim->inj[i].at == count)
			return i;
	return -1;
}

static int inj_due_ip(const struct rtit_sim *sim, uint64_t ip)
{
	for (int i = 0; i < sim->ninj; i++)
		if (!sim->inj_done[i] && sim->inj[i].trigger == RTIT_SIM_AT_IP &&
		    sim->inj[i].at == ip)
			return i;
	return -1;
}

static void on_block(uc_engine *uc, uint64_t addr, uint32_t size, void *opaque)
{
	struct rtit_sim *sim = opaque;

	if (sim->req != SIM_REQ_NONE) {
		/* a stop requested earlier may have been cancelled by a RIP
		 * write (Unicorn's quit_request): ask again, before this
		 * block runs */
		uc_emu_stop(uc);
		return;
	}
	uint32_t prev = sim->pending;
	if (prev) {
		const struct sim_block *p = blk(sim, prev);
		sim->pending = 0;
		sim->live_regs = true;
		emit_insns(sim, p, 0, p->n, addr);
		sim->live_regs = false;
	}
	if (sim->retired >= sim->cfg.budget) {
		stop_with(sim, RTIT_SIM_STOP_BUDGET, addr,
			  "instruction budget of %" PRIu64 " exhausted at 0x%" PRIx64,
			  sim->cfg.budget, addr);
		return;
	}
	if (sim->irq_deferred >= 0 && (rget(sim, R_FLAGS) & EFL_IF) &&
	    sim->last_shadow && sim->irq_after <= sim->retired)
		sim->irq_after = sim->retired + 1;	/* SDM 6.8.3: STI shadow */
	if (inj_due_count(sim, sim->retired) >= 0 || sim->retired == sim->pmu_due ||
	    (sim->irq_deferred >= 0 && sim->retired >= sim->irq_after &&
	     (rget(sim, R_FLAGS) & EFL_IF)) ||
	    (sim->uintr.rr && sim_uintr_due(sim))) {
		request(sim, SIM_REQ_EVENT, addr);
		return;
	}
	bool fresh = false;
	const struct sim_block *b = NULL;
	struct sim_block *pb = prev ? &sim->cache.blocks[prev - 1] : NULL;
	if (pb && pb->succ_addr[0] == addr && pb->succ_size[0] == size && pb->succ[0])
		b = blk(sim, pb->succ[0]);
	else if (pb && pb->succ_addr[1] == addr && pb->succ_size[1] == size && pb->succ[1])
		b = blk(sim, pb->succ[1]);
	if (!b || b->addr != addr || b->size != size) {
		b = sim_block_get(sim, addr, size, &fresh);
		if (!b) {
			stop_with(sim, RTIT_SIM_STOP_ERROR, addr, "out of memory");
			return;
		}
		if (prev) {
			/* the blocks array may have moved */
			pb = &sim->cache.blocks[prev - 1];
			int slot = pb->succ[0] ? 1 : 0;
			if (pb->succ[0] && pb->succ[1]) {
				pb->succ_addr[1] = pb->succ_addr[0];
				pb->succ_size[1] = pb->succ_size[0];
				pb->succ[1] = pb->succ[0];
				slot = 0;
			}
			pb->succ_addr[slot] = addr;
			pb->succ_size[slot] = size;
			pb->succ[slot] = (uint32_t)(b - sim->cache.blocks) + 1;
		}
	}
	int added = 0;
	if (fresh && b->nspecial) {
		const struct isa_insn *in = &sim->cache.insns[b->first];
		for (uint32_t i = 0; i < b->n; i++) {
			if (!(in[i].flags & (ISA_I_SPECIAL | ISA_I_RISKY | ISA_I_PRIV |
					     ISA_I_TXABORT)))
				continue;
			int r = hook_at(sim, in[i].ip);
			if (r < 0) {
				stop_with(sim, RTIT_SIM_STOP_ERROR, addr,
					  "cannot hook 0x%" PRIx64, in[i].ip);
				return;
			}
			added |= r;
		}
	}
	uint64_t stopn = next_count_stop(sim);
	if (stopn < sim->retired + b->n) {
		const struct isa_insn *in = &sim->cache.insns[b->first];
		int r = hook_at(sim, in[stopn - sim->retired].ip);
		if (r < 0) {
			stop_with(sim, RTIT_SIM_STOP_ERROR, addr, "cannot hook");
			return;
		}
		added |= r;
	}
	if (added) {
		/* retranslate the block with its code hooks; the stop in a
		 * block hook happens before the block executes */
		uc_ctl_remove_cache(uc, addr, addr + (size ? size : 1));
		request(sim, SIM_REQ_RESTART, addr);
		return;
	}
	sim->pending = (uint32_t)(b - sim->cache.blocks) + 1;
	sim->pending_base = sim->retired;
}

static void on_intr(uc_engine *uc, uint32_t intno, void *opaque)
{
	struct rtit_sim *sim = opaque;
	uint64_t ip = rget(sim, R_IP);
	if (sim->req == SIM_REQ_TX_ABORT) {
		/* after the store that overflowed the RTM write set: rolled
		 * back with it */
		uc_emu_stop(uc);
		return;
	}
	sim->fault_vec = (int)intno;
	sim->fault_ip = ip;
	sim->fault_err = 0;
	sim->fault_addr_valid = false;
	snprintf(sim->fault_why, sizeof(sim->fault_why), "raised by the CPU");
	request(sim, SIM_REQ_FAULT, ip);
}

static bool on_unmapped(uc_engine *uc, uc_mem_type type, uint64_t addr,
			int size, int64_t value, void *opaque)
{
	struct rtit_sim *sim = opaque;
	const char *what = "read of";
	uint32_t err = 0;
	bool prot = false;
	if (sim->req == SIM_REQ_TX_ABORT)
		return false;	/* as in on_intr */
	switch (type) {
	case UC_MEM_WRITE_UNMAPPED: what = "write to"; err = 2; break;
	case UC_MEM_FETCH_UNMAPPED: what = "fetch from"; err = 0x10; break;
	case UC_MEM_WRITE_PROT: what = "write to"; err = 3; prot = true; break;
	case UC_MEM_READ_PROT: err = 1; prot = true; break;
	case UC_MEM_FETCH_PROT: what = "fetch from"; err = 0x11; prot = true; break;
	default: break;
	}
	if (sim->m.cpl == 3)
		err |= 4;
	sim->fault_vec = 14;
	sim->fault_addr = addr;
	sim->fault_addr_valid = true;
	sim->fault_err = err;
	if (sim->m.mode == 64 &&
	    (uint64_t)((int64_t)(addr << 16) >> 16) != addr) {
		/* SDM 3.3.7.1: a non-canonical address is #GP(0), not #PF */
		sim->fault_vec = 13;
		sim->fault_err = 0;
		sim->fault_addr_valid = false;
		snprintf(sim->fault_why, sizeof(sim->fault_why),
			 "%s non-canonical address 0x%" PRIx64, what, addr);
		sim->req = SIM_REQ_FAULT;
		sim->fault_ip = type == UC_MEM_FETCH_UNMAPPED ||
				type == UC_MEM_FETCH_PROT ? UINT64_MAX : rget(sim, R_IP);
		return false;
	}
	snprintf(sim->fault_why, sizeof(sim->fault_why), "%s %s address 0x%" PRIx64,
		 what, prot ? "protected" : "unmapped", addr);
	/* RIP as stored by the last synchronisation point (a memory access
	 * with precise_faults, or the code hook of a risky instruction);
	 * after uc_emu_start returns it can be the block start or the next
	 * instruction instead */
	sim->req = SIM_REQ_FAULT;
	sim->fault_ip = type == UC_MEM_FETCH_UNMAPPED || type == UC_MEM_FETCH_PROT ?
			UINT64_MAX : rget(sim, R_IP);
	return false;
}

static void on_sync(uc_engine *uc, uc_mem_type type, uint64_t addr, int size,
		    int64_t value, void *opaque)
{
	/* never called (empty range); its presence makes Unicorn keep the
	 * guest PC exact at every memory access */
}

/* ------------------------------------------- Unicorn's exception memory */

/*
 * QEMU remembers the last exception it raised (env->old_exception) to turn
 * a second contributory exception into #DF (SDM 6.15, Table 6-5); it
 * forgets it only when it delivers the exception itself, which it never
 * does here (the model delivers).  Left alone, a second #DE or #GP from
 * real execution would arrive as #DF.  The field is found once, by
 * calibration on a scratch engine (the context blob with -1 before and 13
 * after a #GP), and reset to -1 after each exception Unicorn raised.
 */
struct sim_ctx_hdr {	/* Unicorn 2.0 struct uc_context, before the blob */
	size_t size;
	int mode;
	int arch;
	char data[];
};

static long old_exc_off = -2;	/* -2 not calibrated, -1 not found */

static void calib_intr(uc_engine *uc, uint32_t intno, void *opaque)
{
	*(uint32_t *)opaque = intno;
	uc_emu_stop(uc);
}

static long calibrate_old_exception(void)
{
	uc_engine *uc;
	uc_context *a = NULL, *b = NULL;
	long off = -1;
	/* mov ax, 0x1234; mov ds, ax: #GP (13) */
	static const uint8_t code[] = { 0x66, 0xb8, 0x34, 0x12, 0x8e, 0xd8, 0xf4 };
	uint32_t got = 0;
	uc_hook h;
	if (uc_open(UC_ARCH_X86, UC_MODE_64, &uc) != UC_ERR_OK)
		return -1;
	if (uc_mem_map(uc, 0x1000, 0x1000, UC_PROT_ALL) ||
	    uc_mem_write(uc, 0x1000, code, sizeof(code)) ||
	    uc_hook_add(uc, &h, UC_HOOK_INTR, (void *)calib_intr, &got, 1, 0) ||
	    uc_context_alloc(uc, &a) || uc_context_alloc(uc, &b) ||
	    uc_context_save(uc, a) || uc_emu_start(uc, 0x1000, 0, 0, 0) ||
	    got != 13 || uc_context_save(uc, b))
		goto out;
	const struct sim_ctx_hdr *ha = (const void *)a, *hb = (const void *)b;
	if (ha->size + sizeof(*ha) != uc_context_size(uc) || ha->size != hb->size)
		goto out;
	int n = 0;
	for (size_t o = 0; o + 4 <= ha->size; o += 4) {
		int32_t x, y;
		memcpy(&x, ha->data + o, 4);
		memcpy(&y, hb->data + o, 4);
		if (x == -1 && y == 13) {
			off = (long)o;
			n++;
		}
	}
	if (n != 1)
		off = -1;
out:
	if (a)
		uc_context_free(a);
	if (b)
		uc_context_free(b);
	uc_close(uc);
	return off;
}

/* Makes Unicorn forget the exception it raised last. */
static void forget_exception(struct rtit_sim *sim)
{
	if (old_exc_off < 0 || !sim->ctx)
		return;
	struct sim_ctx_hdr *h = (void *)sim->ctx;
	int32_t none = -1;
	if (uc_context_save(sim->uc, sim->ctx) != UC_ERR_OK)
		return;
	memcpy(h->data + old_exc_off, &none, 4);
	uc_context_restore(sim->uc, sim->ctx);
}

/* ---------------------------------------------------------- guest memory */

static bool push(struct rtit_sim *sim, uint64_t *sp, uint64_t v, int w)
{
	*sp -= (uint64_t)w;
	if (sim->m.mode != 64)
		*sp &= 0xffffffffull;
	return uc_mem_write(sim->uc, *sp, &v, (size_t)w) == UC_ERR_OK;
}

static bool pop(struct rtit_sim *sim, uint64_t *sp, uint64_t *v, int w)
{
	*v = 0;
	if (uc_mem_read(sim->uc, *sp, v, (size_t)w) != UC_ERR_OK)
		return false;
	*sp += (uint64_t)w;
	if (sim->m.mode != 64)
		*sp &= 0xffffffffull;
	return true;
}

/* ------------------------------------------------------ model: transfers */

static bool vec_has_err(int v)
{
	return v == 8 || (v >= 10 && v <= 14) || v == 17 || v == 21;
}

/* ------------------------------------------------------- model: tasks */

static int exception(struct rtit_sim *sim, int vec, uint64_t ip, uint32_t err,
		     uint64_t cr2, const char *what);

static int task_of(const struct sim_model *m, uint16_t sel)
{
	for (int i = 0; i < m->ntasks; i++)
		if (m->tasks[i].sel == (sel & 0xfff8))
			return i;
	return -1;
}

/* 32-bit TSS fields (SDM Vol. 3 Figure 7-2). */
enum { TSS_LINK = 0x00, TSS_CR3 = 0x1c, TSS_EIP = 0x20, TSS_EFLAGS = 0x24, TSS_EAX = 0x28,
       TSS_ES = 0x48, TSS_CS = 0x4c, TSS_SS = 0x50, TSS_SIZE = 104 };

/*
 * Switches from the current task to task @to (SDM Vol. 3 7.3, steps 8-14):
 * the outgoing state, with EIP = @ret, into the current TSS (EFLAGS.NT
 * cleared in that image for a JMP); with @nest (CALL, interrupt) the new
 * TSS's back link = the old selector and NT set; the old task stays busy
 * unless @jmp.  Then CR3, EIP, EFLAGS, EAX-EDI and the CS/SS selectors
 * from the new TSS, CPL = CS.RPL, CR0.TS set, TR = @to.  Segment bases
 * stay flat (docs/sim.md).  The caller checked TR and the busy bit.
 * Returns the new EIP, or UINT64_MAX with the run stopped.
 */
static uint64_t task_switch(struct rtit_sim *sim, int to, uint64_t ret, bool nest, bool jmp)
{
	struct sim_model *m = &sim->m;
	struct sim_task *o = &m->tasks[m->tr], *n = &m->tasks[to];
	uint32_t old[TSS_SIZE / 4], nw[TSS_SIZE / 4];
	static const int segs[6] = { UC_X86_REG_ES, UC_X86_REG_CS, UC_X86_REG_SS,
				     UC_X86_REG_DS, UC_X86_REG_FS, UC_X86_REG_GS };

	if (uc_mem_read(sim->uc, o->tss, old, sizeof(old)) != UC_ERR_OK ||
	    uc_mem_read(sim->uc, n->tss, nw, sizeof(nw)) != UC_ERR_OK) {
		stop_with(sim, RTIT_SIM_STOP_FAULT, ret, "task switch to 0x%x: a TSS is not"
			  " mapped", n->sel);
		return UINT64_MAX;
	}
	uint32_t fl = (uint32_t)rget(sim, R_FLAGS);
	old[TSS_EIP / 4] = (uint32_t)ret;
	old[TSS_EFLAGS / 4] = jmp ? fl & ~EFL_NT : fl;
	for (int r = R_AX; r <= R_DI; r++)
		old[TSS_EAX / 4 + r] = (uint32_t)rget(sim, r);
	for (int i = 0; i < 6; i++) {
		uint64_t v = 0;
		uc_reg_read(sim->uc, segs[i], &v);
		old[TSS_ES / 4 + i] = i == 1 ? m->cs : i == 2 ? m->ss : (uint32_t)(v & 0xffff);
	}
	if (nest)
		nw[TSS_LINK / 4] = o->sel;
	if (uc_mem_write(sim->uc, o->tss, old, sizeof(old)) != UC_ERR_OK ||
	    (nest && uc_mem_write(sim->uc, n->tss, nw, 4) != UC_ERR_OK)) {
		stop_with(sim, RTIT_SIM_STOP_FAULT, ret, "task switch to 0x%x: a TSS is not"
			  " writable", n->sel);
		return UINT64_MAX;
	}
	if (jmp)
		o->busy = false;
	n->busy = true;
	m->tr = to;
	m->cr3 = nw[TSS_CR3 / 4];
	m->cr0 |= CR0_TS;
	m->cs = (uint16_t)nw[TSS_CS / 4];
	m->ss = (uint16_t)nw[TSS_SS / 4];
	m->cpl = m->cs & 3;
	m->mode = n->mode;
	for (int r = R_AX; r <= R_DI; r++)
		rset(sim, r, nw[TSS_EAX / 4 + r]);
	rset(sim, R_FLAGS, (nw[TSS_EFLAGS / 4] | EFL_FIXED1 | (nest ? EFL_NT : 0)));
	tmpl_on_state(sim);
	uint64_t eip = nw[TSS_EIP / 4];
	if (n->mode != 32 && !(sim->cfg.has_end && sim->cfg.end_ip == eip)) {
		stop_with(sim, RTIT_SIM_STOP_FAULT, eip, "task 0x%x runs 16-bit code at 0x%" PRIx64
			  ", which the simulator does not execute: end the run there (end-at)",
			  n->sel, eip);
		return UINT64_MAX;
	}
	return eip;
}

/* A far JMP/CALL or task gate to task @to: #GP(selector) when it is busy
 * (SDM 7.3 step 3; a JMP or CALL to the current task too). */
static bool task_ok(struct rtit_sim *sim, int to, uint64_t ip, bool insn)
{
	struct sim_model *m = &sim->m;
	char why[96];
	if (m->tr < 0) {
		stop_with(sim, RTIT_SIM_STOP_FAULT, ip, "task switch to 0x%x at 0x%" PRIx64
			  ": no current task (scenario 'tr')", m->tasks[to].sel, ip);
		return false;
	}
	if (!m->tasks[to].busy)
		return true;
	snprintf(why, sizeof(why), "task switch to busy task 0x%x", m->tasks[to].sel);
	if (insn)
		exception(sim, 13, ip, m->tasks[to].sel, 0, why);
	else
		stop_with(sim, RTIT_SIM_STOP_FAULT, ip, "%s through a task gate", why);
	return false;
}

/* Delivers an interrupt or exception through the interrupt table with a
 * real stack frame (SDM 6.14.2: SS, RSP, RFLAGS, CS, RIP, error code in
 * 64-bit mode; 6.12.1: EFLAGS, CS, EIP after SS, ESP on a privilege change
 * in 32-bit mode).  Returns 0, or -1 with the run stopped. */
static int deliver(struct rtit_sim *sim, int vec, uint64_t ret_ip,
		   bool has_err, uint32_t err, const char *what)
{
	if (sim->m.mode == RTIT_SIM_MODE_16) {
		/* real mode has an IVT, not modelled (docs/sim.md) */
		stop_with(sim, RTIT_SIM_STOP_FAULT, ret_ip,
			  "vector %d at 0x%" PRIx64 " in 16-bit mode: interrupts and exceptions"
			  " in real mode are not modelled (%s)", vec, ret_ip, what);
		return -1;
	}
	if (!sim->m.idt_present[vec]) {
		const char *vn = vec < 32 ? vecname[vec] : "vector";
		stop_with(sim, RTIT_SIM_STOP_FAULT, ret_ip,
			  "unhandled %s (vector %d) at 0x%" PRIx64 ": %s", vn, vec,
			  ret_ip, what);
		return -1;
	}
	if (sim->m.idt_task[vec]) {
		/* a task gate (SDM 6.12.2): a task switch, nested; the error
		 * code goes on the new task's stack */
		int to = task_of(&sim->m, sim->m.idt_task[vec]);
		uint64_t eip, tsp;
		if (!task_ok(sim, to, ret_ip, false) ||
		    (eip = task_switch(sim, to, ret_ip, true, false)) == UINT64_MAX)
			return -1;
		tsp = rget(sim, R_SP);
		if (has_err && !push(sim, &tsp, err, 4)) {
			stop_with(sim, RTIT_SIM_STOP_FAULT, ret_ip, "double fault: the stack of"
				  " task 0x%x at 0x%" PRIx64 " is not writable", sim->m.idt_task[vec], tsp);
			return -1;
		}
		rset(sim, R_SP, tsp);
		rset(sim, R_IP, eip);
		sim->delivered_to = eip;
		return 0;
	}
	int w = sim->m.mode == 64 ? 8 : 4;
	uint64_t rsp = rget(sim, R_SP), fl = rget(sim, R_FLAGS);
	uint64_t sp = rsp;
	bool priv = sim->m.cpl == 3;
	if (priv && sim->m.rsp0)
		sp = sim->m.rsp0;
	if (sim->m.mode == 64)
		sp &= ~15ull;
	bool ok = true;
	if (sim->m.mode == 64 || priv) {
		ok = ok && push(sim, &sp, sim->m.ss, w);
		ok = ok && push(sim, &sp, rsp, w);
	}
	ok = ok && push(sim, &sp, fl, w);
	ok = ok && push(sim, &sp, sim->m.cs, w);
	ok = ok && push(sim, &sp, ret_ip, w);
	if (has_err)
		ok = ok && push(sim, &sp, err, w);
	if (!ok) {
		stop_with(sim, RTIT_SIM_STOP_FAULT, ret_ip,
			  "double fault: stack at 0x%" PRIx64
			  " not writable while delivering vector %d at 0x%" PRIx64,
			  sp, vec, ret_ip);
		return -1;
	}
	rset(sim, R_SP, sp);
	rset(sim, R_FLAGS, fl & ~(uint64_t)(EFL_IF | EFL_TF));
	sim->m.cpl = 0;
	sim->m.cs = KCS;
	sim->m.ss = sim->m.mode == 64 ? 0 : KSS;
	tmpl_on_state(sim);
	rset(sim, R_IP, sim->m.idt[vec]);
	sim->delivered_to = sim->m.idt[vec];
	return 0;
}

/* ---------------------------------------------------------- model: RTM */

/*
 * RTM_ABORT_PROCESSING (SDM Vol. 2 XBEGIN): the registers and memory go
 * back to the outermost XBEGIN, EAX = @status (NESTED added when the
 * abort comes from inside a nested transaction), RTM_NEST_COUNT = 0, and
 * execution goes on at the fallback.  Records the TSX_ABORT event (ip =
 * @at, the aborting point; next_ip = the fallback).  Returns the fallback.
 */
static uint64_t tx_abort(struct rtit_sim *sim, uint64_t at, uint32_t status)
{
	struct sim_rtm *t = &sim->rtm;
	int depth = t->depth;

	if (depth > 1)
		status |= RTIT_RTM_ABORT_NESTED;
	t->depth = 0;
	uc_context_restore(sim->uc, t->regs);
	sim_rtm_log_rollback(sim);
	/* EAX is written as a 32-bit register: RAX bits 63:32 clear */
	rset(sim, R_AX, status);
	struct rtit_sim_rec *r = rec_new(sim);
	r->kind = RTIT_SIM_EVENT;
	r->cls = RTIT_EV_TSX_ABORT;
	r->ip = at;
	r->next_ip = t->fallback;
	r->value = status;
	r->vector = (uint8_t)depth;
	r->cycles = sim->cycles;
	r->tsc = sim->tsc;
	sim->events++;
	rec_done(sim);
	rset(sim, R_IP, t->fallback);
	return t->fallback;
}

/* ---------------------------------------------------------- model: SGX */

/*
 * An enclave-exiting event inside an enclave (SDM Vol. 3D 40.4): the AEX
 * saves the enclave's state and loads the synthetic state (sgx.c), then
 * the event is delivered as from the AEP (vector @vec, error code @err
 * when @he).  One AEX record: ip = the enclave IP (@fl: FAULT for a
 * fault's CLIP), next_ip = the handler; with @vec < 0 (an SMI or VM exit,
 * whose own records follow at the AEP) next_ip = the AEP.  D50.
 */
static int aex_event(struct rtit_sim *sim, int vec, uint64_t ip, bool he, uint32_t err,
		     uint8_t fl, const char *what)
{
	uint64_t aep = sim_sgx_aex(sim, ip), next = aep;
	struct rtit_sim_rec *r;

	tmpl_on_state(sim);
	if (vec >= 0) {
		if (deliver(sim, vec, aep, he, err, what) < 0)
			return -1;
		next = sim->m.idt[vec];
	}
	r = rec_new(sim);
	r->kind = RTIT_SIM_EVENT;
	r->cls = RTIT_EV_AEX;
	r->ip = ip;
	r->next_ip = next;
	r->value = aep;
	r->vector = (uint8_t)(vec < 0 ? 0 : vec);
	r->flags |= fl | (he ? RTIT_SIM_F_HAS_ERR : 0);
	r->msr = err;
	r->cycles = sim->cycles;
	r->tsc = sim->tsc;
	sim->events++;
	rec_done(sim);
	return 0;
}

/* Records and delivers an exception.  A fault: ip is the faulting
 * instruction, which did not retire; a trap: ip is the next instruction
 * (RTIT Table 1, PT 33.4.2.6). */
static int exception_at(struct rtit_sim *sim, int vec, uint64_t ip,
			uint32_t err, uint64_t cr2, const char *what, bool fault)
{
	bool he = vec_has_err(vec);
	if (sim->rtm.depth) {
		/* SDM Vol. 1 16.3.8.2: an exception inside a transaction
		 * aborts it and is not delivered; #DB and #BP say DEBUG */
		tx_abort(sim, ip, vec == 1 || vec == 3 ? RTIT_RTM_ABORT_DEBUG : 0);
		return 0;
	}
	/* a handler that faults before retiring anything would loop forever
	 * without spending the instruction budget */
	if (sim->retired != sim->fault_loop_at) {
		sim->fault_loop_at = sim->retired;
		sim->fault_loop_n = 0;
	}
	if (++sim->fault_loop_n > 16) {
		stop_with(sim, RTIT_SIM_STOP_FAULT, ip,
			  "fault loop: %d exceptions without a retired instruction, "
			  "last vector %d at 0x%" PRIx64 ": %s",
			  sim->fault_loop_n - 1, vec, ip, what);
		return -1;
	}
	if (vec == 14)
		sim->m.cr2 = cr2;
	if (sim->sgx.cur >= 0) {
		/* an AEX first; a #PF's CR2 loses bits 11:0 (Vol. 3D 40.4) */
		if (vec == 14)
			sim->m.cr2 = cr2 & ~0xfffull;
		if (aex_event(sim, vec, ip, he, err, fault ? RTIT_SIM_F_FAULT : 0, what) < 0)
			return -1;
		flush(sim);
		return 0;
	}
	if (deliver(sim, vec, ip, he, err, what) < 0)
		return -1;
	struct rtit_sim_rec *r = rec_new(sim);
	r->kind = RTIT_SIM_EVENT;
	r->cls = RTIT_EV_EXCEPTION;
	r->ip = ip;
	r->next_ip = sim->delivered_to;
	r->vector = (uint8_t)vec;
	r->flags |= (fault ? RTIT_SIM_F_FAULT : 0) | (he ? RTIT_SIM_F_HAS_ERR : 0);
	r->msr = err;
	r->value = vec == 14 ? cr2 : 0;
	r->cycles = sim->cycles;
	r->tsc = sim->tsc;
	sim->events++;
	rec_done(sim);
	flush(sim);
	return 0;
}

static int exception(struct rtit_sim *sim, int vec, uint64_t ip, uint32_t err,
		     uint64_t cr2, const char *what)
{
	return exception_at(sim, vec, ip, err, cr2, what, true);
}

/* --------------------------------------------------------- model: MSRs */

static bool trace_msr(uint32_t msr)
{
	/* RTIT 0x760-0x77D (RTIT 3.3), Intel PT 33.2.8 (Table 33-x) */
	return (msr >= 0x760 && msr <= 0x77D) || msr == 0x560 || msr == 0x561 ||
	       (msr >= 0x570 && msr <= 0x572) || (msr >= 0x580 && msr <= 0x587);
}

/* Routes an MSR access; returns 0 or -1 for #GP. */
static int msr_access(struct rtit_sim *sim, bool write, uint32_t msr,
		      uint64_t *v, const struct rtit_sim_rec *ctx)
{
	struct sim_model *m = &sim->m;
	if (trace_msr(msr)) {
		const struct rtit_sim_consumer *c = &sim->cfg.consumer;
		if (write && c->msr_write) {
			flush(sim);
			return c->msr_write(c->opaque, msr, *v, ctx) < 0 ? -1 : 0;
		}
		if (!write && c->msr_read) {
			flush(sim);
			return c->msr_read(c->opaque, msr, v, ctx) < 0 ? -1 : 0;
		}
		for (int i = 0; i < m->ntmsr; i++) {
			if (m->tmsr[i] == msr) {
				if (write)
					m->tmsr_val[i] = *v;
				else
					*v = m->tmsr_val[i];
				return 0;
			}
		}
		if (write) {
			if (m->ntmsr == 64)
				return -1;
			m->tmsr[m->ntmsr] = msr;
			m->tmsr_val[m->ntmsr++] = *v;
		} else {
			*v = 0;
		}
		return 0;
	}
	int u = sim_uintr_msr(sim, write, msr, v);
	if (u)
		return u < 0 ? -1 : 0;
	uint64_t *p = NULL;
	switch (msr) {
	case 0x10:
		if (write)
			sim->tsc = *v;
		else
			*v = sim->tsc;
		return 0;
	case 0x174: p = &m->sysenter_cs; break;
	case 0x175: p = &m->sysenter_esp; break;
	case 0x176: p = &m->sysenter_eip; break;
	case 0xC0000081: p = &m->star; break;
	case 0xC0000082: p = &m->lstar; break;
	case 0xC0000083: p = &m->cstar; break;
	case 0xC0000084: p = &m->fmask; break;
	default:
		/* the performance-monitoring MSRs (pmu.c); the LBRs see the
		 * records before this access, and only those (D63) */
		if (sim->cfg.pmu)
			flush(sim);
		return sim_pmu_msr(sim, write, msr, v, ctx && ctx->kind == RTIT_SIM_INSN) > 0 ? 0 : -1;
	}
	if (write)
		*p = *v;
	else
		*v = *p;
	return 0;
}

/* ------------------------------------------------- model: special insns */

static int gpr_of_zydis(ZydisRegister r)
{
	ZydisRegisterClass c = ZydisRegisterGetClass(r);
	if (c != ZYDIS_REGCLASS_GPR64 && c != ZYDIS_REGCLASS_GPR32 &&
	    c != ZYDIS_REGCLASS_GPR16)
		return -1;
	return ZydisRegisterGetId(r);
}

/* Effective address of a memory operand (flat segments). */
static uint64_t mem_ea(struct rtit_sim *sim, const ZydisDecodedOperand *op,
		       uint64_t ip, int len)
{
	uint64_t ea = (uint64_t)op->mem.disp.value;
	if (op->mem.base == ZYDIS_REGISTER_RIP)
		ea += ip + (uint64_t)len;
	else if (op->mem.base != ZYDIS_REGISTER_NONE)
		ea += rget(sim, gpr_of_zydis(op->mem.base));
	if (op->mem.index != ZYDIS_REGISTER_NONE)
		ea += rget(sim, gpr_of_zydis(op->mem.index)) * op->mem.scale;
	if (sim->m.mode != 64)
		ea &= 0xffffffffull;
	return ea;
}

static uint64_t operand_value(struct rtit_sim *sim, const ZydisDecodedOperand *op,
			      uint64_t ip, int len, bool *ok)
{
	uint64_t v = 0;
	*ok = true;
	if (op->type == ZYDIS_OPERAND_TYPE_REGISTER) {
		v = rget(sim, gpr_of_zydis(op->reg.value));
		if (op->size == 32)
			v &= 0xffffffffull;
	} else if (op->type == ZYDIS_OPERAND_TYPE_MEMORY) {
		if (uc_mem_read(sim->uc, mem_ea(sim, op, ip, len), &v,
				op->size / 8) != UC_ERR_OK)
			*ok = false;
	}
	return v;
}

/* Emits the record of a special instruction (state after) and counts it. */
static struct rtit_sim_rec *special_rec(struct rtit_sim *sim, uint64_t ip,
					int len, int cls, uint64_t next,
					bool taken)
{
	struct rtit_sim_rec *r = rec_new(sim);
	r->kind = RTIT_SIM_INSN;
	r->ip = ip;
	r->len = (uint8_t)len;
	r->cls = (uint8_t)cls;
	r->next_ip = next;
	if (taken)
		r->flags |= RTIT_SIM_F_TAKEN;
	clock_on_cycles(sim, sim->cfg.clock.cpi[cls]);
	r->cycles = sim->cycles;
	r->tsc = sim->tsc;
	sim->retired++;
	sim->last_shadow = false;
	sim->last_ip = ip;
	return r;
}

static void gp_fault(struct rtit_sim *sim, uint64_t ip, const char *why)
{
	/* delivered: RIP is the handler; in a hook Unicorn goes on there
	 * (a RIP write and uc_emu_stop in one hook would cancel each other) */
	exception(sim, 13, ip, 0, 0, why);
}

/* A stack access of a special instruction failed at addr: #PF there, a
 * fault on the instruction (#GP(0) for a non-canonical address). */
static void stack_fault(struct rtit_sim *sim, uint64_t ip, uint64_t addr,
			bool write, const char *insn)
{
	char why[96];
	snprintf(why, sizeof(why), "%s: stack %s 0x%" PRIx64 " unmapped", insn,
		 write ? "write to" : "read of", addr);
	if (sim->m.mode == 64 && (uint64_t)((int64_t)(addr << 16) >> 16) != addr)
		exception(sim, 13, ip, 0, 0, why);
	else
		exception(sim, 14, ip, (write ? 2u : 0u) | (sim->m.cpl == 3 ? 4u : 0u),
			  addr, why);
}

/* Whether the hooked instruction analysed as @si aborts an
 * active transaction, and with which status in *status: SDM Vol. 1
 * 16.3.8.1 lists CPUID and PAUSE (always), and as "may abort" the
 * privileged and ring-changing instructions, far transfers, INT n, IRET,
 * I/O, MOV to CRs and DRs, descriptor-table loads, HLT, MONITOR, MWAIT,
 * RDMSR, WRMSR, XSETBV, RSM: rtitsim aborts on all of them (D42).  RDTSC,
 * RDTSCP, RDRAND, RDSEED, PTWRITE, RDPMC and the RTM instructions
 * themselves do not abort. */
static bool tx_aborts(const struct isa_insn *si, uint32_t *status)
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
static void emulate_rtm(struct rtit_sim *sim, const ZydisDecodedInstruction *in,
			uint64_t ip, int cls, uint64_t target)
{
	struct sim_rtm *t = &sim->rtm;
	uint64_t next = ip + in->length;
	struct rtit_sim_rec *r;

	if (!sim->cfg.rtm) {
		/* CPUID.(EAX=7,ECX=0):EBX.RTM[bit 11] = 0 (and HLE = 0 for
		 * XTEST): Silvermont */
		exception(sim, 6, ip, 0, 0, "RTM instruction on a CPU without TSX");
		return;
	}
	switch (in->mnemonic) {
	case ZYDIS_MNEMONIC_XBEGIN:
		if (sim->m.mode != 64) {
			target &= 0xffffffffull;
			if (in->operand_width == 16)
				target &= 0xffff;
		} else if ((uint64_t)((int64_t)(target << 16) >> 16) != target) {
			gp_fault(sim, ip, "XBEGIN: the fallback address is not canonical");
			return;
		}
		if (t->depth >= RTIT_SIM_RTM_MAX_NEST) {
			tx_abort(sim, ip, 0);	/* nesting too deep: abort */
			return;
		}
		if (!t->depth) {
			if ((!t->regs && uc_context_alloc(sim->uc, &t->regs) != UC_ERR_OK) ||
			    uc_context_save(sim->uc, t->regs) != UC_ERR_OK ||
			    sim_rtm_log_start(sim) < 0) {
				stop_with(sim, RTIT_SIM_STOP_ERROR, ip,
					  "XBEGIN at 0x%" PRIx64 ": cannot save the state", ip);
				return;
			}
			t->fallback = target;
		}
		t->depth++;
		r = special_rec(sim, ip, in->length, cls, next, false);
		if (t->depth == 1)
			r->flags |= RTIT_SIM_F_TX;
		r->vector = (uint8_t)t->depth;
		break;
	case ZYDIS_MNEMONIC_XEND:
		if (!t->depth) {
			gp_fault(sim, ip, "XEND outside a transaction");
			return;
		}
		if (!--t->depth)
			sim_rtm_log_stop(sim);	/* committed */
		r = special_rec(sim, ip, in->length, cls, next, false);
		if (!t->depth)
			r->flags |= RTIT_SIM_F_TX;
		r->vector = (uint8_t)t->depth;
		break;
	case ZYDIS_MNEMONIC_XABORT:
		if (t->depth) {
			tx_abort(sim, ip, RTIT_RTM_ABORT_XABORT |
					  (uint32_t)(in->raw.imm[0].value.u & 0xff) << 24);
			return;
		}
		special_rec(sim, ip, in->length, cls, next, false);	/* a NOP */
		break;
	default: {	/* XTEST: ZF = not transactional; CF OF SF PF AF = 0 */
		uint64_t f = rget(sim, R_FLAGS) & ~0x8d5ull;
		rset(sim, R_FLAGS, t->depth ? f : f | 0x40);
		special_rec(sim, ip, in->length, cls, next, false);
		break;
	}
	}
	rec_done(sim);
	rset(sim, R_IP, next);
}

/* A HLT or an MWAIT that waits (its record delivered): the CPU wakes on
 * the next injected interrupt (an NMI, SMI or INIT even with IF = 0; a masked
 * interrupt too for MWAIT with ECX[0] = 1, which then stays pending);
 * instructions do not retire meanwhile.  Stops the run when nothing
 * would wake it. */
static void wait_for_wake(struct rtit_sim *sim, uint64_t ip, uint64_t next,
			  bool masked_breaks, const char *insn)
{
	bool ifl = rget(sim, R_FLAGS) & EFL_IF;
	int best = -1;
	for (int i = 0; i < sim->ninj; i++) {
		const struct rtit_sim_inject *e = &sim->inj[i];
		if (sim->inj_done[i] || e->trigger != RTIT_SIM_AT_INSN)
			continue;
		if (!(e->kind == RTIT_EV_NMI || e->kind == RTIT_EV_SMI || e->kind == RTIT_EV_INIT ||
		      ((ifl || masked_breaks) && e->kind == RTIT_EV_EXT_INTERRUPT)))
			continue;
		if (best < 0 || e->at < sim->inj[best].at)
			best = i;
	}
	if ((ifl || masked_breaks) && sim->irq_deferred >= 0) {
		/* an interrupt held while IF was 0 wakes it */
		if (ifl)
			request(sim, SIM_REQ_EVENT, next);
		else
			rset(sim, R_IP, next);	/* and stays pending */
		return;
	}
	if (best >= 0) {
		sim->inj_due = best;
		request(sim, SIM_REQ_EVENT, next);
		return;
	}
	stop_with(sim, RTIT_SIM_STOP_HALTED, ip,
		  "halted at 0x%" PRIx64 " (%s, %s)", ip, insn,
		  ifl ? "no wake event" : "interrupts off");
}

/* UIRET, STUI, CLUI, TESTUI (SDM Vol. 2B; uintr.c): #UD without user
 * interrupts (Silvermont) and outside 64-bit mode.  A user interrupt they
 * make recognisable is delivered at the next block start (on_block). */
static void emulate_uintr(struct rtit_sim *sim, const ZydisDecodedInstruction *in, uint64_t ip)
{
	uint64_t next = ip + in->length, f;
	int r;

	if (!sim->cfg.uintr || sim->m.mode != RTIT_SIM_MODE_64) {
		exception(sim, 6, ip, 0, 0, "user-interrupt instruction on a CPU without "
			  "user interrupts or outside 64-bit mode");
		return;
	}
	switch (in->mnemonic) {
	case ZYDIS_MNEMONIC_UIRET:
		r = sim_uintr_uiret(sim, &next);
		if (r == -1) {
			stack_fault(sim, ip, next, false, "UIRET");
			return;
		}
		if (r == -2) {
			gp_fault(sim, ip, "UIRET: the popped RIP is not canonical");
			return;
		}
		tmpl_on_state(sim);
		special_rec(sim, ip, in->length, RTIT_IC_UIRET, next, true);
		break;
	case ZYDIS_MNEMONIC_TESTUI:
		/* CF := UIF; OF SF ZF AF PF := 0 */
		f = rget(sim, R_FLAGS) & ~0x8d5ull;
		rset(sim, R_FLAGS, f | (sim->uintr.uif ? 1 : 0));
		special_rec(sim, ip, in->length, RTIT_IC_OTHER, next, false);
		break;
	default:	/* STUI, CLUI */
		sim->uintr.uif = in->mnemonic == ZYDIS_MNEMONIC_STUI;
		special_rec(sim, ip, in->length, RTIT_IC_OTHER, next, false);
		break;
	}
	rec_done(sim);
	rset(sim, R_IP, next);
}

/* SDM Vol. 3D 38.6.1: of the instructions the model intercepts, those an
 * enclave may execute (ENCLU, POPF, RDRAND, RDSEED, PTWRITE, RTM); the
 * others (far transfers, INT n, SYSCALL, SYSENTER, RDTSC in SGX1...) are
 * #UD there.  The privileged ones are #GP at CPL 3 before this. */
static bool sgx_allowed(const ZydisDecodedInstruction *in, int cls)
{
	switch (in->mnemonic) {
	case ZYDIS_MNEMONIC_POPF: case ZYDIS_MNEMONIC_POPFD: case ZYDIS_MNEMONIC_POPFQ:
	case ZYDIS_MNEMONIC_RDRAND: case ZYDIS_MNEMONIC_RDSEED:
	case ZYDIS_MNEMONIC_XABORT: case ZYDIS_MNEMONIC_XTEST:
		return true;
	default:
		return cls == RTIT_IC_ENCLU || cls == RTIT_IC_PTWRITE || cls == RTIT_IC_XBEGIN ||
		       cls == RTIT_IC_XEND;
	}
}

/* Emulates the special instruction at ip (the prefix of its block has
 * retired).  Sets RIP, or stops the run. */
static void emulate(struct rtit_sim *sim, uint64_t ip)
{
	uint8_t buf[16] = {0};
	ZydisDecodedInstruction in;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	uc_mem_read(sim->uc, ip, buf, sizeof(buf));
	if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&sim->dec, buf, sizeof(buf),
						 &in, ops))) {
		stop_with(sim, RTIT_SIM_STOP_ERROR, ip, "cannot decode at 0x%" PRIx64, ip);
		return;
	}
	struct isa_insn si;
	isa_classify(&in, ip, &si);
	int len = in.length;
	uint64_t next = ip + (uint64_t)len;
	struct sim_model *m = &sim->m;
	int w = m->mode == 64 ? 8 : 4;
	bool rexw = in.raw.rex.W;
	struct rtit_sim_rec *r;
	char why[96];
	uint64_t v, sp;

	if (si.cls == RTIT_IC_UIRET || in.mnemonic == ZYDIS_MNEMONIC_STUI ||
	    in.mnemonic == ZYDIS_MNEMONIC_CLUI || in.mnemonic == ZYDIS_MNEMONIC_TESTUI) {
		emulate_uintr(sim, &in, ip);
		return;
	}
	if (m->mode == RTIT_SIM_MODE_16 && si.cls != RTIT_IC_HLT && si.cls != RTIT_IC_FAR_JMP &&
	    in.mnemonic != ZYDIS_MNEMONIC_CLI && in.mnemonic != ZYDIS_MNEMONIC_STI) {
		/* after INIT or SIPI: HLT, CLI, STI and JMP ptr16:16 only */
		stop_with(sim, RTIT_SIM_STOP_ERROR, ip, "%s at 0x%" PRIx64 " in 16-bit mode "
			  "(after INIT/SIPI) is not modelled", ZydisMnemonicGetString(in.mnemonic), ip);
		return;
	}
	if (sim->sgx.cur >= 0 && !sgx_allowed(&in, si.cls)) {
		exception(sim, 6, ip, 0, 0, "instruction illegal inside an enclave");
		return;
	}
	switch (si.cls) {
	case RTIT_IC_INT: {
		int vec;
		switch (in.mnemonic) {
		case ZYDIS_MNEMONIC_INT3: vec = 3; break;
		case ZYDIS_MNEMONIC_INT1: vec = 1; break;
		case ZYDIS_MNEMONIC_INTO: vec = 4; break;
		default: vec = (int)in.raw.imm[0].value.u & 0xff; break;
		}
		if (vec == 4 && !(rget(sim, R_FLAGS) & EFL_OF)) {
			r = special_rec(sim, ip, len, si.cls, next, false);
			r->vector = 4;
			rec_done(sim);
			rset(sim, R_IP, next);
			return;
		}
		snprintf(why, sizeof(why), "INT 0x%x has no handler", vec);
		/* traps: the saved IP is the next instruction */
		if (deliver(sim, vec, next, false, 0, why) < 0)
			return;
		r = special_rec(sim, ip, len, si.cls, sim->delivered_to, true);
		r->vector = (uint8_t)vec;
		rec_done(sim);
		return;
	}
	case RTIT_IC_IRET: {
		uint64_t nip, cs, fl, nsp = 0, ss = 0;
		int pw = in.operand_width / 8;
		sp = rget(sim, R_SP);
		bool ok = pop(sim, &sp, &nip, pw) && pop(sim, &sp, &cs, pw) &&
			  pop(sim, &sp, &fl, pw);
		bool outer = m->mode == 64 || (int)(cs & 3) > m->cpl;
		if (ok && outer)
			ok = pop(sim, &sp, &nsp, pw) && pop(sim, &sp, &ss, pw);
		if (!ok) {
			stack_fault(sim, ip, sp, false, "IRET");
			return;
		}
		m->cpl = (int)(cs & 3);
		m->cs = (uint16_t)cs;
		if (outer) {
			m->ss = (uint16_t)ss;
			rset(sim, R_SP, nsp);
		} else {
			rset(sim, R_SP, sp);
		}
		rset(sim, R_FLAGS, fl | 2);
		tmpl_on_state(sim);
		special_rec(sim, ip, len, si.cls, nip, true);
		rec_done(sim);
		rset(sim, R_IP, nip);
		return;
	}
	case RTIT_IC_SYSCALL:
		/* SDM SYSCALL: RCX = next RIP, R11 = RFLAGS, CS from STAR */
		if (m->mode != 64 || !m->lstar) {
			exception(sim, 6, ip, 0, 0, "SYSCALL with no LSTAR");
			goto fault_restart;
		}
		rset(sim, R_CX, next);
		v = rget(sim, R_FLAGS);
		rset(sim, R_11, v);
		rset(sim, R_FLAGS, (v & ~m->fmask) | 2);
		m->cpl = 0;
		m->cs = (uint16_t)((m->star >> 32) & 0xfffc);
		m->ss = (uint16_t)(m->cs + 8);
		tmpl_on_state(sim);
		special_rec(sim, ip, len, si.cls, m->lstar, true);
		rec_done(sim);
		rset(sim, R_IP, m->lstar);
		return;
	case RTIT_IC_SYSRET:
		if (m->cpl != 0) {
			gp_fault(sim, ip, "SYSRET at CPL 3");
			return;
		}
		v = rget(sim, R_CX);
		rset(sim, R_FLAGS, (rget(sim, R_11) & 0x3C7FD7ull) | 2);
		m->cpl = 3;
		m->cs = (uint16_t)(((m->star >> 48) + (rexw ? 16 : 0)) | 3);
		m->ss = (uint16_t)(((m->star >> 48) + 8) | 3);
		tmpl_on_state(sim);
		special_rec(sim, ip, len, si.cls, v, true);
		rec_done(sim);
		rset(sim, R_IP, v);
		return;
	case RTIT_IC_SYSENTER:
		if (!(m->sysenter_cs & 0xfffc)) {
			gp_fault(sim, ip, "SYSENTER with IA32_SYSENTER_CS = 0");
			return;
		}
		m->cpl = 0;
		m->cs = (uint16_t)(m->sysenter_cs & 0xfffc);
		m->ss = (uint16_t)(m->cs + 8);
		rset(sim, R_SP, m->sysenter_esp);
		rset(sim, R_FLAGS, rget(sim, R_FLAGS) & ~(uint64_t)(EFL_IF));
		tmpl_on_state(sim);
		special_rec(sim, ip, len, si.cls, m->sysenter_eip, true);
		rec_done(sim);
		rset(sim, R_IP, m->sysenter_eip);
		return;
	case RTIT_IC_SYSEXIT:
		if (m->cpl != 0 || !(m->sysenter_cs & 0xfffc)) {
			gp_fault(sim, ip, "SYSEXIT at CPL 3 or with SYSENTER_CS = 0");
			return;
		}
		v = rget(sim, R_DX);
		rset(sim, R_SP, rget(sim, R_CX));
		m->cpl = 3;
		m->cs = (uint16_t)((m->sysenter_cs + (rexw ? 32 : 16)) | 3);
		m->ss = (uint16_t)(m->cs + 8);
		tmpl_on_state(sim);
		special_rec(sim, ip, len, si.cls, v, true);
		rec_done(sim);
		rset(sim, R_IP, v);
		return;
	case RTIT_IC_FAR_JMP:
	case RTIT_IC_FAR_CALL: {
		uint64_t off = 0, sel = 0;
		w = in.operand_width / 8;
		if (ops[0].type == ZYDIS_OPERAND_TYPE_POINTER) {
			off = ops[0].ptr.offset;
			sel = ops[0].ptr.segment;
		} else if (ops[0].type == ZYDIS_OPERAND_TYPE_MEMORY) {
			uint64_t ea = mem_ea(sim, &ops[0], ip, len);
			int osz = ops[0].size / 8 - 2;
			if (uc_mem_read(sim->uc, ea, &off, (size_t)osz) != UC_ERR_OK ||
			    uc_mem_read(sim->uc, ea + (uint64_t)osz, &sel, 2) != UC_ERR_OK) {
				snprintf(why, sizeof(why), "far pointer at 0x%" PRIx64
					 " unmapped", ea);
				exception(sim, 14, ip, 0, ea, why);
				goto fault_restart;
			}
		}
		int task = m->ntasks ? task_of(m, (uint16_t)sel) : -1;
		if (task >= 0) {
			/* to a TSS descriptor: a task switch (SDM 7.3) */
			if (!task_ok(sim, task, ip, true))
				return;
			uint64_t to = task_switch(sim, task, next, si.cls == RTIT_IC_FAR_CALL,
						  si.cls == RTIT_IC_FAR_JMP);
			if (to == UINT64_MAX)
				return;
			special_rec(sim, ip, len, si.cls, to, true);
			rec_done(sim);
			rset(sim, R_IP, to);
			return;
		}
		if (si.cls == RTIT_IC_FAR_CALL) {
			sp = rget(sim, R_SP);
			if (!push(sim, &sp, m->cs, w) || !push(sim, &sp, next, w)) {
				stack_fault(sim, ip, sp, true, "far CALL");
				return;
			}
			rset(sim, R_SP, sp);
		}
		if (m->mode == RTIT_SIM_MODE_16) {
			/* real mode: CS base = selector << 4 (a LIP target) */
			if (ops[0].type != ZYDIS_OPERAND_TYPE_POINTER ||
			    sim_real_load_cs(sim, (uint16_t)sel) < 0) {
				stop_with(sim, RTIT_SIM_STOP_ERROR, ip, "far transfer at 0x%" PRIx64
					  " in 16-bit mode: only JMP ptr16:16 is modelled", ip);
				return;
			}
			off = ((uint64_t)(uint16_t)sel << 4) + (off & 0xffff);
		}
		m->cs = (uint16_t)sel;
		tmpl_on_state(sim);
		special_rec(sim, ip, len, si.cls, off, true);
		rec_done(sim);
		rset(sim, R_IP, off);
		return;
	}
	case RTIT_IC_FAR_RET: {
		uint64_t nip, cs, nsp, ss;
		w = in.operand_width / 8;
		sp = rget(sim, R_SP);
		if (!pop(sim, &sp, &nip, w) || !pop(sim, &sp, &cs, w)) {
			stack_fault(sim, ip, sp, false, "far RET");
			return;
		}
		if (in.raw.imm[0].size)
			sp += in.raw.imm[0].value.u;
		if ((int)(cs & 3) > m->cpl) {
			if (!pop(sim, &sp, &nsp, w) || !pop(sim, &sp, &ss, w)) {
				stack_fault(sim, ip, sp, false, "far RET");
				return;
			}
			sp = nsp;
			m->ss = (uint16_t)ss;
		}
		rset(sim, R_SP, sp);
		m->cpl = (int)(cs & 3);
		m->cs = (uint16_t)cs;
		tmpl_on_state(sim);
		special_rec(sim, ip, len, si.cls, nip, true);
		rec_done(sim);
		rset(sim, R_IP, nip);
		return;
	}
	case RTIT_IC_WRMSR:
	case RTIT_IC_RDMSR: {
		bool wr = si.cls == RTIT_IC_WRMSR;
		uint32_t msr = (uint32_t)rget(sim, R_CX);
		if (m->cpl != 0) {
			gp_fault(sim, ip, wr ? "WRMSR at CPL 3" : "RDMSR at CPL 3");
			return;
		}
		v = (rget(sim, R_DX) & 0xffffffffull) << 32 |
		    (rget(sim, R_AX) & 0xffffffffull);
		struct rtit_sim_rec ctx = sim->tmpl;
		ctx.kind = RTIT_SIM_INSN;
		ctx.ip = ip;
		ctx.len = (uint8_t)len;
		ctx.cls = (uint8_t)si.cls;
		ctx.next_ip = next;
		ctx.msr = msr;
		ctx.value = v;
		ctx.cycles = sim->cycles;
		ctx.tsc = sim->tsc;
		if (msr_access(sim, wr, msr, &v, &ctx) < 0) {
			snprintf(why, sizeof(why), "%s of MSR 0x%x refused",
				 wr ? "WRMSR" : "RDMSR", msr);
			gp_fault(sim, ip, why);
			return;
		}
		if (!wr) {
			rset(sim, R_AX, v & 0xffffffffull);
			rset(sim, R_DX, v >> 32);
		}
		r = special_rec(sim, ip, len, si.cls, next, false);
		r->msr = msr;
		r->value = v;
		rec_done(sim);
		rset(sim, R_IP, next);
		return;
	}
	case RTIT_IC_MOV_CR3:
	case RTIT_IC_MOV_CR0:
	case RTIT_IC_OTHER:
		if (in.mnemonic == ZYDIS_MNEMONIC_MOV &&
		    (in.opcode == 0x21 || in.opcode == 0x23)) {
			/* MOV DR: kept in the model, no breakpoints */
			unsigned dr = in.raw.modrm.reg & 7;
			int gpr = (int)(in.raw.modrm.rm | (in.raw.rex.B << 3));
			if (m->cpl != 0) {
				gp_fault(sim, ip, "MOV DR at CPL 3");
				return;
			}
			if (in.opcode == 0x23)
				m->dr[dr] = rget(sim, gpr);
			else
				rset(sim, gpr, m->dr[dr]);
			r = special_rec(sim, ip, len, si.cls, next, false);
			rec_done(sim);
			rset(sim, R_IP, next);
			return;
		}
		switch (in.mnemonic) {
		case ZYDIS_MNEMONIC_LMSW: case ZYDIS_MNEMONIC_CLTS:
		case ZYDIS_MNEMONIC_LGDT: case ZYDIS_MNEMONIC_LIDT:
		case ZYDIS_MNEMONIC_LLDT: case ZYDIS_MNEMONIC_LTR:
		case ZYDIS_MNEMONIC_XSETBV:
			if (m->cpl != 0) {
				gp_fault(sim, ip, "privileged instruction at CPL 3");
				return;
			}
			if (ops[0].type == ZYDIS_OPERAND_TYPE_MEMORY) {
				/* the operand is read: it can fault */
				uint8_t tmp[16];
				uint64_t ea = mem_ea(sim, &ops[0], ip, len);
				size_t n = ops[0].size / 8;
				if (in.mnemonic == ZYDIS_MNEMONIC_LGDT ||
				    in.mnemonic == ZYDIS_MNEMONIC_LIDT)
					n = m->mode == 64 ? 10 : 6;
				if (!n || n > sizeof(tmp))
					n = 2;
				if (uc_mem_read(sim->uc, ea, tmp, n) != UC_ERR_OK) {
					snprintf(why, sizeof(why), "read of unmapped address 0x%"
						 PRIx64, ea);
					exception(sim, 14, ip, m->cpl == 3 ? 4 : 0, ea, why);
					return;
				}
			}
			if (in.mnemonic == ZYDIS_MNEMONIC_CLTS) {
				m->cr0 &= ~8ull;
			} else if (in.mnemonic == ZYDIS_MNEMONIC_LMSW) {
				bool ok;
				v = operand_value(sim, &ops[0], ip, len, &ok);
				/* LMSW sets PE, MP, EM, TS and cannot clear PE */
				m->cr0 = (m->cr0 & ~0xeull) | (v & 0xf);
			}
			/* descriptor tables, XCR0: no effect on the model */
			r = special_rec(sim, ip, len, si.cls, next, false);
			rec_done(sim);
			rset(sim, R_IP, next);
			return;
		default:
			break;
		}
		if (in.mnemonic == ZYDIS_MNEMONIC_MOV) {
			unsigned cr = in.raw.modrm.reg | (in.raw.rex.R << 3);
			int gpr = (int)(in.raw.modrm.rm | (in.raw.rex.B << 3));
			uint64_t *crp = cr == 0 ? &m->cr0 : cr == 2 ? &m->cr2 :
					cr == 3 ? &m->cr3 : cr == 4 ? &m->cr4 :
					cr == 8 ? &m->cr8 : NULL;
			if (m->cpl != 0 || !crp) {
				gp_fault(sim, ip, "MOV CR at CPL 3 or bad CR");
				return;
			}
			if (in.opcode == 0x22) {
				v = rget(sim, gpr);
				if (cr == 0 && m->mode == 64 && !(v & CR0_PG)) {
					gp_fault(sim, ip, "clearing CR0.PG in 64-bit mode");
					return;
				}
				*crp = v;
				tmpl_on_state(sim);
			} else {
				v = *crp;
				rset(sim, gpr, v);
			}
			r = special_rec(sim, ip, len, si.cls, next, false);
			r->value = v;
			rec_done(sim);
			rset(sim, R_IP, next);
			return;
		}
		/* MONITOR (SDM Vol. 2B): #UD at CPL > 0, #GP(0) for
		 * extensions in ECX; the address (DS:rAX) is not checked. */
		if (in.mnemonic == ZYDIS_MNEMONIC_MONITOR) {
			if (m->cpl != 0) {
				exception(sim, 6, ip, 0, 0, "MONITOR at CPL 3");
				goto fault_restart;
			}
			if ((uint32_t)rget(sim, R_CX)) {
				gp_fault(sim, ip, "MONITOR with extensions in ECX");
				return;
			}
			m->monitor_armed = true;
			special_rec(sim, ip, len, si.cls, next, false);
			rec_done(sim);
			rset(sim, R_IP, next);
			return;
		}
		/* CLI, STI (IOPL checked in on_code), POPF: RFLAGS.IF is in
		 * the record, so the model executes them (SDM Vol. 2A CLI,
		 * Vol. 2B STI, POPF) */
		if (in.mnemonic == ZYDIS_MNEMONIC_CLI || in.mnemonic == ZYDIS_MNEMONIC_STI) {
			uint64_t fl = rget(sim, R_FLAGS);
			bool shadow = in.mnemonic == ZYDIS_MNEMONIC_STI && !(fl & EFL_IF);
			if (in.mnemonic == ZYDIS_MNEMONIC_CLI)
				fl &= ~(uint64_t)EFL_IF;
			else
				fl |= EFL_IF;
			rset(sim, R_FLAGS, fl);
			tmpl_on_state(sim);
			special_rec(sim, ip, len, si.cls, next, false);
			/* STI that sets IF: interrupts wait one more instruction
			 * (SDM 6.8.3) */
			sim->last_shadow = shadow;
			rec_done(sim);
			rset(sim, R_IP, next);
			return;
		}
		if (in.mnemonic == ZYDIS_MNEMONIC_POPF || in.mnemonic == ZYDIS_MNEMONIC_POPFD ||
		    in.mnemonic == ZYDIS_MNEMONIC_POPFQ) {
			int ow = in.operand_width / 8;
			uint64_t fl = rget(sim, R_FLAGS), nf = 0;
			unsigned iopl = (unsigned)(fl >> 12) & 3;
			sp = rget(sim, R_SP);
			if (!pop(sim, &sp, &nf, ow)) {
				stack_fault(sim, ip, sp, false, "POPF");
				return;
			}
			rset(sim, R_SP, sp);
			/* protected/64-bit mode, not VM86: CF PF AF ZF SF TF
			 * IF DF OF IOPL NT AC ID; IOPL only at CPL 0, IF only
			 * at CPL <= IOPL; RF cleared; VM, VIF, VIP kept;
			 * 16-bit operand: the low 16 bits only */
			uint64_t mask = EFL_POPF_MASK;
			if (m->cpl != 0)
				mask &= ~(uint64_t)EFL_IOPL;
			if ((unsigned)m->cpl > iopl)
				mask &= ~(uint64_t)EFL_IF;
			if (ow == 2)
				mask &= 0xffff;
			fl = ((fl & ~mask) | (nf & mask) | EFL_FIXED1) & ~(uint64_t)EFL_RF;
			rset(sim, R_FLAGS, fl);
			tmpl_on_state(sim);
			special_rec(sim, ip, len, si.cls, next, false);
			rec_done(sim);
			rset(sim, R_IP, next);
			return;
		}
		/* RDTSC, RDTSCP: the model's TSC */
		if (in.mnemonic == ZYDIS_MNEMONIC_RDTSC ||
		    in.mnemonic == ZYDIS_MNEMONIC_RDTSCP) {
			r = special_rec(sim, ip, len, si.cls, next, false);
			r->value = sim->tsc;
			rset(sim, R_AX, sim->tsc & 0xffffffffull);
			rset(sim, R_DX, sim->tsc >> 32);
			if (in.mnemonic == ZYDIS_MNEMONIC_RDTSCP)
				rset(sim, R_CX, 0);
			rec_done(sim);
			rset(sim, R_IP, next);
			return;
		}
		/* RDRAND, RDSEED: a fixed sequence, CF=1 */
		if (in.mnemonic == ZYDIS_MNEMONIC_RDRAND ||
		    in.mnemonic == ZYDIS_MNEMONIC_RDSEED) {
			uint64_t x = sim->rand_state;
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			sim->rand_state = x;
			if (ops[0].size < 64)
				x &= (1ull << ops[0].size) - 1;
			int gpr = gpr_of_zydis(ops[0].reg.value);
			if (ops[0].size == 16)
				x |= rget(sim, gpr) & ~0xffffull;
			rset(sim, gpr, x);
			rset(sim, R_FLAGS, (rget(sim, R_FLAGS) & ~0x8d5ull) | 1);
			r = special_rec(sim, ip, len, si.cls, next, false);
			r->value = x;
			rec_done(sim);
			rset(sim, R_IP, next);
			return;
		}
		if (in.mnemonic == ZYDIS_MNEMONIC_XABORT || in.mnemonic == ZYDIS_MNEMONIC_XTEST) {
			emulate_rtm(sim, &in, ip, si.cls, 0);
			return;
		}
		exception(sim, 6, ip, 0, 0, "RSM outside SMM");
		goto fault_restart;
	case RTIT_IC_HLT:
		if (m->cpl != 0) {
			gp_fault(sim, ip, "HLT at CPL 3");
			return;
		}
		special_rec(sim, ip, len, si.cls, next, false);
		rec_done(sim);
		wait_for_wake(sim, ip, next, false, "HLT");
		return;
	case RTIT_IC_MWAIT: {
		/* SDM Vol. 2B MWAIT: #UD at CPL > 0; #GP(0) for reserved
		 * extensions (ECX[31:1]); EAX[7:4] is the target C-state
		 * (Cn as n-1, 0xF = C0), EAX[3:0] the sub-state. */
		uint32_t eax = (uint32_t)rget(sim, R_AX), ecx = (uint32_t)rget(sim, R_CX);
		unsigned hint = (eax >> 4) & 0xf;
		bool wait = m->monitor_armed;
		if (m->cpl != 0) {
			exception(sim, 6, ip, 0, 0, "MWAIT at CPL 3");
			goto fault_restart;
		}
		if (ecx >> 1) {
			gp_fault(sim, ip, "MWAIT with reserved extensions in ECX");
			return;
		}
		m->monitor_armed = false;
		r = special_rec(sim, ip, len, si.cls, next, false);
		r->value = eax;
		r->msr = ecx;
		/* without an armed monitor execution goes on at once */
		r->vector = (uint8_t)(wait && hint != 0xf ? hint + 1 : 0);
		rec_done(sim);
		if (!wait) {
			rset(sim, R_IP, next);
			return;
		}
		wait_for_wake(sim, ip, next, ecx & 1, "MWAIT");
		return;
	}
	case RTIT_IC_XBEGIN:
	case RTIT_IC_XEND:
		emulate_rtm(sim, &in, ip, si.cls, si.target);
		return;
	case RTIT_IC_ENCLU: {
		/* SGX (SDM Vol. 3D): EENTER, ERESUME, EEXIT (sgx.c, D50) */
		struct sim_sgx_out so;
		if (sim_sgx_enclu(sim, ip, next, &so) < 0) {
			exception(sim, so.vec, ip, 0, 0, so.why);
			return;
		}
		tmpl_on_state(sim);	/* enclave mode, ERESUME's RFLAGS */
		r = special_rec(sim, ip, len, si.cls, so.next, true);
		r->value = so.leaf;
		r->vector = so.debug;
		rec_done(sim);
		rset(sim, R_IP, so.next);
		return;
	}
	case RTIT_IC_PTWRITE: {
		bool ok;
		v = operand_value(sim, &ops[0], ip, len, &ok);
		if (!ok) {
			exception(sim, 14, ip, 0, mem_ea(sim, &ops[0], ip, len),
				  "PTWRITE operand unmapped");
			goto fault_restart;
		}
		r = special_rec(sim, ip, len, si.cls, next, false);
		r->value = v;
		r->msr = ops[0].size;
		rec_done(sim);
		rset(sim, R_IP, next);
		return;
	}
	default:
		stop_with(sim, RTIT_SIM_STOP_ERROR, ip,
			  "no model for instruction at 0x%" PRIx64, ip);
		return;
	}
fault_restart:
	return;	/* as gp_fault: RIP is the handler or the run stopped */
}

static bool is_special_at(struct rtit_sim *sim, uint64_t ip)
{
	uint8_t buf[16] = {0};
	ZydisDecodedInstruction in;
	struct isa_insn si;
	uc_mem_read(sim->uc, ip, buf, sizeof(buf));
	if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&sim->dec, NULL, buf,
							sizeof(buf), &in)))
		return false;
	isa_classify(&in, ip, &si);
	return si.flags & ISA_I_SPECIAL;
}

/* IOPL-sensitive (CLI, STI, IN, OUT, INS, OUTS) rather than CPL 0 only */
static bool priv_iopl(struct rtit_sim *sim, uint64_t ip)
{
	uint8_t buf[16] = {0};
	ZydisDecodedInstruction in;
	uc_mem_read(sim->uc, ip, buf, sizeof(buf));
	if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&sim->dec, NULL, buf,
							sizeof(buf), &in)))
		return false;
	switch (in.mnemonic) {
	case ZYDIS_MNEMONIC_CLI: case ZYDIS_MNEMONIC_STI: case ZYDIS_MNEMONIC_IN:
	case ZYDIS_MNEMONIC_OUT: case ZYDIS_MNEMONIC_INSB: case ZYDIS_MNEMONIC_INSW:
	case ZYDIS_MNEMONIC_INSD: case ZYDIS_MNEMONIC_OUTSB:
	case ZYDIS_MNEMONIC_OUTSW: case ZYDIS_MNEMONIC_OUTSD:
		return true;
	default:
		return false;
	}
}

static void on_code(uc_engine *uc, uint64_t addr, uint32_t size, void *opaque)
{
	struct rtit_sim *sim = opaque;
	if (sim->req != SIM_REQ_NONE) {
		uc_emu_stop(uc);
		return;
	}
	uint64_t count = sim->retired;
	int k = -1;
	const struct sim_block *b = NULL;
	if (sim->pending) {
		b = blk(sim, sim->pending);
		k = insn_index(sim, b, addr);
		if (k >= 0)
			count = sim->pending_base + (uint64_t)k;
	}
	if (k < 0)
		return;	/* not at an instruction boundary we know */
	if (count >= sim->cfg.budget) {
		pending_retire_before(sim, addr);
		stop_with(sim, RTIT_SIM_STOP_BUDGET, addr,
			  "instruction budget of %" PRIu64 " exhausted at 0x%" PRIx64,
			  sim->cfg.budget, addr);
		return;
	}
	int e = inj_due_count(sim, count);
	if (e < 0)
		e = inj_due_ip(sim, addr);
	if (e < 0 && sim->irq_deferred >= 0 && count >= sim->irq_after &&
	    count > sim->pending_base && (rget(sim, R_FLAGS) & EFL_IF))
		e = sim->irq_deferred;
	if (e >= 0 || count == sim->pmu_due) {
		pending_retire_before(sim, addr);
		if (e >= 0)
			sim->inj_due = e;
		request(sim, SIM_REQ_EVENT, addr);
		return;
	}
	if (sim->cfg.has_end && addr == sim->cfg.end_ip) {
		pending_retire_before(sim, addr);
		stop_with(sim, RTIT_SIM_STOP_END, addr,
			  "reached end address 0x%" PRIx64, addr);
		return;
	}
	const struct isa_insn *si = &sim->cache.insns[b->first + (uint32_t)k];
	uint32_t txs;
	if (sim->rtm.depth && tx_aborts(si, &txs)) {
		pending_retire_before(sim, addr);
		tx_abort(sim, addr, txs);
		if (sim->cfg.deliver == RTIT_SIM_PER_BLOCK)
			flush(sim);
		return;
	}
	if (si->flags & ISA_I_PRIV) {
		/* SDM 2.8 (privileged), 19.5 (IOPL-sensitive); Unicorn runs at
		 * CPL 0 and would execute them */
		if (sim->m.cpl && !(priv_iopl(sim, addr) &&
				    ((rget(sim, R_FLAGS) >> 12) & 3) >= (unsigned)sim->m.cpl)) {
			pending_retire_before(sim, addr);
			gp_fault(sim, addr, "privileged instruction at CPL 3");
			return;
		}
		if (!(si->flags & ISA_I_SPECIAL))
			return;	/* Unicorn executes it */
	}
	if (!(si->flags & ISA_I_SPECIAL))
		return;
	pending_retire_before(sim, addr);
	emulate(sim, addr);
	if (sim->cfg.deliver == RTIT_SIM_PER_BLOCK)
		flush(sim);
}

/* ------------------------------------------------------ injected events */

static struct rtit_sim_rec *event_rec(struct rtit_sim *sim, int kind,
				      uint64_t ip, uint64_t next)
{
	struct rtit_sim_rec *r = rec_new(sim);
	r->kind = RTIT_SIM_EVENT;
	r->cls = (uint8_t)kind;
	r->ip = ip;
	r->next_ip = next;
	r->cycles = sim->cycles;
	r->tsc = sim->tsc;
	sim->events++;
	return r;
}

/* INIT (injected event i, ip = NLIP), SDM Vol. 3 Table 10-1: on the BSP
 * the processor goes to the reset vector (CS F000, base FFFF0000, IP
 * FFF0: LIP FFFFFFF0) in real mode; on an AP (vector = 1) it waits for a
 * SIPI, which then starts it at CS = VV00, IP 0 (LIP VV000).  No time
 * passes while it waits; the next SIPI event of the scenario, whatever
 * its trigger, is the one it gets (docs/sim.md "INIT and SIPI").
 * Returns the IP to resume at, or UINT64_MAX with the run stopped. */
static uint64_t init_now(struct rtit_sim *sim, int i, uint64_t ip)
{
	bool ap = sim->inj[i].vector != 0;
	int s = -1;
	struct rtit_sim_rec *r;

	if (ap) {
		for (int k = 0; k < sim->ninj; k++)
			if (!sim->inj_done[k] && sim->inj[k].kind == RTIT_EV_SIPI) {
				s = k;
				break;
			}
	}
	if (sim_init_state(sim, RTIT_SIM_RESET_CS, ap ? 0 : RTIT_SIM_RESET_CS_BASE,
			   ap ? 0 : RTIT_SIM_RESET_IP) < 0) {
		stop_with(sim, RTIT_SIM_STOP_ERROR, ip, "INIT at 0x%" PRIx64 ": %s", ip, sim->errmsg);
		return UINT64_MAX;
	}
	sim->irq_deferred = -1;		/* INIT clears what was pending */
	tmpl_on_state(sim);
	r = event_rec(sim, RTIT_EV_INIT, ip, ap ? 0 : RTIT_SIM_RESET_LIP);
	r->vector = ap;
	rec_done(sim);
	if (!ap)
		return RTIT_SIM_RESET_LIP;
	if (s < 0) {
		stop_with(sim, RTIT_SIM_STOP_HALTED, ip, "waiting for SIPI after INIT at 0x%"
			  PRIx64 " (no sipi event follows)", ip);
		return UINT64_MAX;
	}
	sim->inj_done[s] = true;
	uint8_t vv = sim->inj[s].vector;
	uint64_t lip = (uint64_t)vv << 12;
	if (sim_init_state(sim, (uint16_t)(vv << 8), lip, 0) < 0) {
		stop_with(sim, RTIT_SIM_STOP_ERROR, ip, "SIPI: %s", sim->errmsg);
		return UINT64_MAX;
	}
	tmpl_on_state(sim);
	r = event_rec(sim, RTIT_EV_SIPI, lip, lip);
	r->vector = vv;
	rec_done(sim);
	return lip;
}

/* Delivers injected event i with the flow about to execute at ip (NLIP).
 * Returns the IP to resume at, or UINT64_MAX with the run stopped. */
static uint64_t inject_now(struct rtit_sim *sim, int i, uint64_t ip)
{
	const struct rtit_sim_inject *e = &sim->inj[i];
	struct rtit_sim_rec *r;
	char why[64];
	sim->inj_done[i] = true;
	/* SDM Vol. 1 16.3.8.2: an interrupt, NMI, SMI or VM exit inside a
	 * transaction aborts it; the event is then taken at the fallback
	 * (an interrupt held by IF = 0 does neither).  An external MSR write
	 * stands for a WRMSR by other software on this core (a handler, a
	 * VMM), and WRMSR aborts (16.3.8.1): it aborts too, and the write
	 * lands at the fallback (D61; the trace could not say InTX at a
	 * TraceEn 0->1 otherwise: Table 33-27 lists no MODE.TSX for it). */
	if (sim->rtm.depth &&
	    (e->kind == RTIT_EV_NMI || e->kind == RTIT_EV_SMI || e->kind == RTIT_EV_VMEXIT ||
	     e->kind == RTIT_EV_MSR_WRITE_EXTERNAL ||
	     e->kind == RTIT_EV_INIT || (e->kind == RTIT_EV_UINTR && sim->uintr.uif &&
					 sim->m.cpl == 3) ||
	     (e->kind == RTIT_EV_EXT_INTERRUPT && (rget(sim, R_FLAGS) & EFL_IF))))
		ip = tx_abort(sim, ip, RTIT_RTM_ABORT_RETRY);
	/* SDM Vol. 3D 40: the same events inside an enclave exit it (AEX);
	 * an interrupt or NMI is then delivered as from the AEP, an SMI or
	 * VM exit happens at the AEP */
	if (sim->sgx.cur >= 0 &&
	    (e->kind == RTIT_EV_NMI || e->kind == RTIT_EV_SMI || e->kind == RTIT_EV_VMEXIT ||
	     (e->kind == RTIT_EV_EXT_INTERRUPT && (rget(sim, R_FLAGS) & EFL_IF)))) {
		bool smi = e->kind == RTIT_EV_SMI || e->kind == RTIT_EV_VMEXIT;
		int vec = e->kind == RTIT_EV_NMI ? 2 : e->vector;
		snprintf(why, sizeof(why), "no handler for %s vector %d",
			 rtit_sim_event_name(e->kind), vec);
		if (aex_event(sim, smi ? -1 : vec, ip, false, 0, 0, why) < 0)
			return UINT64_MAX;
		if (!smi)
			return sim->m.idt[vec];
		ip = rget(sim, R_IP);
	}
	switch (e->kind) {
	case RTIT_EV_EXT_INTERRUPT:
		if (!(rget(sim, R_FLAGS) & EFL_IF)) {
			/* held until IF=1 (checked at block starts) */
			sim->irq_deferred = i;
			return ip;
		}
		__attribute__((fallthrough));
	case RTIT_EV_NMI: {
		int vec = e->kind == RTIT_EV_NMI ? 2 : e->vector;
		snprintf(why, sizeof(why), "no handler for %s vector %d",
			 rtit_sim_event_name(e->kind), vec);
		if (deliver(sim, vec, ip, false, 0, why) < 0)
			return UINT64_MAX;
		r = event_rec(sim, e->kind, ip, sim->delivered_to);
		r->vector = (uint8_t)vec;
		rec_done(sim);
		return sim->delivered_to;
	}
	case RTIT_EV_SMI:
	case RTIT_EV_VMEXIT:
		/* state changes only: no SMM or VMX root code runs; a VM
		 * exit's reason, qualification and event vector are what the
		 * VMCS's exit-information fields would hold (D48) */
		r = event_rec(sim, e->kind, ip, ip);
		if (e->kind == RTIT_EV_VMEXIT) {
			r->msr = e->msr;
			r->value = e->value;
			r->vector = e->vector;
		}
		rec_done(sim);
		clock_on_cycles(sim, e->duration);
		event_rec(sim, e->kind == RTIT_EV_SMI ? RTIT_EV_RSM : RTIT_EV_VMENTRY,
			  ip, ip);
		rec_done(sim);
		return ip;
	case RTIT_EV_FREQ_CHANGE:
		sim->core_ratio = (uint32_t)e->value;
		r = event_rec(sim, e->kind, ip, ip);
		r->value = e->value;
		rec_done(sim);
		return ip;
	case RTIT_EV_SLEEP:
		r = event_rec(sim, e->kind, ip, ip);
		r->vector = e->vector;
		r->value = e->value;
		rec_done(sim);
		sim->tsc += e->value;	/* the core clock stops, the TSC runs */
		r = event_rec(sim, RTIT_EV_WAKE, ip, ip);
		r->vector = e->vector;
		rec_done(sim);
		return ip;
	case RTIT_EV_INIT:
		return init_now(sim, i, ip);
	case RTIT_EV_SIPI:
		/* SDM Vol. 3 9.4: a SIPI to a processor not waiting for one
		 * is ignored; an AP's INIT takes its SIPI at once (init_now) */
		return ip;
	case RTIT_EV_UINTR:
		/* UIRR[vector] := 1; delivered when recognised (inject_due,
		 * on_block), without user interrupts never */
		if (sim->cfg.uintr)
			sim->uintr.rr |= 1ull << (e->vector & 63);
		return ip;
	case RTIT_EV_TSX_ABORT:
		/* an asynchronous abort (another agent's conflicting access);
		 * nothing without a transaction */
		return sim->rtm.depth ? tx_abort(sim, ip, (uint32_t)e->value) : ip;
	case RTIT_EV_MSR_WRITE_EXTERNAL: {
		uint64_t v = e->value;
		r = event_rec(sim, e->kind, ip, ip);
		r->msr = e->msr;
		r->value = v;
		struct rtit_sim_rec ctx = *r;
		rec_done(sim);
		if (msr_access(sim, true, e->msr, &v, &ctx) < 0) {
			stop_with(sim, RTIT_SIM_STOP_ERROR, ip,
				  "external write of MSR 0x%x refused", e->msr);
			return UINT64_MAX;
		}
		return ip;
	}
	default:
		stop_with(sim, RTIT_SIM_STOP_ERROR, ip, "bad injected event");
		return UINT64_MAX;
	}
}

/* The PEBS assist (pmu.c) with the flow about to execute at ip: the
 * record, announced by an RTIT_EV_PEBS record alone in its batch. */
static void pebs_now(struct rtit_sim *sim, uint64_t ip)
{
	const struct rtit_sim_consumer *c = &sim->cfg.consumer;
	struct rtit_pebs_item it[RTIT_PEBS_MAX_ITEMS];
	const struct rtit_sim_pebs *p = &sim->pmu.rec;

	flush(sim);
	sim_pmu_assist(sim, ip);
	struct rtit_sim_rec *r = event_rec(sim, RTIT_EV_PEBS, ip, ip);
	r->value = p->ip;
	r->msr = rtit_pebs_digest(it, rtit_pebs_items(p, it));
	r->vector = p->groups;
	if (c->on_pebs)
		c->on_pebs(c->opaque, p, r);
	flush(sim);
}

/* User-interrupt delivery with the flow at @ip (NLIP): the UINTR record
 * (ip = NLIP, next_ip = UIHANDLER, vector = UIRRV).  An RTM transaction
 * aborts first, as for an interrupt.  Returns the handler, or UINT64_MAX
 * with the run stopped. */
static uint64_t uintr_now(struct rtit_sim *sim, uint64_t ip)
{
	uint64_t h, bad;
	uint8_t v;

	if (sim->rtm.depth)
		ip = tx_abort(sim, ip, RTIT_RTM_ABORT_RETRY);
	if (sim_uintr_deliver(sim, ip, &h, &v, &bad) < 0) {
		stop_with(sim, RTIT_SIM_STOP_FAULT, ip, "user-interrupt delivery at 0x%" PRIx64
			  ": stack 0x%" PRIx64 " not writable", ip, bad);
		return UINT64_MAX;
	}
	tmpl_on_state(sim);
	struct rtit_sim_rec *r = event_rec(sim, RTIT_EV_UINTR, ip, h);
	r->vector = v;
	rec_done(sim);
	return h;
}

/* Delivers every event due at ip; returns the resume IP. */
static uint64_t inject_due(struct rtit_sim *sim, uint64_t ip)
{
	/* first the PEBS record of the instruction that just retired */
	if (sim->retired == sim->pmu_due)
		pebs_now(sim, ip);
	if (sim->irq_deferred >= 0 && sim->retired >= sim->irq_after &&
	    (rget(sim, R_FLAGS) & EFL_IF)) {
		int i = sim->irq_deferred;
		sim->irq_deferred = -1;
		ip = inject_now(sim, i, ip);
		if (ip == UINT64_MAX)
			return ip;
	}
	if (sim->inj_due >= 0) {
		int i = sim->inj_due;
		sim->inj_due = -1;
		if (!sim->inj_done[i])
			ip = inject_now(sim, i, ip);
	}
	int i;
	while (ip != UINT64_MAX &&
	       ((i = inj_due_count(sim, sim->retired)) >= 0 ||
		(i = inj_due_ip(sim, ip)) >= 0))
		ip = inject_now(sim, i, ip);
	if (ip != UINT64_MAX && sim->uintr.rr && sim_uintr_due(sim))
		ip = uintr_now(sim, ip);
	return ip;
}

/* ------------------------------------------------------------- lifetime */

int rtit_sim_new(struct rtit_sim **simp, const struct rtit_sim_config *cfg)
{
	if (!simp || !cfg)
		return -RTIT_ERR_INVALID;
	*simp = NULL;
	if ((cfg->mode != 64 && cfg->mode != 32) || !cfg->clock.core_ratio ||
	    !cfg->clock.tsc_ratio || (cfg->cpl != 0 && cfg->cpl != 3) ||
	    cfg->deliver < 0 || cfg->deliver > RTIT_SIM_PER_BLOCK)
		return -RTIT_ERR_BAD_CONFIG;
	for (int i = 0; i < RTIT_SIM_NUM_CLASSES; i++)
		if (cfg->clock.cpi[i] > 255)
			return -RTIT_ERR_BAD_CONFIG;
	struct rtit_sim *sim = calloc(1, sizeof(*sim));
	if (!sim)
		return -RTIT_ERR_NOMEM;
	sim->cfg = *cfg;
	sim->sgx.cur = -1;	/* outside any enclave */
	if (!sim->cfg.batch_cap)
		sim->cfg.batch_cap = 1024;
	if (!sim->cfg.budget)
		sim->cfg.budget = 100000000ull;
	sim->batch = calloc(sim->cfg.batch_cap, sizeof(*sim->batch));
	if (!sim->batch || sim_cache_init(&sim->cache) < 0) {
		rtit_sim_free(sim);
		return -RTIT_ERR_NOMEM;
	}
	uc_mode um = cfg->mode == 64 ? UC_MODE_64 : UC_MODE_32;
	if (uc_open(UC_ARCH_X86, um, &sim->uc) != UC_ERR_OK) {
		sim->uc = NULL;
		rtit_sim_free(sim);
		return -RTIT_ERR_INTERNAL;
	}
	/* SYSENTER and friends need a recent CPU model */
	uc_ctl_set_cpu_model(sim->uc, UC_CPU_X86_SKYLAKE_CLIENT);
	if (old_exc_off == -2)
		old_exc_off = calibrate_old_exception();
	if (old_exc_off >= 0 && uc_context_alloc(sim->uc, &sim->ctx) != UC_ERR_OK)
		sim->ctx = NULL;
	if (cfg->mode == 64)
		ZydisDecoderInit(&sim->dec, ZYDIS_MACHINE_MODE_LONG_64,
				 ZYDIS_STACK_WIDTH_64);
	else
		ZydisDecoderInit(&sim->dec, ZYDIS_MACHINE_MODE_LONG_COMPAT_32,
				 ZYDIS_STACK_WIDTH_32);
	struct sim_model *m = &sim->m;
	m->mode = cfg->mode;
	m->tr = -1;
	m->cpl = cfg->cpl;
	m->cr0 = cfg->cr0;
	m->cr3 = cfg->cr3;
	m->rsp0 = cfg->rsp0;
	if (m->cpl == 3) {
		m->cs = m->mode == 64 ? UCS64 : UCS32;
		m->ss = m->mode == 64 ? USS64 : USS32;
	} else {
		m->cs = KCS;
		m->ss = KSS;
	}
	sim->core_ratio = cfg->clock.core_ratio;
	sim->tsc = cfg->clock.tsc_start;
	sim->inj_due = -1;
	sim->irq_deferred = -1;
	sim->pmu_due = UINT64_MAX;
	sim->pmu.lbr.depth = RTIT_LBR_MAX_DEPTH;	/* the reset value: the deepest */
	sim->rand_state = 0x9e3779b97f4a7c15ull;
	tmpl_on_state(sim);

	uc_err e = uc_hook_add(sim->uc, &sim->h_block, UC_HOOK_BLOCK,
			       (void *)on_block, sim, 1, 0);
	e = e ? e : uc_hook_add(sim->uc, &sim->h_intr, UC_HOOK_INTR,
				(void *)on_intr, sim, 1, 0);
	e = e ? e : uc_hook_add(sim->uc, &sim->h_unmapped,
				UC_HOOK_MEM_UNMAPPED | UC_HOOK_MEM_PROT,
				(void *)on_unmapped, sim, 1, 0);
	if (!e && cfg->precise_faults)
		e = uc_hook_add(sim->uc, &sim->h_sync,
				UC_HOOK_MEM_READ | UC_HOOK_MEM_WRITE,
				(void *)on_sync, sim, UINT64_MAX - 1,
				UINT64_MAX - 1);
	if (e) {
		rtit_sim_free(sim);
		return -RTIT_ERR_INTERNAL;
	}
	if (cfg->stack_size) {
		uint64_t base = (cfg->stack_top - cfg->stack_size) & ~0xfffull;
		int r = rtit_sim_map(sim, base, cfg->stack_top - base);
		if (r < 0) {
			rtit_sim_free(sim);
			return r;
		}
		rset(sim, R_SP, cfg->stack_top);
	}
	*simp = sim;
	return 0;
}

void rtit_sim_free(struct rtit_sim *sim)
{
	if (!sim)
		return;
	if (sim->ctx)
		uc_context_free(sim->ctx);
	if (sim->init_ctx)
		uc_context_free(sim->init_ctx);
	sim_rtm_fini(sim);
	if (sim->uc)
		uc_close(sim->uc);
	sim_cache_fini(&sim->cache);
	free(sim->batch);
	free(sim->hooked);
	for (size_t i = 0; i < sim->nsyms; i++)
		free(sim->syms[i].name);
	free(sim->syms);
	free(sim);
}

int rtit_sim_set_handler(struct rtit_sim *sim, unsigned vector, uint64_t ip)
{
	if (!sim || vector > 255)
		return -RTIT_ERR_INVALID;
	sim->m.idt[vector] = ip;
	sim->m.idt_present[vector] = 1;
	return 0;
}

int rtit_sim_add_task(struct rtit_sim *sim, uint16_t sel, uint64_t tss, int mode)
{
	if (!sim)
		return -RTIT_ERR_INVALID;
	struct sim_model *m = &sim->m;
	if (m->mode != 32)
		return sim_seterr(sim, -RTIT_ERR_INVALID, "tasks need mode 32: IA-32e mode has no"
			       " task switching (SDM Vol. 3 7.7)");
	if (!(sel & 0xfff8) || (sel & 4))
		return sim_seterr(sim, -RTIT_ERR_INVALID, "task selector 0x%x: not a GDT"
			       " selector other than the null one", sel);
	if (mode != 16 && mode != 32)
		return sim_seterr(sim, -RTIT_ERR_INVALID, "task 0x%x: mode must be 16 or 32", sel);
	if (task_of(m, sel) >= 0 || m->ntasks == RTIT_SIM_MAX_TASKS)
		return sim_seterr(sim, -RTIT_ERR_INVALID, "task 0x%x: declared twice, or more than"
			       " %d tasks", sel, RTIT_SIM_MAX_TASKS);
	uint8_t probe[104];
	if (tss > 0xffffffffull - 103 || uc_mem_read(sim->uc, tss, probe, sizeof(probe)) != UC_ERR_OK)
		return sim_seterr(sim, -RTIT_ERR_INVALID, "task 0x%x: its TSS at 0x%" PRIx64
			       " is not 104 bytes of mapped memory", sel, tss);
	m->tasks[m->ntasks++] = (struct sim_task){ (uint16_t)(sel & 0xfff8), (uint8_t)mode, false, tss };
	return 0;
}

int rtit_sim_set_tr(struct rtit_sim *sim, uint16_t sel)
{
	if (!sim)
		return -RTIT_ERR_INVALID;
	int t = task_of(&sim->m, sel);
	if (t < 0)
		return sim_seterr(sim, -RTIT_ERR_INVALID, "tr 0x%x: no such task", sel);
	if (sim->m.tr >= 0)
		sim->m.tasks[sim->m.tr].busy = false;
	sim->m.tr = t;
	sim->m.tasks[t].busy = true;	/* LTR marks it busy (SDM 7.2.4) */
	return 0;
}

int rtit_sim_set_task_gate(struct rtit_sim *sim, unsigned vector, uint16_t sel)
{
	if (!sim || vector > 255)
		return -RTIT_ERR_INVALID;
	if (task_of(&sim->m, sel) < 0)
		return sim_seterr(sim, -RTIT_ERR_INVALID, "task gate for vector %u: no task 0x%x",
			       vector, sel);
	sim->m.idt_task[vector] = (uint16_t)(sel & 0xfff8);
	sim->m.idt_present[vector] = 1;
	return 0;
}

int rtit_sim_set_reg(struct rtit_sim *sim, int uc_reg, uint64_t value)
{
	if (!sim || uc_reg_write(sim->uc, uc_reg, &value) != UC_ERR_OK)
		return -RTIT_ERR_INVALID;
	return 0;
}

int rtit_sim_get_reg(struct rtit_sim *sim, int uc_reg, uint64_t *value)
{
	*value = 0;
	if (!sim || uc_reg_read(sim->uc, uc_reg, value) != UC_ERR_OK)
		return -RTIT_ERR_INVALID;
	return 0;
}

uint64_t rtit_sim_rflags(struct rtit_sim *sim)
{
	return sim ? rget(sim, R_FLAGS) : 0;
}

void rtit_sim_abort(struct rtit_sim *sim, const char *msg)
{
	if (!sim || sim->req == SIM_REQ_STOP)
		return;
	stop_with(sim, RTIT_SIM_STOP_ERROR, rget(sim, R_IP), "aborted by the consumer: %s",
		  msg ? msg : "");
}

int rtit_sim_set_entry(struct rtit_sim *sim, uint64_t ip)
{
	uint8_t b;
	if (!sim || !sim->loaded)
		return -RTIT_ERR_INVALID;
	if (uc_mem_read(sim->uc, ip, &b, 1) != UC_ERR_OK)
		return sim_seterr(sim, -RTIT_ERR_INVALID,
				  "entry 0x%" PRIx64 " is not mapped", ip);
	sim->entry = ip;
	return 0;
}

int rtit_sim_set_end(struct rtit_sim *sim, uint64_t ip)
{
	if (!sim)
		return -RTIT_ERR_INVALID;
	sim->cfg.has_end = true;
	sim->cfg.end_ip = ip;
	return 0;
}

int rtit_sim_inject(struct rtit_sim *sim, const struct rtit_sim_inject *ev)
{
	if (!sim || !ev || ev->kind <= RTIT_EV_EXCEPTION ||
	    ev->kind >= RTIT_EV_COUNT || ev->kind == RTIT_EV_RSM ||
	    ev->kind == RTIT_EV_VMENTRY || ev->kind == RTIT_EV_WAKE ||
	    ev->trigger > RTIT_SIM_AT_IP)
		return -RTIT_ERR_INVALID;
	if (ev->kind == RTIT_EV_FREQ_CHANGE && !ev->value)
		return -RTIT_ERR_BAD_CONFIG;
	if (sim->ninj == RTIT_SIM_MAX_INJECT)
		return -RTIT_ERR_NOSPACE;
	sim->inj[sim->ninj++] = *ev;
	return 0;
}

int rtit_sim_msr_preset(struct rtit_sim *sim, uint32_t msr, uint64_t value)
{
	if (!sim)
		return -RTIT_ERR_INVALID;
	struct rtit_sim_rec ctx = sim->tmpl;
	ctx.msr = msr;
	ctx.value = value;
	if (msr_access(sim, true, msr, &value, &ctx) < 0)
		return sim_seterr(sim, -RTIT_ERR_INVALID,
				  "MSR 0x%x is not modelled or refused the value", msr);
	return 0;
}

/* ------------------------------------------------------------- run loop */

/*
 * Unicorn 2.0.1 calls abort() ("tcg fatal error") when it translates some
 * invalid encodings (FF /3 and FF /5 with a register operand), before any
 * hook can turn them into #UD (docs/sim.md, "Limits").  Rather than dying
 * with SIGABRT, the run ends with one line naming the instruction and the
 * process exits with status 6 (the guest did not end normally); what
 * stdio had buffered is flushed, but records and packets not yet handed
 * to the files are lost.  The abort is synchronous, on the
 * thread that runs the guest, so reading the guest's RIP and memory here
 * is safe in practice.
 */
static struct rtit_sim *volatile sim_running;
static int sim_run(struct rtit_sim *sim, struct rtit_sim_status *st);

static void on_unicorn_abort(int sig)
{
	struct rtit_sim *sim = sim_running;
	char line[384];
	int n;

	(void)sig;
	if (!sim) {
		signal(SIGABRT, SIG_DFL);
		raise(SIGABRT);
		return;
	}
	uint64_t pc = 0, at = 0;
	uint8_t buf[16];
	char bytes[3 * 16 + 1] = "";
	bool found = false;
	uc_reg_read(sim->uc, UC_X86_REG_RIP, &pc);
	/* The block being translated starts at RIP and runs straight on:
	 * its first instruction Zydis rejects, or FF /3, /5 with a register
	 * operand, is the one. */
	at = pc;
	for (int i = 0; i < 600 && !found; i++) {
		ZydisDecodedInstruction in;
		if (uc_mem_read(sim->uc, at, buf, sizeof(buf)) != UC_ERR_OK)
			break;
		if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&sim->dec, NULL, buf,
								sizeof(buf), &in)) ||
		    (buf[0] == 0xff && in.raw.modrm.mod == 3 &&
		     (in.raw.modrm.reg == 3 || in.raw.modrm.reg == 5))) {
			found = true;
			snprintf(bytes, sizeof(bytes), "%02x %02x", buf[0], buf[1]);
			break;
		}
		at += in.length;
	}
	fflush(NULL);
	if (found)
		n = snprintf(line, sizeof(line), "rtitsim: the guest did not end normally: "
			     "Unicorn 2.0.1 aborted translating the instruction at 0x%" PRIx64
			     " (%s ...), an invalid encoding it cannot translate (the CPU "
			     "raises #UD); the output files are incomplete\n", at, bytes);
	else
		n = snprintf(line, sizeof(line), "rtitsim: the guest did not end normally: "
			     "Unicorn 2.0.1 aborted translating the code at 0x%" PRIx64
			     " (an encoding it cannot translate); the output files are incomplete\n", pc);
	if (n > 0)
		(void)!write(2, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
	_exit(6);
}

int rtit_sim_run(struct rtit_sim *sim, struct rtit_sim_status *st)
{
	struct sigaction sa, old_sa;
	int ret;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_unicorn_abort;
	sigemptyset(&sa.sa_mask);
	sim_running = sim;
	sigaction(SIGABRT, &sa, &old_sa);
	ret = sim_run(sim, st);
	sigaction(SIGABRT, &old_sa, NULL);
	sim_running = NULL;
	return ret;
}

static int sim_run(struct rtit_sim *sim, struct rtit_sim_status *st)
{
	if (!sim || !st)
		return -RTIT_ERR_INVALID;
	if (!sim->loaded) {
		memset(st, 0, sizeof(*st));
		st->stop = RTIT_SIM_STOP_ERROR;
		snprintf(st->msg, sizeof(st->msg), "nothing loaded");
		return -RTIT_ERR_INVALID;
	}
	memset(&sim->st, 0, sizeof(sim->st));
	/* code hooks known before any translation: IP events, end address */
	for (int i = 0; i < sim->ninj; i++)
		if (sim->inj[i].trigger == RTIT_SIM_AT_IP &&
		    hook_at(sim, sim->inj[i].at) < 0)
			return -RTIT_ERR_INTERNAL;
	if (sim->cfg.has_end && hook_at(sim, sim->cfg.end_ip) < 0)
		return -RTIT_ERR_INTERNAL;

	/* the registers as set (RFLAGS.IF) */
	tmpl_on_state(sim);
	uint64_t ip = sim->entry;
	ip = inject_due(sim, ip);
	while (ip != UINT64_MAX && sim->req != SIM_REQ_STOP) {
		sim->req = SIM_REQ_NONE;
		sim->pending = 0;
		/* "until" must never be reached: a non-canonical address */
		uc_err err = uc_emu_start(sim->uc, ip - sim->m.cs_base, 0x8000000000000000ull, 0, 0);
		uint64_t rip = rget(sim, R_IP);
		int req = sim->req;
		if (req == SIM_REQ_STOP)
			break;
		if (req == SIM_REQ_NONE) {
			if (err == UC_ERR_INSN_INVALID && is_special_at(sim, rip)) {
				/* Unicorn rejects some specials (PTWRITE m32)
				 * before any hook: emulate them from here */
				pending_retire_before(sim, rip);
				emulate(sim, rip);
				if (sim->req == SIM_REQ_STOP)
					break;
				if (sim->req == SIM_REQ_EVENT)
					ip = inject_due(sim, sim->resume_ip);
				else
					ip = inject_due(sim, rget(sim, R_IP));
				continue;
			}
			if (err == UC_ERR_INSN_INVALID) {
				sim->fault_vec = 6;
				sim->fault_err = 0;
				sim->fault_addr_valid = false;
				snprintf(sim->fault_why, sizeof(sim->fault_why),
					 "invalid instruction");
				req = SIM_REQ_FAULT;
			} else if (err == UC_ERR_OK && sim->pending) {
				/* Unicorn left by itself (native HLT...) */
				pending_retire_before(sim, rip);
				stop_with(sim, RTIT_SIM_STOP_ERROR, rip,
					  "emulation left at 0x%" PRIx64, rip);
				break;
			} else {
				stop_with(sim, RTIT_SIM_STOP_ERROR, rip,
					  "emulator error at 0x%" PRIx64 ": %s",
					  rip, uc_strerror(err));
				break;
			}
			sim->fault_ip = rip;
		}
		switch (req) {
		case SIM_REQ_RESTART:
			pending_retire_before(sim, sim->resume_ip);
			ip = inject_due(sim, sim->resume_ip);
			break;
		case SIM_REQ_EVENT:
			pending_retire_before(sim, sim->resume_ip);
			ip = inject_due(sim, sim->resume_ip);
			break;
		case SIM_REQ_TX_ABORT:
			/* the RTM write set overflowed at a store (rtm.c) */
			pending_retire_before(sim, sim->rtm.overflow_ip);
			ip = inject_due(sim, tx_abort(sim, sim->rtm.overflow_ip,
						      RTIT_RTM_ABORT_CAPACITY));
			break;
		case SIM_REQ_FAULT: {
			uint64_t fip = sim->fault_ip == UINT64_MAX ? rip : sim->fault_ip;
			forget_exception(sim);
			pending_retire_before(sim, fip);
			/* #DB and #OF from Unicorn are traps (after the
			 * instruction); the rest are faults */
			bool trap = sim->fault_vec == 1 || sim->fault_vec == 4;
			if (exception_at(sim, sim->fault_vec, fip, sim->fault_err,
					 sim->fault_addr_valid ? sim->fault_addr : 0,
					 sim->fault_why, !trap) < 0)
				ip = UINT64_MAX;
			else
				ip = inject_due(sim, rget(sim, R_IP));
			break;
		}
		default:
			ip = UINT64_MAX;
			break;
		}
	}
	flush(sim);
	sim->st.insns = sim->retired;
	sim->st.events = sim->events;
	*st = sim->st;
	switch (st->stop) {
	case RTIT_SIM_STOP_HALTED:
	case RTIT_SIM_STOP_END:
		return 0;
	case RTIT_SIM_STOP_ERROR:
		return -RTIT_ERR_INTERNAL;
	default:
		return -RTIT_ERR_INVALID;
	}
}
