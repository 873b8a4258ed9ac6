# power/: DRAM energy sources (powercap, perf, msr, model), the power model and
# `memregctl energy`. Part of libmrcore.la.
libmrcore_la_SOURCES += \
	power/energy.c power/energy.h \
	power/src-powercap.c power/src-perf.c power/src-msr.c power/src-model.c \
	power/model.c power/model.h power/residency.c power/residency-record.c
tools_memregctl_SOURCES += tools/cmd-energy.c

if ENABLE_TESTS
TESTS += tests/power/energy-intel-2s.sh tests/power/energy-client.sh tests/power/energy-cli.sh \
	tests/power/energy-mpst.sh tests/power/energy-report.sh tests/power/energy-signals.sh
EXTRA_DIST += tests/power/lib.sh tests/power/mkfixtures.sh \
	tests/power/energy-intel-2s.sh tests/power/energy-client.sh tests/power/energy-cli.sh \
	tests/power/energy-mpst.sh tests/power/energy-report.sh tests/power/energy-signals.sh
endif

if ENABLE_TESTS
check_PROGRAMS += tests/power/test-energy tests/power/test-model
tests_power_test_energy_SOURCES = tests/power/test-energy.c
tests_power_test_energy_CFLAGS = $(MR_TEST_CFLAGS)
tests_power_test_energy_LDADD = $(MR_TEST_LDADD)
tests_power_test_energy_LDFLAGS = -Wl,--wrap=mr_sys_perf_event_open -Wl,--wrap=mr_sys_read \
	-Wl,--wrap=mr_sys_close -Wl,--wrap=mr_sys_open
tests_power_test_model_SOURCES = tests/power/test-model.c
tests_power_test_model_CFLAGS = $(MR_TEST_CFLAGS)
tests_power_test_model_LDADD = $(MR_TEST_LDADD)
TESTS += tests/power/test-energy tests/power/test-model
endif

EXTRA_DIST += docs/energy.md
