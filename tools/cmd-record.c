/* memregctl record: monitor a process (or physical memory, or every process of
 * cgroups) with one backend and write its snapshots to record files until the
 * target ends or a signal arrives. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
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
#include "common/targets.h"
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

	fprintf(f, "Usage: memregctl record [OPTIONS] (--pid PID | --phys | -- COMMAND [ARG...])\n"
		"       memregctl record [OPTIONS] -o DIR (--cgroup DIR | --pid PID)...\n\n"
		"Monitor which memory is accessed and write one snapshot of the monitoring\n"
		"regions per aggregation interval to a record file (memreg-record(5)), until\n"
		"the command ends, the process exits, --duration passes or SIGINT, SIGTERM or\n"
		"SIGHUP arrives (a command record started then gets SIGTERM). The record is\n"
		"written to FILE.part-XXXXXX, valid at every moment, and renamed to FILE at the\n"
		"end; a previous FILE becomes FILE.old. A refusal, or a record that ends with\n"
		"no snapshot, leaves FILE as it was.\n\n"
		"With --cgroup (or several --pid), one record per process: every process of\n"
		"each cgroup v2 directory, re-read every 100 ms, and each --pid, is recorded\n"
		"from when it joins until it leaves (exits or moves out), each by its own\n"
		"monitor, into the directory -o DIR (created; default memreg.rec.d) as\n"
		"PID.rec (PID-STARTTIME.rec for a later process with a pid already recorded),\n"
		"each an ordinary record file. It ends on --duration or a signal, or once\n"
		"every cgroup is gone and every --pid ended. Backend auto picks, for every\n"
		"process alike, what it picks for a --pid (never damon: one kdamond cannot\n"
		"follow several processes; damon and replay are refused here).\n\n"
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
		"                       kept as FILE.old); with --cgroup a directory\n"
		"  -p, --pid PID        monitor a running process (repeatable with --cgroup)\n"
		"  -c, --cgroup DIR     every process of the cgroup v2 directory DIR (an absolute\n"
		"                       path), one record each, followed as they join and\n"
		"                       leave (repeatable)\n"
		"      --phys           monitor physical memory (damon only)\n"
		"  -d, --duration TIME  stop after TIME (0.5s, 30s, 2m; bare: seconds)\n"
		"      --replay FILE    the replay backend's source record\n"
		"      --apply          allow backends that change kernel state: damon (global),\n"
		"                       refs and softdirty on a --pid or a cgroup's processes\n"
		"                       (a COMMAND record starts is its own to observe)\n"
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

/*
 * --cgroup (or several --pid): one record per process of the target set, each by a
 * monitor ctx and thread of its own running the unchanged mr_mon_run (as the
 * controller follows a set, controller/run.c). The main thread re-reads the set
 * every SET_POLL_US: a process that joins gets its record from then on, one that
 * leaves (exits, or moves out of its cgroup) is stopped and its record installed.
 */
#define SET_POLL_US 100000u	/* how late a joining process is seen */

struct set_member {
	struct mr_target member;
	struct mr_mon_ctx ctx;
	struct rec_state st;
	struct rec_output o;
	char path[PATH_MAX];
	pthread_t thread;
	volatile sig_atomic_t stop;
	uint64_t start_us;
	bool done;			/* the thread ended (under set_lock) */
	int err;			/* the monitor failed while the process lived */
	char errmsg[512];
};

static pthread_mutex_t set_lock = PTHREAD_MUTEX_INITIALIZER;

static void *member_thread(void *arg)
{
	struct set_member *m = arg;
	int err = mr_mon_run(&m->ctx, write_snapshot, &m->st);

	if (mr_rec_writer_close(&m->st.w) && !err)
		err = -EIO;
	pthread_mutex_lock(&set_lock);
	/* an error after the process ended (its maps gone mid-read) is its end */
	if (err < 0 && err != -ESRCH &&
	    mr_proc_same(m->member.pid, m->member.starttime_ticks) == 0) {
		m->err = err;
		snprintf(m->errmsg, sizeof(m->errmsg), "%s", mr_last_error());
	}
	m->done = true;
	pthread_mutex_unlock(&set_lock);
	return NULL;
}

struct rec_set {
	const char *dir;
	struct mr_mon_ctx *tmpl;	/* ops, attrs, apply for every member's ctx */
	struct mr_targets *targets;
	struct set_member **live;
	size_t nr_live;
	pid_t *seen;			/* pids recorded in this run */
	size_t nr_seen;
	size_t nr_followed, nr_records, nr_empty, nr_failed;
	uint64_t nr_snaps, nr_samples;
};

static double unix_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Start recording @t: DIR/PID.rec (DIR/PID-STARTTIME.rec when this run recorded the
 * pid already: a reused pid), its writer and its monitor thread. */
static int member_start(struct rec_set *rs, const struct mr_target *t)
{
	struct mr_rec_header hdr = { 0 };
	struct set_member *m, **live;
	char who[4200], note[4400];
	sigset_t all, old;
	bool reused = false;
	pid_t *seen;
	size_t i;
	int err;

	for (i = 0; i < rs->nr_seen; i++)
		reused = reused || rs->seen[i] == t->pid;
	live = realloc(rs->live, (rs->nr_live + 1) * sizeof(*live));
	seen = live ? realloc(rs->seen, (rs->nr_seen + 1) * sizeof(*seen)) : NULL;
	if (live)
		rs->live = live;
	if (seen)
		rs->seen = seen;
	m = seen ? calloc(1, sizeof(*m)) : NULL;
	if (!m)
		return mr_error(-ENOMEM, "out of memory");
	m->member = *t;
	if (reused)
		snprintf(m->path, sizeof(m->path), "%s/%d-%llu.rec", rs->dir, (int)t->pid,
			 (unsigned long long)t->starttime_ticks);
	else
		snprintf(m->path, sizeof(m->path), "%s/%d.rec", rs->dir, (int)t->pid);
	m->st.w.fd = -1;
	err = output_prepare(&m->o, m->path);
	if (err) {
		free(m);
		return err;
	}
	mr_mon_ctx_init(&m->ctx, rs->tmpl->ops);
	m->ctx.attrs = rs->tmpl->attrs;
	m->ctx.apply = rs->tmpl->apply;
	m->ctx.selftest_passed = rs->tmpl->selftest_passed;
	m->ctx.stop = &m->stop;
	m->ctx.target.kind = MR_MON_TARGET_PROCESS;
	m->ctx.target.pid = t->pid;
	m->ctx.target.starttime_ticks = t->starttime_ticks;
	hdr.kind = MR_MON_TARGET_PROCESS;
	hdr.pid = t->pid;
	hdr.attrs = m->ctx.attrs;
	hdr.target_starttime_ticks = t->starttime_ticks;
	snprintf(hdr.backend, sizeof(hdr.backend), "%s", rs->tmpl->ops->name);
	/* to the nanosecond: the records of one run line up in time (bench sums them) */
	hdr.start_unix_ns = (uint64_t)unix_now_ns();
	mr_target_text(rs->targets, t, who, sizeof(who));
	snprintf(note, sizeof(note), "backend=%s %s", rs->tmpl->ops->name, who);
	err = mr_rec_writer_open(&m->st.w, output_writing(&m->o), &hdr);
	if (!err)
		err = mr_rec_write_note(&m->st.w, note);
	if (!err) {
		m->start_us = mr_mon_now_us();
		/* signals stay with the main thread, whose sleep they cut short */
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		err = -pthread_create(&m->thread, NULL, member_thread, m);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (err)
			mr_error(err, "pthread_create: %s", strerror(-err));
	}
	if (err) {
		mr_rec_writer_close(&m->st.w);
		output_discard(&m->o);
		mr_mon_ctx_destroy(&m->ctx);
		free(m);
		return err;
	}
	rs->seen[rs->nr_seen++] = t->pid;
	rs->live[rs->nr_live++] = m;
	rs->nr_followed++;
	fprintf(stderr, "memregctl record: %s joined: recording to %s\n", who, m->path);
	return 0;
}

/* Join live[@i]'s thread, install its record (or say why there is none), drop it;
 * @at_end: the record ended, the process did not leave. */
static void member_finish(struct rec_set *rs, size_t i, bool at_end)
{
	const char *how = at_end ? "recorded until the end," : "left after";
	struct set_member *m = rs->live[i];
	double lived_s = (mr_mon_now_us() - m->start_us) / 1e6;
	char who[4200];
	bool kept_old;

	pthread_join(m->thread, NULL);
	mr_target_text(rs->targets, &m->member, who, sizeof(who));
	if (m->err) {
		output_discard(&m->o);
		mr_cli_warn("%s: not recorded: %s", who, m->errmsg);
		rs->nr_failed++;
	} else if (!m->st.nr_snaps) {
		/* a process shorter than one aggregation interval leaves no record */
		output_discard(&m->o);
		fprintf(stderr, "memregctl record: %s %s %.3g s: nothing recorded (less than "
			"one aggregation interval, %.3g s)\n", who, how, lived_s,
			m->ctx.attrs.aggr_us / 1e6);
		rs->nr_empty++;
	} else if (output_commit(&m->o, &kept_old)) {
		mr_cli_warn("%s: %s", who, mr_last_error());	/* the part file stays: named */
		rs->nr_failed++;
	} else {
		fprintf(stderr, "memregctl record: %s %s %.3g s: %zu snapshots in %s%s\n",
			who, how, lived_s, m->st.nr_snaps, m->path,
			kept_old ? " (the previous one is now .old)" : "");
		rs->nr_records++;
		rs->nr_snaps += m->st.nr_snaps;
	}
	rs->nr_samples += m->ctx.nr_samples;
	mr_mon_ctx_destroy(&m->ctx);
	free(m);
	memmove(rs->live + i, rs->live + i + 1, (rs->nr_live - i - 1) * sizeof(*rs->live));
	rs->nr_live--;
}

/* Follow the set until a stop (signal, --duration) or until nothing can join any
 * more; every record installed on the way. 0 or -errno (mr_error set). */
static int record_set(struct rec_set *rs)
{
	int err = 0;
	size_t i, k;

	while (!stop_flag) {
		struct mr_target *joined = NULL, *left = NULL;
		size_t nr_joined = 0, nr_left = 0;
		struct timespec ts = { 0, SET_POLL_US * 1000L };

		for (i = 0; i < rs->nr_live;) {
			bool done;

			pthread_mutex_lock(&set_lock);
			done = rs->live[i]->done;
			pthread_mutex_unlock(&set_lock);
			if (done)
				member_finish(rs, i, false);
			else
				i++;
		}
		err = mr_targets_update(rs->targets, &joined, &nr_joined, &left, &nr_left);
		if (err)
			break;
		/* gone, or moved out of its cgroup: stopped at its next sample */
		for (i = 0; i < nr_left; i++)
			for (k = 0; k < rs->nr_live; k++)
				if (rs->live[k]->member.pid == left[i].pid &&
				    rs->live[k]->member.starttime_ticks == left[i].starttime_ticks)
					rs->live[k]->stop = 1;
		for (i = 0; i < nr_joined && !err; i++)
			err = member_start(rs, &joined[i]);
		free(joined);
		free(left);
		if (err)
			break;
		if (!rs->nr_live && !mr_targets_open(rs->targets))
			break;
		nanosleep(&ts, NULL);	/* a signal cuts it short */
	}
	for (i = 0; i < rs->nr_live; i++)
		rs->live[i]->stop = 1;
	while (rs->nr_live)
		member_finish(rs, rs->nr_live - 1, true);
	free(rs->live);
	free(rs->seen);
	rs->live = NULL;
	rs->seen = NULL;
	return err;
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

/* record --cgroup / several --pid (see record_set). */
static int record_cgroups(const char *prog, const char *backend, const char *attrs,
			  const char *out, const pid_t *pids, size_t nr_pids,
			  const char *const *cgroups, size_t nr_cgroups, bool apply,
			  uint64_t duration_us)
{
	struct mr_targets targets = { 0 };
	struct rec_set rs = { .dir = out, .targets = &targets };
	struct mr_mon_ctx ctx, want;
	const struct mr_mon_ops *ops;
	struct sigaction sa = { 0 }, old_hup;
	uint64_t start_us = mr_mon_now_us();
	struct stat st;
	char why[512] = "";
	int err = 0;
	size_t i;

	/* every member gets what a --pid gets: consent for clear_refs only from --apply;
	 * never damon (want.apply false): one kdamond cannot follow a changing set */
	mr_mon_ctx_init(&want, NULL);
	want.target.kind = MR_MON_TARGET_PROCESS;
	want.target.started = apply;
	if (strcmp(backend, "auto") == 0) {
		ops = mr_mon_backend_auto(&want, why, sizeof(why));
		mr_mon_ctx_destroy(&want);
		if (!ops)
			return mr_cli_fail("no backend works here for --cgroup: %s", why);
		fprintf(stderr, "memregctl record: backend auto: using %s%s%s%s\n", ops->name,
			why[0] ? " (passed over: " : "", why, why[0] ? ")" : "");
	} else {
		mr_mon_ctx_destroy(&want);
		ops = mr_mon_backend_find(backend);
		if (!ops)
			return mr_cli_usage(prog, "unknown backend '%s'", backend);
	}
	if (ops->snapshot)
		return mr_cli_fail("%s: monitors one target per run (%s), not a set of processes "
				   "that changes; with --cgroup or several --pid use refs, softdirty "
				   "or perf (one monitor per process)", ops->name,
				   ops == &mr_mon_ops_damon ? "the one kdamond memreg owns" :
				   "one recorded file");
	if (ops == &mr_mon_ops_uffd)
		return mr_cli_fail("uffd watches only the calling process's own memory; it is "
				   "used through the library (mr_mon_uffd_watch), not by record");
	mr_mon_ctx_init(&ctx, ops);
	if (attrs && mr_mon_attrs_parse(attrs, &ctx.attrs)) {
		mr_mon_ctx_destroy(&ctx);
		return mr_cli_usage(prog, "%s", mr_last_error());
	}
	ctx.apply = apply;
	ctx.selftest_passed = strcmp(backend, "auto") == 0;	/* mr_mon_backend_auto ran it */
	ctx.target.kind = MR_MON_TARGET_PROCESS;
	/* the consent of every member, asked once: the processes are not memreg's */
	if (ops->writes_target && (err = mr_root_may_change("write the clear_refs of the "
							    "processes followed, which memreg "
							    "did not start", apply))) {
		mr_mon_ctx_destroy(&ctx);
		return mr_cli_fail("%s: %s", ops->name, mr_last_error());
	}
	for (i = 0; i < nr_pids && !err; i++)
		err = mr_targets_add_pid(&targets, pids[i]);
	for (i = 0; i < nr_cgroups && !err; i++)
		err = mr_targets_add_cgroup(&targets, cgroups[i]);
	if (!err && ops->selftest && !ctx.selftest_passed) {
		err = ops->selftest(&ctx);
		ctx.selftest_passed = !err;
	}
	if (!err && mkdir(out, 0777) && errno != EEXIST)
		err = mr_error(-errno, "%s: %s", out, strerror(errno));
	if (!err && (stat(out, &st) || !S_ISDIR(st.st_mode)))
		err = mr_error(-ENOTDIR, "%s: not a directory (with --cgroup, -o names the "
			       "directory of the records)", out);
	if (err) {
		mr_targets_free(&targets);
		mr_mon_ctx_destroy(&ctx);
		return mr_cli_fail("%s", mr_last_error());
	}

	sa.sa_handler = on_signal;	/* no SA_RESTART: a signal cuts the sleep short */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGALRM, &sa, NULL);	/* --duration */
	if (sigaction(SIGHUP, NULL, &old_hup) || old_hup.sa_handler != SIG_IGN)
		sigaction(SIGHUP, &sa, NULL);
	rs.tmpl = &ctx;
	if (duration_us)
		set_timer(duration_us);
	err = record_set(&rs);
	set_timer(0);
	if (err)
		mr_cli_fail("%s", mr_last_error());
	{
		struct rusage ru;
		double cpu_s = 0, wall_s = (mr_mon_now_us() - start_us) / 1e6;

		if (!getrusage(RUSAGE_SELF, &ru))
			cpu_s = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
				ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
		fprintf(stderr, "memregctl record: %zu record%s (%llu snapshots, %llu samples) by "
			"%s in %s: %zu process%s followed, %zu too short to record, %zu failed\n"
			"memregctl record: monitor cpu %.3f s over %.3f s = %.2f%% of one core\n",
			rs.nr_records, rs.nr_records == 1 ? "" : "s",
			(unsigned long long)rs.nr_snaps, (unsigned long long)rs.nr_samples, ops->name,
			out, rs.nr_followed, rs.nr_followed == 1 ? "" : "es", rs.nr_empty,
			rs.nr_failed, cpu_s, wall_s, wall_s > 0 ? 100 * cpu_s / wall_s : 0);
		if (stop_flag == SIGINT || stop_flag == SIGTERM || stop_flag == SIGHUP)
			fprintf(stderr, "memregctl record: stopped by a signal (%s)\n",
				strsignal(stop_flag));
	}
	if (!err && !rs.nr_records)
		mr_cli_fail("nothing recorded: %s", rs.nr_followed ? "every process followed was "
			    "too short or failed (see above)" : "no process joined");
	mr_targets_free(&targets);
	mr_mon_ctx_destroy(&ctx);
	return mr_cli_finish(err || rs.nr_failed || !rs.nr_records ? MR_EXIT_ERROR : MR_EXIT_OK);
}

int mr_cmd_record(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "backend", required_argument, NULL, 'b' },
		{ "attrs", required_argument, NULL, 'a' },
		{ "output", required_argument, NULL, 'o' },
		{ "pid", required_argument, NULL, 'p' },
		{ "cgroup", required_argument, NULL, 'c' },
		{ "phys", no_argument, NULL, 'P' },
		{ "duration", required_argument, NULL, 'd' },
		{ "replay", required_argument, NULL, 'R' },
		{ "apply", no_argument, NULL, 'A' },
		{ "root", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *backend = "auto", *attrs = NULL, *out = NULL, *root = NULL;
	const char **cgroups = NULL;
	pid_t *pids = NULL;
	size_t nr_cgroups = 0, nr_pids = 0;
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

	while ((c = mr_cli_getopt(argc, argv, "+b:a:o:p:c:d:h", opts)) != -1) {
		switch (c) {
		case 'b': backend = optarg; break;
		case 'a': attrs = optarg; break;
		case 'o': out = optarg; break;
		case 'p':
			if (mr_parse_u64(optarg, &pid) || !pid || pid > INT32_MAX) {
				free(pids);
				free(cgroups);
				return mr_cli_usage(argv[0], "bad --pid '%s'", optarg);
			}
			{
				pid_t *p = realloc(pids, (nr_pids + 1) * sizeof(*p));

				if (!p)
					abort();
				pids = p;
				pids[nr_pids++] = (pid_t)pid;
			}
			break;
		case 'c': {
			const char **p = realloc(cgroups, (nr_cgroups + 1) * sizeof(*p));

			if (!p)
				abort();
			cgroups = p;
			cgroups[nr_cgroups++] = optarg;
			break;
		}
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
	if (nr_cgroups || nr_pids > 1) {
		if (phys || replay || optind < argc) {
			free(pids);
			free(cgroups);
			return mr_cli_usage(argv[0], "--cgroup and several --pid follow running "
					    "processes: not with --phys, --replay or -- COMMAND "
					    "(start the command inside the cgroup; memregctl bench "
					    "--apply does)");
		}
		if (mr_root_set(root)) {
			free(pids);
			free(cgroups);
			return mr_cli_fail("%s", mr_last_error());
		}
		c = record_cgroups(argv[0], backend, attrs, out ? out : "memreg.rec.d", pids,
				   nr_pids, cgroups, nr_cgroups, apply, duration_us);
		free(pids);
		free(cgroups);
		return c;
	}
	free(pids);
	free(cgroups);
	if (!out)
		out = "memreg.rec";
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
