/*
 * last_ip.c - the last-IP register of both dialects: reset, update,
 * reconstruction (decoder side) and explanation.  The compression choice
 * (encoder side) is in packet/last_ip_choose.c.
 */
#include <string.h>

#include "rtit/ip.h"
#include "rtit/bits.h"
#include "rtit/opcodes_rtit.h"
#include "rtit/opcodes_pt.h"

void rtit_last_ip_init(struct rtit_last_ip *lip, enum rtit_dialect dialect)
{
	memset(lip, 0, sizeof(*lip));
	lip->dialect = dialect;
	/* PT 33.4.2.2: LastIP starts at 0 and IPs may compress against it.
	 * RTIT 3.3.7: RTIT_LAST_LIP resets to 0 with Valid clear. */
	lip->valid = dialect == RTIT_DIALECT_PT;
}

void rtit_last_ip_on_psb(struct rtit_last_ip *lip)
{
	/* RTIT 3.3.7/3.3.14: PSB clears the entire MSR (D4).
	 * PT 33.4.2.2: LastIP "reset to zero when a PSB is sent out". */
	lip->ip = 0;
	lip->valid = lip->dialect == RTIT_DIALECT_PT;
}

void rtit_last_ip_invalidate(struct rtit_last_ip *lip)
{
	lip->ip = 0;
	lip->valid = false;
}

void rtit_last_ip_on_ip(struct rtit_last_ip *lip, uint64_t ip)
{
	/* RTIT 4.2.3.1: LAST_LIP takes the full LIP, even if it was sent
	 * compressed.  PT: LastIP = the reconstructed IP. */
	lip->ip = lip->dialect == RTIT_DIALECT_RTIT ? ip & rtit_mask(rtit_r_lip_bits) : ip;
	lip->valid = true;
}

int rtit_last_ip_expand(const struct rtit_last_ip *lip,
			const struct rtit_pkt_ip *pl, uint64_t *ip)
{
	uint64_t last, v;

	if (!lip || !pl || !ip)
		return -RTIT_ERR_INVALID;
	last = lip->ip;
	if (lip->dialect == RTIT_DIALECT_RTIT) {
		/* RTIT 4.2.3.1 / Table 18; 48-bit LIP sign-extended. */
		switch (pl->ipc) {
		case rtit_r_cnt_16:
			if (!pl->zext && !lip->valid)
				return -RTIT_ERR_NOIP;
			v = (pl->zext ? 0 : last & ~rtit_mask(16)) | (pl->payload & rtit_mask(16));
			break;
		case rtit_r_cnt_32:
			if (!pl->zext && !lip->valid)
				return -RTIT_ERR_NOIP;
			v = (pl->zext ? 0 : last & ~rtit_mask(32)) | (pl->payload & rtit_mask(32));
			break;
		case rtit_r_cnt_48:
			/* Zext with CNT=10b is never produced; ignored
			 * (RTIT Table 18 has CNT=10b only with Zext=0). */
			v = pl->payload & rtit_mask(48);
			break;
		default:
			return -RTIT_ERR_BAD_PACKET;
		}
		*ip = rtit_sext(v, rtit_r_lip_bits);
		return 0;
	}
	/* PT Table 33-18. */
	switch (pl->ipc) {
	case rtit_pt_ipc_suppressed:
		return -RTIT_ERR_INVALID;
	case rtit_pt_ipc_update_16:
		if (!lip->valid)
			return -RTIT_ERR_NOIP;
		*ip = (last & ~rtit_mask(16)) | (pl->payload & rtit_mask(16));
		return 0;
	case rtit_pt_ipc_update_32:
		if (!lip->valid)
			return -RTIT_ERR_NOIP;
		*ip = (last & ~rtit_mask(32)) | (pl->payload & rtit_mask(32));
		return 0;
	case rtit_pt_ipc_sext_48:
		*ip = rtit_sext(pl->payload, 48);
		return 0;
	case rtit_pt_ipc_update_48:
		if (!lip->valid)
			return -RTIT_ERR_NOIP;
		*ip = (last & ~rtit_mask(48)) | (pl->payload & rtit_mask(48));
		return 0;
	case rtit_pt_ipc_full:
		*ip = pl->payload;
		return 0;
	default:
		return -RTIT_ERR_BAD_PACKET;
	}
}

int rtit_ip_explain(enum rtit_dialect dialect, const struct rtit_pkt_ip *pl,
		    struct rtit_ip_explain *ex)
{
	int n = rtit_ipc_payload_size(dialect, pl->ipc);

	if (n < 0)
		return n;
	memset(ex, 0, sizeof(*ex));
	ex->sent_bits = 8u * (unsigned)n;
	if (dialect == RTIT_DIALECT_RTIT) {
		ex->zext = pl->zext && pl->ipc != rtit_r_cnt_48;
		ex->from_last = !pl->zext && pl->ipc != rtit_r_cnt_48;
		ex->sext = true;	/* bit 47 into 63:48 */
		return 0;
	}
	switch (pl->ipc) {
	case rtit_pt_ipc_suppressed:
		ex->suppressed = true;
		break;
	case rtit_pt_ipc_sext_48:
		ex->sext = true;
		break;
	case rtit_pt_ipc_full:
		break;
	default:
		ex->from_last = true;
		break;
	}
	return 0;
}
