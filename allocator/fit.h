/* The first-fit heap (fit.c): objects of normal data over 16 KiB and up to 128
 * KiB, side by side in chunks of 4 MiB taken from the page heap, first fit,
 * lowest chunk first. A freed object's space serves the next of any size, and
 * objects share their end pages with their neighbours, as in glibc's heap; as spans
 * of their own, each had a first and a last page of its own and its space served
 * only its page count (docs/allocator.md, "The first-fit heap"). Called by the front
 * end and start-up (fork); calls only the page heap and the OS contract. */
#ifndef MR_ALLOCATOR_FIT_H
#define MR_ALLOCATOR_FIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "allocator/internal.h"

#define MR_FIT_MAX (128u << 10)		/* bigger objects are spans of their own */
/* Smaller objects are slabs' (their last 8 classes, 17472-32768 B, serve only
 * aligned requests and processes with threads, a profile or site tracking). Over
 * 16 KiB, slabs of 8-15 objects of a class left the pages of freed objects to that
 * class alone: `git log -p` peaked at 1.13 of glibc's RSS, 1.08 with them here. At 4
 * KiB, sqlite3's page cache (4368 B, 15 to a slab exactly) took 1.11 of glibc's
 * peak and 1.13 of its time; at 8 KiB, lifetimes took 1.05 of the time it took
 * with slabs (docs/allocator.md, "The first-fit heap"). */
#define MR_FIT_MIN (16u << 10)
#define MR_FIT_GRANULE 256u		/* objects start on these, and span whole ones */
/* A chunk: 4 MiB (or a region, if smaller), aligned to its size in the arena
 * (mr_fit_init). Only its first page's descriptor says MR_SPAN_FIT (writing every
 * page's made a page of descriptors resident for each 128 of the chunk's); the
 * others keep kind MR_SPAN_NONE, as a large span's do. */
#define MR_FIT_CHUNK_ORDER_MAX 10
extern uint32_t mr_fit_page_mask MR_HIDDEN;	/* ~(pages of a chunk - 1) */

/* The descriptor of the chunk holding arena page @page if it is one, else NULL. */
static inline struct mr_span *mr_fit_chunk(struct mr_span *spans, uint32_t page)
{
	struct mr_span *h = &spans[page & mr_fit_page_mask];

	return h->kind == MR_SPAN_FIT ? h : NULL;
}

/* Whether objects are made here (start-up: not with a profile or site tracking,
 * whose site maps know slabs and spans only). Read without a lock. */
extern bool mr_fit_on MR_HIDDEN;

/* Start-up, with the page heap, before the arena is published: chunks of
 * 2^min(MR_FIT_CHUNK_ORDER_MAX, @region_order) pages. */
void mr_fit_init(uint32_t region_order) MR_HIDDEN;
/* @size bytes (MR_SMALL_MAX < size <= MR_FIT_MAX) on whole granules, in the lowest
 * chunk with room on the calling thread's node; NULL if no chunk could be had.
 * *@clean: bit i set if the object's i-th page (from the one holding its start)
 * reads zero (fresh from mmap, or purged with MADV_DONTNEED): calloc need not clear
 * it. */
void *mr_fit_alloc(size_t size, uint64_t *clean) MR_HIDDEN;
/* Free @p, on a page of a chunk (mr_fit_chunk); false, with
 * nothing changed, if @p is not a live object's start (the caller aborts). */
bool mr_fit_free(void *p) MR_HIDDEN;
/* The usable size of the live object at @p (0 if @p is none). */
size_t mr_fit_usable(const void *p) MR_HIDDEN;
/* Resize the live object at @p to @size bytes where it is: a shrink frees its tail,
 * a growth takes the free granules after it. 1: done; 0: it cannot (the caller
 * moves it: *@usable, its usable size); -1: @p is not a live object's start. */
int mr_fit_resize(void *p, size_t size, size_t *usable) MR_HIDDEN;
/* Whether some chunk has dirty pages (read without the lock), and the decay's check
 * for the front end's page-heap operations (large spans): the page heap's decay
 * runs on its own operations, this one's on the first-fit heap's and these. */
extern bool mr_fit_dirty MR_HIDDEN;
void mr_fit_tick(void) MR_HIDDEN;
/* malloc_trim: every free page of every chunk purged, empty chunks back to the
 * page heap; whether there was any. */
bool mr_fit_trim(void) MR_HIDDEN;
/* Bytes of its dirty pages (what malloc_trim would give back), and of the pages it
 * purged so far. Its chunks count as the page heap's spans, used. */
void mr_fit_totals(uint64_t *dirty, uint64_t *purged) MR_HIDDEN;
void mr_fit_fork_lock(void) MR_HIDDEN;
void mr_fit_fork_unlock(void) MR_HIDDEN;

#endif
