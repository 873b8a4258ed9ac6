/* Unit tests of bench/stats.c: the seed threads' table lines reproduced byte for
 * byte from their means and deviations, and hand-computed statistics. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "bench/stats.h"

#define assert_close(a, b, eps) \
	do { \
		if (fabs((double)(a) - (double)(b)) > (eps)) \
			fail_msg("%s = %.9g, expected %.9g", #a, (double)(a), (double)(b)); \
	} while (0)

/* The sorted-buddy thread's vanilla 3.9-rc5 kernbench block (seeds/001). */
static void test_kernbench_lines(void **state)
{
	static const struct {
		const char *name;
		double mean, sd;
		const char *line;
	} rows[] = {
		{ "Elapsed Time", 574.66, 2.31846, "Elapsed Time 574.66 (2.31846)" },
		{ "User Time", 3919.12, 3.71256, "User Time 3919.12 (3.71256)" },
		{ "System Time", 339.296, 0.73694, "System Time 339.296 (0.73694)" },
		{ "Percent CPU", 740.4, 2.50998, "Percent CPU 740.4 (2.50998)" },
		{ "Context Switches", 1218300, 4019.47, "Context Switches 1.2183e+06 (4019.47)" },
		{ "Sleeps", 1612390, 2657.33, "Sleeps 1.61239e+06 (2657.33)" },
		{ "System Time", 337.406, 0.701591, "System Time 337.406 (0.701591)" },
	};
	char buf[128];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct mr_bench_summary s = { .n = 5, .mean = rows[i].mean, .stddev = rows[i].sd };

		mr_bench_kernbench_line(buf, sizeof(buf), rows[i].name, &s);
		assert_string_equal(buf, rows[i].line);
	}
}

/* The DAMOS RFC's runtime table (seeds/000): overheads computed from the means. */
static void test_damos_cells(void **state)
{
	static const struct {
		double orig, cfg;
		const char *cell;
	} rows[] = {
		{ 142.831, 143.810, "143.810 (0.69)" },		/* parsec3/canneal rec */
		{ 142.831, 123.530, "123.530 (-13.51)" },	/* parsec3/canneal thp */
		{ 87.499, 87.495, "87.495 (-0.00)" },		/* splash2x/volrend rec */
		{ 3020.570, 3276.550, "3276.550 (8.47)" },	/* total prcl */
	};
	struct mr_bench_summary a = { .n = 1 }, b = { .n = 1 };
	struct mr_bench_overhead o;
	char buf[64];
	size_t i;

	(void)state;
	mr_bench_damos_cell(buf, sizeof(buf), 142.831, NULL);
	assert_string_equal(buf, "142.831");
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		a.mean = rows[i].orig;
		b.mean = rows[i].cfg;
		assert_int_equal(mr_bench_overhead(&a, &b, &o), 0);
		assert_false(o.has_interval);	/* one run each: no interval */
		mr_bench_damos_cell(buf, sizeof(buf), b.mean, &o.pct);
		assert_string_equal(buf, rows[i].cell);
	}
	mr_bench_damos_cell(buf, sizeof(buf), 1058617.6, &(double){ 1.45 });
	assert_string_equal(buf, "1058617.600 (1.45)");
}

/* {2, 4, 4, 4, 5, 5, 7, 9}: mean 5, squares of deviations 32, sample sd sqrt(32/7). */
static void test_summary(void **state)
{
	static const double x[] = { 2, 4, 4, 4, 5, 5, 7, 9 };
	static const double big[] = { 1e9 + 1, 1e9 + 2, 1e9 + 3 };
	struct mr_bench_summary s;

	(void)state;
	mr_bench_summarize(x, 8, &s);
	assert_int_equal(s.n, 8);
	assert_close(s.mean, 5, 1e-12);
	assert_close(s.stddev, sqrt(32.0 / 7), 1e-12);	/* 2.13809, not 2 (n) */
	mr_bench_summarize(x, 1, &s);
	assert_close(s.mean, 2, 0);
	assert_close(s.stddev, 0, 0);
	mr_bench_summarize(x, 0, &s);
	assert_int_equal(s.n, 0);
	/* close large values keep their spread: sd 1 */
	mr_bench_summarize(big, 3, &s);
	assert_close(s.stddev, 1, 1e-6);
}

static void test_t975(void **state)
{
	(void)state;
	assert_close(mr_bench_t975(4), 2.77645, 1e-9);
	assert_close(mr_bench_t975(1), 12.7062, 1e-9);
	assert_close(mr_bench_t975(0.5), 12.7062, 1e-9);
	assert_close(mr_bench_t975(35), 2.03011, 1e-3);		/* between rows */
	assert_close(mr_bench_t975(1000), 1.96234, 1e-3);	/* past the table */
	assert_close(mr_bench_t975(1e12), 1.95996, 1e-6);
}

/*
 * A = {10, 12, 11}: mean 11, sd 1; B = {13, 15, 14}: mean 14, sd 1.
 * se = sqrt(1/3 + 1/3) = 0.816497; Welch df = (2/3)^2 / (2 * (1/3)^2 / 2) = 4;
 * t = 2.77645; half width 2.26697; overhead 3/11 = 27.2727%,
 * interval (3 -+ 2.26697) / 11 = [6.6639%, 47.8815%]: distinguishable.
 */
static void test_overhead_interval(void **state)
{
	static const double a[] = { 10, 12, 11 }, b[] = { 13, 15, 14 }, c[] = { 9, 13, 11.5 };
	struct mr_bench_summary sa, sb, sc;
	struct mr_bench_overhead o;

	(void)state;
	mr_bench_summarize(a, 3, &sa);
	mr_bench_summarize(b, 3, &sb);
	assert_int_equal(mr_bench_overhead(&sa, &sb, &o), 0);
	assert_true(o.has_interval);
	assert_close(o.pct, 300.0 / 11, 1e-9);
	assert_close(o.lo_pct, 6.6639, 1e-3);
	assert_close(o.hi_pct, 47.8815, 1e-3);
	assert_true(o.distinguishable);
	/* C = {9, 13, 11.5}: mean 11.1667, sd 2.0207: the interval spans 0 */
	mr_bench_summarize(c, 3, &sc);
	assert_int_equal(mr_bench_overhead(&sa, &sc, &o), 0);
	assert_close(o.pct, 100 * (33.5 / 3 - 11) / 11, 1e-9);	/* 1.5152% */
	assert_true(o.lo_pct < 0 && o.hi_pct > 0);
	assert_false(o.distinguishable);
	/* a zero baseline has no overhead */
	sa.mean = 0;
	assert_int_equal(mr_bench_overhead(&sa, &sb, &o), -EINVAL);
}

/*
 * Rounds whose ratios are all 0.5 (1/2, 2/4, 4/8): 0.5, no spread, [0.5, 0.5].
 * Ratios e^0.1, e^-0.1, e^0.1, e^-0.1: logs of mean 0 and sd sqrt(4 * 0.01 / 3) =
 * 0.1154701; t(3) = 3.18245, half width 3.18245 * 0.1154701 / 2 = 0.1837388:
 * 1 [e^-0.1837388, e^0.1837388] = [0.8321531, 1.2017019]. A round with a 0 is left
 * out; one round has no interval; none at all is an error.
 */
static void test_paired_ratio(void **state)
{
	static const double b1[] = { 2, 4, 8 }, c1[] = { 1, 2, 4 };
	double b2[] = { 1, 1, 1, 1, 0 }, c2[] = { exp(0.1), exp(-0.1), exp(0.1), exp(-0.1), 3 };
	struct mr_bench_ratio r;

	(void)state;
	assert_int_equal(mr_bench_paired_ratio(b1, c1, 3, &r), 0);
	assert_int_equal(r.n, 3);
	assert_true(r.has_interval);
	assert_close(r.ratio, 0.5, 1e-12);
	assert_close(r.lo, 0.5, 1e-12);
	assert_close(r.hi, 0.5, 1e-12);
	assert_int_equal(mr_bench_paired_ratio(b2, c2, 5, &r), 0);
	assert_int_equal(r.n, 4);
	assert_close(r.ratio, 1, 1e-12);
	assert_close(r.lo, 0.8321531, 1e-6);
	assert_close(r.hi, 1.2017019, 1e-6);
	assert_int_equal(mr_bench_paired_ratio(b1, c1, 1, &r), 0);
	assert_false(r.has_interval);
	assert_close(r.lo, 0.5, 1e-12);
	assert_int_equal(mr_bench_paired_ratio(&b2[4], &c2[4], 1, &r), -EINVAL);
	assert_int_equal(mr_bench_paired_ratio(b1, c1, 0, &r), -EINVAL);
}

static void test_median(void **state)
{
	double odd[] = { 5, 1, 3 }, even[] = { 4, 1, 3, 2 }, one[] = { 7 };

	(void)state;
	assert_close(mr_bench_median(odd, 3), 3, 0);
	assert_close(mr_bench_median(even, 4), 2.5, 0);
	assert_close(mr_bench_median(one, 1), 7, 0);
	assert_close(mr_bench_median(one, 0), 0, 0);
}

static void test_interleave(void **state)
{
	unsigned order[6], want[6] = { 0, 1, 1, 0, 0, 1 }, order3[6], want3[6] = { 0, 1, 2, 2, 1, 0 };

	(void)state;
	mr_bench_interleave(2, 3, order);
	assert_memory_equal(order, want, sizeof(want));
	mr_bench_interleave(3, 2, order3);
	assert_memory_equal(order3, want3, sizeof(want3));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kernbench_lines),
		cmocka_unit_test(test_damos_cells),
		cmocka_unit_test(test_summary),
		cmocka_unit_test(test_t975),
		cmocka_unit_test(test_overhead_interval),
		cmocka_unit_test(test_interleave),
		cmocka_unit_test(test_paired_ratio),
		cmocka_unit_test(test_median),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
