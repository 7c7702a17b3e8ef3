/*
 * fuzz_check.c - see fuzz_check.h.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "pktgen.h"
#include "rtit/ip.h"
#include "rtit/pktdec.h"

#define FUZZ_ASSERT(cond, ...) do {					\
	if (!(cond)) {							\
		fprintf(stderr, "fuzz_check: %s:%d: %s: ", __FILE__,	\
			__LINE__, #cond);				\
		fprintf(stderr, __VA_ARGS__);				\
		fputc('\n', stderr);					\
		abort();						\
	}								\
} while (0)

/* Reader mode: hands out the input in chunks whose sizes come from a PRNG
 * seeded by a hash of the input (so a given input always splits alike). */
struct chunk_reader {
	const uint8_t *data;
	size_t size, pos;
	struct pktgen_rng rng;
	bool one;		/* 1-byte reads only */
};

static ssize_t chunk_read(void *opaque, uint8_t *buf, size_t cap)
{
	struct chunk_reader *r = opaque;
	size_t n;

	if (r->pos >= r->size)
		return 0;
	if (r->one) {
		buf[0] = r->data[r->pos++];
		return 1;
	}
	switch (pktgen_rng_below(&r->rng, 4)) {
	case 0: n = 1; break;
	case 1: n = 1 + (size_t)pktgen_rng_below(&r->rng, 17); break;
	case 2: n = 1 + (size_t)pktgen_rng_below(&r->rng, 300); break;
	default: n = 1 + (size_t)pktgen_rng_below(&r->rng, 1 << 17); break;
	}
	if (n > cap)
		n = cap;
	if (n > r->size - r->pos)
		n = r->size - r->pos;
	memcpy(buf, r->data + r->pos, n);
	r->pos += n;
	return (ssize_t)n;
}

static uint64_t fnv1a(const uint8_t *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

static void check_reencode(const struct rtit_pkt_ctx *ctx,
			   const struct rtit_packet *pkt, uint64_t off)
{
	uint8_t buf[32];
	struct rtit_packet back;
	char s1[160], s2[160];
	int n, m;

	n = rtit_pkt_encode(ctx, pkt, buf, sizeof(buf));
	FUZZ_ASSERT(n > 0, "offset %" PRIu64 ": encoder refuses decoded %s: %s",
		    off, pktgen_pkt_str(pkt, s1, sizeof(s1)), rtit_errstr(n));
	m = rtit_pkt_decode(ctx, buf, (size_t)n, &back, NULL);
	FUZZ_ASSERT(m == n, "offset %" PRIu64 ": re-encoded %s decodes to %d, not %d",
		    off, pktgen_pkt_str(pkt, s1, sizeof(s1)), m, n);
	FUZZ_ASSERT(pktgen_pkt_equal(pkt, &back),
		    "offset %" PRIu64 ": re-encoding changes %s into %s", off,
		    pktgen_pkt_str(pkt, s1, sizeof(s1)),
		    pktgen_pkt_str(&back, s2, sizeof(s2)));
}

/* A decoder read through rtit_pktdec_next_batch(), with batch sizes from
 * a PRNG, compared item by item with the per-packet decoder. */
struct batch_side {
	const char *name;
	struct rtit_pktdec *d;
	struct rtit_pktdec_item items[64];
	int n, i;
	struct pktgen_rng rng;
};

/* The per-packet decoder @ref returned @a (and @want when a == 1); the
 * batch side must give the same. */
static void batch_check(struct batch_side *b, const struct rtit_pktdec *ref, int a,
			const struct rtit_pktdec_item *want)
{
	const struct rtit_pktdec_item *got;
	uint64_t at = rtit_pktdec_offset(ref);

	if (b->i == b->n && a != 0 && a != 1) {
		/* The per-packet decoder failed: so must the next batch. */
		int r = rtit_pktdec_next_batch(b->d, b->items, 1 + (size_t)pktgen_rng_below(&b->rng, 64));
		FUZZ_ASSERT(r == a, "%s: batch returns %d where next() fails with %d at %" PRIu64,
			    b->name, r, a, at);
		FUZZ_ASSERT(b->d->err.code == ref->err.code && b->d->err.offset == ref->err.offset &&
			    b->d->nerrors == ref->nerrors && b->d->err.why && ref->err.why &&
			    strcmp(b->d->err.why, ref->err.why) == 0,
			    "%s: batch error %d at %" PRIu64 " (%s), next() %d at %" PRIu64 " (%s)", b->name,
			    b->d->err.code, b->d->err.offset, b->d->err.why ? b->d->err.why : "",
			    ref->err.code, ref->err.offset, ref->err.why ? ref->err.why : "");
		return;
	}
	FUZZ_ASSERT(a == 0 || a == 1, "%s: next() fails with %d with %d batch items left at %" PRIu64,
		    b->name, a, b->n - b->i, at);
	if (b->i == b->n) {
		b->n = rtit_pktdec_next_batch(b->d, b->items, 1 + (size_t)pktgen_rng_below(&b->rng, 64));
		b->i = 0;
		FUZZ_ASSERT(b->n >= 0, "%s: batch fails with %d (%s) at %" PRIu64, b->name, b->n,
			    b->d->err.why ? b->d->err.why : "", b->d->err.offset);
	}
	if (a == 0) {
		FUZZ_ASSERT(b->n == 0, "%s: batch returns %d packets after the end", b->name, b->n);
		return;
	}
	FUZZ_ASSERT(b->i < b->n, "%s: batch ends where next() has a packet at %" PRIu64,
		    b->name, want->offset);
	got = &b->items[b->i++];
	char s1[160], s2[160];
	FUZZ_ASSERT(pktgen_pkt_equal(&want->pkt, &got->pkt) && want->offset == got->offset &&
		    memcmp(want->raw, got->raw, want->pkt.size) == 0,
		    "%s: offset %" PRIu64 ": next() %s, batch %s at %" PRIu64, b->name, want->offset,
		    pktgen_pkt_str(&want->pkt, s1, sizeof(s1)),
		    pktgen_pkt_str(&got->pkt, s2, sizeof(s2)), got->offset);
	FUZZ_ASSERT(want->ip_status == got->ip_status && want->ip == got->ip &&
		    want->last_ip == got->last_ip && want->last_ip_valid == got->last_ip_valid,
		    "%s: offset %" PRIu64 ": IP tracking differs from next()", b->name, want->offset);
}

/* The decoder @g with general_only must give what @ref (fast path) gave:
 * @a, and @want when a == 1. */
static void general_check(struct rtit_pktdec *g, const struct rtit_pktdec *ref, int a,
			  const struct rtit_pktdec_item *want)
{
	struct rtit_pktdec_item got;
	int r = rtit_pktdec_next(g, &got);
	char s1[160], s2[160];

	FUZZ_ASSERT(r == a, "general path %d, fast path %d at %" PRIu64, r, a,
		    rtit_pktdec_offset(ref));
	if (r < 0) {
		FUZZ_ASSERT(g->err.offset == ref->err.offset && strcmp(g->err.why, ref->err.why) == 0,
			    "general path error at %" PRIu64 " (%s), fast path at %" PRIu64 " (%s)",
			    g->err.offset, g->err.why, ref->err.offset, ref->err.why);
		return;
	}
	if (r == 0)
		return;
	FUZZ_ASSERT(pktgen_pkt_equal(&want->pkt, &got.pkt) && want->offset == got.offset,
		    "offset %" PRIu64 ": fast path %s, general path %s", want->offset,
		    pktgen_pkt_str(&want->pkt, s1, sizeof(s1)), pktgen_pkt_str(&got.pkt, s2, sizeof(s2)));
	FUZZ_ASSERT(want->ip_status == got.ip_status && want->ip == got.ip &&
		    want->last_ip == got.last_ip && want->last_ip_valid == got.last_ip_valid,
		    "offset %" PRIu64 ": fast path IP %d %#" PRIx64 " last %#" PRIx64 " %d, general path "
		    "%d %#" PRIx64 " last %#" PRIx64 " %d", want->offset, want->ip_status, want->ip,
		    want->last_ip, want->last_ip_valid, got.ip_status, got.ip, got.last_ip,
		    got.last_ip_valid);
}

void fuzz_check_stream(enum rtit_dialect dialect, bool cycle_acc,
		       const uint8_t *data, size_t size, struct fuzz_stats *st)
{
	/* 4 x 64 KiB: static, the harnesses are single-threaded. */
	static struct rtit_pktdec dm, dr, dbm, dbr, dg;
	/* The batch call, in memory mode and in 1-byte reads. */
	static struct batch_side bm = { .name = "batch (memory)", .d = &dbm };
	static struct batch_side br = { .name = "batch (1-byte reads)", .d = &dbr };
	struct chunk_reader rd1 = { .data = data, .size = size, .one = true };
	struct rtit_pktdec_cfg cm = { .dialect = dialect, .cycle_acc = cycle_acc,
				      .mem = data, .mem_len = size };
	struct rtit_pktdec_cfg cr = cm;
	struct chunk_reader rd = { .data = data, .size = size };
	uint64_t next_min = 0, decoded = 0, steps = 0;
	bool have_prev = false;
	uint64_t prev_off = 0;

	pktgen_rng_seed(&rd.rng, fnv1a(data, size));
	cr.mem = NULL;
	cr.mem_len = 0;
	cr.read = chunk_read;
	cr.opaque = &rd;
	FUZZ_ASSERT(rtit_pktdec_init(&dm, &cm) == 0, "init memory mode");
	FUZZ_ASSERT(rtit_pktdec_init(&dr, &cr) == 0, "init reader mode");
	FUZZ_ASSERT(rtit_pktdec_init(&dbm, &cm) == 0, "init batch memory mode");
	FUZZ_ASSERT(rtit_pktdec_init(&dg, &cm) == 0, "init general-only");
	dg.general_only = true;
	cr.opaque = &rd1;
	FUZZ_ASSERT(rtit_pktdec_init(&dbr, &cr) == 0, "init batch reader mode");
	bm.n = bm.i = br.n = br.i = 0;
	pktgen_rng_seed(&bm.rng, size);
	pktgen_rng_seed(&br.rng, size + 1);

	for (;;) {
		struct rtit_pktdec_item im, ir;
		struct rtit_pkt_ctx before = dm.ctx;
		int a, b;

		FUZZ_ASSERT(++steps <= 2 * (uint64_t)size + 4, "no progress after %" PRIu64 " steps", steps);
		a = rtit_pktdec_next(&dm, &im);
		b = rtit_pktdec_next(&dr, &ir);
		FUZZ_ASSERT(a == b, "memory mode says %d, reader mode %d at offset %" PRIu64,
			    a, b, rtit_pktdec_offset(&dm));
		general_check(&dg, &dm, a, &im);
		batch_check(&bm, &dm, a, &im);
		batch_check(&br, &dm, a, &im);
		if (a == 0)
			break;
		if (a == 1) {
			char s1[160], s2[160];
			uint64_t off = im.offset;
			unsigned sz = im.pkt.size;

			FUZZ_ASSERT(pktgen_pkt_equal(&im.pkt, &ir.pkt), "offset %" PRIu64 ": %s vs %s",
				    off, pktgen_pkt_str(&im.pkt, s1, sizeof(s1)),
				    pktgen_pkt_str(&ir.pkt, s2, sizeof(s2)));
			FUZZ_ASSERT(im.offset == ir.offset, "offsets %" PRIu64 " vs %" PRIu64,
				    im.offset, ir.offset);
			FUZZ_ASSERT(im.ip_status == ir.ip_status && im.ip == ir.ip &&
				    im.last_ip == ir.last_ip && im.last_ip_valid == ir.last_ip_valid,
				    "offset %" PRIu64 ": IP tracking differs between modes", off);
			FUZZ_ASSERT(!have_prev || off > prev_off, "offset %" PRIu64 " after %" PRIu64,
				    off, prev_off);
			FUZZ_ASSERT(off >= next_min, "offset %" PRIu64 " overlaps the previous packet (ends %" PRIu64 ")",
				    off, next_min);
			FUZZ_ASSERT(sz >= 1 && sz <= 16, "offset %" PRIu64 ": size %u", off, sz);
			FUZZ_ASSERT(off + sz <= size, "offset %" PRIu64 ": packet past the end", off);
			FUZZ_ASSERT(im.raw == data + off, "offset %" PRIu64 ": raw pointer", off);
			FUZZ_ASSERT(memcmp(ir.raw, data + off, sz) == 0, "offset %" PRIu64 ": reader raw bytes", off);
			FUZZ_ASSERT(rtit_pkt_has_ip(im.pkt.type) ||
				    (im.ip_status == 0 && im.ip == 0),
				    "offset %" PRIu64 ": IP on a non-IP packet", off);
			if (rtit_pkt_has_ip(im.pkt.type) && im.ip_status != 1) {
				/* The IP follows from the payload and the last
				 * IP the item reports (RTIT Table 18, PT
				 * Table 33-18). */
				struct rtit_last_ip l = { .dialect = dialect, .ip = im.last_ip,
							  .valid = im.last_ip_valid };
				uint64_t ip = 0;
				int xs = rtit_last_ip_expand(&l, &im.pkt.u.ip, &ip);
				FUZZ_ASSERT(xs == im.ip_status && (xs || ip == im.ip),
					    "offset %" PRIu64 ": IP %#" PRIx64 " status %d, last IP gives %#"
					    PRIx64 " status %d", off, im.ip, im.ip_status, ip, xs);
			}
			check_reencode(&before, &im.pkt, off);
			have_prev = true;
			prev_off = off;
			next_min = off + sz;
			decoded += sz;
			if (st)
				st->packets++;
			continue;
		}
		/* An error: both modes agree on what and where. */
		FUZZ_ASSERT(dm.err.code == a && dr.err.code == a, "error codes");
		FUZZ_ASSERT(dm.err.offset == dr.err.offset, "error offsets %" PRIu64 " vs %" PRIu64,
			    dm.err.offset, dr.err.offset);
		FUZZ_ASSERT(dm.err.offset == rtit_pktdec_offset(&dm) && dm.err.offset >= next_min,
			    "error at %" PRIu64 ", decoder at %" PRIu64, dm.err.offset,
			    rtit_pktdec_offset(&dm));
		FUZZ_ASSERT(a != -RTIT_ERR_INTERNAL && a != -RTIT_ERR_IO && a != -RTIT_ERR_INVALID,
			    "offset %" PRIu64 ": unexpected error %s (%s)", dm.err.offset,
			    rtit_errstr(a), dm.err.why ? dm.err.why : "");
		FUZZ_ASSERT(dm.err.why != NULL, "error without explanation");
		if (st)
			st->errors++;
		uint64_t end_before = next_min;
		a = rtit_pktdec_resync(&dm, false);
		b = rtit_pktdec_resync(&dr, false);
		FUZZ_ASSERT(a == b && (a == 0 || a == 1), "resync: %d vs %d", a, b);
		FUZZ_ASSERT(dm.skipped == dr.skipped, "skipped %" PRIu64 " vs %" PRIu64,
			    dm.skipped, dr.skipped);
		FUZZ_ASSERT(rtit_pktdec_offset(&dm) == rtit_pktdec_offset(&dr), "offsets after resync");
		FUZZ_ASSERT(rtit_pktdec_resync(&dg, false) == a && dg.skipped == dm.skipped,
			    "the general-only decoder resyncs elsewhere");
		FUZZ_ASSERT(rtit_pktdec_resync(&dbm, false) == a && rtit_pktdec_resync(&dbr, false) == a &&
			    dbm.skipped == dm.skipped && dbr.skipped == dm.skipped &&
			    rtit_pktdec_offset(&dbm) == rtit_pktdec_offset(&dm) &&
			    rtit_pktdec_offset(&dbr) == rtit_pktdec_offset(&dm),
			    "batch decoders resync elsewhere");
		next_min = rtit_pktdec_offset(&dm);
		/* A PSB found inside the last packet decoded (SDM 33.4.2.17,
		 * D86): its bytes are decoded again; count them once.  Never
		 * before that packet's second byte. */
		if (a == 1 && next_min < end_before) {
			FUZZ_ASSERT(have_prev && next_min > prev_off,
				    "resync went back to %" PRIu64 ", before the last packet's second byte",
				    next_min);
			decoded -= end_before - next_min;
		}
	}
	FUZZ_ASSERT(decoded + dm.skipped == size, "decoded %" PRIu64 " + skipped %" PRIu64 " != %zu",
		    decoded, dm.skipped, size);
	FUZZ_ASSERT(dr.skipped == dm.skipped, "reader skipped %" PRIu64, dr.skipped);
	if (st) {
		st->bytes_decoded += decoded;
		st->bytes_skipped += dm.skipped;
	}
}
