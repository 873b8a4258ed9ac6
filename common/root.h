/* The root-directory layer: every read and write of /sys, /proc and /dev in memreg
 * goes through here, the way hwloc's HWLOC_FSROOT works. The root is "/" on a live
 * machine, or a directory holding a captured machine in the real Linux layout
 * (DIR/sys/firmware/acpi/tables/MPST, DIR/proc/kpageflags, ...), set with --root
 * or MEMREG_ROOT.
 *
 * A root other than "/" is a fixture: every write under it is refused with -EROFS,
 * whatever the caller asks. On "/" a write also needs the caller's explicit
 * consent (the command's --apply), so nothing changes the kernel's state by default.
 *
 * Paths given to these functions are absolute Linux paths ("/sys/..."); functions
 * return 0 or a negative errno and set mr_error() with the path in the message. */
#ifndef MR_COMMON_ROOT_H
#define MR_COMMON_ROOT_H

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/util.h"

/* "root.c" */

/* Set the root (NULL: MEMREG_ROOT from the environment, else "/"). The directory
 * must exist. An empty name (--root '' or MEMREG_ROOT=) is -EINVAL, never the live
 * machine. Returns 0, or -errno with mr_error set. */
int mr_root_set(const char *dir);
/* The root as given ("/" on a live machine), never NULL. */
const char *mr_root_get(void);
/* True when the root is not "/": a captured machine, never written. */
bool mr_root_is_fixture(void);

/* The host path of a Linux path: "/sys/x" -> "DIR/sys/x". -ENAMETOOLONG if it does not fit. */
int mr_root_path(char *buf, size_t len, const char *linux_path);

int mr_root_open(const char *linux_path, int flags);
FILE *mr_root_fopen(const char *linux_path, const char *mode);
DIR *mr_root_opendir(const char *linux_path);
bool mr_root_exists(const char *linux_path);

/* Whole file into a NUL-terminated malloc'd buffer (@len excludes the NUL);
 * refuses files over @max_bytes with -EFBIG. */
int mr_root_read_file(const char *linux_path, size_t max_bytes, char **data, size_t *len);
/* The same for a file of this host given by the user (--mpst FILE, a record):
 * never under the root. */
int mr_read_host_file(const char *path, size_t max_bytes, char **data, size_t *len);
/* First line, trailing whitespace removed. */
int mr_root_read_str(const char *linux_path, char *buf, size_t len);
/* A decimal or 0x-hex number, the whole (trimmed) file. */
int mr_root_read_u64(const char *linux_path, uint64_t *val);
/* Bytes at @off, for binary files such as /proc/kpageflags; returns bytes read or -errno. */
long mr_root_pread(int fd, void *buf, size_t len, uint64_t off);

/*
 * The one guard of every change to the kernel's state ("may this change the
 * kernel"): -EROFS under a fixture root, whatever @apply says; -EPERM unless @apply
 * (the command's --apply, or consent such as a process memreg started itself);
 * else 0. @what is the change as a verb phrase ("change memory blocks"), for the
 * message: "refusing to change memory blocks under fixture root DIR".
 */
int mr_root_may_change(const char *what, bool apply);

/* Write @s to a file: -EROFS under a fixture root; -EPERM unless @apply (the
 * command's --apply) was given. On success the write is complete or -errno. */
int mr_root_write_str(const char *linux_path, const char *s, bool apply);

/* mkdir / rmdir of a kernel directory (a tracefs instance): refused like
 * mr_root_write_str (-EROFS under a fixture root, -EPERM without @apply). */
int mr_root_mkdir(const char *linux_path, bool apply);
int mr_root_rmdir(const char *linux_path, bool apply);

/* A whole small file (a state or marker file such as /run/memreg/damon.owner) written
 * atomically: a temporary beside it, fsync, rename over @linux_path; readers see the
 * old file or the new one. mr_root_unlink removes one (-ENOENT when absent). Both
 * are refused like mr_root_write_str (-EROFS under a fixture root, -EPERM without
 * @apply). */
int mr_root_write_file(const char *linux_path, const char *data, size_t len, bool apply);
int mr_root_unlink(const char *linux_path, bool apply);

/* printf-style path building for the functions above; returns the buffer. */
const char *mr_pathf(char *buf, size_t len, const char *fmt, ...) MR_PRINTF(3, 4);

#endif
