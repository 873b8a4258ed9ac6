/* Where a process's resident pages live: physical frames from /proc/PID/pagemap mapped
 * to regions (root only: the kernel hides frame numbers from others), else the per-node
 * counts of /proc/PID/numa_maps. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/proc.h"
#include "common/root.h"
#include "common/sys.h"
#include "common/util.h"
#include "regions/placement.h"

/* Documentation/admin-guide/mm/pagemap.rst: bit 63 present, bits 0-54 the frame. */
#define PM_PRESENT	(UINT64_C(1) << 63)
#define PM_PFN_MASK	((UINT64_C(1) << 55) - 1)

bool mr_pagemap_entry_present(uint64_t entry, uint64_t *pfn)
{
	if (!(entry & PM_PRESENT))
		return false;
	*pfn = entry & PM_PFN_MASK;
	return true;
}

bool mr_pagemap_entry_pfn(uint64_t entry, uint64_t *pfn)
{
	uint64_t frame;

	if (!mr_pagemap_entry_present(entry, &frame) || !frame)
		return false;
	*pfn = frame;
	return true;
}

const char *mr_where_source_name(enum mr_where_source s)
{
	return s == MR_WHERE_PAGEMAP ? "pagemap" : "numa_maps";
}

int mr_numa_maps_parse_line(const char *line, uint64_t node_bytes[MR_MAX_NODES])
{
	uint64_t page_kib = 4, pages[64] = { 0 }, val;
	unsigned nodes[64], nr = 0, i;
	const char *p = line;
	char tok[128];
	int len;

	/* Fields after the address and the policy, space separated; the page size comes
	 * last, so collect the node counts first. */
	while (sscanf(p, "%127s%n", tok, &len) == 1) {
		p += len;
		if (tok[0] == 'N' && tok[1] >= '0' && tok[1] <= '9') {
			char *eq = strchr(tok, '=');
			uint64_t node;

			if (!eq)
				return -EINVAL;
			*eq = '\0';
			if (mr_parse_u64(tok + 1, &node) || node >= MR_MAX_NODES ||
			    mr_parse_u64(eq + 1, &val) || nr == MR_ARRAY_SIZE(nodes))
				return -EINVAL;
			nodes[nr] = (unsigned)node;
			pages[nr++] = val;
		} else if (strncmp(tok, "kernelpagesize_kB=", 18) == 0) {
			if (mr_parse_u64(tok + 18, &page_kib) || !page_kib)
				return -EINVAL;
		}
	}
	for (i = 0; i < nr; i++) {
		uint64_t b;

		if (!mr_mul_u64(pages[i], page_kib * 1024, &b) ||
		    !mr_add_u64(node_bytes[nodes[i]], b, &node_bytes[nodes[i]]))
			return -ERANGE;
	}
	return 0;
}

static int where_numa_maps(const struct mr_region_map *map, int pid, struct mr_where *w)
{
	char path[64], line[4096];
	unsigned lineno = 0, count[MR_MAX_NODES] = { 0 }, last[MR_MAX_NODES];
	const struct mr_region *r;
	FILE *f;
	int n;

	mr_pathf(path, sizeof(path), "/proc/%d/numa_maps", pid);
	f = mr_root_fopen(path, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		if (mr_numa_maps_parse_line(line, w->node_bytes)) {
			fclose(f);
			return mr_error(-EINVAL, "%s:%u: malformed node count", path, lineno);
		}
	}
	fclose(f);
	w->source = MR_WHERE_NUMA_MAPS;
	/* A node's bytes belong to a region only when the node has exactly one. */
	mr_for_each_region(map, r)
		if (r->node >= 0 && r->node < MR_MAX_NODES) {
			count[r->node]++;
			last[r->node] = r->id;
		}
	for (n = 0; n < MR_MAX_NODES; n++) {
		w->total_bytes += w->node_bytes[n];
		if (count[n] == 1)
			w->region_bytes[last[n]] += w->node_bytes[n];
		else
			w->unplaced_bytes += w->node_bytes[n];
	}
	return 0;
}

/* The node of a region, for the per-node totals under pagemap. */
static void add_phys(const struct mr_region_map *map, struct mr_where *w, uint64_t phys,
		     uint64_t bytes)
{
	const struct mr_region *r = mr_region_of_phys(map, phys);

	w->total_bytes += bytes;
	if (!r) {
		w->unplaced_bytes += bytes;
		return;
	}
	w->region_bytes[r->id] += bytes;
	if (r->node >= 0 && r->node < MR_MAX_NODES)
		w->node_bytes[r->node] += bytes;
}

int mr_pagemap_walk(int pid, uint64_t lo, uint64_t hi, unsigned flags,
		    mr_pagemap_chunk_fn fn, void *arg)
{
	uint64_t *buf, page = (uint64_t)sysconf(_SC_PAGESIZE);
	struct mr_mapping *maps = NULL, *m;
	char pm_path[64];
	size_t nr_maps = 0;
	int fd, ret;

	mr_pathf(pm_path, sizeof(pm_path), "/proc/%d/pagemap", pid);
	ret = mr_proc_maps_read(pid, &maps, &nr_maps);
	if (ret)
		return ret;
	fd = mr_root_open(pm_path, O_RDONLY);
	if (fd < 0) {
		free(maps);
		return fd;
	}
	buf = malloc(MR_PAGEMAP_CHUNK * sizeof(*buf));
	if (!buf) {
		ret = mr_error(-ENOMEM, "out of memory");
		goto out;
	}
	for (m = maps; !ret && m < maps + nr_maps; m++) {
		uint64_t vpn, end_vpn, s = m->start, e = m->end;

		/* the kernel's own mappings are not the process's pages */
		if (mr_mapping_is_special(m))
			continue;
		if ((flags & MR_PAGEMAP_SKIP_PROT_NONE) && mr_mapping_is_prot_none(m))
			continue;
		if (s < lo)
			s = lo;
		if (e > hi)
			e = hi;
		if (s >= e)
			continue;
		for (vpn = s / page, end_vpn = (e + page - 1) / page; vpn < end_vpn && !ret;) {
			size_t want = end_vpn - vpn < MR_PAGEMAP_CHUNK ? (size_t)(end_vpn - vpn) :
				      MR_PAGEMAP_CHUNK;
			long n = mr_root_pread(fd, buf, want * 8, vpn * 8);

			if (n < 0) {
				ret = mr_error((int)n, "%s: %s", pm_path, strerror((int)-n));
				break;
			}
			if (n < 8 && mr_root_is_fixture())
				goto out;	/* past the end of a fixture's file */
			/* a live pagemap reads nothing once its address space is gone */
			if (n < 8) {
				ret = mr_error(-ESRCH, "%s: pid %d exited or exec'd during the walk",
					       pm_path, pid);
				break;
			}
			ret = fn(vpn * page, buf, (size_t)n / 8, arg);
			vpn += (uint64_t)n / 8;
		}
	}
out:
	free(buf);
	free(maps);
	mr_sys_close(fd);
	return ret;
}

struct where_walk {
	const struct mr_region_map *map;
	struct mr_where *w;
	uint64_t page_bytes;
	bool hidden;		/* a present page showed no frame */
};

static int where_chunk(uint64_t vaddr, const uint64_t *e, size_t nr, void *arg)
{
	struct where_walk *ww = arg;
	size_t i;

	(void)vaddr;
	for (i = 0; i < nr; i++) {
		uint64_t pfn;

		if (mr_pagemap_entry_pfn(e[i], &pfn))
			add_phys(ww->map, ww->w, pfn * ww->page_bytes, ww->page_bytes);
		else if (e[i] & PM_PRESENT) {
			ww->hidden = true;	/* present, frame hidden */
			return 1;
		}
	}
	return 0;
}

/* @w counts nothing (its region array kept): before each reading. */
static void where_zero(struct mr_where *w)
{
	memset(w->region_bytes, 0, w->nr_regions * sizeof(uint64_t));
	memset(w->node_bytes, 0, sizeof(w->node_bytes));
	w->unplaced_bytes = w->total_bytes = 0;
}

/* 1 when every present page showed its frame, 0 when frames are hidden (not root).
 * PROT_NONE mappings are not read, as move and record's placement do not read them:
 * they are reservations and guard areas, and libmemreg's arena is 259 GiB of address
 * space, whose pagemap (520 MiB when it was 260) took 0.7 s of CPU a process to read (a
 * sampling `memregctl bench` read it twice a second for each process of a kernel
 * build). A page left in a mapping made PROT_NONE after it was written is not
 * counted (memregctl-where(1)). */
static int where_pagemap(const struct mr_region_map *map, int pid, struct mr_where *w)
{
	struct where_walk ww = { map, w, (uint64_t)sysconf(_SC_PAGESIZE), false };
	uint64_t start = 0;
	bool known = mr_proc_starttime(pid, &start) == 0;
	int ret, tries = 3;

	/* A process that exec'd during the walk (the same start time) is read again, as
	 * the program it is now; one that exited fails (-ESRCH). */
	mr_clear_error();
	do {
		where_zero(w);
		ret = mr_pagemap_walk(pid, 0, UINT64_MAX, MR_PAGEMAP_SKIP_PROT_NONE, where_chunk, &ww);
	} while (ret == -ESRCH && --tries && known && mr_proc_same(pid, start) == 0);
	if (ww.hidden)
		return 0;
	return ret < 0 ? ret : 1;
}

int mr_where_pid(const struct mr_region_map *map, int pid, struct mr_where *w)
{
	const struct mr_region *r;
	bool spans_known = true;
	int ret;

	memset(w, 0, sizeof(*w));
	w->nr_regions = map->nr_regions;
	w->region_bytes = calloc(map->nr_regions ? map->nr_regions : 1, sizeof(uint64_t));
	if (!w->region_bytes)
		return mr_error(-ENOMEM, "out of memory");
	/* A region without a known span owns no frame: only its node can place pages. */
	mr_for_each_region(map, r)
		spans_known = spans_known && mr_region_span_known(r);
	w->source = MR_WHERE_PAGEMAP;
	ret = spans_known ? where_pagemap(map, pid, w) : 0;
	if (ret == 1)
		return 0;
	if (ret < 0 && ret != -EPERM && ret != -EACCES) {
		mr_where_destroy(w);
		return ret;
	}
	/* Frames hidden (or not placeable): start again from numa_maps. */
	where_zero(w);
	ret = where_numa_maps(map, pid, w);
	if (ret)
		mr_where_destroy(w);
	return ret;
}

void mr_where_destroy(struct mr_where *w)
{
	free(w->region_bytes);
	w->region_bytes = NULL;
}
