#!/bin/sh
# memregctl control --apply with migrate_cold 3 (user engine, damon backend) over a
# workload with a 32 MiB hot and a 192 MiB cold area first touched on node 0: after
# 45 s of control, >= 90% of the cold pages are on node 3 and >= 90% of the hot ones
# still on node 0 (the workload's own move_pages query, and memregctl where), every
# byte intact, and DAMON left as found (nr_kdamonds 0).
. /lab/tests/lib
[ -e $admin/nr_kdamonds ] || skip "no DAMON sysfs in this kernel"
[ "$(cat $admin/nr_kdamonds)" = 0 ] || skip "DAMON in use before the test"
start_workload
memregctl control --apply --backend damon --attrs 50000,1000000,2000000,10,1000 \
	--pid $wpid --scheme '4K max 0 0 5s max migrate_cold 3' --duration 45s --json \
	>/tmp/c.json 2>/tmp/c.err
crc=$?
cat /tmp/c.err
[ $crc -eq 0 ] || { cat /tmp/c.json; fail "control exit $crc"; }
memregctl where --json $wpid >/tmp/where.json || fail "where"
grep -A3 '"node_bytes"' /tmp/where.json | head -8
stop_workload
echo "control: nr_tried $(json_field /tmp/c.json nr_tried) sz_tried $(json_field /tmp/c.json sz_tried)" \
	"sz_applied $(json_field /tmp/c.json sz_applied)"
[ "$(cat $admin/nr_kdamonds)" = 0 ] || fail "nr_kdamonds left non-zero"
[ $((cold_on3 * 100)) -ge $((cold_pages * 90)) ] ||
	fail "cold: $cold_on3 of $cold_pages pages on node 3, want >= 90%"
[ $((hot_on0 * 100)) -ge $((hot_pages * 90)) ] ||
	fail "hot: $hot_on0 of $hot_pages pages on node 0, want >= 90% (a moved hot area is a failure)"
echo "PASS: cold $cold_on3/$cold_pages pages on node 3, hot $hot_on0/$hot_pages on node 0, data intact"
