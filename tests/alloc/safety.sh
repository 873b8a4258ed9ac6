#!/bin/sh
# Safety programs under LD_PRELOAD=libmemreg.so (tests/alloc/safety.c): impossible
# sizes and alignments fail as glibc's do with the block intact, the hinted operator
# new fails through libstdc++, RLIMIT_AS and RLIMIT_DATA are lived with (spans
# packed under the latter), and double, interior and forged frees abort a child
# with a one-line message; fork handlers registered before libmemreg's may
# allocate, as under glibc; calloc clears pages a failed purge (locked) left.
. "$top_srcdir/tests/alloc/preload.sh"
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
status=0
for mode in realloc sizes new-nothrow new-throw align-big rlimit-as rlimit-tiny rlimit-data rlimit-data-spans misuse atfork; do
	if run_preloaded "$tmp/$mode.err" "$top_builddir/tests/alloc/safety" "$mode"; then
		echo "ok: $mode"
	else
		echo "FAIL: $mode" >&2
		grep -v '^  \|^libmemreg: stats' "$tmp/$mode.err" >&2
		status=1
	fi
done
# calloc over locked pages: 4 MiB is a huge run of 1 MiB regions.
if MEMREG_REGION_SIZE=1M run_preloaded "$tmp/mlock.err" "$top_builddir/tests/alloc/safety" mlock-calloc; then
	echo "ok: mlock-calloc"
else
	echo "FAIL: mlock-calloc" >&2
	grep -v '^  \|^libmemreg: stats' "$tmp/mlock.err" >&2
	status=1
fi
exit $status
