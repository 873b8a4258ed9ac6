/* libmemreg internals: the region-sorted buddy page heap, size classes, thread caches,
 * options and stats. Nothing here is exported from libmemreg.so (see libmemreg.map). */
#ifndef MR_ALLOCATOR_INTERNAL_H
#define MR_ALLOCATOR_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MR_HIDDEN __attribute__((visibility("hidden")))
#define MR_LIKELY(x) __builtin_expect(!!(x), 1)
#define MR_UNLIKELY(x) __builtin_expect(!!(x), 0)

#define MR_PAGE_SHIFT 12
#define MR_PAGE_SIZE (UINT64_C(1) << MR_PAGE_SHIFT)
/* Regions hold 2^region_order pages; buddy orders run 0..region_order. */
#define MR_MAX_ORDER 18			/* 1 GiB regions at most */
#define MR_ORDERS (MR_MAX_ORDER + 1)
#define MR_MAX_REGIONS 4096		/* two-level bitmaps: 64 words of 64 bits */
#define MR_REGION_WORDS (MR_MAX_REGIONS / 64)
#define MR_NONE UINT32_MAX
#define MR_MAX_NODES 64			/* NUMA nodes the arena is split between */

/* Temperature classes: hot and normal fill the lowest regions, cold the highest.
 * The values are the public MEMREG_HOT/NORMAL/COLD of memreg.h. */
enum mr_temp { MR_TEMP_HOT, MR_TEMP_NORMAL, MR_TEMP_COLD, NR_MR_TEMP };

enum mr_span_kind {
	MR_SPAN_NONE = 0,	/* interior page, or part of a larger free block */
	MR_SPAN_FREE,		/* head of a free buddy block of order `order` */
	MR_SPAN_LARGE,		/* head of an allocated span of npages pages */
	MR_SPAN_SLAB,		/* head of a slab of small objects of class `cls` */
	MR_SPAN_HUGE,		/* head of a run of whole regions (npages pages) */
};

struct mr_tcache;

/* struct mr_span - the descriptor of one page of the arena (spans[page index]).
 * Every page of an allocated span or slab has @head = the index of its first page;
 * the other fields are meaningful at the head only, except in slabs, whose every
 * page also carries kind, cls, temp and owner so free() reads one descriptor. A FREE kind is only ever set on
 * the head of a block that is in its region's free list of that order. */
struct mr_span {
	uint32_t head;
	uint8_t kind;
	uint8_t order;
	uint8_t cls;
	uint8_t temp;
	uint32_t npages;
	uint32_t next, prev;		/* free list (buddy) or bin partial list (slab) */
	uint32_t used;			/* slab: objects handed out and not freed locally */
	uint32_t capacity;		/* slab: objects it holds */
	uint32_t bump;			/* slab: objects never handed out start here */
	uint32_t flags;			/* MR_SLAB_* */
	void *free_list;		/* slab: locally freed objects (not the bin's) */
	struct mr_tcache *owner;	/* slab: the cache that allocates from it */
	uint32_t site;			/* large: site id (0 = unknown) */
	union {	/* a span is a free head or a slab, never both at once */
		uint32_t freed_ms;	/* free head with MR_FREE_DIRTY: when freed (ms, wraps) */
		uint32_t child;		/* partial slab: first child in its bin's partial heap
					 * (set by partial_add) */
	};
};

#define MR_SLAB_PARTIAL 1u		/* in its bin's partial list */
#define MR_SLAB_CURRENT 2u		/* its bin's current slab */
#define MR_SPAN_ZEROED 1u		/* large or huge head: every page read zero when
					 * handed out (calloc need not clear it) */
/* A free block's state, in its head's flags. No flag (a fresh descriptor, or one
 * purged with its region, reads zero) means clean: every page reads zero. Blocks
 * merge to the union of their flags and split into parts that inherit them. */
#define MR_FREE_UNCLEAN 4u		/* may hold non-zero bytes: used since it was
					 * clean, or purged with MADV_FREE (never clean) */
#define MR_FREE_DIRTY 8u		/* freed with its data, not purged yet */
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
};

/* struct mr_heap - the region-sorted buddy heap over [base, base + nregions regions).
 * Must start zeroed (BSS or calloc). Not locked: callers serialise (allocator/alloc.c holds mr_heap_lock). */
struct mr_heap {
	char *base;
	struct mr_span *spans;
	uint32_t region_order;		/* log2(pages per region) */
	uint32_t chunk_order;		/* log2(pages per commit chunk): 2 MiB, 64 per region at most */
	uint32_t nregions;		/* regions reserved now; ops->grow adds more */
	uint32_t grow_failed;		/* ops->grow said no once: not asked again */
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
	uint64_t runs_purged_pages;	/* pages of free blocks given back, decay and trim */
	/* Regions whose stats changed since the export last read them (stats.c). */
	uint64_t changed[MR_REGION_WORDS];
	uint64_t changed_summary;
	const struct mr_heap_ops *ops;
	uint64_t bitmap[MR_ORDERS][MR_REGION_WORDS];
	uint64_t summary[MR_ORDERS];
	struct mr_region_info regions[MR_MAX_REGIONS];
};

/* "buddy.c" */
void mr_buddy_init(struct mr_heap *h, char *base, struct mr_span *spans,
		   uint32_t region_order, uint32_t nregions, uint64_t decay_ns,
		   const struct mr_heap_ops *ops) MR_HIDDEN;
/* Split the arena's regions evenly between @nnodes NUMA nodes (before any allocation;
 * 1 = one group, the default). */
void mr_buddy_set_nodes(struct mr_heap *h, uint32_t nnodes) MR_HIDDEN;
uint32_t mr_buddy_node_of(const struct mr_heap *h, uint32_t region) MR_HIDDEN;
/* Allocate @npages pages aligned to 2^@align_order pages, from the lowest regions
 * (hot, normal) or the highest (cold) of node group @node, or of the other groups if
 * it is full. Returns the first page index or MR_NONE. mr_buddy_alloc: node 0.
 * Spans longer than a region come from mr_buddy_alloc_huge. */
uint32_t mr_buddy_alloc_on(struct mr_heap *h, uint32_t npages, uint32_t align_order,
			   enum mr_temp temp, uint32_t node) MR_HIDDEN;
uint32_t mr_buddy_alloc(struct mr_heap *h, uint32_t npages, uint32_t align_order,
			enum mr_temp temp) MR_HIDDEN;
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

/* "sizeclass.c" */
#define MR_NR_CLASSES 72
#define MR_SMALL_MAX 32768
extern const uint32_t mr_class_size[MR_NR_CLASSES] MR_HIDDEN;
extern const uint8_t mr_class_slab_order[MR_NR_CLASSES] MR_HIDDEN;
extern const uint8_t mr_class_small[1024 / 16 + 1] MR_HIDDEN;
/* Smallest class holding @size bytes (size <= MR_SMALL_MAX). */
static inline unsigned mr_size_class(size_t size)
{
	unsigned lg, shift;

	if (MR_LIKELY(size <= 1024))
		return mr_class_small[(size + 15) >> 4];
	/* Eight classes per doubling above 1 KiB: (8 + i) << (lg - 3), i = 1..8. */
	lg = 63 - (unsigned)__builtin_clzll((uint64_t)size - 1);	/* 2^lg < size <= 2^(lg+1) */
	shift = lg - 3;
	return 32 + (lg - 10) * 8 + (unsigned)(((size - 1) >> shift) - 8);
}
/* Smallest class holding @size bytes whose size is a multiple of @align (align <= page);
 * MR_NR_CLASSES if none. */
unsigned mr_size_class_aligned(size_t size, size_t align) MR_HIDDEN;

/* "options.c" */
enum mr_opt_type { MR_OPT_BOOL, MR_OPT_SIZE, MR_OPT_U64, MR_OPT_PATH };
/* MR_OPTION(id, env suffix, type, default, secure) - secure: allowed in AT_SECURE. */
#define MR_OPTIONS(X) \
	X(region_size, "REGION_SIZE", MR_OPT_SIZE, 64 << 20, 0) \
	X(decay_ms, "DECAY_MS", MR_OPT_U64, 1000, 0) \
	X(madv_free, "MADV_FREE", MR_OPT_BOOL, 0, 0) \
	X(show_stats, "SHOW_STATS", MR_OPT_BOOL, 0, 0) \
	X(export_stats, "EXPORT_STATS", MR_OPT_BOOL, 0, 0) \
	X(profile, "PROFILE", MR_OPT_PATH, 0, 0) \
	X(site_map, "SITE_MAP", MR_OPT_PATH, 0, 0) \
	X(track_sites, "TRACK_SITES", MR_OPT_BOOL, 0, 0) \
	X(numa, "NUMA", MR_OPT_BOOL, 1, 0)
enum mr_option_id {
#define MR_OPT_ENUM(id, env, type, def, secure) MR_OPT_##id,
	MR_OPTIONS(MR_OPT_ENUM)
#undef MR_OPT_ENUM
	NR_MR_OPT
};
struct mr_option {
	const char *env;	/* "MEMREG_" + suffix */
	enum mr_opt_type type;
	uint64_t def;
	bool secure;
	uint64_t value;		/* numbers and booleans */
	const char *str;	/* the value given, if valid: points into environ */
};
extern struct mr_option mr_options[NR_MR_OPT] MR_HIDDEN;
/* Read the options from @envp (environ) without allocating. @secure: AT_SECURE (every
 * MEMREG_* variable ignored, nothing said). A bad value is reported once through @warn
 * (name, value) and the default is kept; an unknown MEMREG_* variable that is not one
 * of memreg's tools' too through @warn("NAME=value", NULL). */
void mr_options_load(char **envp, bool secure,
		     void (*warn)(const char *name, const char *value)) MR_HIDDEN;
/* Open the file of an output path option (MEMREG_SITE_MAP) for writing: @pattern with
 * %p the pid and %% a %, expanded into @path (@len bytes), no symlink followed, mode
 * 0600, truncated. Without %p the file is every process's: a forked child never
 * writes it, nor does a process when another one wrote it since this one started
 * (then -2: write nothing, say nothing). The fd, or -1 with errno set. */
int mr_option_open_output(const char *pattern, char *path, size_t len) MR_HIDDEN;
/* Parse one value; 0 on success, -1 if invalid. Exposed for the tests. */
int mr_option_parse(enum mr_opt_type type, const char *s, uint64_t *out) MR_HIDDEN;
#define MR_OPT(id) (mr_options[MR_OPT_##id].value)
#define MR_OPT_STR(id) (mr_options[MR_OPT_##id].str)	/* NULL if not given */

/* "fmt.c": formatting without stdio (stdio may allocate). */
char *mr_fmt_u64(char *buf, uint64_t v) MR_HIDDEN;	/* returns the end of the digits */
void mr_write_str(int fd, const char *s) MR_HIDDEN;

#endif
