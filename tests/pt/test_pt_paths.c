/*
 * test_pt_paths.c - the Intel PT model's fast path (pt_model.c fast_run)
 * gives byte-identical output to the slow path that follows Tables
 * 33-55/33-56 case by case, on random record streams that exercise filter
 * ranges, TraceStop, CPL and CR3 changes, far transfers, CYC, MTC, TSC and
 * PSBFreq; and feeding records one at a time gives the same bytes as
 * feeding them in batches.
 */
#include "pt_harness.h"
#include "recgen.h"

static struct px a, b;

static void run(struct px *h, bool slow, uint64_t ctl, bool ranges, size_t batch)
{
	px_init(h);
	h->p.slow_path_only = slow;
	h->p.art_num = 3;
	h->p.art_den = 1;
	h->cpl = 3;
	h->cr3 = 0x1000;
	px_start(h);
	if (ranges) {
		px_msr(h, RTIT_PT_MSR_ADDR0_A, 0x1000);
		px_msr(h, RTIT_PT_MSR_ADDR0_B, 0x11ff);
		px_msr(h, RTIT_PT_MSR_ADDR0_A + 2, 0x1280);
		px_msr(h, RTIT_PT_MSR_ADDR0_B + 2, 0x12bf);
	}
	px_msr(h, RTIT_PT_MSR_CR3_MATCH, 0x1000);
	px_single_range(h);
	px_msr(h, RTIT_PT_MSR_CTL, ctl);
	for (size_t i = 0; i < N; i += batch) {
		size_t k = N - i < batch ? N - i : batch;
		if (batch == 1)
			rtit_pt_model_on_rec(&h->m, &recs[i]);
		else
			rtit_pt_model_on_batch(recs + i, k, &h->m);
	}
	cr_assert_eq(rtit_pt_model_finish(&h->m), 0);
}

Test(paths, fast_equals_slow_and_batching_does_not_matter)
{
	static const uint64_t T = RTIT_PT_CTL_TRACE_EN | RTIT_PT_CTL_BRANCH_EN |
				  RTIT_PT_CTL_OS | RTIT_PT_CTL_USER;
	static const struct { uint64_t ctl; bool ranges; } cfg[] = {
		{ T, false },
		{ T | RTIT_PT_CTL_DIS_RETC, false },
		{ T | (1ull << 32), true },				/* ADDR0 filter */
		{ T | (1ull << 32) | (2ull << 36), true },		/* and ADDR1 TraceStop */
		{ T | RTIT_PT_CTL_CYC_EN | RTIT_PT_CTL_MTC_EN | RTIT_PT_CTL_TSC_EN |
		  RTIT_PT_CTL_PWR_EVT_EN | (3ull << RTIT_PT_CTL_MTC_FREQ_SHIFT), false },
		{ T | RTIT_PT_CTL_CYC_EN | (3ull << RTIT_PT_CTL_CYC_THRESH_SHIFT) | RTIT_PT_CTL_MTC_EN |
		  (2ull << RTIT_PT_CTL_MTC_FREQ_SHIFT), false },
		{ (T & ~RTIT_PT_CTL_OS) | RTIT_PT_CTL_CR3_FILTER, false },
		{ T | (1ull << 24), false },				/* PSBFreq 4K */
	};
	for (unsigned c = 0; c < sizeof(cfg) / sizeof(cfg[0]); c++) {
		for (uint64_t seed = 1; seed <= 3; seed++) {
			gen(seed * 977 + c);
			run(&a, true, cfg[c].ctl, cfg[c].ranges, 1024);
			run(&b, false, cfg[c].ctl, cfg[c].ranges, 1024);
			cr_assert_gt(a.n, 20, "config %u seed %llu: %zu bytes", c, (unsigned long long)seed, a.n);
			cr_assert_eq(a.n, b.n, "config %u seed %llu: slow %zu bytes, fast %zu", c,
				     (unsigned long long)seed, a.n, b.n);
			cr_assert_arr_eq(a.out, b.out, a.n, "config %u seed %llu: bytes differ", c,
					 (unsigned long long)seed);
			run(&b, false, cfg[c].ctl, cfg[c].ranges, 1);
			cr_assert_arr_eq(a.out, b.out, a.n, "config %u: per-record bytes differ", c);
			run(&b, false, cfg[c].ctl, cfg[c].ranges, 7);
			cr_assert_arr_eq(a.out, b.out, a.n, "config %u: 7-record batches differ", c);
		}
	}
}
