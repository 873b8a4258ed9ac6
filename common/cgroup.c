/* cgroup v2 groups memreg creates (see cgroup.h). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cgroup.h"
#include "common/proc.h"
#include "common/root.h"
#include "common/util.h"

/* Is @word one of the space-separated words of the file? */
static bool file_has_word(const char *linux_path, const char *word)
{
	char *data = NULL, *tok, *save = NULL;
	bool found = false;

	if (mr_root_read_file(linux_path, 4096, &data, NULL))
		return false;
	for (tok = strtok_r(data, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save))
		if (!strcmp(tok, word))
			found = true;
	free(data);
	return found;
}

int mr_cgroup_check(char *why, size_t len)
{
	if (!mr_root_exists(MR_CGROUP_ROOT "/cgroup.controllers")) {
		snprintf(why, len, "no cgroup v2 hierarchy at %s (mount -t cgroup2 none %s)",
			 MR_CGROUP_ROOT, MR_CGROUP_ROOT);
		return -ENOTSUP;
	}
	if (!file_has_word(MR_CGROUP_ROOT "/cgroup.controllers", "memory")) {
		snprintf(why, len, "the cgroup v2 hierarchy at %s has no memory controller",
			 MR_CGROUP_ROOT);
		return -ENOTSUP;
	}
	return 0;
}

int mr_cgroup_of(pid_t pid, char *path, size_t len)
{
	char file[64], *data = NULL, *line, *save = NULL;
	int err;

	err = mr_root_read_file(mr_pathf(file, sizeof(file), "/proc/%ld/cgroup", (long)pid),
				65536, &data, NULL);
	if (err)
		return err;
	err = mr_error(-ENOENT, "%s: no cgroup v2 line (0::PATH)", file);
	for (line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "0::", 3))
			continue;
		if (strlen(line + 3) >= len)
			err = mr_error(-ENAMETOOLONG, "%s: cgroup path too long", file);
		else {
			strcpy(path, line + 3);
			err = 0;
		}
		break;
	}
	free(data);
	return err;
}

int mr_cgroup_create(struct mr_cgroup *cg, const char *name, bool apply)
{
	char dir[300], why[200];
	int err;

	memset(cg, 0, sizeof(*cg));
	cg->apply = apply;
	err = mr_cgroup_check(why, sizeof(why));
	if (err)
		return mr_error(err, "cgroup: %s", why);
	if ((size_t)snprintf(cg->path, sizeof(cg->path), "/%s", name) >= sizeof(cg->path))
		return mr_error(-ENAMETOOLONG, "cgroup: name too long");
	mr_pathf(dir, sizeof(dir), MR_CGROUP_ROOT "%s", cg->path);
	if (mr_root_exists(dir))
		return mr_error(-EEXIST, "cgroup: %s exists already (left by a memreg that was "
				"killed? remove it with rmdir when it holds no process)", dir);
	/* a group has a memcg of its own only when its parent enables the controller
	 * for its children */
	if (!file_has_word(MR_CGROUP_ROOT "/cgroup.subtree_control", "memory")) {
		err = mr_root_write_str(MR_CGROUP_ROOT "/cgroup.subtree_control", "+memory", apply);
		if (err)
			return mr_error_wrap(err, "cgroup: enabling the memory controller");
		cg->memory_enabled = true;
	}
	err = mr_root_mkdir(dir, apply);
	if (err) {
		mr_cgroup_remove(cg);
		return err;
	}
	cg->made = true;
	return 0;
}

int mr_cgroup_move_in(struct mr_cgroup *cg, pid_t pid)
{
	char dir[300];
	int err;

	err = mr_cgroup_of(pid, cg->orig_path, sizeof(cg->orig_path));
	if (err)
		return err;
	err = mr_cgroup_enter(mr_pathf(dir, sizeof(dir), MR_CGROUP_ROOT "%s", cg->path), pid,
			      cg->apply);
	if (!err)
		cg->pid = pid;
	return err;
}

void mr_cgroup_remove(struct mr_cgroup *cg)
{
	char file[300];
	int err;

	if (cg->pid > 0 && mr_proc_alive(cg->pid)) {
		/* the root group is "/": no double slash */
		mr_pathf(file, sizeof(file), MR_CGROUP_ROOT "%s",
			 strcmp(cg->orig_path, "/") ? cg->orig_path : "");
		err = mr_cgroup_enter(file, cg->pid, cg->apply);
		if (err)
			fprintf(stderr, "memregctl: cgroup: pid %ld not moved back to %s: %s\n",
				(long)cg->pid, cg->orig_path, mr_last_error());
	}
	cg->pid = 0;
	if (cg->made) {
		mr_pathf(file, sizeof(file), MR_CGROUP_ROOT "%s", cg->path);
		err = mr_cgroup_rmdir(file, cg->apply);
		if (err)
			fprintf(stderr, "memregctl: cgroup: %s left: %s\n", file, mr_last_error());
		cg->made = false;
	}
	if (cg->memory_enabled) {
		/* refused (EBUSY) when another group uses it by now: then it stays */
		err = mr_root_write_str(MR_CGROUP_ROOT "/cgroup.subtree_control", "-memory",
					cg->apply);
		if (err)
			fprintf(stderr, "memregctl: cgroup: memory controller left enabled in %s: "
				"%s\n", MR_CGROUP_ROOT, mr_last_error());
		cg->memory_enabled = false;
	}
}

/* /proc/self/mounts escapes space, tab, newline and backslash as \ooo. */
static void unescape_octal(char *s)
{
	char *d = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*d++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*d++ = *s;
		}
	}
	*d = '\0';
}

int mr_cgroup2_mount(char *path, size_t len)
{
	char *data = NULL, *line, *save = NULL;
	int err;

	err = mr_root_read_file("/proc/self/mounts", 1 << 20, &data, NULL);
	if (err)
		return mr_error_wrap(err, "finding the cgroup v2 mount");
	err = mr_error(-ENOTSUP, "no cgroup v2 hierarchy is mounted (no cgroup2 line in "
		       "/proc/self/mounts; mount -t cgroup2 none /sys/fs/cgroup)");
	for (line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char dev[256], dir[4096], type[64];

		/* "cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid,... 0 0" */
		if (sscanf(line, "%255s %4095s %63s", dev, dir, type) != 3 ||
		    strcmp(type, "cgroup2"))
			continue;
		unescape_octal(dir);
		if (strlen(dir) >= len) {
			err = mr_error(-ENAMETOOLONG, "cgroup v2 mount %s: path too long", dir);
		} else {
			strcpy(path, dir);
			mr_clear_error();
			err = 0;
		}
		break;
	}
	free(data);
	return err;
}

int mr_cgroup_mkdir_fresh(const char *name, bool apply, char *dir, size_t len)
{
	char mnt[4096];
	int err;

	err = mr_cgroup2_mount(mnt, sizeof(mnt));
	if (err)
		return err;
	if ((size_t)snprintf(dir, len, "%s/%s", strcmp(mnt, "/") ? mnt : "", name) >= len)
		return mr_error(-ENAMETOOLONG, "cgroup %s/%s: path too long", mnt, name);
	if (mr_root_exists(dir))
		return mr_error(-EEXIST, "cgroup: %s exists already (left by a memreg that was "
				"killed? remove it with rmdir when it holds no process)", dir);
	return mr_root_mkdir(dir, apply);
}

int mr_cgroup_enter(const char *dir, pid_t pid, bool apply)
{
	char file[4200], num[24];

	snprintf(num, sizeof(num), "%ld", (long)pid);
	return mr_root_write_str(mr_pathf(file, sizeof(file), "%s/cgroup.procs", dir), num,
				 apply);
}

int mr_cgroup_rmdir(const char *dir, bool apply)
{
	int err, i;

	for (i = 0; i < 200; i++) {
		err = mr_root_rmdir(dir, apply);
		if (err != -EBUSY)
			break;
		usleep(10000);
	}
	return err;
}
