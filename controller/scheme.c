/* The scheme parser (see scheme.h): DAMOS's text format with units, memreg's
 * region-aware targets and the later DAMOS additions as indented key lines. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "controller/scheme.h"

#define MAX_TOKENS 16
#define MAX_NODE_ID 1023	/* MAX_NUMNODES on the largest kernels */

static const char *const action_names[NR_MR_SCHEME_ACTIONS] = {
	[MR_SCHEME_MIGRATE_COLD] = "migrate_cold",
	[MR_SCHEME_MIGRATE_HOT] = "migrate_hot",
	[MR_SCHEME_PAGEOUT] = "pageout",
	[MR_SCHEME_COLD] = "cold",
	[MR_SCHEME_WILLNEED] = "willneed",
	[MR_SCHEME_STAT] = "stat",
};

const char *mr_scheme_action_name(enum mr_scheme_action a)
{
	return a < NR_MR_SCHEME_ACTIONS ? action_names[a] : "?";
}

bool mr_scheme_action_migrates(enum mr_scheme_action a)
{
	return a == MR_SCHEME_MIGRATE_COLD || a == MR_SCHEME_MIGRATE_HOT;
}

/* One line split into words, each with its column (1-based) for messages. */
struct words {
	const char *source;
	unsigned line;
	unsigned nr;
	char *w[MAX_TOKENS];
	unsigned col[MAX_TOKENS];
};

/* "SOURCE:LINE:COL: message"; returns -EINVAL. */
static int at(const struct words *ws, unsigned i, const char *fmt, ...) MR_PRINTF(3, 4);
static int at(const struct words *ws, unsigned i, const char *fmt, ...)
{
	char msg[384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return mr_error(-EINVAL, "%s:%u:%u: %s", ws->source, ws->line,
			i < ws->nr ? ws->col[i] : (ws->nr ? ws->col[ws->nr - 1] : 1), msg);
}

/* Split @line in place at blanks; a word starting with '#' ends it. */
static int split(char *line, struct words *ws)
{
	char *p = line;

	ws->nr = 0;
	for (;;) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p || *p == '#')
			return 0;
		if (ws->nr == MAX_TOKENS)
			return at(ws, ws->nr - 1, "too many words");
		ws->w[ws->nr] = p;
		ws->col[ws->nr] = (unsigned)(p - line) + 1;
		ws->nr++;
		while (*p && *p != ' ' && *p != '\t')
			p++;
		if (*p)
			*p++ = '\0';
	}
}

static int parse_size(const struct words *ws, unsigned i, uint64_t *out)
{
	const char *s = ws->w[i];

	if (strcmp(s, "min") == 0) {
		*out = 0;
		return 0;
	}
	if (strcmp(s, "max") == 0) {
		*out = UINT64_MAX;
		return 0;
	}
	if (mr_parse_size(s, out))
		return at(ws, i, "bad size '%s' (e.g. 4K, 100M, min, max)", s);
	return 0;
}

/* "5%", "0", "2.5%" (per-mille inside), or "3acc" (a count per aggregation). */
static int parse_freq(const struct words *ws, unsigned i, struct mr_scheme_freq *f)
{
	const char *s = ws->w[i];
	uint64_t whole = 0, tenth = 0;
	size_t n = strspn(s, "0123456789");
	const char *p = s + n;

	f->is_count = false;
	if (strcmp(s, "min") == 0) {
		f->value = 0;
		return 0;
	}
	if (strcmp(s, "max") == 0) {
		f->value = 1000;
		return 0;
	}
	if (!n || n > 9)
		goto bad;
	whole = strtoull(s, NULL, 10);
	if (strcmp(p, "acc") == 0) {
		f->is_count = true;
		f->value = (uint32_t)whole;
		return 0;
	}
	if (*p == '.') {
		if (!isdigit((unsigned char)p[1]))
			goto bad;
		tenth = (uint64_t)(p[1] - '0');
		p += 2;
	}
	if (*p == '%')
		p++;
	if (*p)
		goto bad;
	if (whole * 10 + tenth > 1000)
		return at(ws, i, "frequency '%s' above 100%%", s);
	f->value = (uint32_t)(whole * 10 + tenth);
	return 0;
bad:
	return at(ws, i, "bad frequency '%s' (a percentage of the maximum such as 0 or 5%%, "
		  "or a count per aggregation such as 3acc)", s);
}

static int parse_age(const struct words *ws, unsigned i, uint64_t *out_us)
{
	const char *s = ws->w[i];

	if (strcmp(s, "min") == 0) {
		*out_us = 0;
		return 0;
	}
	if (strcmp(s, "max") == 0) {
		*out_us = UINT64_MAX;
		return 0;
	}
	if (mr_parse_duration_us(s, 0, out_us))
		return at(ws, i, "bad age '%s' (a time with its unit: 500ms, 30s, 2m; or min, max)",
			  s);
	return 0;
}

static int parse_interval(const struct words *ws, unsigned i, uint64_t *out_us)
{
	if (mr_parse_duration_us(ws->w[i], 0, out_us) || !*out_us)
		return at(ws, i, "bad interval '%s' (a time with its unit: 100ms, 1s)", ws->w[i]);
	return 0;
}

static int parse_uint(const struct words *ws, unsigned i, uint64_t max, uint64_t *out)
{
	if (mr_parse_u64(ws->w[i], out) || *out > max)
		return at(ws, i, "bad number '%s' (0 to %llu)", ws->w[i], (unsigned long long)max);
	return 0;
}

/* A watermark: "N" per-mille or "N%". */
static int parse_permille(const struct words *ws, unsigned i, unsigned *out)
{
	char buf[32];
	size_t n = strlen(ws->w[i]);
	uint64_t v;
	bool pct = n && ws->w[i][n - 1] == '%';

	snprintf(buf, sizeof(buf), "%.*s", (int)(pct ? n - 1 : n), ws->w[i]);
	if (mr_parse_u64(buf, &v) || v > (pct ? 100 : 1000))
		return at(ws, i, "bad watermark '%s' (per-mille 0-1000, or 0%%-100%%)", ws->w[i]);
	*out = (unsigned)(pct ? v * 10 : v);
	return 0;
}

static int freq_order(const struct words *ws, const struct mr_scheme *s)
{
	if (s->min_freq.is_count == s->max_freq.is_count && s->min_freq.value > s->max_freq.value)
		return at(ws, 2, "minimum frequency above the maximum");
	return 0;
}

/* "<min size> <max size> <min freq> <max freq> <min age> <max age> <action> [target]" */
static int parse_pattern(const struct words *ws, struct mr_scheme *s)
{
	unsigned a;
	int err;

	memset(s, 0, sizeof(*s));
	s->line = ws->line;
	s->target_node = s->target_region = -1;
	if (ws->nr < 7)
		return at(ws, ws->nr, "a scheme is '<min size> <max size> <min freq> <max freq> "
			  "<min age> <max age> <action> [target]': %u word%s", ws->nr,
			  ws->nr == 1 ? "" : "s");
	if ((err = parse_size(ws, 0, &s->min_size_bytes)) ||
	    (err = parse_size(ws, 1, &s->max_size_bytes)) ||
	    (err = parse_freq(ws, 2, &s->min_freq)) ||
	    (err = parse_freq(ws, 3, &s->max_freq)) ||
	    (err = parse_age(ws, 4, &s->min_age_us)) ||
	    (err = parse_age(ws, 5, &s->max_age_us)))
		return err;
	if (s->min_size_bytes > s->max_size_bytes)
		return at(ws, 0, "minimum size above the maximum");
	if ((err = freq_order(ws, s)))
		return err;
	if (s->min_age_us > s->max_age_us)
		return at(ws, 4, "minimum age above the maximum");
	for (a = 0; a < NR_MR_SCHEME_ACTIONS; a++)
		if (strcmp(ws->w[6], action_names[a]) == 0)
			break;
	if (a == NR_MR_SCHEME_ACTIONS)
		return at(ws, 6, "unknown action '%s' (migrate_cold, migrate_hot, pageout, cold, "
			  "willneed, stat)", ws->w[6]);
	s->action = (enum mr_scheme_action)a;
	if (!mr_scheme_action_migrates(s->action)) {
		if (ws->nr > 7)
			return at(ws, 7, "%s takes no target", action_names[a]);
		return 0;
	}
	if (ws->nr == 7)
		return at(ws, 7, "%s needs a target: a node id, or region:N", action_names[a]);
	if (ws->nr > 8)
		return at(ws, 8, "unexpected '%s' after the target", ws->w[8]);
	{
		const char *t = ws->w[7];
		bool region = strncmp(t, "region:", 7) == 0;
		uint64_t id;

		if (mr_parse_u64(region ? t + 7 : t, &id) || id > (region ? INT32_MAX : MAX_NODE_ID))
			return at(ws, 7, "bad target '%s' (a node id such as 3, or region:N)", t);
		if (region)
			s->target_region = (int)id;
		else
			s->target_node = (int)id;
	}
	return 0;
}

/* "quota bytes SIZE per INTERVAL" or "quota ms N per INTERVAL" */
static int parse_quota(const struct words *ws, struct mr_scheme *s)
{
	uint64_t amount, reset_us;
	bool bytes;
	int err;

	if (ws->nr != 5 || strcmp(ws->w[3], "per") != 0 ||
	    (strcmp(ws->w[1], "bytes") && strcmp(ws->w[1], "ms")))
		return at(ws, 1, "a quota is 'quota bytes SIZE per INTERVAL' or "
			  "'quota ms N per INTERVAL'");
	bytes = strcmp(ws->w[1], "bytes") == 0;
	if (bytes ? (err = parse_size(ws, 2, &amount)) :
		    (err = parse_uint(ws, 2, UINT32_MAX, &amount)))
		return err;
	if (!amount || amount == UINT64_MAX)
		return at(ws, 2, "a quota must be above 0 (leave the line out for none)");
	if ((err = parse_interval(ws, 4, &reset_us)))
		return err;
	if (bytes ? s->quota_bytes : s->quota_ms)
		return at(ws, 1, "a second 'quota %s' for the same scheme", ws->w[1]);
	if (s->quota_reset_us && s->quota_reset_us != reset_us)
		return at(ws, 4, "one reset interval per scheme, as DAMOS: the other quota "
			  "says another");
	s->quota_reset_us = reset_us;
	if (bytes)
		s->quota_bytes = amount;
	else
		s->quota_ms = amount;
	return 0;
}

/* "watermarks free_mem_rate INTERVAL high H mid M low L" */
static int parse_wmarks(const struct words *ws, struct mr_scheme *s)
{
	int err;

	if (ws->nr != 9 || strcmp(ws->w[1], "free_mem_rate") || strcmp(ws->w[3], "high") ||
	    strcmp(ws->w[5], "mid") || strcmp(ws->w[7], "low"))
		return at(ws, 1, "watermarks are 'watermarks free_mem_rate INTERVAL high H "
			  "mid M low L' (per-mille or %%)");
	if (s->has_wmarks)
		return at(ws, 0, "a second 'watermarks' for the same scheme");
	if ((err = parse_interval(ws, 2, &s->wmark_interval_us)) ||
	    (err = parse_permille(ws, 4, &s->wmark_high_permille)) ||
	    (err = parse_permille(ws, 6, &s->wmark_mid_permille)) ||
	    (err = parse_permille(ws, 8, &s->wmark_low_permille)))
		return err;
	if (s->wmark_high_permille < s->wmark_mid_permille ||
	    s->wmark_mid_permille < s->wmark_low_permille)
		return at(ws, 4, "watermarks must be high >= mid >= low");
	s->has_wmarks = true;
	return 0;
}

/* "filter memcg PATH|anon|addr A-B allow|reject" */
static int parse_filter(const struct words *ws, struct mr_scheme *s)
{
	struct mr_scheme_filter *f;
	unsigned last = ws->nr - 1;

	if (ws->nr < 3)
		return at(ws, ws->nr, "a filter is 'filter memcg PATH|anon|addr START-END "
			  "allow|reject'");
	if (s->nr_filters == MR_SCHEME_MAX_FILTERS)
		return at(ws, 0, "more than %d filters", MR_SCHEME_MAX_FILTERS);
	f = &s->filters[s->nr_filters];
	memset(f, 0, sizeof(*f));
	if (strcmp(ws->w[last], "allow") == 0)
		f->allow = true;
	else if (strcmp(ws->w[last], "reject"))
		return at(ws, last, "a filter ends with allow or reject, not '%s'", ws->w[last]);
	if (strcmp(ws->w[1], "anon") == 0) {
		if (ws->nr != 3)
			return at(ws, 2, "'filter anon' takes no argument");
		f->type = MR_SCHEME_FILTER_ANON;
	} else if (strcmp(ws->w[1], "memcg") == 0) {
		if (ws->nr != 4 || ws->w[2][0] != '/')
			return at(ws, 2, "'filter memcg' takes one cgroup path, from the cgroup "
				  "root (/workload.slice)");
		if (strlen(ws->w[2]) >= sizeof(f->memcg_path))
			return at(ws, 2, "cgroup path too long");
		f->type = MR_SCHEME_FILTER_MEMCG;
		strcpy(f->memcg_path, ws->w[2]);
	} else if (strcmp(ws->w[1], "addr") == 0) {
		char *dash = ws->nr == 4 ? strchr(ws->w[2], '-') : NULL;

		if (!dash)
			return at(ws, 2, "'filter addr' takes START-END");
		*dash = '\0';
		if (mr_parse_u64(ws->w[2], &f->start) || mr_parse_u64(dash + 1, &f->end) ||
		    f->start >= f->end)
			return at(ws, 2, "bad address range (START-END, start below end, "
				  "decimal or 0x hex)");
		f->type = MR_SCHEME_FILTER_ADDR;
	} else {
		return at(ws, 1, "unknown filter '%s' (memcg, anon, addr)", ws->w[1]);
	}
	s->nr_filters++;
	return 0;
}

static int parse_key(const struct words *ws, struct mr_scheme *s)
{
	uint64_t v[3];
	int err;

	if (strcmp(ws->w[0], "quota") == 0)
		return parse_quota(ws, s);
	if (strcmp(ws->w[0], "watermarks") == 0)
		return parse_wmarks(ws, s);
	if (strcmp(ws->w[0], "filter") == 0)
		return parse_filter(ws, s);
	if (strcmp(ws->w[0], "weights") == 0) {
		if (ws->nr != 4)
			return at(ws, 1, "weights are 'weights SIZE FREQ AGE' (whole numbers)");
		if ((err = parse_uint(ws, 1, UINT32_MAX, &v[0])) ||
		    (err = parse_uint(ws, 2, UINT32_MAX, &v[1])) ||
		    (err = parse_uint(ws, 3, UINT32_MAX, &v[2])))
			return err;
		s->weight_size = (unsigned)v[0];
		s->weight_freq = (unsigned)v[1];
		s->weight_age = (unsigned)v[2];
		return 0;
	}
	return at(ws, 0, "unknown key '%s' (quota, weights, watermarks, filter)", ws->w[0]);
}

int mr_scheme_parse(const char *text, const char *source, struct mr_scheme_set *set)
{
	struct mr_scheme_set out = { NULL, 0 };
	struct words ws = { .source = source };
	char *copy, *line, *next;
	size_t cap = 0;
	int err = 0;

	copy = strdup(text);
	if (!copy)
		return mr_error(-ENOMEM, "%s: out of memory", source);
	for (line = copy; line && !err; line = next) {
		bool indented = *line == ' ' || *line == '\t';

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		ws.line++;
		if ((err = split(line, &ws)) || !ws.nr)
			continue;
		if (indented) {
			if (!out.nr)
				err = at(&ws, 0, "an indented key line needs a scheme line above it");
			else
				err = parse_key(&ws, &out.schemes[out.nr - 1]);
			continue;
		}
		if (out.nr == cap) {
			struct mr_scheme *p;

			cap = cap ? cap * 2 : 8;
			p = realloc(out.schemes, cap * sizeof(*p));
			if (!p) {
				err = mr_error(-ENOMEM, "%s: out of memory", source);
				break;
			}
			out.schemes = p;
		}
		err = parse_pattern(&ws, &out.schemes[out.nr]);
		if (!err)
			out.nr++;
	}
	free(copy);
	if (!err && !out.nr)
		err = mr_error(-EINVAL, "%s: no scheme", source);
	if (err) {
		free(out.schemes);
		return err;
	}
	*set = out;
	return 0;
}

void mr_scheme_set_free(struct mr_scheme_set *set)
{
	free(set->schemes);
	set->schemes = NULL;
	set->nr = 0;
}
