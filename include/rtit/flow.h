/*
 * flow.h - the instruction-flow decoder (issue 5): from the trace bytes of
 * either dialect and the program image back to the flow the simulator
 * executed, as records in the simulator's own format (struct
 * rtit_sim_rec), and a comparator that checks a decoded flow against the
 * ground truth.
 *
 * The decoder walks the program from each enable point: non-branches and
 * direct branches need no packet; a conditional branch takes the next TNT
 * bit; a near RET takes a TNT bit when one is due (a compressed RET) or a
 * TIP; indirect branches take a TIP.  RTIT (decoder/flow.c): compressed
 * RETs go to LAST_CALL_NLIP (4.2.3.2, D70); far transfers take
 * a FUP.FAR + TIP (or FUP.PGD [+ TIP]); a FUP.FAR whose IP is where the
 * walk stands is an asynchronous event or a fault (RTIT Table 1): an EVENT
 * record; FUP.PGD stops, FUP.PGE resumes, FUP.BuffOvf is a gap
 * (docs/decisions.md D14).  Intel PT (decoder/flow_pt.c, D30): compressed
 * RETs pop the 64-entry stack (33.4.2.2); far transfers take a TIP; a FUP
 * at the walk's IP + TIP is an event; TIP.PGD stops, TIP.PGE resumes, OVF
 * is a gap.  Bad bytes or a packet that does not fit the program give an
 * error with the trace offset and the IP, then the decoder resynchronises
 * at the next PSB.
 *
 * Records are handed out in batches from a fixed array; nothing is
 * allocated per record.  Instructions are decoded once (Zydis) and cached
 * by address in an open-addressing table.
 */
#ifndef RTIT_FLOW_H
#define RTIT_FLOW_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <sys/types.h>

#include "rtit/error.h"
#include "rtit/pktdec.h"
#include "rtit/record.h"
#include "rtit/sideband.h"

/* Reads @n bytes of the program image at @addr; returns 0, or < 0 when
 * any of them is not mapped. */
typedef int (*rtit_flow_read_mem_fn)(void *opaque, uint64_t addr, uint8_t *buf,
				     size_t n);

/* Annotation bits in rtit_sim_rec.pad0 of decoded records (the simulator
 * writes 0 there). */
enum {
	/* next_ip is not known: a far transfer that left tracing with a
	 * FUP.PGD and no TIP (Table 19 rows 32/33) */
	RTIT_FLOW_A_NEXT_UNKNOWN = 1u << 0,
	/* cycles is exact for this record: the cycle packet (RTIT CCP, PT
	 * CYC) of the packet it used gave it (see below) */
	RTIT_FLOW_A_CYC_EXACT = 1u << 1,
	/* Intel PT with EventEn (cfg.event_trace): flags' RTIT_SIM_F_IF is
	 * RFLAGS.IF as MODE.Exec packets gave it (33.4.2.8); not set before
	 * the first MODE.Exec, nor after an overflow until the next one */
	RTIT_FLOW_A_IF_KNOWN = 1u << 2,
	/* a VM exit with its reason (msr), qualification (value) and, for
	 * basic reasons 0/1, vector, as EVD.VMXR/VMXQ and the CFE gave them
	 * (Intel PT Event Trace, Table 33-59 cases 13/14) */
	RTIT_FLOW_A_VMX_INFO = 1u << 3,
	/* the cycle count restarts at this record (or at the first exact
	 * one after it): cycles lost before it (Intel PT erratum SKL168's
	 * workaround: an MTC, with its CYC, was lost before a PSB, D127),
	 * so its cycles minus those of an earlier record say nothing */
	RTIT_FLOW_A_CYC_ORIGIN = 1u << 4,
};

/*
 * Timing of decoded records.  cycles: the sum of the cycle packets (RTIT
 * CCP in cycle-accurate mode, 4.2.14; PT CYC, 33.4.2.14) up to the last
 * packet used for this record or before it: core cycles since an origin
 * the stream does not give, so only differences mean anything.  Exact
 * (RTIT_FLOW_A_CYC_EXACT) for a record whose packet had its cycle packet:
 * in RTIT the CCP that follows a TIP, FUP, PIP or full TNT (4.2.15; a full
 * TNT's time is its last branch's), in PT a CYC right before a TIP, TIP.PGD,
 * PIP or TNT (33.3.6; a TNT's time is its first branch's); otherwise the
 * count at that packet (close, not exact: a cycle packet read with it may
 * belong to a later instruction).  tsc: the time of the last timing packet
 * before the packet
 * behind the record, 0 before the first: RTIT STS gives TSC[39:0]
 * (4.2.13), an MTC TSC[s+7:s] with s = 7 + 2 * its RNG (4.2.12); PT TSC
 * gives the TSC (33.4.2.11), an MTC ART[f+7:f] with f = MTCFreq, the ART
 * that the last TSC implies (TSC = ART * art_num / art_den) supplying the
 * bits above (33.8.3).  An MTC's lower bits are 0: the counter had just
 * reached it.  So tsc is a lower bound of the record's TSC.
 */

/* What breaks the continuity of the record stream. */
enum rtit_flow_note_kind {
	RTIT_FLOW_N_ENABLE = 1,	/* FUP.PGE: tracing (re)starts at ip */
	RTIT_FLOW_N_DISABLE,	/* FUP.PGD: stopped; ip = the packet's IP, or
				 * UINT64_MAX: the packets after an overflow
				 * show tracing was off when it cleared */
	RTIT_FLOW_N_TRACESTOP,	/* TraceSTOP: stopped (4.2.11) */
	RTIT_FLOW_N_OVERFLOW,	/* FUP.BuffOvf: packets lost, resumes at ip */
	RTIT_FLOW_N_ERROR,	/* a decode error at offset/ip; resync follows */
	RTIT_FLOW_N_RESYNC,	/* after an error: resumes at ip */
	RTIT_FLOW_N_UNCERTAIN,	/* instructions walked past the last packet
				 * were dropped (count): the stream ended or
				 * tracing restarted without a FUP.PGD */
	RTIT_FLOW_N_END,	/* the end of the stream */
	RTIT_FLOW_N_EVENTS_ONLY	/* Intel PT event trace without branches
				 * (cfg.events_only): the flow up to the
				 * event at ip (its CFE at offset) is not
				 * known */
};

struct rtit_flow_note {
	int kind;		/* enum rtit_flow_note_kind */
	int code;		/* ERROR: -RTIT_ERR_x */
	uint64_t offset;	/* trace offset of the packet concerned */
	uint64_t ip;		/* see the kinds; ERROR: the walk's IP */
	uint64_t count;		/* UNCERTAIN: records dropped */
	const char *msg;	/* ERROR: one line (valid during the call) */
};

/* Errata of Appendix E the decoder tolerates (docs/decisions.md D17).
 * Not tolerated: E8 (packets reordered after their IPs were compressed);
 * E3 needs nothing.  The encoder parameter psb_clear_delay (3.3.9, D65)
 * is not followed by the packet decoder's LAST_LIP. */
enum {
	RTIT_FLOW_E1 = 1u << 1,	/* FUP.FAR inside a far instruction */
	RTIT_FLOW_E2 = 1u << 2,	/* extra FUP.PGD while disabled: ignored */
	RTIT_FLOW_E4 = 1u << 4,	/* TraceSTOPs right before a FUP.BuffOvf:
				 * sent during the overflow, no stop (D213) */
	RTIT_FLOW_E5 = 1u << 5,	/* TIP repeating the FUP.BuffOvf IP: ignored */
	RTIT_FLOW_E6 = 1u << 6,	/* CCP one low (timing only: no effect yet) */
	RTIT_FLOW_E7 = 1u << 7	/* first MTC dropped (timing only) */
};

/*
 * Block mode (issue 20): the decoded flow as basic blocks, for consumers
 * that need the edges (coverage, as fuzzers count it) or the blocks and
 * not one record per instruction.  A block is the instructions the walk
 * went through in a row from ip to last_ip, each the one after the other
 * in the image (no transfer among them), ending at the first instruction
 * that is not a plain one (RTIT_IC_OTHER, no transfer): a branch, taken
 * or not, any instruction that moves trace state (MOV CR3, far transfers,
 * TSX, ...), or the last one before a note or an event.  Its edge is
 * last_ip -> next_ip.  An event is a block of its own with ninsn 0
 * (kind RTIT_SIM_EVENT, cls its enum rtit_sim_event, ip where it hit,
 * next_ip its handler).  The fields of the last record (flow.h's record
 * format: cr3, cycles, tsc, flags, annotations) are the block's.
 * Exactly the flow records would give, folded: the same instructions,
 * notes, errors at the same offsets (docs/decisions.md D98).
 */
struct rtit_flow_block {
	uint64_t ip;		/* the first instruction (event: where) */
	uint64_t last_ip;	/* the last instruction (event: = ip) */
	uint64_t next_ip;	/* where the flow went from it (0 when
				 * RTIT_FLOW_A_NEXT_UNKNOWN is in ann) */
	uint64_t cr3, cycles, tsc;	/* the last record's */
	uint32_t ninsn;		/* instructions (0 for an event) */
	uint8_t kind;		/* RTIT_SIM_INSN or RTIT_SIM_EVENT */
	uint8_t cls;		/* the last instruction's class, or the event */
	uint8_t flags;		/* the last record's RTIT_SIM_F_* */
	uint8_t ann;		/* the last record's RTIT_FLOW_A_* */
	uint8_t len;		/* the last instruction's length */
	uint8_t cpl, mode, vector;	/* the last record's */
};

struct rtit_flow_cfg {
	/* What the stream does not say (the sideband file has them). */
	int dialect;		/* RTIT_DIALECT_RTIT (0) or RTIT_DIALECT_PT */
	int mode;		/* 64 (default when 0) or 32; PT: until a
				 * MODE.Exec says otherwise */
	bool cycle_acc;		/* Cycle_Acc was set: CCPs follow (D6) */
	bool cmprs_ret;		/* Cmprs_Ret was set (4.2.3.2) */
	bool buffovf_loads_lip;	/* encoder parameter (D4) */
	/* Intel PT time: MTCFreq, and the TSC:ART ratio (CPUID 15H) that
	 * turn an MTC into a TSC (33.8.3); defaults 0 and 1/1 */
	unsigned mtc_freq;
	uint32_t art_num, art_den;
	/* Intel PT: EventEn was set (the sideband's IA32_RTIT_CTL bit 31):
	 * MODE.Exec's IF bit is RFLAGS.IF, and records say so
	 * (RTIT_FLOW_A_IF_KNOWN) */
	bool event_trace;
	/* Intel PT: EventEn=1 and BranchEn=0 (the sideband's IA32_RTIT_CTL,
	 * Table 33-6): no branch packets; the decoder reports the CFEs and
	 * their FUPs (Table 33-50) as records, each after an
	 * RTIT_FLOW_N_EVENTS_ONLY note, and claims no instruction between */
	bool events_only;
	unsigned errata;	/* RTIT_FLOW_E* */
	/* Intel PT: the workarounds of published errata to apply
	 * (RTIT_PT_ERRATUM bits of rtit/pt_errata.h: SKL014, APL12, APL11,
	 * BDM70, SKD010, SKD007, BDM64, SKL168, SKZ84; docs/decisions.md D106,
	 * D109, D110, D127, D144), as libipt's pt_config.errata; and
	 * IA32_RTIT_CTL's ADDRn_CFG with the ADDRn ranges (the filter), which
	 * SKL014's needs as libipt's does (rtit_flow_cfg_from_sideband: from
	 * the sideband's cpu and pt_errata) */
	unsigned pt_errata;
	uint64_t pt_ctl, pt_addr_a[4], pt_addr_b[4];
	/* Intel PT: pt_ctl held at every enable (the sideband's ctl_fixed):
	 * a packet that its enables rule out (CYC without CYCEn, MTC without
	 * MTCEn, ...: the Dependencies rows of SDM 33.4.2) is an error
	 * (docs/decisions.md D137) */
	bool pt_ctl_fixed;
	/* Intel PT: the VMM's "Conceal VMX in PT" VM-exit control was 1
	 * (the sideband's param vmx_conceal_exit; SDM Table 33-52): a VM
	 * exit sends no PIP, CFE or EVD, so with EventEn its FUP, TIP come
	 * with no CFE.VMEXIT (docs/decisions.md D179) */
	bool pt_vmx_conceal_exit;
	/* Intel PT: the "Conceal VMX non-root operation from Intel PT"
	 * control was 1 (the sideband's param vmx_conceal_nonroot; SDM
	 * Table 33-52): a guest's PIPs say NR=0, so NR=0 does not show VMX
	 * root operation (docs/decisions.md D215) */
	bool pt_vmx_conceal_nonroot;
	/* RTIT: RTIT_CTL held at every enable (the sideband's rtit_ctl and
	 * ctl_fixed): an STS without STS_En, an MTC without MTC_En or of
	 * another MTC_Range, a PIP with CR3En, a FUP.PCC without Cycle_Acc
	 * (RTIT 4.2.6, 4.2.10, 4.2.12, 4.2.13) is an error (docs/decisions.md
	 * D142) */
	uint64_t r_ctl;
	bool r_ctl_fixed;
	/* RTIT: RTIT_EVENTS (3.3.5), from the sideband's msr line (0, its
	 * reset value, without one); with r_ctl_fixed, a Filter_Event_ID of
	 * "always on" means FilterEn is never 0, so no far transfer leaves
	 * it with ContextEn 1 (Table 19 rows 30-31: FUP.PGD and TIP; D142) */
	uint64_t r_events;
	/* RTIT: RTIT_LIP0-3 (3.3.6, Table 8), from the sideband's msr
	 * lines: RANGE0 = [LIP0, LIP2), RANGE1 = [LIP1, LIP3).  With
	 * r_ctl_fixed and a range as the Filter or TraceStop event, a far
	 * transfer's TIP after its FUP.PGD lands outside the filter ranges,
	 * and a TraceSTOP comes where the flow reaches the stop range
	 * (docs/decisions.md D139) */
	uint64_t r_lip[4];
	/* RTIT: each FUP/TIP's CNT and Zext must be what RTIT Table 18
	 * gives (4.2.3.1), as a Silvermont/Airmont encoder compresses; set
	 * from a sideband (a trace of a run), not for hand-made streams,
	 * which often send every LIP whole (docs/decisions.md D142) */
	bool r_lip_exact;
	/* RTIT: CR0.PG where the trace starts (a MOV CR0 sends a PIP only
	 * when it changes PG, 4.2.10): 1 (rtit_flow_cfg_default: rtitsim's
	 * simulator starts with CR0.PE|PG), 0, or -1 when not known, until
	 * the first PIP says (docs/decisions.md D80) */
	int cr0_pg;
	/* Where the run stopped, if known: at the end of the stream the walk
	 * goes on to end_ip (and includes the instruction there when
	 * end_after, a HLT); otherwise instructions past the last packet
	 * are dropped (N_UNCERTAIN). */
	bool has_end;
	uint64_t end_ip;
	bool end_after;
	/* Tracing was still on when the run ended (nothing, such as a
	 * debugger's write to RTIT_CTL, cleared Trace_En without a packet):
	 * then the walk to end_ip may also choose a conditional branch's way
	 * (or take a RET as compressed) when only one way gets there without
	 * a packet: the partial TNT is never written out at the end. */
	bool end_traced;
	/* How many overflows the encoder had (sideband `overflows`), or -1
	 * when unknown.  More than the FUP.BuffOvf packets seen means the
	 * run ended overflowed: nothing past the last packet is walked. */
	int64_t overflows_total;

	/* The trace: a reader (any piece sizes) or a buffer (read == NULL). */
	rtit_read_fn read;
	void *read_opaque;
	const uint8_t *mem;
	size_t mem_len;

	/* The program image. */
	rtit_flow_read_mem_fn read_mem;
	void *mem_opaque;
	/* Optional (opaque = mem_opaque): the vector whose handler is at @ip,
	 * or -1; names the
	 * kind of EVENT records (else RTIT_EV_NONE). */
	int (*vector_of)(void *opaque, uint64_t ip);
	/* Optional (opaque = mem_opaque): the handler of @vector (the IDT),
	 * or UINT64_MAX when not known.  Intel PT: tells an interrupt that
	 * came just before an INT n from the INT n (both FUP + TIP). */
	uint64_t (*handler_of)(void *opaque, unsigned vector);

	/* Outputs.  on_rec: n >= 1 records, valid during the call only;
	 * on_note before the records that follow it. */
	void (*on_rec)(void *opaque, const struct rtit_sim_rec *recs, size_t n);
	void (*on_note)(void *opaque, const struct rtit_flow_note *note);
	void *opaque;
	size_t batch_cap;	/* default 1024 */
	uint64_t max_walk;	/* insns without a packet before an error
				 * (default 1 << 22) */
	/* Instructions walked since the last packet are held back until a
	 * packet establishes them, up to this many (default 1 << 16); past
	 * it they are handed out as certain (docs/decisions.md D98, D199).
	 * The decoder's batch grows to batch_cap + max_hold records at
	 * most, and only for a walk that long. */
	uint32_t max_hold;
	/* Block mode (struct rtit_flow_block): when set, blocks go here
	 * instead of records to on_rec (which is then not called); on_note
	 * as before, before the blocks that follow it.  rtit_flow_dec_batch_
	 * offsets does not apply. */
	void (*on_block)(void *opaque, const struct rtit_flow_block *blocks, size_t n);
};

struct rtit_flow_stats {
	uint64_t insns, events, packets;
	uint64_t enables, disables, overflows, errors, resyncs;
	uint64_t gaps;		/* overflows + errors */
	uint64_t dropped;	/* uncertain records dropped */
	uint64_t skipped_bytes;	/* by resynchronisation */
	uint64_t cache_insns;	/* distinct instructions decoded */
};

struct rtit_flow_dec;

/* Sets defaults (64-bit, everything off). */
void rtit_flow_cfg_default(struct rtit_flow_cfg *cfg);

/*
 * Sets the fields of a flow decoder configuration that the sideband gives:
 * dialect, mode, cycle_acc, cmprs_ret, buffovf_loads_lip, the RTIT errata
 * switched on (params e1..e8), Intel PT's mtc_freq, art_num/art_den and
 * event_trace (IA32_RTIT_CTL.EventEn, SDM Table 33-6), where the run
 * stopped and the overflow count.  Leaves the other fields alone.
 */
void rtit_flow_cfg_from_sideband(struct rtit_flow_cfg *cfg, const struct rtit_sideband *sb);

/* Creates a decoder.  0, -RTIT_ERR_INVALID, -RTIT_ERR_NOMEM. */
int rtit_flow_dec_new(struct rtit_flow_dec **dp, const struct rtit_flow_cfg *cfg);
void rtit_flow_dec_free(struct rtit_flow_dec *d);

/* Decodes the whole stream.  Returns 0 when it decoded cleanly, the
 * number of errors (> 0) when something was reported and skipped, or
 * -RTIT_ERR_IO / -RTIT_ERR_NOMEM. */
int rtit_flow_dec_run(struct rtit_flow_dec *d);

const struct rtit_flow_stats *rtit_flow_dec_stats(const struct rtit_flow_dec *d);

/* During on_rec: the trace offset of the packet behind each record
 * (parallel to the records passed): the packet that made the walk go
 * there, i.e. the last one consumed, or with no TNT bit pending the one in
 * view that the walk was going towards (docs/decisions.md D137). */
const uint64_t *rtit_flow_dec_batch_offsets(const struct rtit_flow_dec *d);

/* One text line for a decoded record: the simulator's line format
 * (rtit_sim_rec_format) up to the next IP, the fields a trace determines:
 *   I 0000000000401031 cond     len=2 T -> 0000000000401038
 *   E 000000000040104d exception -> 0000000000401065            */
int rtit_flow_rec_format(const struct rtit_sim_rec *r, char *buf, size_t size);

/* ---- Comparison with the ground truth (the simulator's .flow) ---- */

/*
 * Streams decoded records and notes against the simulator's records.
 * Every note starts a new segment: records the trace cannot show (before
 * the first enable, while disabled, in an overflow gap, after the stream
 * ends) are skipped in the truth; inside a segment the records must follow
 * each other exactly: kind, ip, len, class, next_ip (unless unknown),
 * TAKEN; for events ip, next_ip and the kind when the decoder names it.
 * Truth events a trace does not show (frequency, sleep, external MSR
 * writes, SMI/RSM, VM exit/entry) are ignored.
 */
struct rtit_flow_cmp;

struct rtit_flow_mismatch {
	bool found;
	uint64_t decoded_index;		/* in the decoded records */
	uint64_t truth_index;		/* in the truth (all records) */
	struct rtit_sim_rec decoded, truth;
	bool truth_ended;		/* the truth had no more records */
	uint64_t offset;		/* trace offset behind the decoded record */
	char what[256];
};

struct rtit_flow_cmp_result {
	uint64_t compared;		/* decoded records matched */
	uint64_t skipped;		/* truth records in gaps */
	uint64_t trailing;		/* truth records after the last match */
	uint64_t segments;
	struct rtit_flow_mismatch mm;
};

int rtit_flow_cmp_new(struct rtit_flow_cmp **cp, const struct rtit_sim_rec *truth,
		      size_t n);
void rtit_flow_cmp_free(struct rtit_flow_cmp *c);
/* Feeds decoded records (offs: their trace offsets, or NULL) and notes.
 * Returns false once a mismatch was found (the rest is ignored). */
bool rtit_flow_cmp_feed(struct rtit_flow_cmp *c, const struct rtit_sim_rec *recs,
			const uint64_t *offs, size_t n);
void rtit_flow_cmp_note(struct rtit_flow_cmp *c, const struct rtit_flow_note *note);
/*
 * Optional, before the first feed: @traced[i] is nonzero when truth
 * record i ran with PacketEn = 1 (the encoder's state before it; the
 * caller keeps the array).  Then a segment that follows only enable,
 * disable and TraceSTOP notes since the last one (no error, resync,
 * overflow, uncertain drop or event-only gap) must not start past a
 * traced instruction the truth has in between: the trace had to show
 * it.  Not the first segment (where tracing began is the encoder
 * model's: FilterEn, say, is found at the first branch), not events
 * (an interrupt that leaves the traced CPL sends FUP, TIP.PGD: Table
 * 33-56, no record of the event), and not the instruction at a
 * disable's IP (a FUP(CLIP), TIP.PGD of an INT n or SYSCALL that leaves
 * the traced CPL names it as the source, not as run).
 */
void rtit_flow_cmp_traced(struct rtit_flow_cmp *c, const uint8_t *traced);
/* Ends the comparison; true when everything matched. */
bool rtit_flow_cmp_finish(struct rtit_flow_cmp *c, struct rtit_flow_cmp_result *res);

/*
 * For `rtitsim run --verify`: decodes @trace (@len bytes) with @cfg (its
 * trace, on_rec and on_note fields are ignored) against the image @cfg
 * names, and compares with @truth.  Returns 1 when the flow came back
 * whole (no decode error, every decoded record matches), 0 when not (the
 * reason in @res->mm.what, or the errors in @res), < 0 on failure.
 */
struct rtit_flow_verify_result {
	struct rtit_flow_cmp_result cmp;
	struct rtit_flow_stats stats;
	char first_error[200];		/* "" when none */
};
int rtit_flow_verify(const uint8_t *trace, size_t len, const struct rtit_flow_cfg *cfg,
		     const struct rtit_sim_rec *truth, size_t ntruth,
		     struct rtit_flow_verify_result *res);

#endif /* RTIT_FLOW_H */
