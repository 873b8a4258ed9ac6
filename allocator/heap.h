/* The page heap (heap.c over buddy.c): spans of pages for the layers above (slabs,
 * large and huge objects, thread caches) under the heap lock, with the stats
 * export kept in step. Calls only the stats, the buddy heap and the OS contract. */
#ifndef MR_ALLOCATOR_HEAP_H
#define MR_ALLOCATOR_HEAP_H

#include <stdbool.h>
#include <stdint.h>

#include "allocator/buddy.h"
#include "allocator/internal.h"
#include "allocator/stats.h"

extern struct mr_heap mr_heap MR_HIDDEN;

/* Set the heap up over a reserved arena (start-up, under the heap lock): its
 * nodes from the OS, decay and purge mode from the options. */
void mr_heap_init(char *base, struct mr_span *spans, uint32_t region_order,
		  uint32_t nregions) MR_HIDDEN;
/* Pages for a large span on the calling thread's node; its head gets the kind and
 * @temp. The first page, or MR_NONE. */
uint32_t mr_heap_alloc_pages(uint32_t npages, uint32_t align_order, enum mr_temp temp) MR_HIDDEN;
/* Pages for a slab of class @cls (mr_class_slab_order), as mr_heap_alloc_pages;
 * its head gets the kind, @cls and @temp under the heap lock, since its page count
 * comes from the class (mr_span_pages) for whoever walks the heads. */
uint32_t mr_heap_alloc_slab(unsigned cls, enum mr_temp temp) MR_HIDDEN;
/* Pages for a large object (no alignment asked, not a realloc's move): normal data
 * of MR_FIRST_FIT_MIN_PAGES and more goes first fit (a run of free pages that holds
 * it, in the lowest region with one: mr_buddy_alloc_first_fit), else as
 * mr_heap_alloc_pages.
 * Not for spans that grow: first fit leaves no free pages after them. */
#define MR_FIRST_FIT_MIN_PAGES 256u
uint32_t mr_heap_alloc_big(uint32_t npages, enum mr_temp temp) MR_HIDDEN;
void mr_heap_free_pages(uint32_t page, uint32_t npages) MR_HIDDEN;
/* A run of @nregions whole regions aligned to @align_regions; its first page. */
uint32_t mr_heap_alloc_huge(uint32_t nregions, uint32_t align_regions, enum mr_temp temp) MR_HIDDEN;
/* Free a large or huge span, or resize it in place to @npages (false: it cannot). */
void mr_heap_free_span(struct mr_span *s) MR_HIDDEN;
bool mr_heap_resize_span(struct mr_span *s, uint64_t npages) MR_HIDDEN;
/* Whether a block of @order for @temp data is free in a region below @page's: a
 * hint, asked only if the heap lock is free at once (else no). */
bool mr_heap_lower_free(uint32_t order, enum mr_temp temp, uint32_t page) MR_HIDDEN;
/* malloc_trim: every free page back to the OS now; whether there was any. */
bool mr_heap_trim(void) MR_HIDDEN;
/* The heap lock: start-up, fork, and walks of the heap (the site map). */
void mr_heap_lock(void) MR_HIDDEN;
void mr_heap_unlock(void) MR_HIDDEN;
/* The same for the fork handlers (os.h, mr_os_fork_lock). */
void mr_heap_fork_lock(void) MR_HIDDEN;
void mr_heap_fork_unlock(void) MR_HIDDEN;
/* The stats under the heap lock (stats.h). */
void mr_heap_totals(struct mr_heap_totals *t) MR_HIDDEN;
void mr_heap_print_stats(void) MR_HIDDEN;
void mr_heap_export_open(bool tracking) MR_HIDDEN;

#endif
