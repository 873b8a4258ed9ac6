/* The bench library's statistics and table lines: mean and sample standard
 * deviation of repeated runs, overhead against a baseline with its 95% interval,
 * the interleaved run order, and the two layouts the field reads (kernbench's
 * "Elapsed Time 574.66 (2.31846)" and the DAMOS evaluation's "143.810 (0.69)"). */
#ifndef MR_BENCH_STATS_H
#define MR_BENCH_STATS_H

#include <stdbool.h>
#include <stddef.h>

/*
 * struct mr_bench_summary - repeated measurements of one metric.
 * @n:		number of runs.
 * @mean:	arithmetic mean.
 * @stddev:	sample standard deviation (n - 1 in the denominator, as kernbench's
 *		awk computes it); 0 when @n < 2.
 */
struct mr_bench_summary {
	unsigned n;
	double mean;
	double stddev;
};

/*
 * struct mr_bench_overhead - a configuration against the baseline, in percent.
 * @pct:		100 * (mean - base mean) / base mean.
 * @lo_pct, @hi_pct:	its 95% confidence interval: Welch's t interval of the
 *			difference of the means, divided by the base mean (the base
 *			mean's own error is in the difference's, not in the divisor).
 * @has_interval:	both sides had at least two runs (else no interval).
 * @distinguishable:	the interval does not contain 0; false without an interval.
 */
struct mr_bench_overhead {
	double pct;
	double lo_pct;
	double hi_pct;
	bool has_interval;
	bool distinguishable;
};

/*
 * struct mr_bench_ratio - a configuration against the baseline round by round: each
 * round ran both, one after the other, so their ratio cancels what the machine did to
 * that round (a shared host's load moves both).
 * @n:			rounds with both values above 0.
 * @ratio:		geometric mean of the rounds' ratios (configuration / baseline).
 * @lo, @hi:		its 95% interval: Student's t interval of the mean of the logs
 *			of the ratios, taken back by exp.
 * @has_interval:	@n >= 2 (else @lo = @hi = @ratio).
 */
struct mr_bench_ratio {
	unsigned n;
	double ratio;
	double lo;
	double hi;
	bool has_interval;
};

/* "stats.c" */

void mr_bench_summarize(const double *x, unsigned n, struct mr_bench_summary *s);
/* -EINVAL (mr_error set) when the base mean is 0 or either side has no run. */
int mr_bench_overhead(const struct mr_bench_summary *base, const struct mr_bench_summary *cfg,
		      struct mr_bench_overhead *o);
/* -EINVAL (mr_error set) when no round has both values above 0. */
int mr_bench_paired_ratio(const double *base, const double *cfg, unsigned n,
			  struct mr_bench_ratio *r);
/* The median of the @n values at @x, which it sorts; 0 when @n is 0. */
double mr_bench_median(double *x, unsigned n);
/* Two-sided 95% quantile of Student's t with @df degrees of freedom (df >= 1;
 * tabulated, interpolated in 1/df between rows, 1.95996 as df grows without bound). */
double mr_bench_t975(double df);
/*
 * The run order: @runs rounds, each running every configuration once, forwards in
 * even rounds and backwards in odd ones (ABBAAB... for two), so that a drift of a
 * shared machine over time falls on every configuration alike, and a steady one
 * favours each side of a round's pairs in turn rather than always the later.
 * @order gets @nr_configs * @runs configuration indexes.
 */
void mr_bench_interleave(unsigned nr_configs, unsigned runs, unsigned *order);
/* kernbench's line: "NAME MEAN (STDDEV)", each as awk prints a number (%.6g). */
int mr_bench_kernbench_line(char *buf, size_t len, const char *name,
			    const struct mr_bench_summary *s);
/* A DAMOS evaluation cell: "MEAN" (%.3f) for the baseline, "MEAN (OVERHEAD)" with the
 * overhead in percent as %.2f for the others. */
int mr_bench_damos_cell(char *buf, size_t len, double mean, const double *overhead_pct);

#endif
