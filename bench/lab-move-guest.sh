#!/bin/sh
# Guest side of bench/lab-move.sh (runs in the lab guest, busybox sh): move SIZE of a
# program's memory from node 0 to node 1 with `memregctl move --apply` and with
# numactl's `migratepages`, alternating, RUNS times each; prints every run and the
# medians as a Markdown table. Wall time of each command, from mr-time.
SIZE=${1:-256M}
RUNS=${2:-5}
bytes=$(($(echo "$SIZE" | sed 's/M$//') << 20))
fail() { echo "bench: $*" >&2; exit 1; }
[ "$(cat /proc/sys/kernel/numa_balancing)" = 0 ] || fail "numa_balancing is on"
# The region to move to: node 1's highest region (its movable DIMM in the lab).
TO=$(memregctl regions --json --no-occupancy | tr -d ' \n\t' | sed 's/{"id":/\n&/g' |
	grep '"node":1,' | sed 's/^{"id":\([0-9]*\),.*/\1/' | tail -n 1)
[ -n "$TO" ] || fail "no region on node 1"

start_touch() {
	rm -f /tmp/touch.out
	mr-touch "$SIZE" 0 >/tmp/touch.out 2>&1 &
	pid=$!
	until grep -q '^ready' /tmp/touch.out 2>/dev/null; do sleep 0.1; done
}
stop_touch() {
	kill -USR1 "$pid"
	wait "$pid" || fail "mr-touch found its data changed: $(cat /tmp/touch.out)"
}
run() { # tool -> ns on stdout
	start_touch
	case $1 in
	memreg) mr-time memregctl move "$pid" --to "$TO" --apply >/tmp/cmd.out 2>/tmp/time.out ;;
	migratepages) mr-time migratepages "$pid" 0 1 >/tmp/cmd.out 2>/tmp/time.out ;;
	esac || fail "$1 failed: $(cat /tmp/cmd.out /tmp/time.out)"
	stop_touch
	sed -n 's/^elapsed_ns //p' /tmp/time.out
}
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : int((a[NR/2]+a[NR/2+1])/2)}'; }
mibs() { awk -v b="$bytes" -v ns="$1" 'BEGIN {printf "%.1f", b / 1048576 / (ns / 1e9)}'; }

: >/tmp/memreg.ns
: >/tmp/migratepages.ns
i=1
while [ "$i" -le "$RUNS" ]; do
	# Alternate which tool goes first, so neither always runs on a warmer machine.
	if [ $((i % 2)) -eq 1 ]; then order="memreg migratepages"; else order="migratepages memreg"; fi
	for t in $order; do
		ns=$(run "$t") || exit 1
		echo "$ns" >>/tmp/$t.ns
		echo "run $i $t: $ns ns, $(mibs "$ns") MiB/s"
	done
	i=$((i + 1))
done
m1=$(median </tmp/memreg.ns)
m2=$(median </tmp/migratepages.ns)
echo
echo "Moving $SIZE from node 0 to node 1 (region $TO), median of $RUNS runs, wall time of the command:"
echo
echo "| tool | median time | rate | runs (ms) |"
echo "|---|---|---|---|"
echo "| memregctl move --apply | $((m1 / 1000000)) ms | $(mibs "$m1") MiB/s | $(awk '{printf "%s%d", (NR > 1 ? " " : ""), $1 / 1000000}' /tmp/memreg.ns) |"
echo "| migratepages | $((m2 / 1000000)) ms | $(mibs "$m2") MiB/s | $(awk '{printf "%s%d", (NR > 1 ? " " : ""), $1 / 1000000}' /tmp/migratepages.ns) |"
echo
echo "rate ratio memreg / migratepages: $(awk -v a="$m1" -v b="$m2" 'BEGIN {printf "%.2f", b / a}')"
