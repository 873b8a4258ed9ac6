/* Unit tests of the size classes (allocator/sizeclass.c, mr_size_class): every size
 * maps to the smallest class holding it, waste stays under 12.5% above 128 bytes,
 * aligned lookups give classes whose size the alignment divides. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "allocator/internal.h"

static void test_every_size(void **state)
{
	size_t n;

	(void)state;
	for (n = 0; n <= MR_SMALL_MAX; n++) {
		unsigned c = mr_size_class(n);

		if (c >= MR_NR_CLASSES) {
			fail_msg("size %zu: class %u out of range", n, c);
			return;
		}
		if (mr_class_size[c] < n)
			fail_msg("size %zu: class %u holds only %u", n, c, mr_class_size[c]);
		if (c > 0 && mr_class_size[c - 1] >= n && n > 0)
			fail_msg("size %zu: class %u is not the smallest", n, c);
		if (n > 128 && (mr_class_size[c] - n) * 8 > mr_class_size[c])
			fail_msg("size %zu: class %u wastes more than 12.5%%", n, c);
	}
}

static void test_table_shape(void **state)
{
	unsigned c;

	(void)state;
	assert_int_equal(mr_class_size[0], 16);
	assert_int_equal(mr_class_size[MR_NR_CLASSES - 1], MR_SMALL_MAX);
	for (c = 0; c < MR_NR_CLASSES; c++) {
		uint32_t slab = (uint32_t)MR_PAGE_SIZE << mr_class_slab_order[c];

		assert_true(mr_class_size[c] % 16 == 0);
		/* Above a page, the slab split into n objects and rounded down to 16 bytes,
		 * and but for the powers of two (whole pages) no slot boundary inside the
		 * slab on a page boundary (sizeclass.c). */
		if (mr_class_size[c] > MR_PAGE_SIZE) {
			uint32_t n = slab / mr_class_size[c], k;
			bool whole_pages = (mr_class_size[c] & (mr_class_size[c] - 1)) == 0;

			if (slab / n / 16 * 16 != mr_class_size[c])
				fail_msg("class %u: %u, not %u / %u rounded down to 16", c,
					 mr_class_size[c], slab, n);
			for (k = 1; k < n && !whole_pages; k++)
				if ((k * mr_class_size[c]) % MR_PAGE_SIZE == 0)
					fail_msg("class %u: slot %u starts a page", c, k);
		}
		if (c)
			assert_true(mr_class_size[c] > mr_class_size[c - 1]);
		/* At least 8 objects per slab, and few enough for the descriptor's 16-bit
		 * counts (struct mr_span), whose free-list head (an offset / 16 + 1) fits
		 * 16 bits too; slabs fit the smallest region (1 MiB). */
		assert_true(slab / mr_class_size[c] >= 8);
		assert_true(slab / mr_class_size[c] <= UINT16_MAX);
		assert_true((slab - mr_class_size[c]) / 16 + 1 <= UINT16_MAX);
		assert_true(mr_class_slab_order[c] <= 8);
	}
}

static void test_aligned(void **state)
{
	/* want: the class size, 0 for none (a class count could be a class size) */
	static const struct { size_t size, align; uint32_t want; } cases[] = {
		{ 1, 32, 32 }, { 33, 32, 64 }, { 100, 64, 128 }, { 100, 256, 256 },
		{ 1, 4096, 4096 }, { 4097, 4096, 8192 }, { 30000, 4096, 32768 }, { 40000, 16, 0 },
		/* Above 4 KiB few classes are 64-byte multiples (4672, 5952, 11904, ...),
		 * and none is taken that is larger than the request's whole pages. */
		{ 4368, 16, 4368 }, { 4368, 64, 4672 }, { 4500, 512, 8192 }, { 4700, 64, 5952 },
		{ 8193, 128, 11904 }, { 8193, 256, 0 },
		{ 20000, 4096, 0 }, { 12289, 2048, 16384 }, { 12289, 4096, 16384 },
	};
	unsigned i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		unsigned c = mr_size_class_aligned(cases[i].size, cases[i].align);

		if (cases[i].want == 0) {
			assert_int_equal(c, MR_NR_CLASSES);
			continue;
		}
		assert_true(c < MR_NR_CLASSES);
		assert_int_equal(mr_class_size[c], cases[i].want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_size),
		cmocka_unit_test(test_table_shape),
		cmocka_unit_test(test_aligned),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
