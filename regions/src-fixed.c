/* The `fixed` source: the machine's memory cut at multiples of a fixed size (512 MiB by
 * default, as the sorted-buddy patches did), for machines whose firmware says nothing. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <unistd.h>

#include "regions/source.h"

#define MR_FIXED_DEFAULT_BYTES (512 * MR_MIB)

int mr_fixed_size_check(uint64_t size_bytes)
{
	uint64_t page_bytes = (uint64_t)sysconf(_SC_PAGESIZE);

	/* A slice boundary inside a page would put one page in two regions. */
	if (size_bytes % page_bytes)
		return mr_error(-EINVAL, "region size %" PRIu64 " bytes: not a multiple of the "
				"page size (%" PRIu64 " bytes)", size_bytes, page_bytes);
	if (size_bytes < MR_FIXED_MIN_BYTES)
		return mr_error(-EINVAL, "region size %" PRIu64 " bytes: below the smallest "
				"meaningful one (%" PRIu64 " KiB)", size_bytes,
				MR_FIXED_MIN_BYTES / MR_KIB);
	return 0;
}

static int fixed_discover(struct mr_region_map *map, const struct mr_machine *m,
			  const struct mr_discover_opts *opts)
{
	uint64_t size = opts->region_size_bytes ? opts->region_size_bytes : MR_FIXED_DEFAULT_BYTES;
	uint64_t start, end, cut, slice = UINT64_MAX;
	struct mr_range *ranges;
	struct mr_region *r = NULL;
	unsigned i, nr;
	int ret;

	ret = mr_fixed_size_check(size);
	if (ret)
		return ret;
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
