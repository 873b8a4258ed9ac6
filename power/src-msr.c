/* Energy source `msr`: MSR_DRAM_ENERGY_STATUS (0x619) through /dev/cpu/N/msr on one
 * CPU per socket, in the energy unit of MSR_RAPL_POWER_UNIT (0x606), except on the
 * server models whose DRAM domain counts in a fixed 15.3 uJ unit. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/root.h"
#include "power/energy.h"

#define MSR_RAPL_POWER_UNIT	0x606
#define MSR_DRAM_ENERGY_STATUS	0x619

/* The fixed DRAM energy unit, uJ: "Intel Xeon Processor E5-1600 and E5-2600 v3
 * Product Families Datasheet, Vol. 2" (330784-001); Linux applies it in
 * drivers/powercap/intel_rapl_common.c (dram_domain_energy_unit = 15300 pJ) and
 * arch/x86/events/rapl.c (apply_quirk: 2^-16 J). */
#define MR_MSR_FIXED_DRAM_UJ	15.3

/* Family-6 models whose DRAM domain uses the fixed unit, as Linux's rapl drivers
 * list them (powercap: rapl_defaults_hsw_server; perf: model_hsx, model_knl).
 * Broadwell-DE is quirked by the perf driver only; Ice Lake-SP/D by the powercap
 * driver (newer than the perf list read); we follow the union. Sapphire Rapids had
 * the quirk once and lost it: its DRAM unit is the one in 0x606. docs/energy.md. */
static const struct {
	unsigned model;
	const char *name;
} fixed_unit_models[] = {
	{ 0x3f, "Haswell-EP (HASWELL_X)" },
	{ 0x4f, "Broadwell-EP (BROADWELL_X)" },
	{ 0x56, "Broadwell-DE (BROADWELL_D)" },
	{ 0x55, "Skylake-SP/Cascade Lake-SP (SKYLAKE_X)" },
	{ 0x6a, "Ice Lake-SP (ICELAKE_X)" },
	{ 0x6c, "Ice Lake-D (ICELAKE_D)" },
	{ 0x57, "Xeon Phi Knights Landing (XEON_PHI_KNL)" },
	{ 0x85, "Xeon Phi Knights Mill (XEON_PHI_KNM)" },
};

/* The first CPU's vendor, family and model from /proc/cpuinfo. */
static int read_cpuid(char *vendor, size_t len, unsigned *family, unsigned *model)
{
	char *data, *line, *save = NULL;
	int ret, seen = 0;

	ret = mr_root_read_file("/proc/cpuinfo", 16 << 20, &data, NULL);
	if (ret)
		return ret;
	vendor[0] = '\0';
	for (line = strtok_r(data, "\n", &save); line && seen != 7;
	     line = strtok_r(NULL, "\n", &save)) {
		char *colon = strchr(line, ':');
		const char *val;

		if (!colon)
			continue;
		val = colon + 1 + (colon[1] == ' ');
		if (!(seen & 1) && strncmp(line, "vendor_id", 9) == 0) {
			snprintf(vendor, len, "%s", val);
			seen |= 1;
		} else if (!(seen & 2) && strncmp(line, "cpu family", 10) == 0) {
			*family = (unsigned)strtoul(val, NULL, 10);
			seen |= 2;
		} else if (!(seen & 4) && strncmp(line, "model", 5) == 0 &&
			   (line[5] == ' ' || line[5] == '\t')) {
			*model = (unsigned)strtoul(val, NULL, 10);
			seen |= 4;
		}
	}
	free(data);
	if (seen != 7)
		return mr_error(-EINVAL, "/proc/cpuinfo: no vendor_id, cpu family and model");
	return 0;
}

static int read_msr(struct mr_energy_counter *c, uint32_t msr, uint64_t *val)
{
	long r = mr_root_pread(c->fd, val, sizeof(*val), msr);

	if (r != (long)sizeof(*val))
		return mr_error(r < 0 ? (int)r : -EIO, "/dev/cpu/%d/msr: MSR %#x not readable: %s",
				c->cpu, msr, r < 0 ? strerror((int)-r) : "short read");
	return 0;
}

static int msr_open(struct mr_energy_source *src)
{
	int cpus[MR_ENERGY_MAX_SOCKETS], pkgs[MR_ENERGY_MAX_SOCKETS];
	unsigned nr, i, family = 0, model = 0;
	const char *quirk = NULL;
	char vendor[64];
	int ret;

	ret = read_cpuid(vendor, sizeof(vendor), &family, &model);
	if (ret)
		return ret;
	if (strcmp(vendor, "GenuineIntel") != 0)
		return mr_error(-ENODEV, "%s CPU: no DRAM energy MSR (only Intel has a RAPL "
				"DRAM domain)", vendor);
	if (family == 6)
		for (i = 0; i < MR_ARRAY_SIZE(fixed_unit_models); i++)
			if (fixed_unit_models[i].model == model)
				quirk = fixed_unit_models[i].name;
	ret = mr_energy_socket_cpus(cpus, pkgs, MR_ARRAY_SIZE(cpus), &nr);
	if (ret)
		return ret;
	for (i = 0; i < nr; i++) {
		struct mr_energy_counter *c = &src->counters[i];
		char path[64];
		uint64_t unit;
		int fd;

		c->cpu = cpus[i];
		c->socket = pkgs[i];
		snprintf(c->label, sizeof(c->label), "cpu%d/msr:%#x", c->cpu,
			 MSR_DRAM_ENERGY_STATUS);
		mr_pathf(path, sizeof(path), "/dev/cpu/%d/msr", c->cpu);
		if (!mr_root_exists(path))
			return mr_error(-ENOENT, "%s: not present (load the msr module)", path);
		fd = mr_root_open(path, O_RDONLY);
		if (fd < 0)
			return fd == -EACCES || fd == -EPERM ?
			       mr_error_wrap(fd, "reading MSRs needs root and CAP_SYS_RAWIO") : fd;
		c->fd = fd;
		src->nr_counters++;
		ret = read_msr(c, MSR_RAPL_POWER_UNIT, &unit);
		if (ret)
			return ret;
		/* Energy status unit: bits 12:8, 1/2^ESU joules. */
		c->uj_per_raw = quirk ? MR_MSR_FIXED_DRAM_UJ :
			1e6 / (double)(UINT64_C(1) << ((unit >> 8) & 0x1f));
		c->range_raw = UINT64_C(1) << 32;
	}
	if (quirk)
		mr_energy_note(src, "msr: family 6 model %#x is %s: DRAM energy unit fixed at "
			       "15.3 uJ, not the unit in MSR 0x606", model, quirk);
	snprintf(src->detail, sizeof(src->detail), "MSR 0x619 DRAM_ENERGY_STATUS, %.6g uJ/count%s",
		 src->counters[0].uj_per_raw, quirk ? " (fixed DRAM unit)" : "");
	return src->ops->read(src);
}

static int msr_read(struct mr_energy_source *src)
{
	unsigned i;
	int ret;

	for (i = 0; i < src->nr_counters; i++) {
		uint64_t v;

		ret = read_msr(&src->counters[i], MSR_DRAM_ENERGY_STATUS, &v);
		if (ret)
			return ret;
		src->counters[i].raw = v & 0xffffffffu;
	}
	return 0;
}

const struct mr_energy_ops mr_energy_msr_ops = {
	.name = "msr",
	.description = "MSR_DRAM_ENERGY_STATUS through /dev/cpu/N/msr",
	.measured = true,
	.open = msr_open,
	.read = msr_read,
};
