/*
 * session.h - the session layer: one run of the pipeline, simulator ->
 * encoder -> output files, as `rtitsim run`, the golden corpus and the
 * tests use it.  The caller parses the scenario and opens the files; the
 * session runs the program under the simulator with the dialect's
 * encoder, writes the trace and the ground-truth flow, and fills in the
 * sideband (rtit/sideband.h) and the digests.  No printing, no exit: what
 * went wrong comes back as a status and one line.
 */
#ifndef RTIT_SESSION_H
#define RTIT_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "rtit/encoder.h"
#include "rtit/scenario.h"
#include "rtit/sideband.h"
#include "rtit/sim.h"

/* What a run has done so far (rtit_session_cfg.progress). */
struct rtit_session_progress {
	uint64_t records, packets, trace_bytes;
};

struct rtit_session_cfg {
	const struct rtit_scenario *sc;
	int deliver;			/* enum rtit_sim_deliver */
	/* The outputs; NULL: not written (the digests are still computed). */
	FILE *trace, *flow_bin, *flow_txt;
	/* flow_bin's version (rtit/record.h): 0 or RTIT_FLOW_V1, RTIT_FLOW_V2
	 * (compact, D180). */
	int flow_version;
	/* Optional: each packet with its cause (the readable account). */
	void (*on_packet)(void *opaque, const struct rtit_enc_note *note);
	void *opaque;
	/* Optional: after each record has reached the encoder, the record
	 * and the encoder's hidden state (rtitsim explain).  When set, the
	 * records reach the encoder one at a time (the bytes do not depend
	 * on it); when NULL, nothing is observed and nothing is computed.
	 * Also called with rec NULL before the first record and after the
	 * end (rtit_encoder_finish). */
	void (*on_record)(void *opaque, const struct rtit_sim_rec *rec,
			  const struct rtit_enc_state *st);
	/* Optional: runs the simulator (default rtit_sim_run), e.g. under
	 * a guard of the caller's. */
	int (*run)(struct rtit_sim *sim, struct rtit_sim_status *st);
	/* A program run: the program's path for the sideband's image key. */
	const char *image;
	/* Optional: called after every 2^20 records (instructions and events)
	 * with what the run has done so far, for a progress display. */
	void (*progress)(void *opaque, const struct rtit_session_progress *p);
};

/* How a session ended. */
enum rtit_session_status {
	RTIT_SESSION_OK = 0,
	RTIT_SESSION_INPUT,	/* bad parameters, program or scenario setup */
	RTIT_SESSION_RUN,	/* the guest did not end normally */
	RTIT_SESSION_IO		/* writing an output failed */
};

struct rtit_session_result {
	int status;			/* enum rtit_session_status */
	bool ran;			/* the simulator ran: the outputs hold
					 * what it produced */
	char msg[1024];			/* INPUT, RUN: one line */
	char io_msg[1024];		/* IO (also after RUN): one line */
	int io_errno;			/* IO: the failed write's errno, or 0 */
	struct rtit_sim_status st;	/* the simulator's stop */
	struct rtit_enc_stats stats;
	uint64_t trace_bytes, trace_digest, flow_digest, flow_records;
	uint64_t first_ctl;		/* the control MSR at the first enable */
	bool cycle_acc;			/* RTIT: the stream has cycle packets */
	/* Everything the sideband says (when status is OK, RUN or IO). */
	struct rtit_sideband sb;
	/* A process run (code process): what it did (docs/linux.md). */
	bool process;
	struct rtit_sim_process_info proc;
};

/*
 * Runs one session (@res is overwritten: finish a result used before with
 * rtit_session_result_fini).  Returns the status (also in res->status): OK; INPUT
 * before anything ran (nothing was written); RUN or IO after the run (the
 * outputs hold what was produced; the digests and the sideband describe
 * it).
 */
int rtit_session_run(const struct rtit_session_cfg *cfg, struct rtit_session_result *res);

/* Frees what @res holds (its sideband's mmap list). */
void rtit_session_result_fini(struct rtit_session_result *res);

#endif /* RTIT_SESSION_H */
