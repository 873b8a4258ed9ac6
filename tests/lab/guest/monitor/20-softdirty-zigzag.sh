#!/bin/sh
# softdirty reads zigzag's working set as 90-110 MiB at the median. Attributes as
# in 10-softdirty-stairs.sh: phases 4 s, 200 ms / 1 s / 2 s, 3 of 5 samples.
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
wss_in softdirty zigzag 0.8 200000,1000000,2000000,10,1000 3 90 110
