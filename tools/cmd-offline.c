/* memregctl offline: take a region's memory blocks offline (the kernel moves their
 * pages out first), with checks, a time limit and rollback. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>

#include "common/root.h"
#include "controller/plan.h"
#include "regions/placement.h"
#include "tools/cli.h"
#include "tools/cli-region.h"

static void usage(FILE *f)
{
	fprintf(f, "Usage: memregctl offline REGION [--apply] [--timeout DURATION] [--force WARNING]\n"
	      "                         [--root DIR] [--mpst FILE]\n"
	      "Take the memory blocks of REGION offline: the kernel migrates the pages they\n"
	      "hold to other memory, then stops using the blocks. Every block must be online\n"
	      "in the Movable zone and inside the region, or nothing is done. If a block does\n"
	      "not go offline within the time limit, or fails, the blocks already offlined are\n"
	      "brought back online to the zone they had. What memreg offlines is recorded in\n"
	      "the state file (%s, MEMREG_STATE_DIR\n"
	      "overrides the directory) with the boot and each block's zone, so `memregctl\n"
	      "online --restore --apply` brings it back after a crash. One memreg process\n"
	      "changes blocks at a time: a second one fails and says which holds the lock.\n\n"
	      "  --apply             do it (default: print the plan)\n"
	      "  --timeout DURATION  time limit for the whole region (120, 90s, 2m; default 2m)\n"
	      "  --force WARNING     accept an MPST table warning (checksum, disabled, overlap,\n"
	      "                      reserved, table; a comma-separated list): without it\n"
	      "                      --apply is refused on a table with warnings\n"
	      "  --root DIR, --mpst FILE  as for memregctl regions (--mpst cannot be combined\n"
	      "                      with --apply on the live machine)\n"
	      "  -h, --help          this text\n", mr_block_state_path());
}

/* Show the table's warnings on stderr; with @apply, refuse unless they are forced. */
static int guard(const struct mr_region_map *map, const char *mpst, bool apply,
		 const char *forced)
{
	struct mr_plan_warning w[32];
	unsigned n = mr_plan_mpst_warnings(map, w, 32), i;

	for (i = 0; i < n; i++)
		mr_cli_warn("MPST warning (%s): %s", w[i].kind, w[i].text);
	return mr_plan_guard_apply(w, n, mpst, apply, forced);
}

int mr_cmd_offline(int argc, char **argv)
{
	static const struct option options[] = {
		{ "apply", no_argument, NULL, 'a' },
		{ "timeout", required_argument, NULL, 't' },
		{ "force", required_argument, NULL, 'F' },
		{ "root", required_argument, NULL, 'r' },
		{ "mpst", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *root = NULL, *mpst = NULL, *forced = NULL;
	uint64_t timeout_us = 120 * 1000000u;
	struct mr_block_result res;
	struct mr_block_plan plan;
	const struct mr_region *r;
	struct mr_region_map map;
	bool apply = false;
	char sz[32];
	unsigned i;
	int c, ret;

	while ((c = mr_cli_getopt(argc, argv, "h", options)) != -1) {
		switch (c) {
		case 'a': apply = true; break;
		case 't':
			if (mr_cli_timeout_us("offline", optarg, &timeout_us))
				return MR_EXIT_USAGE;
			break;
		case 'F': forced = optarg; break;
		case 'r': root = optarg; break;
		case 'm': mpst = optarg; break;
		case 'h':
			usage(stdout);
			return mr_cli_finish(MR_EXIT_OK);
		default:
			return MR_EXIT_USAGE;
		}
	}
	if (optind != argc - 1)
		return mr_cli_usage("offline", "give one REGION");
	if (mr_cli_load_region(root, mpst, argv[optind], &map, &r))
		return MR_EXIT_ERROR;
	if (guard(&map, mpst, apply, forced)) {
		mr_cli_fail("%s", mr_last_error());
		mr_region_map_destroy(&map);
		return mr_cli_finish(MR_EXIT_ERROR);
	}
	if (mr_offline_plan(&map, r, &plan)) {
		mr_cli_fail("%s", mr_last_error());
		mr_region_map_destroy(&map);
		return MR_EXIT_ERROR;
	}
	mr_format_size(plan.nr_blocks * map.block_size_bytes, sz, sizeof(sz));
	if (!plan.nr_blocks) {
		printf("region %u: all %u blocks already offline\n", r->id, plan.skipped);
		ret = MR_EXIT_OK;
	} else if (!apply) {
		printf("region %u (node %d): would offline %u blocks (%s):", r->id, r->node,
		       plan.nr_blocks, sz);
		mr_cli_print_blocks(&plan);
		printf("\nnothing changed: pass --apply to do it\n");
		ret = MR_EXIT_OK;
	} else if (mr_block_plan_apply(&plan, timeout_us * 1000u, true, NULL, &res)) {
		ret = mr_cli_fail("region %u: %s", r->id, mr_last_error());
	} else {
		printf("region %u (node %d): offlined %u blocks (%s) in %.3f s:", r->id, r->node,
		       res.done, sz, (double)res.elapsed_ns / 1e9);
		mr_cli_print_blocks(&plan);
		printf("\nrecorded in %s; `memregctl online %u --apply` brings them back\n",
		       mr_block_state_path(), r->id);
		ret = MR_EXIT_OK;
	}
	for (i = 0; i < plan.nr_notes; i++)
		mr_cli_warn("%s", plan.notes[i]);
	mr_block_plan_destroy(&plan);
	mr_region_map_destroy(&map);
	return mr_cli_finish(ret);
}
