#!/bin/sh
# where + move: mr-touch holds 64 MiB bound to node 1; memregctl where shows it in
# node 1's regions; after memregctl move --to a node-3 region it shows it in node 3's
# regions; moving an address range moves only that range; mr-touch finds its data
# intact.
. /lab/tests/lib
SIZE=$((64 << 20))

rm -f /tmp/touch.out
mr-touch 64M 1 >/tmp/touch.out 2>&1 &
pid=$!
wait_ready /tmp/touch.out "mr-touch did not start"

memregctl where "$pid" || fail "where failed"
b1=$(node_bytes 1)
echo "node 1 regions hold $b1 bytes of pid $pid"
[ "$b1" -ge "$SIZE" ] || fail "node 1's regions hold $b1 bytes, expected >= $SIZE"

to=$(region_of_node 3)
[ -n "$to" ] || fail "no region on node 3"
memregctl move "$pid" --to "$to" >/tmp/plan.out || fail "move plan failed"
cat /tmp/plan.out
grep -q 'nothing moved' /tmp/plan.out || fail "move without --apply did not say it moved nothing"
[ "$(node_bytes 1)" -eq "$b1" ] || fail "move without --apply moved pages"

memregctl move "$pid" --to "$to" --apply || fail "move --apply failed"
memregctl where "$pid"
b3=$(node_bytes 3)
b1=$(node_bytes 1)
echo "after the move: node 3 regions $b3 bytes, node 1 regions $b1 bytes"
[ "$b3" -ge "$SIZE" ] || fail "node 3's regions hold $b3 bytes after the move, expected >= $SIZE"
[ "$b1" -lt $((SIZE / 16)) ] || fail "node 1's regions still hold $b1 bytes"

# A range: the first half of the buffer (its address from mr-touch's "ready" line) to
# node 2; the second half stays on node 3.
addr=$(sed -n 's/^ready [0-9]* \(0x[0-9a-f]*\) .*/\1/p' /tmp/touch.out)
[ -n "$addr" ] || fail "no address from mr-touch"
half=$((addr + SIZE / 2))
to2=$(region_of_node 2)
memregctl move "$pid" --to "$to2" --range "$addr-$(printf '0x%x' "$half")" --apply ||
	fail "move --range failed"
b2=$(node_bytes 2)
b3=$(node_bytes 3)
echo "after moving [$addr, +32 MiB) to node 2: node 2 regions $b2 bytes, node 3 regions $b3 bytes"
[ "$b2" -ge $((SIZE / 2)) ] && [ "$b2" -lt $((SIZE / 2 + SIZE / 16)) ] ||
	fail "node 2's regions hold $b2 bytes, expected about $((SIZE / 2))"
[ "$b3" -ge $((SIZE / 2)) ] || fail "node 3's regions hold only $b3 bytes"

kill -USR1 "$pid"
wait "$pid"
rc=$?
cat /tmp/touch.out
[ "$rc" -eq 0 ] || fail "mr-touch found its data changed (exit $rc)"
