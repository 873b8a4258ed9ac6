/* Unit tests of memregctl profile's attribution: hand-made site maps and records (as
 * tables) with the classes and scores each site must get, and bad site maps. */
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

#include "common/util.h"
#include "monitor/profile.h"
#include "monitor/record.h"

#define HDR "memreg-site-map 1\npage_size 4096\npid 42\n" \
	"site 1 0123abcd 0x1139 /bin/prog\nsite 2 0123abcd 0x1149 /bin/prog\n"
#define MAXR 4
#define MAXS 3

struct snap { struct mr_rec_region r[MAXR]; };
struct want { const char *cls; double score; double share; };

static const struct {
	const char *name;
	const char *map;
	unsigned nsnaps;
	struct snap snaps[2];		/* aggregation 10 x sampling: nr_accesses 10 = 1.0 */
	double thr;
	struct want w[MAXS];		/* per site, in site-map order */
} cases[] = {
	{ "separate pages: the accessed site hot, the other cold",
	  HDR "page 0x10000 1:4096\npage 0x11000 2:4096\n", 1,
	  { { { { 0x10000, 0x11000, 10, 0 }, { 0x11000, 0x12000, 0, 0 } } } }, 0.5,
	  { { "hot", 1.0, 1.0 }, { "cold", 0.0, 0.0 } } },
	/*  page    0x10000     0x11000     0x12000     0x13000
	 *  site 1  512         512         512         -
	 *  site 2  3584        3584        3584        4096
	 *  rate    1           1           1           0
	 * The byte-weighted share gives site 2 10752/14848 = 0.724 (hot at 0.5); the
	 * refinement gives the shared pages' accesses to site 1, accessed wherever it is. */
	{ "interleaved: the site on every accessed page is hot, the other cold",
	  HDR "page 0x10000 1:512 2:3584\npage 0x11000 1:512 2:3584\n"
	      "page 0x12000 1:512 2:3584\npage 0x13000 2:4096\n", 1,
	  { { { { 0x10000, 0x13000, 10, 0 }, { 0x13000, 0x14000, 0, 0 } } } }, 0.5,
	  { { "hot", 8.0, 1.0 }, { "cold", 0.0, 0.7241 } } },
	{ "rates averaged over snapshots, nr_accesses over aggregation / sampling",
	  HDR "page 0x10000 1:4096\npage 0x20000 2:2048\n", 2,
	  { { { { 0x10000, 0x11000, 10, 0 }, { 0x20000, 0x21000, 2, 0 } } },
	    { { { 0x10000, 0x11000, 0, 0 }, { 0x20000, 0x21000, 4, 0 } } } }, 0.5,
	  { { "hot", 0.5, 0.5 }, { "cold", 0.3, 0.3 } } },
	{ "the threshold decides",
	  HDR "page 0x10000 1:4096\npage 0x20000 2:2048\n", 2,
	  { { { { 0x10000, 0x11000, 10, 0 }, { 0x20000, 0x21000, 2, 0 } } },
	    { { { 0x10000, 0x11000, 0, 0 }, { 0x20000, 0x21000, 4, 0 } } } }, 0.25,
	  { { "hot", 0.5, 0.5 }, { "hot", 0.3, 0.3 } } },
	{ "pages no region covers count as not accessed; a site never accessed is cold",
	  HDR "site 3 - 0x7f0000001000 -\n"
	      "page 0x10000 1:100\npage 0x30000 2:100 3:200\npage 0x50000 3:64\n", 1,
	  { { { { 0x0f000, 0x11000, 10, 0 }, { 0x40000, 0x60000, 10, 0 } } } }, 0.001,
	  { { "hot", 1.0, 1.0 }, { "cold", 0.0, 0.0 }, { "hot", 0.2424, 0.2424 } } },
	{ "accesses above aggregation / sampling are capped at 1",
	  HDR "page 0x10000 1:4096\npage 0x11000 2:4096\n", 1,
	  { { { { 0x10000, 0x11000, 50, 0 }, { 0x11000, 0x12000, 5, 0 } } } }, 0.5,
	  { { "hot", 1.0, 1.0 }, { "hot", 0.5, 0.5 } } },
};

static void test_attribution(void **state)
{
	size_t c, i, s;

	(void)state;
	for (c = 0; c < MR_ARRAY_SIZE(cases); c++) {
		struct mr_rec rec = { 0 };
		struct mr_rec_snapshot sn[2];
		struct mr_site_map m;
		char *text = NULL;
		size_t len = 0;
		FILE *f;

		print_message("case %zu: %s\n", c, cases[c].name);
		rec.hdr.kind = MR_MON_TARGET_PROCESS;
		rec.hdr.pid = 42;
		rec.hdr.attrs.sample_us = 100000;
		rec.hdr.attrs.aggr_us = 1000000;
		for (s = 0; s < cases[c].nsnaps; s++) {
			sn[s].time_us = s * 1000000;
			sn[s].regions = (struct mr_rec_region *)cases[c].snaps[s].r;
			for (i = 0; i < MAXR && cases[c].snaps[s].r[i].end; i++)
				;
			sn[s].nr_regions = i;
		}
		rec.snaps = sn;
		rec.nr_snaps = cases[c].nsnaps;
		assert_int_equal(mr_prof_map_parse(cases[c].map, strlen(cases[c].map), "map", &m), 0);
		assert_int_equal(mr_prof_page_rates(&rec, &m), 0);
		mr_prof_attribute(&m, cases[c].thr);
		for (i = 0; i < m.nr_sites; i++) {
			const struct want *w = &cases[c].w[i];

			print_message("  site %u: %s score %.4f share %.4f\n", m.sites[i].id,
				      m.sites[i].hot ? "hot" : "cold", m.sites[i].score,
				      m.sites[i].share_score);
			assert_non_null(w->cls);
			assert_string_equal(m.sites[i].hot ? "hot" : "cold", w->cls);
			assert_true(fabs(m.sites[i].score - w->score) < 1e-3);
			assert_true(fabs(m.sites[i].share_score - w->share) < 1e-3);
		}
		assert_true(i == MAXS || cases[c].w[i].cls == NULL);
		/* the profile lists every site with its class; no build-id -> a comment */
		f = open_memstream(&text, &len);
		assert_int_equal(mr_prof_write(f, &m, cases[c].thr, NULL), 0);
		fclose(f);
		assert_int_equal(strncmp(text, "memreg-profile 1\n", 17), 0);
		assert_non_null(strstr(text, m.sites[0].hot ? "0123abcd 0x1139 hot" : "0123abcd 0x1139 cold"));
		assert_non_null(strstr(text, m.sites[1].hot ? "0123abcd 0x1149 hot" : "0123abcd 0x1149 cold"));
		if (m.nr_sites == 3)
			assert_non_null(strstr(text, "\n# no build-id: - 0x7f0000001000"));
		free(text);
		mr_prof_map_free(&m);
	}
}

static void test_bad_maps(void **state)
{
	static const struct { const char *text, *err; } bad[] = {
		{ "", "map: empty file" },
		{ "memreg-site-map 2\n", "map:1: not a site map of version 1" },
		{ "memreg-site-map 1\npid 1\n", "map: no page_size line" },
		{ "memreg-site-map 1\npage_size 4096\n", "map: no pid line" },
		{ "memreg-site-map 1\npage_size 4000\npid 1\n", "map:2: bad page_size '4000'" },
		{ "memreg-site-map 1\npage_size 4096\npid x\n", "map:3: bad pid 'x'" },
		{ "memreg-site-map 1\npage_size 4096\npid 1\nsite 1 zz 0x1 m\n", "map:4: bad build-id 'zz'" },
		{ "memreg-site-map 1\npage_size 4096\npid 1\nsite 1 ab 12 m\n", "map:4: bad offset '12'" },
		{ "memreg-site-map 1\npage_size 4096\npid 1\nsite 1 ab 0x1\n", "map:4: site line needs" },
		{ "memreg-site-map 1\npage_size 4096\npid 1\nsite 1 ab 0x1 m\nsite 1 ab 0x2 m\n",
		  "map:5: site 1 defined twice" },
		{ "memreg-site-map 1\npage_size 4096\npid 1\nsite 1 ab 0x1 m\npage 0x1000 2:10\n",
		  "map:5: site 2 has no site line" },
		{ "memreg-site-map 1\npage_size 4096\npid 1\nsite 1 ab 0x1 m\npage 0x1001 1:10\n",
		  "map:5: bad page address '0x1001'" },
		{ "memreg-site-map 1\npage_size 4096\npid 1\nsite 1 ab 0x1 m\npage 0x1000 1:4097\n",
		  "map:5: 4097 bytes do not fit" },
		{ "memreg-site-map 1\npage_size 4096\npid 1\nsite 1 ab 0x1 m\npage 0x1000 1x\n",
		  "map:5: '1x' is not <site>:<bytes>" },
		{ "memreg-site-map 1\npage_size 4096\npid 1\nsite 1 ab 0x1 m\npage 0x1000\n",
		  "map:5: page without any site" },
		{ "memreg-site-map 1\npage_size 4096\npid 1\nsite 1 ab 0x1 m\npage 0x1000 1:1\nsite 2 ab 0x2 m\n",
		  "map:6: unexpected 'site' line here" },
		{ "memreg-site-map 1\npage_size 4096\npid 1\nsite 1 ab 0x1 m\npage 0x1000 1:1\npage 0x1000 1:2\n",
		  "map: page 0x1000 listed twice" },
		{ "memreg-site-map 1\npage_size 4096\npid 1\nbogus\n", "map:4: unknown line 'bogus'" },
		{ "memreg-site-map 1\npage_size 4096\npid 1\n\0", "map: not a site map (binary data)" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < MR_ARRAY_SIZE(bad); i++) {
		struct mr_site_map m;
		size_t len = strlen(bad[i].text) + (strstr(bad[i].err, "binary") ? 1 : 0);

		print_message("bad map %zu: %s\n", i, bad[i].err);
		assert_int_not_equal(mr_prof_map_parse(bad[i].text, len, "map", &m), 0);
		assert_non_null(strstr(mr_last_error(), bad[i].err));
		assert_null(strchr(mr_last_error(), '\n'));
	}
}

static void test_no_snapshot(void **state)
{
	static const char map[] = HDR "page 0x10000 1:4096\n";
	struct mr_rec rec = { 0 };
	struct mr_site_map m;

	(void)state;
	rec.hdr.attrs.sample_us = 1;
	rec.hdr.attrs.aggr_us = 1;
	assert_int_equal(mr_prof_map_parse(map, strlen(map), "map", &m), 0);
	assert_int_not_equal(mr_prof_page_rates(&rec, &m), 0);
	assert_non_null(strstr(mr_last_error(), "no snapshot"));
	mr_prof_map_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_attribution),
		cmocka_unit_test(test_bad_maps),
		cmocka_unit_test(test_no_snapshot),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
