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
#include "rtit/print.h"

static void dump_usage(FILE *out)
{
	fputs("usage: rtitsim dump [--dialect rtit|pt] [--cycle-accurate] [--json] [--sync] FILE|-\n"
	      "\n"
	      "Prints one line per packet: offset, raw bytes, name, decoded fields, and for\n"
	      "IP packets the full IP with which bits were sent and which came from the last IP.\n"
	      "\n"
	      "  --dialect rtit|pt  packet format (default rtit: Atom RTIT; pt: Intel PT)\n"
	      "  --cycle-accurate   RTIT stream recorded with Cycle_Acc=1 (cycle count packets\n"
	      "                     follow TIP, FUP, full TNT, PIP, MTC, STS; see RTIT 4.2.15)\n"
	      "  --json             one JSON object per line instead of text\n"
	      "  --sync             skip to the first PSB before decoding\n"
	      "\n"
	      "Bad bytes are reported with their offset and the rule they break; decoding\n"
	      "resumes at the next PSB.  Exit status: 0 clean, 3 if anything was skipped,\n"
	      "2 on I/O errors, 1 on usage errors.\n", out);
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
	struct rtit_pktdec_item it;
	int ret, status = RTIT_EXIT_OK;

	if (rtit_pktdec_init(&d, cfg) < 0)
		return RTIT_EXIT_USAGE;
	if (o->sync && rtit_pktdec_resync(&d, true) < 0) {
		fprintf(stderr, "rtitsim dump: %s: read failed\n", name);
		return RTIT_EXIT_IO;
	}
	for (;;) {
		ret = rtit_pktdec_next(&d, &it);
		if (ret == 0)
			break;
		if (ret > 0) {
			if (o->json)
				rtit_print_json(out, cfg->dialect, &it);
			else
				rtit_print_line(out, cfg->dialect, &it);
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
		uint64_t skipped = d.skipped - before;
		if (o->json)
			fprintf(out, "{\"offset\":%" PRIu64 ",\"error\":\"%s\",\"why\":\"%s\",\"skipped\":%" PRIu64 "}\n",
				at, rtit_errstr(d.err.code), d.err.why ? d.err.why : "", skipped);
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

int rtit_cmd_dump(int argc, char **argv)
{
	struct rtit_dump_opts o = { 0 };
	struct rtit_pktdec_cfg cfg = { .dialect = RTIT_DIALECT_RTIT, .read = read_fd };
	const char *path = NULL;
	int fd, ret;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			dump_usage(stdout);
			return RTIT_EXIT_OK;
		} else if (!strcmp(a, "--dialect") || !strncmp(a, "--dialect=", 10)) {
			const char *v = a[9] == '=' ? a + 10 : (i + 1 < argc ? argv[++i] : "");
			if (!strcmp(v, "rtit"))
				cfg.dialect = RTIT_DIALECT_RTIT;
			else if (!strcmp(v, "pt"))
				cfg.dialect = RTIT_DIALECT_PT;
			else {
				fprintf(stderr, "rtitsim dump: --dialect takes rtit or pt, not '%s'\n", v);
				return RTIT_EXIT_USAGE;
			}
		} else if (!strcmp(a, "--cycle-accurate")) {
			cfg.cycle_acc = true;
		} else if (!strcmp(a, "--json")) {
			o.json = true;
		} else if (!strcmp(a, "--sync")) {
			o.sync = true;
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "rtitsim dump: unknown option '%s' (try --help)\n", a);
			return RTIT_EXIT_USAGE;
		} else if (path) {
			fprintf(stderr, "rtitsim dump: one input only ('%s' and '%s')\n", path, a);
			return RTIT_EXIT_USAGE;
		} else {
			path = a;
		}
	}
	if (!path) {
		dump_usage(stderr);
		return RTIT_EXIT_USAGE;
	}
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
