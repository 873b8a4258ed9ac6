/* The `refs` backend: clear_refs 1 then smaps "Referenced:" per mapping. Sees reads
 * and writes of any process we may trace, but only per mapping (VMA). */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/root.h"
#include "common/util.h"
#include "monitor/monitor.h"

struct refs_vma {
	uint64_t start;
	uint64_t end;
	uint64_t referenced_bytes;
};

struct refs_priv {
	struct refs_vma *vmas;
	size_t nr;
	size_t cap;
};

/* smaps: a header line per mapping, then "Key: value kB" lines. */
static int read_smaps(pid_t pid, struct refs_priv *p)
{
	char path[64], *data = NULL, *line, *save = NULL;
	size_t len;
	int err;

	mr_pathf(path, sizeof(path), "/proc/%d/smaps", (int)pid);
	err = mr_root_read_file(path, 256u << 20, &data, &len);
	if (err)
		return err;
	p->nr = 0;
	for (line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		uint64_t s, e, kb;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " ", &s, &e) == 2 && strchr(line, ' ') &&
		    strchr(line, '-') < strchr(line, ' ')) {
			if (p->nr == p->cap) {
				struct refs_vma *v;

				p->cap = p->cap ? p->cap * 2 : 64;
				v = realloc(p->vmas, p->cap * sizeof(*v));
				if (!v) {
					free(data);
					return mr_error(-ENOMEM, "%s: out of memory", path);
				}
				p->vmas = v;
			}
			p->vmas[p->nr].start = s;
			p->vmas[p->nr].end = e;
			p->vmas[p->nr].referenced_bytes = 0;
			p->nr++;
		} else if (p->nr && sscanf(line, "Referenced: %" SCNu64 " kB", &kb) == 1) {
			p->vmas[p->nr - 1].referenced_bytes = kb * 1024;
		}
	}
	free(data);
	return 0;
}

static const struct refs_vma *find_vma(const struct refs_priv *p, uint64_t addr)
{
	size_t lo = 0, hi = p->nr;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (addr < p->vmas[mid].start)
			hi = mid;
		else if (addr >= p->vmas[mid].end)
			lo = mid + 1;
		else
			return &p->vmas[mid];
	}
	return NULL;
}

/* Prove clear_refs 1 works: our own page reads Referenced 0 after it, 4 kB after a touch. */
static int refs_selftest(struct mr_mon_ctx *ctx)
{
	struct refs_priv p = { 0 };
	const struct refs_vma *v;
	volatile char *page;
	long pg = sysconf(_SC_PAGESIZE);
	uint64_t before, after;
	int err;

	/* three pages, the outer two inaccessible: the middle one is a VMA of its own,
	 * never merged with a neighbour whose pages would count too */
	page = mmap(NULL, 3 * (size_t)pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return mr_error(-errno, "refs: self-test mmap: %s", strerror(errno));
	page += pg;
	if (mprotect((void *)page, (size_t)pg, PROT_READ | PROT_WRITE)) {
		munmap((void *)(page - pg), 3 * (size_t)pg);
		return mr_error(-errno, "refs: self-test mprotect: %s", strerror(errno));
	}
	page[0] = 1;
	err = mr_mon_clear_refs(getpid(), "1", true);	/* our own bits: ours to clear */
	if (!err)
		err = read_smaps(getpid(), &p);
	v = err ? NULL : find_vma(&p, (uint64_t)(uintptr_t)page);
	before = v ? v->referenced_bytes : 0;
	/* clear_refs does not flush the TLB (neither does DAMON's mkold: too costly),
	 * and a CPU sets the accessed bit only on a page walk. Changing the protection
	 * flushes this page's entry, so the next access walks and sets it. */
	mprotect((void *)page, (size_t)pg, PROT_READ);
	mprotect((void *)page, (size_t)pg, PROT_READ | PROT_WRITE);
	page[0]++;
	if (!err)
		err = read_smaps(getpid(), &p);
	v = err ? NULL : find_vma(&p, (uint64_t)(uintptr_t)page);
	after = v ? v->referenced_bytes : 0;
	munmap((void *)(page - pg), 3 * (size_t)pg);
	free(p.vmas);
	if (err)
		return mr_error_wrap(-ENOTSUP, "refs: self-test");
	if (!v || before != 0 || after == 0)
		return mr_error(-ENOTSUP, "refs: self-test: clear_refs 1 had no effect on smaps "
				"Referenced (%" PRIu64 " then %" PRIu64 " bytes)", before, after);
	return 0;
}

static int refs_init(struct mr_mon_ctx *ctx)
{
	ctx->priv = calloc(1, sizeof(struct refs_priv));
	if (!ctx->priv)
		return mr_error(-ENOMEM, "refs: out of memory");
	return 0;
}

static int refs_prepare(struct mr_mon_ctx *ctx)
{
	return mr_mon_clear_refs(ctx->target.pid, "1", mr_mon_target_consent(ctx));
}

/*
 * smaps says how many bytes of a mapping were referenced, not which. DAMON checks
 * one page drawn at random from each region; drawn from the mapping instead, that
 * page was referenced with probability Referenced / Size, and that is the test
 * made here: each region counts as accessed in this sample with that probability,
 * independently. nr_accesses then has DAMON's expectation; where inside a partly
 * used mapping the hot bytes are is not known (the split regions of one mapping
 * look alike).
 */
static int refs_check(struct mr_mon_ctx *ctx, uint32_t *max_nr)
{
	struct refs_priv *p = ctx->priv;
	size_t i;
	int err = read_smaps(ctx->target.pid, p);

	if (err)
		return err;
	for (i = 0; i < ctx->target.nr_regions; i++) {
		struct mr_mon_region *r = &ctx->target.regions[i];
		const struct refs_vma *v = find_vma(p, r->sampling_addr);

		if (v && v->referenced_bytes &&
		    ctx->rand(ctx, 0, v->end - v->start) < v->referenced_bytes)
			r->nr_accesses++;
		if (r->nr_accesses > *max_nr)
			*max_nr = r->nr_accesses;
	}
	return 0;
}

static void refs_cleanup(struct mr_mon_ctx *ctx)
{
	struct refs_priv *p = ctx->priv;

	if (p)
		free(p->vmas);
	free(p);
	ctx->priv = NULL;
}

const struct mr_mon_ops mr_mon_ops_refs = {
	.name = "refs",
	.help = "referenced bytes per mapping: writes 1 to /proc/PID/clear_refs each sampling\n"
		"interval and reads Referenced: from /proc/PID/smaps. Sees reads and writes, of\n"
		"any process you may trace, per mapping (not per page). It clears the accessed\n"
		"bits that the kernel's own page reclaim reads, so the target's pages look\n"
		"younger or colder to reclaim than they are. Like DAMON it does not flush the\n"
		"TLB after clearing, so a page whose translation stays cached reads\n"
		"unreferenced: very small, very hot sets are under-counted. So it runs on a\n"
		"command record starts, or on a --pid only with --apply.",
	/* Measured (bench/mon-overhead.sh, 1 GiB random-access target, this VM): a
	 * clear every 100 ms slowed the target 5-9x (every page then pays for setting
	 * its accessed bit again) at 16-20% of a core; every 500 ms, 1.4x; every 1 s,
	 * ~5% at 1.4% of a core. So 1 s / 10 s, as DAMON's aggregation of 10 samples. */
	.default_attrs = { .sample_us = 1000000, .aggr_us = 10000000, .update_us = 20000000,
			   .min_nr_regions = 10, .max_nr_regions = 1000 },
	.process_only = true,
	.writes_target = true,
	.selftest = refs_selftest,
	.init = refs_init,
	.prepare = refs_prepare,
	.check = refs_check,
	.cleanup = refs_cleanup,
};
