/* Occupancy: what each region holds. As root, per page from /proc/kpageflags and
 * /proc/kpagecount over the region's PFNs; otherwise, and for regions without a known
 * physical span, per node from the node's meminfo, spread over its regions by size. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/root.h"
#include "common/sys.h"
#include "regions/source.h"

/* include/uapi/linux/kernel-page-flags.h */
#define KPF_SLAB	7
#define KPF_BUDDY	10
#define KPF_MMAP	11
#define KPF_ANON	12
#define KPF_SWAPCACHE	13
#define KPF_SWAPBACKED	14
#define KPF_UNEVICTABLE	18
#define KPF_HWPOISON	19
#define KPF_NOPAGE	20
#define KPF_OFFLINE	23
#define KPF_PGTABLE	26
#define KPF_RESERVED	32
#define KPF_LRU		5
#define BIT(n) (UINT64_C(1) << (n))

#define KPF_MOVABLE (BIT(KPF_LRU) | BIT(KPF_ANON) | BIT(KPF_MMAP) | BIT(KPF_SWAPCACHE) | \
		     BIT(KPF_SWAPBACKED) | BIT(KPF_UNEVICTABLE))
#define KPF_UNMOVABLE (BIT(KPF_SLAB) | BIT(KPF_PGTABLE) | BIT(KPF_RESERVED) | BIT(KPF_HWPOISON))
/* No struct page, or a page the balloon or hotplug took away: holds nothing. */
#define KPF_ABSENT (BIT(KPF_NOPAGE) | BIT(KPF_OFFLINE))

/* 64 Ki pages a read: 512 KiB of flags, one syscall per 256 MiB of memory. */
#define CHUNK_PAGES 65536u

enum page_kind { PAGE_ABSENT, PAGE_FREE, PAGE_MOVABLE, PAGE_UNMOVABLE };

/*
 * One page's kind from its flags and its map count. Unmovable wins over movable (a
 * reserved page is never migrated); a page with no flags is free when nobody holds it
 * (the tail of a free buddy block) and a kernel allocation otherwise (vmalloc, drivers).
 */
static enum page_kind page_kind(uint64_t flags, uint64_t count)
{
	if (flags & KPF_ABSENT)
		return PAGE_ABSENT;
	if (flags & BIT(KPF_BUDDY))
		return PAGE_FREE;
	if (flags & KPF_UNMOVABLE)
		return PAGE_UNMOVABLE;
	if (flags & KPF_MOVABLE)
		return PAGE_MOVABLE;
	if (!flags && !count)
		return PAGE_FREE;
	return PAGE_UNMOVABLE;
}

struct kpf {
	int flags_fd, count_fd;
	uint64_t page_bytes;
	uint64_t *flags, *counts;
};

/* Count the pages [pfn, pfn + nr) into @occ; stops quietly where the files end. */
static int count_range(struct kpf *k, uint64_t pfn, uint64_t nr, struct mr_occupancy *occ)
{
	uint64_t pages[4] = { 0 };
	size_t want, got, i;
	bool need_counts;
	long n;

	while (nr) {
		want = nr < CHUNK_PAGES ? (size_t)nr : CHUNK_PAGES;
		n = mr_root_pread(k->flags_fd, k->flags, want * 8, pfn * 8);
		if (n < 0)
			return mr_error((int)n, "/proc/kpageflags: read at pfn 0x%llx: %s",
					(unsigned long long)pfn, strerror((int)-n));
		got = (size_t)n / 8;
		if (!got)
			break;
		/* kpagecount only matters for pages without flags. */
		need_counts = false;
		for (i = 0; i < got && !need_counts; i++)
			need_counts = k->flags[i] == 0;
		if (need_counts && k->count_fd >= 0) {
			n = mr_root_pread(k->count_fd, k->counts, got * 8, pfn * 8);
			if (n < 0)
				return mr_error((int)n, "/proc/kpagecount: read at pfn 0x%llx: %s",
						(unsigned long long)pfn, strerror((int)-n));
			if ((size_t)n < got * 8)
				memset((char *)k->counts + n, 0, got * 8 - (size_t)n);
		} else {
			memset(k->counts, 0, got * 8);
		}
		for (i = 0; i < got; i++)
			pages[page_kind(k->flags[i], k->counts[i])]++;
		pfn += got;
		nr -= got;
		if (got < want)
			break;
	}
	occ->free_bytes += pages[PAGE_FREE] * k->page_bytes;
	occ->movable_bytes += pages[PAGE_MOVABLE] * k->page_bytes;
	occ->unmovable_bytes += pages[PAGE_UNMOVABLE] * k->page_bytes;
	return 0;
}

/* Regions without a known span are left to by_node(): no PFN is theirs. */
static int by_page(struct mr_region_map *map)
{
	struct kpf k = { .count_fd = -1 };
	struct mr_region *r;
	unsigned i;
	int ret = 0;

	k.page_bytes = (uint64_t)sysconf(_SC_PAGESIZE);
	k.flags_fd = mr_root_open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	if (k.flags_fd < 0)
		return k.flags_fd;
	k.count_fd = mr_root_open("/proc/kpagecount", O_RDONLY | O_CLOEXEC);
	if (k.count_fd < 0) {
		mr_sys_close(k.flags_fd);
		return k.count_fd;
	}
	k.flags = malloc(CHUNK_PAGES * 8);
	k.counts = malloc(CHUNK_PAGES * 8);
	if (!k.flags || !k.counts)
		ret = mr_error(-ENOMEM, "out of memory");
	mr_for_each_region(map, r) {
		if (ret)
			break;
		memset(&r->occ, 0, sizeof(r->occ));
		if (!mr_region_span_known(r))
			continue;
		r->occ.granularity = MR_OCC_PAGE;
		for (i = 0; i < r->nr_ranges && !ret; i++) {
			uint64_t first = r->ranges[i].start / k.page_bytes;
			uint64_t end = (r->ranges[i].start + r->ranges[i].size) / k.page_bytes;

			if (end > first)
				ret = count_range(&k, first, end - first, &r->occ);
		}
	}
	free(k.flags);
	free(k.counts);
	mr_sys_close(k.flags_fd);
	mr_sys_close(k.count_fd);
	return ret;
}

/* Index of @node in the machine's nodes (sorted by node number), or -1. */
static int node_index(const struct mr_machine *m, int node)
{
	unsigned lo = 0, hi = m->nr_nodes, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (m->nodes[mid].node < node)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < m->nr_nodes && m->nodes[lo].node == node ? (int)lo : -1;
}

/*
 * Each node's meminfo split over its regions in proportion to their size; with
 * @unknown_only, only the regions without a known span get it (the rest were counted
 * per page). One pass to sum each node's regions, one to share out: linear in the
 * regions (64 KiB fixed slices are hundreds of thousands of them).
 */
static void by_node(struct mr_region_map *map, const struct mr_machine *m, bool unknown_only)
{
	unsigned i, nr_unknown = 0;
	uint64_t *node_region_bytes;
	struct mr_region *r;
	int idx;

	node_region_bytes = calloc(m->nr_nodes ? m->nr_nodes : 1, sizeof(*node_region_bytes));
	if (!node_region_bytes) {
		mr_region_note(map, "occupancy: not measured per node: out of memory");
		return;
	}
	mr_for_each_region(map, r) {
		idx = node_index(m, r->node);
		if (idx >= 0)
			node_region_bytes[idx] += r->size_bytes;
	}
	mr_for_each_region(map, r) {
		const struct mr_node_info *n;
		uint64_t used, movable;
		double share;

		if (unknown_only && mr_region_span_known(r))
			continue;
		memset(&r->occ, 0, sizeof(r->occ));
		idx = node_index(m, r->node);
		if (idx < 0 || !m->nodes[idx].total_bytes) {
			nr_unknown++;
			continue;
		}
		n = &m->nodes[idx];
		share = node_region_bytes[idx] ?
			(double)r->size_bytes / (double)node_region_bytes[idx] : 0;
		used = n->total_bytes > n->free_bytes ? n->total_bytes - n->free_bytes : 0;
		movable = n->lru_bytes < used ? n->lru_bytes : used;
		r->occ.granularity = MR_OCC_NODE;
		r->occ.free_bytes = (uint64_t)((double)n->free_bytes * share);
		r->occ.movable_bytes = (uint64_t)((double)movable * share);
		r->occ.unmovable_bytes = (uint64_t)((double)(used - movable) * share);
	}
	/* meminfo counts pages the kernel has initialised (deferred init, ballooning):
	 * say so when that is far from what the node's blocks span. */
	for (i = 0; i < m->nr_nodes && !unknown_only; i++) {
		uint64_t span = node_region_bytes[i];

		if (m->nodes[i].total_bytes && span &&
		    (m->nodes[i].total_bytes < span / 10 * 9 || m->nodes[i].total_bytes > span))
			mr_region_note(map, "occupancy: node %d's meminfo counts %llu MiB, its "
				       "regions span %llu MiB: the spread is only as good as that",
				       m->nodes[i].node,
				       (unsigned long long)(m->nodes[i].total_bytes / MR_MIB),
				       (unsigned long long)(span / MR_MIB));
	}
	free(node_region_bytes);
	if (nr_unknown)
		mr_region_note(map, "occupancy: not measured for %u region%s (no single node with "
			       "a readable meminfo)", nr_unknown, nr_unknown == 1 ? "" : "s");
}

void mr_region_map_occupancy(struct mr_region_map *map, const struct mr_machine *m)
{
	const struct mr_region *r;
	unsigned nr_unknown = 0;
	char why[512];
	int ret;

	mr_for_each_region(map, r)
		if (!mr_region_span_known(r))
			nr_unknown++;
	ret = by_page(map);
	if (!ret) {
		mr_region_note(map, "occupancy: per page from /proc/kpageflags and "
			       "/proc/kpagecount (granularity page); free is an estimate: the "
			       "kernel marks only the first page of a free block BUDDY and "
			       "exports no block size, so pages with no flags and no users "
			       "count as free");
		if (nr_unknown) {
			by_node(map, m, true);
			mr_region_note(map, "occupancy: per node from /sys/devices/system/node/"
				       "nodeN/meminfo for the %u region%s without a known "
				       "physical span (granularity node)", nr_unknown,
				       nr_unknown == 1 ? "" : "s");
		}
		return;
	}
	if (ret == -ENOENT)
		snprintf(why, sizeof(why), "there is no /proc/kpageflags");
	else if (ret == -EACCES || ret == -EPERM)
		snprintf(why, sizeof(why), "/proc/kpageflags is not readable (%s): it needs root",
			 strerror(-ret));
	else
		snprintf(why, sizeof(why), "/proc/kpageflags could not be read (%s)",
			 strerror(-ret));
	mr_clear_error();
	by_node(map, m, false);
	mr_region_note(map, "occupancy: per node from /sys/devices/system/node/nodeN/meminfo, "
		       "spread over the node's regions by size (granularity node): %s", why);
}
