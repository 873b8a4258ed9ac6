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

int mr_error_wrap(int err, const char *fmt, ...)
{
	char inner[sizeof(mr_errbuf)], ctx[sizeof(mr_errbuf)];
	size_t n, m;
	va_list ap;

	snprintf(inner, sizeof(inner), "%s", mr_last_error());
	va_start(ap, fmt);
	vsnprintf(ctx, sizeof(ctx), fmt, ap);
	va_end(ap);
	n = strlen(ctx);
	if (n && (strncmp(inner, ctx, n) != 0 || (inner[n] != ':' && inner[n] != '\0'))) {
		/* "ctx: inner", cut at the buffer's end like any message */
		if (n + 2 < sizeof(ctx)) {
			memcpy(ctx + n, ": ", 3);
			n += 2;
		}
		m = strnlen(inner, sizeof(mr_errbuf) - n - 1);
		memcpy(mr_errbuf, ctx, n);
		memcpy(mr_errbuf + n, inner, m);
		mr_errbuf[n + m] = '\0';
	} else {
		memcpy(mr_errbuf, inner, sizeof(mr_errbuf));
	}
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

	int base = 10;

	if (!s || !isdigit((unsigned char)s[0]))
		return -EINVAL;
	/* decimal, or hex with 0x: a leading 0 is not octal ("010" is ten) */
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		if (!isxdigit((unsigned char)s[2]))
			return -EINVAL;
	}
	errno = 0;
	v = strtoull(s, &end, base);
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

int mr_parse_duration_us(const char *s, uint64_t bare_unit_us, uint64_t *out_us)
{
	static const struct {
		const char *suffix;
		uint64_t us;
	} units[] = {
		{ "us", 1 }, { "usec", 1 },
		{ "ms", 1000 }, { "msec", 1000 },
		{ "s", 1000000 }, { "sec", 1000000 },
		{ "m", 60000000 }, { "min", 60000000 },
		{ "h", UINT64_C(3600000000) },
		{ "d", UINT64_C(86400000000) },
	};
	uint64_t whole = 0, unit = 0, frac_num = 0, frac_den = 1, v;
	const char *p = s;
	size_t i;

	if (!s || !isdigit((unsigned char)*p))
		return -EINVAL;
	for (; isdigit((unsigned char)*p); p++)
		if (!mr_mul_u64(whole, 10, &whole) || !mr_add_u64(whole, (uint64_t)(*p - '0'), &whole))
			return -ERANGE;
	if (*p == '.') {
		if (!isdigit((unsigned char)*++p))
			return -EINVAL;
		for (; isdigit((unsigned char)*p); p++) {
			if (frac_den >= UINT64_C(1000000000000))
				return -EINVAL;	/* finer than any unit makes whole */
			frac_num = frac_num * 10 + (uint64_t)(*p - '0');
			frac_den *= 10;
		}
	}
	if (!*p) {
		unit = bare_unit_us;
	} else {
		for (i = 0; i < MR_ARRAY_SIZE(units); i++)
			if (strcmp(p, units[i].suffix) == 0)
				unit = units[i].us;
		if (!unit)
			return -EINVAL;
	}
	if (!unit)
		return -EINVAL;
	if (!mr_mul_u64(whole, unit, &v))
		return -ERANGE;
	/* the fraction must come out whole: "1.5ms" is 1500 us, "1.0005ms" is not */
	if ((frac_num * unit) % frac_den)
		return -EINVAL;
	if (!mr_add_u64(v, frac_num * unit / frac_den, &v))
		return -ERANGE;
	*out_us = v;
	return 0;
}

char *mr_format_duration(uint64_t us, char *buf, size_t len)
{
	static const struct {
		const char *name;
		uint64_t us;
	} units[] = {
		{ "h", UINT64_C(3600000000) }, { "min", 60000000 }, { "s", 1000000 },
		{ "ms", 1000 },
	};
	size_t i;

	for (i = 0; i < MR_ARRAY_SIZE(units); i++) {
		if (us < units[i].us)
			continue;
		if (us % units[i].us == 0)
			snprintf(buf, len, "%" PRIu64 " %s", us / units[i].us, units[i].name);
		else
			snprintf(buf, len, "%.1f %s", (double)us / (double)units[i].us,
				 units[i].name);
		return buf;
	}
	snprintf(buf, len, "%" PRIu64 " us", us);
	return buf;
}
