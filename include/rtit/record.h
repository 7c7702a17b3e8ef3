/*
 * record.h - the record format (the isa/record layer): one 64-byte record
 * per retired instruction or event.  The simulator writes records, the
 * encoder models read them in batches (struct rtit_sim_consumer), and the
 * flow decoder gives them back; the ground-truth flow files (.flow binary,
 * .flow.txt text) and their XXH3-64 digest are made of them.  No simulator
 * needed: a decoder links this without Unicorn.  docs/sim.md gives the
 * record semantics in full, docs/formats.md the files.
 */
#ifndef RTIT_RECORD_H
#define RTIT_RECORD_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>

#include "rtit/error.h"
#include "rtit/opcodes_pt.h"	/* BBP types of PEBS items */
#include "rtit/pebs.h"		/* PEBS groups and items */

/* Instruction classes, after RTIT 2.2 / Table 2 ("Classifying branches and
 * COFI") and Intel PT Table 33-1 (COFI type for branch instructions). */
enum rtit_insn_class {
	RTIT_IC_OTHER = 0,	/* not a branch */
	RTIT_IC_COND,		/* Jcc, LOOP/LOOPcc, JCXZ/JECXZ/JRCXZ */
	RTIT_IC_DIRECT_JMP,	/* near relative JMP */
	RTIT_IC_DIRECT_CALL,	/* near relative CALL (flag ZERO_LEN_CALL) */
	RTIT_IC_INDIRECT_JMP,	/* near JMP r/m */
	RTIT_IC_INDIRECT_CALL,	/* near CALL r/m */
	RTIT_IC_RET,		/* near RET, RET imm16 */
	RTIT_IC_FAR_JMP,
	RTIT_IC_FAR_CALL,
	RTIT_IC_FAR_RET,
	RTIT_IC_IRET,
	RTIT_IC_INT,		/* INT n, INT3, INTO, INT1; vector in rec */
	RTIT_IC_SYSCALL,
	RTIT_IC_SYSRET,
	RTIT_IC_SYSENTER,
	RTIT_IC_SYSEXIT,
	RTIT_IC_MOV_CR3,	/* MOV to CR3 */
	RTIT_IC_MOV_CR0,	/* MOV to CR0 */
	RTIT_IC_WRMSR,
	RTIT_IC_RDMSR,
	RTIT_IC_HLT,
	RTIT_IC_PTWRITE,
	RTIT_IC_MWAIT,		/* MWAIT; value = EAX (hints), msr = ECX
				 * (extensions), vector = the C-state n
				 * entered (Cn), 0 when none was (a C0
				 * request, the monitor not armed) */
	RTIT_IC_XBEGIN,		/* XBEGIN (RTM); flag TX when it began the
				 * outermost transaction (InTX 0 -> 1);
				 * vector = the nesting depth after it */
	RTIT_IC_XEND,		/* XEND inside a transaction; flag TX when it
				 * committed the outermost one (InTX 1 -> 0);
				 * vector = the nesting depth after it */
	RTIT_IC_ENCLU,		/* ENCLU leaf EENTER/ERESUME/EEXIT (SGX);
				 * value = the leaf (EAX: 2, 3, 4); vector =
				 * 1 when the enclave entered or left is a
				 * debug one (SECS.ATTRIBUTES.DEBUG), 0 for
				 * an opt-out (production) one; next_ip =
				 * the enclave entry, the resumed IP, or
				 * EEXIT's target (RBX) */
	RTIT_IC_UIRET,		/* UIRET (user interrupts) */
	RTIT_IC_COUNT
};

/* Event kinds (records with kind RTIT_SIM_EVENT). */
enum rtit_sim_event {
	RTIT_EV_NONE = 0,
	RTIT_EV_EXCEPTION,	/* vector; flag FAULT (ip = CLIP) or not (NLIP) */
	RTIT_EV_EXT_INTERRUPT,	/* vector; ip = NLIP */
	RTIT_EV_NMI,		/* ip = NLIP */
	RTIT_EV_SMI,		/* ip = NLIP; followed by RSM */
	RTIT_EV_RSM,		/* next_ip = resumed IP */
	RTIT_EV_VMEXIT,		/* ip = NLIP of the guest; msr = exit reason
				 * (SDM Vol. 3 Appendix C; bits 15:0 the basic
				 * reason), value = exit qualification, vector
				 * = the event's vector when the basic reason
				 * is 0 (exception or NMI) or 1 (external
				 * interrupt) */
	RTIT_EV_VMENTRY,	/* next_ip = resumed guest IP */
	RTIT_EV_FREQ_CHANGE,	/* value = new core:bus ratio */
	RTIT_EV_SLEEP,		/* vector = C-state; value = TSC ticks asleep */
	RTIT_EV_WAKE,		/* after SLEEP */
	RTIT_EV_MSR_WRITE_EXTERNAL, /* msr, value (a debugger's write) */
	RTIT_EV_TSX_ABORT,	/* RTM abort: ip = the aborting point (CLIP:
				 * the XABORT, the faulting instruction, the
				 * next one for an interrupt), next_ip = the
				 * fallback; value = EAX status, vector = the
				 * nesting depth it aborted from */
	RTIT_EV_AEX,		/* SGX asynchronous enclave exit: ip = the
				 * interrupted enclave IP (CLIP with flag
				 * FAULT for a fault, else NLIP), value =
				 * the AEP (the IP the event is delivered
				 * from), next_ip = the handler of the
				 * interrupt, NMI or exception (vector,
				 * HAS_ERR, msr = error code), or the AEP
				 * itself before an SMI or VM exit, whose
				 * own records follow at the AEP */
	RTIT_EV_INIT,		/* INIT signal */
	RTIT_EV_SIPI,		/* start-up IPI; vector = SIPI vector */
	RTIT_EV_UINTR,		/* user-interrupt delivery; vector = UIV */
	RTIT_EV_PEBS,		/* a PEBS record written (PEBS output to Intel
				 * PT): ip = next_ip = the next instruction
				 * (where the record binds), value = the
				 * eventing IP, msr = rtit_pebs_digest of its
				 * items, vector = its groups (RTIT_PEBS_G_*);
				 * the record: rtit_sim_pebs_record() */
	RTIT_EV_COUNT
};

enum rtit_sim_rec_kind {
	RTIT_SIM_INSN = 1,	/* a retired instruction */
	RTIT_SIM_EVENT = 2	/* an asynchronous event or exception */
};

/* Record flags. */
enum {
	RTIT_SIM_F_TAKEN = 1u << 0,	/* branch taken (COND), or any COFI done */
	RTIT_SIM_F_ZERO_LEN_CALL = 1u << 1, /* CALL rel 0 (RTIT 2.2.2) */
	RTIT_SIM_F_FAULT = 1u << 2,	/* EXCEPTION: ip is the faulting insn */
	RTIT_SIM_F_CR0_PG = 1u << 3,	/* CR0.PG after */
	RTIT_SIM_F_HAS_ERR = 1u << 4,	/* EXCEPTION pushed an error code (msr) */
	RTIT_SIM_F_IF = 1u << 5,	/* RFLAGS.IF after the record (SDM 33.4.2.8:
					 * MODE.Exec's IF bit with EventEn) */
	RTIT_SIM_F_TX = 1u << 6,	/* XBEGIN/XEND changed InTX (outermost) */
	RTIT_SIM_F_ENCLAVE = 1u << 7	/* inside an SGX enclave after the record
					 * (CR_ENCLAVE_MODE = 1), debug or opt-out:
					 * which one, the EENTER/ERESUME record
					 * that entered it says (its vector) */
};

/* SGX (SDM Vol. 3D): ENCLU's leaves in EAX that the model executes. */
enum {
	RTIT_SGX_EENTER = 2,
	RTIT_SGX_ERESUME = 3,
	RTIT_SGX_EEXIT = 4
};

/* RTM (SDM Vol. 1 chapter 16 "Programming with Intel TSX", Vol. 2
 * XBEGIN/XABORT): the EAX status of an abort (Table 16-1 "RTM Abort
 * Status Definition"); XABORT's imm8 goes in bits 31:24. */
enum {
	RTIT_RTM_ABORT_XABORT = 1u << 0,	/* XABORT executed */
	RTIT_RTM_ABORT_RETRY = 1u << 1,		/* may succeed on a retry */
	RTIT_RTM_ABORT_CONFLICT = 1u << 2,	/* another agent's access */
	RTIT_RTM_ABORT_CAPACITY = 1u << 3,	/* an internal buffer overflowed */
	RTIT_RTM_ABORT_DEBUG = 1u << 4,		/* a debug breakpoint was hit */
	RTIT_RTM_ABORT_NESTED = 1u << 5		/* aborted inside a nested one */
};

/* VM exits (SDM Vol. 3 Appendix C "VMX Basic Exit Reasons"): the basic
 * reasons the trace treats apart.  0 and 1 carry the event's vector, and
 * with SMIs (5, 6) are the exits "caused by interrupt, fault, or SMI" of
 * Table 33-59 case 13 (CFE.VMEXIT_INTR). */
enum {
	RTIT_VMX_EXIT_EXCEPTION_NMI = 0,
	RTIT_VMX_EXIT_EXT_INTERRUPT = 1,
	RTIT_VMX_EXIT_IO_SMI = 5,
	RTIT_VMX_EXIT_OTHER_SMI = 6,
	RTIT_VMX_EXIT_PREEMPTION_TIMER = 52	/* a scenario's default */
};

static inline bool rtit_vmx_exit_has_vector(uint32_t reason)
{
	return (reason & 0xffffu) <= RTIT_VMX_EXIT_EXT_INTERRUPT;
}

static inline bool rtit_vmx_exit_is_intr(uint32_t reason)
{
	uint32_t basic = reason & 0xffffu;
	return basic <= RTIT_VMX_EXIT_EXT_INTERRUPT || basic == RTIT_VMX_EXIT_IO_SMI ||
	       basic == RTIT_VMX_EXIT_OTHER_SMI;
}

/* Execution mode after the record (the value is the operand width). */
enum rtit_sim_mode {
	RTIT_SIM_MODE_16 = 16,
	RTIT_SIM_MODE_32 = 32,
	RTIT_SIM_MODE_64 = 64
};

/* The INIT state's CS (SDM Vol. 3 Table 10-1: selector F000H, base
 * FFFF0000H, IP FFF0H): the BSP's reset vector, LIP FFFFFFF0H (Table
 * 33-55 case 22's ResetLIP). */
#define RTIT_SIM_RESET_CS 0xF000u
#define RTIT_SIM_RESET_CS_BASE 0xFFFF0000ull
#define RTIT_SIM_RESET_IP 0xFFF0ull
#define RTIT_SIM_RESET_LIP (RTIT_SIM_RESET_CS_BASE + RTIT_SIM_RESET_IP)

/*
 * One retired instruction or one event, 64 bytes (a cache line).
 *
 * Instruction (kind INSN): ip, len, cls; next_ip is the IP of the next
 * instruction that executes in program order (branch target when taken,
 * fall-through otherwise; for INT/SYSCALL... the handler).  cpl, cr3, mode,
 * flags describe the state after the instruction.  cycles is the cumulative
 * core cycle count after it retired, tsc the TSC then.  value: PTWRITE
 * operand, WRMSR/RDMSR value, MOV CR value; msr: MSR number.
 *
 * Event (kind EVENT): cls holds enum rtit_sim_event.  ip is the IP saved for
 * the interrupted flow (RTIT Table 1: NLIP for interrupts and traps; the
 * faulting instruction, CLIP, for faults, flag FAULT), next_ip is where
 * execution continues (the handler, or the resumed IP).  A fault replaces
 * the instruction it hit: that instruction has no INSN record.
 */
struct rtit_sim_rec {
	uint64_t ip;
	uint64_t next_ip;
	uint64_t cr3;
	uint64_t cycles;
	uint64_t tsc;
	uint64_t value;
	uint32_t msr;
	uint8_t kind;		/* enum rtit_sim_rec_kind */
	uint8_t cls;		/* enum rtit_insn_class or enum rtit_sim_event */
	uint8_t len;		/* instruction length, 0 for events */
	uint8_t flags;		/* RTIT_SIM_F_* */
	uint8_t cpl;		/* 0 or 3 */
	uint8_t mode;		/* enum rtit_sim_mode */
	uint8_t vector;		/* INT/exception/interrupt vector, C-state */
	uint8_t pad0;
	uint32_t pad1;		/* zero */
};

_Static_assert(sizeof(struct rtit_sim_rec) == 64, "one record is 64 bytes");

/* How records reach the consumer: one call per record, one per block (the
 * records finalised together), or in batches of up to batch_cap. */
enum rtit_sim_deliver {
	RTIT_SIM_PER_BATCH = 0,
	RTIT_SIM_PER_INSN = 1,
	RTIT_SIM_PER_BLOCK = 2
};

/*
 * The consumer (an encoder model, a flow writer).  All callbacks optional.
 * on_batch: n >= 1 records, valid only during the call.
 * msr_write/msr_read: an access to a trace MSR (RTIT 0x760-0x77D or Intel
 * PT 0x560-0x561, 0x570-0x572, 0x580-0x587) by the guest (ctx = the WRMSR or
 * RDMSR record being built) or from outside (ctx = the event record), or
 * a preset before the run (ctx->kind == 0); and, as a preset before the
 * others, the clock's core:bus ratio (RTIT_SIM_MSR_PERF_STATUS below).
 * Every record before ctx has
 * been delivered.  Return >= 0 to accept, < 0 for #GP.
 */
struct rtit_sim_pebs;

/* IA32_PERF_STATUS: bits 15:8 the current core:bus ratio.  The simulator
 * reports its clock's ratio (`clock core_ratio`) to the consumer as a
 * preset write of it before the trace MSR presets, so that the trace
 * block's ratio (RTIT STS ACBR/ECBR, 4.2.13; Intel PT CBR, SDM 33.4.2.13)
 * has one source; later changes are RTIT_EV_FREQ_CHANGE records (D79). */
#define RTIT_SIM_MSR_PERF_STATUS 0x198u

struct rtit_sim_consumer {
	void (*on_batch)(const struct rtit_sim_rec *recs, size_t n, void *opaque);
	int (*msr_write)(void *opaque, uint32_t msr, uint64_t value,
			 const struct rtit_sim_rec *ctx);
	int (*msr_read)(void *opaque, uint32_t msr, uint64_t *value,
			const struct rtit_sim_rec *ctx);
	/* on_pebs: a PEBS record was written (RTIT_EV_PEBS, docs/sim.md
	 * "PEBS"): @p is the sim's snapshot, valid during the call; ctx is
	 * the RTIT_EV_PEBS record, delivered right after, alone in its
	 * batch.  Every record before ctx has been delivered. */
	void (*on_pebs)(void *opaque, const struct rtit_sim_pebs *p,
			const struct rtit_sim_rec *ctx);
	void *opaque;
};

/*
 * One PEBS record as the assist writes it after the instruction that made
 * the counter overflow retired (docs/sim.md "PEBS", D53): the state after
 * that instruction.  Fields in the order of SDM Table 33-47.
 */
struct rtit_sim_pebs {
	/* GPRs: RFLAGS, RIP (the next instruction), then RAX, RCX, RDX,
	 * RBX, RSP, RBP, RSI, RDI, R8-R15 (32-bit mode: EAX..EDI, the rest
	 * 0, zero-extended) */
	uint64_t gpr[18];
	/* Basic: the eventing IP (the instruction that overflowed the
	 * counter), the applicable counters (IA32_PERF_GLOBAL_STATUS bits:
	 * bit 0 = PMC0), the TSC when the record was written */
	uint64_t ip, counters, tsc;
	/* Memory Info: MemAccessAddress (the linear address of the eventing
	 * instruction's explicit memory operand, 0 when it has none or the
	 * instruction overwrote its base or index register), MemAuxInfo,
	 * MemAccessLatency, TSXAuxInfo (fixed values, docs/sim.md) */
	uint64_t mem[4];
	uint64_t xmm[32];	/* XMMn_Q0, XMMn_Q1 for n = 0..15 */
	/* LBRs: FROM_IP, TO_IP, INFO of LBR[TOS-0] (the youngest), then
	 * LBR[TOS-1]...; nlbr entries (IA32_PEBS_DATA_CFG bits 31:24 + 1;
	 * those beyond IA32_LBR_DEPTH, or never written, are 0) */
	uint64_t lbr[96];
	uint8_t nlbr;
	uint8_t groups;		/* RTIT_PEBS_G_* written (IA32_PEBS_DATA_CFG) */
	uint8_t mode;		/* 32 or 64: the mode at the record */
};

/*
 * The items of record @p in the order they go into the trace (D54): the
 * blocks by ascending BBP type, as Table 33-47 lists them (GPRs, Basic,
 * Memory, LBR, XMM), each block's items by ascending ID; the LBR
 * entries, youngest first, three items each (FROM_IP, TO_IP, INFO), fill
 * LBR Block 0, 1 and 2 with 32 items each (LBR_1's first item is
 * LBR[TOS-10]_INFO).  In 32-bit mode the
 * GPR block has 4-byte items (BBP.SZ=1) and no R8-R15; every other block
 * has 8-byte items (IPs, the TSC, addresses and XMM quadwords are 64-bit
 * values).  Returns the count.
 */
static inline size_t rtit_pebs_items(const struct rtit_sim_pebs *p,
				     struct rtit_pebs_item out[RTIT_PEBS_MAX_ITEMS])
{
	size_t n = 0;

	if (p->groups & RTIT_PEBS_G_GPR) {
		unsigned k = p->mode == RTIT_SIM_MODE_64 ? 18 : 10;
		for (unsigned i = 0; i < k; i++)
			out[n++] = (struct rtit_pebs_item){
				rtit_pt_bbp_gpr, (uint8_t)i, p->mode != RTIT_SIM_MODE_64,
				p->mode == RTIT_SIM_MODE_64 ? p->gpr[i] : p->gpr[i] & 0xffffffffull };
	}
	out[n++] = (struct rtit_pebs_item){ rtit_pt_bbp_pebs_basic, 0, 0, p->ip };
	out[n++] = (struct rtit_pebs_item){ rtit_pt_bbp_pebs_basic, 1, 0, p->counters };
	out[n++] = (struct rtit_pebs_item){ rtit_pt_bbp_pebs_basic, 2, 0, p->tsc };
	if (p->groups & RTIT_PEBS_G_MEM)
		for (unsigned i = 0; i < 4; i++)
			out[n++] = (struct rtit_pebs_item){ rtit_pt_bbp_pebs_mem, (uint8_t)i, 0, p->mem[i] };
	if (p->groups & RTIT_PEBS_G_LBR)
		for (unsigned i = 0; i < 3u * p->nlbr; i++)
			out[n++] = (struct rtit_pebs_item){ (uint8_t)(rtit_pt_bbp_lbr0 + i / 32),
							    (uint8_t)(i % 32), 0, p->lbr[i] };
	if (p->groups & RTIT_PEBS_G_XMM)
		for (unsigned i = 0; i < 32; i++)
			out[n++] = (struct rtit_pebs_item){ rtit_pt_bbp_xmm, (uint8_t)i, 0, p->xmm[i] };
	return n;
}


/* Names of classes and events (static strings). */
const char *rtit_insn_class_name(int cls);
const char *rtit_sim_event_name(int ev);

/* ---- Ground-truth flow: binary file, text, XXH3 digest ---- */

#define RTIT_FLOW_MAGIC "RTITFLOW"
/* The binary file's versions (docs/formats.md, D180): 1 holds each record
 * in its canonical 64 bytes; 2 (compact) holds blocks of records coded
 * against what the records before predict, a few bytes each.  Both end
 * with the same trailer: the count and the digest of the canonical
 * records, so flow_xxh3 does not depend on the version. */
#define RTIT_FLOW_V1 1
#define RTIT_FLOW_V2 2

/* A flow writer: a consumer that hashes every record (XXH3-64 over the
 * canonical 64-byte little-endian form) and optionally writes the binary
 * form (bin, version 1 unless rtit_flow_writer_init_version said 2) and/or
 * one text line per record (txt).  Records are packed
 * into chunks of 512; chunks are hashed, written to bin in one call per
 * run of chunks (version 2: coded into blocks of 16384 records, one call
 * a block, D180) and formatted into a 1 MiB text buffer, written when
 * full (D138, D160); with the writer thread, into 512 KiB buffers that an
 * output thread writes in order (D187). */
struct rtit_flow_writer {
	FILE *bin;
	FILE *txt;
	uint64_t count;
	void *xxh;		/* XXH3_state_t */
	int err;
	int os_err;		/* errno of the first failed write, or 0 */
	void *priv;		/* the chunks, the text buffer, the thread */
};

/* Starts a writer; bin/txt may be NULL.  Writes the binary header. */
int rtit_flow_writer_init(struct rtit_flow_writer *w, FILE *bin, FILE *txt);

/* The same with a writer thread (D138, D160): the chunks go through a
 * 2 MiB ring to a second thread, which hashes, writes and formats them in
 * order, so the files and the digest are byte for byte those of
 * rtit_flow_writer_init; the caller's thread only packs records.  Without a thread (pthread_create failed) it works
 * as rtit_flow_writer_init.  The files must not be touched by anyone else
 * until rtit_flow_writer_fini returns. */
int rtit_flow_writer_init_async(struct rtit_flow_writer *w, FILE *bin, FILE *txt);

/* Either of the above (@async) writing binary version @version
 * (RTIT_FLOW_V1 or RTIT_FLOW_V2; -RTIT_ERR_INVALID for another).  With
 * version 2 the records are coded where they are hashed: on the writer
 * thread when there is one. */
int rtit_flow_writer_init_version(struct rtit_flow_writer *w, FILE *bin, FILE *txt,
				  int version, bool async);

/* Consumer callback for struct rtit_sim_consumer.on_batch. */
void rtit_flow_writer_on_batch(const struct rtit_sim_rec *recs, size_t n,
			       void *opaque);

/* Finishes: writes what is buffered and the binary trailer (count,
 * canonical digest), stops the thread, frees the buffers, returns the
 * digest in *digest.  Returns 0 or -RTIT_ERR_IO (os_err and errno: why);
 * after a failed write nothing more is written. */
int rtit_flow_writer_fini(struct rtit_flow_writer *w, uint64_t *digest);

/* Serialises one record into its canonical 64 bytes. */
void rtit_sim_rec_pack(const struct rtit_sim_rec *r, uint8_t out[64]);

/* Formats one record as one text line (no newline); returns its length. */
int rtit_sim_rec_format(const struct rtit_sim_rec *r, char *buf, size_t size);

/* Reads a binary flow file (either version) into a malloc'd array;
 * -RTIT_ERR_IO or -RTIT_ERR_INVALID (bad magic, version, size, a malformed
 * or cut block, count, digest). */
int rtit_flow_read(FILE *f, struct rtit_sim_rec **recs, size_t *n);

/* The same; on -RTIT_ERR_INVALID *why (when @why is not NULL) says what is
 * wrong (struct rtit_flow_reader's why), else NULL. */
int rtit_flow_read_why(FILE *f, struct rtit_sim_rec **recs, size_t *n, const char **why);

/* A binary flow file (either version) read in pieces, in constant memory
 * (version 2: one block of at most 1.2 MB at a time). */
struct rtit_flow_reader {
	FILE *f;
	void *xxh;		/* XXH3_state_t */
	uint64_t count;		/* records read so far */
	bool done;		/* the trailer was read and matched */
	int err;		/* a failure after the records last returned */
	int version;		/* the file's: RTIT_FLOW_V1 or RTIT_FLOW_V2 */
	const char *why;	/* with err or a failed open: what is wrong, one
				 * phrase (a static string), NULL for I/O */
	void *priv;		/* version 2: the block and the predictor */
	uint64_t digest;	/* once done: the trailer's digest (the records') */
};

/* Reads the header.  Returns 0, -RTIT_ERR_IO (cannot read),
 * -RTIT_ERR_INVALID (not a flow file of a known version; rd->why says
 * what), -RTIT_ERR_NOMEM. */
int rtit_flow_reader_open(struct rtit_flow_reader *rd, FILE *f);

/*
 * Reads up to @max records into @recs.  Returns how many (0: the end,
 * after the trailer's count and digest matched what was read), or
 * -RTIT_ERR_INVALID: the file ends without its trailer, a version 2
 * block is cut short or malformed (none of its records is returned), or
 * the trailer's count or digest differs (a truncated or altered file;
 * rd->count says how many records came before, rd->why what is wrong),
 * -RTIT_ERR_IO.  The records read before
 * a failure are returned first; the failure comes with the next call.
 */
long rtit_flow_reader_next(struct rtit_flow_reader *rd, struct rtit_sim_rec *recs, size_t max);

/* Frees the reader's state (the FILE stays open). */
void rtit_flow_reader_close(struct rtit_flow_reader *rd);

#endif /* RTIT_RECORD_H */
