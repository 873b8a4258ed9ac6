/* A process's address ranges from /proc/PID/maps, read through the root layer, so
 * monitoring targets follow mmap/munmap as they happen; its clear_refs, written. */
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

bool mr_mon_process_alive(pid_t pid)
{
	return mr_proc_alive(pid);	/* zombies count as gone: their maps are empty */
}

int mr_mon_clear_refs(pid_t pid, const char *what, bool consent)
{
	char path[64];

	/* clearing a process's accessed or soft-dirty bits misleads its reclaim and
	 * whatever reads soft-dirty (CRIU): the same guard as any kernel-state write */
	mr_pathf(path, sizeof(path), "/proc/%d/clear_refs", (int)pid);
	return mr_root_write_str(path, what, consent);
}
