#!/bin/sh
# refusal: offlining a region whose blocks hold unmovable memory (node 0's boot memory,
# where the kernel lives; node 1's boot memory, in zone DMA32) fails with a clear
# message and leaves every memory block exactly as it was, with no state file.
. /lab/tests/lib
rm -f "$STATE"
snapshot() {
	for d in /sys/devices/system/memory/memory*; do
		echo "${d##*/} $(cat $d/state) $(cat $d/valid_zones)"
	done
}
snapshot >/tmp/before
for r in 0 1; do
	memregctl offline "$r" --apply >/tmp/out 2>&1
	rc=$?
	cat /tmp/out
	[ "$rc" -eq 1 ] || fail "offline $r --apply exited $rc, expected 1"
	grep -q 'not Movable' /tmp/out || fail "no reason given for region $r"
	snapshot >/tmp/after
	cmp -s /tmp/before /tmp/after || { diff /tmp/before /tmp/after; fail "blocks changed"; }
	[ ! -e "$STATE" ] || fail "a refused offline wrote the state file"
done
# Bad input: a region that does not exist, a bad option.
memregctl offline 99 --apply >/tmp/out 2>&1 && fail "offline of region 99 succeeded"
cat /tmp/out
grep -q 'no region 99' /tmp/out || fail "no clear message for region 99"
snapshot >/tmp/after
cmp -s /tmp/before /tmp/after || fail "blocks changed"
echo "every block as it was: $(wc -l </tmp/after) blocks"
