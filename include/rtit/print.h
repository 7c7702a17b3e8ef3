/*
 * print.h - packets as readable text and as JSON, for dumps and errors.
 */
#ifndef RTIT_PRINT_H
#define RTIT_PRINT_H

#include <stdio.h>

#include "rtit/pktdec.h"

/* Writes @it's decoded fields (no offset, no bytes, no name) as text, e.g.
 * "6 bits TNTTNN (oldest first)" or "ip=0x... [sent IP[15:0], ...]". */
void rtit_print_fields(FILE *out, enum rtit_dialect dialect,
		       const struct rtit_pktdec_item *it);

/* One dump line: offset, raw bytes, name, fields.  Newline-terminated. */
void rtit_print_line(FILE *out, enum rtit_dialect dialect,
		     const struct rtit_pktdec_item *it);

/* One JSON object (one line) for @it. */
void rtit_print_json(FILE *out, enum rtit_dialect dialect,
		     const struct rtit_pktdec_item *it);

/*
 * The short form of a packet that scenario `expect` blocks are written in
 * (docs/scenario.md): the name, then its main field: the full IP of an IP
 * packet ("TIP 0x401000", "TIP.PGD suppressed"), TNT bits oldest first
 * ("TNT TNNT"), "PIP 0x1000", "MTC 0x12", "CCP 5", "CYC 5", "CBR 24",
 * "MODE.Exec 64".  Packets with no main field are their name alone.
 * Returns the length written (truncated to @cap - 1).
 */
int rtit_print_short(char *buf, size_t cap, enum rtit_dialect dialect,
		     const struct rtit_pktdec_item *it);

#endif /* RTIT_PRINT_H */
