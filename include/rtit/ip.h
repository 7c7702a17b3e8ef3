/*
 * ip.h - last-IP state and IP compression, both dialects.
 *
 * RTIT (3.3.7, 4.2.3.1, Table 18): RTIT_LAST_LIP holds LIP[47:16] and a
 * valid bit; a FUP/TIP sends LIP[15:0], [31:0] or [47:0], the upper part
 * either matched from LAST_LIP or zero-extended (Zext).  LIPs are 48-bit;
 * rtitsim sign-extends bit 47 into a canonical address (D2).
 *
 * Intel PT (33.4.2.2, Table 33-18): LastIP is a 64-bit IP, 0 after a PSB;
 * IPBytes selects which part is sent.
 *
 * The encoder model calls rtit_last_ip_choose(), the decoder calls
 * rtit_last_ip_expand(); both then call rtit_last_ip_on_ip().
 */
#ifndef RTIT_IP_H
#define RTIT_IP_H

#include <stdbool.h>
#include <stdint.h>

#include "rtit/packet.h"

struct rtit_last_ip {
	enum rtit_dialect dialect;
	uint64_t ip;		/* RTIT: LIP[47:0]; PT: IP[63:0] */
	bool valid;		/* RTIT: CMPRS_LIP_Valid; PT: a known LastIP */
	uint8_t pt_choice;	/* encoder, PT: enum rtit_pt_ip_choice */
};

/* PT encoder: which of the legal IPBytes the model chooses (Table 33-18;
 * compression is optional, 33.4.2.2; D59). */
enum rtit_pt_ip_choice {
	RTIT_PT_IP_SHORTEST = 0,	/* the shortest, 011b before 100b */
	RTIT_PT_IP_UPDATE48 = 1,	/* the shortest, 100b before 011b */
	RTIT_PT_IP_FULL = 2		/* always 110b: IP[63:0], no compression */
};

/* Reset state: RTIT LAST_LIP = 0 (invalid, 3.3.7); PT LastIP = 0, known
 * (33.4.2.2: "initialized to zero"). */
void rtit_last_ip_init(struct rtit_last_ip *lip, enum rtit_dialect dialect);

/* A PSB was sent: RTIT clears LAST_LIP (3.3.7, D4); PT resets
 * LastIP to 0 (33.4.2.2). */
void rtit_last_ip_on_psb(struct rtit_last_ip *lip);

/* The state is unknown (a decoder that resynchronised mid-stream, or an
 * RTIT overflow clear, 4.2.5). */
void rtit_last_ip_invalidate(struct rtit_last_ip *lip);

/* An IP packet carrying full IP @ip was sent or decoded. */
void rtit_last_ip_on_ip(struct rtit_last_ip *lip, uint64_t ip);

/*
 * Encoder side: the compression the hardware chooses for @ip.
 * RTIT: Table 18 as a priority function (Zext preferred over match, match
 * only while valid, D3).  PT: the shortest encoding,
 * 011b preferred over 100b at equal size (33.4.2.2, D8), unless
 * @lip's pt_choice says otherwise.
 * Fills @out (ipc, zext, payload).
 */
void rtit_last_ip_choose(const struct rtit_last_ip *lip, uint64_t ip,
			 struct rtit_pkt_ip *out);

/*
 * Decoder side: the full IP that @pl encodes against @lip.
 * Returns 0 and sets *@ip, or:
 *  -RTIT_ERR_NOIP        the payload needs a last IP that is unknown;
 *  -RTIT_ERR_BAD_PACKET  a reserved compression code;
 *  -RTIT_ERR_INVALID     a NULL argument, or (PT) a suppressed IP.
 */
int rtit_last_ip_expand(const struct rtit_last_ip *lip,
			const struct rtit_pkt_ip *pl, uint64_t *ip);

/* How many low IP bits a payload carries, the rest coming from the last IP
 * (from_last) or from zero/sign extension.  For the dump's explanation. */
struct rtit_ip_explain {
	unsigned sent_bits;	/* IP[sent_bits-1:0] are in the packet */
	bool from_last;		/* upper bits from the last IP */
	bool zext;		/* upper bits zero (RTIT Zext) */
	bool sext;		/* upper bits sign-extended from the payload */
	bool suppressed;	/* PT IPBytes 000b */
};
int rtit_ip_explain(enum rtit_dialect dialect, const struct rtit_pkt_ip *pl,
		    struct rtit_ip_explain *ex);

#endif /* RTIT_IP_H */
