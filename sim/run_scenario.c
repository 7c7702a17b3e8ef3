/*
 * run_scenario.c - rtit-sim-run: runs a scenario file and writes its
 * ground-truth flow.
 *
 *   rtit-sim-run SCENARIO [-b FLOW.bin] [-t FLOW.txt|-] [-q]
 *
 * Prints the stop reason and the XXH3 digest (canonical hex).  Exit codes:
 * 0 run ended normally (halted, end address), 1 run ended otherwise
 * (budget, fault), 2 bad scenario or load error, 3 I/O error.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtit/scenario.h"

static int usage(void)
{
	fprintf(stderr, "usage: rtit-sim-run SCENARIO [-b FLOW.bin] [-t FLOW.txt|-] [-q]\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *scn = NULL, *bin_path = NULL, *txt_path = NULL;
	bool quiet = false;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-b") && i + 1 < argc)
			bin_path = argv[++i];
		else if (!strcmp(argv[i], "-t") && i + 1 < argc)
			txt_path = argv[++i];
		else if (!strcmp(argv[i], "-q"))
			quiet = true;
		else if (argv[i][0] == '-' || scn)
			return usage();
		else
			scn = argv[i];
	}
	if (!scn)
		return usage();
	struct rtit_scenario sc;
	struct rtit_scn_error err;
	if (rtit_scenario_parse_file(scn, &sc, &err) < 0) {
		fprintf(stderr, "%s\n", err.text);
		rtit_scenario_fini(&sc);
		return 2;
	}
	FILE *bin = NULL, *txt = NULL;
	if (bin_path && !(bin = fopen(bin_path, "wb"))) {
		perror(bin_path);
		return 3;
	}
	if (txt_path && !(txt = strcmp(txt_path, "-") ? fopen(txt_path, "w") : stdout)) {
		perror(txt_path);
		return 3;
	}
	struct rtit_flow_writer w;
	if (rtit_flow_writer_init(&w, bin, txt) < 0) {
		fprintf(stderr, "%s: cannot start the flow writer\n", scn);
		return 3;
	}
	struct rtit_sim_config cfg;
	rtit_sim_config_default(&cfg);
	rtit_scenario_config(&sc, &cfg);
	cfg.consumer.on_batch = rtit_flow_writer_on_batch;
	cfg.consumer.opaque = &w;
	struct rtit_sim *sim;
	int r = rtit_sim_new(&sim, &cfg);
	if (r < 0) {
		fprintf(stderr, "%s: %s\n", scn, rtit_errstr(r));
		return 2;
	}
	if (rtit_scenario_setup(&sc, sim, &err) < 0) {
		fprintf(stderr, "%s\n", err.text);
		rtit_sim_free(sim);
		rtit_scenario_fini(&sc);
		return 2;
	}
	struct rtit_sim_status st;
	r = rtit_sim_run(sim, &st);
	uint64_t digest = 0;
	int wr = rtit_flow_writer_fini(&w, &digest);
	if (bin && fclose(bin) != 0)
		wr = -RTIT_ERR_IO;
	if (txt && txt != stdout && fclose(txt) != 0)
		wr = -RTIT_ERR_IO;
	if (!quiet || r < 0)
		fprintf(r < 0 ? stderr : stdout, "%s: %s\n", scn, st.msg);
	printf("%016" PRIx64 "  %s  (%" PRIu64 " instructions, %" PRIu64 " events)\n",
	       digest, scn, st.insns, st.events);
	rtit_sim_free(sim);
	rtit_scenario_fini(&sc);
	if (wr < 0) {
		fprintf(stderr, "%s: writing the flow failed\n", scn);
		return 3;
	}
	return r < 0 ? 1 : 0;
}
