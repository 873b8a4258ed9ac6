/* Size classes of small objects: 16-byte steps to 128, then eight per doubling to
 * 32 KiB (at most 12.5% internal waste), and the slab size (pages, as a buddy order) of each. */
#include "config.h"

#include "allocator/internal.h"

const uint32_t mr_class_size[MR_NR_CLASSES] = {
	16, 32, 48, 64, 80, 96, 112, 128,
	144, 160, 176, 192, 208, 224, 240, 256,
	288, 320, 352, 384, 416, 448, 480, 512,
	576, 640, 704, 768, 832, 896, 960, 1024,
	1152, 1280, 1408, 1536, 1664, 1792, 1920, 2048,
	2304, 2560, 2816, 3072, 3328, 3584, 3840, 4096,
	4608, 5120, 5632, 6144, 6656, 7168, 7680, 8192,
	9216, 10240, 11264, 12288, 13312, 14336, 15360, 16384,
	18432, 20480, 22528, 24576, 26624, 28672, 30720, 32768,
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
	unsigned c;

	if (size > MR_SMALL_MAX)
		return MR_NR_CLASSES;
	for (c = mr_size_class(size ? size : 1); c < MR_NR_CLASSES; c++)
		if (mr_class_size[c] % align == 0)
			return c;
	return MR_NR_CLASSES;
}
