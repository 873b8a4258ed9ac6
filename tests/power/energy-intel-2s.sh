#!/bin/sh
# memregctl energy on a two-socket Broadwell-EP fixture: powercap deltas with a
# wraparound at max_energy_range_uj, the msr path with the fixed 15.3 uJ DRAM unit
# and its 32-bit wrap, the unit from MSR 0x606 on a model without the quirk, and
# per-region energy calibrated to the measured total.
. "$top_srcdir/tests/power/lib.sh"
M=$(fixture energy-intel-2s)
PC=$M/sys/class/powercap
MSR="sh $top_srcdir/tests/power/mkfixtures.sh --msr"

# powercap: socket 0 1000000 -> 3500000 uJ; socket 1 wraps: max 262143328850,
# 262143328000 -> 1000: (262143328850 + 1 - 262143328000) + 1000 = 1851 uJ.
"$MEMREGCTL" energy --root "$M" -- sh -c "
	echo 3500000 > '$PC/intel-rapl:0:0/energy_uj'
	echo 1000 > '$PC/intel-rapl:1:0/energy_uj'
	exit 5" > "$tmp/out" 2>&1
expect_eq "exit status is COMMAND's" 5 $?
expect_grep "auto picked powercap" "auto: picked powercap" "$tmp/out"
expect_grep "labelled measured" "(measured)" "$tmp/out"
expect_eq "powercap socket 0 J" 2.500000 "$(socket_j "$tmp/out" 0)"
expect_eq "powercap socket 1 J (wrapped)" 0.001851 "$(socket_j "$tmp/out" 1)"
expect_eq "powercap total J" 2.501851 "$(total_j "$tmp/out")"

# JSON: the same kind of figures in stable fields (socket 0: +100000 uJ), on stderr.
"$MEMREGCTL" energy --root "$M" --json -- sh -c "echo 3600000 > '$PC/intel-rapl:0:0/energy_uj'" \
	2>&1 > /dev/null | tr -d ' \n' > "$tmp/json"
expect_grep "json socket 0 energy_uj" '"socket":0,"counter":"intel-rapl:0:0","energy_uj":100000' "$tmp/json"
expect_grep "json source" '"source":"powercap","source_detail"' "$tmp/json"
expect_grep "json measured" '"measured":true' "$tmp/json"

# msr, fixed unit: cpu0 (socket 0) 0xffffff00 -> 0x100 wraps at 2^32: 0x200 counts
# x 15.3 uJ = 7833.6 uJ; cpu2 (socket 1) 1000 -> 66536: 65536 x 15.3 = 1002700.8 uJ.
"$MEMREGCTL" energy --root "$M" --source msr -- sh -c "
	$MSR '$M/dev/cpu/0/msr' 0x619 0x100; $MSR '$M/dev/cpu/2/msr' 0x619 66536" > "$tmp/out" 2>&1
expect_eq "msr exit status" 0 $?
expect_grep "msr fixed-unit note names the model" "Broadwell-EP" "$tmp/out"
expect_eq "msr socket 0 J (wrapped, 15.3 uJ)" 0.007834 "$(socket_j "$tmp/out" 0)"
expect_eq "msr socket 1 J (15.3 uJ)" 1.002701 "$(socket_j "$tmp/out" 1)"

# msr, unit from 0x606 on a model without the quirk (Sapphire Rapids, 0x8f):
# ESU 14 -> 2^-14 J = 61.03515625 uJ; 16384 counts = 1 J.
sed 's/^model\t\t: 79$/model\t\t: 143/' "$M/proc/cpuinfo" > "$tmp/cpuinfo" && cp "$tmp/cpuinfo" "$M/proc/cpuinfo"
"$MEMREGCTL" energy --root "$M" --source msr -- sh -c "
	$MSR '$M/dev/cpu/0/msr' 0x619 16640; $MSR '$M/dev/cpu/2/msr' 0x619 99304" > "$tmp/out" 2>&1
expect_eq "msr (no quirk) socket 0 J" 1.000000 "$(socket_j "$tmp/out" 0)"
expect_eq "msr (no quirk) socket 1 J" 2.000000 "$(socket_j "$tmp/out" 1)"
if grep -q "fixed at" "$tmp/out"; then fail "no fixed-unit note on model 0x8f"; cat "$tmp/out"; else pass "no fixed-unit note on model 0x8f"; fi

# perf on a fixture: the system call is real, so it must fail cleanly (exit 1, one line).
"$MEMREGCTL" energy --root "$M" --source perf -- true > "$tmp/out" 2>&1
expect_eq "perf on a fixture exits 1" 1 $?
expect_grep "perf names the event it opened" "perf_event_open(power/energy-ram/, cpu 0)" "$tmp/out"

# Per-region energy, calibrated: two 32 GiB nodes, 36 DMI devices each (4 x 16 GiB
# ECC DIMMs = 72 devices). Region 0 idle half the intervals, region 1 never:
# E0/E1 = (0.5 x 70.246 + 0.5 x 48.646) / 70.246 = 0.846252 (per-device mW), so
# of the measured 1 J: E1 = 1 / 1.846252 = 0.541637, E0 = 0.458363, and region 0
# saves E1 - E0 = 0.083274 J against all active.
cat > "$tmp/res.json" <<'JSON'
{ "scope": "physical", "interval_us": 100000, "source": "fixture",
  "regions": [ { "id": 0, "intervals": 10, "idle_intervals": 5 },
               { "id": 1, "intervals": 10, "idle_intervals": 0 } ] }
JSON
"$MEMREGCTL" energy --root "$M" --residency "$tmp/res.json" -- sh -c "
	echo 4600000 > '$PC/intel-rapl:0:0/energy_uj'" > "$tmp/out" 2>&1
expect_eq "region 0 devices" "36.0" "$(region_col "$tmp/out" 0 5)"
expect_eq "region 0 active W" 2.529 "$(region_col "$tmp/out" 0 7)"
expect_eq "region 0 low W" 1.751 "$(region_col "$tmp/out" 0 8)"
expect_eq "region 0 low-power residency" 50.0% "$(region_col "$tmp/out" 0 9)"
expect_eq "region 0 J" 0.458363 "$(region_col "$tmp/out" 0 10)"
expect_eq "region 1 J" 0.541637 "$(region_col "$tmp/out" 1 10)"
expect_eq "region 0 saving J" 0.083274 "$(region_col "$tmp/out" 0 11)"
expect_grep "labelled modelled and calibrated" "modelled (DDR4-2400.*calibrated to the measured total" "$tmp/out"
expect_grep "says why not per socket" "not per socket: region 0 (node 0) has no known socket" "$tmp/out"
expect_grep "labelled an upper bound" "upper bounds" "$tmp/out"
expect_grep "devices from DMI" "36.0 (dmi)" "$tmp/out"
expect_rows_add_up "calibrated to the total: rows and total" "$tmp/out"

# Per socket: with nodeN/cpulist, node 0 -> cpus 0-1 -> package 0 and node 1 -> cpus
# 2-3 -> package 1, so each region is scaled to its own socket's RAPL figure:
# socket 0 measures 1 J (4600000 -> 5600000 uJ), socket 1 0.5 J (1000 -> 501000),
# so region 0 = 1 J and region 1 = 0.5 J whatever the model's ratio; region 0 saves
# 1 x (1 / 0.846252 - 1) = 0.181677 J against all active.
echo 0-1 > "$M/sys/devices/system/node/node0/cpulist"
echo 2-3 > "$M/sys/devices/system/node/node1/cpulist"
"$MEMREGCTL" energy --root "$M" --residency "$tmp/res.json" -- sh -c "
	echo 5600000 > '$PC/intel-rapl:0:0/energy_uj'
	echo 501000 > '$PC/intel-rapl:1:0/energy_uj'" > "$tmp/out" 2>&1
expect_eq "per socket: region 0 J (socket 0)" 1.000000 "$(region_col "$tmp/out" 0 10)"
expect_eq "per socket: region 1 J (socket 1)" 0.500000 "$(region_col "$tmp/out" 1 10)"
expect_eq "per socket: region 0 saving J" 0.181677 "$(region_col "$tmp/out" 0 11)"
expect_grep "labelled per socket" "calibrated per socket to the measured energy: socket 0 x.* (1 region(s)), socket 1 x.* (1 region(s))" "$tmp/out"
expect_rows_add_up "per socket: rows and total" "$tmp/out"
"$MEMREGCTL" energy --root "$M" --residency "$tmp/res.json" --json -o "$tmp/json.out" -- sh -c "
	echo 6600000 > '$PC/intel-rapl:0:0/energy_uj'"
tr -d ' \n' < "$tmp/json.out" > "$tmp/json"
expect_grep "json calibration per-socket" '"calibration":"per-socket"' "$tmp/json"
expect_grep "json region socket" '"id":1,"node":1,"socket":1' "$tmp/json"
# A memory-only node (no CPUs) cannot be put on a socket: back to the total, labelled.
: > "$M/sys/devices/system/node/node1/cpulist"
"$MEMREGCTL" energy --root "$M" --residency "$tmp/res.json" -- sh -c "
	echo 7600000 > '$PC/intel-rapl:0:0/energy_uj'" > "$tmp/out" 2>&1
expect_grep "memory-only node: total, with the reason" "calibrated to the measured total (factor .*), not per socket: region 1 (node 1) has no known socket (node 1 has no CPUs (memory only))" "$tmp/out"
expect_eq "total calibration: region 0 J" 0.458363 "$(region_col "$tmp/out" 0 10)"
expect_rows_add_up "memory-only node: rows and total" "$tmp/out"

# Process-scoped residency is labelled so.
sed 's/physical/process/' "$tmp/res.json" > "$tmp/res-p.json"
"$MEMREGCTL" energy --root "$M" --residency "$tmp/res-p.json" -- true > "$tmp/out" 2>&1
expect_grep "process-scoped label" "process-scoped" "$tmp/out"

# --sample: one line per interval; the counters do not move, so 0 W.
"$MEMREGCTL" energy --root "$M" --sample --interval 10 --count 2 > "$tmp/out" 2>&1
expect_eq "sample exit" 0 $?
expect_eq "sample lines" 3 "$(wc -l < "$tmp/out" | tr -d ' ')"
expect_eq "sample total W" 0.000 "$(awk 'NR == 3 { print $4 }' "$tmp/out")"
finish
