/* The allocator's stats (stats.c): the page heap's counters, printed at exit and
 * exported live in a memfd (stats-format.h) with the classes page and the live
 * site map (classes-format.h). Called by the page heap with its lock held after
 * every change, and read by the layers above; calls nothing above the buddy heap. */
#ifndef MR_ALLOCATOR_STATS_H
#define MR_ALLOCATOR_STATS_H

#include <stdbool.h>
#include <stdint.h>

#include "allocator/buddy.h"
#include "allocator/internal.h"

/* struct mr_heap_totals - the heap in bytes, for mallinfo2, malloc_stats, malloc_info
 * and memreg_get_stats (what `memregctl alloc-stats` shows, summed). */
struct mr_heap_totals {
	uint64_t region_bytes;
	uint64_t active_bytes;		/* regions opened for spans and slabs (not huge) */
	uint64_t used_bytes;		/* pages of live spans and slabs in them */
	uint64_t huge_runs, huge_bytes;	/* live runs of whole regions */
	uint64_t peak_used_bytes;	/* of used_bytes + huge_bytes */
	uint64_t free_blocks;		/* free blocks of the active regions */
	uint64_t releasable_bytes;	/* free and not clean: what malloc_trim gives back */
	uint64_t runs_purged_bytes;	/* free blocks of regions in use given back, so far */
	uint64_t regions_live;
	uint64_t glibc_fallbacks;
};

/* With the heap lock held (heap.c): after page-heap changes (a no-op unless
 * exporting); the totals (after mr_stats_totals_zero); the exit report; the export
 * made (@tracking: the classes page is read, see mr_classes_poll). */
void mr_stats_publish(struct mr_heap *h) MR_HIDDEN;
void mr_stats_totals(const struct mr_heap *h, struct mr_heap_totals *t) MR_HIDDEN;
void mr_stats_print(const struct mr_heap *h) MR_HIDDEN;
void mr_stats_export_open(bool tracking) MR_HIDDEN;
/* No lock needed. */
void mr_stats_totals_zero(struct mr_heap_totals *t) MR_HIDDEN;
void mr_stats_init(void) MR_HIDDEN;	/* the exit report's stderr */
/* The child of a fork: the parent's export closed, the child's made on its first
 * heap change. Whether there was one (then the classes page is the child's too). */
bool mr_stats_after_fork(void) MR_HIDDEN;
/* @n allocations have gone to glibc (no lock: one counter, stored atomically). */
void mr_stats_fallback(uint64_t n) MR_HIDDEN;
/* The arena could not be set up: the export says so (disabled = 1). */
void mr_stats_set_disabled(void) MR_HIDDEN;
/* Thread caches made so far, the shared one included (no lock: stored atomically). */
void mr_stats_caches(uint64_t n) MR_HIDDEN;
/* The export's classes page and memfd (NULL / -1 when not exporting). */
struct mr_alloc_classes *mr_stats_classes(void) MR_HIDDEN;
int mr_stats_export_fd(void) MR_HIDDEN;

#endif
