/* The access monitor: DAMON's model (targets, adaptive regions, sampling /
 * aggregation / update intervals) in user space, with backends behind one ops table. */
#ifndef MR_MONITOR_MONITOR_H
#define MR_MONITOR_MONITOR_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define MR_MON_MIN_REGION_BYTES 4096u	/* DAMON_MIN_REGION: one page */

/* Monitoring attributes. DAMON's defaults are 5 ms / 100 ms / 1 s and 10..1000
 * regions; each backend replaces the intervals with ones its cost allows. */
struct mr_mon_attrs {
	uint64_t sample_us;	/* one access check per region per sampling interval */
	uint64_t aggr_us;	/* nr_accesses counts samples over this interval */
	uint64_t update_us;	/* re-read the target's mappings this often */
	uint32_t min_nr_regions;
	uint32_t max_nr_regions;
};

/* A monitoring region [start, end): nr_accesses is the number of sampling
 * intervals of the current aggregation interval in which the region's sampled
 * page was found accessed; age counts aggregation intervals during which
 * nr_accesses stayed about the same (reset when it changes by more than the
 * merge threshold). */
struct mr_mon_region {
	uint64_t start;
	uint64_t end;
	uint32_t nr_accesses;
	uint32_t last_nr_accesses;
	uint32_t age;
	uint64_t sampling_addr;	/* the page checked in this sampling interval */
};

static inline uint64_t mr_mon_region_bytes(const struct mr_mon_region *r)
{
	return r->end - r->start;
}

/* An address range [start, end) of a target (a mapping, or System RAM). */
struct mr_mon_range {
	uint64_t start;
	uint64_t end;
};

enum mr_mon_target_kind {
	MR_MON_TARGET_PROCESS,	/* virtual addresses of one process */
	MR_MON_TARGET_PHYS,	/* physical addresses */
	MR_MON_TARGET_NR,
};

struct mr_mon_target {
	enum mr_mon_target_kind kind;
	pid_t pid;			/* MR_MON_TARGET_PROCESS */
	uint64_t starttime_ticks;	/* the process's start time (/proc/PID/stat field
					 * 22), which an exec keeps and a later process
					 * with the same pid does not; 0: mr_mon_run reads
					 * it when it starts */
	bool started;			/* memreg started this process (record -- CMD): that is
					 * consent to change its kernel state (clear_refs) */
	struct mr_mon_region *regions;	/* sorted by address, never overlapping */
	size_t nr_regions;
	size_t cap_regions;
	size_t last_nr_regions;		/* after the previous split (DAMON's heuristic) */
};

struct mr_mon_ctx;

/*
 * One backend (like DAMON's struct damon_operations). Callbacks are static in
 * their own file; NULL means "not needed". All return 0 or -errno with mr_error set.
 *  selftest:   prove the interface works on this kernel, on a page of our own;
 *              -ENOTSUP (with the reason in mr_error) when it does not.
 *  init:       set up for ctx->target (after the core made the initial regions);
 *              called again, after cleanup, when the target execs.
 *  ranges:     the target's address ranges, sorted (default: /proc/PID/maps).
 *  prepare:    start a sampling interval (e.g. clear the accessed bits).
 *  check:      at the end of it, add 1 to nr_accesses of each region whose
 *              sampled page was accessed; return the max nr_accesses seen.
 *              -ESRCH: the target's address space is gone. The core tells an
 *              exit (the end, not an error) from an exec (the same process, a
 *              new program): after an exec it calls cleanup then init again, on
 *              fresh regions of the new mappings, so files opened on the old
 *              address space are opened anew, and monitoring goes on.
 *  snapshot:   for backends that aggregate themselves (the kernel's DAMON, a
 *              replayed file): fill the target's regions for this aggregation
 *              interval; the core then does no split/merge. 1 = no more data.
 *  cleanup:    undo everything init did (always called once init succeeded).
 */
struct mr_mon_ops {
	const char *name;
	const char *help;		/* a paragraph for --help */
	struct mr_mon_attrs default_attrs;
	bool process_only;		/* cannot monitor physical memory */
	bool needs_apply;		/* changes global kernel state: needs --apply */
	bool writes_target;		/* changes the target process's kernel state
					 * (clear_refs): needs mr_mon_target_consent() */
	int (*selftest)(struct mr_mon_ctx *ctx);
	int (*init)(struct mr_mon_ctx *ctx);
	int (*ranges)(struct mr_mon_ctx *ctx, struct mr_mon_range **ranges, size_t *nr);
	int (*prepare)(struct mr_mon_ctx *ctx);
	int (*check)(struct mr_mon_ctx *ctx, uint32_t *max_nr_accesses);
	int (*snapshot)(struct mr_mon_ctx *ctx);
	void (*cleanup)(struct mr_mon_ctx *ctx);
};

/* Called once per aggregation interval with the aggregated regions (after the
 * merge, before the reset, as DAMON's after_aggregation callback), and once more
 * for the last, partial interval when the target ends or monitoring stops inside
 * one (ctx->aggr_nr_samples says how many samples it holds). @time_us is since the
 * start of monitoring. Non-zero stops monitoring and is returned. */
typedef int (*mr_mon_snapshot_fn)(struct mr_mon_ctx *ctx, uint64_t time_us, void *arg);

struct mr_mon_ctx {
	const struct mr_mon_ops *ops;
	struct mr_mon_attrs attrs;
	struct mr_mon_target target;
	bool apply;			/* the command's --apply (backends that write global state) */
	bool selftest_passed;		/* set by whoever ran ops->selftest for this target
					 * kind (`auto`): mr_mon_run does not run it again */
	const char *replay_path;	/* the replay backend's source */
	uint64_t snapshot_time_us;	/* replay: the recorded time of the last snapshot */
	void *priv;			/* the backend's state */
	/* Random number in [lo, hi): DAMON's damon_rand(). Tests replace it. */
	uint64_t (*rand)(struct mr_mon_ctx *ctx, uint64_t lo, uint64_t hi);
	uint64_t rand_state;
	volatile sig_atomic_t *stop;	/* set by a signal handler: stop after this sample */
	uint64_t nr_samples;		/* statistics */
	/* Sampling intervals in the snapshot being reported to the snapshot callback:
	 * aggr_us / sample_us for a whole aggregation interval, fewer for the last,
	 * partial one. Backends that aggregate themselves (ops->snapshot) get the
	 * whole-interval count and may set another. */
	uint32_t aggr_nr_samples;
	double kernel_cpu_s;		/* CPU time of kernel threads doing the sampling (kdamond) */
};

/* "core.c" */
void mr_mon_ctx_init(struct mr_mon_ctx *ctx, const struct mr_mon_ops *ops);
void mr_mon_ctx_destroy(struct mr_mon_ctx *ctx);
/* Parse "sample_us,aggr_us,update_us,min,max" (empty fields keep the current value). */
int mr_mon_attrs_parse(const char *s, struct mr_mon_attrs *attrs);
int mr_mon_attrs_check(const struct mr_mon_attrs *attrs);
/* Set the target's regions to cover exactly @ranges (DAMON's damon_set_regions):
 * regions inside a range are kept (clipped), holes are filled with fresh regions,
 * regions outside every range are dropped. */
int mr_mon_set_ranges(struct mr_mon_target *t, const struct mr_mon_range *ranges, size_t nr);
/* Split each range evenly so the total is about @min_nr_regions (initial regions). */
int mr_mon_init_regions(struct mr_mon_target *t, const struct mr_mon_range *ranges,
			size_t nr, uint32_t min_nr_regions);
/* Age and merge neighbours whose nr_accesses differ by at most @threshold and
 * whose combined size is at most @sz_limit bytes (DAMON's merge). */
void mr_mon_merge_regions(struct mr_mon_target *t, uint32_t threshold, uint64_t sz_limit);
/* Split every region into @nr_subs pieces at random page-aligned points. */
int mr_mon_split_regions(struct mr_mon_ctx *ctx, unsigned nr_subs);
/* One aggregation interval's epilogue: merge (with ages), report, reset, split. */
int mr_mon_aggregate(struct mr_mon_ctx *ctx, uint32_t max_nr_accesses, uint64_t time_us,
		     mr_mon_snapshot_fn fn, void *arg);
/* Pick a fresh random page in every region (prepare_access_checks). */
void mr_mon_pick_sampling_addrs(struct mr_mon_ctx *ctx);
/* Monitor until the target ends, *ctx->stop is set or @fn returns non-zero.
 * Calls the backend's selftest (unless ctx->selftest_passed) and init first. A
 * process target ends when it exits or its pid belongs to another process (a start
 * time that differs); one that execs is followed into its new program: the samples
 * of the aggregation interval in progress go with the old address space, and
 * monitoring starts over on the new one (fresh regions, the backend's init again). */
int mr_mon_run(struct mr_mon_ctx *ctx, mr_mon_snapshot_fn fn, void *arg);
uint64_t mr_mon_now_us(void);

/* "maps.c" */
/* The mappings of @pid from /proc/PID/maps (through the root layer), adjacent ones
 * joined; PROT_NONE mappings and the kernel's special ones ([vsyscall], [vvar],
 * [vdso]) left out. */
int mr_mon_read_maps(pid_t pid, struct mr_mon_range **ranges, size_t *nr);
/* @t's start time from /proc/PID/stat, unless it has one (left 0 when it is gone). */
void mr_mon_target_read_starttime(struct mr_mon_target *t);
/* Is @t still the process monitoring began on: there and not a zombie, and with its
 * start time when that is known (else another process got the pid)? */
bool mr_mon_target_alive(const struct mr_mon_target *t);
/* Did @t exec? Asked when its address space is gone (a backend's check returned
 * -ESRCH): yes when the process is still @t (its start time known and unchanged)
 * and not exiting, which would leave it without an address space too. */
bool mr_mon_target_execd(const struct mr_mon_target *t);
/* Write @what to /proc/PID/clear_refs: "1" clears the accessed bits (refs), "4" the
 * soft-dirty bits (softdirty). Through the root layer's guard: -EROFS under a fixture
 * root, -EPERM without @consent (mr_mon_target_consent(), or true for our own pid). */
int mr_mon_clear_refs(pid_t pid, const char *what, bool consent);

/* "backend.c" */
const struct mr_mon_ops *mr_mon_backend_find(const char *name);
/* The registry in order of preference (best first). */
const struct mr_mon_ops *const *mr_mon_backends(size_t *nr);
/* May ctx change its target's kernel state? Yes for a process memreg started
 * (target.started) or with the command's --apply; never implied for a --pid. */
bool mr_mon_target_consent(const struct mr_mon_ctx *ctx);
/* 0 when ctx->ops may run with the consent ctx carries; else -EPERM with one line
 * naming --apply (needs_apply without it, writes_target without consent). */
int mr_mon_check_consent(const struct mr_mon_ctx *ctx);
/* For `auto`: the first backend whose selftest passes for @want's target kind and
 * whose consent check passes with @want's apply and target.started; reasons for the
 * ones passed over go to @why (may be NULL). */
const struct mr_mon_ops *mr_mon_backend_auto(const struct mr_mon_ctx *want, char *why,
					     size_t why_len);

extern const struct mr_mon_ops mr_mon_ops_refs;
extern const struct mr_mon_ops mr_mon_ops_softdirty;
extern const struct mr_mon_ops mr_mon_ops_uffd;
extern const struct mr_mon_ops mr_mon_ops_damon;
extern const struct mr_mon_ops mr_mon_ops_replay;
extern const struct mr_mon_ops mr_mon_ops_perf;

#endif
