/*
 * sgx.c - the SGX platform model (SDM Vol. 3D: chapter 38 "Enclave
 * Operation", chapter 40 "Enclave Exiting Events", and the ENCLU leaf
 * references EENTER, ERESUME, EEXIT): enclaves declared before the run
 * (ECREATE, EADD, EINIT are not modelled), ENCLU's three control-transfer
 * leaves, and what an asynchronous enclave exit (AEX) saves and
 * synthesises.  emulate.c and event.c call in here and write the
 * records (D50).
 */
#include <inttypes.h>
#include <string.h>

#include "sim_internal.h"

#define PAGE 0x1000ull
/* RFLAGS bits an AEX clears (Vol. 3D 40.1, Table 40-1): CF PF AF ZF SF
 * OF RF; the others are left unchanged. */
#define AEX_RFLAGS_CLEAR 0x108d5ull

static bool canonical(uint64_t a)
{
	return (uint64_t)((int64_t)(a << 16) >> 16) == a;
}

int rtit_sim_add_enclave(struct rtit_sim *sim, const struct rtit_sim_enclave *e)
{
	struct sim_sgx *g;

	if (!sim || !e)
		return -RTIT_ERR_INVALID;
	g = &sim->sgx;
	if (!sim->cfg.sgx)
		return sim_seterr(sim, -RTIT_ERR_INVALID, "enclave: SGX is off (the rtit dialect"
				  " models Silvermont, which has no SGX)");
	if (g->n == RTIT_SIM_SGX_MAX_ENCLAVES)
		return sim_seterr(sim, -RTIT_ERR_NOSPACE, "enclave: more than %d enclaves",
				  RTIT_SIM_SGX_MAX_ENCLAVES);
	if (!e->size || (e->base | e->size) & (PAGE - 1) || e->base + e->size < e->base ||
	    !canonical(e->base) || !canonical(e->base + e->size - 1))
		return sim_seterr(sim, -RTIT_ERR_INVALID, "enclave: base 0x%" PRIx64 " size 0x%"
				  PRIx64 ": a canonical range of whole 4 KiB pages is needed",
				  e->base, e->size);
	if (e->tcs < e->base || e->tcs - e->base >= e->size || (e->tcs & (PAGE - 1)))
		return sim_seterr(sim, -RTIT_ERR_INVALID, "enclave: tcs 0x%" PRIx64
				  " is not a 4 KiB page inside [0x%" PRIx64 ", 0x%" PRIx64 ")",
				  e->tcs, e->base, e->base + e->size);
	if (e->oentry >= e->size)
		return sim_seterr(sim, -RTIT_ERR_INVALID, "enclave: oentry 0x%" PRIx64
				  " is not inside the enclave (size 0x%" PRIx64 ")", e->oentry, e->size);
	if (!e->nssa || e->nssa > RTIT_SIM_SGX_MAX_SSA)
		return sim_seterr(sim, -RTIT_ERR_INVALID, "enclave: nssa %" PRIu32 " is not 1..%d",
				  e->nssa, RTIT_SIM_SGX_MAX_SSA);
	for (int i = 0; i < g->n; i++) {
		const struct rtit_sim_enclave *o = &g->encl[i].d;
		if (e->base < o->base + o->size && o->base < e->base + e->size)
			return sim_seterr(sim, -RTIT_ERR_INVALID, "enclave: [0x%" PRIx64 ", 0x%" PRIx64
					  ") overlaps the enclave at 0x%" PRIx64, e->base,
					  e->base + e->size, o->base);
	}
	memset(&g->encl[g->n], 0, sizeof(g->encl[g->n]));
	g->encl[g->n++].d = *e;
	return 0;
}

static int fail(struct sim_sgx_out *o, int vec, const char *why)
{
	o->vec = vec;
	o->why = why;
	return -1;
}

static void ssa_save(struct rtit_sim *sim, struct sim_sgx_ssa *f, uint64_t ip)
{
	for (int r = R_AX; r <= R_15; r++)
		f->gpr[r] = sim_reg_get(sim, r);
	f->rip = ip;
	f->rflags = sim_reg_get(sim, R_FLAGS);
}

static void ssa_restore(struct rtit_sim *sim, const struct sim_sgx_ssa *f)
{
	for (int r = R_AX; r <= R_15; r++)
		sim_reg_set(sim, r, f->gpr[r]);
	sim_reg_set(sim, R_FLAGS, f->rflags);
}

int sim_sgx_enclu(struct rtit_sim *sim, uint64_t ip, uint64_t nlip, struct sim_sgx_out *o)
{
	struct sim_sgx *g = &sim->sgx;
	struct sim_enclave *e = NULL;
	uint64_t tcs, aep;

	(void)ip;
	memset(o, 0, sizeof(*o));
	/* ENCLU "Protected Mode Exceptions": #UD without SGX
	 * (CPUID.(EAX=12H,ECX=0):EAX.SGX1 = 0: Silvermont) or outside ring 3 */
	if (!sim->cfg.sgx)
		return fail(o, 6, "ENCLU on a CPU without SGX");
	if (sim->m.cpl != 3)
		return fail(o, 6, "ENCLU outside ring 3");
	o->leaf = (uint32_t)sim_reg_get(sim, R_AX);
	switch (o->leaf) {
	case RTIT_SGX_EENTER:
	case RTIT_SGX_ERESUME:
		/* #GP(0): EENTER/ERESUME with ENCLAVE_MODE = 1 */
		if (g->cur >= 0)
			return fail(o, 13, o->leaf == RTIT_SGX_EENTER ? "EENTER inside an enclave" :
				    "ERESUME inside an enclave");
		tcs = sim_reg_get(sim, R_BX);
		for (int i = 0; i < g->n; i++)
			if (g->encl[i].d.tcs == tcs)
				e = &g->encl[i];
		if (!e)
			return fail(o, 13, "EENTER/ERESUME: RBX is not the TCS of a declared enclave");
		aep = sim_reg_get(sim, R_CX);
		if (sim->m.mode == 64 && !canonical(aep))
			return fail(o, 13, "EENTER/ERESUME: the AEP in RCX is not canonical");
		if (o->leaf == RTIT_SGX_EENTER) {
			/* EENTER: "IF (TCS.CSSA >= TCS.NSSA) #GP(0)" */
			if (e->cssa >= e->d.nssa)
				return fail(o, 13, "EENTER: no free SSA frame (TCS.CSSA = TCS.NSSA)");
			e->ursp = sim_reg_get(sim, R_SP);
			e->urbp = sim_reg_get(sim, R_BP);
			/* RCX = the IP after EENTER, RAX = TCS.CSSA */
			sim_reg_set(sim, R_CX, nlip);
			sim_reg_set(sim, R_AX, e->cssa);
			o->next = e->d.base + e->d.oentry;
		} else {
			/* ERESUME: the SSA frame CSSA - 1 must hold an AEX */
			if (!e->cssa)
				return fail(o, 13, "ERESUME: no SSA frame to resume (TCS.CSSA = 0)");
			e->ursp = sim_reg_get(sim, R_SP);
			e->urbp = sim_reg_get(sim, R_BP);
			e->cssa--;
			ssa_restore(sim, &e->ssa[e->cssa]);
			o->next = e->ssa[e->cssa].rip;
		}
		e->aep = aep;
		g->cur = (int)(e - g->encl);
		o->debug = e->d.debug;
		return 0;
	case RTIT_SGX_EEXIT:
		/* #GP(0): EEXIT with ENCLAVE_MODE = 0 */
		if (g->cur < 0)
			return fail(o, 13, "EEXIT outside an enclave");
		o->next = sim_reg_get(sim, R_BX);
		if (sim->m.mode == 64 && !canonical(o->next))
			return fail(o, 13, "EEXIT: the target in RBX is not canonical");
		sim_reg_set(sim, R_CX, nlip);	/* RCX = the IP after EEXIT */
		o->debug = g->encl[g->cur].d.debug;
		g->cur = -1;
		return 0;
	default:
		/* EREPORT, EGETKEY, EACCEPT, EMODPE, EACCEPTCOPY... are not
		 * modelled: #GP(0) as for an unsupported leaf */
		return fail(o, 13, "ENCLU leaf not modelled (only EENTER, ERESUME, EEXIT)");
	}
}

uint64_t sim_sgx_aex(struct rtit_sim *sim, uint64_t ip)
{
	struct sim_sgx *g = &sim->sgx;
	struct sim_enclave *e = &g->encl[g->cur];
	uint64_t fl;

	/* 40.4 step 1: the state into the current SSA frame, CSSA + 1
	 * (CSSA < NSSA inside an enclave: EENTER checked it) */
	ssa_save(sim, &e->ssa[e->cssa], ip);
	e->cssa++;
	/* Table 40-1: the synthetic state */
	for (int r = R_AX; r <= R_15; r++)
		if (r != R_SP && r != R_BP)
			sim_reg_set(sim, r, 0);
	sim_reg_set(sim, R_AX, RTIT_SGX_ERESUME);
	sim_reg_set(sim, R_BX, e->d.tcs);
	sim_reg_set(sim, R_CX, e->aep);
	sim_reg_set(sim, R_SP, e->ursp);
	sim_reg_set(sim, R_BP, e->urbp);
	fl = sim_reg_get(sim, R_FLAGS);
	sim_reg_set(sim, R_FLAGS, fl & ~AEX_RFLAGS_CLEAR);
	sim_reg_set(sim, R_IP, e->aep);
	g->cur = -1;
	return e->aep;
}

bool sim_sgx_debug(const struct rtit_sim *sim)
{
	return sim->sgx.cur >= 0 && sim->sgx.encl[sim->sgx.cur].d.debug;
}
