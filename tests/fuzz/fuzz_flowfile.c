/*
 * fuzz_flowfile.c - libFuzzer harness: the binary flow reader
 * (rtit_flow_reader_*, versions 1 and 2, D180) on untrusted bytes.
 *
 * The input is the file.  It is read in pieces whose sizes the input's
 * length chooses.  Invariants (an abort names the broken one): the reader
 * returns a count or -RTIT_ERR_INVALID (never I/O from memory), and a
 * refusal says why; its count is the records returned; after an error it
 * keeps returning it; an accepted version 2 file's records, written again
 * as version 2, give the same trailer (count and digest) and read back to
 * the same records; an accepted version 1 file's count is its size's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_flowfile.h"
#include "rtit/record.h"

static void fail(const char *what)
{
	fprintf(stderr, "fuzz_flowfile: invariant broken: %s\n", what);
	abort();
}

/* Reads @size bytes at @data, @max records a call, into *out (malloc'd,
 * at most @cap records). */
static long read_all(const uint8_t *data, size_t size, size_t max, struct rtit_sim_rec *out,
		     size_t cap, size_t *n, struct rtit_flow_reader *rd, int *status)
{
	FILE *f = size ? fmemopen((void *)data, size, "rb") : fopen("/dev/null", "rb");
	if (!f)
		fail("fmemopen");
	*n = 0;
	long r = rtit_flow_reader_open(rd, f);
	if (r < 0) {
		if (r != -RTIT_ERR_INVALID || !rd->why || !*rd->why)
			fail("a refused header without why");
		fclose(f);
		*status = (int)r;
		return -1;
	}
	while ((r = rtit_flow_reader_next(rd, out + *n, max)) > 0) {
		*n += (size_t)r;
		if (*n > cap)
			fail("more records than the file could hold");
	}
	if (rd->count != *n)
		fail("count differs from the records returned");
	if (r < 0) {
		if (r != -RTIT_ERR_INVALID || !rd->why || !*rd->why || rd->done)
			fail("an error that is not INVALID with why");
		if (rtit_flow_reader_next(rd, out, max) != r)
			fail("the error is not kept");
	} else if (!rd->done) {
		fail("an end without the trailer");
	}
	rtit_flow_reader_close(rd);
	fclose(f);
	*status = (int)r;
	return (long)*n;
}

long fuzz_flowfile_one(const uint8_t *data, size_t size)
{
	/* a record takes a byte at least (version 2), 64 in version 1 */
	size_t cap = size + 1, n, max = 1 + size % 37;
	struct rtit_sim_rec *recs = malloc((cap + max) * sizeof(*recs));
	struct rtit_flow_reader rd;
	int status;
	if (!recs)
		return 0;
	long got = read_all(data, size, max, recs, cap, &n, &rd, &status);
	if (got >= 0 && status == 0) {
		if (rd.version == RTIT_FLOW_V1 && size != 16 + 64 * n + 24)
			fail("a version 1 file's size is not its count's");
		if (rd.version == RTIT_FLOW_V2) {
			char *b;
			size_t len;
			FILE *f = open_memstream(&b, &len);
			struct rtit_flow_writer w;
			if (!f || rtit_flow_writer_init_version(&w, f, NULL, RTIT_FLOW_V2, false) < 0)
				fail("writer");
			rtit_flow_writer_on_batch(recs, n, &w);
			if (rtit_flow_writer_fini(&w, NULL) < 0)
				fail("writer");
			fclose(f);
			if (len < 40 || memcmp(b + len - 24, data + size - 24, 24))
				fail("the records written again give another trailer");
			struct rtit_sim_rec *back = malloc((len + 1 + max) * sizeof(*back));
			size_t n2;
			int st2;
			if (!back || read_all((const uint8_t *)b, len, max, back, len + 1, &n2, &rd, &st2) < 0 ||
			    st2 != 0 || n2 != n)
				fail("the records written again do not read back");
			for (size_t i = 0; i < n; i++) {
				uint8_t p[64], q[64];
				rtit_sim_rec_pack(&recs[i], p);
				rtit_sim_rec_pack(&back[i], q);
				if (memcmp(p, q, 64))
					fail("the records written again read back other records");
			}
			free(back);
			free(b);
		}
	}
	free(recs);
	return got;
}

#ifdef FUZZ_FLOWFILE_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_flowfile_one(data, size);
	return 0;
}
#endif
