/*
 * pktdec.h - streaming packet decoder: bytes from a reader callback (or a
 * memory buffer) to packets with offsets and reconstructed IPs, in constant
 * memory, with resynchronisation at the next PSB after bad bytes.
 */
#ifndef RTIT_PKTDEC_H
#define RTIT_PKTDEC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "rtit/packet.h"
#include "rtit/ip.h"

/* Reads up to @cap bytes into @buf; returns the count, 0 at the end of the
 * stream, or < 0 on an I/O error. */
typedef ssize_t (*rtit_read_fn)(void *opaque, uint8_t *buf, size_t cap);

struct rtit_pktdec_cfg {
	enum rtit_dialect dialect;
	bool cycle_acc;		/* RTIT: Cycle_Acc was set (D6) */
	/* RTIT: FUP.BuffOvf loads LAST_LIP (RTIT 4.2.3.1, D4; default no). */
	bool buffovf_loads_lip;
	/* Packets and offsets only: no last-IP tracking, the items' ip_status,
	 * ip, last_ip and last_ip_valid are 0 (the bare decode). */
	bool no_ip;
	/* Intel PT: erratum SKZ84's workaround (docs/decisions.md D143): a
	 * TMA with reserved bits set is the erratum's 8-byte TMA (its
	 * tma.skz84 set), not an error (SDM Table 33-32) */
	bool pt_skz84;
	/* PT: erratum SKD007's workaround (D109): inside a PEBS block, a
	 * CYC cut by an OVF (the CYC's first byte, then 02 F3) ends the block
	 * as the OVF does (D184) */
	bool pt_skd007;
	/* Either a reader ... */
	rtit_read_fn read;
	void *opaque;
	/* ... or a whole buffer in memory (read == NULL). */
	const uint8_t *mem;
	size_t mem_len;
};

/* One decoded packet and what the stream says about it (64 bytes: the
 * batch call writes arrays of them). */
struct rtit_pktdec_item {
	struct rtit_packet pkt;
	uint64_t offset;	/* byte offset of the packet in the stream */
	const uint8_t *raw;	/* its pkt.size bytes; valid until next call */
	/* For IP packets: the full IP, and the last IP it compressed against. */
	uint64_t ip;
	uint64_t last_ip;
	int ip_status;		/* 0, -RTIT_ERR_NOIP, or 1 = suppressed (PT) */
	bool last_ip_valid;
};

/* A decoding error: where and why. */
struct rtit_pktdec_error {
	int code;		/* -RTIT_ERR_x */
	uint64_t offset;
	const char *why;	/* static text naming the rule */
};

enum { rtit_pktdec_bufsize = 1 << 16 };
/* Bytes before the position kept buffered across a refill (for
 * rtit_pktdec_resync_after): more than a PSB and the packets the flow
 * decoder reads ahead (5 of at most 16 bytes, then the bad one). */
enum { rtit_pktdec_history = 128 };

/*
 * One row of the fast path's first-byte table (packet/pktdec_fast.c
 * builds them from opcodes_rtit.h / opcodes_pt.h and says which rule of the
 * manual each follows).  With w the 8 bytes after the first byte, a packet
 * on the fast path is
 *   type, size                         head (struct rtit_packet's first 8
 *                                      bytes, as stored);
 *   union bytes 0-7  = lo_const | rotl(w & lo_mask, lo_rot);
 *   union bytes 8-15 = hi_const | (w & hi_mask);
 *   its IP           = (last IP & ip_keep) | (union bytes 8-15 & ip_load
 *                      sign-extended from bit 63 - sext_shl), with the
 *                      last IP held sign-extended (RTIT: from LIP bit 47),
 *                      so one AND and one OR link an IP to the next;
 * so decoding it takes no branch on its type.  The packet's size is in a
 * separate byte table (struct rtit_pktdec's fast_size: the one load on the
 * critical path from a packet to the next); size 0 there, needs_ip while
 * the last IP is unknown, or bits slow_if set in w, send the packet to the
 * general decoder.  Intel PT: a first byte whose packet the second byte
 * names (0x02, MODE) has size 0 and names, in second, the table its row is
 * in, indexed by that byte (w's byte 0; the payload starts at byte 1).
 * 64 bytes: one cache line a row.
 */
struct rtit_pktdec_fast {
	uint64_t head;
	uint64_t lo_const, lo_mask;
	uint64_t hi_const, hi_mask;
	uint64_t ip_keep;
	uint64_t ip_load;	/* ~0 when the IP is known and loads the last IP */
	uint8_t needs_ip;	/* 1: compresses against the last IP */
	uint8_t slow_if;	/* bits of w[7:0] that need the general path */
	uint8_t lo_rot;
	uint8_t sext_shl;
	uint8_t is_ip;		/* 1 for an IP packet (the item gets the last IP) */
	int8_t ip_status;	/* 0, or 1 for a suppressed PT IP */
	union {
		uint8_t next_ccp;	/* RTIT 4.2.15: a cycle count packet follows */
		uint8_t second;		/* PT: the row is in fast[second][byte 1] */
	};
	uint8_t tnt_msb;	/* PT Long TNT: the stop bit ends the TNT bits */
};

/* The fast path's tables: RTIT [0] headers, [1] the CCP due after a
 * CCP-bearing packet (4.2.15); Intel PT [0] first bytes, [1] the byte after
 * 0x02, [2] the byte after MODE. */
enum { rtit_pktdec_fast_tabs = 3 };

struct rtit_pktdec {
	struct rtit_pktdec_cfg cfg;
	struct rtit_pkt_ctx ctx;
	struct rtit_last_ip lip;
	const uint8_t *buf;	/* cfg.mem or own */
	size_t len, pos;	/* valid bytes, read position in buf */
	uint64_t base;		/* stream offset of buf[0] */
	bool eof;
	struct rtit_pktdec_error err;
	uint64_t skipped;	/* bytes skipped by resynchronisation */
	/* 1 + the stream offset of the last packet decoded; 0 after a resync
	 * (where rtit_pktdec_resync starts its search, D86) */
	uint64_t last_start;
	uint64_t nerrors;
	/* Tests: every packet by the general decoder, the reference the
	 * fast path is compared with (set after rtit_pktdec_init). */
	bool general_only;
	/* Tests: no vector path (the scalar fast path's rows alone). */
	bool no_simd;
	/* The vector path's tables (packet/pktdec_simd.c, D64), NULL where
	 * the CPU has no AVX-512 VBMI or the stream needs the CCP context. */
	const struct rtit_pktdec_simd *simd;
	/* The fast path: [table][byte] (rtit_pktdec_fast_tabs). */
	struct rtit_pktdec_fast fast[rtit_pktdec_fast_tabs][256] __attribute__((aligned(64)));
	uint8_t fast_size[rtit_pktdec_fast_tabs][256];	/* 0: the general decoder's */
	uint8_t own[rtit_pktdec_bufsize];
};

/* Initialises @d.  Returns 0 or -RTIT_ERR_INVALID. */
int rtit_pktdec_init(struct rtit_pktdec *d, const struct rtit_pktdec_cfg *cfg);

/*
 * Decodes the next packet into @it.  Returns 1 for a packet, 0 at the end
 * of the stream, or a negative error (details in d->err: code, offset and
 * why).  After an error the decoder is positioned at the bad byte: call
 * rtit_pktdec_resync() to skip to the next PSB and carry on.
 * -RTIT_ERR_IO is returned when the reader fails.
 */
int rtit_pktdec_next(struct rtit_pktdec *d, struct rtit_pktdec_item *it);

/*
 * Decodes up to @cap packets into @items[0..), exactly the packets, offsets,
 * IPs and errors rtit_pktdec_next() would give one by one.  Returns the
 * number of packets (> 0), 0 at the end of the stream, or a negative error
 * (as rtit_pktdec_next(), d->err says where and why) when the very next
 * packet is bad; an error after some packets is returned by the next call.
 * The items' raw pointers are valid until the next call.  Returns
 * -RTIT_ERR_INVALID for a NULL argument or @cap 0.
 */
int rtit_pktdec_next_batch(struct rtit_pktdec *d, struct rtit_pktdec_item *items,
			   size_t cap);

/*
 * Skips to the next PSB after the current position (or at it, when
 * @at_or_after is true).  After an error (@at_or_after false) the search
 * starts at the byte after the first byte of the last packet decoded
 * (SDM 33.4.2.17, D86), so the PSB found may begin before the current
 * position, inside that packet: the stream offset then goes back.  Returns 1 when positioned at a PSB, 0 when the
 * stream ended first (everything was skipped), or -RTIT_ERR_IO.
 * The skipped byte count accumulates in d->skipped.
 */
int rtit_pktdec_resync(struct rtit_pktdec *d, bool at_or_after);

/*
 * After a bad packet that starts at @off (an offset already decoded):
 * skips to the first PSB that starts after @off's first byte, so that a
 * PSB whose first bytes the bad packet swallowed is found (SDM 33.4.2.17:
 * the PSB is the pattern a decoder searches for).  When @off is no longer
 * buffered, from the first buffered byte (at least rtit_pktdec_history
 * bytes before the position, more than a PSB).  When @off is at or after
 * the position, as rtit_pktdec_resync(d, false).  Returns as it.
 */
int rtit_pktdec_resync_after(struct rtit_pktdec *d, uint64_t off);

/* Stream offset of the next byte to decode. */
static inline uint64_t rtit_pktdec_offset(const struct rtit_pktdec *d)
{
	return d->base + d->pos;
}

#endif /* RTIT_PKTDEC_H */
