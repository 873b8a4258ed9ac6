# common/: dependency-free helpers (errors, parsing, the root-directory layer, the
# mr_sys_* wrappers). libmrcommon.la is what every other part links, the preload
# allocator included, so it must never pull in a library dependency.
noinst_LTLIBRARIES += libmrcommon.la
libmrcommon_la_SOURCES = \
	common/util.c common/util.h \
	common/root.c common/root.h \
	common/proc.c common/proc.h \
	common/sys.c common/sys.h \
	common/cgroup.c common/cgroup.h \
	common/targets.c common/targets.h
