/*
 * bench_flow.c - instruction-flow decoding speed (issue 5): instructions
 * decoded per second from a long trace and the program image.
 *
 * A loop-heavy program (conditional branches, calls and returns, an
 * indirect jump) runs under the simulator once; the RTIT encoder writes its
 * trace, and the Intel PT encoder one of the same execution.  Then, best of
 * 3: rtitsim's flow decoder over the RTIT trace and over the Intel PT
 * trace, and libipt's instruction-flow decoder (pt_insn_next) over the same
 * Intel PT trace with the same image.  Targets: >= 100 M instructions/s and
 * >= 5x libipt.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unicorn/unicorn.h>

#include "rtit/flow.h"
#include "rtit/msr_rtit.h"
#include "rtit/msr_pt.h"
#include "rtit/pt_encoder.h"
#include "rtit/rtit_encoder.h"
#include "rtit/scenario.h"
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

struct buf {
	uint8_t *b;
	size_t n, cap;
};

static int buf_write(void *opaque, const uint8_t *b, size_t n)
{
	struct buf *o = opaque;
	if (o->n + n > o->cap) {
		o->cap = (o->n + n) * 2;
		o->b = realloc(o->b, o->cap);
		if (!o->b)
			return -RTIT_ERR_NOMEM;
	}
	memcpy(o->b + o->n, b, n);
	o->n += n;
	return 0;
}

static struct rtit_r_model rm;
static struct rtit_pt_model pm;
static struct buf rtrace, ptrace;
static uint64_t ninsn;

static void on_batch(const struct rtit_sim_rec *recs, size_t n, void *opaque)
{
	(void)opaque;
	for (size_t i = 0; i < n; i++)
		ninsn += recs[i].kind == RTIT_SIM_INSN;
	rtit_r_model_on_batch(recs, n, &rm);
	rtit_pt_model_on_batch(recs, n, &pm);
}

static int msr_write(void *opaque, uint32_t msr, uint64_t v, const struct rtit_sim_rec *ctx)
{
	(void)opaque;
	if (msr >= RTIT_R_MSR_FIRST && msr <= RTIT_R_MSR_LAST)
		return rtit_r_model_msr_write(&rm, msr, v, ctx);
	return rtit_pt_model_msr_write(&pm, msr, v, ctx);
}

static struct rtit_sim *sim;

static int read_mem(void *opaque, uint64_t addr, uint8_t *b, size_t n)
{
	(void)opaque;
	return uc_mem_read(rtit_sim_uc(sim), addr, b, n) == UC_ERR_OK ? 0 : -1;
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

/* Best of 3: rtitsim's flow decoder over @t, instructions per second. */
static double ours_rate(int dialect, const struct buf *t)
{
	double best = 1e30;
	for (int rep = 0; rep < 3; rep++) {
		struct rtit_flow_cfg fc;
		struct rtit_flow_dec *d;
		rtit_flow_cfg_default(&fc);
		fc.dialect = dialect;
		fc.cmprs_ret = true;
		fc.mem = t->b;
		fc.mem_len = t->n;
		fc.read_mem = read_mem;
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
static int ipt_read(uint8_t *b, size_t n, const struct pt_asid *asid, uint64_t ip, void *ctx)
{
	(void)asid;
	(void)ctx;
	while (n && uc_mem_read(rtit_sim_uc(sim), ip, b, n) != UC_ERR_OK)
		n--;
	return n ? (int)n : -pte_nomap;
}
#endif

int main(void)
{
	struct rtit_scenario sc;
	struct rtit_scn_error err;
	struct rtit_sim_config cfg;
	struct rtit_sim_status st;
	struct rtit_enc_sink rs = { .write = buf_write, .opaque = &rtrace };
	struct rtit_enc_sink ps = { .write = buf_write, .opaque = &ptrace };
	struct rtit_r_params rp;
	struct rtit_pt_params pp;
	uint64_t v;

	if (rtit_scenario_parse_string(program, "bench_flow", &sc, &err) < 0) {
		fprintf(stderr, "%s\n", err.text);
		return 1;
	}
	rtit_sim_config_default(&cfg);
	rtit_scenario_config(&sc, &cfg);
	cfg.consumer.on_batch = on_batch;
	cfg.consumer.msr_write = msr_write;
	rtit_r_params_default(&rp);
	rtit_pt_params_default(&pp);
	if (rtit_r_model_init(&rm, &rp, &rs) < 0 || rtit_pt_model_init(&pm, &pp, &ps) < 0 ||
	    rtit_sim_new(&sim, &cfg) < 0 || rtit_scenario_setup(&sc, sim, &err) < 0) {
		fprintf(stderr, "bench_flow: setup failed: %s\n", err.text);
		return 1;
	}
	rtit_r_model_set_platform(&rm, 0, 0, true);
	rtit_pt_model_set_platform(&pm, 0, 0, 64);
	rtit_r_model_msr_read(&rm, RTIT_R_MSR_CTL, &v, NULL);
	rtit_r_model_msr_write(&rm, RTIT_R_MSR_EVENTS, 0x37, NULL);
	rtit_r_model_msr_write(&rm, RTIT_R_MSR_CTL, 0x280d, NULL);	/* with Cmprs_Ret */
	rtit_pt_model_msr_write(&pm, RTIT_PT_MSR_CTL, 0x200d, NULL);
	double t0 = now();
	if (rtit_sim_run(sim, &st) < 0) {
		fprintf(stderr, "bench_flow: %s\n", st.msg);
		return 1;
	}
	double tsim = now() - t0;
	rtit_r_model_finish(&rm);
	rtit_pt_model_finish(&pm);
	printf("program: %" PRIu64 " instructions (simulated and encoded in %.2f s); "
	       "RTIT trace %zu bytes, Intel PT trace %zu bytes\n", ninsn, tsim, rtrace.n, ptrace.n);

	double ours = ours_rate(RTIT_DIALECT_RTIT, &rtrace);
	if (ours < 0)
		return 1;
	printf("  rtitsim flow decoder (RTIT):     %8.1f M instructions/s (%" PRIu64 " decoded)\n",
	       ours / 1e6, decoded);
	double ours_pt = ours_rate(RTIT_DIALECT_PT, &ptrace);
	if (ours_pt < 0)
		return 1;
	printf("  rtitsim flow decoder (Intel PT): %8.1f M instructions/s (%" PRIu64 " decoded)\n",
	       ours_pt / 1e6, decoded);
#ifdef HAVE_LIBIPT
	double best = 1e30;
	uint64_t n = 0;
	for (int rep = 0; rep < 3; rep++) {
		struct pt_config c;
		pt_config_init(&c);
		c.begin = ptrace.b;
		c.end = ptrace.b + ptrace.n;
		struct pt_insn_decoder *dec = pt_insn_alloc_decoder(&c);
		pt_image_set_callback(pt_insn_get_image(dec), ipt_read, NULL);
		n = 0;
		t0 = now();
		int s = pt_insn_sync_forward(dec);
		while (s >= 0) {
			while (s & pts_event_pending) {
				struct pt_event ev;
				s = pt_insn_event(dec, &ev, sizeof(ev));
				if (s < 0)
					break;
			}
			if (s < 0)
				break;
			struct pt_insn insn;
			s = pt_insn_next(dec, &insn, sizeof(insn));
			if (s < 0)
				break;
			n++;
			if (n > ninsn)
				break;	/* past the end of the run */
		}
		double t = now() - t0;
		pt_insn_free_decoder(dec);
		if (t < best)
			best = t;
	}
	double ipt = (double)n / best;
	printf("  libipt pt_insn_next (Intel PT):  %8.1f M instructions/s (%" PRIu64 " decoded)\n",
	       ipt / 1e6, n);
	printf("  ratio on the same Intel PT trace: %.2fx (RTIT trace against it: %.2fx)\n",
	       ours_pt / ipt, ours / ipt);
#endif
	printf("  targets: >= 100 M instructions/s, >= 5x libipt\n");
	rtit_sim_free(sim);
	rtit_scenario_fini(&sc);
	return 0;
}
