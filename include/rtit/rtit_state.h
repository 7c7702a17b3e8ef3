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
#include "rtit/state.h"	/* the shared pieces: internal buffer, output queue */

/* ---- TNT buffer: RTIT_TNT_BUFF (3.3.13, 4.2.2) ----
 * v is the image of a TNT byte: a leading 1 followed by the bits, oldest
 * first.  Empty is 1. */
struct rtit_r_tnt {
	uint8_t v;
};

static inline void rtit_r_tnt_init(struct rtit_r_tnt *t) { t->v = 1; }
static inline bool rtit_r_tnt_empty(const struct rtit_r_tnt *t) { return t->v <= 1; }
static inline bool rtit_r_tnt_full(const struct rtit_r_tnt *t) { return t->v & 0x40; }

/* A conditional branch or compressed RET retired: shift its bit in.
 * Returns true when the sixth bit made the buffer full (4.2.2). */
static inline bool rtit_r_tnt_on_branch(struct rtit_r_tnt *t, bool taken)
{
	t->v = (uint8_t)((t->v << 1) | (taken ? 1 : 0));
	return rtit_r_tnt_full(t);
}

/* The buffered bits as a TNT packet; the buffer is emptied.  Returns false
 * (and leaves @p alone) when empty. */
static inline bool rtit_r_tnt_take(struct rtit_r_tnt *t, struct rtit_packet *p)
{
	unsigned n;

	if (rtit_r_tnt_empty(t))
		return false;
	n = 31u - (unsigned)__builtin_clz(t->v);
	p->type = RTIT_R_TNT;
	p->u.tnt.nbits = (uint8_t)n;
	p->u.tnt.bits = t->v & ((1u << n) - 1);
	t->v = 1;
	return true;
}

/* ---- RET compression: RTIT_LAST_CALL_NLIP (2.2.5, 4.2.3.2, 3.3.14) ---- */
struct rtit_r_retc {
	uint64_t nlip;		/* [47:0] */
	bool valid;
};

static inline void rtit_r_retc_clear(struct rtit_r_retc *r) { r->nlip = 0; r->valid = false; }

/* A near CALL that started with PacketEn=1 retired (Cmprs_Ret=1). */
static inline void rtit_r_retc_on_call(struct rtit_r_retc *r, uint64_t nlip)
{
	r->nlip = nlip & RTIT_R_LIP_MASK;
	r->valid = true;
}

/* Whether a near RET to @target compresses (4.2.3.2).  A match does not
 * consume the register (Figure 7; D70). */
static inline bool rtit_r_retc_on_ret(const struct rtit_r_retc *r, uint64_t target)
{
	return r->valid && r->nlip == (target & RTIT_R_LIP_MASK);
}

/* ---- Packet byte counter: RTIT_PKT_CNT (3.3.9, Table 11) ---- */
struct rtit_r_pktcnt {
	uint16_t cnt;		/* [13:0] */
	uint8_t mask;		/* Pkt_Mask [17:16] */
};

/* A packet of @len bytes entered the buffer.  Returns true when the
 * monitored bit 11+Pkt_Mask is set in the new count (Pkt_Mask 3: the carry
 * out of the 14-bit field): the count becomes 0 and a PSB is due.  "0, not
 * 3" as the 3.3.9 example says. */
static inline bool rtit_r_pktcnt_on_packet(struct rtit_r_pktcnt *pc, unsigned len)
{
	uint32_t n = (uint32_t)pc->cnt + len;

	if (n & (1u << (11 + pc->mask))) {
		pc->cnt = 0;
		return true;
	}
	pc->cnt = (uint16_t)(n & RTIT_R_PKT_CNT_MASK);
	return false;
}

/* ---- Cycle counter: RTIT_CNTP (3.3.4, Table 5) ---- */
struct rtit_r_cntp {
	uint32_t v;		/* [21:0] */
};

/* @n core cycles passed while counting is gated on; wraps at 2^22. */
static inline void rtit_r_cntp_on_cycles(struct rtit_r_cntp *c, uint64_t n)
{
	c->v = (uint32_t)((c->v + n) & ((1u << RTIT_R_CNTP_BITS) - 1));
}

/* A packet with a cycle count was sent: returns the count, resets it. */
static inline uint32_t rtit_r_cntp_on_ccp(struct rtit_r_cntp *c)
{
	uint32_t v = c->v;
	c->v = 0;
	return v;
}

static inline bool rtit_r_cntp_msb(const struct rtit_r_cntp *c) { return c->v & RTIT_R_CNTP_MSB; }

/* ---- Address-range triggers (3.3.5, Table 7) ----
 * What the instruction just retired means for [base, limit): +1 entered,
 * -1 left, 0 neither.  A taken branch or event decides by its target; a
 * sequential step enters at the base IP and leaves at the limit IP. */
static inline int rtit_r_range_on_retire(uint64_t base, uint64_t limit, bool taken,
				       uint64_t next)
{
	next &= RTIT_R_LIP_MASK;
	if (taken)
		return base <= next && next < limit ? 1 : -1;
	if (next == base)
		return 1;
	if (next == limit)
		return -1;
	return 0;
}

#endif /* RTIT_ENCODER_RTIT_STATE_H */
