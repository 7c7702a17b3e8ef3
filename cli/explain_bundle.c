/*
 * explain_bundle.c - `rtitsim explain BUNDLE`: the page from a bundle
 * (docs/formats.md "Bundles"), which is not run again (D122).  A bundle
 * holds the trace, the sideband and the program image, not the scenario
 * that made it (its injected events, its end): a run from it would not
 * give its trace back in general.  So the trace is decoded: the packets
 * and their fields by the packet decoder, the instructions by the flow
 * decoder against the bundle's image (as `rtitsim decode BUNDLE` does),
 * and that flow is compared with the bundle's ground truth (STEM.flow).
 * The encoder's hidden state and the rule behind each packet are not in a
 * bundle; the page says so.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bundle.h"
#include "cli.h"
#include "decode.h"
#include "explain.h"
#include "util.h"
#include "rtit/flow.h"
#include "rtit/image.h"
#include "rtit/pt_errata.h"
#include "rtit/sideband.h"

static bool ends_with(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);
	return n >= m && !strcmp(s + n - m, suf);
}

bool rtit_explain_is_bundle(const char *arg)
{
	struct stat st;
	char p[1100];

	if (stat(arg, &st) == 0)
		return S_ISDIR(st.st_mode) || ends_with(arg, ".manifest.json");
	snprintf(p, sizeof(p), "%s.manifest.json", arg);
	return access(p, F_OK) == 0;
}

/* The manifest's "describe" string (JSON escapes undone), or "". */
static void manifest_describe(const char *stem, char *out, size_t cap)
{
	char path[1100];
	size_t n = 0, k = 0;

	out[0] = 0;
	snprintf(path, sizeof(path), "%s.manifest.json", stem);
	char *m = (char *)rtit_cli_slurp(path, &n);
	const char *key = "\"describe\": \"", *p = m ? strstr(m, key) : NULL;
	for (p = p ? p + strlen(key) : NULL; p && *p && *p != '"' && k + 1 < cap; p++) {
		if (*p == '\\' && p[1] == 'u' && p[2] && p[3] && p[4] && p[5]) {
			out[k++] = '?';	/* no \u escape in rtitsim's own manifests' text */
			p += 5;
			continue;
		}
		if (*p == '\\' && p[1])
			p++;
		out[k++] = *p;
	}
	out[k] = 0;
	free(m);
}

/* The bundle's image (its map lines, relative to the sideband, or a
 * process run's mmap lines) with its symbols, or NULL after a warning. */
static struct rtit_image *bundle_image(const struct rtit_sideband *sb, const char *sb_path)
{
	struct rtit_image *img = NULL;
	char path[2048];
	int r = rtit_image_new(&img);

	if (r == 0 && sb->nmmaps && (r = rtit_image_add_mmaps(img, sb)) == 0)
		r = rtit_image_add_mmap_symbols(img, sb);
	for (size_t i = 0; r == 0 && i < sb->nmaps; i++) {
		if (rtit_sideband_map_path(sb, i, sb_path, path, sizeof(path)) < 0)
			r = -1;
		else
			r = sb->maps[i].elf ? rtit_image_add_elf(img, path, sb->maps[i].addr) :
					      rtit_image_add_file(img, path, sb->maps[i].addr);
	}
	if (r < 0) {
		fprintf(stderr, "rtitsim explain: warning: no disassembly: %s\n",
			img ? rtit_image_errmsg(img) : "out of memory");
		rtit_image_free(img);
		return NULL;
	}
	return img;
}

/* The packets of the trace, each beside the first record the flow
 * decoder made after reading it (@offs: the offset of the last packet
 * each record used); those after the last record are the end's. */
static void bundle_packets(struct explain *x, const uint8_t *trace, size_t tlen,
			   const struct rtit_pktdec_cfg *base, const struct rtit_cli_decoded *dec)
{
	static struct rtit_pktdec d;
	struct rtit_pktdec_cfg cfg = *base;
	struct rtit_pktdec_item it;
	size_t k = 0;

	cfg.mem = trace;
	cfg.mem_len = tlen;
	rtit_pktdec_init(&d, &cfg);
	while (rtit_pktdec_next(&d, &it) > 0) {
		while (k < dec->n && dec->offs[k] < it.offset)
			k++;
		rtit_explain_packet(x, it.offset, (uint8_t)it.pkt.type, (uint8_t)it.pkt.size, k,
				    NULL);
	}
}

/* What the flow decoder's flow is, for the page's header. */
static void verdict(char *out, size_t cap, const struct rtit_sideband *sb, int st,
		    bool have_flow, const struct rtit_cli_decoded *dec)
{
	const char *v = st == RTIT_EXIT_DECODE ? "the trace has decode errors (on stderr)" :
			st == RTIT_EXIT_MISMATCH ? "the decoded flow is NOT the bundle's ground"
						  " truth (the difference on stderr)" :
			!have_flow ? "no ground truth (STEM.flow) to compare with" :
				    "the decoded flow is the bundle's ground truth";
	snprintf(out, cap, "%s; explained from the bundle: the flow decoder's %zu records"
		 " (%s); the encoder's hidden state and rules are not in a bundle (D122)",
		 sb->stop[0] ? sb->stop : "stop not recorded", dec->n, v);
}

int rtit_explain_bundle(const char *arg, const char *outp)
{
	static struct rtit_sideband sb;	/* large */
	static struct explain x;
	struct rtit_cli_decoded dec = { 0 };
	char stem[1024], tp[1100], sp[1100], fp[1100], err[512], desc[512], stop[768];
	size_t tlen = 0;
	struct stat st_;

	if (rtit_cli_bundle_stem(arg, stem, sizeof(stem)) < 0)
		return RTIT_EXIT_USAGE;
	snprintf(tp, sizeof(tp), "%s.trace", stem);
	snprintf(sp, sizeof(sp), "%s.sideband", stem);
	snprintf(fp, sizeof(fp), "%s.flow", stem);
	rtit_sideband_init(&sb);
	int r = rtit_sideband_read(sp, &sb, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "rtitsim explain: %s\n", err);
		return r == -RTIT_ERR_IO ? RTIT_EXIT_IO : RTIT_EXIT_INPUT;
	}
	uint8_t *trace = rtit_cli_slurp(tp, &tlen);
	if (!trace) {
		fprintf(stderr, "rtitsim explain: %s: cannot read: %s\n", tp, strerror(errno));
		return RTIT_EXIT_IO;
	}
	/* the flow decoder, as `rtitsim decode STEM.trace --check STEM.flow` */
	bool have_flow = stat(fp, &st_) == 0;
	char *av[] = { "decode", tp, "-q", "--check", fp, NULL };
	fflush(stdout);
	int st = rtit_cli_decode_collect(have_flow ? 5 : 3, av, &dec);
	if (dec.nomem)
		st = RTIT_EXIT_IO;
	if (st != RTIT_EXIT_OK && st != RTIT_EXIT_DECODE && st != RTIT_EXIT_MISMATCH) {
		if (dec.nomem)	/* else the decoder said why, one line */
			fprintf(stderr, "rtitsim explain: out of memory\n");
		goto out;
	}
	memset(&x, 0, sizeof(x));
	x.dialect = sb.dialect < 0 ? RTIT_DIALECT_RTIT : sb.dialect;
	x.bundle = true;
	x.last_state_rec = -1;
	struct run_info ri = { .name = sb.name[0] ? sb.name : stem, .describe = desc,
			       .stop = stop, .trace_bytes = tlen, .cycle_acc = sb.cycle_acc > 0 };
	for (size_t i = 0; i < dec.n; i++) {
		rtit_explain_record(&x, &dec.recs[i], NULL);
		if (dec.recs[i].kind == RTIT_SIM_INSN)
			ri.insns++;
		else
			ri.events++;
	}
	struct rtit_flow_cfg fc;
	rtit_flow_cfg_default(&fc);
	rtit_flow_cfg_from_sideband(&fc, &sb);
	struct rtit_pktdec_cfg dcfg = { .dialect = (enum rtit_dialect)x.dialect,
					.cycle_acc = fc.cycle_acc && x.dialect == RTIT_DIALECT_RTIT,
					.buffovf_loads_lip = fc.buffovf_loads_lip,
					/* SKZ84's TMA, a packet rule (D144) */
					.pt_skz84 = (fc.pt_errata & RTIT_PT_ERRATUM(RTIT_PT_SKZ84)) != 0 };
	bundle_packets(&x, trace, tlen, &dcfg, &dec);
	manifest_describe(stem, desc, sizeof(desc));
	verdict(stop, sizeof(stop), &sb, st, have_flow, &dec);
	struct rtit_image *img = bundle_image(&sb, sp);
	char title[300];
	snprintf(title, sizeof(title), "rtitsim explain: %s (bundle)", ri.name);
	int w = rtit_explain_write(&x, &ri, trace, tlen, &dcfg, img, outp, title);
	if (w != RTIT_EXIT_OK)
		st = w;
	rtit_image_free(img);
	rtit_explain_free(&x);
out:
	free(dec.recs);
	free(dec.offs);
	free(trace);
	return st;
}
