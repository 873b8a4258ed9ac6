# bench: sources, programs and tests of this directory.

# The bench library: statistics and table layouts (bench/stats.h), the harness,
# its outputs and suites (bench/run.h); memregctl bench is a thin layer on it.
noinst_LTLIBRARIES += libmrbench.la
libmrbench_la_SOURCES = bench/stats.c bench/stats.h \
	bench/run.c bench/run.h bench/benchfile.c bench/output.c bench/suites.c
libmrbench_la_CPPFLAGS = $(AM_CPPFLAGS) -DMR_LIBDIR='"$(libdir)"' -DMR_BINDIR='"$(bindir)"' \
	-DMR_PKGDATADIR='"$(pkgdatadir)"' -DMR_SRCDIR='"$(abs_top_srcdir)"'
libmrbench_la_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS)
libmrbench_la_LIBADD = -lm -lpthread

tools_memregctl_SOURCES += tools/cmd-bench.c

# The allocator workloads (bench/alloc-bench.sh compiles its own copy): the alloc suite
# runs this one.
noinst_PROGRAMS += bench/alloc-bench
bench_alloc_bench_SOURCES = bench/alloc-bench.c bench/alloc-workloads.h
bench_alloc_bench_CFLAGS = -O2
bench_alloc_bench_LDADD = -lpthread

# libmemreg against glibc on a saved run of bench/alloc-bench.sh, as the goals read
# it (the script runs it after its tables).
noinst_PROGRAMS += bench/alloc-goals
bench_alloc_goals_SOURCES = bench/alloc-goals.c
bench_alloc_goals_LDADD = libmrbench.la libmrcommon.la -lm

# What a purge costs, a madvise per range against process_madvise batches (by hand).
noinst_PROGRAMS += bench/purge-batch
bench_purge_batch_SOURCES = bench/purge-batch.c
bench_purge_batch_LDADD = libmrbench.la libmrcommon.la -lm

if ENABLE_TESTS
check_PROGRAMS += tests/bench/test-stats
tests_bench_test_stats_SOURCES = tests/bench/test-stats.c
tests_bench_test_stats_CFLAGS = $(MR_TEST_CFLAGS)
tests_bench_test_stats_LDADD = libmrbench.la $(MR_TEST_LDADD) -lm
check_PROGRAMS += tests/bench/test-output
tests_bench_test_output_SOURCES = tests/bench/test-output.c
tests_bench_test_output_CFLAGS = $(MR_TEST_CFLAGS)
tests_bench_test_output_LDADD = libmrbench.la $(MR_TEST_LDADD) -lm
TESTS += tests/bench/test-stats tests/bench/test-output tests/bench/bench-cli.sh tests/bench/bench-kernbench.sh
TESTS += tests/bench/alloc-goals.sh
endif
EXTRA_DIST += tests/bench/bench-cli.sh tests/bench/bench-kernbench.sh bench/gcc6.bench
EXTRA_DIST += tests/bench/alloc-goals.sh
# Pages made resident by each program of a command list, glibc against preloaded
# libraries (perf; docs/bench.md): the count of a saved run checked by hand.
if ENABLE_TESTS
TESTS += tests/bench/resident-pages.sh
endif
EXTRA_DIST += bench/resident-pages.sh tests/bench/resident-pages.sh

# Hansen's scenarios (bench/hansen.sh boots the VM lab): the guest's read benchmark,
# copied into the guest with the other tests/lab/progs.
if ENABLE_TESTS
noinst_PROGRAMS += tests/lab/progs/mr-readbench
tests_lab_progs_mr_readbench_SOURCES = tests/lab/progs/mr-readbench.c
tests_lab_progs_mr_readbench_LDADD = libmrcommon.la
endif
EXTRA_DIST += bench/hansen.sh bench/hansen-guest.sh bench/lab-live-classes.sh
if ENABLE_TESTS
TESTS += tests/bench/hansen-render.sh
endif
EXTRA_DIST += tests/bench/hansen-render.sh tests/bench/hansen-fixture.txt
