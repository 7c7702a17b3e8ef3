/*
 * isa.h - x86 instruction classification (the isa layer), shared by the
 * simulator (which executes and records) and the flow decoder (which walks
 * the program image): one Zydis-decoded instruction in, its class (enum
 * rtit_insn_class, RTIT 2.2 Table 2 and SDM Table 33-1), direct target and
 * the properties the simulator intercepts or the decoder follows.
 * Internal to the libraries: not installed.
 */
#ifndef RTIT_ISA_H
#define RTIT_ISA_H

#include <stdint.h>
#include <Zydis/Zydis.h>

#include "rtit/record.h"

/* Per-instruction analysis flags. */
enum {
	ISA_I_SPECIAL = 1u << 0,	/* intercepted: emulated by the model */
	ISA_I_ZLC = 1u << 1,		/* zero-length CALL */
	ISA_I_DIRECT = 1u << 2,		/* target is known statically */
	ISA_I_BRANCH = 1u << 3,		/* may change the flow */
	ISA_I_SHADOW = 1u << 4,		/* STI, MOV SS, POP SS: interrupt shadow */
	ISA_I_REP = 1u << 5,		/* REP string op: one TB per iteration */
	ISA_I_RISKY = 1u << 6,		/* memory access Unicorn does not keep
					 * RIP exact for: code hook syncs it */
	ISA_I_PRIV = 1u << 7,		/* #GP at CPL 3 (or CPL > IOPL), else
					 * executed by Unicorn */
	ISA_I_TXABORT = 1u << 8,	/* executed by Unicorn, but aborts an
					 * RTM transaction (CPUID, PAUSE) */
	ISA_I_TXKEEP = 1u << 9,		/* intercepted, but no RTM abort
					 * (XABORT, XTEST, RDTSC(P), RDRAND,
					 * RDSEED, RDPMC) */
	ISA_I_TXDEBUG = 1u << 10	/* an RTM abort with status DEBUG
					 * (INT3, INT1: Table 16-1 bit 4) */
};

/* One analysed instruction (cached). */
struct isa_insn {
	uint64_t ip;
	uint64_t target;	/* direct branch target */
	uint8_t len;
	uint8_t cls;		/* enum rtit_insn_class */
	uint16_t flags;		/* ISA_I_* */
	uint8_t cpi;
	uint8_t cc;		/* COND: ISA_CC_* | address-size bits */
	uint8_t rflags;		/* record flags known statically */
};

/* Conditions of COND instructions, to decide taken when the target is the
 * fall-through: Jcc use their condition nibble (0-15). */
enum {
	ISA_CC_LOOP = 0x10, ISA_CC_LOOPE = 0x11, ISA_CC_LOOPNE = 0x12,
	ISA_CC_JCXZ = 0x13, ISA_CC_MASK = 0x1f,
	ISA_CC_A16 = 0x40, ISA_CC_A32 = 0x80
};

/* Classifies one decoded instruction at @ip into @out. */
void isa_classify(const ZydisDecodedInstruction *in, uint64_t ip,
		  struct isa_insn *out);

#endif /* RTIT_ISA_H */
