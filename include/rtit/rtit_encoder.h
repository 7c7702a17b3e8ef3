/*
 * rtit_encoder.h - the cycle-aware model of the RTIT trace block of Atom
 * Silvermont/Airmont (RTIT Programming Reference v1.05).
 *
 * It consumes the simulator's records (sim.h) and writes the bytes the
 * hardware would: the packets of Table 19 for each operation, in its order,
 * with LAST_LIP and RET compression, PSB insertion by RTIT_PKT_CNT, the
 * cycle-accurate timing packets, the internal buffer and its overflow, and
 * the errata of Appendix E as switchable behaviours.
 */
#ifndef RTIT_RTIT_ENCODER_H
#define RTIT_RTIT_ENCODER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rtit/ip.h"
#include "rtit/packet.h"
#include "rtit/record.h"
#include "rtit/rtit_state.h"
#include "rtit/encoder.h"	/* struct rtit_enc_sink, rtit_enc_note, rtit_enc_stats */

/* How an erratum fires when its condition holds. */
enum rtit_erratum_mode {
	RTIT_ERRATUM_OFF = 0,
	RTIT_ERRATUM_ALWAYS,	/* every time */
	RTIT_ERRATUM_EVERY,	/* every Nth time (param n) */
	RTIT_ERRATUM_SEEDED	/* pseudo-randomly, 1 in n, from seed */
};

struct rtit_erratum {
	uint8_t mode;		/* enum rtit_erratum_mode */
	uint32_t n;
	uint64_t seed;
	uint32_t arg;		/* erratum-specific (E1 offset, E8 window) */
};

/* Errata of RTIT Appendix E. */
enum { RTIT_E1 = 1, RTIT_E2, RTIT_E3, RTIT_E4, RTIT_E5, RTIT_E6, RTIT_E7, RTIT_E8, RTIT_NERRATA = 9 };

/* Model parameters: what the manual leaves to the implementation, and the
 * readings of its ambiguities (docs/decisions.md). */
struct rtit_r_params {
	uint64_t buffer_bytes;		/* internal buffer; 0 = unlimited */
	uint64_t drain_num, drain_den;	/* drain rate, bytes per core cycle */
	uint8_t psb_clear_delay;	/* 0..4 packets (3.3.9, D65) */
	bool pgd_on_trigger_clear;	/* FUP.PGD when TriggerEn clears (D69) */
	bool buffovf_loads_lip;		/* FUP.BuffOvf loads LAST_LIP (D4) */
	bool cntp_gate_as_printed;	/* Table 17 cycle-counter rows (D67) */
	uint8_t acbr, ecbr;		/* core:bus ratios (STS): the clock's, D79 */
	bool slow_path_only;		/* testing: never take the fast path */
	struct rtit_erratum errata[RTIT_NERRATA];
};

/* Defaults: unlimited buffer, no errata, the readings of decisions.md. */
void rtit_r_params_default(struct rtit_r_params *p);

/*
 * Sets one parameter by name, as a scenario's "param KEY = VALUE" line
 * does.  Keys: buffer_bytes, drain (e.g. "1/4" bytes per cycle),
 * psb_clear_delay, pgd_on_trigger_clear, buffovf_loads_lip,
 * cntp_gate_as_printed, and e1..e8 = off | always |
 * every:N | seed:N:SEED (with ",arg=K").  Returns 0, or -RTIT_ERR_BAD_CONFIG
 * with a message in @err.
 */
int rtit_r_param_set(struct rtit_r_params *p, const char *key, const char *value,
		     char *err, size_t errlen);

_Static_assert(RTIT_ENC_NERRATA == RTIT_NERRATA, "the shared statistics count the RTIT errata");

enum { rtit_r_pending_max = 64 };

/* The model.  Embed by value; touch only through the functions below. */
struct rtit_r_model {
	struct rtit_r_params p;
	struct rtit_enc_sink sink;
	struct rtit_enc_stats stats;
	struct rtit_pkt_ctx ctx;
	/* registers (3.3) */
	uint64_t lip[4], ctl, events, base, limit, offset, cr3_match;
	bool filter_en, buff_ovf, ctl_read;
	bool in_range[2];		/* FilterEn latches for RANGE0/1 */
	bool stop_in_range[2];		/* TraceStop detector latches */
	struct rtit_last_ip lastlip;
	struct rtit_r_retc retc;
	struct rtit_r_pktcnt pktcnt;
	struct rtit_r_cntp cntp;
	struct rtit_r_tnt tnt;
	struct rtit_ibuf ibuf;
	/* platform view */
	uint8_t cpl;
	uint64_t cr3;
	bool cr0_pg, in_smm, in_vmx_root, asleep;
	bool in_wfs;		/* an AP between INIT and SIPI (D56) */
	bool halted;			/* asleep after a HLT or MWAIT (App. B 4.1) */
	uint64_t last_cycles, last_tsc;
	bool have_time;
	uint8_t mtc_bits;		/* last watched TSC bits sent */
	bool mtc_first;			/* E7: no MTC since enable */
	/* per-instruction bookkeeping */
	unsigned ccps_this_insn;
	int psb_clear_countdown;	/* 3.3.9, D65 */
	bool psb_due_after_next;	/* E3 */
	bool pending_stop;		/* TraceStop held during overflow */
	bool tip_during_ovf;		/* E5 */
	bool deferred_enable;		/* a write with no record: apply at the next */
	bool deferred_trig0, deferred_pe0;
	/* a guest WRMSR's write, applied when its record retires (D76) */
	bool wr_pending;
	uint8_t wr_len;
	uint32_t wr_msr;
	uint64_t wr_value, wr_ip;
	uint64_t errata_count[RTIT_NERRATA], rng;
	const struct rtit_sim_rec *cur;
	int err;			/* first sink error */
	/* E8: packets held after a PSB, for reordering (Appendix E) */
	uint8_t e8buf[512];
	uint16_t e8start[24];		/* packet starts in e8buf */
	unsigned e8n;
	size_t e8len;
	int e8_window;
	bool e8_stop_held;		/* a TraceStop byte is in e8buf */
	uint8_t seen;			/* enables ever 1: RTIT_R_SEEN_* (stats) */
	/* the fast path's view of the enables, valid while fp_ok (see
	 * fast_refresh in rtit_model.c) */
	bool fp_ok, fp_pe, fp_count, fp_pcc, fp_mtc, fp_cmprs, fp_ranges;
	unsigned fp_mtc_shift;
	/* bytes on their way to sink.write, flushed per batch */
	uint8_t obuf[4096];
	size_t olen;
	struct rtit_outq outq;		/* last: large */
};

/* Which enables were ever 1 (struct rtit_r_model.seen). */
enum {
	RTIT_R_SEEN_TRACE_EN = 1, RTIT_R_SEEN_TRIGGER = 2, RTIT_R_SEEN_CONTEXT = 4,
	RTIT_R_SEEN_PACKET = 8
};

/* Initialises @m at reset (RTIT 3.3 reset values).  Returns 0 or
 * -RTIT_ERR_INVALID. */
int rtit_r_model_init(struct rtit_r_model *m, const struct rtit_r_params *p,
		      const struct rtit_enc_sink *sink);

/* The platform state when tracing starts (CPL, CR3, CR0.PG): the run
 * driver sets it from the simulator's configuration before the first
 * record, so that a debugger's enabling write is judged correctly. */
void rtit_r_model_set_platform(struct rtit_r_model *m, uint8_t cpl, uint64_t cr3, bool cr0_pg);

/* Consumer callbacks for struct rtit_sim_consumer (opaque = the model). */
void rtit_r_model_on_batch(const struct rtit_sim_rec *recs, size_t n, void *opaque);
int rtit_r_model_msr_write(void *opaque, uint32_t msr, uint64_t value,
			   const struct rtit_sim_rec *ctx);
int rtit_r_model_msr_read(void *opaque, uint32_t msr, uint64_t *value,
			  const struct rtit_sim_rec *ctx);

/* One record (what on_batch does for each). */
void rtit_r_model_on_rec(struct rtit_r_model *m, const struct rtit_sim_rec *r);

/* A drain (as WRMSR RTIT_CTL does, 3.3.2): every byte still in the
 * internal buffer is written, the last line partially. */
void rtit_r_model_drain(struct rtit_r_model *m);

/* The end of the run: drains and writes out what is held.  Returns 0 or
 * the first sink error. */
int rtit_r_model_finish(struct rtit_r_model *m);

/* The hidden state now, for an observer (rtit/encoder.h). */
void rtit_r_model_observe(const struct rtit_r_model *m, struct rtit_enc_state *st);

/* Enables as RTIT_STATUS reports them (3.3.3). */
bool rtit_r_trigger_en(const struct rtit_r_model *m);
bool rtit_r_context_en(const struct rtit_r_model *m);
bool rtit_r_packet_en(const struct rtit_r_model *m);

#endif /* RTIT_RTIT_ENCODER_H */
