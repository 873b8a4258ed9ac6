/* Number formatting and output with write(2) only: stdio may allocate, and the
 * allocator prints from places where allocating is not allowed. */
#include "config.h"

#include <string.h>
#include <unistd.h>

#include "allocator/internal.h"

char *mr_fmt_u64(char *buf, uint64_t v)
{
	char tmp[24];
	int n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*buf++ = tmp[--n];
	*buf = '\0';
	return buf;
}

void mr_write_str(int fd, const char *s)
{
	size_t len = strlen(s);

	while (len) {
		ssize_t n = write(fd, s, len);

		if (n <= 0)
			return;
		s += n;
		len -= (size_t)n;
	}
}
