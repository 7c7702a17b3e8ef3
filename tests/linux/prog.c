/*
 * prog.c - an ordinary C program for the process tests (tests/linux):
 * a dense switch (a jump table at -O2), calls through function pointers,
 * recursion, qsort's callbacks into the program, stdio through libc.
 * Its output depends only on its arguments.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

static long fib(int n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

static long ackermann_ish(int m, int n)
{
	if (m == 0)
		return n + 1;
	if (n == 0)
		return ackermann_ish(m - 1, 1);
	return ackermann_ish(m - 1, (int)ackermann_ish(m, n - 1));
}

/* A switch over 0..9 that gcc -O2 compiles to a jump table. */
static unsigned step(unsigned k, unsigned x)
{
	switch (k % 10) {
	case 0: return x + 17;
	case 1: return x * 3;
	case 2: return x ^ 0x5a5a;
	case 3: return x - 11;
	case 4: return x << 3 | x >> 29;
	case 5: return x / 7 + 1;
	case 6: return ~x;
	case 7: return x * x;
	case 8: return x + (x >> 4);
	default: return x ^ (x << 7);
	}
}

static unsigned twice(unsigned x) { return x * 2; }
static unsigned plus9(unsigned x) { return x + 9; }
static unsigned rot(unsigned x) { return x >> 1 | x << 31; }

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 200;
	if (n < 1 || n > 100000)
		n = 200;
	int *a = malloc((size_t)n * sizeof(*a));
	if (!a)
		return 2;
	unsigned s = 12345;
	for (int i = 0; i < n; i++) {
		s = s * 1103515245u + 12345u;
		a[i] = (int)((s >> 8) % 100000);
	}
	qsort(a, (size_t)n, sizeof(*a), cmp_int);
	unsigned (*const fns[])(unsigned) = { twice, plus9, rot };
	unsigned acc = 1;
	for (int i = 0; i < n; i++)
		acc = fns[(unsigned)a[i] % 3](step((unsigned)a[i], acc));
	char line[64];
	snprintf(line, sizeof(line), "%d", a[n / 2]);
	printf("n=%d min=%d median=%s max=%d acc=%u fib=%ld ack=%ld args=%d last=%s\n", n, a[0],
	       line, a[n - 1], acc, fib(18), ackermann_ish(2, 3), argc,
	       argv[argc - 1] ? argv[argc - 1] : "");
	free(a);
	return (int)(acc % 7);
}
