#!/bin/sh
# What libmemreg gives back to the OS and what it leaves untouched (tests/alloc/memory.c):
# free runs after the decay delay (checked on allocations and growths too), past the
# dirty share and at malloc_trim (which says whether it released), calloc of fresh or
# MADV_DONTNEED-purged pages without writing them, calloc after a MADV_FREE purge
# returning zeros; large spans prefaulted only for a call site that writes them whole;
# an emptied slab kept for its bin until the delay or malloc_trim;
# mallinfo2, malloc_stats and malloc_info answering for libmemreg's heap, with the
# numbers of `memregctl alloc-stats`; the program's own mappings after the set-up
# keeping their alignment.
. "$top_srcdir/tests/alloc/preload.sh"
CTL="$top_builddir/tools/memregctl"
PROG="$top_builddir/tests/alloc/memory"
tmp=$(mktemp -d) || exit 99
trap 'kill $pid 2>/dev/null; rm -rf "$tmp"' EXIT
pid=

run() {
	name=$1
	shift
	if run_preloaded "$tmp/$name.err" env MEMREG_DECAY_MS=100 "$@" >"$tmp/$name.out"; then
		echo "ok: $name: $(cat "$tmp/$name.out")"
	else
		fail "$name: $(cat "$tmp/$name.out")"
		grep -v '^  \|^libmemreg: stats' "$tmp/$name.err" >&2
	fi
}
run trim "$PROG" trim
run decay "$PROG" decay
run dirty-share MEMREG_DECAY_MS=600000 "$PROG" dirty
run dirty-share-off MEMREG_DECAY_MS=600000 MEMREG_DIRTY_PCT=0 "$PROG" dirty
# Big spans first fit: a freed buffer's resident pages are reused (heap.c).
run refill MEMREG_DECAY_MS=600000 MEMREG_DIRTY_PCT=0 "$PROG" refill
# The decay checked on allocations too, with no free after the one to purge (buddy.c).
run no-free "$PROG" no-free
# A span freed bigger than every one before goes back at once (buddy.c).
run new-max MEMREG_DECAY_MS=600000 MEMREG_DIRTY_PCT=0 "$PROG" new-max
# realloc moves a big span's pages rather than copying them (os.c).
run realloc-move MEMREG_NUMA=0 "$PROG" realloc-move
# The space left below the arena's reservations stays aligned (os.c).
run layout "$PROG" layout
run calloc "$PROG" calloc
# The span cache (large.c): none with one thread; calloc clears a cached span;
# malloc_trim and a thread's exit give them back.
run span-cache-single "$PROG" span-cache-single
run span-cache "$PROG" span-cache
# A slab emptied is kept for its bin (tcache.c, spare slabs) until the decay delay or
# malloc_trim.
# (a delay far longer than the test: a stall of 100 ms on a loaded machine would
# give the spare back before the test looks)
run spare MEMREG_DECAY_MS=600000 MEMREG_DIRTY_PCT=0 "$PROG" spare
run spare-decay MEMREG_DIRTY_PCT=0 "$PROG" spare-decay
# A young thread's buffers of many sizes over a page, each freed before the next,
# reuse the same pages (tcache.c, "medium slabs in a young thread").
run medium MEMREG_DECAY_MS=600000 MEMREG_DIRTY_PCT=0 "$PROG" medium
# calloc of a fresh slab's object leaves its pages untouched; freed ones read zero
# again (tcache.h, mr_fresh_obj).
run calloc-fresh MEMREG_START_HEAP=0 "$PROG" calloc-fresh
# A young cache takes objects a class up rather than make a slab (tcache.c).
run class-up MEMREG_START_HEAP=0 "$PROG" class-up
run calloc-dontneed "$PROG" calloc-purged
run calloc-madv-free MEMREG_MADV_FREE=1 "$PROG" calloc-purged
# Large spans prefaulted only for a call site that writes them whole (large.c).
run_preloaded "$tmp/prefault.err" "$PROG" prefault >"$tmp/prefault.out"
case $? in
0) echo "ok: prefault: $(cat "$tmp/prefault.out")" ;;
77) echo "$(cat "$tmp/prefault.out")" ;;
*) fail "prefault: $(cat "$tmp/prefault.out")"; cat "$tmp/prefault.err" >&2 ;;
esac

# mallinfo2 & co. against the live export, while the program waits.
LD_PRELOAD="$MEMREG_LIB" MEMREG_EXPORT_STATS=1 "$PROG" info "$tmp/go" >"$tmp/info.out" 2>"$tmp/info.err" &
pid=$!
i=0
while ! grep -q '^final ' "$tmp/info.out" && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
"$CTL" alloc-stats --json $pid >"$tmp/info.json" || fail "alloc-stats --json exited $?"
"$CTL" alloc-stats $pid >"$tmp/info.txt" || fail "alloc-stats exited $?"
touch "$tmp/go"
wait $pid || fail "memory info exited $?"
pid=
set -- $(grep '^final ' "$tmp/info.out")
arena=$3 hblks=$5 hblkhd=$7 uordblks=$9 fordblks=${11}
json() { tr -d ' \n' <"$tmp/info.json" | sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p"; }
used=$(json used_bytes)
rb=$(json region_bytes)
active=$(awk '$2 == "live" || $2 == "free" || $2 == "empty" || $2 == "decaying"' "$tmp/info.txt" | wc -l)
huge=$(awk '$2 == "huge"' "$tmp/info.txt" | wc -l)
[ -n "$used" ] && [ "$((uordblks + hblkhd))" = "$used" ] ||
	fail "mallinfo2: uordblks $uordblks + hblkhd $hblkhd, alloc-stats used_bytes $used"
[ "$hblkhd" = "$((huge * rb))" ] && [ "$hblks" = 1 ] && [ "$huge" = 4 ] ||
	fail "mallinfo2: hblks $hblks hblkhd $hblkhd; alloc-stats: $huge huge regions of $rb bytes (want 1 run of 4)"
[ "$arena" = "$((active * rb))" ] && [ "$((arena - uordblks))" = "$fordblks" ] ||
	fail "mallinfo2: arena $arena fordblks $fordblks; alloc-stats: $active regions in use of $rb bytes"
# The export is updated incrementally: its entries must add up to its totals.
sum=$(tr -d ' \n' <"$tmp/info.json" | grep -o '"live_bytes":[0-9]*' | awk -F: '{ s += $2 } END { print s }')
nlive=$(tr -d ' \n' <"$tmp/info.json" | grep -o '"live_bytes":[1-9][0-9]*' | wc -l)
[ "$sum" = "$used" ] && [ "$nlive" = "$(json regions_live)" ] ||
	fail "alloc-stats: region entries sum to $sum bytes in $nlive live regions; totals $used in $(json regions_live)"
# malloc_stats on stderr, glibc's layout; malloc_info's XML.
grep -A2 '^Total (incl. mmap):' "$tmp/info.err" | grep -q "^in use bytes     = *$used\$" ||
	fail "malloc_stats: $(grep -A2 '^Total' "$tmp/info.err" | tail -1), want in use $used"
grep -q "^max mmap bytes   = *$hblkhd\$" "$tmp/info.err" || fail "malloc_stats: no max mmap bytes $hblkhd"
grep -q "^<total type=\"mmap\" count=\"1\" size=\"$hblkhd\"/>\$" "$tmp/info.out" ||
	fail "malloc_info: no mmap total of $hblkhd bytes"
[ $status -eq 0 ] && echo "ok: mallinfo2, malloc_stats, malloc_info = alloc-stats (used $used, huge $hblkhd, arena $arena)"
exit $status
