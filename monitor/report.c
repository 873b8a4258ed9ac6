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

struct span {
	uint64_t start, end, base;	/* base: offset on the collapsed axis */
};

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
	free(axis);
	return 0;
}

void mr_heatmap_free(struct mr_heatmap *hm)
{
	free(hm->cells);
	hm->cells = NULL;
}

/* Black -> red -> yellow -> white: monotone in brightness, readable in grey. */
static void heat_rgb(double v, unsigned char rgb[3])
{
	double r = fmin(1, v * 3), g = fmin(1, fmax(0, v * 3 - 1)), b = fmax(0, v * 3 - 2);

	rgb[0] = (unsigned char)(r * 255 + 0.5);
	rgb[1] = (unsigned char)(g * 255 + 0.5);
	rgb[2] = (unsigned char)(b * 255 + 0.5);
}

/* Pixels per cell, the same in SVG and PNG: about 800 wide, 3 per address row. */
static void cell_px(const struct mr_heatmap *hm, unsigned *cw, unsigned *ch)
{
	*cw = hm->width && hm->width < 400 ? 800 / hm->width : 2;
	*ch = 3;
}

int mr_heatmap_write_svg(const struct mr_heatmap *hm, const char *title, FILE *f)
{
	const unsigned left = 90, top = 30;
	unsigned cw, ch, x, y, W, H;
	char lo[32], sz[32];

	cell_px(hm, &cw, &ch);
	W = left + hm->width * cw + 10;
	H = top + hm->height * ch + 40;
	mr_format_size(hm->mapped_bytes, sz, sizeof(sz));
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%u\" height=\"%u\" "
		"font-family=\"monospace\" font-size=\"11\">\n"
		"<title>%s</title>\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
		"<text x=\"%u\" y=\"18\">%s: access frequency, time across, address down "
		"(%s mapped, %u gaps collapsed)</text>\n", W, H, title, left, title, sz, hm->nr_gaps);
	for (y = 0; y < hm->height; y++)
		for (x = 0; x < hm->width; x++) {
			unsigned char c[3];

			heat_rgb(hm->cells[(size_t)y * hm->width + x], c);
			fprintf(f, "<rect x=\"%u\" y=\"%u\" width=\"%u\" height=\"%u\" "
				"fill=\"#%02x%02x%02x\"/>\n", left + x * cw, top + y * ch, cw, ch,
				c[0], c[1], c[2]);
		}
	snprintf(lo, sizeof(lo), "0x%" PRIx64, hm->lo_addr);
	fprintf(f, "<text x=\"2\" y=\"%u\">%s</text>\n", top + 10, lo);
	fprintf(f, "<text x=\"2\" y=\"%u\">0x%" PRIx64 "</text>\n", top + hm->height * ch, hm->hi_addr);
	fprintf(f, "<text x=\"%u\" y=\"%u\">0 s</text>\n", left, top + hm->height * ch + 16);
	fprintf(f, "<text x=\"%u\" y=\"%u\" text-anchor=\"end\">%.1f s</text>\n",
		left + hm->width * cw, top + hm->height * ch + 16, hm->duration_us / 1e6);
	fputs("</svg>\n", f);
	return ferror(f) ? mr_error(-EIO, "report: write error") : 0;
}

int mr_heatmap_write_png(const struct mr_heatmap *hm, FILE *f)
{
	unsigned cw, ch, W, H, x, y;
	png_image img;
	unsigned char *raw;
	int err = 0;

	cell_px(hm, &cw, &ch);
	W = hm->width * cw;
	H = hm->height * ch;
	if (!W || !H || W > 20000 || H > 20000)
		return mr_error(-EINVAL, "report: PNG of %ux%u pixels refused", W, H);
	raw = malloc((size_t)W * H * 3);
	if (!raw)
		return mr_error(-ENOMEM, "report: out of memory");
	for (y = 0; y < H; y++)
		for (x = 0; x < W; x++)
			heat_rgb(hm->cells[(size_t)(y / ch) * hm->width + x / cw],
				 raw + ((size_t)y * W + x) * 3);
	memset(&img, 0, sizeof(img));
	img.version = PNG_IMAGE_VERSION;
	img.width = W;
	img.height = H;
	img.format = PNG_FORMAT_RGB;
	if (!png_image_write_to_stdio(&img, f, 0, raw, (png_int_32)W * 3, NULL))
		err = mr_error(-EIO, "report: PNG: %s", img.message);
	png_image_free(&img);
	free(raw);
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
