/*
 * opcodes_rtit.h - the RTIT (Atom Silvermont/Airmont) packet format.
 *
 * The one home of every RTIT opcode byte, mask, payload size and packet
 * size.  The packet encoder and the packet decoder both include this file;
 * nothing else in the tree spells an RTIT packet byte.
 *
 * Source: Real Time Instruction Trace Programming Reference v1.05,
 * chapter 4 and Figure 2 (first-byte decode map).
 */
#ifndef RTIT_OPCODES_RTIT_H
#define RTIT_OPCODES_RTIT_H

enum rtit_r_opcode {
	/* TNT (4.2.2, Figure 4): 0, a leading 1 (stop bit), then 1..6 bits. */
	rtit_r_tnt_max_bits = 6,
	rtit_r_tnt_full_min = 0x40,	/* leading 1 in bit 6: a full TNT */
	rtit_r_tnt_min = 0x02,		/* 0x00/0x01: no stop bit, invalid */
	rtit_r_tnt_mask = 0x80,		/* bit 7 is 0 for every TNT */

	/* FUP/TIP family (4.2.3, 4.2.4, Figures 5 and 8):
	 * 10 Event[2:0] Zext CNT[1:0]. */
	rtit_r_fup_mask = 0xc0,
	rtit_r_fup = 0x80,
	rtit_r_fup_event_shr = 3,
	rtit_r_fup_event_mask = 0x7,
	rtit_r_fup_zext = 0x04,
	rtit_r_fup_cnt_mask = 0x03,

	/* The event codes of the FUP/TIP family (4.2.4). */
	rtit_r_ev_pge = 0x0,
	rtit_r_ev_pgd = 0x1,
	rtit_r_ev_buffovf = 0x2,
	rtit_r_ev_pcc = 0x3,
	rtit_r_ev_rsvd4 = 0x4,
	rtit_r_ev_rsvd5 = 0x5,
	rtit_r_ev_tip = 0x6,		/* "Event 110b": TIP, not a FUP */
	rtit_r_ev_far = 0x7,

	rtit_r_opc_fup_pge = rtit_r_fup | (rtit_r_ev_pge << rtit_r_fup_event_shr),
	rtit_r_opc_fup_pgd = rtit_r_fup | (rtit_r_ev_pgd << rtit_r_fup_event_shr),
	rtit_r_opc_fup_buffovf = rtit_r_fup | (rtit_r_ev_buffovf << rtit_r_fup_event_shr),
	rtit_r_opc_fup_pcc = rtit_r_fup | (rtit_r_ev_pcc << rtit_r_fup_event_shr),
	rtit_r_opc_tip = rtit_r_fup | (rtit_r_ev_tip << rtit_r_fup_event_shr),
	rtit_r_opc_fup_far = rtit_r_fup | (rtit_r_ev_far << rtit_r_fup_event_shr),

	/* The 0xC0..0xFF group (Figure 2). */
	rtit_r_opc_psb = 0xc0,		/* 4.2.1, Figure 3 */
	rtit_r_opc_tracestop = 0xc1,	/* 4.2.11, Figure 10 */
	rtit_r_opc_pip = 0xc2,		/* 4.2.10, Figure 9: 1100001 PG */
	rtit_r_pip_mask = 0xfe,
	rtit_r_pip_pg = 0x01,
	rtit_r_opc_mtc = 0xc4,		/* 4.2.12, Figure 11: 110001 RNG */
	rtit_r_mtc_mask = 0xfc,
	rtit_r_mtc_rng_mask = 0x03,
	rtit_r_opc_sts = 0xd0,		/* 4.2.13, Figure 12: 1101 ACBR[5:2] */
	rtit_r_sts_mask = 0xf0,
	rtit_r_sts_acbr_hi_mask = 0x0f,

	/* Cycle count packet (4.2.14, Figure 13): no header of its own;
	 * byte 0 = CycleCount0[5:0] << 2 | CCNT. */
	rtit_r_ccp_ccnt_mask = 0x03,
	rtit_r_ccp_ccnt_rsvd = 0x0,
	rtit_r_ccp_ccnt_1 = 0x1,
	rtit_r_ccp_ccnt_2 = 0x2,
	rtit_r_ccp_ccnt_3 = 0x3,
	rtit_r_ccp_shl = 2
};

/* IP compression codes: CNT of the FUP/TIP header (4.2.3.1, Table 18). */
enum rtit_r_ipc {
	rtit_r_cnt_16 = 0x0,		/* LIP[15:0] sent */
	rtit_r_cnt_32 = 0x1,		/* LIP[31:0] sent */
	rtit_r_cnt_48 = 0x2,		/* LIP[47:0] sent */
	rtit_r_cnt_rsvd = 0x3
};

/* Payload and packet sizes in bytes. */
enum rtit_r_size {
	rtit_r_opc_size = 1,
	rtit_r_pl_psb_size = 8,		/* eight 0x00 bytes (4.2.1) */
	rtit_r_pl_pip_size = 5,		/* CR3[39:0], low byte first */
	rtit_r_pl_mtc_size = 1,		/* TSC[7+2r+7 : 7+2r] */
	rtit_r_pl_sts_size = 6,		/* ratios byte, TSC[39:0] */
	rtit_r_pl_sts_tsc_size = 5,
	rtit_r_pl_ip16_size = 2,
	rtit_r_pl_ip32_size = 4,
	rtit_r_pl_ip48_size = 6,

	rtit_r_psb_size = rtit_r_opc_size + rtit_r_pl_psb_size,
	rtit_r_tnt_size = rtit_r_opc_size,
	rtit_r_tracestop_size = rtit_r_opc_size,
	rtit_r_pip_size = rtit_r_opc_size + rtit_r_pl_pip_size,
	rtit_r_mtc_size = rtit_r_opc_size + rtit_r_pl_mtc_size,
	rtit_r_sts_size = rtit_r_opc_size + rtit_r_pl_sts_size,
	rtit_r_ip_max_size = rtit_r_opc_size + rtit_r_pl_ip48_size,
	rtit_r_ccp_max_size = 3,

	/* Longest run of 0x00 inside any packet (4.2.1): a PSB needs 8. */
	rtit_r_max_zero_run = 7
};

/* Field layout of STS byte 1 (Figure 12): ACBR[1:0] in 7:6, ECBR[5:0]. */
enum rtit_r_sts_fields {
	rtit_r_sts_acbr_lo_shr = 6,
	rtit_r_sts_ecbr_mask = 0x3f,
	rtit_r_sts_tsc_bits = 40
};

/* Width of the linear address carried by FUP/TIP (4.2.3.1). */
enum { rtit_r_lip_bits = 48 };

/* MTC payload: TSC bits [7+2*rng+7 : 7+2*rng] (4.2.12). */
#define RTIT_R_MTC_SHIFT(rng) (7u + 2u * (unsigned)(rng))

/* CCP value widths (Figure 13): CNTP[5:0], [13:6], [21:14]. */
enum { rtit_r_ccp_value_bits = 22 };

#endif /* RTIT_OPCODES_RTIT_H */
