#!/bin/sh
# memregctl control --classes: its refusals (a replay, no consent, a process without
# the export or without site tracking), and the loop's plumbing on a command memreg
# starts under libmemreg.so with the refs backend (clear_refs of our own child): site
# maps read and classes pages written. How well the classes pack is measured by
# tests/controller/test-classes (here) and bench/lab-live-classes.sh (the lab, DAMON).
. "$top_srcdir/tests/alloc/preload.sh"
CTL="$top_builddir/tools/memregctl"
PROG="$top_builddir/tests/lab/progs/mr-live-sites"
tmp=$(mktemp -d) || exit 99
pids=
trap 'for p in $pids; do kill "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT
status=0
fail() {
	echo "FAIL: $*"
	status=1
}
# expect RC MESSAGE CMD...: exit status RC and exactly MESSAGE on stderr
expect() {
	want_rc=$1 want=$2
	shift 2
	"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -ne "$want_rc" ] || [ "$(cat "$tmp/err")" != "$want" ]; then
		fail "$*: exit $rc, stderr '$(cat "$tmp/err")'; want $want_rc, '$want'"
	else
		echo "ok: $want"
	fi
}

expect 2 "memregctl control: --classes needs one live process under the user engine: --pid PID or -- COMMAND
Try 'memregctl help control'." \
	"$CTL" control --classes --replay /nonexistent
expect 2 "memregctl control: --classes: bad interval 'soon' (5s, 500ms)
Try 'memregctl help control'." \
	"$CTL" control --classes=soon --pid 1 --apply
expect 2 "memregctl control: give --scheme TEXT (one or more), --schemes FILE or --classes
Try 'memregctl help control'." \
	"$CTL" control --pid 1 --apply
sleep 60 &
nopid=$!
pids="$pids $nopid"
expect 1 "memregctl: observing process $nopid, which memreg did not start, needs --apply (consent to act on it); a dry run works from --replay REC or -- COMMAND" \
	"$CTL" control --classes --pid $nopid
expect 1 "memregctl: --classes: pid $nopid has no libmemreg export (run it with LD_PRELOAD=libmemreg.so MEMREG_EXPORT_STATS=1 MEMREG_TRACK_SITES=1)" \
	"$CTL" control --classes --apply --backend refs --pid $nopid

# exported, but no site tracking: the page is never read, so it is refused
LD_PRELOAD="$MEMREG_LIB" MEMREG_EXPORT_STATS=1 "$PROG" -d 60 -l 300 -m 1 >"$tmp/w1" &
w1=$!
pids="$pids $w1"
i=0
while ! grep -q '^ready' "$tmp/w1" && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
sleep 0.2	# its export is created with the arena, at its first allocation: done by now
expect 1 "memregctl: --classes: pid $w1 does not track allocation sites (run it with MEMREG_TRACK_SITES=1)" \
	"$CTL" control --classes --apply --backend refs --pid $w1
kill $w1

# the loop, on a command memreg starts (consent): maps read, pages written
"$CTL" control --classes=1s --backend refs --attrs 100000,500000,1000000,10,1000 \
	--duration 5s -- env LD_PRELOAD="$MEMREG_LIB" MEMREG_EXPORT_STATS=1 MEMREG_TRACK_SITES=1 \
	MEMREG_REGION_SIZE=1M "$PROG" -d 60 -l 300 -m 4 >"$tmp/loop" 2>&1
rc=$?
last=$(grep '^classes: ' "$tmp/loop")
rounds=$(echo "$last" | sed -n 's/^classes: \([0-9]*\) rounds, \([0-9]*\) site maps read, \([0-9]*\) classes pages written$/\1 \2 \3/p')
set -- $rounds
if [ $rc -eq 0 ] && [ "${1:-0}" -ge 1 ] && [ "${2:-0}" -ge 1 ] && [ "${3:-0}" -ge 1 ] &&
   grep -Eq '^[0-9]+\.[0-9]{3} s: classes: [0-9]+ sites in the map of pid [0-9]+, [0-9]+ hot, [0-9]+ cold, [0-9]+ changed; page written$' "$tmp/loop"; then
	echo "ok: the loop read site maps and wrote classes pages ($last)"
else
	fail "the loop: exit $rc, '$last'"
	cat "$tmp/loop"
fi
exit $status
