/*
 * pebs.h - PEBS records and their Intel PT form: the performance-monitoring
 * MSRs the simulator models (SDM Vol. 3 chapter 20: 20.2 architectural
 * performance monitoring, 20.5.5.2 PEBS output to Intel PT, 20.9.2
 * adaptive PEBS), and the block items a PEBS record becomes in the trace
 * (SDM 33.4.1.1, Table 33-45 BBP types, Table 33-47 BIP encodings).
 *
 * The simulator (sim/pmu.c), the Intel PT model (encoder/pt/pt_pebs.c),
 * the flow decoder and the dump share the item list and its digest, so
 * the ground truth and the decoded flow name the same values.
 */
#ifndef RTIT_PEBS_H
#define RTIT_PEBS_H

#include <stddef.h>
#include <stdint.h>

#include "rtit/opcodes_pt.h"

/* ---- MSRs (SDM Vol. 4 Table 2-2; Vol. 3 20.2, 20.5.5.2, 20.9.2) ---- */
enum {
	RTIT_MSR_IA32_PMC0 = 0xC1,		/* 32-bit writes, sign-extended */
	RTIT_MSR_IA32_PERFEVTSEL0 = 0x186,
	RTIT_MSR_IA32_PERF_CAPABILITIES = 0x345,
	RTIT_MSR_IA32_PERF_GLOBAL_STATUS = 0x38E,
	RTIT_MSR_IA32_PERF_GLOBAL_CTRL = 0x38F,
	RTIT_MSR_IA32_PEBS_ENABLE = 0x3F1,
	RTIT_MSR_IA32_PEBS_DATA_CFG = 0x3F2,
	RTIT_MSR_IA32_A_PMC0 = 0x4C1,		/* full-width writes */
	RTIT_MSR_RELOAD_PMC0 = 0x14C1		/* reload after a PEBS record
						 * goes to Intel PT (20.5.5.2) */
};

/* Architectural LBRs (SDM Vol. 3 "Last Branch Records", architectural
 * LBR MSRs; docs/decisions.md D63): the control, the depth, and entry x's
 * FROM, TO and INFO at base + x. */
enum {
	RTIT_MSR_IA32_LBR_CTL = 0x14CE,
	RTIT_MSR_IA32_LBR_DEPTH = 0x14CF,
	RTIT_MSR_IA32_LBR_0_INFO = 0x1200,
	RTIT_MSR_IA32_LBR_0_FROM_IP = 0x1500,
	RTIT_MSR_IA32_LBR_0_TO_IP = 0x1600
};

/* The deepest LBR stack rtitsim offers (CPUID.1CH:EAX[7:0] would report
 * depths 8, 16, 24 and 32). */
#define RTIT_LBR_MAX_DEPTH 32

/* IA32_LBR_CTL: LBREn, OS (CPL 0), USR (CPL > 0), CALL_STACK (not
 * modelled: #GP), and one filter bit per branch type (the branch is
 * recorded when its type's bit is set). */
enum {
	RTIT_LBR_CTL_EN = 1u << 0,
	RTIT_LBR_CTL_OS = 1u << 1,
	RTIT_LBR_CTL_USR = 1u << 2,
	RTIT_LBR_CTL_CALL_STACK = 1u << 3,
	RTIT_LBR_CTL_JCC = 1u << 16,
	RTIT_LBR_CTL_REL_JMP = 1u << 17,
	RTIT_LBR_CTL_IND_JMP = 1u << 18,
	RTIT_LBR_CTL_REL_CALL = 1u << 19,
	RTIT_LBR_CTL_IND_CALL = 1u << 20,
	RTIT_LBR_CTL_RETURN = 1u << 21,
	RTIT_LBR_CTL_OTHER_BRANCH = 1u << 22,
	RTIT_LBR_CTL_FILTERS = 0x7fu << 16
};

/* IA32_LBR_x_INFO: the cycles since the previous entry (saturating), the
 * branch type, and the flags. */
#define RTIT_LBR_INFO_CYC_CNT 0xffffull
#define RTIT_LBR_INFO_BR_TYPE_SHIFT 56
#define RTIT_LBR_INFO_CYC_CNT_VALID (1ull << 60)
#define RTIT_LBR_INFO_TSX_ABORT (1ull << 61)
#define RTIT_LBR_INFO_IN_TSX (1ull << 62)
#define RTIT_LBR_INFO_MISPRED (1ull << 63)

/* IA32_LBR_x_INFO.BR_TYPE; OTHER_BRANCH is 1xxxb, rtitsim writes 1000b. */
enum rtit_lbr_br_type {
	RTIT_LBR_BR_JCC = 0,
	RTIT_LBR_BR_NEAR_IND_JMP = 1,
	RTIT_LBR_BR_NEAR_REL_JMP = 2,
	RTIT_LBR_BR_NEAR_IND_CALL = 3,
	RTIT_LBR_BR_NEAR_REL_CALL = 4,
	RTIT_LBR_BR_NEAR_RET = 5,
	RTIT_LBR_BR_OTHER = 8
};

/* The counter width (CPUID.0AH:EAX[23:16]) rtitsim reports. */
#define RTIT_PMU_CTR_BITS 48

/* IA32_PERFEVTSEL0 (20.2.1.1, Figure 20-1). */
enum {
	RTIT_EVTSEL_EVENT_MASK = 0xff,
	RTIT_EVTSEL_UMASK_SHIFT = 8,
	RTIT_EVTSEL_USR = 1u << 16,
	RTIT_EVTSEL_OS = 1u << 17,
	RTIT_EVTSEL_EDGE = 1u << 18,
	RTIT_EVTSEL_PC = 1u << 19,
	RTIT_EVTSEL_INT = 1u << 20,
	RTIT_EVTSEL_ANY = 1u << 21,
	RTIT_EVTSEL_EN = 1u << 22,
	RTIT_EVTSEL_INV = 1u << 23,
	RTIT_EVTSEL_CMASK_SHIFT = 24,
	/* INST_RETIRED.ANY_P (architectural event, Table 20-1) */
	RTIT_EVT_INST_RETIRED = 0xC0
};

/* PEBS groups, as IA32_PEBS_DATA_CFG bits 3:0 (SDM Vol. 3 20.9.2.1);
 * Basic is always written. */
enum {
	RTIT_PEBS_G_MEM = 1u << 0,	/* Memory Info */
	RTIT_PEBS_G_GPR = 1u << 1,	/* general-purpose registers */
	RTIT_PEBS_G_XMM = 1u << 2,	/* XMM0-15 */
	RTIT_PEBS_G_LBR = 1u << 3	/* LBRs (D63) */
};

/* IA32_PEBS_ENABLE (20.5.5.2, 20.9.2): bit 0 PEBS on PMC0, bit 60 PMI
 * after each record, bits 62:61 the output (00b DS area, 01b Intel PT). */
#define RTIT_PEBS_EN_PMC0 1ull
#define RTIT_PEBS_PMI_EACH (1ull << 60)
#define RTIT_PEBS_OUTPUT_SHIFT 61
#define RTIT_PEBS_OUTPUT_MASK (3ull << RTIT_PEBS_OUTPUT_SHIFT)
#define RTIT_PEBS_OUTPUT_PT (1ull << RTIT_PEBS_OUTPUT_SHIFT)

/* IA32_PEBS_DATA_CFG (20.9.2.1): groups in bits 3:0 (RTIT_PEBS_G_*),
 * LBR entries - 1 in bits 31:24. */
#define RTIT_PEBS_CFG_GROUPS 0xfull
#define RTIT_PEBS_CFG_LBR_SHIFT 24
#define RTIT_PEBS_CFG_LBR_MASK (0xffull << RTIT_PEBS_CFG_LBR_SHIFT)

/* BBP types: enum rtit_pt_bbp_type, opcodes_pt.h (Table 33-45). */

/* One block item (Table 33-47): the BBP type it belongs to, its BIP ID,
 * whether its block has 4-byte items (BBP.SZ), and the value (the lower 4
 * bytes only when sz4). */
struct rtit_pebs_item {
	uint8_t type, id;
	uint8_t sz4;
	uint64_t value;
};

/* At most 18 GPRs + 3 Basic + 4 Memory + 32 XMM + 3 x 32 LBR items. */
#define RTIT_PEBS_MAX_ITEMS (57 + 3 * RTIT_LBR_MAX_DEPTH)

/* The groups bit a BBP type stands for (0: Basic or not a PEBS block). */
static inline uint8_t rtit_pebs_group_of(uint8_t type)
{
	switch (type) {
	case rtit_pt_bbp_gpr: return RTIT_PEBS_G_GPR;
	case rtit_pt_bbp_pebs_mem: return RTIT_PEBS_G_MEM;
	case rtit_pt_bbp_xmm: return RTIT_PEBS_G_XMM;
	case rtit_pt_bbp_lbr0: case rtit_pt_bbp_lbr1: case rtit_pt_bbp_lbr2: return RTIT_PEBS_G_LBR;
	default: return 0;
	}
}

/* The digest of a record's items, one item at a time from
 * RTIT_PEBS_DIGEST_INIT: FNV-1a (64-bit) over type, ID and the value's 8
 * little-endian bytes (4-byte items zero-extended); the ground truth keeps
 * its low 32 bits (RTIT_EV_PEBS's msr). */
#define RTIT_PEBS_DIGEST_INIT 0xcbf29ce484222325ull

static inline uint64_t rtit_pebs_digest_step(uint64_t h, uint8_t type, uint8_t id, uint64_t v)
{
	uint8_t b[10] = { type, id };
	for (int i = 0; i < 8; i++)
		b[2 + i] = (uint8_t)(v >> (8 * i));
	for (int i = 0; i < 10; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static inline uint32_t rtit_pebs_digest(const struct rtit_pebs_item *it, size_t n)
{
	uint64_t h = RTIT_PEBS_DIGEST_INIT;
	for (size_t i = 0; i < n; i++)
		h = rtit_pebs_digest_step(h, it[i].type, it[i].id, it[i].value);
	return (uint32_t)h;
}

/* The name of item @id of block @type (Table 33-47), e.g. "RAX",
 * "Timestamp", "XMM3_Q1", "LBR[TOS-2]_TO_IP"; NULL for a reserved type.
 * @buf (at least 24 bytes) holds the composed names. */
const char *rtit_pebs_item_name(uint8_t type, uint8_t id, char *buf, size_t cap);

/* The name of a BBP type (Table 33-45), "Reserved" for the others. */
const char *rtit_pebs_block_name(uint8_t type);

#endif /* RTIT_PEBS_H */
