/* Unit tests of bench/output.c and the harness's summaries: synthetic runs with
 * hand-computed means, overheads and 95% intervals, printed as kernbench's block, the
 * DAMOS tables (with "not distinguishable"), CSV and JSON. */
#include "config.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "bench/run.h"

/*
 * Two workloads, orig and alloc, 3 rounds, elapsed_s only (every other metric NaN):
 *   a: orig 10 11 12 (mean 11, sd 1)        alloc 12 13 14 (mean 13, sd 1)
 *      +18.18%; Welch: se = sqrt(2/3), df = 4, t = 2.776445, half = 2.26697
 *      -> [(2 - 2.26697) / 11, (2 + 2.26697) / 11] = [-2.43%, +38.79%]: spans 0
 *   b: orig 100 100.1 99.9 (mean 100, sd 0.1) alloc 110 110.1 109.9 (mean 110, sd 0.1)
 *      +10%; se = 0.0816497, df = 4, half = 0.226697 -> [+9.77%, +10.23%]
 *   total per round: orig 110 111.1 111.9, alloc 122 123.1 123.9: +10.81%
 */
static const double elapsed[2][2][3] = {	/* [workload][config][round] */
	{ { 10, 11, 12 }, { 12, 13, 14 } },
	{ { 100, 100.1, 99.9 }, { 110, 110.1, 109.9 } },
};

static void fill(struct mr_bench *b)
{
	unsigned w, r, c, k = 0, m;

	memset(b, 0, sizeof(*b));
	b->configs[0].name = strdup("orig");
	b->configs[0].note = strdup("the workload as it is");
	b->configs[1].name = strdup("alloc");
	b->nr_configs = 2;
	b->workloads[0].name = strdup("a");
	b->workloads[0].cmd = strdup("true");
	b->workloads[1].name = strdup("b");
	b->workloads[1].cmd = strdup("true");
	b->nr_workloads = 2;
	b->runs = 3;
	snprintf(b->date, sizeof(b->date), "Mon Nov 30 12:00:00 UTC 2026");
	snprintf(b->kernel, sizeof(b->kernel), "6.1.0-test");
	snprintf(b->energy_source, sizeof(b->energy_source), "none");
	b->run = calloc(12, sizeof(*b->run));
	assert_non_null(b->run);
	for (w = 0; w < 2; w++)
		for (r = 0; r < 3; r++)
			for (c = 0; c < 2; c++, k++) {
				struct mr_bench_run *run = &b->run[k];

				run->workload = w;
				run->config = c;
				run->round = r;
				run->order = k;
				run->start_unix_s = 1000 + k;
				run->setup_s = run->teardown_s = NAN;
				for (m = 0; m < NR_MR_BENCH_METRICS; m++)
					run->m[m] = NAN;
				run->m[MR_BENCH_ELAPSED_S] = elapsed[w][c][r];
			}
	b->nr_runs = b->nr_planned = 12;
}

static char *capture(void (*print)(FILE *, const struct mr_bench *), const struct mr_bench *b)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	print(f, b);
	fclose(f);
	return buf;
}

static void assert_has_line(const char *text, const char *line)
{
	size_t n = strlen(line);
	const char *p;

	for (p = text; (p = strstr(p, line)); p++)
		if ((p == text || p[-1] == '\n') && (p[n] == '\n' || p[n] == '\0'))
			return;
	fail_msg("no line \"%s\" in:\n%s", line, text);
}

static void test_tables(void **state)
{
	struct mr_bench b;
	char *t;

	(void)state;
	fill(&b);
	t = capture(mr_bench_print_tables, &b);
	assert_has_line(t, "elapsed_s orig alloc (overhead)");
	assert_has_line(t, "a 11.000 13.000 (18.18)");
	assert_has_line(t, "b 100.000 110.000 (10.00)");
	assert_has_line(t, "total 111.000 123.000 (10.81)");
	assert_has_line(t, "  alloc a: +18.18%, 95% interval [-2.43%, +38.79%] not distinguishable");
	assert_has_line(t, "  alloc b: +10.00%, 95% interval [+9.77%, +10.23%]");
	/* metrics no run measured have no table */
	assert_null(strstr(t, "user_s orig"));
	assert_null(strstr(t, "dram_energy_j"));
	free(t);
	mr_bench_free(&b);
}

static void test_kernbench_block(void **state)
{
	struct mr_bench b;
	char *t;

	(void)state;
	fill(&b);
	b.workloads[1].label = strdup("Optimal load -j 8");
	t = capture(mr_bench_print_kernbench, &b);
	assert_has_line(t, "orig (the workload as it is):");
	assert_has_line(t, "alloc:");
	assert_has_line(t, "Mon Nov 30 12:00:00 UTC 2026");
	assert_has_line(t, "6.1.0-test");
	assert_has_line(t, "Average a Run (std deviation):");
	assert_has_line(t, "Average Optimal load -j 8 Run (std deviation):");
	assert_has_line(t, "Elapsed Time 11 (1)");
	assert_has_line(t, "Elapsed Time 13 (1)");
	assert_has_line(t, "Elapsed Time 100 (0.1)");
	/* kernbench's show_statistics with no data point */
	assert_has_line(t, "User Time No data");
	free(t);
	mr_bench_free(&b);
}

/*
 * With a DRAM counter (powercap) and a physical record, the measured energy difference
 * beside the model's. Per round, workload a: orig 100 102 98 (mean 100, sd 2), alloc
 * 90 92 88 (mean 90, sd 2): -10%; Welch se = sqrt(4/3 + 4/3) = 1.63299, df = 4,
 * half = 2.776445 * 1.63299 = 4.53391 -> [-14.53%, -5.47%]. Workload b twice a's
 * numbers, the total three times: the same percentages. Model: orig 50, alloc 46
 * every run (b and total scaled alike): -8.00%.
 */
static void test_energy_vs_model(void **state)
{
	static const double orig[3] = { 100, 102, 98 }, alloc[3] = { 90, 92, 88 };
	struct mr_bench b;
	unsigned k;
	char *t;

	(void)state;
	fill(&b);
	snprintf(b.energy_source, sizeof(b.energy_source), "powercap");
	for (k = 0; k < b.nr_runs; k++) {
		struct mr_bench_run *r = &b.run[k];
		double scale = r->workload + 1;

		r->m[MR_BENCH_ENERGY_J] = scale * (r->config ? alloc : orig)[r->round];
		r->m[MR_BENCH_MODEL_ENERGY_J] = scale * (r->config ? 46 : 50);
	}
	t = capture(mr_bench_print_tables, &b);
	assert_has_line(t, "DRAM energy against orig, measured (powercap) and as the model "
			"predicts it:");
	assert_has_line(t, "  alloc a: measured -10.00% [-14.53%, -5.47%]; model -8.00%");
	assert_has_line(t, "  alloc b: measured -10.00% [-14.53%, -5.47%]; model -8.00%");
	assert_has_line(t, "  alloc total: measured -10.00% [-14.53%, -5.47%]; model -8.00%");
	free(t);

	/* a counter but no physical record: said, no model column */
	for (k = 0; k < b.nr_runs; k++)
		b.run[k].m[MR_BENCH_MODEL_ENERGY_J] = NAN;
	t = capture(mr_bench_print_tables, &b);
	assert_has_line(t, "DRAM energy measured by powercap; no model prediction beside it: "
			"the model needs the residency of a physical record (--phys)");
	assert_null(strstr(t, "measured -10.00%"));
	free(t);

	/* no counter: the energy is the model's own, nothing to compare */
	snprintf(b.energy_source, sizeof(b.energy_source), "model");
	t = capture(mr_bench_print_tables, &b);
	assert_null(strstr(t, "DRAM energy against"));
	assert_null(strstr(t, "DRAM energy measured by"));
	free(t);
	mr_bench_free(&b);
}

static void test_csv_json(void **state)
{
	struct json_object *doc, *runs, *summary, *o, *m, *v;
	struct mr_bench b;
	char *t;

	(void)state;
	fill(&b);
	t = capture(mr_bench_print_csv, &b);
	assert_has_line(t, "order,round,warmup,workload,config,start_unix_s,exit_status,setup_s,"
			"teardown_s,elapsed_s,user_s,system_s,cpu_s,cpu_pct,involuntary_csw,"
			"voluntary_csw,max_rss_kib,memused_avg_kib,dram_energy_j,data_regions,"
			"low_power_pct,model_energy_j,wss_p50_mib,regions_held,evac_bytes_moved,"
			"evac_s,observed");
	/* no evac column outside an evac configuration, no region list unknown */
	assert_has_line(t, "1,0,0,a,alloc,1001.000000,0,,,12.000000,,,,,,,,,,,,,,,,,");
	free(t);
	t = mr_bench_json(&b);
	doc = json_tokener_parse(t);
	assert_non_null(doc);
	assert_true(json_object_object_get_ex(doc, "runs", &runs));
	assert_int_equal(json_object_array_length(runs), 12);
	o = json_object_array_get_idx(runs, 3);
	assert_true(json_object_object_get_ex(o, "config", &v));
	assert_string_equal(json_object_get_string(v), "alloc");
	assert_true(json_object_object_get_ex(o, "user_s", &v));
	assert_null(v);	/* not measured: null */
	assert_true(json_object_object_get_ex(doc, "summary", &summary));
	/* a/orig, a/alloc, b/orig, b/alloc, total/orig, total/alloc */
	assert_int_equal(json_object_array_length(summary), 6);
	o = json_object_array_get_idx(summary, 1);
	assert_true(json_object_object_get_ex(o, "metrics", &m));
	assert_true(json_object_object_get_ex(m, "elapsed_s", &m));
	assert_true(json_object_object_get_ex(m, "distinguishable", &v));
	assert_false(json_object_get_boolean(v));
	o = json_object_array_get_idx(summary, 3);
	assert_true(json_object_object_get_ex(o, "metrics", &m));
	assert_true(json_object_object_get_ex(m, "elapsed_s", &m));
	assert_true(json_object_object_get_ex(m, "distinguishable", &v));
	assert_true(json_object_get_boolean(v));
	assert_true(json_object_object_get_ex(m, "overhead_lo_pct", &v));
	assert_true(fabs(json_object_get_double(v) - 9.7733) < 1e-3);
	json_object_put(doc);
	free(t);
	mr_bench_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tables),
		cmocka_unit_test(test_kernbench_block),
		cmocka_unit_test(test_csv_json),
		cmocka_unit_test(test_energy_vs_model),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
