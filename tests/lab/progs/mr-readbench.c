/* mr-readbench: a benchmark whose speed scales with memory, for Hansen's scenarios
 * (bench/hansen.sh): random block reads of a data set larger than part of the guest's
 * memory, through the page cache, so every block the cache holds is a hit and every
 * other one a read from the virtio disk (cache=none on the host: the host's page cache
 * hides nothing). Every 4 KiB page of the data set starts with its own index, so each
 * read is checked. Beside the speed it counts the page-cache hit ratio (mincore on a
 * mapping of the file just before each read): what the memory holds, which the load on
 * a shared machine does not change the way it changes MB/s.
 *   mr-readbench make FILE SIZE      write the data set (on the host)
 *   mr-readbench run FILE SECONDS [BLOCK]
 *                                    one sequential pass (the cache as full as it gets),
 *                                    then random BLOCK reads (default 64K) for SECONDS;
 *                                    one key=value line on stdout */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"

#define PAGE_BYTES 4096u
#define STAMP_MAGIC UINT64_C(0x6d72656164000000)	/* "mread" */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int usage(void)
{
	fprintf(stderr, "usage: mr-readbench make FILE SIZE\n"
		"       mr-readbench run FILE SECONDS [BLOCK]\n");
	return 2;
}

static int make_set(const char *path, const char *size_arg)
{
	static unsigned char buf[1u << 20];
	uint64_t size, off;
	int fd;

	if (mr_parse_size(size_arg, &size) || size == 0 || size % sizeof(buf)) {
		fprintf(stderr, "mr-readbench: bad size '%s' (a positive multiple of 1M)\n", size_arg);
		return 2;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "mr-readbench: %s: %s\n", path, strerror(errno));
		return 1;
	}
	for (off = 0; off < size; off += sizeof(buf)) {
		uint64_t p;

		for (p = 0; p < sizeof(buf); p += PAGE_BYTES) {
			uint64_t stamp = STAMP_MAGIC ^ ((off + p) / PAGE_BYTES);

			memcpy(buf + p, &stamp, sizeof(stamp));
			memset(buf + p + sizeof(stamp), (int)((off + p) / PAGE_BYTES & 0xff),
			       PAGE_BYTES - sizeof(stamp));
		}
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf)) {
			fprintf(stderr, "mr-readbench: writing %s: %s\n", path,
				strerror(errno ? errno : EIO));
			close(fd);
			return 1;
		}
	}
	return close(fd) ? 1 : 0;
}

/* Read [off, off + len) and check every page's stamp; -1 on a short read or a bad page. */
static int read_check(int fd, unsigned char *buf, uint64_t off, uint64_t len)
{
	uint64_t p;

	if (pread(fd, buf, len, (off_t)off) != (ssize_t)len) {
		fprintf(stderr, "mr-readbench: read at %" PRIu64 ": %s\n", off,
			errno ? strerror(errno) : "short read");
		return -1;
	}
	for (p = 0; p < len; p += PAGE_BYTES) {
		uint64_t stamp;

		memcpy(&stamp, buf + p, sizeof(stamp));
		if (stamp != (STAMP_MAGIC ^ ((off + p) / PAGE_BYTES))) {
			fprintf(stderr, "mr-readbench: page at %" PRIu64 " holds the wrong data\n",
				off + p);
			return -1;
		}
	}
	return 0;
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Is every page of [off, off + len) of the file in the page cache? (A mapping that is
 * never touched: mincore reads the cache, it does not fault pages in.) */
static bool resident(const unsigned char *map, unsigned char *vec, uint64_t off, uint64_t len)
{
	if (mincore((void *)(map + off), len, vec))
		return false;
	for (uint64_t i = 0; i < len / PAGE_BYTES; i++)
		if (!(vec[i] & 1))
			return false;
	return true;
}

static int run(const char *path, const char *secs_arg, const char *block_arg)
{
	uint64_t block = 64u << 10, seconds, size, nr_blocks, reads = 0, hits = 0;
	uint64_t seed = 88172645463325252u;
	unsigned char *buf, *map, *vec;
	struct stat st;
	double t0, warm_s, t;
	int fd;

	if (mr_parse_u64(secs_arg, &seconds) || seconds == 0 ||
	    (block_arg && (mr_parse_size(block_arg, &block) || !block || block % PAGE_BYTES)))
		return usage();
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		fprintf(stderr, "mr-readbench: %s: %s\n", path, strerror(errno));
		return 1;
	}
	size = (uint64_t)st.st_size;
	nr_blocks = size / block;
	buf = aligned_alloc(PAGE_BYTES, block);
	vec = malloc(block / PAGE_BYTES);
	map = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	if (!buf || !vec || map == MAP_FAILED || nr_blocks == 0) {
		fprintf(stderr, "mr-readbench: %s: no room or no data\n", path);
		return 1;
	}
	t0 = now_s();
	for (uint64_t b = 0; b < nr_blocks; b++)
		if (read_check(fd, buf, b * block, block))
			return 1;
	warm_s = now_s() - t0;
	t0 = now_s();
	do {
		for (unsigned i = 0; i < 64; i++, reads++) {
			uint64_t off = xorshift(&seed) % nr_blocks * block;

			hits += resident(map, vec, off, block);
			if (read_check(fd, buf, off, block))
				return 1;
		}
		t = now_s() - t0;
	} while (t < (double)seconds);
	printf("readbench dataset_bytes=%" PRIu64 " block_bytes=%" PRIu64 " warm_s=%.3f "
	       "reads=%" PRIu64 " seconds=%.3f MBps=%.2f hit_pct=%.1f\n", size, block, warm_s,
	       reads, t, (double)(reads * block) / t / 1e6, 100.0 * (double)hits / (double)reads);
	munmap(map, size);
	free(vec);
	free(buf);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "make"))
		return make_set(argv[2], argv[3]);
	if ((argc == 4 || argc == 5) && !strcmp(argv[1], "run"))
		return run(argv[2], argv[3], argc == 5 ? argv[4] : NULL);
	return usage();
}
