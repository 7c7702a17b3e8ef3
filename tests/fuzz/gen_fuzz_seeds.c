/*
 * gen_fuzz_seeds.c - writes the seed corpus tests/fuzz/seeds/: small valid
 * pktgen streams of each dialect.  Files named rtit_* start with the byte
 * fuzz_rtit_pktdec reads Cycle_Acc from.
 *
 *   build-b/tests/fuzz/gen_fuzz_seeds tests/fuzz/seeds
 */
#include <stdio.h>
#include <stdlib.h>

#include "pktgen.h"

struct seed {
	const char *name;
	struct pktgen_opts o;
	size_t size;
};

static int write_seed(const char *dir, const struct seed *s)
{
	char path[4096];
	size_t len;
	uint8_t *buf = pktgen_stream(&s->o, s->size, &len, NULL, NULL);
	FILE *f;
	int rtit = s->o.dialect == RTIT_DIALECT_RTIT;
	uint8_t hdr = s->o.cycle_acc ? 1 : 0;

	snprintf(path, sizeof(path), "%s/%s", dir, s->name);
	f = fopen(path, "wb");
	if (!f || (rtit && fwrite(&hdr, 1, 1, f) != 1) || fwrite(buf, 1, len, f) != len ||
	    fclose(f)) {
		perror(path);
		return 1;
	}
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	const struct seed seeds[] = {
		{ "rtit_uniform.bin", { .dialect = RTIT_DIALECT_RTIT, .cycle_acc = false, .psb_every = 256, .mix = PKTGEN_MIX_UNIFORM, .seed = 1 }, 1024 },
		{ "rtit_realistic.bin", { .dialect = RTIT_DIALECT_RTIT, .cycle_acc = false, .psb_every = 512, .mix = PKTGEN_MIX_REALISTIC, .seed = 2 }, 2048 },
		{ "rtit_cyc_uniform.bin", { .dialect = RTIT_DIALECT_RTIT, .cycle_acc = true, .psb_every = 256, .mix = PKTGEN_MIX_UNIFORM, .seed = 3 }, 1024 },
		{ "rtit_cyc_realistic.bin", { .dialect = RTIT_DIALECT_RTIT, .cycle_acc = true, .psb_every = 512, .mix = PKTGEN_MIX_REALISTIC, .seed = 4 }, 2048 },
		{ "rtit_short.bin", { .dialect = RTIT_DIALECT_RTIT, .cycle_acc = true, .psb_every = 0, .mix = PKTGEN_MIX_UNIFORM, .seed = 5 }, 64 },
		{ "pt_uniform.bin", { .dialect = RTIT_DIALECT_PT, .cycle_acc = false, .psb_every = 256, .mix = PKTGEN_MIX_UNIFORM, .seed = 6 }, 1024 },
		{ "pt_uniform2.bin", { .dialect = RTIT_DIALECT_PT, .cycle_acc = false, .psb_every = 1024, .mix = PKTGEN_MIX_UNIFORM, .seed = 7 }, 3072 },
		{ "pt_realistic.bin", { .dialect = RTIT_DIALECT_PT, .cycle_acc = false, .psb_every = 512, .mix = PKTGEN_MIX_REALISTIC, .seed = 8 }, 2048 },
		{ "pt_libipt.bin", { .dialect = RTIT_DIALECT_PT, .cycle_acc = false, .psb_every = 512, .mix = PKTGEN_MIX_UNIFORM, .seed = 9 }, 1024 },
		{ "pt_short.bin", { .dialect = RTIT_DIALECT_PT, .cycle_acc = false, .psb_every = 0, .mix = PKTGEN_MIX_UNIFORM, .seed = 10 }, 64 },
	};
	int rc = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
		struct seed s = seeds[i];
		if (i == 8)
			s.o.mask = pktgen_pt_libipt();
		rc |= write_seed(argv[1], &s);
	}
	return rc;
}
