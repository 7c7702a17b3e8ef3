/*
 * test_fuzz_flowfile.c - the flow reader's fuzz entry point without
 * libFuzzer, bounded, on every build (suite 'fuzz'):
 *   seeds    the files in seeds-flowfile/ (version 2 flows of golden
 *            scenarios, one version 1) read whole and keep the invariants
 *   mutated  the seeds with flipped, inserted, deleted and truncated
 *            bytes: each is refused (or, rarely, reads to a file whose
 *            records give its trailer), the invariants hold
 *   random   random bytes after a valid header of either version
 * A broken invariant aborts inside fuzz_flowfile_one() with its name.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "fuzz_flowfile.h"

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

struct seed {
	uint8_t b[4096];
	size_t n;
};

static size_t load_seeds(struct seed *s, size_t cap)
{
	DIR *d = opendir(SEEDS_DIR);
	cr_assert(d, "%s", SEEDS_DIR);
	size_t k = 0;
	struct dirent *e;
	while ((e = readdir(d)) && k < cap) {
		if (e->d_name[0] == '.')
			continue;
		char p[1024];
		snprintf(p, sizeof(p), "%s/%s", SEEDS_DIR, e->d_name);
		FILE *f = fopen(p, "rb");
		cr_assert(f, "%s", p);
		s[k].n = fread(s[k].b, 1, sizeof(s[k].b), f);
		fclose(f);
		long got = fuzz_flowfile_one(s[k].b, s[k].n);
		cr_assert_gt(got, 0, "%s: %ld records", p, got);
		k++;
	}
	closedir(d);
	return k;
}

Test(fuzz_flowfile, seeds_and_mutants)
{
	static struct seed s[32];
	size_t ns = load_seeds(s, 32);
	cr_assert_geq(ns, 2);
	uint8_t b[4200];
	for (int it = 0; it < 40000; it++) {
		const struct seed *x = &s[rnd() % ns];
		size_t n = x->n;
		memcpy(b, x->b, n);
		int k = 1 + (int)(rnd() % 3);
		for (int j = 0; j < k; j++) {
			size_t at = n ? rnd() % n : 0;
			switch (rnd() % 4) {
			case 0:	/* flip */
				if (n)
					b[at] ^= (uint8_t)(1u << (rnd() % 8));
				break;
			case 1:	/* insert */
				if (n < sizeof(b) - 1) {
					memmove(b + at + 1, b + at, n - at);
					b[at] = (uint8_t)rnd();
					n++;
				}
				break;
			case 2:	/* delete */
				if (n) {
					memmove(b + at, b + at + 1, n - at - 1);
					n--;
				}
				break;
			default:	/* truncate */
				n = at;
				break;
			}
		}
		fuzz_flowfile_one(b, n);
	}
}

Test(fuzz_flowfile, random_after_header)
{
	uint8_t b[1024];
	for (int it = 0; it < 20000; it++) {
		size_t n = 16 + rnd() % (sizeof(b) - 16);
		memcpy(b, "RTITFLOW", 8);
		b[8] = (uint8_t)(1 + rnd() % 2);
		b[9] = b[10] = b[11] = 0;
		b[12] = 64;
		b[13] = b[14] = b[15] = 0;
		for (size_t i = 16; i < n; i++)
			b[i] = (uint8_t)rnd();
		if (b[8] == 2 && n >= 24 && rnd() % 2) {
			/* a plausible block header: a few records, the bytes left */
			uint32_t recs = 1 + (uint32_t)(rnd() % 8), len = (uint32_t)(n - 24);
			memcpy(b + 16, &recs, 4);
			memcpy(b + 20, &len, 4);
		}
		fuzz_flowfile_one(b, n);
	}
}
