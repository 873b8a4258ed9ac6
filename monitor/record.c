/* Record files (memreg-record(5)): a version 2 writer and a strict reader of versions
 * 1 and 2. Everything is
 * little-endian; every chunk carries a CRC-32 (zlib's) of its type, length and payload. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "common/proc.h"
#include "common/root.h"
#include "common/sys.h"
#include "common/util.h"
#include "monitor/record.h"

static void put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void put64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get64(const unsigned char *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

static uint32_t crc(const unsigned char *p, size_t len)
{
	return (uint32_t)crc32(crc32(0L, Z_NULL, 0), p, (uInt)len);
}

/* Fuzz builds accept any checksum so mutations reach the parser behind it. */
static bool crc_ok(uint32_t stored, const unsigned char *p, size_t len)
{
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
	(void)stored, (void)p, (void)len;
	return true;
#else
	return stored == crc(p, len);
#endif
}

/* Header layout (version 2): see memreg-record(5). */
static void encode_header(unsigned char *b, const struct mr_rec_header *h)
{
	memset(b, 0, MR_REC_HEADER_BYTES);
	memcpy(b, MR_REC_MAGIC, 8);
	put32(b + 8, MR_REC_VERSION);
	put32(b + 12, MR_REC_HEADER_BYTES);
	put32(b + 16, (uint32_t)h->kind);
	put32(b + 20, (uint32_t)h->pid);
	put64(b + 24, h->attrs.sample_us);
	put64(b + 32, h->attrs.aggr_us);
	put64(b + 40, h->attrs.update_us);
	put32(b + 48, h->attrs.min_nr_regions);
	put32(b + 52, h->attrs.max_nr_regions);
	memcpy(b + 56, h->backend, strnlen(h->backend, 15));	/* NUL-padded */
	put64(b + 72, h->start_unix_ns);
	put64(b + 80, h->kind == MR_MON_TARGET_PROCESS ? h->target_starttime_ticks : 0);
	/* 88..91 reserved, zero */
	put32(b + 92, crc(b, 92));
}

static int write_all(struct mr_rec_writer *w, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	while (len) {
		ssize_t n = mr_sys_write(w->fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return mr_error(-errno, "%s: write: %s", w->path, strerror(errno));
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

uint32_t mr_rec_samples_per_aggr(const struct mr_rec_header *h)
{
	uint64_t n = h->attrs.sample_us ? h->attrs.aggr_us / h->attrs.sample_us : 1;

	return n < 1 ? 1 : n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

double mr_rec_access_share(const struct mr_rec_snapshot *s, const struct mr_rec_region *r)
{
	double share = s->nr_samples ? (double)r->nr_accesses / s->nr_samples : 0;

	/* a backend that aggregates itself (the kernel's DAMON) may count past it */
	return share > 1 ? 1 : share;
}

int mr_rec_writer_open(struct mr_rec_writer *w, const char *path, const struct mr_rec_header *hdr)
{
	struct mr_rec_header h = *hdr;
	unsigned char b[MR_REC_HEADER_BYTES];
	int err;

	/* Here rather than in every caller: a process record without its target's
	 * start time cannot tell the process from a later one with the same pid. */
	if (h.kind == MR_MON_TARGET_PROCESS && h.pid > 0 && !h.target_starttime_ticks)
		mr_proc_starttime(h.pid, &h.target_starttime_ticks);	/* gone: stays 0 */
	w->path = path;
	w->fd = mr_sys_open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (w->fd < 0)
		return mr_error(-errno, "%s: %s", path, strerror(errno));
	encode_header(b, &h);
	err = write_all(w, b, sizeof(b));
	if (err) {
		mr_sys_close(w->fd);
		w->fd = -1;
	}
	return err;
}

static int write_chunk(struct mr_rec_writer *w, uint32_t type, unsigned char *chunk,
		       size_t payload_bytes)
{
	if (payload_bytes > MR_REC_MAX_CHUNK_BYTES)
		return mr_error(-E2BIG, "%s: chunk of %zu bytes too large", w->path, payload_bytes);
	put32(chunk, type);
	put32(chunk + 4, (uint32_t)payload_bytes);
	put32(chunk + 8 + payload_bytes, crc(chunk, 8 + payload_bytes));
	return write_all(w, chunk, 12 + payload_bytes);
}

int mr_rec_write_note(struct mr_rec_writer *w, const char *text)
{
	size_t n = strlen(text);
	unsigned char *c = malloc(n + 12);
	int err;

	if (!c)
		return mr_error(-ENOMEM, "%s: out of memory", w->path);
	memcpy(c + 8, text, n);
	err = write_chunk(w, MR_REC_CHUNK_NOTE, c, n);
	free(c);
	return err;
}

int mr_rec_write_snapshot(struct mr_rec_writer *w, uint64_t time_us, uint32_t nr_samples,
			  const struct mr_mon_region *regions, size_t nr)
{
	size_t payload = 16 + nr * MR_REC_REGION_BYTES, i;
	unsigned char *c, *p;
	int err;

	if (!nr_samples)
		return mr_error(-EINVAL, "%s: a snapshot of no samples", w->path);
	c = malloc(payload + 12);
	if (!c)
		return mr_error(-ENOMEM, "%s: out of memory", w->path);
	p = c + 8;
	put64(p, time_us);
	put32(p + 8, (uint32_t)nr);
	put32(p + 12, nr_samples);
	p += 16;
	for (i = 0; i < nr; i++, p += MR_REC_REGION_BYTES) {
		put64(p, regions[i].start);
		put64(p + 8, regions[i].end);
		put32(p + 16, regions[i].nr_accesses);
		put32(p + 20, regions[i].age);
	}
	err = write_chunk(w, MR_REC_CHUNK_SNAPSHOT, c, payload);
	free(c);
	return err;
}

int mr_rec_writer_close(struct mr_rec_writer *w)
{
	int err = 0;

	if (w->fd >= 0 && mr_sys_close(w->fd) < 0)
		err = mr_error(-errno, "%s: close: %s", w->path, strerror(errno));
	w->fd = -1;
	return err;
}

void mr_rec_free(struct mr_rec *rec)
{
	size_t i;

	for (i = 0; i < rec->nr_snaps; i++)
		free(rec->snaps[i].regions);
	free(rec->snaps);
	free(rec->note);
	memset(rec, 0, sizeof(*rec));
}

static int parse_header(const unsigned char *b, size_t len, const char *name,
			struct mr_rec_header *h)
{
	uint32_t v, kind, hlen;

	if (len < 8 || memcmp(b, MR_REC_MAGIC, 8) != 0)
		return mr_error(-EINVAL, "%s: not a memreg record file (bad magic)", name);
	if (len < 12)
		return mr_error(-EINVAL, "%s: header cut short", name);
	v = get32(b + 8);
	if (v != 1 && v != MR_REC_VERSION)
		return mr_error(-EINVAL, "%s: record format version %u, this memreg reads versions "
				"1 to %u", name, v, MR_REC_VERSION);
	hlen = v == 1 ? MR_REC_V1_HEADER_BYTES : MR_REC_HEADER_BYTES;
	if (len < hlen)
		return mr_error(-EINVAL, "%s: header cut short (%zu of %u bytes)", name, len, hlen);
	if (get32(b + 12) != hlen)
		return mr_error(-EINVAL, "%s: header size %u, expected %u for version %u", name,
				get32(b + 12), hlen, v);
	if (!crc_ok(get32(b + hlen - 4), b, hlen - 4))
		return mr_error(-EINVAL, "%s: header checksum mismatch", name);
	kind = get32(b + 16);
	if (kind >= MR_MON_TARGET_NR)
		return mr_error(-EINVAL, "%s: unknown target kind %u", name, kind);
	memset(h, 0, sizeof(*h));
	h->version = v;
	h->kind = (enum mr_mon_target_kind)kind;
	h->pid = (int32_t)get32(b + 20);
	h->attrs.sample_us = get64(b + 24);
	h->attrs.aggr_us = get64(b + 32);
	h->attrs.update_us = get64(b + 40);
	h->attrs.min_nr_regions = get32(b + 48);
	h->attrs.max_nr_regions = get32(b + 52);
	memcpy(h->backend, b + 56, 15);
	h->backend[15] = '\0';
	if (memchr(b + 56, '\0', 16) == NULL)
		return mr_error(-EINVAL, "%s: backend name not terminated", name);
	if (v == 1) {
		h->start_unix_ns = (uint64_t)get32(b + 72) * 1000000000u;
	} else {
		h->start_unix_ns = get64(b + 72);
		h->target_starttime_ticks = get64(b + 80);
		if (h->target_starttime_ticks && h->kind != MR_MON_TARGET_PROCESS)
			return mr_error(-EINVAL, "%s: a process start time in a physical record",
					name);
	}
	if (!h->attrs.sample_us || !h->attrs.aggr_us)
		return mr_error(-EINVAL, "%s: zero sampling or aggregation interval", name);
	return 0;
}

static int parse_snapshot(const unsigned char *p, size_t len, const char *name, size_t off,
			  uint64_t prev_time, const struct mr_rec_header *h,
			  struct mr_rec_snapshot *s)
{
	uint32_t nr;
	size_t i;

	if (len < 16)
		return mr_error(-EINVAL, "%s: offset %zu: snapshot chunk too short", name, off);
	s->time_us = get64(p);
	nr = get32(p + 8);
	/* version 1: bytes 12..15 are reserved; its snapshots are whole intervals */
	s->nr_samples = h->version == 1 ? mr_rec_samples_per_aggr(h) : get32(p + 12);
	if (!s->nr_samples)
		return mr_error(-EINVAL, "%s: offset %zu: snapshot of no samples", name, off);
	if ((len - 16) / MR_REC_REGION_BYTES != nr || (len - 16) % MR_REC_REGION_BYTES)
		return mr_error(-EINVAL, "%s: offset %zu: snapshot says %u regions in %zu bytes",
				name, off, nr, len);
	if (s->time_us < prev_time)
		return mr_error(-EINVAL, "%s: offset %zu: snapshot time goes backwards", name, off);
	s->regions = nr ? malloc(nr * sizeof(*s->regions)) : NULL;
	if (nr && !s->regions)
		return mr_error(-ENOMEM, "%s: out of memory", name);
	s->nr_regions = nr;
	p += 16;
	for (i = 0; i < nr; i++, p += MR_REC_REGION_BYTES) {
		struct mr_rec_region *r = &s->regions[i];

		r->start = get64(p);
		r->end = get64(p + 8);
		r->nr_accesses = get32(p + 16);
		r->age = get32(p + 20);
		if (r->start >= r->end || (i && r->start < s->regions[i - 1].end)) {
			/* the message first: r points into the array freed below */
			int err = mr_error(-EINVAL, "%s: offset %zu: region %zu [0x%llx, 0x%llx) is "
					   "empty or overlaps its predecessor", name, off, i,
					   (unsigned long long)r->start, (unsigned long long)r->end);

			free(s->regions);
			s->regions = NULL;
			return err;
		}
	}
	return 0;
}

int mr_rec_parse(const void *buf, size_t len, const char *name, struct mr_rec *rec)
{
	const unsigned char *b = buf;
	size_t off, cap = 0;
	uint64_t prev_time = 0;
	int err;

	memset(rec, 0, sizeof(*rec));
	err = parse_header(b, len, name, &rec->hdr);
	if (err)
		return err;
	off = rec->hdr.version == 1 ? MR_REC_V1_HEADER_BYTES : MR_REC_HEADER_BYTES;
	while (off < len) {
		uint32_t type, plen;

		if (len - off < 8) {
			rec->truncated = true;	/* a torn chunk header: the writer was stopped */
			break;
		}
		type = get32(b + off);
		plen = get32(b + off + 4);
		if (plen > MR_REC_MAX_CHUNK_BYTES) {
			err = mr_error(-EINVAL, "%s: offset %zu: chunk length %u over the %u limit",
				       name, off, plen, MR_REC_MAX_CHUNK_BYTES);
			goto fail;
		}
		if (len - off < 12 + (size_t)plen) {
			rec->truncated = true;
			break;
		}
		if (!crc_ok(get32(b + off + 8 + plen), b + off, 8 + (size_t)plen)) {
			err = mr_error(-EINVAL, "%s: offset %zu: chunk checksum mismatch", name, off);
			goto fail;
		}
		if (type == MR_REC_CHUNK_SNAPSHOT) {
			if (rec->nr_snaps == cap) {
				struct mr_rec_snapshot *s;

				cap = cap ? 2 * cap : 64;
				s = realloc(rec->snaps, cap * sizeof(*s));
				if (!s) {
					err = mr_error(-ENOMEM, "%s: out of memory", name);
					goto fail;
				}
				rec->snaps = s;
			}
			err = parse_snapshot(b + off + 8, plen, name, off, prev_time, &rec->hdr,
					     &rec->snaps[rec->nr_snaps]);
			if (err)
				goto fail;
			prev_time = rec->snaps[rec->nr_snaps].time_us;
			rec->nr_snaps++;
		} else if (type == MR_REC_CHUNK_NOTE) {
			char *n = malloc((size_t)plen + 1);

			if (!n) {
				err = mr_error(-ENOMEM, "%s: out of memory", name);
				goto fail;
			}
			memcpy(n, b + off + 8, plen);
			n[plen] = '\0';
			free(rec->note);
			rec->note = n;
		} else {
			err = mr_error(-EINVAL, "%s: offset %zu: unknown chunk type %u", name, off, type);
			goto fail;
		}
		off += 12 + (size_t)plen;
	}
	return 0;
fail:
	mr_rec_free(rec);
	return err;
}

int mr_rec_load(const char *path, struct mr_rec *rec)
{
	char *buf;
	size_t len;
	int err;

	err = mr_read_host_file(path, (size_t)4 << 30, &buf, &len);
	if (err)
		return err;
	err = mr_rec_parse((const unsigned char *)buf, len, path, rec);
	free(buf);
	return err;
}
