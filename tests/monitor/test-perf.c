/* Unit tests of the perf backend without a PMU: event encodings through libpfm4's
 * forced-PMU mode (LIBPFM_FORCE_PMU) and the sample parser on a recorded buffer
 * (tests/monitor/perf-samples.hex, written by gen-perf-samples.sh). */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/util.h"
#include "monitor/perf.h"

struct enc_case {
	const char *pmu;	/* LIBPFM_FORCE_PMU */
	unsigned min_latency;
	int ret;
	const char *event;
	uint64_t config, config1;
};

/* libpfm4 reads LIBPFM_FORCE_PMU once per process: each PMU in a child of its own.
 * The child's exit status says which check failed (0: all held). */
static int encode_in_child(const struct enc_case *c)
{
	struct perf_event_attr attr;
	char name[128];
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		int ret;

		setenv("LIBPFM_FORCE_PMU", c->pmu, 1);
		ret = mr_mon_perf_encode(c->min_latency, 1000, &attr, name, sizeof(name));
		if (ret != c->ret)
			_exit(10);
		if (ret) {
			if (!strstr(mr_last_error(), "perf: "))
				_exit(11);
			_exit(0);
		}
		if (strcmp(name, c->event))
			_exit(12);
		if (attr.type != PERF_TYPE_RAW || attr.config != c->config ||
		    attr.config1 != c->config1)
			_exit(13);
		if (attr.precise_ip != 2 || attr.sample_period != 1000 ||
		    attr.sample_type != MR_PERF_SAMPLE_TYPE || !(attr.sample_type & PERF_SAMPLE_ADDR))
			_exit(14);
		if (!attr.exclude_kernel || !attr.disabled)
			_exit(15);
		_exit(0);
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static void test_encode(void **state)
{
	static const struct enc_case cases[] = {
		/* MEM_TRANS_RETIRED.LOAD_LATENCY: event 0xcd umask 0x01, ldlat in config1 */
		{ "hsw", 3, 0, "MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=3", 0x1cd, 3 },
		{ "skl", 3, 0, "MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=3", 0x1cd, 3 },
		{ "icl", 3, 0, "MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=3", 0x1cd, 3 },
		{ "spr", 3, 0, "MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=3", 0x1cd, 3 },
		{ "skl", 64, 0, "MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=64", 0x1cd, 64 },
		/* AMD Zen 3: no PEBS event to encode (IBS is the kernel's ibs_op PMU) */
		{ "amd64_fam19h_zen3", 3, -ENOTSUP, NULL, 0, 0 },
	};
	size_t i;

	for (i = 0; i < MR_ARRAY_SIZE(cases); i++) {
		int st = encode_in_child(&cases[i]);

		if (st)
			fail_msg("forced PMU %s, ldlat %u: check %d failed", cases[i].pmu,
				 cases[i].min_latency, st);
	}
}

/* The hex text -> bytes, comments and blank lines skipped. */
static unsigned char *load_hex(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	unsigned char *buf = malloc(1 << 16);
	char line[4096];
	size_t n = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char *p = line;

		if (*p == '#')
			continue;
		while (p[0] && p[1] && p[0] != '\n') {
			unsigned v;

			assert_int_equal(sscanf(p, "%2x", &v), 1);
			buf[n++] = (unsigned char)v;
			p += 2;
		}
	}
	fclose(f);
	*len = n;
	return buf;
}

struct got {
	struct mr_perf_sample s[8];
	unsigned n;
};

static void collect(const struct mr_perf_sample *s, void *arg)
{
	struct got *g = arg;

	if (g->n < 8)
		g->s[g->n++] = *s;
}

static void test_parse(void **state)
{
	char path[1024];
	struct got g = { .n = 0 };
	uint64_t lost = 0;
	bool execd = false;
	size_t len;
	unsigned char *buf;

	snprintf(path, sizeof(path), "%s/tests/monitor/perf-samples.hex",
		 getenv("top_srcdir") ? getenv("top_srcdir") : ".");
	buf = load_hex(path, &len);
	assert_int_equal(len, 56 + 32 + 24 + 56 + 56);
	assert_int_equal(mr_mon_perf_parse(buf, len, MR_PERF_SAMPLE_TYPE, collect, &g, &lost,
					   &execd), 3);
	assert_int_equal(g.n, 3);
	assert_int_equal(lost, 3);
	assert_false(execd);	/* its other record is no COMM */
	assert_int_equal(g.s[0].ip, 0x401000);
	assert_int_equal(g.s[0].pid, 100);
	assert_int_equal(g.s[0].tid, 101);
	assert_int_equal(g.s[0].time_ns, 1000);
	assert_int_equal(g.s[0].addr, 0x7f0000001040);
	assert_int_equal(g.s[0].weight, 250);
	assert_int_equal(g.s[0].data_src, 0x68100142);
	assert_int_equal(g.s[1].addr, 0x7f0000203000);
	assert_int_equal(g.s[1].tid, 102);
	assert_int_equal(g.s[2].addr, 0x5500000010);
	assert_int_equal(g.s[2].weight, 900);

	/* cut inside the last record */
	assert_int_equal(mr_mon_perf_parse(buf, len - 5, MR_PERF_SAMPLE_TYPE, NULL, NULL, NULL, NULL),
			 -EINVAL);
	assert_non_null(strstr(mr_last_error(), "does not fit"));
	/* read with the wrong sample type: the sizes disagree */
	assert_int_equal(mr_mon_perf_parse(buf, len, MR_PERF_SAMPLE_TYPE | PERF_SAMPLE_PHYS_ADDR,
					   NULL, NULL, NULL, NULL), -EINVAL);
	assert_non_null(strstr(mr_last_error(), "needs more"));
	assert_int_equal(mr_mon_perf_parse(buf, len, MR_PERF_SAMPLE_TYPE & ~PERF_SAMPLE_TIME,
					   NULL, NULL, NULL, NULL), -EINVAL);
	assert_non_null(strstr(mr_last_error(), "needs fewer"));
	/* fields the parser cannot read are refused up front */
	assert_int_equal(mr_mon_perf_parse(buf, len, PERF_SAMPLE_CALLCHAIN, NULL, NULL, NULL, NULL),
			 -EINVAL);
	/* a zero-size header would loop forever: refused */
	memset(buf, 0, 8);
	assert_int_equal(mr_mon_perf_parse(buf, len, MR_PERF_SAMPLE_TYPE, NULL, NULL, NULL, NULL),
			 -EINVAL);
	free(buf);
}

/* COMM records, as perf_event.h lays them out: a header, pid and tid, the name NUL-
 * padded to 8 bytes. One with PERF_RECORD_MISC_COMM_EXEC (the target exec'd) sets
 * *execd; one without (a thread renamed itself, prctl PR_SET_NAME) does not. */
static void test_parse_exec(void **state)
{
	struct {
		struct perf_event_header h;
		uint32_t pid, tid;
		char comm[8];
	} rec = { { PERF_RECORD_COMM, 2 /* PERF_RECORD_MISC_USER */, sizeof(rec) }, 100, 100, "sleep" };
	bool execd = false;

	(void)state;
	assert_int_equal(sizeof(rec), 24);
	assert_int_equal(mr_mon_perf_parse(&rec, sizeof(rec), MR_PERF_SAMPLE_TYPE, NULL, NULL,
					   NULL, &execd), 0);
	assert_false(execd);
	rec.h.misc |= PERF_RECORD_MISC_COMM_EXEC;
	assert_int_equal(mr_mon_perf_parse(&rec, sizeof(rec), MR_PERF_SAMPLE_TYPE, NULL, NULL,
					   NULL, &execd), 0);
	assert_true(execd);
	/* no place to say it: parsed all the same */
	assert_int_equal(mr_mon_perf_parse(&rec, sizeof(rec), MR_PERF_SAMPLE_TYPE, NULL, NULL,
					   NULL, NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_encode),
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_parse_exec),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
