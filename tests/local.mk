# tests/: unit tests (cmocka, one program per module), fixture machines, the VM lab.
# Unit tests link libmrcommon/libmrcore; a test that injects system-call failures adds
# -Wl,--wrap=mr_sys_NAME to its LDFLAGS (see common/sys.h).
if ENABLE_TESTS
MR_TEST_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) $(JSONC_CFLAGS) $(HWLOC_CFLAGS) $(NUMA_CFLAGS)
MR_TEST_LDADD = libmrcore.la libmrcommon.la $(CMOCKA_LIBS) \
	$(JSONC_LIBS) $(HWLOC_LIBS) $(NUMA_LIBS) $(PFM_LIBS)

check_PROGRAMS += tests/unit/test-util
tests_unit_test_util_SOURCES = tests/unit/test-util.c
tests_unit_test_util_CFLAGS = $(MR_TEST_CFLAGS)
tests_unit_test_util_LDADD = $(MR_TEST_LDADD)
tests_unit_test_util_LDFLAGS = -Wl,--wrap=mr_sys_read

TESTS += tests/unit/test-util
endif

EXTRA_DIST += tests/fixtures
