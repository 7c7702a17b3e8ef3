/*
 * sim_internal.h - the simulator's state, shared by the files of sim/.
 */
#ifndef RTIT_SIM_INTERNAL_H
#define RTIT_SIM_INTERNAL_H

#include <unicorn/unicorn.h>
#include <Zydis/Zydis.h>

#include "rtit/sim.h"
#include "rtit/pebs.h"
#include "../isa/isa.h"

/* Selectors the model loads (flat segments, docs/sim.md). */
#define KCS 0x08
#define KSS 0x10
#define UCS64 0x33
#define USS64 0x2b
#define UCS32 0x1b
#define USS32 0x23

#define EFL_TF (1u << 8)
#define EFL_IF RTIT_SIM_RFLAGS_IF
#define EFL_OF (1u << 11)
#define EFL_IOPL (3u << 12)
#define EFL_RF (1u << 16)
#define EFL_FIXED1 (1u << 1)		/* reads as 1 */
/* What POPF may load (SDM Vol. 2B POPF, protected mode): CF PF AF ZF SF
 * TF IF DF OF IOPL NT AC ID; not RF (cleared), VM, VIF, VIP (kept). */
#define EFL_POPF_MASK 0x247fd5u

#define EFL_NT (1u << 14)
#define CR0_TS (1ull << 3)
#define CR0_PE 1ull
#define CR0_PG (1ull << 31)

/* Guest registers by number (the SSA's GPR order, Vol. 3D 38.9.1), read
 * and written at the width of the current mode (sim_reg_get/set). */
enum { R_AX, R_CX, R_DX, R_BX, R_SP, R_BP, R_SI, R_DI, R_8, R_9, R_10,
       R_11, R_12, R_13, R_14, R_15, R_IP, R_FLAGS, R_NUM };

/* One analysed translation block, cached by (addr, size). */
struct sim_block {
	uint64_t addr;
	uint32_t size;
	uint32_t first;		/* index into the insn pool */
	uint32_t n;
	uint32_t nspecial;
	/* the records of the block prebuilt for this template generation
	 * (sim_cache.gen; 0 = never; run.c block_recs, D151) */
	uint64_t rec_gen;
	/* the last two successors seen (block index + 1), to skip the hash */
	uint64_t succ_addr[2];
	uint32_t succ_size[2];
	uint32_t succ[2];
	/* the last instruction, for retiring the block without reading the
	 * pool (run.c on_block, D176): its IP, its fall-through, SIM_TAIL_* */
	uint64_t last_ip, fall;
	uint32_t tail;
};

/* struct sim_block.tail: what retiring the block must look at */
enum {
	SIM_TAIL_REP = 1u << 0,		/* a REP string op (may not retire) */
	SIM_TAIL_COND = 1u << 1,	/* COND: the taken bit to decide */
	SIM_TAIL_COND_FALL = 1u << 2,	/* COND whose target is the fall-through */
	SIM_TAIL_SHADOW = 1u << 3	/* opens an interrupt shadow */
};

/* The block cache: open addressing on addr, grown at half load. */
struct sim_cache {
	uint32_t *slots;	/* block index + 1, 0 = empty */
	uint32_t cap;		/* power of two */
	struct sim_block *blocks;
	uint32_t nblocks, blocks_cap;
	struct isa_insn *insns;
	uint32_t ninsns, insns_cap;
	/* one prebuilt record per pooled instruction, same index (D151):
	 * cycles and tsc hold the cycles from the block's start */
	struct rtit_sim_rec *recs;
	/* the record template's generation, bumped when it changes */
	uint64_t gen;
};

/* Platform model state (the parts Unicorn does not model). */
struct sim_model {
	int cpl;
	int mode;		/* 16, 32 or 64 */
	uint16_t cs, ss;
	uint64_t cs_base;	/* 16-bit mode after INIT/SIPI (init.c): RIP
				 * in Unicorn is LIP - cs_base; 0 otherwise */
	uint64_t cr0, cr2, cr3, cr4, cr8;
	uint64_t dr[8];
	uint64_t star, lstar, cstar, fmask;
	uint64_t sysenter_cs, sysenter_esp, sysenter_eip;
	uint64_t rsp0;
	bool monitor_armed;	/* MONITOR done, no MWAIT since */
	uint64_t idt[256];
	uint8_t idt_present[256];
	uint16_t idt_task[256];	/* task gate: the TSS selector, 0 = none */
	struct sim_task {
		uint16_t sel;
		uint8_t mode;	/* 32 or 16 */
		bool busy;
		uint64_t tss;
	} tasks[RTIT_SIM_MAX_TASKS];
	int ntasks;
	int tr;			/* index into tasks, -1 = none */
	/* trace MSRs when no consumer answers them */
	uint32_t tmsr[64];
	uint64_t tmsr_val[64];
	int ntmsr;
};

/* RTM (Intel TSX) state, docs/sim.md "RTM".  The write set is logged
 * by a UC_HOOK_MEM_WRITE hook that exists only while a transaction is
 * active: the first write to each 64-byte line saves the line. */
struct sim_rtm_line {
	uint64_t addr;		/* 64-byte aligned */
	uint8_t old[64];
};

struct sim_rtm {
	int depth;		/* RTM_NEST_COUNT */
	uint64_t fallback;	/* of the outermost XBEGIN */
	uc_context *regs;	/* registers at the outermost XBEGIN */
	uc_hook h_write;
	bool hooked;
	struct sim_rtm_line *lines;
	uint32_t nlines, lines_cap;
	uint32_t *slots;	/* line index + 1, open addressing */
	uint32_t nslots;	/* power of two */
	uint32_t capacity;	/* lines the write set may hold */
	bool overflow;		/* a write beyond capacity: abort due */
	uint64_t overflow_ip;	/* the instruction that made it */
};

/* The performance-monitoring model (pmu.c, docs/sim.md "PEBS"): PMC0
 * counting retired instructions, PEBS with output to Intel PT.  The
 * counter is kept lazily: ctr was its value when sim->retired was base;
 * while it counts, it is ctr + (retired - base).  sim->pmu_due is the
 * retired count at which it overflows with PEBS armed (UINT64_MAX when
 * not), a count stop like an injected event's. */
/* Architectural LBRs (pmu.c, D63): a ring of RTIT_LBR_MAX_DEPTH entries;
 * LBR_0 (the youngest) is at head, LBR_x at (head + x) % max. */
struct sim_lbr {
	uint64_t ctl, depth;
	uint64_t from[RTIT_LBR_MAX_DEPTH], to[RTIT_LBR_MAX_DEPTH], info[RTIT_LBR_MAX_DEPTH];
	unsigned head;
	uint64_t last_cycles;	/* the cycle count at the last entry (CYC_CNT) */
	bool in_tx;		/* inside an RTM transaction (INFO.IN_TSX) */
};

struct sim_pmu {
	uint64_t evtsel, global_ctrl, global_status, pebs_enable, data_cfg, reload;
	uint64_t ctr, base;
	bool counting;		/* counts at the current CPL */
	bool have_rec;
	struct rtit_sim_pebs rec;
	struct sim_lbr lbr;
};

/* SGX (SDM Vol. 3D chapters 37-40; docs/sim.md "SGX"): the enclaves
 * declared before the run, with what their TCS and SSA frames hold.  The
 * SSA lives in the model, not in guest memory: GPRs, RIP, RFLAGS. */
struct sim_sgx_ssa {
	uint64_t gpr[16];	/* RAX, RCX, RDX, RBX, RSP, RBP, RSI, RDI, R8-R15 */
	uint64_t rip, rflags;
};

struct sim_enclave {
	struct rtit_sim_enclave d;
	uint32_t cssa;		/* TCS.CSSA */
	uint64_t aep;		/* CR_TCS_PA.AEP: RCX of the last EENTER/ERESUME */
	uint64_t ursp, urbp;	/* SSA.uRSP, SSA.uRBP: the outside stack */
	struct sim_sgx_ssa ssa[RTIT_SIM_SGX_MAX_SSA];
};

struct sim_sgx {
	struct sim_enclave encl[RTIT_SIM_SGX_MAX_ENCLAVES];
	int n;
	int cur;		/* the enclave executing (CR_ENCLAVE_MODE), -1 none */
};

/* What ENCLU did (sim_sgx_enclu): a fault to raise, or where it goes. */
struct sim_sgx_out {
	int vec;		/* 0, or 6 (#UD) / 13 (#GP(0)) with why */
	const char *why;
	uint32_t leaf;
	uint64_t next;		/* the next IP */
	bool debug;		/* the enclave is a debug one */
};

/* Why a uc_emu_start call was stopped from a hook. */
enum sim_req {
	SIM_REQ_NONE = 0,
	SIM_REQ_RESTART,	/* retranslate: resume at resume_ip */
	SIM_REQ_FAULT,		/* deliver fault_vec at fault_ip */
	SIM_REQ_EVENT,		/* deliver the next injected event */
	SIM_REQ_STOP,		/* run ends: status already filled */
	SIM_REQ_TX_ABORT	/* the RTM write set overflowed: abort */
};

struct sim_symbol {
	char *name;
	uint64_t value;
};

struct rtit_sim {
	uint64_t delivered_to;	/* where sim_deliver sent the flow (handler or task) */
	struct rtit_sim_config cfg;
	uc_engine *uc;
	uc_context *ctx;	/* scratch, to reset Unicorn's old_exception */
	ZydisDecoder dec;
	struct sim_cache cache;
	struct sim_model m;

	/* hooks */
	uc_hook h_block, h_intr, h_unmapped, h_prot, h_sync;
	uint64_t *hooked;	/* sorted addresses with a code hook */
	size_t nhooked, hooked_cap;

	/* the block being executed */
	uint32_t pending;	/* block index + 1, 0 = none */
	uint64_t pending_base;	/* retired count at its start */
	bool live_regs;
	uint64_t fault_loop_at;	/* retired count at the last exception */
	int fault_loop_n;	/* exceptions since then */
	uint64_t rand_state;	/* RDRAND/RDSEED sequence (xorshift64) */		/* registers are those right after pending */

	/* counters and clock */
	uint64_t retired;
	uint64_t events;
	uint64_t cycles;
	uint64_t tsc;
	uint64_t tsc_frac;
	uint32_t core_ratio;

	/* record template: state after the last change */
	struct rtit_sim_rec tmpl;

	/* batch */
	struct rtit_sim_rec *batch;
	size_t nbatch;

	/* stop request from a hook */
	int req;
	uint64_t resume_ip;
	int fault_vec;
	uint64_t fault_ip;
	uint64_t fault_addr;
	uint32_t fault_err;
	bool fault_addr_valid;
	char fault_why[96];

	/* injected events, sorted by trigger order of insertion */
	struct rtit_sim_inject inj[RTIT_SIM_MAX_INJECT];
	bool inj_done[RTIT_SIM_MAX_INJECT];
	int ninj;
	int inj_due;		/* index of the event to deliver */
	int irq_deferred;	/* index of an interrupt waiting for IF=1 */
	uint64_t irq_after;	/* not before this count (STI shadow) */
	bool last_shadow;	/* the last retired insn opened a shadow */

	uint64_t entry;
	bool loaded;
	struct sim_symbol *syms;
	size_t nsyms;

	struct rtit_sim_status st;
	char errmsg[256];

	struct sim_rtm rtm;

	uint64_t pmu_due;	/* see struct sim_pmu */
	uint64_t last_ip;	/* the last instruction retired */
	struct sim_pmu pmu;
	uc_context *init_ctx;	/* init.c: to load real-mode segments */

	struct sim_uintr {	/* uintr.c: user interrupts */
		bool uif;
		uint64_t rr, handler, stackadjust, misc, pd, tt;
	} uintr;
	struct sim_sgx sgx;
	struct sim_vmx {	/* vmx.c: the VM entry of VMLAUNCH/VMRESUME (D147) */
		bool on;	/* a guest was given (rtit_sim_set_vmentry) */
		bool nonroot;	/* in VMX non-root operation (entered) */
		uint64_t guest_rip, guest_cr3;
	} vmx;
	struct sim_linux *lx;	/* a Linux process run (linux.c), else NULL */
};

/* analyse.c */
int sim_cache_init(struct sim_cache *c);
void sim_cache_fini(struct sim_cache *c);
/* Finds or analyses the block at (addr, size); NULL on out of memory. */
const struct sim_block *sim_block_get(struct rtit_sim *sim, uint64_t addr,
				      uint32_t size, bool *fresh);
/* Forgets every analysed block (the decoding mode changed: INIT, SIPI). */
void sim_cache_clear(struct sim_cache *c);

/* init.c: INIT and SIPI (docs/sim.md "INIT and SIPI") */
/* Puts the processor in its INIT state (SDM Vol. 3 Table 10-1) with CS
 * = @cs_sel, base @cs_base, IP @ip: real mode.  0 or -RTIT_ERR_x with
 * the reason in sim->errmsg. */
int sim_init_state(struct rtit_sim *sim, uint16_t cs_sel, uint64_t cs_base, uint16_t ip);
/* Loads CS in real mode (a far JMP there): selector and base sel << 4. */
int sim_real_load_cs(struct rtit_sim *sim, uint16_t cs_sel);

/* uintr.c: user interrupts (docs/sim.md "User interrupts") */
/* An access to an IA32_UINTR_* MSR: 1 done, 0 not one of them, -1 #GP. */
int sim_uintr_msr(struct rtit_sim *sim, bool write, uint32_t msr, uint64_t *v);
/* Whether a user interrupt is recognised now: UIRR != 0, UIF = 1, CPL 3,
 * 64-bit mode. */
bool sim_uintr_due(const struct rtit_sim *sim);
/* User-interrupt delivery with the flow at @nlip: UIRR's highest vector
 * cleared into *vec, UIF = 0, the frame pushed, RIP = UIHANDLER (in
 * *handler).  0, or the failing stack address in *bad and -1. */
int sim_uintr_deliver(struct rtit_sim *sim, uint64_t nlip, uint64_t *handler,
		      uint8_t *vec, uint64_t *bad);
/* UIRET's pops and loads: 0 with *next; -1 a stack read failed at *next;
 * -2 the popped RIP (*next) is not canonical (#GP(0)). */
int sim_uintr_uiret(struct rtit_sim *sim, uint64_t *next);

/* rtm.c: the write set of an RTM transaction */
/* Starts logging writes (the outermost XBEGIN); 0 or -RTIT_ERR_x. */
int sim_rtm_log_start(struct rtit_sim *sim);
/* Writes the saved lines back and stops logging (an abort). */
void sim_rtm_log_rollback(struct rtit_sim *sim);
/* Forgets the saved lines and stops logging (a commit). */
void sim_rtm_log_stop(struct rtit_sim *sim);
/* Frees what the log holds. */
void sim_rtm_fini(struct rtit_sim *sim);

/* pmu.c: the performance-monitoring model */
/* An access to a PMU MSR: 1 done, 0 not a PMU MSR (or the model is off),
 * -1 #GP.  @guest: a WRMSR/RDMSR (a write takes effect after it, so the
 * WRMSR itself is not counted). */
int sim_pmu_msr(struct rtit_sim *sim, bool write, uint32_t msr, uint64_t *v, bool guest);
/* CPL may have changed (after sim_tmpl_on_state): counting re-evaluated. */
void sim_pmu_on_state(struct rtit_sim *sim);
/* The PEBS assist at sim->pmu_due, with the flow about to execute at ip:
 * fills sim->pmu.rec with the state now (after the overflowing
 * instruction, which was sim->last_ip), reloads the counter, re-arms. */
void sim_pmu_assist(struct rtit_sim *sim, uint64_t ip);
/* The LBRs (D63) see records @r[0..n) as they go to the consumer: each
 * taken branch, interrupt, exception and TSX abort the filters of
 * IA32_LBR_CTL pass becomes LBR_0.  Called only while LBREn is set. */
void sim_lbr_scan(struct rtit_sim *sim, const struct rtit_sim_rec *r, size_t n);
/* sgx.c: the SGX platform model */
/* ENCLU at @ip (next instruction @nlip): checks, then the leaf's register
 * and enclave-mode effects; the caller writes the record or raises
 * o->vec.  Returns 0, or -1 with o->vec and o->why set. */
int sim_sgx_enclu(struct rtit_sim *sim, uint64_t ip, uint64_t nlip, struct sim_sgx_out *o);
/* AEX (Vol. 3D 40.4) of the enclave executing, interrupted at @ip: the
 * state saved in the current SSA frame, the synthetic state loaded
 * (Table 40-1), enclave mode left.  Returns the AEP (RIP now). */
uint64_t sim_sgx_aex(struct rtit_sim *sim, uint64_t ip);
/* Whether the enclave executing is a debug one. */
bool sim_sgx_debug(const struct rtit_sim *sim);

/* sim.c: a guest register (R_*) at the current mode's width */
uint64_t sim_reg_get(struct rtit_sim *sim, int r);
void sim_reg_set(struct rtit_sim *sim, int r, uint64_t v);
/* sim.c: sets sim->errmsg; returns @err. */
int sim_seterr(struct rtit_sim *sim, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* sim.c: hands the batch to the consumer (the LBRs see it first). */
void sim_flush(struct rtit_sim *sim);
/* sim.c: refreshes the record template after a model state change. */
void sim_tmpl_on_state(struct rtit_sim *sim);
/* sim.c: a guest stack push or pop of @w bytes at *sp; false when unmapped. */
bool sim_push(struct rtit_sim *sim, uint64_t *sp, uint64_t v, int w);
bool sim_pop(struct rtit_sim *sim, uint64_t *sp, uint64_t *v, int w);

/* The record batch (sim.c): a new record from the template; its end. */
static inline struct rtit_sim_rec *sim_rec_new(struct rtit_sim *sim)
{
	if (sim->nbatch == sim->cfg.batch_cap)
		sim_flush(sim);
	struct rtit_sim_rec *r = &sim->batch[sim->nbatch++];
	*r = sim->tmpl;
	return r;
}

static inline void sim_rec_done(struct rtit_sim *sim)
{
	if (sim->cfg.deliver == RTIT_SIM_PER_INSN)
		sim_flush(sim);
}

/* Advances the clock by n core cycles; the TSC runs tsc_ratio/core_ratio
 * ticks per core cycle. */
static inline void sim_clock_on_cycles(struct rtit_sim *sim, uint64_t n)
{
	sim->cycles += n;
	if (sim->cfg.clock.tsc_ratio == sim->core_ratio) {
		sim->tsc += n;
		return;
	}
	sim->tsc_frac += n * sim->cfg.clock.tsc_ratio;
	if (sim->tsc_frac >= sim->core_ratio) {
		sim->tsc += sim->tsc_frac / sim->core_ratio;
		sim->tsc_frac %= sim->core_ratio;
	}
}


/* run.c: the run loop and Unicorn's hooks */
/* Ends the run: status @why at @ip with the message, Unicorn stopped. */
void sim_stop_with(struct rtit_sim *sim, int why, uint64_t ip,
		   const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Stops Unicorn with request @req (enum sim_req), resuming at @ip. */
void sim_request(struct rtit_sim *sim, int req, uint64_t ip);
/* Installs the block, interrupt, unmapped-access and sync hooks. */
uc_err sim_hooks_add(struct rtit_sim *sim);

/* unicorn.c: Unicorn's internals */
/* Finds QEMU's old_exception once; allocates the context to reset it. */
void sim_unicorn_init(struct rtit_sim *sim);
/* Makes Unicorn forget the exception it raised last. */
void sim_forget_exception(struct rtit_sim *sim);
/* Loads real-mode CS (@cs_sel, base @cs_base) and with @data the data
 * segments = 0, 16-bit hflags; 0 or -RTIT_ERR_x with sim->errmsg. */
int sim_unicorn_load_real(struct rtit_sim *sim, uint16_t cs_sel, uint64_t cs_base, bool data);

/* event.c: interrupts, exceptions, injected events */
/* Delivers vector @vec through the interrupt table or a task gate with
 * the return address @ret_ip; 0, or -1 with the run stopped. */
int sim_deliver(struct rtit_sim *sim, int vec, uint64_t ret_ip,
		bool has_err, uint32_t err, const char *what);
/* Records and delivers an exception (@fault: ip did not retire). */
int sim_exception_at(struct rtit_sim *sim, int vec, uint64_t ip,
		     uint32_t err, uint64_t cr2, const char *what, bool fault);
/* sim_exception_at for a fault. */
int sim_exception(struct rtit_sim *sim, int vec, uint64_t ip, uint32_t err,
		  uint64_t cr2, const char *what);
/* A new event record of @kind (ip, next) with the clock; counted. */
struct rtit_sim_rec *sim_event_rec(struct rtit_sim *sim, int kind,
				   uint64_t ip, uint64_t next);
/* The injected event due at instruction count @count, or at @ip; -1 none. */
int sim_inj_due_count(const struct rtit_sim *sim, uint64_t count);
int sim_inj_due_ip(const struct rtit_sim *sim, uint64_t ip);
/* Delivers every event due at ip; returns the resume IP. */
uint64_t sim_inject_due(struct rtit_sim *sim, uint64_t ip);

/* task.c: hardware task switching (mode 32) */
/* The index of the task with selector @sel, or -1. */
int sim_task_of(const struct sim_model *m, uint16_t sel);
/* Switches to task @to (SDM 7.3); the new EIP or UINT64_MAX (stopped). */
uint64_t sim_task_switch(struct rtit_sim *sim, int to, uint64_t ret, bool nest, bool jmp);
/* Whether task @to may be switched to; else #GP or the run stopped. */
bool sim_task_ok(struct rtit_sim *sim, int to, uint64_t ip, bool insn);

/* emulate.c: the special instructions */
/* A special instruction being emulated: decoded, classified, its IPs. */
struct sim_insn {
	ZydisDecodedInstruction in;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	struct isa_insn si;
	uint64_t ip, next;
	int len;
};
/* Emulates the special instruction at ip; sets RIP or stops the run. */
void sim_emulate(struct rtit_sim *sim, uint64_t ip);
/* The R_* number of a Zydis GPR, or -1. */
int sim_gpr_of_zydis(ZydisRegister r);
/* The effective address of a memory operand (flat segments). */
uint64_t sim_mem_ea(struct rtit_sim *sim, const ZydisDecodedOperand *op,
		    uint64_t ip, int len);
/* A register or memory operand's value; *ok false when unmapped. */
uint64_t sim_operand_value(struct rtit_sim *sim, const ZydisDecodedOperand *op,
			   uint64_t ip, int len, bool *ok);
/* The record of a special instruction (state after), counted as retired. */
struct rtit_sim_rec *sim_special_rec(struct rtit_sim *sim, uint64_t ip,
				     int len, int cls, uint64_t next, bool taken);
/* #GP(0) on the instruction at @ip. */
void sim_gp_fault(struct rtit_sim *sim, uint64_t ip, const char *why);
/* A stack access failed at @addr: #PF there (#GP(0) if not canonical). */
void sim_stack_fault(struct rtit_sim *sim, uint64_t ip, uint64_t addr,
		     bool write, const char *insn);

/* linux.c: frees the process state (NULL allowed). */
void sim_linux_free(struct rtit_sim *sim);
/* linux.c: appends the last system call to a budget stop's message. */
void sim_linux_budget_note(struct rtit_sim *sim);
/* linux.c: the signal Linux sends for exception vector @vec. */
const char *sim_linux_signal(int vec);

/* far.c: INT, IRET, SYSCALL/SYSRET, SYSENTER/SYSEXIT, far JMP/CALL/RET */
void sim_emu_int(struct rtit_sim *sim, const struct sim_insn *ins);
void sim_emu_iret(struct rtit_sim *sim, const struct sim_insn *ins);
void sim_emu_syscall(struct rtit_sim *sim, const struct sim_insn *ins);
void sim_emu_sysret(struct rtit_sim *sim, const struct sim_insn *ins);
void sim_emu_sysenter(struct rtit_sim *sim, const struct sim_insn *ins);
void sim_emu_sysexit(struct rtit_sim *sim, const struct sim_insn *ins);
void sim_emu_far_jmp_call(struct rtit_sim *sim, const struct sim_insn *ins);
void sim_emu_far_ret(struct rtit_sim *sim, const struct sim_insn *ins);

/* vmx.c: VMLAUNCH, VMRESUME (D147) */
void sim_emu_vmentry(struct rtit_sim *sim, const struct sim_insn *ins);

/* msr.c: MSR and control-register accesses */
/* Routes an MSR access (@ctx: the record that makes it); 0 or -1 (#GP). */
int sim_msr_access(struct rtit_sim *sim, bool write, uint32_t msr,
		   uint64_t *v, const struct rtit_sim_rec *ctx);
/* WRMSR/RDMSR; MOV DR; LMSW, CLTS, LGDT, LIDT, LLDT, LTR, XSETBV; MOV CR. */
void sim_emu_msr(struct rtit_sim *sim, const struct sim_insn *ins);
void sim_emu_mov_dr(struct rtit_sim *sim, const struct sim_insn *ins);
void sim_emu_sysreg(struct rtit_sim *sim, const struct sim_insn *ins);
void sim_emu_mov_cr(struct rtit_sim *sim, const struct sim_insn *ins);

/* rtm.c: RTM instructions and aborts */
/* RTM_ABORT_PROCESSING with @status at @at; returns the fallback. */
uint64_t sim_tx_abort(struct rtit_sim *sim, uint64_t at, uint32_t status);
/* Whether the hooked instruction @si aborts a transaction (*status). */
bool sim_tx_aborts(const struct isa_insn *si, uint32_t *status);
/* XBEGIN, XEND, XABORT, XTEST at @ip (XBEGIN's fallback @target). */
void sim_emulate_rtm(struct rtit_sim *sim, const ZydisDecodedInstruction *in,
		     uint64_t ip, int cls, uint64_t target);

/* uintr.c: UIRET, STUI, CLUI, TESTUI at @ip. */
void sim_emulate_uintr(struct rtit_sim *sim, const ZydisDecodedInstruction *in, uint64_t ip);
/* uintr.c: user-interrupt delivery at @ip; the handler or UINT64_MAX. */
uint64_t sim_uintr_now(struct rtit_sim *sim, uint64_t ip);
/* init.c: injected INIT @i at @ip (and an AP's SIPI); the resume IP. */
uint64_t sim_init_now(struct rtit_sim *sim, int i, uint64_t ip);
/* pmu.c: the PEBS assist and its record with the flow at @ip. */
void sim_pebs_now(struct rtit_sim *sim, uint64_t ip);

#endif /* RTIT_SIM_INTERNAL_H */
