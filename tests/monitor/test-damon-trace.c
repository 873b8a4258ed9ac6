/* The damon backend's tracepoint reader: damon_aggregated lines as the 6.12 kernel
 * prints them in trace_pipe ("target_id=%lu nr_regions=%u %lu-%lu: %u %u"), parsed
 * one by one and gathered into whole aggregations. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "monitor/damon.h"

#define PFX "       kdamond.0-1234    [001] .....   812.345678: damon_aggregated: "

static const struct {
	const char *line;
	int ret;
	struct mr_mon_damon_trace_rec rec;
} cases[] = {
	{ PFX "target_id=0 nr_regions=3 94251231023104-94251231293440: 12 4", 1,
	  { 1234, 0, 3, 94251231023104u, 94251231293440u, 12, 4 } },
	/* paddr: physical addresses, a large age; irqs-info columns differ */
	{ "  kdamond.0-77 [000] d..1. 5.000001: damon_aggregated: target_id=0 "
	  "nr_regions=1000 4294967296-4299161600: 0 4294967295", 1,
	  { 77, 0, 1000, 4294967296u, 4299161600u, 0, 4294967295u } },
	/* a comm with '-' and a space: the pid follows the last '-' before " [" */
	{ " my-kdamond x-12-4321 [003] ..... 9.5: damon_aggregated: target_id=1 "
	  "nr_regions=2 4096-8192: 3 1", 1,
	  { 4321, 1, 2, 4096, 8192, 3, 1 } },
	/* without the task/cpu columns (a trace option turned off): pid unknown */
	{ " damon_aggregated: target_id=2 nr_regions=10 4096-8192: 20 0\r", 1,
	  { 0, 2, 10, 4096, 8192, 20, 0 } },
	/* not our event: ignored */
	{ "CPU:1 [LOST 342 EVENTS]", 0, { 0 } },
	{ "", 0, { 0 } },
	{ PFX "", -EINVAL, { 0 } },
	{ "  kdamond.0-1 [000] ..... 1.0: damos_before_apply: ctx_idx=0 scheme_idx=0 "
	  "target_idx=0 nr_regions=3 4096-8192: 1 2", 0, { 0 } },
	/* ours but broken: an error, never a record with made-up numbers */
	{ PFX "target_id=0 nr_regions=3 4096-8192: 12", -EINVAL, { 0 } },
	{ PFX "target_id=0 nr_regions=3 4096-8192: 12 4 x", -EINVAL, { 0 } },
	{ PFX "target_id=0 nr_regions=3 8192-4096: 1 1", -EINVAL, { 0 } },
	{ PFX "target_id=0 nr_regions=0 4096-8192: 1 1", -EINVAL, { 0 } },
	{ PFX "target_id=0 nr_regions=3 4096-8192: -1 1", -EINVAL, { 0 } },
	{ PFX "target_id=-1 nr_regions=3 4096-8192: 1 1", -EINVAL, { 0 } },
	{ PFX "target_id=0 nr_regions=3 4096--8192: 1 1", -EINVAL, { 0 } },
	{ PFX "target_id=0 nr_regions=3 0x1000-0x2000: 1 1", -EINVAL, { 0 } },
	{ PFX "target_id=0 nr_regions=3 4096-99999999999999999999999: 1 1", -EINVAL, { 0 } },
};

static void test_parse_table(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct mr_mon_damon_trace_rec r;
		int ret;

		memset(&r, 0xa5, sizeof(r));
		ret = mr_mon_damon_trace_parse(cases[i].line, &r);
		if (ret != cases[i].ret)
			fail_msg("case %zu \"%s\": got %d, want %d", i, cases[i].line, ret,
				 cases[i].ret);
		if (ret != 1)
			continue;
		assert_int_equal(r.pid, cases[i].rec.pid);
		assert_int_equal(r.target_id, cases[i].rec.target_id);
		assert_int_equal(r.nr_regions, cases[i].rec.nr_regions);
		assert_int_equal(r.start, cases[i].rec.start);
		assert_int_equal(r.end, cases[i].rec.end);
		assert_int_equal(r.nr_accesses, cases[i].rec.nr_accesses);
		assert_int_equal(r.age, cases[i].rec.age);
	}
}

/* Two aggregations of 3 regions, fed a few bytes at a time (reads split lines). */
static const char stream[] =
	PFX "target_id=0 nr_regions=3 4096-8192: 1 0\n"
	PFX "target_id=0 nr_regions=3 8192-16384: 2 1\n"
	PFX "target_id=0 nr_regions=3 16384-65536: 0 7\n"
	PFX "target_id=0 nr_regions=3 4096-12288: 5 0\n"
	PFX "target_id=0 nr_regions=3 12288-16384: 6 0\n"
	PFX "target_id=0 nr_regions=3 16384-65536: 7 8\n";

static void test_agg_split_reads(void **state)
{
	struct mr_mon_damon_trace_agg agg;
	size_t step, off, third = 0;
	int lines = 0;

	(void)state;
	/* the first aggregation is whole exactly when its third line has ended */
	while (lines < 3)
		if (stream[third++] == '\n')
			lines++;
	for (step = 1; step <= 97; step += 16) {
		mr_mon_damon_trace_agg_init(&agg);
		for (off = 0; off < sizeof(stream) - 1; off += step) {
			size_t n = sizeof(stream) - 1 - off < step ? sizeof(stream) - 1 - off : step;

			assert_int_equal(mr_mon_damon_trace_feed(&agg, stream + off, n), 0);
			if (off + n < sizeof(stream) - 1)
				assert_int_equal(agg.nr_complete, off + n >= third ? 1 : 0);
		}
		assert_int_equal(agg.nr_complete, 2);
		assert_int_equal(agg.nr_last, 3);
		assert_int_equal(agg.last[0].start, 4096);
		assert_int_equal(agg.last[0].end, 12288);
		assert_int_equal(agg.last[0].nr_accesses, 5);
		assert_int_equal(agg.last[1].nr_accesses, 6);
		assert_int_equal(agg.last[2].end, 65536);
		assert_int_equal(agg.last[2].nr_accesses, 7);
		assert_int_equal(agg.last[2].age, 8);
		assert_int_equal(agg.nr_dropped, 0);
		mr_mon_damon_trace_agg_destroy(&agg);
	}
}

/* A run broken by lost events, or by regions out of order, is never a snapshot. */
static void test_agg_broken_runs(void **state)
{
	static const char lost[] =
		PFX "target_id=0 nr_regions=3 4096-8192: 1 0\n"
		"CPU:0 [LOST 2 EVENTS]\n"
		PFX "target_id=0 nr_regions=3 16384-65536: 9 9\n"
		/* a fresh aggregation starts again at the lowest address */
		PFX "target_id=0 nr_regions=3 4096-8192: 3 0\n"
		PFX "target_id=0 nr_regions=3 8192-16384: 3 0\n";
	static const char reorder[] =
		PFX "target_id=0 nr_regions=2 4096-8192: 1 0\n"
		PFX "target_id=0 nr_regions=2 4096-8192: 2 0\n"
		PFX "target_id=0 nr_regions=2 8192-16384: 4 0\n";
	struct mr_mon_damon_trace_agg agg;

	(void)state;
	mr_mon_damon_trace_agg_init(&agg);
	assert_int_equal(mr_mon_damon_trace_feed(&agg, lost, sizeof(lost) - 1), 0);
	assert_int_equal(agg.nr_complete, 0);
	assert_int_equal(agg.nr_dropped, 2);
	assert_int_equal(agg.nr_cur, 2);
	mr_mon_damon_trace_agg_destroy(&agg);

	mr_mon_damon_trace_agg_init(&agg);
	assert_int_equal(mr_mon_damon_trace_feed(&agg, reorder, sizeof(reorder) - 1), 0);
	assert_int_equal(agg.nr_complete, 1);
	assert_int_equal(agg.nr_dropped, 1);
	assert_int_equal(agg.last[0].nr_accesses, 2);
	assert_int_equal(agg.last[1].nr_accesses, 4);
	mr_mon_damon_trace_agg_destroy(&agg);
}

/*
 * Another kdamond (damon_stat's, someone's sysfs one) emits the same event into
 * every instance that enabled it, with the same target_id=0. Only our kdamond's
 * (pid 1234) count; theirs (pid 999) neither enter our snapshot nor break our run:
 *
 *   ours:   [4096,8192) 1   [8192,16384) 2        -> the snapshot
 *   theirs: [4096,65536) 50, interleaved           -> ignored, counted
 */
static void test_agg_own_kdamond_only(void **state)
{
#define THEIRS "       kdamond.1-999     [000] .....   812.345678: damon_aggregated: "
	static const char mixed[] =
		PFX "target_id=0 nr_regions=2 4096-8192: 1 0\n"
		THEIRS "target_id=0 nr_regions=1 4096-65536: 50 3\n"
		PFX "target_id=0 nr_regions=2 8192-16384: 2 0\n"
		THEIRS "target_id=0 nr_regions=1 4096-65536: 51 4\n"
		" damon_aggregated: target_id=0 nr_regions=1 4096-65536: 52 5\n";
#undef THEIRS
	struct mr_mon_damon_trace_agg agg;

	(void)state;
	mr_mon_damon_trace_agg_init(&agg);
	agg.pid = 1234;
	assert_int_equal(mr_mon_damon_trace_feed(&agg, mixed, sizeof(mixed) - 1), 0);
	assert_int_equal(agg.nr_complete, 1);
	assert_int_equal(agg.nr_dropped, 0);
	assert_int_equal(agg.nr_foreign, 3);
	assert_int_equal(agg.nr_last, 2);
	assert_int_equal(agg.last[0].start, 4096);
	assert_int_equal(agg.last[0].end, 8192);
	assert_int_equal(agg.last[0].nr_accesses, 1);
	assert_int_equal(agg.last[1].start, 8192);
	assert_int_equal(agg.last[1].end, 16384);
	assert_int_equal(agg.last[1].nr_accesses, 2);
	mr_mon_damon_trace_agg_destroy(&agg);
}

static void test_agg_bad_input(void **state)
{
	static const char bad[] = PFX "target_id=0 nr_regions=1 4096-8192: 1\n";
	struct mr_mon_damon_trace_agg agg;
	char longline[600];

	(void)state;
	mr_mon_damon_trace_agg_init(&agg);
	assert_int_equal(mr_mon_damon_trace_feed(&agg, bad, sizeof(bad) - 1), -EINVAL);
	mr_mon_damon_trace_agg_destroy(&agg);
	memset(longline, 'x', sizeof(longline));
	mr_mon_damon_trace_agg_init(&agg);
	assert_int_equal(mr_mon_damon_trace_feed(&agg, longline, sizeof(longline)), -EINVAL);
	mr_mon_damon_trace_agg_destroy(&agg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_table),
		cmocka_unit_test(test_agg_split_reads),
		cmocka_unit_test(test_agg_broken_runs),
		cmocka_unit_test(test_agg_own_kdamond_only),
		cmocka_unit_test(test_agg_bad_input),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
