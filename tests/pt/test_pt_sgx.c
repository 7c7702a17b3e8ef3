/*
 * test_pt_sgx.c - SGX in the Intel PT model, row by row: Table 33-55 case
 * 17 (ENCLU[EENTER], [ERESUME], [EEXIT] and AEX with a debug enclave:
 * FUP(CLIP), TIP(BLIP)), Table 33-56 cases 6 and 5 (entry to an opt-out
 * enclave clears ContextEn: TIP.PGD(); EEXIT or AEX out of it:
 * TIP.PGE(BLIP)), Table 33-59 cases 17-19 (Event Trace of an AEX), and
 * 33.2.6.3 (ContextEn is 0 in a production enclave: no TNT inside).
 *
 * Records as the simulator writes them (include/rtit/sim.h): ENCLU with
 * the leaf in value and 1 (debug) or 0 (opt-out) in vector, the ENCLAVE
 * flag on every record inside; AEX from the enclave IP to the handler
 * with the AEP in value.  Code lives in 0x1000-0x1fff after a
 * TIP.PGE(0x1000) (as test_pt_table55.c): every IP packet is IPBytes
 * 001b (Table 33-18) with IP[15:0]: FUP 0x3d, TIP 0x2d, TIP.PGE 0x31;
 * TIP.PGD() is 0x01 (IPBytes 000b).  CFE (Table 33-49): 02 13, then IP
 * in bit 7 and the type (INTR = 1, Table 33-50) in bits 4:0, then the
 * vector.  The enclave is at 0x1800, the AEP at 0x1040, the handler of
 * vector 0x20 at 0x1900.
 */
#include "pt_harness.h"

static struct px h;

#define AEP 0x1040
#define HANDLER 0x1900

static size_t start(uint64_t ctl)
{
	px_init(&h);
	px_start(&h);
	px_single_range(&h);
	px_msr(&h, RTIT_PT_MSR_CTL, ctl);
	px_op(&h, 0x1000, 2);
	return h.n;
}

/* ENCLU (3 bytes) at @ip with leaf @leaf to @next; @inside: in the
 * enclave after it; @debug: a debug enclave. */
static void enclu(uint64_t ip, uint32_t leaf, uint64_t next, bool inside, bool debug)
{
	struct rtit_sim_rec r = px_rec(&h, RTIT_SIM_INSN, RTIT_IC_ENCLU, ip, 3, next, true);
	r.value = leaf;
	r.vector = debug;
	if (inside)
		r.flags |= RTIT_SIM_F_ENCLAVE;
	px_feed(&h, &r);
}

/* An instruction inside the enclave: class @cls, taken to @next or not. */
static void inside(uint8_t cls, uint64_t ip, uint8_t len, uint64_t next, bool taken)
{
	struct rtit_sim_rec r = px_rec(&h, RTIT_SIM_INSN, cls, ip, len, taken ? next : ip + len, taken);
	r.flags |= RTIT_SIM_F_ENCLAVE;
	px_feed(&h, &r);
}

/* An AEX at @ip (the interrupt's NLIP) to the handler of vector 0x20,
 * delivered as from the AEP; the handler runs at CPL @cpl. */
static void aex(uint64_t ip, uint8_t cpl)
{
	h.cpl = cpl;
	struct rtit_sim_rec r = px_rec(&h, RTIT_SIM_EVENT, RTIT_EV_AEX, ip, 0, HANDLER, true);
	r.vector = 0x20;
	r.value = AEP;
	px_feed(&h, &r);
}

/* The handler's IRETQ back to the AEP at CPL 3. */
static void iret_to_aep(void)
{
	h.cpl = 3;
	px_insn(&h, RTIT_IC_IRET, HANDLER, 2, AEP, true);
}

#define EENTER(ip, debug) enclu((ip), RTIT_SGX_EENTER, 0x1800, true, (debug))

Test(sgx, case17_eenter_eexit_debug)
{
	size_t n = start(PT_CTL_ON);
	EENTER(0x1010, true);
	/* Table 33-55 case 17: FUP(CLIP), TIP(BLIP = BASEADDR + OENTRY) */
	px_expect(&h, n, 0x3d, 0x10, 0x10, 0x2d, 0x00, 0x18);
	n = h.n;
	inside(RTIT_IC_OTHER, 0x1800, 2, 0, false);
	enclu(0x1802, RTIT_SGX_EEXIT, 0x1013, false, true);
	/* EEXIT: FUP(CLIP), TIP(BLIP = RBX) */
	px_expect(&h, n, 0x3d, 0x02, 0x18, 0x2d, 0x13, 0x10);
}

Test(sgx, case17_aex_and_eresume_debug)
{
	size_t n = start(PT_CTL_ON);
	EENTER(0x1010, true);
	n = h.n;
	inside(RTIT_IC_OTHER, 0x1800, 1, 0, false);
	aex(0x1801, 0);
	/* case 17 for the AEX: FUP(the enclave IP, Table 33-23), TIP(the
	 * handler) */
	px_expect(&h, n, 0x3d, 0x01, 0x18, 0x2d, 0x00, 0x19);
	n = h.n;
	iret_to_aep();
	enclu(AEP + 3, RTIT_SGX_ERESUME, 0x1801, true, true);
	/* IRET: TIP(AEP) (case 8); ERESUME: FUP(CLIP), TIP(the resumed IP) */
	px_expect(&h, n, 0x2d, 0x40, 0x10, 0x3d, 0x43, 0x10, 0x2d, 0x01, 0x18);
}

/* An opt-out enclave: entry clears ContextEn (Table 33-56 case 6,
 * 33.2.9.5: TIP.PGD() with no FUP), nothing inside (no TNT bit for its
 * conditional branch: 33.2.6.3), EEXIT sets it again (case 5:
 * TIP.PGE(BLIP)). */
Test(sgx, table56_case6_entry_and_case5_eexit_optout)
{
	size_t n = start(PT_CTL_ON);
	EENTER(0x1010, false);
	px_expect(&h, n, 0x01);
	n = h.n;
	inside(RTIT_IC_OTHER, 0x1800, 2, 0, false);
	inside(RTIT_IC_COND, 0x1802, 2, 0x1800, true);
	inside(RTIT_IC_INDIRECT_JMP, 0x1800, 2, 0x1810, true);
	px_expect(&h, n);
	enclu(0x1810, RTIT_SGX_EEXIT, 0x1013, false, false);
	px_expect(&h, n, 0x31, 0x13, 0x10);
}

/* AEX out of an opt-out enclave into a traced handler: TIP.PGE(BLIP)
 * (Table 33-56 case 5); ERESUME back into it: TIP.PGD() (case 6). */
Test(sgx, table56_aex_and_eresume_optout)
{
	size_t n = start(PT_CTL_ON);
	EENTER(0x1010, false);
	n = h.n;
	inside(RTIT_IC_OTHER, 0x1800, 1, 0, false);
	aex(0x1801, 0);
	px_expect(&h, n, 0x31, 0x00, 0x19);
	n = h.n;
	iret_to_aep();
	enclu(AEP + 3, RTIT_SGX_ERESUME, 0x1801, true, false);
	px_expect(&h, n, 0x2d, 0x40, 0x10, 0x01);
}

/* Table 33-59 case 17: an AEX from an opt-out enclave to a handler not
 * traced either (OS = 0, CPL 0): ContextEn 0 before and after: nothing. */
Test(sgx, table59_case17_optout_to_untraced)
{
	size_t n = start(RTIT_PT_CTL_TRACE_EN | RTIT_PT_CTL_USER | RTIT_PT_CTL_BRANCH_EN |
			 RTIT_PT_CTL_EVENT_EN);
	h.cpl = 3;
	EENTER(0x1010, false);
	n = h.n;
	aex(0x1800, 0);
	px_expect(&h, n);
}

/* Table 33-59 case 18: ContextEn 0 before (opt-out), 1 after:
 * CFE.INTR(IP=0), then BranchEn's TIP.PGE(handler). */
Test(sgx, table59_case18_optout_to_traced)
{
	size_t n = start(PT_CTL_ON | RTIT_PT_CTL_EVENT_EN);
	EENTER(0x1010, false);
	n = h.n;
	aex(0x1800, 0);
	px_expect(&h, n, 0x02, 0x13, 0x01, 0x20, 0x31, 0x00, 0x19);
}

/* Table 33-59 case 19: an AEX from a debug enclave: CFE.INTR(IP=1, Vec),
 * FUP(AEP LIP); then BranchEn's case 17 FUP(the enclave IP), TIP. */
Test(sgx, table59_case19_debug)
{
	size_t n = start(PT_CTL_ON | RTIT_PT_CTL_EVENT_EN);
	EENTER(0x1010, true);
	n = h.n;
	aex(0x1800, 0);
	px_expect(&h, n, 0x02, 0x13, 0x81, 0x20, 0x3d, 0x40, 0x10, 0x3d, 0x00, 0x18,
		  0x2d, 0x00, 0x19);
}

/* 33.2.6.3: IA32_RTIT_STATUS.ContextEn (bit 1, Table 33-7) reads 0 inside
 * an opt-out enclave, 1 inside a debug one. */
Test(sgx, status_context_en)
{
	uint64_t v = 0;
	start(PT_CTL_ON);
	EENTER(0x1010, false);
	cr_assert_eq(rtit_pt_model_msr_read(&h.m, RTIT_PT_MSR_STATUS, &v, NULL), 0);
	cr_expect_eq(v & RTIT_PT_STATUS_CONTEXT_EN, 0);
	enclu(0x1800, RTIT_SGX_EEXIT, 0x1013, false, false);
	EENTER(0x1013, true);
	cr_assert_eq(rtit_pt_model_msr_read(&h.m, RTIT_PT_MSR_STATUS, &v, NULL), 0);
	cr_expect_eq(v & RTIT_PT_STATUS_CONTEXT_EN, RTIT_PT_STATUS_CONTEXT_EN);
}
