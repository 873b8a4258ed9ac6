/* Large and huge objects (large.c): spans of whole pages, and runs of whole
 * regions, for requests above the slab classes or aligned above a page. Calls only
 * the page heap. */
#ifndef MR_ALLOCATOR_LARGE_H
#define MR_ALLOCATOR_LARGE_H

#include <stdbool.h>
#include <stddef.h>

#include "allocator/internal.h"

/* struct mr_span_cache - a thread's freed spans of normal data up to
 * MR_SPAN_CACHE_PAGES pages (64 KiB), kept for its next malloc of the same page
 * count, which then takes neither the page heap's lock nor its search (large.c,
 * "the span cache"). At most MR_SPAN_CACHE_SLOTS of each page count and
 * MR_SPAN_CACHE_MAX pages in all; a span is kept only where no lower region has a
 * free block it would fit (lowest first). In the thread cache (tcache.h). */
#define MR_SPAN_CACHE_PAGES 16
#define MR_SPAN_CACHE_SLOTS 4
#define MR_SPAN_CACHE_MAX 128u		/* 512 KiB a thread */
struct mr_span_cache {
	uint32_t pages;			/* pages held */
	uint8_t n[MR_SPAN_CACHE_PAGES + 1];	/* spans held, by page count */
	uint32_t page[MR_SPAN_CACHE_PAGES + 1][MR_SPAN_CACHE_SLOTS];	/* their first pages */
};

/* @site: the caller's return address, by which spans written whole are learned and
 * then prefaulted (large.c); NULL: neither (realloc's copies). @sc: the calling
 * thread's span cache, or NULL. */
void *mr_large_alloc(size_t size, size_t align, enum mr_temp temp, const void *site,
		     struct mr_span_cache *sc) MR_HIDDEN;
/* The same learning for an object of the first-fit heap (fit.h) at @p, @size bytes,
 * whose pages were clean (read zero) by @clean (bit i: its i-th page): those of a
 * site that writes its objects whole are prefaulted at once. */
void mr_large_prefault_object(const void *site, void *p, size_t size, uint64_t clean) MR_HIDDEN;
/* Whether the arena could ever hold @size bytes aligned to @align (a power of two):
 * false means ENOMEM as glibc says it for impossible requests, not a fallback. */
bool mr_large_fits(size_t size, size_t align) MR_HIDDEN;
/* Free large or huge span @s, into @sc (the calling thread's span cache, or NULL)
 * if it is kept there. */
void mr_large_free(struct mr_span *s, struct mr_span_cache *sc) MR_HIDDEN;
/* Give every span of @sc back to the page heap (thread exit, malloc_trim). */
void mr_large_cache_flush(struct mr_span_cache *sc) MR_HIDDEN;
/* Resize a large or huge span in place; false if it cannot be. */
bool mr_large_resize(struct mr_span *s, size_t size) MR_HIDDEN;
size_t mr_usable_size_span(const struct mr_span *s) MR_HIDDEN;
/* realloc's move of @len bytes from the start of a large or huge span to @to (the
 * new block, wherever it came from): from MR_LARGE_MOVE_MIN bytes up into another
 * span (page-aligned, in the arena) the pages themselves move, as far as whole pages
 * go (mr_os_move_pages: no copy, and never both resident), else they are copied. */
#define MR_LARGE_MOVE_MIN ((size_t)1 << 20)
void mr_large_move(void *to, void *from, size_t len) MR_HIDDEN;

#endif
