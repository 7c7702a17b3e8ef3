/*
 * fuzz_flow.c - libFuzzer harness: the instruction-flow decoder of both
 * dialects on untrusted bytes, with an untrusted program image.
 *
 * Input: byte 0 chooses the configuration (bit 0: 32-bit mode, bit 1:
 * Cycle_Acc, bit 2: Cmprs_Ret (Intel PT: EventEn, RFLAGS.IF from
 * MODE.Exec), bit 3: buffovf_loads_lip, bits 4-6: the tolerated errata E1,
 * E2, E5; bit 7: an Intel PT trace, else RTIT); bytes 1-2 (little endian) the image
 * size (clamped to what follows); then the image, mapped at 0x401000;
 * then the trace.  Invariants (an abort names the broken one): the run
 * returns a known status; every ERROR note has a one-line message and an
 * offset inside the trace; the notes' counts agree with the statistics;
 * decoded instructions lie in the image; a bounded number of records per
 * trace byte (max_walk bounds a walk without packets); block mode
 * (cfg.on_block) gives the records' flow folded into blocks
 * (tests/common/flow_fold.h) with the same notes at the same offsets.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_flow.h"
#include "../common/flow_fold.h"

struct ff_state {
	const uint8_t *img;
	size_t img_len;
	size_t trace_len;
	uint64_t recs, errors, notes;
	struct flow_fold fold;	/* the records folded, or block mode's */
};

static void ff_fail(const char *what)
{
	fprintf(stderr, "fuzz_flow: invariant broken: %s\n", what);
	abort();
}

static int ff_read_mem(void *opaque, uint64_t addr, uint8_t *buf, size_t n)
{
	const struct ff_state *s = opaque;

	if (addr < FUZZ_FLOW_BASE || addr - FUZZ_FLOW_BASE > s->img_len ||
	    n > s->img_len - (addr - FUZZ_FLOW_BASE))
		return -1;
	memcpy(buf, s->img + (addr - FUZZ_FLOW_BASE), n);
	return 0;
}

static void ff_on_rec(void *opaque, const struct rtit_sim_rec *recs, size_t n)
{
	struct ff_state *s = opaque;

	if (!n)
		ff_fail("on_rec with no records");
	for (size_t i = 0; i < n; i++) {
		const struct rtit_sim_rec *r = &recs[i];
		if (r->kind == RTIT_SIM_INSN &&
		    (r->ip < FUZZ_FLOW_BASE || r->ip - FUZZ_FLOW_BASE >= s->img_len))
			ff_fail("an instruction outside the image");
		flow_fold_rec(&s->fold, r);
	}
	s->recs += n;
}

static void ff_on_note(void *opaque, const struct rtit_flow_note *note)
{
	struct ff_state *s = opaque;

	s->notes++;
	flow_fold_note(&s->fold, note);
	if (note->kind < RTIT_FLOW_N_ENABLE || note->kind > RTIT_FLOW_N_END)
		ff_fail("unknown note kind");
	if (note->kind == RTIT_FLOW_N_ERROR) {
		s->errors++;
		if (!note->msg || !note->msg[0] || strchr(note->msg, '\n'))
			ff_fail("an error note without a one-line message");
		if (note->offset > s->trace_len)
			ff_fail("an error note past the end of the trace");
		if (note->code >= 0 || -note->code >= RTIT_ERR_COUNT)
			ff_fail("an error note whose code is not -RTIT_ERR_x (flow.h)");
	}
}

static void ff_on_block(void *opaque, const struct rtit_flow_block *b, size_t n)
{
	struct flow_fold *f = opaque;

	if (!n)
		ff_fail("on_block with no blocks");
	for (size_t i = 0; i < n; i++)
		flow_fold_block(f, &b[i]);
}

static void ff_block_note(void *opaque, const struct rtit_flow_note *note)
{
	flow_fold_note(opaque, note);
}

/* The same input in block mode: the blocks and notes @s's records and
 * notes fold into. */
static void ff_blocks(struct rtit_flow_cfg *cfg, const struct ff_state *s)
{
	struct rtit_flow_dec *d;
	struct flow_fold f;

	flow_fold_init(&f);
	cfg->on_rec = NULL;
	cfg->on_block = ff_on_block;
	cfg->on_note = ff_block_note;
	cfg->opaque = &f;
	if (rtit_flow_dec_new(&d, cfg) < 0)
		ff_fail("rtit_flow_dec_new failed in block mode");
	if ((uint64_t)rtit_flow_dec_run(d) != s->errors)
		ff_fail("block mode reports another number of errors");
	if (f.hash != s->fold.hash || f.blocks != s->fold.blocks || f.insns != s->fold.insns)
		ff_fail("block mode's blocks or notes are not the records' folded");
	if (rtit_flow_dec_stats(d)->insns != f.insns)
		ff_fail("block mode's statistics and blocks disagree");
	rtit_flow_dec_free(d);
}

int fuzz_flow_one(const uint8_t *data, size_t size)
{
	struct rtit_flow_cfg cfg;
	struct rtit_flow_dec *d;
	struct ff_state s;
	size_t img_len;
	int ret;

	if (size < 3)
		return 0;
	img_len = (size_t)data[1] | (size_t)data[2] << 8;
	if (img_len > size - 3)
		img_len = size - 3;
	memset(&s, 0, sizeof(s));
	flow_fold_init(&s.fold);
	s.img = data + 3;
	s.img_len = img_len;
	s.trace_len = size - 3 - img_len;

	rtit_flow_cfg_default(&cfg);
	cfg.mode = data[0] & 1 ? 32 : 64;
	cfg.cycle_acc = data[0] & 2;
	cfg.cmprs_ret = data[0] & 4;
	cfg.buffovf_loads_lip = data[0] & 8;
	cfg.errata = (data[0] & 0x10 ? RTIT_FLOW_E1 : 0) | (data[0] & 0x20 ? RTIT_FLOW_E2 : 0) |
		     (data[0] & 0x40 ? RTIT_FLOW_E5 : 0);
	cfg.dialect = data[0] & 0x80 ? RTIT_DIALECT_PT : RTIT_DIALECT_RTIT;
	cfg.event_trace = cfg.dialect == RTIT_DIALECT_PT && (data[0] & 4);
	cfg.mem = data + 3 + img_len;
	cfg.mem_len = s.trace_len;
	cfg.read_mem = ff_read_mem;
	cfg.mem_opaque = &s;
	cfg.on_rec = ff_on_rec;
	cfg.on_note = ff_on_note;
	cfg.opaque = &s;
	cfg.max_walk = FUZZ_FLOW_MAX_WALK;
	if (rtit_flow_dec_new(&d, &cfg) < 0)
		ff_fail("rtit_flow_dec_new failed on a valid configuration");
	ret = rtit_flow_dec_run(d);
	if (ret < 0)
		ff_fail("rtit_flow_dec_run failed (I/O or memory) on a memory trace");
	const struct rtit_flow_stats *st = rtit_flow_dec_stats(d);
	if ((uint64_t)ret != st->errors || st->errors != s.errors)
		ff_fail("the error count, the statistics and the notes disagree");
	if (st->insns + st->events != s.recs)
		ff_fail("the statistics and the records handed out disagree");
	/* Each packet is at least one byte; between two packets a walk is
	 * at most max_walk instructions (plus one event record). */
	if (s.recs > (s.trace_len + 1) * (FUZZ_FLOW_MAX_WALK + 2))
		ff_fail("more records than the trace can explain");
	rtit_flow_dec_free(d);
	ff_blocks(&cfg, &s);
	return s.recs > 0x7fffffff ? 0x7fffffff : (int)s.recs;
}

#ifdef FUZZ_FLOW_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_flow_one(data, size);
	return 0;
}
#endif
