#!/bin/sh
# Benchmark (not a test): bytes per second moving 256 MiB between two nodes of the lab
# guest with `memregctl move` and with numactl's `migratepages`, side by side in one
# guest, several runs, medians and their ratio. The guest is emulated (TCG): compare
# the two rates, never the absolute numbers with a real machine.
#   bench/lab-move.sh [SIZE [RUNS]]      (default 256M 5)
top=$(cd "$(dirname "$0")/.." && pwd)
exec "$top/scripts/lab" --timeout 1200 -- sh -c "$(cat "$top/bench/lab-move-guest.sh")" \
	lab-move "${1:-256M}" "${2:-5}"
