/* /proc/PID/stat and /proc/PID/maps, each parsed in one place (see proc.h). */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/proc.h"
#include "common/root.h"
#include "common/util.h"

int mr_proc_stat_read(pid_t pid, struct mr_proc_stat *st)
{
	char path[64], buf[4096];
	const char *p;
	int ret;

	mr_pathf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	ret = mr_root_read_str(path, buf, sizeof(buf));
	if (ret == -ENOENT)
		return mr_error(-ESRCH, "pid %d: no such process", (int)pid);
	if (ret)
		return ret;
	/* The command name is in parentheses and may hold spaces and ')': the fields
	 * start after the last ')'. Field 3 (state) is the first after it. */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %c %*d %*d %*d %*d %*d %u %*u %*u %*u %*u %" SCNu64
			 " %" SCNu64 " %*d %*d %*d %*d %*d %*d %" SCNu64, &st->state, &st->flags,
			 &st->utime_ticks, &st->stime_ticks, &st->starttime_ticks) != 5)
		return mr_error(-EINVAL, "%s: unexpected format", path);
	return 0;
}

bool mr_proc_alive(pid_t pid)
{
	struct mr_proc_stat st;

	return mr_proc_stat_read(pid, &st) == 0 && st.state != 'Z' && st.state != 'X';
}

#define MR_PF_EXITING 0x4u	/* include/linux/sched.h: getting shut down */

bool mr_proc_exiting(pid_t pid)
{
	struct mr_proc_stat st;

	return mr_proc_stat_read(pid, &st) != 0 || st.state == 'Z' || st.state == 'X' ||
	       (st.flags & MR_PF_EXITING);
}

int mr_proc_starttime(pid_t pid, uint64_t *ticks)
{
	struct mr_proc_stat st;
	int ret = mr_proc_stat_read(pid, &st);

	*ticks = ret ? 0 : st.starttime_ticks;
	return ret;
}

int mr_proc_same(pid_t pid, uint64_t starttime_ticks)
{
	struct mr_proc_stat st;
	int ret = mr_proc_stat_read(pid, &st);

	if (ret == -ESRCH || (!ret && (st.state == 'Z' || st.state == 'X')))
		return mr_error(-ESRCH, "pid %d has exited", (int)pid);
	if (ret)
		return ret;
	if (st.starttime_ticks != starttime_ticks)
		return mr_error(-ESRCH, "pid %d is another process now (started at tick %" PRIu64
				", not %" PRIu64 ")", (int)pid, st.starttime_ticks, starttime_ticks);
	return 0;
}

int mr_proc_maps_read(pid_t pid, struct mr_mapping **maps, size_t *nr)
{
	char path[64], *data = NULL, *line, *save = NULL;
	struct mr_mapping *out = NULL, *m;
	size_t n = 0, cap = 0;
	int err;

	mr_pathf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	err = mr_root_read_file(path, 64u << 20, &data, NULL);
	if (err == -ENOENT)
		return mr_error(-ESRCH, "pid %d: no such process", (int)pid);
	if (err)
		return err;
	for (line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		int used = 0;

		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			m = realloc(out, cap * sizeof(*out));
			if (!m) {
				err = mr_error(-ENOMEM, "%s: out of memory", path);
				goto fail;
			}
			out = m;
		}
		m = &out[n];
		m->name[0] = '\0';
		/* "start-end perms offset dev inode [name]"; the name may hold spaces */
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s %*s %*s %*s%n", &m->start, &m->end,
			   m->perms, &used) < 3 || !used || m->start >= m->end) {
			err = mr_error(-EINVAL, "%s: bad line '%.60s'", path, line);
			goto fail;
		}
		if (n && m->start < out[n - 1].end) {
			err = mr_error(-EINVAL, "%s: mappings out of order at '%.60s'", path, line);
			goto fail;
		}
		line += used;
		line += strspn(line, " \t");
		snprintf(m->name, sizeof(m->name), "%s", line);
		n++;
	}
	free(data);
	*maps = out;
	*nr = n;
	return 0;
fail:
	free(data);
	free(out);
	return err;
}

bool mr_mapping_is_prot_none(const struct mr_mapping *m)
{
	return strncmp(m->perms, "---", 3) == 0;
}

bool mr_mapping_is_special(const struct mr_mapping *m)
{
	return strcmp(m->name, "[vsyscall]") == 0 || strcmp(m->name, "[vvar]") == 0 ||
	       strcmp(m->name, "[vvar_vclock]") == 0 || strcmp(m->name, "[vdso]") == 0;
}
