#!/bin/sh
# offline: mr-touch holds 64 MiB bound to node 2; `memregctl offline` of node 2's
# movable (DIMM) region moves those pages out and takes its blocks offline, the data
# stays intact, `memregctl online` brings the blocks back. Then a crash: memregctl is
# killed during an offline, and `memregctl online --restore --apply` recovers.
. /lab/tests/lib
SIZE=$((64 << 20))
rm -f "$STATE"

# The DIMM region of node 2: the highest region id on the node.
R=$(region_of_node 2)
BLOCKS=$(region_blocks "$R")
[ -n "$R" ] && [ -n "$BLOCKS" ] || fail "no DIMM region on node 2"
echo "region $R, blocks $BLOCKS"
states() { for b in $BLOCKS; do printf '%s ' "$(cat /sys/devices/system/memory/memory$b/state)"; done; }

rm -f /tmp/touch.out
mr-touch 64M 2 >/tmp/touch.out 2>&1 &
pid=$!
wait_ready /tmp/touch.out "mr-touch did not start"
before=$(region_bytes "$R")
echo "region $R holds $before bytes of pid $pid"
[ "$before" -ge $((SIZE / 2)) ] || fail "region $R holds only $before bytes of mr-touch"

# The plan changes nothing.
memregctl offline "$R" || fail "offline plan failed"
[ "$(states)" = "$(echo $BLOCKS | sed 's/[0-9]*/online/g') " ] || fail "the plan changed blocks: $(states)"
[ ! -e "$STATE" ] || fail "the plan wrote the state file"

memregctl offline "$R" --apply || fail "offline --apply failed"
echo "blocks: $(states)"
for b in $BLOCKS; do
	[ "$(cat /sys/devices/system/memory/memory$b/state)" = offline ] || fail "memory$b is not offline"
	grep -q "^memory$b boot=.* zone=Movable plan=-$" "$STATE" || fail "memory$b is not in the state file"
done
after=$(region_bytes "$R")
[ "$after" -eq 0 ] || fail "region $R still holds $after bytes after the offline"
memregctl where "$pid"
kill -USR2 "$pid"
# Until it has answered or said CORRUPT, at most 120 s (a fixed wait is too short
# under emulation on a loaded host).
wait_line /tmp/touch.out 'verified .* intact|CORRUPT' "mr-touch did not answer after the offline" 1200
grep -q 'verified .* intact' /tmp/touch.out || fail "data changed by the offline: $(cat /tmp/touch.out)"

memregctl online "$R" --apply || fail "online --apply failed"
for b in $BLOCKS; do
	[ "$(cat /sys/devices/system/memory/memory$b/state)" = online ] || fail "memory$b is not back online"
	[ "$(cat /sys/devices/system/memory/memory$b/valid_zones)" = Movable ] || fail "memory$b came back outside Movable"
done
[ ! -e "$STATE" ] || fail "online left the state file: $(cat $STATE)"

# The crash: kill -9 memregctl once the first block is offline.
first=${BLOCKS%% *}
memregctl offline "$R" --apply >/tmp/offline.out 2>&1 &
mpid=$!
i=0
while [ "$(cat /sys/devices/system/memory/memory$first/state)" != offline ] && kill -0 "$mpid" 2>/dev/null; do
	i=$((i + 1)); [ "$i" -lt 3000 ] || break; sleep 0.01
done
kill -9 "$mpid" 2>/dev/null
wait "$mpid" 2>/dev/null
echo "after the kill: blocks $(states); state file: $(grep -v '^#' $STATE 2>/dev/null | tr '\n' ' ')"
echo "$(states)" | grep -q offline || fail "no block went offline before the kill"
memregctl online --restore || fail "online --restore plan failed"
memregctl online --restore --apply || fail "online --restore --apply failed"
for b in $BLOCKS; do
	[ "$(cat /sys/devices/system/memory/memory$b/state)" = online ] || fail "memory$b not restored"
done
[ ! -e "$STATE" ] || fail "restore left the state file: $(cat $STATE)"
echo "restored: $(states)"

kill -USR1 "$pid"
wait "$pid"
rc=$?
cat /tmp/touch.out
[ "$rc" -eq 0 ] || fail "mr-touch found its data changed (exit $rc)"
