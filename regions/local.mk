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

if ENABLE_TESTS
# Fixture machines (tests/fixtures/NAME): the checked-in text tree in the Linux layout,
# assembled in the build tree with the parts that are built, never checked in: the MPST
# compiled from NAME/mpst.asl with iasl, and vm-1node's kpageflags/kpagecount.
# `make` builds them (scripts/demo shows build/tests/fixtures/server-2s-mpst).
MR_FIXTURES = server-2s-mpst cxl-cpuless vm-1node
MR_FIXTURE_VM_PAGES = 262144
noinst_PROGRAMS += tests/fixtures/gen-kpageflags
tests_fixtures_gen_kpageflags_SOURCES = tests/fixtures/gen-kpageflags.c
BUILT_SOURCES += tests/fixtures/.roots-stamp
CLEANFILES += tests/fixtures/.roots-stamp

tests/fixtures/.roots-stamp: tests/fixtures/gen-kpageflags$(EXEEXT) \
		$(wildcard $(srcdir)/tests/fixtures/*/mpst.asl)
	$(AM_V_GEN)set -e; for f in $(MR_FIXTURES); do \
	  src=$(srcdir)/tests/fixtures/$$f; dst=tests/fixtures/$$f; \
	  mkdir -p $$dst; \
	  if [ "$$(cd $$src && pwd -P)" != "$$(cd $$dst && pwd -P)" ]; then \
	    rm -rf $$dst; mkdir -p $$dst; cp -R $$src/. $$dst/; chmod -R u+w $$dst; \
	  fi; \
	  if [ -f $$src/mpst.asl ]; then \
	    t=$$dst/sys/firmware/acpi/tables; mkdir -p $$t; \
	    $(IASL) -p $$t/MPST $$src/mpst.asl >$$t/iasl.log 2>&1 || { cat $$t/iasl.log; exit 1; }; \
	    mv $$t/MPST.aml $$t/MPST; rm -f $$t/iasl.log; \
	  fi; \
	done; \
	mkdir -p tests/fixtures/vm-1node/proc; \
	tests/fixtures/gen-kpageflags tests/fixtures/vm-1node/proc $(MR_FIXTURE_VM_PAGES); \
	touch $@

TESTS += tests/fixtures/run-fixtures.sh
update-expected: all
	MEMREG_UPDATE_EXPECTED=1 top_srcdir='$(abs_top_srcdir)' \
	  top_builddir='$(abs_top_builddir)' $(SHELL) $(srcdir)/tests/fixtures/run-fixtures.sh
.PHONY: update-expected
endif

if ENABLE_TESTS
check_PROGRAMS += tests/unit/test-mpst
tests_unit_test_mpst_SOURCES = tests/unit/test-mpst.c
tests_unit_test_mpst_CFLAGS = $(MR_TEST_CFLAGS)
tests_unit_test_mpst_LDADD = $(MR_TEST_LDADD)
TESTS += tests/unit/test-mpst
endif
