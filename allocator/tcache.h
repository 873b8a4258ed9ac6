/* Thread caches and slabs (tcache.c): the bins the front end pops from and pushes
 * to inline, their refill and slow frees, and the keyed free lists (heap integrity).
 * Calls only the page heap and the stats below it. */
#ifndef MR_ALLOCATOR_TCACHE_H
#define MR_ALLOCATOR_TCACHE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "allocator/internal.h"
#include "allocator/large.h"

/* struct mr_bin - one size class of one temperature in a thread cache: the current
 * slab's free objects, and the slabs with free objects that are not current. */
struct mr_bin {
	void *free;
	uint32_t cur_used;		/* the current slab's used count (its span's is stale) */
	uint32_t cur_head;		/* the current slab's first page, or MR_NONE */
	struct mr_span *cur;
	uint32_t partial;		/* first slab page of the partial list, or MR_NONE */
	uint32_t spare;			/* an empty slab kept for the bin, or MR_NONE */
};

/* A row of bins per temperature is a page (MR_NR_CLASSES of its 128 used), so that
 * a cache's unused temperatures stay untouched pages. */
#define MR_BIN_ROW (4096 / 32)
_Static_assert(sizeof(struct mr_bin) == 32 && MR_BIN_ROW >= MR_NR_CLASSES, "a bin row is a page");

/* Remote frees go out in batches: an array of pointers per owner, sent with one
 * push when full, so that neither the freeing thread nor the owner writes the
 * objects on the way (the freeing thread reads the free key; tcache.c, "remote
 * frees in batches"). */
#define MR_OUT_SLOTS 4
struct mr_rbatch;

/* struct mr_tcache - a thread's cache. Never freed: an exited thread's cache waits
 * in a pool for the next thread, so other threads can always push to its inbox.
 * Laid out for resident size: each temperature's bins are a page of their own, set
 * up on their first refill (bins_ready), the rest follows; a cache on zeroed pages
 * that only ever allocates normal data touches two of its four pages (the normal
 * bins and the page of temp, inbox and links). */
struct mr_tcache {
	struct mr_bin bins[NR_MR_TEMP][MR_BIN_ROW];
	uint8_t temp;			/* memreg_set_thread_class(): read on every malloc */
	uint8_t bins_ready;		/* bit t: bins[t] set up (bins_init), else all zero */
	uint16_t nspares;		/* bins with a spare slab (tcache.c, "spare slabs") */
	uint32_t spares_due_ms;		/* when the oldest spare is due to go back */
	_Atomic(void *) inbox;		/* objects of its slabs freed by other threads */
	/* Batches of such objects (struct mr_rbatch), and about how many wait there. */
	_Atomic(struct mr_rbatch *) inbox_batches;
	_Atomic(uint32_t) inbox_nbatches;
	/* Times its inboxes were drained, and that count when another cache last
	 * looked at them (steal_inboxes: a cache that drains its own is left to it). */
	_Atomic(uint32_t) drains;
	_Atomic(uint32_t) drains_seen;
	uint32_t nspare;
	struct mr_rbatch *spare;	/* empty batches, for this thread's remote frees */
	_Atomic(struct mr_rbatch *) returned;	/* its batches, emptied by their owners */
	/* This thread's remote frees not sent yet: a batch per owner, by owner id. */
	struct mr_rbatch *out[MR_OUT_SLOTS];
	struct mr_tcache *next_parked;
	struct mr_tcache *next_all;
	uint32_t id;
	bool parked;			/* in the pool: under pool_lock, read unlocked as a hint */
	/* steal_inboxes' looks to skip after failing; kept for the next thread (a
	 * thread that lives for a few hundred allocations would learn it each time) */
	uint8_t steal_wait, steal_backoff;
	/* Looks for empty slabs of objects over a page to give back before a new such
	 * slab or a span (tcache.c, "medium slabs in a young thread"). */
	uint16_t medium_looks;
	/* Allocations left for which this thread takes objects of the shared cache's
	 * slabs rather than make slabs of its own (0: none), and how many more of
	 * those its frees may keep (tcache.c, "short threads"). */
	uint16_t borrow, borrow_keep;
	/* Objects each class up to a page took of a class above rather than make a
	 * slab, and the new slabs the cache may make before its bins stop doing so
	 * (tcache.c, "a class up, while young"). */
	uint8_t up_taken[MR_NR_CLASSES];
	uint16_t young;
	/* Free objects of other caches' slabs taken from their inboxes (steal_inboxes),
	 * by temperature and class: handed out before a new slab is made. */
	void *stash[NR_MR_TEMP][MR_NR_CLASSES];
	struct mr_span_cache spans;	/* freed spans of up to 64 KiB (large.c) */
};

extern __thread struct mr_tcache *mr_tc MR_HIDDEN __attribute__((tls_model("initial-exec")));
/* mr_tc as a slab descriptor's owner field holds it (tcache.c, owner ids), 0 while
 * mr_tc is NULL: free() compares it with the slab's owner. */
extern __thread uint32_t mr_tc_owner MR_HIDDEN __attribute__((tls_model("initial-exec")));
/* The object at the head of the bin slab_extend last linked objects into, while
 * its slab is fresh (MR_SLAB_FRESH): every byte of it past its link and key reads
 * zero until it is handed out. calloc sets it to NULL before it allocates, and
 * clears only those 16 bytes of an object that comes back equal to it (glibc's
 * calloc skips the fresh part of its heap's top alike). */
extern __thread void *mr_fresh_obj MR_HIDDEN __attribute__((tls_model("initial-exec")));
/* The calling thread's cache, set up on its first allocation (the heap is ready:
 * the caller made sure); NULL means "use the shared cache"
 * (mr_small_alloc_shared: while setting up, after exit, or out of memory). */
struct mr_tcache *mr_tc_slow(void) MR_HIDDEN;
void *mr_small_refill(struct mr_tcache *tc, unsigned cls, enum mr_temp temp) MR_HIDDEN;
void *mr_small_alloc_shared(unsigned cls, enum mr_temp temp) MR_HIDDEN;
void mr_local_free_slow(struct mr_tcache *tc, struct mr_bin *b, struct mr_span *s, void *p) MR_HIDDEN;
/* Free @p of slab @s, owned by another cache: into a batch of @tc, the calling
 * thread's cache (if NULL, one is made for it; failing that, or while the thread
 * sets up or exits, @p goes onto the owner's object inbox at once). */
void mr_remote_free(struct mr_tcache *tc, struct mr_span *s, void *p) MR_HIDDEN;
/* malloc_trim: send the calling thread's batched remote frees to their owners, and
 * give its bins' spare slabs back to the page heap (which purges them then, or at
 * once if they are the biggest freed yet). True if there were spares. */
bool mr_tcache_trim(void) MR_HIDDEN;
/* Before a span of normal data: the thread's empty slabs over a page go back, while
 * it is young (tcache.c, "medium slabs in a young thread"). */
void mr_tcache_medium_return(struct mr_tcache *tc) MR_HIDDEN;
/* Start-up: the shared cache and the free-list key (the arena published); the
 * thread-exit hook, once, at load. fork: every cache lock (os.h, mr_os_fork_lock). */
void mr_tcache_init(void) MR_HIDDEN;
void mr_tcache_start(void) MR_HIDDEN;
void mr_tcache_lock_all(void) MR_HIDDEN;
void mr_tcache_unlock_all(void) MR_HIDDEN;

/* ---- heap integrity (glibc's level): free lists of small objects ----
 * Safe-linking as in glibc 2.32: a free object's next pointer is stored as
 * next ^ (the object's address >> 12), so a pointer written over it by a use after
 * free or an overflow does not lead anywhere chosen, and one that reveals to a
 * misaligned address aborts. The word after it holds mr_free_key while the object
 * is on a free list, checked and cleared when it is handed out: an object handed
 * out twice (freed twice, the list looping back to it) or written over while free
 * aborts there. A local free never reads the object (a cache miss on every cold
 * free: +28% user time on alloc-bench's packing): it compares it with the list's
 * head, glibc's "fasttop" check; a remote free reads the key. */
extern uintptr_t mr_free_key MR_HIDDEN;
/* Lemire's divisibility test: off is a multiple of class c's size iff
 * off * mr_class_magic[c] <= mr_class_magic[c] - 1 (64-bit wrap, off < 2^32). */
extern uint64_t mr_class_magic[MR_NR_CLASSES] MR_HIDDEN;
/* Print "libmemreg: @msg" on stderr, one line, and abort (as glibc's malloc_printerr). */
void mr_heap_corrupt(const char *msg) MR_HIDDEN __attribute__((noreturn, cold));

static inline void *mr_link(const void *slot, const void *next)
{
	return (void *)(((uintptr_t)slot >> 12) ^ (uintptr_t)next);
}

/* Push free object @p on the list at *@head. */
static inline void mr_list_push(void **head, void *p)
{
	((void **)p)[0] = mr_link(p, *head);
	((uintptr_t *)p)[1] = mr_free_key;
	*head = p;
}

/* The object after free object @p. */
static inline void *mr_list_next(const void *p)
{
	uintptr_t next = (uintptr_t)mr_link(p, ((void *const *)p)[0]);

	if (MR_UNLIKELY(next & 15))
		mr_heap_corrupt("malloc(): unaligned free list pointer detected");
	return (void *)next;
}

/* Pop the first object of the non-empty list at *@head. */
static inline void *mr_list_pop(void **head)
{
	void *p = *head;

	*head = mr_list_next(p);
	if (MR_UNLIKELY(((uintptr_t *)p)[1] != mr_free_key))
		mr_heap_corrupt("malloc(): double free or corrupted free list detected");
	((uintptr_t *)p)[1] = 0;
	return p;
}

#endif
