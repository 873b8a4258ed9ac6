/* memregctl record: monitor a process (or physical memory) with one backend and
 * write its snapshots to a record file until the target ends or a signal arrives. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/proc.h"
#include "common/root.h"
#include "monitor/monitor.h"
#include "monitor/record.h"
#include "tools/cli.h"

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	stop_flag = sig;
}

static void usage(FILE *f)
{
	const struct mr_mon_ops *const *b;
	size_t nr, i;

	fprintf(f, "Usage: memregctl record [OPTIONS] (--pid PID | --phys | -- COMMAND [ARG...])\n\n"
		"Monitor which memory is accessed and write one snapshot of the monitoring\n"
		"regions per aggregation interval to a record file (memreg-record(5)), until\n"
		"the command ends, the process exits, --duration passes or SIGINT, SIGTERM or\n"
		"SIGHUP arrives (a command record started then gets SIGTERM). The record is\n"
		"written to FILE.part-XXXXXX, valid at every moment, and renamed to FILE at the\n"
		"end; a previous FILE becomes FILE.old. A refusal, or a record that ends with\n"
		"no snapshot, leaves FILE as it was.\n\n"
		"Exit status: COMMAND's own when it failed (128+N when it died of signal N, the\n"
		"SIGTERM that ends a record aside), 127 if it was not found, 126 if it could\n"
		"not run; else 0, or 1 on an error or when nothing was recorded, 2 on bad usage.\n\n"
		"Options:\n"
		"  -b, --backend NAME   auto (default: the best one whose self-test passes),\n"
		"                       or one of the backends below\n"
		"  -a, --attrs LIST     sample,aggr,update,min_regions,max_regions: times with\n"
		"                       a unit (5ms,100ms,1s; bare numbers are microseconds);\n"
		"                       empty fields keep the backend's default\n"
		"  -o, --output FILE    record file (default memreg.rec; the previous one is\n"
		"                       kept as FILE.old)\n"
		"  -p, --pid PID        monitor a running process\n"
		"      --phys           monitor physical memory (damon only)\n"
		"  -d, --duration TIME  stop after TIME (0.5s, 30s, 2m; bare: seconds)\n"
		"      --replay FILE    the replay backend's source record\n"
		"      --apply          allow backends that change kernel state: damon (global),\n"
		"                       refs and softdirty on a --pid (a COMMAND record starts\n"
		"                       is its own to observe)\n"
		"      --root DIR       read /proc and /sys under DIR (a fixture: never written)\n"
		"  -h, --help           this text\n\nBackends (default intervals sample/aggr/update):\n");
	b = mr_mon_backends(&nr);
	for (i = 0; i < nr; i++) {
		const struct mr_mon_attrs *a = &b[i]->default_attrs;

		fprintf(f, "  %s (%llu us / %llu us / %llu us, %u..%u regions):\n", b[i]->name,
			(unsigned long long)a->sample_us, (unsigned long long)a->aggr_us,
			(unsigned long long)a->update_us, a->min_nr_regions, a->max_nr_regions);
		{
			const char *p = b[i]->help;

			while (*p) {
				const char *nl = strchr(p, '\n');
				int n = nl ? (int)(nl - p) : (int)strlen(p);

				fprintf(f, "      %.*s\n", n, p);
				p += n + (nl ? 1 : 0);
			}
		}
	}
}

struct rec_state {
	struct mr_rec_writer w;
	size_t nr_snaps;
};

static int write_snapshot(struct mr_mon_ctx *ctx, uint64_t time_us, void *arg)
{
	struct rec_state *s = arg;
	int err = mr_rec_write_snapshot(&s->w, time_us, ctx->aggr_nr_samples, ctx->target.regions,
					ctx->target.nr_regions);

	if (!err)
		s->nr_snaps++;
	return err;
}

/*
 * The output. The record is written to FILE.part-XXXXXX beside FILE and renamed over
 * FILE at the end, so a refusal or an empty record leaves FILE as it was; the
 * previous FILE is kept as FILE.old (as perf record does). A FILE that exists and is
 * not a regular file (/dev/null, a FIFO) is written directly: nothing to destroy.
 */
struct rec_output {
	const char *path;		/* FILE */
	char tmp[PATH_MAX];		/* the file being written; "" when direct or done */
	bool direct;
};

static int output_prepare(struct rec_output *o, const char *path)
{
	struct stat st;
	mode_t mask;
	int fd;

	o->path = path;
	o->tmp[0] = '\0';
	o->direct = false;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return mr_error(-EISDIR, "%s: is a directory", path);
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		o->direct = true;
		return 0;
	}
	if (snprintf(o->tmp, sizeof(o->tmp), "%s.part-XXXXXX", path) >= (int)sizeof(o->tmp)) {
		o->tmp[0] = '\0';
		return mr_error(-ENAMETOOLONG, "%s: name too long", path);
	}
	fd = mkostemp(o->tmp, O_CLOEXEC);
	if (fd < 0) {
		int err = -errno;

		mr_error(err, "%s: cannot create %s.part-XXXXXX beside it: %s", path, path,
			 strerror(errno));
		o->tmp[0] = '\0';
		return err;
	}
	/* mkstemp makes 0600; a record is as readable as any file the user creates */
	mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0644 & ~mask))
		mr_cli_warn("%s: chmod: %s", o->tmp, strerror(errno));
	close(fd);
	return 0;
}

static const char *output_writing(const struct rec_output *o)
{
	return o->direct ? o->path : o->tmp;
}

static void output_discard(struct rec_output *o)
{
	if (o->tmp[0])
		unlink(o->tmp);
	o->tmp[0] = '\0';
}

/* Install the finished record as FILE; *kept_old says a previous FILE is now FILE.old. */
static int output_commit(struct rec_output *o, bool *kept_old)
{
	char old[PATH_MAX];

	*kept_old = false;
	if (o->direct)
		return 0;
	if (snprintf(old, sizeof(old), "%s.old", o->path) >= (int)sizeof(old))
		return mr_error(-ENAMETOOLONG, "%s.old: name too long; the record is in %s",
				o->path, o->tmp);
	if (rename(o->path, old) == 0)
		*kept_old = true;
	else if (errno != ENOENT)
		return mr_error(-errno, "%s: cannot keep it as %s: %s; the record is in %s",
				o->path, old, strerror(errno), o->tmp);
	if (rename(o->tmp, o->path))
		return mr_error(-errno, "%s: %s; the record is in %s", o->path, strerror(errno),
				o->tmp);
	o->tmp[0] = '\0';
	return 0;
}

/* Are @a and @b one file (a hard link or another name counts too)? */
static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/*
 * Start COMMAND. An exec failure comes back through a close-on-exec pipe (end of
 * file: the exec worked), so it is told apart from the command's own exit 127.
 * Returns the pid; -1 with *exec_errno set when the exec failed (the child is
 * reaped); -1 with *exec_errno 0 and mr_error set when memreg itself failed.
 */
static pid_t start_command(char **argv, int *exec_errno)
{
	int fds[2], child_errno = 0;
	ssize_t n;
	pid_t pid;

	*exec_errno = 0;
	if (pipe2(fds, O_CLOEXEC)) {
		mr_error(-errno, "pipe: %s", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		mr_error(-errno, "fork: %s", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		close(fds[0]);
		execvp(argv[0], argv);
		child_errno = errno;
		/* the parent reads the reason; should that fail, the status still says it */
		if (write(fds[1], &child_errno, sizeof(child_errno)) != sizeof(child_errno))
			_exit(child_errno == ENOENT ? 127 : 126);
		_exit(127);
	}
	close(fds[1]);
	while ((n = read(fds[0], &child_errno, sizeof(child_errno))) < 0 && errno == EINTR)
		;
	close(fds[0]);
	if (n == (ssize_t)sizeof(child_errno)) {
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		*exec_errno = child_errno ? child_errno : EIO;
		return -1;
	}
	return pid;
}

/*
 * End COMMAND if monitoring stopped first (--duration, a signal) and wait for it.
 * Returns its status as a shell gives it: the exit code, 128 + N for death by signal
 * N; 0 when it died of the SIGTERM record sent it, which was asked for.
 */
static int finish_command(pid_t child, const char *name)
{
	bool stopped_it = false;
	int ws = 0;

	if (mr_proc_alive(child)) {
		kill(child, SIGTERM);
		stopped_it = true;
	}
	while (waitpid(child, &ws, 0) < 0 && errno == EINTR)
		;
	if (WIFSIGNALED(ws)) {
		if (stopped_it && WTERMSIG(ws) == SIGTERM)
			return 0;
		mr_cli_warn("%s killed by signal %d (%s)", name, WTERMSIG(ws),
			    strsignal(WTERMSIG(ws)));
		return 128 + WTERMSIG(ws);
	}
	if (WEXITSTATUS(ws))
		mr_cli_warn("%s exited with status %d", name, WEXITSTATUS(ws));
	return WEXITSTATUS(ws);
}

/* The largest of 1, 2, 5, 10, 20, 50 ... ms not above @max_us (1 ms at least). */
static uint64_t round_interval_us(uint64_t max_us)
{
	static const unsigned steps[] = { 1, 2, 5 };
	uint64_t decade, best = 1000;
	size_t i;

	for (decade = 1000; decade <= max_us; decade *= 10)
		for (i = 0; i < MR_ARRAY_SIZE(steps); i++)
			if (decade * steps[i] <= max_us)
				best = decade * steps[i];
	return best;
}

/* Nothing was recorded: say why, and which --attrs would record something in a run
 * as long as this one (an aggregation in half of it, ten samples per aggregation). */
static void say_nothing_recorded(const struct mr_mon_ctx *ctx, const char *replay,
				 uint64_t ran_us)
{
	const struct mr_mon_attrs *a = &ctx->attrs;
	uint64_t aggr_us = round_interval_us(ran_us / 2), sample_us;
	bool no_sample = ctx->nr_samples == 0;
	char hint[160] = "";

	if (replay) {
		mr_cli_fail("nothing recorded: %s holds no snapshots", replay);
		return;
	}
	if (aggr_us > a->aggr_us)
		aggr_us = a->aggr_us;
	sample_us = round_interval_us(aggr_us / 10);
	if (sample_us > a->sample_us)
		sample_us = a->sample_us;
	if (ran_us >= 10000)	/* below that the target was gone at once: no hint helps */
		snprintf(hint, sizeof(hint), "; record longer, or give shorter intervals with "
			 "--attrs SAMPLE_US,AGGR_US (e.g. --attrs %llu,%llu)",
			 (unsigned long long)sample_us, (unsigned long long)aggr_us);
	mr_cli_fail("nothing recorded: monitoring ran %.3g s, less than one %s interval "
		    "(%.3g s)%s", ran_us / 1e6, no_sample ? "sampling" : "aggregation",
		    (no_sample ? a->sample_us : a->aggr_us) / 1e6, hint);
}

/* --duration: SIGALRM after @us microseconds (0 cancels); alarm(2) has whole seconds only. */
static void set_timer(uint64_t us)
{
	struct itimerval t = { .it_value = { .tv_sec = (time_t)(us / 1000000),
					     .tv_usec = (suseconds_t)(us % 1000000) } };

	setitimer(ITIMER_REAL, &t, NULL);
}

int mr_cmd_record(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "backend", required_argument, NULL, 'b' },
		{ "attrs", required_argument, NULL, 'a' },
		{ "output", required_argument, NULL, 'o' },
		{ "pid", required_argument, NULL, 'p' },
		{ "phys", no_argument, NULL, 'P' },
		{ "duration", required_argument, NULL, 'd' },
		{ "replay", required_argument, NULL, 'R' },
		{ "apply", no_argument, NULL, 'A' },
		{ "root", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *backend = "auto", *attrs = NULL, *out = "memreg.rec", *root = NULL;
	const char *replay = NULL;
	const struct mr_mon_ops *ops;
	struct mr_mon_ctx ctx, want;
	struct rec_state st = { .w = { .fd = -1 } };
	struct rec_output o;
	struct mr_rec_header hdr = { 0 };
	struct sigaction sa = { 0 }, old_hup;
	uint64_t pid = 0, duration_us = 0, mon_start_us, ran_us;
	bool phys = false, apply = false, failed, kept_old = false;
	pid_t child = -1;
	uint64_t start_us = mr_mon_now_us();
	char why[512] = "", note[1024];
	int c, err, exec_errno, cmd_status = 0;

	while ((c = mr_cli_getopt(argc, argv, "+b:a:o:p:d:h", opts)) != -1) {
		switch (c) {
		case 'b': backend = optarg; break;
		case 'a': attrs = optarg; break;
		case 'o': out = optarg; break;
		case 'p':
			if (mr_parse_u64(optarg, &pid) || !pid || pid > INT32_MAX)
				return mr_cli_usage(argv[0], "bad --pid '%s'", optarg);
			break;
		case 'P': phys = true; break;
		case 'd':
			/* a time with its unit (0.5s, 2m), or bare seconds as before */
			if (mr_parse_duration_us(optarg, 1000000, &duration_us) || !duration_us ||
			    duration_us > 365 * 86400000000ull)
				return mr_cli_usage(argv[0], "bad --duration '%s' (a time: 0.5s, 30s, "
						    "2m; bare: seconds)", optarg);
			break;
		case 'R': replay = optarg; break;
		case 'A': apply = true; break;
		case 'r': root = optarg; break;
		case 'h': usage(stdout); return mr_cli_finish(MR_EXIT_OK);
		default: return MR_EXIT_USAGE;
		}
	}
	if ((pid != 0) + phys + (optind < argc) + (replay != NULL) != 1)
		return mr_cli_usage(argv[0], "give exactly one of --pid PID, --phys, --replay FILE "
				    "or -- COMMAND");
	if (replay && strcmp(backend, "auto") && strcmp(backend, "replay"))
		return mr_cli_usage(argv[0], "--replay goes with --backend replay");
	if (replay)
		backend = "replay";
	if (mr_root_set(root))
		return mr_cli_fail("%s", mr_last_error());
	if (pid && !mr_proc_alive((pid_t)pid))
		return mr_cli_fail("no process %llu", (unsigned long long)pid);
	if (replay && same_file(replay, out))
		return mr_cli_fail("--output %s is the --replay source itself; write to another file",
				   out);

	/* what is to be observed, and the consent given for it */
	mr_mon_ctx_init(&want, NULL);
	want.apply = apply;
	want.target.kind = phys ? MR_MON_TARGET_PHYS : MR_MON_TARGET_PROCESS;
	want.target.pid = (pid_t)pid;
	want.target.started = optind < argc;	/* record -- COMMAND */
	if (strcmp(backend, "auto") == 0) {
		ops = mr_mon_backend_auto(&want, why, sizeof(why));
		if (!ops)
			return mr_cli_fail("no backend works here: %s", why);
		fprintf(stderr, "memregctl record: backend auto: using %s%s%s%s\n", ops->name,
			why[0] ? " (passed over: " : "", why, why[0] ? ")" : "");
	} else {
		ops = mr_mon_backend_find(backend);
		if (!ops)
			return mr_cli_usage(argv[0], "unknown backend '%s'", backend);
	}
	if (ops == &mr_mon_ops_uffd)
		return mr_cli_fail("uffd watches only the calling process's own memory; it is "
				   "used through the library (mr_mon_uffd_watch), not by record");
	mr_mon_ctx_init(&ctx, ops);
	if (attrs && mr_mon_attrs_parse(attrs, &ctx.attrs)) {
		mr_mon_ctx_destroy(&ctx);
		return mr_cli_usage(argv[0], "%s", mr_last_error());
	}
	ctx.apply = apply;
	ctx.selftest_passed = strcmp(backend, "auto") == 0;	/* mr_mon_backend_auto ran it */
	ctx.replay_path = replay;
	ctx.stop = &stop_flag;
	ctx.target = want.target;
	if (mr_mon_check_consent(&ctx)) {
		mr_mon_ctx_destroy(&ctx);
		return mr_cli_fail("%s", mr_last_error());
	}
	if (output_prepare(&o, out)) {
		mr_mon_ctx_destroy(&ctx);
		return mr_cli_fail("%s", mr_last_error());
	}

	/* SIGHUP as SIGTERM: a closed terminal ends the record cleanly, file written and
	 * command stopped; unless it was ignored (nohup), which holds for both */
	sa.sa_handler = on_signal;	/* no SA_RESTART: a signal cuts the sleep short */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGALRM, &sa, NULL);	/* --duration */
	if (sigaction(SIGHUP, NULL, &old_hup) || old_hup.sa_handler != SIG_IGN)
		sigaction(SIGHUP, &sa, NULL);

	if (optind < argc) {
		child = start_command(argv + optind, &exec_errno);
		if (child < 0) {
			output_discard(&o);
			mr_mon_ctx_destroy(&ctx);
			if (!exec_errno)
				return mr_cli_fail("%s", mr_last_error());
			/* as env(1) and timeout(1): 127 not found, 126 found but not runnable */
			mr_cli_fail("%s: %s", argv[optind], strerror(exec_errno));
			return mr_cli_finish(exec_errno == ENOENT ? 127 : 126);
		}
		ctx.target.pid = child;
	}

	hdr.kind = ctx.target.kind;
	hdr.pid = ctx.target.pid;
	hdr.attrs = ctx.attrs;
	snprintf(hdr.backend, sizeof(hdr.backend), "%s", ops->name);
	hdr.start_unix_ns = (uint64_t)time(NULL) * 1000000000u;
	err = mr_rec_writer_open(&st.w, output_writing(&o), &hdr);
	if (!err) {
		int n = snprintf(note, sizeof(note), "backend=%s", ops->name);
		int i;

		for (i = optind; i < argc && n > 0 && (size_t)n < sizeof(note); i++)
			n += snprintf(note + n, sizeof(note) - (size_t)n, "%s%s",
				      i == optind ? " command=" : " ", argv[i]);
		err = mr_rec_write_note(&st.w, note);
	}
	if (!err && duration_us)
		set_timer(duration_us);
	mon_start_us = mr_mon_now_us();
	if (!err)
		err = mr_mon_run(&ctx, write_snapshot, &st);
	ran_us = mr_mon_now_us() - mon_start_us;
	set_timer(0);
	if (err)
		mr_cli_fail("%s", mr_last_error());
	if (mr_rec_writer_close(&st.w) && !err) {
		err = -EIO;
		mr_cli_fail("%s", mr_last_error());
	}
	if (child > 0)
		cmd_status = finish_command(child, argv[optind]);
	failed = err != 0;
	if (!st.nr_snaps) {
		/* an empty record is no result: FILE stays as it was */
		if (!err)
			say_nothing_recorded(&ctx, replay, ran_us);
		failed = true;
		output_discard(&o);
	} else if (output_commit(&o, &kept_old)) {
		mr_cli_fail("%s", mr_last_error());	/* the part file stays: it names it */
		failed = true;
	} else {
		/* kept even after an error: the snapshots up to it are valid */
		struct rusage ru;
		double cpu_s = 0, wall_s = (mr_mon_now_us() - start_us) / 1e6;

		/* the monitor's own CPU time, not the command's: what monitoring costs */
		if (!getrusage(RUSAGE_SELF, &ru))
			cpu_s = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
				ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
		fprintf(stderr, "memregctl record: %zu snapshots (%llu samples) by %s to %s%s%s%s\n"
			"memregctl record: monitor cpu %.3f s over %.3f s = %.2f%% of one core\n",
			st.nr_snaps, (unsigned long long)ctx.nr_samples, ops->name, out,
			kept_old ? " (the previous one is now " : "", kept_old ? out : "",
			kept_old ? ".old)" : "",
			cpu_s, wall_s, wall_s > 0 ? 100 * cpu_s / wall_s : 0);
		if (stop_flag == SIGINT || stop_flag == SIGTERM || stop_flag == SIGHUP)
			fprintf(stderr, "memregctl record: stopped by a signal (%s)\n",
				strsignal(stop_flag));
		if (ctx.kernel_cpu_s > 0)
			fprintf(stderr, "memregctl record: kernel sampling cpu %.3f s = %.2f%% of one "
				"core\n", ctx.kernel_cpu_s, wall_s > 0 ? 100 * ctx.kernel_cpu_s / wall_s : 0);
	}
	mr_mon_ctx_destroy(&ctx);
	mr_mon_ctx_destroy(&want);
	/* as perf stat and env(1): the command's own failure first, then memreg's */
	return mr_cli_finish(cmd_status ? cmd_status : failed ? MR_EXIT_ERROR : MR_EXIT_OK);
}
