/* The kernel engine (memregctl control --engine kernel): memreg's schemes installed
 * in the kernel's DAMOS through DAMON sysfs, one paddr kdamond over the source
 * nodes' physical ranges (all System RAM with --phys), a DAMOS memcg filter on a
 * cgroup v2 memreg creates for a target process; the kernel's per-scheme
 * statistics feed the same status, log and metrics as the user engine. */
#ifndef MR_CONTROLLER_KENGINE_H
#define MR_CONTROLLER_KENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "controller/run.h"
#include "controller/scheme.h"
#include "monitor/damon.h"
#include "monitor/monitor.h"

/*
 * struct mr_kengine_opts - the kernel engine's target.
 * @pid:	the process whose pages the schemes act on (0 with @phys).
 * @started:	memreg started it (-- COMMAND): it waits on @gate_fd before exec.
 * @phys:	every page of System RAM, no memcg filter.
 * @apply:	the command's --apply (the run's act context was started without it:
 *		the user engine's actions never run here).
 * @gate_fd:	-1, or a pipe's write end the child reads one byte from before it
 *		execs: written once the child is in memreg's cgroup, so every page it
 *		touches is charged there; closed in any case.
 */
struct mr_kengine_opts {
	pid_t pid;
	bool started;
	bool phys;
	bool apply;
	int gate_fd;
};

/* "kengine.c" */

/* The kernel's name of @a's action under paddr; NULL when paddr has none (willneed). */
const char *mr_kengine_action_name(enum mr_scheme_action a);
/*
 * @s in the kernel's units under @attrs (nr_accesses in samples per aggregation,
 * ages in aggregation intervals, quotas in ms), with a memcg filter that lets only
 * @memcg_path's pages through (NULL: none). -ENOTSUP (willneed) or -EINVAL (too many
 * filters) with the scheme's line named.
 */
int mr_kengine_to_damos(const struct mr_scheme *s, const struct mr_mon_attrs *attrs,
			const char *memcg_path, struct mr_mon_damos *d);
/* Does the kernel's scheme @d take region @r (mm/damon/core.c __damos_valid_target)? */
bool mr_kengine_damos_matches(const struct mr_mon_damos *d, const struct mr_mon_region *r);
/*
 * The physical ranges the kdamond monitors: with @phys all System RAM
 * (/proc/iomem); otherwise the ranges of the regions of every node except the
 * schemes' migration targets (pages already there need no move; the memcg filter
 * keeps the actions to the target's pages). @src_node gets the one node they lie
 * in, or -1 when several. 0 or -errno.
 */
int mr_kengine_ranges(const struct mr_region_map *map, const struct mr_scheme_set *set,
		      bool phys, struct mr_mon_range **out, size_t *nr, int *src_node);
/* Install @run->set in the kernel (run started with mr_ctl_run_start, apply false),
 * report each aggregation, remove everything at the end. 0 or -errno. */
int mr_kengine_run(struct mr_ctl_run *run, const struct mr_kengine_opts *o);

#endif
