#!/bin/sh
# Packing programs under LD_PRELOAD=libmemreg.so (tests/alloc/packing.c): partly used
# slabs refilled lowest region first, hot objects in regions of their own below the
# normal ones, and 64 MiB freed to an exited or a live thread's cache reused by the
# next allocation, and a churn of random lifetimes leaving most regions it touched
# free. Small regions (MEMREG_REGION_SIZE) keep them cheap.
. "$top_srcdir/tests/alloc/preload.sh"
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
status=0
for mode in lowest:1M hot:1M exited:64M live:64M churn:4M; do
	if MEMREG_REGION_SIZE=${mode#*:} run_preloaded "$tmp/${mode%:*}.err" "$top_builddir/tests/alloc/packing" "${mode%:*}"; then
		echo "ok: ${mode%:*}"
	else
		echo "FAIL: ${mode%:*}" >&2
		grep -v '^  \|^libmemreg: stats' "$tmp/${mode%:*}.err" >&2
		status=1
	fi
done
exit $status
