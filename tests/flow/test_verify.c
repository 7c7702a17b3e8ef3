/*
 * test_verify.c - the flow decoder's API in process: a session (simulator
 * + RTIT encoder, as `rtitsim run` runs it) -> trace bytes and ground
 * truth -> rtit_flow_verify (the way `rtitsim run --verify` calls it),
 * the decoder fed in 1-byte reads, a corrupted trace, and 32-bit code;
 * code read from the scenario's image, configuration from the sideband.
 *
 * exactly_the_traced_records is a white-box test of the RTIT model: it
 * wires the simulator to the model itself (not through the session) to
 * read PacketEn between records, the account of which records a trace
 * can show.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "rtit/flow.h"
#include "rtit/msr_rtit.h"
#include "rtit/rtit_encoder.h"
#include "rtit/scenario.h"
#include "session_mem.h"

/* A session's outputs, for the API tests. */
struct ses {
	struct rtit_scenario sc;
	struct session_mem m;
};

static void run(struct ses *r, const char *text)
{
	struct rtit_scn_error err;
	char e[1200];
	memset(r, 0, sizeof(*r));
	cr_assert_eq(rtit_scenario_parse_string(text, "test", &r->sc, &err), 0, "%s", err.text);
	cr_assert_eq(session_mem_run(&r->sc, &r->m, true, e, sizeof(e)), 0, "%s", e);
}

static void done(struct ses *r)
{
	session_mem_free(&r->m);
	rtit_scenario_fini(&r->sc);
}

static void cfg_for(struct rtit_flow_cfg *c, struct ses *r)
{
	session_mem_flow_cfg(&r->m, c);
}

/* The model wired by hand (exactly_the_traced_records). */
struct rt {
	struct rtit_r_model model;
	struct rtit_r_params params;
	uint8_t *trace;
	size_t tlen, tcap;
	struct rtit_sim_rec *recs;
	size_t nrecs, rcap;
	uint64_t ctl;
	struct rtit_sim *sim;
	struct rtit_image *img;
	struct rtit_scenario sc;
	/* the records the encoder saw with PacketEn = 1 and no overflow: the
	 * ones a trace can show (an independent account of the gaps) */
	struct rtit_sim_rec *traced;
	size_t ntraced, tcap2;
};

static int t_write(void *opaque, const uint8_t *b, size_t n)
{
	struct rt *r = opaque;
	if (r->tlen + n > r->tcap) {
		r->tcap = (r->tlen + n) * 2;
		r->trace = realloc(r->trace, r->tcap);
	}
	memcpy(r->trace + r->tlen, b, n);
	r->tlen += n;
	return 0;
}

static void t_batch(const struct rtit_sim_rec *recs, size_t n, void *opaque)
{
	struct rt *r = opaque;
	if (r->nrecs + n > r->rcap) {
		r->rcap = (r->nrecs + n) * 2;
		r->recs = realloc(r->recs, r->rcap * sizeof(*r->recs));
	}
	memcpy(r->recs + r->nrecs, recs, n * sizeof(*recs));
	r->nrecs += n;
	for (size_t i = 0; i < n; i++) {
		const struct rtit_sim_rec *x = &recs[i];
		bool visible = x->kind == RTIT_SIM_INSN || x->cls == RTIT_EV_EXCEPTION ||
			       x->cls == RTIT_EV_EXT_INTERRUPT || x->cls == RTIT_EV_NMI;
		/* a WRMSR to a trace MSR took effect before its record (D16) */
		bool trace_wrmsr = x->kind == RTIT_SIM_INSN && x->cls == RTIT_IC_WRMSR &&
				   x->msr >= RTIT_R_MSR_FIRST && x->msr <= RTIT_R_MSR_LAST;
		/* preset MSRs enable at the first record (D13): judged after it */
		bool deferred = r->model.deferred_enable;
		bool pe = rtit_r_packet_en(&r->model) && !r->model.buff_ovf;
		rtit_r_model_on_batch(x, 1, &r->model);
		if (deferred)
			pe = rtit_r_packet_en(&r->model);
		if (visible && !trace_wrmsr && pe) {
			if (r->ntraced == r->tcap2) {
				r->tcap2 = r->tcap2 ? r->tcap2 * 2 : 256;
				r->traced = realloc(r->traced, r->tcap2 * sizeof(*r->traced));
			}
			r->traced[r->ntraced++] = *x;
		}
	}
}

static int t_msr_write(void *opaque, uint32_t msr, uint64_t v, const struct rtit_sim_rec *ctx)
{
	struct rt *r = opaque;
	if (msr == RTIT_R_MSR_CTL && !r->ctl && (v & RTIT_R_CTL_TRACE_EN))
		r->ctl = v;
	return rtit_r_model_msr_write(&r->model, msr, v, ctx);
}

static int t_msr_read(void *opaque, uint32_t msr, uint64_t *v, const struct rtit_sim_rec *ctx)
{
	struct rt *r = opaque;
	return rtit_r_model_msr_read(&r->model, msr, v, ctx);
}

/* Runs the scenario file at @path; fills r (trace, truth, image). */
static void run_scn(struct rt *r, const char *path)
{
	struct rtit_scn_error err;
	struct rtit_sim_config cfg;
	struct rtit_enc_sink sink = { .write = t_write };
	struct rtit_sim_status st;

	memset(r, 0, sizeof(*r));
	cr_assert_eq(rtit_scenario_parse_file(path, &r->sc, &err), 0, "%s", err.text);
	rtit_r_params_default(&r->params);
	for (size_t i = 0; i < r->sc.nparams; i++) {
		char e[256];
		cr_assert_eq(rtit_r_param_set(&r->params, r->sc.params[i].key,
					      r->sc.params[i].value, e, sizeof(e)), 0, "%s", e);
	}
	sink.opaque = r;
	cr_assert_eq(rtit_r_model_init(&r->model, &r->params, &sink), 0);
	rtit_sim_config_default(&cfg);
	rtit_scenario_config(&r->sc, &cfg);
	cfg.consumer.on_batch = t_batch;
	cfg.consumer.msr_write = t_msr_write;
	cfg.consumer.msr_read = t_msr_read;
	cfg.consumer.opaque = r;
	rtit_r_model_set_platform(&r->model, (uint8_t)cfg.cpl, cfg.cr3, (cfg.cr0 >> 31) & 1);
	uint64_t v;
	rtit_r_model_msr_read(&r->model, RTIT_R_MSR_CTL, &v, NULL);
	cr_assert_eq(rtit_sim_new(&r->sim, &cfg), 0);
	cr_assert_eq(rtit_scenario_setup(&r->sc, r->sim, &err), 0, "%s", err.text);
	cr_assert_eq(rtit_sim_run(r->sim, &st), 0, "%s", st.msg);
	cr_assert_eq(rtit_r_model_finish(&r->model), 0);
	cr_assert_eq(rtit_image_new(&r->img), 0);
	cr_assert_eq(rtit_scenario_image(&r->sc, r->img, &err), 0, "%s", err.text);
}

static void rt_done(struct rt *r)
{
	rtit_sim_free(r->sim);
	rtit_image_free(r->img);
	rtit_scenario_fini(&r->sc);
	free(r->trace);
	free(r->recs);
	free(r->traced);
}

static void rt_cfg_for(struct rtit_flow_cfg *c, struct rt *r)
{
	rtit_flow_cfg_default(c);
	c->mode = r->sc.mode ? r->sc.mode : 64;
	c->cycle_acc = r->ctl & RTIT_R_CTL_CYCLE_ACC;
	c->cmprs_ret = r->ctl & RTIT_R_CTL_CMPRS_RET;
	c->read_mem = rtit_image_read;
	c->mem_opaque = r->img;
}

static const char prog64[] =
	"name t64\ndialect rtit\nmode 64\n"
	"code asm load=0x401000 entry=start\n"
	"    .intel_syntax noprefix\n"
	"    .globl start\n"
	"start:\n"
	"    mov r12d, 50\n"
	"top:\n"
	"    rdrand eax\n"
	"    test eax, 1\n"
	"    jz 1f\n"
	"    call f\n"
	"1:  lea rax, [rip + g]\n"
	"    call rax\n"
	"    int 0x20\n"
	"    dec r12d\n"
	"    jnz top\n"
	"    jmp done\n"
	"f:  call g\n"
	"    ret\n"
	"g:  nop\n"
	"    ret\n"
	"irq: iretq\n"
	"done: nop\n"
	"end\n"
	"handler 0x20 = irq\n"
	"msr RTIT_EVENTS = 0x37\n"
	"msr RTIT_CTL = 0x280d\n"
	"end-at done\n";

Test(flow, verify_whole)
{
	struct ses r;
	struct rtit_flow_cfg c;
	struct rtit_flow_verify_result res;

	run(&r, prog64);
	cfg_for(&c, &r);
	int ok = rtit_flow_verify(r.m.trace, r.m.tlen, &c, r.m.recs, r.m.nrecs, &res);
	cr_assert_eq(ok, 1, "verify: %d, %s %s", ok, res.cmp.mm.what, res.first_error);
	cr_assert_eq(res.stats.errors, 0);
	cr_assert_gt(res.cmp.compared, 500);
	/* only the instructions after the last packet may be missing */
	cr_assert_lt(res.cmp.trailing, 8);
	done(&r);
}

struct collect {
	struct rtit_sim_rec *recs;
	size_t n, cap;
	size_t pos;
	const uint8_t *trace;
	size_t tlen;
};

static void c_rec(void *opaque, const struct rtit_sim_rec *recs, size_t n)
{
	struct collect *k = opaque;
	if (k->n + n > k->cap) {
		k->cap = (k->n + n) * 2;
		k->recs = realloc(k->recs, k->cap * sizeof(*k->recs));
	}
	memcpy(k->recs + k->n, recs, n * sizeof(*recs));
	k->n += n;
}

static ssize_t c_read1(void *opaque, uint8_t *buf, size_t cap)
{
	struct collect *k = opaque;
	if (k->pos == k->tlen || !cap)
		return 0;
	buf[0] = k->trace[k->pos++];
	return 1;
}

Test(flow, one_byte_reads_and_small_batches)
{
	struct ses r;
	struct rtit_flow_cfg c;
	struct rtit_flow_dec *d;
	struct collect a = { 0 }, b = { 0 };

	run(&r, prog64);
	cfg_for(&c, &r);
	c.mem = r.m.trace;
	c.mem_len = r.m.tlen;
	c.on_rec = c_rec;
	c.opaque = &a;
	cr_assert_eq(rtit_flow_dec_new(&d, &c), 0);
	cr_assert_eq(rtit_flow_dec_run(d), 0);
	rtit_flow_dec_free(d);

	b.trace = r.m.trace;
	b.tlen = r.m.tlen;
	c.mem = NULL;
	c.mem_len = 0;
	c.read = c_read1;
	c.read_opaque = &b;
	c.opaque = &b;
	c.batch_cap = 3;
	cr_assert_eq(rtit_flow_dec_new(&d, &c), 0);
	cr_assert_eq(rtit_flow_dec_run(d), 0);
	rtit_flow_dec_free(d);

	cr_assert_gt(a.n, 500);
	cr_assert_eq(a.n, b.n);
	cr_assert_eq(memcmp(a.recs, b.recs, a.n * sizeof(*a.recs)), 0);
	free(a.recs);
	free(b.recs);
	done(&r);
}

Test(flow, corrupted_trace_reports_offset)
{
	struct ses r;
	struct rtit_flow_cfg c;
	struct rtit_flow_verify_result res;

	run(&r, prog64);
	cfg_for(&c, &r);
	cr_assert_gt(r.m.tlen, 40);
	r.m.trace[30] = 0xe0;	/* reserved opcode (RTIT Figure 2) */
	int ok = rtit_flow_verify(r.m.trace, r.m.tlen, &c, r.m.recs, r.m.nrecs, &res);
	cr_assert_eq(ok, 0);
	cr_assert_geq(res.stats.errors, 1);
	cr_assert(strstr(res.first_error, "trace offset 0x"), "%s", res.first_error);
	done(&r);
}

Test(flow, wrong_truth_is_a_mismatch)
{
	struct ses r;
	struct rtit_flow_cfg c;
	struct rtit_flow_verify_result res;

	run(&r, prog64);
	cfg_for(&c, &r);
	/* flip the outcome of a conditional branch in the truth */
	size_t i;
	for (i = r.m.nrecs / 2; i < r.m.nrecs; i++)
		if (r.m.recs[i].kind == RTIT_SIM_INSN && r.m.recs[i].cls == RTIT_IC_COND)
			break;
	cr_assert_lt(i, r.m.nrecs);
	r.m.recs[i].flags ^= RTIT_SIM_F_TAKEN;
	int ok = rtit_flow_verify(r.m.trace, r.m.tlen, &c, r.m.recs, r.m.nrecs, &res);
	cr_assert_eq(ok, 0);
	cr_assert(res.cmp.mm.found);
	cr_assert_eq(res.cmp.mm.truth_index, i);
	done(&r);
}

static const char prog32[] =
	"name t32\ndialect rtit\nmode 32\n"
	"code asm load=0x401000 entry=start\n"
	"    .intel_syntax noprefix\n"
	"    .globl start\n"
	"start:\n"
	"    mov esi, 30\n"
	"top:\n"
	"    rdrand eax\n"
	"    test eax, 2\n"
	"    jz 1f\n"
	"    call f\n"
	"1:  lea eax, [g]\n"
	"    call eax\n"
	"    dec esi\n"
	"    jnz top\n"
	"    jmp done\n"
	"f:  ret\n"
	"g:  nop\n"
	"    ret\n"
	"done: nop\n"
	"end\n"
	"msr RTIT_EVENTS = 0x37\n"
	"msr RTIT_CTL = 0x200d\n"
	"end-at done\n";

Test(flow, verify_32bit)
{
	struct ses r;
	struct rtit_flow_cfg c;
	struct rtit_flow_verify_result res;

	run(&r, prog32);
	cfg_for(&c, &r);
	cr_assert_eq(c.mode, 32);
	int ok = rtit_flow_verify(r.m.trace, r.m.tlen, &c, r.m.recs, r.m.nrecs, &res);
	cr_assert_eq(ok, 1, "verify: %d, %s %s", ok, res.cmp.mm.what, res.first_error);
	cr_assert_gt(res.cmp.compared, 100);
	done(&r);
}

/* The decoded flow is exactly what the encoder traced (PacketEn = 1, no
 * overflow), in order, up to the instructions after the last packet. */
static void exact(const char *path)
{
	struct rt r;
	struct rtit_flow_cfg c;
	struct rtit_flow_dec *d;
	struct collect a = { 0 };
	struct rtit_sim_status st;

	run_scn(&r, path);
	rt_cfg_for(&c, &r);
	c.mem = r.trace;
	c.mem_len = r.tlen;
	c.on_rec = c_rec;
	c.opaque = &a;
	(void)st;
	cr_assert_eq(rtit_flow_dec_new(&d, &c), 0);
	cr_assert_eq(rtit_flow_dec_run(d), 0, "%s: decode errors", path);
	rtit_flow_dec_free(d);
	cr_assert_gt(a.n, 0, "%s: nothing decoded", path);
	/* the oracle's view of the enabling write before the first record
	 * (D13) is approximate: at most one leading record may differ */
	size_t k0 = r.ntraced && r.traced[0].ip != a.recs[0].ip ? 1 : 0;
	cr_assert_leq(a.n + k0, r.ntraced, "%s: %zu decoded, %zu traced", path, a.n, r.ntraced);
	for (size_t i = 0; i < a.n; i++) {
		const struct rtit_sim_rec *x = &a.recs[i], *y = &r.traced[i + k0];
		cr_assert(x->kind == y->kind && x->ip == y->ip,
			  "%s: record %zu: decoded %s 0x%lx, traced %s 0x%lx", path, i,
			  x->kind == RTIT_SIM_INSN ? "insn" : "event", (unsigned long)x->ip,
			  y->kind == RTIT_SIM_INSN ? "insn" : "event", (unsigned long)y->ip);
		if (x->kind == RTIT_SIM_INSN && !(x->pad0 & RTIT_FLOW_A_NEXT_UNKNOWN))
			cr_assert_eq(x->next_ip, y->next_ip, "%s: record %zu next", path, i);
	}
	/* only the instructions after the last packet may be missing */
	cr_assert_leq(r.ntraced - k0 - a.n, 8, "%s: %zu traced records not decoded", path,
		      r.ntraced - k0 - a.n);
	free(a.recs);
	rt_done(&r);
}

Test(flow, exactly_the_traced_records)
{
	static const char *const names[] = {
		"rtit_table19_branches", "rtit_table19_filter", "rtit_table19_context",
		"rtit_mov_cr3", "rtit_ret_compression", "rtit_smi", "rtit_tracestop",
		"rtit_psb_pkt_cnt", "rtit_cycle_accurate",
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char path[512];
		snprintf(path, sizeof(path), "%s/%s.scn", GOLDEN_DIR, names[i]);
		exact(path);
	}
}
