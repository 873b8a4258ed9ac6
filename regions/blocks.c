/* Memory blocks of a region offline and back online: checks first (Movable zone, the
 * block inside the region), a time limit, rollback of what this call offlined, and a
 * state file of what memreg took offline so `memregctl online --restore` recovers it. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/file.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "common/root.h"
#include "common/sys.h"
#include "common/util.h"
#include "regions/placement.h"

#define BLOCK_DIR "/sys/devices/system/memory"

#ifndef MR_LOCALSTATEDIR
#define MR_LOCALSTATEDIR "/var"
#endif

/* The Linux path of the state file (before the root is applied). */
static const char *state_linux_path(void)
{
	static char path[4096];
	const char *dir = getenv("MEMREG_STATE_DIR");

	snprintf(path, sizeof(path), "%s/offline.state",
		 dir && *dir ? dir : MR_LOCALSTATEDIR "/lib/memreg");
	return path;
}

const char *mr_block_state_path(void)
{
	static char path[4200];

	/* Too long for the root: the bare path, which then fails to open by name. */
	if (mr_root_path(path, sizeof(path), state_linux_path()))
		snprintf(path, sizeof(path), "%s", state_linux_path());
	return path;
}

void mr_block_plan_destroy(struct mr_block_plan *plan)
{
	free(plan->blocks);
	free(plan->zones);
	memset(plan, 0, sizeof(*plan));
}

static int plan_add_zone(struct mr_block_plan *plan, uint64_t block, enum mr_block_zone zone)
{
	uint64_t *n = realloc(plan->blocks, (plan->nr_blocks + 1) * sizeof(*n));
	enum mr_block_zone *z;

	if (!n)
		return mr_error(-ENOMEM, "out of memory");
	plan->blocks = n;
	z = realloc(plan->zones, (plan->nr_blocks + 1) * sizeof(*z));
	if (!z)
		return mr_error(-ENOMEM, "out of memory");
	plan->zones = z;
	plan->zones[plan->nr_blocks] = zone;
	plan->blocks[plan->nr_blocks++] = block;
	return 0;
}

const char *mr_block_zone_online(enum mr_block_zone zone)
{
	return zone == MR_ZONE_KERNEL ? "online_kernel" : "online_movable";
}

static int block_read(uint64_t block, const char *file, char *buf, size_t len)
{
	char path[128];

	return mr_root_read_str(mr_pathf(path, sizeof(path), BLOCK_DIR "/memory%" PRIu64 "/%s",
					 block, file), buf, len);
}

/* Every byte of the block inside one of the region's ranges. */
static bool block_in_region(const struct mr_region_map *map, const struct mr_region *r,
			    uint64_t block)
{
	uint64_t start = block * map->block_size_bytes, size = map->block_size_bytes;
	unsigned i;

	for (i = 0; i < r->nr_ranges; i++)
		if (start >= r->ranges[i].start &&
		    start - r->ranges[i].start <= r->ranges[i].size - size &&
		    r->ranges[i].size >= size)
			return true;
	return false;
}

int mr_offline_plan(const struct mr_region_map *map, const struct mr_region *r,
		    struct mr_block_plan *plan)
{
	char state[32], zones[64];
	unsigned i;
	int ret;

	memset(plan, 0, sizeof(*plan));
	plan->action = MR_BLOCK_OFFLINE;
	/* The kernel takes memory offline only block by block: without blocks (no memory
	 * hot-plug) there is nothing to ask it for. */
	if (!map->block_size_bytes)
		return mr_error(-ENOTSUP, "region %u: no memory blocks to take offline: there is "
				"no %s (a kernel without memory hot-plug)%s", r->id, BLOCK_DIR,
				mr_region_span_known(r) ? "" : "; its physical span is unknown too");
	if (!r->nr_blocks)
		return mr_error(-EINVAL, "region %u holds no whole memory block", r->id);
	/* Planning touches nothing: a refusal drops the plan and leaves everything as
	 * it was. */
	for (i = 0; i < r->nr_blocks; i++) {
		uint64_t blk = r->blocks[i];

		if (!block_in_region(map, r, blk)) {
			ret = mr_error(-EINVAL, "memory%" PRIu64 " is not inside region %u",
				       blk, r->id);
			goto fail;
		}
		if ((ret = block_read(blk, "state", state, sizeof(state))) ||
		    (ret = block_read(blk, "valid_zones", zones, sizeof(zones))))
			goto fail;
		if (strcmp(state, "offline") == 0) {
			plan->skipped++;
			continue;
		}
		if (strcmp(state, "online") != 0) {
			ret = mr_error(-EBUSY, "memory%" PRIu64 ": state '%s'", blk, state);
			goto fail;
		}
		if (strcmp(zones, "Movable") != 0) {
			ret = mr_error(-EBUSY, "memory%" PRIu64 " of region %u is in zone %s, not "
				       "Movable: it may hold unmovable pages; refusing to offline "
				       "the region", blk, r->id, zones);
			goto fail;
		}
		if ((ret = plan_add_zone(plan, blk, MR_ZONE_MOVABLE)))
			goto fail;
	}
	return 0;
fail:
	mr_block_plan_destroy(plan);
	return ret;
}

int mr_online_plan(const struct mr_region_map *map, const struct mr_region *r, bool all,
		   struct mr_block_plan *plan)
{
	struct mr_block_entry *e = NULL;
	unsigned nr = 0, i, j;
	char state[32];
	int ret;

	(void)map;
	memset(plan, 0, sizeof(*plan));
	plan->action = MR_BLOCK_ONLINE;
	if ((ret = mr_block_state_entries(&e, &nr, plan->notes, &plan->nr_notes)))
		return ret;
	for (i = 0; i < r->nr_blocks; i++) {
		enum mr_block_zone zone = MR_ZONE_UNKNOWN;
		bool ours = false;

		if ((ret = block_read(r->blocks[i], "state", state, sizeof(state))))
			goto fail;
		if (strcmp(state, "offline") != 0) {
			plan->skipped++;
			continue;
		}
		for (j = 0; j < nr; j++)
			if (e[j].block == r->blocks[i] && e[j].this_boot) {
				ours = true;
				zone = e[j].zone;
			}
		if (!ours && !all) {
			plan->not_ours++;
			if (plan->nr_notes < MR_BLOCK_NOTES)
				snprintf(plan->notes[plan->nr_notes++], sizeof(plan->notes[0]),
					 "memory%" PRIu64 " is offline, but memreg did not take it "
					 "(not in the state file for this boot): left alone; --all "
					 "brings it back too", r->blocks[i]);
			continue;
		}
		if ((ret = plan_add_zone(plan, r->blocks[i], zone)))
			goto fail;
	}
	free(e);
	return 0;
fail:
	free(e);
	mr_block_plan_destroy(plan);
	return ret;
}

/* ---------------------------------------------------------------- the state file
 * One line per block memreg has taken (or is taking) offline:
 *	memoryN boot=BOOT_ID zone=Movable|kernel plan=ID|-
 * A block is added before its offline is written and removed after it is back
 * online, so after a crash the file names every block memreg may have left offline.
 * The boot id tells entries of this boot from stale ones (after a reboot the kernel
 * onlines blocks by its own rules): those are reported, never acted on. Rewritten
 * whole (temporary file, fsync, rename) under an exclusive lock. */

#define STATE_HEADER "# memreg offline state, version 2: blocks memreg took offline; " \
	"`memregctl online --restore --apply` brings them back\n"

static void MR_PRINTF(3, 4) note(char notes[][256], unsigned *nr, const char *fmt, ...)
{
	va_list ap;

	if (!notes || !nr || *nr >= MR_BLOCK_NOTES)
		return;
	va_start(ap, fmt);
	vsnprintf(notes[(*nr)++], 256, fmt, ap);
	va_end(ap);
}

static void boot_id(char *buf, size_t len)
{
	if (mr_root_read_str("/proc/sys/kernel/random/boot_id", buf, len))
		buf[0] = '\0';
	mr_clear_error();
}

static const char *zone_name(enum mr_block_zone z)
{
	return z == MR_ZONE_MOVABLE ? "Movable" : z == MR_ZONE_KERNEL ? "kernel" : "unknown";
}

/* One entry: "memoryN boot=... zone=... plan=...". 0, or -EINVAL. */
static int parse_entry(char *line, const char *this_boot, struct mr_block_entry *e)
{
	char *tok, *save = NULL;
	bool have_boot = false, have_zone = false;

	memset(e, 0, sizeof(*e));
	tok = strtok_r(line, " \t", &save);
	if (!tok || strncmp(tok, "memory", 6) || mr_parse_u64(tok + 6, &e->block))
		return -EINVAL;
	while ((tok = strtok_r(NULL, " \t", &save))) {
		if (strncmp(tok, "boot=", 5) == 0 && strlen(tok + 5) < sizeof(e->boot_id)) {
			snprintf(e->boot_id, sizeof(e->boot_id), "%s", tok + 5);
			have_boot = true;
		} else if (strcmp(tok, "zone=Movable") == 0) {
			e->zone = MR_ZONE_MOVABLE;
			have_zone = true;
		} else if (strcmp(tok, "zone=kernel") == 0) {
			e->zone = MR_ZONE_KERNEL;
			have_zone = true;
		} else if (strncmp(tok, "plan=", 5) == 0 && strlen(tok + 5) < sizeof(e->tag)) {
			snprintf(e->tag, sizeof(e->tag), "%s", strcmp(tok + 5, "-") ? tok + 5 : "");
		} else {
			return -EINVAL;
		}
	}
	if (!have_boot || !have_zone)
		return -EINVAL;
	e->this_boot = this_boot[0] && strcmp(e->boot_id, this_boot) == 0;
	return 0;
}

int mr_block_state_entries(struct mr_block_entry **entries, unsigned *nr,
			   char notes[][256], unsigned *nr_notes)
{
	const char *path = mr_block_state_path();
	char line[512], boot[48];
	unsigned lineno = 0, stale = 0;
	FILE *f = fopen(path, "r");

	*entries = NULL;
	*nr = 0;
	if (!f)
		return errno == ENOENT ? 0 : mr_error(-errno, "%s: %s", path, strerror(errno));
	boot_id(boot, sizeof(boot));
	while (fgets(line, sizeof(line), f)) {
		struct mr_block_entry e, *n;
		char copy[512], *nl = strchr(line, '\n');

		lineno++;
		if (nl)
			*nl = '\0';
		if (line[0] == '#' || !line[0])
			continue;
		snprintf(copy, sizeof(copy), "%s", line);
		if (parse_entry(copy, boot, &e)) {
			/* Skipped, never guessed at: a line memreg cannot read names no
			 * block it may touch. */
			note(notes, nr_notes, "%s:%u: not a state entry, skipped: '%.120s'",
			     path, lineno, line);
			continue;
		}
		if (!e.this_boot && stale++ == 0)
			note(notes, nr_notes, "%s:%u: memory%" PRIu64 " was taken offline in "
			     "another boot (%s): not acted on", path, lineno, e.block, e.boot_id);
		n = realloc(*entries, (*nr + 1) * sizeof(*n));
		if (!n) {
			fclose(f);
			free(*entries);
			*entries = NULL;
			return mr_error(-ENOMEM, "out of memory");
		}
		*entries = n;
		(*entries)[(*nr)++] = e;
	}
	fclose(f);
	if (stale > 1)
		note(notes, nr_notes, "%s: %u entries in all are from another boot", path, stale);
	return 0;
}

/* mkdir -p of the directory holding @path (the state directory may not exist yet). */
static int make_parent(const char *path)
{
	char dir[4300], *p;

	snprintf(dir, sizeof(dir), "%s", path);
	p = strrchr(dir, '/');
	if (!p || p == dir)
		return 0;
	*p = '\0';
	for (p = dir + 1; ; p++) {
		if (*p == '/' || !*p) {
			char c = *p;

			*p = '\0';
			if (mkdir(dir, 0755) && errno != EEXIST)
				return mr_error(-errno, "%s: %s", dir, strerror(errno));
			*p = c;
			if (!c)
				break;
		}
	}
	return 0;
}

/* Rewrite the file (temporary + fsync + rename) with @e; no file when empty. */
static int state_write(const struct mr_block_entry *e, unsigned nr)
{
	const char *path = mr_block_state_path();
	char tmp[4300];
	unsigned i;
	FILE *f;
	int ret;

	if (!nr) {
		if (unlink(path) && errno != ENOENT)
			return mr_error(-errno, "%s: %s", path, strerror(errno));
		return 0;
	}
	if ((ret = make_parent(path)))
		return ret;
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return mr_error(-errno, "%s: %s", tmp, strerror(errno));
	fputs(STATE_HEADER, f);
	for (i = 0; i < nr; i++)
		fprintf(f, "memory%" PRIu64 " boot=%s zone=%s plan=%s\n", e[i].block,
			e[i].boot_id[0] ? e[i].boot_id : "-", zone_name(e[i].zone),
			e[i].tag[0] ? e[i].tag : "-");
	if (fflush(f) || fsync(fileno(f)) || ferror(f)) {
		int err = errno;

		fclose(f);
		unlink(tmp);
		return mr_error(-err, "%s: %s", tmp, strerror(err));
	}
	fclose(f);
	if (rename(tmp, path))
		return mr_error(-errno, "%s: %s", path, strerror(errno));
	return 0;
}

/* Add (@add) or remove this boot's entry of @block. Entries of other boots stay. */
static int state_update(uint64_t block, bool add, enum mr_block_zone zone, const char *tag)
{
	struct mr_block_entry *e, *n;
	unsigned nr, i, j;
	int ret = mr_block_state_entries(&e, &nr, NULL, NULL);

	if (ret)
		return ret;
	for (i = j = 0; i < nr; i++)
		if (e[i].block != block || !e[i].this_boot)
			e[j++] = e[i];
	nr = j;
	if (add) {
		n = realloc(e, (nr + 1) * sizeof(*n));
		if (!n) {
			free(e);
			return mr_error(-ENOMEM, "out of memory");
		}
		e = n;
		memset(&e[nr], 0, sizeof(e[nr]));
		e[nr].block = block;
		boot_id(e[nr].boot_id, sizeof(e[nr].boot_id));
		e[nr].zone = zone;
		snprintf(e[nr].tag, sizeof(e[nr].tag), "%s", tag ? tag : "");
		nr++;
	}
	ret = state_write(e, nr);
	free(e);
	return ret;
}

static int lock_fd = -1;
static unsigned lock_depth;

int mr_block_state_lock(void)
{
	char path[4300], pid[32] = "";
	ssize_t n;
	int fd;

	if (lock_depth) {
		lock_depth++;
		return 0;
	}
	snprintf(path, sizeof(path), "%s.lock", mr_block_state_path());
	if ((fd = make_parent(path)))
		return fd;
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return mr_error(-errno, "%s: %s", path, strerror(errno));
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		int err = errno;

		n = pread(fd, pid, sizeof(pid) - 1, 0);
		pid[n > 0 ? n : 0] = '\0';
		if (strchr(pid, '\n'))
			*strchr(pid, '\n') = '\0';
		close(fd);
		if (err == EWOULDBLOCK)
			return mr_error(-EBUSY, "another memreg process%s%s%s is changing memory "
					"blocks (%s is locked): nothing done; try again when it "
					"has finished", pid[0] ? " (pid " : "", pid, pid[0] ? ")" : "",
					path);
		return mr_error(-err, "%s: flock: %s", path, strerror(err));
	}
	snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	if (ftruncate(fd, 0) == 0 && pwrite(fd, pid, strlen(pid), 0) < 0) {
		/* The pid is only for the message of a second writer. */
	}
	lock_fd = fd;
	lock_depth = 1;
	return 0;
}

void mr_block_state_unlock(void)
{
	if (!lock_depth || --lock_depth)
		return;
	flock(lock_fd, LOCK_UN);
	close(lock_fd);
	lock_fd = -1;
}

int mr_restore_plan(struct mr_block_plan *plan, const char *tag)
{
	struct mr_block_entry *e;
	char state[32];
	unsigned nr, i;
	int ret;

	memset(plan, 0, sizeof(*plan));
	plan->action = MR_BLOCK_ONLINE;
	if ((ret = mr_block_state_entries(&e, &nr, plan->notes, &plan->nr_notes)))
		return ret;
	/* Newest first: the reverse of the order they went offline. */
	for (i = nr; i-- > 0;) {
		if (!e[i].this_boot || (tag && strcmp(e[i].tag, tag) != 0))
			continue;
		ret = block_read(e[i].block, "state", state, sizeof(state));
		if (ret == -ENOENT) {
			plan->skipped++;	/* the block is gone (hot-removed) */
			mr_clear_error();
			ret = 0;
			continue;
		}
		if (ret)
			break;
		if (strcmp(state, "offline") == 0) {
			if ((ret = plan_add_zone(plan, e[i].block, e[i].zone)))
				break;
		} else {
			plan->skipped++;
		}
	}
	free(e);
	if (ret)
		mr_block_plan_destroy(plan);
	return ret;
}

int mr_block_state_prune(bool apply)
{
	struct mr_block_entry *e;
	unsigned nr, i, j;
	char state[32];
	int ret;

	if ((ret = mr_root_may_change("change the state file", apply)))
		return ret;
	if ((ret = mr_block_state_lock()))
		return ret;
	if ((ret = mr_block_state_entries(&e, &nr, NULL, NULL)))
		goto out;
	for (i = j = 0; i < nr; i++) {
		int r = block_read(e[i].block, "state", state, sizeof(state));

		/* Another boot's entries stay: they are reported, never acted on. */
		if (!e[i].this_boot || (r == 0 && strcmp(state, "offline") == 0))
			e[j++] = e[i];
	}
	mr_clear_error();
	ret = j == nr ? 0 : state_write(e, j);
	free(e);
out:
	mr_block_state_unlock();
	return ret;
}

/* ---------------------------------------------------------------- applying */

static volatile sig_atomic_t alarm_fired;

static void on_alarm(int sig)
{
	(void)sig;
	alarm_fired = 1;
}

/*
 * The sysfs writer. The kernel retries an offline until it succeeds or the writer gets
 * a signal, so the deadline is an interval timer whose SIGALRM (installed without
 * SA_RESTART) interrupts the write with -EINTR. The timer repeats every 10 ms after
 * the deadline: a SIGALRM that arrives after the timer is armed but before the
 * write has started would otherwise be lost and leave the write retrying forever.
 */
static int sysfs_set_state(uint64_t block, const char *state, uint64_t deadline_ns, void *ctx)
{
	struct sigaction sa = { 0 }, old;
	struct itimerval it = { 0 }, off = { 0 };
	char path[128];
	ssize_t r;
	int fd, err = 0;

	(void)ctx;
	mr_pathf(path, sizeof(path), BLOCK_DIR "/memory%" PRIu64 "/state", block);
	fd = mr_root_open(path, O_WRONLY);
	if (fd < 0)
		return fd;
	if (deadline_ns) {
		uint64_t now = mr_now_ns(), left = deadline_ns > now ? deadline_ns - now : 1000;

		sa.sa_handler = on_alarm;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGALRM, &sa, &old);
		alarm_fired = 0;
		it.it_value.tv_sec = (time_t)(left / 1000000000u);
		it.it_value.tv_usec = (suseconds_t)(left % 1000000000u / 1000u);
		if (!it.it_value.tv_sec && !it.it_value.tv_usec)
			it.it_value.tv_usec = 1;
		it.it_interval.tv_usec = 10000;
		setitimer(ITIMER_REAL, &it, NULL);
	}
	r = mr_sys_write(fd, state, strlen(state));
	if (r < 0)
		err = errno;
	if (deadline_ns) {
		setitimer(ITIMER_REAL, &off, NULL);
		sigaction(SIGALRM, &old, NULL);
	}
	mr_sys_close(fd);
	if (r < 0)
		return mr_error(-err, "%s: write \"%s\": %s%s", path, state, strerror(err),
				err == EINTR && alarm_fired ? " (time limit reached)" : "");
	return 0;
}

const struct mr_block_ops mr_block_sysfs_ops = { .set_state = sysfs_set_state };

static void report(const struct mr_block_ops *ops, uint64_t block, const char *state, int err,
		   unsigned done, unsigned nr)
{
	if (ops->done)
		ops->done(block, state, err, done, nr, ops->ctx);
}

static int apply_online(const struct mr_block_plan *plan, const struct mr_block_ops *ops,
			struct mr_block_result *res)
{
	unsigned i;
	int ret = 0;

	for (i = 0; i < plan->nr_blocks; i++) {
		const char *st = mr_block_zone_online(plan->zones ? plan->zones[i]
						      : MR_ZONE_UNKNOWN);

		/* No fallback to plain "online": the kernel would pick the zone, and a
		 * block meant for Movable could come back in Normal for good. */
		ret = ops->set_state(plan->blocks[i], st, 0, ops->ctx);
		report(ops, plan->blocks[i], st, ret, res->done + !ret, plan->nr_blocks);
		if (ret) {
			res->failed_block = plan->blocks[i];
			ret = mr_error_wrap(ret, "stopped at memory%" PRIu64 " (%s)",
					    plan->blocks[i], st);
			break;
		}
		res->done++;
		if ((ret = state_update(plan->blocks[i], false, MR_ZONE_UNKNOWN, NULL)))
			break;
	}
	return ret;
}

int mr_block_plan_apply(const struct mr_block_plan *plan, uint64_t timeout_ns, bool apply,
			const struct mr_block_ops *ops, struct mr_block_result *res)
{
	uint64_t t0 = mr_now_ns(), deadline = timeout_ns ? t0 + timeout_ns : 0;
	char first[512] = "";
	unsigned i, j;
	int ret = 0;

	memset(res, 0, sizeof(*res));
	res->failed_block = UINT64_MAX;
	if (!ops)
		ops = &mr_block_sysfs_ops;
	ret = mr_root_may_change("change memory blocks", apply);
	if (ret)
		return ret;
	if ((ret = mr_block_state_lock()))
		return ret;

	if (plan->action == MR_BLOCK_ONLINE) {
		ret = apply_online(plan, ops, res);
		res->elapsed_ns = mr_now_ns() - t0;
		mr_block_state_unlock();
		return ret;
	}

	for (i = 0; i < plan->nr_blocks; i++) {
		enum mr_block_zone zone = plan->zones ? plan->zones[i] : MR_ZONE_MOVABLE;

		if ((ret = state_update(plan->blocks[i], true, zone, plan->tag))) {
			snprintf(first, sizeof(first), "%s", mr_last_error());
			break;
		}
		if (deadline && mr_now_ns() >= deadline) {
			ret = mr_error(-ETIMEDOUT, "time limit reached before memory%" PRIu64,
				       plan->blocks[i]);
		} else {
			ret = ops->set_state(plan->blocks[i], "offline", deadline, ops->ctx);
			if (ret == -EINTR && deadline && mr_now_ns() >= deadline)
				ret = mr_error(-ETIMEDOUT, "memory%" PRIu64 ": offline did not "
					       "finish within the time limit", plan->blocks[i]);
		}
		if (ret)
			snprintf(first, sizeof(first), "%s", mr_last_error());
		report(ops, plan->blocks[i], "offline", ret, res->done + !ret, plan->nr_blocks);
		if (ret) {
			res->failed_block = plan->blocks[i];
			state_update(plan->blocks[i], false, zone, NULL);
			break;
		}
		res->done++;
	}
	if (ret) {
		/* Roll back: the blocks this call offlined come back to the zone they
		 * had, newest first. The first error is the one reported; a block that
		 * will not come back stays in the state file for --restore. */
		unsigned stuck = 0;

		for (j = i; j-- > 0;) {
			const char *st = mr_block_zone_online(plan->zones ? plan->zones[j]
							      : MR_ZONE_MOVABLE);

			if (ops->set_state(plan->blocks[j], st, 0, ops->ctx)) {
				stuck++;
				continue;
			}
			res->rolled_back++;
			state_update(plan->blocks[j], false, MR_ZONE_UNKNOWN, NULL);
		}
		res->done = 0;
		mr_error(ret, "%s; %u block(s) brought back online%s", first, res->rolled_back,
			 stuck ? ", some could not be: see the state file" : "");
	}
	res->elapsed_ns = mr_now_ns() - t0;
	mr_block_state_unlock();
	return ret;
}
