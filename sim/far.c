/*
 * far.c - control transfers that change CS, CPL or the stack: INT n, IRET,
 * SYSCALL/SYSRET, SYSENTER/SYSEXIT, far JMP, far CALL and far RET (a far
 * JMP or CALL to a TSS selector switches tasks, task.c).  Segment bases
 * stay flat (docs/sim.md).
 */
#include <stdio.h>
#include <inttypes.h>

#include "sim_internal.h"
#include "linux.h"

/* INT n, INT3, INT1, INTO: a trap through the interrupt table (INTO only
 * with OF set). */
void sim_emu_int(struct rtit_sim *sim, const struct sim_insn *ins)
{
	const ZydisDecodedInstruction *in = &ins->in;
	uint64_t ip = ins->ip, next = ins->next;
	int len = ins->len;
	struct rtit_sim_rec *r;
	char why[96];

	int vec;
	switch (in->mnemonic) {
	case ZYDIS_MNEMONIC_INT3: vec = 3; break;
	case ZYDIS_MNEMONIC_INT1: vec = 1; break;
	case ZYDIS_MNEMONIC_INTO: vec = 4; break;
	default: vec = (int)in->raw.imm[0].value.u & 0xff; break;
	}
	if (vec == 4 && !(sim_reg_get(sim, R_FLAGS) & EFL_OF)) {
		r = sim_special_rec(sim, ip, len, ins->si.cls, next, false);
		r->vector = 4;
		sim_rec_done(sim);
		sim_reg_set(sim, R_IP, next);
		return;
	}
	snprintf(why, sizeof(why), "INT 0x%x has no handler", vec);
	/* traps: the saved IP is the next instruction */
	if (sim_deliver(sim, vec, next, false, 0, why) < 0)
		return;
	r = sim_special_rec(sim, ip, len, ins->si.cls, sim->delivered_to, true);
	r->vector = (uint8_t)vec;
	sim_rec_done(sim);
}

/* IRET: RIP, CS, RFLAGS popped; SS:RSP too in 64-bit mode or to an
 * outer privilege level. */
void sim_emu_iret(struct rtit_sim *sim, const struct sim_insn *ins)
{
	const ZydisDecodedInstruction *in = &ins->in;
	uint64_t ip = ins->ip;
	int len = ins->len;
	struct sim_model *m = &sim->m;
	uint64_t sp;

	uint64_t nip, cs, fl, nsp = 0, ss = 0;
	int pw = in->operand_width / 8;
	sp = sim_reg_get(sim, R_SP);
	bool ok = sim_pop(sim, &sp, &nip, pw) && sim_pop(sim, &sp, &cs, pw) &&
		  sim_pop(sim, &sp, &fl, pw);
	bool outer = m->mode == 64 || (int)(cs & 3) > m->cpl;
	if (ok && outer)
		ok = sim_pop(sim, &sp, &nsp, pw) && sim_pop(sim, &sp, &ss, pw);
	if (!ok) {
		sim_stack_fault(sim, ip, sp, false, "IRET");
		return;
	}
	m->cpl = (int)(cs & 3);
	m->cs = (uint16_t)cs;
	if (outer) {
		m->ss = (uint16_t)ss;
		sim_reg_set(sim, R_SP, nsp);
	} else {
		sim_reg_set(sim, R_SP, sp);
	}
	sim_reg_set(sim, R_FLAGS, fl | 2);
	sim_tmpl_on_state(sim);
	sim_special_rec(sim, ip, len, ins->si.cls, nip, true);
	sim_rec_done(sim);
	sim_reg_set(sim, R_IP, nip);
}

void sim_emu_syscall(struct rtit_sim *sim, const struct sim_insn *ins)
{
	uint64_t ip = ins->ip, next = ins->next;
	int len = ins->len;
	struct sim_model *m = &sim->m;
	uint64_t v;

	/* SDM SYSCALL: RCX = next RIP, R11 = RFLAGS, CS from STAR */
	if (m->mode != 64 || !m->lstar) {
		sim_exception(sim, 6, ip, 0, 0, "SYSCALL with no LSTAR");
		return;
	}
	sim_reg_set(sim, R_CX, next);
	v = sim_reg_get(sim, R_FLAGS);
	sim_reg_set(sim, R_11, v);
	sim_reg_set(sim, R_FLAGS, (v & ~m->fmask) | 2);
	m->cpl = 0;
	m->cs = (uint16_t)((m->star >> 32) & 0xfffc);
	m->ss = (uint16_t)(m->cs + 8);
	sim_tmpl_on_state(sim);
	sim_special_rec(sim, ip, len, ins->si.cls, m->lstar, true);
	sim_rec_done(sim);
	sim_reg_set(sim, R_IP, m->lstar);
	/* a Linux process: the kernel serves the call before its SYSRET */
	if (sim->lx)
		sim_linux_syscall(sim, ip);
}

/* SYSRET: back to CPL 3 at RCX, RFLAGS from R11 (SDM SYSRET). */
void sim_emu_sysret(struct rtit_sim *sim, const struct sim_insn *ins)
{
	uint64_t ip = ins->ip;
	int len = ins->len;
	struct sim_model *m = &sim->m;
	bool rexw = ins->in.raw.rex.W;
	uint64_t v;

	if (m->cpl != 0) {
		sim_gp_fault(sim, ip, "SYSRET at CPL 3");
		return;
	}
	v = sim_reg_get(sim, R_CX);
	sim_reg_set(sim, R_FLAGS, (sim_reg_get(sim, R_11) & 0x3C7FD7ull) | 2);
	m->cpl = 3;
	m->cs = (uint16_t)(((m->star >> 48) + (rexw ? 16 : 0)) | 3);
	m->ss = (uint16_t)(((m->star >> 48) + 8) | 3);
	sim_tmpl_on_state(sim);
	sim_special_rec(sim, ip, len, ins->si.cls, v, true);
	sim_rec_done(sim);
	sim_reg_set(sim, R_IP, v);
}

/* SYSENTER: CPL 0 at IA32_SYSENTER_EIP, RSP from IA32_SYSENTER_ESP. */
void sim_emu_sysenter(struct rtit_sim *sim, const struct sim_insn *ins)
{
	uint64_t ip = ins->ip;
	int len = ins->len;
	struct sim_model *m = &sim->m;

	if (!(m->sysenter_cs & 0xfffc)) {
		sim_gp_fault(sim, ip, "SYSENTER with IA32_SYSENTER_CS = 0");
		return;
	}
	m->cpl = 0;
	m->cs = (uint16_t)(m->sysenter_cs & 0xfffc);
	m->ss = (uint16_t)(m->cs + 8);
	sim_reg_set(sim, R_SP, m->sysenter_esp);
	sim_reg_set(sim, R_FLAGS, sim_reg_get(sim, R_FLAGS) & ~(uint64_t)(EFL_IF));
	sim_tmpl_on_state(sim);
	sim_special_rec(sim, ip, len, ins->si.cls, m->sysenter_eip, true);
	sim_rec_done(sim);
	sim_reg_set(sim, R_IP, m->sysenter_eip);
}

/* SYSEXIT: CPL 3 at RDX, RSP from RCX. */
void sim_emu_sysexit(struct rtit_sim *sim, const struct sim_insn *ins)
{
	uint64_t ip = ins->ip;
	int len = ins->len;
	struct sim_model *m = &sim->m;
	bool rexw = ins->in.raw.rex.W;
	uint64_t v;

	if (m->cpl != 0 || !(m->sysenter_cs & 0xfffc)) {
		sim_gp_fault(sim, ip, "SYSEXIT at CPL 3 or with SYSENTER_CS = 0");
		return;
	}
	v = sim_reg_get(sim, R_DX);
	sim_reg_set(sim, R_SP, sim_reg_get(sim, R_CX));
	m->cpl = 3;
	m->cs = (uint16_t)((m->sysenter_cs + (rexw ? 32 : 16)) | 3);
	m->ss = (uint16_t)(m->cs + 8);
	sim_tmpl_on_state(sim);
	sim_special_rec(sim, ip, len, ins->si.cls, v, true);
	sim_rec_done(sim);
	sim_reg_set(sim, R_IP, v);
}

/* Far JMP and far CALL: a task switch for a TSS selector, else CS:IP
 * (a real-mode JMP ptr16:16 loads the CS base). */
void sim_emu_far_jmp_call(struct rtit_sim *sim, const struct sim_insn *ins)
{
	const ZydisDecodedInstruction *in = &ins->in;
	uint64_t ip = ins->ip, next = ins->next;
	int len = ins->len;
	struct sim_model *m = &sim->m;
	int w;
	char why[96];
	uint64_t sp;

	uint64_t off = 0, sel = 0;
	w = in->operand_width / 8;
	if (ins->ops[0].type == ZYDIS_OPERAND_TYPE_POINTER) {
		off = ins->ops[0].ptr.offset;
		sel = ins->ops[0].ptr.segment;
	} else if (ins->ops[0].type == ZYDIS_OPERAND_TYPE_MEMORY) {
		uint64_t ea = sim_mem_ea(sim, &ins->ops[0], ip, len);
		int osz = ins->ops[0].size / 8 - 2;
		if (uc_mem_read(sim->uc, ea, &off, (size_t)osz) != UC_ERR_OK ||
		    uc_mem_read(sim->uc, ea + (uint64_t)osz, &sel, 2) != UC_ERR_OK) {
			snprintf(why, sizeof(why), "far pointer at 0x%" PRIx64
				 " unmapped", ea);
			sim_exception(sim, 14, ip, 0, ea, why);
			return;
		}
	}
	int task = m->ntasks ? sim_task_of(m, (uint16_t)sel) : -1;
	if (task >= 0) {
		/* to a TSS descriptor: a task switch (SDM 7.3) */
		if (!sim_task_ok(sim, task, ip, true))
			return;
		uint64_t to = sim_task_switch(sim, task, next, ins->si.cls == RTIT_IC_FAR_CALL,
					  ins->si.cls == RTIT_IC_FAR_JMP);
		if (to == UINT64_MAX)
			return;
		sim_special_rec(sim, ip, len, ins->si.cls, to, true);
		sim_rec_done(sim);
		sim_reg_set(sim, R_IP, to);
		return;
	}
	if (ins->si.cls == RTIT_IC_FAR_CALL) {
		sp = sim_reg_get(sim, R_SP);
		if (!sim_push(sim, &sp, m->cs, w) || !sim_push(sim, &sp, next, w)) {
			sim_stack_fault(sim, ip, sp, true, "far CALL");
			return;
		}
		sim_reg_set(sim, R_SP, sp);
	}
	if (m->mode == RTIT_SIM_MODE_16) {
		/* real mode: CS base = selector << 4 (a LIP target) */
		if (ins->ops[0].type != ZYDIS_OPERAND_TYPE_POINTER ||
		    sim_real_load_cs(sim, (uint16_t)sel) < 0) {
			sim_stop_with(sim, RTIT_SIM_STOP_ERROR, ip, "far transfer at 0x%" PRIx64
				  " in 16-bit mode: only JMP ptr16:16 is modelled", ip);
			return;
		}
		off = ((uint64_t)(uint16_t)sel << 4) + (off & 0xffff);
	}
	m->cs = (uint16_t)sel;
	sim_tmpl_on_state(sim);
	sim_special_rec(sim, ip, len, ins->si.cls, off, true);
	sim_rec_done(sim);
	sim_reg_set(sim, R_IP, off);
}

/* Far RET (imm16 releases parameter bytes): SS:RSP popped too when
 * returning to an outer privilege level. */
void sim_emu_far_ret(struct rtit_sim *sim, const struct sim_insn *ins)
{
	const ZydisDecodedInstruction *in = &ins->in;
	uint64_t ip = ins->ip;
	int len = ins->len;
	struct sim_model *m = &sim->m;
	int w;
	uint64_t sp;

	uint64_t nip, cs, nsp, ss;
	w = in->operand_width / 8;
	sp = sim_reg_get(sim, R_SP);
	if (!sim_pop(sim, &sp, &nip, w) || !sim_pop(sim, &sp, &cs, w)) {
		sim_stack_fault(sim, ip, sp, false, "far RET");
		return;
	}
	if (in->raw.imm[0].size)
		sp += in->raw.imm[0].value.u;
	if ((int)(cs & 3) > m->cpl) {
		if (!sim_pop(sim, &sp, &nsp, w) || !sim_pop(sim, &sp, &ss, w)) {
			sim_stack_fault(sim, ip, sp, false, "far RET");
			return;
		}
		sp = nsp;
		m->ss = (uint16_t)ss;
	}
	sim_reg_set(sim, R_SP, sp);
	m->cpl = (int)(cs & 3);
	m->cs = (uint16_t)cs;
	sim_tmpl_on_state(sim);
	sim_special_rec(sim, ip, len, ins->si.cls, nip, true);
	sim_rec_done(sim);
	sim_reg_set(sim, R_IP, nip);
}
