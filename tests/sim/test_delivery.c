/*
 * test_delivery.c - the same records however they are delivered (per
 * instruction, per block, in batches of any size), identical digests on
 * two runs, the flow file round trip, budget and end address, MSR routing
 * to the consumer with #GP.
 */
#include <criterion/criterion.h>

#include <unicorn/unicorn.h>

#include "sim_test.h"

#define P ".intel_syntax noprefix\n.globl _start\n_start:\n"

/* loops, calls, stores, a fault, an INT, a WRMSR: every path */
static const char *mixed =
	P "  mov ecx, 200\n"
	"1: lea rdi, [rip + buf]\n"
	"  mov [rdi + rcx*8], rcx\n"
	"  call f\n"
	"  test ecx, 7\n"
	"  jnz 2f\n"
	"  int 0x80\n"
	"2: loop 1b\n"
	"  xor edx, edx\n"
	"  div edx\n"
	"  mov ecx, 0xC0000082\n"
	"  wrmsr\n"
	"  rdtsc\n"
	"  hlt\n"
	"f: add qword ptr [rdi], 1\n"
	"  ret\n"
	"h_128: iretq\n"
	"h_0: add qword ptr [rsp], 2\n"
	"  iretq\n"
	".p2align 4\n"
	"buf: .fill 256, 8, 0\n";

static uint64_t digest_of(const struct st_run *r)
{
	struct rtit_flow_writer w;
	uint64_t d;
	rtit_flow_writer_init(&w, NULL, NULL);
	rtit_flow_writer_on_batch(r->recs, r->n, &w);
	rtit_flow_writer_fini(&w, &d);
	return d;
}

struct counting {
	struct st_run *run;
	size_t calls, max_n;
};

Test(sim_delivery, same_records_every_way)
{
	static const int modes[] = { RTIT_SIM_PER_BATCH, RTIT_SIM_PER_INSN,
				     RTIT_SIM_PER_BLOCK };
	struct st_run ref;
	struct st_opts o = { .deliver = RTIT_SIM_PER_BATCH };
	cr_assert_eq(st_run_asm(&ref, mixed, &o), 0, "%s", ref.err);
	cr_assert_eq(ref.st.stop, RTIT_SIM_STOP_HALTED, "%s", ref.st.msg);
	cr_assert_gt(ref.n, 1000);
	for (size_t m = 1; m < 3; m++) {
		struct st_run r;
		o.deliver = modes[m];
		cr_assert_eq(st_run_asm(&r, mixed, &o), 0);
		cr_expect_eq(r.n, ref.n, "mode %d: %zu records, %zu expected",
			     modes[m], r.n, ref.n);
		cr_expect(r.n == ref.n &&
			  !memcmp(r.recs, ref.recs, r.n * sizeof(*r.recs)),
			  "mode %d: records differ", modes[m]);
		cr_expect_eq(digest_of(&r), digest_of(&ref));
		st_free(&r);
	}
	st_free(&ref);
}

/* Block tails the block hook's inline path (run.c retire_pending, D176)
 * decides itself: a Jcc and a LOOP whose target is their fall-through
 * (taken from the flags / the count), a REP string op iterating (one TB
 * an iteration: retired once) or with a zero count. */
static const char *tails =
	P "  mov r8d, 40\n"
	"  lea rsi, [rip + buf]\n"
	"1: test r8d, 1\n"
	"  jz 2f\n"
	"2: mov ecx, r8d\n"
	"  and ecx, 3\n"
	"  lea rdi, [rsi + 512]\n"
	"  rep movsb\n"
	"  lea rsi, [rip + buf]\n"
	"  mov ecx, r8d\n"
	"  and ecx, 1\n"
	"  loop 3f\n"
	"3: dec r8d\n"
	"  jnz 1b\n"
	"  hlt\n"
	".p2align 4\n"
	"buf: .fill 128, 8, 0\n";

Test(sim_delivery, block_tails_as_per_insn)
{
	struct st_run ref, r;
	struct st_opts o = { .deliver = RTIT_SIM_PER_INSN };
	cr_assert_eq(st_run_asm(&ref, tails, &o), 0, "%s", ref.err);
	cr_assert_eq(ref.st.stop, RTIT_SIM_STOP_HALTED, "%s", ref.st.msg);
	/* 2 instructions, 40 rounds of 12 (the REP MOVSB retired once a
	 * round whatever its count), HLT */
	size_t taken = 0;
	for (size_t i = 0; i < ref.n; i++)
		taken += ref.recs[i].cls == RTIT_IC_COND &&
			 (ref.recs[i].flags & RTIT_SIM_F_TAKEN) &&
			 ref.recs[i].next_ip == ref.recs[i].ip + ref.recs[i].len;
	cr_expect_eq(ref.n, 2 + 40 * 12 + 1, "%zu records", ref.n);
	cr_expect_gt(taken, 20, "taken to the fall-through: %zu", taken);
	o.deliver = RTIT_SIM_PER_BATCH;
	cr_assert_eq(st_run_asm(&r, tails, &o), 0, "%s", r.err);
	cr_expect(r.n == ref.n && !memcmp(r.recs, ref.recs, r.n * sizeof(*r.recs)),
		  "per batch: %zu records, %zu per instruction, or they differ",
		  r.n, ref.n);
	st_free(&r);
	st_free(&ref);
}

Test(sim_delivery, two_runs_same_digest)
{
	struct st_run a, b;
	cr_assert_eq(st_run_asm(&a, mixed, NULL), 0);
	cr_assert_eq(st_run_asm(&b, mixed, NULL), 0);
	cr_expect_eq(digest_of(&a), digest_of(&b));
	cr_expect_eq(a.n, b.n);
	st_free(&a);
	st_free(&b);
}

static void count_batch(const struct rtit_sim_rec *recs, size_t n, void *opaque)
{
	struct counting *c = opaque;
	c->calls++;
	if (n > c->max_n)
		c->max_n = n;
}

Test(sim_delivery, per_insn_is_one_record_per_call)
{
	struct rtit_sim_config cfg;
	rtit_sim_config_default(&cfg);
	cfg.deliver = RTIT_SIM_PER_INSN;
	struct counting c = {0};
	cfg.consumer.on_batch = count_batch;
	cfg.consumer.opaque = &c;
	struct rtit_sim *sim;
	cr_assert_eq(rtit_sim_new(&sim, &cfg), 0);
	cr_assert_eq(rtit_sim_load_asm(sim, P "mov ecx, 50\n1: loop 1b\nhlt\n",
				       ST_BASE, "t.s", 0), 0);
	struct rtit_sim_status st;
	cr_assert_eq(rtit_sim_run(sim, &st), 0, "%s", st.msg);
	cr_expect_eq(c.max_n, 1);
	cr_expect_eq(c.calls, 52);
	cr_expect_eq(st.insns, 52);
	rtit_sim_free(sim);
}

Test(sim_delivery, small_batches)
{
	struct rtit_sim_config cfg;
	rtit_sim_config_default(&cfg);
	cfg.batch_cap = 3;
	struct counting c = {0};
	cfg.consumer.on_batch = count_batch;
	cfg.consumer.opaque = &c;
	struct rtit_sim *sim;
	cr_assert_eq(rtit_sim_new(&sim, &cfg), 0);
	cr_assert_eq(rtit_sim_load_asm(sim, P "mov ecx, 50\n1: loop 1b\nhlt\n",
				       ST_BASE, "t.s", 0), 0);
	struct rtit_sim_status st;
	cr_assert_eq(rtit_sim_run(sim, &st), 0, "%s", st.msg);
	cr_expect_eq(c.max_n, 3);
	cr_expect_eq(c.calls, 18);
	rtit_sim_free(sim);
}

Test(sim_delivery, flow_file_round_trip)
{
	struct st_run r;
	cr_assert_eq(st_run_asm(&r, mixed, NULL), 0);
	FILE *bin = tmpfile(), *txt = tmpfile();
	cr_assert(bin && txt);
	struct rtit_flow_writer w;
	uint64_t d;
	cr_assert_eq(rtit_flow_writer_init(&w, bin, txt), 0);
	rtit_flow_writer_on_batch(r.recs, r.n, &w);
	cr_assert_eq(rtit_flow_writer_fini(&w, &d), 0);
	cr_expect_eq(d, digest_of(&r));
	rewind(bin);
	struct rtit_sim_rec *back;
	size_t n;
	cr_assert_eq(rtit_flow_read(bin, &back, &n), 0);
	cr_assert_eq(n, r.n);
	cr_expect(!memcmp(back, r.recs, n * sizeof(*back)));
	free(back);
	/* a flipped byte fails the digest */
	fseek(bin, 16 + 64 * 5 + 3, SEEK_SET);
	fputc(0x5a, bin);
	rewind(bin);
	cr_expect_lt(rtit_flow_read(bin, &back, &n), 0);
	/* text: one line per record */
	rewind(txt);
	size_t lines = 0;
	int ch;
	while ((ch = fgetc(txt)) != EOF)
		lines += ch == '\n';
	cr_expect_eq(lines, r.n);
	fclose(bin);
	fclose(txt);
	st_free(&r);
}

Test(sim_delivery, budget_exact_inside_a_block)
{
	struct st_run r;
	struct st_opts o = { .budget = 10 };
	cr_assert_eq(st_run_asm(&r, P "1: nop\nnop\nnop\nnop\nnop\nnop\nnop\njmp 1b\n",
				&o), 0);
	cr_expect_eq(r.st.stop, RTIT_SIM_STOP_BUDGET);
	cr_expect_eq(r.n, 10);
	cr_expect_eq(r.st.insns, 10);
	cr_expect_eq(r.st.ip, ST_BASE + 2);
	cr_expect(strstr(r.st.msg, "instruction budget of 10 exhausted at 0x401002"),
		  "%s", r.st.msg);
	cr_expect_lt(r.rc, 0);
	st_free(&r);

	/* at a block boundary */
	o.budget = 8;
	cr_assert_eq(st_run_asm(&r, P "1: nop\nnop\nnop\nnop\nnop\nnop\nnop\njmp 1b\n",
				&o), 0);
	cr_expect_eq(r.n, 8);
	cr_expect_eq(r.st.ip, ST_BASE);
	st_free(&r);
}

Test(sim_delivery, end_address)
{
	struct st_run r;
	struct st_opts o = { .end_sym = "end" };
	cr_assert_eq(st_run_asm(&r, P "a: nop\nb: nop\nend: nop\nc: hlt\n", &o), 0);
	cr_expect_eq(r.st.stop, RTIT_SIM_STOP_END);
	cr_expect_eq(r.rc, 0);
	cr_expect_str_eq(r.text, "a other\nb other\n");
	st_free(&r);
}

/* ---- MSR routing to the encoder model ---- */

struct msrlog {
	uint32_t msr[8];
	uint64_t val[8];
	uint64_t ctx_ip[8];
	int n;
};

static int t_msr_write(void *opaque, uint32_t msr, uint64_t value,
		       const struct rtit_sim_rec *ctx)
{
	struct msrlog *l = opaque;
	if (l->n < 8) {
		l->msr[l->n] = msr;
		l->val[l->n] = value;
		l->ctx_ip[l->n++] = ctx->ip;
	}
	return value == 0xbad ? -1 : 0;
}

static int t_msr_read(void *opaque, uint32_t msr, uint64_t *value,
		      const struct rtit_sim_rec *ctx)
{
	*value = 0x1122334455667788ull;
	return 0;
}

Test(sim_delivery, trace_msrs_routed_to_consumer)
{
	struct msrlog log = {0};
	struct rtit_sim_consumer c = { .msr_write = t_msr_write,
				       .msr_read = t_msr_read };
	struct rtit_sim_config cfg;
	rtit_sim_config_default(&cfg);
	cfg.consumer = c;
	cfg.consumer.opaque = &log;
	struct rtit_sim *sim;
	cr_assert_eq(rtit_sim_new(&sim, &cfg), 0);
	cr_assert_eq(rtit_sim_load_asm(sim, P
		"a: mov ecx, 0x570\n"
		"b: mov eax, 0x2001\n"
		"c: xor edx, edx\n"
		"d: wrmsr\n"
		"e: mov ecx, 0x769\n"
		"f: rdmsr\n"
		"f2: cmp edx, 0x11223344\n"
		"f3: jne f3\n"
		"g: mov ecx, 0x570\n"
		"i: mov eax, 0xbad\n"
		"i2: xor edx, edx\n"
		"j: wrmsr\n"
		"k: hlt\n"
		"h_13: hlt\n", ST_BASE, "t.s", 0), 0);
	uint64_t h13, dd, jj;
	cr_assert_eq(rtit_sim_symbol(sim, "h_13", &h13), 0);
	cr_assert_eq(rtit_sim_symbol(sim, "d", &dd), 0);
	cr_assert_eq(rtit_sim_symbol(sim, "j", &jj), 0);
	rtit_sim_set_handler(sim, 13, h13);
	struct rtit_sim_status st;
	cr_assert_eq(rtit_sim_run(sim, &st), 0, "%s", st.msg);
	cr_expect_eq(st.ip, h13, "stopped at 0x%" PRIx64 ": %s", st.ip, st.msg);
	cr_assert_eq(log.n, 2);
	cr_expect_eq(log.msr[0], 0x570);
	cr_expect_eq(log.val[0], 0x2001);
	cr_expect_eq(log.ctx_ip[0], dd);
	cr_expect_eq(log.val[1], 0xbad);
	cr_expect_eq(log.ctx_ip[1], jj);
	uint64_t rax;
	rtit_sim_get_reg(sim, UC_X86_REG_RAX, &rax);
	cr_expect_eq(rax, 0xbad);
	rtit_sim_free(sim);
}

Test(sim_delivery, trace_msrs_without_consumer_read_back)
{
	struct st_run r;
	cr_assert_eq(st_run_asm(&r, P
		"a: mov ecx, 0x760\n"
		"b: mov eax, 0x42\n"
		"c: xor edx, edx\n"
		"d: wrmsr\n"
		"e: xor eax, eax\n"
		"f: rdmsr\n"
		"g: ptwrite eax\n"
		"i: hlt\n", NULL), 0);
	cr_assert_eq(r.n, 8, "%s", r.text);
	cr_expect_eq(r.recs[6].value, 0x42);
	cr_expect_eq(r.recs[5].msr, 0x760);
	st_free(&r);
}

struct aborter {
	struct rtit_sim *sim;
	size_t seen;
};

static void abort_batch(const struct rtit_sim_rec *recs, size_t n, void *opaque)
{
	struct aborter *a = opaque;
	a->seen += n;
	if (a->seen >= 5)
		rtit_sim_abort(a->sim, "enough");
}

static int abort_msr(void *opaque, uint32_t msr, uint64_t value,
		     const struct rtit_sim_rec *ctx)
{
	struct aborter *a = opaque;
	rtit_sim_abort(a->sim, "msr");
	return 0;
}

/* A consumer can end the run, also from inside an MSR hook (where the
 * simulator writes RIP right after). */
Test(sim_delivery, consumer_abort)
{
	for (int mode = 0; mode < 2; mode++) {
		struct rtit_sim_config cfg;
		rtit_sim_config_default(&cfg);
		cfg.deliver = RTIT_SIM_PER_INSN;
		struct aborter a = {0};
		if (mode == 0)
			cfg.consumer.on_batch = abort_batch;
		else
			cfg.consumer.msr_write = abort_msr;
		cfg.consumer.opaque = &a;
		cr_assert_eq(rtit_sim_new(&a.sim, &cfg), 0);
		cr_assert_eq(rtit_sim_load_asm(a.sim, P
			"mov ecx, 0x768\nwrmsr\n1: jmp 1b\n", ST_BASE, "t.s", 0), 0);
		struct rtit_sim_status st;
		cr_expect_lt(rtit_sim_run(a.sim, &st), 0);
		cr_expect_eq(st.stop, RTIT_SIM_STOP_ERROR, "%s", st.msg);
		cr_expect(strstr(st.msg, "aborted by the consumer") != NULL, "%s", st.msg);
		cr_expect_lt(st.insns, 10, "%" PRIu64, st.insns);
		rtit_sim_free(a.sim);
	}
}

/* Many blocks (the cache grows), long straight code (Unicorn splits its
 * blocks at 512 instructions and at page ends). */
Test(sim_delivery, large_programs)
{
	struct st_run r;
	cr_assert_eq(st_run_asm(&r, P ".rept 5000\njmp 1f\n1:\n.endr\nhlt\n", NULL), 0,
		     "%s", r.err);
	cr_expect_eq(r.st.stop, RTIT_SIM_STOP_HALTED, "%s", r.st.msg);
	cr_assert_eq(r.n, 5001);
	for (size_t i = 0; i < 5000; i++) {
		cr_assert_eq(r.recs[i].cls, RTIT_IC_DIRECT_JMP);
		cr_assert_eq(r.recs[i].ip, ST_BASE + 2 * i);
		cr_assert_eq(r.recs[i].next_ip, ST_BASE + 2 * i + 2);
		cr_assert(r.recs[i].flags & RTIT_SIM_F_TAKEN);
	}
	st_free(&r);

	cr_assert_eq(st_run_asm(&r, P ".rept 3000\nnop\n.endr\n.rept 700\nadd eax, 1\n.endr\nhlt\n",
				NULL), 0);
	cr_assert_eq(r.n, 3701);
	uint64_t ip = ST_BASE;
	for (size_t i = 0; i < 3700; i++) {
		cr_assert_eq(r.recs[i].ip, ip, "record %zu", i);
		ip += r.recs[i].len;
		cr_assert_eq(r.recs[i].next_ip, ip, "record %zu", i);
		cr_assert_eq(r.recs[i].cycles, i + 1);
	}
	st_free(&r);
}

/* Random bytes at CPL 3, every vector handled by a stub that skips one
 * byte: the run always ends (budget, or a fault the model cannot deliver),
 * and per-instruction and batched delivery give the same digest. */
Test(sim_delivery, random_code_ends_and_agrees)
{
	static const uint8_t stub_noerr[] = { 0x48, 0xff, 0x04, 0x24, 0x48, 0xcf };
	static const uint8_t stub_err[] = { 0x48, 0x83, 0xc4, 0x08, 0x48, 0xff,
					    0x04, 0x24, 0x48, 0xcf };
	for (unsigned seed = 0; seed < 60; seed++) {
		static uint8_t code[4096];
		uint64_t x = 0x9e3779b97f4a7c15ull * (seed + 1);
		for (size_t i = 0; i < sizeof(code); i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			code[i] = (uint8_t)x;
			/* Unicorn 2.0.1 aborts translating some invalid
			 * encodings (FF /3, FF /5 with a register operand;
			 * LOCK on CMP...): keep those bytes out */
			if (code[i] == 0xff || code[i] == 0xf0)
				code[i] = 0x90;
		}
		uint64_t d[2];
		for (int mode = 0; mode < 2; mode++) {
			struct rtit_sim_config cfg;
			rtit_sim_config_default(&cfg);
			cfg.budget = 5000;
			cfg.cpl = 3;
			cfg.rsp0 = 0x31000;
			cfg.deliver = mode ? RTIT_SIM_PER_INSN : RTIT_SIM_PER_BATCH;
			struct rtit_flow_writer w;
			rtit_flow_writer_init(&w, NULL, NULL);
			cfg.consumer.on_batch = rtit_flow_writer_on_batch;
			cfg.consumer.opaque = &w;
			struct rtit_sim *sim;
			cr_assert_eq(rtit_sim_new(&sim, &cfg), 0);
			cr_assert_eq(rtit_sim_load_flat(sim, code, sizeof(code), 0x10000,
							0x10000), 0);
			cr_assert_eq(rtit_sim_map(sim, 0x30000, 0x2000), 0);
			uc_mem_write(rtit_sim_uc(sim), 0x30000, stub_noerr, sizeof(stub_noerr));
			uc_mem_write(rtit_sim_uc(sim), 0x30010, stub_err, sizeof(stub_err));
			for (unsigned v = 0; v < 256; v++) {
				bool err = v == 8 || (v >= 10 && v <= 14) || v == 17 || v == 21;
				rtit_sim_set_handler(sim, v, err ? 0x30010 : 0x30000);
			}
			struct rtit_sim_status st;
			rtit_sim_run(sim, &st);
			cr_expect_neq(st.stop, RTIT_SIM_STOP_NONE, "seed %u", seed);
			cr_expect_neq(st.stop, RTIT_SIM_STOP_ERROR, "seed %u: %s", seed, st.msg);
			cr_expect_leq(st.insns, 5000);
			rtit_flow_writer_fini(&w, &d[mode]);
			rtit_sim_free(sim);
		}
		cr_expect_eq(d[0], d[1], "seed %u: digests differ", seed);
	}
}
