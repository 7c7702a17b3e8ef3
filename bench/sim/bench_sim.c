/*
 * bench_sim.c - MIPS of one program (loops, calls, memory stores) under
 * (a) Unicorn with no hooks and (b) the simulator delivering its stream to
 * a consumer that does nothing; prints both and the time ratio b/a
 * (issue 3 target: <= 1.3).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <unicorn/unicorn.h>

#include "rtit/sim.h"

#define BASE 0x401000ull

static const char *prog_alu =
	".intel_syntax noprefix\n.globl _start\n_start:\n"
	"  mov r8d, 20000\n"
	"outer:\n"
	"  mov ecx, 64\n"
	"inner:\n"
	"  add rax, rcx\n"
	"  call g\n"
	"  dec ecx\n"
	"  jnz inner\n"
	"  dec r8d\n"
	"  jnz outer\n"
	"  hlt\n"
	"g:\n"
	"  xor rax, rdx\n"
	"  ret\n";

static const char *prog_store =
	".intel_syntax noprefix\n.globl _start\n_start:\n"
	"  mov r8d, 20000\n"
	"outer:\n"
	"  lea rdi, [rip + buf]\n"
	"  mov ecx, 64\n"
	"inner:\n"
	"  mov [rdi + rcx*8], rcx\n"
	"  call f\n"
	"  dec ecx\n"
	"  jnz inner\n"
	"  dec r8d\n"
	"  jnz outer\n"
	"  hlt\n"
	"f:\n"
	"  add rax, rcx\n"
	"  mov [rdi], rax\n"
	"  ret\n"
	".p2align 12\n"
	"buf: .fill 1024, 8, 0\n";

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sink(const struct rtit_sim_rec *recs, size_t n, void *opaque)
{
	(void)recs;
	*(size_t *)opaque += n;
}

static int run_sim(const char *prog, bool precise, double *secs,
		   uint64_t *insns, uint8_t *image, size_t image_len)
{
	struct rtit_sim_config cfg;
	rtit_sim_config_default(&cfg);
	cfg.precise_faults = precise;
	size_t count = 0;
	cfg.consumer.on_batch = sink;
	cfg.consumer.opaque = &count;
	struct rtit_sim *sim;
	if (rtit_sim_new(&sim, &cfg) < 0)
		return -1;
	if (rtit_sim_load_asm(sim, prog, BASE, "bench.s", 0) < 0) {
		fprintf(stderr, "%s\n", rtit_sim_errmsg(sim));
		return -1;
	}
	for (size_t o = 0; image && o < image_len; o += 0x1000)
		if (uc_mem_read(rtit_sim_uc(sim), BASE + o, image + o, 0x1000) != UC_ERR_OK)
			break;
	struct rtit_sim_status st;
	double t0 = now();
	int r = rtit_sim_run(sim, &st);
	*secs = now() - t0;
	*insns = st.insns;
	rtit_sim_free(sim);
	if (r < 0) {
		fprintf(stderr, "sim: %s\n", st.msg);
		return -1;
	}
	return 0;
}

static void empty_block_hook(uc_engine *uc, uint64_t addr, uint32_t size,
			     void *opaque)
{
	(void)uc;
	(void)addr;
	(void)size;
	(void)opaque;
}

static int run_raw(const uint8_t *image, size_t len, double *secs, bool hook)
{
	uc_engine *uc;
	uc_hook h;
	if (uc_open(UC_ARCH_X86, UC_MODE_64, &uc) != UC_ERR_OK)
		return -1;
	if (hook)
		uc_hook_add(uc, &h, UC_HOOK_BLOCK, (void *)empty_block_hook, NULL, 1, 0);
	uc_mem_map(uc, BASE, len, UC_PROT_ALL);
	uc_mem_write(uc, BASE, image, len);
	uc_mem_map(uc, 0x7fff0000, 0x10000, UC_PROT_ALL);
	uint64_t sp = 0x80000000;
	uc_reg_write(uc, UC_X86_REG_RSP, &sp);
	double t0 = now();
	uc_err e = uc_emu_start(uc, BASE, 0, 0, 0);
	*secs = now() - t0;
	uc_close(uc);
	return e == UC_ERR_OK ? 0 : -1;
}

/* Runs one program under (a), (b), (c); best of 3.  Returns b/a. */
static double bench(const char *name, const char *prog)
{
	enum { LEN = 0x3000 };
	static uint8_t image[LEN];
	double ta = 1e9, tb = 1e9, tc = 1e9, td = 1e9, t;
	uint64_t insns = 0;
	memset(image, 0, sizeof(image));
	if (run_sim(prog, true, &t, &insns, image, LEN) < 0)
		exit(1);
	for (int i = 0; i < 3; i++) {
		if (run_raw(image, LEN, &t, false) < 0) {
			fprintf(stderr, "raw Unicorn run failed\n");
			exit(1);
		}
		if (t < ta)
			ta = t;
		if (run_raw(image, LEN, &t, true) < 0)
			exit(1);
		if (t < td)
			td = t;
		if (run_sim(prog, true, &t, &insns, NULL, 0) < 0)
			exit(1);
		if (t < tb)
			tb = t;
		if (run_sim(prog, false, &t, &insns, NULL, 0) < 0)
			exit(1);
		if (t < tc)
			tc = t;
	}
	printf("program %s: %" PRIu64 " instructions\n", name, insns);
	printf("  (a) Unicorn, no hooks:            %8.1f MIPS (%.3f s)\n",
	       (double)insns / ta / 1e6, ta);
	printf("  (b) simulator, null consumer:     %8.1f MIPS (%.3f s)  ratio b/a %.2f\n",
	       (double)insns / tb / 1e6, tb, tb / ta);
	printf("  (c) same, precise_faults=false:   %8.1f MIPS (%.3f s)  ratio c/a %.2f\n",
	       (double)insns / tc / 1e6, tc, tc / ta);
	printf("  (d) Unicorn + empty block hook:   %8.1f MIPS (%.3f s)  ratio d/a %.2f\n",
	       (double)insns / td / 1e6, td, td / ta);
	return tb / ta;
}

int main(void)
{
	double r = bench("loops+calls+stores (the issue's target)", prog_store);
	bench("loops+calls, no stores (for reference)", prog_alu);
	printf("target (b)/(a) <= 1.30 on the first program: %s (%.2f)\n",
	       r <= 1.30 ? "met" : "NOT met", r);
	return 0;
}
