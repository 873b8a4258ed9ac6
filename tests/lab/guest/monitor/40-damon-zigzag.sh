#!/bin/sh
# DAMON (vaddr) reads zigzag's working set as 90-110 MiB at the median. Attributes
# as in 30-damon-stairs.sh: phases 4 s, 50 ms / 1 s / 2 s, 100..1000 regions,
# 5 of 20 samples.
. /lab/tests/lib
[ -e /sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds ] || skip "no DAMON sysfs in this kernel"
start_tickers
wss_in damon zigzag 0.8 50000,1000000,2000000,100,1000 5 90 110 --apply
[ "$(cat /sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds)" = 0 ] || fail "nr_kdamonds left non-zero"
# the lab mounts tracefs: snapshots must come from damon:damon_aggregated, and the
# backend's tracefs instance must be gone afterwards
t=/sys/kernel/tracing
if [ -e $t/events/damon/damon_aggregated ]; then
	grep -q "damon_aggregated tracepoint" /tmp/damon-record.err ||
		fail "snapshots not read from the damon_aggregated tracepoint"
	! ls $t/instances | grep -q memreg || fail "tracefs instance left: $(ls $t/instances)"
fi
