/* Memory blocks of a region offline and back online: checks first (Movable zone, the
 * block inside the region), a time limit, rollback of what this call offlined, and a
 * state file of what memreg took offline so `memregctl online --restore` recovers it. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
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

const char *mr_block_state_path(void)
{
	static char path[4096];
	const char *dir = getenv("MEMREG_STATE_DIR");

	snprintf(path, sizeof(path), "%s/offline.state", dir && *dir ? dir : "/var/lib/memreg");
	return path;
}

void mr_block_plan_destroy(struct mr_block_plan *plan)
{
	free(plan->blocks);
	memset(plan, 0, sizeof(*plan));
}

static int plan_add(struct mr_block_plan *plan, uint64_t block)
{
	uint64_t *n = realloc(plan->blocks, (plan->nr_blocks + 1) * sizeof(*n));

	if (!n)
		return mr_error(-ENOMEM, "out of memory");
	plan->blocks = n;
	plan->blocks[plan->nr_blocks++] = block;
	return 0;
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
		if ((ret = plan_add(plan, blk)))
			goto fail;
	}
	return 0;
fail:
	mr_block_plan_destroy(plan);
	return ret;
}

int mr_online_plan(const struct mr_region_map *map, const struct mr_region *r,
		   struct mr_block_plan *plan)
{
	char state[32];
	unsigned i;
	int ret;

	memset(plan, 0, sizeof(*plan));
	plan->action = MR_BLOCK_ONLINE;
	for (i = 0; i < r->nr_blocks; i++) {
		if ((ret = block_read(r->blocks[i], "state", state, sizeof(state))))
			goto fail;
		if (strcmp(state, "offline") != 0)
			plan->skipped++;
		else if ((ret = plan_add(plan, r->blocks[i])))
			goto fail;
	}
	return 0;
fail:
	mr_block_plan_destroy(plan);
	return ret;
}

/* ---------------------------------------------------------------- the state file
 * One line per block memreg has taken (or is taking) offline: "memoryN". A block is
 * added before its offline is written and removed after it is back online, so after a
 * crash the file names every block memreg may have left offline. */

static int state_read(uint64_t **blocks, unsigned *nr)
{
	const char *path = mr_block_state_path();
	char line[128];
	unsigned lineno = 0;
	FILE *f = fopen(path, "r");

	*blocks = NULL;
	*nr = 0;
	if (!f)
		return errno == ENOENT ? 0 : mr_error(-errno, "%s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		uint64_t b, *n;
		char *nl = strchr(line, '\n');

		lineno++;
		if (nl)
			*nl = '\0';
		if (line[0] == '#' || !line[0])
			continue;
		if (strncmp(line, "memory", 6) || mr_parse_u64(line + 6, &b)) {
			fclose(f);
			free(*blocks);
			*blocks = NULL;
			return mr_error(-EINVAL, "%s:%u: not a memory block: '%s'", path, lineno, line);
		}
		n = realloc(*blocks, (*nr + 1) * sizeof(*n));
		if (!n) {
			fclose(f);
			free(*blocks);
			return mr_error(-ENOMEM, "out of memory");
		}
		*blocks = n;
		(*blocks)[(*nr)++] = b;
	}
	fclose(f);
	return 0;
}

/* Rewrite the file (temporary + fsync + rename) with @blocks; no file when empty. */
static int state_write(const uint64_t *blocks, unsigned nr)
{
	const char *path = mr_block_state_path();
	char tmp[4200], dir[4096], *slash;
	unsigned i;
	FILE *f;

	if (!nr) {
		if (unlink(path) && errno != ENOENT)
			return mr_error(-errno, "%s: %s", path, strerror(errno));
		return 0;
	}
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0755) && errno != EEXIST)
			return mr_error(-errno, "%s: %s", dir, strerror(errno));
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return mr_error(-errno, "%s: %s", tmp, strerror(errno));
	fprintf(f, "# memory blocks memreg took offline; `memregctl online --restore "
		"--apply` brings them back\n");
	for (i = 0; i < nr; i++)
		fprintf(f, "memory%" PRIu64 "\n", blocks[i]);
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

static int state_update(uint64_t block, bool add)
{
	uint64_t *blocks, *n;
	unsigned nr, i, j;
	int ret = state_read(&blocks, &nr);

	if (ret)
		return ret;
	for (i = j = 0; i < nr; i++)
		if (blocks[i] != block)
			blocks[j++] = blocks[i];
	nr = j;
	if (add) {
		n = realloc(blocks, (nr + 1) * sizeof(*n));
		if (!n) {
			free(blocks);
			return mr_error(-ENOMEM, "out of memory");
		}
		blocks = n;
		blocks[nr++] = block;
	}
	ret = state_write(blocks, nr);
	free(blocks);
	return ret;
}

int mr_restore_plan(struct mr_block_plan *plan)
{
	uint64_t *blocks;
	char state[32];
	unsigned nr, i;
	int ret;

	memset(plan, 0, sizeof(*plan));
	plan->action = MR_BLOCK_ONLINE;
	if ((ret = state_read(&blocks, &nr)))
		return ret;
	/* Newest first: the reverse of the order they went offline. */
	for (i = nr; i-- > 0;) {
		ret = block_read(blocks[i], "state", state, sizeof(state));
		if (ret == -ENOENT) {
			plan->skipped++;	/* the block is gone (hot-removed) */
			continue;
		}
		if (ret)
			break;
		if (strcmp(state, "offline") == 0) {
			if ((ret = plan_add(plan, blocks[i])))
				break;
		} else {
			plan->skipped++;
		}
	}
	free(blocks);
	if (ret)
		mr_block_plan_destroy(plan);
	return ret;
}

int mr_block_state_prune(bool apply)
{
	uint64_t *blocks;
	unsigned nr, i, j;
	char state[32];
	int ret;

	if ((ret = mr_root_may_change("change the state file", apply)))
		return ret;
	if ((ret = state_read(&blocks, &nr)))
		return ret;
	for (i = j = 0; i < nr; i++) {
		int r = block_read(blocks[i], "state", state, sizeof(state));

		if (r == 0 && strcmp(state, "offline") == 0)
			blocks[j++] = blocks[i];
	}
	ret = j == nr ? 0 : state_write(blocks, j);
	free(blocks);
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
 * SA_RESTART) interrupts the write with -EINTR.
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

static const struct mr_block_ops sysfs_ops = { .set_state = sysfs_set_state };

/* Online @block in zone Movable, or in its default zone when the kernel refuses
 * Movable there (-EINVAL). */
static int block_online(const struct mr_block_ops *ops, uint64_t block)
{
	int ret = ops->set_state(block, "online_movable", 0, ops->ctx);

	if (ret == -EINVAL)	/* the zone cannot be Movable here */
		ret = ops->set_state(block, "online", 0, ops->ctx);
	return ret;
}

int mr_block_plan_apply(const struct mr_block_plan *plan, uint64_t timeout_ns, bool apply,
			const struct mr_block_ops *ops, struct mr_block_result *res)
{
	uint64_t t0 = mr_now_ns(), deadline = timeout_ns ? t0 + timeout_ns : 0;
	unsigned i, j;
	int ret = 0;

	memset(res, 0, sizeof(*res));
	res->failed_block = UINT64_MAX;
	if (!ops)
		ops = &sysfs_ops;
	ret = mr_root_may_change("change memory blocks", apply);
	if (ret)
		return ret;

	if (plan->action == MR_BLOCK_ONLINE) {
		for (i = 0; i < plan->nr_blocks; i++) {
			ret = block_online(ops, plan->blocks[i]);
			if (ret) {
				res->failed_block = plan->blocks[i];
				break;
			}
			res->done++;
			if ((ret = state_update(plan->blocks[i], false)))
				break;
		}
		res->elapsed_ns = mr_now_ns() - t0;
		return ret;
	}

	for (i = 0; i < plan->nr_blocks; i++) {
		if ((ret = state_update(plan->blocks[i], true)))
			break;
		if (deadline && mr_now_ns() >= deadline) {
			ret = mr_error(-ETIMEDOUT, "time limit reached before memory%" PRIu64,
				       plan->blocks[i]);
		} else {
			ret = ops->set_state(plan->blocks[i], "offline", deadline, ops->ctx);
			if (ret == -EINTR && deadline && mr_now_ns() >= deadline)
				ret = mr_error(-ETIMEDOUT, "memory%" PRIu64 ": offline did not "
					       "finish within the time limit", plan->blocks[i]);
		}
		if (ret) {
			res->failed_block = plan->blocks[i];
			state_update(plan->blocks[i], false);
			break;
		}
		res->done++;
	}
	if (ret) {
		/* Roll back: the blocks this call offlined come back, newest first. The
		 * first error is the one reported; a block that will not come back stays
		 * in the state file for --restore. */
		char first[512];
		unsigned stuck = 0;

		snprintf(first, sizeof(first), "%s", mr_last_error());
		for (j = i; j-- > 0;) {
			if (block_online(ops, plan->blocks[j])) {
				stuck++;
				continue;
			}
			res->rolled_back++;
			state_update(plan->blocks[j], false);
		}
		res->done = 0;
		mr_error(ret, "%s; %u block(s) brought back online%s", first, res->rolled_back,
			 stuck ? ", some could not be: see the state file" : "");
	}
	res->elapsed_ns = mr_now_ns() - t0;
	return ret;
}
