/*
 * run.c - one session: the scenario's program under the simulator, the
 * dialect's encoder on its records, the trace and the ground truth
 * written, the sideband filled in (rtit/session.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "rtit/msr_pt.h"
#include "rtit/msr_rtit.h"
#include "rtit/session.h"
#include "rtit/version.h"

struct session {
	const struct rtit_session_cfg *cfg;
	struct rtit_encoder *enc;
	struct rtit_flow_writer flow;
	XXH3_state_t *xxh;
	uint64_t trace_bytes;
	int io_err;
	uint64_t first_ctl;
	bool have_ctl;
	/* a later enabling write wrote another value (sideband ctl_fixed) */
	bool ctl_varies;
	/* every MSR the encoder took before tracing was first enabled, the
	 * last value of each (the sideband's msr lines) */
	struct rtit_sideband_msr msrs[RTIT_SIDEBAND_MAX_MSRS];
	size_t nmsrs;
	uint64_t records, next_progress;	/* the progress callback's */
};

/* Keeps @v as @msr's value at the first enable (the enabling write
 * included). */
static void keep_msr(struct session *s, uint32_t msr, uint64_t v)
{
	size_t i = 0;
	while (i < s->nmsrs && s->msrs[i].msr != msr)
		i++;
	if (i == RTIT_SIDEBAND_MAX_MSRS)
		return;
	if (i == s->nmsrs)
		s->nmsrs++;
	s->msrs[i].msr = msr;
	s->msrs[i].value = v;
}

/* ------------------------------------------------ the encoder's sink */

static int trace_write(void *opaque, const uint8_t *b, size_t n)
{
	struct session *s = opaque;
	XXH3_64bits_update(s->xxh, b, n);
	s->trace_bytes += n;
	if (s->cfg->trace && fwrite(b, 1, n, s->cfg->trace) != n) {
		s->io_err = errno ? errno : EIO;
		return -RTIT_ERR_IO;
	}
	return 0;
}

static void on_packet(void *opaque, const struct rtit_enc_note *nt)
{
	struct session *s = opaque;
	s->cfg->on_packet(s->cfg->opaque, nt);
}

/* ------------------------------------------- the simulator's consumer */

static void on_batch(const struct rtit_sim_rec *recs, size_t n, void *opaque)
{
	struct session *s = opaque;
	rtit_flow_writer_on_batch(recs, n, &s->flow);
	if (!s->cfg->on_record) {
		rtit_encoder_on_batch(s->enc, recs, n);
	} else {
		for (size_t i = 0; i < n; i++) {
			struct rtit_enc_state es;
			rtit_encoder_on_batch(s->enc, recs + i, 1);
			rtit_encoder_observe(s->enc, &es);
			s->cfg->on_record(s->cfg->opaque, recs + i, &es);
		}
	}
	s->records += n;
	if (s->records >= s->next_progress && s->cfg->progress) {
		struct rtit_enc_stats st;
		rtit_encoder_stats(s->enc, &st);
		struct rtit_session_progress p = { s->records, st.packets, s->trace_bytes };
		s->next_progress = s->records + (1u << 20);
		s->cfg->progress(s->cfg->opaque, &p);
	}
}

/* An MSR whose value a decoder takes from the sideband's msr lines for the
 * whole trace besides the control MSR: the filter's (RTIT: RTIT_EVENTS,
 * RTIT_LIP0-3, 3.3.5-3.3.6; Intel PT: IA32_RTIT_ADDRn_A/B, CR3_MATCH, SDM
 * 33.2.8.5-6).  A later write that changes one makes ctl_fixed 0 (D142). */
static bool filter_msr(uint32_t msr)
{
	return msr == RTIT_R_MSR_EVENTS || (msr >= RTIT_R_MSR_LIP0 && msr <= RTIT_R_MSR_LIP3) ||
	       msr == RTIT_PT_MSR_CR3_MATCH ||
	       (msr >= RTIT_PT_MSR_ADDR0_A && msr < RTIT_PT_MSR_ADDR0_A + 8);
}

/* Whether @v is not the value kept for @msr (before the first enable). */
static bool msr_changed(const struct session *s, uint32_t msr, uint64_t v)
{
	for (size_t i = 0; i < s->nmsrs; i++)
		if (s->msrs[i].msr == msr)
			return s->msrs[i].value != v;
	return v != 0;
}

static int msr_write(void *opaque, uint32_t msr, uint64_t v, const struct rtit_sim_rec *ctx)
{
	struct session *s = opaque;
	bool had = s->have_ctl;
	if (msr == rtit_encoder_ctl_msr(s->enc) && !s->have_ctl &&
	    rtit_encoder_ctl_trace_en(s->enc, v)) {
		s->first_ctl = v;
		s->have_ctl = true;
	}
	int r = rtit_encoder_msr_write(s->enc, msr, v, ctx);
	if (!had && r == 0)
		keep_msr(s, msr, v);
	if (had && r == 0 && msr == rtit_encoder_ctl_msr(s->enc) &&
	    rtit_encoder_ctl_trace_en(s->enc, v) && v != s->first_ctl)
		s->ctl_varies = true;
	if (had && r == 0 && filter_msr(msr) && msr_changed(s, msr, v))
		s->ctl_varies = true;
	return r;
}

static int msr_read(void *opaque, uint32_t msr, uint64_t *v, const struct rtit_sim_rec *ctx)
{
	struct session *s = opaque;
	return rtit_encoder_msr_read(s->enc, msr, v, ctx);
}

static void on_pebs(void *opaque, const struct rtit_sim_pebs *p, const struct rtit_sim_rec *ctx)
{
	struct session *s = opaque;
	rtit_encoder_on_pebs(s->enc, p, ctx);
}

/* ------------------------------------------------------------ helpers */

/* XXH3-64 in canonical (big-endian) hex, as the sideband writes it. */
static void hex_canonical(char out[17], uint64_t h)
{
	XXH64_canonical_t c;
	XXH64_canonicalFromHash(&c, h);
	for (int i = 0; i < 8; i++)
		snprintf(out + 2 * i, 3, "%02x", c.digest[i]);
}

/* The encoder with the scenario's param lines.  0 or INPUT. */
static int make_encoder(struct session *s, struct rtit_session_result *res)
{
	const struct rtit_scenario *sc = s->cfg->sc;
	int ret = rtit_encoder_new(&s->enc, sc->dialect);
	if (ret < 0) {
		snprintf(res->msg, sizeof(res->msg), "%s: %s", sc->path, rtit_errstr(ret));
		return RTIT_SESSION_INPUT;
	}
	/* a program that takes VM exits is a guest: it starts in VMX
	 * non-root operation unless a param line says otherwise (D48) */
	for (size_t i = 0; i < sc->nevents; i++)
		if (sc->events[i].ev.kind == RTIT_EV_VMEXIT)
			rtit_encoder_set_guest(s->enc, true);
	/* Intel PT: the errata of the CPU the scenario claims, before the
	 * param lines that may switch one off (D100) */
	char ce[256];
	if (sc->dialect == RTIT_DIALECT_PT && sc->cpu[0] &&
	    rtit_encoder_param_set(s->enc, "cpu", sc->cpu, ce, sizeof(ce)) < 0) {
		snprintf(res->msg, sizeof(res->msg), "%s: cpu: %s", sc->path, ce);
		return RTIT_SESSION_INPUT;
	}
	for (size_t i = 0; i < sc->nparams; i++) {
		char e[256];
		if (rtit_encoder_param_set(s->enc, sc->params[i].key, sc->params[i].value, e,
					   sizeof(e)) < 0) {
			snprintf(res->msg, sizeof(res->msg), "%s:%d: %s", sc->path,
				 sc->params[i].line, e);
			return RTIT_SESSION_INPUT;
		}
	}
	return RTIT_SESSION_OK;
}

/* The simulator, set up from the scenario, its consumer the session.
 * 0 or INPUT. */
static int make_sim(struct session *s, struct rtit_sim **simp, struct rtit_session_result *res)
{
	const struct rtit_scenario *sc = s->cfg->sc;
	struct rtit_sim_config cfg;
	struct rtit_scn_error err;
	int ret;

	rtit_sim_config_default(&cfg);
	rtit_scenario_config(sc, &cfg);
	cfg.deliver = s->cfg->deliver;
	cfg.consumer.on_batch = on_batch;
	cfg.consumer.msr_write = msr_write;
	cfg.consumer.msr_read = msr_read;
	cfg.consumer.on_pebs = on_pebs;
	cfg.consumer.opaque = s;
	rtit_encoder_set_platform(s->enc, (uint8_t)cfg.cpl, cfg.cr3, cfg.cr0, (uint8_t)cfg.mode);
	if ((ret = rtit_sim_new(simp, &cfg)) < 0) {
		snprintf(res->msg, sizeof(res->msg), "%s: cannot start the simulator: %s",
			 sc->path, rtit_errstr(ret));
		return RTIT_SESSION_INPUT;
	}
	if (rtit_scenario_setup(sc, *simp, &err) < 0) {
		snprintf(res->msg, sizeof(res->msg), "%s", err.text);
		return RTIT_SESSION_INPUT;
	}
	/* RFLAGS.IF as the scenario set it */
	rtit_encoder_set_if(s->enc, rtit_sim_rflags(*simp) & RTIT_SIM_RFLAGS_IF);
	return RTIT_SESSION_OK;
}

static int cmp_msr(const void *a, const void *b)
{
	uint32_t x = ((const struct rtit_sideband_msr *)a)->msr;
	uint32_t y = ((const struct rtit_sideband_msr *)b)->msr;
	return (x > y) - (x < y);
}

/* What the decoder takes from the scenario besides the code: the handlers
 * (labels resolved in the loaded program) and whether RTIT_CTL is written
 * from outside; the trace MSRs at the first enable, by number. */
static void sideband_scenario(const struct session *s, const struct rtit_sim *sim,
			      struct rtit_sideband *sb)
{
	const struct rtit_scenario *sc = s->cfg->sc;
	for (size_t i = 0; i < sc->nhandlers && sb->nhandlers < RTIT_SIDEBAND_MAX_HANDLERS; i++) {
		uint64_t v = sc->handlers[i].ip.value;
		if (sc->handlers[i].ip.label[0] &&
		    rtit_sim_symbol(sim, sc->handlers[i].ip.label, &v) < 0)
			continue;
		sb->handlers[sb->nhandlers].vector = sc->handlers[i].vector;
		sb->handlers[sb->nhandlers++].ip = v;
	}
	bool external = false;
	for (size_t i = 0; i < sc->nevents; i++) {
		if (sc->events[i].ev.kind != RTIT_EV_MSR_WRITE_EXTERNAL)
			continue;
		external = true;
		if (sc->events[i].ev.msr == RTIT_R_MSR_CTL)
			sb->external_ctl = true;
	}
	/* D137: only the program's own writes are seen here */
	sb->ctl_fixed = s->have_ctl ? !s->ctl_varies && !external : -1;
	memcpy(sb->msrs, s->msrs, s->nmsrs * sizeof(s->msrs[0]));
	sb->nmsrs = s->nmsrs;
	qsort(sb->msrs, sb->nmsrs, sizeof(sb->msrs[0]), cmp_msr);
}

/* The sideband of the run (docs/formats.md). */
static void fill_sideband(const struct session *s, const struct rtit_sim *sim,
			  struct rtit_session_result *res)
{
	const struct rtit_scenario *sc = s->cfg->sc;
	struct rtit_sideband *sb = &res->sb;

	rtit_sideband_init(sb);
	snprintf(sb->version, sizeof(sb->version), "%s", RTITSIM_VERSION_STRING);
	snprintf(sb->scenario, sizeof(sb->scenario), "%s", sc->path);
	snprintf(sb->name, sizeof(sb->name), "%s", sc->name);
	snprintf(sb->cpu, sizeof(sb->cpu), "%s", sc->cpu);
	sb->mode = sc->mode ? sc->mode : 64;
	/* A program (not a scenario): where it is, for `rtitsim decode`. */
	if (s->cfg->image && !strcmp(sc->path, "<program>")) {
		char *abs = realpath(s->cfg->image, NULL);
		snprintf(sb->image, sizeof(sb->image), "%s", abs ? abs : s->cfg->image);
		free(abs);
	}
	/* the dialect, the trace configuration, the errata fired */
	rtit_encoder_sideband(s->enc, s->first_ctl, sb);
	for (size_t i = 0; i < sc->nparams && sb->nparams < RTIT_SIDEBAND_MAX_PARAMS; i++) {
		snprintf(sb->params[sb->nparams].key, sizeof(sb->params[0].key), "%s",
			 sc->params[i].key);
		snprintf(sb->params[sb->nparams++].value, sizeof(sb->params[0].value), "%s",
			 sc->params[i].value);
	}
	/* RTIT: CR0.PG where the run starts (D80, D93): RTIT has no PSB+ that
	 * states it, and its PIP at a MOV CR0 is sent only when PG changes
	 * (RTIT 4.2.10), so the decoder must know it from here */
	if (sb->dialect == RTIT_DIALECT_RTIT && !rtit_sideband_param(sb, "cr0_pg") &&
	    sb->nparams < RTIT_SIDEBAND_MAX_PARAMS) {
		struct rtit_sim_config cfg;
		rtit_sim_config_default(&cfg);
		rtit_scenario_config(sc, &cfg);
		snprintf(sb->params[sb->nparams].key, sizeof(sb->params[0].key), "cr0_pg");
		snprintf(sb->params[sb->nparams++].value, sizeof(sb->params[0].value), "%d",
			 (int)(cfg.cr0 >> 31 & 1));	/* CR0.PG, SDM Vol. 3 2.5 */
	}
	sb->trace_bytes = res->trace_bytes;
	hex_canonical(sb->trace_xxh3, res->trace_digest);
	sb->flow_records = res->flow_records;
	hex_canonical(sb->flow_xxh3, res->flow_digest);
	sb->instructions = res->st.insns;
	sb->events = res->st.events;
	sb->packets = res->stats.packets;
	sb->psbs = res->stats.psbs;
	sb->overflows = (int64_t)res->stats.overflows;
	rtit_sideband_set_stop(sb, res->st.msg);
	sideband_scenario(s, sim, sb);
}

/* A process run: its mappings, exit status and system calls. */
static void process_sideband(struct rtit_sim *sim, struct rtit_session_result *res)
{
	struct rtit_sideband *sb = &res->sb;
	size_t n;
	const struct rtit_sim_mapping *m = rtit_sim_mappings(sim, &n);
	res->process = true;
	rtit_sim_process_info(sim, &res->proc);
	/* every mapping (D133): out of memory leaves the list short of
	 * mmaps_total, which a decoder refuses */
	for (size_t i = 0; i < n; i++) {
		struct rtit_sideband_mmap o = {
			.addr = m[i].addr, .size = m[i].size, .offset = m[i].offset,
			.prot = m[i].prot, .at = m[i].at,
		};
		snprintf(o.build_id, sizeof(o.build_id), "%s", m[i].build_id);
		snprintf(o.path, sizeof(o.path), "%s", m[i].path);
		if (rtit_sideband_add_mmap(sb, &o) < 0)
			break;
	}
	sb->mmaps_total = n;
	sb->exit_status = res->proc.exited ? res->proc.exit_status : -1;
	sb->syscalls = res->proc.syscalls;
}

/* Runs the simulator and finishes the encoder and the writers. */
static void run_and_finish(struct session *s, struct rtit_sim *sim,
			   struct rtit_session_result *res)
{
	const char *path = s->cfg->sc->path;
	if (s->cfg->image && !strcmp(path, "<program>"))
		path = s->cfg->image;	/* a program run: name the program */
	struct rtit_enc_state st;

	if (s->cfg->on_record) {	/* the state before the first record */
		rtit_encoder_observe(s->enc, &st);
		s->cfg->on_record(s->cfg->opaque, NULL, &st);
	}
	int ret = s->cfg->run ? s->cfg->run(sim, &res->st) : rtit_sim_run(sim, &res->st);
	int fin = rtit_encoder_finish(s->enc);
	if (s->cfg->on_record) {	/* ... and after the end's drain */
		rtit_encoder_observe(s->enc, &st);
		s->cfg->on_record(s->cfg->opaque, NULL, &st);
	}

	res->ran = true;

	rtit_encoder_stats(s->enc, &res->stats);
	res->trace_digest = XXH3_64bits_digest(s->xxh);
	int fw = rtit_flow_writer_fini(&s->flow, &res->flow_digest);
	res->trace_bytes = s->trace_bytes;
	res->flow_records = s->flow.count;
	res->first_ctl = s->first_ctl;
	res->cycle_acc = rtit_encoder_cycle_acc(s->enc, s->first_ctl);
	if (ret < 0) {
		snprintf(res->msg, sizeof(res->msg), "%s: the guest did not end normally: %s",
			 path, res->st.msg);
		res->status = RTIT_SESSION_RUN;
	}
	if (fin < 0 || fw < 0 || s->io_err) {
		snprintf(res->io_msg, sizeof(res->io_msg), "%s: writing the outputs failed: %s",
			 path, s->io_err ? strerror(s->io_err) :
			 fw < 0 && s->flow.os_err ? strerror(s->flow.os_err) :
			 rtit_errstr(fin < 0 ? fin : fw));
		res->status = RTIT_SESSION_IO;
		res->io_errno = s->io_err ? s->io_err : s->flow.os_err;
	}
	fill_sideband(s, sim, res);
	if (s->cfg->sc->code_kind == RTIT_SCN_CODE_PROCESS)
		process_sideband(sim, res);
}

void rtit_session_result_fini(struct rtit_session_result *res)
{
	if (res)
		rtit_sideband_fini(&res->sb);
}

int rtit_session_run(const struct rtit_session_cfg *cfg, struct rtit_session_result *res)
{
	struct session s = { .cfg = cfg, .next_progress = 1u << 20 };
	struct rtit_sim *sim = NULL;

	memset(res, 0, sizeof(*res));
	if (!cfg || !cfg->sc) {
		snprintf(res->msg, sizeof(res->msg), "no scenario");
		return res->status = RTIT_SESSION_INPUT;
	}
	if ((res->status = make_encoder(&s, res)) != RTIT_SESSION_OK)
		goto out;
	s.xxh = XXH3_createState();
	if (!s.xxh || XXH3_64bits_reset(s.xxh) != XXH_OK ||
	    rtit_flow_writer_init_version(&s.flow, cfg->flow_bin, cfg->flow_txt,
					  cfg->flow_version ? cfg->flow_version : RTIT_FLOW_V1,
					  true) < 0) {
		snprintf(res->io_msg, sizeof(res->io_msg), "%s: out of memory", cfg->sc->path);
		res->status = RTIT_SESSION_IO;
		goto out;
	}
	struct rtit_enc_sink sink = { .write = trace_write,
				      .on_packet = cfg->on_packet ? on_packet : NULL,
				      .opaque = &s };
	int ret = rtit_encoder_start(s.enc, &sink);
	if (ret < 0) {
		snprintf(res->msg, sizeof(res->msg), "%s: bad encoder parameters: %s",
			 cfg->sc->path, rtit_errstr(ret));
		res->status = RTIT_SESSION_INPUT;
		goto out;
	}
	if ((res->status = make_sim(&s, &sim, res)) != RTIT_SESSION_OK)
		goto out;
	run_and_finish(&s, sim, res);
out:
	if (s.flow.xxh)		/* not finished: an early failure */
		rtit_flow_writer_fini(&s.flow, NULL);
	if (s.xxh)
		XXH3_freeState(s.xxh);
	rtit_sim_free(sim);
	rtit_encoder_free(s.enc);
	return res->status;
}
