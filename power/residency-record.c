/* Residency from an access record (monitor/record.h): per power region, the
 * aggregation intervals in which no sampled access landed in it. Only physical
 * records map onto power regions; a process's virtual addresses do not. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "monitor/record.h"
#include "power/model.h"

/* True when [start, end) overlaps one of the region's physical ranges. */
static bool overlaps(const struct mr_region *r, uint64_t start, uint64_t end)
{
	unsigned i;

	for (i = 0; i < r->nr_ranges; i++)
		if (start < r->ranges[i].start + r->ranges[i].size && r->ranges[i].start < end)
			return true;
	return false;
}

int mr_residency_from_rec(const struct mr_rec *rec, const char *name,
			  const struct mr_region_map *map, struct mr_residency *res)
{
	size_t s, k;
	unsigned i;

	memset(res, 0, sizeof(*res));
	if (rec->hdr.kind != MR_MON_TARGET_PHYS)
		return mr_error(-EINVAL, "%s: a process-scoped record (virtual addresses of pid "
				"%d) cannot be mapped onto power regions; record physical "
				"memory, or give translated residency with --residency", name,
				(int)rec->hdr.pid);
	if (!rec->nr_snaps)
		return mr_error(-EINVAL, "%s: no snapshot in the record", name);
	res->regions = calloc(map->nr_regions ? map->nr_regions : 1, sizeof(*res->regions));
	if (!res->regions)
		return mr_error(-ENOMEM, "out of memory");
	res->nr_regions = map->nr_regions;
	res->scope = MR_RESIDENCY_PHYSICAL;
	res->interval_us = rec->hdr.attrs.aggr_us;
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
