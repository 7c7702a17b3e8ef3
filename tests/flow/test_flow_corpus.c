/*
 * test_flow_corpus.c - the flow decoder's test corpus (issue 17): hand-made
 * streams over hand-made images, one row per decoding rule and per error
 * class of include/rtit/error.h that the flow decoder reports.  Every byte
 * of a row is derived by hand from the manual (the row cites where);
 * the expected output comes from the manual (and, where it can tell, from
 * libipt's decoder: said so in the row), never from the decoder itself.
 *
 * A row's output is the decoder's records (rtit_flow_rec_format) and notes
 * (one short line each: "# enable IP", "# error @OFFSET CODE", ...),
 * compared as text with the row's expectation.  Each row runs three times:
 * the trace in memory with batches of 1024 and of 64 records, and read a
 * byte at a time.  CORPUS_VERBOSE=1 prints each error's message;
 * `test_flow_corpus WORD` runs the rows whose name has WORD.
 *
 * Intel PT bytes (SDM 33.4.2): PSB 02 82 x 8; PSBEND 02 23; TIP.PGE
 * IPBytes<<5|11h, TIP IPBytes<<5|0Dh, TIP.PGD IPBytes<<5|01h, FUP
 * IPBytes<<5|1Dh with IPBytes 011b = 6 bytes sign-extended (71, 6D, 61,
 * 7D), 110b = 8 bytes (D1, CD, C1, DD), 000b = suppressed (Table 33-18);
 * TNT-8: the bits, first branch highest, above a stop bit, bit 0 zero
 * (one taken bit 06, one not-taken 04); MODE.Exec 99 0000 0 IF CS.D CS.L;
 * MODE.TSX 99 0010 0 0 TXAbort InTX; PIP 02 43 + 6 bytes (NR in bit 0,
 * CR3[51:5] above); OVF 02 F3; CFE 02 13 + 2 bytes; EVD 02 53 + 1 + 8.
 * RTIT bytes (RTIT 4.2): PSB C0 00 x 8; FUP/TIP 10 Event[2:0] Zext
 * CNT[1:0] with Event 000 PGE, 001 PGD, 110 TIP, 111 FAR and CNT 10b =
 * LIP[47:0] (82, 8A, B2, BA + 6 bytes); PIP 1100001 PG + CR3[39:0].
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtit/flow.h"
#include "rtit/pt_errata.h"

struct region {
	uint64_t addr;
	size_t n;
	const uint8_t *b;
};

struct row {
	const char *name;
	const char *cite;
	int dialect;		/* RTIT_DIALECT_RTIT / _PT */
	int mode;		/* 0: 64 */
	bool event_trace;
	bool events_only;	/* EventEn=1, BranchEn=0 */
	bool cmprs_ret;
	bool pg_set;		/* RTIT: cfg.cr0_pg is pg (else the default) */
	int pg;
	/* the control MSR held ctl at every enable (a sideband's ctl_fixed
	 * 1: cfg.pt_ctl_fixed / r_ctl_fixed); RTIT: RTIT_EVENTS, and the
	 * LIP compression of a run's trace (cfg.r_lip_exact) */
	bool ctl_fixed;
	uint64_t ctl, r_events;
	uint64_t r_lip[4];	/* RTIT_LIP0-3 (RTIT 3.3.6) */
	uint64_t pt_addr[4][2];	/* PT: IA32_RTIT_ADDRn_A/B (SDM 33.2.5.3) */
	uint64_t idt[2][2];	/* {vector, handler} the IDT holds (handler 0: none) */
	bool lip_exact;
	unsigned pt_errata;	/* cfg.pt_errata: RTIT_PT_ERRATUM bits */
	unsigned r_errata;	/* cfg.errata: RTIT_FLOW_Ex bits */
	bool vmx_conceal_exit;	/* cfg.pt_vmx_conceal_exit */
	uint64_t end_ip;	/* the run reached end address end_ip (0: not known),
				 * with no overflow */
	size_t n;
	const uint8_t *s;
	struct region img[6];	/* up to 5, then n == 0 */
	const char *want;	/* the output, line by line */
	int want_errors;	/* rtit_flow_dec_run's return */
};

#define BYTES(...) sizeof((const uint8_t[]){ __VA_ARGS__ }), (const uint8_t[]){ __VA_ARGS__ }
#define STREAM(...) .n = sizeof((const uint8_t[]){ __VA_ARGS__ }), \
	.s = (const uint8_t[]){ __VA_ARGS__ }
#define REG(a, ...) { (a), BYTES(__VA_ARGS__) }

/* Intel PT */
#define PT_PSB 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, \
	       0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82
#define PT_PSBEND 0x02, 0x23
#define IPB(ip, k) (uint8_t)((uint64_t)(ip) >> (8 * (k)))
#define IP6(ip) IPB(ip, 0), IPB(ip, 1), IPB(ip, 2), IPB(ip, 3), IPB(ip, 4), IPB(ip, 5)
#define IP8(ip) IP6(ip), IPB(ip, 6), IPB(ip, 7)
#define PT_PGE6(ip) 0x71, IP6(ip)
#define PT_TIP6(ip) 0x6d, IP6(ip)
#define PT_PGD6(ip) 0x61, IP6(ip)
#define PT_FUP6(ip) 0x7d, IP6(ip)
#define PT_PGE8(ip) 0xd1, IP8(ip)
#define PT_TIP8(ip) 0xcd, IP8(ip)
#define PT_FUP8(ip) 0xdd, IP8(ip)
#define PT_MODE64 0x99, 0x01
#define PT_MODE32 0x99, 0x02
/* RTIT */
#define R_PSB 0xc0, 0, 0, 0, 0, 0, 0, 0, 0
#define R_PGE(ip) 0x82, IP6(ip)
#define R_PGD(ip) 0x8a, IP6(ip)
#define R_TIP(ip) 0xb2, IP6(ip)
#define R_FAR(ip) 0xba, IP6(ip)
#define R_BUFFOVF(ip) 0x92, IP6(ip)
#define R_STOP 0xc1
#define R_PIP0 0xc3, 0, 0, 0, 0, 0	/* PIP: CR3 0, CR0.PG 1 (RTIT 4.2.10) */

#define K 0xffffffff81000000ull	/* the kernel half (bit 47 set) */

static const struct row rows[] = {
#include "flow_corpus_rows.h"
};

/* ------------------------------------------------------------ harness */

struct run {
	const struct row *row;
	size_t rpos;		/* the trace read a byte at a time */
	char out[8192];
	size_t len;
};

static int read_mem(void *opaque, uint64_t addr, uint8_t *buf, size_t n)
{
	const struct row *r = ((struct run *)opaque)->row;
	for (const struct region *g = r->img; g->n; g++)
		if (addr >= g->addr && addr - g->addr <= g->n && n <= g->n - (addr - g->addr)) {
			memcpy(buf, g->b + (addr - g->addr), n);
			return 0;
		}
	return -1;
}

/* The row's IDT (cfg.vector_of, cfg.handler_of). */
static int vector_of(void *opaque, uint64_t ip)
{
	const struct row *r = ((struct run *)opaque)->row;
	for (int i = 0; i < 2; i++)
		if (r->idt[i][1] && r->idt[i][1] == ip)
			return (int)r->idt[i][0];
	return -1;
}

static uint64_t handler_of(void *opaque, unsigned vector)
{
	const struct row *r = ((struct run *)opaque)->row;
	for (int i = 0; i < 2; i++)
		if (r->idt[i][1] && r->idt[i][0] == vector)
			return r->idt[i][1];
	return UINT64_MAX;
}

static ssize_t read_byte(void *opaque, uint8_t *buf, size_t cap)
{
	struct run *x = opaque;
	if (x->rpos >= x->row->n || !cap)
		return 0;
	buf[0] = x->row->s[x->rpos++];
	return 1;
}

static void put(struct run *x, const char *line)
{
	int n = snprintf(x->out + x->len, sizeof(x->out) - x->len, "%s\n", line);
	if (n > 0 && (size_t)n < sizeof(x->out) - x->len)
		x->len += (size_t)n;
}

static void on_rec(void *opaque, const struct rtit_sim_rec *recs, size_t n)
{
	char b[256];
	for (size_t i = 0; i < n; i++) {
		rtit_flow_rec_format(&recs[i], b, sizeof(b));
		put(opaque, b);
	}
}

static void on_note(void *opaque, const struct rtit_flow_note *nt)
{
	char b[256];
	switch (nt->kind) {
	case RTIT_FLOW_N_ENABLE:
		snprintf(b, sizeof(b), "# enable %" PRIx64, nt->ip);
		break;
	case RTIT_FLOW_N_DISABLE:
		snprintf(b, sizeof(b), "# disable %" PRIx64, nt->ip);
		break;
	case RTIT_FLOW_N_TRACESTOP:
		snprintf(b, sizeof(b), "# stop");
		break;
	case RTIT_FLOW_N_OVERFLOW:
		snprintf(b, sizeof(b), "# overflow %" PRIx64, nt->ip);
		break;
	case RTIT_FLOW_N_ERROR:
		snprintf(b, sizeof(b), "# error @%" PRIu64 " %s", nt->offset,
			 rtit_errstr(-nt->code));
		if (getenv("CORPUS_VERBOSE"))
			fprintf(stderr, "    (error @%" PRIu64 ": %s)\n", nt->offset, nt->msg);
		break;
	case RTIT_FLOW_N_RESYNC:
		snprintf(b, sizeof(b), "# resync %" PRIx64 " @%" PRIu64, nt->ip, nt->offset);
		break;
	case RTIT_FLOW_N_UNCERTAIN:
		snprintf(b, sizeof(b), "# uncertain %" PRIu64, nt->count);
		break;
	case RTIT_FLOW_N_END:
		snprintf(b, sizeof(b), "# end");
		break;
	case RTIT_FLOW_N_EVENTS_ONLY:
		snprintf(b, sizeof(b), "# events-only %" PRIx64 " @%" PRIu64, nt->ip, nt->offset);
		break;
	default:
		snprintf(b, sizeof(b), "# note %d", nt->kind);
		break;
	}
	put(opaque, b);
}

static bool run_row(const struct row *r, size_t chunk, bool bytewise)
{
	struct run x = { .row = r };
	struct rtit_flow_cfg cfg;
	struct rtit_flow_dec *d;

	rtit_flow_cfg_default(&cfg);
	cfg.dialect = r->dialect;
	cfg.mode = r->mode ? r->mode : 64;
	cfg.event_trace = r->event_trace || r->events_only;
	cfg.events_only = r->events_only;
	cfg.cmprs_ret = r->cmprs_ret;
	if (r->pg_set)
		cfg.cr0_pg = r->pg;
	if (r->ctl_fixed && r->dialect == RTIT_DIALECT_PT) {
		cfg.pt_ctl_fixed = true;
		cfg.pt_ctl = r->ctl;
		for (int i = 0; i < 4; i++) {
			cfg.pt_addr_a[i] = r->pt_addr[i][0];
			cfg.pt_addr_b[i] = r->pt_addr[i][1];
		}
	} else if (r->ctl_fixed) {
		cfg.r_ctl_fixed = true;
		cfg.r_ctl = r->ctl;
		cfg.r_events = r->r_events;
		for (int i = 0; i < 4; i++)
			cfg.r_lip[i] = r->r_lip[i];
	}
	cfg.r_lip_exact = r->lip_exact;
	cfg.pt_errata = r->pt_errata;
	cfg.errata = r->r_errata;
	cfg.pt_vmx_conceal_exit = r->vmx_conceal_exit;
	if (r->end_ip) {
		cfg.has_end = true;
		cfg.end_ip = r->end_ip;
		cfg.overflows_total = 0;	/* the sideband's count: none */
	}
	if (bytewise) {
		cfg.read = read_byte;
		cfg.read_opaque = &x;
	} else {
		cfg.mem = r->s;
		cfg.mem_len = r->n;
	}
	cfg.read_mem = read_mem;
	cfg.mem_opaque = &x;
	if (r->idt[0][1]) {
		cfg.vector_of = vector_of;
		cfg.handler_of = handler_of;
	}
	cfg.on_rec = on_rec;
	cfg.on_note = on_note;
	cfg.opaque = &x;
	cfg.batch_cap = chunk;
	if (rtit_flow_dec_new(&d, &cfg) < 0) {
		printf("FAIL %s: rtit_flow_dec_new\n", r->name);
		return false;
	}
	int e = rtit_flow_dec_run(d);
	rtit_flow_dec_free(d);
	if (e != r->want_errors || strcmp(x.out, r->want)) {
		printf("FAIL %s (%s), batch %zu%s: %d errors (want %d)\n--- got:\n%s--- want:\n%s",
		       r->name, r->cite, chunk, bytewise ? ", read a byte at a time" : "", e, r->want_errors, x.out, r->want);
		return false;
	}
	return true;
}

int main(int argc, char **argv)
{
	unsigned fails = 0, n = sizeof(rows) / sizeof(rows[0]);
	const char *only = argc > 1 ? argv[1] : NULL;

	for (unsigned i = 0; i < n; i++) {
		if (only && !strstr(rows[i].name, only))
			continue;
		/* whole batches, and small ones (a full batch of provisional records
		 * is taken as certain: rows stay below 64) */
		bool ok = run_row(&rows[i], 1024, false) && run_row(&rows[i], 64, false) &&
			  run_row(&rows[i], 1024, true);
		if (ok)
			printf("ok   %s (%s)\n", rows[i].name, rows[i].cite);
		else
			fails++;
	}
	printf("%u rows, %u failed\n", n, fails);
	return fails ? 1 : 0;
}
