/* Unit test of the pagemap walk behind `report regions` (regions/pagemap.c's
 * mr_pagemap_walk): the pagemap is read in chunks, never a pread per page, and a
 * PROT_NONE reservation is not read at all. mr_sys_pread is wrapped to count. */
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
#include "regions/placement.h"

ssize_t __real_mr_sys_pread(int fd, void *buf, size_t len, off_t off);
ssize_t __wrap_mr_sys_pread(int fd, void *buf, size_t len, off_t off);
static unsigned nr_preads;

ssize_t __wrap_mr_sys_pread(int fd, void *buf, size_t len, off_t off)
{
	nr_preads++;
	return __real_mr_sys_pread(fd, buf, len, off);
}

static char fixture[] = "/tmp/mr-test-report-regions-XXXXXX";

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

/* @n present entries from page @vpn on, frames @pfn, @pfn + 1, ... */
static void put_present(uint64_t vpn, uint64_t pfn, size_t n)
{
	char path[512];
	size_t i;
	int fd;

	snprintf(path, sizeof(path), "%s/proc/4242/pagemap", fixture);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	assert_true(fd >= 0);
	for (i = 0; i < n; i++) {
		uint64_t e = (UINT64_C(1) << 63) | (pfn + i);

		assert_int_equal(pwrite(fd, &e, 8, (off_t)((vpn + i) * 8)), 8);
	}
	close(fd);
}

struct seen {
	uint64_t present, entries;
	uint64_t first_vaddr, last_end;
};

static int count_chunk(uint64_t vaddr, const uint64_t *e, size_t nr, void *arg)
{
	struct seen *s = arg;
	size_t i;

	if (!s->entries)
		s->first_vaddr = vaddr;
	s->entries += nr;
	s->last_end = vaddr + nr * 4096;
	for (i = 0; i < nr; i++)
		s->present += (e[i] >> 63) & 1;
	return 0;
}

/*
 * maps:    [0x10000000, +16 pages) rw      vpn 0x10000
 *          [0x100000000, +64 GiB) ---      a reservation: 16 Mi pages
 *          [0x1100000000, +16384 pages) rw vpn 0x1100000 (64 MiB: 4 chunks)
 * pagemap: 8 pages present at each rw mapping's start; sparse elsewhere
 */
static void test_walk_chunked(void **state)
{
	struct seen s = { 0 };
	char dir[512];

	(void)state;
	if (sysconf(_SC_PAGESIZE) != 4096)
		skip();
	snprintf(dir, sizeof(dir), "%s/proc/4242", fixture);
	assert_int_equal(mkdir(dir, 0755), 0);
	write_file("proc/4242/maps",
		   "10000000-10010000 rw-p 00000000 00:00 0\n"
		   "100000000-1100000000 ---p 00000000 00:00 0\n"
		   "1100000000-1104000000 rw-p 00000000 00:00 0\n");
	put_present(0x10000, 0x8000, 8);
	put_present(0x1100000, 0x10000, 8);
	put_present(0x1100000 + 16384 - 1, 0x20000, 1);	/* the file covers the last page */
	assert_int_equal(mr_root_set(fixture), 0);

	/* 1 pread for the first mapping, none for the reservation, 16384 / 4096 = 4 for
	 * the last: 5 in all, where a pread per page took 16 + 16384 */
	nr_preads = 0;
	assert_int_equal(mr_pagemap_walk(4242, 0, UINT64_MAX, MR_PAGEMAP_SKIP_PROT_NONE,
					 count_chunk, &s), 0);
	assert_int_equal(nr_preads, 5);
	assert_int_equal(s.entries, 16 + 16384);
	assert_int_equal(s.present, 17);
	assert_int_equal(s.first_vaddr, 0x10000000);
	assert_int_equal(s.last_end, UINT64_C(0x1104000000));

	/* clipped to [lo, hi): only the pages of the last mapping below hi are read */
	memset(&s, 0, sizeof(s));
	nr_preads = 0;
	assert_int_equal(mr_pagemap_walk(4242, UINT64_C(0x1100000000) + 4096,
					 UINT64_C(0x1100000000) + 5 * 4096,
					 MR_PAGEMAP_SKIP_PROT_NONE, count_chunk, &s), 0);
	assert_int_equal(nr_preads, 1);
	assert_int_equal(s.entries, 4);
	assert_int_equal(s.present, 4);
	assert_int_equal(s.first_vaddr, UINT64_C(0x1100000000) + 4096);

	/* without the flag the reservation is read too, still in chunks: 16 Mi / 4096 */
	memset(&s, 0, sizeof(s));
	nr_preads = 0;
	assert_int_equal(mr_pagemap_walk(4242, 0, UINT64_MAX, 0, count_chunk, &s), 0);
	assert_int_equal(nr_preads, 5 + 4096);
	assert_int_equal(s.present, 17);
	assert_int_equal(mr_root_set("/"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_walk_chunked),
	};
	char cmd[600];
	int ret;

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
