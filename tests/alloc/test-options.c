/* Unit tests of MEMREG_* option parsing (allocator/options.c): booleans, sizes,
 * numbers, bad values warned once with the default kept, AT_SECURE. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "allocator/internal.h"

static void test_parse(void **state)
{
	static const struct {
		enum mr_opt_type type;
		const char *in;
		int ret;
		uint64_t out;
	} cases[] = {
		{ MR_OPT_BOOL, "1", 0, 1 }, { MR_OPT_BOOL, "on", 0, 1 }, { MR_OPT_BOOL, "YES", 0, 1 },
		{ MR_OPT_BOOL, "True", 0, 1 }, { MR_OPT_BOOL, "0", 0, 0 }, { MR_OPT_BOOL, "off", 0, 0 },
		{ MR_OPT_BOOL, "no", 0, 0 }, { MR_OPT_BOOL, "false", 0, 0 }, { MR_OPT_BOOL, "2", -1, 0 },
		{ MR_OPT_BOOL, "", -1, 0 }, { MR_OPT_BOOL, "yess", -1, 0 },
		{ MR_OPT_SIZE, "4096", 0, 4096 }, { MR_OPT_SIZE, "64M", 0, 64 << 20 },
		{ MR_OPT_SIZE, "2k", 0, 2048 }, { MR_OPT_SIZE, "1G", 0, 1 << 30 },
		{ MR_OPT_SIZE, "1GiB", 0, 1 << 30 }, { MR_OPT_SIZE, "8MB", 0, 8 << 20 },
		{ MR_OPT_SIZE, "1T", -1, 0 }, { MR_OPT_SIZE, "M", -1, 0 }, { MR_OPT_SIZE, "-1", -1, 0 },
		{ MR_OPT_SIZE, "99999999999999999999", -1, 0 }, { MR_OPT_SIZE, "17179869184G", -1, 0 },
		{ MR_OPT_SIZE, "1 M", -1, 0 },
		{ MR_OPT_U64, "250", 0, 250 }, { MR_OPT_U64, "250ms", -1, 0 }, { MR_OPT_U64, "", -1, 0 },
		{ MR_OPT_PATH, "/tmp/x", 0, 0 }, { MR_OPT_PATH, "", -1, 0 },
	};
	unsigned i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t v = 0;
		int rc = mr_option_parse(cases[i].type, cases[i].in, &v);

		if (rc != cases[i].ret)
			fail_msg("'%s': returned %d, want %d", cases[i].in, rc, cases[i].ret);
		if (rc == 0 && cases[i].type != MR_OPT_PATH && v != cases[i].out)
			fail_msg("'%s': %llu, want %llu", cases[i].in, (unsigned long long)v,
				 (unsigned long long)cases[i].out);
	}
}

static unsigned warnings;
static char warned[256];	/* "name=value;" or "unknown name;" per warning */

static void warn(const char *name, const char *value)
{
	size_t n = strlen(warned);

	warnings++;
	if (value)
		snprintf(warned + n, sizeof(warned) - n, "%s=%s;", name, value);
	else
		snprintf(warned + n, sizeof(warned) - n, "unknown %s;", name);
}

static void test_load(void **state)
{
	char *env[] = {
		"PATH=/bin", "MEMREG_REGION_SIZE=128M", "MEMREG_DECAY_MS=oops",
		"MEMREG_SHOW_STATS=yes", "MEMREG_PROFILE=/tmp/p", "MEMREG_REGION_SIZEX=1",
		"MEMREG_UNKNOWN=1", "MEMREG_ROOT=/tmp/root", "MEMREG_STATE_DIR=/tmp/s", NULL,
	};

	(void)state;
	warnings = 0;
	warned[0] = '\0';
	mr_options_load(env, false, warn);
	assert_int_equal(MR_OPT(region_size), 128 << 20);
	assert_string_equal(MR_OPT_STR(region_size), "128M");	/* kept for messages */
	assert_int_equal(MR_OPT(decay_ms), mr_options[MR_OPT_decay_ms].def);
	assert_null(MR_OPT_STR(decay_ms));
	/* The bad value with its value; misspelt and unknown names once each; the
	 * tools' own variables (MEMREG_ROOT, MEMREG_STATE_DIR) not at all. */
	assert_int_equal(warnings, 3);
	assert_string_equal(warned, "MEMREG_DECAY_MS=oops;unknown MEMREG_REGION_SIZEX=1;"
			    "unknown MEMREG_UNKNOWN=1;");
	assert_int_equal(MR_OPT(show_stats), 1);
	assert_string_equal(MR_OPT_STR(profile), "/tmp/p");
	assert_null(MR_OPT_STR(site_map));
	/* Loading again starts from the defaults. */
	mr_options_load(env + 8, false, warn);
	assert_int_equal(MR_OPT(region_size), 64 << 20);
	assert_int_equal(MR_OPT(show_stats), 0);
	assert_null(MR_OPT_STR(profile));
}

static void test_secure(void **state)
{
	char *env[] = { "MEMREG_PROFILE=/etc/shadow", "MEMREG_SHOW_STATS=1",
			"MEMREG_REGION_SIZE=1M", "MEMREG_SITE_MAP=/tmp/x", "MEMREG_BOGUS=1", NULL };

	(void)state;
	warnings = 0;
	mr_options_load(env, true, warn);
	assert_null(MR_OPT_STR(profile));
	assert_null(MR_OPT_STR(site_map));
	assert_int_equal(MR_OPT(show_stats), 0);
	assert_int_equal(MR_OPT(region_size), 64 << 20);
	assert_int_equal(warnings, 0);
}

/* MEMREG_SITE_MAP's file: %p is the pid, mode 0600, no symlink followed; without
 * %p a forked child and a process that finds it written since it started leave it. */
static void test_open_output(void **state)
{
	char dir[] = "/tmp/test-options.XXXXXX", pattern[128], path[128], want[128], link_path[160];
	char *env[] = { pattern, NULL };
	struct stat st;
	int fd, status;
	pid_t pid;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(pattern, sizeof(pattern), "MEMREG_SITE_MAP=%s/map.%%p.100%%%%", dir);
	mr_options_load(env, false, warn);
	fd = mr_option_open_output(MR_OPT_STR(site_map), path, sizeof(path));
	assert_true(fd >= 0);
	snprintf(want, sizeof(want), "%s/map.%ld.100%%", dir, (long)getpid());
	assert_string_equal(path, want);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	close(fd);
	unlink(path);
	/* A symbolic link is not followed. */
	snprintf(link_path, sizeof(link_path), "%s/map", dir);
	assert_int_equal(symlink("/tmp/elsewhere-test-options", link_path), 0);
	snprintf(pattern, sizeof(pattern), "MEMREG_SITE_MAP=%s/map", dir);
	mr_options_load(env, false, warn);
	errno = 0;
	assert_int_equal(mr_option_open_output(MR_OPT_STR(site_map), path, sizeof(path)), -1);
	assert_int_equal(errno, ELOOP);
	unlink(link_path);
	/* Without %p: the owner writes; a forked child does not. */
	fd = mr_option_open_output(MR_OPT_STR(site_map), path, sizeof(path));
	assert_true(fd >= 0);
	pid = fork();
	if (pid == 0)
		_exit(mr_option_open_output(MR_OPT_STR(site_map), path, sizeof(path)) == -2 ? 0 : 1);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(status, 0);
	/* Written since this process started (as by a child that exec'd): left alone. */
	assert_int_equal(write(fd, "x\n", 2), 2);
	close(fd);
	assert_int_equal(mr_option_open_output(MR_OPT_STR(site_map), path, sizeof(path)), -2);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_load),
		cmocka_unit_test(test_secure),
		cmocka_unit_test(test_open_output),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
