/* The start-up heap (start.c): a process's first objects, before it has a thread
 * cache, side by side in a few pages of the library's own BSS, so that a short
 * process (`rm`, `sh`, `fixdep`, a compiler driver's children) never sets the arena
 * up or writes a page per size class; and after them, while the process has one
 * thread, its buffers (objects of MR_START_BUF_MIN to MR_START_OBJ_MAX bytes), so
 * that a buffer freed is reused for the next of any size, as glibc's heap does
 * (docs/allocator.md, "The start-up heap"). Called by the front end (allocation,
 * free, size, trim) and start-up (options, fork); calls only the OS layer (locks,
 * purge). */
#ifndef MR_ALLOCATOR_START_H
#define MR_ALLOCATOR_START_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "allocator/internal.h"

#define MR_START_MAX (4096u << 10)	/* the BSS it may use, at most */
#define MR_START_OBJ_MAX (128u << 10)	/* bigger objects go to the arena */
#define MR_START_ALLOCS 2048u		/* then only buffers, while one thread */
#define MR_START_BUF_MIN 1024u		/* the smallest buffer */
#define MR_START_SMALL (256u << 10)	/* small objects' part (at its bottom) */
#define MR_START_BESIDE (4u << 10)	/* smaller buffers may lie there at first */
#define MR_START_LOOKS 64		/* short runs a buffer's search steps over */

extern char mr_start_heap[MR_START_MAX] MR_HIDDEN;
extern bool mr_start_closed MR_HIDDEN;	/* read without the lock */
/* Objects smaller than this may come from a thread's bins (the fast path):
 * MR_START_BUF_MIN while the heap takes buffers, past MR_SMALL_MAX once it closed. */
extern size_t mr_start_small_limit MR_HIDDEN;

static inline size_t mr_start_bins_below(void)
{
	return __atomic_load_n(&mr_start_small_limit, __ATOMIC_RELAXED);
}

static inline bool mr_in_start(const void *p)
{
	return (uintptr_t)p - (uintptr_t)mr_start_heap < MR_START_MAX;
}

/* Whether allocations may still come from it (once false, always false). */
static inline bool mr_start_open(void)
{
	return !__atomic_load_n(&mr_start_closed, __ATOMIC_RELAXED);
}

/* Its size from the options (start-up: MEMREG_START_HEAP, 0 when a profile, site
 * tracking, the stats export or the exit report wants every object in a region); 0
 * closes it. Once, before the first mr_start_alloc. */
void mr_start_set(size_t bytes) MR_HIDDEN;
/* @size bytes on cache lines of their own (64-byte granules), the lowest that fit
 * in the object's part (start.c, first_fit); or NULL: too big; no room (a small
 * object: the small objects' time ends; a buffer: it goes to the arena, the heap
 * stays open); a small object after that time; or, after it, a second thread (it
 * closes). If @written is not NULL, it is set to how many bytes from the start of
 * the object may hold old data: the rest was never written, or purged since (reads
 * zero). */
void *mr_start_alloc(size_t size, size_t *written) MR_HIDDEN;
/* @p must be a live object's start: otherwise glibc's message and abort. Its space
 * is free for the next (after the close, its pages are purged once free). */
void mr_start_free(void *p) MR_HIDDEN;
/* The usable size of a live object (0 if @p is none); whether @p can hold @size
 * bytes where it is (it may grow over free granules after it until the close; the
 * granules a shrink leaves are free). */
size_t mr_start_usable(const void *p) MR_HIDDEN;
bool mr_start_resize(void *p, size_t size) MR_HIDDEN;
/* Purge its free pages (malloc_trim): whether any was resident. */
bool mr_start_trim(void) MR_HIDDEN;
/* Bytes handed out and not freed; bytes of its pages written and not purged. */
void mr_start_totals(uint64_t *live, uint64_t *top) MR_HIDDEN;
void mr_start_fork_lock(void) MR_HIDDEN;
void mr_start_fork_unlock(void) MR_HIDDEN;

#endif
