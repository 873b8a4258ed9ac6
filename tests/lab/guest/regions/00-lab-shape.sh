#!/bin/sh
# The lab machine is what the runner configured: $LAB_NODES nodes with memory, an MPST
# table, 128 MiB memory blocks, each node's DIMM blocks online in ZONE_MOVABLE and
# automatic NUMA balancing off.
fail() { echo "FAIL: $*"; exit 1; }

n=$(ls -d /sys/devices/system/node/node[0-9]* | wc -l)
[ "$n" -eq "$LAB_NODES" ] || fail "$n nodes, configured $LAB_NODES"
[ -e /sys/firmware/acpi/tables/MPST ] || fail "no MPST table"
[ "$(cat /proc/sys/kernel/numa_balancing)" = 0 ] || fail "numa_balancing is on"
bs=$(cat /sys/devices/system/memory/block_size_bytes)
[ "$((0x$bs))" -eq $((128 << 20)) ] || fail "block size 0x$bs, expected 128 MiB"

# DIMM i sits at 4 GiB + i * dimm-size, on node i, online movable.
per=$((LAB_DIMM_SIZE_BYTES / (128 << 20)))
i=0
while [ "$i" -lt "$LAB_NODES" ]; do
	b=0
	while [ "$b" -lt "$per" ]; do
		blk=$(( (1 << 32) / (128 << 20) + i * per + b ))
		d=/sys/devices/system/memory/memory$blk
		[ -d "$d/node$i" ] || fail "memory$blk is not on node $i"
		[ "$(cat $d/state)" = online ] || fail "memory$blk is $(cat $d/state)"
		[ "$(cat $d/valid_zones)" = Movable ] || fail "memory$blk zone $(cat $d/valid_zones)"
		b=$((b + 1))
	done
	echo "node $i: $(ls -d /sys/devices/system/node/node$i/memory[0-9]* | wc -l) blocks, DIMM movable"
	i=$((i + 1))
done
