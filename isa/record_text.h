/*
 * record_text.h - what record.c gives the flow writer (flow_writer.c):
 * one text line of the ground truth, the binary file's header and trailer,
 * a canonical record read back (internal to the isa layer).
 */
#ifndef ISA_RECORD_TEXT_H
#define ISA_RECORD_TEXT_H

#include <stdint.h>

#include "rtit/record.h"

/* The longest text line, its newline included (a longer one is cut, as
 * rtit_sim_rec_format cuts it). */
#define ISA_FLOW_LINE_MAX 256

/* Writes @r's text line and its newline at @p; returns the end of the
 * line.  It may write (not read) scratch bytes past the line's end, all
 * within ISA_FLOW_LINE_MAX bytes of @p, which must be writable (D186). */
char *isa_flow_line(const struct rtit_sim_rec *r, char *p);

/* The binary file's header (16 bytes, of version @version) and trailer
 * (24 bytes: count, the digest in canonical big-endian form). */
void isa_flow_header(uint8_t h[16], int version);
void isa_flow_trailer(uint8_t t[24], uint64_t count, uint64_t digest);

/* A canonical 64-byte record back into @r. */
void isa_rec_unpack(const uint8_t in[64], struct rtit_sim_rec *r);

#endif
