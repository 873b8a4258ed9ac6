/* Energy source `perf`: the `power` PMU's energy-ram event (the kernel's RAPL perf
 * driver), one system-wide event per socket on the CPU its cpumask names. Event
 * type, config, scale and unit come from sysfs; libpfm4's rapl names are accepted. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <perfmon/pfmlib_perf_event.h>

#include "common/root.h"
#include "common/sys.h"
#include "power/energy.h"

#define PMU "/sys/bus/event_source/devices/power"

/* libpfm4's names of the RAPL DRAM event, and the kernel's sysfs name for it. */
static const char *const pfm_dram_names[] = {
	"rapl::RAPL_ENERGY_DRAM", "RAPL_ENERGY_DRAM", "amd64_rapl::RAPL_ENERGY_DRAM",
};

/* The sysfs event name for @event, or NULL if it is not a DRAM energy event. */
static const char *sysfs_name(const char *event, bool *is_pfm)
{
	unsigned i;

	*is_pfm = false;
	if (!event || strcmp(event, "energy-ram") == 0 || strcmp(event, "power/energy-ram/") == 0)
		return "energy-ram";
	for (i = 0; i < MR_ARRAY_SIZE(pfm_dram_names); i++)
		if (strcasecmp(event, pfm_dram_names[i]) == 0) {
			*is_pfm = true;
			return "energy-ram";
		}
	return NULL;
}

/* "event=0x03" (the format is config:0-7 for this PMU) -> 3. */
static int parse_event_terms(const char *path, const char *s, uint64_t *config)
{
	const char *p = strstr(s, "event=");
	char buf[64];
	size_t n;

	if (!p)
		return mr_error(-EINVAL, "%s: no event= term in \"%s\"", path, s);
	p += strlen("event=");
	n = strcspn(p, ", \n");
	if (n == 0 || n >= sizeof(buf))
		return mr_error(-EINVAL, "%s: bad event term in \"%s\"", path, s);
	memcpy(buf, p, n);
	buf[n] = '\0';
	if (mr_parse_u64(buf, config))
		return mr_error(-EINVAL, "%s: bad event value \"%s\"", path, buf);
	return 0;
}

/* On the live machine, let libpfm4 encode a name it knows. 0 if it did. */
static int pfm_encode(const char *event, uint32_t *type, uint64_t *config)
{
	struct perf_event_attr attr;
	pfm_perf_encode_arg_t arg;

	if (mr_root_is_fixture() || pfm_initialize() != PFM_SUCCESS)
		return -ENOENT;
	memset(&attr, 0, sizeof(attr));
	memset(&arg, 0, sizeof(arg));
	arg.attr = &attr;
	arg.size = sizeof(arg);
	if (pfm_get_os_event_encoding(event, PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT, &arg)
	    != PFM_SUCCESS)
		return -ENOENT;
	*type = attr.type;
	*config = attr.config;
	return 0;
}

static int perf_open(struct mr_energy_source *src)
{
	char path[256], buf[4096], unit[64], events[512] = "";
	char scale_str[64];
	int pmu_cpus[MR_ENERGY_MAX_SOCKETS];
	unsigned nr_pmu_cpus, i;
	const char *ev;
	bool is_pfm, by_pfm = false;
	uint64_t type, config;
	uint32_t pfm_type;
	double scale;
	int ret;

	ev = sysfs_name(src->opts.event, &is_pfm);
	if (!ev)
		return mr_error(-EINVAL, "perf: event '%s' is not a DRAM energy event "
				"(energy-ram, rapl::RAPL_ENERGY_DRAM)", src->opts.event);
	if (!mr_root_exists(PMU "/type"))
		return mr_error(-ENOENT, "%s: no power PMU (no RAPL perf driver)", PMU);
	ret = mr_root_read_u64(PMU "/type", &type);
	if (ret)
		return ret;
	mr_pathf(path, sizeof(path), PMU "/events/%s", ev);
	if (!mr_root_exists(path)) {
		DIR *d = mr_root_opendir(PMU "/events");
		struct dirent *de;

		while (d && (de = readdir(d))) {
			if (de->d_name[0] == '.' || strchr(de->d_name, '.'))
				continue;
			if (strlen(events) + strlen(de->d_name) + 3 < sizeof(events))
				snprintf(events + strlen(events), sizeof(events) - strlen(events),
					 "%s%s", events[0] ? ", " : "", de->d_name);
		}
		if (d)
			closedir(d);
		return mr_error(-ENODEV, "%s: the power PMU has no %s event (events: %s)",
				PMU, ev, events[0] ? events : "none");
	}
	ret = mr_root_read_str(path, buf, sizeof(buf));
	if (ret)
		return ret;
	ret = parse_event_terms(path, buf, &config);
	if (ret)
		return ret;
	if (is_pfm && pfm_encode(src->opts.event, &pfm_type, &config) == 0) {
		type = pfm_type;
		by_pfm = true;
	}

	ret = mr_root_read_str(mr_pathf(path, sizeof(path), PMU "/events/%s.scale", ev),
			       buf, sizeof(buf));
	if (ret)
		return ret;
	{
		char *end;

		scale = strtod(buf, &end);
		if (end == buf || *end || !(scale > 0))
			return mr_error(-EINVAL, "%s: bad scale \"%s\"", path, buf);
		snprintf(scale_str, sizeof(scale_str), "%.63s", buf);
	}
	ret = mr_root_read_str(mr_pathf(path, sizeof(path), PMU "/events/%s.unit", ev),
			       unit, sizeof(unit));
	if (ret)
		return ret;
	if (strcmp(unit, "Joules") != 0)
		return mr_error(-EINVAL, "%s: unit \"%s\", expected Joules", path, unit);

	/* The PMU's cpumask names one CPU per socket (per die on multi-die parts). */
	ret = mr_root_read_str(PMU "/cpumask", buf, sizeof(buf));
	if (ret)
		return ret;
	ret = mr_energy_parse_cpulist(buf, pmu_cpus, MR_ARRAY_SIZE(pmu_cpus), &nr_pmu_cpus);
	if (ret)
		return mr_error_wrap(ret, "%s/cpumask", PMU);

	if (nr_pmu_cpus > MR_ENERGY_MAX_SOCKETS)
		return mr_error(-E2BIG, "%s/cpumask: too many cpus", PMU);
	for (i = 0; i < nr_pmu_cpus; i++) {
		struct mr_energy_counter *c = &src->counters[src->nr_counters];
		int pkg;

		c->cpu = pmu_cpus[i];
		pkg = mr_energy_cpu_package(c->cpu);
		c->socket = pkg >= 0 ? pkg : (int)i;
		snprintf(c->label, sizeof(c->label), "power/%s/ cpu%d", ev, c->cpu);
		c->range_raw = 0;		/* the kernel keeps a 64-bit count */
		c->uj_per_raw = scale * 1e6;
		src->nr_counters++;
	}

	for (i = 0; i < src->nr_counters; i++) {
		struct mr_energy_counter *c = &src->counters[i];
		struct perf_event_attr attr;
		long fd;

		memset(&attr, 0, sizeof(attr));
		attr.size = sizeof(attr);
		attr.type = (uint32_t)type;
		attr.config = config;
		fd = mr_sys_perf_event_open(&attr, -1, c->cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			int err = errno;

			return mr_error(-err, "perf_event_open(power/%s/, cpu %d): %s%s", ev,
					c->cpu, strerror(err),
					err == EACCES || err == EPERM ?
					" (system-wide events need root or "
					"kernel.perf_event_paranoid <= 0)" : "");
		}
		c->fd = (int)fd;
	}
	snprintf(src->detail, sizeof(src->detail),
		 "perf power/%s/ type %llu config %#llx scale %s J%s", ev,
		 (unsigned long long)type, (unsigned long long)config, scale_str,
		 by_pfm ? " (encoded by libpfm4)" : "");
	return 0;
}

static int perf_read(struct mr_energy_source *src)
{
	unsigned i;

	for (i = 0; i < src->nr_counters; i++) {
		struct mr_energy_counter *c = &src->counters[i];
		uint64_t v;
		ssize_t r;

		r = mr_sys_read(c->fd, &v, sizeof(v));
		if (r != (ssize_t)sizeof(v))
			return mr_error(r < 0 ? -errno : -EIO, "%s: read: %s", c->label,
					r < 0 ? strerror(errno) : "short read");
		c->raw = v;
	}
	return 0;
}

const struct mr_energy_ops mr_energy_perf_ops = {
	.name = "perf",
	.description = "the power PMU's energy-ram event through perf_event_open",
	.measured = true,
	.open = perf_open,
	.read = perf_read,
};
