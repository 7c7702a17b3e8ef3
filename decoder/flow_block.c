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
 * time (docs/decisions.md D97).
 */
#include <string.h>

#include "flow_internal.h"

/* The longest run taken in one step (ic_ent's fields); a longer one is
 * taken in several. */
enum { RUN_MAX_N = 255, RUN_MAX_BYTES = 0xffff - 15 };
_Static_assert(sizeof(struct ic_ent) == 24, "the instruction cache entry stays 24 bytes");

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
		f = ic_find(d, ip + bytes);
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
 * one record for the run (pad1: its length, value: its last IP; folded by
 * flow_blocks_out).  The walk goes on after it.
 */
void flow_run(struct rtit_flow_dec *d, const struct ic_ent *e)
{
	uint64_t ip = d->ip;
	uint32_t n = e->run;

	d->walked += n;
	if (d->cfg.on_block) {
		struct rtit_sim_rec *r = rec_new(d);
		*r = d->tmpl;
		r->ip = ip;
		r->cls = RTIT_IC_OTHER;
		r->len = 0;
		r->value = ip + e->run_bytes - e->run_lastlen;
		r->next_ip = ip + e->run_bytes;
		r->pad1 = n;
		d->ip = r->next_ip;
		d->prev_nlip = d->ip;
		return;
	}
	for (uint32_t i = 0; i < n; i++) {
		if (i && !(e = ic_find(d, ip))) {	/* cannot happen: scanned */
			d->walked -= n - i;
			break;
		}
		struct rtit_sim_rec *r = rec_new(d);
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
 * Block mode: folds @n committed records into blocks (flow.h, struct
 * rtit_flow_block) and hands out the complete ones; the last stays open
 * until a record that ends it, a note or the end.  Counts the
 * instructions of run records in the stats (each is counted as one record
 * by the caller).
 */
void flow_blocks_out(struct rtit_flow_dec *d, const struct rtit_sim_rec *recs, size_t n)
{
	uint64_t extra = 0;
	struct rtit_flow_block *b = &d->blk[d->nblk];
	const struct rtit_sim_rec *last = NULL;	/* the open block's last record here */

	for (size_t i = 0; i < n; i++) {
		const struct rtit_sim_rec *r = &recs[i];
		if (d->cur_open && (r->kind != RTIT_SIM_INSN || r->ip != b->next_ip)) {
			if (last)
				block_last(b, last);
			block_done(d);
			b = &d->blk[d->nblk];
		}
		if (!d->cur_open) {
			b->ip = r->ip;
			b->kind = r->kind;
			b->ninsn = 0;
			d->cur_open = true;
		}
		last = r;
		b->next_ip = r->next_ip;
		if (r->kind != RTIT_SIM_INSN) {
			/* an event: a block of its own */
			b->last_ip = r->ip;
			b->len = 0;
		} else if (r->pad1) {
			/* a run record (flow_run) */
			b->ninsn += r->pad1;
			b->last_ip = r->value;
			b->len = (uint8_t)(r->next_ip - r->value);
			extra += r->pad1 - 1;
			continue;
		} else {
			b->ninsn++;
			b->last_ip = r->ip;
			b->len = r->len;
			if (r->cls == RTIT_IC_OTHER && r->next_ip == r->ip + r->len)
				continue;
		}
		block_last(b, r);
		last = NULL;
		block_done(d);
		b = &d->blk[d->nblk];
	}
	if (last)
		block_last(b, last);
	d->st.insns += extra;
	blocks_hand_out(d);
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
