/* hwloc's part of the map: what it knows that sysfs does not say directly, per node:
 * its kind (NUMA node subtype such as DRAM, HBM or NVM) and its memory attributes
 * (bandwidth and latency from the firmware's HMAT). hwloc reads the same root, through
 * HWLOC_FSROOT. Boundaries, nodes and blocks come from sysfs, never from here. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <hwloc.h>

#include "common/root.h"
#include "regions/source.h"

/* setenv(@name, @value) for the duration of a load: save_env, then restore_env. */
struct saved_env {
	const char *name;
	char *value;		/* NULL: was unset */
};

static int save_env(struct saved_env *s, const char *name, const char *value)
{
	const char *old = getenv(name);

	s->name = name;
	s->value = old ? strdup(old) : NULL;
	if (old && !s->value)
		return -ENOMEM;
	return setenv(name, value, 1) < 0 ? -errno : 0;
}

static void restore_env(struct saved_env *s)
{
	if (s->value)
		setenv(s->name, s->value, 1);
	else
		unsetenv(s->name);
	free(s->value);
}

/* Point hwloc at the root for one load; the caller's environment is put back after. */
static int load_topology(hwloc_topology_t *topo)
{
	struct saved_env fsroot, hide;
	int ret = 0;

	if (hwloc_topology_init(topo) < 0)
		return -ENOMEM;
	ret = save_env(&fsroot, "HWLOC_FSROOT", mr_root_get());
	/* hwloc's complaints about a machine would go to stderr: the notes say enough. */
	if (!ret)
		ret = save_env(&hide, "HWLOC_HIDE_ERRORS", "2");
	if (ret) {
		hwloc_topology_destroy(*topo);
		restore_env(&fsroot);
		return ret;
	}
	/* A captured machine is not this one: never let hwloc ask the real CPU. */
	if (mr_root_is_fixture())
		hwloc_topology_set_components(*topo, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "x86");
	if (hwloc_topology_load(*topo) < 0) {
		ret = errno ? -errno : -EIO;
		hwloc_topology_destroy(*topo);
	}
	restore_env(&hide);
	restore_env(&fsroot);
	return ret;
}

/* The attribute's value from the initiator that has the best one (0: none). */
static uint64_t best_value(hwloc_topology_t topo, hwloc_memattr_id_t attr, hwloc_obj_t node)
{
	struct hwloc_location init;
	hwloc_uint64_t value = 0;

	if (hwloc_memattr_get_best_initiator(topo, attr, node, 0, &init, &value) < 0)
		return 0;
	return value;
}

void mr_hwloc_annotate(struct mr_region_map *map)
{
	unsigned nr_nodes, nr_kinds = 0, nr_attrs = 0;
	hwloc_topology_t topo;
	struct mr_region *r;
	hwloc_obj_t obj;
	int ret;

	/* hwloc's Linux backend gives up (and says so on stderr) without the CPU
	 * topology; a capture that lacks it gets a note instead. */
	if (!mr_root_exists("/sys/devices/system/cpu")) {
		mr_region_note(map, "hwloc skipped: no /sys/devices/system/cpu under the root "
			       "(hwloc needs the CPU topology)");
		return;
	}
	ret = load_topology(&topo);
	if (ret) {
		mr_region_note(map, "hwloc skipped: loading the topology failed (%s)",
			       strerror(-ret));
		return;
	}
	nr_nodes = (unsigned)hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
	if (!nr_nodes) {
		mr_region_note(map, "hwloc skipped: its topology has no NUMA node");
		hwloc_topology_destroy(topo);
		return;
	}
	mr_for_each_region(map, r) {
		if (r->node < 0)
			continue;
		obj = hwloc_get_numanode_obj_by_os_index(topo, (unsigned)r->node);
		if (!obj)
			continue;
		if (obj->subtype) {
			snprintf(r->node_kind, sizeof(r->node_kind), "%s", obj->subtype);
			nr_kinds++;
		}
		/* hwloc gives bandwidth in MiB/s and latency in ns. */
		r->bandwidth_mibps = best_value(topo, HWLOC_MEMATTR_ID_BANDWIDTH, obj);
		r->latency_ns = best_value(topo, HWLOC_MEMATTR_ID_LATENCY, obj);
		if (r->bandwidth_mibps || r->latency_ns)
			nr_attrs++;
	}
	mr_region_note(map, "hwloc: %u NUMA node%s; node kinds for %u region%s, bandwidth or "
		       "latency attributes for %u (firmware HMAT)", nr_nodes,
		       nr_nodes == 1 ? "" : "s", nr_kinds, nr_kinds == 1 ? "" : "s", nr_attrs);
	hwloc_topology_destroy(topo);
}
