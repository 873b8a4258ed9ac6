#!/bin/sh
# memregctl energy on an Intel client fixture (no DRAM domain anywhere), also with
# DDR5 DIMMs (the model's DDR5 row), and on an AMD fixture (package energy only):
# auto falls back to the model and says why.
. "$top_srcdir/tests/power/lib.sh"

M=$(fixture energy-client)
"$MEMREGCTL" energy --root "$M" -- true > "$tmp/out" 2>&1
expect_eq "client exit" 0 $?
expect_grep "client: powercap has no dram zone, lists the zones" "powercap not usable: .*no dram zone (zones: .*uncore" "$tmp/out"
expect_grep "client: perf has no energy-ram" "perf not usable: .*no energy-ram event (events: energy-" "$tmp/out"
expect_grep "client: MSR 0x619 unreadable" "msr not usable: /dev/cpu/0/msr: MSR 0x619 not readable" "$tmp/out"
expect_grep "client: picked the model" "auto: picked model" "$tmp/out"
expect_grep "client: labelled modelled" "(modelled)" "$tmp/out"
expect_grep "client: devices by capacity" "devices by capacity" "$tmp/out"
"$MEMREGCTL" energy --root "$M" --source powercap -- true > "$tmp/out" 2>&1
expect_eq "client --source powercap exits 1" 1 $?

# The same client made an Alder Lake-S (model 151: DDR5 capable, still no DRAM
# domain) with two 8 GiB DDR5 DIMMs (SMBIOS memory type 0x22, no ECC): the model
# takes the DDR5 row, 16 Gb devices: 16 GiB / 2 GiB = 8 devices for node 0. Per
# device 167.432692 mW active, 108.032692 mW in precharge power-down
# (tests/power/test-model.c): x 8 = 1.339 W and 0.864 W.
sed 's/^model\t\t: 158$/model\t\t: 151/' "$M/proc/cpuinfo" > "$tmp/cpuinfo" && cp "$tmp/cpuinfo" "$M/proc/cpuinfo"
for n in 0 1; do sh "$top_srcdir/tests/power/mkfixtures.sh" --dimm "$M" $n 8192 64 64 34 || exit 99; done
cat > "$tmp/res.json" <<'JSON'
{ "scope": "physical", "interval_us": 100000, "source": "fixture",
  "regions": [ { "id": 0, "intervals": 10, "idle_intervals": 5 } ] }
JSON
"$MEMREGCTL" energy --root "$M" --residency "$tmp/res.json" -- true > "$tmp/out" 2>&1
expect_eq "ddr5 exit" 0 $?
expect_grep "ddr5: the DDR5 row" "modelled, per region with low-power residency from the access data, DDR5-4800 16Gb (Micron 16Gb DDR5 die rev. A)" "$tmp/out"
expect_eq "ddr5: devices from DMI" "8.0 (dmi)" "$(region_col "$tmp/out" 0 5) $(region_col "$tmp/out" 0 6)"
expect_eq "ddr5: active W" 1.339 "$(region_col "$tmp/out" 0 7)"
expect_eq "ddr5: low W" 0.864 "$(region_col "$tmp/out" 0 8)"
expect_grep "ddr5: says VPP current is missing" "no VPP current in the source" "$tmp/out"
if grep -q "DDR4" "$tmp/out"; then fail "ddr5: no DDR4 figures"; cat "$tmp/out"; else pass "ddr5: no DDR4 figures"; fi

M=$(fixture energy-amd)
"$MEMREGCTL" energy --root "$M" -- true > "$tmp/out" 2>&1
expect_eq "amd exit" 0 $?
expect_grep "amd: powercap has no dram zone" "no dram zone (zones: package-0, core)\|no dram zone (zones: core, package-0)" "$tmp/out"
expect_grep "amd: perf has only energy-pkg" "no energy-ram event (events: energy-pkg)" "$tmp/out"
expect_grep "amd: no DRAM MSR" "AuthenticAMD CPU: no DRAM energy MSR" "$tmp/out"
"$MEMREGCTL" energy --root "$M" --json -- true 2>&1 > /dev/null | tr -d ' \n' > "$tmp/json"
expect_grep "amd: model source" '"source":"model"' "$tmp/json"
expect_grep "amd: not measured" '"measured":false' "$tmp/json"
finish
