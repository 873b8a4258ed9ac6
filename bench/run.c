/* The bench harness: runs every workload under every configuration, interleaved,
 * and measures each run from wait4's rusage, /proc/meminfo and the energy sources. */
#include "config.h"

#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
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

#include <json-c/json.h>

#include "bench/run.h"
#include "common/cgroup.h"
#include "common/root.h"
#include "common/util.h"
#include "monitor/monitor.h"
#include "monitor/record.h"
#include "monitor/report.h"
#include "power/energy.h"
#include "power/model.h"
#include "regions/placement.h"

/* The machine's region map and its power model, loaded once per bench. */
struct bench_regions {
	struct mr_region_map map;
	struct mr_power_model model;
};

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
	  "monitoring only: memregctl record (backend auto) of the workload: every process "
	  "(its cgroup) with --apply, else its top process" },
	{ "control", MR_BENCH_CONTROL,
	  "the controller: memregctl control with the schemes given" },
	{ "evac", MR_BENCH_EVAC,
	  "memregctl evacuate --apply of a plan before each run, --undo after" },
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

/* A note when the bench runs on fewer CPUs than are online (started under taskset,
 * say): every run inherits that affinity, every configuration alike. A VM's CPUs can
 * run at different speeds (docs/bench.md, "One CPU"), so the tables say where. */
static void note_affinity(struct mr_bench *b)
{
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	char list[256] = "";
	size_t len = 0;
	cpu_set_t set;
	int c, n;

	if (online < 1 || sched_getaffinity(0, sizeof(set), &set) || CPU_COUNT(&set) >= online)
		return;
	n = CPU_COUNT(&set);
	for (c = 0; c < CPU_SETSIZE && len < sizeof(list) - 16; c++) {
		int end = c;

		if (!CPU_ISSET(c, &set))
			continue;
		while (end + 1 < CPU_SETSIZE && CPU_ISSET(end + 1, &set))
			end++;
		len += (size_t)snprintf(list + len, sizeof(list) - len, end > c ? "%s%d-%d" : "%s%d",
					len ? "," : "", c, end);
		c = end;
	}
	mr_bench_note(b, "runs on CPU%s %s of %ld online (the affinity memregctl bench was "
		      "started with), every configuration alike", n > 1 ? "s" : "", list, online);
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
			"alloc+profile, rec, control, evac; others from --bench-file)", name);
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
		/* an installed tree moved from its configured prefix (make install
		 * prefix=/usr DESTDIR=..., as the lab stages it): PREFIX/bin beside
		 * PREFIX/lib */
		if (!is_file(path))
			snprintf(path, sizeof(path), "%s/../lib/libmemreg.so", exe);
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

/* In a child of the bench: standard output and error appended to the log, in @dir
 * (NULL: here; one that cannot be entered exits 126). */
static void child_to_log(const struct mr_bench *b, const char *dir)
{
	int fd = open(b->log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);

	if (fd >= 0) {
		dup2(fd, 1);
		dup2(fd, 2);
	}
	if (dir && chdir(dir) < 0)
		_exit(126);
}

/* Run @argv in @dir (NULL: here), its output in the log; @secs (NULL: not wanted)
 * gets how long it took. @what names it in the error. */
static int run_argv(struct mr_bench *b, const char *dir, char *const argv[], const char *what,
		    double *secs)
{
	double t0 = now_mono_s();
	pid_t pid;
	int st;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return mr_error(-errno, "fork");
	if (pid == 0) {
		child_to_log(b, dir);
		execvp(argv[0], argv);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return mr_error(-errno, "waitpid");
	if (secs)
		*secs = now_mono_s() - t0;
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		return mr_error(-EIO, "%s failed (exit %d%s); its output is in %s", what,
				WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st),
				WIFEXITED(st) ? "" : ", a signal", b->log_path);
	return 0;
}

/* A shell command with its output appended to the log; its exit status. */
static int run_shell(struct mr_bench *b, const char *dir, const char *cmd, double *secs)
{
	char *argv[] = { "/bin/sh", "-c", (char *)cmd, NULL };
	char what[256];

	snprintf(what, sizeof(what), "`%s`", cmd);
	return run_argv(b, dir, argv, what, secs);
}

/*
 * The sampler: memused.avg as the DAMOS evaluation measures it (MemTotal - MemFree of
 * the whole machine, sampled each second while the run lasts, and once at its start,
 * so a run shorter than a second has one sample, averaged, KiB), and every
 * SAMPLE_MS where the workload's processes hold their pages: the resident bytes of
 * each process of its tree by region (mr_where_pid: pagemap frames, as `memregctl
 * where`), added up. The last sample taken before the workload ended is "the
 * regions holding its data" (at the end its memory is gone: a sample is the closest).
 */
#define SAMPLE_MS		500
#define MEMUSED_EVERY		(1000 / SAMPLE_MS)
#define TREE_MAX_PIDS		4096

struct sampler {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop;
	double sum_kib;
	unsigned n;
	/* where the workload's pages are (map NULL: not sampled) */
	const struct mr_region_map *map;
	pid_t pid;		/* the workload's process */
	const char *cgroup;	/* the run's cgroup: its members are the workload */
	bool skip_top;		/* @pid is memregctl record/control: count its children only */
	uint64_t *bytes;	/* last sample, per region (map->nr_regions) */
	bool have_bytes;	/* a sample placed every byte on a region */
	bool unplaced;		/* a sample could not place bytes (frames hidden) */
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

/* Add the pids listed in @file (numbers separated by blanks or newlines) to @pids;
 * an unreadable file (a process or group that is gone) adds none. */
static void read_pids(const char *file, pid_t *pids, unsigned *nr)
{
	char *data = NULL, *p, *end;

	if (mr_root_read_file(file, 1 << 20, &data, NULL)) {
		mr_clear_error();
		return;
	}
	for (p = data; *nr < TREE_MAX_PIDS; p = end) {
		long v = strtol(p, &end, 10);

		if (end == p)
			break;
		if (v > 0)
			pids[(*nr)++] = (pid_t)v;
	}
	free(data);
}

/* Add the children of every thread of @pid (/proc/PID/task/TID/children) to @pids. */
static void tree_children(pid_t pid, pid_t *pids, unsigned *nr)
{
	char path[64];
	struct dirent *de;
	DIR *d;

	d = mr_root_opendir(mr_pathf(path, sizeof(path), "/proc/%d/task", (int)pid));
	if (!d) {
		mr_clear_error();
		return;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		read_pids(mr_pathf(path, sizeof(path), "/proc/%d/task/%s/children", (int)pid,
				   de->d_name), pids, nr);
	}
	closedir(d);
}

/* The processes of the cgroup v2 directory @dir (its cgroup.procs) into @pids. */
static void cgroup_members(const char *dir, pid_t *pids, unsigned *nr)
{
	char path[PATH_MAX];

	read_pids(mr_pathf(path, sizeof(path), "%s/cgroup.procs", dir), pids, nr);
}

/* One placement sample of the workload's processes (its tree, or its cgroup's
 * members) into @s->bytes. */
static void where_sample(struct sampler *s)
{
	pid_t *pids = malloc(TREE_MAX_PIDS * sizeof(*pids));
	uint64_t *sum;
	unsigned nr = 0, i, k, counted = 0;
	bool unplaced = false;

	if (!pids)
		return;
	if (s->cgroup) {
		cgroup_members(s->cgroup, pids, &nr);
	} else {
		pids[nr++] = s->pid;
		for (i = 0; i < nr && nr < TREE_MAX_PIDS; i++)
			tree_children(pids[i], pids, &nr);
	}
	sum = calloc(s->map->nr_regions ? s->map->nr_regions : 1, sizeof(*sum));
	if (!sum) {
		free(pids);
		return;
	}
	for (i = s->skip_top ? 1 : 0; i < nr; i++) {
		struct mr_where w;

		/* a process that ended meanwhile is not counted */
		if (mr_where_pid(s->map, pids[i], &w)) {
			mr_clear_error();
			continue;
		}
		for (k = 0; k < s->map->nr_regions; k++)
			sum[k] += w.region_bytes[k];
		unplaced = unplaced || w.unplaced_bytes;
		counted++;
		mr_where_destroy(&w);
	}
	if (counted) {
		pthread_mutex_lock(&s->lock);
		memcpy(s->bytes, sum, s->map->nr_regions * sizeof(*sum));
		s->have_bytes = true;
		s->unplaced = unplaced;
		pthread_mutex_unlock(&s->lock);
	}
	free(sum);
	free(pids);
}

static void *sampler_thread(void *arg)
{
	struct sampler *s = arg;
	struct timespec until;
	unsigned tick;
	double kib;

	pthread_mutex_lock(&s->lock);
	clock_gettime(CLOCK_MONOTONIC, &until);
	for (tick = 0; !s->stop; tick++) {
		pthread_mutex_unlock(&s->lock);
		if (tick % MEMUSED_EVERY == 0 && memused_sample(&kib) == 0) {
			s->sum_kib += kib;
			s->n++;
		}
		/* the first tick is the fork: nothing of the workload's is there yet */
		if (s->map && tick)
			where_sample(s);
		pthread_mutex_lock(&s->lock);
		until.tv_nsec += SAMPLE_MS * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		while (!s->stop &&
		       pthread_cond_timedwait(&s->cond, &s->lock, &until) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

static int sampler_start(struct sampler *s, const struct mr_region_map *map, pid_t pid,
			 const char *cgroup, bool skip_top)
{
	pthread_condattr_t ca;
	sigset_t all, old;
	int err;

	memset(s, 0, sizeof(*s));
	s->pid = pid;
	s->cgroup = cgroup;
	s->skip_top = skip_top;
	if (map && (s->bytes = calloc(map->nr_regions ? map->nr_regions : 1,
				      sizeof(*s->bytes))))
		s->map = map;
	pthread_mutex_init(&s->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cond, &ca);
	pthread_condattr_destroy(&ca);
	/* Signals stay with the main thread. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&s->thread, NULL, sampler_thread, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		free(s->bytes);
	return err ? mr_error(-err, "sampling thread") : 0;
}

/* "0-2,5": the ids of the regions with bytes, in @buf. The count. */
static unsigned region_list(const uint64_t *bytes, unsigned nr, char *buf, size_t len)
{
	unsigned i, j, count = 0;
	size_t used = 0;

	buf[0] = '\0';
	for (i = 0; i < nr; i = j) {
		if (!bytes[i]) {
			j = i + 1;
			continue;
		}
		for (j = i + 1; j < nr && bytes[j]; j++)
			;
		count += j - i;
		if (used < len)
			used += (size_t)snprintf(buf + used, len - used, "%s%u", used ? "," : "", i);
		if (j - i > 1 && used < len)
			used += (size_t)snprintf(buf + used, len - used, "-%u", j - 1);
	}
	return count;
}

/* Stop sampling: memused.avg in @r, and the regions of the last placement sample. */
static void sampler_stop(struct sampler *s, struct mr_bench_run *r)
{
	pthread_mutex_lock(&s->lock);
	s->stop = true;
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->thread, NULL);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->cond);
	r->m[MR_BENCH_MEMUSED_AVG_KIB] = s->n ? s->sum_kib / s->n : NAN;
	r->regions_held[0] = '\0';
	/* bytes the frames could not place (numa_maps on a node of several regions)
	 * leave the count unknown */
	if (s->map && s->have_bytes && !s->unplaced)
		r->m[MR_BENCH_DATA_REGIONS] = region_list(s->bytes, s->map->nr_regions,
							  r->regions_held,
							  sizeof(r->regions_held));
	free(s->bytes);
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
	case MR_BENCH_CONTROL:
		break;	/* a preload would go into memregctl record/control itself */
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

/*
 * --phys: `memregctl record --phys --backend damon --apply` beside the run, started
 * before it and stopped (SIGINT) after it, apart from its timing. Ready when its
 * record file (FILE.part-XXXXXX) exists: the kdamond runs. The pid, or -errno.
 */
static pid_t phys_start(struct mr_bench *b, const char *path)
{
	char dir[PATH_MAX], base[PATH_MAX], *slash;
	double until = now_mono_s() + 60;
	pid_t pid;
	int st;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	*slash = '\0';
	snprintf(base, sizeof(base), "%s.part-", slash + 1);
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return mr_error(-errno, "fork");
	if (pid == 0) {
		child_to_log(b, NULL);
		execl(b->memregctl, b->memregctl, "record", "--phys", "--backend", "damon",
		      "--apply", "-o", path, (char *)NULL);
		_exit(127);
	}
	while (now_mono_s() < until) {
		struct dirent *de;
		DIR *d = opendir(dir);
		bool ready = false;

		while (d && (de = readdir(d)))
			ready = ready || !strncmp(de->d_name, base, strlen(base));
		if (d)
			closedir(d);
		if (ready)
			return pid;
		if (waitpid(pid, &st, WNOHANG) == pid)
			return mr_error(-EIO, "--phys: memregctl record --phys ended before it "
					"recorded (exit %d); its output is in %s",
					WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st),
					b->log_path);
		usleep(50000);
	}
	kill(pid, SIGINT);
	waitpid(pid, &st, 0);
	return mr_error(-ETIMEDOUT, "--phys: memregctl record --phys did not start in 60 s; "
			"its output is in %s", b->log_path);
}

/* Stop the physical record and put its residency into @r: the share of region-time
 * idle (low power) and the model's energy with that residency. */
static int phys_finish(struct mr_bench *b, pid_t pid, const char *path,
		       struct mr_bench_run *r)
{
	struct bench_regions *br = b->regions;
	struct mr_region_energy *e;
	struct mr_residency res;
	uint64_t idle = 0, all = 0;
	double scale, uj = 0;
	unsigned i;
	int st;

	kill(pid, SIGINT);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return mr_error(-errno, "waitpid");
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		return mr_error(-EIO, "--phys: memregctl record --phys failed (exit %d); its "
				"output is in %s", WIFEXITED(st) ? WEXITSTATUS(st) :
				128 + WTERMSIG(st), b->log_path);
	if (!br)
		return 0;
	if (mr_residency_read_record(path, &br->map, &res))
		return mr_error_wrap(-EIO, "--phys: %s", path);
	for (i = 0; i < res.nr_regions; i++) {
		idle += res.regions[i].idle_intervals;
		all += res.regions[i].intervals;
	}
	if (all)
		r->m[MR_BENCH_LOW_POWER_PCT] = 100.0 * (double)idle / (double)all;
	e = calloc(br->model.nr_regions ? br->model.nr_regions : 1, sizeof(*e));
	if (e && mr_power_model_energy(&br->model, &res, r->m[MR_BENCH_ELAPSED_S], -1, e,
				       &scale) == 0) {
		for (i = 0; i < br->model.nr_regions; i++)
			uj += e[i].energy_uj;
		r->m[MR_BENCH_MODEL_ENERGY_J] = uj / 1e6;
	}
	mr_clear_error();
	free(e);
	mr_residency_free(&res);
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* The access suite's accuracy: the median working-set size of a rec run, a region
 * counted when accessed in at least WSS_MIN_ACCESSES samples of an aggregation (as
 * docs/monitor.md and the demo read stairs). @path is the record of the top process,
 * or the directory of a cgroup run's records (memregctl record --cgroup): there the
 * working set of an aggregation interval is the sum over every process's record
 * (snapshots placed in time by their record's start, to the nanosecond). */
#define WSS_MIN_ACCESSES 3

struct wss_point {
	uint64_t bucket;	/* absolute time / aggregation interval */
	uint64_t bytes;
};

static int cmp_point(const void *a, const void *b)
{
	const struct wss_point *x = a, *y = b;

	return (x->bucket > y->bucket) - (x->bucket < y->bucket);
}

/* Add every snapshot's working set of record @file to @pts; @aggr_us is the first
 * record's aggregation interval (every record of a run has the same). */
static void wss_points(const char *file, struct wss_point **pts, size_t *nr,
		       uint64_t *aggr_us)
{
	struct mr_rec rec;
	uint64_t *wss = NULL;
	size_t i;

	memset(&rec, 0, sizeof(rec));
	if (mr_rec_load(file, &rec) == 0 && rec.nr_snaps &&
	    mr_report_wss(&rec, WSS_MIN_ACCESSES, &wss) == 0) {
		struct wss_point *p = realloc(*pts, (*nr + rec.nr_snaps) * sizeof(*p));

		if (!*aggr_us)
			*aggr_us = rec.hdr.attrs.aggr_us ? rec.hdr.attrs.aggr_us : 1;
		for (i = 0; p && i < rec.nr_snaps; i++) {
			/* the snapshot's time is its interval's end */
			uint64_t t_us = rec.hdr.start_unix_ns / 1000 + rec.snaps[i].time_us;

			p[*nr + i] = (struct wss_point){ (t_us - 1) / *aggr_us, wss[i] };
		}
		if (p) {
			*pts = p;
			*nr += rec.nr_snaps;
		}
	}
	mr_clear_error();
	free(wss);
	mr_rec_free(&rec);
}

static void rec_wss(const char *path, bool is_dir, struct mr_bench_run *r)
{
	struct wss_point *pts = NULL;
	uint64_t aggr_us = 0, *sums;
	size_t nr = 0, nr_sums = 0, i;
	char file[PATH_MAX + 256];	/* the directory and a d_name */
	struct dirent *de;
	DIR *d;

	if (!is_dir) {
		wss_points(path, &pts, &nr, &aggr_us);
	} else if ((d = opendir(path))) {
		while ((de = readdir(d))) {
			size_t n = strlen(de->d_name);

			if (n > 4 && !strcmp(de->d_name + n - 4, ".rec")) {
				snprintf(file, sizeof(file), "%s/%s", path, de->d_name);
				wss_points(file, &pts, &nr, &aggr_us);
			}
		}
		closedir(d);
	}
	sums = nr ? calloc(nr, sizeof(*sums)) : NULL;
	if (sums) {
		/* one sum per aggregation interval over every process recorded in it */
		qsort(pts, nr, sizeof(*pts), cmp_point);
		for (i = 0; i < nr; i++) {
			if (i && pts[i].bucket == pts[i - 1].bucket)
				sums[nr_sums - 1] += pts[i].bytes;
			else
				sums[nr_sums++] = pts[i].bytes;
		}
		qsort(sums, nr_sums, sizeof(*sums), cmp_u64);
		r->m[MR_BENCH_WSS_P50_MIB] = (double)mr_report_percentile(sums, nr_sums, 50) /
					     (1024.0 * 1024.0);
	}
	free(sums);
	free(pts);
}

/* The evacuate command: MEMREG_BENCH_EVACUATE (tests put a stand-in there), else
 * this memregctl's `evacuate`. malloc'd. */
static char *evacuate_cmd(const struct mr_bench *b, const char *args, const char *plan)
{
	const char *env = getenv("MEMREG_BENCH_EVACUATE");
	char *cmd;

	if (env && *env) {
		if (asprintf(&cmd, "%s %s '%s'", env, args, plan) < 0)
			abort();
	} else if (asprintf(&cmd, "'%s' evacuate %s '%s'", b->memregctl, args, plan) < 0) {
		abort();
	}
	return cmd;
}

/* evac's setup: `evacuate --apply --json PLAN`, timed; what it moved from its JSON. */
static int evac_setup(struct mr_bench *b, const struct mr_bench_config *c,
		      const struct mr_bench_workload *w, struct mr_bench_run *r)
{
	char out[PATH_MAX + 16], *cmd, *full;
	struct json_object *doc, *v;
	int ret;

	snprintf(out, sizeof(out), "%s/evacuate-%u.json", b->workdir, r->order);
	cmd = evacuate_cmd(b, "--apply --json", c->plan);
	if (asprintf(&full, "%s >'%s'", cmd, out) < 0)
		abort();
	free(cmd);
	ret = run_shell(b, w->dir, full, &r->setup_s);
	free(full);
	if (ret)
		return mr_error_wrap(-EIO, "%s: evac's setup (memregctl evacuate --apply %s)",
				     w->name, c->plan);
	/* the plan's totals: "bytes_moved" and "seconds" (memregctl-evacuate(1)) */
	doc = json_object_from_file(out);
	if (doc && json_object_object_get_ex(doc, "bytes_moved", &v))
		r->evac_bytes = json_object_get_double(v);
	if (doc && json_object_object_get_ex(doc, "seconds", &v))
		r->evac_s = json_object_get_double(v);
	json_object_put(doc);
	return 0;
}

static int evac_teardown(struct mr_bench *b, const struct mr_bench_config *c,
			 const struct mr_bench_workload *w, struct mr_bench_run *r)
{
	char *cmd = evacuate_cmd(b, "--undo --apply --json", c->plan), *full;
	int ret;

	if (asprintf(&full, "%s >/dev/null", cmd) < 0)
		abort();
	free(cmd);
	ret = run_shell(b, w->dir, full, &r->teardown_s);
	free(full);
	return ret ? mr_error_wrap(-EIO, "%s: evac's teardown (memregctl evacuate --undo %s)",
				   w->name, c->plan) : 0;
}

/*
 * rec and control with --apply: the monitor beside the run, on the run's cgroup --
 * `memregctl record --cgroup DIR --apply -o RECDIR` or `memregctl control --cgroup
 * DIR --apply --schemes ...`, its output in the log. record is ready when RECDIR
 * exists (past its checks and its backend's self-test), so it sees the workload's
 * first processes; control reads the group when it starts and every update
 * interval. The pid, or -errno.
 */
static pid_t monitor_start(struct mr_bench *b, const struct mr_bench_config *c,
			   const char *cgdir, const char *recdir)
{
	double until = now_mono_s() + 60;
	struct stat sb;
	pid_t pid;
	int st;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return mr_error(-errno, "fork");
	if (pid == 0) {
		const char *argv[20];
		unsigned n = 0;

		child_to_log(b, NULL);
		argv[n++] = b->memregctl;
		if (c->kind == MR_BENCH_REC) {
			argv[n++] = "record";
			argv[n++] = "-o";
			argv[n++] = recdir;
		} else {
			argv[n++] = "control";
			argv[n++] = "--schemes";
			argv[n++] = c->schemes;
			argv[n++] = "--backend";
			argv[n++] = c->backend;
			if (b->control_attrs) {
				argv[n++] = "--attrs";
				argv[n++] = b->control_attrs;
			}
		}
		argv[n++] = "--cgroup";
		argv[n++] = cgdir;
		argv[n++] = "--apply";
		argv[n] = NULL;
		execv(b->memregctl, (char *const *)argv);
		_exit(127);
	}
	while (c->kind == MR_BENCH_REC && now_mono_s() < until) {
		if (stat(recdir, &sb) == 0)
			return pid;
		if (waitpid(pid, &st, WNOHANG) == pid)
			return mr_error(-EIO, "%s: memregctl record --cgroup %s ended before it "
					"recorded (exit %d); its output is in %s", c->name, cgdir,
					WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st),
					b->log_path);
		usleep(20000);
	}
	if (c->kind == MR_BENCH_REC) {
		kill(pid, SIGINT);
		waitpid(pid, &st, 0);
		return mr_error(-ETIMEDOUT, "%s: memregctl record --cgroup did not start in 60 s; "
				"its output is in %s", c->name, b->log_path);
	}
	return pid;
}

/* Stop the monitor (SIGINT: records installed, control's outputs written) and add
 * its CPU time and switches to @ru, the workload's: the monitor's cost is the
 * configuration's, as when it was the workload's parent. */
static int monitor_stop(struct mr_bench *b, const struct mr_bench_config *c, pid_t pid,
			struct rusage *ru)
{
	struct rusage mru;
	int st;

	kill(pid, SIGINT);
	while (wait4(pid, &st, 0, &mru) < 0)
		if (errno != EINTR)
			return mr_error(-errno, "wait4");
	ru->ru_utime.tv_sec += mru.ru_utime.tv_sec;
	ru->ru_utime.tv_usec += mru.ru_utime.tv_usec;
	ru->ru_stime.tv_sec += mru.ru_stime.tv_sec;
	ru->ru_stime.tv_usec += mru.ru_stime.tv_usec;
	ru->ru_nivcsw += mru.ru_nivcsw;
	ru->ru_nvcsw += mru.ru_nvcsw;
	if (mru.ru_maxrss > ru->ru_maxrss)
		ru->ru_maxrss = mru.ru_maxrss;
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		return mr_error(-EIO, "%s: memregctl %s --cgroup failed (exit %d); its output is "
				"in %s", c->name, c->kind == MR_BENCH_REC ? "record" : "control",
				WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st), b->log_path);
	return 0;
}

/* A workload's child before it execs: output to the log, no input, in @dir, the
 * configuration's environment. */
static void child_prologue(const struct mr_bench *b, const struct mr_bench_config *c,
			   const struct mr_bench_workload *w, const char *dir)
{
	int in = open("/dev/null", O_RDONLY | O_CLOEXEC);

	if (in >= 0)
		dup2(in, 0);
	child_to_log(b, dir);
	child_env(b, c, w);
}

/* Nothing measured yet: every metric and side time not known (NaN). */
static void run_reset(struct mr_bench_run *r)
{
	unsigned i;

	for (i = 0; i < NR_MR_BENCH_METRICS; i++)
		r->m[i] = NAN;
	r->setup_s = r->teardown_s = r->evac_bytes = r->evac_s = NAN;
}

/* 0, or -EIO with mr_error() naming the log when the workload exited non-zero. */
static int run_status(const struct mr_bench *b, const struct mr_bench_run *r)
{
	if (!r->exit_status)
		return 0;
	return mr_error(-EIO, "%s under %s exited with status %d; its output is in %s",
			b->workloads[r->workload].name, b->configs[r->config].name,
			r->exit_status, b->log_path);
}

/* The metrics wait4 gives (its rusage covers the child and every descendant it
 * waited for: the tree's times and switches, the largest single process's peak
 * RSS), with @r's elapsed time already set; and the exit status @st. */
static void fill_rusage(struct mr_bench_run *r, const struct rusage *ru, int st)
{
	double user = (double)ru->ru_utime.tv_sec + (double)ru->ru_utime.tv_usec / 1e6;
	double sys = (double)ru->ru_stime.tv_sec + (double)ru->ru_stime.tv_usec / 1e6;

	r->m[MR_BENCH_USER_S] = user;
	r->m[MR_BENCH_SYSTEM_S] = sys;
	r->m[MR_BENCH_CPU_S] = user + sys;
	/* GNU time's %P, which kernbench reads: whole percent, truncated. */
	r->m[MR_BENCH_CPU_PCT] = r->m[MR_BENCH_ELAPSED_S] > 0 ?
		floor((user + sys) * 100 / r->m[MR_BENCH_ELAPSED_S]) : NAN;
	r->m[MR_BENCH_INVOL_CSW] = (double)ru->ru_nivcsw;
	r->m[MR_BENCH_VOL_CSW] = (double)ru->ru_nvcsw;
	r->m[MR_BENCH_MAXRSS_KIB] = (double)ru->ru_maxrss;
	r->exit_status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* One measured (or warm-up) run of workload @wi under configuration @ci into @r. */
static int measure(struct mr_bench *b, struct mr_energy_source *src, unsigned wi,
		   unsigned ci, struct mr_bench_run *r)
{
	const struct mr_bench_workload *w = &b->workloads[wi];
	const struct mr_bench_config *c = &b->configs[ci];
	const struct bench_regions *br = b->regions;
	char recpath[PATH_MAX], physpath[PATH_MAX], cgdir[PATH_MAX] = "", name[64];
	bool in_cgroup = b->cgroups && (c->kind == MR_BENCH_REC || c->kind == MR_BENCH_CONTROL);
	struct sampler smp;
	struct rusage ru = { 0 };	/* the monitor's is added even after a failed wait */
	double t0;
	pid_t pid, phys = 0, mon = 0;
	int st, err;

	run_reset(r);
	if (w->prepare && run_shell(b, w->dir, w->prepare, NULL))
		return mr_error_wrap(-EIO, "%s: preparing", w->name);
	if (c->setup && run_shell(b, w->dir, c->setup, &r->setup_s))
		return mr_error_wrap(-EIO, "%s: setup of %s", w->name, c->name);
	if (c->kind == MR_BENCH_EVAC && evac_setup(b, c, w, r))
		return -EIO;
	snprintf(recpath, sizeof(recpath), "%s/rec-%u-%u.%s", b->workdir, wi, r->order,
		 in_cgroup ? "d" : "rec");
	snprintf(physpath, sizeof(physpath), "%s/phys-%u-%u.rec", b->workdir, wi, r->order);
	if (c->kind == MR_BENCH_REC || c->kind == MR_BENCH_CONTROL)
		snprintf(r->observed, sizeof(r->observed), in_cgroup ? "cgroup" : "process");
	if (in_cgroup) {
		/* a fresh cgroup v2 per run, the workload started inside it, the monitor
		 * following its members; removed after the run */
		snprintf(name, sizeof(name), "memreg-bench-%ld-%u", (long)getpid(), r->order);
		if (mr_cgroup_mkdir_fresh(name, b->apply, cgdir, sizeof(cgdir)))
			return mr_error_wrap(-EIO, "%s: the run's cgroup", c->name);
		mon = monitor_start(b, c, cgdir, recpath);
		if (mon < 0) {
			mr_cgroup_rmdir(cgdir, b->apply);
			return (int)mon;
		}
	}
	if (b->phys && !r->warmup && (phys = phys_start(b, physpath)) < 0) {
		if (mon > 0)
			kill(mon, SIGINT), waitpid(mon, &st, 0), mr_cgroup_rmdir(cgdir, b->apply);
		return (int)phys;
	}
	if (src && mr_energy_start(src)) {
		if (phys > 0)
			kill(phys, SIGINT), waitpid(phys, &st, 0);
		if (mon > 0)
			kill(mon, SIGINT), waitpid(mon, &st, 0), mr_cgroup_rmdir(cgdir, b->apply);
		return mr_error_wrap(-EIO, "energy");
	}
	fflush(NULL);
	r->start_unix_s = now_unix_s();
	t0 = now_mono_s();
	pid = fork();
	if (pid == 0) {
		child_prologue(b, c, w, w->dir);
		if (in_cgroup) {
			/* into the run's group before anything of the workload's runs */
			if (mr_cgroup_enter(cgdir, getpid(), b->apply)) {
				fprintf(stderr, "memregctl bench: %s\n", mr_last_error());
				_exit(126);
			}
			execl("/bin/sh", "sh", "-c", w->cmd, (char *)NULL);
			_exit(127);
		}
		if (c->kind == MR_BENCH_REC) {
			execl(b->memregctl, b->memregctl, "record", "-o", recpath, "--",
			      "/bin/sh", "-c", exec_form(w->cmd), (char *)NULL);
			_exit(127);
		}
		if (c->kind == MR_BENCH_CONTROL) {
			const char *argv[16];
			unsigned n = 0;

			argv[n++] = b->memregctl;
			argv[n++] = "control";
			argv[n++] = "--schemes";
			argv[n++] = c->schemes;
			argv[n++] = "--backend";
			argv[n++] = c->backend;
			if (b->control_attrs) {
				argv[n++] = "--attrs";
				argv[n++] = b->control_attrs;
			}
			if (b->apply)
				argv[n++] = "--apply";
			argv[n++] = "--";
			argv[n++] = "/bin/sh";
			argv[n++] = "-c";
			argv[n++] = exec_form(w->cmd);
			argv[n] = NULL;
			execv(b->memregctl, (char *const *)argv);
			_exit(127);
		}
		execl("/bin/sh", "sh", "-c", w->cmd, (char *)NULL);
		_exit(127);
	}
	err = pid < 0 ? errno : 0;
	if (pid > 0 && sampler_start(&smp, br ? &br->map : NULL, pid, in_cgroup ? cgdir : NULL,
				     !in_cgroup && (c->kind == MR_BENCH_REC ||
						    c->kind == MR_BENCH_CONTROL)))
		err = EAGAIN;
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
	if (pid > 0 && err != EAGAIN)
		sampler_stop(&smp, r);
	if (phys > 0 && phys_finish(b, phys, physpath, r) && !err)
		err = EIO;
	if (mon > 0 && monitor_stop(b, c, mon, &ru) && !err)
		err = EIO;
	if (cgdir[0] && mr_cgroup_rmdir(cgdir, b->apply) && !err) {
		mr_error_wrap(-EBUSY, "%s: the run's cgroup %s (a process the workload left "
			      "behind?)", c->name, cgdir);
		err = EIO;
	}
	if (err == EIO)
		return -EIO;
	if (err)
		return mr_error(-err, "running %s", w->name);
	fill_rusage(r, &ru, st);
	if (c->teardown && run_shell(b, w->dir, c->teardown, &r->teardown_s))
		return mr_error_wrap(-EIO, "%s: teardown of %s", w->name, c->name);
	if (c->kind == MR_BENCH_EVAC && evac_teardown(b, c, w, r))
		return -EIO;
	if (c->kind == MR_BENCH_REC && w->wss_expect_mib > 0 && !r->exit_status)
		rec_wss(recpath, in_cgroup, r);
	return run_status(b, r);
}

/* Where workload @w runs under configuration @ci: its copy with --together, if any. */
static const char *run_dir(const struct mr_bench_workload *w, unsigned ci)
{
	return w->config_dir[ci] ? w->config_dir[ci] : w->dir;
}

/*
 * --together: the runs @run[0..@n-1] (one round: each configuration once, in the
 * round's order) started at the same time, each in its configuration's directory.
 * Each is prepared and set up first, one after another; then all start, in that
 * order, and each is timed from the common start to its own end (wait4 of any
 * child: the first to finish is reaped first). The kinds it takes have no monitor,
 * no evacuation and no per-run energy (mr_bench_run_all checks).
 */
static int measure_round(struct mr_bench *b, struct mr_bench_run **run, unsigned n)
{
	pid_t pid[MR_BENCH_MAX_CONFIGS] = { 0 };
	unsigned i, left = 0;
	double t0;
	int err = 0;

	for (i = 0; i < n; i++) {
		const struct mr_bench_workload *w = &b->workloads[run[i]->workload];
		const struct mr_bench_config *c = &b->configs[run[i]->config];
		const char *dir = run_dir(w, run[i]->config);

		run_reset(run[i]);
		if (w->prepare && run_shell(b, dir, w->prepare, NULL))
			return mr_error_wrap(-EIO, "%s: preparing for %s", w->name, c->name);
		if (c->setup && run_shell(b, dir, c->setup, &run[i]->setup_s))
			return mr_error_wrap(-EIO, "%s: setup of %s", w->name, c->name);
	}
	fflush(NULL);
	t0 = now_mono_s();
	for (i = 0; i < n; i++) {
		const struct mr_bench_workload *w = &b->workloads[run[i]->workload];
		const struct mr_bench_config *c = &b->configs[run[i]->config];

		run[i]->start_unix_s = now_unix_s();
		pid[i] = fork();
		if (pid[i] == 0) {
			child_prologue(b, c, w, run_dir(w, run[i]->config));
			execl("/bin/sh", "sh", "-c", w->cmd, (char *)NULL);
			_exit(127);
		}
		if (pid[i] < 0) {
			err = errno;
			break;
		}
		left++;
	}
	/* the ones started are waited for, even after a fork failed */
	while (left) {
		struct rusage ru = { 0 };
		int st;
		pid_t got = wait4(-1, &st, 0, &ru);

		if (got < 0) {
			if (errno == EINTR)
				continue;
			err = err ? err : errno;
			break;
		}
		for (i = 0; i < n; i++)
			if (pid[i] == got)
				break;
		if (i == n)
			continue;	/* not a workload's (none else runs now) */
		pid[i] = 0;
		left--;
		run[i]->m[MR_BENCH_ELAPSED_S] = now_mono_s() - t0;
		fill_rusage(run[i], &ru, st);
	}
	if (err)
		return mr_error(-err, "running %s together", b->workloads[run[0]->workload].name);
	for (i = 0; i < n; i++) {
		const struct mr_bench_workload *w = &b->workloads[run[i]->workload];
		const struct mr_bench_config *c = &b->configs[run[i]->config];
		const char *dir = run_dir(w, run[i]->config);

		if (c->teardown && run_shell(b, dir, c->teardown, &run[i]->teardown_s))
			return mr_error_wrap(-EIO, "%s: teardown of %s", w->name, c->name);
		if (run_status(b, run[i]))
			return -EIO;
	}
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

/* alloc+profile's training run, before run @r when it is the workload's first under
 * it (the training is not a run); 0 when none is due. */
static int train_before(struct mr_bench *b, const struct mr_bench_run *r)
{
	if (r->round != 0 || b->configs[r->config].kind != MR_BENCH_ALLOC_PROFILE ||
	    b->workloads[r->workload].profile)
		return 0;
	if (b->progress)
		fprintf(stderr, "\r\033[Kbench: %s: alloc+profile's training run",
			b->workloads[r->workload].name);
	return train(b, r->workload);
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

/* control's backend when none is given: what `memregctl record` picks for a command
 * it starts (no --apply: the kernel's DAMON is left alone). */
static int control_backend(struct mr_bench_config *c, const char *given)
{
	struct mr_mon_ctx want;
	const struct mr_mon_ops *ops;
	char why[1024];

	if (c->backend)
		return 0;
	if (given) {
		c->backend = xstrdup(given);
		return 0;
	}
	memset(&want, 0, sizeof(want));
	want.target.kind = MR_MON_TARGET_PROCESS;
	want.target.started = true;
	ops = mr_mon_backend_auto(&want, why, sizeof(why));
	if (!ops)
		return mr_error(-ENOTSUP, "%s: no monitor backend works here (%s)", c->name, why);
	c->backend = xstrdup(ops->name);
	return 0;
}

/* control and evac: their inputs, checked before the first run. */
static int check_config(struct mr_bench *b, struct mr_bench_config *c)
{
	char note[512];

	if (c->kind == MR_BENCH_CONTROL) {
		if (!c->schemes && b->schemes)
			c->schemes = xstrdup(b->schemes);
		if (!c->schemes)
			return mr_error(-EINVAL, "%s needs schemes: --schemes FILE, or a 'schemes "
					"FILE' line in its bench file section", c->name);
		if (access(c->schemes, R_OK))
			return mr_error(-errno, "%s: schemes file %s: %s", c->name, c->schemes,
					strerror(errno));
		if (control_backend(c, b->backend))
			return -ENOTSUP;
		snprintf(note, sizeof(note), "the controller: memregctl control --schemes %s "
			 "--backend %s%s%s%s", c->schemes, c->backend,
			 b->control_attrs ? " --attrs " : "", b->control_attrs ? b->control_attrs : "",
			 b->apply ? " --apply" : " (a dry run: the schemes count what they would "
			 "do; --apply to act)");
		free(c->note);
		c->note = xstrdup(note);
	} else if (c->kind == MR_BENCH_EVAC) {
		if (!c->plan && b->plan)
			c->plan = xstrdup(b->plan);
		if (!c->plan)
			return mr_error(-EINVAL, "%s needs a plan: --plan FILE (memregctl plan -o), "
					"or a 'plan FILE' line in its bench file section", c->name);
		/* evacuate --apply takes memory offline: never without the bench's consent,
		 * and that belongs in the VM lab, not on a shared machine */
		if (!b->apply)
			return mr_error(-EPERM, "%s takes memory blocks offline (memregctl evacuate "
					"--apply %s before each run, --undo after): it runs only "
					"with --apply, on a machine whose memory may go offline (the "
					"VM lab: scripts/lab), never on a shared host", c->name,
					c->plan);
		if (access(c->plan, R_OK))
			return mr_error(-errno, "%s: plan %s: %s", c->name, c->plan,
					strerror(errno));
		snprintf(note, sizeof(note), "memregctl evacuate --apply %s before each run, "
			 "--undo after (timed apart: setup_s, teardown_s)", c->plan);
		free(c->note);
		c->note = xstrdup(note);
	}
	return 0;
}

/*
 * The region map and power model, for the regions holding the workload's data and
 * the physical record's residency. A one-node machine without MPST has no power
 * regions to speak of: its regions are slices of its physical address space (of a
 * VM, the hypervisor's memory seen through a window), and the notes say so.
 */
static void load_regions(struct mr_bench *b)
{
	struct bench_regions *br = calloc(1, sizeof(*br));
	char map_why[512], dmi_why[512];
	const struct mr_region *r, *q;
	int nodes = 0;

	if (!br)
		return;
	if (mr_power_model_load(&br->model, &br->map, map_why, sizeof(map_why), dmi_why,
				sizeof(dmi_why))) {
		mr_bench_note(b, "regions holding the workload's data: no region map (%s)",
			      mr_last_error());
		free(br);
		return;
	}
	b->regions = br;
	/* distinct nodes: regions come in address order, nodes may repeat */
	mr_for_each_region(&br->map, r) {
		for (q = br->map.regions; q < r && q->node != r->node; q++)
			;
		nodes += q == r;
	}
	if (nodes <= 1 && br->map.source != MR_SOURCE_MPST)
		snprintf(b->map_note, sizeof(b->map_note), "region map: %u regions (%s) on one "
			 "NUMA node and no MPST table: a virtual window, slices of this "
			 "machine's physical address space, not DIMMs or ranks; region counts "
			 "say how spread the data is, not what could be powered down",
			 br->map.nr_regions, mr_source_name(br->map.source));
	else
		snprintf(b->map_note, sizeof(b->map_note), "region map: %u regions (%s) on %d "
			 "NUMA nodes", br->map.nr_regions, mr_source_name(br->map.source), nodes);
	mr_bench_note(b, "%s", b->map_note);
	mr_bench_note(b, "regions holding the workload's data: its process tree's pages by "
		      "region (pagemap frames, as memregctl where), sampled every %u ms; the "
		      "last sample before it ended%s", SAMPLE_MS,
		      geteuid() ? " (not root: frames hidden, only nodes of one region count)"
		      : "");
}

static void free_regions(struct mr_bench *b)
{
	struct bench_regions *br = b->regions;

	if (!br)
		return;
	mr_power_model_destroy(&br->model);
	mr_region_map_destroy(&br->map);
	free(br);
	b->regions = NULL;
}

/* --together: a copy of each copy_dir workload's directory for every configuration,
 * WORKDIR/trees/W-C (cp -a: builds that run at once each write their own objects). */
static int copy_dirs(struct mr_bench *b)
{
	char trees[PATH_MAX], dst[PATH_MAX + 32];
	unsigned wi, ci;

	snprintf(trees, sizeof(trees), "%s/trees", b->workdir);
	for (wi = 0; wi < b->nr_workloads; wi++) {
		struct mr_bench_workload *w = &b->workloads[wi];

		if (!w->copy_dir || !w->dir)
			continue;
		if (mkdir(trees, 0755) < 0 && errno != EEXIST)
			return mr_error(-errno, "%s", trees);
		for (ci = 0; ci < b->nr_configs; ci++) {
			/* cp -a: the paths are arguments, not shell words */
			char *argv[] = { "cp", "-a", "--", w->dir, dst, NULL };

			snprintf(dst, sizeof(dst), "%s/%u-%u", trees, wi, ci);
			fprintf(stderr, "bench: --together: copying %s to %s for %s\n", w->dir, dst,
				b->configs[ci].name);
			w->config_dir[ci] = strdup(dst);
			if (!w->config_dir[ci])
				return mr_error(-ENOMEM, "%s", dst);
			if (run_argv(b, NULL, argv, "cp -a", NULL))
				return mr_error_wrap(-EIO, "--together: a copy of %s for %s",
						     w->dir, b->configs[ci].name);
		}
	}
	return 0;
}

/* The copies are scratch: removed after the runs, whatever became of them. */
static void remove_copies(struct mr_bench *b)
{
	char path[PATH_MAX];
	unsigned wi, ci;
	bool any = false;

	for (wi = 0; wi < b->nr_workloads; wi++)
		for (ci = 0; ci < b->nr_configs; ci++) {
			any |= b->workloads[wi].config_dir[ci] != NULL;
			free(b->workloads[wi].config_dir[ci]);
			b->workloads[wi].config_dir[ci] = NULL;
		}
	if (any) {
		char *argv[] = { "rm", "-rf", "--", path, NULL };

		snprintf(path, sizeof(path), "%s/trees", b->workdir);
		if (run_argv(b, NULL, argv, "rm -rf", NULL))
			mr_clear_error();
	}
}

int mr_bench_run_all(struct mr_bench *b)
{
	struct mr_energy_source src;
	bool have_src = false;
	unsigned *order, total, done = 0, wi, ci, i, k, nr_observers = 0;
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
		if (kind == MR_BENCH_ALLOC_PROFILE)
			mr_bench_note(b, "%s: its training record follows the workload's top "
				      "process only", b->configs[ci].name);
		if (kind == MR_BENCH_REC || kind == MR_BENCH_CONTROL)
			nr_observers++;
		if (b->together && (kind == MR_BENCH_REC || kind == MR_BENCH_CONTROL ||
				    kind == MR_BENCH_EVAC))
			return mr_error(-EINVAL, "--together: %s cannot run beside another "
					"configuration (its monitor or evacuation acts on what "
					"the others run too): give orig, alloc, alloc+profile or "
					"a bench file's", b->configs[ci].name);
		if (check_config(b, &b->configs[ci]))
			return -EINVAL;
	}
	if (b->together && b->phys)
		return mr_error(-EINVAL, "--together and --phys: a physical record covers the "
				"whole machine, every configuration at once");
	if (nr_observers && b->apply) {
		/* the runs' groups go under the cgroup v2 mount: found before the first */
		char mnt[PATH_MAX];

		if (mr_cgroup2_mount(mnt, sizeof(mnt)) == 0) {
			b->cgroups = true;
			mr_bench_note(b, "rec and control: each run in a fresh cgroup v2 under "
				      "%s (memregctl record/control --cgroup): every process of "
				      "the workload observed", mnt);
		} else {
			/* a machine without cgroup v2 (the VM lab's guest mounts none) can
			 * still observe and control the top process, as without --apply */
			mr_bench_note(b, "rec and control observe the workload's top process "
				      "only: %s", mr_last_error());
			mr_clear_error();
		}
	} else if (nr_observers) {
		mr_bench_note(b, "rec and control observe the workload's top process only: "
			      "give --apply to run each in a fresh cgroup v2 and observe every "
			      "process of the workload");
	}
	if (b->phys && !b->apply)
		return mr_error(-EPERM, "--phys records physical memory with the kernel's DAMON "
				"(memregctl record --phys --apply), which changes kernel state: "
				"give --apply, where DAMON may be used (the VM lab: scripts/lab)");
	fill_identity(b);
	memset(&src, 0, sizeof(src));
	if (b->together) {
		snprintf(b->energy_source, sizeof(b->energy_source), "none");
		snprintf(b->energy_detail, sizeof(b->energy_detail), "not measured with --together");
		mr_bench_note(b, "--together: each round's configurations ran at the same time "
			      "(kernbench: each in a copy of the tree), all on the same CPUs at "
			      "the same speeds: user and system seconds compare within a round");
		mr_bench_note(b, "--together: elapsed time and percent CPU are each run's beside "
			      "the others', not what it takes alone; no DRAM energy nor regions "
			      "holding data (they measure the machine, not one run)");
	} else if (mr_energy_open(&src, "auto", NULL) == 0) {
		have_src = true;
		snprintf(b->energy_source, sizeof(b->energy_source), "%s", src.ops->name);
		snprintf(b->energy_detail, sizeof(b->energy_detail), "%s", src.detail);
	} else {
		snprintf(b->energy_source, sizeof(b->energy_source), "none");
		mr_bench_note(b, "no DRAM energy: %s", mr_last_error());
	}
	mr_bench_note(b, "peak RSS is the largest single process's (wait4's ru_maxrss), "
		      "not the sum over the process tree");
	note_affinity(b);
	if (!b->together)
		load_regions(b);
	if (b->phys)
		mr_bench_note(b, "low_power_pct: the share of region-time (regions x "
			      "aggregation intervals) with no sampled access in the physical "
			      "record beside each run (memregctl record --phys, DAMON paddr), an "
			      "upper bound; model_energy_j: the power model with that residency");
	else
		mr_bench_note(b, "low-power share: no physical record (--phys, where DAMON may "
			      "be used)");

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
	if (b->together && (ret = copy_dirs(b)))
		goto out;
	t_start = now_mono_s();
	for (k = 0; k < total; k++) {
		struct mr_bench_run *r = &b->run[k];

		if (b->together) {
			/* a round's slots are consecutive, one per configuration */
			struct mr_bench_run *round[MR_BENCH_MAX_CONFIGS];
			unsigned n;

			for (n = 0; n < b->nr_configs; n++) {
				round[n] = &b->run[k + n];
				if ((ret = train_before(b, round[n])))
					goto out;
			}
			progress(b, done, total, now_mono_s() - t_start, r);
			ret = measure_round(b, round, n);
			if (ret)
				break;
			k += n - 1;
			b->nr_runs = done += n;
			if (b->report_dir && done < total && mr_bench_write_report(b, b->report_dir))
				mr_clear_error();
			continue;
		}

		ret = train_before(b, r);
		if (ret)
			break;
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
	remove_copies(b);
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
		free(c->schemes);
		free(c->backend);
		free(c->plan);
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
	free_regions(b);
	memset(b, 0, sizeof(*b));
}
