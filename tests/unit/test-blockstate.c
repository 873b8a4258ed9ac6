/* Unit tests of the offline state file (regions/blocks.c) against a fake block tree
 * under a test root: mr_root_may_change is wrapped to stand for a live root, so the
 * only writes are the state file (inside the test root) and the test's fake block
 * writer. Two concurrent --apply runs, a bad line, an old boot id, zone restore, and
 * the offline time limit that cannot be lost (the sysfs writer with mr_sys_open and
 * mr_sys_write wrapped: no real sysfs file is ever opened for writing). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/root.h"
#include "common/sys.h"
#include "common/util.h"
#include "regions/placement.h"

#define BOOT "11111111-2222-3333-4444-555555555555"

static char root[] = "/tmp/mr-test-blockstate-XXXXXX";

/* The wrapper: under the test root, writes are allowed only when the test says so. */
static bool writes_allowed;
int __real_mr_root_may_change(const char *what, bool apply);
int __wrap_mr_root_may_change(const char *what, bool apply);
int __wrap_mr_root_may_change(const char *what, bool apply)
{
	if (writes_allowed && apply)
		return 0;
	return __real_mr_root_may_change(what, apply);
}

/* Opening a sysfs file for writing gets /dev/null; the write is the test's. */
static bool sysfs_opened;
int __real_mr_sys_open(const char *path, int flags, mode_t mode);
int __wrap_mr_sys_open(const char *path, int flags, mode_t mode);
int __wrap_mr_sys_open(const char *path, int flags, mode_t mode)
{
	if ((flags & O_ACCMODE) != O_RDONLY) {
		if (strncmp(path, "/sys/", 5) != 0)
			fail_msg("write open of %s", path);
		sysfs_opened = true;
		return __real_mr_sys_open("/dev/null", O_WRONLY, 0);
	}
	return __real_mr_sys_open(path, flags, mode);
}

/*
 * The offline write as the kernel does it: it retries until a signal is pending. The
 * wrapper first sleeps until 50 ms past the deadline (sleep_until), standing for the
 * moment between arming the timer and entering write(), in which the deadline's
 * SIGALRM arrives; then it waits (up to 3 s) for a signal, as the kernel would, forever.
 * Sleeping to a time rather than for a fixed while keeps the test from depending on how
 * long the state file's fsync takes on a loaded machine.
 */
static bool write_lost;
static uint64_t sleep_until;
ssize_t __wrap_mr_sys_write(int fd, const void *buf, size_t len);
ssize_t __wrap_mr_sys_write(int fd, const void *buf, size_t len)
{
	struct timespec t = { 0, 5 * 1000000 };

	(void)fd;
	(void)buf;
	while (mr_now_ns() < sleep_until)
		nanosleep(&t, NULL);
	if (poll(NULL, 0, 3000) < 0 && errno == EINTR) {
		errno = EINTR;
		return -1;
	}
	write_lost = true;	/* no signal came: the limit was lost */
	return (ssize_t)len;
}

static void put(const char *rel, const char *content)
{
	char p[600], *s;
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", root, rel);
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

static void get(const char *rel, char *buf, size_t len)
{
	char p[600];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	f = fopen(p, "r");
	buf[0] = '\0';
	if (!f)
		return;
	if (!fgets(buf, (int)len, f))
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

static void block(unsigned n, const char *state, const char *zones)
{
	char rel[128];

	snprintf(rel, sizeof(rel), "sys/devices/system/memory/memory%u/state", n);
	put(rel, state);
	snprintf(rel, sizeof(rel), "sys/devices/system/memory/memory%u/valid_zones", n);
	put(rel, zones);
}

static void block_state(unsigned n, char *state, char *zones)
{
	char rel[128];

	snprintf(rel, sizeof(rel), "sys/devices/system/memory/memory%u/state", n);
	get(rel, state, 32);
	snprintf(rel, sizeof(rel), "sys/devices/system/memory/memory%u/valid_zones", n);
	get(rel, zones, 32);
}

/* The fake writer: changes the fake tree like the kernel would, logs every call,
 * fails the write naming @fail_state on @fail_block, and can hold on a pipe. */
struct fake {
	char log[512];
	uint64_t fail_block;
	const char *fail_state;
	int hold_fd;		/* >= 0: read one byte from it before the first write */
};

static int fake_set_state(uint64_t b, const char *st, uint64_t deadline_ns, void *ctx)
{
	struct fake *f = ctx;
	size_t len = strlen(f->log);
	char c;

	(void)deadline_ns;
	if (f->hold_fd >= 0) {
		if (read(f->hold_fd, &c, 1) != 1)
			return -EIO;
		f->hold_fd = -1;
	}
	snprintf(f->log + len, sizeof(f->log) - len, "%s%s:%llu", len ? " " : "", st,
		 (unsigned long long)b);
	if (b == f->fail_block && f->fail_state && strcmp(st, f->fail_state) == 0)
		return mr_error(-EBUSY, "memory%llu: fake failure", (unsigned long long)b);
	if (strcmp(st, "offline") == 0)
		block((unsigned)b, "offline\n", "Normal Movable\n");
	else if (strcmp(st, "online_movable") == 0)
		block((unsigned)b, "online\n", "Movable\n");
	else if (strcmp(st, "online_kernel") == 0)
		block((unsigned)b, "online\n", "Normal\n");
	else
		fail_msg("memory%llu: write of '%s'", (unsigned long long)b, st);
	return 0;
}

static char state_text[4096];

static const char *state_file(void)
{
	FILE *f = fopen(mr_block_state_path(), "r");
	size_t n;

	state_text[0] = '\0';
	if (!f)
		return state_text;
	n = fread(state_text, 1, sizeof(state_text) - 1, f);
	state_text[n] = '\0';
	fclose(f);
	return state_text;
}

static int setup(void **state)
{
	char cmd[200];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir -p '%s'", root, root);
	if (system(cmd))
		return -1;
	unsetenv("MEMREG_STATE_DIR");
	put("proc/sys/kernel/random/boot_id", BOOT "\n");
	block(2, "online\n", "Movable\n");
	block(3, "online\n", "Movable\n");
	block(4, "online\n", "Movable\n");
	writes_allowed = true;
	return mr_root_set(root);
}

static int teardown(void **state)
{
	char cmd[200];

	(void)state;
	writes_allowed = false;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd);
}

/* Under a root, the state file is inside it: nothing of the host is touched. */
static void test_path_under_root(void **state)
{
	char want[600];

	(void)state;
	snprintf(want, sizeof(want), "%s%s/lib/memreg/offline.state", root, MR_LOCALSTATEDIR);
	assert_string_equal(mr_block_state_path(), want);
	setenv("MEMREG_STATE_DIR", "/run/x", 1);
	snprintf(want, sizeof(want), "%s/run/x/offline.state", root);
	assert_string_equal(mr_block_state_path(), want);
	unsetenv("MEMREG_STATE_DIR");
	/* Without the wrapper's consent, the fixture root refuses. */
	writes_allowed = false;
	assert_int_equal(mr_block_state_prune(true), -EROFS);
}

/* Offline records boot, zone and plan; restore brings each block back to its zone. */
static void test_zone_restore(void **state)
{
	uint64_t b[] = { 2, 3 };
	enum mr_block_zone z[] = { MR_ZONE_MOVABLE, MR_ZONE_KERNEL };
	struct mr_block_plan plan = { .action = MR_BLOCK_OFFLINE, .blocks = b, .zones = z,
				      .nr_blocks = 2, .tag = "0123456789abcdef" };
	struct fake f = { .fail_block = UINT64_MAX, .hold_fd = -1 };
	struct mr_block_ops ops = { .set_state = fake_set_state, .ctx = &f };
	struct mr_block_result res;
	struct mr_block_plan restore;
	char st[32], zn[32];

	(void)state;
	assert_int_equal(mr_block_plan_apply(&plan, 0, true, &ops, &res), 0);
	assert_string_equal(f.log, "offline:2 offline:3");
	assert_string_equal(state_file(),
		"# memreg offline state, version 2: blocks memreg took offline; "
		"`memregctl online --restore --apply` brings them back\n"
		"memory2 boot=" BOOT " zone=Movable plan=0123456789abcdef\n"
		"memory3 boot=" BOOT " zone=kernel plan=0123456789abcdef\n");

	/* Another plan's tag selects nothing; this plan's, both, newest first. */
	assert_int_equal(mr_restore_plan(&restore, "ffffffffffffffff"), 0);
	assert_int_equal(restore.nr_blocks, 0);
	mr_block_plan_destroy(&restore);
	assert_int_equal(mr_restore_plan(&restore, "0123456789abcdef"), 0);
	assert_int_equal(restore.nr_blocks, 2);

	/* A failed write stops the online: memory2 is not tried, both stay recorded. */
	f.log[0] = '\0';
	f.fail_block = 3;
	f.fail_state = "online_kernel";
	assert_int_equal(mr_block_plan_apply(&restore, 0, true, &ops, &res), -EBUSY);
	assert_string_equal(f.log, "online_kernel:3");
	assert_string_equal(mr_last_error(), "stopped at memory3 (online_kernel): "
			    "memory3: fake failure");
	assert_non_null(strstr(state_file(), "memory2 boot="));
	assert_non_null(strstr(state_file(), "memory3 boot="));

	f.log[0] = '\0';
	f.fail_block = UINT64_MAX;
	assert_int_equal(mr_block_plan_apply(&restore, 0, true, &ops, &res), 0);
	assert_string_equal(f.log, "online_kernel:3 online_movable:2");
	block_state(3, st, zn);
	assert_string_equal(zn, "Normal");
	block_state(2, st, zn);
	assert_string_equal(zn, "Movable");
	assert_string_equal(state_file(), "");		/* no file left */
	mr_block_plan_destroy(&restore);
}

/* A bad line is skipped and reported; an earlier boot's entry is reported, kept and
 * never acted on. */
static void test_bad_line_old_boot(void **state)
{
	struct mr_block_plan restore;
	char rel[300];

	(void)state;
	block(2, "offline\n", "Normal Movable\n");
	block(3, "offline\n", "Normal Movable\n");
	block(4, "offline\n", "Normal Movable\n");
	snprintf(rel, sizeof(rel), "%s/lib/memreg/offline.state", MR_LOCALSTATEDIR + 1);
	put(rel, "# comment\n"
	    "memory2 boot=" BOOT " zone=Movable plan=-\n"
	    "bogus line\n"
	    "memory3 boot=99999999-0000-0000-0000-000000000000 zone=Movable plan=-\n"
	    "memory4\n");
	assert_int_equal(mr_restore_plan(&restore, NULL), 0);
	assert_int_equal(restore.nr_blocks, 1);
	assert_int_equal(restore.blocks[0], 2);
	assert_int_equal(restore.nr_notes, 3);
	snprintf(rel, sizeof(rel), "%s:3: not a state entry, skipped: 'bogus line'",
		 mr_block_state_path());
	assert_string_equal(restore.notes[0], rel);
	snprintf(rel, sizeof(rel), "%s:4: memory3 was taken offline in another boot "
		 "(99999999-0000-0000-0000-000000000000): not acted on", mr_block_state_path());
	assert_string_equal(restore.notes[1], rel);
	/* The old format (no boot) is not guessed at either. */
	snprintf(rel, sizeof(rel), "%s:5: not a state entry, skipped: 'memory4'",
		 mr_block_state_path());
	assert_string_equal(restore.notes[2], rel);
	mr_block_plan_destroy(&restore);

	/* Prune keeps the other boot's entry and drops the bad lines on rewrite. */
	block(2, "online\n", "Movable\n");
	assert_int_equal(mr_block_state_prune(true), 0);
	assert_string_equal(state_file(),
		"# memreg offline state, version 2: blocks memreg took offline; "
		"`memregctl online --restore --apply` brings them back\n"
		"memory3 boot=99999999-0000-0000-0000-000000000000 zone=Movable plan=-\n");
}

/* Two --apply runs at once: the second fails with a clear line and changes nothing. */
static void test_two_writers(void **state)
{
	uint64_t b1[] = { 2 }, b2[] = { 3 };
	struct mr_block_plan p1 = { .action = MR_BLOCK_OFFLINE, .blocks = b1, .nr_blocks = 1 };
	struct mr_block_plan p2 = { .action = MR_BLOCK_OFFLINE, .blocks = b2, .nr_blocks = 1 };
	struct fake f2 = { .fail_block = UINT64_MAX, .hold_fd = -1 };
	struct mr_block_ops ops2 = { .set_state = fake_set_state, .ctx = &f2 };
	struct mr_block_result res;
	int go[2], ready[2], status;
	char want[800], c;
	pid_t child;

	(void)state;
	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(ready), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		/* The first run: holds inside its first block's write until told. */
		struct fake f1 = { .fail_block = UINT64_MAX, .hold_fd = go[0] };
		struct mr_block_ops ops1 = { .set_state = fake_set_state, .ctx = &f1 };

		close(go[1]);
		close(ready[0]);
		assert_int_equal(mr_block_state_lock(), 0);
		if (write(ready[1], "r", 1) != 1)
			_exit(3);
		_exit(mr_block_plan_apply(&p1, 0, true, &ops1, &res) ? 1 : 0);
	}
	close(ready[1]);		/* a child that dies early gives EOF, not a hang */
	close(go[0]);
	assert_int_equal(read(ready[0], &c, 1), 1);
	assert_int_equal(mr_block_plan_apply(&p2, 0, true, &ops2, &res), -EBUSY);
	snprintf(want, sizeof(want), "another memreg process (pid %d) is changing memory "
		 "blocks (%s.lock is locked): nothing done; try again when it has finished",
		 (int)child, mr_block_state_path());
	assert_string_equal(mr_last_error(), want);
	assert_string_equal(f2.log, "");
	assert_int_equal(write(go[1], "g", 1), 1);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* Once the first has finished, the second goes through. */
	assert_int_equal(mr_block_plan_apply(&p2, 0, true, &ops2, &res), 0);
	assert_string_equal(f2.log, "offline:3");
	assert_non_null(strstr(state_file(), "memory2 boot=" BOOT " zone=Movable plan=-\n"
			       "memory3 boot=" BOOT " zone=Movable plan=-\n"));
	close(go[1]);
	close(ready[0]);
}

/* The deadline's SIGALRM arriving before the write starts does not lose the limit:
 * the timer repeats until the write returns. On the live root with the sysfs writer;
 * mr_sys_open and mr_sys_write are the test's. */
static void test_time_limit_not_lost(void **state)
{
	char dir[300];
	uint64_t b[] = { 999999 };
	struct mr_block_plan plan = { .action = MR_BLOCK_OFFLINE, .blocks = b, .nr_blocks = 1 };
	struct mr_block_result res;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/state", root);
	setenv("MEMREG_STATE_DIR", dir, 1);
	assert_int_equal(mr_root_set("/"), 0);
	write_lost = false;
	/* A limit of 2 s: long enough that the state file's fsync on a loaded machine
	 * ends before it (with 50 ms, a CI run timed out before the write). */
	sleep_until = mr_now_ns() + 2050 * 1000000ull;
	assert_int_equal(mr_block_plan_apply(&plan, 2000 * 1000000ull, true, NULL, &res),
			 -ETIMEDOUT);
	assert_true(sysfs_opened);
	assert_false(write_lost);
	assert_non_null(strstr(mr_last_error(), "memory999999: offline did not finish within "
			       "the time limit"));
	unsetenv("MEMREG_STATE_DIR");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_path_under_root, setup, teardown),
		cmocka_unit_test_setup_teardown(test_zone_restore, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_line_old_boot, setup, teardown),
		cmocka_unit_test_setup_teardown(test_two_writers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_time_limit_not_lost, setup, teardown),
	};

	if (!mkdtemp(root)) {
		perror(root);
		return 99;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
