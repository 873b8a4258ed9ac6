/* The region map: source selection, building and joining the map, its lifetime. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/root.h"
#include "common/util.h"
#include "regions/region.h"
#include "regions/source.h"

/* In `auto` order: the first that finds something wins. */
static const struct mr_region_source *const mr_sources[] = {
	&mr_src_mpst, &mr_src_numa, &mr_src_blocks, &mr_src_fixed,
};
/* Say this many overlaps, then count the rest. */
#define MR_MAX_OVERLAP_NOTES 16u
static const char *const mr_source_names[NR_MR_SOURCES] = {
	[MR_SOURCE_AUTO] = "auto",
	[MR_SOURCE_MPST] = "mpst",
	[MR_SOURCE_NUMA] = "numa",
	[MR_SOURCE_BLOCKS] = "blocks",
	[MR_SOURCE_FIXED] = "fixed",
};

const char *mr_source_name(enum mr_source source)
{
	return source < NR_MR_SOURCES ? mr_source_names[source] : "?";
}

int mr_source_parse(const char *name, enum mr_source *out)
{
	unsigned i;

	for (i = 0; i < NR_MR_SOURCES; i++)
		if (strcmp(name, mr_source_names[i]) == 0) {
			*out = i;
			return 0;
		}
	return mr_error(-EINVAL, "unknown source '%s' (auto, mpst, numa, blocks, fixed)", name);
}

static void vappend(char ***list, unsigned *nr, const char *fmt, va_list ap)
{
	char **l, *str;

	if (vasprintf(&str, fmt, ap) < 0)
		return;
	l = realloc(*list, (*nr + 1) * sizeof(*l));
	if (!l) {
		free(str);
		return;
	}
	l[(*nr)++] = str;
	*list = l;
}

void mr_region_note(struct mr_region_map *map, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vappend(&map->notes, &map->nr_notes, fmt, ap);
	va_end(ap);
}

void mr_region_warn(struct mr_region_map *map, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vappend(&map->warnings, &map->nr_warnings, fmt, ap);
	va_end(ap);
}

struct mr_region *mr_region_new(struct mr_region_map *map)
{
	struct mr_region *r;

	r = realloc(map->regions, (map->nr_regions + 1) * sizeof(*r));
	if (!r) {
		mr_error(-ENOMEM, "out of memory");
		return NULL;
	}
	map->regions = r;
	r = &map->regions[map->nr_regions];
	memset(r, 0, sizeof(*r));
	r->id = map->nr_regions++;
	r->node = -1;
	r->mpst_node_id = -1;
	return r;
}

/*
 * Insert [start, end) keeping the ranges sorted and disjoint; ranges it overlaps or
 * touches merge with it:  [0, 4) [8, 12) + [4, 8)  ->  [0, 12)
 */
int mr_region_add_range(struct mr_region *r, uint64_t start, uint64_t size)
{
	uint64_t end, rend;
	struct mr_range *nr;
	unsigned i, j;

	if (!size)
		return mr_error(-EINVAL, "zero-size range at 0x%" PRIx64, start);
	if (!mr_add_u64(start, size, &end))
		return mr_error(-EINVAL, "range 0x%" PRIx64 " + 0x%" PRIx64 " overflows", start, size);
	/* First range that ends at or after @start: it may touch or overlap. */
	for (i = 0; i < r->nr_ranges && r->ranges[i].start + r->ranges[i].size < start; i++)
		;
	/* Swallow every range that starts at or before @end. */
	for (j = i; j < r->nr_ranges && r->ranges[j].start <= end; j++) {
		rend = r->ranges[j].start + r->ranges[j].size;
		if (r->ranges[j].start < start)
			start = r->ranges[j].start;
		if (rend > end)
			end = rend;
	}
	if (j == i) {	/* nothing merged: make room at i */
		nr = realloc(r->ranges, (r->nr_ranges + 1) * sizeof(*nr));
		if (!nr)
			return mr_error(-ENOMEM, "out of memory");
		r->ranges = nr;
		memmove(&nr[i + 1], &nr[i], (r->nr_ranges - i) * sizeof(*nr));
		r->nr_ranges++;
	} else if (j > i + 1) {	/* ranges i..j-1 become one */
		memmove(&r->ranges[i + 1], &r->ranges[j], (r->nr_ranges - j) * sizeof(*r->ranges));
		r->nr_ranges -= j - i - 1;
	}
	r->ranges[i] = (struct mr_range){ start, end - start };
	r->size_bytes = 0;
	for (j = 0; j < r->nr_ranges; j++)
		r->size_bytes += r->ranges[j].size;
	return 0;
}

static int cmp_region(const void *a, const void *b)
{
	const struct mr_region *x = a, *y = b;
	uint64_t xs = x->nr_ranges ? x->ranges[0].start : UINT64_MAX;
	uint64_t ys = y->nr_ranges ? y->ranges[0].start : UINT64_MAX;

	/* Regions without a known span go last, by node, so their ids are stable. */
	if (xs != ys)
		return xs < ys ? -1 : 1;
	return (x->node > y->node) - (x->node < y->node);
}

struct range_ref {
	uint64_t start, end;
	unsigned region;
};

static int cmp_range_ref(const void *a, const void *b)
{
	const struct range_ref *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static void region_name(const struct mr_region *r, char *buf, size_t len)
{
	if (r->mpst_node_id >= 0)
		snprintf(buf, len, "region %u (power node %d)", r->id, r->mpst_node_id);
	else
		snprintf(buf, len, "region %u", r->id);
}

int mr_region_map_finish(struct mr_region_map *map)
{
	unsigned i, j, n = 0, nr_overlaps = 0;
	struct range_ref *refs, *far = NULL;
	char a[64], b[64];

	if (map->nr_regions)
		qsort(map->regions, map->nr_regions, sizeof(*map->regions), cmp_region);
	for (i = 0; i < map->nr_regions; i++) {
		map->regions[i].id = i;
		n += map->regions[i].nr_ranges;
	}
	if (!n)
		return 0;
	refs = calloc(n, sizeof(*refs));
	if (!refs)
		return mr_error(-ENOMEM, "out of memory");
	n = 0;
	for (i = 0; i < map->nr_regions; i++)
		for (j = 0; j < map->regions[i].nr_ranges; j++)
			refs[n++] = (struct range_ref){ map->regions[i].ranges[j].start,
				map->regions[i].ranges[j].start + map->regions[i].ranges[j].size, i };
	qsort(refs, n, sizeof(*refs), cmp_range_ref);
	/* Sweep: @far is the range seen so far that reaches furthest. Ranges of one region
	 * never overlap each other (mr_region_add_range merged them). */
	for (i = 0; i < n; i++) {
		if (far && refs[i].start < far->end && refs[i].region != far->region) {
			if (nr_overlaps++ < MR_MAX_OVERLAP_NOTES) {
				region_name(&map->regions[far->region], a, sizeof(a));
				region_name(&map->regions[refs[i].region], b, sizeof(b));
				mr_region_note(map, "%s and %s overlap: [0x%" PRIx64 ", 0x%" PRIx64 ")",
					       a, b, refs[i].start,
					       refs[i].end < far->end ? refs[i].end : far->end);
			}
		}
		if (!far || refs[i].end > far->end)
			far = &refs[i];
	}
	if (nr_overlaps > MR_MAX_OVERLAP_NOTES)
		mr_region_note(map, "%u more overlaps not shown", nr_overlaps - MR_MAX_OVERLAP_NOTES);
	free(refs);
	return 0;
}

/* Index of the first block with id >= @id (m->nr_blocks if none). */
static unsigned block_lower_bound(const struct mr_machine *m, uint64_t id)
{
	unsigned lo = 0, hi = m->nr_blocks, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (m->blocks[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Every region gets the blocks that overlap its ranges, and the node they all share. */
static int join_blocks(struct mr_region_map *map, const struct mr_machine *m)
{
	unsigned i, j, k, nr_without = 0;
	struct mr_region *r;
	uint64_t *nb;
	int node;

	map->block_size_bytes = m->block_size_bytes;
	mr_for_each_region(map, r) {
		for (j = 0; j < r->nr_ranges && m->nr_blocks; j++) {
			uint64_t first = r->ranges[j].start / m->block_size_bytes;
			uint64_t last = (r->ranges[j].start + r->ranges[j].size - 1) /
					m->block_size_bytes;

			for (k = block_lower_bound(m, first);
			     k < m->nr_blocks && m->blocks[k].id <= last; k++) {
				if (r->nr_blocks && r->blocks[r->nr_blocks - 1] == m->blocks[k].id)
					continue;	/* a block two ranges share */
				nb = realloc(r->blocks, (r->nr_blocks + 1) * sizeof(*nb));
				if (!nb)
					return mr_error(-ENOMEM, "out of memory");
				r->blocks = nb;
				r->blocks[r->nr_blocks++] = m->blocks[k].id;
			}
		}
		if (map->source != MR_SOURCE_NUMA) {
			node = -2;	/* none seen yet */
			for (j = 0; j < r->nr_blocks; j++) {
				k = block_lower_bound(m, r->blocks[j]);
				if (node == -2)
					node = m->blocks[k].node;
				else if (node != m->blocks[k].node)
					node = -1;
			}
			r->node = node == -2 ? -1 : node;
		}
		for (i = 0; i < m->nr_nodes; i++)
			if (m->nodes[i].node == r->node)
				r->node_has_cpus = m->nodes[i].has_cpus;
		if (m->nr_blocks && !r->nr_blocks)
			nr_without++;
	}
	if (nr_without)
		mr_region_note(map, "%u region%s lie%s outside every memory block of "
			       "/sys/devices/system/memory", nr_without, nr_without == 1 ? "" : "s",
			       nr_without == 1 ? "s" : "");
	return 0;
}

/* Which way pages can be moved out of a region here (DESIGN.md "Placement control"). */
static void placement_note(struct mr_region_map *map, const struct mr_machine *m)
{
	unsigned i, j, nr_movable = 0;
	bool per_node = map->nr_regions > 0;

	for (i = 0; i < map->nr_regions && per_node; i++) {
		if (map->regions[i].node < 0)
			per_node = false;
		for (j = 0; j < i && per_node; j++)
			if (map->regions[j].node == map->regions[i].node)
				per_node = false;
	}
	for (i = 0; i < m->nr_blocks; i++)
		if (strcmp(m->blocks[i].zones, "Movable") == 0)
			nr_movable++;
	if (per_node)
		mr_region_note(map, "placement: every region is its own NUMA node: move_pages and "
			       "memory policies steer pages into and out of it");
	else
		mr_region_note(map, "placement: regions share NUMA nodes: a region is emptied only "
			       "by offlining its memory blocks, and only Movable-zone blocks go "
			       "offline (%u of %u blocks here)", nr_movable, m->nr_blocks);
}

static void free_regions(struct mr_region_map *map)
{
	unsigned i;

	for (i = 0; i < map->nr_regions; i++) {
		free(map->regions[i].ranges);
		free(map->regions[i].states);
		free(map->regions[i].components);
		free(map->regions[i].blocks);
	}
	free(map->regions);
	map->regions = NULL;
	map->nr_regions = 0;
}

int mr_region_map_discover(struct mr_region_map *map, const struct mr_discover_opts *opts)
{
	struct mr_discover_opts o = *opts;
	const struct mr_region_source *src;
	struct mr_machine machine;
	char why[512];
	unsigned i;
	int ret;

	memset(map, 0, sizeof(*map));
	if (o.mpst_file && o.source == MR_SOURCE_AUTO)
		o.source = MR_SOURCE_MPST;
	ret = mr_machine_load(&machine);
	if (ret)
		return ret;
	ret = -ENOENT;
	for (i = 0; i < MR_ARRAY_SIZE(mr_sources); i++) {
		src = mr_sources[i];
		if (o.source != MR_SOURCE_AUTO && o.source != src->id)
			continue;
		map->source = src->id;
		ret = src->discover(map, &machine, &o);
		if (ret != -ENOENT || o.source != MR_SOURCE_AUTO)
			break;
		snprintf(why, sizeof(why), "%s", mr_last_error());
		mr_region_note(map, "auto: %s skipped: %s", src->name, why);
		free_regions(map);
	}
	if (ret) {
		if (ret == -ENOENT && o.source == MR_SOURCE_AUTO)
			ret = mr_error(-ENOENT, "%s: no source found memory ranges (no MPST, "
				       "NUMA nodes or memory blocks)", mr_root_get());
		goto fail;
	}
	ret = mr_region_map_finish(map);
	if (!ret)
		ret = join_blocks(map, &machine);
	if (ret)
		goto fail;
	if (!o.skip_hwloc)
		mr_hwloc_annotate(map);
	if (o.occupancy)
		mr_region_map_occupancy(map, &machine);
	placement_note(map, &machine);
	mr_machine_free(&machine);
	return 0;
fail:
	mr_machine_free(&machine);
	mr_region_map_destroy(map);
	return ret;
}

void mr_region_map_destroy(struct mr_region_map *map)
{
	unsigned i;

	for (i = 0; i < map->nr_regions; i++) {
		free(map->regions[i].ranges);
		free(map->regions[i].states);
		free(map->regions[i].components);
		free(map->regions[i].blocks);
	}
	free(map->regions);
	for (i = 0; i < map->nr_notes; i++)
		free(map->notes[i]);
	free(map->notes);
	for (i = 0; i < map->nr_warnings; i++)
		free(map->warnings[i]);
	free(map->warnings);
	memset(map, 0, sizeof(*map));
}

const struct mr_region *mr_region_of_phys(const struct mr_region_map *map, uint64_t phys)
{
	const struct mr_region *r;
	unsigned i;

	mr_for_each_region(map, r)
		for (i = 0; i < r->nr_ranges; i++)
			if (phys >= r->ranges[i].start &&
			    phys - r->ranges[i].start < r->ranges[i].size)
				return r;
	return NULL;
}
