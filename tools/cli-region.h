/* Shared by the placement commands (where, move, offline, online): the region map of
 * the root, and a region named on the command line. */
#ifndef MR_TOOLS_CLI_REGION_H
#define MR_TOOLS_CLI_REGION_H

#include "regions/placement.h"
#include "regions/region.h"

/* "cli-region.c" */
/* Set the root (NULL: MEMREG_ROOT or /) and discover the map without occupancy. 0, or
 * MR_EXIT_ERROR after printing the error. */
int mr_cli_load_map(const char *root, const char *mpst_file, struct mr_region_map *map);
/* The region whose id is @arg, or NULL after printing why. */
const struct mr_region *mr_cli_region_arg(const struct mr_region_map *map, const char *arg);
/* mr_cli_load_map, then the region @arg of it in @r. 0, or MR_EXIT_ERROR after printing
 * the error (the map is then destroyed). */
int mr_cli_load_region(const char *root, const char *mpst_file, const char *arg,
		       struct mr_region_map *map, const struct mr_region **r);
/* " memory<N>" for each block of @plan, on stdout (the caller ends the line). */
void mr_cli_print_blocks(const struct mr_block_plan *plan);
/* A PID argument: 0, or MR_EXIT_USAGE after printing why. */
int mr_cli_pid_arg(const char *cmd, const char *arg, int *pid);

#endif
