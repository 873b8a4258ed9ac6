/* Thread caches and slabs: per thread, per temperature and size class, a bin of free
 * objects from its current slab; partial slabs lowest address first; an emptied slab
 * kept as the bin's spare for the decay delay; frees from other threads in batches
 * to the owner's inbox; exited threads' caches parked for whoever allocates next.
 * Slabs come from the page heap (heap.c). */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

#include "allocator/heap.h"
#include "allocator/internal.h"
#include "allocator/os.h"
#include "allocator/stats.h"
#include "allocator/tcache.h"

static pthread_mutex_t gtc_lock MR_LINE_ALIGNED = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t pool_lock MR_LINE_ALIGNED = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t rbatch_lock MR_LINE_ALIGNED = PTHREAD_MUTEX_INITIALIZER;	/* after pool_lock */
static pthread_key_t tc_key;

/* The cache of threads that have none (starting up, exiting): used under gtc_lock.
 * Page-aligned so that its untouched bins stay untouched BSS (struct mr_tcache); the
 * sort by alignment (allocator/local.mk) keeps the alignment from moving other
 * variables to a page of their own. */
static struct mr_tcache gtc __attribute__((aligned(4096)));
static struct mr_tcache *pool;	/* caches of exited threads, for reuse */
static struct mr_tcache *all_caches;	/* every cache, for steal_inboxes */
/* Where the next reclaim_parked and steal_inboxes look first: each looks at no more
 * than MR_WALK_CACHES caches, in turn ("taking others' memory" below). The first is
 * under pool_lock (NULL: the pool's top), the second a hint, read and written
 * unlocked (NULL: the list's head). */
static struct mr_tcache *park_cursor;
static struct mr_tcache *steal_cursor;
#define MR_WALK_CACHES 8
static bool gtc_listed;			/* gtc is in all_caches; under gtc_lock */
static bool threads_left;		/* a thread has exited (atomic: read unlocked) */

__thread struct mr_tcache *mr_tc __attribute__((tls_model("initial-exec")));
__thread uint32_t mr_tc_owner __attribute__((tls_model("initial-exec")));
__thread void *mr_fresh_obj __attribute__((tls_model("initial-exec")));
static __thread uint8_t mr_tstate __attribute__((tls_model("initial-exec")));
enum { TS_NEW, TS_INIT, TS_ACTIVE, TS_DEAD };

/* A short thread's borrowing ("short threads" below): for its first allocations,
 * objects of the shared cache taken a few at a time (up to 8, this many bytes). */
#define MR_BORROW_ALLOCS 1024
#define MR_BORROW_BATCH_BYTES 4096
/* The slabs a new cache makes before its bins stop taking objects of a class up
 * ("a class up, while young" below). */
#define MR_YOUNG_SLABS 256

/* A slab's owner as its descriptors hold it (32 bits, not a pointer: struct
 * mr_span): the cache's first page + 1, caches being pages of the arena (tc_new),
 * or MR_OWNER_SHARED for the shared cache, which is libmemreg's data. 0 is no
 * cache, mr_tc_owner's value in a thread that has none. */
#define MR_OWNER_SHARED UINT32_MAX

static uint32_t span_page(const struct mr_span *s)
{
	return (uint32_t)(s - mr_spans);
}

static uint32_t owner_id(const struct mr_tcache *tc)
{
	return tc == &gtc ? MR_OWNER_SHARED : mr_addr_page(tc) + 1;
}

static struct mr_tcache *owner_cache(uint32_t owner)
{
	return owner == MR_OWNER_SHARED ? &gtc : mr_page_addr(owner - 1);
}

/* The owner of slab page @s (any page of the slab: each holds it). */
static struct mr_tcache *slab_owner(const struct mr_span *s)
{
	return owner_cache(__atomic_load_n(&s->owner, __ATOMIC_RELAXED));
}

/* Slab @s's objects per slab, from its class. */
static uint32_t slab_capacity(const struct mr_span *s)
{
	return (mr_class_pages(s->cls) << MR_PAGE_SHIFT) / mr_class_size[s->cls];
}

/* The head of slab @s's local free list (struct mr_span: free_list), or NULL. */
static void *slab_free_head(const struct mr_span *s)
{
	return s->free_list ? (char *)mr_page_addr(span_page(s)) + ((size_t)(s->free_list - 1) << 4)
			    : NULL;
}

static void slab_set_free_head(struct mr_span *s, const void *p)
{
	s->free_list = p ? (uint16_t)((((uintptr_t)p - (uintptr_t)mr_page_addr(span_page(s))) >> 4) + 1)
			 : 0;
}

/* A zeroed cache: its bins are set up per temperature on first use (bins_init). */
static void tc_init(struct mr_tcache *tc)
{
	tc->temp = MR_TEMP_NORMAL;	/* not hot: hot is for sites known hot */
}

/* The bins of @temp start with no current or partial slab. Done on their first
 * refill, not for every cache at its start: most threads never allocate hot or cold
 * data, and each temperature's bins are a page (resident size, see tcache.h). */
static void bins_init(struct mr_tcache *tc, enum mr_temp temp)
{
	for (unsigned c = 0; c < MR_NR_CLASSES; c++)
		tc->bins[temp][c].partial = tc->bins[temp][c].cur_head = tc->bins[temp][c].spare =
			MR_NONE;
	tc->bins_ready |= (uint8_t)(1u << temp);
}

/* At start-up, before any cache is used: the shared cache, and the free-list key
 * from the kernel's random bytes, mixed with the arena's address. */
void mr_tcache_init(void)
{
	const unsigned char *rnd = (const unsigned char *)getauxval(AT_RANDOM);
	unsigned c;

	/* gtc is neither tc_init'ed (its temp is never read: mr_small_alloc_shared is
	 * given the temperature) nor listed in all_caches before its first use: either
	 * would make a page of it resident, or read, in every process. */
	mr_stats_caches(1);
	if (rnd)
		memcpy(&mr_free_key, rnd + 8, sizeof(mr_free_key));
	mr_free_key ^= (uintptr_t)mr_arena_base * 0x9e3779b97f4a7c15u;
	if (!mr_free_key)
		mr_free_key = 0x5a5a5a5a5a5a5a5au;
	for (c = 0; c < MR_NR_CLASSES; c++)
		mr_class_magic[c] = UINT64_MAX / mr_class_size[c] + 1;
}

static void tc_destroy(void *arg);

/* Once, at load (init.c): a thread's exit parks its cache. */
void mr_tcache_start(void)
{
	pthread_key_create(&tc_key, tc_destroy);
}

/* fork: the caches' locks, the shared cache's first. */
void mr_tcache_lock_all(void)
{
	mr_os_fork_lock(&gtc_lock);
	mr_os_fork_lock(&pool_lock);
	mr_os_fork_lock(&rbatch_lock);
}

void mr_tcache_unlock_all(void)
{
	mr_os_fork_unlock(&rbatch_lock);
	mr_os_fork_unlock(&pool_lock);
	mr_os_fork_unlock(&gtc_lock);
}

/* ---- thread caches ---- */

/* @tc joins every cache's list, for steal_inboxes. Under pool_lock. */
static void caches_add(struct mr_tcache *tc)
{
	tc->next_all = all_caches;
	__atomic_store_n(&all_caches, tc, __ATOMIC_RELEASE);	/* read unlocked: steal_inboxes */
}

static struct mr_tcache *tc_new(void)
{
	static uint32_t next_id = 1;
	struct mr_tcache *tc;
	uint32_t page, npages;

	mr_os_lock(&pool_lock);
	tc = pool;
	if (tc) {
		__atomic_store_n(&pool, tc->next_parked, __ATOMIC_RELAXED);	/* peeked unlocked */
		if (park_cursor == tc)	/* only the top leaves the pool */
			park_cursor = NULL;
		__atomic_store_n(&tc->parked, false, __ATOMIC_RELAXED);
	}
	mr_os_unlock(&pool_lock);
	if (tc)
		return tc;
	npages = (uint32_t)((sizeof(*tc) + MR_PAGE_SIZE - 1) / MR_PAGE_SIZE);
	/* Normal, not hot, though every malloc reads it: in the hot reserve it would
	 * make every process hold a region more, hot data or not. */
	page = mr_heap_alloc_pages(npages, 0, MR_TEMP_NORMAL);
	if (page == MR_NONE)
		return NULL;
	tc = mr_page_addr(page);
	/* Pages fresh from the OS read zero already: writing them would make all of
	 * them resident (the page heap says so in the head: MR_SPAN_ZEROED). */
	if (!(mr_spans[page].flags & MR_SPAN_ZEROED))
		memset(tc, 0, sizeof(*tc));
	tc_init(tc);
	tc->young = MR_YOUNG_SLABS;
	mr_os_lock(&pool_lock);
	tc->id = next_id++;
	mr_stats_caches((uint64_t)tc->id + 1);
	caches_add(tc);
	mr_os_unlock(&pool_lock);
	return tc;
}

struct mr_tcache *mr_tc_slow(void)
{
	struct mr_tcache *tc;

	if (mr_tstate != TS_NEW)
		return NULL;
	mr_tstate = TS_INIT;
	tc = tc_new();
	if (!tc) {
		mr_tstate = TS_NEW;
		return NULL;
	}
	/* Threads come and go here once one has exited: a new one borrows at first
	 * ("short threads"). */
	tc->borrow = __atomic_load_n(&threads_left, __ATOMIC_RELAXED) ? MR_BORROW_ALLOCS : 0;
	tc->borrow_keep = 0;
	/* May allocate (keys past the first 32): served by the shared cache meanwhile. */
	pthread_setspecific(tc_key, tc);
	mr_tc = tc;
	mr_tc_owner = owner_id(tc);
	mr_tstate = TS_ACTIVE;
	return tc;
}

/* ---- partial slabs: lowest address first ----
 * A bin's slabs with free objects that are not its current slab form a pairing heap
 * keyed by the slab's first page (so by region, then address): the lowest is the
 * root, O(1) to find; add O(1), delete O(log n) amortised. Links live in the head
 * descriptors: child = first child, next = next sibling, prev = the previous
 * sibling, or the parent for a first child (MR_NONE at the root). */

/* Meld two heaps (roots with no siblings): the higher root becomes the lower's
 * first child. */
static uint32_t ph_meld(uint32_t a, uint32_t b)
{
	struct mr_span *sa, *sb;

	if (a == MR_NONE)
		return b;
	if (b == MR_NONE)
		return a;
	if (b < a) {
		uint32_t t = a;

		a = b;
		b = t;
	}
	sa = &mr_spans[a];
	sb = &mr_spans[b];
	sb->next = sa->child;
	if (sa->child != MR_NONE)
		mr_spans[sa->child].prev = b;
	sb->prev = a;
	sa->child = b;
	return a;
}

/* The two-pass pairing of a sibling list (first, next, ...) into one heap. */
static uint32_t ph_merge_pairs(uint32_t first)
{
	uint32_t stack = MR_NONE, root = MR_NONE;

	while (first != MR_NONE) {
		uint32_t a = first, b = mr_spans[a].next, m;

		first = b != MR_NONE ? mr_spans[b].next : MR_NONE;
		mr_spans[a].next = mr_spans[a].prev = MR_NONE;
		if (b != MR_NONE)
			mr_spans[b].next = mr_spans[b].prev = MR_NONE;
		m = ph_meld(a, b);
		mr_spans[m].next = stack;	/* a stack of the pairs, the last on top */
		stack = m;
	}
	while (stack != MR_NONE) {
		uint32_t m = stack;

		stack = mr_spans[m].next;
		mr_spans[m].next = MR_NONE;
		root = ph_meld(root, m);
	}
	return root;
}

static void partial_del(struct mr_bin *b, struct mr_span *s)
{
	uint32_t page = span_page(s), sub = ph_merge_pairs(s->child);

	if (page == b->partial) {
		b->partial = sub;
	} else {
		if (mr_spans[s->prev].child == page)
			mr_spans[s->prev].child = s->next;
		else
			mr_spans[s->prev].next = s->next;
		if (s->next != MR_NONE)
			mr_spans[s->next].prev = s->prev;
		b->partial = ph_meld(b->partial, sub);
	}
	if (b->partial != MR_NONE)
		mr_spans[b->partial].prev = MR_NONE;
	s->next = s->prev = s->child = MR_NONE;
	s->flags &= ~MR_SLAB_PARTIAL;
}

static void partial_add(struct mr_bin *b, struct mr_span *s)
{
	s->next = s->prev = s->child = MR_NONE;
	b->partial = ph_meld(b->partial, span_page(s));
	s->flags |= MR_SLAB_PARTIAL;
}

static void slab_release(struct mr_span *s)
{
	uint32_t i;

	/* Interior pages stop looking like a slab's before the pages go back. */
	for (i = 1; i < mr_class_pages(s->cls); i++)
		s[i].kind = MR_SPAN_NONE;
	mr_heap_free_pages(span_page(s), mr_class_pages(s->cls));
}

static void set_current(struct mr_tcache *tc, struct mr_bin *b, struct mr_span *s);
static void slab_extend(struct mr_bin *b, struct mr_span *s);
static bool slab_lower_free(unsigned cls, enum mr_temp temp, uint32_t page);

/* Slab @s starts empty, with @flags: nothing handed out, no free list (its used
 * count over the page count the heap wrote, mr_span_pages). */
static void slab_start(struct mr_span *s, uint16_t flags)
{
	s->flags = flags;
	s->used = 0;
	s->bump = 0;
	s->free_list = 0;
}

/* ---- spare slabs ----
 * A slab whose last object is freed, when it is not its bin's current one, is kept
 * as the bin's spare (one a bin) rather than given back to the page heap at once.
 * Given back, its pages (resident, written) went to whatever asked the heap next,
 * often another class's slab, whose objects lie at other offsets, and the bin's next
 * slab came from pages never touched: the resident size grew by a slab each time
 * (alloc-bench's server, 4 threads of requests: 14.3 -> 11.9 MiB with the spares;
 * docs/allocator.md, "A bin's spare slab"). A spare goes back to the page heap
 * (dirty, for the heap's own decay) once it has been spare for the decay delay,
 * checked when the thread makes a spare or needs a new slab, and at the thread's
 * exit and its malloc_trim; and when the bin takes it again but the heap has room
 * in a region below (lowest first). A free into a spare is a double free. */
static void spare_release(struct mr_tcache *tc, struct mr_bin *b)
{
	struct mr_span *s = &mr_spans[b->spare];

	b->spare = MR_NONE;
	tc->nspares--;
	s->flags &= (uint16_t)~MR_SLAB_SPARE;
	slab_release(s);
}

/* Give back @tc's spares that have waited @delay_ms or more (all with 0). */
static void spares_release(struct mr_tcache *tc, uint32_t now, uint32_t delay_ms)
{
	uint32_t due = UINT32_MAX;

	for (unsigned t = 0; t < NR_MR_TEMP && tc->nspares; t++) {
		if (!(tc->bins_ready & (1u << t)))
			continue;
		for (unsigned c = 0; c < MR_NR_CLASSES; c++) {
			struct mr_bin *b = &tc->bins[t][c];
			uint32_t age;

			if (b->spare == MR_NONE)
				continue;
			age = now - mr_spans[b->spare].freed_ms;
			if (age >= delay_ms)
				spare_release(tc, b);
			else if (delay_ms - age < due)
				due = delay_ms - age;
		}
	}
	tc->spares_due_ms = now + (due == UINT32_MAX ? 0 : due);
}

static void spares_check(struct mr_tcache *tc)
{
	uint32_t now;

	if (!tc->nspares)
		return;
	now = mr_ms_of(mr_os_now_ns());
	if ((int32_t)(now - tc->spares_due_ms) >= 0)
		spares_release(tc, now, (uint32_t)MR_OPT(decay_ms));
}

/* Slab @s of bin @b, in no list, has no object handed out. Its free list then
 * holds each of the objects it ever listed (bump) once: a longer one loops, which a
 * local double free does (free(a), free(b), free(a): only the list's head is
 * compared at a local free), having counted an object twice and taken used to zero
 * while another is live. Handed out again, the loop would be caught by the key; a
 * slab emptied so would go on to the spare or the page heap with the live object in
 * it, which the next slab overwrites. One walk each time a slab empties. */
static void slab_empty(struct mr_tcache *tc, struct mr_bin *b, struct mr_span *s)
{
	uint32_t now, n = 0;

	for (void *p = slab_free_head(s); p; p = mr_list_next(p))
		if (++n > s->bump)
			mr_heap_corrupt("free(): double free detected");
	if (b->spare != MR_NONE || MR_OPT(decay_ms) == 0) {
		slab_release(s);
		return;
	}
	now = mr_ms_of(mr_os_now_ns());
	b->spare = span_page(s);
	s->flags |= MR_SLAB_SPARE;
	s->freed_ms = now;
	if (!tc->nspares++)
		tc->spares_due_ms = now + (uint32_t)MR_OPT(decay_ms);
	else if ((int32_t)(now - tc->spares_due_ms) >= 0)
		spares_release(tc, now, (uint32_t)MR_OPT(decay_ms));
}

/* The bin's spare as its current slab, all its objects free; false if it has none
 * or the page heap has room for a slab lower down (then the spare goes back). */
static bool spare_take(struct mr_tcache *tc, struct mr_bin *b, unsigned cls, enum mr_temp temp)
{
	struct mr_span *s;

	if (b->spare == MR_NONE)
		return false;
	s = &mr_spans[b->spare];
	if (slab_lower_free(cls, temp, b->spare)) {
		spare_release(tc, b);
		return false;
	}
	b->spare = MR_NONE;
	tc->nspares--;
	slab_start(s, 0);	/* resident: neither fresh nor ahead */
	set_current(tc, b, s);
	slab_extend(b, s);
	return true;
}

/* A free of an object in a slab this cache owns, when the slab is not b's current
 * one; b is the bin of the slab's temperature and class. */
void mr_local_free_slow(struct mr_tcache *tc, struct mr_bin *b, struct mr_span *s, void *p)
{
	void *head = slab_free_head(s);

	/* freed just before (glibc's fasttop), or into a spare: every object is free */
	if (MR_UNLIKELY(p == head || (s->flags & MR_SLAB_SPARE)))
		mr_heap_corrupt("free(): double free detected");
	mr_list_push(&head, p);
	slab_set_free_head(s, head);
	if (--s->used == 0) {
		if (s->flags & MR_SLAB_PARTIAL)
			partial_del(b, s);
		slab_empty(tc, b, s);
		return;
	}
	if (!(s->flags & MR_SLAB_PARTIAL))
		partial_add(b, s);
	/* Lowest first holds for the current slab too: one that a partial slab
	 * undercuts by a region gives way to it. Else a current slab whose objects
	 * keep being freed and reused (its bin never runs dry) stays in a high region
	 * for good, and so does the live data of its class. */
	if (b->cur && mr_page_region(&mr_heap, b->partial) < mr_page_region(&mr_heap, b->cur_head)) {
		s = &mr_spans[b->partial];
		partial_del(b, s);
		set_current(tc, b, s);
	}
}

static void inbox_push(struct mr_tcache *owner, void *p);

/* A free drained from the inbox: the slab may be the bin's current one. A slab
 * that changed owner since the free read its owner (reclaim_parked) gets the
 * object forwarded to its owner's inbox. */
static void local_free(struct mr_tcache *tc, struct mr_span *s, void *p)
{
	struct mr_bin *b = &tc->bins[s->temp][s->cls];
	struct mr_tcache *owner = slab_owner(s);

	if (MR_UNLIKELY(owner != tc)) {
		inbox_push(owner, p);
		return;
	}
	if (s == b->cur) {
		mr_list_push(&b->free, p);
		b->cur_used--;
		return;
	}
	mr_local_free_slow(tc, b, s, p);
}

uintptr_t mr_free_key;
uint64_t mr_class_magic[MR_NR_CLASSES] MR_LINE_ALIGNED;	/* read by every free */

void mr_heap_corrupt(const char *msg)
{
	mr_write_str(2, "libmemreg: ");
	mr_write_str(2, msg);
	mr_write_str(2, "\n");
	abort();
}

/* ---- remote frees in batches ----
 * A free of another cache's object goes into the freeing thread's batch for that
 * owner, an array of pointers; a full batch (or one holding 64 KiB of objects) goes
 * onto the owner's inbox_batches with one push. The owner drains the batches when
 * its bin runs dry. Neither side touches the objects on the way but to read the
 * key (a double free is caught there, as before): linking them through their first
 * word, as the object inbox does, costs a cache miss on each side for each object
 * when the threads run on different cores (alloc-bench's prodcons spent 30% of its
 * time in the owner's drain that way), as jemalloc's pointer-array caches avoid.
 * A batch is 512 bytes of pages taken from the page heap and never given back.
 * Emptied, it goes back to the thread that filled it (one push onto its
 * `returned`), which takes them all with one exchange when its spares run out: a
 * thread that only frees (a consumer) never fills its spares by draining, and
 * taking every batch from the shared pool under its lock, while the owner gave
 * them back there, had alloc-bench's prodcons spend 13% of its time in
 * pthread_mutex_lock. The pool is for batches beyond a thread's spares and for new
 * ones. An owner that does not drain (a thread that stopped allocating)
 * would pile batches up, 8 bytes per object: past MR_RBATCH_BACKLOG waiting, a full
 * batch's objects go onto the object inbox instead, linked, and the batch is kept.
 * So do those of a batch of fewer than MR_RBATCH_LINK objects whose out slot another
 * owner's free takes: a thread freeing to more owners than it has slots (a thousand
 * threads freeing each other's objects) would send batches of one object. */
#define MR_RBATCH_OBJS 60
#define MR_RBATCH_BYTES (64u << 10)
#define MR_RBATCH_BACKLOG 32u
#define MR_RBATCH_SPARE 8u
#define MR_RBATCH_LINK 4u

struct mr_rbatch {
	struct mr_rbatch *next;		/* in an inbox, the pool or the spares */
	struct mr_tcache *owner;
	struct mr_tcache *from;		/* the cache that fills it: emptied, back to it */
	uint32_t n, bytes;
	void *obj[MR_RBATCH_OBJS];
};
_Static_assert(sizeof(struct mr_rbatch) == 512, "eight batches a page");

static struct mr_rbatch *rbatch_pool;	/* under rbatch_lock */

/* An empty batch for @tc to fill: its spares, else those its owners gave back,
 * else the pool. */
static struct mr_rbatch *rbatch_get(struct mr_tcache *tc)
{
	struct mr_rbatch *b = tc->spare;

	if (!b && atomic_load_explicit(&tc->returned, memory_order_relaxed)) {
		b = tc->spare = atomic_exchange_explicit(&tc->returned, NULL, memory_order_acquire);
		for (tc->nspare = 0; b; b = b->next)
			tc->nspare++;
		b = tc->spare;
	}
	if (b) {
		tc->spare = b->next;
		tc->nspare--;
		b->from = tc;
		return b;
	}
	mr_os_lock(&rbatch_lock);
	if (!rbatch_pool) {
		uint32_t page = mr_heap_alloc_pages(1, 0, MR_TEMP_NORMAL);

		if (page != MR_NONE) {
			struct mr_rbatch *a = mr_page_addr(page);

			for (unsigned i = 0; i < MR_PAGE_SIZE / sizeof(*a); i++) {
				a[i].next = rbatch_pool;
				rbatch_pool = &a[i];
			}
		}
	}
	b = rbatch_pool;
	if (b)
		rbatch_pool = b->next;
	mr_os_unlock(&rbatch_lock);
	if (b)
		b->from = tc;
	return b;
}

/* Empty batch @b to @tc's spares, or the pool when it has enough. */
static void rbatch_put(struct mr_tcache *tc, struct mr_rbatch *b)
{
	if (tc->nspare < MR_RBATCH_SPARE) {
		b->next = tc->spare;
		tc->spare = b;
		tc->nspare++;
		return;
	}
	mr_os_lock(&rbatch_lock);
	b->next = rbatch_pool;
	rbatch_pool = b;
	mr_os_unlock(&rbatch_lock);
}

/* Batches @head..@tail, linked, onto the lock-free stack at @top: one push. */
static void rbatch_stack_push(_Atomic(struct mr_rbatch *) *top, struct mr_rbatch *head,
			      struct mr_rbatch *tail)
{
	struct mr_rbatch *old = atomic_load_explicit(top, memory_order_relaxed);

	do {
		tail->next = old;
	} while (!atomic_compare_exchange_weak_explicit(top, &old, head, memory_order_release,
							memory_order_relaxed));
}

/* Batch @b, emptied by @tc (its owner), back to the cache that filled it. */
static void rbatch_return(struct mr_tcache *tc, struct mr_rbatch *b)
{
	struct mr_tcache *from = b->from;

	if (from == tc) {
		rbatch_put(tc, b);
		return;
	}
	rbatch_stack_push(&from->returned, b, b);
}

/* Whether @p, freed by another thread, is free already: the key says so (it is
 * cleared whenever an object is handed out). */
static void check_remote(const void *p)
{
	if (MR_UNLIKELY(((const uintptr_t *)p)[1] == mr_free_key))
		mr_heap_corrupt("free(): double free detected");
}

/* Objects @head..@tail, linked, onto @owner's object inbox: one push. */
static void inbox_push_chain(struct mr_tcache *owner, void *head, void *tail)
{
	void *old = atomic_load_explicit(&owner->inbox, memory_order_relaxed);

	do {
		*(void **)tail = mr_link(tail, old);
	} while (!atomic_compare_exchange_weak_explicit(&owner->inbox, &old, head,
							memory_order_release,
							memory_order_relaxed));
}

static void inbox_push(struct mr_tcache *owner, void *p)
{
	((uintptr_t *)p)[1] = mr_free_key;
	inbox_push_chain(owner, p, p);
}

/* Batches @head..@tail (@n of them, linked) onto @owner's inbox of batches. */
static void inbox_push_batches(struct mr_tcache *owner, struct mr_rbatch *head,
			       struct mr_rbatch *tail, uint32_t n)
{
	rbatch_stack_push(&owner->inbox_batches, head, tail);
	atomic_fetch_add_explicit(&owner->inbox_nbatches, n, memory_order_relaxed);
}

/* Batch @b's objects (at least one) onto its owner's object inbox, linked (the
 * caller empties @b, or gives it up). An object in it twice (freed twice by this
 * thread, neither free seeing the other) would link to itself: the key, written by
 * the first push, says so. */
static void rbatch_link(struct mr_rbatch *b)
{
	void *chain = NULL;

	for (uint32_t i = b->n; i-- > 0;) {
		check_remote(b->obj[i]);
		mr_list_push(&chain, b->obj[i]);	/* keyed and linked, obj[0] first */
	}
	inbox_push_chain(b->owner, chain, b->obj[b->n - 1]);
}

/* Send batch @b (not empty) to its owner, from @tc's out slots. */
static void rbatch_send(struct mr_tcache *tc, struct mr_rbatch *b)
{
	struct mr_tcache *owner = b->owner;

	if (atomic_load_explicit(&owner->inbox_nbatches, memory_order_relaxed) >= MR_RBATCH_BACKLOG) {
		rbatch_link(b);
		rbatch_put(tc, b);
		return;
	}
	inbox_push_batches(owner, b, b, 1);
}

void mr_remote_free(struct mr_tcache *tc, struct mr_span *s, void *p)
{
	struct mr_tcache *owner = slab_owner(s);
	struct mr_rbatch **slot, *b;

	/* Another thread's lists cannot be searched: the key alone says double free. */
	check_remote(p);
	/* A thread that only frees (a consumer) gets a cache for its batches. */
	if (!tc && !(tc = mr_tc_slow())) {
		inbox_push(owner, p);
		return;
	}
	/* A thread that borrows keeps the shared cache's objects it frees, for its
	 * next allocations ("short threads"): keyed on its stash, a second free of one
	 * aborts at once, as in a slab of its own. No more than it took: a thread that
	 * only frees (a consumer) would hold them for nothing. */
	if (owner == &gtc && tc->borrow && tc->borrow_keep) {
		tc->borrow_keep--;
		mr_list_push(&tc->stash[s->temp][s->cls], p);
		return;
	}
	slot = &tc->out[owner->id % MR_OUT_SLOTS];
	b = *slot;
	if (MR_UNLIKELY(!b || b->owner != owner)) {
		if (b && b->n < MR_RBATCH_LINK) {
			rbatch_link(b);		/* the slot's batch serves the new owner */
		} else {
			if (b)
				rbatch_send(tc, b);
			b = *slot = rbatch_get(tc);
			if (MR_UNLIKELY(!b)) {
				inbox_push(owner, p);
				return;
			}
		}
		b->owner = owner;
		b->n = b->bytes = 0;
	}
	b->obj[b->n++] = p;
	b->bytes += mr_class_size[s->cls];
	if (b->n == MR_RBATCH_OBJS || b->bytes >= MR_RBATCH_BYTES) {
		*slot = NULL;
		rbatch_send(tc, b);
	}
}

/* Send @tc's batches that are not full (new slabs, thread exit, malloc_trim). */
static void remote_flush(struct mr_tcache *tc)
{
	for (unsigned i = 0; i < MR_OUT_SLOTS; i++)
		if (tc->out[i]) {
			rbatch_send(tc, tc->out[i]);
			tc->out[i] = NULL;
		}
}

bool mr_tcache_trim(void)
{
	uint16_t n;

	if (!mr_tc)
		return false;
	remote_flush(mr_tc);
	n = mr_tc->nspares;
	spares_release(mr_tc, 0, 0);
	return n != 0;
}

static bool inbox_waiting(struct mr_tcache *tc)
{
	return atomic_load_explicit(&tc->inbox, memory_order_relaxed) ||
	       atomic_load_explicit(&tc->inbox_batches, memory_order_relaxed);
}

/* Take @tc's inbox of batches whole. */
static struct mr_rbatch *inbox_take_batches(struct mr_tcache *tc)
{
	struct mr_rbatch *b = atomic_exchange_explicit(&tc->inbox_batches, NULL,
							memory_order_acquire);

	atomic_store_explicit(&tc->inbox_nbatches, 0, memory_order_relaxed);
	return b;
}

/* Frees that other threads pushed onto this cache's inboxes. */
static void drain_inbox(struct mr_tcache *tc)
{
	void *p = atomic_exchange_explicit(&tc->inbox, NULL, memory_order_acquire);
	struct mr_rbatch *b;

	/* one thread at a time drains a cache: its owner, or a reclaimer */
	atomic_store_explicit(&tc->drains, atomic_load_explicit(&tc->drains, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	while (p) {
		void *next = mr_list_next(p);
		struct mr_span *s = mr_span_of(p);

		local_free(tc, s, p);
		p = next;
	}
	b = inbox_take_batches(tc);
	while (b) {
		struct mr_rbatch *next = b->next;

		for (uint32_t i = 0; i < b->n; i++) {
			/* freed twice by other threads, both in batches */
			check_remote(b->obj[i]);
			local_free(tc, mr_span_of(b->obj[i]), b->obj[i]);
		}
		rbatch_return(tc, b);
		b = next;
	}
}

/* Hand out objects [bump, bump + n) of the current slab as the bin's free list,
 * a page's worth at a time so untouched slab pages stay untouched.
 *
 * Objects smaller than a cache line (16 and 32 bytes, which divide it) are handed out
 * one per line across the page before any line gets its second: the k-th object of
 * the page's run sits in line k % lines. A thread that allocates small objects in a
 * row for other threads (per-worker counters, request slots) then gives each its own
 * line, for up to 64 in a row, where address order would put two to four threads'
 * objects in one line and make them fight over it (false sharing). The page written
 * is the same page, so resident memory does not change; what a single thread loses
 * is that 4 objects made in a row share a line only when 64 were made between
 * (MR_LINE_SIZE: internal.h). */

/* Pages of fresh slab @s (at @base) that the writes [@first, @to) reach first,
 * made resident by one system call rather than a fault each. Pages are taken in
 * groups (of 1 page, or 4 with MR_SLAB_AHEAD); a group is new when the writes
 * reach it and the objects before @first did not: the page of an unaligned @first
 * holds the object before it too, written already by an earlier extend or the
 * program. Groups stop at the page of the last object's link, so a slab whose
 * objects are all handed out has no page populated that slab_extend does not write. */
static void populate_new_pages(const struct mr_span *s, uintptr_t base, uintptr_t first,
			       uintptr_t to)
{
	unsigned shift = MR_PAGE_SHIFT + (s->flags & MR_SLAB_AHEAD ? 2 : 0);
	uintptr_t g0 = first == base ? 0 : ((first - 1 - base) >> shift) + 1;
	uintptr_t g1 = (to - 1 - base) >> shift, from, end, last;

	if (g0 > g1)
		return;
	from = base + (g0 << shift);
	end = base + ((g1 + 1) << shift);
	last = base + (((size_t)(slab_capacity(s) - 1) * mr_class_size[s->cls]) &
		       ~(uintptr_t)(MR_PAGE_SIZE - 1)) + MR_PAGE_SIZE;
	if (end > last)
		end = last;
	mr_os_populate((void *)from, end - from);
}

/* Objects [@first, @first + @len) of a slab whose bin writes its objects of a page
 * or more whole (slab_written_whole), as they are handed out: their pages resident
 * by one system call rather than a fault each, and no page of an object not handed
 * out (the slab whole, as before, held up to 15 objects' pages that a bin peaking
 * just past a slab never used: git log -p, 0.8 MiB). The page @first starts on may
 * hold the object before, resident already: populating it again costs no fault. */
static void populate_objects(char *first, size_t len)
{
	uintptr_t from = (uintptr_t)first & ~(uintptr_t)(MR_PAGE_SIZE - 1);
	uintptr_t to = ((uintptr_t)first + len + MR_PAGE_SIZE - 1) & ~(uintptr_t)(MR_PAGE_SIZE - 1);

	mr_os_populate((void *)from, to - from);
}

static void slab_extend(struct mr_bin *b, struct mr_span *s)
{
	uint32_t size = mr_class_size[s->cls], n = (uint32_t)(MR_PAGE_SIZE / size);
	uint32_t per_line = size < MR_LINE_SIZE ? MR_LINE_SIZE / size : 1, lines, k, l;
	char *base = mr_page_addr(span_page(s)), *first = base + (size_t)s->bump * size;
	char *o = first;

	if (n == 0)
		n = 1;
	if (n > slab_capacity(s) - s->bump)
		n = slab_capacity(s) - s->bump;
	if (n % per_line)
		per_line = 1;
	lines = n / per_line;
	if ((s->flags & MR_SLAB_AHEAD) && size >= MR_PAGE_SIZE)
		populate_objects(first, (size_t)n * size);
	else if (s->flags & MR_SLAB_FRESH)
		populate_new_pages(s, (uintptr_t)base, (uintptr_t)first,
				   (uintptr_t)first + (size_t)(n - 1) * size + 2 * sizeof(void *));
	/* Linked and keyed as mr_list_push would: every listed object has the key. In
	 * handout order: slot k of line 0, 1, ... lines - 1, then slot k + 1. */
	for (k = 0; k < per_line; k++)
		for (l = 0; l < lines; l++) {
			char *next = l + 1 < lines ? o + (size_t)per_line * size
				   : k + 1 < per_line ? first + (size_t)(k + 1) * size
				   : (char *)b->free;

			((void **)o)[0] = mr_link(o, next);
			((uintptr_t *)o)[1] = mr_free_key;
			o = next;
		}
	b->free = first;
	s->bump = (uint16_t)(s->bump + n);
	if (s->flags & MR_SLAB_FRESH)
		mr_fresh_obj = first;
}

/* The bin's current slab (there is one) stops being current: it keeps what is left
 * of the bin's list, and if empty becomes the bin's spare (or goes back to the
 * heap), else goes to the partial list if it has room. */
static void bin_retire_current(struct mr_tcache *tc, struct mr_bin *b)
{
	struct mr_span *s = b->cur;

	b->cur = NULL;
	b->cur_head = MR_NONE;
	s->flags &= ~MR_SLAB_CURRENT;
	slab_set_free_head(s, b->free);
	s->used = (uint16_t)b->cur_used;
	b->free = NULL;
	if (s->used == 0)
		slab_empty(tc, b, s);
	else if (s->free_list || s->bump < slab_capacity(s))
		partial_add(b, s);
}

static void set_current(struct mr_tcache *tc, struct mr_bin *b, struct mr_span *s)
{
	if (b->cur)
		bin_retire_current(tc, b);
	b->cur = s;
	b->cur_head = (uint32_t)(s - mr_spans);
	b->cur_used = s->used;
	b->free = slab_free_head(s);
	s->free_list = 0;
	s->flags |= MR_SLAB_CURRENT;
}

/* A new slab, MR_SLAB_FRESH if its pages were never used, or purged (none resident). */
static struct mr_span *slab_new(struct mr_tcache *tc, unsigned cls, enum mr_temp temp)
{
	uint32_t npages = mr_class_pages(cls), page, i, owner = owner_id(tc);
	struct mr_span *s;

	page = mr_heap_alloc_slab(cls, temp);	/* the head's kind, class, temperature */
	if (page == MR_NONE)
		return NULL;
	s = &mr_spans[page];
	slab_start(s, s->flags & MR_SPAN_ZEROED ? MR_SLAB_FRESH : 0);
	s->owner = owner;
	for (i = 1; i < npages; i++) {
		mr_spans[page + i].head = page;
		mr_spans[page + i].kind = MR_SPAN_SLAB;
		mr_spans[page + i].cls = (uint8_t)cls;
		mr_spans[page + i].temp = (uint8_t)temp;
		mr_spans[page + i].owner = owner;
	}
	return s;
}

/* Slab @s (every page) now belongs to @tc: its local frees are @tc's, and remote
 * frees go to @tc's inbox (a free that read the old owner still reaches the old
 * inbox: its drain forwards it, see local_free). */
static void slab_set_owner(struct mr_span *s, struct mr_tcache *tc)
{
	uint32_t i, owner = owner_id(tc);

	for (i = 0; i < mr_class_pages(s->cls); i++)
		__atomic_store_n(&s[i].owner, owner, __ATOMIC_RELAXED);
}

/* ---- taking others' memory, a few caches at a time ----
 * A cache that would make a new slab first takes the free memory other caches hold
 * (reclaim_parked, steal_inboxes). Each looks at MR_WALK_CACHES caches, from where
 * the last one stopped, round the list: walking them all made a refill O(caches)
 * under the pool lock, and programs that run a thousand threads at once spent two
 * thirds of their time there (docs/allocator.md, "A few caches at a time"). Every
 * cache is still looked at, one refill in caches / MR_WALK_CACHES. */

/* The cache after @c in the pool, round to the top. Under pool_lock. */
static struct mr_tcache *parked_next(struct mr_tcache *c)
{
	return c->next_parked ? c->next_parked : pool;
}

/* Exited threads' caches (mimalloc's abandoned segments): whoever allocates next
 * drains their inboxes into their slabs (empty slabs go back to the page heap, so
 * the next slab comes from them) and takes their partial slabs of @temp/@cls.
 * Under pool_lock: a parked cache is used by no thread. Returns whether @tc got a
 * partial slab. */
static bool reclaim_parked(struct mr_tcache *tc, unsigned cls, enum mr_temp temp)
{
	struct mr_bin *b = &tc->bins[temp][cls];
	struct mr_tcache *pc, *first;
	unsigned n = 0;
	bool got = false;

	if (!__atomic_load_n(&pool, __ATOMIC_RELAXED))
		return false;
	mr_os_lock(&pool_lock);
	pc = first = park_cursor ? park_cursor : pool;
	while (pc) {
		struct mr_bin *pb = &pc->bins[temp][cls];

		if (inbox_waiting(pc)) {
			drain_inbox(pc);
			spares_release(pc, 0, 0);	/* a parked cache keeps none */
		}
		/* never used: no slab (and partial reads 0) */
		while ((pc->bins_ready & (1u << temp)) && pb->partial != MR_NONE) {
			struct mr_span *s = &mr_spans[pb->partial];

			partial_del(pb, s);
			slab_set_owner(s, tc);
			partial_add(b, s);
			got = true;
		}
		pc = parked_next(pc);
		if (pc == first || ++n == MR_WALK_CACHES)
			break;
	}
	park_cursor = pc;
	mr_os_unlock(&pool_lock);
	return got;
}

/* Take what steal_inboxes wants of @c's batches: @tc's own objects back to its
 * slabs, those of @temp/@cls to its stash; batches left with others go back to
 * @c's inbox (one push), the emptied ones back to the threads that filled them. */
static void steal_batches(struct mr_tcache *tc, struct mr_tcache *c, unsigned cls,
			  enum mr_temp temp)
{
	struct mr_rbatch *b = inbox_take_batches(c), *rest = NULL, *rest_tail = NULL;
	uint32_t nrest = 0;

	while (b) {
		struct mr_rbatch *next = b->next;
		uint32_t i, m = 0;

		for (i = 0; i < b->n; i++) {
			void *p = b->obj[i];
			struct mr_span *s = mr_span_of(p);

			if (slab_owner(s) == tc) {
				check_remote(p);
				local_free(tc, s, p);
			} else if (s->temp == temp && s->cls == cls) {
				check_remote(p);
				mr_list_push(&tc->stash[temp][cls], p);
			} else {
				b->obj[m++] = p;
			}
		}
		b->n = m;
		if (m) {
			b->next = rest;
			if (!rest)
				rest_tail = b;
			rest = b;
			nrest++;
		} else {
			rbatch_return(tc, b);
		}
		b = next;
	}
	if (rest)
		inbox_push_batches(c, rest, rest_tail, nrest);
}

/* Whether @c's inboxes were drained since a cache last looked at them here: an
 * owner that allocates drains its own soon enough, and going through its frees for
 * one class, to push the rest back, cost more than the new slab it saves (a
 * thousand threads freeing to each other: each refill went through thousands of
 * other threads' objects). An owner that stopped allocating is taken from at the
 * second look. */
static bool drained_lately(struct mr_tcache *c)
{
	uint32_t d = atomic_load_explicit(&c->drains, memory_order_relaxed);

	if (atomic_load_explicit(&c->drains_seen, memory_order_relaxed) == d)
		return false;
	atomic_store_explicit(&c->drains_seen, d, memory_order_relaxed);
	return true;
}

/* Objects other threads freed to live caches' inboxes, taken by a cache that would
 * otherwise need a new slab: its own go back to its slabs, those of @temp/@cls to
 * its stash, the rest back to the inbox they came from (one chain, one CAS). The
 * stashed ones stay counted as used in their slabs, as if never freed: handed out
 * again and freed later, they go to their slab's owner like any object. Parked
 * caches are left to reclaim_parked, and a cache whose look found nothing skips
 * its next 1, 3, 7 ... 127 looks. Returns whether the stash got some. */
static bool steal_inboxes(struct mr_tcache *tc, unsigned cls, enum mr_temp temp)
{
	struct mr_tcache *head = __atomic_load_n(&all_caches, __ATOMIC_ACQUIRE);
	struct mr_tcache *c, *first;
	unsigned n = 0;
	bool got = false;

	if (tc->steal_wait) {
		tc->steal_wait--;
		return false;
	}
	/* The list only grows at its head, and no cache leaves it: a cursor stays on it. */
	c = __atomic_load_n(&steal_cursor, __ATOMIC_RELAXED);
	first = c = c ? c : head;
	while (c && !got) {
		void *p, *rest = NULL, *rest_tail = NULL;

		if (c != tc && !__atomic_load_n(&c->parked, __ATOMIC_RELAXED) && inbox_waiting(c) &&
		    !drained_lately(c)) {
			if (atomic_load_explicit(&c->inbox_batches, memory_order_relaxed))
				steal_batches(tc, c, cls, temp);
			p = atomic_exchange_explicit(&c->inbox, NULL, memory_order_acquire);
			while (p) {
				void *next = mr_list_next(p);
				struct mr_span *s = mr_span_of(p);

				if (slab_owner(s) == tc) {
					local_free(tc, s, p);
				} else if (s->temp == temp && s->cls == cls) {
					mr_list_push(&tc->stash[temp][cls], p);
				} else {
					*(void **)p = mr_link(p, rest);
					if (!rest)
						rest_tail = p;
					rest = p;
				}
				p = next;
			}
			if (rest)
				inbox_push_chain(c, rest, rest_tail);
			got = tc->stash[temp][cls] != NULL;
		}
		c = __atomic_load_n(&c->next_all, __ATOMIC_ACQUIRE);
		if (!c)
			c = head;
		if (c == first || ++n == MR_WALK_CACHES)
			break;
	}
	__atomic_store_n(&steal_cursor, c, __ATOMIC_RELAXED);
	if (got)
		tc->steal_backoff = 0;
	else if (tc->steal_backoff < 64)
		tc->steal_backoff = (uint8_t)(tc->steal_backoff * 2 + 1);
	tc->steal_wait = tc->steal_backoff;
	return got;
}

/* The stash goes back to the slabs' owners (a thread exits): the shared cache's
 * objects (borrowed, "short threads") straight into its slabs, under one lock,
 * the others forwarded to their owner's inbox. */
static void stash_flush(struct mr_tcache *tc)
{
	bool shared = false;
	unsigned t, c;

	for (t = 0; t < NR_MR_TEMP; t++)
		for (c = 0; c < MR_NR_CLASSES; c++)
			while (tc->stash[t][c]) {
				void *p = tc->stash[t][c];
				struct mr_span *s = mr_span_of(p);

				tc->stash[t][c] = mr_list_next(p);
				if (slab_owner(s) == &gtc) {
					if (!shared)
						mr_os_lock(&gtc_lock);
					shared = true;
					local_free(&gtc, s, p);
				} else {
					local_free(tc, s, p);	/* forwards what is not ours */
				}
			}
	if (shared)
		mr_os_unlock(&gtc_lock);
}

/* Whether the page heap has room for a new slab of class @cls in a region below
 * the one of page @page: then a new slab packs better than reusing that one. A
 * hint: asked only if the heap lock is free at once (a refill does not queue on
 * it for this), else the answer is no. */
static bool slab_lower_free(unsigned cls, enum mr_temp temp, uint32_t page)
{
	return mr_heap_lower_free(mr_class_slab_order[cls], temp, page);
}

/* The bin's next slab: the lowest of the current one (if it has room) and the
 * lowest partial one, unless the page heap has room lower down (then a new slab:
 * sorted reuse must not keep a high slab alive when the low regions have space).
 * False if neither has a free object or a lower slab is to be made. */
static bool bin_take_lowest(struct mr_tcache *tc, struct mr_bin *b, unsigned cls, enum mr_temp temp)
{
	struct mr_span *s = b->cur;

	if (b->partial != MR_NONE && (!s || s->bump == slab_capacity(s) || b->partial < b->cur_head)) {
		if (slab_lower_free(cls, temp, b->partial))
			return false;
		s = &mr_spans[b->partial];
		partial_del(b, s);
		set_current(tc, b, s);
		if (!b->free)
			slab_extend(b, s);
		return true;
	}
	if (s && s->bump < slab_capacity(s) && !slab_lower_free(cls, temp, b->cur_head)) {
		slab_extend(b, s);
		return true;
	}
	return false;
}

/* Whether the objects of a new slab of @cur's class are to be populated whole as
 * they are handed out (MR_SLAB_AHEAD, populate_objects), @cur being the bin's
 * current slab: objects of a page or more (slab_extend writes only their first
 * page), every one of @cur's handed out, and 15/16 of its pages resident (a page
 * can fall in the unwritten tails of objects smaller than their class), so the
 * program writes such objects whole. As large.c does for a call site's spans, and for the
 * same reason (alloc-bench's frag: a fault per page, a third cheaper by one
 * madvise). */
static bool slab_written_whole(const struct mr_span *cur)
{
	uint32_t npages;

	if (!cur || mr_class_size[cur->cls] < MR_PAGE_SIZE || cur->bump != slab_capacity(cur))
		return false;
	npages = mr_class_pages(cur->cls);
	return mr_os_resident_pages(mr_page_addr(span_page(cur)), npages) >= npages - npages / 16;
}

/* ---- medium slabs in a young thread ----
 * Objects over a page are few to a slab, and a short process that reads files of
 * many sizes into buffers it frees at once (the kernel build's fixdep: 150 buffers
 * of 4-70 KiB, in most of the 24 classes over 4 KiB, and spans) would write each
 * class's slab's pages for its first object, and its spans would go above those
 * slabs, where glibc's one heap writes the same pages again. So before a thread
 * makes a slab of such a class, or asks for a span, the current slabs of the other
 * such classes that have no object out go back to the page heap, and the new slab
 * or span, lowest first, lands on their pages, written already. Spares stay (a bin
 * that emptied a slab while another was current will likely fill one again: "spare
 * slabs" above). A thread looks MR_MEDIUM_LOOKS times at most: past its start a
 * program's bins have their slabs, and one that alternated such classes one object
 * at a time would make a slab at every allocation. */
#define MR_FIRST_MEDIUM 48	/* the first class over a page (4368) */
#define MR_MEDIUM_LOOKS 256
_Static_assert(MR_FIRST_MEDIUM < MR_NR_CLASSES, "classes over a page");

static void medium_return_empty(struct mr_tcache *tc, enum mr_temp temp, unsigned except)
{
	uint32_t page;
	bool had_spare;

	tc->medium_looks++;
	for (unsigned c = MR_FIRST_MEDIUM; c < MR_NR_CLASSES; c++) {
		struct mr_bin *b = &tc->bins[temp][c];

		if (c == except || !b->cur || b->cur_used != 0)
			continue;
		had_spare = b->spare != MR_NONE;
		page = b->cur_head;
		bin_retire_current(tc, b);	/* back, or to the spare: then back */
		if (!had_spare && b->spare == page)
			spare_release(tc, b);
	}
}

void mr_tcache_medium_return(struct mr_tcache *tc)
{
	if (tc->medium_looks < MR_MEDIUM_LOOKS && (tc->bins_ready & (1u << MR_TEMP_NORMAL)))
		medium_return_empty(tc, MR_TEMP_NORMAL, MR_NR_CLASSES);
}

/* ---- short threads: borrowing from the shared cache ----
 * A program that starts a thread per request runs threads that live for a few
 * hundred allocations spread over tens of classes. Each such thread made a slab for
 * nearly every class it used, wrote its first page (purged again once the thread
 * had exited and the slab was empty) and walked others' inboxes before each:
 * alloc-bench's threads, a thousand threads at a time, ran 1.5-1.8 times glibc's
 * time, whose threads share 16 arenas (docs/allocator.md, Design, "Short threads").
 * So once a thread has exited (threads come and go in this process), a new thread
 * borrows: for its first MR_BORROW_ALLOCS allocations, where it would make a new
 * slab it takes a few objects of the shared cache's slabs into its stash instead
 * (one lock; the shared cache's own refill, lowest first, finds them), and keeps
 * as many of those it frees there (mr_remote_free). Then it makes slabs of its
 * own. Before any thread has exited none borrows: a pool of long-lived threads
 * would hold the shared cache's slabs and their own for the same classes (a
 * producer and a consumer, alloc-bench's prodcons: 0.4 MiB more of 2.6). */
static void *shared_pop(unsigned cls, enum mr_temp temp);

static bool borrow_take(struct mr_tcache *tc, unsigned cls, enum mr_temp temp)
{
	unsigned n = MR_BORROW_BATCH_BYTES / mr_class_size[cls];
	void *p;

	if (!tc->borrow)
		return false;	/* grown out of it, or never short */
	n = n < 1 ? 1 : n > 8 ? 8 : n;
	mr_os_lock(&gtc_lock);
	while (n-- && (p = shared_pop(cls, temp))) {
		mr_list_push(&tc->stash[temp][cls], p);
		tc->borrow_keep++;
	}
	mr_os_unlock(&gtc_lock);
	return tc->stash[temp][cls] != NULL;
}

/* ---- a class up, while young ----
 * A process that outgrows the start-up heap (make, as, a compiler) uses tens of
 * classes, many for a few objects, and a slab of each wrote its first page for the
 * class's first object, where glibc's heap puts objects of every size on the same
 * few pages: a no-op make of a built kernel tree made 18 000 pages more resident
 * than under glibc, some 28 slab pages a make, and compiles 2.3% more
 * (docs/allocator.md, "A class up, while young"). So while a cache is young (its
 * first MR_YOUNG_SLABS slabs), a bin that runs dry, with no spare, takes a free
 * object of the smallest class above it, up to four times its size, whose bin has
 * one (and whose size keeps the class's alignment), rather than make a slab: the
 * object is that class's, freed to its slab as any. A class up to a page takes as
 * many as would fill a page of its own (up_objects), then makes its slabs: with
 * no bound, a program that allocates one class all along (alloc-bench's churn)
 * went through the refill for each object and took 2.5 times as long. A class over
 * a page takes a class up each time its bin is dry: a buffer freed before the next
 * of another size lends its place, as glibc's heap does. */
static unsigned up_objects(unsigned cls)
{
	unsigned n = MR_PAGE_SIZE / mr_class_size[cls];

	return n > 255 ? 255 : n;
}

static void *class_up_pop(struct mr_tcache *tc, unsigned cls, enum mr_temp temp)
{
	uint32_t size = mr_class_size[cls], align = size & -size;

	for (unsigned c = cls + 1; c < MR_NR_CLASSES && mr_class_size[c] <= 4 * size; c++) {
		struct mr_bin *b = &tc->bins[temp][c];

		if (b->free && mr_class_size[c] % align == 0) {
			b->cur_used++;
			return mr_list_pop(&b->free);
		}
	}
	return NULL;
}

/* The bin ran dry. In that order: remote frees to this cache; the lowest slab with
 * room among the current and partial ones (lowest first: high regions drain); the
 * stash; a short thread's borrowing; exited threads' slabs; live threads' inboxes;
 * while the cache is young, an object of a class up; the spare; a new slab (from
 * the lowest region with room). */
void *mr_small_refill(struct mr_tcache *tc, unsigned cls, enum mr_temp temp)
{
	struct mr_bin *b = &tc->bins[temp][cls];
	struct mr_span *s;
	void *p;

	if (MR_UNLIKELY(!(tc->bins_ready & (1u << temp))))
		bins_init(tc, temp);
	if (inbox_waiting(tc))
		drain_inbox(tc);
	if (!b->free && !bin_take_lowest(tc, b, cls, temp)) {
		/* A short thread borrows first: the shared cache's refill takes back
		 * what exited threads' caches and live inboxes hold. */
		if (!tc->stash[temp][cls] && !borrow_take(tc, cls, temp) &&
		    reclaim_parked(tc, cls, temp))
			bin_take_lowest(tc, b, cls, temp);
		if (!b->free && (tc->stash[temp][cls] || steal_inboxes(tc, cls, temp))) {
			if (tc->borrow)
				tc->borrow--;
			return mr_list_pop(&tc->stash[temp][cls]);	/* counted in its slab */
		}
	}
	if (!b->free) {
		if (tc->young && (cls >= MR_FIRST_MEDIUM || tc->up_taken[cls] < up_objects(cls)) &&
		    b->spare == MR_NONE && (p = class_up_pop(tc, cls, temp))) {
			if (cls < MR_FIRST_MEDIUM)
				tc->up_taken[cls]++;
			return p;
		}
		remote_flush(tc);	/* the heap grows: what this thread holds goes back */
		spares_check(tc);
		if (!spare_take(tc, b, cls, temp)) {
			if (cls >= MR_FIRST_MEDIUM && tc->medium_looks < MR_MEDIUM_LOOKS)
				medium_return_empty(tc, temp, cls);
			s = slab_new(tc, cls, temp);
			if (!s)
				return NULL;
			if (tc->young)
				tc->young--;
			/* The bin handed out a whole slab: this one will likely fill too
			 * (the mincore only then). */
			if ((s->flags & MR_SLAB_FRESH) && b->cur && b->cur->bump == slab_capacity(b->cur) &&
			    (mr_class_size[cls] < MR_PAGE_SIZE || slab_written_whole(b->cur)))
				s->flags |= MR_SLAB_AHEAD;
			set_current(tc, b, s);
			slab_extend(b, s);
		}
	}
	p = mr_list_pop(&b->free);
	b->cur_used++;
	return p;
}

/* An object of the shared cache, counted in its slab. Under gtc_lock. */
static void *shared_pop(unsigned cls, enum mr_temp temp)
{
	struct mr_bin *b = &gtc.bins[temp][cls];

	if (MR_UNLIKELY(!gtc_listed)) {	/* its slabs' frees may reach its inbox now */
		gtc_listed = true;
		mr_os_lock(&pool_lock);
		caches_add(&gtc);
		mr_os_unlock(&pool_lock);
	}
	if (!b->free)
		return mr_small_refill(&gtc, cls, temp);
	b->cur_used++;
	return mr_list_pop(&b->free);
}

void *mr_small_alloc_shared(unsigned cls, enum mr_temp temp)
{
	void *p;

	mr_os_lock(&gtc_lock);
	p = shared_pop(cls, temp);
	mr_os_unlock(&gtc_lock);
	return p;
}

/* A thread exits: its cache gives back empty slabs and waits in the pool for the
 * next thread, slabs with live objects included (their frees reach its inbox). */
static void tc_destroy(void *arg)
{
	struct mr_tcache *tc = arg;
	unsigned t, c;

	mr_tc_owner = 0;
	mr_tc = NULL;
	mr_tstate = TS_DEAD;
	tc_init(tc);	/* the next thread starts from the default */
	stash_flush(tc);
	remote_flush(tc);
	drain_inbox(tc);
	mr_large_cache_flush(&tc->spans);
	for (t = 0; t < NR_MR_TEMP; t++) {
		for (c = 0; c < MR_NR_CLASSES; c++)
			if (tc->bins[t][c].cur)
				bin_retire_current(tc, &tc->bins[t][c]);
	}
	spares_release(tc, 0, 0);	/* the current slabs just retired included */
	__atomic_store_n(&threads_left, true, __ATOMIC_RELAXED);
	mr_os_lock(&pool_lock);
	tc->next_parked = pool;
	__atomic_store_n(&tc->parked, true, __ATOMIC_RELAXED);
	__atomic_store_n(&pool, tc, __ATOMIC_RELAXED);	/* reclaim_parked peeks unlocked */
	mr_os_unlock(&pool_lock);
}
