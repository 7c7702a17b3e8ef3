/*
 * bundle.c - the expected outputs a bundle carries besides what a run
 * writes (docs/formats.md "Bundles"): the dump as text and as JSON lines,
 * and the events of the ground truth; shared by `run --bundle` and
 * `golden`.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bundle.h"
#include "cli.h"
#include "dump.h"
#include "outfile.h"
#include "rtit/pt_errata.h"
#include "rtit/sideband.h"

static ssize_t read_fd(void *opaque, uint8_t *buf, size_t cap)
{
	return read(*(int *)opaque, buf, cap);
}

/* Erratum SKZ84's packet rule (D143) when PREFIX.sideband's CPU or
 * pt_errata has it, as `rtitsim dump` reads the sideband next to a trace. */
static bool sideband_skz84(const char *prefix)
{
	static struct rtit_sideband sb;	/* large */
	char path[1100], err[512];
	bool on;

	snprintf(path, sizeof(path), "%s.sideband", prefix);
	if (rtit_sideband_read(path, &sb, err, sizeof(err)) < 0)
		return false;
	on = ((rtit_pt_cpu_errata_str(sb.cpu) | sb.pt_errata) & RTIT_PT_ERRATUM(RTIT_PT_SKZ84)) != 0;
	rtit_sideband_fini(&sb);
	return on;
}

int rtit_cli_write_dump(const char *prefix, int dialect, bool cycle_acc, bool json)
{
	char in[1100], outp[1100];
	struct rtit_dump_opts o = { .json = json };
	struct rtit_pktdec_cfg cfg = { .dialect = (enum rtit_dialect)dialect, .cycle_acc = cycle_acc,
				       .read = read_fd };
	int fd, ret;
	FILE *out;

	snprintf(in, sizeof(in), "%s.trace", prefix);
	snprintf(outp, sizeof(outp), "%s%s", prefix, json ? ".dump.jsonl" : ".dump.txt");
	if ((fd = open(in, O_RDONLY)) < 0) {
		fprintf(stderr, "rtitsim: %s: cannot read: %s\n", in, strerror(errno));
		return RTIT_EXIT_IO;
	}
	if (!(out = rtit_out_open("rtitsim", outp))) {
		close(fd);
		return RTIT_EXIT_IO;
	}
	cfg.opaque = &fd;
	cfg.pt_skz84 = sideband_skz84(prefix);
	ret = rtit_dump_stream(out, &o, &cfg, in);
	close(fd);
	bool bad = ferror(out);
	if (fclose(out) != 0 || bad) {
		fprintf(stderr, "rtitsim: %s: writing failed: %s\n", outp, strerror(errno ? errno : EIO));
		rtit_out_discard();
		return RTIT_EXIT_IO;
	}
	return rtit_out_commit("rtitsim") < 0 ? RTIT_EXIT_IO : ret;
}

/* PREFIX.events.txt: the event records ('E' lines) of PREFIX.flow.txt, in
 * order, byte for byte. */
static int write_events(const char *prefix)
{
	char in[1100], outp[1100], line[4096];
	snprintf(in, sizeof(in), "%s.flow.txt", prefix);
	snprintf(outp, sizeof(outp), "%s.events.txt", prefix);
	FILE *f = fopen(in, "r"), *o;
	if (!f) {
		fprintf(stderr, "rtitsim: %s: cannot read: %s\n", in, strerror(errno));
		return RTIT_EXIT_IO;
	}
	if (!(o = rtit_out_open("rtitsim", outp))) {
		fclose(f);
		return RTIT_EXIT_IO;
	}
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == 'E' && line[1] == ' ')
			fputs(line, o);
	}
	bool bad = ferror(o) || ferror(f);
	fclose(f);
	if (fclose(o) != 0 || bad) {
		fprintf(stderr, "rtitsim: %s: writing failed: %s\n", outp, strerror(errno ? errno : EIO));
		rtit_out_discard();
		return RTIT_EXIT_IO;
	}
	return rtit_out_commit("rtitsim") < 0 ? RTIT_EXIT_IO : RTIT_EXIT_OK;
}

int rtit_cli_bundle_outputs(const char *prefix, int dialect, bool cycle_acc)
{
	int r = rtit_cli_write_dump(prefix, dialect, cycle_acc, false);
	if (r == RTIT_EXIT_OK)
		r = rtit_cli_write_dump(prefix, dialect, cycle_acc, true);
	if (r == RTIT_EXIT_OK)
		r = write_events(prefix);
	return r;
}

static bool ends_with(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);
	return n >= m && !strcmp(s + n - m, suf);
}

int rtit_cli_bundle_stem(const char *arg, char *stem, size_t cap)
{
	static const char mf[] = ".manifest.json";
	struct stat st;

	if (stat(arg, &st) == 0 && S_ISDIR(st.st_mode)) {
		DIR *d = opendir(arg);
		struct dirent *e;
		int n = 0;
		while (d && (e = readdir(d)))
			if (ends_with(e->d_name, mf) && n++ == 0)
				snprintf(stem, cap, "%s/%.*s", arg,
					 (int)(strlen(e->d_name) - strlen(mf)), e->d_name);
		if (d)
			closedir(d);
		if (n != 1) {
			fprintf(stderr, "rtitsim: %s: a directory with %s bundle manifest"
				" (*.manifest.json): name the bundle's stem\n", arg,
				n ? "more than one" : "no");
			return -1;
		}
	} else if (ends_with(arg, mf)) {
		snprintf(stem, cap, "%.*s", (int)(strlen(arg) - strlen(mf)), arg);
	} else if (ends_with(arg, ".trace")) {
		snprintf(stem, cap, "%.*s", (int)(strlen(arg) - strlen(".trace")), arg);
	} else {
		snprintf(stem, cap, "%s", arg);
	}
	return 0;
}
