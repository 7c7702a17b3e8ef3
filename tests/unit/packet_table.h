/*
 * packet_table.h - one row per packet form of both dialects, with the bytes
 * written by hand from the manual's figures and tables (cited per row).
 * Shared by the decode, encode, truncation and round-trip tests.
 */
#ifndef RTIT_TEST_PACKET_TABLE_H
#define RTIT_TEST_PACKET_TABLE_H

#include <stdbool.h>
#include "rtit/packet.h"

struct pkt_row {
	const char *cite;		/* where the layout comes from */
	enum rtit_dialect dialect;
	bool expect_ccp;		/* RTIT: decode as a cycle count packet */
	bool in_block, sz4;		/* PT: between BBP and BEP */
	unsigned n;
	unsigned char bytes[16];
	struct rtit_packet pkt;
};

struct err_row {
	const char *cite;
	enum rtit_dialect dialect;
	bool expect_ccp, in_block;
	unsigned n;
	unsigned char bytes[16];
	int err;			/* -RTIT_ERR_x */
};

extern const struct pkt_row pkt_rows[];
extern const unsigned pkt_nrows;
extern const struct err_row err_rows[];
extern const unsigned err_nrows;

#endif
