/*
 * encoder.h - the encoder interface: one trace block model (RTIT, Atom
 * Silvermont/Airmont; or Intel PT, SDM chapter 33) behind one set of
 * calls, so that nothing above the encoder layer switches on the dialect.
 * The models themselves (rtit/rtit_encoder.h, rtit/pt_encoder.h) share
 * the types below: where the bytes go, the account of each packet, the
 * statistics.
 *
 * Life of an encoder: rtit_encoder_new(dialect) -> param_set... ->
 * start(sink) -> set_platform -> records (on_batch, msr_write, msr_read,
 * on_pebs: the simulator's consumer calls) -> finish -> stats, sideband ->
 * free.
 */
#ifndef RTIT_ENCODER_H
#define RTIT_ENCODER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rtit/packet.h"
#include "rtit/record.h"

struct rtit_sideband;

#define RTIT_ENC_NERRATA 9

/* A packet the model produced, and why: for readable accounts. */
struct rtit_enc_note {
	const struct rtit_packet *pkt;
	const uint8_t *bytes;
	size_t len;
	uint64_t offset;		/* bytes written to the trace so far (the
					 * packet's own offset may be later: the
					 * internal buffer still holds some) */
	uint64_t ip;			/* an IP packet's full IP */
	const struct rtit_sim_rec *rec;	/* the record that produced it */
	const char *why;		/* e.g. "Table 19 row 27: far transfer" */
	/* A packet the rules called for but the internal buffer did not
	 * take (an overflow, RTIT 4.2.5, SDM 33.3.8): len 0, no bytes,
	 * offset where it would have gone. */
	bool dropped;
};

/*
 * The hidden state that decides the next packets' bytes, as an observer
 * (rtitsim explain) reads it between records with rtit_encoder_observe():
 * nothing is computed for it unless asked.
 */
struct rtit_enc_state {
	uint64_t last_ip;		/* RTIT: LAST_LIP[47:0] (4.2.3.1);
					 * PT: LastIP (33.4.2.2) */
	bool last_ip_valid;		/* RTIT: CMPRS_LIP_Valid */
	bool packet_en;			/* packets are generated now */
	bool overflow;			/* RTIT: BuffOvf; PT: in an overflow */
	uint8_t tnt_n, tnt_cap;		/* TNT bits buffered, and capacity */
	uint64_t tnt_bits;		/* oldest first from bit tnt_n-1 */
	bool ret_compression;		/* RTIT Cmprs_Ret; PT: !DisRETC */
	/* RTIT: LAST_CALL_NLIP (4.2.2.1); PT: the RET stack's depth and
	 * youngest entry (33.4.2.1) */
	uint64_t call_nlip;
	bool call_nlip_valid;
	unsigned stack_depth;
	uint64_t stack_top;
	/* RTIT: Pkt_Cnt and the count Pkt_Mask selects (3.3.9); PT: bytes
	 * since the last PSB and the PSBFreq period (33.2.8.2) */
	uint64_t psb_count, psb_period;
	uint64_t buf_fill, buf_cap;	/* internal buffer (bytes; cap 0: none) */
	uint64_t cycles;		/* RTIT: CNTP, cycles since the last CCP
					 * (4.2.14); PT: cycles since the last
					 * CYC (33.4.2.14) */
	uint64_t tsc;			/* the last record's TSC */
};

/* Where the bytes go. */
struct rtit_enc_sink {
	/* The trace bytes in the order they reach memory (unwrapped). */
	int (*write)(void *opaque, const uint8_t *bytes, size_t n);
	/* Optional: the writes to the output region, as the hardware makes
	 * them: 64-byte lines, partial lines on a drain, physical address. */
	int (*write_mem)(void *opaque, uint64_t phys, const uint8_t *bytes, size_t n);
	/* Optional: each packet with its cause. */
	void (*on_packet)(void *opaque, const struct rtit_enc_note *note);
	void *opaque;
};

/* The models' call of sink->on_packet (nothing when there is none). */
static inline void rtit_enc_notify(const struct rtit_enc_sink *sink, const struct rtit_packet *p,
				   const uint8_t *b, size_t n, uint64_t offset,
				   const struct rtit_sim_rec *rec, uint64_t ip, const char *why,
				   bool dropped)
{
	if (sink->on_packet) {
		struct rtit_enc_note nt = {
			.pkt = p, .bytes = b, .len = n, .offset = offset, .rec = rec,
			.why = why, .ip = ip, .dropped = dropped,
		};
		sink->on_packet(sink->opaque, &nt);
	}
}

/* Statistics a run reports. */
struct rtit_enc_stats {
	uint64_t bytes, packets, psbs, overflows, dropped_packets;
	uint64_t ccps;		/* RTIT: cycle count packets, which 'packets'
				 * does not count (4.2.14); Intel PT: 0 (its
				 * CYCs are in 'packets') */
	uint64_t errata_fired[RTIT_ENC_NERRATA];	/* RTIT: E1..E8 by number */
	/* RTIT: 0 when PacketEn was ever 1, else the first enable that never
	 * was (enum rtit_enc_not_traced); Intel PT: 0 */
	uint8_t not_traced;
};

/* Why a run never traced (RTIT: PacketEn = TriggerEn && ContextEn &&
 * FilterEn was never 1, 2.1). */
enum rtit_enc_not_traced {
	RTIT_ENC_TRACED = 0,
	RTIT_ENC_NO_TRACE_EN,		/* RTIT_CTL.Trace_En never set */
	RTIT_ENC_NO_TRACE_ACTIVE,	/* ... TraceActive never set with it */
	RTIT_ENC_NO_CONTEXT,		/* ContextEn never 1 with TriggerEn */
	RTIT_ENC_NO_FILTER		/* FilterEn never 1 with both */
};

/* One line naming what was missing (for a warning), or NULL for
 * RTIT_ENC_TRACED. */
const char *rtit_encoder_not_traced_why(unsigned why);

struct rtit_encoder;	/* opaque */

/* Creates an encoder of @dialect (enum rtit_dialect) with its default
 * parameters.  Returns 0, -RTIT_ERR_INVALID, -RTIT_ERR_NOMEM. */
int rtit_encoder_new(struct rtit_encoder **ep, int dialect);

/* Frees it (NULL allowed). */
void rtit_encoder_free(struct rtit_encoder *e);

int rtit_encoder_dialect(const struct rtit_encoder *e);

/* The trace control MSR of the dialect: RTIT_CTL (0x768, RTIT 3.3.2) or
 * IA32_RTIT_CTL (0x570, SDM 33.2.8.2). */
uint32_t rtit_encoder_ctl_msr(const struct rtit_encoder *e);

/* Whether @value written to that MSR sets its TraceEn (RTIT_CTL.Trace_En,
 * RTIT 3.3.2; IA32_RTIT_CTL.TraceEn, SDM Table 33-6). */
bool rtit_encoder_ctl_trace_en(const struct rtit_encoder *e, uint64_t value);

/*
 * Sets one encoder parameter ("param KEY = VALUE", docs/encoder-rtit.md,
 * docs/encoder-pt.md).  Before rtit_encoder_start.  Returns 0 or
 * -RTIT_ERR_BAD_CONFIG with a message in @err.
 */
int rtit_encoder_param_set(struct rtit_encoder *e, const char *key, const char *value,
			   char *err, size_t errlen);

/* The program runs as a VMX guest (a scenario with VM exits): Intel PT
 * starts in VMX non-root operation unless a parameter says otherwise
 * (D48); RTIT has no such state.  Before the parameters are set. */
void rtit_encoder_set_guest(struct rtit_encoder *e, bool guest);

/* Initialises the model at reset with the parameters and the sink.
 * Returns 0, -RTIT_ERR_INVALID or -RTIT_ERR_BAD_CONFIG. */
int rtit_encoder_start(struct rtit_encoder *e, const struct rtit_enc_sink *sink);

/* The platform state when the run starts.  RTIT: also the debugger's read
 * of RTIT_CTL that comes before any other access (RTIT 3.3.1). */
void rtit_encoder_set_platform(struct rtit_encoder *e, uint8_t cpl, uint64_t cr3,
			       uint64_t cr0, uint8_t mode);

/* RFLAGS.IF when the run starts (Intel PT: MODE.Exec's IF bit with
 * EventEn, SDM 33.4.2.8; RTIT: nothing). */
void rtit_encoder_set_if(struct rtit_encoder *e, bool ifl);

/* The simulator's consumer calls (rtit/record.h struct rtit_sim_consumer),
 * for the model of @e. */
void rtit_encoder_on_batch(struct rtit_encoder *e, const struct rtit_sim_rec *recs, size_t n);
int rtit_encoder_msr_write(struct rtit_encoder *e, uint32_t msr, uint64_t value,
			   const struct rtit_sim_rec *ctx);
int rtit_encoder_msr_read(struct rtit_encoder *e, uint32_t msr, uint64_t *value,
			  const struct rtit_sim_rec *ctx);
void rtit_encoder_on_pebs(struct rtit_encoder *e, const struct rtit_sim_pebs *p,
			  const struct rtit_sim_rec *ctx);

/* The end of the run: drains what is buffered.  Returns 0 or the first
 * sink error. */
int rtit_encoder_finish(struct rtit_encoder *e);

/* The hidden state now (between records; see struct rtit_enc_state). */
void rtit_encoder_observe(const struct rtit_encoder *e, struct rtit_enc_state *st);

/* Statistics so far (errata_fired: RTIT only). */
void rtit_encoder_stats(const struct rtit_encoder *e, struct rtit_enc_stats *st);

/*
 * The sideband keys the encoder knows (docs/formats.md): the dialect, the
 * CPU when @sb names none, and the trace configuration a decoder needs
 * from @ctl, the control MSR's value at the first enable (RTIT:
 * cycle_accurate, cmprs_ret, mtc_range, rtit_ctl; Intel PT:
 * ia32_rtit_ctl, ret_compression, mtc_freq, cyc_thresh, art_num, art_den,
 * cbr), and the errata fired.
 */
void rtit_encoder_sideband(const struct rtit_encoder *e, uint64_t ctl, struct rtit_sideband *sb);

/* RTIT only: Cycle_Acc in @ctl (the stream has cycle count packets, RTIT
 * 4.2.15); false for Intel PT, whose CYC packets need no telling. */
bool rtit_encoder_cycle_acc(const struct rtit_encoder *e, uint64_t ctl);

#endif /* RTIT_ENCODER_H */
