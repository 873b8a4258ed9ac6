/* The controller's actions: what a scheme does to the regions the engine picked,
 * through regions/' move_pages primitive and process_madvise, with the checks that
 * decide at load time whether a scheme may run at all (backend, nodes, privileges). */
#ifndef MR_CONTROLLER_ACTION_H
#define MR_CONTROLLER_ACTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "controller/engine.h"
#include "controller/scheme.h"
#include "regions/placement.h"
#include "regions/region.h"

/* What a monitoring backend sees, which decides the actions it may drive. */
enum mr_act_sight {
	MR_ACT_SEES_READS,	/* per page, reads too: damon, perf, a replay of theirs */
	MR_ACT_SEES_MAPPINGS,	/* one number per mapping (refs): whole mappings only */
	MR_ACT_SEES_WRITES,	/* writes only (softdirty, uffd): a read-hot area looks cold */
	NR_MR_ACT_SIGHTS,
};

/* Source index for bytes whose node is not known (replayed virtual addresses). */
#define MR_ACT_SRC_UNKNOWN MR_MAX_NODES

/*
 * struct mr_act_acct - what one scheme did (or, in a dry run, would do) in one
 * aggregation interval: @regions regions, @bytes bytes, split by the node the pages
 * were on (@src_bytes[MR_ACT_SRC_UNKNOWN]: not known). Pages are @bytes / page size.
 */
struct mr_act_acct {
	uint64_t regions;
	uint64_t bytes;
	uint64_t src_bytes[MR_MAX_NODES + 1];
};

/*
 * struct mr_act_ctx - the actions' state, the engine's callback argument.
 * @map:	the region map (region:N targets, the node of physical addresses).
 * @pid:	the target process; 0 when there is none (a replayed record).
 * @phys:	the regions' addresses are physical (a paddr record replayed).
 * @apply:	act; otherwise only count (the dry run). The caller sets it from
 *		--apply (mr_root_may_change has been asked by mr_act_ctx_init).
 * @schemes:	the scheme set the engine runs (its index names a scheme).
 * @acct:	per scheme, this aggregation interval; mr_act_acct_reset clears it.
 * @page_bytes:	the base page size.
 */
struct mr_act_ctx {
	const struct mr_region_map *map;
	pid_t pid;
	bool phys;
	bool apply;
	const struct mr_scheme_set *schemes;
	struct mr_act_acct *acct;
	uint64_t page_bytes;
	int pidfd;			/* for process_madvise, opened on first use */
	bool warned_eperm;		/* the one message of a refused process_madvise */
};

/* "action.c" */

/* What backend @name sees; @replayed_backend is the record's backend for "replay". */
enum mr_act_sight mr_act_backend_sight(const char *name, const char *replayed_backend);
/* Does scheme action @a need a backend that sees reads per page? */
bool mr_act_needs_reads(enum mr_scheme_action a);

/*
 * Check every scheme of @set against the machine and the backend, before anything
 * runs: migrate targets resolved (region:N to its node, written into the scheme),
 * a migrate scheme refused on a machine with one node and a target node the map
 * does not have; migrate/pageout/cold refused on a backend that sees writes only;
 * madvise actions refused when @apply and the process lacks CAP_SYS_NICE. 0, or
 * -EINVAL / -EPERM with one line naming the scheme's line and the reason.
 * @note gets a remark to print (refs: whole mappings), "" if none.
 */
int mr_act_check_schemes(struct mr_scheme_set *set, const struct mr_region_map *map,
			 enum mr_act_sight sight, bool apply, char *note, size_t note_len);
/* Number of NUMA nodes that hold regions in @map. */
unsigned mr_act_nr_nodes(const struct mr_region_map *map);

/* Set up @a for @set; with @apply, asks mr_root_may_change (refused under a fixture
 * root). 0 or -errno. */
int mr_act_ctx_init(struct mr_act_ctx *a, const struct mr_region_map *map,
		    const struct mr_scheme_set *set, pid_t pid, bool phys, bool apply);
void mr_act_ctx_destroy(struct mr_act_ctx *a);
void mr_act_acct_reset(struct mr_act_ctx *a);
/* The engine's mr_ctl_apply_fn; @arg is a struct mr_act_ctx. */
int mr_act_apply(void *arg, const struct mr_scheme *s, uint64_t start, uint64_t end,
		 struct mr_ctl_result *res);

/* Helpers the actions use, exposed for tests. */
/* A move's per-page outcome as bytes not moved by reason. */
void mr_act_move_failures(const struct mr_move_stats *st, struct mr_ctl_result *res);
/* An errno of process_madvise as a failure reason. */
enum mr_ctl_fail mr_act_fail_of_errno(int err);
const char *mr_ctl_fail_name(enum mr_ctl_fail f);

#endif
