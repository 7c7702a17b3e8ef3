/*
 * asm.h - x86 assembly source to an ELF image with the GNU toolchain (as,
 * ld), for scenarios' `code asm` blocks: the simulator loads the ELF to
 * run it, the decoder reads it as the program image.  No simulator.
 */
#ifndef RTIT_ASM_H
#define RTIT_ASM_H

#include <stddef.h>
#include <stdint.h>

#include "rtit/error.h"

/* A built ELF in a private temporary directory. */
struct rtit_asm {
	char dir[32];
	char elf[64];		/* the ELF's path */
};

/*
 * Assembles GNU as source text @src (.intel_syntax allowed) for @mode (32
 * or 64) and links it with ld -Ttext=@addr (entry _start).  @name is the
 * file named in messages, @line_base is added to the assembler's line
 * numbers.  Returns 0 (then out->elf exists until rtit_asm_cleanup), or
 * -RTIT_ERR_IO (a temporary file), -RTIT_ERR_INVALID (as or ld failed)
 * with one line in @err: "NAME:LINE: as: MESSAGE".
 */
int rtit_asm_build(const char *src, uint64_t addr, int mode, const char *name,
		   int line_base, struct rtit_asm *out, char *err, size_t errsz);

/* A section of the source placed at its own address (ld
 * --section-start=NAME=ADDR): code or data in several regions of the
 * address space, e.g. low, across 4 GiB, in the kernel half. */
#define RTIT_ASM_MAX_SECTIONS 8
struct rtit_asm_section {
	char name[24];		/* ".r1": a section the source defines */
	uint64_t addr;
};

/* As rtit_asm_build, with @nsecs sections of @secs placed at their
 * addresses (the rest at @addr). */
int rtit_asm_build_sections(const char *src, uint64_t addr, const struct rtit_asm_section *secs,
			    size_t nsecs, int mode, const char *name, int line_base,
			    struct rtit_asm *out, char *err, size_t errsz);

/* Removes the ELF and its directory. */
void rtit_asm_cleanup(struct rtit_asm *a);

#endif /* RTIT_ASM_H */
