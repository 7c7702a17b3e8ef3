/*
 * sim.c - the simulator's lifetime and state: guest registers at the
 * mode's width, the configuration, the record batch and its template,
 * guest stack accesses, and the public setters of sim.h.
 *
 * Design (docs/sim.md): the block hook (run.c) finalises the previous
 * block (every instruction of it retired; the last one's outcome is the
 * new block's address) and registers the new one.  Instructions Unicorn
 * cannot model ("special": far transfers, INT, IRET, SYSCALL..., MOV CR,
 * MSRs, HLT, PTWRITE, RDTSC) get a code hook on their own address,
 * installed when the block is first analysed (the block is then
 * retranslated), and are emulated by the model (emulate.c, far.c,
 * msr.c).  Faults stop the emulator, retire the prefix of the block
 * before the faulting IP, and are delivered between uc_emu_start calls,
 * as are injected events (event.c).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>

#include "sim_internal.h"

static const int reg64[R_NUM] = {
	UC_X86_REG_RAX, UC_X86_REG_RCX, UC_X86_REG_RDX, UC_X86_REG_RBX,
	UC_X86_REG_RSP, UC_X86_REG_RBP, UC_X86_REG_RSI, UC_X86_REG_RDI,
	UC_X86_REG_R8, UC_X86_REG_R9, UC_X86_REG_R10, UC_X86_REG_R11,
	UC_X86_REG_R12, UC_X86_REG_R13, UC_X86_REG_R14, UC_X86_REG_R15,
	UC_X86_REG_RIP, UC_X86_REG_EFLAGS
};
static const int reg32[R_NUM] = {
	UC_X86_REG_EAX, UC_X86_REG_ECX, UC_X86_REG_EDX, UC_X86_REG_EBX,
	UC_X86_REG_ESP, UC_X86_REG_EBP, UC_X86_REG_ESI, UC_X86_REG_EDI,
	-1, -1, -1, -1, -1, -1, -1, -1,
	UC_X86_REG_EIP, UC_X86_REG_EFLAGS
};

uint64_t sim_reg_get(struct rtit_sim *sim, int r)
{
	uint64_t v = 0;
	int id = sim->m.mode == 64 ? reg64[r] : reg32[r];
	if (id >= 0)
		uc_reg_read(sim->uc, id, &v);
	if (sim->m.mode != 64 || r == R_FLAGS)
		v &= 0xffffffffull;
	if (r == R_IP)
		v += sim->m.cs_base;	/* a LIP (16-bit mode, init.c) */
	return v;
}

void sim_reg_set(struct rtit_sim *sim, int r, uint64_t v)
{
	int id = sim->m.mode == 64 ? reg64[r] : reg32[r];
	if (r == R_IP)
		v -= sim->m.cs_base;
	if (sim->m.mode != 64)
		v &= 0xffffffffull;
	if (id >= 0)
		uc_reg_write(sim->uc, id, &v);
}

int sim_seterr(struct rtit_sim *sim, int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(sim->errmsg, sizeof(sim->errmsg), fmt, ap);
	va_end(ap);
	return err;
}

const char *rtit_sim_errmsg(const struct rtit_sim *sim)
{
	return sim ? sim->errmsg : "no simulator";
}

void *rtit_sim_uc(struct rtit_sim *sim)
{
	return sim->uc;
}
/* ---------------------------------------------------------------- config */

void rtit_sim_config_default(struct rtit_sim_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->mode = 64;
	cfg->budget = 100000000ull;
	cfg->deliver = RTIT_SIM_PER_BATCH;
	cfg->batch_cap = 1024;
	cfg->cr0 = CR0_PE | CR0_PG;
	cfg->stack_top = 0x80000000ull;
	cfg->stack_size = 0x10000;
	cfg->precise_faults = true;
	for (int i = 0; i < RTIT_SIM_NUM_CLASSES; i++)
		cfg->clock.cpi[i] = 1;
	/* core:bus 16 (the RTIT STS / Intel PT CBR of a run that names
	 * none, D79); the TSC at the core clock */
	cfg->clock.tsc_ratio = 16;
	cfg->clock.core_ratio = 16;
	cfg->clock.art_num = 1;
	cfg->clock.art_den = 1;
}
/* --------------------------------------------------------------- records */

void sim_flush(struct rtit_sim *sim)
{
	if (sim->pmu.lbr.ctl & RTIT_LBR_CTL_EN)
		sim_lbr_scan(sim, sim->batch, sim->nbatch);
	if (sim->nbatch && sim->cfg.consumer.on_batch)
		sim->cfg.consumer.on_batch(sim->batch, sim->nbatch,
					   sim->cfg.consumer.opaque);
	sim->nbatch = 0;
}

/* Refreshes the record template after a model state change. */
void sim_tmpl_on_state(struct rtit_sim *sim)
{
	struct rtit_sim_rec *t = &sim->tmpl;
	const struct rtit_sim_rec old = *t;
	memset(t, 0, sizeof(*t));
	t->cr3 = sim->m.cr3;
	t->cpl = (uint8_t)sim->m.cpl;
	t->mode = (uint8_t)sim->m.mode;
	t->flags = (sim->m.cr0 & CR0_PG) ? RTIT_SIM_F_CR0_PG : 0;
	if (sim_reg_get(sim, R_FLAGS) & EFL_IF)
		t->flags |= RTIT_SIM_F_IF;
	sim_pmu_on_state(sim);	/* the CPL USR/OS filter on */
	if (sim->sgx.cur >= 0)
		t->flags |= RTIT_SIM_F_ENCLAVE;
	/* the blocks' prebuilt records hold these fields (run.c, D151) */
	if (t->cr3 != old.cr3 || t->cpl != old.cpl || t->mode != old.mode ||
	    t->flags != old.flags)
		sim->cache.gen++;
}

/* ---------------------------------------------------------- guest memory */

bool sim_push(struct rtit_sim *sim, uint64_t *sp, uint64_t v, int w)
{
	*sp -= (uint64_t)w;
	if (sim->m.mode != 64)
		*sp &= 0xffffffffull;
	return uc_mem_write(sim->uc, *sp, &v, (size_t)w) == UC_ERR_OK;
}

bool sim_pop(struct rtit_sim *sim, uint64_t *sp, uint64_t *v, int w)
{
	*v = 0;
	if (uc_mem_read(sim->uc, *sp, v, (size_t)w) != UC_ERR_OK)
		return false;
	*sp += (uint64_t)w;
	if (sim->m.mode != 64)
		*sp &= 0xffffffffull;
	return true;
}

/* ------------------------------------------------------------- lifetime */

int rtit_sim_new(struct rtit_sim **simp, const struct rtit_sim_config *cfg)
{
	if (!simp || !cfg)
		return -RTIT_ERR_INVALID;
	*simp = NULL;
	if ((cfg->mode != 64 && cfg->mode != 32) || !cfg->clock.core_ratio ||
	    !cfg->clock.tsc_ratio || (cfg->cpl != 0 && cfg->cpl != 3) ||
	    cfg->deliver < 0 || cfg->deliver > RTIT_SIM_PER_BLOCK)
		return -RTIT_ERR_BAD_CONFIG;
	for (int i = 0; i < RTIT_SIM_NUM_CLASSES; i++)
		if (cfg->clock.cpi[i] > 255)
			return -RTIT_ERR_BAD_CONFIG;
	struct rtit_sim *sim = calloc(1, sizeof(*sim));
	if (!sim)
		return -RTIT_ERR_NOMEM;
	sim->cfg = *cfg;
	sim->sgx.cur = -1;	/* outside any enclave */
	if (!sim->cfg.batch_cap)
		sim->cfg.batch_cap = 1024;
	if (!sim->cfg.budget)
		sim->cfg.budget = 100000000ull;
	sim->batch = calloc(sim->cfg.batch_cap, sizeof(*sim->batch));
	if (!sim->batch || sim_cache_init(&sim->cache) < 0) {
		rtit_sim_free(sim);
		return -RTIT_ERR_NOMEM;
	}
	uc_mode um = cfg->mode == 64 ? UC_MODE_64 : UC_MODE_32;
	if (uc_open(UC_ARCH_X86, um, &sim->uc) != UC_ERR_OK) {
		sim->uc = NULL;
		rtit_sim_free(sim);
		return -RTIT_ERR_INTERNAL;
	}
	/* SYSENTER and friends need a recent CPU model */
	uc_ctl_set_cpu_model(sim->uc, UC_CPU_X86_SKYLAKE_CLIENT);
	sim_unicorn_init(sim);
	if (cfg->mode == 64)
		ZydisDecoderInit(&sim->dec, ZYDIS_MACHINE_MODE_LONG_64,
				 ZYDIS_STACK_WIDTH_64);
	else
		ZydisDecoderInit(&sim->dec, ZYDIS_MACHINE_MODE_LONG_COMPAT_32,
				 ZYDIS_STACK_WIDTH_32);
	struct sim_model *m = &sim->m;
	m->mode = cfg->mode;
	m->tr = -1;
	m->cpl = cfg->cpl;
	m->cr0 = cfg->cr0;
	m->cr3 = cfg->cr3;
	m->rsp0 = cfg->rsp0;
	if (m->cpl == 3) {
		m->cs = m->mode == 64 ? UCS64 : UCS32;
		m->ss = m->mode == 64 ? USS64 : USS32;
	} else {
		m->cs = KCS;
		m->ss = KSS;
	}
	sim->core_ratio = cfg->clock.core_ratio;
	sim->tsc = cfg->clock.tsc_start;
	sim->inj_due = -1;
	sim->irq_deferred = -1;
	sim->pmu_due = UINT64_MAX;
	sim->pmu.lbr.depth = RTIT_LBR_MAX_DEPTH;	/* the reset value: the deepest */
	sim->rand_state = 0x9e3779b97f4a7c15ull;
	sim_tmpl_on_state(sim);

	uc_err e = sim_hooks_add(sim);
	if (e) {
		rtit_sim_free(sim);
		return -RTIT_ERR_INTERNAL;
	}
	if (cfg->stack_size) {
		uint64_t base = (cfg->stack_top - cfg->stack_size) & ~0xfffull;
		int r = rtit_sim_map(sim, base, cfg->stack_top - base);
		if (r < 0) {
			rtit_sim_free(sim);
			return r;
		}
		sim_reg_set(sim, R_SP, cfg->stack_top);
	}
	*simp = sim;
	return 0;
}

void rtit_sim_free(struct rtit_sim *sim)
{
	if (!sim)
		return;
	if (sim->ctx)
		uc_context_free(sim->ctx);
	if (sim->init_ctx)
		uc_context_free(sim->init_ctx);
	sim_rtm_fini(sim);
	sim_linux_free(sim);
	if (sim->uc)
		uc_close(sim->uc);
	sim_cache_fini(&sim->cache);
	free(sim->batch);
	free(sim->hooked);
	for (size_t i = 0; i < sim->nsyms; i++)
		free(sim->syms[i].name);
	free(sim->syms);
	free(sim);
}

int rtit_sim_set_handler(struct rtit_sim *sim, unsigned vector, uint64_t ip)
{
	if (!sim || vector > 255)
		return -RTIT_ERR_INVALID;
	sim->m.idt[vector] = ip;
	sim->m.idt_present[vector] = 1;
	return 0;
}

int rtit_sim_set_reg(struct rtit_sim *sim, int uc_reg, uint64_t value)
{
	if (!sim || uc_reg_write(sim->uc, uc_reg, &value) != UC_ERR_OK)
		return -RTIT_ERR_INVALID;
	return 0;
}

int rtit_sim_get_reg(struct rtit_sim *sim, int uc_reg, uint64_t *value)
{
	*value = 0;
	if (!sim || uc_reg_read(sim->uc, uc_reg, value) != UC_ERR_OK)
		return -RTIT_ERR_INVALID;
	return 0;
}

uint64_t rtit_sim_rflags(struct rtit_sim *sim)
{
	return sim ? sim_reg_get(sim, R_FLAGS) : 0;
}

void rtit_sim_abort(struct rtit_sim *sim, const char *msg)
{
	if (!sim || sim->req == SIM_REQ_STOP)
		return;
	sim_stop_with(sim, RTIT_SIM_STOP_ERROR, sim_reg_get(sim, R_IP), "aborted by the consumer: %s",
		  msg ? msg : "");
}

int rtit_sim_set_entry(struct rtit_sim *sim, uint64_t ip)
{
	uint8_t b;
	if (!sim || !sim->loaded)
		return -RTIT_ERR_INVALID;
	if (uc_mem_read(sim->uc, ip, &b, 1) != UC_ERR_OK)
		return sim_seterr(sim, -RTIT_ERR_INVALID,
				  "entry 0x%" PRIx64 " is not mapped", ip);
	sim->entry = ip;
	return 0;
}

int rtit_sim_set_end(struct rtit_sim *sim, uint64_t ip)
{
	if (!sim)
		return -RTIT_ERR_INVALID;
	sim->cfg.has_end = true;
	sim->cfg.end_ip = ip;
	return 0;
}

int rtit_sim_inject(struct rtit_sim *sim, const struct rtit_sim_inject *ev)
{
	if (!sim || !ev || ev->kind <= RTIT_EV_EXCEPTION ||
	    ev->kind >= RTIT_EV_COUNT || ev->kind == RTIT_EV_RSM ||
	    ev->kind == RTIT_EV_VMENTRY || ev->kind == RTIT_EV_WAKE ||
	    ev->trigger > RTIT_SIM_AT_IP)
		return -RTIT_ERR_INVALID;
	if (ev->kind == RTIT_EV_FREQ_CHANGE && !ev->value)
		return -RTIT_ERR_BAD_CONFIG;
	if (sim->ninj == RTIT_SIM_MAX_INJECT)
		return -RTIT_ERR_NOSPACE;
	sim->inj[sim->ninj++] = *ev;
	return 0;
}

