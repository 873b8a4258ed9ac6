/* memregctl online: bring back the memory blocks memreg took offline, of a region or
 * (--restore) of the whole state file, each to the zone it had. */
#include "config.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>

#include "common/root.h"
#include "controller/plan.h"
#include "regions/placement.h"
#include "tools/cli.h"
#include "tools/cli-region.h"

static void usage(FILE *f)
{
	fprintf(f, "Usage: memregctl online REGION [--all] [--apply] [--force WARNING] [--root DIR]\n"
	      "                        [--mpst FILE]\n"
	      "       memregctl online --restore [--apply] [--root DIR]\n"
	      "Bring back online the blocks of REGION that memreg took offline in this boot,\n"
	      "or with --restore every block the state file (%s,\n"
	      "MEMREG_STATE_DIR overrides the directory) records, for instance after memregctl\n"
	      "was killed. Each block goes back to the zone it had (online_movable or\n"
	      "online_kernel), never to a zone the kernel picks; the first write that fails\n"
	      "stops the command. Entries of an earlier boot are reported, never acted on.\n\n"
	      "  --restore           the blocks of the state file instead of a region\n"
	      "  --all               also the region's offline blocks memreg did not take\n"
	      "                      (listed first; brought back Movable)\n"
	      "  --apply             do it (default: print the plan)\n"
	      "  --force WARNING     accept an MPST table warning, as for memregctl offline\n"
	      "  --root DIR, --mpst FILE  as for memregctl regions\n"
	      "  -h, --help          this text\n", mr_block_state_path());
}

int mr_cmd_online(int argc, char **argv)
{
	static const struct option options[] = {
		{ "restore", no_argument, NULL, 'R' },
		{ "all", no_argument, NULL, 'A' },
		{ "apply", no_argument, NULL, 'a' },
		{ "force", required_argument, NULL, 'F' },
		{ "root", required_argument, NULL, 'r' },
		{ "mpst", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *root = NULL, *mpst = NULL, *forced = NULL;
	struct mr_region_map map = { 0 };
	struct mr_block_result res;
	struct mr_block_plan plan;
	bool apply = false, restore = false, all = false;
	char what[4400];
	unsigned i;
	int c, ret;

	while ((c = mr_cli_getopt(argc, argv, "h", options)) != -1) {
		switch (c) {
		case 'R': restore = true; break;
		case 'A': all = true; break;
		case 'a': apply = true; break;
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
	if (restore ? optind != argc : optind != argc - 1)
		return mr_cli_usage("online", "give one REGION, or --restore");
	if (restore && all)
		return mr_cli_usage("online", "--all goes with a REGION, not --restore");
	if (restore) {
		if (mr_root_set(root) || mr_restore_plan(&plan, NULL))
			return mr_cli_fail("%s", mr_last_error());
		snprintf(what, sizeof(what), "state file %s", mr_block_state_path());
	} else {
		struct mr_plan_warning w[32];
		const struct mr_region *r;
		unsigned n;

		if (mr_cli_load_region(root, mpst, argv[optind], &map, &r))
			return MR_EXIT_ERROR;
		n = mr_plan_mpst_warnings(&map, w, 32);
		for (i = 0; i < n; i++)
			mr_cli_warn("MPST warning (%s): %s", w[i].kind, w[i].text);
		if (mr_plan_guard_apply(w, n, mpst, apply, forced) ||
		    mr_online_plan(&map, r, all, &plan)) {
			mr_cli_fail("%s", mr_last_error());
			mr_region_map_destroy(&map);
			return mr_cli_finish(MR_EXIT_ERROR);
		}
		snprintf(what, sizeof(what), "region %u", r->id);
	}
	for (i = 0; i < plan.nr_notes; i++)
		mr_cli_warn("%s", plan.notes[i]);
	if (restore && apply && mr_block_state_prune(true)) {
		mr_block_plan_destroy(&plan);
		return mr_cli_fail("%s", mr_last_error());
	}
	if (all)
		for (i = 0; i < plan.nr_blocks; i++)
			if (plan.zones[i] == MR_ZONE_UNKNOWN)
				printf("%s: memory%" PRIu64 " was not taken by memreg; --all brings "
				       "it back (online_movable)\n", what, plan.blocks[i]);
	if (!plan.nr_blocks) {
		printf("%s: no block to bring online (%u already online", what, plan.skipped);
		if (plan.not_ours)
			printf(", %u offline but not taken by memreg", plan.not_ours);
		printf(")\n");
		ret = MR_EXIT_OK;
	} else if (!apply) {
		printf("%s: would online %u blocks:", what, plan.nr_blocks);
		for (i = 0; i < plan.nr_blocks; i++)
			printf(" memory%" PRIu64 " (%s)", plan.blocks[i],
			       mr_block_zone_online(plan.zones[i]));
		printf("\nnothing changed: pass --apply to do it\n");
		ret = MR_EXIT_OK;
	} else if (mr_block_plan_apply(&plan, 0, true, NULL, &res)) {
		ret = mr_cli_fail("%s: %s (%u of %u blocks online)", what, mr_last_error(),
				  res.done, plan.nr_blocks);
	} else {
		printf("%s: onlined %u blocks in %.3f s:", what, res.done,
		       (double)res.elapsed_ns / 1e9);
		for (i = 0; i < plan.nr_blocks; i++)
			printf(" memory%" PRIu64 " (%s)", plan.blocks[i],
			       mr_block_zone_online(plan.zones[i]));
		printf("\n");
		ret = MR_EXIT_OK;
	}
	mr_block_plan_destroy(&plan);
	mr_region_map_destroy(&map);
	return mr_cli_finish(ret);
}
