/* Resident size of libmemreg's own doing, counted exactly with mincore over the
 * region holding the objects (tests/alloc/resident.sh, MEMREG_REGION_SIZE=64M,
 * MEMREG_NUMA=0): what each thread's cache makes resident, and which cache lines
 * and pages small objects allocated in a row take. Pages and addresses, not times:
 * nothing here is timed. Usage: resident caches|lines  (prints its counts; exit 1
 * with why if over) */
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

/* ---- lines: small objects allocated in a row, each in a cache line of its own ----
 * A thread that allocates 16- or 32-byte objects in a row for other threads (the
 * falseshare workload of bench/alloc-bench.c: per-worker counters) must not put
 * two of them in one cache line while 64 in a row fit in a page's lines, and must
 * still fill the page before it touches another (the same pages resident as in
 * address order). Run in a new thread, so its bins start on fresh slabs. */
#define LINE 64u

static int lines_check(size_t size, char *why, size_t whylen)
{
	size_t per_page = PAGE / size, i, j;
	uintptr_t *a = calloc(per_page, sizeof(*a));
	unsigned char in_line[PAGE / LINE] = { 0 };
	int bad = 0;

	if (!a) {
		snprintf(why, whylen, "calloc failed");
		return 1;
	}
	for (i = 0; i < per_page; i++)
		a[i] = (uintptr_t)malloc(size);
	for (i = 0; i < per_page && !bad; i++) {
		if (a[i] / PAGE != a[0] / PAGE) {
			snprintf(why, whylen, "%zu-byte object %zu of %zu at %#lx is not in the page of "
				 "the first, %#lx", size, i, per_page, (unsigned long)a[i], (unsigned long)a[0]);
			bad = 1;
			break;
		}
		in_line[(a[i] % PAGE) / LINE]++;
		for (j = i >= 64 ? i - 63 : 0; j < i; j++)
			if (a[j] / LINE == a[i] / LINE) {
				snprintf(why, whylen, "%zu-byte objects %zu and %zu (%#lx, %#lx) share a "
					 "cache line, %zu apart in a row", size, j, i, (unsigned long)a[j],
					 (unsigned long)a[i], i - j);
				bad = 1;
				break;
			}
	}
	for (i = 0; i < PAGE / LINE && !bad; i++)
		if (in_line[i] != LINE / size) {
			snprintf(why, whylen, "line %zu of the page holds %u %zu-byte objects, not %zu",
				 i, in_line[i], size, (size_t)(LINE / size));
			bad = 1;
		}
	for (i = 0; i < per_page; i++)
		free((void *)a[i]);
	free(a);
	return bad;
}

static void *thread_lines(void *arg)
{
	char *why = arg;
	size_t sizes[] = { 16, 32 }, k;

	for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++)
		if (lines_check(sizes[k], why, 512))
			return why;
	return NULL;
}

static int mode_lines(void)
{
	static char why[512];
	pthread_t t;
	void *ret;

	if (pthread_create(&t, NULL, thread_lines, why) != 0) {
		perror("resident: pthread_create");
		return 99;
	}
	pthread_join(t, &ret);
	if (ret) {
		printf("%s\n", why);
		return 1;
	}
	printf("16 B: 256 in a row in one page, the first 64 each in a line of its own, "
	       "4 to a line at the end; 32 B: 128, 64 lines, 2 to a line\n");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "caches") == 0)
		return mode_caches();
	if (argc == 2 && strcmp(argv[1], "lines") == 0)
		return mode_lines();
	fprintf(stderr, "usage: resident caches|lines\n");
	return 2;
}
