# loop.s - a small static program for `rtitsim run PROGRAM` (README):
# a counted loop with a call in it, then HLT (the run ends there).
	.globl _start
_start:
	mov $100, %ecx
1:	call step
	dec %ecx
	jnz 1b
	hlt
step:
	add $3, %eax
	ret
