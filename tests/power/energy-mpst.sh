#!/bin/sh
# The MPST power states of the regions helper's two-socket fixture feed the model end
# to end: per-region power from the MPST characteristics (state 0 5000 mW, state 1
# 600 mW entered by the platform itself), residency from a JSON input.
. "$top_srcdir/tests/power/lib.sh"
M=$top_builddir/tests/fixtures/server-2s-mpst
if [ ! -f "$M/sys/firmware/acpi/tables/MPST" ]; then
	echo "SKIP: $M has no compiled MPST (regions fixtures not built)"
	exit 77
fi
cat > "$tmp/res.json" <<'JSON'
{ "scope": "physical", "interval_us": 100000,
  "regions": [ { "id": 0, "intervals": 10, "idle_intervals": 5 },
               { "id": 3, "intervals": 10, "idle_intervals": 10 } ] }
JSON
# sleep only makes the energies large enough for 6 decimals; nothing checks time.
"$MEMREGCTL" energy --root "$M" --residency "$tmp/res.json" -- sleep 0.2 > "$tmp/out" 2>&1
expect_eq "exit" 0 $?
expect_grep "model picked on a machine without RAPL" "auto: picked model" "$tmp/out"
expect_grep "model from MPST" "modelled (MPST power states)" "$tmp/out"
expect_eq "regions" 8 "$(awk 'f && /^[0-9]/ { n++ } /^region / { f = 1 } END { print n }' "$tmp/out")"
expect_eq "region 0 active W (MPST state 0)" 5.000 "$(region_col "$tmp/out" 0 7)"
expect_eq "region 0 low W (MPST state 1, auto entry)" 0.600 "$(region_col "$tmp/out" 0 8)"
expect_eq "region 3 residency" 100.0% "$(region_col "$tmp/out" 3 9)"
# Same elapsed for every region, so ratios are exact: region 3 always low, region 1
# always active: 600 / 5000; region 0 half and half: (2500 + 300) / 5000.
e1=$(region_col "$tmp/out" 1 10); e0=$(region_col "$tmp/out" 0 10); e3=$(region_col "$tmp/out" 3 10)
s0=$(region_col "$tmp/out" 0 11)
expect_eq "E3 / E1" 0.1200 "$(awk -v a="$e3" -v b="$e1" 'BEGIN { printf "%.4f", a / b }')"
expect_eq "E0 / E1" 0.5600 "$(awk -v a="$e0" -v b="$e1" 'BEGIN { printf "%.4f", a / b }')"
expect_eq "saving0 / E1" 0.4400 "$(awk -v a="$s0" -v b="$e1" 'BEGIN { printf "%.4f", a / b }')"
# One total: the model source's per-node table is its regions' sums, residency
# applied (it used to be every region active: 20.2 J beside rows of 4.7 J).
expect_rows_add_up "residency: rows and total" "$tmp/out"
expect_grep "residency: the source says residency is applied" \
	"^source    model: modelled, per region with low-power residency from the access data, MPST power states (modelled)$" "$tmp/out"
"$MEMREGCTL" energy --root "$M" --residency "$tmp/res.json" --json -- true 2>&1 > /dev/null |
	tr -d ' \n' > "$tmp/json"
expect_grep "json power_from mpst" '"power_from":"mpst"' "$tmp/json"
expect_grep "json low_state 1" '"low_state":1' "$tmp/json"
expect_grep "json upper bound flag" '"saving_is_upper_bound":true' "$tmp/json"
# --record end to end: the monitor's test helper writes a physical record of
# [0, 1 GiB) in 128 MiB pieces, [128, 256 MiB) accessed in all 4 snapshots. Region 0
# is [0, 1 GiB): busy every interval; no other region is in the record: all idle.
MK=$top_builddir/tests/monitor/mk-phys-record
if [ -x "$MK" ]; then
	"$MK" "$tmp/phys.rec" || fail "mk-phys-record"
	"$MEMREGCTL" energy --root "$M" --record "$tmp/phys.rec" -- true > "$tmp/out" 2>&1
	expect_eq "record: exit" 0 $?
	expect_eq "record: region 0 residency (busy)" 0.0% "$(region_col "$tmp/out" 0 9)"
	expect_eq "record: region 1 residency (idle)" 100.0% "$(region_col "$tmp/out" 1 9)"
	expect_eq "record: region 7 residency (idle)" 100.0% "$(region_col "$tmp/out" 7 9)"
	expect_grep "record: labelled physical, from the file" \
		"residency: physical access data from $tmp/phys.rec (damon backend, 4 intervals), interval 100000 us" "$tmp/out"
	expect_rows_add_up "record: rows and total" "$tmp/out"
	# Node 0's line is its regions' sum (region 0 busy, regions 1-3 idle), to the
	# rounding of four rows.
	n0=$(region_rows "$tmp/out" | awk '$2 == 0 { s += $10 } END { printf "%.6f", s }')
	l0=$(awk '$1 == "0" && $2 == "node" { print $5 }' "$tmp/out")
	if awk -v a="$n0" -v b="$l0" 'BEGIN { d = a - b; exit !(b != "" && d <= 0.000004 && d >= -0.000004) }'; then
		pass "record: node 0 ($l0 J) is its regions' sum"
	else
		fail "record: node 0 is '$l0' J, its regions add up to $n0 J"
	fi
	# A process record whose process is gone: refused, saying what to record.
	"$MK" "$tmp/proc.rec" process || fail "mk-phys-record process"
	"$MEMREGCTL" energy --root "$M" --record "$tmp/proc.rec" -- true > "$tmp/out" 2>&1
	expect_eq "process record of a gone pid: exit" 1 $?
	expect_grep "process record of a gone pid: why and what instead" \
		"pid 999999999 is gone; record physical memory instead (memregctl record --phys" "$tmp/out"
	# No region map with addresses (the NUMA-size fallback): refused, not misplaced.
	F=$(fixture energy-intel-2s)
	"$MEMREGCTL" energy --root "$F" --record "$tmp/phys.rec" -- true > "$tmp/out" 2>&1
	expect_eq "record on the NUMA-size fallback: exit" 1 $?
	expect_grep "record on the NUMA-size fallback: why" "cannot place the record's addresses: regions are NUMA nodes" "$tmp/out"
else
	echo "note: no $MK (monitor test helpers not built): --record end to end not run"
fi
finish
