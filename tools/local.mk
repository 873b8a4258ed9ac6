# tools/: memregctl (one binary, tools/commands.h is its table; one file per command).
bin_PROGRAMS += tools/memregctl
tools_memregctl_SOURCES = \
	tools/memregctl.c tools/cli.h tools/commands.h \
	tools/cmd-regions.c
tools_memregctl_SOURCES += tools/cmd-damon-reset.c
tools_memregctl_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS) $(HWLOC_CFLAGS) $(NUMA_CFLAGS)
tools_memregctl_LDADD = libmrbench.la libmrcontrol.la libmrcore.la libmrcommon.la \
	$(JSONC_LIBS) $(HWLOC_LIBS) $(NUMA_LIBS) $(PFM_LIBS)
