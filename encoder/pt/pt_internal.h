/* pt_internal.h - what pt_model.c and pt_msr.c share (not installed). */
#ifndef RTIT_ENCODER_PT_INTERNAL_H
#define RTIT_ENCODER_PT_INTERNAL_H

#include "rtit/pt_encoder.h"

/*
 * IA32_RTIT_CTL changed from @old to m->ctl (33.2.8.3).  @clip is the IP of
 * the WRMSR and @nlip the next one (the WRMSR record, Table 33-56 cases
 * 1-3).  TraceEn 0->1: output pointers loaded, PSB+ or TSC/TMA/CBR,
 * MODE.Exec, TIP.PGE; 1->0: FUP(CLIP), TIP.PGD() when PacketEn was 1,
 * then every buffered byte is written.
 */
void rtit_pt_on_ctl_write(struct rtit_pt_model *m, uint64_t old, bool pe0,
			  uint64_t clip, uint64_t nlip);

/* Brings time up to @r (a WRMSR record being built). */
void rtit_pt_time_to(struct rtit_pt_model *m, const struct rtit_sim_rec *r);

/* Writes the output pointers back into OUTPUT_BASE/OUTPUT_MASK_PTRS. */
void rtit_pt_output_save(struct rtit_pt_model *m);

/* Flushes the bytes waiting for sink.write. */
void rtit_pt_out_flush(struct rtit_pt_model *m);

/* Recomputes the fast path's cached conditions (pt_model.c); after any
 * change of state made outside a record (an MSR write). */
void rtit_pt_fast_refresh(struct rtit_pt_model *m);

/* pt_model.c for pt_pebs.c: a packet that is not CYC-eligible (a TNT
 * pending goes first, D21), and a FUP(@ip).  False when dropped. */
bool rtit_pt_send_plain(struct rtit_pt_model *m, struct rtit_packet *p, const char *why);
void rtit_pt_send_fup(struct rtit_pt_model *m, uint64_t ip, const char *why);

/* pt_pebs.c: the RTIT_EV_PEBS record @r: the PEBS record as blocks. */
void rtit_pt_on_pebs(struct rtit_pt_model *m, const struct rtit_sim_rec *r);

#endif
