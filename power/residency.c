/* The residency input of the power model: a small JSON file giving, per region, the
 * monitoring intervals and those with no sampled access (format in docs/energy.md). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "common/util.h"

#include "power/model.h"

static int get_u64(const char *path, struct json_object *o, const char *key, bool need,
		   uint64_t *out)
{
	struct json_object *v;
	int64_t n;

	if (!json_object_object_get_ex(o, key, &v)) {
		*out = 0;
		return need ? mr_error(-EINVAL, "%s: \"%s\" missing", path, key) : 0;
	}
	if (!json_object_is_type(v, json_type_int))
		return mr_error(-EINVAL, "%s: \"%s\" is not an integer", path, key);
	n = json_object_get_int64(v);
	if (n < 0)
		return mr_error(-EINVAL, "%s: \"%s\" is negative", path, key);
	*out = (uint64_t)n;
	return 0;
}

int mr_residency_read_json(const char *path, struct mr_residency *res)
{
	struct json_object *root, *v, *regions;
	const char *scope;
	size_t i, n;
	int ret = 0;

	memset(res, 0, sizeof(*res));
	if (access(path, R_OK) < 0)
		return mr_error(-errno, "%s: %s", path, strerror(errno));
	root = json_object_from_file(path);
	if (!root) {
		/* json-c's message ends in a newline and repeats the path: not ours */
		return mr_error(-EINVAL, "%s: not a JSON file", path);
	}
	if (!json_object_is_type(root, json_type_object) ||
	    !json_object_object_get_ex(root, "scope", &v) || !json_object_is_type(v, json_type_string)) {
		ret = mr_error(-EINVAL, "%s: no \"scope\" string", path);
		goto out;
	}
	scope = json_object_get_string(v);
	if (strcmp(scope, "physical") == 0)
		res->scope = MR_RESIDENCY_PHYSICAL;
	else if (strcmp(scope, "process") == 0)
		res->scope = MR_RESIDENCY_PROCESS;
	else {
		ret = mr_error(-EINVAL, "%s: scope \"%s\" is not physical or process", path, scope);
		goto out;
	}
	ret = get_u64(path, root, "interval_us", true, &res->interval_us);
	if (ret)
		goto out;
	if (json_object_object_get_ex(root, "source", &v) && json_object_is_type(v, json_type_string))
		snprintf(res->from, sizeof(res->from), "%s", json_object_get_string(v));
	else
		snprintf(res->from, sizeof(res->from), "%s", path);
	if (!json_object_object_get_ex(root, "regions", &regions) ||
	    !json_object_is_type(regions, json_type_array)) {
		ret = mr_error(-EINVAL, "%s: no \"regions\" array", path);
		goto out;
	}
	n = json_object_array_length(regions);
	for (i = 0; i < n; i++) {
		struct json_object *r = json_object_array_get_idx(regions, i);
		struct mr_residency_region rr;
		uint64_t id;

		if (!json_object_is_type(r, json_type_object)) {
			ret = mr_error(-EINVAL, "%s: regions[%zu] is not an object", path, i);
			goto out;
		}
		if ((ret = get_u64(path, r, "id", true, &id)) ||
		    (ret = get_u64(path, r, "intervals", true, &rr.intervals)) ||
		    (ret = get_u64(path, r, "idle_intervals", true, &rr.idle_intervals)) ||
		    (ret = get_u64(path, r, "accesses", false, &rr.accesses)))
			goto out;
		if (rr.idle_intervals > rr.intervals || id > 1 << 20) {
			ret = mr_error(-EINVAL, "%s: regions[%zu]: idle_intervals > intervals or bad id",
				       path, i);
			goto out;
		}
		if (id >= res->nr_regions) {
			struct mr_residency_region *nr = realloc(res->regions, (id + 1) * sizeof(*nr));

			if (!nr) {
				ret = mr_error(-ENOMEM, "%s: out of memory", path);
				goto out;
			}
			memset(nr + res->nr_regions, 0, (id + 1 - res->nr_regions) * sizeof(*nr));
			res->regions = nr;
			res->nr_regions = (unsigned)id + 1;
		}
		res->regions[id] = rr;
	}
out:
	json_object_put(root);
	if (ret)
		mr_residency_free(res);
	return ret;
}

void mr_residency_free(struct mr_residency *res)
{
	free(res->regions);
	res->regions = NULL;
	res->nr_regions = 0;
}
