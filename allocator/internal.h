/* libmemreg's base, below every layer (docs/allocator.md, "Layers"): the page
 * descriptor every layer reads, size classes, options, formatting. Nothing here is
 * exported from libmemreg.so (see libmemreg.map). */
#ifndef MR_ALLOCATOR_INTERNAL_H
#define MR_ALLOCATOR_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MR_HIDDEN __attribute__((visibility("hidden")))
#define MR_LIKELY(x) __builtin_expect(!!(x), 1)
#define MR_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define MR_LINE_SIZE 64u
/* Cache lines of its own: the locks, and what every free reads, never share a line
 * with what others write. The library's variables are sorted by alignment
 * (allocator/local.mk), so these also share the same few pages. */
#define MR_LINE_ALIGNED __attribute__((aligned(MR_LINE_SIZE)))

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
	MR_SPAN_FIT,		/* head of a chunk of the first-fit heap (fit.h) */
};

struct mr_tcache;

/* struct mr_span - the descriptor of one page of the arena (spans[page index]), 32
 * bytes: 0.8% of the arena's extent in use (48 before: the owner and the slab's list
 * head are 32- and 16-bit indices, a slab's pages and capacity come from its class).
 * Every page of an allocated span or slab has @head = the index of its first page;
 * the other fields are meaningful at the head only, except in slabs, whose every
 * page also carries kind, cls, temp and owner so free() reads one descriptor. A FREE
 * kind is only ever set on the head of a block that is in its region's free list of
 * that order. */
struct mr_span {
	uint32_t head;
	uint8_t kind;
	uint8_t order;
	uint8_t cls;
	uint8_t temp;
	union {	/* a head is of one kind at a time */
		uint32_t npages;	/* large or huge head (a slab's: mr_span_pages) */
		struct {		/* slab head: a slab holds at most 4096 objects
					 * (test-sizeclass checks every class) */
			uint16_t used;	/* objects handed out and not freed locally */
			uint16_t bump;	/* objects never handed out start here */
		};
	};
	uint32_t next, prev;		/* free list (buddy) or bin partial list (slab) */
	union {	/* a span is a free head or a slab, never both at once */
		uint32_t freed_ms;	/* free head with MR_FREE_DIRTY: when freed (ms, wraps) */
		uint32_t child;		/* partial slab: first child in its bin's partial heap
					 * (set by partial_add) */
	};
	uint16_t flags;			/* MR_SLAB_*, MR_SPAN_ZEROED, MR_FREE_* */
	uint16_t free_list;		/* slab: its first locally freed object (not the
					 * bin's), as offset / 16 + 1 (a slab is at most 256
					 * KiB); 0: none (tcache.c, slab_free_head) */
	uint32_t owner;			/* slab: the cache that allocates from it, as
					 * tcache.c's owner ids (MR_OWNER_*) */
};
/* A region's descriptors are whole pages (regions are 256 pages and more). */
_Static_assert(sizeof(struct mr_span) == 32, "struct mr_span is 32 bytes");

#define MR_SLAB_PARTIAL 1u		/* in its bin's partial list */
#define MR_SLAB_CURRENT 2u		/* its bin's current slab */
#define MR_SLAB_FRESH 32u		/* made from pages none of which was resident: those
					 * past its bump still are not (tcache.c, slab_extend) */
#define MR_SLAB_AHEAD 64u		/* fresh, its bin's slab before handed out whole:
					 * populated ahead of the writes (tcache.c, slab_extend) */
#define MR_SLAB_SPARE 256u		/* empty, kept as its bin's spare (tcache.c) */
#define MR_SPAN_ZEROED 1u		/* large or huge head: every page read zero when
					 * handed out (calloc need not clear it) */
#define MR_SPAN_PURGE_AT_FREE 16u	/* large head: bigger than every span purged at its
					 * free when handed out (buddy.h, purge_new_max_min) */
#define MR_SPAN_CACHED 128u		/* large head: freed, in a thread's span cache
					 * (large.c): not a live object */
/* A free block's state, in its head's flags. No flag (a fresh descriptor, or one
 * purged with its region, reads zero) means clean: every page reads zero. Blocks
 * merge to the union of their flags and split into parts that inherit them. */
#define MR_FREE_UNCLEAN 4u		/* may hold non-zero bytes: used since it was
					 * clean, or purged with MADV_FREE (never clean) */
#define MR_FREE_DIRTY 8u		/* freed with its data, not purged yet */

/* A reading of the decay clock (ns) in ms, as free blocks and spare slabs keep
 * their times in freed_ms (wraps after 2^32 ms, about 49 days). */
static inline uint32_t mr_ms_of(uint64_t ns)
{
	return (uint32_t)(ns / 1000000u);
}

/* The buddy order of a span of @npages pages: the smallest block that holds it. */
static inline uint32_t mr_pages_order(uint32_t npages)
{
	return npages <= 1 ? 0 : 32 - (uint32_t)__builtin_clz(npages - 1);
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
	unsigned lg, c;

	if (MR_LIKELY(size <= 1024))
		return mr_class_small[(size + 15) >> 4];
	lg = 63 - (unsigned)__builtin_clzll((uint64_t)size - 1);	/* 2^lg < size <= 2^(lg+1) */
	if (lg < 12)	/* to 4 KiB, eight per doubling: (8 + i) << (lg - 3), i = 1..8 */
		return 32 + (lg - 10) * 8 + (unsigned)(((size - 1) >> (lg - 3)) - 8);
	/* Above, the slab (2^(lg+4) bytes: mr_class_slab_order) over n = 15..8, rounded
	 * down to 16 bytes (sizeclass.c says why): n = slab / size fits unless the
	 * rounding took it under size, and then n - 1 does. */
	c = 48 + (lg - 12) * 8 + 15 - (UINT32_C(1) << (lg + 4)) / (uint32_t)size;
	return c + (size > mr_class_size[c]);
}
/* Smallest class holding @size bytes whose size is a multiple of @align (align <= page);
 * MR_NR_CLASSES if none, or if each is larger than @size rounded up to whole pages
 * (a span of its own then wastes less). */
unsigned mr_size_class_aligned(size_t size, size_t align) MR_HIDDEN;
/* The pages of a slab of class @c. */
static inline uint32_t mr_class_pages(unsigned c)
{
	return UINT32_C(1) << mr_class_slab_order[c];
}
/* The pages of allocated span @s (a head): a slab's from its class, set with its
 * kind under the heap lock (mr_heap_alloc_slab). */
static inline uint32_t mr_span_pages(const struct mr_span *s)
{
	return s->kind == MR_SPAN_SLAB ? mr_class_pages(s->cls) : s->npages;
}

/* "options.c" */
enum mr_opt_type { MR_OPT_BOOL, MR_OPT_SIZE, MR_OPT_U64, MR_OPT_PATH };
/* MR_OPTION(id, env suffix, type, default, secure) - secure: allowed in AT_SECURE. */
#define MR_OPTIONS(X) \
	X(region_size, "REGION_SIZE", MR_OPT_SIZE, 64 << 20, 0) \
	X(decay_ms, "DECAY_MS", MR_OPT_U64, 1000, 0) \
	X(dirty_pct, "DIRTY_PCT", MR_OPT_U64, 12, 0) \
	X(madv_free, "MADV_FREE", MR_OPT_BOOL, 0, 0) \
	X(show_stats, "SHOW_STATS", MR_OPT_BOOL, 0, 0) \
	X(export_stats, "EXPORT_STATS", MR_OPT_BOOL, 0, 0) \
	X(profile, "PROFILE", MR_OPT_PATH, 0, 0) \
	X(site_map, "SITE_MAP", MR_OPT_PATH, 0, 0) \
	X(track_sites, "TRACK_SITES", MR_OPT_BOOL, 0, 0) \
	X(numa, "NUMA", MR_OPT_BOOL, 1, 0) \
	X(start_heap, "START_HEAP", MR_OPT_SIZE, 256 << 10, 0)
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
