/* The DRAM power model: per-region power in each state (MPST characteristics, or
 * datasheet currents times the region's devices), residency in the low-power state
 * from access data, and per-region energy calibrated against RAPL. */
#ifndef MR_POWER_MODEL_H
#define MR_POWER_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "regions/region.h"

enum mr_dram_type {
	MR_DRAM_DDR4,
	MR_DRAM_DDR5,
	MR_DRAM_OTHER,		/* SMBIOS names another type (DDR3, LPDDR, HBM, unknown): no row */
	NR_MR_DRAM,
};
/* The row type of an SMBIOS type-17 memory type (0x1a DDR4, 0x22 DDR5). */
enum mr_dram_type mr_dram_type_from_smbios(int smbios_type);

/*
 * struct mr_dram_figures - datasheet figures of one DRAM device (one package, one die).
 * Currents in mA per device, voltages in V, times in ns. docs/energy.md names the
 * datasheet each row comes from and how per-device figures were derived. A current
 * the source does not give is 0, and the row's notes in docs/energy.md say so.
 * @access_devices: x8 devices one 64-byte access drives, ECC not counted (DDR4: a
 *		64-bit rank, BL8; DDR5: a 32-bit subchannel, BL16).
 */
struct mr_dram_figures {
	const char *name;
	const char *source;
	enum mr_dram_type type;
	uint64_t device_bytes;
	unsigned access_devices;
	double vdd_v, vpp_v;
	double idd0_ma, idd2n_ma, idd2p_ma, idd3n_ma, idd3p_ma;
	double idd4r_ma, idd4w_ma, idd5b_ma, idd6n_ma, ipp3n_ma;
	double trc_ns, tburst_ns, trfc_ns, trefi_ns;
};

/* "model.c" */
extern const struct mr_dram_figures mr_dram_table[];
extern const unsigned mr_dram_table_len;
const struct mr_dram_figures *mr_dram_figures_for(enum mr_dram_type type);

/* Per-device power, mW: refresh is included in the standby states, as the
 * controller keeps refreshing an idle or powered-down rank. */
double mr_dram_active_mw(const struct mr_dram_figures *f);	/* IDD3N + IPP3N + refresh */
double mr_dram_powerdown_mw(const struct mr_dram_figures *f);	/* IDD2P + IPP3N + refresh */
double mr_dram_selfrefresh_mw(const struct mr_dram_figures *f);	/* IDD6N */
/* Energy of one 64-byte access on one device, nJ: an activate-precharge cycle
 * over tRC plus one read burst, above active standby. A term whose current is
 * below IDD3N (DDR5's IDD0) counts 0, never negative. */
double mr_dram_access_nj(const struct mr_dram_figures *f);

enum mr_devices_from {
	MR_DEVICES_NONE,	/* powers from MPST: the device count does not matter */
	MR_DEVICES_DMI,		/* SMBIOS memory devices, spread over regions by size */
	MR_DEVICES_CAPACITY,	/* region size / device size; no ECC devices */
	MR_DEVICES_COMPONENTS,	/* MPST physical components (DIMMs) x SMBIOS devices per DIMM */
	NR_MR_DEVICES,
};
const char *mr_devices_from_name(enum mr_devices_from from);

/* struct mr_dmi_memory - the SMBIOS type-17 memory devices, summed. */
struct mr_dmi_memory {
	unsigned nr_dimms;
	uint64_t total_bytes;
	double devices;		/* DRAM packages, ECC included */
	enum mr_dram_type type;
	int smbios_type;	/* of the first installed device; @type is its row */
	bool mixed_types;
};
/* Read /sys/firmware/dmi/entries/17-*\/raw. -ENOENT/-EACCES when not readable. */
int mr_dmi_memory_read(struct mr_dmi_memory *dmi);
/* Parse one type-17 structure; 0 and *bytes = 0 for an empty slot. *devices
 * counts packages of the device size of the row for *type (the DDR4 row's when
 * the type has none), times total width / data width for ECC. */
int mr_dmi_parse_type17(const uint8_t *raw, size_t len, uint64_t *bytes,
			double *devices, int *type);

/*
 * struct mr_region_power - one region's power model.
 * @active_mw:	power while the region is accessed (state 0).
 * @low_mw:	power in the low-power state the platform enters by itself; equal to
 *		@active_mw when there is none.
 * @low_state:	the MPST state used for @low_mw, -1 for the datasheet's precharge
 *		power-down, -2 when there is no self-entered state.
 * @devices:	DRAM devices behind the region (0 with MPST powers).
 * @access_nj:	energy of one 64-byte access (one rank's devices), nJ.
 * @offline:	every memory block of the region is offline: no access can reach it,
 *		but it is still refreshed (idle, not off).
 * @socket:	set by mr_power_model_read_sockets(): the package whose RAPL DRAM
 *		counter measures the region, -1 when not known.
 */
struct mr_region_power {
	unsigned id;
	int node;
	uint64_t size_bytes;
	bool from_mpst;
	double active_mw, low_mw;
	int low_state;
	double devices;
	enum mr_devices_from devices_from;
	double access_nj;
	bool offline;
	int socket;		/* physical package of the region's node, -1 unknown */
};

struct mr_power_model {
	const struct mr_dram_figures *figures;
	struct mr_region_power *regions;
	unsigned nr_regions;
	char notes[8][256];
	unsigned nr_notes;
};

/* Build the model of @map. @dmi may be NULL (not readable). */
int mr_power_model_build(struct mr_power_model *m, const struct mr_region_map *map,
			 const struct mr_dmi_memory *dmi);
void mr_power_model_destroy(struct mr_power_model *m);
/* Mark regions whose memory blocks are all offline (reads the root's sysfs). */
void mr_power_model_read_offline(struct mr_power_model *m, const struct mr_region_map *map);

/*
 * Discover the root's region map (the `numa` source when `auto` fails), read the SMBIOS
 * memory devices, build @m on them and mark offline regions. @map_why gets why `auto`
 * failed, or which regions have no physical range (NUMA nodes without memory blocks
 * that /proc/zoneinfo does not describe); "" when neither. @dmi_why gets why DMI was
 * not readable ("" when it was). On error @map is destroyed.
 */
int mr_power_model_load(struct mr_power_model *m, struct mr_region_map *map,
			char *map_why, size_t map_why_len, char *dmi_why, size_t dmi_why_len);

/* Residency input: per region, how many monitoring intervals it was seen in and in
 * how many of them no access was sampled. */
enum mr_residency_scope {
	MR_RESIDENCY_NONE,	/* no access data: every online region is active */
	MR_RESIDENCY_PHYSICAL,	/* physical access data (DAMON paddr, perf phys addr) */
	MR_RESIDENCY_PROCESS,	/* one process's accesses: other processes unseen */
	NR_MR_RESIDENCY,
};
const char *mr_residency_scope_name(enum mr_residency_scope scope);

struct mr_residency_region {
	uint64_t intervals;
	uint64_t idle_intervals;
	uint64_t accesses;	/* estimated 64-byte accesses, 0 if unknown */
};

struct mr_residency {
	enum mr_residency_scope scope;
	uint64_t interval_us;
	struct mr_residency_region *regions;	/* indexed by region id */
	unsigned nr_regions;
	char from[256];
};

/* "residency.c" */
/* The JSON residency file documented in docs/energy.md. */
int mr_residency_read_json(const char *path, struct mr_residency *res);
void mr_residency_free(struct mr_residency *res);

/* "residency-record.c" */
struct mr_rec;
/* Residency of @map's regions from a physical access record (monitor/record.h): a
 * region is idle in an aggregation interval when no record region overlapping it
 * had a sampled access. Process-scoped records are refused (virtual addresses). */
int mr_residency_from_rec(const struct mr_rec *rec, const char *name,
			  const struct mr_region_map *map, struct mr_residency *res);
int mr_residency_read_record(const char *path, const struct mr_region_map *map,
			     struct mr_residency *res);

/*
 * struct mr_region_energy - one region's modelled energy over a run, uJ.
 * @low_fraction: share of the run in the low-power state (0..1).
 * @saving_uj:	@all_active_uj - @energy_uj: an upper bound, as sampling misses
 *		accesses between samples.
 */
struct mr_region_energy {
	double energy_uj;
	double all_active_uj;
	double saving_uj;
	double low_fraction;
};

/*
 * Energy of each region over @elapsed_s with residency @res (NULL: none). When
 * @measured_uj >= 0 (RAPL's total for the same run), every figure is scaled by
 * measured / modelled so the regions sum to it; *@scale gets the factor (1 if none).
 * @out has m->nr_regions entries.
 */
int mr_power_model_energy(const struct mr_power_model *m, const struct mr_residency *res,
			  double elapsed_s, double measured_uj, struct mr_region_energy *out,
			  double *scale);

/* "src-model.c" */
struct mr_energy_source;
/*
 * With per-region energy @e of @m (residency applied, from mr_power_model_energy()),
 * make the model source's per-node figures the sums of their regions' instead of
 * every online region active, so that a report has one modelled total which its
 * per-node and per-region rows both add up to. Call after the last
 * mr_energy_update(); a source other than the model is left as it is.
 */
void mr_energy_model_set_regions(struct mr_energy_source *src, const struct mr_power_model *m,
				 const struct mr_region_energy *e);

/* Set each region's socket: its NUMA node's CPUs (nodeN/cpulist), their
 * physical_package_id, through the root layer. A node without CPUs (CXL, memory
 * only), or one whose CPUs are in several packages, gets -1 and a line in @why. */
void mr_power_model_read_sockets(struct mr_power_model *m, char *why, size_t why_len);

/*
 * struct mr_calibration - how modelled per-region energy was scaled to RAPL.
 * @per_socket:	true: each region scaled by its socket's measured / modelled energy;
 *		false: every region by the measured total / the modelled total.
 * @total_factor: measured total / modelled total (set either way).
 * @why_total:	with !@per_socket, why per-socket scaling was not possible.
 */
struct mr_calibration {
	bool per_socket;
	double total_factor;
	unsigned nr_sockets;
	int socket[64];
	double factor[64];
	unsigned nr_regions[64];
	char why_total[256];
};

/*
 * Scale @out (from mr_power_model_energy() with no measured total) to the measured
 * energy of @nr sockets (@sockets[i] measured @measured_uj[i]). Per socket when every
 * region has a socket with a counter and every counter's socket holds modelled
 * energy; otherwise to the total, with the reason in @cal->why_total.
 */
int mr_power_model_calibrate(const struct mr_power_model *m, struct mr_region_energy *out,
			     const int *sockets, const double *measured_uj, unsigned nr,
			     struct mr_calibration *cal);

#endif
