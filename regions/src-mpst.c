/* The `mpst` source: regions from the firmware's Memory Power State Table, read from
 * the root (/sys/firmware/acpi/tables/MPST) or from a file (--mpst). A power node id
 * that repeats over several ranges is one region. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "common/root.h"
#include "common/sys.h"
#include "regions/mpst.h"
#include "regions/source.h"

#define MPST_PATH "/sys/firmware/acpi/tables/MPST"
/* An MPST of 65535 nodes with a few states each stays far below this. */
#define MPST_MAX_BYTES (16u << 20)

static struct mr_region *find_region(struct mr_region_map *map, int node_id)
{
	unsigned i;

	for (i = 0; i < map->nr_regions; i++)
		if (map->regions[i].mpst_node_id == node_id)
			return &map->regions[i];
	return NULL;
}

static int add_node(struct mr_region_map *map, const struct mr_mpst *t,
		    const struct mr_mpst_node *n)
{
	struct mr_region *r = find_region(map, n->node_id);
	unsigned i;

	if (!r) {
		r = mr_region_new(map);
		if (!r)
			return -ENOMEM;
		r->mpst_node_id = n->node_id;
		r->mpst_flags = n->flags & 0x07u;
		if (n->nr_states) {
			r->states = calloc(n->nr_states, sizeof(*r->states));
			if (!r->states)
				return mr_error(-ENOMEM, "out of memory");
		}
		r->nr_states = n->nr_states;
		for (i = 0; i < n->nr_states; i++) {
			struct mr_power_state *s = &r->states[i];
			unsigned ci = n->states[i].char_index;

			s->state = n->states[i].state;
			if (ci < t->nr_chars) {
				s->has_characteristics = true;
				s->flags = t->chars[ci].flags & 0x07u;
				s->average_power_mw = t->chars[ci].average_power_mw;
				s->power_saving_mw = t->chars[ci].power_saving_mw;
				s->exit_latency_ns = t->chars[ci].exit_latency_ns;
			}
		}
		if (n->nr_components) {
			r->components = calloc(n->nr_components, sizeof(*r->components));
			if (!r->components)
				return mr_error(-ENOMEM, "out of memory");
			memcpy(r->components, n->components,
			       n->nr_components * sizeof(*r->components));
		}
		r->nr_components = n->nr_components;
	}
	return mr_region_add_range(r, n->range_address, n->range_length);
}

static int mpst_discover(struct mr_region_map *map, const struct mr_machine *m,
			 const struct mr_discover_opts *opts)
{
	char host[PATH_MAX], msg[512];
	const char *path;
	struct mr_mpst t;
	char *data;
	size_t len;
	unsigned i;
	int ret;

	if (opts->mpst_file) {
		path = opts->mpst_file;
		ret = mr_read_host_file(path, MPST_MAX_BYTES, &data, &len);
	} else {
		if (!mr_root_exists(MPST_PATH))
			return mr_error(-ENOENT, "no table at " MPST_PATH);
		ret = mr_root_path(host, sizeof(host), MPST_PATH);
		if (ret)
			return ret;
		path = host;
		ret = mr_root_read_file(MPST_PATH, MPST_MAX_BYTES, &data, &len);
	}
	/* The kernel exports the table root-only (0400): an unprivileged run falls back
	 * to the next source, saying why, rather than failing outright. */
	if (ret == -EACCES && !opts->mpst_file)
		return mr_error(-ENOENT, "%s: permission denied (the firmware table is "
				"readable by root only)", path);
	if (ret)
		return ret == -ENOENT ? -EIO : ret;	/* a table that exists but fails: no fallback */
	ret = mr_mpst_parse(data, len, &t);
	free(data);
	if (ret) {
		snprintf(msg, sizeof(msg), "%s", mr_last_error());
		return mr_error(ret == -ENOENT ? -EINVAL : ret, "%s: %s", path, msg);
	}
	for (i = 0; i < t.nr_warnings; i++)
		mr_region_warn(map, "MPST: %s", t.warnings[i]);
	if (t.nr_dropped_warnings)
		mr_region_warn(map, "MPST: %u more warnings not shown", t.nr_dropped_warnings);
	for (i = 0; i < t.nr_nodes && !ret; i++)
		ret = add_node(map, &t, &t.nodes[i]);
	if (!ret && !t.nr_nodes)
		ret = mr_error(-ENOENT, "%s: the table describes no power nodes", path);
	if (!ret)
		mr_region_note(map, "MPST: %u power node structures, %u regions, %u power state "
			       "characteristics", t.nr_nodes, map->nr_regions, t.nr_chars);
	mr_mpst_free(&t);
	return ret;
}

const struct mr_region_source mr_src_mpst = {
	.name = "mpst",
	.id = MR_SOURCE_MPST,
	.discover = mpst_discover,
};
