/*
 * record.c - the record format (rtit/record.h): the names of classes and
 * events, and the ground-truth flow: canonical 64-byte records, the binary
 * file (header, records, trailer with the XXH3-64 digest in canonical
 * big-endian form), the text form, and the digest.
 *
 * Binary layout (little-endian):
 *   header  "RTITFLOW" u32 version u32 record_size(64)
 *   records version 1: 64 bytes each: ip next_ip cr3 cycles tsc value
 *           (u64) msr (u32) kind cls len flags cpl mode vector 0 (u8)
 *           0 (u32); version 2: blocks (u32 records, u32 bytes, the
 *           records coded by flow_compact.c)
 *   trailer "RTITEND\0" u64 count, 8 bytes digest (big-endian)
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "rtit/record.h"
#include "flow_compact.h"
#include "record_text.h"

const char *rtit_insn_class_name(int cls)
{
	static const char *const n[RTIT_IC_COUNT] = {
		"other", "cond", "jmp", "call", "jmp-ind", "call-ind", "ret",
		"far-jmp", "far-call", "far-ret", "iret", "int", "syscall",
		"sysret", "sysenter", "sysexit", "mov-cr3", "mov-cr0", "wrmsr",
		"rdmsr", "hlt", "ptwrite", "mwait", "xbegin", "xend", "enclu", "uiret"
	};
	if (cls < 0 || cls >= RTIT_IC_COUNT)
		return "?";
	return n[cls];
}

const char *rtit_sim_event_name(int ev)
{
	static const char *const n[RTIT_EV_COUNT] = {
		"none", "exception", "interrupt", "nmi", "smi", "rsm",
		"vmexit", "vmentry", "freq", "sleep", "wake", "msr-write",
		"tsx-abort", "aex", "init", "sipi", "uintr", "pebs"
	};
	if (ev < 0 || ev >= RTIT_EV_COUNT)
		return "?";
	return n[ev];
}

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

void rtit_sim_rec_pack(const struct rtit_sim_rec *r, uint8_t out[64])
{
	put64(out + 0, r->ip);
	put64(out + 8, r->next_ip);
	put64(out + 16, r->cr3);
	put64(out + 24, r->cycles);
	put64(out + 32, r->tsc);
	put64(out + 40, r->value);
	put32(out + 48, r->msr);
	out[52] = r->kind;
	out[53] = r->cls;
	out[54] = r->len;
	out[55] = r->flags;
	out[56] = r->cpl;
	out[57] = r->mode;
	out[58] = r->vector;
	out[59] = 0;
	put32(out + 60, 0);
}

void isa_rec_unpack(const uint8_t in[64], struct rtit_sim_rec *r)
{
	memset(r, 0, sizeof(*r));
	r->ip = get64(in);
	r->next_ip = get64(in + 8);
	r->cr3 = get64(in + 16);
	r->cycles = get64(in + 24);
	r->tsc = get64(in + 32);
	r->value = get64(in + 40);
	r->msr = get32(in + 48);
	r->kind = in[52];
	r->cls = in[53];
	r->len = in[54];
	r->flags = in[55];
	r->cpl = in[56];
	r->mode = in[57];
	r->vector = in[58];
}

/* The text form's numbers without printf: rtitsim run writes one line an
 * instruction, and printf was most of a long run's time.  Each returns
 * the end of what it wrote. */
static char *put_hex_fixed16(char *p, uint64_t v)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	/* each half's 8 nibbles spread to 8 bytes, digits made 8 at a time
	 * (a nibble above 9 gets 'a' - '0' - 10 more), most significant
	 * first (D138) */
	for (int h = 0; h < 2; h++) {
		uint64_t x = h ? v & 0xffffffffu : v >> 32;
		x = (x | x << 16) & 0x0000ffff0000ffffull;
		x = (x | x << 8) & 0x00ff00ff00ff00ffull;
		x = (x | x << 4) & 0x0f0f0f0f0f0f0f0full;
		uint64_t above9 = ((x + 0x0606060606060606ull) >> 4) & 0x0101010101010101ull;
		x += 0x3030303030303030ull + above9 * ('a' - '0' - 10);
		x = __builtin_bswap64(x);
		memcpy(p + 8 * h, &x, 8);
	}
#else
	static const char hex[] = "0123456789abcdef";
	for (int i = 15; i >= 0; i--, v >>= 4)
		p[i] = hex[v & 0xf];
#endif
	return p + 16;
}

/* @v in hex, as few digits as it takes. */
static char *put_hex(char *p, uint64_t v)
{
	static const char hex[] = "0123456789abcdef";
	int n = v ? (67 - __builtin_clzll(v)) / 4 : 1;
	for (int i = n - 1; i >= 0; i--, v >>= 4)
		p[i] = hex[v & 0xf];
	return p + n;
}

/* @x < 10^8 as its 8 decimal digits (leading zeros included), the first
 * in the lowest byte, without a division: x / 10^4 and x % 10^4 in two
 * 32-bit lanes, each split into two 16-bit lanes by a multiplication (y /
 * 100 = y * 10486 >> 20 for y < 10^4), each of those into two bytes (y /
 * 10 = y * 103 >> 10 for y < 100); no lane's product reaches the next
 * (D186). */
static inline __attribute__((always_inline)) uint64_t dec8_swar(uint32_t x)
{
	uint64_t m = (uint64_t)(x / 10000) | (uint64_t)(x % 10000) << 32;
	uint64_t h = ((m * 10486) >> 20) & 0x0000007f0000007full;
	m = h | (m - h * 100) << 16;
	uint64_t t = ((m * 103) >> 10) & 0x000f000f000f000full;
	m = t | (m - t * 10) << 8;
	return m + 0x3030303030303030ull;
}

/* The last @n (1..8) of @x's 8 digits at @p (8 bytes stored). */
static inline void put_dec8(char *p, uint32_t x, unsigned n)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint64_t d = dec8_swar(x) >> (8 * (8 - n));
	memcpy(p, &d, 8);
#else
	uint64_t d = dec8_swar(x);
	for (unsigned i = 0; i < 8; i++)
		p[i] = i < n ? (char)(d >> (8 * (8 - n + i))) : 0;
#endif
}

/* The decimal digits of @v >= 10: floor(log10(2) * bits) + 1, one fewer
 * below 10^that. */
static inline unsigned dec_digits(uint64_t v)
{
	static const uint64_t pow10[20] = {
		1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
		100000000ull, 1000000000ull, 10000000000ull, 100000000000ull,
		1000000000000ull, 10000000000000ull, 100000000000000ull,
		1000000000000000ull, 10000000000000000ull, 100000000000000000ull,
		1000000000000000000ull, 10000000000000000000ull
	};
	unsigned t = ((64u - (unsigned)__builtin_clzll(v)) * 1233u) >> 12;
	return t + 1 - (v < pow10[t]);
}

/* @v in decimal (D138): its digits counted (from its bit length and one
 * comparison) and made 8 at a time, no division loop, no copy (D186);
 * up to 8 bytes past the number are written over. */
static char *put_dec(char *p, uint64_t v)
{
	static const char dec2[201] =
		"0001020304050607080910111213141516171819202122232425262728293031323334353637383940414243444546474849"
		"5051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899";
	if (v < 10) {
		*p = (char)('0' + v);
		return p + 1;
	}
	if (v < 100) {		/* the mode, often */
		memcpy(p, dec2 + 2 * v, 2);
		return p + 2;
	}
	unsigned n = dec_digits(v);
	if (n <= 8) {
		put_dec8(p, (uint32_t)v, n);
		return p + n;
	}
	uint64_t hi = v / 100000000;
	uint32_t lo = (uint32_t)(v - hi * 100000000);
	char *q = p;
	if (n > 16) {		/* at most 4 digits above the 16 */
		uint32_t top = (uint32_t)(hi / 100000000);
		put_dec8(q, top, n - 16);
		q += n - 16;
		put_dec8(q, (uint32_t)(hi - (uint64_t)top * 100000000), 8);
		q += 8;
	} else {
		put_dec8(q, (uint32_t)hi, n - 8);
		q += n - 8;
	}
	put_dec8(q, lo, 8);
	return p + n;
}

/* @n <= 8 bytes of @s at @p, stored as one 8-byte word (@s has 8 readable
 * bytes; the line's buffer has room past any line, ISA_FLOW_LINE_MAX);
 * returns p + n. */
static inline char *put8(char *p, const char s[8], size_t n)
{
	memcpy(p, s, 8);
	return p + n;
}

/* The instruction classes' names padded to 8 ("%-8s"; none is longer),
 * rtit_insn_class_name's, then "?" for a class past them. */
_Static_assert(RTIT_IC_COUNT == 27, "class_name8 lists every class's name");
static const char class_name8[RTIT_IC_COUNT + 1][8] = {
	"other   ", "cond    ", "jmp     ", "call    ", "jmp-ind ", "call-ind", "ret     ",
	"far-jmp ", "far-call", "far-ret ", "iret    ", "int     ", "syscall ",
	"sysret  ", "sysenter", "sysexit ", "mov-cr3 ", "mov-cr0 ", "wrmsr   ",
	"rdmsr   ", "hlt     ", "ptwrite ", "mwait   ", "xbegin  ", "xend    ", "enclu   ",
	"uiret   ", "?       "
};

/* An instruction line with no class-specific fields: "I %016x %-8s len=%u
 * [T ][ZLC ]-> %016x cpl=%u cr3=0x%x pg=%u if=%u m=%u cyc=%u tsc=%u
 * [enclave]" (docs/formats.md), at most 190 bytes (and up to 8 bytes past
 * its end written over: put8).  Returns its length. */
static int format_insn_plain(const struct rtit_sim_rec *r, char *buf)
{
	char *p = buf;
	p = put8(p, "I       ", 2);
	p = put_hex_fixed16(p, r->ip);
	*p++ = ' ';
	p = put8(p, class_name8[r->cls < RTIT_IC_COUNT ? r->cls : RTIT_IC_COUNT], 8);
	p = put8(p, " len=   ", 5);
	p = put_dec(p, r->len);
	*p++ = ' ';
	if (r->flags & RTIT_SIM_F_TAKEN)
		p = put8(p, "T       ", 2);
	if (r->flags & RTIT_SIM_F_ZERO_LEN_CALL)
		p = put8(p, "ZLC     ", 4);
	p = put8(p, "->      ", 3);
	p = put_hex_fixed16(p, r->next_ip);
	p = put8(p, " cpl=   ", 5);
	p = put_dec(p, r->cpl);
	p = put8(p, " cr3=0x ", 7);
	p = put_hex(p, r->cr3);
	/* " pg=P if=I m=": 13 bytes, then the two flags over their places
	 * (stores after stores: a load of bytes just stored in pieces would
	 * wait for them, D186) */
	memcpy(p, " pg=0 if=0 m=   ", 16);
	p[4] = (r->flags & RTIT_SIM_F_CR0_PG) ? '1' : '0';
	p[9] = (r->flags & RTIT_SIM_F_IF) ? '1' : '0';
	p += 13;
	p = put_dec(p, r->mode);
	p = put8(p, " cyc=   ", 5);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (r->tsc == r->cycles && r->cycles >= 10 && r->cycles < 100000000) {
		/* often so: the digits made once, stored twice from the
		 * register (copying them from the line would load what was
		 * just stored: a store-forwarding stall) */
		unsigned n = dec_digits(r->cycles);
		uint64_t d = dec8_swar((uint32_t)r->cycles) >> (8 * (8 - n));
		memcpy(p, &d, 8);
		p = put8(p + n, " tsc=   ", 5);
		memcpy(p, &d, 8);
		p += n;
	} else
#endif
	{
		p = put_dec(p, r->cycles);
		p = put8(p, " tsc=   ", 5);
		p = put_dec(p, r->tsc);
	}
	if (r->flags & RTIT_SIM_F_ENCLAVE)
		p = put8(p, " enclave", 8);
	*p = 0;
	return (int)(p - buf);
}

/* Whether an instruction of class @cls has class-specific fields. */
static bool insn_has_extra(uint8_t cls)
{
	return cls == RTIT_IC_INT || cls == RTIT_IC_WRMSR || cls == RTIT_IC_RDMSR ||
	       cls == RTIT_IC_PTWRITE || cls == RTIT_IC_MOV_CR3 || cls == RTIT_IC_MOV_CR0 ||
	       cls == RTIT_IC_MWAIT || cls == RTIT_IC_XBEGIN || cls == RTIT_IC_XEND ||
	       cls == RTIT_IC_ENCLU;
}

int rtit_sim_rec_format(const struct rtit_sim_rec *r, char *buf, size_t size)
{
	char extra[96] = "";
	int n;
	if (r->kind == RTIT_SIM_INSN && !insn_has_extra(r->cls)) {
		char line[ISA_FLOW_LINE_MAX];	/* the line and what put8 writes past it */
		n = format_insn_plain(r, line);
		if (size)
			snprintf(buf, size, "%s", line);
		return n;
	}
	if (r->kind == RTIT_SIM_INSN) {
		if (r->cls == RTIT_IC_INT)
			snprintf(extra, sizeof(extra), " vec=%u", r->vector);
		else if (r->cls == RTIT_IC_WRMSR || r->cls == RTIT_IC_RDMSR)
			snprintf(extra, sizeof(extra), " msr=0x%x val=0x%" PRIx64,
				 r->msr, r->value);
		else if (r->cls == RTIT_IC_PTWRITE || r->cls == RTIT_IC_MOV_CR3 ||
			 r->cls == RTIT_IC_MOV_CR0)
			snprintf(extra, sizeof(extra), " val=0x%" PRIx64, r->value);
		else if (r->cls == RTIT_IC_MWAIT)
			snprintf(extra, sizeof(extra), " eax=0x%" PRIx64 " ecx=0x%x c=%u",
				 r->value, r->msr, r->vector);
		else if (r->cls == RTIT_IC_XBEGIN || r->cls == RTIT_IC_XEND)
			snprintf(extra, sizeof(extra), " depth=%u%s", r->vector,
				 (r->flags & RTIT_SIM_F_TX) ? " TX" : "");
		else if (r->cls == RTIT_IC_ENCLU)
			snprintf(extra, sizeof(extra), " leaf=%" PRIu64 " %s", r->value,
				 r->vector ? "debug" : "opt-out");
		n = snprintf(buf, size,
			     "I %016" PRIx64 " %-8s len=%u %s%s-> %016" PRIx64
			     "%s cpl=%u cr3=0x%" PRIx64 " pg=%u if=%u m=%u cyc=%" PRIu64
			     " tsc=%" PRIu64 "%s",
			     r->ip, rtit_insn_class_name(r->cls), r->len,
			     (r->flags & RTIT_SIM_F_TAKEN) ? "T " : "",
			     (r->flags & RTIT_SIM_F_ZERO_LEN_CALL) ? "ZLC " : "",
			     r->next_ip, extra, r->cpl, r->cr3,
			     !!(r->flags & RTIT_SIM_F_CR0_PG), !!(r->flags & RTIT_SIM_F_IF),
			     r->mode, r->cycles, r->tsc,
			     (r->flags & RTIT_SIM_F_ENCLAVE) ? " enclave" : "");
	} else {
		switch (r->cls) {
		case RTIT_EV_EXCEPTION:
			snprintf(extra, sizeof(extra), " vec=%u %s err=0x%x cr2=0x%" PRIx64,
				 r->vector,
				 (r->flags & RTIT_SIM_F_FAULT) ? "fault" : "trap",
				 r->msr, r->value);
			break;
		case RTIT_EV_EXT_INTERRUPT:
		case RTIT_EV_NMI:
		case RTIT_EV_SIPI:
		case RTIT_EV_UINTR:
			snprintf(extra, sizeof(extra), " vec=%u", r->vector);
			break;
		case RTIT_EV_INIT:
			if (r->vector)	/* an AP: waits for SIPI */
				snprintf(extra, sizeof(extra), " ap");
			break;
		case RTIT_EV_FREQ_CHANGE:
			snprintf(extra, sizeof(extra), " ratio=%" PRIu64, r->value);
			break;
		case RTIT_EV_SLEEP:
		case RTIT_EV_WAKE:
			snprintf(extra, sizeof(extra), " c%u ticks=%" PRIu64,
				 r->vector, r->value);
			break;
		case RTIT_EV_MSR_WRITE_EXTERNAL:
			snprintf(extra, sizeof(extra), " msr=0x%x val=0x%" PRIx64,
				 r->msr, r->value);
			break;
		case RTIT_EV_TSX_ABORT:
			snprintf(extra, sizeof(extra), " status=0x%" PRIx64 " depth=%u",
				 r->value, r->vector);
			break;
		case RTIT_EV_PEBS:
			/* the eventing IP, the groups (IA32_PEBS_DATA_CFG
			 * bits), the digest of the items (rtit/pebs.h) */
			snprintf(extra, sizeof(extra), " eip=0x%" PRIx64 " groups=0x%x items=0x%08x",
				 r->value, r->vector, r->msr);
			break;
		case RTIT_EV_VMEXIT:
			if (rtit_vmx_exit_has_vector(r->msr))
				snprintf(extra, sizeof(extra), " reason=%u qual=0x%" PRIx64 " vec=%u",
					 r->msr, r->value, r->vector);
			else
				snprintf(extra, sizeof(extra), " reason=%u qual=0x%" PRIx64,
					 r->msr, r->value);
			break;
		case RTIT_EV_AEX:
			snprintf(extra, sizeof(extra), " vec=%u %s err=0x%x aep=0x%" PRIx64,
				 r->vector, (r->flags & RTIT_SIM_F_FAULT) ? "fault" : "trap",
				 r->msr, r->value);
			break;
		default:
			break;
		}
		n = snprintf(buf, size,
			     "E %016" PRIx64 " %-8s%s -> %016" PRIx64
			     " cpl=%u cr3=0x%" PRIx64 " pg=%u if=%u m=%u cyc=%" PRIu64
			     " tsc=%" PRIu64 "%s",
			     r->ip, rtit_sim_event_name(r->cls), extra, r->next_ip,
			     r->cpl, r->cr3, !!(r->flags & RTIT_SIM_F_CR0_PG),
			     !!(r->flags & RTIT_SIM_F_IF), r->mode, r->cycles, r->tsc,
			     (r->flags & RTIT_SIM_F_ENCLAVE) ? " enclave" : "");
	}
	return n;
}

char *isa_flow_line(const struct rtit_sim_rec *r, char *p)
{
	int n;
	if (r->kind == RTIT_SIM_INSN && !insn_has_extra(r->cls)) {
		n = format_insn_plain(r, p);
	} else {
		n = rtit_sim_rec_format(r, p, ISA_FLOW_LINE_MAX - 1);
		if (n < 0 || n >= ISA_FLOW_LINE_MAX - 1)
			n = (int)strlen(p);
	}
	p[n] = '\n';
	return p + n + 1;
}

void isa_flow_header(uint8_t h[16], int version)
{
	memcpy(h, RTIT_FLOW_MAGIC, 8);
	put32(h + 8, (uint32_t)version);
	put32(h + 12, 64);
}

void isa_flow_trailer(uint8_t t[24], uint64_t count, uint64_t digest)
{
	XXH64_canonical_t c;
	memcpy(t, "RTITEND\0", 8);
	put64(t + 8, count);
	XXH64_canonicalFromHash(&c, digest);
	memcpy(t + 16, c.digest, 8);
}

/* Out of line: inlined into the reader's loop, gcc 12 warns about
 * XXH3_update's paths for long inputs, which a 64-byte read never takes. */
static __attribute__((noinline)) void hash_update(XXH3_state_t *s, const uint8_t *b, size_t n)
{
	XXH3_64bits_update(s, b, n);
}

enum { HASH_RECS = 64 };	/* version 2: records hashed at once */

/* A version 2 file being read: the block, where its next record starts,
 * the records of it not yet returned, the predictor, the canonical forms
 * of the records returned but not yet hashed. */
struct fc_reader {
	uint8_t *blk;
	size_t len, pos, left;
	struct isa_fc_state fc;
	size_t nh;
	uint8_t h[64 * HASH_RECS];
};

/* A failure: kept, with what it is. */
static void rd_fail(struct rtit_flow_reader *rd, int err, const char *why)
{
	rd->err = err;
	rd->why = err == -RTIT_ERR_IO ? NULL : why;
}

int rtit_flow_reader_open(struct rtit_flow_reader *rd, FILE *f)
{
	uint8_t h[16];
	memset(rd, 0, sizeof(*rd));
	size_t got = fread(h, 1, 16, f);
	if (got != 16) {
		if (ferror(f))
			return -RTIT_ERR_IO;
		rd->why = "shorter than a flow file's header";
		return -RTIT_ERR_INVALID;
	}
	if (memcmp(h, RTIT_FLOW_MAGIC, 8)) {
		rd->why = "not a flow file (no RTITFLOW header)";
		return -RTIT_ERR_INVALID;
	}
	uint32_t v = get32(h + 8);
	if ((v != RTIT_FLOW_V1 && v != RTIT_FLOW_V2) || get32(h + 12) != 64) {
		rd->why = "a flow file of an unknown version (this reader knows 1 and 2)";
		return -RTIT_ERR_INVALID;
	}
	XXH3_state_t *s = XXH3_createState();
	struct fc_reader *fr = NULL;
	if (s && v == RTIT_FLOW_V2) {
		fr = calloc(1, sizeof(*fr));
		if (fr && !(fr->blk = malloc((size_t)ISA_FC_REC_MAX * ISA_FC_BLOCK_RECS))) {
			free(fr);
			fr = NULL;
		}
	}
	if (!s || (v == RTIT_FLOW_V2 && !fr)) {
		XXH3_freeState(s);
		return -RTIT_ERR_NOMEM;
	}
	if (fr)
		isa_fc_reset(&fr->fc);
	XXH3_64bits_reset(s);
	rd->f = f;
	rd->xxh = s;
	rd->version = (int)v;
	rd->priv = fr;
	return 0;
}

/* The trailer's 24 bytes at @b against what was read (@n records besides
 * rd->count). */
static void check_trailer(struct rtit_flow_reader *rd, const uint8_t *b, size_t n)
{
	XXH64_canonical_t c;
	memcpy(c.digest, b + 16, 8);
	if (get64(b + 8) != rd->count + n)
		rd_fail(rd, -RTIT_ERR_INVALID, "the trailer's record count differs from the records");
	else if (XXH64_hashFromCanonical(&c) != XXH3_64bits_digest(rd->xxh))
		rd_fail(rd, -RTIT_ERR_INVALID, "the trailer's digest differs from the records'");
	else {
		rd->done = true;
		rd->digest = XXH64_hashFromCanonical(&c);
	}
}

static long next_v1(struct rtit_flow_reader *rd, struct rtit_sim_rec *recs, size_t max)
{
	uint8_t b[64];
	size_t n = 0;
	while (n < max) {
		size_t got = fread(b, 1, 64, rd->f);
		if (got == 24 && !memcmp(b, "RTITEND\0", 8)) {
			check_trailer(rd, b, n);
			break;
		}
		if (got != 64) {
			rd_fail(rd, ferror(rd->f) ? -RTIT_ERR_IO : -RTIT_ERR_INVALID,
				got ? "the file ends inside a record" : "the file ends without its trailer");
			break;
		}
		hash_update(rd->xxh, b, 64);
		isa_rec_unpack(b, &recs[n++]);
	}
	return (long)n;
}

/* Version 2: the next block (its records in fr->blk) or the trailer. */
static void next_block(struct rtit_flow_reader *rd, struct fc_reader *fr, size_t n)
{
	uint8_t b[24];
	size_t got = fread(b, 1, 8, rd->f);
	if (got != 8) {
		rd_fail(rd, ferror(rd->f) ? -RTIT_ERR_IO : -RTIT_ERR_INVALID,
			got ? "the file ends inside a block's header" : "the file ends without its trailer");
		return;
	}
	if (!memcmp(b, "RTITEND\0", 8)) {
		got = fread(b + 8, 1, 16, rd->f);
		if (got != 16) {
			rd_fail(rd, ferror(rd->f) ? -RTIT_ERR_IO : -RTIT_ERR_INVALID,
				"the file ends inside its trailer");
			return;
		}
		if (fgetc(rd->f) != EOF) {
			rd_fail(rd, -RTIT_ERR_INVALID, "bytes after the trailer");
			return;
		}
		if (ferror(rd->f)) {
			rd_fail(rd, -RTIT_ERR_IO, NULL);
			return;
		}
		check_trailer(rd, b, n);
		return;
	}
	uint32_t k = get32(b), len = get32(b + 4);
	if (k == 0 || k > ISA_FC_BLOCK_RECS || len < k || len > (uint64_t)ISA_FC_REC_MAX * k) {
		rd_fail(rd, -RTIT_ERR_INVALID, "a malformed block header");
		return;
	}
	got = fread(fr->blk, 1, len, rd->f);
	if (got != len) {
		rd_fail(rd, ferror(rd->f) ? -RTIT_ERR_IO : -RTIT_ERR_INVALID,
			"the file ends inside a block");
		return;
	}
	fr->len = len;
	fr->pos = 0;
	fr->left = k;
}

static void hash_pending(struct rtit_flow_reader *rd, struct fc_reader *fr)
{
	if (fr->nh)
		hash_update(rd->xxh, fr->h, 64 * fr->nh);
	fr->nh = 0;
}

static long next_v2(struct rtit_flow_reader *rd, struct rtit_sim_rec *recs, size_t max)
{
	struct fc_reader *fr = rd->priv;
	size_t n = 0;
	while (n < max) {
		if (!fr->left) {
			hash_pending(rd, fr);
			next_block(rd, fr, n);
			if (rd->err || rd->done)
				break;
		}
		size_t k = isa_fc_decode(&fr->fc, fr->blk + fr->pos, fr->len - fr->pos, &recs[n]);
		if (!k) {
			rd_fail(rd, -RTIT_ERR_INVALID, "a malformed record in a block");
			break;
		}
		fr->pos += k;
		if (!--fr->left && fr->pos != fr->len) {
			rd_fail(rd, -RTIT_ERR_INVALID, "a block's bytes go on after its records");
			break;
		}
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		/* the canonical form is the struct's (the decoder zeroed its
		 * padding) */
		memcpy(fr->h + 64 * fr->nh, &recs[n++], 64);
#else
		rtit_sim_rec_pack(&recs[n++], fr->h + 64 * fr->nh);
#endif
		if (++fr->nh == HASH_RECS)
			hash_pending(rd, fr);
	}
	hash_pending(rd, fr);
	return (long)n;
}

long rtit_flow_reader_next(struct rtit_flow_reader *rd, struct rtit_sim_rec *recs, size_t max)
{
	if (rd->err)
		return rd->err;
	if (rd->done || !rd->xxh)
		return 0;
	size_t n = (size_t)(rd->version == RTIT_FLOW_V2 ? next_v2(rd, recs, max)
							: next_v1(rd, recs, max));
	rd->count += n;
	return n || !rd->err ? (long)n : rd->err;
}

void rtit_flow_reader_close(struct rtit_flow_reader *rd)
{
	if (rd->xxh)
		XXH3_freeState(rd->xxh);
	rd->xxh = NULL;
	struct fc_reader *fr = rd->priv;
	if (fr) {
		free(fr->blk);
		free(fr);
	}
	rd->priv = NULL;
}

int rtit_flow_read(FILE *f, struct rtit_sim_rec **recs, size_t *n)
{
	return rtit_flow_read_why(f, recs, n, NULL);
}

int rtit_flow_read_why(FILE *f, struct rtit_sim_rec **recs, size_t *n, const char **why)
{
	struct rtit_flow_reader rd;
	struct rtit_sim_rec *v = NULL;
	size_t cnt = 0, cap = 0;
	long got;
	*recs = NULL;
	*n = 0;
	if (why)
		*why = NULL;
	int r = rtit_flow_reader_open(&rd, f);
	if (r < 0) {
		if (why && r == -RTIT_ERR_INVALID)
			*why = rd.why;
		return r;
	}
	do {
		if (cap - cnt < 1024) {
			cap = cap ? cap * 2 : 1024;
			struct rtit_sim_rec *nv = realloc(v, cap * sizeof(*nv));
			if (!nv) {
				got = -RTIT_ERR_NOMEM;
				break;
			}
			v = nv;
		}
		got = rtit_flow_reader_next(&rd, v + cnt, cap - cnt);
		if (got > 0)
			cnt += (size_t)got;
	} while (got > 0);
	rtit_flow_reader_close(&rd);
	if (got < 0) {
		if (why && got == -RTIT_ERR_INVALID)
			*why = rd.why;
		free(v);
		return (int)got;
	}
	*recs = v;
	*n = cnt;
	return 0;
}
