/* Unit tests of the cgroup helpers bench's per-run groups use (common/cgroup.c):
 * the cgroup2 mount from /proc/self/mounts of a fixture root (a systemd host, this
 * kind of v1/v2 hybrid, a path with an escaped space, none at all), and a fresh
 * group refused under a fixture root, nothing created. */
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

#include "common/cgroup.h"
#include "common/root.h"
#include "common/util.h"

static char root[] = "/tmp/mr-test-cgroup.XXXXXX";

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

static int setup(void **state)
{
	(void)state;
	assert_non_null(mkdtemp(root));
	mkdirs("/proc/self");
	mkdirs("/sys/fs/cgroup/unified");
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

/* The first cgroup2 line wins; v1 "cgroup" lines and the tmpfs under them are not it. */
static void test_mount(void **state)
{
	char mnt[256];

	(void)state;
	put("/proc/self/mounts", "cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid,nodev,noexec 0 0\n");
	assert_int_equal(mr_cgroup2_mount(mnt, sizeof(mnt)), 0);
	assert_string_equal(mnt, "/sys/fs/cgroup");
	/* this host: the v1/v2 hybrid */
	put("/proc/self/mounts", "tmpfs /sys/fs/cgroup tmpfs rw,relatime,mode=755 0 0\n"
	    "cgroup /sys/fs/cgroup/cpu cgroup rw,relatime,cpu 0 0\n"
	    "cgroup2 /sys/fs/cgroup/unified cgroup2 rw,relatime 0 0\n");
	assert_int_equal(mr_cgroup2_mount(mnt, sizeof(mnt)), 0);
	assert_string_equal(mnt, "/sys/fs/cgroup/unified");
	put("/proc/self/mounts", "none /mnt/my\\040groups cgroup2 rw 0 0\n");
	assert_int_equal(mr_cgroup2_mount(mnt, sizeof(mnt)), 0);
	assert_string_equal(mnt, "/mnt/my groups");
	put("/proc/self/mounts", "cgroup /sys/fs/cgroup/cpu cgroup rw,relatime,cpu 0 0\n");
	assert_int_equal(mr_cgroup2_mount(mnt, sizeof(mnt)), -ENOTSUP);
	assert_string_equal(mr_last_error(), "no cgroup v2 hierarchy is mounted (no cgroup2 "
			    "line in /proc/self/mounts; mount -t cgroup2 none /sys/fs/cgroup)");
}

/* A fresh group: refused under a fixture root even with apply, nothing created;
 * one that exists already is named. */
static void test_fresh(void **state)
{
	char dir[256], path[512];
	struct stat st;

	(void)state;
	put("/proc/self/mounts", "cgroup2 /sys/fs/cgroup/unified cgroup2 rw,relatime 0 0\n");
	assert_int_equal(mr_cgroup_mkdir_fresh("memreg-bench-1-0", true, dir, sizeof(dir)),
			 -EROFS);
	assert_string_equal(dir, "/sys/fs/cgroup/unified/memreg-bench-1-0");
	snprintf(path, sizeof(path), "%s%s", root, dir);
	assert_int_not_equal(stat(path, &st), 0);
	mkdirs("/sys/fs/cgroup/unified/memreg-bench-1-1");
	assert_int_equal(mr_cgroup_mkdir_fresh("memreg-bench-1-1", true, dir, sizeof(dir)),
			 -EEXIST);
	assert_string_equal(mr_last_error(), "cgroup: /sys/fs/cgroup/unified/memreg-bench-1-1 "
			    "exists already (left by a memreg that was killed? remove it with "
			    "rmdir when it holds no process)");
	assert_int_equal(mr_cgroup_enter("/sys/fs/cgroup/unified/memreg-bench-1-1", 1, true),
			 -EROFS);
	assert_int_equal(mr_cgroup_rmdir("/sys/fs/cgroup/unified/memreg-bench-1-1", true),
			 -EROFS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mount),
		cmocka_unit_test(test_fresh),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
