/* mr-time: run a command and print its wall time in nanoseconds on stderr
 * ("elapsed_ns N"); exits with the command's status. busybox has no clock finer than
 * a second, and the lab benchmarks need one. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	uint64_t t0;
	pid_t pid;
	int st;

	if (argc < 2) {
		fprintf(stderr, "usage: mr-time COMMAND [ARG...]\n");
		return 2;
	}
	t0 = now_ns();
	pid = fork();
	if (pid < 0) {
		perror("mr-time: fork");
		return 1;
	}
	if (pid == 0) {
		execvp(argv[1], argv + 1);
		perror("mr-time: exec");
		_exit(127);
	}
	if (waitpid(pid, &st, 0) < 0) {
		perror("mr-time: waitpid");
		return 1;
	}
	fprintf(stderr, "elapsed_ns %llu\n", (unsigned long long)(now_ns() - t0));
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
