/* What the tests/alloc programs read of their own /proc/self/status. Header-only. */
#ifndef MEMREG_TESTS_ALLOC_SELF_STATUS_H
#define MEMREG_TESTS_ALLOC_SELF_STATUS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The number after "@field:" in /proc/self/status; -1 if it cannot be read. */
static inline long self_status(const char *field)
{
	char line[256], *end;
	size_t n = strlen(field);
	long v = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, field, n) && line[n] == ':') {
			v = strtol(line + n + 1, &end, 10);
			if (end == line + n + 1)
				v = -1;
			break;
		}
	if (f)
		fclose(f);
	return v;
}

/* Peak resident KiB so far (VmHWM). */
static inline long self_peak_kib(void)
{
	return self_status("VmHWM");
}

#endif
