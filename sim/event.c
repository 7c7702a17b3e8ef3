/*
 * event.c - events: interrupts and exceptions delivered through the
 * interrupt table or a task gate with real stack frames, the AEX of an
 * enclave, and the injected events of the scenario (interrupts, NMI, SMI,
 * VM exits, clock changes, sleep, external MSR writes, INIT/SIPI...),
 * delivered between uc_emu_start calls at their instruction count or IP.
 */
#include <stdio.h>
#include <string.h>
#include <inttypes.h>

#include "sim_internal.h"

static const char *const vecname[32] = {
	"#DE", "#DB", "NMI", "#BP", "#OF", "#BR", "#UD", "#NM", "#DF", "#09",
	"#TS", "#NP", "#SS", "#GP", "#PF", "#15", "#MF", "#AC", "#MC", "#XM",
	"#VE", "#CP", "#22", "#23", "#24", "#25", "#26", "#27", "#28", "#29",
	"#SX", "#31"
};

static bool vec_has_err(int v)
{
	return v == 8 || (v >= 10 && v <= 14) || v == 17 || v == 21;
}

/* Delivers an interrupt or exception through the interrupt table with a
 * real stack frame (SDM 6.14.2: SS, RSP, RFLAGS, CS, RIP, error code in
 * 64-bit mode; 6.12.1: EFLAGS, CS, EIP after SS, ESP on a privilege change
 * in 32-bit mode).  Returns 0, or -1 with the run stopped. */
int sim_deliver(struct rtit_sim *sim, int vec, uint64_t ret_ip,
		   bool has_err, uint32_t err, const char *what)
{
	if (sim->m.mode == RTIT_SIM_MODE_16) {
		/* real mode has an IVT, not modelled (docs/sim.md) */
		sim_stop_with(sim, RTIT_SIM_STOP_FAULT, ret_ip,
			  "vector %d at 0x%" PRIx64 " in 16-bit mode: interrupts and exceptions"
			  " in real mode are not modelled (%s)", vec, ret_ip, what);
		return -1;
	}
	if (!sim->m.idt_present[vec] && sim->lx) {
		/* a Linux process: the kernel would send a signal (not
		 * delivered: the process ends) */
		const char *vn = vec < 32 ? vecname[vec] : "vector";
		sim_stop_with(sim, RTIT_SIM_STOP_FAULT, ret_ip,
			  "the program was killed by %s: %s (vector %d) at 0x%" PRIx64 ": %s",
			  sim_linux_signal(vec), vn, vec, ret_ip, what);
		return -1;
	}
	if (!sim->m.idt_present[vec]) {
		const char *vn = vec < 32 ? vecname[vec] : "vector";
		sim_stop_with(sim, RTIT_SIM_STOP_FAULT, ret_ip,
			  "unhandled %s (vector %d) at 0x%" PRIx64 ": %s", vn, vec,
			  ret_ip, what);
		return -1;
	}
	if (sim->m.idt_task[vec]) {
		/* a task gate (SDM 6.12.2): a task switch, nested; the error
		 * code goes on the new task's stack */
		int to = sim_task_of(&sim->m, sim->m.idt_task[vec]);
		uint64_t eip, tsp;
		if (!sim_task_ok(sim, to, ret_ip, false) ||
		    (eip = sim_task_switch(sim, to, ret_ip, true, false)) == UINT64_MAX)
			return -1;
		tsp = sim_reg_get(sim, R_SP);
		if (has_err && !sim_push(sim, &tsp, err, 4)) {
			sim_stop_with(sim, RTIT_SIM_STOP_FAULT, ret_ip, "double fault: the stack of"
				  " task 0x%x at 0x%" PRIx64 " is not writable", sim->m.idt_task[vec], tsp);
			return -1;
		}
		sim_reg_set(sim, R_SP, tsp);
		sim_reg_set(sim, R_IP, eip);
		sim->delivered_to = eip;
		return 0;
	}
	int w = sim->m.mode == 64 ? 8 : 4;
	uint64_t rsp = sim_reg_get(sim, R_SP), fl = sim_reg_get(sim, R_FLAGS);
	uint64_t sp = rsp;
	bool priv = sim->m.cpl == 3;
	if (priv && sim->m.rsp0)
		sp = sim->m.rsp0;
	if (sim->m.mode == 64)
		sp &= ~15ull;
	bool ok = true;
	if (sim->m.mode == 64 || priv) {
		ok = ok && sim_push(sim, &sp, sim->m.ss, w);
		ok = ok && sim_push(sim, &sp, rsp, w);
	}
	ok = ok && sim_push(sim, &sp, fl, w);
	ok = ok && sim_push(sim, &sp, sim->m.cs, w);
	ok = ok && sim_push(sim, &sp, ret_ip, w);
	if (has_err)
		ok = ok && sim_push(sim, &sp, err, w);
	if (!ok) {
		sim_stop_with(sim, RTIT_SIM_STOP_FAULT, ret_ip,
			  "double fault: stack at 0x%" PRIx64
			  " not writable while delivering vector %d at 0x%" PRIx64,
			  sp, vec, ret_ip);
		return -1;
	}
	sim_reg_set(sim, R_SP, sp);
	sim_reg_set(sim, R_FLAGS, fl & ~(uint64_t)(EFL_IF | EFL_TF));
	sim->m.cpl = 0;
	sim->m.cs = KCS;
	sim->m.ss = sim->m.mode == 64 ? 0 : KSS;
	sim_tmpl_on_state(sim);
	sim_reg_set(sim, R_IP, sim->m.idt[vec]);
	sim->delivered_to = sim->m.idt[vec];
	return 0;
}

/* ------------------------------------------------- exceptions, SGX AEX */

/*
 * An enclave-exiting event inside an enclave (SDM Vol. 3D 40.4): the AEX
 * saves the enclave's state and loads the synthetic state (sgx.c), then
 * the event is delivered as from the AEP (vector @vec, error code @err
 * when @he).  One AEX record: ip = the enclave IP (@fl: FAULT for a
 * fault's CLIP), next_ip = the handler; with @vec < 0 (an SMI or VM exit,
 * whose own records follow at the AEP) next_ip = the AEP.  D50.
 */
static int aex_event(struct rtit_sim *sim, int vec, uint64_t ip, bool he, uint32_t err,
		     uint8_t fl, const char *what)
{
	uint64_t aep = sim_sgx_aex(sim, ip), next = aep;
	struct rtit_sim_rec *r;

	sim_tmpl_on_state(sim);
	if (vec >= 0) {
		if (sim_deliver(sim, vec, aep, he, err, what) < 0)
			return -1;
		next = sim->m.idt[vec];
	}
	r = sim_rec_new(sim);
	r->kind = RTIT_SIM_EVENT;
	r->cls = RTIT_EV_AEX;
	r->ip = ip;
	r->next_ip = next;
	r->value = aep;
	r->vector = (uint8_t)(vec < 0 ? 0 : vec);
	r->flags |= fl | (he ? RTIT_SIM_F_HAS_ERR : 0);
	r->msr = err;
	r->cycles = sim->cycles;
	r->tsc = sim->tsc;
	sim->events++;
	sim_rec_done(sim);
	return 0;
}

/* Records and delivers an exception.  A fault: ip is the faulting
 * instruction, which did not retire; a trap: ip is the next instruction
 * (RTIT Table 1, PT 33.4.2.6). */
int sim_exception_at(struct rtit_sim *sim, int vec, uint64_t ip,
			uint32_t err, uint64_t cr2, const char *what, bool fault)
{
	bool he = vec_has_err(vec);
	if (sim->rtm.depth) {
		/* SDM Vol. 1 16.3.8.2: an exception inside a transaction
		 * aborts it and is not delivered; #DB and #BP say DEBUG */
		sim_tx_abort(sim, ip, vec == 1 || vec == 3 ? RTIT_RTM_ABORT_DEBUG : 0);
		return 0;
	}
	/* a handler that faults before retiring anything would loop forever
	 * without spending the instruction budget */
	if (sim->retired != sim->fault_loop_at) {
		sim->fault_loop_at = sim->retired;
		sim->fault_loop_n = 0;
	}
	if (++sim->fault_loop_n > 16) {
		sim_stop_with(sim, RTIT_SIM_STOP_FAULT, ip,
			  "fault loop: %d exceptions without a retired instruction, "
			  "last vector %d at 0x%" PRIx64 ": %s",
			  sim->fault_loop_n - 1, vec, ip, what);
		return -1;
	}
	if (vec == 14)
		sim->m.cr2 = cr2;
	if (sim->sgx.cur >= 0) {
		/* an AEX first; a #PF's CR2 loses bits 11:0 (Vol. 3D 40.4) */
		if (vec == 14)
			sim->m.cr2 = cr2 & ~0xfffull;
		if (aex_event(sim, vec, ip, he, err, fault ? RTIT_SIM_F_FAULT : 0, what) < 0)
			return -1;
		sim_flush(sim);
		return 0;
	}
	if (sim_deliver(sim, vec, ip, he, err, what) < 0)
		return -1;
	struct rtit_sim_rec *r = sim_rec_new(sim);
	r->kind = RTIT_SIM_EVENT;
	r->cls = RTIT_EV_EXCEPTION;
	r->ip = ip;
	r->next_ip = sim->delivered_to;
	r->vector = (uint8_t)vec;
	r->flags |= (fault ? RTIT_SIM_F_FAULT : 0) | (he ? RTIT_SIM_F_HAS_ERR : 0);
	r->msr = err;
	r->value = vec == 14 ? cr2 : 0;
	r->cycles = sim->cycles;
	r->tsc = sim->tsc;
	sim->events++;
	sim_rec_done(sim);
	sim_flush(sim);
	return 0;
}

int sim_exception(struct rtit_sim *sim, int vec, uint64_t ip, uint32_t err,
		     uint64_t cr2, const char *what)
{
	return sim_exception_at(sim, vec, ip, err, cr2, what, true);
}

/* ------------------------------------------------------ injected events */

struct rtit_sim_rec *sim_event_rec(struct rtit_sim *sim, int kind,
				      uint64_t ip, uint64_t next)
{
	struct rtit_sim_rec *r = sim_rec_new(sim);
	r->kind = RTIT_SIM_EVENT;
	r->cls = (uint8_t)kind;
	r->ip = ip;
	r->next_ip = next;
	r->cycles = sim->cycles;
	r->tsc = sim->tsc;
	sim->events++;
	return r;
}

int sim_inj_due_count(const struct rtit_sim *sim, uint64_t count)
{
	for (int i = 0; i < sim->ninj; i++)
		if (!sim->inj_done[i] && sim->inj[i].trigger == RTIT_SIM_AT_INSN &&
		    sim->inj[i].at == count)
			return i;
	return -1;
}

int sim_inj_due_ip(const struct rtit_sim *sim, uint64_t ip)
{
	for (int i = 0; i < sim->ninj; i++)
		if (!sim->inj_done[i] && sim->inj[i].trigger == RTIT_SIM_AT_IP &&
		    sim->inj[i].at == ip)
			return i;
	return -1;
}

/* Delivers injected event i with the flow about to execute at ip (NLIP).
 * Returns the IP to resume at, or UINT64_MAX with the run stopped. */
static uint64_t inject_now(struct rtit_sim *sim, int i, uint64_t ip)
{
	const struct rtit_sim_inject *e = &sim->inj[i];
	struct rtit_sim_rec *r;
	char why[64];
	sim->inj_done[i] = true;
	/* SDM Vol. 1 16.3.8.2: an interrupt, NMI, SMI or VM exit inside a
	 * transaction aborts it; the event is then taken at the fallback
	 * (an interrupt held by IF = 0 does neither).  An external MSR write
	 * stands for a WRMSR by other software on this core (a handler, a
	 * VMM), and WRMSR aborts (16.3.8.1): it aborts too, and the write
	 * lands at the fallback (D61; the trace could not say InTX at a
	 * TraceEn 0->1 otherwise: Table 33-27 lists no MODE.TSX for it). */
	if (sim->rtm.depth &&
	    (e->kind == RTIT_EV_NMI || e->kind == RTIT_EV_SMI || e->kind == RTIT_EV_VMEXIT ||
	     e->kind == RTIT_EV_MSR_WRITE_EXTERNAL ||
	     e->kind == RTIT_EV_INIT || (e->kind == RTIT_EV_UINTR && sim->uintr.uif &&
					 sim->m.cpl == 3) ||
	     (e->kind == RTIT_EV_EXT_INTERRUPT && (sim_reg_get(sim, R_FLAGS) & EFL_IF))))
		ip = sim_tx_abort(sim, ip, RTIT_RTM_ABORT_RETRY);
	/* SDM Vol. 3D 40: the same events inside an enclave exit it (AEX);
	 * an interrupt or NMI is then delivered as from the AEP, an SMI or
	 * VM exit happens at the AEP */
	if (sim->sgx.cur >= 0 &&
	    (e->kind == RTIT_EV_NMI || e->kind == RTIT_EV_SMI || e->kind == RTIT_EV_VMEXIT ||
	     (e->kind == RTIT_EV_EXT_INTERRUPT && (sim_reg_get(sim, R_FLAGS) & EFL_IF)))) {
		bool smi = e->kind == RTIT_EV_SMI || e->kind == RTIT_EV_VMEXIT;
		int vec = e->kind == RTIT_EV_NMI ? 2 : e->vector;
		snprintf(why, sizeof(why), "no handler for %s vector %d",
			 rtit_sim_event_name(e->kind), vec);
		if (aex_event(sim, smi ? -1 : vec, ip, false, 0, 0, why) < 0)
			return UINT64_MAX;
		if (!smi)
			return sim->m.idt[vec];
		ip = sim_reg_get(sim, R_IP);
	}
	switch (e->kind) {
	case RTIT_EV_EXT_INTERRUPT:
		if (!(sim_reg_get(sim, R_FLAGS) & EFL_IF)) {
			/* held until IF=1 (checked at block starts) */
			sim->irq_deferred = i;
			return ip;
		}
		__attribute__((fallthrough));
	case RTIT_EV_NMI: {
		int vec = e->kind == RTIT_EV_NMI ? 2 : e->vector;
		snprintf(why, sizeof(why), "no handler for %s vector %d",
			 rtit_sim_event_name(e->kind), vec);
		if (sim_deliver(sim, vec, ip, false, 0, why) < 0)
			return UINT64_MAX;
		r = sim_event_rec(sim, e->kind, ip, sim->delivered_to);
		r->vector = (uint8_t)vec;
		sim_rec_done(sim);
		return sim->delivered_to;
	}
	case RTIT_EV_SMI:
	case RTIT_EV_VMEXIT:
		/* state changes only: no SMM or VMX root code runs; a VM
		 * exit's reason, qualification and event vector are what the
		 * VMCS's exit-information fields would hold (D48) */
		r = sim_event_rec(sim, e->kind, ip, ip);
		if (e->kind == RTIT_EV_VMEXIT) {
			r->msr = e->msr;
			r->value = e->value;
			r->vector = e->vector;
		}
		sim_rec_done(sim);
		sim_clock_on_cycles(sim, e->duration);
		sim_event_rec(sim, e->kind == RTIT_EV_SMI ? RTIT_EV_RSM : RTIT_EV_VMENTRY,
			  ip, ip);
		sim_rec_done(sim);
		return ip;
	case RTIT_EV_FREQ_CHANGE:
		sim->core_ratio = (uint32_t)e->value;
		r = sim_event_rec(sim, e->kind, ip, ip);
		r->value = e->value;
		sim_rec_done(sim);
		return ip;
	case RTIT_EV_SLEEP:
		r = sim_event_rec(sim, e->kind, ip, ip);
		r->vector = e->vector;
		r->value = e->value;
		sim_rec_done(sim);
		sim->tsc += e->value;	/* the core clock stops, the TSC runs */
		r = sim_event_rec(sim, RTIT_EV_WAKE, ip, ip);
		r->vector = e->vector;
		sim_rec_done(sim);
		return ip;
	case RTIT_EV_INIT:
		return sim_init_now(sim, i, ip);
	case RTIT_EV_SIPI:
		/* SDM Vol. 3 9.4: a SIPI to a processor not waiting for one
		 * is ignored; an AP's INIT takes its SIPI at once (init_now) */
		return ip;
	case RTIT_EV_UINTR:
		/* UIRR[vector] := 1; delivered when recognised (sim_inject_due,
		 * on_block), without user interrupts never */
		if (sim->cfg.uintr)
			sim->uintr.rr |= 1ull << (e->vector & 63);
		return ip;
	case RTIT_EV_TSX_ABORT:
		/* an asynchronous abort (another agent's conflicting access);
		 * nothing without a transaction */
		return sim->rtm.depth ? sim_tx_abort(sim, ip, (uint32_t)e->value) : ip;
	case RTIT_EV_MSR_WRITE_EXTERNAL: {
		uint64_t v = e->value;
		r = sim_event_rec(sim, e->kind, ip, ip);
		r->msr = e->msr;
		r->value = v;
		struct rtit_sim_rec ctx = *r;
		sim_rec_done(sim);
		if (sim_msr_access(sim, true, e->msr, &v, &ctx) < 0) {
			sim_stop_with(sim, RTIT_SIM_STOP_ERROR, ip,
				  "external write of MSR 0x%x refused", e->msr);
			return UINT64_MAX;
		}
		return ip;
	}
	default:
		sim_stop_with(sim, RTIT_SIM_STOP_ERROR, ip, "bad injected event");
		return UINT64_MAX;
	}
}

/* Delivers every event due at ip; returns the resume IP. */
uint64_t sim_inject_due(struct rtit_sim *sim, uint64_t ip)
{
	/* first the PEBS record of the instruction that just retired */
	if (sim->retired == sim->pmu_due)
		sim_pebs_now(sim, ip);
	if (sim->irq_deferred >= 0 && sim->retired >= sim->irq_after &&
	    (sim_reg_get(sim, R_FLAGS) & EFL_IF)) {
		int i = sim->irq_deferred;
		sim->irq_deferred = -1;
		ip = inject_now(sim, i, ip);
		if (ip == UINT64_MAX)
			return ip;
	}
	if (sim->inj_due >= 0) {
		int i = sim->inj_due;
		sim->inj_due = -1;
		if (!sim->inj_done[i])
			ip = inject_now(sim, i, ip);
	}
	int i;
	while (ip != UINT64_MAX &&
	       ((i = sim_inj_due_count(sim, sim->retired)) >= 0 ||
		(i = sim_inj_due_ip(sim, ip)) >= 0))
		ip = inject_now(sim, i, ip);
	if (ip != UINT64_MAX && sim->uintr.rr && sim_uintr_due(sim))
		ip = sim_uintr_now(sim, ip);
	return ip;
}

