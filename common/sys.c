/* The real system calls behind mr_sys_*; tests replace them with --wrap. */
#include "config.h"

#include <fcntl.h>
#include <numaif.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/sys.h"

/* glibc headers older than the kernel's calls (pidfd_open 5.3, process_madvise 5.10) */
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_process_madvise
#define SYS_process_madvise 440
#endif

int mr_sys_open(const char *path, int flags, mode_t mode)
{
	return open(path, flags | O_CLOEXEC, mode);
}

int mr_sys_close(int fd)
{
	return close(fd);
}

ssize_t mr_sys_read(int fd, void *buf, size_t len)
{
	return read(fd, buf, len);
}

ssize_t mr_sys_pread(int fd, void *buf, size_t len, off_t off)
{
	return pread(fd, buf, len, off);
}

ssize_t mr_sys_write(int fd, const void *buf, size_t len)
{
	return write(fd, buf, len);
}

long mr_sys_move_pages(int pid, unsigned long count, void **pages,
		       const int *nodes, int *status, int flags)
{
	return syscall(SYS_move_pages, pid, count, pages, nodes, status, flags);
}

long mr_sys_perf_event_open(void *attr, pid_t pid, int cpu, int group_fd,
			    unsigned long flags)
{
	return syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);
}

int mr_sys_pidfd_open(pid_t pid, unsigned flags)
{
	return (int)syscall(SYS_pidfd_open, pid, flags);
}

long mr_sys_process_madvise(int pidfd, const struct iovec *iov, unsigned long nr_iov,
			    int advice, unsigned flags)
{
	return syscall(SYS_process_madvise, pidfd, iov, nr_iov, advice, flags);
}
