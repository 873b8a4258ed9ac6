/* Unit tests of the MPST parser (regions/mpst.c): good tables, every kind of bad one,
 * and every warning (the checks fwts' `mpst` test makes, and a few more). Tables are
 * built here field by field, in the layout of ACPI 6.x section 5.2.21. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "common/util.h"
#include "regions/mpst.h"

/* A table under construction. */
struct tb {
	uint8_t buf[8192];
	size_t len;
};

static void put(struct tb *t, uint64_t v, unsigned bytes)
{
	unsigned i;

	for (i = 0; i < bytes; i++)
		t->buf[t->len++] = (uint8_t)(v >> (8 * i));
}

static void set(struct tb *t, size_t off, uint64_t v, unsigned bytes)
{
	unsigned i;

	for (i = 0; i < bytes; i++)
		t->buf[off + i] = (uint8_t)(v >> (8 * i));
}

/* The ACPI header (length and checksum filled by finish()) and the MPST header. */
static void header(struct tb *t, unsigned nr_nodes)
{
	memset(t, 0, sizeof(*t));
	memcpy(t->buf, "MPST", 4);
	t->len = 8;
	put(t, 1, 1);			/* revision */
	put(t, 0, 1);			/* checksum */
	memcpy(t->buf + 10, "MEMREG", 6);
	memcpy(t->buf + 16, "UNITTEST", 8);
	t->len = 36;
	put(t, 0, 1);			/* PCC id */
	put(t, 0, 3);
	put(t, nr_nodes, 2);
	put(t, 0, 2);
}

/* A node with @states states (state i uses characteristics i) and @comps components;
 * @length < 0 writes the correct Length. Returns the node's offset. */
static size_t node(struct tb *t, uint8_t flags, uint16_t id, long length, uint64_t addr,
		   uint64_t size, uint32_t states, uint32_t comps)
{
	size_t off = t->len;
	uint32_t i;

	put(t, flags, 1);
	put(t, 0, 1);
	put(t, id, 2);
	put(t, length < 0 ? 32 + 2 * states + 2 * comps : (uint64_t)length, 4);
	put(t, addr, 8);
	put(t, size, 8);
	put(t, states, 4);
	put(t, comps, 4);
	for (i = 0; i < states; i++) {
		put(t, i, 1);
		put(t, i, 1);
	}
	for (i = 0; i < comps; i++)
		put(t, 100 + id * 10 + i, 2);
	return off;
}

/* @n characteristics: i has power 5000 / (i + 1) mW and exit latency 750 * i ns.
 * Returns the offset of the first one. */
static size_t chars(struct tb *t, unsigned n)
{
	size_t off;
	unsigned i;

	put(t, n, 2);
	put(t, 0, 2);
	off = t->len;
	for (i = 0; i < n; i++) {
		put(t, MR_MPST_CHAR_ID, 1);
		put(t, i ? 0x07 : 0x00, 1);
		put(t, 0, 2);
		put(t, 5000 / (i + 1), 4);
		put(t, 5000 - 5000 / (i + 1), 4);
		put(t, 750 * i, 8);
		put(t, 0, 8);
	}
	return off;
}

static void finish(struct tb *t)
{
	uint8_t sum = 0;
	size_t i;

	set(t, 4, t->len, 4);
	t->buf[9] = 0;
	for (i = 0; i < t->len; i++)
		sum = (uint8_t)(sum + t->buf[i]);
	t->buf[9] = (uint8_t)-sum;
}

/* A good two-node table with two states and one component each. */
static void good(struct tb *t)
{
	header(t, 2);
	node(t, 0x03, 0, -1, 0, 1ull << 30, 2, 1);
	node(t, 0x07, 1, -1, 1ull << 30, 1ull << 30, 2, 1);
	chars(t, 2);
	finish(t);
}

static void test_good(void **state)
{
	struct mr_mpst m;
	struct tb t;

	good(&t);
	assert_int_equal(mr_mpst_parse(t.buf, t.len, &m), 0);
	assert_int_equal(m.nr_warnings, 0);
	assert_int_equal(m.table_length, t.len);
	assert_int_equal(m.nr_nodes, 2);
	assert_int_equal(m.nodes[1].node_id, 1);
	assert_int_equal(m.nodes[1].flags, 0x07);
	assert_int_equal(m.nodes[1].range_address, 1ull << 30);
	assert_int_equal(m.nodes[1].range_length, 1ull << 30);
	assert_int_equal(m.nodes[1].nr_states, 2);
	assert_int_equal(m.nodes[1].states[1].state, 1);
	assert_int_equal(m.nodes[1].states[1].char_index, 1);
	assert_int_equal(m.nodes[1].nr_components, 1);
	assert_int_equal(m.nodes[1].components[0], 110);
	assert_int_equal(m.nr_chars, 2);
	assert_int_equal(m.chars[1].id, 0x41);
	assert_int_equal(m.chars[1].flags, 0x07);
	assert_int_equal(m.chars[1].average_power_mw, 2500);
	assert_int_equal(m.chars[1].power_saving_mw, 2500);
	assert_int_equal(m.chars[1].exit_latency_ns, 750);
	mr_mpst_free(&m);
	assert_null(m.nodes);
}

/* No nodes, no characteristics: the smallest table; a node with no states or
 * components; a repeated node id (parsed as two structures, joined by the source). */
static void test_good_edges(void **state)
{
	struct mr_mpst m;
	struct tb t;

	header(&t, 0);
	chars(&t, 0);
	finish(&t);
	assert_int_equal(t.len, 48);
	assert_int_equal(mr_mpst_parse(t.buf, t.len, &m), 0);
	assert_int_equal(m.nr_nodes, 0);
	assert_int_equal(m.nr_warnings, 0);
	mr_mpst_free(&m);

	header(&t, 3);
	node(&t, 0x01, 5, -1, 0, 4096, 0, 0);
	node(&t, 0x01, 7, -1, 8192, 4096, 1, 0);
	node(&t, 0x01, 5, -1, 1ull << 40, 4096, 0, 0);
	chars(&t, 1);
	finish(&t);
	assert_int_equal(mr_mpst_parse(t.buf, t.len, &m), 0);
	assert_int_equal(m.nr_warnings, 0);
	assert_int_equal(m.nr_nodes, 3);
	assert_null(m.nodes[0].states);
	assert_int_equal(m.nodes[2].node_id, 5);
	assert_int_equal(m.nodes[2].range_address, 1ull << 40);
	mr_mpst_free(&m);

	/* The last range that fits: it ends one page below 2^64 (an end of exactly 2^64
	 * cannot be written in 64 bits, so it is refused with the overflows). */
	header(&t, 1);
	node(&t, 0x01, 0, -1, UINT64_MAX - 8191, 4096, 0, 0);
	chars(&t, 0);
	finish(&t);
	assert_int_equal(mr_mpst_parse(t.buf, t.len, &m), 0);
	mr_mpst_free(&m);
}

/* Bytes after the header's length are not the table's: ignored. */
static void test_trailing_garbage_ignored(void **state)
{
	struct mr_mpst m;
	struct tb t;

	good(&t);
	memset(t.buf + t.len, 0xff, 100);
	assert_int_equal(mr_mpst_parse(t.buf, t.len + 100, &m), 0);
	assert_int_equal(m.nr_warnings, 0);
	mr_mpst_free(&m);
}

/* Each bad table: -EINVAL, one line mentioning @want, and nothing left allocated. */
static void expect_error(const struct tb *t, size_t len, const char *want)
{
	struct mr_mpst m;

	memset(&m, 0xa5, sizeof(m));
	if (mr_mpst_parse(t->buf, len, &m) != -EINVAL)
		fail_msg("parsed, expected an error saying \"%s\"", want);
	if (!strstr(mr_last_error(), want))
		fail_msg("error \"%s\" does not say \"%s\"", mr_last_error(), want);
	assert_null(strchr(mr_last_error(), '\n'));
	assert_null(m.nodes);
	assert_null(m.chars);
	assert_null(m.warnings);
	mr_mpst_free(&m);
}

static void test_bad_tables(void **state)
{
	struct tb t;
	size_t off;

	good(&t);
	expect_error(&t, 0, "truncated: 0 bytes");
	expect_error(&t, 35, "truncated: 35 bytes");
	expect_error(&t, t.len - 1, "truncated: header length is");

	good(&t);
	t.buf[0] = 'X';
	expect_error(&t, t.len, "wrong signature \"XPST\"");
	t.buf[0] = 0;
	expect_error(&t, t.len, "wrong signature \"?PST\"");

	good(&t);
	set(&t, 4, 40, 4);	/* header length shorter than the MPST header */
	expect_error(&t, t.len, "less than the 44 bytes");

	header(&t, 2);		/* two nodes said, one present (long enough for two) */
	node(&t, 0x01, 0, -1, 0, 4096, 14, 0);
	chars(&t, 0);
	finish(&t);
	expect_error(&t, t.len, "power node 1 at offset 104: truncated (4 of 32 bytes left");
	good(&t);
	set(&t, 40, 0xffff, 2);
	expect_error(&t, t.len, "power node count 65535 needs at least");

	good(&t);
	set(&t, 44 + 24, 0xffffffffu, 4);	/* node 0's state count */
	expect_error(&t, t.len, "4294967295 power states");
	good(&t);
	set(&t, 44 + 28, 0xffffffffu, 4);	/* node 0's component count */
	expect_error(&t, t.len, "4294967295 components");
	good(&t);
	set(&t, 44 + 38 + 24, 40, 4);		/* node 1: states past the end */
	expect_error(&t, t.len, "power node 1 (id 1)");

	/* The table ends right after the nodes: no characteristics count. */
	header(&t, 1);
	node(&t, 0x01, 0, -1, 0, 4096, 0, 0);
	finish(&t);
	expect_error(&t, t.len, "characteristics count");
	put(&t, 0, 2);
	finish(&t);
	expect_error(&t, t.len, "characteristics count");

	good(&t);
	off = 44 + 2 * 38;
	set(&t, off, 3, 2);	/* three characteristics, two present */
	expect_error(&t, t.len, "3 characteristics structures need 84 bytes, only 56 left");

	good(&t);
	set(&t, 44 + 16, 0, 8);	/* node 0 range length */
	expect_error(&t, t.len, "zero-size range");

	good(&t);
	set(&t, 44 + 38 + 8, UINT64_MAX - 100, 8);	/* node 1 range address */
	expect_error(&t, t.len, "overflows 64 bits");
	set(&t, 44 + 38 + 8, UINT64_MAX - (1ull << 30) + 1, 8);	/* ends at 2^64 */
	expect_error(&t, t.len, "overflows 64 bits");
}

/* Each warning: the table parses, and exactly one warning mentions @want. */
static void expect_warning(const struct tb *t, const char *want)
{
	struct mr_mpst m;
	unsigned i;

	assert_int_equal(mr_mpst_parse(t->buf, t->len, &m), 0);
	if (m.nr_warnings != 1)
		fail_msg("%u warnings, expected 1 (\"%s\"); first: %s", m.nr_warnings, want,
			 m.nr_warnings ? m.warnings[0] : "-");
	for (i = 0; i < m.nr_warnings; i++)
		if (!strstr(m.warnings[i], want))
			fail_msg("warning \"%s\" does not say \"%s\"", m.warnings[i], want);
	mr_mpst_free(&m);
}

static void test_warnings(void **state)
{
	size_t n0, c0;
	struct tb t;

	/* Node Length as iasl writes it (0), and simply wrong. */
	header(&t, 1);
	node(&t, 0x03, 0, 0, 0, 4096, 2, 1);
	chars(&t, 2);
	finish(&t);
	expect_warning(&t, "Length is 0, expected 38");
	header(&t, 1);
	node(&t, 0x03, 0, 40, 0, 4096, 2, 1);
	chars(&t, 2);
	finish(&t);
	expect_warning(&t, "Length is 40, expected 38");

	header(&t, 1);
	n0 = node(&t, 0x03, 0, -1, 0, 4096, 2, 1);
	c0 = chars(&t, 2);
	t.buf[n0 + 1] = 0x5a;
	finish(&t);
	expect_warning(&t, "reserved byte is 0x5a");

	t.buf[n0 + 1] = 0;
	t.buf[n0] = 0x0b;	/* bit 3 */
	finish(&t);
	expect_warning(&t, "power node 0 (id 0): reserved flag bits 3-7 set (flags 0x0b)");
	t.buf[n0] = 0x83;	/* bit 7 */
	finish(&t);
	expect_warning(&t, "flags 0x83");
	t.buf[n0] = 0x03;

	t.buf[c0 + 28] = 0x01;	/* iasl's template id byte */
	finish(&t);
	expect_warning(&t, "characteristics 1: structure id byte is 0x01, expected 0x41");
	t.buf[c0 + 28] = 0x41;

	t.buf[c0 + 1] = 0x10;
	finish(&t);
	expect_warning(&t, "characteristics 0: reserved flag bits 3-7 set");
	t.buf[c0 + 1] = 0;

	set(&t, c0 + 2, 1, 2);
	finish(&t);
	expect_warning(&t, "reserved field at byte 2");
	set(&t, c0 + 2, 0, 2);

	set(&t, c0 + 28 + 20, 1ull << 63, 8);
	finish(&t);
	expect_warning(&t, "characteristics 1: reserved field at byte 20");
	set(&t, c0 + 28 + 20, 0, 8);

	set(&t, 37, 1, 1);
	finish(&t);
	expect_warning(&t, "reserved bytes after the PCC id");
	set(&t, 37, 0, 1);
	set(&t, 42, 9, 2);
	finish(&t);
	expect_warning(&t, "after the power node count is 0x0009");
	set(&t, 42, 0, 2);
	set(&t, c0 - 2, 2, 2);
	finish(&t);
	expect_warning(&t, "after the characteristics count is 0x0002");
	set(&t, c0 - 2, 0, 2);

	finish(&t);
	t.buf[9]++;
	expect_warning(&t, "checksum mismatch");

	/* A state whose characteristics index names no structure. */
	set(&t, n0 + 32 + 3, 7, 1);
	finish(&t);
	expect_warning(&t, "state 1 names characteristics 7, the table has 2");
	set(&t, n0 + 32 + 3, 1, 1);
	set(&t, n0 + 32 + 3, 2, 1);	/* one past the last */
	finish(&t);
	expect_warning(&t, "state 1 names characteristics 2, the table has 2");
	set(&t, n0 + 32 + 3, 1, 1);

	put(&t, 0, 3);
	finish(&t);
	expect_warning(&t, "3 bytes after the last characteristics");
}

/* A table with thousands of problems keeps a bounded number of warnings. */
static void test_warning_cap(void **state)
{
	struct mr_mpst m;
	struct tb t;
	unsigned i;

	header(&t, 200);
	for (i = 0; i < 200; i++)
		node(&t, 0xff, (uint16_t)i, 0, (uint64_t)i << 20, 4096, 0, 0);
	chars(&t, 0);
	finish(&t);
	assert_true(t.len < sizeof(t.buf));
	assert_int_equal(mr_mpst_parse(t.buf, t.len, &m), 0);
	assert_int_equal(m.nr_warnings, MR_MPST_MAX_WARNINGS);
	assert_int_equal(m.nr_warnings + m.nr_dropped_warnings, 400);
	mr_mpst_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_good_edges),
		cmocka_unit_test(test_trailing_garbage_ignored),
		cmocka_unit_test(test_bad_tables),
		cmocka_unit_test(test_warnings),
		cmocka_unit_test(test_warning_cap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
