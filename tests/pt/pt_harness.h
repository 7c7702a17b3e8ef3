/*
 * pt_harness.h - drive the Intel PT encoder model with hand-written
 * records (no emulator) and collect its bytes; the PT twin of
 * tests/unit/rtit_harness.h.
 *
 * Expected bytes are written by hand from opcodes_pt.h's encodings
 * (SDM 33.4.2, Tables 33-16 to 33-51): TIP 0x0D, TIP.PGE 0x11, TIP.PGD 0x01, FUP 0x1D
 * with IPBytes in bits 7:5 (001b: 2 bytes, 010b: 4 bytes, 011b: 6 bytes
 * sign-extended); TNT-8 = ((1 << n) | bits) << 1; MODE 99 xx; PIP 02 43;
 * PSB 02 82 x8; PSBEND 02 23; CBR 02 03 r 00; TSC 19; TMA 02 73; MTC 59;
 * CYC xxxxx(E)11; OVF 02 F3; TraceStop 02 83.
 */
#ifndef RTIT_TEST_PT_HARNESS_H
#define RTIT_TEST_PT_HARNESS_H

#include <string.h>
#include <criterion/criterion.h>

#include "bytes_expect.h"

#include "rtit/pt_encoder.h"
#include "rtit/msr_pt.h"

struct px {
	struct rtit_pt_model m;
	struct rtit_pt_params p;
	uint8_t out[65536];
	size_t n;
	uint64_t cycles, tsc;
	uint8_t cpl, mode;
	bool ifl;		/* RFLAGS.IF of the records fed (RTIT_SIM_F_IF) */
	uint64_t cr3;
	unsigned cpi;		/* cycles (and TSC ticks) per record */
	/* guest memory for ToPA tables and regions */
	uint8_t mem[1 << 16];
	uint64_t mem_base;
	unsigned mem_writes;
	/* packet types in order (sink.on_packet) */
	enum rtit_pkt_type types[8192];
	size_t ntypes;
};

static void px_note(void *opaque, const struct rtit_enc_note *nt)
{
	struct px *h = opaque;
	if (h->ntypes < sizeof(h->types) / sizeof(h->types[0]))
		h->types[h->ntypes++] = nt->pkt->type;
}

static int px_write(void *opaque, const uint8_t *b, size_t n)
{
	struct px *h = opaque;
	cr_assert_leq(h->n + n, sizeof(h->out));
	memcpy(h->out + h->n, b, n);
	h->n += n;
	return 0;
}

static int px_write_mem(void *opaque, uint64_t phys, const uint8_t *b, size_t n)
{
	struct px *h = opaque;
	cr_assert(phys >= h->mem_base && phys + n <= h->mem_base + sizeof(h->mem),
		  "write outside guest memory at 0x%llx", (unsigned long long)phys);
	memcpy(h->mem + (phys - h->mem_base), b, n);
	h->mem_writes++;
	return 0;
}

static int px_read_mem(void *opaque, uint64_t phys, void *b, size_t n)
{
	struct px *h = opaque;
	if (phys < h->mem_base || phys + n > h->mem_base + sizeof(h->mem))
		return -1;
	memcpy(b, h->mem + (phys - h->mem_base), n);
	return 0;
}

static inline void px_init(struct px *h)
{
	memset(h, 0, sizeof(*h));
	rtit_pt_params_default(&h->p);
	h->cpi = 1;
	h->mode = 64;
	h->mem_base = 0x100000;
}

/* Starts the model (after adjusting h->p). */
static inline void px_start(struct px *h)
{
	struct rtit_enc_sink s = { .write = px_write, .write_mem = px_write_mem,
				   .on_packet = px_note, .opaque = h };
	cr_assert_eq(rtit_pt_model_init(&h->m, &h->p, &s), 0);
	rtit_pt_model_set_platform(&h->m, h->cpl, h->cr3, h->mode);
	rtit_pt_model_set_if(&h->m, h->ifl);
	rtit_pt_model_set_mem(&h->m, px_read_mem, h);
}

static inline int px_wr(struct px *h, uint32_t msr, uint64_t v)
{
	return rtit_pt_model_msr_write(&h->m, msr, v, NULL);
}

/* A debugger's write (before the run or between records). */
static inline void px_msr(struct px *h, uint32_t msr, uint64_t v)
{
	cr_assert_eq(px_wr(h, msr, v), 0, "MSR 0x%x = 0x%llx", msr, (unsigned long long)v);
}

static inline struct rtit_sim_rec px_rec(struct px *h, uint8_t kind, uint8_t cls, uint64_t ip,
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
	r.flags = (uint8_t)((taken ? RTIT_SIM_F_TAKEN : 0) | RTIT_SIM_F_CR0_PG |
			    (h->ifl ? RTIT_SIM_F_IF : 0));
	r.cpl = h->cpl;
	r.cr3 = h->cr3;
	r.mode = h->mode;
	r.cycles = h->cycles;
	r.tsc = h->tsc;
	return r;
}

/* The next record retires at core cycle @c (and TSC @c). */
static inline void px_at(struct px *h, uint64_t c)
{
	h->cycles = c - h->cpi;
	h->tsc = c - h->cpi;
}

static inline void px_feed(struct px *h, const struct rtit_sim_rec *r)
{
	rtit_pt_model_on_rec(&h->m, r);
}

/* An instruction of class @cls at @ip, @len bytes, going to @next. */
static inline void px_insn(struct px *h, uint8_t cls, uint64_t ip, uint8_t len, uint64_t next,
			   bool taken)
{
	struct rtit_sim_rec r = px_rec(h, RTIT_SIM_INSN, cls, ip, len, taken ? next : ip + len, taken);
	px_feed(h, &r);
}

static inline void px_op(struct px *h, uint64_t ip, uint8_t len)
{
	px_insn(h, RTIT_IC_OTHER, ip, len, ip + len, false);
}

static inline void px_event(struct px *h, uint8_t ev, uint64_t ip, uint64_t next, uint8_t vector)
{
	struct rtit_sim_rec r = px_rec(h, RTIT_SIM_EVENT, ev, ip, 0, next, true);
	r.vector = vector;
	px_feed(h, &r);
}

/* A WRMSR instruction at @ip writing @v to @msr (the callback comes first,
 * as the simulator calls it while executing).  Returns the callback's
 * result. */
static inline int px_wrmsr(struct px *h, uint64_t ip, uint32_t msr, uint64_t v)
{
	struct rtit_sim_rec r = px_rec(h, RTIT_SIM_INSN, RTIT_IC_WRMSR, ip, 2, ip + 2, false);
	int ret;
	r.msr = msr;
	r.value = v;
	ret = rtit_pt_model_msr_write(&h->m, msr, v, &r);
	px_feed(h, &r);
	return ret;
}

static inline void px_check(const struct px *h, size_t from, const uint8_t *want, size_t n,
			    const char *where, int line)
{
	bytes_expect_check(h->out + from, h->n - from, want, n, where, line);
}

/* Asserts the bytes written since @from equal the arguments. */
#define px_expect(h, from, ...) do { \
	const uint8_t w_[] = { 0, ##__VA_ARGS__ }; \
	px_check((h), (from), w_ + 1, sizeof(w_) - 1, __func__, __LINE__); \
	} while (0)

/* A 64 KiB single-range output region over the harness memory
 * (33.2.7.1). */
static inline void px_single_range(struct px *h)
{
	px_msr(h, RTIT_PT_MSR_OUTPUT_BASE, h->mem_base);
	px_msr(h, RTIT_PT_MSR_OUTPUT_MASK_PTRS, 0xffff);
}

#define PT_CTL_ON (RTIT_PT_CTL_TRACE_EN | RTIT_PT_CTL_OS | RTIT_PT_CTL_USER | RTIT_PT_CTL_BRANCH_EN)

#define PT_PSB 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, \
	       0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82
#define PT_PSBEND 0x02, 0x23
#define PT_CBR(r) 0x02, 0x03, (r), 0x00
#define PT_MODE64 0x99, 0x01
#define PT_MODE32 0x99, 0x02
#define PT_OVF 0x02, 0xf3
#define PT_STOP 0x02, 0x83

#endif
