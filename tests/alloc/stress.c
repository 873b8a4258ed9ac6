/* Stress programs for libmemreg, run under LD_PRELOAD by tests/alloc/stress.sh:
 * stress MODE, one mode per behaviour the allocator must keep. Every object is
 * filled with a pattern derived from its address and size and checked before free.
 * Exit 0 on success, 1 with a message on the first failure. */
#include "config.h"

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define FAIL(...) do { fprintf(stderr, "stress: " __VA_ARGS__); fputc('\n', stderr); exit(1); } while (0)

static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static unsigned char pat(const void *p, size_t i)
{
	return (unsigned char)(((uintptr_t)p >> 4) * 31 + i * 7 + 1);
}

static void fill(void *p, size_t n)
{
	unsigned char *c = p;
	size_t i;

	for (i = 0; i < n; i++)
		c[i] = pat(p, i);
}

static void check(const void *p, size_t n, const char *what)
{
	const unsigned char *c = p;
	size_t i;

	for (i = 0; i < n; i++)
		if (c[i] != pat(p, i))
			FAIL("%s: pattern broken at byte %zu of %zu (object %p)", what, i, n, p);
}

/* Random sizes, mostly small, some large. */
static size_t rand_size(uint64_t *s)
{
	uint64_t r = rng_next(s);

	switch (r % 16) {
	case 0:
		return (size_t)(r >> 8) % (256 * 1024) + 1;
	case 1:
		return (size_t)(r >> 8) % 32768 + 1;
	default:
		return (size_t)(r >> 8) % 512;
	}
}

/* ---- xthread: producers allocate, consumers check and free ---- */

#define RING 4096
struct ring {
	_Atomic(void *) slot[RING];
	size_t size[RING];
	atomic_uint head, tail;
};
static struct ring rings[4];
static atomic_int producers_done;

static void *producer(void *arg)
{
	struct ring *r = arg;
	uint64_t s = (uintptr_t)arg | 1;
	int i;

	for (i = 0; i < 60000; i++) {
		size_t n = rand_size(&s);
		void *p = malloc(n);
		unsigned h;

		if (!p)
			FAIL("xthread: malloc(%zu) failed", n);
		fill(p, n);
		for (;;) {
			h = atomic_load(&r->head);
			if (h - atomic_load(&r->tail) < RING)
				break;
			sched_yield();
		}
		r->size[h % RING] = n;
		atomic_store(&r->slot[h % RING], p);
		atomic_store(&r->head, h + 1);
	}
	atomic_fetch_add(&producers_done, 1);
	return NULL;
}

static void *consumer(void *arg)
{
	struct ring *r = arg;
	uint64_t s = (uintptr_t)arg | 3;
	unsigned n = 0;

	for (;;) {
		unsigned t = atomic_load(&r->tail);
		void *p;

		if (t == atomic_load(&r->head)) {
			if (atomic_load(&producers_done) == 4 && t == atomic_load(&r->head))
				return NULL;
			sched_yield();
			continue;
		}
		p = atomic_load(&r->slot[t % RING]);
		check(p, r->size[t % RING], "xthread");
		free(p);
		atomic_store(&r->tail, t + 1);
		/* Consumers allocate too (as servers do): their own caches run dry and
		 * take in what other threads freed into them. */
		if (++n % 8 == 0) {
			size_t k = rand_size(&s) % 2048 + 1;
			void *q = malloc(k);

			if (!q)
				FAIL("xthread: consumer malloc failed");
			fill(q, k);
			check(q, k, "xthread consumer");
			free(q);
		}
	}
}

static long rss_kib(void)
{
	long pages = 0, res = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (!f || fscanf(f, "%ld %ld", &pages, &res) != 2)
		FAIL("cannot read /proc/self/statm");
	fclose(f);
	return res * (sysconf(_SC_PAGESIZE) / 1024);
}

/* Three rounds: memory freed by other threads must come back for reuse, so the
 * resident size stays flat after the first rounds (a leak of the remote frees
 * would add hundreds of MiB a round: a round allocates about 2 GiB). What a round
 * leaves resident also follows how far the consumers lagged (up to 16384 objects
 * of up to 256 KiB in the rings): under load one round ended at 21 MiB where the
 * others end at 50-156, and the third round's 121 MiB failed a bound made from the
 * first alone. The bound is made from the larger of the first two. */
static int mode_xthread(void)
{
	pthread_t t[8];
	long first = 0, last = 0;
	int i, round;

	for (round = 0; round < 3; round++) {
		atomic_store(&producers_done, 0);
		for (i = 0; i < 4; i++) {
			pthread_create(&t[i], NULL, producer, &rings[i]);
			pthread_create(&t[4 + i], NULL, consumer, &rings[i]);
		}
		for (i = 0; i < 8; i++)
			pthread_join(t[i], NULL);
		last = rss_kib();
		if (round < 2 && last > first)
			first = last;
	}
	if (last > first * 5 / 4 + 65536)
		FAIL("xthread: resident %ld KiB after round 3, at most %ld after rounds 1 and 2: "
		     "frees leak", last, first);
	return 0;
}

/* ---- churn: threads come and go, leaving objects for the next ones ---- */

#define KEEP 64
static void *kept[KEEP];
static size_t kept_size[KEEP];
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;

static void *churn_thread(void *arg)
{
	uint64_t s = (uintptr_t)arg * 2654435761u | 1;
	void *local[100];
	size_t sz[100];
	int i;

	for (i = 0; i < 100; i++) {
		sz[i] = rand_size(&s);
		local[i] = malloc(sz[i]);
		if (!local[i])
			FAIL("churn: malloc failed");
		fill(local[i], sz[i]);
	}
	for (i = 0; i < 100; i += 2) {
		check(local[i], sz[i], "churn");
		free(local[i]);
	}
	/* Swap one object with the shared set: freed later by another thread. */
	pthread_mutex_lock(&kept_lock);
	i = (int)(rng_next(&s) % KEEP);
	if (kept[i]) {
		check(kept[i], kept_size[i], "churn kept");
		free(kept[i]);
	}
	kept[i] = local[1];
	kept_size[i] = sz[1];
	pthread_mutex_unlock(&kept_lock);
	for (i = 3; i < 100; i += 2) {
		check(local[i], sz[i], "churn");
		free(local[i]);
	}
	return NULL;
}

static int mode_churn(void)
{
	int round, i;

	for (round = 0; round < 300; round++) {
		pthread_t t[4];

		for (i = 0; i < 4; i++)
			if (pthread_create(&t[i], NULL, churn_thread, (void *)(uintptr_t)(round * 4 + i + 1)))
				FAIL("churn: pthread_create failed");
		for (i = 0; i < 4; i++)
			pthread_join(t[i], NULL);
	}
	for (i = 0; i < KEEP; i++)
		if (kept[i]) {
			check(kept[i], kept_size[i], "churn kept");
			free(kept[i]);
		}
	return 0;
}

/* ---- fork: fork while other threads allocate, then allocate in the child ---- */

static atomic_int stop;

static void *busy_thread(void *arg)
{
	uint64_t s = (uintptr_t)arg | 1;

	while (!atomic_load(&stop)) {
		size_t n = rand_size(&s);
		void *p = malloc(n);

		if (!p)
			FAIL("fork: malloc failed");
		fill(p, n);
		check(p, n, "fork busy");
		free(p);
	}
	return NULL;
}

static int mode_fork(void)
{
	pthread_t t[3];
	int i, k;

	for (i = 0; i < 3; i++)
		pthread_create(&t[i], NULL, busy_thread, (void *)(uintptr_t)(i + 7));
	for (k = 0; k < 100; k++) {
		pid_t pid = fork();
		int st;

		if (pid < 0)
			FAIL("fork failed: %s", strerror(errno));
		if (pid == 0) {
			uint64_t s = 99;
			void *p[200];
			size_t n[200];
			int j;

			alarm(20);	/* a lock a busy thread held at the fork: never freed */
			for (j = 0; j < 200; j++) {
				n[j] = rand_size(&s);
				p[j] = malloc(n[j]);
				if (!p[j])
					_exit(3);
				fill(p[j], n[j]);
			}
			for (j = 0; j < 200; j++) {
				check(p[j], n[j], "fork child");
				free(p[j]);
			}
			_exit(0);
		}
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			FAIL("fork: child %d failed (status %#x%s)", k, st,
			     WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM ?
				     ": its mallocs hung 20 s, on a lock held at the fork" : "");
	}
	atomic_store(&stop, 1);
	for (i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	return 0;
}

/* ---- realloc: grow and shrink, small to huge and back ---- */

static int mode_realloc(void)
{
	static const size_t steps[] = { 1, 24, 100, 1000, 5000, 40000, 70000, 300000,
		1 << 20, 5 << 20, 70 << 20, 150 << 20, 3 << 20, 65536, 4000, 17, 0 };
	uint64_t s = 5;
	int round;

	for (round = 0; round < 20; round++) {
		size_t old = 16, i;
		unsigned char *p = malloc(old);

		for (i = 0; i < old; i++)
			p[i] = (unsigned char)(i * 13 + round);
		for (i = 0; steps[i]; i++) {
			size_t n = round % 2 ? steps[i] : rand_size(&s) * (1 + round), j, keep;
			unsigned char *q = realloc(p, n);

			if (!q)
				FAIL("realloc(%zu) failed", n);
			keep = old < n ? old : n;
			for (j = 0; j < keep; j++)
				if (q[j] != (unsigned char)(j * 13 + round))
					FAIL("realloc %zu -> %zu lost byte %zu", old, n, j);
			for (j = keep; j < n; j++)
				q[j] = (unsigned char)(j * 13 + round);
			if (malloc_usable_size(q) < n)
				FAIL("usable size %zu < %zu", malloc_usable_size(q), n);
			p = q;
			old = n;
		}
		/* In-place growth of the last large object, as a loop of small steps. */
		for (i = 0; i < 200; i++) {
			size_t n = old + 8192, j;
			unsigned char *q = realloc(p, n);

			if (!q)
				FAIL("realloc growth failed");
			for (j = 0; j < old; j += 509)
				if (q[j] != (unsigned char)(j * 13 + round))
					FAIL("realloc growth lost data");
			for (j = old; j < n; j++)
				q[j] = (unsigned char)(j * 13 + round);
			p = q;
			old = n;
		}
		errno = 0;
		if (realloc(p, 0) != NULL)
			FAIL("realloc(p, 0) did not free and return NULL");
	}
	return 0;
}

/* ---- align: every power of two up to 1 GiB, every entry point ---- */

static int mode_align(void)
{
	size_t a, sizes[] = { 1, 8, 100, 4096, 70000 };
	unsigned i;

	for (a = 1; a <= (size_t)1 << 30; a <<= 1) {
		for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			size_t n = sizes[i];
			void *p = NULL, *q, *r;
			int rc = posix_memalign(&p, a < sizeof(void *) ? sizeof(void *) : a, n);

			if (rc != 0 || !p || (uintptr_t)p % (a < sizeof(void *) ? sizeof(void *) : a))
				FAIL("posix_memalign(%zu, %zu) = %d, %p", a, n, rc, p);
			q = memalign(a, n);
			r = aligned_alloc(a, n);
			if (!q || (uintptr_t)q % a || !r || (uintptr_t)r % a)
				FAIL("memalign/aligned_alloc(%zu, %zu) misaligned: %p %p", a, n, q, r);
			fill(p, n);
			fill(q, n);
			fill(r, n);
			if (malloc_usable_size(q) < n)
				FAIL("usable size of memalign(%zu, %zu) too small", a, n);
			check(p, n, "align p");
			check(q, n, "align q");
			check(r, n, "align r");
			free(p);
			free(q);
			free(r);
		}
	}
	{
		void *p = valloc(10), *q = pvalloc(10);
		void *x;

		if (!p || (uintptr_t)p % 4096 || !q || (uintptr_t)q % 4096 || malloc_usable_size(q) < 4096)
			FAIL("valloc/pvalloc");
		free(p);
		free(q);
		if (posix_memalign(&x, 24, 8) != EINVAL)
			FAIL("posix_memalign(24) did not return EINVAL");
		if (posix_memalign(&x, 2, 8) != EINVAL)
			FAIL("posix_memalign(2) did not return EINVAL");
	}
	return 0;
}

/* ---- calloc: zeroes, overflow ---- */

static int mode_calloc(void)
{
	uint64_t s = 11;
	int i;

	{
		/* Dirty whole regions with large blocks, free them (they wait for the decay
		 * delay, still dirty), then calloc a block spanning regions. */
		unsigned char *blk[160], *p;
		size_t j;

		for (i = 0; i < 160; i++) {
			blk[i] = malloc(2 << 20);
			if (!blk[i])
				FAIL("malloc(2 MiB) failed");
			memset(blk[i], 0x5a, 2 << 20);
		}
		for (i = 0; i < 160; i++)
			free(blk[i]);
		p = calloc(1, 130 << 20);
		if (!p)
			FAIL("calloc(130 MiB) failed");
		for (j = 0; j < (130u << 20); j += 512)
			if (p[j])
				FAIL("calloc(130 MiB) over freed dirty regions: byte %zu not zero", j);
		free(p);
	}
	for (i = 0; i < 20000; i++) {
		size_t n = rand_size(&s), j;
		unsigned char *p = calloc(1, n);

		if (!p)
			FAIL("calloc(%zu) failed", n);
		for (j = 0; j < n; j++)
			if (p[j])
				FAIL("calloc(%zu) byte %zu not zero", n, j);
		memset(p, 0xa5, n);	/* dirty it for the next calloc of this slot */
		free(p);
	}
	{
		unsigned char *p = calloc(1, 200 << 20);
		size_t j;

		if (!p)
			FAIL("calloc(200 MiB) failed");
		for (j = 0; j < (200u << 20); j += 4096)
			if (p[j])
				FAIL("calloc(200 MiB) not zero");
		free(p);
	}
	/* volatile: the compiler would see the overflow and warn. */
	volatile size_t big = SIZE_MAX / 2, three = 3;

	errno = 0;
	if (calloc(big, three) != NULL || errno != ENOMEM)
		FAIL("calloc overflow not ENOMEM");
	errno = 0;
	if (reallocarray(NULL, big / 2, 8) != NULL || errno != ENOMEM)
		FAIL("reallocarray overflow not ENOMEM");
	return 0;
}

/* ---- huge: impossible sizes fail with ENOMEM; errno rules ---- */

static int mode_huge(void)
{
	volatile size_t sizes[] = { SIZE_MAX, SIZE_MAX - 4096, (size_t)1 << 62, (size_t)1 << 47 };
	unsigned i;
	void *p;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		errno = 0;
		if (malloc(sizes[i]) != NULL || errno != ENOMEM)
			FAIL("malloc(%zu) did not fail with ENOMEM", sizes[i]);
		errno = 0;
		if (memalign(1 << 20, sizes[i]) != NULL || errno != ENOMEM)
			FAIL("memalign(1M, %zu) did not fail with ENOMEM", sizes[i]);
		p = malloc(8);
		errno = 0;
		if (realloc(p, sizes[i]) != NULL || errno != ENOMEM)
			FAIL("realloc(p, %zu) did not fail with ENOMEM", sizes[i]);
		free(p);
	}
	p = malloc(0);
	if (!p)
		FAIL("malloc(0) returned NULL");
	free(p);
	errno = 1234;
	free(NULL);
	p = malloc(100);
	free(p);
	p = malloc(1 << 20);
	free(p);
	if (errno != 1234)
		FAIL("free changed errno");
	/* A large and a huge allocation, touched, in a loop: memory is reused. */
	for (i = 0; i < 50; i++) {
		char *q = malloc((size_t)300 << 20);

		if (!q)
			FAIL("malloc(300 MiB) failed");
		q[0] = 1;
		q[((size_t)300 << 20) - 1] = 2;
		free(q);
	}
	return 0;
}

/* ---- remote frees leave the objects alone ----
 * A thread that only frees hands main's objects back in batches of pointers: it
 * reads each object's free key but writes nothing into it, and nothing is written
 * into them until main takes them back (its next refill). Linking them through
 * their first words, as before, cost a cache miss on each side for each object.
 * Reading freed objects is this test's privilege: they are not handed out between. */
#define RB_OBJS 200

static void *rb_objs[RB_OBJS];

static void *rb_free_all(void *arg)
{
	(void)arg;
	for (int i = 0; i < RB_OBJS; i++)
		free(rb_objs[i]);
	return NULL;
}

static int mode_remote_batch(void)
{
	pthread_t t;
	int i;

	for (i = 0; i < RB_OBJS; i++) {
		rb_objs[i] = malloc(64);
		if (!rb_objs[i])
			FAIL("remote-batch: malloc(64) failed");
		fill(rb_objs[i], 64);
	}
	if (pthread_create(&t, NULL, rb_free_all, NULL) != 0)
		FAIL("remote-batch: pthread_create");
	pthread_join(t, NULL);
	for (i = 0; i < RB_OBJS; i++)
		for (size_t k = 0; k < 64; k++)
			if (((unsigned char *)rb_objs[i])[k] != pat(rb_objs[i], k))
				FAIL("remote-batch: object %d written at byte %zu by its remote free", i, k);
	/* Taken back: every one handed out again, intact as the allocator's. */
	for (i = 0; i < 4 * RB_OBJS; i++) {
		void *p = malloc(64);

		if (!p)
			FAIL("remote-batch: malloc(64) after the frees failed");
		fill(p, 64);
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(void);
	} modes[] = {
		{ "xthread", mode_xthread }, { "churn", mode_churn }, { "fork", mode_fork },
		{ "realloc", mode_realloc }, { "align", mode_align }, { "calloc", mode_calloc },
		{ "huge", mode_huge }, { "remote-batch", mode_remote_batch },
	};
	unsigned i;

	if (argc != 2) {
		fprintf(stderr, "usage: stress MODE\n");
		return 2;
	}
	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (strcmp(argv[1], modes[i].name) == 0)
			return modes[i].fn();
	fprintf(stderr, "stress: unknown mode %s\n", argv[1]);
	return 2;
}
