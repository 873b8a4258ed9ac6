/* The MPST parser: every count and length is checked against the table before it is
 * used, so a bad table gives one error line and a usable-but-wrong one gives warnings. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "regions/mpst.h"

/* Little-endian readers; the caller has checked the bounds. */
static uint16_t le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

static void MR_PRINTF(2, 3) warn(struct mr_mpst *m, const char *fmt, ...)
{
	char **w;
	va_list ap;
	char *s;

	if (m->nr_warnings >= MR_MPST_MAX_WARNINGS) {
		m->nr_dropped_warnings++;
		return;
	}
	w = realloc(m->warnings, (m->nr_warnings + 1) * sizeof(*w));
	if (!w) {
		m->nr_dropped_warnings++;
		return;
	}
	m->warnings = w;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (!s) {
		m->nr_dropped_warnings++;
		return;
	}
	m->warnings[m->nr_warnings++] = s;
}

void mr_mpst_free(struct mr_mpst *mpst)
{
	unsigned i;

	for (i = 0; i < mpst->nr_nodes; i++) {
		free(mpst->nodes[i].states);
		free(mpst->nodes[i].components);
	}
	free(mpst->nodes);
	free(mpst->chars);
	for (i = 0; i < mpst->nr_warnings; i++)
		free(mpst->warnings[i]);
	free(mpst->warnings);
	memset(mpst, 0, sizeof(*mpst));
}

/* One power node at @p with @avail bytes left in the table; returns its size or -errno. */
static long parse_node(struct mr_mpst *m, unsigned idx, const uint8_t *p, size_t avail,
		       size_t off)
{
	struct mr_mpst_node *n = &m->nodes[idx];
	uint64_t need, end;
	uint32_t i;

	if (avail < MR_MPST_NODE_BYTES)
		return mr_error(-EINVAL, "power node %u at offset %zu: truncated "
				"(%zu of %u bytes left in the table)",
				idx, off, avail, MR_MPST_NODE_BYTES);
	n->flags = p[0];
	n->node_id = le16(p + 2);
	n->length = le32(p + 4);
	n->range_address = le64(p + 8);
	n->range_length = le64(p + 16);
	n->nr_states = le32(p + 24);
	n->nr_components = le32(p + 28);
	/* 64-bit arithmetic: two u32 counts times 2 cannot overflow it. */
	need = MR_MPST_NODE_BYTES + 2 * (uint64_t)n->nr_states + 2 * (uint64_t)n->nr_components;
	if (need > avail)
		return mr_error(-EINVAL, "power node %u (id %u) at offset %zu: %u power states "
				"and %u components need %llu bytes, only %zu left in the table",
				idx, n->node_id, off, n->nr_states, n->nr_components,
				(unsigned long long)need, avail);
	if (n->range_length == 0)
		return mr_error(-EINVAL, "power node %u (id %u): zero-size range at 0x%llx",
				idx, n->node_id, (unsigned long long)n->range_address);
	if (!mr_add_u64(n->range_address, n->range_length, &end))
		return mr_error(-EINVAL, "power node %u (id %u): range 0x%llx + 0x%llx "
				"overflows 64 bits", idx, n->node_id,
				(unsigned long long)n->range_address,
				(unsigned long long)n->range_length);

	if (n->length != need)
		warn(m, "power node %u (id %u): Length is %u, expected %llu "
		     "(32 + 2 x %u states + 2 x %u components)", idx, n->node_id, n->length,
		     (unsigned long long)need, n->nr_states, n->nr_components);
	if (p[1])
		warn(m, "power node %u (id %u): reserved byte is 0x%02x, not 0",
		     idx, n->node_id, p[1]);
	if (n->flags & 0xf8u)
		warn(m, "power node %u (id %u): reserved flag bits 3-7 set (flags 0x%02x)",
		     idx, n->node_id, n->flags);

	if (n->nr_states) {
		n->states = calloc(n->nr_states, sizeof(*n->states));
		if (!n->states)
			return mr_error(-ENOMEM, "out of memory");
	}
	for (i = 0; i < n->nr_states; i++) {
		n->states[i].state = p[MR_MPST_NODE_BYTES + 2 * i];
		n->states[i].char_index = p[MR_MPST_NODE_BYTES + 2 * i + 1];
	}
	if (n->nr_components) {
		n->components = calloc(n->nr_components, sizeof(*n->components));
		if (!n->components)
			return mr_error(-ENOMEM, "out of memory");
	}
	for (i = 0; i < n->nr_components; i++)
		n->components[i] = le16(p + MR_MPST_NODE_BYTES + 2 * (size_t)n->nr_states + 2 * i);
	return (long)need;
}

static void parse_char(struct mr_mpst *m, unsigned idx, const uint8_t *p)
{
	struct mr_mpst_char *c = &m->chars[idx];

	c->id = p[0];
	c->flags = p[1];
	c->average_power_mw = le32(p + 4);
	c->power_saving_mw = le32(p + 8);
	c->exit_latency_ns = le64(p + 12);
	if (c->id != MR_MPST_CHAR_ID)
		warn(m, "characteristics %u: structure id byte is 0x%02x, expected 0x41 "
		     "(id 1, revision 1)", idx, c->id);
	if (c->flags & 0xf8u)
		warn(m, "characteristics %u: reserved flag bits 3-7 set (flags 0x%02x)",
		     idx, c->flags);
	if (le16(p + 2))
		warn(m, "characteristics %u: reserved field at byte 2 is 0x%04x, not 0",
		     idx, le16(p + 2));
	if (le64(p + 20))
		warn(m, "characteristics %u: reserved field at byte 20 is 0x%llx, not 0",
		     idx, (unsigned long long)le64(p + 20));
}

static int parse(const uint8_t *p, size_t len, struct mr_mpst *m)
{
	size_t off, avail;
	unsigned i, nr_nodes, nr_chars;
	uint8_t sum = 0;
	uint32_t j;
	long n;

	if (len < MR_MPST_HEADER_BYTES)
		return mr_error(-EINVAL, "truncated: %zu bytes, an ACPI table header needs %u",
				len, MR_MPST_HEADER_BYTES);
	if (memcmp(p, "MPST", 4) != 0)
		return mr_error(-EINVAL, "wrong signature \"%c%c%c%c\", expected \"MPST\"",
				p[0] >= 0x20 && p[0] < 0x7f ? p[0] : '?',
				p[1] >= 0x20 && p[1] < 0x7f ? p[1] : '?',
				p[2] >= 0x20 && p[2] < 0x7f ? p[2] : '?',
				p[3] >= 0x20 && p[3] < 0x7f ? p[3] : '?');
	m->table_length = le32(p + 4);
	m->revision = p[8];
	if (m->table_length > len)
		return mr_error(-EINVAL, "truncated: header length is %u bytes, only %zu present",
				m->table_length, len);
	if (m->table_length < MR_MPST_FIXED_BYTES)
		return mr_error(-EINVAL, "truncated: header length %u is less than the %u bytes "
				"of the MPST header", m->table_length, MR_MPST_FIXED_BYTES);
	len = m->table_length;

	for (off = 0; off < len; off++)
		sum = (uint8_t)(sum + p[off]);
	if (sum)
		warn(m, "checksum mismatch: the table's bytes sum to 0x%02x, not 0", sum);

	m->pcc_id = p[36];
	if (p[37] || p[38] || p[39])
		warn(m, "reserved bytes after the PCC id are not 0");
	nr_nodes = le16(p + 40);
	if (le16(p + 42))
		warn(m, "reserved field after the power node count is 0x%04x, not 0",
		     le16(p + 42));

	off = MR_MPST_FIXED_BYTES;
	/* Every node takes at least 32 bytes: refuse a count that cannot fit before
	 * allocating for it. */
	if ((uint64_t)nr_nodes * MR_MPST_NODE_BYTES > len - off)
		return mr_error(-EINVAL, "power node count %u needs at least %llu bytes, "
				"only %zu left in the table", nr_nodes,
				(unsigned long long)nr_nodes * MR_MPST_NODE_BYTES, len - off);
	if (nr_nodes) {
		m->nodes = calloc(nr_nodes, sizeof(*m->nodes));
		if (!m->nodes)
			return mr_error(-ENOMEM, "out of memory");
	}
	for (i = 0; i < nr_nodes; i++) {
		m->nr_nodes = i + 1;	/* so mr_mpst_free frees what this node allocated */
		n = parse_node(m, i, p + off, len - off, off);
		if (n < 0)
			return (int)n;
		off += (size_t)n;
	}

	avail = len - off;
	if (avail < 4)
		return mr_error(-EINVAL, "truncated: the characteristics count at offset %zu "
				"needs 4 bytes, %zu left in the table", off, avail);
	nr_chars = le16(p + off);
	if (le16(p + off + 2))
		warn(m, "reserved field after the characteristics count is 0x%04x, not 0",
		     le16(p + off + 2));
	off += 4;
	avail -= 4;
	if ((uint64_t)nr_chars * MR_MPST_CHAR_BYTES > avail)
		return mr_error(-EINVAL, "%u characteristics structures need %llu bytes, "
				"only %zu left in the table", nr_chars,
				(unsigned long long)nr_chars * MR_MPST_CHAR_BYTES, avail);
	if (nr_chars) {
		m->chars = calloc(nr_chars, sizeof(*m->chars));
		if (!m->chars)
			return mr_error(-ENOMEM, "out of memory");
	}
	m->nr_chars = nr_chars;
	for (i = 0; i < nr_chars; i++, off += MR_MPST_CHAR_BYTES)
		parse_char(m, i, p + off);
	if (off < len)
		warn(m, "%zu bytes after the last characteristics structure", len - off);

	for (i = 0; i < m->nr_nodes; i++)
		for (j = 0; j < m->nodes[i].nr_states; j++)
			if (m->nodes[i].states[j].char_index >= nr_chars)
				warn(m, "power node %u (id %u): state %u names characteristics "
				     "%u, the table has %u", i, m->nodes[i].node_id,
				     m->nodes[i].states[j].state,
				     m->nodes[i].states[j].char_index, nr_chars);
	return 0;
}

int mr_mpst_parse(const void *buf, size_t len, struct mr_mpst *out)
{
	int ret;

	memset(out, 0, sizeof(*out));
	ret = parse(buf, len, out);
	if (ret)
		mr_mpst_free(out);
	return ret;
}
