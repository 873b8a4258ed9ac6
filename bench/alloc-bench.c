/* Allocator workloads for bench/alloc-bench.sh, run under each allocator by
 * LD_PRELOAD: alloc-bench WORKLOAD. Each prints "key=value" lines (time is taken
 * outside, by the script). Bounded: each takes a second or a few under glibc. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "alloc-workloads.h"

static long rss_bytes(void)
{
	long pages = 0, res = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%ld %ld", &pages, &res) != 2)
			res = 0;
		fclose(f);
	}
	return res * sysconf(_SC_PAGESIZE);
}

/* Server-like: random sizes, a quarter of the frees done by another thread. */
#define SRV_THREADS 4
#define SRV_SLOTS 2048
static _Atomic(void *) exchange[SRV_THREADS * 64];

static void *server_thread(void *arg)
{
	uint64_t s = (uintptr_t)arg * 0x9e3779b97f4a7c15u | 1;
	void *slot[SRV_SLOTS] = { 0 };
	long i;

	for (i = 0; i < 1500000; i++) {
		uint64_t r = aw_rng(&s);
		unsigned k = r % SRV_SLOTS;
		size_t n = (r >> 16) % 16 == 0 ? (r >> 24) % 65536 + 1 : (r >> 24) % 512 + 1;

		if (slot[k]) {
			if ((r >> 40) % 4 == 0) {
				/* Hand it to whoever takes this exchange slot; free what was there. */
				void *old = atomic_exchange(&exchange[(r >> 44) % (SRV_THREADS * 64)], slot[k]);

				free(old);
			} else {
				free(slot[k]);
			}
		}
		slot[k] = malloc(n);
		memset(slot[k], (int)i, n < 64 ? n : 64);
	}
	for (i = 0; i < SRV_SLOTS; i++)
		free(slot[i]);
	return NULL;
}

static int w_server(void)
{
	pthread_t t[SRV_THREADS];
	unsigned i;

	for (i = 0; i < SRV_THREADS; i++)
		pthread_create(&t[i], NULL, server_thread, (void *)(uintptr_t)(i + 1));
	for (i = 0; i < SRV_THREADS; i++)
		pthread_join(t[i], NULL);
	for (i = 0; i < SRV_THREADS * 64; i++)
		free(atomic_load(&exchange[i]));
	return 0;
}

/* Producer/consumer: objects made on one thread, freed on another. */
#define RING 1024
struct ring {
	_Atomic(void *) slot[RING];
	atomic_uint head, tail;
	char pad[64];
};
static struct ring rings[2];

static void *producer(void *arg)
{
	struct ring *r = arg;
	uint64_t s = (uintptr_t)arg | 1;
	unsigned i;

	for (i = 0; i < 2000000; i++) {
		size_t n = aw_rng(&s) % 496 + 16;
		void *p = malloc(n);
		unsigned h = atomic_load_explicit(&r->head, memory_order_relaxed);

		memset(p, 1, 16);
		while (h - atomic_load_explicit(&r->tail, memory_order_acquire) >= RING)
			sched_yield();
		atomic_store_explicit(&r->slot[h % RING], p, memory_order_relaxed);
		atomic_store_explicit(&r->head, h + 1, memory_order_release);
	}
	return NULL;
}

static void *consumer(void *arg)
{
	struct ring *r = arg;
	unsigned done = 0;

	while (done < 2000000) {
		unsigned t = atomic_load_explicit(&r->tail, memory_order_relaxed);

		if (t == atomic_load_explicit(&r->head, memory_order_acquire)) {
			sched_yield();
			continue;
		}
		free(atomic_load_explicit(&r->slot[t % RING], memory_order_relaxed));
		atomic_store_explicit(&r->tail, t + 1, memory_order_release);
		done++;
	}
	return NULL;
}

static int w_prodcons(void)
{
	pthread_t t[4];
	int i;

	for (i = 0; i < 2; i++) {
		pthread_create(&t[2 * i], NULL, producer, &rings[i]);
		pthread_create(&t[2 * i + 1], NULL, consumer, &rings[i]);
	}
	for (i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	return 0;
}

/* False sharing: small objects allocated by the main thread in turn for each worker
 * (as a server hands out request buffers), then written hard by their worker. */
#define FS_THREADS 4
#define FS_OBJS 64
static volatile uint64_t *fs_obj[FS_THREADS][FS_OBJS];

static void *fs_thread(void *arg)
{
	volatile uint64_t **o = (volatile uint64_t **)fs_obj[(uintptr_t)arg];
	long i;
	int k;

	for (i = 0; i < 3000000; i++)
		for (k = 0; k < FS_OBJS; k++)
			o[k][0]++;
	return NULL;
}

static int w_falseshare(void)
{
	pthread_t t[FS_THREADS];
	int i, k;

	for (k = 0; k < FS_OBJS; k++)
		for (i = 0; i < FS_THREADS; i++)
			fs_obj[i][k] = calloc(1, 16);
	for (i = 0; i < FS_THREADS; i++)
		pthread_create(&t[i], NULL, fs_thread, (void *)(uintptr_t)i);
	for (i = 0; i < FS_THREADS; i++)
		pthread_join(t[i], NULL);
	for (k = 0; k < FS_OBJS; k++)
		for (i = 0; i < FS_THREADS; i++)
			free((void *)fs_obj[i][k]);
	return 0;
}

/* Threads coming and going: THR_ROUNDS rounds of THR_WIDTH threads at once (a
 * server that starts a thread per request), each making THR_OPS objects (two in
 * three of 1-2000 bytes, one in three of 1-300000) and passing each through a shared
 * array, freeing the one it replaces: most of a thread's objects are freed by
 * others, many after it exited. */
#define THR_ROUNDS 4
#define THR_WIDTH 1000
#define THR_OPS 300
#define THR_SLOTS 4096
static _Atomic(void *) thr_slot[THR_SLOTS];

static void *thr_thread(void *arg)
{
	uint64_t s = (uintptr_t)arg * 0x9e3779b97f4a7c15u | 1;
	int i;

	for (i = 0; i < THR_OPS; i++) {
		uint64_t r = aw_rng(&s);
		size_t n = r % 3 ? (r >> 8) % 2000 + 1 : (r >> 8) % 300000 + 1;
		void *p = malloc(n);

		memset(p, i, n < 100 ? n : 100);
		free(atomic_exchange(&thr_slot[(r >> 40) % THR_SLOTS], p));
	}
	return NULL;
}

static int w_threads(void)
{
	static pthread_t t[THR_WIDTH];
	pthread_attr_t attr;
	int round, i, err;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 << 10);
	for (round = 0; round < THR_ROUNDS; round++) {
		for (i = 0; i < THR_WIDTH; i++) {
			err = pthread_create(&t[i], &attr, thr_thread,
					     (void *)(uintptr_t)(round * THR_WIDTH + i + 1));
			if (err) {
				fprintf(stderr, "alloc-bench threads: thread %d: %s\n", i, strerror(err));
				return 1;
			}
		}
		for (i = 0; i < THR_WIDTH; i++)
			pthread_join(t[i], NULL);
	}
	for (i = 0; i < THR_SLOTS; i++)
		free(atomic_load(&thr_slot[i]));
	return 0;
}

/* Single-thread small-object churn. */
static int w_churn(void)
{
	static void *a[4096];
	uint64_t s = 1;
	long i;

	for (i = 0; i < 30000000; i++) {
		uint64_t r = aw_rng(&s);
		unsigned k = r % 4096;

		free(a[k]);
		a[k] = malloc((r >> 20) % 256 + 1);
		*(char *)a[k] = 1;
	}
	for (i = 0; i < 4096; i++)
		free(a[i]);
	return 0;
}

/* Large realloc growth: 32 buffers grown in turns by 4 KiB to 8 MiB. */
static int w_realloc(void)
{
	char *b[32] = { 0 };
	size_t n;
	int k;

	for (n = 4096; n <= (8u << 20); n += 4096)
		for (k = 0; k < 32; k++) {
			b[k] = realloc(b[k], n);
			b[k][n - 1] = (char)k;
		}
	for (k = 0; k < 32; k++)
		free(b[k]);
	return 0;
}

/* Fragmentation: 2 GiB in mixed sizes, 90% freed at random: resident bytes after. */
static int w_frag(void)
{
	size_t cap = 1 << 22, n = 0, total = 0, i;
	void **p = calloc(cap, sizeof(*p));
	uint64_t s = 3;

	while (total < (2ul << 30) && n < cap) {
		size_t sz = aw_mixed_size(&s);

		p[n] = malloc(sz);
		memset(p[n], 7, sz);
		total += sz;
		n++;
	}
	for (i = 0; i < n; i++)
		if (aw_rng(&s) % 10) {
			free(p[i]);
			p[i] = NULL;
		}
	printf("objects=%zu allocated_bytes=%zu rss_after_bytes=%ld\n", n, total, rss_bytes());
	for (i = 0; i < n; i++)
		free(p[i]);
	free(p);
	return 0;
}

/* Two allocation sites, kept distinct: no tail call, no inlining, no merging of the
 * identical functions (noipa). */
__attribute__((noipa, optimize("no-optimize-sibling-calls"))) static void *site_a(size_t n)
{
	void *p = malloc(n);

	__asm__ volatile("# site a" ::: "memory");
	return p;
}

__attribute__((noipa, optimize("no-optimize-sibling-calls"))) static void *site_b(size_t n)
{
	void *p = malloc(n);

	__asm__ volatile("# site b" ::: "memory");
	return p;
}

#define REGION_SHIFT 26	/* 64 MiB windows, memreg's default region size */

/* The region counts below are of the objects' virtual addresses, whatever the
 * allocator and the machine: say so beside them, so that nobody reads them as
 * physical memory regions (on a one-node machine there is nothing else to read). */
static void window_note(const char *counts, unsigned shift)
{
	printf("note: %s count %u MiB windows of virtual address space, not physical memory regions\n",
	       counts, 1u << (shift - 20));
}

static size_t distinct_windows(void **p, size_t n, unsigned shift)
{
	uintptr_t *w = malloc(n * sizeof(*w));
	size_t i, d = 0;
	int swapped = 1;

	for (i = 0; i < n; i++)
		w[i] = (uintptr_t)p[i] >> shift;
	/* Counting distinct values: sort (comb sort, no libc qsort in the timing). */
	for (size_t gap = n; gap > 1 || swapped;) {
		gap = gap * 10 / 13;
		if (gap < 1)
			gap = 1;
		swapped = 0;
		for (i = 0; i + gap < n; i++)
			if (w[i] > w[i + gap]) {
				uintptr_t t = w[i];

				w[i] = w[i + gap];
				w[i + gap] = t;
				swapped = 1;
			}
		if (gap == 1 && !swapped)
			break;
	}
	for (i = 0; i < n; i++)
		if (i == 0 || w[i] != w[i - 1])
			d++;
	free(w);
	return d;
}

/* Packing by site: long-lived objects of site A (10% of bytes) interleaved in time
 * with short-lived ones of site B, which are then freed. */
static int w_packing(void)
{
	size_t nlong = 0, nshort = 0, live = 0, total = 0, i, cap = 1 << 21;

	void **lp = malloc(cap * sizeof(void *)), **sp = malloc(cap * 8 * sizeof(void *));
	uint64_t s = 5;

	while (total < (1536ul << 20)) {
		size_t sz = aw_mixed_size(&s) % 4096 + 64;

		if (aw_rng(&s) % 10 == 0) {
			lp[nlong] = site_a(sz);
			memset(lp[nlong++], 1, sz);
			live += sz;
		} else {
			sp[nshort] = site_b(sz);
			memset(sp[nshort++], 2, sz);
		}
		total += sz;
	}
	for (i = 0; i < nshort; i++)
		free(sp[i]);
	printf("live_bytes=%zu regions_with_live=%zu region_limit=%zu rss_after_bytes=%ld\n", live,
	       distinct_windows(lp, nlong, REGION_SHIFT),
	       (live + (1ul << REGION_SHIFT) - 1) >> REGION_SHIFT, rss_bytes());
	window_note("regions_with_live and region_limit", REGION_SHIFT);
	/* The long-lived objects stay to the end: a site map written at exit shows them. */
	free(sp);
	return 0;
}

/* ---- lifetimes: sorted-buddy v3's "free regions after churn" ----
 * Random lifetimes, no sites, no profile: whatever packing there is comes from the
 * allocator's placement order alone. A ramp builds about 1 GiB of objects (mixed
 * sizes) whose deaths fall at random through the churn that follows; the churn
 * allocates 300 K more with exponential lifetimes (mean 4 K allocations), so at the
 * end about 18 MiB is live, made late. Every 16 MiB window of address space an
 * object ever covered is "touched"; the metric is the share of touched windows that
 * hold no live byte at the end (the kernel's patches went from 18 to 121 of 256).
 * The same windows for every allocator: memreg's regions (MEMREG_REGION_SIZE=16M),
 * glibc's heap and mmaps. Scaled down from 1 GiB and 64 MiB windows, which took
 * glibc 30 s of CPU here.
 * The bookkeeping is mmap'd, outside every allocator's heap. */
#define LT_SHIFT 24		/* 16 MiB windows: run memreg with MEMREG_REGION_SIZE=16M */
#define LT_WINDOWS 65536u	/* hash set of touched windows */

static void *lt_map(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	return p;
}

/* Insert window @w (stored + 1: 0 is empty) into the set; returns 1 if new. */
static int lt_window_add(uintptr_t *set, uintptr_t w)
{
	size_t i = (size_t)(w * 0x9e3779b97f4a7c15u >> 48) % LT_WINDOWS;

	while (set[i] && set[i] != w + 1)
		i = (i + 1) % LT_WINDOWS;
	if (set[i])
		return 0;
	set[i] = w + 1;
	return 1;
}

static int lt_windows_add(uintptr_t *set, const void *p, size_t size)
{
	uintptr_t w, end = ((uintptr_t)p + size - 1) >> LT_SHIFT;
	int n = 0;

	for (w = (uintptr_t)p >> LT_SHIFT; w <= end; w++)
		n += lt_window_add(set, w);
	return n;
}

static int w_lifetimes(void)
{
	size_t cap = AW_LIFETIMES_RAMP + AW_LIFETIMES_CHURN, i, touched = 0, live_windows = 0;
	struct aw_churn c = { .heap = lt_map(cap * sizeof(struct aw_obj)), .s = 11,
			      .ramp = AW_LIFETIMES_RAMP, .churn = AW_LIFETIMES_CHURN,
			      .mean = AW_LIFETIMES_MEAN, .touch = 256, .size = aw_mixed_size };
	uintptr_t *touched_set = lt_map(LT_WINDOWS * sizeof(uintptr_t));
	uintptr_t *live_set = lt_map(LT_WINDOWS * sizeof(uintptr_t));
	uint64_t t;

	for (t = 0; t < AW_LIFETIMES_RAMP + AW_LIFETIMES_CHURN; t++) {
		struct aw_obj o = aw_churn_step(&c, t);

		if (!o.p) {
			perror("alloc-bench: malloc");
			return 1;
		}
		touched += lt_windows_add(touched_set, o.p, o.size);
	}
	for (i = 0; i < c.n; i++)
		live_windows += lt_windows_add(live_set, c.heap[i].p, c.heap[i].size);
	printf("lt_peak_bytes=%zu lt_live_bytes=%zu lt_touched=%zu lt_live_regions=%zu lt_free_pct=%.1f rss_after_bytes=%ld\n",
	       c.peak, c.live, touched, live_windows,
	       touched ? 100.0 * (double)(touched - live_windows) / (double)touched : 0.0, rss_bytes());
	window_note("lt_touched and lt_live_regions", LT_SHIFT);
	for (i = 0; i < c.n; i++)
		free(c.heap[i].p);
	return 0;
}

/* Buffers of 32-128 KiB replaced at random: 5000 live, written on their first 256
 * bytes and their last byte, then 50 000 replacements (each frees a random one and
 * makes one of a new random size in its slot). A program's buffers of that range
 * (docs/allocator.md, "The first-fit heap"): glibc's heap puts them side by side and
 * reuses freed space for any size; spans of their own start and end on pages of
 * their own. Peak RSS is the measure. */
#define BC_LIVE 5000u
#define BC_STEPS 50000u

static size_t bc_size(uint64_t *s)
{
	return 32769 + aw_rng(s) % (131072 - 32769);
}

static int w_bufchurn(void)
{
	char **slot = lt_map(BC_LIVE * sizeof(char *));
	size_t *size = lt_map(BC_LIVE * sizeof(size_t));
	uint64_t s = 13;

	for (size_t i = 0; i < BC_LIVE + BC_STEPS; i++) {
		size_t k = i < BC_LIVE ? i : aw_rng(&s) % BC_LIVE;

		if (i >= BC_LIVE)
			free(slot[k]);
		size[k] = bc_size(&s);
		slot[k] = malloc(size[k]);
		if (!slot[k]) {
			perror("alloc-bench: malloc");
			return 1;
		}
		memset(slot[k], 1, 256);
		slot[k][size[k] - 1] = 1;
	}
	printf("rss_after_bytes=%ld\n", rss_bytes());
	for (size_t k = 0; k < BC_LIVE; k++)
		free(slot[k]);
	return 0;
}

/* Hot-set inflation: hot objects of site A (10% of bytes) interleaved in allocation
 * order with cold ones of site B: pages holding hot objects / (hot bytes / page). */
static int w_hotset(void)
{
	size_t nhot = 0, ncold = 0, hot = 0, cap, pages;
	void **hp, **cp;
	uint64_t s = 9;

	/* For bench/profile-hotset.sh: a smaller heap, and after the measurement the hot
	 * objects touched for a while (a learning run, recorded by memregctl record),
	 * optionally with every heap page a mapping of its own (refs sees mappings). */
	const char *mib = getenv("ALLOC_BENCH_HOTSET_MIB"), *touch = getenv("ALLOC_BENCH_TOUCH_MS");
	size_t limit = (mib ? strtoul(mib, NULL, 10) : 256) << 20;
	uintptr_t lo = UINTPTR_MAX, hi = 0;

	cap = limit >> 7 > 4096 ? limit >> 7 : 4096;	/* 2^21 for 256 MiB, as before */
	hp = malloc(cap * sizeof(void *));
	cp = malloc(cap * 8 * sizeof(void *));

	while (hot + ncold * 160 < limit && nhot < cap) {
		size_t sz = aw_rng(&s) % 192 + 64;

		if (aw_rng(&s) % 10 == 0) {
			hp[nhot] = site_a(sz);
			memset(hp[nhot++], 1, sz);
			hot += sz;
		} else {
			cp[ncold] = site_b(sz);
			memset(cp[ncold++], 2, sz);
		}
	}
	pages = distinct_windows(hp, nhot, 12);
	printf("hot_bytes=%zu hot_pages=%zu inflation=%.2f\n", hot, pages,
	       (double)pages / ((double)hot / 4096));
	if (touch) {
		struct timespec t;
		double end;
		size_t i;

		for (i = 0; i < nhot; i++) {
			lo = (uintptr_t)hp[i] < lo ? (uintptr_t)hp[i] : lo;
			hi = (uintptr_t)hp[i] > hi ? (uintptr_t)hp[i] + 256 : hi;
		}
		for (i = 0; i < ncold; i++) {
			lo = (uintptr_t)cp[i] < lo ? (uintptr_t)cp[i] : lo;
			hi = (uintptr_t)cp[i] > hi ? (uintptr_t)cp[i] + 256 : hi;
		}
		if (getenv("ALLOC_BENCH_SPLIT"))
			for (uintptr_t a = lo & ~(uintptr_t)4095; a < hi; a += 8192)
				madvise((void *)a, 4096, MADV_RANDOM);
		printf("ready\n");
		fflush(stdout);
		clock_gettime(CLOCK_MONOTONIC, &t);
		end = t.tv_sec * 1e3 + t.tv_nsec / 1e6 + strtod(touch, NULL);
		do {
			for (i = 0; i < nhot; i++)
				((volatile char *)hp[i])[i % 64]++;
			clock_gettime(CLOCK_MONOTONIC, &t);
		} while (t.tv_sec * 1e3 + t.tv_nsec / 1e6 < end);
	}
	/* Everything stays to the end: a site map written at exit shows it. */
	return 0;
}

/* Not an allocator workload: the speed of the CPU it runs on, for alloc-bench.sh's
 * choice of CPU (run under taskset). The best of 9 rounds of a fixed integer loop,
 * in milliseconds: the VM of 2026-12-06 ran it in 9.0 ms on one of its two CPUs and
 * 16.9-17.7 on the other for minutes, later in 14.5 on the first and 9.0 on the
 * second. */
static int w_spin(void)
{
	double best = 1e9;
	int round;

	for (round = 0; round < 9; round++) {
		struct timespec a, b;
		volatile uint64_t acc = 0;
		uint64_t i;
		double ms;

		clock_gettime(CLOCK_MONOTONIC, &a);
		for (i = 0; i < 20000000; i++)
			acc = acc + i * i;
		clock_gettime(CLOCK_MONOTONIC, &b);
		ms = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
		if (ms < best)
			best = ms;
	}
	printf("spin_ms=%.2f\n", best);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(void);
	} w[] = {
		{ "server", w_server }, { "prodcons", w_prodcons }, { "falseshare", w_falseshare },
		{ "churn", w_churn }, { "realloc", w_realloc }, { "frag", w_frag },
		{ "packing", w_packing }, { "hotset", w_hotset }, { "lifetimes", w_lifetimes },
		{ "threads", w_threads }, { "spin", w_spin }, { "bufchurn", w_bufchurn },
	};
	unsigned i;

	if (argc == 2)
		for (i = 0; i < sizeof(w) / sizeof(w[0]); i++)
			if (strcmp(argv[1], w[i].name) == 0)
				return w[i].fn();
	fprintf(stderr, "usage: alloc-bench server|prodcons|falseshare|churn|realloc|frag|packing|hotset|lifetimes|threads|spin|bufchurn\n");
	return 2;
}
