/* Reports over record files: working-set size percentiles and heatmaps written as
 * SVG, PNG (libpng) or characters for a terminal. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <png.h>

#include "common/util.h"
#include "monitor/report.h"
#include "regions/region.h"

int mr_report_wss(const struct mr_rec *rec, uint32_t min_accesses, uint64_t **wss_bytes)
{
	uint64_t *w = calloc(rec->nr_snaps + 1, sizeof(*w));
	uint64_t per_aggr = mr_rec_samples_per_aggr(&rec->hdr);
	size_t i, k;

	if (!w)
		return mr_error(-ENOMEM, "report: out of memory");
	for (i = 0; i < rec->nr_snaps; i++)
		for (k = 0; k < rec->snaps[i].nr_regions; k++) {
			const struct mr_rec_region *r = &rec->snaps[i].regions[k];

			/* nr_accesses / nr_samples >= min_accesses / per_aggr: the threshold
			 * scaled to the snapshot's samples (a partial one holds fewer) */
			if ((uint64_t)r->nr_accesses * per_aggr >=
			    (uint64_t)min_accesses * rec->snaps[i].nr_samples)
				w[i] += r->end - r->start;
		}
	*wss_bytes = w;
	return 0;
}

uint64_t mr_report_percentile(const uint64_t *sorted, size_t n, unsigned pct)
{
	size_t rank;

	if (!n)
		return 0;
	if (!pct)
		return sorted[0];
	rank = ((size_t)pct * n + 99) / 100;	/* ceil(pct/100 * n) */
	if (rank > n)
		rank = n;
	return sorted[rank - 1];
}

#define span mr_heatmap_span

static int cmp_span(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* The union of every snapshot's regions: the mapped address axis. */
static int build_axis(const struct mr_rec *rec, struct span **out, size_t *nr)
{
	size_t total = 0, i, k, n = 0;
	struct span *s;

	for (i = 0; i < rec->nr_snaps; i++)
		total += rec->snaps[i].nr_regions;
	s = malloc((total + 1) * sizeof(*s));
	if (!s)
		return mr_error(-ENOMEM, "report: out of memory");
	for (i = 0; i < rec->nr_snaps; i++)
		for (k = 0; k < rec->snaps[i].nr_regions; k++) {
			s[n].start = rec->snaps[i].regions[k].start;
			s[n].end = rec->snaps[i].regions[k].end;
			n++;
		}
	qsort(s, n, sizeof(*s), cmp_span);
	k = 0;
	for (i = 0; i < n; i++) {
		if (k && s[i].start <= s[k - 1].end) {
			if (s[i].end > s[k - 1].end)
				s[k - 1].end = s[i].end;
		} else {
			s[k++] = s[i];
		}
	}
	for (i = 0; i < k; i++)
		s[i].base = i ? s[i - 1].base + (s[i - 1].end - s[i - 1].start) : 0;
	*out = s;
	*nr = k;
	return 0;
}

static const struct span *find_span(const struct span *s, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (addr < s[mid].start)
			hi = mid;
		else if (addr >= s[mid].end)
			lo = mid + 1;
		else
			return &s[mid];
	}
	return NULL;
}

int mr_heatmap_build(const struct mr_rec *rec, unsigned width, unsigned height,
		     struct mr_heatmap *hm)
{
	struct span *axis = NULL;
	size_t nax = 0, i, k;
	double *weight;
	uint64_t total;
	int err;

	memset(hm, 0, sizeof(*hm));
	if (!rec->nr_snaps)
		return mr_error(-ENODATA, "report: the record holds no snapshot");
	if (width > rec->nr_snaps)
		width = (unsigned)rec->nr_snaps;
	if (!width || !height)
		return mr_error(-EINVAL, "report: empty heatmap size");
	err = build_axis(rec, &axis, &nax);
	if (err)
		return err;
	total = nax ? axis[nax - 1].base + (axis[nax - 1].end - axis[nax - 1].start) : 0;
	if (!total) {
		free(axis);
		return mr_error(-ENODATA, "report: the record's snapshots hold no region");
	}
	hm->cells = calloc((size_t)width * height, sizeof(double));
	weight = calloc((size_t)width * height, sizeof(double));
	if (!hm->cells || !weight) {
		free(axis);
		free(weight);
		mr_heatmap_free(hm);
		return mr_error(-ENOMEM, "report: out of memory");
	}
	hm->width = width;
	hm->height = height;
	hm->mapped_bytes = total;
	hm->lo_addr = axis[0].start;
	hm->hi_addr = axis[nax - 1].end;
	hm->nr_gaps = nax ? (unsigned)(nax - 1) : 0;
	hm->duration_us = rec->snaps[rec->nr_snaps - 1].time_us;
	hm->phys = rec->hdr.kind == MR_MON_TARGET_PHYS;
	hm->snap_us = malloc(rec->nr_snaps * sizeof(*hm->snap_us));
	if (!hm->snap_us) {
		free(axis);
		free(weight);
		mr_heatmap_free(hm);
		return mr_error(-ENOMEM, "report: out of memory");
	}
	for (i = 0; i < rec->nr_snaps; i++)
		hm->snap_us[i] = rec->snaps[i].time_us;
	hm->nr_snaps = rec->nr_snaps;
	/* the colour scale's top: the most samples an aggregation interval holds
	 * (cells are shares of each snapshot's own samples) */
	hm->max_accesses = (double)mr_rec_samples_per_aggr(&rec->hdr);
	for (i = 0; i < rec->nr_snaps; i++) {
		unsigned col = (unsigned)(i * width / rec->nr_snaps);

		for (k = 0; k < rec->snaps[i].nr_regions; k++) {
			const struct mr_rec_region *r = &rec->snaps[i].regions[k];
			const struct span *sp = find_span(axis, nax, r->start);
			/* over the snapshot's own samples: the last one may be partial */
			double freq = mr_rec_access_share(&rec->snaps[i], r);
			uint64_t a, b;
			unsigned row;

			if (!sp)
				continue;
			a = sp->base + (r->start - sp->start);
			b = a + (r->end - r->start);
			for (row = (unsigned)((double)a * height / total); row < height; row++) {
				double rs = (double)row * total / height, re = (double)(row + 1) * total / height;
				double ov = fmin(re, (double)b) - fmax(rs, (double)a);
				size_t c = (size_t)row * width + col;

				if (rs >= (double)b)
					break;
				if (ov <= 0)
					continue;
				hm->cells[c] += freq * ov;
				weight[c] += ov;
			}
		}
	}
	for (i = 0; i < (size_t)width * height; i++)
		hm->cells[i] = weight[i] > 0 ? hm->cells[i] / weight[i] : 0;
	free(weight);
	hm->spans = axis;		/* the images' address axis */
	return 0;
}

void mr_heatmap_free(struct mr_heatmap *hm)
{
	free(hm->cells);
	free(hm->spans);
	free(hm->snap_us);
	free(hm->bands);
	hm->cells = NULL;
	hm->spans = NULL;
	hm->snap_us = NULL;
	hm->bands = NULL;
	hm->nr_bands = 0;
}

/* Keep the region map's ranges that meet [lo_addr, hi_addr]. */
int mr_heatmap_set_regions(struct mr_heatmap *hm, const struct mr_region_map *map)
{
	const struct mr_region *reg;
	size_t n = 0;
	unsigned q;

	free(hm->bands);
	hm->bands = NULL;
	hm->nr_bands = 0;
	mr_for_each_region(map, reg)
		n += reg->nr_ranges;
	hm->bands = calloc(n + 1, sizeof(*hm->bands));
	if (!hm->bands)
		return mr_error(-ENOMEM, "report: out of memory");
	mr_for_each_region(map, reg)
		for (q = 0; q < reg->nr_ranges; q++) {
			uint64_t s = reg->ranges[q].start, e = s + reg->ranges[q].size;

			if (s > hm->hi_addr || e < hm->lo_addr)
				continue;
			hm->bands[hm->nr_bands].start = s;
			hm->bands[hm->nr_bands].end = e;
			hm->bands[hm->nr_bands].region_id = reg->id;
			hm->nr_bands++;
		}
	return 0;
}

/* Black -> red -> yellow -> white: monotone in brightness, readable in grey. */
static void heat_rgb(double v, unsigned char rgb[3])
{
	double r = fmin(1, v * 3), g = fmin(1, fmax(0, v * 3 - 1)), b = fmax(0, v * 3 - 2);

	rgb[0] = (unsigned char)(r * 255 + 0.5);
	rgb[1] = (unsigned char)(g * 255 + 0.5);
	rgb[2] = (unsigned char)(b * 255 + 0.5);
}

/*
 * The images are drawn once, through a canvas, so that the SVG and the PNG cannot
 * differ in geometry: filled rectangles (cells, ticks, lines) and one-line texts
 * whose box is FONT_H pixels tall from @y down, baseline FONT_BASELINE below @y,
 * and FONT_ADV pixels a character
 * (the built-in font's cell; in the SVG a 10-pixel monospace font, whose glyphs
 * advance 0.6 em, about the same).
 */
#define FONT_W 5
#define FONT_H 8
#define FONT_BASELINE 7		/* rows above the baseline */
#define FONT_ADV 6

enum anchor { ANCHOR_START, ANCHOR_MIDDLE, ANCHOR_END };

struct canvas {
	/* @attrs: extra SVG attributes (class, data-*) a reader of the SVG can find
	 * things by, ignored in the PNG; may be NULL */
	void (*rect)(struct canvas *cv, int x, int y, int w, int h, const unsigned char rgb[3],
		     const char *attrs);
	void (*text)(struct canvas *cv, int x, int y, enum anchor anchor, const char *s,
		     const char *attrs);
	FILE *f;			/* SVG */
	unsigned char *px;		/* PNG: RGB, canvas_w x canvas_h */
	unsigned w, h;
};

static const unsigned char ink_rgb[3] = { 0x20, 0x20, 0x20 };
static const unsigned char axis_rgb[3] = { 0x60, 0x60, 0x60 };
/* blue, distinct from every colour of the heat ramp */
static const unsigned char edge_rgb[3] = { 0x20, 0x90, 0xff };

/* A 5x8 font for ' ' to '~' (7 rows above the baseline, 1 for descenders): rows
 * top first, bit 4 the leftmost column. */
static const unsigned char font5x8[95][FONT_H] = {
	{ 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00 },	/* ' ' */
	{ 0x04, 0x04, 0x04, 0x04, 0x04, 0x00, 0x04, 0x00 },	/* '!' */
	{ 0x0a, 0x0a, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00 },	/* '"' */
	{ 0x0a, 0x0a, 0x1f, 0x0a, 0x1f, 0x0a, 0x0a, 0x00 },	/* '#' */
	{ 0x04, 0x0f, 0x14, 0x0e, 0x05, 0x1e, 0x04, 0x00 },	/* '$' */
	{ 0x18, 0x19, 0x02, 0x04, 0x08, 0x13, 0x03, 0x00 },	/* '%' */
	{ 0x0c, 0x12, 0x14, 0x08, 0x15, 0x12, 0x0d, 0x00 },	/* '&' */
	{ 0x04, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00 },	/* '\'' */
	{ 0x02, 0x04, 0x08, 0x08, 0x08, 0x04, 0x02, 0x00 },	/* '(' */
	{ 0x08, 0x04, 0x02, 0x02, 0x02, 0x04, 0x08, 0x00 },	/* ')' */
	{ 0x00, 0x04, 0x15, 0x0e, 0x15, 0x04, 0x00, 0x00 },	/* '*' */
	{ 0x00, 0x04, 0x04, 0x1f, 0x04, 0x04, 0x00, 0x00 },	/* '+' */
	{ 0x00, 0x00, 0x00, 0x00, 0x00, 0x0c, 0x04, 0x08 },	/* ',' */
	{ 0x00, 0x00, 0x00, 0x1f, 0x00, 0x00, 0x00, 0x00 },	/* '-' */
	{ 0x00, 0x00, 0x00, 0x00, 0x00, 0x0c, 0x0c, 0x00 },	/* '.' */
	{ 0x00, 0x01, 0x02, 0x04, 0x08, 0x10, 0x00, 0x00 },	/* '/' */
	{ 0x0e, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0e, 0x00 },	/* '0' */
	{ 0x04, 0x0c, 0x04, 0x04, 0x04, 0x04, 0x0e, 0x00 },	/* '1' */
	{ 0x0e, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1f, 0x00 },	/* '2' */
	{ 0x1f, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0e, 0x00 },	/* '3' */
	{ 0x02, 0x06, 0x0a, 0x12, 0x1f, 0x02, 0x02, 0x00 },	/* '4' */
	{ 0x1f, 0x10, 0x1e, 0x01, 0x01, 0x11, 0x0e, 0x00 },	/* '5' */
	{ 0x06, 0x08, 0x10, 0x1e, 0x11, 0x11, 0x0e, 0x00 },	/* '6' */
	{ 0x1f, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08, 0x00 },	/* '7' */
	{ 0x0e, 0x11, 0x11, 0x0e, 0x11, 0x11, 0x0e, 0x00 },	/* '8' */
	{ 0x0e, 0x11, 0x11, 0x0f, 0x01, 0x02, 0x0c, 0x00 },	/* '9' */
	{ 0x00, 0x0c, 0x0c, 0x00, 0x0c, 0x0c, 0x00, 0x00 },	/* ':' */
	{ 0x00, 0x00, 0x0c, 0x0c, 0x00, 0x0c, 0x04, 0x08 },	/* ';' */
	{ 0x02, 0x04, 0x08, 0x10, 0x08, 0x04, 0x02, 0x00 },	/* '<' */
	{ 0x00, 0x00, 0x1f, 0x00, 0x1f, 0x00, 0x00, 0x00 },	/* '=' */
	{ 0x08, 0x04, 0x02, 0x01, 0x02, 0x04, 0x08, 0x00 },	/* '>' */
	{ 0x0e, 0x11, 0x01, 0x02, 0x04, 0x00, 0x04, 0x00 },	/* '?' */
	{ 0x0e, 0x11, 0x01, 0x0d, 0x15, 0x15, 0x0e, 0x00 },	/* '@' */
	{ 0x0e, 0x11, 0x11, 0x1f, 0x11, 0x11, 0x11, 0x00 },	/* 'A' */
	{ 0x1e, 0x11, 0x11, 0x1e, 0x11, 0x11, 0x1e, 0x00 },	/* 'B' */
	{ 0x0e, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0e, 0x00 },	/* 'C' */
	{ 0x1c, 0x12, 0x11, 0x11, 0x11, 0x12, 0x1c, 0x00 },	/* 'D' */
	{ 0x1f, 0x10, 0x10, 0x1e, 0x10, 0x10, 0x1f, 0x00 },	/* 'E' */
	{ 0x1f, 0x10, 0x10, 0x1e, 0x10, 0x10, 0x10, 0x00 },	/* 'F' */
	{ 0x0e, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0f, 0x00 },	/* 'G' */
	{ 0x11, 0x11, 0x11, 0x1f, 0x11, 0x11, 0x11, 0x00 },	/* 'H' */
	{ 0x0e, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0e, 0x00 },	/* 'I' */
	{ 0x07, 0x02, 0x02, 0x02, 0x02, 0x12, 0x0c, 0x00 },	/* 'J' */
	{ 0x11, 0x12, 0x14, 0x18, 0x14, 0x12, 0x11, 0x00 },	/* 'K' */
	{ 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1f, 0x00 },	/* 'L' */
	{ 0x11, 0x1b, 0x15, 0x15, 0x11, 0x11, 0x11, 0x00 },	/* 'M' */
	{ 0x11, 0x11, 0x19, 0x15, 0x13, 0x11, 0x11, 0x00 },	/* 'N' */
	{ 0x0e, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0e, 0x00 },	/* 'O' */
	{ 0x1e, 0x11, 0x11, 0x1e, 0x10, 0x10, 0x10, 0x00 },	/* 'P' */
	{ 0x0e, 0x11, 0x11, 0x11, 0x15, 0x12, 0x0d, 0x00 },	/* 'Q' */
	{ 0x1e, 0x11, 0x11, 0x1e, 0x14, 0x12, 0x11, 0x00 },	/* 'R' */
	{ 0x0f, 0x10, 0x10, 0x0e, 0x01, 0x01, 0x1e, 0x00 },	/* 'S' */
	{ 0x1f, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x00 },	/* 'T' */
	{ 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0e, 0x00 },	/* 'U' */
	{ 0x11, 0x11, 0x11, 0x11, 0x11, 0x0a, 0x04, 0x00 },	/* 'V' */
	{ 0x11, 0x11, 0x11, 0x15, 0x15, 0x15, 0x0a, 0x00 },	/* 'W' */
	{ 0x11, 0x11, 0x0a, 0x04, 0x0a, 0x11, 0x11, 0x00 },	/* 'X' */
	{ 0x11, 0x11, 0x0a, 0x04, 0x04, 0x04, 0x04, 0x00 },	/* 'Y' */
	{ 0x1f, 0x01, 0x02, 0x04, 0x08, 0x10, 0x1f, 0x00 },	/* 'Z' */
	{ 0x0e, 0x08, 0x08, 0x08, 0x08, 0x08, 0x0e, 0x00 },	/* '[' */
	{ 0x00, 0x10, 0x08, 0x04, 0x02, 0x01, 0x00, 0x00 },	/* '\\' */
	{ 0x0e, 0x02, 0x02, 0x02, 0x02, 0x02, 0x0e, 0x00 },	/* ']' */
	{ 0x04, 0x0a, 0x11, 0x00, 0x00, 0x00, 0x00, 0x00 },	/* '^' */
	{ 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x1f, 0x00 },	/* '_' */
	{ 0x08, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00 },	/* '`' */
	{ 0x00, 0x00, 0x0e, 0x01, 0x0f, 0x11, 0x0f, 0x00 },	/* 'a' */
	{ 0x10, 0x10, 0x16, 0x19, 0x11, 0x11, 0x1e, 0x00 },	/* 'b' */
	{ 0x00, 0x00, 0x0e, 0x10, 0x10, 0x11, 0x0e, 0x00 },	/* 'c' */
	{ 0x01, 0x01, 0x0d, 0x13, 0x11, 0x11, 0x0f, 0x00 },	/* 'd' */
	{ 0x00, 0x00, 0x0e, 0x11, 0x1f, 0x10, 0x0e, 0x00 },	/* 'e' */
	{ 0x06, 0x09, 0x08, 0x1c, 0x08, 0x08, 0x08, 0x00 },	/* 'f' */
	{ 0x00, 0x00, 0x0f, 0x11, 0x11, 0x0f, 0x01, 0x0e },	/* 'g' */
	{ 0x10, 0x10, 0x16, 0x19, 0x11, 0x11, 0x11, 0x00 },	/* 'h' */
	{ 0x04, 0x00, 0x0c, 0x04, 0x04, 0x04, 0x0e, 0x00 },	/* 'i' */
	{ 0x02, 0x00, 0x06, 0x02, 0x02, 0x02, 0x12, 0x0c },	/* 'j' */
	{ 0x10, 0x10, 0x12, 0x14, 0x18, 0x14, 0x12, 0x00 },	/* 'k' */
	{ 0x0c, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0e, 0x00 },	/* 'l' */
	{ 0x00, 0x00, 0x1a, 0x15, 0x15, 0x11, 0x11, 0x00 },	/* 'm' */
	{ 0x00, 0x00, 0x16, 0x19, 0x11, 0x11, 0x11, 0x00 },	/* 'n' */
	{ 0x00, 0x00, 0x0e, 0x11, 0x11, 0x11, 0x0e, 0x00 },	/* 'o' */
	{ 0x00, 0x00, 0x1e, 0x11, 0x11, 0x1e, 0x10, 0x10 },	/* 'p' */
	{ 0x00, 0x00, 0x0f, 0x11, 0x11, 0x0f, 0x01, 0x01 },	/* 'q' */
	{ 0x00, 0x00, 0x16, 0x19, 0x10, 0x10, 0x10, 0x00 },	/* 'r' */
	{ 0x00, 0x00, 0x0e, 0x10, 0x0e, 0x01, 0x1e, 0x00 },	/* 's' */
	{ 0x08, 0x08, 0x1c, 0x08, 0x08, 0x09, 0x06, 0x00 },	/* 't' */
	{ 0x00, 0x00, 0x11, 0x11, 0x11, 0x13, 0x0d, 0x00 },	/* 'u' */
	{ 0x00, 0x00, 0x11, 0x11, 0x11, 0x0a, 0x04, 0x00 },	/* 'v' */
	{ 0x00, 0x00, 0x11, 0x11, 0x15, 0x15, 0x0a, 0x00 },	/* 'w' */
	{ 0x00, 0x00, 0x11, 0x0a, 0x04, 0x0a, 0x11, 0x00 },	/* 'x' */
	{ 0x00, 0x00, 0x11, 0x11, 0x11, 0x0f, 0x01, 0x0e },	/* 'y' */
	{ 0x00, 0x00, 0x1f, 0x02, 0x04, 0x08, 0x1f, 0x00 },	/* 'z' */
	{ 0x02, 0x04, 0x04, 0x08, 0x04, 0x04, 0x02, 0x00 },	/* '{' */
	{ 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x00 },	/* '|' */
	{ 0x08, 0x04, 0x04, 0x02, 0x04, 0x04, 0x08, 0x00 },	/* '}' */
	{ 0x00, 0x00, 0x08, 0x15, 0x02, 0x00, 0x00, 0x00 },	/* '~' */

};

static void svg_escape(FILE *f, const char *s)
{
	for (; *s; s++)
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default:
			/* XML 1.0 allows no control characters but tab and newline */
			fputc((unsigned char)*s < 0x20 ? '?' : *s, f);
		}
}

static void svg_put_rect(struct canvas *cv, int x, int y, int w, int h, const unsigned char rgb[3],
		     const char *attrs)
{
	fprintf(cv->f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#%02x%02x%02x\"%s%s/>\n",
		x, y, w, h, rgb[0], rgb[1], rgb[2], attrs ? " " : "", attrs ? attrs : "");
}

static void svg_put_text(struct canvas *cv, int x, int y, enum anchor anchor, const char *s,
		     const char *attrs)
{
	static const char *const names[] = { "start", "middle", "end" };

	/* SVG places text by its baseline: the bottom of the glyph box */
	fprintf(cv->f, "<text x=\"%d\" y=\"%d\" text-anchor=\"%s\"%s%s>", x, y + FONT_BASELINE,
		names[anchor], attrs ? " " : "", attrs ? attrs : "");
	svg_escape(cv->f, s);
	fputs("</text>\n", cv->f);
}

static void px_rect(struct canvas *cv, int x, int y, int w, int h, const unsigned char rgb[3],
		     const char *attrs)
{
	int i, j;

	(void)attrs;
	for (j = y < 0 ? 0 : y; j < y + h && j < (int)cv->h; j++)
		for (i = x < 0 ? 0 : x; i < x + w && i < (int)cv->w; i++)
			memcpy(cv->px + ((size_t)j * cv->w + (size_t)i) * 3, rgb, 3);
}

static void px_text(struct canvas *cv, int x, int y, enum anchor anchor, const char *s,
		     const char *attrs)
{
	int len = (int)strlen(s), r, c;

	(void)attrs;
	if (anchor == ANCHOR_MIDDLE)
		x -= len * FONT_ADV / 2;
	else if (anchor == ANCHOR_END)
		x -= len * FONT_ADV;
	for (; *s; s++, x += FONT_ADV) {
		unsigned char ch = (unsigned char)*s;
		const unsigned char *g = font5x8[(ch < ' ' || ch > '~' ? '?' : ch) - ' '];

		for (r = 0; r < FONT_H; r++)
			for (c = 0; c < FONT_W; c++)
				if (g[r] & (0x10 >> c))
					px_rect(cv, x + c, y + r, 1, 1, ink_rgb, NULL);
	}
}

/* Pixels per cell: about 800 across in all, at least 3 (300 in all) per address row. */
static void cell_px(const struct mr_heatmap *hm, unsigned *cw, unsigned *ch)
{
	*cw = hm->width && hm->width < 400 ? 800 / hm->width : 2;
	*ch = hm->height && hm->height < 100 ? 300 / hm->height : 3;
}

static int hex_label(uint64_t addr, char *buf, size_t len)
{
	return snprintf(buf, len, "0x%" PRIx64, addr);
}

/* Seconds with as many decimals as the value needs, at most 3 (rounded to the
 * millisecond) or, with @fine, 6: "0.25", "12", "43.107". */
static void seconds_label(uint64_t us, bool fine, char *buf, size_t len)
{
	char *p;

	if (fine)
		snprintf(buf, len, "%" PRIu64 ".%06" PRIu64, us / 1000000, us % 1000000);
	else
		snprintf(buf, len, "%" PRIu64 ".%03" PRIu64, (us + 500) / 1000000,
			 (us + 500) / 1000 % 1000);
	p = buf + strlen(buf);
	while (p[-1] == '0')
		*--p = '\0';
	if (p[-1] == '.')
		p[-1] = '\0';
}

/* The caption above the address labels. */
static const char *addr_caption(const struct mr_heatmap *hm)
{
	return hm->phys ? "physical address" : "virtual address";
}

void mr_heatmap_layout(const struct mr_heatmap *hm, struct mr_heatmap_layout *lo)
{
	char buf[32];
	unsigned label_w, right;

	memset(lo, 0, sizeof(*lo));
	cell_px(hm, &lo->cell_w, &lo->cell_h);
	/* room for the widest address (the highest) and a 4-pixel tick, or the caption */
	label_w = (unsigned)hex_label(hm->hi_addr, buf, sizeof(buf)) * FONT_ADV + 8;
	if (label_w < strlen(addr_caption(hm)) * FONT_ADV)
		label_w = (unsigned)strlen(addr_caption(hm)) * FONT_ADV;
	lo->plot_x = 6 + label_w;
	lo->plot_y = 44;		/* title, subtitle, axis captions */
	lo->plot_w = hm->width * lo->cell_w;
	lo->plot_h = hm->height * lo->cell_h;
	/* the last time label's right half; region ids and their caption */
	right = 40;
	if (hm->nr_bands)
		right = 10 + (unsigned)strlen("region") * FONT_ADV + 10;
	lo->canvas_w = lo->plot_x + lo->plot_w + right;
	/* time ticks and labels, the time caption, the colour scale */
	lo->canvas_h = lo->plot_y + lo->plot_h + 52;
}

/* Offset of @addr on the collapsed axis, or -1 when no mapped range holds it (its
 * end included). */
static double axis_offset(const struct mr_heatmap *hm, uint64_t addr)
{
	size_t i;

	for (i = 0; i <= hm->nr_gaps; i++)
		if (addr >= hm->spans[i].start && addr <= hm->spans[i].end)
			return (double)(hm->spans[i].base + (addr - hm->spans[i].start));
	return -1;
}

static int addr_y(const struct mr_heatmap_layout *lo, const struct mr_heatmap *hm, double off)
{
	return (int)lo->plot_y + (int)floor(off * lo->plot_h / (double)hm->mapped_bytes + 0.5);
}

/* x of the centre of the column holding snapshot @i. */
static double snap_x(const struct mr_heatmap_layout *lo, const struct mr_heatmap *hm, size_t i)
{
	size_t col = i * hm->width / hm->nr_snaps;

	return lo->plot_x + (col + 0.5) * lo->cell_w;
}

/* x of time @us between the first and the last snapshot: linear between the two
 * snapshots around it, so that a tick is in the column its time was recorded in. */
static double time_x(const struct mr_heatmap_layout *lo, const struct mr_heatmap *hm, uint64_t us)
{
	size_t i = 1;

	if (hm->nr_snaps < 2)
		return snap_x(lo, hm, 0);
	while (i < hm->nr_snaps - 1 && hm->snap_us[i] < us)
		i++;
	if (hm->snap_us[i] <= hm->snap_us[i - 1])
		return snap_x(lo, hm, i);
	return snap_x(lo, hm, i - 1) + (snap_x(lo, hm, i) - snap_x(lo, hm, i - 1)) *
		(double)(us - hm->snap_us[i - 1]) / (double)(hm->snap_us[i] - hm->snap_us[i - 1]);
}

/* 1, 2 or 5 times a power of ten, at least @raw. */
static uint64_t nice_step(double raw)
{
	uint64_t p = 1;

	while (p * 10 <= raw)
		p *= 10;
	if (p >= raw)
		return p;
	return 2 * p >= raw ? 2 * p : 5 * p >= raw ? 5 * p : 10 * p;
}

/* The time axis: ticks and labels at the first and the last snapshot, and at round
 * times between them where a label fits. */
static void draw_time_axis(struct canvas *cv, const struct mr_heatmap_layout *lo,
			   const struct mr_heatmap *hm)
{
	uint64_t first = hm->snap_us[0], last = hm->snap_us[hm->nr_snaps - 1], step, t;
	int y = (int)(lo->plot_y + lo->plot_h), last_x, prev_end;
	char buf[32], first_s[32], last_s[32];
	/* milliseconds tell snapshots apart unless the record is shorter than 0.1 s */
	bool fine = last - first < 100000;

	seconds_label(first, fine, first_s, sizeof(first_s));
	seconds_label(last, fine, last_s, sizeof(last_s));
	last_x = (int)time_x(lo, hm, last);
	/* where the previous label ends; a label needs 2 characters of space around */
	prev_end = (int)time_x(lo, hm, first) + (int)strlen(first_s) * FONT_ADV / 2;
	cv->rect(cv, (int)time_x(lo, hm, first), y, 1, 4, axis_rgb, NULL);
	cv->text(cv, (int)time_x(lo, hm, first), y + 6, ANCHOR_MIDDLE, first_s, "class=\"time-label\"");
	step = nice_step((double)(last - first) / (lo->plot_w / 100.0 + 1));
	for (t = (first / step + 1) * step; step && last > first && t < last; t += step) {
		int x = (int)time_x(lo, hm, t), half;

		seconds_label(t, fine, buf, sizeof(buf));
		half = (int)strlen(buf) * FONT_ADV / 2;
		/* two characters apart, and not nearer the last tick than half a step */
		if (x - half < prev_end + 2 * FONT_ADV ||
		    x + half > last_x - (int)strlen(last_s) * FONT_ADV / 2 - 2 * FONT_ADV ||
		    (double)(last - t) <= step / 2.0)
			continue;
		cv->rect(cv, x, y, 1, 4, axis_rgb, NULL);
		cv->text(cv, x, y + 6, ANCHOR_MIDDLE, buf, "class=\"time-label\"");
		prev_end = x + half;
	}
	if (hm->nr_snaps > 1) {
		cv->rect(cv, last_x, y, 1, 4, axis_rgb, NULL);
		cv->text(cv, last_x, y + 6, ANCHOR_MIDDLE, last_s, "class=\"time-label\"");
	}
	cv->text(cv, (int)(lo->plot_x + lo->plot_w / 2), y + 18, ANCHOR_MIDDLE,
		 "time since the record's start (s)", NULL);
}

/* The address axis: the lowest address at the top edge, the end of the highest
 * range at the bottom edge, and round addresses between them where a label fits. */
static void addr_tick(struct canvas *cv, const struct mr_heatmap_layout *lo, int y, uint64_t addr)
{
	char buf[32];

	hex_label(addr, buf, sizeof(buf));
	cv->rect(cv, (int)lo->plot_x - 4, y, 4, 1, axis_rgb, NULL);
	cv->text(cv, (int)lo->plot_x - 6, y - FONT_BASELINE / 2, ANCHOR_END, buf, "class=\"addr-label\"");
}

static void draw_addr_axis(struct canvas *cv, const struct mr_heatmap_layout *lo,
			   const struct mr_heatmap *hm)
{
	unsigned nr_ticks = lo->plot_h / 50 + 1, k;
	uint64_t grain = 1;
	int top = (int)lo->plot_y, bottom = (int)(lo->plot_y + lo->plot_h), prev = top;

	/* round to a power of two near half a tick's share of the axis */
	while (grain * 2 <= hm->mapped_bytes / nr_ticks / 2)
		grain *= 2;
	addr_tick(cv, lo, top, hm->lo_addr);
	for (k = 1; k < nr_ticks; k++) {
		uint64_t off = hm->mapped_bytes / nr_ticks * k, addr;
		const struct mr_heatmap_span *sp = hm->spans;
		int y;

		while (sp < hm->spans + hm->nr_gaps && off >= sp->base + (sp->end - sp->start))
			sp++;
		addr = (sp->start + (off - sp->base)) / grain * grain;
		if (addr < sp->start)
			addr = sp->start;
		y = addr_y(lo, hm, axis_offset(hm, addr));
		if (y - prev < 2 * FONT_H || bottom - y < 2 * FONT_H)
			continue;
		addr_tick(cv, lo, y, addr);
		prev = y;
	}
	addr_tick(cv, lo, bottom, hm->hi_addr);
	cv->text(cv, 6, top - 14, ANCHOR_START, addr_caption(hm), NULL);
}

/* Where an unmapped gap was collapsed: "=" right of the plot (the address axis
 * jumps there). */
static void draw_gaps(struct canvas *cv, const struct mr_heatmap_layout *lo,
		      const struct mr_heatmap *hm)
{
	int x = (int)(lo->plot_x + lo->plot_w) + 2;
	unsigned i;

	for (i = 1; i <= hm->nr_gaps; i++) {
		int y = addr_y(lo, hm, (double)hm->spans[i].base);

		cv->rect(cv, x, y - 1, 5, 1, axis_rgb, "class=\"gap\"");
		cv->rect(cv, x, y + 1, 5, 1, axis_rgb, "class=\"gap\"");
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Power-region edges across the plot (each address once: a region's end is often the
 * next one's start), each band's region id on the right. */
static void draw_regions(struct canvas *cv, const struct mr_heatmap_layout *lo,
			 const struct mr_heatmap *hm)
{
	int right = (int)(lo->plot_x + lo->plot_w);
	uint64_t *edges = malloc(2 * hm->nr_bands * sizeof(*edges));
	size_t b, i;

	for (b = 0; edges && b < hm->nr_bands; b++) {
		edges[2 * b] = hm->bands[b].start;
		edges[2 * b + 1] = hm->bands[b].end;
	}
	if (edges)
		qsort(edges, 2 * hm->nr_bands, sizeof(*edges), cmp_u64);
	for (i = 0; edges && i < 2 * hm->nr_bands; i++) {
		double off = axis_offset(hm, edges[i]);
		char attrs[64];

		if (off < 0 || (i && edges[i] == edges[i - 1]))
			continue;
		snprintf(attrs, sizeof(attrs), "class=\"region-edge\" data-addr=\"0x%" PRIx64 "\"",
			 edges[i]);
		cv->rect(cv, (int)lo->plot_x, addr_y(lo, hm, off), (int)lo->plot_w + 4, 1,
			 edge_rgb, attrs);
	}
	free(edges);
	for (b = 0; b < hm->nr_bands; b++) {
		const struct mr_heatmap_band *bd = &hm->bands[b];

		/* the id in the middle of each visible piece tall enough for it */
		for (i = 0; i <= hm->nr_gaps; i++) {
			const struct mr_heatmap_span *sp = &hm->spans[i];
			uint64_t s = bd->start > sp->start ? bd->start : sp->start;
			uint64_t e = bd->end < sp->end ? bd->end : sp->end;
			int y0, y1;
			char id[16];

			if (s >= e)
				continue;
			y0 = addr_y(lo, hm, axis_offset(hm, s));
			y1 = addr_y(lo, hm, axis_offset(hm, e));
			if (y1 - y0 < FONT_H + 2)
				continue;
			snprintf(id, sizeof(id), "%u", bd->region_id);
			cv->text(cv, right + 8, (y0 + y1) / 2 - FONT_BASELINE / 2, ANCHOR_START, id,
				 "class=\"region-id\"");
		}
	}
	cv->text(cv, right + 8, (int)lo->plot_y - 14, ANCHOR_START, "region", NULL);
}

/* The colour scale under the time axis: accesses per aggregation, 0 to the most. */
static void draw_scale(struct canvas *cv, const struct mr_heatmap_layout *lo,
		       const struct mr_heatmap *hm)
{
	static const char caption[] = "accesses per aggregation:";
	int y = (int)(lo->plot_y + lo->plot_h) + 36, x = (int)lo->plot_x, i;
	const int bar_w = 200;
	char buf[64];

	cv->text(cv, x, y, ANCHOR_START, caption, NULL);
	x += (int)(sizeof(caption) + 2) * FONT_ADV;
	cv->text(cv, x - 4, y, ANCHOR_END, "0", NULL);
	for (i = 0; i < bar_w; i++) {
		unsigned char c[3];

		heat_rgb((double)i / (bar_w - 1), c);
		cv->rect(cv, x + i, y, 1, FONT_BASELINE, c, "class=\"scale\"");
	}
	snprintf(buf, sizeof(buf), "%.0f (every sample)", hm->max_accesses);
	cv->text(cv, x + bar_w + 4, y, ANCHOR_START, buf, NULL);
}

static void draw_heatmap(struct canvas *cv, const struct mr_heatmap_layout *lo,
			 const struct mr_heatmap *hm, const char *title)
{
	static const unsigned char white[3] = { 255, 255, 255 };
	char line[512], sz[32];
	size_t max_chars = (lo->canvas_w - 12) / FONT_ADV;
	unsigned x, y;

	cv->rect(cv, 0, 0, (int)lo->canvas_w, (int)lo->canvas_h, white, NULL);
	/* the title, cut to the canvas */
	snprintf(line, sizeof(line), "%s", title);
	if (max_chars < sizeof(line) && strlen(line) > max_chars && max_chars > 3)
		strcpy(line + max_chars - 3, "...");
	cv->text(cv, 6, 6, ANCHOR_START, line, "class=\"title\"");
	snprintf(line, sizeof(line), "access frequency, time across, address down; %s mapped, "
		 "%u gap%s collapsed%s%s", mr_format_size(hm->mapped_bytes, sz, sizeof(sz)), hm->nr_gaps,
		 hm->nr_gaps == 1 ? "" : "s", hm->nr_gaps ? " (= on the right)" : "",
		 hm->nr_bands ? "; blue lines: power-region edges" : "");
	cv->text(cv, 6, 18, ANCHOR_START, line, NULL);
	/* a frame, so that white (hot) cells at the plot's edge stay apart from the page */
	cv->rect(cv, (int)lo->plot_x - 1, (int)lo->plot_y - 1, (int)lo->plot_w + 2,
		 (int)lo->plot_h + 2, axis_rgb, NULL);
	for (y = 0; y < hm->height; y++)
		for (x = 0; x < hm->width; x++) {
			unsigned char c[3];

			heat_rgb(hm->cells[(size_t)y * hm->width + x], c);
			cv->rect(cv, (int)(lo->plot_x + x * lo->cell_w), (int)(lo->plot_y + y * lo->cell_h),
				 (int)lo->cell_w, (int)lo->cell_h, c, NULL);
		}
	draw_addr_axis(cv, lo, hm);
	draw_gaps(cv, lo, hm);
	draw_time_axis(cv, lo, hm);
	if (hm->nr_bands)
		draw_regions(cv, lo, hm);
	draw_scale(cv, lo, hm);
}

int mr_heatmap_write_svg(const struct mr_heatmap *hm, const char *title, FILE *f)
{
	struct mr_heatmap_layout lo;
	struct canvas cv = { .rect = svg_put_rect, .text = svg_put_text, .f = f };

	mr_heatmap_layout(hm, &lo);
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%u\" height=\"%u\" "
		"font-family=\"monospace\" font-size=\"10\" fill=\"#202020\">\n<title>",
		lo.canvas_w, lo.canvas_h);
	svg_escape(f, title);
	fputs("</title>\n", f);
	draw_heatmap(&cv, &lo, hm, title);
	fputs("</svg>\n", f);
	return ferror(f) ? mr_error(-EIO, "report: write error") : 0;
}

int mr_heatmap_write_png(const struct mr_heatmap *hm, const char *title, FILE *f)
{
	struct mr_heatmap_layout lo;
	struct canvas cv = { .rect = px_rect, .text = px_text };
	png_image img;
	int err = 0;

	mr_heatmap_layout(hm, &lo);
	if (!lo.plot_w || !lo.plot_h || lo.canvas_w > 20000 || lo.canvas_h > 20000)
		return mr_error(-EINVAL, "report: PNG of %ux%u pixels refused", lo.canvas_w, lo.canvas_h);
	cv.w = lo.canvas_w;
	cv.h = lo.canvas_h;
	cv.px = malloc((size_t)cv.w * cv.h * 3);
	if (!cv.px)
		return mr_error(-ENOMEM, "report: out of memory");
	draw_heatmap(&cv, &lo, hm, title);
	memset(&img, 0, sizeof(img));
	img.version = PNG_IMAGE_VERSION;
	img.width = cv.w;
	img.height = cv.h;
	img.format = PNG_FORMAT_RGB;
	if (!png_image_write_to_stdio(&img, f, 0, cv.px, (png_int_32)cv.w * 3, NULL))
		err = mr_error(-EIO, "report: PNG: %s", img.message);
	png_image_free(&img);
	free(cv.px);
	if (!err && ferror(f))
		err = mr_error(-EIO, "report: write error");
	return err;
}

int mr_heatmap_write_term(const struct mr_heatmap *hm, FILE *f)
{
	static const char ramp[] = " .:-=+*#%@";
	unsigned x, y;

	for (y = 0; y < hm->height; y++) {
		fputc('|', f);
		for (x = 0; x < hm->width; x++) {
			double v = hm->cells[(size_t)y * hm->width + x];
			unsigned i = (unsigned)(v * (sizeof(ramp) - 2) + 0.5);

			/* anything accessed at all is at least a dot */
			if (v > 0 && i == 0)
				i = 1;
			fputc(ramp[i], f);
		}
		fputs("|\n", f);
	}
	return ferror(f) ? mr_error(-EIO, "report: write error") : 0;
}
