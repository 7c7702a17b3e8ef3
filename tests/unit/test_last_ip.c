/*
 * test_last_ip.c - IP compression: RTIT Table 18 (4.2.3.1) and Intel PT
 * Table 33-18, both directions.
 */
#include <criterion/criterion.h>

#include "rtit/ip.h"
#include "rtit/bits.h"

/* RTIT Table 18 verbatim: CNT, Zext | Match 47:32, Match 31:16,
 * LIP[47:32]==0, LIP[31:16]==0; -1 = X (don't care). */
static const struct { int cnt, zext, m47, m31, z47, z31; } table18[] = {
	{ 0, 0, 1, 1, 0, -1 },
	{ 0, 0, 1, 1, 1, 0 },
	{ 0, 1, -1, -1, 1, 1 },
	{ 1, 0, 1, 0, 0, -1 },
	{ 1, 1, -1, 0, 1, 0 },
	{ 1, 1, 0, -1, 1, 0 },
	{ 2, 0, 0, -1, 0, -1 },
};

static bool cell(int want, int v) { return want < 0 || want == v; }

/* All 16 input combinations: construct LAST_LIP and a LIP that have them,
 * find the rows of Table 18 that apply, and check the chooser agrees. */
Test(last_ip, rtit_table18_every_combination)
{
	for (int c = 0; c < 16; c++) {
		int m47 = c >> 3 & 1, m31 = c >> 2 & 1, z47 = c >> 1 & 1, z31 = c & 1;
		uint64_t hi = z47 ? 0 : 0x1234, mid = z31 ? 0 : 0x5678;
		uint64_t lhi = m47 ? hi : (hi ? hi ^ 0x0101 : 0x4321);
		uint64_t lmid = m31 ? mid : (mid ? mid ^ 0x0101 : 0x8765);
		struct rtit_last_ip lip;
		struct rtit_pkt_ip out;
		int rows = 0, cnt = -1, zext = -1;

		for (unsigned r = 0; r < sizeof(table18) / sizeof(table18[0]); r++) {
			if (!cell(table18[r].m47, m47) || !cell(table18[r].m31, m31) ||
			    !cell(table18[r].z47, z47) || !cell(table18[r].z31, z31))
				continue;
			if (rows++)
				cr_assert(cnt == table18[r].cnt && zext == table18[r].zext,
					  "Table 18 rows disagree for combination %d", c);
			cnt = table18[r].cnt;
			zext = table18[r].zext;
		}
		cr_assert_gt(rows, 0, "Table 18 does not cover combination %d", c);

		rtit_last_ip_init(&lip, RTIT_DIALECT_RTIT);
		rtit_last_ip_on_ip(&lip, lhi << 32 | lmid << 16 | 0x1111);
		rtit_last_ip_choose(&lip, hi << 32 | mid << 16 | 0x9abc, &out);
		cr_expect_eq(out.ipc, cnt, "M47=%d M31=%d Z47=%d Z31=%d: CNT %u, Table 18 says %d",
			     m47, m31, z47, z31, out.ipc, cnt);
		cr_expect_eq(out.zext, zext, "M47=%d M31=%d Z47=%d Z31=%d: Zext %u, Table 18 says %d",
			     m47, m31, z47, z31, out.zext, zext);
	}
}

/* RTIT Table 18 vectors worked out by hand (TIP header), and the valid=0
 * case of 4.2.3.1 ("the first LIP ... can't be compressed": match
 * disabled, D3). */
Test(last_ip, rtit_table18_vectors)
{
	static const struct { uint64_t last; bool valid; uint64_t lip; uint8_t bytes[8]; unsigned n; } v[] = {
		{ 0x123456780000ull, 1, 0x123456789abcull, { 0xb0, 0xbc, 0x9a }, 3 },
		{ 0x000056780000ull, 1, 0x000056789abcull, { 0xb0, 0xbc, 0x9a }, 3 },
		{ 0x123456780000ull, 1, 0x000000009abcull, { 0xb4, 0xbc, 0x9a }, 3 },
		{ 0x123456780000ull, 1, 0x123411119abcull, { 0xb1, 0xbc, 0x9a, 0x11, 0x11 }, 5 },
		{ 0x123456780000ull, 1, 0x000011119abcull, { 0xb5, 0xbc, 0x9a, 0x11, 0x11 }, 5 },
		{ 0x123456780000ull, 1, 0x432156789abcull, { 0xb2, 0xbc, 0x9a, 0x78, 0x56, 0x21, 0x43 }, 7 },
		{ 0, 0, 0x123456789abcull, { 0xb2, 0xbc, 0x9a, 0x78, 0x56, 0x34, 0x12 }, 7 },
		{ 0, 0, 0x000056789abcull, { 0xb5, 0xbc, 0x9a, 0x78, 0x56 }, 5 },
	};
	for (unsigned i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		struct rtit_last_ip lip;
		struct rtit_pkt_ctx ctx;
		struct rtit_packet p = { .type = RTIT_R_TIP }, got;
		uint8_t buf[16];
		uint64_t ip;

		rtit_last_ip_init(&lip, RTIT_DIALECT_RTIT);
		if (v[i].valid)
			rtit_last_ip_on_ip(&lip, v[i].last);
		rtit_pkt_ctx_init(&ctx, RTIT_DIALECT_RTIT, false);
		rtit_last_ip_choose(&lip, v[i].lip, &p.u.ip);
		cr_assert_eq(rtit_pkt_encode(&ctx, &p, buf, sizeof(buf)), (int)v[i].n, "vector %u", i);
		cr_expect_arr_eq(buf, v[i].bytes, v[i].n, "vector %u bytes", i);
		/* And the decoder's reconstruction gives the LIP back. */
		cr_assert_eq(rtit_pkt_decode(&ctx, buf, v[i].n, &got, NULL), (int)v[i].n);
		cr_assert_eq(rtit_last_ip_expand(&lip, &got.u.ip, &ip), 0);
		cr_expect_eq(ip, v[i].lip, "vector %u: expanded 0x%llx", i, (unsigned long long)ip);
	}
}

/* 4.2.3.1 item 4: back-to-back packets chain (LIP1 against LIP0), i.e.
 * LAST_LIP takes each full LIP in turn, even one sent compressed. */
Test(last_ip, rtit_back_to_back_chain)
{
	struct rtit_last_ip lip;
	struct rtit_pkt_ip a, b, c;

	rtit_last_ip_init(&lip, RTIT_DIALECT_RTIT);
	rtit_last_ip_choose(&lip, 0x7fff00001000ull, &a);	/* FUP.FAR, 6 bytes */
	cr_expect_eq(a.ipc, 2);
	rtit_last_ip_on_ip(&lip, 0x7fff00001000ull);
	rtit_last_ip_choose(&lip, 0x7fff00002000ull, &b);	/* TIP vs LIP0 */
	cr_expect(b.ipc == 0 && !b.zext);
	rtit_last_ip_on_ip(&lip, 0x7fff00002000ull);
	rtit_last_ip_choose(&lip, 0x7fff00032000ull, &c);	/* vs LIP1 */
	cr_expect(c.ipc == 1 && !c.zext && c.payload == 0x00032000);
}

/* RTIT: a 48-bit LIP is sign-extended from bit 47 (D2). */
Test(last_ip, rtit_sign_extension)
{
	struct rtit_last_ip lip;
	struct rtit_pkt_ip pl = { .ipc = 2, .payload = 0x800000001000ull };
	uint64_t ip;

	rtit_last_ip_init(&lip, RTIT_DIALECT_RTIT);
	cr_assert_eq(rtit_last_ip_expand(&lip, &pl, &ip), 0);
	cr_expect_eq(ip, 0xffff800000001000ull);
	rtit_last_ip_on_ip(&lip, ip);
	pl = (struct rtit_pkt_ip){ .ipc = 0, .payload = 0x2000 };
	cr_assert_eq(rtit_last_ip_expand(&lip, &pl, &ip), 0);
	cr_expect_eq(ip, 0xffff800000002000ull);
	/* The chooser sees the same 48 bits whether or not the IP is given
	 * in canonical 64-bit form. */
	rtit_last_ip_choose(&lip, 0xffff800000003000ull, &pl);
	cr_expect(pl.ipc == 0 && !pl.zext && pl.payload == 0x3000);
}

Test(last_ip, rtit_unknown_last_ip)
{
	struct rtit_last_ip lip;
	struct rtit_pkt_ip pl = { .ipc = 0, .zext = false, .payload = 0x1234 };
	uint64_t ip;

	rtit_last_ip_init(&lip, RTIT_DIALECT_RTIT);
	cr_expect_eq(rtit_last_ip_expand(&lip, &pl, &ip), -RTIT_ERR_NOIP);
	pl.ipc = 1;
	cr_expect_eq(rtit_last_ip_expand(&lip, &pl, &ip), -RTIT_ERR_NOIP);
	pl.zext = true;	/* Zext needs no last LIP */
	cr_expect_eq(rtit_last_ip_expand(&lip, &pl, &ip), 0);
	pl.ipc = 3;
	cr_expect_eq(rtit_last_ip_expand(&lip, &pl, &ip), -RTIT_ERR_BAD_PACKET);
	/* PSB clears it (3.3.7). */
	rtit_last_ip_on_ip(&lip, 0x1000);
	rtit_last_ip_on_psb(&lip);
	cr_expect(!lip.valid && lip.ip == 0);
}

/* SDM Table 33-18 worked out by hand with LastIP = 0xFFFFFFFF81234567. */
Test(last_ip, pt_table33_18_vectors)
{
	static const struct { uint8_t ipc; uint64_t payload, ip; } v[] = {
		{ 1, 0x89ab, 0xffffffff812389abull },
		{ 2, 0x00401000, 0xffffffff00401000ull },
		{ 3, 0x7fff12345678ull, 0x00007fff12345678ull },
		{ 3, 0x800000000000ull, 0xffff800000000000ull },
		{ 4, 0x000012345678ull, 0xffff000012345678ull },
		{ 6, 0x00007fffdeadbeefull, 0x00007fffdeadbeefull },
	};
	for (unsigned i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		struct rtit_last_ip lip;
		struct rtit_pkt_ip pl = { .ipc = v[i].ipc, .payload = v[i].payload };
		uint64_t ip;

		rtit_last_ip_init(&lip, RTIT_DIALECT_PT);
		rtit_last_ip_on_ip(&lip, 0xffffffff81234567ull);
		cr_assert_eq(rtit_last_ip_expand(&lip, &pl, &ip), 0);
		cr_expect_eq(ip, v[i].ip, "IPBytes %u: 0x%llx", v[i].ipc, (unsigned long long)ip);
	}
}

/* SDM Table 33-18 in sequence, and the shortest-encoding choice (D8). */
Test(last_ip, pt_choose)
{
	struct rtit_last_ip lip;
	struct rtit_pkt_ip pl;

	rtit_last_ip_init(&lip, RTIT_DIALECT_PT);	/* LastIP = 0 */
	rtit_last_ip_choose(&lip, 0xffffffff81000000ull, &pl);
	cr_expect(pl.ipc == 3 && pl.payload == 0xffff81000000ull, "6D 00 00 00 81 FF FF");
	rtit_last_ip_on_ip(&lip, 0xffffffff81000000ull);
	rtit_last_ip_choose(&lip, 0xffffffff81000010ull, &pl);
	cr_expect(pl.ipc == 1 && pl.payload == 0x10, "2D 10 00");
	rtit_last_ip_choose(&lip, 0xffffffff00401000ull, &pl);
	cr_expect(pl.ipc == 2 && pl.payload == 0x00401000);
	/* Non-canonical, upper 16 bits matching: 100b, not 110b. */
	rtit_last_ip_on_ip(&lip, 0x1234000000000000ull);
	rtit_last_ip_choose(&lip, 0x1234567800000000ull, &pl);
	cr_expect(pl.ipc == 4, "update_48 for a non-canonical IP sharing IP[63:48]");
	/* Neither: full 64 bits. */
	rtit_last_ip_choose(&lip, 0x4321567800000000ull, &pl);
	cr_expect(pl.ipc == 6 && pl.payload == 0x4321567800000000ull);
	/* Canonical: 011b preferred over 100b at equal size (D8). */
	rtit_last_ip_on_ip(&lip, 0x00007f0000000000ull);
	rtit_last_ip_choose(&lip, 0x00007fff12340000ull, &pl);
	cr_expect(pl.ipc == 3);
	/* PSB resets LastIP to 0 (33.4.2.2); compression against 0 allowed. */
	rtit_last_ip_on_psb(&lip);
	rtit_last_ip_choose(&lip, 0x1234, &pl);
	cr_expect(pl.ipc == 1 && pl.payload == 0x1234);
}

/* The switchable choices (D59): 100b before 011b where both are legal
 * (Table 33-18: both 6 bytes for a canonical IP whose IP[63:48] equal
 * LastIP's), and 110b for every IP. */
Test(last_ip, pt_choose_update48_and_full)
{
	struct rtit_last_ip lip;
	struct rtit_pkt_ip pl;

	rtit_last_ip_init(&lip, RTIT_DIALECT_PT);
	lip.pt_choice = RTIT_PT_IP_UPDATE48;
	rtit_last_ip_on_ip(&lip, 0x00007f0000000000ull);
	rtit_last_ip_choose(&lip, 0x00007fff12340000ull, &pl);
	cr_expect(pl.ipc == 4 && pl.payload == 0x7fff12340000ull, "100b: IP[47:0]");
	/* shorter forms still win */
	rtit_last_ip_choose(&lip, 0x00007f0000001234ull, &pl);
	cr_expect(pl.ipc == 1);
	/* IP[63:48] differ: 011b for a canonical IP */
	rtit_last_ip_choose(&lip, 0xffffffff81000000ull, &pl);
	cr_expect(pl.ipc == 3);
	lip.pt_choice = RTIT_PT_IP_FULL;
	rtit_last_ip_choose(&lip, 0x00007f0000001234ull, &pl);
	cr_expect(pl.ipc == 6 && pl.payload == 0x00007f0000001234ull, "110b: IP[63:0]");
}

/* Randomised: whatever the chooser picks, the expansion gives the IP back,
 * in both dialects, and never a longer form than needed. */
Test(last_ip, choose_expand_roundtrip)
{
	uint64_t s = 0x9e3779b97f4a7c15ull;
	for (int d = 0; d < 2; d++) {
		struct rtit_last_ip lip;
		rtit_last_ip_init(&lip, d ? RTIT_DIALECT_PT : RTIT_DIALECT_RTIT);
		for (int i = 0; i < 100000; i++) {
			s ^= s << 13; s ^= s >> 7; s ^= s << 17;
			uint64_t ip;
			switch (s & 3) {
			case 0: ip = (lip.ip & ~0xffffull) | (s >> 48); break;
			case 1: ip = (lip.ip & ~0xffffffffull) | (s >> 32); break;
			case 2: ip = rtit_sext(s >> 8, 48); break;
			default: ip = d ? s : rtit_sext(s, 48); break;
			}
			if (!d)
				ip = rtit_sext(ip, 48);
			struct rtit_pkt_ip pl;
			uint64_t back;
			rtit_last_ip_choose(&lip, ip, &pl);
			cr_assert_eq(rtit_last_ip_expand(&lip, &pl, &back), 0);
			cr_assert_eq(back, ip, "dialect %d: 0x%llx came back as 0x%llx", d,
				     (unsigned long long)ip, (unsigned long long)back);
			rtit_last_ip_on_ip(&lip, ip);
			if ((s >> 20 & 0xff) == 0)
				rtit_last_ip_on_psb(&lip);
		}
	}
}
