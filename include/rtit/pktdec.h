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
	bool cycle_acc;		/* RTIT: Cycle_Acc was set (A-R37) */
	/* RTIT: FUP.BuffOvf loads LAST_LIP (PACKETS.md A-R7; default no). */
	bool buffovf_loads_lip;
	/* Either a reader ... */
	rtit_read_fn read;
	void *opaque;
	/* ... or a whole buffer in memory (read == NULL). */
	const uint8_t *mem;
	size_t mem_len;
};

/* One decoded packet and what the stream says about it. */
struct rtit_pktdec_item {
	struct rtit_packet pkt;
	uint64_t offset;	/* byte offset of the packet in the stream */
	const uint8_t *raw;	/* its pkt.size bytes; valid until next call */
	/* For IP packets: the full IP, and the last IP it compressed against. */
	int ip_status;		/* 0, -RTIT_ERR_NOIP, or 1 = suppressed (PT) */
	uint64_t ip;
	uint64_t last_ip;
	bool last_ip_valid;
};

/* A decoding error: where and why. */
struct rtit_pktdec_error {
	int code;		/* -RTIT_ERR_x */
	uint64_t offset;
	const char *why;	/* static text naming the rule */
};

enum { rtit_pktdec_bufsize = 1 << 16 };

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
	uint64_t nerrors;
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
 * Skips to the next PSB after the current position (or at it, when
 * @at_or_after is true).  Returns 1 when positioned at a PSB, 0 when the
 * stream ended first (everything was skipped), or -RTIT_ERR_IO.
 * The skipped byte count accumulates in d->skipped.
 */
int rtit_pktdec_resync(struct rtit_pktdec *d, bool at_or_after);

/* Stream offset of the next byte to decode. */
static inline uint64_t rtit_pktdec_offset(const struct rtit_pktdec *d)
{
	return d->base + d->pos;
}

#endif /* RTIT_PKTDEC_H */
