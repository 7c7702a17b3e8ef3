/*
 * pktgen.h - deterministic generator of random valid packet streams, both
 * dialects, for the libipt cross-check, the fuzz driver and the benchmark.
 *
 * Every packet goes through rtit_pkt_encode() with a struct rtit_pkt_ctx
 * kept up to date by rtit_pkt_ctx_on_packet(); IP packets are compressed
 * with rtit_last_ip_choose() against a last-IP register that follows
 * rtit_last_ip_on_ip() / rtit_last_ip_on_psb(), exactly as the decoder
 * (packet/pktdec.c) tracks it.  The PRNG is our own (splitmix64 seeding
 * xoshiro256**), so a seed names the same stream on every machine.
 *
 * Streaming: pktgen_next() emits one packet, pktgen_fill() a buffer full;
 * neither keeps per-packet state, so any length can be generated in
 * constant memory.  pktgen_stream() builds a whole stream in memory with
 * optional per-packet records.
 */
#ifndef RTIT_TESTS_PKTGEN_H
#define RTIT_TESTS_PKTGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rtit/packet.h"
#include "rtit/ip.h"

/* ---- PRNG ---------------------------------------------------------- */

struct pktgen_rng {
	uint64_t s[4];
};

void pktgen_rng_seed(struct pktgen_rng *r, uint64_t seed);
uint64_t pktgen_rng_next(struct pktgen_rng *r);
/* Uniform in [0, n); n > 0. */
uint64_t pktgen_rng_below(struct pktgen_rng *r, uint64_t n);
/* True with probability num/den. */
bool pktgen_rng_chance(struct pktgen_rng *r, unsigned num, unsigned den);

/* ---- generator ----------------------------------------------------- */

/* A packet-type mask: bit (1 << type) for each enum rtit_pkt_type. */
#define PKTGEN_BIT(t) (1ull << (unsigned)(t))

/* Every Intel PT packet kind. */
uint64_t pktgen_pt_all(void);
/* The Intel PT packets libipt 2.0.5 knows: all but the block and event
 * packets BBP, BIP, BEP, CFE, EVD (added to the SDM after libipt 2.0). */
uint64_t pktgen_pt_libipt(void);
/* Every RTIT packet kind (CCP is emitted only where cycle_acc needs it). */
uint64_t pktgen_rtit_all(void);

enum pktgen_mix {
	PKTGEN_MIX_UNIFORM = 0,	/* every kind in the mask equally often */
	PKTGEN_MIX_REALISTIC	/* mostly TNT and TIP/FUP with near IPs */
};

struct pktgen_opts {
	enum rtit_dialect dialect;
	bool cycle_acc;		/* RTIT: a CCP follows each CCP-bearing packet */
	uint64_t mask;		/* packet kinds; 0 = all of the dialect */
	size_t psb_every;	/* a PSB about every N bytes; 0 = only the first */
	enum pktgen_mix mix;
	uint64_t seed;
	/* PT: never suppress the IP of a TIP.PGE (libipt's query decoder
	 * rejects a TIP.PGE with IPBytes 000b as -pte_bad_packet). */
	bool pge_has_ip;
};

/* What the generator knows about one packet it emitted. */
struct pktgen_rec {
	struct rtit_packet pkt;	/* as the decoder must return it */
	uint64_t offset;	/* in the stream */
	/* IP packets: 0 and the full IP, or 1 for a suppressed PT IP. */
	int ip_status;
	uint64_t ip;
};

struct pktgen {
	struct pktgen_opts o;
	struct pktgen_rng rng;
	struct rtit_pkt_ctx ctx;
	struct rtit_last_ip lip;
	uint64_t offset;	/* bytes emitted so far */
	uint64_t next_psb;	/* emit a PSB at or after this offset */
	uint64_t npackets;
	unsigned psbplus;	/* PT: PSB+ packets still to emit before PSBEND */
	bool in_psbplus;
	unsigned block_left;	/* PT: BIPs etc. still to emit in this block */
	uint64_t cur_ip;	/* a "current" IP that near IPs stay close to */
	uint64_t types[RTIT_PKT_TYPE_COUNT];	/* emitted per type */
};

/* Longest packet the generator emits (PT PSB). */
enum { pktgen_max_packet = 16 };

void pktgen_init(struct pktgen *g, const struct pktgen_opts *o);

/*
 * Emits the next packet into @buf (at least pktgen_max_packet bytes).
 * Returns its size; fills @rec when not NULL.  Aborts (with a message) if
 * the encoder refuses a packet: that is a bug in the generator or encoder.
 */
size_t pktgen_next(struct pktgen *g, uint8_t *buf, struct pktgen_rec *rec);

/* Emits whole packets into @buf while at least pktgen_max_packet bytes are
 * free.  Returns the bytes written (cap - 15 .. cap). */
size_t pktgen_fill(struct pktgen *g, uint8_t *buf, size_t cap);

/*
 * A whole stream of at least @size bytes (ends on a packet boundary)
 * in malloc'd memory; *@len gets its length.  When @recs is not NULL it
 * gets a malloc'd array of one record per packet and *@nrecs their count.
 */
uint8_t *pktgen_stream(const struct pktgen_opts *o, size_t size, size_t *len,
		       struct pktgen_rec **recs, size_t *nrecs);

/* Field-by-field equality of two decoded packets (type, size, fields). */
bool pktgen_pkt_equal(const struct rtit_packet *a, const struct rtit_packet *b);

/* Formats a packet for failure messages into @buf; returns @buf. */
const char *pktgen_pkt_str(const struct rtit_packet *p, char *buf, size_t cap);

#endif /* RTIT_TESTS_PKTGEN_H */
