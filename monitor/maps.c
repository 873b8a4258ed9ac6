/* A process's address ranges from /proc/PID/maps, read through the root layer, so
 * monitoring targets follow mmap/munmap as they happen; its clear_refs, written;
 * whether it is still the process monitoring began on, exec'd or gone. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/proc.h"
#include "common/root.h"
#include "common/util.h"
#include "monitor/monitor.h"

int mr_mon_read_maps(pid_t pid, struct mr_mon_range **ranges, size_t *nr)
{
	struct mr_mapping *maps = NULL, *m;
	struct mr_mon_range *out;
	size_t nr_maps = 0, n = 0;
	int err;

	err = mr_proc_maps_read(pid, &maps, &nr_maps);
	if (err)
		return err;
	out = malloc((nr_maps ? nr_maps : 1) * sizeof(*out));
	if (!out) {
		free(maps);
		return mr_error(-ENOMEM, "out of memory");
	}
	for (m = maps; m < maps + nr_maps; m++) {
		/* no access check sees the kernel's own mappings, nor anything in a
		 * PROT_NONE one (guard pages, reserved address space): leaving those out
		 * also keeps the mappings around them apart */
		if (mr_mapping_is_special(m) || mr_mapping_is_prot_none(m))
			continue;
		if (n && out[n - 1].end == m->start) {	/* adjacent mappings: one range */
			out[n - 1].end = m->end;
			continue;
		}
		out[n].start = m->start;
		out[n].end = m->end;
		n++;
	}
	free(maps);
	*ranges = out;
	*nr = n;
	return 0;
}

void mr_mon_target_read_starttime(struct mr_mon_target *t)
{
	if (t->kind == MR_MON_TARGET_PROCESS && t->pid > 0 && !t->starttime_ticks)
		mr_proc_starttime(t->pid, &t->starttime_ticks);
}

bool mr_mon_target_alive(const struct mr_mon_target *t)
{
	/* zombies count as gone: their maps are empty */
	if (t->starttime_ticks)
		return mr_proc_same(t->pid, t->starttime_ticks) == 0;
	return mr_proc_alive(t->pid);
}

bool mr_mon_target_execd(const struct mr_mon_target *t)
{
	/* without a start time a reused pid would pass for an exec */
	return t->starttime_ticks && mr_proc_same(t->pid, t->starttime_ticks) == 0 &&
	       !mr_proc_exiting(t->pid);
}

int mr_mon_clear_refs(pid_t pid, const char *what, bool consent)
{
	char path[64];

	/* clearing a process's accessed or soft-dirty bits misleads its reclaim and
	 * whatever reads soft-dirty (CRIU): the same guard as any kernel-state write */
	mr_pathf(path, sizeof(path), "/proc/%d/clear_refs", (int)pid);
	return mr_root_write_str(path, what, consent);
}
