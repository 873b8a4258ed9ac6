#!/bin/sh
# evacuate's pre-move: mr-touch fills part of the DIMM regions of nodes 2 and 3;
# `memregctl plan --regions 2 --to 1` plans them with a pre-move to node 1 (--to 2,
# a node it empties, is refused); `evacuate --apply` moves what the processes have
# mapped in each region to node 1 with move_pages before the offline, and reports
# those bytes apart from the offline's. After it, by `memregctl where --json` and by
# mr-touch's own move_pages query, the pages that were in the regions are on node 1,
# none are left in the regions, and the data are intact. --undo brings the blocks back.
. /lab/tests/lib
rm -f "$STATE"
# mr-touch adds its own move_pages view to each verification (slower: only here)
MR_TOUCH_WHERE=1
export MR_TOUCH_WHERE
mib=1048576
# where_node PID NODE: bytes of PID on NODE (memregctl where --json)
where_node() {
	memregctl where "$1" --json | tr -d ' \n\t' | sed 's/{"node":/\n&/g' |
		grep "^{\"node\":$2,\"bytes\"" | sed 's/^{"node":[0-9]*,"bytes":\([0-9]*\)}.*/\1/'
}
# touch_node N NODE: pages of mr-touch on node N by its own move_pages query (the
# last "where:" line, written when verify_all signals it)
touch_node() {
	grep '^mr-touch: where:' "/tmp/touch$1.out" | tail -n 1 |
		sed -n "s|.* \([0-9]*\)/[0-9]* pages on node $2,.*|\1|p"
}

touch_on 2 64M; P2=$TOUCH_PID
touch_on 3 64M; P3=$TOUCH_PID
touch_on 0 160M
touch_on 1 160M
R2=$(region_of_node 2)
R3=$(region_of_node 3)
B2=$(region_blocks "$R2")
B3=$(region_blocks "$R3")
[ -n "$B2" ] && [ -n "$B3" ] || fail "no DIMM regions on nodes 2 and 3"
IN2=$(where_bytes "$P2" "$R2")
IN3=$(where_bytes "$P3" "$R3")
ON1_2=$(where_node "$P2" 1)
ON1_3=$(where_node "$P3" 1)
echo "before: pid $P2 has $IN2 bytes in region $R2 (node 2), ${ON1_2:-0} on node 1; pid $P3 has $IN3 in region $R3 (node 3), ${ON1_3:-0} on node 1"
[ "${IN2:-0}" -gt $((8 * mib)) ] && [ "${IN3:-0}" -gt $((8 * mib)) ] ||
	fail "mr-touch has too little in the DIMM regions to tell a pre-move"

memregctl plan --regions 2 --to 2 >/tmp/to2.out 2>&1 && fail "plan --to 2 (a node it empties) was accepted"
grep -qx "memregctl: --to node 2: the plan empties region $R2 on it" /tmp/to2.out ||
	fail "plan --to 2: $(cat /tmp/to2.out)"
memregctl plan --regions 2 --to 1 -o /tmp/pm.plan >/tmp/pm-plan.out || fail "plan --to 1 failed"
sed -n '/^selected regions/,/^savings/p' /tmp/pm-plan.out
for r in "$R2:$P2" "$R3:$P3"; do
	reg=${r%%:*} pid=${r##*:}
	pm=$(plan_region /tmp/pm.plan "$reg" | sed -n 's/.*"premove":{"node":\([0-9]*\),"bytes":\([0-9]*\),.*/\1 \2/p')
	echo "region $reg: plan pre-moves (node bytes) $pm"
	[ "${pm%% *}" = 1 ] || fail "region $reg: the plan's pre-move is not to node 1: '$pm'"
	plan_region /tmp/pm.plan "$reg" | grep -q "{\"pid\":$pid," || fail "region $reg: pid $pid not in its pre-move"
	grep -q "^  region $reg: pre-move .* to node 1 with move_pages, of .* $pid (mr-touch)" /tmp/pm-plan.out ||
		fail "region $reg: no pre-move line in the plan's output"
done

memregctl evacuate /tmp/pm.plan >/tmp/pm-dry.out || fail "dry run failed"
cat /tmp/pm-dry.out
grep -q "^region $R2 (node 2): would pre-move .* to node 1 with move_pages$" /tmp/pm-dry.out ||
	fail "the dry run does not show the pre-move"

t0=$(date +%s)
memregctl evacuate /tmp/pm.plan --apply --json >/tmp/pm.json || { cat /tmp/pm.json; fail "evacuate --apply failed"; }
t1=$(date +%s)
tr -d ' \n\t' </tmp/pm.json | sed 's/{"id":/\n&/g'
echo
tr -d ' \n\t' </tmp/pm.json | grep -q '"regions_offline":2,' || fail "not 2 regions offline"
for b in $B2 $B3; do
	[ "$(cat /sys/devices/system/memory/memory$b/state)" = offline ] || fail "memory$b is not offline"
done
PRE=$(tr -d ' \n\t' </tmp/pm.json | sed -n 's/.*"bytes_premoved":\([0-9]*\),.*/\1/p')
OFF=$(tr -d ' \n\t' </tmp/pm.json | sed -n 's/.*"bytes_moved":\([0-9]*\),"bytes_premoved".*/\1/p')
SEC=$(tr -d ' \n\t' </tmp/pm.json | sed -n 's/.*"premove_seconds":\([0-9.e+-]*\),.*/\1/p')
echo "measured: pre-move $PRE bytes in $SEC s, offline $OFF bytes; evacuate took $((t1 - t0)) s wall"
[ "${PRE:-0}" -ge $((IN2 + IN3 - 2 * mib)) ] || fail "the pre-move moved $PRE bytes, the processes had $((IN2 + IN3)) in the regions"
for r in "$R2:$P2" "$R3:$P3"; do
	left=$(where_bytes "${r##*:}" "${r%%:*}")
	[ "$left" = 0 ] || fail "region ${r%%:*} still holds $left bytes of pid ${r##*:}"
done

verify_all 1
for r in "2:$P2:$R2:$IN2:$ON1_2" "3:$P3:$R3:$IN3:$ON1_3"; do
	IFS=: read -r n pid reg was on1 <<EOR
$r
EOR
	now=$(where_node "$pid" 1)
	now=${now:-0}
	own=$(touch_node "$n" 1)
	left=$(where_bytes "$pid" "$reg")
	echo "after: pid $pid: $now bytes on node 1 by where (${on1:-0} before), $((${own:-0} * 4096)) of its buffer by its own move_pages; $left in region $reg (blocks: $(block_states $(region_blocks "$reg")))"
	# what was in the region is now on node 1, but for pages move_pages could not
	# take (the offline moved those: at most a MiB); its stack and libraries' pages
	# in the region are outside the buffer mr-touch asks about
	[ $((now - ${on1:-0})) -ge $((was - mib)) ] || fail "pid $pid: $now bytes on node 1 by where, $was were in region $reg"
	[ $((${own:-0} * 4096)) -ge $((was - mib)) ] || fail "pid $pid: its move_pages sees $((${own:-0} * 4096)) bytes on node 1, $was were in region $reg"
done

memregctl evacuate --undo /tmp/pm.plan --apply || fail "undo failed"
for b in $B2 $B3; do
	[ "$(cat /sys/devices/system/memory/memory$b/state)" = online ] || fail "memory$b is not back online"
done
[ ! -e "$STATE" ] || fail "undo left the state file: $(cat $STATE)"
verify_all 2
for p in $PIDS; do kill -USR1 "$p"; done
echo "ok: pre-move to node 1: $PRE bytes by move_pages, $OFF by the offline"
