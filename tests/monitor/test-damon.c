/* The damon backend's safety: where DAMON is in use (nr_kdamonds != 0, a kdamond
 * thread, the reclaim / LRU-sort / stat modules on) it writes nothing at all, even
 * with --apply on a root that would accept writes; where it is free it starts with
 * nr_kdamonds and always ends by writing 0 to it. Runs on fixture roots only. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
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
#include "common/util.h"
#include "monitor/damon.h"
#include "monitor/monitor.h"

/* Every write the backend makes goes through mr_root_write_str: wrapped, it stands
 * for a live root ("/"), where the real one would write. */
static bool writes_allowed;
static const char *write_fails;	/* a write whose "path=value" holds this fails */
static char writes[512][160];
static unsigned nr_writes;

int __wrap_mr_root_write_str(const char *linux_path, const char *s, bool apply);
int __wrap_mr_root_write_str(const char *linux_path, const char *s, bool apply)
{
	if (!writes_allowed)
		fail_msg("write of '%s' to %s while DAMON is in use", s, linux_path);
	assert_true(apply);
	if (nr_writes < MR_ARRAY_SIZE(writes))
		snprintf(writes[nr_writes++], sizeof(writes[0]), "%s=%s", linux_path, s);
	if (write_fails && nr_writes && strstr(writes[nr_writes - 1], write_fails))
		return -EINVAL;
	return 0;
}

/* No other path may write either. */
ssize_t __wrap_mr_sys_write(int fd, const void *buf, size_t len);
ssize_t __wrap_mr_sys_write(int fd, const void *buf, size_t len)
{
	fail_msg("mr_sys_write called");
	return -1;
}

static char root[] = "/tmp/mr-test-damon-XXXXXX";

static void put(const char *rel, const char *content)
{
	char p[512], *s;
	FILE *f;

	snprintf(p, sizeof(p), "%s%s", root, rel);
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

static void reset_root(void)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'/sys '%s'/proc", root, root);
	assert_int_equal(system(cmd), 0);
	put("/proc/1/comm", "init\n");
	put("/proc/77/comm", "bash\n");
	put("/sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds", "0\n");
	put("/sys/module/damon_reclaim/parameters/enabled", "N\n");
	put("/sys/module/damon_lru_sort/parameters/enabled", "N\n");
	nr_writes = 0;
}

struct busy_case {
	const char *name;
	const char *file, *content;
	int expect;
	const char *why;
};

static void test_in_use_writes_nothing(void **state)
{
	static const struct busy_case cases[] = {
		{ "nr_kdamonds", "/sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds", "1\n", -EBUSY,
		  "nr_kdamonds is 1" },
		{ "thread", "/proc/4242/comm", "kdamond.0\n", -EBUSY, "kdamond.0 (pid 4242)" },
		{ "reclaim", "/sys/module/damon_reclaim/parameters/enabled", "Y\n", -EBUSY,
		  "damon_reclaim is enabled" },
		{ "lru_sort", "/sys/module/damon_lru_sort/parameters/enabled", "Y\n", -EBUSY,
		  "damon_lru_sort is enabled" },
		{ "stat", "/sys/module/damon_stat/parameters/enabled", "Y\n", -EBUSY,
		  "damon_stat is enabled" },
	};
	size_t i;

	for (i = 0; i < MR_ARRAY_SIZE(cases); i++) {
		struct mr_mon_ctx ctx;
		char why[256] = "";
		const struct mr_mon_ops *auto_ops;
		int err;

		print_message("in use: %s\n", cases[i].name);
		reset_root();
		put(cases[i].file, cases[i].content);
		writes_allowed = false;
		assert_int_equal(mr_mon_damon_check_free(why, sizeof(why)), cases[i].expect);
		if (!strstr(why, cases[i].why))
			fail_msg("'%s' lacks '%s'", why, cases[i].why);
		/* the whole backend, with --apply, on a process and on physical memory */
		mr_mon_ctx_init(&ctx, &mr_mon_ops_damon);
		ctx.apply = true;
		ctx.target.pid = 1;
		err = mr_mon_run(&ctx, NULL, NULL);
		assert_int_equal(err, -EBUSY);
		assert_non_null(strstr(mr_last_error(), "not touched"));
		ctx.target.kind = MR_MON_TARGET_PHYS;
		assert_int_equal(mr_mon_run(&ctx, NULL, NULL), -EBUSY);
		mr_mon_ctx_destroy(&ctx);
		/* auto never takes damon here (refs etc. fail on the fixture: no /proc/self) */
		auto_ops = mr_mon_backend_auto(&ctx, why, sizeof(why));	/* phys, --apply */
		assert_true(auto_ops != &mr_mon_ops_damon);
		assert_int_equal(nr_writes, 0);
	}
}

static void test_no_damon(void **state)
{
	char why[256];

	reset_root();
	put("/sys/kernel/mm/damon/x", "");
	{
		char p[512];

		snprintf(p, sizeof(p), "%s/sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds", root);
		unlink(p);
	}
	assert_int_equal(mr_mon_damon_check_free(why, sizeof(why)), -ENOTSUP);
	assert_non_null(strstr(why, "no DAMON sysfs"));
}

/* Free: writes start by creating kdamond 0 and, whatever fails later, the last
 * write puts nr_kdamonds back to 0. */
static void test_free_resets(void **state)
{
	struct mr_mon_ctx ctx;
	char why[256];

	reset_root();
	put("/sys/kernel/mm/damon/admin/kdamonds/0/contexts/0/avail_operations", "vaddr\nfvaddr\npaddr\n");
	put("/proc/iomem", "00100000-3fffffff : System RAM\n");
	/* 6.7+: the scheme applies once per aggregation, so tried regions hold whole
	 * aggregation intervals */
	put("/sys/kernel/mm/damon/admin/kdamonds/0/contexts/0/schemes/0/apply_interval_us", "0\n");
	assert_int_equal(mr_mon_damon_check_free(why, sizeof(why)), 0);
	writes_allowed = true;
	mr_mon_ctx_init(&ctx, &mr_mon_ops_damon);
	ctx.apply = true;
	ctx.target.kind = MR_MON_TARGET_PHYS;
	/* the fixture has no kdamond to answer: the first snapshot ends the run */
	assert_int_equal(mr_mon_run(&ctx, NULL, NULL), 0);
	mr_mon_ctx_destroy(&ctx);
	assert_true(nr_writes > 3);
	assert_string_equal(writes[0], "/sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds=1");
	assert_string_equal(writes[nr_writes - 1], "/sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds=0");
	{
		unsigned i;
		bool regions = false, on = false, apply = false;

		for (i = 0; i < nr_writes; i++) {
			if (strstr(writes[i], "schemes/0/apply_interval_us=100000"))
				apply = true;
			if (strstr(writes[i], "targets/0/regions/0/end=1073741824"))
				regions = true;
			if (strstr(writes[i], "kdamonds/0/state=on"))
				on = true;
		}
		assert_true(regions);
		assert_true(on);
		assert_true(apply);
	}
	/* without --apply nothing is written */
	nr_writes = 0;
	writes_allowed = false;
	mr_mon_ctx_init(&ctx, &mr_mon_ops_damon);
	ctx.target.kind = MR_MON_TARGET_PHYS;
	assert_int_equal(mr_mon_run(&ctx, NULL, NULL), -EPERM);
	mr_mon_ctx_destroy(&ctx);
	assert_int_equal(nr_writes, 0);
	writes_allowed = false;
}

/*
 * Joining a process's mappings across their narrowest gaps until at most @limit
 * remain (addresses in pages of 0x1000 for reading):
 *
 *   in:   [0,10)  [20,30) [31,40)          [100,110)     gaps 10, 1, 60
 *   2:    [0,40)                           [100,110)     the 1 and the 10 closed
 *   1:    [0,110)
 *   ties: [0,1) [2,3) [4,5) [6,7), limit 3: only the lowest gap of 1 closes
 */
struct coalesce_case {
	const char *name;
	struct mr_mon_range in[4];
	size_t nr_in, limit;
	struct mr_mon_range out[4];
	size_t nr_out;
};

#define P(x) ((uint64_t)(x) << 12)

static void test_coalesce(void **state)
{
	static const struct coalesce_case cases[] = {
		{ "under the limit: unchanged",
		  { { P(0), P(10) }, { P(20), P(30) } }, 2, 2,
		  { { P(0), P(10) }, { P(20), P(30) } }, 2 },
		{ "narrowest two gaps close",
		  { { P(0), P(10) }, { P(20), P(30) }, { P(31), P(40) }, { P(100), P(110) } }, 4, 2,
		  { { P(0), P(40) }, { P(100), P(110) } }, 2 },
		{ "limit 1: one range",
		  { { P(0), P(10) }, { P(20), P(30) }, { P(31), P(40) }, { P(100), P(110) } }, 4, 1,
		  { { P(0), P(110) } }, 1 },
		{ "ties: exactly as many as needed, lowest first",
		  { { P(0), P(1) }, { P(2), P(3) }, { P(4), P(5) }, { P(6), P(7) } }, 4, 3,
		  { { P(0), P(3) }, { P(4), P(5) }, { P(6), P(7) } }, 3 },
	};
	unsigned c;

	for (c = 0; c < MR_ARRAY_SIZE(cases); c++) {
		struct mr_mon_range r[4];
		size_t nr = cases[c].nr_in, i;

		memcpy(r, cases[c].in, sizeof(r));
		assert_int_equal(mr_mon_damon_coalesce(r, &nr, cases[c].limit), 0);
		if (nr != cases[c].nr_out)
			fail_msg("%s: %zu ranges, want %zu", cases[c].name, nr, cases[c].nr_out);
		for (i = 0; i < nr; i++)
			if (r[i].start != cases[c].out[i].start || r[i].end != cases[c].out[i].end)
				fail_msg("%s: range %zu is %#" PRIx64 "-%#" PRIx64, cases[c].name, i,
					 r[i].start, r[i].end);
	}
}

/* The regions written for vaddr, in address order, from the recorded writes. */
static size_t written_regions(unsigned from, struct mr_mon_range *r, size_t cap)
{
	unsigned i;
	size_t n = 0, idx;
	uint64_t v;
	char what[8];
	const char *key = "/targets/0/regions/";

	for (i = from; i < nr_writes; i++) {
		const char *p = strstr(writes[i], key);

		if (!p || sscanf(p + strlen(key), "%zu/%7[a-z]=%" SCNu64, &idx, what, &v) != 3)
			continue;
		assert_true(idx < cap);
		if (!strcmp(what, "start"))
			r[idx].start = v;
		else
			r[idx].end = v;
		if (idx + 1 > n)
			n = idx + 1;
	}
	return n;
}

static unsigned count_writes(unsigned from, const char *s)
{
	unsigned i, n = 0;

	for (i = from; i < nr_writes; i++)
		n += strstr(writes[i], s) != NULL;
	return n;
}

/*
 * vaddr: DAMON gets the process's mappings as its regions, split to about
 * min_nr_regions, and never a region across a gap (the image-to-heap gap, a
 * PROT_NONE guard page); the kernel's own three-region update is pushed beyond
 * any run; when the mappings change memreg writes the new ranges and commits.
 *
 *   image 0x555555554000-0x555555557000 (two mappings, joined)
 *   heap  0x555555600000-0x555555621000
 *   A     0x7f0000000000-0x7f0000a00000  10 MiB
 *   guard 0x7f0000a00000-0x7f0000a01000  ---p: left out
 *   B     0x7f0000a01000-0x7f0001401000  10 MiB
 *   stack 0x7ffffffde000-0x7ffffffff000
 *   [vsyscall]: left out
 */
static void test_process_follows_maps(void **state)
{
	static const struct mr_mon_range want[] = {
		{ 0x555555554000, 0x555555557000 }, { 0x555555600000, 0x555555621000 },
		{ 0x7f0000000000, 0x7f0000a00000 }, { 0x7f0000a01000, 0x7f0001401000 },
		{ 0x7ffffffde000, 0x7ffffffff000 },
	};
	const char *maps =
		"555555554000-555555556000 r-xp 00000000 fe:00 1 /usr/bin/prog\n"
		"555555556000-555555557000 rw-p 00002000 fe:00 1 /usr/bin/prog\n"
		"555555600000-555555621000 rw-p 00000000 00:00 0 [heap]\n"
		"7f0000000000-7f0000a00000 rw-p 00000000 00:00 0 \n"
		"7f0000a00000-7f0000a01000 ---p 00000000 00:00 0 \n"
		"7f0000a01000-7f0001401000 rw-p 00000000 00:00 0 \n"
		"7ffffffde000-7ffffffff000 rw-p 00000000 00:00 0 [stack]\n"
		"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0 [vsyscall]\n";
	struct mr_mon_range r[256];
	struct mr_mon_ctx ctx;
	size_t n, i, k;
	uint64_t covered = 0, want_bytes = 0;
	unsigned mark;

	reset_root();
	put("/sys/kernel/mm/damon/admin/kdamonds/0/contexts/0/avail_operations", "vaddr\nfvaddr\npaddr\n");
	put("/proc/4242/stat", "4242 (prog) R 1 4242 4242 0 -1 0\n");
	put("/proc/4242/maps", maps);
	writes_allowed = true;
	mr_mon_ctx_init(&ctx, &mr_mon_ops_damon);
	ctx.apply = true;
	ctx.target.kind = MR_MON_TARGET_PROCESS;
	ctx.target.pid = 4242;
	ctx.attrs = (struct mr_mon_attrs){ .sample_us = 1000, .aggr_us = 1000, .update_us = 1000,
					   .min_nr_regions = 10, .max_nr_regions = 1000 };
	assert_int_equal(ctx.ops->init(&ctx), 0);
	assert_int_equal(count_writes(0, "intervals/update_us=35184372088832"), 1);
	assert_int_equal(count_writes(0, "targets/0/pid_target=4242"), 1);
	n = written_regions(0, r, MR_ARRAY_SIZE(r));
	assert_true(n >= 10 && n <= 20);	/* about min_nr_regions */
	for (i = 0; i < MR_ARRAY_SIZE(want); i++)
		want_bytes += want[i].end - want[i].start;
	for (i = 0; i < n; i++) {
		for (k = 0; k < MR_ARRAY_SIZE(want); k++)
			if (r[i].start >= want[k].start && r[i].end <= want[k].end)
				break;
		if (k == MR_ARRAY_SIZE(want))
			fail_msg("region %zu %#" PRIx64 "-%#" PRIx64 " is not inside one mapping",
				 i, r[i].start, r[i].end);
		assert_true(r[i].start < r[i].end);
		assert_true(!i || r[i - 1].end <= r[i].start);
		covered += r[i].end - r[i].start;
	}
	assert_int_equal(covered, want_bytes);

	/* unchanged mappings: nothing is committed */
	mark = nr_writes;
	usleep(2000);
	ctx.ops->snapshot(&ctx);
	assert_int_equal(count_writes(mark, "state=commit"), 0);
	assert_int_equal(count_writes(mark, "regions/nr_regions="), 0);

	/* a new mapping: the ranges (not pieces: DAMON keeps its regions inside
	 * them) are written and committed */
	put("/proc/4242/maps",
	    "555555554000-555555557000 r-xp 00000000 fe:00 1 /usr/bin/prog\n"
	    "555555600000-555555621000 rw-p 00000000 00:00 0 [heap]\n"
	    "7e0000000000-7e0000100000 rw-p 00000000 00:00 0 \n"
	    "7f0000000000-7f0000a00000 rw-p 00000000 00:00 0 \n"
	    "7f0000a00000-7f0000a01000 ---p 00000000 00:00 0 \n"
	    "7f0000a01000-7f0001401000 rw-p 00000000 00:00 0 \n"
	    "7ffffffde000-7ffffffff000 rw-p 00000000 00:00 0 [stack]\n");
	mark = nr_writes;
	usleep(2000);
	ctx.ops->snapshot(&ctx);
	assert_int_equal(count_writes(mark, "regions/nr_regions=6"), 1);
	assert_int_equal(count_writes(mark, "regions/2/start=138538465099776"), 1);
	assert_int_equal(count_writes(mark, "regions/2/end=138538466148352"), 1);
	assert_int_equal(count_writes(mark, "kdamonds/0/state=commit"), 1);

	/* a kernel that refuses the commit: monitoring goes on with what DAMON has,
	 * and memreg stops writing regions */
	write_fails = "state=commit";
	put("/proc/4242/maps", "7f0000000000-7f0000a00000 rw-p 00000000 00:00 0 \n");
	mark = nr_writes;
	usleep(2000);
	ctx.ops->snapshot(&ctx);
	assert_int_equal(count_writes(mark, "kdamonds/0/state=commit"), 1);
	write_fails = NULL;
	put("/proc/4242/maps", "7f0000000000-7f0000b00000 rw-p 00000000 00:00 0 \n");
	mark = nr_writes;
	usleep(2000);
	ctx.ops->snapshot(&ctx);
	assert_int_equal(count_writes(mark, "regions/nr_regions="), 0);
	ctx.ops->cleanup(&ctx);
	mr_mon_ctx_destroy(&ctx);
	assert_string_equal(writes[nr_writes - 1], "/sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds=0");
	writes_allowed = false;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_in_use_writes_nothing),
		cmocka_unit_test(test_no_damon),
		cmocka_unit_test(test_free_resets),
		cmocka_unit_test(test_coalesce),
		cmocka_unit_test(test_process_follows_maps),
	};
	char cmd[600];
	int ret;

	if (!mkdtemp(root))
		return 99;
	if (mr_root_set(root))
		return 99;
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd))
		ret = 99;
	return ret;
}
