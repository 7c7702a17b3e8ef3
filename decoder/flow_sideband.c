/*
 * flow_sideband.c - the flow decoder's configuration from a sideband
 * (rtit_flow_cfg_from_sideband, rtit/flow.h).
 */
#include <string.h>

#include "rtit/flow.h"
#include "rtit/msr_pt.h"
#include "rtit/msr_rtit.h"
#include "rtit/pt_errata.h"

/* A switch's value as the encoders parse it: on unless off/0/no/false. */
static bool is_on(const char *v)
{
	return !strcmp(v, "1") || !strcmp(v, "true") || !strcmp(v, "yes") || !strcmp(v, "on");
}

void rtit_flow_cfg_from_sideband(struct rtit_flow_cfg *cfg, const struct rtit_sideband *sb)
{
	if (sb->dialect >= 0)
		cfg->dialect = sb->dialect;
	if (sb->mode)
		cfg->mode = sb->mode;
	cfg->cycle_acc = sb->cycle_acc > 0;
	cfg->cmprs_ret = sb->cmprs_ret > 0;
	const char *v = rtit_sideband_param(sb, "buffovf_loads_lip");
	cfg->buffovf_loads_lip = v && is_on(v);
	/* the RTIT errata the run switched on (params e1..e8, D17) */
	for (size_t i = 0; i < sb->nparams; i++) {
		const char *k = sb->params[i].key;
		if (k[0] == 'e' && k[1] >= '1' && k[1] <= '8' && !k[2] &&
		    strncmp(sb->params[i].value, "off", 3))
			cfg->errata |= 1u << (k[1] - '0');
	}
	/* CR0.PG at the start (D80): the sideband's param when it has one */
	if ((v = rtit_sideband_param(sb, "cr0_pg")))
		cfg->cr0_pg = !strcmp(v, "-1") ? -1 : is_on(v);
	cfg->event_trace = sb->has_ia32_rtit_ctl &&
			   (sb->ia32_rtit_ctl & RTIT_PT_CTL_EVENT_EN);	/* Table 33-6 */
	cfg->events_only = cfg->event_trace && !(sb->ia32_rtit_ctl & RTIT_PT_CTL_BRANCH_EN);
	/* Intel PT errata: those of the CPU the vector claims (as libipt's
	 * pt_cpu_errata) and those the run switched on (D106) */
	cfg->pt_errata = rtit_pt_cpu_errata_str(sb->cpu) | sb->pt_errata;
	cfg->pt_ctl = sb->ia32_rtit_ctl;
	cfg->pt_ctl_fixed = sb->has_ia32_rtit_ctl && sb->ctl_fixed == 1;
	/* Table 33-52: a VM exit with "Conceal VMX in PT" sends no CFE (D179) */
	cfg->pt_vmx_conceal_exit = (v = rtit_sideband_param(sb, "vmx_conceal_exit")) && is_on(v);
	cfg->pt_vmx_conceal_nonroot = (v = rtit_sideband_param(sb, "vmx_conceal_nonroot")) &&
				      is_on(v);
	cfg->r_ctl = sb->rtit_ctl;
	cfg->r_ctl_fixed = sb->has_rtit_ctl && sb->ctl_fixed == 1;
	cfg->r_lip_exact = sb->dialect == RTIT_DIALECT_RTIT;
	for (int n = 0; n < 4; n++) {
		cfg->pt_addr_a[n] = sb->addr_a[n];
		cfg->pt_addr_b[n] = sb->addr_b[n];
	}
	/* the ranges from the msr lines too (IA32_RTIT_ADDRn_A/B, SDM
	 * 33.2.8.5), for the TIP.PGD check of D137 */
	for (size_t i = 0; i < sb->nmsrs; i++) {
		uint32_t m = sb->msrs[i].msr;
		if (m == RTIT_R_MSR_EVENTS)
			cfg->r_events = sb->msrs[i].value;
		if (m >= RTIT_R_MSR_LIP0 && m <= RTIT_R_MSR_LIP3)
			cfg->r_lip[m - RTIT_R_MSR_LIP0] = sb->msrs[i].value & RTIT_R_LIP_MASK;
		if (m >= RTIT_PT_MSR_ADDR0_A && m < RTIT_PT_MSR_ADDR0_A + 8) {
			unsigned n = (m - RTIT_PT_MSR_ADDR0_A) / 2;
			if ((m - RTIT_PT_MSR_ADDR0_A) % 2)
				cfg->pt_addr_b[n] = sb->msrs[i].value;
			else
				cfg->pt_addr_a[n] = sb->msrs[i].value;
		}
	}
	cfg->mtc_freq = sb->mtc_freq;
	if (sb->art_num && sb->art_den) {
		cfg->art_num = sb->art_num;
		cfg->art_den = sb->art_den;
	}
	cfg->has_end = sb->has_end;
	cfg->end_ip = sb->end_ip;
	cfg->end_after = sb->end_after;
	cfg->overflows_total = sb->overflows;
}
