/* The energy-source registry, `auto` selection, wrap-safe accumulation and the
 * sampling thread that keeps long runs from losing a counter wrap. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/root.h"
#include "common/sys.h"
#include "power/energy.h"

const struct mr_energy_ops *const mr_energy_sources[] = {
	&mr_energy_powercap_ops,
	&mr_energy_perf_ops,
	&mr_energy_msr_ops,
	&mr_energy_model_ops,
	NULL,
};

const struct mr_energy_ops *mr_energy_find(const char *name)
{
	unsigned i;

	for (i = 0; mr_energy_sources[i]; i++)
		if (strcmp(mr_energy_sources[i]->name, name) == 0)
			return mr_energy_sources[i];
	return NULL;
}

void mr_energy_note(struct mr_energy_source *src, const char *fmt, ...)
{
	va_list ap;

	if (src->nr_notes >= MR_ARRAY_SIZE(src->notes))
		return;
	va_start(ap, fmt);
	vsnprintf(src->notes[src->nr_notes++], sizeof(src->notes[0]), fmt, ap);
	va_end(ap);
}

static void reset(struct mr_energy_source *src, const struct mr_energy_ops *ops)
{
	unsigned i;

	src->ops = ops;
	src->nr_counters = 0;
	src->detail[0] = '\0';
	src->priv = NULL;
	for (i = 0; i < MR_ENERGY_MAX_SOCKETS; i++) {
		memset(&src->counters[i], 0, sizeof(src->counters[i]));
		src->counters[i].fd = -1;
		src->counters[i].cpu = -1;
	}
}

/* Release what @src's open took: the source's own state (@ops->close), then every
 * counter's file or perf event, which the generic code owns. */
static void close_source(struct mr_energy_source *src)
{
	unsigned i;

	if (src->ops && src->ops->close)
		src->ops->close(src);
	for (i = 0; i < src->nr_counters; i++)
		if (src->counters[i].fd >= 0) {
			mr_sys_close(src->counters[i].fd);
			src->counters[i].fd = -1;
		}
}

/* The sampling period: the one asked for, or computed from the counter ranges. */
static void set_period(struct mr_energy_source *src)
{
	src->sample_period_ms = src->opts.sample_period_ms ?
		src->opts.sample_period_ms : mr_energy_period_ms(src);
}

/* 0, or -ERANGE (mr_error set) when counter @c reads beyond its range. */
static int check_range(const struct mr_energy_counter *c)
{
	if (c->range_raw && c->raw >= c->range_raw)
		return mr_error(-ERANGE, "%s: counter value beyond its range %llu",
				c->label, (unsigned long long)c->range_raw);
	return 0;
}

static int open_one(struct mr_energy_source *src, const struct mr_energy_ops *ops)
{
	int ret;

	reset(src, ops);
	ret = ops->open(src);
	if (ret == 0 && src->nr_counters == 0)
		ret = mr_error(-ENODEV, "%s: no counters", ops->name);
	if (ret) {
		char msg[512];

		snprintf(msg, sizeof(msg), "%s", mr_last_error());
		close_source(src);
		reset(src, NULL);
		mr_error(ret, "%s", msg);
	}
	return ret;
}

int mr_energy_open(struct mr_energy_source *src, const char *name,
		   const struct mr_energy_opts *opts)
{
	const struct mr_energy_ops *ops;
	unsigned i;
	int ret;

	memset(src, 0, sizeof(*src));
	if (opts)
		src->opts = *opts;
	pthread_mutex_init(&src->lock, NULL);
	pthread_cond_init(&src->cond, NULL);

	if (strcmp(name, "auto") != 0) {
		ops = mr_energy_find(name);
		if (!ops)
			return mr_error(-EINVAL, "unknown energy source '%s' "
					"(auto, powercap, perf, msr, model)", name);
		ret = open_one(src, ops);
		if (ret)
			return ret;
		set_period(src);
		return 0;
	}
	for (i = 0; mr_energy_sources[i]; i++) {
		ops = mr_energy_sources[i];
		ret = open_one(src, ops);
		if (ret == 0) {
			mr_energy_note(src, "auto: picked %s", ops->name);
			set_period(src);
			return 0;
		}
		mr_energy_note(src, "auto: %s not usable: %s", ops->name, mr_last_error());
	}
	return mr_error(-ENODEV, "no energy source usable");
}

void mr_energy_close(struct mr_energy_source *src)
{
	mr_energy_stop(src);
	close_source(src);
	src->ops = NULL;
	pthread_mutex_destroy(&src->lock);
	pthread_cond_destroy(&src->cond);
}

uint64_t mr_energy_delta(uint64_t prev, uint64_t now, uint64_t range)
{
	if (range == 0)
		return now - prev;		/* modulo 2^64 by unsigned arithmetic */
	if (now >= prev)
		return now - prev;
	return range - prev + now;
}

uint64_t mr_energy_period_ms(const struct mr_energy_source *src)
{
	double min_ms = 0;
	unsigned i;

	for (i = 0; i < src->nr_counters; i++) {
		const struct mr_energy_counter *c = &src->counters[i];
		double fill_ms;

		if (c->range_raw == 0)
			continue;
		/* uJ / (W = uJ/us) -> us; /1000 -> ms; halved. */
		fill_ms = (double)c->range_raw * c->uj_per_raw / MR_ENERGY_MAX_SOCKET_W / 1000.0 / 2;
		if (min_ms == 0 || fill_ms < min_ms)
			min_ms = fill_ms;
	}
	if (min_ms == 0 || min_ms > 86400e3)
		return 0;
	return min_ms < 1 ? 1 : (uint64_t)min_ms;
}

/* Caller holds src->lock. */
static int update_locked(struct mr_energy_source *src)
{
	uint64_t prev[MR_ENERGY_MAX_SOCKETS];
	unsigned i;
	int ret;

	for (i = 0; i < src->nr_counters; i++)
		prev[i] = src->counters[i].raw;
	ret = src->ops->read(src);
	if (ret) {
		for (i = 0; i < src->nr_counters; i++)
			src->counters[i].raw = prev[i];
		return ret;
	}
	for (i = 0; i < src->nr_counters; i++) {
		struct mr_energy_counter *c = &src->counters[i];

		ret = check_range(c);
		if (ret) {
			c->raw = prev[i];
			return ret;
		}
		c->energy_uj += (double)mr_energy_delta(prev[i], c->raw, c->range_raw) *
				c->uj_per_raw;
	}
	return 0;
}

int mr_energy_update(struct mr_energy_source *src)
{
	int ret;

	pthread_mutex_lock(&src->lock);
	ret = update_locked(src);
	pthread_mutex_unlock(&src->lock);
	return ret;
}

static void *sampler(void *arg)
{
	struct mr_energy_source *src = arg;
	struct timespec ts;

	pthread_mutex_lock(&src->lock);
	while (!src->thread_stop) {
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += src->sample_period_ms / 1000;
		ts.tv_nsec += (long)(src->sample_period_ms % 1000) * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		while (!src->thread_stop &&
		       pthread_cond_timedwait(&src->cond, &src->lock, &ts) != ETIMEDOUT)
			;
		if (src->thread_stop)
			break;
		if (update_locked(src) && !src->thread_err)
			src->thread_err = -EIO;
	}
	pthread_mutex_unlock(&src->lock);
	return NULL;
}

int mr_energy_start(struct mr_energy_source *src)
{
	unsigned i;
	int ret;

	ret = src->ops->read(src);
	if (ret)
		return ret;
	for (i = 0; i < src->nr_counters; i++) {
		ret = check_range(&src->counters[i]);
		if (ret)
			return ret;
		src->counters[i].energy_uj = 0;
	}
	if (src->sample_period_ms) {
		sigset_t all, old;

		src->thread_stop = false;
		/* The thread takes no signals: a signal handler of the caller (memregctl
		 * energy passes SIGTERM on to its COMMAND) must run in the caller's thread,
		 * which blocks them while it has no one to pass them to. */
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		ret = pthread_create(&src->thread, NULL, sampler, src);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (ret)
			return mr_error(-ret, "sampling thread: %s", strerror(ret));
		src->thread_running = true;
	}
	return 0;
}

void mr_energy_stop(struct mr_energy_source *src)
{
	if (!src->thread_running)
		return;
	pthread_mutex_lock(&src->lock);
	src->thread_stop = true;
	pthread_cond_signal(&src->cond);
	pthread_mutex_unlock(&src->lock);
	pthread_join(src->thread, NULL);
	src->thread_running = false;
}

double mr_energy_total_uj(struct mr_energy_source *src)
{
	double sum = 0;
	unsigned i;

	pthread_mutex_lock(&src->lock);
	for (i = 0; i < src->nr_counters; i++)
		sum += src->counters[i].energy_uj;
	pthread_mutex_unlock(&src->lock);
	return sum;
}

int mr_energy_parse_cpulist(const char *s, int *cpus, unsigned max, unsigned *nr)
{
	const char *p = s;
	unsigned n = 0;

	while (*p && !isspace((unsigned char)*p)) {
		char *end;
		long a, b;

		if (!isdigit((unsigned char)*p))
			return mr_error(-EINVAL, "bad cpu list \"%s\"", s);
		a = strtol(p, &end, 10);
		b = a;
		if (*end == '-') {
			if (!isdigit((unsigned char)end[1]))
				return mr_error(-EINVAL, "bad cpu list \"%s\"", s);
			b = strtol(end + 1, &end, 10);
		}
		if (b < a || b > 1 << 20)
			return mr_error(-EINVAL, "bad cpu list \"%s\"", s);
		for (; a <= b; a++) {
			if (n == max)
				return mr_error(-E2BIG, "cpu list \"%s\": more than %u cpus", s, max);
			cpus[n++] = (int)a;
		}
		if (*end == ',')
			end++;
		else if (*end && !isspace((unsigned char)*end))
			return mr_error(-EINVAL, "bad cpu list \"%s\"", s);
		p = end;
	}
	*nr = n;
	return 0;
}

int mr_energy_cpu_package(int cpu)
{
	char path[128];
	uint64_t pkg;
	int ret;

	ret = mr_root_read_u64(mr_pathf(path, sizeof(path),
			"/sys/devices/system/cpu/cpu%d/topology/physical_package_id", cpu), &pkg);
	if (ret)
		return ret;
	if (pkg > INT_MAX)
		return mr_error(-ERANGE, "%s: package id %llu out of range", path,
				(unsigned long long)pkg);
	return (int)pkg;
}

int mr_energy_socket_cpus(int *cpus, int *pkgs, unsigned max, unsigned *nr)
{
	static int online[4096];
	char buf[4096];
	unsigned n_online = 0, n = 0, i, j;
	int ret;

	ret = mr_root_read_str("/sys/devices/system/cpu/online", buf, sizeof(buf));
	if (ret)
		return ret;
	ret = mr_energy_parse_cpulist(buf, online, MR_ARRAY_SIZE(online), &n_online);
	if (ret)
		return mr_error_wrap(ret, "/sys/devices/system/cpu/online");
	for (i = 0; i < n_online; i++) {
		int pkg = mr_energy_cpu_package(online[i]);

		if (pkg < 0)
			return pkg;
		for (j = 0; j < n; j++)
			if (pkgs[j] == pkg)
				break;
		if (j < n)
			continue;
		if (n == max)
			return mr_error(-E2BIG, "more than %u sockets", max);
		pkgs[n] = pkg;
		cpus[n] = online[i];
		n++;
	}
	*nr = n;
	return 0;
}
