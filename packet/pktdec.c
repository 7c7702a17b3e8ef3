/*
 * pktdec.c - streaming packet decoder with last-IP tracking and resync.
 *
 * Memory is one fixed buffer (rtit_pktdec_bufsize) whatever the stream
 * length; a packet that straddles a refill is completed by moving the
 * unread tail to the front.
 */
#include <limits.h>
#include <string.h>

#include "pktdec_fast.h"
#include "rtit/pktdec.h"
#include "rtit/bits.h"
#include "rtit/opcodes_rtit.h"
#include "rtit/opcodes_pt.h"

enum { max_packet = rtit_pktdec_max_packet };

int rtit_pktdec_init(struct rtit_pktdec *d, const struct rtit_pktdec_cfg *cfg)
{
	if (!d || !cfg || (!cfg->read && !cfg->mem && cfg->mem_len))
		return -RTIT_ERR_INVALID;
	memset(d, 0, offsetof(struct rtit_pktdec, own));
	d->cfg = *cfg;
	rtit_pkt_ctx_init(&d->ctx, cfg->dialect, cfg->cycle_acc);
	d->ctx.skz84 = cfg->dialect == RTIT_DIALECT_PT && cfg->pt_skz84;
	d->ctx.skd007 = cfg->dialect == RTIT_DIALECT_PT && cfg->pt_skd007;
	rtit_last_ip_init(&d->lip, cfg->dialect);
	rtit_pktdec_fast_build(d->fast, d->fast_size, cfg->dialect, cfg->cycle_acc);
	d->simd = rtit_pktdec_simd_tables(cfg->dialect, cfg->cycle_acc);
	if (cfg->read) {
		d->buf = d->own;
	} else {
		d->buf = cfg->mem;
		d->len = cfg->mem_len;
		d->eof = true;
	}
	return 0;
}

/* Makes at least @want unread bytes available unless the stream ends.
 * Returns 0 or -RTIT_ERR_IO. */
static int fill(struct rtit_pktdec *d, size_t want)
{
	if (d->eof || d->len - d->pos >= want)
		return 0;
	/* The last bytes read stay buffered (rtit_pktdec_history): a resync
	 * after a bad packet searches from its second byte (SDM 33.4.2.17). */
	size_t keep = d->pos < rtit_pktdec_history ? d->pos : rtit_pktdec_history;
	if (d->pos > keep) {
		size_t from = d->pos - keep;
		memmove(d->own, d->own + from, d->len - from);
		d->base += from;
		d->len -= from;
		d->pos = keep;
	}
	while (!d->eof && d->len - d->pos < want) {
		ssize_t n = d->cfg.read(d->cfg.opaque, d->own + d->len,
					sizeof(d->own) - d->len);
		if (n < 0)
			return -RTIT_ERR_IO;
		if (n == 0)
			d->eof = true;
		d->len += (size_t)n;
	}
	return 0;
}

static int fail(struct rtit_pktdec *d, int code, const char *why)
{
	d->err.code = code;
	d->err.offset = rtit_pktdec_offset(d);
	d->err.why = why;
	d->nerrors++;
	return code;
}

/* The last-IP register as the packet stream implies it (RTIT 3.3.7,
 * 4.2.3.1, 4.2.5; PT 33.4.2.2, 33.3.8). */
static void track_ip(struct rtit_pktdec *d, struct rtit_pktdec_item *it)
{
	const struct rtit_packet *p = &it->pkt;

	it->ip_status = 0;
	it->ip = 0;
	it->last_ip = 0;
	it->last_ip_valid = false;
	switch (p->type) {
	case RTIT_R_PSB:
	case RTIT_PT_PSB:
		rtit_last_ip_on_psb(&d->lip);
		return;
	case RTIT_R_FUP_BUFFOVF:
		/* 4.2.5: valid bits cleared before the FUP.BuffOvf is built. */
		rtit_last_ip_invalidate(&d->lip);
		break;
	default:
		break;
	}
	if (!rtit_pkt_has_ip(p->type))
		return;
	it->last_ip = d->lip.ip;
	it->last_ip_valid = d->lip.valid;
	if (d->cfg.dialect == RTIT_DIALECT_PT && p->u.ip.ipc == 0) {
		it->ip_status = 1;	/* Table 33-18: IP out of context */
		return;
	}
	it->ip_status = rtit_last_ip_expand(&d->lip, &p->u.ip, &it->ip);
	if (it->ip_status < 0)
		return;
	/* RTIT 4.2.3.1, D4: FUP.BuffOvf does not load LAST_LIP unless configured. */
	if (p->type != RTIT_R_FUP_BUFFOVF || d->cfg.buffovf_loads_lip)
		rtit_last_ip_on_ip(&d->lip, it->ip);
}

/* An item's ip_status and last_ip_valid, with the padding after them, in
 * one 8-byte store. */
static inline void status_store(struct rtit_pktdec_item *it, int status, bool valid)
{
	_Static_assert(offsetof(struct rtit_pktdec_item, last_ip_valid) ==
		       offsetof(struct rtit_pktdec_item, ip_status) + 4 &&
		       offsetof(struct rtit_pktdec_item, ip_status) + 8 == sizeof(*it),
		       "ip_status, last_ip_valid and padding end the item");
	uint64_t v = (uint32_t)status | (uint64_t)valid << 32;

	__builtin_memcpy((uint8_t *)it + offsetof(struct rtit_pktdec_item, ip_status), &v, 8);
}

/*
 * The fast path: the packets of the first-byte table (pktdec_fast.c), one
 * after the other, with no branch on the packet type (a random mix of
 * packet types would mispredict one on every other packet).  Decodes up to
 * @cap packets into @items while at least max_packet bytes are buffered
 * (so the 8-byte payload load needs no length check).  A packet the table
 * leaves out is decoded here by rtit_pkt_decode() when it is neutral (no
 * IP, not a PSB, not a BBP); the fast path stops before any other (an IP
 * packet the table cannot reconstruct, a PSB, an error), and before
 * Intel PT blocks.  Returns the number decoded.  The state lives in locals
 * while it runs.  @track: reconstruct IPs; @known: the last IP is known
 * (else the run stops after the packet that makes it known: from then on
 * no packet needs the check); @ccp_ctx: RTIT cycle-accurate, the row
 * depends on the CCP context (constants at each call).
 *
 * The next packet's first byte is taken from the payload word already
 * loaded (it is byte size-1 of w when the packet has at most 8 bytes), not
 * loaded again from the buffer: what links one packet to the next is then
 * one table load and a shift, not two dependent loads (D29).
 */
static inline __attribute__((always_inline)) size_t
fast_run(struct rtit_pktdec *d, struct rtit_pktdec_item *items, size_t cap, const bool track,
	 const bool known, const bool ccp_ctx)
{
	const uint8_t *buf = d->buf;
	const struct rtit_pktdec_fast *tab = d->fast[0];
	const uint8_t *tsize = d->fast_size[0];
	const bool rtit = d->cfg.dialect == RTIT_DIALECT_RTIT;
	const uint64_t lip_mask = rtit ? rtit_mask(rtit_r_lip_bits) : ~0ull;
	/* The last IP sign-extended (the rows' rule, pktdec.h). */
	uint64_t last = rtit ? rtit_sext(d->lip.ip, rtit_r_lip_bits) : d->lip.ip;
	uint64_t base = d->base;
	bool valid = known || d->lip.valid;
	/* IPs compressed against an unknown last IP go the general way. */
	const uint8_t needs_slow = track && !known;
	unsigned ccp = ccp_ctx ? d->ctx.expect_ccp : 0;
	size_t pos = d->pos, end;
	struct rtit_pktdec_item *it = items, *it_end = items + cap;
	unsigned b0;

	if (d->general_only || d->ctx.in_block || d->len < max_packet)
		return 0;
	end = d->len - max_packet;
	b0 = pos <= end ? buf[pos] : 0;
	while (it < it_end && pos <= end) {
		/* No packet is longer than max_packet: this many packets
		 * start at or before end, one bound to check a packet. */
		const size_t room = (end - pos) / max_packet + 1;
		struct rtit_pktdec_item *const stop =
			(size_t)(it_end - it) > room ? it + room : it_end;

		while (it < stop) {
			const uint8_t *p = buf + pos;
			const unsigned row = ccp << 8 | b0;
			unsigned size = tsize[row];
			const struct rtit_pktdec_fast *e = &tab[row];
			uint64_t w, f, lo, hi;

			__builtin_memcpy(&w, p + 1, 8);
			f = w;		/* the fields' bytes */
			if (!ccp_ctx && __builtin_expect(!size && e->second, 0)) {
				/* Intel PT: the second byte names the packet. */
				const unsigned row2 = (unsigned)e->second << 8 | (uint8_t)w;

				/* Long TNT, Table 33-16: the highest set bit of
				 * the payload is the stop bit; none below it is an
				 * error (general path).  Masks, not a branch: Long
				 * TNTs come at random among the packets of 0x02. */
				const uint64_t pl = (w >> 8) & rtit_mask(8 * rtit_pt_pl_tnt64_size);
				const unsigned n = rtit_msb(pl | 1);
				uint64_t is_tnt;

				size = tsize[row2];
				e = &tab[row2];
				is_tnt = -(uint64_t)e->tnt_msb;
				f = (((pl & rtit_mask(n)) | (uint64_t)n << 56) & is_tnt) | (w & ~is_tnt);
				size &= ~(unsigned)(is_tnt & -(uint64_t)(pl < 2));
			}
			if (__builtin_expect(!size || (w & e->slow_if) || (e->needs_ip & needs_slow), 0)) {
				struct rtit_pkt_ctx ctx = d->ctx;
				int ret;

				ctx.expect_ccp = ccp;
				ret = rtit_pkt_decode(&ctx, p, d->len - pos, &it->pkt, NULL);
				if (ret <= 0 || !rtit_pktdec_neutral(it->pkt.type))
					goto out;
				rtit_pkt_ctx_on_packet(&ctx, &it->pkt);
				ccp = ccp_ctx ? ctx.expect_ccp : 0;
				it->offset = base + pos;
				it->raw = p;
				it->ip = it->last_ip = 0;
				status_store(it, 0, false);
				pos += (size_t)ret;
				b0 = pos <= end ? buf[pos] : 0;
				it++;
				continue;
			}
			lo = e->lo_const | rtit_rotl64(f & e->lo_mask, e->lo_rot);
			hi = e->hi_const | (f & e->hi_mask);
			__builtin_memcpy(&it->pkt, &e->head, 8);
			__builtin_memcpy((uint8_t *)&it->pkt.u, &lo, 8);
			__builtin_memcpy((uint8_t *)&it->pkt.u + 8, &hi, 8);
			it->offset = base + pos;
			it->raw = p;
			if (track) {
				/* The IP packets' rule, as track_ip() and
				 * rtit_last_ip_expand(): masks instead of branches. */
				uint64_t x = hi & e->ip_load;
				uint64_t ip = (last & e->ip_keep) |
					(uint64_t)((int64_t)(x << e->sext_shl) >> e->sext_shl);

				it->ip = ip & e->ip_load;
				it->last_ip = last & lip_mask & -(uint64_t)e->is_ip;
				status_store(it, e->ip_status, valid & e->is_ip);
				last = ip;
				valid |= e->ip_load & 1;
			} else {
				it->ip = it->last_ip = 0;
				status_store(it, 0, false);
			}
			if (ccp_ctx)
				ccp = e->next_ccp;
			pos += size;
			it++;
			if (__builtin_expect(size <= sizeof(w), 1))
				b0 = (uint8_t)(w >> (8 * size - 8));
			else
				b0 = pos <= end ? buf[pos] : 0;
			if (track && !known && valid)
				goto out;
		}
	}
out:
	d->pos = pos;
	d->lip.ip = last & lip_mask;
	d->lip.valid = valid;
	d->ctx.expect_ccp = ccp_ctx ? ccp : d->ctx.expect_ccp;
	return (size_t)(it - items);
}

/* Below this many items a call the vector path's chunk set-up costs more
 * than it saves (rtit_pktdec_next() asks for one). */
enum { simd_min_cap = 16 };

/* The vector path (pktdec_simd.c, D64) with the scalar fast path for the
 * packets it leaves out: one packet, then the vector path again. */
static size_t fast_simd(struct rtit_pktdec *d, struct rtit_pktdec_item *items, size_t cap)
{
	const bool track = !d->cfg.no_ip;
	size_t n = 0;

	while (n < cap) {
		size_t k = rtit_pktdec_simd_run(d, items + n, cap - n);

		n += k;
		if (n == cap)
			break;
		k = track ? fast_run(d, items + n, 1, true, true, false)
			: fast_run(d, items + n, 1, false, false, false);
		if (!k)
			break;
		n += k;
	}
	return n;
}

static size_t fast(struct rtit_pktdec *d, struct rtit_pktdec_item *items, size_t cap)
{
	/* The RTIT CCP context (rtit_pkt_ctx_init: cycle_acc is RTIT only). */
	const bool ccp = d->ctx.cycle_acc;
	size_t n = 0;

	if (d->simd && !d->no_simd && !d->general_only && !d->ctx.in_block &&
	    cap >= simd_min_cap && (d->cfg.no_ip || d->lip.valid))
		return fast_simd(d, items, cap);

	if (d->cfg.no_ip)
		return ccp ? fast_run(d, items, cap, false, false, true)
			: fast_run(d, items, cap, false, false, false);
	if (!d->lip.valid) {
		n = ccp ? fast_run(d, items, cap, true, false, true)
			: fast_run(d, items, cap, true, false, false);
		if (!d->lip.valid || n == cap)
			return n;
	}
	return n + (ccp ? fast_run(d, items + n, cap - n, true, true, true)
		    : fast_run(d, items + n, cap - n, true, true, false));
}

/* One packet by the general decoder (packet_decode.c) from the buffered
 * bytes.  Returns 1, 0 at the end of the stream, or a negative error
 * (with *@why) that the caller records. */
static int general(struct rtit_pktdec *d, struct rtit_pktdec_item *it, const char **why)
{
	int ret;

	if (d->pos >= d->len)
		return 0;
	ret = rtit_pkt_decode(&d->ctx, d->buf + d->pos, d->len - d->pos,
			      &it->pkt, why);
	if (ret < 0) {
		if (ret == -RTIT_ERR_EOS && !d->eof) {
			*why = "buffer refill short";
			return -RTIT_ERR_INTERNAL;
		}
		return ret;
	}
	it->offset = rtit_pktdec_offset(d);
	it->raw = d->buf + d->pos;
	d->pos += (size_t)ret;
	rtit_pkt_ctx_on_packet(&d->ctx, &it->pkt);
	if (d->cfg.no_ip) {
		it->ip_status = 0;
		it->ip = it->last_ip = 0;
		it->last_ip_valid = false;
	} else {
		track_ip(d, it);
	}
	return 1;
}

int rtit_pktdec_next(struct rtit_pktdec *d, struct rtit_pktdec_item *it)
{
	const char *why = NULL;
	int ret;

	if (d->cfg.read && fill(d, max_packet) < 0)
		return fail(d, -RTIT_ERR_IO, "read failed");
	if (fast(d, it, 1)) {
		d->last_start = it->offset + 1;
		return 1;
	}
	ret = general(d, it, &why);
	if (ret > 0)
		d->last_start = it->offset + 1;
	return ret < 0 ? fail(d, ret, why) : ret;
}

int rtit_pktdec_next_batch(struct rtit_pktdec *d, struct rtit_pktdec_item *items,
			   size_t cap)
{
	size_t n = 0;

	if (!d || !items || !cap)
		return -RTIT_ERR_INVALID;
	if (cap > INT_MAX)
		cap = INT_MAX;
	while (n < cap) {
		const char *why = NULL;
		int ret;

		n += fast(d, items + n, cap - n);
		if (n == cap)
			break;
		if (d->cfg.read && !d->eof && d->len - d->pos < max_packet) {
			/* A refill moves the bytes the items' raw point to. */
			if (n)
				break;
			if (fill(d, max_packet) < 0)
				return fail(d, -RTIT_ERR_IO, "read failed");
			continue;
		}
		ret = general(d, items + n, &why);
		if (ret == 0)
			break;
		if (ret < 0) {
			/* Reported by the next call, at the same offset. */
			if (n)
				break;
			return fail(d, ret, why);
		}
		n++;
	}
	if (n)
		d->last_start = items[n - 1].offset + 1;
	return (int)n;
}

int rtit_pktdec_resync(struct rtit_pktdec *d, bool at_or_after)
{
	size_t psb = rtit_psb_size(d->cfg.dialect);
	size_t from = at_or_after ? 0 : 1;

	/* After an error, from the byte after the first byte of the last
	 * packet decoded (the bad one, or the one before the bad bytes),
	 * while it is buffered: a PSB whose first bytes that packet swallowed
	 * is found (SDM 33.4.2.17: the PSB is a pattern to search for; D86). */
	if (!at_or_after && d->last_start && fill(d, psb + 1) < 0)
		return fail(d, -RTIT_ERR_IO, "read failed");
	if (!at_or_after && d->last_start > d->base &&
	    d->last_start < rtit_pktdec_offset(d)) {
		/* the bytes after the packet's first byte, up to pos */
		size_t in = (size_t)(rtit_pktdec_offset(d) - d->last_start);
		long at = rtit_sync_forward(d->cfg.dialect, d->buf + d->pos - in,
					    d->len - d->pos + in, 0);
		if (at >= 0 && (size_t)at < in) {
			d->pos = d->pos - in + (size_t)at;
			d->last_start = 0;
			rtit_pkt_ctx_on_sync(&d->ctx);
			rtit_last_ip_invalidate(&d->lip);
			return 1;
		}
	}
	d->last_start = 0;

	for (;;) {
		long at;

		if (fill(d, psb + 1) < 0)
			return fail(d, -RTIT_ERR_IO, "read failed");
		at = rtit_sync_forward(d->cfg.dialect, d->buf + d->pos,
				       d->len - d->pos, from);
		if (at >= 0) {
			d->skipped += (uint64_t)at;
			d->pos += (size_t)at;
			rtit_pkt_ctx_on_sync(&d->ctx);
			/* Until the PSB is decoded no IP is known. */
			rtit_last_ip_invalidate(&d->lip);
			return 1;
		}
		/* Keep the last psb-1 bytes: a PSB may start there. */
		size_t avail = d->len - d->pos;
		if (d->eof) {
			d->skipped += avail;
			d->pos = d->len;
			return 0;
		}
		if (avail >= psb) {
			size_t drop = avail - (psb - 1);
			d->skipped += drop;
			d->pos += drop;
			from = 0;
		}
	}
}

int rtit_pktdec_resync_after(struct rtit_pktdec *d, uint64_t off)
{
	/* From the byte after @off's, or the first byte still buffered (a
	 * PSB that a packet before it swallowed part of starts after that,
	 * when @off's bytes are gone: rtit_pktdec_history >= a PSB) */
	uint64_t at = off + 1 > d->base ? off + 1 : d->base;
	uint64_t now = rtit_pktdec_offset(d);

	if (at <= now) {
		d->pos = (size_t)(at - d->base);
		int r = rtit_pktdec_resync(d, true);
		uint64_t moved = rtit_pktdec_offset(d) - at;
		/* only what lies past where decoding stood was skipped */
		d->skipped -= moved;
		if (rtit_pktdec_offset(d) > now)
			d->skipped += rtit_pktdec_offset(d) - now;
		return r;
	}
	return rtit_pktdec_resync(d, false);
}
