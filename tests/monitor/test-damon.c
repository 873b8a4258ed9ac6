/* The damon backend's safety: where DAMON is in use (nr_kdamonds != 0, a kdamond
 * thread, the reclaim / LRU-sort / stat modules on, a running memreg's owner file)
 * it writes nothing at all, even with --apply on a root that would accept writes;
 * a configuration someone makes between memreg's check and its nr_kdamonds write
 * is left alone; memreg marks what it creates as its own (/run/memreg/damon.owner,
 * a tracefs instance memreg-PID-STARTTIME) and at the end resets only that;
 * damon-reset cleans up after a killed memreg, never under a live one.
 * Runs on fixture roots only: the wrappers below stand for the kernel. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
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

static char root[] = "/tmp/mr-test-damon-XXXXXX";
/* memreg's own start time in the fixture's /proc/PID/stat (ticks) */
#define MY_START 4242000u
/* the fake kernel's kdamond threads: pid KDAMOND_PID + index */
#define KDAMOND_PID 4300

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

static void rm_rf(const char *rel)
{
	char cmd[700];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s%s'", root, rel);
	assert_int_equal(system(cmd), 0);
}

static bool exists(const char *rel)
{
	char p[512];

	snprintf(p, sizeof(p), "%s%s", root, rel);
	return access(p, F_OK) == 0;
}

/* The fixture's file, whole (for the owner file's exact text). */
static char *slurp(const char *rel)
{
	static char buf[4096];
	char p[512];
	size_t n;
	FILE *f;

	snprintf(p, sizeof(p), "%s%s", root, rel);
	f = fopen(p, "r");
	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* /proc/PID/stat with the fields memreg reads: utime, stime (14, 15), start (22) */
static void put_stat(long pid, const char *comm, unsigned long utime, unsigned long stime,
		     uint64_t start)
{
	char rel[64], text[256];

	snprintf(rel, sizeof(rel), "/proc/%ld/stat", pid);
	snprintf(text, sizeof(text), "%ld (%s) S 1 1 1 0 -1 0 0 0 0 0 %lu %lu 0 0 20 0 1 0 %"
		 PRIu64 " 0 0\n", pid, comm, utime, stime, start);
	put(rel, text);
}

/* Every change the backend makes goes through mr_root_write_str, _write_file,
 * _unlink, _mkdir and _rmdir: wrapped, they stand for a live root ("/") and the
 * kernel behind it, and each is recorded in writes[] ("path=value", "mkdir path",
 * ...). The fake kernel: nr_kdamonds=N makes fresh kdamonds/0..N-1 (off, pid -1, no
 * context); state=on starts kdamond.I as pid KDAMOND_PID + I (comm and stat in
 * /proc), state=off stops it; asking a stopped or running kdamond for tried regions
 * stops it (its target exited: the first snapshot ends a run); mkdir of a tracefs
 * instance gives it a trace_pipe (a file: reads end at once). */
static bool writes_allowed;
static const char *write_fails;	/* a write whose "path=value" holds this fails */
static char writes[512][200];
static unsigned nr_writes;
/* Someone else configures DAMON when memreg's write/mkdir named here happens. */
static const char *inject_on;
/* A reader holds DAMON's sysfs lock: this many writes to a state file answer -EBUSY
 * (the store's trylock) before one goes through. */
static unsigned state_busy;

static void record(const char *fmt, ...) MR_PRINTF(1, 2);
static void record(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (nr_writes < MR_ARRAY_SIZE(writes))
		vsnprintf(writes[nr_writes++], sizeof(writes[0]), fmt, ap);
	va_end(ap);
}

/* Another user's kdamond, configured and started: what memreg must never clear. */
static void someone_else_configures(void)
{
	put("/sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds", "1\n");
	put("/sys/kernel/mm/damon/admin/kdamonds/0/state", "on\n");
	put("/sys/kernel/mm/damon/admin/kdamonds/0/pid", "5555\n");
	put("/sys/kernel/mm/damon/admin/kdamonds/0/contexts/nr_contexts", "1\n");
	put("/sys/kernel/mm/damon/admin/kdamonds/0/contexts/0/operations", "paddr\n");
	put("/proc/5555/comm", "kdamond.0\n");
}

static void maybe_inject(const char *what)
{
	if (inject_on && strstr(what, inject_on)) {
		inject_on = NULL;
		someone_else_configures();
	}
}

static void fake_kernel(const char *path, const char *s)
{
	const char *kd = "/sys/kernel/mm/damon/admin/kdamonds/";
	char rel[200];
	unsigned idx;

	if (!strcmp(path, "/sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds")) {
		unsigned i, n = (unsigned)atoi(s);

		for (i = 0; i < n; i++) {
			snprintf(rel, sizeof(rel), "%s%u/state", kd, i);
			put(rel, "off\n");
			snprintf(rel, sizeof(rel), "%s%u/pid", kd, i);
			put(rel, "-1\n");
			snprintf(rel, sizeof(rel), "%s%u/contexts/nr_contexts", kd, i);
			put(rel, "0\n");
		}
		put(path, s);
		return;
	}
	if (sscanf(path, "/sys/kernel/mm/damon/admin/kdamonds/%u/state", &idx) == 1 &&
	    strstr(path, "/state") == path + strlen(path) - 6) {
		char pid[32];

		snprintf(pid, sizeof(pid), "/proc/%u", KDAMOND_PID + idx);
		if (!strcmp(s, "on")) {
			char comm[32], p[64];

			put(path, "on\n");
			snprintf(rel, sizeof(rel), "%s%u/pid", kd, idx);
			snprintf(p, sizeof(p), "%u\n", KDAMOND_PID + idx);
			put(rel, p);
			snprintf(comm, sizeof(comm), "kdamond.%u\n", idx);
			snprintf(rel, sizeof(rel), "%s/comm", pid);
			put(rel, comm);
			put_stat(KDAMOND_PID + idx, "kdamond.0", 150, 50, 100);
		} else if (!strcmp(s, "off") || !strcmp(s, "update_schemes_tried_regions")) {
			put(path, "off\n");
			snprintf(rel, sizeof(rel), "%s%u/pid", kd, idx);
			put(rel, "-1\n");
			rm_rf(pid);
		}
		return;	/* commit etc.: the state file keeps reading on/off */
	}
	put(path, s);
}

/* The fake DAMON tree is a fixture root whose writes go through the wrappers below:
 * the guard answers as on a live machine (--apply or -EPERM), not -EROFS. */
int __wrap_mr_root_may_change(const char *what, bool apply);
int __wrap_mr_root_may_change(const char *what, bool apply)
{
	if (apply)
		return 0;
	return mr_error(-EPERM, "did not %s: it changes the kernel's state; pass --apply to "
			"do it", what);
}

int __wrap_mr_root_write_str(const char *linux_path, const char *s, bool apply);
int __wrap_mr_root_write_str(const char *linux_path, const char *s, bool apply)
{
	if (!writes_allowed)
		fail_msg("write of '%s' to %s while DAMON is in use", s, linux_path);
	assert_true(apply);
	record("%s=%s", linux_path, s);
	if (write_fails && nr_writes && strstr(writes[nr_writes - 1], write_fails))
		return -EINVAL;
	if (state_busy && strstr(linux_path, "/state")) {
		state_busy--;
		return -EBUSY;
	}
	fake_kernel(linux_path, s);
	if (!strcmp(s, "update_schemes_tried_regions"))
		return mr_error(-EINVAL, "%s: kdamond not running", linux_path);
	maybe_inject(writes[nr_writes - 1]);
	return 0;
}

int __wrap_mr_root_write_file(const char *linux_path, const char *data, size_t len, bool apply);
int __wrap_mr_root_write_file(const char *linux_path, const char *data, size_t len, bool apply)
{
	char copy[4096];

	if (!writes_allowed)
		fail_msg("file %s written while DAMON is in use", linux_path);
	assert_true(apply);
	assert_true(len < sizeof(copy));
	memcpy(copy, data, len);
	copy[len] = '\0';
	record("file %s", linux_path);
	put(linux_path, copy);
	maybe_inject(writes[nr_writes - 1]);
	return 0;
}

int __wrap_mr_root_unlink(const char *linux_path, bool apply);
int __wrap_mr_root_unlink(const char *linux_path, bool apply)
{
	if (!writes_allowed)
		fail_msg("unlink %s while DAMON is in use", linux_path);
	assert_true(apply);
	record("unlink %s", linux_path);
	assert_true(exists(linux_path));
	rm_rf(linux_path);
	return 0;
}

int __wrap_mr_root_mkdir(const char *linux_path, bool apply);
int __wrap_mr_root_mkdir(const char *linux_path, bool apply)
{
	char rel[300];

	if (!writes_allowed)
		fail_msg("mkdir %s while DAMON is in use", linux_path);
	assert_true(apply);
	record("mkdir %s", linux_path);
	if (strstr(linux_path, "/instances/")) {
		put(mr_pathf(rel, sizeof(rel), "%s/trace_pipe", linux_path), "");
	} else {
		char p[512];

		snprintf(p, sizeof(p), "%s%s", root, linux_path);
		mkdir(p, 0755);
	}
	maybe_inject(writes[nr_writes - 1]);
	return 0;
}

int __wrap_mr_root_rmdir(const char *linux_path, bool apply);
int __wrap_mr_root_rmdir(const char *linux_path, bool apply)
{
	if (!writes_allowed)
		fail_msg("rmdir %s while DAMON is in use", linux_path);
	assert_true(apply);
	record("rmdir %s", linux_path);
	assert_true(exists(linux_path));
	rm_rf(linux_path);
	return 0;
}

/* No other path may write either. */
ssize_t __wrap_mr_sys_write(int fd, const void *buf, size_t len);
ssize_t __wrap_mr_sys_write(int fd, const void *buf, size_t len)
{
	fail_msg("mr_sys_write called");
	return -1;
}

static void reset_root(void)
{
	char rel[64];

	rm_rf("/sys");
	rm_rf("/proc");
	rm_rf("/run");
	put("/proc/1/comm", "init\n");
	put("/proc/77/comm", "bash\n");
	put_stat(getpid(), "test-damon", 0, 0, MY_START);
	put(mr_pathf(rel, sizeof(rel), "/proc/%ld/comm", (long)getpid()), "test-damon\n");
	put("/sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds", "0\n");
	put("/sys/module/damon_reclaim/parameters/enabled", "N\n");
	put("/sys/module/damon_lru_sort/parameters/enabled", "N\n");
	nr_writes = 0;
	inject_on = NULL;
	write_fails = NULL;
}

/* Which recorded write holds @s first; -1 when none. */
static int write_index(const char *s)
{
	unsigned i;

	for (i = 0; i < nr_writes; i++)
		if (strstr(writes[i], s))
			return (int)i;
	return -1;
}

/* stderr into a file while a step runs, to assert its whole messages */
static int saved_stderr = -1;
static char captured_path[] = "/tmp/mr-test-damon-err-XXXXXX";

static void capture_start(void)
{
	int fd = mkstemp(captured_path);

	assert_true(fd >= 0);
	fflush(stderr);
	saved_stderr = dup(2);
	dup2(fd, 2);
	close(fd);
}

static char *capture_end(void)
{
	static char buf[4096];
	FILE *f;
	size_t n;

	fflush(stderr);
	dup2(saved_stderr, 2);
	close(saved_stderr);
	f = fopen(captured_path, "r");
	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	unlink(captured_path);
	strcpy(captured_path, "/tmp/mr-test-damon-err-XXXXXX");
	return buf;
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
		  "DAMON is in use: nr_kdamonds is 1" },
		{ "thread", "/proc/4242/comm", "kdamond.0\n", -EBUSY,
		  "DAMON is in use: thread kdamond.0 (pid 4242) runs" },
		{ "reclaim", "/sys/module/damon_reclaim/parameters/enabled", "Y\n", -EBUSY,
		  "DAMON is in use: damon_reclaim is enabled" },
		{ "lru_sort", "/sys/module/damon_lru_sort/parameters/enabled", "Y\n", -EBUSY,
		  "DAMON is in use: damon_lru_sort is enabled" },
		{ "stat", "/sys/module/damon_stat/parameters/enabled", "Y\n", -EBUSY,
		  "DAMON is in use: damon_stat is enabled" },
		/* a memreg that runs and wrote its marker, before its nr_kdamonds write */
		{ "memreg", "/run/memreg/damon.owner", "memreg 77 500\n", -EBUSY,
		  "DAMON is in use: memreg pid 77 owns it (/run/memreg/damon.owner)" },
	};
	size_t i;

	for (i = 0; i < MR_ARRAY_SIZE(cases); i++) {
		struct mr_mon_ctx ctx;
		char why[256] = "", err_want[300];
		const struct mr_mon_ops *auto_ops;
		int err;

		print_message("in use: %s\n", cases[i].name);
		reset_root();
		put(cases[i].file, cases[i].content);
		put_stat(77, "memregctl", 0, 0, 500);
		writes_allowed = false;
		assert_int_equal(mr_mon_damon_check_free(why, sizeof(why)), cases[i].expect);
		assert_string_equal(why, cases[i].why);
		snprintf(err_want, sizeof(err_want), "damon: %s; not touched", cases[i].why);
		/* the whole backend, with --apply, on a process and on physical memory */
		mr_mon_ctx_init(&ctx, &mr_mon_ops_damon);
		ctx.apply = true;
		ctx.target.pid = 1;
		err = mr_mon_run(&ctx, NULL, NULL);
		assert_int_equal(err, -EBUSY);
		assert_string_equal(mr_last_error(), err_want);
		ctx.target.kind = MR_MON_TARGET_PHYS;
		assert_int_equal(mr_mon_run(&ctx, NULL, NULL), -EBUSY);
		mr_mon_ctx_destroy(&ctx);
		/* auto never takes damon here (refs etc. fail on the fixture: no /proc/self) */
		auto_ops = mr_mon_backend_auto(&ctx, why, sizeof(why));	/* phys, --apply */
		assert_true(auto_ops != &mr_mon_ops_damon);
		assert_int_equal(nr_writes, 0);
	}
}

/* A marker left by a memreg that is gone: the "in use" message names the fix. */
static void test_stale_marker_named(void **state)
{
	char why[256];

	reset_root();
	put("/run/memreg/damon.owner", "memreg 88 500\nkdamond 0 4300 paddr 0\n");
	put("/sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds", "1\n");
	writes_allowed = false;
	assert_int_equal(mr_mon_damon_check_free(why, sizeof(why)), -EBUSY);
	assert_string_equal(why, "DAMON is in use: nr_kdamonds is 1 (left by memreg pid 88, which "
			    "is gone: `memregctl damon-reset --apply` removes it)");
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
	assert_string_equal(why, "this kernel has no DAMON sysfs interface "
			    "(/sys/kernel/mm/damon/admin)");
}

/* Free: writes start by creating kdamond 0 and, whatever fails later, the last
 * write puts nr_kdamonds back to 0. */
static void test_free_resets(void **state)
{
	struct mr_mon_ctx ctx;
	char why[256];
	double cpu_s;

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
	/* the fake kdamond stops when asked for tried regions: the first snapshot
	 * ends the run */
	assert_int_equal(mr_mon_run(&ctx, NULL, NULL), 0);
	cpu_s = ctx.kernel_cpu_s;
	mr_mon_ctx_destroy(&ctx);
	assert_true(nr_writes > 3);
	/* the marker first, then DAMON; at the end nr_kdamonds 0, then the marker goes */
	assert_string_equal(writes[0], "mkdir /run");
	assert_string_equal(writes[1], "mkdir /run/memreg");
	assert_string_equal(writes[2], "file /run/memreg/damon.owner");
	assert_string_equal(writes[3], "/sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds=1");
	assert_string_equal(writes[nr_writes - 2], "/sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds=0");
	assert_string_equal(writes[nr_writes - 1], "unlink /run/memreg/damon.owner");
	assert_false(exists("/run/memreg/damon.owner"));
	/* the kdamond's CPU time from its /proc/PID/stat: 150 + 50 ticks */
	assert_true(cpu_s == 200.0 / (double)sysconf(_SC_CLK_TCK));
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
	put_stat(4242, "prog", 0, 0, 5000);
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
	assert_string_equal(writes[nr_writes - 2], "/sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds=0");
	assert_string_equal(writes[nr_writes - 1], "unlink /run/memreg/damon.owner");
	writes_allowed = false;
}

#define KD0 "/sys/kernel/mm/damon/admin/kdamonds/0"
#define INST "/sys/kernel/tracing/instances"

/* A machine with tracefs and the damon_aggregated event, DAMON free. */
static void tracefs_root(void)
{
	reset_root();
	put(KD0 "/contexts/0/avail_operations", "vaddr\nfvaddr\npaddr\n");
	put("/sys/kernel/tracing/events/damon/damon_aggregated/enable", "0\n");
	put(INST "/.keep", "");
	put("/proc/iomem", "00100000-3fffffff : System RAM\n");
	put_stat(4242, "prog", 0, 0, 5000);
	put("/proc/4242/maps", "7f0000000000-7f0000a00000 rw-p 00000000 00:00 0 \n");
}

/*
 * Someone configures DAMON after memreg found it free and before memreg writes
 * nr_kdamonds (which would destroy their directory): memreg must see it, refuse,
 * and leave their configuration as it is.
 *
 *   check free ... mkdir instance ... check again, owner file, read 0 ... write nr_kdamonds
 *                  ^ case 1                        ^ case 2
 */
static void test_race_not_cleared(void **state)
{
	static const struct {
		const char *when, *inject_on, *err;
	} cases[] = {
		{ "while memreg makes its tracefs instance", "mkdir " INST "/memreg-",
		  "damon: DAMON is in use: nr_kdamonds is 1; not touched" },
		{ "right before memreg's nr_kdamonds write", "file /run/memreg/damon.owner",
		  "damon: DAMON is in use: nr_kdamonds became 1 after memreg checked it (someone "
		  "configured DAMON meanwhile); not touched" },
	};
	size_t i;

	for (i = 0; i < MR_ARRAY_SIZE(cases); i++) {
		struct mr_mon_ctx ctx;
		char theirs[64];

		print_message("someone configures DAMON %s\n", cases[i].when);
		tracefs_root();
		writes_allowed = true;
		inject_on = cases[i].inject_on;
		mr_mon_ctx_init(&ctx, &mr_mon_ops_damon);
		ctx.apply = true;
		ctx.target.kind = MR_MON_TARGET_PHYS;
		assert_int_equal(mr_mon_run(&ctx, NULL, NULL), -EBUSY);
		assert_string_equal(mr_last_error(), cases[i].err);
		mr_mon_ctx_destroy(&ctx);
		assert_null(inject_on);	/* it did happen */
		/* nothing of DAMON's written, their kdamond as they left it */
		assert_int_equal(write_index("/sys/kernel/mm/damon/"), -1);
		assert_string_equal(slurp("/sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds"), "1\n");
		assert_string_equal(slurp(KD0 "/state"), "on\n");
		assert_string_equal(slurp(KD0 "/pid"), "5555\n");
		assert_string_equal(slurp(KD0 "/contexts/0/operations"), "paddr\n");
		/* memreg's own marks gone */
		assert_false(exists("/run/memreg/damon.owner"));
		snprintf(theirs, sizeof(theirs), INST "/memreg-%ld-%u", (long)getpid(), MY_START);
		assert_false(exists(theirs));
	}
	writes_allowed = false;
}

static void start_process(struct mr_mon_ctx *ctx)
{
	mr_mon_ctx_init(ctx, &mr_mon_ops_damon);
	ctx->apply = true;
	ctx->target.kind = MR_MON_TARGET_PROCESS;
	ctx->target.pid = 4242;
	assert_int_equal(ctx->ops->init(ctx), 0);
}

/* The owner file names memreg (pid, start time), its tracefs instance and its
 * kdamond (index, thread, operations, target); it is written before nr_kdamonds,
 * the thread added once the kdamond runs; the instance lets in only that
 * thread's events; the end removes exactly these. */
static void test_owner_marker(void **state)
{
	struct mr_mon_damon_owner o;
	struct mr_mon_ctx ctx;
	char want[1024], inst[128], filter[256];
	long me = (long)getpid();

	tracefs_root();
	writes_allowed = true;
	start_process(&ctx);
	snprintf(inst, sizeof(inst), INST "/memreg-%ld-%u", me, MY_START);
	snprintf(want, sizeof(want),
		 "# memreg's DAMON ownership marker: the kdamonds below were set up by memreg\n"
		 "# pid %ld, which removes them when done; after it was killed,\n"
		 "# `memregctl damon-reset --apply` does. Format: memregctl-damon-reset(1).\n"
		 "memreg %ld %u\n"
		 "tracefs %s\n"
		 "kdamond 0 4300 vaddr 4242\n", me, me, MY_START, inst);
	assert_string_equal(slurp("/run/memreg/damon.owner"), want);
	assert_true(exists(inst));
	assert_true(write_index("file /run/memreg/damon.owner") <
		    write_index("kdamonds/nr_kdamonds=1"));
	snprintf(filter, sizeof(filter), "%s/events/damon/damon_aggregated/filter=common_pid == 4300",
		 inst);
	assert_true(write_index(filter) > write_index(KD0 "/state=on"));
	assert_int_equal(mr_mon_damon_owner_read(&o), 0);
	assert_int_equal(o.pid, me);
	assert_int_equal(o.starttime_ticks, MY_START);
	assert_string_equal(o.tracefs, inst);
	assert_int_equal(o.nr_kdamonds, 1);
	assert_int_equal(o.kd[0].index, 0);
	assert_int_equal(o.kd[0].pid, 4300);
	assert_string_equal(o.kd[0].ops, "vaddr");
	assert_int_equal(o.kd[0].target_pid, 4242);

	ctx.ops->cleanup(&ctx);
	mr_mon_ctx_destroy(&ctx);
	assert_true(write_index(KD0 "/state=off") >= 0);
	assert_string_equal(writes[nr_writes - 3], "/sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds=0");
	assert_string_equal(writes[nr_writes - 2], "unlink /run/memreg/damon.owner");
	snprintf(filter, sizeof(filter), "rmdir %s", inst);
	assert_string_equal(writes[nr_writes - 1], filter);
	assert_false(exists(inst));
	writes_allowed = false;
}

/*
 * At the end memreg resets only what is still its own. Its kdamond stopped (the
 * target exited) and someone then reused the directory: their kdamond, running or
 * configured, is left, and so is nr_kdamonds (writing it would destroy theirs).
 */
/* Writes to a kdamond's state meet the lock a reader of its pid file holds (damo,
 * a monitoring agent, the lab test reading the pid): retried, not taken for a
 * failure. Seen in the lab as memregd "cannot give DAMON the new mappings". */
static void test_state_busy_retried(void **state)
{
	struct mr_mon_ctx ctx;

	(void)state;
	tracefs_root();
	writes_allowed = true;
	state_busy = 3;
	start_process(&ctx);
	assert_int_equal(count_writes(0, KD0 "/state=on"), 4);
	state_busy = 2;
	assert_int_equal(mr_mon_damon_write_state(0, "commit", true), 0);
	assert_int_equal(count_writes(0, KD0 "/state=commit"), 3);
	state_busy = 2;
	assert_int_equal(mr_mon_damon_update_stats(0, true), 0);
	assert_int_equal(count_writes(0, KD0 "/state=update_schemes_stats"), 3);
	/* held for good (over 2 s): the error, not a hang */
	state_busy = 1000;
	assert_int_equal(mr_mon_damon_write_state(0, "commit", true), -EBUSY);
	state_busy = 0;
	ctx.ops->cleanup(&ctx);
	mr_mon_ctx_destroy(&ctx);
	assert_int_equal(count_writes(0, KD0 "/state=off"), 1);
	writes_allowed = false;
}

static void test_teardown_leaves_foreign(void **state)
{
	static const struct {
		const char *name;
		const char *state, *pid, *ops;
		const char *err;
	} cases[] = {
		{ "running as another thread", "on\n", "5555\n", "paddr\n",
		  "memregctl: damon: kdamond 0 runs as pid 5555, not memreg's kdamond (pid 4300): "
		  "left as it is\nmemregctl: damon: nr_kdamonds left as it is\n" },
		{ "stopped, configured by someone else", "off\n", "-1\n", "paddr\n",
		  "memregctl: damon: kdamond 0 stopped, configured by someone else: left as it "
		  "is\nmemregctl: damon: nr_kdamonds left as it is\n" },
		{ "memreg's own, stopped by its target's exit: reset", "off\n", "-1\n", "vaddr\n",
		  "" },
	};
	size_t i;

	for (i = 0; i < MR_ARRAY_SIZE(cases); i++) {
		struct mr_mon_ctx ctx;
		unsigned mark;
		char *err;

		print_message("kdamond 0 at the end: %s\n", cases[i].name);
		reset_root();
		put(KD0 "/contexts/0/avail_operations", "vaddr\nfvaddr\npaddr\n");
		put_stat(4242, "prog", 0, 0, 5000);
		put("/proc/4242/maps", "7f0000000000-7f0000a00000 rw-p 00000000 00:00 0 \n");
		writes_allowed = true;
		start_process(&ctx);
		/* memreg's kdamond ends; the directory is someone else's now, or not */
		rm_rf("/proc/4300");
		put(KD0 "/state", cases[i].state);
		put(KD0 "/pid", cases[i].pid);
		put(KD0 "/contexts/0/operations", cases[i].ops);
		if (!strcmp(cases[i].pid, "5555\n"))
			put("/proc/5555/comm", "kdamond.0\n");
		mark = nr_writes;
		capture_start();
		ctx.ops->cleanup(&ctx);
		err = capture_end();
		mr_mon_ctx_destroy(&ctx);
		assert_string_equal(err, cases[i].err);
		if (cases[i].err[0]) {
			assert_int_equal(nr_writes, mark + 1);
			assert_string_equal(writes[mark], "unlink /run/memreg/damon.owner");
			assert_string_equal(slurp(KD0 "/state"), cases[i].state);
		} else {
			assert_int_equal(nr_writes, mark + 2);
			assert_string_equal(writes[mark], "/sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds=0");
		}
	}
	writes_allowed = false;
}

static const char owner_3333[] =
	"memreg 3333 777\n"
	"tracefs " INST "/memreg-3333-777\n"
	"kdamond 0 4300 vaddr 4242\n";

/* damon-reset's report into a string */
static int run_reset(bool apply, char **out)
{
	static char *buf;
	size_t len;
	FILE *f;
	int ret;

	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	ret = mr_mon_damon_reset(apply, f);
	fclose(f);
	*out = buf;
	return ret;
}

/*
 * After a memreg killed by SIGKILL (its owner file and kdamond left behind),
 * damon-reset refuses while that memreg still runs, says what it would do without
 * --apply and changes nothing, and with --apply stops and removes exactly the
 * kdamond the file names, the instance and the file.
 */
static void test_damon_reset(void **state)
{
	char *out;

	reset_root();
	put("/run/memreg/damon.owner", owner_3333);
	put(INST "/memreg-3333-777/trace_pipe", "");
	put(INST "/memreg-1-1/trace_pipe", "");	/* init's: it runs, left */
	put_stat(1, "init", 0, 0, 1);
	put("/sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds", "1\n");
	put(KD0 "/state", "on\n");
	put(KD0 "/pid", "4300\n");
	put(KD0 "/contexts/nr_contexts", "1\n");
	put(KD0 "/contexts/0/operations", "vaddr\n");
	put("/proc/4300/comm", "kdamond.0\n");

	/* the recorded memreg still runs: refused, nothing written */
	put_stat(3333, "memregctl", 0, 0, 777);
	writes_allowed = false;
	assert_int_equal(run_reset(true, &out), -EBUSY);
	assert_string_equal(mr_last_error(), "memreg pid 3333 still runs and owns DAMON "
			    "(/run/memreg/damon.owner); it resets DAMON itself when it ends: stop "
			    "it (kill 3333) rather than resetting under it");
	assert_string_equal(out, "");

	/* gone (its pid now another process's): the plan, nothing written */
	put_stat(3333, "bash", 0, 0, 999);
	assert_int_equal(run_reset(false, &out), 0);
	assert_string_equal(out,
		"/run/memreg/damon.owner: memreg pid 3333 is gone\n"
		"kdamond 0 (thread 4300, vaddr of pid 4242): memreg's, running: would stop it\n"
		"would set nr_kdamonds to 0\n"
		"tracefs instance " INST "/memreg-1-1: memreg pid 1 still runs: left\n"
		"would remove tracefs instance " INST "/memreg-3333-777\n"
		"would remove /run/memreg/damon.owner\n"
		"nothing changed: pass --apply to do it\n");
	assert_int_equal(nr_writes, 0);

	/* --apply: exactly those */
	writes_allowed = true;
	assert_int_equal(run_reset(true, &out), 0);
	assert_string_equal(out,
		"/run/memreg/damon.owner: memreg pid 3333 is gone\n"
		"kdamond 0 (thread 4300, vaddr of pid 4242): memreg's: stopped\n"
		"nr_kdamonds set to 0\n"
		"tracefs instance " INST "/memreg-1-1: memreg pid 1 still runs: left\n"
		"removed tracefs instance " INST "/memreg-3333-777\n"
		"removed /run/memreg/damon.owner\n");
	assert_int_equal(nr_writes, 4);
	assert_string_equal(writes[0], KD0 "/state=off");
	assert_string_equal(writes[1], "/sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds=0");
	assert_string_equal(writes[2], "rmdir " INST "/memreg-3333-777");
	assert_string_equal(writes[3], "unlink /run/memreg/damon.owner");
	assert_true(exists(INST "/memreg-1-1"));

	/* again: nothing left to do */
	nr_writes = 0;
	assert_int_equal(run_reset(true, &out), 0);
	assert_string_equal(out, "no ownership marker (/run/memreg/damon.owner): no kdamond of "
			    "memreg's to reset\n"
			    "tracefs instance " INST "/memreg-1-1: memreg pid 1 still runs: left\n");
	assert_int_equal(nr_writes, 0);

	/* a kdamond that is someone else's by now is left, and nr_kdamonds with it */
	put("/run/memreg/damon.owner", owner_3333);
	put("/sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds", "1\n");
	put(KD0 "/state", "on\n");
	put(KD0 "/pid", "5555\n");
	put("/proc/5555/comm", "kdamond.0\n");
	assert_int_equal(run_reset(true, &out), 1);
	assert_string_equal(out,
		"/run/memreg/damon.owner: memreg pid 3333 is gone\n"
		"kdamond 0 (thread 4300, vaddr of pid 4242): runs as pid 5555, not memreg's "
		"kdamond (pid 4300): left as it is\n"
		"nr_kdamonds left as it is (not every kdamond there is memreg's)\n"
		"tracefs instance " INST "/memreg-1-1: memreg pid 1 still runs: left\n"
		"removed /run/memreg/damon.owner\n");
	assert_int_equal(nr_writes, 1);
	assert_string_equal(writes[0], "unlink /run/memreg/damon.owner");
	writes_allowed = false;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_in_use_writes_nothing),
		cmocka_unit_test(test_stale_marker_named),
		cmocka_unit_test(test_no_damon),
		cmocka_unit_test(test_free_resets),
		cmocka_unit_test(test_coalesce),
		cmocka_unit_test(test_process_follows_maps),
		cmocka_unit_test(test_race_not_cleared),
		cmocka_unit_test(test_owner_marker),
		cmocka_unit_test(test_state_busy_retried),
		cmocka_unit_test(test_teardown_leaves_foreign),
		cmocka_unit_test(test_damon_reset),
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
