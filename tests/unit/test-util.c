/* Unit tests of common/: strict number and size parsing, the root-directory layer. */
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

#include "common/proc.h"
#include "common/root.h"
#include "common/sys.h"
#include "common/util.h"

/* mr_sys_read fails with the errno the test queues, or reads for real. */
ssize_t __real_mr_sys_read(int fd, void *buf, size_t len);
ssize_t __wrap_mr_sys_read(int fd, void *buf, size_t len);
static int read_fail_errno;

ssize_t __wrap_mr_sys_read(int fd, void *buf, size_t len)
{
	if (read_fail_errno) {
		errno = read_fail_errno;
		return -1;
	}
	return __real_mr_sys_read(fd, buf, len);
}

static void test_parse_size(void **state)
{
	static const struct {
		const char *in;
		int ret;
		uint64_t out;
	} cases[] = {
		{ "0", 0, 0 },
		{ "4096", 0, 4096 },
		{ "64K", 0, 64 << 10 },
		{ "512M", 0, 512ull << 20 },
		{ "512MiB", 0, 512ull << 20 },
		{ "512mb", 0, 512ull << 20 },
		{ "1G", 0, 1ull << 30 },
		{ "2T", 0, 2ull << 40 },
		{ "16777215T", 0, 16777215ull << 40 },
		{ "16777216T", -ERANGE, 0 },		/* 2^64 */
		{ "99999999999999999999", -ERANGE, 0 },
		{ "", -EINVAL, 0 },
		{ "M", -EINVAL, 0 },
		{ "-1", -EINVAL, 0 },
		{ " 1", -EINVAL, 0 },
		{ "1X", -EINVAL, 0 },
		{ "1 M", -EINVAL, 0 },
		{ "1MM", -EINVAL, 0 },
		{ "1.5G", -EINVAL, 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < MR_ARRAY_SIZE(cases); i++) {
		uint64_t out = 12345;
		int ret = mr_parse_size(cases[i].in, &out);

		if (ret != cases[i].ret)
			fail_msg("mr_parse_size(\"%s\") = %d, want %d", cases[i].in, ret, cases[i].ret);
		if (ret == 0 && out != cases[i].out)
			fail_msg("mr_parse_size(\"%s\") -> %llu, want %llu", cases[i].in,
				 (unsigned long long)out, (unsigned long long)cases[i].out);
	}
}

static void test_parse_u64(void **state)
{
	uint64_t v;

	(void)state;
	assert_int_equal(mr_parse_u64("0x10", &v), 0);
	assert_int_equal(v, 16);
	assert_int_equal(mr_parse_u64("18446744073709551615", &v), 0);
	assert_true(v == UINT64_MAX);
	assert_int_equal(mr_parse_u64("18446744073709551616", &v), -ERANGE);
	assert_int_equal(mr_parse_u64("12a", &v), -EINVAL);
	assert_int_equal(mr_parse_u64("-3", &v), -EINVAL);
	assert_int_equal(mr_parse_u64("", &v), -EINVAL);
	/* decimal or 0x only: "010" is ten (region 10, not 8), "09" is nine */
	assert_int_equal(mr_parse_u64("010", &v), 0);
	assert_int_equal(v, 10);
	assert_int_equal(mr_parse_u64("09", &v), 0);
	assert_int_equal(v, 9);
	assert_int_equal(mr_parse_u64("0X1f", &v), 0);
	assert_int_equal(v, 31);
	assert_int_equal(mr_parse_u64("0x", &v), -EINVAL);
	assert_int_equal(mr_parse_u64("0x-1", &v), -EINVAL);
	assert_int_equal(mr_parse_u64("0b1", &v), -EINVAL);
}

static void test_parse_duration(void **state)
{
	static const struct {
		const char *in;
		uint64_t bare_unit_us;
		int ret;
		uint64_t out_us;
	} cases[] = {
		{ "5ms", 0, 0, 5000 },
		{ "100ms", 0, 0, 100000 },
		{ "1s", 0, 0, 1000000 },
		{ "0.5s", 0, 0, 500000 },
		{ "2m", 0, 0, 120000000 },
		{ "2min", 0, 0, 120000000 },
		{ "1h", 0, 0, 3600000000ull },
		{ "1d", 0, 0, 86400000000ull },
		{ "250us", 0, 0, 250 },
		{ "1.5ms", 0, 0, 1500 },
		{ "1.0005ms", 0, -EINVAL, 0 },	/* half a microsecond */
		{ "5000", 1, 0, 5000 },		/* a bare number in the caller's unit */
		{ "3", 1000000, 0, 3000000 },
		{ "0.25", 1000000, 0, 250000 },
		{ "5", 0, -EINVAL, 0 },		/* a unit is required */
		{ "5 ms", 0, -EINVAL, 0 },
		{ "5MS", 0, -EINVAL, 0 },
		{ "ms", 0, -EINVAL, 0 },
		{ "-1s", 0, -EINVAL, 0 },
		{ "1.s", 0, -EINVAL, 0 },
		{ "5x", 0, -EINVAL, 0 },
		{ "", 1, -EINVAL, 0 },
		{ "213503983d", 0, -ERANGE, 0 },	/* > 2^64 us */
		{ "213503982d", 0, 0, 18446744044800000000ull },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t v = 12345;
		int ret = mr_parse_duration_us(cases[i].in, cases[i].bare_unit_us, &v);

		if (ret != cases[i].ret || (!ret && v != cases[i].out_us))
			fail_msg("'%s' (bare %llu): got %d, %llu", cases[i].in,
				 (unsigned long long)cases[i].bare_unit_us, ret, (unsigned long long)v);
	}
}

static void test_format_duration(void **state)
{
	char buf[32];

	(void)state;
	assert_string_equal(mr_format_duration(5000, buf, sizeof(buf)), "5 ms");
	assert_string_equal(mr_format_duration(1500000, buf, sizeof(buf)), "1.5 s");
	assert_string_equal(mr_format_duration(120000000, buf, sizeof(buf)), "2 min");
	assert_string_equal(mr_format_duration(250, buf, sizeof(buf)), "250 us");
	assert_string_equal(mr_format_duration(0, buf, sizeof(buf)), "0 us");
}

static void test_format_size(void **state)
{
	char buf[32];

	(void)state;
	assert_string_equal(mr_format_size(512ull << 20, buf, sizeof(buf)), "512 MiB");
	assert_string_equal(mr_format_size(1536ull << 20, buf, sizeof(buf)), "1.5 GiB");
	assert_string_equal(mr_format_size(100, buf, sizeof(buf)), "100 B");
	assert_string_equal(mr_format_size(4ull << 30, buf, sizeof(buf)), "4 GiB");
}

/* A fixture root: DIR/sys/devices/system/memory/block_size_bytes. */
static char fixture_dir[PATH_MAX];

static int setup_root(void **state)
{
	char path[PATH_MAX + 64];
	FILE *f;

	(void)state;
	snprintf(fixture_dir, sizeof(fixture_dir), "/tmp/mr-test-root-XXXXXX");
	if (!mkdtemp(fixture_dir))
		return -1;
	snprintf(path, sizeof(path), "mkdir -p %s/sys/devices/system/memory", fixture_dir);
	if (system(path) != 0)
		return -1;
	snprintf(path, sizeof(path), "%s/sys/devices/system/memory/block_size_bytes", fixture_dir);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fputs("8000000\n", f);
	fclose(f);
	return mr_root_set(fixture_dir);
}

static int teardown_root(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", fixture_dir);
	mr_root_set("/");
	return system(cmd) == 0 ? 0 : -1;
}

static void test_root_reads_under_dir(void **state)
{
	char buf[64];
	uint64_t v;

	(void)state;
	assert_true(mr_root_is_fixture());
	assert_int_equal(mr_root_read_str("/sys/devices/system/memory/block_size_bytes",
					  buf, sizeof(buf)), 0);
	assert_string_equal(buf, "8000000");
	/* block_size_bytes is hex without 0x in sysfs; mr_root_read_u64 reads decimal. */
	assert_int_equal(mr_root_read_u64("/sys/devices/system/memory/block_size_bytes", &v), 0);
	assert_int_equal(v, 8000000);
	assert_int_equal(mr_root_read_str("/sys/nothing", buf, sizeof(buf)), -ENOENT);
	assert_non_null(strstr(mr_last_error(), fixture_dir));
}

static void test_root_refuses_writes_under_fixture(void **state)
{
	(void)state;
	/* Even with --apply, a fixture root is never written. */
	assert_int_equal(mr_root_write_str("/sys/devices/system/memory/block_size_bytes",
					   "1", true), -EROFS);
	assert_int_equal(mr_root_open("/sys/devices/system/memory/block_size_bytes",
				      O_WRONLY), -EROFS);
	assert_null(mr_root_fopen("/sys/devices/system/memory/block_size_bytes", "w"));
	/* nor are directories made or removed in it (tracefs instances) */
	assert_int_equal(mr_root_mkdir("/sys/devices/system/memory/mr-new", true), -EROFS);
	assert_false(mr_root_exists("/sys/devices/system/memory/mr-new"));
	assert_int_equal(mr_root_rmdir("/sys/devices/system/memory", true), -EROFS);
	assert_true(mr_root_exists("/sys/devices/system/memory"));
}

static void test_root_write_needs_apply(void **state)
{
	(void)state;
	assert_int_equal(mr_root_set("/"), 0);
	assert_false(mr_root_is_fixture());
	/* Without --apply nothing is opened: the path need not even exist. */
	assert_int_equal(mr_root_write_str("/sys/kernel/mm/nonexistent", "1", false), -EPERM);
	assert_non_null(strstr(mr_last_error(), "--apply"));
	assert_int_equal(mr_root_mkdir("/sys/kernel/tracing/instances/mr-x", false), -EPERM);
	assert_non_null(strstr(mr_last_error(), "--apply"));
	assert_int_equal(mr_root_rmdir("/sys/kernel/tracing/instances/mr-x", false), -EPERM);
	assert_int_equal(mr_root_set(fixture_dir), 0);
}

static void test_root_read_error_is_reported(void **state)
{
	char buf[64];

	(void)state;
	read_fail_errno = EIO;
	assert_int_equal(mr_root_read_str("/sys/devices/system/memory/block_size_bytes",
					  buf, sizeof(buf)), -EIO);
	read_fail_errno = 0;
	assert_non_null(strstr(mr_last_error(), "block_size_bytes"));
}

static void test_root_set_rejects_missing_dir(void **state)
{
	(void)state;
	assert_int_equal(mr_root_set("/nonexistent-memreg-root"), -ENOENT);
	/* The old root stays in force. */
	assert_string_equal(mr_root_get(), fixture_dir);
}

/* An empty root is an error, never "/": `--root "$FIX"` with FIX unset must not act
 * on the live machine (trust issue, item 2). */
static void test_root_set_rejects_empty(void **state)
{
	(void)state;
	assert_int_equal(mr_root_set(""), -EINVAL);
	assert_non_null(strstr(mr_last_error(), "empty"));
	assert_string_equal(mr_root_get(), fixture_dir);
	setenv("MEMREG_ROOT", "", 1);
	assert_int_equal(mr_root_set(NULL), -EINVAL);
	assert_non_null(strstr(mr_last_error(), "MEMREG_ROOT"));
	assert_string_equal(mr_root_get(), fixture_dir);
	setenv("MEMREG_ROOT", fixture_dir, 1);
	assert_int_equal(mr_root_set(NULL), 0);
	unsetenv("MEMREG_ROOT");
	assert_string_equal(mr_root_get(), fixture_dir);
}

/* Wrapping an error puts the context in front once, and never formats the message
 * buffer into itself (trust issue, item 9: "prof.rec: prof.rec: ds no snapshot"). */
static void test_error_wrap(void **state)
{
	(void)state;
	mr_error(-EINVAL, "no snapshot");
	assert_int_equal(mr_error_wrap(-ENOTSUP, "refs: self-test"), -ENOTSUP);
	assert_string_equal(mr_last_error(), "refs: self-test: no snapshot");
	/* the context is already there: not repeated */
	mr_error(-EINVAL, "prof.rec: no snapshot");
	mr_error_wrap(-EINVAL, "%s", "prof.rec");
	assert_string_equal(mr_last_error(), "prof.rec: no snapshot");
	/* a prefix of a longer word is not the same context */
	mr_error(-EINVAL, "prof.recx: bad");
	mr_error_wrap(-EINVAL, "prof.rec");
	assert_string_equal(mr_last_error(), "prof.rec: prof.recx: bad");
	/* nested wraps read outside in */
	mr_error(-EIO, "read: Input/output error");
	mr_error_wrap(-EIO, "/proc/1/pagemap");
	mr_error_wrap(-EIO, "region %d", 3);
	assert_string_equal(mr_last_error(), "region 3: /proc/1/pagemap: read: Input/output error");
}

static void put_stat(const char *pid, const char *line)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/proc/%s", fixture_dir, pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/proc/%s/stat", fixture_dir, pid);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(line, f);
	fclose(f);
}

/* /proc/PID/stat: fields counted from the last ')', as a command name may hold
 * spaces and parentheses; a zombie is not alive; a new start time is another process. */
static void test_proc_stat(void **state)
{
	struct mr_proc_stat st;
	char path[PATH_MAX];
	uint64_t t;

	(void)state;
	snprintf(path, sizeof(path), "%s/proc", fixture_dir);
	mkdir(path, 0755);
	put_stat("77", "77 (a) b (c) S 1 77 77 0 -1 4194560 100 0 0 0 31 12 0 0 20 0 1 0 "
		 "987654 1000 200 18446744073709551615 1 1 0 0 0\n");
	assert_int_equal(mr_proc_stat_read(77, &st), 0);
	assert_int_equal(st.state, 'S');
	assert_int_equal(st.utime_ticks, 31);
	assert_int_equal(st.stime_ticks, 12);
	assert_int_equal(st.starttime_ticks, 987654);
	assert_int_equal(st.flags, 4194560);	/* 0x400100: no PF_EXITING */
	assert_true(mr_proc_alive(77));
	assert_false(mr_proc_exiting(77));
	assert_int_equal(mr_proc_starttime(77, &t), 0);
	assert_int_equal(t, 987654);
	assert_int_equal(mr_proc_same(77, 987654), 0);
	assert_int_equal(mr_proc_same(77, 987653), -ESRCH);
	assert_non_null(strstr(mr_last_error(), "another process"));
	put_stat("78", "78 (z) Z 1 78 78 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 5 0 0\n");
	assert_false(mr_proc_alive(78));
	assert_true(mr_proc_exiting(78));
	assert_int_equal(mr_proc_same(78, 5), -ESRCH);
	assert_int_equal(mr_proc_stat_read(79, &st), -ESRCH);
	assert_false(mr_proc_alive(79));
	assert_true(mr_proc_exiting(79));
	/* PF_EXITING (0x4) set, not yet a zombie: alive, and exiting */
	put_stat("81", "81 (x) R 1 81 81 0 -1 4194564 0 0 0 0 0 0 0 0 20 0 1 0 6 0 0\n");
	assert_true(mr_proc_alive(81));
	assert_true(mr_proc_exiting(81));
	put_stat("80", "80 (short) R 1 80\n");
	assert_int_equal(mr_proc_stat_read(80, &st), -EINVAL);
}

/* /proc/PID/maps: names with spaces kept whole, anonymous mappings nameless,
 * PROT_NONE and the kernel's own mappings recognised, bad lines refused. */
static void test_proc_maps(void **state)
{
	struct mr_mapping *m;
	char path[PATH_MAX];
	size_t nr;
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/proc/90", fixture_dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/proc/90/maps", fixture_dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("55d0c0000000-55d0c0001000 r--p 00000000 08:01 1234  /usr/bin/my prog\n"
	      "55d0c0001000-55d0c0002000 ---p 00000000 00:00 0 \n"
	      "7f0000000000-7f0000100000 rw-p 00000000 00:00 0\n"
	      "7ffd00000000-7ffd00002000 r-xp 00000000 00:00 0                  [vdso]\n"
	      "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0  [vsyscall]\n", f);
	fclose(f);
	assert_int_equal(mr_proc_maps_read(90, &m, &nr), 0);
	assert_int_equal(nr, 5);
	assert_true(m[0].start == 0x55d0c0000000ull && m[0].end == 0x55d0c0001000ull);
	assert_string_equal(m[0].perms, "r--p");
	assert_string_equal(m[0].name, "/usr/bin/my prog");
	assert_true(mr_mapping_is_prot_none(&m[1]));
	assert_false(mr_mapping_is_prot_none(&m[2]));
	assert_string_equal(m[2].name, "");
	assert_true(mr_mapping_is_special(&m[3]));
	assert_true(mr_mapping_is_special(&m[4]));
	assert_false(mr_mapping_is_special(&m[0]));
	free(m);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("7f0000100000-7f0000200000 rw-p 00000000 00:00 0\n"
	      "7f0000000000-7f0000100000 rw-p 00000000 00:00 0\n", f);
	fclose(f);
	assert_int_equal(mr_proc_maps_read(90, &m, &nr), -EINVAL);
	assert_non_null(strstr(mr_last_error(), "out of order"));
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("7f0000100000 rw-p\n", f);
	fclose(f);
	assert_int_equal(mr_proc_maps_read(90, &m, &nr), -EINVAL);
	assert_int_equal(mr_proc_maps_read(91, &m, &nr), -ESRCH);
}

/* A host file (--mpst FILE, a record) is read whole, never under the root; the size
 * limit holds; the same reader serves the root layer. */
static void test_read_host_file(void **state)
{
	char path[PATH_MAX], *data;
	size_t len;
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/host-file", fixture_dir);
	f = fopen(path, "w");
	assert_non_null(f);
	for (len = 0; len < 10000; len++)
		fputc('a' + (int)(len % 26), f);
	fclose(f);
	/* the root is the fixture, yet the path is the host's own */
	assert_true(mr_root_is_fixture());
	assert_int_equal(mr_read_host_file(path, 1 << 20, &data, &len), 0);
	assert_int_equal(len, 10000);
	assert_int_equal(data[9999], 'a' + 9999 % 26);
	assert_int_equal(data[10000], '\0');
	free(data);
	assert_int_equal(mr_read_host_file(path, 8192, &data, &len), -EFBIG);
	assert_non_null(strstr(mr_last_error(), "larger than 8192 bytes"));
	assert_int_equal(mr_read_host_file("/nonexistent-memreg", 8192, &data, &len), -ENOENT);
	assert_string_equal(mr_last_error(), "/nonexistent-memreg: No such file or directory");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_size),
		cmocka_unit_test(test_parse_u64),
		cmocka_unit_test(test_format_size),
		cmocka_unit_test(test_parse_duration),
		cmocka_unit_test(test_format_duration),
		cmocka_unit_test(test_root_reads_under_dir),
		cmocka_unit_test(test_root_refuses_writes_under_fixture),
		cmocka_unit_test(test_root_write_needs_apply),
		cmocka_unit_test(test_root_read_error_is_reported),
		cmocka_unit_test(test_root_set_rejects_missing_dir),
		cmocka_unit_test(test_root_set_rejects_empty),
		cmocka_unit_test(test_error_wrap),
		cmocka_unit_test(test_proc_stat),
		cmocka_unit_test(test_proc_maps),
		cmocka_unit_test(test_read_host_file),
	};

	return cmocka_run_group_tests(tests, setup_root, teardown_root);
}
