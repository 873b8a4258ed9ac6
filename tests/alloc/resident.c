/* Resident size of libmemreg's own doing, counted exactly with mincore over the
 * region holding the objects (tests/alloc/resident.sh, MEMREG_REGION_SIZE=64M,
 * MEMREG_NUMA=0): what each thread's cache makes resident. Pages, not times:
 * nothing here is timed. Usage: resident caches  (prints its counts; exit 1 with
 * why if over) */
#include "config.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define REGION_BYTES ((size_t)64 << 20)
#define PAGE 4096u

/* Resident pages of the 64 MiB region holding @p (arena pages only: the page
 * descriptors and the library's own data are elsewhere). */
static long region_resident(const void *p)
{
	static unsigned char vec[REGION_BYTES / PAGE];
	char *base = (char *)((uintptr_t)p & ~(uintptr_t)(REGION_BYTES - 1));
	long n = 0;
	size_t i;

	if (mincore(base, REGION_BYTES, vec) != 0) {
		perror("resident: mincore");
		exit(99);
	}
	for (i = 0; i < sizeof(vec); i++)
		n += vec[i] & 1;
	return n;
}

/* ---- caches: what a thread that allocates one small object makes resident ----
 * Its cache (the bins of one temperature and the page of its header: 2 pages of
 * 4; before, every cache was written whole) and the first page of its slab. */

#define THREADS 16
static pthread_barrier_t ready, done;

static void *thread_alloc(void *arg)
{
	void **out = arg;

	*out = malloc(16);
	memset(*out, 1, 16);
	pthread_barrier_wait(&ready);
	pthread_barrier_wait(&done);	/* the cache stays the thread's until counted */
	free(*out);
	return NULL;
}

static int mode_caches(void)
{
	pthread_t t[THREADS];
	void *obj[THREADS];
	void *first = malloc(16);
	long before, after, per_thread_x100;
	int i;

	memset(first, 1, 16);
	pthread_barrier_init(&ready, NULL, THREADS + 1);
	pthread_barrier_init(&done, NULL, THREADS + 1);
	before = region_resident(first);
	for (i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, thread_alloc, &obj[i]) != 0) {
			perror("resident: pthread_create");
			return 99;
		}
	pthread_barrier_wait(&ready);
	after = region_resident(first);
	for (i = 0; i < THREADS; i++)
		if (((uintptr_t)obj[i] ^ (uintptr_t)first) >= REGION_BYTES) {
			printf("thread %d's object %p is not in the region of %p\n", i, obj[i], first);
			return 1;
		}
	pthread_barrier_wait(&done);
	for (i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	free(first);
	per_thread_x100 = (after - before) * 100 / THREADS;
	printf("first allocation: %ld pages; %d threads: %ld pages more, %ld.%02ld a thread\n",
	       before, THREADS, after - before, per_thread_x100 / 100, per_thread_x100 % 100);
	/* 3 a thread (2 of its cache, 1 of its slab) and a few pages for what
	 * pthread_create allocates in the main thread (2 here): 50 for 16 threads.
	 * Before, every cache was written whole: 66 (3-page caches), the first
	 * allocation 4 pages, now 3. */
	if (after - before > 3 * THREADS + 4 || before > 4) {
		printf("over: at most 3 pages a thread (+4) and 4 for the first allocation\n");
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "caches") == 0)
		return mode_caches();
	fprintf(stderr, "usage: resident caches\n");
	return 2;
}
