/* memregd: the controller as a service. Reads /etc/memreg/memregd.conf (memregd.conf(5)),
 * refuses to start without "apply yes", runs the schemes over its target with
 * controller/'s run loop, logs one line per action batch on stderr (the journal),
 * keeps /run/memreg/memregd.status; SIGHUP reloads the schemes without stopping the
 * monitor (its kdamonds stay), SIGTERM stops and undoes what the backend set up. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/root.h"
#include "common/util.h"
#include "controller/conf.h"
#include "controller/kengine.h"
#include "controller/run.h"
#include "power/energy.h"

static volatile sig_atomic_t stop_flag, reload_flag;

static void on_stop(int sig)
{
	stop_flag = sig;
}

static void on_hup(int sig)
{
	(void)sig;
	reload_flag = 1;
}

static void logf_(const char *fmt, ...) MR_PRINTF(1, 2);
static void logf_(const char *fmt, ...)
{
	va_list ap;

	fputs("memregd: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
}

static void usage(FILE *f)
{
	fputs("Usage: memregd [--config FILE] [--check]\n\n"
	      "The memreg controller as a service: monitor the target of memregd.conf(5) and\n"
	      "apply its schemes (move cold data out of hot regions, ...), one log line per\n"
	      "action batch on stderr, status in the file the configuration names (default\n"
	      MR_CONF_STATUS_DEFAULT ", read by `memregctl control status`).\n"
	      "Refuses to start without \"apply yes\" in the configuration. SIGHUP re-reads the\n"
	      "schemes (the monitor and its kdamonds keep running); SIGTERM stops and removes\n"
	      "what the monitoring backend set up in the kernel.\n\n"
	      "Options:\n"
	      "  -c, --config FILE   the configuration (default " MR_CONF_PATH_DEFAULT ")\n"
	      "      --check         check the configuration and the schemes against this\n"
	      "                      machine, then exit (0: memregd would start)\n"
	      "  -h, --help          this text\n"
	      "  -V, --version       print the version\n", f);
}

struct daemon {
	const char *config_path;
	struct mr_conf conf;
	const struct mr_region_map *map;
	enum mr_act_sight sight;
};

/* Do two configurations name the same targets (pid and cgroup lines, in order)? */
static bool same_targets(const struct mr_conf *a, const struct mr_conf *b)
{
	size_t i;

	if (a->nr_pids != b->nr_pids || a->nr_cgroups != b->nr_cgroups)
		return false;
	for (i = 0; i < a->nr_pids; i++)
		if (a->pids[i] != b->pids[i])
			return false;
	for (i = 0; i < a->nr_cgroups; i++)
		if (strcmp(a->cgroups[i], b->cgroups[i]))
			return false;
	return true;
}

/* "pid 12", or "2 pids and 1 cgroup" for the log. */
static const char *targets_text(const struct mr_conf *c, char *buf, size_t len)
{
	if (c->nr_pids == 1 && !c->nr_cgroups)
		snprintf(buf, len, "pid %d", (int)c->pid);
	else
		snprintf(buf, len, "%zu pid%s and %zu cgroup%s", c->nr_pids,
			 c->nr_pids == 1 ? "" : "s", c->nr_cgroups, c->nr_cgroups == 1 ? "" : "s");
	return buf;
}

/* SIGHUP: new schemes from the file; what the monitor was started with stays. */
static void reload(struct mr_ctl_run *run, void *arg)
{
	struct daemon *d = arg;
	struct mr_scheme_set old;
	struct mr_conf c;
	char note[512];

	if (mr_conf_load(d->config_path, &c)) {
		logf_("reload failed, keeping the running schemes: %s", mr_last_error());
		return;
	}
	if (!same_targets(&c, &d->conf) || strcmp(c.backend, d->conf.backend) ||
	    strcmp(c.engine, d->conf.engine) ||
	    c.has_attrs != d->conf.has_attrs ||
	    (c.has_attrs && memcmp(&c.attrs, &d->conf.attrs, sizeof(c.attrs))) ||
	    strcmp(c.metrics_dir, d->conf.metrics_dir) || strcmp(c.status_path, d->conf.status_path))
		logf_("reload: the target, engine, backend, intervals and paths change only with a "
		      "restart; kept the running ones, reloading the schemes");
	if (mr_act_check_schemes(&c.schemes, d->map, d->sight, true, note, sizeof(note))) {
		logf_("reload failed, keeping the running schemes: %s", mr_last_error());
		mr_conf_free(&c);
		return;
	}
	/* the run and its actions point at d->conf.schemes: swap the sets in place */
	old = d->conf.schemes;
	d->conf.schemes = c.schemes;
	if (mr_ctl_run_replace_schemes(run, &d->conf.schemes)) {
		logf_("reload failed, keeping the running schemes: %s", mr_last_error());
		d->conf.schemes = old;
		mr_conf_free(&c);
		return;
	}
	mr_scheme_set_free(&old);
	logf_("reloaded %s: %zu scheme%s", d->config_path, c.schemes.nr,
	      c.schemes.nr == 1 ? "" : "s");
}

/* The status file's directory (/run/memreg), created if missing. */
static int make_parent_dir(const char *path)
{
	char buf[1024], *dir;

	snprintf(buf, sizeof(buf), "%s", path);
	dir = dirname(buf);
	if (mkdir(dir, 0755) && errno != EEXIST)
		return mr_error(-errno, "%s: %s", dir, strerror(errno));
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "check", no_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct daemon d = { .config_path = MR_CONF_PATH_DEFAULT };
	struct mr_discover_opts dopts = { .source = MR_SOURCE_AUTO, .skip_hwloc = true };
	struct mr_region_map map = { 0 };
	struct mr_ctl_run run = { 0 };
	struct mr_targets tset = { 0 };
	struct mr_energy_source energy;
	struct sigaction sa = { 0 };
	const struct mr_mon_ops *ops;
	struct mr_mon_ctx ctx;
	bool check = false, have_energy = false, kernel;
	char note[512], who[64];
	size_t i;
	int c, err = 0;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "c:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'c': d.config_path = optarg; break;
		case 'C': check = true; break;
		case 'h': usage(stdout); return fflush(stdout) ? 1 : 0;
		case 'V': printf("memregd %s\n", PACKAGE_VERSION); return fflush(stdout) ? 1 : 0;
		default:
			fprintf(stderr, "memregd: unknown option '%s'\nTry 'memregd --help'.\n",
				argv[optind - 1]);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "memregd: no arguments, only options\nTry 'memregd --help'.\n");
		return 2;
	}
	if (mr_root_set(NULL) || mr_conf_load(d.config_path, &d.conf)) {
		logf_("%s", mr_last_error());
		return 1;
	}
	ops = mr_mon_backend_find(d.conf.backend);
	if (!ops) {
		logf_("%s: unknown backend '%s'", d.config_path, d.conf.backend);
		goto fail_conf;
	}
	if (ops == &mr_mon_ops_replay || ops == &mr_mon_ops_uffd) {
		logf_("%s: backend %s cannot watch another process", d.config_path, ops->name);
		goto fail_conf;
	}
	kernel = strcmp(d.conf.engine, "kernel") == 0;
	if (kernel && ops != &mr_mon_ops_damon) {
		logf_("%s: engine kernel monitors with the kernel's DAMON itself: backend %s does "
		      "not apply (drop the backend line)", d.config_path, ops->name);
		goto fail_conf;
	}
	/* one memcg filter per kdamond: the kernel engine follows one process */
	if (kernel && (d.conf.nr_pids != 1 || d.conf.nr_cgroups)) {
		logf_("%s: engine kernel takes exactly one pid line and no cgroup line (memreg "
		      "puts that process in a cgroup of its own for DAMOS's memcg filter); use "
		      "the user engine for several targets", d.config_path);
		goto fail_conf;
	}
	d.sight = mr_act_backend_sight(ops->name, NULL);
	dopts.occupancy = d.conf.metrics_dir[0] != '\0';
	if (mr_region_map_discover(&map, &dopts)) {
		logf_("%s", mr_last_error());
		goto fail_conf;
	}
	d.map = &map;
	if (mr_act_check_schemes(&d.conf.schemes, &map, d.sight, true, note, sizeof(note))) {
		logf_("%s: %s", d.config_path, mr_last_error());
		goto fail_map;
	}
	if (note[0])
		logf_("%s", note);
	if (check) {
		printf("%s: %zu scheme%s for %s with the %s backend: memregd would start\n",
		       d.config_path, d.conf.schemes.nr, d.conf.schemes.nr == 1 ? "" : "s",
		       targets_text(&d.conf, who, sizeof(who)), ops->name);
		mr_region_map_destroy(&map);
		mr_conf_free(&d.conf);
		return fflush(stdout) ? 1 : 0;
	}
	if (make_parent_dir(d.conf.status_path)) {
		logf_("%s", mr_last_error());
		goto fail_map;
	}
	/* several processes or a cgroup: one run over the set (controller/run.c) */
	if (d.conf.nr_pids != 1 || d.conf.nr_cgroups) {
		for (i = 0; i < d.conf.nr_pids && !err; i++)
			err = mr_targets_add_pid(&tset, d.conf.pids[i]);
		for (i = 0; i < d.conf.nr_cgroups && !err; i++)
			err = mr_targets_add_cgroup(&tset, d.conf.cgroups[i]);
		if (err) {
			logf_("%s: %s", d.config_path, mr_last_error());
			mr_targets_free(&tset);
			goto fail_map;
		}
		run.targets = &tset;
	}

	mr_mon_ctx_init(&ctx, ops);
	if (d.conf.has_attrs)
		ctx.attrs = d.conf.attrs;
	ctx.apply = true;	/* "apply yes" */
	ctx.stop = &stop_flag;
	ctx.target.kind = MR_MON_TARGET_PROCESS;
	ctx.target.pid = run.targets ? 0 : d.conf.pid;

	sa.sa_handler = on_stop;	/* no SA_RESTART: a signal cuts the sleep short */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_hup;
	sigaction(SIGHUP, &sa, NULL);

	if (d.conf.metrics_dir[0]) {
		memset(&energy, 0, sizeof(energy));
		if (mr_energy_open(&energy, "auto", NULL) == 0 && mr_energy_start(&energy) == 0)
			have_energy = true;
		else
			logf_("no DRAM energy in the metrics: %s", mr_last_error());
	}
	run.set = &d.conf.schemes;
	run.map = &map;
	run.mon = &ctx;
	run.engine_name = d.conf.engine;
	run.backend_name = ops->name;
	run.log = stderr;
	run.log_prefix = "memregd: ";
	run.status_path = d.conf.status_path;
	run.metrics_dir = d.conf.metrics_dir[0] ? d.conf.metrics_dir : NULL;
	run.energy = have_energy ? &energy : NULL;
	run.whole_mappings = d.sight == MR_ACT_SEES_MAPPINGS;
	run.reload = &reload_flag;
	run.reload_fn = reload;
	run.reload_arg = &d;
	/* the kernel engine acts itself: the user engine's actions stay a dry run */
	err = mr_ctl_run_start(&run, run.targets ? 0 : d.conf.pid, false, !kernel);
	if (!err) {
		logf_("started: %s, %zu scheme%s, %s engine, %s backend, status %s",
		      targets_text(&d.conf, who, sizeof(who)),
		      d.conf.schemes.nr, d.conf.schemes.nr == 1 ? "" : "s", d.conf.engine,
		      ops->name, d.conf.status_path);
		if (kernel) {
			struct mr_kengine_opts ko = { .pid = d.conf.pid, .apply = true,
						      .gate_fd = -1 };

			err = mr_kengine_run(&run, &ko);
		} else {
			err = mr_ctl_run(&run);
		}
		if (err)
			logf_("%s", mr_last_error());
		mr_ctl_run_print_stats(&run, stderr);
		logf_("stopped%s", stop_flag ? " by a signal" : run.targets ?
		      ": no target left" : ": the target ended");
		mr_ctl_run_destroy(&run);
	} else {
		logf_("%s", mr_last_error());
	}
	if (have_energy) {
		mr_energy_stop(&energy);
		mr_energy_close(&energy);
	}
	mr_mon_ctx_destroy(&ctx);
	mr_targets_free(&tset);
	mr_region_map_destroy(&map);
	mr_conf_free(&d.conf);
	return err ? 1 : 0;
fail_map:
	mr_region_map_destroy(&map);
fail_conf:
	mr_conf_free(&d.conf);
	return 1;
}
