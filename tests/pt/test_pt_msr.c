/*
 * test_pt_msr.c - the IA32_RTIT_* MSRs and the CPUID leaf 14H profiles:
 * #GP on reserved bits, on features and encodings the profile lacks
 * (33.2.8.1, Table 33-6), on writes while TraceEn=1 (33.2.8.3-8), and the
 * read-back values (Tables 33-7, 33-9); the parameters.
 */
#include <stdio.h>

#include "pt_harness.h"

static struct px h;

static void begin(int profile)
{
	px_init(&h);
	cr_assert_eq(rtit_pt_caps_profile(&h.p.caps, profile), 0);
	px_start(&h);
}

#define GP(msr, v) cr_expect_eq(px_wr(&h, (msr), (v)), -1, "expected #GP: 0x%x = 0x%llx", \
				(msr), (unsigned long long)(v))
#define OK(msr, v) cr_expect_eq(px_wr(&h, (msr), (v)), 0, "expected OK: 0x%x = 0x%llx", \
				(msr), (unsigned long long)(v))

Test(msr, addresses)
{
	cr_expect_eq(RTIT_PT_MSR_OUTPUT_BASE, 0x560);
	cr_expect_eq(RTIT_PT_MSR_OUTPUT_MASK_PTRS, 0x561);
	cr_expect_eq(RTIT_PT_MSR_CTL, 0x570);
	cr_expect_eq(RTIT_PT_MSR_STATUS, 0x571);
	cr_expect_eq(RTIT_PT_MSR_CR3_MATCH, 0x572);
	cr_expect_eq(RTIT_PT_MSR_ADDR0_A, 0x580);
	cr_expect_eq(RTIT_PT_MSR_ADDR3_B, 0x587);
}

Test(msr, ctl_reserved_bits)
{
	begin(RTIT_PT_PROFILE_FULL);
	GP(RTIT_PT_MSR_CTL, 1ull << 18);
	GP(RTIT_PT_MSR_CTL, 1ull << 23);
	GP(RTIT_PT_MSR_CTL, 1ull << 28);
	GP(RTIT_PT_MSR_CTL, 1ull << 48);
	GP(RTIT_PT_MSR_CTL, 1ull << 60);
	GP(RTIT_PT_MSR_CTL, 3ull << RTIT_PT_CTL_ADDR_CFG_SHIFT(0));	/* 3..15 */
	GP(RTIT_PT_MSR_CTL, 15ull << RTIT_PT_CTL_ADDR_CFG_SHIFT(3));
	OK(RTIT_PT_MSR_CTL, 2ull << RTIT_PT_CTL_ADDR_CFG_SHIFT(3));
	GP(RTIT_PT_MSR_CTL, RTIT_PT_CTL_FABRIC_EN);	/* no trace transport */
	OK(RTIT_PT_MSR_CTL, RTIT_PT_CTL_CYC_EN | RTIT_PT_CTL_MTC_EN | RTIT_PT_CTL_PTW_EN |
	   RTIT_PT_CTL_EVENT_EN | RTIT_PT_CTL_DIS_TNT | RTIT_PT_CTL_INJECT_PSB_PMI |
	   RTIT_PT_CTL_PWR_EVT_EN | (15ull << RTIT_PT_CTL_PSB_FREQ_SHIFT));
}

Test(msr, basic_profile_lacks_features)
{
	begin(RTIT_PT_PROFILE_BASIC);
	GP(RTIT_PT_MSR_CTL, RTIT_PT_CTL_CYC_EN);
	GP(RTIT_PT_MSR_CTL, RTIT_PT_CTL_MTC_EN);
	GP(RTIT_PT_MSR_CTL, RTIT_PT_CTL_PTW_EN);
	GP(RTIT_PT_MSR_CTL, RTIT_PT_CTL_FUP_ON_PTW);
	GP(RTIT_PT_MSR_CTL, RTIT_PT_CTL_EVENT_EN);
	GP(RTIT_PT_MSR_CTL, RTIT_PT_CTL_PWR_EVT_EN);
	GP(RTIT_PT_MSR_CTL, RTIT_PT_CTL_DIS_TNT);
	GP(RTIT_PT_MSR_CTL, 1ull << RTIT_PT_CTL_PSB_FREQ_SHIFT);
	GP(RTIT_PT_MSR_CTL, 1ull << RTIT_PT_CTL_ADDR_CFG_SHIFT(0));
	/* No single-range output: TraceEn needs ToPA (Table 33-6 bit 8). */
	GP(RTIT_PT_MSR_CTL, RTIT_PT_CTL_TRACE_EN | RTIT_PT_CTL_BRANCH_EN);
	OK(RTIT_PT_MSR_CTL, RTIT_PT_CTL_CR3_FILTER | RTIT_PT_CTL_TSC_EN | RTIT_PT_CTL_DIS_RETC);
	/* MSRs of absent features (33.2.8.5). */
	uint64_t v;
	cr_expect_eq(rtit_pt_model_msr_read(&h.m, RTIT_PT_MSR_ADDR0_A, &v, NULL), -1);
	GP(RTIT_PT_MSR_ADDR0_A, 0x1000);
	OK(RTIT_PT_MSR_CR3_MATCH, 0x1000);
	cr_expect_eq(rtit_pt_model_msr_read(&h.m, 0x573, &v, NULL), -1);
}

Test(msr, client_profile_encodings)
{
	begin(RTIT_PT_PROFILE_CLIENT);
	/* MTC periods 0, 3, 6, 9 only. */
	GP(RTIT_PT_MSR_CTL, RTIT_PT_CTL_MTC_EN | (1ull << RTIT_PT_CTL_MTC_FREQ_SHIFT));
	OK(RTIT_PT_MSR_CTL, RTIT_PT_CTL_MTC_EN | (3ull << RTIT_PT_CTL_MTC_FREQ_SHIFT));
	GP(RTIT_PT_MSR_CTL, 6ull << RTIT_PT_CTL_PSB_FREQ_SHIFT);	/* 2K..64K only */
	OK(RTIT_PT_MSR_CTL, 5ull << RTIT_PT_CTL_PSB_FREQ_SHIFT);
	GP(RTIT_PT_MSR_CTL, 14ull << RTIT_PT_CTL_CYC_THRESH_SHIFT);
	OK(RTIT_PT_MSR_CTL, 13ull << RTIT_PT_CTL_CYC_THRESH_SHIFT);
	/* Two ranges: ADDR2_CFG is reserved, ADDR2_A does not exist. */
	GP(RTIT_PT_MSR_CTL, 1ull << RTIT_PT_CTL_ADDR_CFG_SHIFT(2));
	OK(RTIT_PT_MSR_CTL, 1ull << RTIT_PT_CTL_ADDR_CFG_SHIFT(1));
	GP(RTIT_PT_MSR_ADDR0_A + 4, 0x1000);
	OK(RTIT_PT_MSR_ADDR0_A + 2, 0x1000);
	GP(RTIT_PT_MSR_CTL, RTIT_PT_CTL_EVENT_EN);
}

Test(msr, writes_while_traceen)
{
	uint64_t on = PT_CTL_ON | RTIT_PT_CTL_TOPA;
	begin(RTIT_PT_PROFILE_FULL);
	px_single_range(&h);
	OK(RTIT_PT_MSR_CTL, PT_CTL_ON);
	GP(RTIT_PT_MSR_CTL, PT_CTL_ON | RTIT_PT_CTL_TSC_EN);	/* a change */
	OK(RTIT_PT_MSR_CTL, PT_CTL_ON);				/* the same value */
	GP(RTIT_PT_MSR_STATUS, 0);
	GP(RTIT_PT_MSR_CR3_MATCH, 0);
	GP(RTIT_PT_MSR_OUTPUT_BASE, 0);
	GP(RTIT_PT_MSR_OUTPUT_MASK_PTRS, 0xff);
	GP(RTIT_PT_MSR_ADDR0_B, 0);
	/* A write that clears TraceEn may change other bits too. */
	OK(RTIT_PT_MSR_CTL, (on & ~RTIT_PT_CTL_TRACE_EN) | RTIT_PT_CTL_TSC_EN);
	OK(RTIT_PT_MSR_CR3_MATCH, 0x2000);
}

Test(msr, field_rules)
{
	uint64_t v;
	begin(RTIT_PT_PROFILE_FULL);
	GP(RTIT_PT_MSR_CR3_MATCH, 0x1001);		/* 33.2.8.6: [4:0] */
	OK(RTIT_PT_MSR_CR3_MATCH, 0x1020);
	GP(RTIT_PT_MSR_ADDR0_A, 0x0000800000000000ull);	/* non-canonical */
	OK(RTIT_PT_MSR_ADDR0_A, 0xffff800000000000ull);
	GP(RTIT_PT_MSR_OUTPUT_BASE, 0x100040);		/* [6:0] */
	GP(RTIT_PT_MSR_OUTPUT_BASE, 1ull << 46);	/* >= MAXPHYADDR */
	OK(RTIT_PT_MSR_OUTPUT_BASE, 0x100080);
	OK(RTIT_PT_MSR_OUTPUT_MASK_PTRS, 0x1234500000000ull);
	cr_assert_eq(rtit_pt_model_msr_read(&h.m, RTIT_PT_MSR_OUTPUT_MASK_PTRS, &v, NULL), 0);
	cr_expect_eq(v, 0x123450000007full);		/* LowerMask forced */
	/* STATUS: RO bits ignored, bit 3 reserved, PacketByteCnt writable. */
	GP(RTIT_PT_MSR_STATUS, 1ull << 3);
	GP(RTIT_PT_MSR_STATUS, 1ull << 49);
	OK(RTIT_PT_MSR_STATUS, 0x7 | (5ull << 32));
	cr_assert_eq(rtit_pt_model_msr_read(&h.m, RTIT_PT_MSR_STATUS, &v, NULL), 0);
	cr_expect_eq(v, 5ull << 32);
}

Test(msr, status_reports_enables_and_bytecount)
{
	uint64_t v;
	begin(RTIT_PT_PROFILE_FULL);
	px_single_range(&h);
	px_msr(&h, RTIT_PT_MSR_CTL, PT_CTL_ON);
	px_op(&h, 0x1000, 2);
	cr_assert_eq(rtit_pt_model_msr_read(&h.m, RTIT_PT_MSR_STATUS, &v, NULL), 0);
	cr_expect_eq(v & 7, 7);
	cr_expect_eq(v >> 32, h.n);	/* every byte sent so far */
	cr_assert_eq(rtit_pt_model_msr_read(&h.m, RTIT_PT_MSR_OUTPUT_MASK_PTRS, &v, NULL), 0);
	cr_expect_eq(v >> 32, h.n);	/* OutputOffset */
}

Test(msr, cpuid_leaf_14h)
{
	struct rtit_pt_caps c;
	uint32_t r[4];
	rtit_pt_caps_profile(&c, RTIT_PT_PROFILE_FULL);
	rtit_pt_caps_cpuid(&c, 0, r);
	cr_expect_eq(r[0], 1);
	cr_expect_eq(r[1], 0x1ff);
	cr_expect_eq(r[2], 0x80000007u);
	rtit_pt_caps_cpuid(&c, 1, r);
	cr_expect_eq(r[0], 0xffff0004u);
	cr_expect_eq(r[1], 0xffffffffu);
	rtit_pt_caps_profile(&c, RTIT_PT_PROFILE_BASIC);
	rtit_pt_caps_cpuid(&c, 0, r);
	cr_expect_eq(r[1], 0x1);
	cr_expect_eq(r[2], 0x80000001u);
	cr_expect_eq(rtit_pt_caps_profile(&c, 7), -RTIT_ERR_INVALID);
}

Test(msr, params)
{
	struct rtit_pt_params p;
	char err[128];
	rtit_pt_params_default(&p);
	cr_expect_eq(rtit_pt_param_set(&p, "profile", "client", err, sizeof(err)), 0);
	cr_expect_eq(p.caps.num_ranges, 2);
	cr_expect_eq(rtit_pt_param_set(&p, "art", "3/1", err, sizeof(err)), 0);
	cr_expect_eq(p.art_num, 3);
	cr_expect_eq(rtit_pt_param_set(&p, "event_trace", "on", err, sizeof(err)), 0);
	cr_expect(p.caps.event_trace);
	cr_expect_eq(rtit_pt_param_set(&p, "long_tnt", "yes", err, sizeof(err)), 0);
	cr_expect(p.long_tnt);
	cr_expect_eq(rtit_pt_param_set(&p, "mtc_periods", "0x8", err, sizeof(err)), 0);
	cr_expect_eq(p.caps.mtc_periods, 8);
	cr_expect_eq(rtit_pt_param_set(&p, "ranges", "5", err, sizeof(err)), -RTIT_ERR_BAD_CONFIG);
	cr_expect_eq(rtit_pt_param_set(&p, "vmcs", "0x1001", err, sizeof(err)), -RTIT_ERR_BAD_CONFIG);
	cr_expect_eq(rtit_pt_param_set(&p, "nope", "1", err, sizeof(err)), -RTIT_ERR_BAD_CONFIG);
	cr_expect(strstr(err, "nope") != NULL);
}
