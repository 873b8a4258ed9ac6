/* The start-up heap under LD_PRELOAD=libmemreg.so (tests/alloc/start-heap.sh): a
 * process's first small objects lie in the library's own BSS and the arena is not
 * reserved; frees, sizes, realloc and calloc there keep glibc's rules; double and
 * interior frees abort; once the heap is full the arena serves; threads and fork.
 * Modes: short, fill, threads, fork, abort-child WHAT, off. */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* Past the start-up heap: 2000 objects of 100 bytes (200 KiB), then the arena; every
 * object keeps its bytes, and each frees as its own. */
static int mode_fill(void)
{
	enum { N = 2000 };
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
	if (!strcmp(m, "threads"))
		return mode_threads();
	if (!strcmp(m, "fork"))
		return mode_fork();
	if (!strcmp(m, "abort-child") && argc > 2)
		return mode_abort_child(argv[2]);
	if (!strcmp(m, "off"))
		return mode_off();
	fprintf(stderr, "usage: %s short|fill|threads|fork|abort-child WHAT|off\n", argv[0]);
	return 2;
}
