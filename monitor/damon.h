/* The damon backend's internal contract: the files of monitor/damon-*.c and
 * backend-damon.c, what each does, and what tests and memregctl damon-reset use.
 *
 *   backend-damon.c   the ops table: set-up order, snapshots, self-test
 *   damon-sysfs.c     /sys/kernel/mm/damon/admin: free-check, ownership (claim,
 *                     the owner file, release of exactly memreg's kdamonds),
 *                     kdamond CPU time, damon-reset after a SIGKILL
 *   damon-tracefs.c   the tracefs instance memreg-PID-STARTTIME
 *   damon-regions.c   the regions given to DAMON (mappings, /proc/iomem) and read
 *                     back from a stat scheme's tried regions
 *   damon-trace.c     the damon_aggregated event parser and aggregator
 *
 * Every access goes through the root layer: under a fixture root reads come from
 * the fixture and every write is refused. Nothing here writes without ctx->apply. */
#ifndef MR_MONITOR_DAMON_H
#define MR_MONITOR_DAMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "monitor/monitor.h"

#define MR_DAMON_ADMIN "/sys/kernel/mm/damon/admin"
#define MR_DAMON_KDAMONDS MR_DAMON_ADMIN "/kdamonds"
/* The ownership marker file (through the root layer). */
#define MR_DAMON_OWNER_DIR "/run/memreg"
#define MR_DAMON_OWNER_FILE MR_DAMON_OWNER_DIR "/damon.owner"
/* kdamonds one memreg process may own at once (a controller and a physical record). */
#define MR_DAMON_MAX_KDAMONDS 4

/* "damon-trace.c": the damon:damon_aggregated tracepoint, one event per region at
 * the end of every aggregation (include/trace/events/damon.h, 6.12):
 * "target_id=%lu nr_regions=%u %lu-%lu: %u %u" (start-end: nr_accesses age),
 * after trace_pipe's "COMM-PID [CPU] FLAGS TIME: " context columns. */
struct mr_mon_damon_trace_rec {
	pid_t pid;		/* the thread that emitted it (a kdamond); 0: no context columns */
	uint64_t target_id;
	uint32_t nr_regions;	/* regions of this target in this aggregation */
	uint64_t start, end;
	uint32_t nr_accesses, age;
};

/* One trace_pipe line (no newline needed). 1: a damon_aggregated event, in @rec;
 * 0: another line (another event, "[LOST n EVENTS]", blank); -EINVAL: a
 * damon_aggregated line that does not parse (mr_error set). */
int mr_mon_damon_trace_parse(const char *line, struct mr_mon_damon_trace_rec *rec);

/* Turns the stream of events into whole aggregations: an aggregation is complete
 * when nr_regions events in rising address order have arrived; a broken run (lost
 * events, a region out of order, nr_regions changing) is dropped. With @pid set,
 * only that kdamond's events count (see mr_mon_damon_trace_feed). */
struct mr_mon_damon_trace_agg {
	pid_t pid;				/* the kdamond whose events count; 0: any */
	struct mr_mon_region *cur, *last;	/* the one being read, the last complete */
	size_t nr_cur, cap_cur, nr_last, cap_last;
	uint32_t cur_nr_regions;
	uint64_t nr_complete;			/* complete aggregations so far */
	uint64_t nr_dropped;			/* incomplete runs dropped */
	uint64_t nr_foreign;			/* events of another kdamond, ignored */
	char line[512];				/* a line split across reads */
	size_t line_len;
};

void mr_mon_damon_trace_agg_init(struct mr_mon_damon_trace_agg *agg);
void mr_mon_damon_trace_agg_destroy(struct mr_mon_damon_trace_agg *agg);
/* Feed raw trace_pipe bytes (any split). 0 or -errno (-ENOMEM, -EINVAL). */
int mr_mon_damon_trace_feed(struct mr_mon_damon_trace_agg *agg, const char *data, size_t len);

/* "damon-sysfs.c" */

/* One kdamond memreg set up: kdamonds/INDEX. */
struct mr_mon_damon_kdamond {
	unsigned index;
	pid_t pid;		/* its thread, once on; 0 before (or when unknown) */
	char ops[8];		/* "vaddr" / "paddr" */
	pid_t target_pid;	/* vaddr: the monitored process; 0 for paddr */
};

/* What memreg owns of DAMON, as /run/memreg/damon.owner records it:
 *
 *   # memreg's DAMON ownership marker ...
 *   memreg PID STARTTIME_TICKS
 *   tracefs /sys/kernel/tracing/instances/memreg-PID-STARTTIME_TICKS
 *   kdamond INDEX KDAMOND_PID OPS TARGET_PID
 *
 * one kdamond line per kdamond memreg created (KDAMOND_PID 0 until it runs), no
 * tracefs line without an instance. STARTTIME_TICKS is /proc/PID/stat field 22, so
 * a later process reusing the pid is told apart (mr_proc_same). */
struct mr_mon_damon_owner {
	pid_t pid;
	uint64_t starttime_ticks;
	char tracefs[200];		/* the instance's path; "" when none */
	struct mr_mon_damon_kdamond kd[MR_DAMON_MAX_KDAMONDS];
	unsigned nr_kdamonds;
	bool apply;			/* the command's --apply */
	bool claimed;			/* nr_kdamonds is ours to put back to 0 */
	bool file_written;		/* the owner file is ours to remove */
};

/* 0 when DAMON exists and nobody uses it: nr_kdamonds reads 0, no kdamond thread
 * in /proc, damon_reclaim / damon_lru_sort / damon_stat are not enabled, and no
 * running memreg owns it (the owner file). -EBUSY when in use, -ENOTSUP without
 * DAMON; @why says which. Reads only. */
int mr_mon_damon_check_free(char *why, size_t len);

/* memreg's own pid and start time (through the root layer), nothing claimed. */
int mr_mon_damon_owner_init(struct mr_mon_damon_owner *o, bool apply);
/* Create o->nr_kdamonds kdamonds, kdamonds/0..N-1 (o->kd[] ops and targets filled;
 * indices are set here, pids by mr_mon_damon_started), memreg's:
 * check free again, write the owner file, read nr_kdamonds as 0 once more right
 * before writing it (writing it destroys every kdamond directory), then verify the
 * write took (nr_kdamonds reads back, the directories are fresh). -EBUSY, with
 * nothing written to DAMON, when someone else configured DAMON meanwhile. */
int mr_mon_damon_claim(struct mr_mon_damon_owner *o);
/* After kdamonds/INDEX/state was set on: record its thread in the owner file. */
int mr_mon_damon_started(struct mr_mon_damon_owner *o, unsigned i);
/* Undo a claim: stop exactly the kdamonds that are still memreg's (the pid
 * recorded, or stopped with memreg's configuration), put nr_kdamonds back to 0
 * when every kdamond directory is memreg's, remove the owner file. What is not
 * memreg's is left, and stderr says so. */
void mr_mon_damon_release(struct mr_mon_damon_owner *o);
/* The owner file's text, and back (-EINVAL with mr_error on a bad file). */
int mr_mon_damon_owner_format(const struct mr_mon_damon_owner *o, char *buf, size_t len);
int mr_mon_damon_owner_parse(const char *text, struct mr_mon_damon_owner *o);
/* Read MR_DAMON_OWNER_FILE: 0, -ENOENT (no marker), or -errno. */
int mr_mon_damon_owner_read(struct mr_mon_damon_owner *o);
/* The thread of kdamonds/@index while it runs (its pid file), 0 when it does not. */
/* mr_root_read_str for DAMON's sysfs files, which answer -EBUSY while DAMON's sysfs
 * lock is held (a kdamond winding down): retried for up to 2 s. */
int mr_mon_damon_read_str(const char *path, char *buf, size_t len);
/* Write @cmd ("on", "off", "commit", "update_schemes_stats", ...) to kdamonds/@kd/state,
 * through the root guard (@apply). The store takes the same lock with a trylock, so a
 * concurrent reader of a pid file (damo, a test, another memreg's check) makes it
 * -EBUSY for a moment: retried for up to 2 s; any other error at once. */
int mr_mon_damon_write_state(unsigned kd, const char *cmd, bool apply);
pid_t mr_mon_damon_kdamond_pid(unsigned index);
/* The kdamond's CPU time (utime + stime) in seconds, 0 when it is gone. */
double mr_mon_damon_kdamond_cpu_s(pid_t kdamond_pid);

/* memregctl damon-reset: after a memreg killed by SIGKILL, stop and remove exactly
 * the kdamonds the owner file names while they are still the recorded ones, remove
 * memreg's tracefs instances and the owner file. Prints each step to @out ("would
 * ..." without @apply, when nothing changes). -EBUSY while the recorded memreg
 * still runs (mr_proc_same), 1 when something was left (said why), 0 done. */
int mr_mon_damon_reset(bool apply, FILE *out);

/* "damon-tracefs.c": a tracefs instance of memreg's own, with only
 * damon:damon_aggregated enabled. */
struct mr_mon_damon_tracefs {
	int fd;				/* the instance's trace_pipe, non-blocking; -1 */
	bool made;			/* we created path: remove it */
	char path[200];			/* .../tracing/instances/memreg-PID-STARTTIME */
};

/* Create instances/memreg-@pid-@starttime_ticks and open its trace_pipe. */
int mr_mon_damon_tracefs_open(struct mr_mon_damon_tracefs *t, pid_t pid,
			      uint64_t starttime_ticks, bool apply);
/* Let only @kdamond_pid's events into the instance's buffer (common_pid filter). */
int mr_mon_damon_tracefs_filter(struct mr_mon_damon_tracefs *t, pid_t kdamond_pid, bool apply);
/* Close the pipe (an open file keeps the instance busy), remove the instance. */
void mr_mon_damon_tracefs_close(struct mr_mon_damon_tracefs *t, bool apply);
/* Remove memreg-PID-STARTTIME instances whose process is gone (damon-reset);
 * @apply false only lists them. Returns how many there were, -EIO when one
 * could not be removed. */
int mr_mon_damon_tracefs_remove_stale(bool apply, FILE *out);

/* "damon-regions.c" */
/* Join the ranges (sorted, apart) across their narrowest gaps until at most @limit
 * remain: the mappings given to DAMON as regions never exceed what it may split. */
int mr_mon_damon_coalesce(struct mr_mon_range *ranges, size_t *nr, size_t limit);
/* System RAM ranges for paddr, from /proc/iomem (addresses need root). */
int mr_mon_damon_ram_ranges(struct mr_mon_range **out, size_t *nr);
/* The mappings of @pid as at most max_nr_regions / 2 ranges (room to split). */
int mr_mon_damon_target_ranges(pid_t pid, const struct mr_mon_attrs *a,
			       struct mr_mon_range **r, size_t *nr);
/* Write @r as the regions of kdamond @kd's context 0, target 0. */
int mr_mon_damon_write_regions(struct mr_mon_ctx *ctx, unsigned kd,
			       const struct mr_mon_range *r, size_t nr);
/* Ask kdamond @kd for its stat scheme's tried regions and read them into the
 * target. 1 when the kdamond stopped (its target exited). */
int mr_mon_damon_read_tried(struct mr_mon_ctx *ctx, unsigned kd);

/* ---------------------------------------------------------------- DAMOS schemes
 * "damon-sysfs.c": one DAMOS scheme as the kernel's sysfs takes it
 * (kdamonds/K/contexts/0/schemes/N, Documentation/admin-guide/mm/damon/usage.rst),
 * in the kernel's units. The controller converts its schemes to these
 * (controller/kengine.c); the DAMON file layout stays here. */
#define MR_DAMOS_MAX_FILTERS 8

struct mr_mon_damos_filter {
	char type[16];		/* "memcg", "anon", "addr" */
	/* the kernel filters out what the filter applies to: memory that matches
	 * (@matching) or that does not; 6.14+ 'allow' is written N (reject) */
	bool matching;
	char memcg_path[256];	/* relative to the cgroup v2 root: "/memreg-123" */
	uint64_t addr_start, addr_end;
};

/*
 * struct mr_mon_damos - one scheme in sysfs units.
 * @nr_accesses_min/max:	samples that saw an access per aggregation interval
 *			(0..aggr_us / sample_us).
 * @age_min/max:	aggregation intervals.
 * @target_nid:		migrate_hot/migrate_cold's destination; -1: not written.
 * @quota_*:		0: no such quota. @wmark_metric "none" or "free_mem_rate".
 */
struct mr_mon_damos {
	char action[24];
	uint64_t sz_min, sz_max;
	uint32_t nr_accesses_min, nr_accesses_max;
	uint32_t age_min, age_max;
	uint64_t apply_interval_us;
	int target_nid;
	uint64_t quota_ms, quota_bytes, quota_reset_ms;
	unsigned weight_sz_permil, weight_nr_accesses_permil, weight_age_permil;
	char wmark_metric[16];
	uint64_t wmark_interval_us;
	unsigned wmark_high, wmark_mid, wmark_low;	/* per-mille */
	struct mr_mon_damos_filter filters[MR_DAMOS_MAX_FILTERS];
	unsigned nr_filters;
};

/* DAMOS's per-scheme statistics (schemes/N/stats). */
struct mr_mon_damos_stats {
	uint64_t nr_tried, sz_tried, nr_applied, sz_applied, qt_exceeds;
};

/*
 * Write @s as scheme @index of kdamond @kd's context 0 (nr_schemes written by the
 * caller). What the running kernel accepts is probed, not assumed from its version:
 * the action and each filter type are written and read back, target_nid must exist
 * for a migrate action. -ENOTSUP with one line saying what this kernel refused.
 */
int mr_mon_damon_write_scheme(unsigned kd, unsigned index, const struct mr_mon_damos *s,
			      bool apply);
/* Ask kdamond @kd to refresh its schemes' stats files, then read scheme @index's.
 * -ENOENT / -EINVAL when the kdamond is gone or stopped. */
int mr_mon_damon_update_stats(unsigned kd, bool apply);
int mr_mon_damon_read_stats(unsigned kd, unsigned index, struct mr_mon_damos_stats *st);
/* The context's operations set, its intervals and region bounds (the kernel engine's
 * kdamond: no stat scheme, no tracefs). 0 or -errno. */
int mr_mon_damon_write_context(unsigned kd, const char *ops, const struct mr_mon_attrs *a,
			       bool apply);

#endif
