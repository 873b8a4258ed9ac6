#!/bin/sh
# evacuate: mr-touch fills part of every DIMM region (64 MiB on nodes 2 and 3, 160 MiB
# on 0 and 1); `memregctl plan --regions 2` picks the two cheapest, nodes 2 and 3, with
# bytes to move within 10% of what `where` counts there; `memregctl evacuate --apply`
# takes them offline with the data intact; `--undo` brings every block back Movable.
# The pages are moved back, and a second plan is timed by the offline rate the first
# evacuation measured in this boot: that rate is the first evacuation's bytes (moved and
# pre-moved) over its seconds, and the second evacuation's estimate is its bytes to move
# at that rate (both to rounding; estimate and time taken are printed, not compared:
# how close they come depends on the host's load, not on memreg). Then
# memregctl is killed (SIGKILL) during an evacuation and `--undo` restores every
# block, the data intact again. The plan is exported for the host side
# (10-plan-evacuate.host), which boots a second guest and checks that it refuses it.
. /lab/tests/lib
[ -n "$STATE" ] || fail "no state file path in memregctl online --help"
echo "state file: $STATE"
rm -f "$STATE"

touch_on 2 64M; P2=$TOUCH_PID
touch_on 3 64M; P3=$TOUCH_PID
touch_on 0 160M
touch_on 1 160M
R2=$(region_of_node 2)
R3=$(region_of_node 3)
B2=$(region_blocks "$R2")
B3=$(region_blocks "$R3")
[ -n "$B2" ] && [ -n "$B3" ] || fail "no DIMM regions on nodes 2 and 3"
echo "DIMM regions: $R2 (node 2: $B2), $R3 (node 3: $B3)"

memregctl plan --regions 2 -o /tmp/evac.plan || fail "plan failed"
ID=$(tr -d ' \n\t' </tmp/evac.plan | sed 's/.*"format":"memreg-plan","version":2,"id":"\([0-9a-f]*\)".*/\1/')
SEL=$(tr -d ' \n\t' </tmp/evac.plan | sed -n 's/.*"selected":{"regions":\[\([0-9,]*\)\].*/\1/p')
echo "plan $ID selects $SEL"
# the two cost the same to within a page: either may come first
case "$SEL" in "$R2,$R3"|"$R3,$R2") ;; *) fail "the plan selects '$SEL', not $R2 and $R3" ;; esac
for r in "$R2:$P2" "$R3:$P3"; do
	reg=${r%%:*} pid=${r##*:}
	move=$(plan_region /tmp/evac.plan "$reg" | sed 's/.*"move_bytes":\([0-9]*\),.*/\1/')
	held=$(where_bytes "$pid" "$reg")
	echo "region $reg: plan moves $move bytes, where counts $held of pid $pid"
	[ -n "$move" ] && [ -n "$held" ] && [ "$held" -gt 0 ] || fail "region $reg: no figures"
	d=$((move > held ? move - held : held - move))
	[ $((d * 10)) -le "$held" ] || fail "region $reg: plan's $move bytes not within 10% of $held"
done

# The dry run changes nothing.
before="$(block_states $B2 $B3)"
memregctl evacuate /tmp/evac.plan || fail "dry run failed"
[ "$(block_states $B2 $B3)" = "$before" ] || fail "the dry run changed blocks"
[ ! -e "$STATE" ] || fail "the dry run wrote the state file"

memregctl evacuate /tmp/evac.plan --apply --json >/tmp/evac.json || { cat /tmp/evac.json; fail "evacuate --apply failed"; }
cat /tmp/evac.json
tr -d ' \n\t' </tmp/evac.json | grep -q '"regions_offline":2,' || fail "not 2 regions offline"
for b in $B2 $B3; do
	[ "$(cat /sys/devices/system/memory/memory$b/state)" = offline ] || fail "memory$b is not offline"
	grep -q "^memory$b boot=.* zone=Movable plan=$ID\$" "$STATE" || fail "memory$b not in the state file for plan $ID"
done
[ "$(where_bytes "$P2" "$R2")" = 0 ] || fail "region $R2 still holds bytes of pid $P2"
verify_all 1
echo "first evacuation: $(tr -d ' \n\t' </tmp/evac.json | grep -o '"seconds":[0-9.e+-]*' | head -n 1) (estimated from move_pages: $(tr -d ' \n\t' </tmp/evac.json | grep -o '"estimated_seconds":[0-9.e+-]*' | head -n 1))"
memregctl evacuate --undo /tmp/evac.plan --apply || fail "undo failed"
for b in $B2 $B3; do
	[ "$(cat /sys/devices/system/memory/memory$b/state)" = online ] || fail "memory$b is not back online"
	[ "$(cat /sys/devices/system/memory/memory$b/valid_zones)" = Movable ] || fail "memory$b came back outside Movable"
done
[ ! -e "$STATE" ] || fail "undo left the state file: $(cat $STATE)"
verify_all 2

# Pages back into the DIMM regions, and a plan timed by this boot's offline rate.
memregctl move "$P2" --to "$R2" --apply >/dev/null || fail "move back to region $R2"
memregctl move "$P3" --to "$R3" --apply >/dev/null || fail "move back to region $R3"
memregctl plan --regions 2 -o /tmp/evac2.plan >/tmp/plan2.out || fail "second plan failed"
grep 'move rate' /tmp/plan2.out
grep -q 'move rate: .*measured: memregctl evacuate took' /tmp/plan2.out || fail "the second plan's rate is not the offline rate"
SEL=$(tr -d ' \n\t' </tmp/evac2.plan | sed -n 's/.*"selected":{"regions":\[\([0-9,]*\)\].*/\1/p')
case "$SEL" in "$R2,$R3"|"$R3,$R2") ;; *) fail "the second plan selects '$SEL', not $R2 and $R3" ;; esac
memregctl evacuate /tmp/evac2.plan --apply --json >/tmp/evac2.json || { cat /tmp/evac2.json; fail "second evacuate --apply failed"; }
meas=$(tr -d ' \n\t' </tmp/evac2.json | grep -o '"seconds":[0-9.e+-]*' | head -n 1 | cut -d: -f2)
est=$(tr -d ' \n\t' </tmp/evac2.json | grep -o '"estimated_seconds":[0-9.e+-]*' | head -n 1 | cut -d: -f2)
echo "second evacuation: estimated $est s, measured $meas s"
# The rate the second plan used is the first evacuation's: its bytes over its seconds.
m1=$(tr -d ' \n\t' </tmp/evac.json | grep -o '"bytes_moved":[0-9]*' | head -n 1 | cut -d: -f2)
p1=$(tr -d ' \n\t' </tmp/evac.json | grep -o '"bytes_premoved":[0-9]*' | head -n 1 | cut -d: -f2)
s1=$(tr -d ' \n\t' </tmp/evac.json | grep -o '"seconds":[0-9.e+-]*' | head -n 1 | cut -d: -f2)
rate=$(tr -d ' \n\t' </tmp/evac2.plan | sed -n 's/.*"move_rate":{"bytes_per_s":\([0-9]*\),.*/\1/p')
move=$(tr -d ' \n\t' </tmp/evac2.plan |
	sed -n 's/.*"selected":{"regions":\[[0-9,]*\],"bytes":[0-9]*,"move_bytes":\([0-9]*\),.*/\1/p')
echo "the rate: $m1 bytes moved and $p1 pre-moved in $s1 s by the first evacuation; the second plan: $rate bytes/s, $move bytes to move"
[ -n "$m1" ] && [ -n "$p1" ] && [ -n "$s1" ] && [ -n "$rate" ] && [ -n "$move" ] && [ -n "$est" ] ||
	fail "no figures for the estimate: first $m1+$p1 bytes in '$s1' s, rate '$rate', move '$move', estimate '$est'"
# within a millionth (and a byte/s): the rate is truncated to whole bytes per second
awk -v b="$((m1 + p1))" -v s="$s1" -v r="$rate" 'BEGIN { want = s > 0 ? b / s : 0
	d = r - want; if (d < 0) d = -d; exit !(want > 0 && d <= want * 1e-6 + 1) }' ||
	fail "the second plan's rate $rate bytes/s is not the first evacuation's ($m1 + $p1 bytes in $s1 s)"
# The estimate is the plan's bytes to move at that rate.
awk -v m="$move" -v r="$rate" -v e="$est" 'BEGIN { want = m / r
	d = e - want; if (d < 0) d = -d; exit !(m > 0 && d <= want * 1e-6 + 1e-6) }' ||
	fail "the estimate $est s is not $move bytes at $rate bytes/s"
memregctl evacuate --undo /tmp/evac2.plan --apply || fail "second undo failed"
[ ! -e "$STATE" ] || fail "the second undo left the state file: $(cat $STATE)"
verify_all 3
memregctl move "$P2" --to "$R2" --apply >/dev/null || fail "move back to region $R2"

# SIGKILL in the middle, then --undo.
first=${B2%% *}
memregctl evacuate /tmp/evac2.plan --apply >/tmp/kill.out 2>&1 &
mpid=$!
i=0
while [ "$(cat /sys/devices/system/memory/memory$first/state)" != offline ] && kill -0 "$mpid" 2>/dev/null; do
	i=$((i + 1)); [ "$i" -lt 6000 ] || break; sleep 0.01
done
kill -9 "$mpid" 2>/dev/null
wait "$mpid" 2>/dev/null
echo "after the kill: $(block_states $B2 $B3); state file: $(grep -v '^#' "$STATE" 2>/dev/null | tr '\n' ' ')"
block_states $B2 $B3 | grep -q offline || fail "no block went offline before the kill"
memregctl evacuate --undo /tmp/evac2.plan --apply || fail "undo after the kill failed"
for b in $B2 $B3; do
	[ "$(cat /sys/devices/system/memory/memory$b/state)" = online ] || fail "memory$b not back after the kill"
	[ "$(cat /sys/devices/system/memory/memory$b/valid_zones)" = Movable ] || fail "memory$b not Movable after the kill"
done
[ ! -e "$STATE" ] || fail "undo after the kill left the state file: $(cat $STATE)"
verify_all 4

lab-export /tmp/evac.plan evac.plan || fail "lab-export of the plan"
for p in $PIDS; do kill -USR1 "$p"; done
echo "ok: plan $ID evacuated, undone, killed and undone"
