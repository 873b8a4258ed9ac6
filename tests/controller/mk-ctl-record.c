/* Test helper: `mk-ctl-record FILE [BACKEND]` writes the controller tests' record: a
 * process (pid 0: none to act on) with a hot area of 32 MiB at 0x10000000, accessed in
 * every sample (nr_accesses 20 of 20: 5 ms / 100 ms), and a cold one of 192 MiB right
 * after it, never accessed; 20 snapshots at 0.1 s, 0.2 s, ... 2.0 s, both areas aged
 * by one interval per snapshot (age 1 ... 20). BACKEND (default damon) goes into the
 * header: the controller's backend rule reads it. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "common/util.h"
#include "monitor/record.h"

int main(int argc, char **argv)
{
	struct mr_rec_header h = { .kind = MR_MON_TARGET_PROCESS,
				   .attrs = { 5000, 100000, 1000000, 10, 1000 } };
	struct mr_mon_region r[2];
	struct mr_rec_writer w;
	unsigned i;

	if (argc < 2)
		return 2;
	snprintf(h.backend, sizeof(h.backend), "%s", argc > 2 ? argv[2] : "damon");
	memset(r, 0, sizeof(r));
	r[0].start = 0x10000000;
	r[0].end = r[0].start + 32 * MR_MIB;
	r[1].start = r[0].end;
	r[1].end = r[1].start + 192 * MR_MIB;
	if (mr_rec_writer_open(&w, argv[1], &h))
		goto fail;
	for (i = 1; i <= 20; i++) {
		r[0].nr_accesses = 20;
		r[1].nr_accesses = 0;
		r[0].age = r[1].age = i;
		if (mr_rec_write_snapshot(&w, i * 100000ull, 20, r, 2))
			goto fail;
	}
	if (mr_rec_writer_close(&w))
		goto fail;
	return 0;
fail:
	fprintf(stderr, "mk-ctl-record: %s\n", mr_last_error());
	return 1;
}
