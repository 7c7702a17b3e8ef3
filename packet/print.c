/*
 * print.c - packets as text and JSON.  The text explains itself: IP
 * packets say which bits were sent and where the rest came from.
 */
#include <inttypes.h>

#include "rtit/print.h"
#include "rtit/opcodes_pt.h"
#include "rtit/pebs.h"

static void print_tnt(FILE *out, const struct rtit_pkt_tnt *t)
{
	fprintf(out, "%u bit%s ", t->nbits, t->nbits == 1 ? "" : "s");
	for (int i = t->nbits - 1; i >= 0; i--)
		fputc((t->bits >> i) & 1 ? 'T' : 'N', out);
	fputs(" (oldest first)", out);
}

static void print_ip(FILE *out, enum rtit_dialect dialect,
		     const struct rtit_pktdec_item *it)
{
	const struct rtit_pkt_ip *ip = &it->pkt.u.ip;
	struct rtit_ip_explain ex;

	if (rtit_ip_explain(dialect, ip, &ex) < 0) {
		fputs("ip=<reserved compression>", out);
		return;
	}
	if (ex.suppressed) {
		fputs("ip=suppressed [IPBytes=000b]", out);
		return;
	}
	if (it->ip_status < 0)
		fprintf(out, "ip=? [0x%0*" PRIx64 " sent, IP[%u:0]; upper bits from an unknown last IP]",
			(int)ex.sent_bits / 4, ip->payload, ex.sent_bits - 1);
	else
		fprintf(out, "ip=0x%016" PRIx64 " ", it->ip);
	if (it->ip_status < 0)
		return;
	if (dialect == RTIT_DIALECT_RTIT)
		fprintf(out, "[CNT=%u Zext=%u: sent LIP[%u:0]", ip->ipc, ip->zext, ex.sent_bits - 1);
	else
		fprintf(out, "[IPBytes=%u%u%ub: sent IP[%u:0]", (ip->ipc >> 2) & 1,
			(ip->ipc >> 1) & 1, ip->ipc & 1, ex.sent_bits - 1);
	if (ex.from_last)
		fprintf(out, ", IP[%u:%u] from last IP 0x%016" PRIx64,
			dialect == RTIT_DIALECT_RTIT ? 47u : 63u, ex.sent_bits,
			it->last_ip);
	else if (ex.zext)
		fprintf(out, ", LIP[47:%u]=0", ex.sent_bits);
	if (ex.sext)
		fputs(", bit 47 sign-extended", out);
	fputc(']', out);
}

void rtit_print_fields(FILE *out, enum rtit_dialect dialect,
		       const struct rtit_pktdec_item *it)
{
	const struct rtit_packet *p = &it->pkt;

	if (rtit_pkt_has_ip(p->type)) {
		print_ip(out, dialect, it);
		return;
	}
	switch (p->type) {
	case RTIT_R_TNT:
	case RTIT_PT_TNT8:
	case RTIT_PT_TNT64:
		print_tnt(out, &p->u.tnt);
		if (p->type == RTIT_R_TNT && p->u.tnt.nbits == 6)
			fputs(" full", out);
		break;
	case RTIT_R_PIP:
		fprintf(out, "cr3=0x%010" PRIx64 " cr0.pg=%u", p->u.pip.cr3, p->u.pip.pg);
		break;
	case RTIT_PT_PIP:
		fprintf(out, "cr3=0x%016" PRIx64 " nr=%u", p->u.pip.cr3, p->u.pip.nr);
		break;
	case RTIT_R_MTC:
		fprintf(out, "ctc=0x%02x range=%u (TSC[%u:%u])", p->u.mtc.ctc, p->u.mtc.rng,
			14 + 2 * p->u.mtc.rng, 7 + 2 * p->u.mtc.rng);
		break;
	case RTIT_PT_MTC:
		fprintf(out, "ctc=0x%02x", p->u.mtc.ctc);
		break;
	case RTIT_R_STS:
		fprintf(out, "acbr=%u ecbr=%u tsc=0x%010" PRIx64, p->u.sts.acbr,
			p->u.sts.ecbr, p->u.sts.tsc);
		break;
	case RTIT_R_CCP:
	case RTIT_PT_CYC:
		fprintf(out, "cycles=%" PRIu64, p->u.cyc.value);
		break;
	case RTIT_PT_MODE_EXEC: {
		unsigned b = p->u.mode.bits;
		const char *m = (b & 3) == 1 ? "64-bit" : (b & 3) == 2 ? "32-bit" :
				(b & 3) == 0 ? "16-bit" : "reserved";
		fprintf(out, "%s cs.l=%u cs.d=%u if=%u", m, b & 1, (b >> 1) & 1, (b >> 2) & 1);
		break;
	}
	case RTIT_PT_MODE_TSX:
		fprintf(out, "intx=%u abrt=%u", p->u.mode.bits & 1, (p->u.mode.bits >> 1) & 1);
		break;
	case RTIT_PT_CBR:
		fprintf(out, "ratio=%u", p->u.cbr);
		break;
	case RTIT_PT_TSC:
		fprintf(out, "tsc=0x%014" PRIx64, p->u.tsc);
		break;
	case RTIT_PT_TMA:
		fprintf(out, "ctc=0x%04x fc=0x%03x%s", p->u.tma.ctc, p->u.tma.fc,
			p->u.tma.skz84 ? " corrupted (erratum SKZ84: reserved bits set, a bogus byte"
					 " after it; no time)" : "");
		break;
	case RTIT_PT_VMCS:
		fprintf(out, "vmcs=0x%013" PRIx64 "%s", p->u.vmcs,
			p->u.vmcs == 0xffffffffff000ull ? " (no current VMCS)" : "");
		break;
	case RTIT_PT_MNT:
		fprintf(out, "payload=0x%016" PRIx64, p->u.mnt);
		break;
	case RTIT_PT_PTW:
		fprintf(out, "payload=0x%0*" PRIx64 " ip=%u", p->u.ptw.plsz ? 16 : 8,
			p->u.ptw.payload, p->u.ptw.ip);
		break;
	case RTIT_PT_EXSTOP:
	case RTIT_PT_BEP:
		fprintf(out, "ip=%u", p->u.ip_bit);
		break;
	case RTIT_PT_MWAIT:
		fprintf(out, "hints=0x%02x ext=%u", p->u.mwait.hints & 0xff, p->u.mwait.ext & 3);
		break;
	case RTIT_PT_PWRE:
		fprintf(out, "c-state=%u sub=%u hw=%u", p->u.pwre.state, p->u.pwre.sub_state, p->u.pwre.hw);
		break;
	case RTIT_PT_PWRX:
		fprintf(out, "last=%u deepest=%u wake=0x%x", p->u.pwrx.last, p->u.pwrx.deepest, p->u.pwrx.wake);
		break;
	case RTIT_PT_BBP:
		fprintf(out, "type=0x%02x (%s) items=%u bytes", p->u.bbp.type,
			rtit_pebs_block_name(p->u.bbp.type), p->u.bbp.sz ? 4 : 8);
		break;
	case RTIT_PT_BIP: {
		char nm[32];
		const char *s = rtit_pebs_item_name(p->u.bip.type, p->u.bip.id, nm, sizeof(nm));
		fprintf(out, "id=0x%02x (%s) value=0x%016" PRIx64, p->u.bip.id, s ? s : "reserved",
			p->u.bip.value);
		break;
	}
	case RTIT_PT_CFE:
		fprintf(out, "type=0x%02x vector=0x%02x ip=%u", p->u.cfe.type, p->u.cfe.vector, p->u.cfe.ip);
		break;
	case RTIT_PT_EVD:
		fprintf(out, "type=0x%02x payload=0x%016" PRIx64, p->u.evd.type, p->u.evd.payload);
		break;
	default:
		break;
	}
}

void rtit_print_line(FILE *out, enum rtit_dialect dialect,
		     const struct rtit_pktdec_item *it)
{
	int col = 0;

	fprintf(out, "%08" PRIx64 "  ", it->offset);
	for (unsigned i = 0; i < it->pkt.size; i++)
		col += fprintf(out, "%02x ", it->raw[i]);
	fprintf(out, "%*s %-11s ", 48 - col, "", rtit_pkt_name(it->pkt.type));
	rtit_print_fields(out, dialect, it);
	fputc('\n', out);
}

/* The decoded fields of a non-IP packet as JSON members (",\"k\":v"):
 * one key per field, each key with one JSON type in every packet type
 * (docs/formats.md "rtitsim dump --json", D85): the IP bit of PTW,
 * EXSTOP, BEP and CFE is "ip_bit" (0/1), never "ip" (an IP packet's
 * address string); PTW's payload size is "payload_bytes", never "bytes"
 * (every line's raw bytes). */
static void json_fields(FILE *out, const struct rtit_packet *p)
{
	const __typeof__(p->u) *u = &p->u;

	switch (p->type) {
	case RTIT_R_TNT: case RTIT_PT_TNT8: case RTIT_PT_TNT64:
		fputs(",\"tnt\":\"", out);
		for (int i = u->tnt.nbits - 1; i >= 0; i--)
			fputc((u->tnt.bits >> i) & 1 ? 'T' : 'N', out);
		fputc('"', out);
		break;
	case RTIT_R_PIP:
		fprintf(out, ",\"cr3\":\"0x%" PRIx64 "\",\"pg\":%u", u->pip.cr3, u->pip.pg);
		break;
	case RTIT_PT_PIP:
		fprintf(out, ",\"cr3\":\"0x%" PRIx64 "\",\"nr\":%u", u->pip.cr3, u->pip.nr);
		break;
	case RTIT_R_MTC:
		fprintf(out, ",\"ctc\":%u,\"range\":%u", u->mtc.ctc, u->mtc.rng);
		break;
	case RTIT_PT_MTC:
		fprintf(out, ",\"ctc\":%u", u->mtc.ctc);
		break;
	case RTIT_R_STS:
		fprintf(out, ",\"acbr\":%u,\"ecbr\":%u,\"tsc\":\"0x%" PRIx64 "\"",
			u->sts.acbr, u->sts.ecbr, u->sts.tsc);
		break;
	case RTIT_R_CCP: case RTIT_PT_CYC:
		fprintf(out, ",\"cycles\":%" PRIu64, u->cyc.value);
		break;
	case RTIT_PT_MODE_EXEC:
		fprintf(out, ",\"csl\":%u,\"csd\":%u,\"if\":%u", u->mode.bits & 1,
			(u->mode.bits >> 1) & 1, (u->mode.bits >> 2) & 1);
		break;
	case RTIT_PT_MODE_TSX:
		fprintf(out, ",\"intx\":%u,\"abrt\":%u", u->mode.bits & 1, (u->mode.bits >> 1) & 1);
		break;
	case RTIT_PT_CBR:
		fprintf(out, ",\"ratio\":%u", u->cbr);
		break;
	case RTIT_PT_TSC:
		fprintf(out, ",\"tsc\":\"0x%" PRIx64 "\"", u->tsc);
		break;
	case RTIT_PT_TMA:
		fprintf(out, ",\"ctc\":%u,\"fc\":%u%s", u->tma.ctc, u->tma.fc,
			u->tma.skz84 ? ",\"skz84\":true" : "");
		break;
	case RTIT_PT_VMCS:
		fprintf(out, ",\"vmcs\":\"0x%" PRIx64 "\"", u->vmcs);
		break;
	case RTIT_PT_MNT:
		fprintf(out, ",\"payload\":\"0x%" PRIx64 "\"", u->mnt);
		break;
	case RTIT_PT_PTW:
		fprintf(out, ",\"payload\":\"0x%" PRIx64 "\",\"payload_bytes\":%u,\"ip_bit\":%u",
			u->ptw.payload, u->ptw.plsz ? 8 : 4, u->ptw.ip);
		break;
	case RTIT_PT_EXSTOP: case RTIT_PT_BEP:
		fprintf(out, ",\"ip_bit\":%u", u->ip_bit);
		break;
	case RTIT_PT_MWAIT:
		fprintf(out, ",\"hints\":%u,\"ext\":%u", u->mwait.hints & rtit_pt_mwait_hints_mask,
			u->mwait.ext & rtit_pt_mwait_ext_mask);
		break;
	case RTIT_PT_PWRE:
		fprintf(out, ",\"cstate\":%u,\"substate\":%u,\"hw\":%u", u->pwre.state,
			u->pwre.sub_state, u->pwre.hw);
		break;
	case RTIT_PT_PWRX:
		fprintf(out, ",\"last\":%u,\"deepest\":%u,\"wake\":%u", u->pwrx.last,
			u->pwrx.deepest, u->pwrx.wake);
		break;
	case RTIT_PT_BBP:
		fprintf(out, ",\"block_type\":%u,\"item_bytes\":%u", u->bbp.type, u->bbp.sz ? 4 : 8);
		break;
	case RTIT_PT_BIP:
		{
			char nm[32];
			const char *s = rtit_pebs_item_name(u->bip.type, u->bip.id, nm, sizeof(nm));
			fprintf(out, ",\"id\":%u,\"item\":\"%s\",\"value\":\"0x%" PRIx64 "\"",
				u->bip.id, s ? s : "reserved", u->bip.value);
		}
		break;
	case RTIT_PT_CFE:
		fprintf(out, ",\"event_type\":%u,\"vector\":%u,\"ip_bit\":%u", u->cfe.type,
			u->cfe.vector, u->cfe.ip);
		break;
	case RTIT_PT_EVD:
		fprintf(out, ",\"event_type\":%u,\"payload\":\"0x%" PRIx64 "\"", u->evd.type,
			u->evd.payload);
		break;
	default:
		break;
	}
}

void rtit_print_json(FILE *out, enum rtit_dialect dialect,
		     const struct rtit_pktdec_item *it)
{
	const struct rtit_packet *p = &it->pkt;

	fprintf(out, "{\"offset\":%" PRIu64 ",\"bytes\":\"", it->offset);
	for (unsigned i = 0; i < p->size; i++)
		fprintf(out, "%02x", it->raw[i]);
	fprintf(out, "\",\"type\":\"%s\"", rtit_pkt_name(p->type));
	if (rtit_pkt_has_ip(p->type)) {
		fprintf(out, ",\"ipc\":%u", p->u.ip.ipc);
		if (dialect == RTIT_DIALECT_RTIT)
			fprintf(out, ",\"zext\":%s", p->u.ip.zext ? "true" : "false");
		fprintf(out, ",\"payload\":\"0x%" PRIx64 "\"", p->u.ip.payload);
		if (it->ip_status == 0)
			fprintf(out, ",\"ip\":\"0x%016" PRIx64 "\"", it->ip);
		else if (it->ip_status == 1)
			fputs(",\"ip\":\"suppressed\"", out);
		else
			fputs(",\"ip\":null", out);
		if (it->last_ip_valid)
			fprintf(out, ",\"last_ip\":\"0x%016" PRIx64 "\"", it->last_ip);
	} else {
		json_fields(out, p);
	}
	fputs("}\n", out);
}

int rtit_print_short(char *buf, size_t cap, enum rtit_dialect dialect,
		     const struct rtit_pktdec_item *it)
{
	const struct rtit_packet *p = &it->pkt;
	const char *name = rtit_pkt_name(p->type);
	int n;

	(void)dialect;
	if (rtit_pkt_has_ip(p->type)) {
		if (it->ip_status == 1)
			return snprintf(buf, cap, "%s suppressed", name);
		if (it->ip_status < 0)
			return snprintf(buf, cap, "%s ?", name);
		return snprintf(buf, cap, "%s 0x%" PRIx64, name, it->ip);
	}
	switch (p->type) {
	case RTIT_R_TNT: case RTIT_PT_TNT8: case RTIT_PT_TNT64: {
		char bits[64];
		unsigned k = 0;
		for (int i = p->u.tnt.nbits - 1; i >= 0 && k < sizeof(bits) - 1; i--)
			bits[k++] = (p->u.tnt.bits >> i) & 1 ? 'T' : 'N';
		bits[k] = 0;
		return snprintf(buf, cap, "TNT %s", bits);
	}
	case RTIT_R_PIP: case RTIT_PT_PIP:
		return snprintf(buf, cap, "PIP 0x%" PRIx64, p->u.pip.cr3);
	case RTIT_R_MTC: case RTIT_PT_MTC:
		return snprintf(buf, cap, "MTC 0x%x", p->u.mtc.ctc);
	case RTIT_R_CCP: case RTIT_PT_CYC:
		return snprintf(buf, cap, "%s %" PRIu64, name, p->u.cyc.value);
	case RTIT_PT_CBR:
		return snprintf(buf, cap, "CBR %u", p->u.cbr);
	case RTIT_PT_MODE_EXEC:
		n = (p->u.mode.bits & 3) == 1 ? 64 : (p->u.mode.bits & 3) == 2 ? 32 : 16;
		return snprintf(buf, cap, "MODE.Exec %d", n);
	default:
		return snprintf(buf, cap, "%s", name);
	}
}
