/* Bench files: user-defined configurations and workloads, one directive a line
 * (the format is in memregctl-bench(1) and docs/bench.md). */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/run.h"
#include "common/util.h"

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

static int set_str(char **dst, const char *val)
{
	free(*dst);
	*dst = strdup(val);
	return *dst ? 0 : -ENOMEM;
}

/* The built-in kinds a bench file configuration can start from ("base alloc"). */
static int base_kind(const char *name, enum mr_bench_kind *kind)
{
	static const struct { const char *name; enum mr_bench_kind kind; } kinds[] = {
		{ "orig", MR_BENCH_ORIG }, { "alloc", MR_BENCH_ALLOC },
		{ "alloc+profile", MR_BENCH_ALLOC_PROFILE }, { "rec", MR_BENCH_REC },
		{ "control", MR_BENCH_CONTROL }, { "evac", MR_BENCH_EVAC },
	};
	unsigned i;

	for (i = 0; i < MR_ARRAY_SIZE(kinds); i++)
		if (!strcmp(kinds[i].name, name)) {
			*kind = kinds[i].kind;
			return 0;
		}
	return -EINVAL;
}

int mr_bench_read_file(struct mr_bench *b, const char *path)
{
	struct mr_bench_config *c = NULL;
	struct mr_bench_workload *w = NULL;
	char line[8192];
	unsigned lineno = 0;
	int ret = 0;
	FILE *f;

	f = fopen(path, "r");
	if (!f)
		return mr_error(-errno, "%s: %s", path, strerror(errno));
	while (!ret && fgets(line, sizeof(line), f)) {
		char *s, *key, *val;

		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			ret = mr_error(-E2BIG, "%s:%u: line longer than %zu bytes", path, lineno,
				       sizeof(line) - 2);
			break;
		}
		s = trim(line);
		if (!*s || *s == '#')
			continue;
		key = s;
		val = s + strcspn(s, " \t");
		if (*val)
			*val++ = '\0';
		val = trim(val);
		if (!strcmp(key, "config") || !strcmp(key, "workload")) {
			if (!*val || strcspn(val, " \t,") != strlen(val)) {
				ret = mr_error(-EINVAL, "%s:%u: '%s' takes one name (no spaces or "
					       "commas)", path, lineno, key);
				break;
			}
			if (*key == 'c') {
				enum mr_bench_kind k;

				if (base_kind(val, &k) == 0) {
					ret = mr_error(-EEXIST, "%s:%u: %s is a built-in configuration",
						       path, lineno, val);
					break;
				}
				c = mr_bench_new_config(b, val);
				w = NULL;
				if (!c)
					ret = mr_error_wrap(-EINVAL, "%s:%u", path, lineno);
			} else {
				w = mr_bench_new_workload(b, val, "");
				c = NULL;
				if (!w)
					ret = mr_error_wrap(-EINVAL, "%s:%u", path, lineno);
			}
			continue;
		}
		if (!*val) {
			ret = mr_error(-EINVAL, "%s:%u: '%s' needs a value", path, lineno, key);
			break;
		}
		if (c) {
			if (!strcmp(key, "env")) {
				if (!strchr(val, '=') || *val == '=') {
					ret = mr_error(-EINVAL, "%s:%u: env takes KEY=VALUE", path,
						       lineno);
				} else if (c->nr_env >= MR_BENCH_MAX_ENV) {
					ret = mr_error(-E2BIG, "%s:%u: more than %d env lines", path,
						       lineno, MR_BENCH_MAX_ENV);
				} else {
					c->env[c->nr_env] = strdup(val);
					ret = c->env[c->nr_env++] ? 0 : -ENOMEM;
				}
			} else if (!strcmp(key, "preload")) {
				ret = set_str(&c->preload, val);
			} else if (!strcmp(key, "setup")) {
				ret = set_str(&c->setup, val);
			} else if (!strcmp(key, "teardown")) {
				ret = set_str(&c->teardown, val);
			} else if (!strcmp(key, "note")) {
				ret = set_str(&c->note, val);
			} else if (!strcmp(key, "schemes")) {
				/* schemes make a configuration the controller's */
				ret = set_str(&c->schemes, val);
				if (c->kind == MR_BENCH_USER)
					c->kind = MR_BENCH_CONTROL;
			} else if (!strcmp(key, "backend")) {
				ret = set_str(&c->backend, val);
			} else if (!strcmp(key, "plan")) {
				ret = set_str(&c->plan, val);
				if (c->kind == MR_BENCH_USER)
					c->kind = MR_BENCH_EVAC;
			} else if (!strcmp(key, "base")) {
				if (base_kind(val, &c->kind))
					ret = mr_error(-EINVAL, "%s:%u: base is orig, alloc, "
						       "alloc+profile, rec, control or evac, not "
						       "'%s'", path, lineno, val);
			} else {
				ret = mr_error(-EINVAL, "%s:%u: unknown directive '%s' in config %s "
					       "(env, preload, setup, teardown, note, base, schemes, "
					       "backend, plan)",
					       path, lineno, key, c->name);
			}
		} else if (w) {
			if (!strcmp(key, "run"))
				ret = set_str(&w->cmd, val);
			else if (!strcmp(key, "prepare"))
				ret = set_str(&w->prepare, val);
			else if (!strcmp(key, "dir"))
				ret = set_str(&w->dir, val);
			else if (!strcmp(key, "label"))
				ret = set_str(&w->label, val);
			else
				ret = mr_error(-EINVAL, "%s:%u: unknown directive '%s' in workload "
					       "%s (run, prepare, dir, label)", path, lineno, key,
					       w->name);
		} else {
			ret = mr_error(-EINVAL, "%s:%u: '%s' outside a config or workload section",
				       path, lineno, key);
		}
		if (ret == -ENOMEM)
			ret = mr_error(-ENOMEM, "%s:%u", path, lineno);
	}
	if (!ret && ferror(f))
		ret = mr_error(-EIO, "%s: read error", path);
	fclose(f);
	if (!ret) {
		unsigned i;

		for (i = 0; i < b->nr_workloads; i++)
			if (!*b->workloads[i].cmd)
				return mr_error(-EINVAL, "%s: workload %s has no 'run' line", path,
						b->workloads[i].name);
	}
	return ret;
}
