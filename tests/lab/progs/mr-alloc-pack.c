/* mr-alloc-pack: the allocator's packing, physically (tests/lab/guest/placement/
 * 50-alloc-packing.sh). Runs one of alloc-bench's packing workloads scaled to the lab,
 * gives back what it freed (malloc_trim), prints "ready PID" and waits for SIGTERM so
 * that memregctl where can see where its pages lie. Before the workload it prints
 * "bound PID" and waits for SIGUSR1, so that its own pages (libraries, stack) can be
 * counted apart. Transparent huge pages are off for it (PR_SET_THP_DISABLE).
 *
 *   mr-alloc-pack packing|hotset|lifetimes MIB NODES SHARE_MIB [--exit]
 *
 * Under libmemreg.so (run with MEMREG_NUMA=0: one zone set, the hot reserve at the
 * bottom, normal data above it, cold data from the top) it first binds the arena so
 * that its regions are nodes (mbind MPOL_PREFERRED, as the allocator's own node mode
 * binds a region): node 0 holds the hot reserve and the normal zone's first SHARE_MIB,
 * each next node the next SHARE_MIB, the last node the rest up to the top (the cold
 * zone). So "lowest region first" is "lowest node first", hot data is on node 0 and
 * cold data on the last node. NODES 0: no binding. Under glibc nothing is bound: the
 * kernel places pages on the node of the first touch. The process runs on CPU 0.
 *   packing:   MIB in mixed sizes, 10% long-lived (site_a), the rest short-lived
 *              (site_b) and freed: the long-lived objects stay.
 *   hotset:    MIB of 64-256 B objects, 10% hot (site_a), the rest cold (site_b) and
 *              freed at the end: the hot objects stay.
 *   lifetimes: the churn of random lifetimes, its ramp and churn scaled by MIB / 320
 *              (320: alloc-bench's): what is live at the end stays.
 * At start it prints "sites A B": site_a's and site_b's offsets in the executable, for
 * a profile made from a site map (MEMREG_SITE_MAP, written at exit). With --exit it
 * exits instead of waiting (a training run). */
#define _GNU_SOURCE
#include "config.h"

#include <dlfcn.h>
#include <malloc.h>
#include <numaif.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "bench/alloc-workloads.h"
#include "common/util.h"
#include "memreg.h"

/* The two sites, kept distinct as alloc-bench keeps them: no tail call, no inlining,
 * no merging of identical functions. */
__attribute__((noipa, optimize("no-optimize-sibling-calls"))) static void *site_a(size_t n)
{
	void *p = malloc(n);

	__asm__ volatile("# site a" ::: "memory");
	return p;
}

__attribute__((noipa, optimize("no-optimize-sibling-calls"))) static void *site_b(size_t n)
{
	void *p = malloc(n);

	__asm__ volatile("# site b" ::: "memory");
	return p;
}

/* Bookkeeping outside every allocator's heap, given back before "ready". */
static void *map_bytes(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mr-alloc-pack: mmap");
		exit(1);
	}
	return p;
}

/* Under libmemreg.so: bind the arena so that its regions are nodes. Node 0 takes the
 * hot reserve and the normal zone's first @share_bytes, nodes 1 .. nodes - 2 the
 * normal zone's next shares, the last node everything above (the cold zone at the
 * top). The zones' edges come from three spans (large objects: no page of them is
 * touched, so nothing is placed before the binding): a hot one (region 0), a normal
 * one (the normal zone's first region) and a cold one (the top region). */
static int bind_arena(unsigned nodes, uintptr_t share_bytes)
{
	void *(*hot)(size_t) = (void *(*)(size_t))dlsym(RTLD_DEFAULT, "memreg_malloc_hot");
	void *(*cold)(size_t) = (void *(*)(size_t))dlsym(RTLD_DEFAULT, "memreg_malloc_cold");
	int (*stats)(struct memreg_stats *, size_t) =
		(int (*)(struct memreg_stats *, size_t))dlsym(RTLD_DEFAULT, "memreg_get_stats");
	struct memreg_stats st = { 0 };
	uintptr_t base, norm, top, rs, lo, hi;
	void *ph, *pn, *pc;
	unsigned i;

	if (!hot || !cold || !stats) {
		printf("arena none (not under libmemreg.so): first-touch placement\n");
		return 0;
	}
	/* The normal one over the start-up heap's largest object (128 KiB): that one
	 * would lie in libmemreg's BSS, not in the arena. */
	ph = hot(64 << 10);
	pn = malloc(256 << 10);
	pc = cold(64 << 10);
	if (!ph || !pn || !pc || stats(&st, sizeof(st)) != 0 || !st.region_bytes) {
		fprintf(stderr, "mr-alloc-pack: libmemreg did not answer\n");
		return -1;
	}
	rs = st.region_bytes;
	base = (uintptr_t)ph & ~(rs - 1);
	norm = (uintptr_t)pn & ~(rs - 1);
	top = ((uintptr_t)pc & ~(rs - 1)) + rs;
	if (share_bytes % rs || !(base <= norm && norm + nodes * share_bytes < top)) {
		fprintf(stderr, "mr-alloc-pack: arena [%#lx, %#lx), normal zone from %#lx: no room for %u shares of %lu MiB in %lu MiB regions\n",
			(unsigned long)base, (unsigned long)top, (unsigned long)norm, nodes,
			(unsigned long)(share_bytes >> 20), (unsigned long)(rs >> 20));
		return -1;
	}
	for (i = 0; i < nodes; i++) {
		unsigned long mask = 1ul << i;

		lo = i == 0 ? base : norm + i * share_bytes;
		hi = i + 1 == nodes ? top : norm + (i + 1) * share_bytes;
		if (mbind((void *)lo, hi - lo, MPOL_PREFERRED, &mask, 8 * sizeof(mask),
			  MPOL_MF_MOVE) != 0) {
			perror("mr-alloc-pack: mbind");
			return -1;
		}
	}
	free(ph);
	free(pn);
	free(pc);
	printf("arena: %lu MiB regions, hot reserve %lu regions on node 0, normal zone %lu regions a node from region %lu, the rest (cold from the top) on node %u\n",
	       (unsigned long)(rs >> 20), (unsigned long)((norm - base) / rs),
	       (unsigned long)(share_bytes / rs), (unsigned long)((norm - base) / rs), nodes - 1);
	return 0;
}

static size_t packing(size_t total_bytes)
{
	size_t cap = total_bytes / 64 + 1, nlong = 0, nshort = 0, live = 0, total = 0, i;
	void **lp = map_bytes(cap * sizeof(void *)), **sp = map_bytes(cap * sizeof(void *));
	uint64_t s = 5;

	while (total < total_bytes && nlong < cap && nshort < cap) {
		size_t sz = aw_mixed_size(&s) % 4096 + 64;

		if (aw_rng(&s) % 10 == 0) {
			lp[nlong] = site_a(sz);
			memset(lp[nlong++], 1, sz);
			live += sz;
		} else {
			sp[nshort] = site_b(sz);
			memset(sp[nshort++], 2, sz);
		}
		total += sz;
	}
	for (i = 0; i < nshort; i++)
		free(sp[i]);
	munmap(sp, cap * sizeof(void *));
	return live;	/* lp stays: it is the only reference to the long-lived objects */
}

static size_t hotset(size_t total_bytes)
{
	size_t cap = total_bytes / 64 + 1, nhot = 0, ncold = 0, hot = 0, i;
	void **hp = map_bytes(cap * sizeof(void *)), **cp = map_bytes(cap * sizeof(void *));
	uint64_t s = 9;

	while (hot + ncold * 160 < total_bytes && nhot < cap && ncold < cap) {
		size_t sz = aw_rng(&s) % 192 + 64;

		if (aw_rng(&s) % 10 == 0) {
			hp[nhot] = site_a(sz);
			memset(hp[nhot++], 1, sz);
			hot += sz;
		} else {
			cp[ncold] = site_b(sz);
			memset(cp[ncold++], 2, sz);
		}
	}
	for (i = 0; i < ncold; i++)
		free(cp[i]);
	munmap(cp, cap * sizeof(void *));
	return hot;
}

/* alloc-bench's lifetimes scaled by @mib / 320: a ramp of 62500 objects (about 280 MiB
 * at the peak) dying at random through a churn of 300 K allocations with exponential
 * lifetimes (mean 4 K allocations: about 16 MiB live at the end, at any scale). */
static size_t lifetimes(uint64_t mib)
{
	uint64_t ramp = AW_LIFETIMES_RAMP * mib / 320, churn = AW_LIFETIMES_CHURN * mib / 320, t;
	size_t cap = ramp + churn + 1;
	struct aw_churn c = { .heap = map_bytes(cap * sizeof(struct aw_obj)), .s = 11,
			      .ramp = ramp, .churn = churn, .mean = AW_LIFETIMES_MEAN, .touch = 256,
			      .size = aw_mixed_size };
	struct aw_obj *heap = c.heap;

	for (t = 0; t < ramp + churn; t++)
		if (!aw_churn_step(&c, t).p) {
			perror("mr-alloc-pack: malloc");
			exit(1);
		}
	printf("peak_live_bytes=%zu\n", c.peak);
	/* The live objects' pointers are kept in the heap array's first pages: the rest
	 * of it is given back. */
	if (c.n * sizeof(*heap) + 4096 < cap * sizeof(*heap)) {
		uintptr_t keep = ((uintptr_t)(heap + c.n) + 4095) & ~(uintptr_t)4095;

		madvise((void *)keep, (uintptr_t)(heap + cap) - keep, MADV_DONTNEED);
	}
	return c.live;
}

int main(int argc, char **argv)
{
	uint64_t mib, nodes, share_mib;
	size_t live;
	cpu_set_t cpus;
	Dl_info ia, ib;
	sigset_t set, usr1;
	int sig;

	if ((argc != 5 && argc != 6) || mr_parse_u64(argv[2], &mib) || mib == 0 || mib > 65536 ||
	    mr_parse_u64(argv[3], &nodes) || nodes > 64 || nodes == 1 ||
	    mr_parse_u64(argv[4], &share_mib) || share_mib == 0 || share_mib > 65536 ||
	    (argc == 6 && strcmp(argv[5], "--exit") != 0)) {
		fprintf(stderr, "usage: mr-alloc-pack packing|hotset|lifetimes MIB NODES SHARE_MIB [--exit]\n");
		return 2;
	}
	/* Pages as the heap uses them, not 2 MiB at a time: a commit chunk touched once
	 * would be a transparent huge page on a node the heap barely uses. */
	prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	if (sched_setaffinity(0, sizeof(cpus), &cpus) != 0) {
		perror("mr-alloc-pack: sched_setaffinity");
		return 1;
	}
	if (!dladdr((void *)site_a, &ia) || !dladdr((void *)site_b, &ib)) {
		fprintf(stderr, "mr-alloc-pack: dladdr failed\n");
		return 1;
	}
	printf("sites %#lx %#lx\n", (unsigned long)((uintptr_t)site_a - (uintptr_t)ia.dli_fbase),
	       (unsigned long)((uintptr_t)site_b - (uintptr_t)ib.dli_fbase));
	if (nodes && bind_arena((unsigned)nodes, (uintptr_t)share_mib << 20) != 0)
		return 1;
	if (argc == 5) {
		/* A baseline: where the program's own pages lie before the workload. */
		printf("bound %d\n", (int)getpid());
		fflush(stdout);
		if (sigwait(&usr1, &sig) != 0)
			return 1;
	}
	if (strcmp(argv[1], "packing") == 0) {
		live = packing((size_t)mib << 20);
	} else if (strcmp(argv[1], "hotset") == 0) {
		live = hotset((size_t)mib << 20);
	} else if (strcmp(argv[1], "lifetimes") == 0) {
		live = lifetimes(mib);
	} else {
		fprintf(stderr, "usage: mr-alloc-pack packing|hotset|lifetimes MIB NODES SHARE_MIB [--exit]\n");
		return 2;
	}
	malloc_trim(0);	/* what was freed goes back, so only live data stays resident */
	printf("live_bytes=%zu\n", live);
	if (argc == 6)
		return 0;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	return sigwait(&set, &sig) != 0;
}
