/* Reports over record files: working-set sizes, heatmaps (SVG, PNG, terminal). */
#ifndef MR_MONITOR_REPORT_H
#define MR_MONITOR_REPORT_H

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

/* A heatmap grid: @width columns of time by @height rows of address, with the gaps
 * between mapped ranges collapsed; cells hold access frequency in [0, 1] (nr_accesses
 * over the snapshot's nr_samples, so a partial last snapshot is not dimmer), size-weighted. */
struct mr_heatmap {
	unsigned width, height;
	double *cells;			/* row-major, row 0 = lowest address */
	uint64_t mapped_bytes;		/* the collapsed address axis */
	uint64_t lo_addr, hi_addr;	/* lowest and highest address seen */
	uint64_t duration_us;
	unsigned nr_gaps;		/* unmapped gaps collapsed */
};
int mr_heatmap_build(const struct mr_rec *rec, unsigned width, unsigned height,
		     struct mr_heatmap *hm);
void mr_heatmap_free(struct mr_heatmap *hm);
int mr_heatmap_write_svg(const struct mr_heatmap *hm, const char *title, FILE *f);
/* PNG (RGB, through libpng), cells the size of the SVG's: about 800 pixels across,
 * 3 per address row; row 0 (lowest address) at the top. */
int mr_heatmap_write_png(const struct mr_heatmap *hm, FILE *f);
/* Characters " .:-=+*#%@", one a cell, address down, time across. */
int mr_heatmap_write_term(const struct mr_heatmap *hm, FILE *f);

#endif
