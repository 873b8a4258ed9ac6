/* Record files: a header, then append-only chunks (one per snapshot), each with its
 * own CRC, so a file cut short by a crash is still valid up to its last whole chunk.
 * The format is documented in memreg-record(5). */
#ifndef MR_MONITOR_RECORD_H
#define MR_MONITOR_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "monitor/monitor.h"

#define MR_REC_MAGIC "MRMONREC"
#define MR_REC_VERSION 2u		/* written; version 1 is still read */
#define MR_REC_HEADER_BYTES 96u		/* version 2 */
#define MR_REC_V1_HEADER_BYTES 80u
#define MR_REC_CHUNK_SNAPSHOT 1u
#define MR_REC_CHUNK_NOTE 2u
#define MR_REC_REGION_BYTES 24u
#define MR_REC_MAX_CHUNK_BYTES (64u << 20)

struct mr_rec_header {
	uint32_t version;
	enum mr_mon_target_kind kind;
	int32_t pid;
	struct mr_mon_attrs attrs;
	char backend[16];		/* NUL-terminated */
	uint64_t start_unix_ns;		/* version 1 files keep whole seconds */
	/* The target process's start time (/proc/PID/stat field 22, clock ticks after
	 * boot): tells it from a later process that reuses the pid. 0 for physical
	 * records, version 1 files, or when it could not be read. */
	uint64_t target_starttime_ticks;
};

struct mr_rec_region {
	uint64_t start;
	uint64_t end;
	uint32_t nr_accesses;
	uint32_t age;
};

struct mr_rec_snapshot {
	uint64_t time_us;		/* since the start of recording */
	struct mr_rec_region *regions;
	size_t nr_regions;
	/* Sampling intervals aggregated into this snapshot: attrs.aggr_us / sample_us
	 * for a whole aggregation interval, fewer for the last one when the target
	 * ended or monitoring stopped inside it. nr_accesses / nr_samples is the share
	 * of samples that found the region accessed. Version 1 files have no such
	 * field: the reader fills in the whole-interval count. Never 0 in a file
	 * read; last, so that positional initializers of the fields above still fit. */
	uint32_t nr_samples;
};

struct mr_rec {
	struct mr_rec_header hdr;
	struct mr_rec_snapshot *snaps;
	size_t nr_snaps;
	char *note;			/* the last NOTE chunk (e.g. the command), or NULL */
	bool truncated;			/* the file ended inside a chunk (interrupted writer) */
};

struct mr_rec_writer {
	int fd;
	const char *path;
};

/* "record.c" */
/* Parse a whole file image; @name is used in error messages. One-line error. */
int mr_rec_parse(const void *buf, size_t len, const char *name, struct mr_rec *rec);
int mr_rec_load(const char *path, struct mr_rec *rec);
void mr_rec_free(struct mr_rec *rec);

/* Samples in one whole aggregation interval of @h: aggr_us / sample_us, at least 1. */
uint32_t mr_rec_samples_per_aggr(const struct mr_rec_header *h);
/* The share of @s's samples that found @r accessed, in [0, 1]. */
double mr_rec_access_share(const struct mr_rec_snapshot *s, const struct mr_rec_region *r);

/* Writes a version 2 header. For a process record whose target_starttime_ticks is 0,
 * fills it from /proc/PID/stat (left 0 when unreadable: the process is gone). */
int mr_rec_writer_open(struct mr_rec_writer *w, const char *path, const struct mr_rec_header *hdr);
int mr_rec_write_note(struct mr_rec_writer *w, const char *text);
/* One snapshot chunk, written with a single write(2) so an interruption leaves
 * either the whole chunk or a torn tail the reader drops. @nr_samples: the
 * sampling intervals it aggregates (struct mr_rec_snapshot; ctx->aggr_nr_samples
 * in a snapshot callback); 0 is -EINVAL. */
int mr_rec_write_snapshot(struct mr_rec_writer *w, uint64_t time_us, uint32_t nr_samples,
			  const struct mr_mon_region *regions, size_t nr);
int mr_rec_writer_close(struct mr_rec_writer *w);

#endif
