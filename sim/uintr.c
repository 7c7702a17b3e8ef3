/*
 * uintr.c - user interrupts (SDM Vol. 3 chapter "User Interrupts": the
 * IA32_UINTR_* MSRs, UIF, user-interrupt recognition and delivery; Vol. 2
 * UIRET, STUI, CLUI, TESTUI).  64-bit mode only, where CS base is 0.
 *
 * Not modelled: user-interrupt notification (UINV, the posted-interrupt
 * descriptor at UPIDADDR) and SENDUIPI with its target table (UITTADDR):
 * the scenario's `uintr vector=N` event sets UIRR bit N directly, as the
 * notification processing would.  CR4.UINTR is taken as 1 when the
 * simulator models user interrupts (cfg.uintr).
 */
#include "sim_internal.h"

int sim_uintr_msr(struct rtit_sim *sim, bool write, uint32_t msr, uint64_t *v)
{
	struct sim_uintr *u = &sim->uintr;
	uint64_t *p;

	if (msr < RTIT_SIM_MSR_UINTR_RR || msr > RTIT_SIM_MSR_UINTR_TT)
		return 0;
	if (!sim->cfg.uintr)
		return -1;		/* CPUID.07H.0H:EDX.UINTR = 0 */
	switch (msr) {
	case RTIT_SIM_MSR_UINTR_RR: p = &u->rr; break;
	case RTIT_SIM_MSR_UINTR_HANDLER: p = &u->handler; break;
	case RTIT_SIM_MSR_UINTR_STACKADJUST: p = &u->stackadjust; break;
	case RTIT_SIM_MSR_UINTR_MISC: p = &u->misc; break;
	case RTIT_SIM_MSR_UINTR_PD: p = &u->pd; break;
	default: p = &u->tt; break;
	}
	if (!write) {
		*v = *p;
		return 1;
	}
	/* addresses must be canonical; MISC bits 63:40 are reserved */
	if ((msr != RTIT_SIM_MSR_UINTR_RR && msr != RTIT_SIM_MSR_UINTR_MISC &&
	     (uint64_t)((int64_t)(*v << 16) >> 16) != *v) ||
	    (msr == RTIT_SIM_MSR_UINTR_MISC && (*v >> 40)))
		return -1;
	*p = *v;
	return 1;
}

bool sim_uintr_due(const struct rtit_sim *sim)
{
	const struct sim_uintr *u = &sim->uintr;
	return u->rr && u->uif && sim->m.cpl == 3 && sim->m.mode == RTIT_SIM_MODE_64;
}

static bool push64(struct rtit_sim *sim, uint64_t *sp, uint64_t v)
{
	*sp -= 8;
	return uc_mem_write(sim->uc, *sp, &v, 8) == UC_ERR_OK;
}

/*
 * User-interrupt delivery (SDM Vol. 3 "User-Interrupt Delivery"):
 *   UIRRV := the highest set bit of UIRR; UIRR[UIRRV] := 0; UIF := 0;
 *   tempRSP := RSP; RSP := UISTACKADJUST if its bit 0 is 1, else RSP -
 *   UISTACKADJUST; RSP &= ~0FH; push tempRSP, RFLAGS, RIP (the NLIP),
 *   UIRRV (zero-extended); RFLAGS.TF := RFLAGS.RF := 0; RIP := UIHANDLER.
 */
int sim_uintr_deliver(struct rtit_sim *sim, uint64_t nlip, uint64_t *handler,
		      uint8_t *vec, uint64_t *bad)
{
	struct sim_uintr *u = &sim->uintr;
	uint64_t rsp = 0, fl = 0, sp;
	uint8_t v = (uint8_t)(63 - __builtin_clzll(u->rr));

	uc_reg_read(sim->uc, UC_X86_REG_RSP, &rsp);
	uc_reg_read(sim->uc, UC_X86_REG_RFLAGS, &fl);
	sp = (u->stackadjust & 1) ? u->stackadjust : rsp - u->stackadjust;
	sp &= ~15ull;
	if (!push64(sim, &sp, rsp) || !push64(sim, &sp, fl) || !push64(sim, &sp, nlip) ||
	    !push64(sim, &sp, v)) {
		*bad = sp;
		return -1;
	}
	u->rr &= ~(1ull << v);
	u->uif = false;
	fl &= ~((1ull << 8) | (1ull << 16));	/* TF, RF */
	uc_reg_write(sim->uc, UC_X86_REG_RSP, &sp);
	uc_reg_write(sim->uc, UC_X86_REG_RFLAGS, &fl);
	*handler = u->handler;
	*vec = v;
	return 0;
}

/*
 * UIRET (SDM Vol. 2B): pop tempRIP, tempRFLAGS, tempRSP; #GP(0) if
 * tempRIP is not canonical; RFLAGS takes CF PF AF ZF SF TF DF OF NT RF AC
 * ID (254DD5H) from tempRFLAGS; RSP := tempRSP; UIF := 1.
 */
int sim_uintr_uiret(struct rtit_sim *sim, uint64_t *next)
{
	uint64_t sp = 0, rip = 0, f = 0, nsp = 0, fl = 0;

	uc_reg_read(sim->uc, UC_X86_REG_RSP, &sp);
	if (uc_mem_read(sim->uc, sp, &rip, 8) != UC_ERR_OK ||
	    uc_mem_read(sim->uc, sp + 8, &f, 8) != UC_ERR_OK ||
	    uc_mem_read(sim->uc, sp + 16, &nsp, 8) != UC_ERR_OK) {
		*next = sp;
		return -1;
	}
	if ((uint64_t)((int64_t)(rip << 16) >> 16) != rip) {
		*next = rip;
		return -2;
	}
	uc_reg_read(sim->uc, UC_X86_REG_RFLAGS, &fl);
	fl = (fl & ~0x254DD5ull) | (f & 0x254DD5ull);
	uc_reg_write(sim->uc, UC_X86_REG_RFLAGS, &fl);
	uc_reg_write(sim->uc, UC_X86_REG_RSP, &nsp);
	sim->uintr.uif = true;
	sim->m.monitor_armed = false;
	*next = rip;
	return 0;
}

/* UIRET, STUI, CLUI, TESTUI (SDM Vol. 2B; uintr.c): #UD without user
 * interrupts (Silvermont) and outside 64-bit mode.  A user interrupt they
 * make recognisable is delivered at the next block start (on_block). */
void sim_emulate_uintr(struct rtit_sim *sim, const ZydisDecodedInstruction *in, uint64_t ip)
{
	uint64_t next = ip + in->length, f;
	int r;

	if (!sim->cfg.uintr || sim->m.mode != RTIT_SIM_MODE_64) {
		sim_exception(sim, 6, ip, 0, 0, "user-interrupt instruction on a CPU without "
			  "user interrupts or outside 64-bit mode");
		return;
	}
	switch (in->mnemonic) {
	case ZYDIS_MNEMONIC_UIRET:
		r = sim_uintr_uiret(sim, &next);
		if (r == -1) {
			sim_stack_fault(sim, ip, next, false, "UIRET");
			return;
		}
		if (r == -2) {
			sim_gp_fault(sim, ip, "UIRET: the popped RIP is not canonical");
			return;
		}
		sim_tmpl_on_state(sim);
		sim_special_rec(sim, ip, in->length, RTIT_IC_UIRET, next, true);
		break;
	case ZYDIS_MNEMONIC_TESTUI:
		/* CF := UIF; OF SF ZF AF PF := 0 */
		f = sim_reg_get(sim, R_FLAGS) & ~0x8d5ull;
		sim_reg_set(sim, R_FLAGS, f | (sim->uintr.uif ? 1 : 0));
		sim_special_rec(sim, ip, in->length, RTIT_IC_OTHER, next, false);
		break;
	default:	/* STUI, CLUI */
		sim->uintr.uif = in->mnemonic == ZYDIS_MNEMONIC_STUI;
		sim_special_rec(sim, ip, in->length, RTIT_IC_OTHER, next, false);
		break;
	}
	sim_rec_done(sim);
	sim_reg_set(sim, R_IP, next);
}

/* User-interrupt delivery with the flow at @ip (NLIP): the UINTR record
 * (ip = NLIP, next_ip = UIHANDLER, vector = UIRRV).  An RTM transaction
 * aborts first, as for an interrupt.  Returns the handler, or UINT64_MAX
 * with the run stopped. */
uint64_t sim_uintr_now(struct rtit_sim *sim, uint64_t ip)
{
	uint64_t h, bad;
	uint8_t v;

	if (sim->rtm.depth)
		ip = sim_tx_abort(sim, ip, RTIT_RTM_ABORT_RETRY);
	if (sim_uintr_deliver(sim, ip, &h, &v, &bad) < 0) {
		sim_stop_with(sim, RTIT_SIM_STOP_FAULT, ip, "user-interrupt delivery at 0x%" PRIx64
			  ": stack 0x%" PRIx64 " not writable", ip, bad);
		return UINT64_MAX;
	}
	sim_tmpl_on_state(sim);
	struct rtit_sim_rec *r = sim_event_rec(sim, RTIT_EV_UINTR, ip, h);
	r->vector = v;
	sim_rec_done(sim);
	return h;
}
