/* pktcmp.c - field-by-field packet comparison for tests. */
#include <inttypes.h>
#include <stdio.h>

#include "pktcmp.h"

#define F(name, a, b) do { \
	if ((uint64_t)(a) != (uint64_t)(b)) { \
		snprintf(msg, cap, "%s %s: expected 0x%" PRIx64 ", got 0x%" PRIx64, \
			 rtit_pkt_name(want->type), name, (uint64_t)(a), (uint64_t)(b)); \
		return 1; \
	} } while (0)

int rtit_test_pkt_diff(const struct rtit_packet *want, const struct rtit_packet *got,
		       int ignore_size, char *msg, size_t cap)
{
	const __typeof__(want->u) *a = &want->u, *b = &got->u;

	if (want->type != got->type) {
		snprintf(msg, cap, "type: expected %s, got %s", rtit_pkt_name(want->type),
			 rtit_pkt_name(got->type));
		return 1;
	}
	if (!ignore_size)
		F("size", want->size, got->size);
	if (rtit_pkt_has_ip(want->type)) {
		F("ipc", a->ip.ipc, b->ip.ipc);
		F("zext", a->ip.zext, b->ip.zext);
		F("payload", a->ip.payload, b->ip.payload);
		return 0;
	}
	switch (want->type) {
	case RTIT_R_TNT: case RTIT_PT_TNT8: case RTIT_PT_TNT64:
		F("nbits", a->tnt.nbits, b->tnt.nbits);
		F("bits", a->tnt.bits, b->tnt.bits);
		break;
	case RTIT_R_PIP: case RTIT_PT_PIP:
		F("cr3", a->pip.cr3, b->pip.cr3);
		F("pg", a->pip.pg, b->pip.pg);
		F("nr", a->pip.nr, b->pip.nr);
		break;
	case RTIT_R_MTC: case RTIT_PT_MTC:
		F("ctc", a->mtc.ctc, b->mtc.ctc);
		F("rng", a->mtc.rng, b->mtc.rng);
		break;
	case RTIT_R_STS:
		F("acbr", a->sts.acbr, b->sts.acbr);
		F("ecbr", a->sts.ecbr, b->sts.ecbr);
		F("tsc", a->sts.tsc, b->sts.tsc);
		break;
	case RTIT_R_CCP: case RTIT_PT_CYC:
		F("value", a->cyc.value, b->cyc.value);
		if (!ignore_size)
			F("nbytes", a->cyc.nbytes, b->cyc.nbytes);
		break;
	case RTIT_PT_MODE_EXEC: case RTIT_PT_MODE_TSX:
		F("bits", a->mode.bits, b->mode.bits);
		break;
	case RTIT_PT_CBR: F("ratio", a->cbr, b->cbr); break;
	case RTIT_PT_TSC: F("tsc", a->tsc, b->tsc); break;
	case RTIT_PT_TMA:
		F("ctc", a->tma.ctc, b->tma.ctc);
		F("fc", a->tma.fc, b->tma.fc);
		F("skz84", a->tma.skz84, b->tma.skz84);
		break;
	case RTIT_PT_VMCS: F("vmcs", a->vmcs, b->vmcs); break;
	case RTIT_PT_MNT: F("mnt", a->mnt, b->mnt); break;
	case RTIT_PT_PTW:
		F("plsz", a->ptw.plsz, b->ptw.plsz);
		F("ip", a->ptw.ip, b->ptw.ip);
		F("payload", a->ptw.payload, b->ptw.payload);
		break;
	case RTIT_PT_EXSTOP: case RTIT_PT_BEP: F("ip", a->ip_bit, b->ip_bit); break;
	case RTIT_PT_MWAIT:
		F("hints", a->mwait.hints, b->mwait.hints);
		F("ext", a->mwait.ext, b->mwait.ext);
		break;
	case RTIT_PT_PWRE:
		F("state", a->pwre.state, b->pwre.state);
		F("sub_state", a->pwre.sub_state, b->pwre.sub_state);
		F("hw", a->pwre.hw, b->pwre.hw);
		break;
	case RTIT_PT_PWRX:
		F("last", a->pwrx.last, b->pwrx.last);
		F("deepest", a->pwrx.deepest, b->pwrx.deepest);
		F("wake", a->pwrx.wake, b->pwrx.wake);
		break;
	case RTIT_PT_BBP:
		F("sz", a->bbp.sz, b->bbp.sz);
		F("type", a->bbp.type, b->bbp.type);
		break;
	case RTIT_PT_BIP:
		F("id", a->bip.id, b->bip.id);
		F("value", a->bip.value, b->bip.value);
		break;
	case RTIT_PT_CFE:
		F("ip", a->cfe.ip, b->cfe.ip);
		F("type", a->cfe.type, b->cfe.type);
		F("vector", a->cfe.vector, b->cfe.vector);
		break;
	case RTIT_PT_EVD:
		F("type", a->evd.type, b->evd.type);
		F("payload", a->evd.payload, b->evd.payload);
		break;
	default:
		break;
	}
	return 0;
}
