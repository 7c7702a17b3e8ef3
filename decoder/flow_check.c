/*
 * flow_check.c - a decoded flow against the simulator's ground truth
 * (include/rtit/flow.h), and rtit_flow_verify for `rtitsim run --verify`.
 *
 * The trace shows only part of the flow (tracing enabled, no overflow), so
 * the comparison is by segments: a segment is the run of decoded records
 * between two notes; it must appear in the truth as consecutive records
 * (ignoring truth events no trace shows), after the previous segment.
 * Where it starts in the truth is not known when it starts inside a loop
 * (after an overflow, say): every truth record that matches its first
 * record is a candidate and candidates fall away as records disagree; the
 * earliest survivor wins.  At most max_cand candidates are followed; the
 * candidates come from an index of the truth sorted by IP.
 */
#define _GNU_SOURCE	/* qsort_r */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtit/flow.h"

enum { max_cand = 4096 };

struct cand {
	size_t start, next;	/* truth indexes: first matched, next to match */
	/* timing: truth cycles - decoded cycles at the segment's first
	 * record with exact cycles; every later one must agree */
	int64_t cyc_off;
	bool cyc_set;
};

/* Whether decoded record d's exact cycle count (if any) agrees with the
 * truth t, the candidate's origin being set by the first. */
static bool cyc_match(struct cand *cd, const struct rtit_sim_rec *d, const struct rtit_sim_rec *t)
{
	if (d->pad0 & RTIT_FLOW_A_CYC_ORIGIN)	/* a new origin (SKL168, D127) */
		cd->cyc_set = false;
	if (!(d->pad0 & RTIT_FLOW_A_CYC_EXACT))
		return true;
	int64_t off = (int64_t)(t->cycles - d->cycles);
	if (!cd->cyc_set) {
		cd->cyc_off = off;
		cd->cyc_set = true;
		return true;
	}
	return off == cd->cyc_off;
}

struct rtit_flow_cmp {
	const struct rtit_sim_rec *t;
	size_t n;
	size_t *idx;		/* visible truth records sorted by (ip, index) */
	size_t nidx;
	size_t pos;		/* the truth before this is used up */
	bool in_seg;
	struct cand cand[max_cand];
	int ncand;
	uint64_t dec_index;
	bool failed;
	struct rtit_flow_cmp_result res;
	const uint8_t *traced;	/* rtit_flow_cmp_traced, or NULL */
	bool lossy;		/* a note since the last segment may skip
				 * traced records (error, overflow, ...) */
	uint64_t off_ip;	/* the IP of a disable since then, or ~0 */
};

/* Truth records a trace can show: instructions, exceptions, interrupts,
 * TSX aborts, AEXs. */
static inline bool visible(const struct rtit_sim_rec *r)
{
	return r->kind == RTIT_SIM_INSN ||
	       (r->kind == RTIT_SIM_EVENT &&
		(r->cls == RTIT_EV_EXCEPTION || r->cls == RTIT_EV_EXT_INTERRUPT ||
		 r->cls == RTIT_EV_NMI || r->cls == RTIT_EV_TSX_ABORT || r->cls == RTIT_EV_PEBS ||
		 r->cls == RTIT_EV_INIT || r->cls == RTIT_EV_SIPI || r->cls == RTIT_EV_UINTR ||
		 r->cls == RTIT_EV_AEX));
}

static inline size_t next_visible(const struct rtit_flow_cmp *c, size_t i)
{
	while (i < c->n && !visible(&c->t[i]))
		i++;
	return i;
}

/* Whether decoded record d matches truth record t; why names the first
 * difference. */
static bool rec_match(const struct rtit_sim_rec *d, const struct rtit_sim_rec *t,
		      char *why, size_t wn)
{
	const char *w = NULL;
	if (d->kind != t->kind)
		w = d->kind == RTIT_SIM_INSN ? "an instruction where the truth has an event" :
					       "an event where the truth has an instruction";
	else if (d->ip != t->ip)
		w = "IP";
	else if (d->kind == RTIT_SIM_INSN) {
		if (d->len != t->len)
			w = "length";
		else if (d->cls != t->cls)
			w = "class";
		else if (((d->flags ^ t->flags) & RTIT_SIM_F_TAKEN) &&
			 !(d->cls == RTIT_IC_COND && (d->pad0 & RTIT_FLOW_A_NEXT_UNKNOWN)))
			/* a conditional branch that left tracing with no TNT
			 * bit (PT TIP.PGD(), SDM 33.4.2.5, D21): its way is not known */
			w = "taken";
		else if ((d->flags ^ t->flags) & RTIT_SIM_F_ZERO_LEN_CALL)
			w = "zero-length call";
		else if ((d->flags ^ t->flags) & RTIT_SIM_F_TX)
			w = "InTX change (TX flag of XBEGIN/XEND)";
		else if (!(d->pad0 & RTIT_FLOW_A_NEXT_UNKNOWN) && d->next_ip != t->next_ip)
			w = "next IP";
		else if ((d->pad0 & RTIT_FLOW_A_IF_KNOWN) && ((d->flags ^ t->flags) & RTIT_SIM_F_IF))
			w = "RFLAGS.IF (MODE.Exec, 33.4.2.8)";
		else if (d->tsc > t->tsc)
			w = "TSC (the decoded one is later than the truth's)";
	} else {
		if (!(d->pad0 & RTIT_FLOW_A_NEXT_UNKNOWN) && d->next_ip != t->next_ip)
			w = "next IP (handler)";
		else if (d->cls && d->cls != t->cls &&
			 /* an AEX is an interrupt, NMI or exception delivered
			  * from the AEP: a walk that does not know it was in an
			  * enclave names it so (D52) */
			 !(t->cls == RTIT_EV_AEX && (d->cls == RTIT_EV_EXCEPTION ||
						     d->cls == RTIT_EV_EXT_INTERRUPT ||
						     d->cls == RTIT_EV_NMI)))
			w = "event kind";
		else if (t->cls == RTIT_EV_PEBS && d->value != t->value)
			w = "PEBS eventing IP (Basic block, Table 33-47)";
		else if (t->cls == RTIT_EV_PEBS && d->vector != t->vector)
			w = "PEBS groups (the BBP types)";
		else if (t->cls == RTIT_EV_PEBS && d->msr != t->msr)
			w = "PEBS record items (their digest)";
		else if ((d->pad0 & RTIT_FLOW_A_IF_KNOWN) && ((d->flags ^ t->flags) & RTIT_SIM_F_IF))
			w = "RFLAGS.IF (MODE.Exec, 33.4.2.8)";
		else if (d->tsc > t->tsc)
			w = "TSC (the decoded one is later than the truth's)";
	}
	if (w && why)
		snprintf(why, wn, "%s differs", w);
	return !w;
}

static int by_ip(const void *a, const void *b, void *base)
{
	const struct rtit_sim_rec *t = base;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	uint64_t ix = t[x].ip, iy = t[y].ip;
	if (ix != iy)
		return ix < iy ? -1 : 1;
	return x < y ? -1 : x > y;
}

int rtit_flow_cmp_new(struct rtit_flow_cmp **cp, const struct rtit_sim_rec *truth, size_t n)
{
	struct rtit_flow_cmp *c;
	if (!cp || (!truth && n))
		return -RTIT_ERR_INVALID;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -RTIT_ERR_NOMEM;
	c->t = truth;
	c->n = n;
	c->lossy = true;	/* the first segment: where tracing began is the model's */
	c->off_ip = ~0ull;
	c->idx = malloc((n ? n : 1) * sizeof(*c->idx));
	if (!c->idx) {
		free(c);
		return -RTIT_ERR_NOMEM;
	}
	for (size_t i = 0; i < n; i++)
		if (visible(&truth[i]))
			c->idx[c->nidx++] = i;
	qsort_r(c->idx, c->nidx, sizeof(*c->idx), by_ip, (void *)truth);
	*cp = c;
	return 0;
}

void rtit_flow_cmp_free(struct rtit_flow_cmp *c)
{
	if (c)
		free(c->idx);
	free(c);
}

/* The first index entry with (ip, index) >= (ip, from). */
static size_t lower_bound(const struct rtit_flow_cmp *c, uint64_t ip, size_t from)
{
	size_t lo = 0, hi = c->nidx;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2, k = c->idx[mid];
		if (c->t[k].ip < ip || (c->t[k].ip == ip && k < from))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void mismatch(struct rtit_flow_cmp *c, const struct rtit_sim_rec *d, size_t ti,
		     uint64_t off, const char *what)
{
	struct rtit_flow_mismatch *m = &c->res.mm;
	c->failed = true;
	m->found = true;
	m->decoded_index = c->dec_index;
	m->decoded = *d;
	m->offset = off;
	m->truth_index = ti;
	m->truth_ended = ti >= c->n;
	if (!m->truth_ended)
		m->truth = c->t[ti];
	/* what may be longer than m->what: cut, always terminated */
	size_t n = strlen(what);
	if (n > sizeof(m->what) - 1)
		n = sizeof(m->what) - 1;
	memcpy(m->what, what, n);
	m->what[n] = '\0';
}

/* A decoded VM exit with its exit information (RTIT_FLOW_A_VMX_INFO): the
 * truth's VM exit between the last record matched and the next visible
 * one, at the same IP, must have the same reason, qualification and
 * vector.  Not checked at the start of a segment. */
static bool vmexit_agrees(struct rtit_flow_cmp *c, const struct rtit_sim_rec *d, uint64_t off)
{
	if (!c->in_seg || !c->ncand)
		return true;
	for (size_t i = c->cand[0].next; i-- > 0 && !visible(&c->t[i]);) {
		const struct rtit_sim_rec *t = &c->t[i];
		if (t->cls != RTIT_EV_VMEXIT || t->ip != d->ip)
			continue;
		if (t->msr == d->msr && t->value == d->value &&
		    (!rtit_vmx_exit_has_vector(t->msr) || t->vector == d->vector))
			return true;
		mismatch(c, d, i, off, t->msr != d->msr ? "VM exit reason (EVD.VMXR) differs" :
				       t->value != d->value ? "VM exit qualification (EVD.VMXQ) differs" :
				       "VM exit vector (CFE.VMEXIT_INTR) differs");
		return false;
	}
	return true;
}

bool rtit_flow_cmp_feed(struct rtit_flow_cmp *c, const struct rtit_sim_rec *recs,
			const uint64_t *offs, size_t n)
{
	char why[160];

	for (size_t i = 0; i < n && !c->failed; i++, c->dec_index++) {
		const struct rtit_sim_rec *d = &recs[i];
		uint64_t off = offs ? offs[i] : 0;
		if (d->kind == RTIT_SIM_EVENT && d->cls && !visible(d)) {
			/* named, and ignored in the truth (VM exit/entry) but
			 * for what EVD/CFE said of a VM exit: the truth's
			 * next VM exit at that IP must agree */
			if (d->cls == RTIT_EV_VMEXIT && (d->pad0 & RTIT_FLOW_A_VMX_INFO) &&
			    !vmexit_agrees(c, d, off))
				return false;
			continue;
		}
		if (!c->in_seg) {
			/* a new segment: every matching truth record after pos
			 * (up to the first traced one, when nothing since the
			 * last segment can have skipped it) */
			c->ncand = 0;
			size_t first = next_visible(c, c->pos), limit = c->n;
			if (c->traced && !c->lossy)
				for (limit = first; limit < c->n; limit = next_visible(c, limit + 1))
					if (c->traced[limit] && c->t[limit].kind == RTIT_SIM_INSN &&
					    c->t[limit].ip != c->off_ip)
						break;
			for (size_t x = lower_bound(c, d->ip, first);
			     x < c->nidx && c->t[c->idx[x]].ip == d->ip && c->idx[x] <= limit &&
			     c->ncand < max_cand; x++) {
				size_t j = c->idx[x];
				if (rec_match(d, &c->t[j], NULL, 0)) {
					struct cand *cd = &c->cand[c->ncand++];
					*cd = (struct cand){ j, next_visible(c, j + 1), 0, false };
					cyc_match(cd, d, &c->t[j]);
				}
			}
			if (!c->ncand) {
				if (limit < c->n && limit > first) {
					char what[320];
					snprintf(what, sizeof(what),
						 "the decoded record starting a segment is not in the"
						 " truth before record %zu, which ran traced (PacketEn)"
						 " and which no error, resync or overflow before the"
						 " segment lets the trace skip", limit);
					mismatch(c, d, limit, off, what);
					return false;
				}
				if (first < c->n && first == next_visible(c, c->pos))
					rec_match(d, &c->t[first], why, sizeof(why));
				else
					snprintf(why, sizeof(why), "no more records in the truth");
				char what[320];
				snprintf(what, sizeof(what),
					 "the decoded record starting a segment is nowhere in the"
					 " truth after record %zu (against that one: %s)", first, why);
				mismatch(c, d, first, off, what);
				return false;
			}
			c->in_seg = true;
			c->lossy = false;
			c->off_ip = ~0ull;
			c->res.segments++;
			c->res.compared++;
			continue;
		}
		int k = 0;
		size_t fail_at = c->cand[0].next;
		struct cand first = c->cand[0];
		for (int j = 0; j < c->ncand; j++) {
			struct cand *cd = &c->cand[j];
			if (cd->next < c->n && rec_match(d, &c->t[cd->next], NULL, 0) &&
			    cyc_match(cd, d, &c->t[cd->next])) {
				cd->next = next_visible(c, cd->next + 1);
				c->cand[k++] = *cd;
			}
		}
		if (!k) {
			if (fail_at < c->n && !rec_match(d, &c->t[fail_at], why, sizeof(why)))
				;
			else if (fail_at < c->n)
				snprintf(why, sizeof(why),
					 "cycles differ: the truth implies %" PRId64 ", decoded %"
					 PRId64 " (both counted as from the segment's first exact"
					 " record)", (int64_t)(c->t[fail_at].cycles -
							       (uint64_t)first.cyc_off),
					 (int64_t)d->cycles);
			else
				snprintf(why, sizeof(why), "the truth ends here");
			mismatch(c, d, fail_at, off, why);
			return false;
		}
		c->ncand = k;
		c->res.compared++;
	}
	return !c->failed;
}

static void seg_end(struct rtit_flow_cmp *c)
{
	if (!c->in_seg)
		return;
	size_t first = next_visible(c, c->pos);
	for (size_t j = first; j < c->cand[0].start; j = next_visible(c, j + 1))
		c->res.skipped++;
	c->pos = c->cand[0].next;
	c->in_seg = false;
}

void rtit_flow_cmp_note(struct rtit_flow_cmp *c, const struct rtit_flow_note *note)
{
	if (note->kind != RTIT_FLOW_N_ENABLE && note->kind != RTIT_FLOW_N_DISABLE &&
	    note->kind != RTIT_FLOW_N_TRACESTOP)
		c->lossy = true;
	if (note->kind == RTIT_FLOW_N_DISABLE)
		c->off_ip = note->ip;
	if (!c->failed)
		seg_end(c);
}

void rtit_flow_cmp_traced(struct rtit_flow_cmp *c, const uint8_t *traced)
{
	c->traced = traced;
}

bool rtit_flow_cmp_finish(struct rtit_flow_cmp *c, struct rtit_flow_cmp_result *res)
{
	if (!c->failed) {
		seg_end(c);
		for (size_t j = next_visible(c, c->pos); j < c->n; j = next_visible(c, j + 1))
			c->res.trailing++;
	}
	if (res)
		*res = c->res;
	return !c->failed;
}

/* ---------------------------------------------------------------- verify */

struct verify_ctx {
	struct rtit_flow_cmp *cmp;
	struct rtit_flow_dec *dec;
	struct rtit_flow_verify_result *res;
};

static void v_on_rec(void *opaque, const struct rtit_sim_rec *recs, size_t n)
{
	struct verify_ctx *v = opaque;
	rtit_flow_cmp_feed(v->cmp, recs, rtit_flow_dec_batch_offsets(v->dec), n);
}

static void v_on_note(void *opaque, const struct rtit_flow_note *nt)
{
	struct verify_ctx *v = opaque;
	rtit_flow_cmp_note(v->cmp, nt);
	if (nt->kind == RTIT_FLOW_N_ERROR && !v->res->first_error[0])
		snprintf(v->res->first_error, sizeof(v->res->first_error),
			 "trace offset 0x%" PRIx64 ", IP 0x%" PRIx64 ": %s", nt->offset, nt->ip,
			 nt->msg ? nt->msg : "");
}

int rtit_flow_verify(const uint8_t *trace, size_t len, const struct rtit_flow_cfg *cfg,
		     const struct rtit_sim_rec *truth, size_t ntruth,
		     struct rtit_flow_verify_result *res)
{
	struct rtit_flow_cfg c;
	struct verify_ctx v;
	int r;

	if (!cfg || !res || (!trace && len))
		return -RTIT_ERR_INVALID;
	memset(res, 0, sizeof(*res));
	memset(&v, 0, sizeof(v));
	v.res = res;
	c = *cfg;
	c.read = NULL;
	c.mem = trace;
	c.mem_len = len;
	c.on_rec = v_on_rec;
	c.on_note = v_on_note;
	c.opaque = &v;
	if ((r = rtit_flow_cmp_new(&v.cmp, truth, ntruth)) < 0)
		return r;
	if ((r = rtit_flow_dec_new(&v.dec, &c)) < 0) {
		rtit_flow_cmp_free(v.cmp);
		return r;
	}
	r = rtit_flow_dec_run(v.dec);
	res->stats = *rtit_flow_dec_stats(v.dec);
	bool ok = rtit_flow_cmp_finish(v.cmp, &res->cmp);
	rtit_flow_dec_free(v.dec);
	rtit_flow_cmp_free(v.cmp);
	if (r < 0)
		return r;
	return ok && r == 0 ? 1 : 0;
}
