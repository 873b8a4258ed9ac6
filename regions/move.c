/* Moving a process's pages to a node with move_pages(2), in batches, with every page's
 * status accounted: -EBUSY retried, the other failures counted by cause. */
#include "config.h"

#include <errno.h>
#include <numaif.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/proc.h"
#include "common/root.h"
#include "common/sys.h"
#include "common/util.h"
#include "regions/placement.h"

#define DEFAULT_BATCH	65536u	/* 256 MiB of 4 KiB pages a call: fewer LRU drains */
#define DEFAULT_RETRIES	5u

uint64_t mr_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

bool mr_numa_balancing_on(void)
{
	uint64_t v;

	return mr_root_read_u64("/proc/sys/kernel/numa_balancing", &v) == 0 && v != 0;
}

uint64_t mr_move_failed_pages(const struct mr_move_stats *st)
{
	return st->failed_busy + st->failed_access + st->failed_noent + st->failed_fault +
	       st->failed_nomem + st->failed_other;
}

static void count_failure(struct mr_move_stats *st, int status)
{
	switch (-status) {
	case EBUSY: st->failed_busy++; break;
	case EACCES: st->failed_access++; break;
	case ENOENT: st->failed_noent++; break;
	case EFAULT: st->failed_fault++; break;
	case ENOMEM: st->failed_nomem++; break;
	default: st->failed_other++; st->last_other_errno = -status; break;
	}
}

struct batch {
	void **pages;
	int *nodes, *status;
	unsigned n, cap;
};

static int call_move_pages(int pid, struct batch *b, bool move)
{
	long r = mr_sys_move_pages(pid, b->n, b->pages, move ? b->nodes : NULL, b->status,
				   MPOL_MF_MOVE);

	if (r < 0)
		return mr_error(-errno, "move_pages(pid %d, %u pages): %s", pid, b->n,
				strerror(errno));
	return 0;
}

/*
 * One batch: ask where each page is, then move those present elsewhere; pages
 * reported -EBUSY are retried up to @o->busy_retries times, alone in a smaller batch.
 */
static int do_batch(const struct mr_move_opts *o, struct batch *b, struct mr_move_stats *st)
{
	unsigned i, keep = 0, tries;
	uint64_t t0;
	int ret;

	st->pages += b->n;
	ret = call_move_pages(o->pid, b, false);
	if (ret)
		return ret;
	for (i = 0; i < b->n; i++) {
		if (b->status[i] == o->node) {
			st->already++;
		} else if (b->status[i] >= 0) {
			b->pages[keep++] = b->pages[i];
		} else if (b->status[i] == -ENOENT || b->status[i] == -EFAULT) {
			st->absent++;	/* not present, or the shared zero page */
		} else {
			count_failure(st, b->status[i]);
		}
	}
	b->n = keep;
	st->to_move += keep;
	if (!o->apply || !keep)
		return 0;
	for (i = 0; i < b->n; i++)
		b->nodes[i] = o->node;
	for (tries = 0;; tries++) {
		t0 = mr_now_ns();
		ret = call_move_pages(o->pid, b, true);
		st->elapsed_ns += mr_now_ns() - t0;
		if (ret)
			return ret;
		keep = 0;
		for (i = 0; i < b->n; i++) {
			if (b->status[i] == o->node)
				st->moved++;
			else if (b->status[i] == -EBUSY && tries < o->busy_retries)
				b->pages[keep++] = b->pages[i];
			else if (b->status[i] >= 0)
				count_failure(st, -EAGAIN);	/* landed elsewhere */
			else
				count_failure(st, b->status[i]);
		}
		if (!keep)
			return 0;
		st->busy_retried += keep;
		b->n = keep;
		usleep(1000u << (tries < 6 ? tries : 6));	/* let the holder let go */
	}
}

/* @o->region's filter: a pagemap walk hands over the present pages whose frame lies
 * in the region, batched as the mapping walk below does. */
struct region_walk {
	const struct mr_move_opts *o;
	struct batch *b;
	struct mr_move_stats *st;
	uint64_t page_bytes;
};

static bool region_has_phys(const struct mr_region *r, uint64_t phys)
{
	unsigned i;

	for (i = 0; i < r->nr_ranges; i++)
		if (phys >= r->ranges[i].start && phys - r->ranges[i].start < r->ranges[i].size)
			return true;
	return false;
}

static int region_chunk(uint64_t vaddr, const uint64_t *e, size_t nr, void *arg)
{
	struct region_walk *rw = arg;
	uint64_t pfn;
	size_t i;
	int ret;

	for (i = 0; i < nr; i++) {
		if (!mr_pagemap_entry_present(e[i], &pfn))
			continue;
		if (!pfn)
			return mr_error(-EPERM, "pid %d: page frames are hidden (not root): the "
					"pages in a region cannot be found", rw->o->pid);
		if (!region_has_phys(rw->o->region, pfn * rw->page_bytes))
			continue;
		rw->b->pages[rw->b->n++] = (void *)(uintptr_t)(vaddr + i * rw->page_bytes);
		if (rw->b->n == rw->b->cap) {
			ret = do_batch(rw->o, rw->b, rw->st);
			rw->b->n = 0;
			if (ret)
				return ret;
		}
	}
	return 0;
}

int mr_move_pid(const struct mr_move_opts *opts, struct mr_move_stats *st)
{
	struct mr_move_opts o = *opts;
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	struct mr_mapping *maps = NULL, *m;
	struct batch b = { 0 };
	size_t nr_maps = 0;
	int ret = 0;

	memset(st, 0, sizeof(*st));
	st->page_bytes = page;
	if (!o.batch_pages)
		o.batch_pages = DEFAULT_BATCH;
	if (!o.busy_retries)
		o.busy_retries = DEFAULT_RETRIES;
	if (o.node < 0 || o.node >= MR_MAX_NODES)
		return mr_error(-EINVAL, "bad node %d", o.node);
	if (o.end < o.start)
		return mr_error(-EINVAL, "bad range: end before start");
	b.cap = o.batch_pages;
	b.pages = calloc(b.cap, sizeof(*b.pages));
	b.nodes = calloc(b.cap, sizeof(*b.nodes));
	b.status = calloc(b.cap, sizeof(*b.status));
	if (!b.pages || !b.nodes || !b.status) {
		ret = mr_error(-ENOMEM, "out of memory");
		goto out;
	}
	if (o.region) {
		struct region_walk rw = { &o, &b, st, page };

		ret = mr_pagemap_walk(o.pid, o.start, o.end ? o.end : UINT64_MAX,
				      MR_PAGEMAP_SKIP_PROT_NONE, region_chunk, &rw);
		if (ret > 0)
			ret = 0;
		goto last;
	}
	ret = mr_proc_maps_read(o.pid, &maps, &nr_maps);
	if (ret)
		goto out;
	for (m = maps; !ret && m < maps + nr_maps; m++) {
		uint64_t a, lo = m->start, hi = m->end;

		/* no struct pages to move in the kernel's own mappings; nothing is ever
		 * populated in a PROT_NONE reservation (a 256 GiB arena would be walked
		 * page by page for nothing) */
		if (mr_mapping_is_special(m) || mr_mapping_is_prot_none(m))
			continue;
		if (o.start || o.end) {
			lo = lo > o.start ? lo : o.start & ~(page - 1);
			hi = hi < o.end ? hi : o.end;
		}
		for (a = lo; a < hi && !ret; a += page) {
			b.pages[b.n++] = (void *)(uintptr_t)a;
			if (b.n == b.cap) {
				ret = do_batch(&o, &b, st);
				b.n = 0;
			}
		}
	}
last:
	if (!ret && b.n)
		ret = do_batch(&o, &b, st);
out:
	free(maps);
	free(b.pages);
	free(b.nodes);
	free(b.status);
	return ret;
}
