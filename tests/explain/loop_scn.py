#!/usr/bin/env python3
"""loop_scn.py DIALECT ITERATIONS: a scenario whose loop retires 7
instructions an iteration (a call and its RET, an indirect jump, a
conditional branch), for `rtitsim explain`'s size and load-time test."""
import sys

dialect, n = sys.argv[1], int(sys.argv[2])
ctl = ("msr RTIT_EVENTS = 0x37\nmsr RTIT_CTL = 0x200d\n" if dialect == "rtit" else
       "msr IA32_RTIT_CTL = 0x2005\n")
print(f"""name loop_{dialect}_{n}
describe "{n} iterations of call/ret, an indirect jump and a conditional branch"
dialect {dialect}
mode 64
code asm load=0x401000 entry=start
        .intel_syntax noprefix
        .globl start
start:
        mov ecx, {n}
again:
        call f
        lea rdx, [rip + back]
        jmp rdx
back:
        dec ecx
        jnz again
done:
        nop
f:
        inc rax
        ret
end
cpl 0
{ctl}end-at done""")
