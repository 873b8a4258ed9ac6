/* The `fixed` source: the machine's memory cut at multiples of a fixed size (512 MiB by
 * default, as the sorted-buddy patches did), for machines whose firmware says nothing. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "regions/source.h"

#define MR_FIXED_DEFAULT_BYTES (512 * MR_MIB)

static int fixed_discover(struct mr_region_map *map, const struct mr_machine *m,
			  const struct mr_discover_opts *opts)
{
	uint64_t size = opts->region_size_bytes ? opts->region_size_bytes : MR_FIXED_DEFAULT_BYTES;
	uint64_t start, end, cut, slice = UINT64_MAX;
	struct mr_range *ranges;
	struct mr_region *r = NULL;
	unsigned i, nr;
	int ret;

	ret = mr_machine_ranges(m, &ranges, &nr);
	if (ret)
		return ret;
	if (!nr) {
		free(ranges);
		return mr_error(-ENOENT, "no memory ranges to slice (no memory blocks under "
				"/sys/devices/system/memory)");
	}
	/* [start, end) pieces cut at multiples of @size; pieces in one slice (holes
	 * between them) make one region with several ranges. */
	for (i = 0; i < nr; i++) {
		start = ranges[i].start;
		end = ranges[i].start + ranges[i].size;
		while (start < end) {
			cut = (start / size + 1) * size;
			if (cut > end || cut < start)	/* cut < start: wrapped past 2^64 */
				cut = end;
			if (!r || start / size != slice) {
				r = mr_region_new(map);
				if (!r) {
					free(ranges);
					return -ENOMEM;
				}
				slice = start / size;
			}
			ret = mr_region_add_range(r, start, cut - start);
			if (ret) {
				free(ranges);
				return ret;
			}
			start = cut;
		}
	}
	free(ranges);
	return 0;
}

const struct mr_region_source mr_src_fixed = {
	.name = "fixed",
	.id = MR_SOURCE_FIXED,
	.discover = fixed_discover,
};
