/* libFuzzer target for the MPST parser: any bytes in, either a table or an error,
 * never a crash, a leak or undefined behaviour. Built by `make fuzz`. */
#include "config.h"

#include <stddef.h>
#include <stdint.h>

#include "regions/mpst.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mr_mpst mpst;
	uint64_t sum = 0;
	unsigned i, j;

	if (mr_mpst_parse(data, size, &mpst) == 0) {
		/* Touch everything the parser says is there. */
		for (i = 0; i < mpst.nr_nodes; i++) {
			for (j = 0; j < mpst.nodes[i].nr_states; j++)
				sum += mpst.nodes[i].states[j].char_index;
			for (j = 0; j < mpst.nodes[i].nr_components; j++)
				sum += mpst.nodes[i].components[j];
		}
		for (i = 0; i < mpst.nr_chars; i++)
			sum += mpst.chars[i].exit_latency_ns;
		for (i = 0; i < mpst.nr_warnings; i++)
			sum += (uint8_t)mpst.warnings[i][0];
		mr_mpst_free(&mpst);
	}
	return sum == 1 ? 0 : 0;
}
