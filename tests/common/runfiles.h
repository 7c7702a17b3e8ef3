/*
 * runfiles.h - reading what `rtitsim run` wrote (PREFIX.flow) and loading
 * PREFIX.trace, loading a scenario's program into the simulator without running it, for the
 * tools that hand a run to another decoder (tests/libipt/ptflow_check.c,
 * tests/perf).  Errors are printed as one line naming the file.
 */
#ifndef RTIT_TESTS_RUNFILES_H
#define RTIT_TESTS_RUNFILES_H

#include <stdio.h>
#include <stdlib.h>

#include "rtit/scenario.h"
#include "rtit/sim.h"
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

/* Parses the scenario at path into *sc and loads its program (memory,
 * code, handlers, MSR presets: rtit_scenario_setup) into a new simulator
 * *sim, not run.  0, or -1 after printing what failed. */
static inline int runfiles_load_scenario(const char *path, struct rtit_scenario *sc,
					 struct rtit_sim_config *cfg, struct rtit_sim **sim)
{
	struct rtit_scn_error err;
	if (rtit_scenario_parse_file(path, sc, &err) < 0) {
		fprintf(stderr, "%s\n", err.text);
		return -1;
	}
	rtit_sim_config_default(cfg);
	rtit_scenario_config(sc, cfg);
	if (rtit_sim_new(sim, cfg) < 0 || rtit_scenario_setup(sc, *sim, &err) < 0) {
		fprintf(stderr, "%s: cannot load the program: %s\n", path, err.text);
		return -1;
	}
	return 0;
}

/* Both for a run: PREFIX.trace (returned, *len bytes) and the program
 * of the scenario it ran (runfiles_load_scenario).  NULL after printing
 * what failed. */
static inline uint8_t *runfiles_load_run(const char *prefix, const char *scenario, size_t *len,
					 struct rtit_scenario *sc, struct rtit_sim_config *cfg,
					 struct rtit_sim **sim)
{
	uint8_t *trace = runfiles_read_trace(prefix, len);
	if (trace && runfiles_load_scenario(scenario, sc, cfg, sim) < 0) {
		free(trace);
		return NULL;
	}
	return trace;
}

#endif /* RTIT_TESTS_RUNFILES_H */
