/* Project-owned system-call wrappers. Code that a test must be able to fail on
 * purpose calls these, never the libc symbol directly, and a test links with
 * -Wl,--wrap=mr_sys_NAME to inject errors. glibc's own symbols are never wrapped:
 * fortified builds rename them.
 *
 * Contract: every wrapper returns what the system call returns, with errno set as
 * the kernel sets it (-1 and errno on failure), exactly like the libc function. */
#ifndef MR_COMMON_SYS_H
#define MR_COMMON_SYS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* "sys.c" */
int mr_sys_open(const char *path, int flags, mode_t mode);
int mr_sys_close(int fd);
ssize_t mr_sys_read(int fd, void *buf, size_t len);
ssize_t mr_sys_pread(int fd, void *buf, size_t len, off_t off);
ssize_t mr_sys_write(int fd, const void *buf, size_t len);
long mr_sys_move_pages(int pid, unsigned long count, void **pages,
		       const int *nodes, int *status, int flags);
long mr_sys_perf_event_open(void *attr, pid_t pid, int cpu, int group_fd,
			    unsigned long flags);
int mr_sys_pidfd_open(pid_t pid, unsigned flags);
struct iovec;
long mr_sys_process_madvise(int pidfd, const struct iovec *iov, unsigned long nr_iov,
			    int advice, unsigned flags);

#endif
