/* The controller's run loop (see run.h): monitor -> engine -> actions, per
 * aggregation interval, with the log, the status file and the metrics. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "common/proc.h"
#include "common/root.h"
#include "common/util.h"
#include "controller/classes.h"
#include "controller/run.h"
#include "power/energy.h"

#define STATUS_VERSION 1

int mr_ctl_meminfo_free_permille(void *arg, unsigned *free_permille)
{
	char *data = NULL, *p;
	uint64_t total = 0, avail = 0;
	int err;

	(void)arg;
	err = mr_root_read_file("/proc/meminfo", 1u << 20, &data, NULL);
	if (err)
		return err;
	/* DAMOS's free_mem_rate is the kernel's free pages (NR_FREE_PAGES): MemFree */
	p = strstr(data, "MemTotal:");
	if (p)
		total = strtoull(p + 9, NULL, 10);
	p = strstr(data, "MemFree:");
	if (p)
		avail = strtoull(p + 8, NULL, 10);
	free(data);
	if (!total)
		return mr_error(-EINVAL, "/proc/meminfo: no MemTotal");
	*free_permille = (unsigned)(avail * 1000 / total);
	return 0;
}

static double cpu_seconds(const struct mr_ctl_run *run)
{
	struct rusage ru;
	double s = 0;

	if (getrusage(RUSAGE_SELF, &ru) == 0)
		s = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
		    (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	return s + (run->mon ? run->mon->kernel_cpu_s : 0);
}

/* "-> node 3 (region 3)" for a migration, "" otherwise. */
static const char *dest_text(const struct mr_ctl_run *run, const struct mr_scheme *s,
			     char *buf, size_t len)
{
	const struct mr_region *r, *only = NULL;
	unsigned n = 0;

	buf[0] = '\0';
	if (!mr_scheme_action_migrates(s->action))
		return buf;
	mr_for_each_region(run->map, r)
		if (r->node == s->target_node) {
			only = r;
			n++;
		}
	if (s->target_region >= 0)
		snprintf(buf, len, " -> node %d (region %d)", s->target_node, s->target_region);
	else if (n == 1)
		snprintf(buf, len, " -> node %d (region %u)", s->target_node, only->id);
	else
		snprintf(buf, len, " -> node %d", s->target_node);
	return buf;
}

/* "pid 123: " before a target's lines when the run has several, "" otherwise. */
static const char *target_text(const struct mr_ctl_run *run, const struct mr_ctl_run_target *t,
			       char *buf, size_t len)
{
	buf[0] = '\0';
	if (run->targets)
		snprintf(buf, len, "pid %d: ", (int)t->member.pid);
	return buf;
}

static void log_actions(struct mr_ctl_run *run, struct mr_ctl_run_target *t, uint64_t time_us)
{
	uint64_t pb = t->act->page_bytes;
	char who[32];
	size_t i;

	for (i = 0; i < run->set->nr; i++) {
		const struct mr_scheme *s = &run->set->schemes[i];
		const struct mr_act_acct *a = &t->act->acct[i];
		json_object *j = NULL, *from = NULL;
		char size[32], dest[64];
		unsigned k;
		bool first = true;

		if (!a->regions)
			continue;
		if (run->keep_log) {
			j = json_object_new_object();
			from = json_object_new_array();
			json_object_object_add(j, "time_us", json_object_new_uint64(time_us));
			if (run->targets)
				json_object_object_add(j, "pid",
						       json_object_new_int((int)t->member.pid));
			json_object_object_add(j, "scheme", json_object_new_uint64(i));
			json_object_object_add(j, "action",
					       json_object_new_string(mr_scheme_action_name(s->action)));
			if (mr_scheme_action_migrates(s->action))
				json_object_object_add(j, "target_node",
						       json_object_new_int(s->target_node));
			json_object_object_add(j, "regions", json_object_new_uint64(a->regions));
			json_object_object_add(j, "bytes", json_object_new_uint64(a->bytes));
			json_object_object_add(j, "pages", json_object_new_uint64(a->bytes / pb));
		}
		if (run->log && (s->action != MR_SCHEME_STAT || run->log_stat)) {
			fprintf(run->log, "%s%" PRIu64 ".%03" PRIu64 " s: %sscheme %zu (line %u) %s%s: "
				"%s %" PRIu64 " region%s, %s (%" PRIu64 " pages)", run->log_prefix,
				time_us / 1000000, time_us / 1000 % 1000,
				target_text(run, t, who, sizeof(who)), i, s->line,
				mr_scheme_action_name(s->action), dest_text(run, s, dest, sizeof(dest)),
				s->action == MR_SCHEME_STAT ? "matched" :
				t->act->apply ? "applied to" : "would apply to",
				a->regions, a->regions == 1 ? "" : "s",
				mr_format_size(a->bytes, size, sizeof(size)), a->bytes / pb);
		}
		for (k = 0; k <= MR_MAX_NODES; k++) {
			if (!a->src_bytes[k])
				continue;
			if (run->log && (s->action != MR_SCHEME_STAT || run->log_stat)) {
				fprintf(run->log, "%s", first ? "; from " : ", ");
				if (k == MR_ACT_SRC_UNKNOWN)
					fprintf(run->log, "unknown nodes (replayed virtual addresses)");
				else
					fprintf(run->log, "node %u", k);
				fprintf(run->log, " %s (%" PRIu64 " pages)",
					mr_format_size(a->src_bytes[k], size, sizeof(size)),
					a->src_bytes[k] / pb);
			}
			if (from) {
				json_object *o = json_object_new_object();

				json_object_object_add(o, "node", k == MR_ACT_SRC_UNKNOWN ? NULL :
						       json_object_new_int((int)k));
				json_object_object_add(o, "bytes",
						       json_object_new_uint64(a->src_bytes[k]));
				json_object_object_add(o, "pages",
						       json_object_new_uint64(a->src_bytes[k] / pb));
				json_object_array_add(from, o);
			}
			first = false;
		}
		if (run->log && (s->action != MR_SCHEME_STAT || run->log_stat)) {
			fputc('\n', run->log);
			fflush(run->log);
		}
		if (j) {
			json_object_object_add(j, "from", from);
			json_object_array_add(run->actions_log, j);
		}
	}
}

static void add_totals(struct mr_ctl_run *run, const struct mr_ctl_run_target *t)
{
	size_t i;
	unsigned k;

	for (i = 0; i < run->set->nr; i++) {
		const struct mr_act_acct *a = &t->act->acct[i];

		if (run->set->schemes[i].action == MR_SCHEME_STAT)
			continue;
		run->per_scheme[i].regions_acted += a->regions;
		for (k = 0; k <= MR_MAX_NODES; k++)
			run->per_scheme[i].node_bytes[k] += a->src_bytes[k];
	}
}

static int write_status_json(json_object *j, const char *path);

/* The status file and the metrics from one status document, so both say the same. */
static int write_outputs(struct mr_ctl_run *run)
{
	json_object *st;
	int err = 0;

	if (!run->status_path && !run->metrics_dir)
		return 0;
	st = mr_ctl_run_status_json(run);
	if (run->status_path)
		err = write_status_json(st, run->status_path);
	if (!err && run->metrics_dir)
		err = mr_ctl_metrics_write(st, run->metrics_dir);
	json_object_put(st);
	return err;
}

/*
 * For a backend that sees one count per mapping (refs): one region per mapping of the
 * target ([start, end) of its /proc/PID/maps line), nr_accesses the largest and age
 * the smallest of the monitoring regions overlapping it, so a scheme decides for
 * whole mappings only. Mappings no monitoring region overlaps are left out.
 */
static int join_mappings(struct mr_ctl_run_target *rt, const struct mr_mon_target *t,
			 struct mr_mon_region **out, size_t *nr_out)
{
	struct mr_mapping *maps = NULL;
	size_t nr_maps = 0, m, i = 0, n = 0;
	int err;

	err = mr_proc_maps_read(t->pid, &maps, &nr_maps);
	if (err)
		return err;
	if (nr_maps > rt->cap_joined) {
		struct mr_mon_region *j = realloc(rt->joined, nr_maps * sizeof(*j));

		if (!j) {
			free(maps);
			return mr_error(-ENOMEM, "out of memory");
		}
		rt->joined = j;
		rt->cap_joined = nr_maps;
	}
	for (m = 0; m < nr_maps; m++) {
		struct mr_mon_region *j = &rt->joined[n];
		size_t k;
		bool any = false;

		if (mr_mapping_is_prot_none(&maps[m]) || mr_mapping_is_special(&maps[m]))
			continue;
		while (i < t->nr_regions && t->regions[i].end <= maps[m].start)
			i++;
		memset(j, 0, sizeof(*j));
		j->start = maps[m].start;
		j->end = maps[m].end;
		j->sampling_addr = j->start;
		for (k = i; k < t->nr_regions && t->regions[k].start < maps[m].end; k++) {
			const struct mr_mon_region *r = &t->regions[k];

			if (!any || r->nr_accesses > j->nr_accesses)
				j->nr_accesses = r->nr_accesses;
			if (!any || r->age < j->age)
				j->age = r->age;
			any = true;
		}
		if (any)
			n++;
	}
	free(maps);
	*out = rt->joined;
	*nr_out = n;
	return 0;
}

/* An action on a mapping starts the ages of the monitoring regions in it over. */
static void split_ages(const struct mr_mon_region *joined, size_t nr_joined,
		       struct mr_mon_target *t)
{
	size_t i, j;

	for (j = 0; j < nr_joined; j++) {
		if (joined[j].age)
			continue;
		for (i = 0; i < t->nr_regions; i++)
			if (t->regions[i].start < joined[j].end && joined[j].start < t->regions[i].end)
				t->regions[i].age = 0;
	}
}

#define MAX_ACTED 4096			/* ranges remembered; the oldest go first */
#define ACTED_KEEP_US (3600ull * 1000000)	/* an hour: older actions age nothing */

/* @node holds a region of the running evacuation: pages moved there would land in
 * memory being emptied (the kernel picks any of the node's regions). */
static bool node_evacuating(const struct mr_ctl_run *run, int node)
{
	const struct mr_region *r;

	if (!run->evac.pid || node < 0)
		return false;
	mr_for_each_region(run->map, r)
		if (r->node == node && mr_plan_evacuation_has(&run->evac, r->id))
			return true;
	return false;
}

/*
 * Arbitration with memregctl evacuate: read its marker (one small file) before each
 * aggregation; while it runs, no scheme migrates to a node holding one of its
 * regions. Said in the log when an evacuation starts to hold regions and when it ends.
 */
static void evacuation_check(struct mr_ctl_run *run)
{
	struct mr_plan_evacuation ev;
	int running = mr_plan_evacuation_running(&ev);
	unsigned i;

	if (running < 0) {
		/* unreadable: the controller cannot tell, so it keeps what it knew */
		if (run->log && !run->evac_unreadable)
			fprintf(run->log, "%swarning: %s\n", run->log_prefix, mr_last_error());
		run->evac_unreadable = true;
		mr_clear_error();
		return;
	}
	run->evac_unreadable = false;
	if (running && (run->evac.pid != ev.pid || strcmp(run->evac.plan, ev.plan))) {
		if (run->log) {
			fprintf(run->log, "%sevacuation of plan %s (memregctl evacuate, pid %ld) "
				"holds region%s ", run->log_prefix, ev.plan, ev.pid,
				ev.nr_regions == 1 ? "" : "s");
			for (i = 0; i < ev.nr_regions; i++)
				fprintf(run->log, "%s%u", i ? "," : "", ev.regions[i]);
			fprintf(run->log, ": no scheme migrates to their nodes until it ends\n");
		}
	} else if (!running && run->evac.pid && run->log) {
		fprintf(run->log, "%sevacuation of plan %s (pid %ld) ended: its regions may be "
			"targeted again\n", run->log_prefix, run->evac.plan, run->evac.pid);
	}
	if (run->log)
		fflush(run->log);
	run->evac = ev;		/* zeroed when none runs */
}

/* The engine's apply callback: the actions, and the range remembered (not stat's). */
static int run_apply(void *arg, const struct mr_scheme *s, uint64_t start, uint64_t end,
		     struct mr_ctl_result *res)
{
	struct mr_ctl_run *run = arg;
	struct mr_ctl_run_target *t = run->cur;
	int err;

	if (mr_scheme_action_migrates(s->action) && node_evacuating(run, s->target_node))
		return 0;	/* tried, nothing applied: said once by evacuation_check */
	err = mr_act_apply(t->act, s, start, end, res);
	if (err || s->action == MR_SCHEME_STAT)
		return err;
	if (t->nr_acted == MAX_ACTED) {
		memmove(t->acted, t->acted + 1, (MAX_ACTED - 1) * sizeof(*t->acted));
		t->nr_acted--;
	}
	if (t->nr_acted == t->cap_acted) {
		size_t cap = t->cap_acted ? t->cap_acted * 2 : 64;
		struct mr_ctl_acted *a = realloc(t->acted, cap * sizeof(*a));

		if (!a)
			return mr_error(-ENOMEM, "out of memory");
		t->acted = a;
		t->cap_acted = cap;
	}
	t->acted[t->nr_acted++] = (struct mr_ctl_acted){ start, end, run->now_us };
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * DAMOS sets a region's age to 0 when it applies an action to it (and splits it
 * where the quota cut). A backend that aggregates itself gives the kernel's (or the
 * record's) ages again next interval, as if nothing had been done: here each region
 * is cut at the ranges acted on, and a piece acted on at time T gets age at most
 * (now - T) / aggr_us. Without it, a quota would try the same first bytes of a
 * region every interval and a migrated region would be tried again at once.
 */
static int age_acted(struct mr_ctl_run *run, struct mr_ctl_run_target *rt,
		     const struct mr_mon_target *t, struct mr_mon_region **out, size_t *nr_out)
{
	uint64_t aggr_us = rt->mon->attrs.aggr_us ? rt->mon->attrs.aggr_us : 1;
	size_t i, k, n = 0, keep = 0;

	/* forget what is too old to matter */
	for (k = 0; k < rt->nr_acted; k++)
		if (run->now_us - rt->acted[k].time_us <= ACTED_KEEP_US &&
		    rt->acted[k].time_us <= run->now_us)
			rt->acted[keep++] = rt->acted[k];
	rt->nr_acted = keep;
	for (i = 0; i < t->nr_regions; i++) {
		const struct mr_mon_region *r = &t->regions[i];
		uint64_t cuts[2 * 64 + 2];
		size_t nc = 0, c;

		cuts[nc++] = r->start;
		for (k = 0; k < rt->nr_acted && nc < MR_ARRAY_SIZE(cuts) - 2; k++) {
			const struct mr_ctl_acted *a = &rt->acted[k];

			if (a->end <= r->start || a->start >= r->end)
				continue;
			if (a->start > r->start)
				cuts[nc++] = a->start;
			if (a->end < r->end)
				cuts[nc++] = a->end;
		}
		cuts[nc++] = r->end;
		qsort(cuts, nc, sizeof(cuts[0]), cmp_u64);
		for (c = 0; c + 1 < nc; c++) {
			struct mr_mon_region *p;

			if (cuts[c] == cuts[c + 1])
				continue;
			if (n == rt->cap_aged) {
				size_t cap = rt->cap_aged ? rt->cap_aged * 2 : 256;
				struct mr_mon_region *a = realloc(rt->aged, cap * sizeof(*a));

				if (!a)
					return mr_error(-ENOMEM, "out of memory");
				rt->aged = a;
				rt->cap_aged = cap;
			}
			p = &rt->aged[n++];
			*p = *r;
			p->start = cuts[c];
			p->end = cuts[c + 1];
			p->sampling_addr = p->start;
			for (k = 0; k < rt->nr_acted; k++) {
				const struct mr_ctl_acted *a = &rt->acted[k];
				uint64_t age;

				if (a->start > p->start || a->end < p->end)
					continue;
				age = (run->now_us - a->time_us) / aggr_us;
				if (age < p->age)
					p->age = (uint32_t)age;
			}
		}
	}
	*out = rt->aged;
	*nr_out = n;
	return 0;
}

/* The regions @t hands the engine for this aggregation: the monitor's own, or
 * (backends that aggregate themselves) cut at the ranges acted on, or (refs) joined
 * into one per mapping. -ESRCH when the process is gone. */
static int prepare_regions(struct mr_ctl_run *run, struct mr_ctl_run_target *t,
			   struct mr_mon_ctx *ctx, struct mr_mon_region **regions, size_t *nr)
{
	if (ctx->ops->snapshot)
		return age_acted(run, t, &ctx->target, regions, nr);
	if (run->whole_mappings && ctx->target.kind == MR_MON_TARGET_PROCESS &&
	    ctx->target.pid > 0)
		return join_mappings(t, &ctx->target, regions, nr);
	*regions = ctx->target.regions;
	*nr = ctx->target.nr_regions;
	return 0;
}

/* Keep @t's regions as the engine left them, for the other targets' passes. */
static int keep_last(struct mr_ctl_run_target *t, const struct mr_mon_region *regions,
		     size_t nr)
{
	if (nr > t->cap_last) {
		struct mr_mon_region *l = realloc(t->last, nr * sizeof(*l));

		if (!l)
			return mr_error(-ENOMEM, "out of memory");
		t->last = l;
		t->cap_last = nr;
	}
	if (nr)
		memcpy(t->last, regions, nr * sizeof(*regions));
	t->nr_last = nr;
	return 0;
}

/*
 * One engine pass for target @t at @time_us: its regions, and with a target set the
 * last regions of every other live target, so that each scheme's quota and priority
 * threshold are over all of them (mr_ctl_aggregate_targets); actions go to @t only.
 */
static int engine_pass(struct mr_ctl_run *run, struct mr_ctl_run_target *t,
		       struct mr_mon_ctx *ctx, uint64_t time_us)
{
	struct mr_ctl_target_regions one, *views = &one;
	struct mr_mon_region *regions = NULL;
	size_t nr = 0, nr_views = 1, acting = 0, i;
	int err;

	mr_act_acct_reset(t->act);
	run->now_us = time_us;
	run->cur = t;
	evacuation_check(run);
	err = prepare_regions(run, t, ctx, &regions, &nr);
	if (err)
		return err;
	one.regions = regions;
	one.nr = nr;
	if (run->targets) {
		views = calloc(run->nr_live ? run->nr_live : 1, sizeof(*views));
		if (!views)
			return mr_error(-ENOMEM, "out of memory");
		nr_views = 0;
		for (i = 0; i < run->nr_live; i++) {
			struct mr_ctl_run_target *u = run->live[i];

			if (u == t) {
				acting = nr_views;
				views[nr_views++] = one;
			} else if (!u->done && u->nr_last) {
				views[nr_views].regions = u->last;
				views[nr_views++].nr = u->nr_last;
			}
		}
	}
	err = mr_ctl_aggregate_targets(&run->ctl, views, nr_views, acting, time_us);
	if (views != &one)
		free(views);
	if (err)
		return err;
	if (regions != ctx->target.regions && !ctx->ops->snapshot)
		split_ages(regions, nr, &ctx->target);
	return run->targets ? keep_last(t, regions, nr) : 0;
}

static int on_aggregation(struct mr_mon_ctx *ctx, uint64_t time_us, void *arg)
{
	struct mr_ctl_run *run = arg;
	int err;

	if (run->reload && *run->reload) {
		*run->reload = 0;
		if (run->reload_fn)
			run->reload_fn(run, run->reload_arg);
	}
	err = engine_pass(run, &run->one, ctx, time_us);
	/* the allocator in the loop (one process, the user engine: cmd-control.c) */
	if (!err && run->classes)
		err = mr_ctl_classes_aggregate(run->classes, &ctx->attrs, ctx->target.regions,
					       ctx->target.nr_regions, ctx->aggr_nr_samples, time_us);
	if (err == -ESRCH)
		return 1;	/* the target ended while we acted on it */
	if (err) {
		run->err = err;
		return err;
	}
	return mr_ctl_run_report(run, time_us);
}

int mr_ctl_run_report(struct mr_ctl_run *run, uint64_t time_us)
{
	int err;

	run->nr_aggregations++;
	run->last_time_us = time_us;
	log_actions(run, &run->one, time_us);
	add_totals(run, &run->one);
	err = write_outputs(run);
	if (err)
		return run->err = err;
	if (run->duration_us && time_us >= run->duration_us)
		return 1;
	return 0;
}

int mr_ctl_run_end(struct mr_ctl_run *run)
{
	run->finished = true;
	return write_outputs(run);
}

int mr_ctl_run_start(struct mr_ctl_run *run, pid_t pid, bool phys, bool apply)
{
	int err;

	run->started_unix = (uint64_t)time(NULL);
	if (!run->log_prefix)
		run->log_prefix = "";
	if (run->targets && run->mon->ops->snapshot)
		return mr_error(-ENOTSUP, "the %s backend monitors one target per run (it "
				"aggregates itself: one kdamond or one record); with several "
				"processes use refs or perf", run->mon->ops->name);
	err = mr_ctl_init(&run->ctl, run->set, &run->mon->attrs);
	if (err)
		return err;
	/* with a target set, each process gets its own actions; run->act keeps the
	 * flags (apply, page size) the outputs print */
	err = mr_act_ctx_init(&run->act, run->map, run->set, run->targets ? 0 : pid, phys,
			      run->targets ? false : apply);
	if (err) {
		mr_ctl_destroy(&run->ctl);
		return err;
	}
	run->act.apply = apply;
	run->one.mon = run->mon;
	run->one.act = &run->act;
	run->one.member.pid = pid;
	run->one.member.cgroup = -1;
	run->cur = &run->one;
	if (run->targets) {
		err = pthread_mutex_init(&run->lock, NULL);
		if (err) {
			mr_act_ctx_destroy(&run->act);
			mr_ctl_destroy(&run->ctl);
			return mr_error(-err, "pthread_mutex_init: %s", strerror(err));
		}
	}
	run->ctl.apply = run_apply;
	run->ctl.metric = run->metric ? run->metric : mr_ctl_meminfo_free_permille;
	run->ctl.arg = run;
	run->per_scheme = calloc(run->set->nr ? run->set->nr : 1, sizeof(*run->per_scheme));
	if (!run->per_scheme) {
		mr_ctl_run_destroy(run);
		return mr_error(-ENOMEM, "out of memory");
	}
	if (run->keep_log)
		run->actions_log = json_object_new_array();
	return 0;
}

/*
 * Several targets: one monitor ctx per process (memreg's monitor has one target per
 * ctx, where DAMON's context has several) and one thread per ctx running
 * mr_mon_run, so each process is sampled at its own pace by the unchanged monitor
 * core. The engine is one (one mr_ctl: a scheme's quota and statistics are shared,
 * as DAMOS shares them across a context's targets) and runs under run->lock: at the
 * end of each target's aggregation interval it runs for that target, ranking its
 * regions together with the other targets' last regions (engine_pass), so the
 * priority threshold is over every target, and acting on that target's regions.
 * The main thread follows the set: every update interval it re-reads it
 * (mr_targets_update), starts a thread for each process that joined, reaps those
 * whose process ended, and logs both. A process that ends ends its part only.
 */
static void free_target(struct mr_ctl_run_target *t)
{
	mr_act_ctx_destroy(&t->own_act);
	mr_mon_ctx_destroy(&t->own_mon);
	free(t->acted);
	free(t->aged);
	free(t->joined);
	free(t->last);
	free(t);
}

static int on_target_aggregation(struct mr_mon_ctx *ctx, uint64_t time_us, void *arg)
{
	struct mr_ctl_run_target *t = arg;
	struct mr_ctl_run *run = t->run;
	int err, ret = 0;

	(void)time_us;	/* each ctx counts from its own start: the run's clock is used */
	pthread_mutex_lock(&run->lock);
	if (run->stop_all)
		goto out_stop;
	if (run->reload && *run->reload) {
		*run->reload = 0;
		if (run->reload_fn)
			run->reload_fn(run, run->reload_arg);
	}
	time_us = mr_mon_now_us() - run->start_mono_us;
	/* a pass waits for the lock while another process's actions run (move_pages
	 * of tens of MiB can take seconds): past the duration, do not start one */
	if (run->duration_us && time_us >= run->duration_us) {
		run->stop_all = 1;
		goto out_stop;
	}
	err = engine_pass(run, t, ctx, time_us);
	if (err == -ESRCH)
		goto out_stop;	/* the process ended while we acted on it */
	if (err) {
		ret = t->err = err;
		snprintf(t->errmsg, sizeof(t->errmsg), "%s", mr_last_error());
		goto out;
	}
	run->nr_aggregations++;
	t->aggregations++;
	run->last_time_us = time_us;
	log_actions(run, t, time_us);
	add_totals(run, t);
	err = write_outputs(run);
	if (err) {
		run->err = err;
		run->stop_all = 1;
		snprintf(t->errmsg, sizeof(t->errmsg), "%s", mr_last_error());
	}
	if (run->duration_us && time_us >= run->duration_us)
		run->stop_all = 1;
	ret = run->stop_all ? 1 : 0;
	goto out;
out_stop:
	ret = 1;
out:
	pthread_mutex_unlock(&run->lock);
	return ret;
}

static void *target_thread(void *arg)
{
	struct mr_ctl_run_target *t = arg;
	int err = mr_mon_run(t->mon, on_target_aggregation, t);

	pthread_mutex_lock(&t->run->lock);
	/* an error of the monitor while the process lives is the target's failure; its
	 * end (or an error because it ended) is not */
	if (err < 0 && !t->err && err != -ESRCH && mr_proc_same(t->member.pid,
	    t->member.starttime_ticks) == 0) {
		t->err = err;
		snprintf(t->errmsg, sizeof(t->errmsg), "%s", mr_last_error());
	}
	t->done = true;
	pthread_mutex_unlock(&t->run->lock);
	return NULL;
}

/* A line of the target set's changes; called with run->lock held, so that it never
 * lands inside a target's action line. */
static void log_target(struct mr_ctl_run *run, const char *what)
{
	uint64_t now_us = mr_mon_now_us() - run->start_mono_us;

	if (!run->log)
		return;
	fprintf(run->log, "%s%" PRIu64 ".%03" PRIu64 " s: %s\n", run->log_prefix,
		now_us / 1000000, now_us / 1000 % 1000, what);
	fflush(run->log);
}

/* Start following @m: its monitor ctx (a copy of the template run->mon), its
 * actions and its thread. Called with run->lock held. */
static int add_target(struct mr_ctl_run *run, const struct mr_target *m)
{
	struct mr_ctl_run_target *t, **live;
	int err;

	live = realloc(run->live, (run->nr_live + 1) * sizeof(*live));
	if (!live)
		return mr_error(-ENOMEM, "out of memory");
	run->live = live;
	t = calloc(1, sizeof(*t));
	if (!t)
		return mr_error(-ENOMEM, "out of memory");
	t->run = run;
	t->member = *m;
	mr_mon_ctx_init(&t->own_mon, run->mon->ops);
	t->own_mon.attrs = run->mon->attrs;
	t->own_mon.apply = run->mon->apply;
	t->own_mon.selftest_passed = run->mon->selftest_passed;
	t->own_mon.stop = &t->stop;
	t->own_mon.target.kind = MR_MON_TARGET_PROCESS;
	t->own_mon.target.pid = m->pid;
	t->own_mon.target.starttime_ticks = m->starttime_ticks;
	t->mon = &t->own_mon;
	err = mr_act_ctx_init(&t->own_act, run->map, run->set, m->pid, false, run->act.apply);
	if (err) {
		mr_mon_ctx_destroy(&t->own_mon);
		free(t);
		return err;
	}
	t->act = &t->own_act;
	err = pthread_create(&t->thread, NULL, target_thread, t);
	if (err) {
		free_target(t);
		return mr_error(-err, "pthread_create: %s", strerror(err));
	}
	run->live[run->nr_live++] = t;
	run->nr_joined++;
	return 0;
}

/* Join the thread of live[@i] and drop it. Called without run->lock. */
static void reap_target(struct mr_ctl_run *run, size_t i)
{
	struct mr_ctl_run_target *t = run->live[i];

	pthread_join(t->thread, NULL);
	pthread_mutex_lock(&run->lock);
	memmove(run->live + i, run->live + i + 1, (run->nr_live - i - 1) * sizeof(*run->live));
	run->nr_live--;
	pthread_mutex_unlock(&run->lock);
	free_target(t);
}

static bool stop_asked(const struct mr_ctl_run *run)
{
	return run->stop_all || (run->mon->stop && *run->mon->stop);
}

static int run_targets(struct mr_ctl_run *run)
{
	uint64_t update_us = run->mon->attrs.update_us ? run->mon->attrs.update_us : 1000000;
	int err = 0, failed = 0;
	size_t i;

	/* the backend's own check once, not once per process */
	if (run->mon->ops->selftest && !run->mon->selftest_passed) {
		err = run->mon->ops->selftest(run->mon);
		if (err)
			return err;
		run->mon->selftest_passed = true;
	}
	run->start_mono_us = mr_mon_now_us();
	while (!stop_asked(run)) {
		struct mr_target *joined = NULL, *left = NULL;
		size_t nr_joined = 0, nr_left = 0;
		char who[4200], line[4800];
		uint64_t until;

		/* processes that ended (or failed) between two reads of the set */
		for (i = 0; i < run->nr_live;) {
			struct mr_ctl_run_target *t = run->live[i];
			bool done;

			pthread_mutex_lock(&run->lock);
			done = t->done;
			pthread_mutex_unlock(&run->lock);
			if (!done) {
				i++;
				continue;
			}
			mr_target_text(run->targets, &t->member, who, sizeof(who));
			pthread_mutex_lock(&run->lock);
			if (t->err) {
				snprintf(line, sizeof(line), "%s: not followed: %s", who, t->errmsg);
				log_target(run, line);
				if (!run->log)
					fprintf(stderr, "%s%s\n", run->log_prefix, line);
				failed = t->err;
			} else if (!t->left) {
				snprintf(line, sizeof(line), "%s left (ended) after %" PRIu64
					 " aggregation%s", who, t->aggregations,
					 t->aggregations == 1 ? "" : "s");
				log_target(run, line);
				run->nr_left++;
			}
			pthread_mutex_unlock(&run->lock);
			reap_target(run, i);
		}
		err = mr_targets_update(run->targets, &joined, &nr_joined, &left, &nr_left);
		if (err)
			break;
		pthread_mutex_lock(&run->lock);
		for (i = 0; i < nr_left; i++) {
			size_t k;

			for (k = 0; k < run->nr_live; k++) {
				struct mr_ctl_run_target *t = run->live[k];

				if (t->member.pid != left[i].pid ||
				    t->member.starttime_ticks != left[i].starttime_ticks || t->left)
					continue;
				/* gone, or moved out of the cgroup: its monitor stops at its next
				 * sample and its thread is reaped then */
				t->left = true;
				t->stop = 1;
				run->nr_left++;
				mr_target_text(run->targets, &t->member, who, sizeof(who));
				snprintf(line, sizeof(line), "%s left after %" PRIu64
					 " aggregation%s", who, t->aggregations,
					 t->aggregations == 1 ? "" : "s");
				log_target(run, line);
			}
		}
		for (i = 0; i < nr_joined && !err; i++) {
			err = add_target(run, &joined[i]);
			if (!err) {
				mr_target_text(run->targets, &joined[i], who, sizeof(who));
				snprintf(line, sizeof(line), "%s joined", who);
				log_target(run, line);
			}
		}
		pthread_mutex_unlock(&run->lock);
		free(joined);
		free(left);
		if (err)
			break;
		if (!run->nr_live && !mr_targets_open(run->targets)) {
			pthread_mutex_lock(&run->lock);
			log_target(run, run->nr_joined ? "no process left to follow" :
				   "no process to follow");
			pthread_mutex_unlock(&run->lock);
			break;
		}
		/* sleep to the next update, waking for a stop or the end of the duration */
		until = mr_mon_now_us() + update_us;
		while (!stop_asked(run) && mr_mon_now_us() < until) {
			if (run->duration_us &&
			    mr_mon_now_us() - run->start_mono_us >= run->duration_us) {
				run->stop_all = 1;
				break;
			}
			usleep(50000);
		}
	}
	run->stop_all = 1;
	for (i = 0; i < run->nr_live; i++)
		run->live[i]->stop = 1;
	while (run->nr_live)
		reap_target(run, run->nr_live - 1);
	if (!err && run->err)
		err = run->err;
	if (!err && failed)
		err = mr_error(failed, "a target failed (logged above)");
	if (!run->last_time_us)
		run->last_time_us = mr_mon_now_us() - run->start_mono_us;
	run->finished = true;
	if (!err)
		err = write_outputs(run);
	return err;
}

int mr_ctl_run(struct mr_ctl_run *run)
{
	int err;

	run->ctl.attrs = run->mon->attrs;	/* a replay's attrs are the record's */
	if (run->targets)
		return run_targets(run);
	err = mr_mon_run(run->mon, on_aggregation, run);
	if (err > 0)
		err = 0;
	if (run->err)
		err = run->err;
	if (err && run->err == 0 && err != -ESRCH)
		return err;
	if (err == -ESRCH)
		err = 0;
	run->finished = true;
	if (!err)
		err = write_outputs(run);
	return err;
}

int mr_ctl_run_replace_schemes(struct mr_ctl_run *run, struct mr_scheme_set *set)
{
	bool apply = run->act.apply;
	struct mr_ctl ctl;
	struct mr_act_ctx act;
	struct mr_ctl_run_scheme *per;
	int err;

	err = mr_ctl_init(&ctl, set, &run->mon->attrs);
	if (err)
		return err;
	err = mr_act_ctx_init(&act, run->map, set, run->act.pid, run->act.phys,
			      run->targets ? false : run->act.apply);
	if (err) {
		mr_ctl_destroy(&ctl);
		return err;
	}
	per = calloc(set->nr ? set->nr : 1, sizeof(*per));
	if (!per) {
		mr_act_ctx_destroy(&act);
		mr_ctl_destroy(&ctl);
		return mr_error(-ENOMEM, "out of memory");
	}
	if (run->targets) {
		/* called from a target's aggregation, under run->lock: every process's
		 * actions follow the new set (their accounts are per scheme) */
		struct mr_act_ctx *acts = calloc(run->nr_live ? run->nr_live : 1, sizeof(*acts));
		size_t i, k;

		if (!acts)
			err = mr_error(-ENOMEM, "out of memory");
		for (i = 0; !err && i < run->nr_live; i++)
			err = mr_act_ctx_init(&acts[i], run->map, set, run->live[i]->member.pid,
					      false, run->act.apply);
		if (err) {
			for (k = 0; k < i; k++)
				mr_act_ctx_destroy(&acts[k]);
			free(acts);
			free(per);
			mr_act_ctx_destroy(&act);
			mr_ctl_destroy(&ctl);
			return err;
		}
		for (i = 0; i < run->nr_live; i++) {
			mr_act_ctx_destroy(&run->live[i]->own_act);
			run->live[i]->own_act = acts[i];
		}
		free(acts);
	}
	ctl.apply = run->ctl.apply;
	ctl.metric = run->ctl.metric;
	ctl.clock = run->ctl.clock;
	ctl.arg = run;
	mr_ctl_destroy(&run->ctl);
	mr_act_ctx_destroy(&run->act);
	free(run->per_scheme);
	run->ctl = ctl;
	run->act = act;
	if (run->targets)
		run->act.apply = apply;
	run->per_scheme = per;
	run->set = set;
	return 0;
}

void mr_ctl_run_destroy(struct mr_ctl_run *run)
{
	mr_act_ctx_destroy(&run->act);
	mr_ctl_destroy(&run->ctl);
	free(run->per_scheme);
	run->per_scheme = NULL;
	free(run->one.joined);
	free(run->one.acted);
	free(run->one.aged);
	free(run->one.last);
	memset(&run->one, 0, sizeof(run->one));
	free(run->live);	/* run_targets reaped every target */
	run->live = NULL;
	if (run->targets)
		pthread_mutex_destroy(&run->lock);
	if (run->actions_log)
		json_object_put(run->actions_log);
	run->actions_log = NULL;
}

/* Regions a run acts on: those of the nodes it took pages from, and its migration
 * targets' (known from the start). memregctl evacuate refuses these. A region of a
 * running evacuation is never one (arbitration: see evacuation_check). */
static bool region_targeted(const struct mr_ctl_run *run, const struct mr_region *r)
{
	size_t i;

	if (r->node < 0 || (run->evac.pid && mr_plan_evacuation_has(&run->evac, r->id)))
		return false;
	for (i = 0; i < run->set->nr; i++) {
		const struct mr_scheme *s = &run->set->schemes[i];

		if (mr_scheme_action_migrates(s->action) && s->target_node == r->node)
			return true;
		if (run->per_scheme && run->per_scheme[i].node_bytes[r->node])
			return true;
	}
	return false;
}

static json_object *scheme_json(const struct mr_ctl_run *run, size_t i)
{
	const struct mr_scheme *s = &run->set->schemes[i];
	const struct mr_scheme_state *st = &run->ctl.states[i];
	uint64_t pb = run->act.page_bytes ? run->act.page_bytes : 4096;
	json_object *j = json_object_new_object(), *f = json_object_new_object();
	unsigned k;

	json_object_object_add(j, "index", json_object_new_uint64(i));
	json_object_object_add(j, "line", json_object_new_int((int)s->line));
	json_object_object_add(j, "action", json_object_new_string(mr_scheme_action_name(s->action)));
	json_object_object_add(j, "target_node", mr_scheme_action_migrates(s->action) ?
			       json_object_new_int(s->target_node) : NULL);
	json_object_object_add(j, "active", json_object_new_boolean(st->active));
	json_object_object_add(j, "nr_tried", json_object_new_uint64(st->stats.nr_tried));
	json_object_object_add(j, "sz_tried", json_object_new_uint64(st->stats.sz_tried));
	json_object_object_add(j, "pages_tried", json_object_new_uint64(st->stats.sz_tried / pb));
	json_object_object_add(j, "nr_applied", json_object_new_uint64(st->stats.nr_applied));
	json_object_object_add(j, "sz_applied", json_object_new_uint64(st->stats.sz_applied));
	json_object_object_add(j, "pages_applied",
			       json_object_new_uint64(st->stats.sz_applied / pb));
	json_object_object_add(j, "qt_exceeds", json_object_new_uint64(st->stats.qt_exceeds));
	for (k = 0; k < NR_MR_CTL_FAILS; k++)
		json_object_object_add(f, mr_ctl_fail_name(k),
				       json_object_new_uint64(st->stats.failed_bytes[k]));
	json_object_object_add(j, "failed_bytes", f);
	return j;
}

json_object *mr_ctl_run_status_json(const struct mr_ctl_run *run)
{
	json_object *j = json_object_new_object(), *a;
	const struct mr_region *r;
	size_t i;

	json_object_object_add(j, "version", json_object_new_int(STATUS_VERSION));
	json_object_object_add(j, "pid", json_object_new_int((int)getpid()));
	{	/* with pid, what tells a running memregd from a stale file (evacuate) */
		char boot[64];

		if (mr_root_read_str("/proc/sys/kernel/random/boot_id", boot, sizeof(boot)))
			boot[0] = '\0';
		mr_clear_error();
		json_object_object_add(j, "boot_id", json_object_new_string(boot));
	}
	json_object_object_add(j, "running", json_object_new_boolean(!run->finished));
	json_object_object_add(j, "started_unix", json_object_new_uint64(run->started_unix));
	json_object_object_add(j, "engine", json_object_new_string(run->engine_name ?
			       run->engine_name : "user"));
	json_object_object_add(j, "backend", json_object_new_string(run->backend_name ?
			       run->backend_name : ""));
	json_object_object_add(j, "applied", json_object_new_boolean(run->act.apply));
	json_object_object_add(j, "target_pid", run->act.pid > 0 ?
			       json_object_new_int((int)run->act.pid) : NULL);
	if (run->targets) {
		/* the processes followed now, and over the run */
		a = json_object_new_array();
		for (i = 0; i < run->nr_live; i++)
			if (!run->live[i]->done)
				json_object_array_add(a, json_object_new_int(
						      (int)run->live[i]->member.pid));
		json_object_object_add(j, "target_pids", a);
		json_object_object_add(j, "targets_joined", json_object_new_uint64(run->nr_joined));
		json_object_object_add(j, "targets_left", json_object_new_uint64(run->nr_left));
	}
	json_object_object_add(j, "aggregations", json_object_new_uint64(run->nr_aggregations));
	json_object_object_add(j, "monitor_time_us", json_object_new_uint64(run->last_time_us));
	json_object_object_add(j, "cpu_seconds", json_object_new_double(cpu_seconds(run)));
	a = json_object_new_array();
	mr_for_each_region(run->map, r)
		if (region_targeted(run, r))
			json_object_array_add(a, json_object_new_int((int)r->id));
	json_object_object_add(j, "targeted_regions", a);
	if (run->evac.pid) {
		json_object *e = json_object_new_object();
		unsigned k;

		json_object_object_add(e, "pid", json_object_new_int64(run->evac.pid));
		json_object_object_add(e, "plan", json_object_new_string(run->evac.plan));
		a = json_object_new_array();
		for (k = 0; k < run->evac.nr_regions; k++)
			json_object_array_add(a, json_object_new_int((int)run->evac.regions[k]));
		json_object_object_add(e, "regions", a);
		json_object_object_add(j, "evacuation", e);
	} else {
		json_object_object_add(j, "evacuation", NULL);
	}
	a = json_object_new_array();
	for (i = 0; i < run->set->nr; i++)
		json_object_array_add(a, scheme_json(run, i));
	json_object_object_add(j, "schemes", a);
	a = json_object_new_array();
	mr_for_each_region(run->map, r) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "id", json_object_new_int((int)r->id));
		json_object_object_add(o, "node", json_object_new_int(r->node));
		json_object_object_add(o, "size_bytes", json_object_new_uint64(r->size_bytes));
		if (r->occ.granularity != MR_OCC_NONE) {
			json_object_object_add(o, "free_bytes",
					       json_object_new_uint64(r->occ.free_bytes));
			json_object_object_add(o, "movable_bytes",
					       json_object_new_uint64(r->occ.movable_bytes));
			json_object_object_add(o, "unmovable_bytes",
					       json_object_new_uint64(r->occ.unmovable_bytes));
		}
		json_object_array_add(a, o);
	}
	json_object_object_add(j, "regions", a);
	if (run->energy && !mr_energy_update(run->energy)) {
		unsigned k;

		a = json_object_new_array();
		for (k = 0; k < run->energy->nr_counters; k++) {
			const struct mr_energy_counter *c = &run->energy->counters[k];
			json_object *o = json_object_new_object();

			json_object_object_add(o, "socket", json_object_new_int(c->socket));
			json_object_object_add(o, "source",
					       json_object_new_string(run->energy->ops->name));
			json_object_object_add(o, "joules",
					       json_object_new_double(c->energy_uj / 1e6));
			json_object_array_add(a, o);
		}
		json_object_object_add(j, "energy", a);
	}
	return j;
}

void mr_ctl_run_print_stats(const struct mr_ctl_run *run, FILE *f)
{
	uint64_t pb = run->act.page_bytes ? run->act.page_bytes : 4096;
	size_t i;
	unsigned k;

	fprintf(f, "%s after %" PRIu64 " aggregation%s (%" PRIu64 ".%03" PRIu64 " s of "
		"monitoring, %s engine, %s backend)%s:\n",
		run->act.apply ? "statistics" : "dry run: statistics of what would be done",
		run->nr_aggregations, run->nr_aggregations == 1 ? "" : "s",
		run->last_time_us / 1000000, run->last_time_us / 1000 % 1000,
		run->engine_name ? run->engine_name : "user",
		run->backend_name ? run->backend_name : "?",
		run->act.apply ? "" : " (nothing changed: pass --apply to act)");
	for (i = 0; i < run->set->nr; i++) {
		const struct mr_scheme *s = &run->set->schemes[i];
		const struct mr_scheme_stats *st = &run->ctl.states[i].stats;
		char a[32], b[32], dest[64];

		fprintf(f, "scheme %zu (line %u) %s%s%s\n", i, s->line,
			mr_scheme_action_name(s->action), dest_text(run, s, dest, sizeof(dest)),
			run->ctl.states[i].active ? "" : " (inactive: watermarks)");
		fprintf(f, "  tried %" PRIu64 " regions, %s (%" PRIu64 " pages); applied %" PRIu64
			" regions, %s (%" PRIu64 " pages); quota exceeded %" PRIu64 " times\n",
			st->nr_tried, mr_format_size(st->sz_tried, a, sizeof(a)), st->sz_tried / pb,
			st->nr_applied, mr_format_size(st->sz_applied, b, sizeof(b)),
			st->sz_applied / pb, st->qt_exceeds);
		if (s->action == MR_SCHEME_STAT)
			continue;
		fprintf(f, "  not done:");
		for (k = 0; k < NR_MR_CTL_FAILS; k++)
			fprintf(f, "%s %s %s", k ? "," : "", mr_ctl_fail_name(k),
				mr_format_size(st->failed_bytes[k], a, sizeof(a)));
		fputc('\n', f);
	}
}

int mr_ctl_run_write_status(const struct mr_ctl_run *run, const char *path)
{
	json_object *j = mr_ctl_run_status_json(run);
	int err = write_status_json(j, path);

	json_object_put(j);
	return err;
}

static int write_status_json(json_object *j, const char *path)
{
	const char *text = json_object_to_json_string_ext(j, JSON_C_TO_STRING_PRETTY |
							 JSON_C_TO_STRING_NOSLASHESCAPE);
	char tmp[4096];
	FILE *f;
	int err = 0;

	/* readers (memregctl control status, evacuate) never see half a file */
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid()) >= sizeof(tmp))
		return mr_error(-ENAMETOOLONG, "%s: path too long", path);
	f = fopen(tmp, "w");
	if (!f)
		return mr_error(-errno, "%s: %s", tmp, strerror(errno));
	fprintf(f, "%s\n", text);
	if (fflush(f) || ferror(f))
		err = errno ? -errno : -EIO;
	if (fclose(f) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err) {
		unlink(tmp);
		return mr_error(err, "%s: %s", path, strerror(-err));
	}
	return 0;
}
