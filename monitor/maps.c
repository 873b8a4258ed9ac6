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

/* Mappings of the kernel's own that no access check can see. */
static bool special_mapping(const char *name)
{
	return strcmp(name, "[vsyscall]") == 0 || strcmp(name, "[vvar]") == 0 ||
	       strcmp(name, "[vvar_vclock]") == 0 || strcmp(name, "[vdso]") == 0;
}

int mr_mon_read_maps(pid_t pid, struct mr_mon_range **ranges, size_t *nr)
{
	char path[64], *data = NULL, *line, *save = NULL;
	struct mr_mon_range *out = NULL;
	size_t len, n = 0, cap = 0;
	int err;

	mr_pathf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	err = mr_root_read_file(path, 64u << 20, &data, &len);
	if (err)
		return err;
	for (line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		uint64_t s, e;
		char name[256] = "", perms[8] = "";
		int used = 0;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %*s %*s %*s%n", &s, &e, perms, &used) < 3 ||
		    s >= e) {
			err = mr_error(-EINVAL, "%s: bad line '%.60s'", path, line);
			goto fail;
		}
		sscanf(line + used, " %255s", name);
		/* nothing can access a PROT_NONE mapping (guard pages, reserved address
		 * space): leaving it out also keeps the mappings around it apart */
		if (special_mapping(name) || strncmp(perms, "---", 3) == 0)
			continue;
		if (n && out[n - 1].end == s) {	/* adjacent mappings form one range */
			out[n - 1].end = e;
			continue;
		}
		if (n && s < out[n - 1].end) {
			err = mr_error(-EINVAL, "%s: mappings out of order at %.60s", path, line);
			goto fail;
		}
		if (n == cap) {
			struct mr_mon_range *p;

			cap = cap ? cap * 2 : 64;
			p = realloc(out, cap * sizeof(*out));
			if (!p) {
				err = mr_error(-ENOMEM, "%s: out of memory", path);
				goto fail;
			}
			out = p;
		}
		out[n].start = s;
		out[n].end = e;
		n++;
	}
	free(data);
	*ranges = out;
	*nr = n;
	return 0;
fail:
	free(data);
	free(out);
	return err;
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
