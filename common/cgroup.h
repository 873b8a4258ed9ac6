/* cgroup v2 groups memreg creates: for a target (the kernel engine's DAMOS memcg
 * filter: create one, move a process in and back, remove it) and for a benchmark run
 * (a fresh group the workload starts in). Through the root layer: under a fixture
 * root nothing is written, on "/" only with --apply. */
#ifndef MR_COMMON_CGROUP_H
#define MR_COMMON_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define MR_CGROUP_ROOT "/sys/fs/cgroup"

/*
 * struct mr_cgroup - a group memreg made.
 * @path:	relative to the cgroup v2 root ("/memreg-123"): DAMOS's memcg_path.
 * @made:	memreg created it: mr_cgroup_remove removes it.
 * @memory_enabled:	memreg added "+memory" to the root's cgroup.subtree_control.
 * @pid, @orig_path:	a process moved in, and the group it came from.
 */
struct mr_cgroup {
	char path[256];
	bool made;
	bool memory_enabled;
	pid_t pid;
	char orig_path[256];
	bool apply;
};

/* "cgroup.c" */

/* Is a cgroup v2 hierarchy with the memory controller mounted at MR_CGROUP_ROOT?
 * 0, or -ENOTSUP with @why saying what is missing. Reads only. */
int mr_cgroup_check(char *why, size_t len);
/* @pid's cgroup v2 path (the "0::PATH" line of /proc/PID/cgroup). */
int mr_cgroup_of(pid_t pid, char *path, size_t len);
/* Create MR_CGROUP_ROOT/@name with the memory controller (enabled in the root's
 * subtree_control when it was not: @cg remembers, to undo). -EEXIST when it exists. */
int mr_cgroup_create(struct mr_cgroup *cg, const char *name, bool apply);
/* Move @pid (all its threads) into @cg, remembering where it was. */
int mr_cgroup_move_in(struct mr_cgroup *cg, pid_t pid);
/* Undo: the process back to its group (when it still runs), the group removed, the
 * memory controller disabled again if memreg enabled it. Errors go to stderr; what
 * cannot be undone is said. */
void mr_cgroup_remove(struct mr_cgroup *cg);

/* Where the cgroup v2 hierarchy is mounted: the first "cgroup2" line of
 * /proc/self/mounts (/sys/fs/cgroup, or /sys/fs/cgroup/unified on a v1/v2 hybrid).
 * 0, or -ENOTSUP with mr_error saying none is mounted. */
int mr_cgroup2_mount(char *path, size_t len);
/* A fresh group @name under the cgroup v2 mount, its path in @dir: -EEXIST when it
 * exists; refused as every write (-EROFS under a fixture root, -EPERM without @apply). */
int mr_cgroup_mkdir_fresh(const char *name, bool apply, char *dir, size_t len);
/* Move @pid (every thread of it) into the group at @dir (a Linux path). */
int mr_cgroup_enter(const char *dir, pid_t pid, bool apply);
/* Remove the group at @dir; a process that just exited may still count as a member
 * for a moment (EBUSY until it is reaped): retried for up to 2 s. */
int mr_cgroup_rmdir(const char *dir, bool apply);

#endif
