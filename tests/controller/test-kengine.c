/* The kernel engine (controller/kengine.c) against a fake DAMON sysfs tree and a fake
 * cgroup v2 hierarchy under a test root: the files written for the three
 * example schemes, the probing refusals (a kernel without migrate_* / target_nid,
 * a filter type it does not take), a whole run whose statistics come from the
 * kernel's files, and a teardown that leaves nothing: kdamond off, nr_kdamonds 0,
 * no ownership marker, the process back in its cgroup, memreg's cgroup gone.
 * And both engines choose the same regions for one replayed pattern: the user
 * engine's choice (engine.c) against "does the kernel scheme as written to sysfs
 * match this region" (the values read back from the fake tree). */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "common/root.h"
#include "common/util.h"
#include "controller/action.h"
#include "controller/engine.h"
#include "controller/kengine.h"
#include "controller/run.h"
#include "monitor/damon.h"
#include "monitor/monitor.h"

static char root[] = "/tmp/mr-test-kengine-XXXXXX";
#define MY_START 4242000u
#define KDAMOND_PID 4300
#define TARGET_PID 4400
#define KD "/sys/kernel/mm/damon/admin/kdamonds"
#define SCH KD "/0/contexts/0/schemes"
#define M (1ull << 20)

/* ---------------------------------------------------------------- the fixture */

static void put(const char *rel, const char *content)
{
	char p[512], *s;
	FILE *f;

	snprintf(p, sizeof(p), "%s%s", root, rel);
	for (s = p + strlen(root) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		mkdir(p, 0755);
		*s = '/';
	}
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(content, f);
	fclose(f);
}

static void rm_rf(const char *rel)
{
	char cmd[700];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s%s'", root, rel);
	assert_int_equal(system(cmd), 0);
}

static bool exists(const char *rel)
{
	char p[512];

	snprintf(p, sizeof(p), "%s%s", root, rel);
	return access(p, F_OK) == 0;
}

static const char *slurp(const char *rel)
{
	static char buf[4096];
	char p[512];
	size_t n;
	FILE *f;

	snprintf(p, sizeof(p), "%s%s", root, rel);
	f = fopen(p, "r");
	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void put_stat(long pid, const char *comm, uint64_t start)
{
	char rel[64], text[256];

	snprintf(rel, sizeof(rel), "/proc/%ld/stat", pid);
	snprintf(text, sizeof(text), "%ld (%s) S 1 1 1 0 -1 0 0 0 0 0 7 3 0 0 20 0 1 0 %" PRIu64
		 " 0 0\n", pid, comm, start);
	put(rel, text);
}

/* The fake kernel's version: which actions and filter types it takes, whether it has
 * target_nid (6.11+) and the filters' allow file (6.14+). */
static struct {
	const char *actions;
	const char *filter_types;
	bool has_target_nid;
	bool has_allow;
} kernel;

static const struct {
	const char *actions, *filter_types;
} v6_12 = { " willneed cold pageout hugepage nohugepage lru_prio lru_deprio migrate_hot "
	    "migrate_cold stat ", " anon memcg young addr target " },
  v6_10 = { " willneed cold pageout hugepage nohugepage lru_prio lru_deprio stat ",
	    " anon memcg young addr target " };

static char writes[1024][200];
static unsigned nr_writes;
static unsigned nr_schemes_made;

static void record(const char *fmt, ...) MR_PRINTF(1, 2);
static void record(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (nr_writes < MR_ARRAY_SIZE(writes))
		vsnprintf(writes[nr_writes++], sizeof(writes[0]), fmt, ap);
	va_end(ap);
}

static bool word_in(const char *list, const char *w)
{
	char pad[64];

	snprintf(pad, sizeof(pad), " %s ", w);
	return strstr(list, pad) != NULL;
}

/* stats of every scheme grow by one tried and one applied region per update */
static void bump_stats(void)
{
	unsigned i;
	char rel[200], num[32];

	for (i = 0; i < nr_schemes_made; i++) {
		static const char *const f[] = { "nr_tried", "sz_tried", "nr_applied", "sz_applied",
						 "qt_exceeds" };
		static const uint64_t inc[] = { 2, 3 * M, 1, 2 * M, 1 };
		size_t k;

		for (k = 0; k < 5; k++) {
			uint64_t v;

			snprintf(rel, sizeof(rel), SCH "/%u/stats/%s", i, f[k]);
			v = strtoull(slurp(rel), NULL, 10) + inc[k];
			snprintf(num, sizeof(num), "%" PRIu64 "\n", v);
			put(rel, num);
		}
	}
}

/* A write the fake kernel refuses: -EINVAL, as the real write would. */
static int refuse(const char *path, const char *s)
{
	return mr_error(-EINVAL, "%s: write \"%s\": %s", path, s, strerror(EINVAL));
}

static int fake_kernel(const char *path, const char *s)
{
	char rel[240];
	unsigned kd, i, n, idx, fi;
	int off = 0;

	if (!strcmp(path, KD "/nr_kdamonds")) {
		n = (unsigned)atoi(s);
		rm_rf(KD "/0");
		for (i = 0; i < n; i++) {
			put(mr_pathf(rel, sizeof(rel), KD "/%u/state", i), "off\n");
			put(mr_pathf(rel, sizeof(rel), KD "/%u/pid", i), "-1\n");
			put(mr_pathf(rel, sizeof(rel), KD "/%u/contexts/nr_contexts", i), "0\n");
		}
		put(path, s);
		return 0;
	}
	off = 0;
	if (sscanf(path, KD "/%u/state%n", &kd, &off) == 1 && off && !path[off]) {
		char state[16];

		snprintf(state, sizeof(state), "%s", slurp(path));
		if (!strcmp(s, "on")) {
			put(path, "on\n");
			put(mr_pathf(rel, sizeof(rel), KD "/%u/pid", kd), "4300\n");
			put("/proc/4300/comm", "kdamond.0\n");
			put_stat(KDAMOND_PID, "kdamond.0", 100);
		} else if (!strcmp(s, "off")) {
			put(path, "off\n");
			put(mr_pathf(rel, sizeof(rel), KD "/%u/pid", kd), "-1\n");
			rm_rf("/proc/4300");
		} else if (!strcmp(s, "update_schemes_stats")) {
			if (strncmp(state, "on", 2))
				return refuse(path, s);
			bump_stats();
		} else {
			return refuse(path, s);
		}
		return 0;
	}
	off = 0;
	if (sscanf(path, KD "/%u/contexts/nr_contexts%n", &kd, &off) == 1 && off && !path[off] &&
	    atoi(s) == 1) {
		put(mr_pathf(rel, sizeof(rel), KD "/%u/contexts/0/avail_operations", kd),
		    "vaddr\nfvaddr\npaddr\n");
		put(mr_pathf(rel, sizeof(rel), KD "/%u/contexts/0/operations", kd), "vaddr\n");
		put(mr_pathf(rel, sizeof(rel), KD "/%u/contexts/0/schemes/nr_schemes", kd), "0\n");
		put(path, s);
		return 0;
	}
	if (!strcmp(path, SCH "/nr_schemes")) {
		nr_schemes_made = n = (unsigned)atoi(s);
		for (i = 0; i < n; i++) {
			static const char *const st[] = { "nr_tried", "sz_tried", "nr_applied",
							  "sz_applied", "qt_exceeds" };
			size_t k;

			put(mr_pathf(rel, sizeof(rel), SCH "/%u/action", i), "stat\n");
			put(mr_pathf(rel, sizeof(rel), SCH "/%u/apply_interval_us", i), "0\n");
			put(mr_pathf(rel, sizeof(rel), SCH "/%u/filters/nr_filters", i), "0\n");
			put(mr_pathf(rel, sizeof(rel), SCH "/%u/watermarks/metric", i), "none\n");
			if (kernel.has_target_nid)
				put(mr_pathf(rel, sizeof(rel), SCH "/%u/target_nid", i), "-1\n");
			for (k = 0; k < MR_ARRAY_SIZE(st); k++)
				put(mr_pathf(rel, sizeof(rel), SCH "/%u/stats/%s", i, st[k]), "0\n");
		}
		put(path, s);
		return 0;
	}
	off = 0;
	if (sscanf(path, SCH "/%u/filters/nr_filters%n", &idx, &off) == 1 && off && !path[off]) {
		for (i = 0; i < (unsigned)atoi(s); i++) {
			put(mr_pathf(rel, sizeof(rel), SCH "/%u/filters/%u/type", idx, i), "anon\n");
			put(mr_pathf(rel, sizeof(rel), SCH "/%u/filters/%u/matching", idx, i), "N\n");
			if (kernel.has_allow)
				put(mr_pathf(rel, sizeof(rel), SCH "/%u/filters/%u/allow", idx, i),
				    "N\n");
		}
		put(path, s);
		return 0;
	}
	off = 0;
	if (sscanf(path, SCH "/%u/action%n", &idx, &off) == 1 && off && !path[off] &&
	    !word_in(kernel.actions, s))
		return refuse(path, s);
	off = 0;
	if (sscanf(path, SCH "/%u/filters/%u/type%n", &idx, &fi, &off) == 2 && off && !path[off] &&
	    !word_in(kernel.filter_types, s))
		return refuse(path, s);
	if (!strcmp(path, "/sys/fs/cgroup/cgroup.subtree_control")) {
		put(path, !strcmp(s, "+memory") ? "memory\n" : "\n");
		return 0;
	}
	put(path, s);
	return 0;
}

int __wrap_mr_root_may_change(const char *what, bool apply);
int __wrap_mr_root_may_change(const char *what, bool apply)
{
	if (apply)
		return 0;
	return mr_error(-EPERM, "did not %s: it changes the kernel's state; pass --apply to "
			"do it", what);
}

int __wrap_mr_root_write_str(const char *linux_path, const char *s, bool apply);
int __wrap_mr_root_write_str(const char *linux_path, const char *s, bool apply)
{
	assert_true(apply);
	record("%s=%s", linux_path, s);
	return fake_kernel(linux_path, s);
}

int __wrap_mr_root_write_file(const char *linux_path, const char *data, size_t len, bool apply);
int __wrap_mr_root_write_file(const char *linux_path, const char *data, size_t len, bool apply)
{
	char copy[4096];

	assert_true(apply);
	assert_true(len < sizeof(copy));
	memcpy(copy, data, len);
	copy[len] = '\0';
	record("file %s", linux_path);
	put(linux_path, copy);
	return 0;
}

int __wrap_mr_root_unlink(const char *linux_path, bool apply);
int __wrap_mr_root_unlink(const char *linux_path, bool apply)
{
	assert_true(apply);
	record("unlink %s", linux_path);
	assert_true(exists(linux_path));
	rm_rf(linux_path);
	return 0;
}

int __wrap_mr_root_mkdir(const char *linux_path, bool apply);
int __wrap_mr_root_mkdir(const char *linux_path, bool apply)
{
	char rel[300];

	assert_true(apply);
	record("mkdir %s", linux_path);
	if (!strncmp(linux_path, "/sys/fs/cgroup/", 15))	/* cgroupfs fills a new group */
		put(mr_pathf(rel, sizeof(rel), "%s/cgroup.procs", linux_path), "");
	else
		put(mr_pathf(rel, sizeof(rel), "%s/.keep", linux_path), "");
	return 0;
}

int __wrap_mr_root_rmdir(const char *linux_path, bool apply);
int __wrap_mr_root_rmdir(const char *linux_path, bool apply)
{
	assert_true(apply);
	record("rmdir %s", linux_path);
	assert_true(exists(linux_path));
	rm_rf(linux_path);
	return 0;
}

static void reset_root(void)
{
	char rel[64];

	rm_rf("/sys");
	rm_rf("/proc");
	rm_rf("/run");
	put("/proc/1/comm", "init\n");
	put_stat(getpid(), "test-kengine", MY_START);
	put(mr_pathf(rel, sizeof(rel), "/proc/%ld/comm", (long)getpid()), "test-kengine\n");
	put_stat(TARGET_PID, "mr-hotcold", 900);
	put("/proc/4400/comm", "mr-hotcold\n");
	put("/proc/4400/cgroup", "0::/user.slice/session-1.scope\n");
	put("/sys/fs/cgroup/user.slice/session-1.scope/cgroup.procs", "4400\n");
	put(KD "/nr_kdamonds", "0\n");
	put("/sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory pids\n");
	put("/sys/fs/cgroup/cgroup.subtree_control", "\n");
	kernel.actions = v6_12.actions;
	kernel.filter_types = v6_12.filter_types;
	kernel.has_target_nid = true;
	kernel.has_allow = false;
	nr_writes = 0;
	nr_schemes_made = 0;
}

/* The recorded writes under @prefix, one a line, @prefix cut off. */
static const char *writes_under(const char *prefix)
{
	static char buf[8192];
	size_t n = 0, pl = strlen(prefix);
	unsigned i;

	buf[0] = '\0';
	for (i = 0; i < nr_writes; i++)
		if (!strncmp(writes[i], prefix, pl))
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s\n", writes[i] + pl);
	return buf;
}

static int write_index(const char *s)
{
	unsigned i;

	for (i = 0; i < nr_writes; i++)
		if (!strcmp(writes[i], s))
			return (int)i;
	return -1;
}

/* ---------------------------------------------------------------- the machine */

/* Two nodes: node 0 [0, 512 MiB) and node 3 [1536 MiB, 2 GiB), one region each. */
static struct mr_range ranges0 = { 0, 512 * M }, ranges3 = { 1536 * M, 512 * M };
static struct mr_region regions[2];
static struct mr_region_map map;

static void make_map(void)
{
	memset(regions, 0, sizeof(regions));
	regions[0].id = 0;
	regions[0].node = 0;
	regions[0].mpst_node_id = -1;
	regions[0].ranges = &ranges0;
	regions[0].nr_ranges = 1;
	regions[0].size_bytes = ranges0.size;
	regions[1].id = 1;
	regions[1].node = 3;
	regions[1].mpst_node_id = -1;
	regions[1].ranges = &ranges3;
	regions[1].nr_ranges = 1;
	regions[1].size_bytes = ranges3.size;
	memset(&map, 0, sizeof(map));
	map.regions = regions;
	map.nr_regions = 2;
}

static const struct mr_mon_attrs attrs = { .sample_us = 5000, .aggr_us = 100000,
					   .update_us = 1000000, .min_nr_regions = 10,
					   .max_nr_regions = 1000 };

static void parse(const char *text, struct mr_scheme_set *set)
{
	char note[256];

	if (mr_scheme_parse(text, "test", set))
		fail_msg("%s", mr_last_error());
	make_map();
	assert_int_equal(mr_act_check_schemes(set, &map, MR_ACT_SEES_READS, false, note,
					      sizeof(note)), 0);
}

/* ---------------------------------------------------------------- the files */

/* A kdamond with one context and @n schemes, as memreg's setup leaves it. */
static void fake_kdamond(unsigned n)
{
	char num[16];

	assert_int_equal(fake_kernel(KD "/nr_kdamonds", "1"), 0);
	assert_int_equal(fake_kernel(KD "/0/contexts/nr_contexts", "1"), 0);
	snprintf(num, sizeof(num), "%u", n);
	assert_int_equal(fake_kernel(SCH "/nr_schemes", num), 0);
}

static void write_one(const char *text, const char *memcg, const char *want)
{
	struct mr_scheme_set set;
	struct mr_mon_damos d;

	reset_root();
	parse(text, &set);
	fake_kdamond(1);
	nr_writes = 0;
	assert_int_equal(mr_kengine_to_damos(&set.schemes[0], &attrs, memcg, &d), 0);
	assert_int_equal(mr_mon_damon_write_scheme(0, 0, &d, true), 0);
	assert_string_equal(writes_under(SCH "/0/"), want);
	mr_scheme_set_free(&set);
}

/* The seed's rule: 100 MiB and larger, never accessed, for 2 minutes (1200
 * aggregations of 100 ms) or longer: page it out. No quota, no watermarks. */
static void test_files_pageout(void **state)
{
	(void)state;
	write_one("100M max 0 0 2m max pageout", NULL,
		  "action=pageout\n"
		  "apply_interval_us=100000\n"
		  "access_pattern/sz/min=104857600\n"
		  "access_pattern/sz/max=18446744073709551615\n"
		  "access_pattern/nr_accesses/min=0\n"
		  "access_pattern/nr_accesses/max=0\n"
		  "access_pattern/age/min=1200\n"
		  "access_pattern/age/max=4294967295\n"
		  "quotas/ms=0\n"
		  "quotas/bytes=0\n"
		  "quotas/reset_interval_ms=0\n"
		  "quotas/weights/sz_permil=0\n"
		  "quotas/weights/nr_accesses_permil=1\n"
		  "quotas/weights/age_permil=1\n"
		  "watermarks/metric=none\n");
}

/* Cold for 30 s (300 aggregations) to node 3, a process's pages only: the memcg
 * filter of memreg's cgroup lets only its pages through (filter out what does not
 * match). */
static void test_files_migrate_cold(void **state)
{
	(void)state;
	write_one("4K max 0 0 30s max migrate_cold 3", "/memreg-4400",
		  "action=migrate_cold\n"
		  "target_nid=3\n"
		  "apply_interval_us=100000\n"
		  "access_pattern/sz/min=4096\n"
		  "access_pattern/sz/max=18446744073709551615\n"
		  "access_pattern/nr_accesses/min=0\n"
		  "access_pattern/nr_accesses/max=0\n"
		  "access_pattern/age/min=300\n"
		  "access_pattern/age/max=4294967295\n"
		  "quotas/ms=0\n"
		  "quotas/bytes=0\n"
		  "quotas/reset_interval_ms=0\n"
		  "quotas/weights/sz_permil=0\n"
		  "quotas/weights/nr_accesses_permil=1\n"
		  "quotas/weights/age_permil=1\n"
		  "watermarks/metric=none\n"
		  "filters/nr_filters=1\n"
		  "filters/0/type=memcg\n"
		  "filters/0/memcg_path=/memreg-4400\n"
		  "filters/0/matching=N\n");
}

/* Half the samples or more (10 of 20) for 5 s (50 aggregations) to region 0's node,
 * 64 MiB per second; on a 6.14 kernel the filter's allow file is written N too,
 * the same meaning as 6.12's filter-out. */
static void test_files_migrate_hot(void **state)
{
	(void)state;
	reset_root();
	write_one("4K max 50% max 5s max migrate_hot region:0\n  quota bytes 64M per 1s\n",
		  NULL,
		  "action=migrate_hot\n"
		  "target_nid=0\n"
		  "apply_interval_us=100000\n"
		  "access_pattern/sz/min=4096\n"
		  "access_pattern/sz/max=18446744073709551615\n"
		  "access_pattern/nr_accesses/min=10\n"
		  "access_pattern/nr_accesses/max=20\n"
		  "access_pattern/age/min=50\n"
		  "access_pattern/age/max=4294967295\n"
		  "quotas/ms=0\n"
		  "quotas/bytes=67108864\n"
		  "quotas/reset_interval_ms=1000\n"
		  "quotas/weights/sz_permil=0\n"
		  "quotas/weights/nr_accesses_permil=1\n"
		  "quotas/weights/age_permil=1\n"
		  "watermarks/metric=none\n");
}

/* Watermarks, weights, a reject filter; the 6.14 allow file. */
static void test_files_keys(void **state)
{
	struct mr_scheme_set set;
	struct mr_mon_damos d;

	(void)state;
	reset_root();
	kernel.has_allow = true;
	parse("4K max 0 5% 1s 10s cold\n  weights 0 3 7\n"
	      "  watermarks free_mem_rate 5s high 500 mid 400 low 50\n  filter anon reject\n",
	      &set);
	fake_kdamond(1);
	nr_writes = 0;
	assert_int_equal(mr_kengine_to_damos(&set.schemes[0], &attrs, "/memreg-4400", &d), 0);
	assert_int_equal(mr_mon_damon_write_scheme(0, 0, &d, true), 0);
	assert_string_equal(writes_under(SCH "/0/"),
			    "action=lru_deprio\n"
			    "apply_interval_us=100000\n"
			    "access_pattern/sz/min=4096\n"
			    "access_pattern/sz/max=18446744073709551615\n"
			    "access_pattern/nr_accesses/min=0\n"
			    "access_pattern/nr_accesses/max=1\n"
			    "access_pattern/age/min=10\n"
			    "access_pattern/age/max=100\n"
			    "quotas/ms=0\n"
			    "quotas/bytes=0\n"
			    "quotas/reset_interval_ms=0\n"
			    "quotas/weights/sz_permil=0\n"
			    "quotas/weights/nr_accesses_permil=3\n"
			    "quotas/weights/age_permil=7\n"
			    "watermarks/metric=free_mem_rate\n"
			    "watermarks/interval_us=5000000\n"
			    "watermarks/high=500\n"
			    "watermarks/mid=400\n"
			    "watermarks/low=50\n"
			    "filters/nr_filters=2\n"
			    "filters/0/type=memcg\n"
			    "filters/0/memcg_path=/memreg-4400\n"
			    "filters/0/matching=N\n"
			    "filters/0/allow=N\n"
			    "filters/1/type=anon\n"
			    "filters/1/matching=Y\n"
			    "filters/1/allow=N\n");
	mr_scheme_set_free(&set);
}

/* willneed has no paddr action: refused before anything is written. */
static void test_willneed_refused(void **state)
{
	struct mr_scheme_set set;
	struct mr_mon_damos d;

	(void)state;
	reset_root();
	parse("4K max 0 0 1s max willneed", &set);
	assert_int_equal(mr_kengine_to_damos(&set.schemes[0], &attrs, NULL, &d), -ENOTSUP);
	assert_string_equal(mr_last_error(), "scheme of line 1: willneed has no counterpart in "
			    "the kernel's DAMOS for physical memory (paddr): use --engine user");
	mr_scheme_set_free(&set);
}

/* ---------------------------------------------------------------- whole runs */

struct run_env {
	struct mr_scheme_set set;
	struct mr_mon_ctx mon;
	struct mr_ctl_run run;
	volatile sig_atomic_t stop;
};

static void env_start(struct run_env *e, const char *text)
{
	memset(e, 0, sizeof(*e));
	parse(text, &e->set);
	mr_mon_ctx_init(&e->mon, &mr_mon_ops_damon);
	/* 1 ms aggregations, four of them */
	e->mon.attrs = (struct mr_mon_attrs){ .sample_us = 100, .aggr_us = 1000,
					      .update_us = 100000, .min_nr_regions = 10,
					      .max_nr_regions = 1000 };
	e->mon.stop = &e->stop;
	e->run.set = &e->set;
	e->run.map = &map;
	e->run.mon = &e->mon;
	e->run.engine_name = "kernel";
	e->run.backend_name = "damon";
	e->run.duration_us = 3500;
	assert_int_equal(mr_ctl_run_start(&e->run, TARGET_PID, false, false), 0);
}

static void env_end(struct run_env *e)
{
	mr_ctl_run_destroy(&e->run);
	mr_mon_ctx_destroy(&e->mon);
	mr_scheme_set_free(&e->set);
}

/* Nothing of memreg's is left: no kdamond, no marker, no cgroup, the process back
 * where it was. */
static void assert_nothing_left(void)
{
	assert_string_equal(slurp(KD "/nr_kdamonds"), "0");
	assert_false(exists(KD "/0"));
	assert_false(exists("/run/memreg/damon.owner"));
	assert_false(exists("/sys/fs/cgroup/memreg-4400"));
	assert_string_equal(slurp("/sys/fs/cgroup/cgroup.subtree_control"), "\n");
}

static uint64_t scheme_u64(json_object *status, size_t i, const char *key)
{
	json_object *schemes, *v;

	assert_true(json_object_object_get_ex(status, "schemes", &schemes));
	assert_true(json_object_object_get_ex(json_object_array_get_idx(schemes, i), key, &v));
	return (uint64_t)json_object_get_int64(v);
}

static void test_run_and_teardown(void **state)
{
	struct mr_kengine_opts o = { .pid = TARGET_PID, .apply = true, .gate_fd = -1 };
	struct run_env e;
	json_object *st;
	uint64_t n;

	(void)state;
	reset_root();
	env_start(&e, "4K max 0 0 30s max migrate_cold 3");
	assert_int_equal(mr_kengine_run(&e.run, &o), 0);
	/* the set-up, in order: the group, the process in it, the kdamond over node 0 */
	assert_true(write_index("/sys/fs/cgroup/cgroup.subtree_control=+memory") <
		    write_index("mkdir /sys/fs/cgroup/memreg-4400"));
	assert_true(write_index("mkdir /sys/fs/cgroup/memreg-4400") <
		    write_index("/sys/fs/cgroup/memreg-4400/cgroup.procs=4400"));
	assert_true(write_index("/sys/fs/cgroup/memreg-4400/cgroup.procs=4400") <
		    write_index(KD "/nr_kdamonds=1"));
	assert_string_equal(writes_under(KD "/0/contexts/0/"),
			    "operations=paddr\n"
			    "monitoring_attrs/intervals/sample_us=100\n"
			    "monitoring_attrs/intervals/aggr_us=1000\n"
			    "monitoring_attrs/intervals/update_us=100000\n"
			    "monitoring_attrs/nr_regions/max=1000\n"
			    "monitoring_attrs/nr_regions/min=10\n"
			    "targets/nr_targets=1\n"
			    "targets/0/regions/nr_regions=1\n"
			    "targets/0/regions/0/start=0\n"
			    "targets/0/regions/0/end=536870912\n"
			    "schemes/nr_schemes=1\n"
			    "schemes/0/action=migrate_cold\n"
			    "schemes/0/target_nid=3\n"
			    "schemes/0/apply_interval_us=1000\n"
			    "schemes/0/access_pattern/sz/min=4096\n"
			    "schemes/0/access_pattern/sz/max=18446744073709551615\n"
			    "schemes/0/access_pattern/nr_accesses/min=0\n"
			    "schemes/0/access_pattern/nr_accesses/max=0\n"
			    "schemes/0/access_pattern/age/min=30000\n"
			    "schemes/0/access_pattern/age/max=4294967295\n"
			    "schemes/0/quotas/ms=0\n"
			    "schemes/0/quotas/bytes=0\n"
			    "schemes/0/quotas/reset_interval_ms=0\n"
			    "schemes/0/quotas/weights/sz_permil=0\n"
			    "schemes/0/quotas/weights/nr_accesses_permil=1\n"
			    "schemes/0/quotas/weights/age_permil=1\n"
			    "schemes/0/watermarks/metric=none\n"
			    "schemes/0/filters/nr_filters=1\n"
			    "schemes/0/filters/0/type=memcg\n"
			    "schemes/0/filters/0/memcg_path=/memreg-4400\n"
			    "schemes/0/filters/0/matching=N\n");
	/* the statistics are the kernel's: n updates, each +2 tried (3 MiB), +1 applied
	 * (2 MiB), +1 quota exceeded */
	n = e.run.nr_aggregations;
	assert_true(n >= 1);
	st = mr_ctl_run_status_json(&e.run);
	assert_int_equal(scheme_u64(st, 0, "nr_tried"), 2 * n);
	assert_int_equal(scheme_u64(st, 0, "sz_tried"), 3 * M * n);
	assert_int_equal(scheme_u64(st, 0, "nr_applied"), n);
	assert_int_equal(scheme_u64(st, 0, "sz_applied"), 2 * M * n);
	assert_int_equal(scheme_u64(st, 0, "pages_applied"), 2 * M * n / 4096);
	assert_int_equal(scheme_u64(st, 0, "qt_exceeds"), n);
	json_object_put(st);
	/* the bytes were taken from node 0, the only source node */
	assert_int_equal(e.run.per_scheme[0].node_bytes[0], 2 * M * n);
	/* the teardown: kdamond off, nr_kdamonds 0, process back, group removed */
	assert_true(write_index(KD "/0/state=off") < write_index(KD "/nr_kdamonds=0"));
	assert_true(write_index(KD "/nr_kdamonds=0") <
		    write_index("/sys/fs/cgroup/user.slice/session-1.scope/cgroup.procs=4400"));
	assert_true(write_index("/sys/fs/cgroup/user.slice/session-1.scope/cgroup.procs=4400") <
		    write_index("rmdir /sys/fs/cgroup/memreg-4400"));
	assert_nothing_left();
	env_end(&e);
}

/* A 6.10-like kernel: no migrate actions, no target_nid. The refusal names what
 * the kernel refused; nothing is left behind, and a command waiting at the gate
 * is never let through. */
static void test_probe_refusal(void **state)
{
	struct mr_kengine_opts o = { .pid = TARGET_PID, .started = true, .apply = true };
	struct run_env e;
	int gate[2];
	char c;

	(void)state;
	reset_root();
	kernel.actions = v6_10.actions;
	kernel.has_target_nid = false;
	env_start(&e, "4K max 0 0 30s max migrate_cold 3");
	assert_int_equal(pipe(gate), 0);
	o.gate_fd = gate[1];
	/* the gate opens once the process is in the group, before the kdamond: read
	 * it after the run, it holds the byte then */
	assert_int_equal(mr_kengine_run(&e.run, &o), -ENOTSUP);
	assert_string_equal(mr_last_error(), "scheme of line 1: damon: this kernel's DAMOS does "
			    "not take action 'migrate_cold' (" SCH "/0/action refused it)");
	assert_int_equal(read(gate[0], &c, 1), 1);
	close(gate[0]);
	assert_int_equal(write_index(KD "/0/state=on"), -1);
	assert_nothing_left();
	env_end(&e);

	/* a 6.12 kernel that does not take the memcg filter type (read back differs) */
	reset_root();
	kernel.filter_types = " anon addr ";
	env_start(&e, "4K max 0 0 30s max migrate_cold 3");
	o.gate_fd = -1;
	assert_int_equal(mr_kengine_run(&e.run, &o), -ENOTSUP);
	assert_string_equal(mr_last_error(), "scheme of line 1: damon: this kernel's DAMOS does "
			    "not take filter type 'memcg' (" SCH "/0/filters/0/type refused it)");
	assert_nothing_left();
	env_end(&e);
}

/* No cgroup v2 with the memory controller: refused before anything is written; a
 * DAMON in use: the same. */
static void test_refused_before_writing(void **state)
{
	struct mr_kengine_opts o = { .pid = TARGET_PID, .apply = true, .gate_fd = -1 };
	struct run_env e;

	(void)state;
	reset_root();
	rm_rf("/sys/fs/cgroup");
	env_start(&e, "4K max 0 0 30s max migrate_cold 3");
	assert_int_equal(mr_kengine_run(&e.run, &o), -ENOTSUP);
	assert_string_equal(mr_last_error(), "--engine kernel: a process target needs a DAMOS "
			    "memcg filter on a cgroup v2 group memreg creates, and no cgroup v2 "
			    "hierarchy at /sys/fs/cgroup (mount -t cgroup2 none /sys/fs/cgroup) "
			    "(or use --phys)");
	assert_int_equal(nr_writes, 0);
	env_end(&e);

	reset_root();
	put(KD "/nr_kdamonds", "1\n");
	env_start(&e, "4K max 0 0 30s max migrate_cold 3");
	assert_int_equal(mr_kengine_run(&e.run, &o), -EBUSY);
	assert_string_equal(mr_last_error(), "damon: DAMON is in use: nr_kdamonds is 1; not "
			    "touched");
	assert_int_equal(nr_writes, 0);
	env_end(&e);
	/* without consent, nothing either */
	reset_root();
	env_start(&e, "4K max 0 0 30s max migrate_cold 3");
	o.apply = false;
	assert_int_equal(mr_kengine_run(&e.run, &o), -EPERM);
	assert_int_equal(nr_writes, 0);
	env_end(&e);
}

/* ---------------------------------------------------------------- same choices */

/* The kernel's scheme as the fake tree holds it after memreg wrote it. */
static void read_back(struct mr_mon_damos *d)
{
	uint64_t v;

	memset(d, 0, sizeof(*d));
#define RD(field, file)                                                        \
	do {                                                                   \
		assert_int_equal(mr_root_read_u64(SCH "/0/access_pattern/" file, &v), 0); \
		d->field = v;                                                  \
	} while (0)
	RD(sz_min, "sz/min");
	RD(sz_max, "sz/max");
	RD(nr_accesses_min, "nr_accesses/min");
	RD(nr_accesses_max, "nr_accesses/max");
	RD(age_min, "age/min");
	RD(age_max, "age/max");
#undef RD
}

static struct {
	uint64_t start[64];
	unsigned nr;
} picked;

static int record_apply(void *arg, const struct mr_scheme *s, uint64_t start, uint64_t end,
			struct mr_ctl_result *res)
{
	(void)arg;
	(void)s;
	assert_true(picked.nr < 64);
	picked.start[picked.nr++] = start;
	res->applied_bytes = end - start;
	return 0;
}

/*
 * One replayed pattern, three aggregations of the same 8 regions (sizes, counts and
 * ages chosen at each scheme's edges: exactly min, one below, one above), under two
 * attribute sets (5 ms / 100 ms: counts 0..20; 50 ms / 1 s: 0..20, ages in seconds).
 * Every scheme is a stat scheme (no age reset, no quota), so the user engine applies
 * it to exactly the regions it picks.
 *
 *   region  size     nr_accesses  age(aggr)   (aggregation 1; +1 age each next one)
 *   0       4K       0            49
 *   1       4K       0            50
 *   2       8K       10           300
 *   3       100M-4K  9            1199
 *   4       100M     0            1200
 *   5       200M     20           5
 *   6       64K      1            299
 *   7       1M       0            0
 *   8       16K      2            0           (150 ms: age 2 of 100 ms, not 1)
 */
static void test_same_regions(void **state)
{
	static const char *const schemes[] = {
		"100M max 0 0 2m max stat",
		"4K max 0 0 30s max stat",
		"4K max 50% max 5s max stat",
		"8K 100M 5% 50% 150ms 29900ms stat",
		"min max 1acc 9acc 1s 2m stat",
		"4K 64K 0 10% min 5s stat",
	};
	static const struct mr_mon_attrs sets[] = {
		{ .sample_us = 5000, .aggr_us = 100000, .update_us = 1000000,
		  .min_nr_regions = 10, .max_nr_regions = 1000 },
		{ .sample_us = 50000, .aggr_us = 1000000, .update_us = 2000000,
		  .min_nr_regions = 10, .max_nr_regions = 1000 },
	};
	static const struct { uint64_t size; uint32_t nr, age; } pattern[] = {
		{ 4096, 0, 49 }, { 4096, 0, 50 }, { 8192, 10, 300 }, { 100 * M - 4096, 9, 1199 },
		{ 100 * M, 0, 1200 }, { 200 * M, 20, 5 }, { 65536, 1, 299 }, { M, 0, 0 },
		{ 16384, 2, 0 },
	};
	size_t si, ai, k;
	unsigned agg, total_picked = 0;

	(void)state;
	for (ai = 0; ai < MR_ARRAY_SIZE(sets); ai++) {
		for (si = 0; si < MR_ARRAY_SIZE(schemes); si++) {
			struct mr_scheme_set set;
			struct mr_mon_damos d, back;
			struct mr_ctl ctl;

			reset_root();
			parse(schemes[si], &set);
			fake_kdamond(1);
			assert_int_equal(mr_kengine_to_damos(&set.schemes[0], &sets[ai], NULL, &d), 0);
			assert_int_equal(mr_mon_damon_write_scheme(0, 0, &d, true), 0);
			read_back(&back);
			assert_int_equal(mr_ctl_init(&ctl, &set, &sets[ai]), 0);
			ctl.apply = record_apply;
			for (agg = 0; agg < 3; agg++) {
				struct mr_mon_region r[MR_ARRAY_SIZE(pattern)];
				uint64_t at = 0;
				unsigned kern = 0, i;

				for (k = 0; k < MR_ARRAY_SIZE(pattern); k++) {
					memset(&r[k], 0, sizeof(r[k]));
					r[k].start = at;
					r[k].end = at + pattern[k].size;
					r[k].nr_accesses = pattern[k].nr;
					r[k].age = pattern[k].age + agg;
					at = r[k].end;
				}
				picked.nr = 0;
				assert_int_equal(mr_ctl_aggregate(&ctl, r, MR_ARRAY_SIZE(r),
								  (agg + 1) * sets[ai].aggr_us), 0);
				/* the kernel's picks, region by region, against the user engine's */
				for (k = 0, i = 0; k < MR_ARRAY_SIZE(r); k++) {
					bool user = i < picked.nr && picked.start[i] == r[k].start;

					if (user)
						i++;
					if (mr_kengine_damos_matches(&back, &r[k]) != user)
						fail_msg("attrs %zu, scheme '%s', aggregation %u, "
							 "region %zu: user engine %s, kernel %s",
							 ai, schemes[si], agg, k, user ? "picks" : "skips",
							 user ? "skips" : "picks");
					kern += user;
				}
				assert_int_equal(i, picked.nr);
				total_picked += kern;
			}
			mr_ctl_destroy(&ctl);
			mr_scheme_set_free(&set);
		}
	}
	/* the comparison is not vacuous: regions were picked (and skipped) */
	assert_true(total_picked > 10);
	assert_true(total_picked < 3 * 9 * MR_ARRAY_SIZE(schemes) * MR_ARRAY_SIZE(sets));
}

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(root))
		return -1;
	return mr_root_set(root);
}

static int teardown(void **state)
{
	char cmd[600];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) ? -1 : 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_files_pageout),
		cmocka_unit_test(test_files_migrate_cold),
		cmocka_unit_test(test_files_migrate_hot),
		cmocka_unit_test(test_files_keys),
		cmocka_unit_test(test_willneed_refused),
		cmocka_unit_test(test_run_and_teardown),
		cmocka_unit_test(test_probe_refusal),
		cmocka_unit_test(test_refused_before_writing),
		cmocka_unit_test(test_same_regions),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
