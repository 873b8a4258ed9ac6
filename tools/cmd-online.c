/* memregctl online: bring a region's offline memory blocks back, or (--restore)
 * everything the state file says memreg took offline. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>

#include "common/root.h"
#include "regions/placement.h"
#include "tools/cli.h"
#include "tools/cli-region.h"

static void usage(FILE *f)
{
	fputs("Usage: memregctl online REGION [--apply] [--root DIR] [--mpst FILE]\n"
	      "       memregctl online --restore [--apply]\n"
	      "Bring the offline memory blocks of REGION back online (in the Movable zone\n"
	      "where the kernel allows it), or with --restore every block the state file\n"
	      "(/var/lib/memreg/offline.state, or MEMREG_STATE_DIR) records as taken offline\n"
	      "by memreg, for instance after memregctl was killed.\n\n"
	      "  --restore           the blocks of the state file instead of a region\n"
	      "  --apply             do it (default: print the plan)\n"
	      "  --root DIR, --mpst FILE  as for memregctl regions\n"
	      "  -h, --help          this text\n", f);
}

int mr_cmd_online(int argc, char **argv)
{
	static const struct option options[] = {
		{ "restore", no_argument, NULL, 'R' },
		{ "apply", no_argument, NULL, 'a' },
		{ "root", required_argument, NULL, 'r' },
		{ "mpst", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *root = NULL, *mpst = NULL;
	struct mr_region_map map = { 0 };
	struct mr_block_result res;
	struct mr_block_plan plan;
	bool apply = false, restore = false;
	char what[64];
	int c, ret;

	while ((c = mr_cli_getopt(argc, argv, "h", options)) != -1) {
		switch (c) {
		case 'R': restore = true; break;
		case 'a': apply = true; break;
		case 'r': root = optarg; break;
		case 'm': mpst = optarg; break;
		case 'h':
			usage(stdout);
			return mr_cli_finish(MR_EXIT_OK);
		default:
			return MR_EXIT_USAGE;
		}
	}
	if (restore ? optind != argc : optind != argc - 1)
		return mr_cli_usage("online", "give one REGION, or --restore");
	if (restore) {
		if (mr_root_set(root) || mr_restore_plan(&plan))
			return mr_cli_fail("%s", mr_last_error());
		snprintf(what, sizeof(what), "state file %s", mr_block_state_path());
	} else {
		const struct mr_region *r;

		if (mr_cli_load_region(root, mpst, argv[optind], &map, &r))
			return MR_EXIT_ERROR;
		if (mr_online_plan(&map, r, &plan)) {
			mr_cli_fail("%s", mr_last_error());
			mr_region_map_destroy(&map);
			return MR_EXIT_ERROR;
		}
		snprintf(what, sizeof(what), "region %u", r->id);
	}
	if (restore && apply && mr_block_state_prune(true)) {
		mr_block_plan_destroy(&plan);
		return mr_cli_fail("%s", mr_last_error());
	}
	if (!plan.nr_blocks) {
		printf("%s: no block to bring online (%u already online)\n", what, plan.skipped);
		ret = MR_EXIT_OK;
	} else if (!apply) {
		printf("%s: would online %u blocks:", what, plan.nr_blocks);
		mr_cli_print_blocks(&plan);
		printf("\nnothing changed: pass --apply to do it\n");
		ret = MR_EXIT_OK;
	} else if (mr_block_plan_apply(&plan, 0, true, NULL, &res)) {
		ret = mr_cli_fail("%s: %s (%u of %u blocks online)", what, mr_last_error(),
				  res.done, plan.nr_blocks);
	} else {
		printf("%s: onlined %u blocks in %.3f s:", what, res.done,
		       (double)res.elapsed_ns / 1e9);
		mr_cli_print_blocks(&plan);
		printf("\n");
		ret = MR_EXIT_OK;
	}
	mr_block_plan_destroy(&plan);
	mr_region_map_destroy(&map);
	return mr_cli_finish(ret);
}
