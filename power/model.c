/* The DRAM power model: the datasheet table, per-region power per state, and
 * per-region energy from residency, calibrated against RAPL when it exists. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/root.h"
#include "power/energy.h"
#include "power/model.h"

/*
 * Per-device figures. The DDR4 row is Micron's MT40A1G8 (8 Gb, x8, die rev. B) at
 * DDR4-2400, from the module table of MTA18ASF2G72HZ (asf18c2gx72hz.pdf rev. F,
 * table 15: 18 devices, two ranks): "all ranks" currents divided by 18, "one rank
 * active, the other in IDD2P" currents as (module - 9 x IDD2P) / 9. tRC from the
 * DDR4-2400 (-2G3) speed grade, tRFC1 (8 Gb) and tREFI from JESD79-4.
 *
 * The DDR5 row is Micron's 16 Gb DDR5 die rev. A (16gb_ddr5_sdram_diereva.pdf,
 * MT60B4G4/MT60B2G8/MT60B1G16), DDR5-4800 column, per device. That sheet was not
 * reachable here: the currents were read where gem5 transcribes them (gem5/gem5,
 * src/python/gem5/components/memory/dram_interfaces/ddr5.py at commit 17291509,
 * class DDR5_4400_4x8), which does not say which width's column they are; they are
 * applied to x8 devices, as gem5's 4x8 interface does. Its tRFC1 (16 Gb, 295 ns) and
 * tREFI (3.9 us) come from Micron's DDR5 core data sheet per the same file; tRC is
 * its DDR5-4400 tRAS 32 ns + tRP 14.545 ns (no DDR5-4800 speed bin found). No IPP
 * (VPP, 1.8 V) current is given: ipp3n is 0, so the row understates by IPP x 1.8 V
 * per device. IDD0 (122 mA) is below IDD3N (142 mA), so the activate term of the
 * access energy counts 0 and an access costs its read burst alone.
 * See docs/energy.md for the table and the derived figures.
 */
const struct mr_dram_figures mr_dram_table[] = {
	{
		.name = "DDR4-2400 8Gb x8 (Micron MT40A1G8)",
		.source = "Micron MTA18ASF2G72HZ data sheet, table 15 (die rev. B); JESD79-4",
		.type = MR_DRAM_DDR4,
		.device_bytes = MR_GIB,
		.access_devices = 8,
		.vdd_v = 1.2, .vpp_v = 2.5,
		.idd0_ma = 48, .idd2n_ma = 34, .idd2p_ma = 25, .idd3n_ma = 43,
		.idd3p_ma = 37, .idd4r_ma = 135, .idd4w_ma = 123, .idd5b_ma = 250,
		.idd6n_ma = 30, .ipp3n_ma = 3,
		.trc_ns = 46.16, .tburst_ns = 8 / 2.4, .trfc_ns = 350, .trefi_ns = 7800,
	},
	{
		.name = "DDR5-4800 16Gb (Micron 16Gb DDR5 die rev. A)",
		.source = "Micron 16Gb DDR5 SDRAM data sheet, die rev. A, DDR5-4800 (primary, "
			  "not reachable here), as read in gem5 src/python/gem5/components/memory/"
			  "dram_interfaces/ddr5.py, commit 17291509bfa5d4fbc9c6b99e46b7550437ad9f2d",
		.type = MR_DRAM_DDR5,
		.device_bytes = 2 * MR_GIB,
		.access_devices = 4,
		.vdd_v = 1.1, .vpp_v = 1.8,
		.idd0_ma = 122, .idd2n_ma = 92, .idd2p_ma = 88, .idd3n_ma = 142,
		.idd3p_ma = 140, .idd4r_ma = 530, .idd4w_ma = 479, .idd5b_ma = 277,
		.idd6n_ma = 102, .ipp3n_ma = 0,
		.trc_ns = 32 + 14.545, .tburst_ns = 16 / 4.8, .trfc_ns = 295, .trefi_ns = 3900,
	},
};
const unsigned mr_dram_table_len = MR_ARRAY_SIZE(mr_dram_table);

const struct mr_dram_figures *mr_dram_figures_for(enum mr_dram_type type)
{
	unsigned i;

	for (i = 0; i < mr_dram_table_len; i++)
		if (mr_dram_table[i].type == type)
			return &mr_dram_table[i];
	return NULL;
}

enum mr_dram_type mr_dram_type_from_smbios(int smbios_type)
{
	switch (smbios_type) {
	case 0x1a:
		return MR_DRAM_DDR4;
	case 0x22:
		return MR_DRAM_DDR5;
	default:
		return MR_DRAM_OTHER;
	}
}

/* The row for @type; a type without one gets the DDR4 row (the model notes it). */
static const struct mr_dram_figures *figures_or_ddr4(enum mr_dram_type type)
{
	const struct mr_dram_figures *f = mr_dram_figures_for(type);

	return f ? f : mr_dram_figures_for(MR_DRAM_DDR4);
}

/* mA x V = mW; mA x V x ns = pJ. */
static double refresh_mw(const struct mr_dram_figures *f)
{
	return (f->idd5b_ma - f->idd3n_ma) * f->vdd_v * f->trfc_ns / f->trefi_ns;
}

double mr_dram_active_mw(const struct mr_dram_figures *f)
{
	return f->idd3n_ma * f->vdd_v + f->ipp3n_ma * f->vpp_v + refresh_mw(f);
}

double mr_dram_powerdown_mw(const struct mr_dram_figures *f)
{
	return f->idd2p_ma * f->vdd_v + f->ipp3n_ma * f->vpp_v + refresh_mw(f);
}

double mr_dram_selfrefresh_mw(const struct mr_dram_figures *f)
{
	return f->idd6n_ma * f->vdd_v;
}

/* Above IDD3N, never below: DDR5's IDD0 loop keeps one bank open where IDD3N keeps
 * them all, so IDD0 - IDD3N is negative there and says nothing about activates. */
static double above_idd3n_ma(const struct mr_dram_figures *f, double idd_ma)
{
	return idd_ma > f->idd3n_ma ? idd_ma - f->idd3n_ma : 0;
}

double mr_dram_access_nj(const struct mr_dram_figures *f)
{
	return (above_idd3n_ma(f, f->idd0_ma) * f->vdd_v * f->trc_ns +
		above_idd3n_ma(f, f->idd4r_ma) * f->vdd_v * f->tburst_ns) / 1000.0;
}

const char *mr_devices_from_name(enum mr_devices_from from)
{
	static const char *const names[NR_MR_DEVICES] = {
		[MR_DEVICES_NONE] = "mpst",
		[MR_DEVICES_DMI] = "dmi",
		[MR_DEVICES_CAPACITY] = "capacity",
		[MR_DEVICES_COMPONENTS] = "components",
	};
	return from < NR_MR_DEVICES ? names[from] : "?";
}

const char *mr_residency_scope_name(enum mr_residency_scope scope)
{
	static const char *const names[NR_MR_RESIDENCY] = {
		[MR_RESIDENCY_NONE] = "none",
		[MR_RESIDENCY_PHYSICAL] = "physical",
		[MR_RESIDENCY_PROCESS] = "process",
	};
	return scope < NR_MR_RESIDENCY ? names[scope] : "?";
}

static void note(struct mr_power_model *m, const char *fmt, ...) MR_PRINTF(2, 3);
static void note(struct mr_power_model *m, const char *fmt, ...)
{
	va_list ap;

	if (m->nr_notes >= MR_ARRAY_SIZE(m->notes))
		return;
	va_start(ap, fmt);
	vsnprintf(m->notes[m->nr_notes++], sizeof(m->notes[0]), fmt, ap);
	va_end(ap);
}

/* SMBIOS type 17 (DSP0134): size at 0x0c (bit 15: KiB units, 0x7fff: extended size
 * in MiB at 0x1c), total width 0x08, data width 0x0a, memory type 0x12. */
int mr_dmi_parse_type17(const uint8_t *raw, size_t len, uint64_t *bytes,
			double *devices, int *type)
{
	unsigned size, total_w, data_w;

	if (len < 0x15 || raw[0] != 17 || raw[1] < 0x15 || raw[1] > len)
		return -EINVAL;
	size = raw[0x0c] | raw[0x0d] << 8;
	total_w = raw[0x08] | raw[0x09] << 8;
	data_w = raw[0x0a] | raw[0x0b] << 8;
	*type = raw[0x12];
	if (size == 0 || size == 0xffff) {
		*bytes = 0;
		*devices = 0;
		return 0;
	}
	if (size == 0x7fff) {
		if (raw[1] < 0x20)
			return -EINVAL;
		*bytes = (uint64_t)(raw[0x1c] | raw[0x1d] << 8 | raw[0x1e] << 16 |
				    (uint32_t)raw[0x1f] << 24) * MR_MIB;
	} else if (size & 0x8000) {
		*bytes = (uint64_t)(size & 0x7fff) * MR_KIB;
	} else {
		*bytes = (uint64_t)size * MR_MIB;
	}
	*devices = (double)*bytes /
		   (double)figures_or_ddr4(mr_dram_type_from_smbios(*type))->device_bytes;
	if (data_w && total_w > data_w && total_w != 0xffff && data_w != 0xffff)
		*devices *= (double)total_w / data_w;	/* ECC devices */
	return 0;
}

int mr_dmi_memory_read(struct mr_dmi_memory *dmi)
{
	const char *dir = "/sys/firmware/dmi/entries";
	struct dirent *de;
	DIR *d;
	int first_type = -1;

	memset(dmi, 0, sizeof(*dmi));
	d = mr_root_opendir(dir);
	if (!d)
		return mr_error(-ENOENT, "%s: not present", dir);
	while ((de = readdir(d))) {
		char path[300];
		char *data;
		size_t len;
		uint64_t bytes;
		double devices;
		int type, ret;

		if (strncmp(de->d_name, "17-", 3) != 0)
			continue;
		ret = mr_root_read_file(mr_pathf(path, sizeof(path), "%s/%s/raw", dir, de->d_name),
					4096, &data, &len);
		if (ret) {
			closedir(d);
			return ret;
		}
		ret = mr_dmi_parse_type17((const uint8_t *)data, len, &bytes, &devices, &type);
		free(data);
		if (ret) {
			closedir(d);
			return mr_error(ret, "%s: not a valid SMBIOS type 17 structure", path);
		}
		if (!bytes)
			continue;
		if (first_type < 0)
			first_type = type;
		else if (type != first_type)
			dmi->mixed_types = true;
		dmi->nr_dimms++;
		dmi->total_bytes += bytes;
		dmi->devices += devices;
	}
	closedir(d);
	if (!dmi->nr_dimms)
		return mr_error(-ENOENT, "%s: no installed memory device", dir);
	dmi->smbios_type = first_type;
	dmi->type = mr_dram_type_from_smbios(first_type);
	return 0;
}

static const struct mr_power_state *mpst_state(const struct mr_region *r, unsigned state)
{
	unsigned i;

	for (i = 0; i < r->nr_states; i++)
		if (r->states[i].state == state && r->states[i].has_characteristics)
			return &r->states[i];
	return NULL;
}

/* How many regions of @map list component @id: a DIMM named by two MPST nodes is
 * shared between them. */
static unsigned component_sharers(const struct mr_region_map *map, uint16_t id)
{
	const struct mr_region *r;
	unsigned n = 0, i;

	mr_for_each_region(map, r)
		for (i = 0; i < r->nr_components; i++)
			if (r->components[i] == id) {
				n++;
				break;
			}
	return n;
}

/*
 * Devices behind a datasheet region, in order of precedence:
 * 1. MPST physical components with SMBIOS readable: each component is one memory
 *    device (DIMM); its DRAM packages are SMBIOS's devices per DIMM (an average:
 *    which SMBIOS entry a component is, only PMTT says), split between the regions
 *    that share the component. Used only when those DIMMs can hold the region.
 * 2. SMBIOS alone: the DIMMs' devices spread over regions by size.
 * 3. Capacity: region size / device size, no ECC devices.
 */
static void region_devices(struct mr_power_model *m, const struct mr_region_map *map,
			   const struct mr_region *r, const struct mr_dmi_memory *dmi,
			   struct mr_region_power *p, unsigned *nr_inconsistent)
{
	if (r->nr_components && dmi && dmi->nr_dimms && dmi->total_bytes) {
		double per_dimm = dmi->devices / dmi->nr_dimms;
		double dimm_bytes = (double)dmi->total_bytes / dmi->nr_dimms;
		double devices = 0, bytes = 0;
		unsigned i;

		for (i = 0; i < r->nr_components; i++) {
			unsigned k = component_sharers(map, r->components[i]);

			devices += per_dimm / (k ? k : 1);
			bytes += dimm_bytes / (k ? k : 1);
		}
		if (bytes + 0.5 >= (double)r->size_bytes) {
			p->devices = devices;
			p->devices_from = MR_DEVICES_COMPONENTS;
			return;
		}
		(*nr_inconsistent)++;
	}
	if (dmi && dmi->total_bytes) {
		p->devices = dmi->devices * (double)r->size_bytes / (double)dmi->total_bytes;
		p->devices_from = MR_DEVICES_DMI;
	} else {
		p->devices = (double)r->size_bytes / (double)m->figures->device_bytes;
		p->devices_from = MR_DEVICES_CAPACITY;
	}
}

int mr_power_model_build(struct mr_power_model *m, const struct mr_region_map *map,
			 const struct mr_dmi_memory *dmi)
{
	enum mr_dram_type type = dmi ? dmi->type : MR_DRAM_DDR4;
	const struct mr_region *r;
	unsigned manual = 0, inconsistent = 0, unsized_components = 0, i;
	unsigned from[NR_MR_DEVICES] = { 0 };

	memset(m, 0, sizeof(*m));
	m->figures = figures_or_ddr4(type);
	if (m->figures->type != type)
		note(m, "SMBIOS memory type 0x%02x has no row in the datasheet table (DDR4, "
		     "DDR5): modelled with %s figures", dmi ? (unsigned)dmi->smbios_type : 0,
		     m->figures->name);
	m->regions = calloc(map->nr_regions ? map->nr_regions : 1, sizeof(*m->regions));
	if (!m->regions)
		return mr_error(-ENOMEM, "power model: out of memory");
	m->nr_regions = map->nr_regions;
	mr_for_each_region(map, r) {
		struct mr_region_power *p = &m->regions[r - map->regions];
		const struct mr_power_state *s0 = mpst_state(r, 0);

		p->id = r->id;
		p->node = r->node;
		p->socket = -1;
		p->size_bytes = r->size_bytes;
		p->low_state = -2;
		if (s0) {
			p->from_mpst = true;
			p->devices_from = MR_DEVICES_NONE;
			p->active_mw = s0->average_power_mw;
			p->low_mw = p->active_mw;
			for (i = 0; i < r->nr_states; i++) {
				const struct mr_power_state *s = &r->states[i];

				if (s->state == 0 || !s->has_characteristics)
					continue;
				/* A state the OS must command is never entered: nothing sends it. */
				if (!(s->flags & MR_PSTATE_AUTO_ENTRY)) {
					manual++;
					continue;
				}
				if (s->average_power_mw < p->low_mw) {
					p->low_mw = s->average_power_mw;
					p->low_state = s->state;
				}
			}
		} else {
			region_devices(m, map, r, dmi, p, &inconsistent);
			if (r->nr_components && p->devices_from == MR_DEVICES_CAPACITY)
				unsized_components++;
			from[p->devices_from]++;
			p->active_mw = p->devices * mr_dram_active_mw(m->figures);
			p->low_mw = p->devices * mr_dram_powerdown_mw(m->figures);
			p->low_state = -1;
		}
		/* One access drives a DDR4 rank (8 x8 devices, 64 bits) or a DDR5
		 * subchannel (4 x8 devices, 32 bits), plus ECC: SMBIOS's devices over
		 * its data-only count. */
		p->access_nj = mr_dram_access_nj(m->figures) * m->figures->access_devices *
			(dmi && dmi->total_bytes ? dmi->devices *
			 (double)m->figures->device_bytes / (double)dmi->total_bytes : 1.0);
	}
	if (manual)
		note(m, "%u MPST power state(s) need an OS command to enter; nothing sends it, "
		     "so they are never counted", manual);
	if (from[MR_DEVICES_COMPONENTS] || from[MR_DEVICES_DMI] || from[MR_DEVICES_CAPACITY]) {
		char list[128] = "";
		size_t len = 0;

		for (i = MR_DEVICES_DMI; i < NR_MR_DEVICES; i++)
			if (from[i] && len < sizeof(list))
				len += (size_t)snprintf(list + len, sizeof(list) - len,
							"%s%s: %u region(s)", len ? "; " : "",
							mr_devices_from_name(i), from[i]);
		note(m, "region power from datasheet figures (%s) x devices (%s)",
		     m->figures->name, list);
		/* What the row's source does not give, said where the figures are used. */
		if (m->figures->ipp3n_ma == 0 || m->figures->idd0_ma <= m->figures->idd3n_ma)
			note(m, "%s: %s%s%s", m->figures->name,
			     m->figures->ipp3n_ma == 0 ? "no VPP current in the source, so power "
			     "leaves out IPP x VPP per device (an understatement)" : "",
			     m->figures->ipp3n_ma == 0 && m->figures->idd0_ma <= m->figures->idd3n_ma ?
			     "; " : "",
			     m->figures->idd0_ma <= m->figures->idd3n_ma ? "IDD0 is below IDD3N, so "
			     "an access costs its read burst only" : "");
	}
	if (from[MR_DEVICES_COMPONENTS])
		note(m, "components: devices = MPST physical components (DIMMs) x SMBIOS devices "
		     "per DIMM (%.1f, the average: only PMTT says which DIMM a component is)",
		     dmi->devices / dmi->nr_dimms);
	if (inconsistent)
		note(m, "%u region(s) larger than their MPST components' DIMMs: devices spread "
		     "from SMBIOS by size instead", inconsistent);
	if (unsized_components)
		note(m, "%u region(s) name MPST components, but DIMM sizes are unknown without "
		     "SMBIOS: devices by capacity", unsized_components);
	return 0;
}

void mr_power_model_destroy(struct mr_power_model *m)
{
	free(m->regions);
	m->regions = NULL;
	m->nr_regions = 0;
}

void mr_power_model_read_offline(struct mr_power_model *m, const struct mr_region_map *map)
{
	unsigned i, j;

	for (i = 0; i < m->nr_regions && i < map->nr_regions; i++) {
		const struct mr_region *r = &map->regions[i];
		unsigned offline = 0;

		for (j = 0; j < r->nr_blocks; j++) {
			char path[128], state[32];

			if (mr_root_read_str(mr_pathf(path, sizeof(path),
					"/sys/devices/system/memory/memory%llu/state",
					(unsigned long long)r->blocks[j]), state, sizeof(state)) == 0 &&
			    strcmp(state, "offline") == 0)
				offline++;
		}
		m->regions[i].offline = r->nr_blocks && offline == r->nr_blocks;
	}
}

/* Why some regions carry no physical addresses (NUMA nodes without memory blocks that
 * /proc/zoneinfo does not describe), in @why; "" when every region has them. */
static void unspanned_why(const struct mr_region_map *map, char *why, size_t len)
{
	const struct mr_region *r;
	size_t off = 0;
	int n;

	why[0] = '\0';
	mr_for_each_region(map, r) {
		if (mr_region_span_known(r) || off >= len)
			continue;
		n = snprintf(why + off, len - off, "%snode %d", off ? ", " : "", r->node);
		off = n < 0 ? len : off + (size_t)n;
	}
	if (why[0] && off < len)
		snprintf(why + off, len - off, ": no physical range (no memory blocks, not in "
			 "/proc/zoneinfo)");
}

int mr_power_model_load(struct mr_power_model *m, struct mr_region_map *map,
			char *map_why, size_t map_why_len, char *dmi_why, size_t dmi_why_len)
{
	struct mr_dmi_memory dmi;
	bool have_dmi;
	int ret;

	map_why[0] = '\0';
	/* The model reads no hwloc attribute: skip loading the whole topology. */
	ret = mr_region_map_discover(map, &(struct mr_discover_opts){ .skip_hwloc = true });
	if (ret) {
		/* `auto` stops at a broken MPST table: the nodes still give regions. */
		snprintf(map_why, map_why_len, "%s", mr_last_error());
		ret = mr_region_map_discover(map, &(struct mr_discover_opts){
			.source = MR_SOURCE_NUMA, .skip_hwloc = true });
		if (ret)
			return ret;
	} else {
		unspanned_why(map, map_why, map_why_len);
	}
	have_dmi = mr_dmi_memory_read(&dmi) == 0;
	snprintf(dmi_why, dmi_why_len, "%s", have_dmi ? "" : mr_last_error());
	ret = mr_power_model_build(m, map, have_dmi ? &dmi : NULL);
	if (ret) {
		mr_region_map_destroy(map);
		return ret;
	}
	mr_power_model_read_offline(m, map);
	return 0;
}

int mr_power_model_energy(const struct mr_power_model *m, const struct mr_residency *res,
			  double elapsed_s, double measured_uj, struct mr_region_energy *out,
			  double *scale)
{
	double sum = 0, k = 1;
	unsigned i;

	for (i = 0; i < m->nr_regions; i++) {
		const struct mr_region_power *p = &m->regions[i];
		struct mr_region_energy *e = &out[i];
		double low = 0, accesses_uj = 0;

		if (p->offline) {
			low = 1;		/* refreshed, never accessed */
		} else if (res && res->scope != MR_RESIDENCY_NONE && p->id < res->nr_regions) {
			const struct mr_residency_region *rr = &res->regions[p->id];

			if (rr->intervals)
				low = (double)rr->idle_intervals / (double)rr->intervals;
			accesses_uj = (double)rr->accesses * p->access_nj / 1000.0;
		}
		/* mW x s = mJ = 1000 uJ. */
		e->all_active_uj = p->active_mw * elapsed_s * 1000.0 + accesses_uj;
		e->energy_uj = (p->active_mw * (1 - low) + p->low_mw * low) * elapsed_s * 1000.0 +
			       accesses_uj;
		e->low_fraction = p->low_mw < p->active_mw ? low : 0;
		sum += e->energy_uj;
	}
	if (measured_uj >= 0 && sum > 0)
		k = measured_uj / sum;
	for (i = 0; i < m->nr_regions; i++) {
		out[i].energy_uj *= k;
		out[i].all_active_uj *= k;
		out[i].saving_uj = out[i].all_active_uj - out[i].energy_uj;
	}
	if (scale)
		*scale = k;
	return 0;
}

/* The package of @node's CPUs: -1 and a reason when it has none or several. */
static int node_socket(int node, char *why, size_t len)
{
	static int cpus[4096];
	char path[128], buf[4096];
	unsigned nr, i;
	int pkg = -1, ret;

	ret = mr_root_read_str(mr_pathf(path, sizeof(path),
			"/sys/devices/system/node/node%d/cpulist", node), buf, sizeof(buf));
	if (ret) {
		snprintf(why, len, "%s", mr_last_error());
		return -1;
	}
	if (mr_energy_parse_cpulist(buf, cpus, MR_ARRAY_SIZE(cpus), &nr)) {
		snprintf(why, len, "%s: %s", path, mr_last_error());
		return -1;
	}
	if (!nr) {
		snprintf(why, len, "node %d has no CPUs (memory only)", node);
		return -1;
	}
	for (i = 0; i < nr; i++) {
		int p = mr_energy_cpu_package(cpus[i]);

		if (p < 0) {
			snprintf(why, len, "%s", mr_last_error());
			return -1;
		}
		if (pkg >= 0 && p != pkg) {
			snprintf(why, len, "node %d has CPUs in packages %d and %d", node, pkg, p);
			return -1;
		}
		pkg = p;
	}
	return pkg;
}

void mr_power_model_read_sockets(struct mr_power_model *m, char *why, size_t why_len)
{
	unsigned i, j;

	if (why_len)
		why[0] = '\0';
	for (i = 0; i < m->nr_regions; i++) {
		struct mr_region_power *p = &m->regions[i];
		char reason[300] = "";

		p->socket = -1;
		for (j = 0; j < i; j++)
			if (m->regions[j].node == p->node)
				break;
		if (j < i) {
			p->socket = m->regions[j].socket;
			continue;
		}
		if (p->node < 0)
			snprintf(reason, sizeof(reason), "region %u has no NUMA node", p->id);
		else
			p->socket = node_socket(p->node, reason, sizeof(reason));
		if (p->socket < 0 && why_len && !why[0])
			snprintf(why, why_len, "%s", reason);
	}
}

int mr_power_model_calibrate(const struct mr_power_model *m, struct mr_region_energy *out,
			     const int *sockets, const double *measured_uj, unsigned nr,
			     struct mr_calibration *cal)
{
	double modelled[64] = { 0 }, sum = 0, measured = 0;
	unsigned i, j;

	memset(cal, 0, sizeof(*cal));
	if (nr > MR_ARRAY_SIZE(cal->socket))
		return mr_error(-E2BIG, "calibration: more than %zu sockets",
				MR_ARRAY_SIZE(cal->socket));
	for (j = 0; j < nr; j++)
		measured += measured_uj[j];
	for (i = 0; i < m->nr_regions; i++)
		sum += out[i].energy_uj;
	cal->total_factor = sum > 0 ? measured / sum : 1;
	cal->per_socket = nr > 0;
	for (i = 0; i < m->nr_regions && cal->per_socket; i++) {
		const struct mr_region_power *p = &m->regions[i];

		for (j = 0; j < nr && sockets[j] != p->socket; j++)
			;
		if (p->socket < 0) {
			snprintf(cal->why_total, sizeof(cal->why_total),
				 "region %u (node %d) has no known socket", p->id, p->node);
			cal->per_socket = false;
		} else if (j == nr) {
			snprintf(cal->why_total, sizeof(cal->why_total),
				 "region %u is on socket %d, which has no DRAM counter",
				 p->id, p->socket);
			cal->per_socket = false;
		} else {
			modelled[j] += out[i].energy_uj;
			cal->nr_regions[j]++;
		}
	}
	for (j = 0; j < nr && cal->per_socket; j++) {
		if (modelled[j] > 0)
			continue;
		snprintf(cal->why_total, sizeof(cal->why_total),
			 "socket %d has a DRAM counter but no modelled region", sockets[j]);
		cal->per_socket = false;
	}
	cal->nr_sockets = nr;
	for (j = 0; j < nr; j++) {
		cal->socket[j] = sockets[j];
		cal->factor[j] = cal->per_socket ? measured_uj[j] / modelled[j] : cal->total_factor;
	}
	for (i = 0; i < m->nr_regions; i++) {
		double k = cal->total_factor;

		if (cal->per_socket)
			for (j = 0; j < nr; j++)
				if (sockets[j] == m->regions[i].socket)
					k = cal->factor[j];
		out[i].energy_uj *= k;
		out[i].all_active_uj *= k;
		out[i].saving_uj = out[i].all_active_uj - out[i].energy_uj;
	}
	return 0;
}
