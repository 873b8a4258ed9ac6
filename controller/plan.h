/* The evacuation planner: which regions can be emptied, what each costs (bytes to
 * move, blockers, seconds) and what it saves, as a versioned plan (memreg-plan(5))
 * tied to the machine and boot it was made on. memregctl plan and evacuate are thin
 * layers over it. */
#ifndef MR_CONTROLLER_PLAN_H
#define MR_CONTROLLER_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "power/model.h"
#include "regions/placement.h"
#include "regions/region.h"

/* The plan file's format version, and the oldest a reader takes (version 1 has no
 * pre-move: its regions are emptied by the offline alone). */
#define MR_PLAN_VERSION 2
#define MR_PLAN_VERSION_MIN 1

enum mr_plan_goal {
	MR_PLAN_GOAL_NONE,	/* rank every region, select none */
	MR_PLAN_GOAL_FREE,	/* select until this many bytes are free */
	MR_PLAN_GOAL_REGIONS,	/* select this many regions */
	MR_PLAN_GOAL_POWER,	/* select until the modelled saving reaches this many watts */
	NR_MR_PLAN_GOALS,
};

/* Why a region cannot be emptied. Each one set keeps the region out of a plan. */
enum mr_plan_blocker {
	MR_BLOCKER_NO_BLOCKS,	/* no whole memory block, or the machine exports none */
	MR_BLOCKER_STATE,	/* a block neither online nor offline, or unreadable */
	MR_BLOCKER_ZONE,	/* a block's valid_zones is not Movable ("none": spans zones) */
	MR_BLOCKER_UNMOVABLE,	/* unmovable pages counted in the region (kpageflags) */
	MR_BLOCKER_HUGETLB,	/* hugetlb pages in use in the region (or on its node) */
	MR_BLOCKER_BOUND,	/* processes bound to the node (numa_maps bind:, cpuset.mems) */
	MR_BLOCKER_NO_ROOM,	/* the other nodes the kernel may use lack the free memory */
	MR_BLOCKER_OFFLINE,	/* already offline: nothing to gain */
	MR_BLOCKER_ORDER,	/* its destination would be emptied later, and the reverse too */
	NR_MR_BLOCKERS,
};
const char *mr_plan_blocker_name(enum mr_plan_blocker b);

/* struct mr_plan_dest - @bytes of a region's movable pages expected on @node. */
struct mr_plan_dest {
	int node;
	int distance;
	uint64_t bytes;
};

/*
 * struct mr_plan_proc - a process with @bytes mapped in a region when planned (its
 * pagemap; numa_maps where the region is its node's only one and frames are hidden),
 * known by pid and start time so that a later process reusing the pid is left alone.
 */
struct mr_plan_proc {
	int pid;
	uint64_t starttime_ticks;
	char comm[20];
	uint64_t bytes;
};

#define MR_PLAN_MAX_DESTS 16
#define MR_PLAN_REASON_LEN 200

/*
 * struct mr_plan_region - one region's cost and saving.
 * @move_bytes:		movable bytes the kernel migrates when the blocks go offline.
 * @anon_bytes, @file_bytes: @move_bytes by kind when @kinds_known (kpageflags).
 * @blockers:		bit mask of (1 << MR_BLOCKER_*); 0 means the region can go.
 * @reasons:		one line per blocker set, in MR_BLOCKER_* order.
 * @seconds:		@move_bytes / the move rate; < 0 when the rate is unknown.
 * @now_mw:		modelled power today: at the record's residency, else at standby.
 * @noaccess_mw:	with no accesses at all: the lowest state the platform enters by
 *			itself, or @now_mw when it enters none (no saving).
 * @saving_mw:		@now_mw - @noaccess_mw.
 * @rank:		1 = the best candidate; blocked regions rank after the others.
 * @order:		0 when not selected, else its place (1, 2, ...) in the evacuation.
 * @premove_node:	the pre-move of a selected region: before its blocks go offline,
 *			the pages of @procs mapped in the region are moved there with
 *			move_pages (locality: one node the operator chose, or the nearest
 *			with room, instead of wherever the kernel puts them); -1 for none,
 *			@premove_note says why.
 * @premove_bytes:	what @procs have mapped in the region, at most @move_bytes; part
 *			of @move_bytes (in @dests under @premove_node).
 */
struct mr_plan_region {
	unsigned id;
	int node;
	uint64_t size_bytes;
	uint64_t *blocks;		/* the region's online blocks, to go offline */
	unsigned nr_blocks;
	uint64_t move_bytes, anon_bytes, file_bytes, free_bytes, unmovable_bytes,
		 hugetlb_bytes;
	bool kinds_known;
	unsigned blockers;
	char reasons[NR_MR_BLOCKERS][MR_PLAN_REASON_LEN];
	struct mr_plan_dest dests[MR_PLAN_MAX_DESTS];
	unsigned nr_dests;
	double seconds;
	double now_mw, noaccess_mw, saving_mw;
	int low_state;			/* the model's low_state (-2: none self-entered) */
	unsigned rank;
	unsigned order;
	int premove_node;
	uint64_t premove_bytes;
	struct mr_plan_proc *procs;
	unsigned nr_procs;
	char premove_note[MR_PLAN_REASON_LEN];
};

/* struct mr_plan_block - a block's state when the plan was made (the machine check). */
struct mr_plan_block {
	uint64_t block;
	char state[16];
	char zones[48];
};

/* An MPST problem that --apply refuses unless --force names its kind. */
struct mr_plan_warning {
	char kind[16];		/* "checksum", "disabled", "overlap", "reserved", "table" */
	char text[256];
};

#define MR_PLAN_ID_LEN 17	/* 16 hex digits and the NUL */

/*
 * struct mr_plan - a plan and the machine it was made for.
 * @regions:	every region of the map, best candidate first (by @rank).
 * @boot_id:	/proc/sys/kernel/random/boot_id, "" when the root has none (fixture).
 * @mpst_hash:	"fnv1a64:<16 hex>" of the MPST table's bytes, "" without MPST.
 * @mpst_file:	the --mpst FILE the map came from, "" for the root's table.
 * @move_rate_bytes_per_s: 0 when unknown (no measurement, no --move-rate).
 */
struct mr_plan {
	unsigned version;
	char id[MR_PLAN_ID_LEN];
	char boot_id[48];
	char mpst_hash[32];
	char mpst_file[256];
	char source[16];
	uint64_t created_s;
	uint64_t block_size_bytes;
	enum mr_plan_goal goal;
	uint64_t goal_bytes;
	unsigned goal_regions;
	double goal_mw;
	uint64_t move_rate_bytes_per_s;
	char move_rate_from[160];
	int premove_to;			/* --to NODE, -1: each region's nearest with room */
	char residency_from[300];	/* "" without a record: savings at standby */
	struct mr_plan_region *regions;
	unsigned nr_regions;
	struct mr_plan_block *blocks;
	unsigned nr_blocks;
	struct mr_plan_warning *warnings;
	unsigned nr_warnings;
	char notes[12][300];
	unsigned nr_notes;
	/* Totals of the selected regions. */
	unsigned nr_selected;
	uint64_t selected_bytes, selected_move_bytes;
	double selected_seconds, selected_saving_mw;
	bool goal_met;
};

/*
 * struct mr_plan_opts - what to plan for.
 * @residency:	per-region residency from a physical record, NULL for none.
 * @move_rate_bytes_per_s: from --move-rate or mr_plan_measure_rate(); 0 unknown.
 * @scan_processes: look for processes bound to nodes under the root's /proc, and
 *		for those with pages in the selected regions (their pre-move).
 * @to_set, @to_node: pre-move to @to_node (--to NODE); refused (-ENOSPC) when it
 *		lacks the room, (-EINVAL) when it has no online memory or the plan
 *		empties a region on it. Unset: each region's nearest node with room.
 */
struct mr_plan_opts {
	enum mr_plan_goal goal;
	uint64_t goal_bytes;
	unsigned goal_regions;
	double goal_mw;
	const struct mr_residency *residency;
	uint64_t move_rate_bytes_per_s;
	const char *move_rate_from;
	const char *mpst_file;
	bool scan_processes;
	bool to_set;
	int to_node;
};

/* The text said with every saving, in tables and JSON alike. */
#define MR_PLAN_SAVING_CAVEAT "DRAM devices only (standby, refresh, accesses): I/O, " \
	"termination and register power are left out; offline memory is still refreshed"
/* Said in every plan: pins cannot be seen from user space. */
#define MR_PLAN_PIN_CAVEAT "pinned pages are invisible from user space: long-term pins " \
	"are migrated out of ZONE_MOVABLE when taken, short-term pins make the offline " \
	"retry until its time limit"

/* "plan.c" */
/*
 * Plan over @map (discovered with occupancy) and @model (of the same map; NULL: no
 * savings). Reads block states, the boot id, the MPST table and (with
 * @o->scan_processes) /proc through the root layer; changes nothing. 0 or -errno
 * (mr_error set); free with mr_plan_destroy().
 */
int mr_plan_make(const struct mr_region_map *map, const struct mr_power_model *model,
		 const struct mr_plan_opts *o, struct mr_plan *plan);
void mr_plan_destroy(struct mr_plan *plan);

/* The plan as memreg-plan(5) JSON (a json_object *), and written to @path atomically. */
struct json_object *mr_plan_to_json(const struct mr_plan *plan);
int mr_plan_write(const struct mr_plan *plan, const char *path);
/* Read a plan file; -EINVAL for a bad file, -EPROTO for a version outside
 * MR_PLAN_VERSION_MIN..MR_PLAN_VERSION. */
int mr_plan_read(const char *path, struct mr_plan *plan);
/*
 * Is @plan for this machine and boot? Compares the boot id, the MPST hash of @map's
 * source and the state of every block of the selected regions with the root's now.
 * 0, or -ESTALE with mr_error saying what differs.
 */
int mr_plan_check_machine(const struct mr_plan *plan, const char *mpst_file);

/* The MPST problems of @map (warnings, disabled and overlapping power nodes) into
 * @out (up to @max); returns how many. */
unsigned mr_plan_mpst_warnings(const struct mr_region_map *map, struct mr_plan_warning *out,
			       unsigned max);
/*
 * --apply on a table with warnings: 0 when every warning's kind is named in @forced
 * (a comma-separated list, NULL for none), else -EPERM naming the first one not.
 */
int mr_plan_check_forced(const struct mr_plan_warning *w, unsigned nr, const char *forced);

/*
 * The guard of every --apply that offlines or onlines (plan, evacuate, offline,
 * online): with @apply, -EPERM when @mpst_file is set on the live machine (a table
 * from a file describes some other machine's regions), or when a warning of @w is
 * not accepted by @forced (mr_plan_check_forced). 0 without @apply.
 */
int mr_plan_guard_apply(const struct mr_plan_warning *w, unsigned nr, const char *mpst_file,
			bool apply, const char *forced);

/* Time a move_pages of @bytes of this process's own memory from @from to @to; the
 * rate in bytes/s, and how in @from_text. -errno when it cannot be measured. */
int mr_plan_measure_rate(int from, int to, uint64_t bytes, uint64_t *rate_bytes_per_s,
			 char *from_text, size_t len);
/*
 * The offline rate memregctl evacuate measured in this boot: kept beside the state
 * file ("move-rate": boot id, bytes, nanoseconds), so the next plan's time comes from
 * how fast this machine really took memory offline, not from move_pages alone.
 * mr_plan_rate_save() after an evacuation (needs the state-file lock's consent:
 * never under a fixture root); mr_plan_rate_load() -ENOENT when there is none for
 * this boot.
 */
int mr_plan_rate_save(uint64_t bytes, uint64_t elapsed_ns);
int mr_plan_rate_load(uint64_t *rate_bytes_per_s, char *from_text, size_t len);

/*
 * struct mr_plan_evacuation - a running `memregctl evacuate --apply`, from its marker
 * ("evacuating" beside the state file: pid, its start time, boot id, plan id, the
 * plan's selected regions), so that a controller never targets those regions
 * (arbitration). Written when the evacuation starts, removed when it ends; a marker
 * left by a killed evacuation names a dead process (or another boot) and is ignored.
 */
#define MR_PLAN_EVAC_MAX_REGIONS 64
struct mr_plan_evacuation {
	long pid;
	uint64_t starttime_ticks;
	char plan[MR_PLAN_ID_LEN];
	unsigned regions[MR_PLAN_EVAC_MAX_REGIONS];
	unsigned nr_regions;
};
/* Write the marker for this process and the @n regions @plan->regions[@idx[i]]
 * (atomically; needs the state-file lock's consent, never under a fixture root). */
int mr_plan_evacuation_begin(const struct mr_plan *plan, const unsigned *idx, unsigned n);
/* Remove this process's marker. */
void mr_plan_evacuation_end(void);
/*
 * Is an evacuation running? 1 with @ev filled when the marker names this boot and a
 * live process (the same one: pid and start time); 0 when there is no marker or it is
 * stale; -errno (mr_error) for an unreadable or malformed one. Read through the root.
 */
int mr_plan_evacuation_running(struct mr_plan_evacuation *ev);
bool mr_plan_evacuation_has(const struct mr_plan_evacuation *ev, unsigned region);

/* The selected regions in evacuation order: @plan->regions indices, count returned. */
unsigned mr_plan_order(const struct mr_plan *plan, unsigned *idx, unsigned max);

#endif
