/* The damon backend's tracepoint reader: parses trace_pipe lines of the
 * damon:damon_aggregated event and gathers them into whole aggregations. */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "common/util.h"
#include "monitor/damon.h"

#define EVENT " damon_aggregated: "

/* The emitting thread's pid from the context columns before @event:
 * "      kdamond.0-1234    [001] .....   812.345678: " (COMM-PID [CPU]); the comm
 * may hold '-' and spaces, so the pid is the digits after the last '-' before the
 * first " [" that follows such digits. 0 when the columns are absent. */
static pid_t line_pid(const char *line, const char *event)
{
	const char *q;

	for (q = line; q < event; q++) {
		const char *d = q, *digits_end;
		uint64_t v = 0;

		if (*q != '[')
			continue;
		while (d > line && d[-1] == ' ')
			d--;
		digits_end = d;
		while (d > line && d[-1] >= '0' && d[-1] <= '9')
			d--;
		if (d == digits_end || d == line || d[-1] != '-' || digits_end - d > 9)
			continue;
		for (; d < digits_end; d++)
			v = 10 * v + (uint64_t)(*d - '0');
		return (pid_t)v;
	}
	return 0;
}

/* Decimal digits only (no sign, no 0x), at most @max; advances *p past them. */
static bool num(const char **p, uint64_t max, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;

	if (*s < '0' || *s > '9')
		return false;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (x > (max - (uint64_t)(*s - '0')) / 10)
			return false;
		x = 10 * x + (uint64_t)(*s - '0');
	}
	*p = s;
	*v = x;
	return true;
}

static bool lit(const char **p, const char *s)
{
	size_t n = strlen(s);

	if (strncmp(*p, s, n))
		return false;
	*p += n;
	return true;
}

int mr_mon_damon_trace_parse(const char *line, struct mr_mon_damon_trace_rec *rec)
{
	const char *p = strstr(line, EVENT);
	struct mr_mon_damon_trace_rec r;
	uint64_t nr, acc, age;

	if (!p)
		return 0;
	r.pid = line_pid(line, p);
	p += strlen(EVENT);
	if (!lit(&p, "target_id=") || !num(&p, UINT64_MAX, &r.target_id) ||
	    !lit(&p, " nr_regions=") || !num(&p, UINT32_MAX, &nr) || !lit(&p, " ") ||
	    !num(&p, UINT64_MAX, &r.start) || !lit(&p, "-") || !num(&p, UINT64_MAX, &r.end) ||
	    !lit(&p, ": ") || !num(&p, UINT32_MAX, &acc) || !lit(&p, " ") ||
	    !num(&p, UINT32_MAX, &age))
		return mr_error(-EINVAL, "damon trace: cannot parse \"%.120s\"", line);
	for (; *p; p++)
		if (*p != ' ' && *p != '\t' && *p != '\r' && *p != '\n')
			return mr_error(-EINVAL, "damon trace: trailing text in \"%.120s\"", line);
	r.nr_regions = (uint32_t)nr;
	r.nr_accesses = (uint32_t)acc;
	r.age = (uint32_t)age;
	if (r.end <= r.start || !r.nr_regions)
		return mr_error(-EINVAL, "damon trace: empty region or no regions in \"%.120s\"",
				line);
	*rec = r;
	return 1;
}

void mr_mon_damon_trace_agg_init(struct mr_mon_damon_trace_agg *agg)
{
	memset(agg, 0, sizeof(*agg));
}

void mr_mon_damon_trace_agg_destroy(struct mr_mon_damon_trace_agg *agg)
{
	free(agg->cur);
	free(agg->last);
	memset(agg, 0, sizeof(*agg));
}

static void drop_run(struct mr_mon_damon_trace_agg *agg)
{
	if (agg->nr_cur)
		agg->nr_dropped++;
	agg->nr_cur = 0;
}

static int add(struct mr_mon_damon_trace_agg *agg, const struct mr_mon_damon_trace_rec *rec)
{
	struct mr_mon_region *r;

	/* a run breaks where events were lost or a new aggregation began early */
	if (agg->nr_cur && (rec->nr_regions != agg->cur_nr_regions ||
			    rec->start < agg->cur[agg->nr_cur - 1].end))
		drop_run(agg);
	if (agg->nr_cur == agg->cap_cur) {
		size_t cap = agg->cap_cur ? 2 * agg->cap_cur : 256;

		r = realloc(agg->cur, cap * sizeof(*r));
		if (!r)
			return mr_error(-ENOMEM, "damon trace: out of memory");
		agg->cur = r;
		agg->cap_cur = cap;
	}
	agg->cur_nr_regions = rec->nr_regions;
	r = &agg->cur[agg->nr_cur++];
	memset(r, 0, sizeof(*r));
	r->start = rec->start;
	r->end = rec->end;
	r->nr_accesses = rec->nr_accesses;
	r->age = rec->age;
	if (agg->nr_cur == agg->cur_nr_regions) {
		struct mr_mon_region *t = agg->last;
		size_t cap = agg->cap_last;

		agg->last = agg->cur;
		agg->cap_last = agg->cap_cur;
		agg->nr_last = agg->nr_cur;
		agg->cur = t;
		agg->cap_cur = cap;
		agg->nr_cur = 0;
		agg->nr_complete++;
	}
	return 0;
}

static int line_done(struct mr_mon_damon_trace_agg *agg)
{
	struct mr_mon_damon_trace_rec rec;
	int ret;

	agg->line[agg->line_len] = '\0';
	agg->line_len = 0;
	ret = mr_mon_damon_trace_parse(agg->line, &rec);
	if (ret < 0)
		return ret;
	if (ret == 0) {
		/* "CPU:0 [LOST 12 EVENTS]": what follows does not continue the run */
		if (strstr(agg->line, "LOST"))
			drop_run(agg);
		return 0;
	}
	/*
	 * Only our kdamond's events. target_id cannot tell kdamonds apart: it is the
	 * target's index inside its own context (kdamond_fn counts targets from 0),
	 * so every kdamond with one target prints target_id=0. The event fires in
	 * the kdamond thread itself (kdamond_fn -> kdamond_reset_aggregated), so the
	 * pid in trace_pipe's context columns is the kdamond's. memreg's instance
	 * also filters on common_pid in the kernel once the kdamond's pid is known;
	 * this covers what was buffered before, and a line without the context
	 * columns (an instance's context-info option off) cannot be attributed.
	 * Another kdamond's events interleave with ours without breaking our run.
	 */
	if (agg->pid && rec.pid != agg->pid) {
		agg->nr_foreign++;
		return 0;
	}
	return add(agg, &rec);
}

int mr_mon_damon_trace_feed(struct mr_mon_damon_trace_agg *agg, const char *data, size_t len)
{
	size_t i;
	int err;

	for (i = 0; i < len; i++) {
		if (data[i] == '\n') {
			err = line_done(agg);
			if (err)
				return err;
			continue;
		}
		if (agg->line_len + 1 >= sizeof(agg->line))
			return mr_error(-EINVAL, "damon trace: a line longer than %zu bytes",
					sizeof(agg->line) - 1);
		agg->line[agg->line_len++] = data[i];
	}
	return 0;
}
