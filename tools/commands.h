/* The memregctl command table: MR_CMD(name, one-line help), or MR_CMD2(id, "name",
 * help) for a command whose name is not a C identifier ("alloc-stats" runs
 * mr_cmd_alloc_stats). The dispatcher, `help`
 * and the man page's command list all come from this list, so they cannot drift.
 * Each command lives in tools/cmd-NAME.c as `int mr_cmd_NAME(int argc, char **argv)`
 * and handles its own --help. Keep the list in the order `help` should print. */
MR_CMD(regions, "show memory power regions, their power states and what they hold")
MR_CMD(where, "show how many bytes of a process live in each region")
MR_CMD(move, "move a process's pages to the node of a region")
MR_CMD(offline, "take a region's memory blocks offline, with checks and rollback")
MR_CMD(online, "bring a region's memory blocks back online, or restore after a crash")
MR_CMD(plan, "which regions can be emptied, at what cost and saving (a plan for evacuate)")
MR_CMD(evacuate, "carry out a plan: empty its regions and take them offline, or undo it")
MR_CMD(record, "record which memory a process (or physical memory) accesses, over time")
MR_CMD(report, "heatmaps, working-set sizes and per-region access rates of a record")
MR_CMD(profile, "learn hot and cold allocation sites (MEMREG_PROFILE) from a record and a site map")
MR_CMD(control, "apply schemes (access pattern -> action) to a process: move cold data out")
MR_CMD2(damon_reset, "damon-reset", "clean up the kernel's DAMON after a memreg was killed (its own kdamonds only)")
MR_CMD(energy, "DRAM energy of a command, per socket and per region (RAPL or the model)")
MR_CMD(bench, "run a workload under several configurations: kernbench and DAMOS tables, a report")
MR_CMD2(alloc_stats, "alloc-stats", "show the live stats of a process running under libmemreg.so")
MR_CMD(version, "print memregctl's version")
