/* The `numa` source: one region a NUMA node with memory, its ranges the node's memory
 * blocks merged. CPU-less (CXL-like) nodes are regions like any other. */
#include "config.h"

#include <errno.h>

#include "regions/source.h"

static int numa_discover(struct mr_region_map *map, const struct mr_machine *m,
			 const struct mr_discover_opts *opts)
{
	unsigned i, j, nr_mem_nodes = 0;
	struct mr_region *r;
	int ret;

	if (!m->nr_nodes)
		return mr_error(-ENOENT, "no NUMA nodes under /sys/devices/system/node");
	if (!m->nr_blocks)
		return mr_error(-ENOENT, "no memory blocks under /sys/devices/system/memory "
				"to give the nodes' ranges");
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
