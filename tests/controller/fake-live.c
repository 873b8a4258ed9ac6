/* memregctl-fake: memregctl with the kernel's side of memory blocks faked, for the
 * tests of evacuate --apply (--keep-going, the progress bar) on a copy of a fixture
 * machine. Only with MR_FAKE_LIVE=1 and a root other than "/": the root counts as the
 * live machine for consent (mr_root_may_change), a block's state write goes to the
 * copy's memoryN/state as the kernel would show it ("online" for online_movable),
 * and the blocks named in MR_FAKE_FAIL (comma-separated) fail to go offline with
 * EBUSY. move_pages is never called for real. Everything else is memregctl's. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/root.h"
#include "common/util.h"

#define STATE_PREFIX "/sys/devices/system/memory/memory"

static bool faking(void)
{
	const char *on = getenv("MR_FAKE_LIVE"), *root = mr_root_get();

	return on && strcmp(on, "1") == 0 && root && strcmp(root, "/") != 0;
}

int __real_mr_root_may_change(const char *what, bool apply);
int __wrap_mr_root_may_change(const char *what, bool apply);
int __wrap_mr_root_may_change(const char *what, bool apply)
{
	if (faking() && apply)
		return 0;
	return __real_mr_root_may_change(what, apply);
}

/* The start time of this process: the copy has no /proc entry for it. */
int __real_mr_proc_starttime(pid_t pid, uint64_t *ticks);
int __wrap_mr_proc_starttime(pid_t pid, uint64_t *ticks);
int __wrap_mr_proc_starttime(pid_t pid, uint64_t *ticks)
{
	if (faking() && pid == getpid()) {
		*ticks = 1;
		return 0;
	}
	return __real_mr_proc_starttime(pid, ticks);
}

long __wrap_mr_sys_move_pages(int pid, unsigned long count, void **pages, const int *nodes,
			      int *status, int flags);
long __wrap_mr_sys_move_pages(int pid, unsigned long count, void **pages, const int *nodes,
			      int *status, int flags)
{
	(void)pid; (void)count; (void)pages; (void)nodes; (void)status; (void)flags;
	fprintf(stderr, "memregctl-fake: move_pages called\n");
	abort();
}

/* The block whose state file each descriptor is (-1: another file). */
static long long fd_block[1024];

int __real_mr_root_open(const char *linux_path, int flags);
int __wrap_mr_root_open(const char *linux_path, int flags);
int __wrap_mr_root_open(const char *linux_path, int flags)
{
	char path[4200];
	unsigned long long b;
	int fd, n = 0;

	if (!faking() || (flags & O_ACCMODE) == O_RDONLY)
		return __real_mr_root_open(linux_path, flags);
	if (sscanf(linux_path, STATE_PREFIX "%llu/state%n", &b, &n) != 1 ||
	    linux_path[n] != '\0') {
		fprintf(stderr, "memregctl-fake: write open of %s\n", linux_path);
		abort();
	}
	snprintf(path, sizeof(path), "%s%s", mr_root_get(), linux_path);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return mr_error(-errno, "%s: %s", path, strerror(errno));
	if (fd < 1024)
		fd_block[fd] = (long long)b + 1;
	return fd;
}

static bool fails(long long block)
{
	const char *list = getenv("MR_FAKE_FAIL"), *p;
	char *end;

	for (p = list; p && *p; p = *end ? end + 1 : end) {
		long long v = strtoll(p, &end, 10);

		if (end == p)
			return false;
		if (v == block)
			return true;
	}
	return false;
}

ssize_t __real_mr_sys_write(int fd, const void *buf, size_t len);
ssize_t __wrap_mr_sys_write(int fd, const void *buf, size_t len);
ssize_t __wrap_mr_sys_write(int fd, const void *buf, size_t len)
{
	const char *shown;
	long long block;

	if (fd < 0 || fd >= 1024 || !fd_block[fd])
		return __real_mr_sys_write(fd, buf, len);
	block = fd_block[fd] - 1;
	fd_block[fd] = 0;
	if (len == 7 && memcmp(buf, "offline", 7) == 0) {
		if (fails(block)) {
			errno = EBUSY;
			return -1;
		}
		shown = "offline\n";
	} else if ((len == 14 && memcmp(buf, "online_movable", 14) == 0) ||
		   (len == 13 && memcmp(buf, "online_kernel", 13) == 0)) {
		shown = "online\n";
	} else {
		fprintf(stderr, "memregctl-fake: memory%lld: write of '%.*s'\n", block, (int)len,
			(const char *)buf);
		abort();
	}
	if (ftruncate(fd, 0) || pwrite(fd, shown, strlen(shown), 0) != (ssize_t)strlen(shown))
		return -1;
	return (ssize_t)len;
}
