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

static void log_actions(struct mr_ctl_run *run, uint64_t time_us)
{
	uint64_t pb = run->act.page_bytes;
	size_t i;

	for (i = 0; i < run->set->nr; i++) {
		const struct mr_scheme *s = &run->set->schemes[i];
		const struct mr_act_acct *a = &run->act.acct[i];
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
			fprintf(run->log, "%s%" PRIu64 ".%03" PRIu64 " s: scheme %zu (line %u) %s%s: "
				"%s %" PRIu64 " region%s, %s (%" PRIu64 " pages)", run->log_prefix,
				time_us / 1000000, time_us / 1000 % 1000, i, s->line,
				mr_scheme_action_name(s->action), dest_text(run, s, dest, sizeof(dest)),
				s->action == MR_SCHEME_STAT ? "matched" :
				run->act.apply ? "applied to" : "would apply to",
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

static void add_totals(struct mr_ctl_run *run)
{
	size_t i;
	unsigned k;

	for (i = 0; i < run->set->nr; i++) {
		const struct mr_act_acct *a = &run->act.acct[i];

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
static int join_mappings(struct mr_ctl_run *run, const struct mr_mon_target *t,
			 struct mr_mon_region **out, size_t *nr_out)
{
	struct mr_mapping *maps = NULL;
	size_t nr_maps = 0, m, i = 0, n = 0;
	int err;

	err = mr_proc_maps_read(t->pid, &maps, &nr_maps);
	if (err)
		return err;
	if (nr_maps > run->cap_joined) {
		struct mr_mon_region *j = realloc(run->joined, nr_maps * sizeof(*j));

		if (!j) {
			free(maps);
			return mr_error(-ENOMEM, "out of memory");
		}
		run->joined = j;
		run->cap_joined = nr_maps;
	}
	for (m = 0; m < nr_maps; m++) {
		struct mr_mon_region *j = &run->joined[n];
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
	*out = run->joined;
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

/* The engine's apply callback: the actions, and the range remembered (not stat's). */
static int run_apply(void *arg, const struct mr_scheme *s, uint64_t start, uint64_t end,
		     struct mr_ctl_result *res)
{
	struct mr_ctl_run *run = arg;
	int err = mr_act_apply(&run->act, s, start, end, res);

	if (err || s->action == MR_SCHEME_STAT)
		return err;
	if (run->nr_acted == MAX_ACTED) {
		memmove(run->acted, run->acted + 1, (MAX_ACTED - 1) * sizeof(*run->acted));
		run->nr_acted--;
	}
	if (run->nr_acted == run->cap_acted) {
		size_t cap = run->cap_acted ? run->cap_acted * 2 : 64;
		struct mr_ctl_acted *a = realloc(run->acted, cap * sizeof(*a));

		if (!a)
			return mr_error(-ENOMEM, "out of memory");
		run->acted = a;
		run->cap_acted = cap;
	}
	run->acted[run->nr_acted++] = (struct mr_ctl_acted){ start, end, run->now_us };
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
static int age_acted(struct mr_ctl_run *run, const struct mr_mon_target *t,
		     struct mr_mon_region **out, size_t *nr_out)
{
	uint64_t aggr_us = run->mon->attrs.aggr_us ? run->mon->attrs.aggr_us : 1;
	size_t i, k, n = 0, keep = 0;

	/* forget what is too old to matter */
	for (k = 0; k < run->nr_acted; k++)
		if (run->now_us - run->acted[k].time_us <= ACTED_KEEP_US &&
		    run->acted[k].time_us <= run->now_us)
			run->acted[keep++] = run->acted[k];
	run->nr_acted = keep;
	for (i = 0; i < t->nr_regions; i++) {
		const struct mr_mon_region *r = &t->regions[i];
		uint64_t cuts[2 * 64 + 2];
		size_t nc = 0, c;

		cuts[nc++] = r->start;
		for (k = 0; k < run->nr_acted && nc < MR_ARRAY_SIZE(cuts) - 2; k++) {
			const struct mr_ctl_acted *a = &run->acted[k];

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
			if (n == run->cap_aged) {
				size_t cap = run->cap_aged ? run->cap_aged * 2 : 256;
				struct mr_mon_region *a = realloc(run->aged, cap * sizeof(*a));

				if (!a)
					return mr_error(-ENOMEM, "out of memory");
				run->aged = a;
				run->cap_aged = cap;
			}
			p = &run->aged[n++];
			*p = *r;
			p->start = cuts[c];
			p->end = cuts[c + 1];
			p->sampling_addr = p->start;
			for (k = 0; k < run->nr_acted; k++) {
				const struct mr_ctl_acted *a = &run->acted[k];
				uint64_t age;

				if (a->start > p->start || a->end < p->end)
					continue;
				age = (run->now_us - a->time_us) / aggr_us;
				if (age < p->age)
					p->age = (uint32_t)age;
			}
		}
	}
	*out = run->aged;
	*nr_out = n;
	return 0;
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
	mr_act_acct_reset(&run->act);
	run->now_us = time_us;
	if (ctx->ops->snapshot) {
		struct mr_mon_region *aged = NULL;
		size_t nr_aged = 0;

		err = age_acted(run, &ctx->target, &aged, &nr_aged);
		if (!err)
			err = mr_ctl_aggregate(&run->ctl, aged, nr_aged, time_us);
	} else if (run->whole_mappings && ctx->target.kind == MR_MON_TARGET_PROCESS &&
	    ctx->target.pid > 0) {
		struct mr_mon_region *joined = NULL;
		size_t nr_joined = 0;

		err = join_mappings(run, &ctx->target, &joined, &nr_joined);
		if (err == -ESRCH)
			return 1;
		if (!err) {
			err = mr_ctl_aggregate(&run->ctl, joined, nr_joined, time_us);
			if (!err)
				split_ages(joined, nr_joined, &ctx->target);
		}
	} else {
		err = mr_ctl_aggregate(&run->ctl, ctx->target.regions, ctx->target.nr_regions,
				       time_us);
	}
	if (!err && run->classes)
		err = mr_ctl_classes_aggregate(run->classes, &ctx->attrs, ctx->target.regions,
					       ctx->target.nr_regions, ctx->aggr_nr_samples, time_us);
	if (err == -ESRCH)
		return 1;	/* the target ended while we acted on it */
	if (err) {
		run->err = err;
		return err;
	}
	run->nr_aggregations++;
	run->last_time_us = time_us;
	log_actions(run, time_us);
	add_totals(run);
	err = write_outputs(run);
	if (err)
		return run->err = err;
	if (run->duration_us && time_us >= run->duration_us)
		return 1;
	return 0;
}

int mr_ctl_run_start(struct mr_ctl_run *run, pid_t pid, bool phys, bool apply)
{
	int err;

	run->started_unix = (uint64_t)time(NULL);
	if (!run->log_prefix)
		run->log_prefix = "";
	err = mr_ctl_init(&run->ctl, run->set, &run->mon->attrs);
	if (err)
		return err;
	err = mr_act_ctx_init(&run->act, run->map, run->set, pid, phys, apply);
	if (err) {
		mr_ctl_destroy(&run->ctl);
		return err;
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

int mr_ctl_run(struct mr_ctl_run *run)
{
	int err;

	run->ctl.attrs = run->mon->attrs;	/* a replay's attrs are the record's */
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
	struct mr_ctl ctl;
	struct mr_act_ctx act;
	struct mr_ctl_run_scheme *per;
	int err;

	err = mr_ctl_init(&ctl, set, &run->mon->attrs);
	if (err)
		return err;
	err = mr_act_ctx_init(&act, run->map, set, run->act.pid, run->act.phys, run->act.apply);
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
	ctl.apply = run->ctl.apply;
	ctl.metric = run->ctl.metric;
	ctl.clock = run->ctl.clock;
	ctl.arg = run;
	mr_ctl_destroy(&run->ctl);
	mr_act_ctx_destroy(&run->act);
	free(run->per_scheme);
	run->ctl = ctl;
	run->act = act;
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
	free(run->joined);
	run->joined = NULL;
	run->cap_joined = 0;
	free(run->acted);
	run->acted = NULL;
	run->nr_acted = run->cap_acted = 0;
	free(run->aged);
	run->aged = NULL;
	run->cap_aged = 0;
	if (run->actions_log)
		json_object_put(run->actions_log);
	run->actions_log = NULL;
}

/* Regions a run acts on: those of the nodes it took pages from, and its migration
 * targets' (known from the start). memregctl evacuate refuses these. */
static bool region_targeted(const struct mr_ctl_run *run, const struct mr_region *r)
{
	size_t i;

	if (r->node < 0)
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
	json_object_object_add(j, "running", json_object_new_boolean(!run->finished));
	json_object_object_add(j, "started_unix", json_object_new_uint64(run->started_unix));
	json_object_object_add(j, "engine", json_object_new_string(run->engine_name ?
			       run->engine_name : "user"));
	json_object_object_add(j, "backend", json_object_new_string(run->backend_name ?
			       run->backend_name : ""));
	json_object_object_add(j, "applied", json_object_new_boolean(run->act.apply));
	json_object_object_add(j, "target_pid", run->act.pid > 0 ?
			       json_object_new_int((int)run->act.pid) : NULL);
	json_object_object_add(j, "aggregations", json_object_new_uint64(run->nr_aggregations));
	json_object_object_add(j, "monitor_time_us", json_object_new_uint64(run->last_time_us));
	json_object_object_add(j, "cpu_seconds", json_object_new_double(cpu_seconds(run)));
	a = json_object_new_array();
	mr_for_each_region(run->map, r)
		if (region_targeted(run, r))
			json_object_array_add(a, json_object_new_int((int)r->id));
	json_object_object_add(j, "targeted_regions", a);
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
