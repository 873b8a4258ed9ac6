/* The `numa` source: one region a NUMA node with memory, its ranges the node's memory
 * blocks merged. On kernels without memory hot-plug (no blocks), the region's size is
 * the node's MemTotal and its span the union of its zones in /proc/zoneinfo, or unknown.
 * CPU-less (CXL-like) nodes are regions like any other. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/root.h"
#include "regions/source.h"

#define ZONEINFO "/proc/zoneinfo"
/* Per-CPU pagesets make zoneinfo grow with the CPUs: ~1 MiB on a 256-CPU machine. */
#define ZONEINFO_MAX_BYTES (64u << 20)

/* One "Node N, zone NAME" section of /proc/zoneinfo: [start_pfn, start_pfn + spanned). */
struct zone_span {
	int node;
	uint64_t start_pfn, spanned_pages;
};

/*
 * The zones of /proc/zoneinfo that give both `start_pfn:` and `spanned`, in file order:
 *   Node 0, zone    DMA32
 *     pages free     3840
 *           spanned  1044480
 *     ...
 *     start_pfn:           4096
 * An absent or unreadable file is no zones, not an error: the spans are then unknown.
 */
static int read_zone_spans(struct zone_span **spans, unsigned *nr_spans)
{
	struct zone_span cur = { .node = -1 }, *s = NULL, *ns;
	bool have_start = false, have_spanned = false;
	char *data, *line, *save = NULL;
	unsigned long long v;
	unsigned nr = 0;
	int node, last;

	*spans = NULL;
	*nr_spans = 0;
	if (mr_root_read_file(ZONEINFO, ZONEINFO_MAX_BYTES, &data, NULL)) {
		mr_clear_error();
		return 0;
	}
	/* The last pass (line NULL) closes the last zone. */
	for (line = strtok_r(data, "\n", &save), last = 0; !last;
	     line = strtok_r(NULL, "\n", &save)) {
		last = !line;
		if (line && sscanf(line, " spanned %llu", &v) == 1) {
			cur.spanned_pages = v;
			have_spanned = true;
		} else if (line && sscanf(line, " start_pfn: %llu", &v) == 1) {
			cur.start_pfn = v;
			have_start = true;
		} else if (!line || sscanf(line, "Node %d, zone", &node) == 1) {
			if (cur.node >= 0 && have_start && have_spanned && cur.spanned_pages) {
				ns = realloc(s, (nr + 1) * sizeof(*s));
				if (!ns) {
					free(s);
					free(data);
					return mr_error(-ENOMEM, "out of memory");
				}
				s = ns;
				s[nr++] = cur;
			}
			cur = (struct zone_span){ .node = line ? node : -1 };
			have_start = have_spanned = false;
		}
	}
	free(data);
	*spans = s;
	*nr_spans = nr;
	return 0;
}

/* "0,2" into @buf: the nodes of @nodes[0..nr) (for notes). */
static void format_nodes(const int *nodes, unsigned nr, char *buf, size_t len)
{
	size_t off = 0;
	unsigned i;

	buf[0] = '\0';
	for (i = 0; i < nr && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%d", i ? "," : "", nodes[i]);
}

/* No memory blocks: each node with memory is a region of its MemTotal, spanning its
 * zones where /proc/zoneinfo gives them. */
static int nodes_without_blocks(struct mr_region_map *map, const struct mr_machine *m)
{
	uint64_t page_bytes = (uint64_t)sysconf(_SC_PAGESIZE);
	unsigned i, j, nr_spans, nr_unknown = 0, nr_bad = 0;
	struct zone_span *spans;
	struct mr_region *r;
	char list[256];
	int *unknown, ret;

	for (i = 0; i < m->nr_nodes && !m->nodes[i].total_bytes; i++)
		;
	if (i == m->nr_nodes)
		return mr_error(-ENOENT, "no memory blocks under /sys/devices/system/memory and "
				"no NUMA node with memory (MemTotal of nodeN/meminfo)");
	ret = read_zone_spans(&spans, &nr_spans);
	if (ret)
		return ret;
	unknown = calloc(m->nr_nodes, sizeof(*unknown));
	if (!unknown) {
		free(spans);
		return mr_error(-ENOMEM, "out of memory");
	}
	for (i = 0; i < m->nr_nodes; i++) {
		if (!m->nodes[i].total_bytes)
			continue;	/* a memoryless node (CPUs only) */
		r = mr_region_new(map);
		if (!r) {
			ret = -ENOMEM;
			goto out;
		}
		r->node = m->nodes[i].node;
		for (j = 0; j < nr_spans; j++) {
			if (spans[j].node != r->node)
				continue;
			/* Untrusted numbers: a span past 2^64 bytes is dropped, said below. */
			if (spans[j].start_pfn > UINT64_MAX / page_bytes ||
			    spans[j].spanned_pages > UINT64_MAX / page_bytes ||
			    mr_region_add_range(r, spans[j].start_pfn * page_bytes,
						spans[j].spanned_pages * page_bytes)) {
				mr_clear_error();
				nr_bad++;
			}
		}
		/* mr_region_add_range summed the spans, holes included: the size is what
		 * the node holds. */
		r->size_bytes = m->nodes[i].total_bytes;
		if (!mr_region_span_known(r))
			unknown[nr_unknown++] = r->node;
	}
	mr_region_note(map, "numa: no memory blocks under /sys/devices/system/memory (a kernel "
		       "without memory hot-plug): region sizes are the nodes' MemTotal "
		       "(nodeN/meminfo), spans the nodes' zones in " ZONEINFO " (start_pfn, "
		       "spanned: holes included)");
	if (nr_bad)
		mr_region_note(map, "numa: %u zone%s of " ZONEINFO " dropped: the span does not fit "
			       "in 64 bits", nr_bad, nr_bad == 1 ? "" : "s");
	if (nr_unknown) {
		format_nodes(unknown, nr_unknown, list, sizeof(list));
		mr_region_note(map, "numa: physical span unknown for node%s %s (%s): no address "
			       "maps to %s, occupancy is per node, nothing can go offline",
			       nr_unknown == 1 ? "" : "s", list,
			       nr_spans || mr_root_exists(ZONEINFO) ? "not in " ZONEINFO :
			       "no " ZONEINFO, nr_unknown == 1 ? "its region" : "their regions");
	}
out:
	free(unknown);
	free(spans);
	return ret;
}

static int numa_discover(struct mr_region_map *map, const struct mr_machine *m,
			 const struct mr_discover_opts *opts)
{
	unsigned i, j, nr_mem_nodes = 0;
	struct mr_region *r;
	int ret;

	if (!m->nr_nodes)
		return mr_error(-ENOENT, "no NUMA nodes under /sys/devices/system/node");
	/* Without blocks neither `blocks` nor `fixed` finds ranges: the nodes are the
	 * last resort, even a single one. */
	if (!m->nr_blocks)
		return nodes_without_blocks(map, m);
	for (i = 0; i < m->nr_nodes; i++)
		for (j = 0; j < m->nr_blocks; j++)
			if (m->blocks[j].node == m->nodes[i].node) {
				nr_mem_nodes++;
				break;
			}
	/* One node is one region: no boundaries worth the name, so `auto` goes on. */
	if (opts->source == MR_SOURCE_AUTO && nr_mem_nodes < 2)
		return mr_error(-ENOENT, "%u NUMA node%s with memory", nr_mem_nodes,
				nr_mem_nodes == 1 ? "" : "s");
	for (i = 0; i < m->nr_nodes; i++) {
		r = NULL;
		for (j = 0; j < m->nr_blocks; j++) {
			if (m->blocks[j].node != m->nodes[i].node)
				continue;
			if (!r) {
				r = mr_region_new(map);
				if (!r)
					return -ENOMEM;
				r->node = m->nodes[i].node;
			}
			ret = mr_region_add_range(r, m->blocks[j].id * m->block_size_bytes,
						  m->block_size_bytes);
			if (ret)
				return ret;
		}
	}
	if (!map->nr_regions)
		return mr_error(-ENOENT, "no memory block belongs to a NUMA node");
	return 0;
}

const struct mr_region_source mr_src_numa = {
	.name = "numa",
	.id = MR_SOURCE_NUMA,
	.discover = numa_discover,
};
