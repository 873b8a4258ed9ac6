/* Residency from an access record (monitor/record.h): per power region, the
 * aggregation intervals in which no sampled access landed in it. Physical records
 * map directly; a process record only through that process's live page table. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "monitor/rec-place.h"
#include "monitor/record.h"
#include "power/model.h"

/* Which power regions of @map a snapshot's accessed regions touched. */
struct snap_hits {
	const struct mr_region_map *map;
	bool *hit;
};

/* True when [start, end) overlaps one of the region's physical ranges. */
static bool overlaps(const struct mr_region *r, uint64_t start, uint64_t end)
{
	unsigned i;

	for (i = 0; i < r->nr_ranges; i++)
		if (start < r->ranges[i].start + r->ranges[i].size && r->ranges[i].start < end)
			return true;
	return false;
}

/* What a process record needs to be placed on power regions. */
static const char *const record_physical =
	"record physical memory instead (memregctl record --phys, DAMON paddr), or "
	"give residency from physical samples (perf with physical addresses) with "
	"--residency";

/* mr_rec_place_range's callback: the region holds a present page of an accessed
 * monitoring region, so it is not idle in this snapshot. */
static void mark_hit(const struct mr_region *r, uint64_t bytes, void *arg)
{
	const struct snap_hits *h = arg;

	(void)bytes;
	h->hit[r - h->map->regions] = true;
}

static int from_process_rec(const struct mr_rec *rec, const char *name,
			    const struct mr_region_map *map, struct mr_residency *res)
{
	struct mr_rec_placement pl;
	struct snap_hits h = { map, NULL };
	size_t s, k;
	unsigned i;
	int ret;

	ret = mr_rec_same_process(rec);
	if (ret == -ESRCH)
		return mr_error_wrap(ret, "%s: a process-scoped record (virtual addresses of pid "
				     "%d) maps onto power regions only through that process's page "
				     "table while it runs, and pid %d is gone; %s", name,
				     (int)rec->hdr.pid, (int)rec->hdr.pid, record_physical);
	if (ret)
		return mr_error_wrap(ret, "%s: process-scoped record of pid %d", name,
				     (int)rec->hdr.pid);
	/* one pagemap walk for the whole record, not one per snapshot */
	ret = mr_rec_place(rec, map, &pl);
	if (ret) {
		mr_rec_place_free(&pl);
		return mr_error_wrap(ret, "%s: process-scoped record of pid %d needs its "
				     "pagemap (run as root, or %s)", name, (int)rec->hdr.pid,
				     record_physical);
	}
	h.hit = calloc(map->nr_regions ? map->nr_regions : 1, sizeof(*h.hit));
	if (!h.hit) {
		mr_rec_place_free(&pl);
		return mr_error(-ENOMEM, "out of memory");
	}
	for (s = 0; s < rec->nr_snaps; s++) {
		const struct mr_rec_snapshot *snap = &rec->snaps[s];

		memset(h.hit, 0, map->nr_regions * sizeof(*h.hit));
		for (k = 0; k < snap->nr_regions; k++)
			if (snap->regions[k].nr_accesses > 0)
				mr_rec_place_range(&pl, snap->regions[k].start, snap->regions[k].end,
						   mark_hit, &h);
		for (i = 0; i < map->nr_regions; i++) {
			res->regions[i].intervals++;
			if (!h.hit[i])
				res->regions[i].idle_intervals++;
		}
	}
	free(h.hit);
	mr_rec_place_free(&pl);
	res->scope = MR_RESIDENCY_PROCESS;
	snprintf(res->from, sizeof(res->from), "%s (process-scoped: pid %d, %s backend, %zu "
		 "intervals; virtual addresses placed through /proc/%d/pagemap as it is now, "
		 "pages moved or freed since are not where they were)", name,
		 (int)rec->hdr.pid, rec->hdr.backend, rec->nr_snaps, (int)rec->hdr.pid);
	return 0;
}

int mr_residency_from_rec(const struct mr_rec *rec, const char *name,
			  const struct mr_region_map *map, struct mr_residency *res)
{
	size_t s, k;
	unsigned i;
	int ret;

	memset(res, 0, sizeof(*res));
	if (rec->hdr.kind != MR_MON_TARGET_PHYS && rec->hdr.kind != MR_MON_TARGET_PROCESS)
		return mr_error(-EINVAL, "%s: unknown record target kind %d", name,
				(int)rec->hdr.kind);
	if (!rec->nr_snaps)
		return mr_error(-EINVAL, "%s: no snapshot in the record", name);
	res->regions = calloc(map->nr_regions ? map->nr_regions : 1, sizeof(*res->regions));
	if (!res->regions)
		return mr_error(-ENOMEM, "out of memory");
	res->nr_regions = map->nr_regions;
	res->interval_us = rec->hdr.attrs.aggr_us;
	if (rec->hdr.kind == MR_MON_TARGET_PROCESS) {
		ret = from_process_rec(rec, name, map, res);
		if (ret)
			mr_residency_free(res);
		return ret;
	}
	res->scope = MR_RESIDENCY_PHYSICAL;
	snprintf(res->from, sizeof(res->from), "%s (%s backend, %zu intervals)", name,
		 rec->hdr.backend, rec->nr_snaps);
	for (s = 0; s < rec->nr_snaps; s++) {
		const struct mr_rec_snapshot *snap = &rec->snaps[s];

		for (i = 0; i < map->nr_regions; i++) {
			const struct mr_region *r = &map->regions[i];
			bool accessed = false;

			for (k = 0; k < snap->nr_regions && !accessed; k++)
				accessed = snap->regions[k].nr_accesses > 0 &&
					   overlaps(r, snap->regions[k].start, snap->regions[k].end);
			res->regions[i].intervals++;
			if (!accessed)
				res->regions[i].idle_intervals++;
		}
	}
	return 0;
}

int mr_residency_read_record(const char *path, const struct mr_region_map *map,
			     struct mr_residency *res)
{
	struct mr_rec rec;
	int ret;

	memset(&rec, 0, sizeof(rec));
	ret = mr_rec_load(path, &rec);
	if (ret)
		return ret;
	ret = mr_residency_from_rec(&rec, path, map, res);
	mr_rec_free(&rec);
	return ret;
}
