/* memreg.h: the API of libmemreg.so, the region-aware allocator (man libmemreg.3).
 * Link with -lmemreg, or call these through dlsym when the library is preloaded. */
#ifndef MEMREG_H
#define MEMREG_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Temperature classes: hot and normal objects fill the lowest regions (hot ones on
 * pages of their own), cold objects the highest. */
enum memreg_class { MEMREG_HOT = 0, MEMREG_NORMAL = 1, MEMREG_COLD = 2 };

/* malloc() for an object of class @cls; NULL with errno EINVAL or ENOMEM. free() it. */
void *memreg_malloc_class(size_t size, int cls);
/* memreg_malloc_class(size, MEMREG_COLD) and (size, MEMREG_HOT). */
void *memreg_malloc_cold(size_t size);
void *memreg_malloc_hot(size_t size);
/* The class of the calling thread's allocations from sites of no known class, until
 * called again. Returns the previous class or -EINVAL / -ENOMEM. */
int memreg_set_thread_class(int cls);
/* Mark an allocation site: @site_addr is the return address of a call to malloc (or
 * calloc, realloc, aligned_alloc...), e.g. __builtin_return_address(0) in a wrapper
 * the site calls. Returns 0 or -EINVAL / -ENOMEM. */
int memreg_site_set_class(const void *site_addr, int cls);
/* The class an object of this allocator was placed as, or -EINVAL. */
int memreg_class_of(const void *p);

/* struct memreg_stats - the heap now, in bytes (man libmemreg.3). Later versions only
 * add fields at the end: pass sizeof(struct memreg_stats) as @size. */
struct memreg_stats {
	uint64_t region_bytes;		/* bytes per region */
	uint64_t regions_live;		/* regions holding live data */
	uint64_t used_bytes;		/* pages of live spans, slabs and huge runs */
	uint64_t peak_used_bytes;	/* the peak of used_bytes */
	uint64_t huge_bytes;		/* of used_bytes, in runs of whole regions */
	uint64_t free_bytes;		/* free pages of the regions in use */
	uint64_t releasable_bytes;	/* of free_bytes, blocks of 64 KiB+ not given back yet */
	uint64_t purged_bytes;		/* free runs given back to the OS so far */
	uint64_t glibc_fallbacks;	/* allocations glibc's malloc served instead */
};
/* Fill the first @size bytes of *@st. Returns 0, or -EINVAL (@st NULL). */
int memreg_get_stats(struct memreg_stats *st, size_t size);

#ifdef __cplusplus
}
#endif

#endif
