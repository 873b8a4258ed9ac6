/* mr-hotcold: the control lab group's workload. Maps a HOT area (default 32 MiB) and
 * a COLD area (default 192 MiB) as two mappings, first touched on node 0 (preferred,
 * not bound: a move must be possible), fills both with a pattern, prints
 * "ready PID HOT_ADDR HOT_BYTES COLD_ADDR COLD_BYTES" and then touches every page of
 * the hot area over and over (reads and writes the same value back) until SIGTERM
 * or SIGINT. Then it verifies every byte of both areas, asks move_pages where each
 * page of each area is, prints "hot: N/M pages on node K ..." and "cold: ..." lines
 * and exits 0 when every byte is intact, 1 otherwise. */
#include "config.h"

#include <numaif.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/util.h"

#define MAX_NODES 64

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = sig;
}

static uint64_t pattern(uint64_t i, uint64_t salt)
{
	return (i + 1) * UINT64_C(0x9E3779B97F4A7C15) ^ salt;
}

static uint64_t *map_area(uint64_t bytes, uint64_t salt)
{
	unsigned long node0 = 1;
	/* a PROT_NONE guard page below: the two areas stay two mappings, so the
	 * monitor's regions never span both */
	char *g = mmap(NULL, bytes + 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	uint64_t *p;
	size_t i;

	if (g == MAP_FAILED || mprotect(g, 4096, PROT_NONE)) {
		perror("mr-hotcold: mmap");
		exit(1);
	}
	p = (uint64_t *)(g + 4096);
	/* no huge pages: the controller and move_pages count base pages */
	madvise(p, bytes, MADV_NOHUGEPAGE);
	if (mbind(p, bytes, MPOL_PREFERRED, &node0, MAX_NODES, 0))
		perror("mr-hotcold: mbind (first touch stays local)");
	for (i = 0; i < bytes / 8; i++)
		p[i] = pattern(i, salt);
	return p;
}

static int verify(const char *name, const uint64_t *p, uint64_t bytes, uint64_t salt)
{
	size_t i;

	for (i = 0; i < bytes / 8; i++)
		if (p[i] != pattern(i, salt)) {
			printf("%s: CORRUPT at byte %zu\n", name, i * 8);
			return 1;
		}
	printf("%s: verified %llu bytes intact\n", name, (unsigned long long)bytes);
	return 0;
}

/* Where the pages of [p, p + bytes) are, one line: "NAME: N/M pages on node K, ..." */
static void where(const char *name, void *p, uint64_t bytes)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), n = bytes / page, i, k;
	uint64_t per[MAX_NODES] = { 0 }, other = 0;
	void **pages = calloc(n, sizeof(*pages));
	int *status = calloc(n, sizeof(*status));

	if (!pages || !status) {
		printf("%s: out of memory\n", name);
		return;
	}
	for (i = 0; i < n; i++)
		pages[i] = (char *)p + i * page;
	if (move_pages(0, n, pages, NULL, status, 0)) {
		perror("mr-hotcold: move_pages");
		return;
	}
	for (i = 0; i < n; i++) {
		if (status[i] >= 0 && status[i] < MAX_NODES)
			per[status[i]]++;
		else
			other++;
	}
	printf("%s:", name);
	for (k = 0; k < MAX_NODES; k++)
		if (per[k])
			printf(" %llu/%llu pages on node %llu,", (unsigned long long)per[k],
			       (unsigned long long)n, (unsigned long long)k);
	printf(" %llu not present\n", (unsigned long long)other);
	free(pages);
	free(status);
}

int main(int argc, char **argv)
{
	uint64_t hot_bytes = 32 * MR_MIB, cold_bytes = 192 * MR_MIB, sum = 0, passes = 0;
	struct sigaction sa = { .sa_handler = on_signal };
	uint64_t *hot, *cold;
	size_t i;
	int bad;

	if ((argc > 1 && (mr_parse_size(argv[1], &hot_bytes) || hot_bytes % 4096 || !hot_bytes)) ||
	    (argc > 2 && (mr_parse_size(argv[2], &cold_bytes) || cold_bytes % 4096 || !cold_bytes)) ||
	    argc > 3) {
		fprintf(stderr, "usage: mr-hotcold [HOT_SIZE [COLD_SIZE]]\n");
		return 2;
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	cold = map_area(cold_bytes, UINT64_C(0xc01dc01dc01dc01d));
	hot = map_area(hot_bytes, UINT64_C(0x4077407740774077));
	printf("ready %d %p %llu %p %llu\n", (int)getpid(), (void *)hot,
	       (unsigned long long)hot_bytes, (void *)cold, (unsigned long long)cold_bytes);
	fflush(stdout);
	while (!stop) {
		volatile uint64_t *v = hot;

		for (i = 0; i < hot_bytes / 8 && !stop; i += 512) {	/* one word a page */
			uint64_t x = v[i];

			v[i] = x;
			sum += x;
		}
		passes++;
	}
	printf("hot passes: %llu (%llx)\n", (unsigned long long)passes, (unsigned long long)sum & 0xf);
	bad = verify("hot", hot, hot_bytes, UINT64_C(0x4077407740774077));
	bad |= verify("cold", cold, cold_bytes, UINT64_C(0xc01dc01dc01dc01d));
	where("hot", hot, hot_bytes);
	where("cold", cold, cold_bytes);
	fflush(stdout);
	return bad;
}
