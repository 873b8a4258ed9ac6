/* Unit tests of power/energy.c and the sources: wrap arithmetic, the sampling
 * period, cpulist parsing, the perf path through wrapped mr_sys_perf_event_open and
 * mr_sys_read, the powercap permission message, and the sampling thread. */
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
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <linux/perf_event.h>

#include "common/root.h"
#include "common/sys.h"
#include "power/energy.h"

#define FAKE_FD 1000

/* perf_event_open: the test checks the attr and cpu, and returns a fake fd or an error. */
long __wrap_mr_sys_perf_event_open(void *attr, pid_t pid, int cpu, int group_fd,
				   unsigned long flags);
long __wrap_mr_sys_perf_event_open(void *attr, pid_t pid, int cpu, int group_fd,
				   unsigned long flags)
{
	const struct perf_event_attr *a = attr;
	int err;

	check_expected(cpu);
	check_expected(pid);
	assert_int_equal(a->type, 24);
	assert_int_equal(a->config, 3);
	assert_int_equal(a->size, sizeof(*a));
	err = mock_type(int);
	if (err) {
		errno = err;
		return -1;
	}
	return FAKE_FD + cpu;
}

/* read: fake perf fds return queued counts; everything else is read for real. */
ssize_t __real_mr_sys_read(int fd, void *buf, size_t len);
ssize_t __wrap_mr_sys_read(int fd, void *buf, size_t len);
ssize_t __wrap_mr_sys_read(int fd, void *buf, size_t len)
{
	uint64_t v;

	if (fd < FAKE_FD)
		return __real_mr_sys_read(fd, buf, len);
	assert_int_equal(len, sizeof(v));
	check_expected(fd);
	v = mock_type(uint64_t);
	memcpy(buf, &v, sizeof(v));
	return sizeof(v);
}

int __real_mr_sys_close(int fd);
int __wrap_mr_sys_close(int fd);
int __wrap_mr_sys_close(int fd)
{
	return fd >= FAKE_FD ? 0 : __real_mr_sys_close(fd);
}

/* open: fails with EACCES on energy_uj files when the test asks. */
static int open_energy_errno;
int __real_mr_sys_open(const char *path, int flags, mode_t mode);
int __wrap_mr_sys_open(const char *path, int flags, mode_t mode);
int __wrap_mr_sys_open(const char *path, int flags, mode_t mode)
{
	size_t n = strlen(path);

	if (open_energy_errno && n >= 10 && strcmp(path + n - 10, "/energy_uj") == 0) {
		errno = open_energy_errno;
		return -1;
	}
	return __real_mr_sys_open(path, flags, mode);
}

static void set_fixture(const char *name)
{
	const char *top = getenv("top_srcdir");
	char dir[4096];

	snprintf(dir, sizeof(dir), "%s/tests/fixtures/%s", top ? top : "..", name);
	if (mr_root_set(dir))
		fail_msg("%s", mr_last_error());
}

static void test_delta(void **state)
{
	static const struct {
		uint64_t prev, now, range, want;
	} cases[] = {
		{ 10, 15, 100, 5 },
		{ 90, 5, 100, 15 },		/* one wrap: 100 - 90 + 5 */
		{ 0, 0, 100, 0 },
		{ 0xffffff00, 0x100, UINT64_C(1) << 32, 0x200 },
		{ 262143328000ull, 1000, 262143328851ull, 1851 },
		{ UINT64_MAX - 1, 3, 0, 5 },	/* range 0: modulo 2^64 */
	};
	size_t i;

	(void)state;
	for (i = 0; i < MR_ARRAY_SIZE(cases); i++)
		if (mr_energy_delta(cases[i].prev, cases[i].now, cases[i].range) != cases[i].want)
			fail_msg("case %zu: delta(%llu, %llu, %llu) = %llu, want %llu", i,
				 (unsigned long long)cases[i].prev, (unsigned long long)cases[i].now,
				 (unsigned long long)cases[i].range,
				 (unsigned long long)mr_energy_delta(cases[i].prev, cases[i].now,
								     cases[i].range),
				 (unsigned long long)cases[i].want);
}

static void test_period(void **state)
{
	static struct mr_energy_source src;

	(void)state;
	memset(&src, 0, sizeof(src));
	/* 32-bit MSR at 15.3 uJ: 65713.0 J fill in 164.28 s at 400 W; halved: 82141 ms. */
	src.nr_counters = 2;
	src.counters[0].range_raw = UINT64_C(1) << 32;
	src.counters[0].uj_per_raw = 15.3;
	/* powercap range 262143328851 uJ: 655358 ms to fill; the MSR one is shorter. */
	src.counters[1].range_raw = 262143328851ull;
	src.counters[1].uj_per_raw = 1;
	assert_int_equal(mr_energy_period_ms(&src), 82141);
	src.counters[0].range_raw = 0;		/* 64-bit perf count: only the other one */
	assert_int_equal(mr_energy_period_ms(&src), 327679);
	src.counters[1].range_raw = 0;
	assert_int_equal(mr_energy_period_ms(&src), 0);	/* nothing wraps: no thread */
}

static void test_cpulist(void **state)
{
	int cpus[16];
	unsigned n;

	(void)state;
	assert_int_equal(mr_energy_parse_cpulist("0-2,8,10-11\n", cpus, 16, &n), 0);
	assert_int_equal(n, 6);
	assert_int_equal(cpus[0], 0);
	assert_int_equal(cpus[2], 2);
	assert_int_equal(cpus[3], 8);
	assert_int_equal(cpus[5], 11);
	assert_int_equal(mr_energy_parse_cpulist("0,36", cpus, 16, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(cpus[1], 36);
	assert_int_equal(mr_energy_parse_cpulist("3-1", cpus, 16, &n), -EINVAL);
	assert_int_equal(mr_energy_parse_cpulist("a", cpus, 16, &n), -EINVAL);
	assert_int_equal(mr_energy_parse_cpulist("0-20", cpus, 16, &n), -E2BIG);
}

static void expect_perf_opens(int err0)
{
	expect_value(__wrap_mr_sys_perf_event_open, cpu, 0);
	expect_value(__wrap_mr_sys_perf_event_open, pid, -1);
	will_return(__wrap_mr_sys_perf_event_open, err0);
	if (err0)
		return;
	expect_value(__wrap_mr_sys_perf_event_open, cpu, 2);
	expect_value(__wrap_mr_sys_perf_event_open, pid, -1);
	will_return(__wrap_mr_sys_perf_event_open, 0);
}

static void expect_reads(uint64_t c0, uint64_t c2)
{
	expect_value(__wrap_mr_sys_read, fd, FAKE_FD + 0);
	will_return(__wrap_mr_sys_read, c0);
	expect_value(__wrap_mr_sys_read, fd, FAKE_FD + 2);
	will_return(__wrap_mr_sys_read, c2);
}

/* The fixture's power PMU: type 24, energy-ram = event=0x03, scale 2^-32 J, cpumask
 * 0,2 (cpu0 in package 0, cpu2 in package 1). 2^32 counts = 1 J. */
static void run_perf(const char *event)
{
	static struct mr_energy_source src;
	struct mr_energy_opts opts = { .event = event };

	set_fixture("energy-intel-2s");
	expect_perf_opens(0);
	if (mr_energy_open(&src, "perf", &opts))
		fail_msg("%s", mr_last_error());
	assert_int_equal(src.nr_counters, 2);
	assert_int_equal(src.counters[0].socket, 0);
	assert_int_equal(src.counters[1].socket, 1);
	assert_int_equal(src.counters[1].cpu, 2);
	assert_int_equal(src.sample_period_ms, 0);	/* a 64-bit count never wraps */
	expect_reads(UINT64_C(5) << 32, 7);
	assert_int_equal(mr_energy_start(&src), 0);
	expect_reads(UINT64_C(6) << 32, 7 + (UINT64_C(2) << 32));
	assert_int_equal(mr_energy_update(&src), 0);
	assert_true(src.counters[0].energy_uj == 1e6);
	assert_true(src.counters[1].energy_uj == 2e6);
	assert_true(mr_energy_total_uj(&src) == 3e6);
	mr_energy_close(&src);
}

static void test_perf_sysfs_name(void **state)
{
	(void)state;
	run_perf(NULL);
}

static void test_perf_libpfm_name(void **state)
{
	(void)state;
	run_perf("rapl::RAPL_ENERGY_DRAM");
}

static void test_perf_eacces(void **state)
{
	static struct mr_energy_source src;

	(void)state;
	set_fixture("energy-intel-2s");
	expect_perf_opens(EACCES);
	assert_int_equal(mr_energy_open(&src, "perf", NULL), -EACCES);
	assert_non_null(strstr(mr_last_error(), "perf_event_paranoid"));
}

static void test_powercap_unreadable(void **state)
{
	static struct mr_energy_source src;

	(void)state;
	set_fixture("energy-intel-2s");
	open_energy_errno = EACCES;
	assert_int_equal(mr_energy_open(&src, "powercap", NULL), -EACCES);
	open_energy_errno = 0;
	assert_non_null(strstr(mr_last_error(), "exists but is not readable"));
	assert_non_null(strstr(mr_last_error(), "root-only since Linux 5.10"));
}

/* A source whose counter moves by range - 1 at every read: one read missed would
 * lose a wrap. The sampling thread's reads and the final one must all be counted. */
static int fake_reads;
static int fake_open(struct mr_energy_source *src)
{
	src->counters[0].range_raw = 1000;
	src->counters[0].uj_per_raw = 2;
	src->nr_counters = 1;
	return 0;
}

static int fake_read(struct mr_energy_source *src)
{
	src->counters[0].raw = (uint64_t)fake_reads * 999 % 1000;
	fake_reads++;
	return 0;
}

static void test_sampling_thread(void **state)
{
	static const struct mr_energy_ops fake = {
		.name = "fake", .open = fake_open, .read = fake_read,
	};
	static struct mr_energy_source src;
	int i, reads;

	(void)state;
	memset(&src, 0, sizeof(src));
	pthread_mutex_init(&src.lock, NULL);
	pthread_cond_init(&src.cond, NULL);
	src.ops = &fake;
	fake_open(&src);
	src.sample_period_ms = 1;
	fake_reads = 0;
	assert_int_equal(mr_energy_start(&src), 0);
	/* Wait (not a timing assertion: up to 60 s) for the thread to read twice. */
	for (i = 0; i < 60000; i++) {
		struct timespec ts = { 0, 1000000 };

		pthread_mutex_lock(&src.lock);
		reads = fake_reads;
		pthread_mutex_unlock(&src.lock);
		if (reads >= 3)
			break;
		nanosleep(&ts, NULL);
	}
	assert_int_equal(mr_energy_update(&src), 0);
	mr_energy_stop(&src);
	/* Every read after the baseline added 999 counts of 2 uJ. */
	assert_true(src.counters[0].energy_uj == (double)(fake_reads - 1) * 999 * 2);
	assert_true(fake_reads >= 4);
	src.ops = NULL;
	mr_energy_close(&src);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_delta),
		cmocka_unit_test(test_period),
		cmocka_unit_test(test_cpulist),
		cmocka_unit_test(test_perf_sysfs_name),
		cmocka_unit_test(test_perf_libpfm_name),
		cmocka_unit_test(test_perf_eacces),
		cmocka_unit_test(test_powercap_unreadable),
		cmocka_unit_test(test_sampling_thread),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
