/* Unit tests of the target set (common/targets.c): named processes and a cgroup v2
 * directory under a fixture root whose cgroup.procs changes between reads, as a
 * cgroup does while processes enter it and exit. */
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
#include "common/targets.h"

static char root[] = "/tmp/mr-test-targets.XXXXXX";

static void put(const char *rel, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s%s", root, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static void mkdirs(const char *rel)
{
	char path[512], *p;

	snprintf(path, sizeof(path), "%s%s", root, rel);
	for (p = path + strlen(root) + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(path, 0755);
			*p = '/';
		}
	mkdir(path, 0755);
}

/* /proc/PID/stat of a process in @state that started at @start ticks */
static void proc(int pid, char state, unsigned start)
{
	char rel[64], text[256];

	snprintf(rel, sizeof(rel), "/proc/%d", pid);
	mkdirs(rel);
	snprintf(rel, sizeof(rel), "/proc/%d/stat", pid);
	snprintf(text, sizeof(text), "%d (w) %c 1 1 1 0 -1 0 0 0 0 0 5 6 0 0 20 0 1 0 %u 0 0\n",
		 pid, state, start);
	put(rel, text);
}

static int setup(void **state)
{
	(void)state;
	assert_non_null(mkdtemp(root));
	mkdirs("/sys/fs/cgroup/work");
	put("/sys/fs/cgroup/work/cgroup.controllers", "cpu memory\n");
	mkdirs("/sys/fs/cgroup/v1/memory/work");
	put("/sys/fs/cgroup/v1/memory/work/cgroup.procs", "");
	assert_int_equal(mr_root_set(root), 0);
	return 0;
}

static int teardown(void **state)
{
	char cmd[600];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

/* pids of @m as "a b c" */
static const char *pids(const struct mr_target *m, size_t nr)
{
	static char buf[256];
	size_t i, off = 0;

	buf[0] = '\0';
	for (i = 0; i < nr; i++)
		off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%d", i ? " " : "",
					(int)m[i].pid);
	return buf;
}

/*
 * cgroup.procs over four reads:
 *   read 1: 100 200        joined 100 200
 *   read 2: 100 200 300    joined 300 (a process put in the cgroup)
 *   read 3: 200 300 400    left 100 (exited), 400 listed but a zombie: not joined
 *   read 4: 200 300        200 is a new process with the same pid (start time
 *                          changed): 200 leaves and joins again
 * then the directory is removed: everyone leaves and the set is no longer open.
 */
static void test_cgroup_follow(void **state)
{
	struct mr_targets t = { 0 };
	struct mr_target *j, *l;
	size_t nj, nl;
	char buf[128];

	(void)state;
	proc(100, 'S', 1000);
	proc(200, 'R', 2000);
	proc(300, 'S', 3000);
	put("/sys/fs/cgroup/work/cgroup.procs", "100\n200\n");
	assert_int_equal(mr_targets_add_cgroup(&t, "/sys/fs/cgroup/work/"), 0);
	assert_string_equal(t.cgroups[0], "/sys/fs/cgroup/work");

	assert_int_equal(mr_targets_update(&t, &j, &nj, &l, &nl), 0);
	assert_string_equal(pids(j, nj), "100 200");
	assert_int_equal(nl, 0);
	assert_string_equal(mr_target_text(&t, &j[0], buf, sizeof(buf)),
			    "pid 100 (cgroup /sys/fs/cgroup/work)");
	free(j);
	free(l);

	put("/sys/fs/cgroup/work/cgroup.procs", "100\n200\n300\n");
	assert_int_equal(mr_targets_update(&t, &j, &nj, &l, &nl), 0);
	assert_string_equal(pids(j, nj), "300");
	assert_int_equal(nl, 0);
	free(j);
	free(l);

	proc(400, 'Z', 4000);
	put("/sys/fs/cgroup/work/cgroup.procs", "200\n300\n400\n");
	assert_int_equal(mr_targets_update(&t, &j, &nj, &l, &nl), 0);
	assert_int_equal(nj, 0);
	assert_string_equal(pids(l, nl), "100");
	assert_string_equal(pids(t.members, t.nr_members), "200 300");
	free(j);
	free(l);

	proc(200, 'S', 2500);
	put("/sys/fs/cgroup/work/cgroup.procs", "200\n300\n");
	assert_int_equal(mr_targets_update(&t, &j, &nj, &l, &nl), 0);
	assert_string_equal(pids(j, nj), "200");
	assert_true(j[0].starttime_ticks == 2500);
	assert_string_equal(pids(l, nl), "200");
	assert_true(l[0].starttime_ticks == 2000);
	free(j);
	free(l);
	assert_true(mr_targets_open(&t));

	{
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s/sys/fs/cgroup/work'", root);
		assert_int_equal(system(cmd), 0);
	}
	assert_int_equal(mr_targets_update(&t, &j, &nj, &l, &nl), 0);
	assert_int_equal(nj, 0);
	assert_string_equal(pids(l, nl), "200 300");
	assert_false(mr_targets_open(&t));
	free(j);
	free(l);
	mr_targets_free(&t);
}

/* Named processes: members while they live; one in the cgroup too is followed once. */
static void test_pids(void **state)
{
	struct mr_targets t = { 0 };
	struct mr_target *j, *l;
	size_t nj, nl;
	char buf[128];

	(void)state;
	mkdirs("/sys/fs/cgroup/work");
	put("/sys/fs/cgroup/work/cgroup.controllers", "\n");
	put("/sys/fs/cgroup/work/cgroup.procs", "600\n");
	proc(500, 'S', 5000);
	proc(600, 'S', 6000);
	assert_int_equal(mr_targets_add_pid(&t, 500), 0);
	assert_int_equal(mr_targets_add_pid(&t, 600), 0);
	assert_int_equal(mr_targets_add_pid(&t, 600), 0);
	assert_int_equal(t.nr_pids, 2);
	assert_int_equal(mr_targets_add_pid(&t, 700), -ESRCH);
	assert_string_equal(mr_last_error(), "pid 700: no such process");
	assert_int_equal(mr_targets_add_cgroup(&t, "/sys/fs/cgroup/work"), 0);
	assert_int_equal(mr_targets_update(&t, &j, &nj, &l, &nl), 0);
	assert_string_equal(pids(j, nj), "500 600");
	assert_string_equal(mr_target_text(&t, &j[1], buf, sizeof(buf)), "pid 600");
	free(j);
	free(l);
	proc(500, 'Z', 5000);
	assert_int_equal(mr_targets_update(&t, &j, &nj, &l, &nl), 0);
	assert_int_equal(nj, 0);
	assert_string_equal(pids(l, nl), "500");
	free(j);
	free(l);
	mr_targets_free(&t);
}

/* A missing directory and a cgroup v1 one: one line each. */
static void test_refusals(void **state)
{
	struct mr_targets t = { 0 };

	(void)state;
	assert_int_equal(mr_targets_add_cgroup(&t, "/sys/fs/cgroup/nothere"), -ENOENT);
	assert_string_equal(mr_last_error(), "/sys/fs/cgroup/nothere: no such cgroup");
	assert_int_equal(mr_targets_add_cgroup(&t, "/sys/fs/cgroup/v1/memory/work"),
			 -ENOTSUP);
	assert_string_equal(mr_last_error(), "/sys/fs/cgroup/v1/memory/work: not a cgroup v2 "
			    "directory (no cgroup.controllers); memreg follows cgroup v2 only");
	assert_int_equal(mr_targets_add_cgroup(&t, "work"), -EINVAL);
	assert_string_equal(mr_last_error(), "work: give the cgroup's absolute path "
			    "(/sys/fs/cgroup/...)");
	assert_int_equal(t.nr_cgroups, 0);
	mr_targets_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cgroup_follow),
		cmocka_unit_test(test_pids),
		cmocka_unit_test(test_refusals),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
