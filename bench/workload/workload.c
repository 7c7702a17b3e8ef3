/*
 * workload.c - the compiled C workload of the speed benchmarks (issue 20):
 * merge sort, CRC-32 and a linked-list walk, as gcc -O2 compiles them.
 *
 * Freestanding (no libc, no system calls): _start sets up its own stack,
 * runs the rounds and halts, so the same ELF runs under bare Unicorn
 * (bench/sim), under `rtitsim run --bare` and through the flow decoder
 * (bench/flow).  ROUNDS, a compile-time constant (-DROUNDS=N), sizes the
 * run: one round is about 0.7 * 10^6 instructions, so the default of 143
 * rounds is about 10^8 instructions.  The result is left in RAX at the
 * HLT, so a run that computes something else shows.
 */
#include <stdint.h>

#ifndef ROUNDS
#define ROUNDS 143
#endif

#define N 2048          /* merge-sort elements */
#define CRC_BYTES 8192  /* bytes checksummed per round */
#define NODES 1024      /* linked-list nodes */

struct node { struct node *next; uint32_t val; };

static uint32_t keys[N], tmp[N];
static uint8_t bytes[CRC_BYTES];
static uint32_t crc_table[256];
static struct node nodes[NODES];
__attribute__((used)) static uint64_t stack[8192] __attribute__((aligned(16)));

static uint32_t rng = 2463534242u;
static uint32_t xorshift(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 17;
	rng ^= rng << 5;
	return rng;
}

static void merge_sort(uint32_t *a, uint32_t *t, int n)
{
	if (n < 2)
		return;
	int h = n / 2;
	merge_sort(a, t, h);
	merge_sort(a + h, t, n - h);
	int i = 0, j = h, k = 0;
	while (i < h && j < n)
		t[k++] = a[i] <= a[j] ? a[i++] : a[j++];
	while (i < h)
		t[k++] = a[i++];
	while (j < n)
		t[k++] = a[j++];
	for (k = 0; k < n; k++)
		a[k] = t[k];
}

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int b = 0; b < 8; b++)
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
		crc_table[i] = c;
	}
}

static uint32_t crc32(const uint8_t *p, int n)
{
	uint32_t c = 0xffffffffu;
	for (int i = 0; i < n; i++)
		c = crc_table[(c ^ p[i]) & 0xff] ^ (c >> 8);
	return c ^ 0xffffffffu;
}

static uint32_t walk(const struct node *n)
{
	uint32_t s = 0;
	for (; n; n = n->next)
		s = s * 31 + n->val;
	return s;
}

static void link_nodes(void)
{
	/* a permutation, so the walk jumps around memory */
	for (int i = 0; i < NODES; i++)
		nodes[i].val = xorshift();
	for (int i = 0; i < NODES - 1; i++)
		nodes[(i * 389) % NODES].next = &nodes[((i + 1) * 389) % NODES];
}

__attribute__((used)) static uint64_t run(void)
{
	uint64_t acc = 0;
	crc_init();
	link_nodes();
	for (int r = 0; r < ROUNDS; r++) {
		for (int i = 0; i < N; i++)
			keys[i] = xorshift();
		merge_sort(keys, tmp, N);
		for (int i = 0; i < CRC_BYTES; i++)
			bytes[i] = (uint8_t)(keys[i % N] >> (i & 24));
		acc += crc32(bytes, CRC_BYTES);
		acc += walk(&nodes[0]);
	}
	return acc;
}

__asm__(".globl _start\n"
	"_start:\n"
	"    lea rsp, [rip + stack + 65536]\n"
	"    call run\n"
	"    hlt\n");
