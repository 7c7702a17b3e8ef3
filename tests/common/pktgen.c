/*
 * pktgen.c - random valid packet streams (see pktgen.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pktgen.h"

/* ---- PRNG: splitmix64 seeds xoshiro256** --------------------------- */

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void pktgen_rng_seed(struct pktgen_rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t pktgen_rng_next(struct pktgen_rng *r)
{
	uint64_t *s = r->s;
	uint64_t res = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return res;
}

uint64_t pktgen_rng_below(struct pktgen_rng *r, uint64_t n)
{
	/* Lemire's multiply-shift; the tiny bias does not matter here. */
	return (uint64_t)(((unsigned __int128)pktgen_rng_next(r) * n) >> 64);
}

bool pktgen_rng_chance(struct pktgen_rng *r, unsigned num, unsigned den)
{
	return pktgen_rng_below(r, den) < num;
}

/* ---- masks ----------------------------------------------------------- */

uint64_t pktgen_pt_all(void)
{
	uint64_t m = 0;
	for (int t = RTIT_PT_PAD; t < RTIT_PKT_TYPE_COUNT; t++)
		m |= PKTGEN_BIT(t);
	return m;
}

uint64_t pktgen_pt_libipt(void)
{
	return pktgen_pt_all() & ~(PKTGEN_BIT(RTIT_PT_BBP) | PKTGEN_BIT(RTIT_PT_BIP) |
				   PKTGEN_BIT(RTIT_PT_BEP) | PKTGEN_BIT(RTIT_PT_CFE) |
				   PKTGEN_BIT(RTIT_PT_EVD));
}

uint64_t pktgen_rtit_all(void)
{
	uint64_t m = 0;
	for (int t = RTIT_R_PSB; t <= RTIT_R_CCP; t++)
		m |= PKTGEN_BIT(t);
	return m;
}

/* ---- weights ----------------------------------------------------------- */

struct weight {
	enum rtit_pkt_type type;
	unsigned uniform, realistic;
};

/* Packets the main loop picks.  PSB, PSBEND, BIP and CCP are structural:
 * emitted where the stream's shape needs them. */
static const struct weight rtit_weights[] = {
	{ RTIT_R_TNT, 10, 500 },
	{ RTIT_R_TIP, 10, 250 },
	{ RTIT_R_FUP_PGE, 10, 10 },
	{ RTIT_R_FUP_PGD, 10, 10 },
	{ RTIT_R_FUP_BUFFOVF, 10, 2 },
	{ RTIT_R_FUP_PCC, 10, 20 },
	{ RTIT_R_FUP_FAR, 10, 40 },
	{ RTIT_R_PIP, 10, 10 },
	{ RTIT_R_TRACESTOP, 10, 1 },
	{ RTIT_R_MTC, 10, 60 },
	{ RTIT_R_STS, 10, 10 },
};

static const struct weight pt_weights[] = {
	{ RTIT_PT_PAD, 10, 20 },
	{ RTIT_PT_TNT8, 10, 450 },
	{ RTIT_PT_TNT64, 10, 40 },
	{ RTIT_PT_TIP, 10, 200 },
	{ RTIT_PT_TIP_PGE, 10, 10 },
	{ RTIT_PT_TIP_PGD, 10, 10 },
	{ RTIT_PT_FUP, 10, 40 },
	{ RTIT_PT_PIP, 10, 5 },
	{ RTIT_PT_MODE_EXEC, 10, 5 },
	{ RTIT_PT_MODE_TSX, 10, 5 },
	{ RTIT_PT_TRACESTOP, 10, 1 },
	{ RTIT_PT_CBR, 10, 3 },
	{ RTIT_PT_TSC, 10, 10 },
	{ RTIT_PT_MTC, 10, 60 },
	{ RTIT_PT_TMA, 10, 5 },
	{ RTIT_PT_CYC, 10, 120 },
	{ RTIT_PT_VMCS, 10, 2 },
	{ RTIT_PT_OVF, 10, 1 },
	{ RTIT_PT_MNT, 10, 1 },
	{ RTIT_PT_PTW, 10, 5 },
	{ RTIT_PT_EXSTOP, 10, 3 },
	{ RTIT_PT_MWAIT, 10, 3 },
	{ RTIT_PT_PWRE, 10, 3 },
	{ RTIT_PT_PWRX, 10, 3 },
	{ RTIT_PT_BBP, 10, 3 },
	{ RTIT_PT_CFE, 10, 2 },
	{ RTIT_PT_EVD, 10, 2 },
};

static bool in_mask(const struct pktgen *g, enum rtit_pkt_type t)
{
	return (g->o.mask & PKTGEN_BIT(t)) != 0;
}

static enum rtit_pkt_type pick_type(struct pktgen *g)
{
	const struct weight *w = rtit_weights;
	size_t n = sizeof(rtit_weights) / sizeof(rtit_weights[0]);
	uint64_t total = 0, x;

	if (g->o.dialect == RTIT_DIALECT_PT) {
		w = pt_weights;
		n = sizeof(pt_weights) / sizeof(pt_weights[0]);
	}
	for (size_t i = 0; i < n; i++)
		if (in_mask(g, w[i].type))
			total += g->o.mix == PKTGEN_MIX_REALISTIC ? w[i].realistic : w[i].uniform;
	if (!total)
		return RTIT_PKT_INVALID;
	x = pktgen_rng_below(&g->rng, total);
	for (size_t i = 0; i < n; i++) {
		unsigned wi;
		if (!in_mask(g, w[i].type))
			continue;
		wi = g->o.mix == PKTGEN_MIX_REALISTIC ? w[i].realistic : w[i].uniform;
		if (x < wi)
			return w[i].type;
		x -= wi;
	}
	return RTIT_PKT_INVALID;
}

/* ---- IPs --------------------------------------------------------------- */

static uint64_t sext48(uint64_t v)
{
	uint64_t m = 1ull << 47;
	v &= (1ull << 48) - 1;
	return (v ^ m) - m;
}

/* A random IP: near the current one, far, kernel, small; for PT also
 * non-canonical 64-bit values.  RTIT IPs are canonical 48-bit (ip.h). */
static uint64_t random_ip(struct pktgen *g)
{
	struct pktgen_rng *r = &g->rng;
	uint64_t x = pktgen_rng_next(r), ip;
	unsigned k = (unsigned)pktgen_rng_below(r, 100);

	if (g->o.mix == PKTGEN_MIX_REALISTIC)
		k = k < 85 ? 0 : k < 95 ? 40 : k;	/* mostly near */

	if (k < 35)		/* near: same 64 KiB */
		ip = (g->cur_ip & ~0xffffull) | (x & 0xffff);
	else if (k < 50)	/* near: within 4 GiB */
		ip = (g->cur_ip & ~0xffffffffull) | (x & 0xffffffff);
	else if (k < 65)	/* far user space */
		ip = x & 0x00007fffffffffffull;
	else if (k < 80)	/* kernel text */
		ip = 0xffffffff80000000ull | (x & 0x7fffffff);
	else if (k < 90)	/* small */
		ip = (k & 1) ? (x & 0xffff) : (x & 0xffffffff);
	else if (g->o.dialect == RTIT_DIALECT_PT && k < 95)
		ip = x;		/* anything, usually non-canonical */
	else if (g->o.dialect == RTIT_DIALECT_PT)
		/* IP[63:48] of the last IP, the rest random: usually not a
		 * sign-extended 48-bit value, so IPBytes 100b (Table 33-18). */
		ip = (g->lip.ip & 0xffff000000000000ull) | (x & 0x0000ffffffffffffull);
	else
		ip = x & 0x0000ffffffffffffull;
	if (g->o.dialect == RTIT_DIALECT_RTIT)
		ip = sext48(ip);
	if (k < 90)
		g->cur_ip = ip;
	return ip;
}

/* Fills pkt->u.ip for a new IP packet and updates the last IP the way
 * packet/pktdec.c tracks it. */
static void make_ip(struct pktgen *g, struct rtit_packet *pkt,
		    struct pktgen_rec *rec)
{
	uint64_t ip;

	if (g->o.dialect == RTIT_DIALECT_PT &&
	    !(pkt->type == RTIT_PT_TIP_PGE && g->o.pge_has_ip) &&
	    pktgen_rng_chance(&g->rng, g->o.mix == PKTGEN_MIX_REALISTIC ? 1 : 8, 100)) {
		/* Table 33-18 IPBytes 000b: suppressed, LastIP unchanged. */
		pkt->u.ip.ipc = 0;
		pkt->u.ip.payload = 0;
		if (rec)
			rec->ip_status = 1;
		return;
	}
	ip = random_ip(g);
	if (pkt->type == RTIT_R_FUP_BUFFOVF)
		/* RTIT 4.2.5: the valid bits are cleared before the
		 * FUP.BuffOvf is built, and (4.2.3.1, D4) it does not load LAST_LIP. */
		rtit_last_ip_invalidate(&g->lip);
	rtit_last_ip_choose(&g->lip, ip, &pkt->u.ip);
	if (pkt->type != RTIT_R_FUP_BUFFOVF)
		rtit_last_ip_on_ip(&g->lip, ip);
	if (rec) {
		rec->ip_status = 0;
		rec->ip = ip;
	}
}

/* ---- packets ----------------------------------------------------------- */

static uint64_t rnd(struct pktgen *g, unsigned bits)
{
	uint64_t v = pktgen_rng_next(&g->rng);
	return bits >= 64 ? v : v & ((1ull << bits) - 1);
}

/* Fills the fields of a packet of type @t (not IP, not structural). */
static void make_fields(struct pktgen *g, struct rtit_packet *p)
{
	switch (p->type) {
	case RTIT_R_TNT:
		/* Realistic: mostly full TNTs (a CCP follows those). */
		p->u.tnt.nbits = (uint8_t)(g->o.mix == PKTGEN_MIX_REALISTIC &&
					   pktgen_rng_chance(&g->rng, 3, 4)
					   ? 6 : 1 + pktgen_rng_below(&g->rng, 6));
		p->u.tnt.bits = rnd(g, p->u.tnt.nbits);
		break;
	case RTIT_PT_TNT8:
		p->u.tnt.nbits = (uint8_t)(g->o.mix == PKTGEN_MIX_REALISTIC &&
					   pktgen_rng_chance(&g->rng, 3, 4)
					   ? 6 : 1 + pktgen_rng_below(&g->rng, 6));
		p->u.tnt.bits = rnd(g, p->u.tnt.nbits);
		break;
	case RTIT_PT_TNT64:
		p->u.tnt.nbits = (uint8_t)(1 + pktgen_rng_below(&g->rng, 47));
		p->u.tnt.bits = rnd(g, p->u.tnt.nbits);
		break;
	case RTIT_R_PIP:
		p->u.pip.cr3 = rnd(g, 40);
		p->u.pip.pg = pktgen_rng_chance(&g->rng, 1, 2);
		break;
	case RTIT_PT_PIP:
		p->u.pip.cr3 = rnd(g, 52) & ~0x1full;
		p->u.pip.nr = pktgen_rng_chance(&g->rng, 1, 2);
		break;
	case RTIT_R_MTC:
		p->u.mtc.ctc = (uint8_t)rnd(g, 8);
		p->u.mtc.rng = (uint8_t)rnd(g, 2);
		break;
	case RTIT_PT_MTC:
		p->u.mtc.ctc = (uint8_t)rnd(g, 8);
		break;
	case RTIT_R_STS:
		p->u.sts.acbr = (uint8_t)rnd(g, 6);
		p->u.sts.ecbr = (uint8_t)rnd(g, 6);
		p->u.sts.tsc = rnd(g, 40);
		break;
	case RTIT_R_CCP: {
		/* 22-bit value, 1..3 bytes, any length that holds it. */
		unsigned n = 1 + (unsigned)pktgen_rng_below(&g->rng, 3);
		p->u.cyc.value = rnd(g, 6 + 8 * (n - 1));
		if (pktgen_rng_chance(&g->rng, 1, 2))
			p->u.cyc.value >>= pktgen_rng_below(&g->rng, 6 + 8 * (n - 1));
		p->u.cyc.nbytes = (uint8_t)n;
		break;
	}
	case RTIT_PT_CYC: {
		/* Mostly short values; sometimes up to 64 bits (not in the
		 * realistic mix: cycle counts between packets are small). */
		unsigned bits = g->o.mix != PKTGEN_MIX_REALISTIC && pktgen_rng_chance(&g->rng, 1, 8)
			? (unsigned)pktgen_rng_below(&g->rng, 65)
			: (unsigned)pktgen_rng_below(&g->rng, 13);
		unsigned min = 1;
		p->u.cyc.value = rnd(g, bits);
		for (uint64_t v = p->u.cyc.value >> 5; v; v >>= 7)
			min++;
		/* Rarely a non-minimal (zero-padded) form. */
		p->u.cyc.nbytes = (uint8_t)(min < 10 && pktgen_rng_chance(&g->rng, 1, 16)
					    ? min + 1 : min);
		break;
	}
	case RTIT_PT_MODE_EXEC:
		p->u.mode.bits = (uint8_t)rnd(g, 3);
		break;
	case RTIT_PT_MODE_TSX:
		p->u.mode.bits = (uint8_t)rnd(g, 2);
		break;
	case RTIT_PT_CBR:
		p->u.cbr = (uint8_t)rnd(g, 8);
		break;
	case RTIT_PT_TSC:
		p->u.tsc = rnd(g, 56);
		break;
	case RTIT_PT_TMA:
		p->u.tma.ctc = (uint16_t)rnd(g, 16);
		p->u.tma.fc = (uint16_t)rnd(g, 9);
		break;
	case RTIT_PT_VMCS:
		p->u.vmcs = rnd(g, 52) & ~0xfffull;
		break;
	case RTIT_PT_MNT:
		p->u.mnt = rnd(g, 64);
		break;
	case RTIT_PT_PTW:
		p->u.ptw.plsz = (uint8_t)rnd(g, 1);
		p->u.ptw.ip = pktgen_rng_chance(&g->rng, 1, 2);
		p->u.ptw.payload = rnd(g, p->u.ptw.plsz ? 64 : 32);
		break;
	case RTIT_PT_EXSTOP:
	case RTIT_PT_BEP:
		p->u.ip_bit = pktgen_rng_chance(&g->rng, 1, 2);
		break;
	case RTIT_PT_MWAIT:
		p->u.mwait.hints = (uint32_t)rnd(g, pktgen_rng_chance(&g->rng, 1, 2) ? 8 : 32);
		p->u.mwait.ext = (uint32_t)rnd(g, pktgen_rng_chance(&g->rng, 1, 2) ? 2 : 32);
		break;
	case RTIT_PT_PWRE:
		p->u.pwre.state = (uint8_t)rnd(g, 4);
		p->u.pwre.sub_state = (uint8_t)rnd(g, 4);
		p->u.pwre.hw = pktgen_rng_chance(&g->rng, 1, 2);
		break;
	case RTIT_PT_PWRX:
		p->u.pwrx.last = (uint8_t)rnd(g, 4);
		p->u.pwrx.deepest = (uint8_t)rnd(g, 4);
		p->u.pwrx.wake = (uint8_t)rnd(g, 4);
		break;
	case RTIT_PT_BBP:
		p->u.bbp.type = (uint8_t)rnd(g, 5);
		p->u.bbp.sz = pktgen_rng_chance(&g->rng, 1, 2);
		break;
	case RTIT_PT_BIP:
		p->u.bip.id = (uint8_t)rnd(g, 5);
		p->u.bip.value = rnd(g, g->ctx.block_sz4 ? 32 : 64);
		break;
	case RTIT_PT_CFE:
		p->u.cfe.type = (uint8_t)rnd(g, 5);
		p->u.cfe.vector = (uint8_t)rnd(g, 8);
		p->u.cfe.ip = pktgen_rng_chance(&g->rng, 1, 2);
		break;
	case RTIT_PT_EVD:
		p->u.evd.type = (uint8_t)rnd(g, 6);
		p->u.evd.payload = rnd(g, 64);
		break;
	default:	/* no payload */
		break;
	}
}

void pktgen_init(struct pktgen *g, const struct pktgen_opts *o)
{
	memset(g, 0, sizeof(*g));
	g->o = *o;
	if (!g->o.mask)
		g->o.mask = o->dialect == RTIT_DIALECT_PT ? pktgen_pt_all() : pktgen_rtit_all();
	pktgen_rng_seed(&g->rng, o->seed);
	rtit_pkt_ctx_init(&g->ctx, o->dialect, o->cycle_acc);
	rtit_last_ip_init(&g->lip, o->dialect);
	g->cur_ip = o->dialect == RTIT_DIALECT_PT ? 0x00007f0012340000ull : 0x401000ull;
	g->next_psb = 0;
}

/* Packets that may sit in PSB+ (33.3.7: status only, no TNT). */
static enum rtit_pkt_type pick_psbplus(struct pktgen *g)
{
	static const enum rtit_pkt_type t[] = {
		RTIT_PT_TSC, RTIT_PT_TMA, RTIT_PT_CBR, RTIT_PT_MODE_EXEC,
		RTIT_PT_MODE_TSX, RTIT_PT_PIP, RTIT_PT_VMCS, RTIT_PT_FUP,
		RTIT_PT_PAD, RTIT_PT_CYC,
	};
	enum rtit_pkt_type c = t[pktgen_rng_below(&g->rng, sizeof(t) / sizeof(t[0]))];
	return in_mask(g, c) ? c : RTIT_PKT_INVALID;
}

/* Packets a block may hold besides BIP (Table 33-15 allows them). */
static enum rtit_pkt_type pick_in_block(struct pktgen *g)
{
	static const enum rtit_pkt_type t[] = {
		RTIT_PT_PAD, RTIT_PT_CYC, RTIT_PT_MTC, RTIT_PT_TSC, RTIT_PT_CFE,
		RTIT_PT_EVD,
	};
	enum rtit_pkt_type c = t[pktgen_rng_below(&g->rng, sizeof(t) / sizeof(t[0]))];
	return in_mask(g, c) ? c : RTIT_PT_BIP;
}

static enum rtit_pkt_type next_type(struct pktgen *g)
{
	if (g->ctx.expect_ccp)
		return RTIT_R_CCP;
	if (g->in_psbplus) {
		enum rtit_pkt_type t = RTIT_PKT_INVALID;
		while (g->psbplus && t == RTIT_PKT_INVALID) {
			g->psbplus--;
			t = pick_psbplus(g);
		}
		if (t != RTIT_PKT_INVALID)
			return t;
		g->in_psbplus = false;
		if (in_mask(g, RTIT_PT_PSBEND))
			return RTIT_PT_PSBEND;
	}
	if (g->ctx.in_block) {
		if (!g->block_left)
			return RTIT_PT_BEP;
		g->block_left--;
		return pktgen_rng_chance(&g->rng, 3, 4) ? RTIT_PT_BIP : pick_in_block(g);
	}
	if (g->offset >= g->next_psb &&
	    in_mask(g, g->o.dialect == RTIT_DIALECT_PT ? RTIT_PT_PSB : RTIT_R_PSB)) {
		if (!g->o.psb_every)
			g->next_psb = UINT64_MAX;
		else
			g->next_psb = g->offset + g->o.psb_every / 2 +
				pktgen_rng_below(&g->rng, g->o.psb_every);
		if (g->o.dialect == RTIT_DIALECT_RTIT)
			return RTIT_R_PSB;
		g->in_psbplus = true;
		g->psbplus = (unsigned)pktgen_rng_below(&g->rng, 5);
		return RTIT_PT_PSB;
	}
	for (;;) {
		enum rtit_pkt_type t = pick_type(g);
		if (t == RTIT_PKT_INVALID)
			abort();	/* empty mask */
		if (t == RTIT_PT_BBP) {
			if (!in_mask(g, RTIT_PT_BIP) || !in_mask(g, RTIT_PT_BEP))
				continue;
			g->block_left = 1 + (unsigned)pktgen_rng_below(&g->rng, 8);
		}
		return t;
	}
}

size_t pktgen_next(struct pktgen *g, uint8_t *buf, struct pktgen_rec *rec)
{
	struct rtit_packet p;
	int n;

	memset(&p, 0, sizeof(p));
	if (rec)
		memset(rec, 0, sizeof(*rec));
	p.type = next_type(g);
	if (rtit_pkt_has_ip(p.type))
		make_ip(g, &p, rec);
	else
		make_fields(g, &p);
	if (p.type == RTIT_R_PSB || p.type == RTIT_PT_PSB)
		rtit_last_ip_on_psb(&g->lip);

	n = rtit_pkt_encode(&g->ctx, &p, buf, pktgen_max_packet);
	if (n <= 0) {
		char s[160];
		fprintf(stderr, "pktgen: encoder refused %s: %s\n",
			pktgen_pkt_str(&p, s, sizeof(s)), rtit_errstr(n));
		abort();
	}
	p.size = (uint8_t)n;
	rtit_pkt_ctx_on_packet(&g->ctx, &p);
	if (rec) {
		rec->pkt = p;
		rec->offset = g->offset;
	}
	g->offset += (uint64_t)n;
	g->npackets++;
	g->types[p.type]++;
	return (size_t)n;
}

size_t pktgen_fill(struct pktgen *g, uint8_t *buf, size_t cap)
{
	size_t len = 0;

	while (cap - len >= pktgen_max_packet)
		len += pktgen_next(g, buf + len, NULL);
	return len;
}

uint8_t *pktgen_stream(const struct pktgen_opts *o, size_t size, size_t *len,
		       struct pktgen_rec **recs, size_t *nrecs)
{
	struct pktgen g;
	size_t cap = size + pktgen_max_packet, rcap = 0, nr = 0, n = 0;
	uint8_t *buf = malloc(cap);
	struct pktgen_rec *r = NULL;

	if (!buf)
		abort();
	pktgen_init(&g, o);
	while (n < size) {
		struct pktgen_rec rec;
		n += pktgen_next(&g, buf + n, recs ? &rec : NULL);
		if (recs) {
			if (nr == rcap) {
				rcap = rcap ? 2 * rcap : 256;
				r = realloc(r, rcap * sizeof(*r));
				if (!r)
					abort();
			}
			r[nr++] = rec;
		}
	}
	*len = n;
	if (recs) {
		*recs = r;
		*nrecs = nr;
	}
	return buf;
}

/* ---- comparison ---------------------------------------------------------- */

bool pktgen_pkt_equal(const struct rtit_packet *a, const struct rtit_packet *b)
{
	if (a->type != b->type || a->size != b->size)
		return false;
	switch (a->type) {
	case RTIT_R_TNT: case RTIT_PT_TNT8: case RTIT_PT_TNT64:
		return a->u.tnt.nbits == b->u.tnt.nbits && a->u.tnt.bits == b->u.tnt.bits;
	case RTIT_R_TIP: case RTIT_R_FUP_PGE: case RTIT_R_FUP_PGD:
	case RTIT_R_FUP_BUFFOVF: case RTIT_R_FUP_PCC: case RTIT_R_FUP_FAR:
	case RTIT_PT_TIP: case RTIT_PT_TIP_PGE: case RTIT_PT_TIP_PGD: case RTIT_PT_FUP:
		return a->u.ip.ipc == b->u.ip.ipc && a->u.ip.zext == b->u.ip.zext &&
			a->u.ip.payload == b->u.ip.payload;
	case RTIT_R_PIP: case RTIT_PT_PIP:
		return a->u.pip.cr3 == b->u.pip.cr3 && a->u.pip.pg == b->u.pip.pg &&
			a->u.pip.nr == b->u.pip.nr;
	case RTIT_R_MTC: case RTIT_PT_MTC:
		return a->u.mtc.ctc == b->u.mtc.ctc && a->u.mtc.rng == b->u.mtc.rng;
	case RTIT_R_STS:
		return a->u.sts.acbr == b->u.sts.acbr && a->u.sts.ecbr == b->u.sts.ecbr &&
			a->u.sts.tsc == b->u.sts.tsc;
	case RTIT_R_CCP: case RTIT_PT_CYC:
		return a->u.cyc.value == b->u.cyc.value && a->u.cyc.nbytes == b->u.cyc.nbytes;
	case RTIT_PT_MODE_EXEC: case RTIT_PT_MODE_TSX:
		return a->u.mode.bits == b->u.mode.bits;
	case RTIT_PT_CBR:
		return a->u.cbr == b->u.cbr;
	case RTIT_PT_TSC:
		return a->u.tsc == b->u.tsc;
	case RTIT_PT_TMA:
		return a->u.tma.ctc == b->u.tma.ctc && a->u.tma.fc == b->u.tma.fc &&
		       a->u.tma.skz84 == b->u.tma.skz84;
	case RTIT_PT_VMCS:
		return a->u.vmcs == b->u.vmcs;
	case RTIT_PT_MNT:
		return a->u.mnt == b->u.mnt;
	case RTIT_PT_PTW:
		return a->u.ptw.plsz == b->u.ptw.plsz && a->u.ptw.ip == b->u.ptw.ip &&
			a->u.ptw.payload == b->u.ptw.payload;
	case RTIT_PT_EXSTOP: case RTIT_PT_BEP:
		return a->u.ip_bit == b->u.ip_bit;
	case RTIT_PT_MWAIT:
		return a->u.mwait.hints == b->u.mwait.hints && a->u.mwait.ext == b->u.mwait.ext;
	case RTIT_PT_PWRE:
		return a->u.pwre.state == b->u.pwre.state &&
			a->u.pwre.sub_state == b->u.pwre.sub_state && a->u.pwre.hw == b->u.pwre.hw;
	case RTIT_PT_PWRX:
		return a->u.pwrx.last == b->u.pwrx.last && a->u.pwrx.deepest == b->u.pwrx.deepest &&
			a->u.pwrx.wake == b->u.pwrx.wake;
	case RTIT_PT_BBP:
		return a->u.bbp.type == b->u.bbp.type && a->u.bbp.sz == b->u.bbp.sz;
	case RTIT_PT_BIP:
		return a->u.bip.id == b->u.bip.id && a->u.bip.value == b->u.bip.value;
	case RTIT_PT_CFE:
		return a->u.cfe.type == b->u.cfe.type && a->u.cfe.vector == b->u.cfe.vector &&
			a->u.cfe.ip == b->u.cfe.ip;
	case RTIT_PT_EVD:
		return a->u.evd.type == b->u.evd.type && a->u.evd.payload == b->u.evd.payload;
	default:
		return true;
	}
}

const char *pktgen_pkt_str(const struct rtit_packet *p, char *buf, size_t cap)
{
	uint64_t w[3] = { 0, 0, 0 };

	memcpy(w, &p->u, sizeof(p->u) < sizeof(w) ? sizeof(p->u) : sizeof(w));
	snprintf(buf, cap, "%s(type %d size %u u=%016" PRIx64 " %016" PRIx64 " %016" PRIx64 ")",
		 rtit_pkt_name(p->type), (int)p->type, p->size, w[0], w[1], w[2]);
	return buf;
}
