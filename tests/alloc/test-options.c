/* Unit tests of MEMREG_* option parsing (allocator/options.c): booleans, sizes,
 * numbers, bad values warned once with the default kept, AT_SECURE. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "allocator/internal.h"

static void test_parse(void **state)
{
	static const struct {
		enum mr_opt_type type;
		const char *in;
		int ret;
		uint64_t out;
	} cases[] = {
		{ MR_OPT_BOOL, "1", 0, 1 }, { MR_OPT_BOOL, "on", 0, 1 }, { MR_OPT_BOOL, "YES", 0, 1 },
		{ MR_OPT_BOOL, "True", 0, 1 }, { MR_OPT_BOOL, "0", 0, 0 }, { MR_OPT_BOOL, "off", 0, 0 },
		{ MR_OPT_BOOL, "no", 0, 0 }, { MR_OPT_BOOL, "false", 0, 0 }, { MR_OPT_BOOL, "2", -1, 0 },
		{ MR_OPT_BOOL, "", -1, 0 }, { MR_OPT_BOOL, "yess", -1, 0 },
		{ MR_OPT_SIZE, "4096", 0, 4096 }, { MR_OPT_SIZE, "64M", 0, 64 << 20 },
		{ MR_OPT_SIZE, "2k", 0, 2048 }, { MR_OPT_SIZE, "1G", 0, 1 << 30 },
		{ MR_OPT_SIZE, "1GiB", 0, 1 << 30 }, { MR_OPT_SIZE, "8MB", 0, 8 << 20 },
		{ MR_OPT_SIZE, "1T", -1, 0 }, { MR_OPT_SIZE, "M", -1, 0 }, { MR_OPT_SIZE, "-1", -1, 0 },
		{ MR_OPT_SIZE, "99999999999999999999", -1, 0 }, { MR_OPT_SIZE, "17179869184G", -1, 0 },
		{ MR_OPT_SIZE, "1 M", -1, 0 },
		{ MR_OPT_U64, "250", 0, 250 }, { MR_OPT_U64, "250ms", -1, 0 }, { MR_OPT_U64, "", -1, 0 },
		{ MR_OPT_PATH, "/tmp/x", 0, 0 }, { MR_OPT_PATH, "", -1, 0 },
	};
	unsigned i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t v = 0;
		int rc = mr_option_parse(cases[i].type, cases[i].in, &v);

		if (rc != cases[i].ret)
			fail_msg("'%s': returned %d, want %d", cases[i].in, rc, cases[i].ret);
		if (rc == 0 && cases[i].type != MR_OPT_PATH && v != cases[i].out)
			fail_msg("'%s': %llu, want %llu", cases[i].in, (unsigned long long)v,
				 (unsigned long long)cases[i].out);
	}
}

static unsigned warnings;
static char last_warned[64];

static void warn(const char *name, const char *value)
{
	(void)value;
	warnings++;
	strncpy(last_warned, name, sizeof(last_warned) - 1);
}

static void test_load(void **state)
{
	char *env[] = {
		"PATH=/bin", "MEMREG_REGION_SIZE=128M", "MEMREG_DECAY_MS=oops",
		"MEMREG_SHOW_STATS=yes", "MEMREG_PROFILE=/tmp/p", "MEMREG_REGION_SIZEX=1",
		"MEMREG_UNKNOWN=1", NULL,
	};

	(void)state;
	warnings = 0;
	mr_options_load(env, false, warn);
	assert_int_equal(MR_OPT(region_size), 128 << 20);
	assert_int_equal(MR_OPT(decay_ms), mr_options[MR_OPT_decay_ms].def);
	assert_int_equal(warnings, 1);
	assert_string_equal(last_warned, "MEMREG_DECAY_MS");
	assert_int_equal(MR_OPT(show_stats), 1);
	assert_string_equal(MR_OPT_STR(profile), "/tmp/p");
	assert_null(MR_OPT_STR(site_map));
	/* Loading again starts from the defaults. */
	mr_options_load(env + 6, false, warn);
	assert_int_equal(MR_OPT(region_size), 64 << 20);
	assert_int_equal(MR_OPT(show_stats), 0);
	assert_null(MR_OPT_STR(profile));
}

static void test_secure(void **state)
{
	char *env[] = { "MEMREG_PROFILE=/etc/shadow", "MEMREG_SHOW_STATS=1",
			"MEMREG_REGION_SIZE=1M", "MEMREG_SITE_MAP=/tmp/x", NULL };

	(void)state;
	warnings = 0;
	mr_options_load(env, true, warn);
	assert_null(MR_OPT_STR(profile));
	assert_null(MR_OPT_STR(site_map));
	assert_int_equal(MR_OPT(show_stats), 0);
	assert_int_equal(MR_OPT(region_size), 64 << 20);
	assert_int_equal(warnings, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_load),
		cmocka_unit_test(test_secure),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
