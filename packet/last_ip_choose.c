/*
 * last_ip_choose.c - which IP compression the hardware uses.
 */
#include "rtit/ip.h"
#include "rtit/bits.h"
#include "rtit/opcodes_rtit.h"
#include "rtit/opcodes_pt.h"

/* RTIT Table 18 (4.2.3.1) as a priority function; checked row by row in
 * tests/unit/test_last_ip.c.  Match needs a valid LAST_LIP (D3); Zext is
 * preferred over match ("easier for software to reconstruct"). */
static void rtit_r_choose(const struct rtit_last_ip *lip, uint64_t ip,
			  struct rtit_pkt_ip *out)
{
	uint64_t hi = (ip >> 32) & 0xffff, mid = (ip >> 16) & 0xffff;
	uint64_t lhi = (lip->ip >> 32) & 0xffff, lmid = (lip->ip >> 16) & 0xffff;
	bool m47 = lip->valid && hi == lhi, m31 = lip->valid && mid == lmid;
	bool z47 = hi == 0, z31 = mid == 0;

	if (z47 && z31) {			/* row 3 */
		out->ipc = rtit_r_cnt_16;
		out->zext = true;
	} else if (m47 && m31) {		/* rows 1, 2 */
		out->ipc = rtit_r_cnt_16;
		out->zext = false;
	} else if (z47) {			/* rows 5, 6 */
		out->ipc = rtit_r_cnt_32;
		out->zext = true;
	} else if (m47) {			/* row 4 */
		out->ipc = rtit_r_cnt_32;
		out->zext = false;
	} else {				/* row 7 */
		out->ipc = rtit_r_cnt_48;
		out->zext = false;
	}
	out->payload = ip & rtit_mask(8u * (unsigned)rtit_ipc_payload_size(RTIT_DIALECT_RTIT, out->ipc));
}

/* PT: shortest of Table 33-18, 011b before 100b (33.4.2.2, D8);
 * or 100b before 011b, or always 110b (pt_choice, D59). */
static void pt_choose(const struct rtit_last_ip *lip, uint64_t ip,
		      struct rtit_pkt_ip *out)
{
	uint64_t last = lip->ip;
	bool u48 = lip->valid && (ip >> 48) == (last >> 48);

	out->zext = false;
	if (lip->pt_choice == RTIT_PT_IP_FULL)
		out->ipc = rtit_pt_ipc_full;
	else if (lip->valid && (ip >> 16) == (last >> 16))
		out->ipc = rtit_pt_ipc_update_16;
	else if (lip->valid && (ip >> 32) == (last >> 32))
		out->ipc = rtit_pt_ipc_update_32;
	else if (u48 && lip->pt_choice == RTIT_PT_IP_UPDATE48)
		out->ipc = rtit_pt_ipc_update_48;
	else if (rtit_sext(ip, 48) == ip)
		out->ipc = rtit_pt_ipc_sext_48;
	else if (u48)
		out->ipc = rtit_pt_ipc_update_48;
	else
		out->ipc = rtit_pt_ipc_full;
	out->payload = ip & rtit_mask(8u * (unsigned)rtit_ipc_payload_size(RTIT_DIALECT_PT, out->ipc));
}

void rtit_last_ip_choose(const struct rtit_last_ip *lip, uint64_t ip,
			 struct rtit_pkt_ip *out)
{
	if (lip->dialect == RTIT_DIALECT_RTIT)
		rtit_r_choose(lip, ip, out);
	else
		pt_choose(lip, ip, out);
}
