/*
 * opcodes_pt.h - the Intel Processor Trace packet format.
 *
 * The one home of every Intel PT opcode byte, mask, payload size and packet
 * size, built from each other.  The packet encoder and decoder include this
 * file; nothing else in the tree spells an Intel PT packet byte.
 *
 * Source: Intel SDM Vol. 3, chapter 33 (Intel Processor Trace), 33.4.2 and
 * Tables 33-16 to 33-51.
 */
#ifndef RTIT_OPCODES_PT_H
#define RTIT_OPCODES_PT_H

/* First byte (33.4.2, "Packet Summary"). */
enum rtit_pt_opcode {
	rtit_pt_opc_pad = 0x00,		/* Table 33-39 */
	rtit_pt_ext = 0x02,		/* escape to the second-byte table */

	/* TNT-8 (Table 33-16): xxxxxxx0 except 0x00 and 0x02. */
	rtit_pt_tnt8_mask = 0x01,
	rtit_pt_opc_tnt8 = 0x00,
	rtit_pt_tnt8_shr = 1,
	rtit_pt_tnt8_max_bits = 6,

	/* CYC (Table 33-33): xxxxxx11. */
	rtit_pt_cyc_mask = 0x03,
	rtit_pt_opc_cyc = 0x03,
	rtit_pt_cyc_exp = 0x04,		/* byte 0 bit 2 */
	rtit_pt_cyc_shr = 3,		/* byte 0 bits 7:3 = CycleCounter[4:0] */
	rtit_pt_cyc_ext_exp = 0x01,	/* later bytes: bit 0 */
	rtit_pt_cyc_ext_shr = 1,	/* later bytes: bits 7:1 */

	/* IP packets (Table 33-17): IPBytes[2:0] in 7:5, opcode in 4:0. */
	rtit_pt_ipc_shr = 5,
	rtit_pt_ipc_mask = 0xe0,
	rtit_pt_opm_ip = 0x1f,
	rtit_pt_opc_tip_pgd = 0x01,		/* 00001b, Table 33-21 */
	rtit_pt_opc_tip = 0x0d,		/* 01101b, Table 33-17 */
	rtit_pt_opc_tip_pge = 0x11,		/* 10001b, Table 33-20 */
	rtit_pt_opc_fup = 0x1d,		/* 11101b, Table 33-22 */

	/* Other single-byte opcodes. */
	rtit_pt_opc_tsc = 0x19,		/* Table 33-30 */
	rtit_pt_opc_mtc = 0x59,		/* Table 33-31 */
	rtit_pt_mode = 0x99,		/* Table 33-25 */

	/* BIP (Table 33-46): ID[4:0] in 7:3, 100b; only inside a block. */
	rtit_pt_bip_mask = 0x07,
	rtit_pt_opc_bip = 0x04,
	rtit_pt_bip_shr = 3,
	rtit_pt_bip_id_mask = 0x1f
};

/* Second byte after rtit_pt_ext. */
enum rtit_pt_ext_opcode {
	rtit_pt_ext_cbr = 0x03,		/* Table 33-29 */
	rtit_pt_ext_cfe = 0x13,		/* Table 33-49 */
	rtit_pt_ext_pwre = 0x22,	/* Table 33-43 */
	rtit_pt_ext_psbend = 0x23,	/* Table 33-37 */
	rtit_pt_ext_bep = 0x33,		/* Table 33-48: IP in bit 7 */
	rtit_pt_ext_pip = 0x43,		/* Table 33-24 */
	rtit_pt_ext_evd = 0x53,		/* Table 33-51 */
	rtit_pt_ext_exstop = 0x62,	/* Table 33-41: IP in bit 7 */
	rtit_pt_ext_bbp = 0x63,		/* Table 33-45 */
	rtit_pt_ext_tma = 0x73,		/* Table 33-32 */
	rtit_pt_ext_psb = 0x82,		/* Table 33-36 */
	rtit_pt_ext_stop = 0x83,	/* Table 33-28 */
	rtit_pt_ext_pwrx = 0xa2,	/* Table 33-44 */
	rtit_pt_ext_tnt64 = 0xa3,	/* Table 33-16, Long TNT */
	rtit_pt_ext_mwait = 0xc2,	/* Table 33-42 */
	rtit_pt_ext_mnt = 0xc3,		/* Table 33-38 */
	rtit_pt_ext_vmcs = 0xc8,	/* Table 33-34 */
	rtit_pt_ext_ovf = 0xf3,		/* Table 33-35 */

	/* PTW (Table 33-40): IP (7) PayloadBytes (6:5) 10010b. */
	rtit_pt_ext_ptw = 0x12,
	rtit_pt_ext_ptw_mask = 0x1f,
	rtit_pt_ptw_plsz_shr = 5,
	rtit_pt_ptw_plsz_mask = 0x3,

	/* The IP bit of PTW, EXSTOP, BEP (second byte) and CFE (third). */
	rtit_pt_ext_ip = 0x80,
	rtit_pt_ext_ip_mask = 0x7f,

	/* MNT (Table 33-38): a third opcode byte. */
	rtit_pt_ext2_mnt = 0x88
};

/* MODE leaves (Tables 33-25 to 33-27): byte 1 = Leaf[2:0] << 5 | bits. */
enum rtit_pt_mode_leaf {
	rtit_pt_mode_leaf_shr = 5,
	rtit_pt_mode_leaf_mask = 0xe0,
	rtit_pt_mode_bits_mask = 0x1f,
	rtit_pt_leaf_mode_exec = 0x0,
	rtit_pt_leaf_mode_tsx = 0x1,
	/* MODE.Exec bits: CS.L & LMA (0), CS.D (1), IF (2). */
	rtit_pt_mode_exec_csl = 0x01,
	rtit_pt_mode_exec_csd = 0x02,
	rtit_pt_mode_exec_if = 0x04,
	rtit_pt_mode_exec_rsvd = 0x18,	/* bits 4:3, Table 33-26 */
	/* MODE.TSX bits: InTX (0), TXAbort (1). */
	rtit_pt_mode_tsx_intx = 0x01,
	rtit_pt_mode_tsx_abrt = 0x02,
	rtit_pt_mode_tsx_rsvd = 0x1c	/* bits 4:2, zero in Table 33-27 */
};

/* IPBytes (Table 33-18). */
enum rtit_pt_ipc {
	rtit_pt_ipc_suppressed = 0x0,
	rtit_pt_ipc_update_16 = 0x1,
	rtit_pt_ipc_update_32 = 0x2,
	rtit_pt_ipc_sext_48 = 0x3,
	rtit_pt_ipc_update_48 = 0x4,
	rtit_pt_ipc_rsvd_5 = 0x5,
	rtit_pt_ipc_full = 0x6,
	rtit_pt_ipc_rsvd_7 = 0x7
};

/* Payload and packet sizes in bytes. */
enum rtit_pt_size {
	rtit_pt_opc_size = 1,
	rtit_pt_ext_opc_size = 2,
	rtit_pt_mnt_opc_size = 3,

	rtit_pt_pl_tnt64_size = 6,
	rtit_pt_pl_pip_size = 6,
	rtit_pt_pl_mode_size = 1,
	rtit_pt_pl_cbr_size = 2,
	rtit_pt_pl_tsc_size = 7,
	rtit_pt_pl_mtc_size = 1,
	rtit_pt_pl_tma_size = 5,
	rtit_pt_pl_vmcs_size = 5,
	rtit_pt_pl_mnt_size = 8,
	rtit_pt_pl_ptw4_size = 4,
	rtit_pt_pl_ptw8_size = 8,
	rtit_pt_pl_mwait_size = 8,
	rtit_pt_pl_pwre_size = 2,
	rtit_pt_pl_pwrx_size = 5,
	rtit_pt_pl_bbp_size = 1,
	rtit_pt_pl_bip4_size = 4,
	rtit_pt_pl_bip8_size = 8,
	rtit_pt_pl_cfe_size = 2,
	rtit_pt_pl_evd_size = 9,
	rtit_pt_pl_ip_max_size = 8,
	rtit_pt_psb_repeat = 8,		/* 02 82 eight times */

	rtit_pt_pad_size = rtit_pt_opc_size,
	rtit_pt_tnt8_size = rtit_pt_opc_size,
	rtit_pt_tnt64_size = rtit_pt_ext_opc_size + rtit_pt_pl_tnt64_size,
	rtit_pt_ip_max_size = rtit_pt_opc_size + rtit_pt_pl_ip_max_size,
	rtit_pt_pip_size = rtit_pt_ext_opc_size + rtit_pt_pl_pip_size,
	rtit_pt_mode_size = rtit_pt_opc_size + rtit_pt_pl_mode_size,
	rtit_pt_stop_size = rtit_pt_ext_opc_size,
	rtit_pt_cbr_size = rtit_pt_ext_opc_size + rtit_pt_pl_cbr_size,
	rtit_pt_tsc_size = rtit_pt_opc_size + rtit_pt_pl_tsc_size,
	rtit_pt_mtc_size = rtit_pt_opc_size + rtit_pt_pl_mtc_size,
	rtit_pt_tma_size = rtit_pt_ext_opc_size + rtit_pt_pl_tma_size,
	rtit_pt_cyc_max_size = 10,	/* 5 + 9*7 >= 64 value bits */
	rtit_pt_vmcs_size = rtit_pt_ext_opc_size + rtit_pt_pl_vmcs_size,
	rtit_pt_ovf_size = rtit_pt_ext_opc_size,
	rtit_pt_psb_size = rtit_pt_ext_opc_size * rtit_pt_psb_repeat,
	rtit_pt_psbend_size = rtit_pt_ext_opc_size,
	rtit_pt_mnt_size = rtit_pt_mnt_opc_size + rtit_pt_pl_mnt_size,
	rtit_pt_ptw_min_size = rtit_pt_ext_opc_size + rtit_pt_pl_ptw4_size,
	rtit_pt_ptw_max_size = rtit_pt_ext_opc_size + rtit_pt_pl_ptw8_size,
	rtit_pt_exstop_size = rtit_pt_ext_opc_size,
	rtit_pt_mwait_size = rtit_pt_ext_opc_size + rtit_pt_pl_mwait_size,
	rtit_pt_pwre_size = rtit_pt_ext_opc_size + rtit_pt_pl_pwre_size,
	rtit_pt_pwrx_size = rtit_pt_ext_opc_size + rtit_pt_pl_pwrx_size,
	rtit_pt_bbp_size = rtit_pt_ext_opc_size + rtit_pt_pl_bbp_size,
	rtit_pt_bip_max_size = rtit_pt_opc_size + rtit_pt_pl_bip8_size,
	rtit_pt_bep_size = rtit_pt_ext_opc_size,
	rtit_pt_cfe_size = rtit_pt_ext_opc_size + rtit_pt_pl_cfe_size,
	rtit_pt_evd_size = rtit_pt_ext_opc_size + rtit_pt_pl_evd_size
};

/* Field layouts inside payloads. */
enum rtit_pt_fields {
	/* PIP (Table 33-24): payload48 = CR3[51:5] << 1 | NR. */
	rtit_pt_pip_nr = 0x1,
	rtit_pt_pip_shr = 1,
	rtit_pt_pip_shl = 5,
	/* VMCS (Table 33-34): payload = pointer[51:12]. */
	rtit_pt_vmcs_shl = 12,
	/* TMA (Table 33-32): FastCounter[8] in bit 0 of byte 6. */
	rtit_pt_tma_fc_bits = 9,
	/* PWRE (Table 33-43): byte 2 HW (7); byte 3 state (7:4) sub (3:0). */
	rtit_pt_pwre_hw = 0x80,
	rtit_pt_pwre_state_shr = 4,
	rtit_pt_pwre_sub_mask = 0x0f,
	/* PWRX (Table 33-44): byte 2 last (7:4) deepest (3:0); byte 3 wake (3:0). */
	rtit_pt_pwrx_last_shr = 4,
	rtit_pt_pwrx_deepest_mask = 0x0f,
	rtit_pt_pwrx_wake_mask = 0x0f,
	rtit_pt_pwrx_wr_int = 0x1,
	rtit_pt_pwrx_wr_timer = 0x2,
	rtit_pt_pwrx_wr_store = 0x4,
	rtit_pt_pwrx_wr_hw = 0x8,
	/* BBP (Table 33-45): SZ (7), Type[4:0]. */
	rtit_pt_bbp_sz = 0x80,
	rtit_pt_bbp_type_mask = 0x1f,
	/* CFE (Table 33-49): IP (7), Type[4:0]; then Vector. */
	rtit_pt_cfe_type_mask = 0x1f,
	/* EVD (Table 33-51): Type[5:0]. */
	rtit_pt_evd_type_mask = 0x3f,
	/* MWAIT (Table 33-42): hints byte 2, EXT[1:0] in byte 6. */
	rtit_pt_mwait_hints_mask = 0xff,
	rtit_pt_mwait_ext_mask = 0x3
};

/* CFE types (Table 33-50). */
enum rtit_pt_cfe_type {
	rtit_pt_cfe_intr = 1,		/* interrupt, exception, INT n */
	rtit_pt_cfe_iret = 2,
	rtit_pt_cfe_smi = 3,
	rtit_pt_cfe_rsm = 4,
	rtit_pt_cfe_sipi = 5,		/* vector = the SIPI vector, no FUP */
	rtit_pt_cfe_init = 6,		/* FUP(NLIP) */
	rtit_pt_cfe_vmentry = 7,
	rtit_pt_cfe_vmexit = 8,
	rtit_pt_cfe_vmexit_intr = 9,	/* vector: the event's */
	rtit_pt_cfe_shutdown = 0xa,
	rtit_pt_cfe_uintr = 0xc,	/* vector = the user-interrupt vector */
	rtit_pt_cfe_uiret = 0xd		/* FUP(CLIP) */
};

/* BBP types (Table 33-45): what the items of a block hold (Table 33-47). */
enum rtit_pt_bbp_type {
	rtit_pt_bbp_gpr = 0x01,		/* general-purpose registers */
	rtit_pt_bbp_pebs_basic = 0x04,
	rtit_pt_bbp_pebs_mem = 0x05,
	rtit_pt_bbp_lbr0 = 0x08,
	rtit_pt_bbp_lbr1 = 0x09,
	rtit_pt_bbp_lbr2 = 0x0a,
	rtit_pt_bbp_xmm = 0x10
};

/* EVD types (Table 33-51). */
enum rtit_pt_evd_type {
	rtit_pt_evd_pfa = 0,		/* page-fault linear address (CR2) */
	rtit_pt_evd_vmxq = 1,		/* VMX exit qualification */
	rtit_pt_evd_vmxr = 2		/* VMX exit reason */
};

/* Width of MTC's CTC payload and of TSC's payload (Tables 33-31, 33-30). */
enum { rtit_pt_tsc_bits = 56, rtit_pt_tnt64_max_bits = 47 };

#endif /* RTIT_OPCODES_PT_H */
