/*
 * test_pktdec_batch.c - the streaming decoder's fast path and batch call
 * give exactly what the general decoder gives one packet at a time: the
 * same packets, offsets, raw bytes, IPs, errors (code, offset, reason) and
 * resynchronisations, on random pktgen streams of both dialects, every
 * truncation of them, every first byte in every context, in memory and in
 * 1-byte reads, with batch sizes from 1 up.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pktcmp.h"
#include "pktgen.h"
#include "rtit/opcodes_pt.h"
#include "rtit/pktdec.h"

/* What a decoder said, in order: a packet, an error, or the end. */
struct entry {
	int ret;			/* 1, 0, or the error */
	struct rtit_pktdec_item it;	/* ret == 1 */
	uint8_t raw[16];		/* it.raw's bytes when it was returned */
	uint64_t err_offset, skipped;	/* ret < 0: where, and skipped after resync */
	const char *why;
};

struct one_byte {
	const uint8_t *p;
	size_t len, pos;
};

static ssize_t read_one(void *opaque, uint8_t *buf, size_t cap)
{
	struct one_byte *r = opaque;

	if (r->pos >= r->len || !cap)
		return 0;
	buf[0] = r->p[r->pos++];
	return 1;
}

enum how {
	HOW_GENERAL,		/* the reference: general decoder, next() */
	HOW_NEXT,		/* next(), fast path */
	HOW_BATCH,		/* next_batch(), memory */
	HOW_BATCH_BYTES,	/* next_batch(), 1-byte reads */
	HOW_BATCH_SCALAR	/* next_batch(), memory, no vector path (D64) */
};

static struct rtit_pktdec dec;
/* Intel PT erratum SKZ84's workaround on in run()'s decoders (D144). */
static bool skz84_on;

/* Decodes @data with @how (batch size @cap), resynchronising after every
 * error; fills @log (at most @max entries) and returns the count. */
static size_t run(enum rtit_dialect dl, bool cycle_acc, const uint8_t *data, size_t len,
		  enum how how, size_t cap, struct entry *log, size_t max)
{
	struct one_byte rd = { data, len, 0 };
	struct rtit_pktdec_cfg cfg = { .dialect = dl, .cycle_acc = cycle_acc,
				       .mem = data, .mem_len = len, .pt_skz84 = skz84_on };
	static struct rtit_pktdec_item items[300];
	size_t n = 0;

	if (how == HOW_BATCH_BYTES) {
		cfg.mem = NULL;
		cfg.mem_len = 0;
		cfg.read = read_one;
		cfg.opaque = &rd;
	}
	cr_assert_eq(rtit_pktdec_init(&dec, &cfg), 0);
	dec.general_only = how == HOW_GENERAL;
	dec.no_simd = how == HOW_BATCH_SCALAR;
	for (;;) {
		int r;

		cr_assert_lt(n, max, "log full");
		if (how == HOW_GENERAL || how == HOW_NEXT) {
			r = rtit_pktdec_next(&dec, &log[n].it);
			if (r == 1) {
				memcpy(log[n].raw, log[n].it.raw, log[n].it.pkt.size);
				log[n++].ret = 1;
				continue;
			}
		} else {
			r = rtit_pktdec_next_batch(&dec, items, cap);
			cr_assert_leq(r, (int)cap);
			for (int i = 0; i < r; i++) {
				cr_assert_lt(n, max, "log full");
				log[n].ret = 1;
				log[n].it = items[i];
				memcpy(log[n++].raw, items[i].raw, items[i].pkt.size);
			}
			if (r > 0)
				continue;
		}
		log[n].ret = r;
		if (r == 0)
			return n + 1;
		log[n].err_offset = dec.err.offset;
		log[n].why = dec.err.why;
		cr_assert_eq(dec.err.code, r);
		cr_assert_eq(dec.err.offset, rtit_pktdec_offset(&dec));
		rtit_pktdec_resync(&dec, false);
		log[n++].skipped = dec.skipped;
	}
}

static void compare(const struct entry *want, size_t nw, const struct entry *got, size_t ng,
		    const uint8_t *data, const char *what)
{
	char msg[256];

	for (size_t i = 0; i < nw && i < ng; i++) {
		const struct rtit_pktdec_item *a = &want[i].it, *b = &got[i].it;

		cr_assert_eq(got[i].ret, want[i].ret, "%s: entry %zu: %d, want %d", what, i,
			     got[i].ret, want[i].ret);
		if (want[i].ret < 0) {
			cr_assert_eq(got[i].err_offset, want[i].err_offset, "%s: entry %zu: error offset", what, i);
			cr_assert_str_eq(got[i].why, want[i].why, "%s: entry %zu", what, i);
			cr_assert_eq(got[i].skipped, want[i].skipped, "%s: entry %zu: skipped", what, i);
		}
		if (want[i].ret != 1)
			continue;
		cr_assert_eq(b->offset, a->offset, "%s: entry %zu: offset", what, i);
		cr_assert_eq(rtit_test_pkt_diff(&a->pkt, &b->pkt, 0, msg, sizeof(msg)), 0,
			     "%s: packet %zu at %llu: %s", what, i, (unsigned long long)a->offset, msg);
		cr_assert_arr_eq(got[i].raw, data + a->offset, a->pkt.size, "%s: packet %zu: raw", what, i);
		cr_assert(b->ip_status == a->ip_status && b->ip == a->ip && b->last_ip == a->last_ip &&
			  b->last_ip_valid == a->last_ip_valid,
			  "%s: packet %zu at %llu: IP %d %#llx last %#llx %d, want %d %#llx last %#llx %d",
			  what, i, (unsigned long long)a->offset, b->ip_status,
			  (unsigned long long)b->ip, (unsigned long long)b->last_ip, b->last_ip_valid,
			  a->ip_status, (unsigned long long)a->ip, (unsigned long long)a->last_ip,
			  a->last_ip_valid);
	}
	cr_assert_eq(ng, nw, "%s: %zu entries, want %zu", what, ng, nw);
}

/* Every way of decoding @data gives the general decoder's log. */
static void check_all(enum rtit_dialect dl, bool cycle_acc, const uint8_t *data, size_t len,
		      bool thorough)
{
	/* 64 and 300 take the vector path where the CPU has it (16 up). */
	static const size_t caps[] = { 1, 2, 3, 7, 64, 300 };
	size_t max = len + 8;
	struct entry *want = malloc(max * sizeof(*want)), *got = malloc(max * sizeof(*got));
	size_t nw = run(dl, cycle_acc, data, len, HOW_GENERAL, 0, want, max), ng;
	char what[96];

	cr_assert(want && got);
	ng = run(dl, cycle_acc, data, len, HOW_NEXT, 0, got, max);
	snprintf(what, sizeof(what), "dialect %d cyc %d len %zu next()", dl, cycle_acc, len);
	compare(want, nw, got, ng, data, what);
	for (size_t c = 0; c < sizeof(caps) / sizeof(caps[0]); c++) {
		if (!thorough && caps[c] != 3 && caps[c] != 64)
			continue;
		ng = run(dl, cycle_acc, data, len, HOW_BATCH, caps[c], got, max);
		snprintf(what, sizeof(what), "dialect %d cyc %d len %zu batch %zu", dl, cycle_acc, len, caps[c]);
		compare(want, nw, got, ng, data, what);
		ng = run(dl, cycle_acc, data, len, HOW_BATCH_SCALAR, caps[c], got, max);
		snprintf(what, sizeof(what), "dialect %d cyc %d len %zu batch %zu, scalar", dl, cycle_acc,
			 len, caps[c]);
		compare(want, nw, got, ng, data, what);
		if (!thorough && caps[c] != 3)
			continue;
		ng = run(dl, cycle_acc, data, len, HOW_BATCH_BYTES, caps[c], got, max);
		snprintf(what, sizeof(what), "dialect %d cyc %d len %zu batch %zu, 1-byte reads",
			 dl, cycle_acc, len, caps[c]);
		compare(want, nw, got, ng, data, what);
	}
	free(want);
	free(got);
}

static const struct pktgen_opts streams[] = {
	{ .dialect = RTIT_DIALECT_RTIT, .mix = PKTGEN_MIX_REALISTIC, .psb_every = 1024, .seed = 11 },
	{ .dialect = RTIT_DIALECT_RTIT, .mix = PKTGEN_MIX_UNIFORM, .psb_every = 512, .seed = 12 },
	{ .dialect = RTIT_DIALECT_RTIT, .cycle_acc = true, .mix = PKTGEN_MIX_REALISTIC,
	  .psb_every = 1024, .seed = 13 },
	{ .dialect = RTIT_DIALECT_RTIT, .cycle_acc = true, .mix = PKTGEN_MIX_UNIFORM,
	  .psb_every = 700, .seed = 14 },
	{ .dialect = RTIT_DIALECT_PT, .mix = PKTGEN_MIX_REALISTIC, .psb_every = 1024, .seed = 15 },
	{ .dialect = RTIT_DIALECT_PT, .mix = PKTGEN_MIX_UNIFORM, .psb_every = 600, .seed = 16 },
};

/* Whole random streams, every way. */
Test(pktdec_batch, random_streams)
{
	for (size_t s = 0; s < sizeof(streams) / sizeof(streams[0]); s++) {
		size_t len;
		uint8_t *buf = pktgen_stream(&streams[s], 20000, &len, NULL, NULL);

		check_all(streams[s].dialect, streams[s].cycle_acc, buf, len, true);
		free(buf);
	}
}

/* Every truncation of a short stream: the last packet cut anywhere, the
 * fast path's 16-byte margin crossed at every offset. */
Test(pktdec_batch, every_truncation)
{
	for (size_t s = 0; s < sizeof(streams) / sizeof(streams[0]); s++) {
		size_t len;
		uint8_t *buf = pktgen_stream(&streams[s], 300, &len, NULL, NULL);

		for (size_t l = 0; l <= len; l++)
			check_all(streams[s].dialect, streams[s].cycle_acc, buf, l, false);
		free(buf);
	}
}

/* Random bytes mostly make errors: the error offsets, reasons and resyncs
 * must not depend on the path. */
Test(pktdec_batch, random_bytes)
{
	struct pktgen_rng r;
	uint8_t buf[600];

	pktgen_rng_seed(&r, 2024);
	for (int k = 0; k < 300; k++) {
		size_t len = (size_t)pktgen_rng_below(&r, sizeof(buf));
		for (size_t i = 0; i < len; i++)
			buf[i] = (uint8_t)pktgen_rng_next(&r);
		check_all((enum rtit_dialect)(k & 1), k & 2, buf, len, k < 30);
	}
}

/* @head (@nhead bytes) after a prefix (@pre: 0 none; 1 a full IP then,
 * cycle accurate, its CCP, so @head is a header; 2 a full IP without its
 * CCP, so it is a CCP), then random bytes, every way. */
static void check_after_prefix(int dl, int cyc, int pre, const uint8_t *head, size_t nhead,
			       size_t ntail, struct pktgen_rng *r)
{
	uint8_t buf[256];
	size_t n = 0;
	struct rtit_pkt_ctx ctx;
	struct rtit_packet ip = {
		.type = dl ? RTIT_PT_TIP : RTIT_R_TIP,
		.u.ip = { .ipc = dl ? 6 : 2, .payload = pktgen_rng_next(r)
			  & (dl ? ~0ull : 0xffffffffffffull) },
	};

	rtit_pkt_ctx_init(&ctx, (enum rtit_dialect)dl, cyc);
	if (pre) {
		int m = rtit_pkt_encode(&ctx, &ip, buf, sizeof(buf));
		cr_assert_gt(m, 0);
		n += (size_t)m;
		rtit_pkt_ctx_on_packet(&ctx, &ip);
	}
	if (pre == 1 && cyc) {
		struct rtit_packet ccp = { .type = RTIT_R_CCP, .u.cyc = { .value = 5 } };
		int m = rtit_pkt_encode(&ctx, &ccp, buf + n, sizeof(buf) - n);
		cr_assert_gt(m, 0);
		n += (size_t)m;
	}
	memcpy(buf + n, head, nhead);
	n += nhead;
	for (size_t i = 0; i < ntail; i++)
		buf[n++] = (uint8_t)pktgen_rng_next(r);
	check_all((enum rtit_dialect)dl, cyc, buf, n, false);
}

/* Every first byte in every context, after a known last IP and without
 * one, with random bytes after it: each row of the first-byte table
 * (packet/pktdec_fast.c) against the general decoder. */
Test(pktdec_batch, every_first_byte)
{
	struct pktgen_rng r;

	pktgen_rng_seed(&r, 7);
	for (int dl = 0; dl < 2; dl++) {
		for (int cyc = 0; cyc < (dl == RTIT_DIALECT_RTIT ? 2 : 1); cyc++) {
			for (int pre = 0; pre < (cyc ? 3 : 2); pre++) {
				for (unsigned b = 0; b < 256; b++) {
					for (int k = 0; k < 4; k++) {
						uint8_t head = (uint8_t)b;
						check_after_prefix(dl, cyc, pre, &head, 1, 24, &r);
					}
				}
			}
		}
	}
}

/* Intel PT: every second byte after each first byte that leaves the
 * packet to it (0x02, MODE; the byte tables 1 and 2 of the fast path),
 * with random bytes after it. */
Test(pktdec_batch, every_second_byte)
{
	struct pktgen_rng r;

	static const uint8_t firsts[] = { rtit_pt_ext, rtit_pt_mode };

	pktgen_rng_seed(&r, 8);
	for (size_t f = 0; f < sizeof(firsts); f++) {
		for (int pre = 0; pre < 2; pre++) {
			for (unsigned b1 = 0; b1 < 256; b1++) {
				for (int k = 0; k < 4; k++) {
					uint8_t head[2] = { firsts[f], (uint8_t)b1 };
					check_after_prefix(RTIT_DIALECT_PT, 0, pre, head, 2, 24, &r);
				}
			}
		}
	}
}

/* The vector path (packet/pktdec_simd.c, D64) on every first byte and,
 * Intel PT, every second byte: the head at the start of a 64-byte block,
 * then a run of TNTs so pass 1 walks on (and its rows decode), then random
 * bytes, with and without a known last IP; the vector path needs 80 bytes
 * buffered, so the stream is longer than every_first_byte's. */
Test(pktdec_batch, vector_path_every_byte)
{
	struct pktgen_rng r;

	pktgen_rng_seed(&r, 9);
	for (int dl = 0; dl < 2; dl++) {
		for (int pre = 0; pre < 2; pre++) {
			for (unsigned b = 0; b < 256; b++) {
				for (unsigned b1 = 0; b1 < (dl ? 256u : 1u); b1 += dl ? 17u : 1u) {
					uint8_t head[2] = { (uint8_t)b, (uint8_t)b1 };
					check_after_prefix(dl, 0, pre, head, 2, 150, &r);
				}
			}
		}
		if (dl == RTIT_DIALECT_PT) {
			static const uint8_t firsts[] = { rtit_pt_ext, rtit_pt_mode };
			/* Long TNTs without a stop bit (payload 0 and 1, Table
			 * 33-16): the general decoder's error, not a packet. */
			for (uint8_t pl = 0; pl < 3; pl++) {
				const uint8_t tnt[8] = { rtit_pt_ext, rtit_pt_ext_tnt64, pl };
				check_after_prefix(dl, 0, 1, tnt, sizeof(tnt), 150, &r);
			}
			/* Good Long TNTs, then one without a stop bit in the
			 * same chunk: the items before it are built again and
			 * the good ones must keep their fields (found by
			 * fuzz_pt_pktdec). */
			for (uint8_t pl = 0; pl < 2; pl++) {
				for (size_t gap = 0; gap < 24; gap++) {
					uint8_t head[64] = { rtit_pt_ext, rtit_pt_ext_tnt64 };
					size_t n = 2;

					/* A payload with a stop bit (bit 44 or above). */
					for (int k = 0; k < rtit_pt_pl_tnt64_size; k++)
						head[n++] = (uint8_t)pktgen_rng_next(&r) |
							    (k == rtit_pt_pl_tnt64_size - 1 ? 0x10 : 0);
					/* TNT-8s of one taken bit and the stop bit
					 * above it (Table 33-16). */
					for (size_t k = 0; k < gap; k++)
						head[n++] = (uint8_t)(3u << rtit_pt_tnt8_shr);
					head[n++] = rtit_pt_ext;
					head[n++] = rtit_pt_ext_tnt64;
					head[n++] = pl;
					n += rtit_pt_pl_tnt64_size - 1;
					check_after_prefix(dl, 0, gap & 1, head, n, 150, &r);
				}
			}
			for (size_t f = 0; f < sizeof(firsts); f++) {
				for (unsigned b1 = 0; b1 < 256; b1++) {
					uint8_t head[2] = { firsts[f], (uint8_t)b1 };
					check_after_prefix(dl, 0, 1, head, 2, 150, &r);
				}
			}
		}
	}
}

/* Erratum SKZ84 (D143, D144): TMAs with reserved bits set among TNT-8s at
 * every offset of a 64-byte block (the vector path's), the erratum's
 * 8-byte form, one with byte 4 set only and one with byte 6 bit 7 set only
 * (SDM Table 33-32's reserved bits), and one cut short: with and without
 * the workaround every path gives the general decoder's packets and
 * errors; and the general decoder gives what the Table says: without it
 * an error at the TMA, with it an 8-byte TMA with skz84 set and the
 * fields as sent. */
Test(pktdec_batch, skz84_tma)
{
	static const uint8_t tmas[][8] = {
		{ 0x02, 0x73, 0xfe, 0xff, 0xff, 0xff, 0xff, 0x05 },	/* the erratum's */
		{ 0x02, 0x73, 0x34, 0x12, 0x01, 0x5a, 0x00, 0x06 },	/* byte 4 */
		{ 0x02, 0x73, 0x34, 0x12, 0x00, 0x5a, 0x81, 0x06 },	/* byte 6 bit 7 */
	};
	uint8_t buf[200];

	for (int on = 0; on < 2; on++) {
		skz84_on = on;
		for (size_t t = 0; t < sizeof(tmas) / sizeof(tmas[0]); t++) {
			for (size_t at = 0; at < 70; at++) {
				memset(buf, 3u << rtit_pt_tnt8_shr, sizeof(buf));
				memcpy(buf + at, tmas[t], 8);
				memcpy(buf + 120, tmas[t], 8);
				check_all(RTIT_DIALECT_PT, false, buf, sizeof(buf), at < 3);
				check_all(RTIT_DIALECT_PT, false, buf, at + 7, false);	/* cut */
			}
			struct entry log[200];
			memset(buf, 3u << rtit_pt_tnt8_shr, sizeof(buf));
			memcpy(buf + 5, tmas[t], 8);
			size_t n = run(RTIT_DIALECT_PT, false, buf, 20, HOW_GENERAL, 0, log, 200);
			cr_assert_geq(n, 6);
			if (!on) {
				cr_assert_eq(log[5].ret, -RTIT_ERR_BAD_PACKET);
				cr_assert_eq(log[5].err_offset, 5);
				continue;
			}
			const struct rtit_packet *p = &log[5].it.pkt;
			cr_assert_eq(log[5].ret, 1);
			cr_assert(p->type == RTIT_PT_TMA && p->size == 8 && p->u.tma.skz84);
			cr_assert_eq(p->u.tma.ctc, tmas[t][2] | tmas[t][3] << 8);
			cr_assert_eq(p->u.tma.fc, tmas[t][5] | (tmas[t][6] & 1) << 8);
			cr_assert_eq(log[6].it.offset, 13);
		}
	}
	skz84_on = false;
}

/* Where the CPU has AVX-512 VBMI the vector path is taken (so the tests
 * above exercise it), except in cycle-accurate RTIT streams (4.2.15). */
Test(pktdec_batch, vector_path_in_use)
{
	bool have = false;

#if defined(__x86_64__)
	__builtin_cpu_init();
	have = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
	       __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vbmi");
#endif
	for (int dl = 0; dl < 2; dl++) {
		for (int cyc = 0; cyc < 2; cyc++) {
			struct rtit_pktdec_cfg cfg = { .dialect = (enum rtit_dialect)dl,
						       .cycle_acc = cyc && dl == RTIT_DIALECT_RTIT };
			cr_assert_eq(rtit_pktdec_init(&dec, &cfg), 0);
			cr_assert_eq(dec.simd != NULL, have && !cfg.cycle_acc,
				     "dialect %d cycle_acc %d: vector path %s", dl, cfg.cycle_acc,
				     dec.simd ? "on" : "off");
		}
	}
}
