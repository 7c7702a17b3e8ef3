/*
 * test_cmp_traced.c - the comparator's check of skipped traced
 * instructions (rtit_flow_cmp_traced, include/rtit/flow.h; D165), on a
 * hand-made truth: between two segments the trace may skip only
 * instructions that ran with PacketEn = 0, unless an error, resync,
 * overflow or uncertain drop came between, or the instruction is the one
 * a disable's FUP names (SDM Table 33-56 cases 5-8: FUP(CLIP), TIP.PGD).
 */
#include <stdio.h>
#include <string.h>

#include "rtit/flow.h"
#include "rtit/record.h"

static struct rtit_sim_rec insn(uint64_t ip)
{
	struct rtit_sim_rec r;
	memset(&r, 0, sizeof(r));
	r.kind = RTIT_SIM_INSN;
	r.cls = RTIT_IC_OTHER;
	r.ip = ip;
	r.len = 2;
	r.next_ip = ip + 2;
	return r;
}

/* The truth: 0x1000 0x1002 0x1004 0x1006 0x1008, PacketEn before each as
 * @pe; decoded: 0x1000, the notes @k1/@k2 (k1 at @ip1), then 0x1006,
 * 0x1008.  Whether the comparison passes. */
static int run(const uint8_t *pe, int k1, uint64_t ip1, int k2)
{
	struct rtit_sim_rec t[5], d[3];
	struct rtit_flow_cmp *c;
	struct rtit_flow_cmp_result res;
	for (int i = 0; i < 5; i++)
		t[i] = insn(0x1000 + 2 * (uint64_t)i);
	d[0] = t[0], d[1] = t[3], d[2] = t[4];
	if (rtit_flow_cmp_new(&c, t, 5) < 0)
		return -1;
	if (pe)
		rtit_flow_cmp_traced(c, pe);
	struct rtit_flow_note n1 = { .kind = RTIT_FLOW_N_ENABLE, .ip = 0x1000 };
	rtit_flow_cmp_note(c, &n1);
	rtit_flow_cmp_feed(c, d, NULL, 1);
	struct rtit_flow_note a = { .kind = k1, .ip = ip1 }, b = { .kind = k2, .ip = 0x1006 };
	rtit_flow_cmp_note(c, &a);
	rtit_flow_cmp_note(c, &b);
	rtit_flow_cmp_feed(c, d + 1, NULL, 2);
	bool ok = rtit_flow_cmp_finish(c, &res);
	rtit_flow_cmp_free(c);
	return ok;
}

int main(void)
{
	static const uint8_t on[5] = { 1, 1, 1, 1, 1 }, gap[5] = { 1, 0, 0, 1, 1 };
	static const uint8_t first_on[5] = { 1, 1, 0, 1, 1 };
	struct {
		const char *what;
		const uint8_t *pe;
		int k1;
		uint64_t ip1;
		int k2, want;
	} c[] = {
		{ "no PacketEn given: any skip", NULL, RTIT_FLOW_N_DISABLE, 0x1002, RTIT_FLOW_N_ENABLE, 1 },
		{ "untraced skipped after a disable", gap, RTIT_FLOW_N_DISABLE, 0x1002, RTIT_FLOW_N_ENABLE, 1 },
		{ "traced skipped after a disable elsewhere", on, RTIT_FLOW_N_DISABLE, 0x1004, RTIT_FLOW_N_ENABLE, 0 },
		{ "the disable's own IP, then a traced one", first_on, RTIT_FLOW_N_DISABLE, 0x1002, RTIT_FLOW_N_ENABLE, 1 },
		{ "traced skipped after an error", on, RTIT_FLOW_N_ERROR, 0x1004, RTIT_FLOW_N_RESYNC, 1 },
		{ "traced skipped after an overflow", on, RTIT_FLOW_N_OVERFLOW, 0x1006, RTIT_FLOW_N_ENABLE, 1 },
		{ "traced skipped after an uncertain drop", on, RTIT_FLOW_N_UNCERTAIN, 0x1002, RTIT_FLOW_N_ENABLE, 1 },
		{ "traced skipped after a TraceSTOP", on, RTIT_FLOW_N_TRACESTOP, 0x1002, RTIT_FLOW_N_ENABLE, 0 },
	};
	int fails = 0;
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		int r = run(c[i].pe, c[i].k1, c[i].ip1, c[i].k2);
		printf("%s %s: %s (want %s)\n", r == c[i].want ? "ok  " : "FAIL", c[i].what,
		       r ? "passes" : "a mismatch", c[i].want ? "passes" : "a mismatch");
		fails += r != c[i].want;
	}
	return fails != 0;
}
