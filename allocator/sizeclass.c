/* Size classes of small objects: 16-byte steps to 128, then four per doubling to
 * 32 KiB (at most 25% internal waste), and the slab size (pages, as a buddy order) of each. */
#include "config.h"

#include "allocator/internal.h"

const uint32_t mr_class_size[MR_NR_CLASSES] = {
	16, 32, 48, 64, 80, 96, 112, 128,
	160, 192, 224, 256, 320, 384, 448, 512,
	640, 768, 896, 1024, 1280, 1536, 1792, 2048,
	2560, 3072, 3584, 4096, 5120, 6144, 7168, 8192,
	10240, 12288, 14336, 16384, 20480, 24576, 28672, 32768,
};

/* Slabs of at least 64 KiB and at least 8 objects: few trips to the page heap. */
const uint8_t mr_class_slab_order[MR_NR_CLASSES] = {
	4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
	4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 5, 5, 5, 5, 6, 6, 6, 6,
};

/* mr_class_small[(size + 15) / 16]: the class of a size up to 1 KiB. */
const uint8_t mr_class_small[1024 / 16 + 1] = {
	0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 12, 12, 13,
	13, 13, 13, 14, 14, 14, 14, 15, 15, 15, 15, 16, 16, 16, 16, 16, 16, 16, 16, 17, 17, 17,
	17, 17, 17, 17, 17, 18, 18, 18, 18, 18, 18, 18, 18, 19, 19, 19, 19, 19, 19, 19, 19,
};

unsigned mr_size_class_aligned(size_t size, size_t align)
{
	unsigned c;

	if (size > MR_SMALL_MAX)
		return MR_NR_CLASSES;
	for (c = mr_size_class(size ? size : 1); c < MR_NR_CLASSES; c++)
		if (mr_class_size[c] % align == 0)
			return c;
	return MR_NR_CLASSES;
}
