/*
 * fuzz_rtit_pktdec.c - libFuzzer harness: the RTIT packet decoder.
 *
 * The first input byte chooses Cycle_Acc (bit 0); the rest is the stream.
 * The invariants are in fuzz_check.h.  Built as LLVMFuzzerTestOneInput for
 * libFuzzer, and under FUZZ_ENTRY's name for the Criterion driver.
 */
#include "fuzz_check.h"

#ifndef FUZZ_ENTRY
#define FUZZ_ENTRY LLVMFuzzerTestOneInput
int FUZZ_ENTRY(const uint8_t *data, size_t size);
#endif

int FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	if (!size)
		return 0;
	fuzz_check_stream(RTIT_DIALECT_RTIT, data[0] & 1, data + 1, size - 1, NULL);
	return 0;
}
