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
#include "rtit/opcodes_rtit.h"
#include "rtit/bits.h"
#include "rtit/rtit_state.h"
#include "rtit_internal.h"

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

/* 3.3.1 (RTIT_CTL read first) and each register's reserved bits: 0, or
 * GP.  Checked when the WRMSR executes: a #GP replaces the instruction. */
static int msr_check(const struct rtit_r_model *m, uint32_t msr, uint64_t v)
{
	if (!is_rtit_msr(msr) || !m->ctl_read)
		return GP;
	switch (msr) {
	case RTIT_R_MSR_CTL: return v & RTIT_R_CTL_RSVD ? GP : 0;
	case RTIT_R_MSR_STATUS: return v & RTIT_R_STATUS_RSVD ? GP : 0;
	case RTIT_R_MSR_CNTP: return v & RTIT_R_CNTP_RSVD ? GP : 0;
	case RTIT_R_MSR_EVENTS: return v & RTIT_R_EVENTS_RSVD ? GP : 0;
	case RTIT_R_MSR_LAST_LIP: return v & RTIT_R_LAST_LIP_RSVD ? GP : 0;
	case RTIT_R_MSR_LAST_CALL_NLIP: return v & RTIT_R_LAST_CALL_RSVD ? GP : 0;
	case RTIT_R_MSR_BASE_ADDR: return v & RTIT_R_BASE_RSVD ? GP : 0;
	case RTIT_R_MSR_LIMIT_MASK: return v & RTIT_R_LIMIT_RSVD ? GP : 0;
	case RTIT_R_MSR_OFFSET: return v & RTIT_R_OFFSET_RSVD ? GP : 0;
	case RTIT_R_MSR_CR3_MATCH: return v & RTIT_R_CR3_MATCH_RSVD ? GP : 0;
	case RTIT_R_MSR_PKT_CNT: return v & RTIT_R_PKT_CNT_RSVD ? GP : 0;
	/* 3.3.13: writing all zeros is #GP. */
	case RTIT_R_MSR_TNT_BUFF: return (v & RTIT_R_TNT_BUFF_RSVD) || !v ? GP : 0;
	default: return 0;	/* RTIT_LIPn: [63:48] ignored (Table 8) */
	}
}

/*
 * A checked write reaches the registers (shared with rtit_model.c, which
 * applies a guest WRMSR's write when that WRMSR retires, D76).  Returns
 * true when the write may change an enable (RTIT_CTL, RTIT_STATUS,
 * RTIT_EVENTS, RTIT_CR3_MATCH).  No packet is sent here.
 */
bool rtit_r_model_apply_write(struct rtit_r_model *m, uint32_t msr, uint64_t v)
{
	switch (msr) {
	case RTIT_R_MSR_LIP0: case RTIT_R_MSR_LIP1: case RTIT_R_MSR_LIP2: case RTIT_R_MSR_LIP3:
		/* Table 8: writes to [63:48] have no effect. */
		m->lip[msr - RTIT_R_MSR_LIP0] = v & RTIT_R_LIP_MASK;
		return false;
	case RTIT_R_MSR_CTL:
		if ((m->ctl ^ v) & RTIT_R_CTL_MTC_RANGE_MASK) {
			/* 4.2.12: an MTC goes out when the watched TSC bits
			 * change, i.e. when TSC[s] next toggles in the new
			 * range; the write itself sends none (D78). */
			unsigned rng = (unsigned)((v & RTIT_R_CTL_MTC_RANGE_MASK) >>
						  RTIT_R_CTL_MTC_RANGE_SHIFT);
			m->mtc_bits = (uint8_t)(m->last_tsc >> RTIT_R_MTC_SHIFT(rng));
		}
		m->ctl = v;
		/* 3.3.2: a write to RTIT_CTL drains the buffer. */
		rtit_r_model_drain(m);
		return true;
	case RTIT_R_MSR_STATUS:
		/* 3.3.3: ContextEn/TriggerEn writes are ignored; FilterEn is
		 * writable (D71); setting Buffer_Overflow acts as an
		 * overflow, clearing it sends no FUP.BuffOvf (4.2.5). */
		m->filter_en = v & RTIT_R_STATUS_FILTER_EN;
		m->in_range[0] = m->in_range[1] = m->filter_en;
		m->buff_ovf = v & RTIT_R_STATUS_BUFF_OVF;
		return true;
	case RTIT_R_MSR_CNTP:
		m->cntp.v = (uint32_t)v;
		return false;
	case RTIT_R_MSR_EVENTS:
		m->events = v;
		return true;
	case RTIT_R_MSR_LAST_LIP:
		m->lastlip.ip = ((v & 0xffff) << 16) | (((v >> 16) & 0xffff) << 32);
		m->lastlip.valid = v & RTIT_R_LAST_LIP_VALID;
		return false;
	case RTIT_R_MSR_LAST_CALL_NLIP:
		m->retc.nlip = v & RTIT_R_LIP_MASK;
		m->retc.valid = v & RTIT_R_LAST_CALL_VALID;
		return false;
	case RTIT_R_MSR_BASE_ADDR:
		m->base = v;
		return false;
	case RTIT_R_MSR_LIMIT_MASK:
		m->limit = v | RTIT_R_LIMIT_LOW;
		return false;
	case RTIT_R_MSR_OFFSET:
		m->offset = v;
		return false;
	case RTIT_R_MSR_CR3_MATCH:
		m->cr3_match = v;
		return true;
	case RTIT_R_MSR_PKT_CNT:
		m->pktcnt.cnt = (uint16_t)(v & RTIT_R_PKT_CNT_MASK);
		m->pktcnt.mask = (uint8_t)((v >> RTIT_R_PKT_MASK_SHIFT) & 3);
		return false;
	case RTIT_R_MSR_TNT_BUFF:
		m->tnt.v = (uint8_t)v;
		return false;
	default:
		return false;
	}
}

/* A write with no WRMSR record of its own (a debugger's preset before the
 * run, ctx NULL or kind 0; an external write, ctx the event's record, D13):
 * it takes effect now. */
void rtit_r_model_write_now(struct rtit_r_model *m, uint32_t msr, uint64_t v,
			    const struct rtit_sim_rec *ctx)
{
	bool trig0 = rtit_r_trigger_en(m), pe0 = rtit_r_packet_en(m);

	if (!rtit_r_model_apply_write(m, msr, v)) {
		if (msr == RTIT_R_MSR_PKT_CNT)
			rtit_r_model_pktcnt_written(m, ctx && ctx->kind);
		return;
	}
	if (!ctx || !ctx->kind) {
		/* The packets it causes carry the IP of the first
		 * instruction (rtit_model.c). */
		if (!m->deferred_enable) {
			m->deferred_enable = true;
			m->deferred_trig0 = trig0;
			m->deferred_pe0 = pe0;
		}
		return;
	}
	rtit_r_model_on_enable_change(m, trig0, pe0, ctx->ip + ctx->len);
}

int rtit_r_model_msr_write(void *opaque, uint32_t msr, uint64_t v,
			   const struct rtit_sim_rec *ctx)
{
	struct rtit_r_model *m = opaque;

	if (msr == RTIT_SIM_MSR_PERF_STATUS && (!ctx || !ctx->kind)) {
		/* the platform's core:bus ratio, for STS (4.2.13, D79): the
		 * actual and the effective ratio (no clock modulation) */
		m->p.acbr = m->p.ecbr = (uint8_t)(v >> 8);
		return 0;
	}
	if (msr_check(m, msr, v) < 0)
		return GP;
	if (ctx && ctx->kind == RTIT_SIM_INSN) {
		/* A guest WRMSR: the write takes effect when the WRMSR
		 * retires, so its record applies it (D76, rtit_model.c). */
		if (m->wr_pending) {	/* a record that never came */
			struct rtit_sim_rec at = { .kind = RTIT_SIM_INSN, .ip = m->wr_ip,
						   .len = m->wr_len };
			m->wr_pending = false;
			rtit_r_model_write_now(m, m->wr_msr, m->wr_value, &at);
		}
		m->wr_pending = true;
		m->wr_msr = msr;
		m->wr_value = v;
		m->wr_ip = ctx->ip;
		m->wr_len = ctx->len;
	} else {
		rtit_r_model_write_now(m, msr, v, ctx);
	}
	rtit_r_model_after_msr(m);
	return 0;
}
