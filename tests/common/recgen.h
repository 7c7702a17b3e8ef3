/*
 * recgen.h - random, well-formed record streams for the encoder models'
 * path-equivalence tests: ordinary instructions, conditional branches,
 * calls and returns (kept and broken), indirect and direct jumps, SYSCALL
 * and SYSRET changing the CPL, MOV CR3, interrupts and far jumps, with
 * targets around 0x1000-0x1400 so that filter ranges there are crossed.
 */
#ifndef RTIT_TEST_RECGEN_H
#define RTIT_TEST_RECGEN_H

#include <string.h>
#include "rtit/sim.h"

static uint64_t rs;
static uint32_t rnd(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return (uint32_t)(rs >> 16);
}

enum { N = 20000 };
static struct rtit_sim_rec recs[N];

static void gen(uint64_t seed)
{
	uint64_t ip = 0x1000, cyc = 0, stack[32];
	int sp = 0;
	uint8_t cpl = 3;
	uint64_t cr3 = 0x1000;

	rs = seed * 0x9e3779b97f4a7c15ull + 1;
	for (int i = 0; i < N; i++) {
		struct rtit_sim_rec *r = &recs[i];
		uint32_t x = rnd();
		memset(r, 0, sizeof(*r));
		r->kind = RTIT_SIM_INSN;
		r->ip = ip;
		r->len = (uint8_t)(1 + x % 6);
		r->flags = RTIT_SIM_F_CR0_PG;
		r->mode = 64;
		cyc += 1 + (x >> 4) % 7;
		r->cycles = cyc;
		r->tsc = cyc * 2;
		uint64_t nlip = ip + r->len;
		uint64_t tgt = 0x0f00 + (rnd() % 0x400);	/* around the ranges */
		unsigned k = (x >> 8) % 100;
		r->next_ip = nlip;
		if (k < 54) {
			r->cls = RTIT_IC_OTHER;
		} else if (k < 55) {
			/* MWAIT: C1-C8 or, with the monitor not armed, none;
			 * the next record is its wake */
			r->cls = RTIT_IC_MWAIT;
			r->value = ((x >> 16) & 7) << 4;
			r->msr = x & 1;
			r->vector = (uint8_t)((x & 16) ? 0 : ((x >> 16) & 7) + 1);
		} else if (k < 72) {
			r->cls = RTIT_IC_COND;
			if (x & 1) {
				r->flags |= RTIT_SIM_F_TAKEN;
				r->next_ip = tgt;
			}
		} else if (k < 78 && sp < 32) {
			r->cls = RTIT_IC_DIRECT_CALL;
			r->flags |= RTIT_SIM_F_TAKEN;
			stack[sp++] = nlip;
			r->next_ip = tgt;
		} else if (k < 84 && sp) {
			r->cls = RTIT_IC_RET;
			r->flags |= RTIT_SIM_F_TAKEN;
			r->next_ip = (x & 2) ? stack[--sp] : tgt;
		} else if (k < 89) {
			r->cls = (x & 4) ? RTIT_IC_INDIRECT_JMP : RTIT_IC_INDIRECT_CALL;
			r->flags |= RTIT_SIM_F_TAKEN;
			r->next_ip = tgt;
		} else if (k < 92) {
			r->cls = RTIT_IC_DIRECT_JMP;
			r->flags |= RTIT_SIM_F_TAKEN;
			r->next_ip = tgt;
		} else if (k < 94) {
			r->cls = RTIT_IC_SYSCALL;
			r->flags |= RTIT_SIM_F_TAKEN;
			r->next_ip = tgt;
			cpl = 0;
		} else if (k < 96) {
			r->cls = RTIT_IC_SYSRET;
			r->flags |= RTIT_SIM_F_TAKEN;
			r->next_ip = tgt;
			cpl = 3;
		} else if (k < 97) {
			r->cls = RTIT_IC_MOV_CR3;
			cr3 = (x & 8) ? 0x1000 : 0x2000;
		} else if (k < 98) {
			r->kind = RTIT_SIM_EVENT;
			r->cls = RTIT_EV_EXT_INTERRUPT;
			r->len = 0;
			r->ip = ip;
			r->next_ip = tgt;
			r->flags |= RTIT_SIM_F_TAKEN;
		} else {
			r->cls = RTIT_IC_FAR_JMP;
			r->flags |= RTIT_SIM_F_TAKEN;
			r->next_ip = tgt;
		}
		r->cpl = cpl;
		r->cr3 = cr3;
		ip = r->next_ip;
	}
}


#endif
