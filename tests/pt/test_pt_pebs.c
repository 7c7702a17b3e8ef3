/*
 * test_pt_pebs.c - PEBS records in the Intel PT model (encoder/pt/
 * pt_pebs.c): packet blocks, SDM 33.4.1.1 and 33.4.2.26-28, on
 * hand-written records.
 *
 * Bytes from the packet definitions: BBP (Table 33-45) is 02 63 then SZ
 * in bit 7 and Type[4:0]; BIP (Table 33-46) is ID << 3 | 100b then the
 * payload, 8 bytes after a BBP with SZ=0, 4 with SZ=1; BEP (Table 33-48)
 * is 02 33, 02 B3 with IP=1.  The items and their IDs are Table 33-47's:
 * GPRs (type 01h) RFLAGS, RIP, RAX, RCX, RDX, RBX, RSP, RBP, RSI, RDI,
 * R8-R15 (IDs 0-17); PEBS Basic (04h) Instruction Pointer, Applicable
 * Counters, Timestamp (0-2); PEBS Memory (05h) MemAccessAddress,
 * MemAuxInfo, MemAccessLatency, TSXAuxInfo (0-3); XMM (10h) XMMn_Q0/Q1 at
 * 2n/2n+1; LBR_0..2 (08h-0Ah) LBR[TOS-k] FROM_IP, TO_IP, INFO at 3k,
 * 3k+1, 3k+2, 32 a block.  As in test_pt_tsx.c, code lives in 0x1000-0x1fff after a
 * TIP.PGE(0x1000), so a FUP is 3D lo hi (IPBytes 001b, Table 33-18).
 */
#include "pt_harness.h"
#include "rtit/pebs.h"

static struct px h;

static size_t start(uint64_t ctl, uint64_t ip)
{
	px_init(&h);
	px_start(&h);
	px_single_range(&h);
	px_msr(&h, RTIT_PT_MSR_CTL, ctl);
	px_op(&h, ip, 2);
	return h.n;
}

/* The simulator's order: on_pebs, then the RTIT_EV_PEBS record at @ip
 * (the next instruction, where the record binds). */
static void pebs(uint64_t ip, const struct rtit_sim_pebs *p)
{
	struct rtit_sim_rec r = px_rec(&h, RTIT_SIM_EVENT, RTIT_EV_PEBS, ip, 0, ip, false);
	r.value = p->ip;
	r.vector = p->groups;
	rtit_pt_model_on_pebs(&h.m, p, &r);
	px_feed(&h, &r);
}

static const struct rtit_sim_pebs basic = {
	.ip = 0x1002, .counters = 1, .tsc = 0x1234, .mode = 64,
};

/* Basic only, ContextEn=1: BBP(Basic, SZ=0), three BIPs, BEP(IP=1),
 * FUP(0x1004) (Table 33-45 "Application"). */
Test(pebs, basic_block_binds_to_fup)
{
	size_t n = start(PT_CTL_ON, 0x1000);
	px_op(&h, 0x1002, 2);
	pebs(0x1004, &basic);
	px_expect(&h, n,
		  0x02, 0x63, 0x04,					/* BBP type 04h */
		  0x04, 0x02, 0x10, 0, 0, 0, 0, 0, 0,			/* ID 0: IP 0x1002 */
		  0x0c, 0x01, 0, 0, 0, 0, 0, 0, 0,			/* ID 1: counters */
		  0x14, 0x34, 0x12, 0, 0, 0, 0, 0, 0,			/* ID 2: TSC */
		  0x02, 0xb3,						/* BEP IP=1 */
		  0x3d, 0x04, 0x10);					/* FUP 0x1004 */
}

/* The TNT of the branches before goes out first (D21; Table 33-15: no
 * TNT inside a block): TNT(T) = (1 << 1 | 1) << 1 = 06. */
Test(pebs, partial_tnt_goes_out_before_the_block)
{
	size_t n = start(PT_CTL_ON, 0x1000);
	px_insn(&h, RTIT_IC_COND, 0x1002, 2, 0x1010, true);
	pebs(0x1010, &(struct rtit_sim_pebs){ .ip = 0x1002, .counters = 1, .tsc = 5, .mode = 64 });
	px_expect(&h, n, 0x06,
		  0x02, 0x63, 0x04,
		  0x04, 0x02, 0x10, 0, 0, 0, 0, 0, 0,
		  0x0c, 0x01, 0, 0, 0, 0, 0, 0, 0,
		  0x14, 0x05, 0, 0, 0, 0, 0, 0, 0,
		  0x02, 0xb3, 0x3d, 0x10, 0x10);
}

/* ContextEn=0 (User only at CPL 0): the block still goes (BBP needs only
 * TriggerEn), its BEP has IP=0 and no FUP follows (33.4.2.28). */
Test(pebs, context_off_bep_without_ip)
{
	size_t n = start(RTIT_PT_CTL_TRACE_EN | RTIT_PT_CTL_USER | RTIT_PT_CTL_BRANCH_EN, 0x1000);
	px_op(&h, 0x1002, 2);
	n = h.n;
	pebs(0x1004, &basic);
	px_expect(&h, n,
		  0x02, 0x63, 0x04,
		  0x04, 0x02, 0x10, 0, 0, 0, 0, 0, 0,
		  0x0c, 0x01, 0, 0, 0, 0, 0, 0, 0,
		  0x14, 0x34, 0x12, 0, 0, 0, 0, 0, 0,
		  0x02, 0x33);						/* BEP IP=0 */
}

/* TriggerEn=0: nothing (Table 33-45 dependencies). */
Test(pebs, trigger_off_nothing)
{
	px_init(&h);
	px_start(&h);
	px_single_range(&h);
	px_op(&h, 0x1000, 2);
	pebs(0x1002, &basic);
	cr_expect_eq(h.n, 0);
}

/* 32-bit mode: the GPR block has 4-byte items (SZ=1: 02 63 81) and no
 * R8-R15; Basic keeps 8-byte items (D54). */
Test(pebs, mode32_gpr_block_has_4_byte_items)
{
	struct rtit_sim_pebs p = { .ip = 0x1002, .counters = 1, .tsc = 7, .mode = 32,
				   .groups = RTIT_PEBS_G_GPR };
	px_init(&h);
	h.mode = 32;
	px_start(&h);
	px_single_range(&h);
	px_msr(&h, RTIT_PT_MSR_CTL, PT_CTL_ON);
	px_op(&h, 0x1000, 2);
	size_t n = h.n;
	for (int i = 0; i < 10; i++)
		p.gpr[i] = 0x11111111u * (unsigned)i;
	px_op(&h, 0x1002, 2);
	pebs(0x1004, &p);
	px_expect(&h, n,
		  0x02, 0x63, 0x81,				/* BBP SZ=1 type 01h */
		  0x04, 0x00, 0x00, 0x00, 0x00,			/* RFLAGS */
		  0x0c, 0x11, 0x11, 0x11, 0x11,			/* RIP */
		  0x14, 0x22, 0x22, 0x22, 0x22,			/* EAX */
		  0x1c, 0x33, 0x33, 0x33, 0x33,			/* ECX */
		  0x24, 0x44, 0x44, 0x44, 0x44,			/* EDX */
		  0x2c, 0x55, 0x55, 0x55, 0x55,			/* EBX */
		  0x34, 0x66, 0x66, 0x66, 0x66,			/* ESP */
		  0x3c, 0x77, 0x77, 0x77, 0x77,			/* EBP */
		  0x44, 0x88, 0x88, 0x88, 0x88,			/* ESI */
		  0x4c, 0x99, 0x99, 0x99, 0x99,			/* EDI */
		  0x02, 0x63, 0x04,				/* BBP SZ=0 type 04h */
		  0x04, 0x02, 0x10, 0, 0, 0, 0, 0, 0,
		  0x0c, 0x01, 0, 0, 0, 0, 0, 0, 0,
		  0x14, 0x07, 0, 0, 0, 0, 0, 0, 0,
		  0x02, 0xb3, 0x3d, 0x04, 0x10);
}

/* Every group: the blocks by ascending type (GPRs 01h, Basic 04h, Memory
 * 05h, XMM 10h, as Table 33-47 lists them; D54), one BEP at the end.  The
 * Memory block's bytes: MemAccessAddress 0x2000 at ID 0. */
Test(pebs, all_groups_in_table_order)
{
	struct rtit_sim_pebs p = basic;
	size_t n = start(PT_CTL_ON, 0x1000), k = 0;
	static const uint8_t bbp[] = { 0x01, 0x04, 0x05, 0x10 };
	static const unsigned items[] = { 18, 3, 4, 32 };

	p.groups = RTIT_PEBS_G_GPR | RTIT_PEBS_G_MEM | RTIT_PEBS_G_XMM;
	p.mem[0] = 0x2000;
	p.xmm[31] = 0x0102030405060708ull;	/* XMM15_Q1: ID 1Fh, header F C */
	px_op(&h, 0x1002, 2);
	pebs(0x1004, &p);
	/* walk the bytes: BBP, its BIPs, for each block */
	const uint8_t *b = h.out + n;
	for (unsigned blk = 0; blk < 4; blk++) {
		cr_assert_eq(b[k], 0x02);
		cr_assert_eq(b[k + 1], 0x63);
		cr_assert_eq(b[k + 2], bbp[blk], "block %u type", blk);
		k += 3;
		for (unsigned i = 0; i < items[blk]; i++) {
			cr_assert_eq(b[k], (uint8_t)(i << 3 | 4), "block %u item %u header", blk, i);
			if (bbp[blk] == 0x05 && i == 0)
				cr_expect_eq(b[k + 2], 0x20, "MemAccessAddress 0x2000");
			k += 9;
		}
	}
	cr_expect_eq(b[k - 9], 0xfc, "XMM15_Q1: ID 1Fh << 3 | 100b");
	cr_expect_eq(b[k - 8], 0x08);
	cr_expect_eq(b[k - 1], 0x01);
	cr_expect_eq(b[k], 0x02);
	cr_expect_eq(b[k + 1], 0xb3);
	cr_expect_eq(b[k + 2], 0x3d);
	cr_expect_eq(h.n - n, k + 5);
	cr_expect_eq(h.types[h.ntypes - 1], RTIT_PT_FUP);
}

/* LBRs (Table 33-47 "LBR_0".."LBR_2", D63): three items an entry
 * (FROM_IP, TO_IP, INFO), 32 items a block, so 11 entries fill LBR Block 0
 * (BBP type 08h, IDs 00h-1Fh: LBR[TOS-0]_FROM_IP to LBR[TOS-10]_TO_IP)
 * and open LBR Block 1 (09h) with LBR[TOS-10]_INFO at ID 00h; LBR blocks
 * come after Basic (04h) and before XMM (10h). */
Test(pebs, lbr_entries_fill_blocks_0_and_1)
{
	struct rtit_sim_pebs p = basic;
	size_t n = start(PT_CTL_ON, 0x1000), k;

	p.groups = RTIT_PEBS_G_LBR;
	p.nlbr = 11;
	for (unsigned i = 0; i < 33; i++)
		p.lbr[i] = 0x100 + i;
	px_op(&h, 0x1002, 2);
	n = h.n;
	pebs(0x1004, &p);
	const uint8_t *b = h.out + n;
	k = 3 + 3 * 9;	/* BBP 02 63 04 and the three Basic BIPs */
	cr_assert_eq(b[k], 0x02);
	cr_assert_eq(b[k + 1], 0x63);
	cr_assert_eq(b[k + 2], 0x08, "LBR Block 0");
	k += 3;
	for (unsigned i = 0; i < 32; i++, k += 9) {
		cr_assert_eq(b[k], (uint8_t)(i << 3 | 4), "item %u header", i);
		cr_assert_eq(b[k + 1], (uint8_t)(i & 0xff), "item %u low byte", i);
		cr_assert_eq(b[k + 2], 0x01, "item %u second byte", i);
	}
	static const uint8_t tail[] = {
		0x02, 0x63, 0x09,				/* LBR Block 1 */
		0x04, 0x20, 0x01, 0, 0, 0, 0, 0, 0,		/* ID 0: LBR[TOS-10]_INFO */
		0x02, 0xb3,					/* BEP IP=1 */
		0x3d, 0x04, 0x10,				/* FUP 0x1004 */
	};
	cr_assert_eq(h.n - n, k + sizeof(tail));
	cr_expect_eq(memcmp(b + k, tail, sizeof(tail)), 0);
}

/* No CYC goes with the block: BBP, BIP and BEP are not CYC-eligible
 * (33.3.6 lists TNT, TIP*, MODE, PIP, VMCS, OVF, MTC, TSC, PTW, EXSTOP),
 * nor the FUP. */
Test(pebs, no_cyc_in_the_block)
{
	size_t t0;

	start(PT_CTL_ON | RTIT_PT_CTL_CYC_EN, 0x1000);
	t0 = h.ntypes;
	px_op(&h, 0x1002, 2);
	pebs(0x1004, &basic);
	cr_assert_gt(h.ntypes, t0);
	for (size_t i = t0; i < h.ntypes; i++)
		cr_expect_neq(h.types[i], RTIT_PT_CYC, "packet %zu", i - t0);
	cr_expect_eq(h.types[t0], RTIT_PT_BBP);
}

/* A PSB+ that falls due inside a block goes after the block and its FUP
 * (Table 33-15: no PSB, PSBEND inside; D20: at the next packet
 * boundary after the record). */
Test(pebs, psb_not_inside_a_block)
{
	struct rtit_sim_pebs p = basic;
	bool in = false;

	p.groups = RTIT_PEBS_G_GPR | RTIT_PEBS_G_MEM | RTIT_PEBS_G_XMM;
	start(PT_CTL_ON, 0x1000);	/* PSBFreq 0: every 2 KiB (Table 33-11) */
	for (int i = 0; i < 12; i++) {
		px_op(&h, 0x1002, 2);
		pebs(0x1004, &p);
		px_insn(&h, RTIT_IC_DIRECT_JMP, 0x1004, 2, 0x1002, true);
	}
	cr_expect_gt(h.m.stats.psbs, 1);
	for (size_t i = 0; i < h.ntypes; i++) {
		if (h.types[i] == RTIT_PT_BBP)
			in = true;
		else if (h.types[i] == RTIT_PT_BEP)
			in = false;
		else if (in)
			cr_assert(h.types[i] == RTIT_PT_BIP, "packet %zu (type %d) inside a block", i,
				  h.types[i]);
	}
}

/* A GPR record into a 64-byte buffer that overflows inside its block,
 * with @errata and IA32_RTIT_CTL = @ctl; the tracing after it until the
 * overflow has resolved and every byte is out.  *@b0: the trace offset of
 * the block.  Returns the index of the BBP in h.types, after asserting
 * one overflow and no BEP. */
static size_t overflow_in_block(unsigned errata, uint64_t ctl, size_t *b0)
{
	struct rtit_sim_pebs p = basic;
	size_t t0;

	px_init(&h);
	h.p.buffer_bytes = 64;
	h.p.drain_num = 1;
	h.p.drain_den = 1;
	h.p.errata = errata;
	px_start(&h);
	px_single_range(&h);
	px_msr(&h, RTIT_PT_MSR_CTL, ctl);
	px_op(&h, 0x1000, 2);
	for (int i = 0; i < 200; i++)	/* drain the enable packets */
		px_op(&h, 0x1002, 2);
	t0 = h.ntypes;
	*b0 = h.n;
	p.groups = RTIT_PEBS_G_GPR;
	pebs(0x1004, &p);
	cr_expect_eq(h.m.stats.overflows, 1);
	for (int i = 0; i < 400; i++)
		px_op(&h, 0x1004, 2);
	rtit_pt_model_drain(&h.m);	/* every byte out */
	for (size_t j = t0; j < h.ntypes; j++)
		cr_expect_neq(h.types[j], RTIT_PT_BEP);
	return t0;
}

/* The packets named to an observer from @i (a BBP) past its BIPs (the one
 * the buffer could not take among them, named as dropped). */
static size_t past_bips(size_t i)
{
	cr_assert_eq(h.types[i++], RTIT_PT_BBP);
	while (i < h.ntypes && h.types[i] == RTIT_PT_BIP)
		i++;
	return i;
}

/* The internal buffer overflows inside a block: generation does not
 * resume in it (33.4.1.1): no BEP, the OVF that resolves it ends it, and
 * the FUP after the OVF says where tracing goes on (33.3.8). */
Test(pebs, overflow_ends_the_block)
{
	size_t b0, i = past_bips(overflow_in_block(0, PT_CTL_ON, &b0));

	cr_assert_lt(i + 1, h.ntypes);
	cr_expect_eq(h.types[i], RTIT_PT_OVF, "the OVF ends the block");
	cr_expect_eq(h.types[i + 1], RTIT_PT_FUP);
}

/* D183: the same with CYCEn and erratum SKD007.  The OVF that ends the
 * block has its CYC (33.3.8.2; a timing packet, which a block allows:
 * 33.4.1.1), cut after its first byte by the erratum (D109): the last BIP
 * the buffer took, the CYC's first byte (Exp set), OVF 02 F3, the FUP;
 * no BEP, nothing of the record after the overflow, no other packet
 * between the cut block and the OVF. */
Test(pebs, overflow_in_block_skd007_cyc_byte_then_ovf)
{
	size_t b0, i = past_bips(overflow_in_block(RTIT_PT_ERRATUM(RTIT_PT_SKD007),
						   PT_CTL_ON | RTIT_PT_CTL_CYC_EN, &b0));

	cr_assert_lt(i + 2, h.ntypes);
	cr_expect_eq(h.types[i], RTIT_PT_CYC, "the OVF's CYC");
	cr_expect_eq(h.types[i + 1], RTIT_PT_OVF, "the OVF right after the cut CYC");
	cr_expect_eq(h.types[i + 2], RTIT_PT_FUP);
	/* the bytes: BBP 02 63 01, BIPs of 9 bytes (header bits 2:0 =
	 * 100b, 33.4.2.27), then the CYC's one byte (bits 1:0 = 11b, Exp =
	 * bit 2 set: more were due, 33.4.2.14), then 02 F3 */
	size_t at = b0;
	cr_assert_lt(at + 3, h.n);
	cr_expect_eq(h.out[at], 0x02);
	cr_expect_eq(h.out[at + 1], 0x63);
	at += 3;
	while (at < h.n && (h.out[at] & 7) == 4)
		at += 9;
	cr_assert_lt(at + 3, h.n);
	cr_expect_gt(at, b0 + 3, "some BIPs went out before the overflow");
	cr_expect_eq(h.out[at] & 7, 7, "a CYC byte with Exp set: 0x%02x", h.out[at]);
	cr_expect_eq(h.out[at + 1], 0x02, "the OVF right after it");
	cr_expect_eq(h.out[at + 2], 0xf3);
}

/* The decoder-side view of the same bytes: a packet decoder reading the
 * block names each BIP by the BBP before it (rtit_pkt_bip.type). */
Test(pebs, decoded_bips_carry_their_block_type)
{
	struct rtit_pkt_ctx c;
	struct rtit_packet pk;
	size_t n = start(PT_CTL_ON, 0x1000), off;
	int k;

	px_op(&h, 0x1002, 2);
	pebs(0x1004, &basic);
	rtit_pkt_ctx_init(&c, RTIT_DIALECT_PT, false);
	off = n;
	k = rtit_pkt_decode(&c, h.out + off, h.n - off, &pk, NULL);
	cr_assert_eq(k, 3);
	rtit_pkt_ctx_on_packet(&c, &pk);
	off += (size_t)k;
	k = rtit_pkt_decode(&c, h.out + off, h.n - off, &pk, NULL);
	cr_assert_eq(k, 9);
	cr_expect_eq(pk.type, RTIT_PT_BIP);
	cr_expect_eq(pk.u.bip.type, rtit_pt_bbp_pebs_basic);
	cr_expect_eq(pk.u.bip.value, 0x1002);
	char nm[32];
	cr_expect_str_eq(rtit_pebs_item_name(pk.u.bip.type, 2, nm, sizeof(nm)), "Timestamp");
	cr_expect_str_eq(rtit_pebs_item_name(rtit_pt_bbp_gpr, 2, nm, sizeof(nm)), "RAX");
	cr_expect_str_eq(rtit_pebs_item_name(rtit_pt_bbp_lbr1, 0, nm, sizeof(nm)), "LBR[TOS-10]_INFO");
	cr_expect_str_eq(rtit_pebs_item_name(rtit_pt_bbp_lbr2, 0x1f, nm, sizeof(nm)), "LBR[TOS-31]_INFO");
	cr_expect_str_eq(rtit_pebs_item_name(rtit_pt_bbp_xmm, 0x1d, nm, sizeof(nm)), "XMM14_Q1");
}

/* The PEBS record of a HLT (the counter overflowed on it) comes with the
 * HLT, before the wake: PWRE, EXSTOP, FUP (Table 33-57 case 5), the
 * block, and only the interrupt that wakes it brings CBR and PWRX (case
 * 7, D54). */
Test(pebs, record_of_a_hlt_comes_before_the_wake)
{
	size_t t0;
	static const enum rtit_pkt_type want[] = {
		RTIT_PT_PWRE, RTIT_PT_EXSTOP, RTIT_PT_FUP, RTIT_PT_BBP, RTIT_PT_BIP, RTIT_PT_BIP,
		RTIT_PT_BIP, RTIT_PT_BEP, RTIT_PT_FUP, RTIT_PT_CBR, RTIT_PT_PWRX, RTIT_PT_FUP,
		RTIT_PT_TIP,
	};

	start(PT_CTL_ON | RTIT_PT_CTL_PWR_EVT_EN, 0x1000);
	t0 = h.ntypes;
	px_insn(&h, RTIT_IC_HLT, 0x1002, 1, 0x1003, false);
	pebs(0x1003, &(struct rtit_sim_pebs){ .ip = 0x1002, .counters = 1, .tsc = 3, .mode = 64 });
	px_event(&h, RTIT_EV_EXT_INTERRUPT, 0x1003, 0x1080, 0x20);
	cr_assert_eq(h.ntypes - t0, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		cr_expect_eq(h.types[t0 + i], want[i], "packet %zu", i);
}
