/* The live stats of libmemreg (MEMREG_EXPORT_STATS=1): a memfd named
 * "memreg-alloc.PID", open in the process (found as /proc/PID/fd/N -> "/memfd:
 * memreg-alloc.PID (deleted)"), written by the allocator, read by `memregctl
 * alloc-stats PID`. Versioned: a reader checks magic, version and the header size
 * before trusting anything else. */
#ifndef MR_ALLOCATOR_STATS_FORMAT_H
#define MR_ALLOCATOR_STATS_FORMAT_H

#include <stdint.h>

#define MR_ALLOC_STATS_MAGIC UINT64_C(0x31434f4c4c41524d)	/* "MRALLOC1" */
#define MR_ALLOC_STATS_VERSION 2
#define MR_ALLOC_STATS_MEMFD_FMT "/memfd:memreg-alloc.%ld (deleted)"

/* MR_ALLOC_COUNTER(name, help): every counter is a uint64_t, in this order. */
#define MR_ALLOC_COUNTERS(X) \
	X(region_bytes, "bytes per region") \
	X(regions, "regions in the arena") \
	X(regions_opened, "regions ever committed") \
	X(regions_touched, "regions that ever held data") \
	X(regions_live, "regions holding live data now") \
	X(regions_empty, "opened regions entirely free now") \
	X(used_bytes, "bytes of pages in live spans and slabs") \
	X(peak_used_bytes, "peak of used_bytes") \
	X(purges, "times free regions were returned to the OS") \
	X(thread_caches, "thread caches created") \
	X(hot_regions, "regions opened from the bottom (hot and normal)") \
	X(cold_regions, "regions opened from the top (cold)") \
	X(reserved_bytes, "address space reserved for the arena now") \
	X(glibc_fallbacks, "allocations glibc's malloc served: libmemreg could not") \
	X(disabled, "1 if the arena could not be set up: glibc serves everything")

struct mr_alloc_stats_region {
	uint64_t used_bytes;		/* bytes of pages in live spans and slabs */
	uint64_t peak_bytes;
	uint32_t state;			/* 0 unused, 1 active, 2 part of a huge span */
	uint32_t flags;			/* MR_ALLOC_REGION_* */
};
#define MR_ALLOC_REGION_PURGED 1u	/* entirely free and returned to the OS */
#define MR_ALLOC_REGION_PENDING 2u	/* entirely free, waiting for MEMREG_DECAY_MS */
#define MR_ALLOC_REGION_TOUCHED 4u

struct mr_alloc_stats_file {
	uint64_t magic;
	uint32_t version;
	uint32_t header_bytes;		/* sizeof(struct mr_alloc_stats_file) */
	uint32_t region_entry_bytes;	/* sizeof(struct mr_alloc_stats_region) */
	uint32_t nregions;		/* entries after the header */
	int64_t pid;
	uint64_t seq;			/* odd while the writer updates */
#define MR_ALLOC_COUNTER_FIELD(name, help) uint64_t name;
	MR_ALLOC_COUNTERS(MR_ALLOC_COUNTER_FIELD)
#undef MR_ALLOC_COUNTER_FIELD
	struct mr_alloc_stats_region region[];
};

#endif
