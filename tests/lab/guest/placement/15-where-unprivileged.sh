#!/bin/sh
# where without privileges: run as an ordinary user, pagemap hides frame numbers, so
# memregctl where falls back to numa_maps and counts the process's own 64 MiB on
# node 1 (node 1 has two regions, so its bytes are per node, not per region).
. /lab/tests/lib
SIZE=$((64 << 20))
U=65534
rm -f /tmp/touch-u.out
mr-runas $U mr-touch 64M 1 >/tmp/touch-u.out 2>&1 &
pid=$!
wait_ready /tmp/touch-u.out "mr-touch did not start"
# The MPST table is readable by root only: pass a copy, as a user would.
cat /sys/firmware/acpi/tables/MPST >/tmp/mpst.dat || fail "cannot copy the MPST"
chmod 644 /tmp/mpst.dat
mr-runas $U memregctl where "$pid" --mpst /tmp/mpst.dat || fail "where as uid $U failed"
mr-runas $U memregctl where "$pid" --mpst /tmp/mpst.dat --json | tr -d ' \n\t' >/tmp/where-u.json || fail "where --json failed"
grep -q '"source":"numa_maps"' /tmp/where-u.json || fail "source is not numa_maps: $(cat /tmp/where-u.json)"
n1=$(sed 's/.*"nodes":\[//' /tmp/where-u.json | sed 's/{"node":/\n&/g' | grep '^{"node":1,' |
	sed 's/.*"bytes":\([0-9]*\)}.*/\1/')
echo "node 1: ${n1:-0} bytes"
[ "${n1:-0}" -ge "$SIZE" ] || fail "node 1 holds ${n1:-0} bytes, expected >= $SIZE"
un=$(sed 's/.*"unplaced_bytes":\([0-9]*\),.*/\1/' /tmp/where-u.json)
[ "$un" -ge "$SIZE" ] || fail "node 1's bytes ($un unplaced) were attributed to one of its two regions"
# As root the same process is counted per region, from its frames.
memregctl where "$pid" --json | tr -d ' \n\t' | grep -q '"source":"pagemap"' || fail "root did not use pagemap"
kill -USR1 "$pid"
wait "$pid" || fail "mr-touch found its data changed"
