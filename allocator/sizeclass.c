/* Size classes of small objects: 16-byte steps to 256, eight per doubling to 512, then
 * sixteen per doubling to 32 KiB (at most 6.25% internal waste above 512 bytes), and
 * the slab size (pages, as a buddy order) of each. Not sixteen from 256: a thread's
 * slabs stay resident up to the most objects of their class ever live at once, and
 * more classes of the sizes programs use most raise the sum of those maxima more
 * than they save in rounding (alloc-bench's prodcons: +0.2 MiB of 2.9). */
#include "config.h"

#include "allocator/internal.h"

const uint32_t mr_class_size[MR_NR_CLASSES] = {
	16, 32, 48, 64, 80, 96, 112, 128,
	144, 160, 176, 192, 208, 224, 240, 256,
	288, 320, 352, 384, 416, 448, 480, 512,
	544, 576, 608, 640, 672, 704, 736, 768,
	800, 832, 864, 896, 928, 960, 992, 1024,
	1088, 1152, 1216, 1280, 1344, 1408, 1472, 1536,
	1600, 1664, 1728, 1792, 1856, 1920, 1984, 2048,
	2176, 2304, 2432, 2560, 2688, 2816, 2944, 3072,
	3200, 3328, 3456, 3584, 3712, 3840, 3968, 4096,
	4352, 4608, 4864, 5120, 5376, 5632, 5888, 6144,
	6400, 6656, 6912, 7168, 7424, 7680, 7936, 8192,
	8704, 9216, 9728, 10240, 10752, 11264, 11776, 12288,
	12800, 13312, 13824, 14336, 14848, 15360, 15872, 16384,
	17408, 18432, 19456, 20480, 21504, 22528, 23552, 24576,
	25600, 26624, 27648, 28672, 29696, 30720, 31744, 32768,
};

/* Slabs of at least 64 KiB and at least 8 objects: few trips to the page heap. */
const uint8_t mr_class_slab_order[MR_NR_CLASSES] = {
	4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
	4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
	4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
	4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 5, 5, 5, 5, 5, 5, 5, 5,
	5, 5, 5, 5, 5, 5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6,
};

/* mr_class_small[(size + 15) / 16]: the class of a size up to 1 KiB. */
const uint8_t mr_class_small[1024 / 16 + 1] = {
	0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 16, 17, 17, 18,
	18, 19, 19, 20, 20, 21, 21, 22, 22, 23, 23, 24, 24, 25, 25, 26, 26, 27, 27, 28, 28, 29,
	29, 30, 30, 31, 31, 32, 32, 33, 33, 34, 34, 35, 35, 36, 36, 37, 37, 38, 38, 39, 39,
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
