/*
 * pebs_names.c - the names of the packet blocks and their items (SDM
 * Table 33-45 BBP types, Table 33-47 BIP encodings), for dumps.
 */
#include <stdio.h>

#include "rtit/pebs.h"

const char *rtit_pebs_block_name(uint8_t type)
{
	switch (type) {
	case RTIT_BBP_GPR: return "General-Purpose Registers";
	case RTIT_BBP_PEBS_BASIC: return "PEBS Basic";
	case RTIT_BBP_PEBS_MEM: return "PEBS Memory";
	case RTIT_BBP_LBR0: return "LBR Block 0";
	case RTIT_BBP_LBR1: return "LBR Block 1";
	case RTIT_BBP_LBR2: return "LBR Block 2";
	case RTIT_BBP_XMM: return "XMM Registers";
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

	id &= 0x1f;
	switch (type) {
	case RTIT_BBP_GPR:
		return id < 18 ? gpr[id] : NULL;
	case RTIT_BBP_PEBS_BASIC:
		return id < 3 ? basic[id] : NULL;
	case RTIT_BBP_PEBS_MEM:
		return id < 4 ? mem[id] : NULL;
	case RTIT_BBP_LBR0: case RTIT_BBP_LBR1: case RTIT_BBP_LBR2: {
		/* three items per entry, 32 items per block: LBR_1's first
		 * item is LBR[TOS-10]_INFO */
		unsigned g = 32u * (unsigned)(type - RTIT_BBP_LBR0) + id;
		snprintf(buf, cap, "LBR[TOS-%u]_%s", g / 3, lbr[g % 3]);
		return buf;
	}
	case RTIT_BBP_XMM:
		snprintf(buf, cap, "XMM%u_Q%u", id / 2u, id % 2u);
		return buf;
	default:
		return NULL;
	}
}
