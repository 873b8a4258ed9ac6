# regions/: the region map (discovery sources, MPST parser, occupancy) and the
# placement primitives. Part of libmrcore.la, which memregctl, memregd and the tests link.
noinst_LTLIBRARIES += libmrcore.la
libmrcore_la_SOURCES = \
	regions/region.c regions/region.h
libmrcore_la_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS) $(HWLOC_CFLAGS) $(NUMA_CFLAGS)
libmrcore_la_LIBADD = libmrcommon.la $(JSONC_LIBS) $(HWLOC_LIBS) $(NUMA_LIBS) $(PFM_LIBS)
