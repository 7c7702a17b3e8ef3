/*
 * packet.c - what the packet encoder and decoder share: names, the
 * decoding context and its update, IP payload sizes, PSB search.
 */
#include <string.h>

#include "rtit/packet.h"
#include "rtit/opcodes_rtit.h"
#include "rtit/opcodes_pt.h"

static const char *const pkt_names[RTIT_PKT_TYPE_COUNT] = {
	[RTIT_PKT_INVALID] = "INVALID",
	[RTIT_R_PSB] = "PSB",
	[RTIT_R_TNT] = "TNT",
	[RTIT_R_TIP] = "TIP",
	[RTIT_R_FUP_PGE] = "FUP.PGE",
	[RTIT_R_FUP_PGD] = "FUP.PGD",
	[RTIT_R_FUP_BUFFOVF] = "FUP.BuffOvf",
	[RTIT_R_FUP_PCC] = "FUP.PCC",
	[RTIT_R_FUP_FAR] = "FUP.FAR",
	[RTIT_R_PIP] = "PIP",
	[RTIT_R_TRACESTOP] = "TraceSTOP",
	[RTIT_R_MTC] = "MTC",
	[RTIT_R_STS] = "STS",
	[RTIT_R_CCP] = "CCP",
	[RTIT_PT_PAD] = "PAD",
	[RTIT_PT_TNT8] = "TNT",
	[RTIT_PT_TNT64] = "LongTNT",
	[RTIT_PT_TIP] = "TIP",
	[RTIT_PT_TIP_PGE] = "TIP.PGE",
	[RTIT_PT_TIP_PGD] = "TIP.PGD",
	[RTIT_PT_FUP] = "FUP",
	[RTIT_PT_PIP] = "PIP",
	[RTIT_PT_MODE_EXEC] = "MODE.Exec",
	[RTIT_PT_MODE_TSX] = "MODE.TSX",
	[RTIT_PT_TRACESTOP] = "TraceStop",
	[RTIT_PT_CBR] = "CBR",
	[RTIT_PT_TSC] = "TSC",
	[RTIT_PT_MTC] = "MTC",
	[RTIT_PT_TMA] = "TMA",
	[RTIT_PT_CYC] = "CYC",
	[RTIT_PT_VMCS] = "VMCS",
	[RTIT_PT_OVF] = "OVF",
	[RTIT_PT_PSB] = "PSB",
	[RTIT_PT_PSBEND] = "PSBEND",
	[RTIT_PT_MNT] = "MNT",
	[RTIT_PT_PTW] = "PTW",
	[RTIT_PT_EXSTOP] = "EXSTOP",
	[RTIT_PT_MWAIT] = "MWAIT",
	[RTIT_PT_PWRE] = "PWRE",
	[RTIT_PT_PWRX] = "PWRX",
	[RTIT_PT_BBP] = "BBP",
	[RTIT_PT_BIP] = "BIP",
	[RTIT_PT_BEP] = "BEP",
	[RTIT_PT_CFE] = "CFE",
	[RTIT_PT_EVD] = "EVD",
};

const char *rtit_pkt_name(enum rtit_pkt_type type)
{
	if ((unsigned)type >= RTIT_PKT_TYPE_COUNT)
		return "INVALID";
	return pkt_names[type];
}

enum rtit_dialect rtit_pkt_dialect(enum rtit_pkt_type type)
{
	return type >= RTIT_PT_PAD ? RTIT_DIALECT_PT : RTIT_DIALECT_RTIT;
}

bool rtit_pkt_forbidden_in_block(enum rtit_pkt_type t)
{
	/* PT Table 33-15: packets forbidden between BBP and BEP. */
	switch (t) {
	case RTIT_PT_TNT8: case RTIT_PT_TNT64: case RTIT_PT_TIP:
	case RTIT_PT_TIP_PGE: case RTIT_PT_TIP_PGD: case RTIT_PT_MODE_EXEC:
	case RTIT_PT_MODE_TSX: case RTIT_PT_PIP: case RTIT_PT_VMCS:
	case RTIT_PT_TRACESTOP: case RTIT_PT_PSB: case RTIT_PT_PSBEND:
	case RTIT_PT_PTW: case RTIT_PT_MWAIT:
		return true;
	default:
		return false;
	}
}

int rtit_ipc_payload_size(enum rtit_dialect dialect, uint8_t ipc)
{
	if (dialect == RTIT_DIALECT_RTIT) {
		/* RTIT 4.2.3, Figure 5: CNT 00/01/10 = 2/4/6 bytes. */
		switch (ipc) {
		case rtit_r_cnt_16: return rtit_r_pl_ip16_size;
		case rtit_r_cnt_32: return rtit_r_pl_ip32_size;
		case rtit_r_cnt_48: return rtit_r_pl_ip48_size;
		default: return -RTIT_ERR_BAD_PACKET;
		}
	}
	/* PT Table 33-18. */
	switch (ipc) {
	case rtit_pt_ipc_suppressed: return 0;
	case rtit_pt_ipc_update_16: return 2;
	case rtit_pt_ipc_update_32: return 4;
	case rtit_pt_ipc_sext_48:
	case rtit_pt_ipc_update_48: return 6;
	case rtit_pt_ipc_full: return 8;
	default: return -RTIT_ERR_BAD_PACKET;
	}
}

void rtit_pkt_ctx_init(struct rtit_pkt_ctx *ctx, enum rtit_dialect dialect,
		       bool cycle_acc)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->dialect = dialect;
	ctx->cycle_acc = dialect == RTIT_DIALECT_RTIT && cycle_acc;
}

void rtit_pkt_ctx_on_sync(struct rtit_pkt_ctx *ctx)
{
	ctx->expect_ccp = false;
	ctx->in_block = false;
}

size_t rtit_psb_size(enum rtit_dialect dialect)
{
	return dialect == RTIT_DIALECT_RTIT ? rtit_r_psb_size : rtit_pt_psb_size;
}

/* True if @p (at least rtit_psb_size bytes) starts with a PSB. */
static bool is_psb(enum rtit_dialect dialect, const uint8_t *p)
{
	if (dialect == RTIT_DIALECT_RTIT) {
		/* RTIT 4.2.1: C0 followed by eight 00 bytes. */
		if (p[0] != rtit_r_opc_psb)
			return false;
		for (int i = 1; i < rtit_r_psb_size; i++)
			if (p[i])
				return false;
		return true;
	}
	/* PT Table 33-36: 02 82 repeated eight times. */
	for (int i = 0; i < rtit_pt_psb_size; i += rtit_pt_ext_opc_size)
		if (p[i] != rtit_pt_ext || p[i + 1] != rtit_pt_ext_psb)
			return false;
	return true;
}

long rtit_sync_forward(enum rtit_dialect dialect, const uint8_t *buf,
		       size_t len, size_t from)
{
	size_t n = rtit_psb_size(dialect);
	uint8_t first = dialect == RTIT_DIALECT_RTIT ? rtit_r_opc_psb : rtit_pt_ext;

	if (!buf || len < n)
		return -RTIT_ERR_NOSYNC;
	for (size_t i = from; i + n <= len; i++) {
		const uint8_t *p = memchr(buf + i, first, len - n + 1 - i);
		if (!p)
			break;
		i = (size_t)(p - buf);
		if (is_psb(dialect, p))
			return (long)i;
	}
	return -RTIT_ERR_NOSYNC;
}
