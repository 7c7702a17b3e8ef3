/*
 * explain_layout.c - the bit fields of a packet for `rtitsim explain`'s
 * drawing, and the page around the model.
 *
 * A layout is "kind:name:first:bits;..." with bit 8*B+J = bit J of byte
 * B (a name may hold ':', as in "IP[15:0] sent": the page reads the
 * numbers from the right).  Kinds (the page colours them): op (opcode and fixed bits), hdr
 * (header fields: Zext, CNT, IPBytes, Event, Exp), ip (IP bytes sent),
 * tnt (the branch bits), stop (the TNT stop bit), cyc (cycle counts),
 * pay (other payload), zero (bits that must be 0).
 * Formats: RTIT 4.2.1-4.2.14 (Figures 3-13), SDM 33.4.2.1-33.4.2.30.  Every
 * packet kind of both dialects has all its bits named (D125; tests/explain:
 * explain-layout walks the golden corpus through it).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "explain.h"
#include "explain_page.h"	/* generated from explain.html */

struct lay {
	char *out;
	size_t cap, n;
};

static void f(struct lay *l, const char *kind, const char *name, unsigned first, unsigned bits)
{
	if (!bits || l->n >= l->cap)
		return;
	int k = snprintf(l->out + l->n, l->cap - l->n, "%s%s:%s:%u:%u", l->n ? ";" : "", kind,
			 name, first, bits);
	if (k > 0)
		l->n += (size_t)k < l->cap - l->n ? (size_t)k : l->cap - l->n - 1;
}

/* The IP bytes of an IP packet from byte 1 on: which IP bits they are. */
static void ip_bytes(struct lay *l, unsigned size, bool rtit)
{
	char nm[40];
	unsigned nb = size - 1;

	if (!nb)
		return;
	snprintf(nm, sizeof(nm), "%s[%u:0] sent", rtit ? "LIP" : "IP", nb * 8 - 1);
	f(l, "ip", nm, 8, nb * 8);
}

/* The packets whose fields do not depend on their contents: kind, name,
 * first bit, bits (at most 7 fields). */
struct fixed_field {
	const char *kind, *name;
	uint8_t first, bits;
};
static const struct fixed {
	enum rtit_pkt_type type;
	struct fixed_field f[7];
} fixed[] = {
	/* RTIT 4.2.10, Figure 9: 1100001 CR0.PG, CR3[39:0] */
	{ RTIT_R_PIP, { { "op", "PIP 1100001", 1, 7 }, { "hdr", "CR0.PG", 0, 1 },
			{ "pay", "CR3[39:0]", 8, 40 } } },
	/* RTIT 4.2.11, Figure 10 */
	{ RTIT_R_TRACESTOP, { { "op", "TraceSTOP C1", 0, 8 } } },
	/* RTIT 4.2.13, Figure 12: 1101 ACBR[5:2], ACBR[1:0] ECBR[5:0], TSC[39:0] */
	{ RTIT_R_STS, { { "op", "STS 1101", 4, 4 }, { "pay", "ACBR[5:2] (actual core:bus ratio)", 0, 4 },
			{ "pay", "ACBR[1:0]", 14, 2 },
			{ "pay", "ECBR[5:0] (effective core:bus ratio)", 8, 6 },
			{ "cyc", "TSC[39:0]", 16, 40 } } },
	/* SDM 33.4.2.7: 02 43, NR, CR3[51:5] */
	{ RTIT_PT_PIP, { { "op", "PIP 02 43", 0, 16 }, { "hdr", "NR (non-root)", 16, 1 },
			 { "pay", "CR3[51:5]", 17, 47 } } },
	/* 33.4.2.9 */
	{ RTIT_PT_TRACESTOP, { { "op", "TraceStop 02 83", 0, 16 } } },
	/* 33.4.2.10: 02 03, ratio, reserved */
	{ RTIT_PT_CBR, { { "op", "CBR 02 03", 0, 16 }, { "pay", "core:bus ratio", 16, 8 },
			 { "zero", "reserved", 24, 8 } } },
	/* 33.4.2.11 */
	{ RTIT_PT_TSC, { { "op", "TSC 19", 0, 8 }, { "cyc", "TSC[55:0]", 8, 56 } } },
	/* 33.4.2.12 */
	{ RTIT_PT_MTC, { { "op", "MTC 59", 0, 8 }, { "cyc", "CTC: ART[N+7:N], N = MTCFreq", 8, 8 } } },
	/* 33.4.2.13: 02 73, CTC[15:0], reserved, FastCounter[7:0], FC[8] */
	{ RTIT_PT_TMA, { { "op", "TMA 02 73", 0, 16 }, { "cyc", "CTC[15:0]", 16, 16 },
			 { "zero", "reserved", 32, 8 }, { "cyc", "FastCounter[7:0]", 40, 8 },
			 { "cyc", "FastCounter[8]", 48, 1 }, { "zero", "reserved", 49, 7 } } },
	/* 33.4.2.15 */
	{ RTIT_PT_VMCS, { { "op", "VMCS 02 C8", 0, 16 }, { "pay", "VMCS pointer[51:12]", 16, 40 } } },
	/* 33.4.2.16, .18, .20 */
	{ RTIT_PT_OVF, { { "op", "OVF 02 F3", 0, 16 } } },
	{ RTIT_PT_PSBEND, { { "op", "PSBEND 02 23", 0, 16 } } },
	{ RTIT_PT_PAD, { { "op", "PAD 00", 0, 8 } } },
	/* 33.4.2.19 */
	{ RTIT_PT_MNT, { { "op", "MNT 02 C3 88", 0, 24 }, { "pay", "Payload[63:0]", 24, 64 } } },
	/* 33.4.2.23: 02 C2, hints, 3 reserved, EXT[1:0], reserved */
	{ RTIT_PT_MWAIT, { { "op", "MWAIT 02 C2", 0, 16 }, { "pay", "MWAIT hints[7:0] (EAX)", 16, 8 },
			   { "zero", "reserved", 24, 24 }, { "pay", "EXT[1:0] (ECX)", 48, 2 },
			   { "zero", "reserved", 50, 30 } } },
	/* 33.4.2.24: 02 22, HW, resolved thread C-state and sub-C-state */
	{ RTIT_PT_PWRE, { { "op", "PWRE 02 22", 0, 16 }, { "zero", "reserved", 16, 7 },
			  { "hdr", "HW (hardware initiated)", 23, 1 },
			  { "pay", "Resolved thread sub-C-state[3:0]", 24, 4 },
			  { "pay", "Resolved thread C-state[3:0]", 28, 4 } } },
	/* 33.4.2.25: 02 A2, deepest/last core C-state, wake reason */
	{ RTIT_PT_PWRX, { { "op", "PWRX 02 A2", 0, 16 }, { "pay", "Deepest core C-state[3:0]", 16, 4 },
			  { "pay", "Last core C-state[3:0]", 20, 4 },
			  { "pay", "Wake reason[3:0]", 24, 4 }, { "zero", "reserved", 28, 28 } } },
	/* 33.4.2.26: 02 63, SZ, Type */
	{ RTIT_PT_BBP, { { "op", "BBP 02 63", 0, 16 }, { "hdr", "Type", 16, 5 },
			 { "zero", "reserved", 21, 2 }, { "hdr", "SZ (1: 4-byte items)", 23, 1 } } },
	/* 33.4.2.29: 02 13, IP, Type, Vector */
	{ RTIT_PT_CFE, { { "op", "CFE 02 13", 0, 16 }, { "hdr", "Type", 16, 5 },
			 { "zero", "reserved", 21, 2 }, { "hdr", "IP (a FUP follows)", 23, 1 },
			 { "pay", "Vector", 24, 8 } } },
	/* 33.4.2.30: 02 53, Type, Payload[63:0] */
	{ RTIT_PT_EVD, { { "op", "EVD 02 53", 0, 16 }, { "hdr", "Type", 16, 6 },
			 { "zero", "reserved", 22, 2 }, { "pay", "Payload[63:0]", 24, 64 } } },
};

/* A packet of the table above: its fields; false when it is not one. */
static bool fixed_layout(struct lay *l, const struct rtit_packet *p)
{
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		if (fixed[i].type != p->type)
			continue;
		for (const struct fixed_field *q = fixed[i].f; q < fixed[i].f + 7 && q->kind; q++)
			f(l, q->kind, q->name, q->first, q->bits);
		return true;
	}
	return false;
}

static void rtit_layout(struct lay *l, const struct rtit_pktdec_item *it)
{
	const struct rtit_packet *p = &it->pkt;
	unsigned n = p->u.tnt.nbits;
	char nm[40];

	switch (p->type) {
	case RTIT_R_TNT:	/* 4.2.2, Figure 4: 0, leading 1, N bits */
		f(l, "op", "0", 7, 1);
		f(l, "zero", "unused", n + 1, 6 - n);
		f(l, "stop", "leading 1", n, 1);
		f(l, "tnt", "TNT bits (oldest highest)", 0, n);
		break;
	case RTIT_R_TIP:	/* 4.2.3, Figure 5: 10110 Zext CNT */
		f(l, "op", "TIP 10110", 3, 5);
		f(l, "hdr", "Zext", 2, 1);
		f(l, "hdr", "CNT", 0, 2);
		ip_bytes(l, p->size, true);
		break;
	case RTIT_R_FUP_PGE: case RTIT_R_FUP_PGD: case RTIT_R_FUP_BUFFOVF:
	case RTIT_R_FUP_PCC: case RTIT_R_FUP_FAR:	/* Figure 6: 10 Event Zext CNT */
		f(l, "op", "FUP 10", 6, 2);
		f(l, "hdr", "Event", 3, 3);
		f(l, "hdr", "Zext", 2, 1);
		f(l, "hdr", "CNT", 0, 2);
		ip_bytes(l, p->size, true);
		break;
	case RTIT_R_CCP:	/* 4.2.14: CycleCount0[5:0] CCNT, then bytes */
		f(l, "cyc", "CycleCount[5:0]", 2, 6);
		f(l, "hdr", "CCNT", 0, 2);
		if (p->size > 1)
			f(l, "cyc", "CycleCount[13:6]", 8, 8);
		if (p->size > 2)
			f(l, "cyc", "CycleCount[21:14]", 16, 8);
		break;
	case RTIT_R_PSB:	/* 4.2.1, Figure 3: C0 and eight 00 */
		f(l, "op", "PSB pattern", 0, 8u * p->size);
		break;
	case RTIT_R_MTC:	/* 4.2.12, Figure 11: 110001 RNG, TSC[s+7:s] */
		snprintf(nm, sizeof(nm), "TSC[%u:%u]", 14 + 2 * (it->raw[0] & 3u),
			 7 + 2 * (it->raw[0] & 3u));
		f(l, "op", "MTC 110001", 2, 6);
		f(l, "hdr", "RNG (MTC_Range)", 0, 2);
		f(l, "pay", nm, 8, 8);
		break;
	default:	/* no other RTIT packet (RTIT Figure 2) */
		if (!fixed_layout(l, p)) {
			f(l, "op", "opcode", 0, 8);
			f(l, "pay", "payload", 8, 8u * (p->size - 1));
		}
		break;
	}
}

/* Intel PT's IP packets (33.4.2.2-.6): IPBytes[7:5], opcode[4:0], IP. */
static void pt_ip_layout(struct lay *l, const struct rtit_packet *p)
{
	static const char *const op[] = { "TIP 01101", "TIP.PGE 10001", "TIP.PGD 00001",
					  "FUP 11101" };
	f(l, "hdr", "IPBytes", 5, 3);
	f(l, "op", op[p->type == RTIT_PT_TIP ? 0 : p->type == RTIT_PT_TIP_PGE ? 1 :
		      p->type == RTIT_PT_TIP_PGD ? 2 : 3], 0, 5);
	ip_bytes(l, p->size, false);
}

/* Intel PT packets with 02 and a second byte that holds a flag in bit 7:
 * PTW, EXSTOP, BEP (33.4.2.21, .22, .28). */
static void pt_flag_layout(struct lay *l, const struct rtit_packet *p, const char *op)
{
	f(l, "op", "02", 0, 8);
	f(l, "hdr", "IP (a FUP follows)", 15, 1);
	if (p->type == RTIT_PT_PTW) {
		f(l, "hdr", "PayloadBytes", 13, 2);
		f(l, "op", op, 8, 5);
		f(l, "pay", p->size > 6 ? "PTWRITE operand[63:0]" : "PTWRITE operand[31:0]", 16,
		  8u * (p->size - 2));
	} else {
		f(l, "op", op, 8, 7);
	}
}

static void pt_layout(struct lay *l, const struct rtit_pktdec_item *it)
{
	const struct rtit_packet *p = &it->pkt;
	unsigned n = p->u.tnt.nbits;

	switch (p->type) {
	case RTIT_PT_TMA:
		if (!p->u.tma.skz84) {
			fixed_layout(l, p);
			break;
		}
		/* erratum SKZ84 (docs/decisions.md D143): Table 33-32's
		 * fields, corrupted, the reserved bits set, a bogus byte */
		f(l, "op", "TMA 02 73", 0, 16);
		f(l, "pay", "CTC[15:0] (corrupted: erratum SKZ84)", 16, 16);
		f(l, "pay", "reserved, set (erratum SKZ84)", 32, 8);
		f(l, "pay", "FastCounter[7:0] (corrupted)", 40, 8);
		f(l, "pay", "FastCounter[8] (corrupted)", 48, 1);
		f(l, "pay", "reserved, set (erratum SKZ84)", 49, 7);
		f(l, "pay", "bogus byte (erratum SKZ84)", 56, 8);
		break;
	case RTIT_PT_TNT8:	/* 33.4.2.1: bit 0 = 0, bits, stop bit */
		f(l, "op", "0", 0, 1);
		f(l, "tnt", "TNT bits (oldest highest)", 1, n);
		f(l, "stop", "stop bit", n + 1, 1);
		f(l, "zero", "unused", n + 2, 6 - n);
		break;
	case RTIT_PT_TNT64:	/* 33.4.2.1: 02 A3, 48 bits with a stop bit */
		f(l, "op", "Long TNT 02 A3", 0, 16);
		f(l, "tnt", "TNT bits (oldest highest)", 16, n);
		f(l, "stop", "stop bit", 16 + n, 1);
		f(l, "zero", "unused", 17 + n, 47 - n);
		break;
	case RTIT_PT_TIP: case RTIT_PT_TIP_PGE: case RTIT_PT_TIP_PGD: case RTIT_PT_FUP:
		pt_ip_layout(l, p);
		break;
	case RTIT_PT_CYC:	/* 33.4.2.14: CycCnt[4:0] Exp 11, then Exp-chained */
		f(l, "cyc", "CycCnt[4:0]", 3, 5);
		f(l, "hdr", "Exp", 2, 1);
		f(l, "op", "CYC 11", 0, 2);
		for (unsigned b = 1; b < p->size; b++) {
			char nm[32];
			snprintf(nm, sizeof(nm), "CycCnt[%u:%u]", 7 * b + 4, 7 * b - 2);
			f(l, "cyc", nm, 8 * b + 1, 7);
			f(l, "hdr", "Exp", 8 * b, 1);
		}
		break;
	case RTIT_PT_MODE_EXEC:	/* 33.4.2.8: 99, Leaf 000, IF, CS.D, CS.L & LMA */
	case RTIT_PT_MODE_TSX:	/* 99, Leaf 001, TXAbort, InTX */
		f(l, "op", "MODE 99", 0, 8);
		f(l, "hdr", p->type == RTIT_PT_MODE_EXEC ? "Leaf 000 (Exec)" : "Leaf 001 (TSX)", 13, 3);
		if (p->type == RTIT_PT_MODE_EXEC) {
			f(l, "zero", "reserved", 11, 2);
			f(l, "pay", "IF", 10, 1);
			f(l, "pay", "CS.D", 9, 1);
			f(l, "pay", "CS.L & IA32_EFER.LMA", 8, 1);
		} else {
			f(l, "zero", "reserved", 10, 3);
			f(l, "pay", "TXAbort", 9, 1);
			f(l, "pay", "InTX", 8, 1);
		}
		break;
	case RTIT_PT_PTW:
		pt_flag_layout(l, p, "PTW 10010");
		break;
	case RTIT_PT_EXSTOP:
		pt_flag_layout(l, p, "EXSTOP 1100010");
		break;
	case RTIT_PT_BEP:
		pt_flag_layout(l, p, "BEP 0110011");
		break;
	case RTIT_PT_BIP:	/* 33.4.2.27: ID[4:0] 100, the item */
		f(l, "op", "BIP 100", 0, 3);
		f(l, "hdr", "ID", 3, 5);
		f(l, "pay", p->size > 5 ? "item[63:0]" : "item[31:0]", 8, 8u * (p->size - 1));
		break;
	case RTIT_PT_PSB:	/* 33.4.2.17: 02 82 eight times */
		f(l, "op", "PSB pattern", 0, 8u * p->size);
		break;
	default:
		if (!fixed_layout(l, p)) {	/* none left (33.4.2) */
			f(l, "op", "opcode", 0, 8);
			f(l, "pay", "payload", 8, 8u * (p->size - 1));
		}
		break;
	}
}

int rtit_explain_layout(char *out, size_t cap, enum rtit_dialect d,
			const struct rtit_pktdec_item *it)
{
	struct lay l = { .out = out, .cap = cap, .n = 0 };

	if (cap)
		out[0] = 0;
	if (d == RTIT_DIALECT_PT)
		pt_layout(&l, it);
	else
		rtit_layout(&l, it);
	return (int)l.n;
}

int rtit_explain_write_page(FILE *out, const char *title, const char *model, size_t len)
{
	const char *mark = "/*MODEL*/", *at = strstr(explain_page, mark);
	const char *tmark = "<!--TITLE-->", *tat = strstr(explain_page, tmark);

	if (!at || !tat || tat > at)
		return -1;
	fwrite(explain_page, 1, (size_t)(tat - explain_page), out);
	for (const char *c = title; *c; c++) {
		if (*c == '<')
			fputs("&lt;", out);
		else if (*c == '&')
			fputs("&amp;", out);
		else
			fputc(*c, out);
	}
	tat += strlen(tmark);
	fwrite(tat, 1, (size_t)(at - tat), out);
	fwrite(model, 1, len, out);
	fputs(at + strlen(mark), out);
	return ferror(out) ? -1 : 0;
}
