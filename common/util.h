/* Small helpers every memreg module uses: error messages, strict number and size
 * parsing, and byte formatting. No dependencies beyond libc. */
#ifndef MR_COMMON_UTIL_H
#define MR_COMMON_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MR_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MR_KIB (UINT64_C(1) << 10)
#define MR_MIB (UINT64_C(1) << 20)
#define MR_GIB (UINT64_C(1) << 30)

#if defined(__GNUC__)
#define MR_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define MR_PRINTF(f, a)
#endif

/* "util.c" */

/*
 * The last error of the calling thread, as one line without a trailing newline.
 * Library functions that fail return a negative errno and set this message, so a
 * command can print "memregctl: <message>" and exit 1. Returns -@err for chaining:
 * `return mr_error(-EINVAL, "%s: bad count", path);`
 */
int mr_error(int err, const char *fmt, ...) MR_PRINTF(2, 3);
/*
 * Put a context in front of the last error: "<context>: <last error>". The one way
 * to wrap an error (formatting mr_last_error() into mr_error() writes the buffer
 * into itself). A context the message already starts with is not repeated, so
 * "prof.rec" around "prof.rec: no snapshot" stays "prof.rec: no snapshot".
 * Returns @err, like mr_error().
 */
int mr_error_wrap(int err, const char *fmt, ...) MR_PRINTF(2, 3);
const char *mr_last_error(void);
void mr_clear_error(void);

/*
 * Strict unsigned parse: the whole of @s must be a number (decimal, or 0x hex;
 * a leading zero is still decimal, never octal), no sign, no trailing text, no
 * overflow. 0 on success, -EINVAL / -ERANGE otherwise.
 */
int mr_parse_u64(const char *s, uint64_t *out);

/*
 * Size with an optional binary suffix: "4096", "64K", "512M", "1G", "2T",
 * "1GiB", "512MB" (both read as powers of 1024). 0, -EINVAL or -ERANGE.
 */
int mr_parse_size(const char *s, uint64_t *out_bytes);

/*
 * Duration with a unit: "500us", "5ms", "0.5s", "2m", "1h", "1d" (also "usec", "msec",
 * "sec", "min"; as damo and systemd write them), into microseconds. A bare number is
 * read in @bare_unit_us microseconds (1 for a microsecond field kept for old command
 * lines, 1000000 for seconds); 0 there means a unit is required. Fractions are
 * allowed where the result is a whole microsecond. 0, -EINVAL or -ERANGE.
 */
int mr_parse_duration_us(const char *s, uint64_t bare_unit_us, uint64_t *out_us);

/* "5 ms", "1.5 s", "2 min", "250 us": the largest unit that keeps one decimal. */
char *mr_format_duration(uint64_t us, char *buf, size_t len);

/* "512 MiB", "1.5 GiB", "4096 B": exact when the value is a whole unit. */
char *mr_format_size(uint64_t bytes, char *buf, size_t len);

/* Overflow-checked a + b and a * b. Return false on overflow. */
static inline bool mr_add_u64(uint64_t a, uint64_t b, uint64_t *out)
{
	return !__builtin_add_overflow(a, b, out);
}

static inline bool mr_mul_u64(uint64_t a, uint64_t b, uint64_t *out)
{
	return !__builtin_mul_overflow(a, b, out);
}

#endif
