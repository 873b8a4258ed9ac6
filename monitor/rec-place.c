/* A process record against its live process (rec-place.h): the same-process check
 * and the placement of its virtual addresses on power regions, one pagemap walk. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/proc.h"
#include "common/root.h"
#include "common/util.h"
#include "monitor/rec-place.h"
#include "regions/placement.h"

int mr_rec_same_process(const struct mr_rec *rec)
{
	pid_t pid = rec->hdr.pid;
	uint64_t ticks, btime_s = 0;
	long hz = sysconf(_SC_CLK_TCK);
	char *stat = NULL, *b;
	int err;

	if (rec->hdr.target_starttime_ticks)
		return mr_proc_same(pid, rec->hdr.target_starttime_ticks);
	err = mr_proc_starttime(pid, &ticks);
	if (err || !rec->hdr.start_unix_ns)
		return err;
	err = mr_root_read_file("/proc/stat", 1 << 20, &stat, NULL);
	if (err)
		return err;
	b = strstr(stat, "\nbtime ");
	if (!b || sscanf(b, "\nbtime %" SCNu64, &btime_s) != 1) {
		free(stat);
		return mr_error(-EINVAL, "/proc/stat: no btime line");
	}
	free(stat);
	if (btime_s + ticks / (uint64_t)(hz > 0 ? hz : 100) > rec->hdr.start_unix_ns / 1000000000u + 2)
		return mr_error(-ESRCH, "pid %d started after the record did: it is another "
				"process now", (int)pid);
	return 0;
}

static int place_chunk(uint64_t vaddr, const uint64_t *e, size_t nr, void *arg)
{
	struct mr_rec_placement *pl = arg;
	size_t i;

	for (i = 0; i < nr; i++, vaddr += pl->page_bytes) {
		const struct mr_region *reg;
		struct mr_rec_place_run *last = pl->nr_runs ? &pl->runs[pl->nr_runs - 1] : NULL;
		uint64_t pfn;
		unsigned idx;

		if (!mr_pagemap_entry_present(e[i], &pfn))
			continue;	/* never touched, or swapped out */
		if (!pfn) {
			pl->hidden = true;
			return 1;	/* no use reading on: nothing can be placed */
		}
		reg = mr_region_of_phys(pl->map, pfn * pl->page_bytes);
		idx = reg ? (unsigned)(reg - pl->map->regions) : pl->map->nr_regions;
		if (last && last->end == vaddr && last->idx == idx) {
			last->end += pl->page_bytes;
			continue;
		}
		if (pl->nr_runs == pl->cap_runs) {
			size_t cap = pl->cap_runs ? 2 * pl->cap_runs : 256;
			struct mr_rec_place_run *r = realloc(pl->runs, cap * sizeof(*r));

			if (!r)
				return mr_error(-ENOMEM, "out of memory");
			pl->runs = r;
			pl->cap_runs = cap;
		}
		pl->runs[pl->nr_runs++] = (struct mr_rec_place_run){ vaddr, vaddr + pl->page_bytes,
								      idx };
	}
	return 0;
}

int mr_rec_place(const struct mr_rec *rec, const struct mr_region_map *map,
		 struct mr_rec_placement *pl)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	size_t i;
	int err;

	/* a snapshot's regions are sorted: its first starts lowest, its last ends highest */
	for (i = 0; i < rec->nr_snaps; i++)
		if (rec->snaps[i].nr_regions) {
			const struct mr_rec_snapshot *s = &rec->snaps[i];

			if (s->regions[0].start < lo)
				lo = s->regions[0].start;
			if (s->regions[s->nr_regions - 1].end > hi)
				hi = s->regions[s->nr_regions - 1].end;
		}
	memset(pl, 0, sizeof(*pl));
	pl->map = map;
	pl->page_bytes = (uint64_t)sysconf(_SC_PAGESIZE);
	pl->pid = rec->hdr.pid;
	if (lo >= hi)
		return 0;
	err = mr_pagemap_walk(pl->pid, lo, hi, MR_PAGEMAP_SKIP_PROT_NONE, place_chunk, pl);
	if (pl->hidden)
		return mr_error(-EPERM, "pid %d's pagemap shows its pages without frame numbers "
				"(the kernel shows PFNs only to CAP_SYS_ADMIN): every power region "
				"would look idle", pl->pid);
	return err < 0 ? err : 0;
}

void mr_rec_place_range(const struct mr_rec_placement *pl, uint64_t start, uint64_t end,
			mr_rec_place_fn fn, void *arg)
{
	size_t lo = 0, hi = pl->nr_runs;

	while (lo < hi) {	/* the first run that ends after @start */
		size_t mid = (lo + hi) / 2;

		if (pl->runs[mid].end <= start)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < pl->nr_runs && pl->runs[lo].start < end; lo++) {
		const struct mr_rec_place_run *r = &pl->runs[lo];
		uint64_t a = r->start > start ? r->start : start, b = r->end < end ? r->end : end;

		if (a < b && r->idx < pl->map->nr_regions)
			fn(&pl->map->regions[r->idx], b - a, arg);
	}
}

void mr_rec_place_free(struct mr_rec_placement *pl)
{
	free(pl->runs);
	pl->runs = NULL;
	pl->nr_runs = pl->cap_runs = 0;
}
