/* The page heap's locked half: the heap (buddy.c) under one lock, its OS contract
 * bound to the arena (regions to addresses and nodes, then os.c), and the stats
 * export published after every change. */
#include "config.h"

#include <pthread.h>

#include "allocator/buddy.h"
#include "allocator/heap.h"
#include "allocator/internal.h"
#include "allocator/os.h"
#include "allocator/stats.h"

/* Page-aligned: of its half MiB (a region table for 4096 regions) a process with a
 * few regions makes resident the header with the bitmaps' first row (1 page) and its
 * regions' entries, not a page more for straddling (resident size at start-up). */
struct mr_heap mr_heap __attribute__((aligned(4096)));

static pthread_mutex_t heap_lock MR_LINE_ALIGNED = PTHREAD_MUTEX_INITIALIZER;

/* The dirty share (MEMREG_DIRTY_PCT): heaps with less dirty memory than this wait
 * for the decay delay whatever the share; past the share, blocks free for this long
 * (or the delay, if shorter) are purged at once. 10 ms is mimalloc's purge delay. */
#define MR_DIRTY_MIN_BYTES (UINT64_C(4) << 20)
#define MR_DIRTY_AGE_MS 10u
/* Spans of 128 KiB and more above every span purged at its free go back at theirs
 * (buddy.h, purge_new_max_min): glibc's first mmap threshold. */
#define MR_PURGE_NEW_MAX_MIN_BYTES (UINT64_C(128) << 10)

/* ---- the OS contract of the buddy heap, in regions and pages ---- */

static size_t region_bytes(const struct mr_heap *h)
{
	return (size_t)1 << (h->region_order + MR_PAGE_SHIFT);
}

static size_t region_span_bytes(const struct mr_heap *h)
{
	return ((size_t)1 << h->region_order) * sizeof(struct mr_span);
}

/* A region's descriptors become writable when it is opened (they hold its free
 * lists); its pages only as spans are carved from them (os_commit_pages). */
static int os_commit(struct mr_heap *h, uint32_t r)
{
	size_t rb = region_bytes(h), sb = region_span_bytes(h);

	if (mr_os_commit((char *)h->spans + (size_t)r * sb, sb) != 0)
		return -1;
	if (mr_os_nnodes >= 2)
		mr_os_bind(h->base + (size_t)r * rb, rb, mr_buddy_node_of(h, r));
	return 0;
}

/* Pages [page, page + npages): a few commit chunks (2 MiB), never a whole region
 * at once, so RLIMIT_DATA and strict overcommit see what is used. */
static int os_commit_pages(struct mr_heap *h, uint32_t page, uint32_t npages)
{
	return mr_os_commit(h->base + ((size_t)page << MR_PAGE_SHIFT), (size_t)npages << MR_PAGE_SHIFT);
}

static void os_purge(struct mr_heap *h, uint32_t r, uint32_t n)
{
	size_t rb = region_bytes(h), sb = region_span_bytes(h);

	mr_os_purge(h->base + (size_t)r * rb, rb * n);
	mr_os_purge((char *)h->spans + (size_t)r * sb, sb * n);
	h->purge_failed |= mr_os_purge_failed;
}

/* Free pages of a region in use (not their descriptors: they hold the free lists). */
static void os_purge_pages(struct mr_heap *h, uint32_t page, uint32_t npages, bool lazy)
{
	mr_os_purge_pages(h->base + ((size_t)page << MR_PAGE_SHIFT), (size_t)npages << MR_PAGE_SHIFT,
			  lazy);
}

/* What failed is seen here: the heap flushes before it hands out what it purged. */
static void os_purge_flush(struct mr_heap *h)
{
	mr_os_purge_flush();
	h->purge_failed |= mr_os_purge_failed;
}

static uint32_t os_grow(struct mr_heap *h, uint32_t want)
{
	return mr_os_grow(h->nregions, want);
}

static const struct mr_heap_ops os_ops = {
	.commit = os_commit, .purge = os_purge, .now_ns = mr_os_now_ns,
	.commit_pages = os_commit_pages, .grow = os_grow, .purge_pages = os_purge_pages,
	.purge_flush = os_purge_flush,
};

void mr_heap_init(char *base, struct mr_span *spans, uint32_t region_order, uint32_t nregions)
{
	mr_buddy_init(&mr_heap, base, spans, region_order, nregions, MR_OPT(decay_ms) * 1000000u,
		      &os_ops);
	mr_heap.lazy_purge = MR_OPT(madv_free) != 0;
	mr_heap.pack_spans = mr_os_data_limited();
	mr_heap.dirty_pct = MR_OPT(dirty_pct) < UINT32_MAX ? (uint32_t)MR_OPT(dirty_pct) : UINT32_MAX;
	mr_heap.dirty_min_pages = MR_DIRTY_MIN_BYTES >> MR_PAGE_SHIFT;
	mr_heap.purge_new_max_min = MR_PURGE_NEW_MAX_MIN_BYTES >> MR_PAGE_SHIFT;
	mr_heap.dirty_age_ms = MR_OPT(decay_ms) < MR_DIRTY_AGE_MS ? (uint32_t)MR_OPT(decay_ms) :
								    MR_DIRTY_AGE_MS;
	mr_os_numa_detect();
	if (mr_os_nnodes >= 2)
		mr_buddy_set_nodes(&mr_heap, mr_os_nnodes);
}

/* ---- spans ---- */

/* The head's kind is set under the lock: the buddy heap reads it when it
 * coalesces a neighbour, and when it walks a region for a first fit. */
static uint32_t alloc_pages(uint32_t npages, uint32_t align_order, enum mr_temp temp,
			    enum mr_span_kind kind, unsigned cls, bool first_fit)
{
	uint32_t page = MR_NONE, node = mr_os_current_node();

	mr_os_lock(&heap_lock);
	if (first_fit)
		page = mr_buddy_alloc_first_fit(&mr_heap, npages, node);
	if (page == MR_NONE)
		page = mr_buddy_alloc_on(&mr_heap, npages, align_order, temp, node);
	if (page != MR_NONE) {
		mr_spans[page].kind = (uint8_t)kind;
		mr_spans[page].cls = (uint8_t)cls;
		mr_spans[page].temp = (uint8_t)temp;
	}
	mr_stats_publish(&mr_heap);
	mr_os_unlock(&heap_lock);
	return page;
}

uint32_t mr_heap_alloc_pages(uint32_t npages, uint32_t align_order, enum mr_temp temp)
{
	return alloc_pages(npages, align_order, temp, MR_SPAN_LARGE, 0, false);
}

uint32_t mr_heap_alloc_slab(unsigned cls, enum mr_temp temp)
{
	return alloc_pages(mr_class_pages(cls), 0, temp, MR_SPAN_SLAB, cls, false);
}

uint32_t mr_heap_alloc_big(uint32_t npages, enum mr_temp temp)
{
	return alloc_pages(npages, 0, temp, MR_SPAN_LARGE, 0,
			   temp == MR_TEMP_NORMAL && npages >= MR_FIRST_FIT_MIN_PAGES);
}

void mr_heap_free_pages(uint32_t page, uint32_t npages)
{
	mr_os_lock(&heap_lock);
	mr_heap.spans[page].kind = MR_SPAN_NONE;
	mr_buddy_free(&mr_heap, page, npages);
	mr_stats_publish(&mr_heap);
	mr_os_unlock(&heap_lock);
}

uint32_t mr_heap_alloc_huge(uint32_t nregions, uint32_t align_regions, enum mr_temp temp)
{
	uint32_t page, node = mr_os_current_node();

	mr_os_lock(&heap_lock);
	page = mr_buddy_alloc_huge_on(&mr_heap, nregions, align_regions, temp, node);
	if (page != MR_NONE) {
		mr_spans[page].temp = (uint8_t)temp;
	}
	mr_stats_publish(&mr_heap);
	mr_os_unlock(&heap_lock);
	return page;
}

void mr_heap_free_span(struct mr_span *s)
{
	uint32_t page = (uint32_t)(s - mr_spans);

	mr_os_lock(&heap_lock);
	if (s->kind == MR_SPAN_HUGE) {
		s->kind = MR_SPAN_NONE;
		mr_buddy_free_huge(&mr_heap, page);
	} else {
		s->kind = MR_SPAN_NONE;
		mr_buddy_free(&mr_heap, page, s->npages);
	}
	mr_stats_publish(&mr_heap);
	mr_os_unlock(&heap_lock);
}

bool mr_heap_resize_span(struct mr_span *s, uint64_t npages)
{
	uint32_t page = (uint32_t)(s - mr_spans), ro = mr_heap.region_order;
	bool ok = false;

	mr_os_lock(&heap_lock);
	if (s->kind == MR_SPAN_LARGE) {
		if (npages > (UINT64_C(1) << ro)) {
			ok = false;
		} else if (npages <= s->npages) {
			if (npages < s->npages) {
				uint32_t old = s->npages;

				s->npages = (uint32_t)npages;
				mr_buddy_free(&mr_heap, page + (uint32_t)npages, old - (uint32_t)npages);
			}
			ok = true;
		} else {
			ok = mr_buddy_grow(&mr_heap, page, s->npages, (uint32_t)npages);
		}
	} else if (s->kind == MR_SPAN_HUGE) {
		uint64_t nreg = (npages + (UINT64_C(1) << ro) - 1) >> ro;
		uint32_t cur = s->npages >> ro;

		if (npages <= (UINT64_C(1) << (ro - 1))) {
			ok = false;	/* much smaller: move it into the buddy heap */
		} else if (nreg <= cur) {
			mr_buddy_shrink_huge(&mr_heap, page, (uint32_t)nreg);
			ok = true;
		} else if (nreg <= mr_arena_max_regions) {
			ok = mr_buddy_grow_huge(&mr_heap, page, (uint32_t)nreg);
		}
	}
	mr_stats_publish(&mr_heap);
	mr_os_unlock(&heap_lock);
	return ok;
}

bool mr_heap_lower_free(uint32_t order, enum mr_temp temp, uint32_t page)
{
	uint32_t r = mr_page_region(&mr_heap, page);
	bool lower;

	if (r == 0)
		return false;
	/* With one thread the lock is free (its caller does not hold it): taken
	 * without trylock's page of libc (os.c, "locks"). */
	if (mr_os_single_threaded())
		mr_os_lock(&heap_lock);
	else if (!mr_os_trylock(&heap_lock))
		return false;
	lower = mr_buddy_lower_free(&mr_heap, order, temp, r);
	mr_os_unlock(&heap_lock);
	return lower;
}

/* ---- decay, trim, locks, stats ---- */

bool mr_heap_trim(void)
{
	uint64_t given;

	mr_os_lock(&heap_lock);
	given = mr_buddy_decay(&mr_heap, true);
	mr_stats_publish(&mr_heap);
	mr_os_unlock(&heap_lock);
	return given != 0;
}

void mr_heap_lock(void)
{
	mr_os_lock(&heap_lock);
}

void mr_heap_unlock(void)
{
	mr_os_unlock(&heap_lock);
}

void mr_heap_fork_lock(void)
{
	mr_os_fork_lock(&heap_lock);
}

void mr_heap_fork_unlock(void)
{
	mr_os_fork_unlock(&heap_lock);
}

void mr_heap_totals(struct mr_heap_totals *t)
{
	mr_stats_totals_zero(t);
	if (!mr_arena_base)
		return;
	mr_os_lock(&heap_lock);
	mr_stats_totals(&mr_heap, t);
	mr_os_unlock(&heap_lock);
}

void mr_heap_print_stats(void)
{
	mr_os_lock(&heap_lock);
	mr_stats_print(&mr_heap);
	mr_os_unlock(&heap_lock);
}

void mr_heap_export_open(bool tracking)
{
	/* The fork handlers even with one thread: a child exports under its own pid.
	 * Before the lock: registering them may allocate. */
	mr_os_run_lock_hook();
	mr_os_lock(&heap_lock);
	mr_stats_export_open(tracking);
	mr_stats_publish(&mr_heap);
	mr_os_unlock(&heap_lock);
}
