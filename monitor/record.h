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
#define MR_REC_VERSION 1u
#define MR_REC_HEADER_BYTES 80u
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
	uint64_t start_unix_ns;
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

int mr_rec_writer_open(struct mr_rec_writer *w, const char *path, const struct mr_rec_header *hdr);
int mr_rec_write_note(struct mr_rec_writer *w, const char *text);
/* One snapshot chunk, written with a single write(2) so an interruption leaves
 * either the whole chunk or a torn tail the reader drops. */
int mr_rec_write_snapshot(struct mr_rec_writer *w, uint64_t time_us,
			  const struct mr_mon_region *regions, size_t nr);
int mr_rec_writer_close(struct mr_rec_writer *w);

#endif
