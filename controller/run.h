/* The controller's run loop: the monitor (mr_mon_run) calls it once per aggregation
 * interval; it runs the scheme engine over the target's regions with the actions of
 * action.c, logs what each scheme did, and keeps the status and metrics files.
 * memregctl control and memregd are thin layers over it. */
#ifndef MR_CONTROLLER_RUN_H
#define MR_CONTROLLER_RUN_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>

#include "controller/action.h"
#include "controller/engine.h"
#include "controller/plan.h"
#include "controller/scheme.h"
#include "common/targets.h"
#include "monitor/monitor.h"

struct json_object;
struct mr_energy_source;
struct mr_ctl_classes;

/* Per-scheme totals the engine does not keep: pages and the nodes acted on. */
struct mr_ctl_run_scheme {
	uint64_t regions_acted;		/* regions the action was applied to */
	uint64_t node_bytes[MR_MAX_NODES + 1];	/* bytes taken from each node (+unknown) */
};

/* A range an action was applied to, and when (see age_acted in run.c). */
struct mr_ctl_acted {
	uint64_t start, end, time_us;
};

/*
 * struct mr_ctl_run_target - one monitored process of a run: its monitor, its
 * actions (move_pages and process_madvise name the pid), and the state kept between
 * its aggregations. A run with one target (--pid, -- CMD, --replay) keeps it in
 * run->one over run->mon and run->act; a run over a target set (run->targets) has
 * one per process, each with its own monitor ctx and thread (see run.c).
 * @acted:	ranges acted on, whose pieces are aged from the action on.
 * @aged, @joined: buffers of the regions handed to the engine.
 * @last:	the regions of the target's last aggregation, as the engine left them:
 *		the other targets' aggregations rank against them (one priority
 *		threshold over all targets, as DAMOS's).
 */
struct mr_ctl_run_target {
	struct mr_mon_ctx *mon;
	struct mr_act_ctx *act;
	struct mr_ctl_acted *acted;
	size_t nr_acted, cap_acted;
	struct mr_mon_region *aged;
	size_t cap_aged;
	struct mr_mon_region *joined;
	size_t cap_joined;
	struct mr_mon_region *last;
	size_t nr_last, cap_last;
	/* a target of a set */
	struct mr_target member;
	struct mr_mon_ctx own_mon;
	struct mr_act_ctx own_act;
	struct mr_ctl_run *run;
	pthread_t thread;
	bool done;			/* its thread ended (under run->lock) */
	bool left;			/* the set said it left (logged) */
	volatile sig_atomic_t stop;	/* its monitor's stop: it left, or the run ends */
	int err;			/* its monitor's error (not the process's end) */
	char errmsg[512];
	uint64_t aggregations;
};

/*
 * struct mr_ctl_run - one controller run.
 * Inputs (set before mr_ctl_run_start):
 * @set, @map:		the schemes (checked with mr_act_check_schemes) and the region map.
 * @mon:		the monitor, ready for mr_mon_run (ops, attrs, target, stop). With
 *			@targets, a template: its ops, attrs, apply and stop are copied
 *			into each process's own monitor ctx; its target is not used.
 * @targets:		NULL for one target (@mon's); else the set to follow: processes
 *			join and leave as mr_targets_update says, every @mon update
 *			interval, each monitored by its own thread (see run.c).
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
	struct mr_targets *targets;
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
	struct mr_ctl_run_target one;		/* the target without @targets */
	struct mr_ctl_run_target *cur;		/* the target the engine acts on */
	/* with @targets: the live targets, the lock that serialises the engine, the
	 * statistics and the outputs between their threads, and the stop of all */
	struct mr_ctl_run_target **live;
	size_t nr_live;
	pthread_mutex_t lock;
	volatile sig_atomic_t stop_all;
	uint64_t start_mono_us;			/* the run's clock (mr_mon_now_us) */
	uint64_t nr_joined, nr_left;		/* processes over the run */
	uint64_t now_us;			/* the aggregation being handled */
	int err;				/* the first error of a callback */
	/* A running memregctl evacuate (pid 0: none), read each aggregation: its
	 * regions are never targeted (arbitration). */
	struct mr_plan_evacuation evac;
	bool evac_unreadable;			/* its marker was bad: warned once */
	bool finished;				/* the run is over (status "running": false) */
};

/* "run.c" */

/* Set up the engine and actions for @run's inputs; @pid and @phys describe the target
 * (pid 0: a replayed record), @apply whether to act. 0 or -errno (mr_error set). */
int mr_ctl_run_start(struct mr_ctl_run *run, pid_t pid, bool phys, bool apply);
/* Monitor and control until the target ends (with @targets: until no process is
 * left and no cgroup can bring one), the duration passes or mon->stop is set. 0 or
 * -errno. Status and metrics are written a last time before it returns. */
int mr_ctl_run(struct mr_ctl_run *run);
void mr_ctl_run_destroy(struct mr_ctl_run *run);
/* For an engine that applies the schemes itself (the kernel's DAMOS: kengine.c):
 * one aggregation's ctl.states[].stats and act.acct[] are filled in; log, totals,
 * status and metrics as the user engine's. 0, 1 when the duration is over, -errno.
 * mr_ctl_run_end marks the run finished and writes status and metrics a last time. */
int mr_ctl_run_report(struct mr_ctl_run *run, uint64_t time_us);
int mr_ctl_run_end(struct mr_ctl_run *run);
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
