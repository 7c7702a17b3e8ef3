/*
 * flow_writer.c - the ground-truth writer (rtit/record.h, D138, D160):
 * records packed into chunks of canonical 64-byte records; chunks are
 * hashed (XXH3-64, which gives the same digest however the bytes are cut),
 * written to the binary file and formatted into a 1 MiB text buffer that
 * is written when full.  Optionally the chunks go, in order, through a
 * ring to a writer thread, so the simulator's thread only packs.  The
 * files' layout is record.c's.
 *
 * The ring (D160): small chunks (without a thread the one being filled
 * stays in the caches until it is hashed), handed over without a lock (2
 * MiB, the memory D138's four chunks took): the producer publishes a chunk by
 * advancing `head`, the writer frees chunks by advancing `tail`; either
 * side sleeps on a condition variable only when it must wait (ring empty,
 * ring full) and is woken by the other only when it said it sleeps.  The
 * writer takes up to half the ring at once (one hash update, one fwrite),
 * and is woken only when half the ring is waiting, so a run makes few
 * wake-ups and few system calls.
 *
 * The text's output thread (D187): with the writer thread, the text is
 * formatted into one of NTXT buffers of 512 KiB while a third thread
 * writes the ones already full, in order, so the formatting and the
 * kernel's part of the writes (page-cache pages allocated, charged and
 * filled) run on both cores.  The file's bytes are the same; a failed
 * write is kept with its errno and ends the text's writing.
 *
 * Version 2 of the binary file (D180): where the chunks are hashed they
 * are also coded (flow_compact.c) into blocks of ISA_FC_BLOCK_RECS records
 * (the last one shorter), each written in one call: the same bytes with
 * and without the thread; the simulator's thread still only packs.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "rtit/record.h"
#include "flow_compact.h"
#include "record_text.h"

enum {
	CHUNK = 512,		/* records a chunk: 32 KiB */
	NSLOT = 64,		/* chunks in the ring with a thread: 2 MiB */
	TAKE = NSLOT / 2,	/* chunks the writer takes at most at once */
	TXT_CAP = 1 << 20,	/* the text buffer, written when this full */
	NTXT = 4,		/* text buffers with the output thread ... */
	TXT_PART = 1 << 19	/* ... each written when this full: 2 MiB */
};

_Static_assert(offsetof(struct rtit_sim_rec, cpl) == 56 &&
	       offsetof(struct rtit_sim_rec, vector) == 58 &&
	       offsetof(struct rtit_sim_rec, pad0) == 59 &&
	       offsetof(struct rtit_sim_rec, pad1) == 60, "the record's last 8 bytes");

struct fw_state {
	uint8_t *ring;		/* nslots chunks, one after the other */
	unsigned nslots;
	size_t fill;		/* records in the chunk being filled */
	uint8_t *cur;		/* where the next record goes */
	char *txt;		/* tcap + a line */
	size_t tlen, tcap;
	/* version 2 (D180): the predictor, a block's bytes (its header
	 * first); encoded where the chunks are hashed */
	struct isa_fc_state *fc;
	uint8_t *blk;
	size_t blk_n, blk_len;	/* records and bytes in it */
	/* the thread: chunks published (head, the producer's) and done
	 * (tail, the writer's), counted; n: records in each published chunk */
	bool threaded;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv_w, cv_p;	/* the writer's, the producer's */
	size_t n[NSLOT];
	_Atomic uint64_t head, tail;
	_Atomic bool w_sleeps, p_sleeps, stop;
	/* the text's output thread (D187): buffers published by the writer
	 * (t_head) and written (t_tail), counted, under t_mu; tl: the
	 * length of each published buffer; its failure, kept apart from
	 * w->err (the writer thread's) until both are joined */
	bool t_threaded;
	pthread_t t_th;
	pthread_mutex_t t_mu;
	pthread_cond_t t_cv_out, t_cv_fmt;	/* the output thread's, the formatter's */
	char *tb[NTXT];
	size_t tl[NTXT];
	uint64_t t_head, t_tail;
	bool t_stop;
	int t_err;
	_Atomic bool t_failed;
};

/* A failed write: kept with its errno; nothing more is written. */
static void fail(struct rtit_flow_writer *w)
{
	if (!w->err) {
		w->err = -RTIT_ERR_IO;
		w->os_err = errno ? errno : EIO;
	}
}

/* The output thread: writes the published text buffers in order until
 * told to stop with none left. */
static void *txt_thread(void *opaque)
{
	struct rtit_flow_writer *w = opaque;
	struct fw_state *st = w->priv;
	pthread_mutex_lock(&st->t_mu);
	for (;;) {
		while (st->t_tail == st->t_head && !st->t_stop)
			pthread_cond_wait(&st->t_cv_out, &st->t_mu);
		if (st->t_tail == st->t_head)
			break;
		unsigned k = (unsigned)(st->t_tail % NTXT);
		size_t n = st->tl[k];
		pthread_mutex_unlock(&st->t_mu);
		if (!st->t_err && fwrite(st->tb[k], 1, n, w->txt) != n) {
			st->t_err = errno ? errno : EIO;
			atomic_store_explicit(&st->t_failed, true, memory_order_relaxed);
		}
		pthread_mutex_lock(&st->t_mu);
		st->t_tail++;
		pthread_cond_signal(&st->t_cv_fmt);
	}
	pthread_mutex_unlock(&st->t_mu);
	return NULL;
}

/* The text buffer written: here, or handed to the output thread (in order)
 * and the next buffer taken once it has been written. */
static void flush_txt(struct rtit_flow_writer *w, struct fw_state *st)
{
	if (st->t_threaded) {
		if (!st->tlen)
			return;
		pthread_mutex_lock(&st->t_mu);
		st->tl[st->t_head % NTXT] = st->tlen;
		st->t_head++;
		pthread_cond_signal(&st->t_cv_out);
		while (st->t_head - st->t_tail == NTXT)
			pthread_cond_wait(&st->t_cv_fmt, &st->t_mu);
		pthread_mutex_unlock(&st->t_mu);
		st->txt = st->tb[st->t_head % NTXT];
		st->tlen = 0;
		return;
	}
	if (st->tlen && !w->err && fwrite(st->txt, 1, st->tlen, w->txt) != st->tlen)
		fail(w);
	st->tlen = 0;
}

/* The lock and the two conditions of a thread and the one it works with. */
static void sync_destroy(pthread_mutex_t *mu, pthread_cond_t *c0, pthread_cond_t *c1)
{
	pthread_cond_destroy(c1);
	pthread_cond_destroy(c0);
	pthread_mutex_destroy(mu);
}

/* Starts @fn(@arg) with its lock and conditions made; false (nothing
 * left made) when the thread cannot be started. */
static bool thread_start(pthread_t *th, pthread_mutex_t *mu, pthread_cond_t *c0,
			 pthread_cond_t *c1, void *(*fn)(void *), void *arg)
{
	pthread_mutex_init(mu, NULL);
	pthread_cond_init(c0, NULL);
	pthread_cond_init(c1, NULL);
	if (pthread_create(th, NULL, fn, arg) == 0)
		return true;
	sync_destroy(mu, c0, c1);
	return false;
}

/* The output thread stopped after writing what was published; its failure
 * becomes the writer's (if the writer had none). */
static void stop_txt_thread(struct rtit_flow_writer *w, struct fw_state *st)
{
	pthread_mutex_lock(&st->t_mu);
	st->t_stop = true;
	pthread_cond_signal(&st->t_cv_out);
	pthread_mutex_unlock(&st->t_mu);
	pthread_join(st->t_th, NULL);
	sync_destroy(&st->t_mu, &st->t_cv_out, &st->t_cv_fmt);
	st->t_threaded = false;
	if (st->t_err && !w->err) {
		w->err = -RTIT_ERR_IO;
		w->os_err = st->t_err;
	}
}

/* Version 2: the block, its header first, written and emptied. */
static void write_block(struct rtit_flow_writer *w, struct fw_state *st)
{
	for (int j = 0; j < 4; j++) {
		st->blk[j] = (uint8_t)(st->blk_n >> (8 * j));
		st->blk[4 + j] = (uint8_t)(st->blk_len >> (8 * j));
	}
	size_t b = ISA_FC_BLOCK_HDR + st->blk_len;
	if (!w->err && fwrite(st->blk, 1, b, w->bin) != b)
		fail(w);
	st->blk_n = st->blk_len = 0;
}

/* @n packed records at @c: hashed, written, formatted. */
static void process(struct rtit_flow_writer *w, struct fw_state *st, const uint8_t *c0, size_t n0)
{
	const uint8_t *c = c0;
	size_t n = n0;
	XXH3_64bits_update(w->xxh, c, 64 * n);
	if (st->fc) {
		/* into the block, written when it holds ISA_FC_BLOCK_RECS
		 * records (and at the end): the blocks do not depend on how
		 * the records came */
		while (n && !w->err) {
			size_t k = ISA_FC_BLOCK_RECS - st->blk_n;
			if (k > n)
				k = n;
			st->blk_len += isa_fc_encode(st->fc, c, k,
						     st->blk + ISA_FC_BLOCK_HDR + st->blk_len);
			st->blk_n += k;
			if (st->blk_n == ISA_FC_BLOCK_RECS)
				write_block(w, st);
			c += 64 * k;
			n -= k;
		}
	} else if (w->bin && !w->err && fwrite(c, 64, n, w->bin) != n) {
		fail(w);
	}
	if (!w->txt || w->err || atomic_load_explicit(&st->t_failed, memory_order_relaxed))
		return;
	c = c0;
	n = n0;
	for (size_t i = 0; i < n; i++) {
		struct rtit_sim_rec r;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		memcpy(&r, c + 64 * i, 64);	/* the canonical form is the struct's */
#else
		isa_rec_unpack(c + 64 * i, &r);
#endif
		st->tlen = (size_t)(isa_flow_line(&r, st->txt + st->tlen) - st->txt);
		if (st->tlen >= st->tcap)
			flush_txt(w, st);
	}
}

static uint8_t *chunk(struct fw_state *st, uint64_t k)
{
	return st->ring + (size_t)(k % st->nslots) * CHUNK * 64;
}

/* The writer sleeps until a chunk is published or the producer stops;
 * returns head, == *tail when there is nothing more. */
static uint64_t writer_wait(struct fw_state *st, uint64_t tail)
{
	uint64_t h = atomic_load_explicit(&st->head, memory_order_acquire);
	if (h != tail)
		return h;
	pthread_mutex_lock(&st->mu);
	atomic_store(&st->w_sleeps, true);	/* seq_cst: against head's store */
	while ((h = atomic_load(&st->head)) == tail && !atomic_load(&st->stop))
		pthread_cond_wait(&st->cv_w, &st->mu);
	atomic_store(&st->w_sleeps, false);
	pthread_mutex_unlock(&st->mu);
	return atomic_load_explicit(&st->head, memory_order_acquire);
}

/* Wakes the other side, which said it sleeps (its flag, seq_cst, was set
 * under the mutex before it checked the ring and waited): taking the mutex
 * once waits until it is in pthread_cond_wait; the signal goes after the
 * unlock, so the woken thread does not block on the mutex at once. */
static void wake(struct fw_state *st, pthread_cond_t *cv)
{
	pthread_mutex_lock(&st->mu);
	pthread_mutex_unlock(&st->mu);
	pthread_cond_signal(cv);
}

static void *writer_thread(void *opaque)
{
	struct rtit_flow_writer *w = opaque;
	struct fw_state *st = w->priv;
	uint64_t t = 0;
	for (;;) {
		uint64_t h = writer_wait(st, t);
		if (h == t)
			break;
		/* chunks [t, e): one after the other in the ring; only the last
		 * published chunk may be partial */
		uint64_t e = h - t > TAKE ? t + TAKE : h;
		if ((t % NSLOT) + (e - t) > NSLOT)
			e = t + (NSLOT - t % NSLOT);
		size_t n = (size_t)(e - 1 - t) * CHUNK + st->n[(e - 1) % NSLOT];
		process(w, st, chunk(st, t), n);
		t = e;
		atomic_store(&st->tail, t);	/* seq_cst: against p_sleeps */
		if (atomic_load(&st->p_sleeps))
			wake(st, &st->cv_p);
	}
	return NULL;
}

/* Wakes the writer if it sleeps and @force or half the ring waits. */
static void wake_writer(struct fw_state *st, uint64_t h, bool force)
{
	if (!atomic_load(&st->w_sleeps))
		return;
	if (!force && h - atomic_load_explicit(&st->tail, memory_order_relaxed) < TAKE)
		return;
	wake(st, &st->cv_w);
}

/* The chunk being filled is done: processed here, or published to the
 * thread (waiting while the ring is full). */
static void submit(struct rtit_flow_writer *w, struct fw_state *st)
{
	if (!st->threaded) {
		process(w, st, st->ring, st->fill);
		st->fill = 0;
		st->cur = st->ring;
		return;
	}
	uint64_t h = atomic_load_explicit(&st->head, memory_order_relaxed);
	st->n[h % NSLOT] = st->fill;
	h++;
	atomic_store(&st->head, h);	/* seq_cst: against w_sleeps */
	wake_writer(st, h, false);
	if (h - atomic_load_explicit(&st->tail, memory_order_acquire) == NSLOT) {
		pthread_mutex_lock(&st->mu);
		atomic_store(&st->p_sleeps, true);
		/* the writer sleeps only on an empty ring: wake it in any case */
		pthread_cond_signal(&st->cv_w);
		while (h - atomic_load(&st->tail) == NSLOT)
			pthread_cond_wait(&st->cv_p, &st->mu);
		atomic_store(&st->p_sleeps, false);
		pthread_mutex_unlock(&st->mu);
	}
	st->fill = 0;
	st->cur = chunk(st, h);
}

static void free_state(struct fw_state *st)
{
	free(st->ring);
	if (st->tb[0]) {	/* st->txt is one of them */
		for (int i = 0; i < NTXT; i++)
			free(st->tb[i]);
	} else {
		free(st->txt);
	}
	free(st->fc);
	free(st->blk);
	free(st);
}

static int writer_init(struct rtit_flow_writer *w, FILE *bin, FILE *txt, int version,
		       bool threaded)
{
	if (!w || (version != RTIT_FLOW_V1 && version != RTIT_FLOW_V2))
		return -RTIT_ERR_INVALID;
	memset(w, 0, sizeof(*w));
	w->bin = bin;
	w->txt = txt;
	struct fw_state *st = calloc(1, sizeof(*st));
	XXH3_state_t *s = XXH3_createState();
	bool ok = st && s;
	if (st) {
		st->nslots = threaded && (bin || txt) ? NSLOT : 1;
		ok = ok && (st->ring = malloc(st->nslots * 64 * (size_t)CHUNK)) != NULL;
		if (ok && txt && st->nslots > 1) {	/* for the output thread */
			for (int i = 0; ok && i < NTXT; i++)
				ok = (st->tb[i] = malloc(TXT_PART + ISA_FLOW_LINE_MAX)) != NULL;
			st->txt = st->tb[0];
			st->tcap = TXT_PART;
		} else if (ok && txt) {
			ok = (st->txt = malloc(TXT_CAP + ISA_FLOW_LINE_MAX)) != NULL;
			st->tcap = TXT_CAP;
		}
		if (ok && bin && version == RTIT_FLOW_V2)
			ok = (st->fc = malloc(sizeof(*st->fc))) != NULL &&
			     (st->blk = malloc(ISA_FC_BLOCK_HDR +
					       (size_t)ISA_FC_REC_MAX * ISA_FC_BLOCK_RECS)) != NULL;
	}
	if (!ok) {
		if (st)
			free_state(st);
		XXH3_freeState(s);
		return -RTIT_ERR_NOMEM;
	}
	st->cur = st->ring;
	if (st->fc)
		isa_fc_reset(st->fc);
	XXH3_64bits_reset(s);
	w->xxh = s;
	w->priv = st;
	if (bin) {
		uint8_t h[16];
		isa_flow_header(h, version);
		if (fwrite(h, 1, sizeof(h), bin) != sizeof(h))
			fail(w);
	}
	if (st->nslots > 1)
		st->threaded = thread_start(&st->th, &st->mu, &st->cv_w, &st->cv_p,
					    writer_thread, w);
	if (st->threaded && txt)
		/* without it the text is written where it is formatted, from
		 * the first buffer */
		st->t_threaded = thread_start(&st->t_th, &st->t_mu, &st->t_cv_out,
					      &st->t_cv_fmt, txt_thread, w);
	return w->err;
}

int rtit_flow_writer_init(struct rtit_flow_writer *w, FILE *bin, FILE *txt)
{
	return writer_init(w, bin, txt, RTIT_FLOW_V1, false);
}

int rtit_flow_writer_init_async(struct rtit_flow_writer *w, FILE *bin, FILE *txt)
{
	return writer_init(w, bin, txt, RTIT_FLOW_V1, true);
}

int rtit_flow_writer_init_version(struct rtit_flow_writer *w, FILE *bin, FILE *txt,
				  int version, bool async)
{
	return writer_init(w, bin, txt, version, async);
}

/* @k records packed at @o. */
static void pack(uint8_t *o, const struct rtit_sim_rec *recs, size_t k)
{
	for (size_t i = 0; i < k; i++, o += 64) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		/* the canonical form is the struct with its padding (bytes
		 * 59-63) zero: bytes 56-58 are cpl, mode, vector */
		const uint8_t *s = (const uint8_t *)&recs[i];
		uint64_t tail;
		memcpy(o, s, 56);
		memcpy(&tail, s + 56, 8);
		tail &= 0xffffffu;
		memcpy(o + 56, &tail, 8);
#else
		rtit_sim_rec_pack(&recs[i], o);
#endif
	}
}

void rtit_flow_writer_on_batch(const struct rtit_sim_rec *recs, size_t n, void *opaque)
{
	struct rtit_flow_writer *w = opaque;
	struct fw_state *st = w->priv;
	w->count += n;
	while (n) {
		size_t k = CHUNK - st->fill < n ? CHUNK - st->fill : n;
		pack(st->cur, recs, k);
		recs += k;
		n -= k;
		st->cur += 64 * k;
		if ((st->fill += k) == CHUNK)
			submit(w, st);
	}
}

/* Publishes what is left, stops the thread and waits for it. */
static void stop_thread(struct fw_state *st)
{
	pthread_mutex_lock(&st->mu);
	atomic_store(&st->stop, true);
	pthread_cond_signal(&st->cv_w);
	pthread_mutex_unlock(&st->mu);
	pthread_join(st->th, NULL);
	sync_destroy(&st->mu, &st->cv_w, &st->cv_p);
}

int rtit_flow_writer_fini(struct rtit_flow_writer *w, uint64_t *digest)
{
	if (!w || !w->xxh)
		return -RTIT_ERR_INVALID;
	struct fw_state *st = w->priv;
	if (st->fill)
		submit(w, st);
	if (st->threaded)
		stop_thread(st);
	if (w->txt)
		flush_txt(w, st);
	if (st->t_threaded)
		stop_txt_thread(w, st);
	if (st->fc && st->blk_n)
		write_block(w, st);
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
