/* memregd.conf (see conf.h): one strict parser, so a typo stops the daemon with the
 * file and line rather than running with a default the operator did not mean. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "controller/conf.h"

#define MAX_CONF_BYTES (1u << 20)

static int bad(const char *source, unsigned line, const char *what, const char *arg)
{
	return mr_error(-EINVAL, "%s:%u: %s%s%s%s", source, line, what, arg ? " '" : "",
			arg ? arg : "", arg ? "'" : "");
}

/* "key value..." of one line: the key in @key, the rest (trimmed) in @val. */
static void split(char *line, char **key, char **val)
{
	char *end;

	line += strspn(line, " \t");
	*key = line;
	line += strcspn(line, " \t");
	if (*line)
		*line++ = '\0';
	line += strspn(line, " \t");
	end = line + strlen(line);
	while (end > line && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
		*--end = '\0';
	*val = line;
}

static int parse_intervals(char *val, struct mr_mon_attrs *a)
{
	char *s = strtok(val, " \t"), *g = strtok(NULL, " \t"), *u = strtok(NULL, " \t");

	if (!s || !g || !u || strtok(NULL, " \t"))
		return -EINVAL;
	if (mr_parse_duration_us(s, 0, &a->sample_us) || mr_parse_duration_us(g, 0, &a->aggr_us) ||
	    mr_parse_duration_us(u, 0, &a->update_us))
		return -EINVAL;
	return 0;
}

static int parse_regions(char *val, struct mr_mon_attrs *a)
{
	char *lo = strtok(val, " \t"), *hi = strtok(NULL, " \t");
	uint64_t l, h;

	if (!lo || !hi || strtok(NULL, " \t") || mr_parse_u64(lo, &l) || mr_parse_u64(hi, &h) ||
	    l > UINT32_MAX || h > UINT32_MAX)
		return -EINVAL;
	a->min_nr_regions = (uint32_t)l;
	a->max_nr_regions = (uint32_t)h;
	return 0;
}

/* A "pid" line (a repeated pid counts once). */
static int add_pid(struct mr_conf *c, pid_t pid)
{
	pid_t *p;
	size_t i;

	for (i = 0; i < c->nr_pids; i++)
		if (c->pids[i] == pid)
			return 0;
	p = realloc(c->pids, (c->nr_pids + 1) * sizeof(*p));
	if (!p)
		return -ENOMEM;
	c->pids = p;
	c->pids[c->nr_pids++] = pid;
	c->pid = c->pids[0];
	return 0;
}

static int add_cgroup(struct mr_conf *c, const char *path)
{
	char **p = realloc(c->cgroups, (c->nr_cgroups + 1) * sizeof(*p));

	if (!p)
		return -ENOMEM;
	c->cgroups = p;
	c->cgroups[c->nr_cgroups] = strdup(path);
	if (!c->cgroups[c->nr_cgroups])
		return -ENOMEM;
	c->nr_cgroups++;
	return 0;
}

int mr_conf_parse(const char *text, const char *source, struct mr_conf *c)
{
	char *copy = strdup(text), *line, *next, *key, *val, *schemes = NULL;
	bool seen_apply = false;
	unsigned n = 0, schemes_line = 0;
	uint64_t v;
	int err = 0;

	memset(c, 0, sizeof(*c));
	if (!copy)
		return mr_error(-ENOMEM, "out of memory");
	snprintf(c->backend, sizeof(c->backend), "damon");
	snprintf(c->engine, sizeof(c->engine), "user");
	snprintf(c->status_path, sizeof(c->status_path), "%s", MR_CONF_STATUS_DEFAULT);
	for (line = copy; line && !schemes; line = next) {
		char *hash;

		n++;
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		split(line, &key, &val);
		if (!*key)
			continue;
		if (strcmp(key, "schemes") == 0) {
			if (*val) {
				err = bad(source, n, "\"schemes\" stands alone on its line; the "
					  "schemes follow it", NULL);
				break;
			}
			schemes = next ? next : "";
			schemes_line = n;
		} else if (strcmp(key, "apply") == 0) {
			if (strcmp(val, "yes") && strcmp(val, "no")) {
				err = bad(source, n, "apply: want yes or no, not", val);
				break;
			}
			c->apply = strcmp(val, "yes") == 0;
			seen_apply = true;
		} else if (strcmp(key, "pid") == 0) {
			if (mr_parse_u64(val, &v) || !v || v > INT32_MAX) {
				err = bad(source, n, "pid: bad process id", val);
				break;
			}
			if (add_pid(c, (pid_t)v)) {
				err = mr_error(-ENOMEM, "out of memory");
				break;
			}
		} else if (strcmp(key, "cgroup") == 0) {
			if (val[0] != '/') {
				err = bad(source, n, "cgroup: want the cgroup's absolute path "
					  "(/sys/fs/cgroup/...), not", val);
				break;
			}
			if (add_cgroup(c, val)) {
				err = mr_error(-ENOMEM, "out of memory");
				break;
			}
		} else if (strcmp(key, "backend") == 0) {
			if (!*val || strlen(val) >= sizeof(c->backend)) {
				err = bad(source, n, "backend: bad name", val);
				break;
			}
			snprintf(c->backend, sizeof(c->backend), "%s", val);
		} else if (strcmp(key, "engine") == 0) {
			if (strcmp(val, "user") && strcmp(val, "kernel")) {
				err = bad(source, n, "engine: want user or kernel, not", val);
				break;
			}
			snprintf(c->engine, sizeof(c->engine), "%s", val);
		} else if (strcmp(key, "intervals") == 0) {
			if (!c->has_attrs)
				c->attrs = (struct mr_mon_attrs){ 0, 0, 0, 10, 1000 };
			if (parse_intervals(val, &c->attrs)) {
				err = bad(source, n, "intervals: want SAMPLE AGGREGATION UPDATE with "
					  "units (5ms 100ms 1s), not", val);
				break;
			}
			c->has_attrs = true;
		} else if (strcmp(key, "regions") == 0) {
			if (!c->has_attrs)
				c->attrs = (struct mr_mon_attrs){ 5000, 100000, 1000000, 0, 0 };
			if (parse_regions(val, &c->attrs)) {
				err = bad(source, n, "regions: want MIN MAX, not", val);
				break;
			}
			c->has_attrs = true;
		} else if (strcmp(key, "metrics") == 0 || strcmp(key, "status") == 0) {
			char *dst = key[0] == 'm' ? c->metrics_dir : c->status_path;

			if (val[0] != '/' || strlen(val) >= sizeof(c->metrics_dir)) {
				err = bad(source, n, "want an absolute path, not", val);
				break;
			}
			snprintf(dst, sizeof(c->metrics_dir), "%s", val);
		} else {
			err = bad(source, n, "unknown key", key);
			break;
		}
	}
	if (!err && !seen_apply)
		err = mr_error(-EINVAL, "%s: no \"apply yes\": memregd changes where the target's "
			       "pages live and needs it said in its configuration", source);
	if (!err && !c->apply)
		err = mr_error(-EINVAL, "%s: \"apply no\": memregd refuses to start without "
			       "\"apply yes\" (use memregctl control for a dry run)", source);
	if (!err && !c->nr_pids && !c->nr_cgroups)
		err = mr_error(-EINVAL, "%s: no target: give \"pid N\" or \"cgroup PATH\" "
			       "(each repeatable)", source);
	if (!err && !schemes)
		err = mr_error(-EINVAL, "%s: no \"schemes\" line: memregd has nothing to do",
			       source);
	if (!err) {
		/* keep the line numbers of the file: blank lines stand for the keys above */
		size_t len = strlen(schemes);
		char *t = malloc(schemes_line + len + 1);

		if (!t) {
			err = mr_error(-ENOMEM, "out of memory");
		} else {
			memset(t, '\n', schemes_line);
			memcpy(t + schemes_line, schemes, len + 1);
			err = mr_scheme_parse(t, source, &c->schemes);
			free(t);
			if (!err && !c->schemes.nr)
				err = mr_error(-EINVAL, "%s:%u: no scheme after \"schemes\"", source,
					       schemes_line);
		}
	}
	free(copy);
	if (err)
		mr_conf_free(c);
	return err;
}

int mr_conf_load(const char *path, struct mr_conf *c)
{
	FILE *f = fopen(path, "r");
	char *text;
	size_t n;
	int err;

	if (!f)
		return mr_error(-errno, "%s: %s", path, strerror(errno));
	text = malloc(MAX_CONF_BYTES + 1);
	if (!text) {
		fclose(f);
		return mr_error(-ENOMEM, "out of memory");
	}
	n = fread(text, 1, MAX_CONF_BYTES + 1, f);
	err = ferror(f) ? mr_error(-EIO, "%s: read error", path) :
	      n > MAX_CONF_BYTES ? mr_error(-EFBIG, "%s: over 1 MiB", path) : 0;
	fclose(f);
	if (!err) {
		text[n] = '\0';
		err = mr_conf_parse(text, path, c);
	}
	free(text);
	return err;
}

void mr_conf_free(struct mr_conf *c)
{
	size_t i;

	mr_scheme_set_free(&c->schemes);
	for (i = 0; i < c->nr_cgroups; i++)
		free(c->cgroups[i]);
	free(c->cgroups);
	free(c->pids);
	c->cgroups = NULL;
	c->pids = NULL;
	c->nr_cgroups = c->nr_pids = 0;
}
