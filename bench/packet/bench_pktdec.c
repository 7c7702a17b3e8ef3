/*
 * bench_pktdec.c - packet decode throughput, both dialects.
 *
 * For each stream (RTIT, RTIT cycle-accurate, Intel PT; realistic pktgen
 * mix: mostly TNT and TIP/FUP with compressed IPs, some timing packets, a
 * PSB every ~4 KiB) of SIZE MiB (argv[1], default 128) built in memory,
 * measures, best of 5 runs (the thread's CPU time; this machine's speed
 * drifts by up to 40% between runs seconds apart):
 *   bare  rtit_pktdec_next_batch() with cfg.no_ip: packets and offsets;
 *   IPs   rtit_pktdec_next_batch(): packets, offsets and full IPs (every
 *         IP packet's IP reconstructed against the last IP);
 *   next  rtit_pktdec_next(), one packet a call, with IPs;
 *   scalar  bare and IPs again with the vector path off (d.no_simd: the
 *         scalar fast path alone, D29), to show what the vector path
 *         (D64) gains on this CPU;
 *   for Intel PT, libipt on the same bytes (when built with libipt; the
 *   stream leaves out BBP/BIP/BEP/CFE/EVD, which libipt 2.0.5 does not
 *   know):
 *   ipt   pt_pkt_next(), libipt's packet decoder;
 *   ipt+IP  pt_pkt_next() and the last-IP update libipt's query decoder
 *         makes (pt_last_ip_update_ip(), internal to libipt, restated here).
 * Every loop consumes what it is timed for (type, size, the first payload
 * word, the IP; ours the offset too), and the IP runs' sums of IPs must
 * agree.
 * Targets: >= 1 GB/s, and >= 2x libipt, bare and with IPs (issue 2; D29,
 * D64 say where the decoder stands).
 *
 * "bench_pktdec MiB bounds" measures instead what this machine does per
 * packet of the same streams with no decoding at all (D29), to show what
 * limits the decoder:
 *   walk2   the packet boundaries only, each from its first byte and then
 *           that byte's size: two dependent loads a packet;
 *   walkw   the same with the next first byte shifted out of the 8 bytes
 *           loaded after the first one: one load and a shift (the fast
 *           path's chain);
 *   walk1   each boundary from a size stored per byte position: one load
 *           a packet, the shortest chain a byte-serial walk can have;
 *   item    no walk: a 64-byte item a packet written (8 stores, as the
 *           fast path) and read by the timed runs' consumer;
 *   item32  the same with a 32-byte item (4 stores);
 *   walkw+item  the two together: the fast path minus the decoding.
 * The walks' table is the stream's own: a first byte's packet size where
 * all its packets have one; the others (Intel PT's 0x02 packets, CYCs with
 * Exp) take the size a decode stored per offset before the timing, one
 * more dependent load.  Streams without a CCP context (RTIT and Intel PT).
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pktgen.h"
#include "rtit/pktdec.h"

#ifdef HAVE_LIBIPT
#include <intel-pt.h>
#endif

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

struct result {
	double secs;
	uint64_t packets, check, ipsum;
};

enum { batch = 128 };

/* What a consumer of the items reads: type, size, the first payload word,
 * the offset and the IP. */
static inline uint64_t consume(const struct rtit_pktdec_item *it)
{
	uint64_t w;

	__builtin_memcpy(&w, &it->pkt.u, sizeof(w));
	return (uint64_t)it->pkt.type + it->pkt.size + w + it->offset;
}

static struct result run_batch(const struct pktgen_opts *o, const uint8_t *buf, size_t len,
			       bool no_ip, bool no_simd)
{
	static struct rtit_pktdec d;
	static struct rtit_pktdec_item items[batch];
	struct rtit_pktdec_cfg cfg = { .dialect = o->dialect, .cycle_acc = o->cycle_acc,
				       .no_ip = no_ip, .mem = buf, .mem_len = len };
	struct result r = { 0, 0, 0, 0 };
	double t0 = now();
	int n;

	rtit_pktdec_init(&d, &cfg);
	d.no_simd = no_simd;
	while ((n = rtit_pktdec_next_batch(&d, items, batch)) > 0) {
		for (int i = 0; i < n; i++) {
			r.check += consume(&items[i]);
			r.ipsum += items[i].ip;
		}
		r.packets += (uint64_t)n;
	}
	if (n < 0) {
		fprintf(stderr, "bench: pktdec error %s at %" PRIu64 "\n", rtit_errstr(n), d.err.offset);
		exit(1);
	}
	r.secs = now() - t0;
	return r;
}

static struct result run_next(const struct pktgen_opts *o, const uint8_t *buf, size_t len)
{
	static struct rtit_pktdec d;
	struct rtit_pktdec_cfg cfg = { .dialect = o->dialect, .cycle_acc = o->cycle_acc,
				       .mem = buf, .mem_len = len };
	struct rtit_pktdec_item it;
	struct result r = { 0, 0, 0, 0 };
	double t0 = now();
	int ret;

	rtit_pktdec_init(&d, &cfg);
	while ((ret = rtit_pktdec_next(&d, &it)) == 1) {
		r.check += consume(&it);
		r.ipsum += it.ip;
		r.packets++;
	}
	if (ret < 0) {
		fprintf(stderr, "bench: pktdec error %s at %" PRIu64 "\n", rtit_errstr(ret), d.err.offset);
		exit(1);
	}
	r.secs = now() - t0;
	return r;
}

#ifdef HAVE_LIBIPT
/* libipt's last-IP update (libipt/src/pt_last_ip.c, pt_last_ip_update_ip),
 * and the reset a PSB makes in its query decoder. */
struct ipt_last_ip {
	uint64_t ip;
	bool have_ip, suppressed;
};

static inline uint64_t ipt_ip(struct ipt_last_ip *l, const struct pt_packet *p)
{
	switch (p->type) {
	case ppt_psb:
		l->ip = 0;
		l->have_ip = false;
		l->suppressed = false;
		return 0;
	case ppt_tip: case ppt_tip_pge: case ppt_tip_pgd: case ppt_fup:
		break;
	default:
		return 0;
	}
	switch (p->payload.ip.ipc) {
	case pt_ipc_suppressed:
		l->suppressed = true;
		return 0;
	case pt_ipc_sext_48:
		l->ip = (uint64_t)((int64_t)(p->payload.ip.ip << 16) >> 16);
		break;
	case pt_ipc_update_16:
		l->ip = (l->ip & ~0xffffull) | (p->payload.ip.ip & 0xffffull);
		break;
	case pt_ipc_update_32:
		l->ip = (l->ip & ~0xffffffffull) | (p->payload.ip.ip & 0xffffffffull);
		break;
	case pt_ipc_update_48:
		l->ip = (l->ip & ~0xffffffffffffull) | (p->payload.ip.ip & 0xffffffffffffull);
		break;
	case pt_ipc_full:
		l->ip = p->payload.ip.ip;
		break;
	default:
		return 0;
	}
	l->have_ip = true;
	l->suppressed = false;
	return l->ip;
}

static struct result run_libipt(const uint8_t *buf, size_t len, bool ips)
{
	struct pt_config cfg;
	struct pt_packet_decoder *dec;
	struct pt_packet p;
	struct ipt_last_ip lip = { 0, false, false };
	struct result r = { 0, 0, 0, 0 };
	double t0;
	int ret;

	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)(uintptr_t)buf;
	cfg.end = (uint8_t *)(uintptr_t)buf + len;
	dec = pt_pkt_alloc_decoder(&cfg);
	if (!dec || pt_pkt_sync_set(dec, 0) < 0) {
		fprintf(stderr, "bench: libipt decoder\n");
		exit(1);
	}
	t0 = now();
	while ((ret = pt_pkt_next(dec, &p, sizeof(p))) > 0) {
		uint64_t w;

		__builtin_memcpy(&w, &p.payload, sizeof(w));
		r.check += (uint64_t)p.type + p.size + w;
		if (ips)
			r.ipsum += ipt_ip(&lip, &p);
		r.packets++;
	}
	r.secs = now() - t0;
	if (ret != -pte_eos) {
		uint64_t off = 0;
		pt_pkt_get_offset(dec, &off);
		fprintf(stderr, "bench: libipt error %s at %" PRIu64 "\n", pt_errstr(pt_errcode(ret)), off);
		exit(1);
	}
	pt_pkt_free_decoder(dec);
	return r;
}
#endif

enum which { W_BARE, W_IPS, W_NEXT, W_SCALAR, W_SCALAR_IPS, W_IPT, W_IPT_IPS };

static struct result best_of_5(enum which w, const struct pktgen_opts *o,
			       const uint8_t *buf, size_t len)
{
	struct result best = { 1e30, 0, 0, 0 };

	for (int i = 0; i < 5; i++) {
		struct result r;
		switch (w) {
		case W_BARE: r = run_batch(o, buf, len, true, false); break;
		case W_IPS: r = run_batch(o, buf, len, false, false); break;
		case W_SCALAR: r = run_batch(o, buf, len, true, true); break;
		case W_SCALAR_IPS: r = run_batch(o, buf, len, false, true); break;
		case W_NEXT: r = run_next(o, buf, len); break;
#ifdef HAVE_LIBIPT
		case W_IPT: r = run_libipt(buf, len, false); break;
		default: r = run_libipt(buf, len, true); break;
#else
		default: abort();
#endif
		}
		if (r.secs < best.secs)
			best = r;
	}
	return best;
}

static double mbs(size_t len, const struct result *r)
{
	return (double)len / 1e6 / r->secs;
}

/* The bounds (above).  @tsize: the size of the packets a first byte
 * starts, 0 when they differ (from the stream: the first-byte table
 * without the rules); @sz: each packet's size at its offset. */
enum bound { B_WALK2, B_WALKW, B_WALK1, B_ITEM, B_ITEM32, B_WALKW_ITEM, B_COUNT };
static const char *const bound_names[B_COUNT] = {
	"walk2", "walkw", "walk1", "item", "item32", "walkw+item",
};

struct item32 {
	uint64_t head, word, offset, ip;
};

static struct result run_bound(enum bound k, const uint8_t tsize[256], const uint8_t *buf,
			       size_t len, const uint8_t *sz, uint64_t npackets)
{
	static struct rtit_pktdec_item items[batch];
	static struct item32 items32[batch];
	struct result r = { 0, 0, 0, 0 };
	double t0 = now();
	size_t pos = 0;
	unsigned b0 = buf[0];

	while (r.packets < npackets) {
		size_t n = npackets - r.packets < batch ? (size_t)(npackets - r.packets) : batch;

		for (size_t i = 0; i < n; i++) {
			const size_t at = pos;
			uint64_t w = 0;
			unsigned s;

			if (k == B_WALK1) {
				pos += sz[pos];
				continue;
			}
			if (k == B_WALK2) {
				s = tsize[buf[pos]];
				pos += __builtin_expect(s != 0, 1) ? s : sz[pos];
				continue;
			}
			if (k == B_WALKW || k == B_WALKW_ITEM) {
				__builtin_memcpy(&w, buf + pos + 1, 8);
				s = tsize[b0];
				if (__builtin_expect(!s, 0))
					s = sz[pos];
				pos += s;
				b0 = __builtin_expect(s <= 8, 1) ? (uint8_t)(w >> (8 * s - 8)) : buf[pos];
			}
			if (k == B_ITEM || k == B_WALKW_ITEM) {
				struct rtit_pktdec_item *it = &items[i];
				uint64_t h = at & 7, ip[2] = { 0, 0 };

				__builtin_memcpy(&it->pkt, &h, 8);
				__builtin_memcpy(&it->pkt.u, &w, 8);
				__builtin_memcpy((uint8_t *)&it->pkt.u + 8, &at, 8);
				it->offset = at;
				it->raw = buf + at;
				__builtin_memcpy(&it->ip, ip, 16);
				__builtin_memcpy((uint8_t *)it + offsetof(struct rtit_pktdec_item, ip_status),
						 ip, 8);
			} else if (k == B_ITEM32) {
				items32[i] = (struct item32){ at & 7, at, at, 0 };
			}
		}
		if (k == B_ITEM || k == B_WALKW_ITEM) {
			for (size_t i = 0; i < n; i++)
				r.check += consume(&items[i]) + items[i].ip;
		} else if (k == B_ITEM32) {
			for (size_t i = 0; i < n; i++)
				r.check += items32[i].head + items32[i].word + items32[i].offset +
					items32[i].ip;
		}
		r.packets += n;
	}
	r.secs = now() - t0;
	if (k != B_ITEM && k != B_ITEM32 && pos != len) {
		fprintf(stderr, "bench: %s lost the packet boundaries\n", bound_names[k]);
		exit(1);
	}
	r.check += pos;
	return r;
}

/* bench_pktdec MiB bounds: each stream's bounds, best of 3. */
static int bounds(const struct pktgen_opts *o, const char *name, uint8_t *buf, size_t cap)
{
	static struct rtit_pktdec d;
	static struct rtit_pktdec_item items[batch];
	struct rtit_pktdec_cfg cfg = { .dialect = o->dialect, .cycle_acc = o->cycle_acc,
				       .mem = buf };
	struct pktgen g;
	size_t len;
	uint8_t *sz, tsize[256] = { 0 }, seen[256] = { 0 };
	int n;

	pktgen_init(&g, o);
	len = pktgen_fill(&g, buf, cap - 16);
	memset(buf + len, 0, 16);
	sz = calloc(len + 16, 1);
	cfg.mem_len = len;
	if (!sz || rtit_pktdec_init(&d, &cfg) < 0) {
		free(sz);
		return 1;
	}
	while ((n = rtit_pktdec_next_batch(&d, items, batch)) > 0) {
		for (int i = 0; i < n; i++) {
			uint8_t b = items[i].raw[0], size = items[i].pkt.size;

			sz[items[i].offset] = size;
			tsize[b] = seen[b] && tsize[b] != size ? 0 : size;
			seen[b] |= tsize[b] != 0;
		}
	}
	printf("%-9s", name);
	for (unsigned k = 0; k < B_COUNT; k++) {
		struct result best = { 1e30, 0, 0, 0 };

		for (int i = 0; i < 3; i++) {
			struct result r = run_bound((enum bound)k, tsize, buf, len, sz, g.npackets);
			if (r.secs < best.secs)
				best = r;
		}
		printf(" %7.0f %5.0f", mbs(len, &best), (double)best.packets / 1e6 / best.secs);
	}
	printf("\n");
	free(sz);
	return 0;
}

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? (size_t)strtoul(argv[1], NULL, 10) : 128;
	struct {
		const char *name;
		struct pktgen_opts o;
	} streams[] = {
		{ "RTIT", { .dialect = RTIT_DIALECT_RTIT, .psb_every = 4096,
			    .mix = PKTGEN_MIX_REALISTIC, .seed = 1 } },
		{ "RTIT cyc", { .dialect = RTIT_DIALECT_RTIT, .cycle_acc = true, .psb_every = 4096,
				.mix = PKTGEN_MIX_REALISTIC, .seed = 2 } },
		{ "PT", { .dialect = RTIT_DIALECT_PT, .psb_every = 4096,
			  .mix = PKTGEN_MIX_REALISTIC, .seed = 3 } },
	};
	size_t cap = mib << 20;
	uint8_t *buf = malloc(cap);

	if (!buf || !mib) {
		fprintf(stderr, "usage: %s [MiB]\n", argv[0]);
		return 2;
	}
	streams[2].o.mask = pktgen_pt_libipt();
	if (argc > 2 && !strcmp(argv[2], "bounds")) {
		printf("%-9s", "MB/s Mp/s");
		for (unsigned k = 0; k < B_COUNT; k++)
			printf(" %13s", bound_names[k]);
		printf("\n");
		/* Not the cycle-accurate stream: its walk would need the CCP
		 * context (a second table), which none of the bounds model. */
		for (size_t s = 0; s < sizeof(streams) / sizeof(streams[0]); s++)
			if (!streams[s].o.cycle_acc && bounds(&streams[s].o, streams[s].name, buf, cap))
				return 1;
		free(buf);
		return 0;
	}
	printf("%-9s %6s %5s %15s %15s %7s %13s %7s %7s %11s\n", "stream", "MB", "B/pkt",
	       "bare MB/s Mp/s", "IPs MB/s Mp/s", "next", "scalar, +IP", "ipt", "ipt+IP", "x ipt, +IP");
	for (size_t s = 0; s < sizeof(streams) / sizeof(streams[0]); s++) {
		struct pktgen g;
		size_t len;
		struct result a, b, c, sa, sb;

		pktgen_init(&g, &streams[s].o);
		len = pktgen_fill(&g, buf, cap);
		a = best_of_5(W_BARE, &streams[s].o, buf, len);
		b = best_of_5(W_IPS, &streams[s].o, buf, len);
		c = best_of_5(W_NEXT, &streams[s].o, buf, len);
		sa = best_of_5(W_SCALAR, &streams[s].o, buf, len);
		sb = best_of_5(W_SCALAR_IPS, &streams[s].o, buf, len);
		if (a.packets != g.npackets || b.packets != g.npackets || c.packets != g.npackets ||
		    sa.packets != g.npackets || sb.packets != g.npackets || b.ipsum != c.ipsum ||
		    sb.ipsum != b.ipsum || a.ipsum || sa.ipsum) {
			fprintf(stderr, "bench: %s: decoded %" PRIu64 "/%" PRIu64 "/%" PRIu64 " of %"
				PRIu64 " packets, or the runs disagree\n", streams[s].name,
				a.packets, b.packets, c.packets, g.npackets);
			return 1;
		}
		printf("%-9s %6.1f %5.2f %8.0f %6.1f %8.0f %6.1f %7.0f", streams[s].name,
		       (double)len / 1e6, (double)len / (double)g.npackets,
		       mbs(len, &a), (double)a.packets / 1e6 / a.secs,
		       mbs(len, &b), (double)b.packets / 1e6 / b.secs, mbs(len, &c));
		printf(" %6.0f %6.0f", mbs(len, &sa), mbs(len, &sb));
#ifdef HAVE_LIBIPT
		if (streams[s].o.dialect == RTIT_DIALECT_PT) {
			struct result x = best_of_5(W_IPT, &streams[s].o, buf, len);
			struct result y = best_of_5(W_IPT_IPS, &streams[s].o, buf, len);
			if (x.packets != g.npackets || y.packets != g.npackets || y.ipsum != b.ipsum) {
				fprintf(stderr, "bench: libipt decoded %" PRIu64 "/%" PRIu64 " of %" PRIu64
					" packets, or its IPs differ\n", x.packets, y.packets, g.npackets);
				return 1;
			}
			printf(" %7.0f %7.0f %5.2f %5.2f", mbs(len, &x), mbs(len, &y),
			       x.secs / a.secs, y.secs / b.secs);
		}
#endif
		printf("\n");
	}
	printf("scalar: the batch call without the vector path (D64), bare and with IPs\n");
	printf("x ipt: libipt's time / ours, bare and with IPs (> 1: we are faster)\n");
	printf("target (issue 20 goal 6): x ipt >= 5 on the Intel PT rows, bare and with IPs"
	       " (the 1 GB/s goal of the vector path is retired)\n");
	free(buf);
	return 0;
}
