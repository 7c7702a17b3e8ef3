/*
 * pebs_names.c - the names of the packet blocks and their items (SDM
 * Table 33-45 BBP types, Table 33-47 BIP encodings), for dumps.
 */
#include <stdio.h>

#include "rtit/pebs.h"

const char *rtit_pebs_block_name(uint8_t type)
{
	switch (type) {
	case rtit_pt_bbp_gpr: return "General-Purpose Registers";
	case rtit_pt_bbp_pebs_basic: return "PEBS Basic";
	case rtit_pt_bbp_pebs_mem: return "PEBS Memory";
	case rtit_pt_bbp_lbr0: return "LBR Block 0";
	case rtit_pt_bbp_lbr1: return "LBR Block 1";
	case rtit_pt_bbp_lbr2: return "LBR Block 2";
	case rtit_pt_bbp_xmm: return "XMM Registers";
	default: return "Reserved";
	}
}

const char *rtit_pebs_item_name(uint8_t type, uint8_t id, char *buf, size_t cap)
{
	/* Table 33-47 writes the GPRs R/EFLAGS, R/EIP, R/EAX...: the 64-bit
	 * names here (4-byte items hold the E registers) */
	static const char *const gpr[18] = {
		"RFLAGS", "RIP", "RAX", "RCX", "RDX", "RBX", "RSP", "RBP", "RSI", "RDI",
		"R8", "R9", "R10", "R11", "R12", "R13", "R14", "R15",
	};
	static const char *const basic[3] = { "Instruction Pointer", "Applicable Counters",
					       "Timestamp" };
	static const char *const mem[4] = { "MemAccessAddress", "MemAuxInfo", "MemAccessLatency",
					     "TSXAuxInfo" };
	static const char *const lbr[3] = { "FROM_IP", "TO_IP", "INFO" };

	id &= rtit_pt_bip_id_mask;
	switch (type) {
	case rtit_pt_bbp_gpr:
		return id < 18 ? gpr[id] : NULL;
	case rtit_pt_bbp_pebs_basic:
		return id < 3 ? basic[id] : NULL;
	case rtit_pt_bbp_pebs_mem:
		return id < 4 ? mem[id] : NULL;
	case rtit_pt_bbp_lbr0: case rtit_pt_bbp_lbr1: case rtit_pt_bbp_lbr2: {
		/* three items per entry, 32 items per block: LBR_1's first
		 * item is LBR[TOS-10]_INFO */
		unsigned g = 32u * (unsigned)(type - rtit_pt_bbp_lbr0) + id;
		snprintf(buf, cap, "LBR[TOS-%u]_%s", g / 3, lbr[g % 3]);
		return buf;
	}
	case rtit_pt_bbp_xmm:
		snprintf(buf, cap, "XMM%u_Q%u", id / 2u, id % 2u);
		return buf;
	default:
		return NULL;
	}
}
