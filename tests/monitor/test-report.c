/* The PNG heatmap read back through libpng: its size follows the cell geometry,
 * every pixel has its cell's colour, and row 0 (the lowest address) is on top. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <png.h>

#include "monitor/report.h"

/*
 * Three snapshots (columns) by two address rows:
 *
 *            t0    t1    t2
 *   low  |  0.0   1.0   0.5 |   black, white, orange
 *   high |  0.5   0.0   1.0 |
 *
 * 800 / 3 = 266 pixels a column, 3 a row: 798 x 6.
 */
static void test_png_cells(void **state)
{
	double cells[] = { 0.0, 1.0, 0.5, 0.5, 0.0, 1.0 };
	static const unsigned char want[3][3] = {
		{ 0, 0, 0 },		/* 0.0: black */
		{ 255, 255, 255 },	/* 1.0: white */
		{ 255, 128, 0 },	/* 0.5: r full, g half, no b */
	};
	struct mr_heatmap hm = { .width = 3, .height = 2, .cells = cells };
	png_image img;
	unsigned char *px;
	unsigned x, y;
	FILE *f = tmpfile();

	assert_non_null(f);
	assert_int_equal(mr_heatmap_write_png(&hm, f), 0);
	rewind(f);
	memset(&img, 0, sizeof(img));
	img.version = PNG_IMAGE_VERSION;
	assert_true(png_image_begin_read_from_stdio(&img, f));
	assert_int_equal(img.width, 798);
	assert_int_equal(img.height, 6);
	img.format = PNG_FORMAT_RGB;
	px = malloc(PNG_IMAGE_SIZE(img));
	assert_non_null(px);
	assert_true(png_image_finish_read(&img, NULL, px, 0, NULL));
	for (y = 0; y < img.height; y++)
		for (x = 0; x < img.width; x++) {
			double v = cells[(y / 3) * 3 + x / 266];
			const unsigned char *w = want[v == 0 ? 0 : v == 1 ? 1 : 2];
			const unsigned char *p = px + ((size_t)y * img.width + x) * 3;

			if (memcmp(p, w, 3))
				fail_msg("pixel %u,%u is %02x%02x%02x, want %02x%02x%02x (cell %.1f)",
					 x, y, p[0], p[1], p[2], w[0], w[1], w[2], v);
		}
	free(px);
	fclose(f);
}

/* A grid too large for the format's sanity bound is refused, not written. */
static void test_png_refused(void **state)
{
	double cell = 1;
	struct mr_heatmap hm = { .width = 1, .height = 10000, .cells = &cell };
	FILE *f = tmpfile();

	assert_non_null(f);
	assert_int_equal(mr_heatmap_write_png(&hm, f), -EINVAL);
	assert_int_equal(ftell(f), 0);
	fclose(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_png_cells),
		cmocka_unit_test(test_png_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
