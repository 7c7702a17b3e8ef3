/*
 * run.c - the run loop and Unicorn's hooks: the block hook retires the
 * previous block's instructions in records and registers the new block
 * (the block cache, analyse.c); code hooks stop at special instructions,
 * injected events, the budget and the end address; faults Unicorn raises
 * become requests the loop delivers between uc_emu_start calls.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>

#include "sim_internal.h"

/* ----------------------------------------------------- retiring records */

/* Whether a COND instruction was taken, from the state right after it
 * (flags are unchanged by Jcc; LOOP has decremented the count). */
static bool cond_taken(struct rtit_sim *sim, uint8_t cc)
{
	uint64_t f = sim_reg_get(sim, R_FLAGS), cnt = sim_reg_get(sim, R_CX);
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

/* The records of block b for the current template (D151): built once per
 * template generation, the instruction fields and the state as the loop
 * in emit_insns writes them, next_ip the fall-through, cycles and tsc the
 * cycles from the block's start (relative: the clock is added when the
 * block retires). */
static const struct rtit_sim_rec *block_recs(struct rtit_sim *sim,
					     const struct sim_block *cb)
{
	struct sim_cache *c = &sim->cache;
	struct sim_block *b = &c->blocks[cb - c->blocks];
	struct rtit_sim_rec *rec = &c->recs[b->first];
	if (b->rec_gen == c->gen)
		return rec;
	const struct isa_insn *in = &c->insns[b->first];
	const uint64_t cr3 = sim->tmpl.cr3;
	const uint8_t tflags = sim->tmpl.flags, cpl = sim->tmpl.cpl, mode = sim->tmpl.mode;
	uint64_t cum = 0;
	for (uint32_t i = 0; i < b->n; i++) {
		cum += in[i].cpi;
		rec[i] = (struct rtit_sim_rec){
			.ip = in[i].ip, .next_ip = in[i].ip + in[i].len, .cr3 = cr3,
			.cycles = cum, .tsc = cum,
			.kind = RTIT_SIM_INSN, .cls = in[i].cls, .len = in[i].len,
			.flags = tflags | in[i].rflags, .cpl = cpl, .mode = mode,
		};
	}
	b->rec_gen = c->gen;
	return rec;
}

/* 16 bytes of a record, for copying one in four loads and four stores
 * (GCC/Clang vector extension; plain SSE2 moves on x86-64). */
typedef uint64_t sim_v2 __attribute__((vector_size(16)));
_Static_assert(offsetof(struct rtit_sim_rec, cycles) == 24 &&
	       offsetof(struct rtit_sim_rec, tsc) == 32,
	       "the clock straddles the record's second and third 16 bytes");

/* Copies @k prebuilt records to @r with the clock added: (cr3, cycles) +=
 * @add1, (tsc, value) += @add2.  In one pass through registers: a memcpy
 * then an add to its fields stalled on every record (the clock's load
 * spans two of memcpy's stores, so they are not forwarded to it; D176). */
static inline __attribute__((always_inline)) void
copy_recs(struct rtit_sim_rec *r, const struct rtit_sim_rec *src, uint32_t k,
	  sim_v2 add1, sim_v2 add2)
{
	const unsigned char *from = (const unsigned char *)src;
	unsigned char *to = (unsigned char *)r;
	for (uint32_t j = 0; j < k; j++, from += sizeof(*r), to += sizeof(*r)) {
		sim_v2 q0, q1, q2, q3;
		memcpy(&q0, from, 16);
		memcpy(&q1, from + 16, 16);
		memcpy(&q2, from + 32, 16);
		memcpy(&q3, from + 48, 16);
		q1 += add1;
		q2 += add2;
		memcpy(to, &q0, 16);
		memcpy(to + 16, &q1, 16);
		memcpy(to + 32, &q2, 16);
		memcpy(to + 48, &q3, 16);
	}
}

/* A whole block retired, to next_ip, with the core and TSC clocks in step
 * (the common case): its prebuilt records are copied into the batch with
 * the clock added on the way, then the last record's next IP and its
 * taken bit written.  @live: the registers are those right after the
 * block (the block hook), for a COND whose target is its fall-through.
 * The records and the batch boundaries are those of emit_insns' loop
 * (issue 20 goal 2; docs/performance.md D151, D176). */
static inline void emit_block(struct rtit_sim *sim, const struct sim_block *b,
			      uint64_t next_ip, bool live)
{
	const struct rtit_sim_rec *pre = block_recs(sim, b);
	const uint64_t c0 = sim->cycles, t0 = sim->tsc;
	uint8_t lflags = pre[b->n - 1].flags;
	if ((b->tail & SIM_TAIL_COND) &&
	    (next_ip != b->fall ||
	     ((b->tail & SIM_TAIL_COND_FALL) && live &&
	      cond_taken(sim, sim->cache.insns[b->first + b->n - 1].cc))))
		lflags |= RTIT_SIM_F_TAKEN;
	/* the clock as added to the second and third 16 bytes of a record
	 * (cr3, cycles) and (tsc, value) */
	const sim_v2 add1 = { 0, c0 }, add2 = { t0, 0 };
	uint32_t i = 0;
	while (i < b->n) {
		if (sim->nbatch == sim->cfg.batch_cap)
			sim_flush(sim);
		size_t room = sim->cfg.batch_cap - sim->nbatch;
		uint32_t k = b->n - i > room ? (uint32_t)room : b->n - i;
		struct rtit_sim_rec *r = &sim->batch[sim->nbatch];
		const struct rtit_sim_rec *src = pre + i;
		copy_recs(r, src, k, add1, add2);
		i += k;
		if (i == b->n) {
			r[k - 1].next_ip = next_ip;
			r[k - 1].flags = lflags;
		}
		sim->nbatch += k;
		sim->cycles = c0 + src[k - 1].cycles;	/* before the consumer runs */
		sim->tsc = t0 + src[k - 1].tsc;
	}
}

/* Emits instructions [from, to) of block b; the last instruction of the
 * block (when to == n) continues at next_ip.  The per-record state (CR3,
 * CPL, mode, flags) and the clock are held in locals for the loop: the
 * records are written whole, one store per field group, with no reload
 * of *sim after each (issue 20 goal 2; docs/performance.md D113). */
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
	if (from == 0 && to == b->n && to && same_clock && !one) {
		emit_block(sim, b, next_ip, sim->live_regs);
		goto retired;
	}
	const uint64_t cr3 = sim->tmpl.cr3;
	const uint8_t tflags = sim->tmpl.flags, cpl = sim->tmpl.cpl, mode = sim->tmpl.mode;
	uint64_t cycles = sim->cycles, tsc = sim->tsc;
	uint32_t i = from;
	while (i < to) {
		if (sim->nbatch == sim->cfg.batch_cap)
			sim_flush(sim);
		size_t room = one ? 1 : sim->cfg.batch_cap - sim->nbatch;
		uint32_t end = to - i > room ? i + (uint32_t)room : to;
		struct rtit_sim_rec *r = &sim->batch[sim->nbatch];
		sim->nbatch += end - i;
		for (; i < end; i++, r++) {
			const struct isa_insn *si = &in[i];
			const uint64_t fall = si->ip + si->len;
			const uint64_t nip = (i + 1 == b->n) ? next_ip : fall;
			uint8_t fl = tflags | si->rflags;
			if (si->cls == RTIT_IC_COND &&
			    (nip != fall ||
			     (si->target == fall && i + 1 == b->n &&
			      sim->live_regs && cond_taken(sim, si->cc))))
				fl |= RTIT_SIM_F_TAKEN;
			if (same_clock) {
				cycles += si->cpi;
				tsc += si->cpi;
			} else {
				sim->cycles = cycles;
				sim->tsc = tsc;
				sim_clock_on_cycles(sim, si->cpi);
				cycles = sim->cycles;
				tsc = sim->tsc;
			}
			*r = (struct rtit_sim_rec){
				.ip = si->ip, .next_ip = nip, .cr3 = cr3,
				.cycles = cycles, .tsc = tsc,
				.kind = RTIT_SIM_INSN, .cls = si->cls, .len = si->len,
				.flags = fl, .cpl = cpl, .mode = mode,
			};
		}
		sim->cycles = cycles;	/* before the consumer runs */
		sim->tsc = tsc;
		if (one)
			sim_flush(sim);
	}
retired:
	sim->retired += to - from;
	if (to > from) {
		sim->last_shadow = in[to - 1].flags & ISA_I_SHADOW;
		sim->last_ip = in[to - 1].ip;
	}
	if (sim->cfg.deliver == RTIT_SIM_PER_BLOCK)
		sim_flush(sim);
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

void sim_stop_with(struct rtit_sim *sim, int why, uint64_t ip,
		      const char *fmt, ...) __attribute__((format(printf, 4, 5)));

void sim_stop_with(struct rtit_sim *sim, int why, uint64_t ip,
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

void sim_request(struct rtit_sim *sim, int req, uint64_t ip)
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

/* The pending block (index + 1 @prev) retired to @addr in the block hook
 * (the registers are those after it): what emit_insns does, outside the
 * hook's fast path. */
static __attribute__((noinline)) void retire_slow(struct rtit_sim *sim, uint32_t prev,
						  uint64_t addr)
{
	const struct sim_block *p = blk(sim, prev);
	sim->live_regs = true;
	emit_insns(sim, p, 0, p->n, addr);
	sim->live_regs = false;
}

/* The pending block (index + 1 @prev) retired to @addr in the block hook.
 * The common case is inline: the records prebuilt, room for them in the
 * batch, delivery per batch, the clocks in step, no REP iteration left
 * (emit_block's work without the instruction pool; D176). */
static inline __attribute__((always_inline)) void
retire_pending(struct rtit_sim *sim, uint32_t prev, uint64_t addr)
{
	const struct sim_block *p = blk(sim, prev);
	const uint32_t n = p->n;
	if (__builtin_expect(!(n && p->rec_gen == sim->cache.gen &&
			       n <= sim->cfg.batch_cap - sim->nbatch &&
			       sim->cfg.deliver == RTIT_SIM_PER_BATCH &&
			       sim->cfg.clock.tsc_ratio == sim->core_ratio &&
			       !((p->tail & SIM_TAIL_REP) && addr == p->last_ip)), 0)) {
		retire_slow(sim, prev, addr);
		return;
	}
	const struct rtit_sim_rec *pre = &sim->cache.recs[p->first];
	struct rtit_sim_rec *r = &sim->batch[sim->nbatch];
	const uint64_t c0 = sim->cycles, t0 = sim->tsc;
	uint8_t lflags = pre[n - 1].flags;
	if ((p->tail & SIM_TAIL_COND) &&
	    (addr != p->fall ||
	     ((p->tail & SIM_TAIL_COND_FALL) &&
	      cond_taken(sim, sim->cache.insns[p->first + n - 1].cc))))
		lflags |= RTIT_SIM_F_TAKEN;
	copy_recs(r, pre, n, (sim_v2){ 0, c0 }, (sim_v2){ t0, 0 });
	r[n - 1].next_ip = addr;
	r[n - 1].flags = lflags;
	sim->nbatch += n;
	sim->cycles = c0 + pre[n - 1].cycles;
	sim->tsc = t0 + pre[n - 1].tsc;
	sim->retired += n;
	sim->last_shadow = p->tail & SIM_TAIL_SHADOW;
	sim->last_ip = p->last_ip;
}

/* No count or event stop can be due: no injected events, no interrupt
 * waiting for IF, no PEBS assist armed, no user interrupt requested.  The
 * budget is then the only stop by count (next_count_stop). */
static inline bool calm(const struct rtit_sim *sim)
{
	return !sim->ninj && sim->irq_deferred < 0 && sim->pmu_due == UINT64_MAX &&
	       !sim->uintr.rr;
}

/* The block hook's checks before block @addr runs: the budget, an STI
 * shadow, an event due.  true when the run stops or an event is
 * requested (Unicorn stopped). */
static __attribute__((noinline)) bool block_stops(struct rtit_sim *sim, uint64_t addr)
{
	if (sim->retired >= sim->cfg.budget) {
		sim_stop_with(sim, RTIT_SIM_STOP_BUDGET, addr,
			  "instruction budget of %" PRIu64 " exhausted at 0x%" PRIx64,
			  sim->cfg.budget, addr);
		return true;
	}
	if (sim->irq_deferred >= 0 && (sim_reg_get(sim, R_FLAGS) & EFL_IF) &&
	    sim->last_shadow && sim->irq_after <= sim->retired)
		sim->irq_after = sim->retired + 1;	/* SDM 6.8.3: STI shadow */
	if ((sim->ninj && sim_inj_due_count(sim, sim->retired) >= 0) ||
	    sim->retired == sim->pmu_due ||
	    (sim->irq_deferred >= 0 && sim->retired >= sim->irq_after &&
	     (sim_reg_get(sim, R_FLAGS) & EFL_IF)) ||
	    (sim->uintr.rr && sim_uintr_due(sim))) {
		sim_request(sim, SIM_REQ_EVENT, addr);
		return true;
	}
	return false;
}

/* Block (@addr, @size) not among the successors of the previous one
 * (index + 1 @prev, 0 none): found or analysed, remembered as a
 * successor, code hooks added on its special instructions when new (*added
 * set to 1 if any hook is new).  NULL when the run stopped (out of memory,
 * no hook). */
static __attribute__((noinline)) const struct sim_block *
block_lookup(struct rtit_sim *sim, uint64_t addr, uint32_t size, uint32_t prev,
	     int *added)
{
	bool fresh = false;
	const struct sim_block *b = sim_block_get(sim, addr, size, &fresh);
	if (!b) {
		sim_stop_with(sim, RTIT_SIM_STOP_ERROR, addr, "out of memory");
		return NULL;
	}
	if (prev) {
		/* the blocks array may have moved */
		struct sim_block *pb = &sim->cache.blocks[prev - 1];
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
	if (fresh && b->nspecial) {
		const struct isa_insn *in = &sim->cache.insns[b->first];
		for (uint32_t i = 0; i < b->n; i++) {
			if (!(in[i].flags & (ISA_I_SPECIAL | ISA_I_RISKY | ISA_I_PRIV |
					     ISA_I_TXABORT)))
				continue;
			int r = hook_at(sim, in[i].ip);
			if (r < 0) {
				sim_stop_with(sim, RTIT_SIM_STOP_ERROR, addr,
					  "cannot hook 0x%" PRIx64, in[i].ip);
				return NULL;
			}
			*added |= r;
		}
	}
	return b;
}

/* A count stop (next_count_stop: @stopn) falls inside block @b about to
 * run at @addr: a code hook on that instruction.  1 if the hook is new, 0
 * if it was there, < 0 with the run stopped. */
static __attribute__((noinline)) int hook_count_stop(struct rtit_sim *sim,
						    const struct sim_block *b,
						    uint64_t addr, uint64_t stopn)
{
	const struct isa_insn *in = &sim->cache.insns[b->first];
	int r = hook_at(sim, in[stopn - sim->retired].ip);
	if (r < 0)
		sim_stop_with(sim, RTIT_SIM_STOP_ERROR, addr, "cannot hook");
	return r;
}

/* Unicorn's block hook, before each translation block runs: the previous
 * block retires, then the stops due, then the block becomes the pending
 * one.  The common path is short and inline; the rest is out of line
 * (D176). */
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
	const uint32_t prev = sim->pending;
	if (prev) {
		sim->pending = 0;
		retire_pending(sim, prev, addr);
	}
	const bool quiet = calm(sim);
	if ((!quiet || sim->retired >= sim->cfg.budget) && block_stops(sim, addr))
		return;
	const struct sim_block *b = NULL;
	if (prev) {
		const struct sim_block *pb = blk(sim, prev);
		if (pb->succ_addr[0] == addr && pb->succ_size[0] == size && pb->succ[0])
			b = blk(sim, pb->succ[0]);
		else if (pb->succ_addr[1] == addr && pb->succ_size[1] == size && pb->succ[1])
			b = blk(sim, pb->succ[1]);
	}
	int added = 0;
	if (!b || b->addr != addr || b->size != size) {
		b = block_lookup(sim, addr, size, prev, &added);
		if (!b)
			return;
	}
	const uint64_t stopn = quiet ? sim->cfg.budget : next_count_stop(sim);
	if (stopn < sim->retired + b->n) {
		int r = hook_count_stop(sim, b, addr, stopn);
		if (r < 0)
			return;
		added |= r;
	}
	if (added) {
		/* retranslate the block with its code hooks; the stop in a
		 * block hook happens before the block executes */
		uc_ctl_remove_cache(uc, addr, addr + (size ? size : 1));
		sim_request(sim, SIM_REQ_RESTART, addr);
		return;
	}
	sim->pending = (uint32_t)(b - sim->cache.blocks) + 1;
	sim->pending_base = sim->retired;
}

static void on_intr(uc_engine *uc, uint32_t intno, void *opaque)
{
	struct rtit_sim *sim = opaque;
	uint64_t ip = sim_reg_get(sim, R_IP);
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
	sim_request(sim, SIM_REQ_FAULT, ip);
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
				type == UC_MEM_FETCH_PROT ? UINT64_MAX : sim_reg_get(sim, R_IP);
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
			UINT64_MAX : sim_reg_get(sim, R_IP);
	return false;
}

static void on_sync(uc_engine *uc, uc_mem_type type, uint64_t addr, int size,
		    int64_t value, void *opaque)
{
	/* never called (empty range); its presence makes Unicorn keep the
	 * guest PC exact at every memory access */
}

/* Installs the hooks every run needs (rtit_sim_new): the block hook,
 * Unicorn's interrupts, unmapped and protected accesses, and with
 * precise_faults the empty memory hook that keeps RIP exact. */
uc_err sim_hooks_add(struct rtit_sim *sim)
{
	uc_err e = uc_hook_add(sim->uc, &sim->h_block, UC_HOOK_BLOCK,
			       (void *)on_block, sim, 1, 0);
	e = e ? e : uc_hook_add(sim->uc, &sim->h_intr, UC_HOOK_INTR,
				(void *)on_intr, sim, 1, 0);
	e = e ? e : uc_hook_add(sim->uc, &sim->h_unmapped,
				UC_HOOK_MEM_UNMAPPED | UC_HOOK_MEM_PROT,
				(void *)on_unmapped, sim, 1, 0);
	if (!e && sim->cfg.precise_faults)
		e = uc_hook_add(sim->uc, &sim->h_sync,
				UC_HOOK_MEM_READ | UC_HOOK_MEM_WRITE,
				(void *)on_sync, sim, UINT64_MAX - 1,
				UINT64_MAX - 1);
	return e;
}

/* ------------------------------------------------------- special insns */

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
		sim_stop_with(sim, RTIT_SIM_STOP_BUDGET, addr,
			  "instruction budget of %" PRIu64 " exhausted at 0x%" PRIx64,
			  sim->cfg.budget, addr);
		return;
	}
	int e = sim_inj_due_count(sim, count);
	if (e < 0)
		e = sim_inj_due_ip(sim, addr);
	if (e < 0 && sim->irq_deferred >= 0 && count >= sim->irq_after &&
	    count > sim->pending_base && (sim_reg_get(sim, R_FLAGS) & EFL_IF))
		e = sim->irq_deferred;
	if (e >= 0 || count == sim->pmu_due) {
		pending_retire_before(sim, addr);
		if (e >= 0)
			sim->inj_due = e;
		sim_request(sim, SIM_REQ_EVENT, addr);
		return;
	}
	if (sim->cfg.has_end && addr == sim->cfg.end_ip) {
		pending_retire_before(sim, addr);
		sim_stop_with(sim, RTIT_SIM_STOP_END, addr,
			  "reached end address 0x%" PRIx64, addr);
		return;
	}
	const struct isa_insn *si = &sim->cache.insns[b->first + (uint32_t)k];
	uint32_t txs;
	if (sim->rtm.depth && sim_tx_aborts(si, &txs)) {
		pending_retire_before(sim, addr);
		sim_tx_abort(sim, addr, txs);
		if (sim->cfg.deliver == RTIT_SIM_PER_BLOCK)
			sim_flush(sim);
		return;
	}
	if (si->flags & ISA_I_PRIV) {
		/* SDM 2.8 (privileged), 19.5 (IOPL-sensitive); Unicorn runs at
		 * CPL 0 and would execute them */
		if (sim->m.cpl && !(priv_iopl(sim, addr) &&
				    ((sim_reg_get(sim, R_FLAGS) >> 12) & 3) >= (unsigned)sim->m.cpl)) {
			pending_retire_before(sim, addr);
			sim_gp_fault(sim, addr, "privileged instruction at CPL 3");
			return;
		}
		if (!(si->flags & ISA_I_SPECIAL))
			return;	/* Unicorn executes it */
	}
	if (!(si->flags & ISA_I_SPECIAL))
		return;
	pending_retire_before(sim, addr);
	sim_emulate(sim, addr);
	if (sim->cfg.deliver == RTIT_SIM_PER_BLOCK)
		sim_flush(sim);
}

/* ------------------------------------------------------------- run loop */

int rtit_sim_run(struct rtit_sim *sim, struct rtit_sim_status *st)
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
	sim_tmpl_on_state(sim);
	uint64_t ip = sim->entry;
	ip = sim_inject_due(sim, ip);
	while (ip != UINT64_MAX && sim->req != SIM_REQ_STOP) {
		sim->req = SIM_REQ_NONE;
		sim->pending = 0;
		/* "until" must never be reached: a non-canonical address */
		uc_err err = uc_emu_start(sim->uc, ip - sim->m.cs_base, 0x8000000000000000ull, 0, 0);
		uint64_t rip = sim_reg_get(sim, R_IP);
		int req = sim->req;
		if (req == SIM_REQ_STOP)
			break;
		if (req == SIM_REQ_NONE) {
			if (err == UC_ERR_INSN_INVALID && is_special_at(sim, rip)) {
				/* Unicorn rejects some specials (PTWRITE m32)
				 * before any hook: emulate them from here */
				pending_retire_before(sim, rip);
				sim_emulate(sim, rip);
				if (sim->req == SIM_REQ_STOP)
					break;
				if (sim->req == SIM_REQ_EVENT)
					ip = sim_inject_due(sim, sim->resume_ip);
				else
					ip = sim_inject_due(sim, sim_reg_get(sim, R_IP));
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
				sim_stop_with(sim, RTIT_SIM_STOP_ERROR, rip,
					  "emulation left at 0x%" PRIx64, rip);
				break;
			} else {
				sim_stop_with(sim, RTIT_SIM_STOP_ERROR, rip,
					  "emulator error at 0x%" PRIx64 ": %s",
					  rip, uc_strerror(err));
				break;
			}
			sim->fault_ip = rip;
		}
		switch (req) {
		case SIM_REQ_RESTART:
			pending_retire_before(sim, sim->resume_ip);
			ip = sim_inject_due(sim, sim->resume_ip);
			break;
		case SIM_REQ_EVENT:
			pending_retire_before(sim, sim->resume_ip);
			ip = sim_inject_due(sim, sim->resume_ip);
			break;
		case SIM_REQ_TX_ABORT:
			/* the RTM write set overflowed at a store (rtm.c) */
			pending_retire_before(sim, sim->rtm.overflow_ip);
			ip = sim_inject_due(sim, sim_tx_abort(sim, sim->rtm.overflow_ip,
						      RTIT_RTM_ABORT_CAPACITY));
			break;
		case SIM_REQ_FAULT: {
			uint64_t fip = sim->fault_ip == UINT64_MAX ? rip : sim->fault_ip;
			sim_forget_exception(sim);
			pending_retire_before(sim, fip);
			/* #DB and #OF from Unicorn are traps (after the
			 * instruction); the rest are faults */
			bool trap = sim->fault_vec == 1 || sim->fault_vec == 4;
			if (sim_exception_at(sim, sim->fault_vec, fip, sim->fault_err,
					 sim->fault_addr_valid ? sim->fault_addr : 0,
					 sim->fault_why, !trap) < 0)
				ip = UINT64_MAX;
			else
				ip = sim_inject_due(sim, sim_reg_get(sim, R_IP));
			break;
		}
		default:
			ip = UINT64_MAX;
			break;
		}
	}
	sim_flush(sim);
	if (sim->lx && sim->st.stop == RTIT_SIM_STOP_BUDGET)
		sim_linux_budget_note(sim);
	sim->st.insns = sim->retired;
	sim->st.events = sim->events;
	*st = sim->st;
	switch (st->stop) {
	case RTIT_SIM_STOP_HALTED:
	case RTIT_SIM_STOP_END:
	case RTIT_SIM_STOP_EXIT:
		return 0;
	case RTIT_SIM_STOP_ERROR:
		return -RTIT_ERR_INTERNAL;
	default:
		return -RTIT_ERR_INVALID;
	}
}
