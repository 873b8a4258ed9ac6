/* What a purge of free pages costs the allocator's OS layer (allocator/os.c), one
 * range at a time (madvise) against batches given to one process_madvise(2) on the
 * process itself: RANGES ranges of PAGES pages, TOUCHED of them written before each
 * purge (a free block's dirty head), MADV_DONTNEED. Medians of RUNS rounds, the
 * methods interleaved in each. Not a test: run it by hand,
 *     bench/purge-batch [-n RUNS] [-r RANGES] [-p PAGES] [-t TOUCHED]
 * (docs/allocator.md, "Purges in one call"). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "bench/stats.h"

#ifndef SYS_process_madvise
#define SYS_process_madvise 440
#endif
#define SELF (-10001)		/* PIDFD_SELF_THREAD_GROUP, Linux 6.15 */
#define PG 4096ul
#define MAX_RUNS 101

static char *area;
static unsigned long ranges = 4096, pages = 16, touched = 2;
static struct iovec *iov;

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void touch(void)
{
	unsigned long i, j;

	for (i = 0; i < ranges; i++)
		for (j = 0; j < touched; j++)
			area[(i * pages + j) * PG] = 1;
}

/* Microseconds a range: batch 0 is a madvise per range. */
static double purge(unsigned long batch)
{
	unsigned long i, n;
	double t;

	touch();
	t = now_us();
	if (!batch) {
		for (i = 0; i < ranges; i++)
			if (madvise(area + i * pages * PG, pages * PG, MADV_DONTNEED) != 0) {
				perror("madvise");
				exit(1);
			}
	} else {
		for (i = 0; i < ranges; i += n) {
			n = ranges - i < batch ? ranges - i : batch;
			if (syscall(SYS_process_madvise, SELF, iov + i, n, MADV_DONTNEED, 0u) !=
			    (long)(n * pages * PG)) {
				perror("process_madvise");
				exit(1);
			}
		}
	}
	return (now_us() - t) / (double)ranges;
}

static unsigned long number(const char *s, unsigned long lo, unsigned long hi, const char *what)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi) {
		fprintf(stderr, "purge-batch: %s: '%s' is not a number from %lu to %lu\n", what, s,
			lo, hi);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	static const unsigned long batches[] = { 0, 64, 1024 };
	static double t[3][MAX_RUNS];
	unsigned runs = 9, r, m, nm = 3;
	unsigned long i;
	int c;

	while ((c = getopt(argc, argv, "n:r:p:t:h")) != -1) {
		switch (c) {
		case 'n': runs = (unsigned)number(optarg, 1, MAX_RUNS, "-n"); break;
		case 'r': ranges = number(optarg, 1, 1ul << 20, "-r"); break;
		case 'p': pages = number(optarg, 1, 1ul << 12, "-p"); break;
		case 't': touched = number(optarg, 0, 1ul << 12, "-t"); break;
		default:
			printf("usage: purge-batch [-n RUNS (9)] [-r RANGES (4096)] [-p PAGES (16)] "
			       "[-t TOUCHED (2)]\n");
			return c == 'h' ? 0 : 2;
		}
	}
	if (touched > pages) {
		fprintf(stderr, "purge-batch: -t %lu is more than -p %lu\n", touched, pages);
		return 2;
	}
	area = mmap(NULL, ranges * pages * PG, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	iov = calloc(ranges, sizeof(*iov));
	if (area == MAP_FAILED || !iov) {
		perror("purge-batch: memory");
		return 1;
	}
	for (i = 0; i < ranges; i++) {
		iov[i].iov_base = area + i * pages * PG;
		iov[i].iov_len = pages * PG;
	}
	if (syscall(SYS_process_madvise, SELF, iov, 1ul, MADV_DONTNEED, 0u) < 0) {
		printf("process_madvise on itself: %s (needs Linux 6.15): madvise only\n",
		       strerror(errno));
		nm = 1;
	}
	for (r = 0; r < runs; r++)
		for (m = 0; m < nm; m++)
			t[m][r] = purge(batches[m]);
	printf("%lu ranges of %lu pages, %lu written, MADV_DONTNEED; median of %u runs\n",
	       ranges, pages, touched, runs);
	printf("%-22s %12s %10s\n", "method", "us/range", "ratio");
	for (m = 0; m < nm; m++) {
		char name[48];
		double v = mr_bench_median(t[m], runs);

		if (batches[m])
			snprintf(name, sizeof(name), "process_madvise x%lu", batches[m]);
		else
			snprintf(name, sizeof(name), "madvise per range");
		printf("%-22s %12.2f %10.3f\n", name, v, v / mr_bench_median(t[0], runs));
	}
	return 0;
}
