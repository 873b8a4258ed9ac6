/* memregctl control: run schemes (DAMOS-style pattern -> action) over a process's
 * monitored regions in the foreground, as a dry run unless --apply; and
 * `control status`, which reads memregd's status file. Thin over controller/. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json-c/json.h>

#include "common/proc.h"
#include "common/root.h"
#include "controller/classes.h"
#include "controller/run.h"
#include "monitor/record.h"
#include "power/energy.h"
#include "tools/cli.h"

#define STATUS_PATH_DEFAULT "/run/memreg/memregd.status"

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	stop_flag = sig;
}

static void usage(FILE *f)
{
	fputs("Usage: memregctl control (--scheme S... | --schemes FILE | --classes[=D])\n"
	      "                         (--pid PID | --replay REC | -- COMMAND [ARG...])\n"
	      "                         [--backend B] [--engine user] [--duration D] [--apply]\n"
	      "                         [--json] [--metrics DIR] [--status-file FILE]\n"
	      "       memregctl control status [--json] [--file FILE]\n\n"
	      "Monitor a process's memory accesses and apply schemes to its regions: each\n"
	      "aggregation interval, every scheme picks the regions its access pattern\n"
	      "matches (DAMOS's text format, memregctl-control(1), docs/controller.md) and\n"
	      "acts on them under its quota and watermarks. Without --apply nothing changes:\n"
	      "a dry run prints, per aggregation, what each scheme would do (bytes and pages\n"
	      "per source and destination node). Observing a process memreg did not start\n"
	      "needs --apply. SIGINT, SIGTERM and SIGHUP stop the run and print the\n"
	      "statistics. `control status` prints memregd's status file.\n"
	      "With --classes the allocator is in the loop: the target runs under\n"
	      "libmemreg.so (MEMREG_EXPORT_STATS=1 MEMREG_TRACK_SITES=1); every D the\n"
	      "controller asks for its live site map, attributes the access rates to the\n"
	      "allocation sites and writes their classes (hot low, cold high) into its\n"
	      "classes page (--apply, or a COMMAND memreg starts).\n\n"
	      "Options:\n"
	      "  -s, --scheme TEXT     a scheme (repeatable; indented key lines after a newline)\n"
	      "  -S, --schemes FILE    schemes from a file\n"
	      "      --classes[=D]     classify the target's allocation sites every D (default\n"
	      "                        5s) and hand the classes to its allocator\n"
	      "  -p, --pid PID         the process to control (needs --apply)\n"
	      "  -R, --replay REC      replay a record (a dry run; the record's backend decides\n"
	      "                        which actions may run)\n"
	      "  -b, --backend NAME    the monitoring backend (default damon): damon and perf\n"
	      "                        see reads per page and may drive every action; refs sees\n"
	      "                        one count per mapping (whole mappings only); softdirty\n"
	      "                        sees writes only (stat and willneed only)\n"
	      "  -a, --attrs LIST      sample_us,aggr_us,update_us,min_regions,max_regions\n"
	      "  -e, --engine NAME     user (the schemes run in memreg; the only engine so far)\n"
	      "  -d, --duration D      stop after D of monitoring (60s, 2m; default: until the\n"
	      "                        target ends)\n"
	      "      --apply           act (move pages, process_madvise); otherwise a dry run\n"
	      "  -j, --json            the actions and final statistics as one JSON document\n"
	      "  -m, --metrics DIR     keep DIR/memreg.prom (node_exporter's textfile collector)\n"
	      "      --status-file FILE  keep the status (as memregd's) in FILE\n"
	      "      --file FILE       (status) the status file (default " STATUS_PATH_DEFAULT ")\n"
	      "      --root DIR        read /proc and /sys under DIR (a fixture: never written)\n"
	      "  -h, --help            this text\n", f);
}

static int cmd_status(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "file", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = STATUS_PATH_DEFAULT;
	json_object *j, *schemes, *v;
	bool json = false;
	size_t i, n;
	int c;

	while ((c = mr_cli_getopt(argc, argv, "jh", opts)) != -1) {
		switch (c) {
		case 'j': json = true; break;
		case 'f': path = optarg; break;
		case 'h': usage(stdout); return mr_cli_finish(MR_EXIT_OK);
		default: return MR_EXIT_USAGE;
		}
	}
	if (optind != argc)
		return mr_cli_usage("control", "status takes no arguments");
	j = json_object_from_file(path);
	if (!j)
		return mr_cli_fail("%s: cannot read the status (%s); is memregd running?", path,
				   access(path, R_OK) ? strerror(errno) : "not JSON");
	if (json) {
		mr_cli_print_json(j);
		json_object_put(j);
		return mr_cli_finish(MR_EXIT_OK);
	}
	json_object_object_get_ex(j, "pid", &v);
	printf("controller pid %d, ", json_object_get_int(v));
	json_object_object_get_ex(j, "engine", &v);
	printf("%s engine, ", json_object_get_string(v));
	json_object_object_get_ex(j, "backend", &v);
	printf("%s backend, ", json_object_get_string(v));
	json_object_object_get_ex(j, "aggregations", &v);
	printf("%lld aggregations\n", (long long)json_object_get_int64(v));
	json_object_object_get_ex(j, "targeted_regions", &v);
	printf("targeted regions: %s\n", v ? json_object_to_json_string(v) : "[]");
	if (json_object_object_get_ex(j, "schemes", &schemes)) {
		n = json_object_array_length(schemes);
		for (i = 0; i < n; i++) {
			json_object *s = json_object_array_get_idx(schemes, i), *a, *t, *sz, *ap;

			json_object_object_get_ex(s, "action", &a);
			json_object_object_get_ex(s, "nr_tried", &t);
			json_object_object_get_ex(s, "sz_tried", &sz);
			json_object_object_get_ex(s, "sz_applied", &ap);
			printf("scheme %zu %s: tried %lld regions (%lld bytes), applied %lld bytes\n",
			       i, json_object_get_string(a), (long long)json_object_get_int64(t),
			       (long long)json_object_get_int64(sz), (long long)json_object_get_int64(ap));
		}
	}
	json_object_put(j);
	return mr_cli_finish(MR_EXIT_OK);
}

/* Append @add to the scheme text @text (a --scheme per line). */
static int add_scheme_text(char **text, const char *add)
{
	size_t old = *text ? strlen(*text) : 0, n = strlen(add);
	char *t = realloc(*text, old + n + 2);

	if (!t)
		return -ENOMEM;
	memcpy(t + old, add, n);
	t[old + n] = '\n';
	t[old + n + 1] = '\0';
	*text = t;
	return 0;
}

/* A command memreg just started creates its export on its first allocation: wait
 * for it a little (2 s), so that --classes finds it. */
static void wait_exported(pid_t pid)
{
	char path[128];
	int i;

	for (i = 0; i < 200 && mr_proc_alive(pid); i++) {
		if (mr_alloc_export_find(pid, path, sizeof(path)) == 0)
			return;
		usleep(10000);
	}
}

static void print_json(const struct mr_ctl_run *run)
{
	json_object *j = mr_ctl_run_status_json(run);

	json_object_object_add(j, "actions", json_object_get(run->actions_log));
	mr_cli_print_json(j);
	json_object_put(j);
}

int mr_cmd_control(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "scheme", required_argument, NULL, 's' },
		{ "schemes", required_argument, NULL, 'S' },
		{ "pid", required_argument, NULL, 'p' },
		{ "replay", required_argument, NULL, 'R' },
		{ "backend", required_argument, NULL, 'b' },
		{ "attrs", required_argument, NULL, 'a' },
		{ "engine", required_argument, NULL, 'e' },
		{ "duration", required_argument, NULL, 'd' },
		{ "apply", no_argument, NULL, 'A' },
		{ "json", no_argument, NULL, 'j' },
		{ "metrics", required_argument, NULL, 'm' },
		{ "status-file", required_argument, NULL, 'T' },
		{ "root", required_argument, NULL, 'r' },
		{ "classes", optional_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct mr_ctl_classes classes = { .fd = -1 };
	bool want_classes = false, have_classes = false;
	const char *schemes_file = NULL, *replay = NULL, *backend = "damon", *attrs = NULL;
	const char *engine = "user", *root = NULL, *source = "--scheme";
	char *text = NULL, note[512];
	struct mr_scheme_set set = { 0 };
	struct mr_region_map map = { 0 };
	struct mr_discover_opts dopts = { .source = MR_SOURCE_AUTO, .skip_hwloc = true };
	struct mr_ctl_run run = { 0 };
	struct mr_mon_ctx ctx;
	struct sigaction sa = { 0 };
	struct mr_rec rec;
	struct mr_energy_source energy;
	bool have_energy = false;
	const struct mr_mon_ops *ops;
	enum mr_act_sight sight;
	uint64_t pid = 0, duration_us = 0;
	bool apply = false, json = false, have_map = false, have_ctx = false, have_rec = false;
	pid_t child = -1;
	int c, err, status = MR_EXIT_OK;
	size_t len;

	if (argc > 1 && strcmp(argv[1], "status") == 0)
		return cmd_status(argc - 1, argv + 1);
	while ((c = mr_cli_getopt(argc, argv, "+s:S:p:R:b:a:e:d:jm:h", opts)) != -1) {
		switch (c) {
		case 's':
			if (add_scheme_text(&text, optarg))
				return mr_cli_fail("out of memory");
			break;
		case 'S': schemes_file = optarg; break;
		case 'p':
			if (pid)
				return mr_cli_usage("control", "one --pid per run (memregd runs one "
						    "controller per target)");
			if (mr_parse_u64(optarg, &pid) || !pid || pid > INT32_MAX)
				return mr_cli_usage("control", "--pid: bad pid '%s'", optarg);
			break;
		case 'R': replay = optarg; break;
		case 'b': backend = optarg; break;
		case 'a': attrs = optarg; break;
		case 'e': engine = optarg; break;
		case 'd':
			if (mr_parse_duration_us(optarg, 1000000, &duration_us) || !duration_us)
				return mr_cli_usage("control", "--duration: bad duration '%s' (60s, "
						    "2m, 500ms)", optarg);
			break;
		case 'A': apply = true; break;
		case 'j': json = true; break;
		case 'm': run.metrics_dir = optarg; break;
		case 'T': run.status_path = optarg; break;
		case 'r': root = optarg; break;
		case 'C':
			want_classes = true;
			if (optarg && (mr_parse_duration_us(optarg, 1000000, &classes.interval_us) ||
				       !classes.interval_us)) {
				free(text);
				return mr_cli_usage("control", "--classes: bad interval '%s' (5s, "
						    "500ms)", optarg);
			}
			break;
		case 'h':
			usage(stdout);
			free(text);
			return mr_cli_finish(MR_EXIT_OK);
		default:
			free(text);
			return MR_EXIT_USAGE;
		}
	}
	if ((text && schemes_file) || (!text && !schemes_file && !want_classes)) {
		free(text);
		return mr_cli_usage("control", "give --scheme TEXT (one or more), --schemes FILE "
				    "or --classes");
	}
	if (want_classes && replay) {
		free(text);
		return mr_cli_usage("control", "--classes needs a live process: --pid PID or -- "
				    "COMMAND, not --replay");
	}
	if ((pid != 0) + (replay != NULL) + (optind < argc) != 1) {
		free(text);
		return mr_cli_usage("control", "give exactly one target: --pid PID, --replay REC "
				    "or -- COMMAND");
	}
	if (strcmp(engine, "user") != 0) {
		free(text);
		if (strcmp(engine, "kernel") == 0)
			return mr_cli_fail("--engine kernel: the kernel's DAMOS engine is not built "
					   "yet; use --engine user");
		return mr_cli_usage("control", "--engine: unknown engine '%s' (user)", engine);
	}
	if (replay && apply) {
		free(text);
		return mr_cli_usage("control", "--replay is a dry run: a replayed record has no "
				    "process to act on (drop --apply)");
	}
	if (pid && !apply) {
		free(text);
		return mr_cli_fail("observing process %llu, which memreg did not start, needs "
				   "--apply (consent to act on it); a dry run works from --replay "
				   "REC or -- COMMAND", (unsigned long long)pid);
	}
	if (mr_root_set(root)) {
		free(text);
		return mr_cli_fail("%s", mr_last_error());
	}
	if (schemes_file) {
		FILE *f = fopen(schemes_file, "r");

		source = schemes_file;
		if (!f)
			return mr_cli_fail("%s: %s", schemes_file, strerror(errno));
		len = 0;
		if (getdelim(&text, &len, '\0', f) < 0 && ferror(f)) {
			fclose(f);
			free(text);
			return mr_cli_fail("%s: %s", schemes_file, strerror(errno));
		}
		fclose(f);
		if (!text && !(text = strdup("")))
			return mr_cli_fail("out of memory");
	}
	/* --classes alone: no scheme, the loop only hands classes to the allocator */
	err = text ? mr_scheme_parse(text, source, &set) : 0;
	free(text);
	if (err)
		return mr_cli_fail("%s", mr_last_error());

	/* the backend: a replay's rule is the record's own backend */
	if (replay) {
		err = mr_rec_load(replay, &rec);
		if (err) {
			status = mr_cli_fail("%s", mr_last_error());
			goto out;
		}
		have_rec = true;
		backend = "replay";
	}
	ops = mr_mon_backend_find(backend);
	if (!ops) {
		status = mr_cli_usage("control", "--backend: unknown backend '%s'", backend);
		goto out_rec;
	}
	sight = mr_act_backend_sight(ops->name, replay ? rec.hdr.backend : NULL);

	dopts.occupancy = run.metrics_dir != NULL || run.status_path != NULL;
	err = mr_region_map_discover(&map, &dopts);
	if (err) {
		status = mr_cli_fail("%s", mr_last_error());
		goto out_rec;
	}
	have_map = true;
	err = mr_act_check_schemes(&set, &map, sight, apply, note, sizeof(note));
	if (err) {
		status = mr_cli_fail("%s", mr_last_error());
		goto out_rec;
	}
	if (note[0])
		fprintf(stderr, "memregctl control: %s\n", note);

	mr_mon_ctx_init(&ctx, ops);
	have_ctx = true;
	if (replay) {
		ctx.attrs = rec.hdr.attrs;
		ctx.replay_path = replay;
	}
	if (attrs && mr_mon_attrs_parse(attrs, &ctx.attrs)) {
		status = mr_cli_usage("control", "%s", mr_last_error());
		goto out_rec;
	}
	ctx.apply = apply;
	ctx.stop = &stop_flag;
	ctx.target.kind = replay ? rec.hdr.kind : MR_MON_TARGET_PROCESS;
	ctx.target.pid = (pid_t)pid;

	sa.sa_handler = on_signal;	/* no SA_RESTART: a signal cuts the sleep short */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	if (optind < argc) {
		child = fork();
		if (child < 0) {
			status = mr_cli_fail("fork: %s", strerror(errno));
			goto out_rec;
		}
		if (child == 0) {
			signal(SIGINT, SIG_DFL);
			signal(SIGTERM, SIG_DFL);
			signal(SIGHUP, SIG_DFL);
			execvp(argv[optind], argv + optind);
			fprintf(stderr, "memregctl control: %s: %s\n", argv[optind], strerror(errno));
			_exit(127);
		}
		ctx.target.pid = child;
		ctx.target.started = true;	/* memreg started it: consent (record's rule) */
	}

	/* DRAM energy for the metrics and the status: the best source here */
	if (run.metrics_dir || run.status_path) {
		memset(&energy, 0, sizeof(energy));
		if (mr_energy_open(&energy, "auto", NULL) == 0) {
			if (mr_energy_start(&energy) == 0) {
				have_energy = true;
				run.energy = &energy;
			} else {
				mr_energy_close(&energy);
			}
		}
		if (!have_energy)
			fprintf(stderr, "memregctl control: no DRAM energy in the metrics: %s\n",
				mr_last_error());
	}
	run.set = &set;
	run.map = &map;
	run.mon = &ctx;
	run.engine_name = engine;
	run.backend_name = replay ? rec.hdr.backend : ops->name;
	run.duration_us = duration_us;
	run.log = json ? NULL : stdout;
	run.keep_log = json;
	run.log_stat = true;
	run.whole_mappings = sight == MR_ACT_SEES_MAPPINGS;
	if (want_classes) {
		/* consent as for every action: --apply, or the command memreg started */
		classes.apply = apply || child > 0;
		classes.log = json ? NULL : stdout;
		if (child > 0)
			wait_exported(child);
		err = mr_ctl_classes_open(&classes, ctx.target.pid, 0);
		if (err) {
			status = mr_cli_fail("--classes: %s", mr_last_error());
			goto out_child;
		}
		have_classes = true;
		run.classes = &classes;
	}
	err = mr_ctl_run_start(&run, ctx.target.pid > 0 ? ctx.target.pid : 0,
			       ctx.target.kind == MR_MON_TARGET_PHYS, apply);
	if (!err) {
		err = mr_ctl_run(&run);
		if (err)
			status = mr_cli_fail("%s", mr_last_error());
		if (json)
			print_json(&run);
		else
			mr_ctl_run_print_stats(&run, stdout);
		mr_ctl_run_destroy(&run);
	} else {
		status = mr_cli_fail("%s", mr_last_error());
	}
	if (have_classes) {
		if (!json)
			printf("classes: %" PRIu64 " rounds, %" PRIu64 " site maps read, %" PRIu64
			       " classes pages written\n", classes.rounds, classes.maps,
			       classes.generations);
		mr_ctl_classes_close(&classes);
	}
out_child:
	if (have_energy) {
		mr_energy_stop(&energy);
		mr_energy_close(&energy);
	}
	if (child > 0) {
		int ws;

		if (mr_proc_alive(child))
			kill(child, SIGTERM);
		while (waitpid(child, &ws, 0) < 0 && errno == EINTR)
			;
	}
out_rec:
	if (have_rec)
		mr_rec_free(&rec);
out:
	if (have_ctx)
		mr_mon_ctx_destroy(&ctx);
	if (have_map)
		mr_region_map_destroy(&map);
	mr_scheme_set_free(&set);
	return mr_cli_finish(status);
}
