/*
 * classify.c - x86 instruction classification (isa.h).
 */
#include <string.h>

#include "isa.h"

/* RTIT 2.2.6 / PT Table 33-1: everything that is not a near branch and
 * changes the IP is a far transfer; those, and the instructions whose effect
 * is on state Unicorn does not model (CR3, CR0, MSRs, HLT, PTWRITE, TSC),
 * are intercepted ("special").
 * Longer than 150 lines on purpose: the switch over the mnemonic is the
 * classification table itself, one short case per mnemonic or group, each
 * with the manual's reason beside it; a table of structs would need code
 * for the cases that look at operands (far, relative, CR number, opcode)
 * all the same.  It runs once per instruction cached, not per one walked. */
void isa_classify(const ZydisDecodedInstruction *in, uint64_t ip,
		  struct isa_insn *out)
{
	memset(out, 0, sizeof(*out));
	out->ip = ip;
	out->len = in->length;
	out->cls = RTIT_IC_OTHER;
	bool far = in->meta.branch_type == ZYDIS_BRANCH_TYPE_FAR;
	bool rel = in->raw.imm[0].size && in->raw.imm[0].is_relative;

	switch (in->mnemonic) {
	case ZYDIS_MNEMONIC_JB: case ZYDIS_MNEMONIC_JBE: case ZYDIS_MNEMONIC_JL:
	case ZYDIS_MNEMONIC_JLE: case ZYDIS_MNEMONIC_JNB: case ZYDIS_MNEMONIC_JNBE:
	case ZYDIS_MNEMONIC_JNL: case ZYDIS_MNEMONIC_JNLE: case ZYDIS_MNEMONIC_JNO:
	case ZYDIS_MNEMONIC_JNP: case ZYDIS_MNEMONIC_JNS: case ZYDIS_MNEMONIC_JNZ:
	case ZYDIS_MNEMONIC_JO: case ZYDIS_MNEMONIC_JP: case ZYDIS_MNEMONIC_JS:
	case ZYDIS_MNEMONIC_JZ: case ZYDIS_MNEMONIC_LOOP: case ZYDIS_MNEMONIC_LOOPE:
	case ZYDIS_MNEMONIC_LOOPNE: case ZYDIS_MNEMONIC_JCXZ:
	case ZYDIS_MNEMONIC_JECXZ: case ZYDIS_MNEMONIC_JRCXZ:
		out->cls = RTIT_IC_COND;
		out->flags = ISA_I_BRANCH | ISA_I_DIRECT;
		out->target = ip + in->length + (uint64_t)in->raw.imm[0].value.s;
		switch (in->mnemonic) {
		case ZYDIS_MNEMONIC_LOOP: out->cc = ISA_CC_LOOP; break;
		case ZYDIS_MNEMONIC_LOOPE: out->cc = ISA_CC_LOOPE; break;
		case ZYDIS_MNEMONIC_LOOPNE: out->cc = ISA_CC_LOOPNE; break;
		case ZYDIS_MNEMONIC_JCXZ: case ZYDIS_MNEMONIC_JECXZ:
		case ZYDIS_MNEMONIC_JRCXZ: out->cc = ISA_CC_JCXZ; break;
		default: out->cc = in->opcode & 0xf; break;
		}
		if (in->address_width == 16)
			out->cc |= ISA_CC_A16;
		else if (in->address_width == 32)
			out->cc |= ISA_CC_A32;
		break;
	case ZYDIS_MNEMONIC_JMP:
		if (far) {
			out->cls = RTIT_IC_FAR_JMP;
			out->flags = ISA_I_BRANCH | ISA_I_SPECIAL;
		} else if (rel) {
			out->cls = RTIT_IC_DIRECT_JMP;
			out->flags = ISA_I_BRANCH | ISA_I_DIRECT;
			out->target = ip + in->length + (uint64_t)in->raw.imm[0].value.s;
		} else {
			out->cls = RTIT_IC_INDIRECT_JMP;
			out->flags = ISA_I_BRANCH;
		}
		break;
	case ZYDIS_MNEMONIC_CALL:
		if (far) {
			out->cls = RTIT_IC_FAR_CALL;
			out->flags = ISA_I_BRANCH | ISA_I_SPECIAL;
		} else if (rel) {
			out->cls = RTIT_IC_DIRECT_CALL;
			out->flags = ISA_I_BRANCH | ISA_I_DIRECT;
			out->target = ip + in->length + (uint64_t)in->raw.imm[0].value.s;
			/* RTIT 2.2.2: CALL to the next instruction */
			if (in->raw.imm[0].value.s == 0)
				out->flags |= ISA_I_ZLC;
		} else {
			out->cls = RTIT_IC_INDIRECT_CALL;
			out->flags = ISA_I_BRANCH;
		}
		break;
	case ZYDIS_MNEMONIC_RET:
		if (far || in->opcode == 0xCB || in->opcode == 0xCA) {
			out->cls = RTIT_IC_FAR_RET;
			out->flags = ISA_I_BRANCH | ISA_I_SPECIAL;
		} else {
			out->cls = RTIT_IC_RET;
			out->flags = ISA_I_BRANCH;
		}
		break;
	case ZYDIS_MNEMONIC_IRET: case ZYDIS_MNEMONIC_IRETD:
	case ZYDIS_MNEMONIC_IRETQ:
		out->cls = RTIT_IC_IRET;
		out->flags = ISA_I_BRANCH | ISA_I_SPECIAL;
		break;
	case ZYDIS_MNEMONIC_INT: case ZYDIS_MNEMONIC_INT1:
	case ZYDIS_MNEMONIC_INT3: case ZYDIS_MNEMONIC_INTO:
		out->cls = RTIT_IC_INT;
		out->flags = ISA_I_BRANCH | ISA_I_SPECIAL;
		if (in->mnemonic == ZYDIS_MNEMONIC_INT3 || in->mnemonic == ZYDIS_MNEMONIC_INT1)
			out->flags |= ISA_I_TXDEBUG;
		break;
	case ZYDIS_MNEMONIC_SYSCALL:
		out->cls = RTIT_IC_SYSCALL;
		out->flags = ISA_I_BRANCH | ISA_I_SPECIAL;
		break;
	case ZYDIS_MNEMONIC_SYSRET:
		out->cls = RTIT_IC_SYSRET;
		out->flags = ISA_I_BRANCH | ISA_I_SPECIAL;
		break;
	case ZYDIS_MNEMONIC_SYSENTER:
		out->cls = RTIT_IC_SYSENTER;
		out->flags = ISA_I_BRANCH | ISA_I_SPECIAL;
		break;
	case ZYDIS_MNEMONIC_SYSEXIT:
		out->cls = RTIT_IC_SYSEXIT;
		out->flags = ISA_I_BRANCH | ISA_I_SPECIAL;
		break;
	case ZYDIS_MNEMONIC_LMSW: case ZYDIS_MNEMONIC_CLTS:
	case ZYDIS_MNEMONIC_LGDT: case ZYDIS_MNEMONIC_LIDT:
	case ZYDIS_MNEMONIC_LLDT: case ZYDIS_MNEMONIC_LTR:
	case ZYDIS_MNEMONIC_XSETBV:
		/* they would change Unicorn's own control state */
		out->flags = ISA_I_SPECIAL;
		break;
	case ZYDIS_MNEMONIC_CLI:
		/* IOPL-sensitive; emulated for the record's RFLAGS.IF */
		out->flags = ISA_I_PRIV | ISA_I_SPECIAL;
		break;
	case ZYDIS_MNEMONIC_POPF: case ZYDIS_MNEMONIC_POPFD:
	case ZYDIS_MNEMONIC_POPFQ:
		/* may change RFLAGS.IF: emulated (SDM Vol. 2B POPF) */
		out->flags = ISA_I_SPECIAL;
		break;
	case ZYDIS_MNEMONIC_IN: case ZYDIS_MNEMONIC_OUT:
	case ZYDIS_MNEMONIC_INSB: case ZYDIS_MNEMONIC_INSW:
	case ZYDIS_MNEMONIC_INSD: case ZYDIS_MNEMONIC_OUTSB:
	case ZYDIS_MNEMONIC_OUTSW: case ZYDIS_MNEMONIC_OUTSD:
	case ZYDIS_MNEMONIC_INVLPG: case ZYDIS_MNEMONIC_INVD:
	case ZYDIS_MNEMONIC_WBINVD: case ZYDIS_MNEMONIC_SWAPGS:
		out->flags = ISA_I_PRIV;
		break;
	case ZYDIS_MNEMONIC_RDPMC:
		out->flags = ISA_I_PRIV | ISA_I_TXKEEP;
		break;
	case ZYDIS_MNEMONIC_MOV:
		if (in->opcode_map == ZYDIS_OPCODE_MAP_0F &&
		    (in->opcode == 0x21 || in->opcode == 0x23)) {
			out->flags = ISA_I_SPECIAL;	/* MOV DR */
			break;
		}
		if (in->opcode_map == ZYDIS_OPCODE_MAP_0F &&
		    (in->opcode == 0x20 || in->opcode == 0x22)) {
			unsigned cr = in->raw.modrm.reg | (in->raw.rex.R << 3);
			out->flags = ISA_I_SPECIAL;
			if (in->opcode == 0x22 && cr == 3)
				out->cls = RTIT_IC_MOV_CR3;
			else if (in->opcode == 0x22 && cr == 0)
				out->cls = RTIT_IC_MOV_CR0;
		}
		break;
	case ZYDIS_MNEMONIC_WRMSR:
		out->cls = RTIT_IC_WRMSR;
		out->flags = ISA_I_SPECIAL;
		break;
	case ZYDIS_MNEMONIC_RDMSR:
		out->cls = RTIT_IC_RDMSR;
		out->flags = ISA_I_SPECIAL;
		break;
	case ZYDIS_MNEMONIC_HLT:
		out->cls = RTIT_IC_HLT;
		out->flags = ISA_I_SPECIAL;
		break;
	case ZYDIS_MNEMONIC_PTWRITE:
		out->cls = RTIT_IC_PTWRITE;
		out->flags = ISA_I_SPECIAL;
		break;
	case ZYDIS_MNEMONIC_MWAIT:
		out->cls = RTIT_IC_MWAIT;
		out->flags = ISA_I_SPECIAL;
		break;
	case ZYDIS_MNEMONIC_MONITOR:
		/* arms the monitor MWAIT needs (class OTHER) */
		out->flags = ISA_I_SPECIAL;
		break;
	case ZYDIS_MNEMONIC_RDTSC: case ZYDIS_MNEMONIC_RDTSCP:
	case ZYDIS_MNEMONIC_RDRAND: case ZYDIS_MNEMONIC_RDSEED:
		/* the model's TSC, not the host's: determinism */
		out->flags = ISA_I_SPECIAL | ISA_I_TXKEEP;
		break;
	case ZYDIS_MNEMONIC_RSM:
		out->flags = ISA_I_SPECIAL;
		break;
	case ZYDIS_MNEMONIC_STI:
		out->flags = ISA_I_SHADOW | ISA_I_PRIV | ISA_I_SPECIAL;
		break;
	case ZYDIS_MNEMONIC_XBEGIN:
		/* RTM (SDM Vol. 2 XBEGIN): not a branch; the fallback is the
		 * relative target.  Unicorn 2.0.1 would run C7 F8 as MOV EAX,
		 * imm32 (docs/sim.md "RTM"). */
		out->cls = RTIT_IC_XBEGIN;
		out->flags = ISA_I_SPECIAL;
		out->target = ip + in->length + (uint64_t)in->raw.imm[0].value.s;
		break;
	case ZYDIS_MNEMONIC_XEND:
		out->cls = RTIT_IC_XEND;
		out->flags = ISA_I_SPECIAL;
		break;
	case ZYDIS_MNEMONIC_XABORT: case ZYDIS_MNEMONIC_XTEST:
		/* class OTHER: XABORT outside a transaction is a NOP, inside
		 * it never retires (an abort event); XTEST sets ZF */
		out->flags = ISA_I_SPECIAL | ISA_I_TXKEEP;
		break;
	case ZYDIS_MNEMONIC_UIRET:
		/* user interrupts (SDM Vol. 2B UIRET): a far transfer, as
		 * IRET for Intel PT; Unicorn 2.0.1 does not know it */
		out->cls = RTIT_IC_UIRET;
		out->flags = ISA_I_BRANCH | ISA_I_SPECIAL;
		break;
	case ZYDIS_MNEMONIC_STUI: case ZYDIS_MNEMONIC_CLUI: case ZYDIS_MNEMONIC_TESTUI:
		out->flags = ISA_I_SPECIAL;	/* UIF lives in the model */
		break;
	case ZYDIS_MNEMONIC_ENCLU:
		/* SGX (SDM Vol. 3D): EENTER, ERESUME, EEXIT transfer control
		 * (far transfers, Table 33-55 case 17); the leaf is in EAX,
		 * so every ENCLU is intercepted */
		out->cls = RTIT_IC_ENCLU;
		out->flags = ISA_I_BRANCH | ISA_I_SPECIAL;
		break;
	case ZYDIS_MNEMONIC_VMLAUNCH: case ZYDIS_MNEMONIC_VMRESUME:
		/* VMX (SDM Vol. 3C 25): a VM entry, a far transfer into the
		 * guest (Table 33-53); class OTHER, the record's TAKEN flag
		 * says it entered (docs/sim.md "VMX", D147) */
		out->flags = ISA_I_BRANCH | ISA_I_SPECIAL;
		break;
	case ZYDIS_MNEMONIC_CPUID: case ZYDIS_MNEMONIC_PAUSE:
		/* SDM Vol. 1 16.3.8.1: always abort a transaction */
		out->flags = ISA_I_TXABORT;
		break;
	case ZYDIS_MNEMONIC_POP:
		if (in->opcode == 0x17 && in->opcode_map == ZYDIS_OPCODE_MAP_DEFAULT)
			out->flags = ISA_I_SHADOW;
		break;
	default:
		break;
	}
	/* Unicorn runs a REP string instruction as a TB that jumps to itself
	 * once per iteration: it retires when the flow leaves it */
	if (in->attributes & (ZYDIS_ATTRIB_HAS_REP | ZYDIS_ATTRIB_HAS_REPE |
			      ZYDIS_ATTRIB_HAS_REPNE))
		out->flags |= ISA_I_REP;
	/* Unicorn keeps RIP exact at a memory access only for the plain
	 * integer loads and stores (with precise_faults); x87, SSE, MMX,
	 * atomics (LOCK, XCHG), CMPXCHG8B/16B, FXSAVE... fault with a stale
	 * RIP.  A code hook on them makes Unicorn store RIP first. */
	if ((in->attributes & ZYDIS_ATTRIB_HAS_MODRM) && in->raw.modrm.mod != 3 &&
	    !(out->flags & ISA_I_SPECIAL) &&
	    ((in->meta.isa_ext != ZYDIS_ISA_EXT_BASE &&
	      in->meta.isa_ext != ZYDIS_ISA_EXT_LONGMODE) ||
	     (in->attributes & ZYDIS_ATTRIB_HAS_LOCK) ||
	     in->mnemonic == ZYDIS_MNEMONIC_XCHG ||
	     in->mnemonic == ZYDIS_MNEMONIC_CMPXCHG8B ||
	     in->mnemonic == ZYDIS_MNEMONIC_CMPXCHG16B))
		out->flags |= ISA_I_RISKY;
	/* MOV SS, r/m (8E /2): SDM 6.8.3, interrupts held one instruction */
	if (in->mnemonic == ZYDIS_MNEMONIC_MOV && in->opcode == 0x8E &&
	    in->opcode_map == ZYDIS_OPCODE_MAP_DEFAULT && in->raw.modrm.reg == 2)
		out->flags = ISA_I_SHADOW;
}

