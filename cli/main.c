/* main.c - the rtitsim command: dispatch to subcommands. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "rtit/version.h"

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

static const struct cmd cmds[] = {
#ifdef RTIT_HAVE_SIM
	{ "run", rtit_cmd_run, "simulate a scenario or program and write its trace" },
	{ "golden", rtit_cmd_golden, "verify or update the golden corpus" },
	{ "decode", rtit_cmd_decode, "reconstruct the instruction flow from a trace and the program" },
	{ "perf-data", rtit_cmd_perfdata, "an Intel PT run as a perf.data for Linux perf" },
	{ "explain", rtit_cmd_explain, "a run as one HTML page: why every byte of the trace is there" },
	{ "check", rtit_cmd_check, "compare another decoder's output with a bundle's ground truth" },
#endif
	{ "flow", rtit_cmd_flow, "print a binary ground-truth flow (.flow) as text" },
	{ "dump", rtit_cmd_dump, "print the packets of a trace, one per line" },
	{ "demo", rtit_cmd_demo, "dump a small hand-built stream of each dialect" },
};

static void usage(FILE *out)
{
	fputs("usage: rtitsim COMMAND [ARGS]\n\ncommands:\n", out);
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(out, "  %-9s %s\n", cmds[i].name, cmds[i].help);
	fputs("\n'rtitsim COMMAND --help' describes one command; 'rtitsim --version' prints\n"
	      "the version.  Exit statuses: 0 ok, 1 usage, 2 I/O, 3 decode error, 4 bad\n"
	      "input file, 5 mismatch, 6 the guest did not end normally (rtitsim(1)).\n", out);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return RTIT_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("rtitsim %s\n", RTITSIM_VERSION_STRING);
		return RTIT_EXIT_OK;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return RTIT_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "rtitsim: unknown command '%s' (try 'rtitsim --help')\n", argv[1]);
	return RTIT_EXIT_USAGE;
}
