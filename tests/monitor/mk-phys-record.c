/* Test helper: write a small record, or (`mk-phys-record --pfn-readable`) exit 0
 * when this process can read its own pagemap PFNs, 77 when they read as 0.
 * Write a small record: `mk-phys-record FILE`: physical memory
 * [0, 1 GiB) in 128 MiB regions, [128 MiB, 256 MiB) accessed in half of the samples
 * (5 of 10), the rest never, 4 snapshots. `mk-phys-record FILE process`: the same
 * as a process record of a pid that does not exist. `mk-phys-record FILE spans`:
 * physical [512 MiB, 2 GiB) and [4 GiB, 5632 MiB) in 256 MiB regions, snapshots at
 * 0.25 s, 0.5 s, ... 1.5 s (for heatmaps over server-2s-mpst's power regions).
 * `mk-phys-record FILE span PID TICKS START_S`: a process record of PID (started at
 * TICKS; 0 lets the writer look it up under MEMREG_ROOT), recording started at
 * START_S seconds since the Epoch, 4 snapshots of one region [0x10000000,
 * 0x1100008000) accessed in 5 of 10 samples (as the kernel's DAMON's vaddr regions
 * span holes and reservations).
 * `mk-phys-record --pagemap FILE VPN PFN COUNT`: write COUNT present pagemap
 * entries at page VPN of a fixture pagemap, frames PFN, PFN + 1, ... (PFN 0: all
 * frames hidden, as a reader without CAP_SYS_ADMIN sees them). */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/root.h"
#include "common/util.h"
#include "monitor/record.h"

int main(int argc, char **argv)
{
	struct mr_rec_header h = { .kind = MR_MON_TARGET_PHYS,
				   .attrs = { 10000, 100000, 1000000, 10, 1000 } };
	struct mr_mon_region r[8], spans[12];
	struct mr_rec_writer w;
	unsigned i;

	if (argc < 2)
		return 2;
	if (!strcmp(argv[1], "--pfn-readable")) {
		static char page[4096] __attribute__((aligned(4096)));
		uint64_t e = 0;
		int fd = open("/proc/self/pagemap", O_RDONLY);

		page[0] = 1;
		if (fd < 0 || pread(fd, &e, 8, (off_t)((uintptr_t)page / 4096 * 8)) != 8)
			return 77;
		close(fd);
		return (e & ((UINT64_C(1) << 55) - 1)) ? 0 : 77;
	}
	if (!strcmp(argv[1], "--pagemap") && argc == 6) {
		uint64_t vpn, pfn, count, k, e;
		int fd = open(argv[2], O_WRONLY | O_CREAT, 0644);

		if (fd < 0 || mr_parse_u64(argv[3], &vpn) || mr_parse_u64(argv[4], &pfn) ||
		    mr_parse_u64(argv[5], &count))
			return 2;
		for (k = 0; k < count; k++) {
			e = (UINT64_C(1) << 63) | (pfn ? pfn + k : 0);
			if (pwrite(fd, &e, 8, (off_t)((vpn + k) * 8)) != 8)
				return 1;
		}
		return close(fd) != 0;
	}
	if (mr_root_set(NULL))	/* MEMREG_ROOT: where the writer looks up the start time */
		goto fail;
	if (argc > 2 && !strcmp(argv[2], "process")) {
		h.kind = MR_MON_TARGET_PROCESS;
		h.pid = 999999999;
	}
	if (argc == 6 && !strcmp(argv[2], "span")) {
		uint64_t pid, ticks, start_s;

		if (mr_parse_u64(argv[3], &pid) || mr_parse_u64(argv[4], &ticks) ||
		    mr_parse_u64(argv[5], &start_s))
			return 2;
		h.kind = MR_MON_TARGET_PROCESS;
		h.pid = (int32_t)pid;
		h.target_starttime_ticks = ticks;
		h.start_unix_ns = start_s * 1000000000u;
		strcpy(h.backend, "damon");
		memset(r, 0, sizeof(r));
		r[0].start = 0x10000000;
		r[0].end = UINT64_C(0x1100008000);
		r[0].nr_accesses = 5;
		if (mr_rec_writer_open(&w, argv[1], &h))
			goto fail;
		for (i = 0; i < 4; i++)
			if (mr_rec_write_snapshot(&w, 100000u * (i + 1), 10, r, 1))
				goto fail;
		if (mr_rec_writer_close(&w))
			goto fail;
		return 0;
	}
	strcpy(h.backend, "damon");
	if (argc > 2 && !strcmp(argv[2], "spans")) {
		memset(r, 0, sizeof(r));
		for (i = 0; i < 12; i++) {
			uint64_t base = i < 6 ? UINT64_C(512) << 20 : (UINT64_C(4) << 30) - (UINT64_C(1536) << 20);
			struct mr_mon_region *p = &spans[i];

			p->start = base + ((uint64_t)i << 28);
			p->end = p->start + (UINT64_C(1) << 28);
			p->nr_accesses = i % 3 ? 0 : 10;
		}
		if (mr_rec_writer_open(&w, argv[1], &h))
			goto fail;
		for (i = 0; i < 6; i++)
			if (mr_rec_write_snapshot(&w, 250000u * (i + 1), 10, spans, 12))
				goto fail;
		if (mr_rec_writer_close(&w))
			goto fail;
		return 0;
	}
	memset(r, 0, sizeof(r));
	for (i = 0; i < 8; i++) {
		r[i].start = (uint64_t)i << 27;
		r[i].end = (uint64_t)(i + 1) << 27;
		r[i].nr_accesses = i == 1 ? 5 : 0;
	}
	if (mr_rec_writer_open(&w, argv[1], &h))
		goto fail;
	for (i = 0; i < 4; i++)
		if (mr_rec_write_snapshot(&w, 100000u * (i + 1), 10, r, 8))
			goto fail;
	if (mr_rec_writer_close(&w))
		goto fail;
	return 0;
fail:
	fprintf(stderr, "mk-phys-record: %s\n", mr_last_error());
	return 1;
}
