/*
 * pt_errata.c - the Intel PT errata libipt 2.0.5 knows, by name and by CPU
 * (rtit/pt_errata.h; docs/decisions.md D100).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtit/pt_errata.h"

static const char *const names[RTIT_PT_NERRATA] = {
	"bdm70", "bdm64", "skd007", "skd022", "skd010",
	"skl014", "apl12", "apl11", "skl168", "skz84",
};

const char *rtit_pt_erratum_name(unsigned e)
{
	return e < RTIT_PT_NERRATA ? names[e] : NULL;
}

int rtit_pt_erratum_by_name(const char *name)
{
	for (unsigned e = 0; e < RTIT_PT_NERRATA; e++)
		if (!strcmp(name, names[e]))
			return (int)e;
	return -1;
}

/* One C number up to @max, then @end; the rest in *rest.  0 or -1. */
static int number(const char *s, unsigned max, char end, unsigned *v, const char **rest)
{
	char *e;
	if (*s < '0' || *s > '9')
		return -1;
	unsigned long x = strtoul(s, &e, 0);
	if (x > max || *e != end)
		return -1;
	*v = (unsigned)x;
	*rest = end ? e + 1 : e;
	return 0;
}

int rtit_pt_cpu_parse(const char *s, unsigned *family, unsigned *model, unsigned *stepping)
{
	const char *r;

	if (!s || !*s || !strcmp(s, "default"))
		return 0;
	*stepping = 0;
	if (number(s, 0xffff, '/', family, &r) < 0)
		return -1;
	if (!strchr(r, '/'))
		return number(r, 0xff, 0, model, &r) < 0 ? -1 : 1;
	if (number(r, 0xff, '/', model, &r) < 0 || number(r, 0xff, 0, stepping, &r) < 0)
		return -1;
	return 1;
}

/* libipt 2.0.5's pt_cpu_errata, as measured by calling it for every
 * family 0-0x40 and model 0-0xff (D100): only family 6 has entries, in
 * seven groups of models. */
#define E(x) RTIT_PT_ERRATUM(RTIT_PT_##x)
static const struct {
	unsigned errata;
	unsigned char models[8];	/* 0-terminated */
} groups[] = {
	{ E(BDM70) | E(BDM64), { 0x3d, 0x47, 0x4f, 0x56 } },
	{ E(BDM70) | E(SKD007) | E(SKD022) | E(SKD010) | E(SKL014) | E(SKL168),
	  { 0x4e, 0x5e, 0x8e, 0x9e, 0xa5, 0xa6 } },
	{ E(BDM70) | E(SKD022) | E(SKL014) | E(SKZ84), { 0x55, 0x6a, 0x6c, 0x8f } },
	{ E(BDM70) | E(SKD022) | E(SKL014), { 0x66, 0x7d, 0x7e, 0x8c, 0x8d, 0xa7, 0xa8 } },
	{ E(BDM70) | E(SKD022) | E(SKL014) | E(APL11), { 0x97, 0x9a, 0xbf } },
	{ E(APL12) | E(APL11), { 0x5c, 0x5f } },
	{ E(APL11), { 0x7a, 0x86, 0x96, 0x9c } },
};

unsigned rtit_pt_cpu_errata(unsigned family, unsigned model)
{
	if (family != 6)
		return 0;
	for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++)
		for (size_t i = 0; i < sizeof(groups[g].models) && groups[g].models[i]; i++)
			if (groups[g].models[i] == model)
				return groups[g].errata;
	return 0;
}

unsigned rtit_pt_cpu_errata_str(const char *cpu)
{
	unsigned f, m, s;
	return rtit_pt_cpu_parse(cpu, &f, &m, &s) == 1 ? rtit_pt_cpu_errata(f, m) : 0;
}

int rtit_pt_errata_parse(const char *s, unsigned *mask)
{
	char buf[256];

	*mask = 0;
	if (!strcmp(s, "none"))
		return 0;
	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		int e = rtit_pt_erratum_by_name(t);
		if (e < 0)
			return -1;
		*mask |= RTIT_PT_ERRATUM(e);
	}
	return 0;
}

char *rtit_pt_errata_format(unsigned mask, char *buf, size_t n)
{
	size_t k = 0;

	if (n)
		buf[0] = 0;
	for (unsigned e = 0; e < RTIT_PT_NERRATA; e++)
		if ((mask & RTIT_PT_ERRATUM(e)) && k < n)
			k += (size_t)snprintf(buf + k, n - k, "%s%s", k ? "," : "", names[e]);
	if (!mask && n)
		snprintf(buf, n, "none");
	return buf;
}
