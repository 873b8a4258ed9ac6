/* Unit tests of the monitor core: adaptive regions (merge, age, split, target
 * ranges) against DAMON's rules, and the sampling loop over a fake backend.
 * Addresses in the diagrams are in pages. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <errno.h>
#include <signal.h>
#include <unistd.h>

#include "common/util.h"
#include "monitor/monitor.h"

#define P 4096u

struct reg {
	uint64_t start, end;	/* pages */
	uint32_t nr, last, age;
};

static void load(struct mr_mon_target *t, const struct reg *in, size_t n)
{
	size_t i;

	free(t->regions);
	t->regions = calloc(n + 1, sizeof(*t->regions));
	t->cap_regions = n + 1;
	t->nr_regions = n;
	for (i = 0; i < n; i++) {
		t->regions[i].start = in[i].start * P;
		t->regions[i].end = in[i].end * P;
		t->regions[i].nr_accesses = in[i].nr;
		t->regions[i].last_nr_accesses = in[i].last;
		t->regions[i].age = in[i].age;
	}
}

static void expect(const struct mr_mon_target *t, const struct reg *exp, size_t n, bool check_nr)
{
	size_t i;

	assert_int_equal(t->nr_regions, n);
	for (i = 0; i < n; i++) {
		assert_int_equal(t->regions[i].start, exp[i].start * P);
		assert_int_equal(t->regions[i].end, exp[i].end * P);
		if (check_nr) {
			assert_int_equal(t->regions[i].nr_accesses, exp[i].nr);
			assert_int_equal(t->regions[i].age, exp[i].age);
		}
	}
}

#define MAXR 12
struct merge_case {
	const char *name;
	uint32_t threshold;
	uint64_t sz_limit_pages;
	struct reg in[MAXR];
	size_t nin;
	struct reg out[MAXR];
	size_t nout;
};

static const struct merge_case merge_cases[] = {
	/* close neighbours merge, weighted by size; far ones stay apart
	 *   in:     [0 n5 4)[4 n6 8)[8 n20 12)[12 n19 16)   threshold 2
	 *   expect: [0 n5     8)[8 n19          16) */
	{ "close-neighbours", 2, 100,
	  { { 0, 4, 5, 5, 0 }, { 4, 8, 6, 6, 0 }, { 8, 12, 20, 20, 0 }, { 12, 16, 19, 19, 0 } }, 4,
	  { { 0, 8, 5, 0, 1 }, { 8, 16, 19, 0, 1 } }, 2 },
	/* the size cap stops a run of equal regions
	 *   in:     [0 n1 4)[4 n1 8)[8 n1 12)   cap 8 pages
	 *   expect: [0 n1     8)[8 n1 12) */
	{ "size-cap", 0, 8,
	  { { 0, 4, 1, 1, 0 }, { 4, 8, 1, 1, 0 }, { 8, 12, 1, 1, 0 } }, 3,
	  { { 0, 8, 1, 0, 1 }, { 8, 12, 1, 0, 1 } }, 2 },
	/* a gap (unmapped) between regions is never merged over
	 *   in:     [0 n1 4)  ....  [8 n1 12)
	 *   expect: [0 n1 4)  ....  [8 n1 12) */
	{ "gap", 5, 100,
	  { { 0, 4, 1, 1, 0 }, { 8, 12, 1, 1, 0 } }, 2,
	  { { 0, 4, 1, 0, 1 }, { 8, 12, 1, 0, 1 } }, 2 },
	/* age: +1 when nr_accesses stayed within the threshold of the last
	 * aggregation, 0 when it moved more; merged ages are size-weighted
	 *   in:     [0 n5 last5 age3 4)  ..  [8 n9 last0 age7 12)
	 *   expect: [0 age4 4)           ..  [8 age0 12)
	 *   in:     [0 n1 age10 4)[4 n1 age2 12)  -> aged 11 and 3
	 *   expect: [0 n1 age(11*4+3*8)/12=5   12) */
	{ "age", 2, 100,
	  { { 0, 4, 5, 5, 3 }, { 8, 12, 9, 0, 7 } }, 2,
	  { { 0, 4, 5, 0, 4 }, { 8, 12, 9, 0, 0 } }, 2 },
	{ "age-weighted", 0, 100,
	  { { 0, 4, 1, 1, 10 }, { 4, 12, 1, 1, 2 } }, 2,
	  { { 0, 12, 1, 0, 5 } }, 1 },
};

static void test_merge(void **state)
{
	struct mr_mon_target t = { 0 };
	size_t i;

	for (i = 0; i < MR_ARRAY_SIZE(merge_cases); i++) {
		const struct merge_case *c = &merge_cases[i];

		print_message("merge case %s\n", c->name);
		load(&t, c->in, c->nin);
		mr_mon_merge_regions(&t, c->threshold, c->sz_limit_pages * P);
		expect(&t, c->out, c->nout, true);
	}
	free(t.regions);
}

/* Random tenths to return, in order. */
static const uint64_t *rand_seq;
static size_t rand_pos;

static uint64_t fixed_rand(struct mr_mon_ctx *ctx, uint64_t lo, uint64_t hi)
{
	uint64_t v = rand_seq[rand_pos++];

	assert_true(v >= lo && v < hi);
	return v;
}

struct split_case {
	const char *name;
	unsigned nr_subs;
	uint64_t rands[8];
	struct reg in[MAXR];
	size_t nin;
	struct reg out[MAXR];
	size_t nout;
};

static const struct split_case split_cases[] = {
	/* two pieces at 3/10
	 *   in:     [0                      40)
	 *   expect: [0      12)[12          40) */
	{ "two", 2, { 3 }, { { 0, 40, 0, 0, 0 } }, 1, { { 0, 12, 0, 0, 0 }, { 12, 40, 0, 0, 0 } }, 2 },
	/* three pieces: split at 5/10, then the left piece again at 5/10
	 *   in:     [0                      40)
	 *   expect: [0  10)[10  20)[20      40) */
	{ "three", 3, { 5, 5 }, { { 0, 40, 0, 0, 0 } }, 1,
	  { { 0, 10, 0, 0, 0 }, { 10, 20, 0, 0, 0 }, { 20, 40, 0, 0, 0 } }, 3 },
	/* a one-page region cannot split; the next one can
	 *   in:     [0 1)[1          11)
	 *   expect: [0 1)[1   6)[6   11) */
	{ "one-page", 2, { 5 }, { { 0, 1, 0, 0, 0 }, { 1, 11, 0, 0, 0 } }, 2,
	  { { 0, 1, 0, 0, 0 }, { 1, 6, 0, 0, 0 }, { 6, 11, 0, 0, 0 } }, 3 },
	/* a split point that rounds to zero pages is skipped
	 *   in:     [0 3)      1/10 of 3 pages = 0 pages
	 *   expect: [0 3) */
	{ "rounds-to-zero", 2, { 1 }, { { 0, 3, 0, 0, 0 } }, 1, { { 0, 3, 0, 0, 0 } }, 1 },
};

static void test_split(void **state)
{
	struct mr_mon_ctx ctx;
	size_t i;

	for (i = 0; i < MR_ARRAY_SIZE(split_cases); i++) {
		const struct split_case *c = &split_cases[i];

		print_message("split case %s\n", c->name);
		mr_mon_ctx_init(&ctx, NULL);
		ctx.rand = fixed_rand;
		rand_seq = c->rands;
		rand_pos = 0;
		load(&ctx.target, c->in, c->nin);
		assert_int_equal(mr_mon_split_regions(&ctx, c->nr_subs), 0);
		expect(&ctx.target, c->out, c->nout, false);
		mr_mon_ctx_destroy(&ctx);
	}
}

struct ranges_case {
	const char *name;
	struct reg in[MAXR];
	size_t nin;
	struct mr_mon_range ranges[4];	/* pages */
	size_t nranges;
	struct reg out[MAXR];
	size_t nout;
};

static const struct ranges_case ranges_cases[] = {
	/* the mapping shrank at both ends
	 *   old:    [0 n1 10)[10 n2 20)[20 n3 30)
	 *   ranges:      [5                 25)
	 *   expect:      [5 n1 10)[10 n2 20)[20 n3 25) */
	{ "shrink", { { 0, 10, 1, 0, 0 }, { 10, 20, 2, 0, 0 }, { 20, 30, 3, 0, 0 } }, 3,
	  { { 5, 25 } }, 1, { { 5, 10, 1, 0, 0 }, { 10, 20, 2, 0, 0 }, { 20, 25, 3, 0, 0 } }, 3 },
	/* a mapping went away, another appeared
	 *   old:    [0 n1 10)[10 n2 20)
	 *   ranges: [0        10)            [30  40)
	 *   expect: [0 n1 10)                [30 n0 40) */
	{ "replace", { { 0, 10, 1, 0, 0 }, { 10, 20, 2, 0, 0 } }, 2,
	  { { 0, 10 }, { 30, 40 } }, 2, { { 0, 10, 1, 0, 0 }, { 30, 40, 0, 0, 0 } }, 2 },
	/* the mapping grew: the new part is a fresh region
	 *   old:    [0 n4 10)
	 *   ranges: [0              20)
	 *   expect: [0 n4 10)[10 n0 20) */
	{ "grow", { { 0, 10, 4, 0, 0 } }, 1, { { 0, 20 } }, 1,
	  { { 0, 10, 4, 0, 0 }, { 10, 20, 0, 0, 0 } }, 2 },
	/* a hole was punched into one region: both sides keep its counts
	 *   old:    [0 n7                 20)
	 *   ranges: [0   5)      [10      20)
	 *   expect: [0 n7 5)     [10 n7   20) */
	{ "punch", { { 0, 20, 7, 0, 0 } }, 1, { { 0, 5 }, { 10, 20 } }, 2,
	  { { 0, 5, 7, 0, 0 }, { 10, 20, 7, 0, 0 } }, 2 },
};

static void test_set_ranges(void **state)
{
	struct mr_mon_target t = { 0 };
	size_t i, k;

	for (i = 0; i < MR_ARRAY_SIZE(ranges_cases); i++) {
		const struct ranges_case *c = &ranges_cases[i];
		struct mr_mon_range r[4];

		print_message("ranges case %s\n", c->name);
		for (k = 0; k < c->nranges; k++) {
			r[k].start = c->ranges[k].start * P;
			r[k].end = c->ranges[k].end * P;
		}
		load(&t, c->in, c->nin);
		assert_int_equal(mr_mon_set_ranges(&t, r, c->nranges), 0);
		expect(&t, c->out, c->nout, true);
	}
	free(t.regions);
}

/* Initial regions: about min_nr_regions in total, in proportion to range sizes.
 *   ranges: [0 100) .. [200 300)   min 10
 *   expect: five 20-page regions in each */
static void test_init_regions(void **state)
{
	struct mr_mon_target t = { 0 };
	struct mr_mon_range r[2] = { { 0, 100 * P }, { 200 * P, 300 * P } };
	size_t i;

	assert_int_equal(mr_mon_init_regions(&t, r, 2, 10), 0);
	assert_int_equal(t.nr_regions, 10);
	for (i = 0; i < 10; i++) {
		uint64_t base = i < 5 ? 0 : 200;

		assert_int_equal(t.regions[i].start, (base + (i % 5) * 20) * P);
		assert_int_equal(t.regions[i].end, (base + (i % 5) * 20 + 20) * P);
	}
	free(t.regions);
}

static size_t snap_count;

static int count_snapshot(struct mr_mon_ctx *ctx, uint64_t time_us, void *arg)
{
	snap_count = ctx->target.nr_regions;
	return 0;
}

/* Over the maximum number of regions the threshold doubles until it fits:
 *   in:     ten 1-page regions, n = 0, 10, ..., 90; min 3 (size cap 3 pages), max 6
 *   pass 1 (threshold 9): no merge; pass 2 (threshold 18):
 *   expect: [0 n10 3)[3 n40 6)[6 n70 9)[9 n90 10), then reset: nr 0, last = nr */
static void test_aggregate_limit(void **state)
{
	static const uint64_t rands[] = { 5, 5, 5, 5, 5, 5, 5, 5 };
	static const struct reg exp[] = { { 0, 3, 10, 0, 0 }, { 3, 6, 40, 0, 0 },
					  { 6, 9, 70, 0, 0 }, { 9, 10, 90, 0, 0 } };
	struct reg in[10];
	struct mr_mon_ctx ctx;
	size_t i;

	for (i = 0; i < 10; i++)
		in[i] = (struct reg){ i, i + 1, (uint32_t)(10 * i), (uint32_t)(10 * i), 0 };
	mr_mon_ctx_init(&ctx, NULL);
	ctx.attrs.min_nr_regions = 3;
	ctx.attrs.max_nr_regions = 6;
	ctx.rand = fixed_rand;
	rand_seq = rands;
	rand_pos = 0;
	load(&ctx.target, in, 10);
	ctx.target.last_nr_regions = 0;
	assert_int_equal(mr_mon_aggregate(&ctx, 90, 0, count_snapshot, NULL), 0);
	assert_int_equal(snap_count, 4);
	/* 4 > 6 / 2: no split afterwards, so the merged layout is what remains */
	for (i = 0; i < 4; i++) {
		assert_int_equal(ctx.target.regions[i].start, exp[i].start * P);
		assert_int_equal(ctx.target.regions[i].end, exp[i].end * P);
		assert_int_equal(ctx.target.regions[i].last_nr_accesses, exp[i].nr);
		assert_int_equal(ctx.target.regions[i].nr_accesses, 0);
	}
	assert_int_equal(ctx.target.nr_regions, 4);
	mr_mon_ctx_destroy(&ctx);
}

static void test_attrs_parse(void **state)
{
	struct mr_mon_attrs a = { 5000, 100000, 1000000, 10, 1000 };

	assert_int_equal(mr_mon_attrs_parse("10000,200000,2000000,10,1000", &a), 0);
	assert_int_equal(a.sample_us, 10000);
	assert_int_equal(a.aggr_us, 200000);
	assert_int_equal(mr_mon_attrs_parse(",,,20,", &a), 0);	/* keep the others */
	assert_int_equal(a.min_nr_regions, 20);
	assert_int_equal(a.sample_us, 10000);
	assert_int_not_equal(mr_mon_attrs_parse("1,2,3,4,5,6", &a), 0);
	assert_int_not_equal(mr_mon_attrs_parse("x", &a), 0);
	assert_int_not_equal(mr_mon_attrs_parse("300000,200000", &a), 0);	/* sample > aggr */
	assert_int_not_equal(mr_mon_attrs_parse(",,,10,15", &a), 0);		/* max < 2 min */
	assert_int_not_equal(mr_mon_attrs_parse(",,,", &a), 0);
	assert_int_equal(a.sample_us, 10000);	/* failures leave it alone */
	/* intervals with units, as damo writes them; bare numbers stay microseconds */
	assert_int_equal(mr_mon_attrs_parse("5ms,100ms,1s", &a), 0);
	assert_int_equal(a.sample_us, 5000);
	assert_int_equal(a.aggr_us, 100000);
	assert_int_equal(a.update_us, 1000000);
	assert_int_equal(mr_mon_attrs_parse("0.5s,2s,4s", &a), 0);
	assert_int_equal(a.sample_us, 500000);
	assert_int_equal(a.aggr_us, 2000000);
	assert_int_not_equal(mr_mon_attrs_parse("5xs", &a), 0);
	assert_string_equal(mr_last_error(), "attributes '5xs': '5xs' is not a time "
			    "(5ms, 100ms, 1s; bare: microseconds)");
	assert_int_not_equal(mr_mon_attrs_parse(",,,10ms,", &a), 0);	/* a count is a count */
}

/* ---- the sampling loop over a fake backend: the last, partial interval ---- */

/* The fake target: [0, 64 pages), every page accessed in every sample. It "ends"
 * (check returns -ESRCH) or is stopped (*ctx->stop) after fake_nr_checks samples. */
static unsigned fake_checks, fake_nr_checks;
static bool fake_stop_instead;
static volatile sig_atomic_t fake_stop_flag;

static int fake_ranges(struct mr_mon_ctx *ctx, struct mr_mon_range **ranges, size_t *nr)
{
	*ranges = malloc(sizeof(**ranges));
	assert_non_null(*ranges);
	(*ranges)[0] = (struct mr_mon_range){ 0, 64 * P };
	*nr = 1;
	return 0;
}

/* A fake check that finds every region accessed: the max nr_accesses after it. */
static uint32_t all_accessed(struct mr_mon_ctx *ctx)
{
	uint32_t max_nr = 0;
	size_t i;

	for (i = 0; i < ctx->target.nr_regions; i++) {
		ctx->target.regions[i].nr_accesses++;
		if (ctx->target.regions[i].nr_accesses > max_nr)
			max_nr = ctx->target.regions[i].nr_accesses;
	}
	return max_nr;
}

static int fake_check(struct mr_mon_ctx *ctx, uint32_t *max_nr)
{
	if (fake_checks == fake_nr_checks) {
		if (!fake_stop_instead)
			return -ESRCH;	/* the target exited */
		fail_msg("sampled after the stop");
	}
	fake_checks++;
	*max_nr = all_accessed(ctx);
	if (fake_stop_instead && fake_checks == fake_nr_checks)
		fake_stop_flag = SIGTERM;	/* as record's signal handler does */
	return 0;
}

static const struct mr_mon_ops fake_ops = {
	.name = "fake",
	.default_attrs = { .sample_us = 1000, .aggr_us = 10000000, .update_us = 20000000,
			   .min_nr_regions = 3, .max_nr_regions = 12 },
	.ranges = fake_ranges,
	.check = fake_check,
};

#define MAX_SNAPS 64
static struct { uint64_t time_us; uint32_t nr_samples, min_nr, max_nr; } snaps[MAX_SNAPS];
static size_t nr_snaps;

static int record_snapshot(struct mr_mon_ctx *ctx, uint64_t time_us, void *arg)
{
	size_t i;

	assert_true(nr_snaps < MAX_SNAPS);
	snaps[nr_snaps].time_us = time_us;
	snaps[nr_snaps].nr_samples = ctx->aggr_nr_samples;
	snaps[nr_snaps].min_nr = UINT32_MAX;
	snaps[nr_snaps].max_nr = 0;
	for (i = 0; i < ctx->target.nr_regions; i++) {
		uint32_t n = ctx->target.regions[i].nr_accesses;

		if (n < snaps[nr_snaps].min_nr)
			snaps[nr_snaps].min_nr = n;
		if (n > snaps[nr_snaps].max_nr)
			snaps[nr_snaps].max_nr = n;
	}
	nr_snaps++;
	return 0;
}

static void run_fake(uint64_t aggr_us, unsigned nr_checks, bool stop)
{
	struct mr_mon_ctx ctx;

	fake_checks = 0;
	fake_nr_checks = nr_checks;
	fake_stop_instead = stop;
	fake_stop_flag = 0;
	nr_snaps = 0;
	mr_mon_ctx_init(&ctx, &fake_ops);
	ctx.attrs.aggr_us = aggr_us;
	ctx.stop = &fake_stop_flag;
	ctx.target.kind = MR_MON_TARGET_PROCESS;
	ctx.target.pid = 0;	/* no liveness polling: the fake says when it ends */
	assert_int_equal(mr_mon_run(&ctx, record_snapshot, NULL), 0);
	assert_int_equal(ctx.nr_samples, nr_checks);
	mr_mon_ctx_destroy(&ctx);
}

/* A target that ends 3 samples into a 10 s aggregation interval (a program shorter
 * than one interval): one snapshot of 3 samples, every region accessed in all 3. */
static void test_run_short_target(void **state)
{
	run_fake(10000000, 3, false);
	assert_int_equal(nr_snaps, 1);
	assert_int_equal(snaps[0].nr_samples, 3);
	assert_int_equal(snaps[0].min_nr, 3);
	assert_int_equal(snaps[0].max_nr, 3);
}

/* A stop (SIGTERM, SIGINT, --duration) inside the first interval: the same. */
static void test_run_stopped(void **state)
{
	run_fake(10000000, 4, true);
	assert_int_equal(nr_snaps, 1);
	assert_int_equal(snaps[0].nr_samples, 4);
	assert_int_equal(snaps[0].min_nr, 4);
}

/* Ending inside a later interval: whole intervals first, then the partial one with
 * the rest of the samples; no sample lost or counted twice. How many samples a
 * whole interval holds depends on the scheduler, so only the sums are exact. */
static void test_run_ends_mid_interval(void **state)
{
	uint64_t total = 0;
	size_t i;

	run_fake(5000, 13, false);
	assert_true(nr_snaps >= 2);
	for (i = 0; i < nr_snaps; i++) {
		assert_true(snaps[i].nr_samples > 0);
		/* every region accessed in every sample of its snapshot */
		assert_int_equal(snaps[i].min_nr, snaps[i].nr_samples);
		assert_int_equal(snaps[i].max_nr, snaps[i].nr_samples);
		if (i)
			assert_true(snaps[i].time_us >= snaps[i - 1].time_us);
		total += snaps[i].nr_samples;
	}
	assert_int_equal(total, 13);
}

/* ---- a process target whose address space goes: an exec or its end ---- */

/*
 * The fake process is this test itself (alive, with a start time). Its "program" is
 * [0, 64 pages) until check number xf_esrch_at reads its address space gone
 * (-ESRCH), then [128, 192 pages); xf_reuse_at that check also makes the pid another
 * process's (the target's start time no longer matches). The run stops itself after
 * xf_stop_after good samples.
 *
 *   exec:    [0 ... 64) s1 s2 s3 | -ESRCH, same process | [128 ... 192) s4 .. s8 stop
 *   expect:  init, cleanup + init, one snapshot of s4..s8 on [128, 192) only
 *   reused:  [0 ... 64) s1 s2 s3 | -ESRCH, another process now | the end
 */
static unsigned xf_calls, xf_good, xf_inits, xf_cleanups, xf_esrch_at, xf_stop_after;
static bool xf_execd, xf_reuse;
static volatile sig_atomic_t xf_stop;

static int xf_ranges(struct mr_mon_ctx *ctx, struct mr_mon_range **ranges, size_t *nr)
{
	*ranges = malloc(sizeof(**ranges));
	assert_non_null(*ranges);
	(*ranges)[0] = xf_execd ? (struct mr_mon_range){ 128 * P, 192 * P } :
				  (struct mr_mon_range){ 0, 64 * P };
	*nr = 1;
	return 0;
}

static int xf_init(struct mr_mon_ctx *ctx)
{
	xf_inits++;
	return 0;
}

static void xf_cleanup(struct mr_mon_ctx *ctx)
{
	xf_cleanups++;
}

static int xf_check(struct mr_mon_ctx *ctx, uint32_t *max_nr)
{
	if (++xf_calls == xf_esrch_at) {
		if (xf_reuse)
			ctx->target.starttime_ticks++;	/* another process got the pid */
		else
			xf_execd = true;
		return -ESRCH;
	}
	*max_nr = all_accessed(ctx);
	if (++xf_good == xf_stop_after)
		xf_stop = SIGTERM;
	return 0;
}

static const struct mr_mon_ops xf_ops = {
	.name = "fake-process",
	.default_attrs = { .sample_us = 1000, .aggr_us = 10000000, .update_us = 20000000,
			   .min_nr_regions = 3, .max_nr_regions = 12 },
	.ranges = xf_ranges,
	.init = xf_init,
	.check = xf_check,
	.cleanup = xf_cleanup,
};

static uint64_t xf_lo, xf_hi;	/* the span of the last snapshot's regions */

static int xf_snapshot(struct mr_mon_ctx *ctx, uint64_t time_us, void *arg)
{
	const struct mr_mon_target *t = &ctx->target;

	assert_true(t->nr_regions > 0);
	xf_lo = t->regions[0].start;
	xf_hi = t->regions[t->nr_regions - 1].end;
	return record_snapshot(ctx, time_us, arg);
}

static void run_xf(bool reuse)
{
	struct mr_mon_ctx ctx;

	xf_calls = xf_good = xf_inits = xf_cleanups = 0;
	xf_esrch_at = 4;
	xf_stop_after = 8;
	xf_execd = false;
	xf_reuse = reuse;
	xf_stop = 0;
	nr_snaps = 0;
	mr_mon_ctx_init(&ctx, &xf_ops);
	ctx.stop = &xf_stop;
	ctx.target.kind = MR_MON_TARGET_PROCESS;
	ctx.target.pid = getpid();	/* its start time read by mr_mon_run */
	assert_int_equal(mr_mon_run(&ctx, xf_snapshot, NULL), 0);
	assert_true(ctx.target.starttime_ticks > 0);
	assert_int_equal(ctx.nr_samples, xf_good);
	mr_mon_ctx_destroy(&ctx);
}

static void test_run_exec(void **state)
{
	run_xf(false);
	assert_int_equal(xf_good, 8);		/* went on to the stop */
	assert_int_equal(xf_inits, 2);
	assert_int_equal(xf_cleanups, 2);
	assert_int_equal(nr_snaps, 1);
	assert_int_equal(snaps[0].nr_samples, 5);	/* s4..s8: the old program's not */
	assert_int_equal(snaps[0].min_nr, 5);
	assert_int_equal(snaps[0].max_nr, 5);
	assert_int_equal(xf_lo, 128 * P);	/* the new program's regions only */
	assert_int_equal(xf_hi, 192 * P);
}

static void test_run_pid_reused(void **state)
{
	run_xf(true);
	assert_int_equal(xf_calls, 4);		/* ended at the -ESRCH */
	assert_int_equal(xf_inits, 1);
	assert_int_equal(xf_cleanups, 1);
	assert_int_equal(nr_snaps, 1);		/* s1..s3, on [0, 64) */
	assert_int_equal(snaps[0].nr_samples, 3);
	assert_int_equal(xf_lo, 0);
	assert_int_equal(xf_hi, 64 * P);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_set_ranges),
		cmocka_unit_test(test_init_regions),
		cmocka_unit_test(test_aggregate_limit),
		cmocka_unit_test(test_attrs_parse),
		cmocka_unit_test(test_run_short_target),
		cmocka_unit_test(test_run_stopped),
		cmocka_unit_test(test_run_ends_mid_interval),
		cmocka_unit_test(test_run_exec),
		cmocka_unit_test(test_run_pid_reused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
