/*
 * cmd_golden.c - `rtitsim golden verify|update|list [DIR]`: the corpus of
 * scenarios with their expected trace, readable dump and ground-truth flow.
 *
 * DIR (default: golden) holds NAME.scn files; DIR/expected/ holds, for each,
 * NAME.trace, NAME.dump.txt, NAME.flow.txt and NAME.sideband; DIR/MANIFEST
 * lists every vector with its dialect, sizes and XXH3 digests (canonical,
 * big-endian hex) and what it exercises.  `verify` regenerates every
 * scenario and compares byte for byte; `update` rewrites the expected files
 * after a reviewed change.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "cli.h"
#include "util.h"
#include "dump.h"
#include "run.h"
#include "rtit/pktdec.h"

enum { max_vectors = 256 };

static void golden_usage(FILE *out)
{
	fputs("usage: rtitsim golden verify|update|list [DIR]\n"
	      "\n"
	      "  verify  regenerate every DIR/*.scn and compare the trace, the dump and the\n"
	      "          flow with DIR/expected/ byte for byte; the first difference is\n"
	      "          named by offset and packet (exit 5)\n"
	      "  update  rewrite DIR/expected/ and DIR/MANIFEST (after a reviewed change)\n"
	      "  list    print the manifest\n"
	      "\n"
	      "DIR defaults to ./golden.  Each DIR/expected/NAME.* set is a bundle\n"
	      "(docs/formats.md \"Bundles\").\n"
	      "\n"
	      "Exit status: 0 ok, 1 usage, 2 I/O, 4 no scenarios or one that does not run\n"
	      "cleanly, 5 a vector differs from its expected files.\n", out);
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The scenario names in @dir, sorted. */
static int list_scenarios(const char *dir, char **names, int max)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)) && n < max) {
		size_t len = strlen(e->d_name);
		if (len > 4 && !strcmp(e->d_name + len - 4, ".scn"))
			names[n++] = strndup(e->d_name, len - 4);
	}
	closedir(d);
	qsort(names, (size_t)n, sizeof(*names), cmp_names);
	return n;
}


static void canonical(char out[17], uint64_t h)
{
	XXH64_canonical_t c;
	XXH64_canonicalFromHash(&c, h);
	for (int i = 0; i < 8; i++)
		sprintf(out + 2 * i, "%02x", c.digest[i]);
}

static uint64_t file_digest(const char *path, size_t *len)
{
	uint8_t *b = rtit_cli_slurp(path, len);
	uint64_t h = b ? XXH3_64bits(b, *len) : 0;
	free(b);
	return h;
}

/* Runs DIR/NAME.scn into the bundle OUTDIR/NAME.* (rtit/bundle.h).
 * Returns RTIT_EXIT_*. */
static int regenerate(const char *dir, const char *name, const char *outdir,
		      struct rtit_run_result *res)
{
	char path[1024];
	size_t n;
	uint8_t *text;
	int st;

	snprintf(path, sizeof(path), "%s/%s.scn", dir, name);
	if (!(text = rtit_cli_slurp(path, &n))) {
		fprintf(stderr, "%s: cannot read: %s\n", path, strerror(errno));
		return RTIT_EXIT_IO;
	}
	struct rtit_run_opts o = {
		.text = (const char *)text, .source = path, .name = name, .silent = true,
		.bundle = outdir, .stem = name,
	};
	st = rtit_run(&o, res);
	free(text);
	return st;
}

/* The packet of @trace (decoded as @dialect) that holds byte @off. */
static void packet_at(const uint8_t *trace, size_t len, int dialect, bool ca, uint64_t off,
		      char *buf, size_t cap)
{
	static struct rtit_pktdec d;
	struct rtit_pktdec_cfg cfg = { .dialect = (enum rtit_dialect)dialect, .cycle_acc = ca,
				       .mem = trace, .mem_len = len };
	struct rtit_pktdec_item it;

	snprintf(buf, cap, "no packet");
	rtit_pktdec_init(&d, &cfg);
	while (rtit_pktdec_next(&d, &it) == 1) {
		if (off < it.offset + it.pkt.size) {
			snprintf(buf, cap, "%s at 0x%" PRIx64, rtit_pkt_name(it.pkt.type), it.offset);
			return;
		}
	}
}

/* Compares one generated file with the expected one; prints the first
 * difference.  Returns 0 when equal. */
static int compare(const char *name, const char *what, const char *want_path, const char *got_path,
		   bool binary, int dialect, bool ca)
{
	size_t wn, gn;
	uint8_t *w = rtit_cli_slurp(want_path, &wn), *g = rtit_cli_slurp(got_path, &gn);
	int ret = 0;

	if (!w) {
		fprintf(stderr, "%s: %s missing (run 'rtitsim golden update' after reviewing)\n",
			name, want_path);
		ret = 1;
	} else if (!g) {
		fprintf(stderr, "%s: %s was not produced\n", name, got_path);
		ret = 1;
	} else if (wn != gn || memcmp(w, g, wn)) {
		size_t i = 0, min = wn < gn ? wn : gn;
		while (i < min && w[i] == g[i])
			i++;
		if (binary) {
			char wp[64], gp[64];
			packet_at(w, wn, dialect, ca, i, wp, sizeof(wp));
			packet_at(g, gn, dialect, ca, i, gp, sizeof(gp));
			char wb[8] = "end", gb[8] = "end";
			if (i < wn)
				snprintf(wb, sizeof(wb), "0x%02x", w[i]);
			if (i < gn)
				snprintf(gb, sizeof(gb), "0x%02x", g[i]);
			fprintf(stderr, "%s: %s differs at byte 0x%zx: expected %s (in %s), got %s (in %s); %zu vs %zu bytes\n",
				name, what, i, wb, wp, gb, gp, wn, gn);
		} else {
			size_t line = 1;
			for (size_t k = 0; k < i; k++)
				line += w[k] == '\n';
			fprintf(stderr, "%s: %s differs at line %zu\n", name, what, line);
		}
		ret = 1;
	}
	free(w);
	free(g);
	return ret;
}

/* The files of a golden bundle `verify` compares (the sideband holds the
 * writer's version and is not compared; the manifest has the digests of
 * all but it).  The image is the first ELF or raw file. */
static const struct {
	const char *ext, *what;
	bool bin, optional;
} files[] = {
	{ ".trace", "trace", true, false }, { ".dump.txt", "dump", false, false },
	{ ".dump.jsonl", "JSON dump", false, false }, { ".flow.txt", "flow", false, false },
	{ ".flow", "binary flow", false, false }, { ".events.txt", "events", false, false },
	{ ".manifest.json", "manifest", false, false }, { ".elf", "image", false, true },
	{ ".bin", "image", false, true },
};
enum { nfiles = sizeof(files) / sizeof(files[0]) };

static int do_verify(const char *dir, char **names, int n)
{
	char tmpl[] = "/tmp/rtitsim-golden-XXXXXX";
	char *tmp = mkdtemp(tmpl);
	int bad = 0;

	if (!tmp) {
		fprintf(stderr, "rtitsim golden: cannot make a temporary directory: %s\n", strerror(errno));
		return RTIT_EXIT_IO;
	}
	for (int i = 0; i < n; i++) {
		char prefix[1024], want[1024], got[1100];
		struct rtit_run_result res = { 0 };
		int st;

		snprintf(prefix, sizeof(prefix), "%s/%s", tmp, names[i]);
		st = regenerate(dir, names[i], tmp, &res);
		if (st != RTIT_EXIT_OK) {
			fprintf(stderr, "%s: the scenario did not run cleanly (exit %d)\n", names[i], st);
			bad++;
			continue;
		}
		int diff = 0;
		for (unsigned f = 0; f < nfiles; f++) {
			snprintf(want, sizeof(want), "%s/expected/%s%s", dir, names[i], files[f].ext);
			snprintf(got, sizeof(got), "%s%s", prefix, files[f].ext);
			if (files[f].optional && access(got, F_OK) != 0 && access(want, F_OK) != 0)
				continue;
			diff |= compare(names[i], files[f].what, want, got, files[f].bin, res.dialect,
					res.cycle_acc);
		}
		if (diff)
			bad++;
		else
			printf("ok  %-28s %s\n", names[i], res.describe);
		for (unsigned f = 0; f < nfiles; f++) {
			snprintf(got, sizeof(got), "%s%s", prefix, files[f].ext);
			unlink(got);
		}
		snprintf(got, sizeof(got), "%s.sideband", prefix);
		unlink(got);
	}
	rmdir(tmp);
	printf("golden: %d vectors, %d passed, %d failed\n", n, n - bad, bad);
	return bad ? RTIT_EXIT_MISMATCH : RTIT_EXIT_OK;
}

static int do_update(const char *dir, char **names, int n)
{
	char path[1024];
	FILE *m;

	snprintf(path, sizeof(path), "%s/expected", dir);
	if (mkdir(path, 0777) < 0 && errno != EEXIST) {
		fprintf(stderr, "rtitsim golden: %s: %s\n", path, strerror(errno));
		return RTIT_EXIT_IO;
	}
	snprintf(path, sizeof(path), "%s/MANIFEST", dir);
	if (!(m = fopen(path, "w"))) {
		fprintf(stderr, "rtitsim golden: %s: %s\n", path, strerror(errno));
		return RTIT_EXIT_IO;
	}
	fprintf(m, "# rtitsim golden corpus: regenerated by 'rtitsim golden update', checked by\n"
		   "# 'rtitsim golden verify'.  XXH3-64 digests in canonical (big-endian) hex.\n"
		   "# name | dialect | trace bytes | trace xxh3 | dump xxh3 | flow xxh3 | what it exercises\n");
	for (int i = 0; i < n; i++) {
		char prefix[1024], p2[1100];
		struct rtit_run_result res = { 0 };
		char th[17], dh[17], fh[17];
		size_t tn, dn, fn;
		int st;

		snprintf(prefix, sizeof(prefix), "%s/expected/%s", dir, names[i]);
		snprintf(p2, sizeof(p2), "%s/expected", dir);
		st = regenerate(dir, names[i], p2, &res);
		if (st != RTIT_EXIT_OK) {
			fprintf(stderr, "%s: the scenario did not run cleanly (exit %d): not updated\n",
				names[i], st);
			fclose(m);
			return st;
		}
		snprintf(p2, sizeof(p2), "%s.trace", prefix);
		canonical(th, file_digest(p2, &tn));
		snprintf(p2, sizeof(p2), "%s.dump.txt", prefix);
		canonical(dh, file_digest(p2, &dn));
		snprintf(p2, sizeof(p2), "%s.flow.txt", prefix);
		canonical(fh, file_digest(p2, &fn));
		fprintf(m, "%s | %s | %zu | %s | %s | %s | %s\n", names[i],
			res.dialect ? "pt" : "rtit", tn, th, dh, fh, res.describe);
		printf("updated %s\n", names[i]);
	}
	if (fclose(m) != 0)
		return RTIT_EXIT_IO;
	return RTIT_EXIT_OK;
}

int rtit_cmd_golden(int argc, char **argv)
{
	const char *dir = "golden";
	char *names[max_vectors];
	int n, ret;

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		golden_usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? RTIT_EXIT_USAGE : RTIT_EXIT_OK;
	}
	if (argc > 3) {
		golden_usage(stderr);
		return RTIT_EXIT_USAGE;
	}
	if (argc == 3)
		dir = argv[2];
	if (!strcmp(argv[1], "list")) {
		char path[1024];
		size_t len;
		snprintf(path, sizeof(path), "%s/MANIFEST", dir);
		uint8_t *b = rtit_cli_slurp(path, &len);
		if (!b) {
			fprintf(stderr, "rtitsim golden: %s: %s\n", path, strerror(errno));
			return RTIT_EXIT_IO;
		}
		fwrite(b, 1, len, stdout);
		free(b);
		return RTIT_EXIT_OK;
	}
	n = list_scenarios(dir, names, max_vectors);
	if (n < 0) {
		fprintf(stderr, "rtitsim golden: %s: %s\n", dir, strerror(errno));
		return RTIT_EXIT_IO;
	}
	if (!n) {
		fprintf(stderr, "rtitsim golden: %s: no *.scn scenarios\n", dir);
		return RTIT_EXIT_INPUT;
	}
	if (!strcmp(argv[1], "verify"))
		ret = do_verify(dir, names, n);
	else if (!strcmp(argv[1], "update"))
		ret = do_update(dir, names, n);
	else {
		golden_usage(stderr);
		ret = RTIT_EXIT_USAGE;
	}
	for (int i = 0; i < n; i++)
		free(names[i]);
	return ret;
}
