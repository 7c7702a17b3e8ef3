/*
 * flow_internal.h - the flow decoder's state and the helpers its two walks
 * share: decoder/flow.c (the records, the instruction cache, the end of the
 * stream, RTIT's walk) and decoder/flow_pt.c (Intel PT's walk).
 */
#ifndef RTIT_FLOW_INTERNAL_H
#define RTIT_FLOW_INTERNAL_H

#include "rtit/flow.h"
#include "rtit/bits.h"
#include "rtit/opcodes_pt.h"	/* MTC and STS payload sizes */
#include "rtit/opcodes_rtit.h"	/* RTIT_R_MTC_SHIFT (4.2.12) */
#include "rtit/pt_state.h"	/* the RET-compression stack (33.4.2.2) */
#include "../isa/isa.h"	/* isa_classify: the instruction classes */

enum { ST_DISABLED = 0, ST_ENABLED, ST_UNSYNCED };

/* Decoded-instruction cache entry. */
struct ic_ent {
	uint64_t ip;		/* key; valid when len != 0 */
	uint64_t target;	/* direct branch target */
	uint8_t len;
	uint8_t cls;
	uint8_t flags;		/* IC_* */
	uint8_t vec;		/* INT n, INT3, INT1, INTO: the vector */
	/* A plain instruction (flow_plain): the run of plain instructions
	 * from here, all in the cache, up to the first one that is not
	 * (0: not known yet): their number, the last one's length, their
	 * bytes (flow_run, issue 20; the entry stays 24 bytes) */
	uint8_t run, run_lastlen;
	uint16_t run_bytes;
	/* Where the walk went from here last, as indexes into d->ic (hints,
	 * checked against the key before use: ic_find_slot, D155): next[0]
	 * for ip + len or a branch not taken, next[1] for anywhere else (a
	 * taken branch's target, the end of a run, a RET's last target) */
	uint32_t next[2];
};
/* A block of the Intel PT TNT fast path (flow_pt_tnt_walk, D157): the
 * run of plain instructions from the cached instruction d->ic[i] and the
 * branch that ends it, kept at d->icb[i] with the branch's fields, so
 * that a block step loads one entry (links to the next ones by the
 * branch's way).  Valid when key is d->ic[i]'s key; a zeroed entry's
 * class is RTIT_IC_OTHER, which the fast path leaves to the walk. */
struct ic_blk {
	uint64_t key;		/* the block's first instruction's cache key */
	uint64_t target;	/* the branch's target (a direct one) */
	/* where the fast path went from here last by the branch's way
	 * (0: not taken, 1: taken or not a Jcc), as indexes into d->icb
	 * (hints, checked against the key) */
	uint32_t next[2];
	uint16_t run_bytes;	/* the run's bytes (0: the block is the branch) */
	uint8_t n;		/* the run's plain instructions */
	uint8_t blen, cls, flags;	/* the branch's length, class, IC_* flags */
	uint8_t pad[2];
};

/* IC_XACQ/IC_XREL: an XACQUIRE/XRELEASE-prefixed instruction (HLE, SDM
 * 33.2.9.1: it begins or commits a transaction as XBEGIN/XEND do) */
/* IC_VMENTRY: VMLAUNCH/VMRESUME (a far transfer into the guest when the
 * VM entry succeeds, Table 33-53) */
/* IC_LEAVES: PT, IA32_RTIT_CTL fixed with filter ranges: a direct JMP,
 * CALL or Jcc whose target lies outside every one (D173) */
/* IC_END: the instruction at the run's end address (the sideband's stop
 * "reached end address", not a HLT's): the run stopped before it, so the
 * walk never executes it (D192) */
/* IC_UD: UD0, UD1, UD2: each raises #UD, always (SDM Vol. 2B UD): the
 * walk never runs past one, only an event (its FUP) leaves it (D225) */
enum { IC_ZLC = 1, IC_INTO = 2, IC_XACQ = 4, IC_XREL = 8, IC_VMENTRY = 16, IC_LEAVES = 32,
	IC_END = 64, IC_UD = 128 };

/* Where the PT walk is with respect to SGX enclaves (D52): before the
 * first enable (a trace starts outside: the simulator's TraceEn is set
 * there), outside, in a debug enclave it followed an EENTER/ERESUME into,
 * in an opt-out one (entered with TIP.PGD(), left with TIP.PGE), or not
 * known (after any other gap: an ENCLU may have run unseen). */
enum { FLOW_ENCL_START = 0, FLOW_ENCL_OUT, FLOW_ENCL_DEBUG, FLOW_ENCL_OPTOUT,
       FLOW_ENCL_UNKNOWN };

/* The packet in view. */
struct la {
	struct rtit_packet pkt;
	uint64_t offset;
	uint64_t ip;
	int ip_status;
	bool psb;		/* PT: a FUP inside PSB+ (status) */
	bool if_fup;		/* PT: the FUP after an RFLAGS.IF MODE.Exec
				 * (CLI/STI/POPF at its IP) */
	bool pebs_fup;		/* PT: the FUP after a BEP(IP=1): where the
				 * PEBS record binds (Table 33-45) */
	bool exstop_fup;	/* PT: the FUP after an EXSTOP(IP=1): where
				 * execution stopped, the walk's next
				 * instruction (33.4.2.22, D202) */
	/* Timing: the cycle count once this packet is consumed, and whether
	 * a cycle packet gave it for this very packet (RTIT: the CCP after
	 * it, 4.2.15; PT: a CYC right before it, 33.3.6) */
	bool exact;
	uint64_t cyc;
	uint64_t tsc;		/* the TSC known when it came into view */
};

/* How many packets the flow decoder reads ahead of the one it uses: a
 * malformed packet among them is reported before that one is used (D137).
 * PADs are not counted (they say nothing, and a corrupted IP's zero
 * bytes read as PADs, D164): the ring holds up to FLOW_RING packets. */
#define FLOW_AHEAD 4
#define FLOW_RING 16
/* Packets a batch call of the packet decoder gives (a trace in memory) */
#define FLOW_PB 64

struct rtit_flow_dec {
	struct rtit_flow_cfg cfg;
	ZydisDecoder zd;

	struct ic_ent *ic;
	uint32_t ic_mask, ic_n;
	/* The tables a grow replaced, freed with the decoder: a walk step
	 * holds an entry's pointer across a packet read, and a PSB+ check
	 * (psb_reaches) or a CFE's can decode, and grow the cache, under it
	 * (each table is half the next: at most as much memory again) */
	struct ic_ent *ic_old[40];
	unsigned n_ic_old;
	/* PT: the TNT fast path's blocks, parallel to ic (allocated by the
	 * fast path; freed when the cache grows, D157) */
	struct ic_blk *icb;

	struct rtit_sim_rec *batch;
	uint64_t *offs;		/* trace offset of the packet behind each */
	size_t nbatch, ncommit, cap;
	size_t hold;		/* provisional instructions held back (D199) */
	size_t alloc;		/* records batch and offs hold: cap, grown up
				 * to cap + hold by a walk that long (D199) */
	const uint64_t *offs_out;	/* offs of the records being handed out */
	size_t nprov;		/* instructions in batch[ncommit..nbatch) (in
				 * block mode a record may hold several) */
	/* A TIP's target was walked (commit_tip): the records up to its
	 * branch, batch[ncommit..tip_mark) (tip_nprov instructions), wait
	 * for the next packet to be used up before they are established
	 * (D221) */
	bool tip_held;
	size_t tip_mark, tip_nprov;
	struct rtit_sim_rec tmpl;

	struct la la;
	bool have_la, eos;

	bool pt;		/* Intel PT: flow_pt.c walks */
	uint64_t ic_tag;	/* cache key bit of the decoding mode */
	ZydisDecoder zd32;	/* PT: for MODE.Exec CS.D */
	ZydisDecoder zd16;	/* PT: MODE.Exec with neither (INIT, SIPI) */

	int state;
	bool after_stop;
	uint8_t stop_tnts;	/* RTIT: TNTs since the TraceSTOP (D169) */
	/* RTIT: a PSB came since the last packet in view but PIPs and one
	 * TNT (psb_fresh: 1, 2 after that TNT), and was there for the
	 * FUP.PGE in view (pge_psb): a restart without a FUP.PGD needs
	 * one (D168) */
	uint8_t psb_fresh;
	bool pge_psb;
	bool pg_known;		/* RTIT: tmpl's CR0.PG is known (cfg, a PIP) */
	/* since a FUP.BuffOvf, no packet has shown that tracing is on (the
	 * overflow clears with FilterEn 0 too, 4.2.5): a packet that does
	 * not fit means it is off, not an error */
	bool soft;
	/* PT: tracing started at a PSB+ or OVF FUP and no packet has been
	 * used since: a TIP.PGE next says it was off there (D142) */
	bool fup_start;
	uint64_t ip;
	uint64_t prev_nlip;	/* NLIP of the instruction just walked */
	uint64_t tnt_bits;
	int tnt_n;
	bool after_tnt;		/* PT: the last packet in view was a TNT, or
				 * a TIP after one (deferred TIPs) */
	uint64_t tnt_tsc;	/* ... and that TNT's TSC bound */
	uint64_t retc;		/* LAST_CALL_NLIP [47:0] */
	bool retc_valid;
	/* Intel PT (flow_pt.c) */
	struct rtit_pt_callstack rs;	/* RET compression (33.4.2.2) */
	bool in_psb;		/* between PSB and PSBEND */
	/* Erratum BDM70's workaround (D106): a PSB+ FUP while tracing is
	 * off, held until the next packet says whether a TIP.PGE follows */
	bool bdm70_pend, bdm70_unsynced, bdm70_known;
	/* tracing is known to be off: a disable was decoded (TIP.PGD,
	 * FUP.PGD, TraceStop) and nothing enabled since (D139) */
	bool off_known;
	uint64_t bdm70_ip, bdm70_off;
	bool bound_fup;		/* the next FUP belongs to an EXSTOP, PTW,
				 * CFE or MODE.TSX with its IP bit: status */
	bool bound_ptw;		/* PT: that FUP is a PTW's (D137) */
	bool bound_exstop;	/* PT: that FUP is an EXSTOP's (D202) */
	bool mode_seen;		/* PT: a MODE.Exec since the start or an OVF */
	bool nonroot;		/* the last PIP's NR: VMX non-root */
	bool in_vmm;		/* after a VM exit, until the VM entry */
	uint64_t enable_ip;	/* where tracing last (re)started (D170) */
	uint8_t cfe_type;	/* the last CFE's type, until an INT n ... */
	uint8_t cfe_vec;	/* ... and its vector (Table 33-59) */
	bool vmx_known;		/* a PIP said root or non-root (NR) */
	uint8_t evd_seen;	/* EVD.VMXQ (bit 0), EVD.VMXR (bit 1) since
				 * the last VM exit (Table 33-59 cases 13/14) */
	uint64_t evd_vmxq, evd_vmxr;
	/* EVD types since the last CFE (bit per type, 0x80 reserved), the
	 * first one's offset: the CFE that follows must fit them (D84) */
	uint8_t evd_pend;
	uint64_t evd_off;
	/* events_only: a CFE with its IP bit waits for its FUP */
	bool ev_fup_due;
	struct rtit_packet ev_cfe;
	uint64_t ev_cfe_off;
	/* RFLAGS.IF from a MODE.Exec that kept the CS bits, until the
	 * instruction or transfer it belongs to: -1 none, 0 or 1; mode_fup:
	 * no FUP or TIP has come since (a FUP now is CLI/STI/POPF's) */
	int8_t if_pend;
	bool mode_fup;
	/* a MODE.Exec read while tracing, outside PSB+, at mode_ip_off:
	 * the next packet but timing and padding is its IP packet (D154) */
	bool mode_ip_due;
	uint64_t mode_ip_off;
	/* RFLAGS.IF of the last MODE.Exec (-1: none since the last overflow
	 * or resync): the encoder sends one before a TIP.PGE only when it
	 * differs, so tracing resumes with it */
	int8_t if_last;
	uint8_t vmx_change;	/* take_tip: RTIT_EV_VMENTRY/VMEXIT by PIP.NR */
	bool tsx_pending;	/* a MODE.TSX while tracing: its FUP binds it
				 * to an XBEGIN, XEND or abort (Table 33-27) */
	uint8_t tsx_bits;	/* its TXAbort|InTX */
	bool intx;		/* InTX as the last MODE.TSX said */
	/* InTX is known: a MODE.TSX said it, or a PSB+ with a FUP and no
	 * MODE.TSX said 0 (SDM 33.3.7, D43); not after an OVF (D171) */
	bool intx_known;
	bool psb_tsx;		/* a MODE.TSX in the PSB+ being read */
	bool psb_ctx;		/* a PIP in it: ContextEn was 1 */
	/* PEBS records in packet blocks (33.4.1.1, Table 33-47, D55):
	 * in a block since its first BBP, the current block's type, the
	 * digest of the items so far (rtit/pebs.h), the Basic block's IP,
	 * the groups seen; pebs_fup: a BEP(IP=1) came, its FUP is next */
	bool pebs_in, pebs_fup;
	uint8_t pebs_blk, pebs_groups;
	/* the BIP IDs of the open block, the BBP types of the open record
	 * (D137) */
	uint32_t pebs_ids, pebs_types;
	unsigned pebs_lbr_n;	/* LBR block items in this record */
	/* PT: the last packet but PADs was a TSC; a TSC came in this PSB+
	 * (where a TMA may stand, D142) */
	bool prev_tsc, psb_tsc;
	uint64_t pebs_h, pebs_eip;
	bool pge_ok;		/* take_tip: a TIP.PGE may end an event's
				 * packets (INIT on an AP, then SIPI, D58) */
	uint8_t encl;		/* SGX, as the walk follows it (D52): FLOW_ENCL_* */
	bool cfe_fresh;		/* a CFE since the last TIP, TIP.PGE, TIP.PGD,
				 * TNT or OVF: it belongs to the FUP ahead */
	bool cfe_intr_due;	/* a CFE.INTR while tracing: the event's own
				 * FUP comes before a TNT or TIP (D190) */
	uint64_t walked;	/* instructions since the last packet */
	uint64_t last_off;	/* offset of the last packet consumed */
	/* the last packet the walk used (not a PSB passed on the way): where
	 * code the image lacks is reported, the packet that sent the walk
	 * there (D142) */
	uint64_t used_off;

	/* the PSB the last resync found (synced), at sync_off */
	bool synced;
	uint64_t sync_off;
	/* the error being reported */
	int err_code;
	uint64_t err_off, err_ip;
	char msg[256];

	/* Timing (flow.h: cycles and tsc of decoded records) */
	uint64_t t_cyc;		/* cycle packets summed so far */
	bool cyc_adj;		/* PT: the last packet read was a CYC */
	uint64_t t_tsc;		/* the last TSC a packet gave (STS, TSC, MTC) */
	bool t_tsc_valid;
	uint64_t t_art;		/* PT: the ART at t_tsc (33.8.3) */
	bool mtc_seen;		/* RTIT E7: an MTC since the last enable */
	bool pt_mtc_known;	/* PT: pt_mtc_last holds the last MTC's or TMA's */
	uint8_t pt_mtc_last;	/* ART[f+7:f] (SKL168's workaround, D127) */
	uint64_t tnt_cyc;	/* RTIT: a full TNT's cycle count, for its
				 * last branch (4.2.15) */
	bool tnt_exact;
	bool have_stash;

	struct rtit_flow_stats st;
	struct rtit_pktdec_item stash;	/* read ahead: RTIT for a CCP, Intel PT after a CYC (SKD007, D109) */
	/* the packets read ahead of the one in use (flow_next_packet,
	 * D137): a ring of ahead_n from ahead_head */
	struct rtit_pktdec_item ahead[FLOW_RING];
	unsigned ahead_head, ahead_n;
	unsigned ahead_sig;	/* of them not PADs (at most FLOW_AHEAD + 1) */
	unsigned ahead_watch;	/* PT: TIP.PGEs and FUPs with no IP among
				 * them (flow_ahead_watched, pge_found_ahead) */
	int ahead_err;		/* a stream cut inside the packet after them,
				 * or the bad bytes there (fenced) */
	/* A fault found among the packets read ahead (bad bytes, D137; a
	 * TIP.PGE or FUP with no IP where none can be, D142, D153): from
	 * then on nothing is committed or noted, and the walk goes on with
	 * the packets before it, so that a fault it finds at one of those
	 * comes first; else this one, when the walk reaches fence_off
	 * (flow_fence, D163) */
	bool fenced;
	int fence_code;
	uint64_t fence_off, fence_ip;
	char fence_msg[256];
	struct rtit_flow_stats fence_st;	/* the counts then (recover) */
	/* The kept fault is one the walk's own checks report when it gets
	 * there: the packet is handed to the walk (fence_due, D196) */
	bool fence_walk;
	/* What the packets read so far say of PacketEn, in the order read
	 * (rtit_r_ahead_check, flow_pt_ahead_check, D196): enum flow_ahead_en */
	uint8_t ahead_en;
	bool ahead_partial;	/* RTIT: the last packet read but MTC, STS and
				 * CCP was a partial TNT (rtit_r_ahead_check) */
	/* Block mode (cfg.on_block): the blocks made from the committed
	 * records, blk[nblk] the one still open when cur_open
	 * (flow_blocks_out) */
	struct rtit_flow_block *blk;
	size_t nblk;
	bool cur_open;
	/* A trace in memory: packets come from the packet decoder's batch
	 * call (issue 20), pb[pb_i..pb_n) not handed out yet */
	struct rtit_pktdec_item *pb;
	unsigned pb_i, pb_n;
	struct rtit_pktdec pd;	/* large: last */
};

#define NO_IP UINT64_MAX
/* Cache keys of instructions decoded in 32-bit mode carry this bit (never
 * set in a 32-bit address, nor in a canonical 64-bit one of the lower
 * half; an upper-half one has it with bit 63, which a tagged key never
 * has: flow_ic_fill tells them apart by bit 63). */
#define FLOW_IC_TAG32 (1ull << 62)
/* ... and in 16-bit mode (after INIT or SIPI, D58) */
#define FLOW_IC_TAG16 (1ull << 61)

static inline uint64_t sext48(uint64_t v)
{
	v &= 0xffffffffffffull;
	return (v & (1ull << 47)) ? v | 0xffff000000000000ull : v;
}

/* PT: IPs of the current mode (a RET's target is cut to its operand size). */
static inline uint64_t flow_pt_ip_mask(const struct rtit_flow_dec *d)
{
	return d->ic_tag ? 0xffffffffull : ~0ull;
}

/* ---- flow.c: records, notes, errors ---- */
void flow_flush_committed(struct rtit_flow_dec *d);
/* cap records or more in the batch: the committed ones are handed out;
 * with none, the batch holds provisional records only and grows, twice
 * the room up to cap + hold records (D199); when that cannot be had, they
 * are taken as certain and handed out (D98). */
void flow_batch_full(struct rtit_flow_dec *d);
void flow_fence(struct rtit_flow_dec *d);
void flow_fence_walk(struct rtit_flow_dec *d, uint64_t off);
bool flow_pt_leaves_filter(const struct rtit_flow_dec *d, uint64_t target);
void flow_note(struct rtit_flow_dec *d, int kind, uint64_t off, uint64_t ip, uint64_t count);
void flow_drop_uncertain(struct rtit_flow_dec *d, uint64_t off);
int flow_fail(struct rtit_flow_dec *d, int code, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
int flow_fail_ud(struct rtit_flow_dec *d);
const char *flow_la_name(const struct rtit_flow_dec *d);
int flow_next_packet(struct rtit_flow_dec *d, struct rtit_pktdec_item *it);
/* The walk is to execute the instruction at the run's end address (IC_END,
 * D192): the error (flow.c). */
int flow_end_reached(struct rtit_flow_dec *d);
/* The @k-th packet after those in use, read ahead (up to FLOW_RING), or
 * NULL; nothing is consumed (flow.c). */
const struct rtit_pktdec_item *flow_ahead_peek(struct rtit_flow_dec *d, unsigned k);
bool flow_ahead_ended(const struct rtit_flow_dec *d);
int flow_pt_fup_noip(struct rtit_flow_dec *d, uint64_t off);
int flow_set_la(struct rtit_flow_dec *d, const struct rtit_pktdec_item *it, bool psb);
int flow_ic_fill(struct rtit_flow_dec *d, uint64_t key, struct ic_ent *e);
int flow_ic_grow(struct rtit_flow_dec *d);
void flow_emit_event(struct rtit_flow_dec *d, uint64_t ip, uint64_t next);
void flow_enable_at(struct rtit_flow_dec *d, uint64_t ip);
void flow_disable(struct rtit_flow_dec *d, int kind, uint64_t off, uint64_t ip);
void flow_enable_la(struct rtit_flow_dec *d, int kind);
int flow_trace_stop(struct rtit_flow_dec *d);
/* The packets in view while tracing is off (flow.c), for both dialects. */
int flow_idle_stop(struct rtit_flow_dec *d);
int flow_idle_tnt(struct rtit_flow_dec *d);
int flow_fail_disabled(struct rtit_flow_dec *d, enum rtit_pkt_type t, uint64_t off, uint64_t ip);
int flow_idle_tip(struct rtit_flow_dec *d);
int flow_walk_end(struct rtit_flow_dec *d);
void flow_on_call(struct rtit_flow_dec *d, uint64_t nlip, bool zlc);
bool flow_ret_compressed(struct rtit_flow_dec *d, uint64_t *t);

/* ---- flow.c: runs of plain instructions, blocks (issue 20) ---- */
int flow_run_scan(struct rtit_flow_dec *d, const struct ic_ent *e);
void flow_run(struct rtit_flow_dec *d, const struct ic_ent *e);
int flow_pt_tnt_walk(struct rtit_flow_dec *d, const struct ic_ent *e, int *ret);
void flow_blocks_out(struct rtit_flow_dec *d, const struct rtit_sim_rec *recs, size_t n);
void flow_blocks_close(struct rtit_flow_dec *d);
uint64_t flow_blocks_insns(const struct rtit_sim_rec *recs, size_t n);

/* ---- flow_pt.c: the Intel PT walk ---- */
int flow_pt_walk(struct rtit_flow_dec *d);
void flow_pt_ahead_check(struct rtit_flow_dec *d, const struct rtit_pktdec_item *it);
/* The Intel PT packets flow_pt_ahead_check looks at, its switch's cases;
 * the others leave its state as it is (D196). */
#define FLOW_PT_AHEAD_TYPES \
	((1ull << RTIT_PT_PSB) | (1ull << RTIT_PT_OVF) | (1ull << RTIT_PT_CYC) | \
	 (1ull << RTIT_PT_TRACESTOP) | (1ull << RTIT_PT_TIP_PGE) | (1ull << RTIT_PT_TIP_PGD) | \
	 (1ull << RTIT_PT_TNT8) | (1ull << RTIT_PT_TNT64))
int flow_pt_events(struct rtit_flow_dec *d);
int flow_pt_idle(struct rtit_flow_dec *d);
void flow_pt_reset(struct rtit_flow_dec *d);
bool flow_pt_tnt_ready(const struct rtit_flow_dec *d, bool pge);
int flow_pt_peek(struct rtit_flow_dec *d);
void flow_pt_take_tnt(struct rtit_flow_dec *d);
bool flow_pt_tip_ready(const struct rtit_flow_dec *d);
void flow_pt_take_tip(struct rtit_flow_dec *d);

/*
 * A new record in the batch, of @k instructions (0: an event, which
 * commits).  Records walked without a packet are provisional: held back
 * until a packet establishes them (commit), so that an error that packet
 * shows drops them (D199).  When hold instructions walked without a packet
 * are provisional and the walk goes on, they are taken as certain
 * (straight-line code this long did run, or the stream is wrong and a
 * later error names the packet that sent the walk there, D98): counted in
 * instructions, so record mode and block mode (whose records may hold
 * several, flow_run_fits) hand out the same flow before any error.
 * Committed records are handed out once cap records are in the batch.
 */
static inline struct rtit_sim_rec *rec_new(struct rtit_flow_dec *d, uint32_t k)
{
	if (__builtin_expect(d->fenced, 0)) {
		/* an error is certain (D163): the provisional records
		 * would be dropped; nothing commits, events neither, so
		 * the batch can also fill with nprov < hold */
		if (d->nprov >= d->hold || d->nbatch == d->alloc) {
			d->nbatch = d->ncommit;
			d->nprov = 0;
			d->tip_held = false;
		}
	} else if (__builtin_expect(d->nprov >= d->hold, 0)) {
		d->ncommit = d->nbatch;
		d->nprov = 0;
		d->tip_held = false;
	}
	if (__builtin_expect(d->nbatch >= d->cap, 0))
		flow_batch_full(d);
	d->nprov += k;
	/* the packet behind the record: with no TNT bit pending, the walk
	 * goes on towards the packet in view, which is what establishes the
	 * record (an async event's FUP, the TIP of the indirect branch
	 * ahead); else the last one consumed (D137) */
	d->offs[d->nbatch] = d->have_la && !d->tnt_n ? d->la.offset : d->last_off;
	return &d->batch[d->nbatch++];
}

/* Block mode: a record of @k instructions keeps the provisional ones
 * within hold (rec_new), else the walk makes them one at a time. */
static inline bool flow_run_fits(const struct rtit_flow_dec *d, uint32_t k)
{
	return d->nprov + k <= d->hold;
}

/* What the packets read so far say of PacketEn (D196). */
enum flow_ahead_en {
	FLOW_AH_UNKNOWN,	/* after a PSB or overflow, or before any */
	FLOW_AH_ON,		/* an enable, with no PSB or overflow since */
	FLOW_AH_OFF,		/* a disable and what may follow it */
	FLOW_AH_OFF_PGD,	/* RTIT: a FUP.PGD just now (its far
				 * transfer's TIP may follow) */
	FLOW_AH_STOPPED		/* a TraceStop: until the next enable or
				 * overflow (its TNT, RTIT 4.2.11) */
};

/*
 * The packet just used establishes the records walked before it (D199):
 * they go out with the next batch.  After a TIP's target was walked
 * (commit_tip), a TNT's bits establish nothing until the last of them is
 * used (D221).
 */
static inline void commit(struct rtit_flow_dec *d)
{
	d->walked = 0;
	if (__builtin_expect(d->fenced, 0))
		return;		/* an error is certain: nothing is established (D163) */
	if (__builtin_expect(d->tip_held, 0)) {
		if (d->tnt_n)
			return;	/* the TNT after the TIP: not used up */
		d->tip_held = false;
	}
	d->ncommit = d->nbatch;
	d->nprov = 0;
}

/*
 * A TIP was used, and the last record's next IP is its target: the records
 * walked before it are established only once the packet after the TIP is
 * used up, a TNT's last bit included (commit), or this TIP's successor is
 * (here).  A TIP whose IP a fault changed sends the walk into code where
 * TNT bits may fit by chance; the fault then shows within the packet after
 * it, and the records it made are dropped with the error (D221).
 */
static inline void commit_tip(struct rtit_flow_dec *d)
{
	d->walked = 0;
	if (__builtin_expect(d->fenced, 0))
		return;
	if (d->tip_held) {
		d->ncommit = d->tip_mark;
		d->nprov -= d->tip_nprov;
	}
	d->tip_held = true;
	d->tip_mark = d->nbatch;
	d->tip_nprov = d->nprov;
}

/* The records a TIP's successor would establish (commit_tip), taken as
 * established: at the end of the stream, an overflow or a note, where
 * what was walked before stands (D221). */
static inline void flow_tip_settle(struct rtit_flow_dec *d)
{
	if (__builtin_expect(d->tip_held, 0) && !d->fenced) {
		d->ncommit = d->tip_mark;
		d->nprov -= d->tip_nprov;
		d->tip_held = false;
	}
}

/* A counter window just changed (an MTC: RTIT 4.2.12, PT 33.4.2.12): the
 * counter then, given the last value known @base, the window's place
 * @shift and width @bits and its new contents @v.  The bits above come
 * from @base (one more when the window wrapped), the bits below are 0:
 * the counter had just reached it. */
static inline uint64_t flow_window_advance(uint64_t base, unsigned shift, unsigned bits,
					   uint64_t v)
{
	uint64_t hi = base >> (shift + bits);
	if (v < ((base >> shift) & rtit_mask(bits)))
		hi++;
	return (hi << (shift + bits)) | (v << shift);
}

/* RFLAGS.IF as a MODE.Exec gave it (Intel PT with EventEn, 33.4.2.8):
 * the records from here on say so (RTIT_FLOW_A_IF_KNOWN). */
static inline void flow_if_apply(struct rtit_flow_dec *d, bool ifl)
{
	if (!d->cfg.event_trace)
		return;
	if (ifl)
		d->tmpl.flags |= RTIT_SIM_F_IF;
	else
		d->tmpl.flags &= (uint8_t)~RTIT_SIM_F_IF;
	d->tmpl.pad0 |= RTIT_FLOW_A_IF_KNOWN;
	d->if_last = ifl;
}

/* The record of the instruction @e at the walk's IP, from the template. */
static inline struct rtit_sim_rec *flow_insn_rec(struct rtit_flow_dec *d, const struct ic_ent *e,
						 uint64_t next, uint8_t fl, uint8_t ann)
{
	struct rtit_sim_rec *rec = rec_new(d, 1);
	*rec = d->tmpl;
	rec->ip = d->ip;
	rec->len = e->len;
	rec->cls = e->cls;
	rec->next_ip = next;
	rec->flags |= fl;
	if (ann)
		rec->pad0 |= ann;
	return rec;
}

/* At each step of a walk: the template's time is no longer exact.  No
 * store when nothing changes: the record copies that follow would wait on
 * it (store forwarding). */
static inline void flow_step_untimed(struct rtit_flow_dec *d)
{
	if (d->tmpl.pad0 & RTIT_FLOW_A_CYC_EXACT)	/* a new origin ends with it (D127) */
		d->tmpl.pad0 &= (uint8_t)~(RTIT_FLOW_A_CYC_EXACT | RTIT_FLOW_A_CYC_ORIGIN);
}

static inline void consume(struct rtit_flow_dec *d)
{
	d->have_la = false;
	d->last_off = d->la.offset;
	d->used_off = d->la.offset;
	d->soft = false;
	d->fup_start = false;
	/* the records made from here on carry its time; the one made for it
	 * (this walk step's) is exact when a cycle packet was adjacent */
	if (d->tmpl.cycles != d->la.cyc)
		d->tmpl.cycles = d->la.cyc;
	if (d->tmpl.tsc != d->la.tsc)
		d->tmpl.tsc = d->la.tsc;
	if (d->la.exact)
		d->tmpl.pad0 |= RTIT_FLOW_A_CYC_EXACT;
}

static inline uint32_t ic_hash(uint64_t ip)
{
	return (uint32_t)((ip * 0x9e3779b97f4a7c15ull) >> 40);
}

static inline int ic_get(struct rtit_flow_dec *d, uint64_t ip, const struct ic_ent **out)
{
	ip |= d->ic_tag;
	uint32_t h = ic_hash(ip) & d->ic_mask;
	struct ic_ent *e;
	while ((e = &d->ic[h])->len) {
		if (e->ip == ip) {
			*out = e;
			return 0;
		}
		h = (h + 1) & d->ic_mask;
	}
	int r = flow_ic_fill(d, ip, e);
	if (r < 0) {
		e->len = 0;
		return r;
	}
	if (++d->ic_n * 2 > d->ic_mask) {
		if ((r = flow_ic_grow(d)) < 0)
			return r;
		return ic_get(d, ip & ~d->ic_tag, out);
	}
	*out = e;
	return 0;
}

/* The cached instruction at @ip in the current mode, or NULL (nothing is
 * decoded). */
static inline const struct ic_ent *ic_find(const struct rtit_flow_dec *d, uint64_t ip)
{
	ip |= d->ic_tag;
	uint32_t h = ic_hash(ip) & d->ic_mask;
	const struct ic_ent *e;
	while ((e = &d->ic[h])->len) {
		if (e->ip == ip)
			return e;
		h = (h + 1) & d->ic_mask;
	}
	return NULL;
}

/* The cached instruction at @ip reached from the entry @p (the walk's
 * last): through p's link @s first, else the hash, and the link then set
 * (the TNT fast path picks the link by the branch's way, not by the
 * address it computes: the entry loads without waiting for it, D155).
 * NULL when not cached (nothing is decoded). */
static inline const struct ic_ent *ic_find_slot(const struct rtit_flow_dec *d,
						const struct ic_ent *p, unsigned s, uint64_t ip)
{
	uint64_t key = ip | d->ic_tag;
	const struct ic_ent *f = &d->ic[p->next[s]];
	if (f->ip == key && f->len)
		return f;
	if ((f = ic_find(d, ip)))
		((struct ic_ent *)p)->next[s] = (uint32_t)(f - d->ic);	/* an entry of d->ic */
	return f;
}

/* The same, p's link chosen by the address: ip + len or elsewhere. */
static inline const struct ic_ent *ic_find_from(const struct rtit_flow_dec *d,
						const struct ic_ent *p, uint64_t ip)
{
	return ic_find_slot(d, p, (ip | d->ic_tag) != p->ip + p->len, ip);
}

/* A plain instruction: no transfer and nothing the walk does for it but
 * its record, whatever packet is in view when no FUP binds there
 * (flow_run). */
/* Intel PT: a packet read ahead that pge_found_ahead looks for (D142,
 * D153, D156): counted as the ring fills, so the scan runs only when one
 * is there. */
static inline bool flow_ahead_watched(const struct rtit_pktdec_item *it)
{
	return it->pkt.type == RTIT_PT_TIP_PGE || (it->pkt.type == RTIT_PT_FUP && it->ip_status == 1);
}

static inline bool flow_plain(const struct ic_ent *e)
{
	return e->cls == RTIT_IC_OTHER && !e->flags;
}

/*
 * The run of plain instructions at @e (the walk's IP), when the walk may
 * take it in one step: its length known (flow_run_scan), within max_walk,
 * and @quiet: the caller saw that no packet can bind to an instruction of
 * the run (TNT bits pending, or the packet in view binds to no IP).
 */
static inline bool flow_run_ok(struct rtit_flow_dec *d, const struct ic_ent *e, bool quiet)
{
	if (!quiet || !flow_plain(e))
		return false;
	if (!e->run && flow_run_scan(d, e) <= 0)
		return false;
	return d->walked + e->run <= d->cfg.max_walk;
}

#endif /* RTIT_FLOW_INTERNAL_H */
