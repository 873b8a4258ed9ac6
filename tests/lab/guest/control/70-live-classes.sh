#!/bin/sh
# The allocator in the loop, live (docs/controller.md, "The allocator in the loop"):
# mr-live-sites under libmemreg.so (export and site tracking on, the default heap
# layout) allocates and frees for 60 s, objects living 5 s, a hot site (10% of the
# bytes, touched all the time) interleaved with a cold one; its descriptor ring, read
# on every pass, is a third site hotter than both. Twice side by side, one per vCPU:
# alone, and under `memregctl control --classes --apply` with the damon backend
# (vaddr), which reads the live site map, attributes DAMON's rates to the sites and
# writes the classes page. The hot-set inflation of the objects live at the end must
# be <= 1.5 with the controller (about 9-10 without: every hot object on a page of
# its own among cold ones), for the right reason: the controller's last round calls
# the hot site hot and the cold one cold, and the hot objects lie below the cold ones.
# Also the rerun command of the measurement: bench/lab-live-classes.sh runs this file
# alone in a boot (then /lab/tests/lib is not there).
if [ -f /lab/tests/lib ]; then
	. /lab/tests/lib
else
	fail() { echo "FAIL: $*"; exit 1; }
	skip() { echo "SKIP: $*"; exit 77; }
	admin=/sys/kernel/mm/damon/admin/kdamonds
fi
[ -e $admin/nr_kdamonds ] || skip "no DAMON sysfs in this kernel"
[ "$(cat $admin/nr_kdamonds)" = 0 ] || skip "DAMON in use before the test"
lib=/usr/lib/libmemreg.so
[ -f $lib ] || skip "no $lib in the guest"
DUR=${LIVE_SECONDS:-60}

# live_start OUT CPU: the workload on CPU, its pid in $lpid once it printed "ready".
live_start() {
	LD_PRELOAD=$lib MEMREG_EXPORT_STATS=1 MEMREG_TRACK_SITES=1 \
		taskset -c "$2" mr-live-sites -d "$DUR" -l 5000 -m 8 >"$1" 2>&1 &
	lpid=$!
	i=0
	while [ $i -lt 600 ] && ! grep -q '^ready ' "$1"; do
		kill -0 $lpid 2>/dev/null || { cat "$1"; fail "mr-live-sites exited"; }
		usleep 100000
		i=$((i + 1))
	done
	grep -q '^ready ' "$1" || fail "mr-live-sites never ready"
}
inflation() { sed -n 's/.*inflation=\([0-9.]*\).*/\1/p' "$1"; }

# Both runs side by side, one per vCPU: the same workload, the same minute.
live_start /tmp/alone.out 1
alone=$lpid
live_start /tmp/live.out 0
live=$lpid
# how much of the workload is on transparent huge pages (DAMON sees those per 2 MiB)
(sleep 30; grep -E '^(Rss|AnonHugePages):' /proc/$live/smaps_rollup 2>/dev/null |
	tr -s ' \n' ' ' >/tmp/thp.out) &
memregctl control --apply --classes=5s --backend damon --attrs 20000,1000000,2000000,10,1000 \
	--pid $live >/tmp/ctl.out 2>/tmp/ctl.err
crc=$?
wait $live
lrc=$?
wait $alone
arc=$?
cat /tmp/ctl.err
grep -E 'classes|site|^statistics' /tmp/ctl.out
echo "workload: $(head -1 /tmp/live.out); at 30 s: $(cat /tmp/thp.out 2>/dev/null)"
echo "alone: $(tail -2 /tmp/alone.out | tr '\n' ' ')"
echo "controlled: $(tail -2 /tmp/live.out | tr '\n' ' ')"
[ $crc -eq 0 ] || fail "control exit $crc"
[ $lrc -eq 0 ] && [ $arc -eq 0 ] || fail "workload exit $lrc (controlled), $arc (alone)"
[ "$(cat $admin/nr_kdamonds)" = 0 ] || fail "nr_kdamonds left non-zero"
with=$(inflation /tmp/live.out)
without=$(inflation /tmp/alone.out)
[ -n "$with" ] && [ -n "$without" ] || fail "no inflation line"
written=$(sed -n 's/^classes: .* \([0-9]*\) classes pages written$/\1/p' /tmp/ctl.out)
[ "${written:-0}" -gt 0 ] || fail "the controller never wrote a classes page"
grep -q ' hot_bytes=0 ' /tmp/live.out /tmp/alone.out && fail "no hot object live at the end"
# the measurement can fail: without the controller the hot objects are spread
awk -v w="$without" 'BEGIN { exit !(w >= 3) }' ||
	fail "hot-set inflation $without without the controller: the workload did not interleave"
awk -v w="$with" 'BEGIN { exit !(w <= 1.5) }' ||
	fail "hot-set inflation $with with the controller, want <= 1.5 ($without without)"
# which site is which: the sites' return addresses lie in site_a (hot) and site_b
# (cold), whose offsets the workload printed; the last round's class of each
a=$(sed -n 's/^sites a=\(0x[0-9a-f]*\) b=.*/\1/p' /tmp/live.out)
b=$(sed -n 's/^sites a=0x[0-9a-f]* b=\(0x[0-9a-f]*\)$/\1/p' /tmp/live.out)
[ -n "$a" ] && [ -n "$b" ] || fail "no sites line from the workload"
last_class() {  # FUNCTION-OFFSET: the class of the site in it, in the last round
	sed -n 's/^  site [0-9a-f]*+\(0x[0-9a-f]*\): \([a-z]*\) .*/\1 \2/p' /tmp/ctl.out |
	while read -r off cls; do
		[ $((off - $1)) -ge 0 ] && [ $((off - $1)) -lt 16 ] && echo "$cls"
	done | tail -1
}
ca=$(last_class "$a")
cb=$(last_class "$b")
[ "$ca" = hot ] && [ "$cb" = cold ] ||
	fail "the last round called the hot site ${ca:-absent} and the cold one ${cb:-absent}"
grep -q ' hot_low=yes$' /tmp/live.out ||
	fail "the hot objects do not lie below the cold ones: $(grep hot_median /tmp/live.out)"
echo "PASS: hot-set inflation $with with the controller, $without without; hot site hot, cold site cold, hot objects low"
