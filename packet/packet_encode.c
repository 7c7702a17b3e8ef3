/*
 * packet_encode.c - one struct rtit_packet to bytes, both dialects.
 *
 * Mirror of packet/packet_decode.c.  Only formats: the choice of packet
 * and of IP compression is the encoder model's (and ip.h's).
 */
#include <string.h>

#include "rtit/packet.h"
#include "rtit/bits.h"
#include "rtit/opcodes_rtit.h"
#include "rtit/opcodes_pt.h"

#define CHECK(cond) do { if (!(cond)) return -RTIT_ERR_BAD_PACKET; } while (0)
#define ROOM(n) do { if (cap < (size_t)(n)) return -RTIT_ERR_NOSPACE; } while (0)

/* Shortest CCP for a 22-bit value (RTIT 4.2.14, Figure 13; D6). */
static unsigned rtit_r_ccp_min_bytes(uint64_t v)
{
	if (!(v >> 6))
		return 1;
	if (!(v >> 14))
		return 2;
	return 3;
}

static int rtit_r_encode_ip(uint8_t ev, const struct rtit_pkt_ip *ip,
			    uint8_t *buf, size_t cap)
{
	int pl = rtit_ipc_payload_size(RTIT_DIALECT_RTIT, ip->ipc);

	CHECK(pl > 0);
	CHECK(!(ip->payload >> (8 * pl)));
	ROOM(rtit_r_opc_size + pl);
	buf[0] = (uint8_t)(rtit_r_fup | (ev << rtit_r_fup_event_shr) |
			   (ip->zext ? rtit_r_fup_zext : 0) | ip->ipc);
	rtit_le_store(buf + 1, ip->payload, (size_t)pl);
	return rtit_r_opc_size + pl;
}

static int rtit_r_encode(const struct rtit_pkt_ctx *ctx,
			 const struct rtit_packet *pkt, uint8_t *buf, size_t cap)
{
	if (ctx->expect_ccp != (pkt->type == RTIT_R_CCP))
		return -RTIT_ERR_BAD_CONTEXT;

	switch (pkt->type) {
	case RTIT_R_PSB:
		ROOM(rtit_r_psb_size);
		buf[0] = rtit_r_opc_psb;
		memset(buf + 1, 0, rtit_r_pl_psb_size);
		return rtit_r_psb_size;
	case RTIT_R_TNT: {
		unsigned n = pkt->u.tnt.nbits;
		CHECK(n >= 1 && n <= rtit_r_tnt_max_bits);
		CHECK(!(pkt->u.tnt.bits >> n));
		ROOM(rtit_r_tnt_size);
		buf[0] = (uint8_t)((1u << n) | pkt->u.tnt.bits);
		return rtit_r_tnt_size;
	}
	case RTIT_R_TIP: return rtit_r_encode_ip(rtit_r_ev_tip, &pkt->u.ip, buf, cap);
	case RTIT_R_FUP_PGE: return rtit_r_encode_ip(rtit_r_ev_pge, &pkt->u.ip, buf, cap);
	case RTIT_R_FUP_PGD: return rtit_r_encode_ip(rtit_r_ev_pgd, &pkt->u.ip, buf, cap);
	case RTIT_R_FUP_BUFFOVF: return rtit_r_encode_ip(rtit_r_ev_buffovf, &pkt->u.ip, buf, cap);
	case RTIT_R_FUP_PCC: return rtit_r_encode_ip(rtit_r_ev_pcc, &pkt->u.ip, buf, cap);
	case RTIT_R_FUP_FAR: return rtit_r_encode_ip(rtit_r_ev_far, &pkt->u.ip, buf, cap);
	case RTIT_R_PIP:
		CHECK(!(pkt->u.pip.cr3 >> 40));
		ROOM(rtit_r_pip_size);
		buf[0] = (uint8_t)(rtit_r_opc_pip | (pkt->u.pip.pg ? rtit_r_pip_pg : 0));
		rtit_le_store(buf + 1, pkt->u.pip.cr3, rtit_r_pl_pip_size);
		return rtit_r_pip_size;
	case RTIT_R_TRACESTOP:
		ROOM(rtit_r_tracestop_size);
		buf[0] = rtit_r_opc_tracestop;
		return rtit_r_tracestop_size;
	case RTIT_R_MTC:
		CHECK(pkt->u.mtc.rng <= rtit_r_mtc_rng_mask);
		ROOM(rtit_r_mtc_size);
		buf[0] = (uint8_t)(rtit_r_opc_mtc | pkt->u.mtc.rng);
		buf[1] = pkt->u.mtc.ctc;
		return rtit_r_mtc_size;
	case RTIT_R_STS:
		CHECK(pkt->u.sts.acbr < 64 && pkt->u.sts.ecbr < 64);
		CHECK(!(pkt->u.sts.tsc >> rtit_r_sts_tsc_bits));
		ROOM(rtit_r_sts_size);
		buf[0] = (uint8_t)(rtit_r_opc_sts | (pkt->u.sts.acbr >> 2));
		buf[1] = (uint8_t)(((pkt->u.sts.acbr & 3u) << rtit_r_sts_acbr_lo_shr) |
				   pkt->u.sts.ecbr);
		rtit_le_store(buf + 2, pkt->u.sts.tsc, rtit_r_pl_sts_tsc_size);
		return rtit_r_sts_size;
	case RTIT_R_CCP: {
		uint64_t v = pkt->u.cyc.value;
		unsigned n = pkt->u.cyc.nbytes ? pkt->u.cyc.nbytes : rtit_r_ccp_min_bytes(v);
		CHECK(n >= 1 && n <= rtit_r_ccp_max_size);
		CHECK(!(v >> (6 + 8 * (n - 1))));
		ROOM(n);
		buf[0] = (uint8_t)(((v & 0x3f) << rtit_r_ccp_shl) | n);
		if (n >= 2)
			buf[1] = (uint8_t)(v >> 6);
		if (n == 3)
			buf[2] = (uint8_t)(v >> 14);
		return (int)n;
	}
	default:
		return -RTIT_ERR_BAD_OPC;
	}
}

static int pt_encode_ip(uint8_t opc, const struct rtit_pkt_ip *ip,
			uint8_t *buf, size_t cap)
{
	int pl = rtit_ipc_payload_size(RTIT_DIALECT_PT, ip->ipc);

	CHECK(pl >= 0);
	CHECK(pl == 8 || !(ip->payload >> (8 * pl)));
	ROOM(rtit_pt_opc_size + pl);
	buf[0] = (uint8_t)(opc | (ip->ipc << rtit_pt_ipc_shr));
	rtit_le_store(buf + 1, ip->payload, (size_t)pl);
	return rtit_pt_opc_size + pl;
}

static int pt_encode_ext(uint8_t op, uint8_t *buf, size_t cap, size_t size)
{
	ROOM(size);
	buf[0] = rtit_pt_ext;
	buf[1] = op;
	return (int)size;
}

/* Shortest CYC (Table 33-33): 5 bits, then 7 per byte. */
static unsigned pt_cyc_min_bytes(uint64_t v)
{
	unsigned n = 1;
	for (v >>= 5; v; v >>= 7)
		n++;
	return n;
}

/* One Intel PT packet into its bytes (SDM 33.4.2).  Longer than 150
 * lines on purpose: it is one switch over the packet type, one short case
 * per packet, and encode(packet) -> bytes is kept as one switch (type) so
 * that each packet's layout reads next to its neighbours and against the
 * decoder's switch; splitting it by family would only add a second
 * dispatch on the type. */
/* Table 33-32: 02 73, CTC[15:0], 0, FC[7:0], FC[8]; erratum SKZ84's form
 * (D143): the reserved bits set and the bogus byte after it, 8 bytes. */
static int pt_encode_tma(const struct rtit_pkt_tma *t, uint8_t *buf, size_t cap)
{
	int n;

	CHECK(!(t->fc >> rtit_pt_tma_fc_bits));
	if (t->skz84)
		ROOM(rtit_pt_skz84_tma_size);
	n = pt_encode_ext(rtit_pt_ext_tma, buf, cap, rtit_pt_tma_size);
	if (n <= 0)
		return n;
	rtit_le_store(buf + 2, t->ctc, 2);
	buf[4] = t->skz84 ? rtit_pt_skz84_rsvd4 : 0;
	buf[5] = (uint8_t)t->fc;
	buf[6] = (uint8_t)((t->fc >> 8) | (t->skz84 ? rtit_pt_skz84_rsvd6 : 0));
	if (!t->skz84)
		return n;
	buf[7] = rtit_pt_skz84_bogus;
	return rtit_pt_skz84_tma_size;
}

static int pt_encode(const struct rtit_pkt_ctx *ctx,
		     const struct rtit_packet *pkt, uint8_t *buf, size_t cap)
{
	int n;

	if (pkt->type == RTIT_PT_BIP && !ctx->in_block)
		return -RTIT_ERR_BAD_CONTEXT;

	switch (pkt->type) {
	case RTIT_PT_PAD:
		ROOM(rtit_pt_pad_size);
		buf[0] = rtit_pt_opc_pad;
		return rtit_pt_pad_size;
	case RTIT_PT_TNT8: {
		unsigned nb = pkt->u.tnt.nbits;
		CHECK(nb >= 1 && nb <= rtit_pt_tnt8_max_bits);
		CHECK(!(pkt->u.tnt.bits >> nb));
		ROOM(rtit_pt_tnt8_size);
		buf[0] = (uint8_t)(((1u << nb) | pkt->u.tnt.bits) << rtit_pt_tnt8_shr);
		return rtit_pt_tnt8_size;
	}
	case RTIT_PT_TNT64: {
		unsigned nb = pkt->u.tnt.nbits;
		CHECK(nb >= 1 && nb <= rtit_pt_tnt64_max_bits);
		CHECK(!(pkt->u.tnt.bits >> nb));
		n = pt_encode_ext(rtit_pt_ext_tnt64, buf, cap, rtit_pt_tnt64_size);
		if (n > 0)
			rtit_le_store(buf + 2, (1ull << nb) | pkt->u.tnt.bits,
				      rtit_pt_pl_tnt64_size);
		return n;
	}
	case RTIT_PT_TIP: return pt_encode_ip(rtit_pt_opc_tip, &pkt->u.ip, buf, cap);
	case RTIT_PT_TIP_PGE: return pt_encode_ip(rtit_pt_opc_tip_pge, &pkt->u.ip, buf, cap);
	case RTIT_PT_TIP_PGD: return pt_encode_ip(rtit_pt_opc_tip_pgd, &pkt->u.ip, buf, cap);
	case RTIT_PT_FUP: return pt_encode_ip(rtit_pt_opc_fup, &pkt->u.ip, buf, cap);
	case RTIT_PT_PIP:
		CHECK(!(pkt->u.pip.cr3 & rtit_mask(rtit_pt_pip_shl)));
		CHECK(!(pkt->u.pip.cr3 >> 52));
		n = pt_encode_ext(rtit_pt_ext_pip, buf, cap, rtit_pt_pip_size);
		if (n > 0)
			rtit_le_store(buf + 2, ((pkt->u.pip.cr3 >> rtit_pt_pip_shl) << rtit_pt_pip_shr) |
				      (pkt->u.pip.nr ? rtit_pt_pip_nr : 0), rtit_pt_pl_pip_size);
		return n;
	case RTIT_PT_MODE_EXEC:
	case RTIT_PT_MODE_TSX:
		CHECK(!(pkt->u.mode.bits & ~rtit_pt_mode_bits_mask));
		ROOM(rtit_pt_mode_size);
		buf[0] = rtit_pt_mode;
		buf[1] = (uint8_t)(((pkt->type == RTIT_PT_MODE_EXEC ? rtit_pt_leaf_mode_exec : rtit_pt_leaf_mode_tsx)
				    << rtit_pt_mode_leaf_shr) | pkt->u.mode.bits);
		return rtit_pt_mode_size;
	case RTIT_PT_TRACESTOP:
		return pt_encode_ext(rtit_pt_ext_stop, buf, cap, rtit_pt_stop_size);
	case RTIT_PT_CBR:
		n = pt_encode_ext(rtit_pt_ext_cbr, buf, cap, rtit_pt_cbr_size);
		if (n > 0) {
			buf[2] = pkt->u.cbr;
			buf[3] = 0;
		}
		return n;
	case RTIT_PT_TSC:
		CHECK(!(pkt->u.tsc >> rtit_pt_tsc_bits));
		ROOM(rtit_pt_tsc_size);
		buf[0] = rtit_pt_opc_tsc;
		rtit_le_store(buf + 1, pkt->u.tsc, rtit_pt_pl_tsc_size);
		return rtit_pt_tsc_size;
	case RTIT_PT_MTC:
		ROOM(rtit_pt_mtc_size);
		buf[0] = rtit_pt_opc_mtc;
		buf[1] = pkt->u.mtc.ctc;
		return rtit_pt_mtc_size;
	case RTIT_PT_TMA:
		return pt_encode_tma(&pkt->u.tma, buf, cap);
	case RTIT_PT_CYC: {
		uint64_t v = pkt->u.cyc.value;
		unsigned nb = pkt->u.cyc.nbytes ? pkt->u.cyc.nbytes : pt_cyc_min_bytes(v);
		CHECK(nb >= pt_cyc_min_bytes(v) && nb <= rtit_pt_cyc_max_size);
		ROOM(nb);
		buf[0] = (uint8_t)(rtit_pt_opc_cyc | ((v & 0x1f) << rtit_pt_cyc_shr) |
				   (nb > 1 ? rtit_pt_cyc_exp : 0));
		v >>= 5;
		for (unsigned i = 1; i < nb; i++, v >>= 7)
			buf[i] = (uint8_t)(((v & 0x7f) << rtit_pt_cyc_ext_shr) |
					   (i + 1 < nb ? rtit_pt_cyc_ext_exp : 0));
		return (int)nb;
	}
	case RTIT_PT_VMCS:
		CHECK(!(pkt->u.vmcs & rtit_mask(rtit_pt_vmcs_shl)));
		CHECK(!(pkt->u.vmcs >> 52));
		n = pt_encode_ext(rtit_pt_ext_vmcs, buf, cap, rtit_pt_vmcs_size);
		if (n > 0)
			rtit_le_store(buf + 2, pkt->u.vmcs >> rtit_pt_vmcs_shl, rtit_pt_pl_vmcs_size);
		return n;
	case RTIT_PT_OVF:
		return pt_encode_ext(rtit_pt_ext_ovf, buf, cap, rtit_pt_ovf_size);
	case RTIT_PT_PSB:
		ROOM(rtit_pt_psb_size);
		for (int i = 0; i < rtit_pt_psb_size; i += rtit_pt_ext_opc_size) {
			buf[i] = rtit_pt_ext;
			buf[i + 1] = rtit_pt_ext_psb;
		}
		return rtit_pt_psb_size;
	case RTIT_PT_PSBEND:
		return pt_encode_ext(rtit_pt_ext_psbend, buf, cap, rtit_pt_psbend_size);
	case RTIT_PT_MNT:
		n = pt_encode_ext(rtit_pt_ext_mnt, buf, cap, rtit_pt_mnt_size);
		if (n > 0) {
			buf[2] = rtit_pt_ext2_mnt;
			rtit_le_store(buf + 3, pkt->u.mnt, rtit_pt_pl_mnt_size);
		}
		return n;
	case RTIT_PT_PTW: {
		size_t pl;
		CHECK(pkt->u.ptw.plsz <= 1);
		pl = pkt->u.ptw.plsz ? rtit_pt_pl_ptw8_size : rtit_pt_pl_ptw4_size;
		CHECK(pl == 8 || !(pkt->u.ptw.payload >> 32));
		n = pt_encode_ext((uint8_t)(rtit_pt_ext_ptw | (pkt->u.ptw.plsz << rtit_pt_ptw_plsz_shr) |
					    (pkt->u.ptw.ip ? rtit_pt_ext_ip : 0)),
				  buf, cap, rtit_pt_ext_opc_size + pl);
		if (n > 0)
			rtit_le_store(buf + 2, pkt->u.ptw.payload, pl);
		return n;
	}
	case RTIT_PT_EXSTOP:
		return pt_encode_ext((uint8_t)(rtit_pt_ext_exstop | (pkt->u.ip_bit ? rtit_pt_ext_ip : 0)),
				     buf, cap, rtit_pt_exstop_size);
	case RTIT_PT_BEP:
		return pt_encode_ext((uint8_t)(rtit_pt_ext_bep | (pkt->u.ip_bit ? rtit_pt_ext_ip : 0)),
				     buf, cap, rtit_pt_bep_size);
	case RTIT_PT_MWAIT:
		n = pt_encode_ext(rtit_pt_ext_mwait, buf, cap, rtit_pt_mwait_size);
		if (n > 0) {
			rtit_le_store(buf + 2, pkt->u.mwait.hints, 4);
			rtit_le_store(buf + 6, pkt->u.mwait.ext, 4);
		}
		return n;
	case RTIT_PT_PWRE:
		CHECK(pkt->u.pwre.state < 16 && pkt->u.pwre.sub_state < 16);
		n = pt_encode_ext(rtit_pt_ext_pwre, buf, cap, rtit_pt_pwre_size);
		if (n > 0) {
			buf[2] = pkt->u.pwre.hw ? rtit_pt_pwre_hw : 0;
			buf[3] = (uint8_t)((pkt->u.pwre.state << rtit_pt_pwre_state_shr) |
					   pkt->u.pwre.sub_state);
		}
		return n;
	case RTIT_PT_PWRX:
		CHECK(pkt->u.pwrx.last < 16 && pkt->u.pwrx.deepest < 16 && pkt->u.pwrx.wake < 16);
		n = pt_encode_ext(rtit_pt_ext_pwrx, buf, cap, rtit_pt_pwrx_size);
		if (n > 0) {
			buf[2] = (uint8_t)((pkt->u.pwrx.last << rtit_pt_pwrx_last_shr) | pkt->u.pwrx.deepest);
			buf[3] = pkt->u.pwrx.wake;
			memset(buf + 4, 0, 3);
		}
		return n;
	case RTIT_PT_BBP:
		CHECK(pkt->u.bbp.type <= rtit_pt_bbp_type_mask);
		n = pt_encode_ext(rtit_pt_ext_bbp, buf, cap, rtit_pt_bbp_size);
		if (n > 0)
			buf[2] = (uint8_t)((pkt->u.bbp.sz ? rtit_pt_bbp_sz : 0) | pkt->u.bbp.type);
		return n;
	case RTIT_PT_BIP: {
		size_t pl = ctx->block_sz4 ? rtit_pt_pl_bip4_size : rtit_pt_pl_bip8_size;
		CHECK(pkt->u.bip.id < 32);
		CHECK(pl == 8 || !(pkt->u.bip.value >> 32));
		ROOM(rtit_pt_opc_size + pl);
		buf[0] = (uint8_t)((pkt->u.bip.id << rtit_pt_bip_shr) | rtit_pt_opc_bip);
		rtit_le_store(buf + 1, pkt->u.bip.value, pl);
		return (int)(rtit_pt_opc_size + pl);
	}
	case RTIT_PT_CFE:
		CHECK(pkt->u.cfe.type <= rtit_pt_cfe_type_mask);
		n = pt_encode_ext(rtit_pt_ext_cfe, buf, cap, rtit_pt_cfe_size);
		if (n > 0) {
			buf[2] = (uint8_t)((pkt->u.cfe.ip ? rtit_pt_ext_ip : 0) | pkt->u.cfe.type);
			buf[3] = pkt->u.cfe.vector;
		}
		return n;
	case RTIT_PT_EVD:
		CHECK(pkt->u.evd.type <= rtit_pt_evd_type_mask);
		n = pt_encode_ext(rtit_pt_ext_evd, buf, cap, rtit_pt_evd_size);
		if (n > 0) {
			buf[2] = pkt->u.evd.type;
			rtit_le_store(buf + 3, pkt->u.evd.payload, 8);
		}
		return n;
	default:
		return -RTIT_ERR_BAD_OPC;
	}
}

int rtit_pkt_encode(const struct rtit_pkt_ctx *ctx,
		    const struct rtit_packet *pkt, uint8_t *buf, size_t cap)
{
	if (!ctx || !pkt || !buf)
		return -RTIT_ERR_INVALID;
	if ((unsigned)pkt->type >= RTIT_PKT_TYPE_COUNT || pkt->type == RTIT_PKT_INVALID ||
	    rtit_pkt_dialect(pkt->type) != ctx->dialect)
		return -RTIT_ERR_BAD_OPC;
	if (ctx->dialect == RTIT_DIALECT_RTIT)
		return rtit_r_encode(ctx, pkt, buf, cap);
	/* Table 33-15: a block forbids these; the encoder never writes them. */
	if (ctx->in_block && rtit_pkt_forbidden_in_block(pkt->type))
		return -RTIT_ERR_BAD_CONTEXT;
	return pt_encode(ctx, pkt, buf, cap);
}
