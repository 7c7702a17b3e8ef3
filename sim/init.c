/*
 * init.c - the INIT state and real mode (SDM Vol. 3 "Processor state
 * after reset/INIT", Table 10-1; Intel PT Table 33-55 cases 22-24).
 *
 * The INIT state needs CS base 0xFFFF0000 with a 16-bit code segment, a
 * SIPI CS base VV000, which Unicorn 2.0.1 cannot load through its
 * registers: unicorn.c writes them into its CPU context
 * (sim_unicorn_load_real).
 */
#include <inttypes.h>
#include <string.h>

#include "sim_internal.h"

int sim_real_load_cs(struct rtit_sim *sim, uint16_t cs_sel)
{
	return sim_unicorn_load_real(sim, cs_sel, (uint64_t)cs_sel << 4, false);
}

/*
 * SDM Vol. 3 Table 10-1, the INIT column: EFLAGS 2, EIP FFF0 (here @ip),
 * CR0 60000010H with CD and NW kept (the model's CR0 has them clear:
 * 00000010H), CR2 CR3 CR4 0, CS F000 base FFFF0000 (here the caller's),
 * the data segments 0 with base 0 and limit FFFF, EDX the processor
 * signature (the Skylake client model the simulator selects, 000506E3H),
 * the other GPRs 0, DR0-3 0, DR6 FFFF0FF0H, DR7 400H.  IA32_EFER is
 * cleared (rtitsim's reading, docs/decisions.md D56: long mode needs
 * paging, which CR0.PG = 0 turns off anyway).  MSRs otherwise keep their
 * values (the trace MSRs too: RTIT "RTIT MSRs are not cleared by INIT";
 * Intel PT clears them only on RESET, 33.3.4).
 */
int sim_init_state(struct rtit_sim *sim, uint16_t cs_sel, uint64_t cs_base, uint16_t ip)
{
	static const int gprs[] = {
		UC_X86_REG_RAX, UC_X86_REG_RBX, UC_X86_REG_RCX, UC_X86_REG_RSP,
		UC_X86_REG_RBP, UC_X86_REG_RSI, UC_X86_REG_RDI, UC_X86_REG_R8,
		UC_X86_REG_R9, UC_X86_REG_R10, UC_X86_REG_R11, UC_X86_REG_R12,
		UC_X86_REG_R13, UC_X86_REG_R14, UC_X86_REG_R15
	};
	struct sim_model *m = &sim->m;
	uint64_t zero = 0, v;
	uc_x86_msr efer = { 0xC0000080, 0 };

	m->cr0 = 0x10 | (m->cr0 & 0x60000000ull);
	m->cr2 = m->cr3 = m->cr4 = 0;
	memset(m->dr, 0, sizeof(m->dr));
	m->dr[6] = 0xFFFF0FF0ull;
	m->dr[7] = 0x400;
	m->cpl = 0;
	m->ss = 0;
	m->monitor_armed = false;
	for (size_t i = 0; i < sizeof(gprs) / sizeof(gprs[0]); i++)
		uc_reg_write(sim->uc, gprs[i], &zero);
	v = 0x000506E3ull;
	uc_reg_write(sim->uc, UC_X86_REG_RDX, &v);
	v = 2;
	uc_reg_write(sim->uc, UC_X86_REG_RFLAGS, &v);
	/* CR0.PG = 0 leaves long mode (QEMU clears LMA with it) */
	v = m->cr0;
	if (uc_reg_write(sim->uc, UC_X86_REG_CR0, &v) != UC_ERR_OK ||
	    uc_reg_write(sim->uc, UC_X86_REG_CR4, &zero) != UC_ERR_OK ||
	    uc_reg_write(sim->uc, UC_X86_REG_CR3, &zero) != UC_ERR_OK ||
	    uc_reg_write(sim->uc, UC_X86_REG_MSR, &efer) != UC_ERR_OK)
		return sim_seterr(sim, -RTIT_ERR_INTERNAL, "Unicorn refused the INIT state");
	int r = sim_unicorn_load_real(sim, cs_sel, cs_base, true);
	if (r < 0)
		return r;
	v = ip;
	uc_reg_write(sim->uc, UC_X86_REG_RIP, &v);
	m->mode = RTIT_SIM_MODE_16;
	ZydisDecoderInit(&sim->dec, ZYDIS_MACHINE_MODE_REAL_16, ZYDIS_STACK_WIDTH_16);
	sim_cache_clear(&sim->cache);
	sim->pending = 0;
	return 0;
}

/* INIT (injected event i, ip = NLIP), SDM Vol. 3 Table 10-1: on the BSP
 * the processor goes to the reset vector (CS F000, base FFFF0000, IP
 * FFF0: LIP FFFFFFF0) in real mode; on an AP (vector = 1) it waits for a
 * SIPI, which then starts it at CS = VV00, IP 0 (LIP VV000).  No time
 * passes while it waits; the next SIPI event of the scenario, whatever
 * its trigger, is the one it gets (docs/sim.md "INIT and SIPI").
 * Returns the IP to resume at, or UINT64_MAX with the run stopped. */
uint64_t sim_init_now(struct rtit_sim *sim, int i, uint64_t ip)
{
	bool ap = sim->inj[i].vector != 0;
	int s = -1;
	struct rtit_sim_rec *r;

	if (ap) {
		for (int k = 0; k < sim->ninj; k++)
			if (!sim->inj_done[k] && sim->inj[k].kind == RTIT_EV_SIPI) {
				s = k;
				break;
			}
	}
	if (sim_init_state(sim, RTIT_SIM_RESET_CS, ap ? 0 : RTIT_SIM_RESET_CS_BASE,
			   ap ? 0 : RTIT_SIM_RESET_IP) < 0) {
		sim_stop_with(sim, RTIT_SIM_STOP_ERROR, ip, "INIT at 0x%" PRIx64 ": %s", ip, sim->errmsg);
		return UINT64_MAX;
	}
	sim->irq_deferred = -1;		/* INIT clears what was pending */
	sim_tmpl_on_state(sim);
	r = sim_event_rec(sim, RTIT_EV_INIT, ip, ap ? 0 : RTIT_SIM_RESET_LIP);
	r->vector = ap;
	sim_rec_done(sim);
	if (!ap)
		return RTIT_SIM_RESET_LIP;
	if (s < 0) {
		sim_stop_with(sim, RTIT_SIM_STOP_HALTED, ip, "waiting for SIPI after INIT at 0x%"
			  PRIx64 " (no sipi event follows)", ip);
		return UINT64_MAX;
	}
	sim->inj_done[s] = true;
	uint8_t vv = sim->inj[s].vector;
	uint64_t lip = (uint64_t)vv << 12;
	if (sim_init_state(sim, (uint16_t)(vv << 8), lip, 0) < 0) {
		sim_stop_with(sim, RTIT_SIM_STOP_ERROR, ip, "SIPI: %s", sim->errmsg);
		return UINT64_MAX;
	}
	sim_tmpl_on_state(sim);
	r = sim_event_rec(sim, RTIT_EV_SIPI, lip, lip);
	r->vector = vv;
	sim_rec_done(sim);
	return lip;
}
