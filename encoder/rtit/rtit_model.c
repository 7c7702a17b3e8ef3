/*
 * rtit_model.c - the RTIT trace block: records in, packet bytes out.
 *
 * The reference is RTIT Table 19 (4.3.1, which packets an operation sends
 * for each PacketEn before/after, in the order listed), Table 17 (which
 * enables gate which packets), Table 1 (which IP each packet carries), and
 * chapter 4 for each packet (4.2-4.3).
 */
#include <stddef.h>
#include <string.h>

#include "rtit/rtit_encoder.h"
#include "rtit/msr_rtit.h"
#include "rtit/opcodes_rtit.h"
#include "rtit/bits.h"
#include "rtit/rtit_state.h"
#include "rtit_internal.h"

/* ---------------------------------------------------------------- enables */

bool rtit_r_trigger_en(const struct rtit_r_model *m)
{
	/* 2.1.1: TriggerEn = Trace_En && TraceActive. */
	return (m->ctl & RTIT_R_CTL_TRACE_EN) && (m->ctl & RTIT_R_CTL_TRACE_ACTIVE);
}

bool rtit_r_context_en(const struct rtit_r_model *m)
{
	/* 2.1.2: CPL, CR3 match (CR3[35:5], Table 10), SMM, VMX root. */
	if (!(m->ctl & RTIT_R_CTL_OS) && m->cpl == 0)
		return false;
	if (!(m->ctl & RTIT_R_CTL_USER) && m->cpl > 0)
		return false;
	if ((m->ctl & RTIT_R_CTL_CR3EN) &&
	    (m->cr3 & RTIT_R_CR3_MATCH_MASK) != (m->cr3_match & RTIT_R_CR3_MATCH_MASK))
		return false;
	return !m->in_smm && !m->in_vmx_root && !m->in_wfs;
}

bool rtit_r_packet_en(const struct rtit_r_model *m)
{
	return rtit_r_trigger_en(m) && rtit_r_context_en(m) && m->filter_en;
}

static bool ctl(const struct rtit_r_model *m, uint64_t bit) { return (m->ctl & bit) != 0; }

/* Table 17: STS, MTC and FUP.PCC with LESS_PKTS set need PacketEn; with it
 * clear, STS/MTC need TriggerEn and FUP.PCC TriggerEn && ContextEn. */
static bool gate_sts_mtc(const struct rtit_r_model *m)
{
	return ctl(m, RTIT_R_CTL_LESS_PKTS) ? rtit_r_packet_en(m) : rtit_r_trigger_en(m);
}

static bool gate_pcc(const struct rtit_r_model *m)
{
	return ctl(m, RTIT_R_CTL_LESS_PKTS) ? rtit_r_packet_en(m) :
	       rtit_r_trigger_en(m) && rtit_r_context_en(m);
}

/* Table 17, last two rows, as printed (D67) unless configured swapped. */
static bool gate_cycles(const struct rtit_r_model *m)
{
	bool less = ctl(m, RTIT_R_CTL_LESS_PKTS);
	if (!m->p.cntp_gate_as_printed)
		less = !less;
	return less ? rtit_r_trigger_en(m) && rtit_r_context_en(m) : rtit_r_packet_en(m);
}

/* ----------------------------------------------------------------- errata */

/* Whether erratum @e fires at this chance (deterministic). */
static bool erratum(struct rtit_r_model *m, int e)
{
	const struct rtit_erratum *er = &m->p.errata[e];
	bool fire = false;

	switch (er->mode) {
	case RTIT_ERRATUM_ALWAYS:
		fire = true;
		break;
	case RTIT_ERRATUM_EVERY:
		fire = er->n <= 1 || ++m->errata_count[e] % er->n == 0;
		break;
	case RTIT_ERRATUM_SEEDED:
		/* splitmix64 over (seed, erratum, chance number) */
		{
			uint64_t z = er->seed + 0x9e3779b97f4a7c15ull * (++m->errata_count[e] + 64u * (unsigned)e);
			z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
			z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
			z ^= z >> 31;
			fire = er->n <= 1 || z % er->n == 0;
		}
		break;
	default:
		break;
	}
	if (fire)
		m->stats.errata_fired[e]++;
	return fire;
}

/* ----------------------------------------------------------------- output */

enum stage_kind { STAGE_PKT, STAGE_PSB, STAGE_STOP };

static void mem_write(struct rtit_r_model *m, uint64_t phys, const uint8_t *b, size_t n)
{
	if (!m->err && m->sink.write_mem && n)
		m->err = m->sink.write_mem(m->sink.opaque, phys, b, n);
}

/* 3.3.11: the mask value; the region is [0, mask] (2.3, D71). */
static uint64_t region_mask(const struct rtit_r_model *m) { return m->limit | RTIT_R_LIMIT_LOW; }

static uint64_t region_phys(const struct rtit_r_model *m, uint64_t off)
{
	uint64_t mask = region_mask(m);
	return (m->base & ~mask) + (off & mask);
}

static void line_flush(struct rtit_r_model *m)
{
	struct rtit_outq *q = &m->outq;
	if (q->line_fill)
		mem_write(m, region_phys(m, q->line_off), q->line, q->line_fill);
	q->line_fill = 0;
}

static void offset_advance(struct rtit_r_model *m, uint64_t n)
{
	uint64_t size = region_mask(m) + 1;
	m->offset = (m->offset + n) % size;
}

/* Bytes reach memory: the trace file gets them in order; the region gets
 * them line by line at RTIT_OFFSET (2.3.2: 64-byte lines). */
static void out_flush(struct rtit_r_model *m)
{
	if (m->olen && !m->err && m->sink.write)
		m->err = m->sink.write(m->sink.opaque, m->obuf, m->olen);
	m->olen = 0;
}

static void deliver(struct rtit_r_model *m, const uint8_t *b, size_t n, bool stop)
{
	struct rtit_outq *q = &m->outq;

	if (m->olen + n > sizeof(m->obuf))
		out_flush(m);
	if (n > sizeof(m->obuf)) {
		if (!m->err && m->sink.write)
			m->err = m->sink.write(m->sink.opaque, b, n);
	} else {
		memcpy(m->obuf + m->olen, b, n);
		m->olen += n;
	}
	m->stats.bytes += n;
	if (!m->sink.write_mem) {
		offset_advance(m, n);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		if (stop && !ctl(m, RTIT_R_CTL_DEST)) {
			/* 3.3.2: Dest=0 forces the TraceStop write's address
			 * bits [7:0] to 0xC0. */
			line_flush(m);
			mem_write(m, (region_phys(m, m->offset) & ~0xffull) | 0xc0, b + i, 1);
		} else {
			if (!q->line_fill)
				q->line_off = m->offset;
			q->line[q->line_fill++] = b[i];
		}
		offset_advance(m, 1);
		if (q->line_fill && m->offset % rtit_line_size == 0)
			line_flush(m);
	}
}

/* @k bytes leave the internal buffer. */
static void drain_bytes(struct rtit_r_model *m, uint64_t k)
{
	struct rtit_outq *q = &m->outq;

	if (k > q->in - q->out)
		k = q->in - q->out;
	while (k) {
		size_t at = (size_t)(q->out % rtit_outq_size);
		size_t n = rtit_outq_size - at;
		bool stop = false;
		if (n > k)
			n = (size_t)k;
		if (q->nstops) {
			if (q->stops[0] == q->out) {
				n = 1;
				stop = true;
				memmove(q->stops, q->stops + 1, --q->nstops * sizeof(q->stops[0]));
			} else if (q->stops[0] - q->out < n) {
				n = (size_t)(q->stops[0] - q->out);
			}
		}
		deliver(m, q->ring + at, n, stop);
		q->out += n;
		k -= n;
	}
}

/* Bytes enter the internal buffer (after the E8 stage). */
static void accept(struct rtit_r_model *m, const uint8_t *b, size_t n, bool stop)
{
	struct rtit_outq *q = &m->outq;

	if (!m->ibuf.cap) {		/* unlimited: straight to memory */
		deliver(m, b, n, stop);
		return;
	}
	if (stop && q->nstops < rtit_outq_stops)
		q->stops[q->nstops++] = q->in;
	for (size_t i = 0; i < n; i++)
		q->ring[(q->in + i) % rtit_outq_size] = b[i];
	q->in += n;
}

static void e8_release(struct rtit_r_model *m)
{
	accept(m, m->e8buf, m->e8len, false);
	m->e8len = 0;
	m->e8n = 0;
}

/* The output stage.  E8 (Appendix E): packets in the (up to) 21 after a
 * PSB may precede older packets; modelled by holding them and, when the
 * erratum fires, putting a packet before the one held before it. */
static void stage(struct rtit_r_model *m, const uint8_t *b, size_t n, enum stage_kind kind)
{
	if (!m->p.errata[RTIT_E8].mode) {
		accept(m, b, n, kind == STAGE_STOP);
		return;
	}
	if (kind == STAGE_PSB) {
		e8_release(m);
		accept(m, b, n, false);
		m->e8_window = m->p.errata[RTIT_E8].arg ? (int)m->p.errata[RTIT_E8].arg : 21;
		return;
	}
	if (kind == STAGE_STOP || m->e8_window <= 0 || m->e8len + n > sizeof(m->e8buf) ||
	    m->e8n + 1 >= sizeof(m->e8start) / sizeof(m->e8start[0])) {
		e8_release(m);
		accept(m, b, n, kind == STAGE_STOP);
		return;
	}
	m->e8_window--;
	if (m->e8n && erratum(m, RTIT_E8)) {
		size_t prev = m->e8start[m->e8n - 1];
		memmove(m->e8buf + prev + n, m->e8buf + prev, m->e8len - prev);
		memcpy(m->e8buf + prev, b, n);
		m->e8start[m->e8n++] = (uint16_t)(prev + n);
	} else {
		m->e8start[m->e8n++] = (uint16_t)m->e8len;
		memcpy(m->e8buf + m->e8len, b, n);
	}
	m->e8len += n;
}

void rtit_r_model_drain(struct rtit_r_model *m)
{
	(void)rtit_ibuf_on_drain(&m->ibuf);
	drain_bytes(m, UINT64_MAX);	/* everything queued */
	line_flush(m);
}

/* ---------------------------------------------------------------- packets */

static void emit_psb(struct rtit_r_model *m, bool by_counter, const char *why);

static void note(struct rtit_r_model *m, const struct rtit_packet *p, const uint8_t *b,
		 size_t n, uint64_t ip, const char *why)
{
	rtit_enc_notify(&m->sink, p, b, n, m->stats.bytes, m->cur, ip, why, false);
}

/* A packet the rules called for that the internal buffer does not take
 * (4.2.5): counted, and named to an observer as dropped. */
static void drop(struct rtit_r_model *m, const struct rtit_packet *p, uint64_t ip,
		 const char *why)
{
	m->stats.dropped_packets++;
	rtit_enc_notify(&m->sink, p, NULL, 0, m->stats.bytes, m->cur, ip, why, true);
}

void rtit_r_model_observe(const struct rtit_r_model *m, struct rtit_enc_state *st)
{
	memset(st, 0, sizeof(*st));
	st->last_ip = m->lastlip.ip;
	st->last_ip_valid = m->lastlip.valid;
	st->packet_en = rtit_r_packet_en(m);
	st->overflow = m->buff_ovf;
	/* the TNT buffer keeps a leading 1 above its bits */
	st->tnt_n = m->tnt.v ? (uint8_t)(31 - __builtin_clz(m->tnt.v)) : 0;
	st->tnt_bits = m->tnt.v & ((1u << st->tnt_n) - 1);
	st->tnt_cap = rtit_r_tnt_max_bits;
	st->ret_compression = ctl(m, RTIT_R_CTL_CMPRS_RET);
	st->call_nlip = m->retc.nlip;
	st->call_nlip_valid = m->retc.valid;
	st->psb_count = m->pktcnt.cnt;
	st->psb_period = 1ull << (11 + m->pktcnt.mask);
	st->buf_fill = m->ibuf.fill;
	st->buf_cap = m->ibuf.cap;
	st->cycles = m->cntp.v;
	st->tsc = m->last_tsc;
}

/* The internal buffer could not take a packet (4.2.5). */
static void on_overflow(struct rtit_r_model *m, const struct rtit_packet *p, uint64_t ip)
{
	m->buff_ovf = true;
	m->stats.overflows++;
	/* 4.2.5: a full TNT that caused the overflow is not dropped; it is
	 * sent before the FUP.BuffOvf.  Put its bits back (counted as
	 * before, but not named to an observer as lost). */
	if (p->type == RTIT_R_TNT && p->u.tnt.nbits == rtit_r_tnt_max_bits) {
		m->stats.dropped_packets++;
		m->tnt.v = (uint8_t)((1u << rtit_r_tnt_max_bits) | p->u.tnt.bits);
	} else {
		drop(m, p, ip, "the internal buffer is full: overflow, the packet is lost (4.2.5)");
	}
}

/*
 * Sends one packet (and its CCP in cycle-accurate mode, 4.2.15) through
 * the internal buffer.  @ip is the full IP of an IP packet.  Returns true
 * when it was sent.
 */
static bool send(struct rtit_r_model *m, struct rtit_packet *p, uint64_t ip, const char *why)
{
	struct rtit_pkt_ctx c;
	uint8_t b[rtit_r_ip_max_size + rtit_r_ccp_max_size];
	int n, k = 0;

	if (m->buff_ovf) {
		drop(m, p, ip, why);
		return false;
	}
	/* 4.2.15: CCPs follow only in cycle-accurate mode. */
	m->ctx.cycle_acc = ctl(m, RTIT_R_CTL_CYCLE_ACC);
	c = m->ctx;
	n = rtit_pkt_encode(&c, p, b, sizeof(b));
	if (n < 0) {
		if (!m->err)
			m->err = n;
		return false;
	}
	rtit_pkt_ctx_on_packet(&c, p);
	struct rtit_packet ccp = { .type = RTIT_R_CCP };
	if (c.expect_ccp) {
		/* 4.2.14: the cycles since the last CCP; E6 sends one less. */
		uint32_t v = m->cntp.v;
		if (v && erratum(m, RTIT_E6))
			v--;
		ccp.u.cyc.value = v;
		k = rtit_pkt_encode(&c, &ccp, b + n, sizeof(b) - (size_t)n);
		if (k < 0) {
			if (!m->err)
				m->err = k;
			return false;
		}
		rtit_pkt_ctx_on_packet(&c, &ccp);
	}
	if (!rtit_ibuf_fits(&m->ibuf, (uint64_t)(n + k))) {
		on_overflow(m, p, ip);
		return false;
	}
	/* Accepted. */
	m->ctx = c;
	if (k) {
		rtit_r_cntp_on_ccp(&m->cntp);
		m->ccps_this_insn++;
		m->stats.ccps++;
	}
	rtit_ibuf_on_packet(&m->ibuf, (uint64_t)(n + k));
	p->size = (uint8_t)n;
	note(m, p, b, (size_t)n, ip, why);
	if (k) {
		ccp.size = (uint8_t)k;
		note(m, &ccp, b + n, (size_t)k, 0, "cycle count after the packet (4.2.15)");
	}
	stage(m, b, (size_t)(n + k), p->type == RTIT_R_TRACESTOP ? STAGE_STOP : STAGE_PKT);
	m->stats.packets++;

	/* 4.2.3.1: LAST_LIP takes the full LIP of every FUP and TIP; not a
	 * FUP.BuffOvf (D4). */
	if (rtit_pkt_has_ip(p->type) &&
	    (p->type != RTIT_R_FUP_BUFFOVF || m->p.buffovf_loads_lip))
		rtit_last_ip_on_ip(&m->lastlip, ip);

	/* 3.3.9: the PSB clear of LAST_LIP/LAST_CALL_NLIP takes effect up to
	 * psb_clear_delay packets later (D65). */
	if (m->psb_clear_countdown > 0 && --m->psb_clear_countdown == 0) {
		rtit_last_ip_on_psb(&m->lastlip);
		rtit_r_retc_clear(&m->retc);
	}

	/* 3.3.9: count the bytes (CCP included, D65); PSB when the
	 * monitored bit sets.  E3 delays the PSB by one packet. */
	bool due = rtit_r_pktcnt_on_packet(&m->pktcnt, (unsigned)(n + k));
	if (m->psb_due_after_next) {
		m->psb_due_after_next = false;
		emit_psb(m, true, "PSB delayed by one packet (erratum E3)");
	}
	if (due) {
		if (erratum(m, RTIT_E3))
			m->psb_due_after_next = true;
		else
			emit_psb(m, true, "Pkt_Cnt reached the bit Pkt_Mask selects (3.3.9)");
	}
	return true;
}

static void emit_psb(struct rtit_r_model *m, bool by_counter, const char *why)
{
	struct rtit_packet p = { .type = RTIT_R_PSB };
	uint8_t b[rtit_r_psb_size];
	int n;

	if (m->buff_ovf) {
		drop(m, &p, 0, why);
		return;
	}
	n = rtit_pkt_encode(&m->ctx, &p, b, sizeof(b));
	if (n < 0 || !rtit_ibuf_fits(&m->ibuf, (uint64_t)n)) {
		if (n > 0)
			on_overflow(m, &p, 0);
		return;
	}
	rtit_pkt_ctx_on_packet(&m->ctx, &p);
	rtit_ibuf_on_packet(&m->ibuf, (uint64_t)n);
	p.size = (uint8_t)n;
	note(m, &p, b, (size_t)n, 0, why);
	stage(m, b, (size_t)n, STAGE_PSB);
	m->stats.packets++;
	m->stats.psbs++;
	(void)rtit_r_pktcnt_on_packet(&m->pktcnt, (unsigned)n);
	/* 3.3.7/3.3.14: a PSB clears LAST_LIP and LAST_CALL_NLIP. */
	if (by_counter && m->p.psb_clear_delay) {
		m->psb_clear_countdown = m->p.psb_clear_delay;
	} else {
		rtit_last_ip_on_psb(&m->lastlip);
		rtit_r_retc_clear(&m->retc);
	}
}

/* 4.2.2: a FUP, TIP or PIP forces out a partial TNT first (D66). */
static void flush_tnt(struct rtit_r_model *m)
{
	struct rtit_packet p = { 0 };
	struct rtit_r_tnt save = m->tnt;

	if (m->buff_ovf || !rtit_r_tnt_take(&m->tnt, &p))
		return;
	if (!send(m, &p, 0, p.u.tnt.nbits == rtit_r_tnt_max_bits ?
		  "full TNT sent before the next packet" :
		  "partial TNT forced out by a FUP, TIP or PIP (4.2.2)"))
		if (!m->buff_ovf)
			m->tnt = save;
}

static void emit_ip(struct rtit_r_model *m, enum rtit_pkt_type t, uint64_t ip, const char *why)
{
	struct rtit_packet p = { .type = t };

	if (m->buff_ovf) {
		drop(m, &p, ip, why);
		if (t == RTIT_R_TIP)
			m->tip_during_ovf = true;
		return;
	}
	flush_tnt(m);
	if (m->buff_ovf)
		return;
	rtit_last_ip_choose(&m->lastlip, ip, &p.u.ip);
	send(m, &p, ip, why);
}

/* A conditional branch or compressed RET (4.2.2): its bit, and a full TNT
 * when it is the sixth. */
static void tnt_bit(struct rtit_r_model *m, bool taken, const char *why)
{
	struct rtit_packet p = { 0 };

	if (m->buff_ovf)
		return;		/* 4.2.5 b: no TNT update during overflow */
	if (rtit_r_tnt_full(&m->tnt))
		flush_tnt(m);	/* a full value restored by software */
	if (rtit_r_tnt_on_branch(&m->tnt, taken)) {
		rtit_r_tnt_take(&m->tnt, &p);
		send(m, &p, 0, why);
	}
}

static void emit_simple(struct rtit_r_model *m, struct rtit_packet *p, const char *why)
{
	if (p->type == RTIT_R_PIP)
		flush_tnt(m);
	send(m, p, 0, why);
}

static void emit_sts(struct rtit_r_model *m, uint64_t tsc, const char *why)
{
	struct rtit_packet p = { .type = RTIT_R_STS };

	/* Figure 12: both ratios are 6-bit fields. */
	p.u.sts.acbr = m->p.acbr & rtit_r_sts_ecbr_mask;
	p.u.sts.ecbr = m->p.ecbr & rtit_r_sts_ecbr_mask;
	p.u.sts.tsc = tsc & rtit_mask(rtit_r_sts_tsc_bits);
	send(m, &p, 0, why);
}

/* ------------------------------------------------------------------ time */

static unsigned mtc_shift(const struct rtit_r_model *m)
{
	return RTIT_R_MTC_SHIFT((m->ctl & RTIT_R_CTL_MTC_RANGE_MASK) >> RTIT_R_CTL_MTC_RANGE_SHIFT);
}

static uint8_t mtc_bits(const struct rtit_r_model *m, uint64_t tsc)
{
	return (uint8_t)(tsc >> mtc_shift(m));
}

/* 4.2.12: an MTC when the watched 8 TSC bits changed (MTC_En and the
 * Table 17 gate checked by the caller). */
static void mtc_on_tsc(struct rtit_r_model *m, uint64_t tsc)
{
	uint8_t bits = mtc_bits(m, tsc);
	bool first = m->mtc_first;
	struct rtit_packet p = { .type = RTIT_R_MTC };

	if (bits == m->mtc_bits)
		return;
	m->mtc_first = false;
	/* E7: the first MTC after enable may come at the wrong time;
	 * modelled as dropped (the next carries the later value). */
	if (first && erratum(m, RTIT_E7) && (uint8_t)(bits - m->mtc_bits) == 1) {
		m->mtc_bits = bits;
		return;
	}
	p.u.mtc.ctc = bits;
	p.u.mtc.rng = (uint8_t)((m->ctl & RTIT_R_CTL_MTC_RANGE_MASK) >> RTIT_R_CTL_MTC_RANGE_SHIFT);
	m->mtc_bits = bits;
	/* 4.2.5: MTCs during an overflow are dropped. */
	send(m, &p, 0, "MTC: the watched TSC bits changed (4.2.12)");
}

/* Cycles and TSC up to record @r: CNTP (Table 17 gating), the buffer
 * drain, RTIT_OFFSET, and MTC when the watched TSC bits change (4.2.12). */
static void on_time(struct rtit_r_model *m, const struct rtit_sim_rec *r)
{
	uint64_t dc;

	if (!m->have_time) {
		m->have_time = true;
		m->last_cycles = r->cycles;
		m->last_tsc = r->tsc;
		m->mtc_bits = mtc_bits(m, r->tsc);
		return;
	}
	dc = r->cycles - m->last_cycles;
	m->last_cycles = r->cycles;
	m->last_tsc = r->tsc;
	if (m->asleep)
		return;
	if (gate_cycles(m))
		rtit_r_cntp_on_cycles(&m->cntp, dc);
	drain_bytes(m, rtit_ibuf_on_cycles(&m->ibuf, dc));
	if (ctl(m, RTIT_R_CTL_MTC_EN) && gate_sts_mtc(m))
		mtc_on_tsc(m, r->tsc);
	else
		m->mtc_bits = mtc_bits(m, r->tsc);
}

/* ------------------------------------------------------------ enables */

static bool range_enter_leave(const struct rtit_r_model *m, int range, bool taken,
			      uint64_t next, int *ev)
{
	uint64_t base = m->lip[range], limit = m->lip[range + 2];
	*ev = rtit_r_range_on_retire(base, limit, taken, next);
	return *ev != 0;
}

/* 3.3.5: FilterEn after an instruction or event whose next IP is @next,
 * reached by a taken transfer or sequentially.  Frozen unless Trace_En and
 * ContextEn (2.1.3, D72). */
static void filter_on_retire(struct rtit_r_model *m, bool taken, uint64_t next)
{
	unsigned id = (unsigned)(m->events & RTIT_R_EVENTS_FILTER_MASK);
	int ev;

	if (!ctl(m, RTIT_R_CTL_TRACE_EN) || !rtit_r_context_en(m))
		return;
	switch (id) {
	case RTIT_R_EVID_RANGE0:
	case RTIT_R_EVID_RANGE1:
		if (range_enter_leave(m, (int)id, taken, next, &ev))
			m->in_range[id] = ev > 0;
		m->filter_en = m->in_range[id];
		break;
	case RTIT_R_EVID_RANGE01:
		for (int i = 0; i < 2; i++)
			if (range_enter_leave(m, i, taken, next, &ev))
				m->in_range[i] = ev > 0;
		m->filter_en = m->in_range[0] || m->in_range[1];
		break;
	case RTIT_R_EVID_ALWAYS_ON:
		m->filter_en = true;
		break;
	default:	/* always off, and the reserved IDs (docs/decisions.md) */
		m->filter_en = false;
		break;
	}
}

/* 3.3.5, 4.2.11: does this instruction trigger a TraceStop?  Same range
 * detector; needs TriggerEn and ContextEn. */
static bool stop_on_retire(struct rtit_r_model *m, bool taken, uint64_t next)
{
	unsigned id = (unsigned)((m->events >> RTIT_R_EVENTS_STOP_SHIFT) & 7);
	bool hit = false;
	int ev;

	if (!rtit_r_trigger_en(m) || !rtit_r_context_en(m))
		return false;
	switch (id) {
	case RTIT_R_EVID_RANGE0:
	case RTIT_R_EVID_RANGE1:
	case RTIT_R_EVID_RANGE01:
		for (int i = 0; i < 2; i++) {
			if (id != RTIT_R_EVID_RANGE01 && (unsigned)i != id)
				continue;
			if (!range_enter_leave(m, i, taken, next, &ev))
				continue;
			if (ev > 0 && !m->stop_in_range[i])
				hit = true;
			m->stop_in_range[i] = ev > 0;
		}
		break;
	case RTIT_R_EVID_ALWAYS_ON:	/* 3.3.5, D72: at the first boundary */
		hit = true;
		break;
	default:
		break;
	}
	return hit;
}

/* 4.2.11: the TraceStop action. */
static void trace_stop(struct rtit_r_model *m)
{
	struct rtit_packet p = { .type = RTIT_R_TRACESTOP };

	if (m->buff_ovf) {
		/* 4.2.5: held pending; E4: the packet slips out and
		 * TraceActive is not cleared. */
		if (erratum(m, RTIT_E4)) {
			uint8_t b[1];
			if (rtit_pkt_encode(&m->ctx, &p, b, 1) == 1) {
				p.size = 1;
				note(m, &p, b, 1, 0, "TraceStop during overflow, erratum E4: TraceActive stays set");
				rtit_ibuf_on_packet(&m->ibuf, 1);
				stage(m, b, 1, STAGE_STOP);
				m->stats.packets++;	/* in the trace: counted */
			}
			return;
		}
		m->pending_stop = true;
		return;
	}
	m->ctl &= ~RTIT_R_CTL_TRACE_ACTIVE;
	m->filter_en = false;
	/* The TNT buffer is not drained (4.2.2, 4.2.11); no CCP follows. */
	send(m, &p, 0, "TraceStop: the IP entered the TraceStop range (4.2.11)");
}

/* ------------------------------------------------------ one operation */

/* What kind of operation a record is, for Table 19. */
struct op {
	bool insn, cond, taken, near_call, ret, indirect, far, mov_cr3, pg_change;
	bool ctx_off;		/* SMI, VM exit (rows 36/37) */
	bool ctx_on;		/* RSM, VM entry (row 38) */
	uint64_t nlip, next, fip;
};

static void classify(const struct rtit_r_model *m, const struct rtit_sim_rec *r, struct op *o)
{
	memset(o, 0, sizeof(*o));
	o->taken = r->flags & RTIT_SIM_F_TAKEN;
	o->next = r->next_ip;
	if (r->kind == RTIT_SIM_INSN) {
		o->insn = true;
		o->nlip = r->ip + r->len;
		o->fip = o->nlip;	/* Table 1: far instructions send NLIP */
		switch (r->cls) {
		case RTIT_IC_COND: o->cond = true; break;
		case RTIT_IC_DIRECT_JMP: o->taken = true; break;
		case RTIT_IC_DIRECT_CALL: o->taken = true; o->near_call = true; break;
		case RTIT_IC_INDIRECT_JMP: o->taken = true; o->indirect = true; break;
		case RTIT_IC_INDIRECT_CALL: o->taken = true; o->indirect = true; o->near_call = true; break;
		case RTIT_IC_RET: o->taken = true; o->ret = true; break;
		case RTIT_IC_FAR_JMP: case RTIT_IC_FAR_CALL: case RTIT_IC_FAR_RET:
		case RTIT_IC_IRET: case RTIT_IC_INT: case RTIT_IC_SYSCALL:
		case RTIT_IC_SYSRET: case RTIT_IC_SYSENTER: case RTIT_IC_SYSEXIT:
			o->taken = true;
			o->far = true;
			break;
		case RTIT_IC_MOV_CR3: o->mov_cr3 = true; break;
		case RTIT_IC_MOV_CR0:
			o->pg_change = ((r->flags & RTIT_SIM_F_CR0_PG) != 0) != m->cr0_pg;
			break;
		default: break;
		}
		if (!o->taken)
			o->next = o->nlip;
		return;
	}
	/* Events: ip is the IP saved for the interrupted flow (Table 1). */
	o->nlip = r->ip;
	o->fip = r->ip;
	o->taken = true;
	switch (r->cls) {
	case RTIT_EV_EXCEPTION: case RTIT_EV_EXT_INTERRUPT: case RTIT_EV_NMI:
		o->far = true;
		break;
	case RTIT_EV_SMI: case RTIT_EV_VMEXIT:
		o->ctx_off = true;
		break;
	case RTIT_EV_RSM: case RTIT_EV_VMENTRY:
		o->ctx_on = true;
		break;
	case RTIT_EV_INIT:
		/* Table 1: FUP with the NLIP.  No row of Table 19 names INIT
		 * (D56): on the BSP a far event to the reset vector (rows
		 * 27-33); on an AP ContextEn clears until the SIPI, as for an
		 * SMI (rows 36/37)... */
		o->far = !r->vector;
		o->ctx_off = r->vector != 0;
		break;
	case RTIT_EV_SIPI:
		o->ctx_on = true;	/* ... and the SIPI sets it, as RSM (row 38) */
		break;
	default:
		break;
	}
}

/* The natural clearing of an overflow (4.2.5), after instruction X. */
static void overflow_clear(struct rtit_r_model *m, uint64_t ip)
{
	struct rtit_packet p = { 0 };

	m->buff_ovf = false;
	rtit_last_ip_invalidate(&m->lastlip);
	rtit_r_retc_clear(&m->retc);
	/* Pre-overflow TNT bits (a delayed full TNT carries a CCP taken now). */
	if (rtit_r_tnt_take(&m->tnt, &p))
		send(m, &p, 0, "TNT bits from before the overflow (4.2.5)");
	emit_ip(m, RTIT_R_FUP_BUFFOVF, ip, "FUP.BuffOvf: the overflow cleared naturally (4.2.5)");
	if (m->tip_during_ovf && erratum(m, RTIT_E5))
		emit_ip(m, RTIT_R_TIP, ip, "spurious TIP after FUP.BuffOvf (erratum E5)");
	m->tip_during_ovf = false;
	if (m->pending_stop) {
		m->pending_stop = false;
		trace_stop(m);
	}
}

/* What a guest WRMSR's write did when it took effect, at the WRMSR's end
 * (D76). */
struct wr_effect {
	bool applied;		/* this record was the pending WRMSR */
	uint32_t msr;
	bool trig_rise, trig_fall;
	bool e2_3b;		/* E2 condition 3b: set Trace_En and TraceActive */
};

/* A WRMSR retires: its write takes effect now, after its cycles were
 * counted and its start state was used (4.2.5, 4.2.6), before the range
 * check at its NLIP (4.2.7/4.2.8: the instruction that "ends" in or out
 * decides).  A PSB when TriggerEn rose (4.2.1, D69). */
static void wrmsr_retire(struct rtit_r_model *m, struct wr_effect *w, bool trig0)
{
	const uint64_t both = RTIT_R_CTL_TRACE_EN | RTIT_R_CTL_TRACE_ACTIVE;
	uint64_t ctl0 = m->ctl;

	m->wr_pending = false;
	w->applied = true;
	w->msr = m->wr_msr;
	(void)rtit_r_model_apply_write(m, m->wr_msr, m->wr_value);
	w->trig_rise = !trig0 && rtit_r_trigger_en(m);
	w->trig_fall = trig0 && !rtit_r_trigger_en(m);
	w->e2_3b = w->msr == RTIT_R_MSR_CTL && (m->ctl & both) == both && (ctl0 & both) != both;
	if (w->trig_rise) {
		emit_psb(m, false, "PSB: TriggerEn 0->1 by WRMSR RTIT_CTL (3.3.2, 4.2.1)");
		m->mtc_first = true;
		m->mtc_bits = mtc_bits(m, m->last_tsc);
	}
}

static void on_op(struct rtit_r_model *m, const struct rtit_sim_rec *r)
{
	struct op o;
	struct wr_effect w = { 0 };
	bool clear_ovf = false, pcc_due = false;

	classify(m, r, &o);
	on_time(m, r);
	m->ccps_this_insn = 0;

	if (o.insn) {
		/* 4.2.5: the overflow clears when the buffer is empty and an
		 * instruction starts with TriggerEn && ContextEn; that
		 * instruction's own packets are still lost and the FUP.BuffOvf
		 * carries where execution goes on (docs/decisions.md D14). */
		if (m->buff_ovf && rtit_ibuf_empty(&m->ibuf) && rtit_r_trigger_en(m) &&
		    rtit_r_context_en(m))
			clear_ovf = true;
		/* 4.2.6: FUP.PCC decided at the start of the instruction. */
		pcc_due = ctl(m, RTIT_R_CTL_CYCLE_ACC) && rtit_r_cntp_msb(&m->cntp) &&
			  gate_pcc(m) && !m->buff_ovf;
	}

	bool trig0 = rtit_r_trigger_en(m), ctx0 = rtit_r_context_en(m);
	bool filt0 = m->filter_en;
	bool pe0 = trig0 && ctx0 && filt0;

	/* Architectural state after the operation. */
	m->cpl = r->cpl;
	m->cr3 = r->cr3;
	m->cr0_pg = (r->flags & RTIT_SIM_F_CR0_PG) != 0;
	if (o.ctx_off)
		(r->cls == RTIT_EV_SMI ? (m->in_smm = true) :
		 r->cls == RTIT_EV_INIT ? (m->in_wfs = true) : (m->in_vmx_root = true));
	if (o.ctx_on)
		(r->cls == RTIT_EV_RSM ? (m->in_smm = false) :
		 r->cls == RTIT_EV_SIPI ? (m->in_wfs = false) : (m->in_vmx_root = false));

	if (o.insn && r->cls == RTIT_IC_WRMSR && m->wr_pending && r->ip == m->wr_ip)
		wrmsr_retire(m, &w, trig0);

	filter_on_retire(m, o.taken, o.next);
	bool stop = stop_on_retire(m, o.taken, o.next);
	bool ctx1 = rtit_r_context_en(m);
	bool pe1 = rtit_r_trigger_en(m) && ctx1 && m->filter_en && !stop;
	/* 4.2.8, D69: no FUP.PGD when TriggerEn clears (a TraceStop, or a
	 * WRMSR clearing Trace_En or TraceActive) unless configured. */
	bool trig_cleared = (stop && !m->buff_ovf) || w.trig_fall;

	/* ---- Table 19, in the order of its rows' packet lists ---- */
	if (pe0 && o.cond)
		tnt_bit(m, o.taken, "full TNT: the sixth conditional branch (Table 19 rows 13/17)");
	if (pe0 && o.near_call && ctl(m, RTIT_R_CTL_CMPRS_RET) && !m->buff_ovf)
		rtit_r_retc_on_call(&m->retc, o.nlip);	/* 4.2.3.2 */

	bool ret_compressed = false;
	if (pe0 && o.ret && ctl(m, RTIT_R_CTL_CMPRS_RET) && rtit_r_retc_on_ret(&m->retc, o.next)) {
		ret_compressed = true;
		tnt_bit(m, true, "full TNT: a compressed RET was the sixth bit (4.2.3.2)");
	}

	/* MOV CR3 / CR0.PG (4.2.10; rows 39-44): PIP, then STS. */
	if (o.mov_cr3 || o.pg_change) {
		if (rtit_r_trigger_en(m) && ctx1 && !ctl(m, RTIT_R_CTL_CR3EN)) {
			struct rtit_packet p = { .type = RTIT_R_PIP };
			p.u.pip.cr3 = m->cr3 & rtit_mask(40);
			p.u.pip.pg = m->cr0_pg;
			emit_simple(m, &p, o.mov_cr3 ? "PIP: MOV to CR3 (4.2.10, Table 19 rows 39-44)" :
						       "PIP: CR0.PG changed (4.2.10)");
		}
		if (o.mov_cr3 && ctl(m, RTIT_R_CTL_STS_ON_CR3) && ctl(m, RTIT_R_CTL_STS_EN) &&
		    gate_sts_mtc(m))
			emit_sts(m, r->tsc, "STS: MOV CR3 with STS_on_CR3 (4.2.10)");
	}

	if (o.far) {
		/* Rows 27-33: far transfers, exceptions, interrupts.  E1: a
		 * FUP.FAR address inside the instruction. */
		uint64_t fip = o.fip;
		if (o.insn && pe0 && pe1 && r->len > 1 && erratum(m, RTIT_E1)) {
			unsigned k = m->p.errata[RTIT_E1].arg ? m->p.errata[RTIT_E1].arg : 1;
			fip = r->ip + (k < r->len ? k : r->len - 1u);
		}
		if (pe0 && pe1) {
			emit_ip(m, RTIT_R_FUP_FAR, fip, "FUP.FAR: far transfer, IP per Table 1 (Table 19 rows 27/28)");
			emit_ip(m, RTIT_R_TIP, o.next, "TIP: far transfer target (Table 19 rows 27/28)");
		} else if (pe0 && ctx1 && !trig_cleared) {
			emit_ip(m, RTIT_R_FUP_PGD, o.fip, "FUP.PGD replaces FUP.FAR: left the filter region (Table 19 rows 30/31)");
			emit_ip(m, RTIT_R_TIP, o.next, "TIP: far transfer target (Table 19 rows 30/31)");
		} else if (pe0 && (!trig_cleared || m->p.pgd_on_trigger_clear)) {
			emit_ip(m, RTIT_R_FUP_PGD, o.fip, "FUP.PGD: ContextEn cleared by the far transfer (Table 19 rows 32/33)");
		}
	} else if (o.ctx_off) {
		if (pe0)
			emit_ip(m, RTIT_R_FUP_PGD, o.fip, "FUP.PGD: SMI or VM exit, the saved IP (Table 19 rows 36/37)");
	} else if (pe0 && (o.indirect || (o.ret && !ret_compressed))) {
		/* Rows 21-25: TIP, then FUP.PGD when leaving. */
		emit_ip(m, RTIT_R_TIP, o.next, "TIP: near indirect branch or uncompressed RET (Table 19 rows 21-25)");
		if (!pe1 && (!trig_cleared || m->p.pgd_on_trigger_clear))
			emit_ip(m, RTIT_R_FUP_PGD, o.nlip, "FUP.PGD after the TIP: left the region (Table 19 rows 24/25)");
	} else if (pe0 && !pe1 && (!trig_cleared || m->p.pgd_on_trigger_clear)) {
		/* Rows 3/4, 8/9, 15, 19, 43/44; the TNT goes first. */
		emit_ip(m, RTIT_R_FUP_PGD, o.nlip, "FUP.PGD with NLIP: PacketEn cleared (Table 19 rows 3/4, 8/9, 15/19, 43/44)");
	}

	if (!pe0 && pe1)
		emit_ip(m, RTIT_R_FUP_PGE, o.next,
			o.taken ? "FUP.PGE with BLIP: PacketEn set (Table 19 rows 10, 26, 34/35, 38)" :
				  "FUP.PGE with NLIP: PacketEn set (Table 19 rows 5, 42)");

	/* E2: an extra FUP.PGD while PacketEn stays 0, when FilterEn fell
	 * or a TraceStop hit, and ContextEn rose (3a) or the instruction is
	 * a WRMSR setting Trace_En and TraceActive (3b, D17). */
	if (!pe0 && !pe1 && ((filt0 && !m->filter_en) || stop) && ((!ctx0 && ctx1) || w.e2_3b) &&
	    erratum(m, RTIT_E2))
		emit_ip(m, RTIT_R_FUP_PGD, o.nlip, "extra FUP.PGD (erratum E2)");

	if (stop)
		trace_stop(m);

	/* 3.3.9: Pkt_Cnt "evaluated on writes to this MSR" (D77). */
	if (w.applied && w.msr == RTIT_R_MSR_PKT_CNT)
		rtit_r_model_pktcnt_written(m, true);

	/* 4.2.6: FUP.PCC unless another CCP went out in this instruction; a
	 * WRMSR's write may have rewritten CNTP or closed the gate. */
	if (pcc_due && !m->ccps_this_insn &&
	    (!w.applied || (w.msr != RTIT_R_MSR_CNTP && gate_pcc(m))))
		emit_ip(m, RTIT_R_FUP_PCC, o.nlip, "FUP.PCC: CNTP bit 21 set at the start of the instruction (4.2.6)");

	/* The overflow cleared as the instruction started (D14), unless its
	 * write cleared Buffer_Overflow (not natural, 4.2.5) or TriggerEn or
	 * ContextEn (Table 17: FUP.BuffOvf needs both). */
	if (clear_ovf && m->buff_ovf &&
	    (!w.applied || (rtit_r_trigger_en(m) && rtit_r_context_en(m))))
		overflow_clear(m, o.next);
}

static void on_event_other(struct rtit_r_model *m, const struct rtit_sim_rec *r)
{
	on_time(m, r);
	switch (r->cls) {
	case RTIT_EV_FREQ_CHANGE:
		m->p.acbr = m->p.ecbr = (uint8_t)r->value;
		if (ctl(m, RTIT_R_CTL_STS_EN) && gate_sts_mtc(m))
			emit_sts(m, r->tsc, "STS: core frequency changed (4.2.13)");
		break;
	case RTIT_EV_SLEEP:
		/* App. B: C4 and deeper drain the buffer before entry. */
		if (r->vector >= 4)
			rtit_r_model_drain(m);
		m->asleep = true;
		break;
	case RTIT_EV_WAKE:
		m->asleep = false;
		m->mtc_bits = mtc_bits(m, r->tsc);
		if (ctl(m, RTIT_R_CTL_STS_EN) && gate_sts_mtc(m))
			emit_sts(m, r->tsc, "STS: wake from a sleep state (4.2.13)");
		break;
	default:
		break;
	}
}

/*
 * The fast path's conditions, recomputed after every record handled the
 * slow way and after every MSR write.  While fp_ok holds, an instruction
 * that does not change CPL/CR3/CR0.PG, is not a far transfer, MOV CR or
 * WRMSR, crosses no range boundary, and brings no MTC or FUP.PCC, cannot
 * change any enable: only the TNT, RET compression and TIPs remain.
 */
static void fast_refresh(struct rtit_r_model *m)
{
	unsigned fid = (unsigned)(m->events & RTIT_R_EVENTS_FILTER_MASK);
	unsigned sid = (unsigned)((m->events >> RTIT_R_EVENTS_STOP_SHIFT) & 7);
	bool stop_ranges = sid <= RTIT_R_EVID_RANGE01;

	/* enables change only here (records the slow way, MSR writes) */
	if (ctl(m, RTIT_R_CTL_TRACE_EN)) {
		bool trig = rtit_r_trigger_en(m), cx = trig && rtit_r_context_en(m);
		m->seen |= RTIT_R_SEEN_TRACE_EN | (trig ? RTIT_R_SEEN_TRIGGER : 0) |
			   (cx ? RTIT_R_SEEN_CONTEXT : 0) | (cx && m->filter_en ? RTIT_R_SEEN_PACKET : 0);
	}
	m->fp_ok = !m->p.slow_path_only && !m->buff_ovf && !m->asleep && !m->deferred_enable && !m->pending_stop &&
		   !m->psb_due_after_next && !m->psb_clear_countdown && !m->wr_pending &&
		   sid != RTIT_R_EVID_ALWAYS_ON && m->have_time;
	m->fp_ranges = fid <= RTIT_R_EVID_RANGE01 || stop_ranges;
	m->fp_pe = rtit_r_packet_en(m);
	m->fp_count = gate_cycles(m);
	m->fp_pcc = ctl(m, RTIT_R_CTL_CYCLE_ACC) && gate_pcc(m);
	m->fp_mtc = ctl(m, RTIT_R_CTL_MTC_EN) && gate_sts_mtc(m);
	m->fp_mtc_shift = mtc_shift(m);
	m->fp_cmprs = ctl(m, RTIT_R_CTL_CMPRS_RET);
}

/* App. B 4.1: a HLT enters C1, an MWAIT the C-state it asked for (the
 * record's vector); the cycle counter stops and MTCs cease until the wake,
 * C4 and deeper drain the buffer first (D41). */
static void halt_entry(struct rtit_r_model *m, unsigned cstate)
{
	if (cstate >= 4)
		rtit_r_model_drain(m);
	m->asleep = m->halted = true;
}

/* The record after a HLT or MWAIT that is not a sleep of its own wakes it:
 * the time asleep does not count, then STS (App. B 4.1.1-4.1.4, 4.2.13). */
static void halt_wake(struct rtit_r_model *m, const struct rtit_sim_rec *r)
{
	/* An event's record has the time it came; an instruction's (after a
	 * masked interrupt woke an MWAIT) the time after it retired. */
	uint64_t tsc = r->kind == RTIT_SIM_INSN && m->have_time ? m->last_tsc : r->tsc;

	if (r->kind != RTIT_SIM_INSN)
		on_time(m, r);
	m->asleep = m->halted = false;
	m->mtc_bits = mtc_bits(m, tsc);
	if (ctl(m, RTIT_R_CTL_STS_EN) && gate_sts_mtc(m))
		emit_sts(m, tsc, "STS: wake from a HLT or MWAIT sleep state (App. B 4.1, 4.2.13)");
}

static void rec_slow(struct rtit_r_model *m, const struct rtit_sim_rec *r)
{
	m->cur = r;
	if (m->wr_pending && !(r->kind == RTIT_SIM_INSN && r->cls == RTIT_IC_WRMSR &&
			       r->ip == m->wr_ip)) {
		/* the WRMSR's record did not come: the write goes in now */
		struct rtit_sim_rec at = { .kind = RTIT_SIM_INSN, .ip = m->wr_ip, .len = m->wr_len };
		m->wr_pending = false;
		rtit_r_model_write_now(m, m->wr_msr, m->wr_value, &at);
	}
	if (m->halted && (r->kind == RTIT_SIM_INSN ||
			  (r->cls != RTIT_EV_SLEEP && r->cls != RTIT_EV_WAKE)))
		halt_wake(m, r);
	if (m->deferred_enable) {
		m->deferred_enable = false;
		if (!m->have_time) {
			m->last_tsc = r->tsc;
			m->last_cycles = r->cycles;
			m->have_time = true;
		}
		rtit_r_model_on_enable_change(m, m->deferred_trig0, m->deferred_pe0, r->ip);
	}
	if (r->kind == RTIT_SIM_INSN) {
		on_op(m, r);
		if (r->cls == RTIT_IC_HLT)
			halt_entry(m, 1);
		else if (r->cls == RTIT_IC_MWAIT && r->vector)
			halt_entry(m, r->vector);
	} else {
		switch (r->cls) {
		case RTIT_EV_EXCEPTION: case RTIT_EV_EXT_INTERRUPT: case RTIT_EV_NMI:
		case RTIT_EV_SMI: case RTIT_EV_VMEXIT: case RTIT_EV_RSM: case RTIT_EV_VMENTRY:
		case RTIT_EV_INIT: case RTIT_EV_SIPI:
			on_op(m, r);
			break;
		default:
			on_event_other(m, r);
			break;
		}
	}
	m->cur = NULL;
	fast_refresh(m);
}

/* A branch on the fast path with PacketEn=1 (Table 19 rows 1, 6, 11-13,
 * 17, 21, 22): the TNT, RET compression and TIPs. */
static void fast_branch(struct rtit_r_model *m, const struct rtit_sim_rec *r, bool taken)
{
	uint64_t nlip = r->ip + r->len;

	m->cur = r;
	switch (r->cls) {
	case RTIT_IC_COND:
		tnt_bit(m, taken, "full TNT: the sixth conditional branch (Table 19 rows 13/17)");
		break;
	case RTIT_IC_DIRECT_CALL:
		if (m->fp_cmprs)
			rtit_r_retc_on_call(&m->retc, nlip);
		break;
	case RTIT_IC_INDIRECT_CALL:
		if (m->fp_cmprs)
			rtit_r_retc_on_call(&m->retc, nlip);
		emit_ip(m, RTIT_R_TIP, r->next_ip, "TIP: near indirect branch or uncompressed RET (Table 19 rows 21-25)");
		break;
	case RTIT_IC_INDIRECT_JMP:
		emit_ip(m, RTIT_R_TIP, r->next_ip, "TIP: near indirect branch or uncompressed RET (Table 19 rows 21-25)");
		break;
	case RTIT_IC_RET:
		if (m->fp_cmprs && rtit_r_retc_on_ret(&m->retc, r->next_ip))
			tnt_bit(m, true, "full TNT: a compressed RET was the sixth bit (4.2.3.2)");
		else
			emit_ip(m, RTIT_R_TIP, r->next_ip, "TIP: near indirect branch or uncompressed RET (Table 19 rows 21-25)");
		break;
	default:
		break;
	}
	m->cur = NULL;
	/* A packet may have overflowed the buffer or made a PSB due. */
	if (m->buff_ovf || m->psb_due_after_next || m->psb_clear_countdown)
		fast_refresh(m);
}

/* What the fast path does with each instruction class. */
enum { FP_NONE, FP_COND, FP_JUMP, FP_WORK, FP_SLOW };
static const uint8_t fp_class[256] = {
	[RTIT_IC_OTHER] = FP_NONE, [RTIT_IC_RDMSR] = FP_NONE, [RTIT_IC_HLT] = FP_SLOW,
	[RTIT_IC_MWAIT] = FP_SLOW, [RTIT_IC_PTWRITE] = FP_NONE, [RTIT_IC_COND] = FP_COND,
	[RTIT_IC_DIRECT_JMP] = FP_JUMP, [RTIT_IC_DIRECT_CALL] = FP_WORK,
	[RTIT_IC_INDIRECT_JMP] = FP_WORK, [RTIT_IC_INDIRECT_CALL] = FP_WORK,
	[RTIT_IC_RET] = FP_WORK,
	[RTIT_IC_FAR_JMP] = FP_SLOW, [RTIT_IC_FAR_CALL] = FP_SLOW, [RTIT_IC_FAR_RET] = FP_SLOW,
	[RTIT_IC_IRET] = FP_SLOW, [RTIT_IC_INT] = FP_SLOW, [RTIT_IC_SYSCALL] = FP_SLOW,
	[RTIT_IC_SYSRET] = FP_SLOW, [RTIT_IC_SYSENTER] = FP_SLOW, [RTIT_IC_SYSEXIT] = FP_SLOW,
	[RTIT_IC_MOV_CR3] = FP_SLOW, [RTIT_IC_MOV_CR0] = FP_SLOW, [RTIT_IC_WRMSR] = FP_SLOW,
	[RTIT_IC_COUNT ... 255] = FP_SLOW,
};

/*
 * The fast path over recs[i..n): handles records while fp_ok holds and
 * each record meets its conditions (see fast_refresh); returns the index
 * of the first record it did not handle.  The cycle counter is not
 * advanced per record: the run stops before the cycle at which CNTP bit
 * 21 would set (a FUP.PCC) or the TSC at which the MTC bits change, and
 * CNTP takes the elapsed cycles once at the end.
 */
static inline __attribute__((always_inline)) size_t
fast_run_impl(struct rtit_r_model *m, const struct rtit_sim_rec *recs, size_t i, size_t n,
	      const bool ranges)
{
	uint64_t start = m->last_cycles, last = start, tsc = m->last_tsc;
	uint64_t cyc_limit = UINT64_MAX, tsc_limit = UINT64_MAX;
	const uint64_t cr3 = m->cr3;
	/* kind, cls, len, flags, cpl, mode, vector, pad0 are 8 bytes in a
	 * row: one load checks kind, CR0.PG and CPL. */
	const uint64_t key_mask = 0xffull | ((uint64_t)RTIT_SIM_F_CR0_PG << 24) | (0xffull << 32);
	const uint64_t key_want = RTIT_SIM_INSN | ((uint64_t)(m->cr0_pg ? RTIT_SIM_F_CR0_PG : 0) << 24) |
				  ((uint64_t)m->cpl << 32);
	_Static_assert(offsetof(struct rtit_sim_rec, cls) == offsetof(struct rtit_sim_rec, kind) + 1 &&
		       offsetof(struct rtit_sim_rec, flags) == offsetof(struct rtit_sim_rec, kind) + 3 &&
		       offsetof(struct rtit_sim_rec, cpl) == offsetof(struct rtit_sim_rec, kind) + 4 &&
		       offsetof(struct rtit_sim_rec, pad0) == offsetof(struct rtit_sim_rec, kind) + 7,
		       "record layout");

	if (!m->fp_ok || m->ibuf.cap)
		return i;
	if (m->fp_pcc && m->fp_count)
		cyc_limit = start + (RTIT_R_CNTP_MSB - (m->cntp.v & (RTIT_R_CNTP_MSB - 1)));
	if (m->fp_pcc && rtit_r_cntp_msb(&m->cntp))
		return i;
	if (m->fp_mtc)	/* the next value of the watched TSC bits */
		tsc_limit = ((tsc >> m->fp_mtc_shift) + 1) << m->fp_mtc_shift;
	for (; i < n; i++) {
		const struct rtit_sim_rec *r = &recs[i];
		uint64_t key;
		unsigned what;

		memcpy(&key, &r->kind, sizeof(key));
		if ((key & key_mask) != key_want || r->cr3 != cr3)
			break;
		what = fp_class[(uint8_t)(key >> 8)];
		if (what == FP_SLOW || r->cycles >= cyc_limit)
			break;
		if (r->tsc >= tsc_limit) {
			/* The MTC goes out before the instruction's packets,
			 * with CNTP up to date for its CCP (on_time's order). */
			if (ranges || m->mtc_first)
				break;
			if (m->fp_count)
				rtit_r_cntp_on_cycles(&m->cntp, r->cycles - start);
			start = last = r->cycles;
			tsc = r->tsc;
			m->cur = r;
			mtc_on_tsc(m, r->tsc);
			m->cur = NULL;
			if (m->buff_ovf || m->psb_due_after_next || m->psb_clear_countdown)
				fast_refresh(m);
			tsc_limit = ((tsc >> m->fp_mtc_shift) + 1) << m->fp_mtc_shift;
			if (!m->fp_ok || (m->fp_pcc && rtit_r_cntp_msb(&m->cntp))) {
				/* The instruction itself goes the slow way, its
				 * time already counted. */
				m->last_cycles = last;
				m->last_tsc = tsc;
				return i;
			}
			if (m->fp_pcc && m->fp_count)
				cyc_limit = start + (RTIT_R_CNTP_MSB - (m->cntp.v & (RTIT_R_CNTP_MSB - 1)));
		}
		if (ranges) {
			/* 3.3.5: a taken transfer or a step onto a base or
			 * limit IP may change FilterEn or stop tracing. */
			uint64_t next = (r->ip + r->len) & RTIT_R_LIP_MASK;
			if (what >= FP_JUMP || (what == FP_COND && (r->flags & RTIT_SIM_F_TAKEN)) ||
			    next == m->lip[0] || next == m->lip[1] || next == m->lip[2] ||
			    next == m->lip[3])
				break;
		}
		last = r->cycles;
		tsc = r->tsc;
		if (what == FP_NONE || what == FP_JUMP || !m->fp_pe)
			continue;
		/* A branch with work: bring CNTP up to date first (a CCP
		 * may read it). */
		if (m->fp_count)
			rtit_r_cntp_on_cycles(&m->cntp, last - start);
		start = last;
		fast_branch(m, r, r->flags & RTIT_SIM_F_TAKEN);
		if (!m->fp_ok) {
			i++;
			break;
		}
		if (m->fp_pcc && m->fp_count)
			cyc_limit = start + (RTIT_R_CNTP_MSB - (m->cntp.v & (RTIT_R_CNTP_MSB - 1)));
		if (m->fp_pcc && rtit_r_cntp_msb(&m->cntp)) {
			i++;
			break;
		}
	}
	if (m->fp_count)
		rtit_r_cntp_on_cycles(&m->cntp, last - start);
	m->last_cycles = last;
	m->last_tsc = tsc;
	return i;
}

/* The fast path, specialised for whether range triggers are programmed
 * (the common case has none: no per-record boundary checks). */
static size_t fast_run(struct rtit_r_model *m, const struct rtit_sim_rec *recs, size_t i, size_t n)
{
	return m->fp_ranges ? fast_run_impl(m, recs, i, n, true) :
			      fast_run_impl(m, recs, i, n, false);
}

void rtit_r_model_on_rec(struct rtit_r_model *m, const struct rtit_sim_rec *r)
{
	if (!fast_run(m, r, 0, 1))
		rec_slow(m, r);
	out_flush(m);
}

void rtit_r_model_on_batch(const struct rtit_sim_rec *recs, size_t n, void *opaque)
{
	struct rtit_r_model *m = opaque;

	for (size_t i = 0; i < n;) {
		i = fast_run(m, recs, i, n);
		if (i < n)
			rec_slow(m, &recs[i++]);
	}
	out_flush(m);
}

int rtit_r_model_finish(struct rtit_r_model *m)
{
	e8_release(m);
	rtit_r_model_drain(m);
	out_flush(m);
	return m->err;
}

/* After an MSR access: the fast path's cached view may be stale. */
void rtit_r_model_after_msr(struct rtit_r_model *m)
{
	fast_refresh(m);
	out_flush(m);
}

/* ------------------------------------------------ MSR side effects, init */

/* A write with no WRMSR record changed the enables (3.3.2, D13): PSB
 * when TriggerEn rises, then FUP.PGE (D69); FUP.PGD when PacketEn falls,
 * not when TriggerEn fell (4.2.8, D69).  A guest WRMSR's write is applied
 * by its record instead (wrmsr_retire, D76). */
void rtit_r_model_on_enable_change(struct rtit_r_model *m, bool trig0, bool pe0,
				   uint64_t nlip)
{
	bool trig1, pe1;

	/* Table 7: "always on/off" need no IP to evaluate. */
	if (ctl(m, RTIT_R_CTL_TRACE_EN) && rtit_r_context_en(m)) {
		unsigned id = (unsigned)(m->events & RTIT_R_EVENTS_FILTER_MASK);
		if (id == RTIT_R_EVID_ALWAYS_ON)
			m->filter_en = true;
		else if (id == RTIT_R_EVID_ALWAYS_OFF)
			m->filter_en = false;
	}
	trig1 = rtit_r_trigger_en(m);
	pe1 = rtit_r_packet_en(m);

	if (!trig0 && trig1) {
		emit_psb(m, false, "PSB: TriggerEn 0->1 by WRMSR RTIT_CTL (3.3.2)");
		m->mtc_first = true;
		m->mtc_bits = mtc_bits(m, m->last_tsc);
	}
	if (pe0 && !pe1 && (trig1 || m->p.pgd_on_trigger_clear))
		emit_ip(m, RTIT_R_FUP_PGD, nlip, "FUP.PGD: a WRMSR cleared PacketEn (3.3.2, 4.2.8)");
	if (!pe0 && pe1)
		emit_ip(m, RTIT_R_FUP_PGE, nlip, "FUP.PGE with the WRMSR's NLIP (3.3.2, 4.2.7)");
}

void rtit_r_model_pktcnt_written(struct rtit_r_model *m, bool may_psb)
{
	/* Pkt_Mask 3 watches bit 14, which the 14-bit field cannot hold. */
	if (m->pktcnt.mask == 3 || !(m->pktcnt.cnt & (1u << (11 + m->pktcnt.mask))))
		return;
	m->pktcnt.cnt = 0;
	if (may_psb && rtit_r_trigger_en(m) && !m->deferred_enable)
		emit_psb(m, true, "PSB: a write set the Pkt_Cnt bit Pkt_Mask selects (3.3.9)");
}

int rtit_r_model_init(struct rtit_r_model *m, const struct rtit_r_params *p,
		      const struct rtit_enc_sink *sink)
{
	if (!m || !p || !sink)
		return -RTIT_ERR_INVALID;
	if (p->psb_clear_delay > 4 || (p->buffer_bytes && !p->drain_den) ||
	    p->buffer_bytes > rtit_outq_size)
		return -RTIT_ERR_BAD_CONFIG;
	memset(m, 0, sizeof(*m));
	m->p = *p;
	m->sink = *sink;
	rtit_pkt_ctx_init(&m->ctx, RTIT_DIALECT_RTIT, true);
	/* Reset values, RTIT 3.3. */
	m->base = RTIT_R_BASE_RESET;
	m->limit = RTIT_R_LIMIT_RESET;
	m->pktcnt.cnt = (uint16_t)(RTIT_R_PKT_CNT_RESET & RTIT_R_PKT_CNT_MASK);
	m->pktcnt.mask = (uint8_t)(RTIT_R_PKT_CNT_RESET >> RTIT_R_PKT_MASK_SHIFT);
	rtit_r_tnt_init(&m->tnt);
	rtit_last_ip_init(&m->lastlip, RTIT_DIALECT_RTIT);
	rtit_r_retc_clear(&m->retc);
	m->ibuf.cap = p->buffer_bytes;
	m->ibuf.num = p->drain_num;
	m->ibuf.den = p->drain_den;
	m->cr0_pg = true;
	return 0;
}

void rtit_r_model_set_platform(struct rtit_r_model *m, uint8_t cpl, uint64_t cr3, bool cr0_pg)
{
	m->cpl = cpl;
	m->cr3 = cr3;
	m->cr0_pg = cr0_pg;
}
