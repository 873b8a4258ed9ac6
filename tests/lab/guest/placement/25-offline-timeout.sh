#!/bin/sh
# offline time limit and rollback in the real kernel: mr-pin holds pages of the second
# block of node 2's DIMM region in a pipe (vmsplice), so they cannot migrate and the
# kernel retries that block's offline forever. `memregctl offline --timeout 5 --apply`
# takes the first block offline, gives up on the second at the limit, brings the first
# back online and says so; every block ends as it was and nothing is left to restore.
# Once mr-pin is gone, the same offline succeeds.
. /lab/tests/lib
rm -f "$STATE"
R=$(region_of_node 2)
BLOCKS=$(region_blocks "$R")
set -- $BLOCKS
[ $# -ge 2 ] || fail "region $R has fewer than 2 blocks: $BLOCKS"
b1=$1 b2=$2
mem=/sys/devices/system/memory
echo "region $R, blocks $BLOCKS"

# Setup: with the first block offline, mr-pin's pages can only land in the second.
echo offline >$mem/memory$b1/state || fail "setup: cannot offline memory$b1"
rm -f /tmp/pin.out
mr-pin 1M 2 >/tmp/pin.out 2>&1 &
pid=$!
wait_ready /tmp/pin.out "mr-pin did not start"
echo online_movable >$mem/memory$b1/state || fail "setup: cannot online memory$b1"
inr=$(region_bytes "$R")
[ "$inr" -ge 65536 ] || fail "mr-pin's pages are not in region $R ($inr bytes)"
snapshot() { for b in $BLOCKS; do echo "$b $(cat $mem/memory$b/state) $(cat $mem/memory$b/valid_zones)"; done; }
snapshot >/tmp/before

memregctl offline "$R" --apply --timeout 5 >/tmp/out 2>&1
rc=$?
cat /tmp/out
[ "$rc" -eq 1 ] || fail "offline exited $rc, expected 1"
grep -q "memory$b2: offline did not finish within the time limit" /tmp/out || fail "no time-limit message"
grep -q '1 block(s) brought back online' /tmp/out || fail "memory$b1 was not reported rolled back"
snapshot >/tmp/after
cmp -s /tmp/before /tmp/after || { diff /tmp/before /tmp/after; fail "blocks not as they were"; }
[ ! -e "$STATE" ] || fail "the state file remains after a rollback: $(cat $STATE)"
echo "every block as it was: $(tr '\n' ';' </tmp/after)"

kill "$pid"
wait "$pid"
pid=
memregctl offline "$R" --apply --timeout 60 || fail "offline failed with mr-pin gone"
memregctl online "$R" --apply || fail "online failed"
snapshot >/tmp/after
cmp -s /tmp/before /tmp/after || fail "blocks not back: $(cat /tmp/after)"
