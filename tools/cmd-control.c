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
#include "controller/kengine.h"
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
	      "                         (--pid PID... | --cgroup DIR... | --replay REC | --phys |\n"
	      "                          -- COMMAND [ARG...])\n"
	      "                         [--backend B] [--engine user|kernel] [--duration D] [--apply]\n"
	      "                         [--json] [--metrics DIR] [--status-file FILE]\n"
	      "       memregctl control status [--json] [--file FILE]\n\n"
	      "Monitor a process's memory accesses and apply schemes to its regions: each\n"
	      "aggregation interval, every scheme picks the regions its access pattern\n"
	      "matches (DAMOS's text format, memregctl-control(1), docs/controller.md) and\n"
	      "acts on them under its quota and watermarks. Without --apply nothing changes:\n"
	      "a dry run prints, per aggregation, what each scheme would do (bytes and pages\n"
	      "per source and destination node). Observing a process memreg did not start\n"
	      "needs --apply. Several --pid and --cgroup make one run over all those\n"
	      "processes: each scheme's quota is shared by them, as DAMOS shares it across\n"
	      "a context's targets; a cgroup's processes are re-read every update interval\n"
	      "(processes join and leave, the log says so). SIGINT, SIGTERM and SIGHUP stop\n"
	      "the run and print the statistics. `control status` prints memregd's status\n"
	      "file.\n"
	      "With --classes the allocator is in the loop: the target runs under\n"
	      "libmemreg.so (MEMREG_EXPORT_STATS=1 MEMREG_TRACK_SITES=1); every D the\n"
	      "controller asks for its live site map, attributes the access rates to the\n"
	      "allocation sites and writes their classes (hot low, cold high) into its\n"
	      "classes page (--apply, or a COMMAND memreg starts; one process, user engine).\n\n"
	      "Options:\n"
	      "  -s, --scheme TEXT     a scheme (repeatable; indented key lines after a newline)\n"
	      "  -S, --schemes FILE    schemes from a file\n"
	      "      --classes[=D]     classify the target's allocation sites every D (default\n"
	      "                        5s) and hand the classes to its allocator\n"
	      "  -p, --pid PID         a process to control (needs --apply; repeatable)\n"
	      "  -c, --cgroup DIR      the processes of the cgroup v2 directory DIR, an absolute\n"
	      "                        path, followed as they change (needs --apply; repeatable)\n"
	      "  -R, --replay REC      replay a record (a dry run; the record's backend decides\n"
	      "                        which actions may run)\n"
	      "  -b, --backend NAME    the monitoring backend (default damon): damon and perf\n"
	      "                        see reads per page and may drive every action; refs sees\n"
	      "                        one count per mapping (whole mappings only); softdirty\n"
	      "                        sees writes only (stat and willneed only)\n"
	      "  -a, --attrs LIST      sample_us,aggr_us,update_us,min_regions,max_regions\n"
	      "  -e, --engine NAME     user (default: the schemes run in memreg) or kernel (the\n"
	      "                        kernel's DAMOS: one paddr kdamond, a memcg filter on a\n"
	      "                        cgroup memreg creates for the target; needs --apply)\n"
	      "      --phys            (kernel engine) all of System RAM, every page, no filter\n"
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
		{ "cgroup", required_argument, NULL, 'c' },
		{ "replay", required_argument, NULL, 'R' },
		{ "backend", required_argument, NULL, 'b' },
		{ "attrs", required_argument, NULL, 'a' },
		{ "engine", required_argument, NULL, 'e' },
		{ "phys", no_argument, NULL, 'P' },
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
	struct mr_targets tset = { 0 };
	const char **cgroups = NULL;
	size_t nr_cgroups = 0, nr_pids = 0, i;
	pid_t *pids = NULL;
	struct mr_mon_ctx ctx;
	struct sigaction sa = { 0 };
	struct mr_rec rec;
	struct mr_energy_source energy;
	bool have_energy = false;
	const struct mr_mon_ops *ops;
	enum mr_act_sight sight;
	uint64_t pid = 0, duration_us = 0, v;
	bool apply = false, json = false, have_map = false, have_ctx = false, have_rec = false;
	bool phys = false, kernel;
	struct mr_kengine_opts kopts = { .gate_fd = -1 };
	int gate[2] = { -1, -1 };
	pid_t child = -1;
	int c, err = 0, status = MR_EXIT_OK;
	size_t len;

	if (argc > 1 && strcmp(argv[1], "status") == 0)
		return cmd_status(argc - 1, argv + 1);
	while ((c = mr_cli_getopt(argc, argv, "+s:S:p:c:R:b:a:e:d:jm:h", opts)) != -1) {
		switch (c) {
		case 's':
			if (add_scheme_text(&text, optarg))
				return mr_cli_fail("out of memory");
			break;
		case 'S': schemes_file = optarg; break;
		case 'p': {
			pid_t *p;

			if (mr_parse_u64(optarg, &v) || !v || v > INT32_MAX) {
				free(text);
				return mr_cli_usage("control", "--pid: bad pid '%s'", optarg);
			}
			p = realloc(pids, (nr_pids + 1) * sizeof(*p));
			if (!p)
				return mr_cli_fail("out of memory");
			pids = p;
			pids[nr_pids++] = (pid_t)v;
			pid = v;
			break;
		}
		case 'c': {
			const char **p = realloc(cgroups, (nr_cgroups + 1) * sizeof(*p));

			if (!p)
				return mr_cli_fail("out of memory");
			cgroups = p;
			cgroups[nr_cgroups++] = optarg;
			break;
		}
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
		case 'P': phys = true; break;
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
			free(pids);
			free(cgroups);
			return mr_cli_finish(MR_EXIT_OK);
		default:
			free(text);
			free(pids);
			free(cgroups);
			return MR_EXIT_USAGE;
		}
	}
	if ((text && schemes_file) || (!text && !schemes_file && !want_classes)) {
		free(text);
		free(pids);
		free(cgroups);
		return mr_cli_usage("control", "give --scheme TEXT (one or more), --schemes FILE "
				    "or --classes");
	}
	if (want_classes && (replay || nr_pids > 1 || nr_cgroups || phys ||
			     (engine && strcmp(engine, "user")))) {
		free(text);
		free(pids);
		free(cgroups);
		return mr_cli_usage("control", "--classes needs one live process under the user "
				    "engine: --pid PID or -- COMMAND");
	}
	if ((nr_pids || nr_cgroups) + (replay != NULL) + (optind < argc) + phys != 1) {
		free(text);
		free(pids);
		free(cgroups);
		return mr_cli_usage("control", "give exactly one kind of target: --pid PID and "
				    "--cgroup DIR (each repeatable), --replay REC, --phys or "
				    "-- COMMAND");
	}
	if (strcmp(engine, "user") != 0 && strcmp(engine, "kernel") != 0) {
		free(text);
		free(pids);
		free(cgroups);
		return mr_cli_usage("control", "--engine: unknown engine '%s' (user, kernel)", engine);
	}
	kernel = strcmp(engine, "kernel") == 0;
	if (kernel) {
		const char *why = replay ? "--replay: a record has no memory for the kernel to act "
			"on (use --engine user)" : strcmp(backend, "damon") ? "--backend: the kernel "
			"engine monitors with the kernel's DAMON itself (drop --backend)" : !apply ?
			"installing schemes in the kernel changes its state: pass --apply (a dry run "
			"works with --engine user)" : nr_pids > 1 || nr_cgroups ? "one --pid only "
			"(memreg puts it in a cgroup of its own for DAMOS's memcg filter); several "
			"--pid and --cgroup need --engine user" : NULL;

		if (why) {
			free(text);
			free(pids);
			free(cgroups);
			return mr_cli_usage("control", "--engine kernel: %s", why);
		}
	} else if (phys) {
		free(text);
		free(pids);
		free(cgroups);
		return mr_cli_usage("control", "--phys: only the kernel engine acts on physical "
				    "memory (the user engine moves a process's pages with "
				    "move_pages); add --engine kernel");
	}
	if (replay && apply) {
		free(text);
		free(pids);
		free(cgroups);
		return mr_cli_usage("control", "--replay is a dry run: a replayed record has no "
				    "process to act on (drop --apply)");
	}
	if (nr_pids && !apply) {
		free(text);
		free(cgroups);
		status = mr_cli_fail("observing process %d, which memreg did not start, needs "
				     "--apply (consent to act on it); a dry run works from "
				     "--replay REC or -- COMMAND", (int)pids[0]);
		free(pids);
		return status;
	}
	if (nr_cgroups && !apply) {
		free(text);
		free(pids);
		status = mr_cli_fail("observing the processes of cgroup %s, which memreg did not "
				     "start, needs --apply (consent to act on them); a dry run "
				     "works from --replay REC or -- COMMAND", cgroups[0]);
		free(cgroups);
		return status;
	}
	if (mr_root_set(root)) {
		free(text);
		free(pids);
		free(cgroups);
		return mr_cli_fail("%s", mr_last_error());
	}
	/* several processes, or a cgroup: one run over the set (run.c's threads) */
	if (nr_pids > 1 || nr_cgroups) {
		for (i = 0; i < nr_pids && !err; i++)
			err = mr_targets_add_pid(&tset, pids[i]);
		for (i = 0; i < nr_cgroups && !err; i++)
			err = mr_targets_add_cgroup(&tset, cgroups[i]);
		if (err) {
			free(text);
			mr_targets_free(&tset);
			free(pids);
			free(cgroups);
			return mr_cli_fail("%s", mr_last_error());
		}
		run.targets = &tset;
		pid = 0;
	}
	free(pids);
	free(cgroups);
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
		/* the kernel engine's command waits until it is in memreg's cgroup */
		if (kernel && pipe(gate)) {
			status = mr_cli_fail("pipe: %s", strerror(errno));
			goto out_rec;
		}
		child = fork();
		if (child < 0) {
			status = mr_cli_fail("fork: %s", strerror(errno));
			goto out_rec;
		}
		if (child == 0) {
			signal(SIGINT, SIG_DFL);
			signal(SIGTERM, SIG_DFL);
			signal(SIGHUP, SIG_DFL);
			if (gate[0] >= 0) {
				char go;

				close(gate[1]);
				if (read(gate[0], &go, 1) != 1)
					_exit(127);	/* the controller could not set up */
				close(gate[0]);
			}
			execvp(argv[optind], argv + optind);
			fprintf(stderr, "memregctl control: %s: %s\n", argv[optind], strerror(errno));
			_exit(127);
		}
		ctx.target.pid = child;
		ctx.target.started = true;	/* memreg started it: consent (record's rule) */
		if (gate[0] >= 0) {
			close(gate[0]);
			kopts.gate_fd = gate[1];
		}
	}
	if (phys)
		ctx.target.kind = MR_MON_TARGET_PHYS;

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
	/* the kernel engine acts itself: the user engine's actions stay a dry run */
	err = mr_ctl_run_start(&run, ctx.target.pid > 0 ? ctx.target.pid : 0,
			       ctx.target.kind == MR_MON_TARGET_PHYS, apply && !kernel);
	if (!err) {
		if (kernel) {
			kopts.pid = ctx.target.pid;
			kopts.started = child > 0;
			kopts.phys = phys;
			kopts.apply = apply;
			err = mr_kengine_run(&run, &kopts);
			kopts.gate_fd = -1;	/* closed by it */
		} else {
			err = mr_ctl_run(&run);
		}
		if (err)
			status = mr_cli_fail("%s", mr_last_error());
		/* a kernel engine refused before its first aggregation did nothing: no
		 * statistics to print */
		if (!(kernel && err && !run.nr_aggregations)) {
			if (json)
				print_json(&run);
			else
				mr_ctl_run_print_stats(&run, stdout);
		}
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
	if (kopts.gate_fd >= 0)
		close(kopts.gate_fd);	/* the command never runs */
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
	mr_targets_free(&tset);
	mr_scheme_set_free(&set);
	return mr_cli_finish(status);
}
