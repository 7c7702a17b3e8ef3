/*
 * fuzz_flow.h - the flow decoder's fuzz entry point (fuzz_flow.c), shared
 * by the libFuzzer harness and the bounded Criterion driver.
 */
#ifndef FUZZ_FLOW_H
#define FUZZ_FLOW_H

#include <stddef.h>
#include <stdint.h>

#include "rtit/flow.h"

/* Where the image is mapped, and the walk bound between packets. */
#define FUZZ_FLOW_BASE		0x401000ull
#define FUZZ_FLOW_MAX_WALK	4096u

/* Decodes one input, checking the invariants; returns the number of
 * records decoded (capped at INT_MAX). */
int fuzz_flow_one(const uint8_t *data, size_t size);

#endif
