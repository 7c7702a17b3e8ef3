/* run.h - one simulation + encoding run, shared by `run` and `golden`. */
#ifndef RTIT_CLI_RUN_H
#define RTIT_CLI_RUN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct rtit_run_opts {
	const char *text;	/* the scenario text */
	const char *source;	/* its file name, for messages */
	const char *name;	/* what to call the run in messages */
	const char *out;	/* output prefix, or NULL */
	bool default_out;	/* no out: use the scenario's name */
	FILE *account;		/* each packet with its cause, or NULL */
	int deliver;		/* enum rtit_sim_deliver */
	bool quiet;
	bool silent;		/* print nothing but errors */
	/* Decode the trace again with the flow decoder and compare with the
	 * ground truth (RTIT); image: the program for the decoder (a
	 * scenario path, an ELF, or "demo"). */
	bool verify;
	const char *image;
	/* Which ground-truth files to write: RTIT_RUN_FLOW_* (0: both). */
	int flow;
	/* PREFIX.flow's version (rtit/record.h): 0 the default (D180: 2, the
	 * compact one; 1 in a bundle, the golden corpus's form), 1 or 2. */
	int flow_version;
	/* A program run: the guest owns stdout, rtitsim's own lines go to
	 * stderr with an "rtitsim: " prefix, and the process's summary too. */
	bool program;
	/* A directory: also write the perf.data of the run there (Intel PT). */
	const char *perf_data;
	/* A directory: write a bundle there (rtit/bundle.h), every file
	 * named STEM.* (default stem: the scenario's name); out is ignored
	 * and flow is both. */
	const char *bundle, *stem;
	/* Progress on stderr (records, packets, bytes, rate): 1 always, 0
	 * never, -1 when stderr is a terminal and not quiet. */
	int progress;
	/* Lines appended from the command line: scenario line
	 * first_option_line + i came from options[i] ("--param K=V"), so a
	 * message about it names the option, not a line of the file. */
	int first_option_line, noptions;
	const char *const *options;
};

/* A program run's options (docs/linux.md), shared by `run` and
 * `explain`. */
struct rtit_cli_prog {
	const char *cmd;		/* for messages (default "rtitsim run") */
	const char *dialect;		/* "rtit" (default) or "pt" */
	bool bare;			/* the old bare-metal mode: CPL 0, ends at HLT */
	const char *env[64];
	int nenv;
	const char *seed, *writable, *stdin_path, *cycles, *budget;
	char **args;			/* after PROGRAM */
	int nargs;
};

/* A program run's option at argv[*i] (--dialect, --bare, --env, --seed,
 * --writable, --stdin, --syscall-cycles, --budget): 1 taken (*i past its
 * value), 0 not one, -1 bad (after a line). */
int rtit_cli_prog_option(struct rtit_cli_prog *pg, int argc, char **argv, int *i);

/* Writes to @mem the scenario of running the program @input: a Linux
 * process traced at CPL 3 only, as `perf record -e intel_pt//u` or the
 * RTIT CPL filter; --bare: the bare-metal mode, everything traced. */
void rtit_cli_prog_scenario(FILE *mem, const char *input, const struct rtit_cli_prog *pg);

enum {
	RTIT_RUN_FLOW_BOTH = 0,	/* PREFIX.flow and PREFIX.flow.txt (default) */
	RTIT_RUN_FLOW_BIN,	/* PREFIX.flow only (`rtitsim flow` prints it) */
	RTIT_RUN_FLOW_TXT,	/* PREFIX.flow.txt only */
	RTIT_RUN_FLOW_NONE	/* neither (the digest is still computed) */
};

struct rtit_run_result {
	int status;		/* RTIT_EXIT_* */
	int dialect;
	bool cycle_acc;
	uint64_t trace_digest, flow_digest, trace_bytes;
	char name[64];
	char describe[256];
};

/* Runs the scenario: simulator and the dialect's encoder model; writes the
 * outputs under o->out; checks the expect block.  Returns RTIT_EXIT_*
 * (also in res->status when res is not NULL). */
int rtit_run(const struct rtit_run_opts *o, struct rtit_run_result *res);

#endif
