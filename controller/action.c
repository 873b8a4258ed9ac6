/* The controller's actions (see action.h): migrate through mr_move_pid, the madvise
 * actions through process_madvise, and the load-time checks that refuse a scheme
 * the machine, the backend or the privileges cannot carry out. */
#include "config.h"

#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/proc.h"
#include "common/root.h"
#include "common/sys.h"
#include "common/util.h"
#include "controller/action.h"

#ifndef MADV_COLD
#define MADV_COLD 20
#endif
#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif

#define QUERY_BATCH_PAGES 4096u	/* pages per move_pages status query */

enum mr_act_sight mr_act_backend_sight(const char *name, const char *replayed_backend)
{
	if (name && strcmp(name, "replay") == 0)
		return mr_act_backend_sight(replayed_backend ? replayed_backend : "", NULL);
	if (!name)
		return MR_ACT_SEES_WRITES;
	if (strcmp(name, "damon") == 0 || strcmp(name, "perf") == 0)
		return MR_ACT_SEES_READS;
	if (strcmp(name, "refs") == 0)
		return MR_ACT_SEES_MAPPINGS;
	return MR_ACT_SEES_WRITES;	/* softdirty, uffd, and anything unknown */
}

bool mr_act_needs_reads(enum mr_scheme_action a)
{
	return a == MR_SCHEME_MIGRATE_COLD || a == MR_SCHEME_MIGRATE_HOT ||
	       a == MR_SCHEME_PAGEOUT || a == MR_SCHEME_COLD;
}

static bool is_madvise(enum mr_scheme_action a)
{
	return a == MR_SCHEME_PAGEOUT || a == MR_SCHEME_COLD || a == MR_SCHEME_WILLNEED;
}

unsigned mr_act_nr_nodes(const struct mr_region_map *map)
{
	unsigned n = 0, i, j;

	for (i = 0; i < map->nr_regions; i++) {
		int node = map->regions[i].node;

		if (node < 0)
			continue;
		for (j = 0; j < i && map->regions[j].node != node; j++)
			;
		if (j == i)
			n++;
	}
	return n;
}

static bool map_has_node(const struct mr_region_map *map, int node)
{
	const struct mr_region *r;

	mr_for_each_region(map, r)
		if (r->node == node)
			return true;
	return false;
}

/* A region whose memory blocks are all offline holds nothing and takes nothing:
 * memregd never targets it (arbitration with offline/evacuation). */
static bool region_offline(const struct mr_region *r)
{
	char path[96], state[32];
	unsigned i;

	if (!r->nr_blocks)
		return false;
	for (i = 0; i < r->nr_blocks; i++) {
		mr_pathf(path, sizeof(path), "/sys/devices/system/memory/memory%llu/state",
			 (unsigned long long)r->blocks[i]);
		if (mr_root_read_str(path, state, sizeof(state)) || strcmp(state, "offline"))
			return false;
	}
	return true;
}

/* The target node of a migration has an online region to receive the pages. */
static bool node_has_online_region(const struct mr_region_map *map, int node)
{
	const struct mr_region *r;

	mr_for_each_region(map, r)
		if (r->node == node && !region_offline(r))
			return true;
	return false;
}

/* CAP_SYS_NICE in the effective set: process_madvise of another process needs it. */
static bool have_cap_sys_nice(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = { { 0 } };

	if (syscall(SYS_capget, &h, d))
		return false;
	return d[CAP_SYS_NICE / 32].effective & (1u << (CAP_SYS_NICE % 32));
}

int mr_act_check_schemes(struct mr_scheme_set *set, const struct mr_region_map *map,
			 enum mr_act_sight sight, bool apply, char *note, size_t note_len)
{
	unsigned nodes = mr_act_nr_nodes(map);
	size_t i;

	if (note_len)
		note[0] = '\0';
	for (i = 0; i < set->nr; i++) {
		struct mr_scheme *s = &set->schemes[i];
		const char *act = mr_scheme_action_name(s->action);

		if (mr_act_needs_reads(s->action) && sight == MR_ACT_SEES_WRITES)
			return mr_error(-EINVAL, "scheme of line %u: %s needs a backend that sees "
					"reads per page (damon, perf, or a replay of their record); "
					"this one sees writes only, so a read-hot area would look cold",
					s->line, act);
		if (mr_act_needs_reads(s->action) && sight == MR_ACT_SEES_MAPPINGS && note_len)
			snprintf(note, note_len, "the refs backend sees one access count per "
				 "mapping: %s decides for whole mappings only", act);
		if (mr_scheme_action_migrates(s->action)) {
			if (nodes < 2)
				return mr_error(-EINVAL, "scheme of line %u: %s moves pages between "
						"NUMA nodes, and this machine has %u node%s with "
						"memory: nothing to move to", s->line, act, nodes,
						nodes == 1 ? "" : "s");
			if (s->target_region >= 0) {
				const struct mr_region *r;

				if ((unsigned)s->target_region >= map->nr_regions)
					return mr_error(-EINVAL, "scheme of line %u: no region %d "
							"(the map has %u)", s->line,
							s->target_region, map->nr_regions);
				r = &map->regions[s->target_region];
				if (r->node < 0)
					return mr_error(-EINVAL, "scheme of line %u: region %d is on "
							"no single NUMA node: move_pages needs one",
							s->line, s->target_region);
				if (region_offline(r))
					return mr_error(-EBUSY, "scheme of line %u: region %d is "
							"offline (its memory blocks are): the "
							"controller never targets an offline region",
							s->line, s->target_region);
				s->target_node = r->node;
			}
			if (!map_has_node(map, s->target_node))
				return mr_error(-EINVAL, "scheme of line %u: %s target node %d holds "
						"no memory region on this machine", s->line, act,
						s->target_node);
			if (!node_has_online_region(map, s->target_node))
				return mr_error(-EBUSY, "scheme of line %u: %s target node %d has only "
						"offline regions: the controller never targets an "
						"offline region", s->line, act, s->target_node);
		}
		if (apply && is_madvise(s->action) && !have_cap_sys_nice())
			return mr_error(-EPERM, "scheme of line %u: %s uses process_madvise, which "
					"needs CAP_SYS_NICE (and the ptrace read check on the "
					"target); this process does not have it", s->line, act);
	}
	return 0;
}

int mr_act_ctx_init(struct mr_act_ctx *a, const struct mr_region_map *map,
		    const struct mr_scheme_set *set, pid_t pid, bool phys, bool apply)
{
	int err;

	memset(a, 0, sizeof(*a));
	a->pidfd = -1;
	if (apply) {
		err = mr_root_may_change("apply schemes to a process", true);
		if (err)
			return err;
		if (phys || pid <= 0)
			return mr_error(-EINVAL, "the user engine acts on processes only: "
					"a replayed record or physical memory can only be a dry run");
	}
	a->map = map;
	a->pid = pid;
	a->phys = phys;
	a->apply = apply;
	a->schemes = set;
	a->page_bytes = (uint64_t)sysconf(_SC_PAGESIZE);
	a->acct = calloc(set->nr ? set->nr : 1, sizeof(*a->acct));
	if (!a->acct)
		return mr_error(-ENOMEM, "out of memory");
	return 0;
}

void mr_act_ctx_destroy(struct mr_act_ctx *a)
{
	if (a->pidfd >= 0)
		close(a->pidfd);
	a->pidfd = -1;
	free(a->acct);
	a->acct = NULL;
}

void mr_act_acct_reset(struct mr_act_ctx *a)
{
	memset(a->acct, 0, (a->schemes->nr ? a->schemes->nr : 1) * sizeof(*a->acct));
}

const char *mr_ctl_fail_name(enum mr_ctl_fail f)
{
	static const char *const names[NR_MR_CTL_FAILS] = {
		[MR_CTL_FAIL_BUSY] = "ebusy",
		[MR_CTL_FAIL_ACCESS] = "eacces",
		[MR_CTL_FAIL_NOMEM] = "enomem",
		[MR_CTL_FAIL_OTHER] = "other",
	};

	return (unsigned)f < NR_MR_CTL_FAILS ? names[f] : "?";
}

enum mr_ctl_fail mr_act_fail_of_errno(int err)
{
	switch (err < 0 ? -err : err) {
	case EBUSY: case EAGAIN: return MR_CTL_FAIL_BUSY;
	case EACCES: case EPERM: return MR_CTL_FAIL_ACCESS;
	case ENOMEM: return MR_CTL_FAIL_NOMEM;
	default: return MR_CTL_FAIL_OTHER;
	}
}

void mr_act_move_failures(const struct mr_move_stats *st, struct mr_ctl_result *res)
{
	uint64_t pb = st->page_bytes;

	res->failed_bytes[MR_CTL_FAIL_BUSY] += st->failed_busy * pb;
	res->failed_bytes[MR_CTL_FAIL_ACCESS] += st->failed_access * pb;
	res->failed_bytes[MR_CTL_FAIL_NOMEM] += st->failed_nomem * pb;
	/* ENOENT / EFAULT during the move: the page went away or was never there */
	res->failed_bytes[MR_CTL_FAIL_OTHER] +=
		(st->failed_other + st->failed_noent + st->failed_fault) * pb;
}

/* The index of @s in the scheme set, for the accounting. */
static size_t scheme_index(const struct mr_act_ctx *a, const struct mr_scheme *s)
{
	size_t i = (size_t)(s - a->schemes->schemes);

	return i < a->schemes->nr ? i : 0;
}

/*
 * Where the resident pages of [@start, @end) of the target are: @src_bytes per node
 * (move_pages with no nodes only asks). Physical addresses go through the region
 * map; a replayed virtual range has no pages to ask about: all unknown.
 * @present_bytes gets the bytes found resident (all of it when unknown).
 */
static int account_sources(struct mr_act_ctx *a, uint64_t start, uint64_t end,
			   uint64_t *src_bytes, uint64_t *present_bytes)
{
	void *pages[QUERY_BATCH_PAGES];
	int status[QUERY_BATCH_PAGES];
	uint64_t addr = start;

	*present_bytes = 0;
	if (a->phys) {
		while (addr < end) {
			const struct mr_region *r = mr_region_of_phys(a->map, addr);
			uint64_t next = 0;
			unsigned k;

			for (k = 0; r && k < r->nr_ranges; k++)
				if (addr >= r->ranges[k].start &&
				    addr - r->ranges[k].start < r->ranges[k].size)
					next = r->ranges[k].start + r->ranges[k].size;
			if (next <= addr)	/* a hole in the map: a page at a time */
				next = addr + a->page_bytes;
			if (next > end)
				next = end;
			src_bytes[r && r->node >= 0 ? (unsigned)r->node : MR_ACT_SRC_UNKNOWN] +=
				next - addr;
			*present_bytes += next - addr;
			addr = next;
		}
		return 0;
	}
	if (a->pid <= 0) {
		src_bytes[MR_ACT_SRC_UNKNOWN] += end - start;
		*present_bytes = end - start;
		return 0;
	}
	while (addr < end) {
		unsigned n = 0, i;

		for (; addr < end && n < QUERY_BATCH_PAGES; addr += a->page_bytes)
			pages[n++] = (void *)(uintptr_t)addr;
		if (mr_sys_move_pages(a->pid, n, pages, NULL, status, 0) < 0)
			return mr_error(-errno, "move_pages(pid %d, %u pages): %s", (int)a->pid, n,
					strerror(errno));
		for (i = 0; i < n; i++)
			if (status[i] >= 0 && status[i] < MR_MAX_NODES) {
				src_bytes[status[i]] += a->page_bytes;
				*present_bytes += a->page_bytes;
			}
	}
	return 0;
}

static int do_migrate(struct mr_act_ctx *a, const struct mr_scheme *s, uint64_t start,
		      uint64_t end, struct mr_ctl_result *res, uint64_t present_bytes,
		      const uint64_t *src_bytes)
{
	struct mr_move_opts o = { .pid = a->pid, .node = s->target_node, .start = start,
				  .end = end, .apply = true };
	struct mr_move_stats st;
	int err;

	if (!a->apply) {
		/* what would move: the resident pages not on the target node yet */
		res->applied_bytes = present_bytes;
		if (!a->phys && a->pid > 0)
			res->applied_bytes -= src_bytes[s->target_node];
		return 0;
	}
	err = mr_move_pid(&o, &st);
	if (err == -ESRCH || (err == -EINVAL && mr_proc_exiting(a->pid)))
		return -ESRCH;
	if (err) {	/* the whole call failed (the process went away, ...): count it */
		res->failed_bytes[mr_act_fail_of_errno(err)] += end - start;
		return 0;
	}
	res->applied_bytes = st.moved * st.page_bytes;
	mr_act_move_failures(&st, res);
	return 0;
}

static int madvise_advice(enum mr_scheme_action a)
{
	switch (a) {
	case MR_SCHEME_PAGEOUT: return MADV_PAGEOUT;
	case MR_SCHEME_COLD: return MADV_COLD;
	default: return MADV_WILLNEED;
	}
}

static int do_madvise(struct mr_act_ctx *a, const struct mr_scheme *s, uint64_t start,
		      uint64_t end, struct mr_ctl_result *res, uint64_t present_bytes)
{
	struct iovec iov = { .iov_base = (void *)(uintptr_t)start, .iov_len = end - start };
	long r;

	if (!a->apply) {
		res->applied_bytes = s->action == MR_SCHEME_WILLNEED ? end - start : present_bytes;
		return 0;
	}
	if (a->pidfd < 0) {
		a->pidfd = mr_sys_pidfd_open(a->pid, 0);
		if (a->pidfd < 0) {
			res->failed_bytes[mr_act_fail_of_errno(errno)] += end - start;
			return errno == ESRCH ? -ESRCH : 0;
		}
	}
	r = mr_sys_process_madvise(a->pidfd, &iov, 1ul, madvise_advice(s->action), 0u);
	if (r < 0) {
		int e = errno;

		if ((e == EPERM || e == EACCES) && !a->warned_eperm) {
			a->warned_eperm = true;
			fprintf(stderr, "memreg: process_madvise(pid %d, %s) refused: %s (needs "
				"CAP_SYS_NICE and the ptrace read check on the target)\n",
				(int)a->pid, mr_scheme_action_name(s->action), strerror(e));
		}
		res->failed_bytes[mr_act_fail_of_errno(e)] += end - start;
		return e == ESRCH ? -ESRCH : 0;
	}
	res->applied_bytes = (uint64_t)r < end - start ? (uint64_t)r : end - start;
	if ((uint64_t)r < end - start)
		res->failed_bytes[MR_CTL_FAIL_OTHER] += end - start - (uint64_t)r;
	return 0;
}

int mr_act_apply(void *arg, const struct mr_scheme *s, uint64_t start, uint64_t end,
		 struct mr_ctl_result *res)
{
	struct mr_act_ctx *a = arg;
	struct mr_act_acct *acct = &a->acct[scheme_index(a, s)];
	uint64_t src[MR_MAX_NODES + 1] = { 0 }, present = 0;
	unsigned k;
	int err;

	acct->regions++;
	if (s->action == MR_SCHEME_STAT) {	/* counts only: what it matched */
		acct->bytes += end - start;
		return 0;
	}
	err = account_sources(a, start, end, src, &present);
	/* An exiting process has released its memory before it becomes a zombie:
	 * move_pages says EINVAL for it then, and that is the end too. */
	if (err == -ESRCH || err == -ENOENT || (err == -EINVAL && mr_proc_exiting(a->pid)))
		return -ESRCH;	/* the target ended: the run is over */
	if (err)
		return err;
	if (mr_scheme_action_migrates(s->action))
		err = do_migrate(a, s, start, end, res, present, src);
	else
		err = do_madvise(a, s, start, end, res, present);
	if (err)
		return err;
	acct->bytes += res->applied_bytes;
	for (k = 0; k <= MR_MAX_NODES; k++) {
		/* a migration's pages already on the target are not part of what it does */
		if (mr_scheme_action_migrates(s->action) && k == (unsigned)s->target_node &&
		    !a->phys && a->pid > 0)
			continue;
		acct->src_bytes[k] += src[k];
	}
	return 0;
}
