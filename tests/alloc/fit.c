/* The first-fit heap (allocator/fit.h) under LD_PRELOAD, one case a run (tests/alloc/fit.sh):
 *   layout   - 64 objects of 40 000 B written on their first 256 bytes and their last
 *              byte sit side by side (each starts where the one before ends, rounded
 *              to 256 B) and make at most 80 pages resident (spans of their own made
 *              128: a first and a last page each); so do 8 of 20 000 B, while 8 of
 *              16 000 B take slots of 16 384 B (a slab class)
 *   reuse    - a freed object's space serves the next objects of other sizes, lowest
 *              first: after frees of B (80 000 B) and D, malloc(40 000) and malloc(36 000)
 *              share B's place
 *   realloc  - a shrink keeps the place and frees the tail (the next object goes
 *              there), a growth over a free neighbour keeps the place, one that
 *              cannot moves with every byte, one past 128 KiB moves to a span
 *   calloc   - calloc(100 000) from a fresh chunk makes at most 2 of its pages
 *              resident and reads zero; written, freed, calloc'ed again: zero
 *   trim     - 64 objects of 64 KiB written, all but the first and last freed:
 *              malloc_trim returns 1 and gives their pages back (at most 64 of about
 *              1000 stay resident), then returns 0
 *   decay    - the same without trim, MEMREG_DECAY_MS=100: after 300 ms and one
 *              allocation, the pages are back
 *   threads  - once a thread has started, 40 000 B is a span of its own (page-
 *              aligned), and an object made before is freed from that thread
 *   fork     - a child of a process holding objects here allocates and frees here */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FAIL(...) do { fprintf(stderr, "fit: " __VA_ARGS__); fputc('\n', stderr); exit(1); } while (0)
#define GRANULE 256u
#define ROUND(n) (((n) + GRANULE - 1) / GRANULE * GRANULE)
#define SMALL_FIT 20000		/* over 16 KiB: here */
#define SLAB_SIZE 16000		/* 16 KiB and less: slabs, class 16384 */
#define SLAB_CLASS 16384

static void *volatile sink;

static int in_memreg(const void *p)
{
	int (*class_of)(const void *) = (int (*)(const void *))dlsym(RTLD_DEFAULT, "memreg_class_of");

	if (!class_of)
		FAIL("memreg_class_of not found: not run under libmemreg");
	return class_of(p) >= 0;
}

/* Pages of [from, to) resident. */
static unsigned resident(const void *from, const void *to)
{
	uintptr_t a = (uintptr_t)from & ~(uintptr_t)4095, b = ((uintptr_t)to + 4095) & ~(uintptr_t)4095;
	size_t n = (b - a) / 4096, k = 0;
	unsigned char *vec = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (vec == MAP_FAILED || mincore((void *)a, b - a, vec) != 0)
		FAIL("mincore(%p, %zu pages): %s", from, n, strerror(errno));
	for (size_t i = 0; i < n; i++)
		k += vec[i] & 1;
	munmap(vec, n);
	return (unsigned)k;
}

static void check_zero(const unsigned char *p, size_t n, const char *what)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			FAIL("%s: byte %zu of %zu is 0x%02x, not zero", what, i, n, p[i]);
}

static char *get(size_t n)
{
	char *p = malloc(n);

	if (!p || !in_memreg(p))
		FAIL("malloc(%zu): %p, not libmemreg's", n, (void *)p);
	return p;
}

static int mode_layout(void)
{
	enum { N = 64, SIZE = 40000 };
	char *p[N];
	unsigned res;

	for (int i = 0; i < N; i++) {
		p[i] = get(SIZE);
		memset(p[i], 1, 256);
		p[i][SIZE - 1] = 1;
		if (i && p[i] != p[i - 1] + ROUND(SIZE) && (uintptr_t)p[i] % (4u << 20) > 8192)
			FAIL("layout: object %d at %p, not after the one before (%p + %u)", i,
			     (void *)p[i], (void *)p[i - 1], ROUND(SIZE));
	}
	res = resident(p[0], p[N - 1] + SIZE);
	printf("layout: %d objects of %d B written at both ends: %u pages resident\n", N, SIZE, res);
	if (res > 80)
		FAIL("layout: %d objects of %d B written at both ends made %u pages resident (at most 80)",
		     N, SIZE, res);
	/* Over 16 KiB: here too (fit.h, MR_FIT_MIN), not 20160-byte slots of a slab;
	 * 16 KiB and less: slab classes (16 000 B in slots of 16 384). */
	for (int i = 0; i < 8; i++) {
		p[i] = get(SMALL_FIT);
		if (i && p[i] != p[i - 1] + ROUND(SMALL_FIT) && (uintptr_t)p[i] % (4u << 20) > 8192)
			FAIL("layout: object %d of %d B at %p, not after the one before (%p + %u)", i,
			     SMALL_FIT, (void *)p[i], (void *)p[i - 1], ROUND(SMALL_FIT));
	}
	for (int i = 0; i < 8; i++) {
		p[i] = get(SLAB_SIZE);
		if (i && p[i] != p[i - 1] + SLAB_CLASS && p[i] != p[i - 1] - SLAB_CLASS)
			FAIL("layout: object %d of %d B at %p, not in the slot beside the one before (%p)",
			     i, SLAB_SIZE, (void *)p[i], (void *)p[i - 1]);
	}
	printf("layout: objects of %d B side by side here, of %d B in slots of %d\n", SMALL_FIT,
	       SLAB_SIZE, SLAB_CLASS);
	return 0;
}

static int mode_reuse(void)
{
	char *a = get(80000), *b = get(80000), *c = get(80000), *d = get(80000), *e = get(80000);
	char *x, *y;

	free(d);
	free(b);
	x = get(40000);		/* lowest first: B's place, not D's */
	y = get(36000);		/* the rest of B's place */
	printf("reuse: B %p, D %p; malloc(40000) %p, malloc(36000) %p\n", (void *)b, (void *)d,
	       (void *)x, (void *)y);
	if (x != b)
		FAIL("reuse: malloc(40000) after frees of B (%p) and D (%p) gave %p", (void *)b,
		     (void *)d, (void *)x);
	if (y != b + ROUND(40000))
		FAIL("reuse: malloc(36000) gave %p, not the rest of B's place %p", (void *)y,
		     (void *)(b + ROUND(40000)));
	free(a);
	free(c);
	free(e);
	free(x);
	free(y);
	return 0;
}

static void check_bytes(const char *p, size_t n, char v, const char *what)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != v)
			FAIL("realloc: %s: byte %zu is 0x%02x, not 0x%02x", what, i, p[i], v);
}

static int mode_realloc(void)
{
	char *a = get(100000), *b = get(40000), *c = get(50000), *d = get(50000), *q, *n;

	memset(a, 0x11, 100000);
	q = realloc(a, 60000);			/* shrink: in place, the tail freed */
	n = get(36000);				/* goes into that tail */
	if (q != a || n != a + ROUND(60000))
		FAIL("realloc: shrink to 60000 gave %p (want %p), the next malloc(36000) %p (want %p)",
		     (void *)q, (void *)a, (void *)n, (void *)(a + ROUND(60000)));
	free(n);
	free(b);
	q = realloc(a, 128000);			/* over the tail and b's place */
	if (q != a)
		FAIL("realloc: growth over free neighbours moved %p to %p", (void *)a, (void *)q);
	check_bytes(q, 60000, 0x11, "growth in place");
	memset(c, 0x22, 50000);
	n = realloc(c, 100000);			/* d is in the way: it moves */
	if (n == c)
		FAIL("realloc: growth into a live neighbour kept the place %p", (void *)c);
	check_bytes(n, 50000, 0x22, "a move");
	memset(n, 0x33, 100000);
	c = realloc(n, 200000);			/* past 128 KiB: a span of its own */
	if (!c || (uintptr_t)c % 4096)
		FAIL("realloc to 200000 gave %p, not a span (page-aligned)", (void *)c);
	check_bytes(c, 100000, 0x33, "a move to a span");
	if (malloc_usable_size(d) != ROUND(50000))
		FAIL("realloc: usable size of a 50000-B object %zu (want %u)", malloc_usable_size(d),
		     ROUND(50000));
	free(q);
	free(c);
	free(d);
	printf("realloc: shrink and growth in place, moves with the bytes\n");
	return 0;
}

static int mode_calloc(void)
{
	size_t n = 100000;
	unsigned char *p = calloc(1, n), *q;
	unsigned res;

	if (!p || !in_memreg(p))
		FAIL("calloc(%zu): %p", n, (void *)p);
	res = resident(p, p + n);
	check_zero(p, n, "calloc from a fresh chunk");
	if (res > 2)
		FAIL("calloc(%zu) from a fresh chunk made %u pages resident (at most 2)", n, res);
	memset(p, 0xa5, n);
	free(p);
	q = calloc(1, n);
	if (q != p)
		FAIL("calloc(%zu) after free: %p, not the same place %p", n, (void *)q, (void *)p);
	check_zero(q, n, "calloc of written pages");
	printf("calloc: fresh: %u pages resident; written and freed: zero\n", res);
	free(q);
	return 0;
}

/* 64 objects of 64 KiB written whole, all but the first and the last freed: nearly
 * 4 MiB of pages wholly free in a chunk that still holds an object (so that only
 * its free pages can go back, not the chunk). Resident pages of that range. */
static unsigned fill_and_free(char **first, char **last)
{
	char *p[64];

	for (int i = 0; i < 64; i++) {
		p[i] = get(64 << 10);
		memset(p[i], 3, 64 << 10);
	}
	for (int i = 1; i < 63; i++)
		free(p[i]);
	*first = p[1];
	*last = p[62] + (64 << 10);
	return resident(*first, *last);
}

static int mode_trim(void)
{
	char *first, *last;
	unsigned before = fill_and_free(&first, &last), after;
	int r1 = malloc_trim(0), r2 = malloc_trim(0);

	after = resident(first, last);
	printf("trim: %u pages resident before, %u after; returned %d, then %d\n", before, after, r1, r2);
	if (before < 900 || after > 64 || r1 != 1 || r2 != 0)
		FAIL("trim: %u pages resident before (want 900 or more), %u after (at most 64); "
		     "malloc_trim returned %d then %d (want 1, 0)", before, after, r1, r2);
	return 0;
}

static int mode_decay(void)
{
	struct timespec ts = { 0, 300 * 1000000L };
	char *first, *last;
	unsigned before = fill_and_free(&first, &last), after;

	nanosleep(&ts, NULL);
	sink = get(40000);	/* an operation of the heap: the delay has passed */
	after = resident(first, last);
	printf("decay: %u pages resident before, %u after the delay\n", before, after);
	if (before < 900 || after > 64)
		FAIL("decay: %u pages resident before (want 900 or more), %u 300 ms after with a "
		     "delay of 100 ms (at most 64)", before, after);
	return 0;
}

static void *free_thread(void *p)
{
	free(p);
	return NULL;
}

static int mode_threads(void)
{
	char *before = get(40000), *after;
	pthread_t t;

	if ((uintptr_t)before % 4096 == 0 && (uintptr_t)before % (4u << 20) > 8192)
		FAIL("threads: 40000 B in a process of one thread at %p: page-aligned, a span?",
		     (void *)before);
	if (pthread_create(&t, NULL, free_thread, before) || pthread_join(t, NULL))
		FAIL("threads: the thread did not run");
	after = get(40000);
	if ((uintptr_t)after % 4096)
		FAIL("threads: 40000 B after a thread started at %p, not a span of its own", (void *)after);
	free(after);
	printf("threads: one thread: %p; after one started: a span at %p\n", (void *)before,
	       (void *)after);
	return 0;
}

static int mode_fork(void)
{
	char *p = get(50000), *q = get(70000);
	pid_t pid;
	int st;

	memset(p, 7, 50000);
	pid = fork();
	if (pid < 0)
		FAIL("fork: %s", strerror(errno));
	if (pid == 0) {
		char *r = get(60000);

		free(p);
		memset(r, 1, 60000);
		free(r);
		r = get(36000);
		_exit(r == p ? 0 : 3);	/* p's place, lowest first */
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		FAIL("fork: the child ended with status 0x%x", st);
	for (int i = 0; i < 50000; i++)
		if (p[i] != 7)
			FAIL("fork: byte %d of the parent's object changed", i);
	free(p);
	free(q);
	printf("fork: the child allocated and freed in the parent's chunks\n");
	return 0;
}

int main(int argc, char **argv)
{
	static const struct { const char *name; int (*fn)(void); } m[] = {
		{ "layout", mode_layout }, { "reuse", mode_reuse }, { "realloc", mode_realloc },
		{ "calloc", mode_calloc }, { "trim", mode_trim }, { "decay", mode_decay },
		{ "threads", mode_threads }, { "fork", mode_fork },
	};

	free(malloc(16));	/* the heap set up */
	for (unsigned i = 0; argc == 2 && i < sizeof(m) / sizeof(m[0]); i++)
		if (!strcmp(argv[1], m[i].name))
			return m[i].fn();
	fprintf(stderr, "usage: fit layout|reuse|realloc|calloc|trim|decay|threads|fork\n");
	return 2;
}
