/* Unit tests of the region map (regions/region.c and the sources): range joining,
 * overlap detection, region-of-phys, source names, discovery on small machines built
 * in a temporary root, occupancy per page and its fallback when a read fails, the
 * fixed source's size rule and 64 KiB slices of a 16 GiB machine. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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
#include "common/sys.h"
#include "regions/region.h"
#include "regions/source.h"

#define MIB (UINT64_C(1) << 20)
#define BLOCK (128 * MIB)

/* mr_sys_pread fails with the queued errno, or reads for real. */
ssize_t __real_mr_sys_pread(int fd, void *buf, size_t len, off_t off);
ssize_t __wrap_mr_sys_pread(int fd, void *buf, size_t len, off_t off);
static int pread_fail_errno;

ssize_t __wrap_mr_sys_pread(int fd, void *buf, size_t len, off_t off)
{
	if (pread_fail_errno) {
		errno = pread_fail_errno;
		return -1;
	}
	return __real_mr_sys_pread(fd, buf, len, off);
}

/* ---- range joining ---- */

struct add_case {
	const char *what;
	struct mr_range add[4];
	unsigned nr_add;
	struct mr_range want[4];
	unsigned nr_want;
};

static void test_add_range(void **state)
{
	static const struct add_case cases[] = {
		/* [0, 4) [8, 12) + [4, 8) -> [0, 12) */
		{ "fills a gap", { { 0, 4 }, { 8, 4 }, { 4, 4 } }, 3, { { 0, 12 } }, 1 },
		/* [8, 12) + [0, 4) -> [0, 4) [8, 12): sorted */
		{ "sorts", { { 8, 4 }, { 0, 4 } }, 2, { { 0, 4 }, { 8, 4 } }, 2 },
		/* [0, 4) + [2, 6) -> [0, 6) */
		{ "overlap", { { 0, 4 }, { 2, 4 } }, 2, { { 0, 6 } }, 1 },
		/* [4, 6) + [0, 10) -> [0, 10): swallowed */
		{ "inside", { { 4, 2 }, { 0, 10 } }, 2, { { 0, 10 } }, 1 },
		/* [0, 2) [4, 6) [8, 10) + [1, 9) -> [0, 10) */
		{ "spans three", { { 0, 2 }, { 4, 2 }, { 8, 2 }, { 1, 8 } }, 4, { { 0, 10 } }, 1 },
		/* [0, 2) [4, 6) [20, 22) + [5, 9) -> [0, 2) [4, 9) [20, 22) */
		{ "middle", { { 0, 2 }, { 4, 2 }, { 20, 2 }, { 5, 4 } }, 4,
		  { { 0, 2 }, { 4, 5 }, { 20, 2 } }, 3 },
		/* [10, 12) + [0, 10) -> [0, 12): touching from below */
		{ "touch below", { { 10, 2 }, { 0, 10 } }, 2, { { 0, 12 } }, 1 },
	};
	struct mr_region r;
	unsigned c, i;
	uint64_t total;

	for (c = 0; c < MR_ARRAY_SIZE(cases); c++) {
		memset(&r, 0, sizeof(r));
		for (i = 0; i < cases[c].nr_add; i++)
			assert_int_equal(mr_region_add_range(&r, cases[c].add[i].start,
							     cases[c].add[i].size), 0);
		if (r.nr_ranges != cases[c].nr_want)
			fail_msg("%s: %u ranges, expected %u", cases[c].what, r.nr_ranges,
				 cases[c].nr_want);
		total = 0;
		for (i = 0; i < r.nr_ranges; i++) {
			if (r.ranges[i].start != cases[c].want[i].start ||
			    r.ranges[i].size != cases[c].want[i].size)
				fail_msg("%s: range %u is [%llu, +%llu)", cases[c].what, i,
					 (unsigned long long)r.ranges[i].start,
					 (unsigned long long)r.ranges[i].size);
			total += cases[c].want[i].size;
		}
		assert_int_equal(r.size_bytes, total);
		free(r.ranges);
	}
	memset(&r, 0, sizeof(r));
	assert_int_equal(mr_region_add_range(&r, 4096, 0), -EINVAL);
	assert_int_equal(mr_region_add_range(&r, UINT64_MAX - 10, 11), -EINVAL);
	assert_int_equal(r.nr_ranges, 0);
}

/* ---- map finishing: sorting, ids, overlap notes; region of phys ---- */

static void test_finish_and_overlaps(void **state)
{
	struct mr_region_map map = { 0 };
	struct mr_region *r;

	/* Added out of order: [4G, 5G) (power node 9), [0, 1G) + [2G, 3G) (power node 3). */
	r = mr_region_new(&map);
	r->mpst_node_id = 9;
	assert_int_equal(mr_region_add_range(r, 4096 * MIB, 1024 * MIB), 0);
	r = mr_region_new(&map);
	r->mpst_node_id = 3;
	assert_int_equal(mr_region_add_range(r, 0, 1024 * MIB), 0);
	assert_int_equal(mr_region_add_range(r, 2048 * MIB, 1024 * MIB), 0);
	assert_int_equal(mr_region_map_finish(&map), 0);
	assert_int_equal(map.nr_notes, 0);
	assert_int_equal(map.regions[0].mpst_node_id, 3);
	assert_int_equal(map.regions[0].id, 0);
	assert_int_equal(map.regions[1].id, 1);

	/* Region of phys: both ranges of region 0, the edges, a hole, past the end. */
	assert_ptr_equal(mr_region_of_phys(&map, 0), &map.regions[0]);
	assert_ptr_equal(mr_region_of_phys(&map, 1024 * MIB - 1), &map.regions[0]);
	assert_null(mr_region_of_phys(&map, 1024 * MIB));
	assert_ptr_equal(mr_region_of_phys(&map, 2048 * MIB), &map.regions[0]);
	assert_ptr_equal(mr_region_of_phys(&map, 5120 * MIB - 1), &map.regions[1]);
	assert_null(mr_region_of_phys(&map, 5120 * MIB));
	assert_null(mr_region_of_phys(&map, UINT64_MAX));

	/* A third region overlapping both: [2.5G, 4.5G). */
	r = mr_region_new(&map);
	r->mpst_node_id = 5;
	assert_int_equal(mr_region_add_range(r, 2560 * MIB, 2048 * MIB), 0);
	assert_int_equal(mr_region_map_finish(&map), 0);
	assert_int_equal(map.nr_notes, 2);
	assert_string_equal(map.notes[0], "region 0 (power node 3) and region 1 (power node 5) "
			    "overlap: [0xa0000000, 0xc0000000)");
	assert_string_equal(map.notes[1], "region 1 (power node 5) and region 2 (power node 9) "
			    "overlap: [0x100000000, 0x120000000)");
	mr_region_map_destroy(&map);
	assert_null(map.regions);
}

static void test_source_names(void **state)
{
	enum mr_source s;
	unsigned i;

	for (i = 0; i < NR_MR_SOURCES; i++) {
		assert_int_equal(mr_source_parse(mr_source_name(i), &s), 0);
		assert_int_equal(s, i);
	}
	assert_int_equal(mr_source_parse("hwloc", &s), -EINVAL);
	assert_int_equal(mr_source_parse("", &s), -EINVAL);
	assert_int_equal(mr_source_parse("MPST", &s), -EINVAL);
	assert_string_equal(mr_source_name(NR_MR_SOURCES), "?");
}

/* ---- discovery on a machine built in a temporary root ---- */

static char root[PATH_MAX];

static void put_file(const char *path, const void *data, size_t len)
{
	char full[PATH_MAX], *p;
	FILE *f;

	snprintf(full, sizeof(full), "%s%s", root, path);
	for (p = full + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(full, 0755);
		*p = '/';
	}
	f = fopen(full, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static void put_str(const char *path, const char *s)
{
	put_file(path, s, strlen(s));
}

/* Blocks 0-3 on node 0 (CPUs), 8-11 on node 1 (no CPU): 512 MiB each, a hole between. */
static int machine_setup(void **state)
{
	static const int blocks[] = { 0, 1, 2, 3, 8, 9, 10, 11 };
	char path[256], v[64];
	unsigned i;

	snprintf(root, sizeof(root), "%s/memreg-test-region-XXXXXX", P_tmpdir);
	if (!mkdtemp(root))
		return -1;
	put_str("/sys/devices/system/memory/block_size_bytes", "8000000\n");
	for (i = 0; i < MR_ARRAY_SIZE(blocks); i++) {
		int node = blocks[i] < 8 ? 0 : 1;

		snprintf(path, sizeof(path), "/sys/devices/system/memory/memory%d/phys_index",
			 blocks[i]);
		snprintf(v, sizeof(v), "%08x\n", blocks[i]);
		put_str(path, v);
		snprintf(path, sizeof(path), "/sys/devices/system/memory/memory%d/state", blocks[i]);
		put_str(path, "online\n");
		snprintf(path, sizeof(path), "/sys/devices/system/memory/memory%d/valid_zones",
			 blocks[i]);
		put_str(path, node ? "Movable\n" : "Normal\n");
		snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/memory%d/.keep",
			 node, blocks[i]);
		put_str(path, "");
	}
	put_str("/sys/devices/system/node/node0/cpu0/.keep", "");
	put_str("/sys/devices/system/node/node0/meminfo",
		"Node 0 MemTotal:  524288 kB\nNode 0 MemFree:  262144 kB\n"
		"Node 0 Active:  65536 kB\nNode 0 Inactive:  65536 kB\n");
	put_str("/sys/devices/system/node/node1/meminfo",
		"Node 1 MemTotal:  524288 kB\nNode 1 MemFree:  524288 kB\n");
	assert_int_equal(mr_root_set(root), 0);
	return 0;
}

static int machine_teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	mr_root_set("/");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

static bool has_note(const struct mr_region_map *map, const char *s)
{
	unsigned i;

	for (i = 0; i < map->nr_notes; i++)
		if (strstr(map->notes[i], s))
			return true;
	return false;
}

static void test_machine_load(void **state)
{
	struct mr_machine m;
	struct mr_range *ranges;
	unsigned nr;

	assert_int_equal(mr_machine_load(&m), 0);
	/* block_size_bytes is hex without 0x: 0x8000000, not 8000000 decimal. */
	assert_int_equal(m.block_size_bytes, BLOCK);
	assert_int_equal(m.nr_blocks, 8);
	assert_int_equal(m.blocks[3].id, 3);
	assert_int_equal(m.blocks[3].node, 0);
	assert_int_equal(m.blocks[4].id, 8);
	assert_int_equal(m.blocks[4].node, 1);
	assert_string_equal(m.blocks[4].zones, "Movable");
	assert_string_equal(m.blocks[4].state, "online");
	assert_int_equal(m.nr_nodes, 2);
	assert_true(m.nodes[0].has_cpus);
	assert_false(m.nodes[1].has_cpus);
	assert_int_equal(m.nodes[0].total_bytes, 512 * MIB);
	assert_int_equal(m.nodes[0].lru_bytes, 128 * MIB);
	assert_int_equal(mr_machine_ranges(&m, &ranges, &nr), 0);
	assert_int_equal(nr, 2);
	assert_int_equal(ranges[0].start, 0);
	assert_int_equal(ranges[0].size, 4 * BLOCK);
	assert_int_equal(ranges[1].start, 8 * BLOCK);
	assert_int_equal(ranges[1].size, 4 * BLOCK);
	free(ranges);
	mr_machine_free(&m);
}

static void discover(struct mr_region_map *map, enum mr_source source, uint64_t size)
{
	struct mr_discover_opts o = { .source = source, .region_size_bytes = size };

	if (mr_region_map_discover(map, &o))
		fail_msg("discover %s: %s", mr_source_name(source), mr_last_error());
}

static void test_discover_numa_blocks_fixed(void **state)
{
	struct mr_region_map map;

	/* auto without MPST: two memory nodes, so numa. */
	discover(&map, MR_SOURCE_AUTO, 0);
	assert_int_equal(map.source, MR_SOURCE_NUMA);
	assert_true(has_note(&map, "auto: mpst skipped: no table"));
	assert_int_equal(map.nr_regions, 2);
	assert_int_equal(map.regions[1].node, 1);
	assert_false(map.regions[1].node_has_cpus);
	assert_true(map.regions[0].node_has_cpus);
	assert_int_equal(map.regions[1].ranges[0].start, 8 * BLOCK);
	assert_int_equal(map.regions[1].size_bytes, 4 * BLOCK);
	assert_int_equal(map.regions[1].nr_blocks, 4);
	assert_int_equal(map.regions[1].blocks[0], 8);
	assert_int_equal(map.regions[1].occ.granularity, MR_OCC_NONE);
	assert_true(has_note(&map, "placement: every region is its own NUMA node"));
	mr_region_map_destroy(&map);

	discover(&map, MR_SOURCE_BLOCKS, 0);
	assert_int_equal(map.nr_regions, 8);
	assert_int_equal(map.regions[4].blocks[0], 8);
	assert_int_equal(map.regions[4].node, 1);
	assert_true(has_note(&map, "(4 of 8 blocks here)"));
	mr_region_map_destroy(&map);

	/* 1 GiB slices: [0, 512M) alone, then [1G, 1.5G) alone (the hole between). */
	discover(&map, MR_SOURCE_FIXED, 1024 * MIB);
	assert_int_equal(map.nr_regions, 2);
	assert_int_equal(map.regions[1].ranges[0].start, 1024 * MIB);
	mr_region_map_destroy(&map);
	/* 256 MiB slices: 4 regions, block-aligned. */
	discover(&map, MR_SOURCE_FIXED, 256 * MIB);
	assert_int_equal(map.nr_regions, 4);
	assert_int_equal(map.regions[2].nr_blocks, 2);
	mr_region_map_destroy(&map);
	/* 3 GiB slices: both ranges in one slice, one region with two ranges. */
	discover(&map, MR_SOURCE_FIXED, 3072 * MIB);
	assert_int_equal(map.nr_regions, 1);
	assert_int_equal(map.regions[0].nr_ranges, 2);
	assert_int_equal(map.regions[0].node, -1);	/* spans two nodes */
	mr_region_map_destroy(&map);

	/* An explicit source the machine lacks is an error, not a fallback. */
	{
		struct mr_discover_opts o = { .source = MR_SOURCE_MPST };

		assert_int_equal(mr_region_map_discover(&map, &o), -ENOENT);
		assert_non_null(strstr(mr_last_error(), "no table at"));
	}
}

/* A small MPST: power node 7 at [0, 256M) and [1G, 1.25G) (repeated id), power node 2
 * at [128M, 512M) overlapping it, one state each. */
static void write_mpst(const char *linux_path)
{
	uint8_t t[256] = "MPST";
	size_t n = 44, i;
	uint8_t sum = 0;
	static const struct { uint16_t id; uint64_t addr, len; } nodes[] = {
		{ 7, 0, 256 * MIB }, { 2, 128 * MIB, 384 * MIB }, { 7, 1024 * MIB, 256 * MIB },
	};

	t[8] = 1;
	t[40] = 3;
	for (i = 0; i < 3; i++, n += 34) {
		t[n] = 0x03;
		t[n + 2] = (uint8_t)nodes[i].id;
		t[n + 4] = 34;
		memcpy(t + n + 8, &nodes[i].addr, 8);	/* little-endian host */
		memcpy(t + n + 16, &nodes[i].len, 8);
		t[n + 24] = 1;
		t[n + 32] = 1;		/* state 1 */
		t[n + 33] = 0;		/* characteristics 0 */
	}
	t[n] = 1;			/* one characteristics structure */
	n += 4;
	t[n] = 0x41;
	t[n + 1] = 0x07;
	t[n + 4] = 0x58;		/* 600 mW */
	t[n + 5] = 0x02;
	t[n + 12] = 0xee;		/* 750 ns */
	t[n + 13] = 0x02;
	n += 28;
	t[4] = (uint8_t)n;
	for (i = 0; i < n; i++)
		sum = (uint8_t)(sum + t[i]);
	t[9] = (uint8_t)-sum;
	put_file(linux_path, t, n);
}

static void test_discover_mpst(void **state)
{
	struct mr_region_map map;
	char path[PATH_MAX + 32];

	write_mpst("/sys/firmware/acpi/tables/MPST");
	discover(&map, MR_SOURCE_AUTO, 0);
	assert_int_equal(map.source, MR_SOURCE_MPST);
	assert_int_equal(map.nr_warnings, 0);
	assert_int_equal(map.nr_regions, 2);
	/* Sorted by start: power node 7 first, with both its ranges. */
	assert_int_equal(map.regions[0].mpst_node_id, 7);
	assert_int_equal(map.regions[0].nr_ranges, 2);
	assert_int_equal(map.regions[0].size_bytes, 512 * MIB);
	assert_int_equal(map.regions[0].nr_blocks, 4);	/* 0, 1 and 8, 9 */
	assert_int_equal(map.regions[0].blocks[2], 8);
	assert_int_equal(map.regions[0].node, -1);	/* nodes 0 and 1 */
	assert_int_equal(map.regions[0].nr_states, 1);
	assert_int_equal(map.regions[0].states[0].state, 1);
	assert_true(map.regions[0].states[0].has_characteristics);
	assert_int_equal(map.regions[0].states[0].average_power_mw, 600);
	assert_int_equal(map.regions[0].states[0].exit_latency_ns, 750);
	assert_int_equal(map.regions[0].states[0].flags, MR_PSTATE_MEMORY_PRESERVED |
			 MR_PSTATE_AUTO_ENTRY | MR_PSTATE_AUTO_EXIT);
	assert_int_equal(map.regions[1].mpst_node_id, 2);
	assert_int_equal(map.regions[1].node, 0);
	assert_int_equal(map.regions[1].nr_blocks, 3);	/* 1, 2, 3 */
	assert_true(has_note(&map, "region 0 (power node 7) and region 1 (power node 2) "
			     "overlap: [0x8000000, 0x10000000)"));
	mr_region_map_destroy(&map);

	/* --mpst FILE: a host path, read as is. */
	snprintf(path, sizeof(path), "%s/sys/firmware/acpi/tables/MPST", root);
	{
		struct mr_discover_opts o = { .mpst_file = path };

		assert_int_equal(mr_region_map_discover(&map, &o), 0);
		assert_int_equal(map.source, MR_SOURCE_MPST);
		assert_int_equal(map.nr_regions, 2);
		mr_region_map_destroy(&map);
	}

	/* A table that exists but is bad stops `auto`, naming the file. */
	put_str("/sys/firmware/acpi/tables/MPST", "MPST");
	{
		struct mr_discover_opts o = { .source = MR_SOURCE_AUTO };

		assert_int_equal(mr_region_map_discover(&map, &o), -EINVAL);
		assert_non_null(strstr(mr_last_error(), "/sys/firmware/acpi/tables/MPST: truncated"));
		assert_non_null(strstr(mr_last_error(), root));
	}
	snprintf(path, sizeof(path), "%s/sys/firmware/acpi/tables/MPST", root);
	unlink(path);
}

/* kpageflags for blocks 0-3 (pfns 0..131071) with a known mix, the rest missing. */
static void write_kpageflags(void)
{
	const size_t nr = 4 * BLOCK / 4096;
	uint64_t *f = calloc(nr, 8), *c = calloc(nr, 8);
	size_t i;

	assert_non_null(f);
	assert_non_null(c);
	for (i = 0; i < nr; i++) {
		if (i < 1000) {
			f[i] = UINT64_C(1) << 32;		/* reserved */
		} else if (i < 3000) {
			f[i] = UINT64_C(1) << 7;		/* slab */
			c[i] = 1;
		} else if (i < 10000) {
			f[i] = (UINT64_C(1) << 5) | (UINT64_C(1) << 12);	/* LRU anon */
			c[i] = 1;
		} else if (i < 11000) {
			c[i] = 1;			/* no flags, one user: kernel */
		} else if (i < 12000) {
			f[i] = UINT64_C(1) << 20;	/* no page */
		} else if (i % 512 == 0) {
			f[i] = UINT64_C(1) << 10;	/* buddy head */
		}
	}
	put_file("/proc/kpageflags", f, nr * 8);
	put_file("/proc/kpagecount", c, nr * 8);
	free(f);
	free(c);
}

static void test_occupancy(void **state)
{
	struct mr_discover_opts o = { .source = MR_SOURCE_NUMA, .occupancy = true };
	struct mr_region_map map;
	char path[PATH_MAX + 32];
	long page = sysconf(_SC_PAGESIZE);

	if (page != 4096)
		skip();
	write_kpageflags();
	assert_int_equal(mr_region_map_discover(&map, &o), 0);
	/* Node 0's region: every page counted once. Node 1's region is past the files'
	 * end: nothing counted, no error. */
	assert_int_equal(map.regions[0].occ.granularity, MR_OCC_PAGE);
	assert_int_equal(map.regions[0].occ.unmovable_bytes, (1000 + 2000 + 1000) * 4096);
	assert_int_equal(map.regions[0].occ.movable_bytes, 7000 * 4096);
	assert_int_equal(map.regions[0].occ.free_bytes,
			 (4 * BLOCK / 4096 - 12000) * 4096);
	assert_int_equal(map.regions[1].occ.granularity, MR_OCC_PAGE);
	assert_int_equal(map.regions[1].occ.free_bytes + map.regions[1].occ.movable_bytes +
			 map.regions[1].occ.unmovable_bytes, 0);
	assert_true(has_note(&map, "free is an estimate"));
	mr_region_map_destroy(&map);

	/* A read that fails: node meminfo instead, and the note says why. */
	pread_fail_errno = EIO;
	assert_int_equal(mr_region_map_discover(&map, &o), 0);
	pread_fail_errno = 0;
	assert_int_equal(map.regions[0].occ.granularity, MR_OCC_NODE);
	assert_int_equal(map.regions[0].occ.free_bytes, 256 * MIB);
	assert_int_equal(map.regions[0].occ.movable_bytes, 128 * MIB);
	assert_int_equal(map.regions[0].occ.unmovable_bytes, 128 * MIB);
	assert_int_equal(map.regions[1].occ.free_bytes, 512 * MIB);
	assert_true(has_note(&map, "granularity node): /proc/kpageflags could not be read "
			     "(Input/output error)"));
	mr_region_map_destroy(&map);

	/* No kpageflags at all (not root, or a capture without it): node meminfo too. */
	snprintf(path, sizeof(path), "%s/proc/kpageflags", root);
	unlink(path);
	assert_int_equal(mr_region_map_discover(&map, &o), 0);
	assert_int_equal(map.regions[1].occ.granularity, MR_OCC_NODE);
	assert_true(has_note(&map, "there is no /proc/kpageflags"));
	mr_region_map_destroy(&map);
}

/* block_size_bytes that is not hex, or not a power of two: one line naming the file. */
static void test_bad_block_size(void **state)
{
	struct mr_discover_opts o = { .source = MR_SOURCE_BLOCKS };
	struct mr_region_map map;

	put_str("/sys/devices/system/memory/block_size_bytes", "128M\n");
	assert_int_equal(mr_region_map_discover(&map, &o), -EINVAL);
	assert_non_null(strstr(mr_last_error(), "block_size_bytes: not a hex number"));
	put_str("/sys/devices/system/memory/block_size_bytes", "6000000\n");
	assert_int_equal(mr_region_map_discover(&map, &o), -EINVAL);
	assert_non_null(strstr(mr_last_error(), "not a power of two"));
	put_str("/sys/devices/system/memory/block_size_bytes", "8000000\n");
}

/* ---- fixed slicing: the size rule, and scale ---- */

/* A page-size multiple of at least 64 KiB; anything else refused with the reason. */
static void test_fixed_size_check(void **state)
{
	struct mr_discover_opts o = { .source = MR_SOURCE_FIXED, .region_size_bytes = 4097 };
	struct mr_region_map map;
	char want[128];
	long page = sysconf(_SC_PAGESIZE);

	assert_int_equal(mr_fixed_size_check(MR_FIXED_MIN_BYTES), 0);
	assert_int_equal(mr_fixed_size_check(512 * MIB), 0);
	snprintf(want, sizeof(want), "region size 4097 bytes: not a multiple of the page size "
		 "(%ld bytes)", page);
	assert_int_equal(mr_fixed_size_check(4097), -EINVAL);
	assert_string_equal(mr_last_error(), want);
	/* The discovery refuses it too, whoever calls it. */
	assert_int_equal(mr_region_map_discover(&map, &o), -EINVAL);
	assert_string_equal(mr_last_error(), want);
	/* 32 KiB: whole pages on 4 and 16 KiB page machines, but too small. */
	if (32768 % page == 0) {
		assert_int_equal(mr_fixed_size_check(32768), -EINVAL);
		assert_string_equal(mr_last_error(), "region size 32768 bytes: below the smallest "
				    "meaningful one (64 KiB)");
	}
	assert_int_equal(mr_fixed_size_check(0), -EINVAL);
}

/* 16 GiB in 128 blocks, 8 GiB a node: 64 KiB slices are 262144 regions. Occupancy per
 * node spreads each node's meminfo over them; it was quadratic in the regions (minutes
 * here), now one pass. No timing is asserted: the counts must be right. */
#define BIG_NODE_BLOCKS 64u
static int big_setup(void **state)
{
	char path[256], v[64];
	unsigned i, node;

	snprintf(root, sizeof(root), "%s/memreg-test-region-XXXXXX", P_tmpdir);
	if (!mkdtemp(root))
		return -1;
	put_str("/sys/devices/system/memory/block_size_bytes", "8000000\n");
	for (i = 0; i < 2 * BIG_NODE_BLOCKS; i++) {
		node = i / BIG_NODE_BLOCKS;
		snprintf(path, sizeof(path), "/sys/devices/system/memory/memory%u/state", i);
		put_str(path, "online\n");
		snprintf(path, sizeof(path), "/sys/devices/system/node/node%u/memory%u/.keep",
			 node, i);
		put_str(path, "");
	}
	for (node = 0; node < 2; node++) {
		snprintf(path, sizeof(path), "/sys/devices/system/node/node%u/meminfo", node);
		snprintf(v, sizeof(v), "Node %u MemTotal:  8388608 kB\nNode %u MemFree:  %u kB\n",
			 node, node, node ? 4194304u : 2097152u);
		put_str(path, v);
	}
	assert_int_equal(mr_root_set(root), 0);
	return 0;
}

static void test_fixed_64k_scale(void **state)
{
	struct mr_discover_opts o = { .source = MR_SOURCE_FIXED, .occupancy = true,
				      .skip_hwloc = true, .region_size_bytes = 64 * 1024 };
	uint64_t free_bytes[2] = { 0, 0 };
	struct mr_region_map map;
	const struct mr_region *r;
	unsigned nr[2] = { 0, 0 };

	if (sysconf(_SC_PAGESIZE) > 65536)
		skip();
	assert_int_equal(mr_region_map_discover(&map, &o), 0);
	assert_int_equal(map.nr_regions, 2 * BIG_NODE_BLOCKS * (BLOCK / 65536));
	mr_for_each_region(&map, r) {
		assert_int_equal(r->nr_ranges, 1);
		assert_int_equal(r->ranges[0].start, (uint64_t)r->id * 65536);
		assert_int_equal(r->size_bytes, 65536);
		assert_in_range(r->node, 0, 1);
		assert_int_equal(r->node, r->id / (BIG_NODE_BLOCKS * (BLOCK / 65536)));
		assert_int_equal(r->occ.granularity, MR_OCC_NODE);
		nr[r->node]++;
		free_bytes[r->node] += r->occ.free_bytes;
	}
	assert_int_equal(nr[0], BIG_NODE_BLOCKS * (BLOCK / 65536));
	assert_int_equal(nr[1], nr[0]);
	/* Node 0: 2 GiB free over 131072 regions, 16 KiB each; node 1: 4 GiB, 32 KiB. */
	assert_int_equal(map.regions[0].occ.free_bytes, 16 * 1024);
	assert_int_equal(map.regions[map.nr_regions - 1].occ.free_bytes, 32 * 1024);
	assert_int_equal(free_bytes[0], 2048 * MIB);
	assert_int_equal(free_bytes[1], 4096 * MIB);
	mr_region_map_destroy(&map);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add_range),
		cmocka_unit_test(test_finish_and_overlaps),
		cmocka_unit_test(test_source_names),
	};
	const struct CMUnitTest machine_tests[] = {
		cmocka_unit_test(test_machine_load),
		cmocka_unit_test(test_discover_numa_blocks_fixed),
		cmocka_unit_test(test_discover_mpst),
		cmocka_unit_test(test_occupancy),
		cmocka_unit_test(test_bad_block_size),
		cmocka_unit_test(test_fixed_size_check),
	};
	const struct CMUnitTest big_tests[] = {
		cmocka_unit_test(test_fixed_64k_scale),
	};
	int failed;

	failed = cmocka_run_group_tests(tests, NULL, NULL);
	failed += cmocka_run_group_tests(machine_tests, machine_setup, machine_teardown);
	failed += cmocka_run_group_tests(big_tests, big_setup, machine_teardown);
	return failed ? 1 : 0;
}
