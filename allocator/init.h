/* Start-up, fork and fallback (init.c): the layer right below the front end, the
 * only one that sets every layer below up. */
#ifndef MR_ALLOCATOR_INIT_H
#define MR_ALLOCATOR_INIT_H

#include <stdbool.h>

#include "allocator/internal.h"

/* Whether the heap is ready; the first call sets it up (any thread may). */
bool mr_ready(void) MR_HIDDEN;
/* The MEMREG_* options read (and the start-up heap sized): the first call does it. */
void mr_options_once(void) MR_HIDDEN;
/* An allocation went to glibc's malloc: count it, say so once on stderr. */
void mr_fallback_note(void) MR_HIDDEN;

#endif
