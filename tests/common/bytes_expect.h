/*
 * bytes_expect.h - the encoder harnesses' byte comparison (tests/unit's
 * rtit_harness.h, tests/pt's pt_harness.h): the bytes written against the
 * bytes the manual gives, both printed in hex on a difference.
 */
#ifndef BYTES_EXPECT_H
#define BYTES_EXPECT_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <criterion/criterion.h>

static inline void bytes_expect_check(const uint8_t *got, size_t ngot, const uint8_t *want,
				      size_t n, const char *where, int line)
{
	if (ngot == n && !memcmp(got, want, n))
		return;
	char gs[700] = "", ws[700] = "";
	for (size_t i = 0; i < ngot && i < 220; i++)
		snprintf(gs + strlen(gs), sizeof(gs) - strlen(gs), "%02x ", got[i]);
	for (size_t i = 0; i < n && i < 220; i++)
		snprintf(ws + strlen(ws), sizeof(ws) - strlen(ws), "%02x ", want[i]);
	cr_expect_fail("%s:%d: bytes differ\n  want: %s\n  got:  %s", where, line, ws, gs);
}

#endif
