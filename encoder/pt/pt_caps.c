/*
 * pt_caps.c - CPUID leaf 14H capability profiles (33.3.1, Tables 33-11,
 * 33-12) and the IA32_RTIT_CTL write rule (33.2.8.1-3, Table 33-6).
 */
#include <string.h>

#include "rtit/msr_pt.h"
#include "rtit/error.h"

int rtit_pt_caps_profile(struct rtit_pt_caps *c, int profile)
{
	memset(c, 0, sizeof(*c));
	c->lip = true;
	c->maxphyaddr = 46;
	switch (profile) {
	case RTIT_PT_PROFILE_FULL:
		c->cr3_filter = c->psb_cyc = c->ip_filter = c->mtc = c->ptwrite = true;
		c->power_events = c->psb_pmi_preserve = c->event_trace = c->tnt_disable = true;
		c->topa = c->topa_multi = c->single_range = true;
		c->num_ranges = 4;
		c->mtc_periods = 0xffff;
		c->cyc_thresholds = 0xffff;
		c->psb_freqs = 0xffff;
		return 0;
	case RTIT_PT_PROFILE_BASIC:
		/* The first generation (33.2.7.2 "Single Output Region ToPA
		 * Implementation"): CR3 filtering, ToPA with one entry, no
		 * MTC, CYC, configurable PSB or IP filtering. */
		c->cr3_filter = true;
		c->topa = true;
		c->maxphyaddr = 39;
		return 0;
	case RTIT_PT_PROFILE_CLIENT:
		c->cr3_filter = c->psb_cyc = c->ip_filter = c->mtc = c->ptwrite = true;
		c->power_events = true;
		c->topa = c->topa_multi = c->single_range = true;
		c->num_ranges = 2;
		c->mtc_periods = 0x0249;	/* 0, 3, 6, 9 */
		c->cyc_thresholds = 0x3fff;	/* 0..13 */
		c->psb_freqs = 0x003f;		/* 2K..64K */
		return 0;
	default:
		return -RTIT_ERR_INVALID;
	}
}

int rtit_pt_profile_by_name(const char *name)
{
	if (!strcmp(name, "full"))
		return RTIT_PT_PROFILE_FULL;
	if (!strcmp(name, "basic"))
		return RTIT_PT_PROFILE_BASIC;
	if (!strcmp(name, "client"))
		return RTIT_PT_PROFILE_CLIENT;
	return -1;
}

void rtit_pt_caps_cpuid(const struct rtit_pt_caps *c, unsigned subleaf, uint32_t regs[4])
{
	memset(regs, 0, 4 * sizeof(regs[0]));
	if (subleaf == 0) {
		regs[0] = 1;	/* max sub-leaf */
		regs[1] = (uint32_t)(c->cr3_filter << 0 | c->psb_cyc << 1 | c->ip_filter << 2 |
				     c->mtc << 3 | c->ptwrite << 4 | c->power_events << 5 |
				     c->psb_pmi_preserve << 6 | c->event_trace << 7 |
				     c->tnt_disable << 8);
		regs[2] = (uint32_t)(c->topa << 0 | c->topa_multi << 1 | c->single_range << 2 |
				     c->fabric << 3) | (c->lip ? 1u << 31 : 0);
	} else if (subleaf == 1) {
		regs[0] = (uint32_t)(c->num_ranges & 7) | (uint32_t)c->mtc_periods << 16;
		regs[1] = c->cyc_thresholds | (uint32_t)c->psb_freqs << 16;
	}
}

enum { GP = -1 };

int rtit_pt_ctl_check(const struct rtit_pt_caps *c, uint64_t old, uint64_t v)
{
	uint64_t rsvd = RTIT_PT_CTL_RSVD;

	/* 33.2.8.3: no change while TraceEn=1 unless the write clears it. */
	if ((old & RTIT_PT_CTL_TRACE_EN) && (v & RTIT_PT_CTL_TRACE_EN) && v != old)
		return GP;
	/* Table 33-6: bits of features the profile lacks are reserved. */
	if (!c->psb_cyc)
		rsvd |= RTIT_PT_CTL_CYC_EN | RTIT_PT_CTL_CYC_THRESH_MASK | RTIT_PT_CTL_PSB_FREQ_MASK;
	if (!c->ptwrite)
		rsvd |= RTIT_PT_CTL_FUP_ON_PTW | RTIT_PT_CTL_PTW_EN;
	if (!c->fabric)
		rsvd |= RTIT_PT_CTL_FABRIC_EN;
	if (!c->cr3_filter)
		rsvd |= RTIT_PT_CTL_CR3_FILTER;
	if (!c->mtc)
		rsvd |= RTIT_PT_CTL_MTC_EN | RTIT_PT_CTL_MTC_FREQ_MASK;
	if (!c->event_trace)
		rsvd |= RTIT_PT_CTL_EVENT_EN;
	if (!c->tnt_disable)
		rsvd |= RTIT_PT_CTL_DIS_TNT;
	if (!c->psb_pmi_preserve)
		rsvd |= RTIT_PT_CTL_INJECT_PSB_PMI;
	/* PwrEvtEn: Table 33-6 does not mark it, 33.2.8.1 "unsupported
	 * features" does (docs/decisions.md). */
	if (!c->power_events)
		rsvd |= RTIT_PT_CTL_PWR_EVT_EN;
	for (unsigned n = 0; n < RTIT_PT_MAX_RANGES; n++) {
		unsigned cfg = (unsigned)((v & RTIT_PT_CTL_ADDR_CFG_MASK(n)) >> RTIT_PT_CTL_ADDR_CFG_SHIFT(n));
		if (n >= c->num_ranges || !c->ip_filter)
			rsvd |= RTIT_PT_CTL_ADDR_CFG_MASK(n);
		else if (cfg > RTIT_PT_ADDR_STOP)
			return GP;
	}
	if (v & rsvd)
		return GP;
	/* Unsupported encodings (Table 33-6, CPUID.14H.1). */
	if ((v & RTIT_PT_CTL_MTC_EN) || (v & RTIT_PT_CTL_MTC_FREQ_MASK)) {
		unsigned f = (unsigned)((v & RTIT_PT_CTL_MTC_FREQ_MASK) >> RTIT_PT_CTL_MTC_FREQ_SHIFT);
		if (!(c->mtc_periods >> f & 1))
			return GP;
	}
	if (c->psb_cyc) {
		unsigned t = (unsigned)((v & RTIT_PT_CTL_CYC_THRESH_MASK) >> RTIT_PT_CTL_CYC_THRESH_SHIFT);
		unsigned p = (unsigned)((v & RTIT_PT_CTL_PSB_FREQ_MASK) >> RTIT_PT_CTL_PSB_FREQ_SHIFT);
		if (!(c->cyc_thresholds >> t & 1) || !(c->psb_freqs >> p & 1))
			return GP;
	}
	/* Table 33-6 bit 8: ToPA=1 needs ToPA output; TraceEn with ToPA=0
	 * and FabricEn=0 needs single-range output. */
	if ((v & RTIT_PT_CTL_TOPA) && !c->topa)
		return GP;
	if ((v & RTIT_PT_CTL_TRACE_EN) && !(v & (RTIT_PT_CTL_TOPA | RTIT_PT_CTL_FABRIC_EN)) &&
	    !c->single_range)
		return GP;
	return 0;
}
