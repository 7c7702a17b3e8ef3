/*
 * flow_compact.h - the compact binary flow (version 2 of PREFIX.flow,
 * docs/formats.md "PREFIX.flow (binary)", D180): each record as a tag byte
 * saying which fields differ from what the records before predict, then
 * those fields.  The encoder (flow_writer.c) and the reader (record.c)
 * share one predictor state and one coding (internal to the isa layer).
 */
#ifndef ISA_FLOW_COMPACT_H
#define ISA_FLOW_COMPACT_H

#include <stddef.h>
#include <stdint.h>

#include "rtit/record.h"

/* The tag byte: bit set = the field differs from its prediction and
 * follows, in the order of the bits. */
enum {
	ISA_FC_IP = 1u << 0,	/* ip != the previous next_ip: zigzag varint of the difference */
	ISA_FC_NEXT = 1u << 1,	/* next_ip != ip + len: zigzag varint of next_ip - (ip + len) */
	ISA_FC_KCL = 1u << 2,	/* kind, cls, len != the last seen at this ip's table slot: 3 bytes */
	ISA_FC_CYC = 1u << 3,	/* cycles - previous cycles != the previous such delta: zigzag varint */
	ISA_FC_TSC = 1u << 4,	/* tsc != previous tsc + the cycles delta: zigzag varint */
	ISA_FC_FLAGS = 1u << 5,	/* flags != the previous flags: 1 byte */
	ISA_FC_CTX = 1u << 6,	/* cr3, cpl, mode != the previous ones: varint, 1 byte, 1 byte */
	ISA_FC_EXTRA = 1u << 7	/* vector, msr, value not all 0: 1 byte, varint, varint */
};

enum {
	ISA_FC_TABLE_BITS = 12,		/* the kind/cls/len table: 4096 slots */
	ISA_FC_REC_MAX = 1 + 10 + 10 + 3 + 10 + 10 + 1 + 12 + 16, /* 73: a record's most bytes */
	ISA_FC_BLOCK_RECS = 16384,	/* records in a block at most */
	ISA_FC_BLOCK_HDR = 8		/* u32 records, u32 payload bytes */
};

/* What the records so far predict; all zero before the first record. */
struct isa_fc_state {
	uint64_t next_ip, cycles, dcyc, tsc, cr3;
	uint8_t flags, cpl, mode;
	uint32_t kcl[1u << ISA_FC_TABLE_BITS];	/* kind | cls << 8 | len << 16 */
};

void isa_fc_reset(struct isa_fc_state *s);

/* Encodes @n canonical 64-byte records at @c to @out (room for
 * ISA_FC_REC_MAX * @n bytes); returns the bytes written. */
size_t isa_fc_encode(struct isa_fc_state *s, const uint8_t *c, size_t n, uint8_t *out);

/* Decodes one record from @p (@avail bytes) into @r; returns the bytes it
 * took, or 0 when they end inside the record or a varint is longer than
 * 64 bits (@s is then unchanged). */
size_t isa_fc_decode(struct isa_fc_state *s, const uint8_t *p, size_t avail,
		     struct rtit_sim_rec *r);

#endif
