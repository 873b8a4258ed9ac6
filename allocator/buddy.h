/* The page heap's lowest part (buddy.c): the region-sorted buddy heap of pages over
 * the arena, its region table and its OS contract (struct mr_heap_ops). Not locked:
 * heap.c, the layer above, holds the heap lock. */
#ifndef MR_ALLOCATOR_BUDDY_H
#define MR_ALLOCATOR_BUDDY_H

#include "allocator/internal.h"

/* Free blocks of this order and up (64 KiB) are purged once free for the decay
 * delay: every free span of 64 KiB or more is one or more of them (a span of 2^k
 * pages or more starts 2^k-aligned), and every free run of 124 KiB holds one. */
#define MR_PURGE_ORDER 4

enum mr_region_state { MR_REGION_UNUSED, MR_REGION_ACTIVE, MR_REGION_HUGE };

/* struct mr_region_info - per-region state of the page heap. */
struct mr_region_info {
	uint32_t free_head[MR_ORDERS];	/* page index of the first free block, or MR_NONE */
	uint32_t used_pages;		/* pages in allocated spans */
	uint32_t peak_pages;
	uint32_t huge_regions;		/* HUGE head: regions in the run */
	uint8_t state;
	uint8_t purged;			/* entirely free and returned to the OS */
	uint8_t pending;		/* entirely free, waiting for the decay delay */
	uint8_t touched;		/* ever held data */
	/* Pages [fresh, 2^region_order) of the region (an offset in it) are its
	 * untouched top: free, reading zero, with no free-block head written in
	 * their descriptors. An allocation takes the smallest free block that fits,
	 * listed or the top's (at its bottom); a block freed just below it coalesces
	 * with the top's first block, and the top starts above the merged block. So heads are written only
	 * next to spans handed out: the split of a whole region would write one on a
	 * descriptor page in every power of two (32 KiB of a process's first region). */
	uint32_t fresh;
	uint64_t empty_since_ns;
	uint64_t committed;		/* commit chunks (2^chunk_order pages) made writable */
	uint64_t runs_due_ns;		/* the first of its dirty free blocks is due then */
};

struct mr_heap;
/* The OS contract (mimalloc's prim.h idea): addr/len are page aligned; 0 on success.
 * A failure changes nothing (the heap unwinds what it did before it). */
struct mr_heap_ops {
	int (*commit)(struct mr_heap *h, uint32_t region);	/* its descriptors usable */
	void (*purge)(struct mr_heap *h, uint32_t first_region, uint32_t nregions);
	uint64_t (*now_ns)(void);
	/* Optional (NULL: nothing to do). Make pages [page, page + n) writable: whole
	 * commit chunks of one region, called once per chunk run. */
	int (*commit_pages)(struct mr_heap *h, uint32_t page, uint32_t npages);
	/* Optional. Extend the arena in place to at least @want regions (more if it
	 * likes); returns the new count, the old one if @want is beyond what it could
	 * ever reach, 0 if it cannot grow any more (nothing changed). */
	uint32_t (*grow)(struct mr_heap *h, uint32_t want);
	/* Optional. Give the free pages [page, page + npages) of one region back to the
	 * OS, not their descriptors: MADV_DONTNEED (they read zero after), or with
	 * @lazy MADV_FREE (the kernel takes them only under pressure; they keep their
	 * data until then). */
	void (*purge_pages)(struct mr_heap *h, uint32_t page, uint32_t npages, bool lazy);
	/* Optional. purge_pages may only queue: this completes what it queued. The
	 * heap calls it before it returns from any call that purged pages, so none
	 * is handed out before its purge is done. */
	void (*purge_flush)(struct mr_heap *h);
};

/* struct mr_heap - the region-sorted buddy heap over [base, base + nregions regions).
 * Must start zeroed (BSS or calloc). Not locked: callers serialise (heap.c holds the heap lock). */
struct mr_heap {
	char *base;
	struct mr_span *spans;
	uint32_t region_order;		/* log2(pages per region) */
	uint32_t chunk_order;		/* log2(pages per commit chunk): 2 MiB, 64 per region at most */
	uint32_t nregions;		/* regions reserved now; ops->grow adds more */
	uint32_t grow_failed;		/* ops->grow said no once: not asked again */
	/* A purge failed once (ops set it: locked pages keep their data), so no span
	 * is handed out as reading zero (MR_SPAN_ZEROED) since. */
	bool purge_failed;
	/* The arena is split into nnodes groups of regions, [node_lo, node_hi) each (one
	 * group on a one-node machine). In each, regions [node_lo, hot_end) were opened
	 * from the bottom for hot data, in a reserve [node_lo, norm_lo) of their own;
	 * [norm_lo, hot_top) from norm_lo up for normal data (and hot data once the
	 * reserve is full), [cold_bottom, node_hi) from the top (cold). */
	uint32_t nnodes;
	uint32_t node_lo[MR_MAX_NODES], node_hi[MR_MAX_NODES];
	uint32_t hot_top[MR_MAX_NODES], cold_bottom[MR_MAX_NODES];
	uint32_t hot_end[MR_MAX_NODES], norm_lo[MR_MAX_NODES];
	uint32_t npending;
	uint32_t regions_touched;
	uint64_t decay_ns, next_decay_ns;
	uint64_t used_pages, peak_pages;
	uint64_t purges, regions_opened;
	/* Free runs of regions still in use: regions with dirty free blocks (freed, not
	 * purged yet) in a bitmap, each due at its runs_due_ns, the first at runs_due_ns. */
	uint32_t nruns_pending;
	uint32_t lazy_purge;		/* the decay purges with MADV_FREE (MEMREG_MADV_FREE) */
	uint64_t runs_due_ns;
	uint64_t runs_pending[MR_REGION_WORDS];
	uint64_t runs_purged_pages;	/* pages of free blocks given back: decay, trim, new max */
	/* The dirty share (heap.c sets it from MEMREG_DIRTY_PCT; dirty_pct 0: off).
	 * dirty_pages counts the pages of dirty free blocks the decay would purge (order
	 * MR_PURGE_ORDER and up, entirely free regions included). A free that leaves
	 * more of them than dirty_pct% of the used pages and dirty_min_pages purges those
	 * free for dirty_age_ms or more at once, not waiting for the delay; at most once
	 * per dirty_age_ms (from dirty_next_ns), so a block freed and soon reused is not
	 * purged in between. */
	uint64_t dirty_pages, dirty_min_pages, dirty_next_ns;
	uint32_t dirty_pct, dirty_age_ms;
	/* A span of purge_new_max_min pages or more (0: off) is purged at its free if it
	 * is bigger than every span purged so far (free_max_pages, the largest) when it is
	 * handed out (MR_SPAN_PURGE_AT_FREE) or when it is freed: as glibc maps a chunk
	 * of its mmap threshold or more and unmaps it at its free, the threshold rising
	 * to the size of each chunk so freed. The old copies of a growing table or buffer
	 * go at once, and so do a program's first big buffers, whatever order they are
	 * freed in; a buffer of one size freed again and again waits for the decay (its
	 * pages are likely used again). */
	uint32_t purge_new_max_min, free_max_pages;
	/* The words of changed[] (below) with a bit set. Both are kept only once the
	 * export has read every region (changes_tracked): a process that exports
	 * nothing never writes changed[]'s page. */
	uint64_t changed_summary;
	bool changes_tracked;
	/* Commits are limited (heap.c: RLIMIT_DATA at start): a span of other than 2^n
	 * pages taken from a region's untouched top starts at its bottom, not aligned
	 * to its size. Aligned, 33 pages took 64, and a program of such spans had twice
	 * its memory committed (docs/allocator.md, "Resource limits"). */
	bool pack_spans;
	const struct mr_heap_ops *ops;
	/* Per order, the regions with a free block of that order: summary[k] has bit w
	 * if bitmap[w][k] has any. Word-major, so a process whose normal data fits in 64
	 * regions touches one 152-byte row: row 8 on a one-node machine (regions 512-575,
	 * above the hot reserve). It ends on the header's page while what only the stats
	 * export writes (changed[]) comes after the bitmap (tests/alloc/resident.sh,
	 * bss). */
	uint64_t summary[MR_ORDERS];
	uint64_t bitmap[MR_REGION_WORDS][MR_ORDERS];
	/* Regions whose stats changed since the export last read them (stats.c). */
	uint64_t changed[MR_REGION_WORDS];
	struct mr_region_info regions[MR_MAX_REGIONS];
};

/* "buddy.c" */
void mr_buddy_init(struct mr_heap *h, char *base, struct mr_span *spans,
		   uint32_t region_order, uint32_t nregions, uint64_t decay_ns,
		   const struct mr_heap_ops *ops) MR_HIDDEN;
/* Split the arena's regions evenly between @nnodes NUMA nodes (before any allocation;
 * 1 = one group, the default). */
void mr_buddy_set_nodes(struct mr_heap *h, uint32_t nnodes) MR_HIDDEN;
/* Allocate @npages pages aligned to 2^@align_order pages, and to their size (as a
 * buddy block; not other than 2^n pages under pack_spans), from the lowest regions
 * (hot, normal) or the highest (cold) of node group @node, or of the other groups if
 * it is full. Returns the first page index or MR_NONE. mr_buddy_alloc: node 0.
 * Spans longer than a region come from mr_buddy_alloc_huge. */
uint32_t mr_buddy_alloc_on(struct mr_heap *h, uint32_t npages, uint32_t align_order,
			   enum mr_temp temp, uint32_t node) MR_HIDDEN;
uint32_t mr_buddy_alloc(struct mr_heap *h, uint32_t npages, uint32_t align_order,
			enum mr_temp temp) MR_HIDDEN;
/* First fit: @npages pages (a region at most), whatever their alignment, in the
 * lowest open region of node group @node's normal zone that has that many free pages
 * in a row, at the top of the highest such run; MR_NONE if there is none (no region
 * is opened for it), or if finding one would walk more than MR_FIRST_FIT_HEADS heads
 * (free blocks and spans). For big spans that are not
 * expected to grow (heap.c): a buddy block's alignment strands the pages of a freed
 * big span, so that spans of a third of it went to new regions (sort -S). */
#define MR_FIRST_FIT_HEADS 4096u
uint32_t mr_buddy_alloc_first_fit(struct mr_heap *h, uint32_t npages, uint32_t node) MR_HIDDEN;
void mr_buddy_free(struct mr_heap *h, uint32_t page, uint32_t npages) MR_HIDDEN;
/* Grow [page, page + old) to new pages in place if the pages after it are free. */
bool mr_buddy_grow(struct mr_heap *h, uint32_t page, uint32_t old_npages,
		   uint32_t new_npages) MR_HIDDEN;
uint32_t mr_buddy_alloc_huge_on(struct mr_heap *h, uint32_t nregions, uint32_t align_regions,
				enum mr_temp temp, uint32_t node) MR_HIDDEN;
uint32_t mr_buddy_alloc_huge(struct mr_heap *h, uint32_t nregions, uint32_t align_regions,
			     enum mr_temp temp) MR_HIDDEN;
void mr_buddy_free_huge(struct mr_heap *h, uint32_t page) MR_HIDDEN;
bool mr_buddy_grow_huge(struct mr_heap *h, uint32_t page, uint32_t new_nregions) MR_HIDDEN;
void mr_buddy_shrink_huge(struct mr_heap *h, uint32_t page, uint32_t new_nregions) MR_HIDDEN;
/* Give back to the OS what has been free for the decay delay: entirely free regions
 * (pages and descriptors) and the free blocks of MR_PURGE_ORDER and up of the others;
 * with @force all of it at once, free blocks of any size and MADV_FREE'd ones
 * included (malloc_trim). Returns the pages given back. */
uint64_t mr_buddy_decay(struct mr_heap *h, bool force) MR_HIDDEN;
/* Check every invariant; returns NULL or a description of the first violation. */
const char *mr_buddy_check(const struct mr_heap *h) MR_HIDDEN;
/* Whether a block of order @order for @temp data could come from a region of the
 * zone below @region (hot, normal; never for cold): a hint for slab reuse. */
bool mr_buddy_lower_free(const struct mr_heap *h, uint32_t order, enum mr_temp temp,
			 uint32_t region) MR_HIDDEN;
/* Region lookup of the lowest (or highest) region with a free block of order >= k;
 * MR_NONE if none. Exposed for the tests of the selection logic. */
uint32_t mr_buddy_find(const struct mr_heap *h, uint32_t order, bool highest) MR_HIDDEN;
/* The same within regions [lo, hi). */
uint32_t mr_buddy_find_range(const struct mr_heap *h, uint32_t order, uint32_t lo, uint32_t hi,
			     bool highest) MR_HIDDEN;

static inline uint32_t mr_page_region(const struct mr_heap *h, uint32_t page)
{
	return page >> h->region_order;
}

/* The node group of @region: a read of the split (inline: the OS binding in heap.c
 * asks it while buddy.c opens a region, and must not call back into buddy.c). */
static inline uint32_t mr_buddy_node_of(const struct mr_heap *h, uint32_t region)
{
	uint32_t n;

	for (n = 0; n + 1 < h->nnodes; n++)
		if (region < h->node_hi[n])
			return n;
	return n;
}

#endif
