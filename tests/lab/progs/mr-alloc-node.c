/* mr-alloc-node: a lab test program for the allocator's node mode. Allocates SIZE
 * bytes with malloc in 64 KiB pieces while running on CPU ALLOC_CPU, then moves to CPU
 * TOUCH_CPU and only there writes the pieces for the first time, prints "ready PID"
 * and waits for SIGTERM, then verifies the pattern (exit 0 intact, 1 corrupt).
 * Under the kernel's default policy pages land on the node of the first touch
 * (TOUCH_CPU's); under libmemreg.so they land where the allocator bound the region:
 * the node of the thread that allocated it (ALLOC_CPU's). `mr-alloc-node SIZE ALLOC_CPU TOUCH_CPU` */
#include "config.h"

#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/util.h"

#define PIECE_BYTES (64u << 10)

static int pin(uint64_t cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET((int)cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		perror("mr-alloc-node: sched_setaffinity");
		return -1;
	}
	sched_yield();	/* the move takes effect at the next scheduling point */
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t size, alloc_cpu, touch_cpu;
	size_t n, i, j;
	uint64_t **pieces;
	sigset_t set;
	int sig, bad = 0;

	if (argc != 4 || mr_parse_size(argv[1], &size) || size < PIECE_BYTES ||
	    mr_parse_u64(argv[2], &alloc_cpu) || alloc_cpu >= CPU_SETSIZE ||
	    mr_parse_u64(argv[3], &touch_cpu) || touch_cpu >= CPU_SETSIZE) {
		fprintf(stderr, "usage: mr-alloc-node SIZE ALLOC_CPU TOUCH_CPU\n");
		return 2;
	}
	n = size / PIECE_BYTES;
	if (pin(alloc_cpu))
		return 1;
	pieces = calloc(n, sizeof(*pieces));
	for (i = 0; pieces && i < n; i++)
		if (!(pieces[i] = malloc(PIECE_BYTES))) {
			perror("mr-alloc-node: malloc");
			return 1;
		}
	if (!pieces || pin(touch_cpu))
		return 1;
	for (i = 0; i < n; i++)
		for (j = 0; j < PIECE_BYTES / 8; j++)
			pieces[i][j] = i * 1000003u + j;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	if (sigwait(&set, &sig))
		return 1;
	for (i = 0; i < n; i++)
		for (j = 0; j < PIECE_BYTES / 8; j++)
			bad |= pieces[i][j] != i * 1000003u + j;
	printf("mr-alloc-node: %s\n", bad ? "CORRUPT" : "verified intact");
	return bad;
}
