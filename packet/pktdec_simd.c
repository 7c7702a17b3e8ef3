/*
 * pktdec_simd.c - the streaming decoder's vector path (AVX-512 VBMI,
 * chosen at run time): the same packets, fields and IPs as the fast path's
 * rows (pktdec_fast.c, struct rtit_pktdec_fast), decoded in two passes
 * over a chunk of the buffer instead of one packet after the other (D64).
 *
 * Pass 1 (boundaries), per 64-byte block of the chunk, no branch on the
 * bytes: each position's packet size if a packet started there, from the
 * first byte (and, Intel PT, the second: 0x02 and MODE packets), the same
 * sizes as the rows; a size of 0 (a packet the rows leave out: PSB,
 * FUP.BuffOvf, reserved encodings, rare packets) makes the position a stop.
 * next[i] = i + size[i] is a function on the block's 64 positions (a stop
 * maps to itself; a position past the block is final), so its powers
 * F_k = next^(2^k) come from 6 byte permutes (F_{k+1} = F_k o F_k), and
 * the packet starts from an entry e, P[n] = next^n(e) for n = 0..63, from
 * 6 more (lane n applies F_k where bit k of n is set).  The block's exit,
 * F_6[e], is the only thing a block passes to the next (its entry), so the
 * blocks' permutes overlap; the chain is one byte load a block.
 *
 * Pass 2 (items), per packet, no branch on its type: the row's item
 * template (type, size, the constant fields, ip_status), the payload word
 * rotated and masked into the union's two words, the offset and raw
 * pointer, the IP and the last IP, built in one 64-byte register and
 * stored at once.  The IP chain (Table 18, Table 33-18) runs in a register
 * that holds the last IP in every word: one ternary op a packet.  Intel PT
 * Long TNTs are listed and their fields put right after the loop
 * (tnt_fix()); neutral packets the rows leave out go to the general
 * decoder between two runs of the loop (general_item()).
 *
 * Used only where the rows alone decide: outside RTIT's CCP context
 * (cycle-accurate streams take the scalar fast path, 4.2.15), outside
 * Intel PT blocks, with the last IP known or not tracked, in chunks that
 * leave 16 bytes after the last block; everything else is the scalar fast
 * path's and the general decoder's, as before.
 * tests/unit/test_pktdec_batch.c compares it with both.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "pktdec_fast.h"
#include "rtit/bits.h"
#include "rtit/opcodes_pt.h"
#include "rtit/opcodes_rtit.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HAVE_SIMD 1
#include <immintrin.h>
#else
#define HAVE_SIMD 0
#endif

/* Rows: [table][byte], 64 bytes each, so a row's offset is row << 6 and
 * fits 16 bits (rtit_pktdec_fast_tabs * 256 * 64 = 49152). */
enum { nrows = rtit_pktdec_fast_tabs * 256 };

/*
 * The vector path's tables for one dialect (no CCP context), derived from
 * the fast path's rows at first use and shared by every decoder.
 */
struct rtit_pktdec_simd {
	/* Pass 1: the size of the packet a position starts (0: stop). */
	uint8_t size0[256] __attribute__((aligned(64)));	/* by first byte; PT:
								 * 0x80 | table for 0x02, MODE */
	uint8_t size1[256] __attribute__((aligned(64)));	/* PT: by the byte after 0x02 */
	uint8_t size2[256] __attribute__((aligned(64)));	/* PT: by the byte after MODE */
	uint8_t slow0[256] __attribute__((aligned(64)));	/* bits of byte 1 that stop (row slow_if) */
	/* Pass 2, per row, in the item's layout (8 words: pkt head, union
	 * bytes 0-7, 8-15, offset, raw, ip, last_ip, ip_status+valid): */
	uint64_t tmpl[nrows][8] __attribute__((aligned(64)));	/* the constant words */
	uint64_t mask[nrows][8] __attribute__((aligned(64)));	/* what each word takes of its source */
};

static struct rtit_pktdec_simd tabs[2];	/* [dialect] */
static bool simd_ok;
static pthread_once_t once = PTHREAD_ONCE_INIT;

enum {
	size_second = 0x80,	/* size0: the second byte names the packet */
	size_general = 0x40,	/* a neutral packet for the general decoder */
	size_bits = 0x1f,
	row_general = 1,	/* pos/row arrays: the flag in a row's low bits */
	tnt_flag_shl = 8,	/* tmpl word 6: lo_rot | tnt_msb << 8 */
};

#if HAVE_SIMD
/*
 * The size of the packet row @r leaves to the general decoder, when that
 * packet is neutral (no IP, not a PSB, not a BBP: it leaves the last IP
 * and the block state alone) and its bytes after the first (or, Intel PT,
 * the first two) do not change its size: probed once with the rest zero.
 * Pass 2 decodes such a packet with rtit_pkt_decode() and stops before it
 * when the real bytes decode otherwise (an error, another size), so the
 * probe decides the speed only, never the result.  0: a stop.
 */
static uint8_t general_size(enum rtit_dialect dl, unsigned r)
{
	uint8_t bytes[32] = { 0 };
	struct rtit_pkt_ctx ctx;
	struct rtit_packet pkt;
	unsigned n = 0;
	int ret;

	if (r >= 256)	/* PT: the first byte that names table r / 256 */
		bytes[n++] = r / 256 == 1 ? rtit_pt_ext : rtit_pt_mode;
	bytes[n] = (uint8_t)r;
	rtit_pkt_ctx_init(&ctx, dl, false);
	ret = rtit_pkt_decode(&ctx, bytes, sizeof(bytes), &pkt, NULL);
	if (ret <= (int)n || ret > rtit_pktdec_max_packet || !rtit_pktdec_neutral(pkt.type))
		return 0;
	return (uint8_t)ret;
}

static void build(struct rtit_pktdec_simd *s, enum rtit_dialect dl)
{
	static struct rtit_pktdec_fast tab[rtit_pktdec_fast_tabs][256];
	static uint8_t size[rtit_pktdec_fast_tabs][256];
	const uint64_t lip_mask = dl == RTIT_DIALECT_RTIT ? rtit_mask(rtit_r_lip_bits) : ~0ull;

	rtit_pktdec_fast_build(tab, size, dl, false);
	for (unsigned b = 0; b < 256; b++) {
		s->size0[b] = size[0][b];
		if (tab[0][b].second)
			s->size0[b] = (uint8_t)(size_second | tab[0][b].second);
		s->size1[b] = size[1][b];
		s->size2[b] = size[2][b];
		s->slow0[b] = tab[0][b].slow_if;
	}
	/* Rows left to the general decoder: neutral packets of a known size
	 * are decoded between pass 2's loops (size_general), the rest stop. */
	for (unsigned r = 0; r < nrows; r++) {
		uint8_t *sz = r < 256 ? &s->size0[r] : r < 512 ? &s->size1[r % 256] : &s->size2[r % 256];

		if (*sz || (r < 256 && tab[0][r].second) || (r >= 256 && dl != RTIT_DIALECT_PT))
			continue;
		*sz = general_size(dl, r);
		if (*sz)
			*sz |= size_general;
	}
	for (unsigned r = 0; r < nrows; r++) {
		const struct rtit_pktdec_fast *e = &tab[r / 256][r % 256];
		uint64_t *t = s->tmpl[r], *m = s->mask[r];

		t[0] = e->head;
		t[1] = e->lo_const;
		t[2] = e->hi_const;
		/* status_store() with the last IP known: valid & is_ip. */
		t[7] = (uint32_t)(int32_t)e->ip_status | (uint64_t)e->is_ip << 32;
		/* Words 3-5, which the template's load leaves out: the IP
		 * rule (pktdec.h) for pass 2's IP chain. */
		t[3] = e->hi_mask & e->ip_load;		/* the payload's IP bits */
		t[4] = e->sext_shl;
		t[5] = e->ip_keep;
		/* lo_rot (the union's first word, a rotation mod 64) and
		 * the Intel PT Long TNT flag. */
		t[6] = e->lo_rot | (uint64_t)e->tnt_msb << tnt_flag_shl;
		m[1] = rtit_rotl64(e->lo_mask, e->lo_rot);	/* rotl(w & m) = rotl(w) & rotl(m) */
		m[2] = e->hi_mask;
		m[3] = m[4] = 0xffff;				/* offset, raw: pos[] */
		m[5] = e->ip_load;				/* it->ip */
		m[6] = e->is_ip ? lip_mask : 0;			/* it->last_ip */
	}
}

#define TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi,bmi2,popcnt")))
#endif

static void init_once(void)
{
#if HAVE_SIMD
	__builtin_cpu_init();
	simd_ok = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
		  __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vbmi");
	if (!simd_ok)
		return;
	build(&tabs[RTIT_DIALECT_RTIT], RTIT_DIALECT_RTIT);
	build(&tabs[RTIT_DIALECT_PT], RTIT_DIALECT_PT);
#endif
}

const struct rtit_pktdec_simd *rtit_pktdec_simd_tables(enum rtit_dialect dl, bool cycle_acc)
{
	pthread_once(&once, init_once);
	if (!simd_ok || cycle_acc || (unsigned)dl > RTIT_DIALECT_PT)
		return NULL;
	return &tabs[dl];
}

#if HAVE_SIMD

/* A chunk: at most this many packets, so positions fit 16 bits. */
enum { chunk = 256, block = 64, margin = rtit_pktdec_max_packet };

/* rh's 16-bit lanes (table in bits 1:0, the general flag in bit 2) to
 * table << 14 | flag. */
static inline TARGET __m512i rh_word(__m512i x)
{
	return _mm512_or_si512(_mm512_slli_epi16(x, 14), _mm512_srli_epi16(x, 2));
}

/* t[x] for a 256-byte table @t (4 registers) and each byte x. */
static inline TARGET __m512i lut256(const uint8_t *t, __m512i x)
{
	const __m512i lo = _mm512_permutex2var_epi8(_mm512_load_si512(t), x,
						    _mm512_load_si512(t + 64));
	const __m512i hi = _mm512_permutex2var_epi8(_mm512_load_si512(t + 128), x,
						    _mm512_load_si512(t + 192));

	return _mm512_mask_blend_epi8(_mm512_movepi8_mask(x), lo, hi);
}

/*
 * Pass 1 over the chunk at @cb (@avail bytes): the starts of up to @want
 * packets (at least, unless a stop or the chunk's end comes first) into
 * @pos (chunk offsets) and their rows into @row (row << 6); pos[returned]
 * is where the next packet starts (a stop, or the first after the chunk).
 */
static inline TARGET size_t boundaries(const struct rtit_pktdec_simd *s, bool pt,
				       const uint8_t *cb, size_t avail, size_t want,
				       uint16_t *pos, uint16_t *row)
{
	/* Lanes n with bit k of n set: P's k-th round. */
	static const uint64_t bit_lanes[6] = {
		0xaaaaaaaaaaaaaaaaull, 0xccccccccccccccccull, 0xf0f0f0f0f0f0f0f0ull,
		0xff00ff00ff00ff00ull, 0xffff0000ffff0000ull, 0xffffffff00000000ull,
	};
	const __m512i iota = _mm512_set_epi8(63, 62, 61, 60, 59, 58, 57, 56, 55, 54, 53, 52, 51,
		50, 49, 48, 47, 46, 45, 44, 43, 42, 41, 40, 39, 38, 37, 36, 35, 34, 33, 32, 31, 30,
		29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9,
		8, 7, 6, 5, 4, 3, 2, 1, 0);
	/* Positions past the block (64..127) map to themselves. */
	const __m512i past = _mm512_add_epi8(iota, _mm512_set1_epi8(block));
	uint8_t t6[block] __attribute__((aligned(64)));
	size_t total = 0, b = 0, nblocks = (avail - block - margin) / block + 1;
	unsigned e = 0, term = 0;

	while (b < nblocks && total < want) {
		const uint8_t *p = cb + b * block;
		const __m512i b0 = _mm512_loadu_si512(p);
		__m512i size, rl, rh, f[7], pk, g, w, gen;
		__mmask64 valid, kgen;
		unsigned count;

		if (pt) {
			const __m512i b1 = _mm512_loadu_si512(p + 1);
			const __m512i s0 = lut256(s->size0, b0);
			const __m512i s1 = lut256(s->size1, b1);
			const __m512i s2 = lut256(s->size2, b1);
			const __mmask64 ksec = _mm512_movepi8_mask(s0);
			const __mmask64 kext = _mm512_test_epi8_mask(s0, _mm512_set1_epi8(1));
			const __mmask64 kslow = _mm512_test_epi8_mask(lut256(s->slow0, b0), b1);

			_Static_assert(rtit_pktdec_fast_tabs == 3, "tables 1 and 2: bit 0 says which");
			size = _mm512_mask_blend_epi8(ksec, s0, _mm512_mask_blend_epi8(kext, s2, s1));
			size = _mm512_maskz_mov_epi8(~kslow, size);
			rl = _mm512_mask_blend_epi8(ksec, b0, b1);
			rh = _mm512_maskz_mov_epi8(ksec, _mm512_and_si512(s0, _mm512_set1_epi8(3)));
		} else {
			size = lut256(s->size0, b0);
			rl = b0;
			rh = _mm512_setzero_si512();
		}
		kgen = _mm512_test_epi8_mask(size, _mm512_set1_epi8(size_general));
		size = _mm512_and_si512(size, _mm512_set1_epi8(size_bits));
		f[0] = _mm512_add_epi8(iota, size);
		for (int k = 1; k < 7; k++)
			f[k] = _mm512_permutex2var_epi8(f[k - 1], f[k - 1], past);
		_mm512_store_si512(t6, f[6]);
		pk = _mm512_set1_epi8((char)e);
		for (int k = 0; k < 6; k++)
			pk = _mm512_mask2_permutex2var_epi8(f[k], pk, bit_lanes[k], past);
		g = _mm512_permutex2var_epi8(f[0], pk, past);
		valid = _mm512_cmpneq_epi8_mask(g, pk);
		count = (unsigned)__builtin_popcountll(valid);
		/* Offsets (16 bits) and rows of the starts, lanes 0-63. */
		w = _mm512_set1_epi16((short)(b * block));
		_mm512_storeu_si512(pos + total,
				    _mm512_add_epi16(_mm512_cvtepu8_epi16(_mm512_castsi512_si256(pk)), w));
		_mm512_storeu_si512(pos + total + 32,
				    _mm512_add_epi16(_mm512_cvtepu8_epi16(_mm512_extracti64x4_epi64(pk, 1)), w));
		rl = _mm512_permutexvar_epi8(pk, rl);
		/* rh (table, 0-2) << 8 and the general flag in bit 2, so the
		 * 16-bit row is rh << 14 | rl << 6 | flag. */
		gen = _mm512_maskz_mov_epi8(kgen, _mm512_set1_epi8(4 * row_general));
		rh = _mm512_permutexvar_epi8(pk, _mm512_or_si512(rh, gen));
		_mm512_storeu_si512(row + total, _mm512_or_si512(
			_mm512_slli_epi16(_mm512_cvtepu8_epi16(_mm512_castsi512_si256(rl)), 6),
			rh_word(_mm512_cvtepu8_epi16(_mm512_castsi512_si256(rh)))));
		_mm512_storeu_si512(row + total + 32, _mm512_or_si512(
			_mm512_slli_epi16(_mm512_cvtepu8_epi16(_mm512_extracti64x4_epi64(rl, 1)), 6),
			rh_word(_mm512_cvtepu8_epi16(_mm512_extracti64x4_epi64(rh, 1)))));
		total += count;
		term = t6[e];
		b++;
		if (term < block)
			break;		/* a stop */
		e = term - block;
	}
	pos[total] = (uint16_t)((b - 1) * block + term);
	return total;
}

/*
 * Pass 2: the items of packets @i.. @n of those pass 1 found, with the
 * last IP in *@lastp (held sign-extended, as fast_run()).  Returns where
 * it stopped: @n, a packet for the general decoder (row_general), or a
 * Long TNT without its stop bit (the general decoder's error).
 */
static inline __attribute__((always_inline)) TARGET size_t
items_of(const struct rtit_pktdec *d, const struct rtit_pktdec_simd *s, const bool pt,
	 const bool track, const uint8_t *cb, const uint16_t *pos, const uint16_t *row,
	 size_t i, size_t n, struct rtit_pktdec_item *items, uint64_t *lastp, uint16_t *tnt,
	 size_t *ntnt)
{
	const uint8_t *vt = (const uint8_t *)s->tmpl, *vm = (const uint8_t *)s->mask;
	/* The offset and raw words: the chunk's base plus a packet's position
	 * (each taken from pos[] by the word's mask, 0xffff). */
	const __m512i adj = _mm512_set_epi64(0, 0, 0, (long long)(uintptr_t)cb,
					     (long long)(d->base + d->pos), 0, 0, 0);
	__m512i lastv = _mm512_set1_epi64((long long)*lastp);

	for (; i < n; i++) {
		const unsigned r = row[i];
		const uint8_t *p = cb + pos[i];
		const uint64_t *c = (const uint64_t *)(vt + r);
		__m512i w, t;

		if (__builtin_expect(r & row_general, 0))
			break;
		/* The payload word in every word (a broadcast load). */
		w = _mm512_broadcastq_epi64(_mm_loadl_epi64((const __m128i *)(p + 1)));
		if (pt) {
			/* Long TNTs (4% of a realistic Intel PT stream) are
			 * listed, not branched on, and their fields put right
			 * after the loop (tnt_fix()). */
			tnt[*ntnt] = (uint16_t)i;
			*ntnt += c[6] >> tnt_flag_shl;
		}
		if (track) {
			/* The IP chain (Table 18, Table 33-18) in a register
			 * that holds the last IP in every word: the payload's
			 * IP bits sign-extended, x = sext(f & ipx), and
			 * last = (last & keep) | x, one ternary op a packet;
			 * the item takes last & ip_load (ip) and the last IP
			 * before it & last_mask (last_ip) through the mask. */
			const __m512i sh = _mm512_set1_epi64((long long)c[4]);
			const __m512i x = _mm512_srav_epi64(_mm512_sllv_epi64(
				_mm512_and_si512(w, _mm512_set1_epi64((long long)c[3])), sh), sh);
			const __m512i prev = lastv;

			lastv = _mm512_ternarylogic_epi64(lastv, _mm512_set1_epi64((long long)c[5]), x,
							  0xea);	/* (last & keep) | x */
			w = _mm512_mask_mov_epi64(w, 0x20, lastv);
			w = _mm512_mask_mov_epi64(w, 0x40, prev);
		} else {
			w = _mm512_maskz_mov_epi64(0x07, w);	/* no IP words */
		}
		w = _mm512_mask_broadcastq_epi64(w, 0x18, _mm_loadl_epi64((const __m128i *)(pos + i)));
		/* The union's first word rotated by lo_rot (mod 64); RTIT
		 * without the CCP context has no rotated field. */
		if (pt)
			w = _mm512_mask_rolv_epi64(w, 0x02, w, _mm512_set1_epi64((long long)c[6]));
		t = _mm512_maskz_load_epi64(track ? 0x87 : 0x07, vt + r);
		t = _mm512_ternarylogic_epi64(t, w, _mm512_load_si512(vm + r), 0xf8);	/* t | (w & m) */
		_mm512_storeu_si512(&items[i], _mm512_add_epi64(t, adj));
	}
	*lastp = (uint64_t)_mm_cvtsi128_si64(_mm512_castsi512_si128(lastv));
	return i;
}

/*
 * Long TNT (Table 33-16), as fast_run(): the payload's highest set bit is
 * the stop bit; the count of the bits below it goes to the union's first
 * word (tnt.nbits), those bits to the second.  Pass 2 built the items of
 * the @n Long TNTs listed in @tnt with the row's masks only; this puts
 * their fields right.  Returns the index of the first one without a stop
 * bit (payload 0 or 1: the general decoder's error), or SIZE_MAX.
 */
static size_t tnt_fix(const uint8_t *cb, const uint16_t *pos, const uint16_t *tnt, size_t n,
		      struct rtit_pktdec_item *items)
{
	for (size_t j = 0; j < n; j++) {
		const size_t i = tnt[j];
		const uint64_t pl = rtit_le_load(cb + pos[i] + rtit_pt_ext_opc_size,
						 rtit_pt_pl_tnt64_size);
		const unsigned nb = rtit_msb(pl | 1);
		const uint64_t lo = nb, hi = pl & rtit_mask(nb);

		if (pl < 2)
			return i;
		__builtin_memcpy((uint8_t *)&items[i].pkt.u, &lo, 8);
		__builtin_memcpy((uint8_t *)&items[i].pkt.u + 8, &hi, 8);
	}
	return SIZE_MAX;
}

/* A neutral packet pass 1 took for one of @size bytes (general_size()),
 * by the general decoder, as fast_run() does.  false: it is not that
 * packet (another size, an error): stop before it. */
static bool general_item(const struct rtit_pktdec *d, size_t at, unsigned size,
			 struct rtit_pktdec_item *it)
{
	const int ret = rtit_pkt_decode(&d->ctx, d->buf + at, d->len - at, &it->pkt, NULL);

	if (ret != (int)size || !rtit_pktdec_neutral(it->pkt.type))
		return false;
	it->offset = d->base + at;
	it->raw = d->buf + at;
	it->ip = it->last_ip = 0;
	it->ip_status = 0;
	it->last_ip_valid = false;
	return true;
}

static inline __attribute__((always_inline)) TARGET size_t
run(struct rtit_pktdec *d, struct rtit_pktdec_item *items, size_t cap, const bool pt,
    const bool track)
{
	uint16_t pos[chunk + block + 4], row[chunk + block];	/* pos: read 8 bytes at a time */
	uint16_t tnt[chunk + 1];	/* Intel PT: the Long TNTs' indices (+1: a store past) */
	const uint8_t *cb = d->buf + d->pos;
	const bool rtit = !pt;
	uint64_t last = rtit ? rtit_sext(d->lip.ip, rtit_r_lip_bits) : d->lip.ip;
	size_t total, n, i = 0;

	if (d->len - d->pos < block + margin)
		return 0;
	if (cap > chunk)
		cap = chunk;
	total = boundaries(d->simd, pt, cb, d->len - d->pos, cap, pos, row);
	n = total < cap ? total : cap;
	for (;;) {
		const size_t from = i;
		const uint64_t last0 = last;
		size_t ntnt = 0, bad;

		i = items_of(d, d->simd, pt, track, cb, pos, row, i, n, items, &last, tnt, &ntnt);
		if (pt && ntnt && (bad = tnt_fix(cb, pos, tnt, ntnt, items)) != SIZE_MAX) {
			/* Stop before it: this run again, up to it, so the
			 * items, their Long TNTs and the last IP are those
			 * before it. */
			i = from;
			last = last0;
			n = bad;
			continue;
		}
		if (i == n || !(row[i] & row_general) ||
		    !general_item(d, d->pos + pos[i], pos[i + 1] - pos[i], &items[i]))
			break;
		i++;
	}
	if (track)
		d->lip.ip = last & (rtit ? rtit_mask(rtit_r_lip_bits) : ~0ull);
	d->pos += pos[i];
	return i;
}

static TARGET size_t run_rtit(struct rtit_pktdec *d, struct rtit_pktdec_item *items, size_t cap)
{
	return run(d, items, cap, false, true);
}

static TARGET size_t run_rtit_bare(struct rtit_pktdec *d, struct rtit_pktdec_item *items, size_t cap)
{
	return run(d, items, cap, false, false);
}

static TARGET size_t run_pt(struct rtit_pktdec *d, struct rtit_pktdec_item *items, size_t cap)
{
	return run(d, items, cap, true, true);
}

static TARGET size_t run_pt_bare(struct rtit_pktdec *d, struct rtit_pktdec_item *items, size_t cap)
{
	return run(d, items, cap, true, false);
}

size_t rtit_pktdec_simd_run(struct rtit_pktdec *d, struct rtit_pktdec_item *items, size_t cap)
{
	const bool pt = d->cfg.dialect == RTIT_DIALECT_PT;

	if (d->cfg.no_ip)
		return pt ? run_pt_bare(d, items, cap) : run_rtit_bare(d, items, cap);
	return pt ? run_pt(d, items, cap) : run_rtit(d, items, cap);
}

#else

size_t rtit_pktdec_simd_run(struct rtit_pktdec *d, struct rtit_pktdec_item *items, size_t cap)
{
	(void)d;
	(void)items;
	(void)cap;
	return 0;
}

#endif
