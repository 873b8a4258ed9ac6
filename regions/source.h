/* Internal to regions/: the discovery-source vtable, the machine facts every source
 * shares (memory blocks, NUMA nodes) and the map-building helpers. */
#ifndef MR_REGIONS_SOURCE_H
#define MR_REGIONS_SOURCE_H

#include <stdbool.h>
#include <stdint.h>

#include "common/util.h"
#include "regions/region.h"

/*
 * struct mr_block - one memory block, /sys/devices/system/memory/memoryN.
 * The block covers [@id * block_size, (@id + 1) * block_size).
 */
struct mr_block {
	uint64_t id;
	int node;		/* -1 if no node links to it */
	char state[16];		/* "online", "offline", ... */
	char zones[64];		/* valid_zones: "Normal", "Movable", "none", ... */
};

/* struct mr_node_info - one NUMA node, /sys/devices/system/node/nodeN. */
struct mr_node_info {
	int node;
	bool has_cpus;
	uint64_t total_bytes;	/* MemTotal of the node's meminfo, 0 if unreadable */
	uint64_t free_bytes;	/* MemFree */
	uint64_t lru_bytes;	/* Active + Inactive + Unevictable: the LRU, movable */
};

/*
 * struct mr_machine - what the sources read once and share.
 * @blocks:	sorted by id; empty on kernels without memory hotplug.
 * @nodes:	sorted by node number.
 */
struct mr_machine {
	uint64_t block_size_bytes;
	struct mr_block *blocks;
	unsigned nr_blocks;
	struct mr_node_info *nodes;
	unsigned nr_nodes;
};

/*
 * struct mr_region_source - one way to find region boundaries.
 * @discover:	add the regions (ranges, and whatever else the source knows) to @map.
 *		-ENOENT (with mr_error set to why) when the machine has nothing for this
 *		source, so `auto` tries the next one; other errors stop discovery.
 */
struct mr_region_source {
	const char *name;
	enum mr_source id;
	int (*discover)(struct mr_region_map *map, const struct mr_machine *machine,
			const struct mr_discover_opts *opts);
};

extern const struct mr_region_source mr_src_mpst;
extern const struct mr_region_source mr_src_numa;
extern const struct mr_region_source mr_src_blocks;
extern const struct mr_region_source mr_src_fixed;

/* "region.c" */
/* Append a note / a firmware warning to the map (dropped silently without memory). */
void mr_region_note(struct mr_region_map *map, const char *fmt, ...) MR_PRINTF(2, 3);
void mr_region_warn(struct mr_region_map *map, const char *fmt, ...) MR_PRINTF(2, 3);
/* A new empty region at the end of the map; NULL (mr_error set) without memory. */
struct mr_region *mr_region_new(struct mr_region_map *map);
/* Add [start, start + size) to @r, merging with ranges it touches or overlaps. */
int mr_region_add_range(struct mr_region *r, uint64_t start, uint64_t size);
/* Sort regions by lowest start, renumber ids, report ranges shared by two regions. */
int mr_region_map_finish(struct mr_region_map *map);

/* "src-blocks.c" */
int mr_machine_load(struct mr_machine *machine);
void mr_machine_free(struct mr_machine *machine);
/* The memory ranges: contiguous online-or-offline blocks merged. */
int mr_machine_ranges(const struct mr_machine *machine, struct mr_range **ranges,
		      unsigned *nr_ranges);

/* "src-hwloc.c" */
/* Add to the map what hwloc knows and sysfs does not (node kinds, memory tiers,
 * bandwidth and latency attributes); a note saying why when it cannot. */
void mr_hwloc_annotate(struct mr_region_map *map);

/* "occupancy.c" */
/* Fill every region's occupancy: kpageflags (page) as root, else meminfo (node). */
void mr_region_map_occupancy(struct mr_region_map *map, const struct mr_machine *machine);

#endif
