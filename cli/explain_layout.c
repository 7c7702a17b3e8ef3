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
 * Formats: RTIT Figures 3-14 (Table 1), SDM 33.4.2 (Tables 33-15 ff).
 */
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

static void rtit_layout(struct lay *l, const struct rtit_pktdec_item *it)
{
	const struct rtit_packet *p = &it->pkt;
	unsigned n = p->u.tnt.nbits;

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
	case RTIT_R_PSB:
		f(l, "op", "PSB pattern", 0, 8u * p->size);
		break;
	default:
		f(l, "op", "opcode", 0, 8);
		f(l, "pay", "payload", 8, 8u * (p->size - 1));
		break;
	}
}

static void pt_layout(struct lay *l, const struct rtit_pktdec_item *it)
{
	const struct rtit_packet *p = &it->pkt;
	unsigned n = p->u.tnt.nbits;

	switch (p->type) {
	case RTIT_PT_TNT8:	/* Table 33-15: bit 0 = 0, bits, stop bit */
		f(l, "op", "0", 0, 1);
		f(l, "tnt", "TNT bits (oldest highest)", 1, n);
		f(l, "stop", "stop bit", n + 1, 1);
		f(l, "zero", "unused", n + 2, 6 - n);
		break;
	case RTIT_PT_TNT64:	/* Table 33-16: 02 A3, 48 bits with a stop bit */
		f(l, "op", "Long TNT 02 A3", 0, 16);
		f(l, "tnt", "TNT bits (oldest highest)", 16, n);
		f(l, "stop", "stop bit", 16 + n, 1);
		f(l, "zero", "unused", 17 + n, 47 - n);
		break;
	case RTIT_PT_TIP: case RTIT_PT_TIP_PGE: case RTIT_PT_TIP_PGD: case RTIT_PT_FUP:
		/* Tables 33-17, 33-20 ff: IPBytes[7:5], opcode[4:0] */
		f(l, "hdr", "IPBytes", 5, 3);
		f(l, "op", "opcode", 0, 5);
		ip_bytes(l, p->size, false);
		break;
	case RTIT_PT_CYC:	/* Table 33-35: CycCnt[4:0] Exp 11, then Exp-chained */
		f(l, "cyc", "CycCnt[4:0]", 3, 5);
		f(l, "hdr", "Exp", 2, 1);
		f(l, "op", "11", 0, 2);
		for (unsigned b = 1; b < p->size; b++) {
			char nm[32];
			snprintf(nm, sizeof(nm), "CycCnt[%u:%u]", 7 * b + 4 - 0, 7 * b - 2);
			f(l, "cyc", nm, 8 * b + 1, 7);
			f(l, "hdr", "Exp", 8 * b, 1);
		}
		break;
	case RTIT_PT_PSB:
		f(l, "op", "PSB pattern", 0, 8u * p->size);
		break;
	case RTIT_PT_PAD:
		f(l, "op", "PAD", 0, 8);
		break;
	default: {
		unsigned ob = it->raw && it->raw[0] == 0x02 ? 2 : 1;
		if (ob > p->size)
			ob = p->size;
		f(l, "op", "opcode", 0, 8 * ob);
		f(l, "pay", "payload", 8 * ob, 8u * (p->size - ob));
		break;
	}
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
