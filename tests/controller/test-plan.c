/* Unit tests of the evacuation planner on copies of the fixture machines
 * (build/tests/fixtures/server-2s-mpst and cxl-cpuless), with hand-computed ranking,
 * cost and saving, every refusal, the plan file round trip and the machine check.
 *
 * server-2s-mpst: node 0 regions 0-3 (Normal or "none" blocks), node 1 regions 4-7
 * of 1 GiB each; node 1's meminfo spreads 192 MiB movable, 64 MiB unmovable and
 * 768 MiB free over each of its regions; node 0 has 3 GiB free. MPST state 0 is
 * 5000 mW, state 1 (self-refresh, entered by the platform) 600 mW. Distance 10/20. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/root.h"
#include "common/util.h"
#include "controller/plan.h"

#define MiB (UINT64_C(1) << 20)
#define GiB (UINT64_C(1) << 30)

static char root[] = "/tmp/mr-test-plan-XXXXXX";
static char planfile[600];
static struct mr_region_map map;
static struct mr_power_model model;

static void put(const char *rel, const char *content)
{
	char p[600], *s;
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	for (s = p + strlen(root) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		mkdir(p, 0755);
		*s = '/';
	}
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(content, f);
	fclose(f);
}

static void blocks_zone(unsigned first, unsigned last, const char *zone)
{
	char rel[128];
	unsigned b;

	for (b = first; b <= last; b++) {
		snprintf(rel, sizeof(rel), "sys/devices/system/memory/memory%u/valid_zones", b);
		put(rel, zone);
	}
}

/* A fresh copy of fixture @name as the root, with a boot id, and its map and model. */
static void load(const char *name)
{
	struct mr_discover_opts o = { .source = MR_SOURCE_AUTO, .occupancy = true,
				      .skip_hwloc = true };
	const char *b = getenv("top_builddir");
	char cmd[1200];

	mr_region_map_destroy(&map);
	mr_power_model_destroy(&model);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir -p '%s' && cp -r '%s/tests/fixtures/%s/.' '%s'",
		 root, root, b ? b : ".", name, root);
	assert_int_equal(system(cmd), 0);
	put("proc/sys/kernel/random/boot_id", "11111111-2222-3333-4444-555555555555\n");
	if (strcmp(name, "server-2s-mpst") == 0)
		blocks_zone(56, 87, "Movable\n");	/* node 1's blocks can go */
	assert_int_equal(mr_root_set(root), 0);
	assert_int_equal(mr_region_map_discover(&map, &o), 0);
	assert_int_equal(mr_power_model_build(&model, &map, NULL), 0);
}

static const struct mr_plan_region *region(const struct mr_plan *p, unsigned id)
{
	unsigned i;

	for (i = 0; i < p->nr_regions; i++)
		if (p->regions[i].id == id)
			return &p->regions[i];
	fail_msg("no region %u in the plan", id);
	return NULL;
}

static void make(const struct mr_plan_opts *o, struct mr_plan *p)
{
	assert_int_equal(mr_plan_make(&map, &model, o, p), 0);
}

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(root))
		return -1;
	snprintf(planfile, sizeof(planfile), "%s.plan", root);
	return 0;
}

static int teardown(void **state)
{
	char cmd[700];

	(void)state;
	mr_region_map_destroy(&map);
	mr_power_model_destroy(&model);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", root, planfile);
	return system(cmd);
}

/* Ranking, cost and saving on server-2s-mpst, no record (standby). */
static void test_mpst_rank_cost_saving(void **state)
{
	struct mr_plan_opts o = { .goal = MR_PLAN_GOAL_FREE, .goal_bytes = 2 * GiB,
				  .move_rate_bytes_per_s = 64 * MiB };
	const struct mr_plan_region *r;
	struct mr_plan p;
	unsigned i, idx[8];

	(void)state;
	load("server-2s-mpst");
	make(&o, &p);
	assert_string_equal(p.boot_id, "11111111-2222-3333-4444-555555555555");
	assert_int_equal(strncmp(p.mpst_hash, "fnv1a64:", 8), 0);
	assert_int_equal(p.nr_warnings, 0);
	/* Node 1's regions, equal in cost and saving, rank by id; node 0's are blocked. */
	for (i = 0; i < 4; i++) {
		r = &p.regions[i];
		assert_int_equal(r->id, 4 + i);
		assert_int_equal(r->rank, i + 1);
		assert_int_equal(r->blockers, 0);
		assert_int_equal(r->move_bytes, 192 * MiB);
		assert_int_equal(r->nr_blocks, 8);
		/* 192 MiB at 64 MiB/s. */
		assert_true(r->seconds == 3.0);
		/* Standby 5000 mW, self-refresh entered by the platform 600 mW. */
		assert_true(r->now_mw == 5000.0);
		assert_true(r->noaccess_mw == 600.0);
		assert_true(r->saving_mw == 4400.0);
		/* All of it to node 0 (distance 20): node 1 is the region's own. */
		assert_int_equal(r->nr_dests, 1);
		assert_int_equal(r->dests[0].node, 0);
		assert_int_equal(r->dests[0].distance, 20);
		assert_int_equal(r->dests[0].bytes, 192 * MiB);
	}
	/* --free 2G: two regions of 1 GiB, cheapest (then lowest id) first. */
	assert_int_equal(p.nr_selected, 2);
	assert_int_equal(mr_plan_order(&p, idx, 8), 2);
	assert_int_equal(p.regions[idx[0]].id, 4);
	assert_int_equal(p.regions[idx[1]].id, 5);
	assert_int_equal(p.selected_bytes, 2 * GiB);
	assert_int_equal(p.selected_move_bytes, 384 * MiB);
	assert_true(p.selected_seconds == 6.0);
	assert_true(p.selected_saving_mw == 8800.0);
	assert_true(p.goal_met);
	/* Node 0's regions: not Movable, said per block. */
	r = region(&p, 0);
	assert_int_equal(r->blockers, 1u << MR_BLOCKER_ZONE);
	assert_string_equal(r->reasons[MR_BLOCKER_ZONE],
			    "memory0 is in zone none, not Movable (it spans zones)");
	r = region(&p, 2);
	assert_string_equal(r->reasons[MR_BLOCKER_ZONE], "memory40 is in zone Normal, not Movable");
	assert_int_equal(r->rank, 6);	/* blocked: 0, 2, 3 (307 MiB movable), then 1 */
	mr_plan_destroy(&p);
}

/* Residency from a record: saving = power at the residency - the self-refresh power. */
static void test_mpst_saving_residency(void **state)
{
	struct mr_residency_region rr[8] = {
		[4] = { .intervals = 10, .idle_intervals = 0 },
		[5] = { .intervals = 10, .idle_intervals = 4 },
		[6] = { .intervals = 10, .idle_intervals = 10 },
		[7] = { .intervals = 10, .idle_intervals = 5 },
	};
	struct mr_residency res = { .scope = MR_RESIDENCY_PHYSICAL, .interval_us = 100000,
				    .regions = rr, .nr_regions = 8, .from = "test.rec" };
	struct mr_plan_opts o = { .goal = MR_PLAN_GOAL_POWER, .goal_mw = 6000, .residency = &res };
	struct mr_plan p;
	unsigned idx[8];

	(void)state;
	load("server-2s-mpst");
	make(&o, &p);
	/* 5: 5000 x 0.6 + 600 x 0.4 = 3240 mW today, saving 2640.
	 * 7: 5000 x 0.5 + 600 x 0.5 = 2800, saving 2200. 6: idle all along: 0. */
	assert_true(region(&p, 4)->saving_mw == 4400.0);
	assert_true(region(&p, 5)->now_mw == 3240.0);
	assert_true(region(&p, 5)->saving_mw == 2640.0);
	assert_true(region(&p, 6)->now_mw == 600.0);
	assert_true(region(&p, 6)->saving_mw == 0.0);
	assert_true(region(&p, 7)->saving_mw == 2200.0);
	/* A power goal ranks by saving: 4, 5, 7, 6. */
	assert_int_equal(p.regions[0].id, 4);
	assert_int_equal(p.regions[1].id, 5);
	assert_int_equal(p.regions[2].id, 7);
	assert_int_equal(p.regions[3].id, 6);
	/* 6 W: 4400 + 2640 = 7040 mW from two regions. */
	assert_int_equal(mr_plan_order(&p, idx, 8), 2);
	assert_true(p.selected_saving_mw == 7040.0);
	assert_true(p.goal_met);
	assert_string_equal(p.residency_from, "test.rec");
	/* No move rate: the time is unknown, and the plan says so. */
	assert_true(region(&p, 4)->seconds < 0);
	mr_plan_destroy(&p);
}

/* No room on the nodes the kernel may use: alone, and once earlier regions took it. */
static void test_no_room(void **state)
{
	struct mr_plan_opts o = { .goal = MR_PLAN_GOAL_REGIONS, .goal_regions = 4 };
	struct mr_plan p;
	unsigned i;

	(void)state;
	load("server-2s-mpst");
	/* Node 0 keeps 400 MiB free: 100 MiB in each of its regions. */
	for (i = 0; i < 4; i++)
		map.regions[i].occ.free_bytes = 100 * MiB;
	make(&o, &p);
	assert_int_equal(p.nr_selected, 2);	/* 2 x 192 MiB fit in 400 MiB */
	assert_false(p.goal_met);
	assert_int_equal(region(&p, 6)->blockers, 1u << MR_BLOCKER_NO_ROOM);
	assert_string_equal(region(&p, 6)->reasons[MR_BLOCKER_NO_ROOM],
			    "192 MiB to move, but the nodes the kernel may use (other nodes "
			    "with memory) have 16 MiB free");
	mr_plan_destroy(&p);

	/* 150 MiB in all: no region fits even alone. */
	for (i = 0; i < 4; i++)
		map.regions[i].occ.free_bytes = 150 * MiB / 4;
	make(&o, &p);
	assert_int_equal(p.nr_selected, 0);
	assert_int_equal(region(&p, 4)->blockers, 1u << MR_BLOCKER_NO_ROOM);
	assert_string_equal(region(&p, 4)->reasons[MR_BLOCKER_NO_ROOM],
			    "192 MiB to move, but the nodes the kernel may use (other nodes "
			    "with memory) have 150 MiB free");
	mr_plan_destroy(&p);
}

/* Two regions that would each send their pages to the other's node: no order empties
 * one without filling the other, so the second is refused. */
static void test_order_cycle(void **state)
{
	struct mr_plan_opts o = { .goal = MR_PLAN_GOAL_REGIONS, .goal_regions = 2 };
	struct mr_plan p;

	(void)state;
	load("server-2s-mpst");
	blocks_zone(40, 47, "Movable\n");	/* region 2, node 0, can go too */
	map.regions[2].occ.movable_bytes = 100 * MiB;	/* the cheapest */
	make(&o, &p);
	assert_int_equal(p.regions[0].id, 2);
	assert_int_equal(p.regions[0].order, 1);
	assert_int_equal(p.regions[0].dests[0].node, 1);
	assert_int_equal(p.nr_selected, 1);
	assert_false(p.goal_met);
	assert_int_equal(region(&p, 4)->blockers, 1u << MR_BLOCKER_ORDER);
	assert_string_equal(region(&p, 4)->reasons[MR_BLOCKER_ORDER],
			    "its pages would go to a node the plan empties later, and that "
			    "node's to its own");
	mr_plan_destroy(&p);
}

/* Unmovable pages (counted per page), hugetlb, bound processes. */
static void test_blockers(void **state)
{
	struct mr_plan_opts o = { .scan_processes = true };
	struct mr_plan p;

	(void)state;
	load("server-2s-mpst");
	map.regions[5].occ.granularity = MR_OCC_PAGE;
	map.regions[5].occ.unmovable_bytes = 4 * MiB;
	make(&o, &p);
	assert_int_equal(region(&p, 5)->blockers, 1u << MR_BLOCKER_UNMOVABLE);
	assert_string_equal(region(&p, 5)->reasons[MR_BLOCKER_UNMOVABLE],
			    "4096 KiB of unmovable pages (slab, page tables, reserved, ...)");
	/* Per node, unmovable memory is not a blocker: Movable blocks hold none. */
	assert_int_equal(region(&p, 4)->blockers, 0);
	assert_int_equal(p.nr_selected, 0);	/* no goal: nothing selected */
	mr_plan_destroy(&p);

	put("sys/devices/system/node/node1/hugepages/hugepages-2048kB/nr_hugepages", "4\n");
	put("sys/devices/system/node/node1/hugepages/hugepages-2048kB/free_hugepages", "1\n");
	map.regions[5].occ.granularity = MR_OCC_NODE;
	make(&o, &p);
	assert_int_equal(region(&p, 4)->blockers, 1u << MR_BLOCKER_HUGETLB);
	assert_string_equal(region(&p, 4)->reasons[MR_BLOCKER_HUGETLB],
			    "node 1 has 6144 KiB of hugetlb pages in use, maybe in this region "
			    "(no kpageflags to tell)");
	mr_plan_destroy(&p);
	put("sys/devices/system/node/node1/hugepages/hugepages-2048kB/nr_hugepages", "1\n");

	put("proc/4242/comm", "db\n");
	put("proc/4242/numa_maps", "7f0000000000 default anon=3 N0=3\n"
	    "7f1000000000 bind:1 anon=10 dirty=10 N1=10 kernelpagesize_kB=4\n");
	put("proc/4343/comm", "web\n");
	put("proc/4343/numa_maps", "7f0000000000 prefer:1 anon=3 N1=3\n");
	make(&o, &p);
	assert_int_equal(region(&p, 7)->blockers, 1u << MR_BLOCKER_BOUND);
	assert_string_equal(region(&p, 7)->reasons[MR_BLOCKER_BOUND],
			    "1 process bound to node 1 would have pages moved off it: "
			    "4242 (db, numa_maps bind:)");
	mr_plan_destroy(&p);

	/* cpuset.mems narrower than the nodes with memory. */
	unlink(strcat(strcpy((char[700]){ 0 }, root), "/proc/4242/numa_maps"));
	put("sys/devices/system/node/has_memory", "0-1\n");
	put("proc/4242/cpuset", "/pinned\n");
	put("sys/fs/cgroup/pinned/cpuset.mems.effective", "1\n");
	put("proc/4343/cpuset", "/\n");
	put("sys/fs/cgroup/cpuset.mems.effective", "0-1\n");
	make(&o, &p);
	assert_string_equal(region(&p, 4)->reasons[MR_BLOCKER_BOUND],
			    "1 process bound to node 1 would have pages moved off it: "
			    "4242 (db, cpuset.mems)");
	mr_plan_destroy(&p);
}

/* MPST warnings: listed in the plan, --apply refused unless --force names them. */
static void test_mpst_warnings(void **state)
{
	struct mr_plan_opts o = { 0 };
	struct mr_discover_opts d = { .source = MR_SOURCE_AUTO, .skip_hwloc = true };
	struct mr_plan p;
	char path[700];
	FILE *f;

	(void)state;
	load("server-2s-mpst");
	/* One byte of the table changed: its bytes no longer sum to 0. */
	snprintf(path, sizeof(path), "%s/sys/firmware/acpi/tables/MPST", root);
	f = fopen(path, "r+b");
	assert_non_null(f);
	fseek(f, 9, SEEK_SET);
	fputc(0x00, f);
	fclose(f);
	mr_region_map_destroy(&map);
	assert_int_equal(mr_region_map_discover(&map, &d), 0);
	map.regions[6].mpst_flags &= ~MR_MPST_ENABLED;
	make(&o, &p);
	assert_int_equal(p.nr_warnings, 2);
	assert_string_equal(p.warnings[0].kind, "checksum");
	assert_non_null(strstr(p.warnings[0].text, "checksum mismatch"));
	assert_string_equal(p.warnings[1].kind, "disabled");
	assert_string_equal(p.warnings[1].text, "MPST: power node 6 (region 6) is not enabled");
	assert_int_equal(mr_plan_check_forced(p.warnings, p.nr_warnings, NULL), -EPERM);
	assert_non_null(strstr(mr_last_error(), "refusing --apply unless --force checksum"));
	assert_int_equal(mr_plan_check_forced(p.warnings, p.nr_warnings, "checksum"), -EPERM);
	assert_non_null(strstr(mr_last_error(), "--force disabled accepts it"));
	assert_int_equal(mr_plan_check_forced(p.warnings, p.nr_warnings, "disabled,checksum"), 0);
	/* The guard of every --apply: nothing to check without it. */
	assert_int_equal(mr_plan_guard_apply(p.warnings, p.nr_warnings, NULL, false, NULL), 0);
	assert_int_equal(mr_plan_guard_apply(p.warnings, p.nr_warnings, NULL, true, NULL), -EPERM);
	/* --mpst FILE is fine against a fixture root, refused with --apply on the live one
	 * (nothing is applied here: the guard only answers). */
	assert_int_equal(mr_plan_guard_apply(NULL, 0, "x.aml", true, NULL), 0);
	assert_int_equal(mr_root_set("/"), 0);
	assert_int_equal(mr_plan_guard_apply(NULL, 0, "x.aml", true, NULL), -EPERM);
	assert_string_equal(mr_last_error(), "--mpst x.aml is not this machine's table: refusing "
			    "--apply on the live machine (its regions may not be where the file says)");
	assert_int_equal(mr_plan_guard_apply(NULL, 0, "x.aml", false, NULL), 0);
	assert_int_equal(mr_root_set(root), 0);
	mr_plan_destroy(&p);
}

/* The plan file: written, read back, its version and its machine checked. */
static void test_plan_file(void **state)
{
	struct mr_plan_opts o = { .goal = MR_PLAN_GOAL_REGIONS, .goal_regions = 2,
				  .move_rate_bytes_per_s = 64 * MiB, .move_rate_from = "test" };
	struct mr_plan p, q;
	char cmd[1500];

	(void)state;
	load("server-2s-mpst");
	make(&o, &p);
	assert_int_equal(mr_plan_write(&p, planfile), 0);
	assert_int_equal(mr_plan_read(planfile, &q), 0);
	assert_string_equal(q.id, p.id);
	assert_string_equal(q.boot_id, p.boot_id);
	assert_string_equal(q.mpst_hash, p.mpst_hash);
	assert_int_equal(q.nr_selected, 2);
	assert_int_equal(q.selected_move_bytes, 384 * MiB);
	assert_int_equal(q.nr_regions, 8);
	assert_int_equal(region(&q, 5)->order, 2);
	assert_int_equal(region(&q, 5)->nr_blocks, 8);
	assert_int_equal(region(&q, 5)->blocks[0], 64);
	assert_int_equal(mr_plan_check_machine(&q, NULL), 0);

	/* Another boot. */
	put("proc/sys/kernel/random/boot_id", "99999999-2222-3333-4444-555555555555\n");
	assert_int_equal(mr_plan_check_machine(&q, NULL), -ESTALE);
	assert_non_null(strstr(mr_last_error(), "was made for boot 11111111-2222-3333-4444-"
			       "555555555555, this machine runs boot 99999999-"));
	put("proc/sys/kernel/random/boot_id", "11111111-2222-3333-4444-555555555555\n");
	/* A block of a selected region changed. */
	put("sys/devices/system/memory/memory65/state", "offline\n");
	assert_int_equal(mr_plan_check_machine(&q, NULL), -ESTALE);
	assert_non_null(strstr(mr_last_error(), "memory65 of region 5 was online (Movable) when "
			       "planned and is offline (Movable) now"));
	put("sys/devices/system/memory/memory65/state", "online\n");
	mr_plan_destroy(&q);

	/* Version 1 (no pre-move) is still read; a later one is not. */
	snprintf(cmd, sizeof(cmd), "sed -i 's/\"version\": *2,/\"version\": 1,/' '%s'", planfile);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(mr_plan_read(planfile, &q), 0);
	assert_int_equal(q.version, 1);
	assert_int_equal(region(&q, 5)->premove_node, -1);
	mr_plan_destroy(&q);
	snprintf(cmd, sizeof(cmd), "sed -i 's/\"version\": *1,/\"version\": 3,/' '%s'", planfile);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(mr_plan_read(planfile, &q), -EPROTO);
	assert_non_null(strstr(mr_last_error(), "plan format version 3, this memregctl reads "
			       "versions 1 to 2"));
	/* Not a plan. */
	put("x.json", "{\"version\": 1}\n");
	snprintf(cmd, sizeof(cmd), "%s/x.json", root);
	assert_int_equal(mr_plan_read(cmd, &q), -EINVAL);
	assert_non_null(strstr(mr_last_error(), "not a memreg plan"));
	mr_plan_destroy(&p);
}

/*
 * A process under the root with @nr pages mapped from 0x400000 on, page i at frame
 * @pfns[i] (its maps, pagemap and stat: started @start ticks after boot).
 */
static void fake_proc(int pid, const char *comm, uint64_t start, const uint64_t *pfns,
		      unsigned nr)
{
	char rel[128], text[300], path[700];
	unsigned i;
	FILE *f;

	snprintf(rel, sizeof(rel), "proc/%d/comm", pid);
	snprintf(text, sizeof(text), "%s\n", comm);
	put(rel, text);
	snprintf(rel, sizeof(rel), "proc/%d/stat", pid);
	snprintf(text, sizeof(text), "%d (%s) S 1 %d %d 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 "
		 "%llu 0 0\n", pid, comm, pid, pid, (unsigned long long)start);
	put(rel, text);
	snprintf(rel, sizeof(rel), "proc/%d/maps", pid);
	snprintf(text, sizeof(text), "00400000-%08llx rw-p 00000000 00:00 0\n",
		 0x400000ull + nr * 4096ull);
	put(rel, text);
	snprintf(path, sizeof(path), "%s/proc/%d/pagemap", root, pid);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0x400 * 8, SEEK_SET), 0);
	for (i = 0; i < nr; i++) {
		uint64_t e = (UINT64_C(1) << 63) | pfns[i];

		assert_int_equal(fwrite(&e, 8, 1, f), 1);
	}
	fclose(f);
}

/*
 * The pre-move on server-2s-mpst (4 KiB pages; region 4 is frames 0x1c0000-0x1fffff,
 * region 5 0x200000-0x23ffff, region 0 0x0-0x3ffff):
 *   pid 4242 "hog": 512 pages in region 4, 256 in region 5, 256 in region 0
 *   pid 4343 "db":  256 pages in region 5
 * --regions 2 takes 4 then 5, each sending its 192 MiB to node 0 (distance 20):
 *   region 4: pre-move 2 MiB (4242) to node 0; region 5: 2 MiB (4242 1 MiB, 4343
 *   1 MiB) to node 0; the destinations stay node 0 192 MiB.
 * --to 1 is refused: the plan empties regions on node 1.
 * Regions 6 and 7 moved to a node 2 (no distance known: it comes last), --regions 1:
 *   region 4 sends 192 MiB to node 0; --to 2 moves 2 MiB to node 2 first:
 *   destinations node 2 2 MiB, node 0 190 MiB; with 512 KiB free in each of
 *   regions 6 and 7 (1 MiB on node 2), --to 2 is refused (-ENOSPC).
 */
static void test_premove(void **state)
{
	struct mr_plan_opts o = { .goal = MR_PLAN_GOAL_REGIONS, .goal_regions = 2,
				  .move_rate_bytes_per_s = 64 * MiB, .scan_processes = true };
	uint64_t hog[1024], db[256];
	const struct mr_plan_region *r;
	struct mr_plan p, q;
	unsigned i;

	(void)state;
	load("server-2s-mpst");
	for (i = 0; i < 512; i++)
		hog[i] = 0x1c0000 + i;
	for (i = 0; i < 256; i++) {
		hog[512 + i] = 0x200000 + 2 * i;
		hog[768 + i] = 0x100 + i;
		db[i] = 0x200001 + 2 * i;
	}
	fake_proc(4242, "hog", 100, hog, 1024);
	fake_proc(4343, "db", 200, db, 256);
	make(&o, &p);
	assert_int_equal(p.premove_to, -1);
	r = region(&p, 4);
	assert_int_equal(r->order, 1);
	assert_int_equal(r->premove_node, 0);
	assert_int_equal(r->premove_bytes, 2 * MiB);
	assert_int_equal(r->nr_procs, 1);
	assert_int_equal(r->procs[0].pid, 4242);
	assert_int_equal(r->procs[0].starttime_ticks, 100);
	assert_string_equal(r->procs[0].comm, "hog");
	assert_int_equal(r->procs[0].bytes, 2 * MiB);
	assert_int_equal(r->nr_dests, 1);
	assert_int_equal(r->dests[0].node, 0);
	assert_int_equal(r->dests[0].bytes, 192 * MiB);
	r = region(&p, 5);
	assert_int_equal(r->order, 2);
	assert_int_equal(r->premove_node, 0);
	assert_int_equal(r->premove_bytes, 2 * MiB);
	assert_int_equal(r->nr_procs, 2);
	assert_int_equal(r->procs[0].bytes + r->procs[1].bytes, 2 * MiB);
	/* Not selected: no pre-move, no processes looked for. */
	r = region(&p, 6);
	assert_int_equal(r->premove_node, -1);
	assert_int_equal(r->nr_procs, 0);
	/* The plan file keeps it. */
	assert_int_equal(mr_plan_write(&p, planfile), 0);
	assert_int_equal(mr_plan_read(planfile, &q), 0);
	assert_int_equal(q.version, 2);
	assert_int_equal(q.premove_to, -1);
	r = region(&q, 4);
	assert_int_equal(r->premove_node, 0);
	assert_int_equal(r->premove_bytes, 2 * MiB);
	assert_int_equal(r->nr_procs, 1);
	assert_int_equal(r->procs[0].pid, 4242);
	assert_int_equal(r->procs[0].starttime_ticks, 100);
	assert_string_equal(r->procs[0].comm, "hog");
	assert_string_equal(region(&q, 6)->premove_note, "");
	mr_plan_destroy(&q);
	mr_plan_destroy(&p);

	/* --to 0 is the same; --to 1 is a node the plan empties. */
	o.to_set = true;
	o.to_node = 0;
	make(&o, &p);
	assert_int_equal(p.premove_to, 0);
	assert_int_equal(region(&p, 5)->premove_node, 0);
	mr_plan_destroy(&p);
	o.to_node = 1;
	assert_int_equal(mr_plan_make(&map, &model, &o, &p), -EINVAL);
	assert_string_equal(mr_last_error(), "--to node 1: the plan empties region 4 on it");
	o.to_node = 3;
	assert_int_equal(mr_plan_make(&map, &model, &o, &p), -EINVAL);
	assert_string_equal(mr_last_error(), "--to node 3: it has no online memory");

	/* A third node: regions 6 and 7 on node 2. */
	map.regions[6].node = 2;
	map.regions[7].node = 2;
	o.goal_regions = 1;
	o.to_node = 2;
	make(&o, &p);
	r = region(&p, 4);
	assert_int_equal(r->order, 1);
	assert_int_equal(r->premove_node, 2);
	assert_int_equal(r->premove_bytes, 2 * MiB);
	assert_int_equal(r->nr_dests, 2);
	assert_int_equal(r->dests[0].node, 2);
	assert_int_equal(r->dests[0].bytes, 2 * MiB);
	assert_int_equal(r->dests[1].node, 0);
	assert_int_equal(r->dests[1].bytes, 190 * MiB);
	mr_plan_destroy(&p);
	/* Without --to, the nearest with room: node 0, as the kernel would. */
	o.to_set = false;
	make(&o, &p);
	r = region(&p, 4);
	assert_int_equal(r->premove_node, 0);
	assert_int_equal(r->nr_dests, 1);
	mr_plan_destroy(&p);
	/* 1 MiB free on node 2 is not room for 2 MiB. */
	map.regions[6].occ.free_bytes = 512 * 1024;
	map.regions[7].occ.free_bytes = 512 * 1024;
	o.to_set = true;
	assert_int_equal(mr_plan_make(&map, &model, &o, &p), -ENOSPC);
	assert_string_equal(mr_last_error(), "--to node 2: region 4 would pre-move 2 MiB there, "
			    "and node 2 has 1 MiB free once the plan's other pages are placed");
	/* Not scanning processes: no pre-move, said so. */
	o.to_set = false;
	o.scan_processes = false;
	make(&o, &p);
	r = region(&p, 4);
	assert_int_equal(r->premove_node, -1);
	assert_string_equal(r->premove_note, "processes not scanned: the offline moves every page");
	mr_plan_destroy(&p);
}

/* cxl-cpuless: region 1 is node 1 (CPU-less, 4 GiB, 1 GiB movable, Movable blocks),
 * region 0 is node 0 (2 GiB free, blocks not Movable), distance 30. No MPST: the
 * datasheet model. */
static void test_cxl(void **state)
{
	struct mr_plan_opts o = { .goal = MR_PLAN_GOAL_FREE, .goal_bytes = 1,
				  .move_rate_bytes_per_s = 256 * MiB };
	const struct mr_plan_region *r;
	const struct mr_region_power *pw;
	struct mr_plan p;

	(void)state;
	load("cxl-cpuless");
	make(&o, &p);
	assert_string_equal(p.mpst_hash, "");
	r = &p.regions[0];
	assert_int_equal(r->id, 1);
	assert_int_equal(r->order, 1);
	assert_int_equal(r->move_bytes, 1 * GiB);
	assert_int_equal(r->nr_blocks, 32);
	assert_true(r->seconds == 4.0);		/* 1 GiB at 256 MiB/s */
	assert_int_equal(r->nr_dests, 1);
	assert_int_equal(r->dests[0].node, 0);
	assert_int_equal(r->dests[0].distance, 30);
	assert_int_equal(r->dests[0].bytes, 1 * GiB);
	/* The datasheet model: precharge power-down is what an idle rank enters. */
	pw = &model.regions[1];
	assert_int_equal(r->low_state, -1);
	assert_true(r->now_mw == pw->active_mw);
	assert_true(r->saving_mw == pw->active_mw - pw->low_mw);
	assert_true(r->saving_mw > 0);
	assert_int_equal(p.regions[1].blockers, 1u << MR_BLOCKER_ZONE);
	mr_plan_destroy(&p);

	/* 2 GiB free on node 0 is not room for 3 GiB. */
	map.regions[1].occ.movable_bytes = 3 * GiB;
	make(&o, &p);
	assert_int_equal(p.nr_selected, 0);
	assert_string_equal(region(&p, 1)->reasons[MR_BLOCKER_NO_ROOM],
			    "3072 MiB to move, but the nodes the kernel may use (other nodes "
			    "with memory) have 2048 MiB free");
	mr_plan_destroy(&p);
}

/* The offline rate of an earlier evacuation in this boot times the next plan. */
static void test_rate_file(void **state)
{
	char rel[300], from[300];
	uint64_t rate = 0;

	(void)state;
	load("server-2s-mpst");
	assert_int_equal(mr_plan_rate_load(&rate, from, sizeof(from)), -ENOENT);
	snprintf(rel, sizeof(rel), "%s/lib/memreg/move-rate", MR_LOCALSTATEDIR + 1);
	put(rel, "boot=11111111-2222-3333-4444-555555555555 bytes=134217728 ns=4000000000 "
	    "time=1\n");
	assert_int_equal(mr_plan_rate_load(&rate, from, sizeof(from)), 0);
	assert_int_equal(rate, 32 * MiB);	/* 128 MiB in 4 s */
	assert_non_null(strstr(from, "measured: memregctl evacuate took 128 MiB offline in "
			       "4.000 s in this boot"));
	/* Another boot's rate is not this machine's any more. */
	put(rel, "boot=99999999-2222-3333-4444-555555555555 bytes=134217728 ns=4000000000 "
	    "time=1\n");
	assert_int_equal(mr_plan_rate_load(&rate, from, sizeof(from)), -ENOENT);
	/* Saving is a change: refused under a fixture root. */
	assert_int_equal(mr_plan_rate_save(1, 1), -EROFS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mpst_rank_cost_saving),
		cmocka_unit_test(test_mpst_saving_residency),
		cmocka_unit_test(test_no_room),
		cmocka_unit_test(test_order_cycle),
		cmocka_unit_test(test_blockers),
		cmocka_unit_test(test_mpst_warnings),
		cmocka_unit_test(test_plan_file),
		cmocka_unit_test(test_premove),
		cmocka_unit_test(test_cxl),
		cmocka_unit_test(test_rate_file),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
