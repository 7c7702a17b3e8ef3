/*
 * session_mem.h - one session (rtit/session.h) with its outputs in memory,
 * for the in-process tests and benchmarks: the trace bytes, the
 * ground-truth records, the sideband and the program image (the flow
 * layer's, from the scenario: no simulator memory is read).  The same
 * pipeline `rtitsim run` uses, so a test or benchmark never wires the
 * simulator and an encoder by hand.
 */
#ifndef RTIT_TESTS_SESSION_MEM_H
#define RTIT_TESTS_SESSION_MEM_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtit/flow.h"
#include "rtit/image.h"
#include "rtit/session.h"

struct session_mem {
	uint8_t *trace;
	size_t tlen;
	struct rtit_sim_rec *recs;
	size_t nrecs;
	struct rtit_image *img;
	struct rtit_session_result res;	/* the sideband in res.sb */
};

/* Runs the scenario @sc; fills *m (free with session_mem_free); the
 * ground truth only with @flow (64 bytes a record: a benchmark's long run
 * goes without).  0, or -1 with one line in @err. */
static inline int session_mem_run(const struct rtit_scenario *sc, struct session_mem *m,
				  bool flow, char *err, size_t errsz)
{
	struct rtit_scn_error serr;
	char *tb = NULL, *fb = NULL;
	size_t tn = 0, fn = 0;
	int rc = -1;

	memset(m, 0, sizeof(*m));
	FILE *tf = open_memstream(&tb, &tn), *ff = flow ? open_memstream(&fb, &fn) : NULL;
	if (!tf || (flow && !ff)) {
		snprintf(err, errsz, "open_memstream failed");
		goto out;
	}
	struct rtit_session_cfg cfg = { .sc = sc, .trace = tf, .flow_bin = ff };
	if (rtit_session_run(&cfg, &m->res) != RTIT_SESSION_OK) {
		snprintf(err, errsz, "session: %.400s%.400s", m->res.msg, m->res.io_msg);
		goto out;
	}
	fclose(tf);
	tf = NULL;
	if (ff) {
		fclose(ff);
		ff = NULL;
		FILE *f = fmemopen(fb, fn, "rb");
		if (!f || rtit_flow_read(f, &m->recs, &m->nrecs) < 0) {
			snprintf(err, errsz, "cannot read the session's flow back");
			if (f)
				fclose(f);
			goto out;
		}
		fclose(f);
	}
	if (rtit_image_new(&m->img) < 0 || rtit_scenario_image(sc, m->img, &serr) < 0) {
		snprintf(err, errsz, "image: %s", serr.text);
		goto out;
	}
	m->trace = (uint8_t *)tb;
	m->tlen = tn;
	tb = NULL;
	rc = 0;
out:
	if (tf)
		fclose(tf);
	if (ff)
		fclose(ff);
	free(tb);
	free(fb);
	return rc;
}

static inline void session_mem_free(struct session_mem *m)
{
	free(m->trace);
	free(m->recs);
	rtit_image_free(m->img);
	memset(m, 0, sizeof(*m));
}

/* The flow decoder's configuration for @m: the sideband's (as `rtitsim
 * decode` takes it), code from the image. */
static inline void session_mem_flow_cfg(const struct session_mem *m, struct rtit_flow_cfg *c)
{
	rtit_flow_cfg_default(c);
	rtit_flow_cfg_from_sideband(c, &m->res.sb);
	c->read_mem = rtit_image_read;
	c->mem_opaque = m->img;
}

#endif
