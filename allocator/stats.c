/* Allocator stats: the counters of stats-format.h, printed at exit (MEMREG_SHOW_STATS)
 * and exported live (MEMREG_EXPORT_STATS) for `memregctl alloc-stats PID`; the export
 * also holds the classes page and the live site map (classes-format.h). */
#include "config.h"

#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "allocator/buddy.h"
#include "allocator/classes-format.h"
#include "allocator/internal.h"
#include "allocator/os.h"
#include "allocator/stats-format.h"
#include "allocator/stats.h"

static struct mr_alloc_stats_file *export_map;
static struct mr_alloc_classes *export_classes;	/* in export_map's mapping */
static int export_pending;	/* a forked child exports on its first heap change */
static int export_full;		/* the next publish fills every entry (a new export) */
static bool export_tracking;	/* the classes page is read (mr_stats_export_open) */
static size_t export_bytes;
static int export_fd = -1;
static long export_pid;
static _Atomic uint64_t glibc_fallbacks;
static _Atomic uint64_t thread_caches;
static int disabled;

/* The counters that are not sums over regions (a few reads; nnodes is 1 but on
 * NUMA machines); the caller holds the heap lock. */
static void collect_header(const struct mr_heap *h, struct mr_alloc_stats_file *f)
{
	uint64_t page = MR_PAGE_SIZE;
	uint32_t r;

	f->region_bytes = page << h->region_order;
	f->regions = h->nregions;
	f->regions_opened = h->regions_opened;
	f->regions_touched = h->regions_touched;
	f->used_bytes = h->used_pages * page;
	f->peak_used_bytes = h->peak_pages * page;
	f->purges = h->purges;
	f->reserved_bytes = __atomic_load_n(&mr_arena_bytes, __ATOMIC_RELAXED);
	f->glibc_fallbacks = atomic_load_explicit(&glibc_fallbacks, memory_order_relaxed);
	f->disabled = (uint64_t)disabled;
	f->hot_regions = f->cold_regions = 0;
	for (r = 0; r < h->nnodes; r++) {
		f->hot_regions += h->hot_end[r] - h->node_lo[r] + h->hot_top[r] - h->norm_lo[r];
		f->cold_regions += h->node_hi[r] - h->cold_bottom[r];
	}
	/* The shared cache (id 0) and every cache made since, ids 1, 2... */
	f->thread_caches = atomic_load_explicit(&thread_caches, memory_order_relaxed);
}

/* Region @r's entry, and the live/empty counts moved from its old entry to the new
 * one (an incremental publish); the caller holds the heap lock. */
static void collect_region(const struct mr_heap *h, struct mr_alloc_stats_file *f, uint32_t r)
{
	const struct mr_region_info *ri = &h->regions[r];
	struct mr_alloc_stats_region *e = &f->region[r];

	f->regions_live -= e->used_bytes != 0;
	f->regions_empty -= !e->used_bytes && e->state == MR_REGION_ACTIVE;
	e->used_bytes = (uint64_t)ri->used_pages * MR_PAGE_SIZE;
	e->peak_bytes = (uint64_t)ri->peak_pages * MR_PAGE_SIZE;
	e->state = ri->state;
	e->flags = (ri->purged ? MR_ALLOC_REGION_PURGED : 0) |
		   (ri->pending ? MR_ALLOC_REGION_PENDING : 0) |
		   (ri->touched ? MR_ALLOC_REGION_TOUCHED : 0);
	f->regions_live += e->used_bytes != 0;
	f->regions_empty += !e->used_bytes && e->state == MR_REGION_ACTIVE;
}

/* Fill @f from the whole heap, its first @max_regions entries too; the caller holds
 * the heap lock. */
static void collect(const struct mr_heap *h, struct mr_alloc_stats_file *f, uint32_t max_regions)
{
	uint32_t r, n = h->nregions < max_regions ? h->nregions : max_regions;

	collect_header(h, f);
	f->regions_live = f->regions_empty = 0;
	for (r = 0; r < h->nregions; r++) {
		const struct mr_region_info *ri = &h->regions[r];

		if (r < n) {
			memset(&f->region[r], 0, sizeof(f->region[r]));
			collect_region(h, f, r);
		} else if (ri->used_pages) {
			f->regions_live++;
		} else if (ri->state == MR_REGION_ACTIVE) {
			f->regions_empty++;
		}
	}
}

/* The regions the page heap changed since the last publish (h->changed): their
 * entries only, so a page-heap operation costs the export a few writes, not a walk
 * of every region under the heap lock. */
static void collect_changed(struct mr_heap *h, struct mr_alloc_stats_file *f)
{
	collect_header(h, f);
	while (h->changed_summary) {
		uint32_t w = (uint32_t)__builtin_ctzll(h->changed_summary);
		uint64_t bits = h->changed[w];

		h->changed[w] = 0;
		h->changed_summary &= h->changed_summary - 1;
		while (bits) {
			uint32_t r = w * 64 + (uint32_t)__builtin_ctzll(bits);

			bits &= bits - 1;
			if (r < f->nregions)
				collect_region(h, f, r);
		}
	}
}

/* Called with the heap lock held after page-heap changes, when exporting. */
void mr_stats_publish(struct mr_heap *h)
{
	struct mr_alloc_stats_file *f;

	if (MR_UNLIKELY(export_pending)) {
		export_pending = 0;
		mr_stats_export_open(export_tracking);
	}
	f = export_map;
	if (!f)
		return;
	__atomic_store_n(&f->seq, f->seq + 1, __ATOMIC_RELEASE);
	if (MR_UNLIKELY(export_full)) {
		export_full = 0;
		memset(h->changed, 0, sizeof(h->changed));
		h->changed_summary = 0;
		h->changes_tracked = true;	/* from now on, changes only */
		collect(h, f, f->nregions);
	} else {
		collect_changed(h, f);
	}
	__atomic_store_n(&f->seq, f->seq + 1, __ATOMIC_RELEASE);
}

void mr_stats_fallback(uint64_t n)
{
	struct mr_alloc_stats_file *f = __atomic_load_n(&export_map, __ATOMIC_ACQUIRE);

	atomic_store_explicit(&glibc_fallbacks, n, memory_order_relaxed);
	if (f)
		__atomic_store_n(&f->glibc_fallbacks, n, __ATOMIC_RELAXED);
}

void mr_stats_caches(uint64_t n)
{
	atomic_store_explicit(&thread_caches, n, memory_order_relaxed);
}

void mr_stats_totals_zero(struct mr_heap_totals *t)
{
	memset(t, 0, sizeof(*t));
	t->glibc_fallbacks = atomic_load_explicit(&glibc_fallbacks, memory_order_relaxed);
}

void mr_stats_totals(const struct mr_heap *h, struct mr_heap_totals *t)
{
	uint32_t r, k, p;

	t->region_bytes = MR_PAGE_SIZE << h->region_order;
	t->peak_used_bytes = h->peak_pages * MR_PAGE_SIZE;
	t->runs_purged_bytes = h->runs_purged_pages * MR_PAGE_SIZE;
	for (r = 0; r < h->nregions; r++) {
		const struct mr_region_info *ri = &h->regions[r];

		if (ri->used_pages)
			t->regions_live++;
		if (ri->state == MR_REGION_HUGE) {
			t->huge_bytes += t->region_bytes;
			t->huge_runs += ri->huge_regions != 0;
			continue;
		}
		if (ri->state != MR_REGION_ACTIVE)
			continue;
		t->active_bytes += t->region_bytes;
		t->used_bytes += (uint64_t)ri->used_pages * MR_PAGE_SIZE;
		for (k = 0; k <= h->region_order; k++) {
			for (p = ri->free_head[k]; p != MR_NONE; p = h->spans[p].next) {
				t->free_blocks++;
				if (k >= MR_PURGE_ORDER &&
				    (h->spans[p].flags & (MR_FREE_UNCLEAN | MR_FREE_DIRTY)))
					t->releasable_bytes += MR_PAGE_SIZE << k;
			}
		}
	}
}

/* A private copy of stderr: programs close theirs in atexit handlers (coreutils'
 * close_stdout) that run before ours. */
static int stats_fd = 2;

static void put(const char *s)
{
	mr_write_str(stats_fd, s);
}

static void put_u64(uint64_t v)
{
	char b[24];

	mr_fmt_u64(b, v);
	put(b);
}

static void put_kib(uint64_t bytes)
{
	put_u64(bytes >> 10);
	put(" KiB");
}

/* Resident bytes of a region: mincore over it, a chunk at a time. The vector is on
 * the stack: a static one was a page of BSS between the heap lock and the stats'
 * variables, so one page more resident in every process (only the exit report
 * uses it). */
static uint64_t region_resident(const struct mr_heap *h, uint32_t r)
{
	unsigned char vec[1024];
	size_t rb = (size_t)MR_PAGE_SIZE << h->region_order, off, chunk = sizeof(vec) * MR_PAGE_SIZE;
	uint64_t n = 0;
	size_t i;

	for (off = 0; off < rb; off += chunk) {
		size_t len = rb - off < chunk ? rb - off : chunk;

		if (mincore(mr_arena_base + (size_t)r * rb + off, len, vec) != 0)
			return 0;
		for (i = 0; i < len / MR_PAGE_SIZE; i++)
			n += vec[i] & 1;
	}
	return n * MR_PAGE_SIZE;
}

void mr_stats_print(const struct mr_heap *h)
{
	static struct mr_alloc_stats_file f;	/* no region entries: collect(.., 0) */
	uint32_t r;

	collect(h, &f, 0);
	put("libmemreg: stats of pid ");
	put_u64((uint64_t)getpid());
	put("\n");
#define MR_PRINT_COUNTER(name, help) put("  " #name " "); put_u64(f.name); put("  (" help ")\n");
	MR_ALLOC_COUNTERS(MR_PRINT_COUNTER)
#undef MR_PRINT_COUNTER
	put("  region  state   committed        live        peak\n");
	for (r = 0; r < h->nregions; r++) {
		const struct mr_region_info *ri = &h->regions[r];

		if (ri->state == MR_REGION_UNUSED)
			continue;
		put("  ");
		put_u64(r);
		put(ri->state == MR_REGION_HUGE ? "  huge    " :
		    ri->used_pages ? "  live    " : ri->purged ? "  empty   " : "  free    ");
		put_kib(region_resident(h, r));
		put("  ");
		put_kib((uint64_t)ri->used_pages * MR_PAGE_SIZE);
		put("  ");
		put_kib((uint64_t)ri->peak_pages * MR_PAGE_SIZE);
		put("\n");
	}
}

/* The classes page's allocator-side fields; @c is in a fresh (zeroed) memfd whose
 * mapping ends at @file_bytes, where the live site map goes. Published last. */
static void export_classes_init(void *page, size_t file_bytes, bool tracking)
{
	struct mr_alloc_classes *c = page;

	c->version = MR_ALLOC_CLASSES_VERSION;
	c->header_bytes = sizeof(*c);
	c->entry_bytes = sizeof(struct mr_alloc_class_entry);
	c->capacity = (uint32_t)((MR_ALLOC_CLASSES_BYTES - sizeof(*c)) / sizeof(c->entry[0]));
	c->map_offset = file_bytes;
	c->tracking = tracking;
	__atomic_store_n(&c->magic, MR_ALLOC_CLASSES_MAGIC, __ATOMIC_RELEASE);
	/* only a tracking allocator reads the page (mr_classes_poll, on mr_site_id) */
	if (c->tracking)
		__atomic_store_n(&export_classes, c, __ATOMIC_RELEASE);
}

struct mr_alloc_classes *mr_stats_classes(void)
{
	return __atomic_load_n(&export_classes, __ATOMIC_ACQUIRE);
}

int mr_stats_export_fd(void)
{
	return export_fd;
}

/* Create and map the export; the heap lock is held. A memfd named after the pid,
 * kept open: readers find it in /proc/PID/fd, and it vanishes with the process
 * however it ends (exec closes it: O_CLOEXEC). */
void mr_stats_export_open(bool tracking)
{
	char name[48];
	size_t bytes = sizeof(struct mr_alloc_stats_file) +
		       (size_t)mr_arena_max_regions * sizeof(struct mr_alloc_stats_region);
	int fd;
	void *m;

	export_tracking = tracking;
	export_pid = (long)getpid();
	memcpy(name, "memreg-alloc.", 13);
	mr_fmt_u64(name + 13, (uint64_t)export_pid);
	fd = memfd_create(name, MFD_CLOEXEC);
	if (fd < 0)
		return;
	bytes = (bytes + MR_PAGE_SIZE - 1) & ~(size_t)(MR_PAGE_SIZE - 1);
	bytes += MR_ALLOC_CLASSES_BYTES;	/* the classes page; the live site map after it */
	if (ftruncate(fd, (off_t)bytes) != 0) {
		close(fd);
		return;
	}
	m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		close(fd);
		return;
	}
	export_fd = fd;
	export_map = m;
	export_bytes = bytes;
	export_map->magic = MR_ALLOC_STATS_MAGIC;
	export_map->version = MR_ALLOC_STATS_VERSION;
	export_map->header_bytes = sizeof(struct mr_alloc_stats_file);
	export_map->region_entry_bytes = sizeof(struct mr_alloc_stats_region);
	export_map->nregions = mr_arena_max_regions;	/* the arena may grow to that */
	export_map->pid = export_pid;
	export_full = 1;
	export_classes_init((char *)m + mr_alloc_classes_offset(export_map), bytes, tracking);
}

/* No arena: the export (if asked for) says so, with the fallback count. */
void mr_stats_set_disabled(void)
{
	disabled = 1;
}

void mr_stats_init(void)
{
	if (MR_OPT(show_stats)) {
		int fd = fcntl(2, F_DUPFD_CLOEXEC, 100);

		if (fd >= 0)
			stats_fd = fd;
	}
}

/* A forked child exports under its own pid, if the parent did, from its first
 * page-heap change on: a child that only execs leaves no file behind. */
bool mr_stats_after_fork(void)
{
	if (!export_map)
		return false;
	__atomic_store_n(&export_classes, NULL, __ATOMIC_RELEASE);
	munmap(export_map, export_bytes);
	close(export_fd);
	export_fd = -1;
	export_map = NULL;
	export_pending = 1;
	return true;
}
