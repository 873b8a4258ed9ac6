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

# Every file of the source trees (GNU make): a changed fixture is re-assembled.
MR_FIXTURE_FILES = $(shell cd $(srcdir) && find $(addprefix tests/fixtures/,$(MR_FIXTURES)) \
	\( -type f -o -type l \) ! -name 'expected*' ! -name kpageflags ! -name kpagecount \
	! -name MPST 2>/dev/null)
tests/fixtures/.roots-stamp: tests/fixtures/gen-kpageflags$(EXEEXT) \
		$(addprefix $(srcdir)/,$(MR_FIXTURE_FILES))
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
endif

if ENABLE_TESTS
check_PROGRAMS += tests/unit/test-mpst
tests_unit_test_mpst_SOURCES = tests/unit/test-mpst.c
tests_unit_test_mpst_CFLAGS = $(MR_TEST_CFLAGS)
tests_unit_test_mpst_LDADD = $(MR_TEST_LDADD)
TESTS += tests/unit/test-mpst
endif

if ENABLE_TESTS
check_PROGRAMS += tests/unit/test-region
tests_unit_test_region_SOURCES = tests/unit/test-region.c
tests_unit_test_region_CFLAGS = $(MR_TEST_CFLAGS)
tests_unit_test_region_LDADD = $(MR_TEST_LDADD)
tests_unit_test_region_LDFLAGS = -Wl,--wrap=mr_sys_pread
TESTS += tests/unit/test-region
endif

# libFuzzer target for the MPST parser, built with clang on request:
#   make fuzz                       builds fuzz/fuzz-mpst and its seed corpus
#   make fuzz-run FUZZ_SECONDS=600  runs it (fuzz/fuzz-mpst.log, new inputs kept)
# Seeds: the fixture MPSTs and iasl's own MPST template, compiled from ASL here.
FUZZ_SECONDS = 600
MR_FUZZ_CFLAGS = -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-I$(top_builddir) -I$(top_srcdir)
EXTRA_DIST += fuzz/fuzz-mpst.c
fuzz/fuzz-mpst: $(srcdir)/fuzz/fuzz-mpst.c $(srcdir)/regions/mpst.c $(srcdir)/regions/mpst.h \
		$(srcdir)/common/util.c $(srcdir)/common/util.h config.h
	@mkdir -p fuzz
	$(AM_V_CC)$(CLANG) $(MR_FUZZ_CFLAGS) -o $@ $(srcdir)/fuzz/fuzz-mpst.c \
	  $(srcdir)/regions/mpst.c $(srcdir)/common/util.c
fuzz/corpus-mpst/.stamp: $(wildcard $(srcdir)/tests/fixtures/*/mpst.asl)
	$(AM_V_GEN)set -e; d=fuzz/corpus-mpst; rm -rf $$d fuzz/seeds; mkdir -p $$d fuzz/seeds; \
	for a in $(srcdir)/tests/fixtures/*/mpst.asl; do \
	  n=$$(basename $$(dirname $$a)); \
	  $(IASL) -p fuzz/seeds/$$n $$a >/dev/null; cp fuzz/seeds/$$n.aml $$d/$$n; \
	done; \
	(cd fuzz/seeds && $(IASL) -T MPST >/dev/null 2>&1 && $(IASL) mpst.asl >/dev/null); \
	cp fuzz/seeds/mpst.aml $$d/iasl-template; touch $@
if HAVE_CLANG
fuzz: fuzz/fuzz-mpst fuzz/corpus-mpst/.stamp
fuzz-run: fuzz
	fuzz/fuzz-mpst -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -print_final_stats=1 \
	  fuzz/corpus-mpst >fuzz/fuzz-mpst.log 2>&1; status=$$?; \
	  grep -E '^(Done|stat::|SUMMARY|==[0-9]+==ERROR)' fuzz/fuzz-mpst.log; exit $$status
# Line and branch coverage of the parser by the corpus (after fuzz-run): clang's
# source-based coverage, reported by llvm-cov.
fuzz/fuzz-mpst-cov: $(srcdir)/fuzz/fuzz-mpst.c $(srcdir)/regions/mpst.c $(srcdir)/regions/mpst.h
	@mkdir -p fuzz
	$(AM_V_CC)$(CLANG) -g -O0 -fsanitize=fuzzer -fprofile-instr-generate -fcoverage-mapping \
	  -I$(top_builddir) -I$(top_srcdir) -o $@ $(srcdir)/fuzz/fuzz-mpst.c \
	  $(srcdir)/regions/mpst.c $(srcdir)/common/util.c
fuzz-cov: fuzz/fuzz-mpst-cov fuzz/corpus-mpst/.stamp
	LLVM_PROFILE_FILE=fuzz/mpst.profraw fuzz/fuzz-mpst-cov -runs=0 fuzz/corpus-mpst \
	  >fuzz/fuzz-mpst-cov.log 2>&1
	llvm-profdata merge -o fuzz/mpst.profdata fuzz/mpst.profraw
	llvm-cov report fuzz/fuzz-mpst-cov -instr-profile=fuzz/mpst.profdata \
	  $(srcdir)/regions/mpst.c
else
fuzz fuzz-run fuzz-cov:
	@echo "clang not found: install the Debian package clang to build the fuzz targets" >&2; exit 1
endif
clean-fuzz:
	rm -rf fuzz/fuzz-mpst fuzz/fuzz-mpst-cov fuzz/corpus-mpst fuzz/seeds fuzz/*.log fuzz/mpst.prof*

# EXTRA_DIST's tests/fixtures is taken from the build tree when the directory exists
# there (automake prefers it), and the build tree holds the assembled roots and the
# test logs: ship the source tree's fixtures, without anything the build made.
dist-hook: mr-dist-fixtures
mr-dist-fixtures:
	rm -rf $(distdir)/tests/fixtures
	cp -pR $(srcdir)/tests/fixtures $(distdir)/tests/fixtures
	chmod -R u+w $(distdir)/tests/fixtures
	cd $(distdir)/tests/fixtures && rm -rf gen-kpageflags gen-kpageflags.o .deps \
	  .dirstamp .roots-stamp *.log *.trs */proc/kpageflags */proc/kpagecount \
	  */sys/firmware/acpi/tables/MPST

# The assembled roots (a copy of the sources in a VPATH build; only the built parts
# in an in-tree build) and the fuzz outputs go with `make clean`.
clean-local: mr-clean-fixtures clean-fuzz
mr-clean-fixtures:
	set -e; for f in $(MR_FIXTURES); do \
	  if [ "$$(cd $(srcdir) && pwd -P)" != "$$(pwd -P)" ]; then rm -rf tests/fixtures/$$f; \
	  else rm -f tests/fixtures/$$f/sys/firmware/acpi/tables/MPST \
	    tests/fixtures/$$f/proc/kpageflags tests/fixtures/$$f/proc/kpagecount; fi; \
	done
	rm -f tests/fixtures/.roots-stamp

.PHONY: update-expected fuzz fuzz-run fuzz-cov clean-fuzz mr-dist-fixtures mr-clean-fixtures
