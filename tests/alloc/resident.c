/* Resident size of libmemreg's own doing, counted exactly with mincore over the
 * region holding the objects (tests/alloc/resident.sh, MEMREG_REGION_SIZE=64M,
 * MEMREG_NUMA=0): what each thread's cache makes resident, and which cache lines
 * and pages small objects allocated in a row take, and how a fresh slab's pages
 * become resident. Pages, addresses and fault counts, not times: nothing here is
 * timed. Usage: resident caches|lines|populate|bss|short  (prints its counts; exit 1 with why
 * if over, 77 with why if the kernel cannot count) */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "memreg.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define REGION_BYTES ((size_t)64 << 20)
#define PAGE 4096u

/* Resident pages of the 64 MiB region holding @p (arena pages only: the page
 * descriptors and the library's own data are elsewhere). */
static long region_resident(const void *p)
{
	static unsigned char vec[REGION_BYTES / PAGE];
	char *base = (char *)((uintptr_t)p & ~(uintptr_t)(REGION_BYTES - 1));
	long n = 0;
	size_t i;

	if (mincore(base, REGION_BYTES, vec) != 0) {
		perror("resident: mincore");
		exit(99);
	}
	for (i = 0; i < sizeof(vec); i++)
		n += vec[i] & 1;
	return n;
}

/* ---- caches: what a thread that allocates one small object makes resident ----
 * Its cache (the bins of one temperature and the page of its header: 2 pages of
 * 4; before, every cache was written whole) and the first page of its slab. */

#define THREADS 16
static pthread_barrier_t ready, done;

static void *thread_alloc(void *arg)
{
	void **out = arg;

	*out = malloc(16);
	memset(*out, 1, 16);
	pthread_barrier_wait(&ready);
	pthread_barrier_wait(&done);	/* the cache stays the thread's until counted */
	free(*out);
	return NULL;
}

static int mode_caches(void)
{
	pthread_t t[THREADS];
	void *obj[THREADS];
	void *first = malloc(16);
	long before, after, per_thread_x100;
	int i;

	memset(first, 1, 16);
	pthread_barrier_init(&ready, NULL, THREADS + 1);
	pthread_barrier_init(&done, NULL, THREADS + 1);
	before = region_resident(first);
	for (i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, thread_alloc, &obj[i]) != 0) {
			perror("resident: pthread_create");
			return 99;
		}
	pthread_barrier_wait(&ready);
	after = region_resident(first);
	for (i = 0; i < THREADS; i++)
		if (((uintptr_t)obj[i] ^ (uintptr_t)first) >= REGION_BYTES) {
			printf("thread %d's object %p is not in the region of %p\n", i, obj[i], first);
			return 1;
		}
	pthread_barrier_wait(&done);
	for (i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	free(first);
	per_thread_x100 = (after - before) * 100 / THREADS;
	printf("first allocation: %ld pages; %d threads: %ld pages more, %ld.%02ld a thread\n",
	       before, THREADS, after - before, per_thread_x100 / 100, per_thread_x100 % 100);
	/* 3 a thread (2 of its cache, 1 of its slab) and a few pages for what
	 * pthread_create allocates in the main thread (2 here): 50 for 16 threads.
	 * Before, every cache was written whole: 66 (3-page caches), the first
	 * allocation 4 pages, now 3. */
	if (after - before > 3 * THREADS + 4 || before > 4) {
		printf("over: at most 3 pages a thread (+4) and 4 for the first allocation\n");
		return 1;
	}
	return 0;
}

/* ---- lines: small objects allocated in a row, each in a cache line of its own ----
 * A thread that allocates 16- or 32-byte objects in a row for other threads (the
 * falseshare workload of bench/alloc-bench.c: per-worker counters) must not put
 * two of them in one cache line while 64 in a row fit in a page's lines, and must
 * still fill the page before it touches another (the same pages resident as in
 * address order). Run in a new thread, so its bins start on fresh slabs. */
#define LINE 64u

static int lines_check(size_t size, char *why, size_t whylen)
{
	size_t per_page = PAGE / size, i, j;
	uintptr_t *a = calloc(per_page, sizeof(*a));
	unsigned char in_line[PAGE / LINE] = { 0 };
	int bad = 0;

	if (!a) {
		snprintf(why, whylen, "calloc failed");
		return 1;
	}
	for (i = 0; i < per_page; i++)
		a[i] = (uintptr_t)malloc(size);
	for (i = 0; i < per_page && !bad; i++) {
		if (a[i] / PAGE != a[0] / PAGE) {
			snprintf(why, whylen, "%zu-byte object %zu of %zu at %#lx is not in the page of "
				 "the first, %#lx", size, i, per_page, (unsigned long)a[i], (unsigned long)a[0]);
			bad = 1;
			break;
		}
		in_line[(a[i] % PAGE) / LINE]++;
		for (j = i >= 64 ? i - 63 : 0; j < i; j++)
			if (a[j] / LINE == a[i] / LINE) {
				snprintf(why, whylen, "%zu-byte objects %zu and %zu (%#lx, %#lx) share a "
					 "cache line, %zu apart in a row", size, j, i, (unsigned long)a[j],
					 (unsigned long)a[i], i - j);
				bad = 1;
				break;
			}
	}
	for (i = 0; i < PAGE / LINE && !bad; i++)
		if (in_line[i] != LINE / size) {
			snprintf(why, whylen, "line %zu of the page holds %u %zu-byte objects, not %zu",
				 i, in_line[i], size, (size_t)(LINE / size));
			bad = 1;
		}
	for (i = 0; i < per_page; i++)
		free((void *)a[i]);
	free(a);
	return bad;
}

static void *thread_lines(void *arg)
{
	char *why = arg;
	size_t sizes[] = { 16, 32 }, k;

	for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++)
		if (lines_check(sizes[k], why, 512))
			return why;
	return NULL;
}

static int mode_lines(void)
{
	static char why[512];
	pthread_t t;
	void *ret;

	if (pthread_create(&t, NULL, thread_lines, why) != 0) {
		perror("resident: pthread_create");
		return 99;
	}
	pthread_join(t, &ret);
	if (ret) {
		printf("%s\n", why);
		return 1;
	}
	printf("16 B: 256 in a row in one page, the first 64 each in a line of its own, "
	       "4 to a line at the end; 32 B: 128, 64 lines, 2 to a line\n");
	return 0;
}

/* ---- populate: a fresh slab's pages made resident by madvise, not by faults ----
 * The pages a slab's free list is about to be written on (slab_extend) are made
 * resident with MADV_POPULATE_WRITE, one system call for what was a page fault each
 * (docs/allocator.md, Design, "Prefaulting"), and at most 4 pages past the objects
 * handed out (a page of objects listed ahead, groups of 4): objects of 256 B
 * (16 to a page, 256 to a 64 KiB slab), allocated and not written by the program,
 * in a new thread (its bins start on fresh slabs). Counted: the thread's page faults
 * (perf's software event, which the faults of a populate do not raise), and the
 * resident pages of each slab against the pages its objects cover. Then fresh large
 * spans, of which the program writes the first byte: malloc populates that page
 * (large.c), and only that one. */
#define POP_SIZE 256u
#define POP_SLAB ((size_t)64 << 10)
#define POP_OBJECTS (64 * (POP_SLAB / POP_SIZE) + 100)	/* the last slab: 7 pages of 16 */
#define POP_SPANS 128
#define POP_SPAN 40000u

static int populate_check(void **obj, long faults, char *why, size_t whylen)
{
	size_t i, j, nblocks = 0, pages = 0;
	uintptr_t *block = calloc(POP_OBJECTS, sizeof(*block));
	size_t *end = calloc(POP_OBJECTS, sizeof(*end));
	unsigned char vec[POP_SLAB / PAGE];
	int bad = 0;

	if (!block || !end) {
		snprintf(why, whylen, "out of memory");
		return 1;
	}
	for (i = 0; i < POP_OBJECTS; i++) {	/* each object's slab, and how far into it */
		uintptr_t b = (uintptr_t)obj[i] & ~(uintptr_t)(POP_SLAB - 1);
		size_t e = (uintptr_t)obj[i] + POP_SIZE - b;

		for (j = 0; j < nblocks && block[j] != b; j++)
			;
		if (j == nblocks)
			block[nblocks++] = b;
		if (e > end[j])
			end[j] = e;
	}
	for (j = 0; j < nblocks && !bad; j++) {
		size_t covered = (end[j] + PAGE - 1) / PAGE, resident = 0, k;

		if (mincore((void *)block[j], POP_SLAB, vec) != 0) {
			snprintf(why, whylen, "mincore: %s", strerror(errno));
			bad = 1;
			break;
		}
		for (k = 0; k < POP_SLAB / PAGE; k++)
			resident += vec[k] & 1;
		pages += resident;
		/* one page's objects are listed ahead of the program's use, and once the
		 * bin has handed out a whole slab its next ones are populated 4 pages at a
		 * time (MR_SLAB_AHEAD): up to 3 more */
		if (resident > covered + 4) {
			snprintf(why, whylen, "slab %#lx: %zu pages resident, its objects cover %zu",
				 (unsigned long)block[j], resident, covered);
			bad = 1;
		}
	}
	if (!bad && faults > (long)(pages / 8)) {
		snprintf(why, whylen, "%ld page faults while %zu slab pages became resident "
			 "(at most %zu: they are populated, not faulted)", faults, pages, pages / 8);
		bad = 1;
	}
	if (!bad)
		snprintf(why, whylen, "%zu objects of %u B: %zu slabs, %zu pages resident, "
			 "%ld page faults", (size_t)POP_OBJECTS, POP_SIZE, nblocks, pages, faults);
	free(block);
	free(end);
	return bad;
}

static void *thread_populate(void *arg)
{
	char *why = arg;
	struct perf_event_attr pe;
	void **obj = mmap(NULL, POP_OBJECTS * sizeof(void *), PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	long long faults = 0;
	size_t i;
	int fd, bad;

	memset(&pe, 0, sizeof(pe));
	pe.type = PERF_TYPE_SOFTWARE;
	pe.size = sizeof(pe);
	pe.config = PERF_COUNT_SW_PAGE_FAULTS;
	pe.disabled = 1;
	if (obj == MAP_FAILED) {
		snprintf(why, 512, "mmap: %s", strerror(errno));
		return why;
	}
	fd = (int)syscall(SYS_perf_event_open, &pe, 0, -1, -1, 0);
	if (fd < 0) {	/* e.g. perf_event_paranoid, or a kernel without perf events */
		snprintf(why, 512, "skip: perf_event_open: %s", strerror(errno));
		munmap(obj, POP_OBJECTS * sizeof(void *));
		return why;
	}
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	for (i = 0; i < POP_OBJECTS; i++)
		obj[i] = malloc(POP_SIZE);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	if (read(fd, &faults, sizeof(faults)) != sizeof(faults))
		faults = -1;
	bad = faults < 0 ? 1 : populate_check(obj, (long)faults, why, 512);
	if (faults < 0)
		snprintf(why, 512, "reading the fault counter failed");
	if (!bad) {	/* fresh large spans (the slabs above still live): their first
			 * page, which the program writes */
		void *span[POP_SPANS];
		size_t len = strlen(why);
		long long before = 0, after = 0;
		unsigned char vec[POP_SPAN / PAGE + 1];
		size_t res = 0, k;

		if (read(fd, &before, sizeof(before)) != sizeof(before))
			before = -1;
		ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
		for (i = 0; i < POP_SPANS; i++) {
			span[i] = malloc(POP_SPAN);
			*(char *)span[i] = 1;
		}
		ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
		if (read(fd, &after, sizeof(after)) != sizeof(after) || before < 0)
			after = before = -1;
		for (i = 0; i < POP_SPANS && mincore(span[i], POP_SPAN, vec) == 0; i++)
			for (k = 0; k < (POP_SPAN + PAGE - 1) / PAGE; k++)
				res += vec[k] & 1;
		/* one page each: the first, populated by malloc, written by the program */
		if (i < POP_SPANS) {
			snprintf(why, 512, "mincore: %s", strerror(errno));
			bad = 1;
		} else if (after - before > POP_SPANS / 4 || res != POP_SPANS || after < 0) {
			snprintf(why, 512, "%d fresh spans of %u B, the first byte of each written: "
				 "%lld page faults (at most %d), %zu pages resident (%d)", POP_SPANS,
				 POP_SPAN, after - before, POP_SPANS / 4, res, POP_SPANS);
			bad = 1;
		} else {
			snprintf(why + len, 512 - len, "; %d fresh spans of %u B: %lld page faults, "
				 "%zu pages resident", POP_SPANS, POP_SPAN, after - before, res);
		}
		for (i = 0; i < POP_SPANS; i++)
			free(span[i]);
	}
	close(fd);
	for (i = 0; i < POP_OBJECTS; i++)
		free(obj[i]);
	munmap(obj, POP_OBJECTS * sizeof(void *));
	return bad ? why : NULL;
}

static int mode_populate(void)
{
	static char why[512];
	char *probe = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pthread_t t;
	void *ret;

	if (probe == MAP_FAILED || madvise(probe, PAGE, MADV_POPULATE_WRITE) != 0) {
		printf("skip: this kernel has no MADV_POPULATE_WRITE (Linux 5.14): %s\n",
		       strerror(errno));
		return 77;
	}
	munmap(probe, PAGE);
	if (pthread_create(&t, NULL, thread_populate, why) != 0) {
		perror("resident: pthread_create");
		return 99;
	}
	pthread_join(t, &ret);
	printf("%s\n", why);
	if (ret)
		return strncmp(why, "skip: ", 6) == 0 ? 77 : 1;
	return 0;
}

/* ---- bss: the library's own variables a process makes resident ----
 * One malloc and its free, then mincore over libmemreg's zero-filled data (the
 * anonymous mapping after its file's): the page heap's header (with the bitmap row
 * of its first normal region), that region's entry, the locks with the class table,
 * and the small variables. Nothing only the stats export, the shared cache or a
 * second thread uses: 6 pages before (the export's changed-region bits and the
 * shared cache's links, written or read by every process). A page read but never
 * written counts too (the zero page is mapped there): reading it cost a fault. */
static int mode_bss(void)
{
	char line[512], prev[512] = "", pages[256] = "";
	unsigned long lo, hi, i, n = 0, found = 0;
	unsigned char *vec;
	FILE *f;
	void *p = malloc(16);

	memset(p, 1, 16);
	free(p);
	f = fopen("/proc/self/maps", "r");
	if (!f) {
		perror("resident: /proc/self/maps");
		return 99;
	}
	while (fgets(line, sizeof line, f)) {
		if (strstr(prev, "libmemreg") && !strchr(line, '/') &&
		    sscanf(line, "%lx-%lx", &lo, &hi) == 2) {
			found = 1;
			break;
		}
		memcpy(prev, line, sizeof prev);
	}
	fclose(f);
	if (!found) {
		printf("no anonymous mapping after libmemreg's in /proc/self/maps\n");
		return 1;
	}
	vec = malloc((hi - lo) / PAGE);
	if (!vec || mincore((void *)lo, hi - lo, vec) != 0) {
		perror("resident: mincore");
		return 99;
	}
	for (i = 0; i < (hi - lo) / PAGE; i++)
		if (vec[i] & 1) {
			size_t len = strlen(pages);

			snprintf(pages + len, sizeof pages - len, " %lu", i);
			n++;
		}
	free(vec);
	printf("libmemreg's zero-filled data: %lu of %lu pages resident (pages%s)\n", n,
	       (hi - lo) / PAGE, pages);
	if (n > 4) {
		printf("over: at most 4 (the heap's header, its first region's entry, the locks, "
		       "the small variables)\n");
		return 1;
	}
	return 0;
}

/* ---- short: threads that come and go borrow the shared cache's objects ----
 * A round of 64 threads comes and goes, then 64 threads are alive at once, each
 * holding 2 objects of each of 24 sizes (16 B to 2 KiB: 20 size classes) that it
 * wrote, as a server's threads per request do. Once a thread has exited, a new
 * thread borrows (tcache.c, "short threads"): such objects come from the shared
 * cache's slabs, a few at a time. Made in slabs of its own, each thread held
 * a slab (64 KiB of the page heap) and wrote a page of it for every class: 80 MiB
 * of slabs for 3 MiB of objects. Counted by memreg_get_stats' used_bytes (the pages
 * of live slabs and spans, the caches' included), not by mincore, since those slabs
 * spread over regions. */
#define SHORT_THREADS 64
#define SHORT_SIZES 24
static pthread_barrier_t short_ready, short_done;

static void *thread_short(void *arg)
{
	void *obj[2 * SHORT_SIZES];
	int i;

	for (i = 0; i < 2 * SHORT_SIZES; i++) {
		size_t size = 16 + (size_t)(i / 2) * 88;	/* 16 .. 2040 bytes */

		obj[i] = malloc(size);
		memset(obj[i], 1, size);
	}
	if (arg) {	/* the second round: all hold theirs at once */
		pthread_barrier_wait(&short_ready);
		pthread_barrier_wait(&short_done);
	}
	for (i = 0; i < 2 * SHORT_SIZES; i++)
		free(obj[i]);
	return NULL;
}

static int mode_short(void)
{
	/* libmemreg's, found at run time: the program is not linked with it */
	int (*get)(struct memreg_stats *, size_t) =
		(int (*)(struct memreg_stats *, size_t))dlsym(RTLD_DEFAULT, "memreg_get_stats");
	pthread_t t[SHORT_THREADS];
	struct memreg_stats before, after;
	uint64_t grown;
	int i;

	if (!get) {
		printf("memreg_get_stats not found: not run under libmemreg\n");
		return 99;
	}
	pthread_barrier_init(&short_ready, NULL, SHORT_THREADS + 1);
	pthread_barrier_init(&short_done, NULL, SHORT_THREADS + 1);
	/* The first round: none borrows (no thread has exited yet); they exit. */
	for (i = 0; i < SHORT_THREADS; i++)
		if (pthread_create(&t[i], NULL, thread_short, NULL) != 0) {
			perror("resident: pthread_create");
			return 99;
		}
	for (i = 0; i < SHORT_THREADS; i++)
		pthread_join(t[i], NULL);
	if (get(&before, sizeof(before)) != 0)
		return 99;
	/* The second: threads have exited, so each borrows. */
	for (i = 0; i < SHORT_THREADS; i++)
		if (pthread_create(&t[i], NULL, thread_short, t) != 0) {
			perror("resident: pthread_create");
			return 99;
		}
	pthread_barrier_wait(&short_ready);
	if (get(&after, sizeof(after)) != 0)
		return 99;
	pthread_barrier_wait(&short_done);
	for (i = 0; i < SHORT_THREADS; i++)
		pthread_join(t[i], NULL);
	grown = after.used_bytes - before.used_bytes;
	printf("%d threads after %d others, holding 2 objects of each of %d sizes: the page "
	       "heap's used bytes +%llu KiB\n", SHORT_THREADS, SHORT_THREADS, SHORT_SIZES,
	       (unsigned long long)(grown >> 10));
	/* The objects are 3 MiB: with the shared cache's slabs partly filled, about 5
	 * MiB; in slabs of their own, 80 MiB and more. */
	if (grown > (16u << 20)) {
		printf("over: at most 16 MiB (a slab of each class for each thread: 80 MiB)\n");
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "caches") == 0)
		return mode_caches();
	if (argc == 2 && strcmp(argv[1], "lines") == 0)
		return mode_lines();
	if (argc == 2 && strcmp(argv[1], "populate") == 0)
		return mode_populate();
	if (argc == 2 && strcmp(argv[1], "bss") == 0)
		return mode_bss();
	if (argc == 2 && strcmp(argv[1], "short") == 0)
		return mode_short();
	fprintf(stderr, "usage: resident caches|lines|populate|bss|short\n");
	return 2;
}
