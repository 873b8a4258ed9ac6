/* The target set (see targets.h): named processes and cgroup v2 members, diffed
 * against the last read so the caller knows who joined and who left. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/proc.h"
#include "common/root.h"
#include "common/util.h"
#include "common/targets.h"

#define PROCS_MAX_BYTES (4u << 20)	/* cgroup.procs: a pid per line */

int mr_targets_add_pid(struct mr_targets *t, pid_t pid)
{
	struct mr_target *p;
	uint64_t start;
	size_t i;
	int err;

	for (i = 0; i < t->nr_pids; i++)
		if (t->pids[i].pid == pid)
			return 0;
	err = mr_proc_starttime(pid, &start);
	if (err)
		return mr_error(-ESRCH, "pid %d: no such process", (int)pid);
	p = realloc(t->pids, (t->nr_pids + 1) * sizeof(*p));
	if (!p)
		return mr_error(-ENOMEM, "out of memory");
	t->pids = p;
	t->pids[t->nr_pids++] = (struct mr_target){ pid, start, -1 };
	return 0;
}

int mr_targets_add_cgroup(struct mr_targets *t, const char *path)
{
	char file[4096], **c;
	bool *g;
	size_t n = strlen(path);

	/* one spelling per cgroup: no trailing slash */
	while (n > 1 && path[n - 1] == '/')
		n--;
	if (path[0] != '/')
		return mr_error(-EINVAL, "%s: give the cgroup's absolute path "
				"(/sys/fs/cgroup/...)", path);
	if (n + sizeof("/cgroup.controllers") > sizeof(file))
		return mr_error(-ENAMETOOLONG, "%s: path too long", path);
	snprintf(file, sizeof(file), "%.*s", (int)n, path);
	if (!mr_root_exists(file))
		return mr_error(-ENOENT, "%s: no such cgroup", file);
	/* cgroup.controllers exists in every cgroup v2 directory and in no v1 one */
	snprintf(file + n, sizeof(file) - n, "/cgroup.controllers");
	if (!mr_root_exists(file)) {
		file[n] = '\0';
		return mr_error(-ENOTSUP, "%s: not a cgroup v2 directory (no cgroup.controllers); "
				"memreg follows cgroup v2 only", file);
	}
	file[n] = '\0';
	c = realloc(t->cgroups, (t->nr_cgroups + 1) * sizeof(*c));
	if (!c)
		return mr_error(-ENOMEM, "out of memory");
	t->cgroups = c;
	g = realloc(t->cgroup_gone, (t->nr_cgroups + 1) * sizeof(*g));
	if (!g)
		return mr_error(-ENOMEM, "out of memory");
	t->cgroup_gone = g;
	t->cgroups[t->nr_cgroups] = strdup(file);
	if (!t->cgroups[t->nr_cgroups])
		return mr_error(-ENOMEM, "out of memory");
	t->cgroup_gone[t->nr_cgroups++] = false;
	return 0;
}

static int cmp_member(const void *a, const void *b)
{
	const struct mr_target *x = a, *y = b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* Add @m to @list unless its pid is there already (a process in two cgroups, or
 * named and in a cgroup, is followed once). */
static int add_member(struct mr_target **list, size_t *nr, size_t *cap,
		      const struct mr_target *m)
{
	size_t i;

	for (i = 0; i < *nr; i++)
		if ((*list)[i].pid == m->pid)
			return 0;
	if (*nr == MR_TARGETS_MAX)
		return mr_error(-E2BIG, "more than %d processes to follow", MR_TARGETS_MAX);
	if (*nr == *cap) {
		size_t c = *cap ? *cap * 2 : 16;
		struct mr_target *l = realloc(*list, c * sizeof(*l));

		if (!l)
			return mr_error(-ENOMEM, "out of memory");
		*list = l;
		*cap = c;
	}
	(*list)[(*nr)++] = *m;
	return 0;
}

/* The processes of cgroup @i now; a vanished cgroup is marked gone (no members). */
static int read_cgroup(struct mr_targets *t, size_t i, struct mr_target **list,
		       size_t *nr, size_t *cap)
{
	char file[4096], *data = NULL, *p, *end;
	int err;

	if (t->cgroup_gone[i])
		return 0;
	snprintf(file, sizeof(file), "%s/cgroup.procs", t->cgroups[i]);
	err = mr_root_read_file(file, PROCS_MAX_BYTES, &data, NULL);
	if (err == -ENOENT && !mr_root_exists(t->cgroups[i])) {
		t->cgroup_gone[i] = true;
		return 0;
	}
	if (err)
		return err;
	for (p = data; *p; p = end) {
		struct mr_target m = { .cgroup = (int)i };
		struct mr_proc_stat st;
		unsigned long v;

		while (*p == '\n' || *p == ' ')
			p++;
		if (!*p)
			break;
		errno = 0;
		v = strtoul(p, &end, 10);
		if (end == p || errno || !v || v > INT32_MAX || (*end && *end != '\n')) {
			free(data);
			return mr_error(-EINVAL, "%s: not a list of process ids", file);
		}
		m.pid = (pid_t)v;
		/* ourselves, and processes gone since the kernel listed them, are left out */
		if (m.pid == getpid() || mr_proc_stat_read(m.pid, &st) || st.state == 'Z' ||
		    st.state == 'X')
			continue;
		m.starttime_ticks = st.starttime_ticks;
		err = add_member(list, nr, cap, &m);
		if (err) {
			free(data);
			return err;
		}
	}
	free(data);
	return 0;
}

/* Is @m (pid and start time) in @list? */
static bool has_member(const struct mr_target *list, size_t nr,
		       const struct mr_target *m)
{
	size_t i;

	for (i = 0; i < nr; i++)
		if (list[i].pid == m->pid && list[i].starttime_ticks == m->starttime_ticks)
			return true;
	return false;
}

int mr_targets_update(struct mr_targets *t, struct mr_target **joined,
			  size_t *nr_joined, struct mr_target **left, size_t *nr_left)
{
	struct mr_target *now = NULL, *j = NULL, *l = NULL;
	size_t nr_now = 0, cap_now = 0, nj = 0, cj = 0, nl = 0, cl = 0, i;
	int err = 0;

	*joined = *left = NULL;
	*nr_joined = *nr_left = 0;
	for (i = 0; i < t->nr_pids && !err; i++)
		if (mr_proc_same(t->pids[i].pid, t->pids[i].starttime_ticks) == 0)
			err = add_member(&now, &nr_now, &cap_now, &t->pids[i]);
	for (i = 0; i < t->nr_cgroups && !err; i++)
		err = read_cgroup(t, i, &now, &nr_now, &cap_now);
	if (err) {
		free(now);
		return err;
	}
	if (nr_now)
		qsort(now, nr_now, sizeof(*now), cmp_member);
	for (i = 0; i < nr_now && !err; i++)
		if (!has_member(t->members, t->nr_members, &now[i]))
			err = add_member(&j, &nj, &cj, &now[i]);
	for (i = 0; i < t->nr_members && !err; i++)
		if (!has_member(now, nr_now, &t->members[i]))
			err = add_member(&l, &nl, &cl, &t->members[i]);
	if (err) {
		free(now);
		free(j);
		free(l);
		return err;
	}
	free(t->members);
	t->members = now;
	t->nr_members = nr_now;
	*joined = j;
	*nr_joined = nj;
	*left = l;
	*nr_left = nl;
	return 0;
}

bool mr_targets_open(const struct mr_targets *t)
{
	size_t i;

	for (i = 0; i < t->nr_cgroups; i++)
		if (!t->cgroup_gone[i])
			return true;
	return false;
}

const char *mr_target_text(const struct mr_targets *t, const struct mr_target *m,
			       char *buf, size_t len)
{
	if (m->cgroup >= 0 && (size_t)m->cgroup < t->nr_cgroups)
		snprintf(buf, len, "pid %d (cgroup %s)", (int)m->pid, t->cgroups[m->cgroup]);
	else
		snprintf(buf, len, "pid %d", (int)m->pid);
	return buf;
}

void mr_targets_free(struct mr_targets *t)
{
	size_t i;

	for (i = 0; i < t->nr_cgroups; i++)
		free(t->cgroups[i]);
	free(t->cgroups);
	free(t->cgroup_gone);
	free(t->pids);
	free(t->members);
	memset(t, 0, sizeof(*t));
}
