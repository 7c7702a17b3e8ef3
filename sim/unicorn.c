/*
 * unicorn.c - what the simulator knows of Unicorn 2.0.1's internals, in
 * one place: the exception QEMU remembers (reset after each exception
 * the model delivers), and the description of the abort() Unicorn calls
 * on encodings it cannot translate, for a caller's SIGABRT handler.
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
	if (a)
		uc_context_free(a);
	if (b)
		uc_context_free(b);
	uc_close(uc);
	return off;
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
