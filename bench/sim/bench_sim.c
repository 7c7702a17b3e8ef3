/*
 * bench_sim.c - MIPS of one program (loops, calls, memory stores) under
 * (a) Unicorn with no hooks and (b) the simulator delivering its stream to
 * a consumer that does nothing; prints both and the time ratio b/a
 * (issue 3 target: <= 1.3).
 *
 * With an argument, the compiled C workload of issue 20 (bench/workload,
 * a freestanding ELF, ~10^8 instructions) as well: bare Unicorn (its
 * PT_LOAD segments mapped, no hooks, stopped by its HLT), the simulator
 * with a counting consumer, and the simulator feeding the Intel PT and
 * the RTIT encoder (packets counted, no ground truth); the ratio of the
 * simulator to bare Unicorn has the target (<= 1.3, goal 2).
 * Times are CPU time of the process, best of N, the columns alternated.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <elf.h>

#include <unicorn/unicorn.h>

#include "rtit/encoder.h"
#include "rtit/msr_rtit.h"
#include "rtit/sim.h"

#include "bench_util.h"

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

static int run_sim(const char *prog, bool precise, double *secs,
		   uint64_t *insns, uint8_t *image, size_t image_len)
{
	size_t count = 0;
	struct rtit_sim *sim;
	if (bench_sim_new(&sim, precise, &count) < 0)
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

/* ------------------------------------- the compiled C workload (goal 2) */

static uint8_t *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *b = n > 0 ? malloc((size_t)n) : NULL;
	if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
		free(b);
		b = NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return b;
}

static void count_block(uc_engine *uc, uint64_t addr, uint32_t size, void *opaque)
{
	(void)uc;
	(void)addr;
	(void)size;
	++*(uint64_t *)opaque;
}

static void empty_mem(uc_engine *uc, uc_mem_type type, uint64_t addr, int size,
		      int64_t value, void *opaque)
{
	(void)uc;
	(void)type;
	(void)addr;
	(void)size;
	(void)value;
	(void)opaque;
}

/* Bare Unicorn: the ELF's PT_LOAD segments mapped page by page (as the
 * simulator's loader does), no hooks; the program's HLT ends
 * uc_emu_start.  RAX (the program's result) in *rax.  The floors of the
 * simulator's design (D176): @hooks 1 adds a UC_HOOK_BLOCK that only
 * counts the blocks (into *blocks), 2 as well precise_faults' empty-range
 * UC_HOOK_MEM_READ|WRITE. */
static int run_bare_elf(const uint8_t *f, size_t len, int hooks, double *secs,
			uint64_t *rax, uint64_t *blocks)
{
	const Elf64_Ehdr *eh = (const void *)f;
	uc_engine *uc;
	if (len < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    uc_open(UC_ARCH_X86, UC_MODE_64, &uc) != UC_ERR_OK)
		return -1;
	for (int i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = (const void *)(f + eh->e_phoff + (size_t)i * eh->e_phentsize);
		if (ph->p_type != PT_LOAD || !ph->p_memsz)
			continue;
		uint64_t lo = ph->p_vaddr & ~0xfffull;
		uint64_t hi = (ph->p_vaddr + ph->p_memsz + 0xfff) & ~0xfffull;
		for (uint64_t p = lo; p < hi; p += 0x1000)
			uc_mem_map(uc, p, 0x1000, UC_PROT_ALL);	/* shared pages: already mapped */
		if (ph->p_filesz && (ph->p_offset + ph->p_filesz > len ||
				     uc_mem_write(uc, ph->p_vaddr, f + ph->p_offset,
						  ph->p_filesz) != UC_ERR_OK)) {
			uc_close(uc);
			return -1;
		}
	}
	uc_hook h;
	if (hooks >= 1 && uc_hook_add(uc, &h, UC_HOOK_BLOCK, (void *)count_block,
				      blocks, 1, 0) != UC_ERR_OK)
		hooks = -1;
	if (hooks >= 2 && uc_hook_add(uc, &h, UC_HOOK_MEM_READ | UC_HOOK_MEM_WRITE,
				      (void *)empty_mem, NULL, UINT64_MAX - 1,
				      UINT64_MAX - 1) != UC_ERR_OK)
		hooks = -1;
	if (hooks < 0) {
		uc_close(uc);
		return -1;
	}
	double t0 = now();
	uc_err e = uc_emu_start(uc, eh->e_entry, 0, 0, 0);
	*secs = now() - t0;
	uc_reg_read(uc, UC_X86_REG_RAX, rax);
	uc_close(uc);
	return e == UC_ERR_OK ? 0 : -1;
}

struct wl_consumer {
	size_t recs;
	uint64_t bytes;
	struct rtit_encoder *enc;
};

static void wl_count(const struct rtit_sim_rec *recs, size_t n, void *opaque)
{
	(void)recs;
	((struct wl_consumer *)opaque)->recs += n;
}

static void wl_encode(const struct rtit_sim_rec *recs, size_t n, void *opaque)
{
	struct wl_consumer *c = opaque;
	c->recs += n;
	rtit_encoder_on_batch(c->enc, recs, n);
}

static int wl_msr_write(void *opaque, uint32_t msr, uint64_t v, const struct rtit_sim_rec *ctx)
{
	return rtit_encoder_msr_write(((struct wl_consumer *)opaque)->enc, msr, v, ctx);
}

static int wl_msr_read(void *opaque, uint32_t msr, uint64_t *v, const struct rtit_sim_rec *ctx)
{
	return rtit_encoder_msr_read(((struct wl_consumer *)opaque)->enc, msr, v, ctx);
}

static int wl_sink(void *opaque, const uint8_t *bytes, size_t n)
{
	(void)bytes;
	((struct wl_consumer *)opaque)->bytes += n;
	return 0;
}

/* The simulator on the ELF (@dialect -3: with precise_faults off); with
 * @dialect >= 0 its records go to that dialect's encoder, traced as `rtitsim run --bare` traces (RTIT_CTL
 * 0x200d: TraceEn, OS, User, BranchEn; RTIT_EVENTS 0x37 first).  RAX at
 * the end in *rax, packet bytes in *bytes. */
static int run_sim_elf(const char *path, int dialect, double *secs, uint64_t *insns,
		       uint64_t *rax, uint64_t *bytes)
{
	struct rtit_sim_config cfg;
	struct wl_consumer c = { 0 };
	struct rtit_enc_sink sink = { .write = wl_sink, .opaque = &c };
	rtit_sim_config_default(&cfg);
	cfg.budget = 1ull << 40;
	if (dialect == -3)
		cfg.precise_faults = false;
	cfg.consumer.opaque = &c;
	cfg.consumer.on_batch = wl_count;
	if (dialect >= 0) {
		if (rtit_encoder_new(&c.enc, dialect) < 0 || rtit_encoder_start(c.enc, &sink) < 0)
			return -1;
		rtit_encoder_set_platform(c.enc, 0, cfg.cr3, cfg.cr0, 64);
		cfg.consumer.on_batch = wl_encode;
		cfg.consumer.msr_write = wl_msr_write;
		cfg.consumer.msr_read = wl_msr_read;
	}
	struct rtit_sim *sim;
	if (rtit_sim_new(&sim, &cfg) < 0)
		return -1;
	int r = rtit_sim_load_elf(sim, path);
	if (r >= 0 && dialect >= 0)
		r = rtit_sim_report_clock(sim);	/* as the session does (D79) */
	if (r >= 0 && dialect == RTIT_DIALECT_RTIT)
		r = rtit_sim_msr_preset(sim, RTIT_R_MSR_EVENTS, 0x37);
	if (r >= 0 && dialect >= 0)
		r = rtit_sim_msr_preset(sim, rtit_encoder_ctl_msr(c.enc), 0x200d);
	if (r < 0) {
		fprintf(stderr, "%s: %s\n", path, rtit_sim_errmsg(sim));
		return -1;
	}
	struct rtit_sim_status st;
	double t0 = now();
	r = rtit_sim_run(sim, &st);
	if (r >= 0 && c.enc)
		r = rtit_encoder_finish(c.enc);
	*secs = now() - t0;
	*insns = st.insns;
	*bytes = c.bytes;
	rtit_sim_get_reg(sim, UC_X86_REG_RAX, rax);
	rtit_sim_free(sim);
	if (c.enc)
		rtit_encoder_free(c.enc);
	if (r < 0 || st.stop != RTIT_SIM_STOP_HALTED || c.recs != st.insns + st.events) {
		fprintf(stderr, "sim: %s (%zu records)\n", st.msg, c.recs);
		return -1;
	}
	return 0;
}

/* Best of @reps of each column, alternated in one process.  Returns the
 * simulator / bare Unicorn ratio. */
static double bench_workload(const char *path, int reps, int only)
{
	size_t len;
	uint8_t *f = read_file(path, &len);
	if (!f) {
		fprintf(stderr, "%s: cannot read\n", path);
		exit(1);
	}
	enum { NCOL = 7 };
	double best[NCOL] = { 1e9, 1e9, 1e9, 1e9, 1e9, 1e9, 1e9 }, t;
	uint64_t insns = 0, n, rax[NCOL] = { 0 }, bytes[NCOL] = { 0 }, blocks = 0;
	static const int dialect[NCOL] = { -2, -1, -3, RTIT_DIALECT_PT, RTIT_DIALECT_RTIT, -2, -2 };
	for (int i = 0; i < reps; i++) {
		for (int k = 0; k < NCOL; k++) {
			if (only >= 0 && k != only)
				continue;
			uint64_t nb = 0;
			int r = k == 0 || k >= 5 ? run_bare_elf(f, len, k ? k - 4 : 0, &t, &rax[k], &nb)
					: run_sim_elf(path, dialect[k], &t, &n, &rax[k], &bytes[k]);
			if (nb)
				blocks = nb;
			if (r < 0 || (only < 0 && rax[k] != rax[0])) {
				fprintf(stderr, "workload run %d failed (RAX 0x%" PRIx64
					" vs bare 0x%" PRIx64 ")\n", k, rax[k], rax[0]);
				exit(1);
			}
			if (k && k < 5)
				insns = n;
			if (t < best[k])
				best[k] = t;
		}
	}
	free(f);
	printf("compiled C workload (%s): %" PRIu64 " instructions, best of %d\n",
	       path, insns, reps);
	static const char *name[NCOL] = {
		"(a) bare Unicorn, no hooks:          ",
		"(b) simulator, counting consumer:    ",
		"(c) same, precise_faults=false:      ",
		"(d) simulator + Intel PT encoder:    ",
		"(e) simulator + RTIT encoder:        ",
		"(f) bare + block hook (counts):      ",
		"(g) (f) + precise_faults' mem hook:  ",
	};
	for (int k = 0; k < NCOL; k++) {
		if (only >= 0 && k != only)
			continue;
		printf("  %s %8.1f MIPS (%.3f s CPU)", name[k], (double)insns / best[k] / 1e6, best[k]);
		if (k && only < 0)
			printf("  ratio /a %.2f", best[k] / best[0]);
		if (k >= 3 && k <= 4 && only < 0)
			printf("  /b %.2f, %.3f bytes/insn", best[k] / best[1],
			       (double)bytes[k] / (double)insns);
		printf("\n");
	}
	if (blocks && (only < 0 || only >= 5)) {
		/* where the simulator's time goes, per block (D176) */
		printf("  %" PRIu64 " blocks (%.2f instructions a block)\n", blocks,
		       (double)insns / (double)blocks);
		if (only < 0) {
			double ns = 1e9 / (double)blocks;
			printf("  ns a block over bare: Unicorn's block hook dispatch %.1f,"
			       " precise_faults' hook %.1f, the simulator's own work %.1f"
			       " (precise_faults off: %.1f)\n",
			       (best[5] - best[0]) * ns, (best[6] - best[5]) * ns,
			       (best[1] - best[6]) * ns, (best[2] - best[5]) * ns);
		}
	}
	return best[1] / best[0];
}

/* bench_sim [WORKLOAD [REPS [COLUMN]]]: COLUMN 0-6 runs only that column
 * of the workload (for a profiler). */
int main(int argc, char **argv)
{
	int only = argc > 3 ? atoi(argv[3]) : -1;
	if (only < 0) {
		double r = bench("loops+calls+stores (the issue's target)", prog_store);
		bench("loops+calls, no stores (for reference)", prog_alu);
		printf("target (b)/(a) <= 1.30 on the first program: %s (%.2f)\n",
		       r <= 1.30 ? "met" : "NOT met", r);
	}
	if (argc > 1) {
		int reps = argc > 2 ? atoi(argv[2]) : 3;
		double w = bench_workload(argv[1], reps > 0 ? reps : 3, only);
		if (only < 0)
			printf("compiled C workload: sim %.2fx bare Unicorn (target <= 1.3): %s\n",
			       w, w <= 1.30 ? "met" : "NOT met");
	}
	return 0;
}
