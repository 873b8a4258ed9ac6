/* The bench harness: runs every workload under every configuration, interleaved,
 * and measures each run from wait4's rusage, /proc/meminfo and the energy sources. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/run.h"
#include "common/root.h"
#include "common/util.h"
#include "power/energy.h"

const struct mr_bench_metric_info mr_bench_metric_info[NR_MR_BENCH_METRICS] = {
#define MR_BENCH_X(id, key, kb, title, fmt) [MR_BENCH_##id] = { key, kb, title, fmt },
	MR_BENCH_METRICS(MR_BENCH_X)
#undef MR_BENCH_X
};

/* The built-in configurations; a new one (control, evac) is a row here and a kind. */
static const struct {
	const char *name;
	enum mr_bench_kind kind;
	const char *note;
} builtins[] = {
	{ "orig", MR_BENCH_ORIG, "the workload as it is" },
	{ "alloc", MR_BENCH_ALLOC, "libmemreg.so preloaded" },
	{ "alloc+profile", MR_BENCH_ALLOC_PROFILE,
	  "libmemreg.so with a profile learned in a separate training run" },
	{ "rec", MR_BENCH_REC,
	  "monitoring only: memregctl record (backend auto) of the workload's top process" },
};

static char *xstrdup(const char *s)
{
	char *d = s ? strdup(s) : NULL;

	if (s && !d)
		abort();
	return d;
}

static double now_mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double now_unix_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void mr_bench_note(struct mr_bench *b, const char *fmt, ...)
{
	va_list ap;

	if (b->nr_notes >= MR_ARRAY_SIZE(b->notes))
		return;
	va_start(ap, fmt);
	vsnprintf(b->notes[b->nr_notes++], sizeof(b->notes[0]), fmt, ap);
	va_end(ap);
}

struct mr_bench_config *mr_bench_find_config(struct mr_bench *b, const char *name)
{
	unsigned i;

	for (i = 0; i < b->nr_configs; i++)
		if (!strcmp(b->configs[i].name, name))
			return &b->configs[i];
	return NULL;
}

struct mr_bench_config *mr_bench_new_config(struct mr_bench *b, const char *name)
{
	struct mr_bench_config *c;

	if (mr_bench_find_config(b, name)) {
		mr_error(-EEXIST, "configuration %s given twice", name);
		return NULL;
	}
	if (b->nr_configs >= MR_BENCH_MAX_CONFIGS) {
		mr_error(-E2BIG, "more than %d configurations", MR_BENCH_MAX_CONFIGS);
		return NULL;
	}
	c = &b->configs[b->nr_configs++];
	memset(c, 0, sizeof(*c));
	c->name = xstrdup(name);
	c->kind = MR_BENCH_USER;
	return c;
}

int mr_bench_add_builtin(struct mr_bench *b, const char *name)
{
	struct mr_bench_config *c;
	unsigned i;

	for (i = 0; i < MR_ARRAY_SIZE(builtins); i++) {
		if (strcmp(builtins[i].name, name))
			continue;
		c = mr_bench_new_config(b, name);
		if (!c)
			return -EINVAL;
		c->kind = builtins[i].kind;
		c->note = xstrdup(builtins[i].note);
		return 0;
	}
	return mr_error(-EINVAL, "unknown configuration '%s' (built in: orig, alloc, "
			"alloc+profile, rec; others from --bench-file)", name);
}

struct mr_bench_workload *mr_bench_new_workload(struct mr_bench *b, const char *name,
						const char *cmd)
{
	struct mr_bench_workload *w;
	unsigned i;

	for (i = 0; i < b->nr_workloads; i++)
		if (!strcmp(b->workloads[i].name, name)) {
			mr_error(-EEXIST, "workload %s given twice", name);
			return NULL;
		}
	if (b->nr_workloads >= MR_BENCH_MAX_WORKLOADS) {
		mr_error(-E2BIG, "more than %d workloads", MR_BENCH_MAX_WORKLOADS);
		return NULL;
	}
	w = &b->workloads[b->nr_workloads++];
	memset(w, 0, sizeof(*w));
	w->name = xstrdup(name);
	w->cmd = xstrdup(cmd);
	return w;
}

static bool is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int mr_bench_locate(struct mr_bench *b)
{
	char exe[PATH_MAX], path[PATH_MAX + 64], *slash;
	const char *env = getenv("MEMREG_LIB");
	ssize_t n;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0)
		return mr_error(-errno, "/proc/self/exe");
	exe[n] = '\0';
	free(b->memregctl);
	b->memregctl = xstrdup(exe);
	free(b->libmemreg);
	b->libmemreg = NULL;
	if (env && *env) {
		if (!is_file(env))
			return mr_error(-ENOENT, "MEMREG_LIB=%s: no such file", env);
		b->libmemreg = xstrdup(env);
		return 0;
	}
	/* A build tree: BUILD/tools/memregctl or BUILD/tools/.libs/memregctl, with the
	 * library in BUILD/.libs. */
	slash = strrchr(exe, '/');
	if (slash) {
		*slash = '\0';
		snprintf(path, sizeof(path), "%s/../.libs/libmemreg.so", exe);
		if (!is_file(path))
			snprintf(path, sizeof(path), "%s/../../.libs/libmemreg.so", exe);
		if (is_file(path)) {
			b->libmemreg = realpath(path, NULL);
			return 0;
		}
	}
	snprintf(path, sizeof(path), "%s/libmemreg.so", MR_LIBDIR);
	if (is_file(path)) {
		b->libmemreg = xstrdup(path);
		return 0;
	}
	return 0;	/* only alloc needs it: it says so */
}

/* A shell command with its output appended to the log; its exit status. */
static int run_shell(struct mr_bench *b, const char *dir, const char *cmd, double *secs)
{
	double t0 = now_mono_s();
	pid_t pid;
	int st;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return mr_error(-errno, "fork");
	if (pid == 0) {
		int fd = open(b->log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		if (dir && chdir(dir) < 0)
			_exit(126);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return mr_error(-errno, "waitpid");
	if (secs)
		*secs = now_mono_s() - t0;
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		return mr_error(-EIO, "`%s` failed (exit %d%s); its output is in %s", cmd,
				WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st),
				WIFEXITED(st) ? "" : ", a signal", b->log_path);
	return 0;
}

/*
 * memused.avg as the DAMOS evaluation measures it: MemTotal - MemFree of the whole
 * machine, sampled each second while the run lasts (and once at its start, so a run
 * shorter than a second has one sample), averaged, KiB.
 */
struct memused {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop;
	double sum_kib;
	unsigned n;
};

static int memused_sample(double *kib)
{
	uint64_t total = 0, avail_free = 0;
	char *data = NULL, *p;
	size_t len;
	bool t = false, f = false;

	if (mr_root_read_file("/proc/meminfo", 1 << 16, &data, &len))
		return -1;
	for (p = data; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		unsigned long long v;

		if (sscanf(p, "MemTotal: %llu", &v) == 1) {
			total = v;
			t = true;
		} else if (sscanf(p, "MemFree: %llu", &v) == 1) {
			avail_free = v;
			f = true;
		}
	}
	free(data);
	if (!t || !f)
		return -1;
	*kib = (double)total - (double)avail_free;
	return 0;
}

static void *memused_thread(void *arg)
{
	struct memused *mu = arg;
	struct timespec until;
	double kib;

	pthread_mutex_lock(&mu->lock);
	clock_gettime(CLOCK_MONOTONIC, &until);
	while (!mu->stop) {
		pthread_mutex_unlock(&mu->lock);
		if (memused_sample(&kib) == 0) {
			mu->sum_kib += kib;
			mu->n++;
		}
		pthread_mutex_lock(&mu->lock);
		until.tv_sec += 1;
		while (!mu->stop &&
		       pthread_cond_timedwait(&mu->cond, &mu->lock, &until) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&mu->lock);
	return NULL;
}

static int memused_start(struct memused *mu)
{
	pthread_condattr_t ca;
	sigset_t all, old;
	int err;

	memset(mu, 0, sizeof(*mu));
	pthread_mutex_init(&mu->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&mu->cond, &ca);
	pthread_condattr_destroy(&ca);
	/* Signals stay with the main thread. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&mu->thread, NULL, memused_thread, mu);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return err ? mr_error(-err, "memused sampling thread") : 0;
}

static double memused_stop(struct memused *mu)
{
	pthread_mutex_lock(&mu->lock);
	mu->stop = true;
	pthread_cond_signal(&mu->cond);
	pthread_mutex_unlock(&mu->lock);
	pthread_join(mu->thread, NULL);
	pthread_mutex_destroy(&mu->lock);
	pthread_cond_destroy(&mu->cond);
	return mu->n ? mu->sum_kib / mu->n : NAN;
}

static void child_env(const struct mr_bench *b, const struct mr_bench_config *c,
		      const struct mr_bench_workload *w)
{
	unsigned i;

	for (i = 0; i < c->nr_env; i++)
		putenv(c->env[i]);
	switch (c->kind) {
	case MR_BENCH_ALLOC_PROFILE:
		if (w->profile)
			setenv("MEMREG_PROFILE", w->profile, 1);
		/* fall through */
	case MR_BENCH_ALLOC:
		setenv("LD_PRELOAD", b->libmemreg, 1);
		break;
	case MR_BENCH_REC:
		break;	/* a preload would go into memregctl record itself */
	default:
		if (c->preload)
			setenv("LD_PRELOAD", c->preload, 1);
		break;
	}
}

/*
 * The shell command that makes the workload's own process the one a record follows:
 * "exec CMD" for a simple command (sh would otherwise fork it and wait), CMD as it is
 * when it has shell syntax a leading exec would change. malloc'd.
 */
static char *exec_form(const char *cmd)
{
	char *s;

	if (strpbrk(cmd, ";&|<>()$`\\\n*?[]{}~=#!")) {
		s = strdup(cmd);
	} else if ((s = malloc(strlen(cmd) + 6))) {
		strcpy(s, "exec ");
		strcat(s, cmd);
	}
	if (!s)
		abort();
	return s;
}

/* One measured (or warm-up) run of workload @wi under configuration @ci into @r. */
static int measure(struct mr_bench *b, struct mr_energy_source *src, unsigned wi,
		   unsigned ci, struct mr_bench_run *r)
{
	const struct mr_bench_workload *w = &b->workloads[wi];
	const struct mr_bench_config *c = &b->configs[ci];
	char recpath[PATH_MAX];
	struct memused mu;
	struct rusage ru;
	double t0, user, sys;
	unsigned i;
	pid_t pid;
	int st, err;

	for (i = 0; i < NR_MR_BENCH_METRICS; i++)
		r->m[i] = NAN;
	r->setup_s = r->teardown_s = NAN;
	if (w->prepare && run_shell(b, w->dir, w->prepare, NULL))
		return mr_error_wrap(-EIO, "%s: preparing", w->name);
	if (c->setup && run_shell(b, w->dir, c->setup, &r->setup_s))
		return mr_error_wrap(-EIO, "%s: setup of %s", w->name, c->name);
	snprintf(recpath, sizeof(recpath), "%s/rec-%u-%u.rec", b->workdir, wi, r->order);
	if (memused_start(&mu))
		return -EAGAIN;
	if (src && mr_energy_start(src)) {
		memused_stop(&mu);
		return mr_error_wrap(-EIO, "energy");
	}
	fflush(NULL);
	r->start_unix_s = now_unix_s();
	t0 = now_mono_s();
	pid = fork();
	if (pid == 0) {
		int fd = open(b->log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
		int in = open("/dev/null", O_RDONLY | O_CLOEXEC);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		if (in >= 0)
			dup2(in, 0);
		if (w->dir && chdir(w->dir) < 0)
			_exit(126);
		child_env(b, c, w);
		if (c->kind == MR_BENCH_REC) {
			execl(b->memregctl, b->memregctl, "record", "-o", recpath, "--",
			      "/bin/sh", "-c", exec_form(w->cmd), (char *)NULL);
			_exit(127);
		}
		execl("/bin/sh", "sh", "-c", w->cmd, (char *)NULL);
		_exit(127);
	}
	err = pid < 0 ? errno : 0;
	/* wait4's rusage is the child's and that of every descendant it waited for:
	 * the tree's times and switches, and the largest single process's peak RSS. */
	while (pid > 0 && wait4(pid, &st, 0, &ru) < 0)
		if (errno != EINTR) {
			err = errno;
			break;
		}
	r->m[MR_BENCH_ELAPSED_S] = now_mono_s() - t0;
	if (src) {
		if (mr_energy_update(src) == 0 && !src->thread_err)
			r->m[MR_BENCH_ENERGY_J] = mr_energy_total_uj(src) / 1e6;
		mr_energy_stop(src);
	}
	r->m[MR_BENCH_MEMUSED_AVG_KIB] = memused_stop(&mu);
	if (err)
		return mr_error(-err, "running %s", w->name);
	user = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
	sys = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	r->m[MR_BENCH_USER_S] = user;
	r->m[MR_BENCH_SYSTEM_S] = sys;
	r->m[MR_BENCH_CPU_S] = user + sys;
	/* GNU time's %P, which kernbench reads: whole percent, truncated. */
	r->m[MR_BENCH_CPU_PCT] = r->m[MR_BENCH_ELAPSED_S] > 0 ?
		floor((user + sys) * 100 / r->m[MR_BENCH_ELAPSED_S]) : NAN;
	r->m[MR_BENCH_INVOL_CSW] = (double)ru.ru_nivcsw;
	r->m[MR_BENCH_VOL_CSW] = (double)ru.ru_nvcsw;
	r->m[MR_BENCH_MAXRSS_KIB] = (double)ru.ru_maxrss;
	r->exit_status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	if (c->teardown && run_shell(b, w->dir, c->teardown, &r->teardown_s))
		return mr_error_wrap(-EIO, "%s: teardown of %s", w->name, c->name);
	if (r->exit_status)
		return mr_error(-EIO, "%s under %s exited with status %d; its output is in %s",
				w->name, c->name, r->exit_status, b->log_path);
	return 0;
}

/*
 * alloc+profile's training run, apart from the measured ones: the workload under
 * libmemreg.so writing its site map, recorded by `memregctl record`, then
 * `memregctl profile` turns both into the profile the measured runs read.
 */
static int train(struct mr_bench *b, unsigned wi)
{
	struct mr_bench_workload *w = &b->workloads[wi];
	char rec[PATH_MAX], map[PATH_MAX], prof[PATH_MAX], *cmd;
	size_t len;
	int ret;

	snprintf(rec, sizeof(rec), "%s/train-%u.rec", b->workdir, wi);
	snprintf(map, sizeof(map), "%s/train-%u.map", b->workdir, wi);
	snprintf(prof, sizeof(prof), "%s/train-%u.profile", b->workdir, wi);
	len = strlen(b->memregctl) * 2 + strlen(b->libmemreg) + strlen(w->cmd) * 4 + 3 * PATH_MAX;
	cmd = malloc(len);
	if (!cmd)
		return mr_error(-ENOMEM, "training command");
	/* The workload goes in as one argument: single quotes, each ' as '\''. */
	{
		char *form = exec_form(w->cmd);
		char *q = malloc(strlen(form) * 4 + 3), *o = q;
		const char *s;

		if (!q) {
			free(form);
			free(cmd);
			return mr_error(-ENOMEM, "training command");
		}
		*o++ = '\'';
		for (s = form; *s; s++) {
			if (*s == '\'') {
				memcpy(o, "'\\''", 4);
				o += 4;
			} else {
				*o++ = *s;
			}
		}
		*o++ = '\'';
		*o = '\0';
		snprintf(cmd, len, "'%s' record -o '%s' -- env LD_PRELOAD='%s' "
			 "MEMREG_SITE_MAP='%s' /bin/sh -c %s && '%s' profile '%s' "
			 "--site-map '%s' -o '%s'",
			 b->memregctl, rec, b->libmemreg, map, q, b->memregctl, rec, map, prof);
		free(q);
		free(form);
	}
	ret = run_shell(b, w->dir, cmd, NULL);
	free(cmd);
	if (ret)
		return mr_error_wrap(-EIO, "%s: alloc+profile's training run", w->name);
	free(w->profile);
	w->profile = xstrdup(prof);
	return 0;
}

static void progress(const struct mr_bench *b, unsigned done, unsigned total,
		     double elapsed_s, const struct mr_bench_run *next)
{
	double eta = done ? elapsed_s / done * (total - done) : NAN;

	if (!b->progress)
		return;
	if (!next) {
		fprintf(stderr, "\r\033[K");
		return;
	}
	fprintf(stderr, "\r\033[Kbench: run %u of %u: %s%s under %s", done + 1, total,
		b->workloads[next->workload].name, next->warmup ? " (warm-up)" : "",
		b->configs[next->config].name);
	if (!isnan(eta))
		fprintf(stderr, ", ETA %.0f s", eta);
	fflush(stderr);
}

static void fill_identity(struct mr_bench *b)
{
	struct utsname u;
	time_t t = time(NULL);
	struct tm tm;

	localtime_r(&t, &tm);
	strftime(b->date, sizeof(b->date), "%a %b %e %H:%M:%S %Z %Y", &tm);
	if (uname(&u) == 0)
		snprintf(b->kernel, sizeof(b->kernel), "%s", u.release);
}

int mr_bench_run_all(struct mr_bench *b)
{
	struct mr_energy_source src;
	bool have_src = false;
	unsigned *order, total, done = 0, wi, ci, i, k;
	double t_start;
	int ret = 0;

	if (!b->nr_configs || !b->nr_workloads || !b->runs)
		return mr_error(-EINVAL, "nothing to run");
	for (ci = 0; ci < b->nr_configs; ci++) {
		enum mr_bench_kind kind = b->configs[ci].kind;

		if ((kind == MR_BENCH_ALLOC || kind == MR_BENCH_ALLOC_PROFILE) && !b->libmemreg)
			return mr_error(-ENOENT, "%s needs libmemreg.so: not found beside %s nor in "
					"%s (set MEMREG_LIB)", b->configs[ci].name,
					b->memregctl, MR_LIBDIR);
		if (kind == MR_BENCH_REC || kind == MR_BENCH_ALLOC_PROFILE)
			mr_bench_note(b, "%s records the workload's top process only: memregctl "
				      "record has no --cgroup yet, so the processes it starts "
				      "are not monitored", b->configs[ci].name);
	}
	fill_identity(b);
	memset(&src, 0, sizeof(src));
	if (mr_energy_open(&src, "auto", NULL) == 0) {
		have_src = true;
		snprintf(b->energy_source, sizeof(b->energy_source), "%s", src.ops->name);
		snprintf(b->energy_detail, sizeof(b->energy_detail), "%s", src.detail);
	} else {
		snprintf(b->energy_source, sizeof(b->energy_source), "none");
		mr_bench_note(b, "no DRAM energy: %s", mr_last_error());
	}
	mr_bench_note(b, "peak RSS is the largest single process's (wait4's ru_maxrss), "
		      "not the sum over the process tree");
	mr_bench_note(b, "regions holding the workload's data: not measured yet");

	total = 0;
	for (wi = 0; wi < b->nr_workloads; wi++)
		total += b->nr_configs * ((b->workloads[wi].no_warmup ? 0 : b->warmup) + b->runs);
	b->run = calloc(total, sizeof(*b->run));
	order = calloc((size_t)b->nr_configs * b->runs, sizeof(*order));
	if (!b->run || !order) {
		free(order);
		ret = mr_error(-ENOMEM, "runs");
		goto out;
	}
	mr_bench_interleave(b->nr_configs, b->runs, order);
	/* Every run's slot first, in order: warm-up rounds, then the measured ones. */
	for (wi = 0, k = 0; wi < b->nr_workloads; wi++) {
		for (i = 0; i < (b->workloads[wi].no_warmup ? 0 : b->warmup); i++)
			for (ci = 0; ci < b->nr_configs; ci++, k++) {
				b->run[k].workload = wi;
				b->run[k].config = ci;
				b->run[k].round = i;
				b->run[k].warmup = true;
			}
		for (i = 0; i < b->nr_configs * b->runs; i++, k++) {
			b->run[k].workload = wi;
			b->run[k].config = order[i];
			b->run[k].round = i / b->nr_configs;
		}
	}
	free(order);
	for (k = 0; k < total; k++)
		b->run[k].order = k;
	b->nr_planned = total;
	t_start = now_mono_s();
	for (k = 0; k < total; k++) {
		struct mr_bench_run *r = &b->run[k];

		/* The training run comes before the workload's first run, and is not one. */
		if (r->round == 0 && b->configs[r->config].kind == MR_BENCH_ALLOC_PROFILE &&
		    !b->workloads[r->workload].profile) {
			if (b->progress)
				fprintf(stderr, "\r\033[Kbench: %s: alloc+profile's training run",
					b->workloads[r->workload].name);
			ret = train(b, r->workload);
			if (ret)
				break;
		}
		progress(b, done, total, now_mono_s() - t_start, r);
		ret = measure(b, have_src ? &src : NULL, r->workload, r->config, r);
		if (ret)
			break;
		b->nr_runs = ++done;
		/* A bench stopped halfway keeps the runs it finished. */
		if (b->report_dir && done < total && mr_bench_write_report(b, b->report_dir))
			mr_clear_error();
	}
	progress(b, done, total, 0, NULL);
out:
	if (have_src)
		mr_energy_close(&src);
	return ret;
}

void mr_bench_summary_of(const struct mr_bench *b, unsigned workload, unsigned config,
			 enum mr_bench_metric m, struct mr_bench_summary *s)
{
	double x[4096];
	unsigned n = 0, k;

	if (workload < b->nr_workloads) {
		for (k = 0; k < b->nr_runs && n < MR_ARRAY_SIZE(x); k++) {
			const struct mr_bench_run *r = &b->run[k];

			if (!r->warmup && r->workload == workload && r->config == config &&
			    !isnan(r->m[m]))
				x[n++] = r->m[m];
		}
	} else {
		/* total: per round, the sum over every workload (NaN if one lacks it). */
		unsigned round;

		for (round = 0; round < b->runs && round < MR_ARRAY_SIZE(x); round++) {
			double sum = 0;
			unsigned seen = 0;

			for (k = 0; k < b->nr_runs; k++) {
				const struct mr_bench_run *r = &b->run[k];

				if (!r->warmup && r->config == config && r->round == round) {
					sum += r->m[m];
					seen++;
				}
			}
			if (seen == b->nr_workloads && !isnan(sum))
				x[n++] = sum;
		}
	}
	mr_bench_summarize(x, n, s);
}

void mr_bench_free(struct mr_bench *b)
{
	unsigned i, j;

	for (i = 0; i < b->nr_configs; i++) {
		struct mr_bench_config *c = &b->configs[i];

		free(c->name);
		for (j = 0; j < c->nr_env; j++)
			free(c->env[j]);
		free(c->preload);
		free(c->setup);
		free(c->teardown);
		free(c->note);
	}
	for (i = 0; i < b->nr_workloads; i++) {
		struct mr_bench_workload *w = &b->workloads[i];

		free(w->name);
		free(w->cmd);
		free(w->prepare);
		free(w->label);
		free(w->dir);
		free(w->profile);
	}
	free(b->context);
	free(b->memregctl);
	free(b->libmemreg);
	free(b->workdir);
	free(b->log_path);
	free(b->run);
	memset(b, 0, sizeof(*b));
}
