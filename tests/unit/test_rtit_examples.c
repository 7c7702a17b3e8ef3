/*
 * test_rtit_examples.c - the RTIT manual's worked examples on the encoder
 * model, and its rules one by one: 2.5.1 (Table 3), 3.3.9 (PSB insertion),
 * Figure 7 (return compression), cycle-accurate mode (4.2.14-4.2.15,
 * 4.2.6), MTC/STS (4.2.12-4.2.13), TraceStop (4.2.11), the internal
 * buffer's overflow (4.2.5), the MSR rules (3.3), and the errata.
 */
#include "rtit_harness.h"

#define CTL_ON (RTIT_R_CTL_TRACE_EN | RTIT_R_CTL_TRACE_ACTIVE | RTIT_R_CTL_OS | RTIT_R_CTL_USER)
#define EV(f, s) ((f) | ((s) << RTIT_R_EVENTS_STOP_SHIFT))
#define ALL EV(RTIT_R_EVID_ALWAYS_ON, RTIT_R_EVID_ALWAYS_OFF)

static struct hx h;

/* Trace everything from the first instruction at @ip. */
static size_t start_all(uint64_t ctl, uint64_t ip)
{
	hx_start(&h);
	hx_msr(&h, RTIT_R_MSR_EVENTS, ALL);
	hx_msr(&h, RTIT_R_MSR_CTL, ctl);
	hx_op(&h, ip, 2);
	return h.n;
}

/* 2.5.1 Table 3, "RTIT trace example": filter range 0x100-0x110 (read as
 * LIP0 = 0x100, LIP2 = 0x111), enabled outside it.  Step 1 is read as a
 * jump to 0x100, the address step 2 runs at (docs/decisions.md D11);
 * the packets are the table's otherwise. */
Test(examples, rtit_2_5_1_table3)
{
	hx_init(&h);
	hx_start(&h);
	hx_msr(&h, RTIT_R_MSR_LIP0, 0x100);
	hx_msr(&h, RTIT_R_MSR_LIP2, 0x111);
	hx_msr(&h, RTIT_R_MSR_EVENTS, EV(RTIT_R_EVID_RANGE0, RTIT_R_EVID_ALWAYS_OFF));
	hx_msr(&h, RTIT_R_MSR_CTL, CTL_ON);
	hx_insn(&h, RTIT_IC_DIRECT_JMP, 0x020, 3, 0x100, true);	/* 1 */
	hx_op(&h, 0x100, 2);						/* 2 xor */
	hx_insn(&h, RTIT_IC_FAR_JMP, 0x102, 3, 0x983, true);		/* 3 */
	hx_insn(&h, RTIT_IC_FAR_JMP, 0x983, 2, 0x10e, true);		/* 4 */
	hx_event(&h, RTIT_EV_EXCEPTION, 0x10e, 0x345, RTIT_SIM_F_FAULT);	/* 5 #DE */
	hx_op(&h, 0x345, 3);						/* 6 */
	hx_op(&h, 0x348, 4);						/* 7 */
	hx_op(&h, 0x34c, 4);						/* 8 */
	hx_op(&h, 0x350, 3);						/* 9 */
	hx_insn(&h, RTIT_IC_IRET, 0x353, 4, 0x113, true);		/* 10 */
	hx_expect(&h, 0, 0xc0, 0, 0, 0, 0, 0, 0, 0, 0,	/* PSB on enable */
		  0x84, 0x00, 0x01,	/* 1: FUP.PGE 0x100 (BLIP) */
		  0x8c, 0x05, 0x01,	/* 3: FUP.PGD 0x105 (NLIP) */
		  0xb4, 0x83, 0x09,	/*    TIP 0x983 (BLIP) */
		  0x84, 0x0e, 0x01,	/* 4: FUP.PGE 0x10E (BLIP) */
		  0x8c, 0x0e, 0x01,	/* 5: FUP.PGD 0x10E (CLIP of the fault) */
		  0xb4, 0x45, 0x03);	/*    TIP 0x345 (BLIP); 10: nothing */
}

/* 3.3.9: Pkt_Cnt 0xFFC, Pkt_Mask 1, a far transfer: FUP.FAR (7 bytes, no
 * compression), PSB, TIP (5 bytes, zero-extension), Pkt_Cnt 0xE. */
Test(examples, rtit_3_3_9_psb_insertion)
{
	uint64_t v;
	hx_init(&h);
	size_t n = start_all(CTL_ON, 0x1000);
	struct rtit_sim_rec wr = hx_rec(&h, RTIT_SIM_INSN, RTIT_IC_WRMSR, 0x1002, 2, 0x1004, false);
	cr_assert_eq(rtit_r_model_msr_write(&h.m, RTIT_R_MSR_PKT_CNT, 0x10ffc, &wr), 0);
	rtit_r_model_on_rec(&h.m, &wr);
	n = h.n;
	hx_insn(&h, RTIT_IC_FAR_JMP, 0x7fff00000ffbull, 5, 0x12345, true);
	hx_expect(&h, n, 0xba, 0x00, 0x10, 0x00, 0x00, 0xff, 0x7f,
		  0xc0, 0, 0, 0, 0, 0, 0, 0, 0,
		  0xb5, 0x45, 0x23, 0x01, 0x00);
	cr_assert_eq(rtit_r_model_msr_read(&h.m, RTIT_R_MSR_PKT_CNT, &v, NULL), 0);
	cr_expect_eq(v, 0x1000e, "Pkt_Cnt 0x%llx, want Pkt_Mask 1, Pkt_Cnt 0xE", (unsigned long long)v);
}

/* 4.2.3.2 Figure 7 (its narrative; the figure is garbled, D70): the inner RET
 * compresses, LAST_CALL_NLIP is not consumed, the outer RET sends a TIP. */
Test(examples, rtit_figure7_return_compression)
{
	uint64_t v;
	hx_init(&h);
	size_t n = start_all(CTL_ON | RTIT_R_CTL_CMPRS_RET, 0x001);
	n = h.n;
	hx_insn(&h, RTIT_IC_DIRECT_CALL, 0x005, 5, 0x400, true);
	hx_insn(&h, RTIT_IC_DIRECT_CALL, 0x405, 4, 0x500, true);
	hx_insn(&h, RTIT_IC_RET, 0x502, 1, 0x409, true);
	cr_assert_eq(rtit_r_model_msr_read(&h.m, RTIT_R_MSR_LAST_CALL_NLIP, &v, NULL), 0);
	cr_expect_eq(v, RTIT_R_LAST_CALL_VALID | 0x409, "LAST_CALL_NLIP still holds 0x409");
	cr_assert_eq(rtit_r_model_msr_read(&h.m, RTIT_R_MSR_TNT_BUFF, &v, NULL), 0);
	cr_expect_eq(v, 0x3, "one T bit buffered for the compressed RET");
	hx_op(&h, 0x409, 3);
	hx_insn(&h, RTIT_IC_RET, 0x40c, 1, 0x00a, true);
	hx_expect(&h, n, 0x03, 0xb4, 0x0a, 0x00);
	/* Without Cmprs_Ret both RETs send a TIP. */
	hx_init(&h);
	n = start_all(CTL_ON, 0x001);
	hx_insn(&h, RTIT_IC_DIRECT_CALL, 0x405, 4, 0x500, true);
	hx_insn(&h, RTIT_IC_RET, 0x502, 1, 0x409, true);
	hx_expect(&h, n, 0xb4, 0x09, 0x04);
}

/* 4.2.14/4.2.15: in cycle-accurate mode a CCP with RTIT_CNTP follows full
 * TNT, TIP, FUP, PIP, MTC and STS; not partial TNT or PSB; a second CCP
 * in one instruction is 0 (Table 19 footnote 3). */
Test(examples, rtit_cycle_accurate)
{
	hx_init(&h);
	h.cpi = 10;
	hx_start(&h);
	hx_msr(&h, RTIT_R_MSR_EVENTS, ALL);
	hx_msr(&h, RTIT_R_MSR_CTL, CTL_ON | RTIT_R_CTL_CYCLE_ACC);
	hx_op(&h, 0x1000, 2);
	/* PSB (no CCP), FUP.PGE 0x1000 + CCP 0 (the counter starts at the
	 * enable). */
	hx_expect(&h, 0, 0xc0, 0, 0, 0, 0, 0, 0, 0, 0, 0x84, 0x00, 0x10, 0x01);
	size_t n = h.n;
	hx_insn(&h, RTIT_IC_COND, 0x1002, 2, 0x1010, true);		/* +10 */
	hx_insn(&h, RTIT_IC_INDIRECT_JMP, 0x1010, 2, 0x1100, true);	/* +10 */
	/* Partial TNT (no CCP), TIP + CCP 20 (after the PGE's reset; the
	 * first record's own 10 cycles came before the enable). */
	hx_expect(&h, n, 0x03, 0xb4, 0x00, 0x11, (20 << 2) | 1);
	n = h.n;
	h.cpi = 100;
	hx_insn(&h, RTIT_IC_FAR_JMP, 0x1100, 5, 0x1200, true);
	/* FUP.FAR + CCP 100 (2 bytes: 100 = 0x64 -> 0x92 0x01), TIP + CCP 0. */
	hx_expect(&h, n, 0xbc, 0x05, 0x11, 0x92, 0x01, 0xb4, 0x00, 0x12, 0x01);
}

/* 4.2.6: FUP.PCC with the NLIP when CNTP bit 21 is set at the start of
 * an instruction and no other packet sent a cycle count. */
Test(examples, rtit_fup_pcc)
{
	hx_init(&h);
	size_t n = start_all(CTL_ON | RTIT_R_CTL_CYCLE_ACC, 0x1000);
	struct rtit_sim_rec wr = hx_rec(&h, RTIT_SIM_INSN, RTIT_IC_WRMSR, 0x1002, 2, 0x1004, false);
	wr.msr = RTIT_R_MSR_CNTP;
	cr_assert_eq(rtit_r_model_msr_write(&h.m, RTIT_R_MSR_CNTP, RTIT_R_CNTP_MSB, &wr), 0);
	rtit_r_model_on_rec(&h.m, &wr);
	n = h.n;
	hx_op(&h, 0x1004, 3);
	/* The write takes effect when the WRMSR retires, after its own
	 * cycle was counted (D76); the next instruction starts with CNTP
	 * bit 21 set.  CNTP = 2^21 + 1 cycle (this one's): FUP.PCC 0x1007
	 * (Zext), CCP 3 bytes: (1 << 2) | 11b, 0x00, 0x80. */
	hx_expect(&h, n, 0x98 | 0x04, 0x07, 0x10, 0x07, 0x00, 0x80);
	n = h.n;
	hx_op(&h, 0x1007, 3);
	hx_expect(&h, n);
}

/* 4.2.12: MTC when TSC[14:7] (MTC_Range 00) changes; 4.2.13: STS on a
 * frequency change and on wake. */
Test(examples, rtit_mtc_sts)
{
	hx_init(&h);
	h.cpi = 64;
	size_t n = start_all(CTL_ON | RTIT_R_CTL_MTC_EN | RTIT_R_CTL_STS_EN, 0x1000);
	n = h.n;
	hx_op(&h, 0x1002, 2);	/* TSC 128: TSC[14:7] = 1 */
	hx_op(&h, 0x1004, 2);	/* TSC 192: still 1 */
	hx_op(&h, 0x1006, 2);	/* TSC 256: 2 */
	hx_expect(&h, n, 0xc4, 0x01, 0xc4, 0x02);
	n = h.n;
	struct rtit_sim_rec f = hx_rec(&h, RTIT_SIM_EVENT, RTIT_EV_FREQ_CHANGE, 0x1008, 0, 0x1008, false);
	f.value = 0x1b;
	rtit_r_model_on_rec(&h.m, &f);
	/* TSC 320: TSC[14:7] = 2 (no MTC); STS ACBR=ECBR=0x1B: D6 DB. */
	hx_expect(&h, n, 0xd6, 0xdb, 0x40, 0x01, 0x00, 0x00, 0x00);
}

/* 4.2.11: TraceStop when a taken branch enters the TraceStop range:
 * TIP, then TraceSTOP; no FUP.PGD (4.2.8, D69); TraceActive cleared. */
Test(examples, rtit_tracestop)
{
	uint64_t v;
	hx_init(&h);
	hx_start(&h);
	hx_msr(&h, RTIT_R_MSR_LIP1, 0x8000);
	hx_msr(&h, RTIT_R_MSR_LIP3, 0x9000);
	hx_msr(&h, RTIT_R_MSR_EVENTS, EV(RTIT_R_EVID_ALWAYS_ON, RTIT_R_EVID_RANGE1));
	hx_msr(&h, RTIT_R_MSR_CTL, CTL_ON);
	hx_op(&h, 0x1000, 2);
	size_t n = h.n;
	hx_insn(&h, RTIT_IC_COND, 0x1002, 2, 0x1010, true);
	hx_insn(&h, RTIT_IC_INDIRECT_JMP, 0x1010, 2, 0x8010, true);
	hx_expect(&h, n, 0x03, 0xb4, 0x10, 0x80, 0xc1);
	cr_assert_eq(rtit_r_model_msr_read(&h.m, RTIT_R_MSR_CTL, &v, NULL), 0);
	cr_expect(!(v & RTIT_R_CTL_TRACE_ACTIVE), "TraceActive cleared by the TraceStop");
	cr_assert_eq(rtit_r_model_msr_read(&h.m, RTIT_R_MSR_STATUS, &v, NULL), 0);
	cr_expect_eq(v & (RTIT_R_STATUS_TRIGGER_EN | RTIT_R_STATUS_FILTER_EN), 0,
		     "TraceStop clears TriggerEn and forces FilterEn to 0");
	/* Nothing more is traced. */
	n = h.n;
	hx_insn(&h, RTIT_IC_INDIRECT_JMP, 0x8010, 2, 0x1000, true);
	hx_expect(&h, n);
}

/* 4.2.5: a small buffer that drains slowly overflows on a burst of far
 * transfers; packets are lost, then the overflow clears naturally with
 * the pre-overflow TNT and FUP.BuffOvf(next IP) uncompressed by match. */
Test(examples, rtit_overflow)
{
	uint64_t v;
	hx_init(&h);
	h.p.buffer_bytes = 24;
	h.p.drain_num = 1;
	h.p.drain_den = 4;		/* a quarter byte per cycle */
	start_all(CTL_ON, 0x1000);	/* PSB + PGE = 12 bytes */
	hx_insn(&h, RTIT_IC_COND, 0x1002, 2, 0x1010, true);
	hx_insn(&h, RTIT_IC_FAR_JMP, 0x1010, 5, 0x1100, true);	/* T, FUP.FAR, TIP: 19 */
	hx_insn(&h, RTIT_IC_FAR_JMP, 0x1100, 5, 0x1200, true);	/* FUP.FAR 22, TIP 25 > 24 */
	hx_insn(&h, RTIT_IC_FAR_JMP, 0x1200, 5, 0x1300, true);	/* lost */
	cr_assert_eq(rtit_r_model_msr_read(&h.m, RTIT_R_MSR_STATUS, &v, NULL), 0);
	cr_expect(v & RTIT_R_STATUS_BUFF_OVF, "Buffer_Overflow set");
	cr_expect_eq(h.m.stats.overflows, 1);
	hx_insn(&h, RTIT_IC_COND, 0x1300, 2, 0x1310, false);	/* lost: no TNT update */
	for (int i = 0; i < 200; i++)			/* drains: 200 cycles */
		hx_op(&h, 0x1310, 2);
	cr_assert_eq(rtit_r_model_msr_read(&h.m, RTIT_R_MSR_STATUS, &v, NULL), 0);
	cr_expect(!(v & RTIT_R_STATUS_BUFF_OVF));
	hx_insn(&h, RTIT_IC_INDIRECT_JMP, 0x1312, 2, 0x1320, true);
	cr_assert_eq(rtit_r_model_finish(&h.m), 0);
	/* The clear happens at the start of an instruction once the buffer is
	 * empty; FUP.BuffOvf carries where execution goes on (0x1312), with
	 * Zext (LAST_LIP cleared first).  D4: the BuffOvf did not load
	 * LAST_LIP, so the last TIP is sent with Zext, not matched. */
	hx_expect(&h, 0, PSB_BYTES, 0x84, 0x00, 0x10,
		  0x03, 0xbc, 0x15, 0x10, 0xb4, 0x00, 0x11,
		  0xbc, 0x05, 0x11,
		  0x94, 0x12, 0x13,
		  0xb4, 0x20, 0x13);
}

/* 4.2.5: a full TNT that causes the overflow is delayed, not dropped, and
 * goes out before the FUP.BuffOvf with a cycle count taken then; the
 * FUP.BuffOvf's own count is then 0. */
Test(examples, rtit_overflow_delayed_full_tnt)
{
	hx_init(&h);
	h.p.buffer_bytes = 14;
	h.p.drain_num = 1;
	h.p.drain_den = 8;
	start_all(CTL_ON | RTIT_R_CTL_CYCLE_ACC, 0x1000);	/* PSB 9 + PGE 3 + CCP 1 */
	for (int i = 0; i < 6; i++)
		hx_insn(&h, RTIT_IC_COND, 0x1002, 2, 0x1002, true);	/* 7F + CCP: 15 > 14 */
	cr_expect_eq(h.m.stats.overflows, 1);
	for (int i = 0; i < 200; i++)
		hx_op(&h, 0x1002, 2);
	cr_assert_eq(rtit_r_model_finish(&h.m), 0);
	/* PSB, PGE + CCP, then 7F + a 2-byte CCP (the ~100 cycles until the
	 * buffer drained at 1/8 byte per cycle), FUP.BuffOvf 0x1004 + CCP 0. */
	cr_assert_eq(h.n, 20, "%zu bytes", h.n);
	const uint8_t *t = h.out + h.n - 7;
	cr_expect_eq(t[0], 0x7f, "the delayed full TNT");
	cr_expect_eq(t[1] & 3, 2, "a 2-byte cycle count: the time at the drain");
	cr_expect_geq((t[1] >> 2) | t[2] << 6, 13 * 8 - 8, "cycles until the drain");
	cr_expect_eq(t[3], 0x94, "FUP.BuffOvf");
	cr_expect_eq(t[4] | t[5] << 8, 0x1004);
	cr_expect_eq(t[6], 0x01, "the BuffOvf's cycle count is 0 (how a decoder tells)");
}

/* 2.3, 3.3.10-3.3.12: the output region, in 64-byte lines, wrapping at
 * the mask; RTIT_OFFSET readable after a drain; Dest=0 sends the
 * TraceStop write to 0xC0 of its line (3.3.2). */
struct memw { uint64_t phys; size_t n; uint8_t b[64]; };
static struct memw writes[64];
static unsigned nwrites;

static int mem_sink(void *opaque, uint64_t phys, const uint8_t *b, size_t n)
{
	(void)opaque;
	cr_assert_lt(nwrites, 64);
	cr_assert_leq(n, 64);
	writes[nwrites].phys = phys;
	writes[nwrites].n = n;
	memcpy(writes[nwrites].b, b, n);
	nwrites++;
	return 0;
}

Test(examples, rtit_output_region)
{
	struct rtit_enc_sink s = { .write = hx_write, .write_mem = mem_sink, .opaque = &h };
	uint64_t v;

	hx_init(&h);
	nwrites = 0;
	cr_assert_eq(rtit_r_model_init(&h.m, &h.p, &s), 0);
	cr_assert_eq(rtit_r_model_msr_read(&h.m, RTIT_R_MSR_CTL, &v, NULL), 0);
	hx_msr(&h, RTIT_R_MSR_BASE_ADDR, 0x12340000);
	hx_msr(&h, RTIT_R_MSR_LIMIT_MASK, 0x7f);		/* 128-byte region */
	hx_msr(&h, RTIT_R_MSR_OFFSET, 0x30);
	hx_msr(&h, RTIT_R_MSR_EVENTS, ALL);
	hx_msr(&h, RTIT_R_MSR_CTL, CTL_ON | RTIT_R_CTL_DEST);
	hx_op(&h, 0x1000, 2);			/* PSB + FUP.PGE: 12 bytes */
	for (int i = 0; i < 40; i++)		/* TIPs: 3 bytes each */
		hx_insn(&h, RTIT_IC_INDIRECT_JMP, 0x1000, 2, 0x1000 + (uint64_t)(i & 1) * 0x10, true);
	/* 132 bytes from offset 0x30: a line ends at 0x40 (16 bytes), the
	 * next at 0x80 (64), which wraps to 0; the last 52 bytes are a
	 * partial line written by the drain. */
	cr_assert_eq(rtit_r_model_msr_write(&h.m, RTIT_R_MSR_CTL, CTL_ON | RTIT_R_CTL_DEST, NULL), 0);
	cr_assert_eq(rtit_r_model_msr_read(&h.m, RTIT_R_MSR_OFFSET, &v, NULL), 0);
	cr_expect_eq(v, (0x30 + 132) % 128, "RTIT_OFFSET after the drain: 0x%llx", (unsigned long long)v);
	cr_assert_eq(nwrites, 3);
	cr_expect(writes[0].phys == 0x12340030 && writes[0].n == 16);
	cr_expect(writes[1].phys == 0x12340040 && writes[1].n == 64);
	cr_expect(writes[2].phys == 0x12340000 && writes[2].n == 52,
		  "wrapped to offset 0, a partial line on the drain (%zu bytes)", writes[2].n);
	cr_expect_arr_eq(writes[0].b, h.out, 16, "the same bytes as the trace");

	/* Dest=0: the TraceStop byte goes to 0xC0 of its line. */
	hx_init(&h);
	nwrites = 0;
	cr_assert_eq(rtit_r_model_init(&h.m, &h.p, &s), 0);
	cr_assert_eq(rtit_r_model_msr_read(&h.m, RTIT_R_MSR_CTL, &v, NULL), 0);
	hx_msr(&h, RTIT_R_MSR_BASE_ADDR, 0x12340000);
	hx_msr(&h, RTIT_R_MSR_LIMIT_MASK, 0xfff);
	hx_msr(&h, RTIT_R_MSR_LIP1, 0x8000);
	hx_msr(&h, RTIT_R_MSR_LIP3, 0x9000);
	hx_msr(&h, RTIT_R_MSR_EVENTS, EV(RTIT_R_EVID_ALWAYS_ON, RTIT_R_EVID_RANGE1));
	hx_msr(&h, RTIT_R_MSR_CTL, CTL_ON);
	hx_op(&h, 0x1000, 2);
	hx_insn(&h, RTIT_IC_INDIRECT_JMP, 0x1002, 2, 0x8000, true);	/* TIP, TraceSTOP */
	cr_assert_eq(rtit_r_model_finish(&h.m), 0);
	cr_assert_eq(nwrites, 2);
	cr_expect(writes[0].phys == 0x12340000 && writes[0].n == 15, "PSB, PGE, TIP");
	cr_expect(writes[1].phys == 0x123400c0 && writes[1].n == 1 && writes[1].b[0] == 0xc1,
		  "TraceStop written at 0x%llx", (unsigned long long)writes[1].phys);
}

/* 3.3.1-3.3.13: the register rules. */
Test(examples, rtit_msr_rules)
{
	struct rtit_enc_sink s = { .write = hx_write, .opaque = &h };
	uint64_t v;

	hx_init(&h);
	cr_assert_eq(rtit_r_model_init(&h.m, &h.p, &s), 0);
	/* 3.3.1: before RTIT_CTL is read, every other access is #GP. */
	cr_expect_lt(rtit_r_model_msr_read(&h.m, RTIT_R_MSR_STATUS, &v, NULL), 0);
	cr_expect_lt(rtit_r_model_msr_write(&h.m, RTIT_R_MSR_CTL, 0, NULL), 0);
	cr_assert_eq(rtit_r_model_msr_read(&h.m, RTIT_R_MSR_CTL, &v, NULL), 0);
	cr_expect_eq(v, 0, "RTIT_CTL resets to 0");
	/* Reset values. */
	static const struct { uint32_t msr; uint64_t v; } reset[] = {
		{ RTIT_R_MSR_BASE_ADDR, 0xfdc00000 }, { RTIT_R_MSR_LIMIT_MASK, 0x7f },
		{ RTIT_R_MSR_PKT_CNT, 0x20000 }, { RTIT_R_MSR_TNT_BUFF, 1 }, { RTIT_R_MSR_STATUS, 0 },
		{ RTIT_R_MSR_OFFSET, 0 }, { RTIT_R_MSR_LAST_LIP, 0 }, { RTIT_R_MSR_LAST_CALL_NLIP, 0 },
	};
	for (unsigned i = 0; i < sizeof(reset) / sizeof(reset[0]); i++) {
		cr_assert_eq(rtit_r_model_msr_read(&h.m, reset[i].msr, &v, NULL), 0);
		cr_expect_eq(v, reset[i].v, "MSR 0x%x resets to 0x%llx, read 0x%llx", reset[i].msr,
			     (unsigned long long)reset[i].v, (unsigned long long)v);
	}
	/* Reserved bits are #GP. */
	static const struct { uint32_t msr; uint64_t v; } gp[] = {
		{ RTIT_R_MSR_CTL, 1u << 5 }, { RTIT_R_MSR_CTL, 1ull << 16 }, { RTIT_R_MSR_STATUS, 1u << 4 },
		{ RTIT_R_MSR_CNTP, 1u << 22 }, { RTIT_R_MSR_EVENTS, 1u << 6 },
		{ RTIT_R_MSR_LAST_LIP, 1ull << 33 }, { RTIT_R_MSR_LAST_CALL_NLIP, 1ull << 49 },
		{ RTIT_R_MSR_BASE_ADDR, 1 }, { RTIT_R_MSR_LIMIT_MASK, 1u << 22 },
		{ RTIT_R_MSR_OFFSET, 1u << 22 }, { RTIT_R_MSR_CR3_MATCH, 1 },
		{ RTIT_R_MSR_PKT_CNT, 1u << 14 }, { RTIT_R_MSR_TNT_BUFF, 0x80 },
		{ RTIT_R_MSR_TNT_BUFF, 0 },	/* 3.3.13: all zeros */
		{ 0x764, 0 },			/* not an RTIT MSR */
	};
	for (unsigned i = 0; i < sizeof(gp) / sizeof(gp[0]); i++)
		cr_expect_lt(rtit_r_model_msr_write(&h.m, gp[i].msr, gp[i].v, NULL), 0,
			     "MSR 0x%x = 0x%llx must be #GP", gp[i].msr, (unsigned long long)gp[i].v);
	/* 3.3.3: writes to ContextEn/TriggerEn are ignored, not #GP. */
	cr_expect_eq(rtit_r_model_msr_write(&h.m, RTIT_R_MSR_STATUS, RTIT_R_STATUS_TRIGGER_EN, NULL), 0);
	cr_assert_eq(rtit_r_model_msr_read(&h.m, RTIT_R_MSR_STATUS, &v, NULL), 0);
	cr_expect_eq(v, 0);
	/* Table 8: LIPn [63:48] read as the sign of bit 47. */
	cr_expect_eq(rtit_r_model_msr_write(&h.m, RTIT_R_MSR_LIP0, 0x0000800000001000ull, NULL), 0);
	cr_assert_eq(rtit_r_model_msr_read(&h.m, RTIT_R_MSR_LIP0, &v, NULL), 0);
	cr_expect_eq(v, 0xffff800000001000ull);
	/* Save/restore of the context-switched state. */
	static const struct { uint32_t msr; uint64_t v; } sr[] = {
		{ RTIT_R_MSR_TNT_BUFF, 0x2d }, { RTIT_R_MSR_LAST_LIP, RTIT_R_LAST_LIP_VALID | 0x12345678 },
		{ RTIT_R_MSR_LAST_CALL_NLIP, RTIT_R_LAST_CALL_VALID | 0x7fff1234 }, { RTIT_R_MSR_CNTP, 0x1234 },
		{ RTIT_R_MSR_PKT_CNT, 0x30abc },
	};
	for (unsigned i = 0; i < sizeof(sr) / sizeof(sr[0]); i++) {
		cr_expect_eq(rtit_r_model_msr_write(&h.m, sr[i].msr, sr[i].v, NULL), 0);
		cr_assert_eq(rtit_r_model_msr_read(&h.m, sr[i].msr, &v, NULL), 0);
		cr_expect_eq(v, sr[i].v, "MSR 0x%x: wrote 0x%llx, read 0x%llx", sr[i].msr,
			     (unsigned long long)sr[i].v, (unsigned long long)v);
	}
}

/* A restored LAST_LIP is used for compression (3.3.7: an OS restores it on
 * a context switch). */
Test(examples, rtit_restored_last_lip_compresses)
{
	hx_init(&h);
	size_t n = start_all(CTL_ON, 0x7fff00001000ull);
	struct rtit_sim_rec wr = hx_rec(&h, RTIT_SIM_INSN, RTIT_IC_WRMSR, 0x7fff00001002ull, 2, 0, false);
	cr_assert_eq(rtit_r_model_msr_write(&h.m, RTIT_R_MSR_LAST_LIP,
					    RTIT_R_LAST_LIP_VALID | 0x12340000 | 0x5678, &wr), 0);
	rtit_r_model_on_rec(&h.m, &wr);
	n = h.n;
	hx_insn(&h, RTIT_IC_INDIRECT_JMP, 0x7fff00001004ull, 2, 0x123456789abcull, true);
	hx_expect(&h, n, 0xb0, 0xbc, 0x9a);	/* Table 18 row 1 against the restored value */
}

/* 4.2.10: MOV CR0 that changes CR0.PG sends a PIP with the new PG bit
 * (CR3En=0); one that keeps PG sends nothing.  4.2.13: STS on the wake
 * from a sleep state. */
Test(examples, rtit_pip_on_cr0_pg_and_sts_on_wake)
{
	hx_init(&h);
	h.cr3 = 0x3000;
	size_t n = start_all(CTL_ON | RTIT_R_CTL_STS_EN, 0x1000);
	struct rtit_sim_rec r = hx_rec(&h, RTIT_SIM_INSN, RTIT_IC_MOV_CR0, 0x1002, 3, 0x1005, false);
	r.flags &= (uint8_t)~RTIT_SIM_F_CR0_PG;			/* PG 1 -> 0 */
	rtit_r_model_on_rec(&h.m, &r);
	hx_expect(&h, n, 0xc2, 0x00, 0x30, 0x00, 0x00, 0x00);	/* PIP, PG=0 */
	n = h.n;
	r = hx_rec(&h, RTIT_SIM_INSN, RTIT_IC_MOV_CR0, 0x1005, 3, 0x1008, false);
	r.flags &= (uint8_t)~RTIT_SIM_F_CR0_PG;			/* stays 0 */
	rtit_r_model_on_rec(&h.m, &r);
	hx_expect(&h, n);
	n = h.n;
	struct rtit_sim_rec s = hx_rec(&h, RTIT_SIM_EVENT, RTIT_EV_SLEEP, 0x1008, 0, 0x1008, false);
	s.vector = 1;
	rtit_r_model_on_rec(&h.m, &s);
	h.tsc += 1000;
	struct rtit_sim_rec w = hx_rec(&h, RTIT_SIM_EVENT, RTIT_EV_WAKE, 0x1008, 0, 0x1008, false);
	rtit_r_model_on_rec(&h.m, &w);
	/* STS: ratios 16/16, TSC = 1000 + one tick per record (6 records). */
	uint64_t tsc = w.tsc;
	hx_expect(&h, n, 0xd4, 0x10, (uint8_t)tsc, (uint8_t)(tsc >> 8), 0, 0, 0);
}

/* App. B 4.1.1-4.1.4, 4.2.13: a HLT (C1) or an MWAIT (the C-state it
 * entered) sleeps until the next record that is not a sleep of its own;
 * the wake sends an STS (D41) with the TSC of the waking event, or of the
 * MWAIT when a masked interrupt woke it and the next instruction follows
 * (no time passes asleep in the records); ratios 16/16: D4 10. */
static void expect_sts(size_t n, uint64_t tsc, const uint8_t *then, size_t nthen)
{
	uint8_t w[64] = { 0xd4, 0x10, (uint8_t)tsc, (uint8_t)(tsc >> 8), (uint8_t)(tsc >> 16),
			  (uint8_t)(tsc >> 24), (uint8_t)(tsc >> 32) };
	if (nthen)
		memcpy(w + 7, then, nthen);
	hx_check(&h, n, w, 7 + nthen, __FILE__, __LINE__);
}

Test(examples, rtit_sts_on_wake_from_hlt_and_mwait)
{
	hx_init(&h);
	size_t n = start_all(CTL_ON | RTIT_R_CTL_STS_EN, 0x140);
	struct rtit_sim_rec r = hx_rec(&h, RTIT_SIM_INSN, RTIT_IC_HLT, 0x142, 1, 0x143, false);
	rtit_r_model_on_rec(&h.m, &r);
	hx_expect(&h, n);
	/* Woken by an SMI: STS, then its FUP.PGD(0x143) (Table 19 rows
	 * 36/37; 2 IP bytes against 0x140, Table 18): 8C 43 01.  The STS
	 * has the time of the waking event. */
	struct rtit_sim_rec smi = hx_rec(&h, RTIT_SIM_EVENT, RTIT_EV_SMI, 0x143, 0, 0x8000, true);
	rtit_r_model_on_rec(&h.m, &smi);
	static const uint8_t pgd[] = { 0x8c, 0x43, 0x01 };
	expect_sts(n, smi.tsc, pgd, sizeof(pgd));
	hx_event(&h, RTIT_EV_RSM, 0x143, 0x143, 0);
	n = h.n;
	r = hx_rec(&h, RTIT_SIM_INSN, RTIT_IC_MWAIT, 0x143, 3, 0x146, false);
	r.value = 0x50;
	r.msr = 1;
	r.vector = 6;
	rtit_r_model_on_rec(&h.m, &r);
	hx_expect(&h, n);
	/* Woken by a masked interrupt: the next instruction; STS only. */
	hx_op(&h, 0x146, 1);
	expect_sts(n, r.tsc, NULL, 0);
}

Test(examples, rtit_no_sts_without_sleep_or_sts_en)
{
	hx_init(&h);
	size_t n = start_all(CTL_ON | RTIT_R_CTL_STS_EN, 0x140);
	/* An MWAIT that entered no C-state (C0, monitor not armed). */
	struct rtit_sim_rec r = hx_rec(&h, RTIT_SIM_INSN, RTIT_IC_MWAIT, 0x142, 3, 0x145, false);
	r.value = 0xf0;
	rtit_r_model_on_rec(&h.m, &r);
	hx_op(&h, 0x145, 1);
	hx_expect(&h, n);
	/* STS_En = 0 (4.2.13 needs it): a HLT's wake sends nothing. */
	hx_init(&h);
	n = start_all(CTL_ON, 0x140);
	hx_insn(&h, RTIT_IC_HLT, 0x142, 1, 0x143, false);
	hx_op(&h, 0x143, 1);
	hx_expect(&h, n);
}
