/* The scheme engine (see engine.h). The arithmetic follows the kernel's
 * mm/damon/core.c and ops-common.c so that a scheme means the same in both engines:
 * the effective quota, the score histogram's threshold, the hot/cold scores. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/util.h"
#include "controller/engine.h"

#define MAX_SUBSCORE 100	/* DAMON_MAX_SUBSCORE */
#define MAX_AGE_IN_LOG 32	/* DAMON_MAX_AGE_IN_LOG */
#define MIN_REGION_BYTES 4096	/* DAMON_MIN_REGION: a quota splits at page size */
/* DAMOS's apply rate before anything was measured: a page per microsecond */
#define DEFAULT_BYTES_PER_MS (4096u * 1024u)

static uint64_t clock_now_ns(const struct mr_ctl *c)
{
	struct timespec ts;

	if (c->clock)
		return c->clock(c->arg);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint32_t max_nr_accesses(const struct mr_mon_attrs *a)
{
	uint64_t n = a->sample_us ? a->aggr_us / a->sample_us : 1;

	return n ? (uint32_t)(n > UINT32_MAX ? UINT32_MAX : n) : 1;
}

/* A frequency bound as a count per aggregation. */
static uint32_t freq_count(const struct mr_scheme_freq *f, uint32_t max)
{
	return f->is_count ? f->value : (uint32_t)((uint64_t)f->value * max / 1000);
}

bool mr_scheme_matches(const struct mr_scheme *s, const struct mr_mon_region *r,
		       const struct mr_mon_attrs *attrs)
{
	uint64_t size = r->end - r->start, age_us = (uint64_t)r->age * attrs->aggr_us;
	uint32_t max = max_nr_accesses(attrs);

	return size >= s->min_size_bytes && size <= s->max_size_bytes &&
	       r->nr_accesses >= freq_count(&s->min_freq, max) &&
	       r->nr_accesses <= freq_count(&s->max_freq, max) &&
	       age_us >= s->min_age_us && age_us <= s->max_age_us;
}

unsigned mr_scheme_hot_score(const struct mr_scheme *s, const struct mr_mon_region *r,
			     const struct mr_mon_attrs *attrs)
{
	unsigned freq_w = s->weight_freq, age_w = s->weight_age;
	uint64_t freq_sub, age_sub, hot;
	uint64_t age_s = (uint64_t)r->age * attrs->aggr_us / 1000000;
	int age_log;

	if (!freq_w && !age_w)
		freq_w = age_w = 1;	/* no weights given: both count alike */
	freq_sub = (uint64_t)r->nr_accesses * MAX_SUBSCORE / max_nr_accesses(attrs);
	if (freq_sub > MAX_SUBSCORE)
		freq_sub = MAX_SUBSCORE;
	/* age in seconds, as a log2 that counts for the hot when accessed and
	 * against them when not: a long-idle region is the coldest */
	for (age_log = 0; age_log < MAX_AGE_IN_LOG && age_s; age_log++)
		age_s >>= 1;
	if (!freq_sub)
		age_log = -age_log;
	age_log += MAX_AGE_IN_LOG;
	age_sub = (uint64_t)age_log * MAX_SUBSCORE / MAX_AGE_IN_LOG / 2;
	hot = (freq_w * freq_sub + age_w * age_sub) / (freq_w + age_w);
	return (unsigned)(hot * MR_SCHEME_MAX_SCORE / MAX_SUBSCORE);
}

unsigned mr_scheme_score(const struct mr_scheme *s, const struct mr_mon_region *r,
			 const struct mr_mon_attrs *attrs)
{
	switch (s->action) {
	case MR_SCHEME_MIGRATE_HOT:
	case MR_SCHEME_WILLNEED:
		return mr_scheme_hot_score(s, r, attrs);
	case MR_SCHEME_MIGRATE_COLD:
	case MR_SCHEME_PAGEOUT:
	case MR_SCHEME_COLD:
		return MR_SCHEME_MAX_SCORE - mr_scheme_hot_score(s, r, attrs);
	default:
		return MR_SCHEME_MAX_SCORE;	/* stat: no priority */
	}
}

int mr_ctl_init(struct mr_ctl *c, const struct mr_scheme_set *set,
		const struct mr_mon_attrs *attrs)
{
	size_t i;

	memset(c, 0, sizeof(*c));
	c->attrs = *attrs;
	c->states = calloc(set->nr ? set->nr : 1, sizeof(*c->states));
	if (!c->states)
		return mr_error(-ENOMEM, "out of memory");
	c->nr_states = set->nr;
	for (i = 0; i < set->nr; i++) {
		c->states[i].scheme = &set->schemes[i];
		c->states[i].active = !set->schemes[i].has_wmarks;
		c->states[i].charged_from_us = UINT64_MAX;	/* first aggregation starts it */
	}
	return 0;
}

void mr_ctl_destroy(struct mr_ctl *c)
{
	free(c->states);
	c->states = NULL;
	c->nr_states = 0;
}

/*
 * The effective size quota, as DAMOS sets it at each reset: the ms quota times the
 * apply rate measured so far (a page per microsecond before any), capped by the
 * bytes quota; no quota at all is UINT64_MAX.
 */
static uint64_t effective_quota(const struct mr_scheme_state *st)
{
	const struct mr_scheme *s = st->scheme;
	uint64_t esz = UINT64_MAX, per_ms;

	if (s->quota_ms) {
		per_ms = st->total_charged_ns ?
			 st->total_charged_bytes * 1000000 / st->total_charged_ns :
			 DEFAULT_BYTES_PER_MS;
		if (!mr_mul_u64(per_ms, s->quota_ms, &esz))
			esz = UINT64_MAX;
	}
	if (s->quota_bytes && s->quota_bytes < esz)
		esz = s->quota_bytes;
	return esz;
}

/* Watermarks (DAMOS's rule): off above high and below low; between mid and high a
 * scheme stays as it was; on from below mid down to low. */
static int update_wmarks(struct mr_ctl *c, struct mr_scheme_state *st, uint64_t now_us)
{
	const struct mr_scheme *s = st->scheme;
	unsigned m;
	int err;

	if (!s->has_wmarks || now_us < st->next_wmark_us)
		return 0;
	if (!c->metric)
		return mr_error(-EINVAL, "scheme of line %u has watermarks, but no free-memory "
				"metric is given", s->line);
	err = c->metric(c->arg, &m);
	if (err)
		return err;
	st->next_wmark_us = now_us + s->wmark_interval_us;
	if (m > s->wmark_high_permille || m < s->wmark_low_permille)
		st->active = false;
	else if (m < s->wmark_mid_permille)
		st->active = true;
	return 0;
}

/* At a new reset interval: count an exceeded one, then the new effective quota. */
static void update_quota(struct mr_scheme_state *st, uint64_t now_us)
{
	const struct mr_scheme *s = st->scheme;

	if (st->charged_from_us != UINT64_MAX && (!s->quota_reset_us ||
	    now_us < st->charged_from_us + s->quota_reset_us))
		return;
	if (st->charged_from_us != UINT64_MAX && st->esz_bytes != UINT64_MAX &&
	    st->charged_bytes >= st->esz_bytes)
		st->stats.qt_exceeds++;
	st->total_charged_bytes += st->charged_bytes;
	st->charged_from_us = now_us;
	st->charged_bytes = 0;
	st->esz_bytes = effective_quota(st);
}

/*
 * The lowest score still applied under the quota (DAMOS's histogram walk): from the
 * top score down, add up the bytes of matching regions until they fill what is left.
 */
static unsigned min_score(struct mr_ctl *c, const struct mr_scheme_state *st,
			  const struct mr_ctl_target_regions *targets, size_t nr_targets)
{
	uint64_t hist[MR_SCHEME_MAX_SCORE + 1] = { 0 }, sum = 0;
	unsigned score;
	size_t i, t;

	if (st->esz_bytes == UINT64_MAX)
		return 0;
	for (t = 0; t < nr_targets; t++) {
		const struct mr_mon_region *regions = targets[t].regions;

		for (i = 0; i < targets[t].nr; i++)
			if (mr_scheme_matches(st->scheme, &regions[i], &c->attrs))
				hist[mr_scheme_score(st->scheme, &regions[i], &c->attrs)] +=
					regions[i].end - regions[i].start;
	}
	for (score = MR_SCHEME_MAX_SCORE;; score--) {
		sum += hist[score];
		if (sum >= st->esz_bytes - st->charged_bytes || !score)
			return score;
	}
}

/* @st's action on the regions of one target, down to st->min_score. */
static int apply_scheme(struct mr_ctl *c, struct mr_scheme_state *st,
			struct mr_mon_region *regions, size_t nr)
{
	const struct mr_scheme *s = st->scheme;
	size_t i, k;
	int err;

	for (i = 0; i < nr; i++) {
		struct mr_mon_region *r = &regions[i];
		struct mr_ctl_result res = { 0 };
		uint64_t sz = r->end - r->start, t0;

		if (!mr_scheme_matches(s, r, &c->attrs) ||
		    mr_scheme_score(s, r, &c->attrs) < st->min_score)
			continue;
		if (st->esz_bytes != UINT64_MAX) {
			if (st->charged_bytes >= st->esz_bytes)
				break;
			/* the part of the region that fits what is left, DAMOS's split */
			if (st->charged_bytes + sz > st->esz_bytes) {
				sz = (st->esz_bytes - st->charged_bytes) & ~(uint64_t)(MIN_REGION_BYTES - 1);
				if (!sz)
					break;
			}
		}
		t0 = clock_now_ns(c);
		err = c->apply(c->arg, s, r->start, r->start + sz, &res);
		if (err)
			return err;
		st->total_charged_ns += clock_now_ns(c) - t0;
		st->charged_bytes += sz;
		st->stats.nr_tried++;
		st->stats.sz_tried += sz;
		if (res.applied_bytes) {
			st->stats.nr_applied++;
			st->stats.sz_applied += res.applied_bytes;
		}
		for (k = 0; k < NR_MR_CTL_FAILS; k++)
			st->stats.failed_bytes[k] += res.failed_bytes[k];
		if (s->action != MR_SCHEME_STAT)
			r->age = 0;	/* its pattern starts over after the action */
	}
	return 0;
}

int mr_ctl_aggregate_targets(struct mr_ctl *c, struct mr_ctl_target_regions *targets,
			     size_t nr_targets, size_t acting, uint64_t now_us)
{
	size_t i, t;
	int err;

	for (i = 0; i < c->nr_states; i++) {
		struct mr_scheme_state *st = &c->states[i];

		err = update_wmarks(c, st, now_us);
		if (err)
			return err;
		if (!st->active)
			continue;
		update_quota(st, now_us);
		st->min_score = min_score(c, st, targets, nr_targets);
		for (t = 0; t < nr_targets; t++) {
			if (acting != MR_CTL_ALL_TARGETS && t != acting)
				continue;
			c->cur_target = t;
			err = apply_scheme(c, st, targets[t].regions, targets[t].nr);
			if (err)
				return err;
		}
	}
	return 0;
}

int mr_ctl_aggregate(struct mr_ctl *c, struct mr_mon_region *regions, size_t nr,
		     uint64_t now_us)
{
	struct mr_ctl_target_regions one = { regions, nr };

	return mr_ctl_aggregate_targets(c, &one, 1, 0, now_us);
}
