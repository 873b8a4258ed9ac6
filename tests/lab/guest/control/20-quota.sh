#!/bin/sh
# The same with "quota bytes 16M per 1s": with 1 s aggregation intervals each reset
# interval is one aggregation, so no action line of the run may exceed 16 MiB, and
# the statistics give sz_tried <= 16 MiB x aggregations; and the run gets further
# than the first 16 MiB.
. /lab/tests/lib
[ -e $admin/nr_kdamonds ] || skip "no DAMON sysfs in this kernel"
[ "$(cat $admin/nr_kdamonds)" = 0 ] || skip "DAMON in use before the test"
start_workload
printf '4K max 0 0 5s max migrate_cold 3\n  quota bytes 16M per 1s\n' >/tmp/q.sch
memregctl control --apply --backend damon --attrs 50000,1000000,2000000,10,1000 \
	--pid $wpid --schemes /tmp/q.sch --duration 30s --json >/tmp/q.json 2>/tmp/q.err
crc=$?
cat /tmp/q.err
[ $crc -eq 0 ] || { cat /tmp/q.json; fail "control exit $crc"; }
stop_workload
aggr=$(json_field /tmp/q.json aggregations)
tried=$(json_field /tmp/q.json sz_tried)
exceeds=$(json_field /tmp/q.json qt_exceeds)
echo "quota: $aggr aggregations, sz_tried $tried, qt_exceeds $exceeds, cold on node 3: $cold_on3/$cold_pages"
[ "$tried" -gt 0 ] || fail "nothing tried"
[ "$tried" -le $((aggr * 16 * 1048576)) ] || fail "sz_tried $tried over 16 MiB x $aggr"
max=$(sed -n '/"actions"/,$p' /tmp/q.json | grep -o '"bytes":[0-9]*' | cut -d: -f2 | sort -n | tail -1)
[ "${max:-0}" -le 16777216 ] || fail "an aggregation applied $max bytes, over the 16 MiB quota"
[ "$exceeds" -gt 0 ] || fail "the quota was never spent (qt_exceeds 0)"
# each reset interval takes the next 16 MiB, not the same first ones again (DAMOS's
# age reset of what was acted on): at least two quotas' worth arrived
[ "$cold_on3" -ge 8192 ] || fail "only $cold_on3 cold pages on node 3 after $aggr intervals of 16 MiB"
echo "PASS: at most ${max:-0} bytes per reset interval (quota 16777216), qt_exceeds $exceeds"
