#!/bin/sh
# DAMON (vaddr) reads zigzag's working set as 90-110 MiB at the median. Attributes
# as in 30-damon-stairs.sh: phases 4 s, 50 ms / 1 s / 2 s, 100..1000 regions,
# 5 of 20 samples.
# (helpers: the runner copies only *.sh, so each test carries its own)
fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
cfgdir=/usr/share/memreg/configs

# QEMU TCG keeps a page's translation in its software TLB until the vCPU flushes
# it, and sets the PTE's accessed bit only when it walks the page table again.
# DAMON clears accessed bits without a TLB flush (as the kernel does on x86), so
# on a vCPU that never switches address spaces the bits stay clear and DAMON reads
# almost no accesses, however hot the memory (real CPUs evict TLB entries far
# sooner). A process waking every 10 ms on each CPU makes each vCPU switch
# address spaces (a CR3 write: QEMU flushes its TLB) several times per sample.
tickers=
start_tickers() {
	c=0
	while [ $c -lt "$(nproc)" ]; do
		taskset -c $c sh -c 'while :; do usleep 10000; done' &
		tickers="$tickers $!"
		c=$((c + 1))
	done
}
stop_tickers() { [ -z "$tickers" ] || kill $tickers 2>/dev/null; tickers=; }
trap stop_tickers EXIT

# wss_in BACKEND CONFIG TIME_SCALE ATTRS MIN_ACCESSES LO_MIB HI_MIB [--apply]
wss_in() {
	b=$1 cfg=$2 scale=$3 attrs=$4 min=$5 lo=$6 hi=$7 apply=${8:-}
	rec=/tmp/$b-$cfg.rec
	memregctl record -b "$b" $apply -a "$attrs" -o "$rec" -- \
		memreg-accessgen -t "$scale" "$cfgdir/$cfg" 2>/tmp/$b-record.err ||
		{ cat /tmp/$b-record.err; fail "record $b $cfg"; }
	cat /tmp/$b-record.err
	memregctl report wss --min-accesses "$min" "$rec"
	memregctl report heatmap --width 72 --height 16 "$rec"
	p50=$(memregctl report wss --json --min-accesses "$min" "$rec" |
		sed -n 's/^ *"p50": *\([0-9]*\).*/\1/p')
	[ -n "$p50" ] || fail "no p50"
	if [ "$p50" -lt $((lo << 20)) ] || [ "$p50" -gt $((hi << 20)) ]; then
		fail "$b $cfg median working set $p50 bytes, want $lo..$hi MiB"
	fi
	echo "PASS: $b $cfg median working set $p50 bytes within $lo..$hi MiB"
}
[ -e /sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds ] || skip "no DAMON sysfs in this kernel"
start_tickers
wss_in damon zigzag 0.8 50000,1000000,2000000,100,1000 5 90 110 --apply
[ "$(cat /sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds)" = 0 ] || fail "nr_kdamonds left non-zero"
# the lab mounts tracefs: snapshots must come from damon:damon_aggregated, and the
# backend's tracefs instance must be gone afterwards
t=/sys/kernel/tracing
if [ -e $t/events/damon/damon_aggregated ]; then
	grep -q "damon_aggregated tracepoint" /tmp/damon-record.err ||
		fail "snapshots not read from the damon_aggregated tracepoint"
	! ls $t/instances | grep -q memreg || fail "tracefs instance left: $(ls $t/instances)"
fi
