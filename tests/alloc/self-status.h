/* What the tests/alloc programs read of their own /proc/self/status. Header-only. */
#ifndef MEMREG_TESTS_ALLOC_SELF_STATUS_H
#define MEMREG_TESTS_ALLOC_SELF_STATUS_H

#include <stdio.h>

/* Peak resident KiB so far (VmHWM); -1 if it cannot be read. */
static inline long self_peak_kib(void)
{
	char line[256];
	long v = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %ld", &v) == 1)
			break;
	if (f)
		fclose(f);
	return v;
}

#endif
