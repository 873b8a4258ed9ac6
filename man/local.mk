# man/: the manual pages. Each is written as man/NAME.SECTION.in; make fills in its
# .TH line with configure's version (PACKAGE_VERSION) and date (MR_MAN_DATE), so no
# page types its own version. A new page goes into this list.
MR_MAN_PAGES = \
	man/memregctl.1 \
	man/memregctl-regions.1 \
	man/memregctl-where.1 \
	man/memregctl-move.1 \
	man/memregctl-offline.1 \
	man/memregctl-online.1 \
	man/memregctl-record.1 \
	man/memregctl-report.1 \
	man/memregctl-profile.1 \
	man/memregctl-control.1 \
	man/memregctl-energy.1 \
	man/memregctl-bench.1 \
	man/memregctl-alloc-stats.1 \
	man/memregctl-version.1 \
	man/memregctl-damon-reset.1 \
	man/memregctl-plan.1 \
	man/memregctl-evacuate.1 \
	man/memreg-plan.5 \
	man/memreg-accessgen.1 \
	man/memreg-record.5 \
	man/memregd.8 \
	man/memregd.conf.5 \
	man/libmemreg.3
nodist_man_MANS = $(MR_MAN_PAGES)
EXTRA_DIST += $(MR_MAN_PAGES:=.in)
CLEANFILES += $(MR_MAN_PAGES)

$(MR_MAN_PAGES): %: %.in Makefile
	$(AM_V_GEN)$(MKDIR_P) $(@D) && \
	sed -e 's|@VERSION[@]|$(PACKAGE_VERSION)|g' -e 's|@DATE[@]|$(MR_MAN_DATE)|g' \
		$< >$@.tmp && mv $@.tmp $@
