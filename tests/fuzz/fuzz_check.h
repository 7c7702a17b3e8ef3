/*
 * fuzz_check.h - the invariants the fuzz harnesses check on any input.
 *
 * fuzz_check_stream() decodes @data with rtit_pktdec twice in lockstep, in
 * memory mode and in reader mode with chunk sizes derived from the data,
 * resynchronising after every error, and aborts (after a message on
 * stderr) when an invariant breaks:
 *   - both modes return the same packets, errors and offsets, and so does
 *     rtit_pktdec_next_batch() (random batch sizes) in memory mode and in
 *     1-byte reads, and a decoder with general_only (no fast path);
 *   - packet offsets strictly increase, sizes are 1..16, raw bytes match;
 *   - an error is reported at the current offset;
 *   - an IP packet's IP is its payload expanded against the last IP the
 *     item reports;
 *   - decoded bytes + skipped bytes == input length;
 *   - each packet re-encoded by rtit_pkt_encode() in the context it was
 *     decoded in decodes back (same context) to an equal packet.
 */
#ifndef RTIT_TESTS_FUZZ_CHECK_H
#define RTIT_TESTS_FUZZ_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rtit/packet.h"

struct fuzz_stats {
	uint64_t packets, errors, bytes_decoded, bytes_skipped;
};

void fuzz_check_stream(enum rtit_dialect dialect, bool cycle_acc,
		       const uint8_t *data, size_t size, struct fuzz_stats *st);

/* The harnesses' entry points under the names the Criterion driver links
 * them by (the libFuzzer builds name them LLVMFuzzerTestOneInput). */
int fuzz_rtit_pktdec_entry(const uint8_t *data, size_t size);
int fuzz_pt_pktdec_entry(const uint8_t *data, size_t size);

#endif /* RTIT_TESTS_FUZZ_CHECK_H */
