/*
 * test_record_text.c - the text ground truth (PREFIX.flow.txt) of
 * instruction records, written without printf by the flow writer, against
 * lines made here with snprintf from the format docs/formats.md gives
 * ("PREFIX.flow.txt"): 200000 random records of every class without
 * class-specific fields, every flag, numbers of every width.
 */
#include <criterion/criterion.h>
#include <errno.h>
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

/* The TSC equal to the cycle count (a run without a TSC ratio: every
 * line), against snprintf: the digits written once and copied (D138). */
Test(record_text, tsc_equal_to_cycles)
{
	char *text = NULL, want[512];
	size_t len = 0;
	FILE *txt = open_memstream(&text, &len);
	struct rtit_flow_writer w;
	cr_assert_eq(rtit_flow_writer_init(&w, NULL, txt), 0);
	static const uint64_t v[] = { 0, 9, 10, 99, 100, 12345678, 99999999, 100000000,
				      100000001, 1234567890123ull, 18446744073709551615ull };
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		struct rtit_sim_rec r;
		memset(&r, 0, sizeof(r));
		r.kind = RTIT_SIM_INSN;
		r.cycles = r.tsc = v[i];
		rtit_flow_writer_on_batch(&r, 1, &w);
	}
	cr_assert_eq(rtit_flow_writer_fini(&w, NULL), 0);
	fclose(txt);
	const char *p = text;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		struct rtit_sim_rec r;
		memset(&r, 0, sizeof(r));
		r.kind = RTIT_SIM_INSN;
		r.cycles = r.tsc = v[i];
		expected(&r, want, sizeof(want));
		cr_assert_eq(strncmp(p, want, strlen(want)), 0, "%" PRIu64 ": %.120s", v[i], p);
		p += strlen(want);
	}
	cr_assert_eq(*p, 0);
	free(text);
}

/* Every decimal width's edges (10^k - 1, 10^k, 10^k + 1, k = 1..19, and
 * 2^64 - 1) in the cycles and the TSC (apart and equal), small numbers of
 * every byte value in len, cpl and mode, and a class past the names,
 * against snprintf: the digits counted from the bit length and made 8 at a
 * time (D186) get each width's first and last number right. */
Test(record_text, decimal_edges)
{
	uint64_t v[64];
	size_t nv = 0;
	v[nv++] = 0;
	for (uint64_t p = 10, k = 1; k <= 19; k++, p *= 10) {
		v[nv++] = p - 1;
		v[nv++] = p;
		v[nv++] = p + 1;
	}
	v[nv++] = UINT64_MAX;
	v[nv++] = UINT64_MAX - 1;
	char *text = NULL, want[512];
	size_t len = 0;
	FILE *txt = open_memstream(&text, &len);
	struct rtit_flow_writer w;
	cr_assert_eq(rtit_flow_writer_init(&w, NULL, txt), 0);
	struct rtit_sim_rec recs[2 * 64 * 64 + 256];
	size_t n = 0;
	for (size_t i = 0; i < nv; i++)
		for (size_t j = 0; j < nv; j++) {
			struct rtit_sim_rec *r = &recs[n++];
			memset(r, 0, sizeof(*r));
			r->kind = RTIT_SIM_INSN;
			r->cycles = v[i];
			r->tsc = v[j];
			r->cr3 = v[j];
			r->mode = 64;
		}
	for (unsigned b = 0; b < 256; b++) {
		struct rtit_sim_rec *r = &recs[n++];
		memset(r, 0, sizeof(*r));
		r->kind = RTIT_SIM_INSN;
		r->cls = b % 2 ? RTIT_IC_COUNT : RTIT_IC_COND;	/* "?", padded */
		r->len = r->cpl = r->mode = (uint8_t)b;
		r->cycles = r->tsc = b;
	}
	rtit_flow_writer_on_batch(recs, n, &w);
	cr_assert_eq(rtit_flow_writer_fini(&w, NULL), 0);
	fclose(txt);
	const char *p = text;
	for (size_t i = 0; i < n; i++) {
		expected(&recs[i], want, sizeof(want));
		cr_assert_eq(strncmp(p, want, strlen(want)), 0, "record %zu: %.200s\nwant %s", i, p,
			     want);
		p += strlen(want);
	}
	cr_assert_eq(*p, 0);
	free(text);
}

/* Random records of every kind: instructions with and without
 * class-specific fields, events of every kind. */
static void random_records(struct rtit_sim_rec *recs, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		struct rtit_sim_rec *r = &recs[k];
		memset(r, 0, sizeof(*r));
		r->kind = rnd() % 8 ? RTIT_SIM_INSN : RTIT_SIM_EVENT;
		r->cls = (uint8_t)(rnd() % (r->kind == RTIT_SIM_INSN ? RTIT_IC_COUNT : RTIT_EV_COUNT));
		r->ip = rnd_width();
		r->next_ip = rnd_width();
		r->cr3 = rnd_width();
		r->cycles = rnd_width();
		r->tsc = rnd() % 2 ? r->cycles : rnd_width();
		r->value = rnd_width();
		r->msr = (uint32_t)rnd();
		r->len = (uint8_t)(rnd() % 16);
		r->flags = (uint8_t)rnd();
		r->cpl = (uint8_t)(rnd() % 4);
		r->mode = 64;
		r->vector = (uint8_t)rnd();
	}
}

/* Writes N random records (batches of random sizes) with or without the
 * writer thread; the bytes of both files, the digest and the status. */
static int write_all(bool async, size_t N, char **bin, size_t *nbin, char **txt, size_t *ntxt,
		     uint64_t *digest)
{
	static struct rtit_sim_rec recs[3000];
	FILE *fb = open_memstream(bin, nbin), *ft = open_memstream(txt, ntxt);
	struct rtit_flow_writer w;
	int r = async ? rtit_flow_writer_init_async(&w, fb, ft) : rtit_flow_writer_init(&w, fb, ft);
	cr_assert_eq(r, 0);
	rng = 0x1234567;
	for (size_t i = 0; i < N;) {
		size_t k = 1 + rnd() % 3000;
		if (k > N - i)
			k = N - i;
		random_records(recs, k);
		rtit_flow_writer_on_batch(recs, k, &w);
		i += k;
	}
	r = rtit_flow_writer_fini(&w, digest);
	cr_assert_eq(w.count, N);
	fclose(fb);
	fclose(ft);
	return r;
}

/* The writer thread changes nothing: the same binary file, text and
 * digest as the writer without one, over many chunks (512 records), the
 * ring's end (64 chunks, 32768 records; the thread takes at most 32 at
 * once) passed several times, and for a last chunk that is not full
 * (D138, D160); the text through the output thread's four 512 KiB
 * buffers (D187), in order, passed round many times (250,000 records make
 * 34 MB), the last one partly full. */
Test(record_text, writer_thread_same_bytes)
{
	static const size_t sizes[] = { 0, 1, 511, 512, 513, 16384, 16385, 32767, 32768,
					32769, 40001, 100000, 250000 };
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		char *b0, *b1, *t0, *t1;
		size_t nb0, nb1, nt0, nt1;
		uint64_t d0, d1;
		cr_assert_eq(write_all(false, sizes[s], &b0, &nb0, &t0, &nt0, &d0), 0);
		cr_assert_eq(write_all(true, sizes[s], &b1, &nb1, &t1, &nt1, &d1), 0);
		cr_assert_eq(nb0, 16 + 64 * sizes[s] + 24, "%zu records", sizes[s]);
		cr_assert_eq(nb1, nb0, "%zu records", sizes[s]);
		cr_assert_eq(memcmp(b0, b1, nb0), 0, "%zu records: the binary files differ", sizes[s]);
		cr_assert_eq(nt1, nt0, "%zu records", sizes[s]);
		cr_assert_eq(memcmp(t0, t1, nt0), 0, "%zu records: the texts differ", sizes[s]);
		cr_assert_eq(d0, d1);
		/* the same lines as the public formatter's */
		static struct rtit_sim_rec recs[3000];
		char line[512];
		const char *p = t0;
		rng = 0x1234567;
		for (size_t i = 0; i < sizes[s];) {
			size_t k = 1 + rnd() % 3000;
			if (k > sizes[s] - i)
				k = sizes[s] - i;
			random_records(recs, k);
			for (size_t j = 0; j < k; j++) {
				int n = rtit_sim_rec_format(&recs[j], line, sizeof(line));
				cr_assert_eq(strncmp(p, line, (size_t)n), 0, "record %zu", i + j);
				cr_assert_eq(p[n], '\n');
				p += n + 1;
			}
			i += k;
		}
		cr_assert_eq((size_t)(p - t0), nt0);
		free(b0), free(b1), free(t0), free(t1);
	}
}

/* A full disk (/dev/full) under the writer thread: -RTIT_ERR_IO with
 * ENOSPC from fini, for either file, and the run is not held up. */
Test(record_text, writer_thread_full_disk)
{
	static struct rtit_sim_rec recs[1000];
	for (int which = 0; which < 2; which++) {
		FILE *full = fopen("/dev/full", "w");
		cr_assert(full);
		struct rtit_flow_writer w;
		if (which == 0)
			rtit_flow_writer_init_async(&w, full, NULL);
		else
			cr_assert_eq(rtit_flow_writer_init_async(&w, NULL, full), 0);
		for (int i = 0; i < 100; i++) {
			random_records(recs, 1000);
			rtit_flow_writer_on_batch(recs, 1000, &w);
		}
		uint64_t d;
		cr_assert_eq(rtit_flow_writer_fini(&w, &d), -RTIT_ERR_IO, "file %d", which);
		cr_assert_eq(w.os_err, ENOSPC, "file %d: %s", which, strerror(w.os_err));
		cr_assert(ferror(full));
		fclose(full);
	}
}
