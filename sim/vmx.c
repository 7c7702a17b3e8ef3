/*
 * vmx.c - VMLAUNCH and VMRESUME as a VM entry into the guest a scenario's
 * `vmentry` line gives (docs/sim.md "VMX", D147).  The VMCS is not in
 * guest memory: its guest RIP and CR3 are the model's; the VMM's code
 * around the entry runs as ordinary traced root-mode code.
 */
#include <inttypes.h>
#include <stdio.h>

#include "sim_internal.h"

int rtit_sim_set_vmentry(struct rtit_sim *sim, uint64_t guest_rip, uint64_t guest_cr3)
{
	sim->vmx.on = true;
	sim->vmx.nonroot = false;
	sim->vmx.guest_rip = guest_rip;
	sim->vmx.guest_cr3 = guest_cr3;
	return 0;
}

/* SDM Vol. 2B VMLAUNCH/VMRESUME, Operation: #UD outside VMX operation;
 * a VM exit in VMX non-root operation (not modelled: the run stops);
 * #GP(0) at CPL > 0; else the checks pass (VMfail is not modelled) and
 * the guest state loads (Vol. 3C 26.3): RIP, CR3.  The record is the
 * state after it (the guest's CR3), TAKEN, next_ip the guest RIP. */
void sim_emu_vmentry(struct rtit_sim *sim, const struct sim_insn *ins)
{
	const char *name = ins->in.mnemonic == ZYDIS_MNEMONIC_VMLAUNCH ? "VMLAUNCH" : "VMRESUME";
	uint64_t ip = ins->ip;
	char why[64];

	if (!sim->vmx.on) {
		snprintf(why, sizeof(why), "%s outside VMX operation (no vmentry line)", name);
		sim_exception(sim, 6, ip, 0, 0, why);
		return;
	}
	if (sim->vmx.nonroot) {
		sim_stop_with(sim, RTIT_SIM_STOP_ERROR, ip, "%s at 0x%" PRIx64 " in VMX non-root "
			      "operation (a VM exit) is not modelled", name, ip);
		return;
	}
	if (sim->m.cpl != 0) {
		snprintf(why, sizeof(why), "%s at CPL %d", name, sim->m.cpl);
		sim_gp_fault(sim, ip, why);
		return;
	}
	sim->vmx.nonroot = true;
	sim->m.cr3 = sim->vmx.guest_cr3;
	sim_tmpl_on_state(sim);
	sim_special_rec(sim, ip, ins->len, ins->si.cls, sim->vmx.guest_rip, true);
	sim_rec_done(sim);
	sim_reg_set(sim, R_IP, sim->vmx.guest_rip);
}
