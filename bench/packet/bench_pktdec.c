/*
 * bench_pktdec.c - packet decode throughput, both dialects.
 *
 * For each stream (RTIT, RTIT cycle-accurate, Intel PT; realistic pktgen
 * mix: mostly TNT and TIP/FUP with compressed IPs, some timing packets, a
 * PSB every ~4 KiB) of SIZE MiB (argv[1], default 128) built in memory,
 * measures, best of 3 runs (CLOCK_MONOTONIC):
 *   (a) rtit_pkt_decode + rtit_pkt_ctx_on_packet in a tight loop;
 *   (b) rtit_pktdec_next, the streaming decoder with IP tracking;
 *   (c) for Intel PT, libipt's pt_pkt_next on the same bytes (when built
 *       with libipt; its stream leaves out BBP/BIP/BEP/CFE/EVD, which
 *       libipt 2.0.5 does not know).
 * Targets: >= 1 GB/s, and >= 2x libipt.
 */
#include <inttypes.h>
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
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

struct result {
	double secs;
	uint64_t packets, check;
};

static struct result run_decode(const struct pktgen_opts *o, const uint8_t *buf, size_t len)
{
	struct rtit_pkt_ctx ctx;
	struct rtit_packet p;
	struct result r = { 0, 0, 0 };
	size_t off = 0;
	double t0 = now();

	rtit_pkt_ctx_init(&ctx, o->dialect, o->cycle_acc);
	while (off < len) {
		int n = rtit_pkt_decode(&ctx, buf + off, len - off, &p, NULL);
		if (n <= 0) {
			fprintf(stderr, "bench: decode error %s at %zu\n", rtit_errstr(n), off);
			exit(1);
		}
		rtit_pkt_ctx_on_packet(&ctx, &p);
		r.check += (uint64_t)p.type;
		r.packets++;
		off += (size_t)n;
	}
	r.secs = now() - t0;
	return r;
}

static struct result run_pktdec(const struct pktgen_opts *o, const uint8_t *buf, size_t len)
{
	static struct rtit_pktdec d;
	struct rtit_pktdec_cfg cfg = { .dialect = o->dialect, .cycle_acc = o->cycle_acc,
				       .mem = buf, .mem_len = len };
	struct rtit_pktdec_item it;
	struct result r = { 0, 0, 0 };
	double t0 = now();
	int ret;

	rtit_pktdec_init(&d, &cfg);
	while ((ret = rtit_pktdec_next(&d, &it)) == 1) {
		r.check += it.ip + (uint64_t)it.pkt.type;
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
static struct result run_libipt(const uint8_t *buf, size_t len)
{
	struct pt_config cfg;
	struct pt_packet_decoder *dec;
	struct pt_packet p;
	struct result r = { 0, 0, 0 };
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
		r.check += (uint64_t)p.type;
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

enum which { W_DECODE, W_PKTDEC, W_LIBIPT };

static struct result best_of_3(enum which w, const struct pktgen_opts *o,
			       const uint8_t *buf, size_t len)
{
	struct result best = { 1e30, 0, 0 };

	for (int i = 0; i < 3; i++) {
		struct result r;
		switch (w) {
		case W_DECODE: r = run_decode(o, buf, len); break;
		case W_PKTDEC: r = run_pktdec(o, buf, len); break;
#ifdef HAVE_LIBIPT
		default: r = run_libipt(buf, len); break;
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
	printf("%-9s %9s %8s %12s %12s %12s %8s\n", "stream", "MB", "B/pkt",
	       "decode MB/s", "pktdec MB/s", "libipt MB/s", "ours/ipt");
	for (size_t s = 0; s < sizeof(streams) / sizeof(streams[0]); s++) {
		struct pktgen g;
		size_t len;
		struct result a, b;

		pktgen_init(&g, &streams[s].o);
		len = pktgen_fill(&g, buf, cap);
		a = best_of_3(W_DECODE, &streams[s].o, buf, len);
		b = best_of_3(W_PKTDEC, &streams[s].o, buf, len);
		if (a.packets != g.npackets || b.packets != g.npackets) {
			fprintf(stderr, "bench: %s: decoded %" PRIu64 "/%" PRIu64 " of %" PRIu64 " packets\n",
				streams[s].name, a.packets, b.packets, g.npackets);
			return 1;
		}
		printf("%-9s %9.1f %8.2f %12.0f %12.0f", streams[s].name, (double)len / 1e6,
		       (double)len / (double)g.npackets, mbs(len, &a), mbs(len, &b));
#ifdef HAVE_LIBIPT
		if (streams[s].o.dialect == RTIT_DIALECT_PT) {
			struct result c = best_of_3(W_LIBIPT, &streams[s].o, buf, len);
			if (c.packets != g.npackets) {
				fprintf(stderr, "bench: libipt decoded %" PRIu64 " of %" PRIu64 " packets\n",
					c.packets, g.npackets);
				return 1;
			}
			printf(" %12.0f %4.2f/%4.2f", mbs(len, &c), c.secs / a.secs, c.secs / b.secs);
		}
#endif
		printf("\n");
	}
	printf("ours/ipt: decode/libipt, pktdec/libipt (time ratios; > 1 = we are faster)\n");
	free(buf);
	return 0;
}
