/* rtit_params.c - RTIT model parameters: defaults and "param KEY = VALUE". */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../param_parse.h"
#include "rtit/rtit_encoder.h"

void rtit_r_params_default(struct rtit_r_params *p)
{
	memset(p, 0, sizeof(*p));
	p->drain_num = 1;
	p->drain_den = 1;
	p->cntp_gate_as_printed = true;	/* Table 17, D67 */
	p->acbr = p->ecbr = 16;
}




/* off | always | every:N | seed:N:SEED, optionally ",arg=K". */
static int parse_erratum(const char *s, struct rtit_erratum *e)
{
	char buf[128], *arg;
	unsigned long long a = 0, b = 0;

	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	memset(e, 0, sizeof(*e));
	arg = strstr(buf, ",arg=");
	if (arg) {
		uint64_t v;
		*arg = 0;
		if (rtit_param_u64(arg + 5, &v) || v > UINT32_MAX)
			return -1;
		e->arg = (uint32_t)v;
	}
	if (!strcmp(buf, "off"))
		return 0;
	if (!strcmp(buf, "always") || !strcmp(buf, "on")) {
		e->mode = RTIT_ERRATUM_ALWAYS;
		return 0;
	}
	if (sscanf(buf, "every:%llu", &a) == 1 && a > 0 && a <= UINT32_MAX) {
		e->mode = RTIT_ERRATUM_EVERY;
		e->n = (uint32_t)a;
		return 0;
	}
	if (sscanf(buf, "seed:%llu:%llu", &a, &b) == 2 && a > 0 && a <= UINT32_MAX) {
		e->mode = RTIT_ERRATUM_SEEDED;
		e->n = (uint32_t)a;
		e->seed = b;
		return 0;
	}
	return -1;
}

int rtit_r_param_set(struct rtit_r_params *p, const char *key, const char *value,
		     char *err, size_t errlen)
{
	int rb = rtit_param_buffer(key, value, &p->buffer_bytes, &p->drain_num, &p->drain_den,
				   err, errlen);
	uint64_t v;

	if (rb <= 0)
		return rb;
	if (!strcmp(key, "psb_clear_delay")) {
		if (rtit_param_u64(value, &v) || v > 4)
			return rtit_param_bad(err, errlen, key, value, "0 to 4 packets (RTIT 3.3.9)");
		p->psb_clear_delay = (uint8_t)v;
	} else if (!strcmp(key, "pgd_on_trigger_clear")) {
		if (rtit_param_bool(value, &p->pgd_on_trigger_clear))
			return rtit_param_bad(err, errlen, key, value, "a boolean");
	} else if (!strcmp(key, "buffovf_loads_lip")) {
		if (rtit_param_bool(value, &p->buffovf_loads_lip))
			return rtit_param_bad(err, errlen, key, value, "a boolean");
	} else if (!strcmp(key, "cntp_gate_as_printed")) {
		if (rtit_param_bool(value, &p->cntp_gate_as_printed))
			return rtit_param_bad(err, errlen, key, value, "a boolean");
	} else if (!strcmp(key, "ratio")) {
		snprintf(err, errlen, "parameter 'ratio' is gone: the STS core:bus ratio is the clock's "
			 "(clock core_ratio=N, event freq ratio=N; D79)");
		return -RTIT_ERR_BAD_CONFIG;
	} else if (key[0] == 'e' && key[1] >= '1' && key[1] <= '8' && !key[2]) {
		if (parse_erratum(value, &p->errata[key[1] - '0']))
			return rtit_param_bad(err, errlen, key, value, "off, always, every:N or seed:N:SEED [,arg=K]");
	} else {
		snprintf(err, errlen, "unknown RTIT parameter '%s' (see docs/encoder-rtit.md)", key);
		return -RTIT_ERR_BAD_CONFIG;
	}
	return 0;
}
