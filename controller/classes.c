/* The allocator in the loop, live (see classes.h): find a process's libmemreg export,
 * ask it for its live site map, attribute the monitor's rates to its sites with
 * monitor/profile.c, decide the classes and write the classes page. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/proc.h"
#include "common/root.h"
#include "common/util.h"
#include "controller/classes.h"

#define MAP_MAX_BYTES (256u << 20)
/* A site measured below this (a fraction of samples), or with no accessed page, is
 * idle: cold whatever the others do (an idle process has no hot site). Low: DAMON's
 * regions over a sparse arena dilute every rate, the hot ones too. */
#define MIN_HOT_SCORE 0.001
/* The sites measured alone fall into two clusters of measures (2-means on the log of
 * the measure, weighted by bytes) only when the clusters' typical measures are at
 * least this factor apart; else they are one cluster, all hot. A share of the highest
 * measure failed in the lab: the workload's descriptor ring, read on every pass, set
 * the bar, and the hot objects' site fell below it with the cold one. */
#define CLUSTER_RATIO 2.0
/* A site with less than this share of its bytes on pages of its own is entangled:
 * its score may be its neighbours' accesses. */
#define ENTANGLED_SHARE 0.5
/* A site put apart comes back hot only at this share or more of the highest measure
 * of its probe group (measured alone): "as hot as the site it was entangled with",
 * within the rounds' noise. Asymmetric on purpose: a wrong return mixes both sites'
 * objects again and no later round can separate them, while a wrong stay puts one
 * site's objects in the cold regions. In the lab the churned cold site read 0.43-0.62
 * of the hot one once settled (THP: a huge page written once in a second reads as
 * accessed for all of its 2 MiB); DAMON's rate over 5 aggregations of 50 samples
 * varies by well under a quarter for a site as hot as another. */
#define PROBE_RETURN_SHARE 0.75

static const char *const class_names[NR_MR_ALLOC_CLASS] = { "hot", "normal", "cold" };

int mr_alloc_export_find(pid_t pid, char *path, size_t len)
{
	char dir[64], want[64], host[4096], target[256];
	struct dirent *d;
	DIR *dh;
	int rc = -ENOENT;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	snprintf(want, sizeof(want), MR_ALLOC_STATS_MEMFD_FMT, (long)pid);
	dh = mr_root_opendir(dir);
	if (!dh) {
		if (errno == EACCES)
			return mr_error(-EACCES, "%s: permission denied", dir);
		return mr_error(-ESRCH, "pid %d: no such process", (int)pid);
	}
	while ((d = readdir(dh))) {
		ssize_t n;

		if (d->d_name[0] == '.')
			continue;
		snprintf(path, len, "%s/%s", dir, d->d_name);
		if (mr_root_path(host, sizeof(host), path))
			continue;
		n = readlink(host, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		if (strcmp(target, want) == 0) {
			rc = 0;
			break;
		}
	}
	closedir(dh);
	if (rc)
		return mr_error(rc, "pid %d has no libmemreg export (run it with "
				"LD_PRELOAD=libmemreg.so MEMREG_EXPORT_STATS=1 MEMREG_TRACK_SITES=1)",
				(int)pid);
	return 0;
}

static int hex_digit(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	       c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Hex build-id -> bytes; the byte count, or -1. */
static int id_from_hex(const char *hex, uint8_t *out)
{
	size_t n = strlen(hex), i;

	if (n < 2 || n % 2 || n / 2 > MR_ALLOC_CLASSES_BUILD_ID_MAX)
		return -1;
	for (i = 0; i < n / 2; i++) {
		int hi = hex_digit(hex[2 * i]), lo = hex_digit(hex[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -1;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return (int)(n / 2);
}

int mr_ctl_classes_encode(struct mr_alloc_classes *c, const struct mr_ctl_site_class *sites,
			  size_t n)
{
	struct mr_alloc_class_entry e;
	uint64_t seq;
	size_t i;

	if (n > c->capacity)
		return mr_error(-E2BIG, "%zu site classes do not fit the classes page (%u)", n,
				c->capacity);
	for (i = 0; i < n; i++) {
		if (id_from_hex(sites[i].build_id, e.build_id) < 0)
			return mr_error(-EINVAL, "site %zu: bad build-id '%s'", i, sites[i].build_id);
		if ((unsigned)sites[i].cls >= NR_MR_ALLOC_CLASS)
			return mr_error(-EINVAL, "site %zu: bad class %d", i, (int)sites[i].cls);
	}
	/* the seqlock: odd while writing (a writer that died leaves it odd: the next
	 * one goes on from there) */
	seq = __atomic_load_n(&c->seq, __ATOMIC_RELAXED);
	seq += (seq & 1) ? 0 : 1;
	__atomic_store_n(&c->seq, seq, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	for (i = 0; i < n; i++) {
		memset(&e, 0, sizeof(e));
		e.build_id_len = (uint8_t)id_from_hex(sites[i].build_id, e.build_id);
		e.offset = sites[i].offset;
		e.cls = (uint8_t)sites[i].cls;
		memcpy(&c->entry[i], &e, sizeof(e));
	}
	__atomic_store_n(&c->count, (uint32_t)n, __ATOMIC_RELAXED);
	__atomic_store_n(&c->generation, c->generation + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&c->seq, seq + 1, __ATOMIC_RELEASE);
	return 0;
}

int mr_ctl_classes_decode(const struct mr_alloc_classes *c, struct mr_ctl_site_class *out,
			  size_t max)
{
	static const char digits[] = "0123456789abcdef";
	uint32_t n = c->count, i, k;

	if (c->magic != MR_ALLOC_CLASSES_MAGIC || c->version != MR_ALLOC_CLASSES_VERSION)
		return mr_error(-EINVAL, "not a classes page of version %d", MR_ALLOC_CLASSES_VERSION);
	if (n > c->capacity || n > max)
		return mr_error(-EINVAL, "classes page: count %u over its capacity %u", n, c->capacity);
	for (i = 0; i < n; i++) {
		const struct mr_alloc_class_entry *e = &c->entry[i];

		if (!e->build_id_len || e->build_id_len > MR_ALLOC_CLASSES_BUILD_ID_MAX ||
		    e->cls >= NR_MR_ALLOC_CLASS)
			return mr_error(-EINVAL, "classes page: bad entry %u", i);
		memset(&out[i], 0, sizeof(out[i]));
		for (k = 0; k < e->build_id_len; k++) {
			out[i].build_id[2 * k] = digits[e->build_id[k] >> 4];
			out[i].build_id[2 * k + 1] = digits[e->build_id[k] & 15];
		}
		out[i].offset = e->offset;
		out[i].cls = (enum mr_alloc_class)e->cls;
	}
	return (int)n;
}

int mr_ctl_classes_open(struct mr_ctl_classes *c, pid_t pid, uint64_t starttime_ticks)
{
	struct mr_alloc_stats_file hdr;
	char path[128];
	uint64_t off;
	void *m;
	int err, fd;

	c->fd = -1;
	c->page = NULL;
	c->pid = pid;
	if (!starttime_ticks) {
		err = mr_proc_starttime(pid, &starttime_ticks);
		if (err)
			return err;
	}
	c->starttime_ticks = starttime_ticks;
	err = mr_proc_same(pid, starttime_ticks);
	if (err)
		return err;
	err = mr_alloc_export_find(pid, path, sizeof(path));
	if (err)
		return err;
	/* the page is shared memory of the process: opened for writing only once the
	 * consent is there (mr_root_may_change refuses fixture roots too) */
	fd = mr_root_open(path, mr_root_is_fixture() ? O_RDONLY | O_CLOEXEC : O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return mr_error(-errno, "%s: %s", path, strerror(errno));
	if (mr_root_pread(fd, &hdr, sizeof(hdr), 0) != (long)sizeof(hdr) ||
	    hdr.magic != MR_ALLOC_STATS_MAGIC || hdr.version != MR_ALLOC_STATS_VERSION) {
		close(fd);
		return mr_error(-EINVAL, "%s: not a libmemreg export of version %d", path,
				MR_ALLOC_STATS_VERSION);
	}
	off = mr_alloc_classes_offset(&hdr);
	m = mmap(NULL, MR_ALLOC_CLASSES_BYTES, PROT_READ | (mr_root_is_fixture() ? 0 : PROT_WRITE),
		 MAP_SHARED, fd, (off_t)off);
	if (m == MAP_FAILED) {
		err = -errno;
		close(fd);
		return mr_error(err, "%s: cannot map the classes page: %s", path, strerror(-err));
	}
	c->page = m;
	c->fd = fd;
	if (__atomic_load_n(&c->page->magic, __ATOMIC_ACQUIRE) != MR_ALLOC_CLASSES_MAGIC ||
	    c->page->version != MR_ALLOC_CLASSES_VERSION ||
	    c->page->header_bytes != sizeof(struct mr_alloc_classes) ||
	    c->page->entry_bytes != sizeof(struct mr_alloc_class_entry)) {
		mr_ctl_classes_close(c);
		return mr_error(-EINVAL, "pid %d: its libmemreg has no classes page of version %d",
				(int)pid, MR_ALLOC_CLASSES_VERSION);
	}
	if (!c->page->tracking) {
		mr_ctl_classes_close(c);
		return mr_error(-EOPNOTSUPP, "pid %d does not track allocation sites (run it with "
				"MEMREG_TRACK_SITES=1)", (int)pid);
	}
	if (!c->interval_us)
		c->interval_us = MR_CTL_CLASSES_INTERVAL_US;
	if (!c->log_prefix)
		c->log_prefix = "";
	c->next_us = c->interval_us;
	return 0;
}

static void rec_clear(struct mr_rec *rec)
{
	size_t i;

	for (i = 0; i < rec->nr_snaps; i++)
		free(rec->snaps[i].regions);
	rec->nr_snaps = 0;
}

void mr_ctl_classes_close(struct mr_ctl_classes *c)
{
	if (c->page)
		munmap(c->page, MR_ALLOC_CLASSES_BYTES);
	c->page = NULL;
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	rec_clear(&c->rec);
	free(c->rec.snaps);
	c->rec.snaps = NULL;
	free(c->sites);
	c->sites = NULL;
	c->nr_sites = c->cap_sites = 0;
}

/* The pid is the process the page was opened for, and writing is allowed. */
static int may_write(const struct mr_ctl_classes *c, const char *what)
{
	char text[96];
	int err = mr_proc_same(c->pid, c->starttime_ticks);

	if (err)
		return err;
	snprintf(text, sizeof(text), "%s of pid %d", what, (int)c->pid);
	return mr_root_may_change(text, c->apply);
}

int mr_ctl_classes_write(struct mr_ctl_classes *c, const struct mr_ctl_site_class *sites,
			 size_t n)
{
	int err = may_write(c, "write the allocator's classes page");

	if (err)
		return err;
	err = mr_ctl_classes_encode(c->page, sites, n);
	if (!err)
		c->generations++;
	return err;
}

int mr_ctl_classes_map_request(struct mr_ctl_classes *c)
{
	int err = may_write(c, "ask the allocator for its site map");
	uint64_t req;

	if (err)
		return err;
	req = __atomic_load_n(&c->page->map_request, __ATOMIC_RELAXED) + 1;
	if (!req)
		req = 1;
	__atomic_store_n(&c->page->map_request, req, __ATOMIC_RELEASE);
	c->map_asked = req;
	return 0;
}

int mr_ctl_classes_map_read(struct mr_ctl_classes *c, struct mr_site_map *m)
{
	uint64_t bytes, off;
	char name[64], *buf;
	long got;
	int err;

	if (!c->map_asked)
		return mr_error(-EINVAL, "no site map asked for");
	if (__atomic_load_n(&c->page->map_generation, __ATOMIC_ACQUIRE) != c->map_asked)
		return -EAGAIN;
	bytes = __atomic_load_n(&c->page->map_bytes, __ATOMIC_RELAXED);
	off = c->page->map_offset;
	c->map_asked = 0;
	snprintf(name, sizeof(name), "pid %d: live site map", (int)c->pid);
	if (!bytes)
		return mr_error(-EIO, "%s: empty (the allocator could not write it)", name);
	if (bytes > MAP_MAX_BYTES)
		return mr_error(-EFBIG, "%s: %" PRIu64 " bytes, more than %u", name, bytes,
				MAP_MAX_BYTES);
	buf = malloc(bytes);
	if (!buf)
		return mr_error(-ENOMEM, "out of memory");
	got = mr_root_pread(c->fd, buf, bytes, off);
	if (got != (long)bytes) {
		free(buf);
		return mr_error(-EIO, "%s: read %ld of %" PRIu64 " bytes", name, got, bytes);
	}
	err = mr_prof_map_parse(buf, bytes, name, m);
	free(buf);
	if (!err)
		c->maps++;
	return err;
}

static struct mr_ctl_site_class *site_find(struct mr_ctl_classes *c, const char *build_id,
					   uint64_t offset)
{
	size_t i;

	for (i = 0; i < c->nr_sites; i++)
		if (c->sites[i].offset == offset && !strcmp(c->sites[i].build_id, build_id))
			return &c->sites[i];
	return NULL;
}

static struct mr_ctl_site_class *site_add(struct mr_ctl_classes *c, const char *build_id,
					  uint64_t offset)
{
	struct mr_ctl_site_class *s;

	if (c->nr_sites == c->cap_sites) {
		size_t cap = c->cap_sites ? 2 * c->cap_sites : 16;

		s = realloc(c->sites, cap * sizeof(*s));
		if (!s)
			return NULL;
		c->sites = s;
		c->cap_sites = cap;
	}
	s = &c->sites[c->nr_sites++];
	memset(s, 0, sizeof(*s));
	memcpy(s->build_id, build_id, strlen(build_id) + 1);	/* checked by the caller */
	s->offset = offset;
	s->cls = MR_ALLOC_CLASS_NORMAL;
	return s;
}

struct cluster_item {
	double log_measure, bytes;
	size_t site;		/* index in the map */
};

static int cmp_item(const void *a, const void *b)
{
	const struct cluster_item *x = a, *y = b;

	return x->log_measure < y->log_measure ? -1 : x->log_measure > y->log_measure;
}

/*
 * Split @n items (sorted by log measure) into a low and a high cluster: the split
 * that leaves the least byte-weighted squared distance to each cluster's mean
 * (1-D 2-means, exact: every split point is tried), and only between different
 * measures. Returns the index of the first high item, or 0 when the best split's
 * cluster means are less than CLUSTER_RATIO apart (one cluster).
 */
static size_t split_clusters(const struct cluster_item *it, size_t n)
{
	double w_all = 0, s_all = 0, q_all = 0, w = 0, s = 0, q = 0, best = -1;
	size_t k, best_k = 0;

	for (k = 0; k < n; k++) {
		w_all += it[k].bytes;
		s_all += it[k].bytes * it[k].log_measure;
		q_all += it[k].bytes * it[k].log_measure * it[k].log_measure;
	}
	for (k = 1; k < n; k++) {
		double wl, wh, sse;

		w += it[k - 1].bytes;
		s += it[k - 1].bytes * it[k - 1].log_measure;
		q += it[k - 1].bytes * it[k - 1].log_measure * it[k - 1].log_measure;
		if (it[k].log_measure == it[k - 1].log_measure)
			continue;
		wl = w;
		wh = w_all - w;
		/* sum of w x^2 - (sum of w x)^2 / sum of w, per cluster */
		sse = q - s * s / wl + (q_all - q) - (s_all - s) * (s_all - s) / wh;
		if (best < 0 || sse < best) {
			best = sse;
			best_k = k;
		}
	}
	if (!best_k)
		return 0;
	w = s = 0;
	for (k = 0; k < best_k; k++) {
		w += it[k].bytes;
		s += it[k].bytes * it[k].log_measure;
	}
	if ((s_all - s) / (w_all - w) - s / w < log(CLUSTER_RATIO))
		return 0;
	return best_k;
}

/*
 * Per site of the map, its measure: the mean access rate of the pages it has to
 * itself when most of its bytes are on such pages (it is measured alone), else its
 * attribution score (monitor/profile.c). The rule (docs/controller.md, "The allocator
 * in the loop"):
 * - idle (no accessed page, or a measure under MIN_HOT_SCORE): cold;
 * - the active sites measured alone: two clusters of measures (split_clusters); the
 *   high cluster is hot, the low one cold; one cluster: all hot. Entangled sites do
 *   not take part: their score is their page-mates' rate as much as their own;
 * - a site that was decided (hot or cold) changes class only when two rounds in a row
 *   call for it: one round's rates can be DAMON's transient (a range not monitored
 *   yet, coarse regions at the start), and one wrong round mixes both sites again;
 * - entangled (objects of interleaved sites share every page, so the attribution gives
 *   them the same score whatever their own accesses): a site once measured alone, or
 *   put apart, keeps its class (its objects from before a change are still live);
 *   another one is hot while any of its pages is accessed, and one per round, the
 *   largest such site that shares pages with another is put apart (cold): its later
 *   objects go to the cold regions, where the next rounds measure it alone. No probe
 *   in the round after a probe: the map still holds the objects from before it;
 * - a site put apart comes back hot only if its measure is at least
 *   PROBE_RETURN_SHARE of the highest of the sites it was put apart from (its probe
 *   group), measured alone: the probe is an experiment on these sites, and a third
 *   site's rate (the lab's descriptor ring, between the hot and the churned cold
 *   site) says nothing of which of them is hot. It keeps its class in the round
 *   right after the probe and while its mates are all entangled (no answer yet).
 */
size_t mr_ctl_classes_decide(struct mr_ctl_classes *c, const struct mr_site_map *m)
{
	double *own, *own_rate, *measure;
	struct mr_ctl_site_class **map_site;
	struct cluster_item *items;
	enum mr_alloc_class *old, *want;
	size_t i, j, nr = m->nr_sites ? m->nr_sites : 1, changed = 0, probe = SIZE_MAX;
	size_t nr_items = 0, first_hot = 0;
	bool *alone, *active, settling = c->settling;	/* this round follows a probe */

	own = calloc(nr, sizeof(*own));
	own_rate = calloc(nr, sizeof(*own_rate));
	measure = calloc(nr, sizeof(*measure));
	map_site = calloc(nr, sizeof(*map_site));
	items = calloc(nr, sizeof(*items));
	old = calloc(nr, sizeof(*old));
	want = calloc(nr, sizeof(*want));
	alone = calloc(nr, sizeof(*alone));
	active = calloc(nr, sizeof(*active));
	if (!own || !own_rate || !measure || !map_site || !items || !old || !want || !alone ||
	    !active)
		goto out;
	for (i = 0; i < m->nr_pages; i++) {
		const struct mr_prof_page *p = &m->pages[i];

		if (p->nr == 1) {
			own[m->parts[p->first].site] += m->parts[p->first].bytes;
			own_rate[m->parts[p->first].site] += m->parts[p->first].bytes * p->rate;
		}
	}
	for (i = 0; i < m->nr_sites; i++) {
		const struct mr_prof_site *ps = &m->sites[i];

		alone[i] = ps->bytes && own[i] >= ENTANGLED_SHARE * ps->bytes;
		measure[i] = alone[i] ? own_rate[i] / own[i] : ps->score;
		active[i] = ps->accessed_pages && measure[i] >= MIN_HOT_SCORE;
		if (ps->build_id[0] && ps->bytes && alone[i] && active[i]) {
			items[nr_items].log_measure = log(measure[i]);
			items[nr_items].bytes = (double)ps->bytes;
			items[nr_items].site = i;
			nr_items++;
		}
	}
	qsort(items, nr_items, sizeof(*items), cmp_item);
	first_hot = split_clusters(items, nr_items);
	c->cut = first_hot ? measure[items[first_hot].site] : 0;
	for (i = 0; i < m->nr_sites; i++)
		want[i] = alone[i] && active[i] ? MR_ALLOC_CLASS_HOT : MR_ALLOC_CLASS_COLD;
	for (i = 0; i < first_hot; i++)
		want[items[i].site] = MR_ALLOC_CLASS_COLD;
	for (i = 0; i < m->nr_sites; i++) {
		const struct mr_prof_site *ps = &m->sites[i];
		struct mr_ctl_site_class *s;

		if (!ps->build_id[0] || !ps->bytes || strlen(ps->build_id) >= sizeof(s->build_id))
			continue;	/* no build-id (or too long): cannot be named in the page */
		s = site_find(c, ps->build_id, ps->offset);
		if (!s && !(s = site_add(c, ps->build_id, ps->offset)))
			break;
		map_site[i] = s;
		old[i] = s->cls;
	}
	for (i = 0; i < m->nr_sites; i++) {
		const struct mr_prof_site *ps = &m->sites[i];
		struct mr_ctl_site_class *s = map_site[i];
		bool mate_alone = false, mate_entangled = false;
		double mates = 0;

		if (!s)
			continue;
		/* a site put apart is compared with the sites it was put apart from: the
		 * probe's own answer, whatever the other sites of the process do. No
		 * answer yet in the round right after the probe (the map still holds the
		 * objects from before it) or while every mate in the map is entangled. */
		for (j = 0; s->probed && alone[i] && j < m->nr_sites; j++) {
			if (j == i || !map_site[j] || map_site[j]->probe_group != s->probe_group)
				continue;
			if (!alone[j]) {
				mate_entangled = true;
				continue;
			}
			mate_alone = true;
			if (measure[j] > mates)
				mates = measure[j];
		}
		if (s->probed && alone[i] && (settling || (mate_entangled && !mate_alone)))
			want[i] = s->cls;
		else if (want[i] == MR_ALLOC_CLASS_HOT && measure[i] < PROBE_RETURN_SHARE * mates)
			want[i] = MR_ALLOC_CLASS_COLD;
		s->score = measure[i];
		s->bytes = ps->bytes;
		s->alone = alone[i];
		if (alone[i]) {
			s->measured_alone = true;
		} else if (s->measured_alone || s->probed) {
			s->pending = false;
			continue;	/* entangled by objects from before: keep its class */
		} else if (ps->accessed_pages) {
			/* its pages are accessed, by it or its page-mates: hot until a probe
			 * or a round measuring it alone says otherwise */
			want[i] = MR_ALLOC_CLASS_HOT;
			if (probe == SIZE_MAX || ps->bytes > m->sites[probe].bytes)
				probe = i;
		}
		if (want[i] == s->cls || s->cls == MR_ALLOC_CLASS_NORMAL || s->pending) {
			s->cls = want[i];
			s->pending = false;
		} else {
			s->pending = true;	/* the first round toward the other class */
		}
	}
	if (probe != SIZE_MAX && !c->settling && map_site[probe]->cls == MR_ALLOC_CLASS_HOT) {
		/* only if another entangled hot site shares its pages */
		for (j = 0; j < m->nr_sites; j++)
			if (j != probe && map_site[j] && !alone[j] &&
			    map_site[j]->cls == MR_ALLOC_CLASS_HOT)
				break;
		if (j < m->nr_sites) {
			uint32_t group = ++c->probe_groups;

			map_site[probe]->cls = MR_ALLOC_CLASS_COLD;
			map_site[probe]->probed = true;
			map_site[probe]->pending = false;
			map_site[probe]->probe_group = group;
			for (j = 0; j < m->nr_sites; j++)
				if (j != probe && map_site[j] && !alone[j] && !map_site[j]->probe_group &&
				    map_site[j]->cls == MR_ALLOC_CLASS_HOT)
					map_site[j]->probe_group = group;
			c->settling = true;
		}
	} else {
		c->settling = false;
	}
	for (i = 0; i < m->nr_sites; i++)
		if (map_site[i] && map_site[i]->cls != old[i])
			changed++;
out:
	free(own);
	free(own_rate);
	free(measure);
	free(map_site);
	free(items);
	free(old);
	free(want);
	free(alone);
	free(active);
	return changed;
}

/* Keep one snapshot for the next round's rates (the oldest goes when full). */
static int keep_snapshot(struct mr_ctl_classes *c, const struct mr_mon_region *regions, size_t nr,
			 uint32_t nr_samples, uint64_t time_us)
{
	struct mr_rec_snapshot *sn;
	size_t i;

	if (!c->rec.snaps) {
		c->rec.snaps = calloc(MR_CTL_CLASSES_MAX_SNAPS, sizeof(*c->rec.snaps));
		if (!c->rec.snaps)
			return mr_error(-ENOMEM, "out of memory");
	}
	if (c->rec.nr_snaps == MR_CTL_CLASSES_MAX_SNAPS) {
		free(c->rec.snaps[0].regions);
		memmove(c->rec.snaps, c->rec.snaps + 1, (MR_CTL_CLASSES_MAX_SNAPS - 1) * sizeof(*sn));
		c->rec.nr_snaps--;
	}
	sn = &c->rec.snaps[c->rec.nr_snaps];
	memset(sn, 0, sizeof(*sn));
	sn->regions = malloc((nr ? nr : 1) * sizeof(*sn->regions));
	if (!sn->regions)
		return mr_error(-ENOMEM, "out of memory");
	for (i = 0; i < nr; i++) {
		sn->regions[i].start = regions[i].start;
		sn->regions[i].end = regions[i].end;
		sn->regions[i].nr_accesses = regions[i].nr_accesses;
		sn->regions[i].age = regions[i].age;
	}
	sn->nr_regions = nr;
	sn->time_us = time_us;
	sn->nr_samples = nr_samples ? nr_samples : 1;
	c->rec.nr_snaps++;
	return 0;
}

static void log_round(struct mr_ctl_classes *c, uint64_t time_us, const struct mr_site_map *m,
		      size_t changed, int err)
{
	size_t i, nhot = 0, ncold = 0;

	if (!c->log)
		return;
	for (i = 0; i < c->nr_sites; i++) {
		if (c->sites[i].cls == MR_ALLOC_CLASS_HOT)
			nhot++;
		else if (c->sites[i].cls == MR_ALLOC_CLASS_COLD)
			ncold++;
	}
	fprintf(c->log, "%s%" PRIu64 ".%03" PRIu64 " s: classes: %zu sites in the map of pid %d, "
		"%zu hot, %zu cold, %zu changed; %s\n", c->log_prefix, time_us / 1000000,
		time_us / 1000 % 1000, m->nr_sites, (int)c->pid, nhot, ncold, changed,
		!changed ? "page unchanged" : err ? "page not written" : "page written");
	if (c->cut > 0)
		fprintf(c->log, "%s  sites measured alone: hot from %.3f\n", c->log_prefix, c->cut);
	else
		fprintf(c->log, "%s  sites measured alone: one cluster\n", c->log_prefix);
	for (i = 0; i < c->nr_sites; i++) {
		char size[32];

		mr_format_size(c->sites[i].bytes, size, sizeof(size));
		fprintf(c->log, "%s  site %s+0x%" PRIx64 ": %s (%s %.3f, %s%s%s)\n", c->log_prefix,
			c->sites[i].build_id, c->sites[i].offset, class_names[c->sites[i].cls],
			c->sites[i].alone ? "measured alone" : "score", c->sites[i].score, size,
			c->sites[i].probed ? ", put apart once" : "",
			c->sites[i].pending ? ", one round toward the other class" : "");
	}
	fflush(c->log);
}

int mr_ctl_classes_aggregate(struct mr_ctl_classes *c, const struct mr_mon_attrs *attrs,
			     const struct mr_mon_region *regions, size_t nr, uint32_t nr_samples,
			     uint64_t time_us)
{
	struct mr_site_map m;
	size_t changed;
	int err;

	err = keep_snapshot(c, regions, nr, nr_samples, time_us);
	if (err)
		return err;
	if (c->map_asked) {
		/* the request of the last round: answered on the allocator's slow path */
		err = mr_ctl_classes_map_read(c, &m);
		if (err == -EAGAIN)
			return mr_proc_same(c->pid, c->starttime_ticks);
		if (err)
			return err;
		c->rec.hdr.attrs = *attrs;
		c->rounds++;
		err = mr_prof_page_rates(&c->rec, &m);
		rec_clear(&c->rec);
		if (!err) {
			mr_prof_attribute(&m, MR_PROF_DEFAULT_HOT_THRESHOLD);
			changed = mr_ctl_classes_decide(c, &m);
			if (changed && c->apply)
				err = mr_ctl_classes_write(c, c->sites, c->nr_sites);
			log_round(c, time_us, &m, changed, err);
		}
		mr_prof_map_free(&m);
		return err;
	}
	if (time_us < c->next_us)
		return 0;
	c->next_us = time_us + c->interval_us;
	return mr_ctl_classes_map_request(c);
}
