/* explain.h - what cmd_explain.c, explain_bundle.c and explain_layout.c share. */
#ifndef RTIT_CLI_EXPLAIN_H
#define RTIT_CLI_EXPLAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "rtit/encoder.h"
#include "rtit/pktdec.h"
#include "rtit/record.h"

struct rtit_image;

/* A growing byte buffer (the page's blobs). */
struct xbuf {
	uint8_t *p;
	size_t n, cap;
	bool oom;
};

void xbuf_put(struct xbuf *b, const void *src, size_t n);
/* LEB128, 7 bits a byte, low first (the page's decoder reads it). */
void xbuf_varint(struct xbuf *b, uint64_t v);

/* A packet as the encoder named it (or, for a bundle, as the trace has it). */
struct xpkt {
	uint64_t off, ip;
	uint64_t hash;		/* of its bytes (matched with the trace's) */
	uint32_t rec;		/* records completed before it */
	uint8_t type, len;
	bool dropped, norec;
	const char *why;
};

/* A distinct instruction or event of the run (the page's table U). */
struct xuniq {
	uint64_t ip;
	uint8_t kind, cls, len, mode;
};

/* A set of strings (the page's table S) and of distinct records, by hash. */
struct xset {
	uint32_t *slot;		/* index + 1, 0 empty */
	size_t cap;
};

struct explain {
	int dialect;
	bool bundle;		/* explained from a bundle (D122): no encoder state */
	FILE *msg;		/* the line about the page (NULL: stdout) */
	/* records: varint(uniq * 2 + taken) each */
	struct xbuf recs;
	uint64_t nrec;
	struct xuniq *u;
	size_t nu, ucap;
	struct xset uset;
	/* states: one entry when something but the timing changed */
	struct xbuf states;
	uint64_t nstates;
	int64_t last_state_rec;
	struct rtit_enc_state prev;
	/* packets */
	struct xpkt *p;
	size_t np, pcap;
	uint64_t off, listed, dropped;
	/* packet classes: (type, len/flags, why, short, fields, layout) */
	uint32_t (*c)[6];
	size_t nc, ccap;
	struct xset cset;
	/* strings */
	char **s;
	size_t ns, scap;
	struct xset sset;
	bool oom;
};


/* The model's run-wide facts (docs/explain.md). */
struct run_info {
	const char *name, *describe, *stop;
	uint64_t insns, events, trace_bytes;
	size_t nexpect;
	bool has_expect, cycle_acc;
};

/* A record of the run (instruction or event) into the model; @st: the
 * encoder's state after it, or NULL (a bundle: none). */
void rtit_explain_record(struct explain *x, const struct rtit_sim_rec *r,
			 const struct rtit_enc_state *st);

/* A packet of the trace at @off (a bundle's: no rule, not dropped),
 * caused by record @rec (x->nrec: the end). */
void rtit_explain_packet(struct explain *x, uint64_t off, uint8_t type, uint8_t len,
			 uint64_t rec, const char *why);

/* Builds the model and writes the page @outp, with a line on stdout;
 * frees nothing.  Returns RTIT_EXIT_*. */
int rtit_explain_write(struct explain *x, const struct run_info *ri, const uint8_t *trace,
		       size_t tlen, const struct rtit_pktdec_cfg *dcfg,
		       const struct rtit_image *img, const char *outp, const char *title);

void rtit_explain_free(struct explain *x);

/* `rtitsim explain BUNDLE`: the page from a bundle's trace and image,
 * decoded by the flow decoder (D122).  Returns RTIT_EXIT_*. */
int rtit_explain_bundle(const char *arg, const char *outp);

/* Whether @arg names a bundle: a directory, STEM.manifest.json, or a
 * STEM with STEM.manifest.json beside it. */
bool rtit_explain_is_bundle(const char *arg);

/* The bit fields of one packet for the page's drawing, as
 * "kind:name:first bit:bits;..." (bit 8*B+J is bit J of byte B), from its
 * decoded form (RTIT Figures 3-14, SDM 33.4.2).  Returns the length. */
int rtit_explain_layout(char *out, size_t cap, enum rtit_dialect d,
			const struct rtit_pktdec_item *it);

/* The page: the template with the model (a JSON object) inside. */
int rtit_explain_write_page(FILE *out, const char *title, const char *model, size_t len);

#endif
