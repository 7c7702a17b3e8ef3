/*
 * init.c - the INIT state and real mode (SDM Vol. 3 "Processor state
 * after reset/INIT", Table 10-1; Intel PT Table 33-55 cases 22-24).
 *
 * Unicorn 2.0.1 opened in 64-bit mode writes only the selector when CS,
 * SS, DS or ES is set through uc_reg_write (its 64-bit register path), and
 * keeps the code-size bits of QEMU's hflags from the last 64-bit code
 * segment.  The INIT state needs CS base 0xFFFF0000 with a 16-bit code
 * segment, a SIPI CS base VV000.  Both are written into the CPU context
 * blob: QEMU's segment caches and hflags, whose offsets are found once by
 * calibration on a scratch engine (FS and GS loaded in real mode, where
 * Unicorn does load the base), as sim.c does for old_exception.  When the
 * calibration fails, INIT and SIPI end the run with a message.
 */
#include <inttypes.h>
#include <string.h>

#include "sim_internal.h"

/* Unicorn 2.0 struct uc_context, before the blob (as in sim.c) */
struct init_ctx_hdr {
	size_t size;
	int mode;
	int arch;
	char data[];
};

/* QEMU's SegmentCache: selector (u32), base (u64), limit, flags (u32) */
enum { SEG_SIZE = 24, SEG_BASE = 8, SEG_LIMIT = 16, SEG_FLAGS = 20 };
enum { SEG_ES, SEG_CS, SEG_SS, SEG_DS, SEG_FS, SEG_GS, SEG_N };
/* QEMU hflags bits (target/i386/cpu.h) */
enum {
	HF_CPL = 3u, HF_CS32 = 1u << 4, HF_SS32 = 1u << 5, HF_ADDSEG = 1u << 6,
	HF_PE = 1u << 7, HF_LMA = 1u << 14, HF_CS64 = 1u << 15
};
/* descriptor flags of real-mode segments: P, S, (code: CS, R), W, A */
#define DESC_DATA16 0x9300u
#define DESC_CODE16 0x9b00u

static long segs_off = -2;	/* -2 not calibrated, -1 failed */
static long hflags_off = -1;

static uint32_t rd32(const char *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

static uint64_t rd64(const char *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static long calibrate(void)
{
	uc_engine *uc;
	uc_context *a = NULL, *b = NULL;
	long off = -1;
	uint64_t cr0 = 0x10;
	uint16_t fs = 0x1234, gs = 0x2345;

	if (uc_open(UC_ARCH_X86, UC_MODE_64, &uc) != UC_ERR_OK)
		return -1;
	if (uc_context_alloc(uc, &a) || uc_context_alloc(uc, &b) || uc_context_save(uc, a) ||
	    uc_reg_write(uc, UC_X86_REG_CR0, &cr0) || uc_reg_write(uc, UC_X86_REG_FS, &fs) ||
	    uc_reg_write(uc, UC_X86_REG_GS, &gs) || uc_context_save(uc, b))
		goto out;
	const struct init_ctx_hdr *ha = (const void *)a, *hb = (const void *)b;
	int n = 0;
	for (size_t o = SEG_SIZE * SEG_FS + 8; o + 2 * SEG_SIZE <= hb->size; o += 4) {
		const char *p = hb->data + o;
		if (rd32(p) == fs && rd64(p + SEG_BASE) == (uint64_t)fs << 4 &&
		    rd32(p + SEG_SIZE) == gs && rd64(p + SEG_SIZE + SEG_BASE) == (uint64_t)gs << 4) {
			off = (long)o - SEG_FS * SEG_SIZE;
			n++;
		}
	}
	if (n != 1) {
		off = -1;
		goto out;
	}
	/* hflags, hflags2 come right before segs: in 64-bit mode at least
	 * LMA, CS64 and PE (Unicorn's CR0 write does not update them all:
	 * load_real writes them) */
	uint32_t h64 = rd32(ha->data + off - 8);
	if (!(h64 & HF_LMA) || !(h64 & HF_CS64) || !(h64 & HF_PE)) {
		off = -1;
		goto out;
	}
	hflags_off = off - 8;
out:
	if (a)
		uc_context_free(a);
	if (b)
		uc_context_free(b);
	uc_close(uc);
	return off;
}

static void seg_put(char *segs, int i, uint16_t sel, uint64_t base, uint32_t flags)
{
	char *p = segs + i * SEG_SIZE;
	uint32_t s = sel, lim = 0xffff;
	memcpy(p, &s, 4);
	memcpy(p + SEG_BASE, &base, 8);
	memcpy(p + SEG_LIMIT, &lim, 4);
	memcpy(p + SEG_FLAGS, &flags, 4);
}

/* Loads real-mode segment caches: CS = @cs_sel/@cs_base, and, when
 * @data, SS DS ES FS GS = 0 (the INIT state); 16-bit hflags. */
static int load_real(struct rtit_sim *sim, uint16_t cs_sel, uint64_t cs_base, bool data)
{
	if (segs_off == -2)
		segs_off = calibrate();
	if (segs_off < 0)
		return sim_seterr(sim, -RTIT_ERR_INTERNAL, "cannot load real-mode segments: "
				  "Unicorn's CPU context layout is not the one calibrated for");
	if (!sim->init_ctx && uc_context_alloc(sim->uc, &sim->init_ctx) != UC_ERR_OK)
		return sim_seterr(sim, -RTIT_ERR_NOMEM, "cannot allocate a CPU context");
	struct init_ctx_hdr *h = (void *)sim->init_ctx;
	if (uc_context_save(sim->uc, sim->init_ctx) != UC_ERR_OK)
		return sim_seterr(sim, -RTIT_ERR_INTERNAL, "cannot save the CPU context");
	char *segs = h->data + segs_off;
	seg_put(segs, SEG_CS, cs_sel, cs_base, DESC_CODE16);
	if (data)
		for (int i = SEG_ES; i < SEG_N; i++)
			if (i != SEG_CS)
				seg_put(segs, i, 0, 0, DESC_DATA16);
	uint32_t hf = rd32(h->data + hflags_off);
	hf &= ~(HF_CPL | HF_CS32 | HF_SS32 | HF_PE | HF_LMA | HF_CS64);
	hf |= HF_ADDSEG;
	memcpy(h->data + hflags_off, &hf, 4);
	if (uc_context_restore(sim->uc, sim->init_ctx) != UC_ERR_OK)
		return sim_seterr(sim, -RTIT_ERR_INTERNAL, "cannot restore the CPU context");
	sim->m.cs = cs_sel;
	sim->m.cs_base = cs_base;
	return 0;
}

int sim_real_load_cs(struct rtit_sim *sim, uint16_t cs_sel)
{
	return load_real(sim, cs_sel, (uint64_t)cs_sel << 4, false);
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
	int r = load_real(sim, cs_sel, cs_base, true);
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
