/* Safety programs for libmemreg, run under LD_PRELOAD by tests/alloc/safety.sh:
 * safety MODE. Impossible sizes and alignments fail as glibc's do with the block
 * intact, resource limits are lived with, and heap misuse aborts with glibc's kind
 * of one-line message (checked in a child: the signal and the whole message).
 * Exit 0 on success, 1 with a message on the first failure. */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define FAIL(...) do { fprintf(stderr, "safety: " __VA_ARGS__); fputc('\n', stderr); exit(1); } while (0)

static const char *self;

static void fill(unsigned char *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(seed + i * 7);
}

static void check(const unsigned char *p, size_t n, unsigned seed, const char *what)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != (unsigned char)(seed + i * 7))
			FAIL("%s: byte %zu of %zu changed", what, i, n);
}

/* memreg_class_of() is -EINVAL for pointers not in libmemreg's arena. */
static int in_memreg(const void *p)
{
	int (*class_of)(const void *) = (int (*)(const void *))dlsym(RTLD_DEFAULT, "memreg_class_of");

	if (!class_of)
		FAIL("memreg_class_of not found: not run under libmemreg");
	return class_of(p) >= 0;
}

/* ---- sizes ---- */

/* realloc/reallocarray past PTRDIFF_MAX on small, large and huge blocks: NULL,
 * ENOMEM, the block and its size unchanged, nothing else handed its pages. */
static int mode_realloc(void)
{
	static const size_t sizes[] = { 64, 100000, 3u << 20, 100u << 20 };
	static const size_t bad[] = { SIZE_MAX - 10, SIZE_MAX, (size_t)PTRDIFF_MAX + 1, SIZE_MAX - 4095 };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		unsigned char *p = malloc(sizes[i]), *q;
		size_t usable = malloc_usable_size(p);

		if (!p)
			FAIL("malloc(%zu) failed", sizes[i]);
		fill(p, sizes[i], (unsigned)i);
		for (size_t j = 0; j < sizeof(bad) / sizeof(bad[0]); j++) {
			errno = 0;
			q = realloc(p, bad[j]);
			if (q || errno != ENOMEM)
				FAIL("realloc(malloc(%zu), %zu) = %p, errno %d; want NULL, ENOMEM",
				     sizes[i], bad[j], (void *)q, errno);
			errno = 0;
			q = reallocarray(p, 1, bad[j]);
			if (q || errno != ENOMEM)
				FAIL("reallocarray(malloc(%zu), 1, %zu) = %p, errno %d; want NULL, ENOMEM",
				     sizes[i], bad[j], (void *)q, errno);
			if (malloc_usable_size(p) != usable)
				FAIL("realloc(malloc(%zu), %zu): usable size %zu, was %zu", sizes[i],
				     bad[j], malloc_usable_size(p), usable);
		}
		/* The pages stay the block's: a new object must not land in them. */
		q = malloc(sizes[i]);
		if (!q || (q >= p && q < p + sizes[i]))
			FAIL("malloc(%zu) = %p inside the block %p kept by a failed realloc",
			     sizes[i], (void *)q, (void *)p);
		fill(q, sizes[i], 99);
		check(p, sizes[i], (unsigned)i, "block after failed realloc");
		free(q);
		free(p);
	}
	return 0;
}

/* Every entry point with an impossible size: NULL (or ENOMEM) and errno ENOMEM. */
static int mode_sizes(void)
{
	static const size_t bad[] = { SIZE_MAX, SIZE_MAX - 10, (size_t)PTRDIFF_MAX + 1, SIZE_MAX - 4095 };
	void *p;

	for (size_t j = 0; j < sizeof(bad) / sizeof(bad[0]); j++) {
		size_t n = bad[j];

#define EXPECT_NULL(call) do { errno = 0; p = (call); \
		if (p || errno != ENOMEM) FAIL(#call " with %zu: %p, errno %d", n, p, errno); } while (0)
		EXPECT_NULL(malloc(n));
		EXPECT_NULL(calloc(1, n));
		EXPECT_NULL(memalign(64, n));
		EXPECT_NULL(memalign(1 << 20, n));
		EXPECT_NULL(aligned_alloc(4096, n));
		EXPECT_NULL(valloc(n));
		EXPECT_NULL(pvalloc(n));
		EXPECT_NULL(realloc(NULL, n));
#undef EXPECT_NULL
		if (posix_memalign(&p, 64, n) != ENOMEM)
			FAIL("posix_memalign(64, %zu) did not fail with ENOMEM", n);
	}
	return 0;
}

/* ---- operator new with hints ---- */

typedef void *(*new_al_nt_fn)(size_t, size_t, const void *, uint8_t);
typedef void *(*new_al_fn)(size_t, size_t, uint8_t);
typedef void *(*new_nt_fn)(size_t, const void *, uint8_t);

static void *sym(const char *name)
{
	void *f = dlsym(RTLD_DEFAULT, name);

	if (!f)
		FAIL("%s not found", name);
	return f;
}

/* The nothrow forms return NULL for sizes that cannot be, never a short block. */
static int mode_new_nothrow(void)
{
	static const char nt = 0;
	new_al_nt_fn al_nt[2] = {
		(new_al_nt_fn)sym("_ZnwmSt11align_val_tRKSt9nothrow_t12__hot_cold_t"),
		(new_al_nt_fn)sym("_ZnamSt11align_val_tRKSt9nothrow_t12__hot_cold_t"),
	};
	new_nt_fn nt_fn[2] = {
		(new_nt_fn)sym("_ZnwmRKSt9nothrow_t12__hot_cold_t"),
		(new_nt_fn)sym("_ZnamRKSt9nothrow_t12__hot_cold_t"),
	};
	static const size_t bad[] = { SIZE_MAX, SIZE_MAX - 32, SIZE_MAX - 100, (size_t)PTRDIFF_MAX + 1 };
	static const uint8_t hints[] = { 0, 128, 255 };

	for (int f = 0; f < 2; f++)
		for (size_t j = 0; j < sizeof(bad) / sizeof(bad[0]); j++)
			for (size_t h = 0; h < sizeof(hints); h++) {
				void *p = al_nt[f](bad[j], 64, &nt, hints[h]);

				if (p)
					FAIL("aligned nothrow new(%zu, 64, hint %u) = %p (usable %zu), want NULL",
					     bad[j], hints[h], p, malloc_usable_size(p));
				p = nt_fn[f](bad[j], &nt, hints[h]);
				if (p)
					FAIL("nothrow new(%zu, hint %u) = %p, want NULL", bad[j], hints[h], p);
			}
	/* And a good one is as big and aligned as asked. */
	void *p = al_nt[0](1000, 256, &nt, 255);

	if (!p || (uintptr_t)p % 256 || malloc_usable_size(p) < 1000)
		FAIL("aligned nothrow new(1000, 256) = %p", p);
	free(p);
	return 0;
}

/* The throwing form: libstdc++ runs the new-handler, then throws std::bad_alloc
 * (uncaught here: std::terminate, SIGABRT). Run in a child by mode_new_throw. */
static void new_handler(void)
{
	void (*set)(void (*)(void)) = (void (*)(void (*)(void)))sym("_ZSt15set_new_handlerPFvvE");

	fputs("new-handler called\n", stderr);
	set(NULL);	/* the next failure throws */
}

static int mode_new_throw_child(const char *which)
{
	void (*set)(void (*)(void));
	void *p;

	if (!dlopen("libstdc++.so.6", RTLD_NOW | RTLD_GLOBAL))
		FAIL("no libstdc++.so.6: %s", dlerror());
	set = (void (*)(void (*)(void)))sym("_ZSt15set_new_handlerPFvvE");
	set(new_handler);
	if (!strcmp(which, "aligned"))
		p = ((new_al_fn)sym("_ZnwmSt11align_val_t12__hot_cold_t"))(SIZE_MAX, 64, 255);
	else
		p = ((new_al_fn)sym("_ZnamSt11align_val_t12__hot_cold_t"))(SIZE_MAX - 32, 64, 0);
	fprintf(stderr, "returned %p\n", p);
	return 0;
}

/* ---- children: run MODE ARG in a child, check how it ended ---- */

/* Run "self MODE ARG" with stderr to a pipe (optionally under an RLIMIT_AS);
 * returns the wait status, the child's stderr in @err. */
static int run_child(const char *mode, const char *arg, char *err, size_t errlen)
{
	int fds[2], st;
	size_t n = 0;
	ssize_t k;
	pid_t pid;

	if (pipe(fds) != 0)
		FAIL("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		FAIL("fork: %s", strerror(errno));
	if (pid == 0) {
		struct rlimit no_core = { 0, 0 };

		setrlimit(RLIMIT_CORE, &no_core);
		dup2(fds[1], 2);
		close(fds[0]);
		execl(self, self, mode, arg, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	while (n + 1 < errlen && (k = read(fds[0], err + n, errlen - 1 - n)) > 0)
		n += (size_t)k;
	err[n] = 0;
	close(fds[0]);
	if (waitpid(pid, &st, 0) != pid)
		FAIL("waitpid: %s", strerror(errno));
	return st;
}

static void expect_abort(const char *mode, const char *arg, const char *want)
{
	char err[4096];
	int st = run_child(mode, arg, err, sizeof(err));

	if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGABRT)
		FAIL("%s %s: ended with status 0x%x, not SIGABRT; stderr: %s", mode, arg, st, err);
	if (strcmp(err, want) != 0)
		FAIL("%s %s: stderr\n%s\nwant\n%s", mode, arg, err, want);
}

static int mode_new_throw(void)
{
	const char *want = "new-handler called\n"
			   "terminate called after throwing an instance of 'std::bad_alloc'\n"
			   "  what():  std::bad_alloc\n";

	expect_abort("new-throw-child", "aligned", want);
	expect_abort("new-throw-child", "array", want);
	return 0;
}

/* ---- alignments above 4 GiB ---- */

static int mode_align_big_child(void)
{
	for (int k = 32; k <= 36; k++) {
		size_t a = (size_t)1 << k;

		for (int how = 0; how < 3; how++) {
			void *p = NULL;
			int rc = 0;

			errno = 0;
			if (how == 0)
				p = aligned_alloc(a, 4096);
			else if (how == 1)
				p = memalign(a, 100);
			else
				rc = posix_memalign(&p, a, 1 << 20);
			if (!p) {
				if (how == 2 ? rc != ENOMEM : errno != ENOMEM)
					FAIL("alignment 2^%d (form %d): NULL without ENOMEM (%d, %d)", k, how, rc, errno);
				continue;
			}
			if ((uintptr_t)p % a)
				FAIL("alignment 2^%d (form %d): %p is misaligned", k, how, p);
			memset(p, 1, 100);
			free(p);
		}
	}
	return 0;
}

/* In four processes: where the arena lands is random, and an arena that merely
 * happens to be aligned to 64 GiB (1 in 16 for one aligned to 4 GiB) would hide a
 * misalignment. */
static int mode_align_big(void)
{
	char err[4096];

	for (int i = 0; i < 4; i++) {
		int st = run_child("align-big-child", "", err, sizeof(err));

		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			FAIL("align-big process %d: status 0x%x, stderr:\n%s", i, st, err);
	}
	return 0;
}

/* ---- resource limits (a child exec'd under the limit: the arena is set up
 * after the limit, as in a process started under `ulimit -v`) ---- */

/* The soft limit only: the hard one stays, so a later step may raise it again. */
static void set_limit(int res, rlim_t bytes)
{
	struct rlimit rl;

	if (getrlimit(res, &rl) != 0)
		FAIL("getrlimit: %s", strerror(errno));
	rl.rlim_cur = bytes;
	if (setrlimit(res, &rl) != 0)
		FAIL("setrlimit: %s", strerror(errno));
}

/* Under RLIMIT_AS of 8 GiB (the arena's window is 258 GiB): aligned requests
 * work, from libmemreg, and the arena grows past its first reservation; which
 * leaves the program the most of the limit (a mapping of 6 GiB fits: it did not
 * when the arena took 4 GiB first). */
static int mode_rlimit_as_child(void)
{
	void *p = NULL, *big[48], *own;
	int rc = posix_memalign(&p, 64, 100);

	if (rc != 0 || !p || (uintptr_t)p % 64)
		FAIL("posix_memalign(64, 100) under RLIMIT_AS: %d", rc);
	if (!in_memreg(p))
		FAIL("posix_memalign(64, 100) under RLIMIT_AS: %p not from libmemreg", p);
	free(p);
	own = mmap(NULL, (size_t)6 << 30, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (own == MAP_FAILED)
		FAIL("a mapping of 6 GiB under an 8 GiB RLIMIT_AS after the arena's set-up: %s",
		     strerror(errno));
	munmap(own, (size_t)6 << 30);
	for (size_t a = 32; a <= (32u << 20); a *= 4) {
		p = memalign(a, 3 * a);
		if (!p || (uintptr_t)p % a || !in_memreg(p))
			FAIL("memalign(%zu) under RLIMIT_AS: %p", a, p);
		free(p);
	}
	/* 3 GiB of address space in 64 MiB blocks: more than the first step. */
	for (int i = 0; i < 48; i++) {
		big[i] = malloc(64u << 20);
		if (!big[i] || !in_memreg(big[i]))
			FAIL("block %d of 64 MiB under RLIMIT_AS: %p", i, big[i]);
		((char *)big[i])[i] = 1;
	}
	for (int i = 0; i < 48; i++)
		free(big[i]);
	return 0;
}

static int mode_rlimit_as(void)
{
	char err[4096];
	int st;

	set_limit(RLIMIT_AS, (rlim_t)8 << 30);
	st = run_child("rlimit-as-child", "", err, sizeof(err));
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || strstr(err, "libmemreg: ") != strstr(err, "libmemreg: stats"))
		FAIL("under RLIMIT_AS 8 GiB: status 0x%x, stderr:\n%s", st, err);
	return 0;
}

/* Under an RLIMIT_AS too small for one region: glibc serves, said once. */
static int mode_rlimit_tiny_child(void)
{
	void *p = malloc(100), *q = NULL;

	if (!p || in_memreg(p))
		FAIL("malloc(100) with no arena: %p", p);
	if (posix_memalign(&q, 64, 100) != 0 || (uintptr_t)q % 64)
		FAIL("posix_memalign(64, 100) with no arena failed");
	free(q);
	free(p);
	return 0;
}

static int mode_rlimit_tiny(void)
{
	char err[4096];
	const char *want = "libmemreg: cannot reserve address space for the arena (RLIMIT_AS?): "
			   "glibc's malloc serves what libmemreg cannot\n";
	int st;

	set_limit(RLIMIT_AS, (rlim_t)96 << 20);
	st = run_child("rlimit-tiny-child", "", err, sizeof(err));
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || strncmp(err, want, strlen(want)) != 0 ||
	    strstr(err + 1, "libmemreg: c"))
		FAIL("under RLIMIT_AS 96 MiB: status 0x%x, stderr:\n%s\nwant first (and once):\n%s",
		     st, err, want);
	return 0;
}

static long vm_data_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kib = -1;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmData: %ld kB", &kib) == 1)
			break;
	if (f)
		fclose(f);
	if (kib < 0)
		FAIL("no VmData in /proc/self/status");
	return kib;
}

/* Commits are chunks, not regions: with 24 MiB of RLIMIT_DATA left, a cold 1 MiB
 * block opens a region of 64 MiB and is still libmemreg's. Then a huge span whose
 * commit fails part-way: the regions committed before the failure must not be
 * lost; a smaller span fits in them. */
static int mode_rlimit_data(void)
{
	void *warm = malloc(100), *p, *q, *(*cold)(size_t);

	cold = (void *(*)(size_t))sym("memreg_malloc_cold");
	set_limit(RLIMIT_DATA, ((rlim_t)vm_data_kib() << 10) + (24u << 20));
	p = cold(1u << 20);
	if (!p || !in_memreg(p))
		FAIL("memreg_malloc_cold(1 MiB) with 24 MiB of RLIMIT_DATA left: %p", p);
	/* Cold data has regions of its own (the top ones): only a failed commit of a
	 * whole 64 MiB region puts it beside the normal objects. */
	if ((uintptr_t)p >> 26 == (uintptr_t)warm >> 26)
		FAIL("memreg_malloc_cold(1 MiB) with 24 MiB of RLIMIT_DATA left: %p in the region of "
		     "normal objects (%p): its own region was not committed", p, warm);
	memset(p, 1, 1u << 20);
	free(p);
	set_limit(RLIMIT_DATA, ((rlim_t)vm_data_kib() << 10) + (160u << 20));
	errno = 0;
	p = malloc(192u << 20);
	if (p)
		FAIL("malloc(192 MiB) with 160 MiB of RLIMIT_DATA left: %p", p);
	for (int round = 0; round < 3; round++) {
		q = malloc(120u << 20);
		if (!q || !in_memreg(q))
			FAIL("round %d: malloc(120 MiB) after a failed 192 MiB: %p (regions lost)", round, q);
		memset(q, 1, 120u << 20);
		free(q);
	}
	free(warm);
	return 0;
}

/* Started under RLIMIT_DATA (the parent's VmData and 256 MiB): blocks of 135000
 * bytes (33 pages) until malloc fails. Aligned to 64 pages each, as outside
 * limits, only half the limit held blocks (128 MiB; glibc's malloc, which serves
 * what libmemreg cannot, had no room left either). At least 200 MiB. */
static int mode_rlimit_data_spans_child(void)
{
	size_t n = 0, mine = 0, max = (size_t)(512u << 20) / 135000;
	void **p = mmap(NULL, max * sizeof(void *), PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		FAIL("mmap: %s", strerror(errno));
	for (; n < max && (p[n] = malloc(135000)) != NULL; n++) {
		memset(p[n], 1, 64);
		mine += in_memreg(p[n]);
	}
	printf("%zu blocks of 135000 B (%zu MiB, %zu MiB of them libmemreg's) under 256 MiB of "
	       "RLIMIT_DATA\n", n, n * 135000 >> 20, mine * 135000 >> 20);
	if (n == max)
		FAIL("512 MiB of blocks under 256 MiB of RLIMIT_DATA: the limit did not hold");
	if (n * 135000 < (size_t)200 << 20)
		FAIL("%zu MiB of 135000-byte blocks under 256 MiB of RLIMIT_DATA, want at least 200",
		     n * 135000 >> 20);
	while (n)
		free(p[--n]);
	return 0;
}

static int mode_rlimit_data_spans(void)
{
	char err[4096];
	int st;

	set_limit(RLIMIT_DATA, ((rlim_t)vm_data_kib() << 10) + (256u << 20));
	st = run_child("rlimit-data-spans-child", "", err, sizeof(err));
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		FAIL("under RLIMIT_DATA: status 0x%x, stderr:\n%s", st, err);
	return 0;
}

/* ---- calloc over locked pages (MEMREG_REGION_SIZE=1M) ----
 * MADV_DONTNEED fails on locked pages (mlock, mlockall): they keep their data, and
 * a calloc given them must clear them. A large span (256 KiB, purged at its free as
 * the largest freed yet, and again by malloc_trim) and a huge run (4 MiB: four
 * regions, purged at its free), each locked, written and freed, then asked for
 * again by calloc: the code before handed both out as reading zero, full of 0xAA. */
static void mlock_calloc(size_t n, bool trim)
{
	unsigned char *p = malloc(n), *q;
	size_t i;

	if (!p)
		FAIL("mlock-calloc: malloc(%zu) failed", n);
	if (mlock(p, n) != 0)
		FAIL("mlock-calloc: mlock of %zu bytes: %s (RLIMIT_MEMLOCK %s)", n, strerror(errno),
		     "is 8 MiB by default; root needs none");
	memset(p, 0xAA, n);
	__asm__ volatile("" : : "r"(p) : "memory");	/* not a dead store before free */
	free(p);
	if (trim)
		malloc_trim(0);
	q = calloc(1, n);
	if (!q)
		FAIL("mlock-calloc: calloc(1, %zu) failed", n);
	for (i = 0; i < n; i++)
		if (((volatile unsigned char *)q)[i] != 0)
			FAIL("mlock-calloc: calloc(1, %zu)%s: byte %zu is %#x (%s the freed block)", n,
			     trim ? " after malloc_trim" : "", i, ((volatile unsigned char *)q)[i],
			     q == p ? "in" : "not in");
	munlock(q, n);
	free(q);
}

static int mode_mlock_calloc(void)
{
	void *keep = malloc(100);	/* the spans do not start the heap */
	const char *rs = getenv("MEMREG_REGION_SIZE");

	if (!rs || strcmp(rs, "1M") != 0)
		FAIL("mlock-calloc: run with MEMREG_REGION_SIZE=1M (4 MiB is then a huge run)");
	mlock_calloc(256u << 10, false);
	mlock_calloc(256u << 10, true);
	mlock_calloc(4u << 20, false);
	free(keep);
	return 0;
}

/* ---- heap misuse: the child aborts with the message ---- */

static void *remote_free_thread(void *p)
{
	free(p);
	return NULL;
}

/* Threads that each allocate one object and exit together: caches of consecutive
 * ids (every batch slot of a freeing thread, twice over), parked. */
#define LINKED_OWNERS 8
static void *linked_obj[LINKED_OWNERS];
static pthread_barrier_t linked_barrier;

static void *linked_owner_thread(void *arg)
{
	linked_obj[(uintptr_t)arg] = malloc(40);
	pthread_barrier_wait(&linked_barrier);
	return NULL;
}

static void *linked_double_thread(void *p)
{
	pthread_t t[LINKED_OWNERS];
	uintptr_t i;

	pthread_barrier_init(&linked_barrier, NULL, LINKED_OWNERS);
	for (i = 0; i < LINKED_OWNERS; i++)
		pthread_create(&t[i], NULL, linked_owner_thread, (void *)i);
	for (i = 0; i < LINKED_OWNERS; i++)
		pthread_join(t[i], NULL);
	free(p);
	free(p);
	for (i = 0; i < LINKED_OWNERS; i++)
		free(linked_obj[i]);
	return NULL;
}

static void *double_current_thread(void *arg)
{
	char *a = malloc(100), *b = malloc(100), *c = malloc(100);

	free(a);
	free(b);
	free(a);
	memset(c, 1, 100);	/* live: the thread leaves it to main */
	return arg;
}

/* A thread started and joined: the process no longer counts as single-threaded. */
static void become_threaded(void)
{
	pthread_t t;

	pthread_create(&t, NULL, remote_free_thread, NULL);
	pthread_join(t, NULL);
}

static int mode_misuse_child(const char *what)
{
	char *p = malloc(40), *q;

	if (!strcmp(what, "double")) {
		free(p);
		free(p);
	} else if (!strcmp(what, "double-later")) {
		/* Freed twice with another free between: the list loops back to p, and
		 * the second time p is handed out it no longer carries the free key. */
		q = malloc(40);
		free(p);
		free(q);
		free(p);
		for (int i = 0; i < 4; i++)
			(void)malloc(40);
	} else if (!strcmp(what, "interior")) {
		free(p + 16);
	} else if (!strcmp(what, "remote-double")) {
		pthread_t t;

		free(p);
		pthread_create(&t, NULL, remote_free_thread, p);
		pthread_join(t, NULL);
	} else if (!strcmp(what, "remote-double-batched")) {
		/* Two other threads free p, each once, and exit: neither free sees the
		 * other (the frees wait in batches, p untouched), but their exits send
		 * the batches to p's owner, whose next refill finds p freed twice. */
		pthread_t t;

		for (int k = 0; k < 2; k++) {
			pthread_create(&t, NULL, remote_free_thread, p);
			pthread_join(t, NULL);
		}
		for (int i = 0; i < 4096; i++)
			(void)malloc(40);
	} else if (!strcmp(what, "remote-double-linked")) {
		/* Another thread frees p twice in a row (both into its batch for p's
		 * owner), then an object of an owner that takes the same batch slot: a
		 * batch of so few objects goes out linked through them, where p would
		 * link to itself and its owner's next drain would loop. */
		pthread_t t;

		pthread_create(&t, NULL, linked_double_thread, p);
		pthread_join(t, NULL);
		for (int i = 0; i < 4096; i++)
			(void)malloc(40);
	} else if (!strcmp(what, "double-noncurrent")) {
		/* p's slab is no longer the bin's current one when freed twice. */
		char *keep[2000];

		for (int i = 0; i < 2000; i++)
			keep[i] = malloc(40);
		free(p);
		free(p);
		(void)keep;
	} else if (!strcmp(what, "double-empty")) {
		/* A full slab of nine 14000-byte objects, not the bin's current one (a
		 * tenth opened the next): o[0] freed twice with a free between (only the
		 * list's head is compared), then all but o[8]: counted, every object is
		 * free. Emptied so, the slab would be reused with o[8] live in it. */
		char *o[30];
		int i;

		for (i = 0; i < 10; i++)
			o[i] = malloc(14000);
		free(o[0]);
		free(o[1]);
		free(o[0]);
		for (i = 2; i < 8; i++)
			free(o[i]);
		memset(o[8], 8, 14000);
		for (i = 10; i < 30; i++)
			if ((o[i] = malloc(14000)) == o[8])
				fprintf(stderr, "live object handed out again\n");
	} else if (!strcmp(what, "double-current-exit")) {
		/* The same in a thread's current slab: a freed twice with a free between
		 * takes its count of objects out to zero while c is live, and the thread's
		 * exit gives the slab up. */
		pthread_t t;

		pthread_create(&t, NULL, double_current_thread, NULL);
		pthread_join(t, NULL);
	} else if (!strcmp(what, "double-borrowed")) {
		/* The same in a thread started after another exited, which borrows the
		 * shared cache's objects (tcache.c, "short threads"): its frees of them
		 * wait in its stash for its next allocations, where the key catches the
		 * second. Sent to the shared cache in a batch, it went unseen. */
		pthread_t t;

		pthread_create(&t, NULL, remote_free_thread, malloc(40));	/* one that exits */
		pthread_join(t, NULL);
		pthread_create(&t, NULL, double_current_thread, NULL);
		pthread_join(t, NULL);
	} else if (!strcmp(what, "spare-double") || !strcmp(what, "spare-remote-double")) {
		/* Nine objects of 14000 B fill a slab of 128 KiB and a tenth opens the
		 * next: the first freed whole is kept as its bin's spare (tcache.c),
		 * where a free again must not count it used once more. */
		char *o[10];
		pthread_t t;

		for (int i = 0; i < 10; i++)
			o[i] = malloc(14000);
		for (int i = 0; i < 9; i++)
			free(o[i]);
		if (!strcmp(what, "spare-double")) {
			free(o[4]);
		} else {
			pthread_create(&t, NULL, remote_free_thread, o[4]);
			pthread_join(t, NULL);
		}
	} else if (!strcmp(what, "large-double")) {
		q = malloc(1 << 20);
		free(q);
		free(q);
	} else if (!strcmp(what, "span-double")) {
		/* A span of 10 pages: in a process that has had a second thread, the
		 * first free keeps it in the thread's span cache. */
		become_threaded();
		q = malloc(40000);
		free(q);
		free(q);
	} else if (!strcmp(what, "span-remote-double")) {
		pthread_t t;

		become_threaded();
		q = malloc(40000);
		free(q);
		pthread_create(&t, NULL, remote_free_thread, q);
		pthread_join(t, NULL);
	} else if (!strcmp(what, "span-realloc-freed")) {
		become_threaded();
		q = malloc(40000);
		free(q);
		q = realloc(q, 50000);
		(void)q;
	} else if (!strcmp(what, "fit-double")) {
		/* 40 000 B in a process of one thread: the first-fit heap (fit.h). */
		q = malloc(40000);
		free(q);
		free(q);
	} else if (!strcmp(what, "fit-interior")) {
		q = malloc(40000);
		free(q + 256);		/* a granule's start, not an object's */
	} else if (!strcmp(what, "fit-unaligned")) {
		q = malloc(40000);
		free(q + 16);
	} else if (!strcmp(what, "fit-header")) {
		q = malloc(40000);	/* the chunk's first object, after its header */
		free((char *)((uintptr_t)q & ~(uintptr_t)4095));
	} else if (!strcmp(what, "fit-realloc-freed")) {
		q = malloc(40000);
		free(q);
		q = realloc(q, 50000);
		(void)q;
	} else if (!strcmp(what, "large-interior")) {
		q = malloc(1 << 20);
		free(q + 8192);
	} else if (!strcmp(what, "large-stale")) {
		/* A large span over pages that once were another large span's: the
		 * interior page's old descriptor must not be taken for a head. */
		q = malloc(8 << 20);
		char *r = malloc(4 << 20);

		free(r);
		free(q);
		q = malloc(16 << 20);
		free(r);
	} else if (!strcmp(what, "realloc-interior")) {
		q = realloc(p + 16, 100);
		(void)q;
	} else if (!strcmp(what, "corrupt-link")) {
		free(p);
		/* A use after free writes a pointer to p + 8 over the next pointer (here
		 * already masked as safe-linking would reveal it: a forgery that knows
		 * the mask still cannot point at a misaligned address). */
		*(uintptr_t *)p = ((uintptr_t)p >> 12) ^ ((uintptr_t)p + 8);
		q = malloc(40);
		q = malloc(40);
		(void)q;
	}
	fprintf(stderr, "survived %s\n", what);
	return 0;
}

static int mode_misuse(void)
{
	expect_abort("misuse-child", "double", "libmemreg: free(): double free detected\n");
	expect_abort("misuse-child", "double-noncurrent", "libmemreg: free(): double free detected\n");
	expect_abort("misuse-child", "double-empty", "libmemreg: free(): double free detected\n");
	expect_abort("misuse-child", "double-current-exit", "libmemreg: free(): double free detected\n");
	expect_abort("misuse-child", "double-borrowed", "libmemreg: free(): double free detected\n");
	expect_abort("misuse-child", "remote-double", "libmemreg: free(): double free detected\n");
	expect_abort("misuse-child", "remote-double-batched", "libmemreg: free(): double free detected\n");
	expect_abort("misuse-child", "remote-double-linked", "libmemreg: free(): double free detected\n");
	expect_abort("misuse-child", "double-later",
		     "libmemreg: malloc(): double free or corrupted free list detected\n");
	expect_abort("misuse-child", "interior", "libmemreg: free(): invalid pointer\n");
	expect_abort("misuse-child", "spare-double", "libmemreg: free(): double free detected\n");
	expect_abort("misuse-child", "spare-remote-double", "libmemreg: free(): double free detected\n");
	expect_abort("misuse-child", "large-double", "libmemreg: free(): double free or invalid pointer\n");
	expect_abort("misuse-child", "span-double", "libmemreg: free(): double free or invalid pointer\n");
	expect_abort("misuse-child", "span-remote-double",
		     "libmemreg: free(): double free or invalid pointer\n");
	expect_abort("misuse-child", "span-realloc-freed", "libmemreg: realloc(): invalid pointer\n");
	expect_abort("misuse-child", "fit-double", "libmemreg: free(): double free or invalid pointer\n");
	expect_abort("misuse-child", "fit-interior", "libmemreg: free(): double free or invalid pointer\n");
	expect_abort("misuse-child", "fit-unaligned", "libmemreg: free(): double free or invalid pointer\n");
	expect_abort("misuse-child", "fit-header", "libmemreg: free(): double free or invalid pointer\n");
	expect_abort("misuse-child", "fit-realloc-freed", "libmemreg: realloc(): invalid pointer\n");
	expect_abort("misuse-child", "large-interior", "libmemreg: free(): double free or invalid pointer\n");
	expect_abort("misuse-child", "large-stale", "libmemreg: free(): double free or invalid pointer\n");
	expect_abort("misuse-child", "realloc-interior", "libmemreg: realloc(): invalid pointer\n");
	expect_abort("misuse-child", "corrupt-link",
		     "libmemreg: malloc(): unaligned free list pointer detected\n");
	return 0;
}

/* Fork handlers that allocate, registered before libmemreg's own (which it registers
 * once a second thread exists): glibc runs their prepare after libmemreg's and their
 * parent and child before libmemreg's, with its locks held. glibc's malloc serves
 * them; so must libmemreg (it hung in each, on the heap lock or the pool lock: the
 * parent's alarm ends a hang). Sizes from a slab's object to a run of regions. */
static void *volatile atfork_sink;

static void atfork_alloc(void)
{
	static const size_t sizes[] = { 16, 5000, 100000, 3 << 20, 100 << 20 };

	for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		atfork_sink = malloc(sizes[i]);
		if (atfork_sink)
			memset(atfork_sink, 1, 64);
		free(atfork_sink);
	}
	for (unsigned i = 0; i < 64; i++)	/* past the bins' free lists: new slabs */
		atfork_sink = malloc(4096 + i * 64);	/* left live: the handlers run thrice */
}

static void *thread_noop(void *arg)
{
	free(malloc(100));
	return arg;
}

static int mode_atfork(void)
{
	pthread_t t;
	pid_t pid;
	int st;

	if (pthread_atfork(atfork_alloc, atfork_alloc, atfork_alloc) ||
	    pthread_create(&t, NULL, thread_noop, NULL) || pthread_join(t, NULL))
		return 99;
	alarm(60);	/* not inherited by the child: a hang there keeps waitpid waiting */
	pid = fork();
	if (pid < 0)
		return 99;
	if (pid == 0) {
		atfork_alloc();
		_exit(0);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "safety: atfork: the child ended with status 0x%x\n", st);
		return 1;
	}
	alarm(0);
	return 0;
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";

	self = argv[0];
	/* The parent of the modes that only run children allocates too, so that its
	 * stats line shows libmemreg ran (safety.sh checks it). */
	free(malloc(1));
	if (!strcmp(m, "realloc"))
		return mode_realloc();
	if (!strcmp(m, "sizes"))
		return mode_sizes();
	if (!strcmp(m, "new-nothrow"))
		return mode_new_nothrow();
	if (!strcmp(m, "new-throw"))
		return mode_new_throw();
	if (!strcmp(m, "new-throw-child"))
		return mode_new_throw_child(argc > 2 ? argv[2] : "");
	if (!strcmp(m, "align-big"))
		return mode_align_big();
	if (!strcmp(m, "align-big-child"))
		return mode_align_big_child();
	if (!strcmp(m, "rlimit-as"))
		return mode_rlimit_as();
	if (!strcmp(m, "rlimit-as-child"))
		return mode_rlimit_as_child();
	if (!strcmp(m, "rlimit-tiny"))
		return mode_rlimit_tiny();
	if (!strcmp(m, "rlimit-tiny-child"))
		return mode_rlimit_tiny_child();
	if (!strcmp(m, "rlimit-data"))
		return mode_rlimit_data();
	if (!strcmp(m, "rlimit-data-spans"))
		return mode_rlimit_data_spans();
	if (!strcmp(m, "rlimit-data-spans-child"))
		return mode_rlimit_data_spans_child();
	if (!strcmp(m, "mlock-calloc"))
		return mode_mlock_calloc();
	if (!strcmp(m, "misuse"))
		return mode_misuse();
	if (!strcmp(m, "atfork"))
		return mode_atfork();
	if (!strcmp(m, "misuse-child"))
		return mode_misuse_child(argc > 2 ? argv[2] : "");
	fprintf(stderr, "safety: unknown mode %s\n", m);
	return 2;
}
