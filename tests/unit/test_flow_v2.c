/*
 * test_flow_v2.c - the binary flow's two versions (docs/formats.md
 * "PREFIX.flow (binary)", D180): version 2 (compact) gives back every
 * record version 1 does, field for field, with the same trailer and
 * digest, for records at every field's edges (events, faults, mode
 * switches, 32-bit and kernel-half IPs, counters that go back); its bytes
 * do not depend on the writer thread or the batches; a file cut at any
 * byte or altered gives an error, never a record that was not written.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtit/record.h"

static uint64_t rng;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static const uint64_t edge64[] = {
	0, 1, 0x7f, 0x80, 0x3fff, 0x4000, 0xffffffffull, 0x100000000ull,
	0x00007fffffffffffull, 0xffff800000000000ull, 0x7fffffffffffffffull,
	0x8000000000000000ull, 0xfffffffffffffffeull, 0xffffffffffffffffull,
};
enum { NEDGE = sizeof(edge64) / sizeof(edge64[0]) };

/* A plausible instruction after @p: falls through, one cycle more. */
static struct rtit_sim_rec next_insn(const struct rtit_sim_rec *p, uint8_t len)
{
	struct rtit_sim_rec r = *p;
	r.ip = p->next_ip;
	r.kind = RTIT_SIM_INSN;
	r.cls = RTIT_IC_OTHER;
	r.len = len;
	r.next_ip = r.ip + len;
	r.cycles = p->cycles + 1;
	r.tsc = p->tsc + 1;
	r.value = 0;
	r.msr = 0;
	r.vector = 0;
	return r;
}

/* The edge records, in an order that takes every prediction both ways:
 * plain runs, then each field alone at each edge value, every class and
 * event kind, every flags byte, cpl and mode switches, 32-bit IPs that
 * wrap and kernel-half ones, random records: the first @cap of them.
 * Returns the count. */
static size_t edge_records(struct rtit_sim_rec *v, size_t cap)
{
	size_t n = 0;
	struct rtit_sim_rec r = { .ip = 0x401000, .next_ip = 0x401003, .kind = RTIT_SIM_INSN,
				  .len = 3, .cr3 = 0x1000, .cpl = 3, .mode = 64,
				  .flags = RTIT_SIM_F_CR0_PG | RTIT_SIM_F_IF, .cycles = 5, .tsc = 5 };
#define PUT(x) do { if (n == cap) return n; v[n++] = (x); r = v[n - 1]; } while (0)
	PUT(r);
	for (int i = 0; i < 20; i++)
		PUT(next_insn(&r, (uint8_t)(1 + i % 15)));
	for (int f = 0; f < 9; f++) {
		for (unsigned e = 0; e < NEDGE; e++) {
			struct rtit_sim_rec x = next_insn(&r, 2);
			uint64_t val = edge64[e];
			switch (f) {
			case 0: x.ip = val; x.next_ip = val + x.len; break;
			case 1: x.next_ip = val; x.flags |= RTIT_SIM_F_TAKEN; x.cls = RTIT_IC_COND; break;
			case 2: x.cr3 = val; x.cls = RTIT_IC_MOV_CR3; x.value = val; break;
			case 3: x.cycles = val; break;
			case 4: x.tsc = val; break;
			case 5: x.value = val; x.cls = RTIT_IC_PTWRITE; break;
			case 6: x.msr = (uint32_t)val; x.value = ~val; x.cls = RTIT_IC_WRMSR; break;
			case 7: x.cycles = val; x.tsc = val; break;
			case 8: x.ip = val; x.len = 15; x.next_ip = val + 15; break; /* wraps */
			}
			PUT(x);
			PUT(next_insn(&r, 4));
			PUT(next_insn(&r, 4));
		}
	}
	for (int c = 0; c < RTIT_IC_COUNT; c++) {
		struct rtit_sim_rec x = next_insn(&r, (uint8_t)(c % 16));
		x.cls = (uint8_t)c;
		x.vector = (uint8_t)(c * 37);
		PUT(x);
	}
	for (int ev = 0; ev < RTIT_EV_COUNT; ev++) {
		struct rtit_sim_rec x = r;
		x.kind = RTIT_SIM_EVENT;
		x.cls = (uint8_t)ev;
		x.len = 0;
		x.ip = ev % 2 ? r.next_ip : r.ip;	/* NLIP, or CLIP (a fault) */
		x.flags = (uint8_t)(ev % 2 ? r.flags : r.flags | RTIT_SIM_F_FAULT | RTIT_SIM_F_HAS_ERR);
		x.next_ip = 0xffffffff81000000ull + (uint64_t)ev * 0x40;
		x.cpl = 0;
		x.vector = (uint8_t)(ev * 14);
		x.msr = (uint32_t)ev;
		x.value = ev % 3 ? 0 : 0xdead0000ull + (uint64_t)ev;
		x.cycles = r.cycles + 100;
		x.tsc = r.tsc + 300;
		PUT(x);
		PUT(next_insn(&r, 1));
	}
	for (int fl = 0; fl < 256; fl++) {
		struct rtit_sim_rec x = next_insn(&r, 1);
		x.flags = (uint8_t)fl;
		PUT(x);
	}
	/* every field's byte at its extreme, kind and pads aside */
	static const uint8_t e8[] = { 0, 1, 0x7f, 0x80, 0xff };
	for (unsigned i = 0; i < sizeof(e8); i++) {
		struct rtit_sim_rec x = next_insn(&r, e8[i]);
		x.kind = e8[i];
		x.cls = e8[i];
		x.cpl = e8[i];
		x.mode = e8[i];
		x.vector = e8[i];
		PUT(x);
		x = next_insn(&r, 2);
		x.cls = e8[i];
		PUT(x);
	}
	/* mode switches: 64 -> 32 (32-bit IPs near 4 GiB, wrapping in 32
	 * bits as the record keeps them) -> 16 -> 64 kernel half */
	static const uint8_t modes[] = { 32, 16, 64, 32, 64 };
	static const uint64_t ips[] = { 0xfffffff0ull, 0xfff0ull, 0xffffffff81000000ull,
					0x7ffffff0ull, 0xfffffffffffffff0ull };
	for (unsigned m = 0; m < sizeof(modes); m++) {
		struct rtit_sim_rec x = next_insn(&r, 3);
		x.cls = RTIT_IC_FAR_JMP;
		x.flags |= RTIT_SIM_F_TAKEN;
		x.next_ip = ips[m];
		x.mode = modes[m];
		x.cpl = m % 2 ? 0 : 3;
		x.cr3 = m * 0x1000;
		PUT(x);
		for (int i = 0; i < 10; i++) {
			struct rtit_sim_rec y = next_insn(&r, 5);
			if (modes[m] == 32)
				y.next_ip &= 0xffffffffu;
			PUT(y);
		}
	}
	/* counters that go back, and a tsc that does not follow cycles */
	for (int i = 0; i < 8; i++) {
		struct rtit_sim_rec x = next_insn(&r, 2);
		x.cycles = r.cycles - (uint64_t)i * 3;
		x.tsc = r.tsc * 2 + (uint64_t)i;
		PUT(x);
	}
	/* random records: every field anything */
	rng = 0x9e3779b97f4a7c15ull;
	while (n < cap) {
		struct rtit_sim_rec x;
		memset(&x, 0, sizeof(x));
		x.ip = rnd() % 3 ? r.next_ip : rnd();
		x.len = (uint8_t)(rnd() % 3 ? rnd() % 16 : rnd());
		x.next_ip = rnd() % 2 ? x.ip + x.len : rnd() % 2 ? rnd() : x.ip + x.len + (rnd() % 256 - 128);
		x.kind = (uint8_t)(rnd() % 4 ? RTIT_SIM_INSN : RTIT_SIM_EVENT);
		x.cls = (uint8_t)(rnd() % 3 ? 0 : rnd() % RTIT_IC_COUNT);
		x.cr3 = rnd() % 8 ? r.cr3 : rnd();
		x.cycles = r.cycles + (rnd() % 4 ? 1 : rnd() % 2 ? rnd() % 1000 : rnd());
		x.tsc = rnd() % 2 ? x.cycles : rnd();
		x.value = rnd() % 4 ? 0 : rnd();
		x.msr = rnd() % 4 ? 0 : (uint32_t)rnd();
		x.flags = (uint8_t)(rnd() % 4 ? r.flags : rnd());
		x.cpl = (uint8_t)(rnd() % 8 ? r.cpl : rnd());
		x.mode = (uint8_t)(rnd() % 8 ? r.mode : rnd());
		x.vector = (uint8_t)(rnd() % 4 ? 0 : rnd());
		PUT(x);
	}
#undef PUT
	return n;
}

/* Writes @recs (in batches of 1 to 3000) as a flow file of @version, with
 * or without the thread; the file's bytes (malloc'd) and the digest. */
static uint8_t *write_flow(const struct rtit_sim_rec *recs, size_t n, int version, bool async,
			   size_t *len, uint64_t *digest)
{
	char *buf;
	FILE *f = open_memstream(&buf, len);
	struct rtit_flow_writer w;
	cr_assert_eq(rtit_flow_writer_init_version(&w, f, NULL, version, async), 0);
	uint64_t s = 77;
	for (size_t i = 0; i < n;) {
		s = s * 6364136223846793005ull + 1442695040888963407ull;
		size_t k = 1 + (s >> 33) % 3000;
		if (k > n - i)
			k = n - i;
		rtit_flow_writer_on_batch(recs + i, k, &w);
		i += k;
	}
	cr_assert_eq(rtit_flow_writer_fini(&w, digest), 0);
	fclose(f);
	return (uint8_t *)buf;
}

/* Reads @len bytes of a flow file with the reader, @max records a call;
 * the records (malloc'd), their count, and the status (0 or the error). */
static int read_flow(const uint8_t *b, size_t len, size_t max, struct rtit_sim_rec **out,
		     size_t *n, int *version, const char **why)
{
	FILE *f = fmemopen((void *)b, len ? len : 1, "rb");
	cr_assert(f);
	if (!len) {	/* fmemopen wants a size: an empty file */
		fclose(f);
		f = fopen("/dev/null", "rb");
	}
	struct rtit_flow_reader rd;
	size_t cap = 1024, cnt = 0;
	struct rtit_sim_rec *v = malloc(cap * sizeof(*v));
	long got = rtit_flow_reader_open(&rd, f);
	if (got == 0) {
		do {
			if (cap - cnt < max) {
				cap = 2 * cap + max;
				v = realloc(v, cap * sizeof(*v));
			}
			got = rtit_flow_reader_next(&rd, v + cnt, max);
			if (got > 0)
				cnt += (size_t)got;
		} while (got > 0);
		cr_assert_eq(rd.count, cnt);
		if (got == 0)
			cr_assert(rd.done);
	}
	if (version)
		*version = rd.version;
	if (why)
		*why = rd.why;
	rtit_flow_reader_close(&rd);
	fclose(f);
	*out = v;
	*n = cnt;
	return (int)got;
}

static void assert_same(const struct rtit_sim_rec *a, const struct rtit_sim_rec *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint8_t pa[64], pb[64];
		rtit_sim_rec_pack(&a[i], pa);
		rtit_sim_rec_pack(&b[i], pb);
		cr_assert_eq(memcmp(pa, pb, 64), 0,
			     "record %zu: ip %llx/%llx next %llx/%llx cyc %llx/%llx tsc %llx/%llx", i,
			     (unsigned long long)a[i].ip, (unsigned long long)b[i].ip,
			     (unsigned long long)a[i].next_ip, (unsigned long long)b[i].next_ip,
			     (unsigned long long)a[i].cycles, (unsigned long long)b[i].cycles,
			     (unsigned long long)a[i].tsc, (unsigned long long)b[i].tsc);
	}
}

/* Version 1 and 2 of the same records: the same records back, field for
 * field, the same digest and trailer; the reader in pieces of 1, 7 and
 * 1000 records and rtit_flow_read agree; the writer thread and the
 * batches change no byte; version 2 is smaller. */
Test(flow_v2, round_trip_edges)
{
	static const size_t sizes[] = { 0, 1, 2000, 16383, 16384, 16385, 40000 };
	for (unsigned s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		size_t N = sizes[s];
		struct rtit_sim_rec *recs = calloc(N + 1, sizeof(*recs));
		if (N)
			cr_assert_eq(edge_records(recs, N), N);
		size_t l1, l2, l2a;
		uint64_t d1, d2, d2a;
		uint8_t *f1 = write_flow(recs, N, RTIT_FLOW_V1, false, &l1, &d1);
		uint8_t *f2 = write_flow(recs, N, RTIT_FLOW_V2, false, &l2, &d2);
		uint8_t *f2a = write_flow(recs, N, RTIT_FLOW_V2, true, &l2a, &d2a);
		cr_assert_eq(l1, 16 + 64 * N + 24);
		cr_assert_eq(d1, d2);
		cr_assert_eq(d1, d2a);
		cr_assert_eq(l2, l2a, "%zu records: the thread changes the size", N);
		cr_assert_eq(memcmp(f2, f2a, l2), 0, "%zu records: the thread changes bytes", N);
		cr_assert_eq(memcmp(f1 + l1 - 24, f2 + l2 - 24, 24), 0, "the same trailer");
		cr_assert_eq(memcmp(f1, f2, 8), 0);
		cr_assert_eq(f2[8], 2);
		if (N > 1000)
			cr_assert_lt(l2, l1 / 2, "%zu records: v2 %zu bytes, v1 %zu", N, l2, l1);
		static const size_t maxes[] = { 1, 7, 1000 };
		for (unsigned m = 0; m < 3; m++) {
			struct rtit_sim_rec *b1, *b2;
			size_t n1, n2;
			int v1, v2;
			cr_assert_eq(read_flow(f1, l1, maxes[m], &b1, &n1, &v1, NULL), 0);
			cr_assert_eq(read_flow(f2, l2, maxes[m], &b2, &n2, &v2, NULL), 0);
			cr_assert_eq(v1, 1);
			cr_assert_eq(v2, 2);
			cr_assert_eq(n1, N);
			cr_assert_eq(n2, N);
			assert_same(recs, b1, N);
			assert_same(recs, b2, N);
			free(b1), free(b2);
		}
		/* rtit_flow_read, and back from version 2 to version 1 */
		FILE *f = fmemopen(f2, l2, "rb");
		struct rtit_sim_rec *all;
		size_t nall;
		cr_assert_eq(rtit_flow_read(f, &all, &nall), 0);
		fclose(f);
		cr_assert_eq(nall, N);
		size_t l1b;
		uint64_t d1b;
		uint8_t *f1b = write_flow(all, nall, RTIT_FLOW_V1, true, &l1b, &d1b);
		cr_assert_eq(l1b, l1);
		cr_assert_eq(memcmp(f1, f1b, l1), 0, "v1 -> v2 -> v1 gives the v1 file back");
		free(all), free(f1b);
		free(f1), free(f2), free(f2a), free(recs);
	}
}

/* A version 2 file cut after any byte: an error, and the records before
 * it are records that were written (a prefix), never one that was not. */
Test(flow_v2, truncation_every_byte)
{
	enum { N = 300 };
	static struct rtit_sim_rec recs[N];
	edge_records(recs, N);
	/* two blocks: write with a small file, then check all cuts */
	size_t len;
	uint64_t d;
	uint8_t *f = write_flow(recs, N, RTIT_FLOW_V2, false, &len, &d);
	for (size_t cut = 0; cut < len; cut++) {
		struct rtit_sim_rec *b;
		size_t n;
		const char *why = NULL;
		int r = read_flow(f, cut, 1 + cut % 5, &b, &n, NULL, &why);
		cr_assert_eq(r, -RTIT_ERR_INVALID, "cut at %zu of %zu: status %d", cut, len, r);
		cr_assert(why && *why, "cut at %zu: a reason", cut);
		cr_assert_leq(n, N);
		assert_same(recs, b, n);
		/* cut inside the only block: no record at all */
		if (cut < len - 24)
			cr_assert_eq(n, 0, "cut at %zu: %zu records from a cut block", cut, n);
		free(b);
	}
	/* and one byte more after the trailer */
	uint8_t *g = malloc(len + 1);
	memcpy(g, f, len);
	g[len] = 0;
	struct rtit_sim_rec *b;
	size_t n;
	const char *why;
	cr_assert_eq(read_flow(g, len + 1, 1000, &b, &n, NULL, &why), -RTIT_ERR_INVALID);
	cr_assert_str_eq(why, "bytes after the trailer");
	free(b), free(g), free(f);
}

/* Every single-byte change of a small version 2 file (each byte xor 1,
 * 0x80, 0xff) is rejected by the reader: a malformed block, or records
 * whose count or digest differs from the trailer's. */
Test(flow_v2, altered_byte_rejected)
{
	enum { N = 120 };
	static struct rtit_sim_rec recs[N];
	edge_records(recs, N);
	size_t len;
	uint64_t d;
	uint8_t *f = write_flow(recs, N, RTIT_FLOW_V2, false, &len, &d);
	uint8_t *g = malloc(len);
	static const uint8_t x[] = { 1, 0x80, 0xff };
	for (size_t i = 0; i < len; i++) {
		for (unsigned k = 0; k < 3; k++) {
			memcpy(g, f, len);
			g[i] ^= x[k];
			struct rtit_sim_rec *b;
			size_t n;
			int r = read_flow(g, len, 1000, &b, &n, NULL, NULL);
			cr_assert_lt(r, 0, "byte %zu ^ 0x%x accepted", i, x[k]);
			free(b);
		}
	}
	free(g), free(f);
}

/* Files that are not version 1 or 2: rejected at the header, with why. */
Test(flow_v2, header)
{
	uint8_t h[40] = "RTITFLOW";
	h[12] = 64;
	static const uint32_t versions[] = { 0, 3, 0x100 };
	for (unsigned i = 0; i < 3; i++) {
		memcpy(h + 8, &versions[i], 4);
		struct rtit_sim_rec *b;
		size_t n;
		const char *why;
		cr_assert_eq(read_flow(h, sizeof(h), 10, &b, &n, NULL, &why), -RTIT_ERR_INVALID);
		cr_assert(strstr(why, "unknown version"), "%s", why);
		free(b);
	}
	struct rtit_flow_writer w;
	cr_assert_eq(rtit_flow_writer_init_version(&w, NULL, NULL, 3, false), -RTIT_ERR_INVALID);
}
