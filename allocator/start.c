/* The start-up heap: a first-fit heap of 64-byte granules in the library's BSS, with
 * two bitmaps (granules in use, and where live objects start) for placement, frees,
 * sizes and the checks that glibc makes. A granule is a cache line: objects handed
 * one after another to different threads never share one (alloc-bench's
 * falseshare: 16-byte granules put four workers' objects on each line, 7.6 s
 * against 0.14), as a slab's handout order keeps them apart in the arena (tcache.c,
 * slab_extend). A page of the heap is a word of the bitmap of granules in use.
 *
 * First fit, lowest first, like glibc's heap, which a short process's buffers reuse:
 * the kernel build's fixdep reads 150 files of 4-70 KiB each into a buffer it frees
 * before the next, between small objects it keeps; taken back from the top only,
 * the small ones pinned each buffer's space and its top rose to 1.5 MiB; first fit
 * keeps it under 96 KiB, in 24 pages (docs/allocator.md, "The start-up heap").
 *
 * It closes, for good, when an object does not fit or after MR_START_ALLOCS
 * allocations (a long-running program then has its thread caches, without this
 * heap's lock); its pages that then hold no live object are purged at once, and
 * the others as their last object is freed, so that it keeps no more than its live
 * objects' pages. */
#include "config.h"

#include <pthread.h>

#include "allocator/bitmap.h"
#include "allocator/os.h"
#include "allocator/start.h"
#include "allocator/tcache.h"

#define GRANULE_SHIFT 6
#define GRANULES (MR_START_MAX >> GRANULE_SHIFT)
#define WORDS (GRANULES / 64)
#define PAGE_GRANULES (MR_PAGE_SIZE >> GRANULE_SHIFT)
_Static_assert(PAGE_GRANULES == 64, "a page of the heap is a word of the bitmaps");

/* Page-aligned: its pages are the heap's alone, in the BSS's anonymous mapping
 * (past the file's last page), so that a purged page reads zero. */
char mr_start_heap[MR_START_MAX] __attribute__((aligned(MR_PAGE_SIZE)));
bool mr_start_closed;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t used[WORDS], starts[WORDS];
static uint64_t purged;			/* bit i: page i purged since the close */
static uint32_t limit;			/* granules it may use */
static uint32_t top;			/* granules ever handed out: the pages written */
static uint32_t low;			/* no free granule below it */
static uint32_t nallocs;
static uint64_t live_bytes;
_Static_assert(WORDS <= 64, "one bit a page in purged");

/* Where the live object starting at @g ends: the next object's start or the next
 * free granule. */
static uint32_t end_of(uint32_t g)
{
	uint32_t e = mr_next_bit(used, g + 1, limit, false);

	return mr_next_bit(starts, g + 1, e, true);
}

/* The lowest run of @n free granules, or GRANULES. */
static uint32_t first_fit(uint32_t n)
{
	uint32_t g = low, e;

	while (g + n <= limit) {
		g = mr_next_bit(used, g, limit, false);
		if (g + n > limit)
			break;
		e = mr_next_bit(used, g, g + n, true);
		if (e == g + n)
			return g;
		g = e;
	}
	return GRANULES;
}

/* @p's granule if it is a live object's start, else GRANULES. */
static uint32_t live_granule(const void *p)
{
	uintptr_t off = (uintptr_t)p - (uintptr_t)mr_start_heap;
	uint32_t g = (uint32_t)(off >> GRANULE_SHIFT);

	if ((off & ((1u << GRANULE_SHIFT) - 1)) || g >= limit || !mr_bit(starts, g))
		return GRANULES;
	return g;
}

/* Purge the written pages of [@p0, @p1) that hold no live object, once each (after
 * the close: none is handed out again). Under the lock. */
static void purge_free_pages(uint32_t p0, uint32_t p1)
{
	uint32_t written = (top + PAGE_GRANULES - 1) / PAGE_GRANULES, run = p0, i;

	if (p1 > written)
		p1 = written;
	for (i = p0; i <= p1; i++) {
		bool free_page = i < p1 && !used[i] && !(purged >> i & 1);

		if (free_page)
			continue;
		if (i > run) {
			mr_os_purge(mr_start_heap + (size_t)run * MR_PAGE_SIZE,
				    (size_t)(i - run) * MR_PAGE_SIZE);
			purged |= ((i - run == 64 ? 0 : UINT64_C(1) << (i - run)) - 1) << run;
		}
		run = i + 1;
	}
}

/* Granules [@g, @e) become an object's (or part of one). Under the lock. */
static void take_granules(uint32_t g, uint32_t e)
{
	mr_set_range(used, g, e, true);
	if (g == low)
		low = mr_next_bit(used, e, limit, false);
	if (e > top)
		top = e;
	live_bytes += (uint64_t)(e - g) << GRANULE_SHIFT;
}

/* Granules [@g, @e) of a live object become free: for the next allocation while the
 * heap is open, else their pages are purged once free. Under the lock. */
static void free_granules(uint32_t g, uint32_t e)
{
	mr_set_range(used, g, e, false);
	if (g < low)
		low = g;
	live_bytes -= (uint64_t)(e - g) << GRANULE_SHIFT;
	if (!mr_start_open())
		purge_free_pages(g / PAGE_GRANULES, (e + PAGE_GRANULES - 1) / PAGE_GRANULES);
}

static void close_heap(void)
{
	__atomic_store_n(&mr_start_closed, true, __ATOMIC_RELAXED);
	purge_free_pages(0, WORDS);
}

/* Before any allocation from it (start-up's once: no lock, which might run the lock
 * hook, whose pthread_atfork allocates). */
void mr_start_set(size_t bytes)
{
	limit = (uint32_t)((bytes < MR_START_MAX ? bytes : MR_START_MAX) >> GRANULE_SHIFT);
	if (!limit)
		__atomic_store_n(&mr_start_closed, true, __ATOMIC_RELAXED);
}

void *mr_start_alloc(size_t size)
{
	uint32_t n = size ? (uint32_t)((size + (1u << GRANULE_SHIFT) - 1) >> GRANULE_SHIFT) : 1;
	uint32_t g;
	void *p = NULL;

	if (size > MR_START_OBJ_MAX)
		return NULL;
	mr_os_lock(&lock);
	if (!mr_start_open()) {
		/* closed while this thread waited */
	} else if (nallocs == MR_START_ALLOCS || (g = first_fit(n)) == GRANULES) {
		close_heap();
	} else {
		nallocs++;
		take_granules(g, g + n);
		starts[g / 64] |= UINT64_C(1) << (g % 64);
		p = mr_start_heap + ((size_t)g << GRANULE_SHIFT);
	}
	mr_os_unlock(&lock);
	return p;
}

void mr_start_free(void *p)
{
	uint32_t g;

	mr_os_lock(&lock);
	g = live_granule(p);
	if (g == GRANULES) {
		mr_os_unlock(&lock);
		mr_heap_corrupt("free(): double free or invalid pointer");
	}
	free_granules(g, end_of(g));
	starts[g / 64] &= ~(UINT64_C(1) << (g % 64));
	mr_os_unlock(&lock);
}

size_t mr_start_usable(const void *p)
{
	size_t n = 0;
	uint32_t g;

	mr_os_lock(&lock);
	g = live_granule(p);
	if (g != GRANULES)
		n = (size_t)(end_of(g) - g) << GRANULE_SHIFT;
	mr_os_unlock(&lock);
	return n;
}

bool mr_start_resize(void *p, size_t size)
{
	uint32_t g, end, want;
	bool ok = false;

	mr_os_lock(&lock);
	g = live_granule(p);
	if (g == GRANULES) {
		mr_os_unlock(&lock);
		mr_heap_corrupt("realloc(): invalid pointer");
	}
	end = end_of(g);
	want = (uint32_t)((size + (1u << GRANULE_SHIFT) - 1) >> GRANULE_SHIFT);
	if (want == 0)
		want = 1;
	if (size <= MR_START_OBJ_MAX && want <= end - g) {
		/* Its granules past @size are free for the next (as glibc splits a chunk). */
		if (want < end - g)
			free_granules(g + want, end);
		ok = true;
	} else if (size <= MR_START_OBJ_MAX && mr_start_open() && g + want <= limit &&
		   mr_next_bit(used, end, g + want, true) == g + want) {
		/* The granules after it are free: it grows over them. */
		take_granules(end, g + want);
		ok = true;
	}
	mr_os_unlock(&lock);
	return ok;
}

void mr_start_totals(uint64_t *live_out, uint64_t *top_out)
{
	mr_os_lock(&lock);
	*live_out = live_bytes;
	/* its pages written and not purged */
	*top_out = ((top + PAGE_GRANULES - 1) / PAGE_GRANULES -
		    (uint64_t)__builtin_popcountll(purged)) * MR_PAGE_SIZE;
	mr_os_unlock(&lock);
}

void mr_start_fork_lock(void)
{
	mr_os_fork_lock(&lock);
}

void mr_start_fork_unlock(void)
{
	mr_os_fork_unlock(&lock);
}
