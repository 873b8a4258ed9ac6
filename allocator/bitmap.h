/* Bitmaps of granules for the first-fit heaps (start.c, fit.c): bit g of word g / 64.
 * Base layer: no state. */
#ifndef MR_ALLOCATOR_BITMAP_H
#define MR_ALLOCATOR_BITMAP_H

#include <stdbool.h>
#include <stdint.h>

static inline bool mr_bit(const uint64_t *map, uint32_t g)
{
	return map[g / 64] >> (g % 64) & 1;
}

/* The first bit in [@g, @end) of @map that is @set, or @end. */
static inline uint32_t mr_next_bit(const uint64_t *map, uint32_t g, uint32_t end, bool set)
{
	while (g < end) {
		uint64_t m = (set ? map[g / 64] : ~map[g / 64]) & (~UINT64_C(0) << (g % 64));

		if (m) {
			uint32_t x = g / 64 * 64 + (uint32_t)__builtin_ctzll(m);

			return x < end ? x : end;
		}
		g = (g / 64 + 1) * 64;
	}
	return end;
}

/* The next run of bits that are @set in [@g, @end) of @map: its start (@end if none),
 * and its end in *@run_end. */
static inline uint32_t mr_next_run(const uint64_t *map, uint32_t g, uint32_t end, bool set,
				   uint32_t *run_end)
{
	g = mr_next_bit(map, g, end, set);
	*run_end = mr_next_bit(map, g, end, !set);
	return g;
}

/* One past the last bit in [@start, @g) of @map that is @set, or @start. */
static inline uint32_t mr_prev_bit_end(const uint64_t *map, uint32_t start, uint32_t g, bool set)
{
	while (g > start) {
		uint32_t w = (g - 1) / 64, n = g - w * 64;	/* bits [w * 64, g) of word w */
		uint64_t m = (set ? map[w] : ~map[w]) & (n == 64 ? ~UINT64_C(0) : (UINT64_C(1) << n) - 1);

		if (m) {
			uint32_t x = w * 64 + 64 - (uint32_t)__builtin_clzll(m);

			return x > start ? x : start;
		}
		g = w * 64;
	}
	return start;
}

/* Set (or clear) the bits [@g, @end) of @map. */
static inline void mr_set_range(uint64_t *map, uint32_t g, uint32_t end, bool set)
{
	while (g < end) {
		uint32_t n = end - g < 64 - g % 64 ? end - g : 64 - g % 64;
		uint64_t m = (n == 64 ? ~UINT64_C(0) : (UINT64_C(1) << n) - 1) << (g % 64);

		if (set)
			map[g / 64] |= m;
		else
			map[g / 64] &= ~m;
		g += n;
	}
}

#endif
