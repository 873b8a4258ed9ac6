/* Size classes of small objects: 16-byte steps to 128, then eight per doubling to
 * 32 KiB (at most 12.5% internal waste), and the slab size (pages, as a buddy order) of each.
 *
 * Above 4 KiB every class but the powers of two is 64 bytes short of (8 + i) << k. A
 * slab's objects lie end to end from a page boundary, so with the round sizes (4608,
 * 5120, 6144, ... all multiples of 512) one slot boundary in 8, 4, 2 or every one fell
 * on a page boundary. An object written at both ends (a header, then a last byte or a
 * trailer) and its neighbour then need two pages between them where one would do: 1.43
 * pages an object over 4-8 KiB, 1.58 over 8-16 KiB, 1.86 over 16-32 KiB, against 1.06-1.09
 * under glibc, whose chunks (16-byte steps) share their end pages; 1.32, 1.37 and 1.51
 * now. Short by 64, slot boundaries meet a page boundary once in 64 objects and objects
 * stay 64-byte aligned (cache lines, the usual alignas). The powers of two stay whole:
 * programs often ask for 8, 16 or 32 KiB buffers and fill them, and 64 bytes short would
 * put each in the next class, 12% larger and resident. What it cost: requests aligned to
 * 128 bytes or more between 4 and 32 KiB now take a power-of-two class or a page span
 * (mr_size_class_aligned). docs/allocator.md, "Peak RSS against glibc, by cause". */
#include "config.h"

#include "allocator/internal.h"

const uint32_t mr_class_size[MR_NR_CLASSES] = {
	16, 32, 48, 64, 80, 96, 112, 128,
	144, 160, 176, 192, 208, 224, 240, 256,
	288, 320, 352, 384, 416, 448, 480, 512,
	576, 640, 704, 768, 832, 896, 960, 1024,
	1152, 1280, 1408, 1536, 1664, 1792, 1920, 2048,
	2304, 2560, 2816, 3072, 3328, 3584, 3840, 4096,
	4544, 5056, 5568, 6080, 6592, 7104, 7616, 8192,
	9152, 10176, 11200, 12224, 13248, 14272, 15296, 16384,
	18368, 20416, 22464, 24512, 26560, 28608, 30656, 32768,
};

/* Slabs of at least 64 KiB and at least 8 objects: few trips to the page heap. */
const uint8_t mr_class_slab_order[MR_NR_CLASSES] = {
	4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
	4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
	4, 4, 4, 4, 4, 4, 4, 4, 5, 5, 5, 5, 5, 5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 6,
};

/* mr_class_small[(size + 15) / 16]: the class of a size up to 1 KiB. */
const uint8_t mr_class_small[1024 / 16 + 1] = {
	0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 16, 17, 17, 18,
	18, 19, 19, 20, 20, 21, 21, 22, 22, 23, 23, 24, 24, 24, 24, 25, 25, 25, 25, 26, 26, 26,
	26, 27, 27, 27, 27, 28, 28, 28, 28, 29, 29, 29, 29, 30, 30, 30, 30, 31, 31, 31, 31,
};

unsigned mr_size_class_aligned(size_t size, size_t align)
{
	/* No class larger than the pages a span of its own would take. */
	size_t limit = size > MR_PAGE_SIZE ? (size + MR_PAGE_SIZE - 1) & ~(MR_PAGE_SIZE - 1)
					   : MR_PAGE_SIZE;
	unsigned c;

	if (size > MR_SMALL_MAX)
		return MR_NR_CLASSES;
	for (c = mr_size_class(size ? size : 1); c < MR_NR_CLASSES && mr_class_size[c] <= limit; c++)
		if (mr_class_size[c] % align == 0)
			return c;
	return MR_NR_CLASSES;
}
