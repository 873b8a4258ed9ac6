/* Writes seed record files for the fuzzer (version 2): an empty record, one with
 * snapshots (the last one partial) and a note, and one cut inside its last chunk.
 * run.sh adds tests/monitor/record-v1.rec, a version 1 file. Usage: gen-seeds DIR */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"
#include "monitor/record.h"

static int write_seed(const char *dir, const char *name, unsigned nr_snaps, long cut)
{
	struct mr_rec_header h = { .kind = MR_MON_TARGET_PROCESS, .pid = 42,
				   .attrs = { 5000, 100000, 1000000, 10, 1000 },
				   .target_starttime_ticks = 123456 };
	struct mr_mon_region r[3] = { { .start = 0x1000, .end = 0x5000, .nr_accesses = 3 },
				      { .start = 0x5000, .end = 0x9000, .age = 2 },
				      { .start = 0x10000, .end = 0x20000, .nr_accesses = 20 } };
	struct mr_rec_writer w;
	char path[512];
	unsigned i;

	snprintf(h.backend, sizeof(h.backend), "refs");
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (mr_rec_writer_open(&w, path, &h))
		return 1;
	mr_rec_write_note(&w, "backend=refs command=seed");
	for (i = 0; i < nr_snaps; i++)
		mr_rec_write_snapshot(&w, 100000u * (i + 1), i + 1 < nr_snaps ? 20 : 7, r, 3);
	if (cut > 0 && ftruncate(w.fd, cut))
		return 1;
	return mr_rec_writer_close(&w) != 0;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	return write_seed(argv[1], "empty", 0, 0) | write_seed(argv[1], "three", 3, 0) |
	       write_seed(argv[1], "torn", 2, 96 + 12 + 25 + 12 + 16 + 72 + 4 + 30);
}
