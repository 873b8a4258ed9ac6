#!/bin/sh
# The cost of the live hand-over (docs/allocator.md, "The live hand-over"): alloc-bench
# workloads under glibc, libmemreg, libmemreg with MEMREG_TRACK_SITES=1, with
# MEMREG_EXPORT_STATS=1, and with both (the classes page polled on every allocation),
# interleaved run by run; median elapsed time and peak RSS of RUNS runs: libmemreg
# against glibc, tracking against plain libmemreg, and tracking + export against the
# export alone (the export's own cost is not the hand-over's). Not a test.
# Usage: bench/classes-cost.sh [-n RUNS] [-w "WORKLOADS"] [BUILDDIR]   (default 5)
set -u
RUNS=5
WORKLOADS="server prodcons churn realloc frag hotset"
while getopts n:w: o; do
	case $o in
	n) RUNS=$OPTARG ;;
	w) WORKLOADS=$OPTARG ;;
	*) echo "usage: $0 [-n RUNS] [-w WORKLOADS] [BUILDDIR]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
MEMREG=$build/.libs/libmemreg.so
[ -f "$MEMREG" ] || { echo "classes-cost: $MEMREG not built" >&2; exit 1; }
out=$(mktemp -d /tmp/classes-cost.XXXXXX)
trap 'rm -rf "$out"' EXIT
gcc -O2 -o "$out/alloc-bench" "$src/bench/alloc-bench.c" -lpthread || exit 1
CONFS="glibc memreg track export both"
run() {	# CONF WORKLOAD: "seconds kib" of one run
	case $1 in
	glibc) set -- "$2" env ;;
	memreg) set -- "$2" env LD_PRELOAD="$MEMREG" ;;
	track) set -- "$2" env LD_PRELOAD="$MEMREG" MEMREG_TRACK_SITES=1 ;;
	export) set -- "$2" env LD_PRELOAD="$MEMREG" MEMREG_EXPORT_STATS=1 ;;
	both) set -- "$2" env LD_PRELOAD="$MEMREG" MEMREG_TRACK_SITES=1 MEMREG_EXPORT_STATS=1 ;;
	esac
	w=$1
	shift
	/usr/bin/time -f '%e %M' -o "$out/t" "$@" "$out/alloc-bench" "$w" >/dev/null 2>&1 || return 1
	cat "$out/t"
}
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
printf '%-10s %22s %22s %22s   (time ratio, RSS ratio; median of %s)\n' workload \
	"memreg/glibc" "track/memreg" "track+export/export" "$RUNS"
for w in $WORKLOADS; do
	for r in $(seq "$RUNS"); do
		for c in $CONFS; do
			run "$c" "$w" >>"$out/$w.$c" || echo "classes-cost: $w under $c failed" >&2
		done
	done
	for c in $CONFS; do
		t=$(awk '{ print $1 }' "$out/$w.$c" | median)
		m=$(awk '{ print $2 }' "$out/$w.$c" | median)
		eval "t_$c=\$t m_$c=\$m"
	done
	awk -v w="$w" -v tg="$t_glibc" -v mg="$m_glibc" -v tm="$t_memreg" -v mm="$m_memreg" \
	    -v tt="$t_track" -v mt="$m_track" -v te="$t_export" -v me="$m_export" \
	    -v tb="$t_both" -v mb="$m_both" 'BEGIN {
		printf "%-10s %10.2f %10.2f  %10.2f %10.2f  %10.2f %10.2f\n", w, tm / tg, mm / mg,
			tt / tm, mt / mm, tb / te, mb / me }'
done
