/* /proc/PID/stat, read once and parsed in one place (see proc.h). */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
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
	if (!p || sscanf(p + 1, " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %" SCNu64
			 " %" SCNu64 " %*d %*d %*d %*d %*d %*d %" SCNu64, &st->state,
			 &st->utime_ticks, &st->stime_ticks, &st->starttime_ticks) != 4)
		return mr_error(-EINVAL, "%s: unexpected format", path);
	return 0;
}

bool mr_proc_alive(pid_t pid)
{
	struct mr_proc_stat st;

	return mr_proc_stat_read(pid, &st) == 0 && st.state != 'Z' && st.state != 'X';
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
