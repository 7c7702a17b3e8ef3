/*
 * bench_store.c - what a guest store costs under Unicorn 2.0.1 (issue 20
 * goal 3), and whether the way memory is mapped or hooked changes it.
 *
 * Three loops of 8 memory operations (or ALU operations) and a DEC/JNZ
 * per iteration: stores to a data page, loads from it, register adds.
 * Each runs under bare Unicorn mapped several ways and under the
 * simulator; the cost of one store or load is (t_op - t_alu) / ops,
 * nanoseconds, measured in one process, best of N.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <unicorn/unicorn.h>

#include "rtit/sim.h"

#include "bench_util.h"

#define BASE 0x401000ull
#define LEN 0x3000u
#define ITERS 250000
#define OPS 8	/* memory (or ALU) operations an iteration */

/* The loop body (@op 0: stores, 1: loads, 2: register adds), 8 times, then the data: on its own page (.p2align 12)
 * or right after the code, on the code's page. */
static char *prog(int op, bool same_page)
{
	static char text[2048];
	int n = snprintf(text, sizeof(text),
			 ".intel_syntax noprefix\n.globl _start\n_start:\n"
			 "  lea rdi, [rip + buf]\n  mov r8d, %d\n1:\n", ITERS);
	for (int k = 0; k < OPS; k++)
		n += op == 0 ? snprintf(text + n, sizeof(text) - (size_t)n,
					"  mov [rdi + %d], rcx\n", 8 * k)
		   : op == 1 ? snprintf(text + n, sizeof(text) - (size_t)n,
					"  mov rax, [rdi + %d]\n", 8 * k)
			     : snprintf(text + n, sizeof(text) - (size_t)n,
					"  add rax, %d\n", 8 * k);
	snprintf(text + n, sizeof(text) - (size_t)n,
		 "  dec r8d\n  jnz 1b\n  hlt\n%s"
		 "buf: .fill 64, 8, 0\n", same_page ? ".p2align 6\n" : ".p2align 12\n");
	return text;
}

/* The simulator; with @image, the assembled program is copied out. */
static double run_sim(const char *src, bool precise, uint8_t *image)
{
	size_t count = 0;
	struct rtit_sim *sim;
	struct rtit_sim_status st;
	if (bench_sim_new(&sim, precise, &count) < 0 || rtit_sim_load_asm(sim, src, BASE, "store.s", 0) < 0) {
		fprintf(stderr, "cannot load the loop\n");
		exit(1);
	}
	if (image)
		for (uint32_t o = 0; o < LEN; o += 0x1000)
			uc_mem_read(rtit_sim_uc(sim), BASE + o, image + o, 0x1000);
	double t0 = now();
	int r = rtit_sim_run(sim, &st);
	double t = now() - t0;
	rtit_sim_free(sim);
	if (r < 0) {
		fprintf(stderr, "sim: %s\n", st.msg);
		exit(1);
	}
	return t;
}

static void nop_block(uc_engine *uc, uint64_t a, uint32_t s, void *o)
{
	(void)uc; (void)a; (void)s; (void)o;
}

static void nop_mem(uc_engine *uc, uc_mem_type t, uint64_t a, int s, int64_t v, void *o)
{
	(void)uc; (void)t; (void)a; (void)s; (void)v; (void)o;
}

enum { MAP_PAGES, MAP_ONE, MAP_PTR, HOOK_MEM, HOOK_BLOCK, NVARIANTS };
static const char *const vname[NVARIANTS] = {
	"uc_mem_map, one 4 KiB region a page (the sim's ELF loader)",
	"uc_mem_map, one region for code and data",
	"uc_mem_map_ptr, host memory (one region)",
	"+ empty-range UC_HOOK_MEM_READ|WRITE (precise_faults' hook)",
	"+ empty UC_HOOK_BLOCK",
};

static double run_bare(const uint8_t *image, int v)
{
	static uint8_t host[LEN] __attribute__((aligned(4096)));
	uc_engine *uc;
	uc_hook h;
	if (uc_open(UC_ARCH_X86, UC_MODE_64, &uc) != UC_ERR_OK)
		exit(1);
	if (v == MAP_PAGES) {
		for (uint32_t o = 0; o < LEN; o += 0x1000)
			uc_mem_map(uc, BASE + o, 0x1000, UC_PROT_ALL);
	} else if (v == MAP_PTR) {
		memset(host, 0, sizeof(host));
		uc_mem_map_ptr(uc, BASE, LEN, UC_PROT_ALL, host);
	} else {
		uc_mem_map(uc, BASE, LEN, UC_PROT_ALL);
	}
	if (v == HOOK_MEM)
		uc_hook_add(uc, &h, UC_HOOK_MEM_READ | UC_HOOK_MEM_WRITE, (void *)nop_mem, NULL,
			    UINT64_MAX - 1, UINT64_MAX - 1);
	if (v == HOOK_BLOCK)
		uc_hook_add(uc, &h, UC_HOOK_BLOCK, (void *)nop_block, NULL, 1, 0);
	uc_mem_write(uc, BASE, image, LEN);
	double t0 = now();
	uc_err e = uc_emu_start(uc, BASE, 0, 0, 0);
	double t = now() - t0;
	uc_close(uc);
	if (e != UC_ERR_OK) {
		fprintf(stderr, "Unicorn: %s\n", uc_strerror(e));
		exit(1);
	}
	return t;
}

static double best_of(double a, double b)
{
	return a < b ? a : b;
}

int main(int argc, char **argv)
{
	int reps = argc > 1 ? atoi(argv[1]) : 3;
	static uint8_t image[2][3][LEN];
	double bare[2][3][NVARIANTS], sim[2][3][2];
	for (int p = 0; p < 2; p++)
		for (int o = 0; o < 3; o++) {
			memset(image[p][o], 0, LEN);
			run_sim(prog(o, p), true, image[p][o]);
			for (int v = 0; v < NVARIANTS; v++)
				bare[p][o][v] = 1e9;
			sim[p][o][0] = sim[p][o][1] = 1e9;
		}
	for (int r = 0; r < (reps > 0 ? reps : 3); r++)
		for (int p = 0; p < 2; p++)
			for (int o = 0; o < 3; o++) {
				for (int v = 0; v < NVARIANTS; v++)
					bare[p][o][v] = best_of(bare[p][o][v], run_bare(image[p][o], v));
				for (int q = 0; q < 2; q++)
					sim[p][o][q] = best_of(sim[p][o][q],
							       run_sim(prog(o, p), q == 0, NULL));
			}
	const double nops = (double)ITERS * OPS;
	printf("Unicorn 2.0.1 store path (issue 20 goal 3): %d iterations of %d stores / "
	       "loads / ALU ops + DEC/JNZ; ns per operation over the ALU loop, best of %d\n",
	       ITERS, OPS, reps);
	for (int p = 0; p < 2; p++) {
		printf(" data %s:\n", p ? "on the code's page" : "on its own page");
		printf("   %-72s %9s %9s %9s\n", "", "store ns", "load ns", "ALU loop");
		for (int v = 0; v < NVARIANTS; v++)
			printf("   bare Unicorn, %-58s %9.1f %9.1f %8.3fs\n", vname[v],
			       (bare[p][0][v] - bare[p][2][v]) / nops * 1e9,
			       (bare[p][1][v] - bare[p][2][v]) / nops * 1e9, bare[p][2][v]);
		for (int q = 0; q < 2; q++)
			printf("   simulator, precise_faults=%-45s %9.1f %9.1f %8.3fs\n",
			       q ? "false" : "true",
			       (sim[p][0][q] - sim[p][2][q]) / nops * 1e9,
			       (sim[p][1][q] - sim[p][2][q]) / nops * 1e9, sim[p][2][q]);
	}
	return 0;
}
