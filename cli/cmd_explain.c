/*
 * cmd_explain.c - `rtitsim explain SCENARIO|PROGRAM [-o FILE.html]`: one
 * run of either dialect as a self-contained page that shows why every
 * byte of the trace is there (docs/explain.md).
 *
 * The run is the session's (simulator -> encoder), with two observers:
 * each packet the encoder produces or drops, with its rule and record
 * (struct rtit_enc_note), and the encoder's hidden state after each
 * record (rtit_encoder_observe).  The trace is then decoded again
 * (rtit/pktdec.h) for each packet's fields, and the program image
 * disassembled (Zydis) for each instruction.  The page holds the model
 * as compact blobs (varints, base64) that its script decodes and draws
 * a window at a time.
 */
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <Zydis/Zydis.h>

#include "cli.h"
#include "explain.h"
#include "run.h"
#include "util.h"
#include "rtit/flow.h"
#include "rtit/image.h"
#include "rtit/print.h"
#include "rtit/pt_errata.h"
#include "rtit/scenario.h"
#include "rtit/session.h"
#include "rtit/sideband.h"

/* ------------------------------------------------------------ buffers */

void xbuf_put(struct xbuf *b, const void *src, size_t n)
{
	if (b->n + n > b->cap) {
		size_t c = b->cap ? b->cap : 4096;
		while (c < b->n + n)
			c *= 2;
		uint8_t *q = realloc(b->p, c);
		if (!q) {
			b->oom = true;
			return;
		}
		b->p = q;
		b->cap = c;
	}
	memcpy(b->p + b->n, src, n);
	b->n += n;
}

void xbuf_varint(struct xbuf *b, uint64_t v)
{
	uint8_t t[10];
	size_t k = 0;
	do {
		t[k] = (uint8_t)(v & 0x7f);
		v >>= 7;
		if (v)
			t[k] |= 0x80;
		k++;
	} while (v);
	xbuf_put(b, t, k);
}

static uint64_t hash64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return h;
}

static uint64_t hash_bytes(const uint8_t *b, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	while (*s)
		h = (h ^ (uint8_t)*s++) * 1099511628211ull;
	return h;
}

/* The slot for @h where eq(i) holds or an empty one; grows at half full. */
static uint32_t *xset_find(struct xset *st, size_t used, uint64_t h,
			   bool (*eq)(const struct explain *, uint32_t, const void *),
			   const struct explain *x, const void *key,
			   uint64_t (*rehash)(const struct explain *, uint32_t))
{
	if (2 * (used + 1) > st->cap) {
		size_t nc = st->cap ? 2 * st->cap : 1024;
		uint32_t *ns = calloc(nc, sizeof(*ns));
		if (!ns)
			return NULL;
		for (size_t i = 0; i < st->cap; i++) {
			if (!st->slot[i])
				continue;
			size_t j = rehash(x, st->slot[i] - 1) & (nc - 1);
			while (ns[j])
				j = (j + 1) & (nc - 1);
			ns[j] = st->slot[i];
		}
		free(st->slot);
		st->slot = ns;
		st->cap = nc;
	}
	size_t j = h & (st->cap - 1);
	while (st->slot[j] && !eq(x, st->slot[j] - 1, key))
		j = (j + 1) & (st->cap - 1);
	return &st->slot[j];
}

static uint64_t uniq_hash(const struct xuniq *k)
{
	return hash64(k->ip ^ ((uint64_t)k->kind << 56) ^ ((uint64_t)k->cls << 48) ^
		      ((uint64_t)k->len << 40) ^ ((uint64_t)k->mode << 32));
}

static bool uniq_eq(const struct explain *x, uint32_t i, const void *key)
{
	return !memcmp(&x->u[i], key, sizeof(struct xuniq));
}

static uint64_t uniq_rehash(const struct explain *x, uint32_t i) { return uniq_hash(&x->u[i]); }

static bool str_eq(const struct explain *x, uint32_t i, const void *key)
{
	return !strcmp(x->s[i], key);
}

static uint64_t str_rehash(const struct explain *x, uint32_t i) { return hash_str(x->s[i]); }

static uint64_t cls_hash(const uint32_t *k)
{
	uint64_t h = 0;
	for (int i = 0; i < 6; i++)
		h = hash64(h ^ k[i]);
	return h;
}

static bool cls_eq(const struct explain *x, uint32_t i, const void *key)
{
	return !memcmp(x->c[i], key, sizeof(x->c[i]));
}

static uint64_t cls_rehash(const struct explain *x, uint32_t i) { return cls_hash(x->c[i]); }

/* The index of the packet class @k (added when new). */
static uint32_t intern_cls(struct explain *x, const uint32_t k[6])
{
	uint32_t *slot = xset_find(&x->cset, x->nc, cls_hash(k), cls_eq, x, k, cls_rehash);
	if (!slot) {
		x->oom = true;
		return 0;
	}
	if (*slot)
		return *slot - 1;
	if (x->nc == x->ccap) {
		size_t nc = x->ccap ? 2 * x->ccap : 256;
		uint32_t (*q)[6] = realloc(x->c, nc * sizeof(*q));
		if (!q) {
			x->oom = true;
			return 0;
		}
		x->c = q;
		x->ccap = nc;
	}
	memcpy(x->c[x->nc], k, sizeof(x->c[0]));
	*slot = (uint32_t)++x->nc;
	return *slot - 1;
}

/* The index of @s in the string table (added when new). */
static uint32_t intern(struct explain *x, const char *s)
{
	uint32_t *slot = xset_find(&x->sset, x->ns, hash_str(s), str_eq, x, s, str_rehash);
	if (!slot) {
		x->oom = true;
		return 0;
	}
	if (*slot)
		return *slot - 1;
	if (x->ns == x->scap) {
		size_t nc = x->scap ? 2 * x->scap : 256;
		char **q = realloc(x->s, nc * sizeof(*q));
		if (!q) {
			x->oom = true;
			return 0;
		}
		x->s = q;
		x->scap = nc;
	}
	if (!(x->s[x->ns] = strdup(s))) {
		x->oom = true;
		return 0;
	}
	*slot = (uint32_t)++x->ns;
	return *slot - 1;
}

/* ------------------------------------------------------- the observers */

/* A new packet at the end of the list (zeroed), or NULL. */
static struct xpkt *new_pkt(struct explain *x)
{
	if (x->np == x->pcap) {
		size_t nc = x->pcap ? 2 * x->pcap : 1024;
		struct xpkt *q = realloc(x->p, nc * sizeof(*q));
		if (!q) {
			x->oom = true;
			return NULL;
		}
		x->p = q;
		x->pcap = nc;
	}
	memset(&x->p[x->np], 0, sizeof(x->p[0]));
	return &x->p[x->np++];
}

static void on_note(void *opaque, const struct rtit_enc_note *nt)
{
	struct explain *x = opaque;
	struct xpkt *p = new_pkt(x);

	if (!p)
		return;
	p->off = x->off;
	p->ip = nt->ip;
	p->rec = (uint32_t)x->nrec;
	p->type = (uint8_t)nt->pkt->type;
	p->len = nt->dropped ? 0 : (uint8_t)nt->len;
	p->dropped = nt->dropped;
	p->norec = !nt->rec;
	p->why = nt->why;
	p->hash = nt->dropped ? 0 : hash_bytes(nt->bytes, nt->len);
	if (nt->dropped) {
		x->dropped++;
	} else {
		x->listed++;
		x->off += nt->len;
	}
}

/* The state's fields in the page's order (explain.html): which are
 * 64-bit (sent as two 32-bit halves), and which are timing (they change
 * every record and alone do not make an entry; sent as the difference
 * from the entry before, zigzag-coded). */
enum { NF = 14 };
static const uint16_t f64 = 1u << 0 | 1u << 4 | 1u << 5 | 1u << 7;
static const uint16_t ftime = 1u << 12 | 1u << 13;

static void state_fields(const struct rtit_enc_state *s, uint64_t v[NF])
{
	v[0] = s->last_ip;
	v[1] = (uint64_t)s->last_ip_valid | (uint64_t)s->packet_en << 1 |
	       (uint64_t)s->overflow << 2 | (uint64_t)s->ret_compression << 3 |
	       (uint64_t)s->call_nlip_valid << 4;
	v[2] = s->tnt_n;
	v[3] = s->tnt_cap;
	v[4] = s->tnt_bits;
	v[5] = s->call_nlip;
	v[6] = s->stack_depth;
	v[7] = s->stack_top;
	v[8] = s->psb_count;
	v[9] = s->psb_period;
	v[10] = s->buf_fill;
	v[11] = s->buf_cap;
	v[12] = s->cycles;
	v[13] = s->tsc;
}

/* An entry: varint(records since the last entry), varint(mask of the
 * fields sent), the fields.  @rec: the records completed (0: before the
 * first). */
static void state_entry(struct explain *x, uint64_t rec, const struct rtit_enc_state *st,
			bool first)
{
	uint64_t a[NF], b[NF];
	unsigned mask = 0;

	state_fields(st, a);
	state_fields(&x->prev, b);
	for (unsigned i = 0; i < NF; i++)
		if (first || a[i] != b[i])
			mask |= 1u << i;
	if (!first && !(mask & ~ftime))
		return;
	xbuf_varint(&x->states, rec - (uint64_t)x->last_state_rec);
	xbuf_varint(&x->states, mask);
	for (unsigned i = 0; i < NF; i++) {
		if (!(mask & (1u << i)))
			continue;
		if (ftime & (1u << i) && !first) {
			int64_t dv = (int64_t)(a[i] - b[i]);
			xbuf_varint(&x->states, ((uint64_t)dv << 1) ^ (uint64_t)(dv >> 63));
			continue;
		}
		xbuf_varint(&x->states, f64 & (1u << i) ? a[i] & 0xffffffffu : a[i]);
		if (f64 & (1u << i))
			xbuf_varint(&x->states, a[i] >> 32);
	}
	x->prev = *st;
	x->last_state_rec = (int64_t)rec;
	x->nstates++;
}

void rtit_explain_record(struct explain *x, const struct rtit_sim_rec *r,
			 const struct rtit_enc_state *st)
{
	struct xuniq k = { .ip = r->ip, .kind = r->kind, .cls = r->cls, .len = r->len,
			   .mode = r->mode };
	uint32_t *slot = xset_find(&x->uset, x->nu, uniq_hash(&k), uniq_eq, x, &k, uniq_rehash);

	if (!slot) {
		x->oom = true;
		return;
	}
	if (!*slot) {
		if (x->nu == x->ucap) {
			size_t nc = x->ucap ? 2 * x->ucap : 256;
			struct xuniq *q = realloc(x->u, nc * sizeof(*q));
			if (!q) {
				x->oom = true;
				return;
			}
			x->u = q;
			x->ucap = nc;
		}
		x->u[x->nu] = k;
		*slot = (uint32_t)++x->nu;
	}
	xbuf_varint(&x->recs, (uint64_t)(*slot - 1) * 2 + (r->flags & RTIT_SIM_F_TAKEN ? 1 : 0));
	x->nrec++;
	if (st)
		state_entry(x, x->nrec, st, false);
}

static void on_record(void *opaque, const struct rtit_sim_rec *r, const struct rtit_enc_state *st)
{
	struct explain *x = opaque;

	if (!r)	/* the start (before any record) or the end */
		state_entry(x, x->nrec, st, !x->nstates);
	else
		rtit_explain_record(x, r, st);
}

void rtit_explain_packet(struct explain *x, uint64_t off, uint8_t type, uint8_t len,
			 uint64_t rec, const char *why)
{
	struct xpkt *p = new_pkt(x);

	if (!p)
		return;
	*p = (struct xpkt){ .off = off, .rec = (uint32_t)rec, .type = type, .len = len,
			    .why = why };
	x->listed++;
}

/* ------------------------------------------------------------- output */

/* @s as a JSON string (quoted; '<' escaped so that no "</script" ends the
 * page's data early). */
static void json_str(struct xbuf *o, const char *s)
{
	xbuf_put(o, "\"", 1);
	for (; *s; s++) {
		char t[8];
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') {
			t[0] = '\\';
			t[1] = (char)c;
			xbuf_put(o, t, 2);
		} else if (c < 0x20 || c == '<' || c == '>' || c == '&') {
			snprintf(t, sizeof(t), "\\u%04x", c);
			xbuf_put(o, t, 6);
		} else {
			xbuf_put(o, s, 1);
		}
	}
	xbuf_put(o, "\"", 1);
}

static void json_b64(struct xbuf *o, const uint8_t *p, size_t n)
{
	static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char t[4];

	xbuf_put(o, "\"", 1);
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) |
			     (i + 2 < n ? p[i + 2] : 0);
		t[0] = a[v >> 18];
		t[1] = a[(v >> 12) & 63];
		t[2] = i + 1 < n ? a[(v >> 6) & 63] : '=';
		t[3] = i + 2 < n ? a[v & 63] : '=';
		xbuf_put(o, t, 4);
	}
	xbuf_put(o, "\"", 1);
}

static void json_kv(struct xbuf *o, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void json_kv(struct xbuf *o, const char *key, const char *fmt, ...)
{
	char t[256];
	va_list ap;
	int n = snprintf(t, sizeof(t), ",\"%s\":", key);
	va_start(ap, fmt);
	n += vsnprintf(t + n, sizeof(t) - (size_t)n, fmt, ap);
	va_end(ap);
	xbuf_put(o, t, strlen(t));
}

/* The image's symbols by address (equal addresses: the smallest name
 * last, which symbol_of takes). */
struct sym {
	uint64_t v;
	const char *nm;
};

static int sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;
	if (x->v != y->v)
		return x->v < y->v ? -1 : 1;
	return -strcmp(x->nm, y->nm);
}

static struct sym *sym_table(const struct rtit_image *img, size_t *n)
{
	const char *nm;
	uint64_t v;
	size_t k = 0, cap = 0;
	struct sym *t = NULL;

	*n = 0;
	for (size_t i = 0; img && rtit_image_symbol_get(img, i, &nm, &v) == 0; i++)
		cap += nm[0] != 0;
	if (!cap || !(t = malloc(cap * sizeof(*t))))
		return NULL;
	for (size_t i = 0; rtit_image_symbol_get(img, i, &nm, &v) == 0; i++)
		if (nm[0])
			t[k++] = (struct sym){ v, nm };
	qsort(t, k, sizeof(*t), sym_cmp);
	*n = k;
	return t;
}

/* The nearest symbol at or below @ip within 64 KiB ("name+0x10"), or "". */
static void symbol_of(const struct sym *t, size_t n, uint64_t ip, char *out, size_t cap)
{
	size_t lo = 0, hi = n;

	out[0] = 0;
	while (lo < hi) {	/* the first above ip */
		size_t m = (lo + hi) / 2;
		if (t[m].v <= ip)
			lo = m + 1;
		else
			hi = m;
	}
	if (!lo || ip - t[lo - 1].v >= 0x10000)
		return;
	if (ip == t[lo - 1].v)
		snprintf(out, cap, "%s", t[lo - 1].nm);
	else
		snprintf(out, cap, "%s+0x%" PRIx64, t[lo - 1].nm, ip - t[lo - 1].v);
}

/* Table U: [kind, ip, bytes, disassembly, symbol, class] per distinct
 * record; instructions read from the image (what the simulator ran). */
static void json_uniq(struct xbuf *o, const struct explain *x, const struct rtit_image *img)
{
	size_t nsym;
	struct sym *syms = sym_table(img, &nsym);

	xbuf_put(o, ",\"U\":[", 6);
	for (size_t i = 0; i < x->nu; i++) {
		const struct xuniq *u = &x->u[i];
		char ip[24], hex[48] = "", dis[160] = "", sym[160] = "";
		uint8_t b[16];
		bool insn = u->kind == RTIT_SIM_INSN;

		snprintf(ip, sizeof(ip), "%" PRIx64, u->ip);
		if (insn && u->len && u->len <= 15 && img && rtit_image_read((void *)img, u->ip, b, u->len) == 0) {
			ZydisDisassembledInstruction in;
			ZydisMachineMode mm = u->mode == RTIT_SIM_MODE_16 ? ZYDIS_MACHINE_MODE_REAL_16 :
					      u->mode == RTIT_SIM_MODE_32 ? ZYDIS_MACHINE_MODE_LEGACY_32 :
									    ZYDIS_MACHINE_MODE_LONG_64;
			for (unsigned k = 0; k < u->len; k++)
				snprintf(hex + strlen(hex), sizeof(hex) - strlen(hex), "%s%02x",
					 k ? " " : "", b[k]);
			if (ZYAN_SUCCESS(ZydisDisassembleIntel(mm, u->ip, b, u->len, &in)))
				snprintf(dis, sizeof(dis), "%s", in.text);
		} else if (insn) {
			snprintf(dis, sizeof(dis), "(not in the image)");
		}
		symbol_of(syms, nsym, u->ip, sym, sizeof(sym));
		xbuf_put(o, i ? ",[" : "[", i ? 2 : 1);
		json_str(o, insn ? "i" : "e");
		xbuf_put(o, ",", 1);
		json_str(o, ip);
		xbuf_put(o, ",", 1);
		json_str(o, hex);
		xbuf_put(o, ",", 1);
		json_str(o, dis);
		xbuf_put(o, ",", 1);
		json_str(o, sym);
		xbuf_put(o, ",", 1);
		json_str(o, insn ? rtit_insn_class_name(u->cls) : rtit_sim_event_name(u->cls));
		xbuf_put(o, "]", 1);
	}
	xbuf_put(o, "]", 1);
	free(syms);
}

/* A packet of the trace as decoded: where, what, a hash of its bytes, and
 * its strings (short form, decoded fields, bit layout). */
struct tpkt {
	uint64_t off, hash;
	uint8_t type, len;
	bool used;
	uint32_t sh, fields, lay;
};

/* Every packet of the trace, with its strings; *n them (NULL: out of
 * memory, or the trace does not decode past *n). */
static struct tpkt *trace_packets(struct explain *x, const uint8_t *trace, size_t tlen,
				  const struct rtit_pktdec_cfg *base, size_t *n)
{
	static struct rtit_pktdec d;
	struct rtit_pktdec_cfg cfg = *base;
	struct rtit_pktdec_item it;
	struct tpkt *t = NULL;
	size_t cap = 0;
	char sh[96], lay[512];
	enum rtit_dialect dl = (enum rtit_dialect)x->dialect;

	*n = 0;
	cfg.mem = trace;
	cfg.mem_len = tlen;
	rtit_pktdec_init(&d, &cfg);
	while (rtit_pktdec_next(&d, &it) > 0) {
		if (*n == cap) {
			cap = cap ? 2 * cap : 1024;
			struct tpkt *q = realloc(t, cap * sizeof(*q));
			if (!q) {
				x->oom = true;
				return t;
			}
			t = q;
		}
		char *fields = NULL;
		size_t flen = 0;
		FILE *f = open_memstream(&fields, &flen);
		if (f) {
			rtit_print_fields(f, dl, &it);
			fclose(f);
		}
		rtit_print_short(sh, sizeof(sh), dl, &it);
		rtit_explain_layout(lay, sizeof(lay), dl, &it);
		t[*n] = (struct tpkt){ .off = it.offset, .hash = hash_bytes(it.raw, it.pkt.size),
				       .type = (uint8_t)it.pkt.type, .len = (uint8_t)it.pkt.size,
				       .sh = intern(x, sh), .fields = intern(x, fields ? fields : ""),
				       .lay = intern(x, lay) };
		free(fields);
		(*n)++;
	}
	return t;
}

/* The trace's packet that is @p: the first one not yet taken, from
 * *lo on, with its type and bytes (erratum E8 lets a packet overtake an
 * older one: RTIT Appendix E), or NULL. */
static struct tpkt *match(struct tpkt *t, size_t nt, size_t *lo, const struct xpkt *p)
{
	while (*lo < nt && t[*lo].used)
		(*lo)++;
	for (size_t j = *lo; j < nt && j < *lo + 64; j++)
		if (!t[j].used && t[j].type == p->type && t[j].len == p->len && t[j].hash == p->hash)
			return &t[j];
	return NULL;
}

/*
 * Table P: each packet as varints: records before it (delta), trace
 * offset (zigzag delta: under erratum E8 a packet the encoder made later
 * may be earlier in the trace), and its class (table C): type, len * 4 +
 * dropped * 2 + no record, and four strings: why (the rule), short form,
 * decoded fields, bit layout.  The packets are in the encoder's order;
 * each is matched with the trace's packet of the same bytes, whose fields
 * the trace decoded gives; one not found is counted in *unmatched (D123).
 */
static void blob_packets(struct explain *x, struct xbuf *pb, const uint8_t *trace, size_t tlen,
			 const struct rtit_pktdec_cfg *base, uint64_t *unmatched)
{
	size_t nt = 0, lo = 0;
	struct tpkt *t = trace_packets(x, trace, tlen, base, &nt);
	uint64_t prec = 0, poff = 0;
	char sh[96];

	for (size_t i = 0; i < x->np; i++) {
		struct xpkt *p = &x->p[i];
		struct tpkt *m = p->dropped ? NULL : x->bundle ? (i < nt ? &t[i] : NULL) :
						     match(t, nt, &lo, p);
		uint32_t ish, ifl, ila;

		if (m) {
			m->used = true;
			p->off = m->off;
			ish = m->sh;
			ifl = m->fields;
			ila = m->lay;
		} else {
			struct rtit_pktdec_item e = { .pkt = { .type = (enum rtit_pkt_type)p->type },
						      .ip = p->ip };
			rtit_print_short(sh, sizeof(sh), (enum rtit_dialect)x->dialect, &e);
			ish = intern(x, sh);
			ifl = intern(x, p->dropped ? "" : "not found in the trace");
			ila = intern(x, "");
			if (!p->dropped)
				(*unmatched)++;
		}
		int64_t dv = (int64_t)(p->off - poff);
		xbuf_varint(pb, p->rec - prec);
		xbuf_varint(pb, ((uint64_t)dv << 1) ^ (uint64_t)(dv >> 63));
		uint32_t k[6] = { p->type, (uint32_t)p->len * 4 + p->dropped * 2u + p->norec,
				  intern(x, p->why ? p->why : ""), ish, ifl, ila };
		xbuf_varint(pb, intern_cls(x, k));
		prec = p->rec;
		poff = p->off;
	}
	free(t);
}


/* The model: one JSON object (docs/explain.md lists its keys). */
static int write_model(struct explain *x, const struct run_info *ri, const uint8_t *trace,
		       size_t tlen, const struct rtit_pktdec_cfg *dcfg,
		       const struct rtit_image *img, struct xbuf *o)
{
	struct xbuf pb = { 0 };
	uint64_t unmatched = 0;

	blob_packets(x, &pb, trace, tlen, dcfg, &unmatched);
	xbuf_put(o, "{\"v\":1,\"name\":", 14);
	json_str(o, ri->name);
	xbuf_put(o, ",\"describe\":", 12);
	json_str(o, ri->describe);
	xbuf_put(o, ",\"stop\":", 8);
	json_str(o, ri->stop);
	json_kv(o, "dialect", "\"%s\"", x->dialect == RTIT_DIALECT_PT ? "pt" : "rtit");
	json_kv(o, "source", "\"%s\"", x->bundle ? "bundle" : "run");
	json_kv(o, "cycle_acc", "%s", ri->cycle_acc ? "true" : "false");
	json_kv(o, "nI", "%" PRIu64, x->nrec);
	json_kv(o, "insns", "%" PRIu64, ri->insns);
	json_kv(o, "events", "%" PRIu64, ri->events);
	json_kv(o, "nP", "%zu", x->np);
	json_kv(o, "listed", "%" PRIu64, x->listed);
	json_kv(o, "dropped", "%" PRIu64, x->dropped);
	json_kv(o, "unmatched", "%" PRIu64, unmatched);
	json_kv(o, "nX", "%" PRIu64, x->nstates);
	json_kv(o, "expect", "%lld", ri->has_expect ? (long long)ri->nexpect : -1ll);
	json_kv(o, "trace_bytes", "%" PRIu64, ri->trace_bytes);
	xbuf_put(o, ",\"types\":[", 10);
	for (int t = 0; t < RTIT_PKT_TYPE_COUNT; t++) {
		if (t)
			xbuf_put(o, ",", 1);
		json_str(o, rtit_pkt_name((enum rtit_pkt_type)t));
	}
	xbuf_put(o, "]", 1);
	json_uniq(o, x, img);
	xbuf_put(o, ",\"S\":[", 6);
	for (size_t i = 0; i < x->ns; i++) {
		if (i)
			xbuf_put(o, ",", 1);
		json_str(o, x->s[i]);
	}
	xbuf_put(o, "],\"C\":[", 7);
	for (size_t i = 0; i < x->nc; i++) {
		char t[80];
		snprintf(t, sizeof(t), "%s%u,%u,%u,%u,%u,%u", i ? "," : "", x->c[i][0], x->c[i][1],
			 x->c[i][2], x->c[i][3], x->c[i][4], x->c[i][5]);
		xbuf_put(o, t, strlen(t));
	}
	xbuf_put(o, "],\"I\":", 6);
	json_b64(o, x->recs.p, x->recs.n);
	xbuf_put(o, ",\"P\":", 5);
	json_b64(o, pb.p, pb.n);
	xbuf_put(o, ",\"X\":", 5);
	json_b64(o, x->states.p, x->states.n);
	xbuf_put(o, ",\"T\":", 5);
	json_b64(o, trace, tlen);
	xbuf_put(o, "}", 1);
	bool oom = pb.oom;
	free(pb.p);
	if (unmatched)
		fprintf(stderr, "rtitsim explain: warning: %" PRIu64 " packets the encoder named"
			" are not in the trace; their fields are not shown\n", unmatched);
	return oom || o->oom || x->oom ? -1 : 0;
}

int rtit_explain_write(struct explain *x, const struct run_info *ri, const uint8_t *trace,
		       size_t tlen, const struct rtit_pktdec_cfg *dcfg,
		       const struct rtit_image *img, const char *outp, const char *title)
{
	struct xbuf model = { 0 };
	int status = RTIT_EXIT_OK;

	if (x->nrec > 10000000)	/* docs/explain.md "Size and speed" */
		fprintf(stderr, "rtitsim explain: warning: %" PRIu64 " records: past about 10^7"
			" the page may take minutes to open or not open at all (--budget N, or a"
			" filter, trace less)\n", x->nrec);
	if (write_model(x, ri, trace, tlen, dcfg, img, &model) < 0) {
		fprintf(stderr, "rtitsim explain: out of memory\n");
		free(model.p);
		return RTIT_EXIT_IO;
	}
	FILE *out = fopen(outp, "w");
	if (!out) {
		fprintf(stderr, "rtitsim explain: %s: cannot create: %s\n", outp, strerror(errno));
		free(model.p);
		return RTIT_EXIT_IO;
	}
	int w = rtit_explain_write_page(out, title, (const char *)model.p, model.n);
	if (fclose(out) != 0 || w < 0) {
		fprintf(stderr, "rtitsim explain: %s: writing failed\n", outp);
		status = RTIT_EXIT_IO;
	} else {
		fprintf(x->msg ? x->msg : stdout, "%s: %" PRIu64 " records, %" PRIu64 " packets (%" PRIu64 " dropped),"
		       " %" PRIu64 " trace bytes -> %s (%zu bytes of model)\n", ri->name, x->nrec,
		       x->listed, x->dropped, ri->trace_bytes, outp, model.n);
	}
	free(model.p);
	return status;
}

void rtit_explain_free(struct explain *x)
{
	free(x->recs.p);
	free(x->states.p);
	free(x->u);
	free(x->uset.slot);
	free(x->p);
	for (size_t i = 0; i < x->ns; i++)
		free(x->s[i]);
	free(x->s);
	free(x->sset.slot);
	free(x->c);
	free(x->cset.slot);
}

static void explain_usage(FILE *out)
{
	fputs("usage: rtitsim explain [options] SCENARIO.scn|BUNDLE|PROGRAM [ARGS...]\n"
	      "\n"
	      "Writes one self-contained HTML page (no network) that explains a trace: each\n"
	      "retired instruction beside the packets it caused, each packet's bits with its\n"
	      "fields named, the rule that produced it, and the encoder's hidden state (last\n"
	      "IP, TNT buffer, RET compression, packet counter, internal buffer, cycle\n"
	      "counter) at each step (docs/explain.md).\n"
	      "\n"
	      "SCENARIO.scn runs as `rtitsim run` runs it.  PROGRAM is a Linux x86-64\n"
	      "executable run as a process with ARGS, traced at CPL 3 only, as `rtitsim run\n"
	      "PROGRAM` runs it (docs/linux.md); its options come before it, its output is its\n"
	      "own.  BUNDLE (a directory written by `run --bundle`, STEM.manifest.json, or\n"
	      "its STEM, e.g. golden/expected/pt_tsx) is not run again: its trace is\n"
	      "decoded by the flow decoder against its image, which gives the packets, their\n"
	      "fields and the instructions, but not the encoder's hidden state nor its rules\n"
	      "(a bundle does not hold them: D122); the page says whether the decoded flow is\n"
	      "the bundle's ground truth (STEM.flow).\n"
	      "\n"
	      "  -o, --out FILE     the page (default: the scenario's, bundle's or program's\n"
	      "                     name + .html)\n"
	      "  --param KEY=VALUE  an encoder parameter (as a scenario's param line)\n"
	      "  --msr NAME=VALUE   an MSR preset (as a scenario's msr line)\n"
	      "  PROGRAM only, as `rtitsim run` takes them:\n"
	      "  --dialect rtit|pt  the encoder (default rtit)\n"
	      "  --bare             a freestanding ELF: CPL 0 from its entry, all traced, ends at HLT\n"
	      "  --budget N         the instruction budget (default 100000000; see the limit)\n"
	      "  --env NAME=VALUE, --seed N, --writable DIR, --stdin FILE, --syscall-cycles N\n"
	      "\n"
	      "The limit: the page holds about 11 bytes per instruction (~11 MB for 10^6\n"
	      "instructions, which opens in ~4 s and scrolls as fast as a small one: only\n"
	      "the rows in view are drawn); 3*10^6 (33 MB, ~8 s) is the largest measured and\n"
	      "about 10^7 (~110 MB, ~30 s to open) is the practical limit (a warning past\n"
	      "it): for a longer program use --budget, or a filter (RTIT_CTL/IA32_RTIT_CTL\n"
	      "ranges, msr lines in a scenario) to trace the part that matters.\n"
	      "\n"
	      "Exit status: 0 ok, 1 usage, 2 I/O, 3 a bundle's trace has decode errors, 4 bad\n"
	      "scenario, program or bundle, 5 a bundle's decoded flow is not its ground\n"
	      "truth, 6 the guest did not end normally (the page shows what ran); a page is\n"
	      "written for 3, 5 and 6.\n", out);
}

/* The scenario's text: the file, or the program's (as `rtitsim run
 * PROGRAM` builds it), with the --param and --msr lines after it (@params:
 * "p KEY=VALUE" or "m NAME=VALUE"). */
static char *scenario_text(const char *input, const struct rtit_cli_prog *pg,
			   const char **params, int np)
{
	char *text = NULL;
	size_t tlen = 0, n = strlen(input);
	FILE *mem = open_memstream(&text, &tlen);

	if (!mem)
		return NULL;
	if (n > 4 && !strcmp(input + n - 4, ".scn")) {
		uint8_t *b = rtit_cli_slurp(input, &n);
		if (!b) {
			fprintf(stderr, "rtitsim explain: %s: cannot read: %s\n", input, strerror(errno));
			fclose(mem);
			free(text);
			return NULL;
		}
		fwrite(b, 1, n, mem);
		free(b);
	} else {
		rtit_cli_prog_scenario(mem, input, pg);
	}
	fputc('\n', mem);
	for (int i = 0; i < np; i++) {	/* "p KEY=VALUE" or "m NAME=VALUE" */
		const char *eq = strchr(params[i] + 2, '=');
		if (eq)
			fprintf(mem, "%s %.*s = %s\n", params[i][0] == 'm' ? "msr" : "param",
				(int)(eq - params[i] - 2), params[i] + 2, eq + 1);
	}
	fclose(mem);
	return text;
}

/* The image the page disassembles: the scenario's code, the process's
 * mappings with their files' symbols (D124), or the ELF. */
static struct rtit_image *load_image(const struct rtit_scenario *sc, const char *input,
				     const struct rtit_session_result *res)
{
	struct rtit_image *img = NULL;
	struct rtit_scn_error err;
	size_t n = strlen(input);
	int r;

	if (rtit_image_new(&img) < 0)
		return NULL;
	if (n > 4 && !strcmp(input + n - 4, ".scn"))
		r = rtit_scenario_image(sc, img, &err);
	else if (res->process)
		r = rtit_image_add_mmaps(img, &res->sb) < 0 ? -1 :
		    rtit_image_add_mmap_symbols(img, &res->sb);
	else
		r = rtit_image_add_elf(img, input, 0);
	if (r < 0) {
		fprintf(stderr, "rtitsim explain: warning: no disassembly: the program image does"
			" not load\n");
		rtit_image_free(img);
		return NULL;
	}
	return img;
}

/* Runs, then writes the page.  Returns RTIT_EXIT_*. */
static int explain_run(const char *input, const char *text, const char *outp)
{
	static struct rtit_scenario sc;
	static struct explain x;
	struct rtit_scn_error err;
	static struct rtit_session_result res;
	char *trace = NULL;
	size_t tlen = 0;
	int status = RTIT_EXIT_OK;
	size_t n = strlen(input);
	bool scn = n > 4 && !strcmp(input + n - 4, ".scn");

	memset(&x, 0, sizeof(x));
	if (rtit_scenario_parse_string(text, scn ? input : "<program>", &sc, &err) < 0) {
		fprintf(stderr, "%s\n", err.text);
		return RTIT_EXIT_INPUT;
	}
	x.dialect = sc.dialect;
	x.last_state_rec = -1;
	FILE *tf = open_memstream(&trace, &tlen);
	struct rtit_session_cfg scfg = { .sc = &sc, .trace = tf, .on_packet = on_note,
					 .on_record = on_record, .opaque = &x, .image = input };
	int ss = rtit_session_run(&scfg, &res);
	fclose(tf);
	if (!res.ran) {
		fprintf(stderr, "%s\n", res.msg[0] ? res.msg : res.io_msg);
		status = ss == RTIT_SESSION_INPUT ? RTIT_EXIT_INPUT : RTIT_EXIT_IO;
		goto out;
	}
	if (res.msg[0]) {
		fprintf(stderr, "%s\n", res.msg);
		status = RTIT_EXIT_RUN;
	}
	if (res.process)	/* as `rtitsim run PROGRAM` says it, on stderr */
		fprintf(stderr, "rtitsim: %s: %s; %" PRIu64 " instructions, %" PRIu64 " events\n",
			sc.name, res.st.msg, res.st.insns, res.st.events);
	struct rtit_flow_cfg fc;
	rtit_flow_cfg_default(&fc);
	rtit_flow_cfg_from_sideband(&fc, &res.sb);
	struct rtit_pktdec_cfg dcfg = { .dialect = (enum rtit_dialect)sc.dialect,
					.cycle_acc = res.cycle_acc && sc.dialect == RTIT_DIALECT_RTIT,
					.buffovf_loads_lip = fc.buffovf_loads_lip,
					/* SKZ84's TMA, a packet rule (D144) */
					.pt_skz84 = (fc.pt_errata & RTIT_PT_ERRATUM(RTIT_PT_SKZ84)) != 0 };
	struct run_info ri = { .name = sc.name[0] ? sc.name : input, .describe = sc.describe,
			       .stop = res.st.msg, .insns = res.st.insns, .events = res.st.events,
			       .trace_bytes = tlen, .nexpect = sc.nexpect,
			       .has_expect = sc.has_expect, .cycle_acc = res.cycle_acc };
	struct rtit_image *img = load_image(&sc, input, &res);
	char title[300];
	snprintf(title, sizeof(title), "rtitsim explain: %s", ri.name);
	/* a program owns stdout: the line about the page goes to stderr */
	fflush(stdout);
	x.msg = res.process ? stderr : stdout;
	int w = rtit_explain_write(&x, &ri, (const uint8_t *)trace, tlen, &dcfg, img, outp, title);
	if (w != RTIT_EXIT_OK)
		status = w;
	rtit_image_free(img);
out:
	rtit_session_result_fini(&res);
	free(trace);
	rtit_explain_free(&x);
	rtit_scenario_fini(&sc);
	return status;
}

/* The page's default name: the input's last component without .scn or
 * .manifest.json, + .html. */
static void default_out(const char *input, char *def, size_t cap)
{
	char in[1024];
	snprintf(in, sizeof(in), "%s", input);
	size_t n = strlen(in);
	while (n > 1 && in[n - 1] == '/')
		in[--n] = 0;
	const char *b = strrchr(in, '/');
	b = b ? b + 1 : in;
	n = strlen(b);
	if (n > 4 && !strcmp(b + n - 4, ".scn"))
		n -= 4;
	else if (n > 14 && !strcmp(b + n - 14, ".manifest.json"))
		n -= 14;
	snprintf(def, cap, "%.*s.html", (int)n, b);
}

int rtit_cmd_explain(int argc, char **argv)
{
	const char *input = NULL, *out = NULL, *params[32];
	static char pbuf[32][256];
	struct rtit_cli_prog pg = { .cmd = "rtitsim explain" };
	int np = 0, st;
	bool bundle = false;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		size_t n = strlen(a);
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			explain_usage(stdout);
			return RTIT_EXIT_OK;
		} else if ((!strcmp(a, "-o") || !strcmp(a, "--out")) && i + 1 < argc) {
			out = argv[++i];
		} else if ((!strcmp(a, "--param") || !strcmp(a, "--msr")) && i + 1 < argc &&
			   np < 32) {
			const char *v = argv[++i];
			if (!strchr(v, '=') || *v == '=' || strlen(v) > 250) {
				fprintf(stderr, "rtitsim explain: %s %s: expected %s=VALUE\n", a, v,
					a[2] == 'm' ? "NAME" : "KEY");
				return RTIT_EXIT_USAGE;
			}
			snprintf(pbuf[np], sizeof(pbuf[0]), "%c %s", a[2], v);
			params[np] = pbuf[np];
			np++;
		} else if ((st = rtit_cli_prog_option(&pg, argc, argv, &i)) != 0) {
			if (st < 0)
				return RTIT_EXIT_USAGE;
		} else if (a[0] == '-' || input) {
			fprintf(stderr, "rtitsim explain: unexpected '%s' (try --help)\n", a);
			return RTIT_EXIT_USAGE;
		} else if ((n > 4 && !strcmp(a + n - 4, ".scn")) ||
			   (bundle = rtit_explain_is_bundle(a))) {
			input = a;	/* its options may follow it */
		} else {
			input = a;	/* PROGRAM and its arguments */
			pg.args = argv + i + 1;
			pg.nargs = argc - i - 1;
			break;
		}
	}
	if (!input) {
		fprintf(stderr, "rtitsim explain: a scenario, a bundle or a program is needed"
			" (try --help)\n");
		return RTIT_EXIT_USAGE;
	}
	size_t n = strlen(input);
	bool prog = !bundle && !(n > 4 && !strcmp(input + n - 4, ".scn"));
	if (!prog && (pg.dialect || pg.bare || pg.nenv || pg.seed || pg.writable ||
		      pg.stdin_path || pg.cycles || pg.budget)) {
		fprintf(stderr, "rtitsim explain: --dialect, --bare, --env, --seed, --writable,"
			" --stdin, --syscall-cycles and --budget are for a PROGRAM\n");
		return RTIT_EXIT_USAGE;
	}
	if (bundle && np) {
		fprintf(stderr, "rtitsim explain: --param, --msr: a bundle is not run again (D122)\n");
		return RTIT_EXIT_USAGE;
	}
	char def[1024];
	if (!out) {
		default_out(input, def, sizeof(def));
		out = def;
	}
	if (bundle)
		return rtit_explain_bundle(input, out);
	char *text = scenario_text(input, &pg, params, np);
	if (!text)
		return RTIT_EXIT_IO;
	st = explain_run(input, text, out);
	free(text);
	return st;
}
