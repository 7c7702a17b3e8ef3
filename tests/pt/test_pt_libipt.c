/*
 * test_pt_libipt.c - the model's streams read by libipt's query decoder,
 * driven by the same records: every conditional branch's result, every
 * indirect/far target, compressed RETs, the enable, asynchronous branches
 * (interrupts), paging (MOV CR3 / far transfers changing CR3) and
 * execution-mode events must be what the records say.  No binary image
 * is needed: the records tell which query comes next (the way ptxed
 * asks, with the instruction class known).
 *
 * Built only when libipt is found.
 */
#include <intel-pt.h>

#include "pt_harness.h"

static struct px h;

static uint64_t rng = 0x243f6a8885a308d3ull;

static unsigned rnd(unsigned n)
{
	rng = rng * 6364136223846793005ull + 1442695040888963407ull;
	return (unsigned)((rng >> 33) % n);
}

/* PacketEn stays 1 after the enable: CPL 0, no filter ranges. */
static size_t workload(struct rtit_sim_rec *recs, size_t count, bool deep_calls)
{
	uint64_t ip = 0x401000, cyc = 100, stack[256];
	unsigned sp = 0;
	uint8_t mode = 64;
	uint64_t cr3 = 0x5000;
	size_t n = 0;

	while (n < count) {
		struct rtit_sim_rec *r = &recs[n++];
		unsigned k = rnd(100);
		memset(r, 0, sizeof(*r));
		cyc += 1 + rnd(5);
		r->kind = RTIT_SIM_INSN;
		r->ip = ip;
		r->len = (uint8_t)(2 + rnd(4));
		r->cycles = cyc;
		r->tsc = cyc;
		r->next_ip = ip + r->len;
		if (n == 1) {
			r->cls = RTIT_IC_OTHER;
		} else if (k < 35) {
			r->cls = RTIT_IC_COND;
			if (rnd(2)) {
				r->flags |= RTIT_SIM_F_TAKEN;
				r->next_ip = 0x401000 + 16 * rnd(0x1000);
			}
		} else if (k < 50 && sp < (deep_calls ? 256u : 40u)) {
			r->cls = rnd(2) ? RTIT_IC_DIRECT_CALL : RTIT_IC_INDIRECT_CALL;
			r->flags |= RTIT_SIM_F_TAKEN;
			stack[sp++] = (ip + r->len) & (mode == 64 ? ~0ull : 0xffffffffull);
			r->next_ip = 0x401000 + 16 * rnd(0x1000);
		} else if (k < 65 && sp) {
			r->cls = RTIT_IC_RET;
			r->flags |= RTIT_SIM_F_TAKEN;
			r->next_ip = rnd(10) ? stack[--sp] : 0x402000 + 16 * rnd(0x100);
		} else if (k < 72) {
			r->cls = RTIT_IC_INDIRECT_JMP;
			r->flags |= RTIT_SIM_F_TAKEN;
			r->next_ip = 0x400000 + 16 * rnd(0x10000);
		} else if (k < 76) {
			r->kind = RTIT_SIM_EVENT;
			r->cls = rnd(2) ? RTIT_EV_EXT_INTERRUPT : RTIT_EV_EXCEPTION;
			r->len = 0;
			r->vector = 0x20;
			r->next_ip = 0xffffffff81000000ull + 16 * rnd(0x100);
			if (rnd(3) == 0)
				cr3 = 0x5000 + 0x1000 * rnd(8);
		} else if (k < 79) {
			r->cls = rnd(2) ? RTIT_IC_FAR_JMP : RTIT_IC_IRET;
			r->flags |= RTIT_SIM_F_TAKEN;
			r->next_ip = 0x401000 + 16 * rnd(0x1000);
			if (rnd(2))
				mode = rnd(2) ? 64 : 32;
		} else if (k < 81) {
			r->cls = RTIT_IC_MOV_CR3;
			cr3 = 0x5000 + 0x1000 * rnd(8);
		} else {
			r->cls = RTIT_IC_OTHER;
		}
		r->cr3 = cr3;
		r->mode = mode;
		ip = r->next_ip;
	}
	return n;
}

static enum pt_exec_mode ipt_mode(uint8_t mode)
{
	return mode == 64 ? ptem_64bit : mode == 32 ? ptem_32bit : ptem_16bit;
}

/* Events read but not yet bound to a record: synchronous paging and
 * exec-mode events queue up (several may precede one query). */
struct async_ev {
	uint64_t from, to, cr3;
	bool paging;
};

struct seen {
	bool enabled, ovf;
	uint64_t en_ip, ovf_ip;
	struct async_ev async[32];
	unsigned nasync;
	uint64_t cr3[32];
	enum pt_exec_mode mode[32];
	unsigned ncr3, nmode;
};

static uint64_t pop_cr3(struct seen *s, size_t i)
{
	uint64_t v;
	cr_assert(s->ncr3, "record %zu: no paging event", i);
	v = s->cr3[0];
	memmove(s->cr3, s->cr3 + 1, --s->ncr3 * sizeof(s->cr3[0]));
	return v;
}

static enum pt_exec_mode pop_mode(struct seen *s, size_t i)
{
	enum pt_exec_mode v;
	cr_assert(s->nmode, "record %zu: no exec-mode event", i);
	v = s->mode[0];
	memmove(s->mode, s->mode + 1, --s->nmode * sizeof(s->mode[0]));
	return v;
}

/* Reads every pending event; status-update events (PSB+) are skipped. */
static int drain(struct pt_query_decoder *q, int st, struct seen *s, size_t i)
{
	while (st >= 0 && (st & pts_event_pending)) {
		struct pt_event ev;
		st = pt_qry_event(q, &ev, sizeof(ev));
		cr_assert(st >= 0, "record %zu: pt_qry_event: %s", i, pt_errstr(pt_errcode(st)));
		if (ev.status_update)
			continue;
		switch (ev.type) {
		case ptev_enabled:
			s->enabled = true;
			s->en_ip = ev.variant.enabled.ip;
			break;
		case ptev_async_branch:
			cr_assert_lt(s->nasync, 32);
			s->async[s->nasync].from = ev.variant.async_branch.from;
			s->async[s->nasync].to = ev.variant.async_branch.to;
			s->async[s->nasync++].paging = false;
			break;
		case ptev_paging:
			cr_assert_lt(s->ncr3, 32);
			s->cr3[s->ncr3++] = ev.variant.paging.cr3;
			break;
		case ptev_async_paging:
			cr_assert(s->nasync, "record %zu: async paging without a branch", i);
			s->async[s->nasync - 1].paging = true;
			s->async[s->nasync - 1].cr3 = ev.variant.async_paging.cr3;
			break;
		case ptev_exec_mode:
			cr_assert_lt(s->nmode, 32);
			s->mode[s->nmode++] = ev.variant.exec_mode.mode;
			break;
		case ptev_overflow:
			/* Everything since the last packet that made it is lost;
			 * the decoder resumes at the FUP's IP (33.3.8). */
			s->ovf = true;
			s->ovf_ip = ev.variant.overflow.ip;
			s->nasync = s->ncr3 = s->nmode = 0;
			break;
		case ptev_disabled: case ptev_async_disabled:
			cr_assert_fail("record %zu: unexpected event %d", i, ev.type);
			break;
		default:
			break;
		}
	}
	return st;
}

static void check(const uint64_t ctl, size_t count, bool deep_calls, uint64_t buffer,
		  uint64_t time_slack)
{
	static struct rtit_sim_rec recs[20000];
	size_t n = workload(recs, count, deep_calls);
	struct pt_config cfg;
	struct pt_query_decoder *q;
	struct seen s;
	uint64_t ip;
	uint8_t mode = 64;
	bool after_ovf = false;
	int st;

	px_init(&h);
	h.p.buffer_bytes = buffer;
	h.p.drain_num = 1;
	h.p.drain_den = 2;
	h.p.art_num = 2;	/* TSC = 2 * ART (CPUID.15H: EBX/EAX = 2/1) */
	h.p.art_den = 1;
	px_start(&h);
	px_single_range(&h);
	px_msr(&h, RTIT_PT_MSR_CTL, ctl);
	for (size_t i = 0; i < n; i++)
		px_feed(&h, &recs[i]);
	cr_assert_eq(rtit_pt_model_finish(&h.m), 0);
	if (buffer)
		cr_assert_gt(h.m.stats.overflows, 10);

	pt_config_init(&cfg);
	cfg.begin = h.out;
	cfg.end = h.out + h.n;
	cfg.cpuid_0x15_eax = 1;
	cfg.cpuid_0x15_ebx = 2;
	cfg.mtc_freq = (uint8_t)((ctl & RTIT_PT_CTL_MTC_FREQ_MASK) >> RTIT_PT_CTL_MTC_FREQ_SHIFT);
	q = pt_qry_alloc_decoder(&cfg);
	cr_assert(q);
	st = pt_qry_sync_forward(q, &ip);
	cr_assert(st >= 0, "sync: %s", pt_errstr(pt_errcode(st)));
	memset(&s, 0, sizeof(s));
	st = drain(q, st, &s, 0);
	cr_assert(s.enabled, "no ptev_enabled at the start");
	cr_assert_eq(s.en_ip, recs[0].ip);
	s.nmode = 0;	/* the MODE.Exec of the enable */
	/* Events are pending from the query before the instruction they
	 * bind to (ptxed holds them until the IP matches): accumulate, and
	 * consume them at the record they belong to. */
	memset(&s, 0, sizeof(s));
	for (size_t i = 1; i < n; i++) {
		const struct rtit_sim_rec *r = &recs[i];
		bool is_ev = r->kind == RTIT_SIM_EVENT;
		bool changed_cr3 = r->cr3 != recs[i - 1].cr3;
		bool changed_mode = r->mode != mode;
		int taken;

		st = drain(q, st, &s, i);
		if (s.ovf) {
			/* Skip the records whose packets were lost. */
			while (i < n && recs[i].ip != s.ovf_ip)
				i++;
			cr_assert_lt(i, n, "overflow IP 0x%llx not found", (unsigned long long)s.ovf_ip);
			r = &recs[i];
			is_ev = r->kind == RTIT_SIM_EVENT;
			changed_cr3 = r->cr3 != recs[i - 1].cr3;
			mode = recs[i - 1].mode;
			changed_mode = r->mode != mode;
			s.ovf = false;
			after_ovf = true;
			st = drain(q, st, &s, i);
		}
		if (is_ev) {
			struct async_ev a;
			cr_assert(s.nasync, "record %zu: no async branch", i);
			a = s.async[0];
			memmove(s.async, s.async + 1, --s.nasync * sizeof(a));
			cr_assert_eq(a.from, r->ip, "record %zu: from 0x%llx want 0x%llx (ovf %d)", i,
				     (unsigned long long)a.from, (unsigned long long)r->ip, after_ovf);
			cr_assert_eq(a.to, r->next_ip, "record %zu", i);
			cr_assert_eq(a.paging, changed_cr3, "record %zu: paging %d cr3 0x%llx prev 0x%llx ovf %d", i, a.paging, (unsigned long long)r->cr3, (unsigned long long)recs[i - 1].cr3, after_ovf);
			if (a.paging)
				cr_assert_eq(a.cr3, r->cr3, "record %zu", i);
		}
		switch (is_ev ? 255 : r->cls) {
		case RTIT_IC_COND:
			st = pt_qry_cond_branch(q, &taken);
			cr_assert(st >= 0, "record %zu: cond: %s", i, pt_errstr(pt_errcode(st)));
			cr_assert_eq(taken != 0, (r->flags & RTIT_SIM_F_TAKEN) != 0, "record %zu", i);
			break;
		case RTIT_IC_RET:
			st = pt_qry_cond_branch(q, &taken);
			if (st >= 0) {
				/* Compressed: a taken bit (33.4.2.2). */
				cr_assert(taken, "record %zu: compressed RET not taken", i);
				cr_assert(!(ctl & RTIT_PT_CTL_DIS_RETC), "record %zu: DisRETC", i);
				break;
			}
			cr_assert_eq(pt_errcode(st), pte_bad_query, "record %zu", i);
			__attribute__((fallthrough));
		case RTIT_IC_INDIRECT_JMP: case RTIT_IC_INDIRECT_CALL:
		case RTIT_IC_FAR_JMP: case RTIT_IC_IRET:
			st = pt_qry_indirect_branch(q, &ip);
			cr_assert(st >= 0, "record %zu: indirect: %s", i, pt_errstr(pt_errcode(st)));
			cr_assert(!(st & pts_ip_suppressed), "record %zu", i);
			cr_assert_eq(ip, r->next_ip, "record %zu: target 0x%llx, want 0x%llx", i,
				     (unsigned long long)ip, (unsigned long long)r->next_ip);
			if (time_slack) {
				/* The TIP's time per libipt (TSC, TMA, MTC;
				 * 33.8.3): the last MTC edge at or before the
				 * record's TSC, at most an MTC period earlier. */
				uint64_t t;
				uint32_t lost_mtc = 0, lost_cyc = 0;
				cr_assert_eq(pt_qry_time(q, &t, &lost_mtc, &lost_cyc), 0, "record %zu", i);
				cr_assert_eq(lost_mtc, 0, "record %zu: libipt dropped an MTC", i);
				cr_assert_leq(t, r->tsc, "record %zu: time %llu > tsc %llu", i,
					      (unsigned long long)t, (unsigned long long)r->tsc);
				cr_assert_leq(r->tsc - t, time_slack, "record %zu: time %llu, tsc %llu", i,
					      (unsigned long long)t, (unsigned long long)r->tsc);
			}
			break;
		default:
			break;
		}
		/* PIP and MODE.Exec precede the TIP they apply at (Table
		 * 33-55 cases 9-12, 14). */
		if (is_ev) {
			/* checked with the async branch */
		} else if ((!is_ev && r->cls == RTIT_IC_MOV_CR3) ||
			   ((r->cls == RTIT_IC_FAR_JMP || r->cls == RTIT_IC_IRET) && changed_cr3)) {
			cr_assert_eq(pop_cr3(&s, i), r->cr3, "record %zu", i);
		}
		if (changed_mode)
			cr_assert_eq(pop_mode(&s, i), ipt_mode(r->mode), "record %zu", i);
		if (after_ovf && (is_ev || r->cls == RTIT_IC_FAR_JMP || r->cls == RTIT_IC_IRET)) {
			/* After an OVF the model repeats MODE.Exec at the next
			 * far transfer: it must name the current mode. */
			while (s.nmode)
				cr_assert_eq(pop_mode(&s, i), ipt_mode(r->mode), "record %zu", i);
			after_ovf = false;
		}
		mode = r->mode;
	}
	pt_qry_free_decoder(q);
}

Test(libipt, query_decoder_follows_records)
{
	check(PT_CTL_ON, 15000, false, 0, 0);
}

Test(libipt, query_decoder_disretc_and_deep_stacks)
{
	check(PT_CTL_ON | RTIT_PT_CTL_DIS_RETC, 8000, false, 0, 0);
	check(PT_CTL_ON, 8000, true, 0, 0);
}

Test(libipt, query_decoder_with_timing)
{
	check(PT_CTL_ON | RTIT_PT_CTL_TSC_EN | RTIT_PT_CTL_MTC_EN | RTIT_PT_CTL_CYC_EN |
	      (2ull << RTIT_PT_CTL_MTC_FREQ_SHIFT), 8000, false, 0, 0);
}

Test(libipt, query_decoder_overflows)
{
	/* A 64-byte buffer draining half a byte per cycle overflows often:
	 * OVF, [MODE.Exec], FUP(resume IP), and the flow goes on there. */
	check(PT_CTL_ON, 8000, false, 64, 0);
}

Test(libipt, query_decoder_time_from_tsc_tma_mtc)
{
	/* MTCFreq 3: an MTC every 8 ART = 16 TSC ticks; records are 1-5
	 * ticks apart. */
	check(PT_CTL_ON | RTIT_PT_CTL_TSC_EN | RTIT_PT_CTL_MTC_EN |
	      (3ull << RTIT_PT_CTL_MTC_FREQ_SHIFT), 8000, false, 0, 16);
}

/* ---- Filtering: PacketEn toggles (Table 33-56 cases 4, 5, 7) ----
 * ADDR0 = [0x401000, 0x40ffff] is the FilterEn range; branches sometimes
 * leave it, interrupts go to a handler outside it, IRETs come back. */
#define IN_RANGE(a) ((a) >= 0x401000 && (a) <= 0x40ffff)

static size_t workload_filtered(struct rtit_sim_rec *recs, size_t count, bool user_only)
{
	uint64_t ip = 0x401000, cyc = 100, ret_to = 0x401000;
	uint8_t cpl = user_only ? 3 : 0;
	size_t n = 0;

	while (n < count) {
		struct rtit_sim_rec *r = &recs[n++];
		unsigned k = rnd(100);
		memset(r, 0, sizeof(*r));
		cyc += 1 + rnd(5);
		r->kind = RTIT_SIM_INSN;
		r->ip = ip;
		r->len = (uint8_t)(2 + rnd(4));
		r->cycles = cyc;
		r->tsc = cyc;
		r->next_ip = ip + r->len;
		r->mode = 64;
		r->cr3 = 0x5000;
		if (n == 1) {
			r->cls = RTIT_IC_OTHER;
		} else if (k < 40) {
			r->cls = RTIT_IC_COND;
			if (rnd(2)) {
				r->flags |= RTIT_SIM_F_TAKEN;
				r->next_ip = (rnd(6) ? 0x401000 : 0x500000) + 16 * rnd(0xf00);
			}
		} else if (k < 55) {
			r->cls = rnd(2) ? RTIT_IC_DIRECT_JMP : RTIT_IC_INDIRECT_JMP;
			r->flags |= RTIT_SIM_F_TAKEN;
			r->next_ip = (rnd(5) ? 0x401000 : 0x500000) + 16 * rnd(0xf00);
		} else if (k < 60 && (!user_only || cpl == 3)) {
			r->kind = RTIT_SIM_EVENT;
			r->cls = RTIT_EV_EXT_INTERRUPT;
			r->len = 0;
			r->vector = 0x20;
			ret_to = ip;
			r->next_ip = (user_only ? 0x401000 : 0xffffffff81000000ull) + 16 * rnd(0x100);
			cpl = 0;
		} else if (k < 63 && user_only && cpl == 3) {
			r->cls = RTIT_IC_SYSCALL;
			r->flags |= RTIT_SIM_F_TAKEN;
			ret_to = ip + r->len;
			r->next_ip = 0x402000 + 16 * rnd(0x100);	/* inside the range */
			cpl = 0;
		} else if (k < 68) {
			r->cls = RTIT_IC_IRET;
			r->flags |= RTIT_SIM_F_TAKEN;
			r->next_ip = IN_RANGE(ret_to) ? ret_to : 0x401000 + 16 * rnd(0xf00);
			cpl = user_only ? 3 : 0;
		} else {
			r->cls = RTIT_IC_OTHER;
		}
		r->cpl = cpl;
		ip = r->next_ip;
	}
	return n;
}

/* The next event that is not a status update (PSB+) or a timing/mode
 * event; held until the record it belongs to takes it. */
static bool next_event(struct pt_query_decoder *q, int *st, struct pt_event *held, bool *have,
		       size_t i)
{
	while (!*have && (*st & pts_event_pending)) {
		*st = pt_qry_event(q, held, sizeof(*held));
		cr_assert(*st >= 0, "record %zu: %s", i, pt_errstr(pt_errcode(*st)));
		if (held->status_update || held->type == ptev_exec_mode || held->type == ptev_cbr)
			continue;
		*have = true;
	}
	return *have;
}

static void check_enables(bool user_only)
{
	static struct rtit_sim_rec recs[20000];
	size_t n = workload_filtered(recs, 12000, user_only), en = 0, dis = 0;
	struct pt_config cfg;
	struct pt_query_decoder *q;
	struct pt_event ev;
	bool have = false;
	uint64_t ip;
	bool f = true, ctx = true;
	uint64_t who = user_only ? RTIT_PT_CTL_USER : RTIT_PT_CTL_OS | RTIT_PT_CTL_USER;
	int st;

	px_init(&h);
	h.cpl = user_only ? 3 : 0;
	px_start(&h);
	px_single_range(&h);
	px_msr(&h, RTIT_PT_MSR_ADDR0_A, 0x401000);
	px_msr(&h, RTIT_PT_MSR_ADDR0_B, 0x40ffff);
	px_msr(&h, RTIT_PT_MSR_CTL, RTIT_PT_CTL_TRACE_EN | RTIT_PT_CTL_BRANCH_EN | who |
	       (1ull << RTIT_PT_CTL_ADDR_CFG_SHIFT(0)));
	for (size_t i = 0; i < n; i++)
		px_feed(&h, &recs[i]);
	cr_assert_eq(rtit_pt_model_finish(&h.m), 0);

	pt_config_init(&cfg);
	cfg.begin = h.out;
	cfg.end = h.out + h.n;
	q = pt_qry_alloc_decoder(&cfg);
	cr_assert(q);
	st = pt_qry_sync_forward(q, &ip);
	cr_assert(st >= 0);
	cr_assert(next_event(q, &st, &ev, &have, 0));
	cr_assert_eq(ev.type, ptev_enabled);
	cr_assert_eq(ev.variant.enabled.ip, recs[0].ip);
	have = false;
	for (size_t i = 1; i < n; i++) {
		const struct rtit_sim_rec *r = &recs[i];
		bool taken = r->kind == RTIT_SIM_EVENT || (r->flags & RTIT_SIM_F_TAKEN);
		bool ctx1 = !user_only || r->cpl == 3;
		/* D21: FilterEn on taken transfers, only while
		 * ContextEn; re-evaluated when ContextEn rises. */
		bool f1 = ctx1 && (taken || !ctx) ? IN_RANGE(r->next_ip) : f;
		bool pe0 = ctx && f, pe1 = ctx1 && f1;
		int t;

		if (pe0 && pe1) {
			bool query = r->kind == RTIT_SIM_INSN &&
				     (r->cls == RTIT_IC_COND || r->cls == RTIT_IC_INDIRECT_JMP ||
				      r->cls == RTIT_IC_IRET);
			if (r->kind == RTIT_SIM_EVENT) {
				cr_assert(next_event(q, &st, &ev, &have, i), "record %zu: no event", i);
				cr_assert_eq(ev.type, ptev_async_branch, "record %zu", i);
				cr_assert_eq(ev.variant.async_branch.from, r->ip, "record %zu", i);
				cr_assert_eq(ev.variant.async_branch.to, r->next_ip, "record %zu", i);
				have = false;
			} else if (query) {
				cr_assert(!next_event(q, &st, &ev, &have, i),
					  "record %zu: event %d before a query", i, ev.type);
			}
			if (query && r->cls == RTIT_IC_COND) {
				st = pt_qry_cond_branch(q, &t);
				cr_assert(st >= 0, "record %zu: %s", i, pt_errstr(pt_errcode(st)));
				cr_assert_eq(t != 0, taken, "record %zu", i);
			} else if (query) {
				st = pt_qry_indirect_branch(q, &ip);
				cr_assert(st >= 0, "record %zu: %s", i, pt_errstr(pt_errcode(st)));
				cr_assert_eq(ip, r->next_ip, "record %zu", i);
			}
		} else if (pe0 && !pe1) {
			dis++;
			cr_assert(next_event(q, &st, &ev, &have, i), "record %zu: no event", i);
			if (r->kind == RTIT_SIM_EVENT) {
				/* Interrupt out of the range: FUP, TIP.PGD(target). */
				cr_assert_eq(ev.type, ptev_async_disabled, "record %zu", i);
				cr_assert_eq(ev.variant.async_disabled.at, r->ip, "record %zu", i);
				/* Table 33-56 case 7: ContextEn cleared, no IP. */
				cr_assert_eq(ev.ip_suppressed != 0, !ctx1, "record %zu", i);
				if (ctx1)
					cr_assert_eq(ev.variant.async_disabled.ip, r->next_ip, "record %zu", i);
			} else {
				cr_assert_eq(ev.type, ptev_disabled, "record %zu", i);
				/* 33.4.2.5, D21: a conditional branch's TIP.PGD has no IP. */
				cr_assert_eq(ev.ip_suppressed != 0, r->cls == RTIT_IC_COND || !ctx1, "record %zu", i);
				if (!ev.ip_suppressed)
					cr_assert_eq(ev.variant.disabled.ip, r->next_ip, "record %zu", i);
			}
			have = false;
		} else if (!pe0 && pe1) {
			en++;
			cr_assert(next_event(q, &st, &ev, &have, i), "record %zu: no event", i);
			cr_assert_eq(ev.type, ptev_enabled, "record %zu", i);
			cr_assert_eq(ev.variant.enabled.ip, r->next_ip, "record %zu", i);
			have = false;
		}
		f = f1;
		ctx = ctx1;
	}
	cr_expect_gt(en, 50);
	cr_expect_gt(dis, 50);
	pt_qry_free_decoder(q);
}

Test(libipt, query_decoder_filter_enable_disable)
{
	check_enables(false);
}

Test(libipt, query_decoder_context_and_filter)
{
	/* User-only tracing: interrupts and SYSCALL clear ContextEn (Table
	 * 33-56 cases 6/7: TIP.PGD(), FUP+TIP.PGD()), IRET sets it again. */
	check_enables(true);
}
