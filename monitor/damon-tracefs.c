/* The damon backend's tracefs instance: instances/memreg-PID-STARTTIME with only
 * damon:damon_aggregated enabled, so no one else's tracing is touched and nothing
 * else fills our buffer. The name is an ownership marker too: damon-reset removes
 * instances whose memreg is gone. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/proc.h"
#include "common/root.h"
#include "common/util.h"
#include "monitor/damon.h"

/* tracefs where the lab and most systems have it; debugfs mounts it too */
static const char *const tracefs_dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };

static const char *tracefs_base(void)
{
	char path[200];
	size_t i;

	for (i = 0; i < MR_ARRAY_SIZE(tracefs_dirs); i++)
		if (mr_root_exists(mr_pathf(path, sizeof(path), "%s/instances", tracefs_dirs[i])))
			return tracefs_dirs[i];
	return NULL;
}

int mr_mon_damon_tracefs_open(struct mr_mon_damon_tracefs *t, pid_t pid,
			      uint64_t starttime_ticks, bool apply)
{
	const char *base = tracefs_base();
	char path[300];
	int err;

	t->fd = -1;
	t->made = false;
	t->path[0] = '\0';
	if (!base)
		return mr_error(-ENOENT, "no tracefs (neither /sys/kernel/tracing nor "
				"/sys/kernel/debug/tracing has instances/)");
	mr_pathf(path, sizeof(path), "%s/events/damon/damon_aggregated/enable", base);
	if (!mr_root_exists(path))
		return mr_error(-ENOTSUP, "%s: no damon:damon_aggregated event", base);
	mr_pathf(t->path, sizeof(t->path), "%s/instances/memreg-%ld-%" PRIu64, base, (long)pid,
		 starttime_ticks);
	err = mr_root_mkdir(t->path, apply);
	if (err)
		return err;
	t->made = true;
	/* Enabling the event with tracing's record-cmd on (the default; a global
	 * option, not an instance's) also hooks sched_switch for comm names: harmless
	 * on real CPUs, a panic now and then under QEMU TCG, so the lab boots with
	 * trace_options=norecord-cmd (docs/lab.md). memreg leaves global tracing
	 * options alone. */
	err = mr_root_write_str(mr_pathf(path, sizeof(path), "%s/events/damon/damon_aggregated/enable",
					 t->path), "1", apply);
	if (err)
		return err;
	t->fd = mr_root_open(mr_pathf(path, sizeof(path), "%s/trace_pipe", t->path),
			     O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (t->fd < 0) {
		err = t->fd;
		t->fd = -1;
		return err;
	}
	return 0;
}

int mr_mon_damon_tracefs_filter(struct mr_mon_damon_tracefs *t, pid_t kdamond_pid, bool apply)
{
	char path[300], filter[64];

	snprintf(filter, sizeof(filter), "common_pid == %ld", (long)kdamond_pid);
	return mr_root_write_str(mr_pathf(path, sizeof(path), "%s/events/damon/damon_aggregated/filter",
					  t->path), filter, apply);
}

void mr_mon_damon_tracefs_close(struct mr_mon_damon_tracefs *t, bool apply)
{
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
	if (t->made && mr_root_rmdir(t->path, apply))
		fprintf(stderr, "memregctl: damon: %s\n", mr_last_error());
	t->made = false;
}

int mr_mon_damon_tracefs_remove_stale(bool apply, FILE *out)
{
	const char *base = tracefs_base();
	char path[300];
	struct dirent *de;
	int n = 0, failed = 0;
	DIR *d;

	if (!base)
		return 0;
	d = mr_root_opendir(mr_pathf(path, sizeof(path), "%s/instances", base));
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		long pid;
		uint64_t start;
		char tail;

		if (sscanf(de->d_name, "memreg-%ld-%" SCNu64 "%c", &pid, &start, &tail) != 2 ||
		    pid <= 0)
			continue;
		if (mr_proc_same((pid_t)pid, start) == 0) {
			fprintf(out, "tracefs instance %s/instances/%s: memreg pid %ld still runs: "
				"left\n", base, de->d_name, pid);
			continue;
		}
		n++;
		mr_pathf(path, sizeof(path), "%s/instances/%s", base, de->d_name);
		if (!apply) {
			fprintf(out, "would remove tracefs instance %s\n", path);
		} else if (mr_root_rmdir(path, true)) {
			fprintf(out, "cannot remove tracefs instance %s: %s\n", path, mr_last_error());
			failed++;
		} else {
			fprintf(out, "removed tracefs instance %s\n", path);
		}
	}
	closedir(d);
	return failed ? -EIO : n;
}
