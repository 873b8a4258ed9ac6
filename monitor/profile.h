/* Site temperature profiles: join an access record of a process running under
 * libmemreg.so with its site map (MEMREG_SITE_MAP) and classify each allocation
 * site hot or cold, for MEMREG_PROFILE. Formats: docs/allocator.md. */
#ifndef MR_MONITOR_PROFILE_H
#define MR_MONITOR_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "monitor/record.h"

#define MR_PROF_DEFAULT_HOT_THRESHOLD 0.5

struct mr_prof_site {
	uint32_t id;			/* the site map's id */
	char build_id[130];		/* hex, or "" when the module had none */
	uint64_t offset;
	char *module;
	uint64_t bytes;			/* live bytes over all pages */
	uint64_t pages;			/* pages holding some of them */
	uint64_t accessed_pages;	/* of those, pages accessed at least once */
	double share_score;		/* plain byte-weighted attribution (first step) */
	double score;			/* refined attribution: what decides hot/cold */
	bool hot;
};

struct mr_prof_part {
	uint32_t site;			/* index into sites[] */
	uint32_t bytes;
};

struct mr_prof_page {
	uint64_t addr;
	size_t first;			/* parts[first .. first + nr) */
	size_t nr;
	double rate;			/* fraction of sampling intervals found accessed */
};

struct mr_site_map {
	uint64_t page_size;
	int32_t pid;
	struct mr_prof_site *sites;
	size_t nr_sites;
	struct mr_prof_page *pages;	/* sorted by address */
	size_t nr_pages;
	struct mr_prof_part *parts;
	size_t nr_parts;
};

/* "profile.c" */
/* Parse a site map (version 1); @name in the one-line errors ("name:line: ..."). */
int mr_prof_map_parse(const char *text, size_t len, const char *name, struct mr_site_map *m);
int mr_prof_map_load(const char *path, struct mr_site_map *m);
void mr_prof_map_free(struct mr_site_map *m);
/* Each page's access rate: nr_accesses / (aggregation / sampling) of the record region
 * holding the page, averaged over all snapshots (0 where no region holds it). */
int mr_prof_page_rates(const struct mr_rec *rec, struct mr_site_map *m);
/* Attribute the pages' accesses to their sites and classify (rule in
 * docs/monitor.md): score >= @hot_threshold is hot, anything else cold. */
void mr_prof_attribute(struct mr_site_map *m, double hot_threshold);
/* The MEMREG_PROFILE text (version 1); sites without a build-id are comments. */
int mr_prof_write(FILE *f, const struct mr_site_map *m, double hot_threshold,
		  const char *comment);

#endif
