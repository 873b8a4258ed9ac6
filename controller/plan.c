/* The evacuation planner (plan.h): per region, bytes to move and blockers, where the
 * kernel sends the pages, the time at a measured move rate and the honest saving;
 * which regions to empty for a goal, in an order that never fills a region the plan
 * empties later; and the machine the plan is for. Reads only, through the root layer. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "common/proc.h"
#include "common/root.h"
#include "common/sys.h"
#include "common/util.h"
#include "controller/plan.h"
#include "power/energy.h"

#define NODE_DIR "/sys/devices/system/node"
#define BLOCK_DIR "/sys/devices/system/memory"
#define MAX_NODES 256

/* /proc/kpageflags bits (include/uapi/linux/kernel-page-flags.h). */
#define KPF_LRU		5
#define KPF_ANON	12
#define KPF_HUGE	17

static const char *const blocker_names[NR_MR_BLOCKERS] = {
	[MR_BLOCKER_NO_BLOCKS] = "no-blocks",
	[MR_BLOCKER_STATE] = "block-state",
	[MR_BLOCKER_ZONE] = "not-movable",
	[MR_BLOCKER_UNMOVABLE] = "unmovable",
	[MR_BLOCKER_HUGETLB] = "hugetlb",
	[MR_BLOCKER_BOUND] = "bound-processes",
	[MR_BLOCKER_NO_ROOM] = "no-room",
	[MR_BLOCKER_OFFLINE] = "offline",
	[MR_BLOCKER_ORDER] = "order",
};

const char *mr_plan_blocker_name(enum mr_plan_blocker b)
{
	return b < NR_MR_BLOCKERS ? blocker_names[b] : "?";
}

static void MR_PRINTF(3, 4) block_region(struct mr_plan_region *pr, enum mr_plan_blocker b,
					 const char *fmt, ...)
{
	va_list ap;

	if (pr->blockers & (1u << b))
		return;		/* the first reason of a kind is the one said */
	pr->blockers |= 1u << b;
	va_start(ap, fmt);
	vsnprintf(pr->reasons[b], sizeof(pr->reasons[b]), fmt, ap);
	va_end(ap);
}

static void MR_PRINTF(2, 3) plan_note(struct mr_plan *plan, const char *fmt, ...)
{
	va_list ap;

	if (plan->nr_notes >= MR_ARRAY_SIZE(plan->notes))
		return;
	va_start(ap, fmt);
	vsnprintf(plan->notes[plan->nr_notes++], sizeof(plan->notes[0]), fmt, ap);
	va_end(ap);
}

void mr_plan_destroy(struct mr_plan *plan)
{
	unsigned i;

	for (i = 0; i < plan->nr_regions; i++) {
		free(plan->regions[i].blocks);
		free(plan->regions[i].procs);
	}
	free(plan->regions);
	free(plan->blocks);
	free(plan->warnings);
	memset(plan, 0, sizeof(*plan));
}

/* ---------------------------------------------------------------- the machine */

static void read_boot_id(char *buf, size_t len)
{
	if (mr_root_read_str("/proc/sys/kernel/random/boot_id", buf, len))
		buf[0] = '\0';
	mr_clear_error();
}

/* FNV-1a over the table's bytes: a table edited, replaced or from another machine
 * gives another value (the ACPI checksum byte alone would not tell). */
static int mpst_hash(const char *mpst_file, char *out, size_t len)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	char *data = NULL;
	size_t n = 0, i;
	int ret;

	out[0] = '\0';
	if (mpst_file && *mpst_file) {
		FILE *f = fopen(mpst_file, "rb");
		int c;

		if (!f)
			return mr_error(-errno, "%s: %s", mpst_file, strerror(errno));
		while ((c = getc(f)) != EOF && n < (64u << 20)) {
			h = (h ^ (uint8_t)c) * UINT64_C(0x100000001b3);
			n++;
		}
		fclose(f);
	} else {
		ret = mr_root_read_file("/sys/firmware/acpi/tables/MPST", 64u << 20, &data, &n);
		if (ret == -ENOENT) {
			mr_clear_error();
			return 0;
		}
		if (ret)
			return ret;
		for (i = 0; i < n; i++)
			h = (h ^ (uint8_t)data[i]) * UINT64_C(0x100000001b3);
		free(data);
	}
	snprintf(out, len, "fnv1a64:%016" PRIx64, h);
	return 0;
}

static int block_file(uint64_t block, const char *file, char *buf, size_t len)
{
	char path[128];

	return mr_root_read_str(mr_pathf(path, sizeof(path), BLOCK_DIR "/memory%" PRIu64 "/%s",
					 block, file), buf, len);
}

static void new_plan_id(char id[MR_PLAN_ID_LEN])
{
	uint64_t r = 0;

	if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
		r = mr_now_ns() ^ ((uint64_t)getpid() << 32);
	snprintf(id, MR_PLAN_ID_LEN, "%016" PRIx64, r);
}

/* ---------------------------------------------------------------- MPST warnings */

static void add_warning(struct mr_plan_warning *out, unsigned max, unsigned *n,
			const char *kind, const char *text)
{
	if (*n < max) {
		snprintf(out[*n].kind, sizeof(out[*n].kind), "%s", kind);
		snprintf(out[*n].text, sizeof(out[*n].text), "%s", text);
	}
	(*n)++;
}

unsigned mr_plan_mpst_warnings(const struct mr_region_map *map, struct mr_plan_warning *out,
			       unsigned max)
{
	const struct mr_region *r;
	unsigned i, n = 0;
	char text[256];

	if (map->source != MR_SOURCE_MPST)
		return 0;
	for (i = 0; i < map->nr_warnings; i++) {
		const char *w = map->warnings[i];
		const char *kind = strstr(w, "checksum") ? "checksum" :
				   strstr(w, "reserved") ? "reserved" : "table";

		add_warning(out, max, &n, kind, w);
	}
	for (i = 0; i < map->nr_notes; i++)
		if (strstr(map->notes[i], " overlap"))
			add_warning(out, max, &n, "overlap", map->notes[i]);
	mr_for_each_region(map, r)
		if (r->mpst_node_id >= 0 && !(r->mpst_flags & MR_MPST_ENABLED)) {
			snprintf(text, sizeof(text), "MPST: power node %d (region %u) is not enabled",
				 r->mpst_node_id, r->id);
			add_warning(out, max, &n, "disabled", text);
		}
	return n < max ? n : max;
}

int mr_plan_check_forced(const struct mr_plan_warning *w, unsigned nr, const char *forced)
{
	unsigned i;

	for (i = 0; i < nr; i++) {
		const char *p = forced;
		size_t k = strlen(w[i].kind);
		bool ok = false;

		while (p && *p) {
			const char *comma = strchr(p, ',');
			size_t len = comma ? (size_t)(comma - p) : strlen(p);

			if (len == k && strncmp(p, w[i].kind, k) == 0)
				ok = true;
			p = comma ? comma + 1 : NULL;
		}
		if (!ok)
			return mr_error(-EPERM, "the MPST table has a warning (%s): %s; refusing "
					"--apply unless --force %s accepts it", w[i].kind,
					w[i].text, w[i].kind);
	}
	return 0;
}

int mr_plan_guard_apply(const struct mr_plan_warning *w, unsigned nr, const char *mpst_file,
			bool apply, const char *forced)
{
	if (!apply)
		return 0;
	if (mpst_file && *mpst_file && !mr_root_is_fixture())
		return mr_error(-EPERM, "--mpst %s is not this machine's table: refusing --apply "
				"on the live machine (its regions may not be where the file "
				"says)", mpst_file);
	return mr_plan_check_forced(w, nr, forced);
}

/* ---------------------------------------------------------------- per-region facts */

/* Movable pages by kind and hugetlb pages of @r, from /proc/kpageflags. */
static int scan_kinds(const struct mr_region *r, struct mr_plan_region *pr)
{
	uint64_t flags[4096];
	unsigned i;
	int fd = mr_root_open("/proc/kpageflags", O_RDONLY);

	if (fd < 0) {
		mr_clear_error();
		return fd;
	}
	for (i = 0; i < r->nr_ranges; i++) {
		uint64_t pfn = r->ranges[i].start / 4096, end = pfn + r->ranges[i].size / 4096;

		while (pfn < end) {
			uint64_t want = end - pfn < 4096 ? end - pfn : 4096, j;
			long got = mr_root_pread(fd, flags, want * 8, pfn * 8);

			if (got <= 0)
				break;
			for (j = 0; j < (uint64_t)got / 8; j++) {
				uint64_t f = flags[j];

				if (f & (UINT64_C(1) << KPF_HUGE))
					pr->hugetlb_bytes += 4096;
				else if (f & (UINT64_C(1) << KPF_ANON))
					pr->anon_bytes += 4096;
				else if (f & (UINT64_C(1) << KPF_LRU))
					pr->file_bytes += 4096;
			}
			pfn += (uint64_t)got / 8;
		}
	}
	mr_sys_close(fd);
	pr->kinds_known = true;
	return 0;
}

/* Hugetlb pages in use on @node (all sizes), bytes. */
static uint64_t node_hugetlb_bytes(int node)
{
	char path[160], dname[600];
	uint64_t total = 0;
	struct dirent *d;
	DIR *dir;

	mr_pathf(path, sizeof(path), NODE_DIR "/node%d/hugepages", node);
	dir = mr_root_opendir(path);
	if (!dir) {
		mr_clear_error();
		return 0;
	}
	while ((d = readdir(dir))) {
		uint64_t kb, nr, nfree;

		if (sscanf(d->d_name, "hugepages-%" SCNu64 "kB", &kb) != 1)
			continue;
		snprintf(dname, sizeof(dname), "%s/%s/nr_hugepages", path, d->d_name);
		if (mr_root_read_u64(dname, &nr))
			continue;
		snprintf(dname, sizeof(dname), "%s/%s/free_hugepages", path, d->d_name);
		if (mr_root_read_u64(dname, &nfree))
			nfree = 0;
		if (nr > nfree)
			total += (nr - nfree) * kb * 1024;
	}
	closedir(dir);
	mr_clear_error();
	return total;
}

/* Node lists: "0-2,5". */
static bool list_has(const char *list, int node)
{
	static int ids[MAX_NODES];
	unsigned nr, i;

	if (mr_energy_parse_cpulist(list, ids, MAX_NODES, &nr)) {
		mr_clear_error();
		return false;
	}
	for (i = 0; i < nr; i++)
		if (ids[i] == node)
			return true;
	return false;
}

/* Processes bound to a node: bound[node] counts them, who[node] names a few. */
struct bound {
	unsigned count[MAX_NODES];
	char who[MAX_NODES][120];
};

static void bound_add(struct bound *b, int node, int pid, const char *comm, const char *how)
{
	size_t len;

	if (node < 0 || node >= MAX_NODES)
		return;
	if (b->count[node]++ >= 3)
		return;
	len = strlen(b->who[node]);
	snprintf(b->who[node] + len, sizeof(b->who[node]) - len, "%s%d (%s, %s)",
		 len ? ", " : "", pid, comm, how);
}

static void scan_processes(const bool *want, const char *mem_nodes, struct bound *b)
{
	struct dirent *d;
	DIR *proc = mr_root_opendir("/proc");

	if (!proc) {
		mr_clear_error();
		return;
	}
	while ((d = readdir(proc))) {
		char path[300], comm[64] = "?", *data = NULL, *line, *save = NULL;
		bool hit[MAX_NODES] = { false };
		size_t len;
		int pid = atoi(d->d_name), n;

		if (pid <= 0)
			continue;
		mr_root_read_str(mr_pathf(path, sizeof(path), "/proc/%d/comm", pid), comm,
				 sizeof(comm));
		if (!mr_root_read_file(mr_pathf(path, sizeof(path), "/proc/%d/numa_maps", pid),
				       64u << 20, &data, &len)) {
			for (line = strtok_r(data, "\n", &save); line;
			     line = strtok_r(NULL, "\n", &save)) {
				char *bind = strstr(line, " bind:"), *end;

				if (!bind)
					continue;
				bind += 6;
				end = strchr(bind, ' ');
				if (end)
					*end = '\0';
				for (n = 0; n < MAX_NODES; n++)
					if (want[n] && !hit[n] && list_has(bind, n)) {
						hit[n] = true;
						bound_add(b, n, pid, comm, "numa_maps bind:");
					}
			}
			free(data);
		}
		/* cpuset.mems: a set narrower than every node with memory binds. */
		if (mem_nodes && *mem_nodes) {
			char cg[256], mems[256];

			if (!mr_root_read_str(mr_pathf(path, sizeof(path), "/proc/%d/cpuset", pid),
					      cg, sizeof(cg)) &&
			    !mr_root_read_str(mr_pathf(path, sizeof(path),
						       "/sys/fs/cgroup%s/cpuset.mems.effective",
						       strcmp(cg, "/") ? cg : ""), mems, sizeof(mems)) &&
			    strcmp(mems, mem_nodes) != 0)
				for (n = 0; n < MAX_NODES; n++)
					if (want[n] && !hit[n] && list_has(mems, n)) {
						hit[n] = true;
						bound_add(b, n, pid, comm, "cpuset.mems");
					}
		}
		mr_clear_error();
	}
	closedir(proc);
}

/* Distance from @from to every node (the distance file's columns are the online
 * nodes in order); -1 where unknown. */
static void read_distances(int from, int dist[MAX_NODES])
{
	static int ids[MAX_NODES];
	char path[96], online[256], row[1024], *p, *end;
	unsigned nr = 0, i;

	for (i = 0; i < MAX_NODES; i++)
		dist[i] = -1;
	if (from < 0 || mr_root_read_str(NODE_DIR "/online", online, sizeof(online)) ||
	    mr_energy_parse_cpulist(online, ids, MAX_NODES, &nr) ||
	    mr_root_read_str(mr_pathf(path, sizeof(path), NODE_DIR "/node%d/distance", from),
			     row, sizeof(row))) {
		mr_clear_error();
		return;
	}
	for (p = row, i = 0; i < nr; i++, p = end) {
		long v = strtol(p, &end, 10);

		if (end == p)
			break;
		if (ids[i] >= 0 && ids[i] < MAX_NODES)
			dist[ids[i]] = (int)v;
	}
}

/* ---------------------------------------------------------------- placement */

struct sim {
	const struct mr_region_map *map;
	struct mr_plan *plan;
	int dist[MAX_NODES][MAX_NODES];		/* filled for the nodes of regions */
	bool has_dist[MAX_NODES];
	bool node_mem[MAX_NODES];		/* nodes with an online region */
};

static int node_dist(struct sim *s, int from, int to)
{
	if (from < 0 || from >= MAX_NODES || to < 0 || to >= MAX_NODES)
		return -1;
	if (!s->has_dist[from]) {
		read_distances(from, s->dist[from]);
		s->has_dist[from] = true;
	}
	return s->dist[from][to];
}

/*
 * Where @sel's regions' pages go, taken in the order given: the kernel migrates an
 * offlined block's pages to other nodes with memory, nearest first (its own node only
 * when no other has memory). Room on a node is the free memory of its regions that stay
 * online, less what earlier regions sent there. Fills each region's dests; returns the
 * index in @sel of the first region that does not fit, or @n when all do.
 */
static unsigned place(struct sim *s, const unsigned *sel, unsigned n)
{
	uint64_t room[MAX_NODES] = { 0 };
	bool selected[4096] = { false };
	unsigned i, k, nr_mem = 0;
	int node;

	for (i = 0; i < n; i++)
		if (s->plan->regions[sel[i]].id < 4096)
			selected[s->plan->regions[sel[i]].id] = true;
	for (i = 0; i < s->plan->nr_regions; i++) {
		const struct mr_plan_region *pr = &s->plan->regions[i];

		if (pr->node >= 0 && pr->node < MAX_NODES && pr->id < 4096 && !selected[pr->id] &&
		    !(pr->blockers & (1u << MR_BLOCKER_OFFLINE)))
			room[pr->node] += pr->free_bytes;
	}
	for (node = 0; node < MAX_NODES; node++)
		nr_mem += s->node_mem[node];
	for (i = 0; i < n; i++) {
		struct mr_plan_region *pr = &s->plan->regions[sel[i]];
		int order[MAX_NODES], nr = 0, a, b;
		uint64_t left = pr->move_bytes;

		pr->nr_dests = 0;
		for (node = 0; node < MAX_NODES; node++)
			if (s->node_mem[node] && (node != pr->node || nr_mem == 1))
				order[nr++] = node;
		/* Nearest first, then by node id (insertion sort: few nodes). */
		for (a = 1; a < nr; a++)
			for (b = a; b > 0; b--) {
				int da = node_dist(s, pr->node, order[b - 1]);
				int db = node_dist(s, pr->node, order[b]);

				if ((unsigned)da <= (unsigned)db)
					break;
				k = (unsigned)order[b];
				order[b] = order[b - 1];
				order[b - 1] = (int)k;
			}
		for (a = 0; a < nr && left; a++) {
			uint64_t take = room[order[a]] < left ? room[order[a]] : left;

			if (!take || pr->nr_dests >= MR_PLAN_MAX_DESTS)
				continue;
			pr->dests[pr->nr_dests++] = (struct mr_plan_dest){
				.node = order[a], .distance = node_dist(s, pr->node, order[a]),
				.bytes = take };
			room[order[a]] -= take;
			left -= take;
		}
		if (left) {
			uint64_t total = 0;

			for (a = 0; a < nr; a++)
				total += room[order[a]];
			for (k = 0; k < pr->nr_dests; k++)
				total += pr->dests[k].bytes;
			pr->nr_dests = 0;
			block_region(pr, MR_BLOCKER_NO_ROOM, "%" PRIu64 " MiB to move, but the "
				     "nodes the kernel may use (%s) have %" PRIu64 " MiB free",
				     pr->move_bytes >> 20, nr ? "other nodes with memory" : "none",
				     total >> 20);
			return i;
		}
	}
	return n;
}

static bool sends_to(const struct mr_plan_region *pr, int node)
{
	unsigned k;

	for (k = 0; k < pr->nr_dests; k++)
		if (pr->dests[k].node == node)
			return true;
	return false;
}

/*
 * Order @sel so that a region whose node receives pages from another is emptied
 * before it (its pages then never land in a region emptied later). A stable
 * topological sort; false on a cycle.
 */
static bool order_selection(struct sim *s, unsigned *sel, unsigned n)
{
	unsigned out[4096], done = 0, i, j;
	bool used[4096] = { false };

	if (n > 4096)
		return false;
	while (done < n) {
		bool progress = false;

		for (i = 0; i < n; i++) {
			const struct mr_plan_region *pr = &s->plan->regions[sel[i]];
			bool ready = true;

			if (used[i])
				continue;
			/* Every unplaced region on a node @pr sends to goes first. */
			for (j = 0; j < n && ready; j++)
				if (j != i && !used[j] &&
				    sends_to(pr, s->plan->regions[sel[j]].node))
					ready = false;
			if (ready) {
				out[done++] = sel[i];
				used[i] = true;
				progress = true;
				break;
			}
		}
		if (!progress)
			return false;
	}
	memcpy(sel, out, n * sizeof(*sel));
	return true;
}

/* Place and order @sel (n regions); true when they all fit in a valid order. */
static bool try_selection(struct sim *s, unsigned *sel, unsigned n, bool *cycle)
{
	unsigned again;

	*cycle = false;
	if (place(s, sel, n) != n)
		return false;
	if (!order_selection(s, sel, n)) {
		*cycle = true;
		return false;
	}
	/* Room is taken in the new order: place again and check the order holds. */
	if (place(s, sel, n) != n)
		return false;
	for (again = 0; again < n; again++) {
		unsigned j;

		for (j = again + 1; j < n; j++)
			if (sends_to(&s->plan->regions[sel[again]], s->plan->regions[sel[j]].node)) {
				*cycle = true;
				return false;
			}
	}
	return true;
}

/* ---------------------------------------------------------------- power */

static void region_power(const struct mr_power_model *m, const struct mr_residency *res,
			 struct mr_plan_region *pr)
{
	const struct mr_region_power *p;

	pr->low_state = -2;
	if (!m || pr->id >= m->nr_regions)
		return;
	p = &m->regions[pr->id];
	pr->low_state = p->low_state;
	pr->now_mw = p->active_mw;	/* standby: online, no residency known */
	if (res && res->scope != MR_RESIDENCY_NONE && pr->id < res->nr_regions &&
	    res->regions[pr->id].intervals) {
		const struct mr_residency_region *rr = &res->regions[pr->id];
		double low = (double)rr->idle_intervals / (double)rr->intervals;
		double span_us = (double)rr->intervals * (double)res->interval_us;

		pr->now_mw = p->active_mw * (1 - low) + p->low_mw * low;
		/* nJ per us is mW. */
		if (span_us > 0)
			pr->now_mw += (double)rr->accesses * p->access_nj / span_us;
	}
	/* An idle online region reaches the self-entered state by itself; with none,
	 * emptying the region saves nothing. */
	pr->noaccess_mw = p->low_state != -2 && p->low_mw < pr->now_mw ? p->low_mw : pr->now_mw;
	pr->saving_mw = pr->now_mw - pr->noaccess_mw;
}

/* ---------------------------------------------------------------- making a plan */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static enum mr_plan_goal rank_goal;

/* Candidates first; then cheapest first (fewest bytes to move, the best saving on a
 * tie) or, for a power goal, the best saving first (the fewest bytes on a tie). */
static int cmp_rank(const void *a, const void *b)
{
	const struct mr_plan_region *x = a, *y = b;
	bool bx = x->blockers != 0, by = y->blockers != 0;

	if (bx != by)
		return bx ? 1 : -1;
	if (rank_goal == MR_PLAN_GOAL_POWER && x->saving_mw != y->saving_mw)
		return x->saving_mw > y->saving_mw ? -1 : 1;
	if (x->move_bytes != y->move_bytes)
		return x->move_bytes < y->move_bytes ? -1 : 1;
	if (x->saving_mw != y->saving_mw)
		return x->saving_mw > y->saving_mw ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static bool goal_met(const struct mr_plan_opts *o, unsigned n, uint64_t bytes, double mw)
{
	switch (o->goal) {
	case MR_PLAN_GOAL_FREE: return bytes >= o->goal_bytes;
	case MR_PLAN_GOAL_REGIONS: return n >= o->goal_regions;
	case MR_PLAN_GOAL_POWER: return mw >= o->goal_mw;
	default: return true;
	}
}

static int region_facts(const struct mr_region_map *map, const struct mr_region *r,
			struct mr_plan *plan, struct mr_plan_region *pr)
{
	unsigned i, offline = 0;
	int ret;

	pr->id = r->id;
	pr->node = r->node;
	pr->size_bytes = r->size_bytes;
	pr->free_bytes = r->occ.free_bytes;
	pr->move_bytes = r->occ.movable_bytes;
	pr->unmovable_bytes = r->occ.unmovable_bytes;
	pr->seconds = -1;
	if (!map->block_size_bytes || !r->nr_blocks)
		block_region(pr, MR_BLOCKER_NO_BLOCKS, "%s",
			     map->block_size_bytes ? "the region holds no whole memory block"
			     : "this machine exports no memory blocks");
	for (i = 0; i < r->nr_blocks; i++) {
		struct mr_plan_block *pb;
		uint64_t blk = r->blocks[i];

		pb = realloc(plan->blocks, (plan->nr_blocks + 1) * sizeof(*pb));
		if (!pb)
			return mr_error(-ENOMEM, "out of memory");
		plan->blocks = pb;
		pb = &plan->blocks[plan->nr_blocks++];
		memset(pb, 0, sizeof(*pb));
		pb->block = blk;
		if ((ret = block_file(blk, "state", pb->state, sizeof(pb->state))) ||
		    (ret = block_file(blk, "valid_zones", pb->zones, sizeof(pb->zones)))) {
			block_region(pr, MR_BLOCKER_STATE, "%s", mr_last_error());
			mr_clear_error();
			continue;
		}
		if (strcmp(pb->state, "offline") == 0) {
			offline++;
			continue;
		}
		if (strcmp(pb->state, "online") != 0) {
			block_region(pr, MR_BLOCKER_STATE, "memory%" PRIu64 " is '%s'", blk,
				     pb->state);
			continue;
		}
		/* valid_zones of an online block is its zone; "none" means it spans
		 * zones. Only Movable blocks empty reliably. Never `removable`: since
		 * Linux 5.7 it reads 1 for every block. */
		if (strcmp(pb->zones, "Movable") != 0)
			block_region(pr, MR_BLOCKER_ZONE, "memory%" PRIu64 " is in zone %s, not "
				     "Movable%s", blk, pb->zones,
				     strcmp(pb->zones, "none") == 0 ? " (it spans zones)" : "");
		{
			uint64_t *nb = realloc(pr->blocks, (pr->nr_blocks + 1) * sizeof(*nb));

			if (!nb)
				return mr_error(-ENOMEM, "out of memory");
			pr->blocks = nb;
			pr->blocks[pr->nr_blocks++] = blk;
		}
	}
	if (r->nr_blocks && offline == r->nr_blocks) {
		block_region(pr, MR_BLOCKER_OFFLINE, "every block is offline already");
		pr->move_bytes = pr->free_bytes = pr->unmovable_bytes = 0;
	}
	if (r->occ.granularity == MR_OCC_PAGE) {
		if (pr->unmovable_bytes)
			block_region(pr, MR_BLOCKER_UNMOVABLE, "%" PRIu64 " KiB of unmovable "
				     "pages (slab, page tables, reserved, ...)",
				     pr->unmovable_bytes >> 10);
		if (!(pr->blockers & (1u << MR_BLOCKER_OFFLINE)))
			scan_kinds(r, pr);
		if (pr->hugetlb_bytes)
			block_region(pr, MR_BLOCKER_HUGETLB, "%" PRIu64 " KiB of hugetlb pages",
				     pr->hugetlb_bytes >> 10);
	} else if (r->node >= 0 && !(pr->blockers & (1u << MR_BLOCKER_OFFLINE))) {
		uint64_t h = node_hugetlb_bytes(r->node);

		if (h) {
			pr->hugetlb_bytes = h;
			block_region(pr, MR_BLOCKER_HUGETLB, "node %d has %" PRIu64 " KiB of "
				     "hugetlb pages in use, maybe in this region (no kpageflags "
				     "to tell)", r->node, h >> 10);
		}
	}
	return 0;
}

/* ---------------------------------------------------------------- pre-move */

static int add_proc(struct mr_plan_region *pr, int pid, uint64_t start, const char *comm,
		    uint64_t bytes)
{
	struct mr_plan_proc *n = realloc(pr->procs, (pr->nr_procs + 1) * sizeof(*n));

	if (!n)
		return mr_error(-ENOMEM, "out of memory");
	pr->procs = n;
	n += pr->nr_procs++;
	n->pid = pid;
	n->starttime_ticks = start;
	snprintf(n->comm, sizeof(n->comm), "%s", comm);
	n->bytes = bytes;
	return 0;
}

/* Which processes have pages mapped in the selected regions (mr_where_pid: pagemap,
 * or numa_maps when frames are hidden), this process left out. */
static int scan_mapped(const struct mr_region_map *map, struct mr_plan *plan)
{
	struct dirent *d;
	DIR *proc = mr_root_opendir("/proc");
	int ret = 0;

	if (!proc) {
		mr_clear_error();
		return 0;
	}
	while (!ret && (d = readdir(proc))) {
		char path[64], comm[20] = "?";
		struct mr_where w;
		uint64_t start;
		int pid = atoi(d->d_name);
		unsigned i;

		if (pid <= 0 || pid == getpid() || mr_proc_starttime(pid, &start) ||
		    mr_where_pid(map, pid, &w)) {
			mr_clear_error();	/* gone, a kernel thread, or not ours to read */
			continue;
		}
		mr_root_read_str(mr_pathf(path, sizeof(path), "/proc/%d/comm", pid), comm,
				 sizeof(comm));
		mr_clear_error();
		for (i = 0; i < plan->nr_regions && !ret; i++) {
			struct mr_plan_region *pr = &plan->regions[i];

			if (pr->order && pr->id < w.nr_regions && w.region_bytes[pr->id])
				ret = add_proc(pr, pid, start, comm, w.region_bytes[pr->id]);
		}
		mr_where_destroy(&w);
	}
	closedir(proc);
	return ret;
}

/*
 * Make @pr's destinations send at least @bytes to @node (its pre-move), taking what
 * it adds from its other destinations, the farthest first; @room is what every node
 * has left once the plan's regions are placed. false, changing nothing, when @node
 * has not the room.
 */
static bool premove_shift(struct sim *s, struct mr_plan_region *pr, int node, uint64_t bytes,
			  int64_t *room)
{
	uint64_t cur = 0, extra, take;
	struct mr_plan_dest first = { node, node_dist(s, pr->node, node), 0 };
	unsigned k, out = 0;

	for (k = 0; k < pr->nr_dests; k++)
		if (pr->dests[k].node == node)
			cur = pr->dests[k].bytes;
	extra = bytes > cur ? bytes - cur : 0;
	if (extra && (room[node] < 0 || (uint64_t)room[node] < extra))
		return false;
	room[node] -= (int64_t)extra;
	first.bytes = cur + extra;
	for (k = pr->nr_dests; k-- > 0 && extra;) {
		if (pr->dests[k].node == node)
			continue;
		take = pr->dests[k].bytes < extra ? pr->dests[k].bytes : extra;
		pr->dests[k].bytes -= take;
		room[pr->dests[k].node] += (int64_t)take;
		extra -= take;
	}
	/* @node first (moved there before the offline), then the others that still get
	 * something, in their order. */
	for (k = 0; k < pr->nr_dests; k++)
		if (pr->dests[k].node != node && pr->dests[k].bytes)
			pr->dests[out++] = pr->dests[k];
	if (out == MR_PLAN_MAX_DESTS)
		out--;
	memmove(pr->dests + 1, pr->dests, out * sizeof(*pr->dests));
	pr->dests[0] = first;
	pr->nr_dests = out + 1;
	return true;
}

/*
 * The pre-move of each selected region, in evacuation order: the pages processes have
 * mapped in it go to --to NODE, or to its nearest destination with room, by
 * move_pages before the offline (the kernel then moves only what is left: page cache
 * no process maps, pages of processes started later). It changes where the region's
 * bytes go, never how many move.
 */
static int plan_premove(struct sim *s, const struct mr_region_map *map,
			const struct mr_plan_opts *o, struct mr_plan *plan)
{
	int64_t room[MAX_NODES] = { 0 };
	unsigned i, k, idx[4096], n;
	char sz[32], rs[32];
	int ret;

	plan->premove_to = o->to_set ? o->to_node : -1;
	for (i = 0; i < plan->nr_regions; i++)
		plan->regions[i].premove_node = -1;
	n = mr_plan_order(plan, idx, MR_ARRAY_SIZE(idx));
	if (o->to_set) {
		if (o->to_node < 0 || o->to_node >= MAX_NODES || !s->node_mem[o->to_node])
			return mr_error(-EINVAL, "--to node %d: it has no online memory",
					o->to_node);
		for (i = 0; i < n; i++)
			if (plan->regions[idx[i]].node == o->to_node)
				return mr_error(-EINVAL, "--to node %d: the plan empties region %u "
						"on it", o->to_node, plan->regions[idx[i]].id);
	}
	if (!n)
		return 0;
	if (!o->scan_processes) {
		for (i = 0; i < n; i++)
			snprintf(plan->regions[idx[i]].premove_note, MR_PLAN_REASON_LEN,
				 "processes not scanned: the offline moves every page");
		return 0;
	}
	if ((ret = scan_mapped(map, plan)))
		return ret;
	/* Room left: the free memory of the regions that stay, less what the plan sends. */
	for (i = 0; i < plan->nr_regions; i++) {
		const struct mr_plan_region *pr = &plan->regions[i];

		if (pr->node >= 0 && pr->node < MAX_NODES && !pr->order &&
		    !(pr->blockers & (1u << MR_BLOCKER_OFFLINE)))
			room[pr->node] += (int64_t)pr->free_bytes;
		for (k = 0; pr->order && k < pr->nr_dests; k++)
			if (pr->dests[k].node >= 0 && pr->dests[k].node < MAX_NODES)
				room[pr->dests[k].node] -= (int64_t)pr->dests[k].bytes;
	}
	for (i = 0; i < n; i++) {
		struct mr_plan_region *pr = &plan->regions[idx[i]];
		uint64_t bytes = 0;
		int node = o->to_set ? o->to_node : pr->nr_dests ? pr->dests[0].node : -1;

		for (k = 0; k < pr->nr_procs; k++)
			bytes += pr->procs[k].bytes;
		/* shared pages count in every process that maps them */
		pr->premove_bytes = bytes < pr->move_bytes ? bytes : pr->move_bytes;
		if (!pr->nr_procs || !pr->premove_bytes) {
			snprintf(pr->premove_note, MR_PLAN_REASON_LEN, "no process has pages "
				 "mapped in it");
			pr->premove_bytes = 0;
			continue;
		}
		if (node < 0) {
			snprintf(pr->premove_note, MR_PLAN_REASON_LEN, "no node to move to");
			continue;
		}
		if (!premove_shift(s, pr, node, pr->premove_bytes, room)) {
			mr_format_size(pr->premove_bytes, sz, sizeof(sz));
			mr_format_size(room[node] > 0 ? (uint64_t)room[node] : 0, rs, sizeof(rs));
			if (o->to_set)
				return mr_error(-ENOSPC, "--to node %d: region %u would pre-move %s "
						"there, and node %d has %s free once the plan's "
						"other pages are placed", node, pr->id, sz, node, rs);
			snprintf(pr->premove_note, MR_PLAN_REASON_LEN, "node %d, the nearest, has "
				 "%s free left for %s: the kernel spreads the pages", node, rs, sz);
			continue;
		}
		pr->premove_node = node;
	}
	return 0;
}

int mr_plan_make(const struct mr_region_map *map, const struct mr_power_model *model,
		 const struct mr_plan_opts *o, struct mr_plan *plan)
{
	struct mr_plan_warning w[32];
	struct sim *s = NULL;
	struct bound *bound = NULL;
	unsigned i, n, nr_sel = 0, *sel = NULL, *best = NULL, nr_best = 0;
	uint64_t sel_bytes = 0;
	double sel_mw = 0;
	bool want[MAX_NODES] = { false };
	int ret;

	memset(plan, 0, sizeof(*plan));
	plan->version = MR_PLAN_VERSION;
	new_plan_id(plan->id);
	plan->created_s = (uint64_t)time(NULL);
	plan->block_size_bytes = map->block_size_bytes;
	plan->goal = o->goal;
	plan->goal_bytes = o->goal_bytes;
	plan->goal_regions = o->goal_regions;
	plan->goal_mw = o->goal_mw;
	plan->move_rate_bytes_per_s = o->move_rate_bytes_per_s;
	snprintf(plan->move_rate_from, sizeof(plan->move_rate_from), "%s",
		 o->move_rate_from ? o->move_rate_from : "");
	snprintf(plan->mpst_file, sizeof(plan->mpst_file), "%s", o->mpst_file ? o->mpst_file : "");
	snprintf(plan->source, sizeof(plan->source), "%s", mr_source_name(map->source));
	read_boot_id(plan->boot_id, sizeof(plan->boot_id));
	if (map->source == MR_SOURCE_MPST && (ret = mpst_hash(o->mpst_file, plan->mpst_hash,
							       sizeof(plan->mpst_hash))))
		return ret;
	n = mr_plan_mpst_warnings(map, w, MR_ARRAY_SIZE(w));
	if (n) {
		plan->warnings = calloc(n, sizeof(*plan->warnings));
		if (!plan->warnings)
			return mr_error(-ENOMEM, "out of memory");
		memcpy(plan->warnings, w, n * sizeof(*w));
		plan->nr_warnings = n;
	}
	if (o->residency && o->residency->scope != MR_RESIDENCY_NONE)
		snprintf(plan->residency_from, sizeof(plan->residency_from), "%s",
			 o->residency->from[0] ? o->residency->from : "a physical record");

	plan->regions = calloc(map->nr_regions ? map->nr_regions : 1, sizeof(*plan->regions));
	s = calloc(1, sizeof(*s));
	bound = calloc(1, sizeof(*bound));
	sel = calloc(map->nr_regions + 1, sizeof(*sel));
	best = calloc(map->nr_regions + 1, sizeof(*best));
	if (!plan->regions || !s || !bound || !sel || !best) {
		ret = mr_error(-ENOMEM, "out of memory");
		goto out;
	}
	plan->nr_regions = map->nr_regions;
	s->map = map;
	s->plan = plan;
	for (i = 0; i < map->nr_regions; i++) {
		struct mr_plan_region *pr = &plan->regions[i];

		if ((ret = region_facts(map, &map->regions[i], plan, pr)))
			goto out;
		region_power(model, o->residency, pr);
		if (o->move_rate_bytes_per_s)
			pr->seconds = (double)pr->move_bytes / (double)o->move_rate_bytes_per_s;
		if (pr->node >= 0 && pr->node < MAX_NODES &&
		    !(pr->blockers & (1u << MR_BLOCKER_OFFLINE))) {
			s->node_mem[pr->node] = true;
			if (!pr->blockers)
				want[pr->node] = true;
		}
	}
	qsort(plan->blocks, plan->nr_blocks, sizeof(*plan->blocks), cmp_u64);
	if (o->scan_processes) {
		char mem_nodes[256] = "";

		if (mr_root_read_str(NODE_DIR "/has_memory", mem_nodes, sizeof(mem_nodes)))
			mem_nodes[0] = '\0';
		mr_clear_error();
		scan_processes(want, mem_nodes, bound);
		for (i = 0; i < plan->nr_regions; i++) {
			struct mr_plan_region *pr = &plan->regions[i];

			if (pr->node >= 0 && pr->node < MAX_NODES && want[pr->node] &&
			    bound->count[pr->node])
				block_region(pr, MR_BLOCKER_BOUND, "%u process%s bound to node %d "
					     "would have pages moved off it: %s%s",
					     bound->count[pr->node],
					     bound->count[pr->node] == 1 ? "" : "es", pr->node,
					     bound->who[pr->node],
					     bound->count[pr->node] > 3 ? ", ..." : "");
		}
	}
	/* Room alone: a region that does not fit even by itself is blocked. */
	for (i = 0; i < plan->nr_regions; i++)
		if (!plan->regions[i].blockers) {
			unsigned one = i;

			place(s, &one, 1);
		}
	rank_goal = o->goal;
	/* Rank on a copy of the indices: the regions stay in id order until the end. */
	{
		struct mr_plan_region *sorted = malloc(plan->nr_regions * sizeof(*sorted) + 1);

		if (!sorted) {
			ret = mr_error(-ENOMEM, "out of memory");
			goto out;
		}
		memcpy(sorted, plan->regions, plan->nr_regions * sizeof(*sorted));
		qsort(sorted, plan->nr_regions, sizeof(*sorted), cmp_rank);
		memcpy(plan->regions, sorted, plan->nr_regions * sizeof(*sorted));
		free(sorted);
	}
	for (i = 0; i < plan->nr_regions; i++)
		plan->regions[i].rank = i + 1;

	/* Greedy: take candidates in rank order while the selection still fits. */
	for (i = 0; i < plan->nr_regions && o->goal != MR_PLAN_GOAL_NONE; i++) {
		struct mr_plan_region *pr = &plan->regions[i];
		bool cycle;

		if (goal_met(o, nr_sel, sel_bytes, sel_mw))
			break;
		if (pr->blockers)
			continue;
		memcpy(sel, best, nr_best * sizeof(*sel));
		sel[nr_best] = i;
		if (!try_selection(s, sel, nr_best + 1, &cycle)) {
			if (cycle)
				block_region(pr, MR_BLOCKER_ORDER, "its pages would go to a node "
					     "the plan empties later, and that node's to its own");
			else if (!(pr->blockers & (1u << MR_BLOCKER_NO_ROOM)))
				block_region(pr, MR_BLOCKER_NO_ROOM, "no room left on the other "
					     "nodes once the regions before it are emptied");
			/* @sel's own blockers were set on a trial: clear the others'. */
			for (n = 0; n < nr_best; n++)
				plan->regions[best[n]].blockers = 0;
			continue;
		}
		memcpy(best, sel, (nr_best + 1) * sizeof(*sel));
		nr_best++;
		nr_sel = nr_best;
		sel_bytes += pr->size_bytes;
		sel_mw += pr->saving_mw;
	}
	if (nr_best) {
		bool cycle;

		memcpy(sel, best, nr_best * sizeof(*sel));
		try_selection(s, sel, nr_best, &cycle);	/* the dests of the final order */
	}
	for (i = 0; i < nr_best; i++) {
		struct mr_plan_region *pr = &plan->regions[best[i]];

		pr->order = i + 1;
		plan->selected_move_bytes += pr->move_bytes;
		plan->selected_saving_mw += pr->saving_mw;
		plan->selected_bytes += pr->size_bytes;
		if (pr->seconds >= 0)
			plan->selected_seconds += pr->seconds;
	}
	plan->nr_selected = nr_best;
	plan->goal_met = o->goal == MR_PLAN_GOAL_NONE ||
			 goal_met(o, nr_best, plan->selected_bytes, plan->selected_saving_mw);
	/* Blocked regions after the candidates in the ranking. */
	{
		struct mr_plan_region *sorted = malloc(plan->nr_regions * sizeof(*sorted) + 1);
		unsigned k = 0;

		if (!sorted) {
			ret = mr_error(-ENOMEM, "out of memory");
			goto out;
		}
		for (i = 0; i < plan->nr_regions; i++)
			if (!plan->regions[i].blockers)
				sorted[k++] = plan->regions[i];
		for (i = 0; i < plan->nr_regions; i++)
			if (plan->regions[i].blockers)
				sorted[k++] = plan->regions[i];
		memcpy(plan->regions, sorted, plan->nr_regions * sizeof(*sorted));
		free(sorted);
		for (i = 0; i < plan->nr_regions; i++)
			plan->regions[i].rank = i + 1;
	}

	if ((ret = plan_premove(s, map, o, plan)))
		goto out;
	plan_note(plan, "%s", MR_PLAN_PIN_CAVEAT);
	plan_note(plan, "where pages go: the kernel migrates an offlined block's pages to "
		  "other nodes with memory, nearest first by the distance table (its own "
		  "node only when no other has memory)");
	if (!plan->residency_from[0])
		plan_note(plan, "savings at standby: no --record, so every region is counted "
			  "as active today; an idle region reaches the same low state online");
	if (!o->move_rate_bytes_per_s)
		plan_note(plan, "time unknown: no move rate measured on this machine "
			  "(pass --move-rate)");
	if (!plan->boot_id[0])
		plan_note(plan, "no boot id under this root: the plan cannot be carried out "
			  "on any machine");
	ret = 0;
out:
	free(s);
	free(bound);
	free(sel);
	free(best);
	if (ret)
		mr_plan_destroy(plan);
	return ret;
}

unsigned mr_plan_order(const struct mr_plan *plan, unsigned *idx, unsigned max)
{
	unsigned i, k, n = 0;

	for (k = 1; k <= plan->nr_regions; k++)
		for (i = 0; i < plan->nr_regions; i++)
			if (plan->regions[i].order == k && n < max)
				idx[n++] = i;
	return n;
}

/* ---------------------------------------------------------------- measuring */

int mr_plan_measure_rate(int from, int to, uint64_t bytes, uint64_t *rate_bytes_per_s,
			 char *from_text, size_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), n = bytes / page, i;
	void **pages = NULL;
	int *nodes = NULL, *status = NULL, ret = 0;
	uint64_t t0, dt;
	char *buf;

	buf = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		return mr_error(-errno, "move rate: mmap: %s", strerror(errno));
	pages = calloc(n, sizeof(*pages));
	nodes = calloc(n, sizeof(*nodes));
	status = calloc(n, sizeof(*status));
	if (!pages || !nodes || !status) {
		ret = mr_error(-ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < n; i++) {
		buf[i * page] = (char)i;
		pages[i] = buf + i * page;
		nodes[i] = from;
	}
	/* This process's own pages only: first onto @from (untimed), then the timed move. */
	if (mr_sys_move_pages(0, n, pages, nodes, status, 0) < 0) {
		ret = mr_error(-errno, "move rate: move_pages to node %d: %s", from, strerror(errno));
		goto out;
	}
	for (i = 0; i < n; i++)
		nodes[i] = to;
	t0 = mr_now_ns();
	if (mr_sys_move_pages(0, n, pages, nodes, status, 0) < 0) {
		ret = mr_error(-errno, "move rate: move_pages to node %d: %s", to, strerror(errno));
		goto out;
	}
	dt = mr_now_ns() - t0;
	*rate_bytes_per_s = dt ? (uint64_t)((double)bytes * 1e9 / (double)dt) : bytes;
	snprintf(from_text, len, "measured: move_pages of %" PRIu64 " MiB of memregctl's own "
		 "memory from node %d to node %d in %.3f s", bytes >> 20, from, to,
		 (double)dt / 1e9);
out:
	free(pages);
	free(nodes);
	free(status);
	munmap(buf, bytes);
	return ret;
}

/* The file beside the state file. */
/* Write @text to the host file @path whole: a temporary beside it, then a rename, so
 * a reader sees the old file or the new one (the marker and the move rate). */
static int write_whole(const char *path, const char *text)
{
	char tmp[4500];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return mr_error(-errno, "%s: %s", tmp, strerror(errno));
	fputs(text, f);
	if (fflush(f) || ferror(f)) {
		fclose(f);
		unlink(tmp);
		return mr_error(-EIO, "%s: write failed", tmp);
	}
	fclose(f);
	if (rename(tmp, path))
		return mr_error(-errno, "%s: %s", path, strerror(errno));
	return 0;
}

static const char *rate_path(char *buf, size_t len)
{
	char *slash;

	snprintf(buf, len, "%s", mr_block_state_path());
	slash = strrchr(buf, '/');
	if (slash)
		snprintf(slash + 1, len - (size_t)(slash + 1 - buf), "move-rate");
	return buf;
}

/* The evacuation marker beside the state file (a Linux path: read through the root). */
static const char *evac_linux_path(char *buf, size_t len)
{
	const char *dir = getenv("MEMREG_STATE_DIR");

	snprintf(buf, len, "%s/evacuating", dir && dir[0] ? dir : MR_LOCALSTATEDIR "/lib/memreg");
	return buf;
}

int mr_plan_evacuation_begin(const struct mr_plan *plan, const unsigned *idx, unsigned n)
{
	char lpath[4200], path[4400], boot[48], text[512 + MR_PLAN_EVAC_MAX_REGIONS * 12];
	uint64_t start = 0;
	unsigned i;
	size_t len;
	int ret;

	if ((ret = mr_root_may_change("record a running evacuation", true)))
		return ret;
	if ((ret = mr_proc_starttime(getpid(), &start)))
		return ret;
	read_boot_id(boot, sizeof(boot));
	if ((ret = mr_root_path(path, sizeof(path), evac_linux_path(lpath, sizeof(lpath)))))
		return ret;
	len = (size_t)snprintf(text, sizeof(text), "pid=%ld\nstart=%" PRIu64 "\nboot_id=%s\n"
			       "plan=%s\nregions=", (long)getpid(), start, boot, plan->id);
	for (i = 0; i < n && i < MR_PLAN_EVAC_MAX_REGIONS && len < sizeof(text); i++)
		len += (size_t)snprintf(text + len, sizeof(text) - len, "%s%u", i ? "," : "",
					plan->regions[idx[i]].id);
	if (len < sizeof(text))
		snprintf(text + len, sizeof(text) - len, "\n");
	return write_whole(path, text);
}

void mr_plan_evacuation_end(void)
{
	char lpath[4200], path[4400];

	if (!mr_root_path(path, sizeof(path), evac_linux_path(lpath, sizeof(lpath))))
		unlink(path);
	mr_clear_error();
}

int mr_plan_evacuation_running(struct mr_plan_evacuation *ev)
{
	char lpath[4200], *data = NULL, *line, *save = NULL, boot[48] = "", now[48];
	size_t len;
	bool have_pid = false;
	int ret = mr_root_read_file(evac_linux_path(lpath, sizeof(lpath)), 1u << 16, &data,
				    &len);

	memset(ev, 0, sizeof(*ev));
	if (ret == -ENOENT) {
		mr_clear_error();
		return 0;
	}
	if (ret)
		return ret;
	for (line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		uint64_t v;

		if (strncmp(line, "pid=", 4) == 0 && !mr_parse_u64(line + 4, &v) && v &&
		    v <= INT32_MAX) {
			ev->pid = (long)v;
			have_pid = true;
		} else if (strncmp(line, "start=", 6) == 0 &&
			   !mr_parse_u64(line + 6, &ev->starttime_ticks)) {
			continue;
		} else if (strncmp(line, "boot_id=", 8) == 0) {
			snprintf(boot, sizeof(boot), "%s", line + 8);
		} else if (strncmp(line, "plan=", 5) == 0) {
			snprintf(ev->plan, sizeof(ev->plan), "%s", line + 5);
		} else if (strncmp(line, "regions=", 8) == 0) {
			char *tok, *s2 = NULL;

			for (tok = strtok_r(line + 8, ",", &s2); tok && ev->nr_regions <
			     MR_PLAN_EVAC_MAX_REGIONS; tok = strtok_r(NULL, ",", &s2)) {
				if (mr_parse_u64(tok, &v) || v > UINT32_MAX)
					break;
				ev->regions[ev->nr_regions++] = (unsigned)v;
			}
		}
	}
	free(data);
	if (!have_pid || !ev->plan[0])
		return mr_error(-EINVAL, "%s: not an evacuation marker (pid=, plan= missing)",
				lpath);
	read_boot_id(now, sizeof(now));
	if (!boot[0] || strcmp(boot, now) != 0 ||
	    mr_proc_same((pid_t)ev->pid, ev->starttime_ticks)) {
		mr_clear_error();
		memset(ev, 0, sizeof(*ev));
		return 0;	/* left by an evacuation that was killed, or another boot's */
	}
	return 1;
}

bool mr_plan_evacuation_has(const struct mr_plan_evacuation *ev, unsigned region)
{
	unsigned i;

	for (i = 0; i < ev->nr_regions; i++)
		if (ev->regions[i] == region)
			return true;
	return false;
}

int mr_plan_rate_save(uint64_t bytes, uint64_t elapsed_ns)
{
	char path[4400], boot[48], text[160];
	int ret;

	if ((ret = mr_root_may_change("record the move rate", true)))
		return ret;
	if (!bytes || !elapsed_ns)
		return 0;
	read_boot_id(boot, sizeof(boot));
	rate_path(path, sizeof(path));
	snprintf(text, sizeof(text), "boot=%s bytes=%" PRIu64 " ns=%" PRIu64 " time=%" PRIu64 "\n",
		 boot, bytes, elapsed_ns, (uint64_t)time(NULL));
	return write_whole(path, text);
}

int mr_plan_rate_load(uint64_t *rate_bytes_per_s, char *from_text, size_t len)
{
	char path[4400], line[256], boot[48], fboot[48];
	uint64_t bytes, ns, when;
	FILE *f;

	rate_path(path, sizeof(path));
	f = fopen(path, "r");
	if (!f)
		return -ENOENT;
	if (!fgets(line, sizeof(line), f) ||
	    sscanf(line, "boot=%47s bytes=%" SCNu64 " ns=%" SCNu64 " time=%" SCNu64, fboot,
		   &bytes, &ns, &when) != 4 || !bytes || !ns) {
		fclose(f);
		return -EINVAL;
	}
	fclose(f);
	read_boot_id(boot, sizeof(boot));
	if (!boot[0] || strcmp(boot, fboot) != 0)
		return -ENOENT;		/* another boot's: the machine may have changed */
	*rate_bytes_per_s = (uint64_t)((double)bytes * 1e9 / (double)ns);
	if (!*rate_bytes_per_s)
		*rate_bytes_per_s = 1;
	snprintf(from_text, len, "measured: memregctl evacuate took %" PRIu64 " MiB offline in "
		 "%.3f s in this boot (%s)", bytes >> 20, (double)ns / 1e9, path);
	return 0;
}

/* ---------------------------------------------------------------- JSON */

static const char *const goal_names[NR_MR_PLAN_GOALS] = { "none", "free", "regions", "power" };

static json_object *u64(uint64_t v)
{
	return json_object_new_uint64(v);
}

json_object *mr_plan_to_json(const struct mr_plan *plan)
{
	json_object *o = json_object_new_object(), *m = json_object_new_object(), *a, *x;
	unsigned i, k, idx[4096], n;

	json_object_object_add(o, "format", json_object_new_string("memreg-plan"));
	json_object_object_add(o, "version", json_object_new_int((int)plan->version));
	json_object_object_add(o, "id", json_object_new_string(plan->id));
	json_object_object_add(o, "created", u64(plan->created_s));

	json_object_object_add(m, "boot_id", json_object_new_string(plan->boot_id));
	json_object_object_add(m, "source", json_object_new_string(plan->source));
	json_object_object_add(m, "mpst_hash", json_object_new_string(plan->mpst_hash));
	json_object_object_add(m, "mpst_file", json_object_new_string(plan->mpst_file));
	json_object_object_add(m, "block_size_bytes", u64(plan->block_size_bytes));
	a = json_object_new_array();
	for (i = 0; i < plan->nr_blocks; i++) {
		x = json_object_new_object();
		json_object_object_add(x, "block", u64(plan->blocks[i].block));
		json_object_object_add(x, "state", json_object_new_string(plan->blocks[i].state));
		json_object_object_add(x, "zones", json_object_new_string(plan->blocks[i].zones));
		json_object_array_add(a, x);
	}
	json_object_object_add(m, "blocks", a);
	json_object_object_add(o, "machine", m);

	x = json_object_new_object();
	json_object_object_add(x, "kind", json_object_new_string(goal_names[plan->goal]));
	if (plan->goal == MR_PLAN_GOAL_FREE)
		json_object_object_add(x, "bytes", u64(plan->goal_bytes));
	if (plan->goal == MR_PLAN_GOAL_REGIONS)
		json_object_object_add(x, "regions", u64(plan->goal_regions));
	if (plan->goal == MR_PLAN_GOAL_POWER)
		json_object_object_add(x, "saving_mw", json_object_new_double(plan->goal_mw));
	json_object_object_add(x, "met", json_object_new_boolean(plan->goal_met));
	json_object_object_add(o, "goal", x);

	x = json_object_new_object();
	json_object_object_add(x, "bytes_per_s", plan->move_rate_bytes_per_s ?
			       u64(plan->move_rate_bytes_per_s) : NULL);
	json_object_object_add(x, "from", json_object_new_string(plan->move_rate_from));
	json_object_object_add(o, "move_rate", x);
	json_object_object_add(o, "premove_to", plan->premove_to >= 0 ?
			       json_object_new_int(plan->premove_to) : NULL);
	json_object_object_add(o, "residency_from", plan->residency_from[0] ?
			       json_object_new_string(plan->residency_from) : NULL);
	json_object_object_add(o, "saving_caveat", json_object_new_string(MR_PLAN_SAVING_CAVEAT));

	a = json_object_new_array();
	for (i = 0; i < plan->nr_warnings; i++) {
		x = json_object_new_object();
		json_object_object_add(x, "kind", json_object_new_string(plan->warnings[i].kind));
		json_object_object_add(x, "text", json_object_new_string(plan->warnings[i].text));
		json_object_array_add(a, x);
	}
	json_object_object_add(o, "mpst_warnings", a);
	a = json_object_new_array();
	for (i = 0; i < plan->nr_notes; i++)
		json_object_array_add(a, json_object_new_string(plan->notes[i]));
	json_object_object_add(o, "notes", a);

	x = json_object_new_object();
	a = json_object_new_array();
	n = mr_plan_order(plan, idx, MR_ARRAY_SIZE(idx));
	for (i = 0; i < n; i++)
		json_object_array_add(a, u64(plan->regions[idx[i]].id));
	json_object_object_add(x, "regions", a);
	json_object_object_add(x, "bytes", u64(plan->selected_bytes));
	json_object_object_add(x, "move_bytes", u64(plan->selected_move_bytes));
	json_object_object_add(x, "seconds", plan->move_rate_bytes_per_s ?
			       json_object_new_double(plan->selected_seconds) : NULL);
	json_object_object_add(x, "saving_mw", json_object_new_double(plan->selected_saving_mw));
	json_object_object_add(o, "selected", x);

	a = json_object_new_array();
	for (i = 0; i < plan->nr_regions; i++) {
		const struct mr_plan_region *pr = &plan->regions[i];
		json_object *r = json_object_new_object(), *b, *p;

		json_object_object_add(r, "id", u64(pr->id));
		json_object_object_add(r, "node", json_object_new_int(pr->node));
		json_object_object_add(r, "rank", u64(pr->rank));
		json_object_object_add(r, "order", u64(pr->order));
		json_object_object_add(r, "size_bytes", u64(pr->size_bytes));
		b = json_object_new_array();
		for (k = 0; k < pr->nr_blocks; k++)
			json_object_array_add(b, u64(pr->blocks[k]));
		json_object_object_add(r, "blocks", b);
		json_object_object_add(r, "move_bytes", u64(pr->move_bytes));
		json_object_object_add(r, "anon_bytes", pr->kinds_known ? u64(pr->anon_bytes) : NULL);
		json_object_object_add(r, "file_bytes", pr->kinds_known ? u64(pr->file_bytes) : NULL);
		json_object_object_add(r, "free_bytes", u64(pr->free_bytes));
		json_object_object_add(r, "unmovable_bytes", u64(pr->unmovable_bytes));
		json_object_object_add(r, "hugetlb_bytes", u64(pr->hugetlb_bytes));
		b = json_object_new_array();
		for (k = 0; k < pr->nr_dests; k++) {
			json_object *d = json_object_new_object();

			json_object_object_add(d, "node", json_object_new_int(pr->dests[k].node));
			json_object_object_add(d, "distance", json_object_new_int(pr->dests[k].distance));
			json_object_object_add(d, "bytes", u64(pr->dests[k].bytes));
			json_object_array_add(b, d);
		}
		json_object_object_add(r, "destinations", b);
		if (pr->premove_node >= 0) {
			p = json_object_new_object();
			json_object_object_add(p, "node", json_object_new_int(pr->premove_node));
			json_object_object_add(p, "bytes", u64(pr->premove_bytes));
			b = json_object_new_array();
			for (k = 0; k < pr->nr_procs; k++) {
				json_object *q = json_object_new_object();

				json_object_object_add(q, "pid", json_object_new_int(pr->procs[k].pid));
				json_object_object_add(q, "start_ticks",
						       u64(pr->procs[k].starttime_ticks));
				json_object_object_add(q, "comm",
						       json_object_new_string(pr->procs[k].comm));
				json_object_object_add(q, "bytes", u64(pr->procs[k].bytes));
				json_object_array_add(b, q);
			}
			json_object_object_add(p, "processes", b);
			json_object_object_add(r, "premove", p);
		} else {
			json_object_object_add(r, "premove", NULL);
		}
		json_object_object_add(r, "premove_note", pr->premove_note[0] ?
				       json_object_new_string(pr->premove_note) : NULL);
		json_object_object_add(r, "seconds", pr->seconds >= 0 ?
				       json_object_new_double(pr->seconds) : NULL);
		p = json_object_new_object();
		json_object_object_add(p, "now_mw", json_object_new_double(pr->now_mw));
		json_object_object_add(p, "noaccess_mw", json_object_new_double(pr->noaccess_mw));
		json_object_object_add(p, "saving_mw", json_object_new_double(pr->saving_mw));
		json_object_object_add(p, "low_state", json_object_new_int(pr->low_state));
		json_object_object_add(p, "at", json_object_new_string(
			plan->residency_from[0] ? "record" : "standby"));
		json_object_object_add(p, "caveat", json_object_new_string(MR_PLAN_SAVING_CAVEAT));
		json_object_object_add(r, "power", p);
		b = json_object_new_array();
		for (k = 0; k < NR_MR_BLOCKERS; k++)
			if (pr->blockers & (1u << k)) {
				json_object *bl = json_object_new_object();

				json_object_object_add(bl, "kind", json_object_new_string(
					mr_plan_blocker_name((enum mr_plan_blocker)k)));
				json_object_object_add(bl, "reason",
						       json_object_new_string(pr->reasons[k]));
				json_object_array_add(b, bl);
			}
		json_object_object_add(r, "blockers", b);
		json_object_array_add(a, r);
	}
	json_object_object_add(o, "regions", a);
	return o;
}

int mr_plan_write(const struct mr_plan *plan, const char *path)
{
	json_object *o = mr_plan_to_json(plan);
	const char *text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
							  JSON_C_TO_STRING_NOSLASHESCAPE);
	char tmp[4200];
	FILE *f;
	int ret = 0;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f) {
		ret = mr_error(-errno, "%s: %s", tmp, strerror(errno));
		goto out;
	}
	fprintf(f, "%s\n", text);
	if (fflush(f) || ferror(f) || fsync(fileno(f))) {
		ret = mr_error(-errno, "%s: %s", tmp, strerror(errno));
		fclose(f);
		unlink(tmp);
		goto out;
	}
	fclose(f);
	if (rename(tmp, path)) {
		ret = mr_error(-errno, "%s: %s", path, strerror(errno));
		unlink(tmp);
	}
out:
	json_object_put(o);
	return ret;
}

static const char *jstr(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
		? json_object_get_string(v) : NULL;
}

static bool jnum(json_object *o, const char *key, double *out)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !v)
		return false;
	if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
		return false;
	*out = json_object_get_double(v);
	return true;
}

static bool ju64(json_object *o, const char *key, uint64_t *out)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
		return false;
	*out = json_object_get_uint64(v);
	return true;
}

int mr_plan_read(const char *path, struct mr_plan *plan)
{
	json_object *o = json_object_from_file(path), *m, *a, *x;
	const char *s;
	double d;
	uint64_t v;
	unsigned i, k;
	int ret = -EINVAL;

	memset(plan, 0, sizeof(*plan));
	if (!o)
		return mr_error(access(path, R_OK) ? -errno : -EINVAL, "%s: %s", path,
				access(path, R_OK) ? strerror(errno) : "not a JSON file");
	s = jstr(o, "format");
	if (!s || strcmp(s, "memreg-plan") != 0) {
		mr_error(-EINVAL, "%s: not a memreg plan (no \"format\": \"memreg-plan\")", path);
		goto out;
	}
	if (!ju64(o, "version", &v)) {
		mr_error(-EINVAL, "%s: no version", path);
		goto out;
	}
	if (v < MR_PLAN_VERSION_MIN || v > MR_PLAN_VERSION) {
		ret = mr_error(-EPROTO, "%s: plan format version %" PRIu64 ", this memregctl "
			       "reads versions %d to %d: make the plan again", path, v,
			       MR_PLAN_VERSION_MIN, MR_PLAN_VERSION);
		goto out;
	}
	plan->version = (unsigned)v;
	if (!(s = jstr(o, "id")) || strlen(s) != MR_PLAN_ID_LEN - 1 ||
	    !json_object_object_get_ex(o, "machine", &m) ||
	    !json_object_object_get_ex(o, "regions", &a) ||
	    !json_object_is_type(a, json_type_array)) {
		mr_error(-EINVAL, "%s: no id, machine or regions", path);
		goto out;
	}
	snprintf(plan->id, sizeof(plan->id), "%s", s);
	ju64(o, "created", &plan->created_s);
	snprintf(plan->boot_id, sizeof(plan->boot_id), "%s", jstr(m, "boot_id") ?: "");
	snprintf(plan->source, sizeof(plan->source), "%s", jstr(m, "source") ?: "");
	snprintf(plan->mpst_hash, sizeof(plan->mpst_hash), "%s", jstr(m, "mpst_hash") ?: "");
	snprintf(plan->mpst_file, sizeof(plan->mpst_file), "%s", jstr(m, "mpst_file") ?: "");
	ju64(m, "block_size_bytes", &plan->block_size_bytes);
	if (json_object_object_get_ex(m, "blocks", &x) && json_object_is_type(x, json_type_array)) {
		plan->nr_blocks = (unsigned)json_object_array_length(x);
		plan->blocks = calloc(plan->nr_blocks + 1, sizeof(*plan->blocks));
		if (!plan->blocks) {
			ret = mr_error(-ENOMEM, "out of memory");
			goto out;
		}
		for (i = 0; i < plan->nr_blocks; i++) {
			json_object *b = json_object_array_get_idx(x, i);

			ju64(b, "block", &plan->blocks[i].block);
			snprintf(plan->blocks[i].state, sizeof(plan->blocks[i].state), "%s",
				 jstr(b, "state") ?: "");
			snprintf(plan->blocks[i].zones, sizeof(plan->blocks[i].zones), "%s",
				 jstr(b, "zones") ?: "");
		}
	}
	plan->premove_to = jnum(o, "premove_to", &d) ? (int)d : -1;
	if (json_object_object_get_ex(o, "move_rate", &x)) {
		ju64(x, "bytes_per_s", &plan->move_rate_bytes_per_s);
		snprintf(plan->move_rate_from, sizeof(plan->move_rate_from), "%s",
			 jstr(x, "from") ?: "");
	}
	if (json_object_object_get_ex(o, "mpst_warnings", &x) &&
	    json_object_is_type(x, json_type_array)) {
		plan->nr_warnings = (unsigned)json_object_array_length(x);
		plan->warnings = calloc(plan->nr_warnings + 1, sizeof(*plan->warnings));
		if (!plan->warnings) {
			ret = mr_error(-ENOMEM, "out of memory");
			goto out;
		}
		for (i = 0; i < plan->nr_warnings; i++) {
			json_object *w = json_object_array_get_idx(x, i);

			snprintf(plan->warnings[i].kind, sizeof(plan->warnings[i].kind), "%s",
				 jstr(w, "kind") ?: "table");
			snprintf(plan->warnings[i].text, sizeof(plan->warnings[i].text), "%s",
				 jstr(w, "text") ?: "");
		}
	}
	plan->nr_regions = (unsigned)json_object_array_length(a);
	plan->regions = calloc(plan->nr_regions + 1, sizeof(*plan->regions));
	if (!plan->regions) {
		ret = mr_error(-ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < plan->nr_regions; i++) {
		struct mr_plan_region *pr = &plan->regions[i];
		json_object *r = json_object_array_get_idx(a, i), *b, *p;

		if (!ju64(r, "id", &v) || !json_object_object_get_ex(r, "blocks", &b) ||
		    !json_object_is_type(b, json_type_array)) {
			mr_error(-EINVAL, "%s: region %u has no id or blocks", path, i);
			goto out;
		}
		pr->id = (unsigned)v;
		pr->node = jnum(r, "node", &d) ? (int)d : -1;
		pr->rank = ju64(r, "rank", &v) ? (unsigned)v : 0;
		pr->order = ju64(r, "order", &v) ? (unsigned)v : 0;
		ju64(r, "size_bytes", &pr->size_bytes);
		ju64(r, "move_bytes", &pr->move_bytes);
		pr->seconds = jnum(r, "seconds", &d) ? d : -1;
		pr->premove_node = -1;
		snprintf(pr->premove_note, sizeof(pr->premove_note), "%s",
			 jstr(r, "premove_note") ?: "");
		if (json_object_object_get_ex(r, "premove", &p) && p &&
		    json_object_is_type(p, json_type_object)) {
			json_object *q;

			if (!jnum(p, "node", &d) || d < 0 || !ju64(p, "bytes", &pr->premove_bytes) ||
			    !json_object_object_get_ex(p, "processes", &q) ||
			    !json_object_is_type(q, json_type_array)) {
				mr_error(-EINVAL, "%s: region %u: a premove without node, bytes or "
					 "processes", path, pr->id);
				goto out;
			}
			pr->premove_node = (int)d;
			pr->nr_procs = (unsigned)json_object_array_length(q);
			pr->procs = calloc(pr->nr_procs + 1, sizeof(*pr->procs));
			if (!pr->procs) {
				ret = mr_error(-ENOMEM, "out of memory");
				goto out;
			}
			for (k = 0; k < pr->nr_procs; k++) {
				json_object *e = json_object_array_get_idx(q, k);
				struct mr_plan_proc *pp = &pr->procs[k];

				if (!jnum(e, "pid", &d) || d <= 0 || d > INT32_MAX ||
				    !ju64(e, "start_ticks", &pp->starttime_ticks)) {
					mr_error(-EINVAL, "%s: region %u: a premove process without "
						 "pid or start_ticks", path, pr->id);
					goto out;
				}
				pp->pid = (int)d;
				ju64(e, "bytes", &pp->bytes);
				snprintf(pp->comm, sizeof(pp->comm), "%s", jstr(e, "comm") ?: "?");
			}
		}
		if (json_object_object_get_ex(r, "power", &p) && jnum(p, "saving_mw", &d))
			pr->saving_mw = d;
		pr->nr_blocks = (unsigned)json_object_array_length(b);
		pr->blocks = calloc(pr->nr_blocks + 1, sizeof(*pr->blocks));
		if (!pr->blocks) {
			ret = mr_error(-ENOMEM, "out of memory");
			goto out;
		}
		for (k = 0; k < pr->nr_blocks; k++)
			pr->blocks[k] = json_object_get_uint64(json_object_array_get_idx(b, k));
		if (json_object_object_get_ex(r, "blockers", &p) &&
		    json_object_is_type(p, json_type_array) && json_object_array_length(p))
			pr->blockers = 1;
		if (pr->order) {
			plan->nr_selected++;
			plan->selected_move_bytes += pr->move_bytes;
			if (pr->seconds >= 0)
				plan->selected_seconds += pr->seconds;
		}
	}
	ret = 0;
out:
	json_object_put(o);
	if (ret)
		mr_plan_destroy(plan);
	return ret;
}

int mr_plan_check_machine(const struct mr_plan *plan, const char *mpst_file)
{
	char boot[48], hash[32];
	unsigned i, k;
	int ret;

	read_boot_id(boot, sizeof(boot));
	if (!plan->boot_id[0] || strcmp(plan->boot_id, boot) != 0)
		return mr_error(-ESTALE, "plan %s was made for boot %s, this machine runs "
				"boot %s: make a new plan", plan->id,
				plan->boot_id[0] ? plan->boot_id : "(none)", boot[0] ? boot : "(none)");
	if (plan->mpst_hash[0]) {
		if ((ret = mpst_hash(mpst_file, hash, sizeof(hash))))
			return ret;
		if (strcmp(hash, plan->mpst_hash) != 0)
			return mr_error(-ESTALE, "plan %s was made with MPST table %s, this machine's "
					"is %s: make a new plan", plan->id, plan->mpst_hash,
					hash[0] ? hash : "(none)");
	}
	for (i = 0; i < plan->nr_regions; i++) {
		const struct mr_plan_region *pr = &plan->regions[i];

		if (!pr->order)
			continue;
		for (k = 0; k < pr->nr_blocks; k++) {
			const struct mr_plan_block *pb = NULL;
			char state[16], zones[48];
			unsigned j;

			for (j = 0; j < plan->nr_blocks; j++)
				if (plan->blocks[j].block == pr->blocks[k])
					pb = &plan->blocks[j];
			if (!pb)
				return mr_error(-EINVAL, "plan %s: memory%" PRIu64 " of region %u has "
						"no recorded state", plan->id, pr->blocks[k], pr->id);
			if ((ret = block_file(pb->block, "state", state, sizeof(state))) ||
			    (ret = block_file(pb->block, "valid_zones", zones, sizeof(zones))))
				return mr_error_wrap(-ESTALE, "plan %s: region %u", plan->id, pr->id);
			if (strcmp(state, pb->state) || strcmp(zones, pb->zones))
				return mr_error(-ESTALE, "plan %s: memory%" PRIu64 " of region %u was "
						"%s (%s) when planned and is %s (%s) now: make a new plan",
						plan->id, pb->block, pr->id, pb->state, pb->zones,
						state, zones);
		}
	}
	return 0;
}
