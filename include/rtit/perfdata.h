/*
 * perfdata.h - an Intel PT run as Linux perf records it: a perf.data file
 * and the ELF image it names, which `perf script` (perf's Intel PT
 * decoder, tools/perf/util/intel-pt-decoder) decodes as if `perf record
 * -e intel_pt//` had traced one thread running the program.  The session
 * layer's writer behind `rtitsim perf-data`; the perf tests use it to make
 * perf a second independent oracle next to libipt.
 *
 * What is written (docs/formats.md, "perf.data"):
 *   DIR/image.elf  every region of the image as one PT_LOAD segment of an
 *                  ELF executable (ELFCLASS32 for 32-bit code: perf decodes
 *                  a map as 32-bit when its DSO is an ELF32), with a FUNC
 *                  symbol per region;
 *   DIR/perf.data  the file header, the attrs of the intel_pt event and of
 *                  a PEBS event with aux_output, and the records
 *                  AUXTRACE_INFO, COMM, one MMAP2 per region, AUXTRACE
 *                  (the trace), FINISHED_ROUND.  No PERF_SAMPLE_TIME:
 *                  perf decodes "timelessly".
 */
#ifndef RTIT_PERFDATA_H
#define RTIT_PERFDATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rtit/error.h"
#include "rtit/image.h"
#include "rtit/sideband.h"

struct rtit_perfdata_in {
	const uint8_t *trace;		/* the Intel PT packet bytes */
	size_t trace_len;
	/* IA32_RTIT_CTL at the first enable (has_ia32_rtit_ctl required),
	 * the TSC:ART ratio (art_num/art_den), the CBR, the mode */
	const struct rtit_sideband *sb;
	const struct rtit_image *img;	/* the code: user-space addresses */
	/* IA32_RTIT_ADDRn_A/B as the run started (SDM 33.2.8.5): the
	 * ranges IA32_RTIT_CTL's ADDRn_CFG makes filters or TraceStops */
	uint64_t addr_a[4], addr_b[4];
};

/*
 * Writes DIR/image.elf and DIR/perf.data (DIR exists).  Returns 0,
 * -RTIT_ERR_INVALID (not an Intel PT run, an empty image, a kernel-half
 * region, an ADDRn range not inside one region; nothing written),
 * -RTIT_ERR_IO, -RTIT_ERR_NOMEM, with one line in @msg.  A file is written
 * whole or removed.
 */
int rtit_perfdata_write(const struct rtit_perfdata_in *in, const char *dir, char *msg,
			size_t msgsz);

#endif /* RTIT_PERFDATA_H */
