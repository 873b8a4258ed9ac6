#!/bin/sh
# softdirty works on the lab's 6.12 kernel (its self-test passes) and reads stairs'
# working set as 9-11 MiB at the median. Attributes fitted to the emulated guest
# (which may get little host CPU when make check runs other things beside it):
# phases 4 s (--time-scale 0.8), sampling 200 ms, aggregation 1 s (5 samples),
# update 2 s, 10..1000 regions; working set: written in at least 3 of 5 samples.
# (helpers: the runner copies only *.sh, so each test carries its own)
fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
cfgdir=/usr/share/memreg/configs

# wss_in BACKEND CONFIG TIME_SCALE ATTRS MIN_ACCESSES LO_MIB HI_MIB [--apply]
wss_in() {
	b=$1 cfg=$2 scale=$3 attrs=$4 min=$5 lo=$6 hi=$7 apply=${8:-}
	rec=/tmp/$b-$cfg.rec
	memregctl record -b "$b" $apply -a "$attrs" -o "$rec" -- \
		memreg-accessgen -t "$scale" "$cfgdir/$cfg" || fail "record $b $cfg"
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
wss_in softdirty stairs 0.8 200000,1000000,2000000,10,1000 3 9 11
