/* The first-fit heap: objects of 16-128 KiB (MR_FIT_MIN < size <= MR_FIT_MAX) in
 * chunks of 4 MiB (a region, if smaller), each a span of the page heap whose first page's descriptor says
 * MR_SPAN_FIT (fit.h), with its header in its first granules: two bitmaps of 256-byte
 * granules (in use, and where live objects start) for placement, sizes, frees and
 * glibc's checks, as the start-up heap has (start.c), and a bit a page for the
 * pages wholly free and not purged (dirty) and those that read zero (clean).
 *
 * Placement: the lowest run of free granules that holds the object, in the lowest
 * chunk that has one (on the calling thread's node), so that live data packs
 * towards the bottom as the page heap's spans do; the chunks, sorted by address,
 * keep their longest free runs in a table scanned 64 at a time through the maxima
 * of each 64. A chunk is taken from the page heap (lowest first) when none has
 * room; an emptied one goes back to it, but one, kept for the next.
 *
 * Memory: a page wholly free after a free is dirty; after the decay delay
 * (MEMREG_DECAY_MS) the runs of 16 dirty pages and more (64 KiB, the page heap's
 * rule for free blocks) are purged, at malloc_trim every dirty page. A page purged
 * with MADV_DONTNEED, or fresh from the page heap's clean blocks, is clean until an
 * object takes part of it: calloc clears only the others.
 *
 * One lock for the heap, taken before the page heap's (a chunk's making and
 * release, and a decay's purges, which share the page heap's batch). */
#include "config.h"

#include <pthread.h>
#include <string.h>

#include "allocator/bitmap.h"
#include "allocator/fit.h"
#include "allocator/heap.h"
#include "allocator/os.h"

#define GSHIFT 8
_Static_assert(MR_FIT_GRANULE == 1u << GSHIFT, "the granule");
#define PAGE_G ((uint32_t)(MR_PAGE_SIZE >> GSHIFT))		/* granules a page */
#define MAX_PAGES (1u << MR_FIT_CHUNK_ORDER_MAX)
#define MAX_GRANULES (MAX_PAGES * PAGE_G)			/* 16384 */
#define WORDS (MAX_GRANULES / 64)
#define PWORDS (MAX_PAGES / 64)
#define MAX_CHUNKS 4096u			/* 16 GiB of 4 MiB chunks; beyond, spans */
#define PURGE_MIN_PAGES (1u << MR_PURGE_ORDER)	/* 64 KiB: the page heap's rule */
#define CHUNK_MAGIC UINT64_C(0x6d656d7265676669)
_Static_assert(MR_FIT_MAX / MR_FIT_GRANULE < 4096 / 2, "objects fit a 1 MiB chunk");

struct chunk {
	uint64_t magic;
	uint32_t live;			/* granules of live objects */
	uint32_t dirty_ms;		/* since when its dirty pages wait (decay clock) */
	uint32_t ndirty;		/* pages in dirty */
	uint64_t used[WORDS];		/* granules in use, the header's included */
	uint64_t starts[WORDS];		/* live objects' first granules */
	uint64_t dirty[PWORDS];		/* pages wholly free, not purged since a free */
	uint64_t clean[PWORDS];		/* pages that read zero */
};
#define HDR ((uint32_t)((sizeof(struct chunk) + MR_FIT_GRANULE - 1) >> GSHIFT))

bool mr_fit_on;
uint32_t mr_fit_page_mask = ~UINT32_C(0);
/* A chunk's order, pages and granules (mr_fit_init). */
static uint32_t chunk_order, chunk_pages, granules;

static pthread_mutex_t lock MR_LINE_ALIGNED = PTHREAD_MUTEX_INITIALIZER;
bool mr_fit_dirty;
static uint32_t nchunks, nempty, ndirty_chunks;
static uint32_t oldest_ms;		/* the oldest dirty_ms, while ndirty_chunks */
static uint64_t live_granules, dirty_pages, purged_pages;
/* The chunks by address: first pages, longest free runs (granules), nodes; the
 * longest run of each 64. */
static uint32_t ch_page[MAX_CHUNKS];
static uint16_t ch_max[MAX_CHUNKS];
static uint8_t ch_node[MAX_CHUNKS];
static uint16_t grp_max[MAX_CHUNKS / 64];

static struct chunk *chunk_at(uint32_t i)
{
	return (struct chunk *)mr_page_addr(ch_page[i]);
}

void mr_fit_init(uint32_t region_order)
{
	chunk_order = region_order < MR_FIT_CHUNK_ORDER_MAX ? region_order : MR_FIT_CHUNK_ORDER_MAX;
	chunk_pages = UINT32_C(1) << chunk_order;
	granules = chunk_pages * PAGE_G;
	mr_fit_page_mask = ~(chunk_pages - 1);
}

/* The index of the chunk starting at @page (it is in the table). */
static uint32_t index_of(uint32_t page)
{
	uint32_t lo = 0, hi = nchunks;

	while (hi - lo > 1) {
		uint32_t mid = (lo + hi) / 2;

		if (ch_page[mid] <= page)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* Group @gi's longest run, from its chunks'. */
static void group_max(uint32_t gi)
{
	uint16_t m = 0;

	for (uint32_t i = gi * 64; i < gi * 64 + 64 && i < nchunks; i++)
		if (ch_max[i] > m)
			m = ch_max[i];
	grp_max[gi] = m;
}

/* The groups from @from's on, after the table moved there. */
static void regroup(uint32_t from)
{
	for (uint32_t gi = from / 64; gi * 64 < MAX_CHUNKS && gi * 64 <= nchunks; gi++)
		group_max(gi);
}

static void set_max(uint32_t i, uint32_t v)
{
	uint16_t old = ch_max[i];

	ch_max[i] = (uint16_t)v;
	if (v > grp_max[i / 64])
		grp_max[i / 64] = (uint16_t)v;
	else if (v < old && old == grp_max[i / 64])
		group_max(i / 64);
}

static uint32_t longest_run(const struct chunk *c)
{
	uint32_t g, e, best = 0;

	for (g = HDR; (g = mr_next_run(c->used, g, granules, false, &e)) < granules; g = e)
		if (e - g > best)
			best = e - g;
	return best;
}

/* The start of the lowest run of at least @n free granules of @c (there is one:
 * else granules); *@run its length. */
static uint32_t first_fit(const struct chunk *c, uint32_t n, uint32_t *run)
{
	uint32_t g, e;

	for (g = HDR; (g = mr_next_run(c->used, g, granules, false, &e)) < granules; g = e)
		if (e - g >= n) {
			*run = e - g;
			return g;
		}
	return granules;
}

/* Where the live object starting at @g ends: the next object's start or the next
 * free granule. */
static uint32_t end_of(const struct chunk *c, uint32_t g)
{
	uint32_t e = mr_next_bit(c->used, g + 1, granules, false);

	return mr_next_bit(c->starts, g + 1, e, true);
}

/* ---- decay ----
 * The page heap's policy, as heap.c set it up in mr_heap (buddy.h): after the delay,
 * or once the dirty pages pass the dirty share of the live bytes (and its minimum),
 * those of chunks dirty for its age. The clock is read only while some chunk has
 * dirty pages (mr_fit_dirty). */
static uint32_t now_ms(void)
{
	return mr_ms_of(mr_os_now_ns());
}

static uint32_t decay_ms(void)
{
	uint64_t ms = mr_heap.decay_ns / 1000000u;

	return ms < UINT32_MAX / 2 ? (uint32_t)ms : UINT32_MAX / 2;
}

/* The delay now: the dirty share's age (no longer than the delay) once the dirty
 * pages pass it. */
static uint32_t delay_now(void)
{
	if (mr_heap.dirty_pct && dirty_pages > mr_heap.dirty_min_pages &&
	    (dirty_pages << MR_PAGE_SHIFT) * 100 > (live_granules << GSHIFT) * mr_heap.dirty_pct)
		return mr_heap.dirty_age_ms;
	return decay_ms();
}

/* Purge @c's runs of at least @min dirty pages with MADV_DONTNEED, queued in the OS
 * layer's batch (decay flushes it): clean after, unless a purge ever failed (locked
 * pages: decay then clears every clean bit). Whether it purged any. */
static bool purge_chunk(struct chunk *c, uint32_t min)
{
	uint32_t p, e;
	bool any = false;

	for (p = 0; (p = mr_next_run(c->dirty, p, chunk_pages, true, &e)) < chunk_pages; p = e) {
		if (e - p < min)
			continue;
		mr_os_purge_pages((char *)c + ((size_t)p << MR_PAGE_SHIFT),
				  (size_t)(e - p) << MR_PAGE_SHIFT, false);
		mr_set_range(c->dirty, p, e, false);
		if (!__atomic_load_n(&mr_os_purge_failed, __ATOMIC_RELAXED))
			mr_set_range(c->clean, p, e, true);
		c->ndirty -= e - p;
		dirty_pages -= e - p;
		purged_pages += e - p;
		any = true;
	}
	if (!c->ndirty && !--ndirty_chunks)
		__atomic_store_n(&mr_fit_dirty, false, __ATOMIC_RELAXED);
	return any;
}

/* The chunks dirty for @delay ms (all of them, every dirty page, if @all): their runs
 * of 64 KiB purged; the shorter ones wait another delay. The purges go out together
 * (one process_madvise where the kernel has it: bufchurn took 0.78 s with a madvise
 * a run, 3200 of them, against 0.60 without the dirty share), in the OS layer's
 * batch, which is the page heap's: under its lock. */
static bool decay(uint32_t now, uint32_t delay, bool all)
{
	static bool failure_seen;
	uint32_t oldest = now;
	bool any = false;

	mr_heap_lock();
	for (uint32_t i = 0; i < nchunks && ndirty_chunks; i++) {
		struct chunk *c = chunk_at(i);

		if (!c->ndirty)
			continue;
		if (all || (int32_t)(now - c->dirty_ms) >= (int32_t)delay) {
			any |= purge_chunk(c, all ? 1 : PURGE_MIN_PAGES);
			c->dirty_ms = now;
		}
		if (c->ndirty && (int32_t)(c->dirty_ms - oldest) < 0)
			oldest = c->dirty_ms;
	}
	mr_os_purge_flush();
	if (__atomic_load_n(&mr_os_purge_failed, __ATOMIC_RELAXED) && !failure_seen) {
		failure_seen = true;	/* what this batch marked clean may not be */
		for (uint32_t i = 0; i < nchunks; i++)
			memset(chunk_at(i)->clean, 0, sizeof(chunk_at(i)->clean));
	}
	mr_heap_unlock();
	oldest_ms = oldest;
	return any;
}

static void decay_check(void)
{
	uint32_t now, delay;

	if (!ndirty_chunks)
		return;
	now = now_ms();
	delay = delay_now();
	if ((int32_t)(now - oldest_ms) >= (int32_t)delay)
		decay(now, delay, false);
}

/* Pages [@p0, @p1) of @c were wholly freed: dirty now. */
static void pages_freed(struct chunk *c, uint32_t p0, uint32_t p1)
{
	uint32_t n = 0;

	for (uint32_t p = p0; p < p1; p++)
		if (!mr_bit(c->dirty, p)) {
			c->dirty[p / 64] |= UINT64_C(1) << (p % 64);
			n++;
		}
	if (!n)
		return;
	if (!c->ndirty) {
		c->dirty_ms = now_ms();
		if (!ndirty_chunks++) {
			oldest_ms = c->dirty_ms;
			__atomic_store_n(&mr_fit_dirty, true, __ATOMIC_RELAXED);
		}
	}
	c->ndirty += n;
	dirty_pages += n;
}

void mr_fit_tick(void)
{
	mr_os_lock(&lock);
	decay_check();
	mr_os_unlock(&lock);
}

/* ---- chunks ---- */

/* A new chunk from the page heap, in the table; its index, or MR_NONE. */
static uint32_t chunk_new(void)
{
	uint32_t page, pos;
	struct chunk *c;
	bool zeroed;

	if (nchunks == MAX_CHUNKS)
		return MR_NONE;
	page = mr_heap_alloc_pages(chunk_pages, chunk_order, MR_TEMP_NORMAL);
	if (page == MR_NONE)
		return MR_NONE;
	zeroed = mr_spans[page].flags & MR_SPAN_ZEROED;
	c = mr_page_addr(page);
	if (!zeroed)
		memset(c, 0, sizeof(*c));
	c->magic = CHUNK_MAGIC;
	mr_set_range(c->used, 0, HDR, true);
	if (zeroed)
		mr_set_range(c->clean, (HDR + PAGE_G - 1) / PAGE_G, chunk_pages, true);	/* but the header's */
	pos = nchunks ? index_of(page) + (ch_page[index_of(page)] < page) : 0;
	memmove(&ch_page[pos + 1], &ch_page[pos], (nchunks - pos) * sizeof(ch_page[0]));
	memmove(&ch_max[pos + 1], &ch_max[pos], (nchunks - pos) * sizeof(ch_max[0]));
	memmove(&ch_node[pos + 1], &ch_node[pos], (nchunks - pos) * sizeof(ch_node[0]));
	ch_page[pos] = page;
	ch_max[pos] = (uint16_t)(granules - HDR);
	ch_node[pos] = (uint8_t)mr_buddy_node_of(&mr_heap, mr_page_region(&mr_heap, page));
	nchunks++;
	nempty++;
	regroup(pos);
	/* Last: a free of a pointer into it may read it without the lock. */
	__atomic_store_n(&mr_spans[page].kind, MR_SPAN_FIT, __ATOMIC_RELEASE);
	return pos;
}

/* Give empty chunk @i back to the page heap. */
static void chunk_release(uint32_t i)
{
	struct chunk *c = chunk_at(i);
	uint32_t page = ch_page[i];

	if (c->ndirty) {
		dirty_pages -= c->ndirty;
		if (!--ndirty_chunks)
			__atomic_store_n(&mr_fit_dirty, false, __ATOMIC_RELAXED);
	}
	c->magic = 0;
	nchunks--;
	nempty--;
	memmove(&ch_page[i], &ch_page[i + 1], (nchunks - i) * sizeof(ch_page[0]));
	memmove(&ch_max[i], &ch_max[i + 1], (nchunks - i) * sizeof(ch_max[0]));
	memmove(&ch_node[i], &ch_node[i + 1], (nchunks - i) * sizeof(ch_node[0]));
	regroup(i);
	mr_heap_free_pages(page, chunk_pages);	/* its kind MR_SPAN_NONE */
}

/* The lowest chunk with a run of @n free granules on @node (any node: nnodes < 2). */
static uint32_t find(uint32_t n, uint32_t node)
{
	for (uint32_t gi = 0; gi * 64 < nchunks; gi++) {
		if (grp_max[gi] < n)
			continue;
		for (uint32_t i = gi * 64; i < gi * 64 + 64 && i < nchunks; i++)
			if (ch_max[i] >= n && (mr_os_nnodes < 2 || ch_node[i] == node))
				return i;
	}
	return MR_NONE;
}

/* Granules [@g, @e) of chunk @i become a live object's (or part of one); the
 * clean bits of its pages, from @g's, before. */
static uint64_t take(uint32_t i, uint32_t g, uint32_t e)
{
	struct chunk *c = chunk_at(i);
	uint32_t p0 = g / PAGE_G, p1 = (e - 1) / PAGE_G + 1;
	uint64_t clean = 0;

	if (!c->live)
		nempty--;
	mr_set_range(c->used, g, e, true);
	c->live += e - g;
	live_granules += e - g;
	for (uint32_t p = p0; p < p1; p++) {
		if (mr_bit(c->clean, p))
			clean |= UINT64_C(1) << (p - p0);
		if (mr_bit(c->dirty, p)) {
			dirty_pages--;
			if (!--c->ndirty && !--ndirty_chunks)
				__atomic_store_n(&mr_fit_dirty, false, __ATOMIC_RELAXED);
		}
	}
	mr_set_range(c->clean, p0, p1, false);
	mr_set_range(c->dirty, p0, p1, false);
	return clean;
}

/* Granules [@g, @e) of a live object of chunk @i become free. */
static void give(uint32_t i, uint32_t g, uint32_t e)
{
	struct chunk *c = chunk_at(i);
	uint32_t a, b, p0, p1;

	mr_set_range(c->used, g, e, false);
	c->live -= e - g;
	live_granules -= e - g;
	a = mr_prev_bit_end(c->used, HDR, g, true);
	b = mr_next_bit(c->used, e, granules, true);
	if (b - a > ch_max[i])
		set_max(i, b - a);
	/* Its pages now wholly free: those of [g, e) inside the free run [a, b). */
	p0 = (a + PAGE_G - 1) / PAGE_G > g / PAGE_G ? (a + PAGE_G - 1) / PAGE_G : g / PAGE_G;
	p1 = b / PAGE_G < (e + PAGE_G - 1) / PAGE_G ? b / PAGE_G : (e + PAGE_G - 1) / PAGE_G;
	if (p1 > p0)
		pages_freed(c, p0, p1);
	if (!c->live)
		nempty++;
}

/* @p's chunk index and granule if @p is a live object's start, else false. */
static bool live_object(const void *p, uint32_t *ip, uint32_t *gp)
{
	uint32_t head = mr_addr_page(p) & mr_fit_page_mask;
	const struct chunk *c = mr_page_addr(head);
	uintptr_t off = (uintptr_t)p - (uintptr_t)c;
	uint32_t g = (uint32_t)(off >> GSHIFT), i;

	if ((off & (MR_FIT_GRANULE - 1)) || g >= granules || !nchunks)
		return false;
	i = index_of(head);
	if (ch_page[i] != head || c->magic != CHUNK_MAGIC || !mr_bit(c->starts, g))
		return false;
	*ip = i;
	*gp = g;
	return true;
}

/* ---- the interface ---- */

void *mr_fit_alloc(size_t size, uint64_t *clean)
{
	uint32_t n = (uint32_t)((size + MR_FIT_GRANULE - 1) >> GSHIFT), i, g, run = 0;
	uint32_t node = mr_os_nnodes >= 2 ? mr_os_current_node() : 0;
	struct chunk *c;

	if (size > MR_FIT_MAX)
		return NULL;
	if (!n)
		n = 1;
	mr_os_lock(&lock);
	decay_check();
again:
	i = find(n, node);
	if (i == MR_NONE && (i = chunk_new()) == MR_NONE) {
		mr_os_unlock(&lock);
		return NULL;
	}
	c = chunk_at(i);
	g = first_fit(c, n, &run);
	if (MR_UNLIKELY(g == granules)) {	/* never: ch_max is exact */
		set_max(i, longest_run(c));
		goto again;
	}
	*clean = take(i, g, g + n);
	c->starts[g / 64] |= UINT64_C(1) << (g % 64);
	if (run == ch_max[i])
		set_max(i, longest_run(c));
	mr_os_unlock(&lock);
	return (char *)c + ((size_t)g << GSHIFT);
}

bool mr_fit_free(void *p)
{
	uint32_t i, g;
	struct chunk *c;

	mr_os_lock(&lock);
	if (!live_object(p, &i, &g)) {
		mr_os_unlock(&lock);
		return false;
	}
	c = chunk_at(i);
	give(i, g, end_of(c, g));
	c->starts[g / 64] &= ~(UINT64_C(1) << (g % 64));
	/* One empty chunk is kept for the next object; more go back. */
	if (!c->live && nempty > 1)
		chunk_release(i);
	else
		decay_check();
	mr_os_unlock(&lock);
	return true;
}

size_t mr_fit_usable(const void *p)
{
	uint32_t i, g;
	size_t n = 0;

	mr_os_lock(&lock);
	if (live_object(p, &i, &g))
		n = (size_t)(end_of(chunk_at(i), g) - g) << GSHIFT;
	mr_os_unlock(&lock);
	return n;
}

int mr_fit_resize(void *p, size_t size, size_t *usable)
{
	uint32_t i, g, e, want;
	struct chunk *c;
	int r = 0;

	mr_os_lock(&lock);
	if (!live_object(p, &i, &g)) {
		mr_os_unlock(&lock);
		return -1;
	}
	c = chunk_at(i);
	e = end_of(c, g);
	*usable = (size_t)(e - g) << GSHIFT;
	want = (uint32_t)((size + MR_FIT_GRANULE - 1) >> GSHIFT);
	if (!want)
		want = 1;
	if (size > MR_FIT_MAX) {
		r = 0;
	} else if (want <= e - g) {
		/* Its granules past @size are free for the next (as glibc splits a chunk). */
		if (want < e - g)
			give(i, g + want, e);
		r = 1;
	} else if (g + want <= granules && mr_next_bit(c->used, e, g + want, true) == g + want) {
		(void)take(i, e, g + want);
		set_max(i, longest_run(c));
		r = 1;
	}
	mr_os_unlock(&lock);
	return r;
}

bool mr_fit_trim(void)
{
	bool any = false;

	mr_os_lock(&lock);
	if (ndirty_chunks)
		any = decay(now_ms(), 0, true);
	for (uint32_t i = nchunks; i-- > 0;)
		if (!chunk_at(i)->live) {
			chunk_release(i);
			any = true;
		}
	mr_os_unlock(&lock);
	return any;
}

void mr_fit_totals(uint64_t *dirty, uint64_t *purged)
{
	mr_os_lock(&lock);
	*dirty = dirty_pages << MR_PAGE_SHIFT;
	*purged = purged_pages << MR_PAGE_SHIFT;
	mr_os_unlock(&lock);
}

void mr_fit_fork_lock(void)
{
	mr_os_fork_lock(&lock);
}

void mr_fit_fork_unlock(void)
{
	mr_os_fork_unlock(&lock);
}
