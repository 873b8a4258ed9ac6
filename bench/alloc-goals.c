/* alloc-goals: libmemreg against glibc on the runs bench/alloc-bench.sh saved, as
 * docs/allocator.md's goals read them: time and peak RSS as ratios of medians (the
 * script's tables) and round by round (each round ran both, one after the other:
 * mr_bench_paired_ratio), with the verdicts. The script runs it after its tables;
 * by hand it reprints them from a file ALLOC_BENCH_SAVE kept.
 *
 * A runs file has a line a run: "LABEL WORKLOAD SECONDS PEAK_KIB [KEY=VALUE ...]",
 * where a round=N field (the script writes it since f943ef5) says which round; without
 * it a line is its label's next round of that workload. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/stats.h"
#include "common/util.h"

#define MAX_WORKLOADS 64
#define MAX_ROUNDS 256
#define NAME_MAX_LEN 32

/* The goals of issue 11, as docs/allocator.md states them. */
#define GOAL_TIME 0.70		/* geomean of the time ratios, at most */
#define GOAL_RSS 1.00		/* geomean of the peak RSS ratios, at most */
#define GOAL_RSS_EACH 1.05	/* every workload's peak RSS ratio, at most */

/* One allocator's runs of one workload, by round. */
struct runs {
	double sec[MAX_ROUNDS];
	double kib[MAX_ROUNDS];
	bool ran[MAX_ROUNDS];
	unsigned next;		/* the round of a line without round=, less 1 */
};

struct workload {
	char name[NAME_MAX_LEN];
	struct runs side[2];	/* glibc, memreg */
};

static struct workload wl[MAX_WORKLOADS];
static unsigned nwl;

static struct workload *workload_of(const char *name, bool add)
{
	unsigned i;

	for (i = 0; i < nwl; i++)
		if (!strcmp(wl[i].name, name))
			return &wl[i];
	if (!add || nwl == MAX_WORKLOADS || strlen(name) >= NAME_MAX_LEN)
		return NULL;
	snprintf(wl[nwl].name, NAME_MAX_LEN, "%s", name);
	return &wl[nwl++];
}

/* Line @lineno of @path: a glibc or memreg run is recorded, others skipped. */
static int parse_line(char *line, const char *path, unsigned lineno)
{
	char *label = strtok(line, " \t\n"), *name = strtok(NULL, " \t\n");
	char *sec = strtok(NULL, " \t\n"), *kib = strtok(NULL, " \t\n"), *f, *end;
	struct workload *w;
	struct runs *r;
	unsigned long round = 0;
	double s, k;
	int side;

	if (!label)
		return 0;	/* an empty line */
	if (!strcmp(label, "glibc"))
		side = 0;
	else if (!strcmp(label, "memreg"))
		side = 1;
	else
		return 0;	/* a peer, or memreg+profile */
	if (!name || !sec || !kib)
		return mr_error(-EINVAL, "%s:%u: want LABEL WORKLOAD SECONDS PEAK_KIB", path, lineno);
	errno = 0;
	s = strtod(sec, &end);
	if (errno || *end || !(s >= 0))
		return mr_error(-EINVAL, "%s:%u: '%s' is not a time in seconds", path, lineno, sec);
	k = strtod(kib, &end);
	if (errno || *end || !(k >= 0))
		return mr_error(-EINVAL, "%s:%u: '%s' is not a peak RSS in KiB", path, lineno, kib);
	while ((f = strtok(NULL, " \t\n")))
		if (!strncmp(f, "round=", 6)) {
			uint64_t v;

			if (mr_parse_u64(f + 6, &v) || v < 1 || v > MAX_ROUNDS)
				return mr_error(-EINVAL, "%s:%u: '%s': a round from 1 to %u", path,
						lineno, f, MAX_ROUNDS);
			round = (unsigned long)v;
		}
	w = workload_of(name, true);
	if (!w)
		return mr_error(-EINVAL, "%s:%u: workload '%s': more than %u workloads, or a name "
				"of %u characters or more", path, lineno, name, MAX_WORKLOADS,
				NAME_MAX_LEN);
	r = &w->side[side];
	if (!round)
		round = r->next + 1;
	if (round > MAX_ROUNDS)
		return mr_error(-EINVAL, "%s:%u: more than %u rounds of %s", path, lineno,
				MAX_ROUNDS, name);
	if (r->ran[round - 1])
		return mr_error(-EINVAL, "%s:%u: %s has round %lu of %s twice", path, lineno, label,
				round, name);
	r->sec[round - 1] = s;
	r->kib[round - 1] = k;
	r->ran[round - 1] = true;
	r->next = (unsigned)round;
	return 0;
}

/* Lines of any length: runs saved before f943ef5 carry 85 KB of a program's output
 * on each line of git's runs. */
static int read_runs(const char *path)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	unsigned lineno = 0;
	int err = 0;

	if (!f)
		return mr_error(-errno, "%s: %s", path, strerror(errno));
	while (!err && getline(&line, &cap, f) >= 0)
		err = parse_line(line, path, ++lineno);
	free(line);
	fclose(f);
	return err;
}

/* One metric of one workload: the ratio of the medians, and the paired ratio. */
struct cell {
	double median;
	struct mr_bench_ratio paired;
};

/* Metric @kib (else seconds) of @w; false if glibc or memreg has no run of it. */
static bool cell_of(const struct workload *w, bool kib, struct cell *c)
{
	double g[MAX_ROUNDS], m[MAX_ROUNDS], pg[MAX_ROUNDS], pm[MAX_ROUNDS];
	unsigned i, ng = 0, nm = 0, np = 0;

	for (i = 0; i < MAX_ROUNDS; i++) {
		double a = kib ? w->side[0].kib[i] : w->side[0].sec[i];
		double b = kib ? w->side[1].kib[i] : w->side[1].sec[i];
		bool ran_a = w->side[0].ran[i], ran_b = w->side[1].ran[i];

		if (ran_a)
			g[ng++] = a;
		if (ran_b)
			m[nm++] = b;
		if (ran_a && ran_b) {
			pg[np] = a;
			pm[np++] = b;
		}
	}
	if (!ng || !nm)
		return false;
	g[0] = mr_bench_median(g, ng);
	m[0] = mr_bench_median(m, nm);
	c->median = g[0] > 0 ? m[0] / g[0] : NAN;
	if (!np || mr_bench_paired_ratio(pg, pm, np, &c->paired))
		c->paired.n = 0;
	return true;
}

static void print_cell(const struct cell *c)
{
	if (!c->paired.n)
		printf("  %6.3f  %6s %14s", c->median, "-", "");
	else if (!c->paired.has_interval)
		printf("  %6.3f  %6.3f %14s", c->median, c->paired.ratio, "");
	else
		printf("  %6.3f  %6.3f [%5.3f, %5.3f]", c->median, c->paired.ratio, c->paired.lo,
		       c->paired.hi);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: alloc-goals [--workloads \"NAME ...\"] RUNS_FILE\n"
		"libmemreg against glibc on the runs bench/alloc-bench.sh saved (ALLOC_BENCH_SAVE):\n"
		"time and peak RSS as ratios of the medians and round by round (geometric mean\n"
		"of the rounds' ratios, 95%% interval), and the goals of docs/allocator.md:\n"
		"geomean of time at most %.2f, of peak RSS at most %.2f, no workload's peak RSS\n"
		"above %.2f, no workload slower than glibc.\n"
		"  --workloads LIST  the workloads the goals are over, in this order (default:\n"
		"                    every workload of the file that both ran, in file order)\n"
		"  -h, --help        this text\n", GOAL_TIME, GOAL_RSS, GOAL_RSS_EACH);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "workloads", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *list = NULL;
	struct workload *sel[MAX_WORKLOADS];
	struct cell tc[MAX_WORKLOADS], rc[MAX_WORKLOADS];
	double lt = 0, lr = 0, pt = 0, pr = 0;
	unsigned n = 0, asked = 0, npt = 0, npr = 0, i;
	bool any, unclear;
	char part[64] = "";
	int c;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'w':
			list = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return 2;
	}
	if (read_runs(argv[optind])) {
		fprintf(stderr, "alloc-goals: %s\n", mr_last_error());
		return 1;
	}
	if (list) {
		char *copy = strdup(list), *tok, *save = NULL;

		for (tok = strtok_r(copy, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save)) {
			struct workload *w = workload_of(tok, false);

			asked++;
			if (w && n < MAX_WORKLOADS && cell_of(w, false, &tc[n]) && cell_of(w, true, &rc[n]))
				sel[n++] = w;
		}
		free(copy);
	} else {
		for (i = 0; i < nwl && n < MAX_WORKLOADS; i++)
			if (cell_of(&wl[i], false, &tc[n]) && cell_of(&wl[i], true, &rc[n]))
				sel[n++] = &wl[i];
		asked = n;
	}
	if (!n) {
		fprintf(stderr, "alloc-goals: %s: no workload with runs of both glibc and memreg\n",
			argv[optind]);
		return 1;
	}

	printf("Against the goals: memreg / glibc over %u of the %u workloads asked\n", n, asked);
	printf("(medians of each side's runs; paired: geometric mean of the rounds' ratios, 95%% interval)\n");
	printf("%-11s  %-30s  %s\n", "", "time", "peak RSS");
	printf("%-11s  %6s  %6s %-14s  %6s  %6s %s\n", "workload", "median", "paired",
	       "[95% interval]", "median", "paired", "[95% interval]");
	for (i = 0; i < n; i++) {
		printf("%-11s", sel[i]->name);
		print_cell(&tc[i]);
		print_cell(&rc[i]);
		printf("\n");
		lt += log(tc[i].median);
		lr += log(rc[i].median);
		if (tc[i].paired.n) {
			pt += log(tc[i].paired.ratio);
			npt++;
		}
		if (rc[i].paired.n) {
			pr += log(rc[i].paired.ratio);
			npr++;
		}
	}
	printf("%-11s  %6.3f  %6.3f %14s  %6.3f  %6.3f\n", "geomean", exp(lt / n),
	       npt ? exp(pt / npt) : NAN, "", exp(lr / n), npr ? exp(pr / npr) : NAN);

	/* a verdict over part of the list is that part's */
	if (n < asked)
		snprintf(part, sizeof(part), " (over %u of the %u workloads only)", n, asked);
	printf("- time geomean by medians %.3f, goal at most %.2f: %s%s\n", exp(lt / n), GOAL_TIME,
	       exp(lt / n) <= GOAL_TIME ? "met" : "missed", part);
	/* slower: shown when the paired interval lies above 1; a ratio above 1 whose
	 * interval reaches 1 (or that has none) shows nothing either way */
	printf("- no workload slower than glibc:");
	for (any = false, i = 0; i < n; i++)
		if (tc[i].paired.has_interval && tc[i].paired.lo > 1) {
			printf("%s %s %.3f [%.3f, %.3f]", any ? "," : " missed on", sel[i]->name,
			       tc[i].paired.ratio, tc[i].paired.lo, tc[i].paired.hi);
			any = true;
		}
	for (unclear = false, i = 0; i < n; i++)
		if ((tc[i].median > 1 || (tc[i].paired.n && tc[i].paired.ratio > 1)) &&
		    !(tc[i].paired.has_interval && tc[i].paired.lo > 1)) {
			printf("%s %s", unclear ? "," : any ? "; not shown either way on" :
				   " not shown either way on", sel[i]->name);
			unclear = true;
		}
	printf("%s\n", any || unclear ? "" : " no ratio above 1");
	printf("- peak RSS geomean by medians %.3f, goal at most %.2f: %s%s\n", exp(lr / n), GOAL_RSS,
	       exp(lr / n) <= GOAL_RSS ? "met" : "missed", part);
	printf("- no workload's peak RSS above %.2f by medians:", GOAL_RSS_EACH);
	for (any = false, i = 0; i < n; i++)
		if (rc[i].median > GOAL_RSS_EACH) {
			printf("%s %s %.3f", any ? "," : " missed on", sel[i]->name, rc[i].median);
			any = true;
		}
	printf("%s\n", any ? "" : " met");
	if (n < asked)
		printf("(%u asked had no runs of both: left out)\n", asked - n);
	return 0;
}
