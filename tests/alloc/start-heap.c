/* The start-up heap under LD_PRELOAD=libmemreg.so (tests/alloc/start-heap.sh): a
 * process's first objects lie in the library's own BSS and the arena is not
 * reserved; frees, sizes, realloc and calloc there keep glibc's rules; freed space is
 * reused lowest first, and purged once the heap has closed; double and interior
 * frees abort; once the heap is full the arena serves; threads and fork.
 * Modes: short, fill, reuse, threads, fork, abort-child WHAT, off. */
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
 * Once the heap has closed, its pages that hold no live object are purged: those
 * freed before the close at the close, the others at their last object's free. */
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
	d = malloc(1000);
	if (d != y + 128)
		FAIL("malloc(1000) after shrinking %p to 100 bytes returned %p, not the freed tail",
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
	/* Close it: objects of 120 KiB until one comes from the arena. */
	for (int i = 0;; i++) {
		unsigned char *z = malloc(120 * 1024);

		if (!z || i > 4)
			FAIL("no 120 KiB object came from the arena");
		if (where(z) == 2)
			break;
	}
	res = resident_pages(x, 40000, &whole);
	if (res)
		FAIL("%zu of the %zu whole pages of an object freed before the close still "
		     "resident after it", res, whole);
	res = resident_pages(y, 40000, &whole);
	if (res != whole)
		FAIL("a live object's pages purged at the close: %zu of %zu resident", res, whole);
	free(y);
	res = resident_pages(y, 40000, &whole);
	if (res)
		FAIL("%zu of the %zu whole pages of an object freed after the close still "
		     "resident", res, whole);
	d = malloc(500);
	if (where(d) != 2)
		FAIL("an object came from the start-up heap after it closed");
	for (int i = 0; i < BUFS; i++)
		check(keep[i], 16, (unsigned)i, "small objects at the end");
	printf("start-up heap: %d buffers of 4-70 KiB read one at a time, no arena\n", BUFS);
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
	if (!strcmp(m, "fork"))
		return mode_fork();
	if (!strcmp(m, "abort-child") && argc > 2)
		return mode_abort_child(argv[2]);
	if (!strcmp(m, "off"))
		return mode_off();
	fprintf(stderr, "usage: %s short|fill|reuse|threads|fork|abort-child WHAT|off\n", argv[0]);
	return 2;
}
