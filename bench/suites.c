/* The bench suites: kernbench (as kernbench 0.42's script defines its loads), the
 * allocator workloads against the peer allocators, and the access patterns. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/run.h"
#include "common/root.h"
#include "common/util.h"

static bool is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The output of `sh -c CMD` (first line, at most @len - 1 bytes); 0 or -errno. */
static int shell_line(const char *cmd, char *buf, size_t len)
{
	FILE *p = popen(cmd, "r");
	int st;

	buf[0] = '\0';
	if (!p)
		return mr_error(-errno, "popen");
	if (fgets(buf, (int)len, p))
		buf[strcspn(buf, "\n")] = '\0';
	while (fgetc(p) != EOF)
		;
	st = pclose(p);
	return st == 0 ? 0 : -EIO;
}

static int shell(const char *cmd)
{
	int st = system(cmd);

	return st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -EIO;
}

static unsigned long long memtotal_kib(void)
{
	char *data = NULL, *p;
	size_t len;
	unsigned long long v = 0;

	if (mr_root_read_file("/proc/meminfo", 1 << 16, &data, &len))
		return 0;
	p = strstr(data, "MemTotal:");
	if (p)
		sscanf(p, "MemTotal: %llu", &v);
	free(data);
	return v;
}

/*
 * Debian's linux-source-6.1 unpacked into a cache (MEMREG_BENCH_CACHE, else
 * /var/cache/memreg-bench, else ~/.cache/memreg-bench), as scripts/lab fetches its
 * kernel: apt-get download, dpkg-deb -x, then the tarball unpacked once. @tree gets
 * the source directory, @pkgver the package's version.
 */
static int fetch_tree(char *tree, size_t len, char *pkgver, size_t vlen)
{
	const char *env = getenv("MEMREG_BENCH_CACHE");
	char cache[PATH_MAX - 64], cmd[4 * PATH_MAX];

	if (env && *env)
		snprintf(cache, sizeof(cache), "%s", env);
	else if ((mkdir("/var/cache/memreg-bench", 0755) == 0 || errno == EEXIST) &&
		 access("/var/cache/memreg-bench", W_OK) == 0)
		snprintf(cache, sizeof(cache), "/var/cache/memreg-bench");
	else
		snprintf(cache, sizeof(cache), "%s/.cache/memreg-bench",
			 getenv("HOME") ? getenv("HOME") : "/tmp");
	snprintf(tree, len, "%s/linux-source-6.1", cache);
	if (!is_file(mr_pathf(cmd, sizeof(cmd), "%s/.memreg-pkgver", tree))) {
		fprintf(stderr, "bench: fetching Debian's linux-source-6.1 into %s\n", cache);
		snprintf(cmd, sizeof(cmd),
			 "set -e; mkdir -p '%s'; cd '%s'; exec 9>.lock; flock 9; "
			 "[ -f linux-source-6.1/.memreg-pkgver ] && exit 0; "
			 "command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null; "
			 "deb=$(ls linux-source-6.1_*_all.deb 2>/dev/null | sort -V | tail -n 1); "
			 "if [ -z \"$deb\" ]; then apt-get download -q linux-source-6.1 >&2; "
			 "deb=$(ls linux-source-6.1_*_all.deb | sort -V | tail -n 1); fi; "
			 "rm -rf .unpack linux-source-6.1; mkdir .unpack; "
			 "dpkg-deb -x \"$deb\" .unpack; mkdir linux-source-6.1; "
			 "tar -xaf .unpack/usr/src/linux-source-6.1.tar.* -C linux-source-6.1 "
			 "--strip-components=1; rm -rf .unpack; "
			 "v=${deb#linux-source-6.1_}; echo \"${v%%_all.deb}\" "
			 ">linux-source-6.1/.memreg-pkgver",
			 cache, cache);
		if (shell(cmd))
			return mr_error(-EIO, "fetching linux-source-6.1 into %s failed (apt-get "
					"download and dpkg-deb are needed; or pass --tree DIR)",
					cache);
	}
	snprintf(cmd, sizeof(cmd), "cat '%s/.memreg-pkgver'", tree);
	shell_line(cmd, pkgver, vlen);
	return 0;
}

static int kernbench(struct mr_bench *b, const struct mr_bench_suite_opts *o)
{
	char tree[PATH_MAX], pkgver[64] = "", kver[64] = "", cmd[2 * PATH_MAX], ctx[PATH_MAX + 512];
	char prepare[64], label[64], name[32];
	const char *config = o->config ? o->config : "tinyconfig";
	const char *loads = o->loads;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned half = (unsigned)(cpus / 2), optimal = o->jobs ? o->jobs : (unsigned)cpus * 4;
	bool want_half, want_opt, want_max, made_config;
	struct mr_bench_workload *w;

	/* a bench run from inside make (make check, a Makefile of the user's) must not
	 * hand the measured builds the outer make's jobserver, level and flags: kernbench
	 * runs its own `make -jN`, and "make[N]: Entering directory" would read as output */
	unsetenv("MAKEFLAGS");
	unsetenv("MFLAGS");
	unsetenv("MAKELEVEL");
	if (o->tree) {
		if (!realpath(o->tree, tree))
			return mr_error(-errno, "--tree %s", o->tree);
	} else if (fetch_tree(tree, sizeof(tree), pkgver, sizeof(pkgver))) {
		return -EIO;
	}
	if (!is_file(mr_pathf(cmd, sizeof(cmd), "%s/include/linux/kernel.h", tree)))
		return mr_error(-ENOENT, "%s: no kernel source found (include/linux/kernel.h)",
				tree);
	/* kernbench's loads: half = CPUs / 2 (off below 2, 3 for 2), optimal = 4 x CPUs,
	 * maximal = make -j; all three unless --loads says otherwise. */
	if (!loads)
		loads = "half,optimal,maximal";
	want_half = strstr(loads, "half") != NULL;
	want_opt = strstr(loads, "optimal") != NULL;
	want_max = strstr(loads, "maximal") != NULL;
	if (!want_half && !want_opt && !want_max)
		return mr_error(-EINVAL, "--loads %s: give half, optimal and/or maximal", loads);
	if (want_half && half < 2) {
		fprintf(stderr, "bench: kernbench: half load is no greater than single; "
			"disabling (%ld CPUs)\n", cpus);
		want_half = false;
	} else if (half == 2) {
		half = 3;	/* kernbench: "a kernel compile won't guarantee 2 jobs" */
	}
	if (want_max && memtotal_kib() < 4000000)
		fprintf(stderr, "bench: kernbench: less than 4 GB of RAM: maximal loads will not "
			"measure CPU throughput and may cause a swapstorm (--loads to leave it "
			"out)\n");
	if (shell("command -v flex >/dev/null && command -v bison >/dev/null"))
		return mr_error(-ENOENT, "kernbench: building a kernel needs flex and bison");
	/* The .config: the given target once (tinyconfig by default), unless the tree has
	 * one and --config was not given. */
	/* A fetched tree always gets the target (the cache's .config may be another's);
	 * a given tree keeps its own .config unless --kconfig is given. */
	made_config = o->config || !o->tree ||
		      !is_file(mr_pathf(cmd, sizeof(cmd), "%s/.config", tree));
	if (made_config) {
		fprintf(stderr, "bench: kernbench: make %s in %s\n", config, tree);
		snprintf(cmd, sizeof(cmd), "cd '%s' && make -s %s >&2", tree, config);
		if (shell(cmd))
			return mr_error(-EIO, "kernbench: make %s in %s failed", config, tree);
	}
	snprintf(cmd, sizeof(cmd), "make -s --no-print-directory -C '%s' kernelversion 2>/dev/null",
		 tree);
	shell_line(cmd, kver, sizeof(kver));
	snprintf(ctx, sizeof(ctx), "kernbench: Linux %s%s%s%s, %s%s, %ld CPUs, in %s",
		 kver[0] ? kver : "(unknown version)", pkgver[0] ? " (Debian linux-source-6.1 " : "",
		 pkgver, pkgver[0] ? ")" : "", made_config ? "make " : "", made_config ? config : "with the tree's .config",
		 cpus, tree);
	free(b->context);
	b->context = strdup(ctx);
	b->title = "kernbench";
	/* Each run: make clean, sync, a pause, then the build (kernbench's do_runs).
	 * Never drop caches: `sync` is all kernbench does. */
	snprintf(prepare, sizeof(prepare), "make clean >/dev/null 2>&1; sync; sleep %u",
		 o->pause_s);
	/* The optimal load first: the warm-up runs there, before every measured run. */
	if (want_opt) {
		snprintf(label, sizeof(label), "Optimal load -j %u", optimal);
		snprintf(name, sizeof(name), "optimal-j%u", optimal);
		snprintf(cmd, sizeof(cmd), "make -j %u", optimal);
		w = mr_bench_new_workload(b, name, cmd);
		if (!w)
			return -EINVAL;
		w->label = strdup(label);
	}
	if (want_half) {
		snprintf(label, sizeof(label), "Half load -j %u", half);
		snprintf(name, sizeof(name), "half-j%u", half);
		snprintf(cmd, sizeof(cmd), "make -j %u", half);
		w = mr_bench_new_workload(b, name, cmd);
		if (!w)
			return -EINVAL;
		w->label = strdup(label);
		w->no_warmup = want_opt;
	}
	if (want_max) {
		w = mr_bench_new_workload(b, "maximal", "make -j");
		if (!w)
			return -EINVAL;
		w->label = strdup("Maximal load -j");
		w->no_warmup = want_opt || want_half;
	}
	for (unsigned i = 0; i < b->nr_workloads; i++) {
		b->workloads[i].dir = strdup(tree);
		b->workloads[i].prepare = strdup(prepare);
		b->workloads[i].copy_dir = true;	/* --together: a tree each */
	}
	if (!o->configs_given) {
		if (mr_bench_add_builtin(b, "orig") || mr_bench_add_builtin(b, "alloc") ||
		    mr_bench_add_builtin(b, "rec"))
			return -EINVAL;
	}
	return 0;
}

/* A program of this build tree (BUILD/SUBDIR/NAME beside BUILD/tools/memregctl), or
 * the installed one (@installed); NULL when neither exists. */
static char *find_program(const struct mr_bench *b, const char *subdir, const char *name,
			  const char *installed)
{
	char path[PATH_MAX * 2], dir[PATH_MAX], *slash;

	snprintf(dir, sizeof(dir), "%s", b->memregctl ? b->memregctl : "");
	slash = strrchr(dir, '/');
	if (slash) {
		*slash = '\0';
		if (strlen(dir) > 6 && !strcmp(dir + strlen(dir) - 6, "/.libs"))
			dir[strlen(dir) - 6] = '\0';
		snprintf(path, sizeof(path), "%s/../%s/%s", dir, subdir, name);
		if (access(path, X_OK) == 0)
			return realpath(path, NULL);
	}
	if (installed && access(installed, X_OK) == 0)
		return strdup(installed);
	return NULL;
}

static int alloc_suite(struct mr_bench *b, const struct mr_bench_suite_opts *o)
{
	static const char *const workloads[] = {
		"server", "prodcons", "falseshare", "churn", "realloc", "frag",
	};
	static const struct { const char *name, *lib; } peers[] = {
		{ "jemalloc", "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2" },
		{ "tcmalloc", "/usr/lib/x86_64-linux-gnu/libtcmalloc.so.4" },
		{ "mimalloc", "/usr/lib/x86_64-linux-gnu/libmimalloc.so.2" },
	};
	const char *env = getenv("MEMREG_ALLOC_BENCH");
	char *prog, cmd[PATH_MAX + 32];
	unsigned i;

	prog = env && *env ? strdup(env) : find_program(b, "bench", "alloc-bench", NULL);
	if (!prog || access(prog, X_OK))
		return mr_error(-ENOENT, "the alloc suite needs bench/alloc-bench (built with "
				"memreg; or set MEMREG_ALLOC_BENCH)");
	for (i = 0; i < MR_ARRAY_SIZE(workloads); i++) {
		snprintf(cmd, sizeof(cmd), "'%s' %s", prog, workloads[i]);
		if (!mr_bench_new_workload(b, workloads[i], cmd)) {
			free(prog);
			return -EINVAL;
		}
	}
	free(prog);
	b->title = "alloc suite (bench/alloc-bench)";
	free(b->context);
	b->context = strdup("allocators by LD_PRELOAD: orig is glibc's malloc, alloc is "
			    "libmemreg.so, the peers Debian's packages");
	if (o->configs_given)
		return 0;
	if (mr_bench_add_builtin(b, "orig") || mr_bench_add_builtin(b, "alloc"))
		return -EINVAL;
	for (i = 0; i < MR_ARRAY_SIZE(peers); i++) {
		struct mr_bench_config *c;

		if (!is_file(peers[i].lib)) {
			mr_bench_note(b, "%s left out: %s is not installed", peers[i].name,
				      peers[i].lib);
			continue;
		}
		c = mr_bench_new_config(b, peers[i].name);
		if (!c)
			return -EINVAL;
		c->preload = strdup(peers[i].lib);
		c->note = strdup(peers[i].lib);
	}
	return 0;
}

static int access_suite(struct mr_bench *b, const struct mr_bench_suite_opts *o)
{
	static const char *const patterns[] = { "stairs", "zigzag" };
	char *prog, conf[PATH_MAX], cmd[3 * PATH_MAX];
	struct mr_bench_workload *w;
	unsigned i;

	prog = find_program(b, "monitor", "memreg-accessgen", MR_BINDIR "/memreg-accessgen");
	if (!prog)
		return mr_error(-ENOENT, "the access suite needs memreg-accessgen");
	for (i = 0; i < MR_ARRAY_SIZE(patterns); i++) {
		snprintf(conf, sizeof(conf), "%s/configs/%s", MR_PKGDATADIR, patterns[i]);
		if (!is_file(conf))
			snprintf(conf, sizeof(conf), "%s/monitor/configs/%s", MR_SRCDIR, patterns[i]);
		if (!is_file(conf)) {
			free(prog);
			return mr_error(-ENOENT, "access suite: no %s config (in %s/configs or "
					"%s/monitor/configs)", patterns[i], MR_PKGDATADIR, MR_SRCDIR);
		}
		/* The full durations (stairs 50 s, zigzag 30 s): the records then hold
		 * several aggregations even at the refs backend's 10 s, for the accuracy.
		 * The patterns run for fixed times, so rec's extra cpu_s is the monitor's. */
		snprintf(cmd, sizeof(cmd), "'%s' '%s'", prog, conf);
		if (!(w = mr_bench_new_workload(b, patterns[i], cmd))) {
			free(prog);
			return -EINVAL;
		}
		/* stairs: one 10 MiB area at a time; zigzag: one 100 MiB area at a time */
		w->wss_expect_mib = i == 0 ? 10 : 100;
	}
	free(prog);
	b->title = "access suite (memreg-accessgen)";
	free(b->context);
	b->context = strdup("monitor overhead: rec's cpu_s over orig's is the monitor's CPU (the "
			    "patterns run for fixed times); accuracy: memregctl report wss of the rec "
			    "runs' records (kept in -o DIR)");
	if (o->configs_given)
		return 0;
	return mr_bench_add_builtin(b, "orig") || mr_bench_add_builtin(b, "rec") ? -EINVAL : 0;
}

int mr_bench_suite(struct mr_bench *b, const char *name, const struct mr_bench_suite_opts *o)
{
	if (!strcmp(name, "kernbench"))
		return kernbench(b, o);
	if (!strcmp(name, "alloc"))
		return alloc_suite(b, o);
	if (!strcmp(name, "access"))
		return access_suite(b, o);
	if (!strcmp(name, "hansen"))	/* its machines are guests, not this one */
		return mr_error(-EINVAL, "the hansen suite boots the VM lab once per scenario "
				"step (guests with fewer DIMMs, evacuating, memreg with nothing to "
				"manage): run bench/hansen.sh from a memreg source tree "
				"(docs/bench.md, \"Hansen's three scenarios\")");
	return mr_error(-EINVAL, "unknown suite '%s' (kernbench, alloc, access)", name);
}
