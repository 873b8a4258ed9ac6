/* The region map and region/PID arguments for the placement commands. */
#include "config.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>

#include "common/root.h"
#include "common/util.h"
#include "tools/cli.h"
#include "tools/cli-region.h"

int mr_cli_load_map(const char *root, const char *mpst_file, struct mr_region_map *map)
{
	/* No hwloc: these commands need ranges, nodes and blocks, and must stay cheap. */
	struct mr_discover_opts opts = { .source = MR_SOURCE_AUTO, .mpst_file = mpst_file,
					 .skip_hwloc = true };

	if (mr_root_set(root) || mr_region_map_discover(map, &opts))
		return mr_cli_fail("%s", mr_last_error());
	return 0;
}

const struct mr_region *mr_cli_region_arg(const struct mr_region_map *map, const char *arg)
{
	uint64_t id;

	if (mr_parse_u64(arg, &id)) {
		mr_cli_fail("bad region '%s': give a region id from `memregctl regions`", arg);
		return NULL;
	}
	if (id >= map->nr_regions) {
		mr_cli_fail("no region %s: this machine has regions 0-%u (memregctl regions)",
			    arg, map->nr_regions ? map->nr_regions - 1 : 0);
		return NULL;
	}
	return &map->regions[id];
}

int mr_cli_load_region(const char *root, const char *mpst_file, const char *arg,
		       struct mr_region_map *map, const struct mr_region **r)
{
	if (mr_cli_load_map(root, mpst_file, map))
		return MR_EXIT_ERROR;
	*r = mr_cli_region_arg(map, arg);
	if (!*r) {
		mr_region_map_destroy(map);
		return MR_EXIT_ERROR;
	}
	return 0;
}

void mr_cli_print_blocks(const struct mr_block_plan *plan)
{
	unsigned i;

	for (i = 0; i < plan->nr_blocks; i++)
		printf(" memory%" PRIu64, plan->blocks[i]);
}

int mr_cli_pid_arg(const char *cmd, const char *arg, int *pid)
{
	uint64_t v;

	if (mr_parse_u64(arg, &v) || v == 0 || v > INT32_MAX)
		return mr_cli_usage(cmd, "bad PID '%s'", arg);
	*pid = (int)v;
	return 0;
}
