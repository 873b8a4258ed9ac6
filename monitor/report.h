/* Reports over record files: working-set sizes, heatmaps (SVG, PNG, terminal). */
#ifndef MR_MONITOR_REPORT_H
#define MR_MONITOR_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "monitor/record.h"

/* "report.c" */
/* Bytes of each snapshot's regions accessed in at least @min_accesses samples per
 * whole aggregation interval (one value per snapshot, malloc'd). A snapshot of fewer
 * samples (the last, partial one) scales the threshold: a region counts when
 * nr_accesses / nr_samples >= min_accesses / (aggr_us / sample_us). */
int mr_report_wss(const struct mr_rec *rec, uint32_t min_accesses, uint64_t **wss_bytes);
/* Nearest-rank percentile @pct (0..100) of @n sorted values. */
uint64_t mr_report_percentile(const uint64_t *sorted, size_t n, unsigned pct);

/* A mapped address range and where it starts on the collapsed address axis. */
struct mr_heatmap_span {
	uint64_t start, end;		/* [start, end), bytes */
	uint64_t base;			/* offset of @start on the collapsed axis */
};

/* One range of a memory power region that meets the heatmap's address range
 * (the region map's range, not clipped): a physical heatmap marks its edges. */
struct mr_heatmap_band {
	uint64_t start, end;		/* [start, end), physical bytes */
	unsigned region_id;
};

/* A heatmap grid: @width columns of time by @height rows of address, with the gaps
 * between mapped ranges collapsed; cells hold access frequency in [0, 1] (nr_accesses
 * over the snapshot's nr_samples, so a partial last snapshot is not dimmer),
 * size-weighted. Snapshot i is in column i * width / nr_snaps. */
struct mr_heatmap {
	unsigned width, height;
	double *cells;			/* row-major, row 0 = lowest address */
	uint64_t mapped_bytes;		/* the collapsed address axis */
	uint64_t lo_addr, hi_addr;	/* lowest address seen, end of the highest range */
	uint64_t duration_us;
	unsigned nr_gaps;		/* unmapped gaps collapsed */
	bool phys;			/* physical addresses (else one process's virtual) */
	double max_accesses;		/* nr_accesses a cell value of 1 stands for */
	struct mr_heatmap_span *spans;	/* the mapped ranges, sorted: nr_gaps + 1 */
	uint64_t *snap_us;		/* each snapshot's time since the record's start */
	size_t nr_snaps;
	struct mr_heatmap_band *bands;	/* mr_heatmap_set_regions(), else NULL */
	size_t nr_bands;
};

/* Where the SVG and the PNG put things, in pixels (the same for both): the canvas,
 * the plot's top-left corner and size, and a cell's size. */
struct mr_heatmap_layout {
	unsigned canvas_w, canvas_h;
	unsigned plot_x, plot_y, plot_w, plot_h;
	unsigned cell_w, cell_h;
};

struct mr_region_map;

int mr_heatmap_build(const struct mr_rec *rec, unsigned width, unsigned height,
		     struct mr_heatmap *hm);
void mr_heatmap_free(struct mr_heatmap *hm);
/* Keep the ranges of @map's regions that meet [lo_addr, hi_addr] as bands, so that
 * the images draw a line at each region edge inside the mapped ranges (their ends
 * included) and the region's id beside each band tall enough for it. */
int mr_heatmap_set_regions(struct mr_heatmap *hm, const struct mr_region_map *map);
void mr_heatmap_layout(const struct mr_heatmap *hm, struct mr_heatmap_layout *lo);
/* The images: @title on top (the caller's: target, backend, command), then the plot
 * with the address axis on the left (hex: lowest address at the top edge, end of
 * the highest range at the bottom edge), the time axis below (seconds since the
 * record's start, to the millisecond: the first and the last snapshot's time at
 * their columns' centres) and a colour scale (accesses per aggregation). Cells are about 800
 * pixels across in all and at least 3 pixels (300 in all) down. The SVG's labels
 * are <text> elements with the classes "time-label", "addr-label" and "region-id";
 * region edges are <rect class="region-edge" data-addr="0x..."> lines. */
int mr_heatmap_write_svg(const struct mr_heatmap *hm, const char *title, FILE *f);
/* PNG (RGB, through libpng), the SVG's geometry, its text in a built-in 5x7 font. */
int mr_heatmap_write_png(const struct mr_heatmap *hm, const char *title, FILE *f);
/* Characters " .:-=+*#%@", one a cell, address down, time across. */
int mr_heatmap_write_term(const struct mr_heatmap *hm, FILE *f);

#endif
