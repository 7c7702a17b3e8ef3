/*
 * test_record_text.c - the text ground truth (PREFIX.flow.txt) of
 * instruction records, written without printf by the flow writer, against
 * lines made here with snprintf from the format docs/formats.md gives
 * ("PREFIX.flow.txt"): 200000 random records of every class without
 * class-specific fields, every flag, numbers of every width.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtit/record.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* A number of a random width: 0, small, or up to 64 bits. */
static uint64_t rnd_width(void)
{
	unsigned bits = (unsigned)(rnd() % 65);
	return bits ? rnd() >> (64 - bits) : 0;
}

/* docs/formats.md: I IP CLASS len=LEN [T ][ZLC ]-> NEXT_IP cpl=CPL
 * cr3=0xCR3 pg=PG if=IF m=MODE cyc=CYCLES tsc=TSC[ enclave]; IP and
 * NEXT_IP 16 hex digits, CLASS padded to 8. */
static void expected(const struct rtit_sim_rec *r, char *buf, size_t size)
{
	snprintf(buf, size, "I %016" PRIx64 " %-8s len=%u %s%s-> %016" PRIx64 " cpl=%u cr3=0x%" PRIx64
		 " pg=%d if=%d m=%u cyc=%" PRIu64 " tsc=%" PRIu64 "%s\n",
		 r->ip, rtit_insn_class_name(r->cls), r->len,
		 r->flags & RTIT_SIM_F_TAKEN ? "T " : "", r->flags & RTIT_SIM_F_ZERO_LEN_CALL ? "ZLC " : "",
		 r->next_ip, r->cpl, r->cr3, !!(r->flags & RTIT_SIM_F_CR0_PG),
		 !!(r->flags & RTIT_SIM_F_IF), r->mode, r->cycles, r->tsc,
		 r->flags & RTIT_SIM_F_ENCLAVE ? " enclave" : "");
}

static const uint8_t plain_classes[] = {
	RTIT_IC_OTHER, RTIT_IC_COND, RTIT_IC_DIRECT_JMP, RTIT_IC_DIRECT_CALL,
	RTIT_IC_INDIRECT_JMP, RTIT_IC_INDIRECT_CALL, RTIT_IC_RET, RTIT_IC_FAR_JMP,
	RTIT_IC_FAR_CALL, RTIT_IC_FAR_RET, RTIT_IC_IRET, RTIT_IC_SYSCALL, RTIT_IC_SYSRET,
	RTIT_IC_SYSENTER, RTIT_IC_SYSEXIT, RTIT_IC_HLT, RTIT_IC_UIRET,
};

Test(record_text, plain_instructions_as_documented)
{
	enum { N = 200000, BATCH = 100 };
	static struct rtit_sim_rec recs[BATCH];
	char *text = NULL, want[512], got[512];
	size_t len = 0;
	FILE *txt = open_memstream(&text, &len);
	struct rtit_flow_writer w;
	cr_assert_eq(rtit_flow_writer_init(&w, NULL, txt), 0);

	uint64_t seed = rng;
	for (int i = 0; i < N; i += BATCH) {
		for (int k = 0; k < BATCH; k++) {
			struct rtit_sim_rec *r = &recs[k];
			memset(r, 0, sizeof(*r));
			r->kind = RTIT_SIM_INSN;
			r->cls = plain_classes[rnd() % sizeof(plain_classes)];
			r->ip = rnd_width();
			r->next_ip = rnd_width();
			r->cr3 = rnd_width();
			r->cycles = rnd_width();
			r->tsc = rnd_width();
			r->len = (uint8_t)(rnd() % 16);
			r->flags = (uint8_t)rnd();
			r->cpl = (uint8_t)(rnd() % 4);
			r->mode = (uint8_t)(rnd() % 3 == 0 ? 16 : rnd() % 2 ? 32 : 64);
		}
		rtit_flow_writer_on_batch(recs, BATCH, &w);
	}
	cr_assert_eq(rtit_flow_writer_fini(&w, NULL), 0);
	fclose(txt);

	/* the same records again, line by line */
	rng = seed;
	const char *p = text;
	for (int i = 0; i < N; i += BATCH) {
		for (int k = 0; k < BATCH; k++) {
			struct rtit_sim_rec r;
			memset(&r, 0, sizeof(r));
			r.kind = RTIT_SIM_INSN;
			r.cls = plain_classes[rnd() % sizeof(plain_classes)];
			r.ip = rnd_width();
			r.next_ip = rnd_width();
			r.cr3 = rnd_width();
			r.cycles = rnd_width();
			r.tsc = rnd_width();
			r.len = (uint8_t)(rnd() % 16);
			r.flags = (uint8_t)rnd();
			r.cpl = (uint8_t)(rnd() % 4);
			r.mode = (uint8_t)(rnd() % 3 == 0 ? 16 : rnd() % 2 ? 32 : 64);
			expected(&r, want, sizeof(want));
			const char *nl = strchr(p, '\n');
			cr_assert(nl, "record %d: the text ends early", i + k);
			size_t n = (size_t)(nl - p + 1);
			cr_assert_lt(n, sizeof(got));
			memcpy(got, p, n);
			got[n] = 0;
			cr_assert_str_eq(got, want, "record %d", i + k);
			/* the public formatter gives the same line */
			char one[512];
			int m = rtit_sim_rec_format(&r, one, sizeof(one));
			cr_assert_eq((size_t)m, n - 1);
			cr_assert_eq(strncmp(one, want, n - 1), 0, "record %d: %s", i + k, one);
			p = nl + 1;
		}
	}
	cr_assert_eq(*p, 0);
	free(text);
}

/* A buffer too small: snprintf's contract (the length it would have had,
 * the text cut and terminated). */
Test(record_text, small_buffer)
{
	struct rtit_sim_rec r;
	char buf[10];
	memset(&r, 0, sizeof(r));
	r.kind = RTIT_SIM_INSN;
	int n = rtit_sim_rec_format(&r, buf, sizeof(buf));
	cr_assert_gt(n, 9);
	cr_assert_str_eq(buf, "I 0000000");
}
