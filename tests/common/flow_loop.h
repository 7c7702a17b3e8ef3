/*
 * flow_loop.h - the branch-dense loop of bench/flow and tests/flow/
 * test_blocks, as scenario text: R12D (a string) iterations of five inner
 * rounds (a conditional branch, a CALL and RET every other round) and an
 * indirect JMP through a table; FLOW_LOOP_HEAD ends at the label "back:",
 * where the user may add code before FLOW_LOOP_TAIL closes the loop.
 * Ends at the label "done" (end-at).
 */
#ifndef RTIT_TESTS_FLOW_LOOP_H
#define RTIT_TESTS_FLOW_LOOP_H

#define FLOW_LOOP_HEAD(r12d) \
	"code asm load=0x401000 entry=start\n" \
	"    .intel_syntax noprefix\n" \
	"    .globl start\n" \
	"start:\n" \
	"    mov r12d, " r12d "\n" \
	"outer:\n" \
	"    mov ecx, 5\n" \
	"inner:\n" \
	"    test ecx, 1\n" \
	"    jz even\n" \
	"    call work\n" \
	"even:\n" \
	"    dec ecx\n" \
	"    jnz inner\n" \
	"    mov eax, r12d\n" \
	"    and eax, 1\n" \
	"    lea rdx, [rip + table]\n" \
	"    jmp qword ptr [rdx + rax * 8]\n" \
	"back:\n"

#define FLOW_LOOP_TAIL \
	"    dec r12d\n" \
	"    jnz outer\n" \
	"done:\n" \
	"    nop\n" \
	"work:\n" \
	"    add r8, rcx\n" \
	"    xor r9, r8\n" \
	"    ret\n" \
	"t0: add r10, 1\n" \
	"    jmp back\n" \
	"t1: sub r10, 1\n" \
	"    jmp back\n" \
	"    .balign 8\n" \
	"table:\n" \
	"    .quad t0, t1\n" \
	"end\n" \
	"cpl 0\n" \
	"end-at done\n"

#endif
