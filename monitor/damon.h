/* The damon backend's safety check, exported so tests can prove it refuses. */
#ifndef MR_MONITOR_DAMON_H
#define MR_MONITOR_DAMON_H

#include <stddef.h>

/* "backend-damon.c" */
/* 0 when DAMON exists and nobody uses it: nr_kdamonds reads 0, no kdamond thread
 * in /proc, and damon_reclaim / damon_lru_sort / damon_stat are not enabled.
 * -EBUSY when in use, -ENOTSUP without DAMON; @why says which. Reads only. */
int mr_mon_damon_check_free(char *why, size_t len);

#endif
