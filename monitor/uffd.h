/* The uffd backend's registration call: which of the caller's own memory to watch. */
#ifndef MR_MONITOR_UFFD_H
#define MR_MONITOR_UFFD_H

#include <stddef.h>

#include "monitor/monitor.h"

/* "backend-uffd.c" */
/* Watch [addr, addr + len) of the calling process (whole pages) with the uffd
 * backend; call before mr_mon_run() on a context made for mr_mon_ops_uffd. */
int mr_mon_uffd_watch(struct mr_mon_ctx *ctx, void *addr, size_t len);

#endif
