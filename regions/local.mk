# regions/: the region map (discovery sources, MPST parser, occupancy) and the
# placement primitives. Part of libmrcore.la, which memregctl, memregd and the tests link.
noinst_LTLIBRARIES += libmrcore.la
libmrcore_la_SOURCES = \
	regions/region.c regions/region.h \
	regions/mpst.c regions/mpst.h \
	regions/source.h regions/src-mpst.c regions/src-numa.c regions/src-blocks.c \
	regions/src-fixed.c regions/src-hwloc.c regions/occupancy.c
libmrcore_la_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS) $(HWLOC_CFLAGS) $(NUMA_CFLAGS)
libmrcore_la_LIBADD = libmrcommon.la $(JSONC_LIBS) $(HWLOC_LIBS) $(NUMA_LIBS) $(PFM_LIBS)
