/*
 * sim_test.h - helpers for the simulator tests: run an assembly program,
 * collect its records, and print them in a short form written with the
 * program's own labels, so that expected flows can be written by hand:
 *
 *   b cond T -> b          a taken conditional branch at label b
 *   c cond -> c2           not taken
 *   d call T Z -> d2       zero-length call
 *   e int T v128 -> h_128  INT 0x80
 *   a other                a non-branch instruction
 *   ! exception 14 fault c -> h_14
 *
 * State suffixes: " cpl3" when CPL is 3, " cr3=0x.." when CR3 is not 0,
 * " val=0x.." for PTWRITE.  Handlers are the symbols h_<vector>.
 */
#ifndef RTIT_SIM_TEST_H
#define RTIT_SIM_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtit/sim.h"

#define ST_MAX_SYMS 256
#define ST_BASE 0x401000ull

struct st_run {
	struct rtit_sim_rec *recs;
	size_t n, cap;
	struct rtit_sim_status st;
	int rc;
	char err[256];
	char *sym_name[ST_MAX_SYMS];
	uint64_t sym_val[ST_MAX_SYMS];
	int nsyms;
	char text[16384];	/* the short form, one line per record */
};

struct st_event {
	int trigger;		/* RTIT_SIM_AT_INSN / AT_IP */
	int kind;
	int vector;
	uint64_t at;		/* count, or 0 with at_sym */
	const char *at_sym;
	uint64_t value;
	uint32_t msr;
	uint64_t duration;
};

struct st_opts {
	int mode;		/* 0 = 64 */
	int deliver;
	uint64_t budget;
	int cpl;
	uint64_t rsp0;
	const char *end_sym;
	struct st_event ev[8];
	int nev;
	struct rtit_sim_consumer *extra;	/* msr hooks */
	struct rtit_sim_clock *clock;
	bool imprecise;
	bool rtm;		/* RTM on; rtm_lines: its write-set capacity */
	uint32_t rtm_lines;
	bool sgx;		/* SGX on, with the enclaves encl[0..nencl) */
	struct st_encl {
		const char *base, *tcs;	/* labels */
		uint64_t size, oentry;
		uint32_t nssa;
		bool debug;
	} encl[2];
	int nencl;
	/* called after the run, before the simulator is freed */
	void (*before)(struct rtit_sim *sim, void *ctx);	/* after loading */
	void (*after)(struct rtit_sim *sim, void *ctx);
	void *after_ctx;
};

static inline void st_on_batch(const struct rtit_sim_rec *recs, size_t n,
			       void *opaque)
{
	struct st_run *r = opaque;
	if (r->n + n > r->cap) {
		r->cap = (r->n + n) * 2 + 64;
		r->recs = realloc(r->recs, r->cap * sizeof(*r->recs));
	}
	memcpy(r->recs + r->n, recs, n * sizeof(*recs));
	r->n += n;
}

static inline void st_addr(const struct st_run *r, uint64_t a, char *buf,
			   size_t size)
{
	int best = -1;
	for (int i = 0; i < r->nsyms; i++) {
		if (r->sym_val[i] > a)
			continue;
		if (best < 0 || r->sym_val[i] > r->sym_val[best] ||
		    (r->sym_val[i] == r->sym_val[best] &&
		     strcmp(r->sym_name[i], r->sym_name[best]) < 0 &&
		     strcmp(r->sym_name[i], "_start")))
			best = i;
	}
	if (best >= 0 && a - r->sym_val[best] < 64) {
		if (a == r->sym_val[best])
			snprintf(buf, size, "%s", r->sym_name[best]);
		else
			snprintf(buf, size, "%s+%" PRIu64, r->sym_name[best],
				 a - r->sym_val[best]);
	} else {
		snprintf(buf, size, "0x%" PRIx64, a);
	}
}

static inline void st_short(const struct st_run *r,
			    const struct rtit_sim_rec *x, char *buf, size_t size)
{
	char ip[64], nx[64], sfx[96] = "";
	st_addr(r, x->ip, ip, sizeof(ip));
	st_addr(r, x->next_ip, nx, sizeof(nx));
	size_t o = 0;
	if (x->cpl == 3)
		o += (size_t)snprintf(sfx + o, sizeof(sfx) - o, " cpl3");
	if (x->cr3)
		o += (size_t)snprintf(sfx + o, sizeof(sfx) - o, " cr3=0x%" PRIx64, x->cr3);
	if (x->flags & RTIT_SIM_F_ENCLAVE)
		o += (size_t)snprintf(sfx + o, sizeof(sfx) - o, " encl");
	if (x->kind == RTIT_SIM_INSN && x->cls == RTIT_IC_PTWRITE)
		snprintf(sfx + o, sizeof(sfx) - o, " val=0x%" PRIx64, x->value);
	if (x->kind == RTIT_SIM_EVENT) {
		char v[32] = "";
		if (x->cls == RTIT_EV_EXCEPTION)
			snprintf(v, sizeof(v), " %u%s", x->vector,
				 (x->flags & RTIT_SIM_F_FAULT) ? " fault" : "");
		else if (x->cls == RTIT_EV_EXT_INTERRUPT)
			snprintf(v, sizeof(v), " %u", x->vector);
		else if (x->cls == RTIT_EV_AEX)
			snprintf(v, sizeof(v), " %u%s", x->vector,
				 (x->flags & RTIT_SIM_F_FAULT) ? " fault" : "");
		snprintf(buf, size, "! %s%s %s -> %s%s",
			 rtit_sim_event_name(x->cls), v, ip, nx, sfx);
		return;
	}
	switch (x->cls) {
	case RTIT_IC_OTHER: case RTIT_IC_MOV_CR3: case RTIT_IC_MOV_CR0:
	case RTIT_IC_WRMSR: case RTIT_IC_RDMSR: case RTIT_IC_HLT:
	case RTIT_IC_PTWRITE: case RTIT_IC_MWAIT:
		snprintf(buf, size, "%s %s%s", ip, rtit_insn_class_name(x->cls), sfx);
		return;
	default:
		break;
	}
	char v[16] = "";
	if (x->cls == RTIT_IC_INT)
		snprintf(v, sizeof(v), " v%u", x->vector);
	snprintf(buf, size, "%s %s%s%s%s -> %s%s", ip,
		 rtit_insn_class_name(x->cls),
		 (x->flags & RTIT_SIM_F_TAKEN) ? " T" : "",
		 (x->flags & RTIT_SIM_F_ZERO_LEN_CALL) ? " Z" : "", v, nx, sfx);
}

/* Assembles src at ST_BASE, runs it, fills r (text = short form).
 * Returns the load error (< 0) or 0. */
static inline int st_run_asm(struct st_run *r, const char *src,
			     const struct st_opts *o)
{
	static const struct st_opts none;
	if (!o)
		o = &none;
	memset(r, 0, sizeof(*r));
	struct rtit_sim_config cfg;
	rtit_sim_config_default(&cfg);
	cfg.mode = o->mode ? o->mode : 64;
	cfg.deliver = o->deliver;
	cfg.cpl = o->cpl;
	cfg.rsp0 = o->rsp0;
	if (o->budget)
		cfg.budget = o->budget;
	if (o->clock)
		cfg.clock = *o->clock;
	if (o->imprecise)
		cfg.precise_faults = false;
	cfg.rtm = o->rtm;
	cfg.rtm_lines = o->rtm_lines;
	cfg.sgx = o->sgx;
	if (o->extra)
		cfg.consumer = *o->extra;
	cfg.consumer.on_batch = st_on_batch;
	cfg.consumer.opaque = r;
	struct rtit_sim *sim;
	int rc = rtit_sim_new(&sim, &cfg);
	if (rc < 0)
		return rc;
	rc = rtit_sim_load_asm(sim, src, ST_BASE, "test.s", 0);
	if (rc < 0) {
		snprintf(r->err, sizeof(r->err), "%s", rtit_sim_errmsg(sim));
		rtit_sim_free(sim);
		return rc;
	}
	/* collect labels: every symbol of the program */
	static const char *const names[] = {
		"a", "a2", "b", "b2", "c", "c2", "d", "d2", "d3", "e",
		"e2", "e3", "e4", "f", "f2", "g", "h", "h2", "h3", "i", "j", "j2",
		"k", "k2", "l", "l2", "m", "n", "p", "q", "x", "y", "z", "end",
		"kstack", "fb", "fb2", "encl", "tcs", "aep", NULL
	};
	for (int i = 0; names[i] && r->nsyms < ST_MAX_SYMS; i++) {
		uint64_t v;
		if (rtit_sim_symbol(sim, names[i], &v) == 0) {
			r->sym_name[r->nsyms] = (char *)names[i];
			r->sym_val[r->nsyms++] = v;
		}
	}
	static char hnames[256][8];
	for (int v = 0; v < 256; v++) {
		uint64_t a;
		snprintf(hnames[v], sizeof(hnames[v]), "h_%d", v);
		if (rtit_sim_symbol(sim, hnames[v], &a) == 0) {
			rtit_sim_set_handler(sim, (unsigned)v, a);
			r->sym_name[r->nsyms] = hnames[v];
			r->sym_val[r->nsyms++] = a;
		}
	}
	for (int i = 0; i < o->nencl; i++) {
		struct rtit_sim_enclave e = { .size = o->encl[i].size, .oentry = o->encl[i].oentry,
					      .nssa = o->encl[i].nssa, .debug = o->encl[i].debug };
		if (rtit_sim_symbol(sim, o->encl[i].base, &e.base) < 0 ||
		    rtit_sim_symbol(sim, o->encl[i].tcs, &e.tcs) < 0 ||
		    (rc = rtit_sim_add_enclave(sim, &e)) < 0) {
			snprintf(r->err, sizeof(r->err), "enclave: %s", rtit_sim_errmsg(sim));
			rtit_sim_free(sim);
			return rc < 0 ? rc : -RTIT_ERR_INVALID;
		}
	}
	if (o->end_sym) {
		uint64_t v;
		if (rtit_sim_symbol(sim, o->end_sym, &v) == 0)
			rtit_sim_set_end(sim, v);
	}
	for (int i = 0; i < o->nev; i++) {
		struct rtit_sim_inject ev = {0};
		ev.trigger = (uint8_t)o->ev[i].trigger;
		ev.kind = (uint8_t)o->ev[i].kind;
		ev.vector = (uint8_t)o->ev[i].vector;
		ev.at = o->ev[i].at;
		if (o->ev[i].at_sym)
			rtit_sim_symbol(sim, o->ev[i].at_sym, &ev.at);
		ev.value = o->ev[i].value;
		ev.msr = o->ev[i].msr;
		ev.duration = o->ev[i].duration;
		rtit_sim_inject(sim, &ev);
	}
	if (o->before)
		o->before(sim, o->after_ctx);
	r->rc = rtit_sim_run(sim, &r->st);
	if (o->after)
		o->after(sim, o->after_ctx);
	rtit_sim_free(sim);
	size_t off = 0;
	for (size_t i = 0; i < r->n && off + 200 < sizeof(r->text); i++) {
		char line[192];
		st_short(r, &r->recs[i], line, sizeof(line));
		off += (size_t)snprintf(r->text + off, sizeof(r->text) - off,
					"%s\n", line);
	}
	return 0;
}

/* The nth record (from 0) of kind and class, or NULL. */
static inline const struct rtit_sim_rec *st_find(const struct st_run *r, int kind, int cls,
						 int nth)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->recs[i].kind == kind && r->recs[i].cls == cls && !nth--)
			return &r->recs[i];
	return NULL;
}

/* The short form of t->r against expect, both printed on a mismatch. */
#define ST_EXPECT_TEXT(t, expect)                                                     \
	cr_expect_str_eq((t)->r.text, expect, "\n--- expected\n%s--- got\n%s(%s)", expect, \
			 (t)->r.text, (t)->r.st.msg)

static inline void st_free(struct st_run *r)
{
	free(r->recs);
	r->recs = NULL;
}

#endif /* RTIT_SIM_TEST_H */
