#!/bin/sh
# The first-fit heap (allocator/fit.h) under LD_PRELOAD: placement side by side and
# lowest first, reuse by any size, realloc in place, calloc's clean pages, trim and
# decay, the threaded process's spans, fork (tests/alloc/fit.c says what each
# checks). The heap's misuse aborts are in safety.sh.
. "$top_srcdir/tests/alloc/preload.sh"
PROG="$top_builddir/tests/alloc/fit"
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

run() {
	name=$1
	shift
	if run_preloaded "$tmp/$name.err" env "$@" >"$tmp/$name.out"; then
		echo "ok: $name: $(cat "$tmp/$name.out")"
	else
		fail "$name: $(cat "$tmp/$name.out")"
		grep -v '^  \|^libmemreg: stats' "$tmp/$name.err" >&2
	fi
}
for m in layout reuse realloc calloc threads fork; do
	run "$m" MEMREG_DECAY_MS=600000 "$PROG" "$m"
done
run trim MEMREG_DECAY_MS=600000 MEMREG_DIRTY_PCT=0 "$PROG" trim
run decay MEMREG_DECAY_MS=100 MEMREG_DIRTY_PCT=0 "$PROG" decay
exit $status
