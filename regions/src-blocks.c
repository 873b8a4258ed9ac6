/* Memory blocks (/sys/devices/system/memory) and NUMA nodes (/sys/devices/system/node):
 * the machine facts every source shares, and the `blocks` source (one region a block). */
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/root.h"
#include "regions/source.h"

#define MEMORY_DIR "/sys/devices/system/memory"
#define NODE_DIR "/sys/devices/system/node"

/* "memory12" -> 12 for @prefix "memory"; false for anything else. */
static bool name_number(const char *name, const char *prefix, uint64_t *out)
{
	size_t n = strlen(prefix);

	return strncmp(name, prefix, n) == 0 && isdigit((unsigned char)name[n]) &&
	       mr_parse_u64(name + n, out) == 0;
}

/* sysfs writes block_size_bytes and phys_index in hex without "0x". */
static int read_hex(const char *path, uint64_t *out)
{
	char buf[64], *end;
	int ret;

	ret = mr_root_read_str(path, buf, sizeof(buf));
	if (ret)
		return ret;
	errno = 0;
	*out = strtoull(buf, &end, 16);
	if (!buf[0] || *end || errno || buf[0] == '-' || buf[0] == '+' || isspace((unsigned char)buf[0]))
		return mr_error(-EINVAL, "%s: not a hex number: \"%s\"", path, buf);
	return 0;
}

static int cmp_block(const void *a, const void *b)
{
	const struct mr_block *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int cmp_node(const void *a, const void *b)
{
	const struct mr_node_info *x = a, *y = b;

	return x->node - y->node;
}

static struct mr_block *find_block(const struct mr_machine *m, uint64_t id)
{
	struct mr_block key = { .id = id };

	if (!m->nr_blocks)
		return NULL;
	return bsearch(&key, m->blocks, m->nr_blocks, sizeof(*m->blocks), cmp_block);
}

/* "Node 0 MemTotal:  24570000 kB" lines of nodeN/meminfo. */
static void read_node_meminfo(struct mr_node_info *n)
{
	char path[128], *data, *line, *save = NULL;
	unsigned long long kb;
	char key[64];
	int node;

	mr_pathf(path, sizeof(path), NODE_DIR "/node%d/meminfo", n->node);
	if (mr_root_read_file(path, 1 << 16, &data, NULL))
		return;
	for (line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "Node %d %63[^:]: %llu", &node, key, &kb) != 3)
			continue;
		if (strcmp(key, "MemTotal") == 0)
			n->total_bytes = kb * MR_KIB;
		else if (strcmp(key, "MemFree") == 0)
			n->free_bytes = kb * MR_KIB;
		else if (!strcmp(key, "Active") || !strcmp(key, "Inactive") ||
			 !strcmp(key, "Unevictable"))
			n->lru_bytes += kb * MR_KIB;
	}
	free(data);
}

static int load_nodes(struct mr_machine *m)
{
	struct mr_node_info *nodes = NULL, *nn;
	unsigned nr = 0;
	struct dirent *de, *de2;
	char path[128];
	uint64_t v;
	DIR *d, *d2;

	d = mr_root_opendir(NODE_DIR);
	if (!d) {
		mr_clear_error();
		return 0;	/* a kernel without NUMA: no nodes, blocks stay node -1 */
	}
	while ((de = readdir(d))) {
		if (!name_number(de->d_name, "node", &v) || v > INT32_MAX)
			continue;
		nn = realloc(nodes, (nr + 1) * sizeof(*nodes));
		if (!nn) {
			closedir(d);
			free(nodes);
			return mr_error(-ENOMEM, "out of memory");
		}
		nodes = nn;
		memset(&nodes[nr], 0, sizeof(nodes[nr]));
		nodes[nr].node = (int)v;
		nr++;
	}
	closedir(d);
	if (nr)
		qsort(nodes, nr, sizeof(*nodes), cmp_node);
	m->nodes = nodes;
	m->nr_nodes = nr;

	for (nn = nodes; nn < nodes + nr; nn++) {
		d2 = mr_root_opendir(mr_pathf(path, sizeof(path), NODE_DIR "/node%d", nn->node));
		if (!d2) {
			mr_clear_error();
			continue;
		}
		while ((de2 = readdir(d2))) {
			struct mr_block *b;

			if (name_number(de2->d_name, "cpu", &v))
				nn->has_cpus = true;
			else if (name_number(de2->d_name, "memory", &v) && (b = find_block(m, v)))
				b->node = nn->node;
		}
		closedir(d2);
		read_node_meminfo(nn);
	}
	return 0;
}

static int load_blocks(struct mr_machine *m)
{
	struct mr_block *blocks = NULL, *nb;
	char path[160];
	struct dirent *de;
	unsigned nr = 0;
	uint64_t id;
	DIR *d;
	int ret;

	if (!mr_root_exists(MEMORY_DIR "/block_size_bytes"))
		return 0;	/* no memory hotplug: no blocks */
	ret = read_hex(MEMORY_DIR "/block_size_bytes", &m->block_size_bytes);
	if (ret)
		return ret;
	if (!m->block_size_bytes || (m->block_size_bytes & (m->block_size_bytes - 1)))
		return mr_error(-EINVAL, "%s/block_size_bytes: 0x%" PRIx64 " is not a power of two",
				MEMORY_DIR, m->block_size_bytes);
	d = mr_root_opendir(MEMORY_DIR);
	if (!d)
		return -errno ? -errno : -EIO;
	while ((de = readdir(d))) {
		struct mr_block *b;

		if (!name_number(de->d_name, "memory", &id))
			continue;
		nb = realloc(blocks, (nr + 1) * sizeof(*blocks));
		if (!nb) {
			free(blocks);
			closedir(d);
			return mr_error(-ENOMEM, "out of memory");
		}
		blocks = nb;
		b = &blocks[nr++];
		memset(b, 0, sizeof(*b));
		b->id = id;
		b->node = -1;
		/* phys_index names the block's first section group: the id, in hex. */
		if (read_hex(mr_pathf(path, sizeof(path), MEMORY_DIR "/%s/phys_index", de->d_name),
			     &id) == 0)
			b->id = id;
		if (mr_root_read_str(mr_pathf(path, sizeof(path), MEMORY_DIR "/%s/state", de->d_name),
				     b->state, sizeof(b->state)))
			strcpy(b->state, "unknown");
		if (mr_root_read_str(mr_pathf(path, sizeof(path), MEMORY_DIR "/%s/valid_zones",
					      de->d_name), b->zones, sizeof(b->zones)))
			b->zones[0] = '\0';
	}
	closedir(d);
	mr_clear_error();
	if (nr)
		qsort(blocks, nr, sizeof(*blocks), cmp_block);
	m->blocks = blocks;
	m->nr_blocks = nr;
	/* A block id past 2^64 / block size would overflow every address below. */
	if (nr && blocks[nr - 1].id > UINT64_MAX / m->block_size_bytes - 1)
		return mr_error(-EINVAL, "%s/memory%" PRIu64 ": block id too large for block size "
				"0x%" PRIx64, MEMORY_DIR, blocks[nr - 1].id, m->block_size_bytes);
	return 0;
}

int mr_machine_load(struct mr_machine *m)
{
	int ret;

	memset(m, 0, sizeof(*m));
	ret = load_blocks(m);
	if (!ret)
		ret = load_nodes(m);
	if (ret)
		mr_machine_free(m);
	return ret;
}

void mr_machine_free(struct mr_machine *m)
{
	free(m->blocks);
	free(m->nodes);
	memset(m, 0, sizeof(*m));
}

int mr_machine_ranges(const struct mr_machine *m, struct mr_range **ranges, unsigned *nr_ranges)
{
	struct mr_range *r = NULL;
	unsigned i, nr = 0;

	if (m->nr_blocks) {
		r = calloc(m->nr_blocks, sizeof(*r));
		if (!r)
			return mr_error(-ENOMEM, "out of memory");
	}
	for (i = 0; i < m->nr_blocks; i++) {
		uint64_t start = m->blocks[i].id * m->block_size_bytes;

		if (nr && r[nr - 1].start + r[nr - 1].size == start)
			r[nr - 1].size += m->block_size_bytes;
		else
			r[nr++] = (struct mr_range){ start, m->block_size_bytes };
	}
	*ranges = r;
	*nr_ranges = nr;
	return 0;
}

static int blocks_discover(struct mr_region_map *map, const struct mr_machine *m,
			   const struct mr_discover_opts *opts)
{
	struct mr_region *r;
	unsigned i;
	int ret;

	if (!m->nr_blocks)
		return mr_error(-ENOENT, "no memory blocks under " MEMORY_DIR);
	for (i = 0; i < m->nr_blocks; i++) {
		r = mr_region_new(map);
		if (!r)
			return -ENOMEM;
		ret = mr_region_add_range(r, m->blocks[i].id * m->block_size_bytes,
					  m->block_size_bytes);
		if (ret)
			return ret;
	}
	return 0;
}

const struct mr_region_source mr_src_blocks = {
	.name = "blocks",
	.id = MR_SOURCE_BLOCKS,
	.discover = blocks_discover,
};
