/*
 * sim.h - the simulator's input side: real machine code runs in Unicorn,
 * a small platform model around it produces the exact sequence of retired
 * instructions and events the trace block would see (issue 3).
 *
 * The encoder models consume the stream as fixed-size records
 * (struct rtit_sim_rec) in batches; nothing is allocated per record.
 * See docs/sim.md for the record semantics in full.
 */
#ifndef RTIT_SIM_H
#define RTIT_SIM_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>

#include "rtit/error.h"

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

/* An enclave of the platform model, built and initialised before the run
 * (ECREATE, EADD, EINIT are not modelled): ELRANGE [base, base + size),
 * one TCS at tcs (inside it) with OENTRY oentry (an offset from base) and
 * nssa SSA frames; debug = SECS.ATTRIBUTES.DEBUG (traced normally by
 * Intel PT; an opt-out enclave clears ContextEn, SDM 33.2.6.3). */
struct rtit_sim_enclave {
	uint64_t base, size;
	uint64_t tcs;
	uint64_t oentry;
	uint32_t nssa;		/* 1..RTIT_SIM_SGX_MAX_SSA */
	bool debug;
};

#define RTIT_SIM_SGX_MAX_ENCLAVES 4
#define RTIT_SIM_SGX_MAX_SSA 4

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

/* MAX_RTM_NEST_COUNT (implementation-specific, XBEGIN pseudocode): an
 * XBEGIN at this depth aborts.  rtitsim's value, docs/decisions.md. */
#define RTIT_SIM_RTM_MAX_NEST 7
/* The write set an RTM transaction may hold: 64-byte lines (the L1D of a
 * Skylake client, 32 KiB); one more aborts with CAPACITY. */
#define RTIT_SIM_RTM_LINES 512

/* Execution mode after the record (the value is the operand width). */
enum rtit_sim_mode {
	RTIT_SIM_MODE_16 = 16,
	RTIT_SIM_MODE_32 = 32,
	RTIT_SIM_MODE_64 = 64
};

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
 * a preset before the run (ctx->kind == 0).  Every record before ctx has
 * been delivered.  Return >= 0 to accept, < 0 for #GP.
 */
struct rtit_sim_pebs;

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

/* Injected event triggers. */
enum rtit_sim_trigger {
	RTIT_SIM_AT_INSN = 0,	/* when N instructions have retired */
	RTIT_SIM_AT_IP = 1	/* before the instruction at IP first executes */
};

struct rtit_sim_inject {
	uint8_t trigger;	/* enum rtit_sim_trigger */
	uint8_t kind;		/* enum rtit_sim_event (not EXCEPTION) */
	uint8_t vector;		/* interrupt vector, C-state */
	uint64_t at;		/* instruction count or IP */
	uint64_t value;		/* ratio, MSR value, TSC ticks asleep,
				 * TSX_ABORT: the EAX status */
	uint32_t msr;
	uint64_t duration;	/* cycles spent in SMM / VMX root */
	/* VMEXIT: msr = exit reason, value = exit qualification, vector =
	 * the vector of the event that caused it (basic reason 0 or 1) */
};

#define RTIT_SIM_MAX_INJECT 64
#define RTIT_SIM_NUM_CLASSES RTIT_IC_COUNT

/* Clock model: cycles per instruction per class; TSC advances tsc_ratio
 * ticks per bus clock, the core core_ratio cycles per bus clock (PT CBR);
 * the crystal (ART) runs so that TSC = ART * art_num / art_den (CPUID.15H). */
struct rtit_sim_clock {
	uint32_t cpi[RTIT_SIM_NUM_CLASSES];
	uint32_t tsc_ratio;
	uint32_t core_ratio;
	uint32_t art_num;
	uint32_t art_den;
	uint64_t tsc_start;
};

/* The crystal clock (Intel PT ART) at a TSC value: TSC = ART * num / den
 * (CPUID.15H), so ART = TSC * den / num. */
static inline uint64_t rtit_sim_clock_art(const struct rtit_sim_clock *c,
					  uint64_t tsc)
{
	if (!c->art_num)
		return 0;
	return tsc / c->art_num * c->art_den +
	       tsc % c->art_num * c->art_den / c->art_num;
}

struct rtit_sim_config {
	int mode;			/* 32 or 64 */
	uint64_t budget;		/* instruction budget, 0 = default 100M */
	int deliver;			/* enum rtit_sim_deliver */
	size_t batch_cap;		/* records per batch (default 1024) */
	int cpl;			/* initial CPL, 0 or 3 */
	uint64_t cr3;			/* initial CR3 */
	uint64_t cr0;			/* initial CR0 (default PE|PG) */
	uint64_t stack_top;		/* default 0x80000000 */
	uint64_t stack_size;		/* default 64 KiB */
	uint64_t rsp0;			/* stack on a CPL 3->0 interrupt */
	bool has_end;
	uint64_t end_ip;		/* stop before executing this IP */
	bool precise_faults;		/* exact #PF IP (sync PC per access) */
	struct rtit_sim_clock clock;
	struct rtit_sim_consumer consumer;
	/* RTM (Intel TSX): off = XBEGIN, XEND, XABORT, XTEST raise #UD (a
	 * CPU without it: Silvermont, the RTIT dialect); on = emulated
	 * (docs/sim.md "RTM").  rtm_lines: the write-set capacity in 64-byte
	 * lines, 0 = RTIT_SIM_RTM_LINES. */
	bool rtm;
	uint32_t rtm_lines;
	/* The performance-monitoring model (sim/pmu.c, docs/sim.md "PEBS"):
	 * off = its MSRs raise #GP as any MSR the sim does not model (a CPU
	 * without PEBS output to Intel PT: Silvermont, the RTIT dialect). */
	bool pmu;
	/* User interrupts (SDM Vol. 3 "User Interrupts"): off = STUI, CLUI,
	 * TESTUI, UIRET raise #UD and the IA32_UINTR_* MSRs #GP (Silvermont,
	 * the RTIT dialect); on = modelled (docs/sim.md "User interrupts"). */
	bool uintr;
	/* SGX (ENCLU EENTER, ERESUME, EEXIT; AEX): off = ENCLU is #UD (a
	 * CPU without it: Silvermont, the RTIT dialect); on = the enclaves
	 * added with rtit_sim_add_enclave (docs/sim.md "SGX"). */
	bool sgx;
};

/* The IA32_UINTR_* MSRs (SDM Vol. 4 Table 2-2; Vol. 3 "User Interrupts"). */
enum {
	RTIT_SIM_MSR_UINTR_RR = 0x985,		/* UIRR: requested user interrupts */
	RTIT_SIM_MSR_UINTR_HANDLER = 0x986,	/* UIHANDLER */
	RTIT_SIM_MSR_UINTR_STACKADJUST = 0x987,	/* UISTACKADJUST */
	RTIT_SIM_MSR_UINTR_MISC = 0x988,	/* UITTSZ [31:0], UINV [39:32] */
	RTIT_SIM_MSR_UINTR_PD = 0x989,		/* UPIDADDR */
	RTIT_SIM_MSR_UINTR_TT = 0x98A		/* UITTADDR */
};

/* The INIT state's CS (SDM Vol. 3 Table 10-1: selector F000H, base
 * FFFF0000H, IP FFF0H): the BSP's reset vector, LIP FFFFFFF0H (Table
 * 33-55 case 22's ResetLIP). */
#define RTIT_SIM_RESET_CS 0xF000u
#define RTIT_SIM_RESET_CS_BASE 0xFFFF0000ull
#define RTIT_SIM_RESET_IP 0xFFF0ull
#define RTIT_SIM_RESET_LIP (RTIT_SIM_RESET_CS_BASE + RTIT_SIM_RESET_IP)

/* Why rtit_sim_run stopped. */
enum rtit_sim_stop {
	RTIT_SIM_STOP_NONE = 0,
	RTIT_SIM_STOP_HALTED,		/* HLT with IF=0 or no wake event */
	RTIT_SIM_STOP_END,		/* reached end_ip */
	RTIT_SIM_STOP_BUDGET,		/* instruction budget exhausted */
	RTIT_SIM_STOP_FAULT,		/* fault with no handler, or double */
	RTIT_SIM_STOP_ERROR		/* emulator or model error */
};

struct rtit_sim_status {
	int stop;			/* enum rtit_sim_stop */
	uint64_t ip;			/* where it stopped */
	uint64_t insns;			/* instructions retired */
	uint64_t events;		/* event records */
	char msg[256];			/* one line */
};

struct rtit_sim;	/* opaque; see sim/sim_internal.h */

/* PEBS groups, as IA32_PEBS_DATA_CFG bits 3:0 (SDM Vol. 3 20.9.2.1);
 * Basic is always written. */
enum {
	RTIT_PEBS_G_MEM = 1u << 0,	/* Memory Info */
	RTIT_PEBS_G_GPR = 1u << 1,	/* general-purpose registers */
	RTIT_PEBS_G_XMM = 1u << 2,	/* XMM0-15 */
	RTIT_PEBS_G_LBR = 1u << 3	/* LBRs (D63) */
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

/* Fills cfg with defaults: 64-bit, CPL 0, CR0 = PE|PG, CPI 1, ratios 1. */
void rtit_sim_config_default(struct rtit_sim_config *cfg);

/*
 * Creates a simulator.  The first call in a process calibrates a Unicorn
 * detail once (docs/sim.md) and is not thread-safe; later calls are
 * independent.  Returns 0 or -RTIT_ERR_INVALID (bad cfg),
 * -RTIT_ERR_BAD_CONFIG (bad mode, ratio), -RTIT_ERR_NOMEM, -RTIT_ERR_INTERNAL
 * (Unicorn refused to open).
 */
int rtit_sim_new(struct rtit_sim **simp, const struct rtit_sim_config *cfg);

/* Frees a simulator (NULL allowed). */
void rtit_sim_free(struct rtit_sim *sim);

/*
 * Maps zeroed guest memory [addr, addr+size) (page-rounded) read/write/exec.
 * Returns 0 or -RTIT_ERR_INVALID (overlaps a mapping) with the reason in
 * rtit_sim_errmsg().
 */
int rtit_sim_map(struct rtit_sim *sim, uint64_t addr, uint64_t size);

/* Loads a flat binary at addr and sets the entry.  Returns 0 or negative,
 * message in rtit_sim_errmsg(). */
int rtit_sim_load_flat(struct rtit_sim *sim, const void *bytes, size_t len,
		       uint64_t addr, uint64_t entry);

/* Loads a flat binary file. */
int rtit_sim_load_flat_file(struct rtit_sim *sim, const char *path,
			    uint64_t addr, uint64_t entry);

/* Loads a static ELF executable (ELFCLASS64 x86-64 or ELFCLASS32 i386) by
 * its PT_LOAD program headers; keeps its symbols.  -RTIT_ERR_IO,
 * -RTIT_ERR_INVALID (malformed, overlapping, entry not loaded). */
int rtit_sim_load_elf(struct rtit_sim *sim, const char *path);

/*
 * Assembles GNU as source text (.intel_syntax allowed) and links it with
 * ld -Ttext=addr, entry at symbol _start if defined else addr, then loads
 * the ELF.  line_base is added to assembler line numbers in messages, name
 * is the file named in them.
 */
int rtit_sim_load_asm(struct rtit_sim *sim, const char *src, uint64_t addr,
		      const char *name, int line_base);

/* Looks up a symbol of the loaded ELF/asm; 0 if found, -RTIT_ERR_INVALID. */
int rtit_sim_symbol(const struct rtit_sim *sim, const char *name,
		    uint64_t *value);

/* Sets the handler of an interrupt vector (the interrupt table). */
int rtit_sim_set_handler(struct rtit_sim *sim, unsigned vector, uint64_t ip);

/*
 * Tasks (mode 32 only: IA-32e mode has no task switching, SDM Vol. 3
 * 7.7).  rtit_sim_add_task declares a 32-bit TSS descriptor at GDT
 * selector @sel for the TSS at linear @tss (104 bytes of mapped memory,
 * Figure 7-2), whose code runs with operand size @mode (32, or 16: CS.D =
 * 0, which the simulator records but does not execute: the run must end
 * at such a task's first instruction).  rtit_sim_set_tr names the current
 * task (TR), rtit_sim_set_task_gate makes @vector's IDT entry a task gate.
 * A far JMP or CALL to a task's selector, or an interrupt through a task
 * gate, switches tasks (SDM 7.3): the state goes to the current TSS, CR3,
 * EIP, EFLAGS, the general registers and CS/SS come from the new one (CALL
 * and interrupts: back link and EFLAGS.NT).  At most RTIT_SIM_MAX_TASKS.
 * Returns 0 or -RTIT_ERR_INVALID (bad selector, mode, or not mode 32).
 */
#define RTIT_SIM_MAX_TASKS 8
int rtit_sim_add_task(struct rtit_sim *sim, uint16_t sel, uint64_t tss, int mode);
int rtit_sim_set_tr(struct rtit_sim *sim, uint16_t sel);
int rtit_sim_set_task_gate(struct rtit_sim *sim, unsigned vector, uint16_t sel);

/* Sets a guest register by Unicorn id (UC_X86_REG_*), e.g. RSP, before
 * the run.  Returns 0 or -RTIT_ERR_INVALID. */
int rtit_sim_set_reg(struct rtit_sim *sim, int uc_reg, uint64_t value);

/* Reads a guest register by Unicorn id (after a run, in tests).  Returns 0
 * or -RTIT_ERR_INVALID (*value = 0). */
int rtit_sim_get_reg(struct rtit_sim *sim, int uc_reg, uint64_t *value);

/* RFLAGS.IF (SDM Vol. 1 3.4.3.3), as in rtit_sim_rflags(). */
#define RTIT_SIM_RFLAGS_IF (1u << 9)

/* RFLAGS now (before a run: as the scenario set it). */
uint64_t rtit_sim_rflags(struct rtit_sim *sim);

/* Moves the entry point (after a load). */
int rtit_sim_set_entry(struct rtit_sim *sim, uint64_t ip);

/* Sets (or moves) the end address: the run stops before executing it. */
int rtit_sim_set_end(struct rtit_sim *sim, uint64_t ip);

/* Declares an enclave (before the run; cfg.sgx on).  Returns 0 or
 * -RTIT_ERR_INVALID (SGX off, a bad field, an overlap: the reason in
 * rtit_sim_errmsg()), -RTIT_ERR_NOSPACE beyond RTIT_SIM_SGX_MAX_ENCLAVES. */
int rtit_sim_add_enclave(struct rtit_sim *sim, const struct rtit_sim_enclave *e);

/* Adds an injected event.  -RTIT_ERR_NOSPACE beyond RTIT_SIM_MAX_INJECT. */
int rtit_sim_inject(struct rtit_sim *sim, const struct rtit_sim_inject *ev);

/* Writes an MSR as a debugger would before the run (no record). */
int rtit_sim_msr_preset(struct rtit_sim *sim, uint32_t msr, uint64_t value);

/*
 * Runs from the entry until a stop (see enum rtit_sim_stop) and fills st.
 * Returns 0 when the run ended normally (HALTED, END) and -RTIT_ERR_x
 * otherwise (BUDGET, FAULT: -RTIT_ERR_INVALID; ERROR: -RTIT_ERR_INTERNAL).
 */
int rtit_sim_run(struct rtit_sim *sim, struct rtit_sim_status *st);

/* Ends the run from inside a consumer callback (an encoder error): the
 * run stops before the next instruction executes, with stop ERROR and
 * "aborted by the consumer: msg". */
void rtit_sim_abort(struct rtit_sim *sim, const char *msg);

/*
 * The PEBS record the PMU model wrote last (SDM Vol. 3 20.9.2 adaptive
 * PEBS; what Intel PT carries of it, Table 33-47), or NULL before the
 * first.  Owned by the simulator, overwritten by the next one: valid
 * while the RTIT_EV_PEBS record that announced it is being delivered.
 */
const struct rtit_sim_pebs *rtit_sim_pebs_record(const struct rtit_sim *sim);

/* The last error message (load errors), one line. */
const char *rtit_sim_errmsg(const struct rtit_sim *sim);

/* The Unicorn engine inside (for benchmarks and tests). */
void *rtit_sim_uc(struct rtit_sim *sim);

/* Names of classes and events (static strings). */
const char *rtit_insn_class_name(int cls);
const char *rtit_sim_event_name(int ev);

/* ---- Ground-truth flow: binary file, text, XXH3 digest ---- */

#define RTIT_FLOW_MAGIC "RTITFLOW"
#define RTIT_FLOW_VERSION 1

/* A flow writer: a consumer that hashes every record (XXH3-64 over the
 * canonical 64-byte little-endian form) and optionally writes the binary
 * form (bin) and/or one text line per record (txt). */
struct rtit_flow_writer {
	FILE *bin;
	FILE *txt;
	uint64_t count;
	void *xxh;		/* XXH3_state_t */
	int err;
};

/* Starts a writer; bin/txt may be NULL.  Writes the binary header. */
int rtit_flow_writer_init(struct rtit_flow_writer *w, FILE *bin, FILE *txt);

/* Consumer callback for struct rtit_sim_consumer.on_batch. */
void rtit_flow_writer_on_batch(const struct rtit_sim_rec *recs, size_t n,
			       void *opaque);

/* Finishes: writes the binary trailer (count, canonical digest), returns
 * the digest in *digest.  Returns 0 or -RTIT_ERR_IO. */
int rtit_flow_writer_fini(struct rtit_flow_writer *w, uint64_t *digest);

/* Serialises one record into its canonical 64 bytes. */
void rtit_sim_rec_pack(const struct rtit_sim_rec *r, uint8_t out[64]);

/* Formats one record as one text line (no newline); returns its length. */
int rtit_sim_rec_format(const struct rtit_sim_rec *r, char *buf, size_t size);

/* Reads a binary flow file into a malloc'd array; -RTIT_ERR_IO or
 * -RTIT_ERR_INVALID (bad magic, size, digest). */
int rtit_flow_read(FILE *f, struct rtit_sim_rec **recs, size_t *n);

#endif /* RTIT_SIM_H */
