/* The allocator in the loop, live: the controller's side of libmemreg's classes page
 * (allocator/classes-format.h). It asks the process for its live site map, attributes
 * the monitor's access rates to the sites (monitor/profile.c) and writes each site's
 * class into the process's export, after checking that the pid is still the process
 * it started with. */
#ifndef MR_CONTROLLER_CLASSES_H
#define MR_CONTROLLER_CLASSES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "allocator/classes-format.h"
#include "monitor/monitor.h"
#include "monitor/profile.h"
#include "monitor/record.h"

#define MR_CTL_CLASSES_INTERVAL_US 5000000ull	/* default classification interval */
#define MR_CTL_CLASSES_MAX_SNAPS 256		/* snapshots kept between two rounds */

/* One site's class, as the controller keeps it: build-id (hex) + offset. */
struct mr_ctl_site_class {
	char build_id[2 * MR_ALLOC_CLASSES_BUILD_ID_MAX + 1];
	uint64_t offset;
	enum mr_alloc_class cls;
	bool probed;			/* was put apart once to be measured alone */
	bool measured_alone;		/* once had most of its bytes on pages of its own */
	bool alone;			/* had them in the last round */
	bool pending;			/* the last round called for the other class */
	uint32_t probe_group;		/* the sites entangled when one was put apart (0: none) */
	double score;			/* the last round's measure (0 if not in that map) */
	uint64_t bytes;			/* live bytes in the last round's map */
};

/*
 * struct mr_ctl_classes - one process's classes page, and the state of the loop.
 * Inputs (before mr_ctl_classes_open): @interval_us (0: the default), @apply (write
 * the page; otherwise say what would be written), @log (one line per round, or NULL).
 */
struct mr_ctl_classes {
	uint64_t interval_us;
	bool apply;
	FILE *log;
	const char *log_prefix;

	pid_t pid;
	uint64_t starttime_ticks;	/* the process the page belongs to */
	int fd;				/* its export memfd, through /proc/PID/fd/N */
	struct mr_alloc_classes *page;	/* MR_ALLOC_CLASSES_BYTES, MAP_SHARED */
	struct mr_ctl_site_class *sites;
	size_t nr_sites, cap_sites;
	struct mr_rec rec;		/* the snapshots since the last round (in memory) */
	uint64_t next_us;		/* the next round */
	uint64_t map_asked;		/* the map request in flight (0: none) */
	bool settling;			/* the last round put a site apart: no probe now */
	uint32_t probe_groups;		/* probe groups numbered so far */
	double cut;			/* the last round's bar for sites measured alone
					 * (0: one cluster, all active ones hot) */
	uint64_t rounds, generations, maps;	/* statistics */
};

/* "classes.c" */

/* The path of @pid's export memfd ("/proc/PID/fd/N"), found by its link name
 * (stats-format.h). 0, -ENOENT (not exporting: mr_error says how to export), or -errno. */
int mr_alloc_export_find(pid_t pid, char *path, size_t len);

/* Encode @n classes into the page at @c (its allocator-side header already there),
 * under its seqlock, and bump its generation. -E2BIG if more than c->capacity,
 * -EINVAL for a bad build-id; the page is untouched then. */
int mr_ctl_classes_encode(struct mr_alloc_classes *c, const struct mr_ctl_site_class *sites,
			  size_t n);
/* Decode the page's entries into @out (capacity @max); the count, or -EINVAL. */
int mr_ctl_classes_decode(const struct mr_alloc_classes *c, struct mr_ctl_site_class *out,
			  size_t max);

/* Open @pid's classes page. @starttime_ticks: the process's start time as the caller
 * found it when it chose the target (0: read now); every write checks it again.
 * -ESRCH for a stale pid, -ENOENT when the process does not export, -EOPNOTSUPP when
 * it does not track sites (MEMREG_TRACK_SITES). */
int mr_ctl_classes_open(struct mr_ctl_classes *c, pid_t pid, uint64_t starttime_ticks);
void mr_ctl_classes_close(struct mr_ctl_classes *c);

/* Write @n classes to the page (the consent rule: c->apply; the start time is checked
 * first: -ESRCH, nothing written, if the pid is another process now). */
int mr_ctl_classes_write(struct mr_ctl_classes *c, const struct mr_ctl_site_class *sites,
			 size_t n);
/* Ask for a live site map; mr_ctl_classes_map_read gives it once the allocator answered
 * (-EAGAIN before). The map is parsed (monitor/profile.h). */
int mr_ctl_classes_map_request(struct mr_ctl_classes *c);
int mr_ctl_classes_map_read(struct mr_ctl_classes *c, struct mr_site_map *m);

/* Decide each site's class from an attributed map (mr_prof_attribute done) and the
 * classes kept in @c (updated). Rule in docs/controller.md ("The allocator in the
 * loop"). Returns the sites whose class changed. */
size_t mr_ctl_classes_decide(struct mr_ctl_classes *c, const struct mr_site_map *m);

/* Once per aggregation: keep the snapshot; every interval_us, a round (ask for a map,
 * attribute, decide, write). 0, -ESRCH when the process is gone or another one, or
 * -errno. */
int mr_ctl_classes_aggregate(struct mr_ctl_classes *c, const struct mr_mon_attrs *attrs,
			     const struct mr_mon_region *regions, size_t nr, uint32_t nr_samples,
			     uint64_t time_us);

#endif
