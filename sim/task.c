/*
 * task.c - hardware task switching (SDM Vol. 3 chapter 7, mode 32 only):
 * the declared tasks, their TSS images, far JMP/CALL and task gates to
 * them, and the scenario's task setup.
 */
#include <stdio.h>
#include <inttypes.h>

#include "sim_internal.h"

int sim_task_of(const struct sim_model *m, uint16_t sel)
{
	for (int i = 0; i < m->ntasks; i++)
		if (m->tasks[i].sel == (sel & 0xfff8))
			return i;
	return -1;
}

/* 32-bit TSS fields (SDM Vol. 3 Figure 7-2). */
enum { TSS_LINK = 0x00, TSS_CR3 = 0x1c, TSS_EIP = 0x20, TSS_EFLAGS = 0x24, TSS_EAX = 0x28,
       TSS_ES = 0x48, TSS_CS = 0x4c, TSS_SS = 0x50, TSS_SIZE = 104 };

/*
 * Switches from the current task to task @to (SDM Vol. 3 7.3, steps 8-14):
 * the outgoing state, with EIP = @ret, into the current TSS (EFLAGS.NT
 * cleared in that image for a JMP); with @nest (CALL, interrupt) the new
 * TSS's back link = the old selector and NT set; the old task stays busy
 * unless @jmp.  Then CR3, EIP, EFLAGS, EAX-EDI and the CS/SS selectors
 * from the new TSS, CPL = CS.RPL, CR0.TS set, TR = @to.  Segment bases
 * stay flat (docs/sim.md).  The caller checked TR and the busy bit.
 * Returns the new EIP, or UINT64_MAX with the run stopped.
 */
uint64_t sim_task_switch(struct rtit_sim *sim, int to, uint64_t ret, bool nest, bool jmp)
{
	struct sim_model *m = &sim->m;
	struct sim_task *o = &m->tasks[m->tr], *n = &m->tasks[to];
	uint32_t old[TSS_SIZE / 4], nw[TSS_SIZE / 4];
	static const int segs[6] = { UC_X86_REG_ES, UC_X86_REG_CS, UC_X86_REG_SS,
				     UC_X86_REG_DS, UC_X86_REG_FS, UC_X86_REG_GS };

	if (uc_mem_read(sim->uc, o->tss, old, sizeof(old)) != UC_ERR_OK ||
	    uc_mem_read(sim->uc, n->tss, nw, sizeof(nw)) != UC_ERR_OK) {
		sim_stop_with(sim, RTIT_SIM_STOP_FAULT, ret, "task switch to 0x%x: a TSS is not"
			  " mapped", n->sel);
		return UINT64_MAX;
	}
	uint32_t fl = (uint32_t)sim_reg_get(sim, R_FLAGS);
	old[TSS_EIP / 4] = (uint32_t)ret;
	old[TSS_EFLAGS / 4] = jmp ? fl & ~EFL_NT : fl;
	for (int r = R_AX; r <= R_DI; r++)
		old[TSS_EAX / 4 + r] = (uint32_t)sim_reg_get(sim, r);
	for (int i = 0; i < 6; i++) {
		uint64_t v = 0;
		uc_reg_read(sim->uc, segs[i], &v);
		old[TSS_ES / 4 + i] = i == 1 ? m->cs : i == 2 ? m->ss : (uint32_t)(v & 0xffff);
	}
	if (nest)
		nw[TSS_LINK / 4] = o->sel;
	if (uc_mem_write(sim->uc, o->tss, old, sizeof(old)) != UC_ERR_OK ||
	    (nest && uc_mem_write(sim->uc, n->tss, nw, 4) != UC_ERR_OK)) {
		sim_stop_with(sim, RTIT_SIM_STOP_FAULT, ret, "task switch to 0x%x: a TSS is not"
			  " writable", n->sel);
		return UINT64_MAX;
	}
	if (jmp)
		o->busy = false;
	n->busy = true;
	m->tr = to;
	m->cr3 = nw[TSS_CR3 / 4];
	m->cr0 |= CR0_TS;
	m->cs = (uint16_t)nw[TSS_CS / 4];
	m->ss = (uint16_t)nw[TSS_SS / 4];
	m->cpl = m->cs & 3;
	m->mode = n->mode;
	for (int r = R_AX; r <= R_DI; r++)
		sim_reg_set(sim, r, nw[TSS_EAX / 4 + r]);
	sim_reg_set(sim, R_FLAGS, (nw[TSS_EFLAGS / 4] | EFL_FIXED1 | (nest ? EFL_NT : 0)));
	sim_tmpl_on_state(sim);
	uint64_t eip = nw[TSS_EIP / 4];
	if (n->mode != 32 && !(sim->cfg.has_end && sim->cfg.end_ip == eip)) {
		sim_stop_with(sim, RTIT_SIM_STOP_FAULT, eip, "task 0x%x runs 16-bit code at 0x%" PRIx64
			  ", which the simulator does not execute: end the run there (end-at)",
			  n->sel, eip);
		return UINT64_MAX;
	}
	return eip;
}

/* A far JMP/CALL or task gate to task @to: #GP(selector) when it is busy
 * (SDM 7.3 step 3; a JMP or CALL to the current task too). */
bool sim_task_ok(struct rtit_sim *sim, int to, uint64_t ip, bool insn)
{
	struct sim_model *m = &sim->m;
	char why[96];
	if (m->tr < 0) {
		sim_stop_with(sim, RTIT_SIM_STOP_FAULT, ip, "task switch to 0x%x at 0x%" PRIx64
			  ": no current task (scenario 'tr')", m->tasks[to].sel, ip);
		return false;
	}
	if (!m->tasks[to].busy)
		return true;
	snprintf(why, sizeof(why), "task switch to busy task 0x%x", m->tasks[to].sel);
	if (insn)
		sim_exception(sim, 13, ip, m->tasks[to].sel, 0, why);
	else
		sim_stop_with(sim, RTIT_SIM_STOP_FAULT, ip, "%s through a task gate", why);
	return false;
}

/* -------------------------------------------------------------- setup */

int rtit_sim_add_task(struct rtit_sim *sim, uint16_t sel, uint64_t tss, int mode)
{
	if (!sim)
		return -RTIT_ERR_INVALID;
	struct sim_model *m = &sim->m;
	if (m->mode != 32)
		return sim_seterr(sim, -RTIT_ERR_INVALID, "tasks need mode 32: IA-32e mode has no"
			       " task switching (SDM Vol. 3 7.7)");
	if (!(sel & 0xfff8) || (sel & 4))
		return sim_seterr(sim, -RTIT_ERR_INVALID, "task selector 0x%x: not a GDT"
			       " selector other than the null one", sel);
	if (mode != 16 && mode != 32)
		return sim_seterr(sim, -RTIT_ERR_INVALID, "task 0x%x: mode must be 16 or 32", sel);
	if (sim_task_of(m, sel) >= 0 || m->ntasks == RTIT_SIM_MAX_TASKS)
		return sim_seterr(sim, -RTIT_ERR_INVALID, "task 0x%x: declared twice, or more than"
			       " %d tasks", sel, RTIT_SIM_MAX_TASKS);
	uint8_t probe[104];
	if (tss > 0xffffffffull - 103 || uc_mem_read(sim->uc, tss, probe, sizeof(probe)) != UC_ERR_OK)
		return sim_seterr(sim, -RTIT_ERR_INVALID, "task 0x%x: its TSS at 0x%" PRIx64
			       " is not 104 bytes of mapped memory", sel, tss);
	m->tasks[m->ntasks++] = (struct sim_task){ (uint16_t)(sel & 0xfff8), (uint8_t)mode, false, tss };
	return 0;
}

int rtit_sim_set_tr(struct rtit_sim *sim, uint16_t sel)
{
	if (!sim)
		return -RTIT_ERR_INVALID;
	int t = sim_task_of(&sim->m, sel);
	if (t < 0)
		return sim_seterr(sim, -RTIT_ERR_INVALID, "tr 0x%x: no such task", sel);
	if (sim->m.tr >= 0)
		sim->m.tasks[sim->m.tr].busy = false;
	sim->m.tr = t;
	sim->m.tasks[t].busy = true;	/* LTR marks it busy (SDM 7.2.4) */
	return 0;
}

int rtit_sim_set_task_gate(struct rtit_sim *sim, unsigned vector, uint16_t sel)
{
	if (!sim || vector > 255)
		return -RTIT_ERR_INVALID;
	if (sim_task_of(&sim->m, sel) < 0)
		return sim_seterr(sim, -RTIT_ERR_INVALID, "task gate for vector %u: no task 0x%x",
			       vector, sel);
	sim->m.idt_task[vector] = (uint16_t)(sel & 0xfff8);
	sim->m.idt_present[vector] = 1;
	return 0;
}

