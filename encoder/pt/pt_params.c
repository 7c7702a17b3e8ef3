/* pt_params.c - Intel PT model parameters: defaults and "param KEY = VALUE". */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../param_parse.h"
#include "rtit/pt_encoder.h"

void rtit_pt_params_default(struct rtit_pt_params *p)
{
	memset(p, 0, sizeof(*p));
	(void)rtit_pt_caps_profile(&p->caps, RTIT_PT_PROFILE_FULL);
	p->drain_num = 1;
	p->drain_den = 1;
	p->art_num = 1;
	p->art_den = 1;
	p->cbr = 16;
	/* 33.1 "e.g., every 4K trace packet bytes" when PSBFreq is not
	 * configurable (CPUID.14H.0:EBX[1]=0). */
	p->psb_period_nocfg = 4096;
}

/* "cpu = F/M[/S]" (the errata of that CPU the model has, as libipt 2.0.5's
 * pt_cpu_errata lists them; D100), or one erratum by name (D101-D104). */
static int errata_param(struct rtit_pt_params *p, const char *key, const char *value,
			char *err, size_t errlen)
{
	unsigned f, m, s;
	bool on;

	if (!strcmp(key, "cpu")) {
		int k = rtit_pt_cpu_parse(value, &f, &m, &s);
		if (k < 0)
			return rtit_param_bad(err, errlen, key, value,
					      "default or FAMILY/MODEL[/STEPPING] (e.g. 6/0x4e/3)");
		p->errata = k ? rtit_pt_cpu_errata(f, m) & RTIT_PT_ERRATA_MODELLED : 0;
		return 0;
	}
	unsigned bit = RTIT_PT_ERRATUM(rtit_pt_erratum_by_name(key));
	if (!(bit & RTIT_PT_ERRATA_MODELLED)) {
		snprintf(err, errlen, "erratum %s is not modelled (docs/decisions.md D100)", key);
		return -RTIT_ERR_BAD_CONFIG;
	}
	if (rtit_param_bool(value, &on))
		return rtit_param_bad(err, errlen, key, value, "on or off");
	p->errata = on ? p->errata | bit : p->errata & ~bit;
	return 0;
}

int rtit_pt_param_set(struct rtit_pt_params *p, const char *key, const char *value,
		      char *err, size_t errlen)
{
	struct rtit_pt_caps *c = &p->caps;
	struct { const char *name; bool *b; } caps[] = {
		{ "cr3_filter", &c->cr3_filter }, { "psb_cyc", &c->psb_cyc },
		{ "ip_filter", &c->ip_filter }, { "mtc", &c->mtc }, { "ptwrite", &c->ptwrite },
		{ "power_events", &c->power_events }, { "psb_pmi_preserve", &c->psb_pmi_preserve },
		{ "event_trace", &c->event_trace }, { "tnt_disable", &c->tnt_disable },
		{ "topa", &c->topa }, { "topa_multi", &c->topa_multi },
		{ "single_range", &c->single_range }, { "fabric", &c->fabric },
		{ "long_tnt", &p->long_tnt }, { "pgd_stop_suppressed", &p->pgd_stop_suppressed },
		{ "filter_sequential", &p->filter_sequential }, { "psb_mode_tsx", &p->psb_mode_tsx },
		{ "vmx_conceal_nonroot", &p->vmx_conceal_nonroot },
		{ "vmx_conceal_exit", &p->vmx_conceal_exit },
		{ "vmx_conceal_entry", &p->vmx_conceal_entry },
		{ "vmx_guest_only", &p->vmx_guest_only }, { "vmx_nonroot", &p->vmx_nonroot },
		{ "vmx_tsc_offsetting", &p->vmx_tsc_offsetting },
		{ "vmx_tsc_scaling", &p->vmx_tsc_scaling },
	};
	uint64_t v, w;

	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		if (strcmp(key, caps[i].name))
			continue;
		if (rtit_param_bool(value, caps[i].b))
			return rtit_param_bad(err, errlen, key, value, "a boolean");
		return 0;
	}
	if (!strcmp(key, "profile")) {
		int id = rtit_pt_profile_by_name(value);
		if (id < 0)
			return rtit_param_bad(err, errlen, key, value, "full, basic or client");
		(void)rtit_pt_caps_profile(c, id);
	} else if (!strcmp(key, "buffer_bytes") || !strcmp(key, "drain")) {
		return rtit_param_buffer(key, value, &p->buffer_bytes, &p->drain_num,
					 &p->drain_den, err, errlen);
	} else if (!strcmp(key, "art")) {
		if (rtit_param_ratio(value, &v, &w) || !v || v > UINT32_MAX || w > UINT32_MAX)
			return rtit_param_bad(err, errlen, key, value, "TSC:ART as NUM/DEN (CPUID.15H)");
		p->art_num = (uint32_t)v;
		p->art_den = (uint32_t)w;
	} else if (!strcmp(key, "cbr")) {
		snprintf(err, errlen, "parameter 'cbr' is gone: the CBR core:bus ratio is the clock's "
			 "(clock core_ratio=N, event freq ratio=N; D79)");
		return -RTIT_ERR_BAD_CONFIG;
	} else if (!strcmp(key, "vmcs")) {
		if (rtit_param_u64(value, &v) || (v & 0xfff) || v >> 52)
			return rtit_param_bad(err, errlen, key, value, "a 4K-aligned VMCS pointer below 2^52");
		p->vmcs = v;
	} else if (!strcmp(key, "vmx_entry_ctl")) {
		if (rtit_param_u64(value, &v))
			return rtit_param_bad(err, errlen, key, value, "an IA32_RTIT_CTL value");
		p->vmx_entry_ctl = v;
		p->vmx_entry_ctl_on = true;
	} else if (!strcmp(key, "pad_align")) {
		if (rtit_param_u64(value, &v) || v > 4096 || (v & (v - 1)))
			return rtit_param_bad(err, errlen, key, value, "0 or a power of two up to 4096");
		p->pad_align = (uint32_t)v;
	} else if (!strcmp(key, "mnt")) {
		if (rtit_param_u64(value, &v))
			return rtit_param_bad(err, errlen, key, value, "a 64-bit MNT payload");
		p->mnt = v;
		p->mnt_on = true;
	} else if (!strcmp(key, "deferred_tips")) {
		if (rtit_param_u64(value, &v) || v > RTIT_PT_MAX_DEFERRED)
			return rtit_param_bad(err, errlen, key, value, "0 (off) to 16 TIPs");
		p->deferred_tips = (uint8_t)v;
	} else if (!strcmp(key, "cyc_standalone")) {
		if (rtit_param_u64(value, &v) || v > (1u << 20))
			return rtit_param_bad(err, errlen, key, value, "0 (off) or cycles up to 2^20");
		p->cyc_standalone = (uint32_t)v;
	} else if (!strcmp(key, "ip_compression")) {
		if (!strcmp(value, "shortest"))
			p->ip_choice = RTIT_PT_IP_SHORTEST;
		else if (!strcmp(value, "update48"))
			p->ip_choice = RTIT_PT_IP_UPDATE48;
		else if (!strcmp(value, "full"))
			p->ip_choice = RTIT_PT_IP_FULL;
		else
			return rtit_param_bad(err, errlen, key, value, "shortest, update48 or full");
	} else if (!strcmp(key, "ranges")) {
		if (rtit_param_u64(value, &v) || v > RTIT_PT_MAX_RANGES)
			return rtit_param_bad(err, errlen, key, value, "0 to 4 address ranges");
		c->num_ranges = (uint8_t)v;
	} else if (!strcmp(key, "mtc_periods") || !strcmp(key, "cyc_thresholds") ||
		   !strcmp(key, "psb_freqs")) {
		if (rtit_param_u64(value, &v) || v > 0xffff)
			return rtit_param_bad(err, errlen, key, value, "a 16-bit bitmap");
		*(key[0] == 'm' ? &c->mtc_periods : key[0] == 'c' ? &c->cyc_thresholds :
		  &c->psb_freqs) = (uint16_t)v;
	} else if (!strcmp(key, "cpu") || rtit_pt_erratum_by_name(key) >= 0) {
		return errata_param(p, key, value, err, errlen);
	} else {
		snprintf(err, errlen, "unknown Intel PT parameter '%s'", key);
		return -RTIT_ERR_BAD_CONFIG;
	}
	return 0;
}
