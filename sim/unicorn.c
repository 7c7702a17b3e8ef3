/*
 * unicorn.c - what the simulator knows of Unicorn 2.0.1's internals, in
 * one place: the exception QEMU remembers (reset after each exception
 * the model delivers), the real-mode segments INIT and SIPI load into
 * its CPU context (init.c), and the description of the abort() Unicorn
 * calls on encodings it cannot translate, for a caller's SIGABRT handler.
 */
#include <stdio.h>
#include <string.h>
#include <inttypes.h>

#include "sim_internal.h"

/* ------------------------------------------- Unicorn's exception memory */

/*
 * QEMU remembers the last exception it raised (env->old_exception) to turn
 * a second contributory exception into #DF (SDM 6.15, Table 6-5); it
 * forgets it only when it delivers the exception itself, which it never
 * does here (the model delivers).  Left alone, a second #DE or #GP from
 * real execution would arrive as #DF.  The field is found once, by
 * calibration on a scratch engine (the context blob with -1 before and 13
 * after a #GP), and reset to -1 after each exception Unicorn raised.
 */
struct sim_ctx_hdr {	/* Unicorn 2.0 struct uc_context, before the blob */
	size_t size;
	int mode;
	int arch;
	char data[];
};

static long old_exc_off = -2;	/* -2 not calibrated, -1 not found */

/* Frees a calibration's scratch engine and contexts; returns @off. */
static long scratch_close(uc_engine *uc, uc_context *a, uc_context *b, long off)
{
	if (a)
		uc_context_free(a);
	if (b)
		uc_context_free(b);
	uc_close(uc);
	return off;
}

static void calib_intr(uc_engine *uc, uint32_t intno, void *opaque)
{
	*(uint32_t *)opaque = intno;
	uc_emu_stop(uc);
}

static long calibrate_old_exception(void)
{
	uc_engine *uc;
	uc_context *a = NULL, *b = NULL;
	long off = -1;
	/* mov ax, 0x1234; mov ds, ax: #GP (13) */
	static const uint8_t code[] = { 0x66, 0xb8, 0x34, 0x12, 0x8e, 0xd8, 0xf4 };
	uint32_t got = 0;
	uc_hook h;
	if (uc_open(UC_ARCH_X86, UC_MODE_64, &uc) != UC_ERR_OK)
		return -1;
	if (uc_mem_map(uc, 0x1000, 0x1000, UC_PROT_ALL) ||
	    uc_mem_write(uc, 0x1000, code, sizeof(code)) ||
	    uc_hook_add(uc, &h, UC_HOOK_INTR, (void *)calib_intr, &got, 1, 0) ||
	    uc_context_alloc(uc, &a) || uc_context_alloc(uc, &b) ||
	    uc_context_save(uc, a) || uc_emu_start(uc, 0x1000, 0, 0, 0) ||
	    got != 13 || uc_context_save(uc, b))
		goto out;
	const struct sim_ctx_hdr *ha = (const void *)a, *hb = (const void *)b;
	if (ha->size + sizeof(*ha) != uc_context_size(uc) || ha->size != hb->size)
		goto out;
	int n = 0;
	for (size_t o = 0; o + 4 <= ha->size; o += 4) {
		int32_t x, y;
		memcpy(&x, ha->data + o, 4);
		memcpy(&y, hb->data + o, 4);
		if (x == -1 && y == 13) {
			off = (long)o;
			n++;
		}
	}
	if (n != 1)
		off = -1;
out:
	return scratch_close(uc, a, b, off);
}

/* Makes Unicorn forget the exception it raised last. */
void sim_forget_exception(struct rtit_sim *sim)
{
	if (old_exc_off < 0 || !sim->ctx)
		return;
	struct sim_ctx_hdr *h = (void *)sim->ctx;
	int32_t none = -1;
	if (uc_context_save(sim->uc, sim->ctx) != UC_ERR_OK)
		return;
	memcpy(h->data + old_exc_off, &none, 4);
	uc_context_restore(sim->uc, sim->ctx);
}


/* Finds the field once per process; a simulator gets the scratch context
 * forget_exception restores through. */
void sim_unicorn_init(struct rtit_sim *sim)
{
	if (old_exc_off == -2)
		old_exc_off = calibrate_old_exception();
	if (old_exc_off >= 0 && uc_context_alloc(sim->uc, &sim->ctx) != UC_ERR_OK)
		sim->ctx = NULL;
}

/* ------------------------------------------------ real-mode segments */

/*
 * Unicorn 2.0.1 opened in 64-bit mode writes only the selector when CS,
 * SS, DS or ES is set through uc_reg_write (its 64-bit register path), and
 * keeps the code-size bits of QEMU's hflags from the last 64-bit code
 * segment.  The INIT state needs CS base 0xFFFF0000 with a 16-bit code
 * segment, a SIPI CS base VV000.  Both are written into the CPU context
 * blob: QEMU's segment caches and hflags, whose offsets are found once by
 * calibration on a scratch engine (FS and GS loaded in real mode, where
 * Unicorn does load the base), as for old_exception above.
 * When the calibration fails, INIT and SIPI end the run with a message.
 */

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

static long calibrate_segs(void)
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
	const struct sim_ctx_hdr *ha = (const void *)a, *hb = (const void *)b;
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
	return scratch_close(uc, a, b, off);
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
int sim_unicorn_load_real(struct rtit_sim *sim, uint16_t cs_sel, uint64_t cs_base, bool data)
{
	if (segs_off == -2)
		segs_off = calibrate_segs();
	if (segs_off < 0)
		return sim_seterr(sim, -RTIT_ERR_INTERNAL, "cannot load real-mode segments: "
				  "Unicorn's CPU context layout is not the one calibrated for");
	if (!sim->init_ctx && uc_context_alloc(sim->uc, &sim->init_ctx) != UC_ERR_OK)
		return sim_seterr(sim, -RTIT_ERR_NOMEM, "cannot allocate a CPU context");
	struct sim_ctx_hdr *h = (void *)sim->init_ctx;
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

/* ------------------------------------------ Unicorn's abort on encodings */

/*
 * Unicorn 2.0.1 calls abort() ("tcg fatal error") when it translates some
 * invalid encodings (FF /3 and FF /5 with a register operand), before any
 * hook can turn them into #UD (docs/sim.md, "Limits").  A library cannot
 * return from that, nor should it take SIGABRT from its caller: the
 * caller that wants more than the signal installs its own handler (the
 * CLI does, cli/cmd_run.c) and calls this for the line to print.  The
 * abort is synchronous, on the thread that runs the guest, so reading
 * the guest's RIP and memory here is safe in practice.
 */
int rtit_sim_unicorn_abort_msg(struct rtit_sim *sim, char *line, size_t size)
{
	uint64_t pc = 0, at = 0;
	uint8_t buf[16];
	char bytes[3 * 16 + 1] = "";
	bool found = false;

	if (!sim || !line || !size)
		return -RTIT_ERR_INVALID;
	uc_reg_read(sim->uc, UC_X86_REG_RIP, &pc);
	/* The block being translated starts at RIP and runs straight on:
	 * its first instruction Zydis rejects, or FF /3, /5 with a register
	 * operand, is the one. */
	at = pc;
	for (int i = 0; i < 600 && !found; i++) {
		ZydisDecodedInstruction in;
		if (uc_mem_read(sim->uc, at, buf, sizeof(buf)) != UC_ERR_OK)
			break;
		if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&sim->dec, NULL, buf,
								sizeof(buf), &in)) ||
		    (buf[0] == 0xff && in.raw.modrm.mod == 3 &&
		     (in.raw.modrm.reg == 3 || in.raw.modrm.reg == 5))) {
			found = true;
			snprintf(bytes, sizeof(bytes), "%02x %02x", buf[0], buf[1]);
			break;
		}
		at += in.length;
	}
	if (found)
		return snprintf(line, size, "Unicorn 2.0.1 aborted translating the instruction "
				"at 0x%" PRIx64 " (%s ...), an invalid encoding it cannot "
				"translate (the CPU raises #UD)", at, bytes);
	return snprintf(line, size, "Unicorn 2.0.1 aborted translating the code at 0x%" PRIx64
			" (an encoding it cannot translate)", pc);
}
