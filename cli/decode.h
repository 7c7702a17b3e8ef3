/* decode.h - what `rtitsim check` takes from `rtitsim decode`. */
#ifndef RTIT_CLI_DECODE_H
#define RTIT_CLI_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rtit/record.h"

/* The records a decode produced, each with the trace offset of the packet
 * that established it, and where the truth stands after them. */
struct rtit_cli_decoded {
	struct rtit_sim_rec *recs;
	uint64_t *offs;
	size_t n, cap;
	bool nomem;
	/* with --check, when it matched: truth records after the last match */
	uint64_t trailing;
	bool matched;
	/* the trace and its configuration, for the packets around an offset */
	int dialect;
	bool cycle_acc;
};

/* Runs `rtitsim decode` (argv as rtit_cmd_decode takes it) collecting the
 * records into @out instead of printing them.  Returns its exit status. */
int rtit_cli_decode_collect(int argc, char **argv, struct rtit_cli_decoded *out);

/* Prints to stderr the packets of @t (@len bytes) around trace offset
 * @off, dump style, marking the one there. */
void rtit_cli_packets_around(const uint8_t *t, size_t len, uint64_t off, int dialect, bool ca);

#endif
