/* pktcmp.h - field-by-field packet comparison for tests. */
#ifndef RTIT_TEST_PKTCMP_H
#define RTIT_TEST_PKTCMP_H

#include <stddef.h>
#include "rtit/packet.h"

/* Compares the fields of @a and @b that their type defines (and the size
 * unless @ignore_size).  Returns 0 when equal; otherwise writes a
 * "field: expected X, got Y" explanation into @msg. */
int rtit_test_pkt_diff(const struct rtit_packet *want, const struct rtit_packet *got,
		       int ignore_size, char *msg, size_t cap);

#endif
