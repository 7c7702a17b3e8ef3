/*
 * packet.h - one packet type shared by the encoder and the decoder of both
 * dialects, and the packet-level encode/decode functions.
 *
 * The packet layer only formats: which packet the hardware sends and with
 * which IP compression is decided one layer up (encoder/), and full IPs are
 * reconstructed by the last-IP state in ip.h.
 */
#ifndef RTIT_PACKET_H
#define RTIT_PACKET_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#include "rtit/error.h"
#include "rtit/opcodes_pt.h"	/* rtit_pkt_ctx_on_packet: SKD007's pair */

enum rtit_dialect {
	RTIT_DIALECT_RTIT = 0,	/* Atom Silvermont/Airmont RTIT (RTIT v1.05) */
	RTIT_DIALECT_PT = 1	/* Intel PT, SDM Vol. 3 chapter 33 */
};

/* Every packet form of both dialects.  RTIT_R_* are RTIT (chapter 4),
 * RTIT_PT_* are Intel PT (33.4.2).  The two dialects share no opcode space
 * (RTIT Figure 2, SDM 33.4.2: one byte means different packets in
 * each), so a stream is always decoded in one of them. */
enum rtit_pkt_type {
	RTIT_PKT_INVALID = 0,

	RTIT_R_PSB,		/* 4.2.1 */
	RTIT_R_TNT,		/* 4.2.2 */
	RTIT_R_TIP,		/* 4.2.3 */
	RTIT_R_FUP_PGE,		/* 4.2.7 */
	RTIT_R_FUP_PGD,		/* 4.2.8 */
	RTIT_R_FUP_BUFFOVF,	/* 4.2.5 */
	RTIT_R_FUP_PCC,		/* 4.2.6 */
	RTIT_R_FUP_FAR,		/* 4.2.9 */
	RTIT_R_PIP,		/* 4.2.10 */
	RTIT_R_TRACESTOP,	/* 4.2.11 */
	RTIT_R_MTC,		/* 4.2.12 */
	RTIT_R_STS,		/* 4.2.13 */
	RTIT_R_CCP,		/* 4.2.14 */

	RTIT_PT_PAD,		/* 33.4.2.20 */
	RTIT_PT_TNT8,		/* 33.4.2.1 */
	RTIT_PT_TNT64,		/* 33.4.2.1, Long TNT */
	RTIT_PT_TIP,		/* 33.4.2.2 */
	RTIT_PT_TIP_PGE,	/* 33.4.2.4 */
	RTIT_PT_TIP_PGD,	/* 33.4.2.5 */
	RTIT_PT_FUP,		/* 33.4.2.6 */
	RTIT_PT_PIP,		/* 33.4.2.7 */
	RTIT_PT_MODE_EXEC,	/* 33.4.2.8 */
	RTIT_PT_MODE_TSX,	/* 33.4.2.8 */
	RTIT_PT_TRACESTOP,	/* 33.4.2.9 */
	RTIT_PT_CBR,		/* 33.4.2.10 */
	RTIT_PT_TSC,		/* 33.4.2.11 */
	RTIT_PT_MTC,		/* 33.4.2.12 */
	RTIT_PT_TMA,		/* 33.4.2.13 */
	RTIT_PT_CYC,		/* 33.4.2.14 */
	RTIT_PT_VMCS,		/* 33.4.2.15 */
	RTIT_PT_OVF,		/* 33.4.2.16 */
	RTIT_PT_PSB,		/* 33.4.2.17 */
	RTIT_PT_PSBEND,		/* 33.4.2.18 */
	RTIT_PT_MNT,		/* 33.4.2.19 */
	RTIT_PT_PTW,		/* 33.4.2.21 */
	RTIT_PT_EXSTOP,		/* 33.4.2.22 */
	RTIT_PT_MWAIT,		/* 33.4.2.23 */
	RTIT_PT_PWRE,		/* 33.4.2.24 */
	RTIT_PT_PWRX,		/* 33.4.2.25 */
	RTIT_PT_BBP,		/* 33.4.2.26 */
	RTIT_PT_BIP,		/* 33.4.2.27 */
	RTIT_PT_BEP,		/* 33.4.2.28 */
	RTIT_PT_CFE,		/* 33.4.2.29 */
	RTIT_PT_EVD,		/* 33.4.2.30 */

	RTIT_PKT_TYPE_COUNT
};

/* TNT bits: nbits valid bits in bits[nbits-1:0]; the oldest branch is the
 * most significant of them, the youngest is bit 0 (RTIT 3.3.13, PT
 * Table 33-16).  1 = taken or compressed RET. */
struct rtit_pkt_tnt {
	uint8_t nbits;
	uint64_t bits;
};

/* An IP payload as sent.  ipc is the dialect's compression code: for RTIT
 * CNT (0..2) with zext; for PT the IPBytes value (0..6).  payload holds the
 * bytes sent, little-endian, unexpanded (rtit_ip_expand reconstructs). */
struct rtit_pkt_ip {
	uint8_t ipc;
	bool zext;		/* RTIT only: the Zext bit */
	uint64_t payload;
};

struct rtit_pkt_pip {
	uint64_t cr3;		/* RTIT: CR3[39:0]; PT: CR3[51:5] << 5 */
	bool pg;		/* RTIT: CR0.PG */
	bool nr;		/* PT: non-root */
};

struct rtit_pkt_mtc {
	uint8_t ctc;		/* the 8 watched TSC/ART bits */
	uint8_t rng;		/* RTIT: MTC_Range at generation */
};

struct rtit_pkt_sts {
	uint8_t acbr;		/* actual core:bus ratio [5:0] */
	uint8_t ecbr;		/* effective core:bus ratio [5:0] */
	uint64_t tsc;		/* TSC[39:0] */
};

/* RTIT CCP and PT CYC.  nbytes is the encoded size; 0 asks the encoder for
 * the shortest form (RTIT 4.2.14, PT Table 33-33). */
struct rtit_pkt_cyc {
	uint64_t value;
	uint8_t nbytes;
};

struct rtit_pkt_mode {
	uint8_t bits;		/* MODE.Exec: IF|CS.D|CS.L; MODE.TSX: Abrt|InTX */
};

struct rtit_pkt_tma {
	uint16_t ctc;
	uint16_t fc;		/* FastCounter[8:0] */
	/* Erratum SKZ84 (docs/decisions.md D143): a TMA with its reserved
	 * bits set, and the bogus byte after it (8 bytes); ctc and fc are
	 * the corrupted fields as sent, no time */
	bool skz84;
};

/* SKZ84's TMA (D143): 02 73, CTC[15:0], FF, FC[7:0], FE | FC[8], then
 * the bogus byte, a reserved first byte (SDM 33.4.2). */
enum {
	rtit_pt_skz84_tma_size = 8,
	rtit_pt_skz84_rsvd4 = 0xff,	/* Table 33-32 byte 4, every bit set */
	rtit_pt_skz84_rsvd6 = 0xfe,	/* Table 33-32 byte 6 bits 7:1 */
	rtit_pt_skz84_bogus = 0x05
};

struct rtit_pkt_ptw {
	uint8_t plsz;		/* PayloadBytes code: 0 = 4 bytes, 1 = 8 bytes */
	bool ip;
	uint64_t payload;
};

struct rtit_pkt_mwait {
	uint32_t hints;		/* bytes 2..5; hints[7:0] defined */
	uint32_t ext;		/* bytes 6..9; EXT[1:0] defined */
};

struct rtit_pkt_pwre {
	uint8_t state, sub_state;
	bool hw;
};

struct rtit_pkt_pwrx {
	uint8_t last, deepest, wake;	/* wake reason bits, Table 33-44 */
};

struct rtit_pkt_bbp {
	uint8_t type;
	bool sz;		/* 1: 4-byte items, 0: 8-byte items */
};

struct rtit_pkt_bip {
	uint64_t value;
	uint8_t id;		/* ID[4:0] (Table 33-46, D9) */
	uint8_t type;		/* decoded: the block's BBP.Type (names the
				 * item, Table 33-47); not encoded */
};

struct rtit_pkt_cfe {
	uint8_t type, vector;
	bool ip;
};

struct rtit_pkt_evd {
	uint8_t type;
	uint64_t payload;
};

struct rtit_packet {
	enum rtit_pkt_type type;
	uint8_t size;		/* encoded size in bytes */
	union {
		struct rtit_pkt_tnt tnt;
		struct rtit_pkt_ip ip;
		struct rtit_pkt_pip pip;
		struct rtit_pkt_mtc mtc;
		struct rtit_pkt_sts sts;
		struct rtit_pkt_cyc cyc;	/* RTIT CCP, PT CYC */
		struct rtit_pkt_mode mode;
		uint8_t cbr;			/* core:bus ratio */
		uint64_t tsc;			/* PT TSC[55:0] */
		struct rtit_pkt_tma tma;
		uint64_t vmcs;			/* pointer, bits 51:12 */
		uint64_t mnt;
		struct rtit_pkt_ptw ptw;
		bool ip_bit;			/* EXSTOP, BEP */
		struct rtit_pkt_mwait mwait;
		struct rtit_pkt_pwre pwre;
		struct rtit_pkt_pwrx pwrx;
		struct rtit_pkt_bbp bbp;
		struct rtit_pkt_bip bip;
		struct rtit_pkt_cfe cfe;
		struct rtit_pkt_evd evd;
	} u;
};

/*
 * Decoding context: what a packet's meaning depends on besides its bytes.
 *
 * RTIT: a cycle count packet has no header; it follows a CCP-bearing packet
 * when Cycle_Acc=1, which the decoder must be told (D6).
 * PT: a BIP header collides with TNT-8 and is a BIP only between BBP and
 * BEP (33.4.1.1); the item size comes from the BBP.
 */
struct rtit_pkt_ctx {
	enum rtit_dialect dialect;
	bool cycle_acc;		/* RTIT: stream is cycle-accurate */
	bool expect_ccp;	/* RTIT: the next bytes are a CCP */
	bool in_block;		/* PT: between BBP and BEP */
	bool block_sz4;		/* PT: block items are 4 bytes */
	uint8_t block_type;	/* PT: the BBP.Type of the block */
	/* PT: erratum SKZ84's workaround (D143): a TMA with reserved bits
	 * set is the erratum's, 8 bytes with the bogus byte, not an error */
	bool skz84;
	/* PT: erratum SKD007's workaround (D109, D184): inside a block, a
	 * 2-byte CYC whose second byte is 02 (skd007_cyc) followed by F3
	 * read as a CYC is a cut CYC and the OVF, which ends the block */
	bool skd007, skd007_cyc;
};

/* Initialises @ctx for @dialect.  @cycle_acc matters for RTIT only. */
void rtit_pkt_ctx_init(struct rtit_pkt_ctx *ctx, enum rtit_dialect dialect,
		       bool cycle_acc);

/* Updates @ctx after @pkt was decoded or encoded (the pure state update
 * both directions share).  Inline: it runs once per packet.
 *
 * RTIT 4.2.15: a CCP follows a full TNT, TIP, every FUP, PIP, MTC and STS;
 * not a partial TNT, TraceSTOP or PSB (D5).
 * PT 33.4.1.1: a block runs from BBP to BEP, a new BBP, or OVF. */
static inline void rtit_pkt_ctx_on_packet(struct rtit_pkt_ctx *ctx,
					  const struct rtit_packet *pkt)
{
	if (ctx->dialect == RTIT_DIALECT_RTIT) {
		bool ccp;
		switch (pkt->type) {
		case RTIT_R_TNT:
			ccp = pkt->u.tnt.nbits == 6;	/* rtit_r_tnt_max_bits */
			break;
		case RTIT_R_TIP: case RTIT_R_FUP_PGE: case RTIT_R_FUP_PGD:
		case RTIT_R_FUP_BUFFOVF: case RTIT_R_FUP_PCC: case RTIT_R_FUP_FAR:
		case RTIT_R_PIP: case RTIT_R_MTC: case RTIT_R_STS:
			ccp = true;
			break;
		default:
			ccp = false;
			break;
		}
		ctx->expect_ccp = ctx->cycle_acc && ccp;
		return;
	}
	if (pkt->type == RTIT_PT_BBP) {
		ctx->in_block = true;
		ctx->block_sz4 = pkt->u.bbp.sz;
		ctx->block_type = pkt->u.bbp.type;
	} else if (pkt->type == RTIT_PT_BEP || pkt->type == RTIT_PT_OVF) {
		ctx->in_block = false;
	} else if (__builtin_expect(ctx->in_block && ctx->skd007, 0)) {
		/* a CYC whose second byte is the OVF's first (02: its
		 * CycleCounter bits above byte 0's, no more), then the OVF's
		 * second byte (F3) read as a 1-byte CYC (Table 33-33):
		 * SKD007's cut CYC and the OVF */
		if (ctx->skd007_cyc && pkt->type == RTIT_PT_CYC && pkt->u.cyc.nbytes == 1 &&
		    pkt->u.cyc.value == (rtit_pt_ext_ovf >> rtit_pt_cyc_shr))
			ctx->in_block = false;
		ctx->skd007_cyc = pkt->type == RTIT_PT_CYC && pkt->u.cyc.nbytes == 2 &&
				  (pkt->u.cyc.value >> (8 - rtit_pt_cyc_shr)) ==
				  (rtit_pt_ext >> rtit_pt_cyc_ext_shr);
	}
}

/* Resets the parts of @ctx a PSB resets (RTIT: no CCP after a PSB; PT: a
 * PSB is forbidden in a block, so after resync there is none). */
void rtit_pkt_ctx_on_sync(struct rtit_pkt_ctx *ctx);

/*
 * Decodes one packet from @buf (@len bytes available) in context @ctx.
 * Does not update @ctx (call rtit_pkt_ctx_on_packet).
 *
 * Returns the packet size (> 0) and fills @pkt, or:
 *  -RTIT_ERR_EOS         the bytes end inside the packet (more may come);
 *  -RTIT_ERR_BAD_OPC     a reserved or unknown opcode;
 *  -RTIT_ERR_BAD_PACKET  a reserved code inside the packet (RTIT CNT=11b,
 *                        CCNT=00b; PT IPBytes 101b/111b, PTW PayloadBytes
 *                        1xb, MODE leaf, MNT sub-opcode, Long TNT without
 *                        stop bit, CYC longer than 64 bits, TMA with
 *                        reserved bits set unless ctx->skz84);
 *  -RTIT_ERR_BAD_CONTEXT a packet Table 33-15 forbids inside a block;
 *  -RTIT_ERR_INVALID     a NULL argument.
 * On failure *@why (if not NULL) is set to a static explanation.
 */
int rtit_pkt_decode(const struct rtit_pkt_ctx *ctx, const uint8_t *buf,
		    size_t len, struct rtit_packet *pkt, const char **why);

/*
 * Encodes @pkt into @buf (@cap bytes) in context @ctx.  pkt->size is
 * ignored on input.  Returns the size written, or:
 *  -RTIT_ERR_NOSPACE      @cap is too small;
 *  -RTIT_ERR_BAD_OPC      @pkt's type is not of @ctx's dialect;
 *  -RTIT_ERR_BAD_PACKET   a field out of range (e.g. TNT with 0 or too many
 *                         bits, reserved IP code, CCP value over 22 bits);
 *  -RTIT_ERR_BAD_CONTEXT  a BIP outside a block, a CCP where none is due;
 *  -RTIT_ERR_INVALID      a NULL argument.
 */
int rtit_pkt_encode(const struct rtit_pkt_ctx *ctx,
		    const struct rtit_packet *pkt, uint8_t *buf, size_t cap);

/* The packet's name as the manual spells it ("FUP.PGE", "TIP.PGD", ...). */
const char *rtit_pkt_name(enum rtit_pkt_type type);

/* The dialect a packet type belongs to. */
enum rtit_dialect rtit_pkt_dialect(enum rtit_pkt_type type);

/* True for packets carrying an IP payload (RTIT FUP.* and TIP; PT TIP,
 * TIP.PGE, TIP.PGD, FUP).  Inline: it runs once per packet. */
static inline bool rtit_pkt_has_ip(enum rtit_pkt_type type)
{
	_Static_assert(RTIT_PKT_TYPE_COUNT <= 64, "one bit per packet type");
	const uint64_t ip_types =
		(1ull << RTIT_R_TIP) | (1ull << RTIT_R_FUP_PGE) | (1ull << RTIT_R_FUP_PGD) |
		(1ull << RTIT_R_FUP_BUFFOVF) | (1ull << RTIT_R_FUP_PCC) | (1ull << RTIT_R_FUP_FAR) |
		(1ull << RTIT_PT_TIP) | (1ull << RTIT_PT_TIP_PGE) | (1ull << RTIT_PT_TIP_PGD) |
		(1ull << RTIT_PT_FUP);
	return (unsigned)type < 64 && ((ip_types >> type) & 1);
}

/* True for the PT packets Table 33-15 forbids between BBP and BEP. */
bool rtit_pkt_forbidden_in_block(enum rtit_pkt_type type);

/* Number of payload bytes of an IP compression code, or -RTIT_ERR_BAD_PACKET
 * for a reserved one (RTIT 4.2.3.1; PT Table 33-18). */
int rtit_ipc_payload_size(enum rtit_dialect dialect, uint8_t ipc);

/*
 * Finds the next PSB at or after @from in @buf[0..len).  Returns its offset,
 * or -RTIT_ERR_NOSYNC if there is none (the last PSB-size - 1 bytes may
 * hold the start of one: callers that stream keep them).
 */
long rtit_sync_forward(enum rtit_dialect dialect, const uint8_t *buf,
		       size_t len, size_t from);

/* Size of a PSB in @dialect. */
size_t rtit_psb_size(enum rtit_dialect dialect);

#endif /* RTIT_PACKET_H */
