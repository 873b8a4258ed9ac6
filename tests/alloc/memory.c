/* Memory programs for libmemreg, run under LD_PRELOAD by tests/alloc/memory.sh:
 * memory MODE. What goes back to the OS (free runs after the decay delay, malloc_trim),
 * what calloc leaves untouched, and mallinfo2/malloc_stats/malloc_info answering for
 * libmemreg's heap. Exit 0 on success, 1 with a message on the first failure. */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "tests/alloc/self-status.h"

#define FAIL(...) do { fprintf(stderr, "memory: " __VA_ARGS__); fputc('\n', stderr); exit(1); } while (0)
#define MIB (1024.0 * 1024.0)

/* Resident bytes of this process (statm's second field). */
static double rss_mib(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	unsigned long size, res;

	if (!f || fscanf(f, "%lu %lu", &size, &res) != 2)
		FAIL("cannot read /proc/self/statm");
	fclose(f);
	return (double)res * (double)sysconf(_SC_PAGESIZE) / MIB;
}

/* Resident anonymous bytes (statm's second field less its third, the file pages). */
static double anon_mib(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	unsigned long size, res, shared;

	if (!f || fscanf(f, "%lu %lu %lu", &size, &res, &shared) != 3)
		FAIL("cannot read /proc/self/statm");
	fclose(f);
	return (double)(res - shared) * (double)sysconf(_SC_PAGESIZE) / MIB;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static int in_memreg(const void *p)
{
	int (*class_of)(const void *) = (int (*)(const void *))dlsym(RTLD_DEFAULT, "memreg_class_of");

	if (!class_of)
		FAIL("memreg_class_of not found: not run under libmemreg");
	return class_of(p) >= 0;
}

/* 256 MiB of 64 KiB blocks, all written, 15 of 16 freed: 16 MiB stay live. */
#define FRAG_BLOCKS 4096
#define FRAG_BYTES (64u << 10)
static void *frag[FRAG_BLOCKS];

static void frag_make(void)
{
	for (int i = 0; i < FRAG_BLOCKS; i++) {
		frag[i] = malloc(FRAG_BYTES);
		if (!frag[i] || !in_memreg(frag[i]))
			FAIL("malloc(64 KiB) #%d: %p", i, frag[i]);
		memset(frag[i], 0x5a, FRAG_BYTES);
	}
	for (int i = 0; i < FRAG_BLOCKS; i++)
		if (i % 16) {
			free(frag[i]);
			frag[i] = NULL;
		}
}

static void frag_check(void)
{
	for (int i = 0; i < FRAG_BLOCKS; i += 16)
		for (size_t j = 0; j < FRAG_BYTES; j += 512)
			if (((unsigned char *)frag[i])[j] != 0x5a)
				FAIL("live block %d changed at byte %zu", i, j);
}

/* malloc_trim(0) gives the free runs back: resident near the 16 MiB live; it says 1
 * when it released memory, 0 when there was nothing left to release. */
static int mode_trim(void)
{
	double before, after;
	int r1, r2;

	frag_make();
	before = rss_mib();
	r1 = malloc_trim(0);
	after = rss_mib();
	r2 = malloc_trim(0);
	printf("trim: resident %.1f MiB before malloc_trim, %.1f MiB after; returned %d, then %d\n",
	       before, after, r1, r2);
	frag_check();
	if (after > 40)
		FAIL("after malloc_trim(0): %.1f MiB resident with 16 MiB live (want at most 40)", after);
	if (r1 != 1 || r2 != 0)
		FAIL("malloc_trim(0) returned %d then %d (want 1: released, then 0: nothing left)", r1, r2);
	return 0;
}

/* Without malloc_trim: the free runs go back by themselves after MEMREG_DECAY_MS
 * (checked on a page-heap operation, here one large malloc and free). */
static int mode_decay(void)
{
	double before, after;
	void *p;

	frag_make();
	before = rss_mib();
	sleep_ms(400);		/* MEMREG_DECAY_MS=100 in memory.sh */
	p = malloc(FRAG_BYTES);
	free(p);
	after = rss_mib();
	printf("decay: resident %.1f MiB right after the frees, %.1f MiB after the delay\n", before, after);
	frag_check();
	if (after > 40)
		FAIL("after the decay delay: %.1f MiB resident with 16 MiB live (want at most 40)", after);
	return 0;
}

/* The dirty share: with a delay that cannot pass (memory.sh: 10 minutes), 240 MiB of
 * free runs against 16 MiB live go back at the first free 10 ms later; with
 * MEMREG_DIRTY_PCT=0 they stay until the delay. */
static int mode_dirty(void)
{
	const char *pct = getenv("MEMREG_DIRTY_PCT");
	int off = pct && !strcmp(pct, "0");
	double before, after;
	void *p;

	frag_make();
	before = rss_mib();
	sleep_ms(20);
	p = malloc(FRAG_BYTES);
	free(p);
	after = rss_mib();
	printf("dirty share %s: resident %.1f MiB right after the frees, %.1f MiB 20 ms later\n",
	       off ? "off" : "on", before, after);
	frag_check();
	if (!off && after > 40)
		FAIL("dirty share: %.1f MiB resident with 16 MiB live, 240 MiB free for 20 ms "
		     "(want at most 40)", after);
	if (off && after < 200)
		FAIL("dirty share off: %.1f MiB resident, 240 MiB free for 20 ms with a 10 min "
		     "delay (want 200 or more: none given back)", after);
	return 0;
}

static void check_zero(const unsigned char *p, size_t n, const char *what)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			FAIL("%s: byte %zu of %zu is 0x%02x, not zero", what, i, n, p[i]);
}

/* calloc of fresh pages writes nothing (the kernel's zero pages stay unmapped), and
 * returns zeros. */
static int mode_calloc(void)
{
	size_t n = 48u << 20;
	double before, after;
	unsigned char *p;

	free(malloc(100));	/* the arena is set up */
	before = rss_mib();
	p = calloc(1, n);
	after = rss_mib();
	printf("calloc: calloc(48 MiB) made %.2f MiB resident\n", after - before);
	if (!p || !in_memreg(p))
		FAIL("calloc(48 MiB): %p", (void *)p);
	if (after - before > 2)
		FAIL("calloc(48 MiB) of fresh pages: %.2f MiB became resident (want at most 2)",
		     after - before);
	check_zero(p, n, "calloc(48 MiB)");
	free(p);
	return 0;
}

/* A block written, freed and purged: with MADV_DONTNEED (the default) calloc of the
 * same pages writes nothing again; with MADV_FREE (MEMREG_MADV_FREE=1) the pages keep
 * their data until the kernel needs them (no memory pressure here), so calloc must
 * clear them. Either way it returns zeros. */
static int mode_calloc_purged(void)
{
	size_t n = 8u << 20;
	double before, after, purged;
	unsigned char *p, *q;
	int lazy = getenv("MEMREG_MADV_FREE") != NULL;

	free(malloc(100));
	p = malloc(n);
	if (!p || !in_memreg(p))
		FAIL("malloc(8 MiB): %p", (void *)p);
	memset(p, 0xa5, n);
	before = rss_mib();
	free(p);
	sleep_ms(300);		/* MEMREG_DECAY_MS=100 */
	free(malloc(64u << 10));	/* a page-heap operation: the decay runs */
	purged = before - rss_mib();
	before = rss_mib();
	q = calloc(1, n);
	after = rss_mib();
	printf("calloc-purged (%s): the free gave back %.2f MiB; same pages %s, calloc(8 MiB) made "
	       "%.2f MiB resident\n", lazy ? "MADV_FREE" : "MADV_DONTNEED", purged,
	       q == p ? "yes" : "no", after - before);
	if (q != p)
		FAIL("calloc(8 MiB) after free(malloc(8 MiB)): %p, not the same pages %p", (void *)q,
		     (void *)p);
	check_zero(q, n, lazy ? "calloc after a MADV_FREE purge" : "calloc after a MADV_DONTNEED purge");
	if (!lazy && purged < 7)
		FAIL("free(8 MiB) and the decay delay gave back %.2f MiB (want at least 7)", purged);
	if (!lazy && after - before > 1)
		FAIL("calloc(8 MiB) of purged pages: %.2f MiB became resident (want at most 1)",
		     after - before);
	free(q);
	return 0;
}

/* The span cache (large.c): once a process has a second thread, a thread's freed
 * spans of up to 64 KiB wait for its next malloc of the same size, counted in use by
 * mallinfo2 (uordblks) while they do; with one thread none is kept. calloc of a
 * cached span clears it; malloc_trim and the thread's exit give the spans back to
 * the page heap. */
#define SPAN_BYTES 40000
#define SPAN_PAGE_BYTES 40960	/* 10 pages */

struct span_thread_counts {
	size_t before, held;
};

static void *span_thread(void *arg)
{
	struct span_thread_counts *c = arg;
	void *p[4];
	int i;

	free(malloc(16));	/* the thread's cache is made */
	c->before = mallinfo2().uordblks;
	for (i = 0; i < 4; i++) {
		p[i] = malloc(SPAN_BYTES);
		if (p[i])
			memset(p[i], 0x5a, SPAN_BYTES);
	}
	for (i = 0; i < 4; i++)
		free(p[i]);
	c->held = mallinfo2().uordblks;
	return NULL;
}

static void *no_op_thread(void *arg)
{
	return arg;
}

/* @single: the process never starts a thread, and no span may be kept. */
static int mode_span_cache(bool single)
{
	struct span_thread_counts c = { 0, 0 };
	size_t base, held, trimmed, joined;
	unsigned char *p, *q;
	pthread_t t;

	free(malloc(16));
	base = mallinfo2().uordblks;
	if (single) {
		/* Page-aligned: a span, not a first-fit object (with one thread, those
		 * are, allocator/fit.h). */
		free(aligned_alloc(4096, SPAN_BYTES));
		held = mallinfo2().uordblks - base;
		printf("span-cache-single: a freed span kept: %zu bytes in use\n", held);
		if (held)
			FAIL("a span freed by a process of one thread: uordblks grew by %zu (kept)",
			     held);
		return 0;
	}
	if (pthread_create(&t, NULL, no_op_thread, NULL) != 0 || pthread_join(t, NULL) != 0)
		FAIL("a thread did not run");
	base = mallinfo2().uordblks;
	/* Fresh pages: the page heap marks the span zeroed, which the cache must undo. */
	p = malloc(SPAN_BYTES);
	if (!p || !in_memreg(p))
		FAIL("malloc(%d): %p", SPAN_BYTES, (void *)p);
	memset(p, 0xa5, SPAN_BYTES);
	free(p);
	held = mallinfo2().uordblks;
	q = calloc(1, SPAN_BYTES);
	if (q != p)
		FAIL("calloc(%d) after free(malloc(%d)): %p, not the cached span %p", SPAN_BYTES,
		     SPAN_BYTES, (void *)q, (void *)p);
	check_zero(q, SPAN_BYTES, "calloc of a cached span");
	free(q);
	trimmed = mallinfo2().uordblks;
	malloc_trim(0);
	trimmed -= mallinfo2().uordblks;
	if (pthread_create(&t, NULL, span_thread, &c) != 0 || pthread_join(t, NULL) != 0)
		FAIL("the span thread did not run");
	joined = mallinfo2().uordblks;
	printf("span-cache: a freed span kept: %zd bytes in use; malloc_trim gave back %zu; a "
	       "thread kept %zd and its exit gave back %zd\n", (ssize_t)(held - base), trimmed,
	       (ssize_t)(c.held - c.before), (ssize_t)(c.held - joined));
	if (held - base != SPAN_PAGE_BYTES)
		FAIL("a freed span of 10 pages: uordblks grew by %zd, not %d (not kept)",
		     (ssize_t)(held - base), SPAN_PAGE_BYTES);
	if (trimmed != SPAN_PAGE_BYTES)
		FAIL("malloc_trim gave back %zu bytes of cached spans, not %d", trimmed,
		     SPAN_PAGE_BYTES);
	if (c.held - c.before != 4 * SPAN_PAGE_BYTES)
		FAIL("4 spans freed by a thread: uordblks grew by %zd, not %d (not kept)",
		     (ssize_t)(c.held - c.before), 4 * SPAN_PAGE_BYTES);
	/* The exit gives back the thread's empty slabs too. */
	if (c.held - joined < 4 * SPAN_PAGE_BYTES)
		FAIL("the thread's exit gave back %zd bytes, not its 4 cached spans (%d)",
		     (ssize_t)(c.held - joined), 4 * SPAN_PAGE_BYTES);
	return 0;
}

/* mallinfo2 and friends: printed for memory.sh to compare with alloc-stats. The
 * program holds 3 large blocks and a huge one until the file @go exists. */
static int mode_info(const char *go)
{
	void *a = malloc(1u << 20), *b = malloc(3u << 20), *c = malloc(100000);
	void *h = malloc(200u << 20);
	struct mallinfo2 mi;

	if (!a || !b || !c || !h || !in_memreg(h))
		FAIL("allocations failed");
	memset(h, 1, 4096);
	mi = mallinfo2();
	printf("arena %zu\nordblks %zu\nhblks %zu\nhblkhd %zu\nuordblks %zu\nfordblks %zu\nkeepcost %zu\n",
	       mi.arena, mi.ordblks, mi.hblks, mi.hblkhd, mi.uordblks, mi.fordblks, mi.keepcost);
	fflush(stdout);
	malloc_stats();
	if (malloc_info(0, stdout) != 0)
		FAIL("malloc_info(0, stdout) failed");
	errno = 0;
	if (malloc_info(1, stdout) != EINVAL)
		FAIL("malloc_info(1, stdout) must return EINVAL");
	/* Again, now that stdout has its buffer: nothing allocates from here on. */
	mi = mallinfo2();
	printf("final arena %zu hblks %zu hblkhd %zu uordblks %zu fordblks %zu\n", mi.arena,
	       mi.hblks, mi.hblkhd, mi.uordblks, mi.fordblks);
	fflush(stdout);
	while (access(go, F_OK) != 0)
		sleep_ms(50);
	free(a);
	free(b);
	free(c);
	free(h);
	return 0;
}

/* ---- prefault: large spans of a call site, and slabs of objects of a page or
 * more, that the program writes whole ----
 * Each site gets 64 KiB spans (16 pages), all fresh (none freed), and writes them
 * whole or only their first byte; the test reads with mincore whether a span is
 * wholly resident right after malloc returned it, before writing it. The rule
 * (allocator/large.c): the 5th span of a site whose 4 previous spans were written
 * whole is a probe (left to fault), then 15 are prefaulted, then a probe, ...; the
 * span after a probe found not whole stops the prefaulting. */
#define PF_BYTES (64u << 10)
#define PF_PAGES (PF_BYTES / 4096u)

/* Whether the pages of [p, p + PF_BYTES) are all resident: a span's 16, or the 17
 * of a first-fit object, which starts inside a page (allocator/fit.h). */
static int wholly_resident(void *p)
{
	uintptr_t from = (uintptr_t)p & ~(uintptr_t)4095;
	unsigned pages = (unsigned)(((uintptr_t)p + PF_BYTES - from + 4095) / 4096);
	unsigned char vec[PF_PAGES + 1];
	unsigned i, n = 0;

	if (mincore((void *)from, (size_t)pages * 4096, vec) != 0)
		FAIL("mincore(%p): %s", p, strerror(errno));
	for (i = 0; i < pages; i++)
		n += vec[i] & 1;
	return n == pages;
}

/* One call site each (no inlining, no tail call, no merging: noipa). */
__attribute__((noipa, optimize("no-optimize-sibling-calls"))) static void *pf_site_a(void)
{
	void *p = malloc(PF_BYTES);

	__asm__ volatile("# site a" ::: "memory");
	return p;
}

__attribute__((noipa, optimize("no-optimize-sibling-calls"))) static void *pf_site_b(void)
{
	void *p = malloc(PF_BYTES);

	__asm__ volatile("# site b" ::: "memory");
	return p;
}

/* @n spans from @site, written whole or first byte only: how many came resident. */
static int pf_run(void *(*site)(void), int n, int whole)
{
	int resident = 0;

	for (int i = 0; i < n; i++) {
		char *p = site();

		if (!p || !in_memreg(p))
			FAIL("malloc(64 KiB): %p", (void *)p);
		resident += wholly_resident(p);
		memset(p, 0x5a, whole ? PF_BYTES : 1);	/* kept: every span fresh */
	}
	return resident;
}

/* @n objects of @size bytes (a class of 4 KiB or more: slabs of 64 KiB), written
 * whole or first byte only: how many were wholly resident at malloc. */
static int pf_objects(size_t size, int n, int whole)
{
	int resident = 0;

	for (int i = 0; i < n; i++) {
		char *p = malloc(size);
		unsigned char vec[4];
		uintptr_t first = (uintptr_t)p & ~(uintptr_t)4095;
		size_t len = (uintptr_t)p + size - first, pages = (len + 4095) / 4096, k, in = 0;

		if (!p || !in_memreg(p))
			FAIL("malloc(%zu): %p", size, (void *)p);
		if (mincore((void *)first, len, vec) != 0)
			FAIL("mincore(%p): %s", (void *)p, strerror(errno));
		for (k = 0; k < pages; k++)
			in += vec[k] & 1;
		resident += in == pages;
		memset(p, 0x5a, whole ? size : 1);
	}
	return resident;
}

static int mode_prefault(void)
{
	int dense, until_probe, after, sparse;
	double rss0, rss1;
	void *probe = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (probe == MAP_FAILED)
		FAIL("mmap: %s", strerror(errno));
	if (madvise(probe, 4096, 23 /* MADV_POPULATE_WRITE */) != 0) {
		printf("skip: this kernel has no MADV_POPULATE_WRITE (Linux 5.14): %s\n", strerror(errno));
		return 77;
	}
	munmap(probe, 4096);
	/* Spans 1-4 learnt, 5 a probe, 6-20 prefaulted, 21 a probe, 22-36, 37, 38-40. */
	dense = pf_run(pf_site_a, 40, 1);
	/* Written in part from 41: 41-52 still prefaulted (the site is judged again at
	 * its next probe only), 53 the probe, found not whole at 54: no more. */
	until_probe = pf_run(pf_site_a, 12, 0);
	after = pf_run(pf_site_a, 32, 0);
	rss0 = rss_mib();
	sparse = pf_run(pf_site_b, 64, 0);	/* never learnt: 64 pages resident */
	rss1 = rss_mib();
	if (dense != 33 || until_probe != 12 || after != 0 || sparse != 0 || rss1 - rss0 > 1.0)
		FAIL("prefault: spans resident at malloc: %d of 40 written whole (want 33), "
		     "%d and %d of the next 12 and 32 written in part (want 12 and 0), %d of 64 "
		     "of a site never writing them whole (want 0; RSS +%.2f MiB, want at most 1)",
		     dense, until_probe, after, sparse, rss1 - rss0);
	/* Slabs of objects of a page or more (tcache.c): 6000 bytes in class 6144, 10 a
	 * slab; the first slab faults as usual, is found written whole (15 of 16 pages:
	 * the last is past the last object) when the bin needs a second: the second and
	 * third are prefaulted. 7000 bytes (class 7168) written in part: never. */
	dense = pf_objects(6000, 30, 1);
	/* Populated as they are handed out, not the slab whole: the fourth slab's
	 * first object covers its first 2 pages, and the other 14 stay untouched. */
	char *next = malloc(6000);
	unsigned char vec[16];
	int ahead = 0;

	if (!next || ((uintptr_t)next & 65535) != 0)
		FAIL("prefault: the 31st object of 6000 B at %p: not the start of a new slab", (void *)next);
	if (mincore(next, 65536, vec) != 0)
		FAIL("mincore(%p): %s", (void *)next, strerror(errno));
	for (int k = 2; k < 16; k++)
		ahead += vec[k] & 1;
	sparse = pf_objects(7000, 27, 0);
	if (dense != 20 || ahead != 0 || sparse != 0)
		FAIL("prefault: slab objects resident at malloc: %d of 30 written whole "
		     "(want 20), %d pages of the next slab past its one object (want 0), "
		     "%d of 27 written in part (want 0)", dense, ahead, sparse);
	printf("prefault: spans resident at malloc: 33 of 40 written whole, 12 and 0 of the "
	       "next 12 and 32 written in part, 0 of 64 of a site never writing them whole "
	       "(RSS +%.2f MiB); slab objects: 20 of 30 written whole, none of the next "
	       "slab's pages past its one object, 0 of 27 in part\n", rss1 - rss0);
	return 0;
}

/* ---- spare slabs (tcache.c) ----
 * Objects of 14000 bytes: class 14560, 9 to a slab of 128 KiB (16 KiB at most: over
 * that, a process of one thread puts them in the first-fit heap, fit.h). Ten make
 * two slabs, the first full (S1) and the second current; the first's nine freed
 * leave it empty: the bin keeps it as its spare. A slab of another class (10000
 * bytes, class 10080, also 128 KiB) then comes from elsewhere, not over S1 (the code
 * before gave S1's pages to it, and the bin's next slab came from pages never
 * touched); the bin's next slab is S1 again. The
 * second slab, emptied in turn, is the spare then, and malloc_trim gives it back,
 * purged. With @wait, the spare has waited past the decay
 * delay (memory.sh: 100 ms) when the other class asks for a slab: it is back in the
 * page heap, and that slab is S1 (lowest first). */
#define SP_SIZE 14000
#define SP_CLASS 14560
#define SP_SLAB (128u << 10)
#define SP_OTHER 10000

static int mode_spare(bool wait)
{
	char *a[10], *b[9], *s1, *q;	/* a[9]: the second slab's first object */
	unsigned char vec[SP_SLAB / 4096];
	int resident = 0, trimmed, i;

	for (i = 0; i < 10; i++)
		if (!(a[i] = malloc(SP_SIZE)) || !in_memreg(a[i]))
			FAIL("spare: malloc(%d) #%d: %p", SP_SIZE, i, (void *)a[i]);
		else
			memset(a[i], 0x5a, SP_SIZE);
	s1 = a[0];
	if (((uintptr_t)s1 & (SP_SLAB - 1)) != 0 || a[8] != s1 + 8 * SP_CLASS ||
	    (uintptr_t)(a[9] - s1) < SP_SLAB)
		FAIL("spare: objects of %d B at %p, %p, %p: not a slab of 9 then another",
		     SP_SIZE, (void *)s1, (void *)a[8], (void *)a[9]);
	for (i = 0; i < 9; i++)
		free(a[i]);
	if (wait)
		sleep_ms(300);
	q = malloc(SP_OTHER);
	memset(q, 0x5a, SP_OTHER);
	if (wait) {
		if (q != s1)
			FAIL("spare-decay: a slab of another class after the decay delay at %p, "
			     "not over the spare given back at %p", (void *)q, (void *)s1);
		printf("spare-decay: the spare given back after the delay: the next slab of "
		       "another class is over it\n");
		return 0;
	}
	if ((uintptr_t)(q - s1) < SP_SLAB)
		FAIL("spare: a slab of another class at %p, over the emptied slab at %p",
		     (void *)q, (void *)s1);
	for (i = 0; i < 9; i++)
		b[i] = malloc(SP_SIZE);	/* 8 fill the current slab, the ninth opens S1 again */
	if (b[8] != s1)
		FAIL("spare: the bin's next slab at %p, not its spare at %p", (void *)b[8], (void *)s1);
	for (i = 0; i < 8; i++)
		free(b[i]);
	free(a[9]);	/* the second slab's last: it is the spare now (S1 is current) */
	trimmed = malloc_trim(0);
	if (mincore(a[9], SP_SLAB, vec) != 0)
		FAIL("mincore(%p): %s", (void *)a[9], strerror(errno));
	for (i = 0; i < (int)(SP_SLAB / 4096); i++)
		resident += vec[i] & 1;
	if (trimmed != 1 || resident != 0)
		FAIL("spare: after malloc_trim (returned %d), %d pages of the spare resident "
		     "(want 1 and 0)", trimmed, resident);
	printf("spare: an emptied slab kept for its bin: another class's slab not over it, "
	       "the bin's next slab is it, malloc_trim gives it back\n");
	free(q);
	free(b[8]);
	return 0;
}

/* A short process's buffers (fixdep's pattern): 16 sizes of 4-16 KiB, one class each,
 * then 16 of 16.5-70 KB, each written whole and freed before the next. Each new slab
 * goes over the emptied slab before it (tcache.c, "medium slabs in a young
 * thread"), and the 16 take one another's place in a chunk of the first-fit heap
 * (fit.h): the process grows by about two buffers (the chunk's header, its
 * biggest buffer, the last slab emptied, which a chunk of 4 MiB cannot go over),
 * not by the sum of them. */
static int mode_medium(void)
{
	static const unsigned sizes[] = {
		4400, 8300, 5000, 16500, 5500, 9000, 6000, 18000, 6600, 9500, 7000, 20000,
		7500, 10500, 12000, 22000, 13000, 24000, 14000, 26000, 15000, 28000, 16000, 30000,
		40000, 70000, 35000, 60000, 45000, 50000, 36000, 65000,
	};
	unsigned n = sizeof(sizes) / sizeof(sizes[0]), sum = 0;
	double before, grew;

	free(malloc(100));	/* the heap set up first: its own pages are not counted */
	before = anon_mib();

	for (unsigned i = 0; i < n; i++) {
		char *p = malloc(sizes[i]);

		if (!p || !in_memreg(p))
			FAIL("medium: malloc(%u): %p", sizes[i], (void *)p);
		memset(p, 0x5a, sizes[i]);
		free(p);
		sum += sizes[i];
	}
	grew = anon_mib() - before;
	if (grew > 0.15)
		FAIL("medium: %u buffers of 4.4-70 KB (%.2f MiB), each freed before the next, "
		     "grew its anonymous resident memory by %.2f MiB (at most 0.15)", n, sum / MIB, grew);
	printf("medium: %u buffers of 4.4-70 KB (%.2f MiB) one after another: +%.2f MiB "
	       "anonymous resident\n", n, sum / MIB, grew);
	return 0;
}

/* Pages of [p, p + n) resident (mincore). */
static unsigned resident_pages(const void *p, size_t n)
{
	uintptr_t from = (uintptr_t)p & ~(uintptr_t)4095, to = ((uintptr_t)p + n + 4095) & ~(uintptr_t)4095;
	unsigned char vec[64];
	unsigned k = 0;

	if ((to - from) / 4096 > sizeof(vec))
		FAIL("resident_pages: %zu bytes is too many", n);
	if (mincore((void *)from, to - from, vec) != 0)
		FAIL("mincore(%p): %s", p, strerror(errno));
	for (size_t i = 0; i < (to - from) / 4096; i++)
		k += vec[i] & 1;
	return k;
}

/* calloc of an object over a page handed out for the first time from a fresh slab
 * writes only its link and key (tcache.h, mr_fresh_obj): its other pages stay
 * untouched. An object written, freed and calloc'ed again reads zero, whichever
 * call first took it out of a fresh slab (malloc here: its mark must not outlive
 * it), and so does a small one. */
static int mode_calloc_fresh(void)
{
	size_t n = 10000;	/* class 10080: 13 to a slab of 32 pages, 3-4 pages each */
	unsigned char *p, *q, *r, *s, *t;
	unsigned res;

	free(malloc(100));	/* the arena is set up */
	p = calloc(1, n);
	if (!p || !in_memreg(p))
		FAIL("calloc(%zu): %p", n, (void *)p);
	res = resident_pages(p, n);
	check_zero(p, n, "calloc of a fresh object");
	printf("calloc-fresh: calloc(%zu) of a fresh slab made %u of its %zu pages resident",
	       n, res, (n + 4095) / 4096 + 1);
	if (res > 1)
		FAIL("calloc(%zu) of a fresh slab's first object made %u pages resident (want 1)",
		     n, res);
	/* malloc takes the next fresh object, writes it, frees it: calloc gets it back. */
	q = malloc(n);
	memset(q, 0xa5, n);
	free(q);
	r = calloc(1, n);
	check_zero(r, n, r == q ? "calloc of a freed object malloc took fresh"
				: "calloc after a freed object");
	/* the same through calloc itself, and a small class */
	memset(r, 0xa5, n);
	free(r);
	check_zero(s = calloc(1, n), n, "calloc of a freed object calloc took fresh");
	t = malloc(48);
	memset(t, 0xa5, 48);
	free(t);
	check_zero(t = calloc(1, 48), 48, "calloc(48) of a freed object");
	printf("; freed ones read zero again\n");
	free(p);
	free(s);
	free(t);
	return 0;
}

/* A young cache's bin that runs dry takes a free object of a class above (up to four
 * times its size) whose bin has one, rather than make a slab; a class up to a page
 * as many as would fill a page, then it makes its own slab. Classes over a page do
 * each time (tcache.c, "a class up, while young"). */
static int mode_class_up(void)
{
	enum { NSIZES = 40, NBIG = 16, NSAME = 10 };
	unsigned char *a, *b, *objs[NSIZES], *big[NBIG], *same[NSAME];
	uintptr_t pages[NSIZES];
	unsigned npages = 0, up = 0, i;

	a = malloc(200);	/* class 208: a slab, its bin holds a page's objects */
	b = malloc(140);	/* class 144: its bin is empty */
	if (!a || !b || !in_memreg(a) || !in_memreg(b))
		FAIL("class-up: malloc: %p %p (MEMREG_START_HEAP=0?)", (void *)a, (void *)b);
	if (malloc_usable_size(b) != 208 || (uintptr_t)(b > a ? b - a : a - b) >= (64u << 10))
		FAIL("class-up: malloc(140) after malloc(200): usable %zu at %td bytes from it "
		     "(want 208, in its slab)", malloc_usable_size(b), b - a);
	/* one object each of 40 sizes, largest first: 14-15 pages (25 with each in a slab
	 * of its class) */
	for (i = 0; i < NSIZES; i++) {
		size_t size = 2048 - i * 48, j;
		uintptr_t pg;

		if (!(objs[i] = malloc(size)))
			FAIL("class-up: malloc(%zu)", size);
		memset(objs[i], 1, size);
		pg = (uintptr_t)objs[i] >> 12;
		for (j = 0; j < npages && pages[j] != pg; j++)
			;
		if (j == npages)
			pages[npages++] = pg;
	}
	if (npages > 18)
		FAIL("class-up: 40 objects of 176-2048 bytes, largest first, started on %u pages "
		     "(want at most 18)", npages);
	/* class 3072 (untouched above) takes 1 of class 4096's 12 free objects, a page's
	 * worth, then makes its slab */
	for (i = 0; i < NBIG; i++)
		if (!(big[i] = malloc(4000)))
			FAIL("class-up: malloc(4000) #%u", i);
	for (i = 4; i < NBIG; i++)
		free(big[i]);
	for (i = 0; i < NSAME; i++) {
		if (!(same[i] = malloc(3000)))
			FAIL("class-up: malloc(3000) #%u", i);
		up += malloc_usable_size(same[i]) != 3072;
	}
	if (up != 1 || malloc_usable_size(same[NSAME - 1]) != 3072)
		FAIL("class-up: %u of %u objects of 3000 bytes took a class above, the last %zu "
		     "bytes (want 1, and 3072)", up, NSAME,
		     malloc_usable_size(same[NSAME - 1]));
	printf("class-up: malloc(140) took 208 bytes, %u of %u objects of 3000 bytes a class "
	       "above; 40 sizes of 176-2048 bytes started on %u pages", up, NSAME, npages);
	/* a buffer over a page, freed before the next of a smaller class: its place is
	 * taken every time (no bound over a page) */
	for (i = 0; i < 40; i++) {
		unsigned char *buf = malloc(8000), *small;

		free(buf);
		small = malloc(5000);
		if (small != buf || malloc_usable_size(small) != 8192)
			FAIL("class-up: round %u: malloc(5000) after a free of malloc(8000) at %p: "
			     "%p, usable %zu (want the same place, 8192)", i, (void *)buf,
			     (void *)small, malloc_usable_size(small));
		free(small);
	}
	printf("; 40 buffers of 5000 bytes each took the 8000-byte one's place\n");
	for (i = 0; i < NSAME; i++)
		free(same[i]);
	for (i = 0; i < 4; i++)
		free(big[i]);
	for (i = 0; i < NSIZES; i++)
		free(objs[i]);
	free(a);
	free(b);
	return 0;
}

/* Not a test: the CPU cost of one 40 KiB malloc+free (ns), for MEMREG_EXPORT_STATS. */
static int mode_cost(void)
{
	struct timespec t0, t1;
	long n = 200000;
	volatile char *sink;

	for (long i = 0; i < 1000; i++)
		free(malloc(40u << 10));
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
	for (long i = 0; i < n; i++) {
		sink = malloc(40u << 10);
		free((void *)sink);
	}
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
	printf("cost: %.0f ns per 40 KiB malloc+free\n",
	       ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / (double)n);
	return 0;
}

/* Write and free a span of @mib MiB: freed bigger than any before, it goes back at
 * once (buddy.h, purge_new_max_min); smaller spans freed after it wait for the decay,
 * which is what the modes calling this test. */
static void free_biggest(size_t mib)
{
	char *p = malloc(mib << 20);

	if (!p || !in_memreg(p))
		FAIL("malloc(%zu MiB): %p", mib, (void *)p);
	memset(p, 7, mib << 20);
	free(p);
}

/* A big buffer written and freed, then three of a third of it written (as sort -S
 * does between its phases), with a small object made between (a stdio buffer: its
 * slab keeps the big buffer's region from becoming one free block again). They must
 * go where the buffer was: its pages are resident and stay so until the decay. The
 * buddy's way (a span on a boundary of its size rounded up to a power of two) put
 * two of the three on new pages: +33 MiB. Run with the decay and the dirty share
 * off, so that nothing is purged meanwhile. */
static int mode_refill(void)
{
	size_t big = (size_t)50 << 20, third = big / 3 - 4096;	/* 3 fit in its pages */
	char *b, *small, *p[3];
	double before, after;

	free_biggest(60);
	b = malloc(big);

	if (!b || !in_memreg(b))
		FAIL("malloc(50 MiB): %p", (void *)b);
	memset(b, 1, big);
	small = malloc(4000);
	if (!small)
		FAIL("malloc(4000) failed");
	memset(small, 2, 4000);
	free(b);
	before = rss_mib();
	for (int i = 0; i < 3; i++) {
		p[i] = malloc(third);
		if (!p[i] || !in_memreg(p[i]))
			FAIL("malloc(%zu) #%d: %p", third, i, (void *)p[i]);
		memset(p[i], 3, third);
	}
	after = rss_mib();
	if (after > before + 4)
		FAIL("three buffers of %.1f MiB after a freed 50 MiB one: resident %.1f MiB, "
		     "%.1f before them (at most 4 more)", third / MIB, after, before);
	printf("resident %.1f -> %.1f MiB\n", before, after);
	for (int i = 0; i < 3; i++)
		free(p[i]);
	free(small);
	return 0;
}

/* The decay without frees: a 40 MiB buffer written and freed (not the biggest yet,
 * so left to the decay), then only allocations, 150 ms apart, five of 2 MiB written.
 * The freed buffer must still go back after the delay, checked on the next
 * page-heap operation (an allocation). Checked only on frees, it stayed resident
 * to the end; with realloc's copies, a grown buffer's old copy did so too (+59 MiB
 * for a buffer grown to 195 MiB). */
static int mode_no_free(void)
{
	size_t big = (size_t)40 << 20, small = (size_t)2 << 20;
	double start, freed, after;
	char *b, *q[5];

	free_biggest(63);	/* so that the 40 MiB one waits for the decay */
	start = rss_mib();
	b = malloc(big);
	if (!b || !in_memreg(b))
		FAIL("malloc(40 MiB): %p", (void *)b);
	memset(b, 1, big);
	free(b);
	freed = rss_mib();
	for (int i = 0; i < 5; i++) {
		sleep_ms(150);	/* MEMREG_DECAY_MS=100 in memory.sh */
		q[i] = malloc(small);
		if (!q[i] || !in_memreg(q[i]))
			FAIL("malloc(2 MiB) #%d: %p", i, (void *)q[i]);
		memset(q[i], 2, small);
	}
	after = rss_mib();
	printf("no-free: resident %.1f MiB, %.1f after 40 MiB freed, %.1f after five "
	       "allocations of 2 MiB and no free\n", start, freed, after);
	if (freed < start + 36)
		FAIL("no-free: the 40 MiB went back at its free (%.1f -> %.1f MiB): the decay "
		     "is not what is tested", start, freed);
	if (after > start + 10 + 8)
		FAIL("no-free: %.1f MiB resident, %.1f before the 40 MiB buffer: it stayed "
		     "(want at most 10 MiB live + 8)", after, start);
	for (int i = 0; i < 5; i++)
		free(q[i]);
	return 0;
}

/* A span freed bigger than every one before goes back at its free, as glibc unmaps
 * a chunk above its mmap threshold (a dict's or vector's old table, freed as it
 * grows, and then no page-heap operation for the decay to run on); one of the same
 * size freed again waits for the decay (it is likely used again). Run with the decay
 * and the dirty share off, so that nothing else purges. */
static int mode_new_max(void)
{
	size_t n = (size_t)40 << 20;
	double before, after[3];

	before = rss_mib();
	for (int i = 0; i < 3; i++) {
		size_t sz = i < 2 ? n : n + (8u << 20);
		char *p = malloc(sz);

		if (!p || !in_memreg(p))
			FAIL("malloc(%zu): %p", sz, (void *)p);
		memset(p, 1, sz);
		free(p);
		after[i] = rss_mib();
	}
	printf("new-max: resident %.1f MiB, after 40 MiB freed %.1f, 40 MiB again %.1f, "
	       "48 MiB %.1f\n", before, after[0], after[1], after[2]);
	if (after[0] > before + 4)
		FAIL("new-max: 40 MiB freed, the biggest yet: %.1f MiB resident, %.1f before "
		     "(at most 4 more)", after[0], before);
	if (after[1] < before + 36)
		FAIL("new-max: 40 MiB freed again: %.1f MiB resident, %.1f before (want the "
		     "40 MiB kept for the decay)", after[1], before);
	if (after[2] > before + 4)
		FAIL("new-max: 48 MiB freed, the biggest yet: %.1f MiB resident, %.1f before "
		     "(at most 4 more: the 40 MiB reused by it, the rest purged)", after[2], before);
	return 0;
}

/* Peak resident size of this process (VmHWM), MiB. */
static double hwm_mib(void)
{
	long kib = self_peak_kib();

	if (kib < 0)
		FAIL("no VmHWM in /proc/self/status");
	return kib / 1024.0;
}

/* realloc that must move a big span (40 MiB to 80 MiB: it outgrows its region) moves
 * its pages rather than copying them, as glibc's mremap does for an mmapped chunk:
 * the peak does not hold both copies (before: +40 MiB), and every byte arrives. Run
 * with MEMREG_NUMA=0 (with NUMA regions the pages are copied, to land on the new
 * span's node). */
static int mode_realloc_move(void)
{
	size_t n = (size_t)40 << 20, m = (size_t)80 << 20;
	unsigned char *p = malloc(n), *q;
	double before, after;

	if (!p || !in_memreg(p))
		FAIL("malloc(40 MiB): %p", (void *)p);
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(i * 7 + (i >> 12));
	before = hwm_mib();
	q = realloc(p, m);
	after = hwm_mib();
	if (!q || !in_memreg(q))
		FAIL("realloc(40 -> 80 MiB): %p", (void *)q);
	if (q == p)
		FAIL("realloc(40 -> 80 MiB) grew in place: nothing moved, nothing tested");
	for (size_t i = 0; i < n; i++)
		if (q[i] != (unsigned char)(i * 7 + (i >> 12)))
			FAIL("realloc move: byte %zu is 0x%02x, not 0x%02x", i, q[i],
			     (unsigned char)(i * 7 + (i >> 12)));
	memset(q + n, 0x33, m - n);
	printf("realloc-move: peak %.1f MiB before, %.1f after moving 40 MiB\n", before, after);
	if (after > before + 8)
		FAIL("realloc move: peak %.1f MiB after, %.1f before: both copies were resident "
		     "(at most 8 MiB more)", after, before);
	free(q);
	return 0;
}

/* The program's own mappings after libmemreg's set-up keep their alignment: mmap
 * hands out addresses top-down, right below the lowest mapping, so a reservation
 * whose bottom is a page off a boundary put every later one a page off too (the
 * descriptors' 3 GiB + 4 KiB: CPython's 1 MiB arenas then lost a 16 KiB pool each).
 * 64 mappings of 1 MiB, kept: at least 48 must be 1 MiB-aligned (a few may land in
 * holes above the arena that other mappings left; before: none or few). */
static int mode_layout(void)
{
	void *p = malloc(16);	/* the arena is reserved by now */
	int i, aligned = 0;

	if (!p)
		return 1;
	for (i = 0; i < 64; i++) {
		char *m = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (m == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
		aligned += ((uintptr_t)m & ((1 << 20) - 1)) == 0;
	}
	printf("%d of 64 mappings of 1 MiB made after the set-up 1 MiB-aligned\n", aligned);
	free(p);
	return aligned >= 48 ? 0 : 1;
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(m, "trim"))
		return mode_trim();
	if (!strcmp(m, "decay"))
		return mode_decay();
	if (!strcmp(m, "dirty"))
		return mode_dirty();
	if (!strcmp(m, "calloc"))
		return mode_calloc();
	if (!strcmp(m, "calloc-purged"))
		return mode_calloc_purged();
	if (!strcmp(m, "info") && argc > 2)
		return mode_info(argv[2]);
	if (!strcmp(m, "cost"))
		return mode_cost();
	if (!strcmp(m, "prefault"))
		return mode_prefault();
	if (!strcmp(m, "refill"))
		return mode_refill();
	if (!strcmp(m, "no-free"))
		return mode_no_free();
	if (!strcmp(m, "new-max"))
		return mode_new_max();
	if (!strcmp(m, "realloc-move"))
		return mode_realloc_move();
	if (!strcmp(m, "layout"))
		return mode_layout();
	if (!strcmp(m, "span-cache"))
		return mode_span_cache(false);
	if (!strcmp(m, "span-cache-single"))
		return mode_span_cache(true);
	if (!strcmp(m, "medium"))
		return mode_medium();
	if (!strcmp(m, "calloc-fresh"))
		return mode_calloc_fresh();
	if (!strcmp(m, "class-up"))
		return mode_class_up();
	if (!strcmp(m, "spare"))
		return mode_spare(false);
	if (!strcmp(m, "spare-decay"))
		return mode_spare(true);
	fprintf(stderr, "usage: memory trim|decay|calloc|calloc-purged|info GOFILE|cost|prefault|refill|no-free|new-max|realloc-move|layout|span-cache|span-cache-single|spare|spare-decay|medium|calloc-fresh|class-up\n");
	return 2;
}
