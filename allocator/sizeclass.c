/* Size classes of small objects: 16-byte steps to 128, then eight per doubling to
 * 32 KiB (at most 12.5% internal waste), and the slab size (pages, as a buddy order) of each.
 *
 * Above 4 KiB a doubling's classes are its slab (64, 128, 256 KiB) split into 15, 14, ...
 * 8 objects, rounded down to 16 bytes: 4368, 4672, 5040, ... 7280, 8192. So:
 * - a slab holds a whole number of objects, less at most 128 bytes (the classes
 *   before, (8 + i) << k less 64, left up to 6 KiB of a slab: 9 objects of 6592 bytes
 *   in 64 KiB);
 * - the steps are finest just above a power of two (6.7%), where requests for a page
 *   or a buffer and a header land, and coarsest just under the next (12.5%): sqlite3's
 *   page cache asks for 4368 bytes (class 4544 before, 14 a slab; 15 now), and 4104,
 *   8200 and 16400-byte requests waste 6%, not 10%;
 * - no slot boundary inside a slab falls on a page boundary (test-sizeclass checks
 *   it). An object written at both ends (a header, then a last byte or a trailer) and
 *   its neighbour then share the page between them, as glibc's chunks do; round sizes
 *   (4608, 5120, 6144, ...) put one boundary in 8, 4, 2 or every one on a page.
 * The powers of two are n = 16 and 8: programs ask for 8, 16 and 32 KiB buffers and fill
 * them. What it costs: objects of these classes are 16-byte aligned, as glibc's are,
 * not 64; a request aligned to more than 16 bytes takes the next class its alignment
 * divides, or a span when that is smaller (mr_size_class_aligned). Measured against the
 * classes before: docs/allocator.md, "Peak RSS against glibc, by cause". */
#include "config.h"

#include "allocator/internal.h"

const uint32_t mr_class_size[MR_NR_CLASSES] = {
	16, 32, 48, 64, 80, 96, 112, 128,
	144, 160, 176, 192, 208, 224, 240, 256,
	288, 320, 352, 384, 416, 448, 480, 512,
	576, 640, 704, 768, 832, 896, 960, 1024,
	1152, 1280, 1408, 1536, 1664, 1792, 1920, 2048,
	2304, 2560, 2816, 3072, 3328, 3584, 3840, 4096,
	4368, 4672, 5040, 5456, 5952, 6544, 7280, 8192,		/* 65536 / 15..8 */
	8736, 9360, 10080, 10912, 11904, 13104, 14560, 16384,	/* 131072 / 15..8 */
	17472, 18720, 20160, 21840, 23824, 26208, 29120, 32768,	/* 262144 / 15..8 */
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
