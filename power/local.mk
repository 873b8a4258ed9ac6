# power/: DRAM energy sources (powercap, perf, msr, model), the power model and
# `memregctl energy`. Part of libmrcore.la.
libmrcore_la_SOURCES += \
	power/energy.c power/energy.h \
	power/src-powercap.c power/src-perf.c power/src-msr.c power/src-model.c \
	power/model.c power/model.h power/residency.c
tools_memregctl_SOURCES += tools/cmd-energy.c

if ENABLE_TESTS
TESTS += tests/power/energy-intel-2s.sh tests/power/energy-client.sh tests/power/energy-cli.sh
EXTRA_DIST += tests/power/lib.sh tests/power/mkfixtures.sh \
	tests/power/energy-intel-2s.sh tests/power/energy-client.sh tests/power/energy-cli.sh
endif
