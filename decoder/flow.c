/*
 * flow.c - the instruction-flow decoder (include/rtit/flow.h): the records,
 * the instruction cache, the end of the stream, and RTIT's walk (Intel
 * PT's is decoder/flow_pt.c).
 *
 * The inverse of encoder/rtit/rtit_model.c (on_op, RTIT Table 19): the walk
 * stands at an IP with the next significant packet in view (timing
 * packets, PIP and PSB are consumed on the way) and the TNT bits not yet
 * used.  While TNT bits are pending, no IP packet can be due (every FUP,
 * TIP and PIP forces the partial TNT out first, 4.2.2), which is what
 * makes the walk unambiguous:
 *   - with no bits pending and a FUP.FAR/FUP.PGD/FUP.BuffOvf/FUP.PGE in
 *     view whose IP is the current IP, the event happens here (before
 *     the instruction: a fault's CLIP or an interrupt's NLIP, Table 1);
 *   - a FUP.PGD whose IP is the NLIP of the instruction just walked ends
 *     tracing after it (rows 3/4, 8/9, 15/19, 24/25, 43/44 send the NLIP);
 *   - a far instruction takes FUP.FAR(NLIP) + TIP, or FUP.PGD(NLIP)
 *     [+ TIP] (rows 27-33).
 * Instructions walked since the last packet are provisional: they are
 * dropped when the stream says nothing more about them (overflow, a
 * TraceSTOP, the end of the stream), since an event might have cut them.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow_internal.h"
#include "rtit/pt_errata.h"
#include "rtit/ip.h"
#include "rtit/msr_rtit.h"

void rtit_flow_cfg_default(struct rtit_flow_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->mode = 64;
	cfg->batch_cap = 1024;
	cfg->max_walk = 1u << 22;
	cfg->max_hold = 1u << 16;
	cfg->overflows_total = -1;
	cfg->cr0_pg = 1;
}

int rtit_flow_dec_new(struct rtit_flow_dec **dp, const struct rtit_flow_cfg *cfg)
{
	struct rtit_flow_dec *d;
	struct rtit_pktdec_cfg pc;

	if (!dp || !cfg || !cfg->read_mem || (!cfg->read && !cfg->mem && cfg->mem_len))
		return -RTIT_ERR_INVALID;
	if ((cfg->mode && cfg->mode != 64 && cfg->mode != 32) ||
	    (cfg->dialect != RTIT_DIALECT_RTIT && cfg->dialect != RTIT_DIALECT_PT))
		return -RTIT_ERR_BAD_CONFIG;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -RTIT_ERR_NOMEM;
	d->cfg = *cfg;
	if (!d->cfg.mode)
		d->cfg.mode = 64;
	if (!d->cfg.batch_cap)
		d->cfg.batch_cap = 1024;
	if (!d->cfg.max_walk)
		d->cfg.max_walk = 1u << 22;
	if (!d->cfg.art_num || !d->cfg.art_den)
		d->cfg.art_num = d->cfg.art_den = 1;
	if (!d->cfg.max_hold)
		d->cfg.max_hold = 1u << 16;
	d->cap = d->cfg.batch_cap;
	/* a batch is handed out at cap records; the records walked with no
	 * packet since (D199) wait beside it, up to max_hold more: the array
	 * grows only for a walk that long (flow_batch_full) */
	d->hold = d->cfg.max_hold < d->cap ? d->cap : d->cfg.max_hold;
	d->alloc = d->cap;
	d->batch = malloc(d->alloc * sizeof(*d->batch));
	d->offs = malloc(d->alloc * sizeof(*d->offs));
	d->offs_out = d->offs;
	/* 2048 entries of 32 bytes: 64 KiB, below malloc's trim and mmap
	 * thresholds (a decoder made per input stays cheap, D155) */
	d->ic_mask = (1u << 11) - 1;
	d->ic = calloc(d->ic_mask + 1, sizeof(*d->ic));
	if (d->cfg.on_block)
		d->blk = malloc(d->cap * sizeof(*d->blk));
	if (!cfg->read)
		d->pb = malloc(FLOW_PB * sizeof(*d->pb));
	if (!d->batch || !d->offs || !d->ic || (d->cfg.on_block && !d->blk) ||
	    (!cfg->read && !d->pb)) {
		rtit_flow_dec_free(d);
		return -RTIT_ERR_NOMEM;
	}
	ZydisDecoderInit(&d->zd, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	ZydisDecoderInit(&d->zd32, ZYDIS_MACHINE_MODE_LONG_COMPAT_32, ZYDIS_STACK_WIDTH_32);
	ZydisDecoderInit(&d->zd16, ZYDIS_MACHINE_MODE_REAL_16, ZYDIS_STACK_WIDTH_16);
	d->ic_tag = d->cfg.mode == 32 ? FLOW_IC_TAG32 : 0;
	d->pt = d->cfg.dialect == RTIT_DIALECT_PT;
	memset(&pc, 0, sizeof(pc));
	pc.dialect = d->pt ? RTIT_DIALECT_PT : RTIT_DIALECT_RTIT;
	pc.cycle_acc = cfg->cycle_acc;
	pc.buffovf_loads_lip = cfg->buffovf_loads_lip;
	pc.read = cfg->read;
	pc.opaque = cfg->read_opaque;
	pc.mem = cfg->mem;
	pc.mem_len = cfg->mem_len;
	/* SKZ84's workaround is a packet rule, as libipt's (D143) */
	pc.pt_skz84 = (cfg->pt_errata & RTIT_PT_ERRATUM(RTIT_PT_SKZ84)) != 0;
	pc.pt_skd007 = (cfg->pt_errata & RTIT_PT_ERRATUM(RTIT_PT_SKD007)) != 0;
	if (rtit_pktdec_init(&d->pd, &pc) < 0) {
		rtit_flow_dec_free(d);
		return -RTIT_ERR_INVALID;
	}
	d->tmpl.kind = RTIT_SIM_INSN;
	/* CR0.PG where the trace starts (RTIT 4.2.10, issue 16 point 9, D80) */
	d->pg_known = d->cfg.cr0_pg >= 0;
	if (d->cfg.cr0_pg > 0)
		d->tmpl.flags |= RTIT_SIM_F_CR0_PG;
	d->tmpl.mode = (uint8_t)d->cfg.mode;
	d->state = ST_DISABLED;
	d->prev_nlip = NO_IP;
	d->if_pend = -1;
	d->if_last = -1;
	*dp = d;
	return 0;
}

void rtit_flow_dec_free(struct rtit_flow_dec *d)
{
	if (!d)
		return;
	free(d->batch);
	free(d->offs);
	free(d->blk);
	free(d->pb);
	free(d->ic);
	free(d->icb);
	for (unsigned i = 0; i < d->n_ic_old; i++)
		free(d->ic_old[i]);
	free(d);
}

const struct rtit_flow_stats *rtit_flow_dec_stats(const struct rtit_flow_dec *d)
{
	return &d->st;
}

const uint64_t *rtit_flow_dec_batch_offsets(const struct rtit_flow_dec *d)
{
	return d->offs_out;
}

/* ------------------------------------------------------------ records */

void flow_batch_full(struct rtit_flow_dec *d)
{
	if (d->ncommit) {
		flow_flush_committed(d);
		return;
	}
	if (d->nbatch < d->alloc)
		return;		/* provisional records past cap: room left */
	size_t n = d->alloc * 2 < d->cap + d->hold ? d->alloc * 2 : d->cap + d->hold;
	struct rtit_sim_rec *b = n > d->alloc ? realloc(d->batch, n * sizeof(*b)) : NULL;
	if (b)
		d->batch = b;
	uint64_t *o = b ? realloc(d->offs, n * sizeof(*o)) : NULL;
	if (o) {
		d->offs = o;
		d->offs_out = o;
		d->alloc = n;
		return;
	}
	/* at cap + hold, or no memory: D98 */
	d->ncommit = d->nbatch;
	d->nprov = 0;
	d->tip_held = false;
	flow_flush_committed(d);
}

void flow_flush_committed(struct rtit_flow_dec *d)
{
	size_t n = d->ncommit;
	if (!n)
		return;
	if (d->cfg.on_block)
		flow_blocks_out(d, d->batch, n);
	else if (d->cfg.on_rec) {
		/* at most cap records a call: a long walk held back (D199)
		 * may have been established at once */
		for (size_t i = 0; i < n; i += d->cap) {
			d->offs_out = d->offs + i;
			d->cfg.on_rec(d->cfg.opaque, d->batch + i, n - i < d->cap ? n - i : d->cap);
		}
		d->offs_out = d->offs;
	}
	d->st.insns += n;	/* events are subtracted when made */
	if (d->nbatch > n) {
		memmove(d->batch, d->batch + n, (d->nbatch - n) * sizeof(*d->batch));
		memmove(d->offs, d->offs + n, (d->nbatch - n) * sizeof(*d->offs));
	}
	d->nbatch -= n;
	d->ncommit = 0;
	if (d->tip_held)
		d->tip_mark -= n;
}



void flow_note(struct rtit_flow_dec *d, int kind, uint64_t off, uint64_t ip, uint64_t count)
{
	struct rtit_flow_note n = { .kind = kind, .offset = off, .ip = ip, .count = count };
	if (d->fenced && kind != RTIT_FLOW_N_ERROR)
		return;		/* an error is certain: what comes before it is dropped (D163) */
	if (kind != RTIT_FLOW_N_ERROR)
		flow_tip_settle(d);
	flow_flush_committed(d);
	if (d->cfg.on_block)
		flow_blocks_close(d);
	if (kind == RTIT_FLOW_N_ERROR) {
		n.code = -d->err_code;	/* flow.h: -RTIT_ERR_x */
		n.msg = d->msg;
		n.ip = d->err_ip;
	}
	if (d->cfg.on_note)
		d->cfg.on_note(d->cfg.opaque, &n);
}

/* Drops the provisional records (walked past the last packet). */
void flow_drop_uncertain(struct rtit_flow_dec *d, uint64_t off)
{
	flow_tip_settle(d);
	uint64_t n = d->nbatch - d->ncommit;
	if (n && d->cfg.on_block)
		n = flow_blocks_insns(d->batch + d->ncommit, n);
	d->nbatch = d->ncommit;
	d->nprov = 0;
	d->walked = 0;
	if (n) {
		d->st.dropped += n;
		flow_note(d, RTIT_FLOW_N_UNCERTAIN, off, d->ip, n);
	}
}

/* ------------------------------------------------------------- errors */

int flow_fail(struct rtit_flow_dec *d, int code, uint64_t off, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(d->msg, sizeof(d->msg), fmt, ap);
	va_end(ap);
	d->err_code = code;
	d->err_off = off;
	d->err_ip = d->ip;
	return -code;
}

/* The walk is to run a UD0, UD1 or UD2 (at d->ip) as a plain
 * instruction: each raises #UD, always (SDM Vol. 2B UD), so the stream
 * needed the exception's FUP at its IP (RTIT Table 1: FUP.FAR(CLIP); SDM
 * Table 33-55 case 12: FUP(CLIP), TIP), where another packet is (D225). */
int flow_fail_ud(struct rtit_flow_dec *d)
{
	return flow_fail(d, RTIT_ERR_BAD_CONTEXT, d->have_la && !d->tnt_n ? d->la.offset : d->last_off,
			 "the UD0/UD1/UD2 at 0x%" PRIx64 " always raises #UD (SDM Vol. 2B UD):"
			 " the exception's FUP(0x%" PRIx64 ") is due there; the next packet is %s",
			 d->ip, d->ip, d->tnt_n ? "a TNT bit of a later branch" : flow_la_name(d));
}

const char *flow_la_name(const struct rtit_flow_dec *d)
{
	return d->have_la ? rtit_pkt_name(d->la.pkt.type) : "the end of the trace";
}

/* ------------------------------------------------------------ packets */

static void apply_pip(struct rtit_flow_dec *d, const struct rtit_packet *p)
{
	d->tmpl.cr3 = p->u.pip.cr3;
	d->pg_known = true;
	if (p->u.pip.pg)
		d->tmpl.flags |= RTIT_SIM_F_CR0_PG;
	else
		d->tmpl.flags &= (uint8_t)~RTIT_SIM_F_CR0_PG;
}

/* The next packet from the packet layer.  1: a packet in *it, 0: the end
 * of the stream, < 0: an error (bad bytes: the reason in d->msg). */
static int read_packet(struct rtit_flow_dec *d, struct rtit_pktdec_item *it);

/*
 * The error just made (d->err_code, err_off, err_ip, msg) is a fault among
 * the packets read ahead, not yet reached: it is kept, and from now on
 * nothing is committed (commit, rec_new) or noted (flow_note), the fast
 * steps are off, and the walk goes on with the packets before it.  A
 * fault the walk finds there comes first, at its own packet; else this
 * one, when the walk reaches fence_off (fence_fire).  Either way the
 * records made in between are dropped as an error's provisional ones
 * are, so the records handed out are those the error at detection gave,
 * and the error named is the first in the stream's order (D163).
 */
void flow_fence(struct rtit_flow_dec *d)
{
	if (!d->fenced)
		d->fence_st = d->st;
	if (!d->fenced || d->err_off < d->fence_off) {
		d->fenced = true;
		d->fence_walk = false;
		d->fence_code = d->err_code;
		d->fence_off = d->err_off;
		d->fence_ip = d->err_ip;
		memcpy(d->fence_msg, d->msg, sizeof(d->msg));
	}
	d->err_code = 0;
	d->msg[0] = 0;
}

static void rtit_r_ahead_check(struct rtit_flow_dec *d, const struct rtit_pktdec_item *it);

/* flow_fence for the fault just made at the packet read ahead at @off,
 * which the walk's own checks report when it gets there (D196). */
void flow_fence_walk(struct rtit_flow_dec *d, uint64_t off)
{
	flow_fence(d);
	if (d->fence_off == off)
		d->fence_walk = true;
}

/* Whether the walk, about to read the packet at @off, has reached the
 * fault flow_fence kept.  One the walk's own checks find (fence_walk) is
 * handed to the walk, which reports it there, or an earlier packet it
 * was read to judge (an EVD's CFE, D84); should the walk take it, the
 * next packet fires it (D196). */
static inline bool fence_due(const struct rtit_flow_dec *d, uint64_t off)
{
	return d->fenced && (off > d->fence_off || (off == d->fence_off && !d->fence_walk));
}

/* The walk reached the fault flow_fence kept: it is the error, with the
 * walk's IP now when the walk's checks would have found it (D196). */
static int fence_fire(struct rtit_flow_dec *d)
{
	d->err_code = d->fence_code;
	d->err_off = d->fence_off;
	d->err_ip = d->fence_walk ? d->ip : d->fence_ip;
	memcpy(d->msg, d->fence_msg, sizeof(d->msg));
	return -d->fence_code;
}

/* One more packet into the ring (room checked by the caller). */
static inline int ahead_read(struct rtit_flow_dec *d)
{
	struct rtit_pktdec_item *a = &d->ahead[(d->ahead_head + d->ahead_n) % FLOW_RING];
	int r = read_packet(d, a);
	if (r == 1) {
		d->ahead_watch += flow_ahead_watched(a);
		d->ahead_sig += a->pkt.type != RTIT_PT_PAD;
		d->ahead_n++;
		/* a TNT with tracing not known off, the most frequent
		 * packet, needs no check (D196); in RTIT a full one after
		 * no partial one */
		bool tnt = a->pkt.type == RTIT_R_TNT || a->pkt.type == RTIT_PT_TNT8;
		bool plain_tnt = tnt && d->ahead_en != FLOW_AH_OFF && d->ahead_en != FLOW_AH_OFF_PGD &&
				 (d->pt || (!d->ahead_partial &&
					    a->pkt.u.tnt.nbits == rtit_r_tnt_max_bits));
		if (plain_tnt)
			return r;
		if (!d->pt)
			rtit_r_ahead_check(d, a);
		else if (((FLOW_PT_AHEAD_TYPES >> a->pkt.type) & 1) && !d->cfg.events_only)
			flow_pt_ahead_check(d, a);
	}
	return r;
}

/*
 * The next packet, read FLOW_AHEAD packets ahead: when one of those is
 * malformed, that error comes now and the packets before it are not used
 * (D137).  The bytes a single corruption turns into valid packets (a TNT
 * from a header, packets from a payload) are mostly followed within a few
 * packets by bytes that are no packet; the records the valid-looking ones
 * would give are then not established.  A stream that ends inside a
 * packet is not such an error: it comes when the packets before it are
 * used up.
 */
int flow_next_packet(struct rtit_flow_dec *d, struct rtit_pktdec_item *it)
{
	enum { ring = FLOW_RING };

	if (d->have_stash) {
		*it = d->stash;
		d->have_stash = false;
		if (fence_due(d, it->offset))
			return fence_fire(d);
		return 1;
	}
	while (d->ahead_n < ring && d->ahead_sig <= FLOW_AHEAD && !d->eos && !d->ahead_err) {
		int r = ahead_read(d);
		if (r == -RTIT_ERR_EOS) {
			d->ahead_err = r;
		} else if (r < 0 && (r == -RTIT_ERR_IO || !d->ahead_n)) {
			return r;
		} else if (r < 0) {
			/* bad bytes after the packets read ahead: the error
			 * is certain, the packets before it are walked for
			 * an earlier one (D163) */
			d->ahead_err = r;
			flow_fence(d);
		}
	}
	if (!d->ahead_n) {
		int r = d->ahead_err;
		d->ahead_err = 0;
		if (d->fenced)
			return fence_fire(d);	/* the bad bytes reached */
		return r;	/* the cut packet's error, or the end */
	}
	if (fence_due(d, d->ahead[d->ahead_head].offset))
		return fence_fire(d);
	*it = d->ahead[d->ahead_head];
	d->ahead_watch -= flow_ahead_watched(it);
	d->ahead_sig -= it->pkt.type != RTIT_PT_PAD;
	d->ahead_head = (d->ahead_head + 1) % ring;
	d->ahead_n--;
	return 1;
}

/*
 * The @k-th packet after those in use (the stash first, then the ring),
 * for a question the packets in the ring may not settle (erratum APL12's
 * look-ahead, D102, D178): the ring is read past FLOW_AHEAD, up to
 * FLOW_RING packets.  NULL when the stream ends (flow_ahead_ended then
 * says so), a fault comes (kept as flow_next_packet keeps it) or the ring
 * is full first.  Nothing is consumed or applied.
 */
const struct rtit_pktdec_item *flow_ahead_peek(struct rtit_flow_dec *d, unsigned k)
{
	enum { ring = FLOW_RING };

	if (d->have_stash) {
		if (!k)
			return &d->stash;
		k--;
	}
	while (k >= d->ahead_n) {
		if (d->ahead_n == ring || d->eos || d->ahead_err)
			return NULL;
		int r = ahead_read(d);
		if (r == 1)
			continue;
		if (!r)
			return NULL;
		/* as flow_next_packet: the error comes when the packets
		 * before it are used up, bad bytes fenced (D163) */
		d->ahead_err = r;
		if (r != -RTIT_ERR_EOS && r != -RTIT_ERR_IO && d->ahead_n)
			flow_fence(d);
		return NULL;
	}
	const struct rtit_pktdec_item *it = &d->ahead[(d->ahead_head + k) % ring];
	if (d->fenced && it->offset >= d->fence_off)
		return NULL;
	return it;
}

/* The packets read ahead reach the stream's end, or a packet it cuts. */
bool flow_ahead_ended(const struct rtit_flow_dec *d)
{
	return (d->eos && !d->ahead_err) || d->ahead_err == -RTIT_ERR_EOS;
}

static int read_packet(struct rtit_flow_dec *d, struct rtit_pktdec_item *it)
{
	if (d->eos)
		return 0;
	int r = 0;
	if (d->pb) {
		/* a trace in memory: the batch call, the same packets and errors
		 * as one at a time (rtit_pktdec_next_batch, D99) */
		if (d->pb_i == d->pb_n) {
			d->pb_i = d->pb_n = 0;
			r = rtit_pktdec_next_batch(&d->pd, d->pb, FLOW_PB);
			if (r > 0)
				d->pb_n = (unsigned)r;
		}
		if (d->pb_i < d->pb_n) {
			*it = d->pb[d->pb_i++];
			r = 1;
		}
	} else {
		r = rtit_pktdec_next(&d->pd, it);
	}
	if (r == 0) {
		d->eos = true;
		return 0;
	}
	if (r < 0) {
		if (r == -RTIT_ERR_IO)
			return r;
		snprintf(d->msg, sizeof(d->msg), "bad packet bytes: %s",
			 d->pd.err.why ? d->pd.err.why : rtit_errstr(r));
		d->err_code = -r;
		d->err_off = d->pd.err.offset;
		d->err_ip = d->ip;
		return r;
	}
	d->st.packets++;
	return 1;
}

/* RTIT errata E3 (the PSB one packet late) and E8 (packets after a PSB
 * out of order) tolerated: where packets stand is not the rule's (D17),
 * so the order and compression checks of D142 are off.  The sideband's
 * params e3/e8 set these bits of cfg.errata (flow_sideband.c). */
enum { FLOW_R_E3 = 1u << 3, FLOW_R_E8 = 1u << 8 };

static bool errata_move_packets(const struct rtit_flow_dec *d)
{
	return d->cfg.errata & (FLOW_R_E3 | FLOW_R_E8);
}

/* RTIT: @it passed the checks of a packet by itself as the ring read it
 * (rtit_r_ahead_check), so peek and flow_set_la need not make them again;
 * the fault kept there is the walk's to find (fence_due, D196). */
static inline bool rtit_r_checked_ahead(const struct rtit_flow_dec *d,
					const struct rtit_pktdec_item *it)
{
	return !d->pt && !errata_move_packets(d) &&
	       !(d->fenced && d->fence_walk && it->offset == d->fence_off);
}

/* RTIT: the CNT and Zext of @it's LIP are those RTIT Table 18 gives for
 * it against the LAST_LIP it was compressed with (4.2.3.1: the table is a
 * function of the matches and zeroes, Zext first, D3), as the packet
 * decoder tracked it (D142); with cfg.r_lip_exact only (a run's trace).
 * Not under E3 or E8, whose PSB or packets move.  @ahead: read ahead, the
 * walk not yet where it will stand (D196).  1, or the error. */
static int rtit_r_lip_check(struct rtit_flow_dec *d, const struct rtit_pktdec_item *it, bool ahead)
{
	struct rtit_last_ip l;
	struct rtit_pkt_ip want;

	if (!d->cfg.r_lip_exact || errata_move_packets(d))
		return 1;
	rtit_last_ip_init(&l, RTIT_DIALECT_RTIT);
	l.ip = it->last_ip;
	l.valid = it->last_ip_valid;
	rtit_last_ip_choose(&l, it->ip, &want);
	if (want.ipc == it->pkt.u.ip.ipc && want.zext == it->pkt.u.ip.zext)
		return 1;
	/* The walk stands at an IP the image has no byte of, where the last
	 * packet used sent it: that is the earlier of the two faults (the
	 * walk needs the instruction there before this packet can bind), and
	 * the one reported, at that packet (D139). */
	uint8_t b;
	if (!ahead && d->state == ST_ENABLED && d->ip != NO_IP &&
	    d->cfg.read_mem(d->cfg.mem_opaque, d->ip, &b, 1) < 0)
		return flow_fail(d, RTIT_ERR_NOMAP, d->used_off,
				 "no memory mapped at 0x%" PRIx64 ", where the packet at offset 0x%"
				 PRIx64 " sends the flow (the next one, %s at 0x%" PRIx64
				 ", is not compressed as RTIT Table 18 gives either)",
				 d->ip, d->used_off, rtit_pkt_name(it->pkt.type), it->offset);
	return flow_fail(d, RTIT_ERR_BAD_PACKET, it->offset,
			 "%s 0x%" PRIx64 " sent with CNT=%u Zext=%u; against LAST_LIP 0x%" PRIx64
			 "%s RTIT Table 18 gives CNT=%u Zext=%u (4.2.3.1)",
			 rtit_pkt_name(it->pkt.type), it->ip, it->pkt.u.ip.ipc, it->pkt.u.ip.zext,
			 it->last_ip, it->last_ip_valid ? "" : " (cleared)", want.ipc, want.zext);
}

/* RTIT Table 7 (3.3.5): whether Event ID @id holds at @ip, the target of
 * a taken branch or event or an IP reached in sequence: 1 yes, 0 no
 * (the reserved IDs act as "always off", D15).  RANGE0 is [LIP0, LIP2),
 * RANGE1 [LIP1, LIP3), compared on the 48 bits of a LIP (Table 8). */
static int rtit_r_event_at(const struct rtit_flow_cfg *c, unsigned id, uint64_t ip)
{
	ip &= RTIT_R_LIP_MASK;
	bool r0 = c->r_lip[0] <= ip && ip < c->r_lip[2];
	bool r1 = c->r_lip[1] <= ip && ip < c->r_lip[3];

	switch (id) {
	case RTIT_R_EVID_RANGE0:
		return r0;
	case RTIT_R_EVID_RANGE1:
		return r1;
	case RTIT_R_EVID_RANGE01:
		return r0 || r1;
	case RTIT_R_EVID_ALWAYS_ON:
		return 1;
	default:
		return 0;
	}
}

/* RTIT Table 19 rows 30-31: after a far transfer's FUP.PGD, the TIP in
 * view is that transfer's (its BLIP) when FilterEn went to 0 with
 * ContextEn kept.  With RTIT_EVENTS fixed, FilterEn is 1 at the target
 * when the Filter_Event_ID holds there (always on, D142; a range that
 * holds the target, 3.3.5: a taken event landing in it sets FilterEn,
 * D139): then it is rows 32-33, the FUP.PGD alone, and the TIP is not
 * this one's. */
static bool rtit_r_far_pgd_tip(const struct rtit_flow_dec *d, uint64_t at)
{
	unsigned id = (unsigned)(d->cfg.r_events & RTIT_R_EVENTS_FILTER_MASK);

	if (d->la.pkt.type != RTIT_R_TIP)
		return false;
	if (!d->cfg.r_ctl_fixed)
		return true;
	if (rtit_r_event_at(&d->cfg, id, d->la.ip))
		return false;
	/* an event at the walk's IP @at (NO_IP: a far-transfer
	 * instruction's): when @at is the limit of a filter range, out of
	 * the filter, FilterEn went to 0 as the walk got there (3.3.5: an
	 * instruction at the limit IP leaves the range; Table 19 row 3), so
	 * PacketEn was 0 before the event and its FUP.PGD is row 3's */
	if (at == NO_IP)
		return true;
	at &= RTIT_R_LIP_MASK;
	bool limit = (id != RTIT_R_EVID_RANGE1 && at == d->cfg.r_lip[2]) ||
		     (id != RTIT_R_EVID_RANGE0 && at == d->cfg.r_lip[3]);
	return !(id <= RTIT_R_EVID_RANGE01 && limit && !rtit_r_event_at(&d->cfg, id, at));
}

/* RTIT: a TraceSTOP in view while tracing, with RTIT_EVENTS fixed and a
 * range as its TraceStop_Event_ID: the TraceStop action fires when an
 * instruction at the stop range's base executes or a taken branch or event
 * lands in it (3.3.5).  The walk stands at the IP after the last packet
 * used; the stop is there when that IP is in the range, or further on
 * along instructions that send no packet (plain ones, near direct JMPs:
 * Table 19 rows 1 and 6).  A walk along those that leaves the image is
 * the NOMAP error it would be anywhere; one that meets any other
 * instruction first cannot be followed and is let be (D139).  1, or the
 * error. */
static int rtit_r_stop_reached(struct rtit_flow_dec *d)
{
	unsigned id = (unsigned)(d->cfg.r_events >> RTIT_R_EVENTS_STOP_SHIFT) & 7;
	uint64_t ip = d->ip;
	const struct ic_ent *e;
	int r;

	if (!d->cfg.r_ctl_fixed || id > RTIT_R_EVID_RANGE01 || ip == NO_IP)
		return 1;
	for (unsigned n = 0; n < 4096; n++) {
		if (rtit_r_event_at(&d->cfg, id, ip))
			return 1;
		if ((r = ic_get(d, ip, &e)) < 0)
			return r;
		if (flow_plain(e))
			ip += e->len;
		else if (e->cls == RTIT_IC_DIRECT_JMP)
			ip = e->target;
		else
			return 1;
	}
	return 1;
}

/* Intel PT: a FUP gives the IP it binds to (33.4.2.6, Tables 33-22 and
 * 33-23 list no case without one); IPBytes 000b there leaves its event or
 * TSX update with no instruction (libipt: "ip has been suppressed" at it
 * too, D153).  The error at the FUP at @off. */
int flow_pt_fup_noip(struct rtit_flow_dec *d, uint64_t off)
{
	return flow_fail(d, RTIT_ERR_BAD_CONTEXT, off,
			 "FUP with its IP suppressed (IPBytes=000b): it binds to no"
			 " instruction (SDM 33.4.2.6, Table 33-23)");
}

/* Puts @it in view.  1, or an error when its IP is not known. */
static int la_ip_check(struct rtit_flow_dec *d, const struct rtit_pktdec_item *it, bool ahead);

int flow_set_la(struct rtit_flow_dec *d, const struct rtit_pktdec_item *it, bool psb)
{
	d->la.pkt = it->pkt;
	d->la.offset = it->offset;
	d->la.ip = it->ip;
	d->la.ip_status = it->ip_status;
	d->la.psb = psb;
	d->la.if_fup = false;
	d->la.pebs_fup = false;
	d->la.exstop_fup = false;
	d->la.exact = false;
	d->la.cyc = d->t_cyc;
	/* A TNT goes out after the timing packets sent while its bits
	 * waited (they do not flush it, RTIT 4.2.2, D66; SDM 33.4.2.1, D21): its branches
	 * are only known to follow the packet before it. */
	bool tnt = it->pkt.type == RTIT_R_TNT || it->pkt.type == RTIT_PT_TNT8 ||
		   it->pkt.type == RTIT_PT_TNT64;
	/* PT: TIPs right after a TNT may have been deferred behind it
	 * (33.4.2.3), past the same timing packets: as early as it */
	bool deferred = d->pt && d->after_tnt && it->pkt.type == RTIT_PT_TIP;
	d->la.tsc = tnt ? d->tmpl.tsc : deferred ? d->tnt_tsc : d->t_tsc;
	if (tnt)
		d->tnt_tsc = d->la.tsc;
	d->after_tnt = tnt || deferred;
	d->have_la = true;
	if (rtit_r_checked_ahead(d, it))
		return 1;
	return la_ip_check(d, it, false);
}

/* The checks of a packet's IP by itself, before it is used (flow_set_la):
 * compressed against a known last IP, canonical, a PT FUP with one, an
 * RTIT LIP compressed as Table 18 gives.  @ahead: a packet read ahead,
 * checked before the walk reaches it (rtit_r_lip_check, D196).  1, or the
 * error. */
static int la_ip_check(struct rtit_flow_dec *d, const struct rtit_pktdec_item *it, bool ahead)
{
	if (rtit_pkt_has_ip(it->pkt.type) && it->ip_status < 0)
		return flow_fail(d, RTIT_ERR_NOIP, it->offset,
				 "%s compressed against an unknown %s", rtit_pkt_name(it->pkt.type),
				 d->pt ? "Last IP" : "LAST_LIP");
	/* no instruction lies at a non-canonical address (SDM Vol. 1
	 * 3.3.7.1; with 5-level paging bits 63:57 copy bit 56): an IPBytes
	 * 110b IP that is not is no IP of this trace (D137) */
	if (rtit_pkt_has_ip(it->pkt.type) && it->ip_status == 0 &&
	    ((int64_t)(it->ip << 7) >> 7) != (int64_t)it->ip)
		return flow_fail(d, RTIT_ERR_BAD_PACKET, it->offset,
				 "%s with the non-canonical IP 0x%" PRIx64 " (SDM Vol. 1 3.3.7.1)",
				 rtit_pkt_name(it->pkt.type), it->ip);
	if (d->pt && it->pkt.type == RTIT_PT_FUP && it->ip_status == 1)
		return flow_pt_fup_noip(d, it->offset);
	if (!d->pt && rtit_pkt_has_ip(it->pkt.type) && it->ip_status == 0)
		return rtit_r_lip_check(d, it, ahead);
	return 1;
}

/* An RTIT MTC (4.2.12): TSC[s+7:s], s = 7 + 2 * RNG, had just changed: the
 * TSC then (flow_window_advance), the bits above from the last STS.  Nothing before an STS gave the upper bits;
 * with E7 tolerated, the first MTC after an enable is not used. */
static void rtit_mtc(struct rtit_flow_dec *d, const struct rtit_packet *p)
{
	unsigned s = RTIT_R_MTC_SHIFT(p->u.mtc.rng);
	bool first = !d->mtc_seen;

	d->mtc_seen = true;
	if (!d->t_tsc_valid || (first && (d->cfg.errata & RTIT_FLOW_E7)))
		return;
	uint64_t t = flow_window_advance(d->t_tsc, s, 8 * rtit_r_pl_mtc_size, p->u.mtc.ctc);
	if (t > d->t_tsc)
		d->t_tsc = t;
}

/* Cycle-accurate RTIT: the CCP that follows the packet in view (4.2.15)
 * gives its time; read ahead, and anything else is kept for later.  E6
 * (cycle counts one low) makes no time exact. */
static void take_ccp(struct rtit_flow_dec *d)
{
	struct rtit_pktdec_item it;

	if (flow_next_packet(d, &it) != 1)
		return;		/* the end, or an error the next read reports */
	if (it.pkt.type != RTIT_R_CCP) {
		d->stash = it;
		d->have_stash = true;
		return;
	}
	d->t_cyc += it.pkt.u.cyc.value;
	d->la.cyc = d->t_cyc;
	d->la.exact = !(d->cfg.errata & RTIT_FLOW_E6);
}

/* Whether RTIT_CTL, the same at every enable (cfg.r_ctl_fixed), lets @it
 * be generated (D142): STS only with STS_En (RTIT 4.2.13), MTC only with
 * MTC_En and its RNG the MTC_Range field (4.2.12), PIP only with CR3En
 * clear (4.2.10), FUP.PCC only with Cycle_Acc (4.2.6).  0 or the error. */
static int rtit_packet_allowed(struct rtit_flow_dec *d, const struct rtit_pktdec_item *it)
{
	uint64_t ctl = d->cfg.r_ctl;
	const char *why;

	switch (it->pkt.type) {
	case RTIT_R_STS:
		if (ctl & RTIT_R_CTL_STS_EN)
			return 0;
		why = "it needs STS_En (RTIT 4.2.13)";
		break;
	case RTIT_R_MTC:
		if (!(ctl & RTIT_R_CTL_MTC_EN))
			why = "it needs MTC_En (RTIT 4.2.12)";
		else if (it->pkt.u.mtc.rng != ((ctl & RTIT_R_CTL_MTC_RANGE_MASK) >>
					       RTIT_R_CTL_MTC_RANGE_SHIFT))
			why = "its RNG is not RTIT_CTL.MTC_Range (RTIT 4.2.12)";
		else
			return 0;
		break;
	case RTIT_R_PIP:
		if (!(ctl & RTIT_R_CTL_CR3EN))
			return 0;
		why = "none is sent with CR3En set (RTIT 4.2.10)";
		break;
	case RTIT_R_FUP_PCC:
		if (ctl & RTIT_R_CTL_CYCLE_ACC)
			return 0;
		why = "it needs Cycle_Acc (RTIT 4.2.6)";
		break;
	default:
		return 0;
	}
	return flow_fail(d, RTIT_ERR_BAD_CONTEXT, it->offset,
			 "%s, which RTIT_CTL 0x%" PRIx64 " rules out: %s",
			 rtit_pkt_name(it->pkt.type), ctl, why);
}

/* The error of a packet that cannot come while tracing is disabled
 * (RTIT 4.2.2-4.2.9, Table 19; SDM 33.4.2.4): a TNT (@t RTIT_R_TNT, for
 * either dialect), TIP, FUP.FAR or FUP.PGD, at @off with IP @ip.  One text
 * whether the walk meets it or the packets read ahead show it (D196). */
int flow_fail_disabled(struct rtit_flow_dec *d, enum rtit_pkt_type t, uint64_t off, uint64_t ip)
{
	switch (t) {
	case RTIT_R_TIP:
		return flow_fail(d, RTIT_ERR_BAD_CONTEXT, off,
				 "a TIP 0x%" PRIx64 " while tracing is disabled", ip);
	case RTIT_R_FUP_FAR:
		return flow_fail(d, RTIT_ERR_BAD_CONTEXT, off,
				 "a FUP.FAR 0x%" PRIx64 " while tracing is disabled", ip);
	case RTIT_R_FUP_PGD:
		return flow_fail(d, RTIT_ERR_BAD_CONTEXT, off,
				 "a FUP.PGD 0x%" PRIx64 " while tracing is disabled (erratum E2?)", ip);
	default:
		return flow_fail(d, RTIT_ERR_BAD_CONTEXT, off, "a TNT while tracing is disabled");
	}
}

/* RTIT: a FUP.PGE while tracing with no PSB or FUP.BuffOvf since the last
 * packet of the flow (walk_packet; D168). */
static int rtit_r_fail_pge_on(struct rtit_flow_dec *d, uint64_t off, uint64_t ip)
{
	return flow_fail(d, RTIT_ERR_BAD_CONTEXT, off,
			 "a FUP.PGE 0x%" PRIx64 " while tracing, with no PSB since the"
			 " last packet: tracing restarts without a FUP.PGD only when"
			 " TriggerEn rises again, which sends a PSB (RTIT 4.2.1, 4.2.8)", ip);
}

/* RTIT: the checks peek and flow_set_la make of a packet by itself before
 * the walk uses it: one RTIT_CTL fixed rules out, and (for those brought
 * into view, which a PSB, CCP, STS, MTC, FUP.PCC or PIP is not) its LIP's
 * (la_ip_check).  @ahead: a packet read ahead.  1, or the error. */
static int rtit_r_packet_check(struct rtit_flow_dec *d, const struct rtit_pktdec_item *it,
			       bool ahead)
{
	int r;

	if (d->cfg.r_ctl_fixed && (r = rtit_packet_allowed(d, it)) < 0)
		return r;
	switch (it->pkt.type) {
	case RTIT_R_PSB: case RTIT_R_CCP: case RTIT_R_STS: case RTIT_R_MTC:
	case RTIT_R_FUP_PCC: case RTIT_R_PIP:
		return 1;
	default:
		return la_ip_check(d, it, ahead);
	}
}

/*
 * RTIT: each packet as the ring reads it, in the stream's order, against
 * what the packets before it say of PacketEn: a TNT, TIP, FUP.FAR or
 * FUP.PGD where a FUP.PGD disabled tracing and no FUP.PGE enabled it again
 * (Table 19: none goes out with PacketEn 0; the TIP of the far transfer
 * whose FUP.PGD it follows, rows 30-31, excepted), a FUP.PGE while a
 * FUP.PGE enabled it with no PSB since (4.2.1, 4.2.8), and a packet
 * the walk's own checks of it alone reject (rtit_r_packet_check).  The
 * walk reports each of these when it gets there, at that packet: found
 * here, up to FLOW_AHEAD packets earlier, the fault is kept (flow_fence,
 * D163), so that the records the packets before it give are not handed
 * out: a corrupted TIP's target reads as a far transfer's into untraced
 * code, and only the packets after it show that tracing was still on (or
 * off).  Only what the packets themselves say is judged, so the walk
 * agrees: after a PSB or FUP.BuffOvf nothing is known until a FUP.PGE or
 * FUP.PGD, after a TraceSTOP until a FUP.PGE (its TNT, 4.2.11), and E3
 * and E8, which move packets, turn it off; E2 lets a FUP.PGD repeat
 * (D196).
 */
static void rtit_r_ahead_check(struct rtit_flow_dec *d, const struct rtit_pktdec_item *it)
{
	if (errata_move_packets(d))
		return;
	uint8_t s = d->ahead_en;
	bool off = s == FLOW_AH_OFF || s == FLOW_AH_OFF_PGD;
	bool fault = rtit_r_packet_check(d, it, true) < 0, kept = false;
	bool partial = d->ahead_partial;

	switch (it->pkt.type) {
	case RTIT_R_PSB:
		if (s != FLOW_AH_STOPPED)
			s = FLOW_AH_UNKNOWN;
		break;
	case RTIT_R_FUP_BUFFOVF:
		s = FLOW_AH_UNKNOWN;
		break;
	case RTIT_R_TRACESTOP:
		s = FLOW_AH_STOPPED;
		break;
	case RTIT_R_FUP_PGE:
		if (s == FLOW_AH_ON && !fault)
			fault = rtit_r_fail_pge_on(d, it->offset, it->ip) < 0;
		s = FLOW_AH_ON;
		break;
	case RTIT_R_FUP_PGD:
		if (s == FLOW_AH_STOPPED)
			break;
		if (off && !(d->cfg.errata & RTIT_FLOW_E2) && !fault)
			fault = flow_fail_disabled(d, RTIT_R_FUP_PGD, it->offset, it->ip) < 0;
		s = off ? FLOW_AH_OFF : FLOW_AH_OFF_PGD;
		break;
	case RTIT_R_TIP:
		if (s == FLOW_AH_OFF && !fault)
			fault = flow_fail_disabled(d, RTIT_R_TIP, it->offset, it->ip) < 0;
		if (s == FLOW_AH_OFF_PGD)
			s = FLOW_AH_OFF;
		break;
	case RTIT_R_TNT: case RTIT_R_FUP_FAR:
		if (off && !fault)
			fault = flow_fail_disabled(d, it->pkt.type, it->offset, it->ip) < 0;
		break;
	default:
		break;	/* timing, PIP, FUP.PCC */
	}
	/* a partial TNT (fewer than 6 bits) goes out only because a FUP,
	 * TIP or PIP must (4.2.2, D66): the next packet but MTC, STS and
	 * CCP is no TNT.  The walk does not check it: the fault is kept as
	 * D163's, with its text, at the second TNT (D172) */
	switch (it->pkt.type) {
	case RTIT_R_MTC: case RTIT_R_STS: case RTIT_R_CCP:
		break;
	case RTIT_R_TNT:
		if (partial && !fault)
			kept = flow_fail(d, RTIT_ERR_BAD_CONTEXT, it->offset,
					 "a TNT right after a partial TNT: one with fewer than 6"
					 " bits goes out only before a FUP, TIP or PIP (RTIT 4.2.2)") < 0;
		partial = it->pkt.u.tnt.nbits < rtit_r_tnt_max_bits;
		break;
	default:
		partial = false;
		break;
	}
	d->ahead_en = s;
	d->ahead_partial = partial;
	if (fault)
		flow_fence_walk(d, it->offset);
	else if (kept)
		flow_fence(d);
}

/* Erratum E4 (Appendix E): a TraceStop condition met while the buffer is
 * overflowed sends its TraceSTOP at once and leaves TraceActive set, so
 * tracing goes on after the overflow; "evident if the TraceStop packet is
 * inserted before overflow is resolved, as indicated by the FUP.BuffOvf".
 * So with E4 a TraceSTOP that only more TraceSTOPs separate from a
 * FUP.BuffOvf (no other packet goes out during the overflow, 4.2.5) is
 * that: no stop (D213). */
static bool e4_stop(struct rtit_flow_dec *d)
{
	for (unsigned k = 0;; k++) {
		const struct rtit_pktdec_item *p = flow_ahead_peek(d, k);
		if (!p || p->pkt.type != RTIT_R_TRACESTOP)
			return p && p->pkt.type == RTIT_R_FUP_BUFFOVF;
	}
}

/* Brings the next significant packet into view (consuming timing
 * packets, PIP and PSB).  1: in view, 0: end of stream, < 0: error. */
static int peek(struct rtit_flow_dec *d)
{
	struct rtit_pktdec_item it;

	while (!d->have_la) {
		int r = flow_next_packet(d, &it);
		if (r <= 0)
			return r;
		/* checked as the ring read it, unless E3 or E8 turned that
		 * off (rtit_r_ahead_check, D196) */
		if (d->cfg.r_ctl_fixed && !rtit_r_checked_ahead(d, &it) &&
		    (r = rtit_packet_allowed(d, &it)) < 0)
			return r;
		switch (it.pkt.type) {
		case RTIT_R_PSB:
			/* 3.3.14: the PSB clears LAST_CALL_NLIP, but TNT bits
			 * sent after it may be older (a partial TNT pending at
			 * the PSB, or one left when Trace_En was cleared): the
			 * register is kept.  A RET after the PSB is compressed
			 * only against a CALL after it, which the walk sees. */
			d->last_off = it.offset;
			d->psb_fresh = 1;
			continue;
		case RTIT_R_CCP:
			d->t_cyc += it.pkt.u.cyc.value;		/* 4.2.14 */
			continue;
		case RTIT_R_STS:
			/* 4.2.13: TSC[39:0]; the bits above from the last */
			d->t_tsc = (d->t_tsc & ~rtit_mask(8 * rtit_r_pl_sts_tsc_size)) |
				   it.pkt.u.sts.tsc;
			d->t_tsc_valid = true;
			continue;
		case RTIT_R_MTC:
			rtit_mtc(d, &it.pkt);
			continue;
		case RTIT_R_FUP_PCC:
			continue;
		case RTIT_R_TRACESTOP:
			if ((d->cfg.errata & RTIT_FLOW_E4) && e4_stop(d))
				continue;	/* during the overflow after it */
			break;
		case RTIT_R_PIP:
			/* 64-bit code cannot clear CR0.PG (SDM Vol. 2B, MOV to
			 * CR0: #GP in 64-bit mode), and code the walk decodes
			 * as 64-bit is in 64-bit mode (RTIT has no mode
			 * packet): PG=0 is not this flow's (D194) */
			if (!it.pkt.u.pip.pg && d->tmpl.mode == 64)
				return flow_fail(d, RTIT_ERR_BAD_CONTEXT, it.offset,
						 "a PIP with CR0.PG=0 in a trace of 64-bit code (64-bit"
						 " mode cannot clear CR0.PG: SDM Vol. 2B, MOV to CR0)");
			/* while tracing, a PIP belongs to a MOV CR3 (or a MOV
			 * CR0 changing PG) the walk will reach (4.2.10) */
			if (d->state == ST_ENABLED)
				break;
			apply_pip(d, &it.pkt);
			continue;
		default:
			break;
		}
		/* the partial TNT that a FUP.PGE forces out (4.2.8) may
		 * stand between the PSB and it */
		if (it.pkt.type == RTIT_R_TNT && d->psb_fresh == 1)
			d->psb_fresh = 2;
		else if (it.pkt.type != RTIT_R_PIP) {
			d->pge_psb = d->psb_fresh != 0;
			d->psb_fresh = 0;
		}
		r = flow_set_la(d, &it, false);
		if (r == 1 && d->cfg.cycle_acc)
			take_ccp(d);
		return r;
	}
	return 1;
}

/* ------------------------------------------------------- instructions */


int flow_ic_grow(struct rtit_flow_dec *d)
{
	uint32_t nmask = d->ic_mask * 2 + 1;
	struct ic_ent *n = calloc((size_t)nmask + 1, sizeof(*n));
	if (!n)
		return -RTIT_ERR_NOMEM;
	for (uint32_t i = 0; i <= d->ic_mask; i++) {
		if (!d->ic[i].len)
			continue;
		uint32_t h = ic_hash(d->ic[i].ip) & nmask;
		while (n[h].len)
			h = (h + 1) & nmask;
		n[h] = d->ic[i];
	}
	if (d->n_ic_old < sizeof(d->ic_old) / sizeof(d->ic_old[0]))
		d->ic_old[d->n_ic_old++] = d->ic;	/* entries held stay valid */
	else
		free(d->ic);
	d->ic = n;
	d->ic_mask = nmask;
	/* the fast path's blocks index the old table: made again (D157) */
	free(d->icb);
	d->icb = NULL;
	return 0;
}

/* Decodes and classifies the instruction at ip into e. */
int flow_ic_fill(struct rtit_flow_dec *d, uint64_t key, struct ic_ent *e)
{
	/* A tag marks a 32- or 16-bit IP (below 2^32); a 64-bit IP in the
	 * upper half has bits 61 and 62 set too, and bit 63 with them, which
	 * no tagged key has. */
	uint64_t tag = (key >> 63) ? 0 : key & (FLOW_IC_TAG32 | FLOW_IC_TAG16);
	uint64_t ip = key & ~tag;
	const ZydisDecoder *zd = (tag & FLOW_IC_TAG32) ? &d->zd32 :
				 (tag & FLOW_IC_TAG16) ? &d->zd16 : &d->zd;
	uint8_t buf[ZYDIS_MAX_INSTRUCTION_LENGTH];
	size_t n = sizeof(buf);
	ZydisDecodedInstruction in;
	struct isa_insn si;

	if (d->cfg.read_mem(d->cfg.mem_opaque, ip, buf, n) < 0) {
		for (n = 0; n < sizeof(buf); n++)
			if (d->cfg.read_mem(d->cfg.mem_opaque, ip + n, buf + n, 1) < 0)
				break;
		if (!n)
			return flow_fail(d, RTIT_ERR_NOMAP, d->used_off,
				    "no memory mapped at 0x%" PRIx64 ": the flow leaves the program image", ip);
	}
	bool ok = ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(zd, NULL, buf, n, &in));
	if (!ok && n < sizeof(buf))	/* its bytes are not all in the image (D74) */
		return flow_fail(d, RTIT_ERR_NOMAP, d->used_off,
			    "no memory mapped at 0x%" PRIx64 ": the instruction at 0x%" PRIx64
			    " runs past the program image", ip + n, ip);
	if (!ok)
		return flow_fail(d, RTIT_ERR_INVALID, d->used_off,
			    "the flow reaches 0x%" PRIx64 ", which does not decode as an instruction", ip);
	isa_classify(&in, ip, &si);
	e->ip = key;
	e->target = si.target;
	e->len = si.len;
	e->cls = si.cls;
	e->flags = 0;
	if (si.flags & ISA_I_ZLC)
		e->flags |= IC_ZLC;
	if (in.mnemonic == ZYDIS_MNEMONIC_INTO)
		e->flags |= IC_INTO;
	if (in.mnemonic == ZYDIS_MNEMONIC_VMLAUNCH || in.mnemonic == ZYDIS_MNEMONIC_VMRESUME)
		e->flags |= IC_VMENTRY;
	if (in.mnemonic == ZYDIS_MNEMONIC_UD0 || in.mnemonic == ZYDIS_MNEMONIC_UD1 ||
	    in.mnemonic == ZYDIS_MNEMONIC_UD2)
		e->flags |= IC_UD;
	if (in.attributes & ZYDIS_ATTRIB_HAS_XACQUIRE)
		e->flags |= IC_XACQ;
	if (in.attributes & ZYDIS_ATTRIB_HAS_XRELEASE)
		e->flags |= IC_XREL;
	if (d->pt && (si.cls == RTIT_IC_DIRECT_JMP || si.cls == RTIT_IC_DIRECT_CALL ||
		      si.cls == RTIT_IC_COND) && flow_pt_leaves_filter(d, si.target))
		e->flags |= IC_LEAVES;
	if (d->cfg.has_end && !d->cfg.end_after && ip == d->cfg.end_ip)
		e->flags |= IC_END;
	e->vec = 0;
	if (si.cls == RTIT_IC_INT)
		e->vec = in.mnemonic == ZYDIS_MNEMONIC_INT3 ? 3 :
			 in.mnemonic == ZYDIS_MNEMONIC_INT1 ? 1 :
			 in.mnemonic == ZYDIS_MNEMONIC_INTO ? 4 :
			 (uint8_t)in.raw.imm[0].value.u;
	d->st.cache_insns++;
	return 0;
}


/* ------------------------------------------------------------- events */

static bool fault_vector(int v)
{
	switch (v) {
	case 0: case 5: case 6: case 7: case 10: case 11: case 12: case 13:
	case 14: case 16: case 17: case 19: case 20: case 21:
		return true;
	default:
		return false;
	}
}

void flow_emit_event(struct rtit_flow_dec *d, uint64_t ip, uint64_t next)
{
	struct rtit_sim_rec *r = rec_new(d, 0);
	*r = d->tmpl;
	r->kind = RTIT_SIM_EVENT;
	r->cls = RTIT_EV_NONE;
	r->ip = ip;
	r->next_ip = next;
	r->len = 0;
	if (d->cfg.vector_of) {
		int v = d->cfg.vector_of(d->cfg.mem_opaque, next);
		if (v >= 0) {
			r->vector = (uint8_t)v;
			if (v == 2) {
				r->cls = RTIT_EV_NMI;
			} else if (v < 32) {
				r->cls = RTIT_EV_EXCEPTION;
				if (fault_vector(v))
					r->flags |= RTIT_SIM_F_FAULT;
			} else {
				r->cls = RTIT_EV_EXT_INTERRUPT;
			}
		}
	}
	if (!d->fenced) {	/* else it is dropped (D163) */
		d->st.events++;
		d->st.insns--;	/* counted as a record when flushed */
	}
	commit(d);
}

/* ---------------------------------------------------------- the walk */

void flow_enable_at(struct rtit_flow_dec *d, uint64_t ip)
{
	d->off_known = false;
	d->mtc_seen = false;
	d->state = ST_ENABLED;
	d->ip = ip;
	d->enable_ip = ip;
	d->prev_nlip = NO_IP;
	d->tnt_n = 0;
	d->walked = 0;
	d->after_stop = false;
	/* no MODE.Exec before the TIP.PGE: RFLAGS.IF is the last one's */
	if (d->if_last >= 0 && !(d->tmpl.pad0 & RTIT_FLOW_A_IF_KNOWN))
		flow_if_apply(d, d->if_last);
}

void flow_disable(struct rtit_flow_dec *d, int kind, uint64_t off, uint64_t ip)
{
	d->state = ST_DISABLED;
	d->off_known = true;
	d->tnt_n = 0;
	if (kind == RTIT_FLOW_N_DISABLE)
		d->st.disables++;
	flow_note(d, kind, off, ip, 0);
}

/* The enable in view (FUP.PGE, TIP.PGE): tracing (re)starts at its IP;
 * @kind: the note, ENABLE or RESYNC. */
void flow_enable_la(struct rtit_flow_dec *d, int kind)
{
	uint64_t off = d->la.offset, ip = d->la.ip;

	consume(d);
	d->st.enables++;
	flow_note(d, kind, off, ip, 0);
	flow_enable_at(d, ip);
}

/* The TraceStop in view while tracing (RTIT 4.2.11, PT 33.2.5.3):
 * stopped; what was walked since the last packet is not confirmed. */
int flow_trace_stop(struct rtit_flow_dec *d)
{
	uint64_t off = d->la.offset;

	consume(d);
	flow_drop_uncertain(d, off);
	flow_disable(d, RTIT_FLOW_N_TRACESTOP, off, d->ip);
	d->after_stop = true;
	d->stop_tnts = 0;
	return 0;
}

/* With RTIT_EVENTS fixed and a range as its Filter_Event_ID: @ip is
 * outside every filter range and at none of their limits, so FilterEn is
 * 0 there (3.3.5: it rises only when the range base executes or a taken
 * branch or event lands in the range, and falls at the limit IP or on
 * landing outside; straight-line code leaves a range only through its
 * limit). */
static bool rtit_r_filtered_out(const struct rtit_flow_dec *d, uint64_t ip)
{
	unsigned id = (unsigned)(d->cfg.r_events & RTIT_R_EVENTS_FILTER_MASK);

	if (!d->cfg.r_ctl_fixed || id > RTIT_R_EVID_RANGE01 || rtit_r_event_at(&d->cfg, id, ip))
		return false;
	ip &= RTIT_R_LIP_MASK;
	return !((id != RTIT_R_EVID_RANGE1 && ip == d->cfg.r_lip[2]) ||
		 (id != RTIT_R_EVID_RANGE0 && ip == d->cfg.r_lip[3]));
}

/* RTIT timing packets (4.2.12-4.2.14): they say nothing of the flow. */
static inline bool rtit_r_timing(enum rtit_pkt_type t)
{
	return t == RTIT_R_MTC || t == RTIT_R_STS || t == RTIT_R_CCP;
}

/* After a FUP.BuffOvf (consumed): the packets after it, past PIPs and
 * timing, reach a FUP.PGE.  Then tracing was off when the overflow
 * cleared: a FUP.PGE says PacketEn rises (4.2.8), PIPs go out with it 0
 * (4.2.10), and tracing cannot have gone off in between without a
 * FUP.PGD, a TraceSTOP, or a TriggerEn clear whose re-enable sends a PSB
 * (4.2.1; D168, D196). */
static bool rtit_r_pge_next(struct rtit_flow_dec *d, unsigned k)
{
	for (;; k++) {
		const struct rtit_pktdec_item *p = flow_ahead_peek(d, k);
		if (!p)
			return false;
		if (!rtit_r_timing(p->pkt.type) && p->pkt.type != RTIT_R_PIP)
			return p->pkt.type == RTIT_R_FUP_PGE;
	}
}

/* Erratum E5 after a FUP.BuffOvf at @ip (consumed): the index among the
 * packets read ahead of a TIP with that IP that comes first but PSB and
 * timing (what peek passes over), else -1. */
static int rtit_r_e5_tip(struct rtit_flow_dec *d, uint64_t ip)
{
	if (!(d->cfg.errata & RTIT_FLOW_E5))
		return -1;
	for (unsigned k = 0;; k++) {
		const struct rtit_pktdec_item *p = flow_ahead_peek(d, k);
		if (!p)
			return -1;
		if (!rtit_r_timing(p->pkt.type) && p->pkt.type != RTIT_R_PSB &&
		    p->pkt.type != RTIT_R_FUP_PCC)
			return p->pkt.type == RTIT_R_TIP && p->ip == ip ? (int)k : -1;
	}
}

/* A FUP.BuffOvf in view: the gap (D14), resume at its IP; or, when that
 * IP is out of the filter or a FUP.PGE comes next, with tracing off
 * (4.2.5: the overflow may clear with PacketEn 0; D214). */
static int overflow(struct rtit_flow_dec *d)
{
	uint64_t ip = d->la.ip, off = d->la.offset;
	int r;

	consume(d);
	flow_drop_uncertain(d, off);
	d->st.overflows++;
	d->st.gaps++;
	d->retc_valid = false;		/* 4.2.5: overflow clear */
	/* E5: a TIP with the FUP.BuffOvf's IP right after it (as peek
	 * reads: past a PSB and timing) is the erratum's, whether tracing
	 * is on or off there */
	int e5 = rtit_r_e5_tip(d, ip);
	bool off_now = rtit_r_filtered_out(d, ip) || rtit_r_pge_next(d, (unsigned)(e5 + 1));
	if (off_now) {
		flow_note(d, RTIT_FLOW_N_OVERFLOW, off, NO_IP, 0);
		d->state = ST_DISABLED;
		d->tnt_n = 0;
	} else {
		flow_note(d, RTIT_FLOW_N_OVERFLOW, off, ip, 0);
		flow_enable_at(d, ip);
	}
	/* the overflow may clear with PacketEn 0 (4.2.5): a FUP.PGE with
	 * nothing but PIPs since is where tracing starts (D168) */
	d->psb_fresh = 1;
	if (e5 >= 0) {
		if ((r = peek(d)) < 0)
			return r;
		if (r && d->la.pkt.type == RTIT_R_TIP && d->la.ip == ip)
			consume(d);
	}
	d->soft = !off_now;
	return 0;
}

/* Needs a TIP in view; returns its IP in *ip.  Returns 1 when a
 * FUP.BuffOvf is in view instead (the TIP was lost in the overflow), 2
 * when the stream ends first (lost in an overflow that never cleared). */
static int take_tip(struct rtit_flow_dec *d, const char *what, uint64_t *ip)
{
	int r = peek(d);
	if (r < 0)
		return r;
	if (!r)
		return 2;
	if (d->la.pkt.type == RTIT_R_FUP_BUFFOVF)
		return 1;
	if (!r || d->la.pkt.type != RTIT_R_TIP)
		return flow_fail(d, RTIT_ERR_BAD_CONTEXT, r ? d->la.offset : d->last_off,
			    "%s at 0x%" PRIx64 " needs a TIP; the next packet is %s", what,
			    d->ip, flow_la_name(d));
	*ip = d->la.ip;
	consume(d);
	return 0;
}

static const char *cls_name(int cls) { return rtit_insn_class_name(cls); }

/* A near CALL for RET compression: RTIT's LAST_CALL_NLIP when Cmprs_Ret
 * (4.2.3.2), Intel PT's stack unless a zero-length CALL (33.4.2.2). */
void flow_on_call(struct rtit_flow_dec *d, uint64_t nlip, bool zlc)
{
	if (d->pt) {
		if (!zlc)
			rtit_pt_calls_push(&d->rs, nlip & flow_pt_ip_mask(d));
	} else if (d->cfg.cmprs_ret) {
		d->retc = nlip & 0xffffffffffffull;
		d->retc_valid = true;
	}
}

/* A near RET taken as compressed: its target in *t.  RTIT: LAST_CALL_NLIP
 * (kept); PT: the stack pops (every near RET pops, 33.4.2.2).  False when
 * there is none. */
bool flow_ret_compressed(struct rtit_flow_dec *d, uint64_t *t)
{
	if (d->pt) {
		if (!d->rs.depth)
			return false;
		d->rs.top = (d->rs.top + rtit_pt_stack_depth - 1) % rtit_pt_stack_depth;
		d->rs.depth--;
		*t = d->rs.ip[d->rs.top] & flow_pt_ip_mask(d);
		return true;
	}
	if (!d->cfg.cmprs_ret || !d->retc_valid)
		return false;
	*t = sext48(d->retc);
	return true;
}

/*
 * Whether the flow from @ip reaches the known end without needing a packet
 * the stream does not have: conditional branches may go either way (their
 * bits stayed in the TNT buffer: a partial TNT is not written out when the
 * run ends, 4.2.2), a RET may be compressed (a bit, likewise), but nothing
 * that needs a TIP or FUP can have run.  1: it does, 0: it cannot, -1: not
 * known within the search limits.
 */
static int reach_end(struct rtit_flow_dec *d, uint64_t ip, uint64_t retc, bool retc_valid,
		     int depth, long *budget)
{
	const struct ic_ent *e;

	for (;;) {
		if (ip == d->cfg.end_ip)
			return 1;
		if (--*budget <= 0)
			return -1;
		if (ic_get(d, ip, &e) < 0)
			return 0;
		uint64_t nlip = ip + e->len;
		if (e->flags & IC_UD)
			return 0;	/* its #UD would have sent a FUP */
		switch (e->cls) {
		case RTIT_IC_OTHER: case RTIT_IC_RDMSR: case RTIT_IC_PTWRITE:
			ip = nlip;
			break;
		case RTIT_IC_DIRECT_JMP:
			ip = e->target;
			break;
		case RTIT_IC_DIRECT_CALL:
			if (d->cfg.cmprs_ret || d->pt) {
				retc = d->pt ? nlip : nlip & 0xffffffffffffull;
				retc_valid = true;
			}
			ip = e->target;
			break;
		case RTIT_IC_RET:
			/* PT pops: a second RET's target is not followed */
			if (!retc_valid)
				return d->pt ? -1 : 0;
			if (!d->cfg.cmprs_ret && !d->pt)
				return 0;
			ip = d->pt ? retc : sext48(retc);
			if (d->pt)
				retc_valid = false;
			break;
		case RTIT_IC_COND: {
			if (depth >= 16)
				return -1;
			int a = reach_end(d, e->target, retc, retc_valid, depth + 1, budget);
			if (a == 1)
				return 1;
			int b = reach_end(d, nlip, retc, retc_valid, depth + 1, budget);
			if (b == 1)
				return 1;
			return a < 0 || b < 0 ? -1 : 0;
		}
		default:
			return 0;
		}
	}
}

/*
 * The run stopped when it reached end_ip, before executing the
 * instruction there (the sideband's "reached end address": the simulator
 * stops at the first arrival).  A walk that is to execute it, with packets
 * still to use, follows a flow the run did not have: an error (D192), at
 * the last packet used (the one that sent the walk there).
 */
int flow_end_reached(struct rtit_flow_dec *d)
{
	return flow_fail(d, RTIT_ERR_BAD_CONTEXT, d->last_off,
			 "the walk is to execute the instruction at 0x%" PRIx64 ", where the run"
			 " ended before executing it (the sideband's stop: reached end address)",
			 d->ip);
}

/* The sideband counts more overflows than the stream showed: one still
 * under way when the run ended lost what came after it (1), none (0), or
 * the count is not known (-1). */
static int overflow_unseen(const struct rtit_flow_dec *d)
{
	if (d->cfg.overflows_total < 0)
		return -1;
	return (uint64_t)d->cfg.overflows_total > d->st.overflows;
}

/* The end of the stream while enabled: walk on to the known end (choosing
 * a conditional branch's way or taking a RET as compressed only when just
 * one way gets there), or drop what the stream did not confirm. */
int flow_walk_end(struct rtit_flow_dec *d)
{
	const struct ic_ent *e;
	int r;

	if (!d->cfg.has_end || d->tnt_n || overflow_unseen(d) == 1) {
		flow_drop_uncertain(d, d->last_off);
		return 2;
	}
	/* not when nothing showed tracing on since an overflow cleared */
	bool infer = d->cfg.end_traced && !d->soft;
	flow_step_untimed(d);
	for (uint64_t k = 0;; k++) {
		if (k == 100000) {	/* no end in sight: nothing certain */
			flow_drop_uncertain(d, d->last_off);
			return 2;
		}
		if (d->ip == d->cfg.end_ip && !d->cfg.end_after) {
			commit(d);
			return 2;
		}
		if ((r = ic_get(d, d->ip, &e)) < 0) {
			/* the run ended at end_ip, which the walk cannot
			 * reach from code the image lacks: the stream
			 * contradicts where the run ended (D137) */
			if (r == -RTIT_ERR_NOMAP || r == -RTIT_ERR_INVALID) {
				flow_drop_uncertain(d, d->last_off);
				return r;
			}
			break;
		}
		uint64_t nlip = d->ip + e->len, next = nlip;
		uint8_t fl = 0;
		if (e->flags & IC_UD)
			goto out;	/* its #UD would have sent a FUP (D225) */
		switch (e->cls) {
		case RTIT_IC_WRMSR:	/* it may clear Trace_En without a packet */
		case RTIT_IC_MOV_CR3:	/* traced, it would have sent a PIP */
		case RTIT_IC_MOV_CR0:
			infer = false;
			break;
		case RTIT_IC_OTHER: case RTIT_IC_RDMSR: case RTIT_IC_HLT: case RTIT_IC_PTWRITE:
		case RTIT_IC_MWAIT:
			break;
		case RTIT_IC_DIRECT_JMP: case RTIT_IC_DIRECT_CALL:
			next = e->target;
			fl = RTIT_SIM_F_TAKEN;
			if (e->flags & IC_ZLC)
				fl |= RTIT_SIM_F_ZERO_LEN_CALL;
			if (e->cls == RTIT_IC_DIRECT_CALL)
				flow_on_call(d, nlip, e->flags & IC_ZLC);
			break;
		case RTIT_IC_RET:
			if (!infer || !flow_ret_compressed(d, &next))
				goto out;
			fl = RTIT_SIM_F_TAKEN;
			break;
		case RTIT_IC_COND: {
			if (!infer)
				goto out;
			long b1 = 20000, b2 = 20000;
			uint64_t rc = d->retc;
			bool rv = d->retc_valid;
			if (d->pt) {
				rv = d->rs.depth > 0;
				rc = rv ? d->rs.ip[(d->rs.top + rtit_pt_stack_depth - 1) %
						  rtit_pt_stack_depth] : 0;
			}
			int t = reach_end(d, e->target, rc, rv, 0, &b1);
			int n = reach_end(d, nlip, rc, rv, 0, &b2);
			if (!((t == 1 && n == 0) || (t == 0 && n == 1)))
				goto out;	/* both, neither, or not known */
			if (t == 1) {
				next = e->target;
				fl = RTIT_SIM_F_TAKEN;
			}
			break;
		}
		default:
			goto out;	/* needs a packet the stream lacks */
		}
		flow_insn_rec(d, e, next, fl, 0);
		if (d->ip == d->cfg.end_ip) {	/* end_after: the HLT retired */
			commit(d);
			return 2;
		}
		d->ip = next;
	}
out:
	/* Tracing on to the end: what was walked did run (an event would
	 * have sent a FUP); only the way onwards is unknown. */
	if (infer)
		commit(d);
	flow_drop_uncertain(d, d->last_off);
	return 2;
}

/* Whether the walk from @from reaches @to within a few instructions that
 * need no packet. */
static bool straight_reaches(struct rtit_flow_dec *d, uint64_t from, uint64_t to)
{
	const struct ic_ent *e;
	uint64_t ip = from;

	for (int k = 0; k < 64; k++) {
		if (ip == to)
			return true;
		if (ic_get(d, ip, &e) < 0 || (e->flags & IC_UD))
			return false;
		switch (e->cls) {
		case RTIT_IC_OTHER: case RTIT_IC_RDMSR: case RTIT_IC_PTWRITE: case RTIT_IC_WRMSR:
			ip += e->len;
			break;
		case RTIT_IC_DIRECT_JMP: case RTIT_IC_DIRECT_CALL:
			ip = e->target;
			break;
		default:
			return false;
		}
	}
	return false;
}

/* Besides walk's own returns (0, 2, < 0), what one of its steps tells the
 * loop: go round again (the state or the IP changed), or go on with the
 * instruction at d->ip. */
enum { W_AGAIN = 3, W_INSN = 4 };

/* A FUP.FAR in view at the walk's IP, no bits pending: an event here
 * (fault: CLIP, interrupt: NLIP).  Returns W_AGAIN or as walk. */
static int walk_event_far(struct rtit_flow_dec *d)
{
	uint64_t at = d->la.ip, to;
	int r;

	consume(d);
	/* the walk to the FUP's IP is established with its TIP, by the
	 * event's record (flow_emit_event commits), not before (D197) */
	if ((r = take_tip(d, "the event (FUP.FAR)", &to)) < 0)
		return r;
	if (r == 2 && d->cfg.has_end && overflow_unseen(d) == 0)
		/* the run went on to its end address after the event,
		 * whose TIP goes out with the FUP.FAR (RTIT Table 19): the
		 * stream cannot end between them, unless an overflow the
		 * stream does not show (the sideband counts it) lost the
		 * TIP at the end (D193) */
		return flow_fail(d, RTIT_ERR_BAD_CONTEXT, d->last_off,
				 "the trace ends between the FUP.FAR at 0x%" PRIx64 " and its TIP,"
				 " but the run went on to its end address 0x%" PRIx64
				 " (RTIT Table 19)", at, d->cfg.end_ip);
	flow_emit_event(d, at, r ? 0 : to);
	if (r) {
		d->batch[d->nbatch - 1].pad0 |= RTIT_FLOW_A_NEXT_UNKNOWN;
		if (r == 2)
			return 2;
		if ((r = overflow(d)) < 0)
			return r;
		return W_AGAIN;
	}
	d->ip = to;
	d->prev_nlip = NO_IP;
	return W_AGAIN;
}

/* A FUP.PGD in view at the walk's IP or the NLIP just walked: tracing
 * stops there.  Returns 0 or < 0, as walk. */
static int walk_disable(struct rtit_flow_dec *d)
{
	uint64_t at = d->la.ip, off = d->la.offset;
	bool here = d->la.ip == d->ip;
	int r;

	consume(d);
	commit(d);
	if (here) {
		/* an event leaving the region with
		 * ContextEn kept: FUP.PGD + TIP */
		if ((r = peek(d)) < 0)
			return r;
		if (r && rtit_r_far_pgd_tip(d, at)) {
			flow_emit_event(d, at, d->la.ip);
			consume(d);
		}
	}
	flow_disable(d, RTIT_FLOW_N_DISABLE, off, at);
	return 0;
}

/* The packet in view with no TNT bits pending, before the instruction at
 * d->ip: an enable, an overflow, a stop or an event here, or none of
 * these (W_INSN: the instruction runs).  Returns W_AGAIN, W_INSN or as
 * walk. */
static inline int walk_packet(struct rtit_flow_dec *d)
{
	int r;

	if ((r = peek(d)) < 0)
		return r;
	if (!r)
		return flow_walk_end(d);
	const struct la *p = &d->la;
	switch (p->pkt.type) {
	case RTIT_R_FUP_PGE:
		/* tracing restarted without a FUP.PGD: only TriggerEn
		 * clears with none (4.2.8, D69), and it rises again only
		 * on an MSR write, which sends a PSB (4.2.1): the PSB must
		 * lie between the last packet of the flow and this FUP.PGE, with at
		 * most the partial TNT it forces out between them; or a
		 * FUP.BuffOvf, after which tracing may be off
		 * (D168; D166 was a narrower rule, withdrawn).  Not under E8, whose
		 * packets after a PSB may come before older ones */
		if (!d->pge_psb && !(d->cfg.errata & FLOW_R_E8))
			return rtit_r_fail_pge_on(d, p->offset, p->ip);
		flow_drop_uncertain(d, p->offset);
		flow_enable_la(d, RTIT_FLOW_N_ENABLE);
		return W_AGAIN;
	case RTIT_R_FUP_BUFFOVF:
		if ((r = overflow(d)) < 0)
			return r;
		return W_AGAIN;
	case RTIT_R_TRACESTOP:
		if ((r = rtit_r_stop_reached(d)) < 0)
			return r;
		return flow_trace_stop(d);
	case RTIT_R_FUP_FAR:
		if (p->ip != d->ip)
			break;
		/* an event here: fault (CLIP) or interrupt (NLIP) */
		return walk_event_far(d);
	case RTIT_R_FUP_PGD:
		if (p->ip != d->ip && p->ip != d->prev_nlip)
			break;
		/* the NLIP of a taken branch just walked, which the
		 * flow also reaches from here with no packet: the
		 * stop is there (an event or a step out); not when the
		 * branch landed outside every filter range, which
		 * clears FilterEn (3.3.5): then it is the branch's
		 * (Table 19 rows 24/25; D224) */
		if (p->ip != d->ip && straight_reaches(d, d->ip, p->ip) &&
		    !rtit_r_filtered_out(d, d->ip))
			break;
		return walk_disable(d);
	default:
		break;
	}
	return W_INSN;
}

/* A conditional branch (a TNT bit) or a near RET (a TNT bit when
 * compressed, else a TIP): where it goes in *next, *fl.  Returns W_INSN
 * (the packet used), W_AGAIN or as walk. */
static inline int walk_cond_ret(struct rtit_flow_dec *d, const struct ic_ent *e,
				uint64_t *next, uint8_t *fl, bool *tip)
{
	int r = 1;

	if (!d->tnt_n) {
		if ((r = peek(d)) < 0)
			return r;
		if (r && d->la.pkt.type == RTIT_R_TNT) {
			/* a full TNT's CCP is its last branch's
			 * time (4.2.15): kept until then */
			d->tnt_bits = d->la.pkt.u.tnt.bits;
			d->tnt_n = d->la.pkt.u.tnt.nbits;
			d->tnt_cyc = d->la.cyc;
			d->tnt_exact = d->la.exact;
			d->la.cyc = d->tmpl.cycles;	/* not yet */
			d->la.exact = false;
			consume(d);
		} else if (e->cls == RTIT_IC_COND) {
			if (!r)
				return flow_walk_end(d);
			return flow_fail(d, RTIT_ERR_BAD_CONTEXT, d->la.offset,
				    "the conditional branch at 0x%" PRIx64
				    " needs a TNT bit; the next packet is %s",
				    d->ip, flow_la_name(d));
		}
	}
	if (d->tnt_n && (e->cls == RTIT_IC_COND || d->cfg.cmprs_ret)) {
		bool bit = (d->tnt_bits >> --d->tnt_n) & 1;
		if (!d->tnt_n) {
			if (d->tmpl.cycles != d->tnt_cyc)
				d->tmpl.cycles = d->tnt_cyc;
			if (d->tnt_exact)
				d->tmpl.pad0 |= RTIT_FLOW_A_CYC_EXACT;
		}
		if (e->cls == RTIT_IC_COND) {
			if (bit) {
				*next = e->target;
				*fl = RTIT_SIM_F_TAKEN;
			}
			return W_INSN;
		}
		/* compressed RET (4.2.3.2): target LAST_CALL_NLIP */
		if (!bit)
			return flow_fail(d, RTIT_ERR_BAD_CONTEXT, d->last_off,
				    "the RET at 0x%" PRIx64 " meets a not-taken TNT bit", d->ip);
		if (!flow_ret_compressed(d, next))
			return flow_fail(d, RTIT_ERR_BAD_CONTEXT, d->last_off,
				    "the RET at 0x%" PRIx64 " is compressed (TNT bit) but no"
				    " CALL set LAST_CALL_NLIP", d->ip);
		*fl = RTIT_SIM_F_TAKEN;
		return W_INSN;
	}
	if (d->tnt_n)
		return flow_fail(d, RTIT_ERR_BAD_CONTEXT, d->last_off,
			    "the RET at 0x%" PRIx64 " needs a TIP but %d TNT bits are"
			    " pending (Cmprs_Ret is off)", d->ip, d->tnt_n);
	if (!r)
		return flow_walk_end(d);
	if ((r = take_tip(d, "the RET", next)) != 0) {
		if (r == 2)
			return flow_walk_end(d);
		if (r < 0 || (r = overflow(d)) < 0)
			return r;
		return W_AGAIN;
	}
	*fl = RTIT_SIM_F_TAKEN;
	*tip = true;
	return W_INSN;
}

/* An indirect JMP or CALL: a TIP, its target in *next.  Returns W_INSN
 * (the packet used), W_AGAIN or as walk. */
static inline int walk_indirect(struct rtit_flow_dec *d, const struct ic_ent *e, uint64_t nlip,
				uint64_t *next)
{
	int r;

	if (d->tnt_n)
		return flow_fail(d, RTIT_ERR_BAD_CONTEXT, d->last_off,
			    "the %s at 0x%" PRIx64 " needs a TIP but %d TNT bits are"
			    " pending", cls_name(e->cls), d->ip, d->tnt_n);
	if ((r = peek(d)) < 0)
		return r;
	if (!r)
		return flow_walk_end(d);
	if ((r = take_tip(d, e->cls == RTIT_IC_INDIRECT_JMP ? "the indirect JMP" :
			  "the indirect CALL", next)) != 0) {
		if (r == 2)
			return flow_walk_end(d);
		if (r < 0 || (r = overflow(d)) < 0)
			return r;
		return W_AGAIN;
	}
	if (e->cls == RTIT_IC_INDIRECT_CALL)
		flow_on_call(d, nlip, false);
	return W_INSN;
}

/* A far transfer: FUP.FAR(NLIP) + TIP, or FUP.PGD(NLIP) [+ TIP].  Its
 * record is made here.  Returns W_AGAIN or as walk. */
static int walk_far(struct rtit_flow_dec *d, const struct ic_ent *e, uint64_t nlip)
{
	uint64_t next = nlip;
	uint8_t fl, ann = 0;
	int r;

	if (d->tnt_n)
		return flow_fail(d, RTIT_ERR_BAD_CONTEXT, d->last_off,
			    "the %s at 0x%" PRIx64 " needs a FUP.FAR but %d TNT bits are"
			    " pending", cls_name(e->cls), d->ip, d->tnt_n);
	if ((r = peek(d)) < 0)
		return r;
	if (!r)
		return flow_walk_end(d);
	const struct la *p = &d->la;
	bool at = p->ip == nlip ||
		  ((d->cfg.errata & RTIT_FLOW_E1) && p->ip > d->ip && p->ip < nlip);
	if ((p->pkt.type != RTIT_R_FUP_FAR && p->pkt.type != RTIT_R_FUP_PGD) || !at)
		return flow_fail(d, RTIT_ERR_BAD_CONTEXT, p->offset,
			    "the %s at 0x%" PRIx64 " needs a FUP.FAR with its NLIP 0x%"
			    PRIx64 "; the next packet is %s 0x%" PRIx64,
			    cls_name(e->cls), d->ip, nlip, flow_la_name(d), p->ip);
	bool pgd = p->pkt.type == RTIT_R_FUP_PGD;
	uint64_t off = p->offset;
	consume(d);
	fl = RTIT_SIM_F_TAKEN;
	bool lost = false, ended = false;
	if (!pgd) {
		if ((r = take_tip(d, "the far transfer", &next)) < 0)
			return r;
		/* INT n vectors through IDT entry n (SDM Vol. 2A INT n; a
		 * fault at it sends its FUP.FAR with the CLIP instead,
		 * walk_event_far): with the IDT known, the TIP is that
		 * handler (D220) */
		if (!r && e->cls == RTIT_IC_INT && !(e->flags & IC_INTO) && d->cfg.handler_of) {
			uint64_t h = d->cfg.handler_of(d->cfg.mem_opaque, e->vec);
			if (h != NO_IP && h != next)
				return flow_fail(d, RTIT_ERR_BAD_CONTEXT, d->last_off,
						 "the INT 0x%x at 0x%" PRIx64 " goes to 0x%" PRIx64
						 ", but that vector's handler is at 0x%" PRIx64
						 " (SDM Vol. 2A INT n: IDT entry n)",
						 e->vec, d->ip, next, h);
		}
		if (r) {	/* the TIP was lost in an overflow */
			lost = r == 1;
			ended = r == 2;
			next = 0;
			ann = RTIT_FLOW_A_NEXT_UNKNOWN;
		}
	} else {
		if ((r = peek(d)) < 0)
			return r;
		/* Table 19 rows 30-31: FUP.PGD and TIP(BLIP) when FilterEn
		 * went to 0 with ContextEn 1; with FilterEn always on (D142)
		 * only rows 32-33, FUP.PGD alone, and a TIP is not this one's;
		 * with a range, the TIP is only if FilterEn is 0 at its target
		 * (3.3.5: a far transfer's target in the range sets it, D139) */
		if (r && rtit_r_far_pgd_tip(d, NO_IP)) {
			next = d->la.ip;
			consume(d);
		} else {
			next = 0;
			ann = RTIT_FLOW_A_NEXT_UNKNOWN;
		}
	}
	if ((e->flags & IC_INTO) && next == nlip && !ann)
		fl = 0;
	flow_insn_rec(d, e, next, fl, ann);
	if (!pgd && !ann)
		commit_tip(d);	/* the TIP's target (D221) */
	else
		commit(d);
	d->prev_nlip = NO_IP;
	if (ended)
		return 2;
	if (lost) {
		if ((r = overflow(d)) < 0)
			return r;
		return W_AGAIN;
	}
	if (pgd) {
		flow_disable(d, RTIT_FLOW_N_DISABLE, off, nlip);
		return 0;
	}
	d->ip = next;
	return W_AGAIN;
}

/*
 * Walks while enabled.  Returns 0 when the state changed (disabled), 2
 * when the stream ended, < 0 on an error.
 */
static int walk(struct rtit_flow_dec *d)
{
	const struct ic_ent *e;
	int r;

	while (d->state == ST_ENABLED) {
		flow_step_untimed(d);
		if (!d->tnt_n && (r = walk_packet(d)) != W_INSN) {
			if (r == W_AGAIN)
				continue;
			return r;
		}

		if ((r = ic_get(d, d->ip, &e)) < 0)
			return r;
		if (__builtin_expect(e->flags & IC_END, 0))
			return flow_end_reached(d);
		/* a TNT or TIP in view binds to no IP (D97) */
		if (flow_run_ok(d, e, d->tnt_n || (d->have_la && (d->la.pkt.type == RTIT_R_TNT ||
								  d->la.pkt.type == RTIT_R_TIP)))) {
			flow_run(d, e);
			continue;
		}
		if (++d->walked > d->cfg.max_walk)
			return flow_fail(d, RTIT_ERR_BAD_CONTEXT, d->last_off,
				    "%" PRIu64 " instructions walked from 0x%" PRIx64
				    " without using a packet (next: %s)", d->walked, d->ip, flow_la_name(d));

		uint64_t nlip = d->ip + e->len, next = nlip;
		uint8_t fl = 0;
		bool used = false, tip = false;

		r = W_INSN;
		switch (e->cls) {
		case RTIT_IC_MOV_CR3: case RTIT_IC_MOV_CR0: {
			/* its PIP, if one is in view (none with CR3 filtering,
			 * none for a MOV CR0 that keeps PG) */
			bool pip = !d->tnt_n && d->have_la && d->la.pkt.type == RTIT_R_PIP;
			if (pip && e->cls == RTIT_IC_MOV_CR0 && !d->pg_known)
				return flow_fail(d, RTIT_ERR_BAD_CONTEXT, d->la.offset,
						 "the MOV CR0 at 0x%" PRIx64 " meets a PIP, and CR0.PG"
						 " before it is not known (D80)", d->ip);
			if (pip && (e->cls == RTIT_IC_MOV_CR3 ||
				    d->la.pkt.u.pip.pg != !!(d->tmpl.flags & RTIT_SIM_F_CR0_PG))) {
				/* a PIP is sent with FilterEn 0 as well (4.2.10):
				 * after a FUP.BuffOvf it does not show that
				 * tracing is on, nor establish the walk (D222) */
				bool soft = d->soft;
				apply_pip(d, &d->la.pkt);
				consume(d);
				d->soft = soft;
				used = !soft;
			}
			break;
		}
		case RTIT_IC_OTHER:
			if (e->flags & IC_UD)
				return flow_fail_ud(d);
			break;
		case RTIT_IC_WRMSR: case RTIT_IC_RDMSR: case RTIT_IC_HLT:
		case RTIT_IC_PTWRITE: case RTIT_IC_MWAIT:
			break;
		case RTIT_IC_DIRECT_JMP:
			next = e->target;
			fl = RTIT_SIM_F_TAKEN;
			break;
		case RTIT_IC_DIRECT_CALL:
			next = e->target;
			fl = RTIT_SIM_F_TAKEN;
			if (e->flags & IC_ZLC)
				fl |= RTIT_SIM_F_ZERO_LEN_CALL;
			flow_on_call(d, nlip, e->flags & IC_ZLC);
			break;
		case RTIT_IC_COND:
		case RTIT_IC_RET:
			r = walk_cond_ret(d, e, &next, &fl, &tip);
			used = true;
			break;
		case RTIT_IC_INDIRECT_JMP:
		case RTIT_IC_INDIRECT_CALL:
			r = walk_indirect(d, e, nlip, &next);
			fl = RTIT_SIM_F_TAKEN;
			used = tip = true;
			break;
		default:	/* far transfers: the record is made there */
			r = walk_far(d, e, nlip);
			break;
		}
		if (r != W_INSN) {
			if (r == W_AGAIN)
				continue;
			return r;
		}

		flow_insn_rec(d, e, next, fl, 0);
		if (tip)
			commit_tip(d);
		else if (used)
			commit(d);
		d->prev_nlip = nlip;
		d->ip = next;
	}
	return 0;
}

/* What both dialects do with the packet in view while tracing is off or
 * the decoder unsynchronised (RTIT TraceSTOP/TNT/TIP, PT TraceStop/TNT/
 * TIP): a stop is remembered; TNT bits belong to an unknown flow after a
 * stop or before the first sync, else they are an error; a TIP
 * resynchronises an unsynchronised decoder, else it is an error. */
int flow_idle_stop(struct rtit_flow_dec *d)
{
	consume(d);
	d->after_stop = true;
	d->stop_tnts = 0;
	return 0;
}

int flow_idle_tnt(struct rtit_flow_dec *d)
{
	uint64_t off = d->la.offset;

	consume(d);
	if (d->state == ST_UNSYNCED)
		return 0;	/* bits of an unknown flow */
	if (d->after_stop) {
		/* RTIT: the TraceStop action does not drain the TNT buffer
		 * (4.2.2, 4.2.11): what it held comes out as one partial
		 * TNT before the next FUP.PGE (4.2.8), or a full TNT held
		 * in an overflow before its FUP.BuffOvf (4.2.5); never two
		 * (D169) */
		if (!d->pt && ++d->stop_tnts > 1)
			return flow_fail(d, RTIT_ERR_BAD_CONTEXT, off,
					 "a second TNT after a TraceSTOP: the TNT buffer is not"
					 " drained at the stop, only the bits it held come out,"
					 " in one TNT (RTIT 4.2.2, 4.2.8, 4.2.11)");
		return 0;	/* bits of an unknown flow */
	}
	return flow_fail_disabled(d, RTIT_R_TNT, off, 0);
}

int flow_idle_tip(struct rtit_flow_dec *d)
{
	uint64_t off = d->la.offset, ip = d->la.ip;

	consume(d);
	if (d->state == ST_UNSYNCED) {
		d->st.resyncs++;
		flow_note(d, RTIT_FLOW_N_RESYNC, off, ip, 0);
		flow_enable_at(d, ip);
		return 0;
	}
	return flow_fail_disabled(d, RTIT_R_TIP, off, ip);
}

/* One packet while disabled or unsynchronised. */
static int idle(struct rtit_flow_dec *d)
{
	int r = peek(d);
	if (r <= 0)
		return r < 0 ? r : 1;
	const struct la *p = &d->la;
	uint64_t off = p->offset, ip = p->ip;
	bool unsynced = d->state == ST_UNSYNCED;

	switch (p->pkt.type) {
	case RTIT_R_FUP_PGE:
		flow_enable_la(d, unsynced ? RTIT_FLOW_N_RESYNC : RTIT_FLOW_N_ENABLE);
		return 0;
	case RTIT_R_FUP_BUFFOVF:
		return overflow(d);
	case RTIT_R_TRACESTOP:
		return flow_idle_stop(d);
	case RTIT_R_TNT:
		return flow_idle_tnt(d);
	case RTIT_R_TIP:
		return flow_idle_tip(d);
	case RTIT_R_FUP_FAR:
		consume(d);
		if (unsynced)
			return 0;	/* the TIP that follows resynchronises */
		return flow_fail_disabled(d, RTIT_R_FUP_FAR, off, ip);
	case RTIT_R_FUP_PGD:
		consume(d);
		if (unsynced) {
			d->state = ST_DISABLED;
			return 0;
		}
		if (d->cfg.errata & RTIT_FLOW_E2)
			return 0;
		return flow_fail_disabled(d, RTIT_R_FUP_PGD, off, ip);
	case RTIT_R_PIP:
		apply_pip(d, &p->pkt);
		consume(d);
		return 0;
	default:
		consume(d);
		return 0;
	}
}

/* After an error: report, drop the provisional records, skip to the
 * next PSB. */
static int recover(struct rtit_flow_dec *d)
{
	d->nbatch = d->ncommit;
	d->nprov = 0;
	d->tip_held = false;
	d->walked = 0;
	if (d->fenced) {
		/* what was noted under the fault kept is not (D163) */
		const struct rtit_flow_stats *f = &d->fence_st;
		d->st.enables = f->enables;
		d->st.disables = f->disables;
		d->st.overflows = f->overflows;
		d->st.resyncs = f->resyncs;
		d->st.gaps = f->gaps;
		d->st.dropped = f->dropped;
	}
	d->st.errors++;
	d->st.gaps++;
	flow_note(d, RTIT_FLOW_N_ERROR, d->err_off, d->err_ip, 0);
	d->state = ST_UNSYNCED;
	d->off_known = false;
	d->tnt_n = 0;
	d->have_la = false;
	d->retc_valid = false;
	flow_pt_reset(d);
	d->have_stash = false;
	d->ahead_n = 0;
	d->ahead_sig = 0;
	d->ahead_watch = 0;
	d->ahead_err = 0;
	d->fenced = false;
	d->fence_walk = false;
	d->ahead_en = d->after_stop ? FLOW_AH_STOPPED : FLOW_AH_UNKNOWN;
	d->ahead_partial = false;
	d->eos = false;		/* the packets read ahead may have met the end */
	/* the packet decoder stands where the packets handed out end (the
	 * batch's others are dropped): the skipped bytes count from there */
	if (d->pb_i < d->pb_n)
		d->pd.pos = (size_t)(d->pb[d->pb_i].offset - d->pd.base);
	d->pb_i = d->pb_n = 0;
	uint64_t before = d->pd.skipped;
	/* SDM 33.4.2.17, D81: the next PSB from the byte after the bad packet's
	 * first, so that a PSB it swallowed the start of is found.  The bad
	 * packet may be the last one consumed, not the one that showed the
	 * error (a packet cut short reads the next packet's bytes as its
	 * own): from the earlier of the two, as libipt also starts before
	 * where decoding stands.  Never at or before the PSB the last resync
	 * found; a PSB read since moved last_off past it. */
	uint64_t from = d->err_off < d->last_off ? d->err_off : d->last_off;
	if (d->synced && from <= d->sync_off)
		from = d->sync_off;
	int r = rtit_pktdec_resync_after(&d->pd, from);
	d->synced = r == 1;
	d->sync_off = rtit_pktdec_offset(&d->pd);
	d->st.skipped_bytes += d->pd.skipped - before;
	if (r < 0)
		return r;
	if (r == 0)
		d->eos = true;
	return 0;
}

int rtit_flow_dec_run(struct rtit_flow_dec *d)
{
	int r;

	for (;;) {
		if (d->pt && d->cfg.events_only) {
			if ((r = flow_pt_events(d)) == 1)
				break;
		} else if (d->state == ST_ENABLED) {
			r = d->pt ? flow_pt_walk(d) : walk(d);
			if (r == 2)
				break;	/* the stream ended */
		} else {
			r = d->pt ? flow_pt_idle(d) : idle(d);
			if (r == 1)
				break;
		}
		if (r < 0) {
			if (r == -RTIT_ERR_IO || r == -RTIT_ERR_NOMEM)
				return r;
			if (r == -RTIT_ERR_BAD_CONTEXT && d->soft && d->state == ST_ENABLED &&
			    d->have_la) {
				/* tracing was off when the overflow cleared: the
				 * packet in view is handled as such */
				flow_drop_uncertain(d, d->la.offset);
				d->soft = false;
				flow_disable(d, RTIT_FLOW_N_DISABLE, d->la.offset, NO_IP);
				continue;
			}
			if ((r = recover(d)) < 0)
				return r;
		}
	}
	commit(d);
	flow_flush_committed(d);
	flow_note(d, RTIT_FLOW_N_END, rtit_pktdec_offset(&d->pd), d->ip, 0);
	return (int)(d->st.errors > 0x7fffffff ? 0x7fffffff : d->st.errors);
}

/* " cyc=N" (with '*' when exact) and " tsc=0x..." when known. */
static int time_suffix(const struct rtit_sim_rec *r, char *buf, size_t size)
{
	int n = 0;
	buf[0] = 0;
	if (r->cycles || (r->pad0 & RTIT_FLOW_A_CYC_EXACT))
		n = snprintf(buf, size, " cyc=%" PRIu64 "%s", r->cycles,
			     (r->pad0 & RTIT_FLOW_A_CYC_EXACT) ? "*" : "");
	if (r->tsc && n >= 0 && (size_t)n < size)
		n += snprintf(buf + n, size - (size_t)n, " tsc=0x%" PRIx64, r->tsc);
	return n;
}

int rtit_flow_rec_format(const struct rtit_sim_rec *r, char *buf, size_t size)
{
	char t[64];
	time_suffix(r, t, sizeof(t));
	if (r->kind == RTIT_SIM_INSN) {
		if (r->pad0 & RTIT_FLOW_A_NEXT_UNKNOWN)
			return snprintf(buf, size, "I %016" PRIx64 " %-8s len=%u %s%s-> ?%s", r->ip,
					rtit_insn_class_name(r->cls), r->len,
					(r->flags & RTIT_SIM_F_TAKEN) ? "T " : "",
					(r->flags & RTIT_SIM_F_ZERO_LEN_CALL) ? "ZLC " : "", t);
		return snprintf(buf, size, "I %016" PRIx64 " %-8s len=%u %s%s%s-> %016" PRIx64 "%s",
				r->ip, rtit_insn_class_name(r->cls), r->len,
				(r->flags & RTIT_SIM_F_TAKEN) ? "T " : "",
				(r->flags & RTIT_SIM_F_ZERO_LEN_CALL) ? "ZLC " : "",
				(r->flags & RTIT_SIM_F_TX) ? "TX " : "", r->next_ip, t);
	}
	char extra[64] = "";
	if (r->cls == RTIT_EV_PEBS)	/* as isa/record.c writes it */
		snprintf(extra, sizeof(extra), " eip=0x%" PRIx64 " groups=0x%x items=0x%08x",
			 r->value, r->vector, r->msr);
	else if (r->cls == RTIT_EV_EXCEPTION)
		snprintf(extra, sizeof(extra), " vec=%u %s", r->vector,
			 (r->flags & RTIT_SIM_F_FAULT) ? "fault" : "trap");
	else if (r->cls == RTIT_EV_EXT_INTERRUPT || r->cls == RTIT_EV_NMI)
		snprintf(extra, sizeof(extra), " vec=%u", r->vector);
	else if (r->cls == RTIT_EV_VMEXIT && (r->pad0 & RTIT_FLOW_A_VMX_INFO))
		snprintf(extra, sizeof(extra), rtit_vmx_exit_has_vector(r->msr) ?
			 " reason=%u qual=0x%" PRIx64 " vec=%u" : " reason=%u qual=0x%" PRIx64,
			 r->msr, r->value, r->vector);
	if (r->pad0 & RTIT_FLOW_A_NEXT_UNKNOWN)
		return snprintf(buf, size, "E %016" PRIx64 " %-8s%s -> ?%s", r->ip,
				r->cls ? rtit_sim_event_name(r->cls) : "event", extra, t);
	return snprintf(buf, size, "E %016" PRIx64 " %-8s%s -> %016" PRIx64 "%s", r->ip,
			r->cls ? rtit_sim_event_name(r->cls) : "event", extra, r->next_ip, t);
}
