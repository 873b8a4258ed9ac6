#!/bin/sh
# Packing programs under LD_PRELOAD=libmemreg.so (tests/alloc/packing.c): partly used
# slabs refilled lowest region first, hot objects in regions of their own below the
# normal ones, and 64 MiB freed to an exited (also under 64 exited since) or a live
# thread's cache reused by the next allocation, and a churn of random lifetimes
# leaving most regions it touched free. Small regions (MEMREG_REGION_SIZE) keep them cheap. Every region count printed
# (here and by bench/alloc-bench) says what it counts: windows of virtual address
# space, the only regions a one-node machine has (whole lines checked).
. "$top_srcdir/tests/alloc/preload.sh"
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
status=0
for mode in lowest:1M hot:1M exited:64M exited-buried:64M live:64M steal-wait:64M churn:4M churn-threaded:16M; do
	if MEMREG_REGION_SIZE=${mode#*:} run_preloaded "$tmp/${mode%:*}.err" "$top_builddir/tests/alloc/packing" "${mode%:*}" \
		>"$tmp/${mode%:*}.out"; then
		cat "$tmp/${mode%:*}.out"
		echo "ok: ${mode%:*}"
	else
		cat "$tmp/${mode%:*}.out"
		echo "FAIL: ${mode%:*}" >&2
		grep -v '^  \|^libmemreg: stats' "$tmp/${mode%:*}.err" >&2
		status=1
	fi
done
# count_line FILE ERE: FILE has a line matching ERE whole, or the test fails.
count_line() {
	grep -Eqx "$2" "$1" || { echo "FAIL: no line '$2' in: $(cat "$1")" >&2; status=1; }
}
count_line "$tmp/lowest.out" \
	'lowest: [0-9]+ refills, [0-9]+ in the lowest [0-9]+ regions \(1 MiB windows of virtual address space\)'
count_line "$tmp/churn.out" \
	'churn: [0-9]+ of [0-9]+ regions free at the end \(4 MiB windows of virtual address space\)'
count_line "$tmp/churn-threaded.out" \
	'churn: [0-9]+ of [0-9]+ regions free at the end \(16 MiB windows of virtual address space\)'
# alloc-bench's churn (lifetimes, 0.5 s) prints its counts with a note beside them.
MEMREG_REGION_SIZE=16M run_preloaded "$tmp/bench.err" "$top_builddir/bench/alloc-bench" lifetimes \
	>"$tmp/bench.out" || { echo "FAIL: alloc-bench lifetimes exited $?" >&2; status=1; }
count_line "$tmp/bench.out" \
	'note: lt_touched and lt_live_regions count 16 MiB windows of virtual address space, not physical memory regions'
# Its goal: at least 60% of the windows it touched free at the end.
pct=$(sed -n 's/.*\blt_free_pct=\([0-9]*\).*/\1/p' "$tmp/bench.out")
if [ -z "$pct" ] || [ "$pct" -lt 60 ]; then
	echo "FAIL: alloc-bench lifetimes: ${pct:-no} lt_free_pct, want at least 60: $(cat "$tmp/bench.out")" >&2
	status=1
else
	echo "ok: alloc-bench lifetimes: $(grep '^lt_' "$tmp/bench.out")"
fi
exit $status
