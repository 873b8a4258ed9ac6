/* A process record against its live process: is the process running now the one
 * recorded, and on which power regions do its recorded virtual addresses lie. */
#ifndef MR_MONITOR_REC_PLACE_H
#define MR_MONITOR_REC_PLACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "monitor/record.h"
#include "regions/region.h"

/* "rec-place.c" */

/*
 * 0 when the running process @rec->hdr.pid is the one @rec recorded, not a later one
 * that reuses its pid; -ESRCH (mr_error naming the pid) when it is gone or another
 * process, or -errno. Version 2 records carry the process's start time
 * (mr_proc_same). Without one, a process that started after the record did cannot
 * be the recorded one (btime from /proc/stat plus the start ticks, against the
 * record's start: whole seconds on both sides, two seconds of slack); a record
 * without a start time either is not checked beyond the pid being there.
 */
int mr_rec_same_process(const struct mr_rec *rec);

/* struct mr_rec_place_run - virtual pages [@start, @end) of the live process whose
 * frames all lie in the map's region @idx (an index into map->regions), or in none:
 * @idx is map->nr_regions. */
struct mr_rec_place_run {
	uint64_t start, end;
	unsigned idx;
};

/*
 * struct mr_rec_placement - where the live process's present pages lie, between the
 * record's lowest and highest address, as runs sorted by address.
 */
struct mr_rec_placement {
	const struct mr_region_map *map;
	uint64_t page_bytes;
	struct mr_rec_place_run *runs;
	size_t nr_runs, cap_runs;
	int pid;
	bool hidden;			/* a present page read PFN 0 */
};

/*
 * Place @rec's process's pages on @map's regions: one walk of its pagemap over its
 * mappings (mr_pagemap_walk: chunked, PROT_NONE and unmapped holes skipped), so a
 * record whose regions span a huge reservation costs what the process has mapped,
 * once, however many snapshots ask. -EPERM when the kernel hides frame numbers
 * (readers without CAP_SYS_ADMIN): every region would look idle. 0 or -errno,
 * mr_error set; @pl is to be freed either way.
 */
int mr_rec_place(const struct mr_rec *rec, const struct mr_region_map *map,
		 struct mr_rec_placement *pl);
/* @fn(region, bytes, @arg) for each power region holding present pages of virtual
 * [@start, @end): the bytes of them there, once per run (a region may come twice). */
typedef void (*mr_rec_place_fn)(const struct mr_region *r, uint64_t bytes, void *arg);
void mr_rec_place_range(const struct mr_rec_placement *pl, uint64_t start, uint64_t end,
			mr_rec_place_fn fn, void *arg);
void mr_rec_place_free(struct mr_rec_placement *pl);

#endif
