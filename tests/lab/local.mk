# tests/lab/: the VM lab's make check side. Every directory under tests/lab/guest/ is
# a group of guest tests run in one boot by scripts/lab; each group is one TESTS entry
# (tests/lab/GROUP.lab, generated), read through automake's TAP driver so every guest
# test is counted. Test helper programs for the guest are tests/lab/progs/NAME. Files
# the guest tests export (lab-export) are kept in tests/lab/GROUP.files.
TEST_EXTENSIONS += .lab
if ENABLE_TESTS

MR_LAB_TESTS = @MR_LAB_TESTS_GLOB@

LAB_LOG_DRIVER = env AM_TAP_AWK='$(AWK)' $(SHELL) $(top_srcdir)/build-aux/tap-driver.sh
LAB_LOG_COMPILER = $(SHELL) $(top_srcdir)/tests/lab/group.sh
TESTS += $(MR_LAB_TESTS)

# The group stubs name the group; the installed tree is staged once for all groups.
$(MR_LAB_TESTS): tests/lab/stage.stamp
	@$(MKDIR_P) tests/lab
	@echo '# lab group $(notdir $(basename $@))' >$@
tests/lab/stage.stamp: $(PROGRAMS) $(LTLIBRARIES) $(noinst_PROGRAMS)
	@rm -rf tests/lab/stage && $(MKDIR_P) tests/lab
	@$(MAKE) $(AM_MAKEFLAGS) install DESTDIR='$(abs_builddir)/tests/lab/stage' \
		prefix=/usr >tests/lab/stage.log 2>&1 || { cat tests/lab/stage.log; exit 1; }
	@touch $@
check_DATA += $(MR_LAB_TESTS)
# lab-export's host side (scripts/lab --decode), no boot.
TESTS += tests/lab/export-decode.sh
CLEANFILES += $(MR_LAB_TESTS) tests/lab/stage.stamp tests/lab/stage.log tests/lab/boot.lock
endif

clean-local: clean-lab-stage
clean-lab-stage:
	rm -rf tests/lab/stage tests/lab/*.files

# The sources only, by name: the build directory's tests/lab (the staged guest tree,
# the group stubs and logs) would otherwise be what `make dist` copies.
EXTRA_DIST += tests/lab/group.sh tests/lab/init tests/lab/lab-export \
	tests/lab/export-decode.sh tests/lab/stage-static.sh tests/lab/guest

# The allocator's packing checked physically (tests/lab/guest/placement/50-alloc-packing.sh):
# alloc-bench's packing, hotset and lifetimes workloads, scaled to the lab, kept alive.
if ENABLE_TESTS
noinst_PROGRAMS += tests/lab/progs/mr-alloc-pack
tests_lab_progs_mr_alloc_pack_SOURCES = tests/lab/progs/mr-alloc-pack.c bench/alloc-workloads.h
tests_lab_progs_mr_alloc_pack_LDADD = libmrcommon.la $(NUMA_LIBS)
endif
