# regions/placement: where a process's pages are, moving them, memory blocks offline
# and online (part of libmrcore.la), and the memregctl commands on top of them.
libmrcore_la_SOURCES += regions/placement.h regions/pagemap.c regions/move.c regions/blocks.c
tools_memregctl_SOURCES += tools/cli-region.h tools/cli-region.c \
	tools/cmd-where.c tools/cmd-move.c tools/cmd-offline.c tools/cmd-online.c

if ENABLE_TESTS
check_PROGRAMS += tests/unit/test-placement
tests_unit_test_placement_SOURCES = tests/unit/test-placement.c
tests_unit_test_placement_CFLAGS = $(MR_TEST_CFLAGS)
tests_unit_test_placement_LDADD = $(MR_TEST_LDADD)
tests_unit_test_placement_LDFLAGS = -Wl,--wrap=mr_sys_move_pages -Wl,--wrap=mr_root_pread
TESTS += tests/unit/test-placement

# The offline state file against a fake block tree: writes only through the wrappers.
check_PROGRAMS += tests/unit/test-blockstate
tests_unit_test_blockstate_SOURCES = tests/unit/test-blockstate.c
tests_unit_test_blockstate_CFLAGS = $(MR_TEST_CFLAGS)
tests_unit_test_blockstate_LDADD = $(MR_TEST_LDADD)
tests_unit_test_blockstate_LDFLAGS = -Wl,--wrap=mr_root_may_change \
	-Wl,--wrap=mr_sys_open -Wl,--wrap=mr_sys_write
TESTS += tests/unit/test-blockstate

# Test helper programs for the lab guest (tests/lab/progs/NAME, copied into the guest).
noinst_PROGRAMS += tests/lab/progs/mr-touch
tests_lab_progs_mr_touch_SOURCES = tests/lab/progs/mr-touch.c
tests_lab_progs_mr_touch_LDADD = libmrcommon.la $(NUMA_LIBS)
endif
if ENABLE_TESTS
noinst_PROGRAMS += tests/lab/progs/mr-time
tests_lab_progs_mr_time_SOURCES = tests/lab/progs/mr-time.c
endif
EXTRA_DIST += bench/lab-move.sh bench/lab-move-guest.sh
if ENABLE_TESTS
TESTS += tests/unit/placement-cli.sh tests/unit/where-cli.sh
endif
EXTRA_DIST += tests/unit/placement-cli.sh tests/unit/where-cli.sh
if ENABLE_TESTS
noinst_PROGRAMS += tests/lab/progs/mr-runas
tests_lab_progs_mr_runas_SOURCES = tests/lab/progs/mr-runas.c
tests_lab_progs_mr_runas_LDADD = libmrcommon.la
endif
if ENABLE_TESTS
noinst_PROGRAMS += tests/lab/progs/mr-pin
tests_lab_progs_mr_pin_SOURCES = tests/lab/progs/mr-pin.c
tests_lab_progs_mr_pin_LDADD = libmrcommon.la $(NUMA_LIBS)
endif
