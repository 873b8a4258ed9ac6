/* Packing programs for tests/alloc/packing.sh, run under LD_PRELOAD=libmemreg.so:
 * partly used slabs refilled lowest region first, hot objects in regions of their
 * own below normal ones, and memory freed to another thread's cache (exited, also
 * under many others exited since, or live) reused by the next allocation instead of
 * growing the heap. */
#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bench/alloc-workloads.h"
#include "tests/alloc/self-status.h"
#include "memreg.h"

/* The memreg.h API, from the preloaded library (the program does not link it). */
static void *sym(const char *name)
{
	void *f = dlsym(RTLD_DEFAULT, name);

	if (!f) {
		fprintf(stderr, "%s: not found (libmemreg not preloaded?)\n", name);
		exit(99);
	}
	return f;
}

/* The region size libmemreg was given (MEMREG_REGION_SIZE, "NM" only here). */
static unsigned region_shift(void)
{
	const char *s = getenv("MEMREG_REGION_SIZE");
	unsigned long mib = s ? strtoul(s, NULL, 10) : 64;
	unsigned shift = 20;

	while ((1ul << (shift - 20)) < mib)
		shift++;
	return shift;
}

static void **table(size_t n)
{
	void **p = mmap(NULL, n * sizeof(void *), PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(99);
	}
	return p;
}

#define MAX_REGIONS 4096

/* 48 regions' worth of 64-byte objects, every other one freed, then an eighth of
 * them allocated again: the refills must fill the freed slots of the lowest regions
 * first. One slab's worth may come from the bin's current slab (the last one
 * allocated, at the top): a thread cache hands out its current slab's free list
 * before it refills. */
static int mode_lowest(void)
{
	unsigned shift = region_shift();
	size_t n = (48ul << shift) / 64, i, refill = n / 8, k, want, above = 0;
	void **p = table(n);
	static size_t freed[MAX_REGIONS], got[MAX_REGIONS];
	uintptr_t lo = UINTPTR_MAX;

	for (i = 0; i < n; i++) {
		p[i] = malloc(64);
		if (!p[i])
			return 99;
		if ((uintptr_t)p[i] < lo)
			lo = (uintptr_t)p[i];
	}
	lo >>= shift;
	for (i = 0; i < n; i += 2) {
		freed[((uintptr_t)p[i] >> shift) - lo]++;
		free(p[i]);
	}
	for (i = 0; i < refill; i++) {
		uintptr_t r = ((uintptr_t)malloc(64) >> shift) - lo;

		if (r >= MAX_REGIONS) {
			fprintf(stderr, "lowest: a refill below the first object's region\n");
			return 1;
		}
		got[r]++;
	}
	/* The lowest k regions whose freed slots hold the refills but one slab's worth. */
	for (k = 0, want = 0; want + 1024 < refill; k++)
		want += freed[k];
	for (i = k; i < MAX_REGIONS; i++)
		above += got[i];
	if (above > 512) {
		fprintf(stderr, "lowest: %zu of %zu refills above the lowest %zu regions:", above,
			refill, k);
		for (i = 0; i < MAX_REGIONS; i++)
			if (got[i])
				fprintf(stderr, " region %zu: %zu/%zu", i, got[i], freed[i]);
		fprintf(stderr, "\n");
		return 1;
	}
	printf("lowest: %zu refills, %zu in the lowest %zu regions (%u MiB windows of virtual address space)\n",
	       refill, refill - above, k, 1u << (shift - 20));
	return 0;
}

/* Hot objects (memreg_malloc_hot) interleaved with normal ones, more than a region
 * of each: every hot object lies below every normal one, and no region holds both. */
static int mode_hot(void)
{
	unsigned shift = region_shift();
	size_t n = (3ul << shift) / 128, i;
	void **hot = table(n), **norm = table(n);
	uintptr_t hot_hi = 0, norm_lo = UINTPTR_MAX;
	void *(*malloc_hot)(size_t) = (void *(*)(size_t))sym("memreg_malloc_hot");
	int (*class_of)(const void *) = (int (*)(const void *))sym("memreg_class_of");

	for (i = 0; i < n; i++) {
		norm[i] = malloc(128);
		hot[i] = malloc_hot(128);
		if (!hot[i] || !norm[i] || class_of(hot[i]) != MEMREG_HOT)
			return 99;
		if ((uintptr_t)hot[i] > hot_hi)
			hot_hi = (uintptr_t)hot[i];
		if ((uintptr_t)norm[i] < norm_lo)
			norm_lo = (uintptr_t)norm[i];
	}
	if (hot_hi >> shift >= norm_lo >> shift) {
		fprintf(stderr, "hot: highest hot object in region %#lx, lowest normal one in %#lx\n",
			(unsigned long)(hot_hi >> shift), (unsigned long)(norm_lo >> shift));
		return 1;
	}
	printf("hot: hot objects below normal ones, regions apart\n");
	return 0;
}

#define REUSE_BYTES (64ul << 20)
#define REUSE_N (REUSE_BYTES / 64)
static void **reuse_p;
static pthread_mutex_t reuse_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t reuse_cond = PTHREAD_COND_INITIALIZER;
static int reuse_filled, reuse_done;

static void *reuse_thread(void *arg)
{
	size_t i;

	for (i = 0; i < REUSE_N; i++) {
		reuse_p[i] = malloc(64);
		memset(reuse_p[i], 1, 64);
	}
	pthread_mutex_lock(&reuse_lock);
	reuse_filled = 1;
	pthread_cond_broadcast(&reuse_cond);
	while (arg && !reuse_done)	/* live: stays until main is done */
		pthread_cond_wait(&reuse_cond, &reuse_lock);
	pthread_mutex_unlock(&reuse_lock);
	return NULL;
}

/* Threads that hold a cache until let go, and exit after the reuse thread: their
 * caches are parked above its cache. */
#define REUSE_BURY 64
static pthread_barrier_t bury_in, bury_out;

static void *bury_thread(void *arg)
{
	free(malloc(64));	/* it has a cache now */
	pthread_barrier_wait(&bury_in);
	pthread_barrier_wait(&bury_out);
	return arg;
}

/* A thread allocates 64 MiB of 64-byte objects and exits (or waits, @live); main
 * frees them all and allocates 64 MiB again: the peak grows by little (an eighth of
 * that is the bound: new slabs would add all of it). @buried: REUSE_BURY threads
 * exit after it, so its cache lies under theirs in the pool of exited threads'
 * caches, which a refill goes through a few at a time. */
static int mode_reuse(int live, int buried)
{
	const char *name = live ? "live" : buried ? "exited-buried" : "exited";
	pthread_t t, bt[REUSE_BURY];
	long before, after;
	size_t i;

	reuse_p = table(REUSE_N);
	if (buried) {
		if (pthread_barrier_init(&bury_in, NULL, REUSE_BURY + 1) ||
		    pthread_barrier_init(&bury_out, NULL, REUSE_BURY + 1))
			return 99;
		for (i = 0; i < REUSE_BURY; i++)
			if (pthread_create(&bt[i], NULL, bury_thread, NULL) != 0)
				return 99;
		pthread_barrier_wait(&bury_in);
	}
	if (pthread_create(&t, NULL, reuse_thread, live ? &t : NULL) != 0)
		return 99;
	pthread_mutex_lock(&reuse_lock);
	while (!reuse_filled)
		pthread_cond_wait(&reuse_cond, &reuse_lock);
	pthread_mutex_unlock(&reuse_lock);
	if (!live)
		pthread_join(t, NULL);
	if (buried) {
		pthread_barrier_wait(&bury_out);
		for (i = 0; i < REUSE_BURY; i++)
			pthread_join(bt[i], NULL);
	}
	before = self_peak_kib();
	for (i = 0; i < REUSE_N; i++)
		free(reuse_p[i]);
	for (i = 0; i < REUSE_N; i++) {
		reuse_p[i] = malloc(64);
		memset(reuse_p[i], 2, 64);
	}
	after = self_peak_kib();
	if (live) {
		pthread_mutex_lock(&reuse_lock);
		reuse_done = 1;
		pthread_cond_broadcast(&reuse_cond);
		pthread_mutex_unlock(&reuse_lock);
		pthread_join(t, NULL);
	}
	if (before < 0 || after - before > (long)(REUSE_BYTES / 8 / 1024)) {
		fprintf(stderr, "%s: peak %ld KiB after the thread's 64 MiB, %ld KiB after main's: +%ld KiB (at most %lu)\n",
			name, before, after, after - before, REUSE_BYTES / 8 / 1024);
		return 1;
	}
	printf("%s: peak +%ld KiB\n", name, after - before);
	return 0;
}

/* ---- steal-wait: a look at others' inboxes that found nothing waits ----
 * A thread about to make a new slab first looks at live threads' inboxes for
 * objects of its class; one whose look found nothing skips its next 1, 3, 7 ...
 * 127 looks (tcache.c, steal_inboxes). Thread L allocates objects of 208 bytes,
 * main frees them (they wait in L's inbox: L is alive and does not allocate), and a
 * new thread W (a new cache: no thread has exited yet) makes a slab of another
 * class, whose look finds nothing, then asks for 208 bytes: that refill skips its
 * look and makes a slab (without the wait it takes one of L's objects), and one of
 * the next slabs' looks takes them. */
#define WAIT_N 600u
#define WAIT_SIZE 208u
static void *wait_p[WAIT_N];
static pthread_barrier_t wait_in, wait_out;

static void *wait_holder(void *arg)
{
	unsigned i;

	for (i = 0; i < WAIT_N; i++)
		memset(wait_p[i] = malloc(WAIT_SIZE), 1, WAIT_SIZE);
	pthread_barrier_wait(&wait_in);
	pthread_barrier_wait(&wait_out);	/* alive until main is done */
	return arg;
}

static bool wait_is_holders(const void *p)
{
	unsigned i;

	for (i = 0; i < WAIT_N; i++)
		if (wait_p[i] == p)
			return true;
	return false;
}

static void *wait_taker(void *arg)
{
	void *other = malloc(3000), *first, *p;	/* a new slab: its look finds nothing */
	unsigned i;

	first = malloc(WAIT_SIZE);
	if (wait_is_holders(first)) {
		fprintf(stderr, "steal-wait: the refill right after a look that found nothing took another thread's object (it looked again)\n");
		return (void *)1;
	}
	for (i = 0; i < 4 * (65536 / WAIT_SIZE); i++) {
		p = malloc(WAIT_SIZE);
		if (wait_is_holders(p)) {
			printf("steal-wait: the first refill skipped its look; the holder's objects taken after %u more\n",
			       i + 1);
			free(other);
			return NULL;
		}
	}
	fprintf(stderr, "steal-wait: none of a live thread's %u freed objects taken in %u allocations of their size\n",
		WAIT_N, i);
	return (void *)1;
}

static int mode_steal_wait(void)
{
	pthread_t holder, taker;
	void *ret;
	unsigned i;

	if (pthread_barrier_init(&wait_in, NULL, 2) || pthread_barrier_init(&wait_out, NULL, 2) ||
	    pthread_create(&holder, NULL, wait_holder, NULL) != 0)
		return 99;
	pthread_barrier_wait(&wait_in);
	for (i = 0; i < WAIT_N; i++)
		free(wait_p[i]);
	malloc_trim(0);		/* main's batches of remote frees go out now */
	if (pthread_create(&taker, NULL, wait_taker, NULL) != 0 || pthread_join(taker, &ret) != 0)
		return 99;
	pthread_barrier_wait(&wait_out);
	pthread_join(holder, NULL);
	return ret ? 1 : 0;
}

/* ---- churn: random lifetimes, packing from the allocation order alone ----
 * alloc-bench's lifetimes workload, scaled to 4 MiB regions: a ramp of about 45 MiB
 * of mixed sizes (16 B .. 16 KiB) dying at random through a churn of 200 K
 * allocations with exponential lifetimes (mean 1 K). At the end at least 60% of the
 * regions that ever held an object must hold none (code before: 0 of 12). The churn
 * is alloc-bench's (bench/alloc-workloads.h), with sizes of 16 B .. 16 KiB: 60%
 * under 256 B, 30% under 4 KiB. */
static size_t churn_size(uint64_t *s)
{
	uint64_t r = aw_rng(s);

	return r % 100 < 60 ? 16 + r / 100 % 240 : r % 100 < 90 ? 256 + r / 100 % 3840 :
	       4096 + r / 100 % 12288;
}

#define CH_RAMP 24000u
#define CH_CHURN 200000u

static void *no_op_thread(void *arg)
{
	return arg;
}

/* @threaded: alloc-bench's lifetimes itself (objects of 16 B-128 KiB, 16 MiB regions)
 * in a process that has started a thread: spans of up to 64 KiB then go through the
 * freeing thread's span cache, which keeps one only where no lower region could hold
 * it (allocator/large.c; 45% free with that check left out, 91% with it). */
static int mode_churn(bool threaded)
{
	unsigned shift = region_shift();
	uint64_t ramp = threaded ? AW_LIFETIMES_RAMP : CH_RAMP;
	uint64_t churn = threaded ? AW_LIFETIMES_CHURN : CH_CHURN;
	struct aw_churn c = { .heap = (struct aw_obj *)table((ramp + churn) * 3), .ramp = ramp,
			      .churn = churn };
	static unsigned char touched[MAX_REGIONS], live[MAX_REGIONS];
	size_t i, nt = 0, nl = 0;
	uint64_t t;
	uintptr_t base = 0;

	if (threaded) {
		pthread_t th;

		if (pthread_create(&th, NULL, no_op_thread, NULL) != 0 || pthread_join(th, NULL) != 0)
			return 99;
		c.s = 11;
		c.mean = AW_LIFETIMES_MEAN;
		c.touch = 256;
		c.size = aw_mixed_size;
	} else {
		c.s = 7;
		c.mean = 1024.0;
		c.touch = 64;
		c.size = churn_size;
	}
	for (t = 0; t < ramp + churn; t++) {
		struct aw_obj o = aw_churn_step(&c, t);
		uintptr_t w;

		if (!o.p)
			return 99;
		if (!base)
			base = ((uintptr_t)o.p >> shift) - MAX_REGIONS / 2;
		for (w = (uintptr_t)o.p >> shift; w <= ((uintptr_t)o.p + o.size - 1) >> shift; w++)
			if (w - base < MAX_REGIONS)
				touched[w - base] = 1;
	}
	for (i = 0; i < c.n; i++) {
		uintptr_t w;

		for (w = (uintptr_t)c.heap[i].p >> shift; w <= ((uintptr_t)c.heap[i].p + c.heap[i].size - 1) >> shift; w++)
			if (w - base < MAX_REGIONS)
				live[w - base] = 1;
	}
	for (i = 0; i < MAX_REGIONS; i++) {
		nt += touched[i];
		nl += live[i];
	}
	if (nt == 0 || (nt - nl) * 100 < nt * 60) {
		fprintf(stderr, "churn: %zu of %zu regions touched hold live objects at the end: %zu%% free, want >= 60%%\n",
			nl, nt, nt ? (nt - nl) * 100 / nt : 0);
		return 1;
	}
	printf("churn: %zu of %zu regions free at the end (%u MiB windows of virtual address space)\n",
	       nt - nl, nt, 1u << (shift - 20));
	return 0;
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";

	if (!strcmp(m, "lowest"))
		return mode_lowest();
	if (!strcmp(m, "hot"))
		return mode_hot();
	if (!strcmp(m, "exited"))
		return mode_reuse(0, 0);
	if (!strcmp(m, "exited-buried"))
		return mode_reuse(0, 1);
	if (!strcmp(m, "live"))
		return mode_reuse(1, 0);
	if (!strcmp(m, "steal-wait"))
		return mode_steal_wait();
	if (!strcmp(m, "churn"))
		return mode_churn(false);
	if (!strcmp(m, "churn-threaded"))
		return mode_churn(true);
	fprintf(stderr, "usage: packing lowest|hot|exited|exited-buried|live|steal-wait|churn|churn-threaded\n");
	return 99;
}
