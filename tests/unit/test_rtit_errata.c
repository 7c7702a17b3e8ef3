/*
 * test_rtit_errata.c - the errata of RTIT Appendix E, each off (the
 * manual's behaviour) and on (the erratum's), and the PSB clear delay
 * (3.3.9, D65).  Setup as test_rtit_examples.c: trace everything.
 */
#include "rtit_harness.h"

#define CTL_ON (RTIT_R_CTL_TRACE_EN | RTIT_R_CTL_TRACE_ACTIVE | RTIT_R_CTL_OS | RTIT_R_CTL_USER)
#define EV(f, s) ((f) | ((s) << RTIT_R_EVENTS_STOP_SHIFT))
#define ALL EV(RTIT_R_EVID_ALWAYS_ON, RTIT_R_EVID_ALWAYS_OFF)

static struct hx h;

static void on(int e, const char *v)
{
	char err[128];
	char key[4] = { 'e', (char)('0' + e), 0, 0 };
	cr_assert_eq(rtit_r_param_set(&h.p, key, v, err, sizeof(err)), 0, "%s", err);
}

static size_t start_all(uint64_t ctl, uint64_t ip)
{
	hx_start(&h);
	hx_msr(&h, RTIT_R_MSR_EVENTS, ALL);
	hx_msr(&h, RTIT_R_MSR_CTL, ctl);
	hx_op(&h, ip, 2);
	return h.n;
}

/* E1: FUP.FAR with an address inside the far-transfer instruction. */
Test(errata, e1_fup_far_inside_instruction)
{
	for (int e = 0; e < 2; e++) {
		hx_init(&h);
		if (e)
			on(1, "always,arg=2");
		size_t n = start_all(CTL_ON, 0x140);
		hx_insn(&h, RTIT_IC_FAR_JMP, 0x150, 5, 0x180, true);
		if (e)
			hx_expect(&h, n, 0xbc, 0x52, 0x01, 0xb4, 0x80, 0x01);	/* CLIP + 2 */
		else
			hx_expect(&h, n, 0xbc, 0x55, 0x01, 0xb4, 0x80, 0x01);	/* NLIP */
	}
}

/* E2: an extra FUP.PGD when PacketEn stays 0 while FilterEn falls and
 * ContextEn rises in one instruction. */
Test(errata, e2_extra_fup_pgd)
{
	for (int e = 0; e < 2; e++) {
		hx_init(&h);
		if (e)
			on(2, "always");
		h.cpl = 3;				/* User not traced */
		hx_start(&h);
		hx_msr(&h, RTIT_R_MSR_LIP0, 0x100);
		hx_msr(&h, RTIT_R_MSR_LIP2, 0x200);
		hx_msr(&h, RTIT_R_MSR_EVENTS, EV(RTIT_R_EVID_RANGE0, RTIT_R_EVID_ALWAYS_OFF));
		hx_msr(&h, RTIT_R_MSR_STATUS, RTIT_R_STATUS_FILTER_EN);
		hx_msr(&h, RTIT_R_MSR_CTL, RTIT_R_CTL_TRACE_EN | RTIT_R_CTL_TRACE_ACTIVE | RTIT_R_CTL_OS);
		hx_op(&h, 0x140, 2);
		size_t n = h.n;
		h.cpl = 0;				/* ContextEn 0 -> 1 */
		hx_insn(&h, RTIT_IC_SYSCALL, 0x150, 2, 0x300, true);	/* FilterEn 1 -> 0 */
		if (e)
			hx_expect(&h, n, 0x8c, 0x52, 0x01);
		else
			hx_expect(&h, n);
	}
}

/* E3: the PSB one packet late (3.3.9's example: FUP.FAR, TIP, PSB). */
Test(errata, e3_psb_delayed)
{
	for (int e = 0; e < 2; e++) {
		uint64_t v;
		hx_init(&h);
		if (e)
			on(3, "always");
		start_all(CTL_ON, 0x1000);
		struct rtit_sim_rec wr = hx_rec(&h, RTIT_SIM_INSN, RTIT_IC_WRMSR, 0x1002, 2, 0x1004, false);
		cr_assert_eq(rtit_r_model_msr_write(&h.m, RTIT_R_MSR_PKT_CNT, 0x10ffc, &wr), 0);
		rtit_r_model_on_rec(&h.m, &wr);
		size_t n = h.n;
		hx_insn(&h, RTIT_IC_FAR_JMP, 0x7fff00000ffbull, 5, 0x12345, true);
		if (e)
			hx_expect(&h, n, 0xba, 0x00, 0x10, 0x00, 0x00, 0xff, 0x7f,
				  0xb5, 0x45, 0x23, 0x01, 0x00,
				  0xc0, 0, 0, 0, 0, 0, 0, 0, 0);
		else
			hx_expect(&h, n, 0xba, 0x00, 0x10, 0x00, 0x00, 0xff, 0x7f,
				  0xc0, 0, 0, 0, 0, 0, 0, 0, 0,
				  0xb5, 0x45, 0x23, 0x01, 0x00);
		cr_assert_eq(rtit_r_model_msr_read(&h.m, RTIT_R_MSR_PKT_CNT, &v, NULL), 0);
		cr_expect_eq(v & 0x3fff, 0xe, "Pkt_Cnt 0xE either way (docs/errata.md)");
	}
}

/* Overflow setup shared by E4 and E5: a 16-byte buffer draining at 1/8
 * byte per cycle, then far transfers until it overflows. */
static void overflow_start(void)
{
	h.p.buffer_bytes = 16;
	h.p.drain_num = 1;
	h.p.drain_den = 8;
}

/* E4: a TraceStop during an overflow: held and done after the FUP.BuffOvf
 * (4.2.5); with E4 the packet slips out first and TraceActive stays. */
Test(errata, e4_tracestop_in_overflow)
{
	for (int e = 0; e < 2; e++) {
		uint64_t v;
		hx_init(&h);
		overflow_start();
		if (e)
			on(4, "always");
		hx_start(&h);
		hx_msr(&h, RTIT_R_MSR_LIP1, 0x8000);
		hx_msr(&h, RTIT_R_MSR_LIP3, 0x9000);
		hx_msr(&h, RTIT_R_MSR_EVENTS, EV(RTIT_R_EVID_ALWAYS_ON, RTIT_R_EVID_RANGE1));
		hx_msr(&h, RTIT_R_MSR_CTL, CTL_ON);
		hx_op(&h, 0x1000, 2);				/* 12 bytes */
		hx_insn(&h, RTIT_IC_FAR_JMP, 0x1002, 5, 0x1100, true);	/* 6: overflow */
		cr_assert_eq(h.m.stats.overflows, 1);
		hx_insn(&h, RTIT_IC_INDIRECT_JMP, 0x1100, 2, 0x8000, true);	/* stop hit */
		for (int i = 0; i < 200; i++)
			hx_op(&h, 0x8000, 2);
		cr_assert_eq(rtit_r_model_finish(&h.m), 0);
		cr_assert_eq(rtit_r_model_msr_read(&h.m, RTIT_R_MSR_CTL, &v, NULL), 0);
		if (e) {
			/* ... FUP.FAR, TraceSTOP, ..., FUP.BuffOvf; still tracing */
			cr_expect(v & RTIT_R_CTL_TRACE_ACTIVE, "E4: TraceActive not cleared");
			hx_expect(&h, h.n - 4, 0xc1, 0x94, 0x02, 0x80);
		} else {
			cr_expect(!(v & RTIT_R_CTL_TRACE_ACTIVE), "TraceActive cleared after the overflow");
			hx_expect(&h, h.n - 4, 0x94, 0x02, 0x80, 0xc1);
		}
	}
}

/* E5: a TIP after FUP.BuffOvf, with the same IP, when a TIP-class branch
 * retired during the overflow. */
Test(errata, e5_tip_after_buffovf)
{
	for (int e = 0; e < 2; e++) {
		hx_init(&h);
		overflow_start();
		if (e)
			on(5, "always");
		start_all(CTL_ON, 0x1000);
		hx_insn(&h, RTIT_IC_FAR_JMP, 0x1002, 5, 0x1100, true);	/* overflow */
		hx_insn(&h, RTIT_IC_INDIRECT_JMP, 0x1100, 2, 0x1200, true);	/* lost TIP */
		for (int i = 0; i < 200; i++)
			hx_op(&h, 0x1200, 2);
		cr_assert_eq(rtit_r_model_finish(&h.m), 0);
		if (e) {
			/* FUP.BuffOvf 0x1202 (Zext), TIP 0x1202 (Zext: D4) */
			cr_assert_geq(h.n, 6);
			hx_expect(&h, h.n - 6, 0x94, 0x02, 0x12, 0xb4, 0x02, 0x12);
		} else {
			hx_expect(&h, h.n - 3, 0x94, 0x02, 0x12);
		}
	}
}

/* E6: every cycle count one low (4.2.14). */
Test(errata, e6_cycle_count_minus_one)
{
	for (int e = 0; e < 2; e++) {
		hx_init(&h);
		if (e)
			on(6, "always");
		h.cpi = 10;
		size_t n = start_all(CTL_ON | RTIT_R_CTL_CYCLE_ACC, 0x1000);
		hx_insn(&h, RTIT_IC_INDIRECT_JMP, 0x1002, 2, 0x1100, true);
		hx_expect(&h, n, 0xb4, 0x00, 0x11, (uint8_t)(((e ? 9 : 10) << 2) | 1));
	}
}

/* E7: the first MTC after enable comes late. */
Test(errata, e7_first_mtc)
{
	for (int e = 0; e < 2; e++) {
		hx_init(&h);
		if (e)
			on(7, "always");
		h.cpi = 64;
		size_t n = start_all(CTL_ON | RTIT_R_CTL_MTC_EN, 0x1000);
		hx_op(&h, 0x1002, 2);	/* TSC 128: TSC[14:7] 0 -> 1 */
		hx_op(&h, 0x1004, 2);	/* TSC 192 */
		hx_op(&h, 0x1006, 2);	/* TSC 256: 2 */
		if (e)
			hx_expect(&h, n, 0xc4, 0x02);
		else
			hx_expect(&h, n, 0xc4, 0x01, 0xc4, 0x02);
	}
}

/* E8: a packet right after a PSB precedes an older one. */
Test(errata, e8_reorder_after_psb)
{
	for (int e = 0; e < 2; e++) {
		hx_init(&h);
		if (e)
			on(8, "every:2");
		start_all(CTL_ON, 0x1000);
		hx_insn(&h, RTIT_IC_INDIRECT_JMP, 0x1002, 2, 0x1100, true);
		hx_insn(&h, RTIT_IC_INDIRECT_JMP, 0x1100, 2, 0x1200, true);
		cr_assert_eq(rtit_r_model_finish(&h.m), 0);
		if (e)	/* the second TIP overtakes the first */
			hx_expect(&h, 9, 0x84, 0x00, 0x10, 0xb4, 0x00, 0x12, 0xb4, 0x00, 0x11);
		else
			hx_expect(&h, 9, 0x84, 0x00, 0x10, 0xb4, 0x00, 0x11, 0xb4, 0x00, 0x12);
	}
}

/* 3.3.9, D65: the PSB's clear of LAST_LIP taking effect a packet later:
 * the first IP after the PSB still compresses against the old LAST_LIP. */
Test(errata, psb_clear_delay)
{
	for (int d = 0; d < 2; d++) {
		hx_init(&h);
		h.p.psb_clear_delay = (uint8_t)d;
		start_all(CTL_ON, 0x1000);
		struct rtit_sim_rec wr = hx_rec(&h, RTIT_SIM_INSN, RTIT_IC_WRMSR, 0x1002, 2, 0x1004, false);
		cr_assert_eq(rtit_r_model_msr_write(&h.m, RTIT_R_MSR_PKT_CNT, 0x10ffc, &wr), 0);
		rtit_r_model_on_rec(&h.m, &wr);
		size_t n = h.n;
		hx_insn(&h, RTIT_IC_FAR_JMP, 0x7fff00000ffbull, 5, 0x7fff00002000ull, true);
		if (d)
			hx_expect(&h, n, 0xba, 0x00, 0x10, 0x00, 0x00, 0xff, 0x7f, PSB_BYTES,
				  0xb0, 0x00, 0x20);	/* matched against 0x7FFF00001000 */
		else
			hx_expect(&h, n, 0xba, 0x00, 0x10, 0x00, 0x00, 0xff, 0x7f, PSB_BYTES,
				  0xb2, 0x00, 0x20, 0x00, 0x00, 0xff, 0x7f);
	}
}

/* Deterministic triggering: every:N fires on every Nth chance; seed:N:S is
 * the same sequence on every run. */
Test(errata, deterministic_triggers)
{
	uint64_t fired[2];
	for (int run = 0; run < 2; run++) {
		hx_init(&h);
		on(6, "seed:3:12345");
		h.cpi = 10;
		start_all(CTL_ON | RTIT_R_CTL_CYCLE_ACC, 0x1000);
		for (int i = 0; i < 300; i++)
			hx_insn(&h, RTIT_IC_INDIRECT_JMP, 0x1002, 2, 0x1002, true);
		fired[run] = h.m.stats.errata_fired[RTIT_E6];
	}
	cr_expect_eq(fired[0], fired[1]);
	cr_expect(fired[0] > 50 && fired[0] < 150, "about 1 in 3 of 301: %llu",
		  (unsigned long long)fired[0]);
	char err[128];
	cr_expect_neq(rtit_r_param_set(&h.p, "e9", "always", err, sizeof(err)), 0);
	cr_expect_neq(rtit_r_param_set(&h.p, "e1", "sometimes", err, sizeof(err)), 0);
	cr_expect_neq(rtit_r_param_set(&h.p, "psb_clear_delay", "5", err, sizeof(err)), 0);
}
