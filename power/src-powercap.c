/* Energy source `powercap`: the RAPL DRAM zones the kernel's intel_rapl driver
 * exports as /sys/class/powercap/intel-rapl:N:M with name "dram", one per socket. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/root.h"
#include "common/sys.h"
#include "power/energy.h"

#define POWERCAP "/sys/class/powercap"

static int cmp_counter(const void *a, const void *b)
{
	const struct mr_energy_counter *x = a, *y = b;

	return (x->socket > y->socket) - (x->socket < y->socket);
}

/* energy_uj became root-only in Linux 5.10 (CVE-2020-8694, the PLATYPUS attack). */
static int unreadable(const char *path, int err)
{
	return mr_error(err, "%s exists but is not readable (%s): RAPL energy files are "
			"root-only since Linux 5.10 (CVE-2020-8694); run as root", path,
			strerror(-err));
}

static int powercap_open(struct mr_energy_source *src)
{
	char names[256] = "";
	char path[320], name[64];
	struct dirent *de;
	DIR *d;
	int ret = 0;

	d = mr_root_opendir(POWERCAP);
	if (!d)
		return mr_error(-ENOENT, "%s: not present (no intel_rapl driver)", POWERCAP);
	while ((de = readdir(d))) {
		struct mr_energy_counter *c;
		unsigned pkg, sub;
		char tail;
		uint64_t max;

		if (sscanf(de->d_name, "intel-rapl:%u:%u%c", &pkg, &sub, &tail) != 2) {
			/* A package zone: only listed, for the message. */
			if (sscanf(de->d_name, "intel-rapl:%u%c", &pkg, &tail) == 1 &&
			    mr_root_read_str(mr_pathf(path, sizeof(path), POWERCAP "/%s/name",
						      de->d_name), name, sizeof(name)) == 0 &&
			    strlen(names) + strlen(name) + 3 < sizeof(names))
				snprintf(names + strlen(names), sizeof(names) - strlen(names),
					 "%s%s", names[0] ? ", " : "", name);
			continue;
		}
		ret = mr_root_read_str(mr_pathf(path, sizeof(path), POWERCAP "/%s/name",
						de->d_name), name, sizeof(name));
		if (ret)
			break;
		if (strcmp(name, "dram") != 0) {
			if (strlen(names) + strlen(name) + 3 < sizeof(names))
				snprintf(names + strlen(names), sizeof(names) - strlen(names),
					 "%s%s", names[0] ? ", " : "", name);
			continue;
		}
		if (src->nr_counters == MR_ENERGY_MAX_SOCKETS) {
			ret = mr_error(-E2BIG, "%s: more than %d dram zones", POWERCAP,
				       MR_ENERGY_MAX_SOCKETS);
			break;
		}
		c = &src->counters[src->nr_counters];
		c->socket = (int)pkg;
		/* The parent zone is "package-P": the physical package id, when readable. */
		if (mr_root_read_str(mr_pathf(path, sizeof(path), POWERCAP "/intel-rapl:%u/name",
					      pkg), name, sizeof(name)) == 0) {
			unsigned p;

			if (sscanf(name, "package-%u", &p) == 1)
				c->socket = (int)p;
		}
		snprintf(c->label, sizeof(c->label), "%s", de->d_name);
		snprintf(c->path, sizeof(c->path), POWERCAP "/%s/energy_uj", de->d_name);
		ret = mr_root_read_u64(mr_pathf(path, sizeof(path),
				POWERCAP "/%s/max_energy_range_uj", de->d_name), &max);
		if (ret == -EACCES || ret == -EPERM) {
			ret = unreadable(path, ret);
			break;
		}
		if (ret)
			break;
		/* energy_uj runs from 0 to max_energy_range_uj inclusive. */
		c->range_raw = max + 1;
		c->uj_per_raw = 1.0;
		src->nr_counters++;
	}
	closedir(d);
	if (ret)
		return ret;
	if (src->nr_counters == 0)
		return mr_error(-ENODEV, "%s: no dram zone (zones: %s)", POWERCAP,
				names[0] ? names : "none");
	qsort(src->counters, src->nr_counters, sizeof(src->counters[0]), cmp_counter);
	snprintf(src->detail, sizeof(src->detail), "RAPL DRAM domain, %s/intel-rapl:N:M/energy_uj",
		 POWERCAP);
	/* A first read here turns a permission problem into a clear message at open. */
	return src->ops->read(src);
}

static int powercap_read(struct mr_energy_source *src)
{
	unsigned i;
	int ret;

	for (i = 0; i < src->nr_counters; i++) {
		struct mr_energy_counter *c = &src->counters[i];

		ret = mr_root_read_u64(c->path, &c->raw);
		if (ret == -EACCES || ret == -EPERM)
			return unreadable(c->path, ret);
		if (ret)
			return ret;
	}
	return 0;
}

const struct mr_energy_ops mr_energy_powercap_ops = {
	.name = "powercap",
	.description = "RAPL DRAM zones in /sys/class/powercap (intel_rapl)",
	.measured = true,
	.open = powercap_open,
	.read = powercap_read,
};
