/* The scheme engine: DAMOS's semantics over memreg's monitoring regions. On each
 * aggregation every active scheme picks the regions its pattern matches, ranks them
 * by DAMOS's priority score when a quota could be exceeded, and applies its action
 * through a callback until the quota is spent; watermarks switch schemes on and off. */
#ifndef MR_CONTROLLER_ENGINE_H
#define MR_CONTROLLER_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "controller/scheme.h"
#include "monitor/monitor.h"

/* Why bytes were not moved (move_pages statuses and process_madvise errors). */
enum mr_ctl_fail {
	MR_CTL_FAIL_BUSY,	/* -EBUSY: pinned or under writeback, retried and still busy */
	MR_CTL_FAIL_ACCESS,	/* -EACCES / -EPERM: not allowed */
	MR_CTL_FAIL_NOMEM,	/* -ENOMEM: no room on the destination */
	MR_CTL_FAIL_OTHER,
	NR_MR_CTL_FAILS,
};

/* DAMOS's statistics of one scheme, plus bytes not moved by reason. */
struct mr_scheme_stats {
	uint64_t nr_tried;
	uint64_t sz_tried;
	uint64_t nr_applied;
	uint64_t sz_applied;
	uint64_t qt_exceeds;	/* reset intervals that ended with the quota spent */
	uint64_t failed_bytes[NR_MR_CTL_FAILS];
};

/* What one action call did. */
struct mr_ctl_result {
	uint64_t applied_bytes;
	uint64_t failed_bytes[NR_MR_CTL_FAILS];
};

/*
 * Apply @s's action to [@start, @end) of the target; fill @res. Return 0, or -errno
 * for a failure of the whole call (the engine stops and returns it).
 */
typedef int (*mr_ctl_apply_fn)(void *arg, const struct mr_scheme *s, uint64_t start,
			       uint64_t end, struct mr_ctl_result *res);
/* The watermark metric: free memory in per-mille of all memory. */
typedef int (*mr_ctl_metric_fn)(void *arg, unsigned *free_permille);
/* A monotonic clock, nanoseconds (tests give their own). */
typedef uint64_t (*mr_ctl_clock_fn)(void *arg);

/* The engine's state of one scheme. */
struct mr_scheme_state {
	const struct mr_scheme *scheme;
	bool active;			/* by the watermarks (always, without them) */
	uint64_t next_wmark_us;		/* next watermark check */
	uint64_t charged_from_us;	/* start of the quota's reset interval */
	uint64_t charged_bytes;		/* charged in this interval */
	uint64_t esz_bytes;		/* effective size quota; UINT64_MAX: none */
	uint64_t total_charged_bytes;	/* over the whole run: the measured apply rate */
	uint64_t total_charged_ns;
	unsigned min_score;		/* regions scoring below wait (quota) */
	struct mr_scheme_stats stats;
};

struct mr_ctl {
	struct mr_mon_attrs attrs;	/* sample_us and aggr_us give nr_accesses' scale */
	struct mr_scheme_state *states;
	size_t nr_states;
	mr_ctl_apply_fn apply;
	mr_ctl_metric_fn metric;	/* needed only by schemes with watermarks */
	mr_ctl_clock_fn clock;		/* NULL: CLOCK_MONOTONIC */
	void *arg;			/* for the three callbacks */
	size_t cur_target;		/* during @apply: the index of the target whose
					 * region it is (mr_ctl_aggregate_targets) */
};

/* One target's regions for mr_ctl_aggregate_targets (address order). */
struct mr_ctl_target_regions {
	struct mr_mon_region *regions;
	size_t nr;
};

#define MR_CTL_ALL_TARGETS ((size_t)-1)

/* DAMOS's score range and its subscores' (mm/damon: DAMOS_MAX_SCORE etc.). */
#define MR_SCHEME_MAX_SCORE 99

/* "engine.c" */

/* The schemes of @set (kept by the caller) under @attrs, no statistics yet. */
int mr_ctl_init(struct mr_ctl *c, const struct mr_scheme_set *set,
		const struct mr_mon_attrs *attrs);
void mr_ctl_destroy(struct mr_ctl *c);
/*
 * One aggregation interval ending at @now_us over the regions of one target
 * (address order). A region an action was applied to gets age 0, as in DAMOS.
 * 0, or the first -errno of the apply or metric callbacks.
 */
int mr_ctl_aggregate(struct mr_ctl *c, struct mr_mon_region *regions, size_t nr,
		     uint64_t now_us);
/*
 * The same over several targets, as DAMOS does for a context's targets: each
 * scheme's quota is one, charged by every target, and its priority threshold (the
 * score histogram) is taken over the regions of all @targets. Actions are applied
 * to the regions of @targets[@acting] only (MR_CTL_ALL_TARGETS: to all, in target
 * order, as a kdamond walks them), so a caller whose targets aggregate at their own
 * times passes every target's latest regions and acts on the one that aggregated.
 */
int mr_ctl_aggregate_targets(struct mr_ctl *c, struct mr_ctl_target_regions *targets,
			     size_t nr_targets, size_t acting, uint64_t now_us);
/* Does @r match @s's access pattern under @attrs? */
bool mr_scheme_matches(const struct mr_scheme *s, const struct mr_mon_region *r,
		       const struct mr_mon_attrs *attrs);
/* DAMOS's hotness score of @r, 0..MR_SCHEME_MAX_SCORE, with @s's weights; a cold
 * action ranks by MR_SCHEME_MAX_SCORE minus it. */
unsigned mr_scheme_hot_score(const struct mr_scheme *s, const struct mr_mon_region *r,
			     const struct mr_mon_attrs *attrs);
/* The score by which @s ranks @r: hot for migrate_hot and willneed, cold otherwise. */
unsigned mr_scheme_score(const struct mr_scheme *s, const struct mr_mon_region *r,
			 const struct mr_mon_attrs *attrs);

#endif
