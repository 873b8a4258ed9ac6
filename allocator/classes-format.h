/* The live hand-over between a controller and libmemreg (docs/allocator.md, "The
 * classes page"): in the stats memfd (stats-format.h), after the stats, a classes page
 * the controller writes (site -> hot/normal/cold) and a live site map the allocator
 * writes when asked. Shared memory between two processes: every field is naturally
 * aligned and read or written with atomics where the other side may be writing. */
#ifndef MR_ALLOCATOR_CLASSES_FORMAT_H
#define MR_ALLOCATOR_CLASSES_FORMAT_H

#include <stdint.h>

#include "allocator/stats-format.h"

#define MR_ALLOC_CLASSES_MAGIC UINT64_C(0x3153455353414c43)	/* "CLASSES1" */
#define MR_ALLOC_CLASSES_VERSION 1
#define MR_ALLOC_CLASSES_PAGE_BYTES 4096u
#define MR_ALLOC_CLASSES_BYTES (16u * MR_ALLOC_CLASSES_PAGE_BYTES)	/* header + entries */
#define MR_ALLOC_CLASSES_BUILD_ID_MAX 32u	/* bytes; GNU build-ids are 20 (sha1) */

/* The site classes: the values of memreg.h's MEMREG_HOT/NORMAL/COLD. */
enum mr_alloc_class { MR_ALLOC_CLASS_HOT, MR_ALLOC_CLASS_NORMAL, MR_ALLOC_CLASS_COLD,
		      NR_MR_ALLOC_CLASS };

/* struct mr_alloc_class_entry - one site: module build-id (binary, @build_id_len
 * bytes) + offset of the return address in it, and its class. */
struct mr_alloc_class_entry {
	uint8_t build_id[MR_ALLOC_CLASSES_BUILD_ID_MAX];
	uint64_t offset;
	uint8_t build_id_len;		/* 1..MR_ALLOC_CLASSES_BUILD_ID_MAX */
	uint8_t cls;			/* enum mr_alloc_class */
	uint8_t reserved[6];		/* 0 */
};

/*
 * struct mr_alloc_classes - the classes page, at mr_alloc_classes_offset() in the memfd.
 * The allocator fills magic..map_offset when it creates the export; the rest is:
 * @seq:	the controller's write lock: odd while it writes @count and the entries
 *		(seqlock: the allocator copies them and takes the copy only if @seq was
 *		even and unchanged around it).
 * @generation:	bumped by the controller after each complete write; the allocator
 *		re-reads the page on its slow path when it differs from what it applied.
 * @applied_generation: the last generation the allocator applied (its answer).
 * @applied_sites: entries of that generation whose module is loaded (set).
 * @map_request, @map_generation: the controller bumps @map_request to ask for a live
 *		site map; the allocator writes it at @map_offset (@map_bytes bytes of the
 *		MEMREG_SITE_MAP text, "memreg-site-map 1") and sets @map_generation to the
 *		request it answered, last.
 * @tracking:	1 if the allocator tracks sites (MEMREG_TRACK_SITES or MEMREG_SITE_MAP):
 *		without it no map is ever written and classes are not read.
 */
struct mr_alloc_classes {
	uint64_t magic;
	uint32_t version;
	uint32_t header_bytes;		/* sizeof(struct mr_alloc_classes) */
	uint32_t entry_bytes;		/* sizeof(struct mr_alloc_class_entry) */
	uint32_t capacity;		/* entries that fit after the header */
	uint64_t map_offset;		/* in the memfd: where the live site map goes */
	uint32_t tracking;
	uint32_t pad;
	/* written by the controller */
	uint64_t seq;
	uint64_t generation;
	uint32_t count;
	uint32_t pad2;
	uint64_t map_request;
	/* written by the allocator */
	uint64_t applied_generation;
	uint64_t applied_sites;
	uint64_t map_generation;
	uint64_t map_bytes;
	uint64_t reserved[4];
	struct mr_alloc_class_entry entry[];
};

/* Where the classes page starts in the memfd: after the stats header and region
 * entries, at the next 4 KiB boundary. */
static inline uint64_t mr_alloc_classes_offset(const struct mr_alloc_stats_file *f)
{
	uint64_t end = (uint64_t)f->header_bytes + (uint64_t)f->nregions * f->region_entry_bytes;

	return (end + MR_ALLOC_CLASSES_PAGE_BYTES - 1) & ~(uint64_t)(MR_ALLOC_CLASSES_PAGE_BYTES - 1);
}

#endif
