/*
 * test_pktdec.c - the streaming decoder: same packets however the bytes
 * arrive, PSB search from any offset, resync after bad bytes, and the
 * last-IP register as the stream implies it.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "packet_table.h"
#include "pktcmp.h"
#include "rtit/pktdec.h"

/* A stream of all table rows of @d that need no special context. */
static size_t table_stream(enum rtit_dialect d, uint8_t *buf, size_t cap)
{
	size_t n = 0;
	for (unsigned i = 0; i < pkt_nrows; i++) {
		const struct pkt_row *r = &pkt_rows[i];
		if (r->dialect != d || r->expect_ccp || r->in_block || r->pkt.type == RTIT_PT_BBP)
			continue;
		cr_assert_leq(n + r->n, cap);
		memcpy(buf + n, r->bytes, r->n);
		n += r->n;
	}
	return n;
}

struct chunked {
	const uint8_t *p;
	size_t len, pos, step;
};

static ssize_t read_chunk(void *opaque, uint8_t *buf, size_t cap)
{
	struct chunked *c = opaque;
	size_t n = c->len - c->pos;
	if (n > c->step)
		n = c->step;
	if (n > cap)
		n = cap;
	memcpy(buf, c->p + c->pos, n);
	c->pos += n;
	return (ssize_t)n;
}

static struct rtit_pktdec dmem, dchunk;

/* xxHash's sanity check style: whole, then in 1-, 2-, 3- and 7-byte reads. */
Test(pktdec, same_packets_however_fed)
{
	static uint8_t buf[4096];
	for (int d = 0; d < 2; d++) {
		size_t len = table_stream((enum rtit_dialect)d, buf, sizeof(buf));
		static const size_t steps[] = { 1, 2, 3, 7, 4096 };
		for (unsigned s = 0; s < 5; s++) {
			struct rtit_pktdec_cfg cm = { .dialect = (enum rtit_dialect)d, .mem = buf, .mem_len = len };
			struct chunked ch = { .p = buf, .len = len, .step = steps[s] };
			struct rtit_pktdec_cfg cc = { .dialect = (enum rtit_dialect)d, .read = read_chunk, .opaque = &ch };
			struct rtit_pktdec_item a, b;
			unsigned count = 0;
			char msg[256];

			cr_assert_eq(rtit_pktdec_init(&dmem, &cm), 0);
			cr_assert_eq(rtit_pktdec_init(&dchunk, &cc), 0);
			for (;;) {
				int ra = rtit_pktdec_next(&dmem, &a), rb = rtit_pktdec_next(&dchunk, &b);
				cr_assert_eq(ra, rb, "dialect %d step %zu packet %u: %d vs %d (%s)", d,
					     steps[s], count, ra, rb, dchunk.err.why ? dchunk.err.why : "");
				if (ra <= 0)
					break;
				cr_assert_eq(a.offset, b.offset);
				cr_assert_arr_eq(a.raw, b.raw, a.pkt.size);
				cr_assert_eq(rtit_test_pkt_diff(&a.pkt, &b.pkt, 0, msg, sizeof(msg)), 0, "%s", msg);
				cr_assert_eq(a.ip_status, b.ip_status);
				cr_assert_eq(a.ip, b.ip);
				count++;
			}
			cr_expect_gt(count, 20);
			cr_expect_eq(dmem.skipped, 0);
		}
	}
}

Test(pktdec, sync_forward_from_every_offset)
{
	for (int d = 0; d < 2; d++) {
		enum rtit_dialect dl = (enum rtit_dialect)d;
		uint8_t buf[256];
		size_t psb = rtit_psb_size(dl);
		struct rtit_pkt_ctx ctx;
		struct rtit_packet p = { .type = d ? RTIT_PT_PSB : RTIT_R_PSB };

		memset(buf, d ? 0x1a : 0x0d, sizeof(buf));	/* TNT filler */
		rtit_pkt_ctx_init(&ctx, dl, false);
		cr_assert_eq(rtit_pkt_encode(&ctx, &p, buf + 40, psb), (int)psb);
		cr_assert_eq(rtit_pkt_encode(&ctx, &p, buf + 200, psb), (int)psb);
		for (size_t from = 0; from < sizeof(buf); from++) {
			long want = from <= 40 ? 40 : from <= 200 ? 200 : -RTIT_ERR_NOSYNC;
			cr_expect_eq(rtit_sync_forward(dl, buf, sizeof(buf), from), want,
				     "dialect %d from %zu", d, from);
		}
		/* A PSB cut by the end of the buffer is not found. */
		cr_expect_eq(rtit_sync_forward(dl, buf, 200 + psb - 1, 41), -RTIT_ERR_NOSYNC);
	}
}

/* Bad bytes: an error naming the offset, then resync at the next PSB with
 * the skipped bytes counted; a truncated last packet is an EOS error. */
Test(pktdec, resync_after_bad_bytes)
{
	/* RTIT: TIP, a reserved 0xE0 at offset 3, junk, PSB at 8, TIP, and a
	 * TIP cut short at the end. */
	static const uint8_t s[] = {
		0xb4, 0x83, 0x09,
		0xe0, 0x11, 0x22, 0x33, 0x44,
		0xc0, 0, 0, 0, 0, 0, 0, 0, 0,
		0xb4, 0x45, 0x03,
		0xb5, 0x45,
	};
	struct rtit_pktdec_cfg cfg = { .dialect = RTIT_DIALECT_RTIT, .mem = s, .mem_len = sizeof(s) };
	struct rtit_pktdec_item it;

	cr_assert_eq(rtit_pktdec_init(&dmem, &cfg), 0);
	cr_assert_eq(rtit_pktdec_next(&dmem, &it), 1);
	cr_expect_eq(it.ip, 0x983);
	cr_assert_eq(rtit_pktdec_next(&dmem, &it), -RTIT_ERR_BAD_OPC);
	cr_expect_eq(dmem.err.offset, 3);
	cr_assert_eq(rtit_pktdec_resync(&dmem, false), 1);
	cr_expect_eq(dmem.skipped, 5);
	cr_assert_eq(rtit_pktdec_next(&dmem, &it), 1);
	cr_expect_eq(it.pkt.type, RTIT_R_PSB);
	cr_expect_eq(it.offset, 8);
	cr_assert_eq(rtit_pktdec_next(&dmem, &it), 1);
	cr_expect_eq(it.ip, 0x345);
	cr_assert_eq(rtit_pktdec_next(&dmem, &it), -RTIT_ERR_EOS);
	cr_expect_eq(dmem.err.offset, 20);
	cr_assert_eq(rtit_pktdec_resync(&dmem, false), 0);
	cr_expect_eq(dmem.skipped, 7);
	cr_expect_eq(rtit_pktdec_next(&dmem, &it), 0);
	cr_expect_eq(dmem.nerrors, 2);
}

/* The same through a 1-byte reader and a 64 KiB+ stream of junk, so the
 * resync window slides across refills. */
Test(pktdec, resync_across_refills)
{
	static uint8_t s[200000];
	size_t psb_at = sizeof(s) - 1000;

	memset(s, 0xe5, sizeof(s));	/* reserved in RTIT */
	s[psb_at] = 0xc0;
	memset(s + psb_at + 1, 0, 8);
	memset(s + psb_at + 9, 0x0d, 1000 - 9);	/* TNTs */
	for (size_t step = 1; step <= 70000; step *= 263) {
		struct chunked ch = { .p = s, .len = sizeof(s), .step = step };
		struct rtit_pktdec_cfg cfg = { .dialect = RTIT_DIALECT_RTIT, .read = read_chunk, .opaque = &ch };
		struct rtit_pktdec_item it;
		unsigned tnts = 0;

		cr_assert_eq(rtit_pktdec_init(&dchunk, &cfg), 0);
		cr_assert_eq(rtit_pktdec_next(&dchunk, &it), -RTIT_ERR_BAD_OPC);
		cr_assert_eq(rtit_pktdec_resync(&dchunk, false), 1, "step %zu", step);
		cr_expect_eq(dchunk.skipped, psb_at, "step %zu", step);
		cr_assert_eq(rtit_pktdec_next(&dchunk, &it), 1);
		cr_expect_eq(it.offset, psb_at);
		while (rtit_pktdec_next(&dchunk, &it) == 1)
			tnts++;
		cr_expect_eq(tnts, 1000 - 9);
	}
}

/* RTIT 4.2.5: LAST_LIP is cleared before FUP.BuffOvf, and (4.2.3.1, D4) the
 * BuffOvf does not load it, so a following match-compressed TIP cannot be
 * reconstructed; a PSB clears it too (3.3.7). */
Test(pktdec, rtit_last_lip_after_buffovf_and_psb)
{
	static const uint8_t s[] = {
		0xb2, 0x00, 0x10, 0x00, 0x00, 0x34, 0x12,	/* TIP 0x123400001000 */
		0xb0, 0x00, 0x20,				/* TIP 0x123400002000 */
		0x94, 0x00, 0x30,				/* FUP.BuffOvf 0x3000 (Zext) */
		0xb0, 0x00, 0x40,				/* TIP: no last LIP */
		0xb2, 0x00, 0x10, 0x00, 0x00, 0x34, 0x12,	/* TIP full */
		0xc0, 0, 0, 0, 0, 0, 0, 0, 0,			/* PSB */
		0xb0, 0x00, 0x50,				/* TIP: no last LIP */
	};
	static const int want_status[] = { 0, 0, 0, -RTIT_ERR_NOIP, 0, 0, -RTIT_ERR_NOIP };
	static const uint64_t want_ip[] = { 0x123400001000ull, 0x123400002000ull, 0x3000, 0,
					    0x123400001000ull, 0, 0 };
	struct rtit_pktdec_cfg cfg = { .dialect = RTIT_DIALECT_RTIT, .mem = s, .mem_len = sizeof(s) };
	struct rtit_pktdec_item it;

	cr_assert_eq(rtit_pktdec_init(&dmem, &cfg), 0);
	for (unsigned i = 0; i < 7; i++) {
		cr_assert_eq(rtit_pktdec_next(&dmem, &it), 1, "packet %u", i);
		if (!rtit_pkt_has_ip(it.pkt.type))
			continue;
		cr_expect_eq(it.ip_status, want_status[i], "packet %u", i);
		if (!want_status[i])
			cr_expect_eq(it.ip, want_ip[i], "packet %u: 0x%llx", i, (unsigned long long)it.ip);
	}
	cr_expect_eq(rtit_pktdec_next(&dmem, &it), 0);

	/* With the other reading (D4) the BuffOvf loads LAST_LIP. */
	cfg.buffovf_loads_lip = true;
	cr_assert_eq(rtit_pktdec_init(&dmem, &cfg), 0);
	for (unsigned i = 0; i < 4; i++)
		cr_assert_eq(rtit_pktdec_next(&dmem, &it), 1);
	cr_expect_eq(it.ip_status, 0);
	cr_expect_eq(it.ip, 0x4000);
}

/* RTIT cycle-accurate stream: the CCPs are found only when the decoder is
 * told (D6); PT's suppressed IP leaves LastIP alone (Table 33-18). */
Test(pktdec, cycle_accurate_and_suppressed)
{
	static const uint8_t r[] = {
		0xb4, 0x83, 0x09, 0x15,		/* TIP 0x983, CCP 5 */
		0x0d,				/* partial TNT: no CCP */
		0x7f, 0x02, 0x01,		/* full TNT, CCP 64 */
		0xc1,				/* TraceSTOP: no CCP */
	};
	static const enum rtit_pkt_type rt[] = {
		RTIT_R_TIP, RTIT_R_CCP, RTIT_R_TNT, RTIT_R_TNT, RTIT_R_CCP, RTIT_R_TRACESTOP,
	};
	struct rtit_pktdec_cfg cfg = { .dialect = RTIT_DIALECT_RTIT, .cycle_acc = true,
				       .mem = r, .mem_len = sizeof(r) };
	struct rtit_pktdec_item it;

	cr_assert_eq(rtit_pktdec_init(&dmem, &cfg), 0);
	for (unsigned i = 0; i < 6; i++) {
		cr_assert_eq(rtit_pktdec_next(&dmem, &it), 1, "packet %u", i);
		cr_expect_eq(it.pkt.type, rt[i], "packet %u: %s", i, rtit_pkt_name(it.pkt.type));
	}
	cr_expect_eq(it.pkt.type, RTIT_R_TRACESTOP);

	static const uint8_t p[] = {
		0x6d, 0x00, 0x00, 0x00, 0x81, 0xff, 0xff,	/* TIP 0xffffffff81000000 */
		0x01,						/* TIP.PGD suppressed */
		0x2d, 0x10, 0x00,				/* TIP vs the first */
	};
	struct rtit_pktdec_cfg pc = { .dialect = RTIT_DIALECT_PT, .mem = p, .mem_len = sizeof(p) };
	cr_assert_eq(rtit_pktdec_init(&dmem, &pc), 0);
	cr_assert_eq(rtit_pktdec_next(&dmem, &it), 1);
	cr_assert_eq(rtit_pktdec_next(&dmem, &it), 1);
	cr_expect_eq(it.ip_status, 1);
	cr_assert_eq(rtit_pktdec_next(&dmem, &it), 1);
	cr_expect_eq(it.ip, 0xffffffff81000010ull);
}
