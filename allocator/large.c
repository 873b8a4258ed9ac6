/* Large and huge objects: a request's bytes and alignment turned into pages of one
 * region (a span of the buddy heap) or whole regions (a huge run), from the page
 * heap (heap.c), which does the rest under its lock. */
#include "config.h"

#include "allocator/heap.h"
#include "allocator/internal.h"
#include "allocator/large.h"
#include "allocator/os.h"

bool mr_large_fits(size_t size, size_t align)
{
	size_t max_bytes = (size_t)mr_arena_max_regions << (mr_heap.region_order + MR_PAGE_SHIFT);

	return size <= max_bytes && align <= max_bytes;
}

void *mr_large_alloc(size_t size, size_t align, enum mr_temp temp)
{
	uint64_t npages;
	uint32_t ro = mr_heap.region_order, page, align_order = 0;

	if (size > MR_ARENA_MAX || size == 0)
		return NULL;
	npages = (size + MR_PAGE_SIZE - 1) >> MR_PAGE_SHIFT;	/* no wrap: size <= 1 TiB */
	if (align > MR_PAGE_SIZE)
		align_order = (uint32_t)__builtin_ctzll(align) - MR_PAGE_SHIFT;
	if (npages <= (UINT64_C(1) << ro) && align_order <= ro) {
		page = mr_heap_alloc_pages((uint32_t)npages, align_order, temp, MR_SPAN_LARGE);
	} else {
		uint64_t nreg = (npages + (UINT64_C(1) << ro) - 1) >> ro;
		uint64_t areg = align_order > ro ? UINT64_C(1) << (align_order - ro) : 1;

		if (nreg > mr_arena_max_regions || areg > mr_arena_max_regions)
			return NULL;
		page = mr_heap_alloc_huge((uint32_t)nreg, (uint32_t)areg, temp);
	}
	if (page == MR_NONE)
		return NULL;
	return mr_page_addr(page);
}

void mr_large_free(struct mr_span *s)
{
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

size_t mr_usable_size_span(const struct mr_span *s)
{
	if (s->kind == MR_SPAN_SLAB)
		return mr_class_size[s->cls];
	return (size_t)s->npages << MR_PAGE_SHIFT;
}
