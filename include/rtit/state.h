/*
 * state.h - the pieces of trace-block state both encoder models share,
 * each with pure update functions named by the moment they run: the
 * internal buffer (RTIT 4.2.5; SDM 33.3.8) and the output queue (RTIT 2.3,
 * 3.3.10-3.3.12; SDM 33.2.7).  RTIT-only pieces are in rtit_state.h
 * (rtit_r_*), Intel PT-only ones in pt_state.h (rtit_pt_*).
 */
#ifndef RTIT_STATE_H
#define RTIT_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

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

#endif /* RTIT_STATE_H */
