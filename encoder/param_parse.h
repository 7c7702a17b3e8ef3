/*
 * param_parse.h - parsing "param KEY = VALUE" values, shared by the RTIT
 * and Intel PT models' parameter setters.
 */
#ifndef RTIT_ENCODER_PARAM_PARSE_H
#define RTIT_ENCODER_PARAM_PARSE_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtit/error.h"

/* Writes "parameter KEY: 'VALUE' is not WANT" and returns BAD_CONFIG. */
static inline int rtit_param_bad(char *err, size_t n, const char *key, const char *value,
				 const char *want)
{
	snprintf(err, n, "parameter %s: '%s' is not %s", key, value, want);
	return -RTIT_ERR_BAD_CONFIG;
}

/* A C-style unsigned number (decimal, 0x hex, 0 octal); 0 or -1. */
static inline int rtit_param_u64(const char *s, uint64_t *v)
{
	char *end;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || end == s || *end || s[0] == '-' ? -1 : 0;
}

/* 1/true/yes/on or 0/false/no/off; 0 or -1. */
static inline int rtit_param_bool(const char *s, bool *b)
{
	if (!strcmp(s, "1") || !strcmp(s, "true") || !strcmp(s, "yes") || !strcmp(s, "on"))
		*b = true;
	else if (!strcmp(s, "0") || !strcmp(s, "false") || !strcmp(s, "no") || !strcmp(s, "off"))
		*b = false;
	else
		return -1;
	return 0;
}

/* "N" or "N/D" with D != 0; 0 or -1. */
static inline int rtit_param_ratio(const char *s, uint64_t *a, uint64_t *b)
{
	unsigned long long x, y = 1;
	char tail;
	int n = sscanf(s, "%llu/%llu%c", &x, &y, &tail);
	if ((n != 1 && n != 2) || !y)
		return -1;
	*a = x;
	*b = y;
	return 0;
}

/* The internal buffer's keys, the same in both dialects: buffer_bytes (at
 * most 64 KiB, 0 = unlimited) and drain (bytes per core cycle, N or N/D).
 * Returns 1 when @key is neither, else 0 or -RTIT_ERR_BAD_CONFIG. */
static inline int rtit_param_buffer(const char *key, const char *value, uint64_t *bytes,
				    uint64_t *drain_num, uint64_t *drain_den,
				    char *err, size_t errlen)
{
	uint64_t v;

	if (!strcmp(key, "buffer_bytes")) {
		if (rtit_param_u64(value, &v) || v > 65536)
			return rtit_param_bad(err, errlen, key, value, "a byte count up to 65536 (0: unlimited)");
		*bytes = v;
		return 0;
	}
	if (!strcmp(key, "drain")) {
		if (rtit_param_ratio(value, drain_num, drain_den))
			return rtit_param_bad(err, errlen, key, value, "bytes per cycle as N or N/D");
		return 0;
	}
	return 1;
}

#endif /* RTIT_ENCODER_PARAM_PARSE_H */
