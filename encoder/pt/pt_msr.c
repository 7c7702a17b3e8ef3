/*
 * pt_msr.c - RDMSR/WRMSR of the Intel PT registers (33.2.8) and their side
 * effects: #GP on reserved bits, unsupported features and encodings
 * (33.2.8.1, Table 33-6), on writes while TraceEn=1 (33.2.8.3-8), and the
 * packets of a write to IA32_RTIT_CTL (Table 33-56 cases 1-3).
 */
#include "rtit/pt_encoder.h"
#include "rtit/msr_pt.h"
#include "rtit/bits.h"
#include "pt_internal.h"

enum { GP = -1 };

/* Whether @msr exists in the profile (33.2.8.5-8). */
static bool pt_msr_exists(const struct rtit_pt_model *m, uint32_t msr)
{
	const struct rtit_pt_caps *c = &m->p.caps;

	switch (msr) {
	case RTIT_PT_MSR_CTL: case RTIT_PT_MSR_STATUS:
		return true;
	case RTIT_PT_MSR_CR3_MATCH:
		return c->cr3_filter;
	case RTIT_PT_MSR_OUTPUT_BASE: case RTIT_PT_MSR_OUTPUT_MASK_PTRS:
		return c->topa || c->single_range;
	default:
		if (msr >= RTIT_PT_MSR_ADDR0_A && msr <= RTIT_PT_MSR_ADDR3_B)
			return c->ip_filter && (msr - RTIT_PT_MSR_ADDR0_A) / 2 < c->num_ranges;
		return false;
	}
}

int rtit_pt_model_msr_read(void *opaque, uint32_t msr, uint64_t *value,
			   const struct rtit_sim_rec *ctx)
{
	struct rtit_pt_model *m = opaque;
	uint64_t v;

	(void)ctx;
	if (!pt_msr_exists(m, msr))
		return GP;
	switch (msr) {
	case RTIT_PT_MSR_CTL: v = m->ctl; break;
	case RTIT_PT_MSR_STATUS:
		v = (m->status & ~(RTIT_PT_STATUS_RO | RTIT_PT_STATUS_BYTECNT_MASK)) |
		    (m->filter_en && rtit_pt_trigger_en(m) ? RTIT_PT_STATUS_FILTER_EN : 0) |
		    (rtit_pt_context_en(m) && rtit_pt_trigger_en(m) ? RTIT_PT_STATUS_CONTEXT_EN : 0) |
		    (rtit_pt_trigger_en(m) ? RTIT_PT_STATUS_TRIGGER_EN : 0);
		/* Table 33-7, D20: the low 17 bits of the unbounded byte count. */
		if (m->p.caps.psb_cyc)
			v |= (m->pkt_bytes & rtit_mask(RTIT_PT_STATUS_BYTECNT_BITS)) << RTIT_PT_STATUS_BYTECNT_SHIFT;
		break;
	case RTIT_PT_MSR_CR3_MATCH: v = m->cr3_match; break;
	case RTIT_PT_MSR_OUTPUT_BASE: v = m->out_base; break;
	case RTIT_PT_MSR_OUTPUT_MASK_PTRS:
		/* Updated as the output advances (33.2.8.8: asynchronous
		 * while TraceEn=1; exact here). */
		if ((m->ctl & RTIT_PT_CTL_TRACE_EN) && m->out_ready)
			rtit_pt_output_save(m);
		v = m->out_mask;
		break;
	default: {
		unsigned i = msr - RTIT_PT_MSR_ADDR0_A;
		v = i & 1 ? m->addr_b[i / 2] : m->addr_a[i / 2];
		break;
	}
	}
	*value = v;
	return 0;
}

static int msr_write(struct rtit_pt_model *m, uint32_t msr, uint64_t v,
		     const struct rtit_sim_rec *ctx)
{
	const struct rtit_pt_caps *c = &m->p.caps;
	bool te = m->ctl & RTIT_PT_CTL_TRACE_EN;

	if (!pt_msr_exists(m, msr))
		return GP;
	/* 33.2.8.1: configuration MSRs other than CTL are not writable while
	 * TraceEn=1. */
	if (te && msr != RTIT_PT_MSR_CTL)
		return GP;
	switch (msr) {
	case RTIT_PT_MSR_CTL: {
		uint64_t old = m->ctl;
		bool pe0 = rtit_pt_packet_en(m);
		if (rtit_pt_ctl_check(c, old, v))
			return GP;
		if (v == old)
			return 0;
		if (((old ^ v) & RTIT_PT_CTL_TRACE_EN) == 0) {
			m->ctl = v;
			return 0;
		}
		if (!(v & RTIT_PT_CTL_TRACE_EN)) {
			/* TraceEn 1->0: the FUP/TIP.PGD and the flush use the
			 * configuration tracing ran with (33.2.8.3); the write
			 * may change other bits too.  A debugger's write has no
			 * record: the IP is where execution goes on; an enable
			 * no record has seen yet is simply cancelled. */
			bool seen = !m->deferred_enable || m->deferred_trig0;
			uint64_t ip = ctx ? ctx->ip : m->next_ip;
			m->deferred_enable = false;
			m->ctl = old & ~RTIT_PT_CTL_TRACE_EN;
			if (seen) {
				if (ctx)
					rtit_pt_time_to(m, ctx);
				m->cur = ctx;
				rtit_pt_on_ctl_write(m, old, pe0, ip, ip);
				m->cur = NULL;
			}
			m->ctl = v;
			return 0;
		}
		m->ctl = v;
		if (!ctx) {
			/* A debugger's enable: the packets carry the IP of the
			 * next record (pt_model.c). */
			if (!m->deferred_enable) {
				m->deferred_enable = true;
				m->deferred_trig0 = false;
				m->deferred_pe0 = false;
			}
			return 0;
		}
		rtit_pt_time_to(m, ctx);
		m->cur = ctx;
		rtit_pt_on_ctl_write(m, old, pe0, ctx->ip, ctx->ip + ctx->len);
		m->cur = NULL;
		return 0;
	}
	case RTIT_PT_MSR_STATUS: {
		uint64_t rsvd = RTIT_PT_STATUS_RSVD;
		if (!c->psb_pmi_preserve)
			rsvd |= RTIT_PT_STATUS_PEND_PSB | RTIT_PT_STATUS_PEND_TOPA_PMI;
		if (!c->psb_cyc)
			rsvd |= RTIT_PT_STATUS_BYTECNT_MASK;
		if (v & rsvd)
			return GP;
		/* Table 33-7: FilterEn, ContextEn, TriggerEn writes ignored. */
		m->status = v & ~(RTIT_PT_STATUS_RO | RTIT_PT_STATUS_BYTECNT_MASK);
		m->pkt_bytes = (v & RTIT_PT_STATUS_BYTECNT_MASK) >> RTIT_PT_STATUS_BYTECNT_SHIFT;
		return 0;
	}
	case RTIT_PT_MSR_CR3_MATCH:
		if (v & RTIT_PT_CR3_MATCH_RSVD)
			return GP;
		m->cr3_match = v;
		return 0;
	case RTIT_PT_MSR_OUTPUT_BASE:
		if ((v & RTIT_PT_OUTPUT_BASE_LOW_RSVD) || (v >> (c->maxphyaddr ? c->maxphyaddr : 52)))
			return GP;
		m->out_base = v;
		return 0;
	case RTIT_PT_MSR_OUTPUT_MASK_PTRS:
		/* Table 33-9: LowerMask forced to 1, writes ignored. */
		m->out_mask = v | RTIT_PT_MASK_LOWER;
		return 0;
	default: {
		unsigned i = msr - RTIT_PT_MSR_ADDR0_A;
		if (!rtit_pt_canonical(v))
			return GP;	/* 33.2.8.5 */
		if (i & 1)
			m->addr_b[i / 2] = v;
		else
			m->addr_a[i / 2] = v;
		return 0;
	}
	}
}

int rtit_pt_model_msr_write(void *opaque, uint32_t msr, uint64_t v,
			    const struct rtit_sim_rec *ctx)
{
	struct rtit_pt_model *m = opaque;
	/* The simulator's presets (a scenario's msr lines) come with a
	 * record of kind 0: a debugger's write, no instruction. */
	if (ctx && !ctx->kind)
		ctx = NULL;
	if (msr == RTIT_SIM_MSR_PERF_STATUS && !ctx) {
		/* the platform's core:bus ratio, for CBR (33.4.2.13, D79) */
		m->p.cbr = (uint8_t)(v >> 8);
		return 0;
	}
	int ret = msr_write(m, msr, v, ctx);
	rtit_pt_fast_refresh(m);
	rtit_pt_out_flush(m);
	return ret;
}
