/* memregctl bench: run a workload (or a suite) under several configurations,
 * interleaved, and print kernbench's blocks and the DAMOS evaluation tables. */
#include "config.h"

#include <errno.h>
#include <ftw.h>
#include <sys/stat.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/run.h"
#include "tools/cli.h"

static void usage(FILE *f)
{
	fprintf(f,
"Usage: memregctl bench [OPTIONS] -- WORKLOAD [ARG...]\n"
"       memregctl bench --suite NAME [OPTIONS]\n"
"       memregctl bench --bench-file FILE [OPTIONS]\n"
"Run WORKLOAD (one argument: a shell command; several: a command and its\n"
"arguments) under each configuration, RUNS times each, interleaved (ABBAAB...)\n"
"after WARMUP warm-up rounds, and print kernbench's block per configuration\n"
"(\"Average ... Run (std deviation):\", \"Elapsed Time 574.66 (2.31846)\" ...),\n"
"then one table per metric in the DAMOS evaluation layout: workloads down,\n"
"configurations across, the overhead against the first configuration in %%\n"
"in parentheses, a total row, and each overhead's 95%% interval (\"not\n"
"distinguishable\" when it spans 0). The workloads' output goes to a log.\n"
"\n"
"Configurations: orig (as it is), alloc (libmemreg.so preloaded),\n"
"alloc+profile (libmemreg.so with a profile learned in a training run apart\n"
"from the measured ones), rec (under memregctl record), control (under\n"
"memregctl control with --schemes): with --apply each run of these two in a\n"
"fresh cgroup v2 whose every process is observed, else the top process only;\n"
"evac (memregctl evacuate --apply of --plan before each run, --undo after,\n"
"timed apart; needs --apply: the VM lab), and any a bench file defines.\n"
"Suites: kernbench, alloc, access.\n"
"Each run also says which regions hold the workload's data (its processes'\n"
"pages by region, sampled while it runs); with --phys, the share of\n"
"region-time in low power from a physical record and the model's energy.\n"
"\n"
"  -c, --configs LIST  configurations, comma-separated (default orig,alloc and\n"
"                      the bench file's; a suite has its own)\n"
"  -f, --bench-file FILE  configurations and workloads (memregctl-bench(1))\n"
"  -s, --suite NAME    kernbench, alloc or access (hansen boots the VM lab:\n"
"                      bench/hansen.sh in a source tree)\n"
"  -n, --name NAME     WORKLOAD's row name (default: its first word's basename)\n"
"  -r, --runs N        measured runs per configuration (default 5)\n"
"  -w, --warmup N      warm-up rounds before them (default 1)\n"
"      --together      run each round's configurations at the same time, not one\n"
"                      after another (kernbench: each in a copy of the tree), so\n"
"                      that all see the same CPU speeds: CPU seconds compare\n"
"                      within a round, elapsed times do not; only orig, alloc,\n"
"                      alloc+profile and bench file configurations\n"
"  -j, --jobs J        kernbench's optimal load (default 4 x CPUs); with a\n"
"                      WORKLOAD, names it \"Optimal load -j J\"\n"
"      --json          print the bench as JSON (every raw run) instead of tables\n"
"      --csv           print the raw runs as CSV instead of tables\n"
"  -o, --output DIR    write bench.txt, bench.json, runs.csv, report.svg and\n"
"                      report.html (and keep records and the log) in DIR\n"
"      --tree DIR      kernbench: the kernel tree (default: Debian's\n"
"                      linux-source-6.1, fetched into a cache)\n"
"      --kconfig TARGET  kernbench: make TARGET for .config (default tinyconfig)\n"
"      --loads LIST    kernbench: half,optimal,maximal (default: all three)\n"
"      --pause SEC     kernbench: the pause after make clean and sync (default 5)\n"
"      --schemes FILE  control's schemes (memregctl-control(1))\n"
"      --control-backend NAME  control's monitor backend (default: what\n"
"                      memregctl record picks for a command it starts)\n"
"      --control-attrs LIST  control's --attrs (sample,aggr,update,min,max)\n"
"      --plan FILE     evac's plan (memregctl plan -o FILE)\n"
"      --phys          record physical memory beside each measured run\n"
"                      (memregctl record --phys: the kernel's DAMON; needs --apply)\n"
"      --apply         let control act, evac run, --phys use DAMON and rec and\n"
"                      control run in a cgroup of their own: changes kernel\n"
"                      state, for the VM lab (scripts/lab)\n"
"  -h, --help          this help\n");
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

static int parse_unsigned(const char *opt, const char *s, unsigned min, unsigned *out)
{
	uint64_t v;

	if (mr_parse_u64(s, &v) || v < min || v > 100000)
		return mr_cli_usage("bench", "%s: '%s' is not a count of at least %u", opt, s,
				    min);
	*out = (unsigned)v;
	return 0;
}

/* WORKLOAD's arguments as one shell command: a single argument as it is, several
 * each single-quoted. */
static char *join_command(int argc, char **argv)
{
	size_t len = 1;
	char *cmd, *o;
	int i;

	if (argc == 1)
		return strdup(argv[0]);
	for (i = 0; i < argc; i++)
		len += strlen(argv[i]) * 4 + 3;
	cmd = malloc(len);
	if (!cmd)
		return NULL;
	o = cmd;
	for (i = 0; i < argc; i++) {
		const char *s;

		if (i)
			*o++ = ' ';
		*o++ = '\'';
		for (s = argv[i]; *s; s++) {
			if (*s == '\'') {
				memcpy(o, "'\\''", 4);
				o += 4;
			} else {
				*o++ = *s;
			}
		}
		*o++ = '\'';
	}
	*o = '\0';
	return cmd;
}

enum { OPT_JSON = 256, OPT_CSV, OPT_TREE, OPT_KCONFIG, OPT_LOADS, OPT_PAUSE, OPT_SCHEMES,
       OPT_BACKEND, OPT_CATTRS, OPT_PLAN, OPT_PHYS, OPT_APPLY, OPT_TOGETHER };

int mr_cmd_bench(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "configs", required_argument, NULL, 'c' },
		{ "bench-file", required_argument, NULL, 'f' },
		{ "suite", required_argument, NULL, 's' },
		{ "name", required_argument, NULL, 'n' },
		{ "runs", required_argument, NULL, 'r' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "csv", no_argument, NULL, OPT_CSV },
		{ "output", required_argument, NULL, 'o' },
		{ "tree", required_argument, NULL, OPT_TREE },
		{ "kconfig", required_argument, NULL, OPT_KCONFIG },
		{ "loads", required_argument, NULL, OPT_LOADS },
		{ "pause", required_argument, NULL, OPT_PAUSE },
		{ "schemes", required_argument, NULL, OPT_SCHEMES },
		{ "control-backend", required_argument, NULL, OPT_BACKEND },
		{ "control-attrs", required_argument, NULL, OPT_CATTRS },
		{ "plan", required_argument, NULL, OPT_PLAN },
		{ "phys", no_argument, NULL, OPT_PHYS },
		{ "apply", no_argument, NULL, OPT_APPLY },
		{ "together", no_argument, NULL, OPT_TOGETHER },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct mr_bench_suite_opts so = { .pause_s = 5 };
	const char *configs = NULL, *bench_file = NULL, *suite = NULL, *name = NULL;
	const char *outdir = NULL;
	bool json = false, csv = false, tmp_workdir = false;
	char tmpl[PATH_MAX], path[PATH_MAX];
	struct mr_bench b;
	unsigned jobs = 0;
	int opt, ret = MR_EXIT_OK;

	memset(&b, 0, sizeof(b));
	b.runs = 5;
	b.warmup = 1;
	while ((opt = mr_cli_getopt(argc, argv, "+c:f:s:n:r:w:j:o:h", longopts)) != -1) {
		switch (opt) {
		case 'c': configs = optarg; break;
		case 'f': bench_file = optarg; break;
		case 's': suite = optarg; break;
		case 'n': name = optarg; break;
		case 'r':
			if (parse_unsigned("--runs", optarg, 1, &b.runs))
				return MR_EXIT_USAGE;
			break;
		case 'w':
			if (parse_unsigned("--warmup", optarg, 0, &b.warmup))
				return MR_EXIT_USAGE;
			break;
		case 'j':
			if (parse_unsigned("--jobs", optarg, 1, &jobs))
				return MR_EXIT_USAGE;
			break;
		case OPT_JSON: json = true; break;
		case OPT_CSV: csv = true; break;
		case 'o': outdir = optarg; break;
		case OPT_TREE: so.tree = optarg; break;
		case OPT_KCONFIG: so.config = optarg; break;
		case OPT_LOADS: so.loads = optarg; break;
		case OPT_PAUSE:
			if (parse_unsigned("--pause", optarg, 0, &so.pause_s))
				return MR_EXIT_USAGE;
			break;
		case OPT_SCHEMES: b.schemes = optarg; break;
		case OPT_BACKEND: b.backend = optarg; break;
		case OPT_CATTRS: b.control_attrs = optarg; break;
		case OPT_PLAN: b.plan = optarg; break;
		case OPT_PHYS: b.phys = true; break;
		case OPT_APPLY: b.apply = true; break;
		case OPT_TOGETHER: b.together = true; break;
		case 'h':
			usage(stdout);
			return mr_cli_finish(MR_EXIT_OK);
		default:
			return MR_EXIT_USAGE;
		}
	}
	if (json && csv)
		return mr_cli_usage("bench", "--json and --csv both print on standard output: "
				    "give one (-o DIR writes both)");
	if (suite && optind < argc)
		return mr_cli_usage("bench", "--suite %s runs its own workloads: no WORKLOAD",
				    suite);
	if (!suite && !bench_file && optind >= argc)
		return mr_cli_usage("bench", "no WORKLOAD (give it after --), --suite or "
				    "--bench-file");
	if (!suite && (so.tree || so.config || so.loads))
		return mr_cli_usage("bench", "--tree, --kconfig and --loads are kernbench's "
				    "(--suite kernbench)");

	if (mr_bench_locate(&b)) {
		ret = mr_cli_fail("%s", mr_last_error());
		goto out;
	}
	if (bench_file && mr_bench_read_file(&b, bench_file)) {
		ret = mr_cli_fail("%s", mr_last_error());
		goto out;
	}
	if (configs) {
		/* -c sets the columns and their order; bench file configurations it does not
		 * name are left out. */
		struct mr_bench_config user[MR_BENCH_MAX_CONFIGS];
		unsigned nr_user = b.nr_configs, i;
		char *list = strdup(configs), *save = NULL, *tok;

		memcpy(user, b.configs, sizeof(user));
		b.nr_configs = 0;
		for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			for (i = 0; i < nr_user; i++)
				if (user[i].name && !strcmp(user[i].name, tok))
					break;
			if (mr_bench_find_config(&b, tok)) {
				free(list);
				ret = mr_cli_usage("bench", "-c: %s given twice", tok);
				goto out;
			}
			if (i < nr_user) {
				b.configs[b.nr_configs++] = user[i];
				user[i].name = NULL;
			} else if (mr_bench_add_builtin(&b, tok)) {
				free(list);
				ret = mr_cli_usage("bench", "%s", mr_last_error());
				goto out;
			}
		}
		free(list);
		for (i = 0; i < nr_user; i++)
			if (user[i].name) {
				/* not asked for: freed with a bench of its own */
				struct mr_bench tmp;

				memset(&tmp, 0, sizeof(tmp));
				tmp.configs[0] = user[i];
				tmp.nr_configs = 1;
				mr_bench_free(&tmp);
			}
		so.configs_given = true;
	}
	so.jobs = jobs;
	if (suite) {
		if (mr_bench_suite(&b, suite, &so)) {
			ret = mr_cli_fail("%s", mr_last_error());
			goto out;
		}
	} else if (optind < argc) {
		char *cmd = join_command(argc - optind, argv + optind);
		char first[256], def[256], *base;
		struct mr_bench_workload *w;

		/* The first word's basename: "make -j8" is make, "/bin/ls -R" is ls. */
		snprintf(first, sizeof(first), "%.*s", (int)strcspn(argv[optind], " \t"),
			 argv[optind]);
		base = strrchr(first, '/');
		snprintf(def, sizeof(def), "%s", base && base[1] ? base + 1 : first);
		w = cmd ? mr_bench_new_workload(&b, name ? name : def, cmd) : NULL;
		free(cmd);
		if (!w) {
			ret = mr_cli_fail("%s", mr_last_error());
			goto out;
		}
		if (jobs) {
			char label[64];

			snprintf(label, sizeof(label), "Optimal load -j %u", jobs);
			w->label = strdup(label);
		}
	}
	if (!configs && !suite) {
		/* orig and alloc in front of the bench file's own. */
		struct mr_bench_config user[MR_BENCH_MAX_CONFIGS];
		unsigned nr_user = b.nr_configs, i;

		memcpy(user, b.configs, sizeof(user));
		b.nr_configs = 0;
		if (mr_bench_add_builtin(&b, "orig") || mr_bench_add_builtin(&b, "alloc")) {
			ret = mr_cli_fail("%s", mr_last_error());
			goto out;
		}
		for (i = 0; i < nr_user && b.nr_configs < MR_BENCH_MAX_CONFIGS; i++)
			b.configs[b.nr_configs++] = user[i];
	}
	if (!b.nr_workloads) {
		ret = mr_cli_usage("bench", "no workload: the bench file defines none");
		goto out;
	}

	if (outdir) {
		if (mkdir(outdir, 0755) < 0 && errno != EEXIST) {
			ret = mr_cli_fail("%s: %s", outdir, strerror(errno));
			goto out;
		}
		b.workdir = realpath(outdir, NULL);
	} else {
		/* $TMPDIR, as mktemp(1) takes it. */
		const char *tmpdir = getenv("TMPDIR");

		snprintf(tmpl, sizeof(tmpl), "%s/memreg-bench.XXXXXX",
			 tmpdir && *tmpdir ? tmpdir : "/tmp");
		if (mkdtemp(tmpl)) {
			b.workdir = strdup(tmpl);
			tmp_workdir = true;
		}
	}
	if (!b.workdir) {
		ret = mr_cli_fail("a working directory: %s", strerror(errno));
		goto out;
	}
	snprintf(path, sizeof(path), "%s/workloads.log", b.workdir);
	b.log_path = strdup(path);
	b.progress = isatty(STDERR_FILENO);
	if (outdir)
		b.report_dir = b.workdir;
	if (mr_bench_run_all(&b)) {
		ret = mr_cli_fail("%s", mr_last_error());
		/* A workload ran: its log stays for the reader. A bench stopped before
		 * any (a configuration refused) leaves nothing behind. */
		if (tmp_workdir && access(b.log_path, F_OK) == 0) {
			fprintf(stderr, "%s: the workloads' log is kept in %s\n", mr_progname,
				b.log_path);
			tmp_workdir = false;
		}
		goto out;
	}
	if (outdir && mr_bench_write_report(&b, b.workdir)) {
		ret = mr_cli_fail("%s", mr_last_error());
		goto out;
	}
	if (json) {
		char *text = mr_bench_json(&b);

		if (!text) {
			ret = mr_cli_fail("JSON: out of memory");
			goto out;
		}
		printf("%s\n", text);
		free(text);
	} else if (csv) {
		mr_bench_print_csv(stdout, &b);
	} else {
		mr_bench_print_kernbench(stdout, &b);
		mr_bench_print_tables(stdout, &b);
		if (outdir)
			printf("Report: %s/report.html (report.svg, bench.json, runs.csv)\n",
			       b.workdir);
	}
	ret = mr_cli_finish(MR_EXIT_OK);
out:
	if (tmp_workdir)
		nftw(b.workdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	mr_bench_free(&b);
	return ret;
}
