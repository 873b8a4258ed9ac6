#!/bin/sh
# The allocator's node mode, physically: a program allocates 128 MiB with malloc on
# CPU 1 (node 1), then writes it for the first time from CPU 0 (node 0). Under glibc
# (the control) the pages follow the first touch to node 0. Under libmemreg.so each
# region is bound (MPOL_PREFERRED) to the node of the thread that took it, so the
# pages stay on node 1: where regions are nodes, packing never turns local memory
# remote. memregctl where counts the bytes per node; the data is checked intact.
. /lab/tests/lib
SIZE=$((128 << 20))
lib=/usr/lib/libmemreg.so
[ -f "$lib" ] || fail "$lib is not installed in the guest"
[ "$(cat /proc/sys/kernel/numa_balancing 2>/dev/null)" = 0 ] ||
	fail "numa_balancing is on: pages would move under the test"

# run LABEL [PRELOAD]: start the program, wait for "ready", print bytes per node.
run() {
	rm -f /tmp/alloc-node.out
	if [ -n "$2" ]; then
		LD_PRELOAD=$2 mr-alloc-node 128M 1 0 >/tmp/alloc-node.out 2>&1 &
	else
		mr-alloc-node 128M 1 0 >/tmp/alloc-node.out 2>&1 &
	fi
	pid=$!
	wait_ready /tmp/alloc-node.out "$1: mr-alloc-node did not start" 600
	n0=$(node_bytes 0) n1=$(node_bytes 1)
	echo "$1: node 0 regions hold $n0 bytes, node 1 regions $n1 bytes"
	kill "$pid"
	wait "$pid" || fail "$1: data not intact: $(cat /tmp/alloc-node.out)"
	pid=
}

run glibc
[ "$n0" -ge $((SIZE * 3 / 4)) ] ||
	fail "control: under glibc the first touch on node 0 should place most pages there"
run libmemreg "$lib"
[ "$n1" -ge $((SIZE * 3 / 4)) ] ||
	fail "libmemreg: $n1 bytes on node 1, expected >= $((SIZE * 3 / 4)) (the allocating thread's node)"
[ "$n0" -lt $((SIZE / 8)) ] || fail "libmemreg: $n0 bytes followed the first touch to node 0"
echo "PASS: libmemreg keeps a region on the node of the thread that allocated it"
