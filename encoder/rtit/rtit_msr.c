/*
 * rtit_msr.c - RDMSR/WRMSR of the RTIT registers (RTIT 3.3) and their side
 * effects: the RTIT_CTL read-first rule (3.3.1), #GP on reserved bits, the
 * drain and PSB/FUP.PGE/FUP.PGD of a write to RTIT_CTL (3.3.2), and the
 * save/restore state an OS context-switches (TNT_BUFF, LAST_LIP,
 * LAST_CALL_NLIP, CNTP, PKT_CNT).
 */
#include <string.h>

#include "rtit/rtit_encoder.h"
#include "rtit/msr_rtit.h"
#include "rtit/bits.h"
#include "rtit/rtit_state.h"

/* Shared with rtit_model.c. */
void rtit_r_model_on_enable_change(struct rtit_r_model *m, bool trig0, bool pe0,
				   uint64_t nlip);

enum { GP = -1 };

static bool is_rtit_msr(uint32_t msr)
{
	switch (msr) {
	case RTIT_R_MSR_LIP0: case RTIT_R_MSR_LIP1: case RTIT_R_MSR_LIP2: case RTIT_R_MSR_LIP3:
	case RTIT_R_MSR_CTL: case RTIT_R_MSR_STATUS: case RTIT_R_MSR_CNTP: case RTIT_R_MSR_EVENTS:
	case RTIT_R_MSR_LAST_LIP: case RTIT_R_MSR_LAST_CALL_NLIP: case RTIT_R_MSR_BASE_ADDR:
	case RTIT_R_MSR_LIMIT_MASK: case RTIT_R_MSR_OFFSET: case RTIT_R_MSR_CR3_MATCH:
	case RTIT_R_MSR_PKT_CNT: case RTIT_R_MSR_TNT_BUFF:
		return true;
	default:
		return false;
	}
}

int rtit_r_model_msr_read(void *opaque, uint32_t msr, uint64_t *value,
			  const struct rtit_sim_rec *ctx)
{
	struct rtit_r_model *m = opaque;
	uint64_t v;

	(void)ctx;
	if (!is_rtit_msr(msr))
		return GP;
	/* 3.3.1: until RTIT_CTL has been read, reading any other RTIT MSR
	 * is #GP. */
	if (msr == RTIT_R_MSR_CTL)
		m->ctl_read = true;
	else if (!m->ctl_read)
		return GP;

	switch (msr) {
	case RTIT_R_MSR_LIP0: case RTIT_R_MSR_LIP1: case RTIT_R_MSR_LIP2: case RTIT_R_MSR_LIP3:
		/* Table 8: [63:48] read as the sign of bit 47 (D71). */
		v = rtit_sext(m->lip[msr - RTIT_R_MSR_LIP0], 48);
		break;
	case RTIT_R_MSR_CTL: v = m->ctl; break;
	case RTIT_R_MSR_STATUS:
		v = (m->filter_en ? RTIT_R_STATUS_FILTER_EN : 0) |
		    (rtit_r_context_en(m) ? RTIT_R_STATUS_CONTEXT_EN : 0) |
		    (rtit_r_trigger_en(m) ? RTIT_R_STATUS_TRIGGER_EN : 0) |
		    (m->buff_ovf ? RTIT_R_STATUS_BUFF_OVF : 0);
		break;
	case RTIT_R_MSR_CNTP: v = m->cntp.v; break;
	case RTIT_R_MSR_EVENTS: v = m->events; break;
	case RTIT_R_MSR_LAST_LIP:
		/* Table 9: LIP[31:16] in [15:0], LIP[47:32] in [31:16]. */
		v = ((m->lastlip.ip >> 16) & 0xffff) | (((m->lastlip.ip >> 32) & 0xffff) << 16) |
		    (m->lastlip.valid ? RTIT_R_LAST_LIP_VALID : 0);
		break;
	case RTIT_R_MSR_LAST_CALL_NLIP:
		v = m->retc.nlip | (m->retc.valid ? RTIT_R_LAST_CALL_VALID : 0);
		break;
	case RTIT_R_MSR_BASE_ADDR: v = m->base; break;
	case RTIT_R_MSR_LIMIT_MASK: v = m->limit | RTIT_R_LIMIT_LOW; break;
	case RTIT_R_MSR_OFFSET: v = m->offset; break;
	case RTIT_R_MSR_CR3_MATCH: v = m->cr3_match; break;
	case RTIT_R_MSR_PKT_CNT:
		v = m->pktcnt.cnt | ((uint64_t)m->pktcnt.mask << RTIT_R_PKT_MASK_SHIFT);
		break;
	case RTIT_R_MSR_TNT_BUFF: v = m->tnt.v; break;
	default: return GP;
	}
	*value = v;
	return 0;
}

static int msr_write(struct rtit_r_model *m, uint32_t msr, uint64_t v,
		     const struct rtit_sim_rec *ctx);

void rtit_r_model_after_msr(struct rtit_r_model *m);

int rtit_r_model_msr_write(void *opaque, uint32_t msr, uint64_t v,
			   const struct rtit_sim_rec *ctx)
{
	struct rtit_r_model *m = opaque;
	int ret = msr_write(m, msr, v, ctx);
	rtit_r_model_after_msr(m);
	return ret;
}

static int msr_write(struct rtit_r_model *m, uint32_t msr, uint64_t v,
		     const struct rtit_sim_rec *ctx)
{
	bool trig0 = rtit_r_trigger_en(m), pe0 = rtit_r_packet_en(m);
	uint64_t nlip = ctx && ctx->kind ? ctx->ip + ctx->len : 0;

	if (!is_rtit_msr(msr) || !m->ctl_read)	/* 3.3.1 */
		return GP;

	switch (msr) {
	case RTIT_R_MSR_LIP0: case RTIT_R_MSR_LIP1: case RTIT_R_MSR_LIP2: case RTIT_R_MSR_LIP3:
		/* Table 8: writes to [63:48] have no effect. */
		m->lip[msr - RTIT_R_MSR_LIP0] = v & RTIT_R_LIP_MASK;
		return 0;
	case RTIT_R_MSR_CTL:
		if (v & RTIT_R_CTL_RSVD)
			return GP;
		m->ctl = v;
		/* 3.3.2: a write to RTIT_CTL drains the buffer. */
		rtit_r_model_drain(m);
		break;
	case RTIT_R_MSR_STATUS:
		if (v & RTIT_R_STATUS_RSVD)
			return GP;
		/* 3.3.3: ContextEn/TriggerEn writes are ignored; FilterEn is
		 * writable (D71); setting Buffer_Overflow acts as an
		 * overflow, clearing it sends no FUP.BuffOvf. */
		m->filter_en = v & RTIT_R_STATUS_FILTER_EN;
		m->in_range[0] = m->in_range[1] = m->filter_en;
		m->buff_ovf = v & RTIT_R_STATUS_BUFF_OVF;
		break;
	case RTIT_R_MSR_CNTP:
		if (v & RTIT_R_CNTP_RSVD)
			return GP;
		m->cntp.v = (uint32_t)v;
		return 0;
	case RTIT_R_MSR_EVENTS:
		if (v & RTIT_R_EVENTS_RSVD)
			return GP;
		m->events = v;
		break;
	case RTIT_R_MSR_LAST_LIP:
		if (v & RTIT_R_LAST_LIP_RSVD)
			return GP;
		m->lastlip.ip = ((v & 0xffff) << 16) | (((v >> 16) & 0xffff) << 32);
		m->lastlip.valid = v & RTIT_R_LAST_LIP_VALID;
		return 0;
	case RTIT_R_MSR_LAST_CALL_NLIP:
		if (v & RTIT_R_LAST_CALL_RSVD)
			return GP;
		m->retc.nlip = v & RTIT_R_LIP_MASK;
		m->retc.valid = v & RTIT_R_LAST_CALL_VALID;
		return 0;
	case RTIT_R_MSR_BASE_ADDR:
		if (v & RTIT_R_BASE_RSVD)
			return GP;
		m->base = v;
		return 0;
	case RTIT_R_MSR_LIMIT_MASK:
		if (v & RTIT_R_LIMIT_RSVD)
			return GP;
		m->limit = v | RTIT_R_LIMIT_LOW;
		return 0;
	case RTIT_R_MSR_OFFSET:
		if (v & RTIT_R_OFFSET_RSVD)
			return GP;
		m->offset = v;
		return 0;
	case RTIT_R_MSR_CR3_MATCH:
		if (v & RTIT_R_CR3_MATCH_RSVD)
			return GP;
		m->cr3_match = v;
		break;
	case RTIT_R_MSR_PKT_CNT:
		if (v & RTIT_R_PKT_CNT_RSVD)
			return GP;
		m->pktcnt.cnt = (uint16_t)(v & RTIT_R_PKT_CNT_MASK);
		m->pktcnt.mask = (uint8_t)((v >> RTIT_R_PKT_MASK_SHIFT) & 3);
		return 0;
	case RTIT_R_MSR_TNT_BUFF:
		/* 3.3.13: writing all zeros is #GP. */
		if ((v & RTIT_R_TNT_BUFF_RSVD) || !v)
			return GP;
		m->tnt.v = (uint8_t)v;
		return 0;
	default:
		return GP;
	}
	if (!ctx || !ctx->kind) {
		/* A debugger's write before the run: the packets it causes
		 * carry the IP of the first instruction (rtit_model.c). */
		if (!m->deferred_enable) {
			m->deferred_enable = true;
			m->deferred_trig0 = trig0;
			m->deferred_pe0 = pe0;
		}
		return 0;
	}
	rtit_r_model_on_enable_change(m, trig0, pe0, nlip);
	{
		m->wrmsr_done = true;
		m->wrmsr_ip = ctx->ip;
	}
	return 0;
}
