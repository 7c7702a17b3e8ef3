/* demo_scenario.h - the built-in scenario `rtitsim run` uses with no file. */
#ifndef RTIT_CLI_DEMO_SCENARIO_H
#define RTIT_CLI_DEMO_SCENARIO_H

/* A small program that shows the main packet kinds of RTIT: conditional
 * branches (TNT), calls and returns (RET compression), an indirect jump
 * (TIP), a system call into CPL 0 and back (FUP.FAR + TIP), a page fault
 * handled by the kernel (FUP.FAR with the faulting CLIP), and a timer
 * interrupt.  Tracing is on for both CPLs from the start; the run ends at
 * the label done. */
static const char demo_scenario[] =
"# rtitsim's built-in demo (rtitsim run with no file)\n"
"name     demo\n"
"describe \"loops, calls, an indirect jump, a syscall, a page fault, an interrupt\"\n"
"dialect  rtit\n"
"cpu      silvermont\n"
"mode     64\n"
"code asm load=0x401000 entry=start\n"
"    .intel_syntax noprefix\n"
"    .globl start\n"
"start:                          # the kernel, CPL 0: set LSTAR, enter user mode\n"
"    lea rax, [rip + syscall_entry]\n"
"    mov rdx, rax\n"
"    shr rdx, 32\n"
"    mov ecx, 0xc0000082\n"
"    wrmsr\n"
"    lea rcx, [rip + user_start]\n"
"    mov r11, 0x202\n"
"    sysretq\n"
"user_start:                     # CPL 3\n"
"    mov ecx, 8\n"
"loop_top:\n"
"    test ecx, 1\n"
"    jz even\n"
"    call odd_work\n"
"even:\n"
"    dec ecx\n"
"    jnz loop_top\n"
"    lea rax, [rip + target]\n"
"    jmp rax\n"
"    nop\n"
"target:\n"
"    mov eax, 1\n"
"    syscall\n"
"    mov dword ptr [0x9000], 7    # unmapped: #PF, the kernel skips it\n"
"after_store:\n"
"    nop\n"
"    nop\n"
"done:\n"
"    nop\n"
"odd_work:\n"
"    add edx, ecx\n"
"    ret\n"
"syscall_entry:\n"
"    add rax, 1\n"
"    sysretq\n"
"pf_handler:\n"
"    add rsp, 8                   # the error code\n"
"    add qword ptr [rsp], 11      # return past the 11-byte store\n"
"    iretq\n"
"irq_handler:\n"
"    iretq\n"
"end\n"
"handler 14 = pf_handler\n"
"handler 0x20 = irq_handler\n"
"cpl 0\n"
"cr3 0x1000\n"
"msr RTIT_EVENTS = 0x37          # FilterEn always on, TraceStop never (3.3.5)\n"
"msr RTIT_CTL = 0x280d           # Trace_En, OS, User, Cmprs_Ret, TraceActive\n"
"event at ip after_store: interrupt vector=0x20\n"
"end-at done\n"
"budget 10000\n";

#endif
