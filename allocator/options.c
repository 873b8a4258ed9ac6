/* MEMREG_* options: one table (MR_OPTIONS in internal.h), read by scanning environ
 * itself so nothing allocates before the allocator is ready. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "allocator/internal.h"

struct mr_option mr_options[NR_MR_OPT] = {
#define MR_OPT_ENTRY(id, env, type, def, secure) { "MEMREG_" env, type, def, secure, def, NULL },
	MR_OPTIONS(MR_OPT_ENTRY)
#undef MR_OPT_ENTRY
};

static bool word_eq(const char *a, const char *b)
{
	for (; *a && *b; a++, b++) {
		char c = *a >= 'A' && *a <= 'Z' ? (char)(*a - 'A' + 'a') : *a;

		if (c != *b)
			return false;
	}
	return *a == *b;
}

int mr_option_parse(enum mr_opt_type type, const char *s, uint64_t *out)
{
	uint64_t v = 0, mul = 1;
	const char *p = s;

	switch (type) {
	case MR_OPT_BOOL:
		if (word_eq(s, "1") || word_eq(s, "on") || word_eq(s, "yes") || word_eq(s, "true")) {
			*out = 1;
			return 0;
		}
		if (word_eq(s, "0") || word_eq(s, "off") || word_eq(s, "no") || word_eq(s, "false")) {
			*out = 0;
			return 0;
		}
		return -1;
	case MR_OPT_PATH:
		return *s ? 0 : -1;
	case MR_OPT_SIZE:
	case MR_OPT_U64:
		if (*p < '0' || *p > '9')
			return -1;
		for (; *p >= '0' && *p <= '9'; p++) {
			if (v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
				return -1;
			v = v * 10 + (uint64_t)(*p - '0');
		}
		if (type == MR_OPT_SIZE && *p) {
			switch (*p == 'k' || *p == 'm' || *p == 'g' ? *p - 'a' + 'A' : *p) {
			case 'K': mul = UINT64_C(1) << 10; break;
			case 'M': mul = UINT64_C(1) << 20; break;
			case 'G': mul = UINT64_C(1) << 30; break;
			default: return -1;
			}
			p++;
			if (*p == 'i' && p[1] == 'B')
				p += 2;
			else if (*p == 'B')
				p++;
		}
		if (*p || v > UINT64_MAX / mul)
			return -1;
		*out = v * mul;
		return 0;
	}
	return -1;
}

/* MEMREG_* variables of memreg's tools and tests, not options of the allocator: a
 * program run under libmemreg may well have them, so they are not warned about. */
static const char *const other_vars[] = {
	"MEMREG_ROOT", "MEMREG_STATE_DIR", "MEMREG_DATADIR", "MEMREG_LIB",
	"MEMREG_BENCH_CACHE", "MEMREG_LAB_CACHE", "MEMREG_ALLOC_BENCH",
	"MEMREG_UPDATE_EXPECTED",
};

/* Whether @entry ("NAME=value") names one of @names. */
static bool named(const char *entry, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(names[i]);

		if (strncmp(entry, names[i], len) == 0 && entry[len] == '=')
			return true;
	}
	return false;
}

/* The process that read the options, and when (for mr_option_open_output). */
static long output_owner;
static struct timespec output_since;

void mr_options_load(char **envp, bool secure, void (*warn)(const char *name, const char *value))
{
	char **e;
	size_t i;

	for (i = 0; i < NR_MR_OPT; i++) {
		mr_options[i].value = mr_options[i].def;
		mr_options[i].str = NULL;
	}
	for (e = envp; e && *e; e++) {
		if (strncmp(*e, "MEMREG_", 7) != 0)
			continue;
		for (i = 0; i < NR_MR_OPT; i++) {
			struct mr_option *o = &mr_options[i];
			size_t n = strlen(o->env);
			uint64_t v;

			if (strncmp(*e, o->env, n) != 0 || (*e)[n] != '=')
				continue;
			/* A setuid program must not be steered by its caller's environment. */
			if (secure && !o->secure)
				break;
			if (mr_option_parse(o->type, *e + n + 1, &v) != 0) {
				if (warn)
					warn(o->env, *e + n + 1);
				break;
			}
			o->str = *e + n + 1;	/* what was given, for later messages */
			if (o->type != MR_OPT_PATH)
				o->value = v;
			break;
		}
		/* A misspelt option would silently do nothing: say so, once (the
		 * options are read once a process). Not in a secure process. */
		if (i == NR_MR_OPT && !secure && warn &&
		    !named(*e, other_vars, sizeof(other_vars) / sizeof(other_vars[0])))
			warn(*e, NULL);
	}
	if (MR_OPT_STR(site_map)) {
		output_owner = (long)getpid();
		clock_gettime(CLOCK_REALTIME, &output_since);
	}
}

int mr_option_open_output(const char *pattern, char *path, size_t len)
{
	long pid = (long)getpid();
	bool per_process = false;
	size_t n = 0;
	struct stat st;
	int fd;

	for (const char *p = pattern; *p; p++) {
		char piece[24] = { *p, '\0' };

		if (p[0] == '%' && p[1] == 'p') {
			mr_fmt_u64(piece, (uint64_t)pid);
			per_process = true;
			p++;
		} else if (p[0] == '%' && p[1] == '%') {
			p++;
		}
		if (n + strlen(piece) >= len) {
			errno = ENAMETOOLONG;
			return -1;
		}
		memcpy(path + n, piece, strlen(piece) + 1);
		n += strlen(piece);
	}
	if (n == 0) {
		errno = ENOENT;
		return -1;
	}
	/* One file for every process with the variable: a forked child has the
	 * parent's options and would overwrite its file. */
	if (!per_process && pid != output_owner)
		return -2;
	fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	/* Written by another process since this one started (a child that exec'd and
	 * exited first, or the parent): the first one's stays. */
	if (!per_process && st.st_size > 0 &&
	    (st.st_mtim.tv_sec > output_since.tv_sec ||
	     (st.st_mtim.tv_sec == output_since.tv_sec && st.st_mtim.tv_nsec >= output_since.tv_nsec))) {
		close(fd);
		return -2;
	}
	if ((st.st_mode & 077) && st.st_uid == geteuid())
		fchmod(fd, 0600);
	if (ftruncate(fd, 0) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}
