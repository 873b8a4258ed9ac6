/* The `uffd` backend: in-process write tracking per page with userfaultfd
 * write-protection in async mode and the PAGEMAP_SCAN ioctl (Linux 6.7+), for
 * memory the process registers itself (the allocator's arena). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/root.h"
#include "common/sys.h"
#include "common/util.h"
#include "monitor/monitor.h"
#include "monitor/uffd.h"

/* Older kernel headers lack these (Linux 6.7 uapi). */
#ifndef UFFD_FEATURE_WP_UNPOPULATED
#define UFFD_FEATURE_WP_UNPOPULATED (1 << 13)
#endif
#ifndef UFFD_FEATURE_WP_ASYNC
#define UFFD_FEATURE_WP_ASYNC (1 << 15)
#endif
#ifndef PAGEMAP_SCAN
#define PAGE_IS_WRITTEN (1 << 1)
#define PM_SCAN_WP_MATCHING (1 << 0)
#define PM_SCAN_CHECK_WPASYNC (1 << 1)
struct page_region {
	uint64_t start;
	uint64_t end;
	uint64_t categories;
};
struct pm_scan_arg {
	uint64_t size;
	uint64_t flags;
	uint64_t start;
	uint64_t end;
	uint64_t walk_end;
	uint64_t vec;
	uint64_t vec_len;
	uint64_t max_pages;
	uint64_t category_inverted;
	uint64_t category_mask;
	uint64_t category_anyof_mask;
	uint64_t return_mask;
};
#define PAGEMAP_SCAN _IOWR('f', 16, struct pm_scan_arg)
#endif

#define VEC_LEN 512

struct uffd_priv {
	int uffd;
	int pagemap_fd;
	struct mr_mon_range *ranges;	/* what the caller registered */
	size_t nr_ranges;
	struct mr_mon_range *written;	/* pages written in the last sampling interval */
	size_t nr_written, cap_written;
	struct page_region vec[VEC_LEN];
};

static int uffd_open(void)
{
	struct uffdio_api api = { .api = UFFD_API,
				  .features = UFFD_FEATURE_WP_ASYNC | UFFD_FEATURE_WP_UNPOPULATED };
	int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);

	if (fd < 0)
		return mr_error(-errno, "uffd: userfaultfd: %s", strerror(errno));
	if (ioctl(fd, UFFDIO_API, &api) < 0) {
		int err = errno;

		close(fd);
		return mr_error(-ENOTSUP, "uffd: UFFDIO_API with async write-protect: %s "
				"(needs Linux 6.7)", strerror(err));
	}
	return fd;
}

static int uffd_protect(int fd, uint64_t start, uint64_t len)
{
	struct uffdio_register reg = { .range = { .start = start, .len = len },
				       .mode = UFFDIO_REGISTER_MODE_WP };
	struct uffdio_writeprotect wp = { .range = { .start = start, .len = len },
					  .mode = UFFDIO_WRITEPROTECT_MODE_WP };

	if (ioctl(fd, UFFDIO_REGISTER, &reg) < 0)
		return mr_error(-errno, "uffd: register 0x%llx+%llu: %s",
				(unsigned long long)start, (unsigned long long)len, strerror(errno));
	if (ioctl(fd, UFFDIO_WRITEPROTECT, &wp) < 0)
		return mr_error(-errno, "uffd: write-protect 0x%llx+%llu: %s",
				(unsigned long long)start, (unsigned long long)len, strerror(errno));
	return 0;
}

/* Pages of [start, end) written since the last scan; write-protects them again
 * in the same walk, so each call ends one sampling interval and starts the next. */
static int scan_written(struct uffd_priv *p, uint64_t start, uint64_t end)
{
	while (start < end) {
		struct pm_scan_arg arg = {
			.size = sizeof(arg),
			.flags = PM_SCAN_WP_MATCHING | PM_SCAN_CHECK_WPASYNC,
			.start = start, .end = end,
			.vec = (uint64_t)(uintptr_t)p->vec, .vec_len = VEC_LEN,
			.category_mask = PAGE_IS_WRITTEN, .return_mask = PAGE_IS_WRITTEN,
		};
		long n = ioctl(p->pagemap_fd, PAGEMAP_SCAN, &arg), i;

		if (n < 0)
			return mr_error(-errno, "uffd: PAGEMAP_SCAN: %s (needs Linux 6.7)",
					strerror(errno));
		for (i = 0; i < n; i++) {
			if (p->nr_written == p->cap_written) {
				struct mr_mon_range *w;

				p->cap_written = p->cap_written ? 2 * p->cap_written : 256;
				w = realloc(p->written, p->cap_written * sizeof(*w));
				if (!w)
					return mr_error(-ENOMEM, "uffd: out of memory");
				p->written = w;
			}
			p->written[p->nr_written].start = p->vec[i].start;
			p->written[p->nr_written].end = p->vec[i].end;
			p->nr_written++;
		}
		if (arg.walk_end <= start)
			break;
		start = arg.walk_end;
	}
	return 0;
}

static bool in_written(const struct uffd_priv *p, uint64_t addr)
{
	size_t lo = 0, hi = p->nr_written;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (addr < p->written[mid].start)
			hi = mid;
		else if (addr >= p->written[mid].end)
			lo = mid + 1;
		else
			return true;
	}
	return false;
}

static void priv_free(struct uffd_priv *p)
{
	if (!p)
		return;
	if (p->uffd >= 0)
		close(p->uffd);	/* unregisters every range */
	if (p->pagemap_fd >= 0)
		mr_sys_close(p->pagemap_fd);
	free(p->ranges);
	free(p->written);
	free(p);
}

static struct uffd_priv *priv_get(struct mr_mon_ctx *ctx)
{
	struct uffd_priv *p = ctx->priv;

	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p)
			return NULL;
		p->uffd = p->pagemap_fd = -1;
		ctx->priv = p;
	}
	return p;
}

int mr_mon_uffd_watch(struct mr_mon_ctx *ctx, void *addr, size_t len)
{
	struct uffd_priv *p = priv_get(ctx);
	struct mr_mon_range *r;
	uint64_t s = (uint64_t)(uintptr_t)addr;
	size_t i;

	if (!p)
		return mr_error(-ENOMEM, "uffd: out of memory");
	if (!len || s % MR_MON_MIN_REGION_BYTES || len % MR_MON_MIN_REGION_BYTES)
		return mr_error(-EINVAL, "uffd: watched memory must be whole pages");
	r = realloc(p->ranges, (p->nr_ranges + 1) * sizeof(*r));
	if (!r)
		return mr_error(-ENOMEM, "uffd: out of memory");
	p->ranges = r;
	/* keep them sorted; overlapping ranges are the caller's bug */
	for (i = p->nr_ranges; i > 0 && r[i - 1].start > s; i--)
		r[i] = r[i - 1];
	r[i].start = s;
	r[i].end = s + len;
	p->nr_ranges++;
	ctx->target.kind = MR_MON_TARGET_PROCESS;
	ctx->target.pid = 0;	/* the calling process: no liveness polling */
	return 0;
}

static int uffd_selftest(struct mr_mon_ctx *ctx)
{
	struct uffd_priv p = { .uffd = -1, .pagemap_fd = -1 };
	long pg = sysconf(_SC_PAGESIZE);
	volatile char *page;
	bool before = true, after = false;
	int err;

	page = mmap(NULL, (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return mr_error(-errno, "uffd: self-test mmap: %s", strerror(errno));
	err = p.uffd = uffd_open();
	if (p.uffd >= 0)
		err = p.pagemap_fd = mr_root_open("/proc/self/pagemap", O_RDONLY);
	if (err >= 0)
		err = uffd_protect(p.uffd, (uint64_t)(uintptr_t)page, (uint64_t)pg);
	if (!err)
		err = scan_written(&p, (uint64_t)(uintptr_t)page, (uint64_t)(uintptr_t)page + (uint64_t)pg);
	if (!err) {
		before = p.nr_written > 0;
		p.nr_written = 0;
		page[0] = 1;
		err = scan_written(&p, (uint64_t)(uintptr_t)page,
				   (uint64_t)(uintptr_t)page + (uint64_t)pg);
		after = p.nr_written > 0;
	}
	if (p.uffd >= 0)
		close(p.uffd);
	if (p.pagemap_fd >= 0)
		mr_sys_close(p.pagemap_fd);
	free(p.written);
	munmap((void *)page, (size_t)pg);
	if (err < 0)
		return mr_error_wrap(-ENOTSUP, "uffd: self-test");
	if (before || !after)
		return mr_error(-ENOTSUP, "uffd: self-test: PAGEMAP_SCAN saw %s write",
				before ? "a page written before any" : "no page written after a");
	return 0;
}

static int uffd_ranges(struct mr_mon_ctx *ctx, struct mr_mon_range **ranges, size_t *nr)
{
	struct uffd_priv *p = ctx->priv;

	if (!p || !p->nr_ranges)
		return mr_error(-EINVAL, "uffd: no memory registered (mr_mon_uffd_watch): it "
				"watches the calling process's own memory only");
	*ranges = malloc(p->nr_ranges * sizeof(**ranges));
	if (!*ranges)
		return mr_error(-ENOMEM, "uffd: out of memory");
	memcpy(*ranges, p->ranges, p->nr_ranges * sizeof(**ranges));
	*nr = p->nr_ranges;
	return 0;
}

static int uffd_init(struct mr_mon_ctx *ctx)
{
	struct uffd_priv *p = ctx->priv;
	size_t i;
	int err;

	p->uffd = uffd_open();
	if (p->uffd < 0)
		return p->uffd;
	p->pagemap_fd = mr_root_open("/proc/self/pagemap", O_RDONLY);
	if (p->pagemap_fd < 0)
		return p->pagemap_fd;
	for (i = 0; i < p->nr_ranges; i++) {
		err = uffd_protect(p->uffd, p->ranges[i].start,
				   p->ranges[i].end - p->ranges[i].start);
		if (err)
			return err;
	}
	return 0;
}

static int uffd_check(struct mr_mon_ctx *ctx, uint32_t *max_nr)
{
	struct uffd_priv *p = ctx->priv;
	size_t i;
	int err;

	p->nr_written = 0;
	for (i = 0; i < p->nr_ranges; i++) {
		err = scan_written(p, p->ranges[i].start, p->ranges[i].end);
		if (err)
			return err;
	}
	for (i = 0; i < ctx->target.nr_regions; i++) {
		struct mr_mon_region *r = &ctx->target.regions[i];

		if (in_written(p, r->sampling_addr))
			r->nr_accesses++;
		if (r->nr_accesses > *max_nr)
			*max_nr = r->nr_accesses;
	}
	return 0;
}

static void uffd_cleanup(struct mr_mon_ctx *ctx)
{
	priv_free(ctx->priv);
	ctx->priv = NULL;
}

const struct mr_mon_ops mr_mon_ops_uffd = {
	.name = "uffd",
	.help = "in-process write tracking per page: userfaultfd write-protection in async\n"
		"mode and the PAGEMAP_SCAN ioctl (Linux 6.7+). Only for memory the monitoring\n"
		"process registers itself (mr_mon_uffd_watch(), the allocator's arena); it cannot\n"
		"watch another process, so `record --pid` refuses it. The first write to each\n"
		"page after a scan takes a minor fault the kernel resolves without waking anyone.",
	/* a scan costs about 1 us per written 2 MiB run plus the faults: cheap */
	.default_attrs = { .sample_us = 20000, .aggr_us = 200000, .update_us = 2000000,
			   .min_nr_regions = 10, .max_nr_regions = 1000 },
	.process_only = true,
	.selftest = uffd_selftest,
	.ranges = uffd_ranges,
	.init = uffd_init,
	.check = uffd_check,
	.cleanup = uffd_cleanup,
};
