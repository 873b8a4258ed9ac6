#!/bin/sh
# The kernel's DAMON (vaddr) reads stairs' working set as 9-11 MiB at the median,
# and leaves nr_kdamonds at 0. memreg gives DAMON the process's mappings as its
# regions (not vaddr's three ranges, which here span ~1 GiB, mostly the unmapped gap
# between the program image and the heap), so each 10 MiB area, fenced by a guard
# page, is a region boundary DAMON never merges across. Attributes fitted to the
# emulated guest: phases 4 s (--time-scale 0.8), sampling 50 ms, aggregation 1 s
# (20 samples), update 2 s, 100..1000 regions (with 10 regions of ~10 MiB a hot area
# shares its region with cold pages until DAMON splits it, which takes most of a
# phase); working set: accessed in at least 5 of the 20 samples. (Emulated, one sweep
# of a 10 MiB area takes about as long as a 50 ms sample or longer, so the active
# area reads 9-14 of 20, its neighbours 0-2.)
. /lab/tests/lib
[ -e /sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds ] || skip "no DAMON sysfs in this kernel"
start_tickers
wss_in damon stairs 0.8 50000,1000000,2000000,100,1000 5 9 11 --apply
[ "$(cat /sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds)" = 0 ] || fail "nr_kdamonds left non-zero"
# the lab mounts tracefs: snapshots must come from damon:damon_aggregated, and the
# backend's tracefs instance must be gone afterwards
t=/sys/kernel/tracing
if [ -e $t/events/damon/damon_aggregated ]; then
	grep -q "damon_aggregated tracepoint" /tmp/damon-record.err ||
		fail "snapshots not read from the damon_aggregated tracepoint"
	! ls $t/instances | grep -q memreg || fail "tracefs instance left: $(ls $t/instances)"
fi
