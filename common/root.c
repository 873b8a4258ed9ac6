/* The root-directory layer (see root.h for the contract). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/root.h"
#include "common/sys.h"

static char mr_root_dir[PATH_MAX] = "/";

int mr_root_set(const char *dir)
{
	struct stat st;
	size_t n;

	/* An empty root is a mistake (an unset shell variable in --root "$FIX"), never
	 * "the live machine": falling back to "/" would turn a fixture run into one
	 * that can change this machine. */
	if (dir && !*dir)
		return mr_error(-EINVAL, "--root: empty directory name (use --root / for this machine)");
	if (!dir) {
		dir = getenv("MEMREG_ROOT");
		if (dir && !*dir)
			return mr_error(-EINVAL, "MEMREG_ROOT is set but empty (unset it, or set it "
					"to / for this machine)");
	}
	if (!dir)
		dir = "/";
	if (stat(dir, &st) < 0)
		return mr_error(-errno, "root %s: %s", dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return mr_error(-ENOTDIR, "root %s: not a directory", dir);
	n = strlen(dir);
	if (n >= sizeof(mr_root_dir))
		return mr_error(-ENAMETOOLONG, "root %s: path too long", dir);
	memcpy(mr_root_dir, dir, n + 1);
	/* "DIR/" and "DIR" name the same root; "/" stays "/". */
	while (n > 1 && mr_root_dir[n - 1] == '/')
		mr_root_dir[--n] = '\0';
	return 0;
}

const char *mr_root_get(void)
{
	return mr_root_dir;
}

bool mr_root_is_fixture(void)
{
	return strcmp(mr_root_dir, "/") != 0;
}

int mr_root_path(char *buf, size_t len, const char *linux_path)
{
	int n;

	if (!mr_root_is_fixture())
		n = snprintf(buf, len, "%s", linux_path);
	else
		n = snprintf(buf, len, "%s%s%s", mr_root_dir,
			     linux_path[0] == '/' ? "" : "/", linux_path);
	if (n < 0 || (size_t)n >= len)
		return mr_error(-ENAMETOOLONG, "%s: path too long", linux_path);
	return 0;
}

const char *mr_pathf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len)
		buf[0] = '\0';	/* an empty path fails every later open cleanly */
	return buf;
}

static bool is_write(int flags)
{
	return (flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC | O_APPEND));
}

int mr_root_open(const char *linux_path, int flags)
{
	char path[PATH_MAX];
	int fd, ret;

	if (is_write(flags) && mr_root_is_fixture())
		return mr_error(-EROFS, "%s: refusing to write under fixture root %s",
				linux_path, mr_root_dir);
	ret = mr_root_path(path, sizeof(path), linux_path);
	if (ret)
		return ret;
	fd = mr_sys_open(path, flags, 0);
	if (fd < 0)
		return mr_error(-errno, "%s: %s", path, strerror(errno));
	return fd;
}

FILE *mr_root_fopen(const char *linux_path, const char *mode)
{
	char path[PATH_MAX];
	FILE *f;

	if (strpbrk(mode, "wa+") && mr_root_is_fixture()) {
		mr_error(-EROFS, "%s: refusing to write under fixture root %s",
			 linux_path, mr_root_dir);
		errno = EROFS;
		return NULL;
	}
	if (mr_root_path(path, sizeof(path), linux_path)) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	f = fopen(path, mode);
	if (!f)
		mr_error(-errno, "%s: %s", path, strerror(errno));
	return f;
}

DIR *mr_root_opendir(const char *linux_path)
{
	char path[PATH_MAX];
	DIR *d;

	if (mr_root_path(path, sizeof(path), linux_path)) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	d = opendir(path);
	if (!d)
		mr_error(-errno, "%s: %s", path, strerror(errno));
	return d;
}

bool mr_root_exists(const char *linux_path)
{
	char path[PATH_MAX];

	return mr_root_path(path, sizeof(path), linux_path) == 0 && access(path, F_OK) == 0;
}

/* Read @fd to its end into a NUL-terminated buffer; @name for messages. */
static int read_fd(int fd, const char *name, size_t max_bytes, char **data, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *buf, *nbuf;
	ssize_t r;

	buf = malloc(cap + 1);
	if (!buf)
		return mr_error(-ENOMEM, "%s: out of memory", name);
	for (;;) {
		if (n == cap) {
			if (cap >= max_bytes) {
				free(buf);
				return mr_error(-EFBIG, "%s: larger than %zu bytes", name, max_bytes);
			}
			cap = cap * 2 > max_bytes ? max_bytes : cap * 2;
			nbuf = realloc(buf, cap + 1);
			if (!nbuf) {
				free(buf);
				return mr_error(-ENOMEM, "%s: out of memory", name);
			}
			buf = nbuf;
		}
		r = mr_sys_read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int err = errno;

			free(buf);
			return mr_error(-err, "%s: read: %s", name, strerror(err));
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	*data = buf;
	if (len)
		*len = n;
	return 0;
}

int mr_root_read_file(const char *linux_path, size_t max_bytes, char **data, size_t *len)
{
	int fd, ret;

	fd = mr_root_open(linux_path, O_RDONLY);
	if (fd < 0)
		return fd;
	ret = read_fd(fd, linux_path, max_bytes, data, len);
	mr_sys_close(fd);
	return ret;
}

int mr_read_host_file(const char *path, size_t max_bytes, char **data, size_t *len)
{
	int fd, ret;

	fd = mr_sys_open(path, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return mr_error(-errno, "%s: %s", path, strerror(errno));
	ret = read_fd(fd, path, max_bytes, data, len);
	mr_sys_close(fd);
	return ret;
}

int mr_root_read_str(const char *linux_path, char *buf, size_t len)
{
	char *data, *nl;
	size_t n;
	int ret;

	ret = mr_root_read_file(linux_path, 1 << 20, &data, &n);
	if (ret)
		return ret;
	nl = strchr(data, '\n');
	if (nl)
		*nl = '\0';
	n = strlen(data);
	while (n && (data[n - 1] == ' ' || data[n - 1] == '\t' || data[n - 1] == '\r'))
		data[--n] = '\0';
	if (n >= len) {
		free(data);
		return mr_error(-EOVERFLOW, "%s: line longer than %zu bytes", linux_path, len);
	}
	memcpy(buf, data, n + 1);
	free(data);
	return 0;
}

int mr_root_read_u64(const char *linux_path, uint64_t *val)
{
	char buf[64];
	int ret;

	ret = mr_root_read_str(linux_path, buf, sizeof(buf));
	if (ret)
		return ret;
	ret = mr_parse_u64(buf, val);
	if (ret)
		return mr_error(ret, "%s: not a number: \"%s\"", linux_path, buf);
	return 0;
}

long mr_root_pread(int fd, void *buf, size_t len, uint64_t off)
{
	ssize_t r;

	if (off > (uint64_t)LLONG_MAX)
		return -EOVERFLOW;
	do
		r = mr_sys_pread(fd, buf, len, (off_t)off);
	while (r < 0 && errno == EINTR);
	return r < 0 ? -errno : r;
}

int mr_root_may_change(const char *what, bool apply)
{
	if (mr_root_is_fixture())
		return mr_error(-EROFS, "refusing to %s under fixture root %s", what, mr_root_dir);
	if (!apply)
		return mr_error(-EPERM, "did not %s: it changes the kernel's state; pass --apply "
				"to do it", what);
	return 0;
}

/* The guard for "@verb @linux_path", then (with @path) the host path to change. */
static int may_change_path(const char *verb, const char *linux_path, bool apply, char *path,
			   size_t len)
{
	char what[PATH_MAX + 16];
	int ret;

	snprintf(what, sizeof(what), "%s %s", verb, linux_path);
	ret = mr_root_may_change(what, apply);
	if (ret || !path)
		return ret;
	return mr_root_path(path, len, linux_path);
}

int mr_root_write_str(const char *linux_path, const char *s, bool apply)
{
	size_t n = strlen(s), done = 0;
	ssize_t r;
	int fd, ret;

	ret = may_change_path("write", linux_path, apply, NULL, 0);
	if (ret)
		return ret;
	fd = mr_root_open(linux_path, O_WRONLY);
	if (fd < 0)
		return fd;
	while (done < n) {
		r = mr_sys_write(fd, s + done, n - done);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int err = errno;

			mr_sys_close(fd);
			return mr_error(-err, "%s: write \"%s\": %s", linux_path, s, strerror(err));
		}
		done += (size_t)r;
	}
	if (mr_sys_close(fd) < 0)
		return mr_error(-errno, "%s: write \"%s\": %s", linux_path, s, strerror(errno));
	return 0;
}

static int dir_op(const char *linux_path, bool apply, bool make)
{
	char path[PATH_MAX];
	int ret;

	ret = may_change_path(make ? "create" : "remove", linux_path, apply, path, sizeof(path));
	if (ret)
		return ret;
	if ((make ? mkdir(path, 0755) : rmdir(path)) < 0)
		return mr_error(-errno, "%s: %s: %s", path, make ? "mkdir" : "rmdir",
				strerror(errno));
	return 0;
}

int mr_root_mkdir(const char *linux_path, bool apply)
{
	return dir_op(linux_path, apply, true);
}

int mr_root_rmdir(const char *linux_path, bool apply)
{
	return dir_op(linux_path, apply, false);
}

int mr_root_write_file(const char *linux_path, const char *data, size_t len, bool apply)
{
	char path[PATH_MAX], tmp[PATH_MAX + 32];
	size_t done = 0;
	int fd, ret;

	ret = may_change_path("write", linux_path, apply, path, sizeof(path));
	if (ret)
		return ret;
	/* per process: two writers never share a temporary */
	snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)getpid());
	fd = mr_sys_open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return mr_error(-errno, "%s: %s", tmp, strerror(errno));
	while (done < len) {
		ssize_t r = mr_sys_write(fd, data + done, len - done);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		done += (size_t)r;
	}
	if (done < len || fsync(fd) < 0) {
		ret = mr_error(-errno, "%s: write: %s", tmp, strerror(errno));
		mr_sys_close(fd);
		unlink(tmp);
		return ret;
	}
	if (mr_sys_close(fd) < 0 || rename(tmp, path) < 0) {
		ret = mr_error(-errno, "%s: %s", path, strerror(errno));
		unlink(tmp);
		return ret;
	}
	return 0;
}

int mr_root_unlink(const char *linux_path, bool apply)
{
	char path[PATH_MAX];
	int ret;

	ret = may_change_path("remove", linux_path, apply, path, sizeof(path));
	if (ret)
		return ret;
	if (unlink(path) < 0)
		return mr_error(-errno, "%s: %s", path, strerror(errno));
	return 0;
}
