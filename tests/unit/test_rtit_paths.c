/*
 * test_rtit_paths.c - the encoder's fast path (rtit_model.c fast_run)
 * gives byte-identical output to the slow path that implements Table 19
 * case by case, on random record streams that exercise the filter ranges,
 * TraceStop, CPL and CR3 changes, far transfers, cycle-accurate mode, MTC,
 * a finite buffer and overflow; and feeding records one at a time gives
 * the same bytes as feeding them in batches.
 */
#include <stdlib.h>

#include "rtit_harness.h"

#include "recgen.h"

static struct hx a, b;

static void run(struct hx *h, bool slow, uint64_t ctl, uint64_t events, size_t batch,
		uint64_t buf)
{
	hx_init(h);
	h->p.slow_path_only = slow;
	h->p.buffer_bytes = buf;
	h->p.drain_num = 1;
	h->p.drain_den = 3;
	h->cpl = 3;
	h->cr3 = 0x1000;
	hx_start(h);
	hx_msr(h, RTIT_R_MSR_LIP0, 0x1000);
	hx_msr(h, RTIT_R_MSR_LIP2, 0x1200);
	hx_msr(h, RTIT_R_MSR_LIP1, 0x1280);
	hx_msr(h, RTIT_R_MSR_LIP3, 0x12c0);
	hx_msr(h, RTIT_R_MSR_CR3_MATCH, 0x1000);
	hx_msr(h, RTIT_R_MSR_EVENTS, events);
	hx_msr(h, RTIT_R_MSR_CTL, ctl);
	for (size_t i = 0; i < N; i += batch) {
		size_t k = N - i < batch ? N - i : batch;
		if (batch == 1)
			rtit_r_model_on_rec(&h->m, &recs[i]);
		else
			rtit_r_model_on_batch(recs + i, k, &h->m);
	}
	cr_assert_eq(rtit_r_model_finish(&h->m), 0);
}

Test(paths, fast_equals_slow_and_batching_does_not_matter)
{
	static const uint64_t T = RTIT_R_CTL_TRACE_EN | RTIT_R_CTL_TRACE_ACTIVE;
	static const struct { uint64_t ctl, events, buf; } cfg[] = {
		{ T | RTIT_R_CTL_OS | RTIT_R_CTL_USER, 7 | (6 << 3), 0 },
		{ T | RTIT_R_CTL_USER | RTIT_R_CTL_CMPRS_RET, 0 | (6 << 3), 0 },
		{ T | RTIT_R_CTL_OS | RTIT_R_CTL_USER | RTIT_R_CTL_CYCLE_ACC | RTIT_R_CTL_MTC_EN, 2 | (6 << 3), 0 },
		{ T | RTIT_R_CTL_OS | RTIT_R_CTL_USER | RTIT_R_CTL_CR3EN | RTIT_R_CTL_STS_EN | RTIT_R_CTL_STS_ON_CR3, 7 | (6 << 3), 0 },
		{ T | RTIT_R_CTL_OS | RTIT_R_CTL_USER | RTIT_R_CTL_CYCLE_ACC | RTIT_R_CTL_LESS_PKTS | RTIT_R_CTL_MTC_EN, 1 | (6 << 3), 0 },
		{ T | RTIT_R_CTL_OS | RTIT_R_CTL_USER | RTIT_R_CTL_CMPRS_RET, 7 | (1 << 3), 0 },
		{ T | RTIT_R_CTL_OS | RTIT_R_CTL_USER | RTIT_R_CTL_CYCLE_ACC, 7 | (6 << 3), 48 },
		{ T | RTIT_R_CTL_OS | RTIT_R_CTL_USER | RTIT_R_CTL_MTC_EN | (2ull << 14), 7 | (6 << 3), 200 },
		{ T | RTIT_R_CTL_OS | RTIT_R_CTL_USER | RTIT_R_CTL_CYCLE_ACC | RTIT_R_CTL_MTC_EN, 7 | (6 << 3), 0 },
		{ T | RTIT_R_CTL_USER | RTIT_R_CTL_MTC_EN | RTIT_R_CTL_CMPRS_RET | RTIT_R_CTL_LESS_PKTS, 7 | (6 << 3), 0 },
	};
	for (unsigned c = 0; c < sizeof(cfg) / sizeof(cfg[0]); c++) {
		for (uint64_t seed = 1; seed <= 3; seed++) {
			gen(seed * 131 + c);
			run(&a, true, cfg[c].ctl, cfg[c].events, 1024, cfg[c].buf);
			run(&b, false, cfg[c].ctl, cfg[c].events, 1024, cfg[c].buf);
			cr_assert_gt(a.n, 20, "config %u seed %llu produced only %zu bytes", c,
				     (unsigned long long)seed, a.n);
			cr_assert_eq(a.n, b.n, "config %u seed %llu: slow %zu bytes, fast %zu", c,
				     (unsigned long long)seed, a.n, b.n);
			cr_assert_arr_eq(a.out, b.out, a.n, "config %u seed %llu: bytes differ", c,
					 (unsigned long long)seed);
			run(&b, false, cfg[c].ctl, cfg[c].events, 1, cfg[c].buf);
			cr_assert_eq(a.n, b.n, "config %u: per-record %zu bytes", c, b.n);
			cr_assert_arr_eq(a.out, b.out, a.n, "config %u: per-record bytes differ", c);
			run(&b, false, cfg[c].ctl, cfg[c].events, 7, cfg[c].buf);
			cr_assert_arr_eq(a.out, b.out, a.n, "config %u: 7-record batches differ", c);
		}
	}
}
