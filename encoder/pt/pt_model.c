/*
 * pt_model.c - the Intel PT trace unit: records in, packet bytes out.
 *
 * The reference is SDM chapter 33: Table 33-55 (packets of each operation
 * with PacketEn=1 before and after), Table 33-56 (operations that change
 * PacketEn), 33.2.5/33.2.6 (filtering, enables), 33.3.6-33.3.8 (CYC, PSB+,
 * overflow), 33.4.2 (each packet's dependencies and generation scenarios)
 * and 33.2.7 (output).  The structure follows the RTIT model
 * (encoder/rtit/rtit_model.c): classify, time, enables before/after, the
 * packets in order, then PSB+ at a packet boundary.
 */
#include <string.h>

#include "rtit/pt_encoder.h"
#include "rtit/opcodes_pt.h"
#include "rtit/bits.h"
#include "pt_internal.h"

/* ---------------------------------------------------------------- enables */

static bool ctl(const struct rtit_pt_model *m, uint64_t bit) { return (m->ctl & bit) != 0; }

/* A published erratum switched on (rtit/pt_errata.h, D101-D104). */
static bool erratum(const struct rtit_pt_model *m, unsigned e)
{
	return (m->p.errata & RTIT_PT_ERRATUM(e)) != 0;
}

bool rtit_pt_trigger_en(const struct rtit_pt_model *m)
{
	/* 33.2.6.2: TraceEn, cleared by Stopped and Error. */
	return ctl(m, RTIT_PT_CTL_TRACE_EN) &&
	       !(m->status & (RTIT_PT_STATUS_STOPPED | RTIT_PT_STATUS_ERROR));
}

bool rtit_pt_context_en(const struct rtit_pt_model *m)
{
	/* 33.2.6.3, 33.2.5.1-2: CPL and CR3 (bits 63:5 compared, 4:0 ignored). */
	if (!ctl(m, RTIT_PT_CTL_OS) && m->cpl == 0)
		return false;
	if (!ctl(m, RTIT_PT_CTL_USER) && m->cpl > 0)
		return false;
	if (ctl(m, RTIT_PT_CTL_CR3_FILTER) && (m->cr3 & ~0x1full) != (m->cr3_match & ~0x1full))
		return false;
	/* 33.2.6.3 IS_IN_A_PRODUCTION_ENCLAVE, 33.2.9.5: an opt-out
	 * (non-debug) SGX enclave clears ContextEn; a debug one does not */
	if (m->encl_optout)
		return false;
	return true;
}

bool rtit_pt_packet_en(const struct rtit_pt_model *m)
{
	/* 33.2.6.1: PacketEn = TriggerEn && ContextEn && FilterEn && BranchEn. */
	return rtit_pt_trigger_en(m) && rtit_pt_context_en(m) && m->filter_en &&
	       ctl(m, RTIT_PT_CTL_BRANCH_EN);
}

static unsigned addr_cfg(const struct rtit_pt_model *m, unsigned n)
{
	return (unsigned)((m->ctl & RTIT_PT_CTL_ADDR_CFG_MASK(n)) >> RTIT_PT_CTL_ADDR_CFG_SHIFT(n));
}

static bool in_cfg_range(const struct rtit_pt_model *m, unsigned cfg, uint64_t ip, bool *any)
{
	bool hit = false;
	*any = false;
	for (unsigned n = 0; n < m->p.caps.num_ranges && n < RTIT_PT_MAX_RANGES; n++) {
		if (addr_cfg(m, n) != cfg)
			continue;
		*any = true;
		if (rtit_pt_in_range(m->addr_a[n], m->addr_b[n], ip))
			hit = true;
	}
	return hit;
}

/* 33.2.5.3: FilterEn at @ip: 1 with no ADDRn_CFG=1 range, else whether
 * @ip is inside one of them.  A TraceStop range overlapping wins (the
 * caller forces FilterEn=0 on a stop). */
static bool filter_at(const struct rtit_pt_model *m, uint64_t ip)
{
	bool any, hit = in_cfg_range(m, RTIT_PT_ADDR_FILTER, ip, &any);
	return !any || hit;
}

static bool stop_at(const struct rtit_pt_model *m, uint64_t ip)
{
	bool any;
	return in_cfg_range(m, RTIT_PT_ADDR_STOP, ip, &any);
}

/* ------------------------------------------------------------------ output */

void rtit_pt_out_flush(struct rtit_pt_model *m)
{
	if (m->olen && !m->err && m->sink.write)
		m->err = m->sink.write(m->sink.opaque, m->obuf, m->olen);
	m->olen = 0;
}

static void stream_write(struct rtit_pt_model *m, const uint8_t *b, size_t n)
{
	if (m->olen + n > sizeof(m->obuf))
		rtit_pt_out_flush(m);
	if (n > sizeof(m->obuf)) {
		if (!m->err && m->sink.write)
			m->err = m->sink.write(m->sink.opaque, b, n);
	} else {
		memcpy(m->obuf + m->olen, b, n);
		m->olen += n;
	}
	m->stats.bytes += n;
}

static void mem_write(struct rtit_pt_model *m, uint64_t phys, const uint8_t *b, size_t n)
{
	if (!m->err && m->sink.write_mem && n)
		m->err = m->sink.write_mem(m->sink.opaque, phys, b, n);
}

/* 33.3.10: an operational error sets Error, which clears TriggerEn; the
 * bytes still buffered are lost. */
static void op_error(struct rtit_pt_model *m)
{
	m->status |= RTIT_PT_STATUS_ERROR;
	m->stats.op_errors++;
	m->out_ready = false;
}

static uint64_t maxphy_mask(const struct rtit_pt_model *m)
{
	return rtit_mask(m->p.caps.maxphyaddr ? m->p.caps.maxphyaddr : 52);
}

/* Loads the current ToPA entry, following END entries (33.2.7.2).  A
 * malformed entry is an operational error ("ToPA Errors"). */
static bool topa_fetch(struct rtit_pt_model *m)
{
	for (int hops = 0; hops < 4; hops++) {
		uint8_t raw[RTIT_PT_TOPA_ENTRY_SIZE];
		uint64_t e, base;

		if (!m->read_mem ||
		    m->read_mem(m->mem_opaque, m->topa_table + (uint64_t)m->topa_index * RTIT_PT_TOPA_ENTRY_SIZE,
				raw, sizeof(raw)) < 0)
			goto bad;
		e = rtit_le_load(raw, sizeof(raw));
		base = e & ~rtit_mask(RTIT_PT_TOPA_BASE_SHIFT);
		if ((e & RTIT_PT_TOPA_RSVD_LOW) || (base & ~maxphy_mask(m)))
			goto bad;
		if (e & RTIT_PT_TOPA_END) {
			if (e & (RTIT_PT_TOPA_INT | RTIT_PT_TOPA_STOP))
				goto bad;
			m->topa_table = base;
			m->topa_index = 0;
			continue;
		}
		/* One-entry implementations: END must be the second entry. */
		if (!m->p.caps.topa_multi && m->topa_index > 0)
			goto bad;
		if (base & (rtit_pt_topa_region_size(e) - 1))
			goto bad;	/* regions are aligned to their size */
		m->topa_entry = e;
		return true;
	}
bad:
	op_error(m);
	return false;
}

/* TraceEn 0->1: load the output pointers (33.2.7) and check them. */
static void output_load(struct rtit_pt_model *m)
{
	uint64_t mask = (m->out_mask & RTIT_PT_MASK_FIELD) | RTIT_PT_MASK_LOWER;

	m->out_ready = false;
	m->out_off = m->out_mask >> RTIT_PT_MASK_OFFSET_SHIFT;
	if (ctl(m, RTIT_PT_CTL_FABRIC_EN)) {
		m->out_ready = true;
		return;
	}
	if (ctl(m, RTIT_PT_CTL_TOPA)) {
		/* Table 33-8: base bits 11:7 set is an operational error. */
		if (m->out_base & 0xf80ull) {
			op_error(m);
			return;
		}
		m->topa_table = m->out_base;
		m->topa_index = (uint32_t)((m->out_mask & RTIT_PT_MASK_FIELD) >> RTIT_PT_MASK_TABLE_SHIFT);
		if (!topa_fetch(m))
			return;
		if (m->out_off >= rtit_pt_topa_region_size(m->topa_entry)) {
			op_error(m);	/* Table 33-9: offset below the entry size */
			return;
		}
		m->out_ready = true;
		return;
	}
	/* Single range (33.2.7.1): contiguous mask, aligned base, offset
	 * within the mask. */
	if ((mask & (mask + 1)) || (m->out_base & mask) || m->out_off > mask) {
		op_error(m);
		return;
	}
	m->out_ready = true;
}

void rtit_pt_output_save(struct rtit_pt_model *m)
{
	if (ctl(m, RTIT_PT_CTL_FABRIC_EN))
		return;
	if (ctl(m, RTIT_PT_CTL_TOPA)) {
		m->out_base = m->topa_table;
		m->out_mask = ((uint64_t)m->topa_index << RTIT_PT_MASK_TABLE_SHIFT) | RTIT_PT_MASK_LOWER |
			      (m->out_off << RTIT_PT_MASK_OFFSET_SHIFT);
	} else {
		m->out_mask = (m->out_mask & RTIT_PT_MASK_FIELD) | RTIT_PT_MASK_LOWER |
			      (m->out_off << RTIT_PT_MASK_OFFSET_SHIFT);
	}
}

/* A ToPA region filled (33.2.7.2): STOP before INT; STOP sets Stopped and
 * leaves OutputOffset at size-1 (D26); INT signals a PMI. */
static bool topa_region_full(struct rtit_pt_model *m)
{
	uint64_t e = m->topa_entry;

	if (e & RTIT_PT_TOPA_STOP) {
		m->status |= RTIT_PT_STATUS_STOPPED;
		m->stats.topa_stops++;
		m->out_off = rtit_pt_topa_region_size(e) - 1;
		m->out_ready = false;
	}
	if (e & RTIT_PT_TOPA_INT) {
		m->stats.topa_pmis++;
		if (ctl(m, RTIT_PT_CTL_INJECT_PSB_PMI))
			m->status |= RTIT_PT_STATUS_PEND_TOPA_PMI;
	}
	if (e & RTIT_PT_TOPA_STOP)
		return false;
	m->topa_index++;
	m->out_off = 0;
	return topa_fetch(m);
}

/* Bytes reach the output: the trace stream gets those that land in
 * memory, the memory sink gets each write at its physical address. */
static void deliver(struct rtit_pt_model *m, const uint8_t *b, size_t n)
{
	if (ctl(m, RTIT_PT_CTL_FABRIC_EN)) {
		stream_write(m, b, n);
		return;
	}
	while (n) {
		uint64_t phys, room;
		size_t k;

		if (!m->out_ready) {
			/* ToPA stop or error: the rest is lost (33.2.7.2). */
			m->stats.lost_bytes += n;
			return;
		}
		if (ctl(m, RTIT_PT_CTL_TOPA)) {
			uint64_t size = rtit_pt_topa_region_size(m->topa_entry);
			phys = (m->topa_entry & ~rtit_mask(RTIT_PT_TOPA_BASE_SHIFT)) + m->out_off;
			room = size - m->out_off;
		} else {
			uint64_t mask = (m->out_mask & RTIT_PT_MASK_FIELD) | RTIT_PT_MASK_LOWER;
			phys = (m->out_base & ~mask) + (m->out_off & mask);
			room = mask + 1 - (m->out_off & mask);
		}
		k = room < n ? (size_t)room : n;
		mem_write(m, phys, b, k);
		stream_write(m, b, k);
		m->out_off += k;
		b += k;
		n -= k;
		if (ctl(m, RTIT_PT_CTL_TOPA)) {
			if (m->out_off == rtit_pt_topa_region_size(m->topa_entry))
				(void)topa_region_full(m);
		} else if (m->out_off > ((m->out_mask & RTIT_PT_MASK_FIELD) | RTIT_PT_MASK_LOWER)) {
			m->out_off = 0;	/* the single range is circular */
		}
	}
}

/* @k bytes leave the internal buffer. */
static void drain_bytes(struct rtit_pt_model *m, uint64_t k)
{
	struct rtit_outq *q = &m->outq;

	if (k > q->in - q->out)
		k = q->in - q->out;
	while (k) {
		size_t at = (size_t)(q->out % rtit_outq_size);
		size_t n = rtit_outq_size - at;
		if (n > k)
			n = (size_t)k;
		deliver(m, q->ring + at, n);
		q->out += n;
		k -= n;
	}
}

/* Bytes enter the internal buffer. */
static void accept(struct rtit_pt_model *m, const uint8_t *b, size_t n)
{
	struct rtit_outq *q = &m->outq;

	if (!m->ibuf.cap) {
		deliver(m, b, n);
		return;
	}
	for (size_t i = 0; i < n; i++)
		q->ring[(q->in + i) % rtit_outq_size] = b[i];
	q->in += n;
}

void rtit_pt_model_drain(struct rtit_pt_model *m)
{
	(void)rtit_ibuf_on_drain(&m->ibuf);
	drain_bytes(m, UINT64_MAX);
}

/* ---------------------------------------------------------------- packets */

enum {
	F_ELIG = 1,	/* CYC-eligible (33.3.6) */
	F_TIMING = 2	/* a timing packet: does not flush the TNT (D21) */
};

static void note(struct rtit_pt_model *m, const struct rtit_packet *p, const uint8_t *b,
		 size_t n, uint64_t ip, const char *why)
{
	rtit_enc_notify(&m->sink, p, b, n, m->stats.bytes, m->cur, ip, why, false);
}

/* A packet the rules called for that is not generated in an overflow
 * (33.3.8): counted, and named to an observer as dropped. */
static void drop(struct rtit_pt_model *m, const struct rtit_packet *p, uint64_t ip,
		 const char *why)
{
	m->stats.dropped_packets++;
	rtit_enc_notify(&m->sink, p, NULL, 0, m->stats.bytes, m->cur, ip, why, true);
}

/* 33.3.8: the buffer could not take a packet.  Generation stops; the TNT
 * bits and the RET stack are lost (no compression against lost packets). */
static void on_overflow(struct rtit_pt_model *m, const struct rtit_packet *p, uint64_t ip)
{
	m->ovf = true;
	m->stats.overflows++;
	drop(m, p, ip, "the internal buffer is full: overflow, the packet is lost (33.3.8)");
	rtit_pt_tnt_clear(&m->tnt);
	m->ndtip = 0;	/* the TIPs deferred behind it too */
	rtit_pt_calls_clear(&m->calls);
}

static uint64_t psb_period(const struct rtit_pt_model *m)
{
	if (!m->p.caps.psb_cyc)
		return m->p.psb_period_nocfg;
	return rtit_pt_psb_period((unsigned)((m->ctl & RTIT_PT_CTL_PSB_FREQ_MASK) >> RTIT_PT_CTL_PSB_FREQ_SHIFT));
}

void rtit_pt_model_observe(const struct rtit_pt_model *m, struct rtit_enc_state *st)
{
	memset(st, 0, sizeof(*st));
	st->last_ip = m->lastip.ip;
	st->last_ip_valid = m->lastip.valid && !m->ip_full_next;
	st->packet_en = rtit_pt_packet_en(m);
	st->overflow = m->ovf;
	st->tnt_n = m->tnt.n;
	st->tnt_bits = m->tnt.bits;
	st->tnt_cap = m->tnt.cap;
	st->ret_compression = !ctl(m, RTIT_PT_CTL_DIS_RETC);
	st->stack_depth = m->calls.depth;
	st->stack_top = m->calls.depth ?
		m->calls.ip[(m->calls.top + rtit_pt_stack_depth - 1) % rtit_pt_stack_depth] : 0;
	st->psb_count = m->psb_bytes;
	st->psb_period = psb_period(m);
	st->buf_fill = m->ibuf.fill;
	st->buf_cap = m->ibuf.cap;
	st->cycles = m->cyc_valid ? m->last_cycles - m->cyc_base : 0;
	st->tsc = m->last_tsc;
}

static void bdm70_release(struct rtit_pt_model *m, bool erratum_fup);

static void bdm64_release(struct rtit_pt_model *m, uint64_t wrong);
static void skl168_release(struct rtit_pt_model *m, bool psb);

/* Encodes and buffers one packet.  @ip is the full IP of an IP packet. */
static bool put(struct rtit_pt_model *m, struct rtit_packet *p, uint64_t ip, const char *why)
{
	uint8_t b[32];
	int n;

	if (m->bdm64_hold)	/* not the abort after it: the TIP as it was */
		bdm64_release(m, 0);
	if (m->bdm70_hold)	/* not a TIP.PGE after it: the PSB+ ends as usual */
		bdm70_release(m, false);
	if (m->skl168_arm && m->skl168_n < 2 &&
	    (p->type == RTIT_PT_CYC || p->type == RTIT_PT_MTC)) {
		m->skl168_pkt[m->skl168_n++] = *p;	/* SKL168 (D126) */
		return true;
	}
	if (m->skl168_n)	/* a PSB drops them, any other packet sends them */
		skl168_release(m, p->type == RTIT_PT_PSB);

	if (m->ovf || (!m->out_ready && !ctl(m, RTIT_PT_CTL_FABRIC_EN))) {
		drop(m, p, ip, why);
		return false;
	}
	n = rtit_pkt_encode(&m->ctx, p, b, sizeof(b));
	if (n < 0) {
		if (!m->err)
			m->err = n;
		return false;
	}
	if (m->skd007_cut && p->type == RTIT_PT_CYC && n > 1) {
		n = 1;	/* the OVF takes the place of the rest (D109) */
		why = "CYC's first byte only, the OVF instead of the rest: erratum SKD007 (D109)";
	}
	if (!rtit_ibuf_fits(&m->ibuf, (uint64_t)n)) {
		on_overflow(m, p, ip);
		return false;
	}
	rtit_pkt_ctx_on_packet(&m->ctx, p);
	rtit_ibuf_on_packet(&m->ibuf, (uint64_t)n);
	p->size = (uint8_t)n;
	note(m, p, b, (size_t)n, ip, why);
	m->stats.packets++;
	/* 33.4.2.2: LastIP takes every IP packet with IPBytes != 000b. */
	if (rtit_pkt_has_ip(p->type) && p->u.ip.ipc != rtit_pt_ipc_suppressed) {
		rtit_last_ip_on_ip(&m->lastip, ip);
		m->ip_full_next = false;
	}
	/* 33.4.2.17: PacketByteCnt counts the bytes; PSB+ when the PSBFreq
	 * period is crossed (at the next packet boundary, D20). */
	m->pkt_bytes += (uint64_t)n;
	m->psb_bytes += (uint64_t)n;
	m->out_pos += (uint64_t)n;
	if (m->psb_bytes >= psb_period(m))
		m->psb_due = true;
	accept(m, b, (size_t)n);
	return true;
}

/* Erratum SKL168 (D126): the CYC and MTC held by put() go out as they
 * were, or, right before a PSB (@psb), are lost: named to an observer as
 * not generated, counted nowhere (they never reach PacketByteCnt). */
static void skl168_release(struct rtit_pt_model *m, bool psb)
{
	unsigned n = m->skl168_n;

	m->skl168_n = 0;
	for (unsigned i = 0; i < n; i++) {
		struct rtit_packet *p = &m->skl168_pkt[i];
		if (!psb) {
			put(m, p, 0, p->type == RTIT_PT_MTC ? "MTC: ART bit MTCFreq toggled (33.4.2.12)" :
				"CYC: cycles since the last CYC, before an eligible packet (33.3.6)");
			continue;
		}
		rtit_enc_notify(&m->sink, p, NULL, 0, m->stats.bytes, m->cur, 0,
				p->type == RTIT_PT_MTC ?
				"MTC lost with its CYC right before a PSB: erratum SKL168 (D126)" :
				"CYC lost right before a PSB: erratum SKL168 (D126)", true);
	}
}

/* The bytes the CYC and MTC put() held for SKL168 would take (D126). */
static uint64_t skl168_bytes(struct rtit_pt_model *m)
{
	uint64_t t = 0;
	uint8_t b[32];

	for (unsigned i = 0; i < m->skl168_n; i++) {
		int n = rtit_pkt_encode(&m->ctx, &m->skl168_pkt[i], b, sizeof(b));
		t += n > 0 ? (uint64_t)n : 0;
	}
	return t;
}

static uint64_t now_cycles(const struct rtit_pt_model *m) { return m->last_cycles; }

/* 33.3.6: a CYC before an eligible packet once the cycles since the last
 * CYC reach the threshold; at most one per core clock (33.4.2.14), so a
 * count of 0 sends none. */
/* Table 33-13: the CYCThresh field's threshold. */
static uint64_t cyc_threshold(const struct rtit_pt_model *m)
{
	return rtit_pt_cyc_threshold((unsigned)((m->ctl & RTIT_PT_CTL_CYC_THRESH_MASK) >>
						 RTIT_PT_CTL_CYC_THRESH_SHIFT));
}

static void cyc_due(struct rtit_pt_model *m)
{
	uint64_t cnt, thr;
	struct rtit_packet p = { .type = RTIT_PT_CYC };

	if (!ctl(m, RTIT_PT_CTL_CYC_EN) || m->ovf)
		return;
	cnt = now_cycles(m) - m->cyc_base;
	thr = cyc_threshold(m);
	if (!cnt || cnt < thr)
		return;
	p.u.cyc.value = cnt;
	if (put(m, &p, 0, "CYC: cycles since the last CYC, before an eligible packet (33.3.6)"))
		m->cyc_base = now_cycles(m);
}

/* 33.3.6: "Additional CYC packets may be sent stand-alone ... before the
 * internal hardware counter wraps" (Example 33-1: CYC(4095) with no
 * packet).  With cyc_standalone = N, a CYC(N) whenever the count reaches
 * N + CYCThresh: what is left stays at or above the threshold, so the
 * next CYC-eligible packet still has its own CYC, and a decoder never
 * takes a stand-alone CYC for a packet's.  Not while a TNT is open: its
 * CYC, already sent, must stay the last before it (33.3.6.2; D49). */
static void cyc_standalone(struct rtit_pt_model *m)
{
	uint64_t n = m->p.cyc_standalone, thr;
	struct rtit_packet p = { .type = RTIT_PT_CYC };

	if (!n || !ctl(m, RTIT_PT_CTL_CYC_EN) || m->ovf || !rtit_pt_trigger_en(m) ||
	    !rtit_pt_tnt_empty(&m->tnt))
		return;
	thr = cyc_threshold(m);
	/* the counter restarted after the time last read (an enable or an
	 * OVF at a WRMSR handed over before its record): none is due yet,
	 * and the difference must not wrap (D207) */
	while (now_cycles(m) >= m->cyc_base && now_cycles(m) - m->cyc_base >= n + thr) {
		p.u.cyc.value = n;
		if (!put(m, &p, 0, "CYC: stand-alone, before the cycle counter wraps (33.3.6, cyc_standalone)"))
			return;
		m->cyc_base += n;
	}
}

/* The IP packet of type @t for @ip, with the IPBytes the hardware
 * chooses (Table 33-18). */
static void ip_packet(const struct rtit_pt_model *m, struct rtit_packet *p, enum rtit_pkt_type t,
		      uint64_t ip)
{
	memset(p, 0, sizeof(*p));
	p->type = t;
	if (m->ip_full_next) {
		/* After an OVF: an encoding that needs no LastIP (011b or
		 * 110b), right whether the decoder keeps the pre-overflow
		 * LastIP (Table 33-35, D25) or resets it (libipt). */
		struct rtit_last_ip none = m->lastip;
		none.ip = ~ip;
		rtit_last_ip_choose(&none, ip, &p->u.ip);
	} else {
		rtit_last_ip_choose(&m->lastip, ip, &p->u.ip);
	}
}

/* The TIPs deferred behind a TNT follow it, in order (33.4.2.3). */
static void flush_deferred(struct rtit_pt_model *m)
{
	struct rtit_packet p;

	for (unsigned i = 0; i < m->ndtip && !m->ovf; i++) {
		ip_packet(m, &p, RTIT_PT_TIP, m->dtip[i]);
		put(m, &p, m->dtip[i], "TIP(BLIP): deferred behind the TNT (33.4.2.3, deferred_tips)");
	}
	m->ndtip = 0;
}

/* A partial or full TNT goes out before any non-timing packet (33.4.2.1,
 * D21),
 * and the TIPs deferred behind it after it. */
static void flush_tnt(struct rtit_pt_model *m)
{
	struct rtit_packet p = { 0 };

	if (m->ovf || !rtit_pt_tnt_take(&m->tnt, &p))
		return;
	put(m, &p, 0, "TNT forced out by the next non-timing packet (33.4.2.1, D21)");
	flush_deferred(m);
}

static bool send(struct rtit_pt_model *m, struct rtit_packet *p, uint64_t ip, const char *why,
		 unsigned flags)
{
	if (m->ovf) {
		drop(m, p, ip, why);
		return false;
	}
	if (!(flags & F_TIMING))
		flush_tnt(m);
	if (flags & F_ELIG)
		cyc_due(m);
	return put(m, p, ip, why);
}

/* A conditional branch or compressed RET (33.4.2.1): a bit, a TNT when
 * the buffer fills.  The CYC of a TNT is that of its first branch
 * (33.3.6.2), so it goes out when the first bit enters. */
static void tnt_bit(struct rtit_pt_model *m, bool taken)
{
	struct rtit_packet p = { 0 };

	if (m->ovf || ctl(m, RTIT_PT_CTL_DIS_TNT))
		return;		/* 33.3.9: DisTNT omits the bits */
	if (rtit_pt_tnt_empty(&m->tnt))
		cyc_due(m);
	if (rtit_pt_tnt_on_branch(&m->tnt, taken)) {
		rtit_pt_tnt_take(&m->tnt, &p);
		put(m, &p, 0, "TNT: the buffer is full (Table 33-55 cases 2/7)");
		flush_deferred(m);
	}
}

static void emit_ip(struct rtit_pt_model *m, enum rtit_pkt_type t, uint64_t ip, const char *why)
{
	struct rtit_packet p;

	/* the TNT and the TIPs deferred behind it go out first (send() would
	 * put them before this packet): its IP is compressed against the
	 * last of them, the last IP sent (33.4.2.2, Table 33-18; issue 16,
	 * D96) */
	flush_tnt(m);
	ip_packet(m, &p, t, ip);
	send(m, &p, ip, why, t == RTIT_PT_FUP ? 0 : F_ELIG);
}

bool rtit_pt_send_plain(struct rtit_pt_model *m, struct rtit_packet *p, const char *why)
{
	return send(m, p, 0, why, 0);
}

void rtit_pt_send_fup(struct rtit_pt_model *m, uint64_t ip, const char *why)
{
	emit_ip(m, RTIT_PT_FUP, ip, why);
}

/* The TIP of a near indirect JMP or CALL (Table 33-55 case 4), deferred
 * while a partial TNT accumulates when deferred_tips allows (33.4.2.3;
 * not with CYCEn, whose CYC belongs right before its packet: D47). */
static void emit_tip_indirect(struct rtit_pt_model *m, uint64_t ip)
{
	if (m->p.deferred_tips && !ctl(m, RTIT_PT_CTL_CYC_EN) && !m->ovf &&
	    !rtit_pt_tnt_empty(&m->tnt)) {
		if (m->ndtip < m->p.deferred_tips) {
			m->dtip[m->ndtip++] = ip;
			return;
		}
		flush_tnt(m);	/* as many as it holds: out they go */
	}
	if (erratum(m, RTIT_PT_BDM64) && m->intx && !m->ovf) {
		/* in a transaction: the next record says whether it aborts
		 * right after the branch (D110) */
		flush_tnt(m);
		m->bdm64_hold = true;
		m->bdm64_ip = ip;
		return;
	}
	emit_ip(m, RTIT_PT_TIP, ip, "TIP(BLIP): near indirect JMP or CALL (Table 33-55 case 4)");
}

/* Erratum BDM64 (D110): the TIP held by emit_tip_indirect goes out, with
 * its target, or with @wrong (the abort's fallback IP) when the transaction
 * aborted at that target right after the branch. */
static void bdm64_release(struct rtit_pt_model *m, uint64_t wrong)
{
	m->bdm64_hold = false;
	if (wrong)
		emit_ip(m, RTIT_PT_TIP, wrong, "TIP(the abort's target, not the branch's): a TSX "
			"abort right after a near indirect JMP or CALL, erratum BDM64 (D110)");
	else
		emit_ip(m, RTIT_PT_TIP, m->bdm64_ip, "TIP(BLIP): near indirect JMP or CALL (Table 33-55 case 4)");
}

/* TIP.PGD with the IP suppressed (IPBytes 000b, 33.4.2.5). */
static void emit_pgd_none(struct rtit_pt_model *m, const char *why)
{
	struct rtit_packet p = { .type = RTIT_PT_TIP_PGD };
	send(m, &p, 0, why, F_ELIG);
}

/* Table 33-26: CS.L&LMA (64-bit), CS.D (32-bit), neither (16-bit); the IF
 * bit is RFLAGS.IF with EventEn, else 0 (docs/decisions.md D45). */
static uint8_t mode_exec_bits(const struct rtit_pt_model *m)
{
	uint8_t bits = m->mode == RTIT_SIM_MODE_64 ? rtit_pt_mode_exec_csl :
		       m->mode == RTIT_SIM_MODE_32 ? rtit_pt_mode_exec_csd : 0;

	if (m->ifl && ctl(m, RTIT_PT_CTL_EVENT_EN))
		bits |= rtit_pt_mode_exec_if;
	return bits;
}

/* MODE.Exec when its bits changed since the last one the decoder saw (or
 * always); whether it went out. */
static bool emit_mode(struct rtit_pt_model *m, bool always, const char *why)
{
	struct rtit_packet p = { .type = RTIT_PT_MODE_EXEC };
	uint8_t bits = mode_exec_bits(m);

	if (!always && m->mode_known && m->mode_bits == bits)
		return false;
	p.u.mode.bits = bits;
	if (!send(m, &p, 0, why, F_ELIG))
		return false;
	m->mode_bits = bits;
	m->mode_known = true;
	return true;
}

/* Table 33-24: CR3[51:5] and NR.  33.4.2.7: "PIPs generated by VM entries
 * set the NR bit.  PIPs generated in VMX non-root operation set the NR bit
 * if the 'conceal VMX from PT' VM-execution control is 0" (@vmentry). */
static void emit_pip_nr(struct rtit_pt_model *m, bool vmentry, const char *why)
{
	struct rtit_packet p = { .type = RTIT_PT_PIP };
	p.u.pip.cr3 = m->cr3 & rtit_mask(52) & ~0x1full;
	p.u.pip.nr = vmentry || (m->nonroot && !m->p.vmx_conceal_nonroot);
	send(m, &p, 0, why, F_ELIG);
}

static void emit_pip(struct rtit_pt_model *m, const char *why)
{
	emit_pip_nr(m, false, why);
}

static void emit_vmcs(struct rtit_pt_model *m, const char *why)
{
	struct rtit_packet p = { .type = RTIT_PT_VMCS };
	p.u.vmcs = m->p.vmcs;
	if (send(m, &p, 0, why, F_ELIG))
		m->vmcs_sent = true;
}

/* MODE.TSX (Table 33-27) with @bits (InTX, TXAbort).  Its dependencies:
 * TriggerEn && ContextEn (Table 33-27) and BranchEn (Table 33-6, 33.3.7);
 * not FilterEn (33.2.9.2). */
static bool emit_mode_tsx(struct rtit_pt_model *m, uint8_t bits, const char *why)
{
	struct rtit_packet p = { .type = RTIT_PT_MODE_TSX };

	if (!rtit_pt_trigger_en(m) || !rtit_pt_context_en(m) || !ctl(m, RTIT_PT_CTL_BRANCH_EN))
		return false;
	p.u.mode.bits = bits;
	return send(m, &p, 0, why, F_ELIG);
}

/* ------------------------------------------------------------------- time */

static uint64_t art_of(const struct rtit_pt_model *m, uint64_t tsc)
{
	/* TSC = ART * num / den (33.8.3.1, CPUID.15H). */
	return (uint64_t)((unsigned __int128)tsc * m->p.art_den / m->p.art_num);
}

static unsigned mtc_freq(const struct rtit_pt_model *m)
{
	return (unsigned)((m->ctl & RTIT_PT_CTL_MTC_FREQ_MASK) >> RTIT_PT_CTL_MTC_FREQ_SHIFT);
}

/* Erratum SKZ84 (D143): tracing in a VMX guest whose VMCS uses TSC
 * offsetting or TSC scaling, a TMA's CTC and FastCounter are corrupted
 * (every payload bit inverted, so Table 33-32's reserved bits are set)
 * and a bogus byte follows it (the packet codec writes it: tma.skz84). */
static bool skz84(const struct rtit_pt_model *m, struct rtit_packet *t)
{
	if (!m->nonroot || !(m->p.vmx_tsc_offsetting || m->p.vmx_tsc_scaling) ||
	    !erratum(m, RTIT_PT_SKZ84))
		return false;
	t->u.tma.ctc = (uint16_t)~t->u.tma.ctc;
	t->u.tma.fc = (uint16_t)(~t->u.tma.fc & rtit_mask(rtit_pt_tma_fc_bits));
	t->u.tma.skz84 = true;
	return true;
}

/* TSC, and TMA when MTCEn (33.4.2.11, 33.4.2.13: TMA right after TSC). */
static void emit_tsc_tma(struct rtit_pt_model *m, const char *why)
{
	struct rtit_packet p = { .type = RTIT_PT_TSC };
	uint64_t tsc = m->last_tsc, art = art_of(m, tsc);

	if (!ctl(m, RTIT_PT_CTL_TSC_EN))
		return;
	p.u.tsc = tsc & rtit_mask(rtit_pt_tsc_bits);
	if (!send(m, &p, 0, why, F_ELIG | F_TIMING))
		return;
	if (ctl(m, RTIT_PT_CTL_MTC_EN)) {
		struct rtit_packet t = { .type = RTIT_PT_TMA };
		/* CTC = ART[15:0] at the TSC; FastCounter = TSC-rate cycles
		 * since the last crystal edge (33.8.3.2). */
		unsigned __int128 frac = (unsigned __int128)tsc * m->p.art_den -
					 (unsigned __int128)art * m->p.art_num;
		t.u.tma.ctc = (uint16_t)art;
		t.u.tma.fc = (uint16_t)((uint64_t)(frac / m->p.art_den) & rtit_mask(rtit_pt_tma_fc_bits));
		if (skz84(m, &t))
			why = "TMA corrupted, a bogus byte after it: VMX TSC offsetting/scaling in"
			      " the guest, erratum SKZ84 (D143)";
		else
			why = "TMA: always right after a TSC when MTCEn=1 (33.4.2.13)";
		send(m, &t, 0, why, F_TIMING);
	}
}

static void emit_cbr(struct rtit_pt_model *m, const char *why)
{
	struct rtit_packet p = { .type = RTIT_PT_CBR };
	p.u.cbr = m->p.cbr;
	send(m, &p, 0, why, F_TIMING);
}

/* Cycles and TSC up to record @r: the buffer drains, and an MTC when the
 * watched ART bits change (33.4.2.12; several edges in one step give one
 * MTC with the latest value, the rest counting as dropped). */
void rtit_pt_time_to(struct rtit_pt_model *m, const struct rtit_sim_rec *r)
{
	uint64_t dc, v;

	if (!m->have_time) {
		m->have_time = true;
		m->last_cycles = r->cycles;
		m->last_tsc = r->tsc;
		m->cyc_base = r->cycles;
		m->mtc_last = art_of(m, r->tsc) >> mtc_freq(m);
		return;
	}
	if (r->cycles < m->last_cycles)
		return;		/* the same record again (a WRMSR's callback) */
	dc = r->cycles - m->last_cycles;
	m->last_cycles = r->cycles;
	m->last_tsc = r->tsc;
	drain_bytes(m, rtit_ibuf_on_cycles(&m->ibuf, dc));
	cyc_standalone(m);
	v = art_of(m, r->tsc) >> mtc_freq(m);
	if (v > m->mtc_last && ctl(m, RTIT_PT_CTL_MTC_EN) && rtit_pt_trigger_en(m) && !m->asleep) {
		/* One MTC per toggle of ART bit MTCFreq (33.4.2.12); beyond
		 * 256 in one step only the last (a decoder cannot tell more
		 * than 256 drops apart anyway, 2.6.8). */
		uint64_t e = v - m->mtc_last > 256 ? v : m->mtc_last + 1;
		for (; e <= v; e++) {
			struct rtit_packet p = { .type = RTIT_PT_MTC };
			p.u.mtc.ctc = (uint8_t)e;
			/* SKL168 (D126): the last MTC and its CYC wait */
			m->skl168_arm = e == v && erratum(m, RTIT_PT_SKL168);
			send(m, &p, 0, "MTC: ART bit MTCFreq toggled (33.4.2.12)", F_ELIG | F_TIMING);
			m->skl168_arm = false;
			if (m->skl168_n == 1)	/* no CYC with it: not the erratum's */
				skl168_release(m, false);
		}
	}
	m->mtc_last = v;
}

/* ------------------------------------------------------------------- PSB+ */

/* PSBEND, and the MNT after it (mnt). */
static void psb_end(struct rtit_pt_model *m)
{
	struct rtit_packet p = { .type = RTIT_PT_PSBEND };

	send(m, &p, 0, "PSBEND (33.4.2.18)", 0);
	if (m->p.mnt_on) {
		struct rtit_packet mnt = { .type = RTIT_PT_MNT };
		mnt.u.mnt = m->p.mnt;
		send(m, &mnt, 0, "MNT: implementation-specific maintenance (33.4.2.19, mnt)", 0);
	}
}

/* 33.3.7, D20: PSB, TSC, TMA, CBR, PIP, VMCS, [MODE.TSX],
 * MODE.Exec and FUP when PacketEn (and @with_ip), PSBEND.  The order is
 * not fixed by the manual; this one is rtitsim's. */
static void psb_plus(struct rtit_pt_model *m, bool with_ip, uint64_t ip, const char *why)
{
	struct rtit_packet p = { .type = RTIT_PT_PSB };
	bool ctx = rtit_pt_context_en(m);

	m->psb_due = false;
	/* 33.4.2.20: PAD "to improve packet alignment" (pad_align, D46) */
	if (m->p.pad_align > 1 && !m->ovf) {
		struct rtit_packet pad = { .type = RTIT_PT_PAD };
		flush_tnt(m);
		while (m->out_pos & (m->p.pad_align - 1))
			if (!put(m, &pad, 0, "PAD: aligns the PSB (33.4.2.20, pad_align)"))
				break;
	}
	m->psb_bytes = 0;	/* the period counts from this PSB's first byte */
	if (!send(m, &p, 0, why, 0))
		return;
	m->psb_due = false;
	m->stats.psbs++;
	m->status &= ~RTIT_PT_STATUS_PEND_PSB;
	/* Nothing crosses a PSB: LastIP = 0, the RET stack empties. */
	rtit_last_ip_on_psb(&m->lastip);
	m->ip_full_next = false;	/* LastIP = 0 is known to every decoder */
	rtit_pt_calls_clear(&m->calls);
	emit_tsc_tma(m, "TSC in PSB+ (33.3.7)");
	emit_cbr(m, "CBR in PSB+ (33.3.7)");
	if (ctx && ctl(m, RTIT_PT_CTL_OS))
		emit_pip(m, "PIP in PSB+: ContextEn && OS (33.3.7)");
	if (m->p.vmcs && !(m->nonroot && m->p.vmx_conceal_nonroot))
		emit_vmcs(m, "VMCS in PSB+: in VMX operation (33.3.7; Table 33-52)");
	/* with InTX=0 only when psb_mode_tsx: a decoder assumes it (D43) */
	if ((m->p.psb_mode_tsx || m->intx) && ctx && ctl(m, RTIT_PT_CTL_BRANCH_EN))
		emit_mode_tsx(m, m->intx ? rtit_pt_mode_tsx_intx : 0,
			      "MODE.TSX in PSB+: ContextEn && BranchEn (33.3.7)");
	if (with_ip && rtit_pt_packet_en(m)) {
		emit_mode(m, true, "MODE.Exec in PSB+: PacketEn (33.3.7)");
		emit_ip(m, RTIT_PT_FUP, ip, "FUP(current IP) in PSB+: PacketEn (33.3.7)");
	} else if (erratum(m, RTIT_PT_BDM70) && ctx && rtit_pt_trigger_en(m) && !m->ovf &&
		   ctl(m, RTIT_PT_CTL_BRANCH_EN) && !ctl(m, RTIT_PT_CTL_EVENT_EN)) {
		/* PacketEn=0: whether a TIP.PGE comes next is known at the
		 * next packet (bdm70_release, D104).  Not when the buffer
		 * overflowed inside this PSB+: its PSBEND is lost, the OVF
		 * ends it (SDM 33.3.7), and nothing the overflow dropped
		 * may go out between the OVF's CYC and the OVF (D182) */
		m->bdm70_hold = true;
		m->bdm70_ip = ip;
		return;
	}
	psb_end(m);
}

/* Erratum BDM70 (D104): the PSB+ held open by psb_plus ends.  With
 * @erratum_fup (a TIP.PGE comes next) it has MODE.Exec and FUP(the IP at
 * the PSB) as if PacketEn were 1, and the IP packet after it is sent
 * without LastIP (as after the PSB, D104); else as usual, then the enable's
 * MODE.Exec (Table 33-56 cases 1/2) if it waited too. */
static void bdm70_release(struct rtit_pt_model *m, bool erratum_fup)
{
	m->bdm70_hold = false;
	if (erratum_fup) {
		emit_mode(m, true, "MODE.Exec in PSB+ with PacketEn=0 before a TIP.PGE: erratum BDM70 (D104)");
		emit_ip(m, RTIT_PT_FUP, m->bdm70_ip, "FUP in PSB+ with PacketEn=0 before a TIP.PGE: "
			"erratum BDM70 (D104)");
		m->ip_full_next = true;
		m->bdm70_mode = false;
	}
	psb_end(m);
	if (m->bdm70_mode) {
		m->bdm70_mode = false;
		emit_mode(m, true, "MODE.Exec: TraceEn 0->1 (Table 33-56 cases 1/2)");
	}
}

/* -------------------------------------------------------- enable changes */

/* TriggerEn rose (TraceEn 0->1 by WRMSR, or RSM restoring it): Table
 * 33-56 cases 1, 2, 10.  @ip is the WRMSR's NLIP or the RSM's BLIP. */
static void on_trigger_rise(struct rtit_pt_model *m, uint64_t ip, const char *pge_why)
{
	bool ctx;

	output_load(m);
	if (!rtit_pt_trigger_en(m))
		return;
	m->ovf = false;
	m->cyc_base = now_cycles(m);	/* the cycle counter restarts */
	m->mtc_last = art_of(m, m->last_tsc) >> mtc_freq(m);
	m->mode_known = false;
	m->psb_bytes = 0;
	rtit_pt_tnt_init(&m->tnt, m->p.long_tnt);
	rtit_pt_calls_clear(&m->calls);
	ctx = rtit_pt_context_en(m);
	if (ctx)
		m->filter_en = filter_at(m, ip);
	/* 33.2.8.3: a full PSB+ when PacketByteCnt=0 (always without
	 * configurable PSB, Table 33-11; and when PendPSB is set with
	 * InjectPsbPmiOnEnable); else TSC, TMA, CBR. */
	if (!m->pkt_bytes || !m->p.caps.psb_cyc ||
	    ((m->status & RTIT_PT_STATUS_PEND_PSB) && ctl(m, RTIT_PT_CTL_INJECT_PSB_PMI))) {
		psb_plus(m, false, ip, "PSB+: TraceEn 0->1 with PacketByteCnt=0 (33.2.8.3)");
	} else {
		emit_tsc_tma(m, "TSC: TraceEn 0->1 (Table 33-56 cases 1/2)");
		emit_cbr(m, "CBR: TraceEn 0->1 (Table 33-56 cases 1/2)");
	}
	/* Table 33-56 cases 1/2 list MODE.Exec whether or not ContextEn
	 * (after the PSB+, which BDM70 may hold open: D104). */
	if (m->bdm70_hold)
		m->bdm70_mode = true;
	else if (ctl(m, RTIT_PT_CTL_BRANCH_EN))
		emit_mode(m, true, "MODE.Exec: TraceEn 0->1 (Table 33-56 cases 1/2)");
	if (rtit_pt_packet_en(m))
		emit_ip(m, RTIT_PT_TIP_PGE, ip, pge_why);
	/* 33.2.5.3: a WRMSR that sets TraceEn inside a TraceStop range. */
	if (ctx && stop_at(m, ip)) {
		struct rtit_packet s = { .type = RTIT_PT_TRACESTOP };
		bool pe = rtit_pt_packet_en(m);
		m->status |= RTIT_PT_STATUS_STOPPED;
		m->filter_en = false;
		if (pe && !m->p.pgd_stop_suppressed)
			emit_ip(m, RTIT_PT_TIP_PGD, ip, "TIP.PGD: enabled inside a TraceStop range (33.2.5.3, D21)");
		else if (pe)
			emit_pgd_none(m, "TIP.PGD(): enabled inside a TraceStop range (D21, switch pgd_stop_suppressed)");
		send(m, &s, 0, "TraceStop: enabled inside a TraceStop range (33.2.5.3)", 0);
	}
}

/* 33.3.8: the overflow resolves; OVF (with its CYC, D24), then
 * FUP(current IP) if PacketEn (D25) with BranchEn; else a TIP.PGE
 * comes when PacketEn rises.  LastIP is kept (Table 33-35, D25). */
static void resolve_overflow(struct rtit_pt_model *m, uint64_t ip, bool pe)
{
	struct rtit_packet p = { .type = RTIT_PT_OVF };

	m->ovf = false;
	rtit_pt_calls_clear(&m->calls);
	rtit_pt_tnt_clear(&m->tnt);
	m->ndtip = 0;	/* the TIPs deferred behind it too */
	m->skd007_cut = erratum(m, RTIT_PT_SKD007);	/* its CYC (D24) cut: D109 */
	bool sent = send(m, &p, 0, "OVF: the internal buffer overflow resolved (33.3.8)", F_ELIG);
	m->skd007_cut = false;
	if (!sent)
		return;
	m->cyc_base = now_cycles(m);	/* Table 33-35: counter reset at OVF */
	/* Only timing packets may come between the OVF and its FUP (33.3.8):
	 * a MODE.Exec lost in the overflow goes with the next TIP/TIP.PGE
	 * (rtitsim's reading). */
	m->mode_known = false;
	m->ip_full_next = true;
	if (pe && erratum(m, RTIT_PT_SKD010))
		return;	/* the FUP dropped: erratum SKD010 (D108) */
	if (pe)
		emit_ip(m, RTIT_PT_FUP, ip, "FUP after OVF: the first instruction traced again (33.3.8)");
	else if (erratum(m, RTIT_PT_APL12) && rtit_pt_trigger_en(m) && rtit_pt_context_en(m) &&
		 !m->filter_en && ctl(m, RTIT_PT_CTL_BRANCH_EN)) {
		/* outside the TIP.PGE/TIP.PGD pair because FilterEn=0: a FUP
		 * all the same; it leaves the next IP packet's compression
		 * as it was (still without LastIP, D102) */
		emit_ip(m, RTIT_PT_FUP, ip, "FUP after OVF with FilterEn=0: erratum APL12 (D102)");
		m->ip_full_next = true;
	}
}

/* TraceEn 1->0 (WRMSR, SMI): Table 33-56 cases 3/9: FUP, TIP.PGD(), then
 * every buffered byte is written (Table 33-6 bit 0). */
static void trace_disable(struct rtit_pt_model *m, bool pe0, bool fup, uint64_t fup_ip,
			  const char *why);

static void on_trace_disable(struct rtit_pt_model *m, bool pe0, uint64_t fup_ip, const char *why)
{
	trace_disable(m, pe0, true, fup_ip, why);
}

/* TraceEn cleared: [FUP(@fup_ip) when @fup], TIP.PGD() while PacketEn
 * was 1 (@pe0); the overflow it resolves, the state it resets. */
static void trace_disable(struct rtit_pt_model *m, bool pe0, bool fup, uint64_t fup_ip,
			  const char *why)
{
	/* 33.2.8.4: a PSB+ due but not inserted is remembered in PendPSB
	 * when InjectPsbPmiOnEnable=1 (D20). */
	if (m->psb_due && ctl(m, RTIT_PT_CTL_INJECT_PSB_PMI))
		m->status |= RTIT_PT_STATUS_PEND_PSB;
	m->psb_due = false;
	/* Disabled during an overflow: the flush makes room and the overflow
	 * resolves here, while PacketEn is still 1: OVF and its FUP (33.3.8),
	 * then the disable's own FUP and TIP.PGD() (D61; one FUP for both
	 * would read as an OVF followed by a TIP.PGD() with no FUP, a
	 * synchronous disable).  If the buffer overflows on the FUP/TIP.PGD
	 * themselves, the same once more: after the flush they fit. */
	if (m->ovf && pe0 && erratum(m, RTIT_PT_APL11)) {
		/* the overflow resolves just as TraceEn clears: OVF, then
		 * TIP.PGD() with no FUP (erratum APL11, D103) */
		rtit_pt_model_drain(m);
		resolve_overflow(m, fup_ip, false);
		emit_pgd_none(m, "TIP.PGD() right after OVF: TraceEn cleared during the overflow, "
			      "erratum APL11 (D103)");
		pe0 = false;
	}
	for (int pass = 0; pass < 2; pass++) {
		if (m->ovf) {
			rtit_pt_model_drain(m);
			resolve_overflow(m, fup_ip, pe0);
		}
		if (!pe0)
			break;
		if (fup)
			emit_ip(m, RTIT_PT_FUP, fup_ip, why);
		emit_pgd_none(m, fup ? "TIP.PGD(): TraceEn cleared (Table 33-56 cases 3/9)" : why);
		if (!m->ovf)
			break;
	}
	rtit_pt_tnt_clear(&m->tnt);
	m->ndtip = 0;	/* the TIPs deferred behind it too */
	rtit_pt_calls_clear(&m->calls);
	rtit_pt_model_drain(m);
	rtit_pt_output_save(m);
	m->ovf = false;
}

void rtit_pt_on_ctl_write(struct rtit_pt_model *m, uint64_t old, bool pe0,
			  uint64_t clip, uint64_t nlip)
{
	bool was = old & RTIT_PT_CTL_TRACE_EN, is = ctl(m, RTIT_PT_CTL_TRACE_EN);

	if (m->skl168_n)
		skl168_release(m, false);
	if (m->bdm70_hold)
		bdm70_release(m, false);
	if (m->bdm64_hold)
		bdm64_release(m, 0);

	if (was && !is)
		on_trace_disable(m, pe0, clip, "FUP(CLIP): WRMSR clears TraceEn (Table 33-56 case 3)");
	else if (!was && is)
		on_trigger_rise(m, nlip, "TIP.PGE(NLIP): WRMSR sets TraceEn (Table 33-56 case 2)");
}

/* ---------------------------------------------------------- one operation */

struct op {
	bool insn, cond, taken, call, zero_call, ret, indirect, direct, far;
	bool fup;		/* an event the binary does not show (2.4) */
	bool mov_cr3, hlt, mwait, ptwrite, smi, rsm, vmexit, vmentry;
	bool tsx_abort;		/* an RTM abort: MODE.TSX, FUP, TIP (case 21) */
	bool init, init_ap, sipi;	/* Table 33-55 cases 22-24 (D58) */
	bool enclu, aex;	/* SGX: ENCLU EENTER/ERESUME/EEXIT, AEX (case 17) */
	uint8_t cfe;		/* Event Trace type (Table 33-50, enum rtit_pt_cfe_type), 0 = none */
	uint8_t vector;
	uint64_t nlip, target, fup_ip;
};


static void classify(const struct rtit_sim_rec *r, struct op *o)
{
	memset(o, 0, sizeof(*o));
	o->taken = r->flags & RTIT_SIM_F_TAKEN;
	o->vector = r->vector;
	o->fup_ip = r->ip;
	if (r->kind == RTIT_SIM_INSN) {
		o->insn = true;
		o->nlip = r->ip + r->len;
		switch (r->cls) {
		case RTIT_IC_COND: o->cond = true; break;
		case RTIT_IC_DIRECT_JMP: o->taken = o->direct = true; break;
		case RTIT_IC_DIRECT_CALL:
			o->taken = o->direct = true;
			/* 33.4.2.2: zero-length CALLs are not pushed. */
			o->call = !(r->flags & RTIT_SIM_F_ZERO_LEN_CALL);
			break;
		case RTIT_IC_INDIRECT_JMP: o->taken = o->indirect = true; break;
		case RTIT_IC_INDIRECT_CALL: o->taken = o->indirect = o->call = true; break;
		case RTIT_IC_RET: o->taken = o->ret = true; break;
		case RTIT_IC_INT:
			/* Table 33-23: a software interrupt's FUP is its CLIP. */
			o->taken = o->far = o->fup = true;
			o->cfe = rtit_pt_cfe_intr;
			break;
		case RTIT_IC_IRET:
			o->taken = o->far = true;
			o->cfe = rtit_pt_cfe_iret;
			break;
		case RTIT_IC_UIRET:
			/* recorded as IRET (SDM Vol. 2B UIRET): TIP(BLIP); with
			 * EventEn CFE.UIRET, FUP(CLIP) (Table 33-50; D58) */
			o->taken = o->far = true;
			o->cfe = rtit_pt_cfe_uiret;
			break;
		case RTIT_IC_FAR_JMP: case RTIT_IC_FAR_CALL: case RTIT_IC_FAR_RET:
		case RTIT_IC_SYSCALL: case RTIT_IC_SYSRET: case RTIT_IC_SYSENTER: case RTIT_IC_SYSEXIT:
			o->taken = o->far = true;
			break;
		case RTIT_IC_ENCLU:
			/* Table 33-55 case 17, Table 33-23: FUP(CLIP), TIP */
			o->taken = o->far = o->fup = o->enclu = true;
			break;
		case RTIT_IC_OTHER:
			/* taken: a VMLAUNCH/VMRESUME that entered the guest, a
			 * far transfer (Table 33-53; D147) */
			if (o->taken) {
				o->vmentry = o->far = true;
				o->cfe = rtit_pt_cfe_vmentry;
			}
			break;
		case RTIT_IC_MOV_CR3: o->mov_cr3 = true; break;
		case RTIT_IC_HLT: o->hlt = true; break;
		case RTIT_IC_MWAIT: o->mwait = true; break;
		case RTIT_IC_PTWRITE: o->ptwrite = true; break;
		default: break;
		}
		o->target = o->taken ? r->next_ip : o->nlip;
		return;
	}
	/* Events: ip is NLIP (traps, interrupts) or CLIP (faults), as Table
	 * 33-23 wants for the FUP. */
	o->nlip = r->ip;
	o->target = r->next_ip;
	o->taken = true;
	switch (r->cls) {
	case RTIT_EV_EXCEPTION: case RTIT_EV_EXT_INTERRUPT:
		o->far = o->fup = true;
		o->cfe = rtit_pt_cfe_intr;
		break;
	case RTIT_EV_NMI:
		o->far = o->fup = true;
		o->cfe = rtit_pt_cfe_intr;
		o->vector = 2;
		break;
	case RTIT_EV_SMI: o->smi = true; o->cfe = rtit_pt_cfe_smi; break;
	case RTIT_EV_RSM: o->rsm = true; o->cfe = rtit_pt_cfe_rsm; break;
	case RTIT_EV_VMEXIT:
		/* Table 33-59 cases 13/14, Table 33-50: VMEXIT_INTR with the
		 * event's vector for an exit caused by an interrupt, an
		 * exception or NMI, or an SMI (vector 0: an SMI has none) */
		o->vmexit = o->far = o->fup = true;
		o->cfe = rtit_vmx_exit_is_intr(r->msr) ? rtit_pt_cfe_vmexit_intr : rtit_pt_cfe_vmexit;
		o->vector = rtit_vmx_exit_has_vector(r->msr) ? r->vector : 0;
		break;
	case RTIT_EV_VMENTRY: o->vmentry = o->far = true; o->cfe = rtit_pt_cfe_vmentry; break;
	case RTIT_EV_TSX_ABORT:
		/* 33.1: a far transfer; FUP(CLIP) (Table 33-23); no CFE type
		 * in Table 33-50 (D43) */
		o->tsx_abort = o->far = o->fup = true;
		break;
	case RTIT_EV_INIT:
		/* Table 33-23: FUP(NLIP).  BSP: a far transfer to the reset
		 * vector (case 22); AP (vector 1): waits for SIPI, no target
		 * (case 23) */
		o->init = o->fup = true;
		o->init_ap = r->vector != 0;
		o->far = !o->init_ap;
		o->taken = !o->init_ap;
		o->cfe = rtit_pt_cfe_init;
		break;
	case RTIT_EV_SIPI:
		/* case 24: TIP.PGE(SIPI.LIP); no FUP (Table 33-50) */
		o->sipi = o->far = true;
		o->cfe = rtit_pt_cfe_sipi;
		break;
	case RTIT_EV_UINTR:
		/* Table 33-55 case 26: FUP(NLIP), then the handler's TIP as
		 * for an interrupt (case 11; D58) */
		o->far = o->fup = true;
		o->cfe = rtit_pt_cfe_uintr;
		break;
	case RTIT_EV_AEX:
		/* Table 33-55 case 17: FUP(the enclave IP), TIP(the handler);
		 * Table 33-59 cases 17-19: CFE.INTR, but not for the AEX of an
		 * SMI or VM exit (next_ip = the AEP: their own CFE follows) */
		o->aex = o->far = o->fup = true;
		if (r->next_ip != r->value)
			o->cfe = rtit_pt_cfe_intr;
		break;
	default: o->taken = false; break;
	}
}

/* Event Trace (33.4.2.29-30, Table 33-59): EVD, CFE and, when the CFE's
 * IP bit is set, its stand-alone FUP.  IP=1 needs ContextEn before and no
 * FUP from BranchEn for this event. */
static void event_trace(struct rtit_pt_model *m, const struct op *o, const struct rtit_sim_rec *r,
			bool trig0, bool ctx0, bool ctx1, bool branch_fup)
{
	struct rtit_packet p = { .type = RTIT_PT_CFE };
	bool ip_bit;

	if (!o->cfe || !ctl(m, RTIT_PT_CTL_EVENT_EN) || !trig0 || (!ctx0 && !ctx1))
		return;
	/* Table 33-52: the conceal controls suppress CFE and EVD */
	if ((o->vmexit && m->p.vmx_conceal_exit) || (o->vmentry && m->p.vmx_conceal_entry))
		return;
	/* an AEX's CFE FUP is the AEP, never the branch FUP (the enclave IP):
	 * Table 33-59 case 19 */
	ip_bit = ctx0 && (o->aex || !branch_fup) && o->cfe != rtit_pt_cfe_rsm &&
		 o->cfe != rtit_pt_cfe_sipi;
	if (o->cfe == rtit_pt_cfe_intr && r->kind == RTIT_SIM_EVENT && r->cls == RTIT_EV_EXCEPTION &&
	    r->vector == 14 && ctx0) {
		struct rtit_packet e = { .type = RTIT_PT_EVD };
		e.u.evd.type = rtit_pt_evd_pfa;	/* CR2: the record's value */
		e.u.evd.payload = r->value;
		send(m, &e, 0, "EVD.PFA before the #PF CFE (Table 33-59 case 6)", 0);
	}
	if (o->vmexit) {
		/* Table 33-59 cases 13/14: EVD.VMXQ, EVD.VMXR, then the CFE
		 * (Table 33-53 lists VMXR first: D48) */
		struct rtit_packet e = { .type = RTIT_PT_EVD };
		e.u.evd.type = rtit_pt_evd_vmxq;
		e.u.evd.payload = r->value;
		send(m, &e, 0, "EVD.VMXQ: the exit qualification (Table 33-59 cases 13/14)", 0);
		e.u.evd.type = rtit_pt_evd_vmxr;
		e.u.evd.payload = r->msr;
		send(m, &e, 0, "EVD.VMXR: the exit reason (Table 33-59 cases 13/14)", 0);
	}
	p.u.cfe.type = o->cfe;
	/* Table 33-50: the event vector (INTR, VMEXIT_INTR), the SIPI vector
	 * (SIPI), the user-interrupt vector (UINTR) */
	p.u.cfe.vector = o->cfe == rtit_pt_cfe_intr || o->cfe == rtit_pt_cfe_vmexit_intr ||
			 o->cfe == rtit_pt_cfe_sipi || o->cfe == rtit_pt_cfe_uintr ? o->vector : 0;
	p.u.cfe.ip = ip_bit;
	send(m, &p, 0, "CFE: EventEn (Table 33-59)", 0);
	if (ip_bit && o->aex)
		emit_ip(m, RTIT_PT_FUP, r->value, "FUP(AEP LIP) after CFE.INTR(IP=1): AEX (Table 33-59 case 19)");
	else if (ip_bit)
		emit_ip(m, RTIT_PT_FUP, o->fup_ip, "FUP after CFE(IP=1) (Table 33-59)");
}

/* Power events (33.2.3, Table 33-57 cases 5/7). */
static uint8_t mwait_cstate(unsigned c)
{
	/* MWAIT encoding (SDM Vol. 2B Table 4-11): Cn is n-1; C0 is 0xF. */
	return (uint8_t)(c ? (c - 1) & 0xf : 0xf);
}

/* The entry to C-state cstate (Cn; sub-state sub): PWRE, then on the
 * first entry since C0 EXSTOP and, with ContextEn, FUP(ip).  mw is the
 * MWAIT record that requested it (NULL for HLT or a sleep): its MWAIT
 * packet comes first (Table 33-57 case 4; 33.4.2.23: TriggerEn &&
 * PwrEvtEn && ContextEn), hints EAX[7:0] and EXT ECX[1:0] (Table 33-42). */
static void power_entry(struct rtit_pt_model *m, unsigned cstate, unsigned sub, uint64_t ip,
			bool ctx, const struct rtit_sim_rec *mw)
{
	struct rtit_packet p = { .type = RTIT_PT_PWRE };

	if (!ctl(m, RTIT_PT_CTL_PWR_EVT_EN) || !rtit_pt_trigger_en(m))
		return;
	if (m->pwre_sent && cstate <= m->sleep_state)
		return;		/* already reported (HLT, then its SLEEP) */
	if (mw && ctx) {
		struct rtit_packet w = { .type = RTIT_PT_MWAIT };
		w.u.mwait.hints = (uint32_t)mw->value & rtit_pt_mwait_hints_mask;
		w.u.mwait.ext = mw->msr & rtit_pt_mwait_ext_mask;
		send(m, &w, 0, "MWAIT: an MWAIT entered a C-state (Table 33-57 case 4)", F_ELIG);
	}
	p.u.pwre.state = mwait_cstate(cstate);
	p.u.pwre.sub_state = (uint8_t)(sub & 0xf);
	send(m, &p, 0, mw ? "PWRE: entry to the C-state MWAIT asked for (Table 33-57 cases 3/4)" :
		       "PWRE: entry to a C-state (Table 33-57 case 5)", 0);
	if (m->pwre_sent) {
		m->sleep_state = (uint8_t)(cstate > m->sleep_state ? cstate : m->sleep_state);
		return;		/* a deeper state: PWRE only (33.4.2.24) */
	}
	m->pwre_sent = true;
	m->sleep_state = (uint8_t)cstate;
	p.type = RTIT_PT_EXSTOP;
	p.u.ip_bit = ctx;
	send(m, &p, 0, "EXSTOP: execution stopped (33.4.2.22)", F_ELIG);
	if (ctx)
		emit_ip(m, RTIT_PT_FUP, ip, "FUP(CLIP) after EXSTOP(IP=1) (Table 33-57 cases 4/5)");
}

static void on_ptwrite(struct rtit_pt_model *m, const struct rtit_sim_rec *r, bool ctx)
{
	struct rtit_packet p = { .type = RTIT_PT_PTW };
	bool fup = ctl(m, RTIT_PT_CTL_FUP_ON_PTW);
	bool eight;

	/* Table 33-58 (titles swapped, D27): TriggerEn && ContextEn &&
	 * FilterEn && PTWEn. */
	if (!ctl(m, RTIT_PT_CTL_PTW_EN) || !rtit_pt_trigger_en(m) || !ctx || !m->filter_en)
		return;
	/* Operand size: the record's vector (4 or 8); 0 = by the value. */
	eight = r->vector == 8 || (r->vector != 4 && (r->value >> 32));
	p.u.ptw.plsz = eight ? 1 : 0;
	p.u.ptw.ip = fup;
	p.u.ptw.payload = eight ? r->value : r->value & 0xffffffffull;
	send(m, &p, 0, "PTW: PTWRITE (Table 33-58 cases 2/3)", F_ELIG);
	if (fup)
		emit_ip(m, RTIT_PT_FUP, r->ip, "FUP(CLIP) after PTW(IP=1): FUPonPTW (Table 33-58)");
}

/* The TIP.PGD of a transfer that clears PacketEn (Table 33-56 cases 4,
 * 6-8; 33.4.2.5, 33.2.5.3, D21). */
static void leave(struct rtit_pt_model *m, const struct op *o, bool stop, bool ctx1)
{
	if (stop) {
		if (m->p.pgd_stop_suppressed)
			emit_pgd_none(m, "TIP.PGD(): TraceStop (D21, switch pgd_stop_suppressed)");
		else
			emit_ip(m, RTIT_PT_TIP_PGD, o->target, "TIP.PGD(target): branch into a TraceStop range (33.2.5.3, D21)");
	} else if (!ctx1) {
		emit_pgd_none(m, o->enclu && m->encl_optout ?
			      "TIP.PGD(): entry to an opt-out enclave clears ContextEn (Table 33-56 case 6, 33.2.9.5)" :
			      "TIP.PGD(): ContextEn cleared (Table 33-56 cases 6-8)");
	} else if (o->cond) {
		emit_pgd_none(m, "TIP.PGD(): a conditional branch left the filter region (D21)");
	} else if (o->direct && erratum(m, RTIT_PT_SKL014)) {
		emit_pgd_none(m, "TIP.PGD() without the target: a direct unconditional branch left "
			      "the filter region, erratum SKL014 (D101)");
	} else {
		emit_ip(m, RTIT_PT_TIP_PGD, o->target, "TIP.PGD(BLIP): left the filter region (Table 33-56 case 4)");
	}
}

/* A near branch sets PacketEn (Table 33-56 case 5): MODE.Exec first when
 * its bits changed while not traced (33.4.2.8: "any TIP.PGE scenario"),
 * such as RFLAGS.IF with EventEn, or CS.L/CS.D after a far transfer. */
static void enter(struct rtit_pt_model *m, uint64_t target)
{
	emit_mode(m, false, "MODE.Exec before TIP.PGE: mode changed (33.4.2.8)");
	emit_ip(m, RTIT_PT_TIP_PGE, target, "TIP.PGE(BLIP): entered the filter region (Table 33-56 case 5)");
}

/* XBEGIN that began, XEND that committed the outermost transaction
 * (the record's TX flag): MODE.TSX(InTX), then FUP(CLIP) when PacketEn
 * (Table 33-55 cases 19/20, Table 33-10); with FilterEn=0 the MODE.TSX
 * goes alone (33.2.9.2).  Nested XBEGIN and inner XEND send nothing
 * (case 18). */
static void on_tsx_insn(struct rtit_pt_model *m, const struct rtit_sim_rec *r)
{
	bool begin = r->cls == RTIT_IC_XBEGIN;

	if (!(r->flags & RTIT_SIM_F_TX))
		return;
	m->intx = begin;
	if (!emit_mode_tsx(m, begin ? rtit_pt_mode_tsx_intx : 0, begin ?
			   "MODE.TSX(InTX=1): transaction begin (Table 33-55 case 19)" :
			   "MODE.TSX(InTX=0): transaction commit (Table 33-55 case 20)"))
		return;
	if (rtit_pt_packet_en(m))
		emit_ip(m, RTIT_PT_FUP, r->ip, begin ?
			"FUP(CLIP) after MODE.TSX: XBEGIN (Table 33-55 case 19, Table 33-23)" :
			"FUP(CLIP) after MODE.TSX: XEND (Table 33-55 case 20, Table 33-23)");
}

/* The architectural state after the operation @o (from @r) into the
 * model.  Returns whether RFLAGS.IF changed. */
static bool state_after(struct rtit_pt_model *m, const struct rtit_sim_rec *r, struct op *o)
{
	bool if_changed = m->ifl != !!(r->flags & RTIT_SIM_F_IF);

	m->ifl = r->flags & RTIT_SIM_F_IF;
	m->cpl = r->cpl;
	m->cr3 = r->cr3;
	if (r->mode)
		m->mode = r->mode;
	if (o->vmentry)
		m->nonroot = true;
	if (o->vmexit)
		m->nonroot = false;
	/* SGX: the EENTER/ERESUME that entered says debug or opt-out (its
	 * vector, D51); out of the enclave ContextEn is no longer forced to
	 * 0 (33.2.9.5) */
	if (!(r->flags & RTIT_SIM_F_ENCLAVE))
		m->encl_optout = false;
	else if (o->enclu)
		m->encl_optout = !r->vector;
	/* Table 33-56 case 6: entry to an opt-out enclave sends TIP.PGD()
	 * alone */
	if (o->enclu && m->encl_optout)
		o->fup = false;
	return if_changed;
}

/* A VMLAUNCH/VMRESUME whose VM entry loads IA32_RTIT_CTL (param
 * vmx_entry_ctl: its MSR-load area's entry, or the "load IA32_RTIT_CTL"
 * entry control; SDM 33.2.8.1: a "VM entry MSR load list" write is as a
 * WRMSR; D148).  TraceEn 1 -> 0: TIP.PGD() alone, the disable of the far
 * transfer (no FUP: D148's reading of Table 33-56 case 9); under erratum
 * SKD022 a FUP with the VMLAUNCH/VMRESUME's IP before it (D149).  TraceEn
 * 0 -> 1: the enable packets, TIP.PGE(guest RIP) (Table 33-56 cases 10,
 * 12).  True when it sent the entry's packets; false when TraceEn stays
 * 1 (the entry's usual packets follow; a load that would change another
 * bit with TraceEn 1 would #GP as a WRMSR, SDM 33.2.8.1, failing the entry:
 * not modelled, taken as loading the same value). */
static __attribute__((noinline)) bool
vmentry_load_ctl(struct rtit_pt_model *m, const struct op *o, const struct rtit_sim_rec *r, bool pe0)
{
	uint64_t v = m->p.vmx_entry_ctl;
	bool was = ctl(m, RTIT_PT_CTL_TRACE_EN), is = v & RTIT_PT_CTL_TRACE_EN;

	if (was && is)
		return false;
	m->ctl = v;
	if (was) {
		bool fup = pe0 && erratum(m, RTIT_PT_SKD022);
		trace_disable(m, pe0, fup, r->ip, fup ?
			      "FUP(CLIP of the VMLAUNCH/VMRESUME) before TIP.PGD(): VM entry clears "
			      "TraceEn, erratum SKD022 (D149)" :
			      "TIP.PGD(): VM entry clears TraceEn, no FUP (Table 33-56 case 9, D148)");
	} else if (is) {
		on_trigger_rise(m, o->target, "TIP.PGE(VMCSg.RIP): VM entry sets TraceEn "
				"(Table 33-56 cases 10/12, D148)");
	}
	return true;
}

/* The operations that save or restore IA32_RTIT_CTL or TraceEn: a VM
 * exit or entry with the VMX controls of guest-only tracing, an SMI, an
 * RSM.  True when @o is one (it sends nothing else).  The rare operations'
 * functions stay out of on_op's body (noinline), which then keeps the
 * size and layout it had as one function (docs/performance.md, the PT
 * encoder). */
static __attribute__((noinline)) bool
on_ctl_switch(struct rtit_pt_model *m, const struct op *o, const struct rtit_sim_rec *r, bool pe0)
{
	if (o->vmentry && m->p.vmx_entry_ctl_on && r->kind == RTIT_SIM_INSN)
		return vmentry_load_ctl(m, o, r, pe0);
	if (o->vmexit && m->p.vmx_guest_only) {
		/* 33.5.2.2, Table 33-56 case 11: the "clear IA32_RTIT_CTL"
		 * exit control: FUP(VMCSg.RIP), TIP.PGD(); no PIP, tracing
		 * is off before the host's CR3 loads (D48) */
		m->vmx_saved_ctl = m->ctl;
		m->vmx_ctl_saved = true;
		m->ctl = 0;
		if (m->vmx_saved_ctl & RTIT_PT_CTL_TRACE_EN)
			on_trace_disable(m, pe0, r->ip, "FUP(VMCSg.RIP): VM exit clears "
					 "IA32_RTIT_CTL (Table 33-56 case 11)");
		return true;
	}
	if (o->vmentry && m->p.vmx_guest_only) {
		/* Table 33-56 case 12: the "load IA32_RTIT_CTL" entry control
		 * sets TraceEn: the enable packets (33.2.8.3), TIP.PGE */
		if (m->vmx_ctl_saved) {
			m->ctl = m->vmx_saved_ctl;
			m->vmx_ctl_saved = false;
			if (ctl(m, RTIT_PT_CTL_TRACE_EN))
				on_trigger_rise(m, o->target, "TIP.PGE(VMCSg.RIP): VM entry loads "
						"IA32_RTIT_CTL (Table 33-56 case 12)");
		}
		return true;
	}

	if (o->smi) {
		/* 33.2.9.3, Table 33-56 case 9: FUP(NLIP), TIP.PGD(); TraceEn
		 * is saved and cleared.  No PIP. */
		if (ctl(m, RTIT_PT_CTL_TRACE_EN)) {
			m->smm_saved_te = true;
			m->ctl &= ~RTIT_PT_CTL_TRACE_EN;
			on_trace_disable(m, pe0, r->ip, "FUP(NLIP): SMI (Table 33-56 case 9)");
		}
		return true;
	}
	if (o->rsm) {
		/* Table 33-56 case 10: the enable packets, TIP.PGE(BLIP). */
		if (m->smm_saved_te) {
			m->smm_saved_te = false;
			m->ctl |= RTIT_PT_CTL_TRACE_EN;
			on_trigger_rise(m, o->target, "TIP.PGE(BLIP): RSM restores TraceEn (Table 33-56 case 10)");
			if (ctl(m, RTIT_PT_CTL_EVENT_EN) && rtit_pt_trigger_en(m) && rtit_pt_context_en(m)) {
				struct rtit_packet p = { .type = RTIT_PT_CFE };
				p.u.cfe.type = rtit_pt_cfe_rsm;
				send(m, &p, 0, "CFE.RSM(IP=0) (Table 33-59 case 11)", 0);
			}
		}
		return true;
	}
	return false;
}

/* A near direct or indirect transfer or RET while PacketEn stays 1: a
 * TNT bit for a compressed RET, a TIP for any other but a direct one. */
static void near_packets(struct rtit_pt_model *m, const struct op *o)
{
	uint64_t mask = m->mode == RTIT_SIM_MODE_64 ? ~0ull : rtit_mask(32);
	bool compressed = false;

	if (o->call)
		rtit_pt_calls_push(&m->calls, o->nlip & mask);
	if (o->ret)
		compressed = rtit_pt_calls_on_ret(&m->calls, o->target, mask) &&
			     !ctl(m, RTIT_PT_CTL_DIS_RETC);
	if (compressed)
		tnt_bit(m, true);
	else if (o->ret)	/* never deferred (33.4.2.2) */
		emit_ip(m, RTIT_PT_TIP, o->target,
			"TIP(BLIP): uncompressed near RET (Table 33-55 case 6)");
	else if (!o->direct)
		emit_tip_indirect(m, o->target);
}

/* A far transfer (Table 33-55 cases 8-13, 16; Table 33-53; Table 33-56
 * cases 5-8): [FUP], [PIP], [VMCS], [MODE.Exec], TIP / TIP.PGD /
 * TIP.PGE. */
static __attribute__((noinline)) void
on_far(struct rtit_pt_model *m, const struct op *o, const struct rtit_sim_rec *r, bool pe0, bool pe1,
       bool stop, bool ctx1, bool pip)
{
	if (o->tsx_abort && m->bdm64_hold)	/* D110 */
		bdm64_release(m, m->bdm64_ip == o->fup_ip ? o->target : 0);
	if (o->tsx_abort) {
		/* InTX 1 -> 0 however the packets go (33.2.9.1) */
		m->intx = false;
		emit_mode_tsx(m, rtit_pt_mode_tsx_abrt,
			      "MODE.TSX(TXAbort=1, InTX=0): TSX abort (Table 33-55 case 21)");
	}
	if (pe0 && o->fup)
		emit_ip(m, RTIT_PT_FUP, o->fup_ip, o->tsx_abort ?
			"FUP(CLIP): TSX abort (Table 33-55 case 21, Table 33-23)" :
			o->enclu || o->aex ?
			"FUP(CLIP): EENTER/ERESUME/EEXIT/AEX (Table 33-55 case 17, Table 33-23)" :
			r->kind == RTIT_SIM_INSN ?
			"FUP(CLIP): software interrupt (Table 33-55 case 13, Table 33-23)" :
			o->init ? "FUP(NLIP): INIT on the BSP (Table 33-55 case 22, Table 33-23)" :
			o->cfe == rtit_pt_cfe_uintr ? "FUP(NLIP): user interrupt (Table 33-55 case 26)" :
			"FUP: interrupt, exception or VM exit (Table 33-55 cases 11-13, Table 33-23)");
	if (pip && o->vmentry)
		emit_pip_nr(m, true, "PIP(GuestCR3, NR=1): VM entry (Table 33-53)");
	else if (pip)
		emit_pip(m, o->init || o->sipi ? "PIP(CR3=0): INIT or SIPI (PIP generation scenarios, D58)" :
			 "PIP(NewCR3): far transfer changing CR3, or VM exit (Table 33-55 cases 9/10/12, Table 33-53)");
	if (o->vmentry && m->p.vmcs && !m->vmcs_sent && rtit_pt_trigger_en(m) && ctx1 &&
	    !m->p.vmx_conceal_entry)
		emit_vmcs(m, "VMCS: VM entry (33.4.2.15)");
	if (pe0 && pe1) {
		emit_mode(m, false, "MODE.Exec: CS.L/CS.D or, with EventEn, RFLAGS.IF changed "
			  "(Table 33-55 cases 10/12, 33.4.2.8)");
		emit_ip(m, RTIT_PT_TIP, o->target, o->init ? "TIP(ResetLIP): INIT on the BSP (Table 33-55 case 22)" :
			o->enclu || o->aex ? "TIP(BLIP): EENTER/ERESUME/EEXIT/AEX (Table 33-55 case 17)" :
			o->vmentry ? "TIP(GuestIP): VM entry (Table 33-53)" :
			"TIP(BLIP): far transfer, interrupt or exception (Table 33-55 cases 8-13)");
	} else if (pe0) {
		leave(m, o, stop, ctx1);
	} else if (pe1) {
		emit_mode(m, false, "MODE.Exec before TIP.PGE: mode changed (33.4.2.8)");
		emit_ip(m, RTIT_PT_TIP_PGE, o->target, o->sipi ? "TIP.PGE(SIPI.LIP): SIPI (Table 33-55 case 24)" :
			"TIP.PGE(BLIP): far transfer sets PacketEn (Table 33-56 case 5)");
	}
}

/* Non-branch operations (MOV CR3, HLT, MWAIT, PTWRITE, others). */
static __attribute__((noinline)) void
on_nonbranch(struct rtit_pt_model *m, const struct op *o, const struct rtit_sim_rec *r, bool pe0,
	     bool pe1, bool stop, bool ctx1, bool pip, bool if_changed)
{
	if (pip)
		emit_pip(m, "PIP(NewCR3, NR): MOV to CR3 (Table 33-55 case 14)");
	if (o->ptwrite)
		on_ptwrite(m, r, ctx1);
	if (o->hlt) {
		power_entry(m, 1, 0, r->ip, ctx1, NULL);
		m->halted = true;
	}
	if (o->mwait && r->vector) {
		/* Table 33-57 cases 3/4; an MWAIT that entered no
		 * C-state (case 2) sends nothing.  The resolved state
		 * is the one asked for (D40). */
		power_entry(m, r->vector, (unsigned)r->value & 0xf, r->ip, ctx1, r);
		m->halted = true;
		/* C4 and deeper drain the buffer, as a sleep does. */
		if (r->vector >= 4)
			rtit_pt_model_drain(m);
	}
	/* CLI, STI, POPF changing RFLAGS.IF: MODE.Exec, FUP(CLIP)
	 * (Table 33-59 case 22) with EventEn && TriggerEn &&
	 * ContextEn && FilterEn, BranchEn or not (D45) */
	if (if_changed && ctl(m, RTIT_PT_CTL_EVENT_EN) && rtit_pt_trigger_en(m) && ctx1 &&
	    m->filter_en &&
	    emit_mode(m, true, "MODE.Exec: CLI/STI/POPF changed RFLAGS.IF (Table 33-59 case 22)"))
		emit_ip(m, RTIT_PT_FUP, r->ip, "FUP(CLIP) after MODE.Exec: RFLAGS.IF changed "
			"(Table 33-59 case 22)");
	if (pe0 && !pe1)
		leave(m, o, stop, ctx1);
	else if (!pe0 && pe1) {
		emit_mode(m, false, "MODE.Exec before TIP.PGE: mode changed (33.4.2.8)");
		emit_ip(m, RTIT_PT_TIP_PGE, o->nlip, "TIP.PGE(NLIP): ContextEn set by a non-branch instruction (33.4.2.4)");
	}
}

/* Erratum APL11 (D103): the overflow resolves at a far transfer (one
 * with no FUP of its own) that clears ContextEn while PacketEn was 1: the
 * OVF goes without its FUP, the transfer's TIP.PGD() follows it. */
static __attribute__((noinline)) bool
apl11_far(struct rtit_pt_model *m, const struct op *o, const struct rtit_sim_rec *r)
{
	if (!erratum(m, RTIT_PT_APL11) || !o->far || o->fup || !rtit_pt_packet_en(m))
		return false;
	uint8_t cpl = m->cpl;
	uint64_t cr3 = m->cr3;
	m->cpl = r->cpl;	/* ContextEn after it (33.2.6.3) */
	m->cr3 = r->cr3;
	bool ctx1 = rtit_pt_context_en(m);
	m->cpl = cpl;
	m->cr3 = cr3;
	return !ctx1;
}

static void on_op(struct rtit_pt_model *m, const struct rtit_sim_rec *r)
{
	struct op o;
	bool trig0, ctx0, pe0, ctx1, pe1, stop = false, cr3_changed, pip, if_changed;

	classify(r, &o);
	/* BDM70 (D104): the held PSB+ ends before an operation that
	 * changes the state it was begun in (its PIP, MODE.Exec) */
	if (m->bdm70_hold && (o.far || r->cpl != m->cpl || r->cr3 != m->cr3 ||
			      (r->mode && r->mode != m->mode)))
		bdm70_release(m, false);
	trig0 = rtit_pt_trigger_en(m);
	ctx0 = rtit_pt_context_en(m);
	pe0 = rtit_pt_packet_en(m);
	cr3_changed = r->cr3 != m->cr3;

	/* 33.3.8: the overflow resolves once the buffer has room again. */
	if (m->ovf && rtit_ibuf_empty(&m->ibuf) && trig0)
		resolve_overflow(m, r->ip, pe0 && !apl11_far(m, &o, r));
	/* XBEGIN/XEND: after the OVF and its FUP, if the overflow resolves
	 * here (their packets are this instruction's) */
	if (o.insn && (r->cls == RTIT_IC_XBEGIN || r->cls == RTIT_IC_XEND))
		on_tsx_insn(m, r);

	if_changed = state_after(m, r, &o);
	ctx1 = rtit_pt_context_en(m);

	/* 33.2.5.3: FilterEn and TraceStop on taken transfers only (D21),
	 * while TriggerEn && ContextEn (33.2.6.3, 33.2.6.5, D21); TraceStop
	 * needs TriggerEn at the start and ContextEn at the end (D21). */
	if (trig0 && ctx1 && (o.taken || m->p.filter_sequential || !ctx0) && !o.smi && !o.rsm)
		m->filter_en = filter_at(m, o.target);	/* (FilterEn was frozen while !ContextEn) */
	if (trig0 && ctx1 && ((o.taken && !o.smi && !o.rsm && stop_at(m, o.target)) ||
			      (o.mov_cr3 && stop_at(m, r->ip)))) {
		stop = true;
		m->status |= RTIT_PT_STATUS_STOPPED;
		m->filter_en = false;
	}
	pe1 = rtit_pt_packet_en(m);
	/* Table 33-52: a VM exit or entry whose conceal control is 1 sends
	 * no PIP, whatever CR3 does */
	pip = rtit_pt_trigger_en(m) && ctx1 && ctl(m, RTIT_PT_CTL_OS) &&
	      (o.vmexit ? !m->p.vmx_conceal_exit : o.vmentry ? !m->p.vmx_conceal_entry :
	       o.mov_cr3 || o.init || o.sipi || (o.far && cr3_changed));

	if (m->bdm70_hold && !pe0 && pe1)
		bdm70_release(m, true);
	event_trace(m, &o, r, trig0, ctx0, ctx1, pe0 && (o.fup || o.smi));

	if ((o.vmexit || o.vmentry || o.smi || o.rsm) && on_ctl_switch(m, &o, r, pe0))
		goto out;
	if (o.init_ap) {
		/* Table 33-55 case 23: FUP(NLIP), and the PIP of INIT's CR3
		 * = 0 (D58); no TIP: the AP waits for SIPI, PacketEn is 0
		 * until its TIP.PGE (case 24) */
		if (pe0)
			emit_ip(m, RTIT_PT_FUP, o.fup_ip, "FUP(NLIP): INIT on an AP (Table 33-55 case 23)");
		if (pip)
			emit_pip(m, "PIP(CR3=0): INIT (PIP generation scenarios, D58)");
		if (pe0 && !ctx1)
			emit_pgd_none(m, "TIP.PGD(): INIT cleared ContextEn (Table 33-56 case 7)");
		m->filter_en = false;
		goto out;
	}
	if (o.cond) {
		if (pe0 && pe1)
			tnt_bit(m, o.taken);
		else if (pe0)
			leave(m, &o, stop, ctx1);	/* no TNT bit (33.4.2.5, D21) */
		else if (pe1)
			enter(m, o.target);
	} else if (o.direct || o.indirect || o.ret) {
		if (pe0 && pe1)
			near_packets(m, &o);
		else if (pe0)
			leave(m, &o, stop, ctx1);
		else if (pe1)
			enter(m, o.target);
	} else if (o.far) {
		on_far(m, &o, r, pe0, pe1, stop, ctx1, pip);
	} else {
		on_nonbranch(m, &o, r, pe0, pe1, stop, ctx1, pip, if_changed);
	}
	if (stop) {
		struct rtit_packet s = { .type = RTIT_PT_TRACESTOP };
		send(m, &s, 0, "TraceStop: entered a TraceStop range (33.4.2.9)", 0);
	}
out:
	/* 33.4.2.2: no RET compression across PacketEn=0. */
	if (!rtit_pt_packet_en(m))
		rtit_pt_calls_clear(&m->calls);
	m->next_ip = o.target;
}

/* Table 33-55 case 25, Table 33-57 case 7: the wake from a C-state (a
 * SLEEP event's WAKE, or the interrupt or NMI that ends a HLT): TSC, TMA,
 * CBR, then PWRX(last, deepest, interrupt) when the entry was reported. */
static void power_exit(struct rtit_pt_model *m)
{
	m->halted = false;
	if (rtit_pt_trigger_en(m)) {
		emit_tsc_tma(m, "TSC: wake, timing packets had ceased (Table 33-55 case 25)");
		emit_cbr(m, "CBR: wake (Table 33-55 case 25)");
		if (ctl(m, RTIT_PT_CTL_PWR_EVT_EN) && m->pwre_sent) {
			struct rtit_packet p = { .type = RTIT_PT_PWRX };
			p.u.pwrx.last = mwait_cstate(m->sleep_state);
			p.u.pwrx.deepest = mwait_cstate(m->sleep_state);
			p.u.pwrx.wake = rtit_pt_pwrx_wr_int;
			send(m, &p, 0, "PWRX: return to C0 (Table 33-57 case 7)", 0);
		}
	}
	m->pwre_sent = false;
	m->sleep_state = 0;
}

static void on_event_other(struct rtit_pt_model *m, const struct rtit_sim_rec *r)
{
	switch (r->cls) {
	case RTIT_EV_FREQ_CHANGE:
		/* 33.4.2.10: CBR after any frequency change (TriggerEn). */
		m->p.cbr = (uint8_t)r->value;
		if (rtit_pt_trigger_en(m))
			emit_cbr(m, "CBR: core frequency changed (Table 33-55 case 25)");
		break;
	case RTIT_EV_SLEEP:
		power_entry(m, r->vector, 0, m->next_ip, rtit_pt_context_en(m), NULL);
		/* C-states deeper than C1 drain the buffer (as RTIT App. B). */
		if (r->vector >= 4)
			rtit_pt_model_drain(m);
		m->asleep = true;
		break;
	case RTIT_EV_WAKE:
		m->asleep = false;
		m->mtc_last = art_of(m, r->tsc) >> mtc_freq(m);
		power_exit(m);
		break;
	case RTIT_EV_PEBS:
		rtit_pt_on_pebs(m, r);	/* pt_pebs.c */
		break;
	default:
		break;
	}
}

/* After a record: PSB+ at the packet boundary after the PSBFreq threshold
 * (D20); the FUP carries where execution goes on. */
static void after_rec(struct rtit_pt_model *m)
{
	/* SKL168 (D126): a PSB due with the held CYC and MTC counted takes
	 * their place; else they go out */
	if (m->skl168_n && !m->psb_due) {
		if (m->psb_bytes + skl168_bytes(m) >= psb_period(m) && rtit_pt_trigger_en(m) && !m->ovf)
			m->psb_due = true;
		else
			skl168_release(m, false);
	}
	if (m->psb_due && rtit_pt_trigger_en(m) && !m->ovf)
		psb_plus(m, true, m->next_ip, "PSB+: PSBFreq bytes since the last PSB (33.4.2.17)");
}

/*
 * The fast path's conditions, recomputed after every record handled the
 * slow way and after every MSR access.  While fp_ok holds, an ordinary
 * instruction or near branch that keeps CPL, CR3 and the mode, crosses no
 * filter or TraceStop range (no range programmed, or not a taken
 * transfer), and comes before the next MTC, changes no enable: only the
 * TNT, RET compression and TIPs remain (Table 33-55 cases 1-7).
 */
void rtit_pt_fast_refresh(struct rtit_pt_model *m)
{
	bool ranges = false;

	for (unsigned n = 0; n < RTIT_PT_MAX_RANGES; n++)
		if (addr_cfg(m, n))
			ranges = true;
	m->fp_ok = !m->p.slow_path_only && m->have_time && !m->deferred_enable && !m->ovf &&
		   !m->bdm70_hold && !(erratum(m, RTIT_PT_BDM64) && m->intx) && !m->bdm64_hold &&
		   !m->skl168_n &&
		   !m->psb_due && !m->ibuf.cap && !m->asleep && !m->halted &&
		   rtit_pt_trigger_en(m) &&
		   !(m->p.cyc_standalone && ctl(m, RTIT_PT_CTL_CYC_EN));	/* D49 */
	m->fp_pe = rtit_pt_packet_en(m);
	m->fp_ranges = ranges;
	m->fp_retc = !ctl(m, RTIT_PT_CTL_DIS_RETC);
	m->fp_mask = m->mode == RTIT_SIM_MODE_64 ? ~0ull : rtit_mask(32);
	m->fp_mtc_tsc = UINT64_MAX;
	if (ctl(m, RTIT_PT_CTL_MTC_EN)) {
		/* art_of(tsc) < A for every tsc < floor(A * num / den). */
		unsigned __int128 a = (unsigned __int128)(m->mtc_last + 1) << mtc_freq(m);
		unsigned __int128 t = a * m->p.art_num / m->p.art_den;
		m->fp_mtc_tsc = t > UINT64_MAX ? UINT64_MAX : (uint64_t)t;
	}
}

/* What the fast path does with each instruction class. */
enum { PFP_NONE, PFP_COND, PFP_JUMP, PFP_WORK, PFP_SLOW };
static const uint8_t pfp_class[256] = {
	[RTIT_IC_OTHER] = PFP_NONE, [RTIT_IC_RDMSR] = PFP_NONE,
	[RTIT_IC_COND] = PFP_COND, [RTIT_IC_DIRECT_JMP] = PFP_JUMP,
	[RTIT_IC_DIRECT_CALL] = PFP_WORK, [RTIT_IC_INDIRECT_JMP] = PFP_WORK,
	[RTIT_IC_INDIRECT_CALL] = PFP_WORK, [RTIT_IC_RET] = PFP_WORK,
	[RTIT_IC_FAR_JMP] = PFP_SLOW, [RTIT_IC_FAR_CALL] = PFP_SLOW, [RTIT_IC_FAR_RET] = PFP_SLOW,
	[RTIT_IC_IRET] = PFP_SLOW, [RTIT_IC_INT] = PFP_SLOW, [RTIT_IC_SYSCALL] = PFP_SLOW,
	[RTIT_IC_SYSRET] = PFP_SLOW, [RTIT_IC_SYSENTER] = PFP_SLOW, [RTIT_IC_SYSEXIT] = PFP_SLOW,
	[RTIT_IC_MOV_CR3] = PFP_SLOW, [RTIT_IC_MOV_CR0] = PFP_SLOW, [RTIT_IC_WRMSR] = PFP_SLOW,
	[RTIT_IC_HLT] = PFP_SLOW, [RTIT_IC_PTWRITE] = PFP_SLOW, [RTIT_IC_MWAIT] = PFP_SLOW,
	[RTIT_IC_XBEGIN] = PFP_SLOW, [RTIT_IC_XEND] = PFP_SLOW, [RTIT_IC_ENCLU] = PFP_SLOW,
	[RTIT_IC_UIRET] = PFP_SLOW,
	[RTIT_IC_COUNT ... 255] = PFP_SLOW,
};

/* A near branch with PacketEn=1 on the fast path (Table 33-55 cases 2-7,
 * as on_op does them). */
static void fast_branch(struct rtit_pt_model *m, const struct rtit_sim_rec *r, bool taken)
{
	uint64_t nlip = r->ip + r->len;

	m->cur = r;
	switch (r->cls) {
	case RTIT_IC_COND:
		tnt_bit(m, taken);
		break;
	case RTIT_IC_DIRECT_CALL:
		if (!(r->flags & RTIT_SIM_F_ZERO_LEN_CALL))
			rtit_pt_calls_push(&m->calls, nlip & m->fp_mask);
		break;
	case RTIT_IC_INDIRECT_CALL:
		rtit_pt_calls_push(&m->calls, nlip & m->fp_mask);
		emit_tip_indirect(m, r->next_ip);
		break;
	case RTIT_IC_INDIRECT_JMP:
		emit_tip_indirect(m, r->next_ip);
		break;
	case RTIT_IC_RET:
		if (rtit_pt_calls_on_ret(&m->calls, r->next_ip, m->fp_mask) && m->fp_retc)
			tnt_bit(m, true);
		else
			emit_ip(m, RTIT_PT_TIP, r->next_ip, "TIP(BLIP): uncompressed near RET (Table 33-55 case 6)");
		break;
	default:
		break;
	}
	m->cur = NULL;
}

/* The fast path over recs[i..n); returns the first record it did not
 * handle (nothing of which changed). */
static size_t fast_run(struct rtit_pt_model *m, const struct rtit_sim_rec *recs, size_t i, size_t n)
{
	const uint64_t cr3 = m->cr3, mtc_tsc = m->fp_mtc_tsc;
	const uint8_t cpl = m->cpl, mode = m->mode, ifl = m->ifl ? RTIT_SIM_F_IF : 0;
	uint64_t last = m->last_cycles, tsc = m->last_tsc, next = m->next_ip;
	size_t first = i;

	if (!m->fp_ok)
		return i;
	for (; i < n; i++) {
		const struct rtit_sim_rec *r = &recs[i];
		unsigned what;
		bool taken;

		if (r->kind != RTIT_SIM_INSN || r->cpl != cpl || r->cr3 != cr3 ||
		    (r->mode && r->mode != mode) || (r->flags & RTIT_SIM_F_IF) != ifl ||
		    r->cycles < last || r->tsc >= mtc_tsc)
			break;
		what = pfp_class[r->cls];
		/* class OTHER and taken: a VM entry (D147) */
		if (what == PFP_SLOW || (what == PFP_NONE && (r->flags & RTIT_SIM_F_TAKEN)))
			break;
		taken = what >= PFP_JUMP || (what == PFP_COND && (r->flags & RTIT_SIM_F_TAKEN));
		/* 33.2.5.3: only taken transfers move FilterEn or stop
		 * (every step with filter_sequential, D21). */
		if (m->fp_ranges && (taken || m->p.filter_sequential))
			break;
		last = r->cycles;
		tsc = r->tsc;
		next = taken ? r->next_ip : r->ip + r->len;
		if (what == PFP_NONE || what == PFP_JUMP || !m->fp_pe)
			continue;
		/* A CYC before a packet reads the time: bring it up to date. */
		m->last_cycles = last;
		m->last_tsc = tsc;
		fast_branch(m, r, taken);
		if (m->ovf || m->psb_due) {
			m->next_ip = next;
			after_rec(m);
			rtit_pt_fast_refresh(m);
			return i + 1;
		}
	}
	if (i > first) {
		m->last_cycles = last;
		m->last_tsc = tsc;
		m->next_ip = next;
		/* rtit_pt_time_to follows the ART even with MTC off. */
		m->mtc_last = art_of(m, tsc) >> mtc_freq(m);
	}
	return i;
}

static void rec_slow(struct rtit_pt_model *m, const struct rtit_sim_rec *r)
{
	m->cur = r;
	/* BDM64 (D110): only the abort itself takes the held TIP */
	if (m->bdm64_hold && (r->kind == RTIT_SIM_INSN || r->cls != RTIT_EV_TSX_ABORT))
		bdm64_release(m, 0);
	rtit_pt_time_to(m, r);
	if (m->deferred_enable) {
		/* A debugger's write before the run: the NLIP is the first
		 * instruction's IP. */
		uint64_t old = m->deferred_trig0 ? m->ctl | RTIT_PT_CTL_TRACE_EN : m->ctl & ~RTIT_PT_CTL_TRACE_EN;
		m->deferred_enable = false;
		rtit_pt_on_ctl_write(m, old, m->deferred_pe0, r->ip, r->ip);
	}
	/* A HLT or MWAIT ends at the next record that is not its own
	 * SLEEP/WAKE: the interrupt or NMI that woke it, or the next
	 * instruction after a masked interrupt (Table 33-57 case 7).  Not
	 * at the PEBS record of the HLT itself: the assist follows the HLT's
	 * retirement, it does not wake it (D54). */
	if (m->halted && (r->kind == RTIT_SIM_INSN ||
			  (r->cls != RTIT_EV_SLEEP && r->cls != RTIT_EV_WAKE && r->cls != RTIT_EV_PEBS)))
		power_exit(m);
	if (m->bdm70_hold && r->kind != RTIT_SIM_INSN)
		bdm70_release(m, false);
	if (r->kind == RTIT_SIM_INSN) {
		on_op(m, r);
	} else {
		switch (r->cls) {
		case RTIT_EV_EXCEPTION: case RTIT_EV_EXT_INTERRUPT: case RTIT_EV_NMI:
		case RTIT_EV_SMI: case RTIT_EV_RSM: case RTIT_EV_VMEXIT: case RTIT_EV_VMENTRY:
		case RTIT_EV_TSX_ABORT: case RTIT_EV_INIT: case RTIT_EV_SIPI: case RTIT_EV_UINTR:
		case RTIT_EV_AEX:
			on_op(m, r);
			break;
		default:
			on_event_other(m, r);
			break;
		}
	}
	after_rec(m);
	m->cur = NULL;
	rtit_pt_fast_refresh(m);
}

void rtit_pt_model_on_rec(struct rtit_pt_model *m, const struct rtit_sim_rec *r)
{
	if (!fast_run(m, r, 0, 1))
		rec_slow(m, r);
	rtit_pt_out_flush(m);
}

void rtit_pt_model_on_batch(const struct rtit_sim_rec *recs, size_t n, void *opaque)
{
	struct rtit_pt_model *m = opaque;

	for (size_t i = 0; i < n;) {
		i = fast_run(m, recs, i, n);
		if (i < n)
			rec_slow(m, &recs[i++]);
	}
	rtit_pt_out_flush(m);
}

int rtit_pt_model_finish(struct rtit_pt_model *m)
{
	/* The end of the run: the partial TNT goes out (partial TNTs "may
	 * be generated at any time", 33.4.2.1) so the last branches are in
	 * the trace. */
	if (m->bdm70_hold)
		bdm70_release(m, false);
	if (m->bdm64_hold)
		bdm64_release(m, 0);
	if (m->skl168_n)
		skl168_release(m, false);
	if (rtit_pt_trigger_en(m))
		flush_tnt(m);
	rtit_pt_model_drain(m);
	rtit_pt_out_flush(m);
	return m->err;
}

int rtit_pt_model_init(struct rtit_pt_model *m, const struct rtit_pt_params *p,
		       const struct rtit_enc_sink *sink)
{
	if (!m || !p || !sink)
		return -RTIT_ERR_INVALID;
	if ((p->buffer_bytes && !p->drain_den) || p->buffer_bytes > rtit_outq_size ||
	    !p->art_num || !p->art_den || p->caps.num_ranges > RTIT_PT_MAX_RANGES)
		return -RTIT_ERR_BAD_CONFIG;
	memset(m, 0, sizeof(*m));
	m->p = *p;
	m->sink = *sink;
	rtit_pkt_ctx_init(&m->ctx, RTIT_DIALECT_PT, false);
	rtit_last_ip_init(&m->lastip, RTIT_DIALECT_PT);
	m->lastip.pt_choice = p->ip_choice;
	rtit_pt_tnt_init(&m->tnt, p->long_tnt);
	rtit_pt_calls_clear(&m->calls);
	m->out_mask = RTIT_PT_MASK_LOWER;	/* Table 33-9 reset value */
	m->ibuf.cap = p->buffer_bytes;
	m->ibuf.num = p->drain_num;
	m->ibuf.den = p->drain_den;
	m->mode = RTIT_SIM_MODE_64;
	m->filter_en = true;
	m->nonroot = p->vmx_nonroot;
	return 0;
}

void rtit_pt_model_set_platform(struct rtit_pt_model *m, uint8_t cpl, uint64_t cr3, uint8_t mode)
{
	m->fp_ok = false;	/* refreshed at the next record */
	m->cpl = cpl;
	m->cr3 = cr3;
	if (mode)
		m->mode = mode;
}

void rtit_pt_model_set_if(struct rtit_pt_model *m, bool ifl)
{
	m->fp_ok = false;	/* refreshed at the next record */
	m->ifl = ifl;
}

void rtit_pt_model_set_mem(struct rtit_pt_model *m, rtit_pt_read_mem_fn fn, void *opaque)
{
	m->read_mem = fn;
	m->mem_opaque = opaque;
}
