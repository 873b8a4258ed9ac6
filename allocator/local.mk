# allocator/: libmemreg.so, the region-aware LD_PRELOAD allocator. It links nothing
# but libc (start-up cost): no libmrcore, json-c or hwloc.
lib_LTLIBRARIES += libmemreg.la
include_HEADERS += include/memreg.h
# The layers, top to bottom, each calling only those below (docs/allocator.md,
# "Layers"; tests/alloc/layers.sh checks it): the front end, start-up, thread caches,
# large spans, the first-fit heap, sites, the page heap (heap.c, stats.c, buddy.c), the OS; the base.
libmemreg_la_SOURCES = \
	allocator/interpose.c allocator/hotcold.c \
	allocator/init.h allocator/init.c \
	allocator/start.h allocator/start.c \
	allocator/tcache.h allocator/tcache.c \
	allocator/large.h allocator/large.c \
	allocator/fit.h allocator/fit.c \
	allocator/sites.h allocator/sites.c \
	allocator/heap.h allocator/heap.c \
	allocator/stats.h allocator/stats.c \
	allocator/buddy.h allocator/buddy.c \
	allocator/os.h allocator/os.c \
	allocator/internal.h allocator/bitmap.h allocator/stats-format.h allocator/classes-format.h \
	allocator/sizeclass.c allocator/options.c allocator/fmt.c
libmemreg_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden -fno-semantic-interposition \
	-fno-builtin-malloc -fno-builtin-free -fno-builtin-calloc -fno-builtin-realloc \
	-ftls-model=initial-exec -O2 -fdata-sections
# libmemreg.so.1 (-version-info current:revision:age; the SONAME is current - age):
# bump current and age for added interfaces, current only (age 0) for removed ones.
# -fdata-sections and --sort-section=alignment: every process touches the library's
# small variables (flags, locks' words, pointers, the free key), spread in link order
# between page-aligned and big arrays over 8 pages of BSS; each variable in a section
# of its own, sorted by alignment, they share the last pages (one page fault, one
# copy after fork, for each page less).
# -z now: the libc functions it calls bound at load, its GOT then read-only (full
# RELRO). Bound lazily, the first call of each ran the resolver in whichever process
# made it: a shell's forked child freeing before its parent had called free took
# about 11 page faults more (the resolver's code and stack, libc's and the shell's
# symbol tables, a copy of the GOT's page), the kernel build's check-local-export
# children 37 against glibc's 26 (docs/allocator.md, "Bound at load").
libmemreg_la_LDFLAGS = -version-info 1:0:0 -shared \
	-Wl,--version-script=$(top_srcdir)/allocator/libmemreg.map -Wl,-z,nodelete -Wl,--as-needed \
	-Wl,--sort-section=alignment -Wl,-z,now
libmemreg_la_LIBADD =
EXTRA_DIST += allocator/libmemreg.map

# pkg-config: `pkg-config --cflags --libs memreg` for memreg.h and -lmemreg.
pkgconfigdir = $(libdir)/pkgconfig
pkgconfig_DATA = allocator/memreg.pc
allocator/memreg.pc: allocator/memreg.pc.in Makefile
	@mkdir -p allocator
	$(AM_V_GEN)sed -e 's|@prefix[@]|$(prefix)|g' -e 's|@exec_prefix[@]|$(exec_prefix)|g' \
		-e 's|@libdir[@]|$(libdir)|g' -e 's|@includedir[@]|$(includedir)|g' \
		-e 's|@VERSION[@]|$(PACKAGE_VERSION)|g' $(srcdir)/allocator/memreg.pc.in >$@
EXTRA_DIST += allocator/memreg.pc.in
CLEANFILES += allocator/memreg.pc

# Tests: cmocka unit tests of the internals (sources compiled in, no preload), the
# stress programs and real programs under LD_PRELOAD (tests/alloc/*.sh).
if ENABLE_TESTS
MR_ALLOC_TEST_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
check_PROGRAMS += tests/alloc/test-buddy tests/alloc/test-sizeclass tests/alloc/test-options
tests_alloc_test_buddy_SOURCES = tests/alloc/test-buddy.c allocator/buddy.c allocator/sizeclass.c
tests_alloc_test_buddy_CFLAGS = $(MR_ALLOC_TEST_CFLAGS)
tests_alloc_test_buddy_LDADD = $(CMOCKA_LIBS)
tests_alloc_test_sizeclass_SOURCES = tests/alloc/test-sizeclass.c allocator/sizeclass.c
tests_alloc_test_sizeclass_CFLAGS = $(MR_ALLOC_TEST_CFLAGS)
tests_alloc_test_sizeclass_LDADD = $(CMOCKA_LIBS)
tests_alloc_test_options_SOURCES = tests/alloc/test-options.c allocator/options.c allocator/fmt.c
tests_alloc_test_options_CFLAGS = $(MR_ALLOC_TEST_CFLAGS)
tests_alloc_test_options_LDADD = $(CMOCKA_LIBS)
check_PROGRAMS += tests/alloc/test-os
tests_alloc_test_os_SOURCES = tests/alloc/test-os.c tests/alloc/self-status.h allocator/os.c \
	allocator/options.c allocator/fmt.c
tests_alloc_test_os_CFLAGS = $(MR_ALLOC_TEST_CFLAGS)
tests_alloc_test_os_LDADD = $(CMOCKA_LIBS)
TESTS += tests/alloc/test-buddy tests/alloc/test-sizeclass tests/alloc/test-options \
	tests/alloc/test-os

check_PROGRAMS += tests/alloc/stress
tests_alloc_stress_SOURCES = tests/alloc/stress.c
tests_alloc_stress_CFLAGS = $(AM_CFLAGS) -fno-builtin
tests_alloc_stress_LDADD =
check_PROGRAMS += tests/alloc/safety
tests_alloc_safety_SOURCES = tests/alloc/safety.c
tests_alloc_safety_CFLAGS = $(AM_CFLAGS) -fno-builtin
tests_alloc_safety_LDADD = -ldl -lpthread
check_PROGRAMS += tests/alloc/memory
tests_alloc_memory_SOURCES = tests/alloc/memory.c tests/alloc/self-status.h
tests_alloc_memory_CFLAGS = $(AM_CFLAGS) -fno-builtin
tests_alloc_memory_LDADD = -ldl -lpthread
check_PROGRAMS += tests/alloc/sites-prog
tests_alloc_sites_prog_SOURCES = tests/alloc/sites-prog.c
tests_alloc_sites_prog_CFLAGS = $(AM_CFLAGS) -fno-builtin
tests_alloc_sites_prog_LDADD =
check_PROGRAMS += tests/alloc/packing
tests_alloc_packing_SOURCES = tests/alloc/packing.c bench/alloc-workloads.h tests/alloc/self-status.h
tests_alloc_packing_CFLAGS = $(AM_CFLAGS) -fno-builtin
tests_alloc_packing_LDADD = -ldl -lpthread
check_PROGRAMS += tests/alloc/start-heap
tests_alloc_start_heap_SOURCES = tests/alloc/start-heap.c
tests_alloc_start_heap_CFLAGS = $(AM_CFLAGS) -fno-builtin
tests_alloc_start_heap_LDADD = -ldl -lpthread
check_PROGRAMS += tests/alloc/fit
tests_alloc_fit_SOURCES = tests/alloc/fit.c
tests_alloc_fit_CFLAGS = $(AM_CFLAGS) -fno-builtin
tests_alloc_fit_LDADD = -ldl -lpthread
check_PROGRAMS += tests/alloc/resident
tests_alloc_resident_SOURCES = tests/alloc/resident.c
tests_alloc_resident_CFLAGS = $(AM_CFLAGS) -fno-builtin
tests_alloc_resident_LDADD = -lpthread
# fork during the set-up: the allocator compiled in under mrz_* names (threads before
# its first allocation), mmap wrapped to stage the window (tests/alloc/fork-init.c).
check_PROGRAMS += tests/alloc/fork-init
tests_alloc_fork_init_SOURCES = tests/alloc/fork-init.c $(MR_ALLOC_CORE_SRCS)
tests_alloc_fork_init_CPPFLAGS = $(AM_CPPFLAGS) $(MR_FUZZ_RENAME)
tests_alloc_fork_init_CFLAGS = $(AM_CFLAGS) -fno-builtin -ftls-model=initial-exec
tests_alloc_fork_init_LDFLAGS = -Wl,--wrap=mmap
tests_alloc_fork_init_LDADD = -lpthread
TESTS += tests/alloc/fork-init
TESTS += tests/alloc/stress.sh tests/alloc/safety.sh tests/alloc/packing.sh tests/alloc/sites.sh tests/alloc/alloc-stats.sh tests/alloc/realprog-tools.sh \
	tests/alloc/realprog-python.sh tests/alloc/memory.sh tests/alloc/packaging.sh tests/alloc/layers.sh \
	tests/alloc/resident.sh tests/alloc/start-heap.sh tests/alloc/fit.sh
endif
EXTRA_DIST += tests/alloc/preload.sh tests/alloc/stress.sh tests/alloc/safety.sh tests/alloc/packing.sh tests/alloc/sites.sh tests/alloc/alloc-stats.sh tests/alloc/realprog-tools.sh \
	tests/alloc/realprog-python.sh tests/alloc/memory.sh tests/alloc/packaging.sh tests/alloc/api-prog.c \
	tests/alloc/layers.sh tests/alloc/resident.sh tests/alloc/start-heap.sh tests/alloc/fit.sh

tools_memregctl_SOURCES += tools/cmd-alloc-stats.c

# `make fuzz`: the libFuzzer target (ASan + UBSan) on the allocator's entry points,
# compiled in under mrz_* names so they do not replace the sanitizer's malloc.
# Run: tests/alloc/fuzz-alloc -max_total_time=600 CORPUS_DIR
MR_FUZZ_RENAME = -DMR_NO_ALIASES -Dmalloc=mrz_malloc -Dfree=mrz_free -Dcalloc=mrz_calloc \
	-Drealloc=mrz_realloc -Dreallocarray=mrz_reallocarray \
	-Dposix_memalign=mrz_posix_memalign -Daligned_alloc=mrz_aligned_alloc \
	-Dmemalign=mrz_memalign -Dvalloc=mrz_valloc -Dpvalloc=mrz_pvalloc \
	-Dmalloc_usable_size=mrz_malloc_usable_size -Dmalloc_trim=mrz_malloc_trim \
	-Dcfree=mrz_cfree -Dfree_sized=mrz_free_sized -Dfree_aligned_sized=mrz_free_aligned_sized
MR_ALLOC_CORE_SRCS = allocator/interpose.c allocator/init.c allocator/start.c allocator/tcache.c \
	allocator/large.c allocator/fit.c allocator/sites.c allocator/heap.c allocator/stats.c allocator/buddy.c \
	allocator/os.c allocator/sizeclass.c allocator/options.c allocator/fmt.c
EXTRA_DIST += tests/alloc/fuzz-alloc.c
if HAVE_CLANG
tests/alloc/fuzz-alloc: $(MR_ALLOC_CORE_SRCS:%=$(srcdir)/%) $(srcdir)/tests/alloc/fuzz-alloc.c
	@mkdir -p tests/alloc
	$(AM_V_CC)$(CLANG) -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
		$(MR_FUZZ_RENAME) $(DEFS) $(AM_CPPFLAGS) -o $@ $^ -lpthread -ldl
fuzz: tests/alloc/fuzz-alloc
CLEANFILES += tests/alloc/fuzz-alloc
endif
.PHONY: fuzz

# Sanitizer builds of the allocator's tests (UBSan, ASan, TSan): see tests/alloc/sanitize.sh.
check-alloc-sanitizers: all
	CLANG='$(CLANG)' MR_FUZZ_RENAME='$(MR_FUZZ_RENAME)' MR_ALLOC_CORE_SRCS='$(MR_ALLOC_CORE_SRCS)' \
		$(SHELL) $(srcdir)/tests/alloc/sanitize.sh '$(abs_top_srcdir)' '$(abs_top_builddir)'
.PHONY: check-alloc-sanitizers
EXTRA_DIST += tests/alloc/sanitize.sh

# The node mode checked physically in the VM lab (tests/lab/guest/placement/40-alloc-node.sh).
if ENABLE_TESTS
noinst_PROGRAMS += tests/lab/progs/mr-alloc-node
tests_lab_progs_mr_alloc_node_SOURCES = tests/lab/progs/mr-alloc-node.c
tests_lab_progs_mr_alloc_node_LDADD = libmrcommon.la
endif
