/* Schemes: access pattern -> action, in DAMOS's text format (one pattern line,
 * optionally followed by indented "key value" lines), parsed into plain structs.
 * The engine that applies them lives beside this file. */
#ifndef MR_CONTROLLER_SCHEME_H
#define MR_CONTROLLER_SCHEME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum mr_scheme_action {
	MR_SCHEME_MIGRATE_COLD,	/* move to the target node (cold data out of hot regions) */
	MR_SCHEME_MIGRATE_HOT,	/* move to the target node (hot data in) */
	MR_SCHEME_PAGEOUT,	/* reclaim (process_madvise MADV_PAGEOUT) */
	MR_SCHEME_COLD,		/* deactivate (MADV_COLD) */
	MR_SCHEME_WILLNEED,	/* MADV_WILLNEED */
	MR_SCHEME_STAT,		/* count only */
	NR_MR_SCHEME_ACTIONS,
};

/*
 * struct mr_scheme_freq - an access-frequency bound: a share of the maximum the
 * monitoring attributes allow (@permille, "5%" is 50), or a count of accesses per
 * aggregation interval ("3acc"), as @is_count says.
 */
struct mr_scheme_freq {
	bool is_count;
	uint32_t value;
};

enum mr_scheme_filter_type {
	MR_SCHEME_FILTER_MEMCG,	/* pages of a cgroup v2 (@memcg_path) */
	MR_SCHEME_FILTER_ANON,	/* anonymous pages */
	MR_SCHEME_FILTER_ADDR,	/* pages in [@start, @end) */
	NR_MR_SCHEME_FILTERS,
};

struct mr_scheme_filter {
	enum mr_scheme_filter_type type;
	bool allow;		/* allow: only matching pages; reject: all but them */
	char memcg_path[256];
	uint64_t start;
	uint64_t end;
};

#define MR_SCHEME_MAX_FILTERS 8

/*
 * struct mr_scheme - one scheme.
 * @min_size_bytes..@max_age_us:	the access pattern; UINT64_MAX (or the
 *		largest frequency) for "max", 0 for "min". Ages in microseconds.
 * @action, @target_node, @target_region: what to do; a migration targets a node
 *		(@target_region -1), or a region (@target_node -1 until the region map
 *		resolves it); -1 both for the other actions.
 * @quota_bytes, @quota_ms, @quota_reset_us: at most @quota_bytes and @quota_ms of
 *		work per @quota_reset_us (0: no such quota); one reset interval.
 * @weight_size, @weight_freq, @weight_age: DAMOS's prioritisation weights.
 * @wmark_*: free_mem_rate watermarks in per-mille, checked every
 *		@wmark_interval_us; @has_wmarks false means always active.
 * @line: the pattern line in its source, for messages.
 */
struct mr_scheme {
	uint64_t min_size_bytes;
	uint64_t max_size_bytes;
	struct mr_scheme_freq min_freq;
	struct mr_scheme_freq max_freq;
	uint64_t min_age_us;
	uint64_t max_age_us;
	enum mr_scheme_action action;
	int target_node;
	int target_region;
	uint64_t quota_bytes;
	uint64_t quota_ms;
	uint64_t quota_reset_us;
	unsigned weight_size;
	unsigned weight_freq;
	unsigned weight_age;
	bool has_wmarks;
	uint64_t wmark_interval_us;
	unsigned wmark_high_permille;
	unsigned wmark_mid_permille;
	unsigned wmark_low_permille;
	struct mr_scheme_filter filters[MR_SCHEME_MAX_FILTERS];
	unsigned nr_filters;
	unsigned line;
};

struct mr_scheme_set {
	struct mr_scheme *schemes;
	size_t nr;
};

/* "scheme.c" */

/*
 * Parse @text (the contents of a schemes file, or one --scheme argument) named
 * @source in messages. On error returns -EINVAL with mr_error set to one line
 * "SOURCE:LINE:COLUMN: what is wrong", and @set untouched. Free with
 * mr_scheme_set_free.
 */
int mr_scheme_parse(const char *text, const char *source, struct mr_scheme_set *set);
void mr_scheme_set_free(struct mr_scheme_set *set);
const char *mr_scheme_action_name(enum mr_scheme_action a);
/* Whether @a moves pages between nodes (and so needs a machine with two). */
bool mr_scheme_action_migrates(enum mr_scheme_action a);

#endif
