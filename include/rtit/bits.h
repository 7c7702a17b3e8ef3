/* bits.h - little-endian load/store and bit helpers shared by the layers. */
#ifndef RTIT_BITS_H
#define RTIT_BITS_H

#include <stddef.h>
#include <stdint.h>

/* Loads @n (0..8) bytes little-endian. */
static inline uint64_t rtit_le_load(const uint8_t *p, size_t n)
{
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* Stores the low @n (0..8) bytes of @v little-endian. */
static inline void rtit_le_store(uint8_t *p, uint64_t v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Loads @n (0..8) bytes little-endian when @avail >= 8 bytes may be read
 * at @p: one unaligned 8-byte load, masked (x86-64 is little-endian). */
static inline uint64_t rtit_le_load_fast(const uint8_t *p, size_t n, size_t avail)
{
	uint64_t v;

	if (avail < 8)
		return rtit_le_load(p, n);
	__builtin_memcpy(&v, p, 8);
	return n >= 8 ? v : v & ((1ull << (8 * n)) - 1);
}

/* Mask of the low @n bits, n in 0..64. */
static inline uint64_t rtit_mask(unsigned n)
{
	return n >= 64 ? ~0ull : (1ull << n) - 1;
}

/* Sign-extends bit @n-1 of @v. */
static inline uint64_t rtit_sext(uint64_t v, unsigned n)
{
	uint64_t m = 1ull << (n - 1);
	v &= rtit_mask(n);
	return (v ^ m) - m;
}

/* Index of the most significant set bit; @v must not be 0. */
static inline unsigned rtit_msb(uint64_t v)
{
	return 63u - (unsigned)__builtin_clzll(v);
}

/* @v rotated left by @n, n in 0..63 (one instruction). */
static inline uint64_t rtit_rotl64(uint64_t v, unsigned n)
{
	return (v << (n & 63)) | (v >> (-n & 63));
}

#endif /* RTIT_BITS_H */
