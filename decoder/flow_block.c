/*
 * flow_block.c - the flow decoder's fast steps and block mode (issue 20):
 * runs of plain instructions walked in one step, and the records folded
 * into basic blocks for cfg.on_block (include/rtit/flow.h).
 *
 * A plain instruction (RTIT_IC_OTHER, none of the ic flags) sends no
 * packet and uses none in either dialect (RTIT Table 19, SDM Table 33-1:
 * it is no branch); the walk's only question at one is whether a packet
 * in view binds to its IP (an asynchronous event's FUP, RTIT Table 1, SDM
 * Table 33-53).  While TNT bits are pending no packet can (every FUP and
 * TIP forces the partial TNT out first: RTIT 4.2.2, SDM 33.4.2.1), and a
 * TNT or TIP in view binds to no IP; the walks then take the whole run at
 * once, with the same records, offsets and counts as one instruction at a
 * time (docs/decisions.md D97).  With TNT bits pending, the Intel PT walk
 * takes a whole block (the run and the branch that uses the next bit, or
 * a direct JMP/CALL) a step, and block mode folds it with no record when
 * it can (flow_pt_tnt_walk, D155); with none pending, the same from a TNT
 * or TIP in view (D156).  A block is one entry (struct ic_blk), the next
 * packet is read in the fast path, and a block whose bit commits the
 * provisional ones before it goes straight into the blocks (D157).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "flow_internal.h"

/* The longest run taken in one step (ic_ent's fields); a longer one is
 * taken in several. */
enum { RUN_MAX_N = 255, RUN_MAX_BYTES = 0xffff - 15 };
_Static_assert(sizeof(struct ic_ent) == 32, "the instruction cache entry stays 32 bytes");

/*
 * Counts the run of plain instructions from @e (plain) through the cache,
 * up to the first instruction that is not plain, and keeps it in @e.  An
 * instruction not decoded yet ends the count with nothing kept (the walk
 * decodes it on its first pass).  Returns the run's length, 0 when not
 * known.
 */
int flow_run_scan(struct rtit_flow_dec *d, const struct ic_ent *e)
{
	uint64_t ip = e->ip & ~d->ic_tag;
	uint32_t n = 0, bytes = 0, last = 0;	/* last: its length */
	const struct ic_ent *f = e;

	while (n < RUN_MAX_N && bytes < RUN_MAX_BYTES) {
		if (!f)
			return 0;
		if (!flow_plain(f))
			break;
		last = f->len;
		bytes += f->len;
		n++;
		const struct ic_ent *g = ic_find(d, ip + bytes);
		if (g)	/* f's link to the next one (ic_find_from's slot 0) */
			((struct ic_ent *)f)->next[0] = (uint32_t)(g - d->ic);
		f = g;
	}
	struct ic_ent *m = (struct ic_ent *)e;	/* an entry of d->ic */
	m->run = (uint8_t)n;
	m->run_lastlen = (uint8_t)last;
	m->run_bytes = (uint16_t)bytes;
	return (int)n;
}

/*
 * The run of plain instructions at the walk's IP (@e, flow_run_ok): their
 * records, as the walk makes them one at a time (flow_insn_rec with no
 * flags, the template unchanged: no packet is consumed), or in block mode
 * one record for the run when it fits (flow_run_fits; pad1: its length,
 * value: its last IP, len: its length; folded by flow_blocks_out).  The walk goes on after it.
 */
void flow_run(struct rtit_flow_dec *d, const struct ic_ent *e)
{
	uint64_t ip = d->ip;
	uint32_t n = e->run;

	d->walked += n;
	if (d->cfg.on_block && flow_run_fits(d, n)) {
		struct rtit_sim_rec *r = rec_new(d, n);
		*r = d->tmpl;
		r->ip = ip;
		r->cls = RTIT_IC_OTHER;
		r->len = e->run_lastlen;
		r->value = ip + e->run_bytes - e->run_lastlen;
		r->next_ip = ip + e->run_bytes;
		r->pad1 = n;
		d->ip = r->next_ip;
		d->prev_nlip = d->ip;
		return;
	}
	for (uint32_t i = 0; i < n; i++) {
		if (i && !(e = ic_find_from(d, e, ip))) {	/* cannot happen: scanned */
			d->walked -= n - i;
			break;
		}
		struct rtit_sim_rec *r = rec_new(d, 1);
		*r = d->tmpl;
		r->ip = ip;
		r->len = e->len;
		r->cls = RTIT_IC_OTHER;
		r->next_ip = ip + e->len;
		ip += e->len;
	}
	d->ip = ip;
	d->prev_nlip = ip;
}

/* ------------------------------------------------------------ blocks */

/* The blocks are built in place, d->blk[d->nblk] the open one (no copy:
 * a block written field by field and then copied whole would wait on
 * store forwarding).  Hands out the complete ones and moves the open one
 * to the front. */
static void blocks_hand_out(struct rtit_flow_dec *d)
{
	if (!d->nblk)
		return;
	d->cfg.on_block(d->cfg.opaque, d->blk, d->nblk);
	if (d->cur_open)
		d->blk[0] = d->blk[d->nblk];
	d->nblk = 0;
}

/* The open block is complete. */
static inline void block_done(struct rtit_flow_dec *d)
{
	d->cur_open = false;
	if (++d->nblk == d->cap)
		blocks_hand_out(d);
}

/* The fields of the block's last record. */
static inline void block_last(struct rtit_flow_block *b, const struct rtit_sim_rec *r)
{
	b->next_ip = r->next_ip;
	b->cr3 = r->cr3;
	b->cycles = r->cycles;
	b->tsc = r->tsc;
	b->cls = r->cls;
	b->flags = r->flags;
	b->ann = r->pad0;
	b->cpl = r->cpl;
	b->mode = r->mode;
	b->vector = r->vector;
}

/*
 * Folds the record @r into the open block (a new one when it does not
 * continue it) and completes the block when @r ends it.  *last: the open
 * block's last record so far whose fields are not yet in it (kept back so
 * that a run of records writes them once).  Counts the instructions of
 * run records beyond the first in *extra.
 */
static inline void fold(struct rtit_flow_dec *d, const struct rtit_sim_rec *r,
			const struct rtit_sim_rec **last, uint64_t *extra)
{
	struct rtit_flow_block *b = &d->blk[d->nblk];

	if (d->cur_open && (r->kind != RTIT_SIM_INSN || r->ip != b->next_ip)) {
		if (*last)
			block_last(b, *last);
		block_done(d);
		b = &d->blk[d->nblk];
	}
	if (!d->cur_open) {
		b->ip = r->ip;
		b->kind = r->kind;
		b->ninsn = 0;
		d->cur_open = true;
	}
	*last = r;
	b->next_ip = r->next_ip;
	if (r->kind != RTIT_SIM_INSN) {
		/* an event: a block of its own */
		b->last_ip = r->ip;
		b->len = 0;
	} else if (r->pad1) {
		/* a run record (flow_run), or a run and its branch
		 * (flow_pt_tnt_walk): pad1 instructions, the last at value, of
		 * length len */
		b->ninsn += r->pad1;
		b->last_ip = r->value;
		b->len = r->len;
		*extra += r->pad1 - 1;
		if (r->cls == RTIT_IC_OTHER && r->next_ip == r->value + r->len)
			return;
	} else {
		b->ninsn++;
		b->last_ip = r->ip;
		b->len = r->len;
		if (r->cls == RTIT_IC_OTHER && r->next_ip == r->ip + r->len)
			return;
	}
	block_last(b, r);
	*last = NULL;
	block_done(d);
}

/*
 * Block mode: folds @n committed records into blocks (flow.h, struct
 * rtit_flow_block); the last stays open until a record that ends it, a
 * note or the end.  The complete blocks are handed out when the array is
 * full and before a note (flow_blocks_close; the end is a note too), not
 * at every call: the walk folds a few records at a time (D155).  Counts
 * the instructions of run records in the stats (each is counted as one
 * record by the caller).
 */
void flow_blocks_out(struct rtit_flow_dec *d, const struct rtit_sim_rec *recs, size_t n)
{
	uint64_t extra = 0;
	const struct rtit_sim_rec *last = NULL;

	for (size_t i = 0; i < n; i++)
		fold(d, &recs[i], &last, &extra);
	if (last)
		block_last(&d->blk[d->nblk], last);
	d->st.insns += extra;
}

/* Block mode: before a note, the open block is complete. */
void flow_blocks_close(struct rtit_flow_dec *d)
{
	if (d->cur_open)
		block_done(d);
	blocks_hand_out(d);
}

/* The instructions @n records stand for (a run record: its length). */
uint64_t flow_blocks_insns(const struct rtit_sim_rec *recs, size_t n)
{
	uint64_t k = 0;
	for (size_t i = 0; i < n; i++)
		k += recs[i].pad1 ? recs[i].pad1 : 1;
	return k;
}

/* ------------------------------------------------- the TNT fast path */

/*
 * The block at the cached instruction d->ic[@i] (the IP @ip, untagged),
 * into d->icb[i]: the run of plain instructions from there (its length
 * known and all cached, flow_run_scan) and the instruction after it, or
 * the instruction itself when it is no plain one.  NULL when the walk
 * must take the block itself.  Nothing is decoded.
 */
static const struct ic_blk *blk_fill(struct rtit_flow_dec *d, uint32_t i, uint64_t ip)
{
	const struct ic_ent *e = &d->ic[i], *b = e;
	uint32_t n = 0, bytes = 0;

	if (e->ip != (ip | d->ic_tag) || !e->len)
		return NULL;
	if (flow_plain(e)) {
		if (!e->run && flow_run_scan(d, e) <= 0)
			return NULL;
		n = e->run;
		bytes = e->run_bytes;
		if (!(b = ic_find_slot(d, e, 1, ip + bytes)))
			return NULL;
	}
	struct ic_blk *k = &d->icb[i];
	k->key = e->ip;
	k->target = b->target;
	k->run_bytes = (uint16_t)bytes;
	k->n = (uint8_t)n;
	k->blen = b->len;
	k->cls = b->cls;
	k->flags = b->flags;
	return k;
}

/* The block at @ip (the cache key @key) reached from the block @k by its
 * way @s: through k's link, else the hash (and the link then set).  NULL
 * when the instruction there is not cached or its block not known. */
static inline const struct ic_blk *blk_next(struct rtit_flow_dec *d, const struct ic_blk *icb,
					    const struct ic_blk *k, unsigned s, uint64_t ip,
					    uint64_t key)
{
	const struct ic_blk *f = &icb[k->next[s]];
	if (f->key == key)
		return f;
	const struct ic_ent *e = ic_find(d, ip);
	if (!e)
		return NULL;
	uint32_t i = (uint32_t)(e - d->ic);
	f = &icb[i];
	if (f->key != key && !(f = blk_fill(d, i, ip)))
		return NULL;
	((struct ic_blk *)k)->next[s] = i;	/* an entry of d->icb */
	return f;
}

/* The fast path's blocks, allocated at its first use; false when there is
 * no memory for them (the walk then goes one step at a time). */
static bool blk_table(struct rtit_flow_dec *d)
{
	if (!d->icb)
		d->icb = calloc((size_t)d->ic_mask + 1, sizeof(*d->icb));
	return d->icb != NULL;
}

/*
 * Block mode, a block the walk commits as it takes it (a TNT bit) with
 * nothing in the batch: straight into the blocks, as flow_blocks_out
 * folds the record block_rec would make (the template's fields, the
 * branch's class, length and flags): it continues the open block when it
 * starts at that block's next IP, and its branch ends it.  The batch's
 * committed records are folded first, so the order stays.
 */
static void block_direct(struct rtit_flow_dec *d, const struct ic_blk *b, uint64_t ip,
			 uint64_t bip, uint64_t next, uint8_t fl)
{
	if (d->ncommit)
		flow_flush_committed(d);
	struct rtit_flow_block *k = &d->blk[d->nblk];
	uint32_t n = b->n;

	if (d->cur_open && ip != k->next_ip) {
		block_done(d);
		k = &d->blk[d->nblk];
	}
	if (!d->cur_open) {
		k->ip = ip;
		k->kind = RTIT_SIM_INSN;	/* the template's kind */
		k->ninsn = n + 1;
	} else {
		k->ninsn += n + 1;
	}
	/* block_last's fields, each written once */
	const struct rtit_sim_rec *t = &d->tmpl;
	k->last_ip = bip;
	k->len = b->blen;
	k->next_ip = next;
	k->cr3 = t->cr3;
	k->cycles = t->cycles;
	k->tsc = t->tsc;
	k->cls = b->cls;
	k->flags = t->flags | fl;
	k->ann = t->pad0;
	k->cpl = t->cpl;
	k->mode = t->mode;
	k->vector = t->vector;
	d->cur_open = true;
	block_done(d);
	d->st.insns += n + 1;
	d->walked = 0;
}

/*
 * Block mode: the block @b from @ip (a run of b->n plain instructions and
 * the branch at @bip, to @next), taken as the walk would take it:
 * flow_run's record and the branch's made one (pad1: n + 1, value: the
 * branch's IP; flow_blocks_out folds it as the two), walked counted,
 * committed when the branch used a TNT bit (@used): then straight into
 * the blocks after the records before it (block_direct), which the bit
 * commits with it (the same blocks, folded in the same order, D157).
 */
static void block_rec(struct rtit_flow_dec *d, const struct ic_blk *b, uint64_t ip,
		      uint64_t bip, uint64_t next, uint8_t fl, int used)
{
	uint32_t n = b->n;

	if (n)
		d->prev_nlip = bip;	/* as flow_run */
	d->ip = bip;
	if (used == 1 && !d->tip_held) {
		/* the bit commits the records walked before it as it would
		 * commit this one's (commit): they are folded first */
		if (d->nbatch != d->ncommit)
			commit(d);
		block_direct(d, b, ip, bip, next, fl);
		return;
	}
	struct rtit_sim_rec *r = rec_new(d, n + 1);
	*r = d->tmpl;
	r->ip = ip;
	r->pad1 = n ? n + 1 : 0;
	r->value = bip;
	r->len = b->blen;
	r->cls = b->cls;
	r->next_ip = next;
	r->flags |= fl;
	d->walked += n + 1;
	if (used == 2)
		commit_tip(d);
	else if (used)
		commit(d);
}

/*
 * Intel PT, TNT bits pending (D155): the walk from @e (the cached
 * instruction at d->ip, tracing on) taken a block at a time while bits
 * remain: the run of plain instructions (D97) and the branch after it,
 * when that branch is one the walk takes from the pending bits alone with
 * no packet (SDM 33.4.2.1: every FUP, TIP and PIP waits until the bits
 * before it are out, so none is due; the walk's own rule, D21): a
 * conditional branch (a bit), a RET compressed (a taken bit and a return
 * address on the stack, 33.4.2.2), a direct JMP or CALL (no packet, Table
 * 33-1).  Anything else (a bit the branch cannot take, an empty stack, an
 * instruction not cached, max_walk) is left to flow_pt_walk, which
 * reports it as before.  The records, commits, counts and state are those
 * the one-at-a-time walk makes; in block mode a block's run and its
 * branch are one record (pad1 instructions, the last at value, len its
 * length: flow_blocks_out folds it as the two).  With no bit pending, a
 * TNT in view is taken at the first branch that uses a bit, and a TIP in
 * view at an indirect JMP or CALL, when the walk would take them with
 * nothing else to do (flow_pt_tnt_ready, flow_pt_tip_ready, D156).  A
 * block is one entry of d->icb (struct ic_blk, D157), found from the last
 * one by the branch's way.  With no bit pending and no packet in view,
 * the next packet is read here as the walk's next step reads it (D157):
 * when that ends the walk (the end of the stream, an error), *ret is what
 * flow_pt_walk returns.  Returns the blocks taken.
 */
int flow_pt_tnt_walk(struct rtit_flow_dec *d, const struct ic_ent *e, int *ret)
{
	int steps = 0;
	uint64_t tag = d->ic_tag;
	/* @e may be in a table the cache grew out of (a packet read since
	 * its lookup may decode): the walk takes that step */
	uintptr_t at = (uintptr_t)e - (uintptr_t)d->ic;
	if (at > (uintptr_t)d->ic_mask * sizeof(*e) || !blk_table(d))
		return 0;
	uint32_t i = (uint32_t)(at / sizeof(*e));
	const struct ic_blk *icb = d->icb, *k = &icb[i];
	if (k->key != (d->ip | tag) && !(k = blk_fill(d, i, d->ip)))
		return 0;

	for (;;) {
		uint64_t ip = d->ip, bip, next, bits;
		int nb = d->tnt_n;
		bool tip = false;	/* a TIP in view, no bit pending */
		if (!nb && !d->have_la) {
			/* the walk's next step at d->ip (cached: k, a block
			 * filled, blen set) with no bit pending brings the
			 * next packet into view (pt_walk_packet): read here,
			 * and when it is a TNT or TIP taken as below, the
			 * fast path goes on */
			if (!steps || !k->blen)
				break;
			flow_step_untimed(d);
			int r = flow_pt_peek(d);
			if (r <= 0) {
				*ret = r < 0 ? r : flow_walk_end(d);
				break;
			}
			if (d->icb != icb || d->ic_tag != tag || d->fenced)
				break;	/* it decoded, or a fault was read
					 * ahead (D163): the walk goes on */
		}
		bits = d->tnt_bits;
		if (!nb) {
			/* the TNT in view, taken at the branch, or the TIP
			 * in view, at an indirect JMP or CALL (D156) */
			if (flow_pt_tnt_ready(d, false)) {
				bits = d->la.pkt.u.tnt.bits;
				nb = d->la.pkt.u.tnt.nbits;
			} else if (flow_pt_tip_ready(d)) {
				tip = true;
			} else {
				break;
			}
		}
		flow_step_untimed(d);	/* as at each step of the walk */
		uint32_t n = k->n;
		if (d->walked + n + 1 > d->cfg.max_walk)
			break;
		bip = ip + k->run_bytes;
		next = bip + k->blen;
		uint8_t fl = RTIT_SIM_F_TAKEN;
		bool bit = tip || ((bits >> (nb - 1)) & 1), used = true;
		if (k->flags & IC_END)
			return steps;	/* the walk's error (D192) */
		switch (k->cls) {
		case RTIT_IC_INDIRECT_JMP: case RTIT_IC_INDIRECT_CALL:
			if (!tip)
				return steps;	/* the walk takes its TIP */
			next = d->la.ip;
			break;
		case RTIT_IC_COND:
			if (tip || (bit && (k->flags & IC_LEAVES)))
				return steps;	/* the walk's error (D173) */
			if (bit)
				next = k->target;
			else
				fl = 0;
			break;
		case RTIT_IC_RET:
			if (tip || !bit || !d->rs.depth)
				return steps;	/* the walk's error */
			break;
		case RTIT_IC_DIRECT_CALL: case RTIT_IC_DIRECT_JMP:
			if (k->flags & IC_LEAVES)
				return steps;	/* its TIP.PGD, or the walk's error */
			if (k->cls == RTIT_IC_DIRECT_CALL && (k->flags & IC_ZLC))
				fl |= RTIT_SIM_F_ZERO_LEN_CALL;
			next = k->target;
			used = false;
			break;
		default:
			return steps;
		}
		if (used && !d->tnt_n && !tip && !flow_pt_tnt_ready(d, true))
			break;	/* the walk reports the TIP.PGE ahead */
		/* block mode: one record, when it fits (flow_run_fits) */
		bool fold = d->cfg.on_block && (used || flow_run_fits(d, n + 1));
		if (n && !fold)
			flow_run(d, &d->ic[i]);	/* d->ip = bip */
		if (used) {
			/* the TNT (TIP) in view is taken at the branch, after
			 * the run's records (their time: consume), as the walk
			 * takes it (pt_walk_cond_ret, pt_walk_indirect);
			 * flow_pt_tnt_ready (tip_ready) checked what take_tnt
			 * (take_tip) checks */
			if (tip) {
				flow_pt_take_tip(d);
			} else {
				if (!d->tnt_n)
					flow_pt_take_tnt(d);
				d->tnt_n--;	/* before the branch's record (its offset) */
			}
		}
		if (k->cls == RTIT_IC_RET) {
			/* flow_ret_compressed: the stack pops (33.4.2.2) */
			d->rs.top = (d->rs.top + rtit_pt_stack_depth - 1) % rtit_pt_stack_depth;
			d->rs.depth--;
			next = d->rs.ip[d->rs.top] & flow_pt_ip_mask(d);
		}
		if (fold) {
			block_rec(d, k, ip, bip, next, fl, used && tip ? 2 : used);
		} else {
			struct rtit_sim_rec *r = rec_new(d, 1);	/* flow_insn_rec's */
			*r = d->tmpl;
			r->ip = bip;
			r->len = k->blen;
			r->cls = k->cls;
			r->next_ip = next;
			r->flags |= fl;
			d->walked++;
			if (used && tip)	/* a direct JMP or CALL leaves the TIP in view */
				commit_tip(d);
			else if (used)
				commit(d);
		}
		/* as flow_on_call (an indirect CALL: as pt_walk_indirect);
		 * a zero-length CALL's NLIP is not pushed there either */
		if ((k->cls == RTIT_IC_DIRECT_CALL && !(k->flags & IC_ZLC)) ||
		    k->cls == RTIT_IC_INDIRECT_CALL)
			rtit_pt_calls_push(&d->rs, (bip + k->blen) & flow_pt_ip_mask(d));
		d->ip = next;
		steps++;
		if (!(k = blk_next(d, icb, k, k->cls != RTIT_IC_COND || bit, next, next | tag)))
			break;
		i = (uint32_t)(k - icb);
	}
	return steps;
}
