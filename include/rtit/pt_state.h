/*
 * pt_state.h - small pieces of Intel PT hardware state with pure update
 * functions, in the manner of rtit_state.h.  encoder/pt/pt_model.c is
 * their composition.
 */
#ifndef RTIT_PT_STATE_H
#define RTIT_PT_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include "rtit/packet.h"
#include "rtit/opcodes_pt.h"

/* ---- TNT buffer (33.4.2.1, D21) ----
 * n bits, oldest in the most significant position; cap is 6 (TNT-8) or
 * 47 (Long TNT). */
struct rtit_pt_tnt {
	uint64_t bits;
	uint8_t n, cap;
};

static inline void rtit_pt_tnt_init(struct rtit_pt_tnt *t, bool long_tnt)
{
	t->bits = 0;
	t->n = 0;
	t->cap = long_tnt ? rtit_pt_tnt64_max_bits : rtit_pt_tnt8_max_bits;
}

static inline bool rtit_pt_tnt_empty(const struct rtit_pt_tnt *t) { return t->n == 0; }

static inline void rtit_pt_tnt_clear(struct rtit_pt_tnt *t) { t->bits = 0; t->n = 0; }

/* A conditional branch or compressed RET: returns true when the buffer is
 * now full (a TNT is due). */
static inline bool rtit_pt_tnt_on_branch(struct rtit_pt_tnt *t, bool taken)
{
	t->bits = (t->bits << 1) | (taken ? 1u : 0u);
	t->n++;
	return t->n >= t->cap;
}

/* The buffered bits as a TNT packet; empties the buffer.  False if empty. */
static inline bool rtit_pt_tnt_take(struct rtit_pt_tnt *t, struct rtit_packet *p)
{
	if (!t->n)
		return false;
	p->type = t->cap > rtit_pt_tnt8_max_bits ? RTIT_PT_TNT64 : RTIT_PT_TNT8;
	p->u.tnt.nbits = t->n;
	p->u.tnt.bits = t->bits;
	rtit_pt_tnt_clear(t);
	return true;
}

/* ---- RET compression call stack (33.2.1.2, 33.4.2.2, D22) ----
 * 64 NLIPs; a push when full drops the oldest. */
enum { rtit_pt_stack_depth = 64 };

struct rtit_pt_callstack {
	uint64_t ip[rtit_pt_stack_depth];
	unsigned top, depth;	/* ip[top-1] is the youngest */
};

static inline void rtit_pt_calls_clear(struct rtit_pt_callstack *s) { s->top = 0; s->depth = 0; }

static inline void rtit_pt_calls_push(struct rtit_pt_callstack *s, uint64_t nlip)
{
	s->ip[s->top] = nlip;
	s->top = (s->top + 1) % rtit_pt_stack_depth;
	if (s->depth < rtit_pt_stack_depth)
		s->depth++;
}

/* A near RET to @target: pops (33.4.2.2 step 3: every near RET); true
 * when it compresses (the stack was not empty and the popped NLIP, cut to
 * the RET's operand size by @mask, is the target; an empty pop does not
 * compress, D22). */
static inline bool rtit_pt_calls_on_ret(struct rtit_pt_callstack *s, uint64_t target,
					uint64_t mask)
{
	if (!s->depth)
		return false;
	s->top = (s->top + rtit_pt_stack_depth - 1) % rtit_pt_stack_depth;
	s->depth--;
	return (s->ip[s->top] & mask) == target;
}

/* ---- Address ranges (33.2.5.3): [A, B], both inclusive ---- */
static inline bool rtit_pt_in_range(uint64_t a, uint64_t b, uint64_t ip)
{
	return a <= ip && ip <= b;
}

#endif /* RTIT_PT_STATE_H */
