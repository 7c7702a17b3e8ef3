/*
 * cmd_decode.c - `rtitsim decode TRACE [--image SCENARIO.scn|ELF|demo]
 * [--sideband FILE] [--check FLOW] [--json]`: the instruction flow back
 * from an RTIT trace and the program image (include/rtit/flow.h), printed
 * in the simulator's flow line format, optionally compared with the
 * simulator's ground truth record by record.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "bundle.h"
#include "cli.h"
#include "decode.h"
#include "demo_scenario.h"
#include "rtit/msr_pt.h"
#include "rtit/flow.h"
#include "rtit/image.h"
#include "rtit/sideband.h"
#include "rtit/msr_rtit.h"
#include "rtit/print.h"
#include "rtit/pt_errata.h"
#include "rtit/scenario.h"

struct handler_map {
	uint64_t ip[64];
	int vec[64];
	int n;
};

struct dec {
	struct rtit_image *img;
	const struct rtit_sideband *sb;	/* the run's, for its map lines */
	struct handler_map hm;
	bool external_ctl;	/* the scenario writes RTIT_CTL from outside */
	bool pt;		/* an Intel PT trace */
	struct rtit_flow_dec *fd;
	struct rtit_flow_cmp *cmp;
	FILE *out;
	bool json, quiet, stats_on;
	char sbuf[256];
	/* the trace, for --chunk reads and for the packets around a mismatch */
	const uint8_t *trace;
	size_t tlen, tpos, chunk;
	uint64_t first_err_off;
	bool have_err;
};

static void decode_usage(FILE *out)
{
	fputs("usage: rtitsim decode TRACE [options]\n"
	      "\n"
	      "Reconstructs the instruction flow from an RTIT or Intel PT trace and the\n"
	      "program image,\n"
	      "one line per instruction or event in the simulator's flow format (the fields a\n"
	      "trace determines: IP, class, length, taken, next IP), '#' lines for where\n"
	      "tracing starts, stops, overflows or fails.\n"
	      "\n"
	      "  --image FILE       the program: a scenario (.scn, loaded as `rtitsim run`\n"
	      "                     loads it), a static ELF, FILE@ADDR for a flat binary\n"
	      "                     loaded at ADDR, or 'demo' (default: the sideband's\n"
	      "                     image or scenario line)\n"
	      "  --sideband FILE    what the trace does not say (mode, cycle_accurate,\n"
	      "                     cmprs_ret, params, where the run stopped); default\n"
	      "                     TRACE with .trace replaced by .sideband, if present\n"
	      "  --check FLOW       compare with the simulator's .flow file; on the first\n"
	      "                     difference name it, the trace offset and the packets\n"
	      "                     around it (exit 5)\n"
	      "  --json             one JSON object per line\n"
	      "  -q, --quiet        no flow output (with --check: only the verdict)\n"
	      "  --dialect rtit|pt, --mode 32|64, --cycle-accurate, --cmprs-ret\n"
	      "                     override the sideband (default: RTIT, 64-bit)\n"
	      "  --errata E1,E2,E5,E6,E7   tolerate these errata (Appendix E)\n"
	      "  --pt-errata LIST   Intel PT: apply exactly these errata workarounds\n"
	      "                     (skl014,apl12,apl11,bdm70,skd010,skd007,bdm64,skl168,skz84 or none;\n"
	      "                     default: those\n"
	      "                     of the sideband's cpu and pt_errata)\n"
	      "  --chunk N          read the trace N bytes at a time (testing)\n"
	      "  --stats            counts and speed on stderr\n"
	      "\n"
	      "Exit status: 0 ok, 1 usage, 2 I/O, 3 decode errors (reported, skipped to the\n"
	      "next PSB), 4 bad image, 5 the flow differs from --check.\n", out);
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (b = malloc((size_t)n + 1)) && fread(b, 1, (size_t)n, f) == (size_t)n) {
		*len = (size_t)n;
	} else {
		free(b);
		b = NULL;
	}
	fclose(f);
	return b;
}

static int read_mem(void *opaque, uint64_t addr, uint8_t *buf, size_t n)
{
	struct dec *x = opaque;
	return rtit_image_read(x->img, addr, buf, n);
}

static int vector_of(void *opaque, uint64_t ip)
{
	struct dec *x = opaque;
	int v = -1;
	/* a handler shared by several vectors names none of them */
	for (int i = 0; i < x->hm.n; i++)
		if (x->hm.ip[i] == ip) {
			if (v >= 0 && v != x->hm.vec[i])
				return -1;
			v = x->hm.vec[i];
		}
	return v;
}

static uint64_t handler_of(void *opaque, unsigned vector)
{
	struct dec *x = opaque;
	for (int i = 0; i < x->hm.n; i++)
		if (x->hm.vec[i] == (int)vector)
			return x->hm.ip[i];
	return UINT64_MAX;
}

static ssize_t read_chunk(void *opaque, uint8_t *buf, size_t cap)
{
	struct dec *x = opaque;
	size_t n = x->tlen - x->tpos;
	if (n > x->chunk)
		n = x->chunk;
	if (n > cap)
		n = cap;
	memcpy(buf, x->trace + x->tpos, n);
	x->tpos += n;
	return (ssize_t)n;
}

/* The time fields of a decoded record (flow.h), when the trace has any. */
static void json_time(FILE *o, const struct rtit_sim_rec *r)
{
	if (r->cycles || (r->pad0 & RTIT_FLOW_A_CYC_EXACT))
		fprintf(o, ",\"cycles\":%" PRIu64 ",\"cycles_exact\":%s", r->cycles,
			(r->pad0 & RTIT_FLOW_A_CYC_EXACT) ? "true" : "false");
	if (r->pad0 & RTIT_FLOW_A_CYC_ORIGIN)	/* SKL168's workaround (D127) */
		fputs(",\"cycles_restart\":true", o);
	if (r->tsc)
		fprintf(o, ",\"tsc\":\"0x%" PRIx64 "\"", r->tsc);
	fputs("}\n", o);
}

static void json_rec(FILE *o, const struct rtit_sim_rec *r)
{
	if (r->kind == RTIT_SIM_INSN) {
		fprintf(o, "{\"kind\":\"insn\",\"ip\":\"0x%" PRIx64 "\",\"len\":%u,\"class\":\"%s\","
			"\"taken\":%s", r->ip, r->len, rtit_insn_class_name(r->cls),
			(r->flags & RTIT_SIM_F_TAKEN) ? "true" : "false");
		if (r->flags & RTIT_SIM_F_TX)	/* XBEGIN/XEND changed InTX */
			fputs(",\"intx_change\":true", o);
		if (r->pad0 & RTIT_FLOW_A_NEXT_UNKNOWN)
			fputs(",\"next\":null", o);
		else
			fprintf(o, ",\"next\":\"0x%" PRIx64 "\"", r->next_ip);
	} else {
		fprintf(o, "{\"kind\":\"event\",\"ip\":\"0x%" PRIx64 "\",\"event\":\"%s\","
			"\"next\":\"0x%" PRIx64 "\"", r->ip,
			r->cls ? rtit_sim_event_name(r->cls) : "unknown", r->next_ip);
		if (r->cls == RTIT_EV_PEBS)	/* D55 */
			fprintf(o, ",\"eventing_ip\":\"0x%" PRIx64 "\",\"groups\":%u,"
				"\"items_digest\":\"0x%08x\"", r->value, r->vector, r->msr);
		else if (r->cls)
			fprintf(o, ",\"vector\":%u", r->vector);
	}
	json_time(o, r);
}

static inline char *hex16(char *o, uint64_t v)
{
	static const char hx[] = "0123456789abcdef";
	for (int i = 15; i >= 0; i--, v >>= 4)
		o[i] = hx[v & 15];
	return o + 16;
}

/* rtit_flow_rec_format for instructions, without printf (the text output
 * of a long flow is otherwise most of the time). */
static size_t fast_line(char *o, const struct rtit_sim_rec *r)
{
	char *p = o;
	const char *name = rtit_insn_class_name(r->cls);
	size_t nl = strlen(name);
	*p++ = 'I';
	*p++ = ' ';
	p = hex16(p, r->ip);
	*p++ = ' ';
	memcpy(p, name, nl);
	p += nl;
	while (nl++ < 8)
		*p++ = ' ';
	memcpy(p, " len=", 5);
	p += 5;
	if (r->len >= 10)
		*p++ = (char)('0' + r->len / 10);
	*p++ = (char)('0' + r->len % 10);
	*p++ = ' ';
	if (r->flags & RTIT_SIM_F_TAKEN) {
		memcpy(p, "T ", 2);
		p += 2;
	}
	if (r->flags & RTIT_SIM_F_ZERO_LEN_CALL) {
		memcpy(p, "ZLC ", 4);
		p += 4;
	}
	if (r->flags & RTIT_SIM_F_TX) {
		memcpy(p, "TX ", 3);
		p += 3;
	}
	memcpy(p, "-> ", 3);
	p += 3;
	p = hex16(p, r->next_ip);
	*p++ = '\n';
	return (size_t)(p - o);
}

/* rtitsim check: the records collected instead of printed. */
static struct rtit_cli_decoded *collect_into;

static void collect(const struct rtit_sim_rec *recs, const uint64_t *offs, size_t n)
{
	struct rtit_cli_decoded *c = collect_into;
	if (c->n + n > c->cap) {
		size_t cap = (c->cap ? c->cap * 2 : 4096) + n;
		struct rtit_sim_rec *r = realloc(c->recs, cap * sizeof(*r));
		if (r)
			c->recs = r;
		uint64_t *o = realloc(c->offs, cap * sizeof(*o));
		if (o)
			c->offs = o;
		if (!r || !o) {
			c->nomem = true;
			return;
		}
		c->cap = cap;
	}
	memcpy(c->recs + c->n, recs, n * sizeof(*recs));
	for (size_t i = 0; i < n; i++)
		c->offs[c->n + i] = offs ? offs[i] : 0;
	c->n += n;
}

int rtit_cli_decode_collect(int argc, char **argv, struct rtit_cli_decoded *out)
{
	collect_into = out;
	int r = rtit_cmd_decode(argc, argv);
	collect_into = NULL;
	return r;
}

static void on_rec(void *opaque, const struct rtit_sim_rec *recs, size_t n)
{
	struct dec *x = opaque;
	if (x->cmp)
		rtit_flow_cmp_feed(x->cmp, recs, rtit_flow_dec_batch_offsets(x->fd), n);
	if (collect_into)
		collect(recs, rtit_flow_dec_batch_offsets(x->fd), n);
	if (x->quiet)
		return;
	for (size_t i = 0; i < n; i++) {
		if (x->json) {
			json_rec(x->out, &recs[i]);
		} else if (recs[i].kind == RTIT_SIM_INSN && !recs[i].pad0 && recs[i].len < 100 &&
			   !recs[i].cycles && !recs[i].tsc) {
			fwrite(x->sbuf, 1, fast_line(x->sbuf, &recs[i]), x->out);
		} else {
			rtit_flow_rec_format(&recs[i], x->sbuf, sizeof(x->sbuf));
			fputs(x->sbuf, x->out);
			fputc('\n', x->out);
		}
	}
}

static const char *note_name(int k)
{
	switch (k) {
	case RTIT_FLOW_N_ENABLE: return "enable";
	case RTIT_FLOW_N_DISABLE: return "disable";
	case RTIT_FLOW_N_TRACESTOP: return "tracestop";
	case RTIT_FLOW_N_OVERFLOW: return "overflow";
	case RTIT_FLOW_N_ERROR: return "error";
	case RTIT_FLOW_N_RESYNC: return "resync";
	case RTIT_FLOW_N_UNCERTAIN: return "uncertain";
	case RTIT_FLOW_N_END: return "end";
	case RTIT_FLOW_N_EVENTS_ONLY: return "events-only";
	default: return "?";
	}
}

static void on_note(void *opaque, const struct rtit_flow_note *nt)
{
	struct dec *x = opaque;
	if (x->cmp)
		rtit_flow_cmp_note(x->cmp, nt);
	if (nt->kind == RTIT_FLOW_N_ERROR) {
		fprintf(stderr, "rtitsim decode: error at trace offset 0x%" PRIx64 " (IP 0x%" PRIx64
			"): %s; skipping to the next PSB\n", nt->offset, nt->ip, nt->msg);
		if (!x->have_err) {
			x->have_err = true;
			x->first_err_off = nt->offset;
		}
	}
	if (x->quiet)
		return;
	if (x->json) {
		fprintf(x->out, "{\"note\":\"%s\",\"offset\":%" PRIu64 ",\"ip\":\"0x%" PRIx64 "\"",
			note_name(nt->kind), nt->offset, nt->ip);
		if (nt->kind == RTIT_FLOW_N_UNCERTAIN)
			fprintf(x->out, ",\"dropped\":%" PRIu64, nt->count);
		if (nt->msg) {
			fputs(",\"msg\":\"", x->out);
			for (const char *c = nt->msg; *c; c++)
				fprintf(x->out, (*c == '"' || *c == '\\') ? "\\%c" : "%c", *c);
			fputc('"', x->out);
		}
		fputs("}\n", x->out);
		return;
	}
	/* the packets behind each note, per dialect */
	const char *pge = x->pt ? "TIP.PGE or PSB+ FUP" : "FUP.PGE";
	const char *pgd = x->pt ? "TIP.PGD" : "FUP.PGD";
	const char *ovf = x->pt ? "OVF" : "FUP.BuffOvf";
	switch (nt->kind) {
	case RTIT_FLOW_N_ENABLE:
		fprintf(x->out, "# enable at 0x%" PRIx64 " (%s at offset 0x%" PRIx64 ")\n", nt->ip, pge,
			nt->offset);
		break;
	case RTIT_FLOW_N_DISABLE:
		if (nt->ip != UINT64_MAX)
			fprintf(x->out, "# disable at 0x%" PRIx64 " (%s at offset 0x%" PRIx64 ")\n",
				nt->ip, pgd, nt->offset);
		else if (x->pt)
			fprintf(x->out, "# disable, the target not sent (TIP.PGD at offset 0x%" PRIx64 ")\n",
				nt->offset);
		else
			fprintf(x->out, "# disable: the packets after the overflow show tracing off (offset 0x%"
				PRIx64 ")\n", nt->offset);
		break;
	case RTIT_FLOW_N_TRACESTOP:
		fprintf(x->out, "# %s at offset 0x%" PRIx64 "\n", x->pt ? "TraceStop" : "TraceSTOP",
			nt->offset);
		break;
	case RTIT_FLOW_N_OVERFLOW:
		if (nt->ip != UINT64_MAX)
			fprintf(x->out, "# overflow gap: resumes at 0x%" PRIx64 " (%s at offset 0x%" PRIx64
				")\n", nt->ip, ovf, nt->offset);
		else
			fprintf(x->out, "# overflow gap: tracing was off when it resolved (%s at offset 0x%"
				PRIx64 ")\n", ovf, nt->offset);
		break;
	case RTIT_FLOW_N_ERROR:
		fprintf(x->out, "# error at offset 0x%" PRIx64 ", IP 0x%" PRIx64 ": %s\n", nt->offset, nt->ip, nt->msg);
		break;
	case RTIT_FLOW_N_RESYNC:
		fprintf(x->out, "# resync at 0x%" PRIx64 " (offset 0x%" PRIx64 ")\n", nt->ip, nt->offset);
		break;
	case RTIT_FLOW_N_UNCERTAIN:
		fprintf(x->out, "# %" PRIu64 " instructions walked past the last packet dropped (from offset 0x%"
			PRIx64 ")\n", nt->count, nt->offset);
		break;
	case RTIT_FLOW_N_END:
		fprintf(x->out, "# end of trace at offset 0x%" PRIx64 "\n", nt->offset);
		break;
	case RTIT_FLOW_N_EVENTS_ONLY:
		fprintf(x->out, "# flow up to here unknown (event trace without branches, BranchEn=0);"
			" event at 0x%" PRIx64 " (CFE at offset 0x%" PRIx64 ")\n", nt->ip, nt->offset);
		break;
	}
}

static int parse_errata(const char *s, unsigned *out)
{
	char buf[128];
	snprintf(buf, sizeof(buf), "%s", s);
	for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
		if ((t[0] != 'E' && t[0] != 'e') || t[1] < '1' || t[1] > '8' || t[2])
			return -1;
		*out |= 1u << (t[1] - '0');
	}
	return 0;
}

static bool ends_with(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);
	return n >= m && !strcmp(s + n - m, suf);
}

/* Loads the image: a scenario's code (no run), the demo, an ELF, or a
 * flat binary (FILE@ADDR), into the flow layer's image (no simulator). */
static int load_image(struct dec *x, const char *image)
{
	struct rtit_scn_error err;
	struct rtit_scenario sc;
	bool scn = !strcmp(image, "demo") || !strcmp(image, "<demo>") || ends_with(image, ".scn");
	const char *flat = scn ? NULL : strrchr(image, '@');
	int r;

	memset(&sc, 0, sizeof(sc));
	if ((r = rtit_image_new(&x->img)) < 0) {
		fprintf(stderr, "rtitsim decode: %s: %s\n", image, rtit_errstr(r));
		return RTIT_EXIT_INPUT;
	}
	if (scn) {
		if (!strcmp(image, "demo") || !strcmp(image, "<demo>"))
			r = rtit_scenario_parse_string(demo_scenario, "<demo>", &sc, &err);
		else
			r = rtit_scenario_parse_file(image, &sc, &err);
		if (r < 0) {
			fprintf(stderr, "%s\n", err.text);
			return r == -RTIT_ERR_IO ? RTIT_EXIT_IO : RTIT_EXIT_INPUT;
		}
		r = rtit_scenario_image(&sc, x->img, &err);
		if (r < 0)
			fprintf(stderr, "%s\n", err.text);
		for (size_t i = 0; r >= 0 && i < sc.nhandlers && x->hm.n < 64; i++) {
			uint64_t v = sc.handlers[i].ip.value;
			if (sc.handlers[i].ip.label[0] &&
			    rtit_image_symbol(x->img, sc.handlers[i].ip.label, &v) < 0)
				continue;
			x->hm.ip[x->hm.n] = v;
			x->hm.vec[x->hm.n++] = (int)sc.handlers[i].vector;
		}
		for (size_t i = 0; i < sc.nevents; i++)
			if (sc.events[i].ev.kind == RTIT_EV_MSR_WRITE_EXTERNAL &&
			    sc.events[i].ev.msr == RTIT_R_MSR_CTL)
				x->external_ctl = true;
		rtit_scenario_fini(&sc);
	} else if (!strcmp(image, "<mmaps>")) {
		r = rtit_image_add_mmaps(x->img, x->sb);
		if (r < 0)
			fprintf(stderr, "rtitsim decode: the sideband's maps: %s\n",
				rtit_image_errmsg(x->img));
	} else if (flat) {
		/* FILE@ADDR: a flat binary loaded at ADDR */
		char path[1024];
		snprintf(path, sizeof(path), "%.*s", (int)(flat - image), image);
		char *end;
		unsigned long long at = strtoull(flat + 1, &end, 0);
		if (!flat[1] || *end) {
			fprintf(stderr, "rtitsim decode: --image %s: the load address after '@' is not"
				" a number\n", image);
			return RTIT_EXIT_USAGE;
		}
		r = rtit_image_add_file(x->img, path, at);
		if (r < 0)
			fprintf(stderr, "rtitsim decode: %s\n", rtit_image_errmsg(x->img));
	} else {
		r = rtit_image_add_elf(x->img, image, 0);
		if (r < 0)
			fprintf(stderr, "rtitsim decode: %s\n", rtit_image_errmsg(x->img));
	}
	if (r < 0)
		return r == -RTIT_ERR_IO ? RTIT_EXIT_IO : RTIT_EXIT_INPUT;
	return RTIT_EXIT_OK;
}

/* The sideband's image map (a bundle's image files, relative to the
 * sideband) and its handlers and external_ctl (docs/formats.md). */
static int load_maps(struct dec *x, const struct rtit_sideband *sb, const char *sb_path)
{
	char path[2048];
	int r = 0;

	if (sb->nmaps && (r = rtit_image_new(&x->img)) < 0) {
		fprintf(stderr, "rtitsim decode: %s\n", rtit_errstr(r));
		return RTIT_EXIT_INPUT;
	}
	for (size_t i = 0; i < sb->nmaps && r >= 0; i++) {
		if (rtit_sideband_map_path(sb, i, sb_path, path, sizeof(path)) < 0) {
			fprintf(stderr, "rtitsim decode: %s: map %s: the path is too long\n", sb_path,
				sb->maps[i].file);
			return RTIT_EXIT_INPUT;
		}
		r = sb->maps[i].elf ? rtit_image_add_elf(x->img, path, sb->maps[i].addr) :
				      rtit_image_add_file(x->img, path, sb->maps[i].addr);
		if (r < 0)
			fprintf(stderr, "rtitsim decode: %s (named by %s)\n", rtit_image_errmsg(x->img),
				sb_path);
	}
	if (r < 0)
		return r == -RTIT_ERR_IO ? RTIT_EXIT_IO : RTIT_EXIT_INPUT;
	return RTIT_EXIT_OK;
}

/* The handlers and external_ctl a sideband names (with or without maps). */
static void sideband_handlers(struct dec *x, const struct rtit_sideband *sb)
{
	for (size_t i = 0; i < sb->nhandlers && x->hm.n < 64; i++) {
		x->hm.ip[x->hm.n] = sb->handlers[i].ip;
		x->hm.vec[x->hm.n++] = (int)sb->handlers[i].vector;
	}
	x->external_ctl |= sb->external_ctl;
}

/* The packets around a trace offset, dump style, marking the one there. */
void rtit_cli_packets_around(const uint8_t *t, size_t len, uint64_t off, int dialect, bool ca)
{
	static struct rtit_pktdec pd;
	struct rtit_pktdec_cfg c = { .dialect = (enum rtit_dialect)dialect, .cycle_acc = ca,
				     .mem = t, .mem_len = len };
	struct rtit_pktdec_item it;
	uint64_t ring[6];
	int nring = 0, after = -1;

	/* print the 5 packets before, the one at off, and 5 after */
	rtit_pktdec_init(&pd, &c);
	struct rtit_pktdec_item saved[6];
	for (;;) {
		int r = rtit_pktdec_next(&pd, &it);
		if (r < 0) {
			fprintf(stderr, "    %08" PRIx64 "  (undecodable bytes)\n", pd.err.offset);
			if (rtit_pktdec_resync(&pd, false) <= 0)
				break;
			continue;
		}
		if (r == 0)
			break;
		if (after < 0) {
			if (nring == 6) {
				memmove(saved, saved + 1, 5 * sizeof(saved[0]));
				memmove(ring, ring + 1, 5 * sizeof(ring[0]));
				nring = 5;
			}
			saved[nring] = it;
			saved[nring].raw = NULL;
			ring[nring++] = it.offset;
			if (it.offset >= off) {
				for (int i = 0; i < nring; i++) {
					saved[i].raw = t + saved[i].offset;
					fputs(saved[i].offset == off ? "  > " : "    ", stderr);
					rtit_print_line(stderr, (enum rtit_dialect)dialect, &saved[i]);
				}
				after = 0;
			}
		} else if (after++ < 5) {
			fputs("    ", stderr);
			rtit_print_line(stderr, (enum rtit_dialect)dialect, &it);
		} else {
			break;
		}
	}
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The command line of `rtitsim decode`. */
struct decode_opts {
	const char *trace_path, *image, *sb_path, *check;
	int mode, ca, cr;		/* 0 / -1: not given */
	int dialect;
	bool dialect_set, stats;
	unsigned errata;
	bool pt_errata_set;
	unsigned pt_errata;
};

/* Parses argv into @o and @x's output options.  Returns -1 to go on, or
 * the exit status (--help, a usage error). */
static int decode_parse(int argc, char **argv, struct decode_opts *o, struct dec *x)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			decode_usage(stdout);
			return RTIT_EXIT_OK;
		} else if (!strcmp(a, "--image") && i + 1 < argc) {
			o->image = argv[++i];
		} else if (!strcmp(a, "--sideband") && i + 1 < argc) {
			o->sb_path = argv[++i];
		} else if (!strcmp(a, "--check") && i + 1 < argc) {
			o->check = argv[++i];
		} else if (!strcmp(a, "--json")) {
			x->json = true;
		} else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
			x->quiet = true;
		} else if (!strcmp(a, "--stats")) {
			o->stats = true;
		} else if (!strcmp(a, "--dialect") && i + 1 < argc) {
			const char *v = argv[++i];
			if (!strcmp(v, "rtit")) {
				o->dialect = RTIT_DIALECT_RTIT;
			} else if (!strcmp(v, "pt")) {
				o->dialect = RTIT_DIALECT_PT;
			} else {
				fprintf(stderr, "rtitsim decode: --dialect takes rtit or pt\n");
				return RTIT_EXIT_USAGE;
			}
			o->dialect_set = true;
		} else if (!strcmp(a, "--cycle-accurate")) {
			o->ca = 1;
		} else if (!strcmp(a, "--cmprs-ret")) {
			o->cr = 1;
		} else if (!strcmp(a, "--mode") && i + 1 < argc) {
			o->mode = atoi(argv[++i]);
			if (o->mode != 32 && o->mode != 64) {
				fprintf(stderr, "rtitsim decode: --mode takes 32 or 64\n");
				return RTIT_EXIT_USAGE;
			}
		} else if (!strcmp(a, "--errata") && i + 1 < argc) {
			if (parse_errata(argv[++i], &o->errata) < 0) {
				fprintf(stderr, "rtitsim decode: --errata takes a list like E1,E5\n");
				return RTIT_EXIT_USAGE;
			}
		} else if (!strcmp(a, "--pt-errata") && i + 1 < argc) {
			o->pt_errata_set = true;
			if (rtit_pt_errata_parse(argv[++i], &o->pt_errata) < 0) {
				fprintf(stderr, "rtitsim decode: --pt-errata takes a list like skl014,apl12, or none\n");
				return RTIT_EXIT_USAGE;
			}
		} else if (!strcmp(a, "--chunk") && i + 1 < argc) {
			x->chunk = strtoul(argv[++i], NULL, 0);
			if (!x->chunk) {
				fprintf(stderr, "rtitsim decode: --chunk takes a positive size\n");
				return RTIT_EXIT_USAGE;
			}
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "rtitsim decode: unknown or incomplete option '%s' (try --help)\n", a);
			return RTIT_EXIT_USAGE;
		} else if (o->trace_path) {
			fprintf(stderr, "rtitsim decode: one trace only ('%s' and '%s')\n", o->trace_path, a);
			return RTIT_EXIT_USAGE;
		} else {
			o->trace_path = a;
		}
	}
	return -1;
}

/* TRACE may name a bundle (docs/formats.md "Bundles"): its directory
 * (holding one STEM.manifest.json), STEM.manifest.json, or STEM; the
 * trace is then STEM.trace.  Then the trace must exist: a missing one is
 * named as the trace (exit 2), before anything else is looked for.
 * Returns -1 to go on, or the exit status. */
static int resolve_trace(struct decode_opts *o)
{
	static char path[1100];
	char stem[1024];
	struct stat st;
	const char *t = o->trace_path;

	if ((stat(t, &st) == 0 && S_ISDIR(st.st_mode)) || ends_with(t, ".manifest.json") ||
	    (stat(t, &st) != 0 && !ends_with(t, ".trace"))) {
		if (rtit_cli_bundle_stem(t, stem, sizeof(stem)) < 0)
			return RTIT_EXIT_USAGE;
		snprintf(path, sizeof(path), "%s.trace", stem);
		o->trace_path = path;
	}
	FILE *f = fopen(o->trace_path, "rb");
	if (!f) {
		fprintf(stderr, "rtitsim decode: %s: cannot read the trace: %s\n", o->trace_path,
			strerror(errno));
		return RTIT_EXIT_IO;
	}
	fclose(f);
	return -1;
}

/* The sideband (given, or next to the trace) into @sb, and the image: the
 * option's, else the sideband's program or scenario (a relative scenario
 * path is tried next to the sideband too).  Returns -1 to go on, or the
 * exit status. */
static int decode_inputs(struct decode_opts *o, struct rtit_sideband *sb)
{
	static char path[1024], image_buf[2048];
	char sb_err[512];
	int ret;

	if ((ret = resolve_trace(o)) >= 0)
		return ret;
	if (!o->sb_path && ends_with(o->trace_path, ".trace")) {
		snprintf(path, sizeof(path), "%.*s.sideband", (int)(strlen(o->trace_path) - 6),
			 o->trace_path);
		FILE *f = fopen(path, "r");
		if (f) {
			fclose(f);
			o->sb_path = path;
		}
	}
	rtit_sideband_fini(sb);	/* static: a decode before may have filled it */
	if (o->sb_path && (ret = rtit_sideband_read(o->sb_path, sb, sb_err, sizeof(sb_err))) < 0) {
		fprintf(stderr, "rtitsim decode: %s\n", sb_err);
		return ret == -RTIT_ERR_IO ? RTIT_EXIT_IO : RTIT_EXIT_INPUT;
	}
	if (!o->dialect_set && sb->dialect >= 0)
		o->dialect = sb->dialect;
	if (!o->image && sb->nmmaps)
		o->image = "<mmaps>";	/* a process run: the code is in the mmap lines */
	if (!o->image && sb->nmaps)
		return -1;	/* the image is the sideband's map */
	if (!o->image && sb->image[0])
		o->image = sb->image;
	if (!o->image && sb->scenario[0] && strcmp(sb->scenario, "<program>")) {
		o->image = sb->scenario;
		FILE *f = fopen(o->image, "r");
		const char *slash = strrchr(o->sb_path, '/');
		if (f) {
			fclose(f);
		} else if (o->image[0] != '/' && o->image[0] != '<' && slash) {
			snprintf(image_buf, sizeof(image_buf), "%.*s/%s", (int)(slash - o->sb_path),
				 o->sb_path, o->image);
			if ((f = fopen(image_buf, "r"))) {
				fclose(f);
				o->image = image_buf;
			}
		}
	}
	if (!o->image) {
		fprintf(stderr, "rtitsim decode: no image: give --image SCENARIO.scn|ELF|demo\n");
		return RTIT_EXIT_USAGE;
	}
	return -1;
}

/* --check's verdict: the first difference (its packets around it) or the
 * match.  Returns @status or RTIT_EXIT_MISMATCH. */
static int check_verdict(struct dec *x, const char *trace_path, const char *check,
			 const struct rtit_flow_cfg *cfg, int status)
{
	struct rtit_flow_cmp_result res;
	if (!rtit_flow_cmp_finish(x->cmp, &res)) {
		const struct rtit_flow_mismatch *m = &res.mm;
		char a[256], b[256];
		rtit_flow_rec_format(&m->decoded, a, sizeof(a));
		if (!m->truth_ended)
			rtit_sim_rec_format(&m->truth, b, sizeof(b));
		fprintf(stderr, "%s: the decoded flow differs from %s at decoded record %" PRIu64
			" (truth record %" PRIu64 "): %s\n  decoded: %s\n  truth:   %s\n"
			"  trace offset 0x%" PRIx64 "; the packets around it:\n",
			trace_path, check, m->decoded_index, m->truth_index, m->what, a,
			m->truth_ended ? "(none: the truth ends)" : b, m->offset);
		rtit_cli_packets_around(x->trace, x->tlen, m->offset, cfg->dialect, cfg->cycle_acc);
		status = RTIT_EXIT_MISMATCH;
	} else {
		if (collect_into) {
			collect_into->matched = true;
			collect_into->trailing = res.trailing;
		}
		if (!x->quiet || x->stats_on)
			fprintf(stderr, "%s: the flow matches %s: %" PRIu64 " records in %" PRIu64
				" segments; %" PRIu64 " truth records not traced (before enable,"
				" disabled, overflow gaps), %" PRIu64 " after the last packet\n",
				trace_path, check, res.compared, res.segments, res.skipped,
				res.trailing);
		if (status == RTIT_EXIT_DECODE && x->have_err)
			fprintf(stderr, "%s: but the trace had decode errors (first at offset 0x%"
				PRIx64 ")\n", trace_path, x->first_err_off);
	}
	return status;
}

int rtit_cmd_decode(int argc, char **argv)
{
	static struct dec x;
	struct decode_opts o = { .ca = -1, .cr = -1, .dialect = RTIT_DIALECT_RTIT };
	int status = RTIT_EXIT_OK, ret;

	memset(&x, 0, sizeof(x));
	if ((ret = decode_parse(argc, argv, &o, &x)) >= 0)
		return ret;
	const char *check = o.check;
	int mode = o.mode, ca = o.ca, cr = o.cr;
	bool stats = o.stats;
	x.stats_on = stats;
	unsigned errata = o.errata;
	if (!o.trace_path) {
		decode_usage(stderr);
		return RTIT_EXIT_USAGE;
	}

	static struct rtit_sideband sb;	/* large */
	if ((ret = decode_inputs(&o, &sb)) >= 0)
		return ret;
	const char *trace_path = o.trace_path;
	const char *image = o.image;
	int dialect = o.dialect;
	x.sb = &sb;

	size_t tlen = 0;
	uint8_t *trace = slurp(trace_path, &tlen);
	if (!trace) {
		fprintf(stderr, "rtitsim decode: %s: cannot read: %s\n", trace_path, strerror(errno));
		return RTIT_EXIT_IO;
	}
	x.trace = trace;
	x.tlen = tlen;

	struct rtit_sim_rec *truth = NULL;
	size_t ntruth = 0;
	if (check) {
		FILE *f = fopen(check, "rb");
		const char *why = NULL;
		if (!f || (ret = rtit_flow_read_why(f, &truth, &ntruth, &why)) < 0) {
			fprintf(stderr, "rtitsim decode: %s: cannot read the flow: %s\n", check,
				!f ? strerror(errno) : why ? why : rtit_errstr(ret));
			if (f)
				fclose(f);
			free(trace);
			return f ? RTIT_EXIT_INPUT : RTIT_EXIT_IO;
		}
		fclose(f);
		if (rtit_flow_cmp_new(&x.cmp, truth, ntruth) < 0)
			return RTIT_EXIT_IO;
	}

	status = image ? load_image(&x, image) : load_maps(&x, &sb, o.sb_path);
	if (status == RTIT_EXIT_OK && (!image || !ends_with(image, ".scn")))
		sideband_handlers(&x, &sb);
	if (status != RTIT_EXIT_OK) {
		free(trace);
		free(truth);
		rtit_flow_cmp_free(x.cmp);
		rtit_image_free(x.img);
		return status;
	}

	struct rtit_flow_cfg cfg;
	rtit_flow_cfg_default(&cfg);
	rtit_flow_cfg_from_sideband(&cfg, &sb);	/* what the sideband gives ... */
	cfg.dialect = dialect;			/* ... and the options over it */
	x.pt = dialect == RTIT_DIALECT_PT;
	if (mode)
		cfg.mode = mode;
	if (ca >= 0)
		cfg.cycle_acc = ca;
	if (cr >= 0)
		cfg.cmprs_ret = cr;
	cfg.errata |= errata;
	if (o.pt_errata_set)
		cfg.pt_errata = o.pt_errata;	/* by name, over the CPU's (D106) */
	cfg.end_traced = sb.has_end && !x.external_ctl;
	if (x.chunk) {
		cfg.read = read_chunk;
		cfg.read_opaque = &x;
	} else {
		cfg.mem = trace;
		cfg.mem_len = tlen;
	}
	cfg.read_mem = read_mem;
	cfg.vector_of = vector_of;
	cfg.handler_of = handler_of;
	cfg.mem_opaque = &x;
	cfg.on_rec = on_rec;
	cfg.on_note = on_note;
	cfg.opaque = &x;
	x.out = stdout;	/* no setvbuf: `rtitsim run --verify` calls this after printing */
	if ((ret = rtit_flow_dec_new(&x.fd, &cfg)) < 0) {
		fprintf(stderr, "rtitsim decode: %s\n", rtit_errstr(ret));
		return RTIT_EXIT_USAGE;
	}
	if (collect_into) {
		collect_into->dialect = cfg.dialect;
		collect_into->cycle_acc = cfg.cycle_acc;
	}
	double t0 = now();
	ret = rtit_flow_dec_run(x.fd);
	double t1 = now();
	const struct rtit_flow_stats *st = rtit_flow_dec_stats(x.fd);
	if (ret < 0) {
		fprintf(stderr, "rtitsim decode: %s: %s\n", trace_path, rtit_errstr(ret));
		status = ret == -RTIT_ERR_IO ? RTIT_EXIT_IO : RTIT_EXIT_DECODE;
	} else if (ret > 0) {
		status = RTIT_EXIT_DECODE;
	}
	if (fflush(stdout) != 0 && status == RTIT_EXIT_OK)
		status = RTIT_EXIT_IO;
	if (stats)
		fprintf(stderr, "decoded %" PRIu64 " instructions, %" PRIu64 " events from %" PRIu64
			" packets in %.3f s (%.1f M insn/s); %" PRIu64 " enables, %" PRIu64
			" disables, %" PRIu64 " overflows, %" PRIu64 " errors (%" PRIu64
			" bytes skipped), %" PRIu64 " records dropped as uncertain, %" PRIu64
			" distinct instructions\n",
			st->insns, st->events, st->packets, t1 - t0,
			t1 > t0 ? (double)st->insns / (t1 - t0) / 1e6 : 0.0, st->enables, st->disables,
			st->overflows, st->errors, st->skipped_bytes, st->dropped, st->cache_insns);

	if (x.cmp)
		status = check_verdict(&x, trace_path, check, &cfg, status);
	rtit_flow_dec_free(x.fd);
	rtit_flow_cmp_free(x.cmp);
	rtit_image_free(x.img);
	free(truth);
	free(trace);
	return status;
}
