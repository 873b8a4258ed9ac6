# controller/: schemes (access pattern -> action), and what applies them. A library
# the controller commands (memregctl control, memregd) stay thin over.
noinst_LTLIBRARIES += libmrcontrol.la
libmrcontrol_la_SOURCES = controller/scheme.c controller/scheme.h \
	controller/engine.c controller/engine.h \
	controller/plan.c controller/plan.h
libmrcontrol_la_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS)
# memregctl plan and evacuate: thin commands over the planner.
tools_memregctl_SOURCES += tools/cmd-plan.c tools/cmd-evacuate.c

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
endif
EXTRA_DIST += tests/controller/evacuate-cli.sh

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
