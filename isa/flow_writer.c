/*
 * flow_writer.c - the ground-truth writer (rtit/record.h, D138): records
 * packed into chunks of canonical 64-byte records; a whole chunk is
 * hashed (XXH3-64, which gives the same digest however the bytes are cut),
 * written to the binary file in one call and formatted into a 1 MiB text
 * buffer that is written when full.  Optionally the chunks go, in order,
 * to a writer thread, so the simulator's thread only packs.  The files'
 * layout is record.c's.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "rtit/record.h"
#include "record_text.h"

enum {
	CHUNK = 8192,		/* records a chunk: 512 KiB */
	NSLOT = 4,		/* chunks in flight with a thread */
	TXT_CAP = 1 << 20	/* the text buffer, written when this full */
};

struct fw_state {
	uint8_t *slot[NSLOT];
	unsigned nslots;
	size_t fill;		/* records in the chunk being filled */
	char *txt;		/* TXT_CAP + a line */
	size_t tlen;
	/* the thread: chunks submitted (head) and done (tail), counted */
	bool threaded;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	size_t n[NSLOT];
	unsigned head, tail;
	bool stop;
};

/* A failed write: kept with its errno; nothing more is written. */
static void fail(struct rtit_flow_writer *w)
{
	if (!w->err) {
		w->err = -RTIT_ERR_IO;
		w->os_err = errno ? errno : EIO;
	}
}

static void flush_txt(struct rtit_flow_writer *w, struct fw_state *st)
{
	if (st->tlen && !w->err && fwrite(st->txt, 1, st->tlen, w->txt) != st->tlen)
		fail(w);
	st->tlen = 0;
}

/* One chunk of @n packed records: hashed, written, formatted. */
static void process(struct rtit_flow_writer *w, struct fw_state *st, const uint8_t *c, size_t n)
{
	XXH3_64bits_update(w->xxh, c, 64 * n);
	if (w->bin && !w->err && fwrite(c, 64, n, w->bin) != n)
		fail(w);
	if (!w->txt)
		return;
	for (size_t i = 0; i < n; i++) {
		struct rtit_sim_rec r;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		memcpy(&r, c + 64 * i, 64);	/* the canonical form is the struct's */
#else
		isa_rec_unpack(c + 64 * i, &r);
#endif
		st->tlen = (size_t)(isa_flow_line(&r, st->txt + st->tlen) - st->txt);
		if (st->tlen >= TXT_CAP)
			flush_txt(w, st);
	}
}

static void *writer_thread(void *opaque)
{
	struct rtit_flow_writer *w = opaque;
	struct fw_state *st = w->priv;
	pthread_mutex_lock(&st->mu);
	for (;;) {
		while (st->tail == st->head && !st->stop)
			pthread_cond_wait(&st->cv, &st->mu);
		if (st->tail == st->head)
			break;
		unsigned i = st->tail % NSLOT;
		size_t n = st->n[i];
		pthread_mutex_unlock(&st->mu);
		process(w, st, st->slot[i], n);
		pthread_mutex_lock(&st->mu);
		st->tail++;
		pthread_cond_broadcast(&st->cv);
	}
	pthread_mutex_unlock(&st->mu);
	return NULL;
}

/* The chunk being filled is done: processed here, or handed to the thread
 * (waiting while every chunk is in flight). */
static void submit(struct rtit_flow_writer *w, struct fw_state *st)
{
	if (!st->threaded) {
		process(w, st, st->slot[0], st->fill);
		st->fill = 0;
		return;
	}
	pthread_mutex_lock(&st->mu);
	st->n[st->head % NSLOT] = st->fill;
	st->head++;
	pthread_cond_broadcast(&st->cv);
	while (st->head - st->tail == NSLOT)
		pthread_cond_wait(&st->cv, &st->mu);
	pthread_mutex_unlock(&st->mu);
	st->fill = 0;
}

static void free_state(struct fw_state *st)
{
	for (unsigned i = 0; i < st->nslots; i++)
		free(st->slot[i]);
	free(st->txt);
	free(st);
}

static int writer_init(struct rtit_flow_writer *w, FILE *bin, FILE *txt, bool threaded)
{
	if (!w)
		return -RTIT_ERR_INVALID;
	memset(w, 0, sizeof(*w));
	w->bin = bin;
	w->txt = txt;
	struct fw_state *st = calloc(1, sizeof(*st));
	XXH3_state_t *s = XXH3_createState();
	bool ok = st && s;
	if (st) {
		st->nslots = threaded ? NSLOT : 1;
		for (unsigned i = 0; ok && i < st->nslots; i++)
			ok = (st->slot[i] = malloc(64 * (size_t)CHUNK)) != NULL;
		if (ok && txt)
			ok = (st->txt = malloc(TXT_CAP + ISA_FLOW_LINE_MAX)) != NULL;
	}
	if (!ok) {
		if (st)
			free_state(st);
		XXH3_freeState(s);
		return -RTIT_ERR_NOMEM;
	}
	XXH3_64bits_reset(s);
	w->xxh = s;
	w->priv = st;
	if (bin) {
		uint8_t h[16];
		isa_flow_header(h);
		if (fwrite(h, 1, sizeof(h), bin) != sizeof(h))
			fail(w);
	}
	if (threaded && (bin || txt)) {
		pthread_mutex_init(&st->mu, NULL);
		pthread_cond_init(&st->cv, NULL);
		st->threaded = pthread_create(&st->th, NULL, writer_thread, w) == 0;
		if (!st->threaded) {
			pthread_cond_destroy(&st->cv);
			pthread_mutex_destroy(&st->mu);
		}
	}
	return w->err;
}

int rtit_flow_writer_init(struct rtit_flow_writer *w, FILE *bin, FILE *txt)
{
	return writer_init(w, bin, txt, false);
}

int rtit_flow_writer_init_async(struct rtit_flow_writer *w, FILE *bin, FILE *txt)
{
	return writer_init(w, bin, txt, true);
}

void rtit_flow_writer_on_batch(const struct rtit_sim_rec *recs, size_t n, void *opaque)
{
	struct rtit_flow_writer *w = opaque;
	struct fw_state *st = w->priv;
	w->count += n;
	for (size_t i = 0; i < n; i++) {
		uint8_t *o = st->slot[st->threaded ? st->head % NSLOT : 0] + 64 * st->fill;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		/* the canonical form is the struct with its padding zero */
		struct rtit_sim_rec r = recs[i];
		r.pad0 = 0;
		r.pad1 = 0;
		memcpy(o, &r, 64);
#else
		rtit_sim_rec_pack(&recs[i], o);
#endif
		if (++st->fill == CHUNK)
			submit(w, st);
	}
}

int rtit_flow_writer_fini(struct rtit_flow_writer *w, uint64_t *digest)
{
	if (!w || !w->xxh)
		return -RTIT_ERR_INVALID;
	struct fw_state *st = w->priv;
	if (st->fill)
		submit(w, st);
	if (st->threaded) {
		pthread_mutex_lock(&st->mu);
		st->stop = true;
		pthread_cond_broadcast(&st->cv);
		pthread_mutex_unlock(&st->mu);
		pthread_join(st->th, NULL);
		pthread_cond_destroy(&st->cv);
		pthread_mutex_destroy(&st->mu);
	}
	if (w->txt)
		flush_txt(w, st);
	uint64_t d = XXH3_64bits_digest(w->xxh);
	XXH3_freeState(w->xxh);
	w->xxh = NULL;
	free_state(st);
	w->priv = NULL;
	if (digest)
		*digest = d;
	if (w->bin && !w->err) {
		uint8_t t[24];
		isa_flow_trailer(t, w->count, d);
		if (fwrite(t, 1, sizeof(t), w->bin) != sizeof(t))
			fail(w);
	}
	/* a write that failed on the thread: its errno here too, for the
	 * caller's message about the file (ferror says which) */
	if (w->err)
		errno = w->os_err;
	return w->err;
}
