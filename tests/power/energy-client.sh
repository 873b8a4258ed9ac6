#!/bin/sh
# memregctl energy on an Intel client fixture (no DRAM domain anywhere) and on an
# AMD fixture (package energy only): auto falls back to the model and says why.
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

M=$(fixture energy-amd)
"$MEMREGCTL" energy --root "$M" -- true > "$tmp/out" 2>&1
expect_eq "amd exit" 0 $?
expect_grep "amd: powercap has no dram zone" "no dram zone (zones: package-0, core)\|no dram zone (zones: core, package-0)" "$tmp/out"
expect_grep "amd: perf has only energy-pkg" "no energy-ram event (events: energy-pkg)" "$tmp/out"
expect_grep "amd: no DRAM MSR" "AuthenticAMD CPU: no DRAM energy MSR" "$tmp/out"
"$MEMREGCTL" energy --root "$M" --json -- true | tr -d ' \n' > "$tmp/json"
expect_grep "amd: model source" '"source":"model"' "$tmp/json"
expect_grep "amd: not measured" '"measured":false' "$tmp/json"
finish
