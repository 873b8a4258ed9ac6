/* The bench's outputs: kernbench's blocks, the DAMOS evaluation tables with 95%
 * intervals, JSON and CSV with every raw run, and an SVG report of bar charts. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <json-c/json.h>

#include "bench/run.h"
#include "common/util.h"
#include "monitor/record.h"
#include "monitor/report.h"

/* The kernbench block's metrics, in its order. */
static const enum mr_bench_metric kernbench_lines[] = {
	MR_BENCH_ELAPSED_S, MR_BENCH_USER_S, MR_BENCH_SYSTEM_S,
	MR_BENCH_CPU_PCT, MR_BENCH_INVOL_CSW, MR_BENCH_VOL_CSW,
};

static const char *wl_label(const struct mr_bench_workload *w)
{
	return w->label ? w->label : w->name;
}

void mr_bench_print_kernbench(FILE *f, const struct mr_bench *b)
{
	unsigned ci, wi, i;
	char line[256];

	for (ci = 0; ci < b->nr_configs; ci++) {
		const struct mr_bench_config *c = &b->configs[ci];

		fprintf(f, "%s%s%s%s\n", c->name, c->note ? " (" : "", c->note ? c->note : "",
			c->note ? "):" : ":");
		fprintf(f, "%s\n%s\n", b->date, b->kernel);
		if (b->context)
			fprintf(f, "%s\n", b->context);
		for (wi = 0; wi < b->nr_workloads; wi++) {
			fprintf(f, "Average %s Run (std deviation):\n", wl_label(&b->workloads[wi]));
			for (i = 0; i < MR_ARRAY_SIZE(kernbench_lines); i++) {
				enum mr_bench_metric m = kernbench_lines[i];
				struct mr_bench_summary s;

				mr_bench_summary_of(b, wi, ci, m, &s);
				/* kernbench's show_statistics says "No data" for no point */
				if (!s.n)
					snprintf(line, sizeof(line), "%s No data",
						 mr_bench_metric_info[m].kernbench);
				else
					mr_bench_kernbench_line(line, sizeof(line),
								mr_bench_metric_info[m].kernbench, &s);
				fprintf(f, "%s\n", line);
			}
			fprintf(f, "\n");
		}
	}
}

static bool metric_present(const struct mr_bench *b, enum mr_bench_metric m)
{
	unsigned k;

	for (k = 0; k < b->nr_runs; k++)
		if (!b->run[k].warmup && !isnan(b->run[k].m[m]))
			return true;
	return false;
}

static bool energy_modelled(const struct mr_bench *b)
{
	return strcmp(b->energy_source, "powercap") && strcmp(b->energy_source, "perf") &&
	       strcmp(b->energy_source, "msr");
}

static void print_interval(FILE *f, const char *cfg, const char *row,
			   const struct mr_bench_overhead *o)
{
	if (!o->has_interval) {
		fprintf(f, "  %s %s: %+.2f%% (no interval: fewer than 2 runs)\n", cfg, row, o->pct);
		return;
	}
	fprintf(f, "  %s %s: %+.2f%%, 95%% interval [%+.2f%%, %+.2f%%]%s\n", cfg, row, o->pct,
		o->lo_pct, o->hi_pct, o->distinguishable ? "" : " not distinguishable");
}

/*
 * Where a DRAM counter measured the energy (RAPL through powercap, perf or the MSRs)
 * and a physical record gave the model its residency (--phys), each configuration's
 * measured difference against the first, with its interval, beside the model's
 * prediction for the same runs: the check of the model that a server with RAPL allows.
 * Nothing without a counter (the energy table then says "model") or without --phys.
 */
static void print_energy_vs_model(FILE *f, const struct mr_bench *b)
{
	unsigned ci, wi;

	if (energy_modelled(b) || !metric_present(b, MR_BENCH_ENERGY_J))
		return;
	if (!metric_present(b, MR_BENCH_MODEL_ENERGY_J)) {
		fprintf(f, "DRAM energy measured by %s; no model prediction beside it: the "
			"model needs the residency of a physical record (--phys)\n\n",
			b->energy_source);
		return;
	}
	fprintf(f, "DRAM energy against %s, measured (%s) and as the model predicts it:\n",
		b->configs[0].name, b->energy_source);
	for (ci = 1; ci < b->nr_configs; ci++)
		for (wi = 0; wi <= b->nr_workloads; wi++) {
			const char *row = wi < b->nr_workloads ? b->workloads[wi].name : "total";
			struct mr_bench_summary base, s, mbase, ms;
			struct mr_bench_overhead o, mo;
			char measured[96], model[96];

			mr_bench_summary_of(b, wi, 0, MR_BENCH_ENERGY_J, &base);
			mr_bench_summary_of(b, wi, ci, MR_BENCH_ENERGY_J, &s);
			mr_bench_summary_of(b, wi, 0, MR_BENCH_MODEL_ENERGY_J, &mbase);
			mr_bench_summary_of(b, wi, ci, MR_BENCH_MODEL_ENERGY_J, &ms);
			if (mr_bench_overhead(&base, &s, &o))
				snprintf(measured, sizeof(measured), "no data");
			else if (!o.has_interval)
				snprintf(measured, sizeof(measured), "%+.2f%% (no interval)", o.pct);
			else
				snprintf(measured, sizeof(measured), "%+.2f%% [%+.2f%%, %+.2f%%]%s",
					 o.pct, o.lo_pct, o.hi_pct,
					 o.distinguishable ? "" : " not distinguishable");
			if (mr_bench_overhead(&mbase, &ms, &mo))
				snprintf(model, sizeof(model), "no data");
			else
				snprintf(model, sizeof(model), "%+.2f%%", mo.pct);
			fprintf(f, "  %s %s: measured %s; model %s\n", b->configs[ci].name, row,
				measured, model);
		}
	mr_clear_error();
	fprintf(f, "\n");
}

/*
 * Which regions held the workload's data, per workload and configuration: each
 * measured run's set (the last sample before it ended), the same sets counted once:
 *   regions holding the data (region ids; runs)
 *   stairs orig 0-3 (3 runs)  alloc 0-1 (2 runs), 0-2 (1 run)
 */
static void print_regions_held(FILE *f, const struct mr_bench *b)
{
	unsigned wi, ci, k, j;
	bool any = false;

	for (k = 0; k < b->nr_runs && !any; k++)
		any = !b->run[k].warmup && b->run[k].regions_held[0];
	if (!any)
		return;
	fprintf(f, "regions holding the data (region ids, the last sample of each run; runs)\n");
	for (wi = 0; wi < b->nr_workloads; wi++) {
		fprintf(f, "%s", b->workloads[wi].name);
		for (ci = 0; ci < b->nr_configs; ci++) {
			bool first = true;

			fprintf(f, " %s", b->configs[ci].name);
			for (k = 0; k < b->nr_runs; k++) {
				const struct mr_bench_run *r = &b->run[k];
				unsigned n = 0;

				if (r->warmup || r->workload != wi || r->config != ci)
					continue;
				/* counted at its first appearance only */
				for (j = 0; j < k; j++)
					if (!b->run[j].warmup && b->run[j].workload == wi &&
					    b->run[j].config == ci &&
					    !strcmp(b->run[j].regions_held, r->regions_held))
						break;
				if (j < k)
					continue;
				for (j = k; j < b->nr_runs; j++)
					n += !b->run[j].warmup && b->run[j].workload == wi &&
					     b->run[j].config == ci &&
					     !strcmp(b->run[j].regions_held, r->regions_held);
				fprintf(f, "%s%s (%u run%s)", first ? " " : ", ",
					r->regions_held[0] ? r->regions_held : "unknown", n,
					n == 1 ? "" : "s");
				first = false;
			}
			if (first)
				fprintf(f, " -");
		}
		fprintf(f, "\n");
	}
	fprintf(f, "\n");
}

/*
 * The access suite's table: per pattern, the monitor's overhead (rec's user+system
 * over orig's: the patterns run for fixed times, so the difference is the monitor's
 * CPU, also as % of one core over rec's elapsed) and its accuracy (the rec records'
 * median working-set size against the pattern's).
 */
static void print_access(FILE *f, const struct mr_bench *b)
{
	unsigned wi, ci, orig = b->nr_configs, rec = b->nr_configs;
	bool any = false;

	for (wi = 0; wi < b->nr_workloads; wi++)
		any = any || b->workloads[wi].wss_expect_mib > 0;
	for (ci = 0; ci < b->nr_configs; ci++) {
		if (b->configs[ci].kind == MR_BENCH_ORIG && orig == b->nr_configs)
			orig = ci;
		if (b->configs[ci].kind == MR_BENCH_REC && rec == b->nr_configs)
			rec = ci;
	}
	if (!any || orig == b->nr_configs || rec == b->nr_configs)
		return;
	fprintf(f, "access: monitor overhead and accuracy (%s against %s; wss: a region "
		"counted when accessed in >= 3 samples of an aggregation)\n",
		b->configs[rec].name, b->configs[orig].name);
	fprintf(f, "pattern cpu_s(%s) cpu_s(%s) monitor_cpu_s monitor_%%_of_a_core "
		"wss_p50_mib expected_mib\n", b->configs[orig].name, b->configs[rec].name);
	for (wi = 0; wi < b->nr_workloads; wi++) {
		struct mr_bench_summary o, r, e, w;

		if (b->workloads[wi].wss_expect_mib <= 0)
			continue;
		mr_bench_summary_of(b, wi, orig, MR_BENCH_CPU_S, &o);
		mr_bench_summary_of(b, wi, rec, MR_BENCH_CPU_S, &r);
		mr_bench_summary_of(b, wi, rec, MR_BENCH_ELAPSED_S, &e);
		mr_bench_summary_of(b, wi, rec, MR_BENCH_WSS_P50_MIB, &w);
		fprintf(f, "%s", b->workloads[wi].name);
		if (o.n && r.n && e.n && e.mean > 0)
			fprintf(f, " %.3f %.3f %.3f %.2f", o.mean, r.mean, r.mean - o.mean,
				100 * (r.mean - o.mean) / e.mean);
		else
			fprintf(f, " - - - -");
		if (w.n)
			fprintf(f, " %.3f (%.2f)", w.mean, w.stddev);
		else
			fprintf(f, " -");
		fprintf(f, " %.0f\n", b->workloads[wi].wss_expect_mib);
	}
	fprintf(f, "\n");
}

void mr_bench_print_tables(FILE *f, const struct mr_bench *b)
{
	unsigned m, ci, wi;

	fprintf(f, "%s: runs per configuration and workload %u, interleaved; "
		"warm-up rounds %u\n", b->title ? b->title : "memregctl bench", b->runs,
		b->warmup);
	if (b->context)
		fprintf(f, "%s\n", b->context);
	if (b->nr_runs < b->nr_planned)
		fprintf(f, "Incomplete: %u of %u runs (warm-ups included) done so far.\n",
			b->nr_runs, b->nr_planned);
	fprintf(f, "Means of the runs; every configuration but the first shows its overhead "
		"against %s in %% in parentheses.\n\n", b->configs[0].name);
	for (m = 0; m < NR_MR_BENCH_METRICS; m++) {
		if (!metric_present(b, m))
			continue;
		fprintf(f, "%s", mr_bench_metric_info[m].key);
		if (m == MR_BENCH_ENERGY_J)
			fprintf(f, " (%s)", energy_modelled(b) ? "model" : b->energy_source);
		for (ci = 0; ci < b->nr_configs; ci++)
			fprintf(f, " %s%s", b->configs[ci].name, ci ? " (overhead)" : "");
		fprintf(f, "\n");
		for (wi = 0; wi <= b->nr_workloads; wi++) {
			struct mr_bench_summary base;

			mr_bench_summary_of(b, wi, 0, m, &base);
			fprintf(f, "%s", wi < b->nr_workloads ? b->workloads[wi].name : "total");
			for (ci = 0; ci < b->nr_configs; ci++) {
				struct mr_bench_summary s;
				struct mr_bench_overhead o;
				char cell[128];

				mr_bench_summary_of(b, wi, ci, m, &s);
				if (!s.n) {
					fprintf(f, " -");
					continue;
				}
				if (ci && mr_bench_overhead(&base, &s, &o) == 0)
					mr_bench_damos_cell(cell, sizeof(cell), s.mean, &o.pct);
				else if (ci)
					snprintf(cell, sizeof(cell), "%.3f (-)", s.mean);
				else
					mr_bench_damos_cell(cell, sizeof(cell), s.mean, NULL);
				fprintf(f, " %s", cell);
			}
			fprintf(f, "\n");
		}
		for (ci = 1; ci < b->nr_configs; ci++)
			for (wi = 0; wi <= b->nr_workloads; wi++) {
				struct mr_bench_summary base, s;
				struct mr_bench_overhead o;

				mr_bench_summary_of(b, wi, 0, m, &base);
				mr_bench_summary_of(b, wi, ci, m, &s);
				if (mr_bench_overhead(&base, &s, &o) == 0)
					print_interval(f, b->configs[ci].name,
						       wi < b->nr_workloads ? b->workloads[wi].name :
						       "total", &o);
			}
		fprintf(f, "\n");
	}
	print_energy_vs_model(f, b);
	print_regions_held(f, b);
	print_access(f, b);
	if (b->nr_notes) {
		unsigned i;

		fprintf(f, "Notes:\n");
		if (b->energy_source[0])
			fprintf(f, "  DRAM energy: %s%s%s%s\n", b->energy_source,
				energy_modelled(b) && !b->together ? " (no RAPL DRAM counter here)" : "",
				b->energy_detail[0] ? ": " : "", b->energy_detail);
		for (i = 0; i < b->nr_notes; i++)
			fprintf(f, "  %s\n", b->notes[i]);
	}
}

/* evac's fields belong to its runs only (other runs' are not set) */
static bool evac_run(const struct mr_bench *b, const struct mr_bench_run *r)
{
	return b->configs[r->config].kind == MR_BENCH_EVAC;
}

static struct json_object *num(double v)
{
	return isnan(v) || isinf(v) ? NULL : json_object_new_double(v);
}

static struct json_object *str(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

char *mr_bench_json(const struct mr_bench *b)
{
	struct json_object *root = json_object_new_object(), *a, *o;
	unsigned i, j, k, m;
	char *text;

	json_object_object_add(root, "version", json_object_new_int(1));
	json_object_object_add(root, "title", str(b->title ? b->title : "memregctl bench"));
	json_object_object_add(root, "date", str(b->date));
	json_object_object_add(root, "kernel", str(b->kernel));
	json_object_object_add(root, "context", str(b->context));
	json_object_object_add(root, "runs_per_config", json_object_new_int((int)b->runs));
	json_object_object_add(root, "warmup_rounds", json_object_new_int((int)b->warmup));
	json_object_object_add(root, "together", json_object_new_boolean(b->together));
	json_object_object_add(root, "runs_planned", json_object_new_int((int)b->nr_planned));
	json_object_object_add(root, "complete", json_object_new_boolean(b->nr_runs == b->nr_planned));
	json_object_object_add(root, "energy_source", str(b->energy_source));
	json_object_object_add(root, "energy_measured",
			       json_object_new_boolean(!energy_modelled(b)));
	json_object_object_add(root, "energy_detail", str(b->energy_detail));
	a = json_object_new_array();
	for (i = 0; i < b->nr_configs; i++) {
		const struct mr_bench_config *c = &b->configs[i];
		struct json_object *env = json_object_new_array();

		o = json_object_new_object();
		json_object_object_add(o, "name", str(c->name));
		json_object_object_add(o, "note", str(c->note));
		for (j = 0; j < c->nr_env; j++)
			json_object_array_add(env, str(c->env[j]));
		json_object_object_add(o, "env", env);
		json_object_object_add(o, "preload", str(c->preload));
		json_object_object_add(o, "setup", str(c->setup));
		json_object_object_add(o, "teardown", str(c->teardown));
		json_object_object_add(o, "schemes", str(c->schemes));
		json_object_object_add(o, "backend", str(c->backend));
		json_object_object_add(o, "plan", str(c->plan));
		json_object_array_add(a, o);
	}
	json_object_object_add(root, "configs", a);
	a = json_object_new_array();
	for (i = 0; i < b->nr_workloads; i++) {
		const struct mr_bench_workload *w = &b->workloads[i];

		o = json_object_new_object();
		json_object_object_add(o, "name", str(w->name));
		json_object_object_add(o, "label", str(wl_label(w)));
		json_object_object_add(o, "command", str(w->cmd));
		json_object_object_add(o, "prepare", str(w->prepare));
		json_object_object_add(o, "dir", str(w->dir));
		json_object_object_add(o, "profile", str(w->profile));
		json_object_array_add(a, o);
	}
	json_object_object_add(root, "workloads", a);
	for (j = 0; j < 2; j++) {
		a = json_object_new_array();
		for (k = 0; k < b->nr_runs; k++) {
			const struct mr_bench_run *r = &b->run[k];

			if (r->warmup != (j == 1))
				continue;
			o = json_object_new_object();
			json_object_object_add(o, "order", json_object_new_int((int)r->order));
			json_object_object_add(o, "round", json_object_new_int((int)r->round));
			json_object_object_add(o, "workload", str(b->workloads[r->workload].name));
			json_object_object_add(o, "config", str(b->configs[r->config].name));
			json_object_object_add(o, "start_unix_s", num(r->start_unix_s));
			json_object_object_add(o, "exit_status", json_object_new_int(r->exit_status));
			json_object_object_add(o, "setup_s", num(r->setup_s));
			json_object_object_add(o, "teardown_s", num(r->teardown_s));
			json_object_object_add(o, "regions_held", str(r->regions_held[0] ?
								     r->regions_held : NULL));
			json_object_object_add(o, "observed", str(r->observed[0] ? r->observed :
								 NULL));
			json_object_object_add(o, "evac_bytes_moved",
					       evac_run(b, r) ? num(r->evac_bytes) : NULL);
			json_object_object_add(o, "evac_s", evac_run(b, r) ? num(r->evac_s) : NULL);
			for (m = 0; m < NR_MR_BENCH_METRICS; m++)
				json_object_object_add(o, mr_bench_metric_info[m].key, num(r->m[m]));
			json_object_array_add(a, o);
		}
		json_object_object_add(root, j ? "warmups" : "runs", a);
	}
	a = json_object_new_array();
	for (i = 0; i <= b->nr_workloads; i++)
		for (j = 0; j < b->nr_configs; j++) {
			struct json_object *ms = json_object_new_object();

			o = json_object_new_object();
			json_object_object_add(o, "workload",
					       str(i < b->nr_workloads ? b->workloads[i].name : "total"));
			json_object_object_add(o, "config", str(b->configs[j].name));
			for (m = 0; m < NR_MR_BENCH_METRICS; m++) {
				struct mr_bench_summary base, s;
				struct mr_bench_overhead ov;
				struct json_object *mo;

				mr_bench_summary_of(b, i, j, m, &s);
				if (!s.n)
					continue;
				mo = json_object_new_object();
				json_object_object_add(mo, "n", json_object_new_int((int)s.n));
				json_object_object_add(mo, "mean", num(s.mean));
				json_object_object_add(mo, "stddev", num(s.stddev));
				mr_bench_summary_of(b, i, 0, m, &base);
				if (j && mr_bench_overhead(&base, &s, &ov) == 0) {
					json_object_object_add(mo, "overhead_pct", num(ov.pct));
					if (ov.has_interval) {
						json_object_object_add(mo, "overhead_lo_pct", num(ov.lo_pct));
						json_object_object_add(mo, "overhead_hi_pct", num(ov.hi_pct));
					}
					json_object_object_add(mo, "distinguishable",
							       json_object_new_boolean(ov.distinguishable));
				}
				json_object_object_add(ms, mr_bench_metric_info[m].key, mo);
			}
			json_object_object_add(o, "metrics", ms);
			json_object_array_add(a, o);
		}
	json_object_object_add(root, "summary", a);
	a = json_object_new_array();
	for (i = 0; i < b->nr_notes; i++)
		json_object_array_add(a, str(b->notes[i]));
	json_object_object_add(root, "notes", a);
	text = strdup(json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
						     JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(root);
	return text;
}

/* A CSV field: quoted when it holds a comma, a quote or a newline. */
static void csv_field(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\n")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

void mr_bench_print_csv(FILE *f, const struct mr_bench *b)
{
	unsigned k, m;

	fprintf(f, "order,round,warmup,workload,config,start_unix_s,exit_status,setup_s,teardown_s");
	for (m = 0; m < NR_MR_BENCH_METRICS; m++)
		fprintf(f, ",%s", mr_bench_metric_info[m].key);
	fprintf(f, ",regions_held,evac_bytes_moved,evac_s,observed\n");
	for (k = 0; k < b->nr_runs; k++) {
		const struct mr_bench_run *r = &b->run[k];

		fprintf(f, "%u,%u,%d,", r->order, r->round, r->warmup);
		csv_field(f, b->workloads[r->workload].name);
		fputc(',', f);
		csv_field(f, b->configs[r->config].name);
		fprintf(f, ",%.6f,%d,", r->start_unix_s, r->exit_status);
		if (!isnan(r->setup_s))
			fprintf(f, "%.6f", r->setup_s);
		fputc(',', f);
		if (!isnan(r->teardown_s))
			fprintf(f, "%.6f", r->teardown_s);
		for (m = 0; m < NR_MR_BENCH_METRICS; m++) {
			fputc(',', f);
			if (!isnan(r->m[m]))
				fprintf(f, "%.6f", r->m[m]);
		}
		fputc(',', f);
		csv_field(f, r->regions_held);
		fputc(',', f);
		if (evac_run(b, r) && !isnan(r->evac_bytes))
			fprintf(f, "%.0f", r->evac_bytes);
		fputc(',', f);
		if (evac_run(b, r) && !isnan(r->evac_s))
			fprintf(f, "%.6f", r->evac_s);
		fputc(',', f);
		csv_field(f, r->observed);
		fprintf(f, "\n");
	}
}

static void xml_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}

static const char *const colors[] = {
	"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#9c755f",
};

#define SVG_W		760
#define SVG_CHART_H	250
#define SVG_PLOT_TOP	40
#define SVG_PLOT_H	150
#define SVG_LEFT	80

/* One bar chart: a group per workload (and total), a bar per configuration, the
 * mean with an error bar of one standard deviation each side. */
static void svg_chart(FILE *f, const struct mr_bench *b, enum mr_bench_metric m, double y0)
{
	unsigned groups = b->nr_workloads + (b->nr_workloads > 1), g, ci;
	double top = 0, plot_w = SVG_W - SVG_LEFT - 20, group_w = plot_w / groups;
	double bar_w = group_w * 0.8 / b->nr_configs;

	for (g = 0; g < groups; g++)
		for (ci = 0; ci < b->nr_configs; ci++) {
			struct mr_bench_summary s;

			mr_bench_summary_of(b, g, ci, m, &s);
			if (s.n && s.mean + s.stddev > top)
				top = s.mean + s.stddev;
		}
	if (top <= 0)
		top = 1;
	top *= 1.1;
	fprintf(f, "<g transform=\"translate(0,%.0f)\">\n", y0);
	fprintf(f, "<text x=\"%d\" y=\"20\" font-size=\"14\" font-weight=\"bold\">", SVG_LEFT);
	xml_text(f, mr_bench_metric_info[m].title);
	if (m == MR_BENCH_ENERGY_J)
		fprintf(f, ", %s", energy_modelled(b) ? "model" : b->energy_source);
	fprintf(f, " (mean, error bar: one standard deviation)</text>\n");
	fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n",
		SVG_LEFT, SVG_PLOT_TOP, SVG_LEFT, SVG_PLOT_TOP + SVG_PLOT_H);
	fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n",
		SVG_LEFT, SVG_PLOT_TOP + SVG_PLOT_H, SVG_W - 20, SVG_PLOT_TOP + SVG_PLOT_H);
	fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"10\" text-anchor=\"end\">%.4g</text>\n",
		SVG_LEFT - 4, SVG_PLOT_TOP + 4, top);
	fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"10\" text-anchor=\"end\">0</text>\n",
		SVG_LEFT - 4, SVG_PLOT_TOP + SVG_PLOT_H);
	for (g = 0; g < groups; g++) {
		double gx = SVG_LEFT + g * group_w + group_w * 0.1;

		for (ci = 0; ci < b->nr_configs; ci++) {
			struct mr_bench_summary s;
			double x = gx + ci * bar_w, h, y, e_lo, e_hi;

			mr_bench_summary_of(b, g, ci, m, &s);
			if (!s.n)
				continue;
			h = s.mean / top * SVG_PLOT_H;
			y = SVG_PLOT_TOP + SVG_PLOT_H - h;
			fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
				"fill=\"%s\"><title>", x, y, bar_w * 0.9, h,
				colors[ci % MR_ARRAY_SIZE(colors)]);
			xml_text(f, b->configs[ci].name);
			fprintf(f, ": %.6g (%.6g)</title></rect>\n", s.mean, s.stddev);
			e_lo = SVG_PLOT_TOP + SVG_PLOT_H - (s.mean - s.stddev) / top * SVG_PLOT_H;
			e_hi = SVG_PLOT_TOP + SVG_PLOT_H - (s.mean + s.stddev) / top * SVG_PLOT_H;
			x += bar_w * 0.45;
			fprintf(f, "<path d=\"M%.1f %.1fV%.1fM%.1f %.1fH%.1fM%.1f %.1fH%.1f\" "
				"stroke=\"black\"/>\n", x, e_lo, e_hi, x - 3, e_lo, x + 3,
				x - 3, e_hi, x + 3);
			fprintf(f, "<text class=\"config\" x=\"%.1f\" y=\"%d\" font-size=\"9\" "
				"text-anchor=\"middle\">", x, SVG_PLOT_TOP + SVG_PLOT_H + 12);
			xml_text(f, b->configs[ci].name);
			fprintf(f, "</text>\n");
		}
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\">",
			gx + group_w * 0.4, SVG_PLOT_TOP + SVG_PLOT_H + 28);
		xml_text(f, g < b->nr_workloads ? b->workloads[g].name : "total");
		fprintf(f, "</text>\n");
	}
	fprintf(f, "</g>\n");
}

/* report.svg: every metric's chart (@only == NR_MR_BENCH_METRICS), or one metric's
 * chart alone (chart-KEY.svg, small enough for a README). */
static int write_svg(const struct mr_bench *b, const char *path, unsigned only)
{
	unsigned m, nr = 0, ci;
	FILE *f;

	for (m = 0; m < NR_MR_BENCH_METRICS; m++)
		nr += metric_present(b, m) && (only == NR_MR_BENCH_METRICS || m == only);
	f = fopen(path, "w");
	if (!f)
		return mr_error(-errno, "%s", path);
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"font-family=\"sans-serif\">\n", SVG_W, 60 + nr * SVG_CHART_H);
	fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
	fprintf(f, "<text x=\"10\" y=\"20\" font-size=\"15\" font-weight=\"bold\">");
	xml_text(f, b->title ? b->title : "memregctl bench");
	fprintf(f, ": runs per configuration %u, Linux %s</text>\n", b->runs, b->kernel);
	/* The legend: one swatch per configuration. */
	for (ci = 0; ci < b->nr_configs; ci++) {
		fprintf(f, "<rect x=\"%u\" y=\"32\" width=\"10\" height=\"10\" fill=\"%s\"/>"
			"<text class=\"legend\" x=\"%u\" y=\"41\" font-size=\"11\">", 10 + ci * 150,
			colors[ci % MR_ARRAY_SIZE(colors)], 24 + ci * 150);
		xml_text(f, b->configs[ci].name);
		fprintf(f, "</text>\n");
	}
	nr = 0;
	for (m = 0; m < NR_MR_BENCH_METRICS; m++)
		if (metric_present(b, m) && (only == NR_MR_BENCH_METRICS || m == only))
			svg_chart(f, b, m, 50 + (nr++) * SVG_CHART_H);
	fprintf(f, "</svg>\n");
	if (ferror(f) | fclose(f))
		return mr_error(-EIO, "%s: write error", path);
	return 0;
}

static FILE *open_out(const char *dir, const char *name, char *path, size_t len)
{
	FILE *f;

	snprintf(path, len, "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		mr_error(-errno, "%s", path);
	return f;
}

static int close_out(FILE *f, const char *path)
{
	if (ferror(f) | fclose(f))
		return mr_error(-EIO, "%s: write error", path);
	return 0;
}

/* Heatmaps in the report: a rec run's records (per process under --cgroup) and a run's
 * physical record (--phys), at most this many per run, the largest records first. */
#define HEATMAPS_PER_RUN 8u
#define HEATMAP_W 200u
#define HEATMAP_H 100u

/* One record's heatmap as DIR/@svg, shown in @html under @title. */
static void heatmap_one(FILE *html, const char *dir, const char *recpath, const char *svg,
			const char *title)
{
	struct mr_heatmap hm;
	struct mr_rec rec;
	char path[4096];
	FILE *f;
	int err;

	mr_clear_error();
	err = mr_rec_load(recpath, &rec);
	if (!err) {
		err = mr_heatmap_build(&rec, HEATMAP_W, HEATMAP_H, &hm);
		if (!err) {
			snprintf(path, sizeof(path), "%s/%s", dir, svg);
			f = fopen(path, "w");
			if (!f)
				err = mr_error(-errno, "%s", path);
			else if (!(err = mr_heatmap_write_svg(&hm, title, f)))
				err = close_out(f, path);
			else
				fclose(f);
			mr_heatmap_free(&hm);
		}
		mr_rec_free(&rec);
	}
	if (err) {
		fprintf(html, "<p>");
		xml_text(html, title);
		fprintf(html, ": no heatmap: ");
		xml_text(html, mr_last_error());
		fprintf(html, "</p>\n");
	} else {
		fprintf(html, "<figure><img src=\"%s\" alt=\"heatmap\"><figcaption>", svg);
		xml_text(html, title);
		fprintf(html, "</figcaption></figure>\n");
	}
	mr_clear_error();
}

struct rec_file {
	char name[256];
	off_t bytes;
};

static int larger_first(const void *a, const void *b)
{
	const struct rec_file *x = a, *y = b;

	return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : strcmp(x->name, y->name);
}

/* A cgroup run's directory of records (PID.rec): the largest HEATMAPS_PER_RUN. */
static void heatmaps_of_dir(FILE *html, const struct mr_bench *b,
			    const struct mr_bench_run *r, const char *dir, const char *recdir)
{
	struct rec_file *files = NULL, *grown;
	size_t nr = 0, cap = 0, i;
	struct dirent *de;
	struct stat st;
	char path[4096], svg[300], title[400], pid[256];
	DIR *d = opendir(recdir);

	if (!d)
		return;
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);

		if (n < 5 || n >= sizeof(files->name) || strcmp(de->d_name + n - 4, ".rec"))
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, 0) < 0)
			continue;
		if (nr == cap) {
			cap = cap ? 2 * cap : 16;
			grown = realloc(files, cap * sizeof(*files));
			if (!grown)
				break;
			files = grown;
		}
		snprintf(files[nr].name, sizeof(files[nr].name), "%s", de->d_name);
		files[nr++].bytes = st.st_size;
	}
	closedir(d);
	qsort(files, nr, sizeof(*files), larger_first);
	for (i = 0; i < nr && i < HEATMAPS_PER_RUN; i++) {
		snprintf(pid, sizeof(pid), "%.*s", (int)strlen(files[i].name) - 4, files[i].name);
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", recdir, files[i].name) >=
		    sizeof(path))
			continue;
		snprintf(svg, sizeof(svg), "heatmap-%s-%u-%u-%s.svg", b->configs[r->config].name,
			 r->workload, r->order, pid);
		snprintf(title, sizeof(title), "%s, %s, run %u: process %s",
			 b->configs[r->config].name, b->workloads[r->workload].name, r->order, pid);
		heatmap_one(html, dir, path, svg, title);
	}
	if (nr > HEATMAPS_PER_RUN)
		fprintf(html, "<p>%zu more records of this run (smaller) in rec-%u-%u.d</p>\n",
			nr - HEATMAPS_PER_RUN, r->workload, r->order);
	free(files);
}

/* The heatmaps section of report.html: every measured run that left a record in @dir
 * (bench keeps them there with -o): rec's (of the top process, or of every process
 * of its cgroup) and the physical record beside a run (--phys). */
static void write_heatmaps(FILE *html, const struct mr_bench *b, const char *dir)
{
	char path[4096], svg[300], title[400];
	bool head = false;
	unsigned k, pass;
	struct stat st;

	for (k = 0; k < b->nr_runs; k++) {
		const struct mr_bench_run *r = &b->run[k];
		const char *cfg = b->configs[r->config].name, *wl = b->workloads[r->workload].name;

		if (r->warmup)
			continue;
		for (pass = 0; pass < 3; pass++) {
			if (pass < 2 && b->configs[r->config].kind != MR_BENCH_REC)
				continue;
			snprintf(path, sizeof(path), pass == 0 ? "%s/rec-%u-%u.rec" :
				 pass == 1 ? "%s/rec-%u-%u.d" : "%s/phys-%u-%u.rec", dir,
				 r->workload, r->order);
			if (stat(path, &st) < 0)
				continue;
			if (!head) {
				fprintf(html, "<h2>Heatmaps</h2>\n<p>Access frequency, time across, "
					"address down (memregctl report heatmap).</p>\n");
				head = true;
			}
			if (pass == 1) {
				heatmaps_of_dir(html, b, r, dir, path);
				continue;
			}
			snprintf(svg, sizeof(svg), "heatmap-%s-%u-%u%s.svg", cfg, r->workload,
				 r->order, pass == 2 ? "-phys" : "");
			snprintf(title, sizeof(title), "%s, %s, run %u: %s", cfg, wl, r->order,
				 pass == 2 ? "physical memory" : "the top process");
			heatmap_one(html, dir, path, svg, title);
		}
	}
}

int mr_bench_write_report(const struct mr_bench *b, const char *dir)
{
	unsigned m;
	char path[4096];
	char *json;
	FILE *f;
	int ret;

	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return mr_error(-errno, "%s", dir);
	f = open_out(dir, "bench.txt", path, sizeof(path));
	if (!f)
		return -EIO;
	mr_bench_print_kernbench(f, b);
	mr_bench_print_tables(f, b);
	if ((ret = close_out(f, path)))
		return ret;
	json = mr_bench_json(b);
	f = open_out(dir, "bench.json", path, sizeof(path));
	if (!f) {
		free(json);
		return -EIO;
	}
	fprintf(f, "%s\n", json ? json : "null");
	free(json);
	if ((ret = close_out(f, path)))
		return ret;
	f = open_out(dir, "runs.csv", path, sizeof(path));
	if (!f)
		return -EIO;
	mr_bench_print_csv(f, b);
	if ((ret = close_out(f, path)))
		return ret;
	snprintf(path, sizeof(path), "%s/report.svg", dir);
	if ((ret = write_svg(b, path, NR_MR_BENCH_METRICS)))
		return ret;
	for (m = 0; m < NR_MR_BENCH_METRICS; m++) {
		if (!metric_present(b, m))
			continue;
		snprintf(path, sizeof(path), "%s/chart-%s.svg", dir, mr_bench_metric_info[m].key);
		if ((ret = write_svg(b, path, m)))
			return ret;
	}
	f = open_out(dir, "report.html", path, sizeof(path));
	if (!f)
		return -EIO;
	fprintf(f, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>");
	xml_text(f, b->title ? b->title : "memregctl bench");
	fprintf(f, "</title></head><body>\n<img src=\"report.svg\" alt=\"bar charts\">\n<pre>\n");
	{
		/* The tables, escaped, through a memory stream. */
		char *buf = NULL;
		size_t len = 0;
		FILE *mem = open_memstream(&buf, &len);

		if (mem) {
			mr_bench_print_kernbench(mem, b);
			mr_bench_print_tables(mem, b);
			fclose(mem);
			xml_text(f, buf ? buf : "");
			free(buf);
		}
	}
	fprintf(f, "</pre>\n");
	write_heatmaps(f, b, dir);
	fprintf(f, "<p>Raw runs: <a href=\"bench.json\">bench.json</a>, "
		"<a href=\"runs.csv\">runs.csv</a>.</p>\n</body></html>\n");
	return close_out(f, path);
}
