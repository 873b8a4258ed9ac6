/* The controller's run loop: the monitor (mr_mon_run) calls it once per aggregation
 * interval; it runs the scheme engine over the target's regions with the actions of
 * action.c, logs what each scheme did, and keeps the status and metrics files.
 * memregctl control and memregd are thin layers over it. */
#ifndef MR_CONTROLLER_RUN_H
#define MR_CONTROLLER_RUN_H

#include <stdbool.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>

#include "controller/action.h"
#include "controller/engine.h"
#include "controller/scheme.h"
#include "monitor/monitor.h"

struct json_object;
struct mr_energy_source;
struct mr_ctl_classes;

/* Per-scheme totals the engine does not keep: pages and the nodes acted on. */
struct mr_ctl_run_scheme {
	uint64_t regions_acted;		/* regions the action was applied to */
	uint64_t node_bytes[MR_MAX_NODES + 1];	/* bytes taken from each node (+unknown) */
};

/*
 * struct mr_ctl_run - one controller run.
 * Inputs (set before mr_ctl_run_start):
 * @set, @map:		the schemes (checked with mr_act_check_schemes) and the region map.
 * @mon:		the monitor, ready for mr_mon_run (ops, attrs, target, stop).
 * @engine_name, @backend_name:	for the output ("user", "damon").
 * @duration_us:	stop after this much monitoring time (0: until the end).
 * @log:		one line per scheme per aggregation in which it did something
 *			(NULL: none). memregd's "one log line per action batch".
 * @log_prefix:		put in front of every log line ("" or "memregd: ").
 * @status_path:	write the status (JSON) here after each aggregation (NULL: none).
 * @metrics_dir:	write DIR/memreg.prom after each aggregation (NULL: none).
 * @keep_log:		keep every aggregation's actions for the final JSON (--json).
 * State: @ctl (the engine), @act (the actions), totals.
 */
struct mr_ctl_run {
	struct mr_scheme_set *set;
	const struct mr_region_map *map;
	struct mr_mon_ctx *mon;
	const char *engine_name;
	const char *backend_name;
	uint64_t duration_us;
	FILE *log;
	const char *log_prefix;
	const char *status_path;
	const char *metrics_dir;
	bool keep_log;
	bool whole_mappings;		/* the backend sees one count per mapping (refs): the
					 * schemes see one region per mapping */
	bool log_stat;			/* log stat schemes too (control: yes; memregd: only
					 * actions, one line per batch) */
	mr_ctl_metric_fn metric;	/* free-memory metric (NULL: /proc/meminfo) */
	struct mr_ctl_classes *classes;	/* the allocator in the loop (classes.h), or NULL:
					 * fed every aggregation's regions */
	struct mr_energy_source *energy;	/* started DRAM energy source, or NULL */
	/* SIGHUP: when *@reload is set, @reload_fn runs before the next aggregation
	 * (memregd re-reads its configuration; the monitor keeps running). */
	volatile sig_atomic_t *reload;
	void (*reload_fn)(struct mr_ctl_run *run, void *arg);
	void *reload_arg;

	struct mr_ctl ctl;
	struct mr_act_ctx act;
	struct mr_ctl_run_scheme *per_scheme;
	uint64_t nr_aggregations;
	uint64_t last_time_us;
	uint64_t started_unix;
	struct json_object *actions_log;	/* array, when @keep_log */
	struct mr_mon_region *joined;		/* @whole_mappings: one region per mapping */
	size_t cap_joined;
	/* Backends that aggregate themselves (damon, replay) hand over fresh regions
	 * every interval, so the engine's age reset of a region it acted on (DAMOS's
	 * rule) would be lost: the ranges acted on are kept and their pieces aged
	 * from the action on (see age_acted in run.c). */
	struct mr_ctl_acted {
		uint64_t start, end, time_us;
	} *acted;
	size_t nr_acted, cap_acted;
	struct mr_mon_region *aged;		/* the regions cut at acted ranges */
	size_t cap_aged;
	uint64_t now_us;			/* the aggregation being handled */
	int err;				/* the first error of a callback */
	bool finished;				/* the run is over (status "running": false) */
};

/* "run.c" */

/* Set up the engine and actions for @run's inputs; @pid and @phys describe the target
 * (pid 0: a replayed record), @apply whether to act. 0 or -errno (mr_error set). */
int mr_ctl_run_start(struct mr_ctl_run *run, pid_t pid, bool phys, bool apply);
/* Monitor and control until the target ends, the duration passes or mon->stop is
 * set. 0 or -errno. Status and metrics are written a last time before it returns. */
int mr_ctl_run(struct mr_ctl_run *run);
void mr_ctl_run_destroy(struct mr_ctl_run *run);
/* Put @set (checked with mr_act_check_schemes) in place of the run's schemes between
 * two aggregations: statistics start over, the monitor is untouched. The caller
 * frees the old set after. 0 or -errno (the old schemes then stay). */
int mr_ctl_run_replace_schemes(struct mr_ctl_run *run, struct mr_scheme_set *set);
/* The run's status as JSON (the status file's content, `control status --json`). */
struct json_object *mr_ctl_run_status_json(const struct mr_ctl_run *run);
/* Final statistics for people, one paragraph per scheme. */
void mr_ctl_run_print_stats(const struct mr_ctl_run *run, FILE *f);
/* Write @run's status to @path through a temporary file in the same directory. */
int mr_ctl_run_write_status(const struct mr_ctl_run *run, const char *path);
/* The free-memory metric of /proc/meminfo (MemFree of MemTotal, per-mille). */
int mr_ctl_meminfo_free_permille(void *arg, unsigned *free_permille);

/* "metrics.c" */

/* Prometheus text exposition of a status document (mr_ctl_run_status_json), to @f. */
int mr_ctl_metrics_format(struct json_object *status, FILE *f);
/* DIR/memreg.prom from @status: written to DIR/.memreg.prom.tmp.PID, then renamed,
 * so node_exporter's textfile collector never reads half a file. 0 or -errno. */
int mr_ctl_metrics_write(struct json_object *status, const char *dir);

#endif
