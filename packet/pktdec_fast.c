/*
 * pktdec_fast.c - the first-byte tables of the streaming decoder's fast
 * path (struct rtit_pktdec_fast in pktdec.h says how a row is read).
 *
 * Built at rtit_pktdec_init() from opcodes_rtit.h / opcodes_pt.h, one
 * packet kind at a time, each with the section of the manual it follows;
 * no byte value is spelled here.  The rows state the same rules as
 * packet_decode.c (packet bytes to fields), rtit_last_ip_expand() (Table 18,
 * Table 33-18) and rtit_pkt_ctx_on_packet() (RTIT 4.2.15), for the packets
 * frequent enough to matter; everything else has size 0 and goes to those
 * functions.  tests/unit/test_pktdec.c checks every row against them.
 */
#include <stddef.h>
#include <string.h>

#include "pktdec_fast.h"
#include "rtit/bits.h"
#include "rtit/opcodes_rtit.h"
#include "rtit/opcodes_pt.h"

/* The rows write the union of struct rtit_packet as two 64-bit words; the
 * fields they fill must sit where these words put them. */
#define UNION_AT(member, off) \
	_Static_assert(offsetof(struct rtit_packet, u.member) - offsetof(struct rtit_packet, u) == (off), \
		       #member " is not at union byte " #off)
UNION_AT(tnt.nbits, 0);
UNION_AT(tnt.bits, 8);
UNION_AT(ip.ipc, 0);
UNION_AT(ip.zext, 1);
UNION_AT(ip.payload, 8);
UNION_AT(pip.cr3, 0);
UNION_AT(pip.pg, 8);
UNION_AT(pip.nr, 9);
UNION_AT(mtc.ctc, 0);
UNION_AT(mtc.rng, 1);
UNION_AT(cyc.value, 0);
UNION_AT(cyc.nbytes, 8);
UNION_AT(tsc, 0);
UNION_AT(mode.bits, 0);
UNION_AT(cbr, 0);
UNION_AT(vmcs, 0);
UNION_AT(ip_bit, 0);
_Static_assert(sizeof(((struct rtit_packet *)0)->u) >= 16, "two words");
_Static_assert(offsetof(struct rtit_packet, u) >= 8, "head: type and size in 8 bytes");
_Static_assert(sizeof(struct rtit_pktdec_fast) == 64, "one cache line a row");
_Static_assert(sizeof(struct rtit_pktdec_item) == 64, "one cache line an item (the batch call's stores)");

/* The row being built: the table row and its size byte. */
struct row {
	struct rtit_pktdec_fast *r;
	uint8_t *size;
};

/* A packet whose fields are all in its first byte. */
static void row_fixed(struct row row, enum rtit_pkt_type type,
		      unsigned size, uint64_t lo, uint64_t hi)
{
	struct rtit_pktdec_fast *r = row.r;
	struct rtit_packet head;

	memset(&head, 0, sizeof(head));
	head.type = type;
	head.size = (uint8_t)size;
	memcpy(&r->head, &head, sizeof(r->head));
	r->lo_const = lo;
	r->hi_const = hi;
	*row.size = (uint8_t)size;
}

/* RTIT 4.2.15: a cycle count packet follows this one. */
static void row_ccp_next(struct row row, bool cycle_acc)
{
	row.r->next_ccp = cycle_acc;
}

/* An IP packet with @nbytes payload bytes: @keep = the last-IP bits the
 * IP keeps, @sext_bits = the width the payload is sign-extended from (0:
 * none; only where nothing is kept). */
static void row_ip(struct row row, enum rtit_pkt_type type,
		   uint8_t ipc, bool zext, unsigned nbytes, uint64_t keep,
		   unsigned sext_bits)
{
	struct rtit_pktdec_fast *r = row.r;

	row_fixed(row, type, 1 + nbytes, ipc | (uint64_t)zext << 8, 0);
	r->hi_mask = rtit_mask(8 * nbytes);
	r->is_ip = 1;
	r->ip_load = ~0ull;
	r->needs_ip = keep != 0;
	r->ip_keep = keep;
	r->sext_shl = sext_bits ? (uint8_t)(64 - sext_bits) : 0;
}

/* RTIT, Figure 2 (the first-byte map). */
static void build_rtit(struct rtit_pktdec_fast tab[rtit_pktdec_fast_tabs][256],
		       uint8_t size[rtit_pktdec_fast_tabs][256], bool cycle_acc)
{
	static const enum rtit_pkt_type fup_types[8] = {
		[rtit_r_ev_pge] = RTIT_R_FUP_PGE, [rtit_r_ev_pgd] = RTIT_R_FUP_PGD,
		[rtit_r_ev_pcc] = RTIT_R_FUP_PCC, [rtit_r_ev_tip] = RTIT_R_TIP,
		[rtit_r_ev_far] = RTIT_R_FUP_FAR,
		/* FUP.BuffOvf (4.2.5) clears the valid bit first, and
		 * reserved events 100b/101b are errors: general path. */
	};

	for (unsigned b = 0; b < 256; b++) {
		struct row r = { &tab[0][b], &size[0][b] };

		if (!(b & rtit_r_tnt_mask) && b >= rtit_r_tnt_min) {
			/* TNT (4.2.2, Figure 4): the leading 1 is the stop
			 * bit; a full TNT brings a CCP (4.2.15). */
			unsigned n = rtit_msb(b);
			row_fixed(r, RTIT_R_TNT, rtit_r_tnt_size, n, b & rtit_mask(n));
			row_ccp_next(r, cycle_acc && n == rtit_r_tnt_max_bits);
		} else if ((b & rtit_r_fup_mask) == rtit_r_fup) {
			/* TIP and FUP.* (4.2.3, 4.2.4): 10 Event Zext CNT.
			 * Table 18: CNT 00b/01b send LIP[15:0]/[31:0], the
			 * rest matched from LAST_LIP (valid) or zero (Zext);
			 * CNT 10b sends LIP[47:0]; CNT 11b is reserved.  The
			 * 48-bit LIP is sign-extended (D2): the
			 * fast path holds the last LIP so, the bits a
			 * compressed IP keeps are all those above it. */
			enum rtit_pkt_type type = fup_types[(b >> rtit_r_fup_event_shr) & rtit_r_fup_event_mask];
			unsigned cnt = b & rtit_r_fup_cnt_mask;
			bool zext = b & rtit_r_fup_zext;
			int nbytes = rtit_ipc_payload_size(RTIT_DIALECT_RTIT, (uint8_t)cnt);

			if (!type || nbytes < 0)
				continue;
			row_ip(r, type, (uint8_t)cnt, zext, (unsigned)nbytes,
			       cnt == rtit_r_cnt_48 || zext ? 0 : ~rtit_mask(8u * (unsigned)nbytes),
			       cnt == rtit_r_cnt_48 ? rtit_r_lip_bits : 0);
			row_ccp_next(r, cycle_acc);	/* 4.2.15: every FUP and TIP */
		} else if (b == rtit_r_opc_tracestop) {
			/* TraceSTOP (4.2.11): no CCP follows (4.2.15). */
			row_fixed(r, RTIT_R_TRACESTOP, rtit_r_tracestop_size, 0, 0);
		} else if ((b & rtit_r_pip_mask) == rtit_r_opc_pip) {
			/* PIP (4.2.10, Figure 9): CR0.PG in bit 0, then
			 * CR3[39:0] low byte first. */
			row_fixed(r, RTIT_R_PIP, rtit_r_pip_size, 0, (b & rtit_r_pip_pg) != 0);
			r.r->lo_mask = rtit_mask(8 * rtit_r_pl_pip_size);
			row_ccp_next(r, cycle_acc);
		} else if ((b & rtit_r_mtc_mask) == rtit_r_opc_mtc) {
			/* MTC (4.2.12, Figure 11): RNG in bits 1:0, then the
			 * 8 TSC bits. */
			row_fixed(r, RTIT_R_MTC, rtit_r_mtc_size, (uint64_t)(b & rtit_r_mtc_rng_mask) << 8, 0);
			r.r->lo_mask = rtit_mask(8 * rtit_r_pl_mtc_size);
			row_ccp_next(r, cycle_acc);
		}
		/* PSB (resets the last IP), STS (fields across bytes 0-1)
		 * and the reserved bytes: general path. */
	}
	if (!cycle_acc)
		return;
	for (unsigned b = 0; b < 256; b++) {
		/* Cycle count packet (4.2.14, Figure 13): CCNT in bits 1:0
		 * is the length (00b reserved); the value is CycleCount0 in
		 * bits 7:2, then whole bytes. */
		struct row r = { &tab[1][b], &size[1][b] };
		unsigned ccnt = b & rtit_r_ccp_ccnt_mask;

		if (ccnt == rtit_r_ccp_ccnt_rsvd)
			continue;
		row_fixed(r, RTIT_R_CCP, ccnt, b >> rtit_r_ccp_shl, ccnt);
		r.r->lo_mask = rtit_mask(8 * (ccnt - 1));
		r.r->lo_rot = 8 - rtit_r_ccp_shl;
	}
}

/* Intel PT: the tables of the packets the second byte names. */
enum { pt_tab_ext = 1, pt_tab_mode = 2 };

/* A field of the payload after the second byte: w's bytes from 1 on, so
 * the union word gets them rotated right by a byte (and left by @shl). */
static void row_ext_field(struct row row, unsigned nbytes, unsigned skip_bits, unsigned shl)
{
	row.r->lo_mask = rtit_mask(8 * (1 + nbytes)) & ~rtit_mask(8 + skip_bits);
	row.r->lo_rot = (uint8_t)((64 - 8 - skip_bits + shl) & 63);
}

/* The packets after 0x02 (33.4.2, Table 33-16 to 33-51) the fast path
 * decodes, in the general decoder's order (pt_decode_ext): PTW (its 8-byte
 * payload outruns w), MNT (a third opcode byte), TMA, MWAIT, PWRE, PWRX,
 * CFE and EVD (fields across bytes) stay general, as do PSB (it resets the
 * last IP) and BBP (it opens a block). */
static void build_pt_ext(struct row r, uint8_t b1)
{
	if ((b1 & rtit_pt_ext_ptw_mask) == rtit_pt_ext_ptw)
		return;
	switch (b1 & rtit_pt_ext_ip_mask) {
	case rtit_pt_ext_exstop:
		/* EXSTOP (Table 33-41): IP in bit 7. */
		row_fixed(r, RTIT_PT_EXSTOP, rtit_pt_exstop_size, (b1 & rtit_pt_ext_ip) != 0, 0);
		return;
	case rtit_pt_ext_bep:
		/* BEP (Table 33-48): IP in bit 7. */
		row_fixed(r, RTIT_PT_BEP, rtit_pt_bep_size, (b1 & rtit_pt_ext_ip) != 0, 0);
		return;
	default:
		break;
	}
	switch (b1) {
	case rtit_pt_ext_psbend:	/* Table 33-37 */
		row_fixed(r, RTIT_PT_PSBEND, rtit_pt_psbend_size, 0, 0);
		break;
	case rtit_pt_ext_ovf:		/* Table 33-35 */
		row_fixed(r, RTIT_PT_OVF, rtit_pt_ovf_size, 0, 0);
		break;
	case rtit_pt_ext_stop:		/* Table 33-28 */
		row_fixed(r, RTIT_PT_TRACESTOP, rtit_pt_stop_size, 0, 0);
		break;
	case rtit_pt_ext_cbr:
		/* CBR (Table 33-29): the ratio in byte 2, byte 3 reserved. */
		row_fixed(r, RTIT_PT_CBR, rtit_pt_cbr_size, 0, 0);
		row_ext_field(r, 1, 0, 0);
		break;
	case rtit_pt_ext_pip: {
		/* PIP (Table 33-24): payload = CR3[51:5] << 1 | NR; NR is
		 * w's bit 8, which lands on pip.nr (union byte 9).  (A block:
		 * C11 puts no declaration right after a label.) */
		_Static_assert(rtit_pt_pip_nr == 1, "NR is payload bit 0");
		row_fixed(r, RTIT_PT_PIP, rtit_pt_pip_size, 0, 0);
		row_ext_field(r, rtit_pt_pl_pip_size, rtit_pt_pip_shr, rtit_pt_pip_shl);
		r.r->hi_mask = (uint64_t)rtit_pt_pip_nr << 8;
		break;
	}
	case rtit_pt_ext_vmcs:
		/* VMCS (Table 33-34): pointer[51:12]. */
		row_fixed(r, RTIT_PT_VMCS, rtit_pt_vmcs_size, 0, 0);
		row_ext_field(r, rtit_pt_pl_vmcs_size, 0, rtit_pt_vmcs_shl);
		break;
	case rtit_pt_ext_tnt64:
		/* Long TNT (Table 33-16): the stop bit, the highest set bit
		 * of the 6 payload bytes, ends the TNT bits; fast_run() puts
		 * their count in the fields' byte 7 and the bits below it. */
		row_fixed(r, RTIT_PT_TNT64, rtit_pt_tnt64_size, 0, 0);
		r.r->tnt_msb = 1;
		r.r->lo_mask = rtit_mask(8) << 56;
		r.r->lo_rot = 8;
		r.r->hi_mask = rtit_mask(8 * rtit_pt_pl_tnt64_size);
		break;
	default:
		break;
	}
}

/* MODE (Table 33-25): the leaf in bits 7:5 of the second byte names the
 * packet, its bits are 4:0; reserved leaves: general path (an error). */
static void build_pt_mode(struct row r, uint8_t b1)
{
	unsigned leaf = (b1 & rtit_pt_mode_leaf_mask) >> rtit_pt_mode_leaf_shr;

	if (leaf == rtit_pt_leaf_mode_exec)
		row_fixed(r, RTIT_PT_MODE_EXEC, rtit_pt_mode_size, b1 & rtit_pt_mode_bits_mask, 0);
	else if (leaf == rtit_pt_leaf_mode_tsx)
		row_fixed(r, RTIT_PT_MODE_TSX, rtit_pt_mode_size, b1 & rtit_pt_mode_bits_mask, 0);
}

/* Intel PT, 33.4.2 (Packet Summary).  Only outside a BBP..BEP block (the
 * decoder takes the general path inside one, 33.4.1.1). */
static void build_pt(struct rtit_pktdec_fast tab[rtit_pktdec_fast_tabs][256],
		     uint8_t size[rtit_pktdec_fast_tabs][256])
{
	static const enum rtit_pkt_type ip_types[32] = {
		[rtit_pt_opc_tip] = RTIT_PT_TIP, [rtit_pt_opc_tip_pge] = RTIT_PT_TIP_PGE,
		[rtit_pt_opc_tip_pgd] = RTIT_PT_TIP_PGD, [rtit_pt_opc_fup] = RTIT_PT_FUP,
	};

	for (unsigned b = 0; b < 256; b++) {
		struct row r = { &tab[0][b], &size[0][b] };
		enum rtit_pkt_type ip_type = ip_types[b & rtit_pt_opm_ip];

		if (b == rtit_pt_opc_pad) {
			/* PAD (Table 33-39). */
			row_fixed(r, RTIT_PT_PAD, rtit_pt_pad_size, 0, 0);
		} else if ((b & rtit_pt_tnt8_mask) == rtit_pt_opc_tnt8 && b != rtit_pt_ext) {
			/* TNT-8 (Table 33-16): ((1 << N) | bits) << 1. */
			unsigned v = b >> rtit_pt_tnt8_shr, n = rtit_msb(v);
			row_fixed(r, RTIT_PT_TNT8, rtit_pt_tnt8_size, n, v & rtit_mask(n));
		} else if (ip_type) {
			/* TIP, TIP.PGE, TIP.PGD, FUP (Tables 33-17, 33-20 to
			 * 33-22) with IPBytes in bits 7:5, Table 33-18:
			 * 000b suppressed (LastIP unchanged), 001b/010b/100b
			 * update the low 16/32/48 bits of LastIP, 011b
			 * sign-extends 48 bits, 110b is the full IP;
			 * 101b/111b are reserved (general path: an error). */
			uint8_t ipc = (uint8_t)(b >> rtit_pt_ipc_shr);
			int nbytes = rtit_ipc_payload_size(RTIT_DIALECT_PT, ipc);

			if (nbytes < 0)
				continue;
			if (ipc == rtit_pt_ipc_suppressed) {
				row_fixed(r, ip_type, rtit_pt_opc_size, ipc, 0);
				r.r->is_ip = 1;
				r.r->ip_status = 1;
				continue;
			}
			row_ip(r, ip_type, ipc, false, (unsigned)nbytes,
			       ipc == rtit_pt_ipc_sext_48 || ipc == rtit_pt_ipc_full
			       ? 0 : ~rtit_mask(8u * (unsigned)nbytes),
			       ipc == rtit_pt_ipc_sext_48 ? 48 : 0);
		} else if ((b & rtit_pt_cyc_mask) == rtit_pt_opc_cyc) {
			/* CYC (Table 33-33): CycleCounter[4:0] in bits 7:3,
			 * Exp in bit 2; each further byte adds 7 bits (7:1)
			 * and its own Exp (bit 0).  Here one or two bytes: a
			 * second byte with Exp set takes the general path. */
			if (!(b & rtit_pt_cyc_exp)) {
				row_fixed(r, RTIT_PT_CYC, rtit_pt_opc_size, b >> rtit_pt_cyc_shr, 1);
			} else {
				row_fixed(r, RTIT_PT_CYC, rtit_pt_opc_size + 1, b >> rtit_pt_cyc_shr, 2);
				r.r->lo_mask = rtit_mask(8) & ~(uint64_t)rtit_pt_cyc_ext_exp;
				r.r->lo_rot = (8 - rtit_pt_cyc_shr) - rtit_pt_cyc_ext_shr;
				r.r->slow_if = rtit_pt_cyc_ext_exp;
			}
		} else if (b == rtit_pt_opc_tsc) {
			/* TSC (Table 33-30): TSC[55:0]. */
			row_fixed(r, RTIT_PT_TSC, rtit_pt_tsc_size, 0, 0);
			r.r->lo_mask = rtit_mask(8 * rtit_pt_pl_tsc_size);
		} else if (b == rtit_pt_opc_mtc) {
			/* MTC (Table 33-31): CTC in byte 1. */
			row_fixed(r, RTIT_PT_MTC, rtit_pt_mtc_size, 0, 0);
			r.r->lo_mask = rtit_mask(8 * rtit_pt_pl_mtc_size);
		} else if (b == rtit_pt_ext) {
			r.r->second = pt_tab_ext;
		} else if (b == rtit_pt_mode) {
			r.r->second = pt_tab_mode;
		}
		/* The reserved bytes: general path. */
	}
	for (unsigned b = 0; b < 256; b++) {
		build_pt_ext((struct row){ &tab[pt_tab_ext][b], &size[pt_tab_ext][b] }, (uint8_t)b);
		build_pt_mode((struct row){ &tab[pt_tab_mode][b], &size[pt_tab_mode][b] }, (uint8_t)b);
	}
}

void rtit_pktdec_fast_build(struct rtit_pktdec_fast tab[rtit_pktdec_fast_tabs][256],
			    uint8_t size[rtit_pktdec_fast_tabs][256],
			    enum rtit_dialect dialect, bool cycle_acc)
{
	memset(tab, 0, rtit_pktdec_fast_tabs * 256 * sizeof(tab[0][0]));
	memset(size, 0, rtit_pktdec_fast_tabs * 256);
	if (dialect == RTIT_DIALECT_RTIT)
		build_rtit(tab, size, cycle_acc);
	else
		build_pt(tab, size);
	for (unsigned c = 0; c < rtit_pktdec_fast_tabs; c++)
		for (unsigned b = 0; b < 256; b++)
			if (!tab[c][b].ip_load)
				tab[c][b].ip_keep = ~0ull;	/* the last IP stays */
}
