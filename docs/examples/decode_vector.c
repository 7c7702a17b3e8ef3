/*
 * decode_vector.c - decode a trace with the rtitsim decoding library:
 * its packets, then its instruction flow.  No simulator is involved.
 *
 *   cc decode_vector.c $(pkg-config --cflags --libs rtitsim-decode)
 *   ./a.out golden/expected/rtit_lip_compression golden/elf/lip.elf
 *
 * STEM names STEM.trace and STEM.sideband (as `rtitsim run --out STEM`
 * writes them); ELF is the program.  Prints one dump line per packet
 * (as `rtitsim dump`), then "I IP" per decoded instruction and "E IP" per
 * event; '#' lines say where decoding failed.  Exit 0, or 1 on any error.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <rtit/rtitsim.h>
#include <rtit/sideband.h>

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b = NULL;
	long n;
	if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
	    fseek(f, 0, SEEK_SET) == 0 && (b = malloc((size_t)n + 1)) &&
	    fread(b, 1, (size_t)n, f) == (size_t)n)
		*len = (size_t)n;
	else {
		free(b);
		b = NULL;
	}
	if (f)
		fclose(f);
	return b;
}

/* The flow decoder hands out records in batches. */
static void on_rec(void *opaque, const struct rtit_sim_rec *recs, size_t n)
{
	(void)opaque;
	for (size_t i = 0; i < n; i++)
		printf("%c %016" PRIx64 "\n", recs[i].kind == RTIT_SIM_INSN ? 'I' : 'E',
		       recs[i].ip);
}

static int errors;

static void on_note(void *opaque, const struct rtit_flow_note *nt)
{
	(void)opaque;
	if (nt->kind == RTIT_FLOW_N_ERROR) {
		printf("# error at offset 0x%" PRIx64 ": %s\n", nt->offset, nt->msg);
		errors++;
	}
}

int main(int argc, char **argv)
{
	char path[4096], err[512];
	struct rtit_sideband sb;
	struct rtit_image *img = NULL;
	size_t len;

	if (argc != 3) {
		fprintf(stderr, "usage: %s STEM ELF  (rtitsim %s)\n", argv[0], rtit_version());
		return 1;
	}
	snprintf(path, sizeof(path), "%s.sideband", argv[1]);
	if (rtit_sideband_read(path, &sb, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	snprintf(path, sizeof(path), "%s.trace", argv[1]);
	uint8_t *trace = slurp(path, &len);
	if (!trace) {
		fprintf(stderr, "%s: cannot read\n", path);
		return 1;
	}

	/* 1. The packets, with the streaming packet decoder. */
	struct rtit_pktdec pd;
	struct rtit_pktdec_cfg pc = {
		.dialect = sb.dialect == RTIT_DIALECT_PT ? RTIT_DIALECT_PT : RTIT_DIALECT_RTIT,
		.cycle_acc = sb.cycle_acc > 0,
		.mem = trace, .mem_len = len,
	};
	struct rtit_pktdec_item it;
	int r;
	if (rtit_pktdec_init(&pd, &pc) < 0)
		return 1;
	while ((r = rtit_pktdec_next(&pd, &it)) > 0)
		rtit_print_line(stdout, pc.dialect, &it);
	if (r < 0) {
		printf("# packet error at offset 0x%" PRIx64 ": %s\n", rtit_pktdec_offset(&pd),
		       rtit_errstr(r));
		errors++;
	}

	/* 2. The instruction flow: the trace, the image, the sideband's
	 * configuration. */
	if (rtit_image_new(&img) < 0 || rtit_image_add_elf(img, argv[2], 0) < 0) {
		fprintf(stderr, "%s\n", rtit_image_errmsg(img));
		return 1;
	}
	struct rtit_flow_cfg cfg;
	rtit_flow_cfg_default(&cfg);
	rtit_flow_cfg_from_sideband(&cfg, &sb);
	cfg.mem = trace;
	cfg.mem_len = len;
	cfg.read_mem = rtit_image_read;
	cfg.mem_opaque = img;
	cfg.on_rec = on_rec;
	cfg.on_note = on_note;
	struct rtit_flow_dec *fd;
	if (rtit_flow_dec_new(&fd, &cfg) < 0)
		return 1;
	if (rtit_flow_dec_run(fd) != 0)	/* > 0: errors were reported */
		errors++;
	rtit_flow_dec_free(fd);
	rtit_image_free(img);
	rtit_sideband_fini(&sb);
	free(trace);
	return errors ? 1 : 0;
}
