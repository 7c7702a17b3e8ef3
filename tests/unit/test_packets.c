/*
 * test_packets.c - every packet form of both dialects decoded and encoded
 * against bytes written from the manual (packet_table.c), every truncation,
 * every reserved encoding, and encode/decode round trips.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "packet_table.h"
#include "pktcmp.h"
#include "rtit/opcodes_rtit.h"

static void row_ctx(struct rtit_pkt_ctx *ctx, enum rtit_dialect d, bool ccp,
		    bool in_block, bool sz4)
{
	rtit_pkt_ctx_init(ctx, d, ccp);
	ctx->expect_ccp = ccp;
	ctx->in_block = in_block;
	ctx->block_sz4 = sz4;
}

Test(packets, decode_table)
{
	for (unsigned i = 0; i < pkt_nrows; i++) {
		const struct pkt_row *r = &pkt_rows[i];
		struct rtit_pkt_ctx ctx;
		struct rtit_packet got, want = r->pkt;
		const char *why;
		char msg[256];

		row_ctx(&ctx, r->dialect, r->expect_ccp, r->in_block, r->sz4);
		int ret = rtit_pkt_decode(&ctx, r->bytes, r->n, &got, &why);
		cr_expect_eq(ret, (int)r->n, "%s: decode returned %d (%s)", r->cite, ret,
			     why ? why : "");
		if (ret != (int)r->n)
			continue;
		want.size = (uint8_t)r->n;
		cr_expect_eq(rtit_test_pkt_diff(&want, &got, 0, msg, sizeof(msg)), 0,
			     "%s: %s", r->cite, msg);
	}
}

Test(packets, encode_table)
{
	for (unsigned i = 0; i < pkt_nrows; i++) {
		const struct pkt_row *r = &pkt_rows[i];
		struct rtit_pkt_ctx ctx;
		uint8_t buf[32];

		row_ctx(&ctx, r->dialect, r->expect_ccp, r->in_block, r->sz4);
		memset(buf, 0xaa, sizeof(buf));
		int ret = rtit_pkt_encode(&ctx, &r->pkt, buf, sizeof(buf));
		cr_expect_eq(ret, (int)r->n, "%s: encode returned %d", r->cite, ret);
		if (ret == (int)r->n)
			cr_expect_arr_eq(buf, r->bytes, r->n, "%s: bytes differ", r->cite);
		/* One byte less room is reported, not overrun. */
		memset(buf, 0xaa, sizeof(buf));
		ret = rtit_pkt_encode(&ctx, &r->pkt, buf, r->n - 1);
		cr_expect_eq(ret, -RTIT_ERR_NOSPACE, "%s: short buffer gave %d", r->cite, ret);
		cr_expect_eq(buf[r->n - 1], 0xaa, "%s: wrote past the buffer", r->cite);
	}
}

/* Every proper prefix of every packet is a truncated packet. */
Test(packets, every_truncation)
{
	for (unsigned i = 0; i < pkt_nrows; i++) {
		const struct pkt_row *r = &pkt_rows[i];
		struct rtit_pkt_ctx ctx;
		struct rtit_packet got;

		row_ctx(&ctx, r->dialect, r->expect_ccp, r->in_block, r->sz4);
		for (unsigned k = 0; k < r->n; k++) {
			const char *why = NULL;
			int ret = rtit_pkt_decode(&ctx, r->bytes, k, &got, &why);
			cr_expect_eq(ret, -RTIT_ERR_EOS, "%s: %u of %u bytes gave %d", r->cite,
				     k, r->n, ret);
			cr_expect(why != NULL, "%s: no reason given", r->cite);
		}
	}
}

Test(packets, reserved_encodings)
{
	for (unsigned i = 0; i < err_nrows; i++) {
		const struct err_row *r = &err_rows[i];
		struct rtit_pkt_ctx ctx;
		struct rtit_packet got;
		const char *why = NULL;

		row_ctx(&ctx, r->dialect, r->expect_ccp, r->in_block, false);
		int ret = rtit_pkt_decode(&ctx, r->bytes, r->n, &got, &why);
		cr_expect_eq(ret, r->err, "%s: got %d (%s), want %d", r->cite, ret,
			     why ? why : "-", r->err);
		cr_expect(why != NULL && strlen(why) > 10, "%s: no reason given", r->cite);
	}
}

/* Erratum SKZ84 (docs/decisions.md D143): the TMA of pt_erratum_skz84 at
 * 0x18, derived there by hand from SDM Table 33-32 (the true TMA 02 73 01
 * 00 00 00 00, every payload bit inverted, the bogus byte 05), encoded
 * from its fields; decoded back only with the workaround (ctx.skz84),
 * else "reserved bits set"; never in 7 bytes. */
Test(packets, skz84_tma)
{
	static const uint8_t want[8] = { 0x02, 0x73, 0xfe, 0xff, 0xff, 0xff, 0xff, 0x05 };
	struct rtit_packet p = { .type = RTIT_PT_TMA, .u.tma = { .ctc = 0xfffe, .fc = 0x1ff, .skz84 = true } };
	struct rtit_packet got;
	struct rtit_pkt_ctx ctx;
	uint8_t buf[16];

	row_ctx(&ctx, RTIT_DIALECT_PT, false, false, false);
	cr_assert_eq(rtit_pkt_encode(&ctx, &p, buf, sizeof(buf)), 8);
	cr_assert_arr_eq(buf, want, 8);
	cr_assert_eq(rtit_pkt_encode(&ctx, &p, buf, 7), -RTIT_ERR_NOSPACE);
	cr_assert_eq(rtit_pkt_decode(&ctx, want, 8, &got, NULL), -RTIT_ERR_BAD_PACKET);
	ctx.skz84 = true;
	cr_assert_eq(rtit_pkt_decode(&ctx, want, 7, &got, NULL), -RTIT_ERR_EOS);
	cr_assert_eq(rtit_pkt_decode(&ctx, want, 8, &got, NULL), 8);
	char msg[128];
	cr_assert_eq(rtit_test_pkt_diff(&p, &got, 1, msg, sizeof(msg)), 0, "%s", msg);
	/* a TMA without reserved bits is the Table's, with or without it */
	p.u.tma.skz84 = false;
	cr_assert_eq(rtit_pkt_encode(&ctx, &p, buf, sizeof(buf)), 7);
	cr_assert_eq(rtit_pkt_decode(&ctx, buf, 7, &got, NULL), 7);
	cr_assert(!got.u.tma.skz84);
}

/* Decoding the table's bytes, then encoding the result, gives the bytes
 * back (no field is lost). */
Test(packets, decode_encode_identity)
{
	for (unsigned i = 0; i < pkt_nrows; i++) {
		const struct pkt_row *r = &pkt_rows[i];
		struct rtit_pkt_ctx ctx;
		struct rtit_packet got;
		uint8_t buf[32];

		row_ctx(&ctx, r->dialect, r->expect_ccp, r->in_block, r->sz4);
		cr_assert_eq(rtit_pkt_decode(&ctx, r->bytes, r->n, &got, NULL), (int)r->n, "%s", r->cite);
		cr_assert_eq(rtit_pkt_encode(&ctx, &got, buf, sizeof(buf)), (int)r->n, "%s", r->cite);
		cr_expect_arr_eq(buf, r->bytes, r->n, "%s", r->cite);
	}
}

/* Round trip for every IP packet type and every compression variant
 * (RTIT CNT x Zext, 4.2.3; PT IPBytes, Table 33-18) with payloads that
 * fill the field. */
Test(packets, roundtrip_ip_variants)
{
	static const enum rtit_pkt_type rtypes[] = {
		RTIT_R_TIP, RTIT_R_FUP_PGE, RTIT_R_FUP_PGD, RTIT_R_FUP_BUFFOVF,
		RTIT_R_FUP_PCC, RTIT_R_FUP_FAR,
	};
	static const enum rtit_pkt_type ptypes[] = {
		RTIT_PT_TIP, RTIT_PT_TIP_PGE, RTIT_PT_TIP_PGD, RTIT_PT_FUP,
	};
	static const uint64_t pat[] = { 0, 1, 0x8000, 0x123456789abcdef0ull, ~0ull };

	for (int d = 0; d < 2; d++) {
		const enum rtit_pkt_type *types = d ? ptypes : rtypes;
		unsigned ntypes = d ? 4 : 6;
		struct rtit_pkt_ctx ctx;

		rtit_pkt_ctx_init(&ctx, d ? RTIT_DIALECT_PT : RTIT_DIALECT_RTIT, false);
		for (unsigned t = 0; t < ntypes; t++)
			for (uint8_t ipc = 0; ipc < 8; ipc++)
				for (int z = 0; z < (d ? 1 : 2); z++)
					for (unsigned k = 0; k < 5; k++) {
			int pl = rtit_ipc_payload_size(ctx.dialect, ipc);
			struct rtit_packet p = { .type = types[t] }, got;
			uint8_t buf[16];
			char msg[256];

			p.u.ip.ipc = ipc;
			p.u.ip.zext = z;
			p.u.ip.payload = pl >= 8 ? pat[k] : pl > 0 ? pat[k] & ((1ull << (8 * pl)) - 1) : 0;
			int n = rtit_pkt_encode(&ctx, &p, buf, sizeof(buf));
			if (pl < 0) {
				cr_expect_eq(n, -RTIT_ERR_BAD_PACKET, "%s ipc %u reserved, got %d",
					     rtit_pkt_name(p.type), ipc, n);
				continue;
			}
			cr_assert_eq(n, 1 + pl, "%s ipc %u: size %d", rtit_pkt_name(p.type), ipc, n);
			cr_assert_eq(rtit_pkt_decode(&ctx, buf, (size_t)n, &got, NULL), n);
			p.size = (uint8_t)n;
			cr_expect_eq(rtit_test_pkt_diff(&p, &got, 0, msg, sizeof(msg)), 0, "%s", msg);
		}
	}
}

/* Round trip of every TNT length in each form, with all bit patterns for
 * the short ones (RTIT 4.2.2; PT Table 33-16). */
Test(packets, roundtrip_tnt)
{
	struct { enum rtit_dialect d; enum rtit_pkt_type t; unsigned max; } forms[] = {
		{ RTIT_DIALECT_RTIT, RTIT_R_TNT, 6 },
		{ RTIT_DIALECT_PT, RTIT_PT_TNT8, 6 },
		{ RTIT_DIALECT_PT, RTIT_PT_TNT64, 47 },
	};
	for (unsigned f = 0; f < 3; f++) {
		struct rtit_pkt_ctx ctx;
		rtit_pkt_ctx_init(&ctx, forms[f].d, false);
		for (unsigned n = 1; n <= forms[f].max; n++) {
			uint64_t limit = n <= 6 ? 1ull << n : 64;
			for (uint64_t b = 0; b < limit; b++) {
				struct rtit_packet p = { .type = forms[f].t }, got;
				uint8_t buf[16];
				char msg[256];
				p.u.tnt.nbits = (uint8_t)n;
				p.u.tnt.bits = n <= 6 ? b : (0x5a5a5a5a5a5aull * (b + 1)) & ((1ull << n) - 1);
				int sz = rtit_pkt_encode(&ctx, &p, buf, sizeof(buf));
				cr_assert_gt(sz, 0);
				cr_assert_eq(rtit_pkt_decode(&ctx, buf, (size_t)sz, &got, NULL), sz);
				p.size = (uint8_t)sz;
				cr_expect_eq(rtit_test_pkt_diff(&p, &got, 0, msg, sizeof(msg)), 0, "%s", msg);
			}
		}
		struct rtit_packet bad = { .type = forms[f].t };
		uint8_t buf[16];
		bad.u.tnt.nbits = 0;
		cr_expect_eq(rtit_pkt_encode(&ctx, &bad, buf, sizeof(buf)), -RTIT_ERR_BAD_PACKET);
		bad.u.tnt.nbits = (uint8_t)(forms[f].max + 1);
		cr_expect_eq(rtit_pkt_encode(&ctx, &bad, buf, sizeof(buf)), -RTIT_ERR_BAD_PACKET);
	}
}

/* Every CCP and CYC value length boundary round-trips in its shortest
 * form (RTIT 4.2.14; PT Table 33-33: <32 one byte, 32..4095 two, ...). */
Test(packets, roundtrip_cycle_counts)
{
	struct rtit_pkt_ctx r, p;
	rtit_pkt_ctx_init(&r, RTIT_DIALECT_RTIT, true);
	r.expect_ccp = true;
	rtit_pkt_ctx_init(&p, RTIT_DIALECT_PT, false);

	for (unsigned bit = 0; bit < 64; bit++) {
		for (int delta = -1; delta <= 0; delta++) {
			uint64_t v = (1ull << bit) + (uint64_t)delta;
			struct rtit_packet c = { .type = RTIT_PT_CYC, .u.cyc.value = v }, got;
			uint8_t buf[16];
			int n = rtit_pkt_encode(&p, &c, buf, sizeof(buf));
			unsigned want = 1;
			for (uint64_t x = v >> 5; x; x >>= 7)
				want++;
			cr_assert_eq(n, (int)want, "CYC %llu: %d bytes, want %u", (unsigned long long)v, n, want);
			cr_assert_eq(rtit_pkt_decode(&p, buf, (size_t)n, &got, NULL), n);
			cr_expect_eq(got.u.cyc.value, v);

			if (v >= (1u << rtit_r_ccp_value_bits))
				continue;
			c.type = RTIT_R_CCP;
			n = rtit_pkt_encode(&r, &c, buf, sizeof(buf));
			want = v < 64 ? 1 : v < 16384 ? 2 : 3;
			cr_assert_eq(n, (int)want, "CCP %llu: %d bytes", (unsigned long long)v, n);
			cr_assert_eq(rtit_pkt_decode(&r, buf, (size_t)n, &got, NULL), n);
			cr_expect_eq(got.u.cyc.value, v);
		}
	}
	struct rtit_packet big = { .type = RTIT_R_CCP, .u.cyc.value = 1u << 22 };
	uint8_t buf[8];
	cr_expect_eq(rtit_pkt_encode(&r, &big, buf, sizeof(buf)), -RTIT_ERR_BAD_PACKET,
		     "CCP value over 22 bits (RTIT_CNTP[21:0]) must be refused");
}

Test(packets, encode_context_rules)
{
	struct rtit_pkt_ctx ctx;
	struct rtit_packet p = { .type = RTIT_R_CCP };
	uint8_t buf[32];

	/* RTIT 4.2.15: a CCP only where one is due, and then nothing else. */
	rtit_pkt_ctx_init(&ctx, RTIT_DIALECT_RTIT, true);
	cr_expect_eq(rtit_pkt_encode(&ctx, &p, buf, sizeof(buf)), -RTIT_ERR_BAD_CONTEXT);
	ctx.expect_ccp = true;
	p.type = RTIT_R_TRACESTOP;
	cr_expect_eq(rtit_pkt_encode(&ctx, &p, buf, sizeof(buf)), -RTIT_ERR_BAD_CONTEXT);

	/* PT 33.4.1.1: a BIP only inside a block; Table 33-15 inside one. */
	rtit_pkt_ctx_init(&ctx, RTIT_DIALECT_PT, false);
	p.type = RTIT_PT_BIP;
	cr_expect_eq(rtit_pkt_encode(&ctx, &p, buf, sizeof(buf)), -RTIT_ERR_BAD_CONTEXT);
	ctx.in_block = true;
	p.type = RTIT_PT_TNT8;
	p.u.tnt.nbits = 1;
	cr_expect_eq(rtit_pkt_encode(&ctx, &p, buf, sizeof(buf)), -RTIT_ERR_BAD_CONTEXT);

	/* A packet of the other dialect. */
	rtit_pkt_ctx_init(&ctx, RTIT_DIALECT_RTIT, false);
	p.type = RTIT_PT_PSB;
	cr_expect_eq(rtit_pkt_encode(&ctx, &p, buf, sizeof(buf)), -RTIT_ERR_BAD_OPC);
	cr_expect_eq(rtit_pkt_encode(NULL, &p, buf, sizeof(buf)), -RTIT_ERR_INVALID);
}

/* RTIT 4.2.15: which packets are followed by a CCP in cycle-accurate mode
 * (D5: not a partial TNT, TraceSTOP or PSB). */
Test(packets, ccp_bearing_packets)
{
	static const struct { enum rtit_pkt_type t; unsigned tnt; bool ccp; } rows[] = {
		{ RTIT_R_TNT, 6, true }, { RTIT_R_TNT, 5, false }, { RTIT_R_TIP, 0, true },
		{ RTIT_R_FUP_PGE, 0, true }, { RTIT_R_FUP_PGD, 0, true },
		{ RTIT_R_FUP_BUFFOVF, 0, true }, { RTIT_R_FUP_PCC, 0, true },
		{ RTIT_R_FUP_FAR, 0, true }, { RTIT_R_PIP, 0, true }, { RTIT_R_MTC, 0, true },
		{ RTIT_R_STS, 0, true }, { RTIT_R_PSB, 0, false }, { RTIT_R_TRACESTOP, 0, false },
		{ RTIT_R_CCP, 0, false },
	};
	for (unsigned i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct rtit_pkt_ctx ctx;
		struct rtit_packet p = { .type = rows[i].t };
		p.u.tnt.nbits = (uint8_t)rows[i].tnt;
		rtit_pkt_ctx_init(&ctx, RTIT_DIALECT_RTIT, true);
		rtit_pkt_ctx_on_packet(&ctx, &p);
		cr_expect_eq(ctx.expect_ccp, rows[i].ccp, "%s (tnt %u)", rtit_pkt_name(p.type), rows[i].tnt);
		rtit_pkt_ctx_init(&ctx, RTIT_DIALECT_RTIT, false);
		rtit_pkt_ctx_on_packet(&ctx, &p);
		cr_expect(!ctx.expect_ccp, "no CCP when Cycle_Acc=0");
	}
}
