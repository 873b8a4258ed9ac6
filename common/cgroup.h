/* cgroup v2 groups memreg creates for a target (the kernel engine's DAMOS memcg
 * filter): create one, move a process in and back, remove it. Through the root
 * layer: under a fixture root nothing is written, on "/" only with --apply. */
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

#endif
