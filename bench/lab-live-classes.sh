#!/bin/sh
# The allocator in the loop, live, in the VM lab: the control group's guest test
# tests/lab/guest/control/70-live-classes.sh alone in one boot (mr-live-sites for 60 s
# under libmemreg.so, alone and under `memregctl control --classes --apply` with the
# damon backend, side by side); prints every round's classes, both hot-set
# inflations, and exits 1 when the controlled one is above the goal (1.5) or the
# sites' classes are the wrong way round.
# Usage: bench/lab-live-classes.sh [BUILD-DIR]   (default: MEMREG_BUILD or ./build)
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-${MEMREG_BUILD:-$top/build}}
[ -x "$build/tools/memregctl" ] || { echo "lab-live-classes.sh: no memreg build at $build" >&2; exit 1; }
exec flock "${TMPDIR:-/tmp}/memreg-lab-boot.lock" "$top/scripts/lab" --build "$build" \
	--timeout 900 -- sh -c "$(cat "$top/tests/lab/guest/control/70-live-classes.sh")" \
	lab-live-classes
