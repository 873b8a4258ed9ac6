/* Unit tests of the scheme engine: pattern matching, DAMOS's scores, quotas with
 * their priority threshold, watermarks, and the statistics, against hand-computed
 * cases. Attributes throughout: sample 5 ms, aggregation 100 ms, so nr_accesses
 * runs 0..20 and an age of 10 is one second. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "common/util.h"
#include "controller/engine.h"

#define M (1ull << 20)

static const struct mr_mon_attrs attrs = { .sample_us = 5000, .aggr_us = 100000,
					   .update_us = 1000000, .min_nr_regions = 10,
					   .max_nr_regions = 1000 };

/* The calls the engine made, and what the fake action reports. */
static struct {
	uint64_t start[16], end[16];
	unsigned nr;
	uint64_t now_ns;		/* the fake clock */
	uint64_t ns_per_call;		/* how long each apply "takes" */
	unsigned free_permille;
	uint64_t busy_bytes;		/* reported as not moved, busy, per call */
} calls;

static int fake_apply(void *arg, const struct mr_scheme *s, uint64_t start, uint64_t end,
		      struct mr_ctl_result *res)
{
	(void)arg;
	(void)s;
	assert_true(calls.nr < 16);
	calls.start[calls.nr] = start;
	calls.end[calls.nr] = end;
	calls.nr++;
	calls.now_ns += calls.ns_per_call;
	res->failed_bytes[MR_CTL_FAIL_BUSY] = calls.busy_bytes;
	res->applied_bytes = end - start - calls.busy_bytes;
	return 0;
}

static int fake_metric(void *arg, unsigned *permille)
{
	(void)arg;
	*permille = calls.free_permille;
	return 0;
}

static uint64_t fake_clock(void *arg)
{
	(void)arg;
	return calls.now_ns;
}

static void setup_ctl(struct mr_ctl *c, struct mr_scheme_set *set, const char *text)
{
	if (mr_scheme_parse(text, "t", set))
		fail_msg("%s", mr_last_error());
	assert_int_equal(mr_ctl_init(c, set, &attrs), 0);
	c->apply = fake_apply;
	c->metric = fake_metric;
	c->clock = fake_clock;
	memset(&calls, 0, sizeof(calls));
}

/*
 *   0      4M      8M             16M     20M
 *   |  A   |   B   |      C       |   D   |
 *   nr 0    nr 20   nr 0           nr 2
 *   1 s     1 s     0.1 s          5 s
 * "4K max 0 0 500ms max": only A (B accessed, C too young, D accessed a little).
 */
static struct mr_mon_region four[4];

static void reset_four(void)
{
	static const struct mr_mon_region init[4] = {
		{ .start = 0, .end = 4 * M, .nr_accesses = 0, .age = 10 },
		{ .start = 4 * M, .end = 8 * M, .nr_accesses = 20, .age = 10 },
		{ .start = 8 * M, .end = 16 * M, .nr_accesses = 0, .age = 1 },
		{ .start = 16 * M, .end = 20 * M, .nr_accesses = 2, .age = 50 },
	};

	memcpy(four, init, sizeof(four));
}

static void test_match_and_apply(void **state)
{
	struct mr_scheme_set set;
	struct mr_ctl c;

	(void)state;
	reset_four();
	setup_ctl(&c, &set, "4K max 0 0 500ms max migrate_cold 1");
	assert_true(mr_scheme_matches(&set.schemes[0], &four[0], &attrs));
	assert_false(mr_scheme_matches(&set.schemes[0], &four[1], &attrs));
	assert_false(mr_scheme_matches(&set.schemes[0], &four[2], &attrs));
	assert_false(mr_scheme_matches(&set.schemes[0], &four[3], &attrs));
	assert_int_equal(mr_ctl_aggregate(&c, four, 4, 1000000), 0);
	assert_int_equal(calls.nr, 1);
	assert_true(calls.start[0] == 0 && calls.end[0] == 4 * M);
	assert_int_equal(c.states[0].stats.nr_tried, 1);
	assert_int_equal(c.states[0].stats.sz_tried, 4 * M);
	assert_int_equal(c.states[0].stats.nr_applied, 1);
	assert_int_equal(c.states[0].stats.sz_applied, 4 * M);
	assert_int_equal(four[0].age, 0);	/* acted on: its age starts over */
	assert_int_equal(four[1].age, 10);
	mr_ctl_destroy(&c);
	mr_scheme_set_free(&set);

	/* "5%" of 20 is 1 access: D (2) is still above; "10%" lets D in */
	reset_four();
	setup_ctl(&c, &set, "4K max 0 10% 2s max stat");
	assert_int_equal(mr_ctl_aggregate(&c, four, 4, 1000000), 0);
	assert_int_equal(calls.nr, 1);
	assert_true(calls.start[0] == 16 * M && calls.end[0] == 20 * M);
	assert_int_equal(four[3].age, 50);	/* stat leaves the age alone */
	mr_ctl_destroy(&c);
	mr_scheme_set_free(&set);
}

/*
 * Hot score of an idle region aged 1 s: age_log 1, negated (no access) -1 + 32 = 31,
 * subscore 31 * 100 / 32 / 2 = 48; hotness (0 + 48) / 2 = 24; score 24 * 99 / 100 = 23;
 * cold score 99 - 23 = 76. Aged 60 s: age_log 6 -> 26 -> 40 -> 20 -> 19 -> cold 80.
 * Accessed 20/20, aged 1 s: freq 100, age_log 1 + 32 = 33 -> 51; (100 + 51) / 2 = 75;
 * 75 * 99 / 100 = 74.
 */
static void test_scores(void **state)
{
	struct mr_scheme_set set;
	struct mr_mon_region idle1 = { .start = 0, .end = 4 * M, .nr_accesses = 0, .age = 10 };
	struct mr_mon_region idle60 = { .start = 0, .end = 4 * M, .nr_accesses = 0, .age = 600 };
	struct mr_mon_region busy = { .start = 0, .end = 4 * M, .nr_accesses = 20, .age = 10 };

	(void)state;
	assert_int_equal(mr_scheme_parse("4K max 0 0 0s max pageout", "t", &set), 0);
	assert_int_equal(mr_scheme_hot_score(&set.schemes[0], &idle1, &attrs), 23);
	assert_int_equal(mr_scheme_score(&set.schemes[0], &idle1, &attrs), 76);
	assert_int_equal(mr_scheme_score(&set.schemes[0], &idle60, &attrs), 80);
	assert_int_equal(mr_scheme_hot_score(&set.schemes[0], &busy, &attrs), 74);
	/* weights 0 frequency, 1 age: busy's hotness is its age subscore, 51 -> 50 */
	set.schemes[0].weight_freq = 0;
	set.schemes[0].weight_age = 1;
	assert_int_equal(mr_scheme_hot_score(&set.schemes[0], &busy, &attrs), 50);
	mr_scheme_set_free(&set);
}

/*
 * Two idle regions, a bytes quota of 4 MiB per second:
 *   0      4M      8M      12M
 *   |  A   |       |  B    |
 *   1 s            60 s        cold scores 76, 80
 * Histogram from 99 down reaches 4 MiB at 80: only B, the older, is moved.
 * A second aggregation in the same second: the quota is spent, nothing more.
 * After the reset (1 s later): the interval that ended counts as exceeded, and A,
 * now the only one left matching (B's age was reset), is moved.
 */
static void test_quota_priority(void **state)
{
	struct mr_mon_region r[2] = {
		{ .start = 0, .end = 4 * M, .nr_accesses = 0, .age = 10 },
		{ .start = 8 * M, .end = 12 * M, .nr_accesses = 0, .age = 600 },
	};
	struct mr_scheme_set set;
	struct mr_ctl c;

	(void)state;
	setup_ctl(&c, &set, "4K max 0 0 500ms max migrate_cold 1\n  quota bytes 4M per 1s");
	assert_int_equal(mr_ctl_aggregate(&c, r, 2, 1000000), 0);
	assert_int_equal(c.states[0].min_score, 80);
	assert_int_equal(calls.nr, 1);
	assert_true(calls.start[0] == 8 * M && calls.end[0] == 12 * M);
	assert_int_equal(mr_ctl_aggregate(&c, r, 2, 1100000), 0);
	assert_int_equal(calls.nr, 1);
	assert_int_equal(c.states[0].stats.qt_exceeds, 0);
	assert_int_equal(mr_ctl_aggregate(&c, r, 2, 2000000), 0);
	assert_int_equal(c.states[0].stats.qt_exceeds, 1);
	assert_int_equal(calls.nr, 2);
	assert_true(calls.start[1] == 0 && calls.end[1] == 4 * M);
	mr_ctl_destroy(&c);
	mr_scheme_set_free(&set);
}

/* fake_apply's record of which target each call was for */
static size_t target_of[16];

static int fake_apply_targets(void *arg, const struct mr_scheme *s, uint64_t start,
			      uint64_t end, struct mr_ctl_result *res)
{
	const struct mr_ctl *c = arg;

	target_of[calls.nr] = c->cur_target;
	return fake_apply(NULL, s, start, end, res);
}

/*
 * Two targets under one scheme with a bytes quota of 4 MiB per second (DAMOS's
 * context with two targets: one quota, one priority threshold):
 *   target 0:  0      4M          target 1:  0      4M
 *              |  A   |                      |  B   |
 *              1 s (cold score 76)           60 s (cold score 80)
 * Target 0 aggregates first: the histogram over both reaches 4 MiB at 80, so A
 * waits although it is target 0's turn. Target 1 then moves B, charging the one
 * quota; a third pass for target 0 in the same second finds the quota spent.
 * Acting on all targets at once (a kdamond's walk) picks B alone as well.
 */
static void test_targets_share_quota(void **state)
{
	struct mr_mon_region a = { .start = 0, .end = 4 * M, .nr_accesses = 0, .age = 10 };
	struct mr_mon_region b = { .start = 0, .end = 4 * M, .nr_accesses = 0, .age = 600 };
	struct mr_ctl_target_regions t[2] = { { &a, 1 }, { &b, 1 } };
	struct mr_scheme_set set;
	struct mr_ctl c;

	(void)state;
	setup_ctl(&c, &set, "4K max 0 0 500ms max migrate_cold 1\n  quota bytes 4M per 1s");
	c.apply = fake_apply_targets;
	c.arg = &c;
	assert_int_equal(mr_ctl_aggregate_targets(&c, t, 2, 0, 1000000), 0);
	assert_int_equal(calls.nr, 0);
	assert_int_equal(mr_ctl_aggregate_targets(&c, t, 2, 1, 1100000), 0);
	assert_int_equal(calls.nr, 1);
	assert_int_equal(target_of[0], 1);
	assert_true(calls.start[0] == 0 && calls.end[0] == 4 * M);
	assert_int_equal(b.age, 0);
	assert_int_equal(mr_ctl_aggregate_targets(&c, t, 2, 0, 1200000), 0);
	assert_int_equal(calls.nr, 1);	/* the quota is spent for both targets */
	assert_int_equal(c.states[0].stats.nr_tried, 1);
	assert_int_equal(c.states[0].stats.sz_tried, 4 * M);
	mr_ctl_destroy(&c);
	mr_scheme_set_free(&set);

	a.age = 10;
	b.age = 600;
	setup_ctl(&c, &set, "4K max 0 0 500ms max migrate_cold 1\n  quota bytes 4M per 1s");
	c.apply = fake_apply_targets;
	c.arg = &c;
	assert_int_equal(mr_ctl_aggregate_targets(&c, t, 2, MR_CTL_ALL_TARGETS, 1000000), 0);
	assert_int_equal(calls.nr, 1);
	assert_int_equal(target_of[0], 1);
	assert_int_equal(a.age, 10);
	mr_ctl_destroy(&c);
	mr_scheme_set_free(&set);
}

/*
 * A quota smaller than the region: the region's first 3 MiB (page-aligned), as
 * DAMOS splits it; 1 MiB of them busy.
 */
static void test_quota_split_and_fail(void **state)
{
	struct mr_mon_region r[1] = { { .start = 0, .end = 4 * M, .nr_accesses = 0, .age = 10 } };
	struct mr_scheme_set set;
	struct mr_ctl c;

	(void)state;
	setup_ctl(&c, &set, "4K max 0 0 500ms max migrate_cold 1\n  quota bytes 3M per 1s");
	calls.busy_bytes = 1 * M;
	assert_int_equal(mr_ctl_aggregate(&c, r, 1, 1000000), 0);
	assert_int_equal(calls.nr, 1);
	assert_true(calls.start[0] == 0 && calls.end[0] == 3 * M);
	assert_int_equal(c.states[0].stats.sz_tried, 3 * M);
	assert_int_equal(c.states[0].stats.sz_applied, 2 * M);
	assert_int_equal(c.states[0].stats.failed_bytes[MR_CTL_FAIL_BUSY], 1 * M);
	mr_ctl_destroy(&c);
	mr_scheme_set_free(&set);
}

/*
 * A time quota of 1 ms per second: before anything was measured DAMOS assumes a page
 * per microsecond (4 MiB per ms), so 4 MiB; the first call takes 2 ms for its 4 MiB
 * (2 MiB per ms): after the reset the effective quota is 2 MiB.
 */
static void test_ms_quota(void **state)
{
	struct mr_mon_region r[1] = { { .start = 0, .end = 16 * M, .nr_accesses = 0, .age = 10 } };
	struct mr_scheme_set set;
	struct mr_ctl c;

	(void)state;
	setup_ctl(&c, &set, "4K max 0 0 500ms max pageout\n  quota ms 1 per 1s");
	calls.ns_per_call = 2000000;
	assert_int_equal(mr_ctl_aggregate(&c, r, 1, 1000000), 0);
	assert_int_equal(c.states[0].esz_bytes, 4 * M);
	assert_true(calls.end[0] == 4 * M);
	r[0].age = 10;
	assert_int_equal(mr_ctl_aggregate(&c, r, 1, 2000000), 0);
	assert_int_equal(c.states[0].esz_bytes, 2 * M);
	assert_true(calls.start[1] == 0 && calls.end[1] == 2 * M);
	mr_ctl_destroy(&c);
	mr_scheme_set_free(&set);
}

/*
 * Watermarks high 50%, mid 40%, low 5%, checked every second:
 *   free 60% -> off (above high); 45% -> still off (between mid and high, was off);
 *   30% -> on; 45% -> still on; 3% -> off (below low).
 */
static void test_watermarks(void **state)
{
	static const struct {
		unsigned free_permille;
		bool active;
	} steps[] = { { 600, false }, { 450, false }, { 300, true }, { 450, true }, { 30, false } };
	struct mr_mon_region r[1] = { { .start = 0, .end = 4 * M, .nr_accesses = 0, .age = 10 } };
	struct mr_scheme_set set;
	struct mr_ctl c;
	unsigned i, applied = 0;

	(void)state;
	setup_ctl(&c, &set, "4K max 0 0 0s max stat\n"
		  "  watermarks free_mem_rate 1s high 50% mid 40% low 5%");
	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		calls.free_permille = steps[i].free_permille;
		assert_int_equal(mr_ctl_aggregate(&c, r, 1, (i + 1) * 1000000ull), 0);
		if (c.states[0].active != steps[i].active)
			fail_msg("step %u (free %u per-mille): active %d", i,
				 steps[i].free_permille, c.states[0].active);
		applied += steps[i].active;
		assert_int_equal(calls.nr, applied);
	}
	/* within the interval the metric is not read again */
	calls.free_permille = 300;
	assert_int_equal(mr_ctl_aggregate(&c, r, 1, 5500000), 0);
	assert_false(c.states[0].active);
	mr_ctl_destroy(&c);
	mr_scheme_set_free(&set);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_match_and_apply),
		cmocka_unit_test(test_scores),
		cmocka_unit_test(test_quota_priority),
		cmocka_unit_test(test_targets_share_quota),
		cmocka_unit_test(test_quota_split_and_fail),
		cmocka_unit_test(test_ms_quota),
		cmocka_unit_test(test_watermarks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
