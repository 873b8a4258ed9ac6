/* Unit tests of the placement primitives (regions/pagemap.c, move.c, blocks.c):
 * pagemap and numa_maps parsing against a fixture root, a live pagemap walk whose
 * process exits or execs during it (children of the test, read only), move_pages
 * status accounting with mr_sys_move_pages wrapped, offline planning, refusal,
 * rollback, time-out and the state file with an injected block writer (the state
 * file itself: tests/unit/test-blockstate.c). Nothing here writes to the kernel:
 * the writer is a fake, and plans read a fixture tree. */
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
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/root.h"
#include "common/sys.h"
#include "common/util.h"
#include "regions/placement.h"

#define PAGE 4096u

static char fixture[PATH_MAX];
static char statedir[PATH_MAX + 8];

static void mkdirs(const char *path)
{
	char buf[2 * PATH_MAX], *p;

	snprintf(buf, sizeof(buf), "%s", path);
	for (p = buf + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(buf, 0755);
			*p = '/';
		}
	mkdir(buf, 0755);
}

/* Write @len bytes at @off of FIXTURE/@rel (creating directories). */
static void put(const char *rel, const void *data, size_t len, off_t off)
{
	char path[2 * PATH_MAX], dir[2 * PATH_MAX], *slash;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", fixture, rel);
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	*slash = '\0';
	mkdirs(dir);
	fd = open(path, O_WRONLY | O_CREAT | (off ? 0 : O_TRUNC), 0644);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, data, len, off), (ssize_t)len);
	close(fd);
}

static void puts_file(const char *rel, const char *s)
{
	put(rel, s, strlen(s), 0);
}

static int setup(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	assert_true(strlen(fixture) < PATH_MAX);
	snprintf(fixture, sizeof(fixture), "/tmp/memreg-test-placement.XXXXXX");
	assert_non_null(mkdtemp(fixture));
	snprintf(statedir, sizeof(statedir), "%s-state", fixture);
	snprintf(cmd, sizeof(cmd), "%s", statedir);
	mkdirs(cmd);
	setenv("MEMREG_STATE_DIR", statedir, 1);
	assert_int_equal(mr_root_set(fixture), 0);
	return 0;
}

static int teardown(void **state)
{
	char cmd[2 * PATH_MAX + 32];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", fixture, statedir);
	assert_int_equal(system(cmd), 0);
	return 0;
}

/*
 * A two-node map: region 0 = [0, 1 MiB) on node 0 (blocks 0-1 of 512 KiB),
 * region 1 = [1 MiB, 2 MiB) on node 1 (blocks 2-3).
 */
static struct mr_range ranges[2] = { { 0, 1u << 20 }, { 1u << 20, 1u << 20 } };
static uint64_t blocks0[] = { 0, 1 }, blocks1[] = { 2, 3 };
static struct mr_region regions[2];
static struct mr_region_map map;

static void make_map(void)
{
	memset(regions, 0, sizeof(regions));
	regions[0] = (struct mr_region){ .id = 0, .node = 0, .ranges = &ranges[0], .nr_ranges = 1,
					 .size_bytes = 1u << 20, .blocks = blocks0, .nr_blocks = 2 };
	regions[1] = (struct mr_region){ .id = 1, .node = 1, .ranges = &ranges[1], .nr_ranges = 1,
					 .size_bytes = 1u << 20, .blocks = blocks1, .nr_blocks = 2 };
	map = (struct mr_region_map){ .source = MR_SOURCE_MPST, .regions = regions,
				      .nr_regions = 2, .block_size_bytes = 512u << 10 };
}

/* ---------------------------------------------------------------- where */

static void test_pagemap_entry(void **state)
{
	uint64_t pfn = 0;

	(void)state;
	assert_true(mr_pagemap_entry_pfn((UINT64_C(1) << 63) | 0x1234, &pfn));
	assert_int_equal(pfn, 0x1234);
	/* Present, frame hidden (no CAP_SYS_ADMIN): not usable. */
	assert_false(mr_pagemap_entry_pfn(UINT64_C(1) << 63, &pfn));
	/* Swapped (bit 62) or absent. */
	assert_false(mr_pagemap_entry_pfn((UINT64_C(1) << 62) | 0x55, &pfn));
	assert_false(mr_pagemap_entry_pfn(0, &pfn));
	/* Soft-dirty and exclusive bits (55, 56) are not part of the frame. */
	assert_true(mr_pagemap_entry_pfn((UINT64_C(1) << 63) | (UINT64_C(3) << 55) | 7, &pfn));
	assert_int_equal(pfn, 7);
}

static void test_numa_maps_line(void **state)
{
	uint64_t nb[MR_MAX_NODES] = { 0 };

	(void)state;
	assert_int_equal(mr_numa_maps_parse_line("7f0000000000 default anon=10 dirty=10 N0=3 "
						 "N1=7 kernelpagesize_kB=4\n", nb), 0);
	assert_int_equal(nb[0], 3 * 4096);
	assert_int_equal(nb[1], 7 * 4096);
	/* The page size comes after the counts: 2 huge pages on node 2. */
	assert_int_equal(mr_numa_maps_parse_line("7f0000200000 bind:2 huge dirty=2 N2=2 "
						 "kernelpagesize_kB=2048", nb), 0);
	assert_int_equal(nb[2], 4u << 20);
	/* No size: 4 KiB pages. Mapping with no node counts adds nothing. */
	assert_int_equal(mr_numa_maps_parse_line("400000 default file=/bin/x mapped=1 N1=1", nb), 0);
	assert_int_equal(nb[1], 8 * 4096);
	assert_int_equal(mr_numa_maps_parse_line("400000 default", nb), 0);
	/* Malformed counts are refused, not skipped. */
	assert_int_equal(mr_numa_maps_parse_line("400000 default N1", nb), -EINVAL);
	assert_int_equal(mr_numa_maps_parse_line("400000 default N1=x", nb), -EINVAL);
	assert_int_equal(mr_numa_maps_parse_line("400000 default N99999=1", nb), -EINVAL);
	assert_int_equal(mr_numa_maps_parse_line("400000 default N1=1 kernelpagesize_kB=0", nb),
			 -EINVAL);
}

static void put_pagemap(const char *rel, uint64_t vpn, const uint64_t *e, size_t n)
{
	put(rel, e, n * 8, (off_t)(vpn * 8));
}

static void test_where_pagemap(void **state)
{
	/* 0x400000-0x404000: 4 pages; frames in region 0, region 1, absent, none. */
	uint64_t e[4] = {
		(UINT64_C(1) << 63) | 0x10,		/* 64 KiB: region 0 */
		(UINT64_C(1) << 63) | 0x180,		/* 1.5 MiB: region 1 */
		0,					/* not present */
		(UINT64_C(1) << 63) | 0x1000,		/* 16 MiB: in no region */
	};
	struct mr_where w;

	(void)state;
	make_map();
	puts_file("proc/42/maps", "00400000-00404000 rw-p 00000000 00:00 0 \n"
		  "00500000-00502000 ---p 00000000 00:00 0 \n"
		  "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0 [vsyscall]\n");
	put("proc/42/pagemap", "", 0, 0);
	put_pagemap("proc/42/pagemap", 0x400, e, 4);
	/* a PROT_NONE mapping (a reservation) is not read, whatever its entries say */
	put_pagemap("proc/42/pagemap", 0x500, e, 2);
	assert_int_equal(mr_where_pid(&map, 42, &w), 0);
	assert_int_equal(w.source, MR_WHERE_PAGEMAP);
	assert_int_equal(w.region_bytes[0], PAGE);
	assert_int_equal(w.region_bytes[1], PAGE);
	assert_int_equal(w.unplaced_bytes, PAGE);
	assert_int_equal(w.total_bytes, 3 * PAGE);
	assert_int_equal(w.node_bytes[0], PAGE);
	assert_int_equal(w.node_bytes[1], PAGE);
	mr_where_destroy(&w);
}

/* ---- a live pagemap whose address space goes away during the walk ----
 * A child with its mappings written waits for a byte on a pipe, then exits or execs
 * sleep; the walk's callback sends the byte at the first chunk and waits until it
 * happened, so the walk's later reads find the address space gone. */

struct gone {
	pid_t pid;
	int go;			/* the child's pipe */
	bool exec;
	unsigned chunks;
};

static bool child_is_sleep(pid_t pid)
{
	char path[64], exe[PATH_MAX];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	if (n <= 0)
		return false;
	exe[n] = '\0';
	return strstr(exe, "sleep") != NULL;
}

static int gone_chunk(uint64_t vaddr, const uint64_t *e, size_t nr, void *arg)
{
	struct gone *g = arg;

	(void)vaddr;
	(void)e;
	(void)nr;
	if (g->chunks++)
		return 0;
	assert_int_equal(write(g->go, "x", 1), 1);
	if (g->exec) {
		for (int i = 0; i < 1000 && !child_is_sleep(g->pid); i++)
			usleep(10000);
		assert_true(child_is_sleep(g->pid));
	} else {
		assert_int_equal(waitpid(g->pid, NULL, 0), g->pid);
	}
	return 0;
}

static pid_t start_child(int *go)
{
	int ready[2], gop[2];
	char c;
	pid_t pid;

	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(gop), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* mappings apart (alternate protections), so the walk reads each on its own */
		for (int i = 0; i < 8; i++) {
			char *m = mmap(NULL, 1u << 20, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			if (m == MAP_FAILED)
				_exit(99);
			memset(m, 1, 1u << 20);
			if (i % 2)
				mprotect(m, 1u << 20, PROT_READ);
		}
		if (write(ready[1], "r", 1) != 1 || read(gop[0], &c, 1) != 1)
			_exit(98);
		if (c == 'x' && getenv("MR_TEST_CHILD_EXEC"))
			execl("/bin/sleep", "sleep", "30", (char *)NULL);
		_exit(0);
	}
	close(ready[1]);
	close(gop[0]);
	assert_int_equal(read(ready[0], &c, 1), 1);
	close(ready[0]);
	*go = gop[1];
	return pid;
}

static void walk_gone(bool exec)
{
	struct gone g = { .exec = exec };
	int ret;

	assert_int_equal(mr_root_set("/"), 0);
	if (exec)
		setenv("MR_TEST_CHILD_EXEC", "1", 1);
	g.pid = start_child(&g.go);
	unsetenv("MR_TEST_CHILD_EXEC");
	ret = mr_pagemap_walk(g.pid, 0, UINT64_MAX, 0, gone_chunk, &g);
	if (exec) {
		kill(g.pid, SIGKILL);
		waitpid(g.pid, NULL, 0);
	}
	close(g.go);
	/* Before: 0, the walk ended at the first read that found nothing, as if at the
	 * end of a fixture's file, its result a part of the process's pages. */
	assert_int_equal(ret, -ESRCH);
	assert_non_null(strstr(mr_last_error(), "exited or exec'd during the walk"));
	assert_int_equal(g.chunks, 1);
}

static void test_pagemap_walk_exit(void **state)
{
	(void)state;
	walk_gone(false);
}

static void test_pagemap_walk_exec(void **state)
{
	(void)state;
	walk_gone(true);
}

/* mr_where_pid reads a process that exec'd during the walk again: a read that
 * finds nothing (as after an exec) made to happen once, on this process. */
static int pread_zero_at = -1, pread_calls;
long __real_mr_root_pread(int fd, void *buf, size_t len, uint64_t off);
long __wrap_mr_root_pread(int fd, void *buf, size_t len, uint64_t off);
long __wrap_mr_root_pread(int fd, void *buf, size_t len, uint64_t off)
{
	if (pread_calls++ == pread_zero_at)
		return 0;
	return __real_mr_root_pread(fd, buf, len, off);
}

static void test_where_exec_again(void **state)
{
	struct mr_where clean, w;

	(void)state;
	make_map();
	assert_int_equal(mr_root_set("/"), 0);
	assert_int_equal(mr_where_pid(&map, getpid(), &clean), 0);
	assert_true(clean.total_bytes > 0);
	pread_calls = 0;
	pread_zero_at = 1;
	assert_int_equal(mr_where_pid(&map, getpid(), &w), 0);
	pread_zero_at = -1;
	assert_true(pread_calls > 2);
	/* counted once, from the second walk: not the first walk's part added to it */
	assert_true(w.total_bytes <= clean.total_bytes + (clean.total_bytes >> 3));
	assert_true(w.total_bytes >= clean.total_bytes - (clean.total_bytes >> 3));
	mr_where_destroy(&clean);
	mr_where_destroy(&w);
}

static void test_where_numa_maps_fallback(void **state)
{
	/* Present pages with the frame hidden: numa_maps decides. */
	uint64_t e[2] = { UINT64_C(1) << 63, UINT64_C(1) << 63 };
	struct mr_where w;

	(void)state;
	make_map();
	puts_file("proc/43/maps", "00400000-00402000 rw-p 00000000 00:00 0 \n");
	put("proc/43/pagemap", "", 0, 0);
	put_pagemap("proc/43/pagemap", 0x400, e, 2);
	puts_file("proc/43/numa_maps", "00400000 default anon=2 dirty=2 N0=1 N1=2 "
		  "kernelpagesize_kB=4\n");
	assert_int_equal(mr_where_pid(&map, 43, &w), 0);
	assert_int_equal(w.source, MR_WHERE_NUMA_MAPS);
	assert_int_equal(w.region_bytes[0], PAGE);
	assert_int_equal(w.region_bytes[1], 2 * PAGE);
	assert_int_equal(w.total_bytes, 3 * PAGE);
	assert_int_equal(w.unplaced_bytes, 0);
	mr_where_destroy(&w);

	/* Two regions on node 1: its bytes are per node only. */
	regions[0].node = 1;
	assert_int_equal(mr_where_pid(&map, 43, &w), 0);
	assert_int_equal(w.region_bytes[0], 0);
	assert_int_equal(w.region_bytes[1], 0);
	assert_int_equal(w.unplaced_bytes, 3 * PAGE);
	mr_where_destroy(&w);

	/* A malformed numa_maps line names the file. */
	puts_file("proc/43/numa_maps", "00400000 default N0=zz\n");
	assert_int_equal(mr_where_pid(&map, 43, &w), -EINVAL);
	assert_non_null(strstr(mr_last_error(), "/proc/43/numa_maps:1"));
}

/* ---------------------------------------------------------------- move */

/*
 * The fake kernel: 8 pages at 0x10000. Where they are before the move (query, nodes
 * NULL) and what the move returns for each, per attempt:
 *   page 0: on node 3 already        page 4: moves
 *   page 1: -ENOENT (not present)    page 5: -EBUSY once, then moves
 *   page 2: -EFAULT (zero page)      page 6: -ENOMEM
 *   page 3: -EACCES (shared)         page 7: -EBUSY always
 */
static unsigned move_calls, query_calls, busy_seen[8];

long __wrap_mr_sys_move_pages(int pid, unsigned long count, void **pages, const int *nodes,
			      int *status, int flags);
long __wrap_mr_sys_move_pages(int pid, unsigned long count, void **pages, const int *nodes,
			      int *status, int flags)
{
	static const int where[8] = { 3, -ENOENT, -EFAULT, -EACCES, 0, 0, 0, 0 };
	unsigned long i;

	(void)flags;
	if (pid == 666) {
		errno = ESRCH;
		return -1;
	}
	if (!nodes)
		query_calls++;
	else
		move_calls++;
	for (i = 0; i < count; i++) {
		unsigned p = (unsigned)(((uintptr_t)pages[i] - 0x10000) / PAGE);

		assert_true(p < 8);
		if (!nodes) {
			status[i] = where[p];
			continue;
		}
		assert_int_equal(nodes[i], 3);
		switch (p) {
		case 4: status[i] = 3; break;
		case 5: status[i] = busy_seen[5]++ ? 3 : -EBUSY; break;
		case 6: status[i] = -ENOMEM; break;
		case 7: busy_seen[7]++; status[i] = -EBUSY; break;
		default: fail_msg("page %u should not be moved", p);
		}
	}
	return 0;
}

static void test_move_accounting(void **state)
{
	struct mr_move_opts o = { .pid = 7, .node = 3, .apply = true, .busy_retries = 2,
				  .batch_pages = 3 };
	struct mr_move_stats st;

	(void)state;
	/* a 1 GiB PROT_NONE reservation holds nothing to move: not one of the pages */
	puts_file("proc/7/maps", "00010000-00018000 rw-p 00000000 00:00 0 \n"
		  "00018000-40018000 ---p 00000000 00:00 0 \n"
		  "7fff00000000-7fff00001000 r--p 00000000 00:00 0 [vvar]\n");
	memset(busy_seen, 0, sizeof(busy_seen));
	move_calls = query_calls = 0;
	assert_int_equal(mr_move_pid(&o, &st), 0);
	assert_int_equal(st.pages, 8);
	assert_int_equal(st.already, 1);
	assert_int_equal(st.absent, 2);
	assert_int_equal(st.to_move, 4);
	assert_int_equal(st.moved, 2);
	assert_int_equal(st.failed_access, 1);
	assert_int_equal(st.failed_nomem, 1);
	assert_int_equal(st.failed_busy, 1);
	assert_int_equal(busy_seen[7], 3);	/* first try and two retries */
	assert_int_equal(st.busy_retried, 3);	/* pages 5, 7; then 7 */
	assert_int_equal(mr_move_failed_pages(&st), 3);
	assert_int_equal(query_calls, 3);	/* batches of 3: pages 0-2, 3-5, 6-7 */

	/* Without apply: only asked where, nothing moved. */
	o.apply = false;
	move_calls = 0;
	assert_int_equal(mr_move_pid(&o, &st), 0);
	assert_int_equal(move_calls, 0);
	assert_int_equal(st.to_move, 4);
	assert_int_equal(st.moved, 0);

	/* A range: only pages 4-5. */
	o.apply = true;
	o.start = 0x14000;
	o.end = 0x16000;
	memset(busy_seen, 0, sizeof(busy_seen));
	assert_int_equal(mr_move_pid(&o, &st), 0);
	assert_int_equal(st.pages, 2);
	assert_int_equal(st.moved, 2);

	/* A failure of the whole call is an error, with the pid in the message. */
	o.pid = 666;
	o.start = o.end = 0;
	puts_file("proc/666/maps", "00010000-00011000 rw-p 00000000 00:00 0 \n");
	assert_int_equal(mr_move_pid(&o, &st), -ESRCH);
	assert_non_null(strstr(mr_last_error(), "pid 666"));
}

/*
 * The region filter (an evacuation's pre-move): pid 8 maps the same 8 pages; its
 * pagemap puts pages 4 and 5 in the region (frames 0x100-0x1ff), page 1 nowhere (not
 * present), the others in frames outside it. Only pages 4 and 5 are asked about and
 * moved (page 5 after one -EBUSY).
 */
static void test_move_region_filter(void **state)
{
	static const uint64_t frame[8] = { 0x10, 0, 0x2000, 0x30, 0x100, 0x1ff, 0x200, 0xff };
	struct mr_range range = { 0x100 * PAGE, 0x100 * PAGE };
	struct mr_region r = { .id = 2, .node = 1, .ranges = &range, .nr_ranges = 1 };
	struct mr_move_opts o = { .pid = 8, .node = 3, .apply = true, .region = &r };
	struct mr_move_stats st;
	char path[PATH_MAX + 32];
	unsigned i;
	FILE *f;

	(void)state;
	puts_file("proc/8/maps", "00010000-00018000 rw-p 00000000 00:00 0 \n");
	snprintf(path, sizeof(path), "%s/proc/8/pagemap", fixture);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0x10 * 8, SEEK_SET), 0);
	for (i = 0; i < 8; i++) {
		uint64_t e = frame[i] ? (UINT64_C(1) << 63) | frame[i] : 0;

		assert_int_equal(fwrite(&e, 8, 1, f), 1);
	}
	fclose(f);
	memset(busy_seen, 0, sizeof(busy_seen));
	move_calls = query_calls = 0;
	assert_int_equal(mr_move_pid(&o, &st), 0);
	assert_int_equal(st.pages, 2);
	assert_int_equal(st.to_move, 2);
	assert_int_equal(st.moved, 2);
	assert_int_equal(st.busy_retried, 1);
	assert_int_equal(mr_move_failed_pages(&st), 0);
	assert_int_equal(query_calls, 1);

	/* Frames hidden (not root): the region's pages cannot be found. */
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0x10 * 8, SEEK_SET), 0);
	for (i = 0; i < 8; i++) {
		uint64_t e = UINT64_C(1) << 63;

		assert_int_equal(fwrite(&e, 8, 1, f), 1);
	}
	fclose(f);
	assert_int_equal(mr_move_pid(&o, &st), -EPERM);
	assert_string_equal(mr_last_error(), "pid 8: page frames are hidden (not root): the "
			    "pages in a region cannot be found");
}

/* ---------------------------------------------------------------- offline */

static void block(unsigned n, const char *state, const char *zones)
{
	char rel[128];

	snprintf(rel, sizeof(rel), "sys/devices/system/memory/memory%u/state", n);
	puts_file(rel, state);
	snprintf(rel, sizeof(rel), "sys/devices/system/memory/memory%u/valid_zones", n);
	puts_file(rel, zones);
}

static void test_offline_plan(void **state)
{
	struct mr_block_plan plan;

	(void)state;
	make_map();
	block(2, "online\n", "Movable\n");
	block(3, "online\n", "Movable\n");
	assert_int_equal(mr_offline_plan(&map, &regions[1], &plan), 0);
	assert_int_equal(plan.nr_blocks, 2);
	assert_int_equal(plan.blocks[0], 2);
	assert_int_equal(plan.blocks[1], 3);
	mr_block_plan_destroy(&plan);

	/* Already offline: skipped. */
	block(2, "offline\n", "Normal Movable\n");
	assert_int_equal(mr_offline_plan(&map, &regions[1], &plan), 0);
	assert_int_equal(plan.nr_blocks, 1);
	assert_int_equal(plan.skipped, 1);
	assert_int_equal(plan.blocks[0], 3);
	mr_block_plan_destroy(&plan);

	/* A block outside the Movable zone: the whole region is refused. */
	block(2, "online\n", "Movable\n");
	block(3, "online\n", "Normal\n");
	assert_int_equal(mr_offline_plan(&map, &regions[1], &plan), -EBUSY);
	assert_non_null(strstr(mr_last_error(), "memory3"));
	assert_non_null(strstr(mr_last_error(), "Normal"));
	assert_null(plan.blocks);

	/* A block listed for the region but outside its physical range. */
	block(3, "online\n", "Movable\n");
	ranges[1].size = 512u << 10;
	assert_int_equal(mr_offline_plan(&map, &regions[1], &plan), -EINVAL);
	assert_non_null(strstr(mr_last_error(), "memory3 is not inside region 1"));
	ranges[1].size = 1u << 20;

	/* Online plan: the offline blocks only; memreg took none of them (no state
	 * file), so only --all brings it back, Movable. */
	block(3, "offline\n", "Movable\n");
	assert_int_equal(mr_online_plan(&map, &regions[1], false, &plan), 0);
	assert_int_equal(plan.nr_blocks, 0);
	assert_int_equal(plan.skipped, 1);	/* memory2: online */
	assert_int_equal(plan.not_ours, 1);	/* memory3: offline, not memreg's */
	mr_block_plan_destroy(&plan);
	assert_int_equal(mr_online_plan(&map, &regions[1], true, &plan), 0);
	assert_int_equal(plan.nr_blocks, 1);
	assert_int_equal(plan.blocks[0], 3);
	assert_int_equal(plan.zones[0], MR_ZONE_UNKNOWN);
	mr_block_plan_destroy(&plan);
}

/* The fake writer: records every call; fails the offline of @fail_block with
 * @fail_err, sleeping past the deadline first when @fail_err is -EINTR. */
struct fake {
	char log[512];
	uint64_t fail_block;
	int fail_err;
};

static bool state_file_has(uint64_t b)
{
	char want[32], line[256];
	bool found = false;
	FILE *f = fopen(mr_block_state_path(), "r");

	if (!f)
		return false;
	snprintf(want, sizeof(want), "memory%llu ", (unsigned long long)b);
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, want, strlen(want)) == 0)
			found = true;
	fclose(f);
	return found;
}

static int fake_set_state(uint64_t b, const char *st, uint64_t deadline_ns, void *ctx)
{
	struct fake *f = ctx;
	size_t len = strlen(f->log);

	snprintf(f->log + len, sizeof(f->log) - len, "%s%s:%llu", len ? " " : "", st,
		 (unsigned long long)b);
	if (strcmp(st, "offline") == 0) {
		/* Recorded before the write, so a crash here is recoverable. */
		assert_true(state_file_has(b));
		if (b == f->fail_block) {
			if (f->fail_err == -EINTR)
				while (mr_now_ns() < deadline_ns)
					usleep(1000);
			return mr_error(f->fail_err, "memory%llu: fake failure",
					(unsigned long long)b);
		}
	}
	return 0;
}

static void test_apply_refusal(void **state)
{
	uint64_t b[] = { 10, 11 };
	struct mr_block_plan plan = { .action = MR_BLOCK_OFFLINE, .blocks = b, .nr_blocks = 2 };
	struct fake f = { .fail_block = UINT64_MAX };
	struct mr_block_ops ops = { .set_state = fake_set_state, .ctx = &f };
	struct mr_block_result res;

	(void)state;
	/* Under a fixture root: never, even with --apply. */
	assert_int_equal(mr_block_plan_apply(&plan, 0, true, &ops, &res), -EROFS);
	assert_string_equal(f.log, "");
	assert_int_equal(mr_block_state_prune(true), -EROFS);
	/* On the live root without --apply: nothing written, not even the state file. */
	assert_int_equal(mr_root_set("/"), 0);
	assert_int_equal(mr_block_plan_apply(&plan, 0, false, &ops, &res), -EPERM);
	assert_string_equal(f.log, "");
	assert_false(state_file_has(10));
	assert_int_equal(mr_block_state_prune(false), -EPERM);
}

static void test_apply_rollback(void **state)
{
	uint64_t b[] = { 10, 11, 12 };
	struct mr_block_plan plan = { .action = MR_BLOCK_OFFLINE, .blocks = b, .nr_blocks = 3 };
	struct fake f = { .fail_block = 12, .fail_err = -EBUSY };
	struct mr_block_ops ops = { .set_state = fake_set_state, .ctx = &f };
	struct mr_block_result res;

	(void)state;
	assert_int_equal(mr_root_set("/"), 0);	/* the fake writes nothing */
	assert_int_equal(mr_block_plan_apply(&plan, 0, true, &ops, &res), -EBUSY);
	assert_string_equal(f.log, "offline:10 offline:11 offline:12 "
			    "online_movable:11 online_movable:10");
	assert_int_equal(res.rolled_back, 2);
	assert_int_equal(res.failed_block, 12);
	assert_int_equal(res.done, 0);
	assert_non_null(strstr(mr_last_error(), "fake failure"));
	assert_non_null(strstr(mr_last_error(), "2 block(s) brought back online"));
	/* Everything rolled back: nothing left to restore. */
	assert_false(state_file_has(10) || state_file_has(11) || state_file_has(12));
}

static void test_apply_timeout(void **state)
{
	uint64_t b[] = { 10, 11, 12 };
	struct mr_block_plan plan = { .action = MR_BLOCK_OFFLINE, .blocks = b, .nr_blocks = 3 };
	struct fake f = { .fail_block = 11, .fail_err = -EINTR };
	struct mr_block_ops ops = { .set_state = fake_set_state, .ctx = &f };
	struct mr_block_result res;

	(void)state;
	assert_int_equal(mr_root_set("/"), 0);
	/* 3 s, not less: each block first records itself in the state file (an fsync),
	 * and on a loaded machine a 20 ms limit ran out before block 10 was tried (and
	 * test-blockstate's 50 ms in a CI run). The fake's block 11 waits out the limit,
	 * so this test takes about that long. */
	assert_int_equal(mr_block_plan_apply(&plan, 3000 * 1000000ull, true, &ops, &res),
			 -ETIMEDOUT);
	assert_string_equal(f.log, "offline:10 offline:11 online_movable:10");
	assert_int_equal(res.rolled_back, 1);
	assert_non_null(strstr(mr_last_error(), "time limit"));
	assert_false(state_file_has(10) || state_file_has(11));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pagemap_entry),
		cmocka_unit_test(test_numa_maps_line),
		cmocka_unit_test_setup_teardown(test_where_pagemap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_where_numa_maps_fallback, setup, teardown),
		cmocka_unit_test(test_pagemap_walk_exit),
		cmocka_unit_test(test_pagemap_walk_exec),
		cmocka_unit_test(test_where_exec_again),
		cmocka_unit_test_setup_teardown(test_move_accounting, setup, teardown),
		cmocka_unit_test_setup_teardown(test_move_region_filter, setup, teardown),
		cmocka_unit_test_setup_teardown(test_offline_plan, setup, teardown),
		cmocka_unit_test_setup_teardown(test_apply_refusal, setup, teardown),
		cmocka_unit_test_setup_teardown(test_apply_rollback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_apply_timeout, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
