#!/bin/sh
# memregctl energy --record on a stairs run in the guest: the access record of the
# same run (physical, DAMON paddr) gives per-region low-power residency. Needs the
# monitor's `memregctl record` and its access-pattern generator.
fail() { echo "FAIL: $*"; cat /tmp/rec-energy.out 2>/dev/null; exit 1; }

if ! memregctl help 2>&1 | grep -q '^  record '; then
	echo "SKIP: this build has no 'memregctl record' (the monitor's commands have not landed)"
	exit 77
fi
gen=$(command -v memreg-accessgen || true)
if [ -z "$gen" ]; then
	echo "SKIP: no memreg-accessgen (stairs workload) in this build"
	exit 77
fi
rm -f /tmp/stairs.rec
memregctl energy --record /tmp/stairs.rec -- \
	memregctl record --backend damon -o /tmp/stairs.rec -- "$gen" stairs \
	> /tmp/rec-energy.out 2>&1
st=$?
cat /tmp/rec-energy.out
if grep -q "process-scoped record" /tmp/rec-energy.out; then
	echo "SKIP: memregctl record wrote a process-scoped record; per-region residency needs a physical one"
	exit 77
fi
[ "$st" -eq 0 ] || fail "exit status $st"
grep -q "^region " /tmp/rec-energy.out || fail "no per-region table"
grep -q "residency: physical access data from /tmp/stairs.rec" /tmp/rec-energy.out ||
	fail "residency not from the record"
exit 0
