/* The damon backend's regions: what memreg gives DAMON (a process's mappings,
 * coalesced; physical memory's System RAM from /proc/iomem) and the stat scheme's
 * tried regions it reads back when there is no tracefs. */
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/root.h"
#include "common/util.h"
#include "monitor/damon.h"
#include "monitor/monitor.h"

#define CTX_FMT MR_DAMON_KDAMONDS "/%u/contexts/0"
#define SCHEME_FMT CTX_FMT "/schemes/0"

int mr_mon_damon_ram_ranges(struct mr_mon_range **out, size_t *nr)
{
	char *data = NULL, *line, *save = NULL;
	struct mr_mon_range *r = NULL;
	size_t len, n = 0;
	int err = mr_root_read_file("/proc/iomem", 1u << 20, &data, &len);

	if (err)
		return err;
	for (line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct mr_mon_range *p;
		uint64_t s, e;

		if (line[0] == ' ' || !strstr(line, ": System RAM"))
			continue;	/* top level entries only */
		if (sscanf(line, "%" SCNx64 "-%" SCNx64, &s, &e) != 2 || e <= s)
			continue;
		p = realloc(r, (n + 1) * sizeof(*r));
		if (!p) {
			free(r);
			free(data);
			return mr_error(-ENOMEM, "damon: out of memory");
		}
		r = p;
		r[n].start = s;
		r[n].end = e + 1;
		n++;
	}
	free(data);
	if (!n || (n == 1 && r[0].end <= 1)) {
		free(r);
		return mr_error(-EPERM, "/proc/iomem: no System RAM addresses (needs root)");
	}
	*out = r;
	*nr = n;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int mr_mon_damon_coalesce(struct mr_mon_range *r, size_t *nr, size_t limit)
{
	uint64_t *gaps, cut;
	size_t i, n = *nr, out, need, at_cut = 0;

	if (!limit)
		limit = 1;
	if (n <= limit)
		return 0;
	gaps = malloc((n - 1) * sizeof(*gaps));
	if (!gaps)
		return mr_error(-ENOMEM, "damon: out of memory");
	for (i = 1; i < n; i++)
		gaps[i - 1] = r[i].start - r[i - 1].end;
	qsort(gaps, n - 1, sizeof(*gaps), cmp_u64);
	/* close the n - limit narrowest gaps: all below @cut, and of those equal to
	 * it as many as still needed, lowest addresses first */
	need = n - limit;
	cut = gaps[need - 1];
	for (i = 0; i < need; i++)
		at_cut += gaps[i] == cut;
	free(gaps);
	for (i = 1, out = 0; i < n; i++) {
		uint64_t gap = r[i].start - r[out].end;

		if (gap < cut || (gap == cut && at_cut && at_cut--))
			r[out].end = r[i].end;
		else
			r[++out] = r[i];
	}
	*nr = out + 1;
	return 0;
}

int mr_mon_damon_target_ranges(pid_t pid, const struct mr_mon_attrs *a, struct mr_mon_range **r,
			       size_t *nr)
{
	int err = mr_mon_read_maps(pid, r, nr);

	if (err)
		return err;
	if (!*nr) {
		free(*r);
		*r = NULL;
		return mr_error(-ESRCH, "damon: process %d has no mappings", (int)pid);
	}
	err = mr_mon_damon_coalesce(*r, nr, a->max_nr_regions / 2);
	if (err) {
		free(*r);
		*r = NULL;
	}
	return err;
}

static int wr_u64(struct mr_mon_ctx *ctx, const char *path, uint64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	return mr_root_write_str(path, buf, ctx->apply);
}

int mr_mon_damon_write_regions(struct mr_mon_ctx *ctx, unsigned kd, const struct mr_mon_range *r,
			       size_t nr)
{
	char path[160];
	size_t i;
	int err = wr_u64(ctx, mr_pathf(path, sizeof(path), CTX_FMT "/targets/0/regions/nr_regions",
				       kd), nr);

	for (i = 0; !err && i < nr; i++) {
		err = wr_u64(ctx, mr_pathf(path, sizeof(path), CTX_FMT "/targets/0/regions/%zu/start",
					   kd, i), r[i].start);
		if (!err)
			err = wr_u64(ctx, mr_pathf(path, sizeof(path),
						   CTX_FMT "/targets/0/regions/%zu/end", kd, i),
				     r[i].end);
	}
	return err;
}

static int cmp_region(const void *a, const void *b)
{
	const struct mr_mon_region *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static int tried_u64(unsigned kd, const char *region, const char *file, uint64_t *v)
{
	char path[200];

	return mr_root_read_u64(mr_pathf(path, sizeof(path), SCHEME_FMT "/tried_regions/%s/%s",
					 kd, region, file), v);
}

int mr_mon_damon_read_tried(struct mr_mon_ctx *ctx, unsigned kd)
{
	struct mr_mon_target *t = &ctx->target;
	char path[200], state_path[100], state[32] = "";
	struct dirent *de;
	DIR *d;
	size_t n = 0;
	int err;

	mr_pathf(state_path, sizeof(state_path), MR_DAMON_KDAMONDS "/%u/state", kd);
	if (mr_mon_damon_read_str(state_path, state, sizeof(state)) || strcmp(state, "on") != 0)
		return 1;	/* the kdamond stopped: its target exited */
	err = mr_mon_damon_write_state(kd, "update_schemes_tried_regions", ctx->apply);
	if (err) {
		if (!mr_mon_damon_read_str(state_path, state, sizeof(state)) &&
		    strcmp(state, "on") != 0)
			return 1;
		return err;
	}
	d = mr_root_opendir(mr_pathf(path, sizeof(path), SCHEME_FMT "/tried_regions", kd));
	if (!d)
		return mr_error(-EIO, "damon: cannot list %s", path);
	while ((de = readdir(d))) {
		struct mr_mon_region r = { 0 };
		uint64_t acc = 0, age = 0;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		if (n == t->cap_regions) {
			size_t cap = t->cap_regions ? 2 * t->cap_regions : 256;
			struct mr_mon_region *p = realloc(t->regions, cap * sizeof(*p));

			if (!p) {
				closedir(d);
				return mr_error(-ENOMEM, "damon: out of memory");
			}
			t->regions = p;
			t->cap_regions = cap;
		}
		err = tried_u64(kd, de->d_name, "start", &r.start);
		if (!err)
			err = tried_u64(kd, de->d_name, "end", &r.end);
		if (!err)
			err = tried_u64(kd, de->d_name, "nr_accesses", &acc);
		if (!err)
			err = tried_u64(kd, de->d_name, "age", &age);
		if (err) {
			closedir(d);
			return err;
		}
		r.nr_accesses = (uint32_t)acc;
		r.age = (uint32_t)age;
		t->regions[n++] = r;
	}
	closedir(d);
	qsort(t->regions, n, sizeof(*t->regions), cmp_region);
	t->nr_regions = n;
	return 0;
}
