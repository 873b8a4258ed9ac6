/* memregctl regions: the region map. */
#include "config.h"

#include "regions/region.h"
#include "tools/cli.h"

int mr_cmd_regions(int argc, char **argv)
{
	struct mr_region_map map;
	struct mr_discover_opts opts = { 0 };

	if (mr_region_map_discover(&map, &opts))
		return mr_cli_fail("%s", mr_last_error());
	mr_region_map_destroy(&map);
	return mr_cli_finish(MR_EXIT_OK);
}
