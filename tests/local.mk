# tests/: unit tests (cmocka, one program per module), fixture machines, the VM lab.
if ENABLE_TESTS

check_PROGRAMS += tests/unit/test-util
tests_unit_test_util_SOURCES = tests/unit/test-util.c
tests_unit_test_util_CFLAGS = $(MR_TEST_CFLAGS)
tests_unit_test_util_LDADD = $(MR_TEST_LDADD)
tests_unit_test_util_LDFLAGS = -Wl,--wrap=mr_sys_read

TESTS += tests/unit/test-util

# The target set (common/targets.c) over a fake cgroup tree.
check_PROGRAMS += tests/unit/test-targets
tests_unit_test_targets_SOURCES = tests/unit/test-targets.c
tests_unit_test_targets_CFLAGS = $(MR_TEST_CFLAGS)
tests_unit_test_targets_LDADD = $(MR_TEST_LDADD)
TESTS += tests/unit/test-targets

# The cgroup helpers (common/cgroup.c) on a fixture root.
check_PROGRAMS += tests/unit/test-cgroup
tests_unit_test_cgroup_SOURCES = tests/unit/test-cgroup.c
tests_unit_test_cgroup_CFLAGS = $(MR_TEST_CFLAGS)
tests_unit_test_cgroup_LDADD = $(MR_TEST_LDADD)
TESTS += tests/unit/test-cgroup
endif

EXTRA_DIST += tests/fixtures

# A machine without memory blocks (hwloc's captured machines, kernels without memory
# hot-plug): its own script, run from the source tree (nothing in it is built).
if ENABLE_TESTS
TESTS += tests/fixtures/numa-noblocks.sh
# scripts/lab's staging (--stage-only: no boot) with static binaries, and its error lines.
TESTS += tests/lab/stage-static.sh
endif
EXTRA_DIST += tests/lab/stage-static.sh

# The monitor's accuracy tests measure a live process's working set, which needs the
# target to get its share of a CPU; the VM lab's QEMU guests take both CPUs while they
# run. So under `make -j check` those tests wait for the lab groups.
if ENABLE_TESTS
tests/monitor/wss-stairs.log tests/monitor/wss-zigzag.log: $(MR_LAB_TESTS:.lab=.log)
endif

if ENABLE_TESTS
TESTS += tests/unit/cli-errors.sh
endif
EXTRA_DIST += tests/unit/cli-errors.sh

# The manual pages against --help (and memregctl help's command list); the bash
# completion (completion/local.mk).
if ENABLE_TESTS
TESTS += tests/unit/man-help.sh tests/unit/completion.sh
endif
EXTRA_DIST += tests/unit/man-help.sh tests/unit/completion.sh

# memregctl regions' table (units, totals, -z) against its own JSON on the fixtures.
if ENABLE_TESTS
TESTS += tests/unit/regions-table.sh
endif
EXTRA_DIST += tests/unit/regions-table.sh

# scripts/lab's one retry of a guest whose kernel died before /init (a stand-in QEMU).
if ENABLE_TESTS
TESTS += tests/unit/lab-retry.sh
endif
EXTRA_DIST += tests/unit/lab-retry.sh

# scripts/test-summary, the end of scripts/check: counts, skip reasons, exit status.
if ENABLE_TESTS
TESTS += tests/unit/check-summary.sh
endif
EXTRA_DIST += tests/unit/check-summary.sh
