/* The `damon` backend's operations table: the kernel's DAMON through sysfs (vaddr
 * for a process, paddr for physical memory), snapshots read from the
 * damon:damon_aggregated tracepoint in a tracefs instance of our own, or (without
 * tracefs) a `stat` scheme's tried regions. The set-up order and what each step
 * owns are here; the steps themselves are in damon-*.c (damon.h). */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/root.h"
#include "common/util.h"
#include "monitor/damon.h"
#include "monitor/monitor.h"

/* memreg's one kdamond: kdamonds/KD_INDEX, one context, one target, a stat scheme */
#define KD_INDEX 0
#define KD MR_DAMON_KDAMONDS "/0"
#define CTX KD "/contexts/0"
#define SCHEME CTX "/schemes/0"

struct damon_priv {
	struct mr_mon_damon_owner owner;	/* what memreg claimed: released at the end */
	/* the tracepoint path: trace.fd >= 0 when snapshots come from it */
	struct mr_mon_damon_tracefs trace;
	struct mr_mon_damon_trace_agg agg;
	uint64_t nr_used;	/* agg.nr_complete at the last snapshot */
	/* vaddr: the target's mappings as DAMON's regions, followed by memreg */
	bool follow_maps;
	struct mr_mon_range *ranges;	/* the ranges last given to DAMON */
	size_t nr_ranges;
	uint64_t next_update_us;	/* when to read the mappings again */
	bool maps_changed;		/* said once that the mappings changed */
};

static int wr(struct mr_mon_ctx *ctx, const char *path, const char *val)
{
	return mr_root_write_str(path, val, ctx->apply);
}

static int wr_u64(struct mr_mon_ctx *ctx, const char *path, uint64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	return wr(ctx, path, buf);
}

/* memreg's pid and start time name the tracefs instance and the owner file. */
static int priv_init(struct damon_priv *p, bool apply)
{
	memset(p, 0, sizeof(*p));
	p->trace.fd = -1;
	mr_mon_damon_trace_agg_init(&p->agg);
	return mr_mon_damon_owner_init(&p->owner, apply);
}

/* Set the tracepoint path up, or say why the tried-regions path is used instead. */
static void choose_path(struct mr_mon_ctx *ctx, struct damon_priv *p, bool quiet)
{
	int err = mr_mon_damon_tracefs_open(&p->trace, p->owner.pid, p->owner.starttime_ticks,
					    ctx->apply);

	if (err) {
		if (!quiet)
			fprintf(stderr, "memregctl: damon: snapshots from a stat scheme's tried "
				"regions: tracepoint unavailable: %s\n", mr_last_error());
		mr_mon_damon_tracefs_close(&p->trace, ctx->apply);
	} else {
		/* the owner file names the instance, for damon-reset */
		snprintf(p->owner.tracefs, sizeof(p->owner.tracefs), "%s", p->trace.path);
		if (!quiet)
			fprintf(stderr, "memregctl: damon: snapshots from the damon:damon_aggregated "
				"tracepoint (%s)\n", p->trace.path);
	}
}

/* Keep the largest reading: a kdamond whose target exited is gone, with its time.
 * Only while kdamonds/0 still runs as memreg's thread: a pid reused later is not. */
static void note_kdamond_cpu(struct mr_mon_ctx *ctx)
{
	struct damon_priv *p = ctx->priv;
	pid_t pid = p->owner.kd[0].pid;
	double cpu;

	if (!pid || mr_mon_damon_kdamond_pid(KD_INDEX) != pid)
		return;
	cpu = mr_mon_damon_kdamond_cpu_s(pid);
	if (cpu > ctx->kernel_cpu_s)
		ctx->kernel_cpu_s = cpu;
}

/*
 * vaddr's own regions are three ranges spanning all mappings but the two widest
 * gaps (mm/damon/vaddr.c), reset every ops update interval. For a PIE program the
 * gap between its image and the heap stays inside (a few hundred MiB unmapped), so
 * about 90% of DAMON's regions watched nothing and a region was about 1 MiB where
 * a 10 MiB working set lives. memreg gives DAMON the mappings themselves instead
 * (PROT_NONE ones left out, so guard pages keep neighbouring mappings apart: DAMON
 * merges only regions that touch), and follows them itself: the kernel's update
 * interval is set beyond any run (DAMON_NO_OPS_UPDATE_US) and memreg commits new
 * regions when the mappings change, every update interval. DAMON keeps the regions
 * and counts inside ranges that stay (damon_set_regions).
 */
#define DAMON_NO_OPS_UPDATE_US (1ull << 45)	/* about 1.1 years */

/* The first regions of a process: its mappings split evenly into about
 * min_nr_regions (what vaddr's init does with its three ranges). */
static int initial_regions(struct mr_mon_ctx *ctx, pid_t pid, const struct mr_mon_attrs *a)
{
	struct damon_priv *p = ctx->priv;
	struct mr_mon_target t = { .kind = MR_MON_TARGET_PROCESS };
	struct mr_mon_range *pieces = NULL;
	size_t i;
	int err;

	err = mr_mon_damon_target_ranges(pid, a, &p->ranges, &p->nr_ranges);
	if (!err)
		err = mr_mon_init_regions(&t, p->ranges, p->nr_ranges, a->min_nr_regions);
	if (!err && !(pieces = calloc(t.nr_regions, sizeof(*pieces))))
		err = mr_error(-ENOMEM, "damon: out of memory");
	for (i = 0; !err && i < t.nr_regions; i++) {
		pieces[i].start = t.regions[i].start;
		pieces[i].end = t.regions[i].end;
	}
	if (!err)
		err = mr_mon_damon_write_regions(ctx, KD_INDEX, pieces, t.nr_regions);
	free(pieces);
	free(t.regions);
	if (!err) {
		p->follow_maps = true;
		p->next_update_us = mr_mon_now_us() + a->update_us;
	}
	return err;
}

/* Every update interval: when the mappings changed, give DAMON the new ranges. */
static int follow_maps(struct mr_mon_ctx *ctx)
{
	struct damon_priv *p = ctx->priv;
	struct mr_mon_range *r = NULL;
	size_t nr = 0;
	int err;

	if (!p->follow_maps || mr_mon_now_us() < p->next_update_us)
		return 0;
	p->next_update_us = mr_mon_now_us() + ctx->attrs.update_us;
	err = mr_mon_damon_target_ranges(ctx->target.pid, &ctx->attrs, &r, &nr);
	if (err)	/* gone: the snapshot loop ends the run */
		return err == -ENOENT || err == -ESRCH ? 0 : err;
	if (nr == p->nr_ranges && !memcmp(r, p->ranges, nr * sizeof(*r))) {
		free(r);
		return 0;
	}
	if (!p->maps_changed) {	/* once: a long --pid run may change its mappings often */
		p->maps_changed = true;
		fprintf(stderr, "memregctl: damon: the target's mappings changed; giving DAMON "
			"the new ranges (%zu) every %" PRIu64 " ms while they change\n", nr,
			ctx->attrs.update_us / 1000);
	}
	err = mr_mon_damon_write_regions(ctx, KD_INDEX, r, nr);
	/* the kdamond takes the new inputs at its next aggregation; the write waits */
	if (!err)
		err = mr_mon_damon_write_state(KD_INDEX, "commit", ctx->apply);
	free(p->ranges);
	p->ranges = r;
	p->nr_ranges = nr;
	if (err) {
		/* keep monitoring what DAMON has: a lost update is not a lost record */
		fprintf(stderr, "memregctl: damon: cannot give DAMON the new mappings (%s); "
			"monitoring the ranges it has\n", mr_last_error());
		p->follow_maps = false;
	}
	return 0;
}

/* Claim kdamond 0 (mr_mon_damon_claim: free, marked as memreg's), give it one
 * context, one target and a stat scheme, and start it. */
static int start(struct mr_mon_ctx *ctx, pid_t pid, const struct mr_mon_attrs *a)
{
	struct damon_priv *p = ctx->priv;
	struct mr_mon_damon_kdamond *k = &p->owner.kd[0];
	char *avail = NULL;
	const char *ops = ctx->target.kind == MR_MON_TARGET_PHYS ? "paddr" : "vaddr";
	size_t len;
	int err;

	p->owner.nr_kdamonds = 1;	/* kdamonds/0 == KD_INDEX */
	snprintf(k->ops, sizeof(k->ops), "%s", ops);
	k->target_pid = ctx->target.kind == MR_MON_TARGET_PHYS ? 0 : pid;
	err = mr_mon_damon_claim(&p->owner);
	if (err)
		return err;
	err = wr(ctx, KD "/contexts/nr_contexts", "1");
	/* one operations set a line */
	if (!err && !mr_root_read_file(CTX "/avail_operations", 4096, &avail, &len)) {
		char *line, *save = NULL;
		bool found = false;

		for (line = strtok_r(avail, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
			if (!strcmp(line, ops))
				found = true;
		if (!found)
			err = mr_error(-ENOTSUP, "damon: operations '%s' not available here", ops);
		free(avail);
	}
	if (!err)
		err = wr(ctx, CTX "/operations", ops);
	if (!err)
		err = wr_u64(ctx, CTX "/monitoring_attrs/intervals/sample_us", a->sample_us);
	if (!err)
		err = wr_u64(ctx, CTX "/monitoring_attrs/intervals/aggr_us", a->aggr_us);
	/* vaddr with regions of ours: the kernel must not replace them (see above) */
	if (!err)
		err = wr_u64(ctx, CTX "/monitoring_attrs/intervals/update_us",
			     ctx->target.kind == MR_MON_TARGET_PROCESS ? DAMON_NO_OPS_UPDATE_US :
			     a->update_us);
	/* max before min: the kernel rejects min > max at commit, not here, but be tidy */
	if (!err)
		err = wr_u64(ctx, CTX "/monitoring_attrs/nr_regions/max", a->max_nr_regions);
	if (!err)
		err = wr_u64(ctx, CTX "/monitoring_attrs/nr_regions/min", a->min_nr_regions);
	if (!err)
		err = wr(ctx, CTX "/targets/nr_targets", "1");
	if (!err && ctx->target.kind == MR_MON_TARGET_PROCESS) {
		err = wr_u64(ctx, CTX "/targets/0/pid_target", (uint64_t)pid);
		if (!err)
			err = initial_regions(ctx, pid, a);
	} else if (!err) {
		struct mr_mon_range *r = NULL;
		size_t nr = 0;

		err = mr_mon_damon_ram_ranges(&r, &nr);
		if (!err)
			err = mr_mon_damon_write_regions(ctx, KD_INDEX, r, nr);
		free(r);
	}
	if (!err)
		err = wr(ctx, CTX "/schemes/nr_schemes", "1");
	if (!err)
		err = wr(ctx, SCHEME "/action", "stat");
	/* apply (and so collect tried regions) exactly once per aggregation (6.7+) */
	if (!err && mr_root_exists(SCHEME "/apply_interval_us"))
		err = wr_u64(ctx, SCHEME "/apply_interval_us", a->aggr_us);
	/* match every region: the tried regions are then the whole snapshot */
	if (!err)
		err = wr(ctx, SCHEME "/access_pattern/sz/min", "0");
	if (!err)
		err = wr(ctx, SCHEME "/access_pattern/sz/max", "18446744073709551615");
	if (!err)
		err = wr(ctx, SCHEME "/access_pattern/nr_accesses/min", "0");
	if (!err)
		err = wr(ctx, SCHEME "/access_pattern/nr_accesses/max", "4294967295");
	if (!err)
		err = wr(ctx, SCHEME "/access_pattern/age/min", "0");
	if (!err)
		err = wr(ctx, SCHEME "/access_pattern/age/max", "4294967295");
	if (!err)
		err = mr_mon_damon_write_state(KD_INDEX, "on", ctx->apply);
	/* the thread into the owner file; only its events count from now on */
	if (!err)
		err = mr_mon_damon_started(&p->owner, 0);
	if (!err && k->pid && p->trace.fd >= 0) {
		p->agg.pid = k->pid;
		/* fewer events to read; the reader filters anyway (damon-trace.c) */
		if (mr_mon_damon_tracefs_filter(&p->trace, k->pid, ctx->apply))
			fprintf(stderr, "memregctl: damon: no event filter, filtering in memreg: "
				"%s\n", mr_last_error());
	}
	return err;
}

/* Drain the pipe; with no aggregation completed since the last snapshot, wait for
 * one (the kdamond runs on emulated time and may lag the wall clock). */
static int read_trace(struct mr_mon_ctx *ctx)
{
	struct damon_priv *p = ctx->priv;
	struct mr_mon_target *t = &ctx->target;
	uint64_t wait_us = 10 * ctx->attrs.aggr_us, waited_us = 0;
	char buf[16384], state[32] = "";
	ssize_t n;
	int err;

	if (wait_us < 10000000)
		wait_us = 10000000;
	for (;;) {
		while ((n = read(p->trace.fd, buf, sizeof(buf))) > 0) {
			err = mr_mon_damon_trace_feed(&p->agg, buf, (size_t)n);
			if (err)
				return err;
		}
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return mr_error(-errno, "damon: %s/trace_pipe: %s", p->trace.path, strerror(errno));
		if (p->agg.nr_complete > p->nr_used)
			break;
		err = mr_mon_damon_read_str(KD "/state", state, sizeof(state));
		if (err && err != -ENOENT)
			return err;	/* unreadable is not "stopped": say why */
		if (err || strcmp(state, "on") != 0)
			return 1;	/* the kdamond stopped: its target exited */
		if (ctx->stop && *ctx->stop)
			return 1;
		if (waited_us >= wait_us) {
			if (!p->agg.nr_complete)
				return mr_error(-ETIMEDOUT, "damon: no whole aggregation from the "
						"damon_aggregated tracepoint in %" PRIu64 " s",
						waited_us / 1000000);
			break;	/* none new: the last one again */
		}
		usleep(20000);
		waited_us += 20000;
	}
	p->nr_used = p->agg.nr_complete;
	if (p->agg.nr_last > t->cap_regions) {
		struct mr_mon_region *r = realloc(t->regions, p->agg.nr_last * sizeof(*r));

		if (!r)
			return mr_error(-ENOMEM, "damon: out of memory");
		t->regions = r;
		t->cap_regions = p->agg.nr_last;
	}
	memcpy(t->regions, p->agg.last, p->agg.nr_last * sizeof(*t->regions));
	t->nr_regions = p->agg.nr_last;
	return 0;
}

static int read_snapshot(struct mr_mon_ctx *ctx)
{
	struct damon_priv *p = ctx->priv;

	return p->trace.fd >= 0 ? read_trace(ctx) : mr_mon_damon_read_tried(ctx, KD_INDEX);
}

/* Undo what start and choose_path set up: memreg's kdamond (only if still its own),
 * the owner file, the tracefs instance. */
static void priv_release(struct mr_mon_ctx *ctx, struct damon_priv *p)
{
	mr_mon_damon_release(&p->owner);
	mr_mon_damon_tracefs_close(&p->trace, ctx->apply);
	mr_mon_damon_trace_agg_destroy(&p->agg);
	free(p->ranges);
	p->ranges = NULL;
}

static volatile int selftest_stop;

#define SELFTEST_BYTES (4u << 20)

/* Writes every page of the buffer over and over: whatever page DAMON samples in a
 * region overlapping it was accessed, before any region has adapted. */
static void *toucher(void *arg)
{
	volatile char *buf = arg;
	size_t off;

	while (!selftest_stop)
		for (off = 0; off < SELFTEST_BYTES; off += 4096)
			buf[off]++;
	return NULL;
}

/* Free, then a real run on our own process: a buffer a thread keeps writing must
 * show up with nr_accesses > 0. Resets nr_kdamonds to 0 whatever happens. */
static int damon_selftest(struct mr_mon_ctx *ctx)
{
	/* 100 regions at least: a few MiB each, so some lie wholly inside the buffer
	 * and every sample there hits */
	struct mr_mon_attrs a = { .sample_us = 5000, .aggr_us = 100000, .update_us = 1000000,
				  .min_nr_regions = 100, .max_nr_regions = 1000 };
	struct mr_mon_ctx self;
	struct damon_priv p;
	char why[256];
	volatile char *page;
	pthread_t th;
	bool seen = false;
	int err, i;
	size_t k;

	err = mr_mon_damon_check_free(why, sizeof(why));
	if (err)
		return mr_error(err == -EBUSY ? -EBUSY : -ENOTSUP, "damon: %s; not touched", why);
	if (ctx->target.kind == MR_MON_TARGET_PHYS)
		return 0;	/* paddr: proved when the first snapshot arrives */
	err = priv_init(&p, ctx->apply);
	if (err)
		return mr_error_wrap(err, "damon: self-test");
	page = mmap(NULL, SELFTEST_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return mr_error(-errno, "damon: self-test mmap: %s", strerror(errno));
	mr_mon_ctx_init(&self, &mr_mon_ops_damon);
	self.apply = ctx->apply;
	self.priv = &p;
	self.target.kind = MR_MON_TARGET_PROCESS;
	selftest_stop = 0;
	if (pthread_create(&th, NULL, toucher, (void *)page)) {
		munmap((void *)page, SELFTEST_BYTES);
		return mr_error(-EAGAIN, "damon: self-test thread");
	}
	choose_path(&self, &p, true);
	err = start(&self, getpid(), &a);
	for (i = 0; !err && !seen && i < 30; i++) {
		usleep(200000);
		err = read_snapshot(&self);
		for (k = 0; !err && k < self.target.nr_regions; k++) {
			const struct mr_mon_region *r = &self.target.regions[k];

			if (r->start < (uintptr_t)page + SELFTEST_BYTES && (uintptr_t)page < r->end &&
			    r->nr_accesses)
				seen = true;
		}
	}
	selftest_stop = 1;
	pthread_join(th, NULL);
	priv_release(&self, &p);
	self.priv = NULL;
	mr_mon_ctx_destroy(&self);
	munmap((void *)page, SELFTEST_BYTES);
	if (err < 0)
		return mr_error_wrap(-ENOTSUP, "damon: self-test");
	if (!seen)
		return mr_error(-ENOTSUP, "damon: self-test: a buffer written all along never "
				"showed accesses in %s", p.trace.path[0] ? "the damon_aggregated "
				"tracepoint" : "the stat scheme's tried regions");
	return 0;
}

static int damon_init(struct mr_mon_ctx *ctx)
{
	char why[256];
	int err;

	err = mr_mon_damon_check_free(why, sizeof(why));
	if (err)
		return mr_error(err, "damon: %s; not touched", why);
	ctx->priv = malloc(sizeof(struct damon_priv));
	if (!ctx->priv)
		return mr_error(-ENOMEM, "damon: out of memory");
	err = priv_init(ctx->priv, ctx->apply);
	if (err)
		return mr_error_wrap(err, "damon: memreg's own start time");
	/* before the kdamond starts, so its first aggregation is caught */
	choose_path(ctx, ctx->priv, false);
	return start(ctx, ctx->target.pid, &ctx->attrs);
}

static int damon_snapshot(struct mr_mon_ctx *ctx)
{
	int ret = follow_maps(ctx);

	/* read while it runs: a kdamond whose target exited is gone by cleanup */
	note_kdamond_cpu(ctx);
	if (!ret)
		ret = read_snapshot(ctx);
	return ret;
}

static void damon_cleanup(struct mr_mon_ctx *ctx)
{
	struct damon_priv *p = ctx->priv;

	if (p) {
		note_kdamond_cpu(ctx);
		priv_release(ctx, p);
	}
	free(p);
	ctx->priv = NULL;
}

const struct mr_mon_ops mr_mon_ops_damon = {
	.name = "damon",
	.help = "the kernel's DAMON through /sys/kernel/mm/damon (vaddr for --pid, paddr for\n"
		"--phys), read through the damon:damon_aggregated tracepoint in a tracefs\n"
		"instance of its own (a stat scheme's tried regions without tracefs). Used\n"
		"only where nothing else uses DAMON (nr_kdamonds reads 0, no kdamond thread,\n"
		"the reclaim, LRU-sort and stat modules off); otherwise it says so and writes\n"
		"nothing. Changes the kernel's state, so it needs --apply; marks its kdamond\n"
		"as its own (/run/memreg/damon.owner), stops only that one and sets\n"
		"nr_kdamonds back to 0 when done (after a SIGKILL: memregctl damon-reset).\n"
		"For a process, DAMON monitors its mappings, read again every update interval.",
	/* the kernel's own defaults: sampling in the kernel costs little */
	.default_attrs = { .sample_us = 5000, .aggr_us = 100000, .update_us = 1000000,
			   .min_nr_regions = 10, .max_nr_regions = 1000 },
	.needs_apply = true,
	.selftest = damon_selftest,
	.init = damon_init,
	.snapshot = damon_snapshot,
	.cleanup = damon_cleanup,
};
