/* Placement primitives on top of the region map: where a process's pages live
 * (pagemap.c), moving them to a region's node (move.c), and taking a region's memory
 * blocks offline and back online with a record that survives a crash (blocks.c).
 *
 * Reads go through the root-directory layer; nothing changes the kernel's state unless
 * the caller passes apply (the command's --apply), and never under a fixture root. */
#ifndef MR_REGIONS_PLACEMENT_H
#define MR_REGIONS_PLACEMENT_H

#include <stdbool.h>
#include <stdint.h>

#include "regions/region.h"

#define MR_MAX_NODES 1024

/* ---------------------------------------------------------------- "pagemap.c" */

enum mr_where_source {
	MR_WHERE_PAGEMAP,	/* physical frames from /proc/PID/pagemap (needs root) */
	MR_WHERE_NUMA_MAPS,	/* per-node page counts from /proc/PID/numa_maps */
};

/*
 * struct mr_where - resident bytes of one process, by region and by node.
 * @region_bytes:	per region id (map->nr_regions entries). Under NUMA_MAPS only
 *			filled for nodes that hold a single region.
 * @node_bytes:		per NUMA node (both sources).
 * @unplaced_bytes:	resident bytes in no region (pagemap), or on a node with
 *			several regions or none (numa_maps: see @node_bytes).
 * @total_bytes:	all resident bytes counted.
 */
struct mr_where {
	enum mr_where_source source;
	uint64_t *region_bytes;
	unsigned nr_regions;
	uint64_t node_bytes[MR_MAX_NODES];
	uint64_t unplaced_bytes;
	uint64_t total_bytes;
};

/* Decode one pagemap entry: true if present with a frame number (0 without
 * CAP_SYS_ADMIN), the frame in @pfn. */
bool mr_pagemap_entry_pfn(uint64_t entry, uint64_t *pfn);
/* Decode one pagemap entry: true if the page is present, its frame in @pfn, which
 * is 0 when the kernel hides frames (readers without CAP_SYS_ADMIN). */
bool mr_pagemap_entry_present(uint64_t entry, uint64_t *pfn);
/*
 * Parse one numa_maps line: adds the bytes of every "N<node>=<pages>" field (pages of
 * kernelpagesize_kB, 4 KiB if absent) to @node_bytes. 0, or -EINVAL on a malformed
 * field (the caller names the file).
 */
int mr_numa_maps_parse_line(const char *line, uint64_t node_bytes[MR_MAX_NODES]);
/*
 * Walk @pid's pagemap over its mappings (/proc/PID/maps) clipped to [@lo, @hi):
 * one pread per MR_PAGEMAP_CHUNK entries, never one per page, and unmapped holes
 * never read. With MR_PAGEMAP_SKIP_PROT_NONE, PROT_NONE mappings (reservations,
 * guard areas: nothing there can be accessed) are skipped too. @fn gets each
 * chunk: @nr entries for the pages from @vaddr on; non-zero from it stops the walk
 * and is returned. 0 or -errno (mr_error set). A fixture's pagemap may end early:
 * the walk stops there. A live one that ends early belonged to an address space
 * that is gone: the process exited or exec'd during the walk, -ESRCH (what @fn was
 * given is then only part of it).
 */
#define MR_PAGEMAP_CHUNK 4096u		/* entries per pread: 32 KiB */
#define MR_PAGEMAP_SKIP_PROT_NONE 1u
typedef int (*mr_pagemap_chunk_fn)(uint64_t vaddr, const uint64_t *entries, size_t nr,
				   void *arg);
int mr_pagemap_walk(int pid, uint64_t lo, uint64_t hi, unsigned flags,
		    mr_pagemap_chunk_fn fn, void *arg);
/* Resident bytes of @pid by region: pagemap when its frames are visible, numa_maps
 * otherwise. 0 or -errno (mr_error set). Free with mr_where_destroy. */
int mr_where_pid(const struct mr_region_map *map, int pid, struct mr_where *w);
void mr_where_destroy(struct mr_where *w);
const char *mr_where_source_name(enum mr_where_source s);

/* ---------------------------------------------------------------- "move.c" */

/*
 * struct mr_move_opts - what to move where.
 * @start, @end:	virtual address range [start, end); both 0 means every mapping.
 * @batch_pages:	pages per move_pages call (0: 65536).
 * @busy_retries:	times a page reported -EBUSY is retried (0: 5).
 * @apply:		move; otherwise only count what would move.
 * @region:		NULL, or only the pages whose frame lies in this region (the
 *			pre-move of an evacuation): found with pagemap, so frames must be
 *			visible (CAP_SYS_ADMIN; -EPERM otherwise).
 */
struct mr_move_opts {
	int pid;
	int node;
	uint64_t start, end;
	unsigned batch_pages;
	unsigned busy_retries;
	bool apply;
	const struct mr_region *region;
};

/*
 * struct mr_move_stats - per-page outcome, in pages of @page_bytes.
 * @pages:		pages looked at (in mappings).
 * @absent:		not present or the zero page (-ENOENT / -EFAULT when asked where).
 * @already:		on the target node before the move.
 * @to_move:		present elsewhere: what a move would migrate.
 * @moved:		on the target node after the move.
 * @busy_retried:	page-times retried after -EBUSY.
 * @failed_busy, @failed_access, @failed_noent, @failed_fault, @failed_nomem,
 * @failed_other:	pages left where they were: still -EBUSY after the retries,
 *			-EACCES (mapped by other processes), -ENOENT, -EFAULT, -ENOMEM,
 *			anything else (@last_other_errno).
 * @elapsed_ns:		time in move_pages calls that moved pages.
 */
struct mr_move_stats {
	uint64_t page_bytes;
	uint64_t pages, absent, already, to_move, moved;
	uint64_t busy_retried;
	uint64_t failed_busy, failed_access, failed_noent, failed_fault, failed_nomem,
		 failed_other;
	int last_other_errno;
	uint64_t elapsed_ns;
};

/* Move (or with !apply, count) the pages of @o->pid to @o->node through
 * mr_sys_move_pages. 0 or -errno for a failure of the whole operation (mr_error
 * set); per-page failures are counted in @st, not returned. */
int mr_move_pid(const struct mr_move_opts *o, struct mr_move_stats *st);
uint64_t mr_move_failed_pages(const struct mr_move_stats *st);
/* Automatic NUMA balancing on (/proc/sys/kernel/numa_balancing != 0)? */
bool mr_numa_balancing_on(void);

/* ---------------------------------------------------------------- "blocks.c" */

enum mr_block_action { MR_BLOCK_OFFLINE, MR_BLOCK_ONLINE };

/* The zone a block was online in when memreg took it, so it comes back there. */
enum mr_block_zone {
	MR_ZONE_UNKNOWN,	/* not taken by memreg: brought back Movable */
	MR_ZONE_MOVABLE,	/* online_movable */
	MR_ZONE_KERNEL,		/* online_kernel (Normal, DMA32, ...) */
	NR_MR_ZONES
};

#define MR_BLOCK_TAG_LEN 24
#define MR_BLOCK_NOTES 8

/*
 * struct mr_block_plan - the memory blocks to change, in the order they change.
 * @zones:	per block, the zone to online it in (ONLINE plans; NULL: Movable).
 * @skipped:	blocks of the region already in the wanted state.
 * @not_ours:	offline blocks memreg did not take (left alone without --all).
 * @tag:	offline: tags the state-file entries (a plan's id), "" for none.
 * @notes:	what the state file said that was not acted on (a bad line, an entry
 *		of an earlier boot), one line each, for the command to print.
 */
struct mr_block_plan {
	enum mr_block_action action;
	uint64_t *blocks;
	enum mr_block_zone *zones;
	unsigned nr_blocks;
	unsigned skipped;
	unsigned not_ours;
	char tag[MR_BLOCK_TAG_LEN];
	char notes[MR_BLOCK_NOTES][256];
	unsigned nr_notes;
};

/*
 * Plan taking @r's blocks offline. Refuses (-EBUSY / -EINVAL, mr_error naming the
 * block) when a block is not in the region by its physical address, or is online in
 * a zone other than Movable: only Movable blocks empty reliably.
 */
int mr_offline_plan(const struct mr_region_map *map, const struct mr_region *r,
		    struct mr_block_plan *plan);
/* Plan bringing @r's offline blocks back online: those the state file says memreg
 * took in this boot, each to its zone; with @all every offline block (the others
 * Movable). */
int mr_online_plan(const struct mr_region_map *map, const struct mr_region *r, bool all,
		   struct mr_block_plan *plan);
/* Plan bringing back what the state file records as offlined by memreg in this boot
 * (@tag NULL), or only the entries tagged @tag (a plan's id). Newest first. */
int mr_restore_plan(struct mr_block_plan *plan, const char *tag);
void mr_block_plan_destroy(struct mr_block_plan *plan);
/* The sysfs state to write to online a block in @zone: "online_movable" or
 * "online_kernel", never plain "online" (whose zone the kernel picks). */
const char *mr_block_zone_online(enum mr_block_zone zone);

/*
 * struct mr_block_ops - how a block's state is changed; the default writes
 * /sys/devices/system/memory/memoryN/state. Tests inject their own.
 * @set_state:	"offline", "online_movable" or "online_kernel"; 0 or -errno. A
 *		write interrupted at the deadline returns -EINTR.
 * @done:	optional, called after each block changed (or failed: @err), for a
 *		command's line per block.
 */
struct mr_block_ops {
	int (*set_state)(uint64_t block, const char *state, uint64_t deadline_ns, void *ctx);
	void *ctx;
	void (*done)(uint64_t block, const char *state, int err, unsigned nr_done,
		     unsigned nr_blocks, void *ctx);
};
/* The default writer (/sys/devices/system/memory/memoryN/state), for callers that
 * wrap it. */
extern const struct mr_block_ops mr_block_sysfs_ops;

/*
 * struct mr_block_result - what happened.
 * @done:	blocks changed (and kept changed).
 * @rolled_back: blocks offlined then brought back online after a failure.
 * @failed_block: the block that failed (valid when the call failed), else UINT64_MAX.
 */
struct mr_block_result {
	unsigned done;
	unsigned rolled_back;
	uint64_t failed_block;
	uint64_t elapsed_ns;
};

/*
 * Carry out @plan. Offline: each block is recorded in the state file before it is
 * written, so a crash leaves it known; on a failure or at @timeout_ns (0: none) the
 * blocks this call offlined go back online, in reverse order, and the error is
 * returned; each entry records the block's zone and @plan->tag. Online: each block
 * to its zone (online_movable / online_kernel, never plain online), stopping at the
 * first write that fails; a block brought back leaves the state file. Holds the
 * state-file lock (-EBUSY when another process has it). Refuses without @apply
 * (-EPERM) and under a fixture root (-EROFS). @ops NULL: sysfs.
 */
int mr_block_plan_apply(const struct mr_block_plan *plan, uint64_t timeout_ns, bool apply,
			const struct mr_block_ops *ops, struct mr_block_result *res);

/* Drop from the state file the blocks that are not offline (a crash between recording
 * a block and offlining it). Needs @apply; never under a fixture root. */
int mr_block_state_prune(bool apply);

/*
 * The state file: MEMREG_STATE_DIR/offline.state, default LOCALSTATEDIR/lib/memreg
 * (the configured localstatedir), a Linux path resolved through the root layer like
 * every other (under a fixture root, inside it). Returns the host path. One line a
 * block: "memoryN boot=BOOT_ID zone=Movable|kernel plan=ID|-".
 */
const char *mr_block_state_path(void);

/*
 * One writer at a time: an exclusive flock on the state file's ".lock" beside it,
 * held by mr_block_plan_apply and mr_block_state_prune and by callers that change
 * several regions in one go (nested calls just count). Never waits: -EBUSY with a
 * line naming the holder's pid when another process has it.
 */
int mr_block_state_lock(void);
void mr_block_state_unlock(void);

/* struct mr_block_entry - one state-file line. @this_boot: recorded in this boot. */
struct mr_block_entry {
	uint64_t block;
	char boot_id[48];
	enum mr_block_zone zone;
	char tag[MR_BLOCK_TAG_LEN];
	bool this_boot;
};
/* Every valid entry, in file order; bad lines and other boots' entries are said in
 * @notes (up to MR_BLOCK_NOTES, may be NULL). Free *@e with free(). */
int mr_block_state_entries(struct mr_block_entry **e, unsigned *nr,
			   char notes[][256], unsigned *nr_notes);

uint64_t mr_now_ns(void);

#endif
