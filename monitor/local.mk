# monitor/: the access monitor (core, backends, record files, reports), its
# commands, the access-pattern generator and the tests.
libmrcore_la_SOURCES += \
	monitor/monitor.h monitor/core.c monitor/maps.c monitor/backend.c \
	monitor/backend-refs.c monitor/backend-softdirty.c \
	monitor/backend-uffd.c monitor/uffd.h \
	monitor/backend-damon.c monitor/damon.h monitor/damon-sysfs.c \
	monitor/damon-tracefs.c monitor/damon-regions.c monitor/damon-trace.c \
	monitor/backend-replay.c \
	monitor/backend-perf.c monitor/perf.h \
	monitor/record.c monitor/record.h monitor/rec-place.c monitor/rec-place.h \
	monitor/report.c monitor/report.h \
	monitor/profile.c monitor/profile.h
libmrcore_la_CFLAGS += $(ZLIB_CFLAGS) $(PNG_CFLAGS)
libmrcore_la_LIBADD += $(ZLIB_LIBS) $(PNG_LIBS) -lpthread -lm

# memregctl's monitor commands (tools/local.mk, included before this file, sets the list).
tools_memregctl_SOURCES += tools/cmd-record.c tools/cmd-report.c tools/cmd-profile.c

if ENABLE_TESTS
check_PROGRAMS += tests/monitor/test-core
tests_monitor_test_core_SOURCES = tests/monitor/test-core.c
tests_monitor_test_core_CFLAGS = $(MR_TEST_CFLAGS)
tests_monitor_test_core_LDADD = $(MR_TEST_LDADD) $(ZLIB_LIBS)
TESTS += tests/monitor/test-core

check_PROGRAMS += tests/monitor/test-record
tests_monitor_test_record_SOURCES = tests/monitor/test-record.c
tests_monitor_test_record_CFLAGS = $(MR_TEST_CFLAGS) $(ZLIB_CFLAGS)
tests_monitor_test_record_LDADD = $(MR_TEST_LDADD) $(ZLIB_LIBS)
TESTS += tests/monitor/test-record

check_PROGRAMS += tests/monitor/test-report-regions
tests_monitor_test_report_regions_SOURCES = tests/monitor/test-report-regions.c
tests_monitor_test_report_regions_CFLAGS = $(MR_TEST_CFLAGS)
tests_monitor_test_report_regions_LDADD = $(MR_TEST_LDADD) $(ZLIB_LIBS)
tests_monitor_test_report_regions_LDFLAGS = -Wl,--wrap=mr_sys_pread
TESTS += tests/monitor/test-report-regions

check_PROGRAMS += tests/monitor/test-rec-place
tests_monitor_test_rec_place_SOURCES = tests/monitor/test-rec-place.c
tests_monitor_test_rec_place_CFLAGS = $(MR_TEST_CFLAGS)
tests_monitor_test_rec_place_LDADD = $(MR_TEST_LDADD) $(ZLIB_LIBS)
tests_monitor_test_rec_place_LDFLAGS = -Wl,--wrap=mr_sys_pread
TESTS += tests/monitor/test-rec-place

check_PROGRAMS += tests/monitor/test-damon
tests_monitor_test_damon_SOURCES = tests/monitor/test-damon.c
tests_monitor_test_damon_CFLAGS = $(MR_TEST_CFLAGS)
tests_monitor_test_damon_LDADD = $(MR_TEST_LDADD) $(ZLIB_LIBS)
tests_monitor_test_damon_LDFLAGS = -Wl,--wrap=mr_root_write_str -Wl,--wrap=mr_sys_write \
	-Wl,--wrap=mr_root_may_change \
	-Wl,--wrap=mr_root_write_file -Wl,--wrap=mr_root_unlink -Wl,--wrap=mr_root_mkdir \
	-Wl,--wrap=mr_root_rmdir
TESTS += tests/monitor/test-damon

check_PROGRAMS += tests/monitor/test-damon-trace
tests_monitor_test_damon_trace_SOURCES = tests/monitor/test-damon-trace.c
tests_monitor_test_damon_trace_CFLAGS = $(MR_TEST_CFLAGS)
tests_monitor_test_damon_trace_LDADD = $(MR_TEST_LDADD) $(ZLIB_LIBS)
TESTS += tests/monitor/test-damon-trace
TESTS += tests/monitor/damon-reset-cli.sh

check_PROGRAMS += tests/monitor/test-backends
tests_monitor_test_backends_SOURCES = tests/monitor/test-backends.c
tests_monitor_test_backends_CFLAGS = $(MR_TEST_CFLAGS)
tests_monitor_test_backends_LDADD = $(MR_TEST_LDADD) $(ZLIB_LIBS)
TESTS += tests/monitor/test-backends

check_PROGRAMS += tests/monitor/test-perf
tests_monitor_test_perf_SOURCES = tests/monitor/test-perf.c
tests_monitor_test_perf_CFLAGS = $(MR_TEST_CFLAGS)
tests_monitor_test_perf_LDADD = $(MR_TEST_LDADD) $(ZLIB_LIBS)
TESTS += tests/monitor/test-perf
EXTRA_DIST += tests/monitor/perf-samples.hex tests/monitor/gen-perf-samples.sh

check_PROGRAMS += tests/monitor/test-report
tests_monitor_test_report_SOURCES = tests/monitor/test-report.c
tests_monitor_test_report_CFLAGS = $(MR_TEST_CFLAGS) $(PNG_CFLAGS)
tests_monitor_test_report_LDADD = $(MR_TEST_LDADD) $(PNG_LIBS)
TESTS += tests/monitor/test-report

check_PROGRAMS += tests/monitor/mk-phys-record
tests_monitor_mk_phys_record_SOURCES = tests/monitor/mk-phys-record.c
tests_monitor_mk_phys_record_LDADD = libmrcore.la libmrcommon.la $(ZLIB_LIBS)

check_PROGRAMS += tests/monitor/test-profile
tests_monitor_test_profile_SOURCES = tests/monitor/test-profile.c
tests_monitor_test_profile_CFLAGS = $(MR_TEST_CFLAGS)
tests_monitor_test_profile_LDADD = $(MR_TEST_LDADD) $(ZLIB_LIBS) -lm
TESTS += tests/monitor/test-profile
check_PROGRAMS += tests/monitor/profile-prog
tests_monitor_profile_prog_SOURCES = tests/monitor/profile-prog.c
tests_monitor_profile_prog_CFLAGS = $(AM_CFLAGS) -fno-builtin
tests_monitor_profile_prog_LDADD =
TESTS += tests/monitor/profile-e2e.sh

TESTS += tests/monitor/record-cli.sh tests/monitor/record-safety.sh \
	tests/monitor/record-cgroup.sh \
	tests/monitor/report-regions.sh \
	tests/monitor/report-heatmap.sh \
	tests/monitor/report-regions-process.sh \
	tests/monitor/report-regions-live.sh \
	tests/monitor/wss-stairs.sh tests/monitor/wss-zigzag.sh
EXTRA_DIST += tests/monitor/wss-lib.sh tests/monitor/wait-lib.sh tests/monitor/fuzz \
	tests/monitor/record-v1.rec tests/monitor/record-v1.README
endif

# The access-pattern generator and its shipped configs (in the lab guest too).
bin_PROGRAMS += monitor/memreg-accessgen
monitor_memreg_accessgen_SOURCES = monitor/accessgen.c
monitor_memreg_accessgen_CPPFLAGS = $(AM_CPPFLAGS) -DMR_PKGDATADIR='"$(pkgdatadir)"'
monitor_memreg_accessgen_LDADD = libmrcommon.la
accessgenconfigdir = $(pkgdatadir)/configs
dist_accessgenconfig_DATA = monitor/configs/stairs monitor/configs/zigzag

EXTRA_DIST += docs/monitor.md docs/img tests/lab/guest/monitor bench/profile-hotset.sh

# The overhead benchmark, installed so the lab guest can run it too.
monbenchdir = $(pkgdatadir)/bench
dist_monbench_SCRIPTS = bench/mon-overhead.sh
