/* One reader of /proc/PID/stat (through the root layer): whether a process lives,
 * its CPU times, and its start time, which tells a process from a later one that
 * reuses its pid. */
#ifndef MR_COMMON_PROC_H
#define MR_COMMON_PROC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* The fields of /proc/PID/stat that memreg reads; times in clock ticks
 * (sysconf(_SC_CLK_TCK)), start time after boot as the kernel counts it. */
struct mr_proc_stat {
	char state;			/* 'R', 'S', 'Z', ... */
	uint64_t utime_ticks;		/* field 14 */
	uint64_t stime_ticks;		/* field 15 */
	uint64_t starttime_ticks;	/* field 22 */
};

/* "proc.c" */

/* Read /proc/PID/stat. 0, -ESRCH (no such process: mr_error says so), or -errno. */
int mr_proc_stat_read(pid_t pid, struct mr_proc_stat *st);
/* The process exists and is not a zombie (kill(0) says nothing of zombies). */
bool mr_proc_alive(pid_t pid);
/* Start time of @pid in clock ticks after boot; 0 and -ESRCH when it is gone. */
int mr_proc_starttime(pid_t pid, uint64_t *ticks);
/* 0 when @pid runs and is the process that had @starttime_ticks; -ESRCH (with
 * mr_error naming the pid) when it is gone, a zombie, or another process now. */
int mr_proc_same(pid_t pid, uint64_t starttime_ticks);

#endif
