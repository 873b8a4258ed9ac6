/* The monitor's core: adaptive regions as in the kernel's mm/damon/core.c (split,
 * merge, age) and the sampling loop, independent of how accesses are detected. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/util.h"
#include "monitor/monitor.h"

#define PAGE_ALIGN_DOWN(x) ((x) & ~(uint64_t)(MR_MON_MIN_REGION_BYTES - 1))

uint64_t mr_mon_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* xorshift64*: cheap, and seeded per context so runs differ (tests replace it). */
static uint64_t default_rand(struct mr_mon_ctx *ctx, uint64_t lo, uint64_t hi)
{
	uint64_t x = ctx->rand_state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	ctx->rand_state = x;
	if (hi <= lo)
		return lo;
	return lo + (x * UINT64_C(2685821657736338717)) % (hi - lo);
}

void mr_mon_ctx_init(struct mr_mon_ctx *ctx, const struct mr_mon_ops *ops)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->ops = ops;
	if (ops)
		ctx->attrs = ops->default_attrs;
	ctx->rand = default_rand;
	ctx->rand_state = mr_mon_now_us() | 1;
}

void mr_mon_ctx_destroy(struct mr_mon_ctx *ctx)
{
	free(ctx->target.regions);
	ctx->target.regions = NULL;
	ctx->target.nr_regions = ctx->target.cap_regions = 0;
}

int mr_mon_attrs_check(const struct mr_mon_attrs *a)
{
	if (!a->sample_us || a->aggr_us < a->sample_us || a->update_us < a->aggr_us)
		return mr_error(-EINVAL, "attributes: need 0 < sample_us <= aggr_us <= update_us");
	if (a->min_nr_regions < 3 || a->max_nr_regions < 2 * a->min_nr_regions)
		return mr_error(-EINVAL, "attributes: need 3 <= min regions and max >= 2 * min");
	return 0;
}

int mr_mon_attrs_parse(const char *s, struct mr_mon_attrs *attrs)
{
	struct mr_mon_attrs a = *attrs;
	uint64_t *fields[3] = { &a.sample_us, &a.aggr_us, &a.update_us };
	char buf[256], *p;
	unsigned i = 0;
	int n = 0;

	if (strlen(s) >= sizeof(buf))
		return mr_error(-EINVAL, "attributes '%s': too long", s);
	strcpy(buf, s);
	/* strtok would skip empty fields, which mean "keep". */
	for (p = buf; ; i++) {
		char *comma = strchr(p, ',');
		uint64_t v;

		if (comma)
			*comma = '\0';
		if (i >= 5)
			return mr_error(-EINVAL, "attributes '%s': at most 5 fields "
					"(sample,aggr,update,min,max)", s);
		if (*p) {
			/* intervals with a unit (5ms, 100ms, 1s) or bare microseconds */
			if (i < 3 ? mr_parse_duration_us(p, 1, &v) : mr_parse_u64(p, &v))
				return mr_error(-EINVAL, "attributes '%s': '%s' is not %s", s, p,
						i < 3 ? "a time (5ms, 100ms, 1s; bare: microseconds)" :
						"a number");
			if (i < 3) {
				*fields[i] = v;
			} else {
				if (v > 1000000)
					return mr_error(-EINVAL, "attributes '%s': region count %s too large", s, p);
				if (i == 3)
					a.min_nr_regions = (uint32_t)v;
				else
					a.max_nr_regions = (uint32_t)v;
			}
			n++;
		}
		if (!comma)
			break;
		p = comma + 1;
	}
	if (!n)
		return mr_error(-EINVAL, "attributes '%s': no value given", s);
	n = mr_mon_attrs_check(&a);
	if (n)
		return n;
	*attrs = a;
	return 0;
}

static int reserve(struct mr_mon_target *t, size_t nr)
{
	struct mr_mon_region *p;
	size_t cap;

	if (nr <= t->cap_regions)
		return 0;
	cap = t->cap_regions ? t->cap_regions : 64;
	while (cap < nr)
		cap *= 2;
	p = realloc(t->regions, cap * sizeof(*p));
	if (!p)
		return mr_error(-ENOMEM, "monitor: out of memory for %zu regions", nr);
	t->regions = p;
	t->cap_regions = cap;
	return 0;
}

static struct mr_mon_region new_region(uint64_t start, uint64_t end)
{
	struct mr_mon_region r = { .start = start, .end = end, .sampling_addr = start };

	return r;
}

int mr_mon_set_ranges(struct mr_mon_target *t, const struct mr_mon_range *ranges, size_t nr)
{
	struct mr_mon_target out = { 0 };	/* the new regions, built beside the old */
	size_t i, j = 0;

	if (reserve(&out, t->nr_regions + 2 * nr + 1))
		goto oom;
	for (i = 0; i < nr; i++) {
		uint64_t cur = ranges[i].start;

		/* regions entirely before this range are dropped */
		while (j < t->nr_regions && t->regions[j].end <= ranges[i].start)
			j++;
		for (; j < t->nr_regions && t->regions[j].start < ranges[i].end; j++) {
			struct mr_mon_region r = t->regions[j];

			if (r.start < cur)
				r.start = cur;
			if (r.end > ranges[i].end)
				r.end = ranges[i].end;
			if (r.start >= r.end)
				continue;
			if (reserve(&out, out.nr_regions + 2))
				goto oom;
			if (r.start > cur)	/* a hole the old regions did not cover */
				out.regions[out.nr_regions++] = new_region(cur, r.start);
			if (r.sampling_addr < r.start || r.sampling_addr >= r.end)
				r.sampling_addr = r.start;
			out.regions[out.nr_regions++] = r;
			cur = r.end;
			if (t->regions[j].end > ranges[i].end)
				break;	/* the region continues into the next range */
		}
		if (cur < ranges[i].end) {
			if (reserve(&out, out.nr_regions + 1))
				goto oom;
			out.regions[out.nr_regions++] = new_region(cur, ranges[i].end);
		}
	}
	free(t->regions);
	t->regions = out.regions;
	t->nr_regions = out.nr_regions;
	t->cap_regions = out.cap_regions;
	return 0;
oom:
	free(out.regions);
	return mr_error(-ENOMEM, "monitor: out of memory for regions");
}

int mr_mon_init_regions(struct mr_mon_target *t, const struct mr_mon_range *ranges,
			size_t nr, uint32_t min_nr_regions)
{
	uint64_t total = 0;
	size_t i, n = 0;
	int err;

	for (i = 0; i < nr; i++)
		total += ranges[i].end - ranges[i].start;
	t->nr_regions = 0;
	if (!total)
		return 0;
	for (i = 0; i < nr; i++) {
		uint64_t sz = ranges[i].end - ranges[i].start;
		uint64_t pieces = (uint64_t)min_nr_regions * sz / total, piece, s;

		if (pieces < 1)
			pieces = 1;
		if (pieces > sz / MR_MON_MIN_REGION_BYTES)
			pieces = sz / MR_MON_MIN_REGION_BYTES ? sz / MR_MON_MIN_REGION_BYTES : 1;
		piece = PAGE_ALIGN_DOWN(sz / pieces);
		if (!piece)
			piece = sz;
		err = reserve(t, n + pieces + 1);
		if (err)
			return err;
		for (s = ranges[i].start; s < ranges[i].end; s += piece) {
			uint64_t e = s + piece;

			/* the last piece takes the remainder */
			if (e > ranges[i].end || ranges[i].end - e < piece)
				e = ranges[i].end;
			t->regions[n++] = new_region(s, e);
			if (e == ranges[i].end)
				break;
		}
	}
	t->nr_regions = n;
	t->last_nr_regions = n;
	return 0;
}

static uint32_t diff_u32(uint32_t a, uint32_t b)
{
	return a > b ? a - b : b - a;
}

/* One pass of DAMON's damon_merge_regions_of(); @age says whether to age. */
static void merge_pass(struct mr_mon_target *t, uint32_t threshold, uint64_t sz_limit, bool age)
{
	size_t i, n = 0;

	for (i = 0; i < t->nr_regions; i++) {
		struct mr_mon_region r = t->regions[i];

		if (age) {
			if (diff_u32(r.nr_accesses, r.last_nr_accesses) > threshold)
				r.age = 0;
			else
				r.age++;
		}
		if (n) {
			struct mr_mon_region *l = &t->regions[n - 1];
			uint64_t szl = mr_mon_region_bytes(l), szr = mr_mon_region_bytes(&r);

			if (l->end == r.start && diff_u32(l->nr_accesses, r.nr_accesses) <= threshold &&
			    szl + szr <= sz_limit) {
				/* size-weighted averages, as damon_merge_two_regions() */
				l->nr_accesses = (uint32_t)((l->nr_accesses * szl + r.nr_accesses * szr) /
							    (szl + szr));
				l->age = (uint32_t)((l->age * szl + r.age * szr) / (szl + szr));
				l->end = r.end;
				continue;
			}
		}
		t->regions[n++] = r;
	}
	t->nr_regions = n;
}

void mr_mon_merge_regions(struct mr_mon_target *t, uint32_t threshold, uint64_t sz_limit)
{
	merge_pass(t, threshold, sz_limit, true);
}

/* DAMON's kdamond_merge_regions(): raise the threshold until under max regions. */
static void merge_to_limit(struct mr_mon_ctx *ctx, uint32_t max_nr_accesses)
{
	struct mr_mon_target *t = &ctx->target;
	uint32_t threshold = max_nr_accesses / 10, max_thres = max_nr_accesses ? max_nr_accesses : 1;
	uint64_t total = 0, sz_limit;
	size_t i;

	for (i = 0; i < t->nr_regions; i++)
		total += mr_mon_region_bytes(&t->regions[i]);
	sz_limit = total / ctx->attrs.min_nr_regions;
	if (sz_limit < MR_MON_MIN_REGION_BYTES)
		sz_limit = MR_MON_MIN_REGION_BYTES;
	merge_pass(t, threshold, sz_limit, true);
	while (t->nr_regions > ctx->attrs.max_nr_regions && threshold / 2 < max_thres) {
		threshold = threshold ? threshold * 2 : 1;
		merge_pass(t, threshold, sz_limit, false);
	}
}

int mr_mon_split_regions(struct mr_mon_ctx *ctx, unsigned nr_subs)
{
	struct mr_mon_target *t = &ctx->target;
	struct mr_mon_region *out;
	size_t i, n = 0;

	if (nr_subs < 2)
		return 0;
	if (nr_subs > 16)
		nr_subs = 16;
	out = malloc((t->nr_regions * nr_subs + 1) * sizeof(*out));
	if (!out)
		return mr_error(-ENOMEM, "monitor: out of memory for %zu regions",
				t->nr_regions * nr_subs);
	for (i = 0; i < t->nr_regions; i++) {
		struct mr_mon_region r = t->regions[i], right[16];
		unsigned nright = 0, s;

		for (s = 0; s + 1 < nr_subs; s++) {
			uint64_t sz = mr_mon_region_bytes(&r), sub;

			if (sz < 2 * MR_MON_MIN_REGION_BYTES)
				break;
			/* a random tenth, 1..9, as damon_split_regions_of() */
			sub = PAGE_ALIGN_DOWN(ctx->rand(ctx, 1, 10) * sz / 10);
			if (!sub || sub >= sz)
				continue;
			/* the right piece is final; DAMON keeps splitting the left one */
			right[nright] = r;
			right[nright].start = r.start + sub;
			right[nright].sampling_addr = right[nright].start;
			nright++;
			r.end = r.start + sub;
			if (r.sampling_addr >= r.end)
				r.sampling_addr = r.start;
		}
		out[n++] = r;
		while (nright)
			out[n++] = right[--nright];
	}
	free(t->regions);
	t->regions = out;
	t->cap_regions = t->nr_regions * nr_subs + 1;
	t->nr_regions = n;
	return 0;
}

/* DAMON's kdamond_split_regions(): 2 pieces, 3 when the count did not change
 * since the last split and is small, none above half the maximum. */
static int split_adaptive(struct mr_mon_ctx *ctx)
{
	struct mr_mon_target *t = &ctx->target;
	size_t before = t->nr_regions;
	unsigned nr_subs = 2;
	int err;

	if (before > ctx->attrs.max_nr_regions / 2)
		return 0;
	/* maybe the middle of a region differs: try three pieces when stuck */
	if (t->last_nr_regions == before && before < ctx->attrs.max_nr_regions / 3)
		nr_subs = 3;
	err = mr_mon_split_regions(ctx, nr_subs);
	t->last_nr_regions = before;
	return err;
}

int mr_mon_aggregate(struct mr_mon_ctx *ctx, uint32_t max_nr_accesses, uint64_t time_us,
		     mr_mon_snapshot_fn fn, void *arg)
{
	struct mr_mon_target *t = &ctx->target;
	size_t i;
	int ret = 0;

	merge_to_limit(ctx, max_nr_accesses);
	if (fn)
		ret = fn(ctx, time_us, arg);
	for (i = 0; i < t->nr_regions; i++) {
		t->regions[i].last_nr_accesses = t->regions[i].nr_accesses;
		t->regions[i].nr_accesses = 0;
	}
	if (ret)
		return ret;
	return split_adaptive(ctx);
}

/* The last aggregation interval, cut short by the end of the target or a stop:
 * merged and reported like a whole one, with the samples it really holds, so a
 * program shorter than one interval still leaves a snapshot. No reset or split
 * after it: monitoring is over. */
static int flush_partial(struct mr_mon_ctx *ctx, uint32_t max_nr_accesses, uint32_t nr_samples,
			 uint64_t time_us, mr_mon_snapshot_fn fn, void *arg)
{
	merge_to_limit(ctx, max_nr_accesses);
	ctx->aggr_nr_samples = nr_samples;
	return fn(ctx, time_us, arg);
}

static uint32_t samples_per_aggr(const struct mr_mon_attrs *a)
{
	uint64_t n = a->aggr_us / a->sample_us;	/* mr_mon_attrs_check: sample_us > 0 */

	return n < 1 ? 1 : n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

void mr_mon_pick_sampling_addrs(struct mr_mon_ctx *ctx)
{
	struct mr_mon_target *t = &ctx->target;
	size_t i;

	for (i = 0; i < t->nr_regions; i++) {
		struct mr_mon_region *r = &t->regions[i];

		r->sampling_addr = PAGE_ALIGN_DOWN(ctx->rand(ctx, r->start, r->end));
		if (r->sampling_addr < r->start)
			r->sampling_addr = r->start;
	}
}

static int get_ranges(struct mr_mon_ctx *ctx, struct mr_mon_range **ranges, size_t *nr)
{
	if (ctx->ops->ranges)
		return ctx->ops->ranges(ctx, ranges, nr);
	if (ctx->target.kind != MR_MON_TARGET_PROCESS)
		return mr_error(-ENOTSUP, "%s: cannot monitor physical memory", ctx->ops->name);
	return mr_mon_read_maps(ctx->target.pid, ranges, nr);
}

static void sleep_until(uint64_t when_us)
{
	uint64_t now = mr_mon_now_us();
	struct timespec ts;

	if (when_us <= now)
		return;
	ts.tv_sec = (time_t)((when_us - now) / 1000000u);
	ts.tv_nsec = (long)((when_us - now) % 1000000u) * 1000;
	/* EINTR (a stop signal) just ends the sleep early */
	nanosleep(&ts, NULL);
}

static bool stopped(struct mr_mon_ctx *ctx)
{
	return ctx->stop && *ctx->stop;
}

/* A process target that ended: exited, or its pid is another process's now. */
static bool target_gone(const struct mr_mon_ctx *ctx)
{
	return ctx->target.kind == MR_MON_TARGET_PROCESS && ctx->target.pid > 0 &&
	       !mr_mon_target_alive(&ctx->target);
}

/* The kernel aggregates itself (damon) or the data is recorded (replay). */
static int run_snapshots(struct mr_mon_ctx *ctx, mr_mon_snapshot_fn fn, void *arg)
{
	uint64_t start = mr_mon_now_us(), next = start + ctx->attrs.aggr_us;
	int ret = 0;

	while (!stopped(ctx)) {
		if (target_gone(ctx))
			break;
		if (!ctx->replay_path)
			sleep_until(next);
		if (stopped(ctx))
			break;
		ctx->aggr_nr_samples = samples_per_aggr(&ctx->attrs);
		ret = ctx->ops->snapshot(ctx);
		if (ret)
			break;
		if (fn) {
			ret = fn(ctx, ctx->replay_path ? ctx->snapshot_time_us : mr_mon_now_us() - start, arg);
			if (ret)
				break;
		}
		next += ctx->attrs.aggr_us;
	}
	return ret > 0 ? 0 : ret;
}

/* The target's regions made afresh from its address ranges, as monitoring starts. */
static int regions_from_ranges(struct mr_mon_ctx *ctx)
{
	struct mr_mon_range *ranges = NULL;
	size_t nr = 0;
	int err = get_ranges(ctx, &ranges, &nr);

	if (err)
		return err;
	err = mr_mon_init_regions(&ctx->target, ranges, nr, ctx->attrs.min_nr_regions);
	free(ranges);
	return err;
}

/*
 * The target exec'd: its old address space went with the old program, and so did
 * what a backend opened on it (a pagemap then reads 0 bytes). Start over as
 * monitoring starts, on the new program: regions made afresh from its mappings,
 * the backend's cleanup and init (which opens its files again). On an error the
 * backend is still set up (or half set up by init), as cleanup expects.
 */
static int reattach(struct mr_mon_ctx *ctx)
{
	int err = regions_from_ranges(ctx);

	if (err)
		return err;
	if (ctx->ops->cleanup)
		ctx->ops->cleanup(ctx);
	return ctx->ops->init ? ctx->ops->init(ctx) : 0;
}

int mr_mon_run(struct mr_mon_ctx *ctx, mr_mon_snapshot_fn fn, void *arg)
{
	struct mr_mon_range *ranges = NULL;
	size_t nr = 0;
	uint64_t start, next_sample, next_aggr, next_update;
	uint32_t max_nr = 0, aggr_samples = 0;	/* since the last aggregation */
	int err;

	err = mr_mon_attrs_check(&ctx->attrs);
	if (err)
		return err;
	if (ctx->ops->process_only && ctx->target.kind != MR_MON_TARGET_PROCESS)
		return mr_error(-ENOTSUP, "%s: monitors processes only, not physical memory",
				ctx->ops->name);
	/* every caller (record, control, bench) gets the same refusal up front */
	err = mr_mon_check_consent(ctx);
	if (err)
		return err;
	/* what tells an exec from an exit or a reused pid later */
	mr_mon_target_read_starttime(&ctx->target);
	/* damon's costs a whole kdamond lifecycle; init re-checks what safety needs */
	if (ctx->ops->selftest && !ctx->selftest_passed) {
		err = ctx->ops->selftest(ctx);
		if (err)
			return err;
		ctx->selftest_passed = true;
	}
	if (!ctx->ops->snapshot) {
		err = regions_from_ranges(ctx);
		if (err)
			return err;
	}
	if (ctx->ops->init) {
		err = ctx->ops->init(ctx);
		if (err)
			goto out;	/* init may have half set up: cleanup undoes it */
	}
	if (ctx->ops->snapshot) {
		err = run_snapshots(ctx, fn, arg);
		goto out;
	}

	start = mr_mon_now_us();
	next_sample = start;
	next_aggr = start + ctx->attrs.aggr_us;
	next_update = start + ctx->attrs.update_us;
	while (!stopped(ctx)) {
		uint32_t m = 0;

		if (target_gone(ctx))
			break;
		mr_mon_pick_sampling_addrs(ctx);
		if (ctx->ops->prepare) {
			err = ctx->ops->prepare(ctx);
			if (err) {
				/* the target ended between the liveness check and the prepare */
				if (target_gone(ctx))
					err = 0;
				break;
			}
		}
		next_sample += ctx->attrs.sample_us;
		sleep_until(next_sample);
		if (stopped(ctx))
			break;
		err = ctx->ops->check(ctx, &m);
		if (err == -ESRCH && ctx->target.kind == MR_MON_TARGET_PROCESS &&
		    mr_mon_target_execd(&ctx->target)) {
			/* the interval's samples were of the old program's addresses: not
			 * reported, as nothing (a controller) must act on them now */
			err = reattach(ctx);
			if (err) {
				if (target_gone(ctx))
					err = 0;
				break;
			}
			max_nr = 0;
			aggr_samples = 0;
			next_sample = mr_mon_now_us();
			next_aggr = next_sample + ctx->attrs.aggr_us;
			/* read the mappings again after the next sample too: the exec may
			 * have been met before it mapped all of the new program */
			next_update = next_sample;
			continue;
		}
		if (err) {
			/* the process ended between the liveness check and the read; while it
			 * exits its stat may still say running, but its mm is gone (-ESRCH) */
			if (err == -ESRCH || target_gone(ctx))
				err = 0;
			break;
		}
		ctx->nr_samples++;
		aggr_samples++;
		if (m > max_nr)
			max_nr = m;
		if (mr_mon_now_us() >= next_aggr) {
			ctx->aggr_nr_samples = aggr_samples;
			err = mr_mon_aggregate(ctx, max_nr, next_aggr - start, fn, arg);
			if (err)
				break;
			max_nr = 0;
			aggr_samples = 0;
			next_aggr += ctx->attrs.aggr_us;
			/* a stalled loop (suspended machine) must not replay missed intervals */
			if (next_aggr < mr_mon_now_us())
				next_aggr = mr_mon_now_us() + ctx->attrs.aggr_us;
		}
		if (next_sample < mr_mon_now_us())
			next_sample = mr_mon_now_us();
		if (mr_mon_now_us() >= next_update) {
			next_update += ctx->attrs.update_us;
			err = get_ranges(ctx, &ranges, &nr);
			if (err) {
				if (target_gone(ctx))
					err = 0;
				break;
			}
			err = mr_mon_set_ranges(&ctx->target, ranges, nr);
			free(ranges);
			ranges = NULL;
			if (err)
				break;
		}
	}
	if (!err && aggr_samples && fn)
		err = flush_partial(ctx, max_nr, aggr_samples, mr_mon_now_us() - start, fn, arg);
out:
	if (ctx->ops->cleanup)
		ctx->ops->cleanup(ctx);
	return err > 0 ? 0 : err;
}
