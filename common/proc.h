/* One reader of /proc/PID/stat and one of /proc/PID/maps (through the root layer):
 * whether a process lives, its CPU times, its start time, which tells a process
 * from a later one that reuses its pid, and its mappings. */
#ifndef MR_COMMON_PROC_H
#define MR_COMMON_PROC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* The fields of /proc/PID/stat that memreg reads; times in clock ticks
 * (sysconf(_SC_CLK_TCK)), start time after boot as the kernel counts it. */
struct mr_proc_stat {
	char state;			/* 'R', 'S', 'Z', ... */
	unsigned flags;			/* field 9: the kernel's PF_* flags */
	uint64_t utime_ticks;		/* field 14 */
	uint64_t stime_ticks;		/* field 15 */
	uint64_t starttime_ticks;	/* field 22 */
};

/* "proc.c" */

/* Read /proc/PID/stat. 0, -ESRCH (no such process: mr_error says so), or -errno. */
int mr_proc_stat_read(pid_t pid, struct mr_proc_stat *st);
/* The process exists and is not a zombie (kill(0) says nothing of zombies). */
bool mr_proc_alive(pid_t pid);
/* The process is gone, a zombie, or exiting (PF_EXITING: its memory may already be
 * released, so move_pages answers EINVAL for it, not ESRCH). */
bool mr_proc_exiting(pid_t pid);
/* Start time of @pid in clock ticks after boot; 0 and -ESRCH when it is gone. */
int mr_proc_starttime(pid_t pid, uint64_t *ticks);
/* 0 when @pid runs and is the process that had @starttime_ticks; -ESRCH (with
 * mr_error naming the pid) when it is gone, a zombie, or another process now. */
int mr_proc_same(pid_t pid, uint64_t starttime_ticks);

/*
 * struct mr_mapping - one line of /proc/PID/maps: [@start, @end), its permissions
 * ("rw-p"), and its name ("[heap]", a path, or "" for an anonymous mapping).
 */
struct mr_mapping {
	uint64_t start;
	uint64_t end;
	char perms[5];
	char name[256];
};

/* Every mapping of @pid, in address order (*@maps malloc'd, free() it). A malformed
 * or unordered line is -EINVAL naming the file; -ESRCH when the process is gone. */
int mr_proc_maps_read(pid_t pid, struct mr_mapping **maps, size_t *nr);
/* Nothing can touch a PROT_NONE mapping (guard pages, reserved address space). */
bool mr_mapping_is_prot_none(const struct mr_mapping *m);
/* The kernel's own mappings ([vsyscall], [vvar], [vvar_vclock], [vdso]): not in
 * the process's page tables as its pages, never moved, never monitored. */
bool mr_mapping_is_special(const struct mr_mapping *m);

#endif
