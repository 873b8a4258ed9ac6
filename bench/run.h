/* The bench harness: configurations x workloads x interleaved runs, each measured
 * (times, context switches, peak RSS, memused.avg, DRAM energy), and the outputs
 * built from them (kernbench blocks, DAMOS tables, JSON, CSV, an SVG report). */
#ifndef MR_BENCH_RUN_H
#define MR_BENCH_RUN_H

#include <stdbool.h>
#include <stdio.h>

#include "bench/stats.h"
#include "common/util.h"

/*
 * The per-run metrics, as an X-macro list so the struct, the tables, the JSON and
 * the CSV cannot drift apart: X(id, key, kernbench line name or NULL, table title,
 * printf format of a raw value).
 */
#define MR_BENCH_METRICS(X)								\
	X(ELAPSED_S, "elapsed_s", "Elapsed Time", "elapsed (s)", "%.3f")		\
	X(USER_S, "user_s", "User Time", "user (s)", "%.3f")				\
	X(SYSTEM_S, "system_s", "System Time", "system (s)", "%.3f")			\
	X(CPU_S, "cpu_s", NULL, "user+system (s)", "%.3f")				\
	X(CPU_PCT, "cpu_pct", "Percent CPU", "CPU (%)", "%.0f")			\
	X(INVOL_CSW, "involuntary_csw", "Context Switches", "context switches (involuntary)", "%.0f") \
	X(VOL_CSW, "voluntary_csw", "Sleeps", "sleeps (voluntary switches)", "%.0f") \
	X(MAXRSS_KIB, "max_rss_kib", NULL, "largest process peak RSS (KiB)", "%.0f") \
	X(MEMUSED_AVG_KIB, "memused_avg_kib", NULL, "memused.avg (KiB)", "%.0f")	\
	X(ENERGY_J, "dram_energy_j", NULL, "DRAM energy (J)", "%.3f")		\
	X(DATA_REGIONS, "data_regions", NULL, "regions holding the workload's data", "%.0f") \
	X(LOW_POWER_PCT, "low_power_pct", NULL, "region-time in low power (%)", "%.2f") \
	X(MODEL_ENERGY_J, "model_energy_j", NULL, "DRAM energy, model with residency (J)", "%.3f") \
	X(WSS_P50_MIB, "wss_p50_mib", NULL, "working-set size p50 of the rec record (MiB)", "%.3f")

enum mr_bench_metric {
#define MR_BENCH_X(id, key, kb, title, fmt) MR_BENCH_##id,
	MR_BENCH_METRICS(MR_BENCH_X)
#undef MR_BENCH_X
	NR_MR_BENCH_METRICS
};

struct mr_bench_metric_info {
	const char *key;
	const char *kernbench;	/* NULL: not one of kernbench's six lines */
	const char *title;
	const char *fmt;
};
extern const struct mr_bench_metric_info mr_bench_metric_info[NR_MR_BENCH_METRICS];

/*
 * How a configuration runs the workload. A new kind (the controller, evacuation)
 * adds an entry here and a case in run.c's child setup and per-workload preparation.
 */
enum mr_bench_kind {
	MR_BENCH_ORIG,		/* the workload as it is */
	MR_BENCH_ALLOC,		/* LD_PRELOAD=libmemreg.so */
	MR_BENCH_ALLOC_PROFILE,	/* libmemreg.so with a profile from a training run */
	MR_BENCH_REC,		/* under `memregctl record` (monitoring only) */
	MR_BENCH_CONTROL,	/* under `memregctl control` with the schemes given */
	MR_BENCH_EVAC,		/* `memregctl evacuate` of a plan before, --undo after */
	MR_BENCH_USER,		/* from a bench file: env, preload, setup/teardown */
	NR_MR_BENCH_KINDS
};

#define MR_BENCH_MAX_ENV	32
#define MR_BENCH_MAX_CONFIGS	16
#define MR_BENCH_MAX_WORKLOADS	64

/*
 * struct mr_bench_config - one column of the tables.
 * @env:	"KEY=VALUE" strings set in the workload's environment.
 * @preload:	a library for LD_PRELOAD (NULL: none).
 * @setup, @teardown: shell commands run before and after each measured run, timed
 *		apart from it (their seconds are in the raw runs).
 * @note:	what the configuration is, for the report ("libmemreg.so preloaded").
 * @schemes:	control: the schemes file (NULL: the bench's --schemes).
 * @backend:	control: the monitor backend (NULL: the bench's, else what
 *		`memregctl record` would pick for a command it starts).
 * @plan:	evac: the plan file (NULL: the bench's --plan).
 */
struct mr_bench_config {
	char *name;
	enum mr_bench_kind kind;
	char *env[MR_BENCH_MAX_ENV];
	unsigned nr_env;
	char *preload;
	char *setup;
	char *teardown;
	char *note;
	char *schemes;
	char *backend;
	char *plan;
};

/*
 * struct mr_bench_workload - one row of the tables.
 * @cmd:	the shell command measured (sh -c).
 * @prepare:	a shell command run before every run and warm-up, not measured
 *		(kernbench's `make clean; sync; sleep`).
 * @label:	kernbench's run name ("Optimal load -j 8"); NULL: the workload's name.
 * @dir:	the directory it runs in (NULL: the current one).
 * @profile:	alloc+profile's profile, learned in this workload's training run.
 * @no_warmup:	no warm-up rounds before this workload (kernbench warms up once,
 *		at the optimal load).
 * @wss_expect_mib: the access suite: the working set the pattern has (stairs 10
 *		MiB): a rec run's record is read for its p50 (0: not read).
 * @copy_dir:	with --together, each configuration runs in a copy of @dir of its
 *		own (kernbench's tree: builds that run at once cannot share one).
 * @config_dir:	those copies, made by mr_bench_run_all and removed after the runs
 *		(NULL: @dir).
 */
struct mr_bench_workload {
	char *name;
	char *cmd;
	char *prepare;
	char *label;
	char *dir;
	char *profile;
	bool no_warmup;
	double wss_expect_mib;
	bool copy_dir;
	char *config_dir[MR_BENCH_MAX_CONFIGS];
};

/*
 * struct mr_bench_run - one measured (or warm-up) run.
 * @order:	its place in the whole sequence, from 0 (warm-ups included).
 * @round:	which repetition (0 .. runs-1) for measured runs.
 * @start_unix_s: wall-clock start (CLOCK_REALTIME), for the raw output.
 * @m:		the metrics; NaN where not measured.
 * @regions_held: the ids of the regions holding the workload's data in the last
 *		sample before it ended ("0-2,5"), "" when not known.
 * @evac_bytes, @evac_s: evac: what `evacuate --json` reported for the setup (NaN
 *		otherwise).
 */
struct mr_bench_run {
	unsigned workload;
	unsigned config;
	unsigned order;
	unsigned round;
	bool warmup;
	double start_unix_s;
	double setup_s, teardown_s;
	int exit_status;
	double m[NR_MR_BENCH_METRICS];
	char regions_held[256];
	double evac_bytes, evac_s;
	/* rec and control: what the monitor followed, "cgroup" (the run's fresh cgroup
	 * v2, --apply) or "process" (the workload's top process); "" for the others */
	char observed[8];
};

struct mr_bench {
	struct mr_bench_config configs[MR_BENCH_MAX_CONFIGS];
	unsigned nr_configs;
	struct mr_bench_workload workloads[MR_BENCH_MAX_WORKLOADS];
	unsigned nr_workloads;
	unsigned runs;		/* measured runs per configuration and workload */
	unsigned warmup;	/* warm-up rounds per workload, before the measured ones */
	const char *title;	/* the suite or "memregctl bench" */
	char *context;		/* a line every table repeats ("linux-source 6.1.192, tinyconfig") */
	char *memregctl;	/* path of memregctl, for rec and training */
	char *libmemreg;	/* path of libmemreg.so */
	char *workdir;		/* records, profiles, the workloads' log */
	char *log_path;		/* the workloads' stdout and stderr */
	bool progress;		/* a progress line on standard error */
	bool together;		/* --together: a round's configurations run at the same
				 * time (run.c, measure_round) */
	char energy_source[32];	/* "powercap", ..., "model"; "" before a run */
	char energy_detail[256];
	char notes[16][256];	/* what could not be measured, and why */
	unsigned nr_notes;
	struct mr_bench_run *run;	/* measured and warm-up runs, in run order */
	unsigned nr_runs;	/* done so far */
	unsigned nr_planned;	/* in all */
	const char *report_dir;	/* rewrite the report there after every run (NULL: no) */
	char date[64];		/* when the bench started, as date(1) prints it */
	char kernel[128];	/* uname -r */
	/* Added for the region metrics and control/evac: */
	bool apply;		/* --apply: control acts, evac runs, --phys may use DAMON */
	bool cgroups;		/* rec and control runs each in a fresh cgroup v2 (--apply
				 * and a cgroup v2 mount; set by the bench) */
	bool phys;		/* --phys: a physical record beside every measured run */
	const char *schemes;	/* --schemes FILE: control's default */
	const char *backend;	/* --control-backend: control's default */
	const char *control_attrs; /* --control-attrs: control's --attrs (NULL: its own) */
	const char *plan;	/* --plan FILE: evac's default */
	void *regions;		/* the region map and power model (run.c), NULL: none */
	char map_note[256];	/* what the region map is, for the notes */
};

/* "run.c" */
/* Add a built-in configuration by name (orig, alloc, alloc+profile, rec, control,
 * evac);
 * -EINVAL with mr_error() for an unknown one. */
int mr_bench_add_builtin(struct mr_bench *b, const char *name);
struct mr_bench_config *mr_bench_find_config(struct mr_bench *b, const char *name);
struct mr_bench_config *mr_bench_new_config(struct mr_bench *b, const char *name);
struct mr_bench_workload *mr_bench_new_workload(struct mr_bench *b, const char *name,
						const char *cmd);
void mr_bench_note(struct mr_bench *b, const char *fmt, ...) MR_PRINTF(2, 3);
/* Find libmemreg.so and memregctl: MEMREG_LIB, else beside the running memregctl
 * (its build tree's .libs), else the installed library directory. */
int mr_bench_locate(struct mr_bench *b);
/* Run every workload's warm-ups and measured runs; 0, or -errno with mr_error()
 * (a run that failed names its workload, configuration and the log). */
int mr_bench_run_all(struct mr_bench *b);
void mr_bench_free(struct mr_bench *b);
/* The summary of metric @m over the measured runs of @workload x @config
 * (@workload == nr_workloads: the per-round totals over every workload). */
void mr_bench_summary_of(const struct mr_bench *b, unsigned workload, unsigned config,
			 enum mr_bench_metric m, struct mr_bench_summary *s);

/* "benchfile.c" */
/* Read a bench file (memregctl-bench(1)): config and workload sections. */
int mr_bench_read_file(struct mr_bench *b, const char *path);

/* "output.c" */
void mr_bench_print_kernbench(FILE *f, const struct mr_bench *b);
void mr_bench_print_tables(FILE *f, const struct mr_bench *b);
/* The whole bench as JSON text (every raw run, the summaries); malloc'd. */
char *mr_bench_json(const struct mr_bench *b);
void mr_bench_print_csv(FILE *f, const struct mr_bench *b);
/* bench.txt, bench.json, runs.csv, report.svg and report.html in @dir. */
int mr_bench_write_report(const struct mr_bench *b, const char *dir);

/* "suites.c" */
struct mr_bench_suite_opts {
	const char *tree;	/* kernbench: the source tree (NULL: fetch linux-source-6.1) */
	const char *config;	/* kernbench: make target for .config (default tinyconfig) */
	const char *loads;	/* kernbench: half,optimal,maximal (default as kernbench) */
	unsigned jobs;		/* kernbench: optimal load's -j (0: 4 x CPUs) */
	unsigned pause_s;	/* kernbench: the pause after sync (default 5) */
	bool configs_given;	/* -c was given: the suite adds no configurations */
};
/* Fill @b's workloads (and the suite's configurations) for suite @name. */
int mr_bench_suite(struct mr_bench *b, const char *name, const struct mr_bench_suite_opts *o);

#endif
