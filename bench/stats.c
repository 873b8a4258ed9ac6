/* Statistics and table lines of the bench library (see stats.h). */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench/stats.h"
#include "common/util.h"

void mr_bench_summarize(const double *x, unsigned n, struct mr_bench_summary *s)
{
	double sum = 0, ss = 0;
	unsigned i;

	s->n = n;
	s->mean = s->stddev = 0;
	if (!n)
		return;
	for (i = 0; i < n; i++)
		sum += x[i];
	s->mean = sum / n;
	if (n < 2)
		return;
	/* two passes: the deviations, not sum of squares minus square of sums, which
	 * loses every digit on large, close values (context switches ~1e6) */
	for (i = 0; i < n; i++)
		ss += (x[i] - s->mean) * (x[i] - s->mean);
	s->stddev = sqrt(ss / (n - 1));
}

/* t(0.975, df) for df 1..30, then 40, 60, 120 (any table of Student's t). */
static const struct {
	double df;
	double t;
} t975[] = {
	{ 1, 12.7062 }, { 2, 4.30265 }, { 3, 3.18245 }, { 4, 2.77645 }, { 5, 2.57058 },
	{ 6, 2.44691 }, { 7, 2.36462 }, { 8, 2.30600 }, { 9, 2.26216 }, { 10, 2.22814 },
	{ 11, 2.20099 }, { 12, 2.17881 }, { 13, 2.16037 }, { 14, 2.14479 }, { 15, 2.13145 },
	{ 16, 2.11991 }, { 17, 2.10982 }, { 18, 2.10092 }, { 19, 2.09302 }, { 20, 2.08596 },
	{ 21, 2.07961 }, { 22, 2.07387 }, { 23, 2.06866 }, { 24, 2.06390 }, { 25, 2.05954 },
	{ 26, 2.05553 }, { 27, 2.05183 }, { 28, 2.04841 }, { 29, 2.04523 }, { 30, 2.04227 },
	{ 40, 2.02108 }, { 60, 2.00030 }, { 120, 1.97993 },
};
#define T975_INF 1.95996

double mr_bench_t975(double df)
{
	size_t i;
	double a, b;

	if (!(df > 1))
		return t975[0].t;
	for (i = 1; i < MR_ARRAY_SIZE(t975); i++) {
		if (df > t975[i].df)
			continue;
		/* t is close to linear in 1/df between rows */
		a = 1 / t975[i - 1].df;
		b = 1 / t975[i].df;
		return t975[i].t + (t975[i - 1].t - t975[i].t) * (1 / df - b) / (a - b);
	}
	a = 1 / t975[MR_ARRAY_SIZE(t975) - 1].df;
	return T975_INF + (t975[MR_ARRAY_SIZE(t975) - 1].t - T975_INF) * (1 / df) / a;
}

int mr_bench_overhead(const struct mr_bench_summary *base, const struct mr_bench_summary *cfg,
		      struct mr_bench_overhead *o)
{
	double va, vb, se, df, half;

	if (!base->n || !cfg->n)
		return mr_error(-EINVAL, "overhead: a configuration has no run");
	if (base->mean == 0)
		return mr_error(-EINVAL, "overhead: the baseline's mean is 0");
	o->pct = 100 * (cfg->mean - base->mean) / base->mean;
	o->lo_pct = o->hi_pct = o->pct;
	o->has_interval = base->n >= 2 && cfg->n >= 2;
	o->distinguishable = false;
	if (!o->has_interval)
		return 0;
	va = base->stddev * base->stddev / base->n;
	vb = cfg->stddev * cfg->stddev / cfg->n;
	se = sqrt(va + vb);
	if (se == 0) {
		/* no spread at all: the difference is what it is */
		o->distinguishable = o->pct != 0;
		return 0;
	}
	/* Welch-Satterthwaite */
	df = (va + vb) * (va + vb) / (va * va / (base->n - 1) + vb * vb / (cfg->n - 1));
	half = mr_bench_t975(df) * se;
	o->lo_pct = 100 * (cfg->mean - base->mean - half) / fabs(base->mean);
	o->hi_pct = 100 * (cfg->mean - base->mean + half) / fabs(base->mean);
	o->distinguishable = o->lo_pct > 0 || o->hi_pct < 0;
	return 0;
}

int mr_bench_paired_ratio(const double *base, const double *cfg, unsigned n,
			  struct mr_bench_ratio *r)
{
	struct mr_bench_summary s;
	double *lg = calloc(n ? n : 1, sizeof(*lg)), half;
	unsigned i, m = 0;

	if (!lg)
		return mr_error(-ENOMEM, "ratio: out of memory");
	for (i = 0; i < n; i++)
		if (base[i] > 0 && cfg[i] > 0)
			lg[m++] = log(cfg[i] / base[i]);
	if (m)
		mr_bench_summarize(lg, m, &s);
	free(lg);
	if (!m)
		return mr_error(-EINVAL, "ratio: no round has both values above 0");
	r->n = m;
	r->ratio = r->lo = r->hi = exp(s.mean);
	r->has_interval = m >= 2;
	if (!r->has_interval)
		return 0;
	half = mr_bench_t975(m - 1) * s.stddev / sqrt(m);
	r->lo = exp(s.mean - half);
	r->hi = exp(s.mean + half);
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double mr_bench_median(double *x, unsigned n)
{
	if (!n)
		return 0;
	qsort(x, n, sizeof(*x), cmp_double);
	return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
}

void mr_bench_interleave(unsigned nr_configs, unsigned runs, unsigned *order)
{
	unsigned r, c;

	for (r = 0; r < runs; r++)
		for (c = 0; c < nr_configs; c++)
			order[r * nr_configs + c] = r % 2 ? nr_configs - 1 - c : c;
}

int mr_bench_kernbench_line(char *buf, size_t len, const char *name,
			    const struct mr_bench_summary *s)
{
	/* kernbench averages with awk, whose print uses OFMT "%.6g" */
	return snprintf(buf, len, "%s %.6g (%.6g)", name, s->mean, s->stddev);
}

int mr_bench_damos_cell(char *buf, size_t len, double mean, const double *overhead_pct)
{
	if (!overhead_pct)
		return snprintf(buf, len, "%.3f", mean);
	return snprintf(buf, len, "%.3f (%.2f)", mean, *overhead_pct);
}
