/*
 * cmd_flow.c - `rtitsim flow FILE.flow|-`: a binary ground-truth flow
 * (what `rtitsim run` writes as PREFIX.flow) as its text form, one line a
 * record (docs/formats.md, PREFIX.flow.txt), in constant memory.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "outfile.h"
#include "rtit/record.h"

static void flow_usage(FILE *out)
{
	fputs("usage: rtitsim flow FILE.flow|-\n"
	      "       rtitsim flow --convert 1|2 FILE.flow|- OUT.flow\n"
	      "\n"
	      "Prints a binary flow file (rtitsim run's PREFIX.flow, version 1 or 2) as\n"
	      "text, one line a record, exactly as PREFIX.flow.txt has it\n"
	      "(docs/formats.md); the file's record count and XXH3 digest are checked at\n"
	      "its end.\n"
	      "\n"
	      "--convert VERSION writes the file's records to OUT.flow as binary version\n"
	      "VERSION instead (1: 64 bytes a record; 2: compact, rtitsim run's default),\n"
	      "with the same count and digest; OUT.flow appears only when whole.\n"
	      "\n"
	      "Exit status: 0 done, 1 usage, 2 I/O (cannot read FILE, or write the\n"
	      "output), 4 not a flow file, or one cut short or altered (the lines before\n"
	      "the message are the records read up to there).\n", out);
}

/* --convert: the records of @rd (opened on @path) to @out as @version. */
static int convert(struct rtit_flow_reader *rd, const char *path, const char *out, int version)
{
	static const char cmd[] = "rtitsim flow";
	static struct rtit_sim_rec recs[1024];
	FILE *o = rtit_out_open(cmd, out);
	if (!o)
		return RTIT_EXIT_IO;
	struct rtit_flow_writer w;
	if (rtit_flow_writer_init_version(&w, o, NULL, version, false) < 0) {
		fprintf(stderr, "%s: out of memory\n", cmd);
		fclose(o);
		rtit_out_discard();
		return RTIT_EXIT_IO;
	}
	long n;
	while ((n = rtit_flow_reader_next(rd, recs, 1024)) > 0)
		rtit_flow_writer_on_batch(recs, (size_t)n, &w);
	uint64_t d;
	int wr = rtit_flow_writer_fini(&w, &d);
	int we = errno;
	bool bad = ferror(o);
	if (fclose(o) != 0 && !wr)
		wr = -RTIT_ERR_IO, we = errno;
	int st = RTIT_EXIT_OK;
	if (n < 0) {
		if (n == -RTIT_ERR_IO)
			fprintf(stderr, "%s: %s: read failed after record %llu: %s\n", cmd, path,
				(unsigned long long)rd->count, strerror(errno));
		else
			fprintf(stderr, "%s: %s: cut short or altered after record %llu: %s\n", cmd,
				path, (unsigned long long)rd->count, rd->why ? rd->why : "invalid");
		st = n == -RTIT_ERR_IO ? RTIT_EXIT_IO : RTIT_EXIT_INPUT;
	} else if (wr < 0 || bad) {
		fprintf(stderr, "%s: %s: writing failed: %s\n", cmd, out, strerror(we ? we : EIO));
		st = RTIT_EXIT_IO;
	} else if (d != rd->digest) {
		/* version 1 hashes the bytes as stored: a record whose zero
		 * bytes (59-63) are not zero has no version 2 form */
		fprintf(stderr, "%s: %s: its records' zero bytes are not all zero: they have no"
			" version %d form with the same digest\n", cmd, path, version);
		st = RTIT_EXIT_INPUT;
	}
	if (st != RTIT_EXIT_OK) {
		rtit_out_discard();
		return st;
	}
	return rtit_out_commit(cmd) < 0 ? RTIT_EXIT_IO : RTIT_EXIT_OK;
}

int rtit_cmd_flow(int argc, char **argv)
{
	int version = 0;
	const char *out = NULL;
	if (argc == 5 && !strcmp(argv[1], "--convert")) {
		version = !strcmp(argv[2], "1") ? 1 : !strcmp(argv[2], "2") ? 2 : -1;
		if (version < 0) {
			fprintf(stderr, "rtitsim flow: --convert takes 1 or 2, not '%s'\n", argv[2]);
			return RTIT_EXIT_USAGE;
		}
		out = argv[4];
		argv += 2;
		argc = 2;
	}
	if (argc != 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		flow_usage(argc == 2 ? stdout : stderr);
		return argc == 2 ? RTIT_EXIT_OK : RTIT_EXIT_USAGE;
	}
	const char *path = argv[1];
	FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	if (!f) {
		fprintf(stderr, "rtitsim flow: %s: %s\n", path, strerror(errno));
		return RTIT_EXIT_IO;
	}
	struct rtit_flow_reader rd;
	static struct rtit_sim_rec recs[1024];
	int status = RTIT_EXIT_OK;
	long n = rtit_flow_reader_open(&rd, f);
	if (n < 0) {
		fprintf(stderr, "rtitsim flow: %s: %s\n", path, n == -RTIT_ERR_IO ? strerror(errno) :
			rd.why ? rd.why : rtit_errstr((int)n));
		status = n == -RTIT_ERR_IO ? RTIT_EXIT_IO : RTIT_EXIT_INPUT;
	}
	if (status == RTIT_EXIT_OK && out) {
		status = convert(&rd, path, out, version);
		rtit_flow_reader_close(&rd);
		if (f != stdin)
			fclose(f);
		return status;
	}
	while (status == RTIT_EXIT_OK && (n = rtit_flow_reader_next(&rd, recs, 1024)) > 0) {
		for (long i = 0; i < n; i++) {
			char line[256];
			int len = rtit_sim_rec_format(&recs[i], line, sizeof(line) - 1);
			if (len < 0 || (size_t)len >= sizeof(line) - 1)
				len = (int)strlen(line);
			line[len] = '\n';
			fwrite(line, 1, (size_t)len + 1, stdout);
		}
	}
	if (status == RTIT_EXIT_OK && n < 0) {
		fflush(stdout);
		if (n == -RTIT_ERR_IO)
			fprintf(stderr, "rtitsim flow: %s: read failed after record %llu: %s\n", path,
				(unsigned long long)rd.count, strerror(errno));
		else
			fprintf(stderr, "rtitsim flow: %s: cut short or altered after record %llu: %s\n",
				path, (unsigned long long)rd.count,
				rd.why ? rd.why : "no trailer, or its count or digest differs");
		status = n == -RTIT_ERR_IO ? RTIT_EXIT_IO : RTIT_EXIT_INPUT;
	}
	rtit_flow_reader_close(&rd);
	if (f != stdin)
		fclose(f);
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "rtitsim flow: writing the output failed: %s\n", strerror(errno));
		status = RTIT_EXIT_IO;
	}
	return status;
}
