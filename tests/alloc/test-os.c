/* The OS layer's purge batch (allocator/os.c) on real memory: purges of free pages
 * queue and are done by mr_os_purge_flush (or when the batch is full, or the advice
 * changes), in one process_madvise(2) on the process itself where the kernel allows
 * it and the batch is worth it, else a madvise per range (an older kernel; fewer
 * than MR_PURGE_BATCH_MIN ranges; a seccomp filter that would kill the process on
 * process_madvise, tried in a child); a range the batched call cannot advise (a
 * hole) does not stop the others. Each range is written, queued, seen still holding
 * its data, flushed, then seen not resident (mincore) and reading zero; its
 * neighbours keep their data. Then the clock (the vDSO's, within libc's readings)
 * and the lock hook (the fork handlers' turn: not with one thread, once with two,
 * again in a child forked while it ran). */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "allocator/internal.h"
#include "allocator/os.h"
#include "tests/alloc/self-status.h"

#ifndef SYS_process_madvise
#define SYS_process_madvise 440
#endif
#define PG 4096u
#define RANGE_PAGES 2u		/* each range: 2 pages, then a page not purged */
#define STRIDE ((RANGE_PAGES + 1) * PG)

static char *area;
static size_t area_len;
/* Why os.c will not batch here (empty: it will), from a probe independent of it: a
 * seccomp filter on (os.c does not try then), or one page advised with
 * MADV_DONTNEED by process_madvise not purged. */
static char batch_why[128];

static void probe_batch(void)
{
	int mode = (int)self_status("Seccomp");
	struct iovec iov;
	char *p;
	long r;

	if (mode != 0) {
		snprintf(batch_why, sizeof(batch_why), "seccomp mode %d (-1: not read): not tried",
			 mode);
		return;
	}
	p = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		snprintf(batch_why, sizeof(batch_why), "mmap: %s", strerror(errno));
		return;
	}
	iov.iov_base = p;
	iov.iov_len = PG;
	p[0] = 1;
	r = syscall(SYS_process_madvise, -10001, &iov, 1ul, MADV_DONTNEED, 0u);
	if (r != (long)PG)
		snprintf(batch_why, sizeof(batch_why),
			 "process_madvise(PIDFD_SELF_THREAD_GROUP) returned %ld (%s): needs Linux 6.15",
			 r, r < 0 ? strerror(errno) : "short");
	else if (p[0] != 0)
		snprintf(batch_why, sizeof(batch_why), "process_madvise returned but the page kept its data");
	munmap(p, PG);
}

static char *range(unsigned i)
{
	return area + (size_t)i * STRIDE;
}

/* What range @i's pages hold until purged. */
static char mark(unsigned i)
{
	return (char)(i % 250 + 1);
}

/* @n ranges, each page written with its range's mark, the gap page too. */
static void map_ranges(unsigned n)
{
	unsigned i, j;

	area_len = (size_t)n * STRIDE;
	area = mmap(NULL, area_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(area != MAP_FAILED);
	for (i = 0; i < n; i++)
		for (j = 0; j <= RANGE_PAGES; j++)
			memset(range(i) + (size_t)j * PG, mark(i), PG);
}

static void unmap_ranges(void)
{
	munmap(area, area_len);
}

static void queue(unsigned i, bool lazy)
{
	mr_os_purge_pages(range(i), (size_t)RANGE_PAGES * PG, lazy);
}

static bool has_data(unsigned i)
{
	unsigned j;

	for (j = 0; j <= RANGE_PAGES; j++)
		if (range(i)[(size_t)j * PG] != mark(i) || range(i)[(size_t)j * PG + PG - 1] != mark(i))
			return false;
	return true;
}

/* Purged: not resident (looked at before reading, which maps the zero page: once
 * only, then), reading zero; the gap page after it untouched. */
static bool purged(unsigned i)
{
	unsigned char vec[RANGE_PAGES];
	unsigned j;

	if (mincore(range(i), (size_t)RANGE_PAGES * PG, vec) != 0)
		return false;
	for (j = 0; j < RANGE_PAGES; j++)
		if (vec[j] & 1)
			return false;
	for (j = 0; j < RANGE_PAGES * PG; j++)
		if (range(i)[j] != 0)
			return false;
	return range(i)[(size_t)RANGE_PAGES * PG] == mark(i);
}

/* Ranges 0, 2, .., 20 queued (20 as two adjacent halves, merged into one): 11, a
 * batch. All hold their data until the flush; after it, they are purged and the
 * odd ones are not. One system call if batched, else one a range. */
static void test_flush(void **state)
{
	uint64_t calls = mr_os_purge_calls, batched = mr_os_purge_batched;
	unsigned i;

	(void)state;
	map_ranges(22);
	for (i = 0; i < 20; i += 2)
		queue(i, false);
	mr_os_purge_pages(range(20), PG, false);
	mr_os_purge_pages(range(20) + PG, PG, false);
	for (i = 0; i < 22; i++)
		assert_true(has_data(i));
	assert_int_equal(mr_os_purge_calls, calls);
	errno = 4242;
	mr_os_purge_flush();
	assert_int_equal(errno, 4242);
	for (i = 0; i < 22; i++)
		assert_true(i % 2 ? has_data(i) : purged(i));
	if (!batch_why[0]) {
		assert_int_equal(mr_os_purge_calls - calls, 1);
		assert_int_equal(mr_os_purge_batched - batched, 1);
	} else {
		print_message("purged range by range: %s\n", batch_why);
		assert_int_equal(mr_os_purge_calls - calls, 11);
		assert_int_equal(mr_os_purge_batched - batched, 0);
	}
	mr_os_purge_flush();	/* nothing queued: nothing done */
	assert_int_equal(mr_os_purge_calls - calls, batch_why[0] ? 11 : 1);
	unmap_ranges();
}

/* Fewer than MR_PURGE_BATCH_MIN ranges: a madvise each (a batch would cost more in
 * its check than it saves). */
static void test_small_batch(void **state)
{
	uint64_t calls = mr_os_purge_calls, batched = mr_os_purge_batched;
	unsigned i;

	(void)state;
	map_ranges(2 * MR_PURGE_BATCH_MIN);
	for (i = 0; i < MR_PURGE_BATCH_MIN - 1; i++)
		queue(2 * i, false);
	mr_os_purge_flush();
	for (i = 0; i < 2 * MR_PURGE_BATCH_MIN; i++)
		assert_true(i % 2 || i / 2 >= MR_PURGE_BATCH_MIN - 1 ? has_data(i) : purged(i));
	assert_int_equal(mr_os_purge_calls - calls, MR_PURGE_BATCH_MIN - 1);
	assert_int_equal(mr_os_purge_batched, batched);
	unmap_ranges();
}

/* No more than MR_PURGE_BATCH ranges wait: the next one queued does the batch. */
static void test_full_batch(void **state)
{
	unsigned i, n = MR_PURGE_BATCH + 6;

	(void)state;
	map_ranges(n);
	for (i = 0; i < n; i++)
		queue(i, false);
	for (i = 0; i < n; i++)
		assert_true(i < MR_PURGE_BATCH ? purged(i) : has_data(i));
	mr_os_purge_flush();
	for (i = MR_PURGE_BATCH; i < n; i++)	/* (the others read once: zero pages in) */
		assert_true(purged(i));
	unmap_ranges();
}

/* A batch holds one advice: a MADV_DONTNEED range queued after MADV_FREE ones does
 * those first (MADV_FREE'd pages keep their data until memory pressure: only the
 * calls are seen; two, a madvise each). */
static void test_advice_change(void **state)
{
	uint64_t calls = mr_os_purge_calls;

	(void)state;
	map_ranges(4);
	queue(0, true);
	queue(2, true);
	assert_int_equal(mr_os_purge_calls, calls);
	queue(1, false);
	assert_int_equal(mr_os_purge_calls - calls, 2);
	assert_true(has_data(1));
	mr_os_purge_flush();
	assert_true(purged(1));
	assert_true(has_data(3));
	unmap_ranges();
}

/* A range that is a hole (unmapped) in a batch: the ranges around it are purged
 * all the same, and batching goes on (a hole says nothing of the call). Batches:
 * 0-9 with the hole at 1 (the call stops there), the hole then 10-17 (the call
 * does nothing), then 18-25. */
static void test_hole(void **state)
{
	uint64_t batched;
	unsigned i;

	(void)state;
	map_ranges(28);
	munmap(range(1), (size_t)RANGE_PAGES * PG);
	for (i = 0; i < 10; i++)
		queue(i, false);
	mr_os_purge_flush();
	for (i = 0; i < 10; i++)
		assert_true(i == 1 || purged(i));
	queue(1, false);
	for (i = 10; i < 18; i++)
		queue(i, false);
	mr_os_purge_flush();
	for (i = 10; i < 18; i++)
		assert_true(purged(i));
	batched = mr_os_purge_batched;
	for (i = 18; i < 26; i++)
		queue(i, false);
	mr_os_purge_flush();
	for (i = 18; i < 28; i++)
		assert_true(i < 26 ? purged(i) : has_data(i));
	assert_int_equal(mr_os_purge_batched - batched, batch_why[0] ? 0 : 1);
	for (i = 0; i < 28; i++)
		if (i != 1)
			munmap(range(i), STRIDE);
	munmap(range(1) + (size_t)RANGE_PAGES * PG, PG);
}

/* In a child under a seccomp filter that kills the process on process_madvise, as
 * OpenSSH's sandbox kills on any call it does not list: a full batch is purged one
 * range at a time, errno kept, and the child lives. It reports by its exit code
 * (cmocka's asserts belong to the parent). */
static int child_under_filter(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_madvise, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };
	uint64_t calls, batched = mr_os_purge_batched;
	unsigned i, round;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
		return 77;
	if (prctl(PR_GET_SECCOMP) != 2)
		return 10;
	for (round = 0; round < 2; round++) {
		calls = mr_os_purge_calls;
		for (i = 0; i < MR_PURGE_BATCH_MIN; i++)
			queue(round * 20 + 2 * i, false);
		errno = 4242;
		mr_os_purge_flush();
		if (errno != 4242)
			return 11;
		for (i = 0; i < 2 * MR_PURGE_BATCH_MIN; i++)
			if (i % 2 ? !has_data(round * 20 + i) : !purged(round * 20 + i))
				return 12;
		if (mr_os_purge_calls - calls != MR_PURGE_BATCH_MIN ||
		    mr_os_purge_batched != batched)
			return 13;
	}
	return 0;
}

static void test_seccomp_fallback(void **state)
{
	int status;
	pid_t pid;

	(void)state;
	map_ranges(40);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(child_under_filter());
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (WIFSIGNALED(status))
		fail_msg("child under the seccomp filter killed by signal %d (SIGSYS: "
			 "process_madvise called under a filter)", WTERMSIG(status));
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) == 77) {
		print_message("skipped: no seccomp filter could be installed (prctl failed)\n");
		unmap_ranges();
		skip();
	}
	if (WEXITSTATUS(status))
		fail_msg("child under the seccomp filter: exit %d (10: filter not applied, "
			 "11: errno changed, 12: wrong pages purged, 13: wrong calls)",
			 WEXITSTATUS(status));
	unmap_ranges();
}

/* ---- the clock: the vDSO's, agreeing with libc's ---- */

static uint64_t libc_coarse_ns(void)
{
	struct timespec ts;

	assert_int_equal(clock_gettime(CLOCK_MONOTONIC_COARSE, &ts), 0);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void test_clock(void **state)
{
	uint64_t before, now, after;

	(void)state;
	mr_os_clock_init();
#if defined(__x86_64__) || defined(__aarch64__)
	/* Every kernel of these has a vDSO with DT_HASH: libc's wrapper means the lookup broke. */
	if (getauxval(AT_SYSINFO_EHDR))
		assert_true(mr_os_clock_vdso);
#endif
	before = libc_coarse_ns();
	now = mr_os_now_ns();
	after = libc_coarse_ns();
	if (now < before || now > after)
		fail_msg("mr_os_now_ns %llu outside libc's readings around it [%llu, %llu]",
			 (unsigned long long)now, (unsigned long long)before, (unsigned long long)after);
}

/* ---- locks: the hook before the first lock with a second thread, once ---- */

static _Atomic int hook_runs;
static pthread_mutex_t lock_a = PTHREAD_MUTEX_INITIALIZER, lock_b = PTHREAD_MUTEX_INITIALIZER;
static int hold_pipe[2], go_pipe[2];	/* the hook (in the parent): "running", then waits */
static pid_t parent_pid;

/* Counts its runs, takes a lock itself (as pthread_atfork's allocation would), and in
 * the parent while hold_pipe is open says it runs and waits to be let go. */
static void count_hook(void)
{
	char c = 'r';

	atomic_fetch_add(&hook_runs, 1);
	mr_os_lock(&lock_b);
	pthread_mutex_unlock(&lock_b);
	if (getpid() == parent_pid && hold_pipe[1] > 0) {
		if (write(hold_pipe[1], &c, 1) != 1 || read(go_pipe[0], &c, 1) != 1)
			abort();
	}
}

static void *lock_once(void *arg)
{
	(void)arg;
	mr_os_lock(&lock_a);
	pthread_mutex_unlock(&lock_a);
	return NULL;
}

static void test_lock_hook(void **state)
{
	pthread_t t;
	int status;
	pid_t pid;
	char c;

	(void)state;
	parent_pid = getpid();
	mr_os_set_lock_hook(count_hook);
#ifdef HAVE_SYS_SINGLE_THREADED_H
	/* One thread so far: locks do not run it. */
	assert_true(mr_os_single_threaded());
	lock_once(NULL);
	assert_true(mr_os_trylock(&lock_a));
	pthread_mutex_unlock(&lock_a);
	assert_int_equal(atomic_load(&hook_runs), 0);
#endif
	/* A second thread's first lock runs it, and it holds that thread while main forks:
	 * the child (forked before the hook's end) runs it again at its first lock, and
	 * does not wait for the parent's thread, which it does not have. */
	assert_int_equal(pipe(hold_pipe), 0);
	assert_int_equal(pipe(go_pipe), 0);
	assert_int_equal(pthread_create(&t, NULL, lock_once, NULL), 0);
	assert_int_equal(read(hold_pipe[0], &c, 1), 1);
	assert_int_equal(atomic_load(&hook_runs), 1);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		alarm(10);
		lock_once(NULL);
		_exit(atomic_load(&hook_runs));
	}
	assert_int_equal(write(go_pipe[1], "g", 1), 1);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status))
		fail_msg("child's first lock did not return (status %#x): it waited for a hook "
			 "its parent's thread was running", status);
	assert_int_equal(WEXITSTATUS(status), 2);
	/* Once in the parent, whatever locks follow, and mr_os_run_lock_hook then. */
	lock_once(NULL);
	assert_true(mr_os_trylock(&lock_a));
	pthread_mutex_unlock(&lock_a);
	mr_os_run_lock_hook();
	assert_int_equal(atomic_load(&hook_runs), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flush),
		cmocka_unit_test(test_small_batch),
		cmocka_unit_test(test_full_batch),
		cmocka_unit_test(test_advice_change),
		cmocka_unit_test(test_hole),
		cmocka_unit_test(test_seccomp_fallback),
		cmocka_unit_test(test_clock),
		cmocka_unit_test(test_lock_hook),	/* last: it starts a thread */
	};

	probe_batch();
	if (batch_why[0])
		print_message("process_madvise batches are not used here: %s\n", batch_why);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
