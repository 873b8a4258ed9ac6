/* Unit tests of record files: round trip (version 2), a version 1 file written by
 * the old writer, a file cut inside a chunk (an interrupted writer), every kind of
 * bad file rejected with a one-line error, and reports over a partial snapshot. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <zlib.h>

#include "common/proc.h"
#include "common/util.h"
#include "monitor/record.h"
#include "monitor/report.h"

static char path[] = "/tmp/mr-test-record-XXXXXX";

#define P1 UINT64_C(4096)

static const struct mr_mon_region regs[3] = {
	{ .start = 0x1000, .end = 0x5000, .nr_accesses = 3, .age = 1 },
	{ .start = 0x5000, .end = 0x9000, .nr_accesses = 0, .age = 7 },
	{ .start = 0x10000, .end = 0x20000, .nr_accesses = 20, .age = 0 },
};

/* A file with @n snapshots, the last one partial (7 of 20 samples), of a process
 * that started at tick 777; returns its bytes (malloc'd) and length. */
static unsigned char *make_file(unsigned n, size_t *len)
{
	struct mr_rec_header h = { .kind = MR_MON_TARGET_PROCESS, .pid = 42,
				   .attrs = { 5000, 100000, 1000000, 10, 1000 },
				   .start_unix_ns = UINT64_C(1767225600123456789),
				   .target_starttime_ticks = 777 };
	struct mr_rec_writer w;
	unsigned char *buf;
	unsigned i;
	FILE *f;
	long sz;

	strcpy(h.backend, "softdirty");
	assert_int_equal(mr_rec_writer_open(&w, path, &h), 0);
	assert_int_equal(mr_rec_write_note(&w, "backend=softdirty command=x"), 0);
	for (i = 0; i < n; i++)
		assert_int_equal(mr_rec_write_snapshot(&w, 100000u * (i + 1), i + 1 < n ? 20 : 7,
						       regs, 3), 0);
	assert_int_equal(mr_rec_writer_close(&w), 0);
	f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	sz = ftell(f);
	rewind(f);
	buf = malloc((size_t)sz);
	assert_int_equal(fread(buf, 1, (size_t)sz, f), (size_t)sz);
	fclose(f);
	*len = (size_t)sz;
	return buf;
}

static void test_round_trip(void **state)
{
	struct mr_rec rec;
	size_t len, i;
	unsigned char *b = make_file(4, &len);

	assert_int_equal(mr_rec_load(path, &rec), 0);
	assert_int_equal(rec.hdr.version, MR_REC_VERSION);
	assert_int_equal(rec.hdr.pid, 42);
	assert_string_equal(rec.hdr.backend, "softdirty");
	assert_int_equal(rec.hdr.attrs.aggr_us, 100000);
	assert_int_equal(rec.hdr.attrs.max_nr_regions, 1000);
	assert_int_equal(rec.hdr.start_unix_ns, UINT64_C(1767225600123456789));
	assert_int_equal(rec.hdr.target_starttime_ticks, 777);
	assert_string_equal(rec.note, "backend=softdirty command=x");
	assert_false(rec.truncated);
	assert_int_equal(rec.nr_snaps, 4);
	for (i = 0; i < 4; i++) {
		assert_int_equal(rec.snaps[i].time_us, 100000u * (i + 1));
		assert_int_equal(rec.snaps[i].nr_samples, i < 3 ? 20 : 7);
		assert_int_equal(rec.snaps[i].nr_regions, 3);
		assert_int_equal(rec.snaps[i].regions[2].start, 0x10000);
		assert_int_equal(rec.snaps[i].regions[2].nr_accesses, 20);
		assert_int_equal(rec.snaps[i].regions[1].age, 7);
	}
	mr_rec_free(&rec);
	free(b);
}

/* The writer fills in a process record's start time when the caller left it 0, so
 * a later report can tell the process from one that reuses its pid; a physical
 * record has none. */
static void test_writer_starttime(void **state)
{
	struct mr_rec_header h = { .kind = MR_MON_TARGET_PROCESS, .pid = (int32_t)getpid(),
				   .attrs = { 5000, 100000, 1000000, 10, 1000 } };
	struct mr_rec_writer w;
	struct mr_rec rec;
	uint64_t ticks;

	strcpy(h.backend, "refs");
	assert_int_equal(mr_proc_starttime(getpid(), &ticks), 0);
	assert_int_not_equal(ticks, 0);
	assert_int_equal(mr_rec_writer_open(&w, path, &h), 0);
	assert_int_equal(mr_rec_writer_close(&w), 0);
	assert_int_equal(mr_rec_load(path, &rec), 0);
	assert_int_equal(rec.hdr.target_starttime_ticks, ticks);
	mr_rec_free(&rec);

	h.kind = MR_MON_TARGET_PHYS;
	h.pid = 0;
	h.target_starttime_ticks = 99;	/* meaningless for physical memory: not written */
	assert_int_equal(mr_rec_writer_open(&w, path, &h), 0);
	assert_int_equal(mr_rec_writer_close(&w), 0);
	assert_int_equal(mr_rec_load(path, &rec), 0);
	assert_int_equal(rec.hdr.target_starttime_ticks, 0);
	mr_rec_free(&rec);

	/* a snapshot of no samples has no meaning (shares divide by it) */
	assert_int_equal(mr_rec_writer_open(&w, path, &h), 0);
	assert_int_equal(mr_rec_write_snapshot(&w, 1, 0, regs, 3), -EINVAL);
	assert_int_equal(mr_rec_writer_close(&w), 0);
}

/* tests/monitor/record-v1.rec was written by the version 1 writer (commit 8b9172d,
 * the generator is in tests/monitor/record-v1.README): pid 4242, softdirty, attrs
 * 5000,100000,1000000,10,1000, a note, 3 snapshots of the 3 regions of regs[]. */
static void test_read_v1(void **state)
{
	char v1[4096];
	struct mr_rec rec;
	size_t i;

	snprintf(v1, sizeof(v1), "%s/tests/monitor/record-v1.rec",
		 getenv("top_srcdir") ? getenv("top_srcdir") : "..");
	assert_int_equal(mr_rec_load(v1, &rec), 0);
	assert_int_equal(rec.hdr.version, 1);
	assert_int_equal(rec.hdr.kind, MR_MON_TARGET_PROCESS);
	assert_int_equal(rec.hdr.pid, 4242);
	assert_string_equal(rec.hdr.backend, "softdirty");
	assert_int_equal(rec.hdr.attrs.sample_us, 5000);
	assert_int_equal(rec.hdr.attrs.aggr_us, 100000);
	assert_int_equal(rec.hdr.start_unix_ns, UINT64_C(1767225600) * 1000000000u);
	assert_int_equal(rec.hdr.target_starttime_ticks, 0);	/* unknown in version 1 */
	assert_string_equal(rec.note, "backend=softdirty command=v1-fixture");
	assert_false(rec.truncated);
	assert_int_equal(rec.nr_snaps, 3);
	for (i = 0; i < 3; i++) {
		assert_int_equal(rec.snaps[i].time_us, 100000u * (i + 1));
		/* version 1 snapshots are whole intervals: 100000 / 5000 samples */
		assert_int_equal(rec.snaps[i].nr_samples, 20);
		assert_int_equal(rec.snaps[i].nr_regions, 3);
		assert_int_equal(rec.snaps[i].regions[0].start, 0x1000);
		assert_int_equal(rec.snaps[i].regions[0].end, 0x5000);
		assert_int_equal(rec.snaps[i].regions[0].nr_accesses, 3);
		assert_int_equal(rec.snaps[i].regions[1].age, 7);
		assert_int_equal(rec.snaps[i].regions[2].nr_accesses, 20);
	}
	mr_rec_free(&rec);
}

/* Reports over a record whose last snapshot is partial (4 of 20 samples):
 *   snapshot 0, 20 samples: A [1, 3) pages n10 (share .5), B [3, 5) n1 (.05)
 *   snapshot 1,  4 samples: A n2 (.5), B n0
 * wss at 5 accesses per interval (a share of .25) counts A in both; the heatmap
 * (one address row) shows snapshot 1 at (.5 + 0) / 2, not 2/20 = .1 for A. */
static void test_report_partial(void **state)
{
	struct mr_rec_region s0[] = { { P1, 3 * P1, 10, 0 }, { 3 * P1, 5 * P1, 1, 0 } };
	struct mr_rec_region s1[] = { { P1, 3 * P1, 2, 0 }, { 3 * P1, 5 * P1, 0, 0 } };
	struct mr_rec_snapshot sn[] = {
		{ .time_us = 100000, .regions = s0, .nr_regions = 2, .nr_samples = 20 },
		{ .time_us = 120000, .regions = s1, .nr_regions = 2, .nr_samples = 4 },
	};
	struct mr_rec rec = { .hdr = { .version = 2, .kind = MR_MON_TARGET_PROCESS, .pid = 1,
				       .attrs = { 5000, 100000, 1000000, 10, 1000 } },
			      .snaps = sn, .nr_snaps = 2 };
	struct mr_heatmap hm;
	uint64_t *wss;

	assert_int_equal(mr_report_wss(&rec, 5, &wss), 0);
	assert_int_equal(wss[0], 2 * P1);
	assert_int_equal(wss[1], 2 * P1);	/* 2 of 4 samples: the same share as 10 of 20 */
	free(wss);
	assert_int_equal(mr_report_wss(&rec, 11, &wss), 0);
	assert_int_equal(wss[0], 0);
	assert_int_equal(wss[1], 0);		/* .5 < 11/20 */
	free(wss);
	assert_int_equal(mr_heatmap_build(&rec, 2, 1, &hm), 0);
	assert_float_equal(hm.cells[0], (0.5 + 0.05) / 2, 1e-9);
	assert_float_equal(hm.cells[1], (0.5 + 0.0) / 2, 1e-9);
	assert_int_equal(hm.duration_us, 120000);
	mr_heatmap_free(&hm);
}

/* A writer killed mid-chunk: every whole chunk is kept, the torn one dropped. */
static void test_torn_tail(void **state)
{
	struct mr_rec rec;
	size_t len, cut;
	unsigned char *b = make_file(3, &len);
	size_t chunk = 12 + 16 + 3 * MR_REC_REGION_BYTES;

	for (cut = 1; cut < chunk; cut += 7) {
		assert_int_equal(mr_rec_parse(b, len - cut, "torn", &rec), 0);
		assert_true(rec.truncated);
		assert_int_equal(rec.nr_snaps, 2);
		mr_rec_free(&rec);
	}
	free(b);
}

static uint32_t rd32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void wr32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v, p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16), p[3] = (unsigned char)(v >> 24);
}

/* Recompute the CRC of the header or the chunk at @off after an edit, so the test
 * reaches the check behind the checksum. */
static void fix_crc(unsigned char *b, size_t off)
{
	if (off == 0) {
		wr32(b + 92, (uint32_t)crc32(0, b, 92));
	} else {
		uint32_t plen = rd32(b + off + 4);

		wr32(b + off + 8 + plen, (uint32_t)crc32(0, b + off, 8 + plen));
	}
}

struct bad_case {
	const char *name;
	size_t off;		/* byte to change */
	uint32_t val;		/* new 32-bit value there */
	size_t crc_at;		/* SIZE_MAX: leave the checksum broken */
	const char *msg;	/* expected in the error */
};


static void test_bad_files(void **state)
{
	/* layout: header 0..96, note chunk 96..(96+12+27), then snapshots */
	const size_t note = 96, snap = 96 + 12 + 27, sp = snap + 8;
	const struct bad_case cases[] = {
		{ "magic", 0, 0x41414141, SIZE_MAX, "not a memreg record file" },
		{ "version", 8, 3, SIZE_MAX, "version 3, this memreg reads versions 1 to 2" },
		{ "header-size", 12, 64, 0, "header size 64, expected 96 for version 2" },
		/* a version 1 header is 80 bytes: this one's size and checksum do not fit it */
		{ "v1-header-size", 8, 1, SIZE_MAX, "header size 96, expected 80 for version 1" },
		{ "phys-starttime", 16, MR_MON_TARGET_PHYS, 0, "a process start time in a physical record" },
		{ "no-samples", sp + 12, 0, snap, "snapshot of no samples" },
		{ "header-crc", 24, 7, SIZE_MAX, "header checksum mismatch" },
		{ "kind", 16, 9, 0, "unknown target kind 9" },
		{ "zero-sample", 24, 0, 0, "zero sampling" },
		{ "chunk-crc", sp + 16 + 20, 99, SIZE_MAX, "chunk checksum mismatch" },
		{ "chunk-type", note, 77, note, "unknown chunk type 77" },
		{ "chunk-huge", note + 4, 0x7fffffff, SIZE_MAX, "over the" },
		{ "region-count", sp + 8, 4, snap, "snapshot says 4 regions" },
		/* region 1 starts before region 0 ends: [0x1000,0x5000) [0x4000,0x9000) */
		{ "overlap", sp + 16 + 24, 0x4000, snap, "region 1 [0x4000, 0x9000) is empty or overlaps" },
		/* region 0 empty: [0x1000, 0x1000) */
		{ "empty-region", sp + 16 + 8, 0x1000, snap, "region 0 [0x1000, 0x1000)" },
	};
	size_t len, i;
	unsigned char *orig = make_file(2, &len), *b = malloc(len);

	for (i = 0; i < MR_ARRAY_SIZE(cases); i++) {
		struct mr_rec rec;
		int err;

		print_message("bad file: %s\n", cases[i].name);
		memcpy(b, orig, len);
		wr32(b + cases[i].off, cases[i].val);
		if (cases[i].crc_at != SIZE_MAX)
			fix_crc(b, cases[i].crc_at);
		err = mr_rec_parse(b, len, "bad.rec", &rec);
		assert_int_equal(err, -EINVAL);
		if (!strstr(mr_last_error(), cases[i].msg))
			fail_msg("%s: '%s' lacks '%s'", cases[i].name, mr_last_error(), cases[i].msg);
		assert_non_null(strstr(mr_last_error(), "bad.rec: "));
		assert_null(strchr(mr_last_error(), '\n'));
	}
	/* shorter than a header, and empty */
	{
		struct mr_rec rec;

		assert_int_equal(mr_rec_parse(orig, 40, "short.rec", &rec), -EINVAL);
		assert_non_null(strstr(mr_last_error(), "header cut short"));
		assert_int_equal(mr_rec_parse(orig, 0, "empty.rec", &rec), -EINVAL);
	}
	/* time going backwards between snapshots */
	{
		struct mr_rec rec;
		size_t second = 96 + 12 + 27 + 12 + 16 + 3 * MR_REC_REGION_BYTES;

		memcpy(b, orig, len);
		wr32(b + second + 8, 1);	/* time_us low word of snapshot 2: 1 us */
		wr32(b + second + 12, 0);
		fix_crc(b, second);
		assert_int_equal(mr_rec_parse(b, len, "t.rec", &rec), -EINVAL);
		assert_non_null(strstr(mr_last_error(), "time goes backwards"));
	}
	free(b);
	free(orig);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_writer_starttime),
		cmocka_unit_test(test_read_v1),
		cmocka_unit_test(test_report_partial),
		cmocka_unit_test(test_torn_tail),
		cmocka_unit_test(test_bad_files),
	};
	int fd = mkstemp(path), ret;

	if (fd < 0)
		return 99;
	close(fd);
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	unlink(path);
	return ret;
}
