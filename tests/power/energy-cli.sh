#!/bin/sh
# memregctl energy's command line: bad input gives one line and exit 1 or 2.
. "$top_srcdir/tests/power/lib.sh"
M=$(fixture energy-intel-2s)

check() { # WHAT STATUS PATTERN -- ARGS...
	what=$1 st=$2 pat=$3; shift 4
	"$MEMREGCTL" energy "$@" > "$tmp/out" 2>&1
	expect_eq "$what: exit" "$st" $?
	expect_grep "$what: message" "$pat" "$tmp/out"
}
check "unknown source" 1 "unknown energy source 'bogus'" -- --root "$M" --source bogus -- true
check "no command" 2 "no command given" -- --root "$M"
check "bad interval" 2 "--interval: bad time 'abc'" -- --root "$M" --interval abc -- true
check "interval below 1 ms" 2 "--interval: bad time '0.5ms'" -- --root "$M" --interval 0.5ms -- true
check "count without sample" 2 "--count needs --sample" -- --root "$M" --count 2 -- true
check "missing root" 1 "/nonexistent" -- --root /nonexistent -- true
echo '{"scope":"physical"}' > "$tmp/bad.json"
check "residency without interval" 1 "bad.json: \"interval_us\" missing" -- --root "$M" --residency "$tmp/bad.json" -- true
echo '{"scope":"physical","interval_us":1,"regions":[{"id":0,"intervals":1,"idle_intervals":2}]}' > "$tmp/bad.json"
check "residency idle > total" 1 "idle_intervals > intervals" -- --root "$M" --residency "$tmp/bad.json" -- true
check "record file missing" 1 "$tmp/x: No such file" -- --root "$M" --record "$tmp/x" -- true
echo garbage > "$tmp/x"
check "record file not a record" 1 "$tmp/x" -- --root "$M" --record "$tmp/x" -- true
check "record and residency" 2 "choose one" -- --root "$M" --record "$tmp/x" --residency "$tmp/x" -- true
check "not a DRAM perf event" 1 "not a DRAM energy event" -- --root "$M" --source perf --event rapl::RAPL_ENERGY_PKG -- true
check "command not found" 127 "no-such-command" -- --root "$M" -- no-such-command-xyz
"$MEMREGCTL" energy --help > "$tmp/out"
expect_eq "--help exit" 0 $?
expect_grep "--help usage" "Usage: memregctl energy" "$tmp/out"
finish
