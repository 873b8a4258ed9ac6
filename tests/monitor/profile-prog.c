/* The workload of tests/monitor/profile-e2e.sh: objects of a hot site (10% of the
 * bytes) interleaved in allocation order with a cold site's, the hot ones touched
 * repeatedly after "ready" until TOUCH_MS pass or SIGUSR1 arrives (then it exits
 * normally); prints the hot set's inflation (pages holding hot objects / hot pages'
 * worth of bytes). Usage: profile-prog BYTES TOUCH_MS [split] */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define OBJ_BYTES 512
#define PAGE 4096u

__attribute__((noipa, optimize("no-optimize-sibling-calls"))) static void *hot_site(size_t n)
{
	void *p = malloc(n);

	__asm__ volatile("# hot site" ::: "memory");
	return p;
}

__attribute__((noipa, optimize("no-optimize-sibling-calls"))) static void *cold_site(size_t n)
{
	void *p = malloc(n);

	__asm__ volatile("# cold site" ::: "memory");
	return p;
}

static int cmp_uptr(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;

	return x < y ? -1 : x > y;
}

static volatile sig_atomic_t stop_touching;

static void on_usr1(int sig)
{
	(void)sig;
	stop_touching = 1;
}

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	size_t total, n, nhot = 0, ncold = 0, i, pages = 0;
	uintptr_t lo = UINTPTR_MAX, hi = 0, *pg;
	char **hot, **cold;
	uint64_t s = 12345;
	double touch_ms, end;

	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: profile-prog BYTES TOUCH_MS [split]\n");
		return 2;
	}
	total = strtoull(argv[1], NULL, 0);
	touch_ms = strtod(argv[2], NULL);
	n = total / OBJ_BYTES;
	hot = malloc(n * sizeof(*hot));
	cold = malloc(n * sizeof(*cold));
	if (!hot || !cold)
		return 1;
	for (i = 0; i < n; i++) {
		char *p;

		s = s * 6364136223846793005ull + 1442695040888963407ull;
		if ((s >> 33) % 10 == 0)
			p = hot[nhot++] = hot_site(OBJ_BYTES);
		else
			p = cold[ncold++] = cold_site(OBJ_BYTES);
		if (!p)
			return 1;
		memset(p, 1, OBJ_BYTES);
		lo = (uintptr_t)p < lo ? (uintptr_t)p : lo;
		hi = (uintptr_t)p + OBJ_BYTES > hi ? (uintptr_t)p + OBJ_BYTES : hi;
	}
	pg = malloc(nhot * sizeof(*pg));
	for (i = 0; i < nhot; i++)
		pg[i] = (uintptr_t)hot[i] / PAGE;
	qsort(pg, nhot, sizeof(*pg), cmp_uptr);
	for (i = 0; i < nhot; i++)
		pages += i == 0 || pg[i] != pg[i - 1];
	printf("hot_bytes=%zu hot_pages=%zu inflation=%.2f\n", nhot * OBJ_BYTES, pages,
	       (double)pages / ((double)nhot * OBJ_BYTES / PAGE));
	fflush(stdout);
	/* The refs backend sees mappings, not pages: "split" makes every page of the heap a
	 * mapping of its own (a madvise flag on every other page, no effect on anonymous
	 * memory), the same for hot and cold pages, so a record has page resolution. */
	if (argc == 4 && !strcmp(argv[3], "split"))
		for (uintptr_t a = lo / PAGE * PAGE; a < hi; a += 2 * PAGE)
			madvise((void *)a, PAGE, MADV_RANDOM);
	/* before "ready": a SIGUSR1 sent once it is read must not kill the program */
	signal(SIGUSR1, on_usr1);
	printf("ready\n");
	fflush(stdout);
	end = now_ms() + touch_ms;
	while (!stop_touching && now_ms() < end)
		for (i = 0; i < nhot; i++)
			((volatile char *)hot[i])[i % OBJ_BYTES]++;
	free(pg);
	return 0;
}
