/* Unit test of monitor/rec-place.c: a process record against a fixture process
 * (/proc/4242/{stat,maps,pagemap}, /proc/stat): the same-process check by the
 * record's start time (version 2) or by btime (version 1), the refusal of hidden
 * frame numbers, and one pagemap walk answering every snapshot. mr_sys_pread is
 * wrapped to count the walk's reads. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
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
#include "monitor/rec-place.h"

ssize_t __real_mr_sys_pread(int fd, void *buf, size_t len, off_t off);
ssize_t __wrap_mr_sys_pread(int fd, void *buf, size_t len, off_t off);
static unsigned nr_preads;

ssize_t __wrap_mr_sys_pread(int fd, void *buf, size_t len, off_t off)
{
	nr_preads++;
	return __real_mr_sys_pread(fd, buf, len, off);
}

#define GIB (UINT64_C(1) << 30)

static char fixture[] = "/tmp/mr-test-rec-place-XXXXXX";

static void write_file(const char *rel, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", fixture, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* Process 4242 started @ticks after boot (btime 1000 s). */
static void stat_at(long ticks)
{
	char text[256];

	snprintf(text, sizeof(text), "4242 (fixture proc) S 1 4242 4242 0 -1 4194304 100 0 0 0 "
		 "1 2 0 0 20 0 1 0 %ld 1000000 100\n", ticks);
	write_file("proc/4242/stat", text);
}

/* @n present entries from page @vpn on, frames @pfn, @pfn + 1, ... (@pfn 0: every
 * frame hidden, as a reader without CAP_SYS_ADMIN sees them). */
static void put_present(uint64_t vpn, uint64_t pfn, size_t n)
{
	char path[512];
	size_t i;
	int fd;

	snprintf(path, sizeof(path), "%s/proc/4242/pagemap", fixture);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	assert_true(fd >= 0);
	for (i = 0; i < n; i++) {
		uint64_t e = (UINT64_C(1) << 63) | (pfn ? pfn + i : 0);

		assert_int_equal(pwrite(fd, &e, 8, (off_t)((vpn + i) * 8)), 8);
	}
	close(fd);
}

/*
 * maps:    [0x10000000, +16 pages) rw       8 pages present at its start, frames
 *                                           0x100.. (power region 0, [0, 1 GiB))
 *          [0x100000000, +64 GiB) ---       a reservation: never read
 *          [0x1100000000, +8 pages) rw      all 8 present, frames 0x40000..
 *                                           (power region 1, [1 GiB, 2 GiB))
 * /proc/stat: btime 1000; the process started 5 s after boot (1005 s).
 */
static void make_process(void)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/proc/4242", fixture);
	assert_int_equal(mkdir(path, 0755), 0);
	write_file("proc/stat", "cpu  1 2 3 4\nbtime 1000\nprocesses 9\n");
	stat_at(5 * sysconf(_SC_CLK_TCK));
	write_file("proc/4242/maps",
		   "10000000-10010000 rw-p 00000000 00:00 0\n"
		   "100000000-1100000000 ---p 00000000 00:00 0\n"
		   "1100000000-1100008000 rw-p 00000000 00:00 0\n");
	snprintf(path, sizeof(path), "%s/proc/4242/pagemap", fixture);
	unlink(path);
	put_present(0x10000, 0x100, 8);
	put_present(0x1100000, GIB / 4096, 8);
	assert_int_equal(mr_root_set(fixture), 0);
}

static int setup(void **state)
{
	(void)state;
	make_process();
	return 0;
}

static int teardown(void **state)
{
	char cmd[600];

	(void)state;
	mr_root_set("/");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s/proc/4242'", fixture);
	return system(cmd) ? -1 : 0;
}

/* Version 2: the record's start time of the process, against the running one's. */
static void test_same_process_v2(void **state)
{
	long hz = sysconf(_SC_CLK_TCK);
	struct mr_rec rec = { .hdr = { .version = 2, .kind = MR_MON_TARGET_PROCESS, .pid = 4242,
				       .start_unix_ns = UINT64_C(1010000000000),
				       .target_starttime_ticks = (uint64_t)(5 * hz) } };
	char want[200];

	(void)state;
	assert_int_equal(mr_rec_same_process(&rec), 0);

	/* the pid reused by a process that started at 7 s */
	stat_at(7 * hz);
	assert_int_equal(mr_rec_same_process(&rec), -ESRCH);
	snprintf(want, sizeof(want), "pid 4242 is another process now (started at tick %ld, "
		 "not %ld)", 7 * hz, 5 * hz);
	assert_string_equal(mr_last_error(), want);

	/* a zombie has exited */
	write_file("proc/4242/stat", "4242 (fixture proc) Z 1 4242 4242 0 -1 4194304 100 0 0 0 "
		   "1 2 0 0 20 0 1 0 500 1000000 100\n");
	rec.hdr.target_starttime_ticks = 500;
	assert_int_equal(mr_rec_same_process(&rec), -ESRCH);
	assert_string_equal(mr_last_error(), "pid 4242 has exited");
}

/* Version 1 (no start time in the record): the process must not have started after
 * the record did, whole seconds with two of slack. */
static void test_same_process_v1(void **state)
{
	struct mr_rec rec = { .hdr = { .version = 1, .kind = MR_MON_TARGET_PROCESS, .pid = 4242,
				       .start_unix_ns = UINT64_C(1010000000000) } };
	char path[512];

	(void)state;
	assert_int_equal(mr_rec_same_process(&rec), 0);		/* 1005 s <= 1010 + 2 */
	rec.hdr.start_unix_ns = UINT64_C(1003000000000);
	assert_int_equal(mr_rec_same_process(&rec), 0);		/* 1005 s <= 1003 + 2 */
	rec.hdr.start_unix_ns = UINT64_C(1002000000000);
	assert_int_equal(mr_rec_same_process(&rec), -ESRCH);	/* 1005 s > 1002 + 2 */
	assert_string_equal(mr_last_error(),
			    "pid 4242 started after the record did: it is another process now");

	/* /proc/stat without btime: cannot tell, says so */
	write_file("proc/stat", "cpu  1 2 3 4\nprocesses 9\n");
	assert_int_equal(mr_rec_same_process(&rec), -EINVAL);
	assert_string_equal(mr_last_error(), "/proc/stat: no btime line");

	/* gone */
	snprintf(path, sizeof(path), "%s/proc/4242/stat", fixture);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mr_rec_same_process(&rec), -ESRCH);
	assert_string_equal(mr_last_error(), "pid 4242: no such process");
}

struct placed {
	uint64_t bytes[2];
	unsigned calls;
	const struct mr_region_map *map;
};

static void add_placed(const struct mr_region *r, uint64_t bytes, void *arg)
{
	struct placed *p = arg;

	assert_true(r >= p->map->regions && r < p->map->regions + 2);
	p->bytes[r - p->map->regions] += bytes;
	p->calls++;
}

static struct mr_range ranges[] = { { 0, GIB }, { GIB, GIB } };
static struct mr_region regions2[] = {
	{ .id = 0, .ranges = &ranges[0], .nr_ranges = 1, .size_bytes = GIB },
	{ .id = 1, .ranges = &ranges[1], .nr_ranges = 1, .size_bytes = GIB },
};
static const struct mr_region_map map2 = { .regions = regions2, .nr_regions = 2 };

/*
 * Two snapshots, answered from one walk of [0x10000000, 0x1100008000):
 *   0: [0x10000000, 0x1100008000)           -> region 0: 8 pages, region 1: 8 pages
 *   1: [0x10002000, 0x10006000)             -> region 0: 4 pages (2..5)
 *      [0x10008000, 0x10010000)             -> nothing present
 *      [0x1100006000, 0x1100008000)         -> region 1: 2 pages
 * The walk reads each rw mapping once (2 preads) and the reservation never; the
 * snapshots read nothing more.
 */
static void test_place_two_snapshots_one_walk(void **state)
{
	struct mr_rec_region s0[] = { { 0x10000000, UINT64_C(0x1100008000), 5, 0 } };
	struct mr_rec_region s1[] = { { 0x10002000, 0x10006000, 1, 0 },
				      { 0x10008000, 0x10010000, 1, 0 },
				      { UINT64_C(0x1100006000), UINT64_C(0x1100008000), 1, 0 } };
	struct mr_rec_snapshot snaps[] = { { 100000, s0, 1, 10 }, { 200000, s1, 3, 10 } };
	struct mr_rec rec = { .hdr = { .version = 2, .kind = MR_MON_TARGET_PROCESS, .pid = 4242 },
			      .snaps = snaps, .nr_snaps = 2 };
	struct mr_rec_placement pl;
	struct placed p = { .map = &map2 };
	size_t k;

	(void)state;
	nr_preads = 0;
	assert_int_equal(mr_rec_place(&rec, &map2, &pl), 0);
	assert_int_equal(nr_preads, 2);
	assert_int_equal(pl.nr_runs, 2);

	mr_rec_place_range(&pl, s0[0].start, s0[0].end, add_placed, &p);
	assert_int_equal(p.bytes[0], 8 * 4096);
	assert_int_equal(p.bytes[1], 8 * 4096);
	assert_int_equal(p.calls, 2);

	memset(p.bytes, 0, sizeof(p.bytes));
	p.calls = 0;
	for (k = 0; k < 3; k++)
		mr_rec_place_range(&pl, s1[k].start, s1[k].end, add_placed, &p);
	assert_int_equal(p.bytes[0], 4 * 4096);
	assert_int_equal(p.bytes[1], 2 * 4096);
	assert_int_equal(p.calls, 2);
	assert_int_equal(nr_preads, 2);		/* one walk, not one per snapshot */
	mr_rec_place_free(&pl);
	assert_null(pl.runs);
}

/* Present pages whose frames read 0 (no CAP_SYS_ADMIN): refused, not all idle. */
static void test_place_hidden_pfns(void **state)
{
	struct mr_rec_region s0[] = { { 0x10000000, UINT64_C(0x1100008000), 5, 0 } };
	struct mr_rec_snapshot snaps[] = { { 100000, s0, 1, 10 } };
	struct mr_rec rec = { .hdr = { .version = 2, .kind = MR_MON_TARGET_PROCESS, .pid = 4242 },
			      .snaps = snaps, .nr_snaps = 1 };
	struct mr_rec_placement pl;

	(void)state;
	put_present(0x1100000, 0, 8);
	assert_int_equal(mr_rec_place(&rec, &map2, &pl), -EPERM);
	assert_string_equal(mr_last_error(), "pid 4242's pagemap shows its pages without frame "
			    "numbers (the kernel shows PFNs only to CAP_SYS_ADMIN): every power "
			    "region would look idle");
	mr_rec_place_free(&pl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_same_process_v2, setup, teardown),
		cmocka_unit_test_setup_teardown(test_same_process_v1, setup, teardown),
		cmocka_unit_test_setup_teardown(test_place_two_snapshots_one_walk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_place_hidden_pfns, setup, teardown),
	};
	char cmd[600];
	int ret;

	if (sysconf(_SC_PAGESIZE) != 4096) {
		printf("SKIP: the fixture's pagemap is of 4 KiB pages, this machine's are %ld bytes\n",
		       sysconf(_SC_PAGESIZE));
		return 77;
	}
	if (!mkdtemp(fixture))
		return 99;
	snprintf(cmd, sizeof(cmd), "%s/proc", fixture);
	if (mkdir(cmd, 0755))
		return 99;
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fixture);
	if (system(cmd))
		ret = ret ? ret : 99;
	return ret;
}
