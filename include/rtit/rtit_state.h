/*
 * rtit_state.h - the small pieces of RTIT hardware state, each with pure
 * update functions named by the moment they run.  The RTIT encoder model
 * (encoder/rtit/rtit_model.c) is their composition; tests/unit/test_rtit_state.c tests
 * each alone.
 */
#ifndef RTIT_ENCODER_RTIT_STATE_H
#define RTIT_ENCODER_RTIT_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include "rtit/msr_rtit.h"
#include "rtit/packet.h"

/* ---- TNT buffer: RTIT_TNT_BUFF (3.3.13, 4.2.2) ----
 * v is the image of a TNT byte: a leading 1 followed by the bits, oldest
 * first.  Empty is 1. */
struct rtit_tnt {
	uint8_t v;
};

static inline void rtit_tnt_init(struct rtit_tnt *t) { t->v = 1; }
static inline bool rtit_tnt_empty(const struct rtit_tnt *t) { return t->v <= 1; }
static inline bool rtit_tnt_full(const struct rtit_tnt *t) { return t->v & 0x40; }

/* A conditional branch or compressed RET retired: shift its bit in.
 * Returns true when the sixth bit made the buffer full (4.2.2). */
static inline bool rtit_tnt_on_branch(struct rtit_tnt *t, bool taken)
{
	t->v = (uint8_t)((t->v << 1) | (taken ? 1 : 0));
	return rtit_tnt_full(t);
}

/* The buffered bits as a TNT packet; the buffer is emptied.  Returns false
 * (and leaves @p alone) when empty. */
static inline bool rtit_tnt_take(struct rtit_tnt *t, struct rtit_packet *p)
{
	unsigned n;

	if (rtit_tnt_empty(t))
		return false;
	n = 31u - (unsigned)__builtin_clz(t->v);
	p->type = RTIT_R_TNT;
	p->u.tnt.nbits = (uint8_t)n;
	p->u.tnt.bits = t->v & ((1u << n) - 1);
	t->v = 1;
	return true;
}

/* ---- RET compression: RTIT_LAST_CALL_NLIP (2.2.5, 4.2.3.2, 3.3.14) ---- */
struct rtit_retc {
	uint64_t nlip;		/* [47:0] */
	bool valid;
};

static inline void rtit_retc_clear(struct rtit_retc *r) { r->nlip = 0; r->valid = false; }

/* A near CALL that started with PacketEn=1 retired (Cmprs_Ret=1). */
static inline void rtit_retc_on_call(struct rtit_retc *r, uint64_t nlip)
{
	r->nlip = nlip & RTIT_LIP_MASK;
	r->valid = true;
}

/* Whether a near RET to @target compresses (4.2.3.2).  A match does not
 * consume the register (Figure 7; D70). */
static inline bool rtit_retc_on_ret(const struct rtit_retc *r, uint64_t target)
{
	return r->valid && r->nlip == (target & RTIT_LIP_MASK);
}

/* ---- Packet byte counter: RTIT_PKT_CNT (3.3.9, Table 11) ---- */
struct rtit_pktcnt {
	uint16_t cnt;		/* [13:0] */
	uint8_t mask;		/* Pkt_Mask [17:16] */
};

/* A packet of @len bytes entered the buffer.  Returns true when the
 * monitored bit 11+Pkt_Mask is set in the new count (Pkt_Mask 3: the carry
 * out of the 14-bit field): the count becomes 0 and a PSB is due.  "0, not
 * 3" as the 3.3.9 example says. */
static inline bool rtit_pktcnt_on_packet(struct rtit_pktcnt *pc, unsigned len)
{
	uint32_t n = (uint32_t)pc->cnt + len;

	if (n & (1u << (11 + pc->mask))) {
		pc->cnt = 0;
		return true;
	}
	pc->cnt = (uint16_t)(n & RTIT_PKT_CNT_MASK);
	return false;
}

/* ---- Cycle counter: RTIT_CNTP (3.3.4, Table 5) ---- */
struct rtit_cntp {
	uint32_t v;		/* [21:0] */
};

/* @n core cycles passed while counting is gated on; wraps at 2^22. */
static inline void rtit_cntp_on_cycles(struct rtit_cntp *c, uint64_t n)
{
	c->v = (uint32_t)((c->v + n) & ((1u << RTIT_CNTP_BITS) - 1));
}

/* A packet with a cycle count was sent: returns the count, resets it. */
static inline uint32_t rtit_cntp_on_ccp(struct rtit_cntp *c)
{
	uint32_t v = c->v;
	c->v = 0;
	return v;
}

static inline bool rtit_cntp_msb(const struct rtit_cntp *c) { return c->v & RTIT_CNTP_MSB; }

/* ---- Internal buffer (4.2.5; size and rate are parameters, D18) ----
 * fill bytes wait to be written to memory; they drain at num/den bytes per
 * core cycle.  cap 0 means unlimited (it never overflows). */
struct rtit_ibuf {
	uint64_t cap, fill;
	uint64_t num, den, frac;
};

/* @cycles core cycles passed: returns how many bytes drained. */
static inline uint64_t rtit_ibuf_on_cycles(struct rtit_ibuf *b, uint64_t cycles)
{
	uint64_t q, out;

	if (!b->cap || !b->den) {
		out = b->fill;
		b->fill = 0;
		return out;
	}
	q = cycles * b->num + b->frac;
	b->frac = q % b->den;
	q /= b->den;
	out = q >= b->fill ? b->fill : q;
	b->fill -= out;
	if (!b->fill)
		b->frac = 0;
	return out;
}

static inline bool rtit_ibuf_fits(const struct rtit_ibuf *b, uint64_t len)
{
	return !b->cap || b->fill + len <= b->cap;
}

static inline void rtit_ibuf_on_packet(struct rtit_ibuf *b, uint64_t len)
{
	if (b->cap)
		b->fill += len;
}

/* A drain (WRMSR RTIT_CTL, 3.3.2; C4/C6 entry): everything is written.
 * Returns how many bytes that was. */
static inline uint64_t rtit_ibuf_on_drain(struct rtit_ibuf *b)
{
	uint64_t out = b->fill;
	b->fill = 0;
	b->frac = 0;
	return out;
}

static inline bool rtit_ibuf_empty(const struct rtit_ibuf *b) { return b->fill == 0; }

/* ---- Address-range triggers (3.3.5, Table 7) ----
 * What the instruction just retired means for [base, limit): +1 entered,
 * -1 left, 0 neither.  A taken branch or event decides by its target; a
 * sequential step enters at the base IP and leaves at the limit IP. */
static inline int rtit_range_on_retire(uint64_t base, uint64_t limit, bool taken,
				       uint64_t next)
{
	next &= RTIT_LIP_MASK;
	if (taken)
		return base <= next && next < limit ? 1 : -1;
	if (next == base)
		return 1;
	if (next == limit)
		return -1;
	return 0;
}

/* ---- Output region (2.3, 3.3.10-3.3.12) ----
 * Bytes leave the internal buffer into the region at
 * (RTIT_BASE_ADDR & ~mask) + (RTIT_OFFSET & mask) (D71), in 64-byte
 * lines; the offset wraps to 0 after it reaches the mask value.  The
 * queue holds the bytes still in the internal buffer (at most
 * rtit_outq_size), and the stream positions of TraceStop packets, whose
 * write Dest=0 sends to 0xC0 of its line (3.3.2, D71). */
enum { rtit_outq_size = 1 << 16, rtit_line_size = 64, rtit_outq_stops = 16 };

struct rtit_outq {
	uint8_t ring[rtit_outq_size];
	uint64_t in, out;		/* stream positions: accepted, drained */
	uint64_t stops[rtit_outq_stops];
	unsigned nstops;
	uint8_t line[rtit_line_size];
	unsigned line_fill;
	uint64_t line_off;		/* region offset of line[0] */
};

#endif /* RTIT_ENCODER_RTIT_STATE_H */
