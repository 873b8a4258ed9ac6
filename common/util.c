/* Error messages, strict parsing and formatting shared by every module. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

static __thread char mr_errbuf[512];

int mr_error(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(mr_errbuf, sizeof(mr_errbuf), fmt, ap);
	va_end(ap);
	return err;
}

const char *mr_last_error(void)
{
	return mr_errbuf[0] ? mr_errbuf : "unknown error";
}

void mr_clear_error(void)
{
	mr_errbuf[0] = '\0';
}

int mr_parse_u64(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!s || !isdigit((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno == ERANGE)
		return -ERANGE;
	if (errno || end == s || *end != '\0')
		return -EINVAL;
	*out = v;
	return 0;
}

int mr_parse_size(const char *s, uint64_t *out_bytes)
{
	static const struct {
		const char *suffix;
		unsigned shift;
	} units[] = {
		{ "", 0 }, { "B", 0 },
		{ "K", 10 }, { "KB", 10 }, { "KIB", 10 },
		{ "M", 20 }, { "MB", 20 }, { "MIB", 20 },
		{ "G", 30 }, { "GB", 30 }, { "GIB", 30 },
		{ "T", 40 }, { "TB", 40 }, { "TIB", 40 },
	};
	unsigned long long v;
	char *end;
	size_t i;

	if (!s || !isdigit((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	if (end == s)
		return -EINVAL;
	for (i = 0; i < MR_ARRAY_SIZE(units); i++) {
		const char *a = end, *b = units[i].suffix;

		while (*a && *b && toupper((unsigned char)*a) == *b)
			a++, b++;
		if (*a || *b)
			continue;
		if (units[i].shift && v > (UINT64_MAX >> units[i].shift))
			return -ERANGE;
		*out_bytes = (uint64_t)v << units[i].shift;
		return 0;
	}
	return -EINVAL;
}

char *mr_format_size(uint64_t bytes, char *buf, size_t len)
{
	static const char *const names[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	unsigned i = 0;
	double v = (double)bytes;

	while (i + 1 < MR_ARRAY_SIZE(names) && bytes >= (UINT64_C(1024) << (10 * i)))
		i++;
	if (i == 0) {
		snprintf(buf, len, "%" PRIu64 " B", bytes);
	} else if ((bytes & ((UINT64_C(1) << (10 * i)) - 1)) == 0) {
		snprintf(buf, len, "%" PRIu64 " %s", bytes >> (10 * i), names[i]);
	} else {
		v = (double)bytes / (double)(UINT64_C(1) << (10 * i));
		snprintf(buf, len, "%.1f %s", v, names[i]);
	}
	return buf;
}
