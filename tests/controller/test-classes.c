/* The allocator in the loop, live (controller/classes.c with libmemreg.so): the
 * classes page's format round trip, the decision rule on hand-made site maps, the
 * allocator picking up each new generation, a stale start time refused, and, end to
 * end, the hot site's later objects packed apart from the cold site's. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/proc.h"
#include "common/util.h"
#include "controller/classes.h"

/* A classes page as a fresh export holds it (the allocator's header fields). */
static struct mr_alloc_classes *new_page(void)
{
	struct mr_alloc_classes *c = calloc(1, MR_ALLOC_CLASSES_BYTES);

	assert_non_null(c);
	c->magic = MR_ALLOC_CLASSES_MAGIC;
	c->version = MR_ALLOC_CLASSES_VERSION;
	c->header_bytes = sizeof(*c);
	c->entry_bytes = sizeof(struct mr_alloc_class_entry);
	c->capacity = (uint32_t)((MR_ALLOC_CLASSES_BYTES - sizeof(*c)) / sizeof(c->entry[0]));
	c->tracking = 1;
	return c;
}

static void test_page_round_trip(void **state)
{
	struct mr_ctl_site_class in[3] = {
		{ .build_id = "0123456789abcdef0123456789abcdef01234567", .offset = 0x1879,
		  .cls = MR_ALLOC_CLASS_HOT },
		{ .build_id = "0123456789abcdef0123456789abcdef01234567", .offset = 0x1889,
		  .cls = MR_ALLOC_CLASS_COLD },
		{ .build_id = "ff00", .offset = UINT64_MAX, .cls = MR_ALLOC_CLASS_NORMAL },
	}, out[8], *many;
	struct mr_alloc_classes *c = new_page();
	size_t i;

	(void)state;
	assert_int_equal(c->capacity, 1362);
	assert_int_equal(mr_ctl_classes_encode(c, in, 3), 0);
	assert_int_equal(c->generation, 1);
	assert_int_equal(c->seq, 2);		/* even: not being written */
	assert_int_equal(c->count, 3);
	assert_int_equal(c->entry[0].build_id_len, 20);
	assert_int_equal(c->entry[2].build_id_len, 2);
	assert_int_equal(mr_ctl_classes_decode(c, out, 8), 3);
	for (i = 0; i < 3; i++) {
		assert_string_equal(out[i].build_id, in[i].build_id);
		assert_int_equal(out[i].offset, in[i].offset);
		assert_int_equal(out[i].cls, in[i].cls);
	}
	/* a second write: the next generation; fewer entries */
	assert_int_equal(mr_ctl_classes_encode(c, in + 1, 1), 0);
	assert_int_equal(c->generation, 2);
	assert_int_equal(c->seq, 4);
	assert_int_equal(mr_ctl_classes_decode(c, out, 8), 1);
	assert_int_equal(out[0].offset, 0x1889);
	/* refused writes leave the page as it was */
	many = calloc(c->capacity + 1, sizeof(*many));
	assert_non_null(many);
	for (i = 0; i <= c->capacity; i++)
		strcpy(many[i].build_id, "abcd");
	assert_int_equal(mr_ctl_classes_encode(c, many, c->capacity + 1), -E2BIG);
	assert_string_equal(mr_last_error(), "1363 site classes do not fit the classes page (1362)");
	strcpy(in[0].build_id, "xyz");
	assert_int_equal(mr_ctl_classes_encode(c, in, 2), -EINVAL);
	assert_string_equal(mr_last_error(), "site 0: bad build-id 'xyz'");
	assert_int_equal(c->generation, 2);
	assert_int_equal(c->seq, 4);
	assert_int_equal(c->count, 1);
	/* a writer that died inside its write left seq odd: the next one goes on */
	c->seq = 5;
	assert_int_equal(mr_ctl_classes_encode(c, in + 1, 2), 0);
	assert_int_equal(c->seq, 6);
	assert_int_equal(c->generation, 3);
	/* a bad count is refused on reading */
	c->count = c->capacity + 1;
	assert_int_equal(mr_ctl_classes_decode(c, out, 8), -EINVAL);
	free(many);
	free(c);
}

/*
 * Site maps for the rule. Site 1 (a, 10% of the bytes) and site 2 (b, 90%):
 *   round 1, interleaved:  page 0x1000 [a 400|b 3600] accessed ... x 4 pages, all accessed
 *      -> both score alike: both hot; b, the larger, entangled, is put apart (cold)
 *   again interleaved (objects from before the change): b stays apart, nothing changes
 *   round 2, apart:        page 0x10000 [a 4000] accessed, page 0x20000.. [b 4000] x 9, idle
 *      -> a hot, b cold, both measured alone: nothing changes
 */
static const char map_mixed[] =
	"memreg-site-map 1\npage_size 4096\npid 1\n"
	"site 1 00112233445566778899aabbccddeeff00112233 0x1879 /prog\n"
	"site 2 00112233445566778899aabbccddeeff00112233 0x1889 /prog\n"
	"page 0x1000 1:400 2:3600\npage 0x2000 1:400 2:3600\n"
	"page 0x3000 1:400 2:3600\npage 0x4000 1:400 2:3600\n";
static const char map_apart[] =
	"memreg-site-map 1\npage_size 4096\npid 1\n"
	"site 1 00112233445566778899aabbccddeeff00112233 0x1879 /prog\n"
	"site 2 00112233445566778899aabbccddeeff00112233 0x1889 /prog\n"
	"page 0x10000 1:4000\npage 0x20000 2:4000\npage 0x21000 2:4000\npage 0x22000 2:4000\n"
	"page 0x23000 2:4000\npage 0x24000 2:4000\npage 0x25000 2:4000\npage 0x26000 2:4000\n"
	"page 0x27000 2:4000\npage 0x28000 2:4000\n";

static void attributed(const char *text, double (*rate)(uint64_t addr), struct mr_site_map *m)
{
	size_t i;

	assert_int_equal(mr_prof_map_parse(text, strlen(text), "map", m), 0);
	for (i = 0; i < m->nr_pages; i++)
		m->pages[i].rate = rate(m->pages[i].addr);
	mr_prof_attribute(m, MR_PROF_DEFAULT_HOT_THRESHOLD);
}

static double all_accessed(uint64_t addr)
{
	(void)addr;
	return 0.8;
}

static double low_accessed(uint64_t addr)
{
	return addr < 0x20000 ? 0.8 : 0;
}

static void test_decide(void **state)
{
	struct mr_ctl_classes c = { .fd = -1 };
	struct mr_site_map m;

	(void)state;
	attributed(map_mixed, all_accessed, &m);
	assert_int_equal(mr_ctl_classes_decide(&c, &m), 2);
	mr_prof_map_free(&m);
	assert_int_equal(c.nr_sites, 2);
	assert_int_equal(c.sites[0].offset, 0x1879);
	assert_int_equal(c.sites[0].cls, MR_ALLOC_CLASS_HOT);
	assert_false(c.sites[0].probed);
	assert_int_equal(c.sites[1].cls, MR_ALLOC_CLASS_COLD);
	assert_true(c.sites[1].probed);
	assert_true(c.settling);

	/* the next map still mixed (objects from before the change): b stays apart,
	 * a stays hot, nothing else is put apart */
	attributed(map_mixed, all_accessed, &m);
	assert_int_equal(mr_ctl_classes_decide(&c, &m), 0);
	mr_prof_map_free(&m);
	assert_int_equal(c.sites[0].cls, MR_ALLOC_CLASS_HOT);
	assert_int_equal(c.sites[1].cls, MR_ALLOC_CLASS_COLD);
	assert_false(c.settling);

	attributed(map_apart, low_accessed, &m);
	assert_int_equal(mr_ctl_classes_decide(&c, &m), 0);
	assert_int_equal(c.sites[0].cls, MR_ALLOC_CLASS_HOT);
	assert_int_equal(c.sites[1].cls, MR_ALLOC_CLASS_COLD);
	mr_prof_map_free(&m);

	/* the other truth: b hot, a cold, once apart -> they swap, after two rounds
	 * that say so (one round's rates can be a transient of the monitor) */
	attributed(map_apart, all_accessed, &m);
	m.pages[0].rate = 0;
	mr_prof_attribute(&m, MR_PROF_DEFAULT_HOT_THRESHOLD);
	assert_int_equal(mr_ctl_classes_decide(&c, &m), 0);
	assert_int_equal(c.sites[0].cls, MR_ALLOC_CLASS_HOT);
	assert_true(c.sites[0].pending);
	assert_int_equal(c.sites[1].cls, MR_ALLOC_CLASS_COLD);
	assert_true(c.sites[1].pending);
	assert_int_equal(mr_ctl_classes_decide(&c, &m), 2);
	assert_int_equal(c.sites[0].cls, MR_ALLOC_CLASS_COLD);
	assert_int_equal(c.sites[1].cls, MR_ALLOC_CLASS_HOT);
	assert_false(c.sites[0].pending);
	assert_false(c.sites[1].pending);
	/* a round back to the old truth between two is only a transient: nothing changes */
	mr_prof_map_free(&m);
	attributed(map_apart, low_accessed, &m);
	assert_int_equal(mr_ctl_classes_decide(&c, &m), 0);
	assert_true(c.sites[0].pending);
	mr_prof_map_free(&m);
	attributed(map_apart, all_accessed, &m);
	m.pages[0].rate = 0;
	mr_prof_attribute(&m, MR_PROF_DEFAULT_HOT_THRESHOLD);
	assert_int_equal(mr_ctl_classes_decide(&c, &m), 0);
	assert_false(c.sites[0].pending);
	assert_int_equal(c.sites[0].cls, MR_ALLOC_CLASS_COLD);
	assert_int_equal(c.sites[1].cls, MR_ALLOC_CLASS_HOT);
	mr_prof_map_free(&m);
	mr_ctl_classes_close(&c);
}

/*
 * Four sites, each on pages of its own (measured alone), as the lab's workload has
 * them (units of 4000 bytes):
 *   ring R (site 1): 8 pages at 0.9                -> measure 0.9,  weight 8
 *   hot  H (site 2): 2 pages at 0.3                -> measure 0.3,  weight 2
 *   cold C (site 3): 10 pages, 2 of them being rewritten as its objects are
 *                    replaced (0.2), 8 idle        -> measure 0.04, weight 10
 *   idle I (site 4): 4 pages at 0                  -> idle: cold, not clustered
 * 2-means on ln(measure) (R -0.1054, H -1.2040, C -3.2189), byte-weighted:
 *   {C} | {H, R}: high mean (2 x -1.2040 + 8 x -0.1054) / 10 = -0.3251,
 *                 SSE 2 x 0.8789^2 + 8 x 0.2197^2 = 1.931
 *   {C, H} | {R}: low mean (10 x -3.2189 + 2 x -1.2040) / 12 = -2.8831,
 *                 SSE 10 x 0.3358^2 + 2 x 1.6791^2 = 6.766
 * -> {C} | {H, R}, means e^(-0.3251 + 3.2189) = 18.1 apart (>= 2): H and R hot from
 * 0.3, C and I cold. (A share of the highest measure, the old rule, put H with C:
 * 0.3 < 0.75 x 0.9.)
 */
static const char map_three[] =
	"memreg-site-map 1\npage_size 4096\npid 1\n"
	"site 1 00112233445566778899aabbccddeeff00112233 0x1258 /prog\n"
	"site 2 00112233445566778899aabbccddeeff00112233 0x1919 /prog\n"
	"site 3 00112233445566778899aabbccddeeff00112233 0x1929 /prog\n"
	"site 4 00112233445566778899aabbccddeeff00112233 0x1267 /prog\n"
	"page 0x10000 1:4000\npage 0x11000 1:4000\npage 0x12000 1:4000\npage 0x13000 1:4000\n"
	"page 0x14000 1:4000\npage 0x15000 1:4000\npage 0x16000 1:4000\npage 0x17000 1:4000\n"
	"page 0x20000 2:4000\npage 0x21000 2:4000\n"
	"page 0x30000 3:4000\npage 0x31000 3:4000\npage 0x32000 3:4000\npage 0x33000 3:4000\n"
	"page 0x34000 3:4000\npage 0x35000 3:4000\npage 0x36000 3:4000\npage 0x37000 3:4000\n"
	"page 0x38000 3:4000\npage 0x39000 3:4000\n"
	"page 0x40000 4:4000\npage 0x41000 4:4000\npage 0x42000 4:4000\npage 0x43000 4:4000\n";

static double three_rates(uint64_t addr)
{
	if (addr < 0x20000)
		return 0.9;
	if (addr < 0x30000)
		return 0.3;
	if (addr == 0x38000 || addr == 0x39000)
		return 0.2;
	return 0;
}

static void test_decide_clusters(void **state)
{
	struct mr_ctl_classes c = { .fd = -1 };
	struct mr_site_map m;
	size_t i;

	(void)state;
	attributed(map_three, three_rates, &m);
	assert_int_equal(mr_ctl_classes_decide(&c, &m), 4);	/* all were "normal" */
	mr_prof_map_free(&m);
	assert_int_equal(c.nr_sites, 4);
	for (i = 0; i < 4; i++)
		assert_true(c.sites[i].alone);
	assert_int_equal(c.sites[0].offset, 0x1258);
	assert_true(c.sites[0].score > 0.8999 && c.sites[0].score < 0.9001);
	assert_true(c.sites[1].score > 0.2999 && c.sites[1].score < 0.3001);
	assert_true(c.sites[2].score > 0.0399 && c.sites[2].score < 0.0401);
	assert_true(c.sites[3].score == 0);
	assert_true(c.cut > 0.2999 && c.cut < 0.3001);
	assert_int_equal(c.sites[0].cls, MR_ALLOC_CLASS_HOT);
	assert_int_equal(c.sites[1].cls, MR_ALLOC_CLASS_HOT);
	assert_int_equal(c.sites[2].cls, MR_ALLOC_CLASS_COLD);
	assert_int_equal(c.sites[3].cls, MR_ALLOC_CLASS_COLD);
	mr_ctl_classes_close(&c);
}

/* One site, accessed a little (0.05): nothing to compare it with, it is hot. Then
 * everything idle: cold, after the second round that says so. */
static const char map_one[] =
	"memreg-site-map 1\npage_size 4096\npid 1\n"
	"site 2 00112233445566778899aabbccddeeff00112233 0x1919 /prog\n"
	"page 0x20000 2:4000\npage 0x21000 2:4000\n";

static double rate_005(uint64_t addr)
{
	(void)addr;
	return 0.05;
}

static double rate_0(uint64_t addr)
{
	(void)addr;
	return 0;
}

static void test_decide_one_site(void **state)
{
	struct mr_ctl_classes c = { .fd = -1 };
	struct mr_site_map m;

	(void)state;
	attributed(map_one, rate_005, &m);
	assert_int_equal(mr_ctl_classes_decide(&c, &m), 1);
	mr_prof_map_free(&m);
	assert_int_equal(c.sites[0].cls, MR_ALLOC_CLASS_HOT);
	assert_true(c.cut == 0);	/* one cluster */
	attributed(map_one, rate_0, &m);
	assert_int_equal(mr_ctl_classes_decide(&c, &m), 0);
	assert_true(c.sites[0].pending);
	assert_int_equal(mr_ctl_classes_decide(&c, &m), 1);
	mr_prof_map_free(&m);
	assert_int_equal(c.sites[0].cls, MR_ALLOC_CLASS_COLD);
	mr_ctl_classes_close(&c);
}

/* All idle, interleaved or not: every site cold at once (from "normal"), no probe. */
static void test_decide_all_idle(void **state)
{
	struct mr_ctl_classes c = { .fd = -1 };
	struct mr_site_map m;
	size_t i;

	(void)state;
	attributed(map_three, rate_0, &m);
	assert_int_equal(mr_ctl_classes_decide(&c, &m), 4);
	mr_prof_map_free(&m);
	attributed(map_mixed, rate_0, &m);
	assert_int_equal(mr_ctl_classes_decide(&c, &m), 2);
	mr_prof_map_free(&m);
	assert_int_equal(c.nr_sites, 6);
	for (i = 0; i < c.nr_sites; i++) {
		assert_int_equal(c.sites[i].cls, MR_ALLOC_CLASS_COLD);
		assert_false(c.sites[i].probed);
	}
	assert_false(c.settling);
	mr_ctl_classes_close(&c);
}

/*
 * The round after a probe, as a lab run had it: a (site 1) hot and still entangled
 * (3000 bytes on a page of its own, its new objects, found idle: the monitor did not
 * cover that range yet; 4000 on pages shared with b), b (site 2) put apart, its new
 * objects on pages of its own, accessed, still entangled by its old ones. The attribution gives a a score near 0: a is not measured alone,
 * so that says nothing of its own accesses, and it stays hot (the old rule made it
 * cold, and both sites went to the cold regions, interleaved again for good).
 */
static const char map_after_probe[] =
	"memreg-site-map 1\npage_size 4096\npid 1\n"
	"site 1 00112233445566778899aabbccddeeff00112233 0x1879 /prog\n"
	"site 2 00112233445566778899aabbccddeeff00112233 0x1889 /prog\n"
	"page 0x1000 1:1000 2:3000\npage 0x2000 1:1000 2:3000\n"
	"page 0x3000 1:1000 2:3000\npage 0x4000 1:1000 2:3000\n"
	"page 0x10000 1:3000\n"
	"page 0x20000 2:4000\npage 0x21000 2:4000\n";

static double after_probe_rates(uint64_t addr)
{
	return addr == 0x10000 ? 0 : 0.8;
}

static void test_decide_entangled_stays(void **state)
{
	struct mr_ctl_classes c = { .fd = -1 };
	struct mr_site_map m;

	(void)state;
	attributed(map_mixed, all_accessed, &m);
	assert_int_equal(mr_ctl_classes_decide(&c, &m), 2);
	mr_prof_map_free(&m);
	assert_int_equal(c.sites[0].cls, MR_ALLOC_CLASS_HOT);
	assert_true(c.sites[1].probed);
	/* two rounds of it: not even a change on its way */
	attributed(map_after_probe, after_probe_rates, &m);
	assert_int_equal(mr_ctl_classes_decide(&c, &m), 0);
	assert_false(c.sites[0].pending);
	assert_int_equal(mr_ctl_classes_decide(&c, &m), 0);
	mr_prof_map_free(&m);
	assert_false(c.sites[0].alone);
	assert_true(c.sites[0].score < 0.3);
	assert_int_equal(c.sites[0].cls, MR_ALLOC_CLASS_HOT);
	assert_false(c.sites[0].pending);
	assert_int_equal(c.sites[1].cls, MR_ALLOC_CLASS_COLD);
	mr_ctl_classes_close(&c);
}

/* Site 1 measured alone (its own page, 0x10000); sites 3 and 4 share two pages,
 * entangled. The pages' rates are set per test. */
static const char map_bar[] =
	"memreg-site-map 1\npage_size 4096\npid 1\n"
	"site 1 00112233445566778899aabbccddeeff00112233 0x1879 /prog\n"
	"site 3 00112233445566778899aabbccddeeff00112233 0x1919 /prog\n"
	"site 4 00112233445566778899aabbccddeeff00112233 0x1929 /prog\n"
	"page 0x10000 1:4000\npage 0x30000 3:2000 4:2000\npage 0x31000 3:2000 4:2000\n";

static double bar_rates(uint64_t addr)
{
	return addr < 0x30000 ? 0.46 : 1.0;
}

/* A hot site measured alone keeps its class against an entangled neighbour's
 * higher score (its page-mates' rate): the bar for a site measured alone is the
 * highest measure of the sites measured alone (a lab run lost its hot site so). */
static void test_decide_entangled_bar(void **state)
{
	struct mr_ctl_classes c = { .fd = -1 };
	struct mr_site_map m;

	(void)state;
	attributed(map_apart, low_accessed, &m);	/* site 1 alone and hot */
	mr_ctl_classes_decide(&c, &m);
	mr_prof_map_free(&m);
	assert_int_equal(c.sites[0].cls, MR_ALLOC_CLASS_HOT);
	attributed(map_bar, bar_rates, &m);
	mr_ctl_classes_decide(&c, &m);
	mr_prof_map_free(&m);
	assert_int_equal(c.sites[0].offset, 0x1879);
	assert_true(c.sites[0].alone);
	assert_int_equal(c.sites[0].cls, MR_ALLOC_CLASS_HOT);
	mr_ctl_classes_close(&c);
}

/* ---- with a live process under libmemreg.so ---- */

struct child {
	pid_t pid;
	FILE *out;
	uint64_t site_a, site_b;	/* function offsets in the program */
};

static int start_child(struct child *ch, const char *dur, bool track)
{
	const char *top = getenv("top_builddir");
	char lib[4096], prog[4096], line[256];
	int fds[2];

	if (!top)
		top = ".";
	snprintf(lib, sizeof(lib), "%s/.libs/libmemreg.so", top);
	snprintf(prog, sizeof(prog), "%s/tests/lab/progs/mr-live-sites", top);
	if (access(lib, R_OK) || access(prog, X_OK))
		return -1;
	assert_int_equal(pipe(fds), 0);
	ch->pid = fork();
	assert_true(ch->pid >= 0);
	if (ch->pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		setenv("LD_PRELOAD", lib, 1);
		setenv("MEMREG_EXPORT_STATS", "1", 1);
		setenv("MEMREG_REGION_SIZE", "1M", 1);
		if (track)
			setenv("MEMREG_TRACK_SITES", "1", 1);
		execl(prog, prog, "-d", dur, "-l", "300", "-m", "4", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	ch->out = fdopen(fds[0], "r");
	assert_non_null(ch->out);
	assert_non_null(fgets(line, sizeof(line), ch->out));
	assert_int_equal(sscanf(line, "sites a=0x%" SCNx64 " b=0x%" SCNx64, &ch->site_a,
				&ch->site_b), 2);
	assert_non_null(fgets(line, sizeof(line), ch->out));
	assert_memory_equal(line, "ready ", 6);
	return 0;
}

/* SIGTERM (@term) or its own end, then the hot-set inflation it printed. */
static double stop_child(struct child *ch, bool term)
{
	char line[256];
	double infl = -1;
	int ws;

	if (term)
		kill(ch->pid, SIGTERM);
	while (fgets(line, sizeof(line), ch->out))
		if (strstr(line, "inflation="))
			infl = strtod(strstr(line, "inflation=") + 10, NULL);
	fclose(ch->out);
	assert_int_equal(waitpid(ch->pid, &ws, 0), ch->pid);
	assert_true(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
	return infl;
}

/* Wait (30 s at most: a liveness bound, not a timing claim) for @done. */
static bool wait_for(bool (*done)(struct mr_ctl_classes *c), struct mr_ctl_classes *c)
{
	int i;

	for (i = 0; i < 3000; i++) {
		if (done(c))
			return true;
		usleep(10000);
	}
	return false;
}

static bool applied(struct mr_ctl_classes *c)
{
	return __atomic_load_n(&c->page->applied_generation, __ATOMIC_ACQUIRE) ==
	       c->page->generation;
}

static struct mr_site_map got_map;

static bool map_ready(struct mr_ctl_classes *c)
{
	int err = mr_ctl_classes_map_read(c, &got_map);

	if (err == -EAGAIN)
		return false;
	assert_int_equal(err, 0);
	return true;
}

static void test_live_generation(void **state)
{
	struct mr_ctl_classes c = { .fd = -1, .apply = true };
	struct mr_ctl_site_class sites[2] = { { .cls = MR_ALLOC_CLASS_HOT },
					      { .cls = MR_ALLOC_CLASS_COLD } };
	struct child ch;
	size_t i, found = 0;
	int tries;
	double before, after;

	(void)state;
	/* without classes: the hot objects are spread over ~every page */
	if (start_child(&ch, "1", true))
		skip();
	before = stop_child(&ch, false);
	assert_true(before > 3);

	assert_int_equal(start_child(&ch, "600", true), 0);
	assert_int_equal(mr_ctl_classes_open(&c, ch.pid, 0), 0);
	/* the map answers the first allocation after the request: until the loop's
	 * two sites have objects in it, ask again */
	for (tries = 0; tries < 100 && found != 3; tries++) {
		usleep(100000);
		assert_int_equal(mr_ctl_classes_map_request(&c), 0);
		assert_true(wait_for(map_ready, &c));
		assert_int_equal(got_map.pid, ch.pid);
		for (i = 0; i < got_map.nr_sites; i++) {
			const struct mr_prof_site *s = &got_map.sites[i];
			int k = s->offset - ch.site_a < 16 ? 0 : s->offset - ch.site_b < 16 ? 1 : -1;

			if (k < 0 || strcmp(s->module, "(main program)") != 0 || !s->bytes)
				continue;
			strcpy(sites[k].build_id, s->build_id);
			sites[k].offset = s->offset;
			found |= 1u << k;
		}
		mr_prof_map_free(&got_map);
	}
	assert_int_equal(found, 3);

	assert_int_equal(mr_ctl_classes_write(&c, sites, 2), 0);
	assert_int_equal(c.page->generation, 1);
	assert_true(wait_for(applied, &c));
	assert_int_equal(c.page->applied_sites, 2);
	/* a second generation is picked up too */
	assert_int_equal(mr_ctl_classes_write(&c, sites, 2), 0);
	assert_int_equal(c.page->generation, 2);
	assert_true(wait_for(applied, &c));
	assert_int_equal(c.page->applied_generation, 2);
	/* every object live from now on was born after the classes (lifetime 300 ms) */
	usleep(1000000);
	mr_ctl_classes_close(&c);
	after = stop_child(&ch, true);
	print_message("hot-set inflation: %.2f without classes, %.2f with\n", before, after);
	/* packed: hot slabs of their own (holes left by frees keep it above 1) */
	assert_true(after <= 2.0);
}

static void test_stale_starttime(void **state)
{
	struct mr_ctl_classes c = { .fd = -1, .apply = true };
	struct mr_ctl_site_class one = { .build_id = "abcd", .cls = MR_ALLOC_CLASS_HOT };
	struct child ch;
	uint64_t start;
	char want[160];

	(void)state;
	if (start_child(&ch, "600", true))
		skip();
	assert_int_equal(mr_proc_starttime(ch.pid, &start), 0);
	/* a pid that is another process now: refused at open and at each write */
	assert_int_equal(mr_ctl_classes_open(&c, ch.pid, start + 1), -ESRCH);
	snprintf(want, sizeof(want), "pid %d is another process now (started at tick %" PRIu64
		 ", not %" PRIu64 ")", (int)ch.pid, start, start + 1);
	assert_string_equal(mr_last_error(), want);
	assert_int_equal(mr_ctl_classes_open(&c, ch.pid, start), 0);
	c.starttime_ticks = start + 1;
	assert_int_equal(mr_ctl_classes_write(&c, &one, 1), -ESRCH);
	assert_string_equal(mr_last_error(), want);
	assert_int_equal(mr_ctl_classes_map_request(&c), -ESRCH);
	assert_int_equal(c.page->generation, 0);
	assert_int_equal(c.page->map_request, 0);
	/* and without consent, nothing is written either */
	c.starttime_ticks = start;
	c.apply = false;
	assert_int_equal(mr_ctl_classes_write(&c, &one, 1), -EPERM);
	assert_int_equal(c.page->generation, 0);
	mr_ctl_classes_close(&c);
	stop_child(&ch, true);

	/* a process that does not track sites has a page it never reads: refused */
	assert_int_equal(start_child(&ch, "600", false), 0);
	assert_int_equal(mr_ctl_classes_open(&c, ch.pid, 0), -EOPNOTSUPP);
	stop_child(&ch, true);
}

/*
 * After the probe, all measured alone (units: pages of 4000 bytes):
 *   a    (site 1, kept hot):  1 page at 0.9       ln -0.105
 *   b    (site 2, put apart): 8 pages at B        ln(0.3) = -1.204
 *   ring (site 5):            6 pages at 0.45     ln -0.799
 * 2-means: {b} | {ring, a}: high mean (6 x -0.799 + -0.105) / 7 = -0.700, SSE 0.413;
 * {b, ring} | {a}: low mean -1.030, SSE 0.562. Best {b} | {ring, a}, but its means are
 * e^(-0.700 + 1.204) = 1.66 apart (< 2): one cluster, all hot. b was put apart from
 * a, though, and 0.3 is under 3/4 of a's 0.9 (0.675): b stays cold; so at B = 0.6
 * (the lab: the churned cold site at 0.43-0.62 of the hot one, on huge pages). At
 * B = 0.7 (more than 3/4 of a's) the probe says b is as hot as a: hot, after two
 * rounds. In the round right after the probe there is no answer yet: b keeps its
 * class at any B (the lab: 0.4-1.5 of the hot site in that round); and none while a
 * shares its pages (map_probe_mate_mixed: a entangled with the ring).
 */
static const char map_probe_after[] =
	"memreg-site-map 1\npage_size 4096\npid 1\n"
	"site 1 00112233445566778899aabbccddeeff00112233 0x1879 /prog\n"
	"site 2 00112233445566778899aabbccddeeff00112233 0x1889 /prog\n"
	"site 5 00112233445566778899aabbccddeeff00112233 0x1258 /prog\n"
	"page 0x10000 1:4000\n"
	"page 0x20000 2:4000\npage 0x21000 2:4000\npage 0x22000 2:4000\npage 0x23000 2:4000\n"
	"page 0x24000 2:4000\npage 0x25000 2:4000\npage 0x26000 2:4000\npage 0x27000 2:4000\n"
	"page 0x50000 5:4000\npage 0x51000 5:4000\npage 0x52000 5:4000\npage 0x53000 5:4000\n"
	"page 0x54000 5:4000\npage 0x55000 5:4000\n";

static const char map_probe_mate_mixed[] =
	"memreg-site-map 1\npage_size 4096\npid 1\n"
	"site 1 00112233445566778899aabbccddeeff00112233 0x1879 /prog\n"
	"site 2 00112233445566778899aabbccddeeff00112233 0x1889 /prog\n"
	"site 5 00112233445566778899aabbccddeeff00112233 0x1258 /prog\n"
	"page 0x10000 1:2000 5:2000\n"
	"page 0x20000 2:4000\npage 0x21000 2:4000\npage 0x22000 2:4000\npage 0x23000 2:4000\n"
	"page 0x24000 2:4000\npage 0x25000 2:4000\npage 0x26000 2:4000\npage 0x27000 2:4000\n"
	"page 0x50000 5:4000\npage 0x51000 5:4000\npage 0x52000 5:4000\npage 0x53000 5:4000\n"
	"page 0x54000 5:4000\npage 0x55000 5:4000\n";

static double probe_b_rate = 0.3;

static double probe_after_rates(uint64_t addr)
{
	return addr < 0x20000 ? 0.9 : addr < 0x50000 ? probe_b_rate : 0.45;
}

static void test_decide_probe_group(void **state)
{
	struct mr_ctl_classes c = { .fd = -1 };
	struct mr_site_map m;
	int round;

	(void)state;
	attributed(map_mixed, all_accessed, &m);
	assert_int_equal(mr_ctl_classes_decide(&c, &m), 2);
	mr_prof_map_free(&m);
	assert_true(c.sites[1].probed);
	assert_int_equal(c.sites[1].probe_group, 1);
	assert_int_equal(c.sites[0].probe_group, 1);	/* a: the site b was put apart from */
	/* the round right after the probe: no answer, even at B close to a's */
	probe_b_rate = 0.8;
	attributed(map_probe_after, probe_after_rates, &m);
	assert_int_equal(mr_ctl_classes_decide(&c, &m), 1);	/* the ring, new: hot */
	mr_prof_map_free(&m);
	assert_int_equal(c.sites[1].cls, MR_ALLOC_CLASS_COLD);
	assert_false(c.sites[1].pending);
	for (round = 0; round < 4; round++) {
		probe_b_rate = round < 2 ? 0.3 : 0.6;
		attributed(map_probe_after, probe_after_rates, &m);
		mr_ctl_classes_decide(&c, &m);
		mr_prof_map_free(&m);
		assert_true(c.cut == 0);	/* one cluster */
		assert_int_equal(c.nr_sites, 3);
		assert_int_equal(c.sites[0].cls, MR_ALLOC_CLASS_HOT);
		assert_int_equal(c.sites[1].cls, MR_ALLOC_CLASS_COLD);
		assert_false(c.sites[1].pending);
		assert_int_equal(c.sites[2].cls, MR_ALLOC_CLASS_HOT);
	}
	/* a shares its page with the ring: b's measure has nothing to be held against */
	probe_b_rate = 0.8;
	for (round = 0; round < 2; round++) {
		attributed(map_probe_mate_mixed, probe_after_rates, &m);
		mr_ctl_classes_decide(&c, &m);
		mr_prof_map_free(&m);
		assert_false(c.sites[0].alone);
		assert_int_equal(c.sites[0].cls, MR_ALLOC_CLASS_HOT);
		assert_int_equal(c.sites[1].cls, MR_ALLOC_CLASS_COLD);
		assert_false(c.sites[1].pending);
	}
	probe_b_rate = 0.7;
	attributed(map_probe_after, probe_after_rates, &m);
	assert_int_equal(mr_ctl_classes_decide(&c, &m), 0);
	assert_true(c.sites[1].pending);
	assert_int_equal(mr_ctl_classes_decide(&c, &m), 1);
	mr_prof_map_free(&m);
	assert_int_equal(c.sites[1].cls, MR_ALLOC_CLASS_HOT);
	mr_ctl_classes_close(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_page_round_trip),
		cmocka_unit_test(test_decide),
		cmocka_unit_test(test_decide_entangled_bar),
		cmocka_unit_test(test_decide_clusters),
		cmocka_unit_test(test_decide_one_site),
		cmocka_unit_test(test_decide_all_idle),
		cmocka_unit_test(test_decide_entangled_stays),
		cmocka_unit_test(test_decide_probe_group),
		cmocka_unit_test(test_live_generation),
		cmocka_unit_test(test_stale_starttime),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
