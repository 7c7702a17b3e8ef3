/*
 * cmd_check.c - `rtitsim check BUNDLE DECODER_OUTPUT`: another decoder's
 * output against a bundle's ground truth (issue 19).  The reference is
 * what the trace establishes: rtitsim's own decode of the bundle, which
 * must first give the bundle's ground truth back (decode --check), each
 * record with the trace offset of its packet.  The decoder's instructions
 * (or branches) are compared with it one by one; past the reference's
 * last record, the decoder may go on only as the ground truth does (a
 * decoder that walks past the last packet, as libipt does).  The first
 * difference is named with its index, the IPs, the trace offset and the
 * packets around it; a summary counts matched, missing and extra.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "cli.h"
#include "decode.h"
#include "util.h"
#include "rtit/flow.h"

enum fmt { F_AUTO, F_IPS, F_PTXED, F_PERF_BRANCHES, F_JSON };

static int rtit_cli_check(const char *bundle, const char *output, int format, bool quiet,
			  bool strict_end);

/* One thing a decoder reported: an instruction IP (@a), or a branch @a =>
 * @b (@b_any: the target not given, a trace end). */
struct item {
	uint64_t a, b;
	bool b_any;
	int line;
};

/* An event, as a decoder reported it or as the trace establishes it
 * (D136): its name (docs/formats.md: the event kinds; ptxed's
 * `interrupt` for any asynchronous transfer, `tsx-abort` for `aborted`),
 * where it happened (ip) and went (next), its payload (vector, PEBS
 * fields); has_* say which of them the format carries. */
struct ev {
	char name[24];
	uint64_t ip, next, eip;
	int vector;		/* -1 none */
	unsigned groups;
	uint32_t digest;
	bool has_ip, has_next, pebs;
	int line;		/* the decoder's */
	uint64_t off;		/* the reference's: trace offset, record */
	size_t rec;
	bool optional;		/* INT n/ENCLU: an event for libipt (D131) */
};

struct evlist {
	struct ev *v;
	size_t n, cap;
};

struct list {
	struct item *v;
	size_t n, cap;
	struct evlist evs;		/* the events it reported */
	size_t notes, errors;		/* what else it reported */
};

static void check_usage(FILE *out)
{
	fputs("usage: rtitsim check BUNDLE DECODER_OUTPUT [options]\n"
	      "\n"
	      "Compares another decoder's output with a bundle's ground truth\n"
	      "(docs/formats.md \"Bundles\"; BUNDLE: its directory, STEM or STEM.trace) and\n"
	      "names the first difference: the instruction's index, the IPs, the trace\n"
	      "offset of the packet behind it and the packets around it.  Then a summary:\n"
	      "instructions matched, missing, extra; events.  DECODER_OUTPUT ('-': stdin):\n"
	      "  ips            one instruction IP a line, hex (`perf script --itrace=i0ns\n"
	      "                 -F ip` writes this; words after the IP are ignored)\n"
	      "  ptxed          libipt's ptxed: 'IP  disassembly' lines, '[...]' notes\n"
	      "  perf-branches  `perf script --itrace=b -F ip,addr`: 'FROM => TO' lines\n"
	      "                 (compared with the taken branches and events)\n"
	      "  json           rtitsim decode --json\n"
	      "\n"
	      "The reference is what the trace establishes: rtitsim's own decode of the\n"
	      "bundle, checked first against the bundle's ground truth.  Past its last\n"
	      "record a decoder may go on as the ground truth does (libipt walks past the\n"
	      "last packet): those are counted, not a difference.  INT n and ENCLU, which\n"
	      "libipt and perf report as an event rather than an instruction, may be left\n"
	      "out (D131).  Events are compared in order (D136): in json by kind, IP,\n"
	      "next IP and payload (vector, PEBS fields); in ptxed, its [interrupt] and\n"
	      "[aborted] lines (with --event:ip, their IPs too); perf-branches shows them\n"
	      "as branches; ips has none.\n"
	      "\n"
	      "  --format auto|ips|ptxed|perf-branches|json   (default auto: from the\n"
	      "                 first lines)\n"
	      "  --strict-end   instructions past the end of the run (where the ground\n"
	      "                 truth ends: the sideband's stop line) are a difference;\n"
	      "                 by default they are counted and not checked (libipt walks\n"
	      "                 on after the last packet into code that never ran)\n"
	      "  -q, --quiet    only the difference and the verdict\n"
	      "\n"
	      "Exit status: 0 the decoder agrees, 1 usage, 2 I/O, 4 bad bundle or\n"
	      "unreadable decoder output (the line named), 5 a difference.\n", out);
}

static int push(struct list *l, struct item it)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 4096;
		struct item *v = realloc(l->v, cap * sizeof(*v));
		if (!v)
			return -1;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = it;
	return 0;
}

/* A hex number at *@p (optional 0x), at least one digit; advances. */
static bool hex_at(const char **p, uint64_t *v)
{
	const char *s = *p;
	char *end;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f') || (*s >= 'A' && *s <= 'F')))
		return false;
	errno = 0;
	*v = strtoull(s, &end, 16);
	if (errno || (*end && *end != ' ' && *end != '\t' && *end != '\n' && *end != '\r'))
		return false;
	*p = end;
	return true;
}

static const char *skip_blanks(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

/* The format of the first line that says: JSON, a branch, ptxed's 16-digit
 * IP followed by an instruction or a '[' note, else IPs. */
static enum fmt sniff(const char *line)
{
	const char *s = skip_blanks(line);
	if (*s == '{')
		return F_JSON;
	if (strstr(s, "=>"))
		return F_PERF_BRANCHES;
	if (*s == '[')
		return F_PTXED;
	size_t n = strspn(s, "0123456789abcdefABCDEF");
	if (n == 16 && (s[16] == ' ' || s[16] == '\t') && *skip_blanks(s + 16) &&
	    *skip_blanks(s + 16) != '\n')
		return F_PTXED;
	return F_IPS;
}

static int push_ev(struct evlist *l, const struct ev *e)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		struct ev *v = realloc(l->v, cap * sizeof(*v));
		if (!v)
			return -1;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = *e;
	return 0;
}

/* The value of JSON key @key ("\"key\":") in @s: a hex string or a
 * number into *@v; false when absent or not one. */
static bool json_num(const char *s, const char *key, uint64_t *v)
{
	const char *p = strstr(s, key);
	char *end;
	if (!p)
		return false;
	p += strlen(key);
	bool quoted = *p == '"';
	p += quoted;
	errno = 0;
	*v = strtoull(p, &end, quoted ? 16 : 10);
	return !errno && end != p && (!quoted || *end == '"');
}

/* A JSON event line: "event", "ip", "next", "vector" or the PEBS fields
 * (docs/formats.md, `rtitsim decode` output).  0, or -1: not one. */
static int parse_json_event(const char *s, int line, struct list *l)
{
	struct ev e = { .vector = -1, .line = line, .has_ip = true, .has_next = true };
	const char *k = strstr(s, "\"event\":\"");
	uint64_t v;
	if (!k || sscanf(k + 9, "%23[^\"]", e.name) != 1 || !json_num(s, "\"ip\":", &e.ip) ||
	    !json_num(s, "\"next\":", &e.next))
		return -1;
	if (json_num(s, "\"vector\":", &v))
		e.vector = (int)v;
	if (json_num(s, "\"eventing_ip\":", &e.eip)) {
		e.pebs = true;
		if (json_num(s, "\"groups\":", &v))
			e.groups = (unsigned)v;
		if (json_num(s, "\"items_digest\":", &v))
			e.digest = (uint32_t)v;
	}
	return push_ev(&l->evs, &e);
}

/* ptxed's event lines (libipt's print_event): `[interrupt]` and
 * `[aborted]`, with --event:ip `, from: IP, to: IP` / `, ip: IP`; other
 * bracketed lines are notes or errors.  0, or -1 out of memory. */
static int parse_ptxed_event(const char *s, int line, struct list *l)
{
	struct ev e = { .vector = -1, .line = line };
	const char *p;
	unsigned long long v;
	if (!strncmp(s, "[interrupt", 10) && (s[10] == ']' || s[10] == ',')) {
		snprintf(e.name, sizeof(e.name), "interrupt");
		if ((p = strstr(s, "from: ")) && sscanf(p + 6, "%llx", &v) == 1)
			e.ip = v, e.has_ip = true;
		if ((p = strstr(s, "to: ")) && sscanf(p + 4, "%llx", &v) == 1)
			e.next = v, e.has_next = true;
	} else if (!strncmp(s, "[aborted", 8) && (s[8] == ']' || s[8] == ',')) {
		snprintf(e.name, sizeof(e.name), "tsx-abort");
		if ((p = strstr(s, "ip: ")) && sscanf(p + 4, "%llx", &v) == 1)
			e.ip = v, e.has_ip = true;
	} else {
		if (strstr(s, "error"))
			l->errors++;
		else
			l->notes++;
		return 0;
	}
	return push_ev(&l->evs, &e);
}

/* A JSON line of `rtitsim decode --json`: an insn's "ip", an event, a
 * note skipped.  0, or -1 when it is not such a line. */
static int parse_json(const char *s, int line, struct list *l)
{
	uint64_t v;
	if (strstr(s, "\"note\":"))
		return l->notes++, 0;
	if (strstr(s, "\"kind\":\"event\""))
		return parse_json_event(s, line, l);
	const char *ip = strstr(s, "\"kind\":\"insn\",\"ip\":\"");
	if (!ip)
		return -1;
	ip += strlen("\"kind\":\"insn\",\"ip\":\"");
	char *end;
	v = strtoull(ip, &end, 16);
	if (*end != '"')
		return -1;
	return push(l, (struct item){ .a = v, .line = line });
}

/* One line of the decoder's output into @l.  0, or -1: not of @f. */
static int parse_line(enum fmt f, const char *s, int line, struct list *l)
{
	uint64_t a, b;
	s = skip_blanks(s);
	if (!*s || *s == '\n' || *s == '#')
		return 0;
	switch (f) {
	case F_JSON:
		return *s == '{' ? parse_json(s, line, l) : -1;
	case F_PTXED:
		if (*s == '[')	/* [interrupt], [enabled], [error ...], ... */
			return parse_ptxed_event(s, line, l);
		if (!hex_at(&s, &a))
			return -1;
		return push(l, (struct item){ .a = a, .line = line });
	case F_PERF_BRANCHES: {
		if (!hex_at(&s, &a))
			return -1;
		s = skip_blanks(s);
		if (strncmp(s, "=>", 2))
			return -1;
		s = skip_blanks(s + 2);
		if (!hex_at(&s, &b))
			return -1;
		if (!a)		/* trace begins: not a branch */
			return l->notes++, 0;
		return push(l, (struct item){ .a = a, .b = b, .b_any = !b, .line = line });
	}
	default:
		if (!hex_at(&s, &a))
			return -1;
		return push(l, (struct item){ .a = a, .line = line });
	}
}

/* Reads the decoder's output.  RTIT_EXIT_OK or the status (a line said). */
static int read_output(const char *path, enum fmt *f, struct list *l)
{
	FILE *in = strcmp(path, "-") ? fopen(path, "r") : stdin;
	char buf[4096];
	int line = 0, st = RTIT_EXIT_OK;

	if (!in) {
		fprintf(stderr, "rtitsim check: %s: cannot read: %s\n", path, strerror(errno));
		return RTIT_EXIT_IO;
	}
	while (fgets(buf, sizeof(buf), in)) {
		line++;
		const char *s = skip_blanks(buf);
		if (*f == F_AUTO && *s && *s != '\n' && *s != '#')
			*f = sniff(s);
		if (parse_line(*f, buf, line, l) < 0) {
			buf[strcspn(buf, "\n")] = 0;
			fprintf(stderr, "rtitsim check: %s:%d: not %s output: '%.80s'\n", path, line,
				*f == F_JSON ? "rtitsim JSON" : *f == F_PTXED ? "ptxed" :
				*f == F_PERF_BRANCHES ? "perf --itrace=b" : "IP-list", buf);
			st = RTIT_EXIT_INPUT;
			break;
		}
	}
	if (st == RTIT_EXIT_OK && ferror(in)) {
		fprintf(stderr, "rtitsim check: %s: cannot read: %s\n", path, strerror(errno));
		st = RTIT_EXIT_IO;
	}
	if (in != stdin)
		fclose(in);
	return st;
}

/* What the decoder is compared with: from decoded records (@off: their
 * trace offsets) or the truth's, instructions or (@branches) taken
 * branches and events, each with the index of its record. */
struct ref {
	uint64_t a, b, off;
	size_t rec;
	bool may_skip;	/* INT n, ENCLU: libipt and perf report an event (D131) */
};

static size_t make_ref(const struct rtit_sim_rec *r, const uint64_t *off, size_t n, bool branches,
		       struct ref *out)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		bool take = r[i].kind == RTIT_SIM_INSN &&
			    (!branches || (r[i].flags & RTIT_SIM_F_TAKEN));
		take |= branches && r[i].kind == RTIT_SIM_EVENT && r[i].ip != r[i].next_ip;
		if (!take)
			continue;
		bool skip = !branches && (r[i].cls == RTIT_IC_INT || r[i].cls == RTIT_IC_ENCLU);
		out[k++] = (struct ref){ r[i].ip, r[i].next_ip, off ? off[i] : 0, i, skip };
	}
	return k;
}

static bool same(const struct ref *r, const struct item *it, bool branches)
{
	return r->a == it->a && (!branches || it->b_any || r->b == it->b);
}

struct verdict {
	size_t matched, skipped, missing, extra, beyond, past_end, last_packet;
	bool differ;
};

/* Lockstep over @ref from *@i and @got from *@j: each equal pair, or a
 * may_skip reference the decoder left out.  Returns the matches. */
static size_t walk(const struct ref *ref, size_t nref, size_t *i, const struct list *got,
		   size_t *j, bool branches, size_t *skipped)
{
	size_t m = 0;
	while (*i < nref && *j < got->n) {
		if (same(&ref[*i], &got->v[*j], branches)) {
			m++, ++*i, ++*j;
		} else if (ref[*i].may_skip && *i + 1 < nref &&
			   same(&ref[*i + 1], &got->v[*j], branches)) {
			++*skipped, ++*i;
		} else if (got->v[*j].b_any) {
			++*j;	/* perf's "IP => 0": the trace ends there, no branch */
		} else {
			break;
		}
	}
	return m;
}

static void report_difference(const struct ref *r, const struct item *g, size_t i, bool branches,
			      const struct rtit_cli_decoded *dec, const char *what)
{
	char rec[256];
	rtit_flow_rec_format(&dec->recs[r->rec], rec, sizeof(rec));
	fprintf(stderr, "rtitsim check: the decoder differs at %s %zu (its line %d): "
		"expected 0x%" PRIx64, what, i, g->line, r->a);
	if (branches)
		fprintf(stderr, " => 0x%" PRIx64, r->b);
	fprintf(stderr, ", got 0x%" PRIx64, g->a);
	if (branches)
		fprintf(stderr, " => 0x%" PRIx64, g->b);
	fprintf(stderr, "\n  expected record: %s\n  trace offset 0x%" PRIx64
		"; the packets around it:\n", rec, r->off);
}

/* Walks @got against @ref, then its rest against @cont (the truth past
 * the reference's end); past the truth's end, instructions are counted
 * (a difference with @strict_end).  Prints the first difference; *@at is
 * the reference index there. */
static void compare(const struct ref *ref, size_t nref, const struct ref *cont, size_t ncont,
		    const struct list *got, bool branches, bool strict_end,
		    const struct rtit_cli_decoded *dec, const char *what, struct verdict *v,
		    size_t *at)
{
	size_t i = 0, j = 0;
	v->matched = walk(ref, nref, &i, got, &j, branches, &v->skipped);
	*at = i;
	if (i < nref && j < got->n) {
		report_difference(&ref[i], &got->v[j], i, branches, dec, what);
		v->differ = true;
		v->missing = nref - i;
		v->extra = got->n - j;
		return;
	}
	/* the decoder stopped early: only the records of the trace's last
	 * packet may be left out (perf stops at it, D131); the offsets only
	 * grow */
	if (i < nref && j == got->n && ref[i].off == ref[nref - 1].off) {
		v->last_packet = nref - i;
		return;
	}
	if (i < nref) {
		fprintf(stderr, "rtitsim check: the decoder ends after %zu %ss; the trace "
			"establishes %zu: the first missing is 0x%" PRIx64 " (trace offset 0x%"
			PRIx64 ")\n", got->n, what, nref - v->skipped, ref[i].a, ref[i].off);
		v->missing = nref - i;
		v->differ = true;
		return;
	}
	/* past the last record the trace confirms: only as the truth goes on */
	size_t k = 0, sk = 0;
	v->beyond = walk(cont, ncont, &k, got, &j, branches, &sk);
	if (j < got->n && k < ncont) {
		fprintf(stderr, "rtitsim check: past the trace's last %s the decoder's %s at its"
			" line %d, 0x%" PRIx64 ", is not the ground truth's 0x%" PRIx64 "\n", what,
			what, got->v[j].line, got->v[j].a, cont[k].a);
		v->extra = got->n - j;
		v->differ = true;
	} else if (j < got->n) {
		v->past_end = got->n - j;
		if (strict_end) {
			fprintf(stderr, "rtitsim check: the decoder goes on past the end of the run"
				" (line %d, 0x%" PRIx64 "): %zu %ss no one executed\n",
				got->v[j].line, got->v[j].a, v->past_end, what);
			v->differ = true;
		}
	}
}

/* The events the trace establishes (the reference's records), as format
 * @f names them (D136): rtitsim's JSON every event record with its
 * payload; ptxed (libipt) an asynchronous transfer (ip != next) as
 * `interrupt` and an RTM abort as `tsx-abort` followed by the
 * `interrupt` of its transfer; and INT n/ENCLU as an optional `interrupt`
 * (libipt reports them so, D131).  Returns the count in @out (room for
 * twice the records). */
static size_t make_evref(const struct rtit_cli_decoded *dec, enum fmt f, struct ev *out)
{
	size_t k = 0;
	for (size_t i = 0; i < dec->n; i++) {
		const struct rtit_sim_rec *r = &dec->recs[i];
		struct ev e = { .ip = r->ip, .next = r->next_ip, .vector = -1, .has_ip = true,
				.has_next = true, .off = dec->offs[i], .rec = i };
		if (r->kind == RTIT_SIM_INSN) {
			if (r->cls != RTIT_IC_INT && r->cls != RTIT_IC_ENCLU)
				continue;
			e.optional = true;
			snprintf(e.name, sizeof(e.name), "interrupt");
			e.vector = r->cls == RTIT_IC_INT ? r->vector : -1;
		} else if (f == F_JSON) {
			snprintf(e.name, sizeof(e.name), "%s",
				 r->cls ? rtit_sim_event_name(r->cls) : "unknown");
			e.pebs = r->cls == RTIT_EV_PEBS;
			if (e.pebs)	/* decode --json's fields (D55) */
				e.eip = r->value, e.groups = r->vector, e.digest = r->msr;
			else if (r->cls)
				e.vector = r->vector;
		} else if (r->cls == RTIT_EV_TSX_ABORT) {
			/* libipt: `aborted`, then the transfer it makes */
			snprintf(e.name, sizeof(e.name), "tsx-abort");
			if (r->ip != r->next_ip) {
				out[k++] = e;
				snprintf(e.name, sizeof(e.name), "interrupt");
			}
		} else if (r->ip != r->next_ip) {
			snprintf(e.name, sizeof(e.name), "interrupt");
		} else {
			continue;	/* nothing libipt reports as an event */
		}
		out[k++] = e;
	}
	return k;
}

/* Whether the decoder's event @g is the expected @x, in the fields @g's
 * format carries (a JSON event carries them all). */
static bool same_ev(const struct ev *x, const struct ev *g, enum fmt f)
{
	if (strcmp(x->name, g->name) || (g->has_ip && g->ip != x->ip) ||
	    (g->has_next && g->next != x->next))
		return false;
	if (f != F_JSON)
		return true;
	return g->vector == x->vector && g->pebs == x->pebs &&
	       (!x->pebs || (g->eip == x->eip && g->groups == x->groups && g->digest == x->digest));
}

static void ev_text(const struct ev *e, char *buf, size_t cap)
{
	int n = snprintf(buf, cap, "%s", e->name);
	if (e->has_ip)
		n += snprintf(buf + n, cap - (size_t)n, " ip 0x%" PRIx64, e->ip);
	if (e->has_next)
		n += snprintf(buf + n, cap - (size_t)n, " next 0x%" PRIx64, e->next);
	if (e->vector >= 0)
		n += snprintf(buf + n, cap - (size_t)n, " vector %d", e->vector);
	if (e->pebs)
		snprintf(buf + n, cap - (size_t)n, " eventing_ip 0x%" PRIx64 " groups %u"
			 " items_digest 0x%08x", e->eip, e->groups, e->digest);
}

struct ev_verdict {
	size_t expected, optional, matched, optional_left, last_packet, past;
	bool differ;
	uint64_t off;		/* where the first difference is */
};

/* The decoder's events against the reference's, in order (D136): a
 * difference at the first that is not the expected one (the expected
 * optional ones may be absent); events of the trace's last packet may be
 * missing at the end, and events past the reference's end are counted
 * when the decoder's instructions went on past it too (D131). */
static void compare_events(const struct ev *x, size_t nx, const struct list *got, enum fmt f,
			   const struct rtit_cli_decoded *dec, bool went_on, struct ev_verdict *v)
{
	size_t i = 0, j = 0;
	char a[256], b[256], rec[256];
	const struct evlist *g = &got->evs;
	for (size_t k = 0; k < nx; k++)
		v->expected += !x[k].optional;
	v->optional = nx - v->expected;
	while (i < nx && j < g->n) {
		if (same_ev(&x[i], &g->v[j], f))
			v->matched++, i++, j++;
		else if (x[i].optional)
			v->optional_left++, i++;
		else
			break;
	}
	while (i < nx && x[i].optional && j == g->n)
		v->optional_left++, i++;
	uint64_t last = dec->n ? dec->offs[dec->n - 1] : 0;
	if (i < nx && j < g->n) {
		ev_text(&x[i], a, sizeof(a));
		ev_text(&g->v[j], b, sizeof(b));
		rtit_flow_rec_format(&dec->recs[x[i].rec], rec, sizeof(rec));
		fprintf(stderr, "rtitsim check: the decoder differs at event %zu (its line %d): "
			"expected %s, got %s\n  expected record: %s\n  trace offset 0x%" PRIx64
			"; the packets around it:\n", i, g->v[j].line, a, b, rec, x[i].off);
		v->differ = true;
		v->off = x[i].off;
	} else if (i < nx) {
		size_t k = i;
		while (k < nx && (x[k].optional || x[k].off == last))
			k++;
		if (k == nx) {
			v->last_packet = nx - i;
			return;
		}
		ev_text(&x[k], a, sizeof(a));
		fprintf(stderr, "rtitsim check: the decoder reports %zu events; the trace establishes"
			" more: the first missing is %s (trace offset 0x%" PRIx64 "); the packets"
			" around it:\n", g->n, a, x[k].off);
		v->differ = true;
		v->off = x[k].off;
	} else if (j < g->n && went_on) {
		v->past = g->n - j;
	} else if (j < g->n) {
		ev_text(&g->v[j], b, sizeof(b));
		fprintf(stderr, "rtitsim check: the decoder reports an event the trace does not"
			" establish (its line %d): %s, after the %zu expected\n", g->v[j].line, b,
			v->matched);
		v->differ = true;
		v->off = UINT64_MAX;
	}
}

/* The reference: the bundle decoded and checked against its truth; the
 * truth itself.  RTIT_EXIT_OK or the status (a line said). */
static int load_reference(const char *stem, struct rtit_cli_decoded *dec,
			  struct rtit_sim_rec **truth, size_t *ntruth)
{
	char trace[1100], flow[1100];
	snprintf(trace, sizeof(trace), "%s.trace", stem);
	snprintf(flow, sizeof(flow), "%s.flow", stem);
	char *av[] = { "decode", trace, "-q", "--check", flow, NULL };
	int st = rtit_cli_decode_collect(5, av, dec);
	if (st != RTIT_EXIT_OK || !dec->matched || dec->nomem) {
		fprintf(stderr, "rtitsim check: %s: rtitsim's own decode does not give the bundle's"
			" ground truth back (decode exit %d): no reference\n", stem, st);
		return st == RTIT_EXIT_IO ? RTIT_EXIT_IO : RTIT_EXIT_INPUT;
	}
	FILE *f = fopen(flow, "rb");
	const char *why = NULL;
	int r = f ? rtit_flow_read_why(f, truth, ntruth, &why) : -RTIT_ERR_IO;
	if (f)
		fclose(f);
	if (r < 0) {
		fprintf(stderr, "rtitsim check: %s: cannot read the flow: %s\n", flow,
			why ? why : rtit_errstr(r));
		return RTIT_EXIT_IO;
	}
	return RTIT_EXIT_OK;
}

static int rtit_cli_check(const char *bundle, const char *output, int format, bool quiet,
			  bool strict_end)
{
	char stem[1024];
	struct rtit_cli_decoded dec = { 0 };
	struct rtit_sim_rec *truth = NULL;
	size_t ntruth = 0;
	struct list got = { 0 };
	enum fmt f = (enum fmt)format;
	struct ref *ref = NULL, *cont = NULL;
	int st;

	if (rtit_cli_bundle_stem(bundle, stem, sizeof(stem)) < 0)
		return RTIT_EXIT_USAGE;
	if ((st = load_reference(stem, &dec, &truth, &ntruth)) != RTIT_EXIT_OK ||
	    (st = read_output(output, &f, &got)) != RTIT_EXIT_OK)
		goto out;
	bool br = f == F_PERF_BRANCHES;
	size_t first_cont = ntruth - (dec.trailing < ntruth ? dec.trailing : ntruth);
	ref = malloc((dec.n + 1) * sizeof(*ref));
	cont = malloc((ntruth - first_cont + 1) * sizeof(*cont));
	if (!ref || !cont) {
		st = RTIT_EXIT_IO;
		goto out;
	}
	size_t nref = make_ref(dec.recs, dec.offs, dec.n, br, ref);
	size_t ncont = make_ref(truth + first_cont, NULL, ntruth - first_cont, br, cont);
	const char *what = br ? "branch" : "instruction";
	struct verdict v = { 0 };
	size_t at = 0;
	compare(ref, nref, cont, ncont, &got, br, strict_end, &dec, what, &v, &at);
	/* the events, in the formats that carry them (D136) */
	struct ev_verdict ev = { 0 };
	struct ev *evref = NULL;
	bool has_events = f == F_JSON || f == F_PTXED;
	if (!v.differ && has_events) {
		if (!(evref = malloc((2 * dec.n + 1) * sizeof(*evref)))) {
			st = RTIT_EXIT_IO;
			goto out;
		}
		compare_events(evref, make_evref(&dec, f, evref), &got, f, &dec,
			       v.beyond + v.past_end > 0, &ev);
		free(evref);
	}
	uint64_t where = v.differ ? (at < nref ? ref[at].off : UINT64_MAX) : ev.off;
	if ((v.differ || ev.differ) && where != UINT64_MAX) {
		size_t len;
		char trace[1100];
		snprintf(trace, sizeof(trace), "%s.trace", stem);
		uint8_t *t = rtit_cli_slurp(trace, &len);
		if (t)
			rtit_cli_packets_around(t, len, where, dec.dialect, dec.cycle_acc);
		free(t);
	}
	bool differ = v.differ || ev.differ;
	if (!quiet || differ) {
		printf("%s: %zu %ss matched (%zu INT n/ENCLU reported as events), %zu missing,"
		       " %zu extra; %zu established by the last packet not listed, %zu past the"
		       " trace's last packet as the ground truth goes on, %zu past the end of the"
		       " run (not checked); ", stem, v.matched, what, v.skipped, v.missing, v.extra,
		       v.last_packet, v.beyond, v.past_end);
		if (has_events && !v.differ)
			printf("events: %zu established (and %zu INT n/ENCLU, which may be reported"
			       " as events), %zu reported, %zu matched (kind, IP, next, payload%s),"
			       " %zu INT n/ENCLU not reported as events, %zu of the last packet not"
			       " reported, %zu past the end", ev.expected, ev.optional, got.evs.n,
			       ev.matched, f == F_PTXED ? " as ptxed gives them" : "",
			       ev.optional_left, ev.last_packet, ev.past);
		else
			printf("events: %s", br ? "compared as branches" : has_events ?
			       "not compared (the instructions differ)" : "this format has none");
		printf("; decoder notes %zu, errors %zu\n", got.notes, got.errors);
	}
	printf("%s: %s\n", stem, differ ? "the decoder differs from the ground truth" :
	       "the decoder agrees with the ground truth");
	st = differ ? RTIT_EXIT_MISMATCH : RTIT_EXIT_OK;
out:
	free(ref);
	free(cont);
	free(got.v);
	free(got.evs.v);
	free(dec.recs);
	free(dec.offs);
	free(truth);
	return st;
}

int rtit_cmd_check(int argc, char **argv)
{
	const char *bundle = NULL, *output = NULL;
	enum fmt f = F_AUTO;
	bool quiet = false, strict_end = false;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			check_usage(stdout);
			return RTIT_EXIT_OK;
		} else if (!strcmp(a, "--format") && i + 1 < argc) {
			static const char *const names[] = { "auto", "ips", "ptxed", "perf-branches", "json" };
			const char *v = argv[++i];
			int k = 0;
			while (k < 5 && strcmp(v, names[k]))
				k++;
			if (k == 5) {
				fprintf(stderr, "rtitsim check: --format takes auto, ips, ptxed, "
					"perf-branches or json, not '%s'\n", v);
				return RTIT_EXIT_USAGE;
			}
			f = (enum fmt)k;
		} else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
			quiet = true;
		} else if (!strcmp(a, "--strict-end")) {
			strict_end = true;
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "rtitsim check: unknown or incomplete option '%s' (try --help)\n", a);
			return RTIT_EXIT_USAGE;
		} else if (!bundle) {
			bundle = a;
		} else if (!output) {
			output = a;
		} else {
			fprintf(stderr, "rtitsim check: one bundle and one decoder output ('%s'?)\n", a);
			return RTIT_EXIT_USAGE;
		}
	}
	if (!output) {
		check_usage(stderr);
		return RTIT_EXIT_USAGE;
	}
	return rtit_cli_check(bundle, output, f, quiet, strict_end);
}
