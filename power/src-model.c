/* Energy source `model`: where no DRAM energy counter exists (VMs, AMD, client
 * parts), the power model per NUMA node: every online region active, or, once
 * residency is known, the sum of the node's regions. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "power/energy.h"
#include "power/model.h"

/* The model counts energy as "raw" nJ from a clock: power_mw x elapsed_us. */
struct model_priv {
	struct timespec t0;
	double node_mw[MR_ENERGY_MAX_SOCKETS];
};

/* The counter of @node (a region without a node counts on node 0), or nr_counters. */
static unsigned node_counter(const struct mr_energy_source *src, int node)
{
	unsigned j;

	if (node < 0)
		node = 0;
	for (j = 0; j < src->nr_counters; j++)
		if (src->counters[j].socket == node)
			break;
	return j;
}

/* What the figures are: which powers, and whether residency was applied. */
static void set_detail(struct mr_energy_source *src, const struct mr_power_model *m,
		       const char *residency)
{
	snprintf(src->detail, sizeof(src->detail), "modelled, %s, %s", residency,
		 m->nr_regions && m->regions[0].from_mpst ? "MPST power states" : m->figures->name);
}

static int model_open(struct mr_energy_source *src)
{
	struct mr_region_map map;
	struct mr_power_model m;
	struct model_priv *priv;
	char map_why[200], dmi_why[256];
	unsigned i, j;
	int ret;

	ret = mr_power_model_load(&m, &map, map_why, sizeof(map_why), dmi_why, sizeof(dmi_why));
	if (ret)
		return ret;
	if (map_why[0])
		mr_energy_note(src, "model: regions are NUMA nodes (region discovery: %s)",
			       map_why);
	if (dmi_why[0] && m.nr_regions && !m.regions[0].from_mpst)
		mr_energy_note(src, "model: no DMI memory devices (%s): devices by capacity",
			       dmi_why);
	priv = calloc(1, sizeof(*priv));
	if (!priv) {
		mr_power_model_destroy(&m);
		mr_region_map_destroy(&map);
		return mr_error(-ENOMEM, "out of memory");
	}
	for (i = 0; i < m.nr_regions; i++) {
		const struct mr_region_power *p = &m.regions[i];
		int node = p->node < 0 ? 0 : p->node;

		j = node_counter(src, node);
		if (j == src->nr_counters) {
			if (j == MR_ENERGY_MAX_SOCKETS)
				continue;
			src->counters[j].socket = node;
			snprintf(src->counters[j].label, sizeof(src->counters[j].label),
				 "node %d (model)", node);
			src->counters[j].uj_per_raw = 1e-3;	/* raw is nJ */
			src->counters[j].range_raw = 0;
			src->nr_counters++;
		}
		/* No access data here: online regions active, offline ones idle. */
		priv->node_mw[j] += p->offline ? p->low_mw : p->active_mw;
	}
	for (i = 0; i < m.nr_notes; i++)
		mr_energy_note(src, "model: %s", m.notes[i]);
	set_detail(src, &m, "every online region active");
	mr_power_model_destroy(&m);
	mr_region_map_destroy(&map);
	clock_gettime(CLOCK_MONOTONIC, &priv->t0);
	src->priv = priv;
	return 0;
}

static int model_read(struct mr_energy_source *src)
{
	struct model_priv *priv = src->priv;
	struct timespec now;
	double us;
	unsigned i;

	clock_gettime(CLOCK_MONOTONIC, &now);
	us = (double)(now.tv_sec - priv->t0.tv_sec) * 1e6 +
	     (double)(now.tv_nsec - priv->t0.tv_nsec) / 1e3;
	for (i = 0; i < src->nr_counters; i++)
		src->counters[i].raw = (uint64_t)(priv->node_mw[i] * us);	/* mW x us = nJ */
	return 0;
}

static void model_close(struct mr_energy_source *src)
{
	free(src->priv);
	src->priv = NULL;
}

void mr_energy_model_set_regions(struct mr_energy_source *src, const struct mr_power_model *m,
				 const struct mr_region_energy *e)
{
	unsigned i, j;

	if (src->ops != &mr_energy_model_ops)
		return;
	for (j = 0; j < src->nr_counters; j++)
		src->counters[j].energy_uj = 0;
	/* A region whose node has no counter (beyond MR_ENERGY_MAX_SOCKETS nodes) is left
	 * out here, and the report shows it as not attributed. */
	for (i = 0; i < m->nr_regions; i++) {
		j = node_counter(src, m->regions[i].node);
		if (j < src->nr_counters)
			src->counters[j].energy_uj += e[i].energy_uj;
	}
	set_detail(src, m, "per region with low-power residency from the access data");
}

const struct mr_energy_ops mr_energy_model_ops = {
	.name = "model",
	.description = "the DRAM power model (no hardware counter)",
	.measured = false,
	.open = model_open,
	.read = model_read,
	.close = model_close,
};
