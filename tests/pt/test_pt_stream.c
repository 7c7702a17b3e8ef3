/*
 * test_pt_stream.c - whole-stream properties on a pseudo-random workload
 * with every capability on: the bytes decode as Intel PT packets with the
 * project's decoder from the first PSB to the end, every IP payload
 * expands against LastIP (33.4.2.2; LastIP = 0 at each PSB), and batching
 * does not change the output.  Also PendPSB (33.2.8.4).
 */
#include "pt_harness.h"
#include "rtit/ip.h"

static struct px h, h2;

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static unsigned rnd(unsigned n)
{
	rng = rng * 6364136223846793005ull + 1442695040888963407ull;
	return (unsigned)((rng >> 33) % n);
}

/* A workload of @count records: branches, calls and returns, far
 * transfers with CPL/CR3/mode changes, interrupts, PTWRITE, HLT, MWAIT and
 * sleeps, around a filter range [0x1000, 0x7fff]. */
static size_t workload(struct rtit_sim_rec *recs, size_t count)
{
	uint64_t ip = 0x1000, cyc = 1000, stack[64];
	unsigned sp = 0;
	uint8_t cpl = 0, mode = 64;
	uint64_t cr3 = 0x5000;
	size_t n = 0;

	while (n < count) {
		struct rtit_sim_rec *r = &recs[n++];
		unsigned k = rnd(100);
		memset(r, 0, sizeof(*r));
		cyc += 1 + rnd(40);
		r->kind = RTIT_SIM_INSN;
		r->ip = ip;
		r->len = (uint8_t)(2 + rnd(4));
		r->cycles = cyc;
		r->tsc = cyc * 2;
		r->next_ip = ip + r->len;
		if (k < 30) {
			r->cls = RTIT_IC_COND;
			if (rnd(2)) {
				r->flags |= RTIT_SIM_F_TAKEN;
				r->next_ip = 0x1000 + 16 * rnd(0x900);
			}
		} else if (k < 42 && sp < 64) {
			r->cls = rnd(2) ? RTIT_IC_DIRECT_CALL : RTIT_IC_INDIRECT_CALL;
			r->flags |= RTIT_SIM_F_TAKEN;
			stack[sp++] = ip + r->len;
			r->next_ip = 0x1000 + 16 * rnd(0x900);
		} else if (k < 54 && sp) {
			r->cls = RTIT_IC_RET;
			r->flags |= RTIT_SIM_F_TAKEN;
			r->next_ip = rnd(8) ? stack[--sp] : 0x2000 + 16 * rnd(0x100);
		} else if (k < 62) {
			r->cls = RTIT_IC_INDIRECT_JMP;
			r->flags |= RTIT_SIM_F_TAKEN;
			r->next_ip = 0x1000 + 16 * rnd(0x1000);	/* sometimes outside */
		} else if (k < 66) {
			r->kind = RTIT_SIM_EVENT;
			r->cls = RTIT_EV_EXT_INTERRUPT;
			r->len = 0;
			r->vector = 0x20;
			r->next_ip = 0xffffffff81000000ull + 16 * rnd(0x100);
			cpl = 0;
			mode = 64;
		} else if (k < 70) {
			r->cls = rnd(2) ? RTIT_IC_SYSRET : RTIT_IC_IRET;
			r->flags |= RTIT_SIM_F_TAKEN;
			r->next_ip = 0x1000 + 16 * rnd(0x900);
			cpl = (uint8_t)(rnd(2) * 3);
			mode = rnd(4) ? 64 : 32;
		} else if (k < 73) {
			r->cls = RTIT_IC_MOV_CR3;
			cr3 = 0x5000 + 0x1000 * rnd(4);
		} else if (k < 76) {
			r->cls = RTIT_IC_PTWRITE;
			r->value = rng;
			r->vector = rnd(2) ? 4 : 8;
		} else if (k < 77) {
			r->cls = rnd(2) ? RTIT_IC_HLT : RTIT_IC_MWAIT;
			if (r->cls == RTIT_IC_MWAIT) {
				r->value = rnd(8) << 4;		/* C1-C8 */
				r->msr = rnd(2);
				r->vector = (uint8_t)(rnd(4) ? (r->value >> 4) + 1 : 0);
			}
		} else if (k < 78) {
			r->kind = RTIT_SIM_EVENT;
			r->cls = RTIT_EV_SLEEP;
			r->len = 0;
			r->vector = (uint8_t)(1 + rnd(6));
			r->next_ip = ip;
		} else if (k < 80) {
			r->kind = RTIT_SIM_EVENT;
			r->cls = RTIT_EV_WAKE;
			r->len = 0;
			r->next_ip = ip;
		} else if (k < 81) {
			r->kind = RTIT_SIM_EVENT;
			r->cls = RTIT_EV_FREQ_CHANGE;
			r->value = 10 + rnd(30);
			r->next_ip = ip;
		} else {
			r->cls = RTIT_IC_OTHER;
		}
		if (r->kind == RTIT_SIM_EVENT && r->cls != RTIT_EV_EXT_INTERRUPT)
			r->ip = ip;
		r->cpl = cpl;
		r->cr3 = cr3;
		r->mode = mode;
		ip = r->next_ip;
	}
	return n;
}

static const uint64_t CTL_ALL = PT_CTL_ON | RTIT_PT_CTL_CYC_EN | RTIT_PT_CTL_MTC_EN |
	RTIT_PT_CTL_TSC_EN | RTIT_PT_CTL_PTW_EN | RTIT_PT_CTL_FUP_ON_PTW |
	RTIT_PT_CTL_PWR_EVT_EN | RTIT_PT_CTL_EVENT_EN | (3ull << RTIT_PT_CTL_MTC_FREQ_SHIFT) |
	(2ull << RTIT_PT_CTL_CYC_THRESH_SHIFT) | (1ull << RTIT_PT_CTL_ADDR_CFG_SHIFT(0));

static void run(struct px *x, const struct rtit_sim_rec *recs, size_t n, size_t batch)
{
	px_init(x);
	x->p.buffer_bytes = 256;
	x->p.drain_num = 1;
	x->p.drain_den = 4;
	x->p.art_num = 2;
	px_start(x);
	px_msr(x, RTIT_PT_MSR_OUTPUT_BASE, x->mem_base);
	px_msr(x, RTIT_PT_MSR_OUTPUT_MASK_PTRS, 0xffff);
	px_msr(x, RTIT_PT_MSR_ADDR0_A, 0x1000);
	px_msr(x, RTIT_PT_MSR_ADDR0_B, 0x7fff);
	px_msr(x, RTIT_PT_MSR_CTL, CTL_ALL);
	for (size_t i = 0; i < n; i += batch)
		rtit_pt_model_on_batch(recs + i, n - i < batch ? n - i : batch, &x->m);
	cr_assert_eq(rtit_pt_model_finish(&x->m), 0);
}

Test(stream, decodes_and_ips_expand)
{
	static struct rtit_sim_rec recs[6000];
	size_t n = workload(recs, 6000), off = 0, pkts = 0, ips = 0;
	struct rtit_pkt_ctx ctx;
	struct rtit_last_ip lip;

	run(&h, recs, n, 512);
	cr_assert_gt(h.n, 10000);
	cr_expect_gt(h.m.stats.overflows, 0);
	cr_expect_gt(h.m.stats.psbs, 1);
	rtit_pkt_ctx_init(&ctx, RTIT_DIALECT_PT, false);
	rtit_last_ip_init(&lip, RTIT_DIALECT_PT);
	while (off < h.n) {
		struct rtit_packet p;
		const char *why = NULL;
		int k = rtit_pkt_decode(&ctx, h.out + off, h.n - off, &p, &why);
		cr_assert_gt(k, 0, "offset %zu: %s", off, why ? why : "?");
		rtit_pkt_ctx_on_packet(&ctx, &p);
		if (p.type == RTIT_PT_PSB)
			rtit_last_ip_on_psb(&lip);
		if (rtit_pkt_has_ip(p.type) && p.u.ip.ipc) {
			uint64_t ip;
			cr_assert_eq(rtit_last_ip_expand(&lip, &p.u.ip, &ip), 0, "offset %zu", off);
			rtit_last_ip_on_ip(&lip, ip);
			ips++;
		}
		off += (size_t)k;
		pkts++;
	}
	cr_expect_eq(pkts, h.m.stats.packets);
	cr_expect_gt(ips, 100);
}

Test(stream, batching_invariant)
{
	static struct rtit_sim_rec recs[3000];
	size_t n = workload(recs, 3000);

	run(&h, recs, n, 1);
	run(&h2, recs, n, 1000);
	cr_assert_eq(h.n, h2.n);
	cr_expect_arr_eq(h.out, h2.out, h.n);
}

Test(stream, pend_psb_on_enable)
{
	/* PendPSB=1 with InjectPsbPmiOnEnable: PSB+ at the next enable even
	 * though PacketByteCnt != 0 (33.2.8.4); without it, CBR only. */
	for (int inject = 0; inject < 2; inject++) {
		uint64_t ctl = PT_CTL_ON | (inject ? RTIT_PT_CTL_INJECT_PSB_PMI : 0);
		size_t n;
		px_init(&h);
		px_start(&h);
		px_single_range(&h);
		px_msr(&h, RTIT_PT_MSR_STATUS, RTIT_PT_STATUS_PEND_PSB | (100ull << 32));
		px_msr(&h, RTIT_PT_MSR_CTL, ctl);
		px_op(&h, 0x1000, 2);
		n = h.n;
		if (inject)
			cr_expect_eq(n, 35);	/* PSB, CBR, PIP, PSBEND, MODE, PGE */
		else
			cr_expect_eq(n, 4 + 2 + 3);	/* CBR, MODE, PGE */
	}
}
