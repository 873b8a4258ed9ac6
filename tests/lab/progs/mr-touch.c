/* mr-touch: a lab test program. Allocates SIZE bytes (bound to NODE with MPOL_BIND
 * unless NODE is '-'), fills them with a pattern, prints "ready PID ADDR SIZE" and
 * waits: SIGUSR2 verifies the pattern (with MR_TOUCH_WHERE=1 in the environment
 * also asks move_pages where each page is: "where: N/M pages on node K, ... X not
 * present") and goes on waiting, SIGUSR1 or SIGTERM verifies and exits 0 when every
 * byte is intact, 1 otherwise. */
#include "config.h"

#include <errno.h>
#include <numaif.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/util.h"

static uint64_t pattern(uint64_t i)
{
	return (i + 1) * UINT64_C(0x9E3779B97F4A7C15) ^ UINT64_C(0xa5a5a5a5deadbeef);
}

static int verify(const uint64_t *p, size_t words)
{
	size_t i;

	for (i = 0; i < words; i++)
		if (p[i] != pattern(i)) {
			printf("mr-touch: CORRUPT at byte %zu: %#llx, expected %#llx\n", i * 8,
			       (unsigned long long)p[i], (unsigned long long)pattern(i));
			fflush(stdout);
			return 1;
		}
	printf("mr-touch: verified %zu bytes intact\n", words * 8);
	fflush(stdout);
	return 0;
}

/* The process's own view of where its pages are (move_pages with no target nodes). */
static void where(void *p, uint64_t bytes)
{
	uint64_t page = 4096, n = bytes / page, i, k, per[64] = { 0 }, other = 0;
	void **pages = calloc(n, sizeof(*pages));
	int *status = calloc(n, sizeof(*status));

	if (!pages || !status) {
		printf("mr-touch: where: out of memory\n");
		goto out;
	}
	for (i = 0; i < n; i++)
		pages[i] = (char *)p + i * page;
	if (move_pages(0, n, pages, NULL, status, 0)) {
		perror("mr-touch: move_pages");
		goto out;
	}
	for (i = 0; i < n; i++) {
		if (status[i] >= 0 && status[i] < 64)
			per[status[i]]++;
		else
			other++;
	}
	printf("mr-touch: where:");
	for (k = 0; k < 64; k++)
		if (per[k])
			printf(" %llu/%llu pages on node %llu,", (unsigned long long)per[k],
			       (unsigned long long)n, (unsigned long long)k);
	printf(" %llu not present\n", (unsigned long long)other);
	fflush(stdout);
out:
	free(pages);
	free(status);
}

int main(int argc, char **argv)
{
	uint64_t size, node;
	size_t words, i;
	sigset_t set;
	uint64_t *p;
	bool where_too;
	int sig;

	if (argc != 3 || mr_parse_size(argv[1], &size) || !size || size % 4096 ||
	    (strcmp(argv[2], "-") && (mr_parse_u64(argv[2], &node) || node >= 64))) {
		fprintf(stderr, "usage: mr-touch SIZE NODE|-   (SIZE a multiple of 4K)\n");
		return 2;
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("mr-touch: mmap");
		return 1;
	}
	if (strcmp(argv[2], "-")) {
		unsigned long mask = 1ul << node;

		if (mbind(p, size, MPOL_BIND, &mask, 64, 0)) {
			perror("mr-touch: mbind");
			return 1;
		}
	}
	where_too = getenv("MR_TOUCH_WHERE") && strcmp(getenv("MR_TOUCH_WHERE"), "1") == 0;
	words = size / 8;
	for (i = 0; i < words; i++)
		p[i] = pattern(i);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("ready %d %p %llu\n", (int)getpid(), (void *)p, (unsigned long long)size);
	fflush(stdout);
	for (;;) {
		if (sigwait(&set, &sig))
			return 1;
		if (sig == SIGUSR2) {
			verify(p, words);
			if (where_too)
				where(p, size);
			continue;
		}
		return verify(p, words);
	}
}
