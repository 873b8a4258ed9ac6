/* memregctl damon-reset: clean up the kernel's DAMON after a memreg was killed
 * (SIGKILL, a crash): exactly the kdamonds its ownership marker names, never
 * while that memreg still runs. The work is mr_mon_damon_reset (monitor/damon.h). */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>

#include "common/root.h"
#include "monitor/damon.h"
#include "tools/cli.h"

static void usage(FILE *f)
{
	fputs("Usage: memregctl damon-reset [--apply] [--root DIR]\n"
	      "Clean up the kernel's DAMON after a memreg that used it was killed: read\n"
	      "the ownership marker " MR_DAMON_OWNER_FILE ", refuse while the memreg\n"
	      "process it names still runs, else stop and remove exactly the kdamonds it\n"
	      "names while they are still the recorded ones (nr_kdamonds goes back to 0\n"
	      "only when every kdamond is memreg's), remove memreg's tracefs instances\n"
	      "(instances/memreg-PID-STARTTIME of processes that are gone) and the marker.\n"
	      "A kdamond someone else runs or configured is left, and said so.\n\n"
	      "  --apply             do it (default: print what it would do, change nothing)\n"
	      "  --root DIR          read a captured machine (writes are refused there)\n"
	      "  -h, --help          this text\n"
	      "Exit status: 0 done (or nothing to do, or the plan), 1 refused, failed or\n"
	      "something left, 2 bad usage.\n", f);
}

int mr_cmd_damon_reset(int argc, char **argv)
{
	static const struct option options[] = {
		{ "apply", no_argument, NULL, 'a' },
		{ "root", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *root = NULL;
	bool apply = false;
	int c, ret;

	while ((c = mr_cli_getopt(argc, argv, "h", options)) != -1) {
		switch (c) {
		case 'a': apply = true; break;
		case 'r': root = optarg; break;
		case 'h':
			usage(stdout);
			return mr_cli_finish(MR_EXIT_OK);
		default:
			return MR_EXIT_USAGE;
		}
	}
	if (optind != argc)
		return mr_cli_usage("damon-reset", "unexpected argument '%s'", argv[optind]);
	if (mr_root_set(root))
		return mr_cli_fail("%s", mr_last_error());
	ret = mr_mon_damon_reset(apply, stdout);
	if (ret < 0)
		return mr_cli_finish(mr_cli_fail("damon-reset: %s", mr_last_error()));
	return mr_cli_finish(ret ? MR_EXIT_ERROR : MR_EXIT_OK);
}
