/* DRAM energy sources behind one interface: RAPL through powercap, perf or the MSRs,
 * and the model where the hardware reports nothing. Sources register by name. */
#ifndef MR_POWER_ENERGY_H
#define MR_POWER_ENERGY_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/util.h"

#define MR_ENERGY_MAX_SOCKETS	64
/* The largest DRAM power one socket plausibly draws, W. The sampling period is the
 * time the smallest counter range takes to fill at this power, halved, so that no
 * counter can wrap twice between two reads. */
#define MR_ENERGY_MAX_SOCKET_W	400

/*
 * struct mr_energy_counter - one socket's DRAM energy counter.
 * @socket:	physical package id (or NUMA node for the model, see @label).
 * @label:	where it is read ("intel-rapl:0:0", "cpu0 msr", "node 0 (model)").
 * @raw:	the last raw value read.
 * @range_raw:	the counter counts modulo this value; 0 means 2^64 (never wraps).
 * @uj_per_raw:	energy of one raw count, uJ.
 * @energy_uj:	energy accumulated since mr_energy_start(), uJ.
 * @fd:		the source's open file or perf event, -1 if none.
 * @cpu:	the CPU the counter is read through, -1 if none.
 */
struct mr_energy_counter {
	int socket;
	char label[300];
	uint64_t raw;
	uint64_t range_raw;
	double uj_per_raw;
	double energy_uj;
	int fd;
	int cpu;
	char path[320];
};

struct mr_energy_source;

/*
 * struct mr_energy_ops - one energy source.
 * @name:	registry name, as --source takes it.
 * @measured:	true when the figures come from hardware counters.
 * @open:	find the counters (fill @src->counters, @src->nr_counters, units and
 *		ranges); 0, or -errno with mr_error() saying why the source is not usable.
 * @read:	read every counter's raw value into ->raw; 0 or -errno.
 * @close:	release what @open took besides counter fds, which the generic close
 *		closes (may be NULL).
 */
struct mr_energy_ops {
	const char *name;
	const char *description;
	bool measured;
	int (*open)(struct mr_energy_source *src);
	int (*read)(struct mr_energy_source *src);
	void (*close)(struct mr_energy_source *src);
};

struct mr_energy_opts {
	const char *event;		/* perf: sysfs or libpfm4 event name, NULL: energy-ram */
	uint64_t sample_period_ms;	/* 0: computed from the counter ranges */
};

/*
 * struct mr_energy_source - an open source and its accumulated energy.
 * @notes:	why `auto` skipped the other sources, unit quirks applied, ...
 * @sample_period_ms: how often the sampling thread reads (0: no thread needed).
 */
struct mr_energy_source {
	const struct mr_energy_ops *ops;
	struct mr_energy_opts opts;
	struct mr_energy_counter counters[MR_ENERGY_MAX_SOCKETS];
	unsigned nr_counters;
	char detail[256];
	char notes[8][256];
	unsigned nr_notes;
	uint64_t sample_period_ms;
	void *priv;

	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t thread;
	bool thread_running, thread_stop;
	int thread_err;
};

/* "energy.c" */
extern const struct mr_energy_ops mr_energy_powercap_ops;	/* "src-powercap.c" */
extern const struct mr_energy_ops mr_energy_perf_ops;		/* "src-perf.c" */
extern const struct mr_energy_ops mr_energy_msr_ops;		/* "src-msr.c" */
extern const struct mr_energy_ops mr_energy_model_ops;		/* "src-model.c" */

/* The sources in `auto` order; NULL-terminated. */
extern const struct mr_energy_ops *const mr_energy_sources[];
const struct mr_energy_ops *mr_energy_find(const char *name);

/* Open source @name ("auto": the first usable one, with a note for each skipped).
 * 0, or -errno with mr_error(); on failure nothing is left open. */
int mr_energy_open(struct mr_energy_source *src, const char *name,
		   const struct mr_energy_opts *opts);
void mr_energy_close(struct mr_energy_source *src);
void mr_energy_note(struct mr_energy_source *src, const char *fmt, ...) MR_PRINTF(2, 3);

/* Take the baseline (energy_uj = 0) and start the sampling thread if the ranges need one.
 * The thread blocks every signal: they stay with the caller's threads. */
int mr_energy_start(struct mr_energy_source *src);
/* Read all counters now and add the deltas to energy_uj (thread-safe). */
int mr_energy_update(struct mr_energy_source *src);
/* Stop the sampling thread (after a last mr_energy_update() by the caller). */
void mr_energy_stop(struct mr_energy_source *src);
double mr_energy_total_uj(struct mr_energy_source *src);

/* @now - @prev modulo @range (0 = 2^64): the counts between two readings, assuming
 * at most one wrap. */
uint64_t mr_energy_delta(uint64_t prev, uint64_t now, uint64_t range);
/* Half the time the smallest range takes to fill at MR_ENERGY_MAX_SOCKET_W, ms;
 * 0 when no counter can wrap in practice (over a day). */
uint64_t mr_energy_period_ms(const struct mr_energy_source *src);

/* Helpers shared by the sources. */
/* Parse a Linux cpulist ("0-3,8,10-11") into @cpus (sorted), at most @max. */
int mr_energy_parse_cpulist(const char *s, int *cpus, unsigned max, unsigned *nr);
/* The physical_package_id of @cpu (through the root layer), or -errno. */
int mr_energy_cpu_package(int cpu);
/* One CPU per physical package from /sys/devices/system/cpu: @cpus[i] is the lowest
 * online CPU of package @pkgs[i]. */
int mr_energy_socket_cpus(int *cpus, int *pkgs, unsigned max, unsigned *nr);

#endif
