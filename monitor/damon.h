/* The damon backend's safety check, exported so tests can prove it refuses. */
#ifndef MR_MONITOR_DAMON_H
#define MR_MONITOR_DAMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "monitor/monitor.h"

/* "backend-damon.c" */
/* 0 when DAMON exists and nobody uses it: nr_kdamonds reads 0, no kdamond thread
 * in /proc, and damon_reclaim / damon_lru_sort / damon_stat are not enabled.
 * -EBUSY when in use, -ENOTSUP without DAMON; @why says which. Reads only. */
int mr_mon_damon_check_free(char *why, size_t len);
/* Join the ranges (sorted, apart) across their narrowest gaps until at most @limit
 * remain: the mappings given to DAMON as regions never exceed what it may split. */
int mr_mon_damon_coalesce(struct mr_mon_range *ranges, size_t *nr, size_t limit);

/* "damon-trace.c": the damon:damon_aggregated tracepoint, one event per region at
 * the end of every aggregation (include/trace/events/damon.h, 6.12):
 * "target_id=%lu nr_regions=%u %lu-%lu: %u %u" (start-end: nr_accesses age). */
struct mr_mon_damon_trace_rec {
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
 * events, a region out of order, nr_regions changing) is dropped. */
struct mr_mon_damon_trace_agg {
	struct mr_mon_region *cur, *last;	/* the one being read, the last complete */
	size_t nr_cur, cap_cur, nr_last, cap_last;
	uint32_t cur_nr_regions;
	uint64_t nr_complete;			/* complete aggregations so far */
	uint64_t nr_dropped;			/* incomplete runs dropped */
	char line[512];				/* a line split across reads */
	size_t line_len;
};

void mr_mon_damon_trace_agg_init(struct mr_mon_damon_trace_agg *agg);
void mr_mon_damon_trace_agg_destroy(struct mr_mon_damon_trace_agg *agg);
/* Feed raw trace_pipe bytes (any split). 0 or -errno (-ENOMEM, -EINVAL). */
int mr_mon_damon_trace_feed(struct mr_mon_damon_trace_agg *agg, const char *data, size_t len);

#endif
