/*
 * flow_fold.h - the flow as basic blocks, folded from instruction records
 * by the rule include/rtit/flow.h gives for block mode (struct
 * rtit_flow_block), written here apart from the decoder so a test can
 * fold the ground truth (or the decoder's own records) and compare with
 * what block mode hands out: a block goes on while each instruction is
 * plain (RTIT_IC_OTHER, next_ip = ip + len) and the next starts where it
 * went; an event is a block of its own; a note ends the open block.
 * Each finished block goes to a hash (FNV-1a of its ip, last_ip,
 * next_ip, ninsn, kind, cls) and a count, and optionally to a callback.
 */
#ifndef RTIT_TESTS_FLOW_FOLD_H
#define RTIT_TESTS_FLOW_FOLD_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "rtit/flow.h"

struct flow_fold {
	struct rtit_flow_block cur;
	bool open;
	uint64_t hash, blocks, insns;
	bool no_notes;		/* notes end blocks but are not hashed */
	void (*put)(void *opaque, const struct rtit_flow_block *b);
	void *opaque;
};

static inline void flow_fold_init(struct flow_fold *f)
{
	memset(f, 0, sizeof(*f));
	f->hash = 0xcbf29ce484222325ull;
}

static inline void flow_fold_mix(struct flow_fold *f, uint64_t v)
{
	for (int i = 0; i < 8; i++) {
		f->hash ^= (v >> (8 * i)) & 0xff;
		f->hash *= 0x100000001b3ull;
	}
}

/* A finished block (from block mode, or folded here). */
static inline void flow_fold_block(struct flow_fold *f, const struct rtit_flow_block *b)
{
	flow_fold_mix(f, b->ip);
	flow_fold_mix(f, b->last_ip);
	flow_fold_mix(f, b->next_ip);
	flow_fold_mix(f, (uint64_t)b->ninsn << 16 | (uint64_t)b->kind << 8 | b->cls);
	f->blocks++;
	f->insns += b->ninsn;
	if (f->put)
		f->put(f->opaque, b);
}

static inline void flow_fold_close(struct flow_fold *f)
{
	if (f->open)
		flow_fold_block(f, &f->cur);
	f->open = false;
}

/* A note: ends the open block; its kind, offset and count are hashed. */
static inline void flow_fold_note(struct flow_fold *f, const struct rtit_flow_note *n)
{
	flow_fold_close(f);
	if (f->no_notes)
		return;
	flow_fold_mix(f, (uint64_t)n->kind << 32 | (uint32_t)n->code);
	flow_fold_mix(f, n->offset);
	flow_fold_mix(f, n->count);
}

static inline void flow_fold_rec(struct flow_fold *f, const struct rtit_sim_rec *r)
{
	struct rtit_flow_block *b = &f->cur;
	if (f->open && (r->kind != RTIT_SIM_INSN || r->ip != b->next_ip))
		flow_fold_close(f);
	if (r->kind != RTIT_SIM_INSN) {
		struct rtit_flow_block ev = { .ip = r->ip, .last_ip = r->ip, .next_ip = r->next_ip,
					      .kind = r->kind, .cls = r->cls };
		flow_fold_block(f, &ev);
		return;
	}
	if (!f->open) {
		memset(b, 0, sizeof(*b));
		b->ip = r->ip;
		b->kind = RTIT_SIM_INSN;
		f->open = true;
	}
	b->ninsn++;
	b->last_ip = r->ip;
	b->next_ip = r->next_ip;
	b->cls = r->cls;
	if (r->cls != RTIT_IC_OTHER || r->next_ip != r->ip + r->len)
		flow_fold_close(f);
}

#endif
