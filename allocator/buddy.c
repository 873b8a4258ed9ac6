/* The region-sorted buddy page heap: per order, free blocks kept per region, and a
 * two-level bitmap per order of the regions that have one, so the lowest (or highest)
 * region with a free block of order >= k is a few bit scans away. */
#include "config.h"

#include <string.h>

#include "allocator/buddy.h"

#define ORDER_PAGES(k) (UINT32_C(1) << (k))

static void bitmap_set(struct mr_heap *h, uint32_t order, uint32_t r)
{
	h->bitmap[r / 64][order] |= UINT64_C(1) << (r % 64);
	h->summary[order] |= UINT64_C(1) << (r / 64);
}

static void bitmap_clear(struct mr_heap *h, uint32_t order, uint32_t r)
{
	h->bitmap[r / 64][order] &= ~(UINT64_C(1) << (r % 64));
	if (!h->bitmap[r / 64][order])
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
		return w * 64 + 63 - (uint32_t)__builtin_clzll(h->bitmap[w][order]);
	}
	w = (uint32_t)__builtin_ctzll(s);
	return w * 64 + (uint32_t)__builtin_ctzll(h->bitmap[w][order]);
}

/* ---- a region's untouched top (mr_region_info.fresh) ----
 * It is the free blocks [fresh, end) would split into, none of them written: the
 * bitmaps show it at the largest order it can hand out aligned, which covers every
 * smaller one (a search asks for an order or more). */

static uint32_t align_up(uint32_t v, uint32_t order)
{
	return (v + ORDER_PAGES(order) - 1) & ~(ORDER_PAGES(order) - 1);
}

/* The largest order the untouched top of @ri can hand out, MR_NONE if it is empty:
 * a run up to a power-of-two end splits into one block per bit of its length, the
 * largest last. */
static uint32_t fresh_order(const struct mr_heap *h, const struct mr_region_info *ri)
{
	uint32_t n = ORDER_PAGES(h->region_order) - ri->fresh;

	return n ? 31 - (uint32_t)__builtin_clz(n) : MR_NONE;
}

/* The order of the first block of order @k or more the untouched top of @ri would
 * split into (it starts at the top's bottom aligned to 2^@k), MR_NONE if none: a
 * search for the smallest free block that fits weighs it against the lists. */
static uint32_t fresh_fit(const struct mr_heap *h, const struct mr_region_info *ri, uint32_t k)
{
	uint32_t at = align_up(ri->fresh, k);

	if (at >= ORDER_PAGES(h->region_order))
		return MR_NONE;
	return at ? (uint32_t)__builtin_ctz(at) : h->region_order;
}

/* Region @r's untouched top now starts at offset @fresh. */
static void set_fresh(struct mr_heap *h, uint32_t r, uint32_t fresh)
{
	struct mr_region_info *ri = &h->regions[r];
	uint32_t old = fresh_order(h, ri), k;

	ri->fresh = fresh;
	k = fresh_order(h, ri);
	if (k == old)
		return;
	if (old != MR_NONE && ri->free_head[old] == MR_NONE)
		bitmap_clear(h, old, r);
	if (k != MR_NONE)
		bitmap_set(h, k, r);
}

/* Lowest (highest) region in [lo, hi) with a free block of order @order or more:
 * the union of those orders' summary words narrows the search to bitmap words with a
 * bit set in one of them, and the union of their bitmap words finds the region. One
 * pass over the orders per word looked at (a refill asks this for every slab it
 * reuses: mr_buddy_lower_free), instead of a search per order. */
uint32_t mr_buddy_find_range(const struct mr_heap *h, uint32_t order, uint32_t lo, uint32_t hi,
			     bool highest)
{
	uint32_t wlo, whi, w, n, k;
	uint64_t cand = 0, bits;

	if (lo == 0 && hi >= h->nregions)
		return mr_buddy_find(h, order, highest);
	if (lo >= hi)
		return MR_NONE;
	wlo = lo / 64;
	whi = (hi - 1) / 64;
	for (k = order; k <= h->region_order; k++)
		cand |= h->summary[k];
	cand &= (~UINT64_C(0) << wlo) & (whi == 63 ? ~UINT64_C(0) : (UINT64_C(1) << (whi + 1)) - 1);
	while (cand) {
		w = highest ? 63 - (uint32_t)__builtin_clzll(cand) : (uint32_t)__builtin_ctzll(cand);
		bits = 0;
		for (k = order; k <= h->region_order; k++)
			bits |= h->bitmap[w][k];
		if (w == wlo)
			bits &= ~UINT64_C(0) << (lo % 64);
		if (w == whi) {
			n = hi - whi * 64;	/* 1..64 */
			bits &= n == 64 ? ~UINT64_C(0) : (UINT64_C(1) << n) - 1;
		}
		if (bits)
			return w * 64 + (highest ? 63 - (uint32_t)__builtin_clzll(bits) :
					 (uint32_t)__builtin_ctzll(bits));
		cand &= ~(UINT64_C(1) << w);
	}
	return MR_NONE;
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

/* The pages a free block of @order in state @st adds to the dirty share: those the
 * decay could purge (dirty, MR_PURGE_ORDER and up), else none. */
static uint32_t dirty_pages_of(uint32_t order, uint32_t st)
{
	return (st & MR_FREE_DIRTY) && order >= MR_PURGE_ORDER ? ORDER_PAGES(order) : 0;
}

/* A free block of @order in state @st joins (@sign 1) or leaves (-1) the dirty pages. */
static void dirty_count(struct mr_heap *h, uint32_t order, uint32_t st, int sign)
{
	uint64_t n = dirty_pages_of(order, st);

	h->dirty_pages = sign > 0 ? h->dirty_pages + n : h->dirty_pages - n;
}

/* Push the free block (page, order) of state @st (MR_FREE_*), freed at @freed_ms. */
static void list_push(struct mr_heap *h, uint32_t page, uint32_t order, uint32_t st,
		      uint32_t freed_ms)
{
	uint32_t r = mr_page_region(h, page);
	struct mr_region_info *ri = &h->regions[r];
	struct mr_span *s = &h->spans[page];

	s->kind = MR_SPAN_FREE;
	s->order = (uint8_t)order;
	s->head = page;
	s->flags = st;
	s->freed_ms = freed_ms;
	dirty_count(h, order, st, 1);
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

	dirty_count(h, order, s->flags, -1);
	if (s->prev != MR_NONE)
		h->spans[s->prev].next = s->next;
	else
		ri->free_head[order] = s->next;
	if (s->next != MR_NONE)
		h->spans[s->next].prev = s->prev;
	if (ri->free_head[order] == MR_NONE && order != fresh_order(h, ri))
		bitmap_clear(h, order, r);
	s->kind = MR_SPAN_NONE;
}

/* Region @r's stats changed: the export (stats.c) rewrites its entry only. */
static void changed(struct mr_heap *h, uint32_t r)
{
	if (!h->changes_tracked)
		return;
	h->changed[r / 64] |= UINT64_C(1) << (r % 64);
	h->changed_summary |= UINT64_C(1) << (r / 64);
}

static void account(struct mr_heap *h, uint32_t r, int64_t delta_pages)
{
	struct mr_region_info *ri = &h->regions[r];

	changed(h, r);
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

/* ---- free block state (MR_FREE_*) and the purge of free runs ---- */

static void purge_dirty(struct mr_heap *h, uint64_t now);

static bool dirty_share_passed(const struct mr_heap *h)
{
	return h->dirty_pct && h->dirty_pages > h->dirty_min_pages &&
	       h->dirty_pages * 100 > h->used_pages * h->dirty_pct;
}

/* After each page-heap operation that frees, allocates or grows a span: the purges
 * that are due, by the decay delay or by the dirty share. Not on frees alone: a
 * program that only grows its buffers after freeing one would keep that one's pages
 * to its end (memory.c's no-free). */
static void purges_due(struct mr_heap *h, uint64_t now_ns)
{
	if ((h->npending && now_ns >= h->next_decay_ns) || now_ns >= h->runs_due_ns)
		mr_buddy_decay(h, false);
	if (dirty_share_passed(h) && now_ns >= h->dirty_next_ns)
		purge_dirty(h, now_ns);
}

/* purges_due now, where one may be due: with no free region or dirty block waiting
 * and the dirty share not passed, the clock is not read. A process that never gives
 * memory back to the page heap (most short ones) then never reads it, and never
 * faults in the vDSO's data page for it. */
static void purges_check(struct mr_heap *h)
{
	if (h->npending || h->runs_due_ns != UINT64_MAX || dirty_share_passed(h))
		purges_due(h, h->ops->now_ns());
}

/* The decay delay in ms as free blocks count it (their clock wraps after 2^32 ms). */
static uint32_t decay_ms(const struct mr_heap *h)
{
	uint64_t ms = h->decay_ns / 1000000u;

	return ms < UINT32_MAX / 2 ? (uint32_t)ms : UINT32_MAX / 2;
}

/* Region @r has dirty free pages since @now_ns: due for a look after the delay. */
static void runs_schedule(struct mr_heap *h, uint32_t r, uint64_t now_ns)
{
	uint64_t bit = UINT64_C(1) << (r % 64), due;

	if (h->runs_pending[r / 64] & bit)
		return;		/* due earlier: what is freed now is seen then */
	h->runs_pending[r / 64] |= bit;
	due = now_ns + (uint64_t)decay_ms(h) * 1000000u;
	h->regions[r].runs_due_ns = due;
	if (!h->nruns_pending++ || due < h->runs_due_ns)
		h->runs_due_ns = due;
}

/* What a purge of free runs takes: the dirty blocks of MR_PURGE_ORDER and up that
 * have been free for the decay delay (the decay) or for dirty_age_ms (the dirty share
 * passed), or every block not clean, of any order, by MADV_DONTNEED (malloc_trim). */
enum purge_mode { PURGE_DUE, PURGE_DIRTY, PURGE_ALL };

/* Purge region @r's free blocks as @mode says (below a whole region: an entirely
 * free region goes back whole). Returns the pages given back; *@next is lowered to
 * when the next block left dirty is due. */
static uint64_t purge_runs(struct mr_heap *h, uint32_t r, uint64_t now_ns, enum purge_mode mode,
			   uint64_t *next)
{
	const struct mr_region_info *ri = &h->regions[r];
	uint32_t k, p, now = mr_ms_of(now_ns), decay = decay_ms(h);
	bool lazy = mode != PURGE_ALL && h->lazy_purge;
	uint64_t given = 0;

	for (k = mode == PURGE_ALL ? 0 : MR_PURGE_ORDER; k < h->region_order; k++) {
		for (p = ri->free_head[k]; p != MR_NONE; p = h->spans[p].next) {
			struct mr_span *s = &h->spans[p];
			uint32_t age;

			if (mode == PURGE_ALL) {
				if (!(s->flags & (MR_FREE_UNCLEAN | MR_FREE_DIRTY)))
					continue;
			} else {
				if (!(s->flags & MR_FREE_DIRTY))
					continue;
				age = now - s->freed_ms;
				if (age < (mode == PURGE_DIRTY ? h->dirty_age_ms : decay)) {
					if (age < decay &&
					    now_ns + (uint64_t)(decay - age) * 1000000u < *next)
						*next = now_ns + (uint64_t)(decay - age) * 1000000u;
					continue;
				}
			}
			if (h->ops->purge_pages)
				h->ops->purge_pages(h, p, ORDER_PAGES(k), lazy);
			dirty_count(h, k, s->flags, -1);
			s->flags = lazy ? MR_FREE_UNCLEAN : 0;
			given += ORDER_PAGES(k);
		}
	}
	h->runs_purged_pages += given;
	return given;
}

/* The regions whose runs are due (with PURGE_DIRTY: all with dirty runs; with
 * PURGE_ALL: every region in use). */
static uint64_t decay_runs(struct mr_heap *h, uint64_t now_ns, enum purge_mode mode)
{
	uint64_t given = 0, next = UINT64_MAX;
	uint32_t w, r;

	for (w = 0; w < MR_REGION_WORDS; w++) {
		uint64_t bits = mode == PURGE_ALL ? ~UINT64_C(0) : h->runs_pending[w];

		while (bits) {
			struct mr_region_info *ri;
			uint64_t rnext = UINT64_MAX;

			r = w * 64 + (uint32_t)__builtin_ctzll(bits);
			bits &= bits - 1;
			if (r >= h->nregions) {
				bits = 0;
				break;
			}
			ri = &h->regions[r];
			if (mode == PURGE_DUE && ri->runs_due_ns > now_ns) {
				if (ri->runs_due_ns < next)
					next = ri->runs_due_ns;
				continue;
			}
			/* An entirely free region goes back whole (decay_regions); if it is
			 * used again before, its dirty blocks are looked at after that. */
			if (ri->state == MR_REGION_ACTIVE && ri->used_pages)
				given += purge_runs(h, r, now_ns, mode, &rnext);
			else if (ri->state == MR_REGION_ACTIVE && ri->pending && mode != PURGE_ALL)
				rnext = ri->empty_since_ns + h->decay_ns + 1;
			if (!(h->runs_pending[w] & (UINT64_C(1) << (r % 64))))
				continue;
			if (rnext == UINT64_MAX) {
				h->runs_pending[w] &= ~(UINT64_C(1) << (r % 64));
				h->nruns_pending--;
			} else {
				ri->runs_due_ns = rnext;
				if (rnext < next)
					next = rnext;
			}
		}
	}
	h->runs_due_ns = next;
	if (given && h->ops->purge_flush)
		h->ops->purge_flush(h);
	return given;
}

/* Free the block [page, page + 2^order) of state @st, coalescing with its free
 * buddies: the merged block is as unclean as its parts, dirty since the last. */
static void free_block(struct mr_heap *h, uint32_t page, uint32_t order, uint32_t st,
		       uint32_t freed_ms)
{
	uint32_t r = mr_page_region(h, page), rp = r << h->region_order;

	while (order < h->region_order) {
		uint32_t buddy = page ^ ORDER_PAGES(order);
		struct mr_span *b = &h->spans[buddy];

		if (buddy - rp == h->regions[r].fresh) {
			/* The buddy is the untouched top's first block: the merged block
			 * is as unclean as this one, the top starts after it. */
			set_fresh(h, r, buddy + ORDER_PAGES(order) - rp);
			order++;
			continue;
		}
		if (b->kind != MR_SPAN_FREE || b->order != order)
			break;
		if ((b->flags & MR_FREE_DIRTY) &&
		    (!(st & MR_FREE_DIRTY) || (int32_t)(b->freed_ms - freed_ms) > 0))
			freed_ms = b->freed_ms;
		st |= b->flags;
		list_del(h, buddy);
		if (buddy < page) {
			h->spans[page].kind = MR_SPAN_NONE;
			page = buddy;
		}
		order++;
	}
	list_push(h, page, order, st, freed_ms);
}

/* Free [page, page + n) in state @st (MR_FREE_*), dirty since @freed_ms, as maximal
 * aligned blocks. */
static void free_range(struct mr_heap *h, uint32_t page, uint32_t n, uint32_t st,
		       uint32_t freed_ms)
{
	uint32_t end = page + n;

	while (page < end) {
		uint32_t k = page ? (uint32_t)__builtin_ctz(page) : h->region_order;

		if (k > h->region_order)
			k = h->region_order;
		while (page + ORDER_PAGES(k) > end)
			k--;
		h->spans[page].kind = MR_SPAN_NONE;
		free_block(h, page, k, st, freed_ms);
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

/* Make pages [page, page + npages) of one region writable, by commit chunks not yet
 * committed (a run of them per call). A failure part-way keeps the chunks already
 * committed marked so: nothing leaks, nothing is committed twice. */
static int commit_pages(struct mr_heap *h, uint32_t page, uint32_t npages)
{
	uint32_t r = mr_page_region(h, page), rp = r << h->region_order, co = h->chunk_order;
	uint32_t c = (page - rp) >> co, last = (page + npages - 1 - rp) >> co, e;
	struct mr_region_info *ri = &h->regions[r];

	if (!h->ops->commit_pages)
		return 0;
	for (; c <= last; c = e + 1) {
		if (ri->committed & (UINT64_C(1) << c)) {
			e = c;
			continue;
		}
		for (e = c; e < last && !(ri->committed & (UINT64_C(1) << (e + 1))); e++)
			;
		if (h->ops->commit_pages(h, rp + (c << co), (e - c + 1) << co) != 0)
			return -1;
		ri->committed |= (e - c == 63 ? ~UINT64_C(0) : ((UINT64_C(1) << (e - c + 1)) - 1)) << c;
	}
	return 0;
}

/* More regions from the OS (the arena grows in place). The last node group gets
 * them and its cold zone restarts at the new top: cold regions opened before stay
 * where they are and are taken over by the hot zone as it grows past them. */
static bool grow_heap(struct mr_heap *h, uint32_t more)
{
	uint32_t n, last = h->nnodes - 1;

	if (!h->ops->grow || h->grow_failed)
		return false;
	n = h->ops->grow(h, h->nregions + more);
	if (n == 0 || n > MR_MAX_REGIONS) {
		h->grow_failed = 1;	/* RLIMIT_AS or the space above: for good */
		return false;
	}
	if (n < h->nregions + more)
		return false;		/* beyond the window: this request only */
	h->nregions = n;
	h->node_hi[last] = n;
	h->cold_bottom[last] = n;
	return true;
}

static int open_region(struct mr_heap *h, uint32_t r)
{
	struct mr_region_info *ri = &h->regions[r];

	if (commit_region(h, r) != 0)
		return -1;
	ri->state = MR_REGION_ACTIVE;
	ri->purged = 1;		/* fresh: nothing resident yet */
	ri->fresh = 0;		/* all of it untouched: one block of the top order */
	bitmap_set(h, h->region_order, r);
	changed(h, r);
	return 0;
}

/* A hot block: the lowest region with one in the group's hot reserve, opening the
 * next region of the reserve if none has; MR_NONE when the reserve is full (then hot
 * data shares the normal zone). */
static uint32_t pick_hot_region(struct mr_heap *h, uint32_t order, uint32_t node)
{
	for (;;) {
		uint32_t r = mr_buddy_find_range(h, order, h->node_lo[node], h->hot_end[node], false);
		uint32_t n = h->hot_end[node];

		if (r != MR_NONE)
			return r;
		if (n >= h->norm_lo[node])
			return MR_NONE;
		if (h->regions[n].state == MR_REGION_UNUSED && open_region(h, n) != 0)
			return MR_NONE;
		h->hot_end[node] = n + 1;
	}
}

/* The region of node group @node to take an order-@order block from: hot data in
 * its reserve at the group's bottom (pick_hot_region); else the lowest (normal) or
 * highest (cold) region with one inside the temperature's zone, else a new region
 * opened at the zone's edge, else any region of the group with one; MR_NONE if the
 * group has none. */
static uint32_t pick_region_in(struct mr_heap *h, uint32_t order, enum mr_temp temp,
			       uint32_t node)
{
	bool cold = temp == MR_TEMP_COLD;

	if (temp == MR_TEMP_HOT && h->norm_lo[node] > h->node_lo[node]) {
		uint32_t r = pick_hot_region(h, order, node);

		if (r != MR_NONE)
			return r;
	}
	for (;;) {
		/* Re-read each time: growth moves the last group's top. */
		uint32_t r = mr_buddy_find_range(h, order, cold ? h->node_lo[node] : h->norm_lo[node],
						 h->node_hi[node], cold), n;

		if (r != MR_NONE && (cold ? r >= h->cold_bottom[node] : r < h->hot_top[node]))
			return r;
		if (h->hot_top[node] >= h->cold_bottom[node]) {
			/* The zones met: grow the arena rather than mix them, if it can. */
			if (node + 1 == h->nnodes && grow_heap(h, 1))
				continue;
			if (r == MR_NONE)	/* the hot reserve's free blocks, last */
				r = mr_buddy_find_range(h, order, h->node_lo[node], h->node_hi[node], cold);
			return r;
		}
		n = cold ? h->cold_bottom[node] - 1 : h->hot_top[node];
		if (h->regions[n].state == MR_REGION_UNUSED && open_region(h, n) != 0)
			return r;
		if (cold)
			h->cold_bottom[node] = n;
		else
			h->hot_top[node] = n + 1;
	}
}

bool mr_buddy_lower_free(const struct mr_heap *h, uint32_t order, enum mr_temp temp,
			 uint32_t region)
{
	uint32_t node = mr_buddy_node_of(h, region), lo, r;

	if (temp == MR_TEMP_COLD)
		return false;
	lo = temp == MR_TEMP_HOT || region < h->norm_lo[node] ? h->node_lo[node] : h->norm_lo[node];
	if (temp == MR_TEMP_HOT && region >= h->norm_lo[node] && h->hot_end[node] < h->norm_lo[node])
		return true;	/* the hot reserve has unopened regions */
	r = mr_buddy_find_range(h, order, lo, region, false);
	return r != MR_NONE;
}

/* The calling thread's node first (packing must not turn local memory remote); a
 * full node falls back to the others, in order. */
static uint32_t pick_region(struct mr_heap *h, uint32_t order, enum mr_temp temp, uint32_t node)
{
	uint32_t r, n;

	if (node >= h->nnodes)
		node = 0;
	r = pick_region_in(h, order, temp, node);
	for (n = 0; r == MR_NONE && n < h->nnodes; n++)
		if (n != node)
			r = pick_region_in(h, order, temp, n);
	return r;
}

/* Carve [lo, hi) out of the free block (page, order) of state @st: the parts outside
 * go back free, in the same state. */
static void carve(struct mr_heap *h, uint32_t page, uint32_t order, uint32_t lo, uint32_t hi,
		  uint32_t st, uint32_t freed_ms)
{
	uint32_t end = page + ORDER_PAGES(order), half;

	if (page >= lo && end <= hi)
		return;
	if (end <= lo || page >= hi) {
		list_push(h, page, order, st, freed_ms);
		return;
	}
	half = ORDER_PAGES(order - 1);
	carve(h, page, order - 1, lo, hi, st, freed_ms);
	carve(h, page + half, order - 1, lo, hi, st, freed_ms);
}

/* Take [page, page + npages) at the bottom of region @r's untouched top, aligned to
 * 2^@order pages (fresh_fit said it fits): the pages skipped to align it become clean
 * free blocks (their heads on the descriptors just below the span's), the rest of
 * the top stays untouched. */
static uint32_t take_fresh(struct mr_heap *h, uint32_t r, uint32_t npages, uint32_t order)
{
	struct mr_region_info *ri = &h->regions[r];
	uint32_t rp = r << h->region_order, from = ri->fresh, at = align_up(from, order);

	if (commit_pages(h, rp + at, npages) != 0)
		return MR_NONE;
	set_fresh(h, r, at + npages);
	free_range(h, rp + from, at - from, 0, 0);
	return rp + at;
}

/* Whether a span of @npages is of purge_new_max_min pages or more (the rule on) and
 * bigger than every span purged at its free so far (purge_new_max). */
static bool above_purge_threshold(const struct mr_heap *h, uint32_t npages)
{
	return h->purge_new_max_min && npages >= h->purge_new_max_min && npages > h->free_max_pages;
}

/* [page, page + npages), taken from free blocks of the states OR'd in @st, becomes
 * an allocated span. */
static uint32_t span_out(struct mr_heap *h, uint32_t page, uint32_t npages, uint32_t st)
{
	h->spans[page].head = page;
	h->spans[page].npages = npages;
	/* calloc clears only what may not read zero. */
	h->spans[page].flags = st & MR_FREE_UNCLEAN || h->purge_failed ? 0 : MR_SPAN_ZEROED;
	/* glibc's mmap threshold: decided when handed out, as glibc maps a chunk above
	 * it and unmaps it at its free, whatever it freed in between. */
	if (above_purge_threshold(h, npages))
		h->spans[page].flags |= MR_SPAN_PURGE_AT_FREE;
	account(h, mr_page_region(h, page), npages);
	purges_check(h);
	return page;
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

/* Take [lo, lo + n) of one region if every page of it is free (listed blocks, then
 * the untouched top): the blocks it covers leave their lists and what of them lies
 * outside goes back free, in their state; top pages skipped below @lo become clean
 * free blocks (as take_fresh's). *@st: the states of the blocks taken, OR'd (the
 * top's pages are clean). Not counted in used pages. */
static bool take_range(struct mr_heap *h, uint32_t lo, uint32_t n, uint32_t *st)
{
	uint32_t r = mr_page_region(h, lo), rp = r << h->region_order, end = lo + n, hi = end;
	uint32_t top, x;

	if (n == 0 || mr_page_region(h, end - 1) != r)
		return false;
	top = rp + h->regions[r].fresh;
	if (top < hi)
		hi = top;
	for (x = lo; x < hi;) {
		uint32_t b = free_block_of(h, x);

		if (b == MR_NONE)
			return false;
		x = b + ORDER_PAGES(h->spans[b].order);
	}
	if (commit_pages(h, lo, n) != 0)
		return false;
	*st = 0;
	for (x = lo; x < hi;) {
		uint32_t b = free_block_of(h, x), k = h->spans[b].order;
		uint32_t bst = h->spans[b].flags, freed_ms = h->spans[b].freed_ms;

		*st |= bst;
		list_del(h, b);
		carve(h, b, k, lo, hi, bst, freed_ms);
		x = b + ORDER_PAGES(k);
	}
	if (end > top) {
		set_fresh(h, r, end - rp);
		if (lo > top)
			free_range(h, top, lo - top, 0, 0);
	}
	return true;
}

/* Where in region @r a span of @n pages goes first fit: at the top of the highest
 * run of at least @n free pages, found by walking the heads from the region's bottom
 * (a free block's: its order says how far; an allocated span's: its length) up to
 * the untouched top, which ends the last run. Big spans from the top of the runs,
 * while small blocks are taken lowest first: the fragments a big span's carve leaves
 * below it are what small blocks take, and the next big span goes just below them
 * rather than finding its run cut. MR_NONE if no run fits, or the walk would pass
 * *@budget heads (each head counts). */
static uint32_t region_fit(const struct mr_heap *h, uint32_t r, uint32_t n, uint32_t *budget)
{
	const struct mr_region_info *ri = &h->regions[r];
	uint32_t rp = r << h->region_order, x = rp, run = rp, top = rp + ri->fresh, at = MR_NONE;

	if (ri->state != MR_REGION_ACTIVE || ORDER_PAGES(h->region_order) - ri->used_pages < n)
		return MR_NONE;
	while (x < top) {
		const struct mr_span *s = &h->spans[x];

		if (*budget == 0)
			return MR_NONE;
		(*budget)--;
		if (s->kind == MR_SPAN_FREE) {
			x += ORDER_PAGES(s->order);
			continue;
		}
		if (mr_span_pages(s) == 0)
			return MR_NONE;	/* not a head: never expected */
		if (x - run >= n)
			at = x - n;
		x += mr_span_pages(s);
		run = x;
	}
	x = rp + ORDER_PAGES(h->region_order);
	return x - run >= n ? x - n : at;
}

uint32_t mr_buddy_alloc_first_fit(struct mr_heap *h, uint32_t npages, uint32_t node)
{
	uint32_t budget = MR_FIRST_FIT_HEADS, r, page = MR_NONE, st;

	if (npages == 0 || npages > ORDER_PAGES(h->region_order))
		return MR_NONE;
	if (node >= h->nnodes)
		node = 0;
	for (r = h->norm_lo[node]; r < h->hot_top[node] && page == MR_NONE; r++)
		page = region_fit(h, r, npages, &budget);
	if (page == MR_NONE || !take_range(h, page, npages, &st))
		return MR_NONE;
	return span_out(h, page, npages, st);
}

uint32_t mr_buddy_alloc(struct mr_heap *h, uint32_t npages, uint32_t align_order,
			enum mr_temp temp)
{
	return mr_buddy_alloc_on(h, npages, align_order, temp, 0);
}

uint32_t mr_buddy_alloc_on(struct mr_heap *h, uint32_t npages, uint32_t align_order,
			   enum mr_temp temp, uint32_t node)
{
	uint32_t order = mr_pages_order(npages);
	uint32_t r, k, kf, page, st, freed_ms;

	if (align_order > order)
		order = align_order;
	if (npages == 0 || order > h->region_order)
		return MR_NONE;
	r = pick_region(h, order, temp, node);
	if (r == MR_NONE)
		return MR_NONE;
	/* The smallest free block that fits, listed or in the untouched top (a listed
	 * one if both: its pages may be resident already). */
	for (k = order; k <= h->region_order; k++)
		if (h->regions[r].free_head[k] != MR_NONE)
			break;
	kf = fresh_fit(h, &h->regions[r], order);
	if (kf != MR_NONE && kf < k) {
		/* A span aligned to its size keeps the rest of its block free for the
		 * spans freed and made after it (alloc-bench lifetimes' peak: 1.7% lower);
		 * where commits are limited, a span of other than 2^n pages is packed
		 * instead (pack_spans). */
		page = take_fresh(h, r, npages,
				  h->pack_spans && (npages & (npages - 1)) ? align_order : order);
		if (page == MR_NONE)
			return MR_NONE;
		st = 0;
	} else if (k > h->region_order) {
		return MR_NONE;
	} else {
		page = h->regions[r].free_head[k];
		if (commit_pages(h, page, npages) != 0)
			return MR_NONE;
		st = h->spans[page].flags;
		freed_ms = h->spans[page].freed_ms;
		list_del(h, page);
		carve(h, page, k, page, page + npages, st, freed_ms);
	}
	return span_out(h, page, npages, st);
}

/* Whether the span [page, page + npages), being freed, was above the threshold when
 * handed out or is the biggest yet (and big enough): then it is purged now, before
 * it goes back (purge_new_max_min). */
static bool purge_new_max(struct mr_heap *h, uint32_t page, uint32_t npages)
{
	bool above = above_purge_threshold(h, npages);

	/* the mark is set only with the rule on (above_purge_threshold) */
	if (!h->ops->purge_pages || npages < h->purge_new_max_min ||
	    !(above || (h->spans[page].flags & MR_SPAN_PURGE_AT_FREE)))
		return false;
	if (above)
		h->free_max_pages = npages;
	h->ops->purge_pages(h, page, npages, h->lazy_purge);
	if (h->ops->purge_flush)
		h->ops->purge_flush(h);
	h->runs_purged_pages += npages;
	return true;
}

void mr_buddy_free(struct mr_heap *h, uint32_t page, uint32_t npages)
{
	uint32_t r = mr_page_region(h, page);
	uint64_t now_ns = h->ops->now_ns();

	/* Purged now or not, the region is due for a look: a purged span can merge
	 * with a dirty buddy the last look passed over (under 16 pages), into a block
	 * that only a look purges. */
	if (purge_new_max(h, page, npages))
		free_range(h, page, npages, h->lazy_purge ? MR_FREE_UNCLEAN : 0, mr_ms_of(now_ns));
	else
		free_range(h, page, npages, MR_FREE_UNCLEAN | MR_FREE_DIRTY, mr_ms_of(now_ns));
	runs_schedule(h, r, now_ns);
	account(h, r, -(int64_t)npages);
	purges_due(h, now_ns);
}

bool mr_buddy_grow(struct mr_heap *h, uint32_t page, uint32_t old_npages, uint32_t new_npages)
{
	uint32_t st;

	if (new_npages <= old_npages)
		return true;
	if (mr_page_region(h, page + new_npages - 1) != mr_page_region(h, page) ||
	    !take_range(h, page + old_npages, new_npages - old_npages, &st))
		return false;
	h->spans[page].npages = new_npages;
	account(h, mr_page_region(h, page), new_npages - old_npages);
	purges_check(h);
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

/* Take the free regions [first, first + n) for a huge run. Every commit comes
 * first: regions never used are opened as free regions and all their pages
 * committed, and only then is any taken, so a commit failing part-way leaves
 * opened, free regions (reused later), never regions lost to the process.
 * Returns -1 if a commit failed, else 1 if every region taken was zero (never
 * used, or purged), 0 if some hold old data. */
static int take_regions(struct mr_heap *h, uint32_t first, uint32_t n)
{
	uint32_t r;
	int zero = 1;

	for (r = first; r < first + n; r++) {
		struct mr_region_info *ri = &h->regions[r];

		/* A free region is untouched whole, or one block, clean if purged
		 * (its runs by trim or the decay with MADV_DONTNEED). */
		if (ri->state != MR_REGION_UNUSED && ri->fresh &&
		    (h->spans[r << h->region_order].flags & MR_FREE_UNCLEAN))
			zero = 0;
		if (ri->state == MR_REGION_UNUSED && open_region(h, r) != 0)
			return -1;
		if (commit_pages(h, r << h->region_order, ORDER_PAGES(h->region_order)) != 0)
			return -1;
	}
	for (r = first; r < first + n; r++) {
		if (h->regions[r].fresh)
			list_del(h, r << h->region_order);
		else
			set_fresh(h, r, ORDER_PAGES(h->region_order));
		h->regions[r].state = MR_REGION_HUGE;
		account(h, r, ORDER_PAGES(h->region_order));
	}
	return zero;
}

/* First fit of a run of @n free regions in [lo, hi) whose address is aligned to
 * @align regions, from the bottom or (cold) from the top; MR_NONE if none. The
 * alignment is of the address, not of the index: the arena's base is aligned to 4 GiB
 * only, so larger alignments start from the base's phase. */
static uint32_t find_run(const struct mr_heap *h, uint32_t n, uint32_t align, uint32_t lo,
			 uint32_t hi, bool cold)
{
	int64_t i, first, last, step = cold ? -(int64_t)align : (int64_t)align;
	int64_t phase = (int64_t)(((uintptr_t)h->base >> (h->region_order + MR_PAGE_SHIFT)) &
				  (align - 1));
	uint32_t r;

	if (hi < lo + n)
		return MR_NONE;
	first = ((int64_t)lo + phase + align - 1) / align * align - phase;
	last = ((int64_t)(hi - n) + phase) / align * align - phase;
	for (i = cold ? last : first; i >= first && i <= last; i += step) {
		for (r = 0; r < n && region_free(h, (uint32_t)i + r); r++)
			;
		if (r == n)
			return (uint32_t)i;
	}
	return MR_NONE;
}

uint32_t mr_buddy_alloc_huge(struct mr_heap *h, uint32_t nregions, uint32_t align_regions,
			     enum mr_temp temp)
{
	return mr_buddy_alloc_huge_on(h, nregions, align_regions, temp, 0);
}

uint32_t mr_buddy_alloc_huge_on(struct mr_heap *h, uint32_t nregions, uint32_t align_regions,
				enum mr_temp temp, uint32_t node)
{
	bool cold = temp == MR_TEMP_COLD;
	uint32_t first, page, nd;
	int zero;

	if (!align_regions)
		align_regions = 1;
	if (nregions == 0 || nregions > MR_MAX_REGIONS || align_regions > MR_MAX_REGIONS)
		return MR_NONE;
	if (node >= h->nnodes)
		node = 0;
	first = MR_NONE;
	if (temp == MR_TEMP_HOT)	/* the hot reserve first, then above it */
		first = find_run(h, nregions, align_regions, h->node_lo[node], h->norm_lo[node], false);
	if (first == MR_NONE)
		first = find_run(h, nregions, align_regions,
				 cold ? h->node_lo[node] : h->norm_lo[node], h->node_hi[node], cold);
	if (first == MR_NONE)	/* not in the thread's node: anywhere */
		first = find_run(h, nregions, align_regions, 0, h->nregions, cold);
	if (first == MR_NONE && grow_heap(h, nregions + align_regions - 1))
		first = find_run(h, nregions, align_regions, 0, h->nregions, cold);
	if (first == MR_NONE)
		return MR_NONE;
	zero = take_regions(h, first, nregions);
	if (zero < 0)
		return MR_NONE;
	nd = mr_buddy_node_of(h, first);
	if (first < h->norm_lo[nd]) {
		if (first + nregions > h->hot_end[nd] && first + nregions <= h->norm_lo[nd])
			h->hot_end[nd] = first + nregions;
	} else if (first + nregions <= h->node_hi[nd]) {
		if (cold) {
			if (first < h->cold_bottom[nd] && first >= h->hot_top[nd])
				h->cold_bottom[nd] = first;
		} else if (first + nregions > h->hot_top[nd] &&
			   first + nregions <= h->cold_bottom[nd]) {
			h->hot_top[nd] = first + nregions;
		}
	}
	page = first << h->region_order;
	h->regions[first].huge_regions = nregions;
	h->spans[page].kind = MR_SPAN_HUGE;
	h->spans[page].head = page;
	h->spans[page].npages = nregions << h->region_order;
	h->spans[page].flags = zero && !h->purge_failed ? MR_SPAN_ZEROED : 0;
	purges_check(h);
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
		ri->purged = 1;	/* before account(): a purged region is not queued for decay */
		account(h, r, -(int64_t)ORDER_PAGES(h->region_order));
		ri->huge_regions = 0;
		h->spans[r << h->region_order].kind = MR_SPAN_NONE;	/* the run's head */
		set_fresh(h, r, 0);
	}
}

void mr_buddy_free_huge(struct mr_heap *h, uint32_t page)
{
	uint32_t first = mr_page_region(h, page);

	release_regions(h, first, h->regions[first].huge_regions);
	purges_check(h);
}

bool mr_buddy_grow_huge(struct mr_heap *h, uint32_t page, uint32_t new_nregions)
{
	uint32_t first = mr_page_region(h, page), old = h->regions[first].huge_regions, r;

	if (new_nregions <= old)
		return true;
	if (first + new_nregions > h->nregions &&
	    (first + new_nregions > MR_MAX_REGIONS || !grow_heap(h, first + new_nregions - h->nregions)))
		return false;
	for (r = first + old; r < first + new_nregions; r++)
		if (!region_free(h, r))
			return false;
	if (take_regions(h, first + old, new_nregions - old) < 0)
		return false;
	r = mr_buddy_node_of(h, first);
	if (first + new_nregions > h->hot_top[r] && first < h->hot_top[r] &&
	    first + new_nregions <= h->cold_bottom[r])
		h->hot_top[r] = first + new_nregions;
	h->regions[first].huge_regions = new_nregions;
	h->spans[page].npages = new_nregions << h->region_order;
	purges_check(h);
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
	purges_check(h);
}

/* Region @r, entirely free, was purged: it is untouched again. Its one block's
 * head is dropped without reading it (the purge may have dropped the descriptors:
 * the list head and the bitmaps live in the heap). */
static void reset_fresh(struct mr_heap *h, uint32_t r)
{
	h->regions[r].free_head[h->region_order] = MR_NONE;
	h->spans[r << h->region_order].kind = MR_SPAN_NONE;
	set_fresh(h, r, 0);
}

/* Entirely free regions free for @delay_ns or more (the decay delay; 0 for
 * malloc_trim): pages and descriptors go back. Returns the pages given back. */
static uint64_t decay_regions(struct mr_heap *h, uint64_t now, uint64_t delay_ns)
{
	uint64_t next = UINT64_MAX, given = 0;
	uint32_t r;

	for (r = 0; r < h->nregions && h->npending; r++) {
		struct mr_region_info *ri = &h->regions[r];

		if (!ri->pending)
			continue;
		if (now - ri->empty_since_ns < delay_ns) {
			if (ri->empty_since_ns + h->decay_ns < next)
				next = ri->empty_since_ns + h->decay_ns;
			continue;
		}
		ri->pending = 0;
		h->npending--;
		dirty_count(h, h->region_order, h->spans[r << h->region_order].flags, -1);
		h->ops->purge(h, r, 1);
		h->purges++;
		ri->purged = 1;
		changed(h, r);
		given += ORDER_PAGES(h->region_order);
		reset_fresh(h, r);
	}
	h->next_decay_ns = next;
	return given;
}

uint64_t mr_buddy_decay(struct mr_heap *h, bool force)
{
	uint64_t now = h->ops->now_ns(), given = 0;

	if (h->npending && (force || now >= h->next_decay_ns))
		given += decay_regions(h, now, force ? 0 : h->decay_ns);
	if (force || (h->nruns_pending && now >= h->runs_due_ns))
		given += decay_runs(h, now, force ? PURGE_ALL : PURGE_DUE);
	return given;
}

/* The dirty share passed: purge the dirty blocks the decay would, once free for
 * dirty_age_ms rather than the whole delay. */
static void purge_dirty(struct mr_heap *h, uint64_t now)
{
	if (h->npending)
		decay_regions(h, now, (uint64_t)h->dirty_age_ms * 1000000u);
	if (h->nruns_pending)
		decay_runs(h, now, PURGE_DIRTY);
	h->dirty_next_ns = now + (uint64_t)h->dirty_age_ms * 1000000u;
}

const char *mr_buddy_check(const struct mr_heap *h)
{
	uint32_t r, k, w;
	uint64_t used = 0, dirty = 0;

	for (k = 0; k <= h->region_order; k++) {
		for (w = 0; w < MR_REGION_WORDS; w++)
			if (!!h->bitmap[w][k] != !!(h->summary[k] & (UINT64_C(1) << w)))
				return "summary bit disagrees with its bitmap word";
	}
	for (r = 0; r < h->nregions; r++) {
		const struct mr_region_info *ri = &h->regions[r];
		uint32_t free_pages = 0, rp = r << h->region_order, fo = fresh_order(h, ri);

		if (ri->state == MR_REGION_UNUSED) {
			if (ri->used_pages)
				return "pages used in a region never opened";
			continue;
		}
		if (ri->fresh > ORDER_PAGES(h->region_order))
			return "untouched top beyond its region";
		if (ri->state != MR_REGION_ACTIVE && fo != MR_NONE)
			return "untouched top in a region not active";
		if (ri->state == MR_REGION_ACTIVE)
			free_pages = ORDER_PAGES(h->region_order) - ri->fresh;

		for (k = 0; k <= h->region_order; k++) {
			uint32_t p = ri->free_head[k], prev = MR_NONE;
			bool bit = h->bitmap[r / 64][k] & (UINT64_C(1) << (r % 64));

			if (bit != (p != MR_NONE || (k == fo && ri->state == MR_REGION_ACTIVE)))
				return "region bitmap bit disagrees with its free list and top";
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
				if (p + ORDER_PAGES(k) > rp + ri->fresh)
					return "free block in the untouched top";
				if (k < h->region_order && buddy > p && buddy - rp == ri->fresh)
					return "free block not merged with the untouched top";
				for (q = p + 1; q < p + ORDER_PAGES(k); q++)
					if (h->spans[q].kind == MR_SPAN_FREE)
						return "free blocks overlap";
				free_pages += ORDER_PAGES(k);
				dirty += dirty_pages_of(k, s->flags);
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
	if (dirty != h->dirty_pages)
		return "dirty pages differ from the sum over free blocks";
	return NULL;
}

void mr_buddy_init(struct mr_heap *h, char *base, struct mr_span *spans, uint32_t region_order,
		   uint32_t nregions, uint64_t decay_ns, const struct mr_heap_ops *ops)
{
	h->base = base;
	h->spans = spans;
	h->region_order = region_order;
	/* 2 MiB commit chunks, at most 64 a region (one mask word), at most a region. */
	h->chunk_order = region_order > 6 + 9 ? region_order - 6 : 9;
	if (h->chunk_order > region_order)
		h->chunk_order = region_order;
	h->nregions = nregions;
	h->decay_ns = decay_ns;
	h->next_decay_ns = h->runs_due_ns = UINT64_MAX;
	h->ops = ops;
	mr_buddy_set_nodes(h, 1);
}

void mr_buddy_set_nodes(struct mr_heap *h, uint32_t nnodes)
{
	uint32_t n, per, reserve;

	if (nnodes < 1)
		nnodes = 1;
	if (nnodes > MR_MAX_NODES)
		nnodes = MR_MAX_NODES;
	if (nnodes > h->nregions)
		nnodes = h->nregions;
	per = h->nregions / nnodes;
	/* Hot data's reserve at each group's bottom: an eighth of it (address space
	 * only until used), none in groups too small to spare it. */
	reserve = per >= 64 ? per / 8 : 0;
	h->nnodes = nnodes;
	for (n = 0; n < nnodes; n++) {
		h->node_lo[n] = h->hot_end[n] = n * per;
		h->norm_lo[n] = h->hot_top[n] = n * per + reserve;
		h->node_hi[n] = h->cold_bottom[n] = n + 1 == nnodes ? h->nregions : (n + 1) * per;
	}
}
