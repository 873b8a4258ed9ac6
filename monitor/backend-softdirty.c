/* The `softdirty` backend: clear_refs 4 then pagemap bit 55 of each region's sampled
 * page. Per page, writes only, on kernels built with CONFIG_MEM_SOFT_DIRTY. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/root.h"
#include "common/sys.h"
#include "common/util.h"
#include "monitor/monitor.h"

#define PM_SOFT_DIRTY (UINT64_C(1) << 55)

struct sd_priv {
	int pagemap_fd;
	long page_bytes;
};

static int open_pagemap(pid_t pid)
{
	char path[64];

	mr_pathf(path, sizeof(path), "/proc/%d/pagemap", (int)pid);
	return mr_root_open(path, O_RDONLY);
}

static int read_entry(int fd, uint64_t addr, long page_bytes, uint64_t *entry)
{
	long n = mr_root_pread(fd, entry, sizeof(*entry), addr / (uint64_t)page_bytes * 8);

	if (n < 0)
		return (int)n;
	/* the address space this file was opened on is gone: the target exited or
	 * exec'd (the core tells which, and after an exec calls init again) */
	if (n == 0)
		return mr_error(-ESRCH, "pagemap: the target's address space is gone");
	if (n != sizeof(*entry))
		return mr_error(-EIO, "pagemap: short read at 0x%llx", (unsigned long long)addr);
	return 0;
}

/* clear_refs accepts "4" on kernels without soft-dirty and does nothing: prove the
 * bit really goes 0 after the clear and 1 after a write, on a page of our own. */
static int sd_selftest(struct mr_mon_ctx *ctx)
{
	long pg = sysconf(_SC_PAGESIZE);
	volatile char *page;
	uint64_t e0 = 0, e1 = 0;
	int fd, err;

	/* three pages, the outer two inaccessible: the middle one is a VMA of its own,
	 * never merged with a neighbour whose pages would count too */
	page = mmap(NULL, 3 * (size_t)pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return mr_error(-errno, "softdirty: self-test mmap: %s", strerror(errno));
	page += pg;
	if (mprotect((void *)page, (size_t)pg, PROT_READ | PROT_WRITE)) {
		munmap((void *)(page - pg), 3 * (size_t)pg);
		return mr_error(-errno, "softdirty: self-test mprotect: %s", strerror(errno));
	}
	page[0] = 1;
	fd = open_pagemap(getpid());
	err = fd < 0 ? fd : mr_mon_clear_refs(getpid(), "4", true);	/* our own bits */
	if (!err)
		err = read_entry(fd, (uint64_t)(uintptr_t)page, pg, &e0);
	page[0] = 2;
	if (!err)
		err = read_entry(fd, (uint64_t)(uintptr_t)page, pg, &e1);
	if (fd >= 0)
		mr_sys_close(fd);
	munmap((void *)(page - pg), 3 * (size_t)pg);
	if (err)
		return mr_error_wrap(-ENOTSUP, "softdirty: self-test");
	if ((e0 & PM_SOFT_DIRTY) || !(e1 & PM_SOFT_DIRTY))
		return mr_error(-ENOTSUP, "softdirty: self-test: pagemap bit 55 read %d after "
				"clear_refs 4 and %d after a write: this kernel has no soft-dirty "
				"tracking (CONFIG_MEM_SOFT_DIRTY)", !!(e0 & PM_SOFT_DIRTY),
				!!(e1 & PM_SOFT_DIRTY));
	return 0;
}

static int sd_init(struct mr_mon_ctx *ctx)
{
	struct sd_priv *p = calloc(1, sizeof(*p));

	if (!p)
		return mr_error(-ENOMEM, "softdirty: out of memory");
	p->page_bytes = sysconf(_SC_PAGESIZE);
	p->pagemap_fd = open_pagemap(ctx->target.pid);
	if (p->pagemap_fd < 0) {
		int err = p->pagemap_fd;

		free(p);
		return err;
	}
	ctx->priv = p;
	return 0;
}

static int sd_prepare(struct mr_mon_ctx *ctx)
{
	return mr_mon_clear_refs(ctx->target.pid, "4", mr_mon_target_consent(ctx));
}

static int sd_check(struct mr_mon_ctx *ctx, uint32_t *max_nr)
{
	struct sd_priv *p = ctx->priv;
	size_t i;

	for (i = 0; i < ctx->target.nr_regions; i++) {
		struct mr_mon_region *r = &ctx->target.regions[i];
		uint64_t e;
		int err = read_entry(p->pagemap_fd, r->sampling_addr, p->page_bytes, &e);

		if (err)
			return err;
		if (e & PM_SOFT_DIRTY)
			r->nr_accesses++;
		if (r->nr_accesses > *max_nr)
			*max_nr = r->nr_accesses;
	}
	return 0;
}

static void sd_cleanup(struct mr_mon_ctx *ctx)
{
	struct sd_priv *p = ctx->priv;

	if (p)
		mr_sys_close(p->pagemap_fd);
	free(p);
	ctx->priv = NULL;
}

const struct mr_mon_ops mr_mon_ops_softdirty = {
	.name = "softdirty",
	.help = "write tracking: writes 4 to /proc/PID/clear_refs each sampling interval and\n"
		"reads the soft-dirty bit (55) of each region's sampled page in /proc/PID/pagemap.\n"
		"Per page, but sees writes only, and only on kernels built with\n"
		"CONFIG_MEM_SOFT_DIRTY (the self-test says so where it is missing). Clearing\n"
		"write-protects the target's pages, so its next write to each faults once, and\n"
		"resets what other soft-dirty users (CRIU) track: it runs on a command record\n"
		"starts, or on a --pid only with --apply.",
	/* a clear write-protects every PTE and each page's next write faults: at least
	 * refs' cost (see there), so the same 1 s / 10 s */
	.default_attrs = { .sample_us = 1000000, .aggr_us = 10000000, .update_us = 20000000,
			   .min_nr_regions = 10, .max_nr_regions = 1000 },
	.process_only = true,
	.writes_target = true,
	.selftest = sd_selftest,
	.init = sd_init,
	.prepare = sd_prepare,
	.check = sd_check,
	.cleanup = sd_cleanup,
};
