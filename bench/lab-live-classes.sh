#!/bin/sh
# The allocator in the loop, live, in the VM lab: the control group's guest test
# tests/lab/guest/control/70-live-classes.sh alone in one boot (mr-live-sites for 60 s
# under libmemreg.so, alone and under `memregctl control --classes --apply` with the
# damon backend, side by side); prints every round's classes, both hot-set
# inflations, and exits 1 when the controlled one is above the goal (1.5) or the
# sites' classes are the wrong way round. RUNS > 1 repeats the test in the same boot
# (each run a fresh pair of processes and a fresh DAMON setup) and exits 1 if any
# run failed.
# Usage: bench/lab-live-classes.sh [BUILD-DIR [RUNS]]   (default: MEMREG_BUILD or ./build; 1)
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-${MEMREG_BUILD:-$top/build}}
runs=${2:-1}
[ -x "$build/tools/memregctl" ] || { echo "lab-live-classes.sh: no memreg build at $build" >&2; exit 1; }
case $runs in ''|*[!0-9]*|0) echo "lab-live-classes.sh: RUNS must be a positive number" >&2; exit 2 ;; esac
exec flock "${TMPDIR:-/tmp}/memreg-lab-boot.lock" "$top/scripts/lab" --build "$build" \
	--timeout $((300 + 150 * runs)) -- sh -c '
n=$1 i=1 failed=0
while [ $i -le $n ]; do
	echo "== lab-live-classes: run $i of $n"
	sh -c "$2" lab-live-classes || failed=$((failed + 1))
	i=$((i + 1))
done
echo "== lab-live-classes: $failed of $n runs failed"
[ $failed -eq 0 ]' lab-live-classes "$runs" "$(cat "$top/tests/lab/guest/control/70-live-classes.sh")"
