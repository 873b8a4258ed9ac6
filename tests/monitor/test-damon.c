/* The damon backend's safety: where DAMON is in use (nr_kdamonds != 0, a kdamond
 * thread, the reclaim / LRU-sort / stat modules on) it writes nothing at all, even
 * with --apply on a root that would accept writes; where it is free it starts with
 * nr_kdamonds and always ends by writing 0 to it. Runs on fixture roots only. */
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
#include "common/sys.h"
#include "common/util.h"
#include "monitor/damon.h"
#include "monitor/monitor.h"

/* Every write the backend makes goes through mr_root_write_str: wrapped, it stands
 * for a live root ("/"), where the real one would write. */
static bool writes_allowed;
static char writes[64][160];
static unsigned nr_writes;

int __wrap_mr_root_write_str(const char *linux_path, const char *s, bool apply);
int __wrap_mr_root_write_str(const char *linux_path, const char *s, bool apply)
{
	if (!writes_allowed)
		fail_msg("write of '%s' to %s while DAMON is in use", s, linux_path);
	assert_true(apply);
	if (nr_writes < 64)
		snprintf(writes[nr_writes++], sizeof(writes[0]), "%s=%s", linux_path, s);
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
		auto_ops = mr_mon_backend_auto(MR_MON_TARGET_PHYS, true, why, sizeof(why));
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_in_use_writes_nothing),
		cmocka_unit_test(test_no_damon),
		cmocka_unit_test(test_free_resets),
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
