/* A program linked with -lmemreg (not preloaded), for tests/alloc/packaging.sh:
 * api-prog stats: memreg_get_stats against mallinfo2, before and after malloc_trim;
 * api-prog fork: a child that outlives its parent, both with MEMREG_SITE_MAP. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "memreg.h"

#define FAIL(...) do { fprintf(stderr, "api-prog: " __VA_ARGS__); fputc('\n', stderr); exit(1); } while (0)

static struct memreg_stats get(void)
{
	struct memreg_stats st;

	memset(&st, 0xff, sizeof(st));
	if (memreg_get_stats(&st, sizeof(st)) != 0)
		FAIL("memreg_get_stats failed");
	return st;
}

static int stats(void)
{
	static void *blocks[1024];
	struct memreg_stats st, after;
	struct mallinfo2 mi;

	for (int i = 0; i < 1024; i++) {
		blocks[i] = malloc(64 << 10);
		if (!blocks[i] || memreg_class_of(blocks[i]) < 0)
			FAIL("malloc(64 KiB) not served by libmemreg");
		memset(blocks[i], 1, 64 << 10);
	}
	for (int i = 0; i < 1024; i++)
		if (i % 4) {
			free(blocks[i]);
			blocks[i] = NULL;
		}
	st = get();
	mi = mallinfo2();
	if (st.used_bytes != mi.uordblks + mi.hblkhd || st.free_bytes != mi.fordblks ||
	    st.releasable_bytes != mi.keepcost)
		FAIL("memreg_get_stats: used %llu free %llu releasable %llu; mallinfo2: %zu + %zu, %zu, %zu",
		     (unsigned long long)st.used_bytes, (unsigned long long)st.free_bytes,
		     (unsigned long long)st.releasable_bytes, mi.uordblks, mi.hblkhd, mi.fordblks,
		     mi.keepcost);
	if (st.region_bytes != 64 << 20 || st.used_bytes < (16u << 20) || st.releasable_bytes < (40u << 20))
		FAIL("memreg_get_stats: region %llu used %llu releasable %llu",
		     (unsigned long long)st.region_bytes, (unsigned long long)st.used_bytes,
		     (unsigned long long)st.releasable_bytes);
	if (malloc_trim(0) != 1)
		FAIL("malloc_trim(0) with 48 MiB free did not release");
	after = get();
	if (after.releasable_bytes != 0 || after.purged_bytes < st.purged_bytes + st.releasable_bytes)
		FAIL("after malloc_trim: releasable %llu, purged %llu (before: %llu, %llu)",
		     (unsigned long long)after.releasable_bytes, (unsigned long long)after.purged_bytes,
		     (unsigned long long)st.releasable_bytes, (unsigned long long)st.purged_bytes);
	printf("stats: used %llu, releasable %llu -> trim -> releasable %llu, purged %llu\n",
	       (unsigned long long)st.used_bytes, (unsigned long long)st.releasable_bytes,
	       (unsigned long long)after.releasable_bytes, (unsigned long long)after.purged_bytes);
	/* A shorter struct (an older caller) gets its part only. */
	memset(&st, 0xee, sizeof(st));
	if (memreg_get_stats(&st, sizeof(uint64_t)) != 0 || st.region_bytes != 64 << 20 ||
	    st.regions_live != 0xeeeeeeeeeeeeeeeeu)
		FAIL("memreg_get_stats(st, 8) wrote past its size");
	if (memreg_get_stats(NULL, sizeof(st)) >= 0)
		FAIL("memreg_get_stats(NULL) did not fail");
	return 0;
}

/* The parent exits at once, the child (a fork, same options) half a second later. */
static int fork_late(void)
{
	pid_t pid;

	free(malloc(100));
	pid = fork();
	if (pid < 0)
		FAIL("fork failed");
	if (pid == 0) {
		free(malloc(200));
		usleep(500000);
		exit(0);
	}
	printf("%ld %ld\n", (long)getpid(), (long)pid);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "stats"))
		return stats();
	if (argc > 1 && !strcmp(argv[1], "fork"))
		return fork_late();
	fprintf(stderr, "usage: api-prog stats|fork\n");
	return 2;
}
