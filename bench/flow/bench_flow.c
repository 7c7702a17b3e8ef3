/*
 * bench_flow.c - instruction-flow decoding speed (issue 5): instructions
 * decoded per second from a long trace and the program image.
 *
 * A loop-heavy program (conditional branches, calls and returns, an
 * indirect jump) runs twice, once a dialect, through the session `rtitsim
 * run` uses (the simulator is deterministic: one execution, two traces).
 * Then, best of 3: rtitsim's flow decoder over the RTIT trace and over
 * the Intel PT trace (code from the scenario's image), and libipt's
 * instruction-flow decoder (pt_insn_next) and block decoder (pt_blk_next)
 * over the same Intel PT trace, its image an image section cache of the
 * same code as file sections.  Targets: >= 100 M instructions/s and >= 5x
 * libipt's instruction decoder.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rtit/flow.h"
#include "rtit/scenario.h"
#include "session_mem.h"
#ifdef HAVE_LIBIPT
#include <intel-pt.h>
#endif

static const char program[] =
	"name bench_flow\n"
	"code asm load=0x401000 entry=start\n"
	"    .intel_syntax noprefix\n"
	"    .globl start\n"
	"start:\n"
	"    mov r12d, 400000\n"
	"outer:\n"
	"    mov ecx, 5\n"
	"inner:\n"
	"    test ecx, 1\n"
	"    jz even\n"
	"    call work\n"
	"even:\n"
	"    dec ecx\n"
	"    jnz inner\n"
	"    mov eax, r12d\n"
	"    and eax, 1\n"
	"    lea rdx, [rip + table]\n"
	"    jmp qword ptr [rdx + rax * 8]\n"
	"back:\n"
	"    dec r12d\n"
	"    jnz outer\n"
	"done:\n"
	"    nop\n"
	"work:\n"
	"    add r8, rcx\n"
	"    xor r9, r8\n"
	"    ret\n"
	"t0: add r10, 1\n"
	"    jmp back\n"
	"t1: sub r10, 1\n"
	"    jmp back\n"
	"    .balign 8\n"
	"table:\n"
	"    .quad t0, t1\n"
	"end\n"
	"cpl 0\n"
	"end-at done\n"
	"budget 100000000\n";

/* The same program, traced in each dialect: one session each (the
 * simulator is deterministic, so both traces are of the same
 * execution). */
static const char rtit_setup[] =
	"dialect rtit\n"
	"msr RTIT_EVENTS = 0x37\n"
	"msr RTIT_CTL = 0x280d\n";	/* with Cmprs_Ret */
static const char pt_setup[] =
	"dialect pt\n"
	"msr IA32_RTIT_CTL = 0x200d\n";

static int session(const char *setup, struct rtit_scenario *sc, struct session_mem *m)
{
	struct rtit_scn_error err;
	char text[sizeof(program) + 256], e[1200];
	snprintf(text, sizeof(text), "%s%s", program, setup);
	if (rtit_scenario_parse_string(text, "bench_flow", sc, &err) < 0) {
		fprintf(stderr, "%s\n", err.text);
		return -1;
	}
	if (session_mem_run(sc, m, false, e, sizeof(e)) < 0) {
		fprintf(stderr, "bench_flow: %s\n", e);
		return -1;
	}
	return 0;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t decoded;

static void count(void *opaque, const struct rtit_sim_rec *recs, size_t n)
{
	(void)opaque;
	for (size_t i = 0; i < n; i++)
		decoded += recs[i].kind == RTIT_SIM_INSN;
}

/* Best of 3: rtitsim's flow decoder over @m's trace (the configuration
 * its sideband gives, code from its image), instructions per second. */
static double ours_rate(const struct session_mem *m)
{
	double best = 1e30;
	for (int rep = 0; rep < 3; rep++) {
		struct rtit_flow_cfg fc;
		struct rtit_flow_dec *d;
		session_mem_flow_cfg(m, &fc);
		fc.mem = m->trace;
		fc.mem_len = m->tlen;
		fc.on_rec = count;
		decoded = 0;
		if (rtit_flow_dec_new(&d, &fc) < 0)
			return -1;
		double t0 = now();
		int r = rtit_flow_dec_run(d);
		double dt = now() - t0;
		rtit_flow_dec_free(d);
		if (r != 0) {
			fprintf(stderr, "bench_flow: the flow decoder reported %d errors\n", r);
			return -1;
		}
		if (dt < best)
			best = dt;
	}
	return (double)decoded / best;
}

#ifdef HAVE_LIBIPT
/*
 * libipt as its own users set it up (ptxed): the program's code as file
 * sections in an image section cache, shared by the decoders' images.
 * The image's regions are written to one temporary file, each added at
 * its address.  NULL on failure.
 */
static struct pt_image_section_cache *ipt_iscache(const struct rtit_image *img, int *isids,
						  size_t *nisid, char *path, size_t pathsz)
{
	snprintf(path, pathsz, "/tmp/bench_flow.XXXXXX");
	int fd = mkstemp(path);
	struct pt_image_section_cache *c = pt_iscache_alloc("bench_flow");
	uint64_t off = 0;
	*nisid = 0;
	if (fd < 0 || !c)
		return NULL;
	for (size_t i = 0; i < rtit_image_regions(img, NULL) && i < 16; i++) {
		uint64_t addr;
		const uint8_t *b;
		size_t len;
		rtit_image_region(img, i, &addr, &b, &len);
		if (write(fd, b, len) != (ssize_t)len)
			return NULL;
		isids[i] = pt_iscache_add_file(c, path, off, len, addr);
		if (isids[i] < 0)
			return NULL;
		off += len;
		(*nisid)++;
	}
	close(fd);
	return c;
}

/* Best of 3 for libipt's instruction (blk false) or block decoder over
 * @m's trace; *n: the instructions decoded (up to the run's). */
static double ipt_rate(const struct session_mem *m, struct pt_image_section_cache *c,
		       const int *isids, size_t nisid, bool blk, uint64_t ninsn, uint64_t *n)
{
	double best = 1e30;
	for (int rep = 0; rep < 3; rep++) {
		struct pt_config cfg;
		pt_config_init(&cfg);
		cfg.begin = m->trace;
		cfg.end = m->trace + m->tlen;
		struct pt_insn_decoder *id = blk ? NULL : pt_insn_alloc_decoder(&cfg);
		struct pt_block_decoder *bd = blk ? pt_blk_alloc_decoder(&cfg) : NULL;
		struct pt_image *image = blk ? pt_blk_get_image(bd) : pt_insn_get_image(id);
		for (size_t i = 0; i < nisid; i++)
			pt_image_add_cached(image, c, isids[i], NULL);
		*n = 0;
		double t0 = now();
		int s = blk ? pt_blk_sync_forward(bd) : pt_insn_sync_forward(id);
		while (s >= 0 && *n <= ninsn) {
			while (s & pts_event_pending) {
				struct pt_event ev;
				s = blk ? pt_blk_event(bd, &ev, sizeof(ev)) : pt_insn_event(id, &ev, sizeof(ev));
				if (s < 0)
					break;
			}
			if (s < 0)
				break;
			if (blk) {
				struct pt_block block;
				s = pt_blk_next(bd, &block, sizeof(block));
				*n += block.ninsn;
			} else {
				struct pt_insn insn;
				s = pt_insn_next(id, &insn, sizeof(insn));
				*n += s >= 0;
			}
		}
		double t = now() - t0;
		pt_insn_free_decoder(id);
		pt_blk_free_decoder(bd);
		if (t < best)
			best = t;
	}
	return (double)*n / best;
}
#endif

int main(void)
{
	static struct session_mem rm, pm;
	struct rtit_scenario rsc, psc;

	double t0 = now();
	if (session(rtit_setup, &rsc, &rm) < 0 || session(pt_setup, &psc, &pm) < 0)
		return 1;
	double tsim = now() - t0;
	uint64_t ninsn = rm.res.sb.instructions;
	printf("program: %" PRIu64 " instructions (simulated and encoded twice in %.2f s); "
	       "RTIT trace %zu bytes, Intel PT trace %zu bytes\n", ninsn, tsim, rm.tlen, pm.tlen);

	double ours = ours_rate(&rm);
	if (ours < 0)
		return 1;
	printf("  rtitsim flow decoder (RTIT):     %8.1f M instructions/s (%" PRIu64 " decoded)\n",
	       ours / 1e6, decoded);
	double ours_pt = ours_rate(&pm);
	if (ours_pt < 0)
		return 1;
	printf("  rtitsim flow decoder (Intel PT): %8.1f M instructions/s (%" PRIu64 " decoded)\n",
	       ours_pt / 1e6, decoded);
#ifdef HAVE_LIBIPT
	char path[64];
	int isids[16];
	size_t nisid;
	uint64_t n, nb;
	struct pt_image_section_cache *c = ipt_iscache(pm.img, isids, &nisid, path, sizeof(path));
	if (!c) {
		fprintf(stderr, "bench_flow: cannot set up libipt's image section cache\n");
		return 1;
	}
	double ipt = ipt_rate(&pm, c, isids, nisid, false, ninsn, &n);
	double iptb = ipt_rate(&pm, c, isids, nisid, true, ninsn, &nb);
	pt_iscache_free(c);
	unlink(path);
	printf("  libipt pt_insn_next (Intel PT):  %8.1f M instructions/s (%" PRIu64 " decoded)\n",
	       ipt / 1e6, n);
	printf("  libipt pt_blk_next (Intel PT):   %8.1f M instructions/s (%" PRIu64 " decoded)\n",
	       iptb / 1e6, nb);
	printf("  libipt's image: an image section cache of file sections (as ptxed sets it up)\n");
	printf("  ratio on the same Intel PT trace: %.2fx pt_insn_next, %.2fx pt_blk_next"
	       " (RTIT trace against pt_insn_next: %.2fx)\n", ours_pt / ipt, ours_pt / iptb, ours / ipt);
#endif
	printf("  targets: >= 100 M instructions/s, >= 5x libipt's instruction decoder\n");
	session_mem_free(&rm);
	session_mem_free(&pm);
	rtit_scenario_fini(&rsc);
	rtit_scenario_fini(&psc);
	return 0;
}
