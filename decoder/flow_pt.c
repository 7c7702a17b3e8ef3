/*
 * flow_pt.c - the Intel PT walk of the flow decoder (include/rtit/flow.h):
 * the inverse of encoder/pt/pt_model.c (on_op; SDM 33.4.2, Tables 33-55
 * and 33-56), sharing the records, the instruction cache and the end of
 * the stream with RTIT's walk in flow.c.
 *
 * What each packet means to the walk:
 *   - TNT-8 / Long TNT: one bit per conditional branch and compressed RET
 *     (33.4.2.1).  A TNT is flushed before any other non-timing packet
 *     (D21), so while bits are pending no IP packet can be due.
 *   - TIP: an indirect branch's, uncompressed RET's or far transfer's
 *     target (Table 33-55 cases 4, 6, 8-13).
 *   - TIP.PGD: the branch or event left tracing; its IP, when sent, is the
 *     target; suppressed for a conditional branch (D21), when ContextEn
 *     cleared, and after a FUP for TraceEn cleared (Table 33-56 cases 3,
 *     4, 6-9).  TIP.PGE: tracing (re)starts at its IP (case 5).
 *   - FUP whose IP is where the walk stands, followed by a TIP: an
 *     interrupt, exception or VM exit here (Table 33-23: a fault's CLIP, a
 *     trap's or interrupt's NLIP).  With a TIP.PGD instead: the event left
 *     tracing, or TraceEn was cleared here (WRMSR, SMI).  A software
 *     interrupt sends FUP(CLIP) + TIP itself (Table 33-55 case 13): at an
 *     INT n the FUP is the instruction's.
 *   - FUP inside PSB+ (33.3.7), and the FUP that follows an EXSTOP, PTW
 *     or CFE with its IP bit set: status, consumed on the way (they say
 *     where execution is, which the walk knows), except that a PSB+ FUP
 *     synchronises a walk that is not enabled.
 *   - MODE.TSX (Table 33-27) while tracing, and its FUP: InTX set at the
 *     XBEGIN or cleared at the XEND at the FUP's IP (Table 33-55 cases
 *     19/20); with TXAbort, the transaction aborted at the FUP's IP and
 *     the TIP that follows is the fallback (case 21).  In PSB+, or while
 *     tracing is off (FilterEn=0, 33.2.9.2), it only says InTX.
 *   - SGX (Table 33-55 case 17, Table 33-56 cases 5/6): an ENCLU is a far
 *     transfer with FUP(CLIP) + TIP, as INT n, or TIP.PGD() alone into an
 *     opt-out enclave; tracing resumes with TIP.PGE out of it.  An event
 *     inside a debug enclave the walk followed is an AEX (D52).
 *   - OVF (33.3.8): a gap; a FUP follows with the first IP traced again,
 *     or tracing resumes with a TIP.PGE.
 *   - MODE.Exec: the decoding mode from here on (Table 33-26); PIP: CR3.
 *
 * RET compression (33.4.2.2): every near CALL but a zero-length one pushes
 * its NLIP on a 64-entry stack, every near RET pops; a compressed RET is a
 * taken TNT bit and goes to the popped NLIP.  The encoder empties its
 * stack at PSB, OVF and when PacketEn falls.  The walk empties its own at
 * the last two (where it stands is where the encoder was) but not at PSB,
 * whose place in the flow the walk does not know exactly: the encoder's
 * stack stays a suffix of the walk's (pushes and pops apply to both, a pop
 * of an empty stack changes nothing), so the top the walk pops for a
 * compressed RET is the encoder's (docs/decisions.md D30).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "flow_internal.h"
#include "rtit/msr_pt.h"
#include "rtit/pebs.h"
#include "rtit/pt_errata.h"

/* The workaround of erratum @e is on (cfg.pt_errata, D106). */
static bool workaround(const struct rtit_flow_dec *d, unsigned e)
{
	return (d->cfg.pt_errata & RTIT_PT_ERRATUM(e)) != 0;
}

/* The pending RFLAGS.IF reaches the instruction or transfer it belongs
 * to (the walk's record after this has it). */
static void take_if(struct rtit_flow_dec *d)
{
	if (d->if_pend >= 0)
		flow_if_apply(d, d->if_pend);
	d->if_pend = -1;
	d->mode_fup = false;
}

/* After an overflow: RFLAGS.IF may have changed unseen. */
static void forget_if(struct rtit_flow_dec *d)
{
	d->if_pend = -1;
	d->if_last = -1;
	d->mode_fup = false;
	d->tmpl.pad0 &= (uint8_t)~RTIT_FLOW_A_IF_KNOWN;
}

void flow_pt_reset(struct rtit_flow_dec *d)
{
	rtit_pt_calls_clear(&d->rs);
	d->mode_seen = false;
	d->in_psb = false;
	d->bdm70_pend = false;
	d->bound_fup = false;
	d->in_vmm = false;
	d->cfe_type = 0;
	forget_if(d);
	d->tsx_pending = false;
	d->intx = false;
	d->intx_known = false;
	d->pebs_in = false;
	d->pebs_fup = false;
	d->evd_pend = 0;
	d->mode_ip_due = false;
	d->encl = FLOW_ENCL_UNKNOWN;	/* resynchronising after an error */
}

/* A transfer leaves tracing (TIP.PGD): the encoder sends no MODE.Exec
 * with it, so RFLAGS.IF after it is not known; tracing resumes with the
 * last MODE.Exec's (flow_enable_at) unless a MODE.Exec says otherwise. */
static void leave_if(struct rtit_flow_dec *d)
{
	if (d->if_pend >= 0)
		take_if(d);
	else
		d->tmpl.pad0 &= (uint8_t)~RTIT_FLOW_A_IF_KNOWN;
	d->mode_fup = false;
}

/* The mode a MODE.Exec says (Table 33-26): CS.L (64-bit), CS.D (32-bit),
 * neither (16-bit: real mode after INIT or SIPI, D58). */
static uint8_t mode_of(uint8_t bits)
{
	return (bits & rtit_pt_mode_exec_csl) ? RTIT_SIM_MODE_64 :
	       (bits & rtit_pt_mode_exec_csd) ? RTIT_SIM_MODE_32 : RTIT_SIM_MODE_16;
}

static void apply_mode(struct rtit_flow_dec *d, uint8_t bits)
{
	d->tmpl.mode = mode_of(bits);
	d->ic_tag = d->tmpl.mode == RTIT_SIM_MODE_64 ? 0 :
		    d->tmpl.mode == RTIT_SIM_MODE_32 ? FLOW_IC_TAG32 : FLOW_IC_TAG16;
	d->if_pend = -1;
	d->mode_fup = false;
	flow_if_apply(d, bits & rtit_pt_mode_exec_if);
}

/* Whether a MODE.Exec keeps the decoding mode (only RFLAGS.IF may have
 * changed). */
static bool mode_same(const struct rtit_flow_dec *d, uint8_t bits)
{
	return mode_of(bits) == d->tmpl.mode;
}

static void apply_pip(struct rtit_flow_dec *d, const struct rtit_packet *p)
{
	d->tmpl.cr3 = p->u.pip.cr3;	/* Table 33-24: CR3[51:5] */
	d->nonroot = p->u.pip.nr;	/* Table 33-53 */
	d->vmx_known = true;
}

/* An MTC (33.4.2.12, 33.8.3.2): ART[f+7:f], f = MTCFreq, had just changed:
 * the ART then (flow_window_advance); the TSC is the first at or after it
 * (TSC = ART * art_num / art_den).  Not before a TSC gave the ART. */
static void pt_mtc(struct rtit_flow_dec *d, uint8_t ctc)
{
	unsigned f = d->cfg.mtc_freq;

	d->pt_mtc_last = ctc;
	d->pt_mtc_known = true;
	if (!d->t_tsc_valid || f > 15)
		return;
	uint64_t art = flow_window_advance(d->t_art, f, 8 * rtit_pt_pl_mtc_size, ctc);
	if (art <= d->t_art)
		return;
	unsigned __int128 x = (unsigned __int128)art * d->cfg.art_num;
	uint64_t tsc = (uint64_t)((x + d->cfg.art_den - 1) / d->cfg.art_den);
	d->t_art = art;
	if (tsc > d->t_tsc)
		d->t_tsc = tsc;
}

/* Erratum SKL168 (D127): a CYC, with the MTC it goes with, right before
 * a PSB may be lost.  The PSB+'s TMA gives ART[15:0] at its TSC (33.4.2.13),
 * so ART[f+7:f] there (the bits of them it has, f = MTCFreq) is the last
 * MTC's payload (33.4.2.12) unless an MTC was lost since: then the cycles
 * of its CYC are lost too, and the cycle count restarts at the next record
 * (RTIT_FLOW_A_CYC_ORIGIN), as libipt's workaround leaves that MTC out of
 * its calibration. */
static void skl168_tma(struct rtit_flow_dec *d, const struct rtit_packet *p)
{
	unsigned f = d->cfg.mtc_freq;
	if (p->u.tma.skz84) {	/* SKZ84's TMA: no CTC, no time (D144) */
		d->pt_mtc_known = false;
		return;
	}
	if (f > 15)
		return;
	unsigned bits = 16 - f < 8 ? 16 - f : 8;
	uint8_t mask = (uint8_t)((1u << bits) - 1), now = (uint8_t)(p->u.tma.ctc >> f);

	if (d->in_psb && d->pt_mtc_known && ((now ^ d->pt_mtc_last) & mask) &&
	    workaround(d, RTIT_PT_SKL168))
		d->tmpl.pad0 |= RTIT_FLOW_A_CYC_ORIGIN;
	d->pt_mtc_last = now;
	d->pt_mtc_known = bits == 8;
}

/* The CYC-eligible packets (33.3.6): a CYC right before one gives its
 * time. */
static bool cyc_eligible(enum rtit_pkt_type t)
{
	switch (t) {
	case RTIT_PT_TNT8: case RTIT_PT_TNT64: case RTIT_PT_TIP: case RTIT_PT_TIP_PGE:
	case RTIT_PT_TIP_PGD: case RTIT_PT_MODE_EXEC: case RTIT_PT_MODE_TSX: case RTIT_PT_PIP:
	case RTIT_PT_VMCS: case RTIT_PT_OVF: case RTIT_PT_MTC: case RTIT_PT_TSC: case RTIT_PT_PTW:
	case RTIT_PT_EXSTOP:
		return true;
	default:
		return false;
	}
}

/* Timing and padding packets (SDM 33.4.2.11-33.4.2.14, 33.4.2.18, Table
 * 33-15): they say nothing of the flow, so the questions below look past
 * them. */
static inline bool pt_timing_or_pad(enum rtit_pkt_type t)
{
	switch (t) {
	case RTIT_PT_CYC: case RTIT_PT_MTC: case RTIT_PT_TSC: case RTIT_PT_TMA:
	case RTIT_PT_CBR: case RTIT_PT_PAD: case RTIT_PT_MNT:
		return true;
	default:
		return false;
	}
}

/* Erratum SKD007 (D109): the two halves of an OVF cut into CYCs, a 2-byte
 * CYC ending in the OVF's 0x02 and a 1-byte CYC 0xF3 (skd007). */
static inline bool skd007_first(const struct rtit_pktdec_item *it)
{
	return it->pkt.type == RTIT_PT_CYC && it->pkt.size == 2 && it->raw[1] == rtit_pt_ext;
}

static inline bool skd007_second(const struct rtit_pktdec_item *it)
{
	return it->pkt.type == RTIT_PT_CYC && it->pkt.size == 1 && it->raw[0] == rtit_pt_ext_ovf;
}

/* Whether the next packet but timing and padding, among those read ahead,
 * is a TIP.PGE (or none is known yet). */
static bool pge_ahead(const struct rtit_flow_dec *d)
{
	for (unsigned k = 0; k < d->ahead_n; k++) {
		const struct rtit_packet *p = &d->ahead[(d->ahead_head + k) % FLOW_RING].pkt;
		if (!pt_timing_or_pad(p->type))
			return p->type == RTIT_PT_TIP_PGE;
	}
	return true;
}

/* While tracing, with a TNT or TIP just taken: a TIP.PGE among the packets
 * read ahead before any TIP.PGD, OVF, PSB or TraceStop cannot follow it
 * (PacketEn is 1 until one of those says otherwise, SDM 33.4.2.4): the
 * error comes before the packet taken is used (D142).  A FUP with no IP
 * before it is a fault that comes first (flow_pt_fup_noip, D153): that
 * FUP is returned instead. */
static const struct rtit_pktdec_item *pge_found_ahead(const struct rtit_flow_dec *d)
{
	if (!d->ahead_watch)
		return NULL;
	for (unsigned k = 0; k < d->ahead_n; k++) {
		const struct rtit_pktdec_item *it = &d->ahead[(d->ahead_head + k) % FLOW_RING];
		switch (it->pkt.type) {
		case RTIT_PT_TIP_PGE:
			return it;
		case RTIT_PT_TIP_PGD: case RTIT_PT_OVF: case RTIT_PT_PSB: case RTIT_PT_TRACESTOP:
			return NULL;
		case RTIT_PT_CYC:
			/* the first half of what SKD007's workaround reads as
			 * an OVF (skd007; its second half may not be read
			 * yet): that OVF ends the question (D217) */
			if (workaround(d, RTIT_PT_SKD007) && skd007_first(it) &&
			    (k + 1 == d->ahead_n ||
			     skd007_second(&d->ahead[(d->ahead_head + k + 1) % FLOW_RING])))
				return NULL;
			continue;
		case RTIT_PT_FUP:
			if (it->ip_status == 1)
				return it;
			continue;
		default:
			continue;
		}
	}
	return NULL;
}

static int pge_read_ahead(struct rtit_flow_dec *d)
{
	if (d->fenced)
		return 0;	/* an earlier fault is kept: it comes first */
	const struct rtit_pktdec_item *it = pge_found_ahead(d);
	if (it && it->pkt.type == RTIT_PT_FUP)
		flow_pt_fup_noip(d, it->offset);
	else if (it)
		flow_fail(d, RTIT_ERR_BAD_CONTEXT, it->offset,
			  "TIP.PGE while tracing is enabled, with no TIP.PGD"
			  " before it (SDM 33.4.2.4)");
	if (it)
		flow_fence(d);	/* nothing is established from here (D163) */
	return 0;
}

/*
 * Each packet as the ring reads it, in the stream's order (D196): a TNT
 * where a TIP.PGD disabled tracing and no TIP.PGE enabled it again (no
 * TNT goes out with PacketEn 0, SDM 33.4.2.2, 33.2.6.1).  The walk reports
 * it when it gets there (flow_idle_tnt); found here, up to FLOW_AHEAD
 * packets earlier, the fault is kept (flow_fence, D163), so that the
 * records the packets before it give are not handed out.  Only what the
 * packets say is judged: after a PSB or OVF nothing is known until a
 * TIP.PGE or TIP.PGD, after a TraceStop until a TIP.PGE (33.2.5.3: the
 * TNT the stop leaves), and with SKD007's workaround a CYC may be an OVF
 * (skd007).  TIPs, FUPs and the rest are left to the walk: events and
 * errata send some of them with PacketEn 0.
 */
void flow_pt_ahead_check(struct rtit_flow_dec *d, const struct rtit_pktdec_item *it)
{
	uint8_t s = d->ahead_en;

	/* ahead_read calls this only for FLOW_PT_AHEAD_TYPES: a case added
	 * here is added there */
	switch (it->pkt.type) {
	case RTIT_PT_PSB:
		if (s != FLOW_AH_STOPPED)
			s = FLOW_AH_UNKNOWN;
		break;
	case RTIT_PT_OVF:
		s = FLOW_AH_UNKNOWN;
		break;
	case RTIT_PT_CYC:
		if (workaround(d, RTIT_PT_SKD007))
			s = FLOW_AH_UNKNOWN;
		break;
	case RTIT_PT_TRACESTOP:
		s = FLOW_AH_STOPPED;
		break;
	case RTIT_PT_TIP_PGE:
		s = FLOW_AH_ON;
		break;
	case RTIT_PT_TIP_PGD:
		if (s != FLOW_AH_STOPPED)
			s = FLOW_AH_OFF;
		break;
	case RTIT_PT_TNT8: case RTIT_PT_TNT64:
		if (s == FLOW_AH_OFF) {
			flow_fail_disabled(d, RTIT_R_TNT, it->offset, 0);
			flow_fence_walk(d, it->offset);
		}
		break;
	default:
		break;
	}
	d->ahead_en = s;
}

/* The TNT in view: its bits pending. */
void flow_pt_take_tnt(struct rtit_flow_dec *d)
{
	d->tnt_bits = d->la.pkt.u.tnt.bits;
	d->tnt_n = d->la.pkt.u.tnt.nbits;
	consume(d);
}

/* A TNT in view, taken while tracing: its bits pending (D142: checked
 * against the packets read ahead). */
static int take_tnt(struct rtit_flow_dec *d)
{
	flow_pt_take_tnt(d);
	return pge_read_ahead(d);
}

/* No TNT bit pending and pt_walk_packet let the walk go on with a TIP in
 * view: whether the TNT fast path may take it at an indirect JMP or CALL
 * (D156) as pt_walk_indirect and take_tip would, with nothing that would
 * make the walk do more there: an IP in it, no MODE.TSX waiting for its
 * FUP, not after a VM exit (the TIP would be the VM entry's), no TIP.PGE
 * read ahead, no BDM64 workaround to apply. */
bool flow_pt_tip_ready(const struct rtit_flow_dec *d)
{
	return d->have_la && d->la.pkt.type == RTIT_PT_TIP && d->la.ip_status == 0 &&
	       !d->tsx_pending && !d->in_vmm && !pge_found_ahead(d) &&
	       !(workaround(d, RTIT_PT_BDM64) && d->intx);
}

/* The TIP in view at an indirect JMP or CALL (flow_pt_tip_ready): as
 * take_tip takes it. */
void flow_pt_take_tip(struct rtit_flow_dec *d)
{
	d->vmx_change = 0;
	consume(d);
	take_if(d);
}

/* No TNT bit pending and pt_walk_packet let the walk go on with a TNT in
 * view: whether the TNT fast path may take it at the next branch that
 * uses a bit (D156), with nothing that would make the walk report there:
 * bits in it, no MODE.TSX waiting for its FUP (pt_walk_packet's check),
 * and (@pge) no TIP.PGE read ahead (take_tnt's check, made only where
 * the fast path takes the TNT: no packet is read in between). */
bool flow_pt_tnt_ready(const struct rtit_flow_dec *d, bool pge)
{
	return d->have_la && (d->la.pkt.type == RTIT_PT_TNT8 || d->la.pkt.type == RTIT_PT_TNT64) &&
	       d->la.pkt.u.tnt.nbits && !d->tsx_pending && (!pge || !pge_found_ahead(d));
}

/* How many BIP IDs Table 33-47 defines for BBP type @type (IDs 0 to
 * n-1); 0 for a type Table 33-45 reserves. */
static unsigned bip_ids(uint8_t type)
{
	switch (type) {
	case rtit_pt_bbp_gpr: return 0x12;		/* R/EFLAGS .. R15 */
	case rtit_pt_bbp_pebs_basic: return 3;
	case rtit_pt_bbp_pebs_mem: return 4;
	case rtit_pt_bbp_lbr0: case rtit_pt_bbp_lbr1: case rtit_pt_bbp_lbr2:
	case rtit_pt_bbp_xmm: return 32;
	default: return 0;
	}
}

/* The block that a BBP or BEP at @off closes (d->pebs_blk, its IDs in
 * d->pebs_ids): complete (D142).  A PEBS record's group holds every field
 * the group defines (SDM Vol. 3B 20.9.2.2, which Table 33-47 cites), so a
 * Basic, Memory, GPR or XMM block holds every item Table 33-47 lists for
 * it; the LBR blocks hold LBR entries (FROM, TO, INFO) in order: IDs from
 * 0 without a gap, a full block before the next LBR block, whole entries
 * in all (@end: the record's last block closed). */
static int pebs_block_done(struct rtit_flow_dec *d, uint64_t off, bool end)
{
	unsigned n = (unsigned)__builtin_popcount(d->pebs_ids);
	bool lbr = d->pebs_blk == rtit_pt_bbp_lbr0 || d->pebs_blk == rtit_pt_bbp_lbr1 ||
		   d->pebs_blk == rtit_pt_bbp_lbr2;
	unsigned want = lbr ? n : bip_ids(d->pebs_blk);
	uint32_t all = want >= 32 ? 0xffffffffu : (1u << want) - 1;

	if (lbr)
		d->pebs_lbr_n += n;
	if (d->pebs_ids != all)
		return flow_fail(d, RTIT_ERR_BAD_CONTEXT, off,
				 "a block of type 0x%02x without all its items (IDs 0x%x present;"
				 " SDM Table 33-47, Vol. 3B 20.9.2.2)", d->pebs_blk, d->pebs_ids);
	if (end && d->pebs_lbr_n % 3)
		return flow_fail(d, RTIT_ERR_BAD_CONTEXT, off,
				 "LBR blocks with %u items, not whole entries (FROM, TO, INFO;"
				 " SDM Table 33-47)", d->pebs_lbr_n);
	return 0;
}

/* A PEBS record's BBP, BIP or BEP at @off: its blocks run from the first
 * BBP to the BEP (33.4.1.1, D55).  What Tables 33-45 and 33-47 rule out
 * is an error (D137): a reserved block type, a BIP ID the block type does
 * not define, an ID twice in one block ("uniquely identifies the state
 * value"), a block type twice in one record, a BEP with no block open
 * (a BBP "will always be followed by a BEP", and generation never
 * resumes inside a block). */
static int pebs_block(struct rtit_flow_dec *d, const struct rtit_packet *p, uint64_t off)
{
	switch (p->type) {
	case RTIT_PT_BBP:
		if (!bip_ids(p->u.bbp.type))
			return flow_fail(d, RTIT_ERR_BAD_PACKET, off,
					 "BBP of reserved type 0x%02x (SDM Table 33-45)",
					 p->u.bbp.type);
		if (!d->pebs_in) {
			d->pebs_in = true;
			d->pebs_h = RTIT_PEBS_DIGEST_INIT;
			d->pebs_eip = 0;
			d->pebs_groups = 0;
			d->pebs_types = 0;
			d->pebs_lbr_n = 0;
		} else if (d->pebs_types & (1u << p->u.bbp.type)) {
			return flow_fail(d, RTIT_ERR_BAD_CONTEXT, off,
					 "a second block of type 0x%02x in one PEBS record"
					 " (SDM 33.4.1.1)", p->u.bbp.type);
		} else {
			int r = pebs_block_done(d, off, false);
			if (r < 0)
				return r;
			/* the next LBR block continues a full one (Table 33-47) */
			if ((p->u.bbp.type == rtit_pt_bbp_lbr1 && d->pebs_lbr_n != 32) ||
			    (p->u.bbp.type == rtit_pt_bbp_lbr2 && d->pebs_lbr_n != 64))
				return flow_fail(d, RTIT_ERR_BAD_CONTEXT, off,
						 "LBR block 0x%02x after %u LBR items, not a full"
						 " block before it (SDM Table 33-47)", p->u.bbp.type,
						 d->pebs_lbr_n);
		}
		d->pebs_types |= 1u << p->u.bbp.type;
		d->pebs_ids = 0;
		d->pebs_blk = p->u.bbp.type;
		d->pebs_groups |= rtit_pebs_group_of(p->u.bbp.type);
		break;
	case RTIT_PT_BIP:
		if (!d->pebs_in)
			break;
		if (p->u.bip.id >= bip_ids(d->pebs_blk))
			return flow_fail(d, RTIT_ERR_BAD_PACKET, off,
					 "BIP ID 0x%02x, which block type 0x%02x does not define"
					 " (SDM Table 33-47)", p->u.bip.id, d->pebs_blk);
		if (d->pebs_ids & (1u << p->u.bip.id))
			return flow_fail(d, RTIT_ERR_BAD_CONTEXT, off,
					 "BIP ID 0x%02x twice in one block (SDM 33.4.1.1)",
					 p->u.bip.id);
		d->pebs_ids |= 1u << p->u.bip.id;
		d->pebs_h = rtit_pebs_digest_step(d->pebs_h, d->pebs_blk, p->u.bip.id,
						  p->u.bip.value);
		if (d->pebs_blk == rtit_pt_bbp_pebs_basic && p->u.bip.id == 0)
			d->pebs_eip = p->u.bip.value;
		break;
	default:	/* BEP */
		if (!d->pebs_in)
			return flow_fail(d, RTIT_ERR_BAD_CONTEXT, off,
					 "BEP with no block open (SDM 33.4.2.26)");
		{
			int r = pebs_block_done(d, off, true);
			if (r < 0)
				return r;
		}
		/* IP=1: the FUP that follows binds the record (Table
		 * 33-48); IP=0 (ContextEn=0): nothing traced here to
		 * bind it to, it is not reported */
		d->pebs_fup = p->u.ip_bit;
		d->pebs_in = false;
		break;
	}
	return 0;
}

/* What IA32_RTIT_CTL's ADDRn_CFG fields and ToPA output say about ending
 * tracing at @n IPs (SDM 33.2.4, 33.2.6.5): FILT_ANY when ToPA output or a
 * TraceStop range may end it anywhere (D137), FILT_NONE when no filter
 * range is configured (FilterEn "is set to 1 at all times"), else
 * FILT_RANGES with rng[i] the first ADDRn filter range holding ips[i], or
 * -1 (FilterEn is 0 there). */
enum { FILT_ANY, FILT_NONE, FILT_RANGES };

/* IA32_RTIT_CTL's ADDRn_CFG (Table 33-6): enum rtit_pt_addr_cfg. */
static inline unsigned addr_cfg(uint64_t ctl, unsigned n)
{
	return (unsigned)((ctl & RTIT_PT_CTL_ADDR_CFG_MASK(n)) >> RTIT_PT_CTL_ADDR_CFG_SHIFT(n));
}

static int filter_ranges(const struct rtit_flow_dec *d, const uint64_t *ips, int *rng, unsigned n)
{
	uint64_t ctl = d->cfg.pt_ctl;
	bool filter = false;

	if (ctl & RTIT_PT_CTL_TOPA)
		return FILT_ANY;
	for (unsigned i = 0; i < n; i++)
		rng[i] = -1;
	for (unsigned a = 0; a < 4; a++) {
		unsigned cfgn = addr_cfg(ctl, a);
		if (cfgn == RTIT_PT_ADDR_STOP)
			return FILT_ANY;	/* a TraceStop range */
		if (cfgn != RTIT_PT_ADDR_FILTER)
			continue;
		filter = true;
		for (unsigned i = 0; i < n; i++)
			if (rng[i] < 0 && ips[i] >= d->cfg.pt_addr_a[a] && ips[i] <= d->cfg.pt_addr_b[a])
				rng[i] = (int)a;
	}
	return filter ? FILT_RANGES : FILT_NONE;
}

/* A taken branch to @target clears FilterEn (33.2.4: "leaving the
 * tracing region may only be detected once a taken branch or event with
 * a target outside the range is retired"): IA32_RTIT_CTL fixed, filter
 * ranges and none holds it (D173). */
bool flow_pt_leaves_filter(const struct rtit_flow_dec *d, uint64_t target)
{
	int rng;

	return d->cfg.pt_ctl_fixed && filter_ranges(d, &target, &rng, 1) == FILT_RANGES && rng < 0;
}

/* A TIP.PGD with an IP, IA32_RTIT_CTL fixed: the IP is where tracing
 * ends "unless ContextEn = 0 or TraceEn = 0" then (33.4.2.5), so FilterEn
 * cleared it: an IP outside every ADDRn range with ADDRn_CFG = 1. */
static int pgd_ip_allowed(struct rtit_flow_dec *d, const struct rtit_pktdec_item *it)
{
	int rng;

	switch (filter_ranges(d, &it->ip, &rng, 1)) {
	case FILT_NONE:
		return flow_fail(d, RTIT_ERR_BAD_CONTEXT, it->offset,
				 "TIP.PGD with the IP 0x%" PRIx64 ", but no IP filter range is configured:"
				 " FilterEn is 1 at all times (SDM 33.2.6.5, 33.4.2.5)", it->ip);
	case FILT_RANGES:
		if (rng >= 0)
			return flow_fail(d, RTIT_ERR_BAD_CONTEXT, it->offset,
					 "TIP.PGD at 0x%" PRIx64 ", inside the ADDR%d filter range: FilterEn"
					 " is 1 there (SDM 33.2.4, 33.4.2.5)", it->ip, rng);
		return 0;
	default:
		return 0;
	}
}

/* A TIP.PGD with no IP at a conditional branch: in this model only a
 * branch leaving an IP filter range ends tracing at one (D21; a TraceStop
 * range may too, `pgd_stop_suppressed`), since a Jcc changes neither CPL
 * nor CR3 (ContextEn) nor IA32_RTIT_CTL (TriggerEn).  With IA32_RTIT_CTL
 * fixed and no filter or TraceStop range, no ToPA output (whose end may
 * stop tracing anywhere), FilterEn "is set to 1 at all times" (SDM
 * 33.2.6.5), and with filter ranges a Jcc whose two ways are inside them
 * keeps it 1: the TIP.PGD cannot be this branch's (D167). */
static int cond_pgd_allowed(struct rtit_flow_dec *d, const struct ic_ent *e, uint64_t off)
{
	uint64_t ways[2] = { e->target, d->ip + e->len };
	int rng[2];

	if (!d->cfg.pt_ctl_fixed)
		return 0;
	switch (filter_ranges(d, ways, rng, 2)) {
	case FILT_NONE:
		return flow_fail(d, RTIT_ERR_BAD_CONTEXT, off,
				 "TIP.PGD with no IP at the conditional branch at 0x%" PRIx64 ", but"
				 " no IP filter or TraceStop range is configured: nothing ends tracing"
				 " at a Jcc (SDM 33.2.6.5, 33.4.2.5)", d->ip);
	case FILT_RANGES:
		if (rng[0] >= 0 && rng[1] >= 0)
			return flow_fail(d, RTIT_ERR_BAD_CONTEXT, off,
					 "TIP.PGD with no IP at the conditional branch at 0x%" PRIx64 ", whose"
					 " two ways (0x%" PRIx64 ", 0x%" PRIx64 ") stay inside the filter"
					 " ranges: FilterEn stays 1 (SDM 33.2.4, 33.4.2.5)", d->ip, ways[0],
					 ways[1]);
		return 0;
	default:
		return 0;
	}
}

/* Whether IA32_RTIT_CTL, the same at every enable (cfg.pt_ctl_fixed),
 * lets @p be generated: the Dependencies rows of SDM 33.4.2 (D137).
 * Inside a packet block, the packets of Table 33-15 cannot stand. */
/* "TMA is always sent immediately following a TSC packet" (SDM
 * 33.4.2.13, Application): outside PSB+ the packet before a TMA (PADs
 * aside) is a TSC; inside it, whose order "is not fixed" (33.3.7), a TSC
 * of the same PSB+ came before it (D142).  Tracks what that needs. */
static int tma_check(struct rtit_flow_dec *d, const struct rtit_pktdec_item *it)
{
	enum rtit_pkt_type t = it->pkt.type;
	bool ok = d->in_psb ? d->psb_tsc : d->prev_tsc;

	if (t == RTIT_PT_PAD)
		return 0;
	d->prev_tsc = t == RTIT_PT_TSC;
	if (t == RTIT_PT_PSB)
		d->psb_tsc = false;
	else if (t == RTIT_PT_TSC)
		d->psb_tsc = true;
	if (t != RTIT_PT_TMA || ok)
		return 0;
	return flow_fail(d, RTIT_ERR_BAD_CONTEXT, it->offset,
			 "TMA %s (SDM 33.4.2.13: it always follows a TSC)",
			 d->in_psb ? "in a PSB+ with no TSC before it" : "not right after a TSC");
}

/* A MODE packet's encodings that mean nothing: MODE.Exec's CS.D = 1 with
 * (CS.L & LMA) = 1 (SDM Table 33-26: N/A; a code segment with L and D set
 * is reserved), MODE.TSX's TXAbort = InTX = 1 (Table 33-27: N/A), and the
 * bits the two tables reserve (D154).  0, or the error at @it. */
static int mode_check(struct rtit_flow_dec *d, const struct rtit_pktdec_item *it)
{
	bool exec = it->pkt.type == RTIT_PT_MODE_EXEC;
	if (!exec && it->pkt.type != RTIT_PT_MODE_TSX)
		return 0;
	unsigned b = it->pkt.u.mode.bits;
	unsigned na = exec ? rtit_pt_mode_exec_csl | rtit_pt_mode_exec_csd :
			     rtit_pt_mode_tsx_intx | rtit_pt_mode_tsx_abrt;
	const char *table = exec ? "33-26" : "33-27";
	if (b & (exec ? rtit_pt_mode_exec_rsvd : rtit_pt_mode_tsx_rsvd))
		return flow_fail(d, RTIT_ERR_BAD_PACKET, it->offset,
				 "%s with reserved bits set (SDM Table %s)",
				 rtit_pkt_name(it->pkt.type), table);
	if ((b & na) == na)
		return flow_fail(d, RTIT_ERR_BAD_PACKET, it->offset,
				 "%s with %s both 1: no meaning (SDM Table %s: N/A)",
				 rtit_pkt_name(it->pkt.type), exec ? "CS.D and CS.L" : "TXAbort and InTX",
				 table);
	return 0;
}

/* After a MODE.Exec read while tracing (outside PSB+): "MODE.Exec always
 * precedes an IP packet (TIP, TIP.PGE, or FUP)" (SDM Table 33-26,
 * Application; 33.4.2.8).  The packet @it, when it is neither timing nor
 * padding, must be one: a TIP.PGD (its transfer left tracing) or an OVF
 * (which may have lost it) also end the wait (D154).  Else the error is at
 * the MODE.Exec. */
static int mode_ip_check(struct rtit_flow_dec *d, const struct rtit_pktdec_item *it)
{
	if (pt_timing_or_pad(it->pkt.type))
		return 0;
	switch (it->pkt.type) {
	case RTIT_PT_TIP: case RTIT_PT_TIP_PGE: case RTIT_PT_TIP_PGD: case RTIT_PT_FUP:
	case RTIT_PT_OVF:
		d->mode_ip_due = false;
		return 0;
	default:
		d->mode_ip_due = false;
		return flow_fail(d, RTIT_ERR_BAD_CONTEXT, d->mode_ip_off,
				 "MODE.Exec followed by %s, not by the IP packet it always"
				 " precedes (SDM Table 33-26)", rtit_pkt_name(it->pkt.type));
	}
}

static int pt_packet_allowed(struct rtit_flow_dec *d, const struct rtit_pktdec_item *it)
{
	const struct rtit_packet *p = &it->pkt;
	uint64_t ctl = d->cfg.pt_ctl, need = 0;
	const char *what = "";
	int r;

	if ((r = tma_check(d, it)) < 0)
		return r;
	if ((r = mode_check(d, it)) < 0)
		return r;

	if (d->pebs_in) {
		switch (p->type) {
		case RTIT_PT_TNT8: case RTIT_PT_TNT64: case RTIT_PT_TIP: case RTIT_PT_TIP_PGE:
		case RTIT_PT_TIP_PGD: case RTIT_PT_MODE_EXEC: case RTIT_PT_MODE_TSX:
		case RTIT_PT_PIP: case RTIT_PT_VMCS: case RTIT_PT_TRACESTOP: case RTIT_PT_PSB:
		case RTIT_PT_PSBEND: case RTIT_PT_PTW: case RTIT_PT_MWAIT:
			return flow_fail(d, RTIT_ERR_BAD_CONTEXT, it->offset,
					 "%s inside a packet block (SDM Table 33-15)",
					 rtit_pkt_name(p->type));
		default:
			break;
		}
	}
	if (d->in_psb) {
		/* PSB+ holds status packets only (SDM 33.3.7: TSC, TMA, PIP,
		 * VMCS, CBR, MODE.TSX, MODE.Exec, FUP; CYC and MTC "may be
		 * generated"), up to its PSBEND or an OVF ending it (D142) */
		switch (p->type) {
		case RTIT_PT_TSC: case RTIT_PT_TMA: case RTIT_PT_PIP: case RTIT_PT_VMCS:
		case RTIT_PT_CBR: case RTIT_PT_MODE_TSX: case RTIT_PT_MODE_EXEC: case RTIT_PT_FUP:
		case RTIT_PT_CYC: case RTIT_PT_MTC: case RTIT_PT_PAD: case RTIT_PT_MNT:
		case RTIT_PT_PSBEND: case RTIT_PT_OVF:
			break;
		default:
			return flow_fail(d, RTIT_ERR_BAD_CONTEXT, it->offset,
					 "%s inside PSB+, before its PSBEND: PSB+ holds status"
					 " packets only (SDM 33.3.7)", rtit_pkt_name(p->type));
		}
	}
	if (d->bound_fup || d->pebs_fup) {
		/* an IP bit of EXSTOP, PTW, CFE or BEP says a FUP follows
		 * (Tables 33-41, 33-40, 33-49, 33-48): no packet of another
		 * instruction or event comes first (D137) */
		switch (p->type) {
		case RTIT_PT_TNT8: case RTIT_PT_TNT64: case RTIT_PT_TIP: case RTIT_PT_TIP_PGE:
		case RTIT_PT_TIP_PGD: case RTIT_PT_TRACESTOP: case RTIT_PT_PTW: case RTIT_PT_EXSTOP:
		case RTIT_PT_MWAIT: case RTIT_PT_PWRE: case RTIT_PT_PWRX: case RTIT_PT_CFE:
		case RTIT_PT_EVD: case RTIT_PT_BBP: case RTIT_PT_BEP:
			return flow_fail(d, RTIT_ERR_BAD_CONTEXT, it->offset,
					 "%s where the FUP an IP bit announced must come (SDM 33.4.2)",
					 rtit_pkt_name(p->type));
		default:
			break;
		}
	}
	if (d->mode_ip_due && (r = mode_ip_check(d, it)) < 0)
		return r;
	if (!d->cfg.pt_ctl_fixed)
		return 0;
	switch (p->type) {
	case RTIT_PT_TIP_PGD:
		return it->ip_status == 0 ? pgd_ip_allowed(d, it) : 0;
	case RTIT_PT_TNT8: case RTIT_PT_TNT64:
		if (ctl & RTIT_PT_CTL_DIS_TNT)
			return flow_fail(d, RTIT_ERR_BAD_CONTEXT, it->offset,
					 "TNT with IA32_RTIT_CTL.DisTNT=1 (SDM 33.4.2.1)");
		return 0;
	case RTIT_PT_CYC: need = RTIT_PT_CTL_CYC_EN; what = "CYCEn (SDM 33.4.2.14)"; break;
	case RTIT_PT_MTC: need = RTIT_PT_CTL_MTC_EN; what = "MTCEn (SDM 33.4.2.12)"; break;
	case RTIT_PT_TSC: need = RTIT_PT_CTL_TSC_EN; what = "TSCEn (SDM 33.4.2.11)"; break;
	case RTIT_PT_TMA:
		need = RTIT_PT_CTL_MTC_EN | RTIT_PT_CTL_TSC_EN;
		what = "MTCEn and TSCEn (SDM 33.4.2.13)";
		break;
	case RTIT_PT_PIP: need = RTIT_PT_CTL_OS; what = "OS (SDM 33.4.2.7)"; break;
	case RTIT_PT_PTW:
		need = RTIT_PT_CTL_PTW_EN | (p->u.ptw.ip ? RTIT_PT_CTL_FUP_ON_PTW : 0);
		what = p->u.ptw.ip ? "PTWEn and FUPonPTW (SDM 33.4.2.21)" : "PTWEn (SDM 33.4.2.21)";
		break;
	case RTIT_PT_EXSTOP: case RTIT_PT_MWAIT: case RTIT_PT_PWRE: case RTIT_PT_PWRX:
		need = RTIT_PT_CTL_PWR_EVT_EN;
		what = "PwrEvtEn (SDM 33.4.2.22-25)";
		break;
	case RTIT_PT_CFE: case RTIT_PT_EVD:
		need = RTIT_PT_CTL_EVENT_EN;
		what = "EventEn (SDM 33.4.2.29-30)";
		break;
	case RTIT_PT_TRACESTOP:
		/* 33.2.5.3, 33.4.2.9: only a TraceStop range (ADDRn_CFG =
		 * 2) sends it (D195) */
		for (unsigned n = 0; n < 4; n++)
			if (addr_cfg(ctl, n) == RTIT_PT_ADDR_STOP)
				return 0;
		return flow_fail(d, RTIT_ERR_BAD_CONTEXT, it->offset,
				 "TraceStop, which IA32_RTIT_CTL rules out: no ADDRn_CFG is 2, a"
				 " TraceStop range (SDM 33.2.5.3, 33.4.2.9) (IA32_RTIT_CTL 0x%" PRIx64 ")",
				 ctl);
	default:
		return 0;
	}
	if ((ctl & need) == need)
		return 0;
	return flow_fail(d, RTIT_ERR_BAD_CONTEXT, it->offset,
			 "%s, which IA32_RTIT_CTL rules out: it needs %s (IA32_RTIT_CTL 0x%" PRIx64 ")",
			 rtit_pkt_name(p->type), what, ctl);
}

/* Whether the walk, standing at d->ip with no packet of the stream before
 * a PSB left to use, can be at @to when the PSB went out: the instructions
 * from d->ip to @to need no packet (33.3.7: the PSB+ FUP is the IP of the
 * next instruction; every packet before the PSB, a TNT too (D21), has
 * been used).  1: it can, 0: it cannot (a branch that needs a packet, or
 * code the image lacks, comes first), -1: too far to tell. */
static int psb_reaches(struct rtit_flow_dec *d, uint64_t to)
{
	const struct ic_ent *e;
	uint64_t ip = d->ip;

	for (int k = 0; k < 4096; k++) {
		if (ip == to)
			return 1;
		if (ic_get(d, ip, &e) < 0)
			return 0;
		if (e->flags & IC_UD)
			return 0;	/* only its #UD's FUP leaves it (D225) */
		switch (e->cls) {
		case RTIT_IC_DIRECT_JMP: case RTIT_IC_DIRECT_CALL:
			ip = e->target;
			break;
		case RTIT_IC_OTHER: case RTIT_IC_MOV_CR3: case RTIT_IC_MOV_CR0: case RTIT_IC_WRMSR:
		case RTIT_IC_RDMSR: case RTIT_IC_HLT: case RTIT_IC_PTWRITE: case RTIT_IC_MWAIT:
		case RTIT_IC_XBEGIN: case RTIT_IC_XEND:
			ip += e->len;
			break;
		default:	/* a branch that needs a TNT bit or a TIP */
			return 0;
		}
	}
	return -1;
}

/* A PSB+ status packet while the walk is tracing (33.3.7): its FUP's IP
 * (@fup) or its MODE.Exec's mode (@mode_bits, with @fup NO_IP) must agree
 * with where the walk stands; else the error "bad status update" at
 * @off (D82).  Not checked while TNT bits are pending (the walk has not
 * used the packets before the PSB yet). */
static int psb_status_check(struct rtit_flow_dec *d, uint64_t off, uint64_t fup,
			    uint8_t mode_bits)
{
	if (d->tnt_n)
		return 0;
	if (fup == NO_IP) {
		if (mode_same(d, mode_bits))
			return 0;
		return flow_fail(d, RTIT_ERR_BAD_CONTEXT, off,
				 "bad status update: PSB+ MODE.Exec says %u-bit code, the walk"
				 " decodes %u-bit code at 0x%" PRIx64, mode_of(mode_bits),
				 d->tmpl.mode, d->ip);
	}
	if (psb_reaches(d, fup) != 0)
		return 0;
	return flow_fail(d, RTIT_ERR_BAD_CONTEXT, off,
			 "bad status update: the PSB+ FUP says 0x%" PRIx64 ", which the walk"
			 " at 0x%" PRIx64 " cannot reach without a packet", fup, d->ip);
}

/* Besides pt_peek's own returns, what peek_fup tells it: the FUP is not
 * significant (read on), or it is to be put in view as any packet is. */
enum { PK_SKIP = 2, PK_VIEW = 3 };

/* A FUP read by pt_peek: status in a PSB+, a PEBS record's, one bound to
 * a packet before it, a MODE.Exec's, or a FUP of its own (PK_VIEW).
 * Returns PK_SKIP, PK_VIEW or as pt_peek. */
static int peek_fup(struct rtit_flow_dec *d, const struct rtit_pktdec_item *it)
{
	int r;

	if (d->in_psb) {
		if (d->state == ST_ENABLED) {
			/* status (33.3.7): it must agree with the walk */
			if (it->ip_status == 0 &&
			    (r = psb_status_check(d, it->offset, it->ip, 0)) < 0)
				return r;
			return PK_SKIP;
		}
		return flow_set_la(d, it, true);
	}
	if (d->pebs_fup) {
		/* a BEP's: the walk takes the record where the
		 * FUP says; while it is not walking there is no
		 * flow to put it in (D55) */
		d->pebs_fup = false;
		if (d->state != ST_ENABLED)
			return PK_SKIP;
		r = flow_set_la(d, it, false);
		d->la.pebs_fup = true;
		return r;
	}
	if (d->bound_fup) {
		/* an EXSTOP's, PTW's or CFE's: an instruction's IP, for a
		 * PTW the PTWRITE's (Table 33-40: "The IP of the PTWRITE
		 * will be provided by a following FUP"; D137) */
		const struct ic_ent *e;
		d->bound_fup = false;
		if (it->ip_status == 0 && ic_get(d, it->ip, &e) < 0)
			return flow_fail(d, RTIT_ERR_NOMAP, it->offset,
					 "the FUP an IP bit binds names 0x%" PRIx64 ", where the"
					 " image has no instruction", it->ip);
		if (it->ip_status == 0 && d->bound_ptw && e->cls != RTIT_IC_PTWRITE)
			return flow_fail(d, RTIT_ERR_BAD_CONTEXT, it->offset,
					 "the FUP of a PTW names 0x%" PRIx64 ", a %s, not a PTWRITE"
					 " (SDM 33.4.2.21)", it->ip, rtit_insn_class_name(e->cls));
		if (it->ip_status == 0 && d->bound_exstop && d->state == ST_ENABLED) {
			/* "the IP of the oldest instruction that has not yet
			 * completed" (33.4.2.22): the walk goes on to it,
			 * with no packet's instruction before (D202) */
			r = flow_set_la(d, it, false);
			d->la.exstop_fup = true;
			return r;
		}
		return PK_SKIP;
	}
	if (d->mode_fup) {
		/* MODE.Exec, FUP(CLIP): the walk applies it there */
		d->mode_fup = false;
		r = flow_set_la(d, it, false);
		d->la.if_fup = true;
		return r;
	}
	return PK_VIEW;
}

/* EVD packets bind to the CFE that follows (SDM 33.4.2.30: "an EVD is never
 * generated without a CFE"; D84): a page-fault address (CR2) to a CFE.INTR
 * of vector 14 (#PF), a VMX exit qualification or reason to a CFE.VMEXIT or
 * VMEXIT_INTR (Table 33-59 cases 6, 13, 14); other types are reserved
 * (Table 33-51).  @cfe: the CFE that came (NULL: another packet did).
 * 0, or the error at the first EVD. */
static int evd_check(struct rtit_flow_dec *d, const struct rtit_packet *cfe)
{
	int bad = -1;
	if (!d->evd_pend)
		return 0;
	bool intr14 = cfe && cfe->u.cfe.type == rtit_pt_cfe_intr && cfe->u.cfe.vector == 14;
	bool vmexit = cfe && (cfe->u.cfe.type == rtit_pt_cfe_vmexit ||
			      cfe->u.cfe.type == rtit_pt_cfe_vmexit_intr);
	if (d->evd_pend & 0x80)
		bad = 0x80;
	else if ((d->evd_pend & (1u << rtit_pt_evd_pfa)) && !intr14)
		bad = rtit_pt_evd_pfa;
	else if ((d->evd_pend & (1u << rtit_pt_evd_vmxq)) && !vmexit)
		bad = rtit_pt_evd_vmxq;
	else if ((d->evd_pend & (1u << rtit_pt_evd_vmxr)) && !vmexit)
		bad = rtit_pt_evd_vmxr;
	d->evd_pend = 0;
	if (bad < 0)
		return 0;
	if (bad == 0x80)
		return flow_fail(d, RTIT_ERR_BAD_PACKET, d->evd_off,
				 "an EVD of a reserved type (SDM Table 33-51)");
	if (!cfe)
		return flow_fail(d, RTIT_ERR_BAD_CONTEXT, d->evd_off,
				 "an EVD not followed by its CFE (SDM 33.4.2.30)");
	return flow_fail(d, RTIT_ERR_BAD_CONTEXT, d->evd_off,
			 "an EVD of type %d does not belong to the CFE of type %u (vector %u)"
			 " that follows (SDM Tables 33-50, 33-51)", bad, cfe->u.cfe.type,
			 cfe->u.cfe.vector);
}

/* A MODE.Exec read by pt_peek: PK_VIEW (put in view: a mode change
 * while tracing), PK_SKIP (taken), or an error.  While tracing, it
 * belongs to the TIP of a far transfer ahead (Table 33-55 cases 10/12):
 * applied there; one that keeps the mode changes RFLAGS.IF (EventEn) at
 * that TIP or, when a FUP follows, at a CLI, STI or POPF there (Table
 * 33-59 case 22). */
static int peek_mode_exec(struct rtit_flow_dec *d, const struct rtit_pktdec_item *it)
{
	const struct rtit_packet *p = &it->pkt;
	bool seen = d->mode_seen;
	int r;

	d->mode_seen = true;
	if (d->state == ST_ENABLED && !d->in_psb) {
		if (!mode_same(d, p->u.mode.bits))
			return PK_VIEW;
		/* that keeps the mode of the last one: only EventEn sends
		 * one (an RFLAGS.IF change), or a TIP.PGE comes next
		 * (33.4.2.8 Generation Scenario; D137); after an OVF or at
		 * the start the last one may be lost */
		if (!d->cfg.event_trace && seen && !pge_ahead(d))
			return flow_fail(d, RTIT_ERR_BAD_CONTEXT, it->offset,
					 "MODE.Exec that changes no mode bit while tracing,"
					 " without EventEn (SDM 33.4.2.8)");
		d->if_pend = (p->u.mode.bits & rtit_pt_mode_exec_if) ? 1 : 0;
		d->mode_fup = true;
		return PK_SKIP;
	}
	if (d->state == ST_ENABLED &&
	    (r = psb_status_check(d, it->offset, NO_IP, p->u.mode.bits)) < 0)
		return r;
	apply_mode(d, p->u.mode.bits);
	return PK_SKIP;
}

/* Erratum SKD007 (D109): a CYC whose first byte says more follow, cut
 * there by an OVF, reads as a 2-byte CYC ending in the OVF's 0x02 and a
 * 1-byte CYC 0xF3.  With the workaround that pair is the OVF (as libipt's:
 * a 2-byte CYC whose second byte is 0x02, then 0xF3), at the CYC's offset
 * + 1; the cut CYC says nothing.  Otherwise the packet after it is kept for
 * the next call.  0 or < 0. */
static int skd007(struct rtit_flow_dec *d, struct rtit_pktdec_item *it)
{
	struct rtit_pktdec_item nx;

	if (!workaround(d, RTIT_PT_SKD007) || !skd007_first(it))
		return 0;
	int r = flow_next_packet(d, &nx);
	if (r <= 0)
		return r;
	if (skd007_second(&nx)) {
		memset(&it->pkt, 0, sizeof(it->pkt));
		it->pkt.type = RTIT_PT_OVF;
		it->pkt.size = 2;
		it->offset++;
		return 0;
	}
	d->stash = nx;
	d->have_stash = true;
	return 0;
}

/* Brings the next significant packet into view: TNT, TIP, TIP.PGE,
 * TIP.PGD, a FUP that is not status, OVF, TraceStop, and PIP and MODE.Exec
 * while tracing (they belong to a MOV CR3 or a far transfer ahead).  1: in view,
 * 0: the end of the stream, < 0: an error. */
/* The packets pt_peek reads that never go in view: time (CYC, TSC, MTC,
 * TMA), PSB+ bounds, MODE.TSX, the IP bits of EXSTOP, PTW and CFE, EVD.
 * Their state is updated here.  PK_SKIP when @it was one, 0 when it is
 * for pt_peek's own switch, < 0 on an error. */
static int peek_state(struct rtit_flow_dec *d, const struct rtit_pktdec_item *it)
{
	const struct rtit_packet *p = &it->pkt;
	int r;

	switch (p->type) {
	case RTIT_PT_CYC:
		d->t_cyc += p->u.cyc.value;	/* 33.4.2.14 */
		d->cyc_adj = true;
		return PK_SKIP;
	case RTIT_PT_TSC:
		/* 33.4.2.11; the ART then (33.8.3.1), for MTCs */
		d->t_tsc = p->u.tsc;
		d->t_tsc_valid = true;
		d->t_art = (uint64_t)((unsigned __int128)d->t_tsc * d->cfg.art_den /
				      d->cfg.art_num);
		return PK_SKIP;
	case RTIT_PT_MTC:
		pt_mtc(d, p->u.mtc.ctc);
		return PK_SKIP;
	case RTIT_PT_TMA:
		skl168_tma(d, p);
		return PK_SKIP;
	case RTIT_PT_PSB:
		/* the walk looks for a packet with TNT bits pending
		 * (a deferred TIP, 33.4.2.3): a PSB forces the TNT
		 * and the TIPs deferred behind it out before it, so
		 * nothing the walk wants lies past it (D153) */
		if (d->state == ST_ENABLED && d->tnt_n)
			return flow_fail(d, RTIT_ERR_BAD_CONTEXT, it->offset,
					 "PSB with %u TNT bits still waiting for their"
					 " branches at 0x%" PRIx64 " (SDM 33.4.2.3: the TNT"
					 " goes out before it)", d->tnt_n, d->ip);
		d->evd_pend = 0;
		d->in_psb = true;
		d->psb_tsx = d->psb_ctx = false;
		d->bound_fup = false;
		d->pebs_in = false;
		d->pebs_fup = false;
		d->last_off = it->offset;
		return PK_SKIP;
	case RTIT_PT_PSBEND:
		d->in_psb = false;
		/* with PacketEn (its FUP) or a PIP, ContextEn is 1, and
		 * BranchEn is for a trace the walk follows: the PSB+
		 * holds a MODE.TSX (33.3.7), which the encoder sends
		 * whenever InTX = 1 (D43); none says InTX = 0 */
		if (d->state == ST_ENABLED || d->psb_ctx) {
			if (!d->psb_tsx)
				d->intx = false;
			d->intx_known = true;
		}
		return PK_SKIP;
	case RTIT_PT_MODE_TSX:
		d->intx = p->u.mode.bits & rtit_pt_mode_tsx_intx;
		d->intx_known = true;
		if (d->in_psb)
			d->psb_tsx = true;
		/* while tracing, a FUP follows and the walk binds the
		 * two (Table 33-27); else InTX is all it says */
		if (!d->in_psb && d->state == ST_ENABLED) {
			d->tsx_pending = true;
			d->tsx_bits = p->u.mode.bits;
		}
		return PK_SKIP;
	case RTIT_PT_EXSTOP:
		if (p->u.ip_bit)	/* Table 33-57 case 5 */
			d->bound_fup = true;
		d->bound_ptw = false;
		d->bound_exstop = true;
		return PK_SKIP;
	case RTIT_PT_PTW:
		if (p->u.ptw.ip)	/* FUPonPTW, Table 33-58 */
			d->bound_fup = true;
		d->bound_ptw = true;
		d->bound_exstop = false;
		return PK_SKIP;
	case RTIT_PT_CFE:
		if (d->evd_pend && (r = evd_check(d, p)) < 0)
			return r;
		if (p->u.cfe.ip)	/* Table 33-59 */
			d->bound_fup = true;
		d->bound_ptw = false;
		d->bound_exstop = false;
		d->cfe_type = p->u.cfe.type;
		d->cfe_vec = p->u.cfe.vector;
		d->cfe_fresh = true;
		/* an interrupt, exception or AEX with PacketEn sends its
		 * FUP (Table 33-55 cases 11-13, Table 33-56 case 4) after
		 * the CFE (Table 33-59 cases 3-6, 19): D190 */
		d->cfe_intr_due = p->u.cfe.type == rtit_pt_cfe_intr && d->state == ST_ENABLED &&
				  !d->in_psb && !d->cfg.events_only;
		return PK_SKIP;
	case RTIT_PT_EVD:
		if (!d->evd_pend)
			d->evd_off = it->offset;
		d->evd_pend |= p->u.evd.type <= rtit_pt_evd_vmxr ?
				(uint8_t)(1u << p->u.evd.type) : 0x80;
		/* a VM exit's reason and qualification: the exit's
		 * record takes them (either order, D48) */
		if (p->u.evd.type == rtit_pt_evd_vmxq) {
			d->evd_vmxq = p->u.evd.payload;
			d->evd_seen |= 1;
		} else if (p->u.evd.type == rtit_pt_evd_vmxr) {
			d->evd_vmxr = p->u.evd.payload;
			d->evd_seen |= 2;
		}
		return PK_SKIP;
	default:
		return 0;
	}
}

static int pt_peek(struct rtit_flow_dec *d)
{
	struct rtit_pktdec_item it;

	while (!d->have_la) {
		int r = flow_next_packet(d, &it);
		if (r <= 0)
			return r;
		if ((r = skd007(d, &it)) < 0)
			return r;
		const struct rtit_packet *p = &it.pkt;
		if ((r = pt_packet_allowed(d, &it)) < 0)
			return r;
		/* a CYC gives the time of the CYC-eligible packet right
		 * after it (33.3.6); one before a CYC or another packet is
		 * stand-alone (D49) */
		bool adj = d->cyc_adj && cyc_eligible(p->type);
		if (p->type != RTIT_PT_CYC)
			d->cyc_adj = false;
		if ((r = peek_state(d, &it)) < 0)
			return r;
		if (r == PK_SKIP)
			continue;
		switch (p->type) {
		case RTIT_PT_MODE_EXEC:
			if (d->state == ST_ENABLED && !d->in_psb) {
				d->mode_ip_due = true;
				d->mode_ip_off = it.offset;
			}
			if ((r = peek_mode_exec(d, &it)) < 0)
				return r;
			if (r == PK_VIEW)
				break;
			continue;
		case RTIT_PT_BBP: case RTIT_PT_BIP: case RTIT_PT_BEP:
			if ((r = pebs_block(d, p, it.offset)) < 0)
				return r;
			continue;
		case RTIT_PT_PIP:
			if (d->state == ST_ENABLED && !d->in_psb)
				break;
			if (d->in_psb)
				d->psb_ctx = true;	/* ContextEn = 1 (33.3.7) */
			apply_pip(d, p);
			continue;
		case RTIT_PT_FUP:
			if ((r = peek_fup(d, &it)) == PK_SKIP)
				continue;
			if (r != PK_VIEW)
				return r;
			d->cfe_intr_due = false;	/* the event's FUP */
			break;
		case RTIT_PT_OVF:
			/* packets were lost: a PSBEND, an IP bit's FUP, a
			 * CFE, a MODE.Exec; it ends a block (33.4.1.1) */
			d->mode_seen = false;
			d->evd_pend = 0;
			d->in_psb = false;
			d->bound_fup = false;
			d->pebs_in = false;
			d->pebs_fup = false;
			forget_if(d);
			d->tsx_pending = false;
			d->cfe_fresh = false;
			d->cfe_intr_due = false;
			break;
		case RTIT_PT_TNT8: case RTIT_PT_TNT64: case RTIT_PT_TIP: case RTIT_PT_TIP_PGE:
		case RTIT_PT_TIP_PGD: case RTIT_PT_TRACESTOP:
			d->cfe_fresh = false;
			if (d->cfe_intr_due && d->state == ST_ENABLED)
				return flow_fail(d, RTIT_ERR_BAD_CONTEXT, it.offset,
						 "a %s after a CFE.INTR with no FUP of the event's"
						 " between (SDM Table 33-59 cases 3-6, 19; Table 33-55"
						 " cases 11-13)", rtit_pkt_name(p->type));
			d->cfe_intr_due = false;
			break;
		default:
			continue;	/* power, VMCS, PAD, MNT */
		}
		if (d->evd_pend && (r = evd_check(d, NULL)) < 0)
			return r;
		r = flow_set_la(d, &it, false);
		/* 33.3.6: a CYC right before a packet is that packet's time
		 * (a TNT's: its first branch's, 33.3.6.2) */
		d->la.exact = adj;
		return r;
	}
	return 1;
}

/* pt_peek for the TNT fast path (flow_block.c, D157). */
int flow_pt_peek(struct rtit_flow_dec *d)
{
	return pt_peek(d);
}

static inline bool is_type(const struct rtit_flow_dec *d, enum rtit_pkt_type t)
{
	return d->have_la && d->la.pkt.type == t;
}

/* Erratum APL12 (D106): the FUP after the OVF at @off (consumed) came
 * while FilterEn=0 when the next packet that says is a TIP.PGE or a
 * TraceStop (tracing was off), as libipt's workaround reads it: then the
 * gap ends with tracing off (true).  The packets are looked at where they
 * were read ahead, not taken (D178).  Passed over: what ContextEn alone
 * sends while FilterEn=0 (CFE and EVD, the FUP a CFE's, EXSTOP's or
 * BEP's IP bit binds, PEBS blocks, power packets, PIP, VMCS, MODE.Exec,
 * MODE.TSX; SDM 33.2.5, the Dependencies rows of 33.4.2), timing, padding
 * and a PSB+ with no FUP.  Any other packet (a FUP of its own, TNT, TIP,
 * TIP.PGD, PTW, OVF) says tracing is on, and so does a ring full of
 * packets passed over; a trace that ends first says nothing, and is
 * read as off (no instruction claimed).  A MODE.TSX outside PSB+ whose
 * next packet but timing and padding is neither a FUP nor an OVF (which
 * may have lost the FUP) says off too: with
 * PacketEn its FUP(CLIP) follows it, with FilterEn=0 it goes alone (Table
 * 33-55 cases 19-21, D43; D210).  Only when the answer is yes are those
 * packets applied as while tracing is off (pt_peek). */
static bool apl12_fup(struct rtit_flow_dec *d, uint64_t off)
{
	bool bound = false;	/* an IP bit binds the next FUP */
	bool tsx = false;	/* a MODE.TSX outside PSB+ just now */
	bool psb = false;	/* in PSB+ */

	if (!workaround(d, RTIT_PT_APL12))
		return false;
	for (unsigned k = 0;; k++) {
		const struct rtit_pktdec_item *it = flow_ahead_peek(d, k);
		if (!it && flow_ahead_ended(d))
			break;	/* the trace ends first: nothing is claimed */
		if (!it)
			return false;	/* not settled: tracing is on */
		const struct rtit_packet *p = &it->pkt;
		if (pt_timing_or_pad(p->type))
			continue;
		if (tsx && p->type != RTIT_PT_FUP && p->type != RTIT_PT_OVF)
			break;	/* a MODE.TSX alone: FilterEn=0 (its FUP, or an
				 * OVF that lost it, says on, below) */
		switch (p->type) {
		case RTIT_PT_TIP_PGE: case RTIT_PT_TRACESTOP:
			break;
		case RTIT_PT_FUP:
			if (!bound)
				return false;
			bound = false;
			continue;
		case RTIT_PT_CFE:
			bound = p->u.cfe.ip;
			continue;
		case RTIT_PT_EXSTOP: case RTIT_PT_BEP:
			bound = p->u.ip_bit;
			continue;
		case RTIT_PT_PSB: case RTIT_PT_PSBEND:
			psb = p->type == RTIT_PT_PSB;
			continue;
		case RTIT_PT_MODE_TSX:
			tsx = !psb;
			continue;
		case RTIT_PT_PIP: case RTIT_PT_VMCS: case RTIT_PT_MODE_EXEC: case RTIT_PT_EVD:
		case RTIT_PT_BBP: case RTIT_PT_BIP: case RTIT_PT_MWAIT: case RTIT_PT_PWRE:
		case RTIT_PT_PWRX:
			continue;
		default:
			return false;
		}
		break;
	}
	if (pt_peek(d) < 0)
		return false;
	flow_note(d, RTIT_FLOW_N_OVERFLOW, off, NO_IP, 0);
	d->after_stop = false;
	return true;
}

/* The OVF in view (33.3.8): the gap; then a FUP gives the first IP traced
 * again, else tracing was off when the overflow resolved (a TIP.PGE will
 * say where it resumes). */
static int overflow(struct rtit_flow_dec *d)
{
	uint64_t off = d->la.offset;
	int r;

	consume(d);
	flow_drop_uncertain(d, off);
	d->st.overflows++;
	d->st.gaps++;
	d->tnt_n = 0;
	d->bound_fup = false;
	d->in_vmm = false;
	/* a CFE before the OVF announced an event whose FUP and TIP were
	 * lost; the next event sends its own (D209) */
	d->cfe_type = 0;
	d->evd_seen = 0;
	d->vmx_known = false;		/* a VM entry or exit may be lost (D218) */
	d->tsx_pending = false;
	d->intx_known = false;		/* a MODE.TSX may be lost (D43) */
	d->encl = FLOW_ENCL_UNKNOWN;	/* an enclave entry may be lost */
	rtit_pt_calls_clear(&d->rs);
	/* Until a FUP says where tracing resumed, PacketEn is not known
	 * (33.3.8): what comes before it (a MODE.TSX with FilterEn=0, a
	 * MODE.Exec before a TIP.PGE, D25) is read as while tracing is off. */
	d->state = ST_DISABLED;
	if ((r = pt_peek(d)) < 0)
		return r;
	if (r && is_type(d, RTIT_PT_FUP)) {
		uint64_t ip = d->la.ip;
		consume(d);
		if (apl12_fup(d, off))
			return 0;
		flow_note(d, RTIT_FLOW_N_OVERFLOW, off, ip, 0);
		/* tracing from here: a MODE.TSX that follows has its FUP, a
		 * MODE.Exec waits for its FUP or TIP */
		flow_enable_at(d, ip);
		d->fup_start = true;
		if ((r = pt_peek(d)) < 0)
			return r;
		if (r && is_type(d, RTIT_PT_TIP_PGD)) {
			/* TraceEn cleared during the overflow: OVF, FUP,
			 * TIP.PGD() (Table 33-56 case 3) */
			uint64_t pgd_off = d->la.offset;
			consume(d);
			flow_disable(d, RTIT_FLOW_N_DISABLE, pgd_off, ip);
		}
		return 0;
	}
	/* erratum APL11 (D106): OVF, TIP.PGD(): TraceEn or ContextEn
	 * cleared as the overflow resolved; tracing is off after it */
	if (r && is_type(d, RTIT_PT_TIP_PGD) && workaround(d, RTIT_PT_APL11))
		consume(d);
	/* erratum SKD010 (D108): OVF, TIP: the FUP was dropped and tracing
	 * is on; the walk resumes at the TIP's target, as libipt's
	 * workaround (the instruction that sent it is not known) */
	if (r && is_type(d, RTIT_PT_TIP) && d->la.ip_status != 1 && workaround(d, RTIT_PT_SKD010)) {
		uint64_t ip = d->la.ip;
		consume(d);
		flow_note(d, RTIT_FLOW_N_OVERFLOW, off, ip, 0);
		flow_enable_at(d, ip);
		return 0;
	}
	flow_note(d, RTIT_FLOW_N_OVERFLOW, off, NO_IP, 0);
	d->state = ST_DISABLED;
	d->after_stop = false;
	return 0;
}

enum { TIP_OK = 0, TIP_LOST = 1, TIP_EOS = 2, TIP_PGE = 3 };

/* Needs the TIP or TIP.PGD of @what: its IP in *ip (NO_IP for a TIP.PGD
 * with the IP suppressed), *pgd when it is a TIP.PGD.  PIP and MODE.Exec
 * before it are applied (a far transfer changing CR3 or the mode, Table
 * 33-55 cases 9/10/12).
 * TIP_LOST: an OVF is in view instead; TIP_EOS: the stream ended. */
static int take_tip(struct rtit_flow_dec *d, const char *what, uint64_t *ip, bool *pgd)
{
	int r;

	*pgd = false;
	d->vmx_change = 0;
	for (;;) {
		if ((r = pt_peek(d)) < 0)
			return r;
		if (!r)
			return TIP_EOS;
		switch (d->la.pkt.type) {
		case RTIT_PT_PIP:
			d->cyc_adj = d->la.exact;	/* the TIP's CYC came first */
			/* NR is set by VM entry, cleared by VM exit (Table
			 * 33-53).  The simulator's interrupts and exceptions
			 * keep CR3: an event with a PIP(NR=0) is a VM exit. */
			d->vmx_change = d->la.pkt.u.pip.nr ? RTIT_EV_VMENTRY : RTIT_EV_VMEXIT;
			apply_pip(d, &d->la.pkt);
			consume(d);
			continue;
		case RTIT_PT_MODE_EXEC:
			d->cyc_adj = d->la.exact;
			apply_mode(d, d->la.pkt.u.mode.bits);
			consume(d);
			continue;
		case RTIT_PT_OVF:
			return TIP_LOST;
		case RTIT_PT_TIP_PGE:
			if (!d->pge_ok)
				goto other;
			*ip = d->la.ip;	/* left in view */
			return TIP_PGE;
		case RTIT_PT_TIP_PGD:
			*pgd = true;
			*ip = d->la.ip_status == 1 ? NO_IP : d->la.ip;
			consume(d);
			leave_if(d);
			return TIP_OK;
		case RTIT_PT_TIP:
			if (d->la.ip_status == 1)
				return flow_fail(d, RTIT_ERR_BAD_CONTEXT, d->la.offset,
						 "%s at 0x%" PRIx64 " meets a TIP with its IP"
						 " suppressed", what, d->ip);
			*ip = d->la.ip;
			consume(d);
			take_if(d);
			if ((r = pge_read_ahead(d)) < 0)
				return r;
			return TIP_OK;
		default:
		other:
			return flow_fail(d, RTIT_ERR_BAD_CONTEXT, d->la.offset,
					 "%s at 0x%" PRIx64 " needs a TIP; the next packet is %s",
					 what, d->ip, flow_la_name(d));
		}
	}
}

/* The instruction at the walk left tracing with a TIP.PGD (Table 33-56
 * cases 4, 6-8): its record, then the stop.  @to: the TIP.PGD's IP or
 * NO_IP. */
static int leave(struct rtit_flow_dec *d, const struct ic_ent *e, uint64_t off, uint64_t to,
		 uint8_t fl)
{
	uint8_t ann = 0;
	if (to == NO_IP) {
		ann = RTIT_FLOW_A_NEXT_UNKNOWN;
		if (e->cls == RTIT_IC_COND)
			fl = 0;		/* no TNT bit: the way is not known (33.4.2.5, D21) */
	}
	flow_insn_rec(d, e, to == NO_IP ? 0 : to, fl, ann);
	commit(d);
	rtit_pt_calls_clear(&d->rs);	/* PacketEn fell (33.4.2.2) */
	flow_disable(d, RTIT_FLOW_N_DISABLE, off, to);
	return 0;
}

/* An event that left the debug enclave the walk was in is an AEX (SDM
 * Vol. 3D 40.4; D52): its record, when @emitted, says so. */
static void sgx_on_event(struct rtit_flow_dec *d, bool emitted)
{
	if (d->encl != FLOW_ENCL_DEBUG)
		return;
	if (emitted)
		d->batch[d->nbatch - 1].cls = RTIT_EV_AEX;
	d->encl = FLOW_ENCL_OUT;
}

/* An ENCLU that executed: outside an enclave it was an EENTER or ERESUME
 * (EEXIT there is #GP), inside one an EEXIT (EENTER/ERESUME there are
 * #GP); @optout: it sent TIP.PGD() alone (Table 33-56 case 6). */
static void sgx_on_enclu(struct rtit_flow_dec *d, bool optout)
{
	if (optout)
		d->encl = FLOW_ENCL_OPTOUT;
	else if (d->encl == FLOW_ENCL_OUT || d->encl == FLOW_ENCL_START)
		d->encl = FLOW_ENCL_DEBUG;
	else if (d->encl == FLOW_ENCL_DEBUG)
		d->encl = FLOW_ENCL_OUT;
}

/* Tracing (re)starts: out of an opt-out enclave (Table 33-56 case 5), or
 * at the trace's start, the walk is outside; after any other gap it does
 * not know (D52). */
static void sgx_on_enable(struct rtit_flow_dec *d)
{
	d->encl = d->encl == FLOW_ENCL_OPTOUT || d->encl == FLOW_ENCL_START ? FLOW_ENCL_OUT :
		  FLOW_ENCL_UNKNOWN;
}

/* An event from @at that resumes at @at with no PIP (OS=0, or the exit
 * concealed): the simulator's VM exit, whose VMM is not simulated
 * (docs/sim.md), enters the guest again where it left.  Only where VMX
 * non-root operation may be: a PIP said NR=1, none said, or the sideband
 * says non-root is concealed (NR=0 there).  Known VMX root, it is an
 * ordinary event to a handler at its own IP, as a nested NMI at its
 * handler's first instruction (D215). */
static bool same_ip_vmexit(const struct rtit_flow_dec *d, uint64_t at, uint64_t to)
{
	return to == at && !d->vmx_change &&
	       (d->nonroot || !d->vmx_known || d->cfg.pt_vmx_conceal_nonroot);
}

/* An asynchronous transfer from @at to @to (FUP, [PIP], [MODE.Exec], TIP):
 * its record; the walk goes on at @to. */
static void async_event(struct rtit_flow_dec *d, uint64_t at, uint64_t to)
{
	flow_emit_event(d, at, to);
	sgx_on_event(d, true);
	/* FUP, PIP(NR=0), TIP (Table 33-53); or, with no PIP (OS=0), an event
	 * that resumes where it happened: the simulator's VM exit, whose VMM
	 * is not simulated (docs/sim.md), enters the guest again there */
	if (d->vmx_change == RTIT_EV_VMEXIT || same_ip_vmexit(d, at, to)) {
		struct rtit_sim_rec *x = &d->batch[d->nbatch - 1];
		x->cls = RTIT_EV_VMEXIT;
		d->in_vmm = true;
		if (d->evd_seen == 3) {
			/* the exit-information fields, as the truth has them */
			x->msr = (uint32_t)d->evd_vmxr;
			x->value = d->evd_vmxq;
			x->vector = rtit_vmx_exit_has_vector(x->msr) ? d->cfe_vec : 0;
			x->pad0 |= RTIT_FLOW_A_VMX_INFO;
		}
	}
	d->evd_seen = 0;
	d->ip = to;
}

/* The last record the walk emitted becomes an event of kind @ev. */
static void event_is(struct rtit_flow_dec *d, uint8_t ev, uint8_t vec)
{
	struct rtit_sim_rec *r = &d->batch[d->nbatch - 1];
	r->cls = ev;
	r->vector = vec;
	r->flags &= (uint8_t)~RTIT_SIM_F_FAULT;
}

/* FUP(NLIP @at), PIP, [CFE.SIPI], PIP, [MODE.Exec], TIP.PGE (in view): an
 * INIT on an AP, which then waited for the SIPI that starts it at the
 * TIP.PGE's IP (Table 33-55 cases 23/24, D58).  Returns as flow_pt_walk. */
static int init_ap_here(struct rtit_flow_dec *d, uint64_t at, uint64_t to)
{
	/* a SIPI starts the AP at 000VV000H, VV its vector (SDM Vol. 3A
	 * 9.4.4, "MP Initialization"; D58): no other TIP.PGE IP is one
	 * (D142) */
	if (to & ~(uint64_t)0xff000)
		return flow_fail(d, RTIT_ERR_BAD_CONTEXT, d->la.offset,
				 "TIP.PGE 0x%" PRIx64 " after the FUP 0x%" PRIx64 " of an INIT:"
				 " a SIPI starts at 000VV000H (SDM Vol. 3A 9.4.4)", to, at);
	flow_emit_event(d, at, 0);
	event_is(d, RTIT_EV_INIT, 1);
	flow_emit_event(d, to, to);
	event_is(d, RTIT_EV_SIPI, d->cfe_type == rtit_pt_cfe_sipi ? d->cfe_vec : 0);
	d->cfe_type = 0;
	take_if(d);
	flow_drop_uncertain(d, d->la.offset);
	flow_enable_la(d, RTIT_FLOW_N_ENABLE);
	return 1;
}

/* Whether the CFE of type @cfe (0: none) before the FUP of an event from
 * @at to @to (a FUP + TIP the walk takes as asynchronous: an interrupt or
 * exception, or a VM exit when a PIP(NR=0) came or it resumes at @at) is
 * that event's (SDM Table 33-50: INTR, VMEXIT, VMEXIT_INTR, SMI; D142). */
static bool async_cfe_ok(const struct rtit_flow_dec *d, uint8_t cfe, uint64_t at, uint64_t to)
{
	bool vmexit = d->vmx_change == RTIT_EV_VMEXIT || same_ip_vmexit(d, at, to);

	if (cfe == rtit_pt_cfe_vmexit || cfe == rtit_pt_cfe_vmexit_intr)
		return true;
	/* "Conceal VMX in PT" on VM exits: no PIP, CFE or EVD (Table
	 * 33-52, D179); the exit is the event whose TIP is where the guest
	 * left (the simulator's VMM re-enters there) */
	if (!cfe && vmexit && !d->vmx_change && d->cfg.pt_vmx_conceal_exit)
		return true;
	return !vmexit && (cfe == rtit_pt_cfe_intr || cfe == rtit_pt_cfe_smi);
}

/* A CFE.INTR names the vector the event delivers (SDM 33.4.2.29, Table
 * 33-50; nested events and those that cause a VM exit send none): with
 * the IDT known, the event's TIP goes to that vector's handler (D191).
 * 0, or the error at the TIP (@off). */
static int cfe_handler_check(struct rtit_flow_dec *d, uint8_t cfe, uint8_t vec, uint64_t to,
			     uint64_t off)
{
	if (cfe != rtit_pt_cfe_intr || !d->cfg.handler_of)
		return 0;
	uint64_t h = d->cfg.handler_of(d->cfg.mem_opaque, vec);
	if (h == NO_IP || h == to)
		return 0;
	return flow_fail(d, RTIT_ERR_BAD_CONTEXT, off,
			 "the event of a CFE.INTR of vector %u goes to 0x%" PRIx64 ", but that"
			 " vector's handler is at 0x%" PRIx64 " (SDM 33.4.2.29, Table 33-50)",
			 vec, to, h);
}

/* A FUP at the walk's IP with no bits pending: an event here (or TraceEn
 * cleared here).  Returns as flow_pt_walk. */
/* FUP(the IP of the VMLAUNCH/VMRESUME @e), TIP.PGD(): erratum SKD022's
 * FUP before the disable of a VM entry that cleared TraceEn (D149), or an
 * asynchronous disable (an SMI, another agent's WRMSR) right before it
 * (Table 33-56 cases 3, 9): the packets are the same.  With the
 * workaround (libipt's reading) the instruction retired and its entry
 * disabled tracing; without it the decoder cannot tell: an error, never
 * either flow (D150).  The FUP and TIP.PGD are consumed.  Returns 0 or
 * < 0. */
static __attribute__((noinline)) int skd022_here(struct rtit_flow_dec *d, const struct ic_ent *e,
						 uint64_t at)
{
	if (!workaround(d, RTIT_PT_SKD022))
		return flow_fail(d, RTIT_ERR_BAD_CONTEXT, d->last_off,
				 "FUP 0x%" PRIx64 ", TIP.PGD() at a VMLAUNCH/VMRESUME: an asynchronous"
				 " disable before it (Table 33-56 cases 3, 9) or its VM entry's disable"
				 " with erratum SKD022's FUP; the trace cannot tell (--pt-errata skd022"
				 " takes the erratum, D150)", at);
	d->cfe_type = 0;
	d->in_vmm = false;
	d->nonroot = d->vmx_known = true;
	return leave(d, e, d->last_off, NO_IP, RTIT_SIM_F_TAKEN);
}

static int event_here(struct rtit_flow_dec *d, const struct ic_ent *e)
{
	uint64_t at = d->la.ip, off = d->la.offset, to = 0;
	bool pgd;
	uint8_t cfe = d->cfe_type;	/* the CFE before the FUP, if any */
	int r;

	consume(d);
	d->pge_ok = true;
	r = take_tip(d, "the event (FUP)", &to, &pgd);
	d->pge_ok = false;
	if (r < 0)
		return r;	/* the walk to the FUP's IP is not established (D197) */
	if (r != TIP_OK || pgd)
		commit(d);
	/* else the event's record commits it (flow_emit_event), after the
	 * checks of the TIP below (D142, D191): a TIP those reject does not
	 * establish the walk to the FUP either (D197) */
	if (r == TIP_PGE)
		return init_ap_here(d, at, to);
	if (r == TIP_OK && !pgd && d->cfe_type == rtit_pt_cfe_uintr) {
		/* CFE.UINTR, FUP(NLIP), TIP(UIHANDLER): a user interrupt
		 * (Table 33-55 case 26, D58); without EventEn the walk names
		 * no kind (an event whose target is no IDT handler) */
		flow_emit_event(d, at, to);
		event_is(d, RTIT_EV_UINTR, d->cfe_vec);
		d->cfe_type = 0;
		d->ip = to;
		return 1;
	}
	if (r == TIP_OK && !pgd && (d->cfe_type == rtit_pt_cfe_init ||
				    (to == RTIT_SIM_RESET_LIP && d->tmpl.mode == RTIT_SIM_MODE_16))) {
		/* FUP(NLIP), PIP, MODE.Exec, TIP(ResetLIP): INIT on the BSP
		 * (Table 33-55 case 22; the CFE says so with EventEn; else
		 * the reset vector in real mode does, D58) */
		flow_emit_event(d, at, to);
		event_is(d, RTIT_EV_INIT, 0);
		d->cfe_type = 0;
		d->ip = to;
		return 1;
	}
	if (r != TIP_OK)	/* which event, if any (an SMI sends FUP, TIP.PGD), is lost */
		return r == TIP_EOS ? 2 : overflow(d);
	if (pgd && to == NO_IP && (e->flags & IC_VMENTRY))
		return skd022_here(d, e, at);
	if (pgd) {
		d->cfe_type = 0;
		/* FUP + TIP.PGD(): a WRMSR clearing TraceEn (Table 33-56 case
		 * 3), an SMI (case 9), or an event into code not traced
		 * (ContextEn cleared): which event is not known.  With an IP,
		 * an event whose handler is outside the filter (case 4). */
		if (to != NO_IP && e->cls != RTIT_IC_WRMSR)
			flow_emit_event(d, at, to);
		sgx_on_event(d, to != NO_IP && e->cls != RTIT_IC_WRMSR);
		rtit_pt_calls_clear(&d->rs);
		flow_disable(d, RTIT_FLOW_N_DISABLE, off, to != NO_IP ? to : at);
		return 0;
	}
	if (d->cfg.event_trace && d->cfg.pt_ctl_fixed && !async_cfe_ok(d, cfe, at, to))
		/* EventEn=1 for the whole trace: an interrupt, exception or
		 * VM exit sends its CFE before the FUP (SDM 33.4.2.29, Table
		 * 33-59 cases 3-6, 13-14; D142) */
		return flow_fail(d, RTIT_ERR_BAD_CONTEXT, off,
				 "an event at 0x%" PRIx64 " (FUP, TIP 0x%" PRIx64 ") after %s, with"
				 " EventEn=1 (SDM 33.4.2.29, Table 33-59)", at, to,
				 cfe ? "a CFE of another kind" : "no CFE");
	if ((r = cfe_handler_check(d, cfe, d->cfe_vec, to, d->last_off)) < 0)
		return r;
	d->cfe_type = 0;	/* used: the next event needs its own */
	async_event(d, at, to);
	return 1;
}

/* A PIP with NR set while the walk is in VMX root operation, with no bits
 * pending: a VM entry here (Table 33-53: PIP(NR=1), [VMCS], TIP to the
 * guest).  Returns as flow_pt_walk. */
static int vm_entry_here(struct rtit_flow_dec *d)
{
	uint64_t at = d->ip, to = 0;
	bool pgd;
	int r;

	commit(d);
	r = take_tip(d, "the VM entry (PIP.NR=1)", &to, &pgd);
	if (r < 0)
		return r;
	if (r != TIP_OK)
		return r == TIP_EOS ? 2 : overflow(d);
	/* a CFE.VMENTRY before it was this entry's (Table 33-59): used, so
	 * a later PIP(NR=1) is not taken for a VM entry on its word (D206) */
	if (d->cfe_type == rtit_pt_cfe_vmentry)
		d->cfe_type = 0;
	if (pgd) {
		d->in_vmm = false;
		rtit_pt_calls_clear(&d->rs);
		flow_disable(d, RTIT_FLOW_N_DISABLE, d->last_off, to != NO_IP ? to : at);
		return 0;
	}
	flow_emit_event(d, at, to);
	d->batch[d->nbatch - 1].cls = RTIT_EV_VMENTRY;
	d->in_vmm = false;
	d->nonroot = d->vmx_known = true;	/* also with no PIP (concealed) */
	d->ip = to;
	return 1;
}

/* The FUP of a MODE.TSX in view at the walk's IP, no bits pending
 * (Table 33-55 cases 19-21).  Begin or commit: the XBEGIN or XEND here
 * changed InTX, its record gets the TX flag.  Abort: the instruction here
 * did not complete; the TIP that follows is the fallback (a TIP.PGD when
 * it is not traced).  Returns as flow_pt_walk (1: go on). */
static int tsx_here(struct rtit_flow_dec *d, const struct ic_ent *e)
{
	uint64_t at = d->la.ip, off = d->la.offset, to = 0;
	bool abort = d->tsx_bits & rtit_pt_mode_tsx_abrt, begin = d->tsx_bits & rtit_pt_mode_tsx_intx;
	bool pgd;
	int r;

	d->tsx_pending = false;
	if (!abort) {
		/* RTM's XBEGIN/XEND, or HLE's XACQUIRE/XRELEASE-prefixed
		 * instruction (33.2.9.1, Table 33-10) */
		bool hle = e->flags & (begin ? IC_XACQ : IC_XREL);
		if (e->cls != (begin ? RTIT_IC_XBEGIN : RTIT_IC_XEND) && !hle)
			return flow_fail(d, RTIT_ERR_BAD_CONTEXT, off,
					 "MODE.TSX(InTX=%d) binds to the FUP at 0x%" PRIx64
					 ", a %s, not an %s", begin, at, rtit_insn_class_name(e->cls),
					 begin ? "XBEGIN or XACQUIRE" : "XEND or XRELEASE");
		consume(d);
		flow_insn_rec(d, e, at + e->len, RTIT_SIM_F_TX, 0);
		commit(d);
		d->ip = at + e->len;
		return 1;
	}
	consume(d);
	commit(d);
	r = take_tip(d, "the TSX abort (MODE.TSX, FUP)", &to, &pgd);
	if (r < 0)
		return r;
	if (r != TIP_OK)
		return r == TIP_EOS ? 2 : overflow(d);
	flow_emit_event(d, at, to == NO_IP ? 0 : to);
	struct rtit_sim_rec *ab = &d->batch[d->nbatch - 1];
	ab->cls = RTIT_EV_TSX_ABORT;	/* not an interrupt at the fallback */
	ab->vector = 0;
	ab->flags &= (uint8_t)~RTIT_SIM_F_FAULT;
	if (to == NO_IP)
		ab->pad0 |= RTIT_FLOW_A_NEXT_UNKNOWN;
	if (pgd) {
		/* the fallback is not traced (Table 33-14: TIP.PGD) */
		rtit_pt_calls_clear(&d->rs);
		flow_disable(d, RTIT_FLOW_N_DISABLE, d->last_off, to != NO_IP ? to : at);
		return 0;
	}
	d->ip = to;
	return 1;
}

/* FUP(IP of an INT n) + TIP(@to): the INT n itself (Table 33-55 case 13)
 * or an event that came before it executed?  A VM exit (PIP.NR=0, or back
 * to the same IP) or a CFE of another type or vector (Event Trace, Table
 * 33-59) says so; else the IDT, when known: the INT's handler is not at
 * @to, or @to is the handler of another vector.  Without any of these,
 * the INT n (docs/decisions.md D30). */
static bool int_is_event(struct rtit_flow_dec *d, const struct ic_ent *e, uint64_t to,
			 bool cfe_other)
{
	if (cfe_other || d->vmx_change == RTIT_EV_VMEXIT || to == d->ip)
		return true;
	if (e->flags & IC_INTO)
		return false;
	if (d->cfg.handler_of) {
		uint64_t h = d->cfg.handler_of(d->cfg.mem_opaque, e->vec);
		if (h != NO_IP && h != to)
			return true;
	}
	if (d->cfg.vector_of) {
		int v = d->cfg.vector_of(d->cfg.mem_opaque, to);
		if (v >= 0 && v != e->vec)
			return true;
	}
	return false;
}

/* The FUP of a PEBS record at the walk's IP, no bits pending: its
 * record (RTIT_EV_PEBS as the simulator writes it: the eventing IP, the
 * groups, the digest of the items). */
static void pebs_here(struct rtit_flow_dec *d)
{
	uint64_t at = d->la.ip;

	consume(d);
	flow_emit_event(d, at, at);
	struct rtit_sim_rec *r = &d->batch[d->nbatch - 1];
	r->cls = RTIT_EV_PEBS;
	r->flags &= (uint8_t)~RTIT_SIM_F_FAULT;
	r->vector = d->pebs_groups;
	r->value = d->pebs_eip;
	r->msr = (uint32_t)d->pebs_h;
	commit(d);
}

/* FUP(IP of an ENCLU) + TIP(@to): the EENTER, ERESUME or EEXIT itself
 * (Table 33-55 case 17) or an event before it executed (an AEX, an
 * exception, an interrupt)?  A CFE.INTR with the FUP (the caller's; no
 * CFE type is an ENCLU's, Table 33-50), a VM exit, or a @to that is the
 * handler of a vector says so (D52). */
static bool enclu_is_event(struct rtit_flow_dec *d, uint64_t to)
{
	if (d->vmx_change == RTIT_EV_VMEXIT || to == d->ip)
		return true;
	if (d->cfg.vector_of && d->cfg.vector_of(d->cfg.mem_opaque, to) >= 0)
		return true;
	/* a handler of several vectors has no one vector: any of them */
	for (unsigned v = 0; d->cfg.handler_of && v < 256; v++)
		if (d->cfg.handler_of(d->cfg.mem_opaque, v) == to)
			return true;
	return false;
}

/* Besides flow_pt_walk's own returns (0, 2, < 0), what one of its steps
 * tells the loop: go round again (the state or the IP changed), or go on
 * with the instruction at d->ip. */
enum { W_AGAIN = 3, W_INSN = 4 };

/* The instruction at @ip decoded into *t outside the cache (the caller may
 * hold an entry), for a question the walk asks ahead of itself: a failure
 * is no error of the walk, so the error state stays as it was.  0 or < 0. */
static int ic_peek(struct rtit_flow_dec *d, uint64_t ip, struct ic_ent *t)
{
	int code = d->err_code;
	uint64_t off = d->err_off, eip = d->err_ip;

	memset(t, 0, sizeof(*t));
	int r = flow_ic_fill(d, ip | d->ic_tag, t);
	if (d->err_code != code) {
		d->err_code = code;
		d->err_off = off;
		d->err_ip = eip;
		if (!code)
			d->msg[0] = 0;
	}
	return r;
}

/* Whether a VMLAUNCH/VMRESUME is ahead of the walk on a path that needs
 * no packet (plain instructions and direct JMPs, 64 at most): a PIP(NR=1)
 * in view in VMX root operation is then its VM entry's (Table 33-53), not
 * an entry where the walk is (D147).  The instructions are decoded
 * outside the cache; a decode error there is not the walk's. */
static __attribute__((noinline)) bool vmentry_ahead(struct rtit_flow_dec *d)
{
	uint64_t ip = d->ip;
	struct ic_ent t;
	bool found = false;

	for (unsigned n = 0; n < 64 && !found; n++) {
		if (ic_peek(d, ip, &t) < 0 || !t.len)
			break;
		found = (t.flags & IC_VMENTRY) != 0;
		if (t.cls == RTIT_IC_DIRECT_JMP)
			ip = t.target;
		else if (t.cls == RTIT_IC_OTHER && !(t.flags & ~IC_VMENTRY))
			ip += t.len;
		else
			break;
	}
	return found;
}

/* Whether the walk from its IP may reach, needing no packet (plain
 * instructions, direct JMPs and CALLs, 64 at most), an instruction that
 * sends a PIP (MOV CR3, MOV CR0, a far transfer, a VM entry) or one it
 * cannot decode: false when it meets a branch that needs a TNT or TIP
 * first (SDM 33.4.2.1: a PIP waits for the bits before it), so a PIP in
 * view is none of the walk's (D223).  Decoded outside the cache. */
static __attribute__((noinline)) bool pip_reachable(struct rtit_flow_dec *d)
{
	uint64_t ip = d->ip;
	struct ic_ent t;

	for (unsigned n = 0; n < 64; n++) {
		if (ic_peek(d, ip, &t) < 0 || !t.len || (t.flags & (IC_VMENTRY | IC_END | IC_UD)))
			return true;
		switch (t.cls) {
		case RTIT_IC_COND: case RTIT_IC_RET:
		case RTIT_IC_INDIRECT_JMP: case RTIT_IC_INDIRECT_CALL:
			return false;
		case RTIT_IC_DIRECT_JMP: case RTIT_IC_DIRECT_CALL:
			if (t.flags & IC_LEAVES)
				return true;
			ip = t.target;
			break;
		case RTIT_IC_OTHER:
			ip += t.len;
			break;
		default:
			return true;
		}
	}
	return true;
}

/* PIP(NR=1) in view where tracing (re)started, no instruction walked since
 * (an overflow's FUP, D170): the packets after it, past VMCS, MODE.Exec and
 * timing, are a TIP to this very IP.  That is the VM entry of a VM exit the
 * overflow lost, back where the guest left (Table 33-53: PIP(NR=1),
 * [VMCS], [MODE.Exec], TIP(guest IP); the simulator's VMM re-enters at the
 * exit's IP, docs/sim.md): no guest instruction sends a PIP and a TIP to
 * its own IP (D205).  Nothing is consumed. */
static __attribute__((noinline)) bool vmentry_back_here(struct rtit_flow_dec *d)
{
	for (unsigned k = 0; k < 16; k++) {
		const struct rtit_pktdec_item *it = flow_ahead_peek(d, k);
		if (!it)
			return false;
		if (pt_timing_or_pad(it->pkt.type) || it->pkt.type == RTIT_PT_VMCS ||
		    it->pkt.type == RTIT_PT_MODE_EXEC)
			continue;
		if (it->pkt.type == RTIT_PT_OVF && k)
			return !pip_reachable(d);
		return it->pkt.type == RTIT_PT_TIP && it->ip_status == 0 && it->ip == d->ip;
	}
	return false;
}

/* At a VMLAUNCH/VMRESUME, no bits pending: whether the packet in view is
 * its VM entry's, a PIP(NR=1), or a TIP after a VM exit (Table 33-53), or
 * a TIP.PGD: the entry cleared TraceEn (its MSR-load area) or ContextEn
 * (D148; Table 33-54: even a failing entry sends a TIP, so a TIP.PGD in
 * view is this instruction's).  Else the entry failed (VMfail: no
 * transfer, on at the NLIP). */
static bool pt_vmentry_due(const struct rtit_flow_dec *d)
{
	return d->have_la && ((d->la.pkt.type == RTIT_PT_PIP && d->la.pkt.u.pip.nr) ||
			      (d->la.pkt.type == RTIT_PT_TIP && d->in_vmm) ||
			      d->la.pkt.type == RTIT_PT_TIP_PGD);
}

/* The TIP of the instruction @e was lost in an overflow (33.3.8), or the
 * trace ended (take_tip's @r): its record with the next IP unknown, then
 * the overflow's own packets.  Returns 2 at the end, W_AGAIN, or < 0. */
static int tip_lost(struct rtit_flow_dec *d, const struct ic_ent *e, uint8_t fl, int r)
{
	flow_insn_rec(d, e, 0, fl, RTIT_FLOW_A_NEXT_UNKNOWN);
	commit(d);
	if (r == TIP_EOS)
		return 2;
	if ((r = overflow(d)) < 0)
		return r;
	return W_AGAIN;
}

/* A VMLAUNCH/VMRESUME whose VM entry is in view: under BranchEn a far
 * transfer, [PIP(NR=1)], [VMCS], TIP(guest IP), no FUP (Table 33-53; D84).
 * Its record is made here.  Returns W_AGAIN or as flow_pt_walk. */
static int pt_walk_vmentry(struct rtit_flow_dec *d, const struct ic_ent *e)
{
	uint64_t next = 0;
	bool pgd;
	int r = take_tip(d, "the VM entry (VMLAUNCH/VMRESUME)", &next, &pgd);

	if (r < 0)
		return r;
	if (r != TIP_OK)	/* lost in an overflow, or the end */
		return tip_lost(d, e, RTIT_SIM_F_TAKEN, r);
	d->in_vmm = false;
	d->nonroot = d->vmx_known = true;
	if (pgd)
		return leave(d, e, d->last_off, next, RTIT_SIM_F_TAKEN);
	flow_insn_rec(d, e, next, RTIT_SIM_F_TAKEN, 0);
	commit_tip(d);
	d->ip = next;
	return W_AGAIN;
}

/* The FUP in view with no bits pending, before the instruction @e at
 * d->ip: a PEBS record, an RFLAGS.IF change, a TSX begin, commit or abort,
 * or an event here; or one for an instruction ahead (W_INSN).  Returns
 * W_AGAIN, W_INSN or as flow_pt_walk. */
static int pt_walk_fup(struct rtit_flow_dec *d, const struct ic_ent *e)
{
	const struct la *p = &d->la;
	int r;

	if (p->pebs_fup) {
		/* BEP(IP=1), FUP(NLIP): the PEBS record
		 * written after the instruction before
		 * its IP; walk on to it (D55) */
		if (p->ip != d->ip)
			return W_INSN;
		pebs_here(d);
		return W_AGAIN;
	}
	if (p->if_fup) {
		/* MODE.Exec, FUP(CLIP): the CLI, STI or
		 * POPF here changed RFLAGS.IF (Table
		 * 33-59 case 22); walk on to it */
		if (p->ip != d->ip)
			return W_INSN;
		take_if(d);
		consume(d);
		return W_AGAIN;
	}
	if (p->exstop_fup) {
		/* EXSTOP(IP=1), FUP: execution stopped
		 * before the instruction here (33.4.2.22,
		 * D202); walk on to it */
		if (p->ip != d->ip)
			return W_INSN;
		consume(d);
		return W_AGAIN;
	}
	if (d->tsx_pending) {
		if (p->ip != d->ip)
			return W_INSN;	/* at an XBEGIN/XEND ahead */
		if ((r = tsx_here(d, e)) <= 0 || r == 2)
			return r;
		return W_AGAIN;
	}
	if (p->ip != d->ip || e->cls == RTIT_IC_INT || e->cls == RTIT_IC_ENCLU)
		return W_INSN;
	if ((r = event_here(d, e)) <= 0 || r == 2)
		return r;
	return W_AGAIN;
}

/* The packet in view with no bits pending, before the instruction @e at
 * d->ip: an enable, an overflow, a stop, an event or a VM entry here, or
 * none of these (W_INSN: the instruction runs).  Returns W_AGAIN, W_INSN
 * or as flow_pt_walk. */
static inline int pt_walk_packet(struct rtit_flow_dec *d, const struct ic_ent *e)
{
	int r;

	if ((r = pt_peek(d)) < 0)
		return r;
	if (!r)
		return flow_walk_end(d);
	const struct la *p = &d->la;
	/* Table 33-27: while tracing, a MODE.TSX immediately
	 * precedes its FUP (an OVF may have lost the FUP) */
	if (d->tsx_pending && p->pkt.type != RTIT_PT_FUP && p->pkt.type != RTIT_PT_OVF)
		return flow_fail(d, RTIT_ERR_BAD_CONTEXT, p->offset,
				 "a MODE.TSX is not followed by its FUP; the next"
				 " packet is %s", flow_la_name(d));
	switch (p->pkt.type) {
	case RTIT_PT_TIP_PGE:
		if (d->fup_start) {
			/* no packet used since the FUP that started the
			 * walk: that FUP came while tracing was off (errata
			 * APL12, BDM70 without their workarounds, D106) */
			sgx_on_enable(d);
			d->cfe_type = 0;	/* as flow_pt_idle (D211) */
			take_if(d);
			flow_drop_uncertain(d, p->offset);
			flow_enable_la(d, RTIT_FLOW_N_ENABLE);
			return W_AGAIN;
		}
		/* a TIP.PGE says PacketEn went from 0 to 1 (SDM 33.4.2.4);
		 * the walk is tracing and used a packet since it started;
		 * no TIP.PGD, OVF or disable came (libipt's decoders
		 * reject it too, D142) */
		return flow_fail(d, RTIT_ERR_BAD_CONTEXT, p->offset,
				 "TIP.PGE while tracing is enabled at 0x%" PRIx64 ", with no"
				 " TIP.PGD before it (SDM 33.4.2.4)", d->ip);
	case RTIT_PT_OVF:
		if ((r = overflow(d)) < 0)
			return r;
		return W_AGAIN;
	case RTIT_PT_TRACESTOP:
		return flow_trace_stop(d);
	case RTIT_PT_FUP:
		return pt_walk_fup(d, e);
	case RTIT_PT_PIP:
		/* PIP(NR=1), no bits pending: a VM entry here
		 * from VMX root operation, when a PIP said root;
		 * else one only when a CFE.VMENTRY says so (its
		 * VM exit was lost in an overflow), or a MOV
		 * CR3's, here or ahead (the PSB+'s PIP may have
		 * been lost too); after a VM exit, in VMX root
		 * operation, a MOV CR3 sends NR=0 (SDM 33.4.2.5),
		 * so NR=1 is the VM entry (D208) */
		if (!p->pkt.u.pip.nr || (e->cls == RTIT_IC_MOV_CR3 && !d->in_vmm) ||
		    (e->flags & IC_VMENTRY) ||
		    (!d->in_vmm && (d->nonroot || !d->vmx_known) &&
		     d->cfe_type != rtit_pt_cfe_vmentry &&
		     !(d->ip == d->enable_ip && vmentry_back_here(d))) ||
		    (!d->in_vmm && vmentry_ahead(d)))
			break;
		/* from VMX root operation with no VM exit walked: only a
		 * VMLAUNCH/VMRESUME enters a VM (SDM Vol. 2B VMLAUNCH/
		 * VMRESUME), and this is none; the simulator's VM entry
		 * event follows its VM exit with no instruction between
		 * (docs/sim.md), which an overflow or the trace's start
		 * may hide only when no instruction was walked since
		 * tracing (re)started (D170) */
		if (!d->in_vmm && d->cfe_type != rtit_pt_cfe_vmentry && d->ip != d->enable_ip)
			return flow_fail(d, RTIT_ERR_BAD_CONTEXT, p->offset,
					 "PIP(NR=1) at 0x%" PRIx64 " in VMX root operation with no VM"
					 " exit since, at an instruction that is not a VMLAUNCH or"
					 " VMRESUME: nothing enters a VM here (SDM Table 33-53)", d->ip);
		if ((r = vm_entry_here(d)) <= 0 || r == 2)
			return r;
		return W_AGAIN;
	case RTIT_PT_TIP:
		/* after a VM exit, the TIP of the VM entry (at a
		 * VMLAUNCH/VMRESUME, the instruction's: pt_walk_vmentry);
		 * or, where tracing just (re)started, a MODE.Exec and a TIP
		 * back to this IP before a near instruction, which sends no
		 * MODE.Exec: the VM entry of a VM exit lost before it, the
		 * simulator's two at the same IP (docs/sim.md; D175) */
		if ((e->flags & IC_VMENTRY) ||
		    (!d->in_vmm && !(d->mode_fup && d->ip == d->enable_ip && p->ip == d->ip &&
				     e->cls <= RTIT_IC_RET)))
			break;
		if ((r = vm_entry_here(d)) <= 0 || r == 2)
			return r;
		return W_AGAIN;
	default:
		break;
	}
	return W_INSN;
}

/* A MOV CR3 or MOV CR0: *used when its packet is.  Returns W_INSN or, when
 * it left tracing, as flow_pt_walk. */
static int pt_walk_mov_cr(struct rtit_flow_dec *d, const struct ic_ent *e, bool *used)
{
	int r;

	/* its PIP (Table 33-55 case 14), or the TIP.PGD() of a
	 * CR3 that clears ContextEn (Table 33-56 case 7) */
	if (!d->tnt_n && is_type(d, RTIT_PT_PIP)) {
		apply_pip(d, &d->la.pkt);
		consume(d);
		*used = true;
		if ((r = pt_peek(d)) < 0)
			return r;
	}
	/* a PIP means ContextEn stayed 1 (it needs it): the
	 * TIP.PGD is then a later instruction's */
	if (!*used && !d->tnt_n && is_type(d, RTIT_PT_TIP_PGD) &&
	    d->la.ip_status == 1) {
		uint64_t off = d->la.offset;
		consume(d);
		return leave(d, e, off, NO_IP, 0);
	}
	return W_INSN;
}

/* A TIP.PGD(@to) in view at the conditional branch @e, no TNT bit
 * pending: it binds to the branch, "the next branch that would normally
 * generate a TIP or TNT" (SDM 33.4.2.5, Application; libipt binds it to a
 * conditional branch too; D84), whose way its IP tells: the target is
 * taken, the NLIP not taken.  Any other IP is an error. */
static int pt_cond_pgd(struct rtit_flow_dec *d, const struct ic_ent *e, uint64_t off, uint64_t to)
{
	uint64_t nlip = (d->ip + e->len) & flow_pt_ip_mask(d);

	if (to != e->target && to != nlip)
		return flow_fail(d, RTIT_ERR_BAD_CONTEXT, off,
				 "the TIP.PGD 0x%" PRIx64 " at the conditional branch at 0x%" PRIx64
				 " is neither its target 0x%" PRIx64 " nor its NLIP", to, d->ip,
				 e->target);
	consume(d);
	return leave(d, e, off, to, to == e->target ? RTIT_SIM_F_TAKEN : 0);
}

/* A conditional branch (a TNT bit) or a near RET (a TNT bit when
 * compressed, else a TIP; a TIP.PGD for either when it left tracing):
 * where it goes in *next, *fl.  Returns W_INSN (the packet used), W_AGAIN
 * or as flow_pt_walk. */
static inline int pt_walk_cond_ret(struct rtit_flow_dec *d, const struct ic_ent *e,
				   uint64_t *next, uint8_t *fl, bool *tip)
{
	uint64_t to, off;
	bool pgd;
	int r;

	if (!d->tnt_n) {
		if ((r = pt_peek(d)) < 0)
			return r;
		if (!r)
			return flow_walk_end(d);
		switch (d->la.pkt.type) {
		case RTIT_PT_TNT8: case RTIT_PT_TNT64:
			if ((r = take_tnt(d)) < 0)
				return r;
			break;
		case RTIT_PT_TIP_PGD:
			off = d->la.offset;
			to = d->la.ip_status == 1 ? NO_IP : d->la.ip;
			if (e->cls == RTIT_IC_COND && to != NO_IP)
				return pt_cond_pgd(d, e, off, to);
			if (e->cls == RTIT_IC_COND && (r = cond_pgd_allowed(d, e, off)) < 0)
				return r;
			consume(d);
			return leave(d, e, off, to, RTIT_SIM_F_TAKEN);
		case RTIT_PT_OVF:
			if (e->cls == RTIT_IC_RET) {
				if ((r = overflow(d)) < 0)
					return r;
				return W_AGAIN;
			}
			break;
		default:
			break;
		}
		if (!d->tnt_n && e->cls == RTIT_IC_COND)
			return flow_fail(d, RTIT_ERR_BAD_CONTEXT, d->la.offset,
					 "the conditional branch at 0x%" PRIx64
					 " needs a TNT bit; the next packet is %s",
					 d->ip, flow_la_name(d));
	}
	if (d->tnt_n) {
		bool bit = (d->tnt_bits >> --d->tnt_n) & 1;
		if (e->cls == RTIT_IC_COND) {
			if (bit && (e->flags & IC_LEAVES))
				return flow_fail(d, RTIT_ERR_BAD_CONTEXT, d->last_off,
						 "a taken TNT bit for the conditional branch at 0x%" PRIx64
						 " to 0x%" PRIx64 ", outside every filter range: leaving"
						 " the range, a TIP.PGD replaces the bit (SDM 33.2.4,"
						 " 33.4.2.5)", d->ip, e->target);
			if (bit) {
				*next = e->target;
				*fl = RTIT_SIM_F_TAKEN;
			}
			return W_INSN;
		}
		/* a compressed RET (33.4.2.2): the popped NLIP */
		if (!bit)
			return flow_fail(d, RTIT_ERR_BAD_CONTEXT, d->last_off,
					 "the RET at 0x%" PRIx64 " meets a not-taken TNT bit",
					 d->ip);
		if (!flow_ret_compressed(d, next))
			return flow_fail(d, RTIT_ERR_BAD_CONTEXT, d->last_off,
					 "the RET at 0x%" PRIx64 " is compressed (TNT bit)"
					 " but the RET-compression stack is empty", d->ip);
		*fl = RTIT_SIM_F_TAKEN;
		return W_INSN;
	}
	/* an uncompressed RET: a TIP; it pops all the same */
	if ((r = take_tip(d, "the RET", next, &pgd)) != TIP_OK) {
		if (r == TIP_EOS)
			return flow_walk_end(d);
		if (r < 0 || (r = overflow(d)) < 0)
			return r;
		return W_AGAIN;
	}
	{
		uint64_t ignored;
		flow_ret_compressed(d, &ignored);
	}
	if (pgd)
		return leave(d, e, d->last_off, *next, RTIT_SIM_F_TAKEN);
	*fl = RTIT_SIM_F_TAKEN;
	*tip = true;
	return W_INSN;
}

/* Erratum BDM64 (D110): in a transaction, the TIP of an indirect JMP or
 * CALL right before a TSX abort (MODE.TSX with TXAbort, then its FUP) may
 * carry a wrong target.  When the abort's FUP IP cannot be reached from
 * *next without a packet (256 instructions at most, plain ones and the
 * direct JMPs and CALLs they lead to, which send none, Table 33-1, D204;
 * any other branch or an address that is not code ends the search), the
 * branch went there (as libipt's workaround reads it): *next becomes that
 * IP.  The instructions are decoded outside the cache (the caller holds an
 * entry).  0 or < 0. */
static int bdm64(struct rtit_flow_dec *d, uint64_t *next)
{
	struct ic_ent t;
	uint64_t ip = *next;
	int r;

	/* TNT bits left after the TIP are for branches after this one, its
	 * TIP deferred behind them (33.4.2.3): the abort does not follow it
	 * directly (D216) */
	if (!workaround(d, RTIT_PT_BDM64) || !d->intx || d->tnt_n)
		return 0;
	/* the packet after the TIP is read where the branch went: a PSB+
	 * there checks its FUP against that IP (33.3.7), not the branch's
	 * (D226) */
	uint64_t at = d->ip;
	d->ip = ip;
	r = pt_peek(d);
	d->ip = at;
	if (r <= 0)
		return r;
	if (!d->tsx_pending || !(d->tsx_bits & rtit_pt_mode_tsx_abrt) ||
	    !is_type(d, RTIT_PT_FUP) || d->la.ip_status != 0)
		return 0;
	for (unsigned n = 0; n < 256; n++) {
		if (ip == d->la.ip)
			return 0;
		if (ic_peek(d, ip, &t) < 0)
			break;
		/* a direct JMP or CALL sends no packet: the walk follows it
		 * there too (D204) */
		if (t.len && (t.cls == RTIT_IC_DIRECT_JMP || t.cls == RTIT_IC_DIRECT_CALL)) {
			ip = t.target;
			continue;
		}
		/* any other branch ends the line (MOV CR3 to XEND are not
		 * branches: Table 33-1) */
		if (!t.len || (t.flags & IC_UD) || (t.cls != RTIT_IC_OTHER &&
			       (t.cls < RTIT_IC_MOV_CR3 || t.cls > RTIT_IC_XEND)))
			break;
		ip += t.len;
	}
	*next = d->la.ip;
	return 0;
}

/* An indirect JMP or CALL: a TIP (or TIP.PGD), its target in *next.
 * Returns W_INSN (the packet used), W_AGAIN or as flow_pt_walk. */
static inline int pt_walk_indirect(struct rtit_flow_dec *d, const struct ic_ent *e,
				   uint64_t nlip, uint64_t *next)
{
	bool pgd;
	int r;

	/* with TNT bits pending, a deferred TIP (33.4.2.3):
	 * the TIPs follow the TNT whose bits span them, in
	 * order, so it is the next packet all the same.  With
	 * none pending, one TNT may come first: the TIP was
	 * deferred behind the bits of the branches after this
	 * one (D84, as libipt's pt_qry_indirect_branch).  That TNT's
	 * read-ahead check (D142) is take_tip's after the TIP: no record
	 * is made between them, and a packet other than the TIP right
	 * after the TNT is the first fault (D163) */
	if (!d->tnt_n) {
		if ((r = pt_peek(d)) < 0)
			return r;
		if (r && (is_type(d, RTIT_PT_TNT8) || is_type(d, RTIT_PT_TNT64)))
			flow_pt_take_tnt(d);
	}
	if ((r = take_tip(d, e->cls == RTIT_IC_INDIRECT_JMP ? "the indirect JMP" :
			  "the indirect CALL", next, &pgd)) != TIP_OK) {
		if (r == TIP_EOS)
			return flow_walk_end(d);
		if (r < 0 || (r = overflow(d)) < 0)
			return r;
		return W_AGAIN;
	}
	if (pgd && d->tnt_n)
		/* a TIP is deferred only behind the bits of branches after
		 * it (33.4.2.3); after a TIP.PGD none is traced (D142) */
		return flow_fail(d, RTIT_ERR_BAD_CONTEXT, d->last_off,
				 "TIP.PGD at the %s at 0x%" PRIx64 " with %d TNT bits not used"
				 " (SDM 33.4.2.3, 33.4.2.5)", rtit_insn_class_name(e->cls), d->ip,
				 d->tnt_n);
	if (pgd)
		return leave(d, e, d->last_off, *next, RTIT_SIM_F_TAKEN);
	if ((r = bdm64(d, next)) < 0)
		return r;
	if (e->cls == RTIT_IC_INDIRECT_CALL)
		flow_on_call(d, nlip, false);
	return W_INSN;
}

/* A far transfer: [FUP(CLIP) for INT n], [PIP], [MODE.Exec], TIP or
 * TIP.PGD (Table 33-55 cases 8-13, Table 33-56).  Its record is made
 * here.  Returns W_AGAIN or as flow_pt_walk. */
static int pt_walk_far(struct rtit_flow_dec *d, const struct ic_ent *e, uint64_t nlip)
{
	uint64_t next = nlip;
	uint8_t fl;
	bool pgd;
	int r;

	if (d->tnt_n)
		return flow_fail(d, RTIT_ERR_BAD_CONTEXT, d->last_off,
				 "the %s at 0x%" PRIx64 " needs a TIP but %d TNT bits are"
				 " pending", rtit_insn_class_name(e->cls), d->ip, d->tnt_n);
	bool fup_here = false;
	if (e->cls == RTIT_IC_INT || e->cls == RTIT_IC_ENCLU) {
		if ((r = pt_peek(d)) < 0)
			return r;
		if (r && is_type(d, RTIT_PT_FUP) && d->la.ip == d->ip) {
			consume(d);
			fup_here = true;
		} else if (r && is_type(d, RTIT_PT_TIP)) {
			/* a software interrupt or an ENCLU leaf sends FUP(CLIP)
			 * + TIP (Table 33-55 cases 13, 17): a TIP alone is not
			 * this instruction's (D137) */
			return flow_fail(d, RTIT_ERR_BAD_CONTEXT, d->la.offset,
					 "the %s at 0x%" PRIx64 " needs FUP(0x%" PRIx64 ") + TIP"
					 " (SDM Table 33-55 cases 13, 17); the next packet is a TIP"
					 " with no FUP", rtit_insn_class_name(e->cls), d->ip, d->ip);
		}
	}
	bool cfe_other = d->cfe_type && (d->cfe_type != rtit_pt_cfe_intr ||
					 d->cfe_vec != e->vec);
	/* an AEX or interrupt here sent CFE.INTR before its FUP
	 * (Table 33-59 cases 4, 19) */
	bool enclu_event = e->cls == RTIT_IC_ENCLU && d->cfe_fresh &&
			   d->cfe_type == rtit_pt_cfe_intr;
	uint8_t cfe = d->cfe_type, cfe_vec = d->cfe_vec;
	d->cfe_type = 0;
	fl = RTIT_SIM_F_TAKEN;
	r = take_tip(d, "the far transfer", &next, &pgd);
	if (r < 0)
		return r;
	if (r != TIP_OK) {	/* lost in an overflow, or the end */
		leave_if(d);	/* RFLAGS.IF after it: only from a MODE.Exec */
		return tip_lost(d, e, fl, r);
	}
	if (pgd && fup_here && next == NO_IP) {
		/* FUP(IP) + TIP.PGD(): the INT n into code not
		 * traced, or an SMI or TraceEn cleared before it:
		 * the INT is not taken as executed (D30) */
		commit(d);
		rtit_pt_calls_clear(&d->rs);
		flow_disable(d, RTIT_FLOW_N_DISABLE, d->last_off, d->ip);
		return 0;
	}
	if (pgd && fup_here && next != NO_IP &&
	    (e->cls == RTIT_IC_ENCLU ? enclu_event || enclu_is_event(d, next) :
	     int_is_event(d, e, next, cfe_other))) {
		/* FUP + TIP.PGD(IP): an event ahead of the INT n or ENCLU
		 * whose handler is outside the filter (Table 33-56 case 4),
		 * as walk_event takes one (D174) */
		commit(d);
		flow_emit_event(d, d->ip, next);
		sgx_on_event(d, true);
		rtit_pt_calls_clear(&d->rs);
		flow_disable(d, RTIT_FLOW_N_DISABLE, d->last_off, next);
		return 0;
	}
	if (pgd && e->cls == RTIT_IC_ENCLU)
		sgx_on_enclu(d, next == NO_IP);
	if (pgd)
		return leave(d, e, d->last_off, next, fl);
	if (fup_here && (e->cls == RTIT_IC_ENCLU ?
			 enclu_event || enclu_is_event(d, next) :
			 int_is_event(d, e, next, cfe_other))) {
		/* an interrupt or exception ahead of the INT n,
		 * whose own FUP + TIP come later */
		if ((r = cfe_handler_check(d, cfe, cfe_vec, next, d->last_off)) < 0)
			return r;
		commit(d);
		async_event(d, d->ip, next);
		return W_AGAIN;
	}
	if ((e->flags & IC_INTO) && next == nlip)
		fl = 0;
	if (e->cls == RTIT_IC_ENCLU)
		sgx_on_enclu(d, false);
	flow_insn_rec(d, e, next, fl, 0);
	commit_tip(d);
	d->ip = next;
	return W_AGAIN;
}

/* Erratum SKL014 (D106): a TIP.PGD() in view at a direct JMP or CALL
 * whose target @to is outside every filter range (ADDRn_CFG = 1, SDM
 * Table 33-6) is the branch's, its target IP left out; as libipt, only
 * with the filter known (at least one range configured). */
static bool skl014_at(const struct rtit_flow_dec *d, uint64_t to)
{
	bool any = false;

	if (!workaround(d, RTIT_PT_SKL014))
		return false;
	for (unsigned n = 0; n < 4; n++) {
		if (addr_cfg(d->cfg.pt_ctl, n) != RTIT_PT_ADDR_FILTER)
			continue;
		any = true;
		if (to >= d->cfg.pt_addr_a[n] && to <= d->cfg.pt_addr_b[n])
			return false;
	}
	return any;
}

/* The walk stands where the image has no code (@r, from ic_get): an error,
 * unless the stream ends first: nothing then says that an instruction ran
 * there (a PSB+ FUP at the end of a trace names the next IP, SDM 33.3.7; D83).
 * Returns as flow_pt_walk. */
static int pt_walk_nomap(struct rtit_flow_dec *d, int r)
{
	if (r != -RTIT_ERR_NOMAP || d->tnt_n || d->have_la)
		return r;
	/* ic_get's error, reported unless the stream ends (a bad packet
	 * next would overwrite it) */
	char msg[sizeof(d->msg)];
	uint64_t off = d->err_off, ip = d->err_ip;
	memcpy(msg, d->msg, sizeof(msg));
	int p = pt_peek(d);
	if (p == 0)
		return flow_walk_end(d);
	memcpy(d->msg, msg, sizeof(msg));
	d->err_code = -r;
	d->err_off = off;
	d->err_ip = ip;
	return r;
}

/* No TNT bit pending, the packet in view (pt_walk_packet let the
 * instruction run) binds to none of the plain instructions ahead: a TNT,
 * a TIP.PGD, or a TIP outside a VMM (D97). */
static inline bool pt_run_quiet(const struct rtit_flow_dec *d)
{
	if (!d->have_la || d->tsx_pending)
		return false;
	switch (d->la.pkt.type) {
	case RTIT_PT_TNT8: case RTIT_PT_TNT64: case RTIT_PT_TIP_PGD:
		return true;
	case RTIT_PT_TIP:
		return !d->in_vmm;
	default:
		return false;
	}
}

int flow_pt_walk(struct rtit_flow_dec *d)
{
	const struct ic_ent *e;
	int r;

	while (d->state == ST_ENABLED) {
		flow_step_untimed(d);
		if ((r = ic_get(d, d->ip, &e)) < 0)
			return pt_walk_nomap(d, r);
		r = 0;
		if (d->tnt_n && !d->fenced && flow_pt_tnt_walk(d, e, &r)) {	/* D155 */
			if (r)
				return r;	/* D157 */
			continue;
		}
		if (!d->tnt_n && (r = pt_walk_packet(d, e)) != W_INSN) {
			if (r == W_AGAIN)
				continue;
			return r;
		}
		if (__builtin_expect(e->flags & IC_END, 0))
			return flow_end_reached(d);
		r = 0;
		if (!d->tnt_n && !d->fenced && (flow_pt_tnt_ready(d, false) || flow_pt_tip_ready(d)) &&
		    flow_pt_tnt_walk(d, e, &r)) {	/* D156 */
			if (r)
				return r;
			continue;
		}
		if (flow_run_ok(d, e, d->tnt_n || pt_run_quiet(d))) {
			flow_run(d, e);
			continue;
		}

		if (++d->walked > d->cfg.max_walk)
			return flow_fail(d, RTIT_ERR_BAD_CONTEXT, d->last_off,
					 "%" PRIu64 " instructions walked from 0x%" PRIx64
					 " without using a packet (next: %s)", d->walked, d->ip,
					 flow_la_name(d));

		uint64_t nlip = d->ip + e->len, next = nlip, off;
		uint8_t fl = 0;
		bool used = false, tip = false;

		r = W_INSN;
		switch (e->cls) {
		case RTIT_IC_MOV_CR3: case RTIT_IC_MOV_CR0:
			r = pt_walk_mov_cr(d, e, &used);
			break;
		case RTIT_IC_OTHER:
			if (e->flags & IC_UD)
				return flow_fail_ud(d);
			if ((e->flags & IC_VMENTRY) && !d->tnt_n && pt_vmentry_due(d))
				r = pt_walk_vmentry(d, e);
			break;
		case RTIT_IC_XBEGIN: case RTIT_IC_XEND:
			/* nested: no packet (case 18), so in a transaction;
			 * the outermost sends MODE.TSX and FUP (cases
			 * 19-20), and an XEND outside one faults (D171) */
			if (!d->tsx_pending && d->intx_known && !d->intx)
				return flow_fail(d, RTIT_ERR_BAD_CONTEXT, d->have_la ? d->la.offset : d->last_off,
						 "an %s at 0x%" PRIx64 " with no MODE.TSX, outside a"
						 " transaction (InTX = 0): the outermost XBEGIN or XEND"
						 " sends MODE.TSX and FUP (SDM Table 33-55 cases 18-20)",
						 e->cls == RTIT_IC_XBEGIN ? "XBEGIN" : "XEND", d->ip);
			break;
		case RTIT_IC_WRMSR: case RTIT_IC_RDMSR: case RTIT_IC_HLT:
		case RTIT_IC_PTWRITE: case RTIT_IC_MWAIT:
			break;
		case RTIT_IC_DIRECT_JMP: case RTIT_IC_DIRECT_CALL:
			next = e->target;
			fl = RTIT_SIM_F_TAKEN;
			if (e->flags & IC_ZLC)
				fl |= RTIT_SIM_F_ZERO_LEN_CALL;
			/* leaving the filter region: TIP.PGD(target), no TIP
			 * otherwise (Table 33-56 case 4) */
			if (!d->tnt_n && is_type(d, RTIT_PT_TIP_PGD) &&
			    ((d->la.ip_status == 0 && d->la.ip == next) ||
			     (d->la.ip_status == 1 && skl014_at(d, next)))) {
				off = d->la.offset;
				consume(d);
				return leave(d, e, off, next, fl);
			}
			if (e->flags & IC_LEAVES)
				return flow_fail(d, RTIT_ERR_BAD_CONTEXT,
						 d->have_la ? d->la.offset : d->last_off,
						 "the direct %s at 0x%" PRIx64 " to 0x%" PRIx64 ", outside"
						 " every filter range, with no TIP.PGD of that IP: a taken"
						 " branch out of the range clears FilterEn (SDM 33.2.4,"
						 " 33.4.2.5)", e->cls == RTIT_IC_DIRECT_CALL ? "CALL" : "JMP",
						 d->ip, next);
			if (e->cls == RTIT_IC_DIRECT_CALL)
				flow_on_call(d, nlip, e->flags & IC_ZLC);
			break;
		case RTIT_IC_COND:
		case RTIT_IC_RET:
			r = pt_walk_cond_ret(d, e, &next, &fl, &tip);
			used = true;
			break;
		case RTIT_IC_INDIRECT_JMP:
		case RTIT_IC_INDIRECT_CALL:
			r = pt_walk_indirect(d, e, nlip, &next);
			fl = RTIT_SIM_F_TAKEN;
			used = true;
			tip = true;
			break;
		default:	/* far transfers: the record is made there */
			r = pt_walk_far(d, e, nlip);
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
		d->ip = next;
	}
	return 0;
}

/* A PSB+ FUP at @off while tracing is off: PacketEn is 1 there (33.3.7),
 * the walk starts at @ip. */
static void psb_enable(struct rtit_flow_dec *d, uint64_t off, uint64_t ip, bool unsynced)
{
	if (unsynced)
		d->st.resyncs++;
	else
		d->st.enables++;
	sgx_on_enable(d);
	flow_note(d, unsynced ? RTIT_FLOW_N_RESYNC : RTIT_FLOW_N_ENABLE, off, ip, 0);
	flow_enable_at(d, ip);
	d->fup_start = true;
}

/* A PSB+ FUP held while tracing was off (erratum BDM70, D104, D106):
 * settled by the next packet (@r, from pt_peek).  A TIP.PGE makes the FUP
 * the erratum's: dropped with the workaround (as libipt does), else the
 * enable at its IP that the TIP.PGE restarts before any instruction.
 * Once the decoder knows tracing is off (it decoded a disable:
 * off_known), PacketEn rises only with a TIP.PGE (33.4.2.4) and a PSB+
 * has a FUP only with PacketEn 1 (33.3.7): any other packet is an error
 * at the FUP (D139).  At the end
 * of the stream, or unsynchronised, tracing is on at its IP.  1 when the
 * walk starts there, 0 when dropped, or the error. */
static int bdm70_settle(struct rtit_flow_dec *d, int r)
{
	d->bdm70_pend = false;
	if (r > 0 && is_type(d, RTIT_PT_TIP_PGE) && workaround(d, RTIT_PT_BDM70))
		return 0;
	/* an OVF next: whether tracing was on at the FUP or not, nothing
	 * before the OVF is established and it says how tracing resumes
	 * (33.3.8); the FUP is left unclaimed (D219) */
	if (r > 0 && is_type(d, RTIT_PT_OVF))
		return 0;
	if (r > 0 && !is_type(d, RTIT_PT_TIP_PGE) && d->bdm70_known)
		return flow_fail(d, RTIT_ERR_BAD_CONTEXT, d->bdm70_off,
				 "a PSB+ FUP 0x%" PRIx64 " while tracing is disabled, with no TIP.PGE "
				 "after it (SDM 33.3.7: PSB+ has a FUP only with PacketEn 1; 33.4.2.4)",
				 d->bdm70_ip);
	psb_enable(d, d->bdm70_off, d->bdm70_ip, d->bdm70_unsynced);
	return 1;
}

/* One packet while disabled or unsynchronised. */
int flow_pt_idle(struct rtit_flow_dec *d)
{
	int r = pt_peek(d), s;
	if (d->bdm70_pend && r >= 0 && (s = bdm70_settle(d, r)) != 0)
		return s < 0 ? s : 0;
	if (r <= 0)
		return r < 0 ? r : 1;
	const struct la *p = &d->la;
	uint64_t off = p->offset, ip = p->ip;
	bool unsynced = d->state == ST_UNSYNCED;

	switch (p->pkt.type) {
	case RTIT_PT_TIP_PGE:
		sgx_on_enable(d);
		/* a CFE while off was the transfer's this TIP.PGE ends
		 * (Table 33-59: CFE.IRET(IP=0), TIP.PGE; D211) */
		d->cfe_type = 0;
		flow_enable_la(d, unsynced ? RTIT_FLOW_N_RESYNC : RTIT_FLOW_N_ENABLE);
		return 0;
	case RTIT_PT_FUP:
		consume(d);
		if (p->psb && (workaround(d, RTIT_PT_BDM70) || d->off_known)) {
			/* a TIP.PGE next would make it the erratum's;
			 * known off, nothing else may come (D139) */
			d->bdm70_pend = true;
			d->bdm70_known = d->off_known && !unsynced;
			d->bdm70_unsynced = unsynced;
			d->bdm70_ip = ip;
			d->bdm70_off = off;
			return 0;
		}
		if (p->psb) {
			/* PSB+ with PacketEn (33.3.7): tracing is on here */
			psb_enable(d, off, ip, unsynced);
			return 0;
		}
		if (unsynced)
			return 0;	/* an event's: the TIP that follows resynchronises */
		return flow_fail(d, RTIT_ERR_BAD_CONTEXT, off,
				 "a FUP 0x%" PRIx64 " while tracing is disabled", ip);
	case RTIT_PT_OVF:
		return overflow(d);
	case RTIT_PT_TRACESTOP:
		return flow_idle_stop(d);
	case RTIT_PT_TNT8: case RTIT_PT_TNT64:
		return flow_idle_tnt(d);
	case RTIT_PT_TIP:
		return flow_idle_tip(d);
	case RTIT_PT_TIP_PGD:
		consume(d);
		if (unsynced) {
			d->state = ST_DISABLED;
			return 0;
		}
		return flow_fail(d, RTIT_ERR_BAD_CONTEXT, off, "a TIP.PGD while tracing is disabled");
	case RTIT_PT_PIP:
		apply_pip(d, &p->pkt);
		consume(d);
		return 0;
	default:
		consume(d);
		return 0;
	}
}

/* ------------------------------------------------ event trace only */

/* The FUP of the CFE d->ev_cfe at @ip (events_only): the record it
 * establishes, after a note that the flow before it is unknown (D84).
 * INTR: an event at @ip with its vector, or the INT n there of that vector
 * (its CLIP); IRET/UIRET: the instruction at
 * @ip, which must be one (Table 33-50: the FUP is its CLIP); UINTR, INIT:
 * the event; the others (SMI, VM entry and exits, shutdown) only the
 * note.  The next IP is never known. */
static int event_record(struct rtit_flow_dec *d, uint64_t ip)
{
	const struct rtit_packet *c = &d->ev_cfe;
	const struct ic_ent *e;
	struct rtit_sim_rec *rec;
	int r;

	flow_note(d, RTIT_FLOW_N_EVENTS_ONLY, d->ev_cfe_off, ip, 0);
	switch (c->u.cfe.type) {
	case rtit_pt_cfe_iret: case rtit_pt_cfe_uiret:
		d->ip = ip;
		if ((r = ic_get(d, ip, &e)) < 0)
			return r;
		if (e->cls != (c->u.cfe.type == rtit_pt_cfe_iret ? RTIT_IC_IRET : RTIT_IC_UIRET))
			return flow_fail(d, RTIT_ERR_BAD_CONTEXT, d->ev_cfe_off,
					 "the FUP of a CFE.%s is at 0x%" PRIx64 ", a %s (SDM"
					 " Table 33-50: its CLIP)", c->u.cfe.type == rtit_pt_cfe_iret ?
					 "IRET" : "UIRET", ip, rtit_insn_class_name(e->cls));
		flow_insn_rec(d, e, 0, RTIT_SIM_F_TAKEN, RTIT_FLOW_A_NEXT_UNKNOWN);
		break;
	case rtit_pt_cfe_intr: case rtit_pt_cfe_uintr: case rtit_pt_cfe_init:
		/* a software interrupt's FUP is its CLIP (Table 33-50): at
		 * an INT n of the CFE's vector, the INT n itself (as the
		 * walk with branches takes it, D30; an external interrupt
		 * of that vector right there sends the same packets) */
		if (c->u.cfe.type == rtit_pt_cfe_intr && ic_get(d, ip, &e) == 0 &&
		    e->cls == RTIT_IC_INT && e->vec == c->u.cfe.vector) {
			d->ip = ip;
			flow_insn_rec(d, e, 0, RTIT_SIM_F_TAKEN, RTIT_FLOW_A_NEXT_UNKNOWN);
			break;
		}
		flow_emit_event(d, ip, 0);
		rec = &d->batch[d->nbatch - 1];
		rec->pad0 |= RTIT_FLOW_A_NEXT_UNKNOWN;
		rec->cls = c->u.cfe.type == rtit_pt_cfe_uintr ? RTIT_EV_UINTR :
			   c->u.cfe.type == rtit_pt_cfe_init ? RTIT_EV_INIT : RTIT_EV_NONE;
		rec->vector = c->u.cfe.type == rtit_pt_cfe_init ? 0 : c->u.cfe.vector;
		rec->flags &= (uint8_t)~RTIT_SIM_F_FAULT;
		break;
	default:
		return 0;
	}
	/* RFLAGS.IF at the event is not what the last MODE.Exec said (the
	 * delivery may change it): not claimed */
	d->batch[d->nbatch - 1].pad0 &= (uint8_t)~RTIT_FLOW_A_IF_KNOWN;
	commit(d);
	flow_flush_committed(d);
	return 0;
}

/* Intel PT event trace with no branch packets (cfg.events_only: EventEn=1,
 * BranchEn=0, SDM 33.2.4/Table 33-6): one packet.  CFE + FUP give records
 * (event_record); MODE.Exec the mode (for the IRET at a FUP); a TNT or TIP
 * cannot be in such a stream.  Returns 0, 1 at the end, or < 0. */
int flow_pt_events(struct rtit_flow_dec *d)
{
	struct rtit_pktdec_item it;
	int r = flow_next_packet(d, &it);

	if (r <= 0)
		return r < 0 ? r : 1;
	const struct rtit_packet *p = &it.pkt;
	if (p->type != RTIT_PT_EVD && p->type != RTIT_PT_CFE && d->evd_pend &&
	    (p->type == RTIT_PT_FUP || p->type == RTIT_PT_TIP || p->type == RTIT_PT_TNT8) &&
	    (r = evd_check(d, NULL)) < 0)
		return r;
	switch (p->type) {
	case RTIT_PT_PSB:
		d->last_off = it.offset;
		d->ev_fup_due = false;
		d->evd_pend = 0;
		return 0;
	case RTIT_PT_MODE_EXEC:
		apply_mode(d, p->u.mode.bits);
		return 0;
	case RTIT_PT_EVD:
		if (!d->evd_pend)
			d->evd_off = it.offset;
		d->evd_pend |= p->u.evd.type <= rtit_pt_evd_vmxr ? (uint8_t)(1u << p->u.evd.type) :
				0x80;
		return 0;
	case RTIT_PT_CFE:
		if ((r = evd_check(d, p)) < 0)
			return r;
		d->last_off = it.offset;
		d->ev_fup_due = p->u.cfe.ip;
		d->ev_cfe = *p;
		d->ev_cfe_off = it.offset;
		return 0;
	case RTIT_PT_FUP:
		d->last_off = it.offset;
		if (!d->ev_fup_due)
			return 0;	/* a MODE.Exec's, PTW's, PSB+'s: status */
		d->ev_fup_due = false;
		if (it.ip_status != 0)
			return flow_fail(d, RTIT_ERR_NOIP, it.offset,
					 "the FUP of a CFE has no IP the decoder knows");
		return event_record(d, it.ip);
	case RTIT_PT_OVF:
		d->ev_fup_due = false;
		d->evd_pend = 0;
		d->st.overflows++;
		d->st.gaps++;
		flow_note(d, RTIT_FLOW_N_OVERFLOW, it.offset, NO_IP, 0);
		return 0;
	case RTIT_PT_TNT8: case RTIT_PT_TNT64: case RTIT_PT_TIP:
		return flow_fail(d, RTIT_ERR_BAD_CONTEXT, it.offset,
				 "a %s in a trace without branches (BranchEn=0)",
				 rtit_pkt_name(p->type));
	default:
		return 0;	/* timing, TIP.PGE/PGD, PIP, power, PTW, ... */
	}
}
