/*
 * encoder.c - the encoder interface (rtit/encoder.h): one table of
 * operations per dialect over its model; the only place above the models
 * that knows there are two.
 */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "rtit/encoder.h"
#include "rtit/msr_pt.h"
#include "rtit/msr_rtit.h"
#include "rtit/pt_encoder.h"
#include "rtit/rtit_encoder.h"
#include "rtit/sideband.h"

struct ops {
	uint32_t ctl_msr;
	uint64_t ctl_trace_en;		/* its TraceEn bit */
	const char *cpu;		/* the CPU a run claims by default */
	int (*param_set)(struct rtit_encoder *e, const char *key, const char *value,
			 char *err, size_t errlen);
	int (*start)(struct rtit_encoder *e, const struct rtit_enc_sink *sink);
	void (*set_platform)(struct rtit_encoder *e, uint8_t cpl, uint64_t cr3, uint64_t cr0,
			     uint8_t mode);
	void (*on_batch)(const struct rtit_sim_rec *recs, size_t n, void *model);
	int (*msr_write)(void *model, uint32_t msr, uint64_t value, const struct rtit_sim_rec *ctx);
	int (*msr_read)(void *model, uint32_t msr, uint64_t *value, const struct rtit_sim_rec *ctx);
	int (*finish)(struct rtit_encoder *e);
	void (*stats)(const struct rtit_encoder *e, struct rtit_enc_stats *st);
	void (*observe)(const void *model, struct rtit_enc_state *st);
	void (*sideband)(const struct rtit_encoder *e, uint64_t ctl, struct rtit_sideband *sb);
};

struct rtit_encoder {
	int dialect;
	const struct ops *ops;
	union {
		struct rtit_r_params r;
		struct rtit_pt_params pt;
	} p;
	union {
		struct rtit_r_model r;
		struct rtit_pt_model pt;
	} m;
};

/* ------------------------------------------------------------------ RTIT */

static int r_param_set(struct rtit_encoder *e, const char *key, const char *value,
		       char *err, size_t errlen)
{
	return rtit_r_param_set(&e->p.r, key, value, err, errlen);
}

static int r_start(struct rtit_encoder *e, const struct rtit_enc_sink *sink)
{
	return rtit_r_model_init(&e->m.r, &e->p.r, sink);
}

static void r_set_platform(struct rtit_encoder *e, uint8_t cpl, uint64_t cr3, uint64_t cr0,
			   uint8_t mode)
{
	(void)mode;
	rtit_r_model_set_platform(&e->m.r, cpl, cr3, (cr0 >> 31) & 1);	/* CR0.PG */
	/* RTIT 3.3.1: a debugger reads RTIT_CTL before the others. */
	uint64_t v;
	rtit_r_model_msr_read(&e->m.r, RTIT_R_MSR_CTL, &v, NULL);
}

static int r_finish(struct rtit_encoder *e)
{
	return rtit_r_model_finish(&e->m.r);
}

static void r_stats(const struct rtit_encoder *e, struct rtit_enc_stats *st)
{
	unsigned s = e->m.r.seen;

	*st = e->m.r.stats;
	st->not_traced = s & RTIT_R_SEEN_PACKET ? RTIT_ENC_TRACED :
			 !(s & RTIT_R_SEEN_TRACE_EN) ? RTIT_ENC_NO_TRACE_EN :
			 !(s & RTIT_R_SEEN_TRIGGER) ? RTIT_ENC_NO_TRACE_ACTIVE :
			 !(s & RTIT_R_SEEN_CONTEXT) ? RTIT_ENC_NO_CONTEXT : RTIT_ENC_NO_FILTER;
}

const char *rtit_encoder_not_traced_why(unsigned why)
{
	switch (why) {
	case RTIT_ENC_NO_TRACE_EN:
		return "RTIT_CTL.Trace_En (bit 0) was never set (RTIT 3.3.2)";
	case RTIT_ENC_NO_TRACE_ACTIVE:
		return "RTIT_CTL.TraceActive (bit 13) was never set with Trace_En, so TriggerEn stayed 0 (RTIT 2.1.1)";
	case RTIT_ENC_NO_CONTEXT:
		return "ContextEn was never 1 with TriggerEn: RTIT_CTL.OS/USER (bits 2/3) or CR3En with "
		       "RTIT_CR3_MATCH exclude the code that ran (RTIT 2.1.2)";
	case RTIT_ENC_NO_FILTER:
		return "FilterEn was never 1 with TriggerEn and ContextEn: RTIT_EVENTS.Filter_Event_ID "
		       "(bits 2:0; RANGE0 with RTIT_LIP0/LIP2 by default, empty at reset) let no "
		       "instruction through (RTIT 3.3.5; 0x7 is always on)";
	default:
		return NULL;
	}
}

static void r_sideband(const struct rtit_encoder *e, uint64_t ctl, struct rtit_sideband *sb)
{
	sb->cycle_acc = (ctl & RTIT_R_CTL_CYCLE_ACC) != 0;
	sb->cmprs_ret = (ctl & RTIT_R_CTL_CMPRS_RET) != 0;
	sb->mtc_range = (int)((ctl >> RTIT_R_CTL_MTC_RANGE_SHIFT) & 3);
	sb->has_rtit_ctl = true;
	sb->rtit_ctl = ctl;
	for (int i = 1; i < RTIT_ENC_NERRATA && i < RTIT_SIDEBAND_NERRATA; i++)
		sb->errata_fired[i] = e->m.r.stats.errata_fired[i];
}

static void r_observe(const void *m, struct rtit_enc_state *st)
{
	rtit_r_model_observe(m, st);
}

static const struct ops rtit_ops = {
	.ctl_msr = RTIT_R_MSR_CTL,
	.ctl_trace_en = RTIT_R_CTL_TRACE_EN,
	.cpu = "silvermont",
	.param_set = r_param_set,
	.start = r_start,
	.set_platform = r_set_platform,
	.on_batch = rtit_r_model_on_batch,
	.msr_write = rtit_r_model_msr_write,
	.msr_read = rtit_r_model_msr_read,
	.finish = r_finish,
	.stats = r_stats,
	.observe = r_observe,
	.sideband = r_sideband,
};

/* -------------------------------------------------------------- Intel PT */

static int pt_param_set(struct rtit_encoder *e, const char *key, const char *value,
			char *err, size_t errlen)
{
	return rtit_pt_param_set(&e->p.pt, key, value, err, errlen);
}

static int pt_start(struct rtit_encoder *e, const struct rtit_enc_sink *sink)
{
	return rtit_pt_model_init(&e->m.pt, &e->p.pt, sink);
}

static void pt_set_platform(struct rtit_encoder *e, uint8_t cpl, uint64_t cr3, uint64_t cr0,
			    uint8_t mode)
{
	(void)cr0;
	rtit_pt_model_set_platform(&e->m.pt, cpl, cr3, mode);
}

static int pt_finish(struct rtit_encoder *e)
{
	return rtit_pt_model_finish(&e->m.pt);
}

static void pt_stats(const struct rtit_encoder *e, struct rtit_enc_stats *st)
{
	const struct rtit_pt_stats *s = &e->m.pt.stats;
	memset(st, 0, sizeof(*st));
	st->bytes = s->bytes;
	st->packets = s->packets;
	st->psbs = s->psbs;
	st->overflows = s->overflows;
	st->dropped_packets = s->dropped_packets;
}

static void pt_sideband(const struct rtit_encoder *e, uint64_t ctl, struct rtit_sideband *sb)
{
	sb->has_ia32_rtit_ctl = true;
	sb->ia32_rtit_ctl = ctl;
	sb->ret_compression = !(ctl & RTIT_PT_CTL_DIS_RETC);	/* 33.4.2.2 */
	sb->mtc_freq = (unsigned)((ctl & RTIT_PT_CTL_MTC_FREQ_MASK) >> RTIT_PT_CTL_MTC_FREQ_SHIFT);
	sb->cyc_thresh = (unsigned)((ctl & RTIT_PT_CTL_CYC_THRESH_MASK) >>
				    RTIT_PT_CTL_CYC_THRESH_SHIFT);
	sb->art_num = e->p.pt.art_num;
	sb->art_den = e->p.pt.art_den;
	sb->cbr = e->p.pt.cbr;
	/* the errata reproduced, and the filter ranges their workarounds
	 * need (D105) */
	sb->pt_errata = e->p.pt.errata;
	for (int n = 0; n < 4 && n < RTIT_PT_MAX_RANGES; n++) {
		sb->addr_a[n] = e->m.pt.addr_a[n];
		sb->addr_b[n] = e->m.pt.addr_b[n];
	}
}

static void pt_observe(const void *m, struct rtit_enc_state *st)
{
	rtit_pt_model_observe(m, st);
}

static const struct ops pt_ops = {
	.ctl_msr = RTIT_PT_MSR_CTL,
	.ctl_trace_en = RTIT_PT_CTL_TRACE_EN,
	.cpu = "default",
	.param_set = pt_param_set,
	.start = pt_start,
	.set_platform = pt_set_platform,
	.on_batch = rtit_pt_model_on_batch,
	.msr_write = rtit_pt_model_msr_write,
	.msr_read = rtit_pt_model_msr_read,
	.finish = pt_finish,
	.stats = pt_stats,
	.observe = pt_observe,
	.sideband = pt_sideband,
};

/* ------------------------------------------------------------- the API */

int rtit_encoder_new(struct rtit_encoder **ep, int dialect)
{
	if (!ep || (dialect != RTIT_DIALECT_RTIT && dialect != RTIT_DIALECT_PT))
		return -RTIT_ERR_INVALID;
	struct rtit_encoder *e = calloc(1, sizeof(*e));
	if (!e)
		return -RTIT_ERR_NOMEM;
	e->dialect = dialect;
	if (dialect == RTIT_DIALECT_PT) {
		e->ops = &pt_ops;
		rtit_pt_params_default(&e->p.pt);
	} else {
		e->ops = &rtit_ops;
		rtit_r_params_default(&e->p.r);
	}
	*ep = e;
	return 0;
}

void rtit_encoder_free(struct rtit_encoder *e)
{
	free(e);
}

int rtit_encoder_dialect(const struct rtit_encoder *e)
{
	return e->dialect;
}

uint32_t rtit_encoder_ctl_msr(const struct rtit_encoder *e)
{
	return e->ops->ctl_msr;
}

bool rtit_encoder_ctl_trace_en(const struct rtit_encoder *e, uint64_t value)
{
	return value & e->ops->ctl_trace_en;
}

int rtit_encoder_param_set(struct rtit_encoder *e, const char *key, const char *value,
			   char *err, size_t errlen)
{
	return e->ops->param_set(e, key, value, err, errlen);
}

void rtit_encoder_set_guest(struct rtit_encoder *e, bool guest)
{
	if (e->dialect == RTIT_DIALECT_PT)
		e->p.pt.vmx_nonroot = guest;
}

int rtit_encoder_start(struct rtit_encoder *e, const struct rtit_enc_sink *sink)
{
	return e->ops->start(e, sink);
}

void rtit_encoder_set_platform(struct rtit_encoder *e, uint8_t cpl, uint64_t cr3, uint64_t cr0,
			       uint8_t mode)
{
	e->ops->set_platform(e, cpl, cr3, cr0, mode);
}

void rtit_encoder_set_if(struct rtit_encoder *e, bool ifl)
{
	if (e->dialect == RTIT_DIALECT_PT)
		rtit_pt_model_set_if(&e->m.pt, ifl);
}

void rtit_encoder_on_batch(struct rtit_encoder *e, const struct rtit_sim_rec *recs, size_t n)
{
	e->ops->on_batch(recs, n, &e->m);
}

int rtit_encoder_msr_write(struct rtit_encoder *e, uint32_t msr, uint64_t value,
			   const struct rtit_sim_rec *ctx)
{
	int ret = e->ops->msr_write(&e->m, msr, value, ctx);
	/* the clock's ratio at the start is the sideband's cbr (D79) */
	if (ret >= 0 && msr == RTIT_SIM_MSR_PERF_STATUS && e->dialect == RTIT_DIALECT_PT)
		e->p.pt.cbr = (uint8_t)(value >> 8);
	return ret;
}

int rtit_encoder_msr_read(struct rtit_encoder *e, uint32_t msr, uint64_t *value,
			  const struct rtit_sim_rec *ctx)
{
	return e->ops->msr_read(&e->m, msr, value, ctx);
}

void rtit_encoder_on_pebs(struct rtit_encoder *e, const struct rtit_sim_pebs *p,
			  const struct rtit_sim_rec *ctx)
{
	/* PEBS output to Intel PT (SDM Vol. 3 20.5.5.2): none on Silvermont */
	if (e->dialect == RTIT_DIALECT_PT)
		rtit_pt_model_on_pebs(&e->m.pt, p, ctx);
}

int rtit_encoder_finish(struct rtit_encoder *e)
{
	return e->ops->finish(e);
}

void rtit_encoder_observe(const struct rtit_encoder *e, struct rtit_enc_state *st)
{
	e->ops->observe(&e->m, st);
}

void rtit_encoder_stats(const struct rtit_encoder *e, struct rtit_enc_stats *st)
{
	e->ops->stats(e, st);
}

void rtit_encoder_sideband(const struct rtit_encoder *e, uint64_t ctl, struct rtit_sideband *sb)
{
	sb->dialect = e->dialect;
	if (!sb->cpu[0])
		snprintf(sb->cpu, sizeof(sb->cpu), "%s", e->ops->cpu);
	e->ops->sideband(e, ctl, sb);
}

bool rtit_encoder_cycle_acc(const struct rtit_encoder *e, uint64_t ctl)
{
	return e->dialect == RTIT_DIALECT_RTIT && (ctl & RTIT_R_CTL_CYCLE_ACC);
}
