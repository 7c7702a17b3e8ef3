/* rtit_internal.h - what rtit_model.c and rtit_msr.c share (not installed). */
#ifndef RTIT_ENCODER_RTIT_INTERNAL_H
#define RTIT_ENCODER_RTIT_INTERNAL_H

#include "rtit/rtit_encoder.h"

/* A write changed the enables at an instruction boundary with @nlip
 * (3.3.2): PSB when TriggerEn rose, FUP.PGD/FUP.PGE (D69).  For writes
 * with no WRMSR record of their own (D13: presets, external writes). */
void rtit_r_model_on_enable_change(struct rtit_r_model *m, bool trig0, bool pe0,
				   uint64_t nlip);

/* A checked write reaches the registers (rtit_msr.c); true when it may
 * change an enable.  Sends nothing. */
bool rtit_r_model_apply_write(struct rtit_r_model *m, uint32_t msr, uint64_t v);

/* A write with no WRMSR record (ctx NULL, a preset; or an event's record):
 * applied now, with its packets (rtit_msr.c). */
void rtit_r_model_write_now(struct rtit_r_model *m, uint32_t msr, uint64_t v,
			    const struct rtit_sim_rec *ctx);

/* 3.3.9: RTIT_PKT_CNT was written; "evaluated on writes": when the
 * monitored bit is set, Pkt_Cnt becomes 0 and, with @may_psb and
 * TriggerEn (Table 17), a PSB goes out (D77). */
void rtit_r_model_pktcnt_written(struct rtit_r_model *m, bool may_psb);

/* The fast path's cached view may be stale (rtit_model.c). */
void rtit_r_model_after_msr(struct rtit_r_model *m);

#endif /* RTIT_ENCODER_RTIT_INTERNAL_H */
