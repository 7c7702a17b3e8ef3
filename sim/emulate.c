/*
 * emulate.c - the special instructions the model executes in place of
 * Unicorn (docs/sim.md): decoded once, then dispatched by class to far.c
 * (transfers), msr.c (MSRs, CRs, DRs), rtm.c (RTM), uintr.c (user
 * interrupts), sgx.c (ENCLU) or the handlers here (flags, HLT, MWAIT,
 * MONITOR, RDTSC, RDRAND, PTWRITE).
 */
#include <stdio.h>
#include <inttypes.h>

#include "sim_internal.h"

int sim_gpr_of_zydis(ZydisRegister r)
{
	ZydisRegisterClass c = ZydisRegisterGetClass(r);
	if (c != ZYDIS_REGCLASS_GPR64 && c != ZYDIS_REGCLASS_GPR32 &&
	    c != ZYDIS_REGCLASS_GPR16)
		return -1;
	return ZydisRegisterGetId(r);
}

/* Effective address of a memory operand (flat segments). */
uint64_t sim_mem_ea(struct rtit_sim *sim, const ZydisDecodedOperand *op,
		       uint64_t ip, int len)
{
	uint64_t ea = (uint64_t)op->mem.disp.value;
	if (op->mem.base == ZYDIS_REGISTER_RIP)
		ea += ip + (uint64_t)len;
	else if (op->mem.base != ZYDIS_REGISTER_NONE)
		ea += sim_reg_get(sim, sim_gpr_of_zydis(op->mem.base));
	if (op->mem.index != ZYDIS_REGISTER_NONE)
		ea += sim_reg_get(sim, sim_gpr_of_zydis(op->mem.index)) * op->mem.scale;
	if (sim->m.mode != 64)
		ea &= 0xffffffffull;
	return ea;
}

uint64_t sim_operand_value(struct rtit_sim *sim, const ZydisDecodedOperand *op,
			      uint64_t ip, int len, bool *ok)
{
	uint64_t v = 0;
	*ok = true;
	if (op->type == ZYDIS_OPERAND_TYPE_REGISTER) {
		v = sim_reg_get(sim, sim_gpr_of_zydis(op->reg.value));
		if (op->size == 32)
			v &= 0xffffffffull;
	} else if (op->type == ZYDIS_OPERAND_TYPE_MEMORY) {
		if (uc_mem_read(sim->uc, sim_mem_ea(sim, op, ip, len), &v,
				op->size / 8) != UC_ERR_OK)
			*ok = false;
	}
	return v;
}

/* Emits the record of a special instruction (state after) and counts it. */
struct rtit_sim_rec *sim_special_rec(struct rtit_sim *sim, uint64_t ip,
					int len, int cls, uint64_t next,
					bool taken)
{
	struct rtit_sim_rec *r = sim_rec_new(sim);
	r->kind = RTIT_SIM_INSN;
	r->ip = ip;
	r->len = (uint8_t)len;
	r->cls = (uint8_t)cls;
	r->next_ip = next;
	if (taken)
		r->flags |= RTIT_SIM_F_TAKEN;
	sim_clock_on_cycles(sim, sim->cfg.clock.cpi[cls]);
	r->cycles = sim->cycles;
	r->tsc = sim->tsc;
	sim->retired++;
	sim->last_shadow = false;
	sim->last_ip = ip;
	return r;
}

void sim_gp_fault(struct rtit_sim *sim, uint64_t ip, const char *why)
{
	/* delivered: RIP is the handler; in a hook Unicorn goes on there
	 * (a RIP write and uc_emu_stop in one hook would cancel each other) */
	sim_exception(sim, 13, ip, 0, 0, why);
}

/* A stack access of a special instruction failed at addr: #PF there, a
 * fault on the instruction (#GP(0) for a non-canonical address). */
void sim_stack_fault(struct rtit_sim *sim, uint64_t ip, uint64_t addr,
			bool write, const char *insn)
{
	char why[96];
	snprintf(why, sizeof(why), "%s: stack %s 0x%" PRIx64 " unmapped", insn,
		 write ? "write to" : "read of", addr);
	if (sim->m.mode == 64 && (uint64_t)((int64_t)(addr << 16) >> 16) != addr)
		sim_exception(sim, 13, ip, 0, 0, why);
	else
		sim_exception(sim, 14, ip, (write ? 2u : 0u) | (sim->m.cpl == 3 ? 4u : 0u),
			  addr, why);
}

/* A HLT or an MWAIT that waits (its record delivered): the CPU wakes on
 * the next injected interrupt (an NMI, SMI or INIT even with IF = 0; a masked
 * interrupt too for MWAIT with ECX[0] = 1, which then stays pending);
 * instructions do not retire meanwhile.  Stops the run when nothing
 * would wake it. */
static void wait_for_wake(struct rtit_sim *sim, uint64_t ip, uint64_t next,
			  bool masked_breaks, const char *insn)
{
	bool ifl = sim_reg_get(sim, R_FLAGS) & EFL_IF;
	int best = -1;
	for (int i = 0; i < sim->ninj; i++) {
		const struct rtit_sim_inject *e = &sim->inj[i];
		if (sim->inj_done[i] || e->trigger != RTIT_SIM_AT_INSN)
			continue;
		if (!(e->kind == RTIT_EV_NMI || e->kind == RTIT_EV_SMI || e->kind == RTIT_EV_INIT ||
		      ((ifl || masked_breaks) && e->kind == RTIT_EV_EXT_INTERRUPT)))
			continue;
		if (best < 0 || e->at < sim->inj[best].at)
			best = i;
	}
	if ((ifl || masked_breaks) && sim->irq_deferred >= 0) {
		/* an interrupt held while IF was 0 wakes it */
		if (ifl)
			sim_request(sim, SIM_REQ_EVENT, next);
		else
			sim_reg_set(sim, R_IP, next);	/* and stays pending */
		return;
	}
	if (best >= 0) {
		sim->inj_due = best;
		sim_request(sim, SIM_REQ_EVENT, next);
		return;
	}
	sim_stop_with(sim, RTIT_SIM_STOP_HALTED, ip,
		  "halted at 0x%" PRIx64 " (%s, %s)", ip, insn,
		  ifl ? "no wake event" : "interrupts off");
}

/* SDM Vol. 3D 38.6.1: of the instructions the model intercepts, those an
 * enclave may execute (ENCLU, POPF, RDRAND, RDSEED, PTWRITE, RTM); the
 * others (far transfers, INT n, SYSCALL, SYSENTER, RDTSC in SGX1...) are
 * #UD there.  The privileged ones are #GP at CPL 3 before this. */
static bool sgx_allowed(const ZydisDecodedInstruction *in, int cls)
{
	switch (in->mnemonic) {
	case ZYDIS_MNEMONIC_POPF: case ZYDIS_MNEMONIC_POPFD: case ZYDIS_MNEMONIC_POPFQ:
	case ZYDIS_MNEMONIC_RDRAND: case ZYDIS_MNEMONIC_RDSEED:
	case ZYDIS_MNEMONIC_XABORT: case ZYDIS_MNEMONIC_XTEST:
		return true;
	default:
		return cls == RTIT_IC_ENCLU || cls == RTIT_IC_PTWRITE || cls == RTIT_IC_XBEGIN ||
		       cls == RTIT_IC_XEND;
	}
}

/* ---------------------------------------------------- per-class handlers */

/* MONITOR (SDM Vol. 2B): #UD at CPL > 0, #GP(0) for
 * extensions in ECX; the address (DS:rAX) is not checked. */
static void emu_monitor(struct rtit_sim *sim, const struct sim_insn *ins)
{
	uint64_t ip = ins->ip, next = ins->next;
	int len = ins->len;
	struct sim_model *m = &sim->m;

	if (m->cpl != 0) {
		sim_exception(sim, 6, ip, 0, 0, "MONITOR at CPL 3");
		return;
	}
	if ((uint32_t)sim_reg_get(sim, R_CX)) {
		sim_gp_fault(sim, ip, "MONITOR with extensions in ECX");
		return;
	}
	m->monitor_armed = true;
	sim_special_rec(sim, ip, len, ins->si.cls, next, false);
	sim_rec_done(sim);
	sim_reg_set(sim, R_IP, next);
}

/* CLI, STI (IOPL checked in on_code), POPF: RFLAGS.IF is in
 * the record, so the model executes them (SDM Vol. 2A CLI,
 * Vol. 2B STI, POPF) */
static void emu_cli_sti(struct rtit_sim *sim, const struct sim_insn *ins)
{
	const ZydisDecodedInstruction *in = &ins->in;
	uint64_t ip = ins->ip, next = ins->next;
	int len = ins->len;

	uint64_t fl = sim_reg_get(sim, R_FLAGS);
	bool shadow = in->mnemonic == ZYDIS_MNEMONIC_STI && !(fl & EFL_IF);
	if (in->mnemonic == ZYDIS_MNEMONIC_CLI)
		fl &= ~(uint64_t)EFL_IF;
	else
		fl |= EFL_IF;
	sim_reg_set(sim, R_FLAGS, fl);
	sim_tmpl_on_state(sim);
	sim_special_rec(sim, ip, len, ins->si.cls, next, false);
	/* STI that sets IF: interrupts wait one more instruction
	 * (SDM 6.8.3) */
	sim->last_shadow = shadow;
	sim_rec_done(sim);
	sim_reg_set(sim, R_IP, next);
}

/* POPF, POPFD, POPFQ (SDM Vol. 2B POPF). */
static void emu_popf(struct rtit_sim *sim, const struct sim_insn *ins)
{
	const ZydisDecodedInstruction *in = &ins->in;
	uint64_t ip = ins->ip, next = ins->next;
	int len = ins->len;
	struct sim_model *m = &sim->m;
	uint64_t sp;

	int ow = in->operand_width / 8;
	uint64_t fl = sim_reg_get(sim, R_FLAGS), nf = 0;
	unsigned iopl = (unsigned)(fl >> 12) & 3;
	sp = sim_reg_get(sim, R_SP);
	if (!sim_pop(sim, &sp, &nf, ow)) {
		sim_stack_fault(sim, ip, sp, false, "POPF");
		return;
	}
	sim_reg_set(sim, R_SP, sp);
	/* protected/64-bit mode, not VM86: CF PF AF ZF SF TF
	 * IF DF OF IOPL NT AC ID; IOPL only at CPL 0, IF only
	 * at CPL <= IOPL; RF cleared; VM, VIF, VIP kept;
	 * 16-bit operand: the low 16 bits only */
	uint64_t mask = EFL_POPF_MASK;
	if (m->cpl != 0)
		mask &= ~(uint64_t)EFL_IOPL;
	if ((unsigned)m->cpl > iopl)
		mask &= ~(uint64_t)EFL_IF;
	if (ow == 2)
		mask &= 0xffff;
	fl = ((fl & ~mask) | (nf & mask) | EFL_FIXED1) & ~(uint64_t)EFL_RF;
	sim_reg_set(sim, R_FLAGS, fl);
	sim_tmpl_on_state(sim);
	sim_special_rec(sim, ip, len, ins->si.cls, next, false);
	sim_rec_done(sim);
	sim_reg_set(sim, R_IP, next);
}

/* RDTSC, RDTSCP: the model's TSC */
static void emu_rdtsc(struct rtit_sim *sim, const struct sim_insn *ins)
{
	const ZydisDecodedInstruction *in = &ins->in;
	uint64_t ip = ins->ip, next = ins->next;
	int len = ins->len;
	struct rtit_sim_rec *r;

	r = sim_special_rec(sim, ip, len, ins->si.cls, next, false);
	r->value = sim->tsc;
	sim_reg_set(sim, R_AX, sim->tsc & 0xffffffffull);
	sim_reg_set(sim, R_DX, sim->tsc >> 32);
	if (in->mnemonic == ZYDIS_MNEMONIC_RDTSCP)
		sim_reg_set(sim, R_CX, 0);
	sim_rec_done(sim);
	sim_reg_set(sim, R_IP, next);
}

/* RDRAND, RDSEED: a fixed sequence, CF=1 */
static void emu_rdrand(struct rtit_sim *sim, const struct sim_insn *ins)
{
	uint64_t ip = ins->ip, next = ins->next;
	int len = ins->len;
	struct rtit_sim_rec *r;

	uint64_t x = sim->rand_state;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	sim->rand_state = x;
	if (ins->ops[0].size < 64)
		x &= (1ull << ins->ops[0].size) - 1;
	int gpr = sim_gpr_of_zydis(ins->ops[0].reg.value);
	if (ins->ops[0].size == 16)
		x |= sim_reg_get(sim, gpr) & ~0xffffull;
	sim_reg_set(sim, gpr, x);
	sim_reg_set(sim, R_FLAGS, (sim_reg_get(sim, R_FLAGS) & ~0x8d5ull) | 1);
	r = sim_special_rec(sim, ip, len, ins->si.cls, next, false);
	r->value = x;
	sim_rec_done(sim);
	sim_reg_set(sim, R_IP, next);
}

/* HLT: CPL 0 only; waits for a wake event. */
static void emu_hlt(struct rtit_sim *sim, const struct sim_insn *ins)
{
	uint64_t ip = ins->ip, next = ins->next;
	int len = ins->len;
	struct sim_model *m = &sim->m;

	if (m->cpl != 0) {
		sim_gp_fault(sim, ip, "HLT at CPL 3");
		return;
	}
	sim_special_rec(sim, ip, len, ins->si.cls, next, false);
	sim_rec_done(sim);
	wait_for_wake(sim, ip, next, false, "HLT");
}

static void emu_mwait(struct rtit_sim *sim, const struct sim_insn *ins)
{
	uint64_t ip = ins->ip, next = ins->next;
	int len = ins->len;
	struct sim_model *m = &sim->m;
	struct rtit_sim_rec *r;

	/* SDM Vol. 2B MWAIT: #UD at CPL > 0; #GP(0) for reserved
	 * extensions (ECX[31:1]); EAX[7:4] is the target C-state
	 * (Cn as n-1, 0xF = C0), EAX[3:0] the sub-state. */
	uint32_t eax = (uint32_t)sim_reg_get(sim, R_AX), ecx = (uint32_t)sim_reg_get(sim, R_CX);
	unsigned hint = (eax >> 4) & 0xf;
	bool wait = m->monitor_armed;
	if (m->cpl != 0) {
		sim_exception(sim, 6, ip, 0, 0, "MWAIT at CPL 3");
		return;
	}
	if (ecx >> 1) {
		sim_gp_fault(sim, ip, "MWAIT with reserved extensions in ECX");
		return;
	}
	m->monitor_armed = false;
	r = sim_special_rec(sim, ip, len, ins->si.cls, next, false);
	r->value = eax;
	r->msr = ecx;
	/* without an armed monitor execution goes on at once */
	r->vector = (uint8_t)(wait && hint != 0xf ? hint + 1 : 0);
	sim_rec_done(sim);
	if (!wait) {
		sim_reg_set(sim, R_IP, next);
		return;
	}
	wait_for_wake(sim, ip, next, ecx & 1, "MWAIT");
}

static void emu_enclu(struct rtit_sim *sim, const struct sim_insn *ins)
{
	uint64_t ip = ins->ip, next = ins->next;
	int len = ins->len;
	struct rtit_sim_rec *r;

	/* SGX (SDM Vol. 3D): EENTER, ERESUME, EEXIT (sgx.c, D50) */
	struct sim_sgx_out so;
	if (sim_sgx_enclu(sim, ip, next, &so) < 0) {
		sim_exception(sim, so.vec, ip, 0, 0, so.why);
		return;
	}
	sim_tmpl_on_state(sim);	/* enclave mode, ERESUME's RFLAGS */
	r = sim_special_rec(sim, ip, len, ins->si.cls, so.next, true);
	r->value = so.leaf;
	r->vector = so.debug;
	sim_rec_done(sim);
	sim_reg_set(sim, R_IP, so.next);
}

/* PTWRITE: the operand goes into the record. */
static void emu_ptwrite(struct rtit_sim *sim, const struct sim_insn *ins)
{
	uint64_t ip = ins->ip, next = ins->next;
	int len = ins->len;
	struct rtit_sim_rec *r;
	uint64_t v;

	bool ok;
	v = sim_operand_value(sim, &ins->ops[0], ip, len, &ok);
	if (!ok) {
		sim_exception(sim, 14, ip, 0, sim_mem_ea(sim, &ins->ops[0], ip, len),
			  "PTWRITE operand unmapped");
		return;
	}
	r = sim_special_rec(sim, ip, len, ins->si.cls, next, false);
	r->value = v;
	r->msr = ins->ops[0].size;
	sim_rec_done(sim);
	sim_reg_set(sim, R_IP, next);
}

/* The classes OTHER, MOV_CR0 and MOV_CR3, told apart by mnemonic (VMLAUNCH
 * and VMRESUME: vmx.c); what is left is RSM, #UD outside SMM. */
static void emulate_other(struct rtit_sim *sim, const struct sim_insn *ins)
{
	const ZydisDecodedInstruction *in = &ins->in;

	if (in->mnemonic == ZYDIS_MNEMONIC_MOV &&
	    (in->opcode == 0x21 || in->opcode == 0x23)) {
		sim_emu_mov_dr(sim, ins);
		return;
	}
	switch (in->mnemonic) {
	case ZYDIS_MNEMONIC_LMSW: case ZYDIS_MNEMONIC_CLTS:
	case ZYDIS_MNEMONIC_LGDT: case ZYDIS_MNEMONIC_LIDT:
	case ZYDIS_MNEMONIC_LLDT: case ZYDIS_MNEMONIC_LTR:
	case ZYDIS_MNEMONIC_XSETBV:
		sim_emu_sysreg(sim, ins);
		return;
	case ZYDIS_MNEMONIC_MOV:
		sim_emu_mov_cr(sim, ins);
		return;
	case ZYDIS_MNEMONIC_MONITOR:
		emu_monitor(sim, ins);
		return;
	case ZYDIS_MNEMONIC_CLI: case ZYDIS_MNEMONIC_STI:
		emu_cli_sti(sim, ins);
		return;
	case ZYDIS_MNEMONIC_POPF: case ZYDIS_MNEMONIC_POPFD: case ZYDIS_MNEMONIC_POPFQ:
		emu_popf(sim, ins);
		return;
	case ZYDIS_MNEMONIC_RDTSC: case ZYDIS_MNEMONIC_RDTSCP:
		emu_rdtsc(sim, ins);
		return;
	case ZYDIS_MNEMONIC_RDRAND: case ZYDIS_MNEMONIC_RDSEED:
		emu_rdrand(sim, ins);
		return;
	case ZYDIS_MNEMONIC_XABORT: case ZYDIS_MNEMONIC_XTEST:
		sim_emulate_rtm(sim, in, ins->ip, ins->si.cls, 0);
		return;
	case ZYDIS_MNEMONIC_VMLAUNCH: case ZYDIS_MNEMONIC_VMRESUME:
		sim_emu_vmentry(sim, ins);
		return;
	default:
		sim_exception(sim, 6, ins->ip, 0, 0, "RSM outside SMM");
		return;
	}
}

/* Emulates the special instruction at ip (the prefix of its block has
 * retired).  Sets RIP, or stops the run. */
void sim_emulate(struct rtit_sim *sim, uint64_t ip)
{
	uint8_t buf[16] = {0};
	struct sim_insn insn, *ins = &insn;
	const ZydisDecodedInstruction *in = &ins->in;
	struct sim_model *m = &sim->m;

	uc_mem_read(sim->uc, ip, buf, sizeof(buf));
	if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&sim->dec, buf, sizeof(buf),
						 &insn.in, insn.ops))) {
		sim_stop_with(sim, RTIT_SIM_STOP_ERROR, ip, "cannot decode at 0x%" PRIx64, ip);
		return;
	}
	isa_classify(in, ip, &insn.si);
	insn.ip = ip;
	insn.len = in->length;
	insn.next = ip + (uint64_t)insn.len;

	if (ins->si.cls == RTIT_IC_UIRET || in->mnemonic == ZYDIS_MNEMONIC_STUI ||
	    in->mnemonic == ZYDIS_MNEMONIC_CLUI || in->mnemonic == ZYDIS_MNEMONIC_TESTUI) {
		sim_emulate_uintr(sim, in, ip);
		return;
	}
	if (m->mode == RTIT_SIM_MODE_16 && ins->si.cls != RTIT_IC_HLT &&
	    ins->si.cls != RTIT_IC_FAR_JMP &&
	    in->mnemonic != ZYDIS_MNEMONIC_CLI && in->mnemonic != ZYDIS_MNEMONIC_STI) {
		/* after INIT or SIPI: HLT, CLI, STI and JMP ptr16:16 only */
		sim_stop_with(sim, RTIT_SIM_STOP_ERROR, ip, "%s at 0x%" PRIx64 " in 16-bit mode "
			      "(after INIT/SIPI) is not modelled",
			      ZydisMnemonicGetString(in->mnemonic), ip);
		return;
	}
	if (sim->sgx.cur >= 0 && !sgx_allowed(in, ins->si.cls)) {
		sim_exception(sim, 6, ip, 0, 0, "instruction illegal inside an enclave");
		return;
	}
	switch (ins->si.cls) {
	case RTIT_IC_INT: sim_emu_int(sim, ins); break;
	case RTIT_IC_IRET: sim_emu_iret(sim, ins); break;
	case RTIT_IC_SYSCALL: sim_emu_syscall(sim, ins); break;
	case RTIT_IC_SYSRET: sim_emu_sysret(sim, ins); break;
	case RTIT_IC_SYSENTER: sim_emu_sysenter(sim, ins); break;
	case RTIT_IC_SYSEXIT: sim_emu_sysexit(sim, ins); break;
	case RTIT_IC_FAR_JMP:
	case RTIT_IC_FAR_CALL: sim_emu_far_jmp_call(sim, ins); break;
	case RTIT_IC_FAR_RET: sim_emu_far_ret(sim, ins); break;
	case RTIT_IC_WRMSR:
	case RTIT_IC_RDMSR: sim_emu_msr(sim, ins); break;
	case RTIT_IC_MOV_CR3:
	case RTIT_IC_MOV_CR0:
	case RTIT_IC_OTHER: emulate_other(sim, ins); break;
	case RTIT_IC_HLT: emu_hlt(sim, ins); break;
	case RTIT_IC_MWAIT: emu_mwait(sim, ins); break;
	case RTIT_IC_XBEGIN:
	case RTIT_IC_XEND:
		sim_emulate_rtm(sim, in, ip, ins->si.cls, ins->si.target);
		break;
	case RTIT_IC_ENCLU: emu_enclu(sim, ins); break;
	case RTIT_IC_PTWRITE: emu_ptwrite(sim, ins); break;
	default:
		sim_stop_with(sim, RTIT_SIM_STOP_ERROR, ip,
			      "no model for instruction at 0x%" PRIx64, ip);
		break;
	}
}
