/* Large and huge objects: a request's bytes and alignment turned into pages of one
 * region (a span of the buddy heap) or whole regions (a huge run), from the page
 * heap (heap.c), which does the rest under its lock. */
#include "config.h"

#include <string.h>

#include "allocator/heap.h"
#include "allocator/internal.h"
#include "allocator/large.h"
#include "allocator/os.h"

/* ---- prefaulting the spans of call sites that write them whole ----
 * A fresh span's pages fault in one at a time as the program first writes them
 * (3.6 us a page in this VM: most of alloc-bench's frag); one madvise
 * (mr_os_populate) makes them resident about a third cheaper. Only pages the program
 * would write anyway may be made resident, or RSS grows (lifetimes writes 256 bytes
 * and the last of each object), so it is learned by call site: when a site gets a
 * span, the previous fresh span it got is looked at (mincore); after DENSE_RUN in a
 * row found wholly resident, the site's fresh spans (up to MR_OS_RESIDENT_MAX pages)
 * are prefaulted, except one in DENSE_PERIOD, left to fault as usual and looked at
 * next time: a site that stops writing its spans whole stops being prefaulted. A
 * site found otherwise is looked at again DENSE_PERIOD spans later, then twice as
 * many, up to 8 times (a mincore is a system call). Only fresh spans (MR_SPAN_ZEROED:
 * never used, or purged) count: a reused span is resident already. realloc's copies
 * are not learned (a grown buffer is often filled later, or never). The table is
 * shared and unlocked: a lost race costs a verdict, never a wrong pointer (only
 * counts of resident pages are read). */
#define DENSE_SLOTS 256
#define DENSE_RUN 4		/* wholly resident spans in a row before prefaulting */
#define DENSE_PERIOD 16		/* one span in this many is looked at */

/* A slot: the site's previous span (first page, pages), the site's tag, verdicts. */
#define DS_PAGE(e) ((uint32_t)(e))
#define DS_NPAGES(e) ((uint32_t)((e) >> 32) & 0x3ff)	/* <= MR_OS_RESIDENT_MAX; 0: empty */
#define DS_TAG(e) ((uint32_t)((e) >> 42) & 0xff)
#define DS_RUN(e) ((uint32_t)((e) >> 50) & 0x7)		/* wholly resident in a row */
#define DS_LOOK(e) ((uint32_t)((e) >> 53) & 1)		/* the span is to be looked at */
#define DS_SKIP(e) ((uint32_t)((e) >> 54) & 0xff)	/* spans until the next look */
#define DS_MISSES(e) ((uint32_t)((e) >> 62) & 0x3)	/* verdicts "not whole" in a row */
static uint64_t dense_sites[DENSE_SLOTS];

/* Whether the span [page, page + npages) just allocated from @site, @fresh or not,
 * is to be prefaulted; records it as the site's last span. */
static bool dense_site_prefault(const void *site, uint32_t page, uint32_t npages, bool fresh)
{
	uint64_t h = (uint64_t)(uintptr_t)site * UINT64_C(0x9e3779b97f4a7c15), e;
	uint64_t *slot = &dense_sites[h >> 56];
	uint32_t tag = (uint32_t)(h >> 48) & 0xff, run = 0, skip = 0, misses = 0, look = 0;
	bool prefault = false;

	e = __atomic_load_n(slot, __ATOMIC_RELAXED);
	if (DS_NPAGES(e) && DS_TAG(e) == tag) {
		run = DS_RUN(e);
		skip = DS_SKIP(e);
		misses = DS_MISSES(e);
		if (DS_LOOK(e) && (skip == 0 || run >= DENSE_RUN)) {
			uint32_t n = DS_NPAGES(e);

			if (mr_os_resident_pages(mr_page_addr(DS_PAGE(e)), n) == n) {
				run += run < 7;
				misses = 0;
			} else {
				run = 0;
				skip = (DENSE_PERIOD << misses) - 1;
				misses += misses < 3;
			}
		} else if (skip) {
			skip--;
		}
	}
	if (fresh) {
		if (run < DENSE_RUN) {
			look = skip == 0;
		} else if (skip) {
			prefault = true;
		} else {	/* the probe: left to fault, looked at next time */
			look = 1;
			skip = DENSE_PERIOD - 1;
		}
	}
	e = page | (uint64_t)npages << 32 | (uint64_t)tag << 42 | (uint64_t)run << 50 |
	    (uint64_t)look << 53 | (uint64_t)skip << 54 | (uint64_t)misses << 62;
	__atomic_store_n(slot, e, __ATOMIC_RELAXED);
	return prefault;
}

void mr_large_prefault_object(const void *site, void *p, size_t size, uint64_t clean)
{
	uintptr_t first = (uintptr_t)p & ~(uintptr_t)(MR_PAGE_SIZE - 1);
	uint32_t npages = (uint32_t)(((uintptr_t)p + size - first + MR_PAGE_SIZE - 1) >> MR_PAGE_SHIFT);
	uint64_t inner = npages > 2 ? ((UINT64_C(1) << (npages - 1)) - 1) & ~UINT64_C(1) : 0;

	if (npages < 2 || npages > 64)
		return;
	/* Fresh: its inner pages read zero (its ends may be its neighbours'). */
	if (dense_site_prefault(site, mr_addr_page((void *)first), npages, (clean & inner) == inner))
		mr_os_populate((void *)first, (size_t)npages << MR_PAGE_SHIFT);
}

bool mr_large_fits(size_t size, size_t align)
{
	size_t max_bytes = (size_t)mr_arena_max_regions << (mr_heap.region_order + MR_PAGE_SHIFT);

	return size <= max_bytes && align <= max_bytes;
}

/* ---- the span cache ----
 * A thread's freed spans of up to 64 KiB, kept for its next malloc of the same page
 * count (struct mr_span_cache). Without it every such malloc and free takes the page
 * heap's lock: with threads that allocate buffers of 32-64 KiB (a server's requests:
 * alloc-bench's server) a quarter of their time went to the lock. So only once the
 * process has a second thread: with one the lock is free, and a cached span is
 * memory kept back (sqlite peaked 0.6-1.2 MiB higher with it, git 0.5). Kept only
 * where no region below has a free block that would hold the span
 * (mr_heap_lower_free, which answers "no" when the lock is busy, as for a refill's
 * slab), so that spans are still placed lowest first: without the check, the
 * random-lifetime churn left live data in 12 of its 22 windows instead of 2. A
 * cached span stays a large span of the page heap, marked MR_SPAN_CACHED: freeing it
 * again, or reallocating it, is caught as for any free block. Only the thread that
 * cached a span hands it out; its exit and malloc_trim give them back. */

static uint32_t cache_take(struct mr_span_cache *sc, uint32_t npages)
{
	uint32_t page = sc->page[npages][--sc->n[npages]];

	sc->pages -= npages;
	mr_spans[page].flags &= (uint16_t)~MR_SPAN_CACHED;
	return page;
}

static bool cache_put(struct mr_span_cache *sc, struct mr_span *s)
{
	uint32_t npages = s->npages, page = (uint32_t)(s - mr_spans);

	if (mr_os_single_threaded() || s->kind != MR_SPAN_LARGE || s->temp != MR_TEMP_NORMAL ||
	    npages > MR_SPAN_CACHE_PAGES || sc->n[npages] == MR_SPAN_CACHE_SLOTS ||
	    sc->pages + npages > MR_SPAN_CACHE_MAX ||
	    mr_heap_lower_free(mr_pages_order(npages), MR_TEMP_NORMAL, page))
		return false;
	/* Its pages hold the program's data now: calloc must clear them. */
	s->flags = (uint16_t)((s->flags & ~MR_SPAN_ZEROED) | MR_SPAN_CACHED);
	sc->page[npages][sc->n[npages]++] = page;
	sc->pages += npages;
	return true;
}

void mr_large_cache_flush(struct mr_span_cache *sc)
{
	for (uint32_t npages = 1; npages <= MR_SPAN_CACHE_PAGES; npages++)
		while (sc->n[npages])
			mr_heap_free_span(&mr_spans[cache_take(sc, npages)]);
}

void *mr_large_alloc(size_t size, size_t align, enum mr_temp temp, const void *site,
		     struct mr_span_cache *sc)
{
	uint64_t npages;
	uint32_t ro = mr_heap.region_order, page, align_order = 0;

	if (size > MR_ARENA_MAX || size == 0)
		return NULL;
	npages = (size + MR_PAGE_SIZE - 1) >> MR_PAGE_SHIFT;	/* no wrap: size <= 1 TiB */
	if (align > MR_PAGE_SIZE)
		align_order = (uint32_t)__builtin_ctzll(align) - MR_PAGE_SHIFT;
	if (sc && site && !align_order && temp == MR_TEMP_NORMAL &&
	    npages <= MR_SPAN_CACHE_PAGES && sc->n[npages])
		return mr_page_addr(cache_take(sc, (uint32_t)npages));
	if (npages <= (UINT64_C(1) << ro) && align_order <= ro) {
		/* @site is NULL for realloc's moves: those keep the buddy block's room
		 * to grow in place. */
		page = site && !align_order ? mr_heap_alloc_big((uint32_t)npages, temp)
		       : mr_heap_alloc_pages((uint32_t)npages, align_order, temp);
		/* Outside the heap lock: the faults are the program's own cost. */
		if (site && page != MR_NONE && npages >= 2 && npages <= MR_OS_RESIDENT_MAX &&
		    dense_site_prefault(site, page, (uint32_t)npages,
					mr_spans[page].flags & MR_SPAN_ZEROED)) {
			mr_os_populate(mr_page_addr(page), (size_t)npages << MR_PAGE_SHIFT);
			return mr_page_addr(page);
		}
	} else {
		uint64_t nreg = (npages + (UINT64_C(1) << ro) - 1) >> ro;
		uint64_t areg = align_order > ro ? UINT64_C(1) << (align_order - ro) : 1;

		if (nreg > mr_arena_max_regions || areg > mr_arena_max_regions)
			return NULL;
		page = mr_heap_alloc_huge((uint32_t)nreg, (uint32_t)areg, temp);
	}
	if (page == MR_NONE)
		return NULL;
	/* A fresh span's first page, as a page fault would: the program writes the
	 * start of nearly every block (glibc's own header is there, so under glibc
	 * that page is always resident). Not realloc's moves: they move pages. */
	if (site && (mr_spans[page].flags & MR_SPAN_ZEROED))
		mr_os_populate(mr_page_addr(page), MR_PAGE_SIZE);
	return mr_page_addr(page);
}

void mr_large_free(struct mr_span *s, struct mr_span_cache *sc)
{
	if (!sc || !cache_put(sc, s))
		mr_heap_free_span(s);
}

bool mr_large_resize(struct mr_span *s, size_t size)
{
	/* Above the arena it cannot fit; below, the page count cannot wrap to a
	 * shrink (realloc(p, SIZE_MAX - 10) once freed the block and kept it). */
	if (size > MR_ARENA_MAX || size == 0)
		return false;
	return mr_heap_resize_span(s, (size + MR_PAGE_SIZE - 1) >> MR_PAGE_SHIFT);
}

void mr_large_move(void *to, void *from, size_t len)
{
	if (len >= MR_LARGE_MOVE_MIN && mr_in_arena(to) && !((uintptr_t)to & (MR_PAGE_SIZE - 1)) &&
	    mr_os_move_pages(to, from, (len + MR_PAGE_SIZE - 1) & ~(size_t)(MR_PAGE_SIZE - 1)))
		return;
	memcpy(to, from, len);
}

size_t mr_usable_size_span(const struct mr_span *s)
{
	if (s->kind == MR_SPAN_SLAB)
		return mr_class_size[s->cls];
	return (size_t)s->npages << MR_PAGE_SHIFT;
}
