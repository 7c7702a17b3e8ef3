/*
 * pktdec.c - streaming packet decoder with last-IP tracking and resync.
 *
 * Memory is one fixed buffer (rtit_pktdec_bufsize) whatever the stream
 * length; a packet that straddles a refill is completed by moving the
 * unread tail to the front.
 */
#include <string.h>

#include "rtit/pktdec.h"
#include "rtit/bits.h"
#include "rtit/opcodes_rtit.h"
#include "rtit/opcodes_pt.h"

/* Longest packet of either dialect (PT PSB, 16 bytes). */
enum { max_packet = 16 };

int rtit_pktdec_init(struct rtit_pktdec *d, const struct rtit_pktdec_cfg *cfg)
{
	if (!d || !cfg || (!cfg->read && !cfg->mem && cfg->mem_len))
		return -RTIT_ERR_INVALID;
	memset(d, 0, offsetof(struct rtit_pktdec, own));
	d->cfg = *cfg;
	rtit_pkt_ctx_init(&d->ctx, cfg->dialect, cfg->cycle_acc);
	rtit_last_ip_init(&d->lip, cfg->dialect);
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
	if (d->pos) {
		memmove(d->own, d->own + d->pos, d->len - d->pos);
		d->base += d->pos;
		d->len -= d->pos;
		d->pos = 0;
	}
	while (!d->eof && d->len < want) {
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
	/* A-R7: FUP.BuffOvf does not load LAST_LIP unless configured. */
	if (p->type != RTIT_R_FUP_BUFFOVF || d->cfg.buffovf_loads_lip)
		rtit_last_ip_on_ip(&d->lip, it->ip);
}

/* The most frequent packet, a TNT, without the general decoder: RTIT
 * 0x02-0x7F when no cycle count packet is due (4.2.2); Intel PT an even
 * byte other than 0x00/0x02 outside a block (Table 33-16).  Returns
 * false when @b0 is something else. */
static inline bool fast_tnt(struct rtit_pktdec *d, uint8_t b0, struct rtit_pktdec_item *it)
{
	unsigned v;

	if (d->cfg.dialect == RTIT_DIALECT_RTIT) {
		if ((b0 & rtit_r_tnt_mask) || b0 < rtit_r_tnt_min || d->ctx.expect_ccp)
			return false;
		v = b0;
		it->pkt.type = RTIT_R_TNT;
	} else {
		if ((b0 & rtit_pt_tnt8_mask) != rtit_pt_tnt8 || b0 <= rtit_pt_ext || d->ctx.in_block)
			return false;
		v = b0 >> rtit_pt_tnt8_shr;
		it->pkt.type = RTIT_PT_TNT8;
	}
	unsigned n = 31u - (unsigned)__builtin_clz(v);
	it->pkt.size = 1;
	it->pkt.u.tnt.nbits = (uint8_t)n;
	it->pkt.u.tnt.bits = v & ((1u << n) - 1);
	it->offset = rtit_pktdec_offset(d);
	it->raw = d->buf + d->pos;
	it->ip_status = 0;
	it->ip = it->last_ip = 0;
	it->last_ip_valid = false;
	d->pos++;
	/* RTIT 4.2.15: a full TNT brings a cycle count packet. */
	d->ctx.expect_ccp = d->ctx.cycle_acc && n == 6;
	return true;
}

/* The next most frequent packets, TIP and FUP with a compressed IP, without
 * the general decoder and track_ip: RTIT TIP/FUP.PGE/PGD/PCC/FAR with CNT
 * 00-10 whose IP needs no invalid LAST_LIP (4.2.3.1, Table 18); Intel PT
 * TIP/TIP.PGE/TIP.PGD/FUP with IPBytes 001-100 or 110 against a known Last
 * IP (Table 33-18).  Needs 9 bytes in the buffer (one 8-byte payload
 * load).  Returns false for anything else, which the general path decodes
 * (reserved codes, FUP.BuffOvf, suppressed IPs, errors). */
static const uint8_t fast_rtit_ev_type[8] = {
	[rtit_r_ev_pge] = RTIT_R_FUP_PGE, [rtit_r_ev_pgd] = RTIT_R_FUP_PGD,
	[rtit_r_ev_pcc] = RTIT_R_FUP_PCC, [rtit_r_ev_tip] = RTIT_R_TIP,
	[rtit_r_ev_far] = RTIT_R_FUP_FAR,
};
static const uint8_t fast_pt_ip_type[32] = {
	[rtit_pt_tip] = RTIT_PT_TIP, [rtit_pt_tip_pge] = RTIT_PT_TIP_PGE,
	[rtit_pt_tip_pgd] = RTIT_PT_TIP_PGD, [rtit_pt_fup] = RTIT_PT_FUP,
};

static inline bool fast_ip(struct rtit_pktdec *d, uint8_t b0, struct rtit_pktdec_item *it)
{
	const uint8_t *p = d->buf + d->pos;
	uint64_t pl, last = d->lip.ip, ip;
	unsigned type, ipc, nbytes;

	if (d->len - d->pos < 9)
		return false;
	if (d->cfg.dialect == RTIT_DIALECT_RTIT) {
		if ((b0 & rtit_r_fup_mask) != rtit_r_fup || d->ctx.expect_ccp)
			return false;
		type = fast_rtit_ev_type[(b0 >> rtit_r_fup_event_shr) & rtit_r_fup_event_mask];
		ipc = b0 & rtit_r_fup_cnt_mask;
		bool zext = b0 & rtit_r_fup_zext;
		if (!type || ipc == rtit_r_cnt_rsvd || (ipc != rtit_r_cnt_48 && !zext && !d->lip.valid))
			return false;
		nbytes = 2u * (ipc + 1);
		__builtin_memcpy(&pl, p + 1, 8);
		pl &= rtit_mask(8 * nbytes);
		if (ipc == rtit_r_cnt_48 || zext)
			ip = pl;
		else
			ip = (last & ~rtit_mask(8 * nbytes)) | pl;
		ip = rtit_sext(ip, rtit_r_lip_bits);
		it->pkt.u.ip.zext = zext;
		d->lip.ip = ip & rtit_mask(rtit_r_lip_bits);
		/* 4.2.15: every FUP and TIP brings a cycle count packet. */
		d->ctx.expect_ccp = d->ctx.cycle_acc;
	} else {
		static const uint8_t ipc_bytes[8] = { 0, 2, 4, 6, 6, 0, 8, 0 };
		type = fast_pt_ip_type[b0 & rtit_pt_opm_ip];
		ipc = b0 >> rtit_pt_ipc_shr;
		nbytes = ipc_bytes[ipc];
		if (!type || !nbytes || d->ctx.in_block ||
		    (ipc != rtit_pt_ipc_sext_48 && ipc != rtit_pt_ipc_full && !d->lip.valid))
			return false;
		__builtin_memcpy(&pl, p + 1, 8);
		pl &= rtit_mask(8 * nbytes);
		if (ipc == rtit_pt_ipc_sext_48)
			ip = rtit_sext(pl, 48);
		else if (ipc == rtit_pt_ipc_full)
			ip = pl;
		else
			ip = (last & ~rtit_mask(8 * nbytes)) | pl;
		it->pkt.u.ip.zext = false;
		d->lip.ip = ip;
	}
	it->pkt.type = (enum rtit_pkt_type)type;
	it->pkt.size = (uint8_t)(1 + nbytes);
	it->pkt.u.ip.ipc = (uint8_t)ipc;
	it->pkt.u.ip.payload = pl;
	it->offset = rtit_pktdec_offset(d);
	it->raw = p;
	it->ip_status = 0;
	it->ip = ip;
	it->last_ip = last;
	it->last_ip_valid = d->lip.valid;
	d->lip.valid = true;
	d->pos += 1 + nbytes;
	return true;
}

int rtit_pktdec_next(struct rtit_pktdec *d, struct rtit_pktdec_item *it)
{
	const char *why = NULL;
	int ret;

	if (d->cfg.read && fill(d, max_packet) < 0)
		return fail(d, -RTIT_ERR_IO, "read failed");
	if (d->pos >= d->len)
		return 0;
	if (fast_tnt(d, d->buf[d->pos], it) || fast_ip(d, d->buf[d->pos], it))
		return 1;
	ret = rtit_pkt_decode(&d->ctx, d->buf + d->pos, d->len - d->pos,
			      &it->pkt, &why);
	if (ret < 0) {
		if (ret == -RTIT_ERR_EOS && !d->eof)
			return fail(d, -RTIT_ERR_INTERNAL, "buffer refill short");
		return fail(d, ret, why);
	}
	it->offset = rtit_pktdec_offset(d);
	it->raw = d->buf + d->pos;
	d->pos += (size_t)ret;
	rtit_pkt_ctx_on_packet(&d->ctx, &it->pkt);
	track_ip(d, it);
	return 1;
}

int rtit_pktdec_resync(struct rtit_pktdec *d, bool at_or_after)
{
	size_t psb = rtit_psb_size(d->cfg.dialect);
	size_t from = at_or_after ? 0 : 1;

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
