	.intel_syntax noprefix
	.section .text, "ax"
	.globl _start
_start:				# 0x401000 (FUP.PGE)
	movabs rax, offset low
	jmp rax			# TIP 0x8000
	.org 0x100
t1:				# 0x401100
	movabs rax, offset t2
	jmp rax			# TIP 0x401200
	.org 0x200
t2:				# 0x401200
	movabs rax, offset far1
	jmp rax			# TIP 0x7f1234560000
	.org 0x300
t3:				# 0x401300
	hlt

	.section .low, "ax"
low:				# 0x8000
	movabs rax, offset t1
	jmp rax			# TIP 0x401100

	.section .far1, "ax"
far1:				# 0x7f1234560000
	movabs rax, offset far2
	jmp rax			# TIP 0x7f1234a70000

	.section .far2, "ax"
far2:				# 0x7f1234a70000
	movabs rax, offset far2b
	jmp rax			# TIP 0x7f1234a70100
	.org 0x100
far2b:				# 0x7f1234a70100
	movabs rax, offset t3
	jmp rax			# TIP 0x401300
