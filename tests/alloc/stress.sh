#!/bin/sh
# Stress programs under LD_PRELOAD=libmemreg.so: cross-thread frees, thread churn,
# fork while threads allocate, realloc growth/shrink, alignment sweep, calloc and
# overflow, huge sizes, remote frees that leave the objects alone. Each checks its
# data with fill patterns (tests/alloc/stress.c).
. "$top_srcdir/tests/alloc/preload.sh"
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
status=0
for mode in xthread churn fork realloc align calloc huge remote-batch; do
	if run_preloaded "$tmp/$mode.err" "$top_builddir/tests/alloc/stress" "$mode"; then
		echo "ok: $mode"
	else
		echo "FAIL: $mode" >&2
		grep -v '^  \|^libmemreg: stats' "$tmp/$mode.err" >&2
		status=1
	fi
done
exit $status
