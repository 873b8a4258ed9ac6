#!/bin/sh
# The guest side of bench/hansen.sh (run in the VM lab by scripts/lab, busybox sh).
# Every measurement starts from an empty page cache (drop_caches, in the guest only),
# then mr-readbench reads /data/set once in order and SECONDS of random 64 KiB blocks.
# One "hansen ..." line per measurement on stdout; the host script parses them.
#   hansen-guest.sh SECONDS boot LABEL     scenario 1: this guest, as booted
#   hansen-guest.sh SECONDS evacuate SIZE  scenario 3: measure, evacuate SIZE, measure,
#                                          evacuate SIZE more, measure
#   hansen-guest.sh SECONDS overhead N     scenario 2: N rounds of memreg off / on
set -u
secs=$1 mode=$2 arg=$3
set=${LAB_DATA:-/data/set}
[ -r "$set" ] || { echo "hansen: no data set at $set (scripts/lab --data)"; exit 1; }

memtotal_kib() { awk '/^MemTotal:/ {print $2}' /proc/meminfo; }

# measure SCENARIO LABEL [COMMAND-PREFIX...]: one measurement, one line.
measure() {
	scen=$1 label=$2
	shift 2
	sync
	echo 3 >/proc/sys/vm/drop_caches
	out=$("$@" mr-readbench run "$set" "$secs" 2>&1) || { echo "$out"; echo "hansen: $label failed"; exit 1; }
	line=$(printf '%s\n' "$out" | grep '^readbench ')
	[ -n "$line" ] || { echo "$out"; echo "hansen: $label printed no result"; exit 1; }
	echo "hansen scenario=$scen label=$label memtotal_kib=$(memtotal_kib) ${line#readbench }"
}

case $mode in
boot)
	measure 1 "$arg"
	;;
evacuate)
	measure 3 evacuated=0
	for step in 1 2; do
		sync
		echo 3 >/proc/sys/vm/drop_caches
		memregctl plan --free "$arg" -o /tmp/step$step.plan >/tmp/plan.out 2>&1 ||
			{ cat /tmp/plan.out; echo "hansen: plan --free $arg failed"; exit 1; }
		memregctl evacuate /tmp/step$step.plan --apply --json >/tmp/evac.json 2>/tmp/evac.err ||
			{ cat /tmp/evac.json /tmp/evac.err; echo "hansen: evacuate failed"; exit 1; }
		j=$(tr -d ' \n\t' </tmp/evac.json)
		echo "hansen-evacuate step=$step $(printf '%s' "$j" | grep -o '"regions_offline":[0-9]*' | head -n 1 | tr -d '"' | tr : =)" \
			"$(printf '%s' "$j" | grep -o '"seconds":[0-9.e+-]*' | head -n 1 | tr -d '"' | tr : =)"
		measure 3 "evacuated=$step"
	done
	;;
overhead)
	# memreg on: the one-region map of the fixed source, the allocator at its largest
	# region size under the workload, and the controller watching it with a stat-only
	# scheme (DAMON), all running while it runs; nothing to manage on one node.
	memregctl regions --source fixed --region-size 1G >/tmp/regions.out 2>&1 ||
		{ cat /tmp/regions.out; echo "hansen: regions --source fixed failed"; exit 1; }
	head -n 3 /tmp/regions.out
	i=0
	while [ "$i" -lt "$arg" ]; do
		i=$((i + 1))
		measure 2 off
		measure 2 on env MEMREG_REGION_SIZE=1G memregctl control --apply \
			--scheme '4K max 0 0 5s max stat' -- env LD_PRELOAD=/usr/lib/libmemreg.so \
			MEMREG_REGION_SIZE=1G
	done
	;;
*)
	echo "hansen-guest.sh: unknown mode '$mode'"
	exit 2
	;;
esac
