/*
 * runfiles.h - reading what `rtitsim run` wrote (PREFIX.flow,
 * PREFIX.trace) and a scenario's program image (no simulator), for the
 * tools that hand a run to another decoder (tests/libipt/ptflow_check.c,
 * tests/perf).  Errors are printed as one line naming the file.
 */
#ifndef RTIT_TESTS_RUNFILES_H
#define RTIT_TESTS_RUNFILES_H

#include <stdio.h>
#include <stdlib.h>

#include <string.h>

#include "rtit/image.h"
#include "rtit/record.h"
#include "rtit/scenario.h"
#include "rtit/sideband.h"
#include "util.h"

/* Reads PREFIX.flow into *recs (malloc'd, *n records).  0, or -1 after
 * printing what failed. */
static inline int runfiles_read_flow(const char *prefix, struct rtit_sim_rec **recs, size_t *n)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s.flow", prefix);
	FILE *f = fopen(path, "rb");
	int rc = f ? rtit_flow_read(f, recs, n) : -1;
	if (f)
		fclose(f);
	if (rc < 0) {
		fprintf(stderr, "%s: cannot read the flow\n", path);
		return -1;
	}
	return 0;
}

/* Reads PREFIX.trace (malloc'd, *len bytes).  NULL after printing what
 * failed. */
static inline uint8_t *runfiles_read_trace(const char *prefix, size_t *len)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s.trace", prefix);
	uint8_t *trace = rtit_cli_slurp(path, len);
	if (!trace)
		fprintf(stderr, "%s: cannot read the trace\n", path);
	return trace;
}

/* Parses the scenario at path and loads its code into a new image *img
 * (the flow layer's: only the bytes its files provide; no simulator).
 * 0, or -1 after printing what failed. */
static inline int runfiles_load_image(const char *path, struct rtit_image **img)
{
	struct rtit_scn_error err;
	struct rtit_scenario sc;
	memset(&sc, 0, sizeof(sc));
	size_t pl = strlen(path);
	if (pl > 9 && !strcmp(path + pl - 9, ".sideband")) {
		/* a process run: the code of its map lines */
		static struct rtit_sideband sb;
		char e[512];
		rtit_sideband_fini(&sb);	/* static: a read before may have filled it */
		int r = rtit_sideband_read(path, &sb, e, sizeof(e));
		if (r < 0) {
			fprintf(stderr, "%s\n", e);
			return -1;
		}
		if (rtit_image_new(img) < 0 || rtit_image_add_mmaps(*img, &sb) < 0) {
			fprintf(stderr, "%s: %s\n", path, *img ? rtit_image_errmsg(*img) : "no memory");
			rtit_image_free(*img);
			*img = NULL;
			return -1;
		}
		return 0;
	}
	if (rtit_scenario_parse_file(path, &sc, &err) < 0) {
		fprintf(stderr, "%s\n", err.text);
		return -1;
	}
	int r = rtit_image_new(img);
	if (r < 0)
		fprintf(stderr, "%s: %s\n", path, rtit_errstr(r));
	else if ((r = rtit_scenario_image(&sc, *img, &err)) < 0)
		fprintf(stderr, "%s: cannot load the program: %s\n", path, err.text);
	rtit_scenario_fini(&sc);
	if (r < 0) {
		rtit_image_free(*img);
		*img = NULL;
	}
	return r < 0 ? -1 : 0;
}

#endif
