/* The `perf` backend: hardware memory-access sampling with data addresses (PEBS
 * load latency through libpfm4's encodings on Intel). A region counts as accessed
 * in a sampling interval when a sampled load hit it. Needs a PMU: none in VMs. */
#include "config.h"

#include <errno.h>
#include <perfmon/pfmlib_perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/root.h"
#include "common/sys.h"
#include "common/util.h"
#include "monitor/monitor.h"
#include "monitor/perf.h"

#define RING_PAGES 64	/* data pages (a power of two) plus one header page */

int mr_mon_perf_encode(unsigned min_latency, uint64_t period, struct perf_event_attr *attr,
		       char *name, size_t name_len)
{
	pfm_perf_encode_arg_t arg;
	char ev[128];
	size_t i;
	int ret = pfm_initialize();

	if (ret != PFM_SUCCESS)
		return mr_error(-ENOTSUP, "perf: libpfm4: %s", pfm_strerror(ret));
	for (i = 0; i < 2; i++) {
		/* load latency (Nehalem and later) first, else every retired load (Skylake+) */
		if (i == 0)
			snprintf(ev, sizeof(ev), "MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=%u", min_latency);
		else
			snprintf(ev, sizeof(ev), "MEM_INST_RETIRED:ALL_LOADS");
		memset(attr, 0, sizeof(*attr));
		memset(&arg, 0, sizeof(arg));
		arg.attr = attr;
		arg.size = sizeof(arg);
		ret = pfm_get_os_event_encoding(ev, PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
		if (ret == PFM_SUCCESS)
			break;
	}
	if (ret != PFM_SUCCESS) {
		if (mr_root_exists("/sys/bus/event_source/devices/ibs_op/type"))
			return mr_error(-ENOTSUP, "perf: no PEBS load event here; this is an AMD CPU "
					"with the kernel's ibs_op PMU, which libpfm4 cannot set up");
		return mr_error(-ENOTSUP, "perf: no PMU with load sampling here (libpfm4: %s)",
				pfm_strerror(ret));
	}
	attr->size = sizeof(*attr);
	attr->sample_period = period;
	attr->sample_type = MR_PERF_SAMPLE_TYPE;
	attr->precise_ip = 2;		/* PEBS: the address of the sampled load itself */
	attr->exclude_kernel = 1;
	attr->exclude_hv = 1;
	attr->disabled = 1;
	attr->inherit = 0;		/* ring buffers cannot be inherited */
	snprintf(name, name_len, "%s", ev);
	return 0;
}

static int take(const unsigned char **p, const unsigned char *end, void *out, size_t n)
{
	if ((size_t)(end - *p) < n)
		return -1;
	memcpy(out, *p, n);
	*p += n;
	return 0;
}

long mr_mon_perf_parse(const void *buf, size_t len, uint64_t sample_type,
		       void (*fn)(const struct mr_perf_sample *s, void *arg), void *arg,
		       uint64_t *lost, bool *execd)
{
	const uint64_t supported = MR_PERF_SAMPLE_TYPE | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
				   PERF_SAMPLE_PHYS_ADDR | PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_ID;
	const unsigned char *p = buf, *end = p + len;
	long n = 0;

	if (sample_type & ~supported)
		return mr_error(-EINVAL, "perf: sample type %#llx has fields this parser does "
				"not read", (unsigned long long)(sample_type & ~supported));
	while (p < end) {
		struct perf_event_header h;
		const unsigned char *rec = p, *rend;
		struct mr_perf_sample s = { 0 };
		uint64_t skip;
		uint32_t cpu[2];

		if (take(&p, end, &h, sizeof(h)))
			return mr_error(-EINVAL, "perf: record header cut at offset %zu",
					(size_t)(rec - (const unsigned char *)buf));
		if (h.size < sizeof(h) || (size_t)(end - rec) < h.size)
			return mr_error(-EINVAL, "perf: record at offset %zu: size %u does not fit",
					(size_t)(rec - (const unsigned char *)buf), h.size);
		rend = rec + h.size;
		if (h.type == PERF_RECORD_COMM && (h.misc & PERF_RECORD_MISC_COMM_EXEC)) {
			if (execd)
				*execd = true;
		} else if (h.type == PERF_RECORD_LOST) {
			uint64_t id_lost[2];

			if (take(&p, rend, id_lost, sizeof(id_lost)))
				return mr_error(-EINVAL, "perf: LOST record too short");
			if (lost)
				*lost += id_lost[1];
		} else if (h.type == PERF_RECORD_SAMPLE) {
			int bad = 0;

			/* field order as in include/uapi/linux/perf_event.h */
			if (sample_type & PERF_SAMPLE_IDENTIFIER)
				bad |= take(&p, rend, &skip, 8);
			if (sample_type & PERF_SAMPLE_IP)
				bad |= take(&p, rend, &s.ip, 8);
			if (sample_type & PERF_SAMPLE_TID) {
				bad |= take(&p, rend, &s.pid, 4);
				bad |= take(&p, rend, &s.tid, 4);
			}
			if (sample_type & PERF_SAMPLE_TIME)
				bad |= take(&p, rend, &s.time_ns, 8);
			if (sample_type & PERF_SAMPLE_ADDR)
				bad |= take(&p, rend, &s.addr, 8);
			if (sample_type & PERF_SAMPLE_ID)
				bad |= take(&p, rend, &skip, 8);
			if (sample_type & PERF_SAMPLE_CPU)
				bad |= take(&p, rend, cpu, 8);
			if (sample_type & PERF_SAMPLE_PERIOD)
				bad |= take(&p, rend, &skip, 8);
			if (sample_type & PERF_SAMPLE_WEIGHT)
				bad |= take(&p, rend, &s.weight, 8);
			if (sample_type & PERF_SAMPLE_DATA_SRC)
				bad |= take(&p, rend, &s.data_src, 8);
			if (sample_type & PERF_SAMPLE_PHYS_ADDR)
				bad |= take(&p, rend, &s.phys_addr, 8);
			if (bad || p != rend)
				return mr_error(-EINVAL, "perf: sample at offset %zu: %u bytes, the "
						"sample type needs %s", (size_t)(rec - (const unsigned char *)buf),
						h.size, bad ? "more" : "fewer");
			if (fn)
				fn(&s, arg);
			n++;
		}
		p = rend;	/* other records (MMAP, COMM of a new name, ...) are not needed */
	}
	return n;
}

struct perf_priv {
	int fd;
	void *ring;
	size_t ring_bytes;
	uint64_t sample_type;
	unsigned char *copy;		/* a record that wraps around the ring, linearised */
	bool *hit;			/* per region, this sampling interval */
	size_t cap_hit;			/* entries allocated in hit */
};

static int open_event(pid_t pid, struct perf_priv *p)
{
	struct perf_event_attr attr;
	char name[128];
	long pg = sysconf(_SC_PAGESIZE);
	int err = mr_mon_perf_encode(3, 1000, &attr, name, sizeof(name));

	if (err)
		return err;
	/* a COMM record when the target execs (Linux 3.16): its regions are then another
	 * program's, and the core starts again on the new one */
	attr.comm = 1;
	attr.comm_exec = 1;
	p->fd = (int)mr_sys_perf_event_open(&attr, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (p->fd < 0)
		return mr_error(-ENOTSUP, "perf: perf_event_open(%s): %s", name, strerror(errno));
	p->sample_type = attr.sample_type;
	p->ring_bytes = (size_t)(RING_PAGES + 1) * (size_t)pg;
	p->ring = mmap(NULL, p->ring_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, p->fd, 0);
	if (p->ring == MAP_FAILED) {
		p->ring = NULL;
		return mr_error(-errno, "perf: mmap of the sample ring: %s", strerror(errno));
	}
	return 0;
}

static void close_event(struct perf_priv *p)
{
	if (p->ring)
		munmap(p->ring, p->ring_bytes);
	if (p->fd >= 0)
		mr_sys_close(p->fd);
	p->ring = NULL;
	p->fd = -1;
}

/* Hand the records between data_tail and data_head to the parser, then free them.
 * *@execd: the target exec'd (see mr_mon_perf_parse). */
static long drain(struct perf_priv *p, void (*fn)(const struct mr_perf_sample *, void *), void *arg,
		  bool *execd)
{
	struct perf_event_mmap_page *meta = p->ring;
	unsigned char *data = (unsigned char *)p->ring + meta->data_offset;
	uint64_t size = meta->data_size, head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = meta->data_tail, used = head - tail, off = tail % size;
	long n;

	if (!used)
		return 0;
	/* linearise: records may wrap around the end of the ring */
	p->copy = realloc(p->copy, used);
	if (!p->copy)
		return mr_error(-ENOMEM, "perf: out of memory");
	if (off + used <= size) {
		memcpy(p->copy, data + off, used);
	} else {
		memcpy(p->copy, data + off, size - off);
		memcpy(p->copy + (size - off), data, used - (size - off));
	}
	n = mr_mon_perf_parse(p->copy, used, p->sample_type, fn, arg, NULL, execd);
	__atomic_store_n(&meta->data_tail, head, __ATOMIC_RELEASE);
	return n;
}

static void count_self(const struct mr_perf_sample *s, void *arg)
{
	uint64_t *range = arg;

	if (s->addr >= range[0] && s->addr < range[1])
		range[2]++;
}

/* Open the event on ourselves and see samples land in a buffer we read. */
static int perf_selftest(struct mr_mon_ctx *ctx)
{
	struct perf_priv p = { .fd = -1 };
	uint64_t range[3] = { 0 };
	volatile char *buf;
	size_t i, round;
	int err = open_event(0, &p);

	if (err) {
		close_event(&p);
		return err;
	}
	buf = malloc(8u << 20);
	if (!buf) {
		close_event(&p);
		return mr_error(-ENOMEM, "perf: out of memory");
	}
	range[0] = (uintptr_t)buf;
	range[1] = range[0] + (8u << 20);
	ioctl(p.fd, PERF_EVENT_IOC_ENABLE, 0);
	for (round = 0; round < 20 && !range[2]; round++) {
		for (i = 0; i < (8u << 20); i += 64)
			(void)buf[(i * 7919) % (8u << 20)];
		if (drain(&p, count_self, range, NULL) < 0)
			break;
	}
	free((void *)buf);
	close_event(&p);
	free(p.copy);
	if (!range[2])
		return mr_error(-ENOTSUP, "perf: the load event opened but no sample hit a "
				"buffer read 20 times");
	return 0;
}

static int perf_init(struct mr_mon_ctx *ctx)
{
	struct perf_priv *p = calloc(1, sizeof(*p));
	int err;

	if (!p)
		return mr_error(-ENOMEM, "perf: out of memory");
	p->fd = -1;
	ctx->priv = p;
	err = open_event(ctx->target.pid, p);
	if (!err)
		ioctl(p->fd, PERF_EVENT_IOC_ENABLE, 0);
	return err;
}

static void mark(const struct mr_perf_sample *s, void *arg)
{
	struct mr_mon_ctx *ctx = arg;
	struct perf_priv *p = ctx->priv;
	struct mr_mon_target *t = &ctx->target;
	size_t lo = 0, hi = t->nr_regions;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (s->addr < t->regions[mid].start)
			hi = mid;
		else if (s->addr >= t->regions[mid].end)
			lo = mid + 1;
		else {
			p->hit[mid] = true;
			return;
		}
	}
}

/* A region is accessed in this interval when any sampled load hit it: sampling
 * picks the addresses, not the monitor, so sampling_addr is not used. */
static int perf_check(struct mr_mon_ctx *ctx, uint32_t *max_nr)
{
	struct perf_priv *p = ctx->priv;
	bool execd = false;
	size_t i;
	long n;

	/* every sampling interval: reuse the array, grow it only with the regions */
	if (ctx->target.nr_regions + 1 > p->cap_hit) {
		bool *hit = realloc(p->hit, (ctx->target.nr_regions + 1) * sizeof(bool));

		if (!hit)
			return mr_error(-ENOMEM, "perf: out of memory");
		p->hit = hit;
		p->cap_hit = ctx->target.nr_regions + 1;
	}
	memset(p->hit, 0, p->cap_hit * sizeof(bool));
	n = drain(p, mark, ctx, &execd);
	if (n < 0)
		return (int)n;
	/* its address space is another program's: the core makes the regions afresh
	 * (monitor/core.c, a target that execs), and this interval's samples go */
	if (execd)
		return mr_error(-ESRCH, "perf: pid %d exec'd", (int)ctx->target.pid);
	for (i = 0; i < ctx->target.nr_regions; i++) {
		if (p->hit[i])
			ctx->target.regions[i].nr_accesses++;
		if (ctx->target.regions[i].nr_accesses > *max_nr)
			*max_nr = ctx->target.regions[i].nr_accesses;
	}
	return 0;
}

static void perf_cleanup(struct mr_mon_ctx *ctx)
{
	struct perf_priv *p = ctx->priv;

	if (!p)
		return;
	close_event(p);
	free(p->copy);
	free(p->hit);
	free(p);
	ctx->priv = NULL;
}

const struct mr_mon_ops mr_mon_ops_perf = {
	.name = "perf",
	.help = "hardware sampling of loads with their data addresses: Intel PEBS load\n"
		"latency (MEM_TRANS_RETIRED.LOAD_LATENCY, ldlat 3) through libpfm4, one sample\n"
		"per 1000 loads; a region is accessed in a sampling interval when a sampled\n"
		"load hit it. Needs a PMU with PEBS (none in VMs); on AMD the kernel's ibs_op\n"
		"PMU would be needed, which libpfm4 4.13 cannot program.",
	/* the PMU does the sampling: reading the ring is cheap */
	.default_attrs = { .sample_us = 10000, .aggr_us = 200000, .update_us = 2000000,
			   .min_nr_regions = 10, .max_nr_regions = 1000 },
	.process_only = true,
	.selftest = perf_selftest,
	.init = perf_init,
	.check = perf_check,
	.cleanup = perf_cleanup,
};
