#!/bin/sh
# The kernel's DAMON (vaddr) reads stairs' working set as 9-12 MiB at the median,
# and leaves nr_kdamonds at 0. (12, not 11: at 1000 regions over about 1 GiB a
# region is about 1 MiB, and DAMON's adaptive boundaries put one such neighbour in
# or out; the lab read medians of 10.3, 10.8, 11.3, 11.5 MiB.) Attributes fitted to the emulated guest: phases 4 s
# (--time-scale 0.8), sampling 50 ms, aggregation 1 s (20 samples), update 2 s,
# 100..1000 regions (vaddr covers about 1 GiB of address space here: with 10
# regions of ~100 MiB a 10 MiB area is rarely sampled and merges back, and DAMON
# would not converge within a phase); working set: accessed in at least 5 of the
# 20 samples. (Emulated, one sweep of a 10 MiB area takes about as long as a
# 50 ms sample or longer, so the active area reads 9-14 of 20, its neighbours 0-2.)
. /lab/tests/lib
[ -e /sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds ] || skip "no DAMON sysfs in this kernel"
start_tickers
wss_in damon stairs 0.8 50000,1000000,2000000,100,1000 5 9 12 --apply
[ "$(cat /sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds)" = 0 ] || fail "nr_kdamonds left non-zero"
# the lab mounts tracefs: snapshots must come from damon:damon_aggregated, and the
# backend's tracefs instance must be gone afterwards
t=/sys/kernel/tracing
if [ -e $t/events/damon/damon_aggregated ]; then
	grep -q "damon_aggregated tracepoint" /tmp/damon-record.err ||
		fail "snapshots not read from the damon_aggregated tracepoint"
	! ls $t/instances | grep -q memreg || fail "tracefs instance left: $(ls $t/instances)"
fi
