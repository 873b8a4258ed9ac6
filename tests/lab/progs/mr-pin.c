/* mr-pin: a lab test program that holds memory the kernel cannot migrate. Allocates
 * SIZE bytes bound to NODE, then vmsplice(2)s their first pages into a pipe nobody
 * reads: the pipe keeps references to the pages, so migration of them fails and an
 * offline of their memory block retries until it is stopped. Prints "ready PID" and
 * waits for SIGTERM. `mr-pin SIZE NODE`. */
#include "config.h"

#define _GNU_SOURCE 1
#include <fcntl.h>
#include <numaif.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/util.h"

int main(int argc, char **argv)
{
	uint64_t size, node;
	unsigned long mask;
	struct iovec iov;
	sigset_t set;
	int fds[2], sig;
	char *p;

	if (argc != 3 || mr_parse_size(argv[1], &size) || size < 65536 || size % 4096 ||
	    mr_parse_u64(argv[2], &node) || node >= 64) {
		fprintf(stderr, "usage: mr-pin SIZE NODE   (SIZE >= 64K, a multiple of 4K)\n");
		return 2;
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("mr-pin: mmap");
		return 1;
	}
	mask = 1ul << node;
	if (mbind(p, size, MPOL_BIND, &mask, 64, 0)) {
		perror("mr-pin: mbind");
		return 1;
	}
	memset(p, 0x5a, size);
	if (pipe(fds)) {
		perror("mr-pin: pipe");
		return 1;
	}
	/* 64 KiB: what a default pipe holds without a reader. */
	iov.iov_base = p;
	iov.iov_len = 65536;
	if (vmsplice(fds[1], &iov, 1, 0) < 0) {
		perror("mr-pin: vmsplice");
		return 1;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	sigwait(&set, &sig);
	return 0;
}
