# allocator/: libmemreg.so, the region-aware LD_PRELOAD allocator. It links nothing
# but libc (start-up cost): no libmrcore, json-c or hwloc.
lib_LTLIBRARIES += libmemreg.la
include_HEADERS += include/memreg.h
libmemreg_la_SOURCES = \
	allocator/internal.h allocator/alloc.h allocator/stats-format.h \
	allocator/buddy.c allocator/sizeclass.c allocator/options.c allocator/fmt.c \
	allocator/alloc.c allocator/sites.c allocator/stats.c allocator/interpose.c \
	allocator/hotcold.c
libmemreg_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden -fno-semantic-interposition \
	-fno-builtin-malloc -fno-builtin-free -fno-builtin-calloc -fno-builtin-realloc \
	-ftls-model=initial-exec -O2
libmemreg_la_LDFLAGS = -module -avoid-version -shared \
	-Wl,--version-script=$(top_srcdir)/allocator/libmemreg.map -Wl,-z,nodelete -Wl,--as-needed
libmemreg_la_LIBADD =
EXTRA_DIST += allocator/libmemreg.map
