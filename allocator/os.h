/* The OS contract, libmemreg's lowest layer (os.c): the arena's address space
 * (reserved in steps under RLIMIT_AS, grown in place), commit, purge, NUMA binding
 * and the clock. Addresses and lengths, no policy: the page heap decides what and
 * when. Every layer above reads the arena window (mr_in_arena, mr_span_of). */
#ifndef MR_ALLOCATOR_OS_H
#define MR_ALLOCATOR_OS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "allocator/internal.h"

#define MR_ARENA_MAX (UINT64_C(1) << 40)	/* 1 TiB of address space at most */

/* The arena: [mr_arena_base, + mr_arena_bytes), and a descriptor per page of it
 * (mr_spans). The base is written once at start-up, the size grows under RLIMIT_AS
 * (mr_os_grow); every free() reads them without a lock to tell its pointers from
 * foreign ones. */
extern char *mr_arena_base MR_HIDDEN;
extern size_t mr_arena_bytes MR_HIDDEN;	/* reserved now; grows (see mr_os_grow) */
extern uint32_t mr_arena_max_regions MR_HIDDEN;	/* the regions the arena may grow to */
extern struct mr_span *mr_spans MR_HIDDEN;

/* Reserve the arena's window of @max_regions regions of 2^@region_order pages, and
 * its descriptors: the whole window where RLIMIT_AS allows it, else the largest
 * power-of-two share of it that fits (grown later by mr_os_grow). Nothing is
 * published (mr_os_arena_publish). 0, or -1 with mr_os_failure() saying why. */
int mr_os_reserve(uint32_t region_order, uint32_t max_regions, char **base,
		  struct mr_span **spans, uint32_t *nregions) MR_HIDDEN;
/* Make the reservation the arena every layer sees (the base last). */
void mr_os_arena_publish(char *base, struct mr_span *spans, uint32_t nregions,
			 uint32_t max_regions) MR_HIDDEN;
/* Grow the arena in place from @old to at least @want regions: the new region
 * count; @old if @want is beyond the window; 0 if it cannot grow any more. */
uint32_t mr_os_grow(uint32_t old, uint32_t want) MR_HIDDEN;
/* Whether RLIMIT_DATA limits what may be committed. */
bool mr_os_data_limited(void) MR_HIDDEN;
/* Make [addr, addr + len) writable; 0, or -1 (RLIMIT_DATA, overcommit). */
int mr_os_commit(void *addr, size_t len) MR_HIDDEN;
/* Give [addr, addr + len) back: it reads zero after, unless the purge failed (locked
 * pages: mlockall, mlock), which sets mr_os_purge_failed for the process's life. */
void mr_os_purge(void *addr, size_t len) MR_HIDDEN;
extern bool mr_os_purge_failed MR_HIDDEN;
/* The same with MADV_FREE if @lazy (kept until memory pressure), where it works,
 * done by mr_os_purge_flush at the latest: ranges are batched into one system call
 * (process_madvise) where the kernel allows it and no seccomp filter is on (os.c
 * says why). The caller flushes before it hands out any of the pages (the page
 * heap: before a decay returns) and serialises both (the heap lock).
 * mr_os_purge_calls counts the system calls made, mr_os_purge_batched those that
 * were process_madvise. */
#define MR_PURGE_BATCH 64	/* ranges queued at most (adjacent ones merge) */
#define MR_PURGE_BATCH_MIN 8	/* fewer: a madvise each */
void mr_os_purge_pages(void *addr, size_t len, bool lazy) MR_HIDDEN;
void mr_os_purge_flush(void) MR_HIDDEN;
extern uint64_t mr_os_purge_calls MR_HIDDEN, mr_os_purge_batched MR_HIDDEN;
/* Move the pages of [from, from + len) to @to (page-aligned, not overlapping, both
 * writable arena ranges) without copying them; [from, ...) stays mapped and reads
 * zero. False if it cannot (the caller copies): with NUMA regions, where the pages
 * would stay on their node, or on a kernel without MREMAP_DONTUNMAP (then never
 * tried again). errno kept. */
bool mr_os_move_pages(void *to, void *from, size_t len) MR_HIDDEN;
/* Make [addr, addr + len) (writable) resident now, by one call rather than a page
 * fault per page (MADV_POPULATE_WRITE); 0, or -1 (an old kernel: then always -1). */
int mr_os_populate(void *addr, size_t len) MR_HIDDEN;
/* How many of the first min(@npages, MR_OS_RESIDENT_MAX) pages from @addr are
 * resident (mincore; 0 if it fails). */
#define MR_OS_RESIDENT_MAX 512
uint32_t mr_os_resident_pages(const void *addr, uint32_t npages) MR_HIDDEN;
/* NUMA: the nodes this process may use (0 or 1: none to tell apart), set once by
 * mr_os_numa_detect; the calling thread's (an index below that); [addr, addr + len)
 * preferred on node index @node. */
extern uint32_t mr_os_nnodes MR_HIDDEN;
void mr_os_numa_detect(void) MR_HIDDEN;
uint32_t mr_os_current_node(void) MR_HIDDEN;
void mr_os_bind(void *addr, size_t len, uint32_t node) MR_HIDDEN;
/* The decay clock (CLOCK_MONOTONIC_COARSE, ns), read by page-heap operations when a
 * purge may be due: the vDSO's clock_gettime, found by mr_os_clock_init at the first
 * read (libc's wrapper where the vDSO has none: see os.c). mr_os_clock_vdso says
 * which. */
void mr_os_clock_init(void) MR_HIDDEN;
uint64_t mr_os_now_ns(void) MR_HIDDEN;
extern bool mr_os_clock_vdso MR_HIDDEN;

/* Locks: every lock of libmemreg is taken through these. Before the first taken
 * while the process has (or has had) a second thread, the hook set by
 * mr_os_set_lock_hook runs once (the fork handlers, init.c), and the other threads'
 * locks wait for it to end; mr_os_run_lock_hook runs it now whatever the threads.
 * A process that never starts a thread never runs it (os.c says why that pays). */
void mr_os_set_lock_hook(void (*hook)(void)) MR_HIDDEN;
void mr_os_run_lock_hook(void) MR_HIDDEN;
void mr_os_lock(pthread_mutex_t *m) MR_HIDDEN;
bool mr_os_trylock(pthread_mutex_t *m) MR_HIDDEN;
void mr_os_unlock(pthread_mutex_t *m) MR_HIDDEN;
/* The fork handlers' locks (init.c): taken by the prepare handler and released by
 * the parent's or the child's. Between the two the forking thread holds them, and
 * glibc runs there the other fork handlers registered before libmemreg's (it
 * registers its own late: above), which may allocate; glibc's own malloc allows it
 * (it locks after every prepare handler and unlocks before every other one). So
 * for the thread that holds them, mr_os_lock, mr_os_trylock and mr_os_unlock of such
 * a lock do nothing: it has them all, and no allocation is under way on it. */
void mr_os_fork_lock(pthread_mutex_t *m) MR_HIDDEN;
void mr_os_fork_unlock(pthread_mutex_t *m) MR_HIDDEN;
/* Whether this process has only ever had one thread (glibc 2.32's
 * __libc_single_threaded; false without it). */
bool mr_os_single_threaded(void) MR_HIDDEN;
/* Why the arena could not serve (the last failure; a default before any). */
const char *mr_os_failure(void) MR_HIDDEN;
void mr_os_set_failure(const char *why) MR_HIDDEN;

/* The address of arena page @page, and the arena page holding @p. */
static inline void *mr_page_addr(uint32_t page)
{
	return mr_arena_base + ((size_t)page << MR_PAGE_SHIFT);
}

static inline uint32_t mr_addr_page(const void *p)
{
	return (uint32_t)(((uintptr_t)p - (uintptr_t)mr_arena_base) >> MR_PAGE_SHIFT);
}

/* The span descriptor of an arena address (its head page's). */
static inline struct mr_span *mr_span_of(const void *p)
{
	return &mr_spans[mr_spans[mr_addr_page(p)].head];
}

/* The reserved part only: what lies above it in the arena's window may be anyone's.
 * It only grows, so a stale read can miss only pointers this thread cannot hold. */
static inline bool mr_in_arena(const void *p)
{
	size_t bytes = __atomic_load_n(&mr_arena_bytes, __ATOMIC_ACQUIRE);

	/* Before the publish the size is 0 and any base gives false: an atomic read
	 * (a plain load on x86), not a branch on the free path. */
	return (uintptr_t)p - (uintptr_t)__atomic_load_n(&mr_arena_base, __ATOMIC_RELAXED) < bytes;
}

#endif
