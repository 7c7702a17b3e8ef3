/*
 * scenario.h - one self-contained, line-oriented text file describing a
 * simulation: the code (inline assembly or a path), the dialect and model
 * parameters, the initial trace-MSR values, the injected events, and the
 * packets expected.  The format is documented in docs/scenario.md.
 */
#ifndef RTIT_SCENARIO_H
#define RTIT_SCENARIO_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#include "rtit/error.h"
#include "rtit/packet.h"
#include "rtit/sim.h"

enum rtit_scn_code {
	RTIT_SCN_CODE_NONE = 0,
	RTIT_SCN_CODE_ASM,	/* inline GNU as source */
	RTIT_SCN_CODE_ELF,	/* static ELF executable */
	RTIT_SCN_CODE_FLAT,	/* flat binary with a load address */
	RTIT_SCN_CODE_PROCESS	/* a Linux executable run as a process (docs/linux.md) */
};

/* The most `arg` and `env` lines of a process scenario. */
#define RTIT_SCN_MAX_ARGS 64

/* An address written as a number or as a label of the program (resolved
 * when the program is loaded). */
struct rtit_scn_addr {
	uint64_t value;
	char label[64];		/* "" when numeric */
};

struct rtit_scn_kv {
	char key[64];
	char value[192];
	int line;
};

struct rtit_scn_msr {
	uint32_t msr;
	char name[40];		/* as written */
	uint64_t value;
	int line;
};

struct rtit_scn_event {
	struct rtit_sim_inject ev;	/* at is filled when numeric */
	struct rtit_scn_addr at;	/* AT_IP: address or label */
	int line;
};

struct rtit_scn_handler {
	unsigned vector;
	struct rtit_scn_addr ip;
	uint16_t task;		/* a task gate: the TSS selector (ip unused) */
	int line;
};

/* task SEL tss=ADDR [mode=16|32], tr SEL (rtit_sim_add_task). */
struct rtit_scn_task {
	uint16_t sel;
	uint64_t tss;
	int mode;
	bool tr;		/* the current task */
	int line;
};

struct rtit_scn_mem {
	uint64_t addr, size;
	int line;
};

struct rtit_scn_reg {
	int uc_reg;
	char name[16];
	uint64_t value;
	int line;
};

struct rtit_scn_text {
	char *text;
	int line;
};

/* An SGX enclave (docs/scenario.md "enclave"): base and tcs as numbers or
 * labels, the rest numbers. */
struct rtit_scn_enclave {
	struct rtit_scn_addr base, tcs;
	uint64_t size, oentry;
	uint32_t nssa;
	bool debug;
	int line;
};

struct rtit_scenario {
	char path[256];		/* the file, for messages and relative paths */
	char name[64];
	char describe[256];
	int dialect;		/* enum rtit_dialect */
	char cpu[32];
	int mode;		/* 32 or 64 */

	int code_kind;		/* enum rtit_scn_code */
	char *asm_text;
	int asm_line;		/* line of "code asm": assembler line 1 is +1 */
	char code_path[512];
	uint64_t load;
	/* `code asm` only: sections placed at their own addresses (.NAME=ADDR) */
	struct rtit_asm_section asm_sections[RTIT_ASM_MAX_SECTIONS];
	size_t nasm_sections;
	bool has_entry;
	struct rtit_scn_addr entry;

	int cpl;
	uint64_t cr3;
	uint64_t cr0;		/* with has_cr0: `cr0 VALUE`, else PE|PG */
	bool has_cr0;
	int cr0_line;
	uint64_t rsp0;
	uint64_t budget;	/* 0 = default */
	bool has_end;
	struct rtit_scn_addr end;
	struct rtit_sim_clock clock;

	struct rtit_scn_msr *msrs;
	size_t nmsrs;
	struct rtit_scn_kv *params;
	size_t nparams;
	struct rtit_scn_event *events;
	size_t nevents;
	struct rtit_scn_handler *handlers;
	size_t nhandlers;
	struct rtit_scn_task *tasks;
	size_t ntasks;
	struct rtit_scn_mem *mems;
	size_t nmems;
	struct rtit_scn_reg *regs;
	size_t nregs;
	struct rtit_scn_text *expect;
	size_t nexpect;
	bool has_expect;

	/* RTM (Intel TSX): -1 by the dialect (on for pt, off for rtit:
	 * Silvermont has none), 0 off, 1 on; the write-set capacity in
	 * lines (0: the simulator's default) */
	int rtm;
	int rtm_line;		/* of the 'rtm' line, for messages */
	uint32_t rtm_lines;

	/* SGX enclaves (on for dialect pt only: Silvermont has none) */
	struct rtit_scn_enclave *enclaves;
	size_t nenclaves;

	/* `vmentry guest=ADDR|LABEL [cr3=N]` (dialect pt; D147): the guest
	 * a VMLAUNCH/VMRESUME enters; its CR3 (default: the `cr3` line's) */
	bool has_vmentry, vm_has_cr3;
	struct rtit_scn_addr vm_guest;
	uint64_t vm_cr3;
	int vm_line;

	/* code process: its arguments after argv[0] (`arg` lines), the
	 * environment (`env` lines; none: the default set of docs/linux.md),
	 * `seed`, `writable`, `stdin`, `syscall-cycles` */
	char *args[RTIT_SCN_MAX_ARGS];
	size_t nargs;
	char *envs[RTIT_SCN_MAX_ARGS];
	size_t nenvs;
	uint64_t seed;
	char writable[512];
	char stdin_path[512];
	uint32_t syscall_cycles;
};

/* A parse or setup error: "file:line: message" in text. */
struct rtit_scn_error {
	int line;		/* 0 when not about one line */
	char text[512];
};

/*
 * Parses a scenario file into sc (which the caller later frees with
 * rtit_scenario_fini).  Returns 0, -RTIT_ERR_IO (unreadable file),
 * -RTIT_ERR_BAD_CONFIG (a bad line; err->text is "file:line: what"),
 * -RTIT_ERR_NOMEM.
 */
int rtit_scenario_parse_file(const char *path, struct rtit_scenario *sc,
			     struct rtit_scn_error *err);

/* Parses scenario text; name is used in messages and as the directory
 * base for relative paths (may be NULL). */
int rtit_scenario_parse_string(const char *text, const char *name,
			       struct rtit_scenario *sc,
			       struct rtit_scn_error *err);

/* Frees what the parser allocated. */
void rtit_scenario_fini(struct rtit_scenario *sc);

/* Fills the simulator configuration from the scenario (mode, CPL, CR3,
 * budget, clock); the consumer is left to the caller. */
void rtit_scenario_config(const struct rtit_scenario *sc,
			  struct rtit_sim_config *cfg);

/*
 * Adds the scenario's code to a program image, as the simulator would
 * load it (`code asm` assembled and linked at its load address, `code elf`,
 * `code flat` at its load address), without a simulator: what the flow
 * decoder reads.  Returns 0 or negative with err->text "file: what".
 */
struct rtit_image;
int rtit_scenario_image(const struct rtit_scenario *sc, struct rtit_image *img,
			struct rtit_scn_error *err);

/* The file of a `code elf` or `code flat` scenario as the simulator opens
 * it (relative to the scenario's directory).  0, or -RTIT_ERR_INVALID
 * (`code asm`: no file). */
int rtit_scenario_code_path(const struct rtit_scenario *sc, char *out, size_t size);

/*
 * Loads the code into sim, maps memory, resolves labels, sets handlers,
 * registers, the end address, the injected events, and presets the MSRs
 * (through the consumer's msr_write with ctx->kind == 0).  Returns 0 or
 * negative with err->text "file:line: what".
 */
int rtit_scenario_setup(const struct rtit_scenario *sc, struct rtit_sim *sim,
			struct rtit_scn_error *err);

/* Looks up a trace or platform MSR by name for a dialect; 0 if found. */
int rtit_scenario_msr_by_name(const char *name, int dialect, uint32_t *msr);

/* The name of @msr in @dialect (as a scenario's msr line spells it), or
 * NULL when the scenario language has none. */
const char *rtit_scenario_msr_name(uint32_t msr, int dialect);

#endif /* RTIT_SCENARIO_H */
