/*
 * cmd_perfdata.c - `rtitsim perf-data PREFIX DIR [--image SCENARIO|ELF]`:
 * an Intel PT run (PREFIX.trace, PREFIX.sideband, as `rtitsim run --out
 * PREFIX` wrote them) as the perf.data and image.elf that Linux perf's
 * Intel PT decoder reads (`perf script -i DIR/perf.data`): rtit/perfdata.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "rtit/msr_pt.h"
#include "rtit/perfdata.h"
#include "rtit/scenario.h"
#include "util.h"

static void perfdata_usage(FILE *out)
{
	fputs("usage: rtitsim perf-data PREFIX DIR [--image SCENARIO.scn|ELF]\n"
	      "\n"
	      "Writes DIR/perf.data and DIR/image.elf from an Intel PT run (PREFIX.trace,\n"
	      "PREFIX.sideband) as `perf record -e intel_pt//` would have recorded one thread\n"
	      "running the program; decode it with `perf script -i DIR/perf.data\n"
	      "--itrace=i1i` (perf 5.18 or later for Event Trace).  The image is the\n"
	      "sideband's program or scenario unless --image names one; its code must be\n"
	      "at user-space addresses.\n"
	      "\n"
	      "Exit status: 0 written, 1 usage, 2 I/O, 4 bad input (not an Intel PT run,\n"
	      "a bad scenario or ELF, kernel addresses).\n", out);
}

static int status_of(int err)
{
	return err == -RTIT_ERR_IO ? RTIT_EXIT_IO : RTIT_EXIT_INPUT;
}

/* The image into @img and the ADDRn presets of a scenario into @in. */
static int perfdata_image(const char *image, const char *sb_path, struct rtit_image *img,
			  struct rtit_perfdata_in *in)
{
	size_t n = strlen(image);
	int r;
	if (n < 4 || strcmp(image + n - 4, ".scn")) {
		if ((r = rtit_image_add_elf(img, image, 0)) < 0)
			fprintf(stderr, "rtitsim perf-data: %s\n", rtit_image_errmsg(img));
		return r < 0 ? status_of(r) : RTIT_EXIT_OK;
	}
	/* a relative scenario path in the sideband: also next to it */
	char buf[2048];
	const char *slash = strrchr(sb_path, '/');
	FILE *f = fopen(image, "r");
	if (f)
		fclose(f);
	else if (image[0] != '/' && slash) {
		snprintf(buf, sizeof(buf), "%.*s/%s", (int)(slash - sb_path), sb_path, image);
		image = buf;
	}
	struct rtit_scenario sc;
	struct rtit_scn_error err;
	memset(&sc, 0, sizeof(sc));
	if ((r = rtit_scenario_parse_file(image, &sc, &err)) < 0 ||
	    (r = rtit_scenario_image(&sc, img, &err)) < 0) {
		fprintf(stderr, "%s\n", err.text);
		rtit_scenario_fini(&sc);
		return status_of(r);
	}
	for (size_t i = 0; i < sc.nmsrs; i++) {
		uint32_t m = sc.msrs[i].msr;
		if (m >= RTIT_PT_MSR_ADDR0_A && m < RTIT_PT_MSR_ADDR0_A + 8)
			((m - RTIT_PT_MSR_ADDR0_A) & 1 ? in->addr_b : in->addr_a)
				[(m - RTIT_PT_MSR_ADDR0_A) / 2] = sc.msrs[i].value;
	}
	rtit_scenario_fini(&sc);
	return RTIT_EXIT_OK;
}

int rtit_cmd_perfdata(int argc, char **argv)
{
	const char *pos[2] = {0}, *image = NULL;
	int npos = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			perfdata_usage(stdout);
			return RTIT_EXIT_OK;
		} else if (!strcmp(argv[i], "--image") && i + 1 < argc) {
			image = argv[++i];
		} else if (argv[i][0] != '-' && npos < 2) {
			pos[npos++] = argv[i];
		} else {
			fprintf(stderr, "rtitsim perf-data: unexpected argument '%s'\n", argv[i]);
			perfdata_usage(stderr);
			return RTIT_EXIT_USAGE;
		}
	}
	if (npos != 2) {
		perfdata_usage(stderr);
		return RTIT_EXIT_USAGE;
	}

	static struct rtit_sideband sb;	/* large */
	char path[4096], msg[1024];
	struct rtit_perfdata_in in = { .sb = &sb };
	struct rtit_image *img = NULL;
	uint8_t *trace = NULL;
	int status, r;

	snprintf(path, sizeof(path), "%s.sideband", pos[0]);
	if ((r = rtit_sideband_read(path, &sb, msg, sizeof(msg))) < 0) {
		fprintf(stderr, "rtitsim perf-data: %s\n", msg);
		return status_of(r);
	}
	if (!image && sb.nmmaps)
		image = "<mmaps>";	/* a process run: its code mappings */
	if (!image)
		image = sb.image[0] ? sb.image : sb.scenario;
	if (!image[0] || (image[0] == '<' && strcmp(image, "<mmaps>"))) {
		fprintf(stderr, "rtitsim perf-data: %s names no program file: give --image\n", path);
		rtit_sideband_fini(&sb);
		return RTIT_EXIT_USAGE;
	}
	snprintf(path, sizeof(path), "%s.trace", pos[0]);
	if (!(trace = rtit_cli_slurp(path, &in.trace_len))) {
		fprintf(stderr, "rtitsim perf-data: %s: %s\n", path, strerror(errno));
		rtit_sideband_fini(&sb);
		return RTIT_EXIT_IO;
	}
	in.trace = trace;
	snprintf(path, sizeof(path), "%s.sideband", pos[0]);
	if ((r = rtit_image_new(&img)) < 0) {
		fprintf(stderr, "rtitsim perf-data: %s\n", rtit_errstr(r));
		status = RTIT_EXIT_IO;
	} else if (!strcmp(image, "<mmaps>") && (r = rtit_image_add_mmaps(img, &sb)) < 0) {
		fprintf(stderr, "rtitsim perf-data: the sideband's maps: %s\n", rtit_image_errmsg(img));
		status = status_of(r);
	} else if (!strcmp(image, "<mmaps>") ||
		   (status = perfdata_image(image, path, img, &in)) == RTIT_EXIT_OK) {
		status = RTIT_EXIT_OK;
		in.img = img;
		if ((r = rtit_perfdata_write(&in, pos[1], msg, sizeof(msg))) < 0) {
			fprintf(stderr, "rtitsim perf-data: %s\n", msg);
			status = status_of(r);
		}
	}
	rtit_image_free(img);
	rtit_sideband_fini(&sb);
	free(trace);
	return status;
}
