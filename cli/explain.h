/* explain.h - what cmd_explain.c and explain_page.c share. */
#ifndef RTIT_CLI_EXPLAIN_H
#define RTIT_CLI_EXPLAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "rtit/pktdec.h"

/* A growing byte buffer (the page's blobs). */
struct xbuf {
	uint8_t *p;
	size_t n, cap;
	bool oom;
};

void xbuf_put(struct xbuf *b, const void *src, size_t n);
/* LEB128, 7 bits a byte, low first (the page's decoder reads it). */
void xbuf_varint(struct xbuf *b, uint64_t v);

/* The bit fields of one packet for the page's drawing, as
 * "kind:name:first bit:bits;..." (bit 8*B+J is bit J of byte B), from its
 * decoded form (RTIT Figures 3-14, SDM 33.4.2).  Returns the length. */
int rtit_explain_layout(char *out, size_t cap, enum rtit_dialect d,
			const struct rtit_pktdec_item *it);

/* The page: the template with the model (a JSON object) inside. */
int rtit_explain_write_page(FILE *out, const char *title, const char *model, size_t len);

#endif
