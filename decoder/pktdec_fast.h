/*
 * pktdec_fast.h - the streaming decoder's first-byte tables (internal).
 */
#ifndef RTIT_DECODER_PKTDEC_FAST_H
#define RTIT_DECODER_PKTDEC_FAST_H

#include <stdbool.h>

#include "rtit/pktdec.h"

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

#endif /* RTIT_DECODER_PKTDEC_FAST_H */
