/*
 * fuzz_pt_pktdec.c - libFuzzer harness: the Intel PT packet decoder.
 *
 * The whole input is the stream.  The invariants are in fuzz_check.h.
 * Built as LLVMFuzzerTestOneInput for libFuzzer, and under FUZZ_ENTRY's
 * name for the Criterion driver.
 */
#include "fuzz_check.h"

#ifndef FUZZ_ENTRY
#define FUZZ_ENTRY LLVMFuzzerTestOneInput
int FUZZ_ENTRY(const uint8_t *data, size_t size);
#endif

int FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	fuzz_check_stream(RTIT_DIALECT_PT, false, data, size, NULL);
	return 0;
}
