#!/bin/sh
# memregctl energy in the lab guest: QEMU has no RAPL, so auto must pick the model
# and say why each counter source was not usable; the model's per-region figures
# come from the lab's MPST table; COMMAND's exit status comes back.
fail() { echo "FAIL: $*"; cat /tmp/energy.out 2>/dev/null; exit 1; }

memregctl energy -- sh -c 'exit 3' > /tmp/energy.out 2>&1
st=$?
cat /tmp/energy.out
[ "$st" -eq 3 ] || fail "exit status $st, COMMAND exited 3"
grep -q "auto: picked model" /tmp/energy.out || fail "auto did not pick the model"
grep -q "auto: powercap not usable" /tmp/energy.out || fail "no reason for powercap"
grep -q "auto: msr not usable" /tmp/energy.out || fail "no reason for msr"
grep -q "(modelled)" /tmp/energy.out || fail "not labelled modelled"

# Per-region figures with a residency input: the lab's regions come from its MPST.
echo '{"scope":"physical","interval_us":100000,"regions":[{"id":0,"intervals":4,"idle_intervals":4}]}' \
	> /tmp/res.json
memregctl energy --residency /tmp/res.json -- sleep 1 > /tmp/energy.out 2>&1 || fail "energy --residency failed"
cat /tmp/energy.out
grep -q "^region " /tmp/energy.out || fail "no per-region table"
grep -q "upper bounds" /tmp/energy.out || fail "saving not labelled an upper bound"
awk '/^region /{f=1; next} f && $1 == 0 { print $9 }' /tmp/energy.out | grep -q "100.0%" ||
	fail "region 0 not 100% low-power with every interval idle"
# One total: the regions add up to it (each row rounded to 1 uJ).
awk '/^total / { t = $2 } /^per-region energy:/ { f = 0 } f && /^[0-9]/ { s += $10; n++ }
	/^region / { f = 1 }
	END { d = s - t; if (d < 0) d = -d; exit !(n > 0 && d <= n * 0.000001) }' /tmp/energy.out ||
	fail "the region rows do not add up to the total"

# The report is on stderr: stdout is the command's alone.
memregctl energy -- echo hello > /tmp/energy.stdout 2> /tmp/energy.out || fail "energy -- echo failed"
[ "$(cat /tmp/energy.stdout)" = hello ] || fail "stdout is not the command's alone: $(cat /tmp/energy.stdout)"
grep -q "^command   echo ... exit 0$" /tmp/energy.out || fail "no report on stderr"

memregctl energy --sample --interval 200 --count 2 > /tmp/energy.out 2>&1 || fail "--sample failed"
cat /tmp/energy.out
[ "$(wc -l < /tmp/energy.out)" -eq 3 ] || fail "--sample --count 2 printed $(wc -l < /tmp/energy.out) lines"
exit 0
