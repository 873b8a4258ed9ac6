/* The kernel engine (see kengine.h): memreg's schemes as DAMOS schemes of one paddr
 * kdamond, the kernel's statistics read back every aggregation interval. What the
 * kernel accepts is probed when the schemes are written (monitor/damon-sysfs.c);
 * what memreg creates (the kdamond, the cgroup) it removes at the end. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cgroup.h"
#include "common/proc.h"
#include "common/root.h"
#include "common/util.h"
#include "controller/kengine.h"

/* DAMOS's own units, as the user engine reads them (engine.c: max_nr_accesses,
 * freq_count): the same arithmetic, so a scheme picks the same regions in both. */
static uint32_t max_nr_accesses(const struct mr_mon_attrs *a)
{
	uint64_t n = a->sample_us ? a->aggr_us / a->sample_us : 1;

	return n ? (uint32_t)(n > UINT32_MAX ? UINT32_MAX : n) : 1;
}

static uint32_t freq_count(const struct mr_scheme_freq *f, uint32_t max)
{
	return f->is_count ? f->value : (uint32_t)((uint64_t)f->value * max / 1000);
}

static uint32_t clamp_u32(uint64_t v)
{
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

const char *mr_kengine_action_name(enum mr_scheme_action a)
{
	switch (a) {
	case MR_SCHEME_MIGRATE_COLD: return "migrate_cold";
	case MR_SCHEME_MIGRATE_HOT: return "migrate_hot";
	case MR_SCHEME_PAGEOUT: return "pageout";
	case MR_SCHEME_COLD: return "lru_deprio";	/* paddr's deactivation, as MADV_COLD */
	case MR_SCHEME_STAT: return "stat";
	default: return NULL;	/* willneed: vaddr only (MADV_WILLNEED) */
	}
}

static const char *const filter_types[NR_MR_SCHEME_FILTERS] = {
	[MR_SCHEME_FILTER_MEMCG] = "memcg",
	[MR_SCHEME_FILTER_ANON] = "anon",
	[MR_SCHEME_FILTER_ADDR] = "addr",
};

int mr_kengine_to_damos(const struct mr_scheme *s, const struct mr_mon_attrs *attrs,
			const char *memcg_path, struct mr_mon_damos *d)
{
	const char *name = mr_kengine_action_name(s->action);
	uint64_t aggr_us = attrs->aggr_us ? attrs->aggr_us : 1;
	uint32_t max = max_nr_accesses(attrs);
	unsigned i;

	memset(d, 0, sizeof(*d));
	if (!name)
		return mr_error(-ENOTSUP, "scheme of line %u: %s has no counterpart in the kernel's "
				"DAMOS for physical memory (paddr): use --engine user", s->line,
				mr_scheme_action_name(s->action));
	if (s->nr_filters + (memcg_path != NULL) > MR_DAMOS_MAX_FILTERS)
		return mr_error(-EINVAL, "scheme of line %u: %u filters, and the kernel engine adds "
				"one for the target's cgroup: at most %u", s->line, s->nr_filters,
				MR_DAMOS_MAX_FILTERS - 1);
	snprintf(d->action, sizeof(d->action), "%s", name);
	d->sz_min = s->min_size_bytes;
	d->sz_max = s->max_size_bytes;
	d->nr_accesses_min = freq_count(&s->min_freq, max);
	d->nr_accesses_max = freq_count(&s->max_freq, max);
	/* age * aggr_us >= min_age_us  <=>  age >= ceil(min_age_us / aggr_us);
	 * age * aggr_us <= max_age_us  <=>  age <= floor(max_age_us / aggr_us) */
	d->age_min = clamp_u32(s->min_age_us / aggr_us + (s->min_age_us % aggr_us != 0));
	d->age_max = clamp_u32(s->max_age_us / aggr_us);
	d->apply_interval_us = attrs->aggr_us;	/* once per aggregation, as the user engine */
	d->target_nid = mr_scheme_action_migrates(s->action) ? s->target_node : -1;
	d->quota_ms = s->quota_ms;
	d->quota_bytes = s->quota_bytes;
	d->quota_reset_ms = (s->quota_reset_us + 999) / 1000;
	d->weight_sz_permil = s->weight_size;
	d->weight_nr_accesses_permil = s->weight_freq;
	d->weight_age_permil = s->weight_age;
	if (!s->weight_freq && !s->weight_age)	/* the user engine's default: alike */
		d->weight_nr_accesses_permil = d->weight_age_permil = 1;
	if (s->has_wmarks) {
		snprintf(d->wmark_metric, sizeof(d->wmark_metric), "free_mem_rate");
		d->wmark_interval_us = s->wmark_interval_us;
		d->wmark_high = s->wmark_high_permille;
		d->wmark_mid = s->wmark_mid_permille;
		d->wmark_low = s->wmark_low_permille;
	} else {
		snprintf(d->wmark_metric, sizeof(d->wmark_metric), "none");
	}
	/* The kernel filters out what a filter applies to: "allow X" is "filter out
	 * what is not X" (matching N), "reject X" is "filter out X" (matching Y). */
	if (memcg_path) {
		struct mr_mon_damos_filter *f = &d->filters[d->nr_filters++];

		snprintf(f->type, sizeof(f->type), "memcg");
		snprintf(f->memcg_path, sizeof(f->memcg_path), "%s", memcg_path);
		f->matching = false;
	}
	for (i = 0; i < s->nr_filters; i++) {
		const struct mr_scheme_filter *sf = &s->filters[i];
		struct mr_mon_damos_filter *f = &d->filters[d->nr_filters++];

		snprintf(f->type, sizeof(f->type), "%s", filter_types[sf->type]);
		snprintf(f->memcg_path, sizeof(f->memcg_path), "%s", sf->memcg_path);
		f->addr_start = sf->start;
		f->addr_end = sf->end;
		f->matching = !sf->allow;
	}
	return 0;
}

bool mr_kengine_damos_matches(const struct mr_mon_damos *d, const struct mr_mon_region *r)
{
	uint64_t sz = r->end - r->start;

	return d->sz_min <= sz && sz <= d->sz_max &&
	       d->nr_accesses_min <= r->nr_accesses && r->nr_accesses <= d->nr_accesses_max &&
	       d->age_min <= r->age && r->age <= d->age_max;
}

static int cmp_range(const void *a, const void *b)
{
	const struct mr_mon_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static bool is_target_node(const struct mr_scheme_set *set, int node)
{
	size_t i;

	for (i = 0; i < set->nr; i++)
		if (mr_scheme_action_migrates(set->schemes[i].action) &&
		    set->schemes[i].target_node == node)
			return true;
	return false;
}

int mr_kengine_ranges(const struct mr_region_map *map, const struct mr_scheme_set *set,
		      bool phys, struct mr_mon_range **out, size_t *nr, int *src_node)
{
	const struct mr_region *r;
	struct mr_mon_range *v = NULL;
	size_t n = 0, i, k;
	int node = -2;

	*src_node = -1;
	if (phys)
		return mr_mon_damon_ram_ranges(out, nr);
	mr_for_each_region(map, r) {
		struct mr_mon_range *p;

		if (r->node < 0 || !mr_region_span_known(r) || is_target_node(set, r->node))
			continue;
		p = realloc(v, (n + r->nr_ranges) * sizeof(*v));
		if (!p) {
			free(v);
			return mr_error(-ENOMEM, "out of memory");
		}
		v = p;
		for (k = 0; k < r->nr_ranges; k++) {
			v[n].start = r->ranges[k].start;
			v[n++].end = r->ranges[k].start + r->ranges[k].size;
		}
		node = node == -2 || node == r->node ? r->node : -1;
	}
	if (!n) {
		free(v);
		return mr_error(-ENOENT, "--engine kernel: no node to take pages from: every node "
				"with a known physical range is a migration target");
	}
	qsort(v, n, sizeof(*v), cmp_range);
	for (i = 1, k = 0; i < n; i++) {	/* touching ranges as one */
		if (v[i].start <= v[k].end) {
			if (v[i].end > v[k].end)
				v[k].end = v[i].end;
		} else {
			v[++k] = v[i];
		}
	}
	*nr = k + 1;
	*out = v;
	*src_node = node;
	return 0;
}

/* The gate of a child memreg started: one byte lets it exec, EOF makes it exit. */
static void open_gate(int *fd, bool go)
{
	if (*fd < 0)
		return;
	if (go && write(*fd, "g", 1) != 1)
		fprintf(stderr, "memregctl control: cannot release the command: %s\n",
			strerror(errno));
	close(*fd);
	*fd = -1;
}

/* @a - @b, field by field; 0 where the kernel's counter went back (schemes committed
 * anew start over). */
static struct mr_mon_damos_stats stats_sub(const struct mr_mon_damos_stats *a,
					   const struct mr_mon_damos_stats *b)
{
	struct mr_mon_damos_stats d;

#define SUB(f) d.f = a->f >= b->f ? a->f - b->f : a->f
	SUB(nr_tried);
	SUB(sz_tried);
	SUB(nr_applied);
	SUB(sz_applied);
	SUB(qt_exceeds);
#undef SUB
	return d;
}

/* One aggregation's statistics into the run: totals from the kernel's counters (less
 * @base, their values when these schemes were installed), the interval's work (what
 * the user engine's actions account) from their growth since @prev. */
static void take_stats(struct mr_ctl_run *run, size_t i, const struct mr_mon_damos_stats *now,
		       const struct mr_mon_damos_stats *prev, const struct mr_mon_damos_stats *base,
		       int src_node)
{
	struct mr_scheme_stats *st = &run->ctl.states[i].stats;
	struct mr_act_acct *acct = &run->act.acct[i];
	struct mr_mon_damos_stats tot = stats_sub(now, base), d = stats_sub(now, prev);
	bool stat = run->set->schemes[i].action == MR_SCHEME_STAT;

	st->nr_tried = tot.nr_tried;
	st->sz_tried = tot.sz_tried;
	st->nr_applied = tot.nr_applied;
	st->sz_applied = tot.sz_applied;
	st->qt_exceeds = tot.qt_exceeds;
	/* the kernel has no watermark state file: a scheme that tried regions in this
	 * interval was active */
	if (run->set->schemes[i].has_wmarks)
		run->ctl.states[i].active = d.nr_tried > 0;
	acct->regions = stat ? d.nr_tried : d.nr_applied;
	acct->bytes = stat ? d.sz_tried : d.sz_applied;
	acct->src_bytes[src_node >= 0 ? (unsigned)src_node : MR_ACT_SRC_UNKNOWN] = acct->bytes;
}

#define KD 0	/* memreg's one kdamond: kdamonds/0 */

/* The kernel engine's state between set-up and teardown. */
struct kstate {
	const char *memcg;		/* the memcg filter's path; NULL with --phys */
	pid_t pid;			/* the target, 0 with --phys */
	int src_node;			/* the one node pages are taken from, or -1 */
	struct mr_mon_damos_stats *prev, *base;	/* per scheme (see take_stats) */
};

/* The run's schemes as kdamond 0's: nr_schemes, then each (probed). */
static int write_schemes(struct mr_ctl_run *run, const struct kstate *k)
{
	struct mr_mon_damos d;
	char num[16];
	size_t i;
	int err;

	snprintf(num, sizeof(num), "%zu", run->set->nr);
	err = mr_root_write_str(MR_DAMON_KDAMONDS "/0/contexts/0/schemes/nr_schemes", num,
				run->mon->apply);
	for (i = 0; !err && i < run->set->nr; i++) {
		err = mr_kengine_to_damos(&run->set->schemes[i], &run->mon->attrs, k->memcg, &d);
		if (!err)
			err = mr_mon_damon_write_scheme(KD, (unsigned)i, &d, run->mon->apply);
		if (err)
			err = mr_error_wrap(err, "scheme of line %u", run->set->schemes[i].line);
	}
	return err;
}

/* The kdamond set up and started: context, target regions, schemes, state on. */
static int install(struct mr_ctl_run *run, struct mr_mon_damon_owner *owner,
		   const struct kstate *k, const struct mr_mon_range *ranges, size_t nr)
{
	bool apply = run->mon->apply;
	int err;

	owner->nr_kdamonds = 1;
	snprintf(owner->kd[0].ops, sizeof(owner->kd[0].ops), "paddr");
	owner->kd[0].target_pid = 0;
	err = mr_mon_damon_claim(owner);
	if (!err)
		err = mr_mon_damon_write_context(KD, "paddr", &run->mon->attrs, apply);
	if (!err)
		err = mr_root_write_str(MR_DAMON_KDAMONDS "/0/contexts/0/targets/nr_targets", "1",
					apply);
	if (!err)
		err = mr_mon_damon_write_regions(run->mon, KD, ranges, nr);
	if (!err)
		err = write_schemes(run, k);
	if (!err)
		err = mr_mon_damon_write_state(0, "on", apply);
	if (!err)
		err = mr_mon_damon_started(owner, 0);
	return err;
}

/* (Re)size the per-scheme counters to the run's schemes and take the kernel's
 * current values as where they start. */
static int baseline(struct mr_ctl_run *run, struct kstate *k)
{
	size_t n = run->set->nr ? run->set->nr : 1, i;
	int err;

	free(k->prev);
	free(k->base);
	k->prev = calloc(n, sizeof(*k->prev));
	k->base = calloc(n, sizeof(*k->base));
	if (!k->prev || !k->base)
		return mr_error(-ENOMEM, "out of memory");
	err = mr_mon_damon_update_stats(KD, run->mon->apply);
	for (i = 0; !err && i < run->set->nr; i++)
		err = mr_mon_damon_read_stats(KD, (unsigned)i, &k->base[i]);
	memcpy(k->prev, k->base, n * sizeof(*k->prev));
	return err;
}

/* memregd's SIGHUP: the new schemes (reload_fn put them in the run) committed to the
 * running kdamond ("commit": the kernel takes them at its next aggregation, the
 * monitoring goes on). */
static int reload(struct mr_ctl_run *run, struct kstate *k)
{
	int err;

	*run->reload = 0;
	if (run->reload_fn)
		run->reload_fn(run, run->reload_arg);
	err = write_schemes(run, k);
	if (!err)
		err = mr_mon_damon_write_state(0, "commit", run->mon->apply);
	if (!err)
		err = baseline(run, k);
	return err;
}

/* Every aggregation interval until the duration, a stop signal, the target's end or
 * the kdamond's: the kernel's statistics into the run. */
static int watch(struct mr_ctl_run *run, struct kstate *k)
{
	uint64_t aggr_us = run->mon->attrs.aggr_us ? run->mon->attrs.aggr_us : 100000;
	uint64_t t0 = mr_mon_now_us(), next = t0 + aggr_us, now;
	struct mr_mon_damos_stats cur;
	bool apply = run->mon->apply;
	char state[16];
	size_t i;
	int err, ret;

	err = baseline(run, k);
	while (!err) {
		while ((now = mr_mon_now_us()) < next && !(run->mon->stop && *run->mon->stop))
			usleep(next - now > 20000 ? 20000 : (useconds_t)(next - now));
		if (run->mon->stop && *run->mon->stop)
			break;
		next += aggr_us;
		if (next <= now)	/* behind (a loaded guest): no burst of catching up */
			next = now + aggr_us;
		if (run->reload && *run->reload && (err = reload(run, k)))
			break;
		err = mr_mon_damon_update_stats(KD, apply);
		if (err) {
			if (!mr_mon_damon_read_str(MR_DAMON_KDAMONDS "/0/state", state, sizeof(state)) &&
			    strcmp(state, "on"))
				err = mr_error(-EIO, "--engine kernel: the kernel stopped memreg's "
					       "kdamond");
			break;
		}
		mr_act_acct_reset(&run->act);
		for (i = 0; !err && i < run->set->nr; i++) {
			err = mr_mon_damon_read_stats(KD, (unsigned)i, &cur);
			if (!err) {
				take_stats(run, i, &cur, &k->prev[i], &k->base[i], k->src_node);
				k->prev[i] = cur;
			}
		}
		if (err)
			break;
		{
			double cpu = mr_mon_damon_kdamond_cpu_s(mr_mon_damon_kdamond_pid(KD));

			if (cpu > run->mon->kernel_cpu_s)
				run->mon->kernel_cpu_s = cpu;
		}
		ret = mr_ctl_run_report(run, now - t0);
		if (ret < 0)
			err = ret;
		else if (ret > 0 || (k->pid > 0 && !mr_proc_alive(k->pid)))
			break;
	}
	return err;
}

int mr_kengine_run(struct mr_ctl_run *run, const struct mr_kengine_opts *o)
{
	struct mr_mon_damon_owner owner;
	struct mr_cgroup cg = { 0 };
	struct mr_mon_damos d;
	struct kstate k = { .src_node = -1 };
	struct mr_mon_range *ranges = NULL;
	size_t nr_ranges = 0, i;
	bool apply = o->apply, have_owner = false;
	char why[256], name[64], memcg[80], where[64], size[32];
	int gate = o->gate_fd, err;
	uint64_t total = 0;

	err = mr_root_may_change("install DAMOS schemes in the kernel", apply);
	if (err)
		goto out;
	run->act.apply = true;	/* the status and the log say "applied" */
	run->mon->apply = true;	/* the kdamond's regions are written through it */
	err = mr_mon_damon_check_free(why, sizeof(why));
	if (err) {
		err = mr_error(err, "damon: %s; not touched", why);
		goto out;
	}
	if (!o->phys && (err = mr_cgroup_check(why, sizeof(why)))) {
		err = mr_error(err, "--engine kernel: a process target needs a DAMOS memcg filter "
			       "on a cgroup v2 group memreg creates, and %s (or use --phys)", why);
		goto out;
	}
	snprintf(name, sizeof(name), "memreg-%ld", (long)o->pid);
	snprintf(memcg, sizeof(memcg), "/%s", name);
	k.memcg = o->phys ? NULL : memcg;
	k.pid = o->phys ? 0 : o->pid;
	/* every scheme converts before anything is written */
	for (i = 0; i < run->set->nr && !err; i++)
		err = mr_kengine_to_damos(&run->set->schemes[i], &run->mon->attrs, k.memcg, &d);
	if (!err)
		err = mr_kengine_ranges(run->map, run->set, o->phys, &ranges, &nr_ranges,
					&k.src_node);
	if (err)
		goto out;
	if (!o->phys) {
		err = mr_cgroup_create(&cg, name, apply);
		if (!err)
			err = mr_cgroup_move_in(&cg, o->pid);
		if (err)
			goto out;
		if (!o->started)
			fprintf(stderr, "memregctl control: moved pid %ld into %s%s; the pages it "
				"touched before stay charged to %s (cgroup v2 does not move charges): "
				"the schemes act on pages it touches from now on\n", (long)o->pid,
				MR_CGROUP_ROOT, memcg, cg.orig_path);
	}
	open_gate(&gate, true);
	err = mr_mon_damon_owner_init(&owner, apply);
	if (err)
		goto out;
	have_owner = true;
	err = install(run, &owner, &k, ranges, nr_ranges);
	if (err)
		goto out;
	for (i = 0; i < nr_ranges; i++)
		total += ranges[i].end - ranges[i].start;
	if (o->phys)
		snprintf(where, sizeof(where), "all System RAM");
	else if (k.src_node >= 0)
		snprintf(where, sizeof(where), "node %d", k.src_node);
	else
		snprintf(where, sizeof(where), "every node but the migration targets");
	fprintf(stderr, "memregctl control: kernel engine: kdamond %ld, paddr over %s (%s in %zu "
		"range%s), %zu DAMOS scheme%s%s%s\n", (long)owner.kd[0].pid, where,
		mr_format_size(total, size, sizeof(size)), nr_ranges, nr_ranges == 1 ? "" : "s",
		run->set->nr, run->set->nr == 1 ? "" : "s", o->phys ? "" : ", memcg filter ",
		o->phys ? "" : memcg);
	err = watch(run, &k);
out:
	open_gate(&gate, false);
	if (have_owner)
		mr_mon_damon_release(&owner);
	mr_cgroup_remove(&cg);
	if (!err)
		err = mr_ctl_run_end(run);
	free(ranges);
	free(k.prev);
	free(k.base);
	return err;
}
