/* The damon backend's hold on DAMON's sysfs admin tree: whether DAMON is free, the
 * ownership marker (/run/memreg/damon.owner), creating memreg's kdamonds and
 * removing exactly those, and memregctl damon-reset after a memreg was killed.
 * Writing nr_kdamonds destroys every kdamond directory (it fails with EBUSY only
 * while one started through sysfs runs), so memreg writes it only where it found
 * DAMON free, and writes it back to 0 only when every kdamond there is its own. */
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/proc.h"
#include "common/root.h"
#include "common/util.h"
#include "monitor/damon.h"

#define NR_KDAMONDS MR_DAMON_KDAMONDS "/nr_kdamonds"

/* DAMON's in-kernel users that do not show in the sysfs admin tree. */
static const char *const modules[] = { "damon_reclaim", "damon_lru_sort", "damon_stat" };

static const char *kd_path(char *buf, size_t len, unsigned index, const char *rel)
{
	return mr_pathf(buf, len, MR_DAMON_KDAMONDS "/%u/%s", index, rel);
}

/* A thread named kdamond.N (or kdamond) is a kdamond, whoever started it. */
static bool is_kdamond(pid_t pid)
{
	char path[64], comm[64];

	return pid > 0 &&
	       !mr_root_read_str(mr_pathf(path, sizeof(path), "/proc/%ld/comm", (long)pid), comm,
				 sizeof(comm)) &&
	       strncmp(comm, "kdamond", 7) == 0;
}

pid_t mr_mon_damon_kdamond_pid(unsigned index)
{
	char path[100], buf[32];
	uint64_t pid;

	/* "-1" while it does not run */
	if (mr_mon_damon_read_str(kd_path(path, sizeof(path), index, "pid"), buf, sizeof(buf)) ||
	    mr_parse_u64(buf, &pid) || !pid || pid > INT32_MAX)
		return 0;
	return (pid_t)pid;
}

double mr_mon_damon_kdamond_cpu_s(pid_t kdamond_pid)
{
	struct mr_proc_stat st;

	if (kdamond_pid <= 0 || mr_proc_stat_read(kdamond_pid, &st))
		return 0;
	return (double)(st.utime_ticks + st.stime_ticks) / (double)sysconf(_SC_CLK_TCK);
}

/* ---------------------------------------------------------------- the owner file */

int mr_mon_damon_owner_format(const struct mr_mon_damon_owner *o, char *buf, size_t len)
{
	size_t n = 0;
	unsigned i;
	int r;

#define PUT(...)                                                          \
	do {                                                              \
		r = snprintf(buf + n, len - n, __VA_ARGS__);              \
		if (r < 0 || (size_t)r >= len - n)                        \
			return mr_error(-ENOSPC, "damon: owner file too long"); \
		n += (size_t)r;                                           \
	} while (0)
	PUT("# memreg's DAMON ownership marker: the kdamonds below were set up by memreg\n"
	    "# pid %ld, which removes them when done; after it was killed,\n"
	    "# `memregctl damon-reset --apply` does. Format: memregctl-damon-reset(1).\n",
	    (long)o->pid);
	PUT("memreg %ld %" PRIu64 "\n", (long)o->pid, o->starttime_ticks);
	if (o->tracefs[0])
		PUT("tracefs %s\n", o->tracefs);
	for (i = 0; i < o->nr_kdamonds; i++)
		PUT("kdamond %u %ld %s %ld\n", o->kd[i].index, (long)o->kd[i].pid, o->kd[i].ops,
		    (long)o->kd[i].target_pid);
#undef PUT
	return 0;
}

static bool parse_pid(const char *s, pid_t *pid)
{
	uint64_t v;

	if (mr_parse_u64(s, &v) || v > INT32_MAX)
		return false;
	*pid = (pid_t)v;
	return true;
}

int mr_mon_damon_owner_parse(const char *text, struct mr_mon_damon_owner *o)
{
	char *copy = strdup(text), *line, *save = NULL;
	unsigned lineno = 0;
	bool seen_memreg = false;
	int err = 0;

	if (!copy)
		return mr_error(-ENOMEM, "damon: out of memory");
	memset(o, 0, sizeof(*o));
	for (line = strtok_r(copy, "\n", &save); line && !err; line = strtok_r(NULL, "\n", &save)) {
		char w[5][200];
		pid_t index;
		int n;

		lineno++;
		if (line[0] == '#' || !line[0])
			continue;
		n = sscanf(line, "%199s %199s %199s %199s %199s", w[0], w[1], w[2], w[3], w[4]);
		if (n == 3 && !strcmp(w[0], "memreg") && parse_pid(w[1], &o->pid) && o->pid &&
		    !mr_parse_u64(w[2], &o->starttime_ticks)) {
			seen_memreg = true;
		} else if (n == 2 && !strcmp(w[0], "tracefs") && strlen(w[1]) < sizeof(o->tracefs)) {
			strcpy(o->tracefs, w[1]);
		} else if (n == 5 && !strcmp(w[0], "kdamond") && o->nr_kdamonds < MR_DAMON_MAX_KDAMONDS &&
			   parse_pid(w[1], &index) && parse_pid(w[2], &o->kd[o->nr_kdamonds].pid) &&
			   (!strcmp(w[3], "vaddr") || !strcmp(w[3], "paddr")) &&
			   parse_pid(w[4], &o->kd[o->nr_kdamonds].target_pid)) {
			o->kd[o->nr_kdamonds].index = (unsigned)index;
			strcpy(o->kd[o->nr_kdamonds++].ops, w[3]);
		} else {
			err = mr_error(-EINVAL, "%s:%u: not an owner line: '%.100s'", MR_DAMON_OWNER_FILE,
				       lineno, line);
		}
	}
	free(copy);
	if (!err && !seen_memreg)
		err = mr_error(-EINVAL, "%s: no 'memreg PID STARTTIME' line", MR_DAMON_OWNER_FILE);
	return err;
}

int mr_mon_damon_owner_read(struct mr_mon_damon_owner *o)
{
	char *text;
	int err;

	if (!mr_root_exists(MR_DAMON_OWNER_FILE))
		return -ENOENT;
	err = mr_root_read_file(MR_DAMON_OWNER_FILE, 1u << 16, &text, NULL);
	if (err)
		return err;
	err = mr_mon_damon_owner_parse(text, o);
	free(text);
	return err;
}

static int owner_save(struct mr_mon_damon_owner *o)
{
	char text[2048];
	int err;

	if (!mr_root_exists("/run") && (err = mr_root_mkdir("/run", o->apply)))
		return err;
	if (!mr_root_exists(MR_DAMON_OWNER_DIR) && (err = mr_root_mkdir(MR_DAMON_OWNER_DIR, o->apply)))
		return err;
	err = mr_mon_damon_owner_format(o, text, sizeof(text));
	if (!err)
		err = mr_root_write_file(MR_DAMON_OWNER_FILE, text, strlen(text), o->apply);
	if (!err)
		o->file_written = true;
	return err;
}

static void owner_remove(struct mr_mon_damon_owner *o)
{
	if (o->file_written && mr_root_unlink(MR_DAMON_OWNER_FILE, o->apply))
		fprintf(stderr, "memregctl: damon: %s\n", mr_last_error());
	o->file_written = false;
}

int mr_mon_damon_owner_init(struct mr_mon_damon_owner *o, bool apply)
{
	memset(o, 0, sizeof(*o));
	o->pid = getpid();
	o->apply = apply;
	return mr_proc_starttime(o->pid, &o->starttime_ticks);
}

/* ---------------------------------------------------------------- free? */

/* A memreg that wrote the owner file and still runs owns DAMON, even before its
 * nr_kdamonds write; a marker whose memreg is gone is named in @why. */
static int check_owner_file(char *why, size_t len, char *stale, size_t stale_len)
{
	struct mr_mon_damon_owner o;

	stale[0] = '\0';
	if (mr_mon_damon_owner_read(&o))
		return 0;	/* none, or unreadable: nr_kdamonds decides */
	if (o.pid == getpid())
		return 0;
	if (mr_proc_same(o.pid, o.starttime_ticks) == 0) {
		snprintf(why, len, "DAMON is in use: memreg pid %ld owns it (%s)", (long)o.pid,
			 MR_DAMON_OWNER_FILE);
		return -EBUSY;
	}
	snprintf(stale, stale_len, " (left by memreg pid %ld, which is gone: `memregctl "
		 "damon-reset --apply` removes it)", (long)o.pid);
	return 0;
}

int mr_mon_damon_check_free(char *why, size_t len)
{
	char buf[64], stale[160];
	uint64_t nr;
	DIR *d;
	struct dirent *de;
	size_t i;
	int err;

	if (!mr_root_exists(NR_KDAMONDS)) {
		snprintf(why, len, "this kernel has no DAMON sysfs interface (%s)", MR_DAMON_ADMIN);
		return -ENOTSUP;
	}
	err = check_owner_file(why, len, stale, sizeof(stale));
	if (err)
		return err;
	err = mr_root_read_u64(NR_KDAMONDS, &nr);
	if (err) {
		snprintf(why, len, "%s", mr_last_error());
		return err;
	}
	if (nr) {
		snprintf(why, len, "DAMON is in use: nr_kdamonds is %" PRIu64 "%s", nr, stale);
		return -EBUSY;
	}
	d = mr_root_opendir("/proc");
	if (!d) {
		snprintf(why, len, "cannot list /proc to look for kdamond threads");
		return -EIO;
	}
	while ((de = readdir(d))) {
		char path[300], comm[64];

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		mr_pathf(path, sizeof(path), "/proc/%s/comm", de->d_name);
		if (mr_root_read_str(path, comm, sizeof(comm)))
			continue;	/* exited meanwhile */
		if (strncmp(comm, "kdamond", 7) == 0) {
			snprintf(why, len, "DAMON is in use: thread %s (pid %s) runs", comm, de->d_name);
			closedir(d);
			return -EBUSY;
		}
	}
	closedir(d);
	for (i = 0; i < MR_ARRAY_SIZE(modules); i++) {
		char path[128];

		mr_pathf(path, sizeof(path), "/sys/module/%s/parameters/enabled", modules[i]);
		if (mr_root_read_str(path, buf, sizeof(buf)))
			continue;	/* module absent */
		if (buf[0] == 'Y' || buf[0] == 'y' || buf[0] == '1') {
			snprintf(why, len, "DAMON is in use: %s is enabled", modules[i]);
			return -EBUSY;
		}
	}
	return 0;
}

/* ---------------------------------------------------------------- claim */

int mr_mon_damon_claim(struct mr_mon_damon_owner *o)
{
	char why[256], path[100], num[16];
	uint64_t nr, v;
	unsigned i;
	int err;

	if (!o->nr_kdamonds || o->nr_kdamonds > MR_DAMON_MAX_KDAMONDS)
		return mr_error(-EINVAL, "damon: %u kdamonds", o->nr_kdamonds);
	/* nr_kdamonds = N makes kdamonds/0..N-1: all of them memreg's */
	for (i = 0; i < o->nr_kdamonds; i++)
		o->kd[i].index = i;
	err = mr_mon_damon_check_free(why, sizeof(why));
	if (err)
		return mr_error(err, "damon: %s; not touched", why);
	/* the marker before anything of DAMON's: a memreg killed from here on leaves
	 * a file naming what it may have set up */
	err = owner_save(o);
	if (err)
		return mr_error_wrap(err, "damon: ownership marker");
	/* Immediately before the write, once more: writing nr_kdamonds would destroy
	 * a configuration someone made since the check above. What remains is the
	 * time between this read and the write; the kernel offers no compare-and-set. */
	err = mr_root_read_u64(NR_KDAMONDS, &nr);
	if (err || nr) {
		owner_remove(o);
		if (err)
			return err;
		return mr_error(-EBUSY, "damon: DAMON is in use: nr_kdamonds became %" PRIu64
				" after memreg checked it (someone configured DAMON meanwhile); "
				"not touched", nr);
	}
	snprintf(num, sizeof(num), "%u", o->nr_kdamonds);
	err = mr_root_write_str(NR_KDAMONDS, num, o->apply);
	if (err) {
		owner_remove(o);
		return err;
	}
	/* Verify: our count reads back and every directory is fresh (off, no
	 * context). Otherwise someone else wrote too and whose directories these
	 * are is unknown: leave them, nr_kdamonds included. */
	err = mr_root_read_u64(NR_KDAMONDS, &nr);
	for (i = 0; !err && nr == o->nr_kdamonds && i < o->nr_kdamonds; i++) {
		char state[16] = "";

		if (mr_mon_damon_read_str(kd_path(path, sizeof(path), o->kd[i].index, "state"),
					  state, sizeof(state)) || strcmp(state, "off") ||
		    mr_root_read_u64(kd_path(path, sizeof(path), o->kd[i].index,
					     "contexts/nr_contexts"), &v) || v)
			break;
	}
	if (err || nr != o->nr_kdamonds || i < o->nr_kdamonds) {
		owner_remove(o);
		return mr_error(-EBUSY, "damon: DAMON changed right after memreg wrote nr_kdamonds "
				"(someone else configures it too); left as it is");
	}
	o->claimed = true;
	return 0;
}

int mr_mon_damon_started(struct mr_mon_damon_owner *o, unsigned i)
{
	pid_t pid = mr_mon_damon_kdamond_pid(o->kd[i].index);

	/* 0: it already stopped (a target that exited at once); nothing to record */
	if (!pid)
		return 0;
	if (!is_kdamond(pid))
		return mr_error(-EIO, "damon: kdamonds/%u/pid is %ld, not a kdamond thread",
				o->kd[i].index, (long)pid);
	o->kd[i].pid = pid;
	return owner_save(o);
}

/* ---------------------------------------------------------------- release */

/*
 * Read a DAMON sysfs file that may answer -EBUSY for a moment: its show functions
 * take DAMON's sysfs lock with a trylock, which a kdamond winding down (its target
 * exited) holds. Seen in the lab as a kdamond "gone" that was not, and nr_kdamonds
 * left at 1. Retries for up to 2 s; any other error at once.
 */
int mr_mon_damon_read_str(const char *path, char *buf, size_t len)
{
	int i, err = 0;

	for (i = 0; i < 200; i++) {
		err = mr_root_read_str(path, buf, len);
		if (err != -EBUSY && err != -EAGAIN)
			break;
		usleep(10000);
	}
	return err;
}

int mr_mon_damon_write_state(unsigned kd, const char *cmd, bool apply)
{
	char path[100];
	int i, err = 0;

	kd_path(path, sizeof(path), kd, "state");
	for (i = 0; i < 200; i++) {
		err = mr_root_write_str(path, cmd, apply);
		if (err != -EBUSY)
			break;
		usleep(10000);
	}
	return err;
}

enum kd_verdict {
	KD_OURS_RUNNING,	/* runs as the recorded thread: stop it */
	KD_OURS_STOPPED,	/* stopped, holding memreg's configuration or none */
	KD_FOREIGN,		/* someone else's now: leave it */
	KD_UNKNOWN,		/* runs, but memreg never recorded its thread */
	KD_GONE,		/* no such directory any more */
};

/* Is kdamonds/INDEX still what memreg set up? @why says why not. A stopped
 * directory counts as memreg's when it holds memreg's configuration (operations,
 * and for vaddr the target) or none at all (no context, no target: resetting it
 * loses nothing). */
static enum kd_verdict kd_classify(const struct mr_mon_damon_kdamond *k, char *why, size_t len)
{
	char path[160], state[16], ops[16];
	pid_t pid;
	uint64_t v;
	int err;

	if ((err = mr_mon_damon_read_str(kd_path(path, sizeof(path), k->index, "state"), state,
			     sizeof(state)))) {
		if (err == -ENOENT) {
			snprintf(why, len, "no longer exists");
			return KD_GONE;
		}
		snprintf(why, len, "state unreadable (%s)", mr_last_error());
		return KD_UNKNOWN;
	}
	pid = mr_mon_damon_kdamond_pid(k->index);
	if (!strcmp(state, "on") && pid) {
		if (k->pid && pid == k->pid)
			return KD_OURS_RUNNING;
		if (!k->pid) {
			snprintf(why, len, "runs as pid %ld, a thread memreg never recorded", (long)pid);
			return KD_UNKNOWN;
		}
		snprintf(why, len, "runs as pid %ld, not memreg's kdamond (pid %ld)", (long)pid,
			 (long)k->pid);
		return KD_FOREIGN;
	}
	if (mr_root_read_u64(kd_path(path, sizeof(path), k->index, "contexts/nr_contexts"), &v) || !v)
		return KD_OURS_STOPPED;
	if (v == 1 && !mr_root_read_u64(kd_path(path, sizeof(path), k->index,
						"contexts/0/targets/nr_targets"), &v) && !v)
		return KD_OURS_STOPPED;
	if (!mr_root_read_str(kd_path(path, sizeof(path), k->index, "contexts/0/operations"), ops,
			      sizeof(ops)) && !strcmp(ops, k->ops) &&
	    (!strcmp(ops, "paddr") ||
	     (!mr_root_read_u64(kd_path(path, sizeof(path), k->index,
					"contexts/0/targets/0/pid_target"), &v) &&
	      v == (uint64_t)k->target_pid)))
		return KD_OURS_STOPPED;
	snprintf(why, len, "stopped, configured by someone else");
	return KD_FOREIGN;
}

/* state off, then wait (up to 2 s) until the thread is gone, so the next user
 * does not start beside a kdamond still winding down. */
static int kd_stop(const struct mr_mon_damon_kdamond *k, bool apply)
{
	int i, err;

	err = mr_mon_damon_write_state(k->index, "off", apply);
	for (i = 0; !err && i < 200 && is_kdamond(k->pid); i++)
		usleep(10000);
	return err;
}

/* nr_kdamonds = 0 tries, 10 ms apart: 30 s */
#define RESET_RETRIES 3000

/* nr_kdamonds refuses (-EBUSY) while a kdamond still winds down, which on a loaded
 * emulated guest took longer than kd_stop's wait, once more than 10 s (a CI run
 * with two guests on two cores): retry up to 30 s. */
static int reset_nr(bool apply)
{
	int i, err = 0;

	for (i = 0; i < RESET_RETRIES; i++) {
		err = mr_root_write_str(NR_KDAMONDS, "0", apply);
		if (err != -EBUSY)
			break;
		usleep(10000);
	}
	return err;
}

/* Whether nr_kdamonds is still the count memreg wrote (no one resized it). */
static bool nr_is_ours(const struct mr_mon_damon_owner *o, char *why, size_t len)
{
	uint64_t nr;

	if (mr_root_read_u64(NR_KDAMONDS, &nr)) {
		snprintf(why, len, "%s", mr_last_error());
		return false;
	}
	if (nr != o->nr_kdamonds) {
		snprintf(why, len, "nr_kdamonds is %" PRIu64 ", memreg set %u: someone else "
			 "configured DAMON", nr, o->nr_kdamonds);
		return false;
	}
	return true;
}

void mr_mon_damon_release(struct mr_mon_damon_owner *o)
{
	char why[200];
	bool all_ours = true;
	unsigned i;

	if (o->claimed) {
		for (i = 0; i < o->nr_kdamonds; i++) {
			const struct mr_mon_damon_kdamond *k = &o->kd[i];

			switch (kd_classify(k, why, sizeof(why))) {
			case KD_OURS_RUNNING:
				if (kd_stop(k, o->apply))
					fprintf(stderr, "memregctl: damon: %s\n", mr_last_error());
				break;
			case KD_OURS_STOPPED:
				break;
			default:
				all_ours = false;
				fprintf(stderr, "memregctl: damon: kdamond %u %s: left as it is\n",
					k->index, why);
			}
		}
		if (all_ours && !nr_is_ours(o, why, sizeof(why))) {
			all_ours = false;
			fprintf(stderr, "memregctl: damon: %s\n", why);
		}
		if (!all_ours)
			fprintf(stderr, "memregctl: damon: nr_kdamonds left as it is\n");
		else if (reset_nr(o->apply))
			fprintf(stderr, "memregctl: damon: %s\n", mr_last_error());
		o->claimed = false;
	}
	owner_remove(o);
}

/* ---------------------------------------------------------------- damon-reset */

static void describe(char *buf, size_t len, const struct mr_mon_damon_kdamond *k)
{
	char thread[32], target[48] = "";

	if (k->pid)
		snprintf(thread, sizeof(thread), "thread %ld", (long)k->pid);
	else
		snprintf(thread, sizeof(thread), "thread not recorded");
	if (!strcmp(k->ops, "vaddr"))
		snprintf(target, sizeof(target), " of pid %ld", (long)k->target_pid);
	snprintf(buf, len, "kdamond %u (%s, %s%s)", k->index, thread, k->ops, target);
}

int mr_mon_damon_reset(bool apply, FILE *out)
{
	struct mr_mon_damon_owner o;
	char why[200], what[160];
	bool keep_file = false, all_ours = true;
	unsigned i, left = 0;
	int err, n;

	err = mr_mon_damon_owner_read(&o);
	if (err == -ENOENT) {
		fprintf(out, "no ownership marker (%s): no kdamond of memreg's to reset\n",
			MR_DAMON_OWNER_FILE);
		n = mr_mon_damon_tracefs_remove_stale(apply, out);
		if (n < 0)
			return mr_error(-EIO, "damon-reset: a tracefs instance could not be removed");
		if (!apply && n)
			fprintf(out, "nothing changed: pass --apply to do it\n");
		return 0;
	}
	if (err)
		return err;
	o.apply = apply;
	if (mr_proc_same(o.pid, o.starttime_ticks) == 0)
		return mr_error(-EBUSY, "memreg pid %ld still runs and owns DAMON (%s); it resets "
				"DAMON itself when it ends: stop it (kill %ld) rather than resetting "
				"under it", (long)o.pid, MR_DAMON_OWNER_FILE, (long)o.pid);
	fprintf(out, "%s: memreg pid %ld is gone\n", MR_DAMON_OWNER_FILE, (long)o.pid);
	for (i = 0; i < o.nr_kdamonds; i++) {
		const struct mr_mon_damon_kdamond *k = &o.kd[i];

		describe(what, sizeof(what), k);
		switch (kd_classify(k, why, sizeof(why))) {
		case KD_OURS_RUNNING:
			if (!apply) {
				fprintf(out, "%s: memreg's, running: would stop it\n", what);
			} else if ((err = kd_stop(k, true))) {
				return err;
			} else {
				fprintf(out, "%s: memreg's: stopped\n", what);
			}
			break;
		case KD_OURS_STOPPED:
			fprintf(out, "%s: memreg's, stopped\n", what);
			break;
		case KD_GONE:
			all_ours = false;
			fprintf(out, "%s: %s\n", what, why);
			break;
		case KD_UNKNOWN:
			keep_file = true;
			/* fall through */
		case KD_FOREIGN:
			all_ours = false;
			left++;
			fprintf(out, "%s: %s: left as it is\n", what, why);
			break;
		}
	}
	if (o.nr_kdamonds && all_ours && !nr_is_ours(&o, why, sizeof(why))) {
		all_ours = false;
		fprintf(out, "%s\n", why);
	}
	if (!o.nr_kdamonds) {
		/* killed before its nr_kdamonds write: nothing of DAMON's is memreg's */
	} else if (!all_ours) {
		fprintf(out, "nr_kdamonds left as it is (not every kdamond there is memreg's)\n");
	} else if (!apply) {
		fprintf(out, "would set nr_kdamonds to 0\n");
	} else if ((err = reset_nr(true))) {
		return err;
	} else {
		fprintf(out, "nr_kdamonds set to 0\n");
	}
	n = mr_mon_damon_tracefs_remove_stale(apply, out);
	if (n < 0)
		return mr_error(-EIO, "damon-reset: a tracefs instance could not be removed");
	if (keep_file) {
		fprintf(out, "%s kept: it names a kdamond that may still be memreg's\n",
			MR_DAMON_OWNER_FILE);
	} else if (!apply) {
		fprintf(out, "would remove %s\n", MR_DAMON_OWNER_FILE);
	} else if ((err = mr_root_unlink(MR_DAMON_OWNER_FILE, true))) {
		return err;
	} else {
		fprintf(out, "removed %s\n", MR_DAMON_OWNER_FILE);
	}
	if (!apply)
		fprintf(out, "nothing changed: pass --apply to do it\n");
	return left ? 1 : 0;
}

/* ---------------------------------------------------------------- DAMOS schemes */

#define CTX_FMT MR_DAMON_KDAMONDS "/%u/contexts/0"
#define SCHEME_FMT CTX_FMT "/schemes/%u"

static const char *scheme_path(char *buf, size_t len, unsigned kd, unsigned idx,
			       const char *rel)
{
	return mr_pathf(buf, len, SCHEME_FMT "/%s", kd, idx, rel);
}

static int wr_u64_path(const char *path, uint64_t v, bool apply)
{
	char num[32];

	snprintf(num, sizeof(num), "%" PRIu64, v);
	return mr_root_write_str(path, num, apply);
}

/* schemes/IDX/@rel of kdamond @kd = @v */
static int wr_scheme_u64(bool apply, unsigned kd, unsigned idx, const char *rel, uint64_t v)
{
	char path[260];

	return wr_u64_path(scheme_path(path, sizeof(path), kd, idx, rel), v, apply);
}

static int wr_scheme(bool apply, unsigned kd, unsigned idx, const char *rel, const char *v)
{
	char path[260];

	return mr_root_write_str(scheme_path(path, sizeof(path), kd, idx, rel), v, apply);
}

int mr_mon_damon_write_context(unsigned kd, const char *ops, const struct mr_mon_attrs *a,
			       bool apply)
{
	char path[160], *avail = NULL, *line, *save = NULL;
	bool found = false;
	size_t len;
	int err;

	err = mr_root_write_str(kd_path(path, sizeof(path), kd, "contexts/nr_contexts"), "1",
				apply);
	if (err)
		return err;
	/* one operations set a line */
	err = mr_root_read_file(kd_path(path, sizeof(path), kd, "contexts/0/avail_operations"),
				4096, &avail, &len);
	if (err)
		return err;
	for (line = strtok_r(avail, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (!strcmp(line, ops))
			found = true;
	free(avail);
	if (!found)
		return mr_error(-ENOTSUP, "damon: operations '%s' not available here", ops);
	err = mr_root_write_str(kd_path(path, sizeof(path), kd, "contexts/0/operations"), ops,
				apply);
	/* nr_regions max before min: the kernel checks min <= max at commit, be tidy */
	{
		const struct { const char *rel; uint64_t v; } attrs[] = {
			{ "intervals/sample_us", a->sample_us },
			{ "intervals/aggr_us", a->aggr_us },
			{ "intervals/update_us", a->update_us },
			{ "nr_regions/max", a->max_nr_regions },
			{ "nr_regions/min", a->min_nr_regions },
		};
		char rel[100];
		size_t i;

		for (i = 0; !err && i < MR_ARRAY_SIZE(attrs); i++) {
			snprintf(rel, sizeof(rel), "contexts/0/monitoring_attrs/%s", attrs[i].rel);
			err = wr_u64_path(kd_path(path, sizeof(path), kd, rel), attrs[i].v, apply);
		}
	}
	return err;
}

/* Write @val to schemes/IDX/@rel and read it back: what the kernel did not take
 * either fails the write (-EINVAL) or reads back as something else. */
static int probe_write(bool apply, unsigned kd, unsigned idx, const char *rel, const char *val,
		       const char *what)
{
	char full[260], back[64];
	int err;

	scheme_path(full, sizeof(full), kd, idx, rel);
	err = mr_root_write_str(full, val, apply);
	if (err == -EINVAL)
		return mr_error(-ENOTSUP, "damon: this kernel's DAMOS does not take %s '%s' (%s "
				"refused it)", what, val, full);
	if (err)
		return err;
	err = mr_mon_damon_read_str(full, back, sizeof(back));
	if (err)
		return err;
	if (strcmp(back, val))
		return mr_error(-ENOTSUP, "damon: this kernel's DAMOS does not take %s '%s' (%s "
				"reads back '%s')", what, val, full, back);
	return 0;
}

static bool scheme_file_exists(unsigned kd, unsigned idx, const char *rel)
{
	char full[260];

	return mr_root_exists(scheme_path(full, sizeof(full), kd, idx, rel));
}

static int write_filter(bool apply, unsigned kd, unsigned idx, unsigned fi,
			const struct mr_mon_damos_filter *f)
{
	char rel[64], sub[96];
	int err;

	snprintf(rel, sizeof(rel), "filters/%u", fi);
	err = probe_write(apply, kd, idx, mr_pathf(sub, sizeof(sub), "%s/type", rel), f->type,
			  "filter type");
	if (!err && !strcmp(f->type, "memcg")) {
		mr_pathf(sub, sizeof(sub), "%s/memcg_path", rel);
		err = wr_scheme(apply, kd, idx, sub, f->memcg_path);
	}
	if (!err && !strcmp(f->type, "addr")) {
		mr_pathf(sub, sizeof(sub), "%s/addr_start", rel);
		err = wr_scheme_u64(apply, kd, idx, sub, f->addr_start);
		mr_pathf(sub, sizeof(sub), "%s/addr_end", rel);
		if (!err)
			err = wr_scheme_u64(apply, kd, idx, sub, f->addr_end);
	}
	mr_pathf(sub, sizeof(sub), "%s/matching", rel);
	if (!err)
		err = wr_scheme(apply, kd, idx, sub, f->matching ? "Y" : "N");
	/* 6.14+: 'allow' Y lets through what the filter applies to. N keeps 6.12's
	 * meaning (filter out), so one description works on both. */
	if (!err && scheme_file_exists(kd, idx, mr_pathf(sub, sizeof(sub), "%s/allow", rel)))
		err = wr_scheme(apply, kd, idx, sub, "N");
	return err;
}

int mr_mon_damon_write_scheme(unsigned kd, unsigned idx, const struct mr_mon_damos *s,
			      bool apply)
{
	char num[16];
	unsigned i;
	int err;

	err = probe_write(apply, kd, idx, "action", s->action, "action");
	if (!err && s->target_nid >= 0) {
		if (!scheme_file_exists(kd, idx, "target_nid"))
			return mr_error(-ENOTSUP, "damon: this kernel's DAMOS has no target_nid "
					"(schemes/%u/target_nid): %s needs Linux 6.11 or later",
					idx, s->action);
		err = wr_scheme_u64(apply, kd, idx, "target_nid", (uint64_t)s->target_nid);
	}
	/* once per aggregation (6.7+), as the user engine applies */
	if (!err && s->apply_interval_us && scheme_file_exists(kd, idx, "apply_interval_us"))
		err = wr_scheme_u64(apply, kd, idx, "apply_interval_us", s->apply_interval_us);
	{
		const struct { const char *rel; uint64_t v; } files[] = {
			{ "access_pattern/sz/min", s->sz_min },
			{ "access_pattern/sz/max", s->sz_max },
			{ "access_pattern/nr_accesses/min", s->nr_accesses_min },
			{ "access_pattern/nr_accesses/max", s->nr_accesses_max },
			{ "access_pattern/age/min", s->age_min },
			{ "access_pattern/age/max", s->age_max },
			{ "quotas/ms", s->quota_ms },
			{ "quotas/bytes", s->quota_bytes },
			{ "quotas/reset_interval_ms", s->quota_reset_ms },
			{ "quotas/weights/sz_permil", s->weight_sz_permil },
			{ "quotas/weights/nr_accesses_permil", s->weight_nr_accesses_permil },
			{ "quotas/weights/age_permil", s->weight_age_permil },
		};

		for (i = 0; !err && i < MR_ARRAY_SIZE(files); i++)
			err = wr_scheme_u64(apply, kd, idx, files[i].rel, files[i].v);
	}
	if (!err)
		err = probe_write(apply, kd, idx, "watermarks/metric", s->wmark_metric,
				  "watermark metric");
	if (!err && strcmp(s->wmark_metric, "none")) {
		err = wr_scheme_u64(apply, kd, idx, "watermarks/interval_us",
				    s->wmark_interval_us);
		if (!err)
			err = wr_scheme_u64(apply, kd, idx, "watermarks/high", s->wmark_high);
		if (!err)
			err = wr_scheme_u64(apply, kd, idx, "watermarks/mid", s->wmark_mid);
		if (!err)
			err = wr_scheme_u64(apply, kd, idx, "watermarks/low", s->wmark_low);
	}
	if (!err && s->nr_filters) {
		if (!scheme_file_exists(kd, idx, "filters/nr_filters"))
			return mr_error(-ENOTSUP, "damon: this kernel's DAMOS has no filters "
					"(schemes/%u/filters): they need Linux 6.3 or later", idx);
		snprintf(num, sizeof(num), "%u", s->nr_filters);
		err = wr_scheme(apply, kd, idx, "filters/nr_filters", num);
	}
	for (i = 0; !err && i < s->nr_filters; i++)
		err = write_filter(apply, kd, idx, i, &s->filters[i]);
	return err;
}

int mr_mon_damon_update_stats(unsigned kd, bool apply)
{
	return mr_mon_damon_write_state(kd, "update_schemes_stats", apply);
}

int mr_mon_damon_read_stats(unsigned kd, unsigned idx, struct mr_mon_damos_stats *st)
{
	static const char *const names[] = { "nr_tried", "sz_tried", "nr_applied", "sz_applied",
					     "qt_exceeds" };
	uint64_t *v[] = { &st->nr_tried, &st->sz_tried, &st->nr_applied, &st->sz_applied,
			  &st->qt_exceeds };
	char full[260], rel[32], buf[32];
	size_t i;
	int err;

	for (i = 0; i < MR_ARRAY_SIZE(names); i++) {
		snprintf(rel, sizeof(rel), "stats/%s", names[i]);
		err = mr_mon_damon_read_str(scheme_path(full, sizeof(full), kd, idx, rel), buf,
					    sizeof(buf));
		if (!err && mr_parse_u64(buf, v[i]))
			err = mr_error(-EINVAL, "%s: not a number: '%s'", full, buf);
		if (err)
			return err;
	}
	return 0;
}
