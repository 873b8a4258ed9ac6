/* The start-up heap under LD_PRELOAD=libmemreg.so (tests/alloc/start-heap.sh): a
 * process's first objects lie in the library's own BSS and the arena is not
 * reserved; frees, sizes, realloc and calloc there keep glibc's rules; freed space is
 * reused lowest first, and purged once the heap has closed; double and interior
 * frees abort; once the heap is full the arena serves; threads and fork.
 * Modes: short, fill, reuse, buffers, threads, fork, abort-child WHAT, off. */
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
#include <unistd.h>

#define FAIL(...)                                                                  \
	do {                                                                       \
		fprintf(stderr, "FAIL: " __VA_ARGS__);                             \
		fputc('\n', stderr);                                               \
		exit(1);                                                           \
	} while (0)

/* From /proc/self/maps: where @p lies (1 in libmemreg.so's image or the anonymous
 * mapping right after it, its BSS; 2 in another anonymous mapping, the arena, not
 * glibc's [heap]; 0 elsewhere), and whether any mapping is 1 GiB or more (the
 * arena's reservation). stdio reads into a static buffer: fopen's FILE is the only
 * allocation. */
static char maps[1 << 16];

static int scan_maps(const void *p, int *reserved)
{
	FILE *f = fopen("/proc/self/maps", "r");
	uintptr_t a = (uintptr_t)p, lib_end = 0;
	unsigned long lo, hi;
	char line[512];
	int r = 0;

	if (!f)
		FAIL("cannot open /proc/self/maps");
	setvbuf(f, maps, _IOFBF, sizeof(maps));
	*reserved = 0;
	while (fgets(line, sizeof(line), f)) {
		int mine = strstr(line, "libmemreg.so") != NULL;

		if (sscanf(line, "%lx-%lx", &lo, &hi) != 2)
			continue;
		if (a >= lo && a < hi) {
			if (mine || (lo == lib_end && !strchr(line, '/')))
				r = 1;
			else if (!strchr(line, '/') && !strchr(line, '['))
				r = 2;
		}
		if (hi - lo >= (1ul << 30))
			*reserved = 1;
		if (mine)
			lib_end = hi;
	}
	fclose(f);
	return r;
}

static int where(const void *p)
{
	int reserved;

	return scan_maps(p, &reserved);
}

static int arena_reserved(void)
{
	int reserved;

	scan_maps(NULL, &reserved);
	return reserved;
}

static void fill(unsigned char *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(seed * 131 + i);
}

static void check(const unsigned char *p, size_t n, unsigned seed, const char *what)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != (unsigned char)(seed * 131 + i))
			FAIL("%s: byte %zu of %zu changed", what, i, n);
}

#define NOBJ 100

/* A short process: 100 objects of 1..200 bytes, all in the start-up heap, no arena;
 * each on cache lines of its own (usable sizes the 64-byte rounding, so that objects
 * handed to different threads never share a line); memreg_class_of says normal (1);
 * the top object's space is reused after its free, and calloc there reads zero;
 * realloc grows the top in place and moves the others with their bytes; mallinfo2
 * counts the live bytes. */
static int mode_short(void)
{
	unsigned char *o[NOBJ], *q, *r;
	size_t sz[NOBJ], live = 0;
	struct mallinfo2 mi;
	int (*class_of)(const void *);

	for (int i = 0; i < NOBJ; i++) {
		sz[i] = 1 + (size_t)(i * 37) % 200;
		o[i] = malloc(sz[i]);
		if (!o[i])
			FAIL("malloc(%zu) failed", sz[i]);
		fill(o[i], sz[i], (unsigned)i);
		live += (sz[i] + 63) & ~(size_t)63;
	}
	for (int i = 0; i < NOBJ; i++) {
		if (where(o[i]) != 1)
			FAIL("object %d (%zu bytes) at %p is not in libmemreg's start-up heap", i,
			     sz[i], (void *)o[i]);
		if ((uintptr_t)o[i] % 64)
			FAIL("object %d at %p does not start a cache line", i, (void *)o[i]);
		if (malloc_usable_size(o[i]) != ((sz[i] + 63) & ~(size_t)63))
			FAIL("object %d: usable size %zu for %zu bytes", i, malloc_usable_size(o[i]),
			     sz[i]);
	}
	if (arena_reserved())
		FAIL("the arena was reserved by %d small objects", NOBJ);
	class_of = (int (*)(const void *))dlsym(RTLD_DEFAULT, "memreg_class_of");
	if (!class_of)
		FAIL("memreg_class_of not found: not run under libmemreg");
	if (class_of(o[5]) != 1 || class_of(o[5] + 16) != -EINVAL)
		FAIL("memreg_class_of: %d for a start-up heap object (want 1, normal), %d inside "
		     "it (want -EINVAL)", class_of(o[5]), class_of(o[5] + 16));
	/* The top one back, then the same size: the same place, and calloc reads 0. */
	q = o[NOBJ - 1];
	free(q);
	o[NOBJ - 1] = calloc(1, sz[NOBJ - 1]);
	if (o[NOBJ - 1] != q)
		FAIL("the top object's space was not reused: %p, then %p", (void *)q,
		     (void *)o[NOBJ - 1]);
	for (size_t i = 0; i < sz[NOBJ - 1]; i++)
		if (q[i])
			FAIL("calloc over a freed object: byte %zu is %u", i, q[i]);
	fill(q, sz[NOBJ - 1], NOBJ - 1);
	/* The top grows in place; an object below moves, its bytes with it. */
	r = realloc(q, 1000);
	if (r != q)
		FAIL("realloc of the top object to 1000 bytes moved it");
	check(r, sz[NOBJ - 1], NOBJ - 1, "realloc in place");
	o[NOBJ - 1] = r;
	live += 1024 - ((sz[NOBJ - 1] + 63) & ~(size_t)63);
	sz[NOBJ - 1] = 1000;
	fill(r, 1000, NOBJ - 1);
	r = realloc(o[10], 3000);
	if (!r || r == o[10])
		FAIL("realloc of an object below the top to 3000 bytes stayed at %p", (void *)r);
	check(r, sz[10], 10, "realloc moved");
	live += (size_t)3008 - ((sz[10] + 63) & ~(size_t)63);
	o[10] = r;
	sz[10] = 3000;
	fill(r, 3000, 10);
	mi = mallinfo2();
	if (mi.uordblks < live)
		FAIL("mallinfo2 uordblks %zu, below the %zu bytes live in the start-up heap",
		     mi.uordblks, live);
	for (int i = 0; i < NOBJ; i++)
		check(o[i], sz[i], (unsigned)i, "at the end");
	for (int i = 0; i < NOBJ; i++)
		free(o[i]);
	return 0;
}

/* Past the start-up heap: 4000 objects of 100 bytes (500 KiB), then the arena; every
 * object keeps its bytes, and each frees as its own. */
static int mode_fill(void)
{
	enum { N = 4000 };
	static unsigned char *o[N];
	int first_arena = -1;

	for (int i = 0; i < N; i++) {
		o[i] = malloc(100);
		if (!o[i])
			FAIL("malloc(100) number %d failed", i);
		fill(o[i], 100, (unsigned)i);
	}
	for (int i = 0; i < N; i++) {
		int w = where(o[i]);

		if (i < 100 && w != 1)
			FAIL("object %d is not in the start-up heap", i);
		if (w == 2 && first_arena < 0)
			first_arena = i;
		if (first_arena >= 0 && w != 2)
			FAIL("object %d came from the start-up heap after object %d from the arena",
			     i, first_arena);
		if (i > 5 * N / 6 && w != 2)
			FAIL("object %d (of 100 bytes, %d KiB in) is not in the arena", i,
			     i * 128 / 1024);
	}
	if (!arena_reserved())
		FAIL("no arena reserved after %d objects of 100 bytes", N);
	for (int i = 0; i < N; i++)
		check(o[i], 100, (unsigned)i, "fill");
	for (int i = 0; i < N; i += 2)
		free(o[i]);
	for (int i = 1; i < N; i += 2)
		check(o[i], 100, (unsigned)i, "fill after frees");
	printf("start-up heap: objects 0..%d, the arena from %d\n", first_arena - 1, first_arena);
	return 0;
}

/* Pages of [@p, @p + @len) resident (mincore), of the whole pages inside it. */
static size_t resident_pages(const void *p, size_t len, size_t *whole)
{
	uintptr_t a = ((uintptr_t)p + 4095) & ~(uintptr_t)4095;
	uintptr_t e = ((uintptr_t)p + len) & ~(uintptr_t)4095;
	unsigned char v[64];
	size_t n = 0;

	*whole = e > a ? (e - a) / 4096 : 0;
	if (*whole > sizeof(v))
		FAIL("resident_pages: %zu pages", *whole);
	if (*whole && mincore((void *)a, e - a, v))
		FAIL("mincore");
	for (size_t i = 0; i < *whole; i++)
		n += v[i] & 1;
	return n;
}

/* Freed space reused lowest first, as glibc's heap does: a freed object's place
 * goes to the next that fits, an object grows in place over freed space after it
 * and a shrunk one leaves its tail to the next; and a program that reads 150 files
 * of 4-70 KiB (10 MiB) into buffers it frees at once, keeping a small object from
 * each, stays in the start-up heap without the arena (the kernel build's fixdep;
 * taken back from the top only, its small objects pinned every buffer's space).
 * A buffer that does not fit goes to the arena and the heap stays open; a freed
 * object's pages stay resident until malloc_trim (or the decay delay), which leaves
 * a live one's. */
static int mode_reuse(void)
{
	enum { BUFS = 150 };
	static unsigned char *keep[BUFS];
	unsigned char *a = malloc(1000), *b = malloc(1000), *c = malloc(1000), *d, *x, *y;
	size_t whole, res;

	if (where(a) != 1 || where(c) != 1)
		FAIL("the first objects are not in the start-up heap");
	free(a);
	d = malloc(500);
	if (d != a)
		FAIL("malloc(500) after freeing the lowest object at %p returned %p", (void *)a,
		     (void *)d);
	free(c);
	x = realloc(b, 1900);	/* over c's freed space */
	if (x != b)
		FAIL("realloc over the freed object after it moved it: %p, then %p", (void *)b,
		     (void *)x);
	/* A shrink leaves its granules free for the next. */
	y = malloc(4000);
	fill(y, 100, 7);
	if (realloc(y, 100) != y)
		FAIL("realloc of an object to fewer bytes moved it");
	check(y, 100, 7, "realloc shrunk");
	d = malloc(2000);	/* a buffer, as y was: the buffers' part of the heap */
	if (d != y + 128)
		FAIL("malloc(2000) after shrinking %p to 100 bytes returned %p, not the freed tail",
		     (void *)y, (void *)d);
	free(d);
	free(y);
	for (int i = 0; i < BUFS; i++) {
		size_t n = 4096 + (size_t)(i * 7919) % (66 * 1024);
		unsigned char *buf = malloc(n);

		if (!buf)
			FAIL("malloc(%zu) failed", n);
		fill(buf, n, (unsigned)i);
		keep[i] = malloc(16 + (size_t)i % 48);
		if (!keep[i])
			FAIL("malloc of a small object failed");
		fill(keep[i], 16, (unsigned)i);
		check(buf, n, (unsigned)i, "buffer");
		if (where(buf) != 1 || where(keep[i]) != 1)
			FAIL("buffer %d of %zu bytes (%p) or the small object after it (%p) is not "
			     "in the start-up heap", i, n, (void *)buf, (void *)keep[i]);
		free(buf);
	}
	if (arena_reserved())
		FAIL("the arena was reserved by buffers read one at a time");
	/* A buffer freed before the close: its whole pages stay resident until then. */
	x = malloc(40000);
	y = malloc(40000);
	if (where(x) != 1 || where(y) != 1)
		FAIL("two 40000-byte objects are not in the start-up heap");
	memset(x, 1, 40000);
	memset(y, 2, 40000);
	free(x);
	res = resident_pages(x, 40000, &whole);
	if (res != whole)
		FAIL("%zu of the %zu whole pages of a freed object resident before the close",
		     res, whole);
	/* Objects of 120 KiB until one does not fit: it comes from the arena, and the
	 * heap stays open (the next small object is its). */
	for (int i = 0;; i++) {
		unsigned char *z = malloc(120 * 1024);

		if (!z || i > 40)
			FAIL("no 120 KiB object came from the arena (4 MiB heap)");
		if (where(z) == 2)
			break;
	}
	res = resident_pages(x, 40000, &whole);
	if (res != whole)
		FAIL("%zu of the %zu whole pages of a freed object resident while the heap is "
		     "open, before the decay delay", res, whole);
	d = malloc(500);
	if (where(d) != 1)
		FAIL("a small object after a buffer that did not fit is not in the start-up heap");
	/* malloc_trim purges the freed object's pages, not the live one's. */
	if (malloc_trim(0) != 1)
		FAIL("malloc_trim returned 0 with a freed object's pages resident");
	res = resident_pages(x, 40000, &whole);
	if (res)
		FAIL("%zu of the %zu whole pages of a freed object resident after malloc_trim",
		     res, whole);
	res = resident_pages(y, 40000, &whole);
	if (res != whole)
		FAIL("a live object's pages purged by malloc_trim: %zu of %zu resident", res, whole);
	free(y);
	for (int i = 0; i < BUFS; i++)
		check(keep[i], 16, (unsigned)i, "small objects at the end");
	printf("start-up heap: %d buffers of 4-70 KiB read one at a time, no arena\n", BUFS);
	return 0;
}

/* Among the first 2048 allocations a buffer under 4 KiB lies beside the small
 * objects, a larger one above their 256 KiB; after them the small objects' pages go
 * as they empty, and while the process has one thread the heap takes buffers (1 KiB
 * to 128 KiB), above only, and no small object: a freed buffer's place is the next
 * one's whatever its size; calloc reads zero over a freed buffer and over fresh
 * pages; a buffer that does not fit goes to the arena and the heap stays open for
 * the next once a free makes room; malloc_trim purges a free page below a live
 * buffer and says so; pages free for the decay delay (start-heap.sh sets 20 ms) are
 * purged at a look made after it (one in 64 allocations and frees); the first buffer
 * asked for while a second thread runs comes from the arena (the heap closed), and a
 * start-up heap buffer freed after is purged. */
static int pipefd[2];

static void *waiter(void *arg)
{
	char c;

	(void)arg;
	if (read(pipefd[0], &c, 1) != 1)
		FAIL("waiter: read");
	return NULL;
}

static int mode_buffers(void)
{
	enum { SMALL = 2100, BIG = 100 * 1024, NBIG = 48 };
	static unsigned char *small[SMALL], *big[NBIG];
	unsigned char *a, *b, *c, *d;
	size_t whole, res;
	pthread_t t;
	int n, first_arena = -1;

	/* Among the first 2048, a buffer under 4 KiB beside the small objects, a larger
	 * one above their 256 KiB. */
	a = malloc(16);
	b = malloc(2000);
	if (where(a) != 1 || b != a + 64)
		FAIL("a small object at %p (%d) and a buffer made next at %p: want the buffer "
		     "right after it in the start-up heap", (void *)a, where(a), (void *)b);
	c = malloc(5000);
	if (where(c) != 1 || c < a + 200 * 1024)
		FAIL("a 5000-byte buffer among the first 2048 allocations at %p (%d), %td bytes "
		     "over a small object: want the start-up heap, 256 KiB up", (void *)c,
		     where(c), c - a);
	free(c);
	free(b);
	for (int i = 0; i < SMALL; i++)
		if (!(small[i] = malloc(32)))
			FAIL("malloc(32) failed");
	if (where(small[SMALL - 1]) != 2)
		FAIL("a small object after 2048 allocations is not in the arena");
	/* Small objects freed after their time: their pages go at once, as they empty
	 * (128 of them in a row cover a page at least). */
	for (int i = 0; i < 128; i++)
		memset(small[i], 7, 32);
	for (int i = 0; i < 128; i++)
		free(small[i]);
	res = resident_pages(small[0], 128 * 64, &whole);
	if (!whole || res)
		FAIL("%zu of the %zu whole pages of 128 small objects freed after 2048 "
		     "allocations resident", res, whole);
	/* After them, buffers above the small objects' 256 KiB: neither takes the
	 * other's pages. */
	b = malloc(2000);
	if (where(b) != 1 || b < small[0] + 200 * 1024)
		FAIL("a buffer after 2048 allocations at %p (%d), %td bytes over the first small "
		     "object: want the start-up heap, 256 KiB up", (void *)b, where(b),
		     b - small[0]);
	free(b);
	a = malloc(5000);
	if (where(a) != 1)
		FAIL("a 5000-byte buffer after 2048 allocations is not in the start-up heap");
	fill(a, 5000, 1);
	b = malloc(1024);
	c = malloc(1023);
	if (where(b) != 1 || where(c) != 2)
		FAIL("1024 bytes (%d) and 1023 bytes (%d): want the start-up heap (1) and the "
		     "arena (2)", where(b), where(c));
	free(c);
	free(a);
	d = calloc(1, 3000);
	if (d != a)
		FAIL("calloc(3000) after freeing a 5000-byte buffer at %p returned %p", (void *)a,
		     (void *)d);
	for (int i = 0; i < 3000; i++)
		if (d[i])
			FAIL("calloc over a freed buffer: byte %d is %u", i, d[i]);
	/* Buffers until one does not fit: it comes from the arena. */
	for (n = 0; n < NBIG; n++) {
		big[n] = calloc(1, BIG);
		if (!big[n])
			FAIL("calloc(%d) failed", BIG);
		for (int i = 0; i < BIG; i += 997)
			if (big[n][i])
				FAIL("calloc(%d) number %d: byte %d is %u", BIG, n, i, big[n][i]);
		if (where(big[n]) == 2) {
			first_arena = n;
			break;
		}
		if (where(big[n]) != 1)
			FAIL("buffer %d of %d bytes is neither in the start-up heap nor in the arena",
			     n, BIG);
		memset(big[n], 5, BIG);
	}
	if (first_arena < 30)
		FAIL("the %dth buffer of %d bytes came from the arena: the heap is not 4 MiB",
		     first_arena, BIG);
	/* A free makes room: the next buffer is the start-up heap's again, in its place. */
	free(big[first_arena - 5]);
	c = malloc(BIG);	/* as large as the one that did not fit */
	if (c != big[first_arena - 5])
		FAIL("after a free, a buffer went to %p, not the freed place %p", (void *)c,
		     (void *)big[first_arena - 5]);
	big[first_arena - 5] = c;
	/* malloc_trim: a freed buffer below live ones has its pages purged, and says so. */
	free(big[3]);
	res = resident_pages(big[3], BIG, &whole);
	if (res != whole)
		FAIL("%zu of the %zu whole pages of a buffer just freed resident", res, whole);
	if (malloc_trim(0) != 1)
		FAIL("malloc_trim returned 0 with a freed buffer's pages resident");
	res = resident_pages(big[3], BIG, &whole);
	if (res)
		FAIL("%zu of the %zu whole pages of a freed buffer resident after malloc_trim",
		     res, whole);
	/* Decay: freed buffers stay resident for the delay, then go at the next look. */
	for (int i = first_arena - 1; i >= first_arena - 4; i--)
		free(big[i]);
	res = resident_pages(big[first_arena - 3], BIG, &whole);
	if (res != whole)
		FAIL("%zu of the %zu whole pages of a buffer just freed resident", res, whole);
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 130; i++)
			free(malloc(2000));
		usleep(50 * 1000);
	}
	res = resident_pages(big[first_arena - 3], BIG, &whole);
	if (res)
		FAIL("%zu of the %zu whole pages of a buffer freed past the decay delay "
		     "resident", res, whole);
	free(big[first_arena]);
	/* A second thread: the next buffer is the arena's, and the heap purges at frees. */
	if (pipe(pipefd) || pthread_create(&t, NULL, waiter, NULL))
		FAIL("pipe or pthread_create");
	a = malloc(5000);
	if (where(a) != 2)
		FAIL("a buffer asked for while a second thread runs is not in the arena");
	free(big[10]);
	res = resident_pages(big[10], BIG, &whole);
	if (res)
		FAIL("%zu of the %zu whole pages of a buffer freed after the close resident", res,
		     whole);
	if (write(pipefd[1], "x", 1) != 1 || pthread_join(t, NULL))
		FAIL("write or pthread_join");
	for (int i = 0; i < first_arena - 5; i++)
		if (i != 3 && i != 10)
			for (int k = 0; k < BIG; k += 4093)
				if (big[i][k] != 5)
					FAIL("buffer %d: byte %d changed", i, k);
	printf("buffers: %d of %d KiB in the start-up heap, then the arena\n", first_arena,
	       BIG / 1024);
	return 0;
}

/* Threads that start before any allocation of theirs, each allocating, freeing and
 * reallocating objects of 1..300 bytes across the start-up heap's end. */
#define THREADS 4
#define PER 600

static void *worker(void *arg)
{
	unsigned id = (unsigned)(uintptr_t)arg, seed = id * 7919 + 1;
	unsigned char *o[PER];
	size_t sz[PER];

	for (int i = 0; i < PER; i++) {
		seed = seed * 1103515245 + 12345;
		sz[i] = 1 + (seed >> 8) % 300;
		o[i] = malloc(sz[i]);
		if (!o[i])
			FAIL("thread %u: malloc(%zu) failed", id, sz[i]);
		fill(o[i], sz[i], id * PER + (unsigned)i);
		if (i % 3 == 2) {	/* free one, reallocate another */
			check(o[i - 1], sz[i - 1], id * PER + (unsigned)i - 1, "threads before free");
			free(o[i - 1]);
			o[i - 1] = NULL;
			o[i - 2] = realloc(o[i - 2], sz[i - 2] + 50);
			if (!o[i - 2])
				FAIL("thread %u: realloc failed", id);
			check(o[i - 2], sz[i - 2], id * PER + (unsigned)i - 2, "threads realloc");
			fill(o[i - 2], sz[i - 2] + 50, id * PER + (unsigned)i - 2);
			sz[i - 2] += 50;
		}
	}
	for (int i = 0; i < PER; i++)
		if (o[i]) {
			check(o[i], sz[i], id * PER + (unsigned)i, "threads at the end");
			free(o[i]);
		}
	return NULL;
}

static int mode_threads(void)
{
	pthread_t t[THREADS];

	for (unsigned i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i))
			FAIL("pthread_create");
	worker((void *)(uintptr_t)THREADS);
	for (unsigned i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	return 0;
}

/* Objects of the start-up heap across fork: each side frees and allocates its own. */
static int mode_fork(void)
{
	unsigned char *a = malloc(64), *b = malloc(64), *c;
	pid_t pid;
	int st;

	if (where(a) != 1 || where(b) != 1)
		FAIL("the objects before fork are not in the start-up heap");
	fill(a, 64, 1);
	fill(b, 64, 2);
	pid = fork();
	if (pid < 0)
		FAIL("fork");
	c = malloc(64);
	if (!c)
		FAIL("malloc after fork");
	fill(c, 64, pid ? 3 : 4);
	check(a, 64, 1, pid ? "parent" : "child");
	free(b);
	free(a);
	check(c, 64, pid ? 3 : 4, pid ? "parent" : "child");
	free(c);
	if (pid == 0)
		_exit(0);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		FAIL("the child failed (status 0x%x)", st);
	return 0;
}

/* What start-heap.sh expects to abort, with glibc's message. */
static int mode_abort_child(const char *what)
{
	char *p = malloc(64), *q = malloc(64);

	if (where(p) != 1)
		FAIL("the object is not in the start-up heap");
	if (!strcmp(what, "double")) {
		free(p);
		free(p);
	} else if (!strcmp(what, "double-top")) {	/* its space taken back already */
		free(q);
		free(q);
	} else if (!strcmp(what, "interior")) {
		free(p + 16);	/* inside its line */
	} else if (!strcmp(what, "realloc-interior")) {
		p = realloc(p + 32, 100);
	} else {
		FAIL("unknown abort-child case %s", what);
	}
	printf("survived: %p %p\n", (void *)p, (void *)q);
	return 0;
}

/* MEMREG_START_HEAP=0: the first small object is in the arena. */
static int mode_off(void)
{
	void *p = malloc(64);

	if (where(p) != 2)
		FAIL("with MEMREG_START_HEAP=0 a first object of 64 bytes is not in the arena");
	free(p);
	return 0;
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";

	if (!strcmp(m, "short"))
		return mode_short();
	if (!strcmp(m, "fill"))
		return mode_fill();
	if (!strcmp(m, "reuse"))
		return mode_reuse();
	if (!strcmp(m, "threads"))
		return mode_threads();
	if (!strcmp(m, "buffers"))
		return mode_buffers();
	if (!strcmp(m, "fork"))
		return mode_fork();
	if (!strcmp(m, "abort-child") && argc > 2)
		return mode_abort_child(argv[2]);
	if (!strcmp(m, "off"))
		return mode_off();
	fprintf(stderr, "usage: %s short|fill|reuse|buffers|threads|fork|abort-child WHAT|off\n", argv[0]);
	return 2;
}
