/*
 * pktdec_fast.h - the streaming decoder's first-byte tables (internal).
 */
#ifndef RTIT_DECODER_PKTDEC_FAST_H
#define RTIT_DECODER_PKTDEC_FAST_H

#include <stdbool.h>

#include "rtit/opcodes_pt.h"
#include "rtit/opcodes_rtit.h"
#include "rtit/pktdec.h"

/* The longest packet of either dialect (Intel PT PSB, Table 33-36): the
 * fast paths run while this many bytes are buffered after a packet's
 * start, so they load payload words without length checks. */
enum { rtit_pktdec_max_packet = rtit_pt_psb_size };
_Static_assert((int)rtit_r_psb_size <= (int)rtit_pktdec_max_packet, "RTIT's PSB (4.2.1) is shorter");

/* A packet the general decoder may decode for the fast paths without
 * stopping them: one that leaves the last IP and the block state alone. */
static inline bool rtit_pktdec_neutral(enum rtit_pkt_type t)
{
	return !rtit_pkt_has_ip(t) && t != RTIT_R_PSB && t != RTIT_PT_PSB && t != RTIT_PT_BBP;
}

/*
 * Fills @tab and @size for @dialect: [0] decodes a packet in the ordinary
 * context, [1] (RTIT with @cycle_acc) the cycle count packet due after a
 * CCP-bearing packet (4.2.15).  Packets that need the general decoder
 * (rare packets, reserved encodings, PSB, anything whose meaning a row
 * cannot state) have size 0.
 */
void rtit_pktdec_fast_build(struct rtit_pktdec_fast tab[rtit_pktdec_fast_tabs][256],
			    uint8_t size[rtit_pktdec_fast_tabs][256],
			    enum rtit_dialect dialect, bool cycle_acc);

/* The vector path's tables for @dialect (built once, shared), or NULL
 * when the CPU lacks AVX-512 VBMI or @cycle_acc (the CCP context). */
const struct rtit_pktdec_simd *rtit_pktdec_simd_tables(enum rtit_dialect dialect, bool cycle_acc);

/* Decodes up to @cap packets into @items by the vector path from d->pos
 * (d->simd set; no CCP context, no block; the last IP known unless
 * cfg.no_ip), stopping before any packet the rows leave out and 80 bytes
 * before the end of the buffer.  Returns the number decoded. */
size_t rtit_pktdec_simd_run(struct rtit_pktdec *d, struct rtit_pktdec_item *items, size_t cap);

#endif /* RTIT_DECODER_PKTDEC_FAST_H */
