/* Unit tests of the controller's actions: where a dry run finds pages (its own
 * memory, asked with move_pages), what migrate and madvise actions would apply,
 * move failures by reason, refusals under a fixture root and without a process,
 * and the backend rule. Nothing here moves or advises a page. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/root.h"
#include "common/sys.h"
#include "common/util.h"
#include "controller/action.h"

#define BUF_BYTES (4u << 20)

/* A one-node machine: one region on node 0 (what this host is). */
static struct mr_region one_region = { .id = 0, .node = 0 };
static struct mr_region_map one_node = { .regions = &one_region, .nr_regions = 1 };
static struct mr_region two_regions[2] = { { .id = 0, .node = 0 }, { .id = 1, .node = 1 } };
static struct mr_region_map two_nodes = { .regions = two_regions, .nr_regions = 2 };

static struct mr_scheme scheme(enum mr_scheme_action a, int node)
{
	struct mr_scheme s = { .action = a, .target_node = node, .target_region = -1,
			       .line = 1 };

	return s;
}

/* 4 MiB of our own memory, every page touched: all on node 0 here. */
static void test_dry_run_sources(void **state)
{
	struct mr_scheme s[2] = { scheme(MR_SCHEME_COLD, -1), scheme(MR_SCHEME_MIGRATE_COLD, 0) };
	struct mr_scheme_set set = { s, 2 };
	struct mr_ctl_result res = { 0 };
	struct mr_act_ctx a;
	char *p = mmap(NULL, BUF_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	(void)state;
	assert_true(p != MAP_FAILED);
	memset(p, 1, BUF_BYTES);
	assert_int_equal(mr_act_ctx_init(&a, &one_node, &set, getpid(), false, false), 0);
	/* cold: would advise every resident byte, all found on node 0 */
	assert_int_equal(mr_act_apply(&a, &s[0], (uintptr_t)p, (uintptr_t)p + BUF_BYTES, &res), 0);
	assert_int_equal(res.applied_bytes, BUF_BYTES);
	assert_int_equal(a.acct[0].regions, 1);
	assert_int_equal(a.acct[0].bytes, BUF_BYTES);
	assert_int_equal(a.acct[0].src_bytes[0], BUF_BYTES);
	assert_int_equal(a.acct[0].src_bytes[MR_ACT_SRC_UNKNOWN], 0);
	/* migrate to node 0: nothing would move, the pages are there already */
	memset(&res, 0, sizeof(res));
	assert_int_equal(mr_act_apply(&a, &s[1], (uintptr_t)p, (uintptr_t)p + BUF_BYTES, &res), 0);
	assert_int_equal(res.applied_bytes, 0);
	assert_int_equal(a.acct[1].bytes, 0);
	assert_int_equal(a.acct[1].src_bytes[0], 0);
	/* half the buffer given back: only the resident half counts */
	madvise(p, BUF_BYTES / 2, MADV_DONTNEED);
	mr_act_acct_reset(&a);
	memset(&res, 0, sizeof(res));
	assert_int_equal(mr_act_apply(&a, &s[0], (uintptr_t)p, (uintptr_t)p + BUF_BYTES, &res), 0);
	assert_int_equal(res.applied_bytes, BUF_BYTES / 2);
	assert_int_equal(a.acct[0].src_bytes[0], BUF_BYTES / 2);
	mr_act_ctx_destroy(&a);
	munmap(p, BUF_BYTES);
}

/* A replayed virtual record: no process, every byte from an unknown node. */
static void test_replay_unknown(void **state)
{
	struct mr_scheme s = scheme(MR_SCHEME_MIGRATE_HOT, 1);
	struct mr_scheme_set set = { &s, 1 };
	struct mr_ctl_result res = { 0 };
	struct mr_act_ctx a;

	(void)state;
	assert_int_equal(mr_act_ctx_init(&a, &two_nodes, &set, 0, false, false), 0);
	assert_int_equal(mr_act_apply(&a, &s, 0x1000000, 0x1400000, &res), 0);
	assert_int_equal(res.applied_bytes, 0x400000);
	assert_int_equal(a.acct[0].src_bytes[MR_ACT_SRC_UNKNOWN], 0x400000);
	mr_act_ctx_destroy(&a);
	/* acting on a replay is refused: there is no process */
	assert_int_equal(mr_act_ctx_init(&a, &two_nodes, &set, 0, false, true), -EINVAL);
	assert_string_equal(mr_last_error(), "the user engine acts on processes only: a "
			    "replayed record or physical memory can only be a dry run");
}

static void test_fixture_root_refuses(void **state)
{
	struct mr_scheme s = scheme(MR_SCHEME_PAGEOUT, -1);
	struct mr_scheme_set set = { &s, 1 };
	struct mr_act_ctx a;
	char dir[] = "/tmp/mr-test-action-XXXXXX";

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(mr_root_set(dir), 0);
	assert_int_equal(mr_act_ctx_init(&a, &one_node, &set, getpid(), false, true), -EROFS);
	assert_int_equal(mr_root_set("/"), 0);
	rmdir(dir);
}

static void test_move_failures(void **state)
{
	struct mr_move_stats st = { .page_bytes = 4096, .failed_busy = 1, .failed_access = 2,
				    .failed_nomem = 3, .failed_other = 4, .failed_noent = 5,
				    .failed_fault = 6 };
	struct mr_ctl_result res = { 0 };

	(void)state;
	mr_act_move_failures(&st, &res);
	assert_int_equal(res.failed_bytes[MR_CTL_FAIL_BUSY], 4096);
	assert_int_equal(res.failed_bytes[MR_CTL_FAIL_ACCESS], 2 * 4096);
	assert_int_equal(res.failed_bytes[MR_CTL_FAIL_NOMEM], 3 * 4096);
	assert_int_equal(res.failed_bytes[MR_CTL_FAIL_OTHER], 15 * 4096);
	assert_int_equal(mr_act_fail_of_errno(-EPERM), MR_CTL_FAIL_ACCESS);
	assert_int_equal(mr_act_fail_of_errno(EBUSY), MR_CTL_FAIL_BUSY);
	assert_int_equal(mr_act_fail_of_errno(ENOMEM), MR_CTL_FAIL_NOMEM);
	assert_int_equal(mr_act_fail_of_errno(EINVAL), MR_CTL_FAIL_OTHER);
}

/* process_madvise, replaced (-Wl,--wrap): each call takes its result and errno from
 * the queue below; pidfd_open hands out a descriptor number nobody uses. */
static long madvise_ret[4];
static int madvise_errno[4];
static unsigned madvise_calls, pidfd_calls;
static int pidfd_errno;

int __wrap_mr_sys_pidfd_open(pid_t pid, unsigned flags);
int __wrap_mr_sys_pidfd_open(pid_t pid, unsigned flags)
{
	(void)pid;
	(void)flags;
	pidfd_calls++;
	if (pidfd_errno) {
		errno = pidfd_errno;
		return -1;
	}
	return 1000;
}

long __wrap_mr_sys_process_madvise(int pidfd, const struct iovec *iov, unsigned long nr_iov,
				   int advice, unsigned flags);
long __wrap_mr_sys_process_madvise(int pidfd, const struct iovec *iov, unsigned long nr_iov,
				   int advice, unsigned flags)
{
	unsigned i = madvise_calls++;

	(void)iov;
	(void)flags;
	assert_int_equal(pidfd, 1000);
	assert_int_equal(nr_iov, 1);
	assert_int_equal(advice, MADV_PAGEOUT);
	assert_true(i < 4);
	errno = madvise_errno[i];
	return madvise_ret[i];
}

/* move_pages, replaced: the real one unless a test asks for EINVAL (what the kernel
 * answers for a process whose memory is already released as it exits). */
static bool move_pages_einval;
long __real_mr_sys_move_pages(int pid, unsigned long count, void **pages, const int *nodes,
			      int *status, int flags);
long __wrap_mr_sys_move_pages(int pid, unsigned long count, void **pages, const int *nodes,
			      int *status, int flags);
long __wrap_mr_sys_move_pages(int pid, unsigned long count, void **pages, const int *nodes,
			      int *status, int flags)
{
	if (move_pages_einval) {
		errno = EINVAL;
		return -1;
	}
	return __real_mr_sys_move_pages(pid, count, pages, nodes, status, flags);
}

static void put_file(const char *dir, const char *rel, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* The target exits while it is acted on: move_pages says EINVAL once its memory is
 * gone and before it is a zombie. That is the end of the run (-ESRCH) for an exiting
 * process, and an error for a live one. */
static void test_exiting_target(void **state)
{
	struct mr_scheme s = scheme(MR_SCHEME_MIGRATE_COLD, 1);
	struct mr_scheme_set set = { &s, 1 };
	struct mr_ctl_result res = { 0 };
	struct mr_act_ctx a;
	char dir[] = "/tmp/mr-test-action-XXXXXX", path[512];

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/proc", dir);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/proc/4242", dir);
	assert_int_equal(mkdir(path, 0755), 0);
	assert_int_equal(mr_root_set(dir), 0);
	assert_int_equal(mr_act_ctx_init(&a, &two_nodes, &set, 4242, false, false), 0);
	move_pages_einval = true;
	/* running, not exiting (flags 0x400100): EINVAL is an error */
	put_file(dir, "proc/4242/stat", "4242 (w) R 1 4242 4242 0 -1 4194560 0 0 0 0 0 0 0 0 "
		 "20 0 1 0 6 0 0\n");
	assert_int_equal(mr_act_apply(&a, &s, 0x100000, 0x101000, &res), -EINVAL);
	/* PF_EXITING (0x400104): the run is over */
	put_file(dir, "proc/4242/stat", "4242 (w) R 1 4242 4242 0 -1 4194564 0 0 0 0 0 0 0 0 "
		 "20 0 1 0 6 0 0\n");
	assert_int_equal(mr_act_apply(&a, &s, 0x100000, 0x101000, &res), -ESRCH);
	move_pages_einval = false;
	mr_act_ctx_destroy(&a);
	assert_int_equal(mr_root_set("/"), 0);
	snprintf(path, sizeof(path), "%s/proc/4242/stat", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/proc/4242", dir);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/proc", dir);
	rmdir(path);
	rmdir(dir);
}

/* An applied pageout whose process_madvise fails: the bytes are counted by reason
 * (refused, a short count, the target gone), never as applied. */
static void test_madvise_failures(void **state)
{
	struct mr_scheme s = scheme(MR_SCHEME_PAGEOUT, -1);
	struct mr_scheme_set set = { &s, 1 };
	struct mr_ctl_result res = { 0 };
	struct mr_act_ctx a;
	char *p = mmap(NULL, BUF_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uintptr_t b = (uintptr_t)p;

	(void)state;
	assert_true(p != MAP_FAILED);
	memset(p, 1, BUF_BYTES);
	madvise_ret[0] = -1, madvise_errno[0] = EPERM;
	madvise_ret[1] = 4096, madvise_errno[1] = 0;
	madvise_ret[2] = -1, madvise_errno[2] = ESRCH;
	madvise_calls = pidfd_calls = 0;
	pidfd_errno = 0;
	assert_int_equal(mr_act_ctx_init(&a, &one_node, &set, getpid(), false, true), 0);
	/* refused: every byte of the range failed for access */
	assert_int_equal(mr_act_apply(&a, &s, b, b + BUF_BYTES, &res), 0);
	assert_int_equal(res.applied_bytes, 0);
	assert_int_equal(res.failed_bytes[MR_CTL_FAIL_ACCESS], BUF_BYTES);
	assert_int_equal(a.acct[0].bytes, 0);
	/* one page of the range done: the rest failed for another reason */
	memset(&res, 0, sizeof(res));
	assert_int_equal(mr_act_apply(&a, &s, b, b + BUF_BYTES, &res), 0);
	assert_int_equal(res.applied_bytes, 4096);
	assert_int_equal(res.failed_bytes[MR_CTL_FAIL_OTHER], BUF_BYTES - 4096);
	assert_int_equal(a.acct[0].bytes, 4096);
	/* the target is gone: the run is over */
	memset(&res, 0, sizeof(res));
	assert_int_equal(mr_act_apply(&a, &s, b, b + BUF_BYTES, &res), -ESRCH);
	assert_int_equal(madvise_calls, 3);
	assert_int_equal(pidfd_calls, 1);	/* opened once, kept */
	a.pidfd = -1;				/* not ours to close */
	mr_act_ctx_destroy(&a);
	/* no pidfd for the target: its bytes fail, ESRCH ends the run */
	pidfd_errno = EPERM;
	assert_int_equal(mr_act_ctx_init(&a, &one_node, &set, getpid(), false, true), 0);
	memset(&res, 0, sizeof(res));
	assert_int_equal(mr_act_apply(&a, &s, b, b + BUF_BYTES, &res), 0);
	assert_int_equal(res.failed_bytes[MR_CTL_FAIL_ACCESS], BUF_BYTES);
	pidfd_errno = ESRCH;
	memset(&res, 0, sizeof(res));
	assert_int_equal(mr_act_apply(&a, &s, b, b + BUF_BYTES, &res), -ESRCH);
	assert_int_equal(madvise_calls, 3);
	mr_act_ctx_destroy(&a);
	munmap(p, BUF_BYTES);
}

static void test_backend_rule(void **state)
{
	struct mr_scheme s[2] = { scheme(MR_SCHEME_MIGRATE_COLD, -1), scheme(MR_SCHEME_STAT, -1) };
	struct mr_scheme_set set = { s, 2 };
	char note[256];

	(void)state;
	assert_int_equal(mr_act_backend_sight("damon", NULL), MR_ACT_SEES_READS);
	assert_int_equal(mr_act_backend_sight("perf", NULL), MR_ACT_SEES_READS);
	assert_int_equal(mr_act_backend_sight("refs", NULL), MR_ACT_SEES_MAPPINGS);
	assert_int_equal(mr_act_backend_sight("softdirty", NULL), MR_ACT_SEES_WRITES);
	assert_int_equal(mr_act_backend_sight("uffd", NULL), MR_ACT_SEES_WRITES);
	assert_int_equal(mr_act_backend_sight("replay", "damon"), MR_ACT_SEES_READS);
	assert_int_equal(mr_act_backend_sight("replay", "softdirty"), MR_ACT_SEES_WRITES);
	/* region:1 resolves to node 1 on the two-node map */
	s[0].target_region = 1;
	assert_int_equal(mr_act_check_schemes(&set, &two_nodes, MR_ACT_SEES_MAPPINGS, false,
					      note, sizeof(note)), 0);
	assert_int_equal(s[0].target_node, 1);
	assert_string_equal(note, "the refs backend sees one access count per mapping: "
			    "migrate_cold decides for whole mappings only");
	assert_int_equal(mr_act_check_schemes(&set, &two_nodes, MR_ACT_SEES_WRITES, false,
					      note, sizeof(note)), -EINVAL);
	s[0].target_region = 5;
	assert_int_equal(mr_act_check_schemes(&set, &two_nodes, MR_ACT_SEES_READS, false,
					      note, sizeof(note)), -EINVAL);
	assert_string_equal(mr_last_error(), "scheme of line 1: no region 5 (the map has 2)");
	s[0].target_region = 0;
	assert_int_equal(mr_act_check_schemes(&set, &one_node, MR_ACT_SEES_READS, false,
					      note, sizeof(note)), -EINVAL);
	assert_string_equal(mr_last_error(), "scheme of line 1: migrate_cold moves pages between "
			    "NUMA nodes, and this machine has 1 node with memory: nothing to "
			    "move to");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dry_run_sources),
		cmocka_unit_test(test_replay_unknown),
		cmocka_unit_test(test_fixture_root_refuses),
		cmocka_unit_test(test_move_failures),
		cmocka_unit_test(test_madvise_failures),
		cmocka_unit_test(test_exiting_target),
		cmocka_unit_test(test_backend_rule),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
