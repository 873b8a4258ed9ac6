/* memregctl offline: take a region's memory blocks offline (the kernel moves their
 * pages out first), with checks, a time limit and rollback. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>

#include "regions/placement.h"
#include "tools/cli.h"
#include "tools/cli-region.h"

static void usage(FILE *f)
{
	fputs("Usage: memregctl offline REGION [--apply] [--timeout TIME] [--root DIR] [--mpst FILE]\n"
	      "Take the memory blocks of REGION offline: the kernel migrates the pages they\n"
	      "hold to other memory, then stops using the blocks. Every block must be online\n"
	      "in the Movable zone and inside the region, or nothing is done. If a block does\n"
	      "not go offline within the time limit, or fails, the blocks already offlined are\n"
	      "brought back online. What memreg offlines is recorded in the state file\n"
	      "(/var/lib/memreg/offline.state, or MEMREG_STATE_DIR), so `memregctl online\n"
	      "--restore --apply` brings it back after a crash.\n\n"
	      "  --apply             do it (default: print the plan)\n"
	      "  --timeout TIME      time limit for the whole region (default 2m; 90s, 5m;\n"
	      "                      a bare number is seconds)\n"
	      "  --root DIR, --mpst FILE  as for memregctl regions\n"
	      "  -h, --help          this text\n", f);
}

int mr_cmd_offline(int argc, char **argv)
{
	static const struct option options[] = {
		{ "apply", no_argument, NULL, 'a' },
		{ "timeout", required_argument, NULL, 't' },
		{ "root", required_argument, NULL, 'r' },
		{ "mpst", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *root = NULL, *mpst = NULL;
	uint64_t timeout_s = 120;
	struct mr_block_result res;
	struct mr_block_plan plan;
	const struct mr_region *r;
	struct mr_region_map map;
	bool apply = false;
	char sz[32];
	int c, ret;

	while ((c = mr_cli_getopt(argc, argv, "h", options)) != -1) {
		switch (c) {
		case 'a': apply = true; break;
		case 't': {
			uint64_t us;

			if (mr_parse_duration_us(optarg, 1000000, &us) || us < 1000000 ||
			    us > 86400000000ull)
				return mr_cli_usage("offline", "--timeout: bad time '%s' (1s to 1d: "
						    "90s, 2m)", optarg);
			timeout_s = (us + 999999) / 1000000;
			break;
		}
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
	} else if (mr_block_plan_apply(&plan, timeout_s * 1000000000u, true, NULL, &res)) {
		ret = mr_cli_fail("region %u: %s", r->id, mr_last_error());
	} else {
		printf("region %u (node %d): offlined %u blocks (%s) in %.3f s:", r->id, r->node,
		       res.done, sz, (double)res.elapsed_ns / 1e9);
		mr_cli_print_blocks(&plan);
		printf("\nrecorded in %s; `memregctl online %u --apply` brings them back\n",
		       mr_block_state_path(), r->id);
		ret = MR_EXIT_OK;
	}
	mr_block_plan_destroy(&plan);
	mr_region_map_destroy(&map);
	return mr_cli_finish(ret);
}
