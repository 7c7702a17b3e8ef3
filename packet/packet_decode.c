/*
 * packet_decode.c - bytes to one struct rtit_packet, both dialects.
 *
 * Mirror of packet/packet_encode.c.  Every byte value comes from
 * opcodes_rtit.h / opcodes_pt.h.
 */
#include <string.h>

#include "rtit/packet.h"
#include "rtit/bits.h"
#include "rtit/opcodes_rtit.h"
#include "rtit/opcodes_pt.h"

#define FAIL(err, msg) do { if (why) *why = (msg); return -(err); } while (0)
#define NEED(n) do { if (len < (size_t)(n)) FAIL(RTIT_ERR_EOS, "stream ends inside the packet"); } while (0)

static int done(struct rtit_packet *pkt, enum rtit_pkt_type type, size_t size)
{
	pkt->type = type;
	pkt->size = (uint8_t)size;
	return (int)size;
}

/* RTIT 4.2.14, Figure 13: CCNT in bits 1:0 gives the length. */
static int rtit_r_decode_ccp(const uint8_t *buf, size_t len,
			     struct rtit_packet *pkt, const char **why)
{
	unsigned ccnt = buf[0] & rtit_r_ccp_ccnt_mask;
	uint64_t v;

	if (ccnt == rtit_r_ccp_ccnt_rsvd)
		FAIL(RTIT_ERR_BAD_PACKET, "cycle count packet with reserved CCNT=00b (RTIT 4.2.14)");
	NEED(ccnt);
	v = buf[0] >> rtit_r_ccp_shl;
	if (ccnt >= rtit_r_ccp_ccnt_2)
		v |= (uint64_t)buf[1] << 6;
	if (ccnt == rtit_r_ccp_ccnt_3)
		v |= (uint64_t)buf[2] << 14;
	pkt->u.cyc.value = v;
	pkt->u.cyc.nbytes = (uint8_t)ccnt;
	return done(pkt, RTIT_R_CCP, ccnt);
}

static const enum rtit_pkt_type rtit_r_fup_types[8] = {
	[rtit_r_ev_pge] = RTIT_R_FUP_PGE,
	[rtit_r_ev_pgd] = RTIT_R_FUP_PGD,
	[rtit_r_ev_buffovf] = RTIT_R_FUP_BUFFOVF,
	[rtit_r_ev_pcc] = RTIT_R_FUP_PCC,
	[rtit_r_ev_rsvd4] = RTIT_PKT_INVALID,
	[rtit_r_ev_rsvd5] = RTIT_PKT_INVALID,
	[rtit_r_ev_tip] = RTIT_R_TIP,
	[rtit_r_ev_far] = RTIT_R_FUP_FAR,
};

static int rtit_r_decode(const struct rtit_pkt_ctx *ctx, const uint8_t *buf,
			 size_t len, struct rtit_packet *pkt, const char **why)
{
	uint8_t b0 = buf[0];

	/* Only the fields of the decoded type are written. */
	if (ctx->expect_ccp)
		return rtit_r_decode_ccp(buf, len, pkt, why);

	if (!(b0 & rtit_r_tnt_mask)) {
		/* TNT (4.2.2): the leading 1 is the stop bit. */
		unsigned n;

		if (b0 < rtit_r_tnt_min)
			FAIL(RTIT_ERR_BAD_OPC, "TNT byte without stop bit (0x00/0x01 invalid, RTIT Figure 2)");
		n = rtit_msb(b0);
		pkt->u.tnt.nbits = (uint8_t)n;
		pkt->u.tnt.bits = b0 & rtit_mask(n);
		return done(pkt, RTIT_R_TNT, rtit_r_tnt_size);
	}

	if ((b0 & rtit_r_fup_mask) == rtit_r_fup) {
		/* FUP/TIP family (4.2.3, 4.2.4). */
		unsigned ev = (b0 >> rtit_r_fup_event_shr) & rtit_r_fup_event_mask;
		unsigned cnt = b0 & rtit_r_fup_cnt_mask;
		enum rtit_pkt_type type = rtit_r_fup_types[ev];
		int pl;

		/* 4.2.3: CNT 00/01/10 = 2/4/6 payload bytes; 11 reserved. */
		static const int8_t cnt_size[4] = { 2, 4, 6, -1 };
		if (type == RTIT_PKT_INVALID)
			FAIL(RTIT_ERR_BAD_OPC, "reserved FUP event 100b/101b (RTIT 4.2.4)");
		pl = cnt_size[cnt];
		if (pl < 0)
			FAIL(RTIT_ERR_BAD_PACKET, "reserved IP compression CNT=11b (RTIT 4.2.3)");
		NEED(rtit_r_opc_size + pl);
		pkt->u.ip.ipc = (uint8_t)cnt;
		pkt->u.ip.zext = (b0 & rtit_r_fup_zext) != 0;
		pkt->u.ip.payload = rtit_le_load_fast(buf + 1, (size_t)pl, len - 1);
		return done(pkt, type, (size_t)(rtit_r_opc_size + pl));
	}

	if (b0 == rtit_r_opc_psb) {
		/* 4.2.1: C0 and eight 00. */
		size_t have = len < rtit_r_psb_size ? len : rtit_r_psb_size;
		for (size_t i = 1; i < have; i++)
			if (buf[i])
				FAIL(RTIT_ERR_BAD_PACKET, "PSB header 0xC0 not followed by eight 0x00 (RTIT 4.2.1)");
		NEED(rtit_r_psb_size);
		return done(pkt, RTIT_R_PSB, rtit_r_psb_size);
	}
	if (b0 == rtit_r_opc_tracestop)
		return done(pkt, RTIT_R_TRACESTOP, rtit_r_tracestop_size);
	if ((b0 & rtit_r_pip_mask) == rtit_r_opc_pip) {
		/* 4.2.10, Figure 9: CR3[39:0] low byte first. */
		NEED(rtit_r_pip_size);
		pkt->u.pip.pg = (b0 & rtit_r_pip_pg) != 0;
		pkt->u.pip.nr = false;
		pkt->u.pip.cr3 = rtit_le_load(buf + 1, rtit_r_pl_pip_size);
		return done(pkt, RTIT_R_PIP, rtit_r_pip_size);
	}
	if ((b0 & rtit_r_mtc_mask) == rtit_r_opc_mtc) {
		NEED(rtit_r_mtc_size);
		pkt->u.mtc.rng = b0 & rtit_r_mtc_rng_mask;
		pkt->u.mtc.ctc = buf[1];
		return done(pkt, RTIT_R_MTC, rtit_r_mtc_size);
	}
	if ((b0 & rtit_r_sts_mask) == rtit_r_opc_sts) {
		/* 4.2.13, Figure 12. */
		NEED(rtit_r_sts_size);
		pkt->u.sts.acbr = (uint8_t)(((b0 & rtit_r_sts_acbr_hi_mask) << 2) |
					    (buf[1] >> rtit_r_sts_acbr_lo_shr));
		pkt->u.sts.ecbr = buf[1] & rtit_r_sts_ecbr_mask;
		pkt->u.sts.tsc = rtit_le_load(buf + 2, rtit_r_pl_sts_tsc_size);
		return done(pkt, RTIT_R_STS, rtit_r_sts_size);
	}
	FAIL(RTIT_ERR_BAD_OPC, "reserved opcode (RTIT Figure 2: 0xA0-0xAF, 0xC8-0xCF, 0xE0-0xFF)");
}

/* PT opcode bits 4:0 of the IP packets (Tables 33-17, 33-20 to 33-22);
 * the others RTIT_PKT_INVALID (0). */
static const enum rtit_pkt_type pt_ip_types[32] = {
	[rtit_pt_opc_tip] = RTIT_PT_TIP,
	[rtit_pt_opc_tip_pge] = RTIT_PT_TIP_PGE,
	[rtit_pt_opc_tip_pgd] = RTIT_PT_TIP_PGD,
	[rtit_pt_opc_fup] = RTIT_PT_FUP,
};

/* PT Table 33-16 short TNT: ((1 << N) | bits) << 1. */
static int pt_decode_tnt8(uint8_t b0, struct rtit_packet *pkt)
{
	unsigned v = b0 >> rtit_pt_tnt8_shr;
	unsigned n = rtit_msb(v);

	pkt->u.tnt.nbits = (uint8_t)n;
	pkt->u.tnt.bits = v & rtit_mask(n);
	return done(pkt, RTIT_PT_TNT8, rtit_pt_tnt8_size);
}

/* PT Table 33-33: Exp-chained 5 + 7*k bit value. */
static int pt_decode_cyc(const uint8_t *buf, size_t len,
			 struct rtit_packet *pkt, const char **why)
{
	uint64_t v = buf[0] >> rtit_pt_cyc_shr;
	size_t i = 1;
	unsigned shl = 5;
	uint8_t b = buf[0];
	bool more = (b & rtit_pt_cyc_exp) != 0;

	while (more) {
		if (shl >= 64)
			FAIL(RTIT_ERR_BAD_PACKET, "CYC value wider than 64 bits (PT Table 33-33)");
		NEED(i + 1);
		b = buf[i++];
		v |= (uint64_t)(b >> rtit_pt_cyc_ext_shr) << shl;
		shl += 7;
		more = (b & rtit_pt_cyc_ext_exp) != 0;
	}
	pkt->u.cyc.value = v;
	pkt->u.cyc.nbytes = (uint8_t)i;
	return done(pkt, RTIT_PT_CYC, i);
}

static int pt_decode_ext(const struct rtit_pkt_ctx *ctx, const uint8_t *buf, size_t len,
			 struct rtit_packet *pkt, const char **why)
{
	uint8_t b1;

	NEED(rtit_pt_ext_opc_size);
	b1 = buf[1];

	if ((b1 & rtit_pt_ext_ptw_mask) == rtit_pt_ext_ptw) {
		unsigned plsz = (b1 >> rtit_pt_ptw_plsz_shr) & rtit_pt_ptw_plsz_mask;
		size_t pl;

		if (plsz > 1)
			FAIL(RTIT_ERR_BAD_PACKET, "PTW with reserved PayloadBytes 1xb (PT Table 33-40)");
		pl = plsz ? rtit_pt_pl_ptw8_size : rtit_pt_pl_ptw4_size;
		NEED(rtit_pt_ext_opc_size + pl);
		pkt->u.ptw.plsz = (uint8_t)plsz;
		pkt->u.ptw.ip = (b1 & rtit_pt_ext_ip) != 0;
		pkt->u.ptw.payload = rtit_le_load(buf + 2, pl);
		return done(pkt, RTIT_PT_PTW, rtit_pt_ext_opc_size + pl);
	}
	switch (b1 & rtit_pt_ext_ip_mask) {
	case rtit_pt_ext_exstop:
		pkt->u.ip_bit = (b1 & rtit_pt_ext_ip) != 0;
		return done(pkt, RTIT_PT_EXSTOP, rtit_pt_exstop_size);
	case rtit_pt_ext_bep:
		pkt->u.ip_bit = (b1 & rtit_pt_ext_ip) != 0;
		return done(pkt, RTIT_PT_BEP, rtit_pt_bep_size);
	default:
		break;
	}

	switch (b1) {
	case rtit_pt_ext_psb: {
		size_t have = len < rtit_pt_psb_size ? len : rtit_pt_psb_size;
		for (size_t i = 2; i < have; i++) {
			uint8_t want = (i & 1) ? rtit_pt_ext_psb : rtit_pt_ext;
			if (buf[i] != want)
				FAIL(RTIT_ERR_BAD_PACKET, "PSB pattern broken: 02 82 not repeated eight times (PT Table 33-36)");
		}
		NEED(rtit_pt_psb_size);
		return done(pkt, RTIT_PT_PSB, rtit_pt_psb_size);
	}
	case rtit_pt_ext_psbend:
		return done(pkt, RTIT_PT_PSBEND, rtit_pt_psbend_size);
	case rtit_pt_ext_ovf:
		return done(pkt, RTIT_PT_OVF, rtit_pt_ovf_size);
	case rtit_pt_ext_stop:
		return done(pkt, RTIT_PT_TRACESTOP, rtit_pt_stop_size);
	case rtit_pt_ext_cbr:
		NEED(rtit_pt_cbr_size);
		pkt->u.cbr = buf[2];
		return done(pkt, RTIT_PT_CBR, rtit_pt_cbr_size);
	case rtit_pt_ext_pip: {
		uint64_t p;
		NEED(rtit_pt_pip_size);
		p = rtit_le_load(buf + 2, rtit_pt_pl_pip_size);
		pkt->u.pip.nr = (p & rtit_pt_pip_nr) != 0;
		pkt->u.pip.pg = false;
		pkt->u.pip.cr3 = (p >> rtit_pt_pip_shr) << rtit_pt_pip_shl;
		return done(pkt, RTIT_PT_PIP, rtit_pt_pip_size);
	}
	case rtit_pt_ext_tnt64: {
		uint64_t p;
		unsigned n;
		NEED(rtit_pt_tnt64_size);
		p = rtit_le_load(buf + 2, rtit_pt_pl_tnt64_size);
		if (p < 2)
			FAIL(RTIT_ERR_BAD_PACKET, "Long TNT without TNT bits or stop bit (PT Table 33-16)");
		n = rtit_msb(p);
		pkt->u.tnt.nbits = (uint8_t)n;
		pkt->u.tnt.bits = p & rtit_mask(n);
		return done(pkt, RTIT_PT_TNT64, rtit_pt_tnt64_size);
	}
	case rtit_pt_ext_tma:
		NEED(rtit_pt_tma_size);
		pkt->u.tma.ctc = (uint16_t)rtit_le_load(buf + 2, 2);
		pkt->u.tma.fc = (uint16_t)(buf[5] | ((buf[6] & 1u) << 8));
		pkt->u.tma.skz84 = buf[4] || (buf[6] & ~1u);
		if (!pkt->u.tma.skz84)
			return done(pkt, RTIT_PT_TMA, rtit_pt_tma_size);
		/* Table 33-32: byte 4 and byte 6 bits 7:1 are reserved (0);
		 * erratum SKZ84 sets them and sends a bogus byte (D143) */
		if (!ctx->skz84)
			FAIL(RTIT_ERR_BAD_PACKET, "TMA with reserved bits set (PT Table 33-32)");
		NEED(rtit_pt_skz84_tma_size);
		return done(pkt, RTIT_PT_TMA, rtit_pt_skz84_tma_size);
	case rtit_pt_ext_vmcs:
		NEED(rtit_pt_vmcs_size);
		pkt->u.vmcs = rtit_le_load(buf + 2, rtit_pt_pl_vmcs_size) << rtit_pt_vmcs_shl;
		return done(pkt, RTIT_PT_VMCS, rtit_pt_vmcs_size);
	case rtit_pt_ext_mnt:
		NEED(rtit_pt_mnt_opc_size);
		if (buf[2] != rtit_pt_ext2_mnt)
			FAIL(RTIT_ERR_BAD_OPC, "02 C3 not followed by 0x88 (MNT, PT Table 33-38)");
		NEED(rtit_pt_mnt_size);
		pkt->u.mnt = rtit_le_load(buf + 3, rtit_pt_pl_mnt_size);
		return done(pkt, RTIT_PT_MNT, rtit_pt_mnt_size);
	case rtit_pt_ext_mwait:
		NEED(rtit_pt_mwait_size);
		pkt->u.mwait.hints = (uint32_t)rtit_le_load(buf + 2, 4);
		pkt->u.mwait.ext = (uint32_t)rtit_le_load(buf + 6, 4);
		return done(pkt, RTIT_PT_MWAIT, rtit_pt_mwait_size);
	case rtit_pt_ext_pwre:
		NEED(rtit_pt_pwre_size);
		pkt->u.pwre.hw = (buf[2] & rtit_pt_pwre_hw) != 0;
		pkt->u.pwre.state = buf[3] >> rtit_pt_pwre_state_shr;
		pkt->u.pwre.sub_state = buf[3] & rtit_pt_pwre_sub_mask;
		return done(pkt, RTIT_PT_PWRE, rtit_pt_pwre_size);
	case rtit_pt_ext_pwrx:
		NEED(rtit_pt_pwrx_size);
		pkt->u.pwrx.last = buf[2] >> rtit_pt_pwrx_last_shr;
		pkt->u.pwrx.deepest = buf[2] & rtit_pt_pwrx_deepest_mask;
		pkt->u.pwrx.wake = buf[3] & rtit_pt_pwrx_wake_mask;
		return done(pkt, RTIT_PT_PWRX, rtit_pt_pwrx_size);
	case rtit_pt_ext_bbp:
		NEED(rtit_pt_bbp_size);
		pkt->u.bbp.sz = (buf[2] & rtit_pt_bbp_sz) != 0;
		pkt->u.bbp.type = buf[2] & rtit_pt_bbp_type_mask;
		return done(pkt, RTIT_PT_BBP, rtit_pt_bbp_size);
	case rtit_pt_ext_cfe:
		NEED(rtit_pt_cfe_size);
		pkt->u.cfe.ip = (buf[2] & rtit_pt_ext_ip) != 0;
		pkt->u.cfe.type = buf[2] & rtit_pt_cfe_type_mask;
		pkt->u.cfe.vector = buf[3];
		return done(pkt, RTIT_PT_CFE, rtit_pt_cfe_size);
	case rtit_pt_ext_evd:
		NEED(rtit_pt_evd_size);
		pkt->u.evd.type = buf[2] & rtit_pt_evd_type_mask;
		pkt->u.evd.payload = rtit_le_load(buf + 3, 8);
		return done(pkt, RTIT_PT_EVD, rtit_pt_evd_size);
	default:
		FAIL(RTIT_ERR_BAD_OPC, "reserved extended opcode after 0x02 (PT 33.4.2)");
	}
}

static int pt_decode_one(const struct rtit_pkt_ctx *ctx, const uint8_t *buf,
			 size_t len, struct rtit_packet *pkt, const char **why)
{
	uint8_t b0 = buf[0];

	/* Only the fields of the decoded type are written.  Most frequent
	 * first: TNT-8, then the IP packets. */
	if ((b0 & rtit_pt_tnt8_mask) == rtit_pt_opc_tnt8 && b0 > rtit_pt_ext &&
	    (!ctx->in_block || (b0 & rtit_pt_bip_mask) != rtit_pt_opc_bip))
		return pt_decode_tnt8(b0, pkt);
	if (pt_ip_types[b0 & rtit_pt_opm_ip] != RTIT_PKT_INVALID) {
		/* TIP, TIP.PGE, TIP.PGD, FUP (Tables 33-17, 33-20 to 33-22):
		 * low bits 001b/101b, so never a BIP, CYC, PAD or 0x02.
		 * Table 33-18: payload bytes per IPBytes; -1 reserved. */
		static const int8_t ipc_size[8] = { 0, 2, 4, 6, 6, -1, 8, -1 };
		uint8_t ipc = b0 >> rtit_pt_ipc_shr;
		int pl = ipc_size[ipc];

		if (pl < 0)
			FAIL(RTIT_ERR_BAD_PACKET, "reserved IPBytes 101b/111b (PT Table 33-18)");
		NEED(rtit_pt_opc_size + pl);
		pkt->u.ip.ipc = ipc;
		pkt->u.ip.zext = false;
		pkt->u.ip.payload = rtit_le_load_fast(buf + 1, (size_t)pl, len - 1);
		return done(pkt, pt_ip_types[b0 & rtit_pt_opm_ip], (size_t)(rtit_pt_opc_size + pl));
	}
	if (b0 == rtit_pt_opc_pad)
		return done(pkt, RTIT_PT_PAD, rtit_pt_pad_size);
	if (b0 == rtit_pt_ext)
		return pt_decode_ext(ctx, buf, len, pkt, why);
	if (ctx->in_block && (b0 & rtit_pt_bip_mask) == rtit_pt_opc_bip) {
		/* 33.4.1.1: inside a block, xxxxx100b is a BIP. */
		size_t pl = ctx->block_sz4 ? rtit_pt_pl_bip4_size : rtit_pt_pl_bip8_size;
		NEED(rtit_pt_opc_size + pl);
		pkt->u.bip.id = b0 >> rtit_pt_bip_shr;
		pkt->u.bip.value = rtit_le_load(buf + 1, pl);
		pkt->u.bip.type = ctx->block_type;
		return done(pkt, RTIT_PT_BIP, rtit_pt_opc_size + pl);
	}
	if ((b0 & rtit_pt_tnt8_mask) == rtit_pt_opc_tnt8)
		return pt_decode_tnt8(b0, pkt);
	if ((b0 & rtit_pt_cyc_mask) == rtit_pt_opc_cyc)
		return pt_decode_cyc(buf, len, pkt, why);

	switch (b0) {
	case rtit_pt_opc_tsc:
		NEED(rtit_pt_tsc_size);
		pkt->u.tsc = rtit_le_load(buf + 1, rtit_pt_pl_tsc_size);
		return done(pkt, RTIT_PT_TSC, rtit_pt_tsc_size);
	case rtit_pt_opc_mtc:
		NEED(rtit_pt_mtc_size);
		pkt->u.mtc.ctc = buf[1];
		pkt->u.mtc.rng = 0;
		return done(pkt, RTIT_PT_MTC, rtit_pt_mtc_size);
	case rtit_pt_mode: {
		unsigned leaf;
		NEED(rtit_pt_mode_size);
		leaf = (buf[1] & rtit_pt_mode_leaf_mask) >> rtit_pt_mode_leaf_shr;
		pkt->u.mode.bits = buf[1] & rtit_pt_mode_bits_mask;
		if (leaf == rtit_pt_leaf_mode_exec)
			return done(pkt, RTIT_PT_MODE_EXEC, rtit_pt_mode_size);
		if (leaf == rtit_pt_leaf_mode_tsx)
			return done(pkt, RTIT_PT_MODE_TSX, rtit_pt_mode_size);
		FAIL(RTIT_ERR_BAD_PACKET, "MODE with reserved leaf ID (PT Table 33-25)");
	}
	default:
		FAIL(RTIT_ERR_BAD_OPC, "reserved opcode (PT 33.4.2)");
	}
}

int rtit_pkt_decode(const struct rtit_pkt_ctx *ctx, const uint8_t *buf,
		    size_t len, struct rtit_packet *pkt, const char **why)
{
	int ret;

	if (why)
		*why = NULL;
	if (!ctx || !buf || !pkt)
		FAIL(RTIT_ERR_INVALID, "NULL argument");
	if (!len)
		FAIL(RTIT_ERR_EOS, "no bytes");
	if (ctx->dialect == RTIT_DIALECT_RTIT)
		return rtit_r_decode(ctx, buf, len, pkt, why);
	ret = pt_decode_one(ctx, buf, len, pkt, why);
	if (ret > 0 && ctx->in_block && rtit_pkt_forbidden_in_block(pkt->type))
		FAIL(RTIT_ERR_BAD_CONTEXT, "packet forbidden between BBP and BEP (PT Table 33-15)");
	return ret;
}
