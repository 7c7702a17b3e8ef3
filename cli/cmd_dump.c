/*
 * cmd_dump.c - `rtitsim dump [--dialect rtit|pt] [--cycle-accurate]
 * [--json] [--sync] FILE|-`: one line per packet, in constant memory.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "dump.h"
#include "rtit/flow.h"
#include "rtit/print.h"
#include "rtit/pt_errata.h"
#include "rtit/sideband.h"

static void dump_usage(FILE *out)
{
	fputs("usage: rtitsim dump [--dialect rtit|pt] [--cycle-accurate] [--json] [--sync]\n"
	      "                    [--sideband FILE | --no-sideband] FILE|-\n"
	      "\n"
	      "Prints one line per packet: offset, raw bytes, name, decoded fields, and for\n"
	      "IP packets the full IP with which bits were sent and which came from the last IP.\n"
	      "\n"
	      "  --dialect rtit|pt  packet format (default rtit: Atom RTIT; pt: Intel PT)\n"
	      "  --cycle-accurate   RTIT stream recorded with Cycle_Acc=1 (cycle count packets\n"
	      "                     follow TIP, FUP, full TNT, PIP, MTC, STS; see RTIT 4.2.15)\n"
	      "  --json             one JSON object per line instead of text\n"
	      "  --sync             skip to the first PSB before decoding\n"
	      "  --sideband FILE    take the dialect, cycle_accurate and buffovf_loads_lip\n"
	      "                     from FILE (default: FILE.trace's FILE.sideband, when\n"
	      "                     there is one; named on stderr); --dialect and\n"
	      "                     --cycle-accurate override it\n"
	      "  --no-sideband      do not read one\n"
	      "\n"
	      "Bad bytes are reported with their offset and the rule they break; decoding\n"
	      "resumes at the next PSB.  Exit status: 0 clean, 3 if anything was skipped,\n"
	      "2 on I/O errors, 1 on usage errors, 4 on a bad sideband.\n", out);
}

static ssize_t read_fd(void *opaque, uint8_t *buf, size_t cap)
{
	int fd = *(int *)opaque;
	for (;;) {
		ssize_t n = read(fd, buf, cap);
		if (n >= 0 || errno != EINTR)
			return n;
	}
}

int rtit_dump_stream(FILE *out, const struct rtit_dump_opts *o,
		     const struct rtit_pktdec_cfg *cfg, const char *name)
{
	static struct rtit_pktdec d;	/* 64 KiB buffer: keep it off the stack */
	/* the batch call (issue 20, D99): the same packets, offsets and
	 * errors as one at a time; an item's raw bytes are valid until the
	 * next call */
	static struct rtit_pktdec_item items[256];
	int ret, status = RTIT_EXIT_OK;

	if (rtit_pktdec_init(&d, cfg) < 0)
		return RTIT_EXIT_USAGE;
	if (o->sync && rtit_pktdec_resync(&d, true) < 0) {
		fprintf(stderr, "rtitsim dump: %s: read failed\n", name);
		return RTIT_EXIT_IO;
	}
	for (;;) {
		ret = rtit_pktdec_next_batch(&d, items, sizeof(items) / sizeof(items[0]));
		if (ret == 0)
			break;
		if (ret > 0) {
			for (int i = 0; i < ret; i++) {
				if (o->json)
					rtit_print_json(out, cfg->dialect, &items[i]);
				else
					rtit_print_line(out, cfg->dialect, &items[i]);
			}
			continue;
		}
		if (ret == -RTIT_ERR_IO) {
			fprintf(stderr, "rtitsim dump: %s: read failed: %s\n", name, strerror(errno));
			return RTIT_EXIT_IO;
		}
		/* A decode error: say where and why, then resync at a PSB. */
		uint64_t at = d.err.offset, before = d.skipped;
		uint8_t b = d.buf[d.pos];
		if (rtit_pktdec_resync(&d, false) < 0) {
			fprintf(stderr, "rtitsim dump: %s: read failed\n", name);
			return RTIT_EXIT_IO;
		}
		uint64_t skipped = d.skipped - before, psb = rtit_pktdec_offset(&d);
		if (o->json)
			fprintf(out, "{\"offset\":%" PRIu64 ",\"error\":\"%s\",\"why\":\"%s\",\"skipped\":%" PRIu64 "}\n",
				at, rtit_errstr(d.err.code), d.err.why ? d.err.why : "", skipped);
		else if (psb < at)	/* D86: a PSB the packet before swallowed */
			fprintf(out, "%08" PRIx64 "  error at byte 0x%02x: %s: %s; the next PSB begins"
				" at %08" PRIx64 ", inside the packet before\n", at, b,
				rtit_errstr(d.err.code), d.err.why ? d.err.why : "", psb);
		else
			fprintf(out, "%08" PRIx64 "  error at byte 0x%02x: %s: %s; skipped %" PRIu64
				" bytes to the next PSB\n", at, b, rtit_errstr(d.err.code),
				d.err.why ? d.err.why : "", skipped);
		status = RTIT_EXIT_DECODE;
	}
	if (fflush(out) != 0) {
		fprintf(stderr, "rtitsim dump: write failed: %s\n", strerror(errno));
		return RTIT_EXIT_IO;
	}
	if (status != RTIT_EXIT_OK)
		fprintf(stderr, "rtitsim dump: %s: %" PRIu64 " decode error(s), %" PRIu64
			" byte(s) skipped\n", name, d.nerrors, d.skipped);
	return status;
}

/* The command line.  Returns -1 to go on, or the exit status. */
struct dump_args {
	const char *path, *sb_path;
	bool no_sb, dialect_set, ca_set;
};

static int dump_parse(int argc, char **argv, struct dump_args *a, struct rtit_dump_opts *o,
		      struct rtit_pktdec_cfg *cfg)
{
	for (int i = 1; i < argc; i++) {
		const char *s = argv[i];
		if (!strcmp(s, "--help") || !strcmp(s, "-h")) {
			dump_usage(stdout);
			return RTIT_EXIT_OK;
		} else if (!strcmp(s, "--dialect") || !strncmp(s, "--dialect=", 10)) {
			const char *v = s[9] == '=' ? s + 10 : (i + 1 < argc ? argv[++i] : "");
			if (!strcmp(v, "rtit"))
				cfg->dialect = RTIT_DIALECT_RTIT;
			else if (!strcmp(v, "pt"))
				cfg->dialect = RTIT_DIALECT_PT;
			else {
				fprintf(stderr, "rtitsim dump: --dialect takes rtit or pt, not '%s'\n", v);
				return RTIT_EXIT_USAGE;
			}
			a->dialect_set = true;
		} else if (!strcmp(s, "--cycle-accurate")) {
			cfg->cycle_acc = true;
			a->ca_set = true;
		} else if (!strcmp(s, "--json")) {
			o->json = true;
		} else if (!strcmp(s, "--sync")) {
			o->sync = true;
		} else if (!strcmp(s, "--sideband") && i + 1 < argc) {
			a->sb_path = argv[++i];
		} else if (!strcmp(s, "--no-sideband")) {
			a->no_sb = true;
		} else if (s[0] == '-' && s[1]) {
			fprintf(stderr, "rtitsim dump: unknown or incomplete option '%s' (try --help)\n", s);
			return RTIT_EXIT_USAGE;
		} else if (a->path) {
			fprintf(stderr, "rtitsim dump: one input only ('%s' and '%s')\n", a->path, s);
			return RTIT_EXIT_USAGE;
		} else {
			a->path = s;
		}
	}
	if (!a->path) {
		dump_usage(stderr);
		return RTIT_EXIT_USAGE;
	}
	return -1;
}

/* What the trace does not say, from the sideband given or the one next to
 * PREFIX.trace (issue 16): the dialect, Cycle_Acc (RTIT 4.2.15) and
 * whether a FUP.BuffOvf loads LAST_LIP (RTIT 4.2.3.1, D4), read as
 * `rtitsim decode` reads them (rtit_flow_cfg_from_sideband); the options
 * given override it.  Says on stderr which file it used.  Returns -1 to
 * go on, or the exit status. */
static int dump_sideband(const struct dump_args *a, struct rtit_pktdec_cfg *cfg)
{
	static struct rtit_sideband sb;	/* large */
	static char path[1024];
	const char *sp = a->sb_path;
	size_t n = strlen(a->path);
	char err[512];
	int ret;

	if (a->no_sb)
		return -1;
	if (!sp && n > 6 && !strcmp(a->path + n - 6, ".trace")) {
		snprintf(path, sizeof(path), "%.*s.sideband", (int)(n - 6), a->path);
		if (access(path, R_OK) == 0)
			sp = path;
	}
	if (!sp)
		return -1;
	rtit_sideband_fini(&sb);	/* static: a run before may have filled it */
	if ((ret = rtit_sideband_read(sp, &sb, err, sizeof(err))) < 0) {
		fprintf(stderr, "rtitsim dump: %s\n", err);
		return ret == -RTIT_ERR_IO ? RTIT_EXIT_IO : RTIT_EXIT_INPUT;
	}
	struct rtit_flow_cfg fc;
	rtit_flow_cfg_default(&fc);
	rtit_flow_cfg_from_sideband(&fc, &sb);
	if (!a->dialect_set && sb.dialect >= 0)
		cfg->dialect = (enum rtit_dialect)sb.dialect;
	if (!a->ca_set)
		cfg->cycle_acc = fc.cycle_acc && cfg->dialect == RTIT_DIALECT_RTIT;
	cfg->buffovf_loads_lip = fc.buffovf_loads_lip;
	/* erratum SKZ84's TMA, a packet rule: the CPU's or pt_errata (D143) */
	cfg->pt_skz84 = (fc.pt_errata & RTIT_PT_ERRATUM(RTIT_PT_SKZ84)) != 0;
	cfg->pt_skd007 = (fc.pt_errata & RTIT_PT_ERRATUM(RTIT_PT_SKD007)) != 0;	/* D184 */
	fprintf(stderr, "rtitsim dump: sideband %s: dialect %s, cycle_accurate %d,"
		" buffovf_loads_lip %d%s%s\n", sp, cfg->dialect == RTIT_DIALECT_PT ? "pt" : "rtit",
		cfg->cycle_acc, cfg->buffovf_loads_lip,
		cfg->pt_skz84 && cfg->dialect == RTIT_DIALECT_PT ? ", erratum skz84 (D143)" : "",
		a->dialect_set || a->ca_set ? " (options override it)" : "");
	return -1;
}

int rtit_cmd_dump(int argc, char **argv)
{
	struct rtit_dump_opts o = { 0 };
	struct rtit_pktdec_cfg cfg = { .dialect = RTIT_DIALECT_RTIT, .read = read_fd };
	struct dump_args a = { 0 };
	int fd, ret;

	if ((ret = dump_parse(argc, argv, &a, &o, &cfg)) >= 0)
		return ret;
	if ((ret = dump_sideband(&a, &cfg)) >= 0)
		return ret;
	const char *path = a.path;
	if (cfg.cycle_acc && cfg.dialect != RTIT_DIALECT_RTIT) {
		fputs("rtitsim dump: --cycle-accurate applies to --dialect rtit only (Intel PT CYC has a header)\n", stderr);
		return RTIT_EXIT_USAGE;
	}
	if (!strcmp(path, "-")) {
		fd = STDIN_FILENO;
	} else {
		fd = open(path, O_RDONLY);
		if (fd < 0) {
			fprintf(stderr, "rtitsim dump: %s: cannot open: %s\n", path, strerror(errno));
			return RTIT_EXIT_IO;
		}
	}
	cfg.opaque = &fd;
	ret = rtit_dump_stream(stdout, &o, &cfg, path);
	if (fd != STDIN_FILENO)
		close(fd);
	return ret;
}
