/* fork while another thread sets the allocator up. The allocator is compiled in
 * under mrz_* names (allocator/local.mk), so the program's threads exist before its
 * first allocation, as in the sanitizer builds and in programs whose threads come
 * from elsewhere than pthread_create's allocations. mmap is wrapped
 * (-Wl,--wrap=mmap): when the arena's reservation runs on the second thread, which
 * holds the heap lock for the set-up, the wrapper tells main and waits 300 ms, and
 * main forks in that window. The child then allocates: it must not find the heap
 * lock taken by a thread it does not have. Before the fork handlers were registered
 * at load, the child deadlocked there (its alarm ends it). Pages and states only:
 * the wait stages the race, nothing is timed. Exit 0 pass, 1 fail, 99 error. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

void *mrz_malloc(size_t size);
void mrz_free(void *p);
void *__real_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);

static int staged[2];		/* the wrapper writes the thread's kind: 'm' main, 't' the other */
static pid_t main_tid;

/* The arena's reservation: address space only (PROT_NONE), 1 GiB or more. */
void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *p = __real_mmap(addr, len, prot, flags, fd, off);
	static int once;

	if (prot == PROT_NONE && len >= ((size_t)1 << 30) && !__atomic_exchange_n(&once, 1, __ATOMIC_RELAXED)) {
		char who = (pid_t)syscall(SYS_gettid) == main_tid ? 'm' : 't';
		struct timespec ts = { 0, 300 * 1000 * 1000 };

		if (write(staged[1], &who, 1) != 1)
			_exit(99);
		if (who == 't')
			nanosleep(&ts, NULL);	/* main forks now, the heap lock held here */
	}
	return p;
}

/* Objects over the start-up heap's largest (128 KiB), so that the arena is set up and
 * the child's takes the heap lock (a span). */
#define SIZE 200000

static void *first_alloc(void *arg)
{
	char *p = mrz_malloc(SIZE);

	if (!p)
		return (void *)1;
	memset(p, 0x5a, SIZE);
	mrz_free(p);
	return arg;
}

int main(void)
{
	pthread_t th;
	void *ret;
	char who;
	pid_t pid;
	int st;

	main_tid = getpid();
	if (pipe(staged) != 0 || pthread_create(&th, NULL, first_alloc, NULL) != 0) {
		perror("fork-init: set-up");
		return 99;
	}
	if (read(staged[0], &who, 1) != 1) {
		perror("fork-init: read");
		return 99;
	}
	if (who != 't') {
		fprintf(stderr, "fork-init: the reservation ran on main, not on the second thread: not staged\n");
		return 99;
	}
	pid = fork();
	if (pid < 0) {
		perror("fork-init: fork");
		return 99;
	}
	if (pid == 0) {
		char *p;

		alarm(5);
		p = mrz_malloc(SIZE);
		if (!p)
			_exit(2);
		memset(p, 0xa5, SIZE);
		mrz_free(p);
		_exit(0);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) {
			perror("fork-init: waitpid");
			return 99;
		}
	if (pthread_join(th, &ret) != 0 || ret) {
		fprintf(stderr, "fork-init: the first allocation failed on the second thread\n");
		return 1;
	}
	if (WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM) {
		fprintf(stderr, "FAIL: the child forked during the allocator's set-up hung in its "
			"first allocation (the heap lock held by a thread it does not have)\n");
		return 1;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "FAIL: the child forked during the set-up ended with status %#x\n", st);
		return 1;
	}
	printf("ok: forked while the second thread set the allocator up (the reservation "
	       "staged on it); the child allocated\n");
	return 0;
}
