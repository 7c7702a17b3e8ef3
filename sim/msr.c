/*
 * msr.c - MSR and control-register accesses: WRMSR/RDMSR routed to the
 * trace MSRs' consumer, the user-interrupt and PMU models or the model's
 * own MSRs; MOV CR, MOV DR, LMSW, CLTS and the descriptor-table loads.
 */
#include <stdio.h>
#include <inttypes.h>

#include "sim_internal.h"

static bool trace_msr(uint32_t msr)
{
	/* RTIT 0x760-0x77D (RTIT 3.3), Intel PT 33.2.8 (Table 33-x) */
	return (msr >= 0x760 && msr <= 0x77D) || msr == 0x560 || msr == 0x561 ||
	       (msr >= 0x570 && msr <= 0x572) || (msr >= 0x580 && msr <= 0x587);
}

/* Routes an MSR access; returns 0 or -1 for #GP. */
int sim_msr_access(struct rtit_sim *sim, bool write, uint32_t msr,
		      uint64_t *v, const struct rtit_sim_rec *ctx)
{
	struct sim_model *m = &sim->m;
	if (trace_msr(msr)) {
		const struct rtit_sim_consumer *c = &sim->cfg.consumer;
		if (write && c->msr_write) {
			sim_flush(sim);
			return c->msr_write(c->opaque, msr, *v, ctx) < 0 ? -1 : 0;
		}
		if (!write && c->msr_read) {
			sim_flush(sim);
			return c->msr_read(c->opaque, msr, v, ctx) < 0 ? -1 : 0;
		}
		for (int i = 0; i < m->ntmsr; i++) {
			if (m->tmsr[i] == msr) {
				if (write)
					m->tmsr_val[i] = *v;
				else
					*v = m->tmsr_val[i];
				return 0;
			}
		}
		if (write) {
			if (m->ntmsr == 64)
				return -1;
			m->tmsr[m->ntmsr] = msr;
			m->tmsr_val[m->ntmsr++] = *v;
		} else {
			*v = 0;
		}
		return 0;
	}
	int u = sim_uintr_msr(sim, write, msr, v);
	if (u)
		return u < 0 ? -1 : 0;
	uint64_t *p = NULL;
	switch (msr) {
	case 0x10:
		if (write)
			sim->tsc = *v;
		else
			*v = sim->tsc;
		return 0;
	case 0x174: p = &m->sysenter_cs; break;
	case 0x175: p = &m->sysenter_esp; break;
	case 0x176: p = &m->sysenter_eip; break;
	case 0xC0000081: p = &m->star; break;
	case 0xC0000082: p = &m->lstar; break;
	case 0xC0000083: p = &m->cstar; break;
	case 0xC0000084: p = &m->fmask; break;
	default:
		/* the performance-monitoring MSRs (pmu.c); the LBRs see the
		 * records before this access, and only those (D63) */
		if (sim->cfg.pmu)
			sim_flush(sim);
		return sim_pmu_msr(sim, write, msr, v, ctx && ctx->kind == RTIT_SIM_INSN) > 0 ? 0 : -1;
	}
	if (write)
		*p = *v;
	else
		*v = *p;
	return 0;
}

int rtit_sim_msr_preset(struct rtit_sim *sim, uint32_t msr, uint64_t value)
{
	if (!sim)
		return -RTIT_ERR_INVALID;
	struct rtit_sim_rec ctx = sim->tmpl;
	ctx.msr = msr;
	ctx.value = value;
	if (sim_msr_access(sim, true, msr, &value, &ctx) < 0)
		return sim_seterr(sim, -RTIT_ERR_INVALID,
				  "MSR 0x%x is not modelled or refused the value", msr);
	return 0;
}

int rtit_sim_report_clock(struct rtit_sim *sim)
{
	if (!sim)
		return -RTIT_ERR_INVALID;
	const struct rtit_sim_consumer *c = &sim->cfg.consumer;
	if (!c->msr_write)
		return 0;
	struct rtit_sim_rec ctx = sim->tmpl;
	ctx.msr = RTIT_SIM_MSR_PERF_STATUS;
	ctx.value = (uint64_t)(sim->core_ratio & 0xff) << 8;
	(void)c->msr_write(c->opaque, ctx.msr, ctx.value, &ctx);
	return 0;
}

/* -------------------------------------------------------- instructions */

/* WRMSR, RDMSR: CPL 0 only; the MSR routed by sim_msr_access. */
void sim_emu_msr(struct rtit_sim *sim, const struct sim_insn *ins)
{
	uint64_t ip = ins->ip, next = ins->next;
	int len = ins->len;
	struct sim_model *m = &sim->m;
	struct rtit_sim_rec *r;
	char why[96];
	uint64_t v;

	bool wr = ins->si.cls == RTIT_IC_WRMSR;
	uint32_t msr = (uint32_t)sim_reg_get(sim, R_CX);
	if (m->cpl != 0) {
		sim_gp_fault(sim, ip, wr ? "WRMSR at CPL 3" : "RDMSR at CPL 3");
		return;
	}
	v = (sim_reg_get(sim, R_DX) & 0xffffffffull) << 32 |
	    (sim_reg_get(sim, R_AX) & 0xffffffffull);
	struct rtit_sim_rec ctx = sim->tmpl;
	ctx.kind = RTIT_SIM_INSN;
	ctx.ip = ip;
	ctx.len = (uint8_t)len;
	ctx.cls = (uint8_t)ins->si.cls;
	ctx.next_ip = next;
	ctx.msr = msr;
	ctx.value = v;
	ctx.cycles = sim->cycles;
	ctx.tsc = sim->tsc;
	if (sim_msr_access(sim, wr, msr, &v, &ctx) < 0) {
		snprintf(why, sizeof(why), "%s of MSR 0x%x refused",
			 wr ? "WRMSR" : "RDMSR", msr);
		sim_gp_fault(sim, ip, why);
		return;
	}
	if (!wr) {
		sim_reg_set(sim, R_AX, v & 0xffffffffull);
		sim_reg_set(sim, R_DX, v >> 32);
	}
	r = sim_special_rec(sim, ip, len, ins->si.cls, next, false);
	r->msr = msr;
	r->value = v;
	sim_rec_done(sim);
	sim_reg_set(sim, R_IP, next);
}

/* MOV DR: kept in the model, no breakpoints. */
void sim_emu_mov_dr(struct rtit_sim *sim, const struct sim_insn *ins)
{
	const ZydisDecodedInstruction *in = &ins->in;
	uint64_t ip = ins->ip, next = ins->next;
	int len = ins->len;
	struct sim_model *m = &sim->m;

	/* MOV DR: kept in the model, no breakpoints */
	unsigned dr = in->raw.modrm.reg & 7;
	int gpr = (int)(in->raw.modrm.rm | (in->raw.rex.B << 3));
	if (m->cpl != 0) {
		sim_gp_fault(sim, ip, "MOV DR at CPL 3");
		return;
	}
	if (in->opcode == 0x23)
		m->dr[dr] = sim_reg_get(sim, gpr);
	else
		sim_reg_set(sim, gpr, m->dr[dr]);
	sim_special_rec(sim, ip, len, ins->si.cls, next, false);
	sim_rec_done(sim);
	sim_reg_set(sim, R_IP, next);
}

/* LMSW, CLTS, LGDT, LIDT, LLDT, LTR, XSETBV: CPL 0 only. */
void sim_emu_sysreg(struct rtit_sim *sim, const struct sim_insn *ins)
{
	const ZydisDecodedInstruction *in = &ins->in;
	uint64_t ip = ins->ip, next = ins->next;
	int len = ins->len;
	struct sim_model *m = &sim->m;
	char why[96];
	uint64_t v;

	if (m->cpl != 0) {
		sim_gp_fault(sim, ip, "privileged instruction at CPL 3");
		return;
	}
	if (ins->ops[0].type == ZYDIS_OPERAND_TYPE_MEMORY) {
		/* the operand is read: it can fault */
		uint8_t tmp[16];
		uint64_t ea = sim_mem_ea(sim, &ins->ops[0], ip, len);
		size_t n = ins->ops[0].size / 8;
		if (in->mnemonic == ZYDIS_MNEMONIC_LGDT ||
		    in->mnemonic == ZYDIS_MNEMONIC_LIDT)
			n = m->mode == 64 ? 10 : 6;
		if (!n || n > sizeof(tmp))
			n = 2;
		if (uc_mem_read(sim->uc, ea, tmp, n) != UC_ERR_OK) {
			snprintf(why, sizeof(why), "read of unmapped address 0x%"
				 PRIx64, ea);
			sim_exception(sim, 14, ip, m->cpl == 3 ? 4 : 0, ea, why);
			return;
		}
	}
	if (in->mnemonic == ZYDIS_MNEMONIC_CLTS) {
		m->cr0 &= ~8ull;
	} else if (in->mnemonic == ZYDIS_MNEMONIC_LMSW) {
		bool ok;
		v = sim_operand_value(sim, &ins->ops[0], ip, len, &ok);
		/* LMSW sets PE, MP, EM, TS and cannot clear PE */
		m->cr0 = (m->cr0 & ~0xeull) | (v & 0xf);
	}
	/* descriptor tables, XCR0: no effect on the model */
	sim_special_rec(sim, ip, len, ins->si.cls, next, false);
	sim_rec_done(sim);
	sim_reg_set(sim, R_IP, next);
}

/* MOV to or from CR0, CR2, CR3, CR4, CR8. */
void sim_emu_mov_cr(struct rtit_sim *sim, const struct sim_insn *ins)
{
	const ZydisDecodedInstruction *in = &ins->in;
	uint64_t ip = ins->ip, next = ins->next;
	int len = ins->len;
	struct sim_model *m = &sim->m;
	struct rtit_sim_rec *r;
	uint64_t v;

	unsigned cr = in->raw.modrm.reg | (in->raw.rex.R << 3);
	int gpr = (int)(in->raw.modrm.rm | (in->raw.rex.B << 3));
	uint64_t *crp = cr == 0 ? &m->cr0 : cr == 2 ? &m->cr2 :
			cr == 3 ? &m->cr3 : cr == 4 ? &m->cr4 :
			cr == 8 ? &m->cr8 : NULL;
	if (m->cpl != 0 || !crp) {
		sim_gp_fault(sim, ip, "MOV CR at CPL 3 or bad CR");
		return;
	}
	if (in->opcode == 0x22) {
		v = sim_reg_get(sim, gpr);
		if (cr == 0 && m->mode == 64 && !(v & CR0_PG)) {
			sim_gp_fault(sim, ip, "clearing CR0.PG in 64-bit mode");
			return;
		}
		*crp = v;
		sim_tmpl_on_state(sim);
	} else {
		v = *crp;
		sim_reg_set(sim, gpr, v);
	}
	r = sim_special_rec(sim, ip, len, ins->si.cls, next, false);
	r->value = v;
	sim_rec_done(sim);
	sim_reg_set(sim, R_IP, next);
}
