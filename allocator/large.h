/* Large and huge objects (large.c): spans of whole pages, and runs of whole
 * regions, for requests above the slab classes or aligned above a page. Calls only
 * the page heap. */
#ifndef MR_ALLOCATOR_LARGE_H
#define MR_ALLOCATOR_LARGE_H

#include <stdbool.h>
#include <stddef.h>

#include "allocator/internal.h"

/* @site: the caller's return address, by which spans written whole are learned and
 * then prefaulted (large.c); NULL: neither (realloc's copies). */
void *mr_large_alloc(size_t size, size_t align, enum mr_temp temp, const void *site) MR_HIDDEN;
/* Whether the arena could ever hold @size bytes aligned to @align (a power of two):
 * false means ENOMEM as glibc says it for impossible requests, not a fallback. */
bool mr_large_fits(size_t size, size_t align) MR_HIDDEN;
void mr_large_free(struct mr_span *s) MR_HIDDEN;
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
