/*
 * msr_pt.h - the Intel PT model-specific registers (SDM 33.2.8), the
 * CPUID leaf 14H capability profile (33.3.1, Tables 33-11/33-12) and the
 * ToPA table entry (33.2.7.2, Table 33-3).  The one home of the register
 * layout; encoder/pt/pt_caps.c and pt_msr.c implement the access rules.
 *
 * Addresses: IA32_RTIT_CTL = 570H is in the chapter; the others are from
 * SDM Vol. 4 (chapter 33 does not give them).
 */
#ifndef RTIT_MSR_PT_H
#define RTIT_MSR_PT_H

#include <stdbool.h>
#include <stdint.h>

enum rtit_pt_msr {
	RTIT_PT_MSR_OUTPUT_BASE = 0x560,	/* 33.2.8.7, Table 33-8 */
	RTIT_PT_MSR_OUTPUT_MASK_PTRS = 0x561,	/* 33.2.8.8, Table 33-9 */
	RTIT_PT_MSR_CTL = 0x570,		/* 33.2.8.2, Table 33-6 */
	RTIT_PT_MSR_STATUS = 0x571,		/* 33.2.8.4, Table 33-7 */
	RTIT_PT_MSR_CR3_MATCH = 0x572,		/* 33.2.8.6 */
	RTIT_PT_MSR_ADDR0_A = 0x580,		/* 33.2.8.5: ADDRn_A = 580H + 2n */
	RTIT_PT_MSR_ADDR0_B = 0x581,		/*           ADDRn_B = 581H + 2n */
	RTIT_PT_MSR_ADDR3_B = 0x587
};

enum { RTIT_PT_MAX_RANGES = 4 };

/* IA32_RTIT_CTL (Table 33-6). */
#define RTIT_PT_CTL_TRACE_EN	(1ull << 0)
#define RTIT_PT_CTL_CYC_EN	(1ull << 1)
#define RTIT_PT_CTL_OS		(1ull << 2)
#define RTIT_PT_CTL_USER	(1ull << 3)
#define RTIT_PT_CTL_PWR_EVT_EN	(1ull << 4)
#define RTIT_PT_CTL_FUP_ON_PTW	(1ull << 5)
#define RTIT_PT_CTL_FABRIC_EN	(1ull << 6)
#define RTIT_PT_CTL_CR3_FILTER	(1ull << 7)
#define RTIT_PT_CTL_TOPA	(1ull << 8)
#define RTIT_PT_CTL_MTC_EN	(1ull << 9)
#define RTIT_PT_CTL_TSC_EN	(1ull << 10)
#define RTIT_PT_CTL_DIS_RETC	(1ull << 11)
#define RTIT_PT_CTL_PTW_EN	(1ull << 12)
#define RTIT_PT_CTL_BRANCH_EN	(1ull << 13)
#define RTIT_PT_CTL_MTC_FREQ_SHIFT 14
#define RTIT_PT_CTL_MTC_FREQ_MASK (0xfull << 14)
#define RTIT_PT_CTL_CYC_THRESH_SHIFT 19
#define RTIT_PT_CTL_CYC_THRESH_MASK (0xfull << 19)
#define RTIT_PT_CTL_PSB_FREQ_SHIFT 24
#define RTIT_PT_CTL_PSB_FREQ_MASK (0xfull << 24)
#define RTIT_PT_CTL_EVENT_EN	(1ull << 31)
#define RTIT_PT_CTL_ADDR_CFG_SHIFT(n) (32 + 4 * (n))
#define RTIT_PT_CTL_ADDR_CFG_MASK(n) (0xfull << RTIT_PT_CTL_ADDR_CFG_SHIFT(n))
#define RTIT_PT_CTL_DIS_TNT	(1ull << 55)
#define RTIT_PT_CTL_INJECT_PSB_PMI (1ull << 56)
/* Always reserved: 18, 23, 30:28, 54:48, 63:57. */
#define RTIT_PT_CTL_RSVD	((1ull << 18) | (1ull << 23) | (0x7ull << 28) | \
				 (0x7full << 48) | (0x7full << 57))

/* ADDRn_CFG encodings (Table 33-6); 3..15 are #GP. */
enum rtit_pt_addr_cfg {
	RTIT_PT_ADDR_UNUSED = 0,
	RTIT_PT_ADDR_FILTER = 1,
	RTIT_PT_ADDR_STOP = 2
};

/* IA32_RTIT_STATUS (Table 33-7).  FilterEn, ContextEn and TriggerEn are
 * read-only: writes to them are ignored, not #GP. */
#define RTIT_PT_STATUS_FILTER_EN	(1ull << 0)
#define RTIT_PT_STATUS_CONTEXT_EN	(1ull << 1)
#define RTIT_PT_STATUS_TRIGGER_EN	(1ull << 2)
#define RTIT_PT_STATUS_ERROR		(1ull << 4)
#define RTIT_PT_STATUS_STOPPED		(1ull << 5)
#define RTIT_PT_STATUS_PEND_PSB		(1ull << 6)
#define RTIT_PT_STATUS_PEND_TOPA_PMI	(1ull << 7)
#define RTIT_PT_STATUS_BYTECNT_SHIFT	32
#define RTIT_PT_STATUS_BYTECNT_BITS	17
#define RTIT_PT_STATUS_BYTECNT_MASK	(0x1ffffull << 32)
#define RTIT_PT_STATUS_RO		(0x7ull)
#define RTIT_PT_STATUS_RSVD		((1ull << 3) | (0xffffffull << 8) | (0x7fffull << 49))

/* IA32_RTIT_CR3_MATCH (33.2.8.6): bits 4:0 reserved. */
#define RTIT_PT_CR3_MATCH_RSVD		0x1full

/* IA32_RTIT_OUTPUT_BASE (Table 33-8): [6:0] and [63:MAXPHYADDR] reserved. */
#define RTIT_PT_OUTPUT_BASE_LOW_RSVD	0x7full

/* IA32_RTIT_OUTPUT_MASK_PTRS (Table 33-9): LowerMask [6:0] forced to 1;
 * MaskOrTableOffset [31:7]; OutputOffset [63:32]. */
#define RTIT_PT_MASK_LOWER		0x7full
#define RTIT_PT_MASK_FIELD		0xffffffffull
#define RTIT_PT_MASK_TABLE_SHIFT	7
#define RTIT_PT_MASK_OFFSET_SHIFT	32

/* ToPA table entry (Table 33-3; bit positions from Figure 33-2, whose
 * drawing is not in the extracted text: END 0, INT 2, STOP 4, Size 9:6,
 * base MAXPHYADDR-1:12). */
#define RTIT_PT_TOPA_END	(1ull << 0)
#define RTIT_PT_TOPA_INT	(1ull << 2)
#define RTIT_PT_TOPA_STOP	(1ull << 4)
#define RTIT_PT_TOPA_SIZE_SHIFT	6
#define RTIT_PT_TOPA_SIZE_MASK	(0xfull << 6)
#define RTIT_PT_TOPA_BASE_SHIFT	12
#define RTIT_PT_TOPA_RSVD_LOW	((1ull << 1) | (1ull << 3) | (1ull << 5) | (3ull << 10))
enum { RTIT_PT_TOPA_ENTRY_SIZE = 8 };

/* Region size of a ToPA Size encoding: 4K << size (Table 33-3). */
static inline uint64_t rtit_pt_topa_region_size(uint64_t entry)
{
	return 4096ull << ((entry & RTIT_PT_TOPA_SIZE_MASK) >> RTIT_PT_TOPA_SIZE_SHIFT);
}

/* Bytes between PSBs for a PSBFreq encoding: 2K << n (Table 33-6). */
static inline uint64_t rtit_pt_psb_period(unsigned psbfreq) { return 2048ull << psbfreq; }

/* Cycles for a CycThresh encoding: 0 or 2^(n-1) (Table 33-6, 33.3.6). */
static inline uint64_t rtit_pt_cyc_threshold(unsigned n) { return n ? 1ull << (n - 1) : 0; }

/*
 * A CPUID leaf 14H capability profile (33.3.1, Tables 33-11, 33-12): what
 * the simulated processor enumerates.  Chosen per run; WRMSRs that use a
 * feature or encoding it lacks are #GP (33.2.8.1).
 */
struct rtit_pt_caps {
	/* CPUID.(EAX=14H,ECX=0):EBX */
	bool cr3_filter;	/* [0] */
	bool psb_cyc;		/* [1] configurable PSB, cycle-accurate mode */
	bool ip_filter;		/* [2] IP filtering, TraceStop, warm-reset preservation */
	bool mtc;		/* [3] */
	bool ptwrite;		/* [4] */
	bool power_events;	/* [5] */
	bool psb_pmi_preserve;	/* [6] InjectPsbPmiOnEnable */
	bool event_trace;	/* [7] */
	bool tnt_disable;	/* [8] */
	/* CPUID.(EAX=14H,ECX=0):ECX */
	bool topa;		/* [0] */
	bool topa_multi;	/* [1] more than one output entry per table */
	bool single_range;	/* [2] */
	bool fabric;		/* [3] trace transport */
	bool lip;		/* [31] IP payloads are LIPs */
	/* CPUID.(EAX=14H,ECX=1) */
	uint8_t num_ranges;	/* EAX[2:0] (Table 33-12, D73) */
	uint16_t mtc_periods;	/* EAX[31:16]: bit n = MTCFreq n supported */
	uint16_t cyc_thresholds;/* EBX[15:0] */
	uint16_t psb_freqs;	/* EBX[31:16] */
	/* CPUID.80000008H:EAX[7:0] */
	uint8_t maxphyaddr;
};

/* Named profiles. */
enum rtit_pt_profile {
	RTIT_PT_PROFILE_FULL = 0,	/* every feature, 4 ranges, all encodings */
	RTIT_PT_PROFILE_BASIC = 1,	/* first generation: CR3 filtering, TSC,
					 * one-entry ToPA only (33.2.7.2) */
	RTIT_PT_PROFILE_CLIENT = 2	/* a typical later client part: no event
					 * trace / TNT disable, 2 ranges, MTC
					 * periods 0,3,6,9, PSB 2K-32K */
};

/* Fills @c with a named profile; -RTIT_ERR_INVALID for an unknown one. */
int rtit_pt_caps_profile(struct rtit_pt_caps *c, int profile);

/* Looks a profile up by name ("full", "basic", "client"); -1 if unknown. */
int rtit_pt_profile_by_name(const char *name);

/* The CPUID.(EAX=14H,ECX=@subleaf) registers the profile enumerates
 * (eax, ebx, ecx, edx). */
void rtit_pt_caps_cpuid(const struct rtit_pt_caps *c, unsigned subleaf, uint32_t regs[4]);

/*
 * Whether WRMSR IA32_RTIT_CTL, @old -> @v, is allowed (33.2.8.1-3,
 * Table 33-6): reserved bits, bits of features the profile lacks,
 * unsupported MTCFreq/CycThresh/PSBFreq encodings, ADDRn_CFG 3..15 or
 * beyond the range count, ToPA/single-range availability, and no change
 * while TraceEn=1 unless the write clears TraceEn.  Returns 0 or -1 (#GP).
 */
int rtit_pt_ctl_check(const struct rtit_pt_caps *c, uint64_t old, uint64_t v);

/* Canonical 48-bit linear address (33.2.8.5). */
static inline bool rtit_pt_canonical(uint64_t a)
{
	uint64_t top = a >> 47;
	return top == 0 || top == 0x1ffff;
}

#endif /* RTIT_MSR_PT_H */
