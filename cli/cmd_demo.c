/*
 * cmd_demo.c - `rtitsim demo`: dumps two small built-in streams, made
 * with the packet encoder and the hardware's IP-compression choice.
 *
 * RTIT: the packets of the RTIT trace example (RTIT 2.5.1, Table 3) after
 * an enabling PSB, then the PSB-insertion example of RTIT 3.3.9.
 * Intel PT: a PSB+ and a short flow with TNT, TIP, FUP and timing.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "dump.h"
#include "rtit/ip.h"
#include "rtit/print.h"

struct demo {
	struct rtit_pkt_ctx ctx;
	struct rtit_last_ip lip;
	uint8_t buf[512];
	size_t len;
	int err;
};

static void put(struct demo *d, enum rtit_pkt_type t, const struct rtit_packet *src)
{
	struct rtit_packet p = { 0 };
	int n;

	if (src)
		p = *src;
	p.type = t;
	n = rtit_pkt_encode(&d->ctx, &p, d->buf + d->len, sizeof(d->buf) - d->len);
	if (n < 0) {
		d->err = n;
		return;
	}
	d->len += (size_t)n;
	rtit_pkt_ctx_on_packet(&d->ctx, &p);
	if (t == RTIT_R_PSB || t == RTIT_PT_PSB)
		rtit_last_ip_on_psb(&d->lip);
}

/* An IP packet compressed the way the hardware would (ip.h). */
static void put_ip(struct demo *d, enum rtit_pkt_type t, uint64_t ip)
{
	struct rtit_packet p = { .type = t };

	rtit_last_ip_choose(&d->lip, ip, &p.u.ip);
	put(d, t, &p);
	rtit_last_ip_on_ip(&d->lip, ip);
}

static void demo_init(struct demo *d, enum rtit_dialect dialect)
{
	memset(d, 0, sizeof(*d));
	rtit_pkt_ctx_init(&d->ctx, dialect, false);
	rtit_last_ip_init(&d->lip, dialect);
}

static int show(struct demo *d, const char *title)
{
	struct rtit_dump_opts o = { 0 };
	struct rtit_pktdec_cfg cfg = {
		.dialect = d->ctx.dialect, .mem = d->buf, .mem_len = d->len,
	};

	if (d->err) {
		fprintf(stderr, "rtitsim demo: encoding failed: %s\n", rtit_errstr(d->err));
		return RTIT_EXIT_INPUT;
	}
	printf("== %s\n", title);
	return rtit_dump_stream(stdout, &o, &cfg, "demo");
}

int rtit_cmd_demo(int argc, char **argv)
{
	static struct demo d;
	struct rtit_packet p;
	int ret;

	if (argc > 1) {
		bool help = !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h");
		fputs("usage: rtitsim demo\n\nDumps a small hand-built stream of each dialect, each packet"
		      " with its bytes\nand fields.\n\nExit status: 0 ok, 1 usage, 2 I/O.\n",
		      help ? stdout : stderr);
		return help ? RTIT_EXIT_OK : RTIT_EXIT_USAGE;
	}

	/* RTIT 2.5.1 Table 3 (filter range 0x100-0x110), read as in
	 * docs/decisions.md: PSB on enable, then steps 1, 3, 4, 5. */
	demo_init(&d, RTIT_DIALECT_RTIT);
	put(&d, RTIT_R_PSB, NULL);
	put_ip(&d, RTIT_R_FUP_PGE, 0x102);	/* step 1: jmp into the range */
	put_ip(&d, RTIT_R_FUP_PGD, 0x105);	/* step 3: far jmp out, NLIP */
	put_ip(&d, RTIT_R_TIP, 0x983);		/*         its target */
	put_ip(&d, RTIT_R_FUP_PGE, 0x10e);	/* step 4: far jmp back in */
	put_ip(&d, RTIT_R_FUP_PGD, 0x10e);	/* step 5: #DE, CLIP */
	put_ip(&d, RTIT_R_TIP, 0x345);		/*         handler */
	/* RTIT 3.3.9: FUP.FAR that crosses Pkt_Cnt bit 12, PSB, TIP. */
	put_ip(&d, RTIT_R_FUP_FAR, 0x7fff00001000ull);
	put(&d, RTIT_R_PSB, NULL);
	put_ip(&d, RTIT_R_TIP, 0x12345);
	memset(&p, 0, sizeof(p));
	p.u.tnt.nbits = 6;
	p.u.tnt.bits = 0x2d;			/* TNTTNT */
	put(&d, RTIT_R_TNT, &p);
	p.u.mtc.ctc = 0x42;
	put(&d, RTIT_R_MTC, &p);
	ret = show(&d, "RTIT (Atom Silvermont/Airmont): RTIT 2.5.1 Table 3, then the RTIT 3.3.9 example");
	if (ret)
		return ret;

	demo_init(&d, RTIT_DIALECT_PT);
	put(&d, RTIT_PT_PSB, NULL);
	memset(&p, 0, sizeof(p));
	p.u.tsc = 0x123456789aull;
	put(&d, RTIT_PT_TSC, &p);
	p.u.tma.ctc = 0x1234;
	p.u.tma.fc = 0x15;
	put(&d, RTIT_PT_TMA, &p);
	p.u.cbr = 24;
	put(&d, RTIT_PT_CBR, &p);
	p.u.mode.bits = 1;			/* 64-bit */
	put(&d, RTIT_PT_MODE_EXEC, &p);
	put_ip(&d, RTIT_PT_FUP, 0xffffffff81000100ull);
	put(&d, RTIT_PT_PSBEND, NULL);
	p.u.tnt.nbits = 3;
	p.u.tnt.bits = 5;			/* TNT */
	put(&d, RTIT_PT_TNT8, &p);
	put_ip(&d, RTIT_PT_TIP, 0xffffffff81000420ull);
	p.u.cyc.value = 300;
	p.u.cyc.nbytes = 0;
	put(&d, RTIT_PT_CYC, &p);
	put_ip(&d, RTIT_PT_TIP, 0x401000);
	put_ip(&d, RTIT_PT_TIP_PGD, 0x401020);
	return show(&d, "Intel PT (SDM 33.4.2): PSB+, TNT, TIPs, CYC, TIP.PGD");
}
