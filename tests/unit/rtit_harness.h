/*
 * rtit_harness.h - drive the RTIT encoder model with hand-written records
 * (no emulator) and collect its bytes.
 */
#ifndef RTIT_TEST_RTIT_HARNESS_H
#define RTIT_TEST_RTIT_HARNESS_H

#include <string.h>
#include <criterion/criterion.h>

#include "bytes_expect.h"

#include "rtit/rtit_encoder.h"
#include "rtit/msr_rtit.h"

struct hx {
	struct rtit_r_model m;
	struct rtit_r_params p;
	uint8_t out[65536];
	size_t n;
	uint64_t cycles, tsc;
	uint8_t cpl;
	uint64_t cr3;
	unsigned cpi;		/* cycles per record */
};

static int hx_write(void *opaque, const uint8_t *b, size_t n)
{
	struct hx *h = opaque;
	cr_assert_leq(h->n + n, sizeof(h->out));
	memcpy(h->out + h->n, b, n);
	h->n += n;
	return 0;
}

static inline void hx_init(struct hx *h)
{
	memset(h, 0, sizeof(*h));
	rtit_r_params_default(&h->p);
	h->cpi = 1;
}

/* Starts the model with @p (call after adjusting h->p). */
static inline void hx_start(struct hx *h)
{
	struct rtit_enc_sink s = { .write = hx_write, .opaque = h };
	uint64_t v;
	cr_assert_eq(rtit_r_model_init(&h->m, &h->p, &s), 0);
	rtit_r_model_set_platform(&h->m, h->cpl, h->cr3, true);
	/* 3.3.1: RTIT_CTL must be read before anything else. */
	cr_assert_eq(rtit_r_model_msr_read(&h->m, RTIT_R_MSR_CTL, &v, NULL), 0);
}

/* A debugger's write before the run (or between records with rec NULL). */
static inline void hx_msr(struct hx *h, uint32_t msr, uint64_t v)
{
	cr_assert_eq(rtit_r_model_msr_write(&h->m, msr, v, NULL), 0, "MSR 0x%x = 0x%llx", msr,
		     (unsigned long long)v);
}

static inline struct rtit_sim_rec hx_rec(struct hx *h, uint8_t kind, uint8_t cls, uint64_t ip,
					 uint8_t len, uint64_t next, bool taken)
{
	struct rtit_sim_rec r;
	memset(&r, 0, sizeof(r));
	h->cycles += h->cpi;
	h->tsc += h->cpi;
	r.kind = kind;
	r.cls = cls;
	r.ip = ip;
	r.len = len;
	r.next_ip = next;
	r.flags = (uint8_t)((taken ? RTIT_SIM_F_TAKEN : 0) | RTIT_SIM_F_CR0_PG);
	r.cpl = h->cpl;
	r.cr3 = h->cr3;
	r.mode = 64;
	r.cycles = h->cycles;
	r.tsc = h->tsc;
	return r;
}

/* An instruction of class @cls at @ip, @len bytes, going to @next. */
static inline void hx_insn(struct hx *h, uint8_t cls, uint64_t ip, uint8_t len, uint64_t next,
			   bool taken)
{
	struct rtit_sim_rec r = hx_rec(h, RTIT_SIM_INSN, cls, ip, len, taken ? next : ip + len, taken);
	rtit_r_model_on_rec(&h->m, &r);
}

static inline void hx_op(struct hx *h, uint64_t ip, uint8_t len)
{
	hx_insn(h, RTIT_IC_OTHER, ip, len, ip + len, false);
}

static inline void hx_event(struct hx *h, uint8_t ev, uint64_t ip, uint64_t next, uint8_t flags)
{
	struct rtit_sim_rec r = hx_rec(h, RTIT_SIM_EVENT, ev, ip, 0, next, true);
	r.flags |= flags;
	rtit_r_model_on_rec(&h->m, &r);
}

static inline void hx_check(const struct hx *h, size_t from, const uint8_t *want, size_t n,
			    const char *where, int line)
{
	bytes_expect_check(h->out + from, h->n - from, want, n, where, line);
}

/* Asserts the bytes written since @from equal the arguments. */
#define hx_expect(h, from, ...) do { \
	const uint8_t w_[] = { 0, ##__VA_ARGS__ }; \
	hx_check((h), (from), w_ + 1, sizeof(w_) - 1, __func__, __LINE__); \
	} while (0)

#define PSB_BYTES 0xc0, 0, 0, 0, 0, 0, 0, 0, 0

#endif
