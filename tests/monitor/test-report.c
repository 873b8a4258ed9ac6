/* Heatmap images: the PNG read back through libpng (its size is the layout's, every
 * plot pixel has its cell's colour, row 0 on top, and the SVG has the same canvas);
 * the SVG's axis labels name the record's first and last time and its lowest and
 * highest address; power-region edges are marked where the mapped ranges show them. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
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
#include "regions/region.h"

/* An in-memory record: @nr_snaps snapshots of @nr_regions regions each. */
struct test_rec {
	struct mr_rec rec;
	struct mr_rec_snapshot snaps[8];
	struct mr_rec_region regions[8][8];
};

static void rec_init(struct test_rec *t, enum mr_mon_target_kind kind, size_t nr_snaps,
		     const uint64_t *time_us, size_t nr_regions, const uint64_t (*range)[2],
		     const uint32_t *nr_accesses)
{
	size_t i, k;

	memset(t, 0, sizeof(*t));
	t->rec.hdr.kind = kind;
	t->rec.hdr.pid = kind == MR_MON_TARGET_PROCESS ? 42 : 0;
	t->rec.hdr.attrs.sample_us = 10000;
	t->rec.hdr.attrs.aggr_us = 100000;	/* 10 samples an aggregation */
	strcpy(t->rec.hdr.backend, "test");
	t->rec.snaps = t->snaps;
	t->rec.nr_snaps = nr_snaps;
	for (i = 0; i < nr_snaps; i++) {
		t->snaps[i].time_us = time_us[i];
		t->snaps[i].nr_samples = 10;	/* whole aggregations */
		t->snaps[i].regions = t->regions[i];
		t->snaps[i].nr_regions = nr_regions;
		for (k = 0; k < nr_regions; k++) {
			t->regions[i][k].start = range[k][0];
			t->regions[i][k].end = range[k][1];
			t->regions[i][k].nr_accesses = nr_accesses ? nr_accesses[k * nr_snaps + i] : 0;
		}
	}
}

/* The whole of @f, NUL-terminated. */
static char *slurp(FILE *f)
{
	long n;
	char *buf;

	fflush(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	return buf;
}

struct svg_text {
	int x, y;
	char s[64];
};

/* Every one-line <text x="X" y="Y" ... class="@cls">S</text> of @svg, in order. */
static size_t svg_texts(const char *svg, const char *cls, struct svg_text *out, size_t max)
{
	char want[64];
	const char *p = svg;
	size_t n = 0;

	snprintf(want, sizeof(want), "class=\"%s\">", cls);
	while ((p = strstr(p, "<text ")) && n < max) {
		const char *eol = strchr(p, '\n'), *c = strstr(p, want), *end;

		if (c && (!eol || c < eol)) {
			assert_int_equal(sscanf(p, "<text x=\"%d\" y=\"%d\"", &out[n].x, &out[n].y), 2);
			c += strlen(want);
			end = strstr(c, "</text>");
			assert_non_null(end);
			assert_true((size_t)(end - c) < sizeof(out[n].s));
			memcpy(out[n].s, c, (size_t)(end - c));
			out[n].s[end - c] = '\0';
			n++;
		}
		p += 6;
	}
	return n;
}

/*
 * Three snapshots (columns) by two address rows:
 *
 *            t0    t1    t2
 *   low  |  0.0   1.0   0.5 |   black, white, orange
 *   high |  0.5   0.0   1.0 |
 *
 * 800 / 3 = 266 pixels a column, 300 / 2 = 150 a row: a 798 x 300 plot inside a
 * canvas with room for the axes, the title and the colour scale.
 */
static void test_png_cells(void **state)
{
	static const uint64_t times[] = { 100000, 200000, 300000 };
	static const uint64_t range[][2] = { { 0x10000, 0x11000 }, { 0x11000, 0x12000 } };
	static const uint32_t acc[] = { 0, 10, 5, 5, 0, 10 };	/* of 10 samples */
	static const double cells[] = { 0.0, 1.0, 0.5, 0.5, 0.0, 1.0 };
	static const unsigned char want[3][3] = {
		{ 0, 0, 0 },		/* 0.0: black */
		{ 255, 255, 255 },	/* 1.0: white */
		{ 255, 128, 0 },	/* 0.5: r full, g half, no b */
	};
	struct test_rec t;
	struct mr_heatmap hm;
	struct mr_heatmap_layout lo;
	png_image img;
	unsigned char *px;
	unsigned x, y, ink = 0, sw, sh;
	char *svg, cell[128];
	FILE *f = tmpfile(), *fs = tmpfile();

	(void)state;
	rec_init(&t, MR_MON_TARGET_PROCESS, 3, times, 2, range, acc);
	assert_int_equal(mr_heatmap_build(&t.rec, 3, 2, &hm), 0);
	mr_heatmap_layout(&hm, &lo);
	assert_int_equal(lo.plot_w, 798);
	assert_int_equal(lo.plot_h, 300);
	assert_non_null(f);
	assert_int_equal(mr_heatmap_write_png(&hm, "pid 42, test backend", f), 0);
	rewind(f);
	memset(&img, 0, sizeof(img));
	img.version = PNG_IMAGE_VERSION;
	assert_true(png_image_begin_read_from_stdio(&img, f));
	assert_int_equal(img.width, lo.canvas_w);
	assert_int_equal(img.height, lo.canvas_h);
	/* margins for the labels on every side of the plot */
	assert_true(lo.plot_x >= 6 * strlen("0x12000") && lo.plot_y >= 30);
	assert_true(lo.canvas_w >= lo.plot_x + lo.plot_w + 30);
	assert_true(lo.canvas_h >= lo.plot_y + lo.plot_h + 40);
	img.format = PNG_FORMAT_RGB;
	px = malloc(PNG_IMAGE_SIZE(img));
	assert_non_null(px);
	assert_true(png_image_finish_read(&img, NULL, px, 0, NULL));
	for (y = 0; y < lo.plot_h; y++)
		for (x = 0; x < lo.plot_w; x++) {
			double v = cells[(y / 150) * 3 + x / 266];
			const unsigned char *w = want[v == 0 ? 0 : v == 1 ? 1 : 2];
			const unsigned char *p = px + ((size_t)(lo.plot_y + y) * img.width + lo.plot_x + x) * 3;

			if (memcmp(p, w, 3))
				fail_msg("plot pixel %u,%u is %02x%02x%02x, want %02x%02x%02x (cell %.1f)",
					 x, y, p[0], p[1], p[2], w[0], w[1], w[2], v);
		}
	/* text was drawn: the title's row (6..13) has dark pixels, the margin is white */
	for (y = 6; y < 14; y++)
		for (x = 0; x < img.width; x++)
			ink += px[((size_t)y * img.width + x) * 3] < 0x80;
	assert_true(ink > 50);
	assert_memory_equal(px, want[1], 3);
	free(px);
	fclose(f);

	/* the SVG: the same canvas, the same cell at the same place */
	assert_non_null(fs);
	assert_int_equal(mr_heatmap_write_svg(&hm, "pid 42, test backend", fs), 0);
	svg = slurp(fs);
	assert_non_null(strstr(svg, "<svg "));
	assert_int_equal(sscanf(strstr(svg, "<svg "), "<svg xmlns=\"http://www.w3.org/2000/svg\" "
				"width=\"%u\" height=\"%u\"", &sw, &sh), 2);
	assert_int_equal(sw, lo.canvas_w);
	assert_int_equal(sh, lo.canvas_h);
	snprintf(cell, sizeof(cell), "<rect x=\"%u\" y=\"%u\" width=\"266\" height=\"150\" fill=\"#ffffff\"/>",
		 lo.plot_x + 2 * 266, lo.plot_y + 150);
	assert_non_null(strstr(svg, cell));
	free(svg);
	fclose(fs);
	mr_heatmap_free(&hm);
}

/*
 * The axes' labels name the record's extremes:
 *
 *   snapshot     0         1     2     3     4
 *   time (s)     0.250400  0.5   3     5.5   7.750600   (uneven: a pause in recording)
 *   [0x7f0000001000, 0x7f0000101000)   [gap]   [0x7f0000200000, 0x7f0000a00000)
 *
 * time labels, to the millisecond: first "0.25" at the centre of column 0, last
 * "7.751" at the centre of the last column, every label between them in order;
 * address labels: the lowest address at the plot's top edge, the end of the
 * highest range at its bottom edge.
 */
static void test_svg_axis_labels(void **state)
{
	static const uint64_t times[] = { 250400, 500000, 3000000, 5500000, 7750600 };
	static const uint64_t range[][2] = {
		{ 0x7f0000001000, 0x7f0000101000 }, { 0x7f0000200000, 0x7f0000a00000 },
	};
	struct test_rec t;
	struct mr_heatmap hm;
	struct mr_heatmap_layout lo;
	struct svg_text tl[32], al[32];
	size_t nt, na, i;
	char *svg;
	FILE *f = tmpfile();

	(void)state;
	rec_init(&t, MR_MON_TARGET_PROCESS, 5, times, 2, range, NULL);
	assert_int_equal(mr_heatmap_build(&t.rec, 200, 100, &hm), 0);
	mr_heatmap_layout(&hm, &lo);
	assert_non_null(f);
	assert_int_equal(mr_heatmap_write_svg(&hm, "pid 42, test backend", f), 0);
	svg = slurp(f);

	nt = svg_texts(svg, "time-label", tl, 32);
	assert_true(nt >= 2);
	assert_string_equal(tl[0].s, "0.25");
	assert_string_equal(tl[nt - 1].s, "7.751");
	/* 5 columns of 160 pixels: snapshot i's column centre */
	assert_int_equal(lo.cell_w, 160);
	assert_int_equal(tl[0].x, (int)lo.plot_x + 80);
	assert_int_equal(tl[nt - 1].x, (int)(lo.plot_x + lo.plot_w) - 80);
	for (i = 1; i < nt; i++) {
		assert_true(strtod(tl[i].s, NULL) > strtod(tl[i - 1].s, NULL));
		assert_true(tl[i].x > tl[i - 1].x);
	}

	na = svg_texts(svg, "addr-label", al, 32);
	assert_true(na >= 2);
	assert_string_equal(al[0].s, "0x7f0000001000");
	assert_string_equal(al[na - 1].s, "0x7f0000a00000");
	/* vertically centred on the edge: the baseline 4 pixels below it */
	assert_int_equal(al[0].y, (int)lo.plot_y + 4);
	assert_int_equal(al[na - 1].y, (int)(lo.plot_y + lo.plot_h) + 4);
	for (i = 1; i < na; i++) {
		assert_true(strtoull(al[i].s, NULL, 16) > strtoull(al[i - 1].s, NULL, 16));
		assert_true(al[i].y > al[i - 1].y);
	}
	/* the title, escaped */
	assert_non_null(strstr(svg, "class=\"title\">pid 42, test backend</text>"));
	free(svg);
	fclose(f);
	mr_heatmap_free(&hm);
}

/*
 * Power-region edges on a physical heatmap:
 *
 *   mapped:   [1M, 3M)           [8M, 10M)           (collapsed: 4 MiB, 300 px)
 *   regions:  0 [0, 2M)  1 [2M, 4M) + [8M, 9M)  2 [9M, 16M)
 *   edges shown: 2M, 8M, 9M   (0, 4M and 16M lie outside the mapped ranges)
 *   at collapsed offsets 1M, 2M, 3M: 75, 150 and 225 pixels down
 */
static void test_svg_region_edges(void **state)
{
	static const uint64_t times[] = { 100000, 200000 };
	static const uint64_t range[][2] = { { 1 << 20, 3 << 20 }, { 8 << 20, 10 << 20 } };
	struct mr_range r0[] = { { 0, 2 << 20 } };
	struct mr_range r1[] = { { 2 << 20, 2 << 20 }, { 8 << 20, 1 << 20 } };
	struct mr_range r2[] = { { 9 << 20, 7 << 20 } };
	struct mr_region regs[] = {
		{ .id = 0, .ranges = r0, .nr_ranges = 1 },
		{ .id = 1, .ranges = r1, .nr_ranges = 2 },
		{ .id = 2, .ranges = r2, .nr_ranges = 1 },
	};
	struct mr_region_map map = { .regions = regs, .nr_regions = 3 };
	static const struct { uint64_t addr; unsigned dy; } want[] = {
		{ 2 << 20, 75 }, { 8 << 20, 150 }, { 9 << 20, 225 },
	};
	struct test_rec t;
	struct mr_heatmap hm;
	struct mr_heatmap_layout lo;
	struct svg_text ids[8];
	const char *p;
	char *svg;
	size_t n = 0, i;
	FILE *f = tmpfile();

	(void)state;
	rec_init(&t, MR_MON_TARGET_PHYS, 2, times, 2, range, NULL);
	assert_int_equal(mr_heatmap_build(&t.rec, 2, 100, &hm), 0);
	assert_int_equal(mr_heatmap_set_regions(&hm, &map), 0);
	mr_heatmap_layout(&hm, &lo);
	assert_non_null(f);
	assert_int_equal(mr_heatmap_write_svg(&hm, "physical memory, test backend", f), 0);
	svg = slurp(f);
	for (p = svg; (p = strstr(p, "<rect ")); p++) {
		int x, y, w, h;
		char color[8];
		uint64_t addr;
		const char *a = strstr(p, "class=\"region-edge\" data-addr=\""), *eol = strchr(p, '\n');

		if (!a || a > eol)
			continue;
		assert_int_equal(sscanf(p, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#%6[0-9a-f]\"",
					&x, &y, &w, &h, color), 5);
		assert_int_equal(sscanf(a, "class=\"region-edge\" data-addr=\"0x%" SCNx64 "\"", &addr), 1);
		assert_true(n < 3);
		assert_int_equal(addr, want[n].addr);
		assert_int_equal(y, (int)lo.plot_y + (int)want[n].dy);
		assert_int_equal(x, (int)lo.plot_x);
		assert_true(w >= (int)lo.plot_w);
		assert_int_equal(h, 1);
		n++;
	}
	assert_int_equal(n, 3);
	/* every region has a visible piece at least 75 pixels tall: all three ids */
	assert_int_equal(svg_texts(svg, "region-id", ids, 8), 4);
	assert_string_equal(ids[0].s, "0");
	assert_string_equal(ids[1].s, "1");
	assert_string_equal(ids[2].s, "1");
	assert_string_equal(ids[3].s, "2");
	for (i = 0; i < 4; i++)
		assert_true(ids[i].x > (int)(lo.plot_x + lo.plot_w));
	free(svg);
	fclose(f);
	mr_heatmap_free(&hm);
}

/* A grid too large for the format's sanity bound is refused, not written. */
static void test_png_refused(void **state)
{
	static const uint64_t times[] = { 100000 };
	static const uint64_t range[][2] = { { 0, 4096 } };
	struct test_rec t;
	struct mr_heatmap hm;
	FILE *f = tmpfile();

	(void)state;
	rec_init(&t, MR_MON_TARGET_PROCESS, 1, times, 1, range, NULL);
	assert_int_equal(mr_heatmap_build(&t.rec, 1, 10000, &hm), 0);
	assert_non_null(f);
	assert_int_equal(mr_heatmap_write_png(&hm, "x", f), -EINVAL);
	assert_int_equal(ftell(f), 0);
	fclose(f);
	mr_heatmap_free(&hm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_png_cells),
		cmocka_unit_test(test_svg_axis_labels),
		cmocka_unit_test(test_svg_region_edges),
		cmocka_unit_test(test_png_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
