# controller/: schemes (access pattern -> action), and what applies them. A library
# the controller commands (memregctl control, memregd) stay thin over.
noinst_LTLIBRARIES += libmrcontrol.la
libmrcontrol_la_SOURCES = controller/scheme.c controller/scheme.h \
	controller/engine.c controller/engine.h \
	controller/plan.c controller/plan.h \
	controller/action.c controller/action.h \
	controller/run.c controller/run.h controller/metrics.c \
	controller/conf.c controller/conf.h \
	controller/kengine.c controller/kengine.h \
	controller/classes.c controller/classes.h
libmrcontrol_la_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS)
# memregctl plan, evacuate and control: thin commands over controller/ (tools/local.mk,
# included before this file, sets the list and links libmrcontrol.la first).
tools_memregctl_SOURCES += tools/cmd-plan.c tools/cmd-evacuate.c tools/cmd-control.c
# memregd: the same engine as a service (sbin), and its systemd unit.
sbin_PROGRAMS += tools/memregd
tools_memregd_SOURCES = tools/memregd.c
tools_memregd_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS)
tools_memregd_LDADD = libmrcontrol.la libmrcore.la libmrcommon.la \
	$(JSONC_LIBS) $(HWLOC_LIBS) $(NUMA_LIBS) $(PFM_LIBS)
nodist_systemdsystemunit_DATA = systemd/memregd.service
EXTRA_DIST += systemd/memregd.service.in
CLEANFILES += systemd/memregd.service
systemd/memregd.service: systemd/memregd.service.in Makefile
	$(AM_V_GEN)$(MKDIR_P) $(@D) && \
	sed -e 's|@sbindir[@]|$(sbindir)|g' -e 's|@sysconfdir[@]|$(sysconfdir)|g' \
		-e 's|@localstatedir[@]|$(localstatedir)|g' $< >$@.tmp && mv $@.tmp $@

if ENABLE_TESTS
check_PROGRAMS += tests/controller/test-scheme
tests_controller_test_scheme_SOURCES = tests/controller/test-scheme.c
tests_controller_test_scheme_CFLAGS = $(MR_TEST_CFLAGS)
tests_controller_test_scheme_LDADD = libmrcontrol.la $(MR_TEST_LDADD)
TESTS += tests/controller/test-scheme

check_PROGRAMS += tests/controller/test-engine
tests_controller_test_engine_SOURCES = tests/controller/test-engine.c
tests_controller_test_engine_CFLAGS = $(MR_TEST_CFLAGS)
tests_controller_test_engine_LDADD = libmrcontrol.la $(MR_TEST_LDADD)
TESTS += tests/controller/test-engine

# The planner on the fixture machines (their roots are assembled by regions/local.mk).
check_PROGRAMS += tests/controller/test-plan
tests_controller_test_plan_SOURCES = tests/controller/test-plan.c
tests_controller_test_plan_CFLAGS = $(MR_TEST_CFLAGS)
tests_controller_test_plan_LDADD = libmrcontrol.la $(MR_TEST_LDADD)
TESTS += tests/controller/test-plan
TESTS += tests/controller/evacuate-cli.sh
TESTS += tests/controller/evacuate-arbitration.sh
# memregctl with the kernel's side of memory blocks faked (tests/controller/fake-live.c),
# for evacuate --apply's --keep-going and progress bar on a fixture copy.
check_PROGRAMS += tests/controller/memregctl-fake
tests_controller_memregctl_fake_SOURCES = $(tools_memregctl_SOURCES) tests/controller/fake-live.c
tests_controller_memregctl_fake_CFLAGS = $(tools_memregctl_CFLAGS)
tests_controller_memregctl_fake_LDADD = $(tools_memregctl_LDADD)
tests_controller_memregctl_fake_LDFLAGS = -Wl,--wrap=mr_root_may_change \
	-Wl,--wrap=mr_proc_starttime -Wl,--wrap=mr_sys_move_pages -Wl,--wrap=mr_root_open \
	-Wl,--wrap=mr_sys_write
TESTS += tests/controller/evacuate-apply.sh
check_PROGRAMS += tests/controller/test-action
tests_controller_test_action_SOURCES = tests/controller/test-action.c
tests_controller_test_action_CFLAGS = $(MR_TEST_CFLAGS)
tests_controller_test_action_LDADD = libmrcontrol.la $(MR_TEST_LDADD)
tests_controller_test_action_LDFLAGS = -Wl,--wrap=mr_sys_pidfd_open \
	-Wl,--wrap=mr_sys_process_madvise -Wl,--wrap=mr_sys_move_pages
TESTS += tests/controller/test-action
# The allocator in the loop: the classes page with libmemreg.so and mr-live-sites.
check_PROGRAMS += tests/controller/test-classes
tests_controller_test_classes_SOURCES = tests/controller/test-classes.c
tests_controller_test_classes_CFLAGS = $(MR_TEST_CFLAGS)
tests_controller_test_classes_LDADD = libmrcontrol.la $(MR_TEST_LDADD)
TESTS += tests/controller/test-classes tests/controller/classes-cli.sh
endif
EXTRA_DIST += tests/controller/classes-cli.sh
EXTRA_DIST += tests/controller/evacuate-cli.sh tests/controller/evacuate-arbitration.sh \
	tests/controller/evacuate-apply.sh

# libFuzzer target for the scheme parser (make fuzz; seeds: the examples in
# tests/controller/schemes/).
EXTRA_DIST += fuzz/fuzz-scheme.c tests/controller/schemes
fuzz/fuzz-scheme: $(srcdir)/fuzz/fuzz-scheme.c $(srcdir)/controller/scheme.c \
		$(srcdir)/controller/scheme.h $(srcdir)/common/util.c $(srcdir)/common/util.h config.h
	@mkdir -p fuzz
	$(AM_V_CC)$(CLANG) $(MR_FUZZ_CFLAGS) -o $@ $(srcdir)/fuzz/fuzz-scheme.c \
	  $(srcdir)/controller/scheme.c $(srcdir)/common/util.c
if HAVE_CLANG
fuzz: fuzz/fuzz-scheme
fuzz-run-scheme: fuzz/fuzz-scheme
	@mkdir -p fuzz/corpus-scheme && cp $(srcdir)/tests/controller/schemes/* fuzz/corpus-scheme/
	fuzz/fuzz-scheme -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
	  fuzz/corpus-scheme >fuzz/fuzz-scheme.log 2>&1; status=$$?; \
	  grep -E '^(Done|stat::|SUMMARY|==[0-9]+==ERROR)' fuzz/fuzz-scheme.log; exit $$status
endif
CLEANFILES += fuzz/fuzz-scheme

if ENABLE_TESTS
# memregctl control, replay-driven: exact actions and statistics of a known record.
check_PROGRAMS += tests/controller/mk-ctl-record
tests_controller_mk_ctl_record_SOURCES = tests/controller/mk-ctl-record.c
tests_controller_mk_ctl_record_LDADD = libmrcore.la libmrcommon.la $(ZLIB_LIBS)
TESTS += tests/controller/control-cli.sh tests/controller/metrics-textfile.sh \
	tests/controller/memregd.sh tests/controller/unit-verify.sh \
	tests/controller/control-targets.sh
EXTRA_DIST += tests/controller/control-cli.sh tests/controller/metrics-textfile.sh \
	tests/controller/memregd.sh tests/controller/unit-verify.sh \
	tests/controller/control-targets.sh
endif

# The control lab group's workload (tests/lab/guest/control/), copied into the guest.
if ENABLE_TESTS
noinst_PROGRAMS += tests/lab/progs/mr-hotcold
tests_lab_progs_mr_hotcold_SOURCES = tests/lab/progs/mr-hotcold.c
tests_lab_progs_mr_hotcold_LDADD = libmrcommon.la $(NUMA_LIBS)
# The live allocator loop's workload (bench/lab-live-classes.sh, tests/controller/test-classes).
noinst_PROGRAMS += tests/lab/progs/mr-live-sites
tests_lab_progs_mr_live_sites_SOURCES = tests/lab/progs/mr-live-sites.c
endif

# The controller's overhead benchmark, installed so the lab guest can run it too.
ctlbenchdir = $(pkgdatadir)/bench
dist_ctlbench_SCRIPTS = bench/ctl-overhead.sh
if ENABLE_TESTS
# The kernel engine on a fake DAMON sysfs tree and cgroup hierarchy (writes wrapped).
check_PROGRAMS += tests/controller/test-kengine
tests_controller_test_kengine_SOURCES = tests/controller/test-kengine.c
tests_controller_test_kengine_CFLAGS = $(MR_TEST_CFLAGS) $(JSONC_CFLAGS)
tests_controller_test_kengine_LDADD = libmrcontrol.la $(MR_TEST_LDADD) $(JSONC_LIBS)
tests_controller_test_kengine_LDFLAGS = -Wl,--wrap=mr_root_write_str \
	-Wl,--wrap=mr_root_may_change -Wl,--wrap=mr_root_write_file \
	-Wl,--wrap=mr_root_unlink -Wl,--wrap=mr_root_mkdir -Wl,--wrap=mr_root_rmdir
TESTS += tests/controller/test-kengine
endif
