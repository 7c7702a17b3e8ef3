/*
 * test_fuzz_driver.c - runs the libFuzzer harnesses' entry points without
 * libFuzzer, bounded, on every build (suite 'fuzz'):
 *   pktgen_roundtrip  pktgen streams decode back to the generator's records
 *   random_bytes      twenty thousand deterministic random byte strings
 *   mutated_streams   valid pktgen streams with flips/truncations/insertions
 *   seeds             the files in tests/fuzz/seeds/
 * A broken invariant aborts inside fuzz_check_stream() with a message.
 */
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <criterion/criterion.h>

#include "fuzz_check.h"
#include "pktgen.h"
#include "rtit/pktdec.h"

#ifndef SEEDS_DIR
#error "SEEDS_DIR must name tests/fuzz/seeds"
#endif

typedef int (*entry_fn)(const uint8_t *data, size_t size);

/* ---- pktgen self-check --------------------------------------------- */

static void roundtrip(const struct pktgen_opts *o, size_t size)
{
	struct pktgen_rec *recs;
	size_t len, nrecs, i = 0;
	uint8_t *buf = pktgen_stream(o, size, &len, &recs, &nrecs);
	static struct rtit_pktdec d;
	struct rtit_pktdec_cfg cfg = { .dialect = o->dialect, .cycle_acc = o->cycle_acc,
				       .mem = buf, .mem_len = len };
	struct rtit_pktdec_item it;
	int r;

	cr_assert_eq(rtit_pktdec_init(&d, &cfg), 0);
	while ((r = rtit_pktdec_next(&d, &it)) == 1) {
		char s1[160], s2[160];
		const struct pktgen_rec *e = &recs[i];

		cr_assert(i < nrecs, "more packets than generated");
		cr_assert_eq(it.offset, e->offset, "seed %" PRIu64 " packet %zu: offset", o->seed, i);
		cr_assert(pktgen_pkt_equal(&it.pkt, &e->pkt), "seed %" PRIu64 " packet %zu at %" PRIu64
			  ": decoded %s, generated %s", o->seed, i, it.offset,
			  pktgen_pkt_str(&it.pkt, s1, sizeof(s1)),
			  pktgen_pkt_str(&e->pkt, s2, sizeof(s2)));
		if (rtit_pkt_has_ip(e->pkt.type)) {
			cr_assert_eq(it.ip_status, e->ip_status, "seed %" PRIu64 " packet %zu: ip_status %d",
				     o->seed, i, it.ip_status);
			if (!e->ip_status)
				cr_assert_eq(it.ip, e->ip, "seed %" PRIu64 " packet %zu: IP %#" PRIx64
					     " != %#" PRIx64, o->seed, i, it.ip, e->ip);
		}
		i++;
	}
	cr_assert_eq(r, 0, "seed %" PRIu64 ": error %s at %" PRIu64 " (%s)", o->seed,
		     rtit_errstr(r), d.err.offset, d.err.why ? d.err.why : "");
	cr_assert_eq(i, nrecs);
	cr_assert_eq(d.skipped, 0);

	/* Streaming generation gives the same bytes. */
	{
		struct pktgen g;
		uint8_t *s = malloc(len + 64);
		size_t n = 0;
		pktgen_init(&g, o);
		while (n < len)
			n += pktgen_fill(&g, s + n, len + 64 - n > 4096 ? 4096 : len + 64 - n);
		cr_assert(n >= len && memcmp(s, buf, len) == 0, "pktgen_fill differs from pktgen_stream");
		free(s);
	}
	free(buf);
	free(recs);
}

Test(fuzz, pktgen_roundtrip)
{
	for (uint64_t seed = 1; seed <= 40; seed++) {
		for (int v = 0; v < 6; v++) {
			struct pktgen_opts o = {
				.dialect = v < 3 ? RTIT_DIALECT_RTIT : RTIT_DIALECT_PT,
				.cycle_acc = v == 1 || v == 2,
				.mix = (v & 1) ? PKTGEN_MIX_REALISTIC : PKTGEN_MIX_UNIFORM,
				.psb_every = seed % 3 ? 512 * seed : 0,
				.seed = seed * 7919 + (uint64_t)v,
			};
			roundtrip(&o, 8192);
		}
	}
}

/* ---- inputs for the harnesses --------------------------------------------- */

static void run_both(const uint8_t *data, size_t size)
{
	fuzz_rtit_pktdec_entry(data, size);
	fuzz_pt_pktdec_entry(data, size);
}

Test(fuzz, random_bytes)
{
	struct pktgen_rng r;
	uint8_t buf[2048];

	pktgen_rng_seed(&r, 0x5eed);
	for (int i = 0; i < 20000; i++) {
		size_t n = (size_t)pktgen_rng_below(&r, i < 15000 ? 64 : sizeof(buf));
		int style = (int)pktgen_rng_below(&r, 4);

		for (size_t k = 0; k < n; k++) {
			uint64_t x = pktgen_rng_next(&r);
			switch (style) {
			case 0: buf[k] = (uint8_t)x; break;
			/* Few distinct bytes: PSB fragments, escapes, zeros. */
			case 1: buf[k] = "\x02\x82\x00\xc0\x03\x23\xa3\xc3"[x & 7]; break;
			case 2: buf[k] = (x & 3) ? 0 : (uint8_t)(x >> 8); break;
			default: buf[k] = (x & 1) ? 0x02 : (uint8_t)(x >> 8); break;
			}
		}
		run_both(buf, n);
	}
}

static void mutate(struct pktgen_rng *r, uint8_t *buf, size_t *len, size_t cap)
{
	int nmut = 1 + (int)pktgen_rng_below(r, 4);

	for (int m = 0; m < nmut && *len; m++) {
		size_t at = (size_t)pktgen_rng_below(r, *len);
		switch (pktgen_rng_below(r, 5)) {
		case 0:	/* bit flip */
			buf[at] ^= (uint8_t)(1u << pktgen_rng_below(r, 8));
			break;
		case 1:	/* byte replace */
			buf[at] = (uint8_t)pktgen_rng_next(r);
			break;
		case 2:	/* truncation */
			*len = at;
			break;
		case 3: {	/* insertion of 1..8 random bytes */
			size_t k = 1 + (size_t)pktgen_rng_below(r, 8);
			if (*len + k > cap)
				break;
			memmove(buf + at + k, buf + at, *len - at);
			for (size_t i = 0; i < k; i++)
				buf[at + i] = (uint8_t)pktgen_rng_next(r);
			*len += k;
			break;
		}
		default: {	/* deletion */
			size_t k = 1 + (size_t)pktgen_rng_below(r, 8);
			if (k > *len - at)
				k = *len - at;
			memmove(buf + at, buf + at + k, *len - at - k);
			*len -= k;
			break;
		}
		}
	}
}

Test(fuzz, mutated_streams)
{
	struct pktgen_rng r;
	enum { cap = 8192 };
	uint8_t *buf = malloc(cap);

	pktgen_rng_seed(&r, 0xbadc0de);
	for (uint64_t seed = 1; seed <= 1500; seed++) {
		int v = (int)(seed % 3);	/* RTIT, RTIT cycle-accurate, PT */
		struct pktgen_opts o = {
			.dialect = v == 2 ? RTIT_DIALECT_PT : RTIT_DIALECT_RTIT,
			.cycle_acc = v == 1,
			.mix = seed & 4 ? PKTGEN_MIX_REALISTIC : PKTGEN_MIX_UNIFORM,
			.psb_every = 256 + 64 * (seed % 8),
			.seed = seed,
		};
		size_t len;
		uint8_t *s = pktgen_stream(&o, 256 + (size_t)pktgen_rng_below(&r, 2048), &len, NULL, NULL);

		if (!s || len >= cap) {	/* (and tells the compiler memcpy's bound) */
			cr_log_error("pktgen_stream: %zu bytes for a %d-byte buffer", len, cap);
			abort();
		}

		for (int k = 0; k < 8; k++) {
			/* The RTIT harness takes Cycle_Acc from byte 0. */
			size_t hdr = o.dialect == RTIT_DIALECT_RTIT ? 1 : 0;
			size_t body = len, n;
			buf[0] = o.cycle_acc ? 1 : 0;
			memcpy(buf + hdr, s, len);
			if (k)	/* k == 0: the valid stream itself */
				mutate(&r, buf + hdr, &body, cap - hdr);
			n = body + hdr;
			if (hdr)
				fuzz_rtit_pktdec_entry(buf, n);
			else
				fuzz_pt_pktdec_entry(buf, n);
		}
		free(s);
	}
	free(buf);
}

Test(fuzz, seeds)
{
	DIR *dir = opendir(SEEDS_DIR);
	struct dirent *de;
	int files = 0;

	cr_assert(dir, "cannot open %s", SEEDS_DIR);
	while ((de = readdir(dir))) {
		char path[4096];
		uint8_t *data;
		long n;
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", SEEDS_DIR, de->d_name);
		f = fopen(path, "rb");
		cr_assert(f, "cannot open %s", path);
		fseek(f, 0, SEEK_END);
		n = ftell(f);
		fseek(f, 0, SEEK_SET);
		data = malloc((size_t)n + 1);
		cr_assert_eq(fread(data, 1, (size_t)n, f), (size_t)n);
		fclose(f);
		run_both(data, (size_t)n);
		free(data);
		files++;
	}
	closedir(dir);
	cr_assert(files >= 1, "no seed files in %s", SEEDS_DIR);
}
