/* dump.h - the dump loop shared by `dump` and `demo`. */
#ifndef RTIT_CLI_DUMP_H
#define RTIT_CLI_DUMP_H

#include <stdbool.h>
#include <stdio.h>

#include "rtit/pktdec.h"

struct rtit_dump_opts {
	bool json;
	bool sync;
};

/* Dumps the stream @cfg describes to @out; @name labels errors.
 * Returns an RTIT_EXIT_* code. */
int rtit_dump_stream(FILE *out, const struct rtit_dump_opts *o,
		     const struct rtit_pktdec_cfg *cfg, const char *name);

#endif
