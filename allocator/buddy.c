/* The region-sorted buddy page heap: per order, free blocks kept per region, and a
 * two-level bitmap per order of the regions that have one, so the lowest (or highest)
 * region with a free block of order >= k is a few bit scans away. */
#include "config.h"

#include <string.h>

#include "allocator/internal.h"

#define ORDER_PAGES(k) (UINT32_C(1) << (k))

static void bitmap_set(struct mr_heap *h, uint32_t order, uint32_t r)
{
	h->bitmap[order][r / 64] |= UINT64_C(1) << (r % 64);
	h->summary[order] |= UINT64_C(1) << (r / 64);
}

static void bitmap_clear(struct mr_heap *h, uint32_t order, uint32_t r)
{
	h->bitmap[order][r / 64] &= ~(UINT64_C(1) << (r % 64));
	if (!h->bitmap[order][r / 64])
		h->summary[order] &= ~(UINT64_C(1) << (r / 64));
}

/* Lowest (highest) region with a free block of exactly @order, MR_NONE if none. */
static uint32_t bitmap_first(const struct mr_heap *h, uint32_t order, bool highest)
{
	uint64_t s = h->summary[order];
	uint32_t w;

	if (!s)
		return MR_NONE;
	if (highest) {
		w = 63 - (uint32_t)__builtin_clzll(s);
		return w * 64 + 63 - (uint32_t)__builtin_clzll(h->bitmap[order][w]);
	}
	w = (uint32_t)__builtin_ctzll(s);
	return w * 64 + (uint32_t)__builtin_ctzll(h->bitmap[order][w]);
}

uint32_t mr_buddy_find(const struct mr_heap *h, uint32_t order, bool highest)
{
	uint32_t best = MR_NONE, k, r;

	for (k = order; k <= h->region_order; k++) {
		r = bitmap_first(h, k, highest);
		if (r == MR_NONE)
			continue;
		if (best == MR_NONE || (highest ? r > best : r < best))
			best = r;
	}
	return best;
}

static void list_push(struct mr_heap *h, uint32_t page, uint32_t order)
{
	uint32_t r = mr_page_region(h, page);
	struct mr_region_info *ri = &h->regions[r];
	struct mr_span *s = &h->spans[page];

	s->kind = MR_SPAN_FREE;
	s->order = (uint8_t)order;
	s->head = page;
	s->prev = MR_NONE;
	s->next = ri->free_head[order];
	if (s->next != MR_NONE)
		h->spans[s->next].prev = page;
	else
		bitmap_set(h, order, r);
	ri->free_head[order] = page;
}

static void list_del(struct mr_heap *h, uint32_t page)
{
	struct mr_span *s = &h->spans[page];
	uint32_t r = mr_page_region(h, page), order = s->order;
	struct mr_region_info *ri = &h->regions[r];

	if (s->prev != MR_NONE)
		h->spans[s->prev].next = s->next;
	else
		ri->free_head[order] = s->next;
	if (s->next != MR_NONE)
		h->spans[s->next].prev = s->prev;
	if (ri->free_head[order] == MR_NONE)
		bitmap_clear(h, order, r);
	s->kind = MR_SPAN_NONE;
}

static void account(struct mr_heap *h, uint32_t r, int64_t delta_pages)
{
	struct mr_region_info *ri = &h->regions[r];

	ri->used_pages = (uint32_t)((int64_t)ri->used_pages + delta_pages);
	h->used_pages = (uint64_t)((int64_t)h->used_pages + delta_pages);
	if (delta_pages > 0) {
		if (ri->used_pages > ri->peak_pages)
			ri->peak_pages = ri->used_pages;
		if (h->used_pages > h->peak_pages)
			h->peak_pages = h->used_pages;
		if (!ri->touched) {
			ri->touched = 1;
			h->regions_touched++;
		}
		ri->purged = 0;
		if (ri->pending) {
			ri->pending = 0;
			h->npending--;
		}
	} else if (ri->used_pages == 0 && ri->state == MR_REGION_ACTIVE && !ri->purged &&
		   !ri->pending) {
		ri->pending = 1;
		ri->empty_since_ns = h->ops->now_ns();
		if (!h->npending++ || ri->empty_since_ns + h->decay_ns < h->next_decay_ns)
			h->next_decay_ns = ri->empty_since_ns + h->decay_ns;
	}
}

/* Free the block [page, page + 2^order), coalescing with its free buddies. */
static void free_block(struct mr_heap *h, uint32_t page, uint32_t order)
{
	while (order < h->region_order) {
		uint32_t buddy = page ^ ORDER_PAGES(order);
		struct mr_span *b = &h->spans[buddy];

		if (b->kind != MR_SPAN_FREE || b->order != order)
			break;
		list_del(h, buddy);
		if (buddy < page) {
			h->spans[page].kind = MR_SPAN_NONE;
			page = buddy;
		}
		order++;
	}
	list_push(h, page, order);
}

/* Free [page, page + n) as maximal aligned blocks. */
static void free_range(struct mr_heap *h, uint32_t page, uint32_t n)
{
	uint32_t end = page + n;

	while (page < end) {
		uint32_t k = page ? (uint32_t)__builtin_ctz(page) : h->region_order;

		if (k > h->region_order)
			k = h->region_order;
		while (page + ORDER_PAGES(k) > end)
			k--;
		h->spans[page].kind = MR_SPAN_NONE;
		free_block(h, page, k);
		page += ORDER_PAGES(k);
	}
}

/* Commit a never-used region; its free lists start empty (set here, not at init,
 * so start-up touches none of the region table). */
static int commit_region(struct mr_heap *h, uint32_t r)
{
	struct mr_region_info *ri = &h->regions[r];
	uint32_t k;

	if (h->ops->commit(h, r) != 0)
		return -1;
	for (k = 0; k < MR_ORDERS; k++)
		ri->free_head[k] = MR_NONE;
	h->regions_opened++;
	return 0;
}

static int open_region(struct mr_heap *h, uint32_t r)
{
	struct mr_region_info *ri = &h->regions[r];
	uint32_t page = r << h->region_order;

	if (commit_region(h, r) != 0)
		return -1;
	ri->state = MR_REGION_ACTIVE;
	ri->purged = 1;		/* fresh: nothing resident yet */
	list_push(h, page, h->region_order);
	return 0;
}

/* The region to take an order-@order block from: the lowest (hot, normal) or the
 * highest (cold) region with one inside the temperature's zone, else a new region
 * opened at the zone's edge, else any region with one (the arena is full). */
static uint32_t pick_region(struct mr_heap *h, uint32_t order, enum mr_temp temp)
{
	bool cold = temp == MR_TEMP_COLD;

	for (;;) {
		uint32_t r = mr_buddy_find(h, order, cold), n;

		if (r != MR_NONE && (cold ? r >= h->cold_bottom : r < h->hot_top))
			return r;
		if (h->hot_top >= h->cold_bottom)
			return r;
		n = cold ? h->cold_bottom - 1 : h->hot_top;
		if (h->regions[n].state == MR_REGION_UNUSED && open_region(h, n) != 0)
			return r;
		if (cold)
			h->cold_bottom = n;
		else
			h->hot_top = n + 1;
	}
}

/* Carve [lo, hi) out of the free block (page, order): the parts outside go back free. */
static void carve(struct mr_heap *h, uint32_t page, uint32_t order, uint32_t lo, uint32_t hi)
{
	uint32_t end = page + ORDER_PAGES(order), half;

	if (page >= lo && end <= hi)
		return;
	if (end <= lo || page >= hi) {
		list_push(h, page, order);
		return;
	}
	half = ORDER_PAGES(order - 1);
	carve(h, page, order - 1, lo, hi);
	carve(h, page + half, order - 1, lo, hi);
}

uint32_t mr_buddy_alloc(struct mr_heap *h, uint32_t npages, uint32_t align_order,
			enum mr_temp temp)
{
	uint32_t order = npages <= 1 ? 0 : 32 - (uint32_t)__builtin_clz(npages - 1);
	uint32_t r, k, page;

	if (align_order > order)
		order = align_order;
	if (npages == 0 || order > h->region_order)
		return MR_NONE;
	r = pick_region(h, order, temp);
	if (r == MR_NONE)
		return MR_NONE;
	for (k = order; k <= h->region_order; k++)
		if (h->regions[r].free_head[k] != MR_NONE)
			break;
	if (k > h->region_order)
		return MR_NONE;
	page = h->regions[r].free_head[k];
	list_del(h, page);
	carve(h, page, k, page, page + npages);
	h->spans[page].head = page;
	h->spans[page].npages = npages;
	account(h, r, npages);
	return page;
}

void mr_buddy_free(struct mr_heap *h, uint32_t page, uint32_t npages)
{
	uint32_t r = mr_page_region(h, page);

	free_range(h, page, npages);
	account(h, r, -(int64_t)npages);
	if (h->npending)
		mr_buddy_decay(h, false);
}

/* The free block containing @page, or MR_NONE: its head is @page rounded down to
 * the block's order, and only current free heads carry MR_SPAN_FREE. */
static uint32_t free_block_of(const struct mr_heap *h, uint32_t page)
{
	uint32_t k;

	for (k = 0; k <= h->region_order; k++) {
		uint32_t head = page & ~(ORDER_PAGES(k) - 1);
		const struct mr_span *s = &h->spans[head];

		if (s->kind == MR_SPAN_FREE && s->order == k)
			return head;
	}
	return MR_NONE;
}

bool mr_buddy_grow(struct mr_heap *h, uint32_t page, uint32_t old_npages, uint32_t new_npages)
{
	uint32_t lo = page + old_npages, hi = page + new_npages, x, r = mr_page_region(h, page);

	if (new_npages <= old_npages)
		return true;
	if (mr_page_region(h, hi - 1) != r)
		return false;
	for (x = lo; x < hi;) {
		uint32_t b = free_block_of(h, x);

		if (b == MR_NONE)
			return false;
		x = b + ORDER_PAGES(h->spans[b].order);
	}
	for (x = lo; x < hi;) {
		uint32_t b = free_block_of(h, x), k = h->spans[b].order;

		list_del(h, b);
		carve(h, b, k, lo, hi);
		x = b + ORDER_PAGES(k);
	}
	h->spans[page].npages = new_npages;
	account(h, r, new_npages - old_npages);
	return true;
}

/* Huge spans: runs of whole regions. A region is free for a run if it was never
 * opened or holds one free block of the top order. */
static bool region_free(const struct mr_heap *h, uint32_t r)
{
	const struct mr_region_info *ri = &h->regions[r];

	return ri->state == MR_REGION_UNUSED ||
	       (ri->state == MR_REGION_ACTIVE && ri->used_pages == 0);
}

/* Returns -1 if a commit failed, else 1 if every region taken was zero (never used,
 * or purged), 0 if some hold old data. */
static int take_regions(struct mr_heap *h, uint32_t first, uint32_t n)
{
	uint32_t r;
	int zero = 1;

	for (r = first; r < first + n; r++) {
		struct mr_region_info *ri = &h->regions[r];

		if (ri->state != MR_REGION_UNUSED && !ri->purged)
			zero = 0;
		if (ri->state == MR_REGION_UNUSED) {
			if (commit_region(h, r) != 0)
				return -1;
		} else {
			list_del(h, r << h->region_order);
		}
		if (ri->pending) {
			ri->pending = 0;
			h->npending--;
		}
		ri->state = MR_REGION_HUGE;
		account(h, r, ORDER_PAGES(h->region_order));
	}
	return zero;
}

uint32_t mr_buddy_alloc_huge(struct mr_heap *h, uint32_t nregions, uint32_t align_regions,
			     enum mr_temp temp)
{
	bool cold = temp == MR_TEMP_COLD;
	uint32_t first, r, page;
	int64_t i;
	int zero;

	if (!align_regions)
		align_regions = 1;
	if (nregions == 0 || nregions > h->nregions)
		return MR_NONE;
	first = MR_NONE;
	for (i = cold ? (int64_t)((h->nregions - nregions) / align_regions * align_regions) : 0;
	     i >= 0 && i + nregions <= h->nregions; i += cold ? -(int64_t)align_regions : align_regions) {
		for (r = 0; r < nregions && region_free(h, (uint32_t)i + r); r++)
			;
		if (r == nregions) {
			first = (uint32_t)i;
			break;
		}
	}
	if (first == MR_NONE)
		return MR_NONE;
	zero = take_regions(h, first, nregions);
	if (zero < 0)
		return MR_NONE;
	if (cold) {
		if (first < h->cold_bottom && first >= h->hot_top)
			h->cold_bottom = first;
	} else if (first + nregions > h->hot_top && first + nregions <= h->cold_bottom) {
		h->hot_top = first + nregions;
	}
	page = first << h->region_order;
	h->regions[first].huge_regions = nregions;
	h->spans[page].kind = MR_SPAN_HUGE;
	h->spans[page].head = page;
	h->spans[page].npages = nregions << h->region_order;
	h->spans[page].flags = zero ? MR_HUGE_ZEROED : 0;
	return page;
}

/* Give regions [first, first + n) of a huge run back: returned to the OS at once
 * (they are large) and kept as free top-order blocks, counted empty. */
static void release_regions(struct mr_heap *h, uint32_t first, uint32_t n)
{
	uint32_t r;

	h->ops->purge(h, first, n);
	h->purges++;
	for (r = first; r < first + n; r++) {
		struct mr_region_info *ri = &h->regions[r];

		ri->state = MR_REGION_ACTIVE;
		account(h, r, -(int64_t)ORDER_PAGES(h->region_order));
		if (ri->pending) {
			ri->pending = 0;
			h->npending--;
		}
		ri->purged = 1;
		ri->huge_regions = 0;
		list_push(h, r << h->region_order, h->region_order);
	}
}

void mr_buddy_free_huge(struct mr_heap *h, uint32_t page)
{
	uint32_t first = mr_page_region(h, page);

	release_regions(h, first, h->regions[first].huge_regions);
}

bool mr_buddy_grow_huge(struct mr_heap *h, uint32_t page, uint32_t new_nregions)
{
	uint32_t first = mr_page_region(h, page), old = h->regions[first].huge_regions, r;

	if (new_nregions <= old)
		return true;
	if (first + new_nregions > h->nregions)
		return false;
	for (r = first + old; r < first + new_nregions; r++)
		if (!region_free(h, r))
			return false;
	if (take_regions(h, first + old, new_nregions - old) < 0)
		return false;
	if (first + new_nregions > h->hot_top && first < h->hot_top &&
	    first + new_nregions <= h->cold_bottom)
		h->hot_top = first + new_nregions;
	h->regions[first].huge_regions = new_nregions;
	h->spans[page].npages = new_nregions << h->region_order;
	return true;
}

void mr_buddy_shrink_huge(struct mr_heap *h, uint32_t page, uint32_t new_nregions)
{
	uint32_t first = mr_page_region(h, page), old = h->regions[first].huge_regions;

	if (new_nregions >= old || new_nregions == 0)
		return;
	release_regions(h, first + new_nregions, old - new_nregions);
	h->regions[first].huge_regions = new_nregions;
	h->spans[page].npages = new_nregions << h->region_order;
}

static void rewrite_top_block(struct mr_heap *h, uint32_t r)
{
	struct mr_span *s = &h->spans[r << h->region_order];

	s->kind = MR_SPAN_FREE;
	s->order = (uint8_t)h->region_order;
	s->head = r << h->region_order;
	s->next = s->prev = MR_NONE;
}

void mr_buddy_decay(struct mr_heap *h, bool force)
{
	uint64_t now = h->ops->now_ns(), next = UINT64_MAX;
	uint32_t r;

	if (!h->npending || (!force && now < h->next_decay_ns))
		return;
	for (r = 0; r < h->nregions && h->npending; r++) {
		struct mr_region_info *ri = &h->regions[r];

		if (!ri->pending)
			continue;
		if (!force && now - ri->empty_since_ns < h->decay_ns) {
			if (ri->empty_since_ns + h->decay_ns < next)
				next = ri->empty_since_ns + h->decay_ns;
			continue;
		}
		ri->pending = 0;
		h->npending--;
		h->ops->purge(h, r, 1);
		h->purges++;
		ri->purged = 1;
		/* The purge may have dropped the region's descriptors: rewrite its only
		 * block's (the list head and the bitmaps live in the heap, untouched). */
		rewrite_top_block(h, r);
	}
	h->next_decay_ns = next;
}

const char *mr_buddy_check(const struct mr_heap *h)
{
	uint32_t r, k, w;
	uint64_t used = 0;

	for (k = 0; k <= h->region_order; k++) {
		for (w = 0; w < MR_REGION_WORDS; w++)
			if (!!h->bitmap[k][w] != !!(h->summary[k] & (UINT64_C(1) << w)))
				return "summary bit disagrees with its bitmap word";
	}
	for (r = 0; r < h->nregions; r++) {
		const struct mr_region_info *ri = &h->regions[r];
		uint32_t free_pages = 0;

		if (ri->state == MR_REGION_UNUSED) {
			if (ri->used_pages)
				return "pages used in a region never opened";
			continue;
		}

		for (k = 0; k <= h->region_order; k++) {
			uint32_t p = ri->free_head[k], prev = MR_NONE;
			bool bit = h->bitmap[k][r / 64] & (UINT64_C(1) << (r % 64));

			if (bit != (p != MR_NONE))
				return "region bitmap bit disagrees with its free list";
			for (; p != MR_NONE; prev = p, p = h->spans[p].next) {
				const struct mr_span *s = &h->spans[p];
				uint32_t q, buddy = p ^ ORDER_PAGES(k);

				if (mr_page_region(h, p) != r)
					return "free block listed in another region";
				if (s->kind != MR_SPAN_FREE || s->order != k)
					return "listed block is not marked free of its order";
				if (s->prev != prev)
					return "free list back link broken";
				if (p & (ORDER_PAGES(k) - 1))
					return "free block not aligned to its order";
				if (k < h->region_order && h->spans[buddy].kind == MR_SPAN_FREE &&
				    h->spans[buddy].order == k)
					return "two free buddies not coalesced";
				for (q = p + 1; q < p + ORDER_PAGES(k); q++)
					if (h->spans[q].kind == MR_SPAN_FREE)
						return "free blocks overlap";
				free_pages += ORDER_PAGES(k);
			}
		}
		if (ri->state == MR_REGION_ACTIVE &&
		    free_pages + ri->used_pages != ORDER_PAGES(h->region_order))
			return "free + used pages of a region differ from its size";
		if (ri->state != MR_REGION_ACTIVE && free_pages)
			return "free blocks in a region not active";
		used += ri->used_pages;
	}
	if (used != h->used_pages)
		return "heap used pages differ from the sum over regions";
	return NULL;
}

void mr_buddy_init(struct mr_heap *h, char *base, struct mr_span *spans, uint32_t region_order,
		   uint32_t nregions, uint64_t decay_ns, const struct mr_heap_ops *ops)
{
	h->base = base;
	h->spans = spans;
	h->region_order = region_order;
	h->nregions = nregions;
	h->cold_bottom = nregions;
	h->decay_ns = decay_ns;
	h->ops = ops;
}
