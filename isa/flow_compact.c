/*
 * flow_compact.c - the compact binary flow's records (flow_compact.h,
 * docs/formats.md, D180): a tag byte, then the fields that differ from
 * their prediction, numbers as LEB128 varints (signed ones zigzag).  A
 * straight-line instruction whose cycles advance as the previous one's
 * did is the tag byte alone.
 */
#include <string.h>

#include "flow_compact.h"
#include "rtit/bits.h"

static inline unsigned slot(uint64_t ip)
{
	return (unsigned)((ip * 0x9e3779b97f4a7c15ull) >> (64 - ISA_FC_TABLE_BITS));
}

static inline uint64_t zigzag(uint64_t d)
{
	return d << 1 ^ (uint64_t)((int64_t)d >> 63);
}

static inline uint64_t unzigzag(uint64_t z)
{
	return z >> 1 ^ (0 - (z & 1));
}

static inline uint8_t *put_varint(uint8_t *o, uint64_t v)
{
	while (v >= 0x80) {
		*o++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*o++ = (uint8_t)v;
	return o;
}

void isa_fc_reset(struct isa_fc_state *s)
{
	memset(s, 0, sizeof(*s));
}

size_t isa_fc_encode(struct isa_fc_state *s, const uint8_t *c, size_t n, uint8_t *out)
{
	uint8_t *o = out;
	uint64_t next_ip = s->next_ip, cycles = s->cycles, dcyc = s->dcyc, tsc = s->tsc;
	for (size_t i = 0; i < n; i++, c += 64) {
		/* the canonical record's fields (rtit_sim_rec_pack) */
		uint64_t ip = rtit_le_load_fast(c, 8, 8), nip = rtit_le_load_fast(c + 8, 8, 8);
		uint64_t cyc = rtit_le_load_fast(c + 24, 8, 8), ts = rtit_le_load_fast(c + 32, 8, 8);
		uint8_t len = c[54], flags = c[55];
		uint32_t kcl = (uint32_t)c[52] | (uint32_t)c[53] << 8 | (uint32_t)len << 16;
		uint8_t *t = o++;
		unsigned tag = 0;
		if (ip != next_ip) {
			tag |= ISA_FC_IP;
			o = put_varint(o, zigzag(ip - next_ip));
		}
		if (nip != ip + len) {
			tag |= ISA_FC_NEXT;
			o = put_varint(o, zigzag(nip - (ip + len)));
		}
		uint32_t *k = &s->kcl[slot(ip)];
		if (*k != kcl) {
			tag |= ISA_FC_KCL;
			*k = kcl;
			o[0] = c[52];
			o[1] = c[53];
			o[2] = len;
			o += 3;
		}
		uint64_t d = cyc - cycles;
		if (d != dcyc) {
			tag |= ISA_FC_CYC;
			o = put_varint(o, zigzag(d - dcyc));
			dcyc = d;
		}
		if (ts != tsc + d) {
			tag |= ISA_FC_TSC;
			o = put_varint(o, zigzag(ts - (tsc + d)));
		}
		if (flags != s->flags) {
			tag |= ISA_FC_FLAGS;
			*o++ = flags;
			s->flags = flags;
		}
		uint64_t cr3 = rtit_le_load_fast(c + 16, 8, 8);
		if (cr3 != s->cr3 || c[56] != s->cpl || c[57] != s->mode) {
			tag |= ISA_FC_CTX;
			o = put_varint(o, cr3);
			*o++ = c[56];
			*o++ = c[57];
			s->cr3 = cr3;
			s->cpl = c[56];
			s->mode = c[57];
		}
		uint64_t value = rtit_le_load_fast(c + 40, 8, 8);
		uint32_t msr = (uint32_t)rtit_le_load_fast(c + 48, 4, 16);
		if (value | msr | c[58]) {
			tag |= ISA_FC_EXTRA;
			*o++ = c[58];
			o = put_varint(o, msr);
			o = put_varint(o, value);
		}
		*t = (uint8_t)tag;
		next_ip = nip;
		cycles = cyc;
		tsc = ts;
	}
	s->next_ip = next_ip;
	s->cycles = cycles;
	s->dcyc = dcyc;
	s->tsc = tsc;
	return (size_t)(o - out);
}

/* A varint at *p (before @e) into *v: false when it ends at @e or takes
 * more than 64 bits. */
static inline bool get_varint(const uint8_t **p, const uint8_t *e, uint64_t *v)
{
	const uint8_t *q = *p;
	uint64_t x = 0;
	for (unsigned sh = 0; q < e; sh += 7) {
		uint8_t b = *q++;
		if (sh == 63 && b > 1)
			return false;
		x |= (uint64_t)(b & 0x7f) << sh;
		if (!(b & 0x80)) {
			*p = q;
			*v = x;
			return true;
		}
		if (sh == 63)
			return false;
	}
	return false;
}

size_t isa_fc_decode(struct isa_fc_state *s, const uint8_t *p, size_t avail,
		     struct rtit_sim_rec *r)
{
	const uint8_t *q = p, *e = p + avail;
	uint64_t v;
	if (q == e)
		return 0;
	unsigned tag = *q++;
	memset(r, 0, sizeof(*r));
	r->ip = s->next_ip;
	if (tag & ISA_FC_IP) {
		if (!get_varint(&q, e, &v))
			return 0;
		r->ip += unzigzag(v);
	}
	uint64_t nip_d = 0;
	if (tag & ISA_FC_NEXT) {
		if (!get_varint(&q, e, &v))
			return 0;
		nip_d = unzigzag(v);
	}
	uint32_t *k = &s->kcl[slot(r->ip)], kcl = *k;
	if (tag & ISA_FC_KCL) {
		if (e - q < 3)
			return 0;
		kcl = (uint32_t)q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16;
		q += 3;
	}
	r->kind = (uint8_t)kcl;
	r->cls = (uint8_t)(kcl >> 8);
	r->len = (uint8_t)(kcl >> 16);
	r->next_ip = r->ip + r->len + nip_d;
	uint64_t dcyc = s->dcyc;
	if (tag & ISA_FC_CYC) {
		if (!get_varint(&q, e, &v))
			return 0;
		dcyc += unzigzag(v);
	}
	r->cycles = s->cycles + dcyc;
	r->tsc = s->tsc + dcyc;
	if (tag & ISA_FC_TSC) {
		if (!get_varint(&q, e, &v))
			return 0;
		r->tsc += unzigzag(v);
	}
	r->flags = s->flags;
	if (tag & ISA_FC_FLAGS) {
		if (q == e)
			return 0;
		r->flags = *q++;
	}
	r->cr3 = s->cr3;
	r->cpl = s->cpl;
	r->mode = s->mode;
	if (tag & ISA_FC_CTX) {
		if (!get_varint(&q, e, &r->cr3) || e - q < 2)
			return 0;
		r->cpl = q[0];
		r->mode = q[1];
		q += 2;
	}
	if (tag & ISA_FC_EXTRA) {
		if (q == e)
			return 0;
		r->vector = *q++;
		if (!get_varint(&q, e, &v) || v > UINT32_MAX)
			return 0;
		r->msr = (uint32_t)v;
		if (!get_varint(&q, e, &r->value))
			return 0;
	}
	/* the record is whole: the state moves on */
	*k = kcl;
	s->next_ip = r->next_ip;
	s->cycles = r->cycles;
	s->dcyc = dcyc;
	s->tsc = r->tsc;
	s->flags = r->flags;
	s->cr3 = r->cr3;
	s->cpl = r->cpl;
	s->mode = r->mode;
	return (size_t)(q - p);
}
