#!/bin/sh
# The start-up heap (tests/alloc/start-heap.c) under LD_PRELOAD=libmemreg.so, run
# without MEMREG_SHOW_STATS (which turns it off): the program checks by its own
# /proc/self/maps that its objects lie in libmemreg's BSS and that the arena was not
# reserved, so a run served by glibc or by the arena fails. Double and interior
# frees there abort a child with glibc's line; MEMREG_START_HEAP=0 and a bad value.
. "$top_srcdir/tests/alloc/preload.sh"
prog="$top_builddir/tests/alloc/start-heap"
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

for mode in short fill reuse threads fork; do
	if LD_PRELOAD="$MEMREG_LIB" "$prog" "$mode" >"$tmp/$mode.out" 2>"$tmp/$mode.err" &&
	   ! [ -s "$tmp/$mode.err" ]; then
		echo "ok: $mode $(cat "$tmp/$mode.out")"
	else
		fail "$mode"
		cat "$tmp/$mode.err" >&2
	fi
done

# A smaller heap, filled to its last granule.
if MEMREG_START_HEAP=64K LD_PRELOAD="$MEMREG_LIB" "$prog" fill >"$tmp/fill64.out" 2>"$tmp/fill64.err" &&
   ! [ -s "$tmp/fill64.err" ]; then
	echo "ok: MEMREG_START_HEAP=64K fill $(cat "$tmp/fill64.out")"
else
	fail "MEMREG_START_HEAP=64K fill"
	cat "$tmp/fill64.err" >&2
fi

# abort_case WHAT LINE: the child dies of SIGABRT, its stderr LINE exactly.
abort_case() {
	LD_PRELOAD="$MEMREG_LIB" "$prog" abort-child "$1" >"$tmp/$1.out" 2>"$tmp/$1.err"
	rc=$?
	if [ $rc -ne 134 ]; then
		fail "abort-child $1: exit status $rc, not 134 (SIGABRT): $(cat "$tmp/$1.out" "$tmp/$1.err")"
	elif [ "$(cat "$tmp/$1.err")" != "$2" ]; then
		fail "abort-child $1: stderr '$(cat "$tmp/$1.err")', want '$2'"
	else
		echo "ok: abort-child $1"
	fi
}
abort_case double "libmemreg: free(): double free or invalid pointer"
abort_case double-top "libmemreg: free(): double free or invalid pointer"
abort_case interior "libmemreg: free(): double free or invalid pointer"
abort_case realloc-interior "libmemreg: realloc(): invalid pointer"

if MEMREG_START_HEAP=0 LD_PRELOAD="$MEMREG_LIB" "$prog" off 2>"$tmp/off.err" &&
   ! [ -s "$tmp/off.err" ]; then
	echo "ok: MEMREG_START_HEAP=0"
else
	fail "MEMREG_START_HEAP=0: $(cat "$tmp/off.err")"
fi
# A value over 256K is refused with its value, and the default kept.
MEMREG_START_HEAP=300K LD_PRELOAD="$MEMREG_LIB" "$prog" short >/dev/null 2>"$tmp/bad.err"
want="libmemreg: ignoring bad MEMREG_START_HEAP=300K (at most 256K)"
if [ "$(cat "$tmp/bad.err")" = "$want" ]; then
	echo "ok: MEMREG_START_HEAP=300K refused"
else
	fail "MEMREG_START_HEAP=300K: stderr '$(cat "$tmp/bad.err")', want '$want'"
fi
exit $status
