# bench: sources, programs and tests of this directory.

# The bench library: statistics and table layouts (bench/stats.h); memregctl bench
# and the suites build on it.
noinst_LTLIBRARIES += libmrbench.la
libmrbench_la_SOURCES = bench/stats.c bench/stats.h
libmrbench_la_LIBADD = -lm

if ENABLE_TESTS
check_PROGRAMS += tests/bench/test-stats
tests_bench_test_stats_SOURCES = tests/bench/test-stats.c
tests_bench_test_stats_CFLAGS = $(MR_TEST_CFLAGS)
tests_bench_test_stats_LDADD = libmrbench.la $(MR_TEST_LDADD) -lm
TESTS += tests/bench/test-stats
endif
