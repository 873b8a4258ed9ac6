/* Unit tests of power/model.c: hand-computed region energies for a small map with
 * datasheet and MPST regions, residency, offline regions, calibration, access
 * energy, SMBIOS type-17 parsing and the residency JSON reader. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/root.h"
#include "common/util.h"
#include "monitor/record.h"
#include "power/model.h"

#define assert_near(a, b) do {						\
	double _a = (a), _b = (b);					\
	if (fabs(_a - _b) > 1e-6 * (fabs(_b) > 1 ? fabs(_b) : 1))	\
		fail_msg("%s = %.9f, want %.9f", #a, _a, _b);		\
} while (0)

/*
 * The map:
 *   region 0: 2 GiB, no MPST states -> DDR4 datasheet x 2 devices (by capacity)
 *   region 1: 4 GiB, MPST states: 0 = 1000 mW; 1 = 300 mW, auto entry;
 *             2 = 100 mW, OS must command it (never counted)
 *
 * Per DDR4 device (Micron MT40A1G8, DDR4-2400):
 *   refresh   = (250 - 43) mA x 1.2 V x 350 / 7800      = 11.146153846 mW
 *   active    = 43 x 1.2 + 3 x 2.5 + refresh             = 70.246153846 mW
 *   powerdown = 25 x 1.2 + 3 x 2.5 + refresh             = 48.646153846 mW
 *   access    = ((48-43) x 1.2 x 46.16 + (135-43) x 1.2 x 8/2.4) / 1000
 *             = 0.64496 nJ per device, x 8 devices       = 5.15968 nJ
 */
static struct mr_power_state r1_states[] = {
	{ .state = 0, .average_power_mw = 1000, .has_characteristics = true },
	{ .state = 1, .flags = MR_PSTATE_AUTO_ENTRY | MR_PSTATE_AUTO_EXIT,
	  .average_power_mw = 300, .has_characteristics = true },
	{ .state = 2, .flags = MR_PSTATE_MEMORY_PRESERVED, .average_power_mw = 100,
	  .has_characteristics = true },
};
static struct mr_region regions[] = {
	{ .id = 0, .node = 0, .mpst_node_id = -1, .size_bytes = 2 * MR_GIB },
	{ .id = 1, .node = 1, .mpst_node_id = 7, .size_bytes = 4 * MR_GIB,
	  .states = r1_states, .nr_states = 3 },
};
static const struct mr_region_map map = {
	.source = MR_SOURCE_MPST, .regions = regions, .nr_regions = 2,
};

static void test_datasheet_figures(void **state)
{
	const struct mr_dram_figures *f = mr_dram_figures_for(MR_DRAM_DDR4);

	(void)state;
	assert_non_null(f);
	assert_near(mr_dram_active_mw(f), 70.246153846);
	assert_near(mr_dram_powerdown_mw(f), 48.646153846);
	assert_near(mr_dram_selfrefresh_mw(f), 36.0);
	assert_near(mr_dram_access_nj(f), 0.64496);
}

static void test_region_power(void **state)
{
	struct mr_power_model m;

	(void)state;
	assert_int_equal(mr_power_model_build(&m, &map, NULL), 0);
	assert_int_equal(m.nr_regions, 2);
	assert_false(m.regions[0].from_mpst);
	assert_int_equal(m.regions[0].devices_from, MR_DEVICES_CAPACITY);
	assert_near(m.regions[0].devices, 2);
	assert_near(m.regions[0].active_mw, 140.492307692);
	assert_near(m.regions[0].low_mw, 97.292307692);
	assert_int_equal(m.regions[0].low_state, -1);
	assert_true(m.regions[1].from_mpst);
	assert_near(m.regions[1].active_mw, 1000);
	/* State 2 is lower but needs an OS command: state 1 (auto entry) is used. */
	assert_near(m.regions[1].low_mw, 300);
	assert_int_equal(m.regions[1].low_state, 1);
	assert_non_null(strstr(m.notes[0], "need an OS command"));
	mr_power_model_destroy(&m);
}

/*
 * 10 s; region 0 idle 5 of 10 intervals, region 1 idle 3 of 4:
 *   E0 = (140.492307692 x 0.5 + 97.292307692 x 0.5) mW x 10 s = 1188923.0769 uJ
 *   all-active E0 = 1404923.0769 uJ, saving 216000 uJ
 *   E1 = (1000 x 0.25 + 300 x 0.75) x 10 s = 4750000 uJ, all active 10000000,
 *   saving 5250000 uJ
 */
static struct mr_residency_region rr[] = {
	{ .intervals = 10, .idle_intervals = 5 },
	{ .intervals = 4, .idle_intervals = 3 },
};

static void test_energy_residency(void **state)
{
	struct mr_residency res = { .scope = MR_RESIDENCY_PHYSICAL, .interval_us = 100000,
				    .regions = rr, .nr_regions = 2 };
	struct mr_region_energy e[2];
	struct mr_power_model m;
	double k;

	(void)state;
	assert_int_equal(mr_power_model_build(&m, &map, NULL), 0);
	assert_int_equal(mr_power_model_energy(&m, &res, 10, -1, e, &k), 0);
	assert_near(k, 1);
	assert_near(e[0].energy_uj, 1188923.076923);
	assert_near(e[0].all_active_uj, 1404923.076923);
	assert_near(e[0].saving_uj, 216000);
	assert_near(e[0].low_fraction, 0.5);
	assert_near(e[1].energy_uj, 4750000);
	assert_near(e[1].saving_uj, 5250000);
	assert_near(e[1].low_fraction, 0.75);

	/* Calibrated to a measured total twice the model's: everything doubles. */
	assert_int_equal(mr_power_model_energy(&m, &res, 10, 2 * (1188923.076923 + 4750000),
					       e, &k), 0);
	assert_near(k, 2);
	assert_near(e[0].energy_uj, 2377846.153846);
	assert_near(e[1].energy_uj, 9500000);
	assert_near(e[0].saving_uj, 432000);
	mr_power_model_destroy(&m);
}

/* Per-socket calibration: region 0 on socket 0, region 1 on socket 1; each ends
 * equal to its socket's measured energy. Region 0 modelled 1188923.076923 uJ all
 * told, 1404923.076923 all active: scaled to 3 J, its saving is
 * 3e6 x 216000 / 1188923.076923 = 545031.055901 uJ. */
static void test_calibrate_per_socket(void **state)
{
	struct mr_residency res = { .scope = MR_RESIDENCY_PHYSICAL, .interval_us = 100000,
				    .regions = rr, .nr_regions = 2 };
	int sockets[] = { 1, 0, 2 };
	double measured[] = { 1e6, 3e6, 5e5 };
	struct mr_region_energy e[2];
	struct mr_calibration cal;
	struct mr_power_model m;

	(void)state;
	assert_int_equal(mr_power_model_build(&m, &map, NULL), 0);
	assert_int_equal(m.regions[0].socket, -1);
	m.regions[0].socket = 0;
	m.regions[1].socket = 1;
	assert_int_equal(mr_power_model_energy(&m, &res, 10, -1, e, NULL), 0);
	assert_int_equal(mr_power_model_calibrate(&m, e, sockets, measured, 2, &cal), 0);
	assert_true(cal.per_socket);
	assert_near(e[0].energy_uj, 3e6);
	assert_near(e[1].energy_uj, 1e6);
	assert_near(e[0].saving_uj, 545031.055901);
	assert_near(cal.factor[0], 1e6 / 4750000);
	assert_int_equal(cal.nr_regions[1], 1);
	assert_near(cal.total_factor, 4e6 / (1188923.076923 + 4750000));

	/* A third counter with no region on its socket: back to the total. */
	assert_int_equal(mr_power_model_energy(&m, &res, 10, -1, e, NULL), 0);
	assert_int_equal(mr_power_model_calibrate(&m, e, sockets, measured, 3, &cal), 0);
	assert_false(cal.per_socket);
	assert_non_null(strstr(cal.why_total, "socket 2 has a DRAM counter but no modelled region"));
	assert_near(e[0].energy_uj + e[1].energy_uj, 4.5e6);

	/* A region whose socket is unknown (a memory-only node): the total too. */
	m.regions[1].socket = -1;
	assert_int_equal(mr_power_model_energy(&m, &res, 10, -1, e, NULL), 0);
	assert_int_equal(mr_power_model_calibrate(&m, e, sockets, measured, 2, &cal), 0);
	assert_false(cal.per_socket);
	assert_non_null(strstr(cal.why_total, "region 1 (node 1) has no known socket"));
	assert_near(e[1].energy_uj, 4750000 * 4e6 / (1188923.076923 + 4750000));
	mr_power_model_destroy(&m);
}

static void test_energy_no_access_data(void **state)
{
	struct mr_region_energy e[2];
	struct mr_power_model m;

	(void)state;
	assert_int_equal(mr_power_model_build(&m, &map, NULL), 0);
	/* No residency: every online region active. */
	assert_int_equal(mr_power_model_energy(&m, NULL, 10, -1, e, NULL), 0);
	assert_near(e[0].energy_uj, 1404923.076923);
	assert_near(e[1].energy_uj, 10000000);
	assert_near(e[0].saving_uj, 0);
	/* An offline region is refreshed, not off: its low state, all the time. */
	m.regions[1].offline = true;
	assert_int_equal(mr_power_model_energy(&m, NULL, 10, -1, e, NULL), 0);
	assert_near(e[1].energy_uj, 3000000);
	assert_true(e[1].energy_uj > 0);
	mr_power_model_destroy(&m);
}

static void test_energy_accesses(void **state)
{
	struct mr_residency_region acc[] = { { .intervals = 1, .idle_intervals = 0,
					       .accesses = 1000000 } };
	struct mr_residency res = { .scope = MR_RESIDENCY_PROCESS, .regions = acc,
				    .nr_regions = 1 };
	struct mr_region_energy e[2];
	struct mr_power_model m;

	(void)state;
	assert_int_equal(mr_power_model_build(&m, &map, NULL), 0);
	assert_near(m.regions[0].access_nj, 5.15968);
	/* 1 s active + 10^6 accesses x 5.15968 nJ = 140492.307692 + 5159.68 uJ. */
	assert_int_equal(mr_power_model_energy(&m, &res, 1, -1, e, NULL), 0);
	assert_near(e[0].energy_uj, 145651.987692);
	mr_power_model_destroy(&m);
}

static void test_dmi_devices(void **state)
{
	/* 4 x 16 GiB ECC DIMMs = 72 devices; a 2 GiB region holds 2/64 of them. */
	struct mr_dmi_memory dmi = { .nr_dimms = 4, .total_bytes = 64 * MR_GIB,
				     .devices = 72, .type = MR_DRAM_DDR4 };
	struct mr_power_model m;

	(void)state;
	assert_int_equal(mr_power_model_build(&m, &map, &dmi), 0);
	assert_int_equal(m.regions[0].devices_from, MR_DEVICES_DMI);
	assert_near(m.regions[0].devices, 2.25);
	assert_near(m.regions[0].active_mw, 2.25 * 70.246153846);
	/* ECC: 9 devices per rank. */
	assert_near(m.regions[0].access_nj, 9 * 0.64496);
	mr_power_model_destroy(&m);
}

/*
 * Device counts from MPST physical components. SMBIOS: 4 DIMMs of 16 GiB ECC, 72
 * devices, 18 per DIMM. Region 0 (16 GiB) names components 1 and 2, region 1
 * (8 GiB) names component 2 only, region 2 (2 GiB) names none, region 3 (64 GiB)
 * names component 3 alone, which cannot hold it:
 *   component 2 is shared by two regions: region 0 = 18 + 18/2 = 27 devices,
 *   region 1 = 18/2 = 9 devices (components);
 *   region 2: 72 x 2/64 = 2.25 devices (dmi, by size);
 *   region 3: 16 GiB of DIMM for 64 GiB: inconsistent, 72 x 64/64 = 72 (dmi).
 * Without SMBIOS every region is by capacity: 16, 8, 2, 64.
 */
static uint16_t comp0[] = { 1, 2 }, comp1[] = { 2 }, comp3[] = { 3 };
static struct mr_region cregions[] = {
	{ .id = 0, .node = 0, .mpst_node_id = 0, .size_bytes = 16 * MR_GIB,
	  .components = comp0, .nr_components = 2 },
	{ .id = 1, .node = 0, .mpst_node_id = 1, .size_bytes = 8 * MR_GIB,
	  .components = comp1, .nr_components = 1 },
	{ .id = 2, .node = 1, .mpst_node_id = -1, .size_bytes = 2 * MR_GIB },
	{ .id = 3, .node = 1, .mpst_node_id = 3, .size_bytes = 64 * MR_GIB,
	  .components = comp3, .nr_components = 1 },
};
static const struct mr_region_map cmap = {
	.source = MR_SOURCE_MPST, .regions = cregions, .nr_regions = 4,
};

static bool has_note(const struct mr_power_model *m, const char *s)
{
	unsigned i;

	for (i = 0; i < m->nr_notes; i++)
		if (strstr(m->notes[i], s))
			return true;
	return false;
}

static void test_component_devices(void **state)
{
	struct mr_dmi_memory dmi = { .nr_dimms = 4, .total_bytes = 64 * MR_GIB,
				     .devices = 72, .type = MR_DRAM_DDR4 };
	struct mr_power_model m;

	(void)state;
	assert_int_equal(mr_power_model_build(&m, &cmap, &dmi), 0);
	assert_int_equal(m.regions[0].devices_from, MR_DEVICES_COMPONENTS);
	assert_near(m.regions[0].devices, 27);
	assert_near(m.regions[0].active_mw, 27 * 70.246153846);
	assert_near(m.regions[0].low_mw, 27 * 48.646153846);
	assert_int_equal(m.regions[1].devices_from, MR_DEVICES_COMPONENTS);
	assert_near(m.regions[1].devices, 9);
	assert_int_equal(m.regions[2].devices_from, MR_DEVICES_DMI);
	assert_near(m.regions[2].devices, 2.25);
	assert_int_equal(m.regions[3].devices_from, MR_DEVICES_DMI);
	assert_near(m.regions[3].devices, 72);
	assert_string_equal(mr_devices_from_name(MR_DEVICES_COMPONENTS), "components");
	assert_true(has_note(&m, "dmi: 2 region(s); components: 2 region(s)"));
	assert_true(has_note(&m, "SMBIOS devices per DIMM (18.0"));
	assert_true(has_note(&m, "1 region(s) larger than their MPST components' DIMMs"));
	mr_power_model_destroy(&m);

	assert_int_equal(mr_power_model_build(&m, &cmap, NULL), 0);
	assert_int_equal(m.regions[0].devices_from, MR_DEVICES_CAPACITY);
	assert_near(m.regions[0].devices, 16);
	assert_near(m.regions[1].devices, 8);
	assert_near(m.regions[3].devices, 64);
	assert_true(has_note(&m, "3 region(s) name MPST components, but DIMM sizes are unknown"));
	mr_power_model_destroy(&m);
}

/*
 * Per DDR5 device (Micron 16Gb DDR5 die rev. A, DDR5-4800, as read in gem5's ddr5.py):
 *   refresh   = (277 - 142) mA x 1.1 V x 295 / 3900      = 11.232692308 mW
 *   active    = 142 x 1.1 + 0 (no IPP figure) + refresh  = 167.432692308 mW
 *   powerdown = 88 x 1.1 + 0 + refresh                   = 108.032692308 mW
 *   selfrefr. = 102 x 1.1                                = 112.2 mW
 *   access    = (0 (IDD0 122 < IDD3N 142: no activate term)
 *                + (530 - 142) x 1.1 x 16/4.8) / 1000    = 1.422666667 nJ per device,
 *               x 4 devices (one 32-bit subchannel)      = 5.690666667 nJ
 * (the activate term uncapped would be (122 - 142) x 1.1 x 46.545 = -1.02399 nJ)
 */
static void test_ddr5_figures(void **state)
{
	const struct mr_dram_figures *f = mr_dram_figures_for(MR_DRAM_DDR5);

	(void)state;
	assert_non_null(f);
	assert_int_equal(f->type, MR_DRAM_DDR5);
	assert_int_equal(f->device_bytes, 2 * MR_GIB);
	assert_int_equal(f->access_devices, 4);
	assert_non_null(strstr(f->name, "DDR5-4800 16Gb"));
	assert_near(mr_dram_active_mw(f), 167.432692308);
	assert_near(mr_dram_powerdown_mw(f), 108.032692308);
	assert_near(mr_dram_selfrefresh_mw(f), 112.2);
	assert_near(mr_dram_access_nj(f), 1.422666667);
	/* Every type SMBIOS can name maps to a row or to MR_DRAM_OTHER. */
	assert_int_equal(mr_dram_type_from_smbios(0x1a), MR_DRAM_DDR4);
	assert_int_equal(mr_dram_type_from_smbios(0x22), MR_DRAM_DDR5);
	assert_int_equal(mr_dram_type_from_smbios(0x23), MR_DRAM_OTHER);
	assert_null(mr_dram_figures_for(MR_DRAM_OTHER));
}

/*
 * DDR5 memory (SMBIOS type 0x22) gets the DDR5 row. SMBIOS: 4 x 32 GiB ECC DIMMs
 * (80/64 bits) of 16 Gb devices = 4 x 16 x 1.25 = 80 devices for 128 GiB, so the
 * 2 GiB region 0 holds 80 x 2/128 = 1.25 devices:
 *   active = 1.25 x 167.432692308 = 209.290865385 mW
 *   low    = 1.25 x 108.032692308 = 135.040865385 mW
 *   access = 1.422666667 nJ x 4 devices x 1.25 (ECC) = 7.113333333 nJ
 */
static void test_ddr5_row(void **state)
{
	struct mr_dmi_memory dmi = { .nr_dimms = 4, .total_bytes = 128 * MR_GIB,
				     .devices = 80, .type = MR_DRAM_DDR5, .smbios_type = 0x22 };
	struct mr_power_model m;

	(void)state;
	assert_int_equal(mr_power_model_build(&m, &map, &dmi), 0);
	assert_non_null(m.figures);
	assert_int_equal(m.figures->type, MR_DRAM_DDR5);
	assert_int_equal(m.regions[0].devices_from, MR_DEVICES_DMI);
	assert_near(m.regions[0].devices, 1.25);
	assert_near(m.regions[0].active_mw, 209.290865385);
	assert_near(m.regions[0].low_mw, 135.040865385);
	assert_near(m.regions[0].access_nj, 7.113333333);
	assert_false(has_note(&m, "DDR4 figures"));
	assert_false(has_note(&m, "DDR4-2400"));
	assert_true(has_note(&m, "DDR5-4800 16Gb (Micron 16Gb DDR5 die rev. A)) x devices (dmi"));
	assert_true(has_note(&m, "no VPP current in the source"));
	assert_true(has_note(&m, "an access costs its read burst only"));
	/* The MPST region does not use the table: unchanged. */
	assert_near(m.regions[1].active_mw, 1000);
	mr_power_model_destroy(&m);
}

/* A memory type with no row (LPDDR5, SMBIOS 0x23): the DDR4 row, and a note says
 * so; never silently. The DDR4 row's source gives IPP and IDD0 > IDD3N: no note. */
static void test_other_type_fallback(void **state)
{
	struct mr_dmi_memory dmi = { .nr_dimms = 2, .total_bytes = 32 * MR_GIB,
				     .devices = 32, .type = MR_DRAM_OTHER, .smbios_type = 0x23 };
	struct mr_power_model m;

	(void)state;
	assert_int_equal(mr_power_model_build(&m, &map, &dmi), 0);
	assert_int_equal(m.figures->type, MR_DRAM_DDR4);
	assert_true(has_note(&m, "SMBIOS memory type 0x23 has no row in the datasheet table "
			     "(DDR4, DDR5): modelled with DDR4-2400 8Gb x8 (Micron MT40A1G8) figures"));
	assert_near(m.regions[0].devices, 2);
	assert_near(m.regions[0].active_mw, 2 * 70.246153846);
	assert_false(has_note(&m, "no VPP current"));
	mr_power_model_destroy(&m);

	dmi.type = MR_DRAM_DDR4;
	dmi.smbios_type = 0x1a;
	assert_int_equal(mr_power_model_build(&m, &map, &dmi), 0);
	assert_false(has_note(&m, "has no row"));
	mr_power_model_destroy(&m);
}

static void test_dmi_parse(void **state)
{
	uint8_t raw[0x28];
	uint64_t bytes;
	double devices;
	int type;

	(void)state;
	memset(raw, 0, sizeof(raw));
	raw[0] = 17;
	raw[1] = 0x28;
	raw[0x08] = 72;			/* total width */
	raw[0x0a] = 64;			/* data width */
	raw[0x0c] = 0x00;
	raw[0x0d] = 0x40;		/* 16384 MiB */
	raw[0x12] = 0x1a;		/* DDR4 */
	assert_int_equal(mr_dmi_parse_type17(raw, sizeof(raw), &bytes, &devices, &type), 0);
	assert_int_equal(bytes, 16 * MR_GIB);
	assert_near(devices, 18);
	assert_int_equal(type, 0x1a);
	raw[0x0c] = 0xff;
	raw[0x0d] = 0x7f;		/* extended size */
	raw[0x1c] = 0x00;
	raw[0x1d] = 0x00;
	raw[0x1e] = 0x01;		/* 65536 MiB */
	raw[0x0a] = 72;			/* no ECC */
	assert_int_equal(mr_dmi_parse_type17(raw, sizeof(raw), &bytes, &devices, &type), 0);
	assert_int_equal(bytes, 64 * MR_GIB);
	assert_near(devices, 64);
	/* DDR5: 16 Gb devices, ECC 80/64: 16 GiB = 8 x 1.25 = 10 devices. */
	raw[0x0c] = 0x00;
	raw[0x0d] = 0x40;		/* 16384 MiB */
	raw[0x08] = 80;
	raw[0x0a] = 64;
	raw[0x12] = 0x22;
	assert_int_equal(mr_dmi_parse_type17(raw, sizeof(raw), &bytes, &devices, &type), 0);
	assert_int_equal(bytes, 16 * MR_GIB);
	assert_near(devices, 10);
	assert_int_equal(type, 0x22);
	/* A type with no row (LPDDR5) is counted in the DDR4 row's 8 Gb devices. */
	raw[0x12] = 0x23;
	assert_int_equal(mr_dmi_parse_type17(raw, sizeof(raw), &bytes, &devices, &type), 0);
	assert_near(devices, 20);
	raw[0x0c] = 0;
	raw[0x0d] = 0;			/* empty slot */
	assert_int_equal(mr_dmi_parse_type17(raw, sizeof(raw), &bytes, &devices, &type), 0);
	assert_int_equal(bytes, 0);
	raw[0] = 16;			/* not type 17 */
	assert_int_equal(mr_dmi_parse_type17(raw, sizeof(raw), &bytes, &devices, &type), -EINVAL);
	raw[0] = 17;
	assert_int_equal(mr_dmi_parse_type17(raw, 0x10, &bytes, &devices, &type), -EINVAL);
}

static void write_file(const char *path, const char *s)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(s, f);
	fclose(f);
}

static void test_residency_json(void **state)
{
	char path[] = "/tmp/mr-residency-XXXXXX";
	struct mr_residency res;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	write_file(path, "{\"scope\":\"process\",\"interval_us\":5000,\"regions\":["
		   "{\"id\":2,\"intervals\":8,\"idle_intervals\":6,\"accesses\":12}]}");
	assert_int_equal(mr_residency_read_json(path, &res), 0);
	assert_int_equal(res.scope, MR_RESIDENCY_PROCESS);
	assert_int_equal(res.interval_us, 5000);
	assert_int_equal(res.nr_regions, 3);
	assert_int_equal(res.regions[0].intervals, 0);
	assert_int_equal(res.regions[2].intervals, 8);
	assert_int_equal(res.regions[2].idle_intervals, 6);
	assert_int_equal(res.regions[2].accesses, 12);
	mr_residency_free(&res);

	write_file(path, "{\"scope\":\"virtual\",\"interval_us\":5000,\"regions\":[]}");
	assert_int_equal(mr_residency_read_json(path, &res), -EINVAL);
	assert_non_null(strstr(mr_last_error(), "not physical or process"));
	write_file(path, "{\"scope\":\"physical\",\"interval_us\":-1,\"regions\":[]}");
	assert_int_equal(mr_residency_read_json(path, &res), -EINVAL);
	write_file(path, "{\"scope\":\"physical\",\"interval_us\":1,\"regions\":[{\"id\":0}]}");
	assert_int_equal(mr_residency_read_json(path, &res), -EINVAL);
	assert_non_null(strstr(mr_last_error(), "\"intervals\" missing"));
	write_file(path, "not json");
	assert_int_equal(mr_residency_read_json(path, &res), -EINVAL);
	unlink(path);
}

/*
 * Record -> residency. Power regions [0, 1G) and [1G, 2G); four snapshots:
 *   0: [0, 512M) accessed                -> r0 busy, r1 idle
 *   1: [0, 2G) not accessed               -> both idle
 *   2: [1G+4K, 1G+8K) accessed, [0, 1G) 0 -> r0 idle, r1 busy
 *   3: [512M, 1.5G) accessed              -> both busy
 * r0: 4 intervals, 2 idle; r1: 4 intervals, 2 idle.
 */
static void test_residency_from_record(void **state)
{
	static struct mr_range ranges[] = { { 0, MR_GIB }, { MR_GIB, MR_GIB } };
	struct mr_region rs[] = {
		{ .id = 0, .ranges = &ranges[0], .nr_ranges = 1, .size_bytes = MR_GIB },
		{ .id = 1, .ranges = &ranges[1], .nr_ranges = 1, .size_bytes = MR_GIB },
	};
	struct mr_region_map m2 = { .regions = rs, .nr_regions = 2 };
	struct mr_rec_region s0[] = { { 0, 512 * MR_MIB, 3, 0 } };
	struct mr_rec_region s1[] = { { 0, 2 * MR_GIB, 0, 0 } };
	struct mr_rec_region s2[] = { { 0, MR_GIB, 0, 0 }, { MR_GIB + 4096, MR_GIB + 8192, 1, 0 } };
	struct mr_rec_region s3[] = { { 512 * MR_MIB, 1536 * MR_MIB, 20, 0 } };
	struct mr_rec_snapshot snaps[] = {
		{ 100000, s0, 1 }, { 200000, s1, 1 }, { 300000, s2, 2 }, { 400000, s3, 1 },
	};
	struct mr_rec rec = { .hdr = { .kind = MR_MON_TARGET_PHYS, .attrs = { .aggr_us = 100000 },
				       .backend = "damon" },
			      .snaps = snaps, .nr_snaps = 4 };
	struct mr_residency res;

	(void)state;
	assert_int_equal(mr_residency_from_rec(&rec, "rec", &m2, &res), 0);
	assert_int_equal(res.scope, MR_RESIDENCY_PHYSICAL);
	assert_int_equal(res.interval_us, 100000);
	assert_int_equal(res.nr_regions, 2);
	assert_int_equal(res.regions[0].intervals, 4);
	assert_int_equal(res.regions[0].idle_intervals, 2);
	assert_int_equal(res.regions[1].intervals, 4);
	assert_int_equal(res.regions[1].idle_intervals, 2);
	mr_residency_free(&res);

	s3[0].nr_accesses = 0;		/* now r0 is idle in 1, 2, 3 and r1 in 0, 1, 3 */
	assert_int_equal(mr_residency_from_rec(&rec, "rec", &m2, &res), 0);
	assert_int_equal(res.regions[0].idle_intervals, 3);
	assert_int_equal(res.regions[1].idle_intervals, 3);
	mr_residency_free(&res);

	/* A process record of a pid that does not exist: refused, saying what to record. */
	rec.hdr.kind = MR_MON_TARGET_PROCESS;
	rec.hdr.pid = -7;
	assert_int_equal(mr_residency_from_rec(&rec, "rec", &m2, &res), -ESRCH);
	assert_non_null(strstr(mr_last_error(), "process-scoped"));
	assert_non_null(strstr(mr_last_error(), "is gone"));
	assert_non_null(strstr(mr_last_error(), "--phys"));
}

/* Write @n pagemap entries to @path. */
static void write_pagemap(const char *path, const uint64_t *ent, size_t n)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(ent, 8, n, f), n);
	fclose(f);
}

/*
 * A process-scoped record placed on power regions through a fixture's
 * /proc/PID/pagemap. Power region 0 is [0, 1 GiB), region 1 [1 GiB, 2 GiB). The
 * process (pid 4242) has virtual pages 16 and 17 present at PFN 1 (region 0) and at
 * 1 GiB + 1 page (region 1); page 32 is not present.
 *   snapshot 0: pages 16-17 accessed          -> both regions busy
 *   snapshot 1: only page 32 accessed         -> both idle (nothing in memory)
 *   snapshot 2: page 16 accessed              -> region 0 busy, region 1 idle
 * so region 0 is idle 1 of 3 intervals and region 1 2 of 3, labelled process-scoped.
 */
static void test_residency_from_process_record(void **state)
{
	uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE);
	static struct mr_range ranges[] = { { 0, MR_GIB }, { MR_GIB, MR_GIB } };
	struct mr_region rs[] = {
		{ .id = 0, .ranges = &ranges[0], .nr_ranges = 1, .size_bytes = MR_GIB },
		{ .id = 1, .ranges = &ranges[1], .nr_ranges = 1, .size_bytes = MR_GIB },
	};
	struct mr_region_map m2 = { .regions = rs, .nr_regions = 2 };
	struct mr_rec_region s0[] = { { 16 * pg, 18 * pg, 2, 0 }, { 32 * pg, 33 * pg, 0, 0 } };
	struct mr_rec_region s1[] = { { 16 * pg, 18 * pg, 0, 0 }, { 32 * pg, 33 * pg, 5, 0 } };
	struct mr_rec_region s2[] = { { 16 * pg, 17 * pg, 1, 0 }, { 17 * pg, 18 * pg, 0, 0 } };
	struct mr_rec_snapshot snaps[] = { { 100000, s0, 2 }, { 200000, s1, 2 }, { 300000, s2, 2 } };
	/* The record started at 1010 s; the process at btime 1000 + 5 s. */
	struct mr_rec rec = { .hdr = { .kind = MR_MON_TARGET_PROCESS, .pid = 4242,
				       .attrs = { .aggr_us = 100000 }, .backend = "refs",
				       .start_unix_ns = UINT64_C(1010000000000) },
			      .snaps = snaps, .nr_snaps = 3 };
	char root[] = "/tmp/mr-proc-root-XXXXXX", path[256], stat[512];
	uint64_t ent[33] = { 0 };
	struct mr_residency res;
	long hz = sysconf(_SC_CLK_TCK);

	(void)state;
	assert_non_null(mkdtemp(root));
	snprintf(path, sizeof(path), "%s/proc", root);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/proc/stat", root);
	write_file(path, "cpu  1 2 3 4\nbtime 1000\nprocesses 9\n");
	snprintf(stat, sizeof(stat), "4242 (access gen) S 1 4242 4242 0 -1 4194304 100 0 0 0 "
		 "1 2 0 0 20 0 1 0 %ld 1000000 100\n", 5 * hz);
	snprintf(path, sizeof(path), "%s/proc/4242", root);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/proc/4242/stat", root);
	write_file(path, stat);
	/* its one mapping: the pages the record names, [16, 33) */
	snprintf(stat, sizeof(stat), "%" PRIx64 "-%" PRIx64 " rw-p 00000000 00:00 0\n",
		 16 * pg, 33 * pg);
	snprintf(path, sizeof(path), "%s/proc/4242/maps", root);
	write_file(path, stat);
	ent[16] = (UINT64_C(1) << 63) | (4096 / pg ? 4096 / pg : 1);
	ent[17] = (UINT64_C(1) << 63) | ((MR_GIB + pg) / pg);
	ent[32] = 0;
	snprintf(path, sizeof(path), "%s/proc/4242/pagemap", root);
	write_pagemap(path, ent, 33);
	assert_int_equal(mr_root_set(root), 0);

	assert_int_equal(mr_residency_from_rec(&rec, "proc.rec", &m2, &res), 0);
	assert_int_equal(res.scope, MR_RESIDENCY_PROCESS);
	assert_int_equal(res.regions[0].intervals, 3);
	assert_int_equal(res.regions[0].idle_intervals, 1);
	assert_int_equal(res.regions[1].intervals, 3);
	assert_int_equal(res.regions[1].idle_intervals, 2);
	assert_non_null(strstr(res.from, "process-scoped: pid 4242"));
	assert_non_null(strstr(res.from, "/proc/4242/pagemap"));
	mr_residency_free(&res);

	/* The pid was reused: the process there started after the record did. */
	rec.hdr.start_unix_ns = UINT64_C(1002000000000);
	assert_int_equal(mr_residency_from_rec(&rec, "proc.rec", &m2, &res), -ESRCH);
	assert_non_null(strstr(mr_last_error(), "another process"));
	rec.hdr.start_unix_ns = UINT64_C(1010000000000);

	/* Present pages whose PFNs read 0 (no CAP_SYS_ADMIN): refused, saying so. */
	ent[16] = ent[17] = UINT64_C(1) << 63;
	write_pagemap(path, ent, 33);
	assert_int_equal(mr_residency_from_rec(&rec, "proc.rec", &m2, &res), -EPERM);
	assert_non_null(strstr(mr_last_error(), "CAP_SYS_ADMIN"));

	/* Gone: no /proc/4242. */
	unlink(path);
	snprintf(path, sizeof(path), "%s/proc/4242/stat", root);
	unlink(path);
	snprintf(path, sizeof(path), "%s/proc/4242/maps", root);
	unlink(path);
	snprintf(path, sizeof(path), "%s/proc/4242", root);
	rmdir(path);
	assert_int_equal(mr_residency_from_rec(&rec, "proc.rec", &m2, &res), -ESRCH);
	assert_non_null(strstr(mr_last_error(), "pid 4242 is gone"));

	assert_int_equal(mr_root_set("/"), 0);
	snprintf(path, sizeof(path), "%s/proc/stat", root);
	unlink(path);
	snprintf(path, sizeof(path), "%s/proc", root);
	rmdir(path);
	rmdir(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_datasheet_figures),
		cmocka_unit_test(test_region_power),
		cmocka_unit_test(test_energy_residency),
		cmocka_unit_test(test_calibrate_per_socket),
		cmocka_unit_test(test_energy_no_access_data),
		cmocka_unit_test(test_energy_accesses),
		cmocka_unit_test(test_dmi_devices),
		cmocka_unit_test(test_component_devices),
		cmocka_unit_test(test_ddr5_figures),
		cmocka_unit_test(test_ddr5_row),
		cmocka_unit_test(test_other_type_fallback),
		cmocka_unit_test(test_dmi_parse),
		cmocka_unit_test(test_residency_json),
		cmocka_unit_test(test_residency_from_record),
		cmocka_unit_test(test_residency_from_process_record),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
