/* libFuzzer target for the scheme parser: any text in, either schemes or one error
 * line, never a crash, a leak or undefined behaviour. Built by `make fuzz`. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "controller/scheme.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mr_scheme_set set;
	char *text = malloc(size + 1);
	uint64_t sum = 0;
	size_t i;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (mr_scheme_parse(text, "fuzz", &set) == 0) {
		for (i = 0; i < set.nr; i++)
			sum += set.schemes[i].max_size_bytes + set.schemes[i].nr_filters +
			       (uint64_t)set.schemes[i].action;
		mr_scheme_set_free(&set);
	} else if (!strchr(mr_last_error(), ':')) {
		abort();	/* every error names where it is */
	}
	free(text);
	return (int)(sum & 0);
}
