#!/bin/sh
# Watermarks around the guest's measured free memory rate (MemFree/MemTotal, the
# metric memreg reads, in per-mille): a stat scheme is inactive when the rate is
# above high, active below mid (and above low), inactive below low; read from the
# statistics of a 3 s dry run over a process memreg starts (refs backend).
. /lab/tests/lib
free=$(awk '/^MemTotal:/ { t = $2 } /^MemFree:/ { f = $2 } END { print int(f * 1000 / t) }' /proc/meminfo)
echo "free memory rate: $free per-mille"
# margins: 60 per-mille below the rate, u above it (at most 60, three of them fit
# under 1000)
u=$(((1000 - free) / 3))
[ $u -le 60 ] || u=60
[ "$free" -ge 120 ] && [ $u -ge 8 ] || skip "free rate $free per-mille leaves no room for the margins"
# check NAME HIGH MID LOW WANT_ACTIVE
check() {
	memregctl control --backend refs -a 20000,100000,1000000 --duration 3s --json \
		--scheme "min max min max min max stat
  watermarks free_mem_rate 100ms high $2 mid $3 low $4" -- mr-hotcold 4M 8M >/tmp/wm.json 2>/tmp/wm.err
	rc=$?
	[ $rc -eq 0 ] || { cat /tmp/wm.err; fail "$1: control exit $rc"; }
	tried=$(json_field /tmp/wm.json nr_tried)
	active=$(grep -o '"active":[a-z]*' /tmp/wm.json | head -1 | cut -d: -f2)
	echo "$1: high $2 mid $3 low $4: active $active, nr_tried $tried"
	if [ "$5" = true ]; then
		[ "$active" = true ] && [ "$tried" -gt 0 ] || fail "$1: want active and tried"
	else
		[ "$active" = false ] && [ "$tried" = 0 ] || fail "$1: want inactive and nothing tried"
	fi
}
check above-high $((free - 60)) $((free - 90)) $((free - 120)) false
check below-mid $((free + 2 * u)) $((free + u)) $((free - 60)) true
check below-low $((free + 3 * u)) $((free + 2 * u)) $((free + u)) false
echo "PASS: watermarks: inactive above high, active below mid, inactive below low"
