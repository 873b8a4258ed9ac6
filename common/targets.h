/* The target set: processes named by pid and the members of cgroup v2 directories,
 * re-read periodically so that processes join and leave (memregctl control and record). */
#ifndef MR_COMMON_TARGETS_H
#define MR_COMMON_TARGETS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define MR_TARGETS_MAX 1024		/* processes followed at once */

/* One process of the set; @starttime_ticks tells it from a later one with its pid. */
struct mr_target {
	pid_t pid;
	uint64_t starttime_ticks;
	int cgroup;			/* index in @cgroups it came from, -1: a --pid */
};

/*
 * struct mr_targets - the processes a command follows.
 * @pids:	named processes (--pid, "pid N"): members while they live, never again
 *		after they left (a reused pid is another process).
 * @cgroups:	cgroup v2 directories as Linux paths (/sys/fs/cgroup/...), read through
 *		the root layer; @cgroup_gone[i] once its directory disappeared.
 * @members:	the processes of the last mr_targets_update, in pid order.
 */
struct mr_targets {
	struct mr_target *pids;
	size_t nr_pids;
	char **cgroups;
	bool *cgroup_gone;
	size_t nr_cgroups;
	struct mr_target *members;
	size_t nr_members;
};

/* "targets.c" */

/* Add a process: -ESRCH (with mr_error) when it does not run. */
int mr_targets_add_pid(struct mr_targets *t, pid_t pid);
/* Add a cgroup v2 directory: -ENOENT when it does not exist, -ENOTSUP when it is
 * not cgroup v2 (no cgroup.controllers: a v1 hierarchy or no cgroup at all); one
 * line in mr_error saying which. */
int mr_targets_add_cgroup(struct mr_targets *t, const char *path);
/*
 * Re-read the set: named processes that still run, and every process listed in
 * each cgroup's cgroup.procs (memreg itself left out). Fills @joined with the
 * processes that are new since the last call and @left with those gone (both
 * malloc'd, free them; NULL when empty). A cgroup whose directory vanished is marked
 * gone and its processes leave. 0 or -errno (mr_error set: the set is unchanged).
 */
int mr_targets_update(struct mr_targets *t, struct mr_target **joined,
			  size_t *nr_joined, struct mr_target **left, size_t *nr_left);
/* Can the set still gain members: a cgroup that exists, or a named process that
 * never joined? False once every named process left and every cgroup is gone. */
bool mr_targets_open(const struct mr_targets *t);
/* "pid 123" or "pid 123 (cgroup /sys/fs/cgroup/x)" for the log. */
const char *mr_target_text(const struct mr_targets *t, const struct mr_target *m,
			       char *buf, size_t len);
void mr_targets_free(struct mr_targets *t);

#endif
