/* Residency from an access record (monitor/record.h): per power region, the
 * aggregation intervals in which no sampled access landed in it. Physical records
 * map directly; a process record only through that process's live page table. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/root.h"
#include "common/sys.h"
#include "common/util.h"
#include "monitor/record.h"
#include "power/model.h"
#include "regions/placement.h"

#define PM_CHUNK	512u

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

/*
 * The process of a record must still be the one recorded: a pid reused since would
 * translate another process's pages. Its start time (/proc/PID/stat field 22, in
 * clock ticks after /proc/stat's btime) must not be after the record started.
 */
static int same_process(const struct mr_rec *rec, const char *name)
{
	char path[64], buf[4096], *p;
	uint64_t btime = 0, start_ticks;
	long hz = sysconf(_SC_CLK_TCK);
	double start_s;
	int ret, i;

	ret = mr_root_read_str(mr_pathf(path, sizeof(path), "/proc/%d/stat",
					(int)rec->hdr.pid), buf, sizeof(buf));
	if (ret)
		return mr_error(-ESRCH, "%s: a process-scoped record (virtual addresses of pid %d) "
				"maps onto power regions only through that process's page table "
				"while it runs, and pid %d is gone; %s", name, (int)rec->hdr.pid,
				(int)rec->hdr.pid, record_physical);
	/* Fields after the command name (in parentheses, may hold spaces). */
	p = strrchr(buf, ')');
	for (i = 0; p && i < 20; i++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%" SCNu64, &start_ticks) != 1)
		return mr_error(-EINVAL, "%s: no start time field", path);
	ret = mr_root_read_file("/proc/stat", 1 << 20, &p, NULL);
	if (ret)
		return ret;
	{
		char *b = strstr(p, "\nbtime ");

		if (!b || sscanf(b, "\nbtime %" SCNu64, &btime) != 1) {
			free(p);
			return mr_error(-EINVAL, "/proc/stat: no btime line");
		}
	}
	free(p);
	start_s = (double)btime + (double)start_ticks / (double)(hz > 0 ? hz : 100);
	/* btime and the record's start are whole seconds: allow two. */
	if (start_s > (double)rec->hdr.start_unix_ns / 1e9 + 2)
		return mr_error(-ESRCH, "%s: pid %d started after the record did: it is another "
				"process now, the recorded one is gone; %s", name,
				(int)rec->hdr.pid, record_physical);
	return 0;
}

/*
 * Mark in @hit the power regions that hold a present page of [start, end) of the
 * process behind @fd (its pagemap). *@zero_pfns counts present pages whose PFN
 * reads as 0: the kernel hides PFNs from readers without CAP_SYS_ADMIN.
 */
static int translate(int fd, const char *path, uint64_t start, uint64_t end, uint64_t page,
		     const struct mr_region_map *map, bool *hit, uint64_t *zero_pfns,
		     uint64_t *present)
{
	uint64_t ent[PM_CHUNK], vpn = start / page, last = (end + page - 1) / page;

	while (vpn < last) {
		size_t n = last - vpn < PM_CHUNK ? (size_t)(last - vpn) : PM_CHUNK, i;
		long got = mr_root_pread(fd, ent, n * 8, vpn * 8);

		if (got < 0)
			return mr_error((int)got, "%s: %s", path, strerror((int)-got));
		if (got == 0)
			break;
		n = (size_t)got / 8;
		for (i = 0; i < n; i++) {
			const struct mr_region *r;
			uint64_t pfn;

			if (!mr_pagemap_entry_present(ent[i], &pfn))
				continue;	/* not in memory (never touched, or swapped) */
			(*present)++;
			if (!pfn) {
				(*zero_pfns)++;
				continue;
			}
			r = mr_region_of_phys(map, pfn * page);
			if (r)
				hit[r - map->regions] = true;
		}
		vpn += n;
	}
	return 0;
}

static int from_process_rec(const struct mr_rec *rec, const char *name,
			    const struct mr_region_map *map, struct mr_residency *res)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), zero = 0, present = 0;
	char path[64];
	bool *hit;
	size_t s, k;
	unsigned i;
	int fd, ret;

	ret = same_process(rec, name);
	if (ret)
		return ret;
	fd = mr_root_open(mr_pathf(path, sizeof(path), "/proc/%d/pagemap", (int)rec->hdr.pid),
			  O_RDONLY);
	if (fd < 0)
		return mr_error_wrap(fd, "%s: process-scoped record of pid %d needs its "
				     "pagemap (run as root, or %s)", name, (int)rec->hdr.pid,
				     record_physical);
	hit = calloc(map->nr_regions ? map->nr_regions : 1, sizeof(*hit));
	if (!hit) {
		mr_sys_close(fd);
		return mr_error(-ENOMEM, "out of memory");
	}
	for (s = 0; s < rec->nr_snaps && !ret; s++) {
		const struct mr_rec_snapshot *snap = &rec->snaps[s];

		memset(hit, 0, map->nr_regions * sizeof(*hit));
		for (k = 0; k < snap->nr_regions && !ret; k++)
			if (snap->regions[k].nr_accesses > 0)
				ret = translate(fd, path, snap->regions[k].start,
						snap->regions[k].end, page, map, hit, &zero,
						&present);
		for (i = 0; i < map->nr_regions; i++) {
			res->regions[i].intervals++;
			if (!hit[i])
				res->regions[i].idle_intervals++;
		}
	}
	free(hit);
	mr_sys_close(fd);
	if (ret)
		return ret;
	if (present && zero == present)
		return mr_error(-EPERM, "%s: %s shows pages but every PFN reads 0: the kernel "
				"hides PFNs without CAP_SYS_ADMIN; run as root, or %s", name, path,
				record_physical);
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
