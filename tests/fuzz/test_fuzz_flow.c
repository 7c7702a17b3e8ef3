/*
 * test_fuzz_flow.c - the flow decoder's fuzz entry point without libFuzzer,
 * bounded, on every build with the simulator (suite 'fuzz'):
 *   seed            a hand-made image and trace (RTIT and Intel PT)
 *                   decode cleanly to the eight instructions worked out
 *                   below
 *   mutated         the seed with flipped, inserted, deleted and truncated
 *                   bytes, in the image and in the trace
 *   random          random configurations, images and traces
 *   tsx             an Intel PT trace with MODE.TSX begin, commit and
 *                   abort decodes to its records; its mutants keep the
 *                   invariants
 *   pebs            an Intel PT trace with a PEBS record (BBP, BIPs, BEP,
 *                   FUP) decodes to its records; its mutants keep the
 *                   invariants (the walk's block handling, D55)
 * A broken invariant aborts inside fuzz_flow_one() with its name.
 */
#include <string.h>

#include <criterion/criterion.h>

#include "fuzz_flow.h"
#include "rtit/pebs.h"

/* Image at 0x401000:
 *   401000 b9 03 00 00 00  mov ecx, 3
 *   401005 ff c9           dec ecx
 *   401007 75 fc           jnz 0x401005
 *   401009 ff e0           jmp rax
 *   40100b f4              hlt
 * Trace (RTIT): PSB (4.2.1); FUP.PGE 0x401000 (CNT=01 Zext=1, Table 18);
 * TNT T T N (4.2.2: 0b1110); TIP 0x40100b (CNT=00, matched); FUP.PGD
 * 0x40100b (event 001b, CNT=00).  Flow: mov, dec, jnz T, dec, jnz T, dec,
 * jnz N, jmp rax: 8 instructions. */
static const uint8_t seed_img[] = {
	0xb9, 0x03, 0x00, 0x00, 0x00, 0xff, 0xc9, 0x75, 0xfc, 0xff, 0xe0, 0xf4,
};
static const uint8_t seed_trace[] = {
	0xc0, 0, 0, 0, 0, 0, 0, 0, 0,
	0x85, 0x00, 0x10, 0x40, 0x00,
	0x0e,
	0xb0, 0x0b, 0x10,
	0x88, 0x0b, 0x10,
};

/* The same flow as an Intel PT trace: PSB (Table 33-36: 02 82 x 8), PSBEND
 * (02 23), MODE.Exec CS.L=1 (Table 33-26: 99 01), TIP.PGE 0x401000 with
 * IPBytes=011b (Table 33-18: 0x11 | 3 << 5, six IP bytes), TNT-8 T T N
 * (Table 33-15: stop bit above the oldest bit, bit 0 = 0: 0b00011100),
 * TIP.PGD 0x40100b with IPBytes=001b (0x01 | 1 << 5, IP[15:0]): the
 * JMP RAX leaves tracing (Table 33-56 case 4).  8 instructions. */
static const uint8_t seed_trace_pt[] = {
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	0x02, 0x23,
	0x99, 0x01,
	0x71, 0x00, 0x10, 0x40, 0x00, 0x00, 0x00,
	0x1c,
	0x21, 0x0b, 0x10,
};

static size_t make_input(uint8_t *buf, uint8_t flags)
{
	size_t n = 0;
	bool pt = flags & 0x80;
	const uint8_t *t = pt ? seed_trace_pt : seed_trace;
	size_t tn = pt ? sizeof(seed_trace_pt) : sizeof(seed_trace);

	buf[n++] = flags;
	buf[n++] = sizeof(seed_img);
	buf[n++] = 0;
	memcpy(buf + n, seed_img, sizeof(seed_img));
	n += sizeof(seed_img);
	memcpy(buf + n, t, tn);
	return n + tn;
}

struct count { uint64_t insns, errors; uint64_t ips[16]; };

static int rd(void *o, uint64_t a, uint8_t *b, size_t n)
{
	(void)o;
	if (a < FUZZ_FLOW_BASE || a - FUZZ_FLOW_BASE > sizeof(seed_img) ||
	    n > sizeof(seed_img) - (a - FUZZ_FLOW_BASE))
		return -1;
	memcpy(b, seed_img + (a - FUZZ_FLOW_BASE), n);
	return 0;
}

static void on_rec(void *o, const struct rtit_sim_rec *r, size_t n)
{
	struct count *c = o;
	for (size_t i = 0; i < n; i++)
		if (r[i].kind == RTIT_SIM_INSN && c->insns < 16)
			c->ips[c->insns++] = r[i].ip;
}

static void on_note(void *o, const struct rtit_flow_note *nt)
{
	struct count *c = o;
	if (nt->kind == RTIT_FLOW_N_ERROR)
		c->errors++;
}

static void seed_decodes(int dialect, const uint8_t *trace, size_t len)
{
	static const uint64_t want[] = { 0x401000, 0x401005, 0x401007, 0x401005, 0x401007,
					 0x401005, 0x401007, 0x401009 };
	struct rtit_flow_cfg cfg;
	struct rtit_flow_dec *d;
	struct count c = { 0 };

	rtit_flow_cfg_default(&cfg);
	cfg.dialect = dialect;
	cfg.mem = trace;
	cfg.mem_len = len;
	cfg.read_mem = rd;
	cfg.on_rec = on_rec;
	cfg.on_note = on_note;
	cfg.opaque = &c;
	cr_assert_eq(rtit_flow_dec_new(&d, &cfg), 0);
	cr_assert_eq(rtit_flow_dec_run(d), 0);
	rtit_flow_dec_free(d);
	cr_assert_eq(c.errors, 0);
	cr_assert_eq(c.insns, 8, "decoded %llu instructions", (unsigned long long)c.insns);
	for (size_t i = 0; i < 8; i++)
		cr_expect_eq(c.ips[i], want[i], "instruction %zu at %#llx", i,
			     (unsigned long long)c.ips[i]);
}

Test(fuzz_flow, seed_decodes_to_the_worked_flow)
{
	uint8_t buf[64];

	seed_decodes(RTIT_DIALECT_RTIT, seed_trace, sizeof(seed_trace));
	seed_decodes(RTIT_DIALECT_PT, seed_trace_pt, sizeof(seed_trace_pt));
	/* and the harness accepts them in every configuration */
	for (unsigned f = 0; f < 256; f++)
		fuzz_flow_one(buf, make_input(buf, (uint8_t)f));
}

static uint64_t rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* An input the libFuzzer run found (session 21): Intel PT, a TIP in view
 * while the TNT fast path walks a loop of direct JMPs (EB EB).  D221's
 * first version took the TIP as used at each JMP, which restarted the walk
 * bound (max_walk) and never ended; the walk must stop at max_walk. */
static const uint8_t tip_over_jmp_loop[] = {
	0xb7, 0x46, 0x00, 0x00, 0xe0, 0x60, 0x00, 0x00, 0x80, 0x03, 0x97, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x00, 0x02, 0x63, 0xbc, 0xda,
	0xd2, 0x00, 0x00, 0x1a, 0x00, 0x00, 0xeb, 0xeb, 0xeb, 0xeb, 0x00, 0x00, 0x90,
	0x90, 0xf4, 0x71, 0x00, 0x10, 0x40, 0x01, 0x00, 0x00, 0x02, 0xa7, 0xbc, 0xda,
	0xd2, 0x00, 0x00, 0x1a, 0x00, 0x00, 0xeb, 0xeb, 0x74, 0x00, 0x00, 0x00, 0x6c,
	0x00, 0x00, 0x80, 0x03, 0x00, 0x90, 0x90, 0xf4, 0x71, 0x00, 0x10, 0x40, 0x00,
	0x00, 0x00, 0x6d, 0xff, 0xb3, 0x00, 0x03, 0xbc, 0xda, 0xd2, 0x00, 0xeb, 0xeb,
	0xeb, 0x26, 0x00, 0x00, 0x90, 0x90, 0xf4, 0x00, 0x00, 0x00, 0x7f, 0xff, 0xff,
	0xff, 0xb3, 0x00, 0x3d, 0x01, 0x10
};

Test(fuzz_flow, tip_in_view_over_a_direct_jmp_loop)
{
	fuzz_flow_one(tip_over_jmp_loop, sizeof(tip_over_jmp_loop));
}

Test(fuzz_flow, mutated, .timeout = 240)
{
	uint64_t s = 0x9e3779b97f4a7c15ull;
	uint8_t base[80], buf[256];
	unsigned decoding = 0;

	for (int iter = 0; iter < 40000; iter++) {
		/* three in four keep the seed's 64-bit, non-cycle-accurate
		 * configuration: the others mostly stop at the first packet */
		uint8_t flags = (uint8_t)rng(&s);
		size_t n = make_input(base, iter % 4 ? flags & ~3u : flags);
		memcpy(buf, base, n);
		unsigned k = 1 + (unsigned)(rng(&s) % 4);
		for (unsigned j = 0; j < k; j++) {
			size_t at = 3 + (size_t)(rng(&s) % (n - 3));
			switch (rng(&s) % 4) {
			case 0:		/* flip bits */
				buf[at] ^= (uint8_t)(1u << (rng(&s) % 8));
				break;
			case 1:		/* a random byte */
				buf[at] = (uint8_t)rng(&s);
				break;
			case 2:		/* insert */
				if (n < sizeof(buf)) {
					memmove(buf + at + 1, buf + at, n - at);
					buf[at] = (uint8_t)rng(&s);
					n++;
				}
				break;
			default:	/* delete */
				if (n > 4) {
					memmove(buf + at, buf + at + 1, n - at - 1);
					n--;
				}
				break;
			}
		}
		if (rng(&s) % 8 == 0)
			n = 3 + (size_t)(rng(&s) % (n - 2));	/* truncate */
		if (fuzz_flow_one(buf, n) > 0)
			decoding++;
	}
	/* many mutants still decode something (a damaged PSB or FUP.PGE
	 * leaves nothing to decode): the decoder is exercised
	 * past its first packet */
	cr_expect_gt(decoding, 4000, "only %u of 40000 mutants decoded anything", decoding);
}

Test(fuzz_flow, random, .timeout = 240)
{
	uint64_t s = 0x243f6a8885a308d3ull;
	uint8_t buf[512];

	for (int iter = 0; iter < 20000; iter++) {
		size_t n = 3 + (size_t)(rng(&s) % (sizeof(buf) - 3));
		for (size_t i = 0; i < n; i++)
			buf[i] = (uint8_t)rng(&s);
		buf[1] = (uint8_t)(rng(&s) % 64);	/* image sizes that leave a trace */
		buf[2] = 0;
		/* a PSB early, so that decoding gets going */
		if (n > (size_t)buf[1] + 12 && rng(&s) % 2) {
			uint8_t *t = buf + 3 + buf[1];
			t[0] = 0xc0;
			memset(t + 1, 0, 8);
		}
		fuzz_flow_one(buf, n);
	}
}

/* TSX (Intel PT): image at 0x401000
 *   401000 c7 f8 0c 00 00 00  xbegin 0x401012
 *   401006 0f 01 d5           xend
 *   401009 c7 f8 03 00 00 00  xbegin 0x401012
 *   40100f c6 f8 42           xabort 0x42
 *   401012 f4                 hlt
 * Trace: PSB, PSBEND, MODE.Exec 64, TIP.PGE 0x401000 (as above); then
 * MODE.TSX (Table 33-27: 99, 001b << 5 | TXAbort << 1 | InTX) with FUP
 * IPBytes=001b (0x1d | 1 << 5, IP[15:0]): begin at 401000, commit at
 * 401006, begin at 401009, abort at 40100f with TIP(0x401012) (0x0d |
 * 1 << 5): Table 33-55 cases 19, 20, 21.  Flow: xbegin, xend, xbegin,
 * the abort event. */
static const uint8_t tsx_img[] = {
	0xc7, 0xf8, 0x0c, 0x00, 0x00, 0x00, 0x0f, 0x01, 0xd5,
	0xc7, 0xf8, 0x03, 0x00, 0x00, 0x00, 0xc6, 0xf8, 0x42, 0xf4,
};
static const uint8_t tsx_trace[] = {
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	0x02, 0x23,
	0x99, 0x01,
	0x71, 0x00, 0x10, 0x40, 0x00, 0x00, 0x00,
	0x99, 0x21, 0x3d, 0x00, 0x10,
	0x99, 0x20, 0x3d, 0x06, 0x10,
	0x99, 0x21, 0x3d, 0x09, 0x10,
	0x99, 0x22, 0x3d, 0x0f, 0x10, 0x2d, 0x12, 0x10,
};

struct tsx_seen { int n; struct rtit_sim_rec r[8]; uint64_t errors; };

/* The image of the seed being decoded (pt_decode). */
static const uint8_t *rd_img;
static size_t rd_len;

static int img_rd(void *o, uint64_t a, uint8_t *b, size_t n)
{
	(void)o;
	if (a < FUZZ_FLOW_BASE || a - FUZZ_FLOW_BASE > rd_len || n > rd_len - (a - FUZZ_FLOW_BASE))
		return -1;
	memcpy(b, rd_img + (a - FUZZ_FLOW_BASE), n);
	return 0;
}

static void tsx_on_rec(void *o, const struct rtit_sim_rec *r, size_t n)
{
	struct tsx_seen *s = o;
	for (size_t i = 0; i < n && s->n < 8; i++)
		s->r[s->n++] = r[i];
}

static void tsx_on_note(void *o, const struct rtit_flow_note *nt)
{
	if (nt->kind == RTIT_FLOW_N_ERROR)
		((struct tsx_seen *)o)->errors++;
}

/* Decodes an Intel PT @trace over @img into @s, with no error. */
static void pt_decode(const uint8_t *img, size_t ni, const uint8_t *trace, size_t nt,
		      struct tsx_seen *s)
{
	struct rtit_flow_cfg cfg;
	struct rtit_flow_dec *d;

	rd_img = img;
	rd_len = ni;
	rtit_flow_cfg_default(&cfg);
	cfg.dialect = RTIT_DIALECT_PT;
	cfg.mem = trace;
	cfg.mem_len = nt;
	cfg.read_mem = img_rd;
	cfg.on_rec = tsx_on_rec;
	cfg.on_note = tsx_on_note;
	cfg.opaque = s;
	cr_assert_eq(rtit_flow_dec_new(&d, &cfg), 0);
	rtit_flow_dec_run(d);
	rtit_flow_dec_free(d);
	cr_assert_eq(s->errors, 0);
}

/* An Intel PT input (byte 0 = 0x80) of @img and @trace, then 30000
 * mutants of it (1-4 bytes changed, sometimes cut short) through
 * fuzz_flow_one, whose invariants must hold. */
static void pt_mutants(const uint8_t *img, size_t ni, const uint8_t *trace, size_t nt, uint64_t x)
{
	uint8_t base[128], buf[256];
	size_t n = 0;

	cr_assert_leq(3 + ni + nt, sizeof(base));
	base[n++] = 0x80;
	base[n++] = (uint8_t)ni;
	base[n++] = 0;
	memcpy(base + n, img, ni);
	n += ni;
	memcpy(base + n, trace, nt);
	n += nt;
	fuzz_flow_one(base, n);
	for (int iter = 0; iter < 30000; iter++) {
		size_t m = n;
		memcpy(buf, base, n);
		for (unsigned j = 0, k = 1 + (unsigned)(rng(&x) % 4); j < k; j++) {
			size_t at = 3 + (size_t)(rng(&x) % (m - 3));
			if (rng(&x) % 2)
				buf[at] ^= (uint8_t)(1u << (rng(&x) % 8));
			else
				buf[at] = (uint8_t)rng(&x);
		}
		if (rng(&x) % 8 == 0)
			m = 3 + (size_t)(rng(&x) % (m - 2));
		fuzz_flow_one(buf, m);
	}
}

Test(fuzz_flow, tsx_seed_and_mutants, .timeout = 240)
{
	struct tsx_seen s = { 0 };

	pt_decode(tsx_img, sizeof(tsx_img), tsx_trace, sizeof(tsx_trace), &s);
	cr_assert_geq(s.n, 4);
	cr_expect(s.r[0].cls == RTIT_IC_XBEGIN && s.r[0].ip == 0x401000 && (s.r[0].flags & RTIT_SIM_F_TX));
	cr_expect(s.r[1].cls == RTIT_IC_XEND && s.r[1].ip == 0x401006 && (s.r[1].flags & RTIT_SIM_F_TX));
	cr_expect(s.r[2].cls == RTIT_IC_XBEGIN && s.r[2].ip == 0x401009 && (s.r[2].flags & RTIT_SIM_F_TX));
	cr_expect(s.r[3].kind == RTIT_SIM_EVENT && s.r[3].cls == RTIT_EV_TSX_ABORT &&
		  s.r[3].ip == 0x40100f && s.r[3].next_ip == 0x401012);

	/* mutants of it: the invariants of fuzz_flow_one hold */
	pt_mutants(tsx_img, sizeof(tsx_img), tsx_trace, sizeof(tsx_trace), 0x2545f4914f6cdd1dull);
}

/* Image at 0x401000: nop, nop, hlt.  Trace: PSB, PSBEND, MODE.Exec 64,
 * TIP.PGE(0x401000) (IPBytes 011b), then a PEBS record after the first
 * NOP: BBP(Basic, SZ=0) 02 63 04, BIP ID 0 (IP 0x401000), ID 1 (PMC0),
 * ID 2 (TSC 5), BEP(IP=1) 02 B3, FUP(0x401001) 3D 01 10 (Tables 33-45 to
 * 33-48).  Flow: the NOP, then the PEBS record at 0x401001. */
static const uint8_t pebs_img[] = { 0x90, 0x90, 0xf4 };
static const uint8_t pebs_trace[] = {
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	0x02, 0x23,
	0x99, 0x01,
	0x71, 0x00, 0x10, 0x40, 0x00, 0x00, 0x00,
	0x02, 0x63, 0x04,
	0x04, 0x00, 0x10, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x0c, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x14, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x02, 0xb3,
	0x3d, 0x01, 0x10,
};

Test(fuzz_flow, pebs_seed_and_mutants, .timeout = 240)
{
	struct tsx_seen s = { 0 };
	static const struct rtit_pebs_item items[3] = {
		{ 0x04, 0, 0, 0x401000 }, { 0x04, 1, 0, 1 }, { 0x04, 2, 0, 5 },
	};

	pt_decode(pebs_img, sizeof(pebs_img), pebs_trace, sizeof(pebs_trace), &s);
	cr_assert_geq(s.n, 2);
	cr_expect(s.r[0].kind == RTIT_SIM_INSN && s.r[0].ip == 0x401000);
	cr_expect(s.r[1].kind == RTIT_SIM_EVENT && s.r[1].cls == RTIT_EV_PEBS &&
		  s.r[1].ip == 0x401001 && s.r[1].value == 0x401000 && s.r[1].vector == 0);
	cr_expect_eq(s.r[1].msr, rtit_pebs_digest(items, 3));

	pt_mutants(pebs_img, sizeof(pebs_img), pebs_trace, sizeof(pebs_trace), 0x9e3779b97f4a7c15ull);
}
