/* libFuzzer target for the record-file reader: any byte string must either parse
 * into well-formed snapshots or be rejected with an error, never crash or leak. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/util.h"
#include "monitor/record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mr_rec rec;
	size_t i, k;

	if (mr_rec_parse(data, size, "fuzz", &rec) == 0) {
		/* what the reader accepted must hold its promises */
		for (i = 0; i < rec.nr_snaps; i++) {
			if (i && rec.snaps[i].time_us < rec.snaps[i - 1].time_us)
				__builtin_trap();
			if (!rec.snaps[i].nr_samples)
				__builtin_trap();	/* shares divide by it */
			for (k = 0; k < rec.snaps[i].nr_regions; k++) {
				const struct mr_rec_region *r = &rec.snaps[i].regions[k];

				if (r->start >= r->end || (k && r->start < rec.snaps[i].regions[k - 1].end))
					__builtin_trap();
			}
		}
		mr_rec_free(&rec);
	} else if (!mr_last_error()[0] || strchr(mr_last_error(), '\n')) {
		__builtin_trap();	/* a rejection must say why, on one line */
	}
	return 0;
}
