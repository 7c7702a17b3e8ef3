/*
 * fuzz_flowfile.h - the binary flow reader's fuzz entry point
 * (fuzz_flowfile.c), shared by the libFuzzer harness and the bounded
 * Criterion driver.
 */
#ifndef FUZZ_FLOWFILE_H
#define FUZZ_FLOWFILE_H

#include <stddef.h>
#include <stdint.h>

/* Reads one input as a flow file (either version), checking the
 * invariants; returns the records read before the end or the error, or
 * -1 when the file was refused at its header. */
long fuzz_flowfile_one(const uint8_t *data, size_t size);

#endif
