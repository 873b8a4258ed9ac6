/* The region map: memory power regions of a machine, from firmware (MPST), NUMA
 * nodes, memory blocks or fixed-size slicing, joined with the memory blocks that
 * cover each region and what each region holds (occupancy).
 *
 * Every file read goes through the root-directory layer (common/root.h), so a map
 * can be built from a captured machine as well as from the live one. */
#ifndef MR_REGIONS_REGION_H
#define MR_REGIONS_REGION_H

#include <stdbool.h>
#include <stdint.h>

/* Where the regions' boundaries came from. */
enum mr_source {
	MR_SOURCE_AUTO,		/* the best one present: mpst > numa > blocks > fixed */
	MR_SOURCE_MPST,
	MR_SOURCE_NUMA,
	MR_SOURCE_BLOCKS,
	MR_SOURCE_FIXED,
	NR_MR_SOURCES
};

/* struct mr_range - a physical address range [@start, @start + @size), bytes. */
struct mr_range {
	uint64_t start;
	uint64_t size;
};

/* MPST memory power state characteristics flags (ACPI 6.x table 5.xx). */
#define MR_PSTATE_MEMORY_PRESERVED	0x01u
#define MR_PSTATE_AUTO_ENTRY		0x02u
#define MR_PSTATE_AUTO_EXIT		0x04u

/*
 * struct mr_power_state - one power state a region can be in.
 * @state:		the MPST power state value (0 is active).
 * @flags:		MR_PSTATE_* from the characteristics structure.
 * @average_power_mw:	average power in the state, mW.
 * @power_saving_mw:	saving against state 0, mW.
 * @exit_latency_ns:	time to return to state 0.
 * @has_characteristics: false when the state's characteristics index named no
 *			structure; the numbers above are then 0 and unknown.
 */
struct mr_power_state {
	uint8_t state;
	uint8_t flags;
	uint32_t average_power_mw;
	uint32_t power_saving_mw;
	uint64_t exit_latency_ns;
	bool has_characteristics;
};

enum mr_occ_granularity {
	MR_OCC_NONE,		/* not measured */
	MR_OCC_PAGE,		/* /proc/kpageflags over the region's PFNs (root) */
	MR_OCC_NODE,		/* per-node meminfo, spread over the node's regions */
	NR_MR_OCC
};

/*
 * struct mr_occupancy - what a region holds, bytes.
 * @free_bytes is an estimate under MR_OCC_PAGE: the kernel marks only the first page
 * of a free buddy block and exports no block size, so pages with no flags and no
 * users are counted free.
 */
struct mr_occupancy {
	enum mr_occ_granularity granularity;
	uint64_t free_bytes;
	uint64_t movable_bytes;		/* LRU, anon, file-backed */
	uint64_t unmovable_bytes;	/* slab, page tables, reserved, ... */
};

/* MPST power node flags. */
#define MR_MPST_ENABLED		0x01u
#define MR_MPST_POWER_MANAGED	0x02u
#define MR_MPST_HOT_PLUGGABLE	0x04u

/*
 * struct mr_region - one memory power region.
 * @id:		index in the map, 0..nr_regions-1, ordered by lowest start address.
 * @node:	NUMA node the region lies in, -1 if unknown or spanning several.
 * @mpst_node_id: the MPST power node id, -1 when the region is not from MPST.
 * @mpst_flags:	MR_MPST_* of the power node.
 * @ranges:	physical ranges, sorted, non-overlapping within the region. None when
 *		the span is unknown (mr_region_span_known()): a NUMA node on a kernel
 *		without memory blocks that /proc/zoneinfo does not describe. No physical
 *		address maps to such a region, it has no blocks, and its occupancy is
 *		per node.
 * @size_bytes:	bytes of memory the region holds: the ranges' sum, except for NUMA
 *		nodes without memory blocks, where it is the node's MemTotal and the
 *		ranges are its zones' spans (holes included) or none.
 * @states:	power states; empty when firmware describes none.
 * @components:	MPST physical component ids (DIMMs etc.).
 * @blocks:	ids of the memory blocks (/sys/devices/system/memory/memoryN)
 *		that lie inside the region, sorted.
 */
struct mr_region {
	unsigned id;
	int node;
	int mpst_node_id;
	unsigned mpst_flags;
	struct mr_range *ranges;
	unsigned nr_ranges;
	uint64_t size_bytes;
	struct mr_power_state *states;
	unsigned nr_states;
	uint16_t *components;
	unsigned nr_components;
	uint64_t *blocks;
	unsigned nr_blocks;
	struct mr_occupancy occ;
	/* Added by the regions helper (after the original fields, so code using the
	 * ones above is unchanged): */
	bool node_has_cpus;		/* @node >= 0 and it has CPUs (sysfs) */
	char node_kind[32];		/* hwloc's NUMA node subtype ("DRAM", "HBM", ...), or "" */
	uint64_t bandwidth_mibps;	/* hwloc memory attribute (MiB/s), best initiator; 0 unknown */
	uint64_t latency_ns;		/* hwloc memory attribute, best initiator; 0 unknown */
};

/*
 * struct mr_region_map - the joined map.
 * @source:	where the boundaries came from (never MR_SOURCE_AUTO here).
 * @block_size_bytes: memory block size, 0 if the machine exports none.
 * @notes:	human-readable remarks (a source skipped and why, a firmware warning,
 *		overlapping power nodes, how occupancy was measured).
 */
struct mr_region_map {
	enum mr_source source;
	struct mr_region *regions;
	unsigned nr_regions;
	uint64_t block_size_bytes;
	char **notes;
	unsigned nr_notes;
	/* Added by the regions helper: */
	char **warnings;		/* firmware problems (MPST checks), one line each */
	unsigned nr_warnings;
};

/* struct mr_discover_opts - what `memregctl regions` options ask for. */
struct mr_discover_opts {
	enum mr_source source;
	const char *mpst_file;		/* MPST from a file, not the root's table */
	uint64_t region_size_bytes;	/* fixed slicing; 0 means 512 MiB */
	bool occupancy;			/* measure occupancy (reads kpageflags) */
	/* Added by the regions helper: */
	bool skip_hwloc;		/* no hwloc topology load (node kinds, attributes):
					 * for callers that must stay cheap, or that run
					 * threads (hwloc is pointed at the root with setenv) */
};

/* False for a region with a size but no known physical address range. */
static inline bool mr_region_span_known(const struct mr_region *r)
{
	return r->nr_ranges > 0;
}

#define mr_for_each_region(map, r) \
	for ((r) = (map)->regions; (r) < (map)->regions + (map)->nr_regions; (r)++)

/* "region.c" */

/* Build the map for the current root. 0 or -errno with mr_error() set. */
int mr_region_map_discover(struct mr_region_map *map, const struct mr_discover_opts *opts);
void mr_region_map_destroy(struct mr_region_map *map);
/* The region holding physical address @phys, or NULL. */
const struct mr_region *mr_region_of_phys(const struct mr_region_map *map, uint64_t phys);
const char *mr_source_name(enum mr_source source);
int mr_source_parse(const char *name, enum mr_source *out);

/* "src-fixed.c" */

/* The smallest fixed region: the largest base page size Linux uses (arm64, ppc64), so
 * that a region holds at least one page everywhere. Power regions are ranks and DIMMs
 * (GiBs); slices much smaller only cost memory and time. */
#define MR_FIXED_MIN_BYTES (UINT64_C(64) << 10)
/* 0 when @size_bytes can slice the fixed source: a multiple of this machine's page
 * size and at least MR_FIXED_MIN_BYTES; -EINVAL with mr_error() saying why. */
int mr_fixed_size_check(uint64_t size_bytes);

#endif
