/* Metrics for fleets: the controller's status as Prometheus's text exposition format,
 * for node_exporter's textfile collector (memreg_* names in base units, _total on
 * counters, no sample timestamps: node_exporter refuses files that carry them). */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "common/util.h"
#include "controller/run.h"

static uint64_t get_u64(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) ? (uint64_t)json_object_get_uint64(v) : 0;
}

static void family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* One counter per scheme, from the scheme's JSON field @key. */
static void scheme_family(FILE *f, json_object *schemes, const char *name, const char *key,
			  const char *help)
{
	size_t i, n = json_object_array_length(schemes);

	family(f, name, "counter", help);
	for (i = 0; i < n; i++) {
		json_object *s = json_object_array_get_idx(schemes, i), *a;

		json_object_object_get_ex(s, "action", &a);
		fprintf(f, "%s{scheme=\"%zu\",action=\"%s\"} %" PRIu64 "\n", name, i,
			json_object_get_string(a), get_u64(s, key));
	}
}

int mr_ctl_metrics_format(json_object *status, FILE *f)
{
	static const char *const kinds[] = { "free", "movable", "unmovable" };
	json_object *schemes, *regions, *energy, *targeted, *v;
	size_t i, n, k;

	if (!json_object_object_get_ex(status, "schemes", &schemes) ||
	    !json_object_object_get_ex(status, "regions", &regions))
		return mr_error(-EINVAL, "status: no schemes or regions");
	family(f, "memreg_controller_cpu_seconds_total", "counter",
	       "CPU time of the controller and of the kernel threads monitoring for it.");
	json_object_object_get_ex(status, "cpu_seconds", &v);
	fprintf(f, "memreg_controller_cpu_seconds_total %.6f\n", json_object_get_double(v));
	family(f, "memreg_controller_aggregations_total", "counter",
	       "Aggregation intervals the schemes were applied in.");
	fprintf(f, "memreg_controller_aggregations_total %" PRIu64 "\n",
		get_u64(status, "aggregations"));

	scheme_family(f, schemes, "memreg_scheme_tried_regions_total", "nr_tried",
		      "Regions a scheme's pattern matched and its quota let it try.");
	scheme_family(f, schemes, "memreg_scheme_tried_bytes_total", "sz_tried",
		      "Bytes of the regions a scheme tried.");
	scheme_family(f, schemes, "memreg_scheme_tried_pages_total", "pages_tried",
		      "Base pages of the regions a scheme tried.");
	scheme_family(f, schemes, "memreg_scheme_applied_regions_total", "nr_applied",
		      "Regions a scheme's action was applied to.");
	scheme_family(f, schemes, "memreg_scheme_applied_bytes_total", "sz_applied",
		      "Bytes a scheme's action was applied to (moved, paged out, ...).");
	scheme_family(f, schemes, "memreg_scheme_applied_pages_total", "pages_applied",
		      "Base pages a scheme's action was applied to.");
	scheme_family(f, schemes, "memreg_scheme_quota_exceeded_total", "qt_exceeds",
		      "Quota reset intervals that ended with the quota spent.");

	family(f, "memreg_scheme_failed_bytes_total", "counter",
	       "Bytes a scheme's action did not move or advise, by reason.");
	n = json_object_array_length(schemes);
	for (i = 0; i < n; i++) {
		json_object *s = json_object_array_get_idx(schemes, i), *a, *fb;

		json_object_object_get_ex(s, "action", &a);
		if (!json_object_object_get_ex(s, "failed_bytes", &fb))
			continue;
		json_object_object_foreach(fb, reason, val)
			fprintf(f, "memreg_scheme_failed_bytes_total{scheme=\"%zu\",action=\"%s\","
				"reason=\"%s\"} %" PRIu64 "\n", i, json_object_get_string(a), reason,
				(uint64_t)json_object_get_uint64(val));
	}
	family(f, "memreg_scheme_active", "gauge",
	       "1 when a scheme's watermarks let it run, 0 when they switched it off.");
	for (i = 0; i < n; i++) {
		json_object *s = json_object_array_get_idx(schemes, i), *a, *act;

		json_object_object_get_ex(s, "action", &a);
		json_object_object_get_ex(s, "active", &act);
		fprintf(f, "memreg_scheme_active{scheme=\"%zu\",action=\"%s\"} %d\n", i,
			json_object_get_string(a), json_object_get_boolean(act) ? 1 : 0);
	}

	family(f, "memreg_region_bytes", "gauge",
	       "Bytes of a memory power region, by kind (size, and free/movable/unmovable "
	       "where occupancy is measured).");
	n = json_object_array_length(regions);
	for (i = 0; i < n; i++) {
		json_object *r = json_object_array_get_idx(regions, i);
		int id = (int)get_u64(r, "id");
		json_object *node;

		json_object_object_get_ex(r, "node", &node);
		fprintf(f, "memreg_region_bytes{region=\"%d\",node=\"%d\",kind=\"size\"} %" PRIu64
			"\n", id, json_object_get_int(node), get_u64(r, "size_bytes"));
		for (k = 0; k < MR_ARRAY_SIZE(kinds); k++) {
			char key[32];

			snprintf(key, sizeof(key), "%s_bytes", kinds[k]);
			if (!json_object_object_get_ex(r, key, &v))
				continue;
			fprintf(f, "memreg_region_bytes{region=\"%d\",node=\"%d\",kind=\"%s\"} %"
				PRIu64 "\n", id, json_object_get_int(node), kinds[k],
				(uint64_t)json_object_get_uint64(v));
		}
	}
	family(f, "memreg_region_targeted", "gauge",
	       "1 for a region the controller moves pages into or out of (evacuation "
	       "refuses these), 0 otherwise.");
	json_object_object_get_ex(status, "targeted_regions", &targeted);
	for (i = 0; i < n; i++) {
		json_object *r = json_object_array_get_idx(regions, i);
		uint64_t id = get_u64(r, "id");
		size_t t, nt = targeted ? json_object_array_length(targeted) : 0;
		int on = 0;

		for (t = 0; t < nt; t++)
			if ((uint64_t)json_object_get_int(json_object_array_get_idx(targeted, t)) == id)
				on = 1;
		fprintf(f, "memreg_region_targeted{region=\"%" PRIu64 "\"} %d\n", id, on);
	}
	if (json_object_object_get_ex(status, "energy", &energy) &&
	    json_object_array_length(energy)) {
		family(f, "memreg_dram_energy_joules_total", "counter",
		       "DRAM energy since the controller started, per socket and source "
		       "(RAPL through powercap, perf or MSR, or memreg's model).");
		n = json_object_array_length(energy);
		for (i = 0; i < n; i++) {
			json_object *e = json_object_array_get_idx(energy, i), *src, *j;

			json_object_object_get_ex(e, "source", &src);
			json_object_object_get_ex(e, "joules", &j);
			fprintf(f, "memreg_dram_energy_joules_total{socket=\"%" PRIu64 "\",source=\"%s\"} "
				"%.6f\n", get_u64(e, "socket"), json_object_get_string(src),
				json_object_get_double(j));
		}
	}
	return ferror(f) ? mr_error(-EIO, "metrics: write error") : 0;
}

int mr_ctl_metrics_write(json_object *status, const char *dir)
{
	char tmp[4096], path[4096];
	FILE *f;
	int err;

	/* the temporary name must not end in .prom: the collector reads only those */
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s/.memreg.prom.tmp.%d", dir, (int)getpid()) >=
	    sizeof(tmp) ||
	    (size_t)snprintf(path, sizeof(path), "%s/memreg.prom", dir) >= sizeof(path))
		return mr_error(-ENAMETOOLONG, "%s: path too long", dir);
	f = fopen(tmp, "w");
	if (!f)
		return mr_error(-errno, "%s: %s", tmp, strerror(errno));
	err = mr_ctl_metrics_format(status, f);
	if (fflush(f) && !err)
		err = mr_error(-errno, "%s: %s", tmp, strerror(errno));
	if (fclose(f) && !err)
		err = mr_error(-errno, "%s: %s", tmp, strerror(errno));
	if (!err && rename(tmp, path))
		err = mr_error(-errno, "%s: %s", path, strerror(errno));
	if (err)
		unlink(tmp);
	return err;
}
