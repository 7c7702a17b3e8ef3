/*
 * perf_check.c - compares what Linux perf's Intel PT decoder (perf 6.1,
 * an independent decoder) reports for an rtitsim trace with the
 * simulator's ground-truth flow, instruction by instruction.
 *
 *   perf_check PREFIX SCRIPT_OUTPUT [--may-be-empty]
 *
 * reads PREFIX.flow, PREFIX.sideband (the number of overflows) and the
 * output of
 *
 *   perf script --itrace=bi1ie -F event,ip,addr,flags
 *
 * on the perf.data perfdata_write made of the run: one "instructions"
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
 * Exit 0 when everything perf decoded matched, 1 on a mismatch or an
 * error (first one printed), 2 on bad input.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtit/sim.h"
#include "runfiles.h"

/* intel_pt_err_msgs: INTEL_PT_ERR_OVR */
#define PERF_ERR_OVERFLOW 7

struct perf_insn {
	uint64_t ip;
	bool seg_start;		/* first after an enable, disable or overflow */
	bool after_async;	/* an asynchronous branch from async_from before it */
	uint64_t async_from;
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
 * instruction is skipped (counted in *async).  Returns the first
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
		if (d[t].after_async && fl->ips[x] == d[t].async_from && fl->ips[x] != d[t].ip &&
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

static unsigned sideband_overflows(const char *prefix)
{
	char path[1024], line[256];
	unsigned n = 0;
	snprintf(path, sizeof(path), "%s.sideband", prefix);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "overflows %u", &n) == 1)
			break;
	fclose(f);
	return n;
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

int main(int argc, char **argv)
{
	struct rtit_sim_rec *recs;
	size_t nrecs;

	bool may_be_empty = false, usage = argc < 3;
	long mutate = -1;
	for (int a = 3; a < argc && !usage; a++) {
		if (!strcmp(argv[a], "--may-be-empty"))
			may_be_empty = true;
		else if (!strcmp(argv[a], "--mutate-flow") && a + 1 < argc)
			mutate = atol(argv[++a]);
		else
			usage = true;
	}
	if (usage) {
		fprintf(stderr, "usage: perf_check PREFIX SCRIPT_OUTPUT [--may-be-empty] [--mutate-flow N]\n");
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
	bool seg = true, have_async = false;
	uint64_t async_from = 0;
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
			have_async = false;
		} else if (strstr(line, "instructions:")) {
			if (!last_hex(line, end, &to)) {
				fprintf(stderr, "%s: cannot read an instruction in: %s", argv[2], line);
				return 2;
			}
			if (n == cap) {
				cap *= 2;
				d = realloc(d, cap * sizeof(*d));
			}
			d[n++] = (struct perf_insn){to, seg, have_async, async_from};
			seg = have_async = false;
		} else if (strstr(line, "branches:") && (arrow = strstr(line, "=>"))) {
			if (!last_hex(line, arrow, &from) || !last_hex(arrow, end, &to)) {
				fprintf(stderr, "%s: cannot read a branch in: %s", argv[2], line);
				return 2;
			}
			if (strstr(line, "tr strt") || strstr(line, "tr end"))
				seg = true;
			/* the instruction at FROM was not listed: asynchronous */
			else if (from && (!n || seg || d[n - 1].ip != from)) {
				have_async = true;
				async_from = from;
			}
		}
	}
	fclose(so);

	/* Place each segment in the flow: at the first position, from where
	 * the previous one ended, where all of it matches. */
	struct flow fl = {ips, cls, nips};
	size_t k = 0, matched = 0, rc = 0;
	size_t *flow_at = malloc((n + 1) * sizeof(*flow_at));	/* flow position after perf's insn t */
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
		if (getenv("PERF_CHECK_VERBOSE"))
			fprintf(stderr, "perf %zu-%zu (from 0x%" PRIx64 ") is flow %zu-%zu\n", i, j, d[i].ip,
				best, q);
		matched += q - best;
		k = q;
		i = j;
	}
	unsigned sb_ovf = sideband_overflows(argv[1]);
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
	printf("%s: perf decoded %zu of the flow's %zu instructions, %s (%zu INT n/ENCLU"
	       " as asynchronous branches, %zu overflows)\n", argv[1], matched, nips,
	       rc ? "FAILED" : "all matching", async, overflows);
	if (!rc && !matched && !may_be_empty) {
		fprintf(stderr, "%s: perf decoded nothing\n", argv[1]);
		rc = 1;
	}
	free(flow_at);
	free(d);
	free(errs);
	free(ips);
	free(cls);
	free(recs);
	return (int)rc;
}
