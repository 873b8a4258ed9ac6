/* The region map: source selection and the map's lifetime. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "regions/region.h"

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

int mr_region_map_discover(struct mr_region_map *map, const struct mr_discover_opts *opts)
{
	memset(map, 0, sizeof(*map));
	return mr_error(-ENOSYS, "region discovery is not built yet");
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
