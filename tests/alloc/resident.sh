#!/bin/sh
# Resident size of libmemreg's own doing (tests/alloc/resident.c, pages counted with
# mincore, nothing timed): a thread's cache makes resident only the bins it uses
# (docs/allocator.md, "Peak RSS against glibc, by cause"); small objects allocated in
# a row take a cache line each, within the same page (docs/allocator.md, Design, "One cache line each");
# a fresh slab's pages are populated, not faulted, and at most 4 pages past its objects
# (Design, "Prefaulting"); one malloc makes at most 4 pages of the library's own
# variables resident ("Where a kernel build's extra CPU goes"); threads that come
# and go borrow the shared cache's objects, not slabs of their own (Design, "Short
# threads"). A mode the kernel
# cannot run (no MADV_POPULATE_WRITE, no perf events) prints why and makes the whole
# test a skip unless another failed.
. "$top_srcdir/tests/alloc/preload.sh"
PROG="$top_builddir/tests/alloc/resident"
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
status=0
skipped=0
for mode in caches lines populate bss short; do
	run_preloaded "$tmp/$mode.err" env MEMREG_REGION_SIZE=64M MEMREG_NUMA=0 "$PROG" "$mode" >"$tmp/$mode.out"
	rc=$?
	if [ $rc -eq 0 ]; then
		echo "ok: $mode"
		sed 's/^/  /' "$tmp/$mode.out"
	elif [ $rc -eq 77 ]; then
		echo "SKIP: $mode: $(cat "$tmp/$mode.out")"
		skipped=1
	else
		echo "FAIL: $mode" >&2
		cat "$tmp/$mode.out" >&2
		grep -v '^  \|^libmemreg: stats' "$tmp/$mode.err" >&2
		status=1
	fi
done
[ $status -eq 0 ] && [ $skipped -eq 1 ] && exit 77
exit $status
