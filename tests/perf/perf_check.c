/*
 * perf_check.c - compares what Linux perf's Intel PT decoder (perf 6.1,
 * an independent decoder) reports for an rtitsim trace with the
 * simulator's ground-truth flow, instruction by instruction.
 *
 *   perf_check PREFIX SCRIPT_OUTPUT [--events EVENTS_OUTPUT]
 *              [--may-be-empty] [--mutate-flow N]
 *
 * reads PREFIX.flow, PREFIX.sideband (the number of overflows,
 * IA32_RTIT_CTL) and the output of
 *
 *   perf script --itrace=bi1ieo -F event,ip,addr,flags
 *
 * on the perf.data `rtitsim perf-data` made of the run: one "instructions"
 * sample per instruction perf decoded (period 1), "branches" samples
 * "FROM => TO" with their flags, and the decoder's errors ("instruction
 * trace error ... code N: TEXT", tools/perf/util/intel-pt-decoder
 * intel_pt_err_msgs).
 *
 * Between an enable (a branch "tr strt" from 0, after an overflow the
 * next instruction) and the next disable ("tr end") perf's instructions
 * must be the flow's one by one; across a disabled stretch the flow is
 * searched forward, as tests/libipt/ptflow_check.c does.  perf, like
 * libipt, takes the FUP of an INT n or ENCLU (the CLIP, Table 33-23 and
 * Table 33-55 case 17) with its TIP as an asynchronous branch from that
 * IP and does not list the instruction: a branch whose FROM is not the
 * instruction perf listed last is asynchronous, and an INT n or ENCLU of
 * the flow at FROM counts as matched.
 *
 * Errors: an "Overflow packet" error (code 7) ends a segment, and perf
 * must report no more of them than the sideband's overflows; any other
 * error is a failure unless every instruction of the flow was matched
 * before it (perf decoding on past the end of what ran).  A trace perf
 * decodes no instruction of is a failure, unless --may-be-empty says
 * nothing was traced.
 *
 * --mutate-flow N adds 1 to the IP of the flow's instruction N (from 0)
 * before comparing: the self-test that a wrong flow fails.
 *
 * Event Trace (when IA32_RTIT_CTL has EventEn; --events: the output of
 *   perf script --itrace=Ie -F event,ip,flags,synth) and PEBS ("ppp"
 * samples of the aux-output event, --itrace=o): perf's CFE.INTR (vector,
 * EVD.PFA), CFE.IRET, CFE.SMI/RSM, IF changes (iflag, the new IF) and
 * PEBS records (eventing IP) must be the flow's, in its order, and, when
 * the trace did not overflow, every one the segments perf decoded cover
 * must be among them (compare_items).
 *
 * Exit 0 when everything perf decoded matched, 1 on a mismatch or an
 * error (first one printed), 2 on bad input.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtit/sim.h"
#include "runfiles.h"

/* asynchronous branches between two instructions perf lists, at most */
#define MAX_ASYNC 4

/* intel_pt_err_msgs: INTEL_PT_ERR_OVR */
#define PERF_ERR_OVERFLOW 7

struct perf_insn {
	uint64_t ip;
	bool seg_start;		/* first after an enable, disable or overflow */
	/* the asynchronous branches since the last instruction: their FROMs
	 * (an EEXIT's FUP + TIP to an INT n's, say) */
	uint8_t nasync;
	uint64_t async_from[MAX_ASYNC];
};

struct perf_err {
	size_t at;		/* instructions perf listed before it */
	int code;
	char text[160];
};

struct flow {
	const uint64_t *ips;
	const uint8_t *cls;
	size_t n;
};

/*
 * Matches perf's instructions i..j-1 with the flow from position p: an
 * INT n or ENCLU at the FROM of an asynchronous branch before an
 * instruction (of each, in order) is skipped (counted in *async).  Returns the first
 * instruction that does not match (j when all do); *q is the flow
 * position after the last match, flow_at[t] the one after instruction t.
 */
static size_t match_seg(const struct flow *fl, const struct perf_insn *d, size_t i, size_t j,
			size_t p, size_t *q, size_t *flow_at, size_t *async)
{
	size_t t = i;
	*q = p;
	for (; t < j && *q < fl->n; t++) {
		size_t x = *q;
		for (unsigned a = 0; a < d[t].nasync && x < fl->n; a++)
			if (fl->ips[x] == d[t].async_from[a] && fl->ips[x] != d[t].ip &&
			    (fl->cls[x] == RTIT_IC_INT || fl->cls[x] == RTIT_IC_ENCLU)) {
				x++;
				if (async)
					++*async;
			}
		if (x >= fl->n || fl->ips[x] != d[t].ip)
			break;
		*q = x + 1;
		if (flow_at)
			flow_at[t] = *q;
	}
	return t;
}

/* The last whitespace-separated hex number of s before end (or NULL). */
static bool last_hex(const char *s, const char *end, uint64_t *v)
{
	while (end > s && end[-1] == ' ')
		end--;
	const char *p = end;
	while (p > s && p[-1] != ' ')
		p--;
	if (p == end)
		return false;
	char *e;
	*v = strtoull(p, &e, 16);
	return e == end;
}

/* The sideband's overflow count and IA32_RTIT_CTL. */
static void read_sideband(const char *prefix, unsigned *overflows, uint64_t *ctl)
{
	char path[1024], line[256];
	unsigned long long v;
	*overflows = 0;
	*ctl = 0;
	snprintf(path, sizeof(path), "%s.sideband", prefix);
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "overflows %u", overflows) != 1 &&
		    sscanf(line, "ia32_rtit_ctl %llx", &v) == 1)
			*ctl = v;
	fclose(f);
}

/*
 * Event Trace and PEBS, perf's and the flow's: an interrupt, exception,
 * NMI or INT n (CFE.INTR with its vector, and the page-fault address of
 * EVD.PFA), an IRET (CFE.IRET), an SMI and its RSM (CFE.SMI, CFE.RSM), a change of RFLAGS.IF (MODE.Exec's IF bit;
 * vector: the new IF), a PEBS record (its eventing IP).  pos: for the
 * flow's, the number of the flow's instructions before it (for one an
 * instruction makes, that instruction's index), and whether perf's
 * segments cover it (expected).
 */
enum item_kind { IT_INTR, IT_IRET, IT_IF, IT_PEBS, IT_SMI, IT_RSM };

struct item {
	uint8_t kind;		/* enum item_kind */
	uint8_t vector;
	bool has_pfa;
	bool by_insn;		/* made by the instruction at pos */
	bool any_ip;		/* perf's CFE with IP = 0: its IP is perf's last one */
	bool optional;		/* perf's first IF change after the start or an
				 * overflow: from IF unknown, perf's 0, so maybe
				 * no change */
	bool expected;
	uint64_t ip, pfa;
	size_t pos;
};

struct items {
	struct item *v;
	size_t n, cap;
};

static void item_add(struct items *l, struct item it)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 64;
		l->v = realloc(l->v, l->cap * sizeof(*l->v));
	}
	l->v[l->n++] = it;
}

static const char *const item_names[] = {"CFE.INTR", "CFE.IRET", "IF change", "PEBS record",
					 "CFE.SMI", "CFE.RSM"};

/*
 * The flow's items: an EventEn trace has a CFE.INTR for every interrupt,
 * exception, NMI and INT n, a CFE.IRET for every IRET, a CFE.SMI and
 * CFE.RSM for SMIs (Table 33-59 cases 1-9), and a MODE.Exec for every change of RFLAGS.IF (33.4.2.8);
 * PEBS records are RTIT_EV_PEBS events (value: the eventing IP).  IF is
 * taken as 0 before the first record (RFLAGS' reset value 2); a change
 * there is not expected (items_expect), since the scenario may have set
 * IF before the run.
 */
static void flow_items(const struct rtit_sim_rec *recs, size_t n, struct items *et, struct items *pebs)
{
	bool iflag = false;
	size_t pos = 0;
	for (size_t i = 0; i < n; i++) {
		const struct rtit_sim_rec *r = &recs[i];
		bool insn = r->kind == RTIT_SIM_INSN;
		struct item it = {.by_insn = insn, .ip = r->ip, .pos = pos};
		if (!insn && (r->cls == RTIT_EV_EXCEPTION || r->cls == RTIT_EV_EXT_INTERRUPT ||
			      r->cls == RTIT_EV_NMI)) {
			it.kind = IT_INTR;
			it.vector = r->cls == RTIT_EV_NMI ? 2 : r->vector;
			it.has_pfa = r->cls == RTIT_EV_EXCEPTION && r->vector == 14;
			it.pfa = r->value;
			item_add(et, it);
		}
		if (insn && r->cls == RTIT_IC_INT) {
			it.kind = IT_INTR;
			it.vector = r->vector;
			item_add(et, it);
		}
		if (!insn && (r->cls == RTIT_EV_SMI || r->cls == RTIT_EV_RSM)) {
			it.kind = r->cls == RTIT_EV_SMI ? IT_SMI : IT_RSM;
			item_add(et, it);
		}
		if (insn && r->cls == RTIT_IC_IRET) {
			it.kind = IT_IRET;
			item_add(et, it);
		}
		if (!insn && r->cls == RTIT_EV_PEBS) {
			it.kind = IT_PEBS;
			it.ip = r->value;
			item_add(pebs, it);
		} else if (!!(r->flags & RTIT_SIM_F_IF) != iflag) {
			iflag = !iflag;
			it.kind = IT_IF;
			it.vector = iflag;
			item_add(et, it);
		}
		pos += insn;
	}
}

/* An item is expected from perf when perf's segments cover it: made by
 * an instruction of a segment or between two, but not by its first
 * (after an overflow its packets may be lost, or come before the enable)
 * or its last (a transfer that disables sends no MODE.Exec, 33.4.2.8). */
static void items_expect(struct items *l, const size_t *seg_from, const size_t *seg_to, size_t nseg)
{
	for (size_t i = 0; i < l->n; i++) {
		struct item *it = &l->v[i];
		for (size_t s = 0; s < nseg && !it->expected; s++)
			it->expected = it->pos > seg_from[s] &&
				       it->pos + it->by_insn < seg_to[s];
	}
}

static bool item_equal(const struct item *a, const struct item *b)
{
	return a->kind == b->kind && (a->ip == b->ip || a->any_ip || b->any_ip) &&
	       a->vector == b->vector &&
	       (!a->has_pfa || !b->has_pfa || a->pfa == b->pfa);
}

/*
 * Whether perf's items got[i..] can be the flow's want[j..] in order (a
 * subsequence), every expected one among them, perf's optional ones
 * possibly none of the flow's: ok[i][j] = (want[j] not expected and
 * ok[i][j+1]) or (got[i] = want[j] and ok[i+1][j+1]) or (got[i] optional
 * and ok[i+1][j]).  Items repeat (a loop's INT n where perf decoded and
 * where it did not), so no greedy choice will do.  -1 when too large.
 */
static int items_align(const struct items *got, const struct items *want)
{
	size_t n = got->n, m = want->n, w = m + 1;
	if ((n + 1) > (64u << 20) / w)
		return -1;
	uint8_t *ok = malloc((n + 1) * w);
	if (!ok)
		return -1;
	for (size_t i = n + 1; i-- > 0;)
		for (size_t j = m + 1; j-- > 0;) {
			const struct item *g = i < n ? &got->v[i] : NULL, *x = j < m ? &want->v[j] : NULL;
			bool v;
			if (!g)
				v = !x || (!x->expected && ok[i * w + j + 1]);
			else
				v = (x && !x->expected && ok[i * w + j + 1]) ||
				    (x && item_equal(g, x) && ok[(i + 1) * w + j + 1]) ||
				    (g->optional && ok[(i + 1) * w + j]);
			ok[i * w + j] = v;
		}
	int r = ok[0];
	free(ok);
	return r;
}

/*
 * perf's items must be the flow's, in the flow's order (a subsequence:
 * perf may also report some where its segments begin or end), and perf
 * must report every item its segments cover (items_align).  0, or 1
 * after printing where a first-match walk finds the first difference.
 */
static int compare_items(const char *prefix, const char *what, const struct items *got,
			 const struct items *want)
{
	size_t j = 0;
	if (getenv("PERF_CHECK_VERBOSE") && *getenv("PERF_CHECK_VERBOSE") == '2') {
		for (size_t i = 0; i < want->n; i++)
			fprintf(stderr, "  flow %s at 0x%" PRIx64 " vector %u pos %zu%s\n",
				item_names[want->v[i].kind], want->v[i].ip, want->v[i].vector,
				want->v[i].pos, want->v[i].expected ? " expected" : "");
		for (size_t i = 0; i < got->n; i++)
			fprintf(stderr, "  perf %s at 0x%" PRIx64 " vector %u\n", item_names[got->v[i].kind],
				got->v[i].ip, got->v[i].vector);
	}
	if (items_align(got, want) == 1)
		return 0;
	for (size_t i = 0; i <= got->n; i++) {
		const struct item *g = i < got->n ? &got->v[i] : NULL;
		/* the first equal one up to the next expected item e */
		size_t e = j, k = j;
		while (e < want->n && !want->v[e].expected)
			e++;
		while (g && k < e && !item_equal(g, &want->v[k]))
			k++;
		if (g && k < want->n && item_equal(g, &want->v[k])) {
			j = k + 1;
			continue;
		}
		if (g && g->optional)
			continue;
		if (e < want->n) {
			const struct item *w = &want->v[e];
			fprintf(stderr, "%s: perf does not report the flow's %s at 0x%" PRIx64
				" (vector %u, after the flow's instruction %zu) among its %s\n",
				prefix, item_names[w->kind], w->ip, w->vector, w->pos, what);
			return 1;
		}
		if (g) {
			fprintf(stderr, "%s: %s %zu of perf's (%s at 0x%" PRIx64 " vector %u) is not in the"
				" flow, in its order\n", prefix, what, i + 1, item_names[g->kind], g->ip,
				g->vector);
			return 1;
		}
	}
	fprintf(stderr, "%s: perf's %s cannot be aligned with the flow's\n", prefix, what);
	return 1;
}

/*
 * perf script --itrace=Ie -F event,ip,flags,synth: "evt:" samples with
 * "cfe: TYPE IP: B vector: V [PFA: 0x...]" (intel_pt_synth_events_sample),
 * and "iflag:" samples with "IFLAG: OLD->NEW" (intel_pt_synth_iflag_chg_
 * sample; only when AUXTRACE_INFO says the PMU has event_trace).  The IP
 * is the line's last number.
 */
static int read_events(const char *path, struct items *et)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	if (!f) {
		fprintf(stderr, "%s: cannot read perf script's output\n", path);
		return -1;
	}
	bool if_known = false;
	while (fgets(line, sizeof(line), f)) {
		char *nl = strchr(line, '\n'), *c, *v, *pfa;
		char *end = nl ? nl : line + strlen(line);
		struct item it = {0};
		if ((c = strstr(line, "instruction trace error")) && (c = strstr(c, " code ")) &&
		    atoi(c + 6) == PERF_ERR_OVERFLOW)
			if_known = false;
		if (!last_hex(line, end, &it.ip))
			continue;
		if (strstr(line, "evt:") && (c = strstr(line, "cfe: "))) {
			c += 5;
			if (!strncmp(c, "INTR ", 5))
				it.kind = IT_INTR;
			else if (!strncmp(c, "IRET ", 5))
				it.kind = IT_IRET;
			else if (!strncmp(c, "SMI ", 4))
				it.kind = IT_SMI;
			else if (!strncmp(c, "RSM ", 4))
				it.kind = IT_RSM;
			else {
				fprintf(stderr, "%s: a CFE type this check does not compare: %s", path, line);
				fclose(f);
				return -1;
			}
			/* IP: 0, a stand-alone CFE (Table 33-49): the sample's IP
			 * is where perf was, not the event's */
			it.any_ip = strstr(c, "IP: 0 ") != NULL;
			if (it.kind == IT_INTR && (v = strstr(c, "vector: ")))
				it.vector = (uint8_t)strtoul(v + 8, NULL, 10);
			if ((pfa = strstr(c, "PFA: ")))
				it.has_pfa = true, it.pfa = strtoull(pfa + 5, NULL, 16);
			item_add(et, it);
		} else if (strstr(line, "iflag:") && (c = strstr(line, "IFLAG: ")) && it.ip) {
			/* (at IP 0: the IF the enable's MODE.Exec gives, no change) */
			/* "IFLAG: OLD->NEW": the new RFLAGS.IF */
			it.kind = IT_IF;
			it.vector = c[10] == '1';
			it.optional = !if_known;
			if_known = true;
			item_add(et, it);
		}
	}
	fclose(f);
	return 0;
}

int main(int argc, char **argv)
{
	struct rtit_sim_rec *recs;
	size_t nrecs;

	bool may_be_empty = false, usage = argc < 3;
	long mutate = -1;
	const char *events_path = NULL;
	for (int a = 3; a < argc && !usage; a++) {
		if (!strcmp(argv[a], "--may-be-empty"))
			may_be_empty = true;
		else if (!strcmp(argv[a], "--mutate-flow") && a + 1 < argc)
			mutate = atol(argv[++a]);
		else if (!strcmp(argv[a], "--events") && a + 1 < argc)
			events_path = argv[++a];
		else
			usage = true;
	}
	if (usage) {
		fprintf(stderr, "usage: perf_check PREFIX SCRIPT_OUTPUT [--events EVENTS_OUTPUT] [--may-be-empty] [--mutate-flow N]\n");
		return 2;
	}
	if (runfiles_read_flow(argv[1], &recs, &nrecs) < 0)
		return 2;

	/* The flow's instructions (events are not instructions). */
	uint64_t *ips = malloc((nrecs + 1) * sizeof(*ips));
	uint8_t *cls = malloc(nrecs + 1);
	size_t nips = 0;
	for (size_t i = 0; i < nrecs; i++)
		if (recs[i].kind == RTIT_SIM_INSN) {
			cls[nips] = recs[i].cls;
			ips[nips++] = recs[i].ip;
		}
	/* The self-test (tests/perf/run_perf_mutations.sh): instruction N's
	 * IP, one byte on, must make the comparison fail. */
	if (mutate >= 0 && (size_t)mutate < nips)
		ips[mutate]++;

	FILE *so = fopen(argv[2], "r");
	if (!so) {
		fprintf(stderr, "%s: cannot read perf script's output\n", argv[2]);
		return 2;
	}
	size_t cap = 4096, n = 0, nerr = 0, overflows = 0, async = 0;
	struct perf_insn *d = malloc(cap * sizeof(*d));
	struct perf_err *errs = malloc(64 * sizeof(*errs));
	bool seg = true;
	uint8_t nasync = 0;
	struct items pebs = {0}, et = {0}, want_pebs = {0}, want_et = {0};
	uint64_t async_from[MAX_ASYNC] = {0};
	char line[1024];
	while (fgets(line, sizeof(line), so)) {
		char *nl = strchr(line, '\n');
		char *end = nl ? nl : line + strlen(line);
		uint64_t from, to;
		char *arrow, *code;
		if ((code = strstr(line, "instruction trace error")) && (code = strstr(code, " code "))) {
			if (nerr < 64) {
				struct perf_err *e = &errs[nerr++];
				e->at = n;
				e->code = atoi(code + 6);
				snprintf(e->text, sizeof(e->text), "%.*s", (int)(end - line), line);
			}
			if (atoi(code + 6) == PERF_ERR_OVERFLOW)
				overflows++;
			seg = true;	/* perf resumes at the next FUP or TIP.PGE */
			nasync = 0;
		} else if ((code = strstr(line, "ppp:")) && code > line && code[-1] != ' ') {
			/* the PEBS event's sample (precise_ip 3): its IP */
			struct item it = {.kind = IT_PEBS};
			if (!last_hex(line, end, &it.ip)) {
				fprintf(stderr, "%s: cannot read a PEBS sample in: %s", argv[2], line);
				return 2;
			}
			item_add(&pebs, it);
		} else if (strstr(line, "instructions:")) {
			if (!last_hex(line, end, &to)) {
				fprintf(stderr, "%s: cannot read an instruction in: %s", argv[2], line);
				return 2;
			}
			if (n == cap) {
				cap *= 2;
				d = realloc(d, cap * sizeof(*d));
			}
			d[n] = (struct perf_insn){.ip = to, .seg_start = seg, .nasync = nasync};
			memcpy(d[n++].async_from, async_from, sizeof(async_from));
			seg = false;
			nasync = 0;
		} else if (strstr(line, "branches:") && (arrow = strstr(line, "=>"))) {
			if (!last_hex(line, arrow, &from) || !last_hex(arrow, end, &to)) {
				fprintf(stderr, "%s: cannot read a branch in: %s", argv[2], line);
				return 2;
			}
			if (strstr(line, "tr strt") || strstr(line, "tr end"))
				seg = true;
			/* the instruction at FROM was not listed: asynchronous */
			else if (from && (!n || seg || nasync || d[n - 1].ip != from) &&
				 nasync < MAX_ASYNC)
				async_from[nasync++] = from;
		}
	}
	fclose(so);

	/* Place each segment in the flow: at the first position, from where
	 * the previous one ended, where all of it matches. */
	struct flow fl = {ips, cls, nips};
	size_t k = 0, matched = 0, rc = 0;
	size_t *flow_at = malloc((n + 1) * sizeof(*flow_at));	/* flow position after perf's insn t */
	size_t *seg_from = malloc((n + 1) * sizeof(*seg_from)), *seg_to = malloc((n + 1) * sizeof(*seg_to));
	size_t nseg = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		while (j < n && !d[j].seg_start)
			j++;
		size_t best = SIZE_MAX, best_len = 0, q = 0;
		for (size_t p = k; p < nips && best == SIZE_MAX; p++) {
			size_t t = match_seg(&fl, d, i, j, p, &q, NULL, NULL);
			if (t == j)
				best = p;
			else if (t - i > best_len)
				best_len = t - i;
		}
		if (best == SIZE_MAX) {
			fprintf(stderr, "%s: perf's instructions %zu-%zu (from 0x%" PRIx64 ") are not in the flow"
				" after instruction %zu; the longest partial match is %zu instructions\n",
				argv[1], i + 1, j, d[i].ip, k, best_len);
			rc = 1;
			break;
		}
		match_seg(&fl, d, i, j, best, &q, flow_at, &async);
		seg_from[nseg] = best;
		seg_to[nseg++] = q;
		if (getenv("PERF_CHECK_VERBOSE"))
			fprintf(stderr, "perf %zu-%zu (from 0x%" PRIx64 ") is flow %zu-%zu\n", i, j, d[i].ip,
				best, q);
		matched += q - best;
		k = q;
		i = j;
	}
	unsigned sb_ovf;
	uint64_t ctl;
	read_sideband(argv[1], &sb_ovf, &ctl);
	for (size_t e = 0; e < nerr && !rc; e++) {
		/* where in the flow perf was when it reported the error */
		size_t pos = errs[e].at ? flow_at[errs[e].at - 1] : 0;
		if (errs[e].code == PERF_ERR_OVERFLOW && overflows <= sb_ovf)
			continue;
		if (errs[e].code != PERF_ERR_OVERFLOW && pos >= nips)
			continue;
		fprintf(stderr, "%s: perf reports an error after %zu instructions (flow position %zu of %zu%s):%s\n",
			argv[1], errs[e].at, pos, nips,
			errs[e].code == PERF_ERR_OVERFLOW ? ", more overflows than the sideband's" : "",
			errs[e].text);
		rc = 1;
	}
	/* Event Trace (EventEn, IA32_RTIT_CTL bit 31) and PEBS records */
	flow_items(recs, nrecs, &want_et, &want_pebs);
	/* which perf must report: none when the trace overflowed (a block or
	 * a CFE may be lost with the packets while the instructions around
	 * it decode) */
	if (!sb_ovf) {
		items_expect(&want_et, seg_from, seg_to, nseg);
		items_expect(&want_pebs, seg_from, seg_to, nseg);
	}
	if (!rc && events_path && (ctl >> 31 & 1)) {
		if (read_events(events_path, &et) < 0)
			return 2;
		rc = compare_items(argv[1], "Event Trace items", &et, &want_et);
	}
	if (!rc)
		rc = compare_items(argv[1], "PEBS records", &pebs, &want_pebs);
	printf("%s: perf decoded %zu of the flow's %zu instructions, %s (%zu INT n/ENCLU"
	       " as asynchronous branches, %zu overflows); %zu Event Trace items, %zu PEBS records\n",
	       argv[1], matched, nips, rc ? "FAILED" : "all matching", async, overflows, et.n, pebs.n);
	if (!rc && !matched && !may_be_empty) {
		fprintf(stderr, "%s: perf decoded nothing\n", argv[1]);
		rc = 1;
	}
	free(flow_at);
	free(seg_from);
	free(seg_to);
	free(pebs.v);
	free(et.v);
	free(want_pebs.v);
	free(want_et.v);
	free(d);
	free(errs);
	free(ips);
	free(cls);
	free(recs);
	return (int)rc;
}
