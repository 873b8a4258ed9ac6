/* The start-up heap (start.c): a process's first objects, before it has a thread
 * cache, side by side in a few pages of the library's own BSS, so that a short
 * process (`rm`, `sh`, `fixdep`, a compiler driver's children) never sets the arena
 * up or writes a page per size class (docs/allocator.md, "The start-up heap"). Called
 * by the front end (allocation, free, size) and start-up (options, fork); calls only
 * the OS layer (locks, purge). */
#ifndef MR_ALLOCATOR_START_H
#define MR_ALLOCATOR_START_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "allocator/internal.h"

#define MR_START_MAX (256u << 10)	/* the BSS it may use, at most */
#define MR_START_OBJ_MAX (128u << 10)	/* bigger objects go to the arena */
#define MR_START_ALLOCS 2048u		/* it closes after as many allocations */

extern char mr_start_heap[MR_START_MAX] MR_HIDDEN;
extern bool mr_start_closed MR_HIDDEN;	/* read without the lock */

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
/* @size bytes on cache lines of their own (64-byte granules), the lowest that fit;
 * or NULL (too big; or no room, or MR_START_ALLOCS made: it closes). */
void *mr_start_alloc(size_t size) MR_HIDDEN;
/* @p must be a live object's start: otherwise glibc's message and abort. Its space
 * is free for the next (after the close, its pages are purged once free). */
void mr_start_free(void *p) MR_HIDDEN;
/* The usable size of a live object (0 if @p is none); whether @p can hold @size
 * bytes where it is (it may grow over free granules after it until the close; the
 * granules a shrink leaves are free). */
size_t mr_start_usable(const void *p) MR_HIDDEN;
bool mr_start_resize(void *p, size_t size) MR_HIDDEN;
/* Bytes handed out and not freed; bytes of its pages written and not purged. */
void mr_start_totals(uint64_t *live, uint64_t *top) MR_HIDDEN;
void mr_start_fork_lock(void) MR_HIDDEN;
void mr_start_fork_unlock(void) MR_HIDDEN;

#endif
