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

#include "rtit/asm.h"

#include "rtit/error.h"
#include "rtit/record.h"

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

/* MAX_RTM_NEST_COUNT (implementation-specific, XBEGIN pseudocode): an
 * XBEGIN at this depth aborts.  rtitsim's value, docs/decisions.md. */
#define RTIT_SIM_RTM_MAX_NEST 7
/* The write set an RTM transaction may hold: 64-byte lines (the L1D of a
 * Skylake client, 32 KiB); one more aborts with CAPACITY. */
#define RTIT_SIM_RTM_LINES 512

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

/* Why rtit_sim_run stopped. */
enum rtit_sim_stop {
	RTIT_SIM_STOP_NONE = 0,
	RTIT_SIM_STOP_HALTED,		/* HLT with IF=0 or no wake event */
	RTIT_SIM_STOP_END,		/* reached end_ip */
	RTIT_SIM_STOP_BUDGET,		/* instruction budget exhausted */
	RTIT_SIM_STOP_FAULT,		/* fault with no handler, or double */
	RTIT_SIM_STOP_ERROR,		/* emulator or model error */
	RTIT_SIM_STOP_EXIT		/* a Linux process called exit/exit_group */
};

struct rtit_sim_status {
	int stop;			/* enum rtit_sim_stop */
	uint64_t ip;			/* where it stopped */
	uint64_t insns;			/* instructions retired */
	uint64_t events;		/* event records */
	char msg[256];			/* one line */
};

struct rtit_sim;	/* opaque; see sim/sim_internal.h */

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
/* The same with sections placed at their own addresses (rtit/asm.h). */
int rtit_sim_load_asm_sections(struct rtit_sim *sim, const char *src, uint64_t addr,
			       const struct rtit_asm_section *secs, size_t nsecs,
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

/* Puts the CPU in VMX root operation with a VMCS whose guest-state area
 * holds RIP @guest_rip and CR3 @guest_cr3 (docs/sim.md "VMX", D147): a
 * VMLAUNCH or VMRESUME at CPL 0 then enters that guest (a far transfer,
 * recorded as an instruction of class OTHER with flag TAKEN and next_ip
 * the guest RIP), once; the guest runs at the host's CPL and mode.
 * Without it both are #UD (not in VMX operation).  Returns 0. */
int rtit_sim_set_vmentry(struct rtit_sim *sim, uint64_t guest_rip, uint64_t guest_cr3);

/* Adds an injected event.  -RTIT_ERR_NOSPACE beyond RTIT_SIM_MAX_INJECT. */
int rtit_sim_inject(struct rtit_sim *sim, const struct rtit_sim_inject *ev);

/* Writes an MSR as a debugger would before the run (no record). */
int rtit_sim_msr_preset(struct rtit_sim *sim, uint32_t msr, uint64_t value);

/* Reports the clock's core:bus ratio to the consumer (a preset write of
 * RTIT_SIM_MSR_PERF_STATUS, rtit/record.h; D79).  Before the trace MSR
 * presets (rtit_scenario_setup does it).  A consumer that refuses it keeps
 * its own ratio.  Returns 0 or -RTIT_ERR_INVALID. */
int rtit_sim_report_clock(struct rtit_sim *sim);

/*
 * Runs from the entry until a stop (see enum rtit_sim_stop) and fills st.
 * Returns 0 when the run ended normally (HALTED, END) and -RTIT_ERR_x
 * otherwise (BUDGET, FAULT: -RTIT_ERR_INVALID; ERROR: -RTIT_ERR_INTERNAL).
 *
 * Every failure the simulator sees comes back this way: the call installs
 * no signal handler and never exits the process.  One failure it cannot
 * see: Unicorn 2.0.1 calls abort() while translating a few invalid
 * encodings (FF /3, FF /5 with a register operand; docs/sim.md "Limits"),
 * before any hook runs.  A caller that wants a message rather than the
 * SIGABRT installs its own handler around this call and builds the
 * message with rtit_sim_unicorn_abort_msg (as `rtitsim run` does).
 */
int rtit_sim_run(struct rtit_sim *sim, struct rtit_sim_status *st);

/* From a SIGABRT handler during rtit_sim_run: names in @line (NUL-ended,
 * at most @size bytes) the instruction Unicorn aborted on, from the
 * guest's RIP and memory.  Returns snprintf's length, or -RTIT_ERR_INVALID. */
int rtit_sim_unicorn_abort_msg(struct rtit_sim *sim, char *line, size_t size);

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

/*
 * A Linux process (sim/linux.c, sim/syscall.c; docs/linux.md): an ordinary
 * x86-64 ELF executable (static, static-pie or dynamic) started as the
 * Linux kernel starts it with address-space randomisation off, at CPL 3,
 * its SYSCALLs served by a system-call layer in the simulator.  The
 * simulator must have been made with cfg.mode 64 and cfg.cpl 3 and
 * rtit_sim_process_config() applied (stack, kernel entry).
 */
struct rtit_sim_process {
	const char *path;		/* the executable */
	const char *const *argv;	/* argc strings; argv[0] as the program sees it */
	int argc;
	const char *const *envp;	/* envc "NAME=VALUE" strings */
	int envc;
	uint64_t seed;			/* AT_RANDOM and getrandom's bytes */
	const char *writable;		/* the only directory the guest may write under, or NULL */
	const char *stdin_path;		/* the guest's standard input; NULL: empty */
	FILE *out, *err;		/* where the guest's fd 1 and 2 go */
	uint32_t syscall_cycles;	/* core cycles charged per system call (0: the default) */
};

/* The default kernel time per system call (D90). */
#define RTIT_SIM_SYSCALL_CYCLES 1000u
/* Where the process's stack ends and how much of it is mapped. */
#define RTIT_SIM_PROCESS_STACK_TOP 0x7ffffffff000ull
#define RTIT_SIM_PROCESS_STACK_SIZE 0x800000ull

/* Sets what a process run needs in a configuration: 64-bit, CPL 3, the
 * stack of a Linux process. */
void rtit_sim_process_config(struct rtit_sim_config *cfg);

/* Loads the process (the program, its interpreter, the initial stack).
 * Returns 0 or -RTIT_ERR_x with one line in rtit_sim_errmsg(). */
int rtit_sim_load_process(struct rtit_sim *sim, const struct rtit_sim_process *p);

/* A file mapping of the process: what a decoder needs to find its code. */
#define RTIT_SIM_PROT_READ 1u
#define RTIT_SIM_PROT_WRITE 2u
#define RTIT_SIM_PROT_EXEC 4u
struct rtit_sim_mapping {
	uint64_t addr, size;		/* page-aligned */
	uint64_t offset;		/* in the file */
	uint32_t prot;			/* RTIT_SIM_PROT_* */
	uint64_t at;			/* instructions retired when it was made */
	char path[512];			/* absolute */
	char build_id[41];		/* hex, "" when the ELF has none */
};

/* The file mappings made so far, in order (*n of them). */
const struct rtit_sim_mapping *rtit_sim_mappings(const struct rtit_sim *sim, size_t *n);

/* What a process run did (after rtit_sim_run). */
struct rtit_sim_process_info {
	bool exited;			/* it called exit or exit_group */
	int exit_status;
	uint64_t syscalls;		/* system calls made */
	uint64_t syscall_cycles;	/* the kernel time charged */
	uint64_t syscall_ns;		/* host time spent serving them (not
					 * deterministic: for benchmarks) */
	/* the calls answered -ENOSYS, "name x count" joined by ", " */
	char unsupported[512];
	char last[48];			/* the last system call, "" none */
};
int rtit_sim_process_info(const struct rtit_sim *sim, struct rtit_sim_process_info *info);

/* The last error message (load errors), one line. */
const char *rtit_sim_errmsg(const struct rtit_sim *sim);

/* The Unicorn engine inside (for benchmarks and tests). */
void *rtit_sim_uc(struct rtit_sim *sim);

#endif /* RTIT_SIM_H */
