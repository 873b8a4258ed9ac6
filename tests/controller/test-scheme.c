/* Unit tests of the scheme parser: the documented examples field by field, and
 * one exact "SOURCE:LINE:COLUMN: message" per kind of mistake. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/util.h"
#include "controller/scheme.h"

static char *read_text(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 1 << 16);

	assert_non_null(f);
	assert_non_null(buf);
	fread(buf, 1, (1 << 16) - 1, f);
	fclose(f);
	return buf;
}

/* tests/controller/schemes/examples: the docs' examples, all fields. */
static void test_examples(void **state)
{
	char path[4096], *text;
	struct mr_scheme_set set;
	const struct mr_scheme *s;
	const char *src = getenv("top_srcdir");

	(void)state;
	snprintf(path, sizeof(path), "%s/tests/controller/schemes/examples", src ? src : ".");
	text = read_text(path);
	assert_int_equal(mr_scheme_parse(text, "examples", &set), 0);
	free(text);
	assert_int_equal(set.nr, 4);

	/* 100M max 0 0 2m max pageout */
	s = &set.schemes[0];
	assert_int_equal(s->line, 3);
	assert_true(s->min_size_bytes == 100ull << 20 && s->max_size_bytes == UINT64_MAX);
	assert_false(s->min_freq.is_count);
	assert_int_equal(s->min_freq.value, 0);
	assert_int_equal(s->max_freq.value, 0);
	assert_true(s->min_age_us == 120000000ull && s->max_age_us == UINT64_MAX);
	assert_int_equal(s->action, MR_SCHEME_PAGEOUT);
	assert_int_equal(s->target_node, -1);
	assert_int_equal(s->target_region, -1);
	assert_int_equal(s->quota_bytes, 0);
	assert_false(s->has_wmarks);

	/* 4K max 0 0 30s max migrate_cold 3 */
	s = &set.schemes[1];
	assert_int_equal(s->min_size_bytes, 4096);
	assert_int_equal(s->min_age_us, 30000000);
	assert_int_equal(s->action, MR_SCHEME_MIGRATE_COLD);
	assert_int_equal(s->target_node, 3);
	assert_int_equal(s->target_region, -1);

	/* 4K max 50% max 5s max migrate_hot region:0, with every key */
	s = &set.schemes[2];
	assert_int_equal(s->min_freq.value, 500);	/* per-mille */
	assert_int_equal(s->max_freq.value, 1000);
	assert_int_equal(s->min_age_us, 5000000);
	assert_int_equal(s->action, MR_SCHEME_MIGRATE_HOT);
	assert_int_equal(s->target_node, -1);
	assert_int_equal(s->target_region, 0);
	assert_int_equal(s->quota_bytes, 64ull << 20);
	assert_int_equal(s->quota_ms, 10);
	assert_int_equal(s->quota_reset_us, 1000000);
	assert_int_equal(s->weight_size, 1);
	assert_int_equal(s->weight_freq, 3);
	assert_int_equal(s->weight_age, 2);
	assert_true(s->has_wmarks);
	assert_int_equal(s->wmark_interval_us, 5000000);
	assert_int_equal(s->wmark_high_permille, 500);
	assert_int_equal(s->wmark_mid_permille, 400);
	assert_int_equal(s->wmark_low_permille, 50);
	assert_int_equal(s->nr_filters, 3);
	assert_int_equal(s->filters[0].type, MR_SCHEME_FILTER_MEMCG);
	assert_string_equal(s->filters[0].memcg_path, "/workload.slice");
	assert_true(s->filters[0].allow);
	assert_int_equal(s->filters[1].type, MR_SCHEME_FILTER_ANON);
	assert_false(s->filters[1].allow);
	assert_int_equal(s->filters[2].type, MR_SCHEME_FILTER_ADDR);
	assert_true(s->filters[2].start == 0x7f0000000000ull && s->filters[2].end == 0x7f0000200000ull);

	/* min max 3acc 10acc 500ms 1h stat   # counts only */
	s = &set.schemes[3];
	assert_int_equal(s->line, 15);
	assert_int_equal(s->min_size_bytes, 0);
	assert_true(s->min_freq.is_count && s->min_freq.value == 3);
	assert_true(s->max_freq.is_count && s->max_freq.value == 10);
	assert_int_equal(s->min_age_us, 500000);
	assert_int_equal(s->max_age_us, 3600000000ull);
	assert_int_equal(s->action, MR_SCHEME_STAT);
	mr_scheme_set_free(&set);
}

/* Each mistake: the whole message, with line and column. */
static void test_errors(void **state)
{
	static const struct {
		const char *text;
		const char *msg;
	} cases[] = {
		{ "100M max 0 0 2m max", "s:1:17: a scheme is '<min size> <max size> <min freq> "
		  "<max freq> <min age> <max age> <action> [target]': 6 words" },
		{ "100X max 0 0 2m max pageout", "s:1:1: bad size '100X' (e.g. 4K, 100M, min, max)" },
		{ "4K max 0 0 2 max pageout", "s:1:12: bad age '2' (a time with its unit: 500ms, "
		  "30s, 2m; or min, max)" },
		{ "4K max 101% max 2m max pageout", "s:1:8: frequency '101%' above 100%" },
		{ "4K max 5x max 2m max pageout", "s:1:8: bad frequency '5x' (a percentage of the "
		  "maximum such as 0 or 5%, or a count per aggregation such as 3acc)" },
		{ "8K 4K 0 0 2m max pageout", "s:1:1: minimum size above the maximum" },
		{ "4K max 50% 10% 2m max pageout", "s:1:8: minimum frequency above the maximum" },
		{ "4K max 0 0 2m 1m pageout", "s:1:12: minimum age above the maximum" },
		{ "4K max 0 0 2m max evict", "s:1:19: unknown action 'evict' (migrate_cold, "
		  "migrate_hot, pageout, cold, willneed, stat)" },
		{ "4K max 0 0 2m max migrate_cold", "s:1:19: migrate_cold needs a target: a node id, "
		  "or region:N" },
		{ "4K max 0 0 2m max pageout 3", "s:1:27: pageout takes no target" },
		{ "4K max 0 0 2m max migrate_cold node3", "s:1:32: bad target 'node3' (a node id such "
		  "as 3, or region:N)" },
		{ "  quota bytes 1M per 1s", "s:1:3: an indented key line needs a scheme line above it" },
		{ "4K max 0 0 2m max stat\n\n  quota bytes 1M per 1", "s:3:22: bad interval '1' "
		  "(a time with its unit: 100ms, 1s)" },
		{ "4K max 0 0 2m max stat\n  quota bytes 1M per 1s\n  quota ms 5 per 2s",
		  "s:3:18: one reset interval per scheme, as DAMOS: the other quota says another" },
		{ "4K max 0 0 2m max stat\n  quota bytes 1M per 1s\n  quota bytes 2M per 1s",
		  "s:3:9: a second 'quota bytes' for the same scheme" },
		{ "4K max 0 0 2m max stat\n  watermarks free_mem_rate 5s high 10% mid 20% low 5%",
		  "s:2:36: watermarks must be high >= mid >= low" },
		{ "4K max 0 0 2m max stat\n  filter memcg workload allow", "s:2:16: 'filter memcg' "
		  "takes one cgroup path, from the cgroup root (/workload.slice)" },
		{ "4K max 0 0 2m max stat\n  filter anon maybe", "s:2:15: a filter ends with allow "
		  "or reject, not 'maybe'" },
		{ "4K max 0 0 2m max stat\n  filter addr 0x2000-0x1000 allow", "s:2:15: bad address "
		  "range (START-END, start below end, decimal or 0x hex)" },
		{ "4K max 0 0 2m max stat\n  speed 3", "s:2:3: unknown key 'speed' (quota, weights, "
		  "watermarks, filter)" },
		{ "# nothing\n\n", "s: no scheme" },
	};
	struct mr_scheme_set set = { NULL, 77 };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (mr_scheme_parse(cases[i].text, "s", &set) != -EINVAL)
			fail_msg("case %zu parsed: %s", i, cases[i].text);
		if (strcmp(mr_last_error(), cases[i].msg))
			fail_msg("case %zu:\n got  %s\n want %s", i, mr_last_error(), cases[i].msg);
		assert_int_equal(set.nr, 77);	/* untouched on error */
	}
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(mr_scheme_action_name(MR_SCHEME_MIGRATE_COLD), "migrate_cold");
	assert_string_equal(mr_scheme_action_name(MR_SCHEME_STAT), "stat");
	assert_true(mr_scheme_action_migrates(MR_SCHEME_MIGRATE_HOT));
	assert_false(mr_scheme_action_migrates(MR_SCHEME_PAGEOUT));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_examples),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
