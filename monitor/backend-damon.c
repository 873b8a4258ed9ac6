/* The `damon` backend: the kernel's DAMON through sysfs (vaddr for a process, paddr
 * for physical memory), snapshots read from the damon:damon_aggregated tracepoint
 * in a tracefs instance of our own, or (without tracefs) a `stat` scheme's tried
 * regions.
 * Writing nr_kdamonds destroys every kdamond directory, so memreg only touches DAMON
 * when nobody else uses it (damon.h: mr_mon_damon_check_free) and resets it after. */
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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

#define ADMIN "/sys/kernel/mm/damon/admin"
#define KD ADMIN "/kdamonds/0"
#define CTX KD "/contexts/0"
#define SCHEME CTX "/schemes/0"

struct damon_priv {
	bool started;		/* we wrote nr_kdamonds: reset it to 0 */
	/* the tracepoint path: trace_fd >= 0 when snapshots come from it */
	int trace_fd;		/* the instance's trace_pipe, non-blocking */
	bool inst_made;		/* we created inst: remove it */
	char inst[128];		/* .../tracing/instances/memreg-PID */
	struct mr_mon_damon_trace_agg agg;
	uint64_t nr_used;	/* agg.nr_complete at the last snapshot */
	/* vaddr: the target's mappings as DAMON's regions, followed by memreg */
	bool follow_maps;
	struct mr_mon_range *ranges;	/* the ranges last given to DAMON */
	size_t nr_ranges;
	uint64_t next_update_us;	/* when to read the mappings again */
	bool maps_changed;		/* said once that the mappings changed */
};

static int wr(struct mr_mon_ctx *ctx, const char *path, const char *val);

static void priv_init(struct damon_priv *p)
{
	memset(p, 0, sizeof(*p));
	p->trace_fd = -1;
	mr_mon_damon_trace_agg_init(&p->agg);
}

/* tracefs where the lab and most systems have it; debugfs mounts it too */
static const char *const tracefs_dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };

/* A tracefs instance of our own with only damon:damon_aggregated enabled, so no
 * one else's tracing is touched and nothing else fills our buffer. */
static int trace_open(struct mr_mon_ctx *ctx, struct damon_priv *p)
{
	char path[200];
	const char *base = NULL;
	size_t i;
	int err;

	for (i = 0; i < MR_ARRAY_SIZE(tracefs_dirs) && !base; i++) {
		mr_pathf(path, sizeof(path), "%s/instances", tracefs_dirs[i]);
		if (mr_root_exists(path))
			base = tracefs_dirs[i];
	}
	if (!base)
		return mr_error(-ENOENT, "no tracefs (neither /sys/kernel/tracing nor "
				"/sys/kernel/debug/tracing has instances/)");
	mr_pathf(path, sizeof(path), "%s/events/damon/damon_aggregated/enable", base);
	if (!mr_root_exists(path))
		return mr_error(-ENOTSUP, "%s: no damon:damon_aggregated event", base);
	mr_pathf(p->inst, sizeof(p->inst), "%s/instances/memreg-%ld", base, (long)getpid());
	err = mr_root_mkdir(p->inst, ctx->apply);
	if (err)
		return err;
	p->inst_made = true;
	/* Enabling the event with tracing's record-cmd on (the default; a global
	 * option, not an instance's) also hooks sched_switch for comm names: harmless
	 * on real CPUs, a panic now and then under QEMU TCG, so the lab boots with
	 * trace_options=norecord-cmd (docs/lab.md). memreg leaves global tracing
	 * options alone. */
	err = wr(ctx, mr_pathf(path, sizeof(path), "%s/events/damon/damon_aggregated/enable",
			       p->inst), "1");
	if (err)
		return err;
	p->trace_fd = mr_root_open(mr_pathf(path, sizeof(path), "%s/trace_pipe", p->inst),
				   O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (p->trace_fd < 0) {
		err = p->trace_fd;
		p->trace_fd = -1;
		return err;
	}
	return 0;
}

/* Close the pipe (an open file keeps the instance busy), then remove the instance. */
static void trace_close(struct mr_mon_ctx *ctx, struct damon_priv *p)
{
	if (p->trace_fd >= 0)
		close(p->trace_fd);
	p->trace_fd = -1;
	if (p->inst_made && mr_root_rmdir(p->inst, ctx->apply))
		fprintf(stderr, "memregctl: damon: %s\n", mr_last_error());
	p->inst_made = false;
	mr_mon_damon_trace_agg_destroy(&p->agg);
}

/* Set the tracepoint path up, or say why the tried-regions path is used instead. */
static void choose_path(struct mr_mon_ctx *ctx, struct damon_priv *p, bool quiet)
{
	int err = trace_open(ctx, p);

	if (err) {
		if (!quiet)
			fprintf(stderr, "memregctl: damon: snapshots from a stat scheme's tried "
				"regions: tracepoint unavailable: %s\n", mr_last_error());
		trace_close(ctx, p);
	} else if (!quiet) {
		fprintf(stderr, "memregctl: damon: snapshots from the damon:damon_aggregated "
			"tracepoint (%s)\n", p->inst);
	}
}

/* DAMON's in-kernel users that do not show in the sysfs admin tree. */
static const char *const modules[] = { "damon_reclaim", "damon_lru_sort", "damon_stat" };

int mr_mon_damon_check_free(char *why, size_t len)
{
	char buf[64];
	uint64_t nr;
	DIR *d;
	struct dirent *de;
	size_t i;
	int err;

	if (!mr_root_exists(ADMIN "/kdamonds/nr_kdamonds")) {
		snprintf(why, len, "this kernel has no DAMON sysfs interface (%s)", ADMIN);
		return -ENOTSUP;
	}
	err = mr_root_read_u64(ADMIN "/kdamonds/nr_kdamonds", &nr);
	if (err) {
		snprintf(why, len, "%s", mr_last_error());
		return err;
	}
	if (nr) {
		snprintf(why, len, "DAMON is in use: nr_kdamonds is %" PRIu64, nr);
		return -EBUSY;
	}
	d = mr_root_opendir("/proc");
	if (!d) {
		snprintf(why, len, "cannot list /proc to look for kdamond threads");
		return -EIO;
	}
	while ((de = readdir(d))) {
		char path[300], comm[64];

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		mr_pathf(path, sizeof(path), "/proc/%s/comm", de->d_name);
		if (mr_root_read_str(path, comm, sizeof(comm)))
			continue;	/* exited meanwhile */
		if (strncmp(comm, "kdamond", 7) == 0) {
			snprintf(why, len, "DAMON is in use: thread %s (pid %s) runs", comm, de->d_name);
			closedir(d);
			return -EBUSY;
		}
	}
	closedir(d);
	for (i = 0; i < MR_ARRAY_SIZE(modules); i++) {
		char path[128];

		mr_pathf(path, sizeof(path), "/sys/module/%s/parameters/enabled", modules[i]);
		if (mr_root_read_str(path, buf, sizeof(buf)))
			continue;	/* module absent */
		if (buf[0] == 'Y' || buf[0] == 'y' || buf[0] == '1') {
			snprintf(why, len, "DAMON is in use: %s is enabled", modules[i]);
			return -EBUSY;
		}
	}
	return 0;
}

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

/* System RAM ranges for paddr, from /proc/iomem (addresses need root). */
static int ram_ranges(struct mr_mon_range **out, size_t *nr)
{
	char *data = NULL, *line, *save = NULL;
	struct mr_mon_range *r = NULL;
	size_t len, n = 0;
	int err = mr_root_read_file("/proc/iomem", 1u << 20, &data, &len);

	if (err)
		return err;
	for (line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		uint64_t s, e;

		if (line[0] == ' ' || !strstr(line, ": System RAM"))
			continue;	/* top level entries only */
		if (sscanf(line, "%" SCNx64 "-%" SCNx64, &s, &e) != 2 || e <= s)
			continue;
		if (!s && !e)
			continue;
		{
			struct mr_mon_range *p = realloc(r, (n + 1) * sizeof(*r));

			if (!p) {
				free(r);
				free(data);
				return mr_error(-ENOMEM, "damon: out of memory");
			}
			r = p;
		}
		r[n].start = s;
		r[n].end = e + 1;
		n++;
	}
	free(data);
	if (!n || (n == 1 && r[0].end <= 1)) {
		free(r);
		return mr_error(-EPERM, "/proc/iomem: no System RAM addresses (needs root)");
	}
	*out = r;
	*nr = n;
	return 0;
}

/* The kdamond's CPU time, seconds: the part of the cost the kernel pays. */
static double kdamond_cpu_s(void)
{
	char path[64], stat[1024], *p;
	unsigned long ut = 0, st = 0;
	uint64_t pid;

	if (mr_root_read_u64(KD "/pid", &pid) || !pid)
		return 0;
	mr_pathf(path, sizeof(path), "/proc/%" PRIu64 "/stat", pid);
	if (mr_root_read_str(path, stat, sizeof(stat)))
		return 0;
	p = strrchr(stat, ')');	/* comm may hold spaces; fields 14, 15 follow it */
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
		return 0;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* Keep the largest reading: a kdamond whose target exited is gone, with its time. */
static void note_kdamond_cpu(struct mr_mon_ctx *ctx)
{
	double cpu = kdamond_cpu_s();

	if (cpu > ctx->kernel_cpu_s)
		ctx->kernel_cpu_s = cpu;
}

/* nr_kdamonds = 0 tries, 10 ms apart: 30 s */
#define RESET_RETRIES 3000

static void reset(struct mr_mon_ctx *ctx)
{
	char state[32] = "", path[64], comm[32];
	uint64_t pid = 0;
	int i;

	/* off first: nr_kdamonds cannot change while one started through sysfs runs */
	if (!mr_root_read_str(KD "/state", state, sizeof(state)) && strcmp(state, "on") == 0) {
		mr_root_read_u64(KD "/pid", &pid);
		wr(ctx, KD "/state", "off");
		/* "off" only asks the thread to stop: wait (up to 2 s) until it is gone,
		 * so the next user does not start beside a kdamond still winding down */
		mr_pathf(path, sizeof(path), "/proc/%" PRIu64 "/comm", pid);
		for (i = 0; pid && i < 200; i++) {
			if (mr_root_read_str(path, comm, sizeof(comm)) || strncmp(comm, "kdamond", 7))
				break;
			usleep(10000);
		}
	}
	/* nr_kdamonds refuses (-EBUSY) while a kdamond still winds down, which on
	 * a loaded emulated guest took longer than the wait above, once more than 10 s
	 * (a CI run with two guests on two cores): retry up to 30 s */
	for (i = 0; i < RESET_RETRIES; i++) {
		int err = wr(ctx, ADMIN "/kdamonds/nr_kdamonds", "0");

		if (err != -EBUSY)
			break;
		usleep(10000);
	}
	if (i == RESET_RETRIES)
		fprintf(stderr, "memregctl: damon: %s\n", mr_last_error());
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

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int mr_mon_damon_coalesce(struct mr_mon_range *r, size_t *nr, size_t limit)
{
	uint64_t *gaps, cut;
	size_t i, n = *nr, out, need, at_cut = 0;

	if (!limit)
		limit = 1;
	if (n <= limit)
		return 0;
	gaps = malloc((n - 1) * sizeof(*gaps));
	if (!gaps)
		return mr_error(-ENOMEM, "damon: out of memory");
	for (i = 1; i < n; i++)
		gaps[i - 1] = r[i].start - r[i - 1].end;
	qsort(gaps, n - 1, sizeof(*gaps), cmp_u64);
	/* close the n - limit narrowest gaps: all below @cut, and of those equal to
	 * it as many as still needed, lowest addresses first */
	need = n - limit;
	cut = gaps[need - 1];
	for (i = 0; i < need; i++)
		at_cut += gaps[i] == cut;
	free(gaps);
	for (i = 1, out = 0; i < n; i++) {
		uint64_t gap = r[i].start - r[out].end;

		if (gap < cut || (gap == cut && at_cut && at_cut--))
			r[out].end = r[i].end;
		else
			r[++out] = r[i];
	}
	*nr = out + 1;
	return 0;
}

/* The mappings of @pid as at most max_nr_regions / 2 ranges (room to split). */
static int target_ranges(pid_t pid, const struct mr_mon_attrs *a, struct mr_mon_range **r,
			 size_t *nr)
{
	int err = mr_mon_read_maps(pid, r, nr);

	if (err)
		return err;
	if (!*nr) {
		free(*r);
		*r = NULL;
		return mr_error(-ESRCH, "damon: process %d has no mappings", (int)pid);
	}
	err = mr_mon_damon_coalesce(*r, nr, a->max_nr_regions / 2);
	if (err) {
		free(*r);
		*r = NULL;
	}
	return err;
}

static int write_regions(struct mr_mon_ctx *ctx, const struct mr_mon_range *r, size_t nr)
{
	char path[160];
	size_t i;
	int err = wr_u64(ctx, CTX "/targets/0/regions/nr_regions", nr);

	for (i = 0; !err && i < nr; i++) {
		err = wr_u64(ctx, mr_pathf(path, sizeof(path), CTX "/targets/0/regions/%zu/start", i),
			     r[i].start);
		if (!err)
			err = wr_u64(ctx, mr_pathf(path, sizeof(path),
						   CTX "/targets/0/regions/%zu/end", i), r[i].end);
	}
	return err;
}

/* The first regions of a process: its mappings split evenly into about
 * min_nr_regions (what vaddr's init does with its three ranges). */
static int initial_regions(struct mr_mon_ctx *ctx, pid_t pid, const struct mr_mon_attrs *a)
{
	struct damon_priv *p = ctx->priv;
	struct mr_mon_target t = { .kind = MR_MON_TARGET_PROCESS };
	struct mr_mon_range *pieces = NULL;
	size_t i;
	int err;

	err = target_ranges(pid, a, &p->ranges, &p->nr_ranges);
	if (!err)
		err = mr_mon_init_regions(&t, p->ranges, p->nr_ranges, a->min_nr_regions);
	if (!err && !(pieces = calloc(t.nr_regions, sizeof(*pieces))))
		err = mr_error(-ENOMEM, "damon: out of memory");
	for (i = 0; !err && i < t.nr_regions; i++) {
		pieces[i].start = t.regions[i].start;
		pieces[i].end = t.regions[i].end;
	}
	if (!err)
		err = write_regions(ctx, pieces, t.nr_regions);
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
	err = target_ranges(ctx->target.pid, &ctx->attrs, &r, &nr);
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
	err = write_regions(ctx, r, nr);
	/* the kdamond takes the new inputs at its next aggregation; the write waits */
	if (!err)
		err = wr(ctx, KD "/state", "commit");
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

/* Build kdamond 0 with one context, one target and a stat scheme, and start it. */
static int start(struct mr_mon_ctx *ctx, pid_t pid, const struct mr_mon_attrs *a)
{
	struct damon_priv *p = ctx->priv;
	char *avail = NULL;
	const char *ops = ctx->target.kind == MR_MON_TARGET_PHYS ? "paddr" : "vaddr";
	size_t len;
	int err;

	err = wr(ctx, ADMIN "/kdamonds/nr_kdamonds", "1");
	if (err)
		return err;
	p->started = true;
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

		err = ram_ranges(&r, &nr);
		if (!err)
			err = write_regions(ctx, r, nr);
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
		err = wr(ctx, KD "/state", "on");
	return err;
}

static int cmp_region(const void *a, const void *b)
{
	const struct mr_mon_region *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Ask for the tried regions of the last aggregation and read them into the target. */
static int read_tried(struct mr_mon_ctx *ctx)
{
	struct mr_mon_target *t = &ctx->target;
	char path[200], state[32] = "";
	struct dirent *de;
	DIR *d;
	size_t n = 0;
	int err;

	if (mr_root_read_str(KD "/state", state, sizeof(state)) || strcmp(state, "on") != 0)
		return 1;	/* the kdamond stopped: its target exited */
	err = wr(ctx, KD "/state", "update_schemes_tried_regions");
	if (err) {
		if (!mr_root_read_str(KD "/state", state, sizeof(state)) && strcmp(state, "on") != 0)
			return 1;
		return err;
	}
	d = mr_root_opendir(SCHEME "/tried_regions");
	if (!d)
		return mr_error(-EIO, "damon: cannot list %s/tried_regions", SCHEME);
	while ((de = readdir(d))) {
		struct mr_mon_region r = { 0 };
		uint64_t v;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		if (n == t->cap_regions) {
			size_t cap = t->cap_regions ? 2 * t->cap_regions : 256;
			struct mr_mon_region *p = realloc(t->regions, cap * sizeof(*p));

			if (!p) {
				closedir(d);
				return mr_error(-ENOMEM, "damon: out of memory");
			}
			t->regions = p;
			t->cap_regions = cap;
		}
		err = mr_root_read_u64(mr_pathf(path, sizeof(path), SCHEME "/tried_regions/%s/start",
						de->d_name), &r.start);
		if (!err)
			err = mr_root_read_u64(mr_pathf(path, sizeof(path),
							SCHEME "/tried_regions/%s/end", de->d_name), &r.end);
		if (!err)
			err = mr_root_read_u64(mr_pathf(path, sizeof(path),
							SCHEME "/tried_regions/%s/nr_accesses",
							de->d_name), &v);
		r.nr_accesses = (uint32_t)v;
		if (!err)
			err = mr_root_read_u64(mr_pathf(path, sizeof(path),
							SCHEME "/tried_regions/%s/age", de->d_name), &v);
		r.age = (uint32_t)v;
		if (err) {
			closedir(d);
			return err;
		}
		t->regions[n++] = r;
	}
	closedir(d);
	qsort(t->regions, n, sizeof(*t->regions), cmp_region);
	t->nr_regions = n;
	return 0;
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
		while ((n = read(p->trace_fd, buf, sizeof(buf))) > 0) {
			err = mr_mon_damon_trace_feed(&p->agg, buf, (size_t)n);
			if (err)
				return err;
		}
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return mr_error(-errno, "damon: %s/trace_pipe: %s", p->inst, strerror(errno));
		if (p->agg.nr_complete > p->nr_used)
			break;
		if (mr_root_read_str(KD "/state", state, sizeof(state)) || strcmp(state, "on") != 0)
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

	return p->trace_fd >= 0 ? read_trace(ctx) : read_tried(ctx);
}

/* Undo what start and choose_path set up: the kdamond, the tracefs instance. */
static void priv_release(struct mr_mon_ctx *ctx, struct damon_priv *p)
{
	if (p->started)
		reset(ctx);
	trace_close(ctx, p);
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
	priv_init(&p);
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
				"showed accesses in %s", p.inst[0] ? "the damon_aggregated "
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
	priv_init(ctx->priv);
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
		if (p->started)
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
		"nothing. Changes the kernel's state, so it needs --apply; sets nr_kdamonds\n"
		"back to 0 and removes its tracefs instance when done. For a process, DAMON\n"
		"monitors its mappings, read again every update interval.",
	/* the kernel's own defaults: sampling in the kernel costs little */
	.default_attrs = { .sample_us = 5000, .aggr_us = 100000, .update_us = 1000000,
			   .min_nr_regions = 10, .max_nr_regions = 1000 },
	.needs_apply = true,
	.selftest = damon_selftest,
	.init = damon_init,
	.snapshot = damon_snapshot,
	.cleanup = damon_cleanup,
};
