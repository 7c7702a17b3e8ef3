/* cli.h - the rtitsim command's subcommands and shared exit codes. */
#ifndef RTIT_CLI_H
#define RTIT_CLI_H

/* Exit codes of every subcommand. */
enum rtit_exit {
	RTIT_EXIT_OK = 0,
	RTIT_EXIT_USAGE = 1,	/* bad command line */
	RTIT_EXIT_IO = 2,	/* a file could not be read or written */
	RTIT_EXIT_DECODE = 3,	/* bad bytes: something was skipped */
	RTIT_EXIT_INPUT = 4,	/* bad input file (scenario, ELF, ...) */
	RTIT_EXIT_MISMATCH = 5,	/* a check or verification failed */
	RTIT_EXIT_RUN = 6	/* the guest did not end normally */
};

int rtit_cmd_dump(int argc, char **argv);
int rtit_cmd_demo(int argc, char **argv);
int rtit_cmd_run(int argc, char **argv);
int rtit_cmd_golden(int argc, char **argv);
int rtit_cmd_decode(int argc, char **argv);
int rtit_cmd_perfdata(int argc, char **argv);
int rtit_cmd_flow(int argc, char **argv);
int rtit_cmd_explain(int argc, char **argv);
int rtit_cmd_check(int argc, char **argv);

#endif /* RTIT_CLI_H */
