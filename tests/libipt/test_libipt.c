/*
 * test_libipt.c - our Intel PT packet decoder against libipt's (2.0.5).
 *
 * libipt 2.0.5 predates the block and event packets (SDM 33.4.2.26-30):
 * it has no BBP (02 63), BIP, BEP (02 33 / 02 B3), CFE (02 13) or EVD
 * (02 53) and reports them as -pte_bad_opc.  The random streams exclude
 * them (pktgen_pt_libipt()); the exhaustive opcode tests list them as
 * expected disagreements.
 *
 *   random_streams     200 pktgen streams of ~4 KiB (+ realistic mixes):
 *                      pt_pkt_next vs rtit_pkt_decode packet by packet.
 *   first_byte         every first byte, followed by several fills and cut
 *                      at every length: success/error and sizes agree.
 *   ext_two_bytes      every 02 b1 b2, same.
 *   ip_reconstruction  PSB, PSBEND, TIPs: pt_qry_indirect_branch's IP
 *                      equals rtit_pktdec's item.ip (Table 33-18).
 *   ip_events          TIP.PGE / TIP.PGD as ptev_enabled / ptev_disabled.
 *   mutated_streams    valid streams with flipped/replaced bytes or cut
 *                      short, walked by both up to the first error.
 *
 * Disagreements found (each documented at its predicate below):
 *   D1  cut PSB (02 82 followed by fewer than 14 bytes, not the PSB
 *       pattern): libipt says -pte_eos (it checks the length first), we
 *       say RTIT_ERR_BAD_PACKET (we check the bytes we have first).
 *   D2  PWRE HW bit (02 22 80 00: HW set per SDM Table 33-43, byte 2 bit
 *       7; 02 22 08 00: reserved bit 3 set): libipt 2.0.5 reads HW from
 *       bit 3 (pt_pl_pwre_hw_mask = 0x8 in its pt_opcodes.h), so it says
 *       hw=0 for the first and hw=1 for the second.  A libipt bug; the
 *       comparison checks each side against its own bit (diff_pkt).
 *   D3  TMA with reserved bits set (byte 4, or byte 6 bits 7:1; e.g.
 *       02 73 00 00 88 00 00 or 02 73 00 00 00 00 02): libipt says
 *       -pte_bad_packet, we decode (reserved bits ignored).
 *   D4  10-byte CYC (e.g. 07 + eight FF + 01, a value >= 2^61): libipt
 *       says -pte_bad_packet (pt_pkt_read_cyc stops at 9 bytes), we
 *       decode it (bits 63:61 from the 10th byte, higher bits dropped).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <intel-pt.h>

#include "pktgen.h"
#include "rtit/pktdec.h"

/* ---- libipt glue ---------------------------------------------------- */

static struct pt_packet_decoder *ipt_pkt_decoder(const uint8_t *buf, size_t len)
{
	struct pt_config cfg;
	struct pt_packet_decoder *dec;

	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)(uintptr_t)buf;
	cfg.end = (uint8_t *)(uintptr_t)buf + len;
	dec = pt_pkt_alloc_decoder(&cfg);
	cr_assert(dec, "pt_pkt_alloc_decoder");
	cr_assert_eq(pt_pkt_sync_set(dec, 0), 0);
	return dec;
}

/* libipt's decode of the first packet of buf[0..len). */
static int ipt_decode_one(const uint8_t *buf, size_t len, struct pt_packet *pkt)
{
	struct pt_packet_decoder *dec = ipt_pkt_decoder(buf, len);
	int r;

	memset(pkt, 0, sizeof(*pkt));
	r = pt_pkt_next(dec, pkt, sizeof(*pkt));
	pt_pkt_free_decoder(dec);
	return r;
}

static enum pt_packet_type ipt_type(enum rtit_pkt_type t)
{
	switch (t) {
	case RTIT_PT_PAD: return ppt_pad;
	case RTIT_PT_PSB: return ppt_psb;
	case RTIT_PT_PSBEND: return ppt_psbend;
	case RTIT_PT_FUP: return ppt_fup;
	case RTIT_PT_TIP: return ppt_tip;
	case RTIT_PT_TIP_PGE: return ppt_tip_pge;
	case RTIT_PT_TIP_PGD: return ppt_tip_pgd;
	case RTIT_PT_TNT8: return ppt_tnt_8;
	case RTIT_PT_TNT64: return ppt_tnt_64;
	case RTIT_PT_MODE_EXEC: case RTIT_PT_MODE_TSX: return ppt_mode;
	case RTIT_PT_PIP: return ppt_pip;
	case RTIT_PT_VMCS: return ppt_vmcs;
	case RTIT_PT_CBR: return ppt_cbr;
	case RTIT_PT_TSC: return ppt_tsc;
	case RTIT_PT_TMA: return ppt_tma;
	case RTIT_PT_MTC: return ppt_mtc;
	case RTIT_PT_CYC: return ppt_cyc;
	case RTIT_PT_TRACESTOP: return ppt_stop;
	case RTIT_PT_OVF: return ppt_ovf;
	case RTIT_PT_MNT: return ppt_mnt;
	case RTIT_PT_EXSTOP: return ppt_exstop;
	case RTIT_PT_MWAIT: return ppt_mwait;
	case RTIT_PT_PWRE: return ppt_pwre;
	case RTIT_PT_PWRX: return ppt_pwrx;
	case RTIT_PT_PTW: return ppt_ptw;
	default: return ppt_invalid;	/* BBP, BIP, BEP, CFE, EVD: not in 2.0.5 */
	}
}

/* Compares our packet with libipt's, field by field (struct pt_packet
 * names).  Returns NULL when equal, else the first differing field. */
static const char *diff_pkt(const struct rtit_packet *o, const struct pt_packet *t,
			    const uint8_t *raw)
{
	if (ipt_type(o->type) != t->type)
		return "type";
	if (o->size != t->size)
		return "size";
	switch (o->type) {
	case RTIT_PT_TNT8: case RTIT_PT_TNT64:
		/* libipt: bit_size, payload without the stop bit. */
		if (t->payload.tnt.bit_size != o->u.tnt.nbits)
			return "tnt.bit_size";
		if (t->payload.tnt.payload != o->u.tnt.bits)
			return "tnt.payload";
		return NULL;
	case RTIT_PT_FUP: case RTIT_PT_TIP: case RTIT_PT_TIP_PGE: case RTIT_PT_TIP_PGD:
		if ((unsigned)t->payload.ip.ipc != o->u.ip.ipc)
			return "ip.ipc";
		if (t->payload.ip.ip != o->u.ip.payload)
			return "ip.ip";
		return NULL;
	case RTIT_PT_MODE_EXEC:
		/* libipt 2.0.5 knows CS.L and CS.D; IF (bit 2) came later. */
		if (t->payload.mode.leaf != pt_mol_exec)
			return "mode.leaf";
		if (t->payload.mode.bits.exec.csl != (o->u.mode.bits & 1) ||
		    t->payload.mode.bits.exec.csd != ((o->u.mode.bits >> 1) & 1))
			return "mode.bits.exec";
		return NULL;
	case RTIT_PT_MODE_TSX:
		if (t->payload.mode.leaf != pt_mol_tsx)
			return "mode.leaf";
		if (t->payload.mode.bits.tsx.intx != (o->u.mode.bits & 1) ||
		    t->payload.mode.bits.tsx.abrt != ((o->u.mode.bits >> 1) & 1))
			return "mode.bits.tsx";
		return NULL;
	case RTIT_PT_PIP:
		if (t->payload.pip.cr3 != o->u.pip.cr3)
			return "pip.cr3";
		if (t->payload.pip.nr != o->u.pip.nr)
			return "pip.nr";
		return NULL;
	case RTIT_PT_TSC:
		return t->payload.tsc.tsc != o->u.tsc ? "tsc.tsc" : NULL;
	case RTIT_PT_CBR:
		return t->payload.cbr.ratio != o->u.cbr ? "cbr.ratio" : NULL;
	case RTIT_PT_TMA:
		if (t->payload.tma.ctc != o->u.tma.ctc)
			return "tma.ctc";
		return t->payload.tma.fc != o->u.tma.fc ? "tma.fc" : NULL;
	case RTIT_PT_MTC:
		return t->payload.mtc.ctc != o->u.mtc.ctc ? "mtc.ctc" : NULL;
	case RTIT_PT_CYC:
		return t->payload.cyc.value != o->u.cyc.value ? "cyc.value" : NULL;
	case RTIT_PT_VMCS:
		return t->payload.vmcs.base != o->u.vmcs ? "vmcs.base" : NULL;
	case RTIT_PT_MNT:
		return t->payload.mnt.payload != o->u.mnt ? "mnt.payload" : NULL;
	case RTIT_PT_EXSTOP:
		return t->payload.exstop.ip != o->u.ip_bit ? "exstop.ip" : NULL;
	case RTIT_PT_MWAIT:
		if (t->payload.mwait.hints != o->u.mwait.hints)
			return "mwait.hints";
		return t->payload.mwait.ext != o->u.mwait.ext ? "mwait.ext" : NULL;
	case RTIT_PT_PWRE:
		if (t->payload.pwre.state != o->u.pwre.state)
			return "pwre.state";
		if (t->payload.pwre.sub_state != o->u.pwre.sub_state)
			return "pwre.sub_state";
		/* D2: libipt 2.0.5 takes HW from byte 2 bit 3
		 * (pt_pl_pwre_hw_mask = 0x8); Table 33-43 puts HW in byte 2
		 * bit 7, as we do.  Each side is checked against its bit. */
		if (o->u.pwre.hw != ((raw[2] >> 7) & 1u))
			return "pwre.hw (ours vs bit 7)";
		return t->payload.pwre.hw != ((raw[2] >> 3) & 1u) ? "pwre.hw (libipt vs bit 3)" : NULL;
	case RTIT_PT_PWRX:
		/* Table 33-44 wake reasons: bit 0 interrupt, bit 1 timer (libipt
		 * 2.0.5 has no field for it), bit 2 store, bit 3 autonomous. */
		if (t->payload.pwrx.last != o->u.pwrx.last)
			return "pwrx.last";
		if (t->payload.pwrx.deepest != o->u.pwrx.deepest)
			return "pwrx.deepest";
		if (t->payload.pwrx.interrupt != (o->u.pwrx.wake & 1u))
			return "pwrx.interrupt";
		if (t->payload.pwrx.store != ((o->u.pwrx.wake >> 2) & 1u))
			return "pwrx.store";
		return t->payload.pwrx.autonomous != ((o->u.pwrx.wake >> 3) & 1u)
			? "pwrx.autonomous" : NULL;
	case RTIT_PT_PTW:
		if (t->payload.ptw.plc != o->u.ptw.plsz)
			return "ptw.plc";
		if (t->payload.ptw.ip != o->u.ptw.ip)
			return "ptw.ip";
		return t->payload.ptw.payload != o->u.ptw.payload ? "ptw.payload" : NULL;
	default:
		return NULL;	/* no payload */
	}
}

static int ours_decode(const uint8_t *buf, size_t len, struct rtit_packet *pkt)
{
	struct rtit_pkt_ctx ctx;

	rtit_pkt_ctx_init(&ctx, RTIT_DIALECT_PT, false);
	memset(pkt, 0, sizeof(*pkt));
	return rtit_pkt_decode(&ctx, buf, len, pkt, NULL);
}

static int map_err(int ours)
{
	switch (-ours) {
	case RTIT_ERR_EOS: return -pte_eos;
	case RTIT_ERR_BAD_OPC: return -pte_bad_opc;
	case RTIT_ERR_BAD_PACKET: return -pte_bad_packet;
	default: return -pte_internal;
	}
}

static void hex(const uint8_t *b, size_t n, char *out, size_t cap)
{
	size_t k = 0;
	out[0] = 0;
	for (size_t i = 0; i < n && k + 4 < cap; i++)
		k += (size_t)snprintf(out + k, cap - k, "%02x ", b[i]);
}

/* Disagreements the SDM or libipt's age explain (see the file comment).
 * known_disagreement() returns the index of the one that explains @buf
 * (@len bytes), our result @a and libipt's @b, or -1. */
static const char *const known_names[] = {
	"block/event packet unknown to libipt 2.0.5 (BBP/BEP/CFE/EVD)",
	"D1: cut PSB with broken pattern: libipt EOS, ours BAD_PACKET",
	"D3: TMA with reserved bits set (byte 4, byte 6 bits 7:1): libipt BAD_PACKET, ours decodes",
	"D4: 10-byte CYC (value >= 2^61): libipt BAD_PACKET, ours decodes",
};
enum { nknown = sizeof(known_names) / sizeof(known_names[0]) };

static int known_disagreement(const uint8_t *buf, size_t len, int a, int b)
{
	if (len >= 2 && buf[0] == 0x02) {
		uint8_t b1 = buf[1];
		/* Not in libipt 2.0.5: BBP, BEP, CFE, EVD (see top). */
		if (b == -pte_bad_opc && (b1 == 0x63 || b1 == 0x33 || b1 == 0xb3 ||
					  b1 == 0x13 || b1 == 0x53))
			return 0;
		/* D1: PSB cut short with a broken pattern: libipt checks the
		 * length before the bytes (Table 33-36 gives no order). */
		if (b1 == 0x82 && len < 16 && a == -RTIT_ERR_BAD_PACKET && b == -pte_eos)
			return 1;
		/* D3: Table 33-32 leaves TMA byte 4 and byte 6 bits 7:1
		 * reserved; libipt 2.0.5 rejects a TMA with any of them set,
		 * we ignore them. */
		if (b1 == 0x73 && len >= 7 && a == 7 && b == -pte_bad_packet &&
		    (buf[4] || (buf[6] & 0xfe)))
			return 2;
	}
	/* D4: Table 33-33 CYC: libipt's pt_pkt_read_cyc fails once the value
	 * would pass 64 bits counting the whole 10th byte (shl 68 > 64), so
	 * it tops out at 9 bytes (61 bits); we accept a 10th byte (bits
	 * 63:61, the rest dropped). */
	if ((buf[0] & 3) == 3 && a == 10 && b == -pte_bad_packet)
		return 3;
	return -1;
}

/* ---- random streams ------------------------------------------------------ */

static void cross_check_stream(const uint8_t *buf, size_t len, uint64_t seed,
			       unsigned *nknown_seen)
{
	struct pt_packet_decoder *dec = ipt_pkt_decoder(buf, len);
	struct rtit_pkt_ctx ctx;
	size_t off = 0;
	unsigned npk = 0;

	rtit_pkt_ctx_init(&ctx, RTIT_DIALECT_PT, false);
	while (off < len) {
		struct rtit_packet o;
		struct pt_packet t;
		uint64_t toff = 0;
		int a, b;
		const char *d;
		char h[64], s[160];

		memset(&t, 0, sizeof(t));
		cr_assert_eq(pt_pkt_get_offset(dec, &toff), 0);
		cr_assert_eq(toff, off, "seed %" PRIu64 ": libipt at %" PRIu64 ", we at %zu", seed, toff, off);
		a = rtit_pkt_decode(&ctx, buf + off, len - off, &o, NULL);
		b = pt_pkt_next(dec, &t, sizeof(t));
		hex(buf + off, len - off < 16 ? len - off : 16, h, sizeof(h));
		cr_assert(a > 0, "seed %" PRIu64 " offset %zu: we fail %s on a generated stream [%s]",
			  seed, off, rtit_errstr(a), h);
		if (b < 0 && known_disagreement(buf + off, len - off, a, b) >= 0) {
			/* Documented (D4); libipt stays put: move it on. */
			(*nknown_seen)++;
			cr_assert_eq(pt_pkt_sync_set(dec, off + (size_t)a), 0);
			rtit_pkt_ctx_on_packet(&ctx, &o);
			off += (size_t)a;
			continue;
		}
		cr_assert(b > 0, "seed %" PRIu64 " offset %zu: libipt fails %s on %s [%s]",
			  seed, off, pt_errstr(pt_errcode(b)), pktgen_pkt_str(&o, s, sizeof(s)), h);
		d = diff_pkt(&o, &t, buf + off);
		cr_assert(!d, "seed %" PRIu64 " offset %zu: %s differs on %s [%s]", seed, off, d,
			  pktgen_pkt_str(&o, s, sizeof(s)), h);
		rtit_pkt_ctx_on_packet(&ctx, &o);
		off += (size_t)a;
		npk++;
	}
	cr_assert(npk > 10);
	pt_pkt_free_decoder(dec);
}

Test(libipt, random_streams)
{
	uint64_t kinds = 0;
	unsigned nknown_seen = 0;

	for (uint64_t seed = 1; seed <= 240; seed++) {
		struct pktgen_opts o = {
			.dialect = RTIT_DIALECT_PT,
			.mask = pktgen_pt_libipt(),
			.psb_every = seed % 5 ? 256 * (seed % 16 + 1) : 0,
			.mix = seed > 200 ? PKTGEN_MIX_REALISTIC : PKTGEN_MIX_UNIFORM,
			.seed = 0x1b7 + seed,
		};
		struct pktgen_rec *recs;
		size_t len, n;
		uint8_t *buf = pktgen_stream(&o, 4096, &len, &recs, &n);

		for (size_t i = 0; i < n; i++)
			kinds |= PKTGEN_BIT(recs[i].pkt.type);
		cross_check_stream(buf, len, o.seed, &nknown_seen);
		free(buf);
		free(recs);
	}
	cr_log_info("random streams: %u packets skipped as documented disagreements", nknown_seen);
	/* Every kind libipt knows was exercised. */
	cr_assert_eq(kinds, pktgen_pt_libipt(), "kinds %#" PRIx64 " want %#" PRIx64,
		     kinds, pktgen_pt_libipt());
}

/* ---- exhaustive opcodes ------------------------------------------------------ */

struct tally {
	unsigned cases, agree, known, bad;
	unsigned per_known[nknown];
	char first_bad[8][200];
};

/* Files one comparison: our result @a (@o) and libipt's @b (@t) on @buf
 * (@len bytes).  Returns true when both agree. */
static bool tally_outcome(const uint8_t *buf, size_t len, int a, const struct rtit_packet *op,
			  int b, const struct pt_packet *tp, struct tally *ty)
{
	const struct rtit_packet o = *op;
	const struct pt_packet t = *tp;
	bool same;
	const char *why = NULL;

	ty->cases++;
	if (a > 0 && b > 0)
		same = !(why = diff_pkt(&o, &t, buf));
	else if (a < 0 && b < 0)
		same = map_err(a) == b;
	else
		same = false;
	if (same) {
		ty->agree++;
		return true;
	}
	{
		int k = known_disagreement(buf, len, a, b);
		if (k >= 0) {
			ty->known++;
			ty->per_known[k]++;
			return false;
		}
	}
	if (ty->bad < 8) {
		char h[64], s[160], tb[48];
		hex(buf, len < 16 ? len : 16, h, sizeof(h));
		if (b > 0)
			snprintf(tb, sizeof(tb), "ppt %d size %u", (int)t.type, t.size);
		else
			snprintf(tb, sizeof(tb), "%s", pt_errstr(pt_errcode(b)));
		snprintf(ty->first_bad[ty->bad], sizeof(ty->first_bad[0]),
			 "[%s] len %zu: ours %s (%s), libipt %s", h, len,
			 a > 0 ? pktgen_pkt_str(&o, s, sizeof(s)) : rtit_errstr(a),
			 why ? why : "-", tb);
	}
	ty->bad++;
	return false;
}

static void compare_one(const uint8_t *buf, size_t len, struct tally *ty)
{
	struct rtit_packet o;
	struct pt_packet t;
	int a = ours_decode(buf, len, &o);
	int b = ipt_decode_one(buf, len, &t);

	tally_outcome(buf, len, a, &o, b, &t, ty);
}

/* Tries @prefix (plen bytes) with several fills, whole and cut at every
 * length from 1 to 17. */
static void compare_prefix(const uint8_t *prefix, size_t plen, struct pktgen_rng *r,
			   struct tally *ty)
{
	uint8_t buf[24];

	for (int fill = 0; fill < 5; fill++) {
		memcpy(buf, prefix, plen);
		for (size_t i = plen; i < sizeof(buf); i++) {
			switch (fill) {
			case 0: buf[i] = 0; break;
			case 1: buf[i] = 0xff; break;
			/* Continue the PSB pattern, so a whole PSB is tried. */
			case 2: buf[i] = (i & 1) ? 0x82 : 0x02; break;
			default: buf[i] = (uint8_t)pktgen_rng_next(r); break;
			}
		}
		compare_one(buf, sizeof(buf), ty);
		if (fill < 3)
			for (size_t len = plen; len <= 17; len++)
				compare_one(buf, len, ty);
	}
}

static void report(const char *what, const struct tally *ty)
{
	cr_log_info("%s: %u cases, %u agree, %u known disagreements, %u unexplained",
		    what, ty->cases, ty->agree, ty->known, ty->bad);
	for (int k = 0; k < nknown; k++)
		if (ty->per_known[k])
			cr_log_info("%s: %u x %s", what, ty->per_known[k], known_names[k]);
	for (unsigned i = 0; i < ty->bad && i < 8; i++)
		cr_log_error("%s: %s", what, ty->first_bad[i]);
	cr_assert_eq(ty->bad, 0, "%s: %u unexplained disagreements with libipt (first: %s)",
		     what, ty->bad, ty->first_bad[0]);
}

Test(libipt, first_byte)
{
	static struct tally ty;
	struct pktgen_rng r;

	pktgen_rng_seed(&r, 0xb0);
	for (unsigned b0 = 0; b0 < 256; b0++) {
		uint8_t p[1] = { (uint8_t)b0 };
		compare_prefix(p, 1, &r, &ty);
	}
	report("first byte", &ty);
}

Test(libipt, ext_two_bytes)
{
	static struct tally ty;
	struct pktgen_rng r;

	pktgen_rng_seed(&r, 0x02);
	for (unsigned b1 = 0; b1 < 256; b1++) {
		for (unsigned b2 = 0; b2 < 256; b2++) {
			uint8_t p[3] = { 0x02, (uint8_t)b1, (uint8_t)b2 };
			uint8_t buf[24];

			/* Cheaper than compare_prefix: 3 fills, cuts at 2..3
			 * bytes and at every length only for b2 == 0. */
			if (b2 == 0) {
				compare_prefix(p, 3, &r, &ty);
				continue;
			}
			for (int fill = 0; fill < 3; fill++) {
				memcpy(buf, p, 3);
				for (size_t i = 3; i < sizeof(buf); i++)
					buf[i] = fill == 0 ? 0 : fill == 1 ? 0xff
						: (uint8_t)pktgen_rng_next(&r);
				compare_one(buf, sizeof(buf), &ty);
			}
			compare_one(p, 3, &ty);
		}
	}
	report("02 b1 b2", &ty);
}

/* Valid streams with a few bytes flipped or replaced, or cut: both decoders
 * walk them packet by packet up to the first error or disagreement, which
 * must be the same error or a documented disagreement. */
Test(libipt, mutated_streams)
{
	static struct tally ty;
	struct pktgen_rng r;
	unsigned walked = 0;

	pktgen_rng_seed(&r, 0x3a7);
	for (uint64_t seed = 1; seed <= 400; seed++) {
		struct pktgen_opts o = {
			.dialect = RTIT_DIALECT_PT,
			.mask = pktgen_pt_libipt(),
			.psb_every = 512,
			.mix = seed & 1 ? PKTGEN_MIX_REALISTIC : PKTGEN_MIX_UNIFORM,
			.seed = 0x77 + seed,
		};
		size_t len, off = 0;
		uint8_t *buf = pktgen_stream(&o, 1024, &len, NULL, NULL);
		int nmut = 1 + (int)pktgen_rng_below(&r, 4);
		struct pt_packet_decoder *dec;
		struct rtit_pkt_ctx ctx;

		for (int m = 0; m < nmut; m++) {
			size_t at = (size_t)pktgen_rng_below(&r, len);
			switch (pktgen_rng_below(&r, 3)) {
			case 0: buf[at] ^= (uint8_t)(1u << pktgen_rng_below(&r, 8)); break;
			case 1: buf[at] = (uint8_t)pktgen_rng_next(&r); break;
			default: len = at > 0 ? at : 1; break;
			}
		}
		dec = ipt_pkt_decoder(buf, len);
		rtit_pkt_ctx_init(&ctx, RTIT_DIALECT_PT, false);
		while (off < len) {
			struct rtit_packet op;
			struct pt_packet tp;
			int a, b;

			memset(&op, 0, sizeof(op));
			memset(&tp, 0, sizeof(tp));
			a = rtit_pkt_decode(&ctx, buf + off, len - off, &op, NULL);
			b = pt_pkt_next(dec, &tp, sizeof(tp));
			if (!tally_outcome(buf + off, len - off, a, &op, b, &tp, &ty) || a < 0)
				break;
			rtit_pkt_ctx_on_packet(&ctx, &op);
			off += (size_t)a;
			walked++;
		}
		pt_pkt_free_decoder(dec);
		free(buf);
	}
	cr_log_info("mutated streams: %u packets walked", walked);
	report("mutated streams", &ty);
}

/* ---- IP reconstruction through the query decoder --------------------------- */

static struct pt_query_decoder *ipt_qry_decoder(const uint8_t *buf, size_t len)
{
	struct pt_config cfg;
	struct pt_query_decoder *q;

	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)(uintptr_t)buf;
	cfg.end = (uint8_t *)(uintptr_t)buf + len;
	q = pt_qry_alloc_decoder(&cfg);
	cr_assert(q, "pt_qry_alloc_decoder");
	return q;
}

/*
 * Table 33-18 (IPBytes): 000b suppressed, 001b update IP[15:0] from the
 * last IP, 010b update [31:0], 011b sign-extend IP[47:0], 100b update
 * [47:0], 110b full 64 bits.  33.4.2.2: LastIP is 0 after a PSB.
 * The stream is generated by pktgen (our chooser, rtit_last_ip_choose,
 * plus forced forms: see check_ipc_coverage) and decoded by rtit_pktdec;
 * every TIP (and with @events, TIP.PGE / TIP.PGD) must give libipt's IP.
 */
static void ip_stream(uint64_t seed, bool events, unsigned *ipc_seen, unsigned *nevents)
{
	struct pktgen_opts o = {
		.dialect = RTIT_DIALECT_PT,
		.mask = PKTGEN_BIT(RTIT_PT_PSB) | PKTGEN_BIT(RTIT_PT_PSBEND) |
			PKTGEN_BIT(RTIT_PT_TIP) |
			(events ? PKTGEN_BIT(RTIT_PT_TIP_PGE) | PKTGEN_BIT(RTIT_PT_TIP_PGD) : 0),
		.psb_every = seed % 3 ? 1024 : 0,
		.mix = seed & 1 ? PKTGEN_MIX_REALISTIC : PKTGEN_MIX_UNIFORM,
		.seed = 0x1f + seed,
		.pge_has_ip = true,
	};
	struct pktgen_rec *recs;
	size_t len, n, k = 0;
	uint8_t *buf = pktgen_stream(&o, 4096, &len, &recs, &n);
	static struct rtit_pktdec d;
	struct rtit_pktdec_cfg cfg = { .dialect = RTIT_DIALECT_PT, .mem = buf, .mem_len = len };
	struct rtit_pktdec_item it;
	struct pt_query_decoder *q = ipt_qry_decoder(buf, len);
	uint64_t ip = 0;
	int st, r;

	cr_assert_eq(rtit_pktdec_init(&d, &cfg), 0);
	st = pt_qry_sync_forward(q, &ip);
	cr_assert(st >= 0, "seed %" PRIu64 ": pt_qry_sync_forward: %s", seed, pt_errstr(pt_errcode(st)));
	while ((r = rtit_pktdec_next(&d, &it)) == 1) {
		enum rtit_pkt_type t = it.pkt.type;
		char h[64];

		cr_assert(k < n && it.offset == recs[k].offset);
		k++;
		if (!rtit_pkt_has_ip(t))
			continue;
		hex(it.raw, it.pkt.size, h, sizeof(h));
		ipc_seen[it.pkt.u.ip.ipc]++;
		/* Our decoder agrees with the generator ... */
		cr_assert_eq(it.ip_status, recs[k - 1].ip_status);
		if (!it.ip_status)
			cr_assert_eq(it.ip, recs[k - 1].ip);
		/* ... and with libipt. */
		if (t == RTIT_PT_TIP) {
			ip = 0xdeadbeef;
			st = pt_qry_indirect_branch(q, &ip);
			cr_assert(st >= 0, "seed %" PRIu64 " offset %" PRIu64 " [%s]: pt_qry_indirect_branch: %s",
				  seed, it.offset, h, pt_errstr(pt_errcode(st)));
			if (it.ip_status == 1) {
				cr_assert(st & pts_ip_suppressed, "seed %" PRIu64 " offset %" PRIu64
					  ": suppressed for us, not for libipt", seed, it.offset);
			} else {
				cr_assert(!(st & pts_ip_suppressed), "seed %" PRIu64 " offset %" PRIu64
					  " [%s]: libipt says suppressed", seed, it.offset, h);
				cr_assert_eq(ip, it.ip, "seed %" PRIu64 " offset %" PRIu64 " [%s] last %#" PRIx64
					     ": libipt %#" PRIx64 ", ours %#" PRIx64, seed, it.offset, h,
					     it.last_ip, ip, it.ip);
			}
		} else {
			struct pt_event ev;

			cr_assert(st & pts_event_pending, "seed %" PRIu64 " offset %" PRIu64
				  ": libipt has no event pending for %s", seed, it.offset,
				  rtit_pkt_name(t));
			memset(&ev, 0, sizeof(ev));
			(*nevents)++;
			st = pt_qry_event(q, &ev, sizeof(ev));
			cr_assert(st >= 0, "seed %" PRIu64 " offset %" PRIu64 " [%s]: pt_qry_event: %s",
				  seed, it.offset, h, pt_errstr(pt_errcode(st)));
			cr_assert_eq(ev.type, t == RTIT_PT_TIP_PGE ? ptev_enabled : ptev_disabled,
				     "seed %" PRIu64 " offset %" PRIu64 ": event %d for %s", seed,
				     it.offset, (int)ev.type, rtit_pkt_name(t));
			if (it.ip_status == 1) {
				cr_assert(ev.ip_suppressed);
			} else {
				uint64_t eip = t == RTIT_PT_TIP_PGE ? ev.variant.enabled.ip
					: ev.variant.disabled.ip;
				cr_assert(!ev.ip_suppressed);
				cr_assert_eq(eip, it.ip, "seed %" PRIu64 " offset %" PRIu64 " [%s]: %s IP libipt %#"
					     PRIx64 ", ours %#" PRIx64, seed, it.offset, h,
					     rtit_pkt_name(t), eip, it.ip);
			}
		}
	}
	cr_assert_eq(r, 0, "seed %" PRIu64 ": our decoder: %s", seed, rtit_errstr(r));
	cr_assert_eq(k, n);
	pt_qry_free_decoder(q);
	free(buf);
	free(recs);
}

static void check_ipc_coverage(const unsigned *seen, bool events)
{
	/* Every IPBytes form of Table 33-18 was cross-checked. */
	static const uint8_t want[] = { 0, 1, 2, 3, 4, 6 };
	for (size_t i = 0; i < sizeof(want); i++)
		cr_assert(seen[want[i]] > 0, "%s: IPBytes %u never generated",
			  events ? "events" : "TIP", want[i]);
}

Test(libipt, ip_reconstruction)
{
	unsigned seen[8] = { 0 }, nev = 0;

	for (uint64_t seed = 0; seed < 200; seed++)
		ip_stream(seed, false, seen, &nev);
	check_ipc_coverage(seen, false);
	cr_log_info("IPBytes seen: 000b %u 001b %u 010b %u 011b %u 100b %u 110b %u",
		    seen[0], seen[1], seen[2], seen[3], seen[4], seen[6]);
}

Test(libipt, ip_events)
{
	unsigned seen[8] = { 0 }, nev = 0;

	for (uint64_t seed = 0; seed < 200; seed++)
		ip_stream(seed, true, seen, &nev);
	check_ipc_coverage(seen, true);
	cr_assert(nev > 1000, "only %u TIP.PGE/TIP.PGD events", nev);
	cr_log_info("events: %u TIP.PGE/TIP.PGD checked through pt_qry_event", nev);
}
