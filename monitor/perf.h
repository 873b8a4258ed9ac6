/* The perf backend's parts that tests reach: libpfm4 event encoding and the parser
 * of perf ring-buffer sample records. */
#ifndef MR_MONITOR_PERF_H
#define MR_MONITOR_PERF_H

/* libpfm4 ships its own copy of the perf ABI; linux/perf_event.h would clash */
#include <perfmon/pfmlib_perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the sampling events record: data address, weight (load latency, cycles),
 * data source, physical address where allowed. */
#define MR_PERF_SAMPLE_TYPE (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
			     PERF_SAMPLE_ADDR | PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC)

struct mr_perf_sample {
	uint64_t ip;
	uint32_t pid, tid;
	uint64_t time_ns;
	uint64_t addr;		/* data virtual address */
	uint64_t weight;	/* load latency in core cycles (PEBS) */
	uint64_t data_src;
	uint64_t phys_addr;	/* 0 unless PERF_SAMPLE_PHYS_ADDR */
};

/* "backend-perf.c" */
/* Encode the load-sampling event of this CPU's PMU (pfm_initialize() honours
 * LIBPFM_FORCE_PMU, which tests use): Intel PEBS load latency with ldlat
 * @min_latency cycles, else all retired loads; user level, precise_ip 2.
 * @name receives the event string used. -ENOTSUP naming the PMU when there is none
 * (on AMD: use the kernel's ibs_op PMU, which libpfm4 4.13 cannot set up). */
int mr_mon_perf_encode(unsigned min_latency, uint64_t period, struct perf_event_attr *attr,
		       char *name, size_t name_len);
/* Parse perf records in @buf (@len bytes) written with @sample_type (a subset of
 * MR_PERF_SAMPLE_TYPE | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_PHYS_ADDR);
 * calls @fn per PERF_RECORD_SAMPLE, skips other record types (counting LOST
 * records' lost samples in *@lost, and setting *@execd on a COMM record of an exec:
 * the samples after it are of another program's addresses). Returns the number of
 * samples, or -EINVAL for a malformed record (with mr_error). */
long mr_mon_perf_parse(const void *buf, size_t len, uint64_t sample_type,
		       void (*fn)(const struct mr_perf_sample *s, void *arg), void *arg,
		       uint64_t *lost, bool *execd);

#endif
