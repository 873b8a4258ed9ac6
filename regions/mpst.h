/* The ACPI MPST (Memory Power State Table, ACPI 6.x section 5.2.21) parser: bytes in,
 * a checked table out. Pure: no I/O, so the fuzz target and the tests call it directly. */
#ifndef MR_REGIONS_MPST_H
#define MR_REGIONS_MPST_H

#include <stddef.h>
#include <stdint.h>

#define MR_MPST_HEADER_BYTES	36u	/* the ACPI table header */
#define MR_MPST_FIXED_BYTES	44u	/* header + PCC id, reserved, node count, reserved */
#define MR_MPST_NODE_BYTES	32u	/* a power node without its states and components */
#define MR_MPST_CHAR_BYTES	28u	/* one power state characteristics structure */
#define MR_MPST_CHAR_ID		0x41u	/* structure id 1 (bits 5:0), revision 1 (bits 7:6) */
/* The parser keeps at most this many warnings, then counts the rest. */
#define MR_MPST_MAX_WARNINGS	32u

/* struct mr_mpst_state - a power node's power state: value and characteristics index. */
struct mr_mpst_state {
	uint8_t state;
	uint8_t char_index;
};

/*
 * struct mr_mpst_node - one power node structure.
 * @length:	the node's Length field as written (0 from iasl); the parser derives the
 *		real size from the counts.
 * @range_address, @range_length: the physical range [address, address + length), bytes.
 */
struct mr_mpst_node {
	uint8_t flags;			/* MR_MPST_* of region.h */
	uint16_t node_id;
	uint32_t length;
	uint64_t range_address;
	uint64_t range_length;
	uint32_t nr_states;
	uint32_t nr_components;
	struct mr_mpst_state *states;
	uint16_t *components;
};

/* struct mr_mpst_char - a power state characteristics structure. */
struct mr_mpst_char {
	uint8_t id;			/* 0x41 by the specification */
	uint8_t flags;			/* MR_PSTATE_* of region.h */
	uint32_t average_power_mw;
	uint32_t power_saving_mw;
	uint64_t exit_latency_ns;
};

/*
 * struct mr_mpst - a parsed table.
 * @table_length: the header's length (what was parsed; bytes after it are ignored).
 * @warnings:	one line each, for what firmware got wrong in a table that is still
 *		usable (the checks fwts' `mpst` test makes, and a checksum mismatch).
 * @nr_dropped_warnings: warnings past MR_MPST_MAX_WARNINGS, counted, not kept.
 */
struct mr_mpst {
	uint8_t revision;
	uint8_t pcc_id;
	uint32_t table_length;
	struct mr_mpst_node *nodes;
	unsigned nr_nodes;
	struct mr_mpst_char *chars;
	unsigned nr_chars;
	char **warnings;
	unsigned nr_warnings;
	unsigned nr_dropped_warnings;
};

/* "mpst.c" */

/*
 * Parse @len bytes of an MPST. Every count and length in @buf is untrusted.
 * Returns 0 (with @out filled, warnings included), or -EINVAL (a table that cannot be
 * used: truncated, wrong signature, header length past the buffer, counts or lengths
 * running past the end, a zero-size or overflowing range) or -ENOMEM, with mr_error()
 * set to one line that does not name the file: the caller prefixes it.
 * @out is always safe to pass to mr_mpst_free() afterwards.
 */
int mr_mpst_parse(const void *buf, size_t len, struct mr_mpst *out);
void mr_mpst_free(struct mr_mpst *mpst);

#endif
